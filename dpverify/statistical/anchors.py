"""Threshold events anchored at the pair's inputs: ``{f(o) >= a}`` and ``{f(o) <= a}`` for ``a`` the value of the
query at either input, on the features whose values are on the query's scale.

A mechanism that adds noise to a numeric query answer (Laplace, geometric, Gaussian, their vectors, compositions of
them) has a privacy loss that changes behaviour at the inputs' answers: for Laplace noise the log ratio is constant
beyond both answers, so ``{o >= x1}`` (``x1 > x0``) is the largest event at the largest ratio -- the best event of the
pair.  The threshold families of :mod:`dpverify.statistical.search` find it too, but they choose one threshold among
thousands on a selection half of a few hundred outputs, and a threshold chosen that way is mostly noise at the first
checkpoints of an anytime audit (composition's ``(x + Lap, x + Lap)`` released twice: the best event
``{min(o) >= x1}`` has probabilities 0.27 and 0.22, hidden below one standard error at 500 outputs).  Two fixed
thresholds per feature need no choice.  Only data-independent events are added: the audit stays valid whatever
they are worth; on mechanisms whose outputs are not on the query's scale they are simply poor candidates.

The inputs also give one feature whose thresholds the search chooses as any feature's (:class:`ClippedSum`): the
sum over the coordinates the inputs differ in of each coordinate clipped to its two answers, signed by the move --
for Laplace noise of one scale on every coordinate, the privacy loss itself up to an affine map.  Its second view
clips the output's *first differences* instead (``o_j − o_{j−1}``): the loss of noisy answers released as their
running sums (prefix sums, cumulative histograms, counters under continual observation), whose joint events in
every coordinate of the noise are no event of any raw coordinate.  Where the inputs are no answers of the output's
scale (datasets of records; answers that are functions of the inputs, such as running sums of them), the same feature
clips at each column's medians under the two inputs, estimated on the search's selection half
(:func:`median_clipped_sum`): for noise symmetric about the answer, the medians are the answers.

The inputs anchor the search when both are numbers (one answer, every column of the output compared with it) or
one-dimensional numeric arrays as long as the output row (coordinate ``j`` of the output against coordinate ``j`` of
each input, e.g. a histogram)."""


from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from dpverify.statistical.cells import sorted_quantiles
from dpverify.statistical.columns import MAX_COLUMNS, SortedColumns
from dpverify.statistical.events import IntervalEvent
from dpverify.statistical.features import Column, Feature, Identity, Statistic, finite_view, transposed_copy

#: rows of each selection half whose medians :func:`median_clipped_sum` takes: the median of a Laplace column of
#: scale b from 8,192 draws is within about 0.011·b of the answer (one standard error)
MEDIAN_ROWS = 8_192
#: column ``j`` of the two selection halves, each sorted (:class:`~dpverify.statistical.columns.SortedColumns`)
SortedColumn = Callable[[int], tuple[NDArray, NDArray]]

__all__ = ["Anchors", "input_anchors", "anchored_specs", "ANCHORED", "ClippedSum", "clipped_sum",
           "median_clipped_sum", "clipped_sums"]

#: the family name of anchored events (finalists are chosen and corrected for multiplicity per family)
ANCHORED = "anchored"

#: each input's query answer: ``(x0 values, x1 values)``, one value (every column) or one per column
Anchors = tuple[tuple[float, ...], tuple[float, ...]]


def input_anchors(x0: Any, x1: Any) -> Anchors | None:
    """The anchors of a pair of inputs (module docstring), or ``None`` when they are not finite numbers or numeric
    vectors of one shape (datasets of records, graphs, ...)."""
    try:
        a0, a1 = np.asarray(x0), np.asarray(x1)
    except Exception:           # an input numpy cannot make an array of (a graph, an object of the caller's)
        return None
    if (a0.shape != a1.shape or a0.ndim > 1 or a0.size == 0 or a0.size > 4096 or a0.dtype.kind not in "biuf"
            or a1.dtype.kind not in "biuf"):
        return None
    v0, v1 = a0.astype(np.float64).ravel(), a1.astype(np.float64).ravel()
    if not (np.isfinite(v0).all() and np.isfinite(v1).all()) or np.array_equal(v0, v1):
        return None
    return tuple(float(v) for v in v0), tuple(float(v) for v in v1)


