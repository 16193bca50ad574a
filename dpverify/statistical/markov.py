"""Markov scores: outputs released one step at a time, each a noisy *non-linear* function of the step before.

Iterative algorithms that publish every iterate -- noisy gradient descent with clipped gradients (Song, Chaudhuri &
Sarwate, "Stochastic gradient descent with differentially private updates", GlobalSIP 2013; Abadi et al., "Deep
learning with differential privacy", CCS 2016, Algorithm 1, whose iterates are released when the whole trajectory is
published), a clipped running state, a recurrence with a saturating update -- release ``o_t = g_t(o_{t−1}; x) + z_t``
with independent noise ``z_t``.  For noise of the exponential-power family ``f(z) ∝ exp(−|z/b_t|^p)`` (Laplace
``p = 1``, Gaussian ``p = 2``) the privacy loss of a pair is

    ``L(o) = Σ_t (|o_t − g_t(o_{t−1}; x')|^p − |o_t − g_t(o_{t−1}; x)|^p) / b_t^p``,

each term a function of two consecutive coordinates through the update ``g``.  Where ``g`` is linear the innovations
(:mod:`dpverify.statistical.innovations`) unmix the noise exactly; where it clips or saturates, no coordinate, linear
score, product of marginals or linear unmixing has these level sets (docs/auditor.md measures what they add on
clipped-gradient trajectories).

:func:`fit_markov` estimates the loss on the selection half, column by column in the release order: the
*conditional centre* of column ``t`` given column ``t − 1`` under each input is the mean of column ``t`` in
:data:`BINS` quantile bins of the previous column (pooled over both inputs), a piecewise-linear function through the
bins' mean previous values, extended linearly beyond the outermost ones (an update that clips is linear again
outside its clipping range); column 0 (and a column after one that is not fine-grained noise) has a constant
centre per input.  The spread ``b_t`` is the pooled mean of ``|o_t − centre|^p`` to the power ``1/p``.  One score
per power ``p = 1, 2``, made only where the chain is non-linear: some column's binned conditional means depart from
their straight line (weighted least squares over the bins, within each input) by more than their standard errors
allow (chi-square at :data:`PVALUE` / the number of tests, on the first :data:`GATE_ROWS` rows of each input and at
most :data:`GATE_PAIRS` pairs of consecutive columns, evenly spaced along the chain).  Linear chains (running sums,
prefix sums, autoregressions) and independent coordinates get no score: the innovations and the per-coordinate
features already have their loss.  Noise mixed by a dense linear map can pass the test (the conditional mean of one
mixture of non-Gaussian noise given another is not linear); the scores are then one more candidate beside the
independent components.  Beside the per-step scores, two more share one transition among all the linked steps
(:func:`_homogeneous`; names ending in ``h``): an iterative algorithm's steps are alike, so pooling them multiplies
the rows that fit a bin, the bins are refined in the tails (:data:`TAIL_QUANTILES`), and each bin's difference
between the inputs is shrunk by one standard error of it -- for a loss that lives in a rare band of the state (a
clipped gradient that differs only where an iterate strays near the changed record).  Like every fitted score these
are fitted on the selection half only, and the scoring half and the final test stay independent of them: a poor
fit is a poorer candidate, never a wrong bound.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from dpverify.statistical.columns import MAX_COLUMNS
from dpverify.statistical.features import transposed_copy
from dpverify.statistical.innovations import fine_grained_sorted

if TYPE_CHECKING:
    from dpverify.statistical.columns import SortedColumns

__all__ = ["MarkovScore", "Centre", "Table", "fit_markov", "BINS", "MIN_BIN_ROWS", "GATE_ROWS", "GATE_PAIRS", "GRID",
           "PVALUE", "POWERS", "TAIL_QUANTILES"]

#: quantile bins of the previous column over which a column's conditional centre is estimated
BINS = 32
#: least rows of one input in a bin for its mean to be a knot of that input's conditional centre
MIN_BIN_ROWS = 30
#: rows of each selection half the tests of non-linearity read (the centres are fitted on all of them), and the most
#: consecutive pairs of columns tested, evenly spaced along the chain (an iterative algorithm's steps are alike)
GATE_ROWS, GATE_PAIRS = 262_144, 8
#: points of the even grid on which a column's two conditional centres are tabulated for evaluation (:class:`Table`)
GRID = 257
#: family-wise level of the tests of non-linearity that decide whether the scores are made
PVALUE = 1e-3
#: quantiles of the pooled previous values that bound extra bins in each tail of the shared transition's fit
#: (:func:`_homogeneous`), besides the :data:`BINS` even ones: a band of the state seen on 0.1-3 % of the steps
TAIL_QUANTILES = (0.001, 0.0025, 0.005, 0.01, 0.02)
#: the most previous values (per input) the shared transition's bin edges are read from
EDGE_ROWS = 200_000
#: the exponents ``p`` of the scores fitted: Laplace-like (1) and Gaussian-like (2) noise
POWERS = (1, 2)


@dataclass(frozen=True, eq=False)
class Centre:
    """A column's conditional centre under one input as fitted: ``knots_y`` at ``knots_x`` (increasing) of the
    previous column, linear between them and along the end segments beyond them; a constant when there is one knot."""

    knots_x: NDArray = field(repr=False)
    knots_y: NDArray = field(repr=False)

    def __call__(self, prev: NDArray) -> NDArray[np.float64]:
        x, y = self.knots_x, self.knots_y
        if len(x) == 1:
            return np.full(len(prev), float(y[0]))
        out = np.interp(prev, x, y)
        low, high = (_slope(x, y, 0, 1), _slope(x, y, -2, -1))
        if low:
            out += low * np.minimum(prev - x[0], 0.0)
        if high:
            out += high * np.maximum(prev - x[-1], 0.0)
        return out


def _slope(x: NDArray, y: NDArray, a: int, b: int) -> float:
    dx = float(x[b] - x[a])
    return float(y[b] - y[a]) / dx if dx > 0 else 0.0


@dataclass(frozen=True, eq=False)
class Table:
    """A column's two conditional centres (under ``x0``, ``x1``) tabulated for evaluation: their values at :data:`GRID`
    evenly spaced points from ``low`` (spacing ``1 / inverse_step``), linear between them and along the end cells
    beyond them -- one cell index and two look-ups per value and centre, where ``np.interp``'s binary search over the
    knots took five times as long on a million rows.  Between grid points the table is the chord of the fitted
    centre, which differs from it only in the cells holding a knot.  No previous column: ``values`` holds the two
    constants."""

    low: float
    inverse_step: float
    values: NDArray = field(repr=False)      # (2, GRID), or (2, 1) for constants
    steps: NDArray = field(repr=False)       # (2, GRID - 1): the change of each centre over each cell

    @classmethod
    def of(cls, c0: Centre, c1: Centre) -> "Table":
        """The table of two fitted centres (constants where neither depends on the previous column)."""
        spans = [c.knots_x for c in (c0, c1) if len(c.knots_x) > 1]
        if not spans:
            return cls(0.0, 0.0, np.array([c0.knots_y[:1], c1.knots_y[:1]], dtype=np.float64), np.zeros((2, 0)))
        lo, hi = float(min(x[0] for x in spans)), float(max(x[-1] for x in spans))
        if not hi > lo:
            hi = lo + 1.0
        grid = np.linspace(lo, hi, GRID)
        values = np.stack([c0(grid), c1(grid)])
        return cls(lo, (GRID - 1) / (hi - lo), values, np.diff(values, axis=1))

    def centres(self, prev: NDArray | None, n: int) -> tuple[NDArray, NDArray]:
        """The two centres at the previous column's values ``prev`` (``None``: constants, ``n`` of them)."""
        if prev is None or self.values.shape[1] == 1:
            return np.full(n, self.values[0, 0]), np.full(n, self.values[1, 0])
        t = prev - self.low
        t *= self.inverse_step
        bad = ~np.isfinite(t)
        if bad.any():                             # a non-finite previous value: no centre (the row scores NaN)
            t[bad] = 0.0
        cell = np.floor(t)
        np.clip(cell, 0, GRID - 2, out=cell)
        t -= cell                                 # within the cell: 0..1; beyond the grid: along the end cell
        k = cell.astype(np.intp)
        out = []
        for v, d in zip(self.values, self.steps):
            c = d[k]
            c *= t
            c += v[k]
            c[bad] = np.nan
            out.append(c)
        return out[0], out[1]


