"""Candidates of the event search and how finalists are ranked among them.

:class:`CandidateSearch` collects the events each family proposes, chosen on the selection half of the search sample
and scored on the scoring half (:class:`dpverify.statistical.projection.ProjectedBound`);
:func:`rank_candidates` corrects the scores for the optimism of choosing the best of many.
:mod:`dpverify.statistical.search` runs the families; :mod:`dpverify.statistical.search_phase` picks the finalists.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from collections.abc import Sequence
from typing import Callable

import numpy as np
from numpy.typing import NDArray

from dpverify.statistical.cells import block_argmax
from dpverify.statistical.events import Event
from dpverify.statistical.projection import ProjectedBound
from dpverify.statistical.stats import epsilon_lower_bound, wilson_lower, wilson_upper

__all__ = ["MASS_FAMILIES", "Candidate", "CandidateSearch", "rank_candidates"]


#: Families of point masses (an output value, NaN; ``self-atom``: a point mass a feature makes of continuous outputs, a
#: clipped sum where its coordinates saturate): each pair and direction keeps a finalist slot for the best of them
#: (:func:`dpverify.statistical.search_phase.search_phase`: the output's own masses first), and their scoring-half
#: score is the bound projected at their scoring-half frequencies as they are (:meth:`CandidateSearch.projection`).
MASS_FAMILIES = ("atom", "nan", "self-atom")
#: Numerator counts (in the selection half) a *floored* family's extra choices must reach (:meth:`CandidateSearch.
#: families`): besides its best event, the best of those seen at least this many times, for each floor above the best
#: one's count.  Among the thousands of thresholds of a feature whose loss grows into a tail and then saturates (a
#: clipped sum of Laplace coordinates that each moved a little), the projection's one standard error of search noise
#: lets a threshold seen a dozen times against four (a ratio of noise) win over the level set of fair probability
#: that holds the loss (seen 1,200 times against 1,000); the scoring half, independent of the choice, then tells the
#: floors' choices apart.
COUNT_FLOORS = (32, 128, 512, 2048, 8192)


@dataclass(frozen=True)
class Candidate:
    """A searched event for one direction (0: ``x0`` over ``x1``, 1: the reverse).

    ``score`` and the counts come from the *scoring half* of the search sample, which played no part
    in choosing the event.
    """

    event: Event
    direction: int
    score: float
    count_num: int
    count_den: int
    group: str
    family: str = "tail"   # tail | atom | self-atom | outcomes | cells | learned | nan: finalists are chosen per family
    n_score: int | None = None   # size of the scoring half its counts come from (None: the search's)
    deeper: tuple[Event, ...] = ()   # nested events deeper in its tail, tested beside it (dpverify.statistical.deeper)
    share: float = 1.0               # the share of a finalist's test level it is tested at (its deeper events split it)


def _floored(s: NDArray[np.float64], num: NDArray, best: int) -> list[tuple[int, str]]:
    """The floored choices of one family and direction (:data:`COUNT_FLOORS`): for each floor above the numerator
    count of its best event ``best``, the event of largest selection score ``s`` among those whose numerator count
    ``num`` reaches the floor (none where no finite score does), each once, tagged by its floor."""
    out: list[tuple[int, str]] = []
    seen = {best}
    for floor in COUNT_FLOORS:
        if num[best] >= floor:
            continue
        allowed = np.where(num >= floor, s, -np.inf)
        i = int(np.argmax(allowed))
        if not np.isfinite(allowed[i]):
            break
        if i not in seen:
            seen.add(i)
            out.append((i, f"/k{floor}"))
    return out


def rank_candidates(
    candidates: list[Candidate], n_score: int | NDArray, n_test: int, z: float, delta: float
) -> NDArray[np.float64]:
    """Scores for choosing finalists among many candidates, corrected for optimism.

    The largest of ``C`` noisy estimates overstates its event by about ``sqrt(2 ln C)`` standard errors *of the
    estimate* (here ``ln(p_num / p_den)``; ``C`` the number of candidates of its *family*: finalists are chosen per
    family, so a rare atom competes with the other atoms, not with every tail event).  Each of a candidate's two
    scoring-half frequencies is therefore moved to the pessimistic end of its Wilson interval at ``sqrt(ln C)``
    (``sqrt(2 ln C) / sqrt(2)``: where both counts are large, together about ``sqrt(2 ln C)`` standard errors of the
    log ratio; where a count is small, the Wilson interval stays inside [0, 1] and skews as the binomial does, where
    a normal interval would push a rare numerator below 0), and the candidate scored by the bound the test would
    give on those at ``n_test`` outputs.
    Events seen often keep their score; rare ones that look good by chance do not.  ``n_score``: the
    scoring-half size, or one per candidate.  (Moving each frequency by the whole ``sqrt(2 ln C)`` standard errors,
    as before, overstated the correction by up to sqrt(2) and lost the events of larger ε and smaller probability
    that many vector outputs' best events are.)
    """
    if not candidates:
        return np.zeros(0)
    fams = [c.family for c in candidates]
    per = {f: fams.count(f) for f in set(fams)}
    z_c = np.array([math.sqrt(math.log(max(per[f], 2))) for f in fams])
    ns = np.broadcast_to(np.asarray(n_score, dtype=np.float64), (len(candidates),))
    k_num = np.array([c.count_num for c in candidates], dtype=np.float64)
    k_den = np.array([c.count_den for c in candidates], dtype=np.float64)
    lo = wilson_lower(wilson_lower(k_num / ns, ns, z_c), n_test, z)
    hi = wilson_upper(wilson_upper(k_den / ns, ns, z_c), n_test, z)
    return epsilon_lower_bound(np.maximum(lo, 0.0), hi, delta)


@dataclass
class CandidateSearch:
    """Selection half ``a`` and scoring half ``b`` of the search sample, and the candidates found.

    An event family adds candidates with :meth:`family` (one event per index, chosen on the selection-half counts,
    scored on the scoring half), or through :func:`feature_events` for a scalar feature of its own.  The scoring-half
    scores of :meth:`family`'s events are computed together, in one vectorised call, by :meth:`finish` (a search
    calls thousands of families on small samples, where one scoring call per event was most of its time)."""

    select: ProjectedBound
    score: ProjectedBound
    out: list[Candidate | None] = field(default_factory=list)
    scored: int = 0
    _pending: list[tuple[int, Event, int, int, int, str, str]] = field(default_factory=list)
    _mass: dict[str, ProjectedBound] = field(default_factory=dict)

    def family(self, a0: NDArray, a1: NDArray, count_b: Callable[[int], tuple[int, int]], make,
               group: str, family: str = "tail") -> None:
        """One family of events: choose on the selection-half counts ``a0``/``a1`` (one per event),
        then count the chosen event on the scoring half (``count_b(i)`` -> counts under ``x0``, ``x1``).

        Only the chosen event is counted on the scoring half, so that half needs no sorting.
        """
        self.families([(a0, a1, count_b, make, group, family)])

    def families(self, specs: Sequence[tuple[NDArray, NDArray, Callable[[int], tuple[int, int]], Callable[[int], Event],
                                             str, str]]) -> None:
        """Several families at once, ``(a0, a1, count_b, make, group, family)`` each as the arguments of :meth:`family`
        (one selection-half scoring call for all of them and both directions); a seventh element ``True`` makes the
        family *floored*: it proposes :func:`_floored`'s choices besides its best event (:data:`COUNT_FLOORS`)."""
        specs = [sp for sp in specs if len(sp[0])]
        if not specs:
            return
        sizes = [len(sp[0]) for sp in specs]
        self.scored += 2 * sum(sizes)
        # direction 0 is x0 over x1 (a0 / a1), direction 1 the reverse; every family's block in turn
        num = np.concatenate([a for sp in specs for a in (sp[0], sp[1])])
        den = np.concatenate([a for sp in specs for a in (sp[1], sp[0])])
        s = self.select(num, den)
        mass = np.repeat([sp[5] in MASS_FAMILIES for sp in specs], 2 * np.array(sizes))
        if mass.any():                  # point masses at their frequencies as they are (:meth:`projection`)
            s[mass] = self.projection(MASS_FAMILIES[0], "select")(num[mass], den[mass])
        best, ok = block_argmax(s, np.repeat(sizes, 2))
        floored = [len(sp) > 6 and sp[6] for sp in specs]
        starts = np.concatenate([[0], np.cumsum(np.repeat(sizes, 2))]) if any(floored) else None
        for j, spec in enumerate(specs):
            count_b, make, group, family = spec[2:6]
            counted: dict[int, tuple[int, int]] = {}
            for direction in (0, 1):
                if not ok[2 * j + direction]:
                    continue
                top = int(best[2 * j + direction])
                chosen = [(top, "")]
                if floored[j]:
                    block = slice(starts[2 * j + direction], starts[2 * j + direction + 1])
                    chosen += _floored(s[block], num[block], top)
                for i, tag in chosen:
                    if i not in counted:
                        counted[i] = count_b(i)
                    k0, k1 = counted[i]
                    bn, bd = (k0, k1) if direction == 0 else (k1, k0)
                    self._pending.append((len(self.out), make(i), direction, int(bn), int(bd),
                                          f"{group}/d{direction}{tag}", family))
                    self.out.append(None)

    def projection(self, family: str, half: str = "score") -> ProjectedBound:
        """The projection of ``half`` (``"select"``: :attr:`select`, ``"score"``: :attr:`score`) for a candidate of
        ``family``; for point masses (:data:`MASS_FAMILIES`) the same at the frequencies as they are
        (``z_search = 0``).  A point mass seen a few times under one input and never under the other is structure,
        not luck; the normal-approximation margin (one standard error, ``sqrt(k)`` of a count ``k``) drove counts
        up to 4 on a half of a tenth of the test to no bound at all, although the test would see ten times as many:
        the hard suite's leaks of probability 1e-4 and 1e-5 (about 10 sightings per half) were then missed at 5-7 %
        of run seeds.  The finalists' ranking still corrects every candidate for optimism
        (:func:`rank_candidates`)."""
        base = self.select if half == "select" else self.score
        if family not in MASS_FAMILIES:
            return base
        if half not in self._mass:
            self._mass[half] = dataclasses.replace(base, z_search=0.0)
        return self._mass[half]

    def finish(self) -> list[Candidate]:
        """The candidates found, in the order they were added, :meth:`family`'s now scored on the scoring half (those
        whose score is not finite dropped)."""
        if self._pending:
            pending, self._pending = self._pending, []
            sb = np.empty(len(pending))
            mass = np.array([p[6] in MASS_FAMILIES for p in pending])
            for where, scorer in ((~mass, self.score), (mass, self.projection(MASS_FAMILIES[0]))):
                if where.any():
                    sb[where] = scorer(np.array([p[3] for p, w in zip(pending, where) if w]),
                                       np.array([p[4] for p, w in zip(pending, where) if w]))
            for (at, event, direction, bn, bd, group, fam), score in zip(pending, sb):
                if np.isfinite(score):
                    self.out[at] = Candidate(event, direction, float(score), bn, bd, group, fam)
        self.out = [c for c in self.out if c is not None]
        return self.out
