"""Learned partitions of the output space: conditional cells and a product density-ratio score.

The optimal event of an audit is a level set of the privacy loss ``L(o) = ln f_x(o) - ln f_x'(o)`` (Neyman--
Pearson).  Thresholds on one coordinate or on a linear score find it only when ``L`` is monotone in that
statistic.  Two estimates of ``L``, both fitted on the *selection half* of the search sample (so that the final
test on fresh samples stays valid):

* :class:`CellPartition` -- **conditional cells** for outputs with a discrete part and a continuous part (SVT
  releasing the noisy value of the first query above the threshold, noisy max releasing its value, a continuous
  release with point masses): the rows are grouped by their discrete part (integer codes, flags), and within each
  group the continuous part (the sum of the continuous coordinates) is cut at its quantiles, each point mass in
  a cell of its own.  Scalar continuous outputs are one group.  The cells' likelihood ratios, ordered on the
  selection half, give prefix unions (:func:`dpverify.statistical.search._outcome_unions`): the estimated level sets of
  ``L``, including the events "discrete part = j and continuous part ≤ t" and unions of them;
* :class:`ProductRatioScore` -- a **product (naive-Bayes) density-ratio score** for vector outputs: the sum over
  coordinates of the log ratio of their binned marginals, over the coordinates whose marginals differ
  significantly (G-test).  Exact in form for mechanisms with independent noise per coordinate (histograms,
  Laplace vectors), where ``L`` is a sum of one-dimensional losses and its level sets are joint events in many
  coordinates ("bin i low *and* bin j high") that no single coordinate, sum or linear score captures.

DP-Sniper (Bichsel et al., S&P 2021) for classifier events; Eureka (Lu et al., 2022) for density-ratio
estimation.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
from numpy.typing import NDArray
from scipy import special

from dpverify.statistical.atoms import row_hashes
from dpverify.statistical.features import rows_per_block, transposed_copy

__all__ = ["CellPartition", "CellSetEvent", "ProductRatioScore", "block_argmax", "fit_cells", "fit_cells_and_codes",
           "fit_product_ratio", "split_columns", "tail_ranks"]

#: a column with at most this many distinct values in the probe is part of the discrete part
DISCRETE_VALUES = 16
MAX_GROUPS = 64
MIN_GROUP = 50
MAX_BINS = 64
PER_BIN = 200
RATIO_BINS = 16
TEST_BINS = 4
RATIO_PVALUE = 1e-3
#: Growth factor of :func:`tail_ranks`.
TAIL_STEP = 1.3
#: Cells of the conditional partition reach into both tails of a group down to this many selection-half points.
TAIL_CELL = 16


def _finite(v: NDArray) -> NDArray[np.float64]:
    v = np.asarray(v, dtype=np.float64)
    return np.where(np.isnan(v), np.inf, v)


def split_columns(rows: NDArray) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(discrete, continuous)`` column indices of ``(n, k)`` outputs: a column is discrete when it takes at most
    :data:`DISCRETE_VALUES` distinct values in ``rows``."""
    disc, cont = [], []
    for j in range(rows.shape[1]):
        (disc if len(np.unique(rows[:, j])) <= DISCRETE_VALUES else cont).append(j)
    return tuple(disc), tuple(cont)


