"""PrefixSum: the prefix sums of independently noised query answers.

Source: Wang, Ding, Wang, Kifer, Zhang, "Proving Differential Privacy with Shadow Execution" (PLDI 2019),
benchmark ``PrefixSum`` (also in CheckDP, Wang, Ding, Kifer, Zhang, CCS 2020): ``next = next + q[i] + η_i`` with
``η_i ~ Lap(1/ε)``, output the running sums, under the precondition ``ONE_DIFFER`` (exactly one answer differs,
by at most 1).  DP-Sniper's ``PrefixSum`` (Bichsel et al., IEEE S&P 2021, §6; ε = 0.1, 10 answers) audits it on
StatDP's patterns with *component-wise* neighbours (every answer may move by 1).

Release ``(S_1, …, S_k)``, ``S_i = Σ_{j ≤ i} (x_j + η_j)``, ``η_j ~ Lap(1/ε)`` i.i.d.  The map from the noisy
answers to the prefix sums is linear and invertible with unit Jacobian (``η = diff(S) − x``), so the output law
has density ``Π_j Lap(ΔS_j − x_j; 1/ε)`` and the privacy loss of a pair is exactly that of the noisy answers:
``ε·‖x − x'‖₁`` (attained when every noisy answer lies beyond both inputs), :meth:`PrefixSum.pair_epsilon`.

True ε:

* **ε** under ShadowDP's ``ONE_DIFFER`` / ℓ1 neighbours of radius 1 (:meth:`PrefixSum.true_epsilon`); 0.1 at ε = 0.1;
* **k·ε** under ℓ∞ (component-wise) neighbours of radius 1, DP-Sniper's setting: **1.0** at ε = 0.1, k = 10
  (the ``all-up`` / ``all-down`` patterns).  So the ε = 0.1 claim is *violated* on DP-Sniper's own input pairs:
  DP-Sniper's 90 % lower bound 0.504 (logistic regression) / 0.5774 (MLP), StatDP's 0.35, all above 0.1.

Output: float64 ``(n, k)``.  :meth:`PrefixSum.log_density` is the exact log density (Lebesgue measure on R^k).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ._validation import as_finite_vector, check_epsilon, check_n
from ..noise import NoiseSource, laplace_noise

__all__ = ["PrefixSum"]


#: rows per block of the running sums (:meth:`PrefixSum.release`): a block of a few columns stays in cache
_BLOCK_ROWS = 16_384


@dataclass(frozen=True)
class PrefixSum:
    """``cumsum(x + Lap(1/ε))`` over a 1-D vector of answers of sensitivity 1. Output float64 ``(n, k)``.

    Noise steps (:meth:`release`): one ``"answers"`` step protecting the answer vector with ℓ1 sensitivity 1
    (ShadowDP's ``ONE_DIFFER``), ``scale = 1/ε``; the prefix sums are post-processing.
    """

    epsilon: float
    delta: ClassVar[float] = 0.0

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)

    @property
    def scale(self) -> float:
        """Laplace scale ``1/ε`` of every answer."""
        return 1.0 / float(self.epsilon)

    def __call__(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.release(x, n, NoiseSource(rng))

    def release(self, x: np.ndarray, n: int, noise: Any) -> np.ndarray:
        """One Laplace step on the answers (ℓ1 sensitivity 1), then the running sums."""
        answers = as_finite_vector(x, "query answers")
        n = check_n(n)
        scale = self.scale
        noisy = np.asarray(noise.add("answers", answers, lambda rng: laplace_noise(rng, scale, (n, answers.shape[0])),
                                     sensitivity=1.0, norm="l1", scale=scale, kind="laplace"), dtype=np.float64)
        # the running sums in place, column after column in blocks of rows that stay in cache: the additions of
        # np.cumsum(noisy, axis=1) in its order (the same values), about 4x faster than numpy's scan along a short
        # last axis.  ``noise.add`` returns ``value + draw``, an array of the caller's own
        if not (noisy.flags.writeable and noisy.flags.owndata):
            noisy = noisy.copy()
        for start in range(0, noisy.shape[0], _BLOCK_ROWS):
            block = noisy[start:start + _BLOCK_ROWS]
            for j in range(1, block.shape[1]):
                block[:, j] += block[:, j - 1]
        return noisy

    def log_density(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        """Exact log density of each row of ``out`` (``(m, k)``): ``Σ_j ln Lap(S_j − S_{j−1} − x_j; 1/ε)``."""
        answers = as_finite_vector(x, "query answers")
        rows = np.asarray(out, dtype=np.float64).reshape(-1, answers.shape[0])
        steps = np.diff(rows, axis=1, prepend=0.0)
        b = self.scale
        return (-math.log(2.0 * b) - np.abs(steps - answers) / b).sum(axis=1)

    def pair_epsilon(self, x0: np.ndarray, x1: np.ndarray) -> float:
        """Exact ε of the pair: ``ε·‖x0 − x1‖₁``."""
        a = as_finite_vector(x0, "query answers")
        b = as_finite_vector(x1, "query answers")
        if a.shape != b.shape:
            raise ValueError(f"the two inputs must have the same length, got {a.shape} and {b.shape}")
        return float(self.epsilon) * float(np.abs(a - b).sum())

    def true_epsilon(self) -> float:
        """ε under ℓ1 neighbours of radius 1 (ShadowDP's ``ONE_DIFFER``); ``k·ε`` under ℓ∞ (see the module)."""
        return float(self.epsilon)