def _features(anchors: Anchors, width: int | None) -> list[tuple[Feature, tuple[float, ...]]]:
    """``(feature, its thresholds)`` for outputs of ``width`` columns (``None``: scalar outputs)."""
    a0, a1 = anchors
    if width is None:
        return [(Identity(), tuple(sorted({a0[0], a1[0]})))] if len(a0) == 1 else []
    if len(a0) == 1:
        both = tuple(sorted({a0[0], a1[0]}))
        return ([(Column(j), both) for j in range(min(width, MAX_COLUMNS))]
                + [(Statistic("min"), both), (Statistic("max"), both)]
                + [(Statistic("sum"), tuple(sorted({width * a0[0], width * a1[0]})))])
    if len(a0) != width:
        return []
    feats: list[tuple[Feature, tuple[float, ...]]] = [(Column(j), tuple(sorted({a0[j], a1[j]})))
                                                      for j in _differing(anchors)]
    return feats + [(Statistic("sum"), tuple(sorted({math.fsum(a0), math.fsum(a1)})))]


def _differing(anchors: Anchors) -> list[int]:
    """The coordinates the inputs differ in, at most :data:`MAX_COLUMNS` of them (those they differ most in), in
    column order."""
    gaps = np.abs(np.subtract(*anchors))
    return sorted(int(j) for j in np.argsort(-gaps, kind="stable")[:MAX_COLUMNS] if gaps[j] > 0)


def anchored_specs(halves: tuple[NDArray, NDArray, NDArray, NDArray], anchors: Anchors,
                   sorted_columns: SortedColumns | None = None,
                   outcomes: tuple[NDArray, Sequence[NDArray]] | None = None) -> list[tuple]:
    """The anchored events of the four halves ``(sel0, sel1, score0, score1)`` of a search sample, as family specs of
    :meth:`dpverify.statistical.search.CandidateSearch.families` (one per feature: its ``>=`` and ``<=`` events at
    each threshold).  None for outputs of more than two dimensions or anchors that match no column.
    ``sorted_columns``: the search's columns (:class:`SortedColumns`), whose sorted selection columns give a column's
    counts by binary search and whose contiguous copies give the scoring columns and the rows' max and min (the same
    counts as computing each feature again on the four halves, at a fraction of the cost on wide outputs).
    ``outcomes``: integer outputs of a few distinct values, as ``(the distinct outputs, how often each occurs in each
    half)`` (the outcome unions' table): each event is evaluated on the distinct outputs and their counts summed."""
    ndim = halves[0].ndim
    if ndim > 2:
        return []
    specs = []
    for feature, thresholds in _features(anchors, None if ndim == 1 else halves[0].shape[1]):
        t = np.asarray(thresholds)

        def counts(v: NDArray, t: NDArray = t) -> NDArray:
            """``>=`` counts at each threshold, then ``<=`` counts."""
            return np.array([np.count_nonzero(v >= a) for a in t] + [np.count_nonzero(v <= a) for a in t])

        # a Column, or the Identity of scalar outputs (their store holds them as column 0)
        j = feature.index if isinstance(feature, Column) else 0 if isinstance(feature, Identity) else None
        if outcomes is not None:
            v = feature(outcomes[0])                       # integers: each row's value whatever array holds it
            holds = [v >= x for x in t] + [v <= x for x in t]
            a0, a1, b0, b1 = (np.array([int(c[m].sum()) for m in holds]) for c in outcomes[1])
            a = [a0, a1]
        elif sorted_columns is not None and j is not None and j < MAX_COLUMNS:
            # sorted, NaN as +inf (no NaN left) and finite thresholds: counts are ranks
            a = [np.r_[len(c) - np.searchsorted(c, t, "left"), np.searchsorted(c, t, "right")]
                 for c in sorted_columns(j)]
            b0, b1 = (counts(v) for v in sorted_columns.scoring(j))
        else:
            values = [feature(h) if sorted_columns is None else sorted_columns.feature(feature, h, i)
                      for i, h in enumerate(halves)]      # NaN is +inf there: never <= a finite threshold
            a = [counts(values[0]), counts(values[1])]
            b0, b1 = counts(values[2]), counts(values[3])

        def make(i: int, feature: Feature = feature, t: NDArray = t) -> IntervalEvent:
            a = float(t[i % len(t)])
            return IntervalEvent(feature, a, math.inf) if i < len(t) else IntervalEvent(feature, -math.inf, a)

        specs.append((a[0], a[1], lambda i, b0=b0, b1=b1: (int(b0[i]), int(b1[i])), make,
                      f"{feature.name}:anchored", ANCHORED))
    return specs


