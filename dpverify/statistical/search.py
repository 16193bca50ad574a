"""The event search: every family proposes its best events on a search sample.

Families (docs/architecture.md, "adding an event family"; docs/auditor.md):

* **outcome unions** for discrete outputs (integer codes, scalars or rows, and float outputs with
  few distinct values): outcomes sorted by their estimated likelihood ratio, and the prefix unions of
  that order (the Neyman--Pearson sets of the empirical distributions) -- StatDP's categorical
  events;
* **item events** for integer vector outputs (:mod:`dpverify.statistical.items`): the entries as labels (a
  top-k's items), "some entry is in V" and "out[j] in V", unless every distinct row is frequent;
* **threshold and interval events** ``{f(o) <= t}``, ``{f(o) >= t}``, ``{a <= f(o) <= b}`` and single
  point masses ``{f(o) = a}`` on a scalar *feature* ``f``: the output itself, each coordinate of a
  vector, its sum / max / min / argmax, its clipped sums (:mod:`.anchors`: at the inputs' answers or the medians);
* a **learned event** for vector outputs: a logistic-regression score threshold (DP-Sniper,
  Bichsel et al. S&P 2021), fitted on the search sample; the product density-ratio score
  (:mod:`.cells`), the clipped sums of the innovations (:mod:`.innovations`) and of the independent components
  (:mod:`.independent`) and the dispersion scores of noise
  scales that move with the input (:mod:`.dispersion`), each a feature of the same events;
* optionally (``float_bits``) **floating-point events** on the position of the lowest set bit of a
  double (Mironov 2012's attack on textbook floating-point Laplace);
* ``{o contains NaN}`` when NaN outputs are admitted as outcomes (``nan_policy="outcome"``).

The best threshold candidates of each direction get nested events deeper in their tails attached
(:mod:`.deeper`), which the audit tests beside them when they become finalists.

The search sample is split in two halves.  Each family's best event is *chosen* on the first half and
*scored* on the second, so that the ranking of candidates across families, pairs and directions is not
fooled by events that look good by chance (with thousands of outcomes or atoms, the best-looking one
on the data that chose it is mostly luck).  The score is a *projected* epsilon lower bound: the
Wilson bounds the final test would give at ``n_test`` samples if the frequencies were exact, widened
by one standard error of the search estimate."""


from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass
from collections.abc import Sequence
from typing import Callable

import numpy as np
from numpy.typing import NDArray

from dpverify.statistical.anchors import Anchors, ClippedSum, anchored_specs, clipped_sums
from dpverify.statistical.deeper import with_deeper
from dpverify.statistical.dispersion import DispersionScore, fit_dispersion
from dpverify.statistical.independent import independent_sum
from dpverify.statistical.innovations import InnovationSum, innovation_sum, whitening
from dpverify.statistical.markov import MarkovScore, fit_markov
from dpverify.statistical.atoms import HashSetEvent, repeated_hashes
from dpverify.statistical.cells import (CellSetEvent, ProductRatioScore, bin_counts, fit_cells_and_codes,
                                       fit_product_ratio, nan_start, sorted_distinct, tail_ranks)
from dpverify.statistical.candidates import Candidate, CandidateSearch, rank_candidates
from dpverify.statistical.learned import fit_linear_score
from dpverify.statistical.items import item_events, unions_suffice
from dpverify.statistical.projection import ProjectedBound
from dpverify.statistical.unions import prefix_unions
from dpverify.execution.sampling import single_threaded_libraries
from dpverify.statistical.columns import MAX_COLUMNS, SortedColumns
from dpverify.statistical.features import Column, Feature, Identity, LinearScore, LowBit, Statistic, sorted_values
from dpverify.statistical.events import Event, IntervalEvent, NanEvent, RowSetEvent, ValueSetEvent, unique_rows

__all__ = ["Candidate", "CandidateSearch", "SearchInput", "EventFamily", "feature_events",
           "search_events", "rank_candidates", "atom_candidates", "monotone_log_ratio"]