@dataclass(frozen=True)
class CellPartition:
    """Cell of an output row: its group (the discrete part, by row hash; unlisted parts form one last group) and
    the bin of the continuous feature (sum of the continuous columns) among the group's edges."""

    discrete: tuple[int, ...]
    continuous: tuple[int, ...]
    groups: tuple[int, ...]                    # sorted row hashes of the discrete parts with groups of their own
    edges: tuple[tuple[float, ...], ...]       # per group (len(groups) + 1 of them), sorted bin edges
    labels: tuple[str, ...] = field(default=(), compare=False)   # readable discrete parts, for descriptions
    scalar: bool = field(default=False, compare=False)           # scalar outputs: the value is ``out`` itself

    @property
    def n_cells(self) -> int:
        return sum(len(e) + 1 for e in self.edges)

    def feature(self, rows: NDArray) -> NDArray[np.float64]:
        rows = rows.reshape(len(rows), -1)
        if not self.continuous:
            return np.zeros(len(rows))
        # NaN as +inf: a row with a NaN sums to NaN (or to inf), which becomes +inf -- as if each NaN were +inf first.
        # The continuous columns of a block of rows at a time as one float64 copy (the same sums, row by row, as of
        # one copy of them all, which on a million rows of 20 columns cost more than the sums)
        cont = list(self.continuous)
        whole = cont == list(range(rows.shape[1])) and rows.dtype == np.float64
        s = np.empty(len(rows))
        step = rows_per_block(rows)
        with np.errstate(invalid="ignore"):
            for start in range(0, len(rows), step):
                block = rows[start:start + step]
                v = np.ascontiguousarray(block if whole else block[:, cont], dtype=np.float64)
                v.sum(axis=1, out=s[start:start + step])
        return np.where(np.isnan(s), np.inf, s)

    def group_of(self, rows: NDArray) -> NDArray[np.intp]:
        rows = rows.reshape(len(rows), -1)
        if not self.discrete:
            return np.zeros(len(rows), dtype=np.intp)
        h = row_hashes(rows, self.discrete)
        keys = np.asarray(self.groups, dtype=np.uint64)
        idx = np.searchsorted(keys, h)
        idx_c = np.minimum(idx, len(keys) - 1)
        found = (idx < len(keys)) & (keys[idx_c] == h) if len(keys) else np.zeros(len(h), dtype=bool)
        return np.where(found, idx_c, len(keys)).astype(np.intp)

    def offsets(self) -> NDArray[np.int64]:
        """First cell of every group (and the number of cells last): group ``k`` has the cells
        ``offsets[k]..offsets[k+1]-1``, in the order of its continuous value."""
        return np.cumsum([0] + [len(e) + 1 for e in self.edges]).astype(np.int64)

    def cells(self, rows: NDArray) -> NDArray[np.intp]:
        return self.cells_of(self.feature(rows), None if len(self.edges) == 1 else self.group_of(rows))

    def cells_of(self, f: NDArray, g: NDArray | None) -> NDArray[np.intp]:
        """The cells of rows whose continuous feature is ``f`` and group ``g`` (:meth:`feature`, :meth:`group_of`;
        ``g`` is not read with one group)."""
        if len(self.edges) == 1:                       # one group (no discrete part): the bins of the feature
            return np.searchsorted(np.asarray(self.edges[0]), f, "right").astype(np.intp, copy=False)
        assert g is not None
        offsets = self.offsets()
        out = np.empty(len(f), dtype=np.intp)
        for k, (rows_k, f_k) in enumerate(grouped(f, g, len(self.edges))):
            if len(rows_k):
                out[rows_k] = offsets[k] + np.searchsorted(np.asarray(self.edges[k]), f_k, "right")
        return out

    def describe_cell(self, c: int) -> str:
        offsets = np.cumsum([0] + [len(e) + 1 for e in self.edges])
        k = int(np.searchsorted(offsets, c, "right") - 1)
        b = c - int(offsets[k])
        e = self.edges[k]
        lo = "-inf" if b == 0 else f"{e[b - 1]:.6g}"
        hi = "inf" if b == len(e) else f"{e[b]:.6g}"
        group = (self.labels[k] if k < len(self.labels) else "other") if self.discrete else ""
        value = ("out" if self.scalar else f"out[{self.continuous[0]}]" if len(self.continuous) == 1 else
                 f"sum(out[{','.join(map(str, self.continuous))}])")
        cont = f"{value} ∈ [{lo}, {hi})" if self.continuous else ""
        return " and ".join(s for s in (f"discrete part = {group}" if group else "", cont) if s)


