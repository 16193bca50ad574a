"""DPM's private averaging (DP-AVG): a Gaussian-noised clipped sum divided by the noisy count.

Source: seed 004, "DPM: Clustering Sensitive Data through Separation" (Liebenow, Schütt et al.,
CCS 2024), Sec. 3.4 ("DPM adds Gaussian noise scaled to the radius
of the data set and the privacy parameters ε_avg, δ_avg to the sum of all elements in a cluster.
Then, to obtain the cluster centres, the sums are divided by the noisy number of elements ñ"),
Algorithm 1 line 11, Theorem 1 (DP-AVG assumed ``(ε_avg, δ_avg)``-DP); docs/findings.md F13.

The paper gives no σ formula and never defines "radius" (Sec. 3.4).  Resolved as the
authors' code does (diffprivlib ``GaussianAnalytic(epsilon=ε_avg, delta=δ_avg, sensitivity=max_norm)``
applied to every coordinate of the sum with the same σ, which is the vector Gaussian mechanism):

* **Protected quantity**: the sum ``Σ_{x ∈ C} clip(x, a, b)`` (:func:`clipped_sum`, length ``d``), each
  coordinate clipped to the public range ``R = [a, b]``.
* **ℓ2 sensitivity** (:func:`sum_l2_sensitivity`): under add/remove one point (Def. 1) a point
  contributes a vector of ``[a, b]^d``, of norm at most ``max(|a|, |b|)·√d`` (the code's ``max_norm``;
  "radius" = the largest norm, not the diameter); under replace-one the sum moves by
  ``x − y`` with ``x, y ∈ [a, b]^d``: ``(b − a)·√d`` (the diameter; replace-one is Sec. 2.3's prose).
* **σ** (:func:`analytic_gaussian_sigma`): Balle & Wang, "Improving the Gaussian Mechanism for
  Differential Privacy: Analytical Calibration and Optimal Denoising" (ICML 2018), Theorem 8 and
  Algorithm 1 -- the analytic Gaussian mechanism (what diffprivlib's ``GaussianAnalytic`` computes),
  valid for every ``ε > 0``.
* **Clipping** (Sec. 2.1, "D has range R"): DPM has no explicit clipping step and assumes
  ``a ≤ x ≤ b``.  ``clip=True`` (default) clips, so the bound holds for every input;
  ``clip=False`` sums the raw points -- a point outside ``R`` then moves the sum by more than the
  declared sensitivity, i.e. "points outside R break the guarantee" (a broken twin for audits).
* **Centre = noisy sum / ñ** (Sec. 3.4): ``ñ`` is the leaf's noisy count *already released*
  by DPM (Alg. 1 lines 7/16-17), passed in as ``n_tilde``; the mechanism never reads ``|C|``.  The
  division is post-processing.  (The code divides by the same ``ñ`` it returns as the weight and
  returns the centre 0 for an empty leaf; here an empty leaf has sum 0, so its centre is pure noise
  over ``ñ``.)  ``ñ`` may be any finite non-zero number (a Laplace count can be negative); ``ñ = 0``
  raises.

Noise step (:mod:`algorithms.noise`; ``release(x, n, noise)``): one
``noise.add("gaussian-sum", clipped_sum, draw, sensitivity=sum_l2_sensitivity(...), norm="l2",
scale=σ, kind="gaussian")``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..classic.gaussian import analytic_gaussian_sigma, gaussian_delta
from ..classic._validation import (
    check_choice,
    check_delta,
    check_epsilon,
    check_n,
    check_positive_int,
)
from .score import check_bounds
from ..noise import NoiseSource

__all__ = [
    "RELATIONS",
    "clip_to_range",
    "clipped_sum",
    "sum_l2_sensitivity",
    "gaussian_privacy_profile",
    "analytic_gaussian_sigma",
    "DPAverage",
]

#: Neighbour relations the sensitivity can be derived for.
RELATIONS: tuple[str, ...] = ("add_remove", "replace")


# -- the protected quantity ---------------------------------------------------------------------
def _as_points(data: object, d: int) -> np.ndarray:
    """``(n,)`` (``d = 1``) or ``(n, d)`` finite float64 as ``(n, d)``; empty allowed."""
    x = np.asarray(data, dtype=np.float64)
    if x.size == 0:
        return np.empty((0, d), dtype=np.float64)
    if x.ndim == 1 and d == 1:
        x = x[:, None]
    if x.ndim != 2 or x.shape[1] != d:
        raise ValueError(
            f"data must have shape (n, {d})" + (" or (n,)" if d == 1 else "") + f" for d={d}, got shape {x.shape}"
        )
    if not np.all(np.isfinite(x)):
        raise ValueError("data must be finite (no NaN or infinite coordinates)")
    return x


def clip_to_range(data: object, bounds: tuple[float, float]) -> np.ndarray:
    """Every coordinate clipped to the public range ``[a, b]`` (same shape as ``data``)."""
    a, b = check_bounds(bounds)
    x = np.asarray(data, dtype=np.float64)
    if np.any(np.isnan(x)):
        raise ValueError("data must not contain NaN (clipping would propagate it)")
    return np.clip(x, a, b)


def clipped_sum(data: object, bounds: tuple[float, float], d: int, clip: bool = True) -> np.ndarray:
    """``Σ_x clip(x, a, b)`` over the points of ``data`` (``(n,)`` for ``d = 1`` or ``(n, d)``), shape
    ``(d,)``; zeros for an empty data set.  ``clip=False`` sums the raw points (module docstring)."""
    d = check_positive_int("d", d)
    a, b = check_bounds(bounds)
    if not isinstance(clip, bool):
        raise ValueError(f"clip must be a bool, got {clip!r}")
    x = _as_points(data, d)
    if clip:
        x = np.clip(x, a, b)
    return np.sum(x, axis=0)


def sum_l2_sensitivity(bounds: tuple[float, float], d: int, relation: str = "add_remove") -> float:
    """ℓ2 sensitivity of :func:`clipped_sum`: ``max(|a|, |b|)·√d`` (add/remove, the code's
    ``max_norm``) or ``(b − a)·√d`` (replace one point)."""
    a, b = check_bounds(bounds)
    d = check_positive_int("d", d)
    check_choice("relation", relation, RELATIONS)
    width = max(abs(a), abs(b)) if relation == "add_remove" else b - a
    return float(width) * math.sqrt(d)


# -- analytic Gaussian calibration (Balle & Wang 2018) ------------------------------------------
# One implementation, in :mod:`algorithms.classic.gaussian` (the log-space privacy profile and the σ solver);
# re-exported here under the names this module's callers use.
def gaussian_privacy_profile(epsilon: float, sigma: float, sensitivity: float) -> float:
    """Exact ``δ(ε)`` of ``N(0, σ²)`` noise on a query of ℓ2 sensitivity ``Δ`` (Balle & Wang 2018, Theorem 8):
    :func:`algorithms.classic.gaussian.gaussian_delta` with this module's argument order."""
    return gaussian_delta(sigma, epsilon, sensitivity)


