"""The anytime audit's streams (dpverify/statistical/streams.py): a pair's kept batches, lanes in the worker processes
giving exactly the results of one process (verdicts, bounds, witnesses, errors), and the lanes' state dropped after
an audit."""

from __future__ import annotations

import os

import numpy as np
import pytest

from algorithms.broken.laplace_half_noise import LaplaceHalfNoise
from algorithms.broken.svt_outputs_value import SVTOutputsValue
from algorithms.classic.laplace import Laplace
from dpverify.errors import MechanismError
from dpverify.execution.sampling import WorkerPool
from dpverify.statistical import streams
from dpverify.statistical.anytime import audit_anytime
from dpverify.statistical.streams import PairStream, joint_counts

DROP = ("seconds", "workers", "library")


def _same(a, b) -> None:
    assert {k: v for k, v in a.to_dict().items() if k not in DROP} == \
        {k: v for k, v in b.to_dict().items() if k not in DROP}


def test_pair_stream_keeps_the_last_cap_outputs_without_counting_the_newest() -> None:
    s = PairStream(cap=10)
    for b in range(6):
        s.add(0, b, np.arange(4 * b, 4 * b + 4))
    # the newest batch (20..23) does not count towards the cap: 12..19 is not enough without 8..11
    assert [b for b, _ in s.batches[0]] == [2, 3, 4, 5]
    assert s.outputs(0).tolist() == list(range(14, 24))
    assert s.outputs(0, upto=5).tolist() == list(range(10, 20))      # as if batch 5 had not been drawn
    assert [len(a) for a in s.arrays(0, upto=3)] == [4]


def test_joint_counts_pair_the_rows_of_the_two_inputs() -> None:
    from dpverify.statistical.events import IntervalEvent
    from dpverify.statistical.features import Identity
    ev = IntervalEvent(Identity(), 0.5, np.inf)
    out0, out1 = np.array([1.0, 1.0, 0.0, 0.0, 1.0]), np.array([1.0, 0.0, 1.0, 0.0, 0.0])
    assert joint_counts(ev, 0, out0, out1) == (1, 2, 1, 1)
    assert joint_counts(ev, 1, out0, out1) == (1, 1, 2, 1)


@pytest.mark.parametrize("mech, pairs, eps, samples", [
    (LaplaceHalfNoise(0.1), [(0.0, 1.0), (1.0, 2.0), (0.0, -1.0)], 0.1, 100_000),     # stops early: a violation
    (Laplace(0.2), [(0.0, 1.0), (2.0, 1.0), (0.0, 0.5)], 0.2, 40_000),                  # the whole budget
    (SVTOutputsValue(1.0, threshold=1.0, cutoff=1), [(np.ones(5), np.r_[2.0, np.zeros(4)]),
                                                     (np.ones(5), np.zeros(5))], 1.0, 60_000),   # vector outputs
])
@pytest.mark.parametrize("moved", ["before the first search", "within the first search"])
def test_lanes_give_the_results_of_one_process(monkeypatch, mech, pairs, eps: float, samples: int, moved: str) -> None:
    """With the lanes moved to two worker processes at the first checkpoint (LANE_SECONDS = 0), or while its search
    runs, after the first pair's (MOVE_SEARCH_SECONDS = 0), the same verdict, samples to it, bound, witness, epochs
    and loss histogram as on one process (a batch drawn ahead of the stop is never read)."""
    one = audit_anytime(mech, pairs, eps, samples=samples, seed=11, workers=1)
    if moved == "before the first search":
        monkeypatch.setattr(streams, "LANE_SECONDS", 0.0)
    else:
        monkeypatch.setattr(streams, "LANE_SECONDS", 1e9)
        monkeypatch.setattr(streams, "MOVE_SEARCH_SECONDS", 0.0)
    with WorkerPool(2) as pool:
        two = audit_anytime(mech, pairs, eps, samples=samples, seed=11, pool=pool)
        assert pool.lanes_started and two.workers == 2
    _same(one, two)


class ShapeChangesLate:
    """Laplace outputs, but rows of two values once the batches grow past 1,000 (a contract break after the move)."""

    def __call__(self, x, n, rng):
        out = float(x) + rng.laplace(0.0, 10.0, n)
        return np.stack([out, out], axis=1) if n > 1000 else out


class RaisesLate:
    """Raises on the second input once the batches grow past 1,000."""

    def __call__(self, x, n, rng):
        if n > 1000 and float(x) == 1.0:
            raise ValueError("late failure")
        return float(x) + rng.laplace(0.0, 10.0, n)


