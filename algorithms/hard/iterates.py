"""Noisy gradient descent that releases every iterate: outputs that are a noisy non-linear function of the step before.

:class:`NoisyGradientDescent` runs ``T`` steps of gradient descent on the squared loss ``½(θ − x_i)²`` of a dataset of
``n`` scalar records (private mean estimation, the simplest empirical risk), each record's gradient clipped to
``[−C, C]`` as in DP-SGD (Abadi et al., "Deep learning with differential privacy", CCS 2016, Algorithm 1: per-example
clipping, noise on the summed gradient; here the full batch and Laplace noise, where the noisy SGD of Bassily, Smith
& Thakurta, FOCS 2014, Algorithm 1, samples a record and adds Gaussian noise), and publishes the whole trajectory:

    ``θ_t = θ_{t−1} − η·(ḡ_x(θ_{t−1}) + z_t)``,   ``ḡ_x(θ) = (1/n)·Σ_i clip(θ − x_i, −C, C)``,   ``z_t ~ Lap(b)``,

``θ_0 = 0``, output ``(θ_1, …, θ_T)``.  Replacing one record moves ``ḡ`` by at most ``2C/n`` at every ``θ``, so each
step is ``(2C/(n·b))``-DP given the iterates before it and the trajectory ``T·2C/(n·b)``-DP (adaptive composition,
Dwork & Roth 2014, Theorem 3.16).  ``calibrated_steps`` is the number of steps the noise scale
``b = 2C·calibrated_steps/(n·ε)`` is calibrated for: ``T`` is the correct calibration, ``1`` the misuse of a
per-step budget for the whole trajectory (composition forgotten: true ε up to ``T·ε``).

The true ε of a pair (:meth:`NoisyGradientDescent.epsilon_on`): the loss is ``Σ_t (|e_t − η·Δ(θ_{t−1})| −
|e_t|)/(η·b)`` with ``Δ(θ) = ḡ_x(θ) − ḡ_{x'}(θ)`` and ``e_t`` the step's noise; the first step starts at ``θ_0 = 0``
and every later one wherever the trajectory is (every trajectory has positive density), so the loss is at most
``(|Δ(0)| + (T − 1)·max_θ |Δ(θ)|) / b``, ``Δ`` piecewise linear with its breakpoints at ``x_i ± C``.  A dynamic
program over a grid of trajectories (feasible ones: a lower bound) reaches that bound on every pair the tests draw
(``tests/test_iterates.py``).  Every term of the loss depends on two consecutive iterates through the clipped
update: a non-linear chain, which the audit's Markov scores (``dpverify.statistical.markov``) unmix and a linear
unmixing does not."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..noise import laplace_noise

__all__ = ["NoisyGradientDescent"]


@dataclass(frozen=True, eq=False)
class NoisyGradientDescent:
    """``steps`` iterates of noisy clipped gradient descent on a dataset of scalar records (module docstring):
    learning rate ``rate``, clipping bound ``clip``, noise ``Lap(b)`` on the mean gradient with ``b = 2·clip·
    calibrated_steps / (n·epsilon)`` (``calibrated_steps=None``: ``steps``, the correct calibration)."""

    epsilon: float
    steps: int = 8
    rate: float = 0.5
    clip: float = 1.0
    calibrated_steps: int | None = None

    def __post_init__(self) -> None:
        if not self.epsilon > 0:
            raise ValueError(f"epsilon must be positive, got {self.epsilon!r}")
        if int(self.steps) < 1 or not self.rate > 0 or not self.clip > 0:
            raise ValueError(f"steps must be at least 1 and rate, clip positive, got {self.steps!r}, {self.rate!r}, "
                             f"{self.clip!r}")
        if self.calibrated_steps is not None and int(self.calibrated_steps) < 1:
            raise ValueError(f"calibrated_steps must be at least 1, got {self.calibrated_steps!r}")

    def _data(self, x: object) -> np.ndarray:
        v = np.asarray(x, dtype=np.float64).reshape(-1)
        if v.size == 0 or not np.all(np.isfinite(v)):
            raise ValueError(f"a dataset is a non-empty 1-D array of finite numbers, got {x!r}")
        return v

    def scale(self, n: int) -> float:
        """The noise scale ``b`` on the mean gradient of ``n`` records."""
        return 2.0 * self.clip * (self.steps if self.calibrated_steps is None else self.calibrated_steps) / (
            n * self.epsilon)

    def _gradient(self, theta: np.ndarray, data: np.ndarray) -> np.ndarray:
        """``ḡ_x(θ)`` for every entry of ``theta``."""
        g = np.zeros_like(theta)
        for xi in data:
            g += np.clip(theta - xi, -self.clip, self.clip)
        return g / len(data)

    def __call__(self, x: object, n: int, rng: np.random.Generator) -> np.ndarray:
        data = self._data(x)
        b = self.scale(len(data))
        out = np.empty((n, int(self.steps)))
        theta = np.zeros(n)
        for t in range(int(self.steps)):
            theta = theta - self.rate * (self._gradient(theta, data) + laplace_noise(rng, b, n))
            out[:, t] = theta
        return out

    def log_density(self, x: object, out: np.ndarray) -> np.ndarray:
        """``Σ_t (−ln(2ηb) − |θ_t − θ_{t−1} + η·ḡ_x(θ_{t−1})| / (ηb))`` (Lebesgue measure on the trajectories)."""
        data = self._data(x)
        o = np.asarray(out, dtype=np.float64).reshape(len(out), int(self.steps))
        scale = self.rate * self.scale(len(data))
        prev = np.zeros(len(o))
        total = np.zeros(len(o))
        for t in range(int(self.steps)):
            e = o[:, t] - (prev - self.rate * self._gradient(prev, data))
            total -= math.log(2.0 * scale) + np.abs(e) / scale
            prev = o[:, t]
        return total

    def epsilon_on(self, x0: object, x1: object) -> float:
        """An upper bound on the true ε of the pair (same number of records): ``(|Δ(θ_0)| + (T − 1)·max_θ |Δ(θ)|) /
        b`` with ``Δ = ḡ_x0 − ḡ_x1`` -- the first step starts at ``θ_0 = 0``, every later one anywhere (module
        docstring); ``tests/test_iterates.py`` finds it equal to a dynamic program's supremum on random pairs."""
        a, c = self._data(x0), self._data(x1)
        if len(a) != len(c):
            raise ValueError(f"the two datasets must have the same number of records, got {len(a)} and {len(c)}")
        knots = np.concatenate([a - self.clip, a + self.clip, c - self.clip, c + self.clip, [0.0]])
        gaps = np.abs(self._gradient(knots, a) - self._gradient(knots, c))
        return (float(gaps[-1]) + (int(self.steps) - 1) * float(gaps.max())) / self.scale(len(a))
