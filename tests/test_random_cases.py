"""The planted mechanisms (algorithms/hard/planted.py) and the random instances drawn from them
(benchmarks/random_cases.py): laws, true ε, the draw's contract, and one smoke run of the command.

Deterministic: fixed seeds.  The two frequency checks are a binomial and a chi-square test at level 1e-6 on one
fixed seed each."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from algorithms.classic.gaussian import analytic_gaussian_sigma, gaussian_delta
from algorithms.hard.planted import GaussianVector, IndependentRR, MarkedLaplace, TabulatedPMF
from benchmarks import random_cases as rc


def _sup_loss(mech: MarkedLaplace, x0: np.ndarray, x1: np.ndarray) -> float:
    """sup |ln f_x0 - ln f_x1| over the marker and continuous outputs far left, far right and between."""
    d = len(x0)
    rows = [np.full(d, np.nan) if mech.marker == "nan" else np.full(d, float(mech.marker))]
    for t in (-50.0, 50.0, 0.3):
        rows.append(np.where(x1 > x0, t, -t) + 0.0 * x0 + 0.123)
    rows_a = np.array(rows)
    return float(np.max(np.abs(mech.log_density(x0, rows_a) - mech.log_density(x1, rows_a))))


@pytest.mark.parametrize("marker", ["nan", -1.0])
@pytest.mark.parametrize("p_low,p_high", [(0.01, 0.05), (0.2, 0.02), (0.1, 0.1)])
def test_marked_laplace_true_epsilon_is_the_sup_of_its_loss(marker, p_low, p_high) -> None:
    mech = MarkedLaplace(scale=0.7, p_low=p_low, p_high=p_high, trigger=0.5, marker=marker)
    x0, x1 = np.zeros(3), np.array([1.0, 0.0, 0.0])
    assert mech.epsilon_on(x0, x1) == pytest.approx(_sup_loss(mech, x0, x1), rel=1e-9)


def test_marked_laplace_marker_frequency_and_input_marker_density() -> None:
    mech = MarkedLaplace(scale=1.0, p_low=0.0, p_high=0.02, trigger=1.0, marker="input")
    x0, x1 = np.array([0.0, 2.0]), np.array([1.0, 2.0])
    out = mech(x1, 200_000, np.random.default_rng(3))
    k = int((out == x1).all(axis=1).sum())
    assert stats.binomtest(k, 200_000, 0.02).pvalue > 1e-6
    ld1, ld0 = mech.log_density(x1, out), mech.log_density(x0, out)
    atom = (out == x1).all(axis=1)
    assert np.all(ld1[atom] == math.log(0.02)) and np.all(ld0[atom] == -np.inf)
    assert np.isfinite(ld0[~atom]).all() and np.isfinite(ld1[~atom]).all()
    assert mech.epsilon_on(x0, x1) == math.inf
    assert not (mech(x0, 100_000, np.random.default_rng(4)) == x0).all(axis=1).any()


def test_marked_laplace_rejects_bad_parameters() -> None:
    with pytest.raises(ValueError, match="scale"):
        MarkedLaplace(scale=0.0)
    with pytest.raises(ValueError, match="p_high"):
        MarkedLaplace(scale=1.0, p_high=1.0)
    with pytest.raises(ValueError, match="marker"):
        MarkedLaplace(scale=1.0, marker="zero")


def test_tabulated_pmf_draws_its_law_and_knows_its_epsilon() -> None:
    table = ((0.5, 0.3, 0.2), (0.25, 0.35, 0.4))
    mech = TabulatedPMF(table)
    out = mech(1, 100_000, np.random.default_rng(5))
    counts = np.bincount(out, minlength=3)
    assert stats.chisquare(counts, 100_000 * np.array(table[1])).pvalue > 1e-6
    assert mech.epsilon_on(0, 1) == pytest.approx(math.log(2.0))
    assert TabulatedPMF(((1.0, 0.0), (0.5, 0.5))).epsilon_on(0, 1) == math.inf
    with pytest.raises(ValueError, match="not a pmf"):
        TabulatedPMF(((0.5, 0.6),))


def test_independent_rr_loss_is_the_sum_over_the_differing_bits() -> None:
    eps = (0.1, 0.2, 0.3, 0.05)
    mech = IndependentRR(eps)
    x0, x1 = np.array([0, 1, 0, 1]), np.array([1, 1, 1, 1])
    assert mech.epsilon_on(x0, x1) == pytest.approx(0.4)
    worst = np.array([x1])                    # the output equal to x1 on every bit
    assert (mech.log_density(x1, worst) - mech.log_density(x0, worst))[0] == pytest.approx(0.4)
    with pytest.raises(ValueError, match="4 bits"):
        mech(np.array([0, 2, 0, 1]), 5, np.random.default_rng(0))


@pytest.mark.parametrize("eps,delta,dist", [(0.3, 1e-4, 0.5), (1.0, 1e-3, 1.3), (3.0, 1e-2, 2.0)])
def test_gaussian_vector_epsilon_is_that_of_its_analytic_sigma(eps: float, delta: float, dist: float) -> None:
    x0 = np.zeros(3)
    x1 = np.array([0.6, 0.0, 0.8]) * dist                  # l2 distance dist
    mech = GaussianVector(sigma=analytic_gaussian_sigma(eps, delta, dist), delta=delta)
    got = mech.epsilon_on(x0, x1)
    assert got == pytest.approx(eps, rel=1e-6)
    assert gaussian_delta(mech.sigma, got, dist) == pytest.approx(delta, rel=1e-6)
    assert mech.epsilon_on(x0, x0) == 0.0
    assert GaussianVector(sigma=mech.sigma, delta=0.9).epsilon_on(x0, x1) == 0.0   # delta(0) below 0.9


@pytest.mark.parametrize("index", range(60))
def test_drawn_cases_keep_their_contract(index: int) -> None:
    case = rc.draw_case(index, seed=11)
    again = rc.draw_case(index, seed=11)
    assert (case.kind, case.claim, case.true_epsilon, case.params) == (again.kind, again.claim, again.true_epsilon,
                                                                       again.params)
    assert case.kind == rc.KINDS[index % len(rc.KINDS)]
    per_pair = [case.mechanism.epsilon_on(a, b) for a, b in case.pairs]
    assert max(per_pair) == pytest.approx(case.true_epsilon)        # the worst pair is among them
    if case.violating:
        assert case.claim < case.true_epsilon
        if math.isfinite(case.true_epsilon):
            assert 1.1 - 1e-9 <= case.true_epsilon / case.claim <= 4.0 + 1e-9 or case.kind == "mixed-output"
    else:
        assert case.claim == pytest.approx(case.true_epsilon)


def test_summary_counts_false_alarms_and_detectable_violations() -> None:
    recs = [{"kind": "bits-rr", "violating": False, "verdict": "violation", "claim": 1.0, "oracle": 0.9,
             "bound": 1.1},
            {"kind": "bits-rr", "violating": True, "verdict": "pass", "claim": 1.0, "oracle": 1.5, "bound": 0.8},
            {"kind": "bits-rr", "violating": True, "verdict": "violation", "claim": 1.0, "oracle": 0.95,
             "bound": 1.01},
            {"kind": "pmf-table", "violating": True, "verdict": "violation", "claim": 1.0, "oracle": 2.0,
             "bound": 1.8}]
    s = rc.summarise(recs)
    assert (s["bits-rr"]["false_alarms"], s["bits-rr"]["detectable"], s["bits-rr"]["found"]) == (1, 1, 0)
    assert (s["bits-rr"]["clear"], s["bits-rr"]["found_clear"]) == (1, 0)
    assert (s["all"]["clear"], s["all"]["found_clear"]) == (2, 1)
    assert s["bits-rr"]["found_undetectable"] == 1
    assert s["all"]["found"] == 1 and s["all"]["ratio_min"] == pytest.approx(0.8 / 1.5)


def test_the_command_runs_keeps_results_and_writes_its_section(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(rc, "QUICK_SAMPLES", 20_000)
    monkeypatch.setattr(rc, "QUICK_SEARCH", 4_000)
    monkeypatch.setattr(rc, "ORACLE_ROWS", 400_000)
    results, doc = tmp_path / "r.jsonl", tmp_path / "doc.md"
    doc.write_text("# Doc\n\n<!-- BEGIN random-cases seed 0 -->\nold\n<!-- END random-cases seed 0 -->\n\ntail\n")
    assert rc.main(["--count", "2", "--quick", "--results", str(results), "--write", str(doc)]) == 0
    kept = [json.loads(line) for line in results.read_text().splitlines()]
    assert [r["index"] for r in kept] == [0, 1]
    text = doc.read_text()
    assert "old" not in text and text.endswith("tail\n")
    assert "`python -m benchmarks.random_cases --count 2 --quick --write " in text and "2 instances" in text
    results.write_text(results.read_text().replace('"verdict": "', '"verdict": "kept-'))
    assert rc.main(["--count", "2", "--quick", "--results", str(results)]) == 0        # finished ones are skipped
    assert len(results.read_text().splitlines()) == 2
    lines = results.read_text().splitlines()
    other = json.loads(lines[1])
    drawn = other["claim"]
    other["claim"] += 1.0                     # a line of another version of the classes: its instance differs
    results.write_text(lines[0] + "\n" + json.dumps(other) + "\n")
    assert rc.main(["--count", "2", "--quick", "--results", str(results)]) == 0
    rerun = [json.loads(line) for line in results.read_text().splitlines()]
    assert len(rerun) == 3 and rerun[2]["index"] == 1 and rerun[2]["claim"] == drawn


@pytest.mark.parametrize("index", [9 + 11 * k for k in range(8)])
def test_mixing_cases_release_laplace_noise_through_their_matrix(index: int) -> None:
    # the sampler is M·(x + Lap(scale)): unmixed by M⁻¹ its rows are Laplace around x (mean x, mean |z| = scale),
    # and the log density integrates the unmixed noise's law (checked at the rows against scipy's Laplace)

    case = rc.draw_case(index, seed=11)
    assert case.kind == "mixing"
    mech = case.mechanism
    x0 = case.pairs[0][0]
    out = mech(x0, 200_000, np.random.default_rng(index))
    z = out @ np.linalg.inv(mech.matrix).T - x0
    assert np.abs(z.mean(axis=0)).max() < 6 * mech.scale * math.sqrt(2 / 200_000)      # 6 standard errors
    assert np.abs(np.abs(z).mean(axis=0) / mech.scale - 1).max() < 0.02
    expected = stats.laplace.logpdf(z[:5], scale=mech.scale).sum(axis=1) - np.linalg.slogdet(mech.matrix)[1]
    assert mech.log_density(x0, out[:5]) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("index", [10 + 11 * k for k in range(6)])
def test_iterates_cases_have_the_true_epsilon_of_their_pairs(index: int) -> None:
    # the worst pair's ε is the drawn target (the mechanism's ε parameter scaled to it); a control claims it
    case = rc.draw_case(index, seed=11)
    assert case.kind == "iterates"
    mech = case.mechanism
    assert case.true_epsilon == pytest.approx(max(mech.epsilon_on(a, b) for a, b in case.pairs))
    assert 0.2 <= case.true_epsilon <= 3.0
    assert (case.claim < case.true_epsilon) == case.violating
    assert mech(case.pairs[0][0], 7, np.random.default_rng(0)).shape == (7, case.params["steps"])
