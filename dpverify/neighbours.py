"""Neighbour relations as explicit objects, and generators of candidate neighbouring pairs.

A differential-privacy claim is only meaningful together with the neighbour relation it is proved
for.  This module makes the relation an object that every other part of dpverify can ask:

* ``contains(x0, x1)`` / ``validate_pair(x0, x1)`` -- are two inputs neighbours (and if not, why)?
* ``patterns(x)`` -- deterministic, structured candidate pairs ``(x, x')`` around a base input;
* ``random_pairs(x, k, seed)`` -- seeded random neighbours (same seed, same pairs);
* ``pairs(x, patterns=True, random=0, seed=None)`` -- both, deduplicated;
* ``l1_distance_bound(dim)``, ``l2_distance_bound(dim)``, ``linf_distance_bound(dim)`` -- the largest
  distance between neighbours, from which a reference algorithm derives its noise scale.  Deriving the
  noise from the relation object means a mismatch between the neighbourhood a paper proves and the one
  its code uses cannot happen silently.

Relations
---------
:class:`LInfNeighbours` (radius mu)
    Vectors (or edge weights of a graph with public topology) with ``||x0 - x1||_inf <= mu``.  This is
    the weight-neighbourhood of Pinot (2018) used by PAMST / PTClust: seed
    ``../shared/seeds/001_a0b55f69d4ef326d.txt``, Definition 2.1 (two weight functions on the same edge
    set are neighbouring if ``max_e |w(e) - w'(e)| <= mu``) and Definition 2.2 (same ``V`` and ``E``).
:class:`L1Neighbours` (radius r)
    Vectors / edge weights with ``||x0 - x1||_1 <= r``: the weight-neighbourhood of Sealfon,
    "Shortest paths and distances with differential privacy", PODS 2016 (the Laplace-MST baseline).
:class:`AddRemoveOne`
    Datasets (a 1-D array of scalar records or a 2-D array with one record per row, seen as multisets)
    that differ by adding or removing exactly one record (unbounded DP).
:class:`ReplaceOne`
    Datasets of the same size that differ in exactly one record (bounded DP).

The structured patterns of the vector relations follow StatDP (Ding, Wang, Wang, Zhang, Kifer,
"Detecting Violations of Differential Privacy", CCS 2018), ``statdp/generators.py``
(``generate_databases``): "one above", "one below", "one above rest below", "one below rest above",
"half-half", "all above", "all below" and "X shape", here applied around an arbitrary base vector ``x``
with the step scaled to the relation's radius (StatDP uses ``x = 1`` and step 1).  StatDP's X shape
pair is at ℓ∞ distance 1 around the base ``1/2``; we centre it on ``x`` in the same way (``x0 = x + s·d/2``,
``x1 = x - s·d/2`` with ``s = (+1, ..., +1, -1, ..., -1)``), so that it is a neighbour pair.

Weighted graphs are accepted by the vector relations through the :class:`WeightedInput` protocol
(an object with a 1-D ``.weights`` and a ``.with_weights(new)`` copy constructor); only the weights
are perturbed, the topology is kept.

Floating-point tolerance: a vector pair at distance ``dist`` is accepted when
``dist <= radius + 1e-12 * max(radius, scale)`` where ``scale`` is the largest magnitude in the pair
(ℓ∞ relation) or the larger ℓ1 norm of the pair (ℓ1 relation), so that rounding in ``x + d`` never
rejects a generated pair.  Records of datasets are compared exactly.
"""

from __future__ import annotations

import abc
import math
import numbers
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from dpverify.errors import InputError

__all__ = [
    "Pair",
    "WeightedInput",
    "NeighbourRelation",
    "LInfNeighbours",
    "L1Neighbours",
    "AddRemoveOne",
    "ReplaceOne",
    "as_pairs",
]

#: Relative tolerance used by the vector relations (see the module docstring).
RELATIVE_TOLERANCE: float = 1e-12

#: Datasets with at most this many records get a "remove[i]" / "replace[i,...]" pattern for every i.
_ALL_RECORDS_MAX: int = 8
#: Vectors with at most this many coordinates get "one-up[i]" / "one-down[i]" for every i.
_ALL_COORDINATES_MAX: int = 4

_SWAPPED_SUFFIX = ":swapped"


