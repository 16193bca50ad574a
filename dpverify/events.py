"""Events on mechanism outputs and the search that picks them.

An *event* ``S`` is a set of outputs with a vectorised membership test.  The audit chooses events on a
first sample (the *search*) and tests them on fresh samples, so the search may use any heuristic
without affecting the validity of the reported bound.

Families (``../shared/DESIGN.md``, kind 1; anchors-auditing.md §2.1--2.2):

* **outcome unions** for discrete outputs (integer codes, scalars or rows, and float outputs with
  few distinct values): outcomes sorted by their estimated likelihood ratio, and the prefix unions of
  that order (the Neyman--Pearson sets of the empirical distributions) -- as StatDP does for
  categorical outputs;
* **threshold and interval events** ``{f(o) <= t}``, ``{f(o) >= t}``, ``{a <= f(o) <= b}`` and single
  point masses ``{f(o) = a}`` on a scalar *feature* ``f``: the output itself, each coordinate of a
  vector, its sum / max / min / argmax;
* a **learned event** for vector outputs: a logistic-regression score threshold (DP-Sniper,
  Bichsel et al. S&P 2021), fitted on the search sample;
* optionally (``float_bits``) **floating-point events** on the position of the lowest set bit of a
  double (Mironov 2012's attack on textbook floating-point Laplace);
* ``{o contains NaN}`` when NaN outputs are admitted as outcomes (``nan_policy="outcome"``).

Each candidate is ranked by a *projected* epsilon lower bound: the Wilson bounds the final test would
give at ``n_test`` samples if the search frequencies were exact, widened by one standard error of the
search estimate, so that events seen only a few times are not chosen for their noisy ratio.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from dpverify.stats import epsilon_lower_bound, wilson_lower, wilson_upper

__all__ = [
    "Feature",
    "Event",
    "Candidate",
    "Identity",
    "Column",
    "Statistic",
    "LinearScore",
    "LowBit",
    "IntervalEvent",
    "ValueSetEvent",
    "RowSetEvent",
    "NanEvent",
    "search_events",
    "row_keys",
]

THRESHOLD_GRID = 2000
INTERVAL_GRID = 80
MAX_COLUMNS = 32
LR_FIT_SAMPLES = 50_000


# --------------------------------------------------------------------------------------- features
def _finite_view(v: NDArray) -> NDArray[np.float64]:
    """Float64 copy with NaN mapped to +inf, so that every event is a well-defined set."""
    v = np.asarray(v, dtype=np.float64)
    if np.isnan(v).any():
        v = np.where(np.isnan(v), np.inf, v)
    return v


class Feature(Protocol):
    """A scalar statistic of an output row, vectorised: ``(n, ...) -> (n,)`` float64."""

    @property
    def name(self) -> str: ...

    def __call__(self, out: NDArray) -> NDArray[np.float64]: ...


@dataclass(frozen=True)
class Identity:
    """The output itself (scalar outputs)."""

    @property
    def name(self) -> str:
        return "out"

    def __call__(self, out: NDArray) -> NDArray[np.float64]:
        return _finite_view(out)


@dataclass(frozen=True)
class Column:
    """Coordinate ``index`` of a vector output."""

    index: int

    @property
    def name(self) -> str:
        return f"out[{self.index}]"

    def __call__(self, out: NDArray) -> NDArray[np.float64]:
        return _finite_view(out[:, self.index])


@dataclass(frozen=True)
class Statistic:
    """``sum``, ``max``, ``min`` or ``argmax`` of a vector output."""

    kind: str

    @property
    def name(self) -> str:
        return f"{self.kind}(out)"

    def __call__(self, out: NDArray) -> NDArray[np.float64]:
        v = _finite_view(out)
        if self.kind == "sum":
            with np.errstate(invalid="ignore"):
                s = v.sum(axis=1)
            return np.where(np.isnan(s), np.inf, s)
        if self.kind == "max":
            return v.max(axis=1)
        if self.kind == "min":
            return v.min(axis=1)
        if self.kind == "argmax":
            return v.argmax(axis=1).astype(np.float64)
        raise ValueError(f"unknown statistic {self.kind!r}")


@dataclass(frozen=True)
class LinearScore:
    """``coef . ((o - mean) / scale) + intercept``: a logistic-regression score (DP-Sniper)."""

    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float

    @property
    def name(self) -> str:
        return "LR-score(out)"

    def __call__(self, out: NDArray) -> NDArray[np.float64]:
        v = np.asarray(out, dtype=np.float64).reshape(len(out), -1)
        v = np.where(np.isfinite(v), v, np.where(np.isnan(v), 0.0, np.sign(v) * 1e300))
        z = (v - np.asarray(self.mean)) / np.asarray(self.scale)
        with np.errstate(over="ignore", invalid="ignore"):
            s = z @ np.asarray(self.coef) + self.intercept
        return np.where(np.isnan(s), np.inf, s)


@dataclass(frozen=True)
class LowBit:
    """Exponent of the lowest set bit of a double (``+inf`` for 0, inf and NaN).

    A textbook floating-point Laplace sample ``x + Y`` lies on the grid of ``ulp(x + Y)`` *and* of the
    grid of ``x``: outputs near 0 for ``x = 1`` are multiples of ``2**-53`` while those for ``x = 0``
    are not (Mironov, CCS 2012).  ``index`` is the column (``None`` for scalar outputs).
    """

    index: int | None = None

    @property
    def name(self) -> str:
        return "lowbit(out)" if self.index is None else f"lowbit(out[{self.index}])"

    def __call__(self, out: NDArray) -> NDArray[np.float64]:
        v = np.asarray(out if self.index is None else out[:, self.index], dtype=np.float64)
        mant, expo = np.frexp(np.where(np.isfinite(v), v, 0.0))
        m = np.abs(np.ldexp(mant, 53)).astype(np.int64)  # exact: |mant| in [0.5, 1)
        low = m & (-m)
        tz = np.zeros(m.shape, dtype=np.float64)
        nz = low > 0
        tz[nz] = np.log2(low[nz].astype(np.float64))
        res = (expo - 53).astype(np.float64) + tz
        return np.where(nz, res, np.inf)


# ----------------------------------------------------------------------------------------- events
class Event(Protocol):
    """A set of outputs: ``contains(out) -> bool array`` and a readable ``description``."""

    @property
    def description(self) -> str: ...

    def contains(self, out: NDArray) -> NDArray[np.bool_]: ...


def _fmt(x: float) -> str:
    return f"{x:.6g}"


@dataclass(frozen=True)
class IntervalEvent:
    """``{low <= feature(o) <= high}`` (either end may be infinite)."""

    feature: Feature
    low: float
    high: float

    @property
    def description(self) -> str:
        f = self.feature.name
        if self.low == -math.inf:
            return f"{f} ≤ {_fmt(self.high)}"
        if self.high == math.inf:
            return f"{f} ≥ {_fmt(self.low)}"
        return f"{f} ∈ [{_fmt(self.low)}, {_fmt(self.high)}]"

    def contains(self, out: NDArray) -> NDArray[np.bool_]:
        v = self.feature(out)
        return (v >= self.low) & (v <= self.high)


@dataclass(frozen=True)
class ValueSetEvent:
    """``{feature(o) in values}``: point masses of a scalar feature."""

    feature: Feature
    values: tuple[float, ...]

    @property
    def description(self) -> str:
        vals = ", ".join(_fmt(v) for v in self.values[:5]) + (", …" if len(self.values) > 5 else "")
        return f"{self.feature.name} ∈ {{{vals}}}"

    def contains(self, out: NDArray) -> NDArray[np.bool_]:
        return np.isin(self.feature(out), np.asarray(self.values, dtype=np.float64))


def row_keys(out: NDArray) -> NDArray:
    """One hashable, sortable key per output row (its bytes)."""
    a = np.ascontiguousarray(out.reshape(len(out), -1))
    return a.view(np.dtype((np.void, a.dtype.itemsize * a.shape[1]))).ravel()


@dataclass(frozen=True)
class RowSetEvent:
    """``{o in outcomes}`` for discrete outputs; ``outcomes`` are rows of the output's dtype."""

    outcomes: NDArray = field(repr=False)
    dtype: str = "int64"

    @property
    def description(self) -> str:
        rows = self.outcomes.reshape(len(self.outcomes), -1)
        shown = [
            (str(r[0].item()) if rows.shape[1] == 1 else "(" + ",".join(str(v) for v in r.tolist()) + ")")
            for r in rows[:4]
        ]
        more = f", … ({len(rows)} outcomes)" if len(rows) > 4 else ""
        return "out ∈ {" + ", ".join(shown) + more + "}"

    def contains(self, out: NDArray) -> NDArray[np.bool_]:
        out = np.asarray(out)
        if out.dtype != self.outcomes.dtype:
            return np.zeros(len(out), dtype=bool)
        keys = np.sort(row_keys(self.outcomes))
        return np.isin(row_keys(out), keys)

    def __eq__(self, other: object) -> bool:  # arrays make the dataclass eq ambiguous
        return isinstance(other, RowSetEvent) and np.array_equal(self.outcomes, other.outcomes)

    def __hash__(self) -> int:
        return hash(self.outcomes.tobytes())