# -- the mechanism ------------------------------------------------------------------------------
@dataclass(frozen=True)
class DPAverage:
    """DP-AVG (seed 004 Sec. 3.4, Alg. 1 line 11): ``(Σ clip(x, a, b) + N(0, σ² I_d)) / ñ``.

    ``epsilon``/``delta`` are ``ε_avg``/``δ_avg``; ``bounds`` the public range ``R = [a, b]`` of every
    dimension; ``relation`` the neighbour relation the ℓ2 sensitivity is derived for (``"add_remove"``,
    Def. 1, or ``"replace"``); ``clip=False`` is the broken twin that sums unclipped points.
    ``σ`` = :func:`analytic_gaussian_sigma` ``(ε, δ, sum_l2_sensitivity(bounds, d, relation))``.
    Sampler output: float64 ``(n, d)``.
    """

    epsilon: float
    delta: float
    bounds: tuple[float, float] = (0.0, 1.0)
    d: int = 1
    relation: str = "add_remove"
    clip: bool = True
    sigma: float = field(init=False)

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_delta(self.delta)
        object.__setattr__(self, "bounds", check_bounds(self.bounds))
        check_positive_int("d", self.d)
        check_choice("relation", self.relation, RELATIONS)
        if not isinstance(self.clip, bool):
            raise ValueError(f"clip must be a bool, got {self.clip!r}")
        object.__setattr__(self, "sigma",
                           analytic_gaussian_sigma(self.epsilon, self.delta, self.sensitivity))

    @property
    def sensitivity(self) -> float:
        """ℓ2 sensitivity of the clipped sum under ``relation`` (:func:`sum_l2_sensitivity`)."""
        return sum_l2_sensitivity(self.bounds, int(self.d), self.relation)

    def protected_sum(self, x: object) -> np.ndarray:
        """The exact quantity the noise protects: :func:`clipped_sum` of ``x`` (``clip`` as set)."""
        return clipped_sum(x, self.bounds, int(self.d), clip=self.clip)

    def __call__(self, x: object, n: int, rng: np.random.Generator, n_tilde: object = None) -> np.ndarray:
        return self.release(x, n, NoiseSource(rng), n_tilde=n_tilde)

    def release(self, x: object, n: int, noise: NoiseSource, n_tilde: object = None) -> np.ndarray:
        """``n`` noisy sums (``n_tilde=None``) or noisy centres ``noisy sum / ñ``.

        ``n_tilde`` is the cluster's noisy count *already released* by DPM (a scalar, or one value per
        run, shape ``(n,)``); finite and non-zero.  Output float64 ``(n, d)``.
        """
        n = check_n(n)
        d = int(self.d)
        value = self.protected_sum(x)
        divisor = None
        if n_tilde is not None:
            divisor = np.asarray(n_tilde, dtype=np.float64)
            if divisor.ndim > 1 or (divisor.ndim == 1 and divisor.shape[0] != n):
                raise ValueError(f"n_tilde must be a scalar or have shape ({n},), got shape {divisor.shape}")
            if not np.all(np.isfinite(divisor)) or np.any(divisor == 0.0):
                raise ValueError(f"n_tilde (the noisy count) must be finite and non-zero, got {n_tilde!r}")
        sigma = float(self.sigma)
        noisy = noise.add("gaussian-sum", value, lambda rng: rng.normal(0.0, sigma, size=(n, d)),
                          sensitivity=self.sensitivity, norm="l2", scale=sigma, kind="gaussian")
        noisy = np.asarray(noisy, dtype=np.float64)
        if divisor is None:
            return noisy
        return noisy / (divisor[:, None] if divisor.ndim == 1 else divisor)

    def true_delta(self, epsilon: float) -> float:
        """Exact ``δ(ε)`` for neighbours whose sums differ by the full sensitivity (any ``ε ≥ 0``)."""
        return gaussian_privacy_profile(epsilon, float(self.sigma), self.sensitivity)