# --------------------------------------------------------------------------------------------------
# Pair and the weighted-input protocol
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Pair:
    """A candidate pair of neighbouring inputs ``(x0, x1)`` with a readable ``label``.

    ``label`` names how the pair was made, e.g. ``"one-up[3]"``, ``"all-down"``, ``"random[7]"``,
    ``"remove[2]"``.  Equality compares the label and the inputs by value (arrays element-wise);
    pairs are not hashable because the arrays they hold are mutable.
    """

    x0: Any
    x1: Any
    label: str = "pair"

    def swapped(self) -> Pair:
        """The same pair in the other direction, ``(x1, x0)``; its label gains (or loses) ``:swapped``."""
        if self.label.endswith(_SWAPPED_SUFFIX):
            label = self.label[: -len(_SWAPPED_SUFFIX)]
        else:
            label = self.label + _SWAPPED_SUFFIX
        return Pair(self.x1, self.x0, label)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Pair):
            return NotImplemented
        return (
            self.label == other.label
            and _value_key(self.x0) == _value_key(other.x0)
            and _value_key(self.x1) == _value_key(other.x1)
        )

    __hash__ = None  # type: ignore[assignment]


@runtime_checkable
class WeightedInput(Protocol):
    """An input whose private part is a 1-D weight vector on a public structure (e.g. a graph).

    ``weights`` is the 1-D array of (edge) weights; ``with_weights(new)`` returns a copy of the object
    with the same public structure (topology) and the weights ``new``.  The vector relations perturb
    only the weights and return objects of the same type.  If both objects of a pair also expose an
    ``edges`` attribute, :meth:`NeighbourRelation.contains` additionally requires equal ``edges``.
    """

    @property
    def weights(self) -> Any: ...

    def with_weights(self, new_weights: np.ndarray) -> Any: ...


def _is_weighted(x: object) -> bool:
    return not isinstance(x, np.ndarray) and isinstance(x, WeightedInput)


# --------------------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------------------


def _value_key(v: Any) -> tuple[Any, ...]:
    """A hashable key such that equal inputs (by value) have equal keys."""
    if _is_weighted(v):
        w = np.asarray(v.weights)
        edges = getattr(v, "edges", None)  # the topology, when the input has one (WeightedGraph)
        topo = None if edges is None else np.ascontiguousarray(edges).tobytes()
        return ("weighted", type(v), w.shape, w.dtype.str, w.tobytes(), topo)
    a = np.asarray(v)
    if a.dtype.kind == "O":
        return ("object", repr(v))
    return ("array", a.shape, a.dtype.str, np.ascontiguousarray(a).tobytes())


def _dedupe(pairs: Iterable[Pair]) -> list[Pair]:
    """Drop pairs whose ``(x0, x1)`` (in this order) already appeared; the first label wins."""
    seen: set[tuple[Any, ...]] = set()
    out: list[Pair] = []
    for p in pairs:
        key = (_value_key(p.x0), _value_key(p.x1))
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


def _make_rng(rng_or_seed: Any) -> np.random.Generator:
    if isinstance(rng_or_seed, np.random.Generator):
        return rng_or_seed
    if isinstance(rng_or_seed, np.random.SeedSequence):
        return np.random.default_rng(rng_or_seed)
    if isinstance(rng_or_seed, numbers.Integral) and not isinstance(rng_or_seed, bool):
        if int(rng_or_seed) < 0:
            raise InputError(f"seed must be a non-negative integer, got {rng_or_seed}.")
        return np.random.default_rng(int(rng_or_seed))
    if rng_or_seed is None:
        raise InputError(
            "random neighbour pairs need a seed so that they are reproducible: pass an integer seed "
            "or a numpy.random.Generator."
        )
    raise InputError(
        f"expected an integer seed or a numpy.random.Generator, got {type(rng_or_seed).__name__}."
    )


def _check_count(k: Any, what: str = "k") -> int:
    if not isinstance(k, numbers.Integral) or isinstance(k, bool) or int(k) < 0:
        raise InputError(f"{what} (number of random pairs) must be a non-negative integer, got {k!r}.")
    return int(k)


def _check_dim(dim: Any) -> int:
    if not isinstance(dim, numbers.Integral) or isinstance(dim, bool) or int(dim) < 1:
        raise InputError(f"dim must be a positive integer (the input dimension), got {dim!r}.")
    return int(dim)


