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
for Laplace noise of one scale on every coordinate, the privacy loss itself up to an affine map.

The inputs anchor the search when both are numbers (one answer, every column of the output compared with it) or
one-dimensional numeric arrays as long as the output row (coordinate ``j`` of the output against coordinate ``j`` of
each input, e.g. a histogram)."""


from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
from numpy.typing import NDArray

from dpverify.statistical.columns import MAX_COLUMNS, SortedColumns
from dpverify.statistical.events import IntervalEvent
from dpverify.statistical.features import Column, Feature, Identity, Statistic

__all__ = ["Anchors", "input_anchors", "anchored_specs", "ANCHORED", "ClippedSum", "clipped_sum"]

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
    weights and the clipping come from the inputs only, so the feature is data-independent; its thresholds are
    chosen by the search like any feature's.  NaN in a used column makes the row's value +inf (as :class:`Column`
    does)."""

    columns: tuple[int, ...]
    low: tuple[float, ...]
    high: tuple[float, ...]
    weights: tuple[float, ...]

    @property
    def name(self) -> str:
        return "clipped-sum(out)"

    def __call__(self, out: NDArray) -> NDArray[np.float64]:
        a = np.asarray(out)
        v = a.reshape(len(a), -1)[:, list(self.columns)].astype(np.float64)     # a fresh array: clipped in place
        nan = np.isnan(v).any(axis=1)
        np.clip(v, np.asarray(self.low), np.asarray(self.high), out=v)
        s = v @ np.asarray(self.weights, dtype=np.float64)
        s[nan] = np.inf
        return s


def clipped_sum(anchors: Anchors | None, row_shape: tuple[int, ...]) -> ClippedSum | None:
    """The :class:`ClippedSum` of a pair with ``anchors`` whose output rows have shape ``row_shape``: each column
    against the inputs' one answer (scalar inputs), or column ``j`` against coordinate ``j`` of each (inputs as long
    as the row), over the columns whose two answers differ (at most :data:`MAX_COLUMNS`, those they differ most in).
    ``None`` without anchors, for rows that are not one-dimensional, and when the anchors match no column or a single
    column (its thresholds are the column's own)."""
    if anchors is None or len(row_shape) != 1:
        return None
    a0, a1 = anchors
    width = row_shape[0]
    if len(a0) == 1:
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
    if len(cols) < 2:
        return None
    return ClippedSum(tuple(cols), tuple(float(x) for x in low), tuple(float(x) for x in high),
                      tuple(weights))
