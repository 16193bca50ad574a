"""Profile claims (dpverify.profiles): every conversion checked against a closed form computed here independently.

* GDP: the closed form of Dong, Roth & Su (Cor. 2.13) against the hockey-stick divergence of N(0, 1) and N(μ, 1)
  integrated numerically (scipy.integrate.quad of (p - e^ε q)_+).
* zCDP: between the exact profile of the Gaussian mechanism that is ρ-zCDP (σ = 1/√(2ρ), i.e. √(2ρ)-GDP: no
  valid conversion can be below it) and Bun & Steinke's Prop. 1.3, ε = ρ + 2√(ρ ln(1/δ)); within 1 % of the
  Canonne--Kamath--Steinke bound (NeurIPS 2020, Prop. 12 of the arXiv version) minimised over α with
  scipy.optimize.minimize_scalar.  dp-accounting's ``compute_delta``/``compute_epsilon`` implement exactly this
  bound, in the form ``(α-1)(r - ε + ln(1 - 1/α)) - ln α`` (the same expression: ``(1-1/α)^α / (α-1) =
  (1-1/α)^(α-1) / α``), plus the total-variation bound ``δ(0) <= √(1 - e^(-r))``.
* RDP: the single-order conversion equals that formula written out here, and is never looser than Mironov's
  Prop. 3, ε = ε_α + ln(1/δ)/(α-1).

Everything here is deterministic (no sampling).
"""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest
from scipy import integrate, optimize, stats

from dpverify.errors import InputError
from dpverify.profiles import (
    DEFAULT_DELTAS,
    GDPClaim,
    ProfileClaim,
    RDPClaim,
    ZCDPClaim,
    parse_claim,
)
from dpverify.results import PrivacyClaim

pytest.importorskip("dp_accounting", reason="the zCDP / RDP conversions need dp-accounting")


# ---------------------------------------------------------------------------------------------------------------
# independent closed forms
# ---------------------------------------------------------------------------------------------------------------


def hockey_stick_gaussian(mu: float, eps: float) -> float:
    """∫ (p - e^ε q)_+ with p = N(0, 1), q = N(μ, 1), by quadrature; the positive part is where the log density
    ratio -μx + μ²/2 exceeds ε, i.e. x below the root found numerically here."""
    log_ratio = lambda x: stats.norm.logpdf(x) - stats.norm.logpdf(x, loc=mu)  # noqa: E731
    t = optimize.brentq(lambda x: log_ratio(x) - eps, -1e4, 1e4, xtol=1e-14)
    f = lambda x: max(0.0, stats.norm.pdf(x) - math.exp(eps) * stats.norm.pdf(x, loc=mu))  # noqa: E731
    val, _ = integrate.quad(f, -np.inf, t, epsabs=0.0, epsrel=1e-11, limit=200)
    return val


def cks_delta(rho_of_alpha, eps: float, lo: float = 1.0 + 1e-9, hi: float = 1e5) -> float:
    """Canonne--Kamath--Steinke: δ = inf_{α>1} exp((α-1)(r(α) - ε)) / (α-1) · (1 - 1/α)^α, minimised over
    α."""
    def log_delta(a: float) -> float:
        return (a - 1) * (rho_of_alpha(a) - eps) - math.log(a - 1) + a * math.log1p(-1 / a)

    # minimise in log(α - 1), which makes the objective nearly symmetric around its optimum
    res = optimize.minimize_scalar(lambda u: log_delta(1 + math.exp(u)), bounds=(math.log(lo - 1), math.log(hi - 1)),
                                   method="bounded", options={"xatol": 1e-10})
    return min(1.0, math.exp(res.fun))


def cks_epsilon(rho: float, delta: float) -> float:
    """Smallest ε with the CKS δ(ε) <= delta for ρ-zCDP: the closed-form inverse at each α, minimised over α."""
    def eps_at(u: float) -> float:
        a = 1 + math.exp(u)
        return a * rho + math.log1p(-1 / a) - math.log(delta * a) / (a - 1)

    res = optimize.minimize_scalar(eps_at, bounds=(math.log(1e-9), math.log(1e5)), method="bounded",
                                   options={"xatol": 1e-10})
    return max(0.0, res.fun)


