"""BROKEN: the classic Gaussian calibration used outside its range of validity (ε ≥ 1).

Bug pattern: ``σ = Δ·sqrt(2 ln(1.25/δ))/ε`` (Dwork & Roth 2014, Thm A.1, proved only for
ε ∈ (0, 1)) used with ε ≥ 1. Delta-Siege ``GaussMechanismClassic`` (Lokna, Paradis, Dimitrov,
Vechev, CCS 2023); DP-Auditorium's ``MeanMechanism`` (Kong et al., S&P 2024) uses the same factor.

True privacy profile: with this σ the exact δ at the claimed ε is (Balle & Wang 2018, Thm 8)
``true_delta(ε) = Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ)``.

Computed (not guessed) with :func:`algorithms.classic.gaussian.gaussian_delta`; the violation is
much milder than "ε ≥ 1 breaks it" suggests:

* the claim still **holds** for 1 ≤ ε up to a break-even ε*(δ): ε* ≈ 8.78 (δ = 1e-6),
  8.42 (δ = 1e-5), 7.46 (δ = 1e-3), 6.77 (δ = 1e-2), 5.74 (δ = 0.1), 4.47 (δ = 0.5);
* on ε ∈ [2, 10] the largest factor ``true_delta(ε)/δ`` over δ ∈ (0, 1) is **4.28** (ε = 10,
  δ ≈ 0.0386); a factor ≥ 10 with true δ ≥ 1e-3 first appears at ε ≈ 12.6 (δ ≈ 0.0036);
* **catalogue parameters for a sampling audit: ε = 10, δ = 0.1, Δ = 1** → σ = 0.224754,
  true δ(10) = 0.405602 (4.06 × the claim). On the pair x = 0 vs x' = 1, the event
  ``{y > 1.037}`` has P(x') ≈ 0.435 and P(x) ≈ 1.98e-6, so ``P(x') − e^{10}P(x) ≈ 0.39``; with
  10^6 samples per side the Clopper–Pearson (97.5 % each side) lower bound on δ(10) is ≈ 0.31 > 0.1.
  (ε = 10, δ = 0.05: σ = 0.253727, true δ = 0.213366, 4.27 ×.)
* large-factor parameters: ε = 15, δ = 1e-3 → σ = 0.251765, true δ(15) = 0.0231367 (23.1 ×);
  ε = 20, δ = 1e-5 → true δ = 1.527e-3 (153 ×). These need ``e^ε/δ_true`` ≈ 1.4e8 samples or more
  (an upper bound on ``P(x)`` below ``δ_true/e^ε``), so they are for exact checks, not for 10^6
  samples.

Replay: **calibration bug** -- the ``"gaussian"`` step declares the right ℓ2 sensitivity Δ; σ is merely
too small for the claimed (ε, δ), which a frozen-noise replay will NOT flag (``BUG_KIND = "calibration"``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ..classic._validation import (
    as_float_input,
    check_delta,
    check_epsilon,
    check_n,
    check_positive,
)
from ..classic.gaussian import classic_gaussian_sigma, gaussian_delta, gaussian_log_density
from ..noise import NoiseSource

__all__ = ["GaussianClassicLargeEpsilon"]


@dataclass(frozen=True)
class GaussianClassicLargeEpsilon:
    """Claims (ε, δ) with ε ≥ 1, adds ``N(0, σ²)``, ``σ = Δ sqrt(2 ln(1.25/δ))/ε``. Output float64.

    Noise steps (:meth:`release`): one ``"gaussian"`` step protecting ``x`` with ℓ2 sensitivity Δ
    (``scale=σ``).
    """

    epsilon: float
    delta: float
    sensitivity: float = 1.0
    sigma: float = field(init=False)
    BUG_KIND: ClassVar[str] = "calibration"

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        if self.epsilon < 1.0:
            raise ValueError(
                "epsilon must be >= 1 for this broken twin (below 1 the classic calibration is "
                f"correct: use Gaussian(calibration='classic')), got {self.epsilon!r}"
            )
        check_delta(self.delta)
        check_positive("sensitivity", self.sensitivity)
        sigma = classic_gaussian_sigma(self.epsilon, self.delta, self.sensitivity)
        object.__setattr__(self, "sigma", sigma)

    def __call__(self, x: float | np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.release(x, n, NoiseSource(rng))

    def release(self, x: float | np.ndarray, n: int, noise: NoiseSource) -> np.ndarray:
        """The sampler against an explicit noise source: one ``"gaussian"`` step, ℓ2 sensitivity Δ."""
        values = as_float_input(x)
        n = check_n(n)
        sigma = self.sigma
        return noise.add("gaussian", values, lambda rng: rng.normal(0.0, sigma, size=(n,) + values.shape),
                         sensitivity=self.sensitivity, norm="l2", scale=sigma, kind="gaussian")

    def log_density(self, x: float | np.ndarray, out: np.ndarray) -> np.ndarray:
        """Exact log density of each output row under ``x`` (Lebesgue measure), the law the code draws:
        ``Σ_j −ln(2πσ²)/2 − (o_j − x_j)²/(2σ²)`` with ``σ = Δ sqrt(2 ln(1.25/δ))/ε``; returns ``(m,)``."""
        return gaussian_log_density(out, as_float_input(x), self.sigma)

    def true_delta(self, epsilon: float) -> float:
        """Exact hockey-stick δ(ε) between outputs on inputs at ℓ2 distance Δ."""
        return gaussian_delta(self.sigma, epsilon, self.sensitivity)

    def violates_claim(self) -> bool:
        """Whether ``true_delta(epsilon) > delta`` (false for ε below the break-even ε*(δ))."""
        return self.true_delta(self.epsilon) > self.delta
