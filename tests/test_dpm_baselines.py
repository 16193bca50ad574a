"""Baselines (KMeans++, DP-Lloyd via diffprivlib) and data sets (Synth, digits) of DPM's evaluation,
seed 004 Sec. 6.1 / Table 1 (algorithms.dpm.baselines, algorithms.dpm.datasets)."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

from algorithms.dpm.baselines import DIFFPRIVLIB_FIX, dp_lloyd, kmeans
from algorithms.dpm.datasets import DIGITS_BOUNDS, SYNTH_BOUNDS, clip_to_bounds, digits, synth
from algorithms.dpm.metrics import accuracy, kmeans_distance


@pytest.fixture(scope="module")
def small_synth():  # 2 000 points, 5 Gaussians in (-100, 100)^3
    return synth(n=2000, d=3, centers=5, seed=7)


def test_synth_is_make_blobs_clipped_and_counts_the_clipped_points() -> None:
    from sklearn.datasets import make_blobs

    ds = synth(n=3000, d=20, centers=16, seed=42)
    raw, y = make_blobs(n_samples=3000, n_features=20, centers=16, random_state=42, center_box=(-100, 100),
                        cluster_std=1)
    assert ds.bounds == SYNTH_BOUNDS == (-100.0, 100.0)
    assert ds.data.shape == (3000, 20) and ds.n == 3000 and ds.d == 20 and ds.n_classes == 16
    assert np.array_equal(ds.labels, y)
    outside = np.any(np.abs(raw) > 100, axis=1)
    assert ds.n_clipped == int(outside.sum()) > 0  # d = 20 with 16 centres: some points leave the box
    assert np.array_equal(ds.data, np.clip(raw, -100, 100))
    assert ds.data.min() >= -100 and ds.data.max() <= 100
    data, labels, bounds = ds  # unpacks as (data, labels, bounds)
    assert data is ds.data and labels is ds.labels and bounds == ds.bounds
    again = synth(n=3000, d=20, centers=16, seed=42)
    assert np.array_equal(again.data, ds.data)


def test_synth_rejects_bad_parameters() -> None:
    with pytest.raises(ValueError, match="centers=10 > n=5"):
        synth(n=5, d=2, centers=10)
    with pytest.raises(ValueError, match="d \\(the dimension\\)"):
        synth(n=5, d=0, centers=1)
    with pytest.raises(ValueError, match="seed"):
        synth(n=5, d=1, centers=1, seed=-1)


def test_digits_offline_shape_range_classes() -> None:
    ds = digits()
    assert ds.data.shape == (1797, 64)
    assert ds.bounds == DIGITS_BOUNDS == (0.0, 16.0)
    assert ds.data.min() == 0.0 and ds.data.max() == 16.0 and ds.n_clipped == 0
    assert sorted(np.unique(ds.labels).tolist()) == list(range(10))


def test_clip_to_bounds_counts_points_not_coordinates() -> None:
    x = np.array([[0.0, 2.5], [-3.0, 3.0], [1.0, 1.0], [2.0, -1.0]])  # the last one is on the boundary
    clipped, n = clip_to_bounds(x, (-1.0, 2.0))
    assert n == 2
    assert clipped.tolist() == [[0.0, 2.0], [-1.0, 2.0], [1.0, 1.0], [2.0, -1.0]]


def test_kmeans_recovers_separated_blobs_and_is_seeded(small_synth) -> None:
    c = kmeans(small_synth.data, 5, seed=3)
    assert c.shape == (5, 3)
    assert np.array_equal(c, kmeans(small_synth.data, 5, seed=3))
    seq = np.random.SeedSequence(3)
    assert np.array_equal(kmeans(small_synth.data, 5, seed=seq), kmeans(small_synth.data, 5, seed=seq))
    assert accuracy(small_synth.data, c, small_synth.labels) == 1.0  # σ = 1 blobs ~100 apart


def test_kmeans_matches_sklearn_setting(small_synth) -> None:
    from sklearn.cluster import KMeans

    ref = KMeans(n_clusters=5, n_init=1, max_iter=300, random_state=11).fit(small_synth.data).cluster_centers_
    assert np.array_equal(kmeans(small_synth.data, 5, 11), ref)


def test_dp_lloyd_runs_is_seeded_and_is_worse_than_kmeans(small_synth) -> None:
    pytest.importorskip("diffprivlib")
    x = small_synth.data
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing escapes: PrivacyLeakWarning is never triggered with bounds
        c = dp_lloyd(x, 5, SYNTH_BOUNDS, 1.0, seed=4)
    assert c.shape == (5, 3) and np.all(np.isfinite(c))
    assert np.array_equal(c, dp_lloyd(x, 5, SYNTH_BOUNDS, 1.0, seed=4))
    assert not np.array_equal(c, dp_lloyd(x, 5, SYNTH_BOUNDS, 1.0, seed=5))
    ref = [kmeans(x, 5, seed=0)]
    # private centres are noisier than the non-private ones, but inside the box's scale
    kd = kmeans_distance(c, ref)
    assert 0.0 < kd < 200 * np.sqrt(3)


@pytest.mark.parametrize(
    ("k", "match"), [(0, ">= 1"), (-2, ">= 1"), (2001, "larger than the number of points"), (2.5, "integer")]
)
def test_baselines_reject_bad_k(small_synth, k: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        kmeans(small_synth.data, k, 0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=match):
        dp_lloyd(small_synth.data, k, SYNTH_BOUNDS, 1.0, 0)  # type: ignore[arg-type]


def test_baselines_reject_nan_and_out_of_range_data(small_synth) -> None:
    bad = small_synth.data.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        kmeans(bad, 5, 0)
    with pytest.raises(ValueError, match="NaN"):
        dp_lloyd(bad, 5, SYNTH_BOUNDS, 1.0, 0)
    out = small_synth.data.copy()
    out[:2, 0] = 150.0
    with pytest.raises(ValueError, match=r"2 of 2000 points lie outside .*clip first"):
        dp_lloyd(out, 5, SYNTH_BOUNDS, 1.0, 0)
    with pytest.raises(ValueError, match="epsilon"):
        dp_lloyd(small_synth.data, 5, SYNTH_BOUNDS, 0.0, 0)
    with pytest.raises(ValueError, match="bounds"):
        dp_lloyd(small_synth.data, 5, (1.0, -1.0), 1.0, 0)
    with pytest.raises(ValueError, match="seed"):
        kmeans(small_synth.data, 5, -1)


def test_dp_lloyd_missing_diffprivlib_names_the_fix(small_synth, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "diffprivlib.models", None)  # import now raises ImportError
    with pytest.raises(ImportError, match="diffprivlib") as info:
        dp_lloyd(small_synth.data, 5, SYNTH_BOUNDS, 1.0, 0)
    assert DIFFPRIVLIB_FIX in str(info.value) and "scikit-learn<1.9" in str(info.value)


def test_importing_algorithms_dpm_does_not_import_diffprivlib() -> None:
    code = ("import sys, algorithms.dpm, algorithms.dpm.baselines, algorithms.dpm.metrics, "
            "algorithms.dpm.datasets, algorithms.experiments.dpm_table_2; print('diffprivlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
