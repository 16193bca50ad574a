"""Calibration of the auditor: its false-alarm rate on correct mechanisms is at most alpha.

Five mechanisms whose true ε on the audited pair *equals* the claim (so a valid test has no slack),
60 audits each with seeds 1000..1059 (fresh, fixed, never re-drawn), alpha = 0.05, small budgets
(20 000 test and 10 000 search samples per input).  The exact one-sided binomial test of
"false-alarm rate <= alpha" must not reject at level 1e-3: if the auditor's rate were exactly alpha,
this test would fail with probability at most 1e-3.
"""

import numpy as np

from algorithms.classic import Geometric, Histogram, Laplace, RandomizedResponse, TruncatedGeometric
from dpverify.statistical.calibration import CalibrationCase, false_alarm_rate

CASES = [
    CalibrationCase("laplace", Laplace(epsilon=0.5), [(0.0, 1.0)], 0.5),
    CalibrationCase("geometric", Geometric(epsilon=0.5), [(0, 1)], 0.5),
    CalibrationCase("randomized-response", RandomizedResponse(epsilon=1.0, k=2), [(0, 1)], 1.0),
    CalibrationCase("truncated-geometric", TruncatedGeometric(epsilon=0.5, upper=5), [(0, 1)], 0.5),
    CalibrationCase("histogram", Histogram(epsilon=0.5), [(np.zeros(3), np.array([1.0, 0.0, 0.0]))], 0.5),
]


def test_false_alarm_rate_at_most_alpha():
    res = false_alarm_rate(CASES, 60, first_seed=1000, alpha=0.05, samples=20_000,
                           search_samples=10_000, workers=1)
    assert res.runs == 300
    assert res.pvalue >= 1e-3, (res.violations, res.per_case)
    # and the upper end of its 95 % interval says something: not a vacuous pass
    assert res.confidence_interval()[1] < 0.1
