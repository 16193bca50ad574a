"""audit_profile (dpverify.statistical.profile): zCDP, GDP and Rényi-DP claims audited on their (ε, δ(ε)) profiles.

The mechanism is the Gaussian mechanism with σ = 1 on a sensitivity-1 pair: exactly 0.5-zCDP, 1-GDP and
(α, α/2)-Rényi DP.  Error levels: every audit runs at a fixed seed, so each assertion is deterministic.  A true
claim passes for a fresh seed with probability at least 1 - alpha = 95 % (the profile's bounds hold together, by
Bonferroni over its points); the false claims below are refuted by margins of several standard errors at these
budgets (ρ = 0.25 at 2·10⁵ samples: bounds 0.17 to 0.44 above the claim at every point, at three seeds); the seeds
were not chosen by retrying.
"""

from __future__ import annotations

import json
import math

import pytest

import dpverify
from dpverify.errors import InputError
from dpverify.profiles import GDPClaim, RDPClaim, ZCDPClaim
from dpverify.results import Measured, PrivacyClaim, Verdict
from dpverify.statistical.profile import AUDIT_OPTIONS, ProfileAuditResult, audit_profile, point_seed

pytest.importorskip("dp_accounting", reason="the zCDP / RDP conversions need dp-accounting")

SIGMA = 1.0
PAIRS = [(0.0, 1.0)]
N = 200_000


def gauss(x, n, rng):
    """The Gaussian mechanism, σ = 1: sensitivity 1 makes it 0.5-zCDP, 1-GDP and (α, α/2)-RDP."""
    return x + rng.normal(0.0, SIGMA, size=n)


def slow_gauss(x, n, rng):
    """:func:`gauss` taking 0.3 s per call (the same outputs): slow enough that the pool starts its processes."""
    import time

    time.sleep(0.3)
    return gauss(x, n, rng)


def run(claim, samples: int = N, seed: int = 1, workers: int = 1, mechanism=gauss, **kw) -> ProfileAuditResult:
    return audit_profile(mechanism, PAIRS, claim, samples=samples, seed=seed, workers=workers, **kw)


def without(d, keys=("seconds", "workers")):
    """``d`` without the wall-clock and worker-count fields, at every depth."""
    if isinstance(d, dict):
        return {k: without(v, keys) for k, v in d.items() if k not in keys}
    if isinstance(d, list):
        return [without(v, keys) for v in d]
    return d


# ---------------------------------------------------------------------------------------------------------------
# verdicts on the Gaussian mechanism
# ---------------------------------------------------------------------------------------------------------------


def test_true_zcdp_claim_passes() -> None:
    r = run(ZCDPClaim(0.5))
    assert not r.violation and r.verdict == Verdict.PASS
    assert [p.delta for p in r.points] == [0.1, 0.01, 0.001]
    assert all(p.epsilon_lower_bound <= p.epsilon_claimed for p in r.points)
    # the bounds are below the Gaussian's exact profile (1-GDP), and not far below it at the large δ
    exact = GDPClaim(1.0)
    assert all(p.epsilon_lower_bound <= exact.epsilon(p.delta) for p in r.points)
    assert r.points[0].epsilon_lower_bound > 0.9 * exact.epsilon(0.1)
    text = r.summary()
    assert text.startswith("No violation of ρ=0.5 zCDP detected at 3 profile points (δ = 0.1, 0.01, 0.001)")
    assert "2e5 samples per input" in text and "not a proof of privacy" in text


def test_too_small_rho_is_flagged_at_every_point() -> None:
    r = run(ZCDPClaim(0.25))
    assert r.violation and r.verdict == Verdict.VIOLATION
    # the claim implies ε ≤ 0.943, 1.76, 2.33; the Gaussian's exact ε is 1.16, 2.32, 3.14.  Seed 1 gives
    # ε ≥ 1.117, 2.158, 2.571: every point violated, the worst (largest excess, 0.40) at δ = 0.01
    assert all(p.violation for p in r.points)
    assert r.worst.delta == 0.01
    assert r.epsilon_lower_bound == r.worst.epsilon_lower_bound == pytest.approx(2.158, abs=0.01)
    assert r.worst.epsilon_claimed == pytest.approx(1.7597, abs=1e-3)
    assert r.witness is r.worst.result.witness and r.witness is not None
    assert r.measured == Measured("epsilon_lower_bound", r.worst.epsilon_lower_bound)
    assert r.claim == ZCDPClaim(0.25)
    text = str(r)
    assert text.startswith("VIOLATION of ρ=0.25 zCDP: at δ=0.01 the claim implies ε ≤ 1.76, but ε ≥ 2.16 "
                           "(95 % confidence, 2e5 samples per input); worst of 3 profile points")


