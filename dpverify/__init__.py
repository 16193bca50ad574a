"""dpverify -- verify differential-privacy claims of real code.

The black-box audit::

    import dpverify
    from dpverify.neighbours import LInfNeighbours
    result = dpverify.audit(mechanism, LInfNeighbours(1.0).pairs(x), epsilon=0.1, seed=0)
    print(result)            # violation? epsilon lower bound, witness pair and event

A result without a violation means *no violation detected at this sample budget*, never *is DP*.

A claim in another privacy definition, audited on the (ε, δ(ε)) profile it implies; a library call that makes one
release per call (diffprivlib, OpenDP, python-dp: ready targets in :mod:`dpverify.libraries`)::

    result = dpverify.audit_profile(mechanism, pairs, dpverify.ZCDPClaim(rho=0.5), seed=0)
    result = dpverify.audit(dpverify.per_call(my_release, epsilon=1.0), [(0.0, 1.0)], epsilon=1.0, seed=0)

A utility theorem, by Monte Carlo (the protocol of a theorem object is in :mod:`dpverify.theorems.check`)::

    result = dpverify.check_theorem(theorem, runs=10_000, seed=0)
    print(result.summary())  # holds / violated / inconclusive, estimate and interval against the bound
"""

from typing import TYPE_CHECKING, Any

# Public names and the module each lives in.  They are imported on first use (PEP 562), so that importing
# the package -- e.g. pytest loading the dpverify plugin in another project -- does not pull in scipy.
_EXPORTS: dict[str, str] = {
    "assert_private": "dpverify.testing.asserts", "assert_theorem": "dpverify.testing.asserts",
    "check_mechanism": "dpverify.testing.battery", "MechanismChecks": "dpverify.testing.battery",
    "audit": "dpverify.statistical.auditor",
    "EMCheckResult": "dpverify.exact.em_check", "check_exponential_mechanism": "dpverify.exact.em_check",
    "DPVerifyError": "dpverify.errors", "InputError": "dpverify.errors", "MechanismError": "dpverify.errors",
    "SuiteError": "dpverify.errors",
    "check_ledger": "dpverify.code_checks.ledger",
    "ReplayResult": "dpverify.code_checks.replay", "frozen_noise_replay": "dpverify.code_checks.replay",
    "SequentialResult": "dpverify.statistical.sequential", "audit_sequential": "dpverify.statistical.sequential",
    "AnytimeResult": "dpverify.statistical.anytime", "audit_anytime": "dpverify.statistical.anytime",
    "SensitivityResult": "dpverify.code_checks.sensitivity", "check_sensitivity": "dpverify.code_checks.sensitivity",
    "AuditResult": "dpverify.statistical.result", "EventTest": "dpverify.statistical.result", "LedgerResult": "dpverify.statistical.result",
    "Witness": "dpverify.statistical.result",
    "SweepResult": "dpverify.theorems.check", "TheoremResult": "dpverify.theorems.check", "check_sweep": "dpverify.theorems.check",
    "check_theorem": "dpverify.theorems.check",
    "audit_profile": "dpverify.statistical.profile", "ProfileAuditResult": "dpverify.statistical.profile",
    "ZCDPClaim": "dpverify.profiles", "GDPClaim": "dpverify.profiles", "RDPClaim": "dpverify.profiles",
    "ProfileClaim": "dpverify.profiles", "PrivacyClaim": "dpverify.results",
    "per_call": "dpverify.libraries.percall", "PerCall": "dpverify.libraries.percall",
}

if TYPE_CHECKING:  # static checkers see the eager imports
    from dpverify.testing.asserts import assert_private, assert_theorem  # noqa: F401
    from dpverify.testing.battery import MechanismChecks, check_mechanism  # noqa: F401
    from dpverify.statistical.auditor import audit  # noqa: F401
    from dpverify.exact.em_check import EMCheckResult, check_exponential_mechanism  # noqa: F401
    from dpverify.errors import DPVerifyError, InputError, MechanismError, SuiteError  # noqa: F401
    from dpverify.code_checks.ledger import check_ledger  # noqa: F401
    from dpverify.code_checks.replay import ReplayResult, frozen_noise_replay  # noqa: F401
    from dpverify.statistical.result import AuditResult, EventTest, LedgerResult, Witness  # noqa: F401
    from dpverify.code_checks.sensitivity import SensitivityResult, check_sensitivity  # noqa: F401
    from dpverify.statistical.sequential import SequentialResult, audit_sequential  # noqa: F401
    from dpverify.statistical.anytime import AnytimeResult, audit_anytime  # noqa: F401
    from dpverify.theorems.check import SweepResult, TheoremResult, check_sweep, check_theorem  # noqa: F401
    from dpverify.statistical.profile import ProfileAuditResult, audit_profile  # noqa: F401
    from dpverify.profiles import GDPClaim, ProfileClaim, RDPClaim, ZCDPClaim  # noqa: F401
    from dpverify.results import PrivacyClaim  # noqa: F401
    from dpverify.libraries.percall import PerCall, per_call  # noqa: F401


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
    "audit_anytime",
    "AnytimeResult",
    "assert_private",
    "assert_theorem",
    "check_mechanism",
    "MechanismChecks",
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
    "audit_profile",
    "ProfileAuditResult",
    "ZCDPClaim",
    "GDPClaim",
    "RDPClaim",
    "ProfileClaim",
    "PrivacyClaim",
    "per_call",
    "PerCall",
    "__version__",
]
