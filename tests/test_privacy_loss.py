"""Tests of dpverify.statistical.privacy_loss (the descriptive privacy-loss histogram of audit reports)."""

from __future__ import annotations

import math

import numpy as np

import dpverify
from dpverify.statistical.privacy_loss import MAX_ROWS, loss_histogram


def test_randomized_response_losses_sit_at_plus_minus_ln3() -> None:
    rng = np.random.default_rng(0)
    n = 20_000
    out0 = (rng.random(n) < 0.75).astype(np.int64)  # P(1 | x0) = 3/4, P(1 | x1) = 1/4: losses ±ln 3
    out1 = (rng.random(n) < 0.25).astype(np.int64)
    h = loss_histogram(out0, out1, bins=10)
    assert h is not None and h["binning"] == "values" and h["output_bins"] == 2
    assert h["samples"] == [n, n] and sum(h["mass"]) == 1.0
    # 20 000 samples per side: each per-value frequency within 0.02 of the truth (> 6 sd): losses within 0.1.
    assert abs(h["max_abs_finite_loss"] - math.log(3)) < 0.1
    edges, mass = np.array(h["edges"]), np.array(h["mass"])
    centres = (edges[:-1] + edges[1:]) / 2
    assert abs(mass[centres > 0].sum() - 0.75) < 0.02  # the x0 mass of output 1 (loss +ln 3)


def test_outputs_seen_on_one_side_only_have_infinite_loss() -> None:
    out0 = np.array([0, 0, 1, 2])
    out1 = np.array([0, 1, 1, 3])
    h = loss_histogram(out0, out1)
    assert h["mass_plus_inf"] == 0.25 and h["mass_minus_inf"] == 0.25  # output 2 under x0, output 3 under x1


def test_continuous_scalars_use_quantile_bins_and_vectors_are_skipped() -> None:
    rng = np.random.default_rng(1)
    h = loss_histogram(rng.laplace(0, 1, 50_000), rng.laplace(1, 1, 50_000))
    assert h["binning"] == "quantile bins" and h["samples"] == [MAX_ROWS, MAX_ROWS]
    assert loss_histogram(rng.normal(size=(100, 3)), rng.normal(size=(100, 3))) is None
    assert loss_histogram(np.zeros(0), np.zeros(3)) is None


def test_the_audit_reports_its_witness_pairs_histogram() -> None:
    from algorithms.classic.laplace import Laplace

    r = dpverify.audit(Laplace(epsilon=0.5), [(0.0, 1.0)], 0.5, samples=50_000, seed=0)
    h = r.loss_histogram
    assert h is not None and h["binning"] == "quantile bins"
    # true losses lie in [-0.5, 0.5]; 40 quantile bins of 20 000 samples: within 0.3 of it (descriptive only)
    assert 0.3 < h["max_abs_finite_loss"] < 0.8
    assert r.to_dict()["loss_histogram"] == h
