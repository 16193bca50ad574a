"""Deeper tails: nested threshold events tested beside a finalist, for losses that keep growing into the tail.

Where the privacy loss is bounded (Laplace noise around moved answers) its level sets are reached by events of
fair probability, and the search sample sees them well.  Where it grows without bound along a feature -- noise
whose scale depends on the input, a Gaussian release audited against a pure ε, a value released beside a
decision (SVT, noisy max) -- the best event at ``n_test`` outputs per input lies as deep in the tail as the test's
counts allow: an event of probability ``~1e-4`` at a million test outputs, seen a dozen times in a search half of
10⁵.  Chosen on such counts, the search's projection (widened by the search estimate's own noise, and corrected
for the many candidates) rightly prefers a shallower threshold, and the audit certifies what that threshold gives
-- in tests of noise scales moved in many coordinates, two thirds of the bound the optimal event would give.

So a finalist ``{f >= t}`` (or ``{f <= t}``) is tested together with up to :data:`STEPS` nested events ``{f >= t_k}``
deeper in the same tail, at thresholds where the search sample (both halves pooled) holds a third, a ninth, ... of
the finalist's numerator count, each kept only when its projected bound on those pooled counts exceeds the
finalist's (the loss grows there) and its log likelihood ratio exceeds the finalist's by :data:`GROWTH_Z` standard
errors.  The finalist and its deeper events split the finalist's share of the test's level (a weighted Bonferroni
correction: :func:`expand`), so the bound stays valid whichever of them the fresh samples favour, and the other
finalists' levels are untouched; where the loss saturates, no deeper event is kept and nothing is paid."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from dpverify.statistical.candidates import Candidate
from dpverify.statistical.events import IntervalEvent
from dpverify.statistical.features import Feature
from dpverify.statistical.projection import ProjectedBound

__all__ = ["deeper_events", "with_deeper", "expand", "grows", "STEPS", "SHRINK", "MIN_COUNT", "GROWTH_Z",
           "PER_DIRECTION"]

#: how many nested events at most are added beside one finalist
STEPS = 2
#: each nested event holds about this share of the previous one's numerator count in the search sample
SHRINK = 1.0 / 3.0
#: least numerator count of a nested event in the pooled search sample (fewer: its projection is noise)
MIN_COUNT = 12
#: standard errors by which a nested event's log likelihood ratio must exceed the finalist's on the search sample
#: (:func:`grows`): where the loss saturates no deeper event should cost the test's correction a share of its level
GROWTH_Z = 1.0
#: candidates per direction of one pair (of largest scoring-half score) whose deeper events are looked for
PER_DIRECTION = 3


def deeper_events(event: IntervalEvent, num: NDArray, den: NDArray, project: ProjectedBound) -> list[IntervalEvent]:
    """One-sided events deeper in the tail of ``event`` (module docstring), from the feature's values ``num`` and
    ``den`` on the pooled search sample of the numerator's and the denominator's input; ``project`` projects counts
    of that pooled sample to the test.  The tail is the one ``event`` reaches into (an interval's: the one beyond its
    end away from the pooled median).  For a one-sided event, :data:`STEPS` nested events of a third, a ninth, ...
    of its numerator count; for an interval, first the whole tail holding its numerator count, then a third of it."""
    lo, hi = event.low, event.high
    if lo == -math.inf and hi == math.inf:
        return []
    if event.outside:
        return _deeper_outside(event, np.asarray(num, np.float64), np.asarray(den, np.float64), project)
    v_num, v_den = np.asarray(num, np.float64), np.asarray(den, np.float64)
    v_num, v_den = v_num[~np.isnan(v_num)], v_den[~np.isnan(v_den)]       # NaN is in no interval
    if not len(v_num) or not len(v_den):
        return []
    one_sided = (lo == -math.inf) != (hi == math.inf)
    k_num = int(np.count_nonzero((v_num >= lo) & (v_num <= hi)))
    steps = range(1 if one_sided else 0, STEPS + (1 if one_sided else 0))
    ranks = [r for r in (int(k_num * SHRINK ** step) for step in steps) if r >= MIN_COUNT]
    if not ranks:
        return []
    if hi == math.inf:
        sign = 1.0
    elif lo == -math.inf:
        sign = -1.0
    else:                                      # an interval: the tail beyond its end away from the pooled median
        pooled = np.concatenate([v_num, v_den])
        median = float(np.partition(pooled, len(pooled) // 2)[len(pooled) // 2])
        if lo >= median:
            sign = 1.0
        elif hi <= median:
            sign = -1.0
        else:
            return []
    k_den = int(np.count_nonzero((v_den >= lo) & (v_den <= hi)))
    best = float(project(np.array([k_num]), np.array([k_den]))[0])
    # in the upper tail's orientation the nested events are {sign·f >= t}; the r-th largest values lie in the tail
    # from the event's inner end (it holds the event's k_num values and any beyond), which alone is sorted
    s_num, s_den = sign * v_num, sign * v_den
    inner = sign * (lo if sign > 0 else hi)
    top = np.sort(s_num[s_num >= inner])[::-1]
    found: list[IntervalEvent] = []
    last = math.inf
    for r in ranks:
        t = float(top[r - 1])
        kn = int(np.count_nonzero(s_num >= t))
        if kn >= last:                                           # a mass at the threshold: nothing deeper
            break
        last = kn
        kd = int(np.count_nonzero(s_den >= t))
        bound = float(project(np.array([kn]), np.array([kd]))[0])
        if bound > best and grows(k_num, k_den, kn, kd):
            found.append(IntervalEvent(event.feature, t, math.inf) if sign > 0
                         else IntervalEvent(event.feature, -math.inf, -t))
            best = bound
    return found


def grows(k_num: int, k_den: int, kn: int, kd: int) -> bool:
    """Whether the log likelihood ratio of a nested event seen ``kn`` / ``kd`` times exceeds that of the event
    seen ``k_num`` / ``k_den`` times by :data:`GROWTH_Z` standard errors of the difference (for a subset, the
    variance of the difference of the logs of two counts is about ``1/kn − 1/k_num``, and likewise for the
    denominator)."""
    a, b, c, d = (float(v) + 0.5 for v in (k_num, k_den, kn, kd))
    diff = math.log(c / d) - math.log(a / b)
    var = max(1.0 / c - 1.0 / a, 0.0) + max(1.0 / d - 1.0 / b, 0.0)
    return diff > GROWTH_Z * math.sqrt(var)


def _deeper_outside(event: IntervalEvent, num: NDArray, den: NDArray,
                    project: ProjectedBound) -> list[IntervalEvent]:
    """:func:`deeper_events` of two-sided tails ``{f < low or f > high}``: both tails shrunk together, each to a
    third, a ninth, ... of its numerator count (NaN, as +inf for these events, stays in the upper tail)."""
    low, high = event.low, event.high
    # only the values in the two tails matter (the nested tails lie inside them), each tail sorted on its own
    tails = []
    for v in (num, den):
        v = np.where(np.isnan(v), np.inf, v)
        tails.append((np.sort(v[v < low]), np.sort(v[v > high])))
    (num_low, num_high), _ = tails
    if len(num_low) + len(num_high) < MIN_COUNT:
        return []

    def counts(lo: float, hi: float) -> tuple[int, int]:
        return tuple(int(np.searchsorted(a, lo, "left") + len(b) - np.searchsorted(b, hi, "right")) for a, b in tails)

    below, above = len(num_low), len(num_high)
    k0 = (below + above, len(tails[1][0]) + len(tails[1][1]))
    best = float(project(np.array([k0[0]]), np.array([k0[1]]))[0])
    found: list[IntervalEvent] = []
    last = below + above
    for step in range(1, STEPS + 1):
        a, b = int(below * SHRINK ** step), int(above * SHRINK ** step)
        if a + b < MIN_COUNT:
            break
        # the a-th smallest and b-th largest values lie inside the new tails: strict bounds just beyond them
        lo = float(np.nextafter(num_low[a - 1], np.inf)) if a else -math.inf
        hi = float(np.nextafter(num_high[len(num_high) - b], -np.inf)) if b else math.inf
        kn, kd = counts(lo, hi)
        if kn >= last:
            break
        last = kn
        bound = float(project(np.array([kn]), np.array([kd]))[0])
        if bound > best and grows(k0[0], k0[1], kn, kd):
            found.append(IntervalEvent(event.feature, lo, hi, outside=True))
            best = bound
    return found


def with_deeper(candidates: list[Candidate], halves: tuple[NDArray, NDArray, NDArray, NDArray], n_test: int, z: float,
                delta: float, values: Callable[[Feature, int], NDArray] | None = None) -> list[Candidate]:
    """``candidates`` of one pair's search (scored on ``halves``), those of largest score among the threshold and
    interval events of each direction (:data:`PER_DIRECTION`) with their :func:`deeper_events` attached.
    ``values(feature, i)``: the feature on half ``i`` (the search's shared column copies); computed here without."""
    n = len(halves[0]) + len(halves[2])
    project = ProjectedBound(n, n_test, z, delta, z_search=0.0)
    pick: set[int] = set()
    for direction in (0, 1):
        tails = [i for i, c in enumerate(candidates) if c.direction == direction and _in_a_tail(c.event)]
        pick.update(sorted(tails, key=lambda i: -candidates[i].score)[:PER_DIRECTION])
    out = list(candidates)
    for i in sorted(pick):
        c = candidates[i]
        f = c.event.feature
        v = [f(h) if values is None else values(f, k) for k, h in enumerate(halves)]
        num = np.concatenate([v[c.direction], v[c.direction + 2]])
        den = np.concatenate([v[1 - c.direction], v[3 - c.direction]])
        deeper = deeper_events(c.event, num, den, project)
        if deeper:
            out[i] = dataclasses.replace(c, deeper=tuple(deeper))
    return out


def _in_a_tail(event: object) -> bool:
    return isinstance(event, IntervalEvent) and not (event.low == -math.inf and event.high == math.inf)


def expand(chosen: Sequence[tuple[int, Candidate]]) -> list[tuple[int, Candidate]]:
    """The finalists and, after each, its deeper events as finalists of their own (same pair, direction and counts
    of the search: the test's plan sizes them alike), a finalist with ``D`` deeper events and each of these tested at
    ``1/(D + 1)`` of the finalist's level (``share``): a weighted Bonferroni correction, valid as the plain one is
    (the levels of all tests still add up to the audit's), in which a finalist's deeper events cost only that
    finalist -- never the others, such as a rare point mass certified from a few dozen outputs, whose bound moves
    most with its level."""
    out: list[tuple[int, Candidate]] = []
    for i, c in chosen:
        share = c.share / (1 + len(c.deeper))
        out.append((i, dataclasses.replace(c, deeper=(), share=share)))
        out.extend((i, dataclasses.replace(c, event=e, deeper=(), share=share)) for e in c.deeper)
    return out