@dataclass(frozen=True, eq=False)
class MarkovScore:
    """``Σ_t (|o_t − c1_t(o_{t−1})|^p − |o_t − c0_t(o_{t−1})|^p) / b_t^p`` over the output columns ``columns`` in
    their order (:func:`fit_markov`); ``previous[t]`` is the column ``columns[t]`` is conditioned on, or ``None``;
    ``tables[t]`` its two centres.  A row with a NaN or an infinite value in a used column scores NaN (no threshold
    event holds it)."""

    columns: tuple[int, ...]
    previous: tuple[int | None, ...]
    tables: tuple[Table, ...] = field(repr=False)
    spreads: tuple[float, ...]
    power: int
    kind: str = ""           # "h": one shared transition (:func:`_homogeneous`)

    @property
    def name(self) -> str:
        cols = ",".join(map(str, self.columns[:6])) + (",…" if len(self.columns) > 6 else "")
        return f"markov{self.power}{self.kind}(out[{cols}])"

    def __call__(self, out: NDArray) -> NDArray[np.float64]:
        rows = np.asarray(out)
        rows = rows.reshape(len(rows), -1)
        used = sorted(set(self.columns) | {p for p in self.previous if p is not None})
        cols = np.full((max(used) + 1, len(rows)), np.nan)
        cols[used] = transposed_copy(rows, np.float64, used)
        return self._of(cols)

    def on_columns(self, out: NDArray, cols: NDArray) -> NDArray[np.float64]:
        """The score of the float rows ``out`` from ``cols``, their first columns as float64 rows (NaN as +inf:
        :meth:`dpverify.statistical.columns.SortedColumns.by_column`): the same values as calling it on ``out``."""
        if max(self.columns) >= cols.shape[0] or cols.shape[1] != len(out):
            return self(out)
        return self._of(cols)

    def _of(self, cols: NDArray) -> NDArray[np.float64]:
        n = cols.shape[1]
        s = np.zeros(n)
        with np.errstate(invalid="ignore", over="ignore"):
            for j, prev, table, b in zip(self.columns, self.previous, self.tables, self.spreads):
                o = cols[j]
                c0, c1 = table.centres(None if prev is None else cols[prev], n)
                if self.power == 1:
                    # |o − c1| − |o − c0| = ±(2·clip(o, c0, c1) − c0 − c1): exactly constant beyond the two centres
                    # (the difference of two absolute values rounds there with the low bits of o, and equal values
                    # of the score would tell outputs apart by their floating-point bits)
                    lo, hi = np.minimum(c0, c1), np.maximum(c0, c1)
                    t = np.clip(o, lo, hi)
                    t *= 2.0
                    t -= c0
                    t -= c1
                    t *= np.sign(c0 - c1)
                    t[~np.isfinite(o)] = np.nan
                else:
                    np.subtract(o, c1, out=c1)
                    c1 *= c1
                    np.subtract(o, c0, out=c0)
                    c0 *= c0
                    t = c1
                    t -= c0
                t /= b ** self.power
                s += t
        s[~np.isfinite(s)] = np.nan
        return s


