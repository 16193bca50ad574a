"""Confidence sequences for a binomial proportion: bounds that hold at every sample size at once.

A *confidence sequence* at level ``a`` for the mean ``p`` of i.i.d. Bernoulli draws is a sequence of intervals
``C_1, C_2, ...`` with ``P[p in C_t for every t] >= 1 - a`` (Howard, Ramdas, McAuliffe & Sekhon, "Time-uniform,
nonparametric, nonasymptotic confidence sequences", Ann. Stat. 49(2), 2021, section 2).  One may look at it after
every batch and stop whenever one likes: the bound at the stopping time is still valid.

This module implements the **beta-binomial mixture** (Robbins, "Statistical methods related to the law of the
iterated logarithm", Ann. Math. Stat. 41, 1970, section 3; Howard et al. 2021, section 3.2, conjugate mixtures):
with ``K`` successes in ``N`` draws and a ``Beta(a0, b0)`` prior over the alternative ``q``,

    M_N(m) = B(K + a0, N - K + b0) / B(a0, b0)  /  (m^K (1 - m)^(N - K))

is the mixture likelihood ratio of "``q ~ Beta(a0, b0)``" against "``p = m``": a nonnegative martingale with
``M_0 = 1`` under ``p = m``.  Ville's inequality gives ``P[exists N: M_N(p) >= 1/a] <= a``, so

    C_N = { m : M_N(m) < 1/a }

is a confidence sequence at level ``a``.  ``ln M_N(m)`` is strictly convex in ``m`` with its minimum (``<= 0``:
a mixture of likelihoods is at most the largest one) at ``K/N``, so ``C_N`` is an interval around ``K/N``; its
ends are found by bracketed root finding (``scipy.optimize.brentq``).  It depends on the data only through the
running totals ``K`` and ``N``, so it can be updated after each batch of counts.  The running intersection
(largest lower end, smallest upper end so far) is a confidence sequence too and is what :class:`ProportionSequence`
reports.

**The prior.**  Any prior fixed before the stream starts gives a valid sequence; it decides *where* the sequence
is tight.  :func:`centred_prior` centres it on an estimate from independent data (the audit's search sample) with
a small weight, which narrows the bounds when that estimate is right and costs little when it is not (Howard et
al. 2021, section 3.5, on tuning a mixture to the sample sizes and variances one expects).  The Jeffreys prior
``Beta(1/2, 1/2)`` is the default.

Known closed forms (tested): with ``K = 0`` the upper end is ``1 - (a B(a0, N + b0) / B(a0, b0))^(1/N)``, with
``K = N`` the lower end is ``(a B(N + a0, b0) / B(a0, b0))^(1/N)``.

scipy and statsmodels have no confidence sequence (scipy.stats.binomtest and statsmodels' proportion_confint are
fixed-sample intervals; a fixed-sample interval checked after every batch loses its level).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize, special

from dpverify.errors import InputError

__all__ = ["JEFFREYS", "log_mixture", "mixture_lower", "mixture_upper", "centred_prior", "ProportionSequence"]

#: The Jeffreys prior ``Beta(1/2, 1/2)``.
JEFFREYS = (0.5, 0.5)


def _check_prior(a0: float, b0: float) -> None:
    if not (math.isfinite(a0) and math.isfinite(b0) and a0 > 0 and b0 > 0):
        raise InputError(f"the prior Beta(a0, b0) needs finite a0 > 0 and b0 > 0, got a0={a0!r}, b0={b0!r}")


def _check_level(level: float) -> None:
    if not (isinstance(level, (int, float)) and 0 < level < 1):
        raise InputError(f"level must lie in (0, 1), got {level!r}")


def log_mixture(k: ArrayLike, n: ArrayLike, m: ArrayLike, a0: float = JEFFREYS[0],
                b0: float = JEFFREYS[1]) -> NDArray[np.float64]:
    """``ln M_N(m)`` of the module docstring (vectorised): ``k`` successes in ``n`` draws, null mean ``m``.

    ``m`` is rejected at level ``a`` (it lies outside the sequence) exactly when this is ``>= ln(1/a)``."""
    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    m = np.asarray(m, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        lik = np.where(k > 0, k * np.log(m), 0.0) + np.where(n - k > 0, (n - k) * np.log1p(-m), 0.0)
    return special.betaln(k + a0, n - k + b0) - special.betaln(a0, b0) - lik


def _end(k: int, n: int, level: float, a0: float, b0: float, lower: bool) -> float:
    _check_level(level)
    _check_prior(a0, b0)
    if n < 0 or k < 0 or k > n:
        raise InputError(f"need 0 <= k <= n, got k={k!r}, n={n!r}")
    if n == 0:
        return 0.0 if lower else 1.0
    if lower and k == 0:
        return 0.0
    if not lower and k == n:
        return 1.0
    target = math.log(1.0 / level)

    def f(m: float) -> float:
        return float(log_mixture(k, n, m, a0, b0)) - target

    centre = k / n
    if lower:
        lo, hi = 0.0, centre
        if f(lo + 1e-300) <= 0:   # not reachable for k > 0, kept as a guard
            return 0.0
        lo = 1e-300
    else:
        lo, hi = centre, 1.0
        if f(1.0 - 1e-16) <= 0:
            return 1.0
        hi = 1.0 - 1e-16
    return float(optimize.brentq(f, lo, hi, xtol=1e-300, rtol=1e-13, maxiter=500))


def mixture_lower(k: int, n: int, level: float, a0: float = JEFFREYS[0], b0: float = JEFFREYS[1]) -> float:
    """Lower end of the beta-binomial mixture sequence at level ``level`` after ``k`` successes in ``n`` draws
    (not intersected with the earlier ends; see :class:`ProportionSequence`)."""
    return _end(int(k), int(n), level, a0, b0, lower=True)


def mixture_upper(k: int, n: int, level: float, a0: float = JEFFREYS[0], b0: float = JEFFREYS[1]) -> float:
    """Upper end of the beta-binomial mixture sequence at level ``level`` after ``k`` successes in ``n`` draws."""
    return _end(int(k), int(n), level, a0, b0, lower=False)


def centred_prior(k: int, n: int, strength: float) -> tuple[float, float]:
    """A ``Beta(a0, b0)`` prior of mean ``(k + 1/2) / (n + 1)`` (the estimate from ``k`` of ``n`` independent draws,
    kept off 0 and 1) and weight ``a0 + b0 = strength`` pseudo-draws."""
    if not (math.isfinite(strength) and strength > 0):
        raise InputError(f"prior strength must be a finite number > 0, got {strength!r}")
    if n < 0 or k < 0 or k > n:
        raise InputError(f"need 0 <= k <= n, got k={k!r}, n={n!r}")
    mean = (k + 0.5) / (n + 1.0)
    return strength * mean, strength * (1.0 - mean)


@dataclass
class ProportionSequence:
    """A running beta-binomial mixture confidence sequence at level ``level`` (see the module docstring).

    Feed it counts with :meth:`update`; :attr:`lower` / :attr:`upper` are the running intersection of the
    intervals so far: with probability at least ``1 - level`` they contain the true proportion at every update.

    >>> s = ProportionSequence(level=0.05)
    >>> s.update(30, 100); s.update(70, 200)
    >>> s.k, s.n, 0.2 < s.lower < 1 / 3 < s.upper < 0.47
    (100, 300, True)
    """

    level: float
    a0: float = JEFFREYS[0]
    b0: float = JEFFREYS[1]
    k: int = 0
    n: int = 0
    lower: float = 0.0
    upper: float = 1.0
    history: list[tuple[int, float, float]] = field(default_factory=list)

    def __post_init__(self) -> None:
        _check_level(self.level)
        _check_prior(self.a0, self.b0)

    def update(self, k: int, n: int) -> None:
        """Add a batch: ``k`` of ``n`` new draws fell in the event."""
        k, n = int(k), int(n)
        if n < 0 or k < 0 or k > n:
            raise InputError(f"a batch needs 0 <= k <= n, got k={k!r}, n={n!r}")
        self.k += k
        self.n += n
        self.lower = max(self.lower, mixture_lower(self.k, self.n, self.level, self.a0, self.b0))
        self.upper = min(self.upper, mixture_upper(self.k, self.n, self.level, self.a0, self.b0))
        self.history.append((self.n, self.lower, self.upper))