def _check_radius(radius: Any, cls: str) -> float:
    if not isinstance(radius, numbers.Real) or isinstance(radius, bool):
        raise InputError(f"{cls}: radius must be a positive finite number, got {radius!r}.")
    r = float(radius)
    if not math.isfinite(r) or r <= 0.0:
        raise InputError(
            f"{cls}: radius must be a positive finite number, got {radius!r}; it is the largest "
            "change between neighbouring inputs (mu in the weight-DP papers)."
        )
    return r


def _first_nonfinite(a: np.ndarray) -> tuple[int, ...] | None:
    bad = np.argwhere(~np.isfinite(a))
    if bad.size == 0:
        return None
    return tuple(int(i) for i in bad[0])


# --------------------------------------------------------------------------------------------------
# Base class
# --------------------------------------------------------------------------------------------------


class NeighbourRelation(abc.ABC):
    """Common interface of all neighbour relations (see the module docstring).

    Subclasses implement :attr:`name`, :meth:`_reason_not_neighbours`, :meth:`patterns`,
    :meth:`random_pairs` and the three distance bounds.
    """

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """A readable description, e.g. ``"ℓ∞ radius 1.0"`` or ``"add/remove one record"``."""

    def __str__(self) -> str:
        return self.name

    @abc.abstractmethod
    def _reason_not_neighbours(self, x0: Any, x1: Any) -> str | None:
        """``None`` if ``x0 ~ x1``, otherwise why not.  Raises InputError for malformed inputs."""

    def contains(self, x0: Any, x1: Any) -> bool:
        """Whether ``x0`` and ``x1`` are neighbours under this relation.

        Raises :class:`InputError` for malformed inputs (empty, NaN/inf, wrong dimensionality);
        returns ``False`` for well-formed inputs that are simply not neighbours.
        """
        return self._reason_not_neighbours(x0, x1) is None

    def validate_pair(self, x0: Any, x1: Any) -> None:
        """Raise :class:`InputError` explaining why ``(x0, x1)`` is not a neighbour pair, if it is not."""
        reason = self._reason_not_neighbours(x0, x1)
        if reason is not None:
            raise InputError(f"not neighbours under {self.name}: {reason}")

    @abc.abstractmethod
    def patterns(self, x: Any) -> list[Pair]:
        """Deterministic structured candidate pairs ``(x, x')`` (deduplicated, all neighbours)."""

    @abc.abstractmethod
    def random_pairs(self, x: Any, k: int, rng_or_seed: np.random.Generator | int) -> list[Pair]:
        """``k`` seeded random neighbour pairs around ``x`` (same seed, same pairs)."""

    def pairs(
        self,
        x: Any,
        patterns: bool = True,
        random: int = 0,
        seed: np.random.Generator | int | None = None,
    ) -> list[Pair]:
        """Structured patterns (if ``patterns``) followed by ``random`` seeded random pairs, deduplicated.

        ``seed`` is required when ``random > 0``.  A pair equal (same ``x0`` and ``x1``) to an earlier one
        is dropped, so the list can hold fewer than ``len(patterns) + random`` pairs.
        """
        n_random = _check_count(random, "random")
        if not patterns and n_random == 0:
            raise InputError(
                "pairs(): nothing requested; set patterns=True and/or random=<number of random pairs>."
            )
        out: list[Pair] = []
        if patterns:
            out.extend(self.patterns(x))
        if n_random:
            out.extend(self.random_pairs(x, n_random, seed))  # type: ignore[arg-type]
        return _dedupe(out)

    @abc.abstractmethod
    def l1_distance_bound(self, dim: int) -> float:
        """Largest ℓ1 distance between neighbours of dimension ``dim`` (ℓ1 sensitivity of the identity)."""

    @abc.abstractmethod
    def l2_distance_bound(self, dim: int) -> float:
        """Largest ℓ2 distance between neighbours of dimension ``dim``."""

    @abc.abstractmethod
    def linf_distance_bound(self, dim: int) -> float:
        """Largest ℓ∞ distance between neighbours of dimension ``dim``."""


