"""The common result model: one vocabulary of verdicts, one claim object, and the three things every check's result
answers under the same names.

* :class:`Verdict` -- ``pass`` (no violation detected at this budget: never "is private"), ``violation``; for
  utility theorems ``holds`` / ``violated`` / ``inconclusive``; for suite entries also ``error`` and ``not-run``.
  It is a ``str`` enum, so it compares equal to (and serialises as) those strings.
* :class:`PrivacyClaim` -- the claim under test, validated when it is built: ``(ε, δ)``; the other
  privacy definitions (zCDP, GDP, Rényi DP) are claims of their own, :class:`dpverify.profiles.ProfileClaim`.
* :class:`Measured` -- the quantity a check established, named without ambiguity: ``epsilon_lower_bound`` (a
  statistical audit), ``exact_epsilon`` (an exact check), ``pvalue`` (an exponential-mechanism fit),
  ``max_change`` (sensitivity), ``max_ratio`` (replay), ``total_epsilon`` (ledger), ``estimate`` (a theorem).

Every result class (``AuditResult``, ``SequentialResult``, ``AnytimeResult``, ``ExactAuditResult``, ``EMCheckResult``,
``SensitivityResult``, ``ReplayResult``, ``LedgerResult``, ``TheoremResult``, ``SweepResult``) derives from
:class:`CheckResult` and so has ``.verdict``, ``.claim`` and ``.measured`` besides its own fields, ``summary()`` and
``to_dict()``.

>>> PrivacyClaim(0.5)
PrivacyClaim(epsilon=0.5, delta=0.0)
>>> Verdict("pass") == "pass", Verdict.VIOLATION.meaning
(True, 'the claim is refuted: evidence at the stated confidence')
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

from dpverify.errors import InputError

if TYPE_CHECKING:
    from dpverify.profiles import ProfileClaim

__all__ = ["Verdict", "PrivacyClaim", "Measured", "CheckResult", "ViolationVerdict"]


class Verdict(str, Enum):
    """The verdicts of every kind of check, in one vocabulary."""

    PASS = "pass"
    VIOLATION = "violation"
    HOLDS = "holds"
    VIOLATED = "violated"
    INCONCLUSIVE = "inconclusive"
    ERROR = "error"
    NOT_RUN = "not-run"

    def __str__(self) -> str:
        return self.value

    @property
    def meaning(self) -> str:
        """What the verdict says, in the project's wording."""
        return _MEANING[self]


_MEANING = {
    Verdict.PASS: "no violation detected at this budget (not a proof of privacy)",
    Verdict.VIOLATION: "the claim is refuted: evidence at the stated confidence",
    Verdict.HOLDS: "the theorem's bound holds: the confidence interval is on its side",
    Verdict.VIOLATED: "the theorem's bound is violated: the confidence interval is on the wrong side",
    Verdict.INCONCLUSIVE: "the confidence interval contains the bound: more runs needed",
    Verdict.ERROR: "the check could not run (the message says why)",
    Verdict.NOT_RUN: "the run was interrupted before this check",
}


@dataclass(frozen=True)
class PrivacyClaim:
    """``(epsilon, delta)``-differential privacy, validated: ``0 <= epsilon < inf`` and ``0 <= delta < 1``."""

    epsilon: float
    delta: float = 0.0

    def __post_init__(self) -> None:
        for name, v in (("epsilon", self.epsilon), ("delta", self.delta)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or math.isnan(v):
                raise InputError(f"claim {name} must be a number, got {v!r}")
        if not 0 <= self.epsilon < math.inf:
            raise InputError(f"claim epsilon must be finite and >= 0, got {self.epsilon!r}")
        if not 0 <= self.delta < 1:
            raise InputError(f"claim delta must lie in [0, 1), got {self.delta!r}")
        object.__setattr__(self, "epsilon", float(self.epsilon))
        object.__setattr__(self, "delta", float(self.delta))

    def __str__(self) -> str:
        return f"ε={self.epsilon:g}" + (f" δ={self.delta:g}" if self.delta > 0 else "")

    def to_dict(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "delta": self.delta}


@dataclass(frozen=True)
class Measured:
    """The quantity a check established: its unambiguous ``name`` and ``value``."""

    name: str
    value: float

    def to_dict(self) -> dict[str, Any]:
        from dpverify.jsonsafe import json_float

        return {"name": self.name, "value": json_float(self.value)}


class CheckResult:
    """Base of every result class: ``verdict``, ``claim`` and ``measured`` under the same names everywhere.

    Subclasses define :meth:`_measured` and, when they test a privacy claim, :meth:`_claim`; the ``verdict`` is a
    :class:`Verdict`, from :class:`ViolationVerdict` for checks that find violations or a field of the result
    (theorems)."""

    def _measured(self) -> Measured:
        raise NotImplementedError

    def _claim(self) -> PrivacyClaim | ProfileClaim | None:
        return None

    @property
    def claim(self) -> PrivacyClaim | ProfileClaim | None:
        """The privacy claim tested: an ``(ε, δ)`` claim, a zCDP / GDP / Rényi-DP claim
        (:class:`dpverify.profiles.ProfileClaim`), or ``None`` for checks of another kind of claim (a sensitivity, a
        theorem)."""
        return self._claim()

    @property
    def measured(self) -> Measured:
        """The quantity the check established (:class:`Measured`)."""
        return self._measured()


class ViolationVerdict(CheckResult):
    """Results of checks that look for a violation: ``verdict`` is ``violation`` or ``pass``."""

    @property
    def verdict(self) -> Verdict:
        """:attr:`Verdict.VIOLATION` when the check found one, else :attr:`Verdict.PASS`."""
        return Verdict.VIOLATION if getattr(self, "violation") else Verdict.PASS
