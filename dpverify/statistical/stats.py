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
]


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


def _wilson(p: NDArray[np.float64], n: ArrayLike, z: float, sign: float) -> NDArray[np.float64]:
    n = np.asarray(n, dtype=np.float64)
    z2 = z * z
    centre = p + z2 / (2.0 * n)
    half = z * np.sqrt(np.maximum(p * (1.0 - p), 0.0) / n + z2 / (4.0 * n * n))
    return np.clip((centre + sign * half) / (1.0 + z2 / n), 0.0, 1.0)


def wilson_lower(p_hat: ArrayLike, n: ArrayLike, z: float) -> NDArray[np.float64]:
    """Wilson score lower bound for an observed proportion ``p_hat`` with effective size ``n``."""
    return _wilson(np.asarray(p_hat, dtype=np.float64), n, z, -1.0)


def wilson_upper(p_hat: ArrayLike, n: ArrayLike, z: float) -> NDArray[np.float64]:
    """Wilson score upper bound for an observed proportion ``p_hat`` with effective size ``n``."""
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
