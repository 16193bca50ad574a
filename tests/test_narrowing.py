"""The anytime audit's narrowing to the pairs in contention (dpverify/statistical/narrowing.py): which pairs a
checkpoint drops, when, that dropped pairs are neither drawn nor searched again, that a leaking pair is kept, that the
pairs left are spread over the worker lanes, and that results do not depend on the workers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from algorithms.classic.laplace import Laplace
from dpverify.errors import InputError
from dpverify.execution.sampling import WorkerPool
from dpverify.statistical import narrowing, streams
from dpverify.statistical.anytime import audit_anytime
from dpverify.statistical.betting import Bet
from dpverify.statistical.events import IntervalEvent
from dpverify.statistical.features import Identity
from dpverify.statistical.narrowing import narrows, pairs_to_drop
from dpverify.statistical.search import Candidate
from dpverify.statistical.streams import Found, Streams

DROP = ("seconds", "workers", "library")


def _found(*scores: float) -> Found:
    ev = IntervalEvent(Identity(), 0.0, np.inf)
    return Found([Candidate(ev, 0, s, 10, 5, "g") for s in scores], "real", 100)


def _bet(i: int) -> Bet:
    ev = IntervalEvent(Identity(), 0.0, np.inf)
    return Bet(i, 0, ev, "", 0.1, 0.0, (10, 5, 100), np.zeros(3), np.zeros(3))


def test_pairs_to_drop_keeps_the_finalists_pairs_then_the_best_scores() -> None:
    found = [_found(0.1, 0.3), _found(0.5), _found(), _found(0.2, math.nan), _found(0.5), _found(-1.0)]
    # best scores 0.3, 0.5, -inf, 0.2, 0.5, -1.0: ties by the lower index
    assert pairs_to_drop(found, [], 2, frozenset()) == [0, 2, 3, 5]
    assert pairs_to_drop(found, [_bet(5)], 2, frozenset()) == [0, 2, 3, 4]
    # the finalists' pairs are kept even beyond keep
    assert pairs_to_drop(found, [_bet(5), _bet(2), _bet(3)], 2, frozenset()) == [0, 1, 4]
    # pairs dropped already are not returned again, and do not count towards keep
    assert pairs_to_drop(found, [], 2, frozenset({1, 4})) == [2, 5]
    assert pairs_to_drop(found, [], 10, frozenset()) == []
    with pytest.raises(ValueError, match="keep must be at least 1"):
        pairs_to_drop(found, [], 0, frozenset())


def test_a_checkpoint_narrows_from_a_share_of_the_budget_and_a_least_count() -> None:
    assert not narrows(narrowing.NARROW_FROM - 1, 100_000)
    assert narrows(narrowing.NARROW_FROM, 100_000)
    big = 16 * narrowing.NARROW_FROM
    assert not narrows(narrowing.NARROW_FROM, big * narrowing.NARROW_SHARE)
    assert narrows(big, big * narrowing.NARROW_SHARE)


PASS_PAIRS = [(0.0, 0.5), (1.0, 0.5), (0.0, -0.5), (2.0, 2.5), (3.0, 2.5), (-1.0, -0.5)]


def test_dropped_pairs_are_no_longer_drawn_and_the_default_keeps_four() -> None:
    every = audit_anytime(Laplace(0.5), PASS_PAIRS, 0.5, samples=150_000, seed=1, workers=1, keep_pairs=None)
    kept = audit_anytime(Laplace(0.5), PASS_PAIRS, 0.5, samples=150_000, seed=1, workers=1)
    assert not every.violation and not kept.violation
    assert [r.pairs for r in every.rounds] == [6] * len(every.rounds)
    narrowed_from = next(k for k, r in enumerate(kept.rounds) if r.pairs < 6)
    # round k starts at checkpoint 256 * 2^k: the checkpoint at NARROW_FROM outputs per input drops pairs
    assert 256 * 2 ** narrowed_from == narrowing.NARROW_FROM
    assert all(r.pairs <= narrowing.KEEP_PAIRS + len(PASS_PAIRS) and r.pairs < 6 for r in kept.rounds[narrowed_from:])
    assert kept.rounds[:narrowed_from] == every.rounds[:narrowed_from]
    # outputs drawn: every distinct input's stream to the end without narrowing, fewer with it
    assert every.outputs == every.n_streams * 150_000 > kept.outputs > every.n_streams * narrowing.NARROW_FROM
    with pytest.raises(InputError, match="keep_pairs"):
        audit_anytime(Laplace(0.5), PASS_PAIRS, 0.5, samples=1000, seed=1, workers=1, keep_pairs=0)


def test_the_leaking_pair_is_kept_and_certified(monkeypatch) -> None:
    """One pair of six leaks (Laplace(0.5) at distance 1.4: true ε 0.7 against the claim 0.5, the others 0.1): the
    audit narrows to one pair at 1,024 outputs per input, keeps that one and certifies it."""
    monkeypatch.setattr(narrowing, "NARROW_FROM", 1024)
    monkeypatch.setattr(narrowing, "NARROW_SHARE", 1000)
    pairs = [(0.0, 0.2), (1.0, 1.2), (0.0, -0.2), (2.0, 2.2), (0.0, 1.4), (-1.0, -0.8)]
    r = audit_anytime(Laplace(0.5), pairs, 0.5, samples=400_000, seed=2, workers=1, keep_pairs=1)
    assert r.violation and r.witness is not None and r.witness.test.pair_index == 4
    assert min(x.pairs for x in r.rounds) < len(pairs)


@pytest.mark.parametrize("keep", [1, 3])
def test_narrowed_lanes_give_the_results_of_one_process(monkeypatch, keep: int) -> None:
    """With the lanes moved to two workers before the first search and pairs dropped (and moved between the lanes to
    balance them), the same result as on one process."""
    one = audit_anytime(Laplace(0.5), PASS_PAIRS, 0.5, samples=150_000, seed=3, workers=1, keep_pairs=keep)
    monkeypatch.setattr(streams, "LANE_SECONDS", 0.0)
    with WorkerPool(2) as pool:
        two = audit_anytime(Laplace(0.5), PASS_PAIRS, 0.5, samples=150_000, seed=3, pool=pool, keep_pairs=keep)
        assert pool.lanes_started
    assert {k: v for k, v in one.to_dict().items() if k not in DROP} == \
        {k: v for k, v in two.to_dict().items() if k not in DROP}
    assert min(r.pairs for r in one.rounds) <= max(keep, 1) + 8


def test_the_pairs_left_are_spread_evenly_over_the_lanes() -> None:
    from dpverify.neighbours import as_pairs
    pairs = as_pairs(PASS_PAIRS)
    with WorkerPool(2) as pool:
        s = Streams(Laplace(0.5), pairs, 7, "raise", 1000, pool)
        try:
            for b in range(3):
                s.send(b, 500, {}, False, None)()
            before = [s.outputs(i, 3) for i in range(len(pairs))]
            s._move()
            assert s.where == {i: i % 2 for i in range(6)}
            s.drop([1, 3, 5, 4])               # pairs 0 and 2 left, both on lane 0
            assert sorted(s.where[i] for i in (0, 2)) == [0, 1]
            for i in range(len(pairs)):        # every pair's outputs where it went (the dropped ones kept too)
                got = s.outputs(i, 3)
                assert all(np.array_equal(a, c) for a, c in zip(got, before[i]))
            drawn = s.send(3, 500, {}, False, None)()
            assert [bool(d.signatures) for d in drawn] == [True, False, True, False, False, False]
        finally:
            s.close()


def _suite(tmp_path, keep: str | None) -> "object":
    from dpverify.suites import load_suite
    line = "" if keep is None else f"keep_pairs = {keep}\n"
    pairs = ", ".join(f"[{a}, {b}]" for a, b in PASS_PAIRS)
    (tmp_path / "s.toml").write_text(
        '[suite]\nname = "s"\n\n[[entry]]\nid = "lap"\nkind = "statistical"\n'
        'mechanism = "algorithms.classic.laplace:Laplace"\n'
        f'params = {{ epsilon = 0.5 }}\nclaim = {{ epsilon = 0.5 }}\nexpect = "pass"\npairs = [{pairs}]\n'
        f"quick = {{ samples = 150000, search_samples = 20000 }}\n{line}")
    return load_suite(tmp_path / "s.toml").entries[0]


def test_a_suite_entry_sets_keep_pairs_for_sequential_runs_only(tmp_path) -> None:
    from dpverify.errors import SuiteError
    from dpverify.suites import run_entry

    def drawn(keep: str | None) -> list[int]:
        o = run_entry(_suite(tmp_path, keep), "quick", run_seed=0, workers=1, sequential=True)
        assert o.outcome == "pass" and o.error is None
        return [r["pairs"] for r in o.details["anytime"]["rounds"]]

    assert set(drawn('"all"')) == {6}
    assert drawn("1")[-1] < 6 and drawn("1") != drawn(None)
    assert min(drawn(None)) < 6                                     # the default narrows too
    fixed = run_entry(_suite(tmp_path, "1"), "quick", run_seed=0, workers=1)    # the fixed-sample audit ignores it
    assert fixed.error is None and fixed.outcome == "pass"
    for bad in ("0", '"some"', "1.5"):
        with pytest.raises(SuiteError, match="keep_pairs"):
            _suite(tmp_path, bad)


def test_with_a_remote_executor_dropped_pairs_are_not_sent() -> None:
    from dpverify.execution.sampling import remote_executor

    class Recording:
        """An in-process stand-in for a remote executor: runs the tasks here, counts the batches per pair."""

        def __init__(self) -> None:
            self.batches: dict[int, int] = {}

        def slots(self) -> int:
            return 2

        def unsendable(self, task) -> None:
            return None

        def run(self, tasks, fn):
            for t in tasks:
                if fn.__name__ == "run_batch":
                    self.batches[t.pair_index] = self.batches.get(t.pair_index, 0) + 1
            return [fn(t) for t in tasks]

    one = audit_anytime(Laplace(0.5), PASS_PAIRS, 0.5, samples=150_000, seed=4, workers=1, keep_pairs=1)
    rec = Recording()
    with remote_executor(rec):
        far = audit_anytime(Laplace(0.5), PASS_PAIRS, 0.5, samples=150_000, seed=4, workers=2, keep_pairs=1)
    assert {k: v for k, v in one.to_dict().items() if k not in DROP} == \
        {k: v for k, v in far.to_dict().items() if k not in DROP}
    assert len(set(rec.batches.values())) > 1          # the dropped pairs' streams stopped being sent