@dataclass(frozen=True)
class ClippedSum:
    """``Σ_j w_j · clip(o_j, low_j, high_j)`` over the output columns ``columns``: the privacy loss of Laplace noise
    of one scale added to each coordinate, up to an affine map.

    For ``o_j = a_j + Lap(b)`` under one input and ``a'_j + Lap(b)`` under the other (``a_j < a'_j``), the log
    density ratio of coordinate ``j`` is ``(|o_j − a'_j| − |o_j − a_j|) / b = (a_j + a'_j − 2·clip(o_j, a_j,
    a'_j)) / b``: linear in the clipped coordinate, constant beyond both answers.  Summed over independent
    coordinates, the loss's level sets -- the best events (Neyman--Pearson) -- are the threshold events of this
    feature with ``w_j = sign(a'_j − a_j)``: joint events in every coordinate at once, which no single coordinate,
    the plain sum or a linear score of the raw coordinates has (each is linear where the loss saturates).  The
    weights and the clipping come from the inputs only (:func:`clipped_sum`: a data-independent feature) or from the
    medians of the search's selection half (:func:`median_clipped_sum`: fitted as the search's learned scores are);
    its thresholds are chosen by the search like any feature's.  NaN counts as +inf (as in :class:`Column`), clipped
    to the high bound; in a difference, +inf minus a number is +inf and a number minus +inf is −inf, each then
    clipped, and +inf minus +inf makes the row's value +inf.  Computed column by column, from a contiguous copy of
    each used column (the search's own copies of its halves' columns when it has them: :meth:`on_columns`)."""

    columns: tuple[int, ...]
    low: tuple[float, ...]
    high: tuple[float, ...]
    weights: tuple[float, ...]
    #: clip the first differences ``o_j − o_{j−1}`` (``o_{−1} = 0``) instead of the coordinates: the loss of noisy
    #: answers released as their running sums (:func:`clipped_sum`)
    differences: bool = False
    #: where the clipping bounds come from: ``"inputs"`` (:func:`clipped_sum`) or ``"medians"``
    #: (:func:`median_clipped_sum`)
    anchor: str = "inputs"

    @property
    def name(self) -> str:
        return f"clipped-sum({'Δout' if self.differences else 'out'}{', medians' if self.anchor == 'medians' else ''})"

    def __call__(self, out: NDArray) -> NDArray[np.float64]:
        rows = np.asarray(out)
        rows = rows.reshape(len(rows), -1)
        need = sorted(set(self.columns) | ({j - 1 for j in self.columns if j > 0} if self.differences else set()))
        cols = finite_view(transposed_copy(rows, np.float64, columns=need))      # NaN as +inf, as the search's
        where = {j: i for i, j in enumerate(need)}
        return self._from_columns(lambda j: cols[where[j]], len(rows))

    def on_columns(self, out: NDArray, cols: NDArray) -> NDArray[np.float64]:
        """The feature of the float rows ``out`` from ``cols``, their first columns as float64 rows with NaN as +inf
        (:meth:`dpverify.statistical.columns.SortedColumns.by_column`, shared by a search's features): the same
        values as calling it on ``out``, without a copy of its own."""
        if max(self.columns) >= cols.shape[0] or cols.shape[1] != len(out):
            return self(out)
        return self._from_columns(lambda j: cols[j], len(out))

    def _from_columns(self, col: Callable[[int], NDArray], n: int) -> NDArray[np.float64]:
        """The sum from ``col(j)``, column ``j`` as a contiguous float64 row (NaN as +inf), one column at a time and
        in the order of :attr:`columns` (the same arithmetic whichever copy holds the columns)."""
        s, t = np.zeros(n), np.empty(n)
        for j, low, high, w in zip(self.columns, self.low, self.high, self.weights):
            if self.differences and j > 0:
                with np.errstate(invalid="ignore"):             # inf − inf is NaN: the row's value is +inf
                    np.subtract(col(j), col(j - 1), out=t)
            else:
                t[:] = col(j)
            np.maximum(t, low, out=t)                          # NaN stays NaN, ±inf goes to a bound
            np.minimum(t, high, out=t)
            t *= w
            s += t
        s[np.isnan(s)] = np.inf
        return s