def fit_markov(sel0: NDArray, sel1: NDArray, store: SortedColumns | None = None) -> list[MarkovScore]:
    """The Markov scores of a vector search with selection-half outputs ``sel0``, ``sel1`` (``(n, k)`` numeric rows,
    ``k >= 2``): one per power in :data:`POWERS` over the first :data:`MAX_COLUMNS` columns that are finite and
    fine-grained noise on both halves, where some column is a significantly non-linear function of the one before
    (module docstring); empty otherwise.  ``store``: the search's
    :class:`~dpverify.statistical.columns.SortedColumns` of these halves (their sorted and contiguous columns,
    shared with its other fits); made here without it."""
    if (sel0.ndim != 2 or sel0.shape[1] < 2 or sel0.dtype.kind not in "biuf" or sel1.dtype.kind not in "biuf"
            or min(len(sel0), len(sel1)) < BINS * MIN_BIN_ROWS):
        return []
    k = min(sel0.shape[1], MAX_COLUMNS)
    if store is not None and sel0.dtype.kind == "f" and sel1.dtype.kind == "f":
        cols, pooled = (store.by_column(0), store.by_column(1)), store.pooled
    else:
        cols = tuple(transposed_copy(s, np.float64, range(k)) for s in (sel0, sel1))

        def pooled(j: int) -> NDArray:
            return np.sort(np.concatenate([cols[0][j], cols[1][j]]))
    usable = [_usable(pooled(j)) for j in range(k)]
    columns = [j for j in range(k) if usable[j]]
    if len(columns) < 2:
        return []
    previous = [j - 1 if j >= 1 and usable[j - 1] else None for j in columns]
    edges = {p: _edges(pooled(p)) for p in previous if p is not None}
    # the gate: is some column a non-linear function of the one before, under either input?
    tests, least = 0, 1.0
    linked = [(j, p) for j, p in zip(columns, previous) if p is not None]
    if not linked:
        return []
    for j, p in [linked[i] for i in np.unique(np.linspace(0, len(linked) - 1, GATE_PAIRS).round().astype(int))]:
        for c in cols:
            stat, dof = _departure(*_binned(c[p][:GATE_ROWS], c[j][:GATE_ROWS], edges[p]))
            if dof > 0:
                tests += 1
                least = min(least, float(stats.chi2.sf(stat, dof)))
    if tests == 0 or least > PVALUE / tests:
        return []
    tables = tuple(Table.of(*(_constant(c[j]) if p is None else _centre(*_binned(c[p], c[j], edges[p])) for c in cols))
                   for j, p in zip(columns, previous))
    scores = _scores(cols, columns, previous, tables, "")
    # one transition shared by every linked step (time-homogeneous), its bins refined in the tails, its two centres'
    # difference shrunk by a standard error per bin
    shared = _homogeneous(cols, linked)
    tables = tuple(shared if p is not None else t for p, t in zip(previous, tables))
    return scores + _scores(cols, columns, previous, tables, "h")


