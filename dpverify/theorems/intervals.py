"""Confidence intervals of a theorem's quantity (Clopper-Pearson, Student t, distribution-free order
statistics), the verdict they give against the bound, and the runs a verdict would need."""


from __future__ import annotations

import math

import numpy as np
from scipy import stats

from dpverify.statistical.stats import clopper_pearson_lower, clopper_pearson_upper
from dpverify.theorems.result import MAX_RUNS_NEEDED



# --------------------------------------------------------------------------------------------------
# intervals, verdicts, runs needed
# --------------------------------------------------------------------------------------------------


def binomial_interval(k: int, n: int, alpha: float) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    return (float(clopper_pearson_lower(k, n, alpha / 2)), float(clopper_pearson_upper(k, n, alpha / 2)))


def mean_interval(x: np.ndarray, alpha: float) -> tuple[float, float]:
    m = float(x.mean())
    if len(x) < 2:
        return -math.inf, math.inf
    s = float(x.std(ddof=1))
    if s == 0.0:
        return m, m
    half = float(stats.t.ppf(1 - alpha / 2, len(x) - 1)) * s / math.sqrt(len(x))
    return m - half, m + half


def quantile_interval(x: np.ndarray, level: float, alpha: float) -> tuple[float, float]:
    ci = stats.quantile_test(x, q=float(np.quantile(x, level)), p=level).confidence_interval(1 - alpha)
    return float(ci.low), float(ci.high)


def verdict_of(direction: str, bound: float, lo: float, hi: float) -> str:
    if direction == "equal":
        return "holds" if lo <= bound <= hi else "violated"
    if direction == "at_least":
        return "holds" if lo > bound else ("violated" if hi < bound else "inconclusive")
    return "holds" if hi < bound else ("violated" if lo > bound else "inconclusive")


def runs_needed(estimate: float, bound: float, alpha: float, quantity: str = "probability",
                std: float | None = None) -> float:
    """Runs at which a two-sided ``1 - alpha`` interval around ``estimate`` would exclude ``bound``.

    Probabilities: the smallest ``n`` whose Clopper-Pearson interval at ``round(estimate * n)`` successes
    excludes the bound (bisection over ``n``).  Means: ``(t * std / |estimate - bound|)^2`` with the normal
    quantile.  ``inf`` when the estimate equals the bound or more than ``MAX_RUNS_NEEDED`` runs are needed.
    """
    gap = abs(estimate - bound)
    if gap == 0.0 or math.isnan(gap):
        return math.inf
    if quantity != "probability":
        if std is None or std == 0.0:
            return 2.0
        return float(math.ceil((float(stats.norm.isf(alpha / 2)) * std / gap) ** 2))

    def excludes(n: int) -> bool:
        lo, hi = binomial_interval(int(round(estimate * n)), n, alpha)
        return bound < lo or bound > hi

    hi_n = 2
    while not excludes(hi_n):
        hi_n *= 2
        if hi_n > MAX_RUNS_NEEDED:
            return math.inf
    lo_n = hi_n // 2
    while hi_n - lo_n > max(1, lo_n // 1000):  # 0.1 % is precise enough for a planning figure
        mid = (lo_n + hi_n) // 2
        if excludes(mid):
            hi_n = mid
        else:
            lo_n = mid
    return float(hi_n)


def vacuous(quantity: str, direction: str, bound: float) -> bool:
    if math.isinf(bound):
        return True
    if quantity == "probability":
        return (direction == "at_least" and bound <= 0.0) or (direction == "at_most" and bound >= 1.0)
    return False
