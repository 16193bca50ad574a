"""Tests of algorithms.graph.dbmstclu_batch: identical labels to the scalar dbmstclu, PTClust unchanged, errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import algorithms.graph.dbmstclu_batch as batch_module
from algorithms.graph.dbmstclu import dbmstclu
from algorithms.graph.dbmstclu_batch import _dbmstclu_batch, dbmstclu_batch
from algorithms.graph.ptclust import PTClust
from algorithms.graph.weighted_graph import GraphError, WeightedGraph

SETTINGS = settings(max_examples=200, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])
FLOOR = 1e-9


# ------------------------------------------------------------------------------------------ helpers
def prufer_tree(code: list[int], n: int) -> list[tuple[int, int]]:
    """The labelled tree of a Prüfer code (length n-2) on nodes 0..n-1."""
    if n == 1:
        return []
    degree = [1] * n
    for x in code:
        degree[x] += 1
    edges = []
    for x in code:
        leaf = min(v for v in range(n) if degree[v] == 1)
        edges.append((leaf, x))
        degree[leaf] -= 1
        degree[x] -= 1
    u, v = (i for i in range(n) if degree[i] == 1)
    edges.append((u, v))
    return edges


def scalar_labels(n_nodes: int, edges: np.ndarray, weights: np.ndarray, **kwargs) -> np.ndarray:
    """The reference: the scalar dbmstclu, one row at a time."""
    return np.array([dbmstclu(WeightedGraph(n_nodes, edges[i], weights[i]), **kwargs).labels
                     for i in range(weights.shape[0])], dtype=np.int64).reshape(weights.shape[0], n_nodes)


def random_batch(rng: np.random.Generator, n_nodes: int, rows: int, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Random trees (random Prüfer codes, edges in random order and orientation) and weights of a kind."""
    m = n_nodes - 1
    edges = np.zeros((rows, m, 2), dtype=np.int64)
    for i in range(rows):
        e = np.array(prufer_tree(rng.integers(0, n_nodes, size=max(n_nodes - 2, 0)).tolist(), n_nodes),
                     dtype=np.int64).reshape(m, 2)
        e = e[rng.permutation(m)]
        flip = rng.random(m) < 0.5
        e[flip] = e[flip, ::-1]
        edges[i] = e
    if kind == "ties":              # small integers, some <= 0: many exact ties and clipped weights
        w = rng.integers(-1, 4, size=(rows, m)).astype(np.float64)
    elif kind == "noisy":           # PTClust-like: Laplace noise around 0.2, many below the floor
        w = 0.2 + rng.laplace(0.0, 0.3, size=(rows, m))
    elif kind == "tiny":            # positive values around the floor, and exactly the floor
        w = rng.choice([FLOOR / 2, FLOOR, 2 * FLOOR, 0.5, 1.0, 3e-9], size=(rows, m))
    else:
        w = rng.uniform(0.01, 10.0, size=(rows, m))
    return edges, w


# ------------------------------------------------------------------------------------------ equivalence
@st.composite
def batches(draw: st.DrawFn) -> tuple[int, np.ndarray, np.ndarray]:
    n = draw(st.integers(1, 12))
    rows = draw(st.integers(1, 6))
    weight = st.one_of(st.integers(-2, 4).map(float), st.sampled_from([0.0, FLOOR / 3, FLOOR, 2 * FLOOR]),
                       st.floats(-1.0, 10.0, allow_nan=False, allow_infinity=False))
    edges, weights = [], []
    for _ in range(rows):
        code = draw(st.lists(st.integers(0, n - 1), min_size=max(n - 2, 0), max_size=max(n - 2, 0)))
        e = prufer_tree(code, n)
        e = draw(st.permutations(e))
        e = [(v, u) if draw(st.booleans()) else (u, v) for u, v in e]
        edges.append(np.array(e, dtype=np.int64).reshape(n - 1, 2))
        weights.append(draw(st.lists(weight, min_size=n - 1, max_size=n - 1)))
    return n, np.stack(edges), np.array(weights, dtype=np.float64).reshape(rows, n - 1)


