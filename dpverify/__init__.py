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

import sys
import types
from typing import TYPE_CHECKING, Any

# Public names and the module each lives in.  They are imported on first use (PEP 562), so that importing
# the package -- e.g. pytest loading the dpverify plugin in another project -- does not pull in scipy.
_EXPORTS: dict[str, str] = {
    "assert_private": "dpverify.asserts", "assert_theorem": "dpverify.asserts",
    "audit": "dpverify.audit",
    "EMCheckResult": "dpverify.em_check", "check_exponential_mechanism": "dpverify.em_check",
    "DPVerifyError": "dpverify.errors", "InputError": "dpverify.errors", "MechanismError": "dpverify.errors",
    "SuiteError": "dpverify.errors",
    "check_ledger": "dpverify.ledger",
    "ReplayResult": "dpverify.replay", "frozen_noise_replay": "dpverify.replay",
    "SequentialResult": "dpverify.sequential", "audit_sequential": "dpverify.sequential",
    "SensitivityResult": "dpverify.sensitivity", "check_sensitivity": "dpverify.sensitivity",
    "AuditResult": "dpverify.result", "EventTest": "dpverify.result", "LedgerResult": "dpverify.result",
    "Witness": "dpverify.result",
    "SweepResult": "dpverify.theorem", "TheoremResult": "dpverify.theorem", "check_sweep": "dpverify.theorem",
    "check_theorem": "dpverify.theorem",
}

if TYPE_CHECKING:  # static checkers see the eager imports
    from dpverify.asserts import assert_private, assert_theorem  # noqa: F401
    from dpverify.audit import audit  # noqa: F401
    from dpverify.em_check import EMCheckResult, check_exponential_mechanism  # noqa: F401
    from dpverify.errors import DPVerifyError, InputError, MechanismError, SuiteError  # noqa: F401
    from dpverify.ledger import check_ledger  # noqa: F401
    from dpverify.replay import ReplayResult, frozen_noise_replay  # noqa: F401
    from dpverify.result import AuditResult, EventTest, LedgerResult, Witness  # noqa: F401
    from dpverify.sensitivity import SensitivityResult, check_sensitivity  # noqa: F401
    from dpverify.sequential import SequentialResult, audit_sequential  # noqa: F401
    from dpverify.theorem import SweepResult, TheoremResult, check_sweep, check_theorem  # noqa: F401


class _Package(types.ModuleType):
    """The package's module type: importing the submodule ``dpverify.audit`` must not rebind the public name
    ``dpverify.audit`` (the function) to the submodule, as the import system otherwise does."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _EXPORTS and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'dpverify' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__version__ = "0.1.0"

__all__ = [
    "audit",
    "AuditResult",
    "audit_sequential",
    "SequentialResult",
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
