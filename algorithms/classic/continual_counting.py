"""Counting under continual observation: the binary (tree) mechanism and factorised counters.

A stream ``x_1, …, x_T`` (one count per time step; neighbours differ by at most 1 in one step) is released as its
``T`` running counts ``c_t = Σ_{s ≤ t} x_s``, each as soon as its step is seen.  Both mechanisms here release

    o = L · (R · x + z),     z_v ~ Lap(b) i.i.d.,     b = Δ / ε,

with ``R`` the *strategy* (the sums that get noise), ``L`` the *reconstruction* (``L·R`` is the lower-triangular
all-ones matrix of the running counts) and ``Δ`` the largest ℓ1 norm of a column of ``R`` (one step changes the
strategy's answers by at most that much: Laplace mechanism, Dwork & Roth 2014, Theorem 3.6).  Both factors are
lower triangular, so output ``t`` uses the noise drawn up to step ``t``.

* :func:`binary_mechanism` -- Chan, Shi & Song, "Private and Continual Release of Statistics" (ACM TISSEC 2011),
  §3.4, the Binary Mechanism (also Dwork, Naor, Pitassi & Rothblum, STOC 2010): node ``t`` holds the sum of the
  steps ``(t − lowbit(t), t]`` (a dyadic interval ending at ``t``), and ``c_t`` is the sum of the nodes of the
  binary decomposition of ``t``.  A step is counted in at most ``⌊log₂ T⌋ + 1`` nodes: ``Δ = ⌊log₂ T⌋ + 1``.
* :func:`square_root_counter` -- the square-root factorisation ``L = R = A^{1/2}`` of the running-count matrix
  ``A`` (Fichtenberger, Henzinger & Upadhyay, "Constant Matters: Fine-grained Error Bound on Differentially
  Private Continual Observation", ICML 2023, §3; Henzinger, Upadhyay & Upadhyay, SODA 2023): lower-triangular
  Toeplitz with entries ``r_k = binom(2k, k) / 4^k``; ``Δ = Σ_{k<T} r_k`` (its first column's ℓ1 norm).

:class:`BinaryMechanism` is the Binary Mechanism as a catalogue mechanism (a frozen dataclass of ``length`` and
``epsilon``, its noise drawn through a declared step: ``release(x, n, noise)``); :class:`FactorisedCounter` takes
any factors.  ``calibrated_for`` sets the ``Δ`` that the noise is computed from; left at ``None`` it is the
strategy's own, and the mechanism is ε-DP.  A smaller value is the usual bug of such code (a level of the tree left
out: :mod:`algorithms.broken.binary_mechanism_missing_level`; the strategy's sensitivity taken as 1): its true ε on
a pair is :meth:`FactorisedCounter.epsilon_on`.

The law is exact: ``L`` is invertible (unit or positive diagonal), so ``o`` has the density
``Π_v Lap((L⁻¹ o − R x)_v; b) / |det L|`` on ``R^T`` (:meth:`FactorisedCounter.log_density`), and the privacy loss of
a pair is ``Σ_v (|w_v − (R x')_v| − |w_v − (R x)_v|) / b`` for ``w = L⁻¹ o``: a sum over the nodes the changed
step is counted in, which no single running count shows (dpverify's innovations,
:mod:`dpverify.statistical.innovations`, unmix the counts)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import solve_triangular

from ._validation import as_finite_vector, check_epsilon, check_n, check_positive, check_positive_int
from ..noise import NoiseSource, laplace_noise

__all__ = ["FactorisedCounter", "BinaryMechanism", "binary_mechanism", "square_root_counter", "binary_factors",
           "square_root_factors"]


@dataclass(frozen=True, eq=False)
class FactorisedCounter:
    """``L · (R · x + Lap(Δ/ε))`` for a stream ``x`` of length ``T`` (``R``, ``L``: ``(T, T)`` lower triangular,
    ``L`` with a positive diagonal).  Output float64 ``(n, T)``: the noisy running counts."""

    left: NDArray = field(repr=False)
    right: NDArray = field(repr=False)
    epsilon: float
    calibrated_for: float | None = None
    name: str = "factorised counter"
    delta: float = 0.0

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        left, right = np.asarray(self.left, dtype=np.float64), np.asarray(self.right, dtype=np.float64)
        if left.ndim != 2 or left.shape[0] != left.shape[1] or right.shape != left.shape:
            raise ValueError(f"left and right must be square matrices of one shape, got {left.shape} and "
                             f"{right.shape}")
        if not (np.allclose(left, np.tril(left)) and np.allclose(right, np.tril(right))):
            raise ValueError("left and right must be lower triangular (a counter releases step t from the noise "
                             "drawn up to t)")
        if not (np.diag(left) > 0).all():
            raise ValueError("left must have a positive diagonal (an invertible reconstruction)")
        if self.calibrated_for is not None:
            check_positive("calibrated_for", self.calibrated_for)
        object.__setattr__(self, "left", left)
        object.__setattr__(self, "right", right)

    @property
    def length(self) -> int:
        """``T``, the stream's length."""
        return int(self.left.shape[0])

    @property
    def sensitivity(self) -> float:
        """``Δ`` of the strategy: the largest ℓ1 norm of a column of ``R``."""
        return float(np.abs(self.right).sum(axis=0).max())

    @property
    def scale(self) -> float:
        """The Laplace scale ``b``: ``calibrated_for`` (or :attr:`sensitivity`) over ε."""
        return float(self.sensitivity if self.calibrated_for is None else self.calibrated_for) / float(self.epsilon)

    def _stream(self, x: object) -> NDArray[np.float64]:
        v = as_finite_vector(x, "stream")
        if v.shape != (self.length,):
            raise ValueError(f"the stream must have length {self.length} (the counter's T), got {v.shape[0]}")
        return v

    def __call__(self, x: object, n: int, rng: np.random.Generator) -> NDArray[np.float64]:
        answers = self.right @ self._stream(x)
        n = check_n(n)
        noisy = answers + rng.laplace(0.0, self.scale, size=(n, self.length))
        return noisy @ self.left.T

    def log_density(self, x: object, out: NDArray) -> NDArray[np.float64]:
        """Exact log density of each row of ``out`` (``(m, T)``) on ``R^T``:
        ``Σ_v ln Lap((L⁻¹ o − R x)_v; b) − ln det L``."""
        answers = self.right @ self._stream(x)
        rows = np.asarray(out, dtype=np.float64).reshape(-1, self.length)
        nodes = solve_triangular(self.left, rows.T, lower=True).T
        b = self.scale
        return ((-math.log(2.0 * b) - np.abs(nodes - answers) / b).sum(axis=1)
                - float(np.log(np.diag(self.left)).sum()))

    def epsilon_on(self, x0: object, x1: object) -> float:
        """True ε of the pair: ``‖R (x0 − x1)‖₁ / b``."""
        return float(np.abs(self.right @ (self._stream(x0) - self._stream(x1))).sum()) / self.scale

    def true_epsilon(self) -> float:
        """ε under neighbours that differ by at most 1 in one step: ``Δ / b`` (the claim when calibrated right)."""
        return self.sensitivity / self.scale