def clipped_sum(anchors: Anchors | None, row_shape: tuple[int, ...], differences: bool = False) -> ClippedSum | None:
    """The :class:`ClippedSum` of a pair with ``anchors`` whose output rows have shape ``row_shape``: each column
    against the inputs' one answer (scalar inputs), or column ``j`` against coordinate ``j`` of each (inputs as long
    as the row), over the columns whose two answers differ (at most :data:`MAX_COLUMNS`, those they differ most in).
    ``None`` without anchors, for rows that are not one-dimensional, and when the anchors match no column or a single
    column (its thresholds are the column's own).

    ``differences``: the view of the first differences ``o_j − o_{j−1}`` against coordinate ``j`` of each input
    (inputs as long as the row, rows of two columns or more): the loss when the mechanism releases the running sums
    of ``x + noise``, whose differences are the noisy answers.  One differing coordinate suffices there (its
    difference is no column of the output), unless it is the first (``o_0`` is a column).  ``None`` otherwise."""
    if anchors is None or len(row_shape) != 1:
        return None
    a0, a1 = anchors
    width = row_shape[0]
    if len(a0) == 1 and not differences:
        lo, hi = min(a0[0], a1[0]), max(a0[0], a1[0])
        cols = list(range(min(width, MAX_COLUMNS)))
        low, high, weights = [lo] * len(cols), [hi] * len(cols), [1.0] * len(cols)
    elif len(a0) == width:
        cols = _differing(anchors)
        low = [min(a0[j], a1[j]) for j in cols]
        high = [max(a0[j], a1[j]) for j in cols]
        weights = [1.0 if a1[j] > a0[j] else -1.0 for j in cols]
    else:
        return None
    if not _enough(cols, differences):
        return None
    return ClippedSum(tuple(cols), tuple(float(x) for x in low), tuple(float(x) for x in high),
                      tuple(weights), differences)


def _enough(columns: list[int], differences: bool) -> bool:
    """Whether a clipped sum over ``columns`` is a feature of its own: two columns or more, or, of the differences,
    one that is not the first (a lone column, or ``o_0``, is a column of the output: its events are the search's)."""
    return len(columns) >= 2 or (differences and len(columns) == 1 and columns != [0])


