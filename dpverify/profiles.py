"""Privacy claims beyond ``(ε, δ)``: claims that imply a whole privacy profile ``δ(ε)``.

A mechanism is often stated private in another definition than ``(ε, δ)``-DP; each such claim implies an
``(ε, δ(ε))``-DP guarantee for every ``ε >= 0`` (its *privacy profile*), and a violation of any one point of that
profile refutes the claim.  Three forms are supported:

* :class:`ZCDPClaim` -- ``ρ``-zero-concentrated DP, Bun & Steinke, "Concentrated differential privacy:
  simplifications, extensions, and lower bounds" (TCC 2016), Def. 1.1: ``D_α(M(x) || M(x')) <= ρα`` for every
  ``α > 1``, i.e. ``(α, αρ)``-Rényi DP at every order.  Converted to ``(ε, δ)`` with the Rényi-DP conversion of
  Canonne, Kamath & Steinke, "The discrete Gaussian for differential privacy" (NeurIPS 2020), Prop. 12 of the
  arXiv version, ``δ = inf_α exp((α-1)(αρ-ε)) / (α-1) · (1-1/α)^α``, computed by dp-accounting
  (``dp_accounting.rdp.rdp_privacy_accountant.compute_delta`` / ``compute_epsilon``) over a dense grid of orders
  :data:`ZCDP_ORDERS`.  It is tighter than Bun & Steinke's Prop. 1.3, ``ε = ρ + 2√(ρ ln(1/δ))``.
* :class:`RDPClaim` -- ``(α, ε_α)``-Rényi DP at one order, Mironov, "Rényi differential privacy" (CSF 2017),
  Def. 4.  Converted with the same dp-accounting functions at that single order: the Canonne--Kamath--Steinke bound
  (for ``α > 1.01``; the library skips smaller orders as numerically unstable) and the total-variation bound
  ``δ(0) <= √(1 - e^{-ε_α})`` (Bretagnolle--Huber, since ``KL <= D_α``); for orders ``α <= 1.01`` Mironov's
  Prop. 3, ``ε = ε_α + ln(1/δ)/(α-1)``, is used as well (it is never tighter above 1.01).
* :class:`GDPClaim` -- ``μ``-Gaussian DP, Dong, Roth & Su, "Gaussian differential privacy" (JRSS-B 2022),
  Def. 2.6.  Its profile is exact in closed form (Cor. 2.13):
  ``δ(ε) = Φ(-ε/μ + μ/2) - e^ε Φ(-ε/μ - μ/2)``, evaluated in log space (``scipy.special.log_ndtr``);
  ``ε(δ)`` by root finding.

dp-accounting is imported only when a zCDP or Rényi-DP claim is converted (``pip install 'dpverify[accounting]'``).

:func:`parse_claim` reads the mapping forms of suite files and reports:

>>> parse_claim({"zcdp": 0.5}), parse_claim({"gdp": 1})
(ZCDPClaim(rho=0.5), GDPClaim(mu=1.0))
>>> claim = GDPClaim(1.0)
>>> str(claim), round(claim.epsilon(0.01), 3)
('μ=1 GDP', 2.318)
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from numbers import Real
from typing import Any, ClassVar

import numpy as np

from dpverify._validation import check_real
from dpverify.errors import InputError
from dpverify.results import PrivacyClaim

__all__ = ["ProfileClaim", "ZCDPClaim", "GDPClaim", "RDPClaim", "DEFAULT_DELTAS", "ZCDP_ORDERS", "parse_claim",
           "ACCEPTED_FORMS"]

#: The δ at which a profile claim is audited by default (:func:`dpverify.statistical.profile.audit_profile`).
DEFAULT_DELTAS: tuple[float, ...] = (0.1, 0.01, 0.001)

#: Rényi orders over which a zCDP claim is converted: ``α - 1`` geometric from 0.01 to 10⁵, 200 per decade
#: (adjacent orders 1.2 % apart, so the grid costs under 10⁻⁴ relative in ε); the optimal order lies inside for
#: ``ρ`` in ``[10⁻⁴, 50]`` and ``δ`` down to ``10⁻¹⁰`` (about ``1 + √(ln(1/δ)/ρ)``: from 1.2 to a few
#: hundred).
ZCDP_ORDERS: tuple[float, ...] = tuple(float(a) for a in 1.0 + np.logspace(-2.0, 5.0, 1401))

#: The forms :func:`parse_claim` accepts, for messages.
ACCEPTED_FORMS = ('{"epsilon": ε, "delta": δ} ((ε, δ)-DP, delta optional), {"zcdp": ρ}, {"gdp": μ} or '
                  '{"rdp": {"alpha": α, "epsilon": ε}}')

#: dp-accounting's RDP conversion uses its improved bound only above this order (numerically unstable below).
ACCOUNTING_MIN_ORDER = 1.01

MISSING_ACCOUNTING = ("ρ-zCDP and Rényi-DP claims are converted with dp-accounting, which is not installed: "
                      "pip install 'dpverify[accounting]'")


def _rdp_conversion() -> tuple[Any, Any]:
    """dp-accounting's ``(compute_delta, compute_epsilon)`` for RDP guarantees, imported on first use."""
    try:
        from dp_accounting.rdp import compute_epsilon, rdp_privacy_accountant
    except ImportError:
        raise InputError(MISSING_ACCOUNTING) from None
    return rdp_privacy_accountant.compute_delta, compute_epsilon