# --------------------------------------------------------------------------------------------------
# Vector relations (plain vectors or edge weights of a public topology)
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Vector:
    """A validated vector input: its float weights and how to rebuild an object of the same kind."""

    w: np.ndarray
    original: Any
    weighted: bool

    def rebuild(self, new_w: np.ndarray) -> Any:
        if self.weighted:
            return self.original.with_weights(new_w)
        return new_w

    def base(self) -> Any:
        """The base input as ``x0`` of a pair: the original object, or a float copy of the array."""
        return self.original if self.weighted else self.w.copy()


def _as_vector(x: Any, what: str, relation: str) -> _Vector:
    weighted = _is_weighted(x)
    raw = x.weights if weighted else x
    label = f"{what}.weights" if weighted else what
    if isinstance(raw, (str, bytes)):
        raise InputError(f"{relation}: {label} must be a 1-D numeric array, got a string.")
    try:
        a = np.asarray(raw)
    except (ValueError, TypeError) as exc:
        raise InputError(f"{relation}: {label} cannot be read as a 1-D numeric array ({exc}).") from None
    if a.dtype.kind not in "biuf":
        raise InputError(
            f"{relation}: {label} must be a 1-D numeric array, got dtype {a.dtype} "
            f"(type {type(x).__name__}); pass a float vector or an object with .weights and .with_weights()."
        )
    if a.ndim != 1:
        if a.ndim == 0:
            hint = " wrap a scalar as [value]."
        else:
            hint = " flatten it, or use AddRemoveOne / ReplaceOne for datasets."
        raise InputError(f"{relation}: {label} must be 1-D, got an array of shape {a.shape};{hint}")
    if a.size == 0:
        raise InputError(f"{relation}: {label} is empty; give at least one coordinate.")
    a = a.astype(float)
    bad = _first_nonfinite(a)
    if bad is not None:
        raise InputError(
            f"{relation}: {label}[{bad[0]}] is {a[bad]}; neighbour distances need finite values."
        )
    return _Vector(a, x, weighted)


def _same_topology(a: Any, b: Any) -> bool:
    if not (hasattr(a, "edges") and hasattr(b, "edges")):
        return True
    try:
        return bool(np.array_equal(np.asarray(list(a.edges)), np.asarray(list(b.edges))))
    except (TypeError, ValueError):
        return bool(a.edges == b.edges)


def _half(m: int) -> int:
    """Size of the first half, as in StatDP (``int(m / 2)``)."""
    return m // 2


def _coordinate_indices(m: int) -> list[int]:
    if m <= _ALL_COORDINATES_MAX:
        return list(range(m))
    return [0, m - 1]


class _VectorRelation(NeighbourRelation):
    """Shared machinery of the ℓ∞ and ℓ1 relations."""

    radius: float

    def _pair_vectors(self, x0: Any, x1: Any) -> tuple[_Vector, _Vector]:
        cls = type(self).__name__
        v0 = _as_vector(x0, "x0", cls)
        v1 = _as_vector(x1, "x1", cls)
        if v0.weighted != v1.weighted:
            kind0, kind1 = ("a weighted input" if v.weighted else "an array" for v in (v0, v1))
            raise InputError(f"{cls}: x0 is {kind0} but x1 is {kind1}; compare inputs of the same kind.")
        return v0, v1

    @abc.abstractmethod
    def _distance(self, diff: np.ndarray) -> float: ...

    @abc.abstractmethod
    def _scale(self, a: np.ndarray, b: np.ndarray) -> float: ...

    def _reason_not_neighbours(self, x0: Any, x1: Any) -> str | None:
        v0, v1 = self._pair_vectors(x0, x1)
        if v0.weighted and type(x0) is not type(x1):
            return f"x0 is a {type(x0).__name__} but x1 is a {type(x1).__name__}"
        if v0.weighted and not _same_topology(x0, x1):
            return "the two inputs have different edges (the topology is public and must be equal)"
        if v0.w.shape != v1.w.shape:
            return f"different dimensions ({v0.w.size} and {v1.w.size} coordinates)"
        dist = self._distance(v1.w - v0.w)
        tol = RELATIVE_TOLERANCE * max(self.radius, self._scale(v0.w, v1.w))
        if dist > self.radius + tol:
            return f"distance {dist:.17g} exceeds the radius {self.radius!r}"
        return None

    def _pairs_from_shifts(self, v: _Vector, shifts: Sequence[tuple[str, np.ndarray]]) -> list[Pair]:
        return [Pair(v.base(), v.rebuild(v.w + s), label) for label, s in shifts]


