"""Dataset neighbour relations: add/remove one record (unbounded DP) and replace one record (bounded DP)."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify.errors import InputError
from dpverify.neighbours.base import ALL_RECORDS_MAX, NeighbourRelation, Pair, check_dim, check_pair_count, dedupe, first_nonfinite, is_weighted, make_rng

# --------------------------------------------------------------------------------------------------
# Dataset relations (multisets of records)
# --------------------------------------------------------------------------------------------------


def _as_dataset(x: Any, what: str, relation: str, allow_empty: bool = False) -> np.ndarray:
    if is_weighted(x):
        raise InputError(
            f"{relation}: {what} is a weighted input ({type(x).__name__}); {relation} works on "
            "datasets of records. Use LInfNeighbours or L1Neighbours for edge weights."
        )
    if isinstance(x, (str, bytes)):
        raise InputError(f"{relation}: {what} must be a numeric array of records, got a string.")
    try:
        a = np.asarray(x)
    except (ValueError, TypeError) as exc:
        raise InputError(
            f"{relation}: {what} cannot be read as an array of records ({exc}); records must all "
            "have the same length."
        ) from None
    if a.dtype.kind not in "biuf":
        raise InputError(
            f"{relation}: {what} must be a numeric array (bool/int/float), got dtype {a.dtype}; "
            "encode categorical records as integer codes."
        )
    if a.ndim == 0:
        raise InputError(f"{relation}: {what} is a scalar, not a dataset; wrap a single record as [value].")
    if a.ndim > 2:
        raise InputError(
            f"{relation}: {what} has shape {a.shape}; a dataset is a 1-D array of scalar records "
            "or a 2-D array with one record per row."
        )
    if a.ndim == 2 and a.shape[1] == 0:
        raise InputError(f"{relation}: {what} has records with zero columns (shape {a.shape}).")
    if a.shape[0] == 0 and not allow_empty:
        raise InputError(f"{relation}: {what} is an empty dataset; give at least one record.")
    if a.dtype.kind == "f":
        bad = first_nonfinite(a)
        if bad is not None:
            where = f"record {bad[0]}" + (f", column {bad[1]}" if a.ndim == 2 else "")
            raise InputError(f"{relation}: {what} {where} is {a[bad]}; records must be finite numbers.")
    return a


def _as_candidates(candidates: Any, relation: str) -> tuple[Any, ...] | None:
    """Validate user candidates and freeze them into a (nested) tuple, so that relations stay hashable."""
    if candidates is None:
        return None
    a = _as_dataset(candidates, "candidates", relation)
    return tuple(tuple(row) for row in a.tolist()) if a.ndim == 2 else tuple(a.tolist())


def _records(a: np.ndarray) -> list[Any]:
    return [tuple(r) for r in a.tolist()] if a.ndim == 2 else a.tolist()


def _record_shape_reason(a: np.ndarray, b: np.ndarray) -> str | None:
    """Why two datasets cannot hold the same kind of record (``None`` if they can)."""
    if a.ndim == b.ndim and a.shape[1:] == b.shape[1:]:
        return None
    describe = lambda z: "scalar records" if z.ndim == 1 else f"records of {z.shape[1]} columns"  # noqa: E731
    return f"x0 has {describe(a)} but x1 has {describe(b)}"


def _align_empty(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Let a 1-D empty dataset stand for the empty dataset of 2-D records."""
    if a.size == 0 and a.ndim == 1 and b.ndim == 2:
        a = a.reshape(0, b.shape[1])
    if b.size == 0 and b.ndim == 1 and a.ndim == 2:
        b = b.reshape(0, a.shape[1])
    return a, b


