"""Monte-Carlo checks of utility theorems: a theorem object gives a quantity, a bound and a sampler;
``check`` estimates the quantity with a confidence interval and says holds / violated / inconclusive.
"""

from dpverify.theorems.check import VerdictRates, check_sweep, check_theorem, verdict_rates
from dpverify.theorems.intervals import runs_needed
from dpverify.theorems.result import DIRECTIONS, QUANTITIES, VERDICTS, SweepResult, TheoremResult

__all__ = ["check_theorem", "check_sweep", "VerdictRates", "verdict_rates", "TheoremResult", "SweepResult",
           "runs_needed", "QUANTITIES", "DIRECTIONS", "VERDICTS"]