def binary_factors(length: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(L, R)`` of the Binary Mechanism over ``length`` steps: ``R[t, s] = 1`` for step ``s`` in node ``t``'s
    interval ``(t − lowbit(t), t]`` (1-based), ``L[t, u] = 1`` for node ``u`` in the binary decomposition of ``t``."""
    T = check_positive_int("length", length)
    right = np.zeros((T, T))
    left = np.zeros((T, T))
    for t in range(1, T + 1):
        right[t - 1, t - (t & -t):t] = 1.0
        u = t
        while u > 0:                                   # t's decomposition: t, t − lowbit(t), … down to 0
            left[t - 1, u - 1] = 1.0
            u -= u & -u
    return left, right


def square_root_factors(length: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(L, R)`` with ``L = R = A^{1/2}``: lower-triangular Toeplitz, ``r_k = binom(2k, k) / 4^k``."""
    T = check_positive_int("length", length)
    r = np.ones(T)
    for k in range(1, T):
        r[k] = r[k - 1] * (2 * k - 1) / (2 * k)          # binom(2k, k)/4^k by its ratio to the one before
    root = np.zeros((T, T))
    for k in range(T):
        root += np.diag(np.full(T - k, r[k]), -k)
    return root, root.copy()


def binary_mechanism(length: int, epsilon: float, calibrated_for: float | None = None) -> FactorisedCounter:
    """Chan, Shi & Song's Binary Mechanism over ``length`` steps (:func:`binary_factors`), ``Δ = ⌊log₂ T⌋ + 1``."""
    left, right = binary_factors(length)
    return FactorisedCounter(left, right, epsilon, calibrated_for, "binary mechanism")


def square_root_counter(length: int, epsilon: float, calibrated_for: float | None = None) -> FactorisedCounter:
    """The square-root factorisation counter over ``length`` steps (:func:`square_root_factors`)."""
    left, right = square_root_factors(length)
    return FactorisedCounter(left, right, epsilon, calibrated_for, "square-root counter")


@dataclass(frozen=True)
class BinaryMechanism:
    """Chan, Shi & Song's Binary Mechanism (§3.4) over a stream of ``length`` steps: the noisy running counts
    ``L·(R·x + Lap(levels/ε))`` (:func:`binary_factors`), ``levels = ⌊log₂ T⌋ + 1`` (the most nodes a step is counted
    in).  ε-DP under neighbours that differ by at most 1 in one step (ℓ1 distance 1); true ε = ε.  Output float64
    ``(n, length)``.

    Noise steps (:meth:`release`): one ``"nodes"`` step protecting the node sums ``R·x`` with ℓ1 sensitivity
    ``levels``, ``scale = noise_levels/ε``; the running counts are post-processing.
    """

    length: int
    epsilon: float
    delta: ClassVar[float] = 0.0

    def __post_init__(self) -> None:
        check_positive_int("length", self.length)
        check_epsilon(self.epsilon)

    @property
    def levels(self) -> int:
        """``⌊log₂ T⌋ + 1``: the most nodes of the tree one step is counted in (the node sums' ℓ1 sensitivity)."""
        return int(self.length).bit_length()

    @property
    def noise_levels(self) -> float:
        """The levels the noise is computed for: :attr:`levels`."""
        return float(self.levels)

    @property
    def scale(self) -> float:
        """The Laplace scale of every node: ``noise_levels / ε``."""
        return self.noise_levels / float(self.epsilon)

    def counter(self) -> FactorisedCounter:
        """The same law as a :class:`FactorisedCounter` (exact density, true ε of a pair)."""
        left, right = binary_factors(self.length)
        return FactorisedCounter(left, right, self.epsilon, self.noise_levels, "binary mechanism")

    def __call__(self, x: object, n: int, rng: np.random.Generator) -> NDArray[np.float64]:
        return self.release(x, n, NoiseSource(rng))

    def release(self, x: object, n: int, noise: Any) -> NDArray[np.float64]:
        """One Laplace step on the node sums (ℓ1 sensitivity :attr:`levels`), then the running counts."""
        counter = self.counter()                       # the factors, built once per call
        stream = counter._stream(x)
        n = check_n(n)
        scale = self.scale
        noisy = noise.add("nodes", counter.right @ stream, lambda rng: laplace_noise(rng, scale, (n, self.length)),
                          sensitivity=float(self.levels), norm="l1", scale=scale, kind="laplace")
        return np.asarray(noisy, dtype=np.float64) @ counter.left.T

    def log_density(self, x: object, out: NDArray) -> NDArray[np.float64]:
        """Exact log density of each row of ``out`` (:meth:`FactorisedCounter.log_density`)."""
        return self.counter().log_density(x, out)

    def epsilon_on(self, x0: object, x1: object) -> float:
        """True ε of the pair: ``‖R (x0 − x1)‖₁ / scale``."""
        return self.counter().epsilon_on(x0, x1)

    def true_epsilon(self) -> float:
        """``levels / scale``: ε when the noise is computed for every level."""
        return self.levels / self.scale