@dataclass(frozen=True)
class NanEvent:
    """``{o has a NaN entry}`` (only with ``nan_policy="outcome"``)."""

    @property
    def description(self) -> str:
        return "out is NaN"

    def contains(self, out: NDArray) -> NDArray[np.bool_]:
        v = np.asarray(out, dtype=np.float64).reshape(len(out), -1)
        return np.isnan(v).any(axis=1)


# ----------------------------------------------------------------------------------------- search
@dataclass(frozen=True)
class Candidate:
    """A searched event for one direction (0: ``x0`` over ``x1``, 1: the reverse) and its score."""

    event: Event
    direction: int
    score: float
    count_num: int
    count_den: int
    group: str


@dataclass
class _Scorer:
    n_search: int
    n_test: int
    z: float
    delta: float

    def __call__(self, k_num: NDArray, k_den: NDArray) -> NDArray[np.float64]:
        p_num = np.asarray(k_num) / self.n_search
        p_den = np.asarray(k_den) / self.n_search
        # the test's own bounds at n_test, widened by one standard error of the search estimate
        lo = wilson_lower(p_num, self.n_test, self.z) - np.sqrt(p_num * (1 - p_num) / self.n_search)
        hi = wilson_upper(p_den, self.n_test, self.z) + np.sqrt(p_den * (1 - p_den) / self.n_search)
        return epsilon_lower_bound(np.maximum(lo, 0.0), hi, self.delta)


