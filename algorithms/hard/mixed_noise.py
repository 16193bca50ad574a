"""Laplace noise added in one basis and released in another: every output coordinate mixes every noise coordinate.

:class:`MixedLaplace` releases ``o = M·(x + z)``, ``z`` i.i.d. ``Lap(scale)``, for an invertible ``d × d`` matrix
``M``: the shape of the wavelet and Fourier releases and of the matrix mechanism, whose noise is drawn on transformed
answers and mapped back.  True ε on a pair: ``‖x − x'‖₁ / scale`` (the Laplace mechanism on ``x``, Dwork & Roth 2014,
Theorem 3.6, then the post-processing ``M``, Proposition 2.1), attained by the joint event in the noise's coordinates
``M⁻¹·o``, which no output coordinate shows.

:class:`HaarHistogram` is such a release for a histogram ``h`` of ``m = 2^l`` bins: Laplace noise on its coefficients
in the orthonormal Haar basis ``H`` (rows: the constant vector and the differences of adjacent blocks at each scale,
each of unit norm), the histogram rebuilt from them, ``o = Hᵀ·(H·h + z)``.  One record more moves one bin by one and
the coefficient vector by the column ``H·e_j``, of ℓ1 norm ``‖H·e_j‖₁`` (the same for every ``j``: ``2^{-l/2} +
Σ_{s=1..l} 2^{-s/2}``, 2.061 at ``m = 16``); ``scale = calibrated_for / ε`` with ``calibrated_for`` that norm is the
correct calibration, and ``calibrated_for = 1`` -- the histogram's sensitivity, used for the coefficients -- the
misuse: true ε = ``‖H·(h − h')‖₁ / scale``."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

__all__ = ["MixedLaplace", "HaarHistogram", "haar_matrix"]


def haar_matrix(m: int) -> np.ndarray:
    """The orthonormal Haar analysis matrix of ``m = 2^l`` bins (``m × m``; row 0 the constant ``1/√m``, then for each
    scale from the coarsest the normalised differences of the two halves of every block)."""
    if m < 1 or m & (m - 1):
        raise ValueError(f"the number of bins must be a power of 2, got {m}")
    rows = [np.full(m, 1.0 / math.sqrt(m))]
    block = m
    while block > 1:
        half = block // 2
        for start in range(0, m, block):
            r = np.zeros(m)
            r[start:start + half] = 1.0
            r[start + half:start + block] = -1.0
            rows.append(r / math.sqrt(block))
        block = half
    return np.array(rows)


@dataclass(frozen=True, eq=False)
class MixedLaplace:
    """``M·(x + z)``, ``z`` i.i.d. ``Lap(scale)`` in each of the ``d`` coordinates of the input ``x`` (a 1-D
    array), ``M`` = ``matrix`` (``d × d``, invertible)."""

    matrix: np.ndarray
    scale: float
    _inverse: np.ndarray = field(init=False, repr=False)
    _log_det: float = field(init=False, repr=False)

    def __post_init__(self) -> None:
        m = np.asarray(self.matrix, dtype=np.float64)
        if m.ndim != 2 or m.shape[0] != m.shape[1]:
            raise ValueError(f"matrix must be square, got shape {m.shape}")
        if not self.scale > 0:
            raise ValueError(f"scale must be positive, got {self.scale!r}")
        sign, log_det = np.linalg.slogdet(m)
        if sign == 0 or not np.isfinite(log_det):
            raise ValueError("matrix must be invertible")
        object.__setattr__(self, "matrix", m)
        object.__setattr__(self, "_inverse", np.linalg.inv(m))
        object.__setattr__(self, "_log_det", float(log_det))

    def _input(self, x: object) -> np.ndarray:
        v = np.asarray(x, dtype=np.float64)
        if v.shape != (self.matrix.shape[1],):
            raise ValueError(f"an input is a vector of {self.matrix.shape[1]} numbers, got shape {v.shape}")
        return v

    def __call__(self, x: object, n: int, rng: np.random.Generator) -> np.ndarray:
        v = self._input(x)
        return (v + rng.laplace(0.0, self.scale, size=(n, len(v)))) @ self.matrix.T

    def log_density(self, x: object, out: np.ndarray) -> np.ndarray:
        """``Σ_j (−ln(2·scale) − |(M⁻¹o)_j − x_j| / scale) − ln|det M|`` (Lebesgue measure on the outputs)."""
        z = np.asarray(out, dtype=np.float64) @ self._inverse.T - self._input(x)
        return (-math.log(2.0 * self.scale) - np.abs(z) / self.scale).sum(axis=1) - self._log_det

    def epsilon_on(self, x0: object, x1: object) -> float:
        """True ε on the pair: ``‖x0 − x1‖₁ / scale``."""
        return float(np.abs(self._input(x0) - self._input(x1)).sum()) / self.scale


@dataclass(frozen=True, eq=False)
class HaarHistogram:
    """``Hᵀ·(H·h + z)`` for a histogram ``h`` of ``bins`` counts (a power of 2), ``z`` i.i.d. ``Lap(calibrated_for /
    epsilon)``; ``calibrated_for=None`` is the correct ``‖H·e_j‖₁`` (:attr:`sensitivity`)."""

    epsilon: float
    bins: int = 16
    calibrated_for: float | None = None
    _haar: np.ndarray = field(init=False, repr=False)
    _release: MixedLaplace = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not self.epsilon > 0:
            raise ValueError(f"epsilon must be positive, got {self.epsilon!r}")
        h = haar_matrix(int(self.bins))
        object.__setattr__(self, "_haar", h)
        object.__setattr__(self, "_release", MixedLaplace(h.T, self.scale))

    @property
    def sensitivity(self) -> float:
        """``‖H·e_j‖₁``, the ℓ1 sensitivity of the Haar coefficients to one record more or less."""
        return float(np.abs(self._haar).sum(axis=0).max())

    @property
    def scale(self) -> float:
        return (self.sensitivity if self.calibrated_for is None else float(self.calibrated_for)) / self.epsilon

    def _coefficients(self, x: object) -> np.ndarray:
        v = np.asarray(x, dtype=np.float64)
        if v.shape != (self.bins,) or not np.isfinite(v).all():
            raise ValueError(f"a histogram is a vector of {self.bins} finite counts, got shape {v.shape}")
        return self._haar @ v

    def __call__(self, x: object, n: int, rng: np.random.Generator) -> np.ndarray:
        return self._release(self._coefficients(x), n, rng)

    def log_density(self, x: object, out: np.ndarray) -> np.ndarray:
        """Laplace in the Haar coefficients (``H`` is orthonormal: no Jacobian)."""
        return self._release.log_density(self._coefficients(x), out)

    def epsilon_on(self, x0: object, x1: object) -> float:
        """True ε on the pair: ``‖H·(h0 − h1)‖₁ / scale``."""
        return self._release.epsilon_on(self._coefficients(x0), self._coefficients(x1))
