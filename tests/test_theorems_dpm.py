"""Seed 004's utility theorems (algorithms/theorems/dpm.py): bounds recomputed by hand, hypotheses, exact values
against Monte Carlo, the samplers against one-shot reference runs of algorithms.dpm, and verdicts through
dpverify.check_theorem.

Every seed is fixed and nothing is retried.  Monte Carlo vs exact comparisons use a 6-sigma band (false alarm
< 2e-9 each); the Kolmogorov-Smirnov test rejects at 1e-4 under the null.  The verdicts of the suite entries
(audits/theorems_seed004.toml) are reproduced by tests/test_theorem_suites.py.
"""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from scipy import stats

from algorithms.dpm.dpm import DPM
from algorithms.dpm.score import emptiness, score
from algorithms.dpm.split import DPMSplitEM
from algorithms.theorems.dpm import (
    SEC52_FRACTION,
    SEC52_PRINTED,
    CentralSplitEmptiness,
    CentralSplitProbability,
    EarlyHalting,
    ExponentialMechanismUtility,
    MinimalEmptiness,
    NoisyCountCloseness,
    NoisyCountCoverage,
    OuterSplitProbability,
    dpm_noisy_counts,
    split_dataset,
)
from dpverify.theorems.check import check_sweep, check_theorem

DELTA = 1.0 / (1e5 * math.sqrt(1e5))          # δ = 1/(n√n) with n = 10^5 (Sec. 6.1)
THREE = dict(data="clumps", clumps=[[0.5, 3]], bounds=(0.0, 2.0), beta=1.0, n_tilde=200.0, lam=0.0)
ETA3 = dict(data="clumps", clumps=[[0.5, 2], [2.5, 1]], bounds=(0.0, 3.0), beta=1.0, lam=0.0, t_prime=0.72)
SMALL = dict(n_points=2000, d=1, bounds=(-10.0, 10.0), beta=0.5, epsilon=0.05, t_prime=0.5)


def six_sigma(estimate: float, p: float, n: int) -> bool:
    return abs(estimate - p) <= 6.0 * math.sqrt(max(p * (1 - p), 1e-12) / n)


def random_clump_nodes(count: int, seed: int) -> list[dict]:
    """Small 1-D nodes: clumps at interval centres of [0, K], ñ within a factor e of |S|, random ε and t′."""
    rng = np.random.default_rng(seed)
    nodes = []
    while len(nodes) < count:
        k = int(rng.integers(2, 9))
        counts = rng.integers(0, 40, size=k) * (rng.random(k) < 0.6)
        if counts.sum() == 0:
            continue
        nodes.append(dict(data="clumps", clumps=[[i + 0.5, int(c)] for i, c in enumerate(counts) if c],
                          bounds=(0.0, float(k)), beta=1.0, lam=0.0,
                          n_tilde=float(counts.sum() * math.exp(rng.uniform(-1.0, 1.0))),
                          epsilon=float(math.exp(rng.uniform(-5.0, 2.0))), t_prime=float(rng.uniform(0.0, 1.0))))
    return nodes


# ---------------------------------------------------------------- DPM's noisy counts

def test_noisy_counts_are_dpm_root_counts_bit_for_bit() -> None:
    x = np.linspace(-50.0, 50.0, 300)[:, None]
    dpm = DPM(epsilon=1.0, delta=1e-6, bounds=(-100.0, 100.0), d=1)
    full = dpm.sample(x, 6, np.random.default_rng(3)).n_tilde       # a whole DPM run, same generator
    nt, eps, lam = dpm_noisy_counts(300, 6, np.random.default_rng(3), epsilon=1.0, delta=1e-6)
    assert np.array_equal(nt, full)
    assert eps == dpm.budgets()["eps_cnt"][0] and lam == dpm.budgets()["lam"][0]