def _best(
    scorer: _Scorer, k0: NDArray, k1: NDArray, make, group: str, out: list[Candidate]
) -> int:
    """Append the best candidate of a family for both directions; return how many were scored."""
    if len(k0) == 0:
        return 0
    for direction, (kn, kd) in enumerate(((k0, k1), (k1, k0))):
        s = scorer(kn, kd)
        i = int(np.argmax(s))
        if np.isfinite(s[i]):
            out.append(Candidate(make(i), direction, float(s[i]), int(kn[i]), int(kd[i]), f"{group}/d{direction}"))
    return 2 * len(k0)


def _grid(pooled_sorted: NDArray[np.float64], size: int) -> NDArray[np.float64]:
    uniq = np.unique(pooled_sorted)
    if len(uniq) <= size:
        return uniq
    idx = np.linspace(0, len(pooled_sorted) - 1, size).round().astype(np.int64)
    return np.unique(pooled_sorted[idx])


def _scalar_feature_candidates(
    feature: Feature, v0: NDArray, v1: NDArray, scorer: _Scorer, out: list[Candidate]
) -> int:
    s0, s1 = np.sort(v0), np.sort(v1)
    n = len(s0)
    pooled = np.sort(np.concatenate([s0, s1]))
    scored = 0
    grid = _grid(pooled, THRESHOLD_GRID)
    # lower tails {f <= t} and upper tails {f >= t}
    le0, le1 = np.searchsorted(s0, grid, "right"), np.searchsorted(s1, grid, "right")
    scored += _best(scorer, le0, le1, lambda i: IntervalEvent(feature, -math.inf, float(grid[i])),
                    f"{feature.name}:le", out)
    ge0, ge1 = n - np.searchsorted(s0, grid, "left"), n - np.searchsorted(s1, grid, "left")
    scored += _best(scorer, ge0, ge1, lambda i: IntervalEvent(feature, float(grid[i]), math.inf),
                    f"{feature.name}:ge", out)
    # intervals [a, b] on a coarser grid
    g = _grid(pooled, INTERVAL_GRID)
    a_idx, b_idx = np.triu_indices(len(g), k=1)
    if len(a_idx):
        lo0, hi0 = np.searchsorted(s0, g, "left"), np.searchsorted(s0, g, "right")
        lo1, hi1 = np.searchsorted(s1, g, "left"), np.searchsorted(s1, g, "right")
        k0 = hi0[b_idx] - lo0[a_idx]
        k1 = hi1[b_idx] - lo1[a_idx]
        scored += _best(scorer, k0, k1,
                        lambda i: IntervalEvent(feature, float(g[a_idx[i]]), float(g[b_idx[i]])),
                        f"{feature.name}:interval", out)
    # point masses: values seen at least twice in the pooled sample
    uniq, counts = np.unique(pooled, return_counts=True)
    atoms = uniq[counts >= 2]
    if 0 < len(atoms) <= 10_000:
        k0 = np.searchsorted(s0, atoms, "right") - np.searchsorted(s0, atoms, "left")
        k1 = np.searchsorted(s1, atoms, "right") - np.searchsorted(s1, atoms, "left")
        scored += _best(scorer, k0, k1, lambda i: ValueSetEvent(feature, (float(atoms[i]),)),
                        f"{feature.name}:atom", out)
    return scored