class _DatasetRelation(NeighbourRelation):
    """Shared machinery of the add/remove and replace relations."""

    candidates: tuple[Any, ...] | None

    def _data(self, x: Any) -> np.ndarray:
        return _as_dataset(x, "x", type(self).__name__)

    def _pair_datasets(self, x0: Any, x1: Any) -> tuple[np.ndarray, np.ndarray]:
        cls = type(self).__name__
        a = _as_dataset(x0, "x0", cls, allow_empty=True)
        b = _as_dataset(x1, "x1", cls, allow_empty=True)
        if a.shape[0] == 0 and b.shape[0] == 0:
            raise InputError(f"{cls}: x0 and x1 are both empty datasets; give at least one record.")
        return _align_empty(a, b)

    def _candidate_array(self, data: np.ndarray) -> tuple[np.ndarray, list[str]]:
        """Candidate records matching ``data``'s record shape, and their label suffixes."""
        cls = type(self).__name__
        if self.candidates is None:
            cand = np.stack([data.min(axis=0), data.max(axis=0)])
            return cand, ["min", "max"]
        cand = np.asarray(self.candidates)
        if data.ndim == 1 and cand.ndim != 1:
            raise InputError(
                f"{cls}: the data has scalar records but the candidates have {cand.shape[1]} columns; "
                "give candidates as a 1-D array of scalar records."
            )
        if data.ndim == 2 and (cand.ndim != 2 or cand.shape[1] != data.shape[1]):
            got = "scalar records" if cand.ndim == 1 else f"records of {cand.shape[1]} columns"
            raise InputError(
                f"{cls}: the data has records of {data.shape[1]} columns but the candidates are {got}; "
                "give candidates as a 2-D array with one record per row (wrap a single record as [[...]])."
            )
        return cand, [str(j) for j in range(cand.shape[0])]

    def _box_pool(self, data: np.ndarray) -> np.ndarray:
        """Records whose bounding box random records are drawn from: the candidates if given, else the data."""
        return np.asarray(self.candidates) if self.candidates is not None else data

    @staticmethod
    def _random_box_record(pool: np.ndarray, rng: np.random.Generator) -> Any:
        lo, hi = pool.min(axis=0), pool.max(axis=0)
        if pool.dtype.kind == "f":
            return rng.uniform(lo, hi)
        rec = rng.integers(np.asarray(lo, dtype=np.int64), np.asarray(hi, dtype=np.int64), endpoint=True)
        return np.asarray(rec).astype(pool.dtype)

    @staticmethod
    def _indices(n: int) -> list[int]:
        return list(range(n)) if n <= ALL_RECORDS_MAX else [0, n - 1]

    def l2_distance_bound(self, dim: int) -> float:
        return math.sqrt(self.l1_distance_bound(dim) * self.linf_distance_bound(dim))

    def linf_distance_bound(self, dim: int) -> float:
        check_dim(dim)
        return 1.0


def _append(data: np.ndarray, record: Any) -> np.ndarray:
    rec = np.asarray(record)
    rec = rec.reshape(1, -1) if data.ndim == 2 else rec.reshape(1)
    return np.concatenate([data, rec.astype(np.result_type(data, rec))])


def _replace(data: np.ndarray, i: int, record: Any) -> np.ndarray:
    rec = np.asarray(record)
    out = data.astype(np.result_type(data, rec), copy=True)
    out[i] = rec
    return out


@dataclass(frozen=True)
class AddRemoveOne(_DatasetRelation):
    """Unbounded DP: one dataset is the other with exactly one record added (as multisets).

    ``candidates`` are records the patterns append (e.g. the domain extremes); by default the per-column
    minimum and maximum of the data.  Distance bounds are those of the histogram (count-vector)
    representation of a dataset over ``dim`` bins: ℓ1 = ℓ2 = ℓ∞ = 1.
    """

    candidates: Any = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "candidates", _as_candidates(self.candidates, "AddRemoveOne"))

    @property
    def name(self) -> str:
        if self.candidates is None:
            return "add/remove one record"
        return f"add/remove one record ({len(self.candidates)} candidates)"

    def reason_not_neighbours(self, x0: Any, x1: Any) -> str | None:
        a, b = self._pair_datasets(x0, x1)
        why = _record_shape_reason(a, b)
        if why is not None:
            return why
        if abs(a.shape[0] - b.shape[0]) != 1:
            return f"the sizes must differ by exactly one record, got {a.shape[0]} and {b.shape[0]}"
        big, small = (a, b) if a.shape[0] > b.shape[0] else (b, a)
        extra = Counter(_records(small)) - Counter(_records(big))
        if extra:
            rec = next(iter(extra))
            return f"the smaller dataset holds a record the larger one lacks: {rec!r}"
        return None

    def patterns(self, x: Any) -> list[Pair]:
        """``remove[i]`` (i = 0, last, every i when n <= 8) and ``add[j]`` for each candidate ``j``
        appended at the end (``add-min`` / ``add-max`` for the default candidates)."""
        data = self._data(x)
        out = [Pair(data.copy(), np.delete(data, i, axis=0), f"remove[{i}]") for i in self._indices(data.shape[0])]
        cand, names = self._candidate_array(data)
        for rec, nm in zip(cand, names):
            label = f"add-{nm}" if self.candidates is None else f"add[{nm}]"
            out.append(Pair(data.copy(), _append(data, rec), label))
        return dedupe(out)

    def random_pairs(self, x: Any, k: int, rng_or_seed: np.random.Generator | int) -> list[Pair]:
        """``k`` pairs cycling through ``random-remove[j]`` (a uniform random record removed),
        ``random-add[j]`` (a uniform random candidate appended) and ``random-add-box[j]`` (a record drawn
        uniformly in the bounding box of the candidates, or of the data without candidates, appended)."""
        k = check_pair_count(k)
        data = self._data(x)
        rng = make_rng(rng_or_seed)
        cand, _ = self._candidate_array(data)
        pool = self._box_pool(data)
        out: list[Pair] = []
        for j in range(k):
            kind = j % 3
            if kind == 0:
                i = int(rng.integers(data.shape[0]))
                out.append(Pair(data.copy(), np.delete(data, i, axis=0), f"random-remove[{j}]"))
            elif kind == 1:
                rec = cand[int(rng.integers(cand.shape[0]))]
                out.append(Pair(data.copy(), _append(data, rec), f"random-add[{j}]"))
            else:
                out.append(Pair(data.copy(), _append(data, self._random_box_record(pool, rng)), f"random-add-box[{j}]"))
        return out

    def l1_distance_bound(self, dim: int) -> float:
        check_dim(dim)
        return 1.0