@SETTINGS
@given(batches())
def test_rows_equal_scalar_dbmstclu(batch: tuple[int, np.ndarray, np.ndarray]) -> None:
    n, edges, weights = batch
    got = dbmstclu_batch(n, edges, weights, nonpositive="clip", floor=FLOOR)
    assert got.dtype == np.int64 and got.shape == (weights.shape[0], n)
    np.testing.assert_array_equal(got, scalar_labels(n, edges, weights, nonpositive="clip", floor=FLOOR))


@pytest.mark.parametrize("kind", ["ties", "noisy", "tiny", "uniform"])
def test_seeded_batches_equal_scalar_and_mostly_fast(kind: str) -> None:
    rng = np.random.default_rng(20261122)
    exact = total = 0
    for n in range(1, 13):
        edges, weights = random_batch(rng, n, 60, kind)
        got, exact_steps = _dbmstclu_batch(n, edges, weights, nonpositive="clip", floor=FLOOR)
        np.testing.assert_array_equal(got, scalar_labels(n, edges, weights, nonpositive="clip", floor=FLOOR))
        exact += int((exact_steps > 0).sum())
        total += weights.shape[0]
    if kind in ("noisy", "uniform"):     # continuous weights: float64 decides every step of most rows
        assert exact < total / 4
    if kind in ("ties", "tiny"):         # exact ties: the exact rule is exercised
        assert exact > 0


