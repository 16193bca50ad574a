"""BROKEN: textbook inverse-CDF Laplace sampling in double precision.

Bug pattern: Mironov, "On Significance of the Least Significant Bits for Differential Privacy"
(CCS 2012), §3–§4: ``u ~ Uniform(−0.5, 0.5)``, ``y = x − b·sign(u)·ln(1 − 2|u|)`` with ``b = Δ/ε``
evaluated in floating point. Because ``u`` lives on the grid ``−0.5 + k·2⁻⁵³`` and every operation
rounds, the set of doubles that can be output depends on ``x``: many outputs reachable from ``x``
are unreachable from ``x + Δ`` and vice versa. DP-Sniper (Bichsel et al., S&P 2021) naive FP
Laplace, Delta-Siege ``laplace_inversion`` (Lokna, Paradis, Dimitrov, Vechev, CCS 2023).

True ε = **∞**: an output with positive probability on ``x`` and probability 0 on a neighbour is
an infinite privacy loss (Mironov 2012). Concretely, numpy draws ``u = −0.5 + k·2⁻⁵³`` (``k`` a
53-bit integer), so ``1 − 2|u| = j·2⁻⁵²`` exactly and the support is the image of ``j ↦ y`` —
:meth:`FloatingPointLaplace.is_reachable` decides membership exactly by a binary search over ``j``
(the map is monotone). At ε = 0.1, Δ = 1, ``x = 0`` vs ``x' = 1`` about 81 % of the outputs of ``x``
(measured on 20 000 draws, seed 0) are unreachable from ``x'`` (and symmetrically): an event of
probability ≈ 0.81 on ``x`` and exactly 0 on ``x'``, so even δ ≈ 0.8 fails at every ε. The
catalogue's empirical lower bound is 0.2521 (DP-Sniper, MLP on bit features), far below the true ∞.
Fix: the snapping mechanism (Mironov 2012, §5).

Replay: **other** -- the ``"laplace"`` step protects ``x`` with the right ℓ1 sensitivity Δ and scale Δ/ε;
the leak is in the floating-point support of the noise, which a frozen-noise replay will NOT flag
(``BUG_KIND = "other"``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..classic._validation import as_float_input, check_finite, check_n
from ..classic.laplace import Laplace
from ..noise import NoiseSource

__all__ = ["FloatingPointLaplace"]

_TWO_52 = 2**52
_ULP_53 = 2.0**-53


def _naive_laplace(x: np.ndarray | float, u: np.ndarray, scale: float) -> np.ndarray:
    """The naive textbook formula, exactly as a library would evaluate it."""
    with np.errstate(divide="ignore"):
        return x - scale * np.sign(u) * np.log(1.0 - 2.0 * np.abs(u))


@dataclass(frozen=True)
class FloatingPointLaplace(Laplace):
    """Claims ε; ``x − (Δ/ε)·sign(u)·log(1 − 2|u|)``, ``u ~ U(−0.5, 0.5)`` in doubles. Output float64.

    Noise steps (:meth:`release`): one ``"laplace"`` step protecting ``x`` with ℓ1 sensitivity Δ, the noise
    ``−(Δ/ε)·sign(u)·log(1 − 2|u|)`` (``x + noise`` is bit for bit the naive ``x − …``).
    """

    BUG_KIND: ClassVar[str] = "other"

    def __call__(self, x: float | np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.release(x, n, NoiseSource(rng))

    def release(self, x: float | np.ndarray, n: int, noise: NoiseSource) -> np.ndarray:
        """The sampler against an explicit noise source: one ``"laplace"`` step (naive float noise)."""
        values = as_float_input(x)
        n = check_n(n)
        scale = self.scale

        def draw(rng: np.random.Generator) -> np.ndarray:
            u = rng.uniform(-0.5, 0.5, size=(n,) + values.shape)
            with np.errstate(divide="ignore", invalid="ignore"):
                # −(b·sign(u)·log(1 − 2|u|)): negation is exact, so x + this == x − b·sign(u)·log(…)
                return -(scale * np.sign(u) * np.log(1.0 - 2.0 * np.abs(u)))

        return noise.add("laplace", values, draw, sensitivity=self.sensitivity, norm="l1", scale=scale,
                         kind="laplace")

    def output_for_draw(self, x: float, k: np.ndarray) -> np.ndarray:
        """Output on input ``x`` when the uniform draw is ``u = −0.5 + k·2⁻⁵³`` (``0 ≤ k < 2⁵³``).

        ``numpy.random.Generator.uniform(-0.5, 0.5)`` computes exactly ``-0.5 + 1.0·(k·2⁻⁵³)``.
        """
        k_arr = np.asarray(k, dtype=np.float64)
        u = -0.5 + 1.0 * (k_arr * _ULP_53)
        return _naive_laplace(check_finite("x", x), u, self.scale)

    def is_reachable(self, y: np.ndarray, x: float) -> np.ndarray:
        """Exact support membership: can the mechanism output the double ``y`` on input ``x``?

        For ``y < x`` the draw has ``u < 0`` and ``1 − 2|u| = k·2⁻⁵²`` with ``k ∈ [0, 2⁵²)``; for
        ``y > x``, ``u > 0`` and ``1 − 2|u| = j·2⁻⁵²`` with ``k = 2⁵³ − j``. In both cases the
        output is monotone in ``j``, so a vectorised 53-step binary search finds the only
        candidates. ``y == x`` is reachable (``u = 0``). Assumes a monotone ``log`` (true of
        glibc/numpy; checked by the tests on sampled outputs).
        """
        x = check_finite("x", x)
        y_arr = np.asarray(y, dtype=np.float64)
        flat = y_arr.reshape(-1)
        below = flat < x
        # j indexes 1 − 2|u| = j·2⁻⁵²; the output is increasing in j below x, decreasing above x.
        # Below x: k = j ∈ [0, 2⁵² − 1] (j = 0 is u = −0.5, output −inf); above x: k = 2⁵³ − j with
        # j ∈ [1, 2⁵² − 1] (k < 2⁵³).
        lo = np.where(below, 0, 1).astype(np.int64)
        hi = np.full(flat.shape, _TWO_52 - 1, dtype=np.int64)

        def output_of(j: np.ndarray) -> np.ndarray:
            k = np.where(below, j, 2 * _TWO_52 - j)
            return self.output_for_draw(x, k)

        # smallest j with key(j) >= key(y), where key = output below x and −output above x
        sign = np.where(below, 1.0, -1.0)
        target = sign * flat
        while np.any(lo < hi):
            mid = (lo + hi) // 2
            go_right = sign * output_of(mid) < target
            lo = np.where(go_right & (lo < hi), mid + 1, lo)
            hi = np.where(~go_right & (lo < hi), mid, hi)
        found = output_of(lo) == flat
        found |= flat == x
        return found.reshape(y_arr.shape)

    def true_epsilon(self) -> float:
        """∞ (the support depends on ``x``)."""
        return math.inf
