"""BROKEN: report-noisy-max that releases the maximal noisy *value* instead of its index.

Bug pattern: StatDP benchmarks ``noisy_max_v1b`` (Laplace noise 2/ε) and ``noisy_max_v2b``
(Exponential noise 2/ε) — Ding, Wang, Wang, Zhang, Kifer, "Detecting Violations of Differential
Privacy" (CCS 2018), §6; DP-Sniper ``ReportNoisyMax3`` / ``ReportNoisyMax4`` (Bichsel et al.,
S&P 2021). Input ``x``: ``m`` query answers, each of
sensitivity 1, ℓ∞ neighbours.

True ε (derived here):

* ``noise="laplace"``: **exactly m·ε/2** (0.25 at m = 5, ε = 0.1; DP-Sniper's lower bound 0.248).
  Upper bound: the max is post-processing of all m noisy answers, each a Laplace(2/ε) mechanism
  costing ε/2 per unit of change. Attained: for ``y < min(x ∪ x')`` every noisy answer is in its
  lower Laplace tail, ``F(t) = ½e^{t/b}``, ``f(t) = e^{t/b}/(2b)`` with ``b = 2/ε``, so the density
  of the max is ``m/(2b) · 2^{1-m} · exp((m·y − Σ_j x_j)/b)``; for ``x' = x + 1`` (all answers up
  by one) the density ratio on that whole half-line is ``e^{m/b} = e^{mε/2}``.
* ``noise="exponential"``: **∞**. The noise is non-negative, so the output is ``≥ max_i x_i``; if
  ``max x' = max x + 1`` the event ``{output < max x'}`` has positive probability on ``x`` and
  probability 0 on ``x'``.

The true ε therefore depends on ``m`` (the length of ``x``): :meth:`true_epsilon` takes it.
Correct twin: :class:`algorithms.classic.noisy_max.ReportNoisyMax`.

Replay: **other** -- the ``"noisy-answers"`` step protects the answer vector with the ℓ∞ sensitivity 1
report-noisy-max is calibrated for (correct); the leak is that the maximal noisy *value* is released, which
report-noisy-max's analysis does not cover, and a frozen-noise replay will NOT flag it
(``BUG_KIND = "other"``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..classic._validation import check_n, check_positive_int
from ..classic.noisy_max import ReportNoisyMax, answer_noise, as_query_answers
from ..noise import NoiseSource

__all__ = ["NoisyMaxReturnsValue"]


@dataclass(frozen=True)
class NoisyMaxReturnsValue(ReportNoisyMax):
    """Claims ε, releases ``max_i (x_i + noise_i)`` with noise of scale 2/ε. Output: float64 ``(n,)``.

    Noise steps (:meth:`release`): one ``"noisy-answers"`` step adding the noise to the answer vector
    (ℓ∞ sensitivity 1, ``scale = 2/ε``, ``kind`` ``"laplace"`` or ``"other"`` for exponential noise).
    """

    BUG_KIND: ClassVar[str] = "other"

    def __call__(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.release(x, n, NoiseSource(rng))

    def release(self, x: np.ndarray, n: int, noise: NoiseSource) -> np.ndarray:
        """The sampler against an explicit noise source: one ``"noisy-answers"`` step, then the maximum."""
        answers = as_query_answers(x)
        n = check_n(n)
        law, scale = self.noise, self.scale
        noisy = noise.add("noisy-answers", answers, lambda rng: answer_noise(law, scale, (n, answers.shape[0]), rng),
                          sensitivity=1.0, norm="linf", scale=scale,
                          kind="laplace" if law == "laplace" else "other")
        # BUG: the value.  A running maximum over the few columns (stored one after the other, answer_noise): the
        # same values as np.max(noisy, axis=1) (NaN propagates in both)
        top = noisy[:, 0].copy()
        for j in range(1, noisy.shape[1]):
            np.maximum(top, noisy[:, j], out=top)
        return top

    def pmf(self, x: np.ndarray) -> np.ndarray:
        """No pmf: the released maximum is continuous (the inherited index law would be wrong)."""
        raise NotImplementedError("NoisyMaxReturnsValue releases a continuous value; it has no exact pmf")

    def true_epsilon(self, num_queries: int | None = None) -> float:
        """∞ for exponential noise; ``num_queries·ε/2`` (exact) for Laplace noise on m queries."""
        if self.noise == "exponential":
            return math.inf
        if num_queries is None:
            raise ValueError(
                "num_queries must be given for noise='laplace': the true epsilon is "
                "num_queries * epsilon / 2 (it grows with the number of queries)"
            )
        return check_positive_int("num_queries", num_queries) * float(self.epsilon) / 2.0