@dataclass(frozen=True)
class LInfNeighbours(_VectorRelation):
    """ℓ∞ neighbours: ``||x0 - x1||_inf <= radius`` on vectors or edge weights of a public topology.

    Seed 001 (``../shared/seeds/001_a0b55f69d4ef326d.txt``), Definition 2.1 with ``mu = radius``.
    Noise calibration: ℓ1 bound ``dim * radius``, ℓ2 bound ``radius * sqrt(dim)``, ℓ∞ bound ``radius``.
    """

    radius: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "radius", _check_radius(self.radius, "LInfNeighbours"))

    @property
    def name(self) -> str:
        return f"ℓ∞ radius {self.radius!r}"

    def _distance(self, diff: np.ndarray) -> float:
        return float(np.max(np.abs(diff)))

    def _scale(self, a: np.ndarray, b: np.ndarray) -> float:
        return float(max(np.max(np.abs(a)), np.max(np.abs(b))))

    def patterns(self, x: Any) -> list[Pair]:
        """StatDP's patterns (``generators.py``) with step ``d = radius``.

        ``one-up[i]`` / ``one-down[i]`` (``x ± d·e_i`` for i = 0 and the last index, every index when
        dim <= 4), ``all-up``, ``all-down``, ``half-up-half-down``, ``half-down-half-up``,
        ``one-up-rest-down``, ``one-down-rest-up``, ``rest-down-last-up``, ``rest-up-last-down`` (the
        odd entry last: a sequential mechanism such as the sparse vector technique answers it after
        all the others) and ``x-shape`` (``x + s·d/2`` vs ``x - s·d/2``).
        """
        v = _as_vector(x, "x", "LInfNeighbours")
        m, d, h = v.w.size, self.radius, _half(v.w.size)
        shifts: list[tuple[str, np.ndarray]] = []
        for i in _coordinate_indices(m):
            e = np.zeros(m)
            e[i] = d
            shifts += [(f"one-up[{i}]", e), (f"one-down[{i}]", -e)]
        ones = np.ones(m)
        half = np.where(np.arange(m) < h, 1.0, -1.0)  # + on the first half, - on the second
        one_rest = -ones.copy()
        one_rest[0] = 1.0
        rest_last = -ones.copy()  # the up entry last: order matters for sequential mechanisms (SVT)
        rest_last[-1] = 1.0
        shifts += [
            ("all-up", d * ones),
            ("all-down", -d * ones),
            ("half-up-half-down", d * half),
            ("half-down-half-up", -d * half),
            ("one-up-rest-down", d * one_rest),
            ("one-down-rest-up", -d * one_rest),
            ("rest-down-last-up", d * rest_last),
            ("rest-up-last-down", -d * rest_last),
        ]
        out = self._pairs_from_shifts(v, shifts)
        out.append(Pair(v.rebuild(v.w + 0.5 * d * half), v.rebuild(v.w - 0.5 * d * half), "x-shape"))
        return _dedupe(out)

    def random_pairs(self, x: Any, k: int, rng_or_seed: np.random.Generator | int) -> list[Pair]:
        """``k`` pairs ``(x, x + u)``: even j ``random[j]`` with ``u`` uniform in ``[-d, d]^m``, odd j
        ``random-vertex[j]`` with ``u`` a uniform random sign vector times ``d`` (a vertex of the box).
        """
        k = _check_count(k)
        v = _as_vector(x, "x", "LInfNeighbours")
        rng = _make_rng(rng_or_seed)
        m, d = v.w.size, self.radius
        shifts: list[tuple[str, np.ndarray]] = []
        for j in range(k):
            if j % 2 == 0:
                shifts.append((f"random[{j}]", rng.uniform(-d, d, size=m)))
            else:
                shifts.append((f"random-vertex[{j}]", d * rng.choice(np.array([-1.0, 1.0]), size=m)))
        return self._pairs_from_shifts(v, shifts)

    def l1_distance_bound(self, dim: int) -> float:
        return _check_dim(dim) * self.radius

    def l2_distance_bound(self, dim: int) -> float:
        return self.radius * math.sqrt(_check_dim(dim))

    def linf_distance_bound(self, dim: int) -> float:
        _check_dim(dim)
        return self.radius