def test_gdp_claims() -> None:
    assert not run(GDPClaim(1.0)).violation
    bad = run(GDPClaim(0.5), samples=50_000)
    assert bad.violation and all(p.violation for p in bad.points)
    # 0.5-GDP implies ε ≤ 0.29 at δ = 0.1; the 1-GDP Gaussian has ε = 1.16 there
    assert bad.points[0].epsilon_lower_bound > 0.9


def test_rdp_claims() -> None:
    assert not run(RDPClaim(2.0, 1.0), samples=50_000).violation
    # (2, 0.25)-RDP converted at its single order implies ε ≤ 1.17, 3.47, 5.78 at δ = 0.1, 0.01, 0.001: looser than
    # the Gaussian's 1.16, 2.32, 3.14, so no audit can refute it there.  At large δ it is refutable: ε ≤ 0.068 at
    # δ = 0.3 and 0.47 at δ = 0.2, against the Gaussian's exact 0.277 and 0.653
    assert not run(RDPClaim(2.0, 0.25), samples=50_000).violation
    r = run(RDPClaim(2.0, 0.25), deltas=[0.3, 0.2])
    assert r.violation and r.points[0].violation
    assert r.points[0].epsilon_claimed == pytest.approx(0.0677, abs=1e-3)
    assert 0.15 < r.points[0].epsilon_lower_bound <= GDPClaim(1.0).epsilon(0.3)


# ---------------------------------------------------------------------------------------------------------------
# error level, seeds, workers, the (ε, δ) case
# ---------------------------------------------------------------------------------------------------------------


def test_each_point_gets_its_bonferroni_share_and_its_own_seed() -> None:
    r = run(ZCDPClaim(0.5), samples=50_000, seed=11, alpha=0.06)
    assert [p.result.alpha for p in r.points] == pytest.approx([0.02] * 3)
    assert r.alpha == 0.06 and r.seed == 11
    assert [p.result.seed for p in r.points] == [point_seed(11, i) for i in range(3)]
    assert len({p.result.seed for p in r.points}) == 3
    assert "95" not in r.summary() and "94 % confidence" in r.summary()


def test_same_seed_same_result_on_one_and_two_workers() -> None:
    # a mechanism slow enough (0.3 s per batch) for the shared pool to start its processes
    one = run(ZCDPClaim(0.25), samples=100_000, seed=5, workers=1, mechanism=slow_gauss, deltas=[0.01])
    two = run(ZCDPClaim(0.25), samples=100_000, seed=5, workers=2, mechanism=slow_gauss, deltas=[0.01])
    assert two.workers == 2          # the shared pool really ran on two processes
    assert without(one.to_dict()) == without(two.to_dict())
    again = run(ZCDPClaim(0.25), samples=100_000, seed=5, workers=1, deltas=[0.01])   # the same outputs, fast
    assert without(again.to_dict()) == without(one.to_dict())


def test_a_privacy_claim_is_one_point_and_the_plain_audit() -> None:
    claim = PrivacyClaim(1.0, 0.01)
    r = run(claim, samples=100_000, seed=4)
    assert len(r.points) == 1 and r.points[0].delta == 0.01 and r.points[0].epsilon_claimed == 1.0
    plain = dpverify.audit(gauss, PAIRS, 1.0, 0.01, samples=100_000, seed=point_seed(4, 0), workers=1)
    assert without(r.points[0].result.to_dict()) == without(plain.to_dict())
    assert r.epsilon_lower_bound == plain.epsilon_lower_bound and r.violation == plain.violation is True
    assert r.claim == claim
    # deltas mean nothing for an (ε, δ) claim: noted, not an error
    noted = run(claim, samples=20_000, seed=4, deltas=[0.1])
    assert len(noted.points) == 1 and any("deltas ignored" in n for n in noted.notes)


def test_fresh_seed_is_reported_and_repeats_the_run() -> None:
    r = run(GDPClaim(1.0), samples=20_000, seed=None, deltas=[0.1])
    again = run(GDPClaim(1.0), samples=20_000, seed=r.seed, deltas=[0.1])
    assert without(again.to_dict()) == without(r.to_dict())