@pytest.mark.parametrize("level", [0, 3, 7])
def test_level_counts_have_the_level_budget_and_a_laplace_law(level: int) -> None:
    bud = DPM(epsilon=1.0, delta=DELTA, bounds=(-100.0, 100.0), d=1).budgets()
    nt, eps, lam = dpm_noisy_counts(1000, 50_000, np.random.default_rng(level), epsilon=1.0, delta=DELTA,
                                    level=level)
    assert eps == pytest.approx(bud["eps_cnt"][level], rel=1e-12)
    assert lam == pytest.approx(bud["lam"][level], rel=1e-12)
    # the draws are |S| + Lap(1/ε_cnt_level): KS test, false alarm 1e-4
    assert stats.kstest(nt, stats.laplace(loc=1000.0, scale=1.0 / eps).cdf).pvalue > 1e-4


def test_dpm_level_budgets_by_hand() -> None:
    # ε_cnt_0 = 0.18/Σ_{j≤7} √2^j, δ_cnt = 0.2δ/8, λ_0 = −ln(2δ_cnt)/ε_cnt_0 ≈ 4077.0 (Sec. 6.1, the code's δ_cnt)
    eps0 = 0.18 / sum(math.sqrt(2.0) ** j for j in range(8))
    th = NoisyCountCloseness(epsilon=1.0, delta=DELTA, kappa_shift=0.0)
    assert th.eps_cnt == pytest.approx(eps0, rel=1e-12) and th.eps_cnt == pytest.approx(0.004971, abs=1e-6)
    assert th.delta_cnt == pytest.approx(0.2 * DELTA / 8, rel=1e-12)
    assert th.lam == pytest.approx(-math.log(2 * 0.2 * DELTA / 8) / eps0, rel=1e-12)
    assert th.lam == pytest.approx(4077.03, abs=0.01)


# ---------------------------------------------------------------- Lemma 8 and Eq. (1)

@pytest.mark.parametrize("shift", [-2.0, 0.0, 0.02, 1.0, 3.0])
def test_lemma8_bounds_and_exact_by_hand(shift: float) -> None:
    corrected = NoisyCountCloseness(delta=DELTA, kappa_shift=shift)
    printed = NoisyCountCloseness(delta=DELTA, kappa_shift=shift, form="printed")
    # ½e^{−κε}/δ_cnt with κ = λ + shift/ε and λ = −ln(2δ_cnt)/ε is e^{−shift}
    assert corrected.bound() == pytest.approx(math.exp(-shift), rel=1e-9)
    assert printed.bound() == pytest.approx(math.exp(-shift) * 0.2 / 8, rel=1e-9)
    lap = stats.laplace(scale=1.0 / corrected.eps_cnt)
    k, lam = corrected.k, corrected.lam
    assert corrected.exact() == pytest.approx(lap.sf(lam + k) + lap.cdf(lam - k), rel=1e-9, abs=1e-15)
    if shift >= 0:   # κ ≥ λ: exact = (½ + 2δ_cnt²)·(the corrected bound)
        assert corrected.exact() == pytest.approx((0.5 + 2 * corrected.delta_cnt ** 2) * corrected.bound(), rel=1e-9)


def test_lemma8_exact_matches_the_sampler() -> None:
    th = NoisyCountCloseness(delta=DELTA, level=5, kappa_shift=0.3)
    x = th.sample(200_000, np.random.default_rng(11))
    assert x.dtype == bool and six_sigma(x.mean(), th.exact(), x.size)


def test_lemma8_parameters_are_checked() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        NoisyCountCloseness(kappa=10.0, kappa_shift=0.5)
    with pytest.raises(ValueError, match="kappa >= 0"):
        NoisyCountCloseness(delta=DELTA, kappa_shift=-1e6)
    with pytest.raises(ValueError, match="form"):
        NoisyCountCloseness(form="appendix")
    with pytest.raises(ValueError, match="level"):
        NoisyCountCloseness(tau_r=3, level=4)


def test_coverage_forms_by_hand() -> None:
    eq1 = NoisyCountCoverage(delta=0.5, tau_r=1, size_s=20)
    assert eq1.bound() == pytest.approx(0.05, rel=1e-12) == eq1.delta_cnt     # ½e^{−λε} = DPM's δ_cnt'
    lap = stats.laplace(scale=1.0 / eq1.eps_cnt)
    cor2 = NoisyCountCoverage(delta=0.5, tau_r=1, size_s=20, form="corollary-2")
    lem7 = NoisyCountCoverage(delta=0.5, tau_r=1, size_s=20, form="lemma-7")
    assert cor2.bound() == pytest.approx(lap.sf(20 + eq1.lam - 1), rel=1e-9)
    assert lem7.bound() == pytest.approx(lap.sf(20 + eq1.lam), rel=1e-9)
    x = eq1.sample(200_000, np.random.default_rng(5))
    assert six_sigma(x.mean(), eq1.exact(), x.size)