def single_order_delta(alpha: float, r: float, eps: float) -> float:
    """dp-accounting's single-order RDP -> (ε, δ): min of the TV bound √(1 - e^(-r)) and, for α > 1.01, the CKS
    bound; with Mironov's Prop. 3, exp((α-1)(r-ε)) (which only matters at α <= 1.01)."""
    cands = [math.sqrt(-math.expm1(-r)), math.exp(min(0.0, (alpha - 1) * (r - eps)))]
    if alpha > 1.01:
        cands.append(math.exp((alpha - 1) * (r - eps)) * (1 - 1 / alpha) ** (alpha - 1) / alpha)
    return min(1.0, *cands)


def single_order_epsilon(alpha: float, r: float, delta: float) -> float:
    if delta ** 2 > -math.expm1(-r):
        return 0.0
    cands = [r + math.log(1 / delta) / (alpha - 1)]
    if alpha > 1.01:
        cands.append(r + math.log1p(-1 / alpha) - math.log(delta * alpha) / (alpha - 1))
    return max(0.0, min(cands))


# ---------------------------------------------------------------------------------------------------------------
# GDP
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mu", [0.1, 0.5, 1.0, 2.0, 5.0])
@pytest.mark.parametrize("eps", [0.0, 0.3, 1.0, 3.0, 8.0])
def test_gdp_delta_is_the_hockey_stick_divergence(mu: float, eps: float) -> None:
    exact = hockey_stick_gaussian(mu, eps)
    got = GDPClaim(mu).delta(eps)
    if exact < 1e-250:
        assert got < 1e-250
    else:
        assert got == pytest.approx(exact, rel=1e-7, abs=1e-300)


@pytest.mark.parametrize("mu", [1e-6, 0.05, 0.5, 1.0, 3.0, 20.0])
def test_gdp_epsilon_inverts_delta_and_is_monotone(mu: float) -> None:
    claim = GDPClaim(mu)
    deltas = [0.9, 0.5, 0.2, 0.1, 1e-2, 1e-3, 1e-6, 1e-12, 1e-100]
    eps = [claim.epsilon(d) for d in deltas]
    assert all(e >= 0 and math.isfinite(e) for e in eps)
    assert all(a <= b for a, b in zip(eps, eps[1:])), eps
    for d, e in zip(deltas, eps):
        if e == 0.0:
            assert claim.delta(0.0) <= d        # ε = 0 already satisfies δ
        else:
            assert claim.delta(e) == pytest.approx(d, rel=1e-8)


def test_gdp_is_stable_at_the_extremes() -> None:
    for mu in (1e-8, 1e-3, 1.0, 50.0, 1e4):
        for eps in (0.0, 1e-6, 0.5, 10.0, 1e3, 1e6):
            d = GDPClaim(mu).delta(eps)
            assert 0.0 <= d <= 1.0 and not math.isnan(d), (mu, eps, d)
    # δ(0) is the total variation 2Φ(μ/2) - 1
    assert GDPClaim(1.0).delta(0.0) == pytest.approx(2 * stats.norm.cdf(0.5) - 1, rel=1e-12)
    assert GDPClaim(1.0).epsilon(0.5) == 0.0


# ---------------------------------------------------------------------------------------------------------------
# zCDP
# ---------------------------------------------------------------------------------------------------------------

RHOS = [1e-4, 1e-2, 0.125, 0.5, 2.0, 10.0, 50.0]
DELTAS = [0.1, 1e-2, 1e-3, 1e-6, 1e-10]


@pytest.mark.parametrize("rho", RHOS)
def test_zcdp_epsilon_between_the_gaussian_and_bun_steinke(rho: float) -> None:
    claim, gauss = ZCDPClaim(rho), GDPClaim(math.sqrt(2 * rho))
    for delta in DELTAS:
        eps = claim.epsilon(delta)
        assert eps <= rho + 2 * math.sqrt(rho * math.log(1 / delta)) + 1e-12
        assert eps >= gauss.epsilon(delta) - 1e-9, (rho, delta)


