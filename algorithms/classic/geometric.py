"""The (two-sided) geometric mechanism for integer-valued queries.

Source: Ghosh, Roughgarden, Sundararajan, "Universally Utility-Maximizing Privacy Mechanisms"
(STOC 2009 / SIAM J. Comput. 2012), Definition 2.1 (the α-geometric mechanism): release
``f(x) + Z`` with ``P(Z = k) = (1 - α)/(1 + α) · α^{|k|}``, ``k ∈ ℤ``. With ``α = exp(-ε/Δ)`` it is
ε-DP for an integer query of ℓ1 sensitivity Δ (the discrete analogue of Dwork–Roth Thm 3.6).

Sampling: the difference ``G₁ - G₂`` of two i.i.d. geometric variables with success probability
``p = 1 - α`` (``numpy.random.Generator.geometric``, support 1, 2, ...) has exactly the two-sided
geometric law above.

True ε = ε exactly (pmf ratio ``α^{|z - f(x)| - |z - f(x')|}`` reaches ``α^{-Δ} = e^ε`` for any ``z``
beyond both values when ``|f(x) - f(x')| = Δ``); 0.1 at ε = 0.1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ._validation import as_int_input, check_epsilon, check_n, check_positive_int
from ..noise import NoiseSource

__all__ = ["Geometric", "sample_two_sided_geometric", "two_sided_geometric_pmf", "two_sided_geometric_log_density"]


def sample_two_sided_geometric(
    alpha: float, size: int | tuple[int, ...], rng: np.random.Generator
) -> np.ndarray:
    """Draw int64 noise with ``P(k) = (1 - α)/(1 + α) · α^{|k|}`` as a difference of two geometrics."""
    if not 0.0 <= alpha < 1.0:
        raise ValueError(f"alpha must satisfy 0 <= alpha < 1, got {alpha!r}")
    p = 1.0 - alpha
    first = rng.geometric(p, size=size)
    second = rng.geometric(p, size=size)
    return (first - second).astype(np.int64)


def two_sided_geometric_pmf(k: int | np.ndarray, alpha: float) -> np.ndarray:
    """Exact pmf ``(1 - α)/(1 + α) · α^{|k|}`` of the two-sided geometric law at integers ``k``."""
    k_arr = np.abs(np.asarray(k, dtype=np.float64))
    return (1.0 - alpha) / (1.0 + alpha) * np.power(alpha, k_arr)


def two_sided_geometric_log_density(out: np.ndarray, centre: int | np.ndarray, alpha: float) -> np.ndarray:
    """Log pmf (counting measure on ℤ^k) of each row of ``out`` (first axis the rows) under ``centre + Z`` with
    i.i.d. two-sided geometric coordinates: ``Σ_j ln((1 − α)/(1 + α)) + |o_j − c_j|·ln α``; ``−inf`` for a row with
    a non-integer (or NaN) coordinate."""
    o = np.asarray(out, dtype=np.float64)
    k = o - np.asarray(centre, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        ld = math.log((1.0 - alpha) / (1.0 + alpha)) + np.abs(k) * math.log(alpha)
    ld = np.where(o == np.round(o), ld, -np.inf)       # NaN and fractional outputs are impossible
    return ld.reshape(ld.shape[0], -1).sum(axis=1)


@dataclass(frozen=True)
class Geometric:
    """``x + Z``, ``Z`` two-sided geometric with ``α = exp(-ε/Δ)``; integer ``x`` (scalar or 1-D).

    Output: int64 of shape ``(n,)`` or ``(n, k)``.

    Noise steps (:meth:`release`): one ``"geometric"`` step protecting ``x`` with ℓ1 sensitivity Δ
    (``kind="geometric"``, ``scale=α``).
    """

    epsilon: float
    sensitivity: int = 1
    delta: ClassVar[float] = 0.0

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_positive_int("sensitivity", self.sensitivity)

    @property
    def alpha(self) -> float:
        """The geometric ratio ``α = exp(-ε/Δ)``."""
        return math.exp(-float(self.epsilon) / int(self.sensitivity))

    def __call__(self, x: int | np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.release(x, n, NoiseSource(rng))

    def release(self, x: int | np.ndarray, n: int, noise: NoiseSource) -> np.ndarray:
        """The sampler written against an explicit noise source: one ``"geometric"`` step protecting the
        integer ``x`` with ℓ1 sensitivity Δ (the sensitivity ``α = exp(-ε/Δ)`` is calibrated for)."""
        values = as_int_input(x)
        n = check_n(n)
        alpha = self.alpha
        return noise.add("geometric", values,
                         lambda rng: sample_two_sided_geometric(alpha, (n,) + values.shape, rng),
                         sensitivity=int(self.sensitivity), norm="l1", scale=alpha, kind="geometric")

    def log_density(self, x: int | np.ndarray, out: np.ndarray) -> np.ndarray:
        """Exact log pmf of each output row under ``x`` (counting measure on the integers):
        ``ln P_x(o) = Σ_j ln((1 − α)/(1 + α)) + |o_j − x_j|·ln α`` with ``α = exp(−ε/Δ)``, ``−inf`` off the
        integers; ``out`` of shape ``(m,)`` or ``(m, k)``; returns ``(m,)``."""
        return two_sided_geometric_log_density(out, as_int_input(x), self.alpha)

    def true_epsilon(self) -> float:
        """Exact ε for integer queries differing by at most Δ: the claimed ε (tight)."""
        return float(self.epsilon)
