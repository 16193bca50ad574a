"""dpverify -- verify differential-privacy claims of real code.

The black-box audit::

    import dpverify
    from dpverify.neighbours import LInfNeighbours
    result = dpverify.audit(mechanism, LInfNeighbours(1.0).pairs(x), epsilon=0.1, seed=0)
    print(result)            # violation? epsilon lower bound, witness pair and event

A result without a violation means *no violation detected at this sample budget*, never *is DP*.

A utility theorem, by Monte Carlo (the protocol of a theorem object is in :mod:`dpverify.theorem`)::

    result = dpverify.check_theorem(theorem, runs=10_000, seed=0)
    print(result.summary())  # holds / violated / inconclusive, estimate and interval against the bound
"""

from dpverify.asserts import assert_private, assert_theorem
from dpverify.audit import audit
from dpverify.em_check import EMCheckResult, check_exponential_mechanism
from dpverify.errors import DPVerifyError, InputError, MechanismError, SuiteError
from dpverify.ledger import check_ledger
from dpverify.replay import ReplayResult, frozen_noise_replay
from dpverify.sensitivity import SensitivityResult, check_sensitivity
from dpverify.result import AuditResult, EventTest, LedgerResult, Witness
from dpverify.theorem import SweepResult, TheoremResult, check_sweep, check_theorem

__version__ = "0.1.0"

__all__ = [
    "audit",
    "AuditResult",
    "assert_private",
    "assert_theorem",
    "check_exponential_mechanism",
    "EMCheckResult",
    "check_sensitivity",
    "SensitivityResult",
    "frozen_noise_replay",
    "ReplayResult",
    "check_ledger",
    "LedgerResult",
    "check_theorem",
    "check_sweep",
    "TheoremResult",
    "SweepResult",
    "EventTest",
    "Witness",
    "DPVerifyError",
    "InputError",
    "MechanismError",
    "SuiteError",
    "__version__",
]
