"""Pairs that share an input share its outputs (dpverify/execution/sources.py): which inputs count as equal, which
stream each input draws from, and the anytime audit's lanes drawing a shared input once."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from dpverify.execution.sampling import NO_TIME, Task, run_batch
from dpverify.execution.sources import input_key, stream_sources
from dpverify.neighbours import Pair
from dpverify.statistical.streams import StreamLane, shared_batch


@pytest.mark.parametrize("a, b", [
    (np.zeros(3), np.zeros(3)),
    (np.array([1, 2], dtype=np.int32), np.array([1, 2], dtype=np.int32)),
    (1.5, 1.5),
    (3, 3),
    ([1, [2.0, 3]], [1, [2.0, 3]]),
    ((1, 2), (1, 2)),
    (np.float32(2.0), np.float32(2.0)),
    (np.full(2, np.nan), np.full(2, np.nan)),
])
def test_equal_values_of_the_same_type_share_a_key(a, b) -> None:
    assert input_key(a) is not None and input_key(a) == input_key(b)


@pytest.mark.parametrize("a, b", [
    (np.zeros(3), np.zeros(3, dtype=np.float32)),       # dtype
    (np.zeros(3), np.zeros((3, 1))),                    # shape
    (np.zeros(3), np.r_[0.0, 0.0, 1e-300]),             # value
    (0.0, -0.0),                                        # sign of zero
    (1, 1.0),                                           # int against float
    (1.0, np.float64(1.0)),                             # Python against numpy scalar
    ([1, 2.0], [1.0, 2.0]),                             # element types
    ([1, 2], (1, 2)),                                   # list against tuple
    (np.zeros(2), [0.0, 0.0]),                          # array against list
])
def test_values_or_types_that_differ_have_different_keys(a, b) -> None:
    assert input_key(a) != input_key(b)


@pytest.mark.parametrize("x", [np.array([1, "a"], dtype=object), nx.path_graph(3), {"a": 1}, [1, "a"],
                               np.ma.masked_array([1.0, 2.0])])
def test_other_inputs_are_never_shared(x) -> None:
    assert input_key(x) is None
    assert stream_sources([Pair(x, 1.0), Pair(x, 2.0)]) == [((0, 0), (0, 1)), ((1, 0), (1, 1))]


def test_a_class_with_a_key_method_is_shared_by_its_key() -> None:
    from algorithms.graph.weighted_graph import WeightedGraph
    g = WeightedGraph.complete(4, np.arange(6.0))
    assert input_key(g) == input_key(WeightedGraph.complete(4, np.arange(6.0)))
    assert input_key(g) != input_key(g.with_weights(np.r_[np.arange(5.0), 6.0]))           # weights
    assert input_key(g) != input_key(WeightedGraph.from_arrays(5, g.edges, g.weights))      # an isolated node more
    assert input_key(g) == input_key(WeightedGraph.complete(4, np.arange(6, dtype=np.int32)))   # stored as float64
    pairs = [Pair(g, g.with_weights(g.weights + np.eye(6)[j])) for j in range(3)]
    assert stream_sources(pairs) == [((0, 0), (0, 1)), ((0, 0), (1, 1)), ((0, 0), (2, 1))]


def test_sources_point_to_the_first_appearance_and_never_join_the_two_sides_of_a_pair() -> None:
    base = np.zeros(3)
    pairs = [Pair(base, np.r_[1.0, 0, 0]), Pair(base.copy(), np.r_[0, 1.0, 0]), Pair(np.r_[0, 1.0, 0], base),
             Pair(base, base.copy()), Pair(np.r_[5.0, 0, 0], np.r_[6.0, 0, 0]), Pair(nx.path_graph(2), base)]
    assert stream_sources(pairs) == [
        ((0, 0), (0, 1)),
        ((0, 0), (1, 1)),          # the base input: pair 0's stream
        ((1, 1), (0, 0)),          # both inputs seen before, swapped
        ((3, 0), (3, 1)),          # equal inputs in one pair: two streams of their own
        ((4, 0), (4, 1)),          # nothing shared
        ((5, 0), (0, 0)),          # a graph is its own source; the base input still shared
    ]


class _Counting:
    """x + Laplace noise, counting its calls by input."""

    def __init__(self) -> None:
        self.calls: dict[float, int] = {}

    def __call__(self, x: float, n: int, rng: np.random.Generator) -> np.ndarray:
        self.calls[x] = self.calls.get(x, 0) + 1
        return x + rng.laplace(size=n)


def test_a_lane_draws_a_shared_input_once_with_the_outputs_of_its_first_pair() -> None:
    pairs = [Pair(0.0, 1.0), Pair(0.0, -1.0), Pair(2.0, 0.0)]
    mech = _Counting()
    lane = StreamLane(mech, dict(enumerate(pairs)), 7, "error", cap=100, sources=dict(enumerate(stream_sources(pairs))))
    drawn = lane.draw(0, 50, {}, True, None)
    assert mech.calls == {0.0: 1, 1.0: 1, -1.0: 1, 2.0: 1}
    s = lane.streams
    assert s[1].outputs(0) is not s[0].outputs(0)
    assert np.array_equal(s[0].outputs(0), s[1].outputs(0)) and np.array_equal(s[0].outputs(0), s[2].outputs(1))
    assert not np.array_equal(s[0].outputs(1) - 1.0, s[1].outputs(1) + 1.0)     # the neighbours' own noise
    assert all(d.timing.seconds > 0 for d in drawn.values())


def test_a_shared_batch_is_drawn_once_and_its_time_counted_once() -> None:
    mech, shared = _Counting(), {}
    first = shared_batch(Task(mech, 0.0, 20, 3, 2, 0, 0, 5, "p0", "error"), shared)
    again = shared_batch(Task(mech, 0.0, 20, 3, 2, 4, 1, 5, "p4", "error", source=(0, 0)), shared)
    assert mech.calls == {0.0: 1}
    assert again.value is first.value and first.timing.seconds > 0 and again.timing == NO_TIME


def test_a_shared_batch_is_the_batch_its_source_draws_alone() -> None:
    """The seed of a batch is its source's: the same outputs as the source's own task, whatever pair asks."""
    mech = _Counting()
    own = run_batch(Task(mech, 0.0, 20, 3, 2, 0, 0, 5, "p0", "error"))
    via = run_batch(Task(mech, 0.0, 20, 3, 2, 4, 1, 5, "p4", "error", source=(0, 0)))
    other = run_batch(Task(mech, 0.0, 20, 3, 2, 4, 1, 5, "p4", "error"))
    assert np.array_equal(own.value, via.value) and not np.array_equal(own.value, other.value)


class _Remote:
    """An in-process stand-in for a remote executor: runs the tasks here and keeps the seeds of each call's batches."""

    def __init__(self) -> None:
        self.batches: list[list[tuple[int, int, int, int]]] = []

    def slots(self) -> int:
        return 2

    def unsendable(self, task) -> None:
        return None

    def run(self, tasks, fn):
        if fn is run_batch:
            self.batches.append([t.seed_key for t in tasks])
        return [fn(t) for t in tasks]


def test_a_remote_executor_gets_each_shared_input_once_per_batch_with_the_results_of_one_process() -> None:
    from algorithms.broken.laplace_half_noise import LaplaceHalfNoise
    from dpverify.execution.sampling import remote_executor
    from dpverify.statistical.anytime import audit_anytime

    pairs = [(0.0, 1.0), (0.0, -1.0), (1.0, 2.0)]                 # 4 distinct inputs in 6 places
    one = audit_anytime(LaplaceHalfNoise(0.1), pairs, 0.1, samples=30_000, seed=4, workers=1)
    rec = _Remote()
    with remote_executor(rec):
        far = audit_anytime(LaplaceHalfNoise(0.1), pairs, 0.1, samples=30_000, seed=4, workers=2)
    drop = ("seconds", "workers", "library")
    assert {k: v for k, v in one.to_dict().items() if k not in drop} == \
        {k: v for k, v in far.to_dict().items() if k not in drop}
    assert rec.batches and all(len(keys) == len(set(keys)) == 4 for keys in rec.batches)