def _parameter(name: str, value: Any, *, above: float = 0.0) -> float:
    """``value`` as a finite float ``> above``; bools, strings, NaN and infinities are refused."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise InputError(f"{name} must be a number > {above:g}, got {value!r} ({type(value).__name__})")
    v = float(value)
    if not math.isfinite(v) or v <= above:
        raise InputError(f"{name} must be a finite number > {above:g}, got {value!r}")
    return v


def _check_epsilon(epsilon: Any) -> float:
    if isinstance(epsilon, bool) or not isinstance(epsilon, Real):
        raise InputError(f"epsilon must be a number >= 0, got {epsilon!r}")
    return check_real("epsilon", epsilon, low=0.0, high=math.inf, low_open=False, high_open=True)


def _check_delta(delta: Any) -> float:
    if isinstance(delta, bool) or not isinstance(delta, Real):
        raise InputError(f"delta must be a number in (0, 1), got {delta!r}")
    return check_real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)


class ProfileClaim(ABC):
    """A privacy claim that implies a whole ``(ε, δ(ε))`` profile (abstract).

    Subclasses are frozen dataclasses validated when built; they define ``form`` (``"zcdp"``, ``"gdp"``,
    ``"rdp"``), ``conversion`` (which conversion is used, with its citation), :meth:`delta`, :meth:`epsilon`,
    :meth:`to_dict` and ``__str__``."""

    form: ClassVar[str]
    conversion: ClassVar[str]

    @abstractmethod
    def delta(self, epsilon: float) -> float:
        """``δ(ε)`` implied by the claim, for ``ε >= 0``."""

    @abstractmethod
    def epsilon(self, delta: float) -> float:
        """The smallest ``ε >= 0`` with ``δ(ε) <= delta`` (``0 < delta < 1``); ``0.0`` when ``ε = 0`` already
        satisfies it."""

    def points(self, deltas: Sequence[float] = DEFAULT_DELTAS) -> list[PrivacyClaim]:
        """The profile at ``deltas``: ``[PrivacyClaim(ε(δ_i), δ_i)]``."""
        if isinstance(deltas, (str, bytes)) or not isinstance(deltas, Sequence) or len(deltas) == 0:
            raise InputError(f"deltas must be a non-empty sequence of numbers in (0, 1), got {deltas!r}")
        out = []
        for d in deltas:
            d = _check_delta(d)
            eps = self.epsilon(d)
            if not math.isfinite(eps):
                raise InputError(f"the claim {self} implies no finite ε at δ = {d:g}; choose a larger δ")
            out.append(PrivacyClaim(eps, d))
        return out

    @abstractmethod
    def to_dict(self) -> dict[str, Any]:
        """The claim as the mapping :func:`parse_claim` reads back."""

    @abstractmethod
    def __str__(self) -> str: ...


@dataclass(frozen=True)
class ZCDPClaim(ProfileClaim):
    """``ρ``-zCDP (Bun & Steinke, TCC 2016, Def. 1.1), ``ρ > 0``."""

    rho: float
    form: ClassVar[str] = "zcdp"
    conversion: ClassVar[str] = (
        "ρ-zCDP is (α, αρ)-Rényi DP at every order α > 1 (Bun & Steinke, TCC 2016, Def. 1.1), converted to "
        "(ε, δ) with the bound of Canonne, Kamath & Steinke (NeurIPS 2020, Prop. 12) minimised over a dense grid of "
        "orders by dp-accounting")

    def __post_init__(self) -> None:
        object.__setattr__(self, "rho", _parameter("zCDP rho", self.rho))

    def delta(self, epsilon: float) -> float:
        epsilon = _check_epsilon(epsilon)
        compute_delta, _ = _rdp_conversion()
        orders = np.asarray(ZCDP_ORDERS)
        return float(compute_delta(orders, orders * self.rho, epsilon)[0])

    def epsilon(self, delta: float) -> float:
        delta = _check_delta(delta)
        _, compute_epsilon = _rdp_conversion()
        orders = np.asarray(ZCDP_ORDERS)
        return float(compute_epsilon(orders, orders * self.rho, delta)[0])

    def to_dict(self) -> dict[str, Any]:
        return {"zcdp": self.rho}

    def __str__(self) -> str:
        return f"ρ={self.rho:g} zCDP"


@dataclass(frozen=True)
class RDPClaim(ProfileClaim):
    """``(α, ε_α)``-Rényi DP at one order (Mironov, CSF 2017, Def. 4), ``α > 1``, ``ε_α > 0``."""

    alpha: float
    epsilon_alpha: float
    form: ClassVar[str] = "rdp"
    conversion: ClassVar[str] = (
        "(α, ε_α)-Rényi DP (Mironov, CSF 2017, Def. 4) converted to (ε, δ) at its single order by dp-accounting: "
        "the bound of Canonne, Kamath & Steinke (NeurIPS 2020, Prop. 12) and δ(0) <= √(1 - e^(-ε_α)); below "
        "order 1.01 also Mironov's Prop. 3")

    def __post_init__(self) -> None:
        object.__setattr__(self, "alpha", _parameter("Rényi order alpha", self.alpha, above=1.0))
        object.__setattr__(self, "epsilon_alpha", _parameter("Rényi-DP epsilon", self.epsilon_alpha))

    def delta(self, epsilon: float) -> float:
        epsilon = _check_epsilon(epsilon)
        compute_delta, _ = _rdp_conversion()
        a, r = self.alpha, self.epsilon_alpha
        library = float(compute_delta([a], [r], epsilon)[0])
        # Mironov (CSF 2017) Prop. 3: δ = exp((α - 1)(ε_α - ε)); looser than the library's bound above order 1.01
        basic = math.exp(min(0.0, (a - 1.0) * (r - epsilon)))
        return min(library, basic)

    def epsilon(self, delta: float) -> float:
        delta = _check_delta(delta)
        _, compute_epsilon = _rdp_conversion()
        a, r = self.alpha, self.epsilon_alpha
        library = float(compute_epsilon([a], [r], delta)[0])
        basic = max(0.0, r + math.log(1.0 / delta) / (a - 1.0))
        return min(library, basic)

    def to_dict(self) -> dict[str, Any]:
        return {"rdp": {"alpha": self.alpha, "epsilon": self.epsilon_alpha}}

    def __str__(self) -> str:
        return f"(α={self.alpha:g}, ε={self.epsilon_alpha:g}) Rényi DP"


@dataclass(frozen=True)
class GDPClaim(ProfileClaim):
    """``μ``-GDP (Dong, Roth & Su, JRSS-B 2022, Def. 2.6), ``μ > 0``: the exact profile of the Gaussian mechanism
    with sensitivity / σ = μ."""

    mu: float
    form: ClassVar[str] = "gdp"
    conversion: ClassVar[str] = (
        "μ-GDP (Dong, Roth & Su, JRSS-B 2022, Def. 2.6) has the exact profile δ(ε) = Φ(-ε/μ + μ/2) - "
        "e^ε Φ(-ε/μ - μ/2) (Cor. 2.13), inverted by root finding")

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", _parameter("GDP mu", self.mu))

    def _log_delta(self, epsilon: float) -> float:
        """``ln δ(ε)`` in log space: ``ln Φ(t + μ/2) + ln(1 - exp(ε + ln Φ(t - μ/2) - ln Φ(t + μ/2)))`` with
        ``t = -ε/μ`` (``-inf`` where rounding leaves nothing)."""
        from scipy.special import log_ndtr

        mu = self.mu
        t = -epsilon / mu
        a = float(log_ndtr(t + mu / 2.0))
        b = epsilon + float(log_ndtr(t - mu / 2.0))
        if not b < a:
            return -math.inf
        return a + math.log(-math.expm1(b - a))

    def delta(self, epsilon: float) -> float:
        epsilon = _check_epsilon(epsilon)
        return min(1.0, max(0.0, math.exp(self._log_delta(epsilon))))

    def epsilon(self, delta: float) -> float:
        from scipy.optimize import brentq

        delta = _check_delta(delta)
        target = math.log(delta)
        if self._log_delta(0.0) <= target:
            return 0.0

        def gap(eps: float) -> float:
            # floored so that brentq never sees -inf; the root lies where ln δ(ε) = ln δ > -745
            return max(self._log_delta(eps), -1e6) - target

        hi = max(1.0, self.mu)
        while gap(hi) > 0:
            hi *= 2.0
        return float(brentq(gap, 0.0, hi, xtol=1e-13, rtol=1e-13, maxiter=500))

    def to_dict(self) -> dict[str, Any]:
        return {"gdp": self.mu}

    def __str__(self) -> str:
        return f"μ={self.mu:g} GDP"


def parse_claim(value: Mapping[str, Any]) -> PrivacyClaim | ProfileClaim:
    """A claim from its mapping form: ``{"epsilon": ε, "delta": δ}`` (a :class:`~dpverify.results.PrivacyClaim`,
    ``delta`` optional), ``{"zcdp": ρ}``, ``{"gdp": μ}`` or ``{"rdp": {"alpha": α, "epsilon": ε}}``.

    Raises :class:`~dpverify.errors.InputError` naming the accepted forms for anything else (strings such as
    ``"0.5"`` are refused, not converted)."""
    try:
        return _parse(value)
    except InputError as exc:
        if ACCEPTED_FORMS in str(exc):
            raise
        raise InputError(f"{exc}; a claim is one of {ACCEPTED_FORMS}") from None


def _parse(value: Any) -> PrivacyClaim | ProfileClaim:
    if not isinstance(value, Mapping):
        raise InputError(f"a claim must be a mapping, got {value!r}; write one of {ACCEPTED_FORMS}")
    keys = set(value)
    if keys and keys <= {"epsilon", "delta"} and "epsilon" in keys:
        eps, delta = value["epsilon"], value.get("delta", 0.0)
        for name, v in (("epsilon", eps), ("delta", delta)):
            if isinstance(v, bool) or not isinstance(v, Real):
                raise InputError(f"claim {name} must be a number, got {v!r}")
        return PrivacyClaim(float(eps), float(delta))
    if len(keys) != 1:
        raise InputError(f"expected exactly one claim form, got keys {sorted(map(str, keys))}; write one of "
                         f"{ACCEPTED_FORMS}")
    (form,) = keys
    inner = value[form]
    if form == "zcdp":
        return ZCDPClaim(inner)
    if form == "gdp":
        return GDPClaim(inner)
    if form == "rdp":
        if not isinstance(inner, Mapping) or set(inner) != {"alpha", "epsilon"}:
            raise InputError(f'an rdp claim is {{"rdp": {{"alpha": α, "epsilon": ε}}}}, got {value!r}; write one of '
                             f"{ACCEPTED_FORMS}")
        return RDPClaim(inner["alpha"], inner["epsilon"])
    raise InputError(f"unknown claim form {form!r}; write one of {ACCEPTED_FORMS}")
