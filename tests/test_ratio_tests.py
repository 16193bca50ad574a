"""The audit's tests of a finalist's fresh counts (``dpverify.audit(ratio_test=...)``,
dpverify/statistical/ratio_tests.py): the conditional Poisson bound against statsmodels' exact conditional test, its
coverage, the choice between the two tests, and what a report shows of Poisson-sized samples.

Statistical tests here use fixed seeds; each states its error level."""

from __future__ import annotations

import math

import numpy as np
import pytest
from statsmodels.stats import rates

import dpverify
from algorithms.broken.laplace_half_noise import LaplaceHalfNoise
from algorithms.classic.laplace import Laplace
from dpverify.errors import InputError
from dpverify.statistical import ratio_tests
from dpverify.statistical.oracle import level_set_bound
from dpverify.statistical.stats import poisson_ratio_lower, poissonized_size, projected_bounds
from dpverify.suites.records import witness_upper_bound


@pytest.mark.parametrize("k_num, k_den, level", [(96638, 86321, 0.05 / 3), (10, 3, 0.1), (5, 0, 0.05),
                                                 (40, 45, 0.05), (1, 0, 0.2)])
def test_poisson_ratio_bound_inverts_the_exact_conditional_test(k_num, k_den, level):
    """statsmodels has the exact conditional test of two Poisson rates (its p-value) but not its interval: at our
    bound ``b`` its one-sided p-value of 'ratio > e^b' is the level, so the bound is that test inverted."""
    b = float(poisson_ratio_lower(k_num, k_den, level))
    with np.errstate(divide="ignore"):          # its point estimate of a ratio with a count of 0
        r = rates.test_poisson_2indep(k_num, 1.0, k_den, 1.0, value=math.exp(b), method="exact-cond",
                                      compare="ratio", alternative="larger")
    assert r.pvalue == pytest.approx(level, rel=1e-6)
    assert float(poisson_ratio_lower(0, 7, 0.05)) == -math.inf


@pytest.mark.parametrize("p, q, n, level", [(0.48383, 0.43779, 200_000, 0.05 / 3), (0.011, 0.01, 20_000, 0.1),
                                            (0.9, 0.9 * math.exp(-0.1), 10_000, 0.1), (0.3, 0.3, 1000, 0.05)])
def test_poisson_ratio_bound_covers_on_poisson_sized_samples(p, q, n, level):
    """20,000 simulated audits of one event on Poisson-sized samples (sizes of mean poissonized_size(n), counts
    binomial given the size): the bound exceeds ln(p/q) in at most ``level`` of them.  Asserted with 3 standard errors
    of slack: a correct bound fails this with probability below 0.0014 per case."""
    rng = np.random.default_rng(11)
    reps, m = 20_000, poissonized_size(n)
    k_num = rng.binomial(rng.poisson(m, reps), p)
    k_den = rng.binomial(rng.poisson(m, reps), q)
    miss = float(np.mean(poisson_ratio_lower(k_num, k_den, level) > math.log(p / q)))
    assert miss <= level + 3 * math.sqrt(level * (1 - level) / reps)


def test_projected_bounds_choose_the_tighter_test():
    cp, po = projected_bounds([0.01, 0.9], [0.009, 0.85], 2_000_000, 0.1)
    assert po[0] > cp[0]               # rare events: the whole level on one binomial wins
    assert cp[1] > po[1]               # frequent ones: the Poisson counts' missing 1 - p costs more
    cp_d, po_d = projected_bounds(0.01, 0.009, 2_000_000, 0.1, delta=1e-6)
    assert po_d == -math.inf and np.isfinite(cp_d)       # the ratio alone bounds no delta claim
    assert poissonized_size(10_000) == 10_000 - 400 and poissonized_size(10) == 0


def test_auto_audit_draws_poisson_sizes_within_the_budget_and_certifies_more():
    """The half-noise Laplace (true ε 0.2 against 0.1): with ``"auto"`` its tail events are tested on Poisson-sized
    samples, no larger than the budget; at this seed the bound is above the default test's (the narrower
    interval); a δ claim keeps Clopper--Pearson."""
    kw = dict(samples=200_000, search_samples=50_000, seed=3, workers=1)
    auto = dpverify.audit(LaplaceHalfNoise(0.1), [(0.0, 1.0)], 0.1, ratio_test="auto", **kw)
    cp = dpverify.audit(LaplaceHalfNoise(0.1), [(0.0, 1.0)], 0.1, **kw)
    t = auto.witness.test
    assert t.method == "poisson" and t.samples <= 200_000 and t.n_den <= 200_000 and t.samples != t.n_den
    assert cp.witness.test.method == "clopper-pearson" and cp.witness.test.n_den == 200_000
    assert auto.epsilon_lower_bound > cp.epsilon_lower_bound
    assert auto.to_dict()["witness"]["samples_den"] == t.n_den and auto.to_dict()["witness"]["method"] == "poisson"
    with_delta = dpverify.audit(LaplaceHalfNoise(0.1), [(0.0, 1.0)], 0.1, 1e-6, ratio_test="auto", **kw)
    assert {x.method for x in with_delta.tests} == {"clopper-pearson"}
    with pytest.raises(InputError, match="ratio_test must be one of"):
        dpverify.audit(Laplace(0.1), [(0.0, 1.0)], 0.1, ratio_test="exact", **kw)