def _scores(cols: tuple[NDArray, NDArray], columns: list[int], previous: list[int | None], tables: tuple[Table, ...],
            kind: str) -> list[MarkovScore]:
    """The scores of one set of fitted centres ``tables``, one per power of :data:`POWERS`: each column's spread the
    pooled mean of its residuals' ``p``-th power (both inputs), to the power ``1/p``."""
    residuals = []
    for j, p, table in zip(columns, previous, tables):
        centred = [c[j] - table.centres(None if p is None else c[p], len(c[j]))[i] for i, c in enumerate(cols)]
        residuals.append(np.concatenate(centred))
    scores = []
    for power in POWERS:
        spreads = [float(np.mean(np.abs(r) ** power)) ** (1.0 / power) for r in residuals]
        if all(b > 0 for b in spreads):
            scores.append(MarkovScore(tuple(columns), tuple(previous), tables, tuple(spreads), power, kind))
    return scores


def _homogeneous(cols: tuple[NDArray, NDArray], linked: list[tuple[int, int]]) -> Table:
    """One pair of conditional centres for every linked step ``(j, j − 1)`` of ``linked``: the steps' (previous,
    next) values pooled (``len(linked)`` times the rows of one step), binned at :data:`BINS` quantiles of the pooled
    previous values and at the :data:`TAIL_QUANTILES` of both tails; per bin the two inputs' means are kept apart
    by their difference less one standard error of it (nothing where the difference is within one: soft
    thresholding), about their average.  Where the loss lives in a rare band of the state (a clipped gradient
    that differs only where the iterate strays near the changed record), the per-step fit's bins are too coarse
    there and their means too noisy; elsewhere, the bins where both inputs share the update add no noise."""
    prev = [np.concatenate([c[p] for _, p in linked]) for c in cols]
    nxt = [np.concatenate([c[j] for j, _ in linked]) for c in cols]
    # the edges from every step's previous values of one input in turn, at most EDGE_ROWS of them (quantiles need no
    # more; a 0.1 % tail is then 400 values), as order statistics without a full sort
    pooled = np.concatenate([v[:: max(1, -(-len(v) // EDGE_ROWS))] for v in prev])
    q = np.unique(np.concatenate([TAIL_QUANTILES, np.arange(1, BINS) / BINS, 1.0 - np.asarray(TAIL_QUANTILES)]))
    at = (q * len(pooled)).astype(np.intp)
    edges = np.unique(np.partition(pooled, at)[at])
    (where0, bins0), (where1, bins1) = (_binned_with_ids(prev[i], nxt[i], edges) for i in range(2))
    common, i0, i1 = np.intersect1d(where0, where1, return_indices=True)    # the bins both inputs keep
    if len(common) < 2:
        return Table.of(_centre(*bins0), _centre(*bins1))
    x0, y0, v0, n0 = (a[i0] for a in bins0)
    x1, y1, v1, n1 = (a[i1] for a in bins1)
    x = (x0 * n0 + x1 * n1) / (n0 + n1)
    d = y0 - y1
    d = np.sign(d) * np.maximum(np.abs(d) - np.sqrt(v0 / n0 + v1 / n1), 0.0)
    mid = (y0 + y1) / 2.0
    return Table.of(Centre(x, mid + d / 2.0), Centre(x, mid - d / 2.0))


def _usable(pooled: NDArray) -> bool:
    """Whether a column (both halves, sorted; NaN as +inf) is finite, fine-grained noise."""
    return bool(np.isfinite(pooled[0]) and np.isfinite(pooled[-1]) and fine_grained_sorted(pooled))


def _edges(pooled: NDArray) -> NDArray:
    """The inner edges of :data:`BINS` quantile bins of a sorted column."""
    return pooled[(np.arange(1, BINS) * len(pooled)) // BINS]


def _constant(y: NDArray) -> Centre:
    """A centre that does not depend on the previous column: the mean of ``y``."""
    return Centre(np.array([0.0]), np.array([float(y.mean())]))


def _binned(prev: NDArray, y: NDArray, edges: NDArray) -> tuple[NDArray, NDArray, NDArray, NDArray]:
    """Per bin of ``prev`` (``edges`` the inner edges) with at least :data:`MIN_BIN_ROWS` rows: the mean of ``prev``,
    the mean of ``y``, its variance and the number of rows."""
    return _binned_with_ids(prev, y, edges)[1]


def _binned_with_ids(prev: NDArray, y: NDArray,
                     edges: NDArray) -> tuple[NDArray, tuple[NDArray, NDArray, NDArray, NDArray]]:
    """:func:`_binned` and the indices of the bins it kept."""
    idx = np.searchsorted(edges, prev, side="right")
    m = len(edges) + 1
    shift = float(y.mean())                       # moments about the mean: no cancellation on large values
    u = y - shift
    n = np.bincount(idx, minlength=m).astype(np.float64)
    sx = np.bincount(idx, weights=prev, minlength=m)
    sy = np.bincount(idx, weights=u, minlength=m)
    syy = np.bincount(idx, weights=u * u, minlength=m)
    keep = n >= MIN_BIN_ROWS
    n, sx, sy, syy = n[keep], sx[keep], sy[keep], syy[keep]
    mu = sy / n
    var = np.maximum(syy / n - mu * mu, 0.0) * n / (n - 1)
    return np.flatnonzero(keep), (sx / n, mu + shift, var, n)


def _departure(mx: NDArray, my: NDArray, var: NDArray, n: NDArray) -> tuple[float, int]:
    """The chi-square statistic of the bin means ``my`` about their weighted least-squares line in ``mx`` (weights
    ``n / var``) and its degrees of freedom (bins less 2; 0 when there are too few bins or no spread)."""
    if len(mx) < 4 or not np.all(var > 0):
        return 0.0, 0
    w = n / var
    design = np.stack([np.ones_like(mx), mx], axis=1)
    coef = np.linalg.lstsq(design * np.sqrt(w)[:, None], my * np.sqrt(w), rcond=None)[0]
    resid = my - design @ coef
    return float(np.sum(w * resid * resid)), len(mx) - 2


def _centre(mx: NDArray, my: NDArray, var: NDArray, n: NDArray) -> Centre:
    """The piecewise-linear conditional centre through the bins' means (a constant with fewer than two bins)."""
    if len(mx) < 2:
        return Centre(np.array([0.0]), np.array([float(np.sum(my * n) / max(float(np.sum(n)), 1.0))]))
    order = np.argsort(mx, kind="stable")
    return Centre(mx[order], my[order])