@dataclass(frozen=True)
class CellSetEvent:
    """``{o : cell(o) in cells}`` for a :class:`CellPartition`."""

    partition: CellPartition
    cells: tuple[int, ...]

    @property
    def description(self) -> str:
        shown = "; ".join(self.partition.describe_cell(c) for c in self.cells[:2])
        more = f"; … ({len(self.cells)} cells of {self.partition.n_cells})" if len(self.cells) > 2 else ""
        return f"out in cells {{{shown}{more}}}"

    def contains(self, out: NDArray) -> NDArray[np.bool_]:
        part = self.partition
        if len(part.edges) == 1:
            runs = _runs(self.cells)
            if len(runs) <= MAX_RUNS:
                # one group: the chosen cells are a few intervals of the feature (a prefix union of cells ordered
                # along it mostly is one), and comparing with their ends is far cheaper than locating every output
                # among all the edges (a binary search per output)
                f, e = part.feature(np.asarray(out)), part.edges[0]
                inside = np.zeros(len(f), dtype=bool)
                for first, last in runs:               # cells first..last: edges[first - 1] <= f < edges[last]
                    m = f >= e[first - 1] if first > 0 else np.ones(len(f), dtype=bool)
                    if last < len(e):
                        m &= f < e[last]
                    inside |= m
                return inside
        chosen = np.zeros(part.n_cells, dtype=bool)        # a lookup table: no sort of the cells
        chosen[np.asarray(self.cells, dtype=np.intp)] = True
        return chosen[part.cells(np.asarray(out))]


#: a one-group :class:`CellSetEvent` of at most this many runs of consecutive cells is counted by comparisons
MAX_RUNS = 4
#: a :class:`ProductRatioScore` coordinate with at most this many bin edges is binned by comparisons, one pass per
#: edge into a one-byte count (107,000 values into 16 edges: 0.3 ms, against 3.4 ms for a binary search per value)
FEW_EDGES = 64


def nan_start(values_sorted: NDArray) -> int:
    """Index of the first NaN of a sorted array (NaNs sort last); its length when it has none."""
    n = len(values_sorted)
    if n and values_sorted.dtype.kind == "f" and np.isnan(values_sorted[-1]):
        return int(np.searchsorted(values_sorted, np.nan, "left"))
    return n