@pytest.mark.parametrize("kind", ["noisy", "ties"])
def test_every_step_decided_exactly_still_equal(monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    rng = np.random.default_rng(3)
    edges, weights = random_batch(rng, 8, 40, kind)
    monkeypatch.setattr(batch_module, "TOLERANCE", 1e6)      # no float64 decision is trusted
    got, exact_steps = _dbmstclu_batch(8, edges, weights, nonpositive="clip", floor=FLOOR)
    assert (exact_steps > 0).all()
    np.testing.assert_array_equal(got, scalar_labels(8, edges, weights, nonpositive="clip", floor=FLOOR))


def test_shared_tree_raise_mode_and_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(11)
    tree = np.array(prufer_tree([2, 2, 5, 0, 5], 7))
    weights = rng.uniform(FLOOR / 10, 1.0, size=(50, 6))       # positive, some below the floor: kept as is
    weights[::7, 2] = FLOOR / 4
    monkeypatch.setattr(batch_module, "_CHUNK_ENTRIES", 7 * 7 * 3)   # chunks of 3 rows
    got = dbmstclu_batch(7, tree, weights)                           # nonpositive="raise" (the default)
    np.testing.assert_array_equal(got, scalar_labels(7, np.broadcast_to(tree, (50, 6, 2)), weights))


@pytest.mark.parametrize("n_nodes, limit", [(80, None), (9, 5)])
def test_large_trees_go_row_by_row(monkeypatch: pytest.MonkeyPatch, n_nodes: int, limit: int | None) -> None:
    if limit is not None:
        monkeypatch.setattr(batch_module, "MAX_BATCH_NODES", limit)
    assert n_nodes > batch_module.MAX_BATCH_NODES
    edges, weights = random_batch(np.random.default_rng(5), n_nodes, 6, "noisy")
    got, exact_steps = _dbmstclu_batch(n_nodes, edges, weights, nonpositive="clip", floor=FLOOR)
    assert not exact_steps.any()
    np.testing.assert_array_equal(got, scalar_labels(n_nodes, edges, weights, nonpositive="clip", floor=FLOOR))
    with pytest.raises(GraphError, match=r"edges\[0\] is not a spanning tree"):   # still validated
        bad = edges.copy()
        bad[0, 0] = bad[0, 1]
        dbmstclu_batch(n_nodes, bad, weights, nonpositive="clip")


def test_small_cases() -> None:
    assert dbmstclu_batch(1, np.zeros((3, 0, 2)), np.zeros((3, 0))).tolist() == [[0], [0], [0]]
    assert dbmstclu_batch(4, np.zeros((0, 3, 2), dtype=int), np.zeros((0, 3))).shape == (0, 4)
    assert dbmstclu_batch(2, [[0, 1]], [[0.5], [3.0]]).tolist() == [[0, 1], [0, 1]]
    # path 0-1-2-3 with weights 1, 5, 1: cut the heavy middle edge, then stop (two pairs)
    # (same example as tests/test_dbmstclu.py's path cases, checked against the scalar code)
    w = np.array([[1.0, 5.0, 1.0]])
    e = np.array([[0, 1], [1, 2], [2, 3]])
    np.testing.assert_array_equal(dbmstclu_batch(4, e, w), scalar_labels(4, e[None], w))


# ------------------------------------------------------------------------------------------ PTClust
def ptclust_reference(mech: PTClust, graph: WeightedGraph, n: int, seed: int) -> np.ndarray:
    """PTClust's partition as it was computed before the batch: the scalar dbmstclu per sample."""
    trees, noisy = mech.weighted_trees(graph, n, np.random.default_rng(seed))
    return np.array([dbmstclu(graph.subgraph_edges(trees[i]).with_weights(noisy[i]), nonpositive="clip",
                              floor=float(mech.floor)).labels for i in range(n)], dtype=np.int64)


@pytest.mark.parametrize("variant", ["printed", "corrected"])
def test_ptclust_partition_unchanged(variant: str) -> None:
    path9 = WeightedGraph(9, [(i, i + 1) for i in range(8)], [0.1, 0.3] * 4)   # the audits' input
    complete6 = WeightedGraph.complete(6, np.linspace(0.05, 0.9, 15))          # PAMST trees vary by row
    for graph in (path9, complete6):
        mech = PTClust(2.0, mu=0.1, variant=variant)
        got = mech(graph, 1500, np.random.default_rng(42))
        np.testing.assert_array_equal(got, ptclust_reference(mech, graph, 1500, 42))


# ------------------------------------------------------------------------------------------ errors
GOOD_E = np.array([[[0, 1], [1, 2]]] * 2)
GOOD_W = np.array([[0.5, 1.0], [1.0, 2.0]])


@pytest.mark.parametrize("args, kwargs, match", [
    ((3, GOOD_E, np.array([[0.5, np.nan], [1.0, 2.0]])), {}, r"weights\[0, 1\] is nan.*finite"),
    ((3, GOOD_E, np.array([[0.5, 1.0], [np.inf, 2.0]])), {}, r"weights\[1, 0\] is inf.*finite"),
    ((3, GOOD_E, np.array([0.5, 1.0])), {}, r"weights must have shape \(n, n_nodes-1\)"),
    ((3, GOOD_E, np.ones((2, 3))), {}, r"weights must have shape .*got shape \(2, 3\)"),
    ((3, GOOD_E[:1], GOOD_W), {}, r"edges must have shape \(n, n_nodes-1, 2\) = \(2, 2, 2\)"),
    ((3, np.ones((2, 2, 3), dtype=int), GOOD_W), {}, r"edges must have shape"),
    ((3, GOOD_E + 0.5, GOOD_W), {}, "non-integer"),
    ((3, GOOD_E.astype(str), GOOD_W), {}, "integer node ids"),
    ((3, np.array([[[0, 1], [1, 3]]] * 2), GOOD_W), {}, r"edges\[0, 1\] = \[1, 3\] names a node outside"),
    ((3, np.array([[[0, 1], [1, 2]], [[0, 1], [0, 1]]]), GOOD_W), {}, r"edges\[1\] is not a spanning tree"),
    ((4, np.array([[[0, 1], [1, 2], [2, 0]]]), np.ones((1, 3))), {}, r"edges\[0\] is not a spanning tree"),
    ((3, np.array([[[0, 0], [1, 2]]] * 2), GOOD_W), {}, r"edges\[0\] is not a spanning tree"),
    ((3, GOOD_E, np.array([[0.5, 1.0], [1.0, -2.0]])), {}, r"positive weights.*weights\[1, 1\] = -2\.0.*clip"),
    ((0, GOOD_E, GOOD_W), {}, "n_nodes must be an integer >= 1"),
    ((True, GOOD_E, GOOD_W), {}, "n_nodes"),
    ((3, GOOD_E, GOOD_W), {"nonpositive": "shift"}, "nonpositive must be one of"),
    ((3, GOOD_E, GOOD_W), {"floor": 0.0}, "floor must be"),
    ((3, GOOD_E, GOOD_W), {"floor": float("nan")}, "floor must be"),
])
def test_bad_input_names_the_problem(args: tuple, kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        dbmstclu_batch(*args, **kwargs)


def test_graph_error_type() -> None:
    with pytest.raises(GraphError):
        dbmstclu_batch(3, GOOD_E, np.array([[0.5, np.nan], [1.0, 2.0]]))