def test_auto_audit_false_alarms_on_a_tight_claim_stay_below_alpha():
    """Laplace(0.5) claimed 0.5-DP on the pair (0, 1): its tail events have loss exactly 0.5, the hardest case for
    false alarms.  60 seeds at α = 0.1: a test whose false-alarm rate is at most 0.1 raises more than 13 alarms with
    probability below 0.01 (binomial tail)."""
    alarms = sum(dpverify.audit(Laplace(0.5), [(0.0, 1.0)], 0.5, samples=20_000, search_samples=5_000, alpha=0.1,
                                seed=s, workers=1, ratio_test="auto").violation for s in range(60))
    assert alarms <= 13


def test_a_poisson_size_above_the_budget_leaves_the_pair_untested(monkeypatch):
    monkeypatch.setattr(ratio_tests, "_poisson_sizes", lambda entropy, i, n: (n + 1, n))
    r = dpverify.audit(LaplaceHalfNoise(0.1), [(0.0, 1.0)], 0.1, samples=20_000, search_samples=5_000, seed=0,
                       workers=1, ratio_test="auto")
    assert r.witness is None and not r.violation
    assert all(t.method == "poisson" and t.samples == 0 and t.epsilon_lower_bound == -math.inf for t in r.tests)
    assert any("exceeded the budget" in n for n in r.notes)


def test_records_and_oracle_know_poisson_sizes():
    """A witness of Poisson-sized samples: the certify rule's upper bound reads the denominator's own size; the
    oracle with ``"auto"`` is never below the Clopper--Pearson oracle."""
    rec = {"witness": {"count_num": 900, "count_den": 800, "samples": 10_100, "samples_den": 9_900,
                       "p_num_low": 0.0, "p_den_high": 0.0}, "claim": {"epsilon": 0.1}}
    from dpverify.statistical.stats import clopper_pearson_lower, clopper_pearson_upper
    rec["witness"]["p_num_low"] = float(clopper_pearson_lower(900, 10_100, 0.01))
    rec["witness"]["p_den_high"] = float(clopper_pearson_upper(800, 9_900, 0.01))
    want = math.log(float(clopper_pearson_upper(900, 10_100, 0.01)) / float(clopper_pearson_lower(800, 9_900, 0.01)))
    assert witness_upper_bound(rec) == pytest.approx(want, rel=1e-6)
    p, q = np.array([0.3, 0.01, 0.001]), np.array([0.25, 0.008, 0.0005])
    assert level_set_bound(p, q, 100_000, 0.1, ratio_test="auto")[0] >= level_set_bound(p, q, 100_000, 0.1)[0]


def test_suite_entries_take_the_ratio_test(tmp_path):
    """``ratio_test`` in a suite entry reaches the audit (its witness records the test); a sequential run ignores it
    (its test martingales have no such option); a value outside RATIO_TESTS is a suite error naming the key."""
    from dpverify.errors import SuiteError
    from dpverify.suites import load_suite, run_entry
    text = '''[suite]
name = "t"

[[entry]]
id = "half"
kind = "statistical"
mechanism = "algorithms.broken.laplace_half_noise:LaplaceHalfNoise"
params = { epsilon = 0.1 }
pairs = [[0.0, 1.0]]
claim = { epsilon = 0.1 }
expect = "violation"
ratio_test = "auto"
quick = { samples = 100000, search_samples = 20000 }
'''
    (tmp_path / "s.toml").write_text(text)
    entry = load_suite(tmp_path / "s.toml").entries[0]
    assert entry.audit_options()["ratio_test"] == "auto"
    out = run_entry(entry, mode="quick", run_seed=0, workers=1)
    assert out.outcome == "violation" and out.witness["method"] == "poisson"
    seq = run_entry(entry, mode="quick", run_seed=0, workers=1, sequential=True)
    assert seq.error is None and seq.outcome == "violation"
    (tmp_path / "bad.toml").write_text(text.replace('"auto"', '"exact"'))
    with pytest.raises(SuiteError, match="ratio_test"):
        load_suite(tmp_path / "bad.toml")


def test_auto_detects_a_small_violation_more_often_than_clopper_pearson():
    """Laplace(0.11) claimed 0.1-DP (a violation of 1.1 times the claim), 200,000 test samples, the same 40 seeds for
    both tests (so the same searches and finalists): the conditional test's narrower bound certifies the violation
    in more of them.  A fixed-seed comparison, deterministic; the power table of docs/auditor.md
    (``python docs/make_auditor_table.py --ratio-test auto``) gives the counts at three budgets."""
    found = {rt: sum(dpverify.audit(Laplace(0.11), [(0.0, 1.0)], 0.1, samples=200_000, search_samples=50_000,
                                    seed=s, workers=1, ratio_test=rt).violation for s in range(40))
             for rt in ("clopper-pearson", "auto")}
    assert found["auto"] >= found["clopper-pearson"] + 5