# ---------------------------------------------------------------------------------------------------------------
# dropped points and bad arguments
# ---------------------------------------------------------------------------------------------------------------


def test_too_rare_delta_is_dropped_with_a_note() -> None:
    r = run(ZCDPClaim(0.5), samples=20_000)          # 30 / 20 000 = 0.0015 > 0.001
    assert [p.delta for p in r.points] == [0.1, 0.01]
    assert [p.result.alpha for p in r.points] == pytest.approx([0.025, 0.025])   # k = 2 tested points
    assert any("δ=0.001 not tested: too rare" in n and "30,000" in n for n in r.notes)
    assert "Notes: δ=0.001 not tested" in r.summary()
    with pytest.raises(InputError, match=r"no profile point of ρ=0.5 zCDP can be tested.*"
                                         r"To test one, raise samples \(to at least 300,000"):
        run(ZCDPClaim(0.5), samples=20_000, deltas=[1e-4])


def test_a_point_where_the_claim_implies_eps_zero_is_dropped() -> None:
    # 1e-4-zCDP: total variation ≤ √(1 - e^(-1.01e-4)) ≈ 0.01, so ε(0.1) = ε(0.01) = 0, and ε(0.001) = 0.021,
    # far below the Gaussian's 3.14
    r = run(ZCDPClaim(1e-4), samples=50_000, deltas=[0.1, 0.001])
    assert [p.delta for p in r.points] == [0.001]
    assert any("δ=0.1 not tested: the claim implies ε = 0" in n for n in r.notes)
    assert r.violation
    with pytest.raises(InputError, match=r"ε = 0 there.*To test one, pass deltas where the claim implies a finite"):
        run(ZCDPClaim(1e-4), samples=50_000, deltas=[0.1, 0.01])


def test_to_dict_is_json_and_complete() -> None:
    r = run(ZCDPClaim(0.25), samples=50_000, seed=2)
    d = r.to_dict()
    json.dumps(d, allow_nan=False)
    assert d["verdict"] == "violation" and d["claim"] == {"zcdp": 0.25} and d["claim_text"] == "ρ=0.25 zCDP"
    assert d["form"] == "zcdp" and "Canonne" in d["conversion"]
    assert d["worst_delta"] == r.worst.delta and d["epsilon_lower_bound"] == r.epsilon_lower_bound
    assert len(d["points"]) == 3 and d["points"][0]["result"]["epsilon"] == r.points[0].epsilon_claimed
    assert {"delta", "epsilon_claimed", "epsilon_lower_bound", "violation", "alpha", "seed", "result"} <= set(
        d["points"][1])
    assert d["seed"] == 2 and d["samples"] == 50_000 and d["search_samples"] == 50_000
    assert d["witness"]["pair_label"] == "pair[0]"


@pytest.mark.parametrize("kwargs,match", [
    (dict(claim={"zcdp": 0.5}), "parse_claim"),
    (dict(claim=0.5), "ProfileClaim"),
    (dict(deltas=[0.0]), r"\(0, 1\)"),
    (dict(deltas=[1.0]), r"\(0, 1\)"),
    (dict(deltas=[]), "non-empty"),
    (dict(deltas="0.1"), "non-empty"),
    (dict(deltas=["0.1"]), r"\(0, 1\)"),
    (dict(deltas=[0.1, 0.1]), "repeated"),
    (dict(samples=0), "samples"),
    (dict(alpha=1.5), "alpha"),
    (dict(epsilon=1.0), "unknown options"),
    (dict(delta=0.1), "unknown options"),
])
def test_bad_arguments(kwargs, match) -> None:
    args = dict(claim=ZCDPClaim(0.5), samples=10_000, seed=0, workers=1)
    args.update(kwargs)
    claim = args.pop("claim")
    with pytest.raises(InputError, match=match):
        audit_profile(gauss, PAIRS, claim, **args)


def test_audit_options_are_passed_on() -> None:
    assert set(AUDIT_OPTIONS) <= set(dpverify.audit.__code__.co_varnames)
    r = run(GDPClaim(1.0), samples=20_000, deltas=[0.1], finalists=1, batch_size=5_000)
    assert len(r.points[0].result.tests) == 1
    assert not math.isnan(r.epsilon_lower_bound)
