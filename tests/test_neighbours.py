"""Tests of dpverify.neighbours: relations, pattern and random generators, distance bounds, errors."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from dpverify.errors import InputError
from dpverify.neighbours import (
    AddRemoveOne,
    L1Neighbours,
    LInfNeighbours,
    NeighbourRelation,
    Pair,
    ReplaceOne,
    WeightedInput,
    as_pairs,
)

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --------------------------------------------------------------------------------------------------
# A tiny weighted-graph stand-in (the real graph type comes later in the project)
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class ToyGraph:
    edges: tuple[tuple[int, int], ...]
    weights: np.ndarray = field(repr=False)

    def with_weights(self, new_weights: np.ndarray) -> ToyGraph:
        return ToyGraph(self.edges, np.asarray(new_weights, dtype=float).copy())


class OtherGraph(ToyGraph):
    pass


def path_graph(weights: Any) -> ToyGraph:
    w = np.asarray(weights, dtype=float)
    return ToyGraph(tuple((i, i + 1) for i in range(w.size)), w)


# --------------------------------------------------------------------------------------------------
# Strategies
# --------------------------------------------------------------------------------------------------

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)
vectors = hnp.arrays(np.float64, st.integers(1, 12), elements=finite)
radii = st.floats(min_value=1e-3, max_value=1e3, allow_nan=False, allow_infinity=False)
vector_relations = st.one_of(radii.map(LInfNeighbours), radii.map(L1Neighbours))
seeds = st.integers(0, 2**32 - 1)

datasets = st.one_of(
    hnp.arrays(np.int64, st.integers(1, 12), elements=st.integers(-5, 5)),
    hnp.arrays(np.float64, st.integers(1, 12), elements=finite),
    hnp.arrays(np.int64, st.tuples(st.integers(1, 12), st.integers(1, 3)), elements=st.integers(-3, 3)),
    hnp.arrays(np.float64, st.tuples(st.integers(1, 12), st.integers(1, 3)), elements=finite),
)


def candidates_for(data: np.ndarray) -> np.ndarray:
    if data.ndim == 1:
        return np.array([-100.0, 100.0])
    return np.array([[-100.0] * data.shape[1], [100.0] * data.shape[1]])


def dataset_relations(data: np.ndarray) -> list[NeighbourRelation]:
    return [AddRemoveOne(), AddRemoveOne(candidates_for(data)), ReplaceOne(candidates_for(data))]


def values(p: Pair) -> tuple[np.ndarray, np.ndarray]:
    get = lambda v: np.asarray(v.weights if isinstance(v, ToyGraph) else v)  # noqa: E731
    return get(p.x0), get(p.x1)


# --------------------------------------------------------------------------------------------------
# Pair and as_pairs
# --------------------------------------------------------------------------------------------------


def test_pair_swapped_and_equality() -> None:
    p = Pair(np.array([0.0, 1.0]), np.array([1.0, 1.0]), "one-up[0]")
    q = p.swapped()
    assert np.array_equal(q.x0, p.x1) and np.array_equal(q.x1, p.x0)
    assert q.label == "one-up[0]:swapped"
    assert q.swapped() == p
    assert p == Pair(np.array([0.0, 1.0]), np.array([1.0, 1.0]), "one-up[0]")
    assert p != q
    with pytest.raises(TypeError):
        hash(p)
    with pytest.raises(AttributeError):
        p.label = "x"  # type: ignore[misc]


def test_as_pairs_accepts_pairs_tuples_and_lists() -> None:
    a, b = np.zeros(2), np.ones(2)
    out = as_pairs([Pair(a, b, "mine"), (a, b), [b, a]])
    assert [p.label for p in out] == ["mine", "pair[1]", "pair[2]"]
    assert all(isinstance(p, Pair) for p in out)
    assert np.array_equal(out[2].x0, b)
    assert len(as_pairs(((a, b),))) == 1


def test_as_pairs_errors_name_the_problem() -> None:
    a, b = np.zeros(2), np.ones(2)
    with pytest.raises(InputError, match="empty"):
        as_pairs([])
    with pytest.raises(InputError, match="element 1"):
        as_pairs([(a, b), (a, b, a)])
    with pytest.raises(InputError, match="element 0 is a ndarray"):
        as_pairs((a, b))  # a single pair given without the surrounding list
    with pytest.raises(InputError, match="element 2 is a int"):
        as_pairs([(a, b), (a, b), 3])
    with pytest.raises(InputError, match="single Pair"):
        as_pairs(Pair(a, b))
    with pytest.raises(InputError, match="list of Pair"):
        as_pairs(np.zeros((3, 2, 2)))
    with pytest.raises(InputError, match="list of Pair"):
        as_pairs(5)


def test_as_pairs_validates_against_a_relation() -> None:
    rel = LInfNeighbours(1.0)
    ok = as_pairs([(np.zeros(3), np.ones(3))], relation=rel)
    assert len(ok) == 1
    with pytest.raises(InputError, match=r"element 1 \(pair\[1\]\).*exceeds the radius"):
        as_pairs([(np.zeros(3), np.ones(3)), (np.zeros(3), 2 * np.ones(3))], relation=rel)


# --------------------------------------------------------------------------------------------------
# Vector relations: containment of generated pairs (property-based)
# --------------------------------------------------------------------------------------------------


@SETTINGS
@given(rel=vector_relations, x=vectors)
def test_vector_patterns_are_neighbours(rel: NeighbourRelation, x: np.ndarray) -> None:
    pats = rel.patterns(x)
    assert pats
    for p in pats:
        assert rel.contains(p.x0, p.x1), p.label
        assert rel.contains(p.x1, p.x0), p.label
        rel.validate_pair(p.x0, p.x1)
        assert p.x1.shape == x.shape
    # deduplicated
    keys = {(p.x0.tobytes(), p.x1.tobytes()) for p in pats}
    assert len(keys) == len(pats)


@SETTINGS
@given(rel=vector_relations, x=vectors, k=st.integers(0, 6), seed=seeds)
def test_vector_random_pairs_are_neighbours(rel: NeighbourRelation, x: np.ndarray, k: int, seed: int) -> None:
    rp = rel.random_pairs(x, k, seed)
    assert len(rp) == k
    for p in rp:
        assert rel.contains(p.x0, p.x1), p.label
        assert np.array_equal(p.x0, x)


@SETTINGS
@given(rel=vector_relations, x=vectors, seed=seeds)
def test_vector_relations_on_weighted_graphs(rel: NeighbourRelation, x: np.ndarray, seed: int) -> None:
    g = path_graph(x)
    assert isinstance(g, WeightedInput)
    for p in rel.pairs(g, random=4, seed=seed):
        assert type(p.x0) is ToyGraph and type(p.x1) is ToyGraph
        assert p.x0.edges == g.edges and p.x1.edges == g.edges
        assert rel.contains(p.x0, p.x1), p.label
    # the same pairs as on the bare weight vector
    on_graph = [values(p) for p in rel.pairs(g, random=4, seed=seed)]
    on_vector = [(p.x0, p.x1) for p in rel.pairs(x, random=4, seed=seed)]
    assert len(on_graph) == len(on_vector)
    for (a0, a1), (b0, b1) in zip(on_graph, on_vector):
        assert np.array_equal(a0, b0) and np.array_equal(a1, b1)


def test_weighted_patterns_keep_the_base_object() -> None:
    g = path_graph([1.0, 2.0, 3.0])
    p = LInfNeighbours(1.0).patterns(g)[0]
    assert p.x0 is g
    assert np.array_equal(g.weights, [1.0, 2.0, 3.0])  # base never mutated


# --------------------------------------------------------------------------------------------------
# Patterns: labels and the StatDP shapes
# --------------------------------------------------------------------------------------------------


def test_linf_pattern_labels_small_and_large() -> None:
    small = [p.label for p in LInfNeighbours().patterns(np.zeros(4))]
    assert small == [
        "one-up[0]", "one-down[0]", "one-up[1]", "one-down[1]", "one-up[2]", "one-down[2]",
        "one-up[3]", "one-down[3]", "all-up", "all-down", "half-up-half-down", "half-down-half-up",
        "one-up-rest-down", "one-down-rest-up", "rest-down-last-up", "rest-up-last-down", "x-shape",
    ]
    large = [p.label for p in LInfNeighbours().patterns(np.zeros(7))]
    assert large[:4] == ["one-up[0]", "one-down[0]", "one-up[6]", "one-down[6]"]


def test_linf_statdp_shapes() -> None:
    x = np.array([1.0, 1.0, 1.0, 1.0, 1.0])
    pats = {p.label: p for p in LInfNeighbours(1.0).patterns(x)}
    assert np.array_equal(pats["one-up-rest-down"].x1, [2, 0, 0, 0, 0])
    assert np.array_equal(pats["one-down-rest-up"].x1, [0, 2, 2, 2, 2])
    assert np.array_equal(pats["rest-down-last-up"].x1, [0, 0, 0, 0, 2])
    assert np.array_equal(pats["rest-up-last-down"].x1, [2, 2, 2, 2, 0])
    assert np.array_equal(pats["half-up-half-down"].x1, [2, 2, 0, 0, 0])
    xs = pats["x-shape"]
    assert np.array_equal(xs.x0, [1.5, 1.5, 0.5, 0.5, 0.5])
    assert np.array_equal(xs.x1, [0.5, 0.5, 1.5, 1.5, 1.5])
    assert np.max(np.abs(xs.x0 - xs.x1)) == 1.0


def test_patterns_deduplicate_in_dimension_one() -> None:
    labels = [p.label for p in LInfNeighbours(1.0).patterns(np.array([3.0]))]
    assert labels == ["one-up[0]", "one-down[0]", "x-shape"]


def test_l1_patterns_have_distance_exactly_radius() -> None:
    x = np.array([0.5, -2.0, 3.0, 7.0, 1.0])
    rel = L1Neighbours(0.8)
    for p in rel.patterns(x):
        assert np.sum(np.abs(p.x1 - p.x0)) == pytest.approx(0.8, rel=1e-12), p.label


# --------------------------------------------------------------------------------------------------
# Random pairs: reproducible by seed, different across seeds
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rel, x",
    [
        (LInfNeighbours(0.5), np.arange(6.0)),
        (L1Neighbours(2.0), np.arange(6.0)),
        (AddRemoveOne(), np.arange(20.0).reshape(10, 2)),
        (AddRemoveOne(candidates=[[0.0, 0.0], [50.0, 50.0]]), np.arange(20.0).reshape(10, 2)),
        (ReplaceOne(), np.arange(10.0)),
        (ReplaceOne(candidates=[-1, 99]), np.arange(10)),
    ],
    ids=str,
)
def test_random_pairs_reproducible_by_seed(rel: NeighbourRelation, x: np.ndarray) -> None:
    def run(seed: Any) -> list[Pair]:
        return rel.random_pairs(x, 9, seed)

    a, b = run(123), run(123)
    assert a == b
    assert run(np.random.default_rng(123)) == a
    assert run(np.random.SeedSequence(123)) == a
    c = run(124)
    assert [p.label for p in c] == [p.label for p in a]
    assert c != a
    assert rel.pairs(x, random=9, seed=5) == rel.pairs(x, random=9, seed=5)


def test_random_pair_kinds() -> None:
    x = np.arange(5.0)
    linf = LInfNeighbours(0.25).random_pairs(x, 4, 0)
    assert [p.label for p in linf] == ["random[0]", "random-vertex[1]", "random[2]", "random-vertex[3]"]
    assert np.array_equal(np.abs(linf[1].x1 - x), np.full(5, 0.25))
    l1 = L1Neighbours(3.0).random_pairs(x, 2, 0)
    assert [p.label for p in l1] == ["random[0]", "random-coordinate[1]"]
    assert np.sum(np.abs(l1[0].x1 - x)) == pytest.approx(3.0)
    assert np.count_nonzero(l1[1].x1 - x) == 1
    ar = AddRemoveOne().random_pairs(x, 3, 0)
    assert [p.label for p in ar] == ["random-remove[0]", "random-add[1]", "random-add-box[2]"]
    assert [p.x1.size for p in ar] == [4, 6, 6]
    assert 0.0 <= ar[2].x1[-1] <= 4.0  # inside the bounding box of the data
    rp = ReplaceOne(candidates=[10, 20]).random_pairs(np.arange(5), 2, 0)
    assert [p.label for p in rp] == ["random-replace[0]", "random-replace-box[1]"]
    assert set(rp[0].x1.tolist()) & {10, 20}
    box = set(rp[1].x1.tolist()) - set(range(5))
    assert len(box) == 1 and 10 <= box.pop() <= 20


def test_pairs_combines_and_deduplicates() -> None:
    rel = AddRemoveOne()
    x = np.array([1, 2, 3])
    pats = rel.patterns(x)
    combined = rel.pairs(x, random=6, seed=0)
    assert combined[: len(pats)] == pats
    keys = [(p.x0.tobytes(), p.x1.tobytes()) for p in combined]
    assert len(set(keys)) == len(keys)
    only_random = rel.pairs(x, patterns=False, random=2, seed=0)
    assert all(p.label.startswith("random") for p in only_random)


# --------------------------------------------------------------------------------------------------
# Distance bounds are the noise-calibration facts, and they are attained
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("m", [1, 2, 5, 10])
@pytest.mark.parametrize("mu", [0.5, 1.0, 3.0])
def test_linf_bounds_attained_by_all_up(m: int, mu: float) -> None:
    rel = LInfNeighbours(mu)
    assert rel.l1_distance_bound(m) == m * mu
    assert rel.l2_distance_bound(m) == pytest.approx(mu * math.sqrt(m))
    assert rel.linf_distance_bound(m) == mu
    all_up = next(p for p in rel.patterns(np.linspace(-1, 1, m)) if p.label in ("all-up", "one-up[0]") and
                  np.all(p.x1 > p.x0))
    d = all_up.x1 - all_up.x0
    assert np.sum(np.abs(d)) == pytest.approx(rel.l1_distance_bound(m), rel=1e-12)
    assert np.linalg.norm(d) == pytest.approx(rel.l2_distance_bound(m), rel=1e-12)
    assert np.max(np.abs(d)) == pytest.approx(rel.linf_distance_bound(m), rel=1e-12)


@SETTINGS
@given(rel=vector_relations, x=vectors)
def test_bounds_hold_and_are_attained_by_some_pattern(rel: NeighbourRelation, x: np.ndarray) -> None:
    m = x.size
    diffs = [p.x1 - p.x0 for p in rel.patterns(x)]
    for order, bound in [(1, rel.l1_distance_bound(m)), (2, rel.l2_distance_bound(m)),
                         (np.inf, rel.linf_distance_bound(m))]:
        norms = [float(np.linalg.norm(d, ord=order)) for d in diffs]
        scale = max(bound, float(np.max(np.abs(x))) * m)
        assert max(norms) <= bound + 1e-9 * scale
        assert max(norms) >= bound - 1e-9 * scale


def test_l1_bounds() -> None:
    rel = L1Neighbours(2.5)
    assert rel.l1_distance_bound(7) == rel.l2_distance_bound(7) == rel.linf_distance_bound(7) == 2.5


def test_dataset_bounds_are_histogram_sensitivities() -> None:
    ar, rp = AddRemoveOne(), ReplaceOne()
    assert (ar.l1_distance_bound(10), ar.l2_distance_bound(10), ar.linf_distance_bound(10)) == (1.0, 1.0, 1.0)
    assert (rp.l1_distance_bound(10), rp.linf_distance_bound(10)) == (2.0, 1.0)
    assert rp.l2_distance_bound(10) == pytest.approx(math.sqrt(2))
    assert (rp.l1_distance_bound(1), rp.l2_distance_bound(1), rp.linf_distance_bound(1)) == (0.0, 0.0, 0.0)
    # attained: histograms of a replace pattern differ by 2 in ℓ1
    x = np.array([0, 1, 1, 2])
    p = ReplaceOne().patterns(x)[0]
    h0, h1 = np.bincount(p.x0, minlength=3), np.bincount(p.x1, minlength=3)
    assert np.sum(np.abs(h0 - h1)) == rp.l1_distance_bound(3)
    q = AddRemoveOne().patterns(x)[0]
    assert np.sum(np.abs(np.bincount(q.x0, minlength=3) - np.bincount(q.x1, minlength=3))) == 1


# --------------------------------------------------------------------------------------------------
# contains: accepts neighbours, rejects non-neighbours
# --------------------------------------------------------------------------------------------------


@SETTINGS
@given(x=vectors, mu=radii, i=st.integers(0, 11))
def test_linf_rejects_beyond_radius(x: np.ndarray, mu: float, i: int) -> None:
    rel = LInfNeighbours(mu)
    y = x.copy()
    y[i % x.size] += 1.01 * mu + 1e-9 * max(1.0, abs(x[i % x.size]))
    assert not rel.contains(x, y)
    with pytest.raises(InputError, match="exceeds the radius"):
        rel.validate_pair(x, y)


@SETTINGS
@given(x=vectors.filter(lambda v: v.size >= 2), r=radii)
def test_l1_rejects_spread_beyond_radius(x: np.ndarray, r: float) -> None:
    rel = L1Neighbours(r)
    y = x + 0.6 * r  # each coordinate moves by less than r, the total by at least 1.2 r
    assert not rel.contains(x, y)
    assert LInfNeighbours(r).contains(x, y)


def test_vector_contains_edge_cases() -> None:
    rel = LInfNeighbours(1.0)
    x = np.array([0.0, 1.0, 2.0])
    assert rel.contains(x, x)  # distance 0
    assert rel.contains(x, x + 1.0)
    assert rel.contains([0, 1, 2], [1, 2, 3])  # lists of ints are vectors too
    assert not rel.contains(x, np.zeros(4))
    with pytest.raises(InputError, match="different dimensions"):
        rel.validate_pair(x, np.zeros(4))
    # relative tolerance: x + d with large x rounds, and is still accepted
    big = np.array([1e9 + 0.1, -3e8 + 0.3])
    assert rel.contains(big, big + 1.0)
    assert LInfNeighbours(0.1).contains(np.array([0.7]), np.array([0.7 + 0.1]))
    assert not rel.contains(x, x + 1.0 + 1e-9)


def test_weighted_contains() -> None:
    rel = L1Neighbours(1.0)
    g = path_graph([1.0, 2.0])
    assert rel.contains(g, g.with_weights([1.5, 2.5]))
    assert not rel.contains(g, g.with_weights([2.0, 2.5]))
    other_topology = ToyGraph(((0, 2), (2, 1)), np.array([1.0, 2.0]))
    assert not rel.contains(g, other_topology)
    with pytest.raises(InputError, match="different edges"):
        rel.validate_pair(g, other_topology)
    assert not rel.contains(g, OtherGraph(g.edges, g.weights))
    with pytest.raises(InputError, match="same kind"):
        rel.contains(g, np.array([1.0, 2.0]))


def test_add_remove_contains() -> None:
    rel = AddRemoveOne()
    x = np.array([3, 1, 2, 1])
    assert rel.contains(x, np.array([1, 2, 1]))
    assert rel.contains(np.array([1, 2, 1]), x)  # symmetric
    assert rel.contains(x, np.array([1, 1, 2, 3, 7]))  # order does not matter (multiset)
    assert rel.contains(np.array([5]), np.array([]))  # the empty dataset is a neighbour
    assert rel.contains(np.array([[1, 2]]), np.array([]))
    assert not rel.contains(x, x)
    assert not rel.contains(x, np.array([1, 2]))
    with pytest.raises(InputError, match="differ by exactly one"):
        rel.validate_pair(x, np.array([1, 2]))
    assert rel.contains(x, np.array([3, 1, 2]))  # one of the two 1s removed
    assert not rel.contains(x, np.array([3, 2]))  # both 1s removed
    assert not rel.contains(x, np.array([3, 1, 9]))  # the smaller one holds a record the larger lacks
    with pytest.raises(InputError, match="lacks"):
        rel.validate_pair(x, np.array([3, 1, 9]))
    assert not rel.contains(np.array([[1, 2], [3, 4]]), np.array([[1, 2, 0]]))
    with pytest.raises(InputError, match="columns"):
        rel.validate_pair(np.array([[1, 2], [3, 4]]), np.array([1]))


def test_replace_contains() -> None:
    rel = ReplaceOne()
    x = np.array([[1, 2], [3, 4], [5, 6]])
    assert rel.contains(x, np.array([[1, 2], [9, 9], [5, 6]]))
    assert rel.contains(x, np.array([[5, 6], [1, 2], [0, 0]]))  # multiset semantics
    assert not rel.contains(x, x)
    with pytest.raises(InputError, match="exactly one record must differ, but 0"):
        rel.validate_pair(x, x)
    assert not rel.contains(x, np.array([[0, 0], [0, 0], [5, 6]]))
    assert not rel.contains(x, x[:2])
    with pytest.raises(InputError, match="sizes differ"):
        rel.validate_pair(x, x[:2])


# --------------------------------------------------------------------------------------------------
# Dataset relations: patterns and random pairs are neighbours (property-based)
# --------------------------------------------------------------------------------------------------


@SETTINGS
@given(data=datasets, seed=seeds)
def test_dataset_pairs_are_neighbours(data: np.ndarray, seed: int) -> None:
    for rel in dataset_relations(data):
        try:
            pairs = rel.pairs(data, random=5, seed=seed)
        except InputError as exc:  # only when every record equals every default candidate
            assert isinstance(rel, ReplaceOne) and "no replace-one neighbour" in str(exc)
            continue
        assert pairs
        for p in pairs:
            assert rel.contains(p.x0, p.x1), (str(rel), p.label)
            assert rel.contains(p.x1, p.x0)
            assert np.array_equal(p.x0, data)


@SETTINGS
@given(data=datasets)
def test_dataset_pattern_indices(data: np.ndarray) -> None:
    n = data.shape[0]
    labels = [p.label for p in AddRemoveOne(candidates_for(data)).patterns(data)]
    removes = [lab for lab in labels if lab.startswith("remove")]
    expected = [f"remove[{i}]" for i in (range(n) if n <= 8 else [0, n - 1])]
    # duplicates (equal records) are dropped, first one kept
    assert set(removes) <= set(expected) and removes[0] == "remove[0]"
    assert labels[-2:] == ["add[0]", "add[1]"]
    rlabels = [p.label for p in ReplaceOne(candidates_for(data)).patterns(data)]
    replace_expected = {f"replace[{i}" for i in (range(n) if n <= 8 else [0, n - 1])}
    assert {lab.split(",")[0] for lab in rlabels} == replace_expected


def test_default_candidates_are_column_extremes() -> None:
    x = np.array([[1, 9], [5, 2], [3, 4]])
    pats = {p.label: p for p in AddRemoveOne().patterns(x)}
    assert np.array_equal(pats["add-min"].x1[-1], [1, 2])
    assert np.array_equal(pats["add-max"].x1[-1], [5, 9])
    rp = {p.label: p for p in ReplaceOne().patterns(x)}
    assert np.array_equal(rp["replace[1,max]"].x1, [[1, 9], [5, 9], [3, 4]])
    assert "replace[0,min]" in rp
    # a replacement equal to the record is skipped
    one_d = [p.label for p in ReplaceOne().patterns(np.array([0, 5]))]
    assert one_d == ["replace[0,max]", "replace[1,min]"]


def test_replace_without_possible_neighbour() -> None:
    with pytest.raises(InputError, match="no replace-one neighbour"):
        ReplaceOne().patterns(np.array([3, 3, 3]))
    with pytest.raises(InputError, match="no replace-one neighbour"):
        ReplaceOne(candidates=[3]).random_pairs(np.array([3, 3]), 2, 0)
    # with a differing candidate it works
    assert ReplaceOne(candidates=[0, 3]).random_pairs(np.array([3, 3]), 4, 0)


def test_integer_and_bool_datasets_keep_their_dtype() -> None:
    x = np.array([0, 4, 2])
    for p in AddRemoveOne().pairs(x, random=6, seed=1):
        assert p.x1.dtype.kind == "i"
    b = np.array([True, False, True])
    for p in AddRemoveOne().pairs(b, random=6, seed=1) + ReplaceOne().pairs(b, random=4, seed=1):
        assert p.x1.dtype == bool


# --------------------------------------------------------------------------------------------------
# Names, equality, hashing
# --------------------------------------------------------------------------------------------------


def test_names() -> None:
    assert str(LInfNeighbours(1.0)) == "ℓ∞ radius 1.0" == LInfNeighbours().name
    assert str(L1Neighbours(2)) == "ℓ1 radius 2.0"
    assert str(AddRemoveOne()) == "add/remove one record"
    assert str(AddRemoveOne([0, 1, 2])) == "add/remove one record (3 candidates)"
    assert str(ReplaceOne()) == "replace one record"


def test_relations_are_values() -> None:
    assert LInfNeighbours(1) == LInfNeighbours(1.0)
    assert LInfNeighbours(1.0) != L1Neighbours(1.0)
    assert LInfNeighbours(1.0) != LInfNeighbours(2.0)
    assert AddRemoveOne(np.array([[0, 1]])) == AddRemoveOne([[0, 1]])
    assert len({LInfNeighbours(1.0), LInfNeighbours(1), ReplaceOne([1, 2]), ReplaceOne((1, 2))}) == 2
    assert isinstance(LInfNeighbours(), NeighbourRelation)
    with pytest.raises(AttributeError):
        LInfNeighbours().radius = 2.0  # type: ignore[misc]


# --------------------------------------------------------------------------------------------------
# Every InputError case
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("radius", [0, -1.0, float("nan"), float("inf"), True, "1", None])
@pytest.mark.parametrize("cls", [LInfNeighbours, L1Neighbours])
def test_bad_radius(cls: type, radius: Any) -> None:
    with pytest.raises(InputError, match="radius must be a positive finite number"):
        cls(radius)


@pytest.mark.parametrize("rel", [LInfNeighbours(), L1Neighbours()], ids=str)
@pytest.mark.parametrize(
    "x, message",
    [
        (np.array([]), "empty"),
        (np.array([1.0, np.nan, 2.0]), r"x\[1\] is nan"),
        (np.array([1.0, 2.0, -np.inf]), r"x\[2\] is -inf"),
        (np.zeros((2, 2)), "must be 1-D"),
        (3.0, "wrap a scalar"),
        (np.array(["a", "b"]), "numeric"),
        ("ab", "string"),
        ([[1.0], [1.0, 2.0]], "cannot be read"),
        (path_graph([1.0, np.nan]), r"x\.weights\[1\] is nan"),
    ],
)
def test_bad_vector_inputs(rel: NeighbourRelation, x: Any, message: str) -> None:
    with pytest.raises(InputError, match=message):
        rel.patterns(x)
    with pytest.raises(InputError, match=message):
        rel.random_pairs(x, 2, 0)


def test_bad_vector_pair_inputs() -> None:
    rel = LInfNeighbours()
    with pytest.raises(InputError, match=r"x1\[0\] is nan"):
        rel.contains(np.zeros(2), np.array([np.nan, 0.0]))
    with pytest.raises(InputError, match=r"x0 is empty"):
        rel.validate_pair(np.array([]), np.zeros(2))


@pytest.mark.parametrize("rel", [AddRemoveOne(), ReplaceOne()], ids=str)
@pytest.mark.parametrize(
    "x, message",
    [
        (np.array([]), "empty dataset"),
        (np.zeros((0, 2)), "empty dataset"),
        (np.array([1.0, np.nan]), "record 1 is nan"),
        (np.array([[1.0, 2.0], [3.0, np.inf]]), "record 1, column 1 is inf"),
        (np.zeros((2, 2, 2)), "one record per row"),
        (np.zeros((3, 0)), "zero columns"),
        (5, "scalar"),
        (np.array(["a", "b"]), "integer codes"),
        (path_graph([1.0, 2.0]), "LInfNeighbours or L1Neighbours"),
    ],
)
def test_bad_dataset_inputs(rel: NeighbourRelation, x: Any, message: str) -> None:
    with pytest.raises(InputError, match=message):
        rel.patterns(x)
    with pytest.raises(InputError, match=message):
        rel.random_pairs(x, 1, 0)


def test_bad_dataset_pairs_and_candidates() -> None:
    with pytest.raises(InputError, match="both empty"):
        AddRemoveOne().contains(np.array([]), np.array([]))
    with pytest.raises(InputError, match="x1 record 0 is nan"):
        ReplaceOne().contains(np.array([1.0]), np.array([np.nan]))
    for cls in (AddRemoveOne, ReplaceOne):
        with pytest.raises(InputError, match="candidates is an empty dataset"):
            cls(candidates=[])
        with pytest.raises(InputError, match="candidates record 0 is nan"):
            cls(candidates=[np.nan])
        with pytest.raises(InputError, match="wrap a single record"):
            cls(candidates=[1.0, 2.0]).patterns(np.zeros((3, 2)))
        with pytest.raises(InputError, match="candidates are records of 3 columns"):
            cls(candidates=[[1.0, 2.0, 3.0]]).patterns(np.zeros((3, 2)))
        with pytest.raises(InputError, match="1-D array of scalar records"):
            cls(candidates=[[1.0, 2.0]]).patterns(np.zeros(3))


@pytest.mark.parametrize("rel", [LInfNeighbours(), L1Neighbours(), AddRemoveOne(), ReplaceOne()], ids=str)
def test_bad_counts_seeds_and_dims(rel: NeighbourRelation) -> None:
    x = np.arange(3.0)
    with pytest.raises(InputError, match="non-negative integer"):
        rel.random_pairs(x, -1, 0)
    with pytest.raises(InputError, match="non-negative integer"):
        rel.random_pairs(x, 1.5, 0)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="need a seed"):
        rel.pairs(x, random=2)
    with pytest.raises(InputError, match="seed must be a non-negative"):
        rel.random_pairs(x, 2, -3)
    with pytest.raises(InputError, match="integer seed or a numpy.random.Generator"):
        rel.random_pairs(x, 2, "seed")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="nothing requested"):
        rel.pairs(x, patterns=False)
    for bound in (rel.l1_distance_bound, rel.l2_distance_bound, rel.linf_distance_bound):
        for dim in (0, -2, 2.0, True):
            with pytest.raises(InputError, match="dim must be a positive integer"):
                bound(dim)  # type: ignore[arg-type]