def median_clipped_sum(sel0: NDArray, sel1: NDArray, differences: bool = False,
                       inputs: ClippedSum | None = None, single: bool = False,
                       rows: int = MEDIAN_ROWS, sorted_column: SortedColumn | None = None,
                       first_is_column: bool = True) -> ClippedSum | None:
    """The :class:`ClippedSum` at the columns' medians: column ``j`` (or, with ``differences``, the difference
    ``o_j − o_{j−1}``) clipped to its medians under the two inputs, estimated on the first ``rows``
    (:data:`MEDIAN_ROWS`) rows of the selection-half outputs ``sel0`` and ``sel1`` (``(n, k)``), signed by their
    order, over the first :data:`MAX_COLUMNS` columns whose two medians differ.  For noise symmetric about each
    answer (Laplace, geometric) the medians estimate the answers, so this is :func:`clipped_sum` for answers the
    inputs do not give: any function of any input (a histogram of a dataset, running sums of the inputs).  Fitted on
    the selection half only, so the scoring half and the test stay independent of it, as for the search's other
    fitted scores.

    ``None`` for outputs that are not numeric rows of two columns or more, and unless two columns or more *move* (of
    the differences, one that is not the first suffices): medians apart by more than :data:`MOVE_Z` standard errors
    (each median's taken as the column's interquartile range over the square root of the rows: about its standard
    error for Laplace and normal noise) and by at least :data:`MOVE_SHARE` of the largest move.  Medians within
    their noise of each other make a feature of noise; one moving column alone makes that column again (its events
    are the search's own; ``single``: one other than the first suffices, for columns that are no column of the
    output, such as the innovations of :mod:`dpverify.statistical.innovations`; any one when not ``first_is_column``:
    independent components, none of which is a column).  ``None`` too when the medians agree
    with ``inputs`` (:func:`clipped_sum` of the same view): each within :data:`SAME_Z` standard errors of its input's
    answer (a column ``inputs`` leaves out: the two medians within that of each other), where the inputs are the
    answers and their view is the exact one.

    ``sorted_column(j)``: column ``j`` of both halves, sorted (the search's
    :class:`~dpverify.statistical.columns.SortedColumns`).  With it, and columns that are finite throughout, the
    medians of the coordinates come from *all* the rows of the halves at no cost: moves of a few hundredths of the
    noise's scale (a small ε spread over many coordinates) are lost in the noise of the medians of ``rows`` rows."""
    if (sel0.ndim != 2 or sel0.shape[1] < 2 or min(len(sel0), len(sel1)) < 2 or sel0.dtype.kind not in "biuf"
            or sel1.dtype.kind not in "biuf"):
        return None
    k = min(sel0.shape[1], MAX_COLUMNS)

    def quartiles(out: NDArray, i: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Each column's median and its standard error (NaN for a column that is NaN throughout)."""
        if sorted_column is not None and not differences:
            columns = [sorted_column(j)[i] for j in range(k)]
            if all(len(c) and np.isfinite(c[0]) and np.isfinite(c[-1]) for c in columns):
                q = np.array([sorted_quantiles(c, (0.25, 0.5, 0.75)) for c in columns]).T
                return q[1], (q[2] - q[0]) / math.sqrt(len(columns[0]))
        # the first ``rows`` rows (i.i.d.: a random sample of the half), one contiguous row per column
        v = np.array(out[:rows, :k].T, dtype=np.float64)
        if differences:
            with np.errstate(invalid="ignore"):
                v[1:] = np.diff(v, axis=0)
        n = v.shape[1]
        if not np.isnan(v).any():
            # order statistics by partitions in place: the median, then each half's own middle (numpy's partition
            # at three positions at once takes about 7 times as long as at one)
            h = n // 2
            v.partition(h, axis=1)
            low, high = v[:, :h], v[:, h + 1:]
            low.partition(h // 2, axis=1)
            high.partition(high.shape[1] // 2, axis=1)
            q = np.stack([low[:, h // 2], v[:, h], high[:, high.shape[1] // 2]])
        else:
            q = np.full((3, k), np.nan)
            some = ~np.isnan(v).all(axis=1)                     # a column that is NaN throughout has no median
            q[:, some] = np.nanquantile(v[some], (0.25, 0.5, 0.75), axis=1)
        return q[1], (q[2] - q[0]) / math.sqrt(n)

    (m0, e0), (m1, e1) = quartiles(sel0, 0), quartiles(sel1, 1)
    with np.errstate(invalid="ignore"):
        gap = np.abs(m1 - m0)
        cols = [int(j) for j in np.flatnonzero(np.isfinite(gap) & (gap > 0))]
        if not cols:
            return None
        moving = [j for j in cols
                  if gap[j] > MOVE_Z * math.hypot(e0[j], e1[j]) and gap[j] >= MOVE_SHARE * gap[cols].max()]
    if (not (_enough(moving, differences) or (single and moving and (moving != [0] or not first_is_column)))
            or _agree(inputs, m0, e0, m1, e1)):
        return None
    return ClippedSum(tuple(cols), tuple(float(min(m0[j], m1[j])) for j in cols),
                      tuple(float(max(m0[j], m1[j])) for j in cols),
                      tuple(1.0 if m1[j] > m0[j] else -1.0 for j in cols), differences, "medians")


#: standard errors by which two medians must differ for :func:`median_clipped_sum` to count the column as moving
MOVE_Z = 3.0
#: the least share of the largest move by which :func:`median_clipped_sum` counts a column as moving
MOVE_SHARE = 0.25
#: standard errors within which :func:`median_clipped_sum`'s medians agree with the inputs' answers (at 5, a column of
#: the inputs' own answers is out by chance once in about 1.7 million)
SAME_Z = 5.0


def _agree(inputs: ClippedSum | None, m0: NDArray, e0: NDArray, m1: NDArray, e1: NDArray) -> bool:
    """Whether the medians ``m0``, ``m1`` (standard errors ``e0``, ``e1``) agree with the answers of ``inputs``
    (:func:`median_clipped_sum`)."""
    if inputs is None:
        return False
    answers = {j: (lo, hi) if w > 0 else (hi, lo) for j, lo, hi, w in zip(inputs.columns, inputs.low, inputs.high,
                                                                             inputs.weights)}
    with np.errstate(invalid="ignore"):
        for j in np.flatnonzero(np.isfinite(m0) & np.isfinite(m1)):
            a = answers.get(int(j))
            if (abs(m1[j] - m0[j]) > SAME_Z * math.hypot(e0[j], e1[j]) if a is None else
                    abs(m0[j] - a[0]) > SAME_Z * e0[j] or abs(m1[j] - a[1]) > SAME_Z * e1[j]):
                return False
    return True


def clipped_sums(anchors: Anchors | None, sel0: NDArray, sel1: NDArray,
                 sorted_column: SortedColumn | None = None) -> list[ClippedSum]:
    """Every :class:`ClippedSum` of a vector search with selection-half outputs ``sel0``, ``sel1``: at the inputs'
    answers (:func:`clipped_sum`) and at the columns' medians (:func:`median_clipped_sum`, unless they agree with the
    inputs' answers: the same events again, at the cost of a feature), each on the coordinates and on their first
    differences, those that exist.  ``sorted_column``: as for :func:`median_clipped_sum`."""
    found: list[ClippedSum] = []
    for differences in (False, True):
        fixed = clipped_sum(anchors, sel0.shape[1:], differences)
        found += [f for f in (fixed, median_clipped_sum(sel0, sel1, differences, fixed, sorted_column=sorted_column))
                  if f is not None]
    return found