# ---------------------------------------------------------------- Sec. 5.2

def test_sec52_constant_and_level_formula() -> None:
    frac = math.erf(0.25 / math.sqrt(2.0))        # Φ(1/4) − Φ(−1/4)
    assert SEC52_FRACTION == pytest.approx(frac, abs=1e-15)
    assert 1 - frac == pytest.approx(0.8025873, abs=1e-7) and round(1 - frac, 5) == 0.80259 != SEC52_PRINTED
    expected = [0.80258, 0.60516, 0.21032, -0.57936]
    for i, b in enumerate(expected):
        th = MinimalEmptiness(n_points=400, split_level=i)
        assert th.bound() == pytest.approx(b, abs=1e-12)
        assert bool(th.hypotheses()) == (i >= 3)
    msg = MinimalEmptiness(n_points=400, split_level=3).hypotheses()[0]
    assert "negative" in msg and "-0.5794" in msg
    assert MinimalEmptiness(n_points=400, form="sec5.4").bound() == 0.8
    assert "level-0" in MinimalEmptiness(n_points=400, split_level=1, form="sec5.4").hypotheses()[0]


@pytest.mark.parametrize("level,candidate", [(0, "median"), (1, "median"), (2, "grid"), (0, "grid")])
def test_minimal_emptiness_sampler_against_one_shot_runs(level: int, candidate: str) -> None:
    th = MinimalEmptiness(n_points=400, sigma=4.0, split_level=level, candidate=candidate, epsilon=5.0)
    n = 5
    got = th.sample(n, np.random.default_rng(21))
    # reference: the same stream, one run at a time, algorithms.dpm.score.emptiness on each node
    rng = np.random.default_rng(21)
    size_s = 400 // 2 ** level
    nt, _, _ = dpm_noisy_counts(size_s, n, rng, epsilon=5.0, delta=th.delta_used, level=level)
    data = np.clip(rng.normal(th.mu, 4.0, size=(n, 400)), -100.0, 100.0)
    start = 0 if level == 0 else 2 ** (level - 1) * size_s
    for r in range(n):
        s = np.sort(data[r])[start:start + size_s]
        if candidate == "median":
            ref = emptiness(s, [np.median(s)], th.beta, nt[r])[0]
        else:
            ref = emptiness(s, -100.0 + (np.arange(th.K) + 0.5) * th.beta, th.beta, nt[r]).min()
        assert got[r] == pytest.approx(ref, abs=1e-12)


def test_minimal_emptiness_is_a_quantile_claim() -> None:
    th = MinimalEmptiness(n_points=400, quantile=0.1)
    assert (th.quantity, th.direction, th.level) == ("quantile", "at_least", 0.1)
    with pytest.raises(ValueError, match="quantile"):
        MinimalEmptiness(quantile=1.0)


# ---------------------------------------------------------------- Theorem 2 / Corollary 5

@pytest.mark.parametrize("eps", [0.01, 0.1, 1.0])
def test_cor5_thresholds_and_exact_by_hand(eps: float) -> None:
    printed = ExponentialMechanismUtility(**THREE, epsilon=eps, kappa=0.8, form="printed")
    corrected = ExponentialMechanismUtility(**THREE, epsilon=eps, kappa=0.8, form="corrected")
    # scores: candidate 0 holds the three points at rank 0, candidate 1 has rank 3 (lower outer quantile)
    f0, f1 = 5.0 * (1 - 3 / 200), 3 * 0.3 / (200 / 12) + 5.0
    assert np.allclose(printed.f, [f0, f1], atol=1e-12)
    d_f = 8.6 / 200
    assert printed.threshold == pytest.approx(f1 - 2 * d_f * (math.log(2) + 0.8), abs=1e-12)
    assert corrected.threshold == pytest.approx(f1 - 2 * d_f / eps * (math.log(2) + 0.8), abs=1e-12)
    b = eps / (2 * d_f)
    assert printed.exact() == pytest.approx(1 / (1 + math.exp(b * (f1 - f0))), rel=1e-9)
    assert corrected.exact() == (printed.exact() if eps == 1.0 else 0.0)
    assert printed.bound() == pytest.approx(math.exp(-0.8))


