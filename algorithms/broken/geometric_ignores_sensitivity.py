"""BROKEN: geometric mechanism whose ratio ignores the declared sensitivity.

Bug pattern: noise calibrated for sensitivity 1 on a query of sensitivity Δ — ``α = exp(−ε)``
instead of ``exp(−ε/Δ)`` (the integer analogue of the Google ``…WithInsufficientNoise`` tests and of
dp-recorder's sensitivity miscalibration, Cebere et al., arXiv 2602.17454).

True ε = **Δ·ε** exactly (pmf ratio ``α^{−Δ} = e^{Δε}`` for outputs beyond both values):
**0.2 at ε = 0.1, Δ = 2**. Correct twin: :class:`algorithms.classic.geometric.Geometric`.

Replay: **sensitivity bug** -- the ``"geometric"`` step declares sensitivity 1, the one ``α = exp(−ε)`` is
calibrated for, while the value moves by Δ between neighbours; a frozen-noise replay flags it
(``BUG_KIND = "sensitivity"``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..classic._validation import as_int_input, check_epsilon, check_n, check_positive_int
from ..classic.geometric import sample_two_sided_geometric, two_sided_geometric_log_density
from ..noise import NoiseSource

__all__ = ["GeometricIgnoresSensitivity"]


@dataclass(frozen=True)
class GeometricIgnoresSensitivity:
    """Claims ε for sensitivity Δ, uses ``α = exp(−ε)``. Output int64 ``(n,)`` or ``(n, k)``.

    Noise steps (:meth:`release`): one ``"geometric"`` step protecting ``x`` with declared ℓ1 sensitivity
    :attr:`noise_sensitivity` = 1 (what the code's ``α`` assumes; the parameter ``sensitivity`` says Δ).
    """

    epsilon: float
    sensitivity: int = 2
    delta: ClassVar[float] = 0.0
    BUG_KIND: ClassVar[str] = "sensitivity"
    #: The sensitivity the noise is actually calibrated for (the bug: 1, not ``sensitivity``).
    noise_sensitivity: ClassVar[int] = 1

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        if check_positive_int("sensitivity", self.sensitivity) < 2:
            raise ValueError(
                "sensitivity must be an integer >= 2 (at sensitivity 1 this is the correct "
                f"Geometric mechanism), got {self.sensitivity!r}"
            )

    @property
    def alpha(self) -> float:
        """The (wrong) geometric ratio ``exp(−ε)``."""
        return math.exp(-float(self.epsilon))

    def __call__(self, x: int | np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.release(x, n, NoiseSource(rng))

    def release(self, x: int | np.ndarray, n: int, noise: NoiseSource) -> np.ndarray:
        """The sampler against an explicit noise source: one ``"geometric"`` step declaring sensitivity 1."""
        values = as_int_input(x)
        n = check_n(n)
        alpha = self.alpha
        return noise.add("geometric", values,
                         lambda rng: sample_two_sided_geometric(alpha, (n,) + values.shape, rng),
                         sensitivity=self.noise_sensitivity, norm="l1", scale=alpha, kind="geometric")

    def log_density(self, x: int | np.ndarray, out: np.ndarray) -> np.ndarray:
        """Exact log pmf of each output row under ``x`` (counting measure on the integers), the law the code draws:
        ``Σ_j ln((1 − α)/(1 + α)) + |o_j − x_j|·ln α`` with the wrong ``α = exp(−ε)``; returns ``(m,)``."""
        return two_sided_geometric_log_density(out, as_int_input(x), self.alpha)

    def true_epsilon(self) -> float:
        """Exact ε = Δ·ε."""
        return int(self.sensitivity) * float(self.epsilon)