@pytest.mark.parametrize("rho", RHOS)
def test_zcdp_matches_canonne_kamath_steinke(rho: float) -> None:
    claim = ZCDPClaim(rho)
    for delta in DELTAS:
        ref = cks_epsilon(rho, delta)
        assert claim.epsilon(delta) == pytest.approx(ref, rel=0.01, abs=1e-6), (rho, delta)
        # the grid of orders costs far less than the 1 % allowed
        assert claim.epsilon(delta) == pytest.approx(ref, rel=1e-4, abs=1e-6), (rho, delta)
    for eps in (0.5 * rho + 0.1, 2 * rho + 1.0, 5 * rho + 3.0):
        ref = cks_delta(lambda a: a * rho, eps)
        assert claim.delta(eps) == pytest.approx(ref, rel=0.01), (rho, eps)
        assert claim.delta(eps) >= GDPClaim(math.sqrt(2 * rho)).delta(eps) * (1 - 1e-9)


def test_zcdp_delta_and_epsilon_are_inverse() -> None:
    claim = ZCDPClaim(0.25)
    for delta in (0.1, 0.01, 0.001):
        eps = claim.epsilon(delta)
        assert claim.delta(eps) == pytest.approx(delta, rel=1e-6)
    assert [p.delta for p in claim.points()] == list(DEFAULT_DELTAS)
    assert claim.points()[1].epsilon == pytest.approx(1.7597, abs=1e-4)
    # δ so large that ε = 0 satisfies it (the total-variation bound of a tiny ρ)
    assert ZCDPClaim(1e-4).epsilon(0.1) == 0.0


# ---------------------------------------------------------------------------------------------------------------
# RDP
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("alpha,r", [(1.005, 0.01), (1.5, 0.1), (2.0, 0.25), (2.0, 1.0), (8.0, 3.0), (64.0, 0.5)])
def test_rdp_single_order_is_its_closed_form_and_beats_mironov(alpha: float, r: float) -> None:
    claim = RDPClaim(alpha, r)
    for delta in (0.4, 0.1, 1e-3, 1e-8):
        eps = claim.epsilon(delta)
        assert eps == pytest.approx(single_order_epsilon(alpha, r, delta), rel=1e-12, abs=1e-12)
        assert eps <= r + math.log(1 / delta) / (alpha - 1) + 1e-12
    for eps in (0.0, 0.2, 1.0, 5.0):
        assert claim.delta(eps) == pytest.approx(single_order_delta(alpha, r, eps), rel=1e-12, abs=1e-300)
        assert claim.delta(eps) <= math.exp(min(0.0, (alpha - 1) * (r - eps))) + 1e-15


def test_zcdp_at_one_order_is_the_rdp_claim_there() -> None:
    # (α, αρ)-RDP at the zCDP optimum of δ = 0.01 gives nearly the same ε
    rho, delta = 0.5, 0.01
    best = min(RDPClaim(a, a * rho).epsilon(delta) for a in np.linspace(1.5, 8.0, 300))
    assert ZCDPClaim(rho).epsilon(delta) == pytest.approx(best, rel=1e-3)


# ---------------------------------------------------------------------------------------------------------------
# construction, parsing, strings
# ---------------------------------------------------------------------------------------------------------------


