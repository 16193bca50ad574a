"""dpverify inside a user's test suite: Hypothesis strategies of neighbouring inputs (``strategies``),
``assert_private`` / ``assert_theorem`` (``asserts``), the ``check_mechanism`` battery (``battery``) and the pytest
plugin (``pytest_plugin``).
"""

from dpverify.testing.battery import (
    CHECKS,
    CheckOutcome,
    MechanismChecks,
    check_mechanism,
    parametrize_with_checks,
    run_one_check,
)

__all__ = ["CHECKS", "CheckOutcome", "MechanismChecks", "check_mechanism", "parametrize_with_checks", "run_one_check"]