def _outcome_union_candidates(o0: NDArray, o1: NDArray, scorer: _Scorer, out: list[Candidate]) -> int:
    """Prefix unions of outcomes ordered by likelihood ratio (both directions)."""
    n = len(o0)
    pooled_rows = np.concatenate([o0, o1]).reshape(2 * n, -1)
    keys = row_keys(pooled_rows)
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    m = len(first)
    c0 = np.bincount(inverse[:n], minlength=m)
    c1 = np.bincount(inverse[n:], minlength=m)
    rows = pooled_rows[first]
    scored = 0
    for direction, (cn, cd) in enumerate(((c0, c1), (c1, c0))):
        order = np.argsort(-(cn + 0.5) / (cd + 0.5), kind="stable")
        kn, kd = np.cumsum(cn[order]), np.cumsum(cd[order])
        s = scorer(kn, kd)
        i = int(np.argmax(s))
        scored += m
        if np.isfinite(s[i]):
            chosen = rows[np.sort(order[: i + 1])]
            ev = RowSetEvent(chosen.reshape((i + 1,) + o0.shape[1:]), str(o0.dtype))
            out.append(Candidate(ev, direction, float(s[i]), int(kn[i]), int(kd[i]), f"outcomes/d{direction}"))
    return scored


def _learned_score(o0: NDArray, o1: NDArray, rng: np.random.Generator) -> LinearScore | None:
    """Fit a logistic regression telling ``x0``'s outputs from ``x1``'s (DP-Sniper's attack model)."""
    from sklearn.linear_model import LogisticRegression

    X = np.concatenate([o0, o1]).astype(np.float64).reshape(2 * len(o0), -1)
    X = np.where(np.isfinite(X), X, np.where(np.isnan(X), 0.0, np.sign(X) * 1e300))
    y = np.r_[np.zeros(len(o0)), np.ones(len(o1))]
    if len(X) > 2 * LR_FIT_SAMPLES:
        idx = rng.choice(len(X), 2 * LR_FIT_SAMPLES, replace=False)
        X, y = X[idx], y[idx]
    mean, scale = X.mean(axis=0), X.std(axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    Z = (X - mean) / scale
    if not np.isfinite(Z).all():
        return None
    model = LogisticRegression(max_iter=200)
    model.fit(Z, y)
    return LinearScore(tuple(mean), tuple(scale), tuple(model.coef_[0]), float(model.intercept_[0]))


def search_events(
    o0: NDArray,
    o1: NDArray,
    *,
    n_test: int,
    z: float,
    delta: float,
    float_bits: bool = False,
    nan_outcome: bool = False,
    rng: np.random.Generator,
) -> tuple[list[Candidate], int, str]:
    """Search events telling ``o0`` (outputs on ``x0``) from ``o1``, in both directions.

    Returns the best candidate of every family and direction, the number of events scored and the
    output kind detected (``"discrete"``, ``"scalar"``, ``"vector"``).
    """
    n = len(o0)
    scorer = _Scorer(n, n_test, z, delta)
    cands: list[Candidate] = []
    scored = 0
    discrete_dtype = o0.dtype.kind in "biu"
    n_unique = len(np.unique(row_keys(np.concatenate([o0, o1]))))
    few_outcomes = n_unique <= max(2, (2 * n) // 20)
    if discrete_dtype or few_outcomes:
        if few_outcomes:
            scored += _outcome_union_candidates(o0, o1, scorer, cands)
    kind = "discrete" if discrete_dtype or few_outcomes else ("scalar" if o0.ndim == 1 else "vector")
    if o0.ndim == 1:
        features: list[Feature] = [Identity()]
        if float_bits and o0.dtype.kind == "f":
            features.append(LowBit(None))
    else:
        k = o0.shape[1]
        features = [Column(j) for j in range(min(k, MAX_COLUMNS))]
        features += [Statistic("sum"), Statistic("max"), Statistic("min"), Statistic("argmax")]
        if float_bits and o0.dtype.kind == "f":
            features += [LowBit(j) for j in range(min(k, MAX_COLUMNS))]
        if not few_outcomes:
            learned = _learned_score(o0, o1, rng)
            if learned is not None:
                features.append(learned)
    for f in features:
        scored += _scalar_feature_candidates(f, f(o0), f(o1), scorer, cands)
    if nan_outcome and o0.dtype.kind == "f":
        ev = NanEvent()
        k0, k1 = np.array([ev.contains(o0).sum()]), np.array([ev.contains(o1).sum()])
        scored += _best(scorer, k0, k1, lambda i: ev, "nan", cands)
    return cands, scored, kind
