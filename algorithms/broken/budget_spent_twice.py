"""BROKEN: the same query answered twice, each time with the full budget.

Bug pattern: budget double spending — two releases of one statistic, each calibrated for ε, while
the accountant records ε in total. dp-recorder ``test_double_spending`` (Cebere et al., arXiv
2602.17454).

Release ``(x + Lap(Δ/ε), x + Lap(Δ/ε))`` (independent). By composition the loss is at most 2ε, and
the joint density ratio ``exp(ε(|y₁−x'| − |y₁−x| + |y₂−x'| − |y₂−x|)/Δ)`` reaches ``e^{2ε}`` when
both outputs lie beyond both inputs: true ε = **2ε** exactly (0.2 at ε = 0.1).

Replay: **calibration (composition) bug** -- each of the two ``"laplace[0]"``/``"laplace[1]"`` steps
protects ``x`` with the ℓ1 sensitivity Δ its scale is calibrated for, which is right; the double spending is
in the accounting, so a frozen-noise replay will NOT flag it (``BUG_KIND = "calibration"``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..classic._validation import as_float_input, check_n
from ..classic.laplace import Laplace
from ..noise import NoiseSource

__all__ = ["BudgetSpentTwice"]


@dataclass(frozen=True)
class BudgetSpentTwice(Laplace):
    """Claims ε in total; releases two independent ``x + Lap(Δ/ε)``. Output float64 ``(n, 2)``.

    Noise steps (:meth:`release`): ``"laplace[0]"`` and ``"laplace[1]"``, each protecting ``x`` with ℓ1
    sensitivity Δ (``scale = Δ/ε``).
    """

    BUG_KIND: ClassVar[str] = "calibration"

    def __call__(self, x: float, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.release(x, n, NoiseSource(rng))

    def release(self, x: float, n: int, noise: NoiseSource) -> np.ndarray:
        """Two Laplace steps on the same ``x``.  To keep :meth:`__call__`'s stream (one ``(n, 2)`` draw)
        the first step draws both columns and returns column 0; the second returns column 1 of that draw
        (a source that calls the draws in order -- plain, recording -- sees exactly the old numbers)."""
        value = as_float_input(x)
        if value.ndim != 0:
            raise ValueError(f"x must be a scalar query answer, got shape {value.shape}")
        n = check_n(n)
        scale = self.scale
        both: list[np.ndarray] = []

        def first(rng: np.random.Generator) -> np.ndarray:
            both.append(rng.laplace(0.0, scale, size=(n, 2)))
            return both[0][:, 0]

        def second(rng: np.random.Generator) -> np.ndarray:
            return both[0][:, 1] if both else rng.laplace(0.0, scale, size=n)

        kw = dict(sensitivity=self.sensitivity, norm="l1", scale=scale, kind="laplace")
        y0 = noise.add("laplace[0]", float(value), first, **kw)
        y1 = noise.add("laplace[1]", float(value), second, **kw)
        return np.column_stack([y0, y1])

    def true_epsilon(self) -> float:
        """Exact ε = 2ε."""
        return 2.0 * float(self.epsilon)
