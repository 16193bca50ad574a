"""Randomized response on a one-hot vector, with the budget spent per bit (RAPPOR-style).

A value in ``d`` categories is one-hot encoded and every bit flipped independently, kept with probability
``e^{ε_b}/(1 + e^{ε_b})``.  Changing the value changes two bits, so the true ε is ``2·ε_b`` (Erlingsson, Pihur &
Korolova, CCS 2014, §3: RAPPOR's permanent response costs ``2h·ln((1−f/2)/(f/2))`` for h hashes).  The bug:
``ε_b = ε`` per bit while claiming ε; the correct twin spends ``ε/2`` per bit.

Input: the category (an integer in ``0..d-1``).  Output: int8 bits ``(n, d)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class OneHotRR:
    """Bits of ``onehot(x)`` kept with probability ``e^{ε_b}/(1+e^{ε_b})``, ``ε_b = ε·per_bit_share``."""

    epsilon: float
    d: int = 8
    per_bit_share: float = 1.0           # 1.0: the bug (ε per bit); 0.5: correct

    @property
    def keep(self) -> float:
        e = self.epsilon * self.per_bit_share
        return math.exp(e) / (1.0 + math.exp(e))

    def __call__(self, x: object, n: int, rng: np.random.Generator) -> np.ndarray:
        bits = np.zeros(self.d, dtype=np.int8)
        bits[int(np.asarray(x).ravel()[0])] = 1
        flip = rng.random((n, self.d)) >= self.keep
        return (bits ^ flip).astype(np.int8)

    def log_density(self, x: object, out: np.ndarray) -> np.ndarray:
        bits = np.zeros(self.d, dtype=np.int8)
        bits[int(np.asarray(x).ravel()[0])] = 1
        same = (np.asarray(out) == bits).sum(axis=1)
        return same * math.log(self.keep) + (self.d - same) * math.log1p(-self.keep)

    def true_epsilon(self) -> float:
        return 2.0 * self.epsilon * self.per_bit_share
