"""Measuring the auditor itself: its false-alarm rate on mechanisms that keep their claim.

:func:`false_alarm_rate` runs :func:`dpverify.audit` many times, each with its own seed, on mechanisms
whose true ε equals the claim (the hardest case for a valid test: any optimism in the bound shows up as
alarms), counts the violations reported, and tests the rate against ``alpha`` with an exact binomial
test (``scipy.stats.binomtest``, one-sided).  The Clopper--Pearson interval of the rate is reported.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from scipy import stats

from dpverify.statistical.auditor import audit

__all__ = ["CalibrationCase", "CalibrationResult", "false_alarm_rate"]


@dataclass(frozen=True)
class CalibrationCase:
    """A mechanism, its neighbouring pairs and a claim it keeps exactly (true ε = claimed ε)."""

    name: str
    mechanism: Callable[..., Any]
    pairs: Sequence[Any]
    epsilon: float
    delta: float = 0.0


@dataclass(frozen=True)
class CalibrationResult:
    """``violations`` alarms in ``runs`` audits at level ``alpha``."""

    runs: int
    violations: int
    alpha: float
    per_case: dict[str, int] = field(default_factory=dict)

    @property
    def rate(self) -> float:
        return self.violations / self.runs

    @property
    def pvalue(self) -> float:
        """Exact one-sided binomial p-value of "the false-alarm rate is at most alpha"."""
        return float(stats.binomtest(self.violations, self.runs, self.alpha, alternative="greater").pvalue)

    def confidence_interval(self, confidence: float = 0.95) -> tuple[float, float]:
        ci = stats.binomtest(self.violations, self.runs).proportion_ci(confidence, method="exact")
        return float(ci.low), float(ci.high)


def false_alarm_rate(
    cases: Sequence[CalibrationCase],
    runs_per_case: int,
    *,
    first_seed: int = 0,
    alpha: float = 0.05,
    **audit_options: Any,
) -> CalibrationResult:
    """Audit every case ``runs_per_case`` times with seeds ``first_seed, first_seed + 1, ...``."""
    total = 0
    per_case: dict[str, int] = {}
    for case in cases:
        count = 0
        for r in range(runs_per_case):
            res = audit(case.mechanism, case.pairs, case.epsilon, case.delta, alpha=alpha,
                        seed=first_seed + r, **audit_options)
            count += int(res.violation)
        per_case[case.name] = count
        total += count
    return CalibrationResult(runs_per_case * len(cases), total, alpha, per_case)
