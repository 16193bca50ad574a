"""Phase 2 of an audit: how the finalists' fresh counts become ε lower bounds (:func:`dpverify.audit`'s
``ratio_test``).

* ``"clopper-pearson"`` (the default): ``samples`` outputs on each input of a finalist's pair, and
  ``ln((CP_low(k_num) − δ) / CP_high(k_den))`` with each Clopper--Pearson bound at half the test's level
  (:func:`dpverify.statistical.stats.epsilon_lower_bound`).
* ``"auto"``: per pair, where the scoring-half frequencies of its finalists project a larger bound
  (:func:`dpverify.statistical.stats.projected_bounds`, search data only, so the choice costs no level), the two
  inputs get *Poisson-sized* samples instead -- sizes drawn from the pair's own generator, of mean
  :func:`dpverify.statistical.stats.poissonized_size` ``(samples)`` -- and the bound is the conditional test of the
  ratio (:func:`dpverify.statistical.stats.poisson_ratio_lower`) at the test's whole level.  A size above
  ``samples`` (probability about 3e-5) leaves that pair untested rather than draw more than the budget: choosing
  another test after seeing the sizes would cost the conditional test its exactness.

The test's level is the audit's ``alpha`` over the number of finalists (Bonferroni); ``level`` below is half of it,
the level of each Clopper--Pearson bound.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from dpverify.neighbours import Pair
from dpverify.statistical.result import EventTest
from dpverify.statistical.search import Candidate
from dpverify.statistical.stats import (clopper_pearson_lower, clopper_pearson_upper, epsilon_lower_bound,
                                        poisson_ratio_lower, poissonized_size, projected_bounds)

__all__ = ["RATIO_TESTS", "SIZE_KEY", "TestPlan", "plan_tests", "event_tests"]

#: values of ``audit(ratio_test=...)``
RATIO_TESTS = ("clopper-pearson", "auto")
#: ``spawn_key`` prefix of the generator of a pair's Poisson sample sizes
SIZE_KEY = 8


class TestPlan:
    """Outputs to draw on each input of each finalist pair (``sizes``), the pairs tested by the conditional Poisson
    test (``poisson``) and those left untested because a Poisson size exceeded the budget (``oversized``)."""

    __test__ = False      # not a pytest class

    def __init__(self) -> None:
        self.sizes: dict[int, tuple[int, int]] = {}
        self.poisson: set[int] = set()
        self.oversized: set[int] = set()


def _prefers_poisson(cs: Sequence[Candidate], n_score: int, n: int, level: float, delta: float) -> bool:
    p = np.array([c.count_num / (c.n_score or n_score) for c in cs])
    q = np.array([c.count_den / (c.n_score or n_score) for c in cs])
    cp, poisson = projected_bounds(p, q, n, 2 * level, delta)
    return bool(np.max(poisson) > np.max(cp))


def _poisson_sizes(entropy: int, pair_index: int, n: int) -> tuple[int, int]:
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy, spawn_key=(SIZE_KEY, pair_index))))
    m = poissonized_size(n)
    return int(rng.poisson(m)), int(rng.poisson(m))


def plan_tests(by_pair: dict[int, list[Candidate]], ratio_test: str, samples: int, n_score: int, level: float,
               delta: float, entropy: int) -> TestPlan:
    """The sample sizes of phase 2 for the finalists ``by_pair`` (pair index -> its finalists), chosen on their
    scoring-half counts (``n_score`` outputs per input unless a candidate says otherwise)."""
    plan = TestPlan()
    for i, cs in by_pair.items():
        plan.sizes[i] = (samples, samples)
        if ratio_test == "auto" and _prefers_poisson(cs, n_score, samples, level, delta):
            plan.sizes[i] = _poisson_sizes(entropy, i, samples)
            plan.poisson.add(i)
            if max(plan.sizes[i]) > samples:
                plan.oversized.add(i)
                plan.sizes[i] = (0, 0)
    return plan


def event_tests(by_pair: dict[int, list[Candidate]], counts: dict[tuple[int, int], Any], plan: TestPlan,
                pairs: Sequence[Pair], level: float, delta: float) -> list[EventTest]:
    """One :class:`EventTest` per finalist from its counts on the two inputs (``counts[(pair, side)][j]`` for the
    pair's ``j``-th finalist), at ``level`` times the finalist's ``share`` (a finalist's deeper events share its
    level: :func:`dpverify.statistical.deeper.expand`)."""
    tests: list[EventTest] = []
    for i, cs in by_pair.items():
        method = "poisson" if i in plan.poisson else "clopper-pearson"
        for j, c in enumerate(cs):
            if i in plan.oversized:
                tests.append(EventTest(i, pairs[i].label, c.direction, c.event.description, 0, 0, 0, 0.0, 1.0,
                                       -math.inf, c.score, 0, method))
                continue
            k0, k1 = int(counts[(i, 0)][j]), int(counts[(i, 1)][j])
            k_num, k_den = (k0, k1) if c.direction == 0 else (k1, k0)
            n_num, n_den = plan.sizes[i] if c.direction == 0 else plan.sizes[i][::-1]
            at = level * c.share
            p_low = float(clopper_pearson_lower(k_num, n_num, at)) if n_num else 0.0
            p_high = float(clopper_pearson_upper(k_den, n_den, at)) if n_den else 1.0
            if i in plan.poisson:
                lb = float(poisson_ratio_lower(k_num, k_den, 2 * at))
            else:
                lb = float(epsilon_lower_bound(p_low, p_high, delta))
            tests.append(EventTest(i, pairs[i].label, c.direction, c.event.description, k_num, k_den, n_num, p_low,
                                   p_high, lb, c.score, n_den, method))
    return tests