def test_cor5_exact_matches_the_sampler_and_dpm_split_em() -> None:
    th = ExponentialMechanismUtility(**THREE, epsilon=0.05, kappa=0.8, form="printed")
    x = th.sample(100_000, np.random.default_rng(8))
    assert six_sigma(x.mean(), th.exact(), x.size)
    # the event of each run is "DPMSplitEM's draw scores at or below the threshold"
    mech = DPMSplitEM(0.05, 200.0, 1.0, bounds=(0.0, 2.0))
    draws = mech(np.full(3, 0.5), 1000, np.random.default_rng(9))
    assert np.array_equal(th.sample(1000, np.random.default_rng(9)), mech.scores(np.full(3, 0.5))[draws] <= th.threshold)


def test_score_gap_is_at_most_size_times_sensitivity_at_fixed_count() -> None:
    # the reason no node of 2 points violates the printed Cor. 5: |S| points open a score gap of at most
    # |S|(t/q + α)/ñ = |S|/2 units of 2Δ_f (λ = 0), and a violation needs 2 ln 2 units
    for node in random_clump_nodes(150, seed=4):
        th = ExponentialMechanismUtility(**{k: v for k, v in node.items() if k != "t_prime"})
        assert th.f.max() - th.f.min() <= th.size * 8.6 / th.nt + 1e-9


def test_no_two_point_node_violates_printed_cor5() -> None:
    worst = -1.0
    for k in (2, 3):
        grid = np.arange(0, 2 * k + 1) / 2.0
        for pts in itertools.combinations_with_replacement(grid, 2):
            for nt in (2.0, 12.0, 48.0, 200.0):
                mech = DPMSplitEM(1e-3, nt, 1.0, bounds=(0.0, float(k)))
                f = mech.scores(np.asarray(pts))
                p = np.exp(mech.log_pmf(np.asarray(pts))[1])
                opt, w0 = f.max(), np.count_nonzero(f == f.max())
                for s in np.unique(f):   # the largest κ whose printed threshold still reaches score s
                    kappa = (opt - s) / (2 * mech.sensitivity()) - math.log(f.size / w0)
                    if kappa > 0:
                        worst = max(worst, p[f <= s].sum() - math.exp(-kappa))
    assert worst < 0


def test_cor5_printed_smallest_counterexample_through_check_sweep() -> None:
    res = check_sweep(ExponentialMechanismUtility, {**THREE, "kappa": 0.8, "form": "printed"}, "epsilon",
                      [0.001, 0.01, 1.0], runs=4000, seed=3, workers=1)
    assert res.verdict == "violated" and res.counterexample["size"] == 3.0
    assert [p.verdict for p in res.points][-1] == "holds"


def test_split_parameters_are_checked() -> None:
    with pytest.raises(ValueError, match="kappa > 0"):
        ExponentialMechanismUtility(**THREE, epsilon=0.1, kappa=0.0)
    with pytest.raises(ValueError, match="omega"):
        ExponentialMechanismUtility(**THREE, epsilon=0.1, omega=-1.0)
    with pytest.raises(ValueError, match="clump position must lie in bounds"):
        split_dataset("clumps", clumps=[[5.0, 2]], bounds=(0.0, 2.0))
    with pytest.raises(ValueError, match="data"):
        split_dataset("mixture")
    with pytest.raises(ValueError, match="n_tilde - lam"):     # DPMSplitEM refuses ñ − λ <= 0
        ExponentialMechanismUtility(**{**THREE, "lam": 300.0}, epsilon=0.1)


# ---------------------------------------------------------------- Lemma 9