def test_claims_are_frozen_validated_and_hashable() -> None:
    assert ZCDPClaim(1) == ZCDPClaim(1.0) and hash(ZCDPClaim(1)) == hash(ZCDPClaim(1.0))
    assert isinstance(ZCDPClaim(1).rho, float)
    assert GDPClaim(1.0) != ZCDPClaim(1.0)
    assert len({GDPClaim(1.0), GDPClaim(1), RDPClaim(2, 1)}) == 2
    with pytest.raises(Exception):
        ZCDPClaim(1.0).rho = 2.0  # type: ignore[misc]
    for bad in (True, "0.5", float("nan"), float("inf"), 0.0, -1.0, None, [0.5]):
        with pytest.raises(InputError):
            ZCDPClaim(bad)  # type: ignore[arg-type]
        with pytest.raises(InputError):
            GDPClaim(bad)  # type: ignore[arg-type]
        with pytest.raises(InputError):
            RDPClaim(2.0, bad)  # type: ignore[arg-type]
    for bad_alpha in (1.0, 0.5, True, "2", float("inf")):
        with pytest.raises(InputError):
            RDPClaim(bad_alpha, 1.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        ProfileClaim()  # type: ignore[abstract]


def test_strings_and_dicts() -> None:
    assert str(ZCDPClaim(0.5)) == "ρ=0.5 zCDP"
    assert str(GDPClaim(1.0)) == "μ=1 GDP"
    assert str(RDPClaim(2, 0.5)) == "(α=2, ε=0.5) Rényi DP"
    assert ZCDPClaim(0.5).to_dict() == {"zcdp": 0.5}
    assert GDPClaim(1.0).to_dict() == {"gdp": 1.0}
    assert RDPClaim(2, 0.5).to_dict() == {"rdp": {"alpha": 2.0, "epsilon": 0.5}}
    assert {ZCDPClaim.form, GDPClaim.form, RDPClaim.form} == {"zcdp", "gdp", "rdp"}
    for cls in (ZCDPClaim, GDPClaim, RDPClaim):
        assert "(" in cls.conversion and "20" in cls.conversion     # cites a paper and year


def test_parse_claim_every_form() -> None:
    assert parse_claim({"epsilon": 1.0, "delta": 1e-5}) == PrivacyClaim(1.0, 1e-5)
    assert parse_claim({"epsilon": 2}) == PrivacyClaim(2.0, 0.0)
    assert parse_claim({"zcdp": 0.5}) == ZCDPClaim(0.5)
    assert parse_claim({"gdp": 1}) == GDPClaim(1.0)
    assert parse_claim({"rdp": {"alpha": 2, "epsilon": 0.5}}) == RDPClaim(2.0, 0.5)
    for claim in (ZCDPClaim(0.3), GDPClaim(0.7), RDPClaim(3.0, 0.2), PrivacyClaim(0.5, 1e-6)):
        assert parse_claim(claim.to_dict()) == claim


@pytest.mark.parametrize("bad", [
    {}, {"delta": 0.1}, {"zcdp": "0.5"}, {"gdp": "1"}, {"epsilon": "0.5"}, {"epsilon": True},
    {"zcdp": 0.5, "gdp": 1.0}, {"zCDP": 0.5}, {"rdp": 0.5}, {"rdp": {"alpha": 2}},
    {"rdp": {"alpha": 2, "epsilon": 0.5, "x": 1}}, {"rdp": {"alpha": 1.0, "epsilon": 0.5}}, {"epsilon": -1.0},
    {"epsilon": 1.0, "delta": 1.5}, {"zcdp": -0.5}, {"gdp": float("nan")}, "zcdp=0.5", [("zcdp", 0.5)], None,
])
def test_parse_claim_rejects_bad_input(bad) -> None:
    with pytest.raises(InputError) as err:
        parse_claim(bad)
    msg = str(err.value)
    assert '{"zcdp": ρ}' in msg and '{"gdp": μ}' in msg and '"rdp"' in msg and '"epsilon"' in msg, msg


def test_points_and_epsilon_arguments_are_checked() -> None:
    claim = GDPClaim(1.0)
    for bad in ([], [0.0], [1.0], [0.1, -0.1], "0.1", [float("nan")], ["0.1"], 0.1):
        with pytest.raises(InputError):
            claim.points(bad)  # type: ignore[arg-type]
    for bad in (-0.1, float("nan"), float("inf"), "1"):
        with pytest.raises(InputError):
            claim.delta(bad)  # type: ignore[arg-type]
    for bad in (0.0, 1.0, -1e-3, True):
        with pytest.raises(InputError):
            claim.epsilon(bad)  # type: ignore[arg-type]
    pts = claim.points([0.2, 0.05])
    assert [p.delta for p in pts] == [0.2, 0.05] and all(isinstance(p, PrivacyClaim) for p in pts)


def test_missing_dp_accounting_gives_the_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m == "dp_accounting" or m.startswith("dp_accounting.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "dp_accounting", None)
    claim = ZCDPClaim(0.5)                                   # building needs no dp-accounting
    assert parse_claim({"rdp": {"alpha": 2, "epsilon": 1}}) == RDPClaim(2.0, 1.0)
    for call in (lambda: claim.epsilon(0.01), lambda: claim.delta(1.0), lambda: RDPClaim(2.0, 1.0).points()):
        with pytest.raises(InputError) as err:
            call()
        assert str(err.value) == ("ρ-zCDP and Rényi-DP claims are converted with dp-accounting, which is not "
                                  "installed: pip install 'dpverify[accounting]'")
    assert GDPClaim(1.0).epsilon(0.01) > 0                   # GDP needs only scipy
