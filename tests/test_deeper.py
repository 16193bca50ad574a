"""Deeper tails beside a finalist (dpverify/statistical/deeper.py), the weighted Bonferroni levels they are tested at
and the shared feature values of their counts (dpverify/statistical/events.py: count_events).

Deterministic: fixed seeds."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpverify.statistical.candidates import Candidate
from dpverify.statistical.deeper import deeper_events, expand, grows, with_deeper
from dpverify.statistical.events import IntervalEvent, NanEvent, count_events
from dpverify.statistical.features import Column, Identity
from dpverify.statistical.projection import ProjectedBound
from dpverify.statistical.ratio_tests import TestPlan, event_tests
from dpverify.neighbours import as_pairs

Z = 2.39                      # the normal quantile of an audit's three finalists at alpha 0.05
N_TEST = 1_000_000


def _project(n: int) -> ProjectedBound:
    return ProjectedBound(n, N_TEST, Z, 0.0, z_search=0.0)


def test_a_loss_that_grows_gets_nested_events_deeper_in_its_tail() -> None:
    # scales 1 and 1.3 around one centre: the loss grows with |o|, so deeper upper tails are ever more lopsided
    rng = np.random.default_rng(0)
    wide, narrow = rng.laplace(0, 1.3, 200_000), rng.laplace(0, 1.0, 200_000)
    event = IntervalEvent(Identity(), 3.0, math.inf)
    found = deeper_events(event, wide, narrow, _project(200_000))
    assert 1 <= len(found) <= 2
    assert all(e.high == math.inf and e.low > 3.0 for e in found)
    assert [e.low for e in found] == sorted(e.low for e in found)
    # the lower tail likewise, oriented the other way
    low = deeper_events(IntervalEvent(Identity(), -math.inf, -3.0), wide, narrow, _project(200_000))
    assert low and all(e.low == -math.inf and e.high < -3.0 for e in low)


def test_an_interval_in_a_tail_is_extended_to_the_whole_tail() -> None:
    rng = np.random.default_rng(1)
    wide, narrow = rng.laplace(0, 1.3, 200_000), rng.laplace(0, 1.0, 200_000)
    found = deeper_events(IntervalEvent(Identity(), 2.0, 4.0), wide, narrow, _project(200_000))
    assert found and all(e.high == math.inf for e in found)
    # an interval around the median reaches into no tail
    assert deeper_events(IntervalEvent(Identity(), -0.5, 0.5), wide, narrow, _project(200_000)) == []


def test_a_saturating_loss_gets_no_deeper_event() -> None:
    # Laplace noise around moved answers: beyond both answers the ratio is constant, e^(1/b)
    rng = np.random.default_rng(2)
    up, down = rng.laplace(1.0, 1.0, 200_000), rng.laplace(0.0, 1.0, 200_000)
    assert deeper_events(IntervalEvent(Identity(), 1.5, math.inf), up, down, _project(200_000)) == []


def test_two_sided_tails_shrink_together() -> None:
    rng = np.random.default_rng(3)
    wide, narrow = rng.normal(0, 1.4, 200_000), rng.normal(0, 1.0, 200_000)
    event = IntervalEvent(Identity(), -2.5, 2.5, outside=True)
    found = deeper_events(event, wide, narrow, _project(200_000))
    assert found and all(e.outside and e.low < -2.5 and e.high > 2.5 for e in found)
    inner = event.on_values(wide).sum()
    assert all(e.on_values(wide).sum() < inner for e in found)


def test_grows_compares_nested_log_ratios_by_their_standard_error() -> None:
    assert grows(1000, 500, 400, 100)                  # ln 2 -> ln 4 with hundreds of counts
    assert not grows(1000, 500, 330, 165)              # the same ratio deeper
    assert not grows(40, 20, 13, 5)                    # too few counts to tell


def test_expand_splits_a_finalists_level_with_its_deeper_events() -> None:
    a, b = IntervalEvent(Column(0), 1.0, math.inf), IntervalEvent(Column(0), 2.0, math.inf)
    c = IntervalEvent(Column(0), 3.0, math.inf)
    with_two = Candidate(a, 0, 1.0, 10, 2, "g", deeper=(b, c))
    plain = Candidate(NanEvent(), 1, 0.5, 3, 0, "nan", "nan")
    out = expand([(0, with_two), (1, plain)])
    assert [(i, x.event) for i, x in out] == [(0, a), (0, b), (0, c), (1, plain.event)]
    assert [x.share for _, x in out] == pytest.approx([1 / 3, 1 / 3, 1 / 3, 1.0])
    assert all(x.deeper == () for _, x in out)


def test_a_finalists_share_sets_its_test_level() -> None:
    ev = IntervalEvent(Identity(), 1.0, math.inf)
    full, third = Candidate(ev, 0, 1.0, 10, 2, "g"), Candidate(ev, 0, 1.0, 10, 2, "g", share=1 / 3)
    plan = TestPlan()
    plan.sizes[0] = (1000, 1000)
    counts = {(0, 0): [300, 300], (0, 1): [100, 100]}
    tests = event_tests({0: [full, third]}, counts, plan, as_pairs([(0.0, 1.0)]), 0.05 / 6, 0.0)
    assert tests[0].epsilon_lower_bound > tests[1].epsilon_lower_bound > 0


def test_count_events_computes_a_shared_feature_once() -> None:
    calls = []

    class Counted:
        name = "counted"

        def __call__(self, out):
            calls.append(len(out))
            return np.asarray(out, dtype=np.float64)

    f = Counted()
    events = [IntervalEvent(f, 0.0, math.inf), IntervalEvent(f, 1.0, math.inf),
              IntervalEvent(f, -1.0, 1.0, outside=True), IntervalEvent(Identity(), 0.5, math.inf)]
    out = np.random.default_rng(4).normal(size=1000)
    got = count_events(events, out)
    assert len(calls) == 1
    assert list(got) == [int(e.contains(out).sum()) for e in events]


def test_with_deeper_attaches_events_to_the_best_tail_candidates() -> None:
    rng = np.random.default_rng(5)
    halves = (rng.laplace(0, 1.3, 100_000), rng.laplace(0, 1.0, 100_000),
              rng.laplace(0, 1.3, 100_000), rng.laplace(0, 1.0, 100_000))
    tail = Candidate(IntervalEvent(Identity(), 3.0, math.inf), 0, 0.4, 2000, 1000, "g")
    nan = Candidate(NanEvent(), 0, 0.1, 1, 0, "nan", "nan")
    out = with_deeper([tail, nan], halves, N_TEST, Z, 0.0)
    assert out[0].deeper and out[1] is nan


def test_audit_of_a_growing_loss_reaches_deeper(monkeypatch) -> None:
    """A noise scale 11 % wider on 8 coordinates (tests/test_dispersion.py's instance): bound 1.007 with the deeper
    tails, 0.906 without (oracle 1.305), at this budget and seed."""
    import dpverify
    import dpverify.statistical.deeper as deeper
    from algorithms.hard.planted import ScaledNoise

    pair = (np.zeros((2, 8)), np.vstack([np.zeros(8), np.full(8, math.log1p(0.11))]))
    kw = dict(samples=1_000_000, search_samples=200_000, seed=0, workers=1)
    deep = dpverify.audit(ScaledNoise(1.0), [pair], 0.3, **kw)
    assert deep.epsilon_lower_bound > 0.95
    assert len(deep.tests) > 3                                  # a finalist and its deeper events
    monkeypatch.setattr(deeper, "GROWTH_Z", math.inf)
    assert dpverify.audit(ScaledNoise(1.0), [pair], 0.3, **kw).epsilon_lower_bound < 0.93


def test_the_search_attaches_deeper_events_only_when_asked() -> None:
    """The fixed-sample audit tests them; the anytime audit's searches (SearchSettings(deeper=False)) skip the work."""
    from dpverify.statistical.search import search_events

    rng = np.random.default_rng(6)
    o0, o1 = rng.laplace(0, 1.3, 200_000), rng.laplace(0, 1.0, 200_000)
    kw = dict(n_test=N_TEST, z=Z, delta=0.0)
    with_them = search_events(o0, o1, rng=np.random.default_rng(7), **kw)[0]
    without = search_events(o0, o1, rng=np.random.default_rng(7), deeper=False, **kw)[0]
    assert any(c.deeper for c in with_them)
    assert not any(c.deeper for c in without)
    assert [c.event for c in with_them] == [c.event for c in without]
