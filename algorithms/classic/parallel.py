"""Mechanisms run side by side on the same input, and DP-Sniper's ``LaplaceParallel``.

Source: Dwork & Roth, *The Algorithmic Foundations of Differential Privacy* (2014), Theorem 3.14 (basic
sequential composition: releasing the outputs of an ``ε_1``-DP and an ``ε_2``-DP mechanism on the same data is
``(ε_1 + ε_2)``-DP).  DP-Sniper (Bichsel, Steffen, Bogunovic, Vechev, IEEE S&P 2021, §6) benchmarks composition
with ``ParallelMechanism``: ``LaplaceParallel`` (20 Laplace mechanisms with ε = 0.005 each on one scalar) and
``SVT34Parallel`` (:mod:`algorithms.broken.svt34_parallel`).

:class:`LaplaceParallel`: ``copies`` independent ``x + Lap(Δ/ε_each)`` on a scalar ``x`` of sensitivity Δ.  The
claim is the composed budget ``ε = copies·ε_each`` (0.1 at DP-Sniper's 20 × 0.005).  True ε = **ε exactly**: the
joint density ratio ``exp(ε_each·Σ_j (|y_j − x'| − |y_j − x|)/Δ)`` reaches ``e^{copies·ε_each}`` when every
``y_j`` lies beyond both inputs (an event of positive probability), and never exceeds it.  It is a hard
instance for a black-box audit because the loss is spread over 20 coordinates: DP-Sniper's 90 % lower
bound is 0.0350 (logistic regression) / 0.0299 (MLP), StatDP's 0.0126--0.0135, against the true 0.1.
:meth:`LaplaceParallel.log_density` is the exact log density (Lebesgue measure on R^copies).

:func:`run_in_parallel` runs several mechanisms on the same input and concatenates their outputs column-wise,
each drawing through its own prefixed noise steps (``"m0/threshold"``, ``"m1/query[3]"``, ...), so a frozen-noise
replay (``dpverify.code_checks.replay``) matches the steps of each part.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ._validation import as_float_input, check_epsilon, check_n, check_positive, check_positive_int
from ..noise import NoiseSource, laplace_noise

__all__ = ["LaplaceParallel", "PrefixedNoise", "run_in_parallel"]


class PrefixedNoise:
    """A noise source that forwards every step to ``inner`` with its name prefixed by ``prefix + "/"``."""

    def __init__(self, inner: Any, prefix: str) -> None:
        self.inner = inner
        self.prefix = prefix

    def add(self, step: str, value: Any, draw: Any, **kwargs: Any) -> Any:
        return self.inner.add(f"{self.prefix}/{step}", value, draw, **kwargs)

    def select(self, step: str, utilities: Any, draw: Any, **kwargs: Any) -> Any:
        return self.inner.select(f"{self.prefix}/{step}", utilities, draw, **kwargs)


def _as_columns(out: np.ndarray, n: int) -> np.ndarray:
    arr = np.asarray(out)
    return arr.reshape(n, -1) if arr.ndim != 2 else arr


def run_in_parallel(mechanisms: Sequence[Any], x: Any, n: int, noise: Any) -> np.ndarray:
    """Outputs of every mechanism on ``x`` side by side (``(n, Σ columns)``, float64 when the parts mix dtypes).

    Each mechanism must have ``release(x, n, noise)``; mechanism ``i`` draws through ``PrefixedNoise(noise, f"m{i}")``.
    """
    n = check_n(n)
    parts = [_as_columns(m.release(x, n, PrefixedNoise(noise, f"m{i}")), n) for i, m in enumerate(mechanisms)]
    return np.concatenate(parts, axis=1, dtype=np.result_type(*parts))


@dataclass(frozen=True)
class LaplaceParallel:
    """``copies`` independent ``x + Lap(Δ/ε_each)`` on a scalar ``x``; claims ``ε = copies·ε_each``.

    Output: float64 ``(n, copies)``.  DP-Sniper's ``LaplaceParallel``: ``epsilon_each = 0.005``, ``copies = 20``.

    Noise steps (:meth:`release`): one ``"laplace-parallel"`` step protecting the scalar broadcast to the
    ``copies`` columns with ℓ1 sensitivity ``copies·Δ`` (every column moves by Δ) and ``scale = Δ/ε_each``.
    """

    epsilon_each: float = 0.005
    copies: int = 20
    sensitivity: float = 1.0
    delta: ClassVar[float] = 0.0

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon_each, "epsilon_each")
        check_positive_int("copies", self.copies)
        check_positive("sensitivity", self.sensitivity)

    @property
    def epsilon(self) -> float:
        """The composed claim ``copies·ε_each``."""
        return int(self.copies) * float(self.epsilon_each)

    @property
    def scale(self) -> float:
        """Laplace scale ``Δ/ε_each`` of every copy."""
        return float(self.sensitivity) / float(self.epsilon_each)

    def __call__(self, x: float, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.release(x, n, NoiseSource(rng))

    def release(self, x: float, n: int, noise: Any) -> np.ndarray:
        """One Laplace step on the scalar repeated ``copies`` times (ℓ1 sensitivity ``copies·Δ``)."""
        value = _scalar(x)
        n = check_n(n)
        k, scale = int(self.copies), self.scale
        return noise.add("laplace-parallel", np.full(k, value), lambda rng: laplace_noise(rng, scale, (n, k)),
                         sensitivity=k * float(self.sensitivity), norm="l1", scale=scale, kind="laplace")

    def log_density(self, x: float, out: np.ndarray) -> np.ndarray:
        """Exact log density of each row of ``out`` (``(m, copies)``) under ``x``: ``Σ_j ln Lap(y_j − x; Δ/ε_each)``."""
        value = _scalar(x)
        rows = np.asarray(out, dtype=np.float64).reshape(-1, int(self.copies))
        b = self.scale
        return (-math.log(2.0 * b) - np.abs(rows - value) / b).sum(axis=1)

    def pair_epsilon(self, x0: float, x1: float) -> float:
        """Exact ε of the pair: ``copies·ε_each·|x0 − x1|/Δ``."""
        return self.epsilon * abs(_scalar(x0) - _scalar(x1)) / float(self.sensitivity)

    def true_epsilon(self) -> float:
        """ε = ``copies·ε_each`` for inputs at distance Δ (attained)."""
        return self.epsilon


def _scalar(x: Any) -> float:
    arr = as_float_input(x)
    if arr.size != 1:
        raise ValueError(f"x must be a scalar query answer, got shape {arr.shape}")
    v = float(arr.reshape(()))
    if not math.isfinite(v):
        raise ValueError(f"x must be finite, got {x!r}")
    return v
