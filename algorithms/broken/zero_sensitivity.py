"""BROKEN: bounded sum whose sensitivity formula evaluates to 0, so no noise is added.

Bug pattern: a sensitivity computed by a formula that is 0 for legal parameters, giving Laplace scale 0 (or a
"nothing to protect" shortcut) and an exact release.  Cebere, Erb, Desfontaines, Bellet, Fitzsimons, "Privacy in
Theory, Bugs in Practice: Grey-Box Auditing of Differential Privacy Libraries" (PoPETs 2026, arXiv 2602.17454):
synthcity's PrivBayes, whose sensitivity ``n_features − K`` is 0 when the network degree ``K`` equals the number of
features, reduced in dp-recorder's ``test_noise_miscalibration``.

Here the formula is the *replace-one* sensitivity of a bounded sum, ``u − l``, used under *add/remove-one*
neighbours (where it must be ``max(|l|, |u|)``); it is 0 for degenerate bounds ``l = u`` -- e.g. a count written as
the sum of a constant column of ones clipped to ``[1, 1]`` (under replace-one the count *is* constant, so 0 is the
right answer there).  Release ``Σ clip(x_i, l, u) + Lap((u − l)/ε)``, and the exact sum when ``u − l = 0``.

True ε under add/remove (:meth:`BoundedSumZeroSensitivity.true_epsilon`):

* **∞** when ``l = u ≠ 0`` (the catalogue setting ``l = u = 1``: the exact count is released; ∞ at ε = 0.1);
* ``ε·max(|l|, |u|)/(u − l)`` when ``l < u`` (e.g. bounds [1, 2]: 2ε; at most ε when ``0 ∈ [l, u]``);
* 0 when ``l = u = 0`` (the sum is always 0).

Correct twin: :class:`algorithms.classic.clipped_sum.ClippedSum` (sensitivity ``max(|l|, |u|)``, bounds ``l < u``); a
count is its sum of ones with bounds ``[0, 1]``.

Replay: **calibration bug** -- in the degenerate setting no noise step is made at all (the shortcut releases the
exact sum), so a frozen-noise replay has nothing to compare and will NOT flag it (dp-recorder sees the declared
sensitivity 0 because its Laplace primitive is still called); with ``l < u`` and ``max(|l|, |u|) > u − l`` the
``"sum"`` step's declared ``u − l`` is exceeded and a replay would (``BUG_KIND = "calibration"``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..classic._validation import as_dataset, check_epsilon, check_finite, check_n
from ..classic.clipped_sum import clip_records, sum_sensitivity
from ..noise import NoiseSource

__all__ = ["BoundedSumZeroSensitivity"]


@dataclass(frozen=True)
class BoundedSumZeroSensitivity:
    """Claims ε; ``Σ clip(x, l, u) + Lap((u − l)/ε)``, exact when ``u = l``. Output float64 ``(n,)``.

    Noise steps (:meth:`release`): one ``"sum"`` Laplace step declaring the (wrong) sensitivity ``u − l`` when it is
    positive; none when it is 0.
    """

    epsilon: float
    lower: float
    upper: float
    delta: ClassVar[float] = 0.0
    BUG_KIND: ClassVar[str] = "calibration"

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        lo, hi = check_finite("lower", self.lower), check_finite("upper", self.upper)
        if lo > hi:  # the bug: degenerate bounds lower == upper are accepted
            raise ValueError(f"lower must be <= upper, got lower={self.lower!r}, upper={self.upper!r}")

    @property
    def sensitivity(self) -> float:
        """The bug: the replace-one formula ``u − l`` (0 for ``l = u``)."""
        return float(self.upper) - float(self.lower)

    def __call__(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.release(x, n, NoiseSource(rng))

    def release(self, x: np.ndarray, n: int, noise: Any) -> np.ndarray:
        """The clipped sum plus Laplace noise of scale ``(u − l)/ε``; the exact sum when that scale is 0."""
        records = as_dataset(x)
        n = check_n(n)
        total = float(np.sum(clip_records(records, float(self.lower), float(self.upper))))
        sens = self.sensitivity
        if sens == 0.0:
            return np.full(n, total)  # "zero sensitivity: nothing to protect"
        scale = sens / float(self.epsilon)
        return noise.add("sum", total, lambda g: g.laplace(0.0, scale, size=n), sensitivity=sens, norm="l1",
                         scale=scale, kind="laplace")

    def true_epsilon(self) -> float:
        """Exact ε under add/remove-one neighbours (see the module docstring)."""
        worst = sum_sensitivity(self.lower, self.upper)
        if worst == 0.0:
            return 0.0
        if self.sensitivity == 0.0:
            return math.inf
        return float(self.epsilon) * worst / self.sensitivity
