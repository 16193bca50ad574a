"""Binomial confidence bounds used by the audits.

* :func:`clopper_pearson_lower` / :func:`clopper_pearson_upper` -- exact one-sided Clopper--Pearson
  bounds (Clopper & Pearson 1934) from the beta quantile function (``scipy.stats.beta.ppf``),
  vectorised.  A one-sided bound at level ``a`` equals the matching end of the two-sided interval of
  ``statsmodels.stats.proportion.proportion_confint(method="beta", alpha=2a)`` (tested).
* :func:`wilson_lower` / :func:`wilson_upper` -- Wilson score bounds, used only to *rank* candidate
  events during the search (closed form, cheap for 10^5 candidates), never for a reported bound.
* :func:`epsilon_lower_bound` -- ``ln((p_low - delta) / p_high)``, the DP-Sniper / Jagielski et al.
  bound (Bichsel et al., S&P 2021; Jagielski et al., NeurIPS 2020); for ``delta > 0`` it is the hockey-stick test
  ``P[M(x) in S] <= e^eps P[M(x') in S] + delta``.
* :func:`poisson_ratio_lower` -- the *conditional* bound on ``ln(p_num / p_den)`` from counts on Poisson-sized samples
  (:func:`poissonized_size`): exact, and narrower than the two Clopper--Pearson bounds above because it spends the
  whole level on one binomial instead of half on each probability.  :func:`projected_bounds` gives what either
  method would certify at expected counts, which the audit uses to choose between them before counting.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

__all__ = [
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "wilson_lower",
    "wilson_upper",
    "epsilon_lower_bound",
    "normal_quantile",
    "poisson_ratio_lower",
    "poissonized_size",
    "projected_bounds",
    "POISSON_RESERVE",
]

#: a Poisson sample size has mean ``n - POISSON_RESERVE * sqrt(n)`` for a budget of ``n`` outputs: it exceeds ``n``
#: with probability about 3e-5 (a normal tail beyond 4 standard deviations)
POISSON_RESERVE = 4.0


def clopper_pearson_lower(k: ArrayLike, n: ArrayLike, level: float) -> NDArray[np.float64]:
    """Exact lower bound ``L`` with ``P[p < L] <= level`` for ``k`` successes in ``n`` trials."""
    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = stats.beta.ppf(level, k, n - k + 1.0)
    return np.where(k <= 0, 0.0, out)


def clopper_pearson_upper(k: ArrayLike, n: ArrayLike, level: float) -> NDArray[np.float64]:
    """Exact upper bound ``U`` with ``P[p > U] <= level`` for ``k`` successes in ``n`` trials."""
    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = stats.beta.ppf(1.0 - level, k + 1.0, n - k)
    return np.where(k >= n, 1.0, out)


def normal_quantile(level: float) -> float:
    """``z`` with ``P[Z > z] = level`` for a standard normal ``Z``."""
    return float(stats.norm.isf(level))


def _wilson(p: NDArray[np.float64], n: ArrayLike, z: ArrayLike, sign: float) -> NDArray[np.float64]:
    n = np.asarray(n, dtype=np.float64)
    z = np.asarray(z, dtype=np.float64)
    z2 = z * z
    centre = p + z2 / (2.0 * n)
    half = z * np.sqrt(np.maximum(p * (1.0 - p), 0.0) / n + z2 / (4.0 * n * n))
    return np.clip((centre + sign * half) / (1.0 + z2 / n), 0.0, 1.0)


def wilson_lower(p_hat: ArrayLike, n: ArrayLike, z: ArrayLike) -> NDArray[np.float64]:
    """Wilson score lower bound for an observed proportion ``p_hat`` with effective size ``n`` at the normal
    quantile ``z`` (each may be an array, broadcast together)."""
    return _wilson(np.asarray(p_hat, dtype=np.float64), n, z, -1.0)


def wilson_upper(p_hat: ArrayLike, n: ArrayLike, z: ArrayLike) -> NDArray[np.float64]:
    """Wilson score upper bound for an observed proportion ``p_hat`` with effective size ``n`` at the normal
    quantile ``z`` (each may be an array, broadcast together)."""
    return _wilson(np.asarray(p_hat, dtype=np.float64), n, z, +1.0)


def epsilon_lower_bound(p_low: ArrayLike, p_high: ArrayLike, delta: float = 0.0) -> NDArray[np.float64]:
    """``ln((p_low - delta) / p_high)``; ``-inf`` where ``p_low <= delta``.

    ``p_low`` is a lower bound on ``P[M(x) in S]``, ``p_high`` an upper bound on ``P[M(x') in S]``.
    If both hold, the mechanism is not (eps, delta)-DP for any eps below the returned value.
    """
    p_low = np.asarray(p_low, dtype=np.float64) - delta
    p_high = np.asarray(p_high, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(np.where(p_low > 0, p_low, 1.0)) - np.log(p_high)
    return np.where(p_low > 0, out, -np.inf)


def poissonized_size(n: int) -> int:
    """The mean ``m`` of the Poisson sample sizes drawn for a budget of ``n`` outputs per input:
    ``n - ceil(POISSON_RESERVE * sqrt(n))`` (0 when that is not positive: no Poisson test at that budget)."""
    return max(0, int(n) - int(np.ceil(POISSON_RESERVE * np.sqrt(n))))


def poisson_ratio_lower(k_num: ArrayLike, k_den: ArrayLike, level: float) -> NDArray[np.float64]:
    """Exact lower confidence bound at level ``level`` on ``ln(p_num / p_den)`` from an event's counts ``k_num``,
    ``k_den`` on two independent samples whose *sizes* are independent Poisson draws of one mean ``m``.

    Then the counts are independent Poisson variables of means ``m·p_num`` and ``m·p_den`` (Poisson thinning), and
    given their sum ``T``, ``k_num ~ Binomial(T, π)`` with ``π = p_num / (p_num + p_den)`` exactly.  The one-sided
    Clopper--Pearson bound ``π_L`` of that binomial at ``level`` gives ``ln(π_L / (1 − π_L)) <= ln(p_num / p_den)``
    with probability at least ``1 − level`` given ``T``, hence unconditionally (the conditional test of the ratio of
    two Poisson means, Przyborowski & Wileński 1940).  ``-inf`` when ``k_num = 0``.  Against
    :func:`epsilon_lower_bound` of two Clopper--Pearson bounds at ``level / 2`` each, the interval is narrower by a
    factor of about ``z(level)·sqrt(2) / (2·z(level/2))`` for rare events (0.55 at ``level`` 0.1), and the Poisson
    counts lose the binomial's ``1 − p`` in their variance: :func:`projected_bounds` tells which is tighter."""
    k_num = np.asarray(k_num, dtype=np.float64)
    k_den = np.asarray(k_den, dtype=np.float64)
    pi = clopper_pearson_lower(k_num, k_num + k_den, level)
    with np.errstate(divide="ignore"):
        out = np.log(np.where(pi > 0, pi, 1.0)) - np.log1p(-pi)
    return np.where(pi > 0, out, -np.inf)


def projected_bounds(p_num: ArrayLike, p_den: ArrayLike, n: int, level: float,
                     delta: float = 0.0) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """What each method would certify for events of probabilities ``p_num``, ``p_den`` at a budget of ``n`` outputs
    per input and level ``level`` per test, at the expected counts: ``(clopper_pearson, poisson)`` -- the two
    Clopper--Pearson bounds at ``level / 2`` each on ``n`` outputs (:func:`epsilon_lower_bound`), and
    :func:`poisson_ratio_lower` at ``level`` on Poisson samples of mean :func:`poissonized_size` ``(n)`` (``-inf``
    when ``delta > 0``, which the ratio alone cannot bound, or when that mean is 0)."""
    p_num = np.clip(np.asarray(p_num, dtype=np.float64), 0.0, 1.0)
    p_den = np.clip(np.asarray(p_den, dtype=np.float64), 0.0, 1.0)
    cp = epsilon_lower_bound(clopper_pearson_lower(p_num * n, n, level / 2),
                             clopper_pearson_upper(p_den * n, n, level / 2), delta)
    m = poissonized_size(n)
    if delta > 0 or m == 0:
        return cp, np.full(np.broadcast(p_num, p_den).shape, -np.inf)
    return cp, poisson_ratio_lower(p_num * m, p_den * m, level)
