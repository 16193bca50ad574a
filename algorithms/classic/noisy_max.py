"""Report noisy max (argmax of noisy query answers).

Sources: Dwork & Roth (2014), §3.3, Claim 3.9 (Laplace noise) and Ding, Kifer, Wang, Wang,
Zhang, "Detecting Violations of Differential Privacy" (CCS 2018, StatDP), benchmark
``noisy_max_v1a`` (Laplace noise of scale 2/ε) and ``noisy_max_v2a`` (Exponential noise of scale
2/ε); DP-Sniper's ``ReportNoisyMax1`` / ``ReportNoisyMax2``. Catalogue rows #1–#2 of
anchors-auditing.md §4.1.

Input ``x`` is the vector of ``m`` query answers, each of sensitivity 1; neighbours are vectors at
ℓ∞ distance ≤ 1 (every answer may move by 1, in either direction). Noise of scale 2/ε on each
answer, output the index of the largest noisy answer.

True ε = ε (the scale 2/ε covers ℓ∞ neighbours that move answers in opposite directions; for
m = 2 the ratio reaches ``e^ε``: with exponential noise the difference of the two noises is
Laplace(2/ε), so ``P(index 0)`` is a Laplace tail and a gap shift of 2 costs exactly ε; with Laplace
noise the bound is approached as the gap grows). 0.1 at ε = 0.1. Releasing the maximal *value*
instead is the broken twin :class:`algorithms.broken.noisy_max_returns_value.NoisyMaxReturnsValue`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy import integrate, stats

from algorithms.classic._validation import as_finite_vector, check_choice, check_epsilon, check_n

__all__ = ["ReportNoisyMax", "noisy_answers", "report_noisy_max_pmf", "as_query_answers", "NOISES"]

NOISES: tuple[str, ...] = ("laplace", "exponential")


def as_query_answers(x: object) -> np.ndarray:
    """A non-empty 1-D vector of finite query answers."""
    return as_finite_vector(x, "query answers")


def noisy_answers(
    answers: np.ndarray, noise: str, scale: float, n: int, rng: np.random.Generator
) -> np.ndarray:
    """``(n, m)`` noisy answers: ``answers + Lap(scale)`` or ``answers + Exp(scale)`` entrywise."""
    shape = (n, answers.shape[0])
    if noise == "laplace":
        return answers + rng.laplace(0.0, scale, size=shape)
    return answers + rng.exponential(scale, size=shape)


def _noise_law(noise: str, scale: float) -> stats.rv_continuous:
    if noise == "laplace":
        return stats.laplace(loc=0.0, scale=scale)
    return stats.expon(loc=0.0, scale=scale)


def report_noisy_max_pmf(x: np.ndarray, epsilon: float, noise: str = "laplace") -> np.ndarray:
    """Selection pmf by numerical integration: ``P(i) = ∫ f(t − x_i) Π_{j≠i} F(t − x_j) dt``.

    Integrated with :func:`scipy.integrate.quad` over ``[min x − 40b, max x + 40b]`` (tails below
    ``e^{-40}``), break points at the answers; absolute accuracy ~1e-10.
    """
    check_epsilon(epsilon)
    check_choice("noise", noise, NOISES)
    answers = as_query_answers(x)
    scale = 2.0 / float(epsilon)
    law = _noise_law(noise, scale)
    lo, hi = float(answers.min()) - 40 * scale, float(answers.max()) + 40 * scale
    pmf = np.empty(answers.shape[0])
    for i in range(answers.shape[0]):
        others = np.delete(answers, i)

        def integrand(t: float, i: int = i, others: np.ndarray = others) -> float:
            return float(law.pdf(t - answers[i]) * np.prod(law.cdf(t - others)))

        pmf[i] = integrate.quad(
            integrand, lo, hi, points=sorted(set(answers.tolist())), limit=500, epsabs=1e-12
        )[0]
    return pmf


@dataclass(frozen=True)
class ReportNoisyMax:
    """Index of the largest of ``x_i + noise_i`` with Laplace(2/ε) or Exponential(2/ε) noise.

    Output: int64 of shape ``(n,)``.
    """

    epsilon: float
    noise: str = "laplace"
    delta: ClassVar[float] = 0.0

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_choice("noise", self.noise, NOISES)

    @property
    def scale(self) -> float:
        """Noise scale ``2/ε``."""
        return 2.0 / float(self.epsilon)

    def __call__(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        answers = as_query_answers(x)
        n = check_n(n)
        noisy = noisy_answers(answers, self.noise, self.scale, n, rng)
        return np.argmax(noisy, axis=1).astype(np.int64)

    def pmf(self, x: np.ndarray) -> np.ndarray:
        """Selection pmf on answers ``x`` (numerical integration, see :func:`report_noisy_max_pmf`)."""
        return report_noisy_max_pmf(x, self.epsilon, self.noise)

    def true_epsilon(self) -> float:
        """ε for ℓ∞ neighbours (sharp: attained or approached, see module docstring)."""
        return float(self.epsilon)