THRESHOLD_GRID = 2000
INTERVAL_GRID = 80
#: Features with point masses of their own on continuous outputs: a clipped sum's values where several coordinates
#: saturate at once, a cell score's constant value on each cell, a likelihood or Markov score's of power 1 beyond the
#: two centres of its moved coordinates.  Their atoms are family ``self-atom``, which takes the
#: point-mass slot (:func:`dpverify.statistical.search_phase.search_phase`) only when the output has no rare point
#: mass of its own (a rare leak's marker, which the coordinates, the sum, the max and the min have as atoms): a clipped
#: sum's atom where all coordinates saturate, seen 8 times against 0 in a 100,000-row scoring half, had taken it from
#: a leaked input seen 7 against 0 (bound 0.71, the continuous outputs' corner, where the leak gives 2.5).  Without a
#: leak the saturated corner is the Laplace vector's event of largest loss, and keeps the slot.
SELF_ATOMS = (ClippedSum, InnovationSum, ProductRatioScore, DispersionScore, MarkovScore)
#: vector outputs with at most this many distinct rows in the probe are searched by outcome unions alone
UNIONS_SUFFICE = 64


# ----------------------------------------------------------------------------------------- search
def _grid(values_sorted: NDArray[np.float64], size: int, uniq: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """At most ``size`` thresholds: every distinct value, or ``size`` evenly spaced order statistics.

    ``uniq`` (the distinct values of ``values_sorted``) saves a pass when the caller has it.
    """
    if uniq is None:
        uniq = sorted_distinct(values_sorted)[0]
    if len(uniq) <= size:
        return uniq
    idx = np.linspace(0, len(values_sorted) - 1, size).round().astype(np.int64)
    return sorted_distinct(values_sorted[idx])[0]


def _tail_grids(values_sorted: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The lower and the upper tail thresholds of :func:`tail_ranks` (for two-sided tail events): order statistics
    at geometrically growing ranks from each end, reaching level sets whose probabilities are far below the
    spacing of the quantile grids."""
    n = len(values_sorted)
    tail = tail_ranks(n)
    return sorted_distinct(values_sorted[tail])[0], sorted_distinct(values_sorted[n - 1 - tail][::-1])[0]


@functools.lru_cache(maxsize=64)
def _pairs_above(m: int) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """``np.triu_indices(m, k=1)``, cached and read-only (every feature's interval grid has the same few sizes)."""
    ia, ib = np.triu_indices(m, k=1)
    ia.flags.writeable = ib.flags.writeable = False
    return ia, ib


class _Ranks:
    """The ranks of one sorted half (NaNs last) at the points of a sorted grid: how many values lie at or below each
    point (``right``) and below it (``left``), from one binary search each; the counts of every threshold, interval,
    two-sided tail and point mass whose ends are grid points are differences of these, gathered instead of searched
    again for each of the thousands of intervals of a grid."""

    def __init__(self, values_sorted: NDArray, grid: NDArray) -> None:
        self.left = np.searchsorted(values_sorted, grid, "left")
        self.right = np.searchsorted(values_sorted, grid, "right")
        self.finite = nan_start(values_sorted)        # NaNs sort last and are never >= a threshold

    def le(self) -> NDArray:
        return self.right

    def ge(self) -> NDArray:
        return self.finite - self.left

    def between(self, lo: NDArray[np.intp], hi: NDArray[np.intp]) -> NDArray:
        """Counts of ``grid[lo] <= v <= grid[hi]`` (grid positions)."""
        return self.right[hi] - self.left[lo]


def _scalar_feature(feature: Feature, halves: tuple[NDArray, NDArray, NDArray, NDArray], search: CandidateSearch,
                    sorted_columns: SortedColumns | None = None) -> None:
    """Threshold, interval and point-mass events on one scalar feature (:func:`_scalar_features`)."""
    _scalar_features([feature], halves, search, sorted_columns)


def _scalar_features(features: Sequence[Feature], halves: tuple[NDArray, NDArray, NDArray, NDArray],
                     search: CandidateSearch, sorted_columns: SortedColumns | None = None) -> None:
    """The events of :func:`_feature_specs` on every feature, in one :meth:`CandidateSearch.families` call: one
    scoring call for all of them (a vector search has some 26 features, and on its small samples at the first
    checkpoints of an anytime audit each call's fixed cost counted)."""
    search.families([spec for f in features for spec in _feature_specs(f, halves, sorted_columns)])


def _feature_specs(feature: Feature, halves: tuple[NDArray, NDArray, NDArray, NDArray],
                   sorted_columns: SortedColumns | None = None) -> list[tuple]:
    """Threshold, interval and point-mass events on one scalar feature, as specs of :meth:`CandidateSearch.families`.

    Grids of thresholds are quantiles of the *continuous part* of the selection half plus its point
    masses (values seen twice or more): a large point mass (e.g. a 0 standing for "not released")
    would otherwise absorb most quantiles and leave the tails without thresholds.  ``sorted_columns``: the search's
    sorted columns, used for a :class:`Column` feature.
    """
    # a Column, or the Identity of scalar outputs (their store holds them as column 0)
    index = feature.index if isinstance(feature, Column) else 0 if isinstance(feature, Identity) else None
    shared = sorted_columns is not None and index is not None
    if shared:
        a0, a1 = sorted_columns(index)
        b0, b1 = sorted_columns.scoring(index)                # scoring half: unsorted
    else:
        # (values of a feature of the caller's own are sorted as a copy: it may keep them)
        own = type(feature).__module__.startswith("dpverify.")
        v = [feature(h) if sorted_columns is None else sorted_columns.feature(feature, h, i)
             for i, h in enumerate(halves)]
        a0, a1 = (sorted_values(x, h) if own else np.sort(x) for x, h in zip(v[:2], halves[:2]))
        b0, b1 = v[2:]

    def counter(test):
        return lambda i: (int(np.count_nonzero(test(b0, i))), int(np.count_nonzero(test(b1, i))))

    # two sorted runs: the stable sort (timsort / radix) merges them in linear time
    if shared:
        pooled = sorted_columns.pooled(index)
    else:
        pooled = np.concatenate([a0, a1])
        pooled.sort(kind="stable")                            # in place: the concatenation is a fresh array
    pooled = pooled[: nan_start(pooled)]                      # NaN is no threshold
    uniq, counts = sorted_distinct(pooled)
    is_atom = counts >= 2
    atoms = uniq[is_atom]
    if 0 < len(atoms) < len(uniq):
        continuous = pooled[np.repeat(~is_atom, counts)]
        single = uniq[~is_atom]
        grid = np.union1d(_grid(continuous, THRESHOLD_GRID, single), atoms[:THRESHOLD_GRID])
        g = np.union1d(_grid(continuous, INTERVAL_GRID, single), atoms[:INTERVAL_GRID // 4])
    else:
        grid, g = _grid(pooled, THRESHOLD_GRID, uniq), _grid(pooled, INTERVAL_GRID, uniq)
    name = feature.name
    learned = (LinearScore, ProductRatioScore, DispersionScore, MarkovScore)
    fam = "learned" if isinstance(feature, learned) else "tail"
    r0, r1 = _Ranks(a0, grid), _Ranks(a1, grid)
    specs = [(r0.le(), r1.le(), counter(lambda v, i: v <= grid[i]),
              lambda i: IntervalEvent(feature, -math.inf, float(grid[i])), f"{name}:le", fam, True),
             (r0.ge(), r1.ge(), counter(lambda v, i: v >= grid[i]),
              lambda i: IntervalEvent(feature, float(grid[i]), math.inf), f"{name}:ge", fam, True)]
    ia, ib = _pairs_above(len(g))
    if len(ia):
        lo, hi = g[ia], g[ib]
        q0, q1 = _Ranks(a0, g), _Ranks(a1, g)
        specs.append((q0.between(ia, ib), q1.between(ia, ib), counter(lambda v, i: (v >= lo[i]) & (v <= hi[i])),
                      lambda i: IntervalEvent(feature, float(lo[i]), float(hi[i])), f"{name}:interval", fam))
    specs.extend(_two_sided_tails(feature, pooled, a0, a1, counter, fam))
    if 0 < len(atoms) <= 10_000:
        at = np.minimum(np.searchsorted(grid, atoms), len(grid) - 1)
        if np.array_equal(grid[at], atoms):     # every point mass is a grid point (the grid holds the first 2000)
            k0, k1 = r0.between(at, at), r1.between(at, at)
        else:
            each = np.arange(len(atoms))
            k0, k1 = (_Ranks(a, atoms).between(each, each) for a in (a0, a1))
        # point masses of a mostly continuous feature get the point-mass slot; the values of a discrete one (argmax)
        # do not; the atoms a feature makes itself out of continuous outputs (SELF_ATOMS) yield it to the output's own
        mass = "self-atom" if isinstance(feature, SELF_ATOMS) else "atom"
        specs.append((k0, k1, counter(lambda v, i: v == atoms[i]),
                      lambda i: ValueSetEvent(feature, (float(atoms[i]),)), f"{name}:atom",
                      mass if counts[is_atom].sum() < len(pooled) // 2 else fam))
    return specs


def _two_sided_tails(feature: Feature, pooled: NDArray, a0: NDArray, a1: NDArray, counter: Callable,
                     fam: str) -> list[tuple]:
    """Events ``{feature < low or feature > high}`` with both ends in the tails (:func:`_tail_grids`): the level
    sets of a loss that grows in both directions (two laws of different spread around one centre), which a
    one-sided tail catches with half its probability.  Returns the family as a spec of
    :meth:`CandidateSearch.families` (none when the tails are empty)."""
    lows, highs = _tail_grids(pooled)
    if len(pooled) < 4 or len(lows) == 0 or len(highs) == 0:
        return []
    il = np.repeat(np.arange(len(lows)), len(highs))          # every (low, high), lows outer
    ih = np.tile(np.arange(len(highs)), len(lows))
    keep = lows[il] < highs[ih]
    il, ih = il[keep], ih[keep]
    if len(il) == 0:
        return []
    lo, hi = lows[il], highs[ih]

    def outside(a: NDArray) -> NDArray:
        below, above = np.searchsorted(a, lows, "left"), np.searchsorted(a, highs, "right")
        return nan_start(a) - (above[ih] - below[il])

    return [(outside(a0), outside(a1), counter(lambda v, i: (v < lo[i]) | (v > hi[i])),
             lambda i: IntervalEvent(feature, float(lo[i]), float(hi[i]), outside=True), f"{feature.name}:outside", fam)]


def _outcome_unions(halves: tuple[NDArray, NDArray, NDArray, NDArray],
                    search: CandidateSearch) -> tuple[NDArray, list[NDArray]]:
    """StatDP's categorical events: prefix unions of the distinct outputs
    (:func:`dpverify.statistical.unions.prefix_unions`).  Returns the
    distinct outputs and how often each occurs in each half."""
    sizes = [len(h) for h in halves]
    rows = np.concatenate(halves).reshape(sum(sizes), -1)
    first, inverse = unique_rows(rows)
    bounds = np.cumsum([0] + sizes)
    outcomes = rows[first]
    shape, dtype = halves[0].shape[1:], str(halves[0].dtype)
    counts = [np.bincount(inverse[bounds[j]: bounds[j + 1]], minlength=len(first)) for j in range(4)]
    prefix_unions(counts, len(first), search,
                  lambda idx: RowSetEvent(outcomes[idx].reshape((len(idx),) + shape), dtype), "outcomes",
                  "outcomes")
    return outcomes.reshape((len(first),) + shape), counts


def _cell_unions(halves: tuple[NDArray, NDArray, NDArray, NDArray], search: CandidateSearch,
                 scalar: SortedColumns | None = None) -> None:
    """Conditional cells (:class:`dpverify.statistical.cells.CellPartition`, fitted on the selection half) and their prefix
    unions: the estimated level sets of the privacy loss for scalar and mixed discrete/continuous outputs.
    ``scalar``: the column store of scalar outputs (the values as column 0): the partition's quantiles and the
    selection halves' cell counts come from its sorts instead of sorts and binary searches of their own."""
    fitted = fit_cells_and_codes(halves[0], halves[1], None if scalar is None else scalar.pooled(0))
    if fitted is None or fitted[0].n_cells < 2:
        return
    part, sel_codes = fitted
    m = part.n_cells
    if sel_codes is None:                                 # fitted on the store's sorts: bins of the value itself
        counts = [bin_counts(a, np.asarray(part.edges[0]), m) for a in scalar(0)]
    else:                                                 # the fit's own cells of the selection halves
        counts = [np.bincount(c, minlength=m) for c in (sel_codes[:len(halves[0])], sel_codes[len(halves[0]):])]
    if len(part.edges) == 1:          # one group: bins of the feature, counted on its values sorted (a binary search
        edges = np.asarray(part.edges[0])  # per edge instead of one per value: about 3x as fast at a million values)
        counts += [bin_counts(np.sort(part.feature(h)), edges, m) for h in halves[2:]]
    else:
        counts += [np.bincount(part.cells(h), minlength=m) for h in halves[2:]]

    def make(idx: NDArray) -> Event:
        return CellSetEvent(part, tuple(int(c) for c in idx))

    prefix_unions(counts, m, search, make, "cells", "cells", honest=True)
    offsets = part.offsets()
    prefix_unions(counts, m, search, make, "cells-monotone", "cells", honest=True,
                  log_ratio=lambda an, ad: monotone_log_ratio(an, ad, offsets))


def monotone_log_ratio(an: NDArray, ad: NDArray, offsets: NDArray) -> NDArray[np.float64]:
    """The cells' log likelihood ratios ``ln((an + 0.5)/(ad + 0.5))`` smoothed by a weighted isotonic regression
    along the continuous value within each group (cells ``offsets[k]..offsets[k+1]-1``), increasing or decreasing,
    whichever fits better (weights ``an + ad + 1``).

    The privacy loss of a mixed output is often monotone in its continuous part within each discrete value (SVT
    releasing its noisy value, noisy max releasing the maximum, a Laplace tail): its level sets are then "discrete
    part = j and value ≤ t_j" (or ``≥``).  With hundreds of cells the raw ratios of small tail cells are mostly
    noise and their prefix unions start with lucky cells; pooling adjacent cells (Robertson, Wright & Dykstra's
    pool-adjacent-violators, :func:`scipy.optimize.isotonic_regression`: the same fit as scikit-learn's, without its
    per-call parameter validation, which took 13 times the fit on the few hundred cells of a search) orders whole
    runs of cells instead."""
    from scipy.optimize import isotonic_regression

    y = np.log((an + 0.5) / (ad + 0.5))
    w = (an + ad + 1.0).astype(np.float64)
    out = np.empty_like(y)
    for k in range(len(offsets) - 1):
        sl = slice(int(offsets[k]), int(offsets[k + 1]))
        if sl.stop - sl.start < 2:
            out[sl] = y[sl]
            continue
        fits = [isotonic_regression(y[sl], weights=w[sl], increasing=inc).x for inc in (True, False)]
        err = [float(np.sum(w[sl] * (y[sl] - f) ** 2)) for f in fits]
        out[sl] = fits[int(np.argmin(err))]
    return out


def atom_candidates(h0: NDArray[np.uint64], h1: NDArray[np.uint64], n_test: int, z: float, delta: float,
                    examples: Callable[[NDArray[np.uint64]], tuple[str, ...]]) -> list[Candidate]:
    """Candidates of the atom sweep (:mod:`dpverify.statistical.atoms`): prefix unions of the point masses repeated in the
    sweep's first half (row hashes ``h0`` / ``h1`` under the two inputs), ordered on that half and cut on the
    second.  ``examples(hashes)`` gives readable rows for the description."""
    h = len(h0) // 2
    halves = (h0[:h], h1[:h], h0[h:], h1[h:])
    atoms = repeated_hashes(halves[0], halves[1])
    if len(atoms) == 0:
        return []
    search = CandidateSearch(ProjectedBound(h, n_test, z, delta), ProjectedBound(len(h0) - h, n_test, z, delta))

    def code(v: NDArray[np.uint64]) -> NDArray[np.intp]:
        idx = np.minimum(np.searchsorted(atoms, v), len(atoms) - 1)
        return np.where(atoms[idx] == v, idx, len(atoms))           # the last code: not an atom

    counts = [np.bincount(code(x), minlength=len(atoms) + 1) for x in halves]

    def make(idx: NDArray) -> Event:
        chosen = atoms[idx[idx < len(atoms)]]
        return HashSetEvent(tuple(int(v) for v in chosen), examples(chosen))

    prefix_unions(counts, len(atoms) + 1, search, make, "sweep", "atom", honest=True)
    return [dataclasses.replace(c, n_score=len(h0) - h) for c in search.finish()
            if isinstance(c.event, HashSetEvent) and c.event.hashes]


@dataclass(frozen=True)
class SearchInput:
    """What an event family sees: the four halves ``(sel0, sel1, score0, score1)`` of the search sample (outputs on
    ``x0`` and ``x1``, selection and scoring halves), the output ``kind`` detected (``"discrete"``, ``"scalar"``,
    ``"vector"``) and the pair's own generator ``rng`` (seeded: the same search wherever it runs)."""

    halves: tuple[NDArray, NDArray, NDArray, NDArray]
    kind: str
    rng: np.random.Generator


#: An event family: ``family(data, search)`` adds its candidates to ``search`` (:meth:`CandidateSearch.family`,
#: :func:`feature_events`).  It must be picklable (a module-level function or an instance of a module-level class):
#: pairs are searched on the worker pool.  Pass families to :func:`dpverify.audit` as ``event_families``.
EventFamily = Callable[[SearchInput, CandidateSearch], None]


@dataclass(frozen=True)
class SearchSettings:
    """What one pair's event search needs besides its outputs and generator (picklable: searches run on workers):
    the test samples its candidates are ranked for, the normal quantile, δ, and the options of
    :func:`search_events`."""

    n_test: int
    z: float
    delta: float
    float_bits: bool = False
    nan_outcome: bool = False
    families: tuple[EventFamily, ...] = ()
    anchors: Anchors | None = None
    #: attach deeper tails to the best threshold candidates (:mod:`dpverify.statistical.deeper`): the fixed-sample
    #: audit tests them; the anytime audit's bets do not use them
    deeper: bool = True

    def run(self, o0: NDArray, o1: NDArray, rng: np.random.Generator) -> tuple[list[Candidate], int, str]:
        """:func:`search_events` with these settings, the libraries' thread pools on one thread."""
        with single_threaded_libraries():
            return search_events(o0, o1, n_test=self.n_test, z=self.z, delta=self.delta, float_bits=self.float_bits,
                                 nan_outcome=self.nan_outcome, rng=rng, families=self.families, anchors=self.anchors,
                                 deeper=self.deeper)


def feature_events(feature: Feature, data: SearchInput, search: CandidateSearch) -> None:
    """The threshold, interval, two-sided tail and point-mass events of a scalar ``feature`` (an object with
    ``name`` and ``__call__(outputs) -> values``; :mod:`dpverify.statistical.features`), as the built-in
    features get them."""
    _scalar_feature(feature, data.halves, search)


def _distinct_rows(rows: NDArray, limit: int) -> int:
    """The number of distinct rows of ``rows``, or ``limit + 1`` when it exceeds ``limit``: a column with more than
    ``limit`` distinct values answers without coding whole rows (most columns of a continuous output do)."""
    flat = rows.reshape(len(rows), -1)
    for j in range(flat.shape[1]):
        if len(np.unique(flat[:, j])) > limit:     # np.unique merges -0.0 / 0.0 and NaNs: never more than bitwise
            return limit + 1
    return min(len(unique_rows(rows)[0]), limit + 1)


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
    families: Sequence[EventFamily] = (),
    anchors: Anchors | None = None,
    deeper: bool = True,
) -> tuple[list[Candidate], int, str]:
    """Search events telling ``o0`` (outputs on ``x0``) from ``o1``, in both directions.

    The outputs (i.i.d.) are split in a selection half and a scoring half.  Returns the best
    candidate of every family and direction with its scoring-half score, the number of events
    considered and the output kind detected (``"discrete"``, ``"scalar"``, ``"vector"``).  ``families``: event
    families of the caller's own (:data:`EventFamily`), run after the built-in ones on the same halves; their
    candidates are ranked with everyone else's (family ``"tail"`` unless they name another).  ``anchors``: the
    pair's query answers (:func:`dpverify.statistical.anchors.input_anchors`), whose threshold events join the search.
    ``deeper``: attach :func:`~dpverify.statistical.deeper.with_deeper`'s nested tail events to the best threshold
    candidates (tested beside a finalist by :func:`dpverify.audit`).
    """
    n = len(o0)
    h = n // 2
    halves = (o0[:h], o1[:h], o0[h:], o1[h:])
    search = CandidateSearch(ProjectedBound(h, n_test, z, delta), ProjectedBound(n - h, n_test, z, delta))
    discrete_dtype = o0.dtype.kind in "biu"
    probe = min(h, 20_000)
    limit = max(2, (2 * probe) // 20)
    n_unique = _distinct_rows(np.concatenate([o0[:probe], o1[:probe]]), limit)
    few_outcomes = n_unique <= limit
    # (outputs of more than two dimensions: the product-ratio fit flattens rows, a Column feature does not; scalar
    # outputs are one column, shared by the cells' fit and the Identity feature)
    sorted_columns = (SortedColumns(*halves) if o0.ndim == 2 else
                      SortedColumns(*(x.reshape(-1, 1) for x in halves)) if o0.ndim == 1 else None)
    table = _outcome_unions(halves, search) if few_outcomes else None   # (distinct outputs, counts per half)
    if not few_outcomes:
        _cell_unions(halves, search, sorted_columns if o0.ndim == 1 else None)
    kind = "discrete" if discrete_dtype or few_outcomes else ("scalar" if o0.ndim == 1 else "vector")
    if table is None or not unions_suffice(table[1][:2]):
        item_events(halves, search)
    if few_outcomes and o0.ndim > 1 and n_unique <= UNIONS_SUFFICE:
        # every event on these outputs is a union of their few outcomes, and the prefix unions in likelihood-ratio
        # order (estimated on many counts per outcome) already hold the best ones: features add nothing but time
        features: list[Feature] = []
    elif o0.ndim == 1:
        features = [Identity()]
        if float_bits and o0.dtype.kind == "f":
            features.append(LowBit(None))
    else:
        k = o0.shape[1]
        features = [Column(j) for j in range(min(k, MAX_COLUMNS))]
        features += [Statistic("sum"), Statistic("max"), Statistic("min"), Statistic("argmax")]
        if float_bits and o0.dtype.kind == "f":
            features += [LowBit(j) for j in range(min(k, MAX_COLUMNS))]
        if n_unique > 2:
            learned = fit_linear_score(halves[0], halves[1], rng)
            if learned is not None:
                features.append(learned)
            ratio = fit_product_ratio(halves[0], halves[1], sorted_columns,
                                      None if sorted_columns is None else sorted_columns.pooled)
            if ratio is not None:
                features.append(ratio)
        features += clipped_sums(anchors, halves[0], halves[1], sorted_columns)
        white = whitening(halves[0], halves[1])
        for unmixed in (innovation_sum(halves[0], halves[1], white), independent_sum(halves[0], halves[1], white)):
            if unmixed is not None:
                features.append(unmixed)
        features += fit_dispersion(halves[0], halves[1], sorted_columns,
                                   None if sorted_columns is None else sorted_columns.pooled)
        features += fit_markov(halves[0], halves[1], sorted_columns)
    _scalar_features(features, halves, search, sorted_columns)
    if anchors is not None:
        search.families(anchored_specs(halves, anchors, sorted_columns, table if discrete_dtype else None))
    if nan_outcome and o0.dtype.kind == "f":
        ev = NanEvent()
        k = [np.array([int(ev.contains(x).sum())]) for x in halves]
        search.family(k[0], k[1], lambda i: (int(k[2][0]), int(k[3][0])), lambda i: ev, "nan", "nan")
    if families:
        data = SearchInput(halves, kind, rng)
        for fam in families:
            fam(data, search)
    found = search.finish()
    if deeper:
        values = None if sorted_columns is None else (lambda f, i: sorted_columns.feature(f, halves[i], i))
        found = with_deeper(found, halves, n_test, z, delta, values)
    return found, search.scored, kind
