"""Tests of dpverify.testing.strategies: generated pairs are neighbours, stay in range, reach the edge cases.

Every hypothesis run here is derandomized (``derandomize=True, database=None``), so the examples -- and
therefore the "edge case reached" assertions -- are the same on every run of a given hypothesis version.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from hypothesis import find, HealthCheck, given, settings
from hypothesis.errors import NoSuchExample
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from hypothesis.strategies import SearchStrategy

from dpverify.errors import InputError
from dpverify.neighbours import AddRemoveOne, L1Neighbours, LInfNeighbours, Pair, ReplaceOne
from dpverify.testing.strategies import (
    add_remove_pairs,
    datasets,
    l1_pairs,
    linf_pairs,
    neighbour_pairs,
    replace_pairs,
    vectors,
)

QUICK = settings(
    max_examples=60,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def collect(strategy: SearchStrategy[Any], n: int = 200) -> list[Any]:
    """The examples of a fixed derandomized run of ``n`` examples (the same list on every run)."""
    out: list[Any] = []

    @settings(max_examples=n, derandomize=True, database=None, deadline=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(strategy)
    def run(value: Any) -> None:
        out.append(value)

    run()
    return out


# id(strategy) -> (strategy, examples); holding the strategy keeps its id from being reused
_COLLECTED: dict[int, tuple[SearchStrategy[Any], list[Any]]] = {}


def reach(strategy: SearchStrategy[Any], condition: Callable[[Any], bool], n: int = 200) -> Any:
    """An example satisfying ``condition`` among the ``n`` examples of a derandomized run of ``strategy``.

    The run is made once per strategy object and reused by every ``reach`` on it (no shrinking, so this
    is much faster than ``hypothesis.find``).
    """
    key = id(strategy)
    if key not in _COLLECTED:
        _COLLECTED[key] = (strategy, collect(strategy, n))
    for example in _COLLECTED[key][1]:
        if condition(example):
            return example
    # not among the first n (which examples come first depends on the hypothesis version): search for one
    # with hypothesis.find, derandomized, up to 5000 examples -- an edge case the strategy cannot reach fails
    try:
        return find(strategy, condition, settings=settings(max_examples=5000, derandomize=True, database=None,
                                                             deadline=None, suppress_health_check=list(HealthCheck)))
    except NoSuchExample:
        raise AssertionError(f"no example among {n} (and 5000 searched) satisfies the condition") from None


# --------------------------------------------------------------------------------------------------
# A tiny weighted input with a public topology
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class TinyGraph:
    edges: tuple[tuple[int, int], ...]
    weights: np.ndarray = field(repr=False)

    def with_weights(self, new_weights: np.ndarray) -> TinyGraph:
        return TinyGraph(self.edges, np.asarray(new_weights, dtype=float).copy())


TRIANGLE = TinyGraph(((0, 1), (1, 2), (0, 2)), np.array([0.5, 2.0, -1.0]))


# --------------------------------------------------------------------------------------------------
# vectors
# --------------------------------------------------------------------------------------------------


@QUICK
@given(vectors(4, -2.0, 3.0, special=(0.25,)))
def test_vectors_shape_dtype_and_range(v: np.ndarray) -> None:
    assert v.shape == (4,) and v.dtype == np.float64
    assert np.all((v >= -2.0) & (v <= 3.0))


def test_vectors_reach_boundaries_specials_neighbours_and_ties() -> None:
    s = vectors(3, -1.0, 1.0, special=(0.5,))
    for target in (-1.0, 1.0, 0.0, 0.5, float(np.nextafter(0.5, 2.0)), float(np.nextafter(1.0, 0.0))):
        reach(s, lambda v, t=target: bool(np.any(v == t)))
    reach(s, lambda v: len(set(v.tolist())) == 1)  # all equal
    reach(s, lambda v: len(set(v.tolist())) == 2)  # values from a small pool
    reach(s, lambda v: bool(np.any((v > -1.0) & (v < 1.0) & (v != 0.0) & (v != 0.5))))  # uniform values


def test_vectors_without_ties_draw_independent_values() -> None:
    ex = collect(vectors(5, 0.0, 1.0, ties=False), 100)
    assert all(v.shape == (5,) for v in ex)


# --------------------------------------------------------------------------------------------------
# datasets
# --------------------------------------------------------------------------------------------------


@QUICK
@given(st.data())
def test_datasets_shape_size_and_range(data: st.DataObject) -> None:
    dim = data.draw(st.sampled_from([None, 1, 3]))
    min_size = data.draw(st.integers(0, 3))
    max_size = data.draw(st.integers(min_size, 8))
    d = data.draw(datasets(dim, -1.0, 2.0, min_size=min_size, max_size=max_size, special=(0.5,)))
    assert d.dtype == np.float64
    assert d.ndim == (1 if dim is None else 2)
    if dim is not None:
        assert d.shape[1] == dim
    assert min_size <= d.shape[0] <= max_size
    assert np.all(np.isfinite(d)) and np.all((d >= -1.0) & (d <= 2.0))


def test_datasets_reach_sizes_boundaries_and_ties() -> None:
    s = datasets(None, 0.0, 1.0, max_size=12, special=(0.3,))
    for n in (0, 1, 2, 12):
        reach(s, lambda d, n=n: d.shape == (n,))
    for value in (0.0, 1.0, 0.3, float(np.nextafter(0.3, 0.0))):
        reach(s, lambda d, v=value: bool(np.any(d == v)))
    reach(s, lambda d: len(d) >= 3 and len(set(d.tolist())) == 1)  # all identical
    s2 = datasets(2, 0.0, 1.0, max_size=6)
    reach(s2, lambda d: d.shape == (0, 2))
    reach(s2, lambda d: len(d) >= 3 and 1 < len({tuple(r) for r in d.tolist()}) < len(d))  # duplicate records
    reach(s2, lambda d: len(d) >= 1 and bool(np.any(np.all(d == 1.0, axis=1))))  # a record at the corner


def test_datasets_nonfinite_only_when_opted_in() -> None:
    assert all(np.all(np.isfinite(d)) for d in collect(datasets(2, 0.0, 1.0, max_size=5), 150))
    s = datasets(None, 0.0, 1.0, max_size=5, nonfinite=True)
    reach(s, lambda d: bool(np.any(np.isnan(d))))
    reach(s, lambda d: bool(np.any(d == math.inf)))
    reach(s, lambda d: bool(np.any(d == -math.inf)))


def test_datasets_min_size_equal_max_size() -> None:
    assert {d.shape for d in collect(datasets(None, 0.0, 1.0, min_size=3, max_size=3), 30)} == {(3,)}


# --------------------------------------------------------------------------------------------------
# linf_pairs / l1_pairs
# --------------------------------------------------------------------------------------------------

finite_bases = hnp.arrays(
    np.float64, st.integers(1, 6), elements=st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)
)
radii = st.floats(1e-4, 1e3)


@settings(QUICK, max_examples=80)
@given(st.data())
def test_linf_pairs_are_strict_neighbours(data: st.DataObject) -> None:
    base = data.draw(finite_bases)
    r = data.draw(radii)
    p = data.draw(linf_pairs(base, r))
    assert isinstance(p, Pair)
    assert LInfNeighbours(r).contains(p.x0, p.x1), p.label
    assert float(np.max(np.abs(p.x1 - p.x0))) <= r  # strictly, not only within the tolerance
    if not p.label.startswith("x-shape"):
        np.testing.assert_array_equal(p.x0, base)


@settings(QUICK, max_examples=80)
@given(st.data())
def test_l1_pairs_are_strict_neighbours(data: st.DataObject) -> None:
    base = data.draw(finite_bases)
    r = data.draw(radii)
    p = data.draw(l1_pairs(base, r))
    assert L1Neighbours(r).contains(p.x0, p.x1), p.label
    assert float(np.sum(np.abs(p.x1 - p.x0))) <= r


def test_linf_pairs_reach_extreme_and_interior_coordinates() -> None:
    s = linf_pairs(np.zeros(4), 1.5)
    reach(s, lambda p: bool(np.any(p.x1 - p.x0 == 1.5)))
    reach(s, lambda p: bool(np.any(p.x1 - p.x0 == -1.5)))
    reach(s, lambda p: bool(np.all(np.abs(p.x1 - p.x0) == 1.5)))  # a vertex of the box
    reach(s, lambda p: bool(np.any(p.x1 - p.x0 == 1.5)) and bool(np.any(p.x1 - p.x0 == -1.5)))  # mixed signs
    reach(s, lambda p: bool(np.any((np.abs(p.x1 - p.x0) > 0) & (np.abs(p.x1 - p.x0) < 1.5))))  # arbitrary
    labels = {p.label.split("[")[0] for p in collect(s, 150)}
    assert {"one-up", "one-down", "all-up", "all-down", "half-up-half-down", "x-shape", "random"} <= labels


def test_l1_pairs_reach_one_coordinate_split_and_spread() -> None:
    s = l1_pairs(np.zeros(4), 2.0)
    reach(s, lambda p: np.count_nonzero(p.x1 - p.x0) == 1 and float(np.sum(np.abs(p.x1 - p.x0))) == 2.0)
    reach(s, lambda p: np.count_nonzero(p.x1 - p.x0) == 2)
    reach(s, lambda p: bool(np.all(np.abs(p.x1 - p.x0) == 0.5)))  # spread over all
    reach(s, lambda p: 0 < float(np.sum(np.abs(p.x1 - p.x0))) < 1.9)  # strictly inside the ball


@QUICK
@given(linf_pairs(3, 0.5, base_low=-1.0, base_high=1.0))
def test_linf_pairs_int_dim_draws_the_base(p: Pair) -> None:
    assert p.x0.shape == (3,) and LInfNeighbours(0.5).contains(p.x0, p.x1)
    if not p.label.startswith("x-shape"):
        assert np.all((p.x0 >= -1.0) & (p.x0 <= 1.0))


def test_linf_pairs_moving_base_moves() -> None:
    s = linf_pairs(np.zeros(2), 0.5, base_low=-3.0, base_high=3.0)
    reach(s, lambda p: bool(np.any(p.x0 == 3.0)))
    reach(s, lambda p: bool(np.any(p.x0 == -3.0)))


@pytest.mark.parametrize(
    "strategy, relation",
    [
        (linf_pairs(TRIANGLE, 0.25), LInfNeighbours(0.25)),
        (l1_pairs(TRIANGLE, 0.25), L1Neighbours(0.25)),
        (linf_pairs(TRIANGLE, 0.25, base_low=0.0, base_high=1.0), LInfNeighbours(0.25)),
        (neighbour_pairs(L1Neighbours(0.25), TRIANGLE, base_radius=1.0), L1Neighbours(0.25)),
    ],
)
def test_weighted_inputs_keep_type_and_topology(strategy: SearchStrategy[Pair], relation: Any) -> None:
    for p in collect(strategy, 40):
        assert type(p.x0) is TinyGraph and type(p.x1) is TinyGraph
        assert p.x0.edges == TRIANGLE.edges and p.x1.edges == TRIANGLE.edges
        assert relation.contains(p.x0, p.x1), p.label


def test_weighted_fixed_base_is_x0() -> None:
    pairs = [p for p in collect(linf_pairs(TRIANGLE, 1.0), 40) if not p.label.startswith("x-shape")]
    assert pairs and all(p.x0 is TRIANGLE for p in pairs)


def test_vector_pairs_large_dimension_is_fine() -> None:
    ex = collect(linf_pairs(np.linspace(-5.0, 5.0, 400), 0.1), 30)
    assert all(LInfNeighbours(0.1).contains(p.x0, p.x1) for p in ex)


# --------------------------------------------------------------------------------------------------
# add_remove_pairs / replace_pairs
# --------------------------------------------------------------------------------------------------

ADD_REMOVE = AddRemoveOne()
REPLACE = ReplaceOne()


@settings(QUICK, max_examples=80)
@given(st.data())
def test_add_remove_pairs_are_neighbours_in_size_and_range(data: st.DataObject) -> None:
    dim = data.draw(st.sampled_from([None, 2]))
    max_size = data.draw(st.integers(1, 7))
    p = data.draw(add_remove_pairs(dim, -1.0, 1.0, max_size=max_size, special=(0.0, 0.5)))
    assert ADD_REMOVE.contains(p.x0, p.x1), p.label
    for d in (p.x0, p.x1):
        assert 0 <= len(d) <= max_size
        assert d.ndim == (1 if dim is None else 2)
        assert np.all((d >= -1.0) & (d <= 1.0))
    assert p.label.startswith(("add[", "remove["))


def test_add_remove_pairs_reach_edge_cases() -> None:
    s = add_remove_pairs(None, 0.0, 1.0, max_size=6, special=(0.25,))
    reach(s, lambda p: len(p.x0) == 0)  # adding to the empty dataset
    reach(s, lambda p: len(p.x1) == 0)  # removing the only record
    reach(s, lambda p: max(len(p.x0), len(p.x1)) == 6)
    reach(s, lambda p: p.label.startswith("add[dup-of"))  # a tie
    reach(s, lambda p: p.label.startswith("remove[") and "dup-of" in p.label)
    # a new maximum strictly beyond all other records
    reach(s, lambda p: p.label.startswith("add[extreme-high") and len(p.x0) >= 2 and p.x1.max() > p.x0.max())
    for value in (0.0, 1.0, 0.25):  # the added record is exactly low, high, the special value
        reach(s, lambda p, v=value: p.label.startswith("add[boundary") and np.sum(p.x1 == v) > np.sum(p.x0 == v))
    reach(s, lambda p: p.label.startswith("add[") and p.label.endswith("@0]") and len(p.x0) >= 2)  # not at the end


def test_add_remove_pairs_nonfinite_only_when_opted_in() -> None:
    assert all(np.all(np.isfinite(p.x0)) and np.all(np.isfinite(p.x1))
               for p in collect(add_remove_pairs(None, 0.0, 1.0, max_size=4), 100))
    s = add_remove_pairs(None, 0.0, 1.0, max_size=4, nonfinite=True)
    reach(s, lambda p: bool(np.any(np.isnan(p.x1))))
    reach(s, lambda p: bool(np.any(np.isinf(p.x0))))


@QUICK
@given(add_remove_pairs(2, 0.0, 10.0, base=np.array([[1.0, 2.0], [3.0, 4.0], [1.0, 2.0]])))
def test_add_remove_pairs_around_a_fixed_base(p: Pair) -> None:
    base = np.array([[1.0, 2.0], [3.0, 4.0], [1.0, 2.0]])
    assert ADD_REMOVE.contains(p.x0, p.x1)
    assert any(np.array_equal(d, base) for d in (p.x0, p.x1))


def test_add_remove_around_base_reaches_remove_and_add() -> None:
    base = np.array([0.5, 0.7])
    labels = [p.label for p in collect(add_remove_pairs(None, 0.0, 1.0, base=base), 100)]
    assert any(lb.startswith("remove[") and "base-record" in lb for lb in labels)
    assert any(lb.startswith("add[") and "base-record" not in lb for lb in labels)
    empty = collect(add_remove_pairs(None, 0.0, 1.0, base=np.array([])), 20)
    assert all(ADD_REMOVE.contains(p.x0, p.x1) for p in empty)


@settings(QUICK, max_examples=80)
@given(st.data())
def test_replace_pairs_are_neighbours_of_equal_size(data: st.DataObject) -> None:
    dim = data.draw(st.sampled_from([None, 3]))
    min_size = data.draw(st.integers(0, 2))
    max_size = data.draw(st.integers(max(min_size, 1), 6))
    p = data.draw(replace_pairs(dim, 0.0, 1.0, min_size=min_size, max_size=max_size, special=(0.5,)))
    assert REPLACE.contains(p.x0, p.x1), p.label
    assert len(p.x0) == len(p.x1) and max(min_size, 1) <= len(p.x0) <= max_size
    assert np.all((p.x0 >= 0.0) & (p.x0 <= 1.0)) and np.all((p.x1 >= 0.0) & (p.x1 <= 1.0))


def test_replace_pairs_reach_edge_cases() -> None:
    s = replace_pairs(None, 0.0, 1.0, max_size=5, special=(0.5,))
    reach(s, lambda p: len(p.x0) == 1)
    reach(s, lambda p: len(p.x0) == 5)
    reach(s, lambda p: "nudge" in p.label)
    reach(s, lambda p: "dup-of" in p.label)
    reach(s, lambda p: p.label.endswith(":swapped"))
    near_special = {0.5, float(np.nextafter(0.5, 0.0)), float(np.nextafter(0.5, 1.0))}
    reach(s, lambda p: "boundary" in p.label and bool(near_special & set(p.x1.tolist())))


def test_replace_pairs_fixed_base_all_equal_records_still_differ() -> None:
    base = np.zeros((3, 2))
    ex = collect(replace_pairs(2, 0.0, 1.0, base=base), 80)
    assert all(REPLACE.contains(p.x0, p.x1) for p in ex)


# --------------------------------------------------------------------------------------------------
# neighbour_pairs
# --------------------------------------------------------------------------------------------------


@settings(QUICK, max_examples=100)
@given(st.data())
def test_neighbour_pairs_are_neighbours_for_every_relation(data: st.DataObject) -> None:
    relation, kwargs = data.draw(st.sampled_from([
        (LInfNeighbours(1.0), {"x": np.zeros(3)}),
        (LInfNeighbours(0.5), {"x": TRIANGLE, "base_radius": 2.0}),
        (L1Neighbours(2.0), {"x": np.arange(4.0), "domain": (-1.0, 1.0), "special": (0.5,)}),
        (L1Neighbours(2.0), {"x": 3, "domain": (-1.0, 1.0)}),
        (AddRemoveOne(), {"domain": (0.0, 1.0), "max_size": 5}),
        (AddRemoveOne(), {"x": np.array([[0.1, 0.2], [0.3, 0.4]]), "domain": (0.0, 1.0)}),
        (AddRemoveOne(candidates=[[0, 0], [1, 5]]), {}),
        (ReplaceOne(), {"x": np.array([0.2, 0.4, 0.4]), "domain": (0.0, 1.0)}),
        (ReplaceOne(candidates=[-1.0, 0.0, 1.0]), {"x": np.array([0.0, 0.0])}),
    ]))
    p = data.draw(neighbour_pairs(relation, **kwargs))
    assert relation.contains(p.x0, p.x1), p.label


def test_neighbour_pairs_vector_labels_say_how_the_base_was_made() -> None:
    x = np.zeros(2)
    assert all(p.label.startswith("x:") for p in collect(neighbour_pairs(LInfNeighbours(1.0), x), 20))
    ex = collect(neighbour_pairs(LInfNeighbours(1.0), x, base_radius=0.5), 60)
    assert all(p.label.startswith("shifted-x:") for p in ex)
    assert any(np.max(np.abs(p.x0)) == 0.5 for p in ex if "x-shape" not in p.label)
    assert all(np.max(np.abs(p.x0)) <= 0.5 for p in ex if "x-shape" not in p.label)
    ex = collect(neighbour_pairs(L1Neighbours(1.0), x, domain=(5.0, 6.0)), 30)
    assert all(p.label.startswith("domain-base:") for p in ex)
    assert all(np.all(p.x0 >= 5.0) for p in ex if "x-shape" not in p.label)


def test_neighbour_pairs_dataset_mix_around_x_and_generated() -> None:
    x = np.array([[0.1, 0.9], [0.5, 0.5]])
    ex = collect(neighbour_pairs(ReplaceOne(), x, domain=(0.0, 1.0), max_size=4), 100)
    around = [p for p in ex if p.label.startswith("around-x:")]
    generated = [p for p in ex if p.label.startswith("generated:")]
    # hypothesis decides the exact mix (one_of is not exactly uniform); both kinds must be common
    assert len(around) >= 10 and len(generated) >= 10 and len(around) + len(generated) == len(ex)
    assert all(any(np.array_equal(d, x) for d in (p.x0, p.x1)) for p in around)
    assert all(d.shape[1] == 2 for p in ex for d in (p.x0, p.x1))


def test_neighbour_pairs_candidates_are_the_record_universe() -> None:
    cand = [0.0, 2.0, 7.0]
    for relation in (AddRemoveOne(candidates=cand), ReplaceOne(candidates=cand)):
        ex = collect(neighbour_pairs(relation, max_size=4), 60)
        for p in ex:
            assert relation.contains(p.x0, p.x1)
            assert set(np.concatenate([p.x0, p.x1]).tolist()) <= set(cand)


def test_neighbour_pairs_add_remove_nonfinite_is_opt_in() -> None:
    s = neighbour_pairs(AddRemoveOne(), domain=(0.0, 1.0), max_size=4, nonfinite=True)
    reach(s, lambda p: not (np.all(np.isfinite(p.x0)) and np.all(np.isfinite(p.x1))))


# --------------------------------------------------------------------------------------------------
# Bad arguments
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda: vectors(0, 0.0, 1.0), "dim must be a positive integer"),
        (lambda: vectors(2.5, 0.0, 1.0), "dim must be a positive integer"),  # type: ignore[arg-type]
        (lambda: vectors(3, 1.0, 1.0), "low .* must be smaller than high"),
        (lambda: vectors(3, 2.0, 1.0), "low .* must be smaller than high"),
        (lambda: vectors(3, math.nan, 1.0), "low must be a finite number"),
        (lambda: vectors(3, 0.0, math.inf), "high must be a finite number"),
        (lambda: vectors(3, 0.0, 1.0, special=(2.0,)), r"special\[0\] = 2.0 lies outside"),
        (lambda: vectors(3, 0.0, 1.0, special=0.5), "wrap a single value"),  # type: ignore[arg-type]
        (lambda: vectors(3, 0.0, 1.0, ties="yes"), "ties must be True or False"),  # type: ignore[arg-type]
        (lambda: datasets(0, 0.0, 1.0), "dim must be a positive integer .* or None"),
        (lambda: datasets(None, 0.0, 1.0, min_size=5, max_size=2), "max_size .* at least min_size"),
        (lambda: datasets(None, 0.0, 1.0, min_size=-1), "min_size must be a non-negative integer"),
        (lambda: datasets(None, 0.0, 1.0, nonfinite=1), "nonfinite must be True or"),  # type: ignore[arg-type]
        (lambda: linf_pairs(np.zeros(3), 0.0), "radius must be a positive finite number"),
        (lambda: linf_pairs(np.zeros(3), -1.0), "radius must be a positive finite number"),
        (lambda: l1_pairs(np.zeros(3), math.nan), "radius must be a positive finite number"),
        (lambda: linf_pairs(3, 1.0), "pass base_low= and base_high="),
        (lambda: linf_pairs(np.zeros(3), 1.0, base_low=0.0), "pass both base_low and base_high"),
        (lambda: linf_pairs(np.zeros((2, 2)), 1.0), "must be 1-D"),
        (lambda: linf_pairs(np.array([0.0, math.nan]), 1.0), "finite values"),
        (lambda: linf_pairs(0, 1.0, base_low=0.0, base_high=1.0), "dim must be a positive integer"),
        (lambda: add_remove_pairs(None, 0.0, 1.0, min_size=3, max_size=3), "at least min_size \\+ 1"),
        (lambda: add_remove_pairs(2, 0.0, 1.0, base=np.zeros(3)), "pass a 2-D array with 2 columns"),
        (lambda: add_remove_pairs(None, 0.0, 1.0, base=np.array([0.5, 3.0])), "value 3.0 outside"),
        (lambda: add_remove_pairs(None, 0.0, 1.0, base=np.array([math.nan])), "or pass nonfinite=True"),
        (lambda: replace_pairs(None, 0.0, 1.0, base=np.array([])), "is empty"),
        (lambda: replace_pairs(None, 0.0, 1.0, min_size=0, max_size=0), "max_size must be at least 1"),
        (lambda: neighbour_pairs(AddRemoveOne()), r"pass domain=\(low, high\)"),
        (lambda: neighbour_pairs(ReplaceOne(), x=np.zeros(2)), r"pass domain=\(low, high\)"),
        (lambda: neighbour_pairs(AddRemoveOne(), domain=(1.0, 0.0)), "domain low .* must be smaller"),
        (lambda: neighbour_pairs(AddRemoveOne(), domain=(0.0,)), r"domain must be a pair \(low, high\)"),
        (lambda: neighbour_pairs(LInfNeighbours(1.0)), "pass x="),
        (lambda: neighbour_pairs(LInfNeighbours(1.0), x=3), r"pass domain=\(low, high\)"),
        (lambda: neighbour_pairs(LInfNeighbours(1.0), x=np.zeros(2), base_radius=0.0), "base_radius must be"),
        (lambda: neighbour_pairs(LInfNeighbours(1.0), x=np.zeros(2), nonfinite=True), "dataset relations only"),
        (lambda: neighbour_pairs(AddRemoveOne(), domain=(0, 1), base_radius=1.0), "base_radius applies"),
        (lambda: neighbour_pairs(ReplaceOne(candidates=[1.0, 1.0]), max_size=3), "single distinct candidate"),
        (lambda: neighbour_pairs(AddRemoveOne(candidates=[[0, 1]]), x=np.zeros(3)), "make them agree"),
        (lambda: neighbour_pairs("add/remove"), "LInfNeighbours, L1Neighbours, AddRemoveOne, ReplaceOne or a subclass of your own"),
        (lambda: neighbour_pairs(None), "relation must be a dpverify.neighbours.NeighbourRelation"),
    ],
)
def test_bad_arguments_raise_input_error_eagerly(build: Callable[[], Any], match: str) -> None:
    with pytest.raises(InputError, match=match):
        build()