@dataclass(frozen=True)
class L1Neighbours(_VectorRelation):
    """ℓ1 neighbours: ``||x0 - x1||_1 <= radius`` on vectors or edge weights (Sealfon, PODS 2016).

    Noise calibration: all three bounds (ℓ1, ℓ2, ℓ∞) equal ``radius`` (one coordinate moved by radius).
    """

    radius: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "radius", _check_radius(self.radius, "L1Neighbours"))

    @property
    def name(self) -> str:
        return f"ℓ1 radius {self.radius!r}"

    def _distance(self, diff: np.ndarray) -> float:
        return float(np.sum(np.abs(diff)))

    def _scale(self, a: np.ndarray, b: np.ndarray) -> float:
        return float(max(np.sum(np.abs(a)), np.sum(np.abs(b))))

    def patterns(self, x: Any) -> list[Pair]:
        """``one-up[i]`` / ``one-down[i]`` (``x ± r·e_i``; i = 0, last, every index when dim <= 4),
        ``spread-up`` / ``spread-down`` (``x ± r/m`` on every coordinate), ``half-up-half-down`` /
        ``half-down-half-up`` (``±r/m`` with opposite signs on the two halves) and ``x-shape``
        (``x + s·r/(2m)`` vs ``x - s·r/(2m)``); every pair is at ℓ1 distance exactly ``r``.
        """
        v = _as_vector(x, "x", "L1Neighbours")
        m, r, h = v.w.size, self.radius, _half(v.w.size)
        shifts: list[tuple[str, np.ndarray]] = []
        for i in _coordinate_indices(m):
            e = np.zeros(m)
            e[i] = r
            shifts += [(f"one-up[{i}]", e), (f"one-down[{i}]", -e)]
        step = r / m
        half = np.where(np.arange(m) < h, 1.0, -1.0)
        shifts += [
            ("spread-up", np.full(m, step)),
            ("spread-down", np.full(m, -step)),
            ("half-up-half-down", step * half),
            ("half-down-half-up", -step * half),
        ]
        out = self._pairs_from_shifts(v, shifts)
        out.append(Pair(v.rebuild(v.w + 0.5 * step * half), v.rebuild(v.w - 0.5 * step * half), "x-shape"))
        return _dedupe(out)

    def random_pairs(self, x: Any, k: int, rng_or_seed: np.random.Generator | int) -> list[Pair]:
        """``k`` pairs ``(x, x + u)``: even j ``random[j]`` with ``u`` uniform on the ℓ1 sphere of radius
        ``r`` (normalised i.i.d. Laplace vector), odd j ``random-coordinate[j]`` with ``u = ±r·e_i`` for a
        uniform random coordinate ``i`` and sign.
        """
        k = _check_count(k)
        v = _as_vector(x, "x", "L1Neighbours")
        rng = _make_rng(rng_or_seed)
        m, r = v.w.size, self.radius
        shifts: list[tuple[str, np.ndarray]] = []
        for j in range(k):
            if j % 2 == 0:
                g = rng.laplace(size=m)
                norm = float(np.sum(np.abs(g)))
                while norm == 0.0:  # probability zero; keeps the division safe
                    g = rng.laplace(size=m)
                    norm = float(np.sum(np.abs(g)))
                shifts.append((f"random[{j}]", g * (r / norm)))
            else:
                e = np.zeros(m)
                e[int(rng.integers(m))] = r if rng.random() < 0.5 else -r
                shifts.append((f"random-coordinate[{j}]", e))
        return self._pairs_from_shifts(v, shifts)

    def l1_distance_bound(self, dim: int) -> float:
        _check_dim(dim)
        return self.radius

    def l2_distance_bound(self, dim: int) -> float:
        _check_dim(dim)
        return self.radius

    def linf_distance_bound(self, dim: int) -> float:
        _check_dim(dim)
        return self.radius


# --------------------------------------------------------------------------------------------------
# Dataset relations (multisets of records)
# --------------------------------------------------------------------------------------------------