def test_lemma9_gap_by_hand_and_hypothesis() -> None:
    kw = dict(data="gap-mixture", **{k: v for k, v in SMALL.items() if k != "t_prime"}, kappa=1.5, omega=0.3)
    printed = CentralSplitEmptiness(**kw, t_prime=0.4, form="printed")
    corrected = CentralSplitEmptiness(**kw, t_prime=0.4, form="corrected")
    factor = (2 * 0.3 / ((1 / 12) * 5) + 2) / (2000 * 0.05)
    w_opt = np.count_nonzero(np.abs(printed.f - printed.opt) <= 0.3)
    base = factor * (math.log(printed.f.size / w_opt) + 1.5) + 0.6 / 5
    assert printed.gap == pytest.approx(base + factor * 0.3, rel=1e-12)
    assert corrected.gap == pytest.approx(base + 0.3 / 5, rel=1e-12)
    assert printed.hypotheses() == []
    c_star = printed.c[printed.star]
    msg = CentralSplitEmptiness(**kw, t_prime=min(1.0, c_star + 0.01)).hypotheses()
    assert msg and "lower t_prime" in msg[0]


def test_lemma9_sampler_is_conditional_and_matches_exact() -> None:
    th = CentralSplitEmptiness(data="gaussian", **{**SMALL, "t_prime": 0.0}, kappa=1.0)   # s* has c = 0
    assert th.hypotheses() == []
    node = dict(data="clumps", clumps=[[0.5, 161], [2.5, 298]], bounds=(0.0, 3.0), beta=1.0, n_tilde=380.2245,
                lam=0.0, epsilon=0.0476387, t_prime=0.7693447, kappa=2.0)
    th = CentralSplitEmptiness(**node)
    x = th.sample(100_000, np.random.default_rng(13))
    central = ~np.isnan(x)
    assert 0 < central.sum() < x.size
    assert six_sigma(x[central].mean(), th.exact(), int(central.sum()))
    # reference: DPMSplitEM's draws, centreness of each drawn candidate from algorithms.dpm.score
    mech = th.mech
    draws = mech(th.x, 500, np.random.default_rng(14))
    dims, pos = mech.candidates()
    c = score(th.x, dims, pos, 1.0, 380.2245, part="centreness")
    got = th.sample(500, np.random.default_rng(14))
    assert np.array_equal(np.isnan(got), c[draws] < 0.7693447)


# ---------------------------------------------------------------- Lemmas 10 and 11

@pytest.mark.parametrize("data", ["gap-mixture", "gaussian", "uniform"])
def test_lemma10_and_11_identities(data: str) -> None:
    l10 = CentralSplitProbability(data=data, **SMALL)
    l11 = OuterSplitProbability(data=data, **SMALL)
    assert l10.bound() == pytest.approx(l10.exact(), rel=1e-9)             # the proof's a_s: exactly the law
    assert l11.bound() == pytest.approx(1 - l10.exact(), rel=1e-9, abs=1e-12)
    assert OuterSplitProbability(data=data, **SMALL, form="identity-printed").bound() == pytest.approx(l10.exact())
    assert (l10.direction, l11.direction) == ("equal", "equal")


def test_lemma10_printed_representation_is_right_only_when_b_is_one() -> None:
    base = CentralSplitProbability(data="gap-mixture", **SMALL)
    eps_b1 = 2 * base.delta_f                                            # ε/(2Δ_f) = 1
    kw = {**SMALL, "epsilon": eps_b1}
    printed = CentralSplitProbability(data="gap-mixture", **kw, form="identity-printed")
    assert printed.B == pytest.approx(1.0) and printed.bound() == pytest.approx(printed.exact(), rel=1e-9)
    off = CentralSplitProbability(data="gap-mixture", **SMALL, form="identity-printed")
    assert abs(off.bound() - off.exact()) > 0.4                         # 0.511 vs 0.984 at B = 11.6


def test_lemma10_untight_bound_is_valid_and_can_be_attained() -> None:
    for node in random_clump_nodes(200, seed=6):
        for omega in (0.0, 0.3):
            th = CentralSplitProbability(**node, omega=omega, form="bound")
            assert th.bound() <= th.exact() + 1e-12
    tight = CentralSplitProbability(data="clumps", clumps=[[0.5, 5], [1.5, 28]], bounds=(0.0, 2.0), beta=1.0,
                                    lam=0.0, epsilon=0.036083963796414355, t_prime=0.41393321800887695,
                                    omega=0.04238831017763054, form="bound")
    assert 0 < tight.exact() - tight.bound() < 2e-5


