"""Exact checks: privacy loss computed from exact output laws instead of bounded from samples.

``loss`` -- exact output distributions (``log_pmf``/``pmf``), the pure-DP loss and the hockey-stick divergence of
a pair, :func:`exact_audit`; ``em_check`` -- the exponential mechanism's output frequencies against its exact law.
"""

from dpverify.exact.em_check import Deviation, EMCheckResult, check_exponential_mechanism, em_power, em_samples_for_power
from dpverify.exact.em_ratios import EMRatioResult, em_exact_ratios, exponential_mechanism_law
from dpverify.exact.loss import (
    MASS_TOLERANCE,
    ExactAuditResult,
    ExactDistribution,
    ExactPairResult,
    ExactUnavailable,
    PrivacyLoss,
    exact_audit,
    exact_distribution,
    exact_privacy_loss,
)

__all__ = [
    "ExactDistribution", "ExactUnavailable", "PrivacyLoss", "ExactPairResult", "ExactAuditResult",
    "exact_distribution", "exact_privacy_loss", "exact_audit", "exponential_mechanism_law", "EMRatioResult",
    "em_exact_ratios", "MASS_TOLERANCE",
    "check_exponential_mechanism", "EMCheckResult", "Deviation", "em_power", "em_samples_for_power",
]