@pytest.mark.parametrize("mech, match", [(ShapeChangesLate(), "same shape and dtype"), (RaisesLate(), "late failure")])
def test_errors_in_lanes_are_the_errors_of_one_process(monkeypatch, mech, match: str) -> None:
    pairs = [(0.0, 1.0), (2.0, 1.0), (0.0, 3.0)]
    with pytest.raises(MechanismError, match=match) as one:
        audit_anytime(mech, pairs, 1.0, samples=100_000, seed=2, workers=1)
    monkeypatch.setattr(streams, "LANE_SECONDS", 0.0)
    with WorkerPool(2) as pool:
        with pytest.raises(MechanismError, match=match) as two:
            audit_anytime(mech, pairs, 1.0, samples=100_000, seed=2, pool=pool)
        assert pool.lanes_started
    assert str(one.value) == str(two.value)


def _held(_: object = None) -> int:
    return len(streams._HELD)


def test_a_lane_is_one_process_and_keeps_no_state_after_an_audit(monkeypatch) -> None:
    monkeypatch.setattr(streams, "LANE_SECONDS", 0.0)
    with WorkerPool(2) as pool:
        lanes = pool.lanes()
        assert len(lanes) == 2
        pids = [[lane.submit(os.getpid).result() for _ in range(3)] for lane in lanes]
        assert all(len(set(p)) == 1 for p in pids) and pids[0][0] != pids[1][0]
        audit_anytime(Laplace(0.5), [(0.0, 1.0), (1.0, 2.0)], 0.5, samples=20_000, seed=0, pool=pool)
        assert pool.lanes() is lanes                                  # reused, not restarted
        assert [lane.submit(_held).result() for lane in lanes] == [0, 0]
    assert not pool.lanes_started                                     # closed with the pool


class _Recording:
    """An in-process stand-in for a remote executor (a Dask cluster): runs the tasks here, counts them by function."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}

    def slots(self) -> int:
        return 3

    def unsendable(self, task) -> None:
        return None

    def run(self, tasks, fn):
        self.calls[fn.__name__] = self.calls.get(fn.__name__, 0) + len(tasks)
        return [fn(t) for t in tasks]


def test_with_a_remote_executor_batches_and_searches_are_sent_and_the_lane_stays_here() -> None:
    from dpverify.execution.sampling import remote_executor

    pairs = [(0.0, 1.0), (1.0, 2.0)]
    one = audit_anytime(LaplaceHalfNoise(0.1), pairs, 0.1, samples=50_000, seed=4, workers=1)
    rec = _Recording()
    with remote_executor(rec):
        far = audit_anytime(LaplaceHalfNoise(0.1), pairs, 0.1, samples=50_000, seed=4, workers=2)
    _same(one, far)
    assert rec.calls.get("run_batch", 0) > 0 and rec.calls.get("search_stream", 0) > 0


def test_a_vector_violation_that_stops_at_its_first_checkpoint_starts_no_worker(monkeypatch) -> None:
    """The first checkpoint's search runs here whatever the outputs (vectors included): a fresh worker's first
    vector search costs more than the second core saves on a few hundred outputs.  A gross violation of vector
    outputs stops there without starting the lanes, with the result of one process.  (The move is decided on wall
    time, as it should be: on a loaded machine -- a CI run of the whole suite on both cores -- the first pair's
    search can take long enough to project the others past MOVE_SEARCH_SECONDS; both thresholds are raised fivefold
    here so that the load of other tests does not decide.)"""
    from algorithms.broken.histogram_scale_epsilon import HistogramScaleEpsilon
    monkeypatch.setattr(streams, "LANE_SECONDS", 5 * streams.LANE_SECONDS)
    monkeypatch.setattr(streams, "MOVE_SEARCH_SECONDS", 5 * streams.MOVE_SEARCH_SECONDS)
    mech = HistogramScaleEpsilon(0.1)
    base = np.ones(5)
    pairs = [(base, base - np.eye(5)[j]) for j in range(4)]
    one = audit_anytime(mech, pairs, 0.1, samples=100_000, seed=3, workers=1)
    with WorkerPool(2) as pool:
        two = audit_anytime(mech, pairs, 0.1, samples=100_000, seed=3, pool=pool)
        assert not pool.lanes_started
    assert one.violation and one.samples_to_verdict <= 1_000
    _same(one, two)