def _as_dataset(x: Any, what: str, relation: str, allow_empty: bool = False) -> np.ndarray:
    if _is_weighted(x):
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
        bad = _first_nonfinite(a)
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
        return list(range(n)) if n <= _ALL_RECORDS_MAX else [0, n - 1]

    def l2_distance_bound(self, dim: int) -> float:
        return math.sqrt(self.l1_distance_bound(dim) * self.linf_distance_bound(dim))

    def linf_distance_bound(self, dim: int) -> float:
        _check_dim(dim)
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

    def _reason_not_neighbours(self, x0: Any, x1: Any) -> str | None:
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
        return _dedupe(out)

    def random_pairs(self, x: Any, k: int, rng_or_seed: np.random.Generator | int) -> list[Pair]:
        """``k`` pairs cycling through ``random-remove[j]`` (a uniform random record removed),
        ``random-add[j]`` (a uniform random candidate appended) and ``random-add-box[j]`` (a record drawn
        uniformly in the bounding box of the candidates, or of the data without candidates, appended)."""
        k = _check_count(k)
        data = self._data(x)
        rng = _make_rng(rng_or_seed)
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
        _check_dim(dim)
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

    def _reason_not_neighbours(self, x0: Any, x1: Any) -> str | None:
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
        return _dedupe(out)

    def random_pairs(self, x: Any, k: int, rng_or_seed: np.random.Generator | int) -> list[Pair]:
        """``k`` pairs alternating ``random-replace[j]`` (a uniform random record replaced by a uniform
        random candidate) and ``random-replace-box[j]`` (replaced by a record drawn uniformly in the
        bounding box of the candidates, or of the data without candidates).  A draw equal to the replaced
        record is redrawn (up to 50 times, then the other kind is tried)."""
        k = _check_count(k)
        data = self._data(x)
        rng = _make_rng(rng_or_seed)
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
        return 2.0 if _check_dim(dim) >= 2 else 0.0

    def linf_distance_bound(self, dim: int) -> float:
        return 1.0 if _check_dim(dim) >= 2 else 0.0


# --------------------------------------------------------------------------------------------------
# Normalising user-given pairs
# --------------------------------------------------------------------------------------------------


def as_pairs(pairs: Any, relation: NeighbourRelation | None = None) -> list[Pair]:
    """Normalise a list of :class:`Pair` or of 2-tuples / 2-lists ``(x0, x1)`` to a list of :class:`Pair`.

    Tuples get the label ``"pair[i]"``; a 3-tuple ``(x0, x1, label)`` keeps its string label.  If ``relation`` is given, every pair is checked with
    :meth:`NeighbourRelation.validate_pair` and the first non-neighbour pair is reported by index.
    Raises :class:`InputError` for an empty list or an element that is not a pair (naming its index).
    """
    if isinstance(pairs, Pair):
        raise InputError("as_pairs: expected a list of pairs, got a single Pair; wrap it in a list: [pair].")
    if isinstance(pairs, (np.ndarray, str, bytes)) or not isinstance(pairs, Iterable):
        raise InputError(
            f"as_pairs: expected a list of Pair or (x0, x1) tuples, got {type(pairs).__name__}."
        )
    items = list(pairs)
    if not items:
        raise InputError("as_pairs: the list of pairs is empty; give at least one (x0, x1) pair.")
    out: list[Pair] = []
    for i, p in enumerate(items):
        if isinstance(p, Pair):
            out.append(p)
        elif isinstance(p, (tuple, list)) and len(p) == 2:
            out.append(Pair(p[0], p[1], f"pair[{i}]"))
        elif isinstance(p, tuple) and len(p) == 3 and isinstance(p[2], str):
            out.append(Pair(p[0], p[1], p[2]))
        else:
            what = f"a {type(p).__name__}"
            if isinstance(p, (tuple, list)):
                what += f" of length {len(p)}"
            raise InputError(
                f"as_pairs: element {i} is {what}, not a Pair or an (x0, x1) tuple; if you meant a single "
                "pair, wrap it in a list: [(x0, x1)]."
            )
    if relation is not None:
        for i, p in enumerate(out):
            try:
                relation.validate_pair(p.x0, p.x1)
            except InputError as exc:
                raise InputError(f"as_pairs: element {i} ({p.label}): {exc}") from None
    return out
