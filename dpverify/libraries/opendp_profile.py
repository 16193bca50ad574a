"""The privacy profile of an OpenDP measurement as a dpverify claim.

An OpenDP measurement whose output measure is ``SmoothedMaxDivergence`` (e.g. a zCDP Gaussian turned into
approximate DP with ``opendp.combinators.make_zCDP_to_approxDP``) states, through its privacy map, a whole profile
``δ(ε)`` at the input distance ``d_in`` (OpenDP documentation, "Measures": the map returns a ``PrivacyProfile``
with ``delta(epsilon)`` and ``epsilon(delta)``).  :class:`OpenDPProfileClaim` wraps it as a
:class:`dpverify.profiles.ProfileClaim`, so that :func:`dpverify.statistical.profile.audit_profile` can audit the
measurement at points of its own profile.  The profile object itself does not pickle; the claim keeps the target
and rebuilds the profile from the target's measurement (built once per process) when asked.

Imported by :meth:`dpverify.libraries.opendp_targets.OpenDPMeasurement.claim` only for such measurements.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

from dpverify.errors import InputError
from dpverify.profiles import ProfileClaim

__all__ = ["OpenDPProfileClaim"]


@dataclass(frozen=True, eq=False)
class OpenDPProfileClaim(ProfileClaim):
    """The ``(ε, δ(ε))`` profile an OpenDP measurement's privacy map gives at ``d_in`` (``target``: an
    :class:`dpverify.libraries.opendp_targets.OpenDPMeasurement`)."""

    target: Any
    d_in: Any
    form: ClassVar[str] = "opendp-profile"
    conversion: ClassVar[str] = ("none: the measurement's own privacy profile δ(ε), read from its OpenDP privacy map "
                                 "(SmoothedMaxDivergence) at d_in")

    def _profile(self) -> Any:
        return self.target.measurement().map(self.d_in)

    def delta(self, epsilon: float) -> float:
        if not (isinstance(epsilon, (int, float)) and math.isfinite(epsilon) and epsilon >= 0):
            raise InputError(f"epsilon must be a finite number >= 0, got {epsilon!r}")
        return float(self._profile().delta(float(epsilon)))

    def epsilon(self, delta: float) -> float:
        if not (isinstance(delta, (int, float)) and 0 < delta < 1):
            raise InputError(f"delta must lie in (0, 1), got {delta!r}")
        try:
            return float(self._profile().epsilon(float(delta)))
        except Exception as exc:   # OpenDP raises when no ε reaches δ
            raise InputError(f"the privacy profile of {self.target.factory} gives no ε at δ = {delta:g} ({exc}); "
                             "choose a larger δ") from None

    def to_dict(self) -> dict[str, Any]:
        return {"from_target": True, "form": self.form, "target": repr(self.target), "d_in": self.d_in}

    def __str__(self) -> str:
        return f"OpenDP privacy profile of {self.target.factory} at d_in={self.d_in}"
