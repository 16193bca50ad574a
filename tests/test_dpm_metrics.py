"""Metrics of DPM's evaluation (seed 004 Sec. 6.2, App. C.1, Defs. 9-12): hand-computed tiny examples and
scikit-learn cross-checks (algorithms.dpm.metrics)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from algorithms.dpm import metrics as M
from algorithms.dpm.metrics import (
    ClusteringScores,
    accuracy,
    assign,
    box_diameter,
    evaluate,
    inertia,
    kmeans_distance,
    silhouette,
)

# four points on a line, two clusters {0, 1} and {10, 11}
DATA = np.array([[0.0, 0.0], [1.0, 0.0], [10.0, 0.0], [11.0, 0.0]])
CENTRES = np.array([[0.5, 0.0], [10.5, 0.0]])
LABELS = np.array([0, 1, 1, 1])


def test_assign_hand_example_and_ties_to_lowest_index() -> None:
    assert assign(DATA, CENTRES).tolist() == [0, 0, 1, 1]
    assert assign(DATA, CENTRES[::-1]).tolist() == [1, 1, 0, 0]
    # (5, 0) is equidistant from (0, 0) and (10, 0): the lowest index wins, whatever the order
    tie = np.array([[5.0, 0.0]])
    assert assign(tie, [[0.0, 0.0], [10.0, 0.0]]).tolist() == [0]
    assert assign(tie, [[10.0, 0.0], [0.0, 0.0]]).tolist() == [0]
    assert assign(tie, [[3.0, 0.0], [7.0, 0.0], [5.0, 4.0]]).tolist() == [0]
    # duplicated centres: the first copy
    assert assign(DATA, [[0.5, 0.0], [0.5, 0.0], [10.5, 0.0]]).tolist() == [0, 0, 2, 2]


def test_assign_chunked_equals_unchunked(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(1000, 7))
    c = rng.normal(size=(13, 7))
    brute = np.argmin(((x[:, None, :] - c[None, :, :]) ** 2).sum(axis=2), axis=1)
    assert np.array_equal(assign(x, c), brute)
    monkeypatch.setattr(M, "_CHUNK_ENTRIES", 50)  # chunks of 3 points
    assert np.array_equal(assign(x, c), brute)
    assert inertia(x, c) == pytest.approx(((x - c[brute]) ** 2).sum(), rel=1e-12)


def test_inertia_hand_example_squared_and_printed_def_10() -> None:
    # every point is 0.5 from its centre
    assert inertia(DATA, CENTRES) == pytest.approx(4 * 0.25)
    assert inertia(DATA, CENTRES, squared=False) == pytest.approx(4 * 0.5)
    # one centre at the origin: squared 0 + 1 + 100 + 121, non-squared 0 + 1 + 10 + 11
    assert inertia(DATA, [[0.0, 0.0]]) == pytest.approx(222.0)
    assert inertia(DATA, [[0.0, 0.0]], squared=False) == pytest.approx(22.0)


def test_inertia_equals_sklearn_kmeans_inertia_for_its_own_centres() -> None:
    from sklearn.cluster import KMeans
    from sklearn.datasets import make_blobs

    x, _ = make_blobs(n_samples=2000, n_features=5, centers=6, random_state=3)
    km = KMeans(n_clusters=6, n_init=1, random_state=0).fit(x)
    assert inertia(x, km.cluster_centers_) == pytest.approx(km.inertia_, rel=1e-6)
    assert np.array_equal(assign(x, km.cluster_centers_), km.predict(x))


def test_silhouette_hand_example() -> None:
    # x=0: a=1, b=(10+11)/2; x=1: a=1, b=(9+10)/2; symmetric for 10 and 11
    expected = (9.5 / 10.5 + 8.5 / 9.5) / 2
    assert silhouette(DATA, CENTRES, seed=None) == pytest.approx(expected)
    assert silhouette(DATA, CENTRES, sample_size=None, seed=None) == pytest.approx(expected)


def test_silhouette_minus_one_with_fewer_than_two_nonempty_clusters() -> None:
    assert silhouette(DATA, [[5.0, 0.0]], seed=0) == -1.0
    # two centres, but the far one gets no point
    assert silhouette(DATA, [[5.0, 0.0], [1000.0, 1000.0]], seed=0) == -1.0
    # every point its own cluster: undefined (sklearn raises), -1 as the authors' code
    assert silhouette(DATA, DATA, seed=0) == -1.0


def test_silhouette_equals_sklearn_on_full_set_and_subsample_is_seeded() -> None:
    from sklearn.datasets import make_blobs
    from sklearn.metrics import silhouette_score

    x, _ = make_blobs(n_samples=600, n_features=3, centers=4, random_state=1)
    c = np.array([x[:150].mean(0), x[150:300].mean(0), x[300:450].mean(0), x[450:].mean(0)])
    full = silhouette_score(x, assign(x, c))
    assert silhouette(x, c, sample_size=600, seed=None) == pytest.approx(full, rel=1e-12)
    assert silhouette(x, c, sample_size=10_000, seed=None) == pytest.approx(full, rel=1e-12)
    # subsample: reproducible per seed, equal to sklearn on the same rows, close to the full value
    a = silhouette(x, c, sample_size=200, seed=5)
    assert a == silhouette(x, c, sample_size=200, seed=5)
    rows = np.sort(np.random.default_rng(5).choice(600, 200, replace=False))
    assert a == pytest.approx(silhouette_score(x[rows], assign(x, c)[rows]), rel=1e-12)
    assert a != silhouette(x, c, sample_size=200, seed=6)
    assert abs(a - full) < 0.1
    with pytest.raises(ValueError, match="pass seed"):
        silhouette(x, c, sample_size=200, seed=None)
    with pytest.raises(ValueError, match="sample_size"):
        silhouette(x, c, sample_size=1, seed=0)


def test_accuracy_hand_example_def_12() -> None:
    # cluster {0, 1} has labels {0, 1}: majority 1 point; cluster {10, 11} has {1, 1}: 2 points
    assert accuracy(DATA, CENTRES, LABELS) == pytest.approx(3 / 4)
    assert accuracy(DATA, CENTRES, ["a", "b", "b", "b"]) == pytest.approx(3 / 4)
    assert accuracy(DATA, [[0.0, 0.0]], LABELS) == pytest.approx(3 / 4)  # one cluster: the majority class
    assert accuracy(DATA, DATA, LABELS) == 1.0  # grows with k: a centre per point is perfect
    # an empty cluster contributes nothing
    assert accuracy(DATA, [[0.5, 0.0], [10.5, 0.0], [500.0, 0.0]], LABELS) == pytest.approx(3 / 4)
    with pytest.raises(ValueError, match="one label per point"):
        accuracy(DATA, CENTRES, [0, 1])


def test_kmeans_distance_hand_example_def_9() -> None:
    priv = np.array([[0.0, 0.0], [3.0, 4.0]])
    refs = [np.array([[0.0, 0.0]]), np.array([[0.0, 0.0], [3.0, 0.0]])]
    # set 1: distances 0 and 5 -> mean 2.5; set 2: 0 and min(5, 4) = 4 -> mean 2; mean over sets 2.25
    assert kmeans_distance(priv, refs) == pytest.approx(2.25)
    # normalised by the diameter of [0, 10]^2 = 10·√2
    assert kmeans_distance(priv, refs, bounds=(0, 10), normalise=True) == pytest.approx(2.25 / (10 * math.sqrt(2)))
    assert kmeans_distance(priv, refs, bounds=(0, 10), d=2, normalise=True) == pytest.approx(0.15909902576697318)
    # only private -> reference: a private solution that misses reference centres is not penalised
    assert kmeans_distance([[0.0, 0.0]], [np.array([[0.0, 0.0], [100.0, 100.0]])]) == 0.0
    assert kmeans_distance(refs[1], [refs[1]]) == 0.0


def test_box_diameter() -> None:
    assert box_diameter((-100, 100), 10) == pytest.approx(200 * math.sqrt(10))
    assert box_diameter((0, 16), 64) == pytest.approx(128.0)
    with pytest.raises(ValueError, match="a < b"):
        box_diameter((1, 1), 2)
    with pytest.raises(ValueError, match="dimension"):
        box_diameter((0, 1), 0)


@pytest.mark.parametrize(
    ("centres", "refs", "kwargs", "match"),
    [
        (np.empty((0, 2)), [CENTRES], {}, "empty"),
        ([[np.nan, 0.0]], [CENTRES], {}, "NaN"),
        ([[0.0, 0.0, 0.0]], [CENTRES], {}, r"shape \(k, 3\)"),
        (CENTRES, [np.zeros((2, 3))], {}, r"reference_sets\[0\]"),
        (CENTRES, [], {}, "reference_sets is empty"),
        (CENTRES, CENTRES, {}, "wrap it in a list"),
        (CENTRES, [CENTRES], {"normalise": True}, "pass bounds"),
        (CENTRES, [CENTRES], {"d": 3}, "does not match"),
        ([0.0, 0.0], [CENTRES], {}, r"shape \(k, d\)"),
    ],
)
def test_kmeans_distance_rejects_bad_input(centres: object, refs: object, kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        kmeans_distance(centres, refs, **kwargs)


@pytest.mark.parametrize(
    ("data", "centres", "match"),
    [
        (DATA, np.empty((0, 2)), "at least one centre"),
        (DATA, [[np.nan, 1.0]], "NaN"),
        (DATA, [[1.0, 2.0, 3.0]], r"shape \(k, 2\)"),
        (np.empty((0, 2)), CENTRES, "empty"),
        ([[np.nan, 0.0]], CENTRES, "NaN"),
        ([1.0, 2.0], CENTRES, r"shape \(n, d\)"),
    ],
)
def test_point_metrics_reject_bad_input(data: object, centres: object, match: str) -> None:
    for fn in (assign, inertia, lambda x, c: silhouette(x, c, seed=0), lambda x, c: accuracy(x, c, [0, 1, 1, 1])):
        with pytest.raises(ValueError, match=match):
            fn(data, centres)


def test_evaluate_matches_the_single_metrics() -> None:
    from sklearn.datasets import make_blobs

    x, y = make_blobs(n_samples=3000, n_features=4, centers=5, random_state=2, center_box=(-10, 10))
    x = np.clip(x, -12, 12)
    c = np.array([x[y == j].mean(0) for j in range(5)])
    refs = [c, c + 0.5]
    s = evaluate(x, y, c, refs, (-12, 12), seed=9, sample_size=1000)
    assert isinstance(s, ClusteringScores)
    assert s.n_centres == 5
    assert s.inertia == pytest.approx(inertia(x, c))
    assert s.accuracy == pytest.approx(accuracy(x, c, y))
    assert s.silhouette == silhouette(x, c, sample_size=1000, seed=9)
    assert s.kmeans_distance == pytest.approx(kmeans_distance(c, refs))
    assert s.kmeans_distance == pytest.approx(0.5 * math.sqrt(4) / 2)  # half of the sets at 0, half at ||0.5·1||
    assert s.norm_kmeans_distance == pytest.approx(s.kmeans_distance / (24 * 2))
    blank = evaluate(x, None, c, None, (-12, 12), seed=9, sample_size=1000)
    assert math.isnan(blank.accuracy) and math.isnan(blank.kmeans_distance) and math.isnan(blank.norm_kmeans_distance)
    assert blank.silhouette == s.silhouette and blank.inertia == s.inertia