def test_lemma11_eta_by_hand_and_the_three_point_counterexample() -> None:
    proof = OuterSplitProbability(**ETA3, epsilon=3.16, form="eta-proof")
    printed = OuterSplitProbability(**ETA3, epsilon=3.16, form="eta-printed")
    n_hi = int(proof.central.sum())
    n_lo = proof.f.size - n_hi
    e_min, b, alpha = float(proof.e.min()), proof.B, 5.0
    assert (n_lo, n_hi, e_min) == (1, 2, pytest.approx(1 / 3))
    eta = n_lo * math.exp((1 - e_min) * alpha * b) / (n_hi * math.exp((1 + alpha) * b))
    assert proof.eta == pytest.approx(eta, rel=1e-12) and proof.bound() == pytest.approx(eta / (eta + 1))
    eta_p = n_lo * math.exp((1 - e_min) * b) / (n_hi * math.exp((1 + alpha) * b))
    assert printed.eta == pytest.approx(eta_p, rel=1e-12)
    assert proof.exact() == pytest.approx(0.0711, abs=1e-4) and proof.bound() == pytest.approx(0.1031, abs=1e-4)
    res = check_theorem(proof, runs=4000, seed=2, workers=1)
    assert res.verdict == "violated" and res.exact_in_interval


def test_lemma11_eta_printed_needs_a_count_below_the_size() -> None:
    th = OuterSplitProbability(data="clumps", clumps=[[4.0, 1]], bounds=(0.0, 5.0), beta=1.0, n_tilde=0.2,
                               lam=0.0, t_prime=0.0, epsilon=10.0, form="eta-printed")
    assert float(th.e.min()) == pytest.approx(-4.0) and th.exact() < th.bound() - 0.15
    # with ñ = |S| (e_min >= 0) the printed condition is weaker than the proof's: its η is never larger
    for node in random_clump_nodes(100, seed=9):
        node = {**node, "n_tilde": None}
        a = OuterSplitProbability(**node, form="eta-printed")
        assert a.eta <= OuterSplitProbability(**node, form="eta-proof").eta * (1 + 1e-12)


# ---------------------------------------------------------------- halting

def test_early_halting_sampler_is_dpm_end_to_end() -> None:
    th = EarlyHalting(n_points=300, d=1)
    batch = DPM(epsilon=1.0, delta=th.delta_used, bounds=(-100.0, 100.0), d=1).sample(th.x, 40,
                                                                                      np.random.default_rng(4))
    assert np.array_equal(th.sample(40, np.random.default_rng(4)), batch.depth < 7)
    leaves = EarlyHalting(n_points=300, d=1, event="leaves")
    assert np.array_equal(leaves.sample(40, np.random.default_rng(4)), batch.n_clusters < 128)
    with pytest.raises(ValueError, match="whp"):
        EarlyHalting(n_points=300, whp=1.0)


# ---------------------------------------------------------------- the protocol

@pytest.mark.parametrize("theorem", [
    NoisyCountCloseness(delta=DELTA), NoisyCountCoverage(), MinimalEmptiness(n_points=400),
    ExponentialMechanismUtility(**THREE, epsilon=0.1), CentralSplitEmptiness(data="gap-mixture", **SMALL),
    CentralSplitProbability(data="uniform", **SMALL, form="bound"), OuterSplitProbability(**ETA3, epsilon=1.0,
                                                                                          form="eta-proof"),
    EarlyHalting(n_points=300),
], ids=lambda t: type(t).__name__)
def test_protocol_attributes(theorem) -> None:  # noqa: ANN001 -- any theorem object
    json.dumps(theorem.parameters)                         # JSON-able scalars
    assert theorem.name.startswith("seed 004") and theorem.statement
    assert theorem.quantity in ("probability", "quantile") and theorem.direction in ("at_least", "at_most", "equal")
    assert isinstance(theorem.hypotheses(), list) and not math.isnan(theorem.bound())
    assert theorem.size >= 1