def block_argmax(s: NDArray[np.float64], sizes: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
    """``np.argmax`` of each of the consecutive blocks of ``s`` (of ``sizes``, each at least 1) within its block, and
    whether the block's value there is finite (a block holding a NaN is not: ``np.argmax`` stops at its first NaN),
    in a few whole-array calls instead of one per block (a search has hundreds of small blocks)."""
    starts = np.zeros(len(sizes), dtype=np.int64)
    np.cumsum(sizes[:-1], out=starts[1:])
    top = np.maximum.reduceat(s, starts)                       # NaN where a block holds one
    at = np.where(s == np.repeat(top, sizes), np.arange(len(s)), len(s))
    return np.minimum.reduceat(at, starts) - starts, np.isfinite(top)


def sorted_distinct(v: NDArray) -> tuple[NDArray, NDArray[np.int64]]:
    """``np.unique(v, return_counts=True)`` for an already sorted array, in one linear pass (no sort).

    NaNs (sorted last) count as one value, as in ``np.unique``; a zero is reported as ``0.0``, never ``-0.0``.  The
    counts may be a read-only array.
    """
    n = len(v)
    if n == 0:
        return v[:0], np.zeros(0, dtype=np.int64)
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.not_equal(v[1:], v[:-1], out=new[1:])
    new[nan_start(v) + 1:] = False                 # every NaN after the first: one value
    if np.count_nonzero(new) == n:
        # every value distinct (a continuous sample): the values themselves, each once -- without the positions,
        # the gather and the differences, four arrays as long as the sample's, most of the call on large samples;
        # the counts a read-only view of one 1 (most callers read only the values)
        return (v + 0.0 if v.dtype.kind == "f" else v.copy()), np.broadcast_to(np.int64(1), (n,))
    starts = np.flatnonzero(new)
    uniq = v[starts]
    if uniq.dtype.kind == "f":
        uniq = uniq + 0.0           # -0.0 and 0.0 are one value: report it as 0
    counts = np.empty(len(starts), dtype=np.int64)
    np.subtract(starts[1:], starts[:-1], out=counts[:-1])
    counts[-1] = n - starts[-1]
    return uniq, counts


def _runs(cells: Sequence[int]) -> list[tuple[int, int]]:
    """``(first, last)`` of each run of consecutive cell indices in ``cells``."""
    c = np.unique(np.asarray(cells, dtype=np.int64))
    if len(c) == 0:
        return []
    breaks = np.flatnonzero(np.diff(c) != 1)
    starts, ends = np.r_[0, breaks + 1], np.r_[breaks, len(c) - 1]
    return [(int(c[a]), int(c[b])) for a, b in zip(starts, ends)]


@functools.lru_cache(maxsize=256)
def tail_ranks(n: int, step: float = TAIL_STEP, first: int = 1) -> NDArray[np.int64]:
    """Ranks ``first − 1, ⌊first·step⌋ − 1, ⌊first·step²⌋ − 1, …`` from the bottom of ``n`` sorted values up to the
    middle: the order statistics that reach into a tail where evenly spaced quantiles have none (about 45 per tail
    at 10^5 values with the defaults).  Cached (a search asks for the same ``n`` on every feature): read-only."""
    r = _tail_ranks(n, step, first)
    r.flags.writeable = False
    return r


def _tail_ranks(n: int, step: float, first: int) -> NDArray[np.int64]:
    m = n // 2
    if m < first:
        return np.zeros(0, dtype=np.int64)
    count = int(math.log(m / first) / math.log(step)) + 2
    return np.unique(np.minimum(np.floor(first * step ** np.arange(count)).astype(np.int64) - 1, m - 1))


def _edges(values_sorted: NDArray[np.float64], bins: int, tails: bool = True) -> tuple[float, ...]:
    """Quantile edges of the continuous part, with ``tails`` tail edges at geometric ranks from both ends down to
    :data:`TAIL_CELL` points (the level sets of a loss that grows in a tail -- SVT releasing its noisy value -- lie
    far below the quantile spacing), and both sides of every point mass (values seen twice or more).

    The product ratio score bins without tail edges: a sum over coordinates of log ratios of cells of 16 points is
    dominated by their noise (the 20-bin replace-one histogram fell from 0.99 to 0.81 of its true ε with them)."""
    # the finite values: one run of the sorted values (-inf first; +inf, then NaN, last), a view
    lo = int(np.searchsorted(values_sorted, -np.inf, "right")) if len(values_sorted) else 0
    v = values_sorted[lo:int(np.searchsorted(values_sorted, np.inf, "left"))]
    if len(v) == 0:
        return ()
    uniq, counts = sorted_distinct(v)          # v is sorted: no other sort below, linear passes only
    is_atom = counts >= max(2, len(v) // 1000)
    atoms = uniq[is_atom]
    # the values that are no atom, sorted too (all of them, without a copy, when there is none: a continuous sample)
    single = v[np.repeat(~is_atom, counts)] if len(atoms) else v
    qs = sorted_quantiles(single, np.linspace(0, 1, bins + 1)[1:-1]) if len(single) and bins > 1 else np.zeros(0)
    tail_edges = np.zeros(0)
    if tails and len(single) and bins > 1:
        s = single
        r = tail_ranks(len(s) // bins, first=TAIL_CELL)            # inside the outermost quantile bins only
        tail_edges = np.concatenate([s[r + 1], s[len(s) - 2 - r]]) if len(r) else tail_edges
    e = np.concatenate([qs, tail_edges, atoms, np.nextafter(atoms, np.inf)])
    return tuple(float(t) for t in np.unique(e))


def fit_cells(sel0: NDArray, sel1: NDArray, pooled: NDArray | None = None) -> CellPartition | None:
    """A partition fitted on the selection half (outputs under both inputs), or ``None`` when the outputs have no
    continuous part (the outcome unions cover discrete outputs).  ``pooled``: for scalar outputs, their values
    (NaN as +inf) of both halves already sorted (an event search's), used instead of sorting them again when they
    have no discrete part."""
    fitted = fit_cells_and_codes(sel0, sel1, pooled)
    return None if fitted is None else fitted[0]


def fit_cells_and_codes(sel0: NDArray, sel1: NDArray,
                        pooled: NDArray | None = None) -> tuple[CellPartition, NDArray[np.intp] | None] | None:
    """:func:`fit_cells` and the cells of the rows of ``sel0`` then ``sel1`` (what :meth:`CellPartition.cells`
    gives them, from the features and groups the fit computed anyway; ``None`` when the fit used ``pooled``, whose
    caller counts the cells on its sorted values instead)."""
    halves = [np.asarray(x).reshape(len(x), -1) for x in (sel0, sel1)]
    n0, n = len(halves[0]), len(halves[0]) + len(halves[1])
    # every step-th row of the two halves together (without copying them into one array)
    step = max(1, n // 20_000)
    probe = np.concatenate([halves[0][::step], halves[1][(-n0) % step::step]])
    disc, cont = split_columns(probe)
    if not cont:
        return None
    groups: list[int] = []
    labels: list[str] = []
    gid = np.zeros(n, dtype=np.intp)
    if disc:
        h = np.concatenate([row_hashes(x, disc) for x in halves])
        uniq, first, inverse, counts = np.unique(h, return_index=True, return_inverse=True, return_counts=True)
        keep = np.argsort(-counts, kind="stable")[:MAX_GROUPS]
        keep = keep[counts[keep] >= MIN_GROUP]
        keep = keep[np.argsort(uniq[keep])]
        groups = [int(u) for u in uniq[keep]]

        def row(i: int) -> NDArray:
            return halves[0][i] if i < n0 else halves[1][i - n0]

        labels = ["(" + ",".join(f"{v:g}" for v in row(int(first[k]))[list(disc)]) + ")" for k in keep]
        pos = np.full(len(uniq), len(keep), dtype=np.intp)
        pos[keep] = np.arange(len(keep))
        gid = pos[inverse.ravel()]
    bare = CellPartition(disc, cont, tuple(groups), ((),) * (len(groups) + 1))
    f = np.concatenate([bare.feature(x) for x in halves])
    use_pooled = pooled is not None and not disc
    edges = []
    for fk in [f] if not groups else [v for _, v in grouped(f, gid, len(groups) + 1)]:
        fk = pooled if use_pooled else np.sort(fk)
        edges.append(_edges(fk, int(np.clip(len(fk) // PER_BIN, 1, MAX_BINS))))
    part = CellPartition(disc, cont, tuple(groups), tuple(edges), tuple(labels), np.asarray(sel0).ndim == 1)
    return part, None if use_pooled else part.cells_of(f, gid)


def grouped(values: NDArray, group: NDArray[np.intp], n_groups: int) -> list[tuple[NDArray[np.intp], NDArray]]:
    """For each group ``k < n_groups``: the positions of ``group == k`` and ``values`` there, in their order -- what
    ``np.flatnonzero(group == k)`` and ``values[group == k]`` give, from one stable sort of the group ids instead of a
    pass over all the rows per group (a partition has up to 65 groups)."""
    if n_groups == 1:
        return [(np.arange(len(values)), values)]
    order = np.argsort(group.astype(np.uint8 if n_groups <= 256 else np.intp, copy=False), kind="stable")
    bounds = np.zeros(n_groups + 1, dtype=np.int64)
    np.cumsum(np.bincount(group, minlength=n_groups)[:n_groups], out=bounds[1:])
    v = values[order]
    return [(order[bounds[k]:bounds[k + 1]], v[bounds[k]:bounds[k + 1]]) for k in range(n_groups)]


@dataclass(frozen=True)
class ProductRatioScore:
    """``sum_j r_j[bin_j(o_j)]``: the log ratio of the binned marginals of coordinate ``j`` under the two inputs,
    summed over the informative coordinates ``columns`` (a product density-ratio estimate of the privacy loss)."""

    columns: tuple[int, ...]
    edges: tuple[tuple[float, ...], ...]
    ratios: tuple[tuple[float, ...], ...]

    @property
    def name(self) -> str:
        cols = ",".join(map(str, self.columns[:6])) + (",…" if len(self.columns) > 6 else "")
        return f"ratio-score(out[{cols}])"

    def __call__(self, out: NDArray) -> NDArray[np.float64]:
        rows = np.asarray(out).reshape(len(out), -1)
        s = np.zeros(len(rows))
        small_ints = rows.dtype.kind in "biu" and rows.dtype.itemsize == 1
        # the used columns as float64, each contiguous (a column of a row-major output is a strided view)
        cols = None if small_ints else transposed_copy(rows, np.float64, self.columns)
        for i, (j, e, r) in enumerate(zip(self.columns, self.edges, self.ratios)):
            if small_ints:
                # every value of the column's type has its bin in a table (searchsorted "right" of the values, as
                # for any other column): one lookup per output
                lo = int(np.iinfo(rows.dtype).min) if rows.dtype.kind != "b" else 0
                hi = int(np.iinfo(rows.dtype).max) if rows.dtype.kind != "b" else 1
                bins = np.searchsorted(np.asarray(e), np.arange(lo, hi + 1, dtype=np.float64), "right")
                s += np.asarray(r)[bins][rows[:, j].astype(np.intp) - lo]
                continue
            v = cols[i]
            if np.isnan(v).any():
                v = np.where(np.isnan(v), np.inf, v)
            if len(e) <= FEW_EDGES:
                # the bin is the number of edges <= v, as searchsorted "right" gives it, counted by a comparison per
                # edge instead of a binary search per output
                idx = np.zeros(len(v), dtype=np.uint8)
                for t in e:
                    idx += v >= t
            else:
                idx = np.searchsorted(np.asarray(e), v, "right")
            s += np.asarray(r)[idx]
        return s


def g_test_pvalue(t0: NDArray, t1: NDArray) -> float:
    """p-value of the G-test of independence of the ``2 x m`` table of counts ``t0``, ``t1`` (every column and both
    rows nonempty), with Yates' continuity correction when ``m = 2``: ``scipy.stats.chi2_contingency(table,
    lambda_="log-likelihood")``'s p-value, the same arithmetic without its per-call overhead (a search tests every
    coordinate of every pair at every checkpoint)."""
    obs = np.stack([t0, t1]).astype(np.float64)
    expected = obs.sum(axis=1, keepdims=True) * obs.sum(axis=0, keepdims=True) / obs.sum()
    dof = obs.shape[1] - 1
    if dof == 0:
        return 1.0
    if dof == 1:
        diff = expected - obs
        obs = obs + np.minimum(0.5, np.abs(diff)) * np.sign(diff)
    g = 2.0 * float(np.sum(special.xlogy(obs, obs / expected)))
    return float(special.chdtrc(dof, g))


def bin_counts(values_sorted: NDArray, edges: NDArray, minlength: int = 0) -> NDArray[np.int64]:
    """``np.bincount(np.searchsorted(edges, v, "right"), minlength=...)`` of the unsorted ``v`` from ``v`` sorted
    (``values_sorted``, no NaN): bin ``i`` holds ``edges[i-1] <= v < edges[i]``, so its count is a difference of
    two ranks of ``edges`` among the values (a binary search per edge instead of one per value)."""
    below = np.searchsorted(values_sorted, edges, "left")
    k = len(below)
    counts = np.zeros(max(k + 1, minlength), dtype=np.int64)
    counts[0] = below[0] if k else len(values_sorted)
    if k:
        counts[1:k] = below[1:] - below[:-1]
        counts[k] = len(values_sorted) - below[-1]
    return counts


def sorted_quantiles(a_sorted: NDArray, qs: Sequence[float] | NDArray) -> NDArray[np.float64]:
    """``np.quantile(a, qs)`` (its default ``"linear"`` method) of a sorted, NaN-free ``a``, bit for bit, without its
    partition of the whole array nor its fixed cost per call (a search fits quantile edges for every column of every
    pair at every checkpoint, most of them on a few hundred values): the same virtual indexes ``(n - 1) q``, the same
    neighbours (the last value at and above ``n - 1``) and numpy's own interpolation formula, ``a + (b - a) t`` below
    ``t = 0.5`` and ``b - (b - a)(1 - t)`` from it (tested against ``np.quantile``)."""
    n = len(a_sorted)
    v = (n - 1) * np.asarray(qs, dtype=np.float64)
    previous = np.floor(v)
    following = previous + 1
    above = v >= n - 1
    previous[above] = following[above] = -1
    below = v < 0
    previous[below] = following[below] = 0
    i, j = previous.astype(np.intp), following.astype(np.intp)
    lo, hi = a_sorted[i], a_sorted[j]
    t = v - i
    diff = hi - lo
    out = np.asarray(lo + diff * t, dtype=np.float64)
    np.subtract(hi, diff * (1 - t), out=out, where=t >= 0.5, casting="unsafe")
    return out


def _sorted_finite(column: NDArray) -> NDArray[np.float64]:
    v = _finite(column)                       # a fresh array (np.where): sorted in place
    v.sort()
    return v


def fit_product_ratio(sel0: NDArray, sel1: NDArray,
                      sorted_column: Callable[[int], tuple[NDArray, NDArray]] | None = None,
                      pooled_column: Callable[[int], NDArray] | None = None) -> ProductRatioScore | None:
    """Fit the score on the selection half; coordinates kept where a G-test of their binned marginals rejects
    equality at ``RATIO_PVALUE / k`` (at least the most significant one).  ``sorted_column(j)``: column ``j`` of
    both halves with NaN as +inf, sorted (a search that sorts them anyway shares its sorts); sorted here
    without it.  ``pooled_column(j)``: the two sorted together (merged here without it)."""
    a0 = sel0.reshape(len(sel0), -1)
    a1 = sel1.reshape(len(sel1), -1)
    k = a0.shape[1]
    n0, n1 = len(a0), len(a1)
    fits = []
    for j in range(k):
        s0, s1 = sorted_column(j) if sorted_column is not None else (_sorted_finite(a0[:, j]), _sorted_finite(a1[:, j]))
        pooled = (pooled_column(j) if pooled_column is not None     # two sorted runs: a linear merge
                  else np.concatenate([s0, s1]))
        if pooled_column is None:
            pooled.sort(kind="stable")        # in place: the concatenation is a fresh array
        finite = pooled
        if len(pooled) and not (np.isfinite(pooled[0]) and np.isfinite(pooled[-1])):
            finite = pooled[np.isfinite(pooled)]  # (sorted: finite throughout when both ends are)
        uniq = sorted_distinct(finite)[0]
        if len(uniq) <= RATIO_BINS:        # a discrete coordinate: one bin per value
            e = np.unique(np.concatenate([uniq, np.nextafter(uniq, np.inf)]))
        else:
            e = np.asarray(_edges(pooled, RATIO_BINS, tails=False))
        b0, b1 = bin_counts(s0, e), bin_counts(s1, e)
        # keep-or-drop on a coarse version of the bins (quartiles of the pooled sample): a weak shift spread over
        # many coordinates is far more visible to a test with few degrees of freedom
        quartiles = np.unique(sorted_quantiles(finite, (0.25, 0.5, 0.75))) if len(finite) else np.zeros(0)
        t0, t1 = bin_counts(s0, quartiles, TEST_BINS), bin_counts(s1, quartiles, TEST_BINS)
        used = (t0 + t1) > 0
        if used.sum() < 2:
            continue
        p = g_test_pvalue(t0[used], t1[used])
        r = np.log((b0 + 0.5) / (b1 + 0.5)) - math.log(n0 / n1)
        fits.append((p, j, tuple(float(t) for t in e), tuple(float(t) for t in r)))
    if not fits:
        return None
    fits.sort(key=lambda t: t[0])
    kept = [f for f in fits if f[0] < RATIO_PVALUE / k] or fits[:1]
    kept.sort(key=lambda t: t[1])
    return ProductRatioScore(tuple(f[1] for f in kept), tuple(f[2] for f in kept), tuple(f[3] for f in kept))