@dataclass(frozen=True)
class ReplaceOne(_DatasetRelation):
    """Bounded DP: two datasets of the same size that differ in exactly one record (as multisets).

    ``candidates`` are the replacement records of the patterns (e.g. the domain extremes); by default
    the per-column minimum and maximum of the data.  Distance bounds are those of the histogram
    representation over ``dim`` bins: ℓ1 = 2, ℓ2 = √2, ℓ∞ = 1 (all 0 when ``dim == 1``).
    """

    candidates: Any = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "candidates", _as_candidates(self.candidates, "ReplaceOne"))

    @property
    def name(self) -> str:
        if self.candidates is None:
            return "replace one record"
        return f"replace one record ({len(self.candidates)} candidates)"

    def reason_not_neighbours(self, x0: Any, x1: Any) -> str | None:
        a, b = self._pair_datasets(x0, x1)
        why = _record_shape_reason(a, b)
        if why is not None:
            return why
        if a.shape[0] != b.shape[0]:
            return f"the sizes differ ({a.shape[0]} and {b.shape[0]} records); replace-one keeps the size"
        only0 = Counter(_records(a)) - Counter(_records(b))
        changed = sum(only0.values())
        if changed != 1:
            return f"exactly one record must differ, but {changed} records differ"
        return None

    def _no_neighbour_error(self) -> InputError:
        return InputError(
            "ReplaceOne: every candidate equals every record, so no replace-one neighbour exists; pass "
            "candidates= with records that differ from the data (e.g. the domain extremes)."
        )

    def patterns(self, x: Any) -> list[Pair]:
        """``replace[i,j]``: record ``i`` (0, last, every i when n <= 8) replaced by candidate ``j``
        (``replace[i,min]`` / ``replace[i,max]`` for the default candidates); replacements equal to the
        record are skipped."""
        data = self._data(x)
        cand, names = self._candidate_array(data)
        records = _records(data)
        cand_records = _records(cand)
        out: list[Pair] = []
        for i in self._indices(data.shape[0]):
            for rec, crec, nm in zip(cand, cand_records, names):
                if crec == records[i]:
                    continue
                out.append(Pair(data.copy(), _replace(data, i, rec), f"replace[{i},{nm}]"))
        if not out:
            raise self._no_neighbour_error()
        return dedupe(out)

    def random_pairs(self, x: Any, k: int, rng_or_seed: np.random.Generator | int) -> list[Pair]:
        """``k`` pairs alternating ``random-replace[j]`` (a uniform random record replaced by a uniform
        random candidate) and ``random-replace-box[j]`` (replaced by a record drawn uniformly in the
        bounding box of the candidates, or of the data without candidates).  A draw equal to the replaced
        record is redrawn (up to 50 times, then the other kind is tried)."""
        k = check_pair_count(k)
        data = self._data(x)
        rng = make_rng(rng_or_seed)
        cand, _ = self._candidate_array(data)
        cand_records = _records(cand)
        records = _records(data)
        pool = self._box_pool(data)
        n = data.shape[0]

        def draw(kind: int) -> tuple[int, Any] | None:
            for _ in range(50):
                i = int(rng.integers(n))
                if kind == 0:
                    c = int(rng.integers(cand.shape[0]))
                    rec, rec_key = cand[c], cand_records[c]
                else:
                    rec = self._random_box_record(pool, rng)
                    rec_key = _records(np.asarray(rec).reshape((1, -1) if data.ndim == 2 else (1,)))[0]
                if rec_key != records[i]:
                    return i, rec
            return None

        out: list[Pair] = []
        for j in range(k):
            kind = j % 2
            got = draw(kind)
            if got is None:
                kind = 1 - kind
                got = draw(kind)
            if got is None:
                raise self._no_neighbour_error()
            i, rec = got
            label = f"random-replace[{j}]" if kind == 0 else f"random-replace-box[{j}]"
            out.append(Pair(data.copy(), _replace(data, i, rec), label))
        return out

    def l1_distance_bound(self, dim: int) -> float:
        return 2.0 if check_dim(dim) >= 2 else 0.0

    def linf_distance_bound(self, dim: int) -> float:
        return 1.0 if check_dim(dim) >= 2 else 0.0

