"""BROKEN: Lyu et al.'s Algorithms 3 and 4 run side by side on the same queries (DP-Sniper's ``SVT34Parallel``).

Source: Bichsel, Steffen, Bogunovic, Vechev, "DP-Sniper: Black-Box Discovery of Differential Privacy Violations
using Classifiers" (IEEE S&P 2021), §6 benchmark ``SVT34Parallel``: ``SparseVectorTechnique3`` and
``SparseVectorTechnique4`` (Lyu, Su, Li, PVLDB 2017, Figure 1, Algorithms 3 and 4) each with ε = 0.1, c = 2,
T = 1, on the same 10 query answers, outputs concatenated.  Anchors-auditing.md §4.1 (rows #9, #10 and the
composition benchmarks).  Δ = 1, ℓ∞ neighbours.

The claim audited here is the budget the two parts promise together by basic composition, **2 × 0.1 = 0.2**
(each part claims 0.1).  Both parts are broken:

* Algorithm 3 (:class:`algorithms.broken.svt_outputs_value.SVTOutputsValue`, Roth's lecture notes) releases the
  noisy answer of each ⊤: not ε'-DP for any finite ε' over all query lists (Lyu et al. §4), i.e. true ε = ∞;
* Algorithm 4 (:class:`algorithms.broken.svt_unscaled_query_noise.SVTUnscaledQueryNoise`, Lee & Clifton 2014)
  does not scale its query noise with c: ``(1 + 6c)ε/4`` = 0.325 at c = 2 (Lyu et al.'s bound).

True ε = **∞** (supremum over query lists, from the Algorithm 3 part; for the fixed 10 queries the loss is finite
but exceeds the 0.2 claim).  DP-Sniper's 90 % lower bound: 0.261 (logistic regression) / 0.2616 (MLP), StatDP's
0.137--0.196.  Correct twins: Lyu et al.'s Algorithm 1 (:class:`algorithms.classic.sparse_vector.SparseVector`) for
each part, or :class:`algorithms.classic.numerical_svt.NumericalSVT` where the value of a ⊤ must be released.

Output: float64 ``(n, 3k)``: the Algorithm 3 part (codes 1.0 / 0.0 / −1.0 in columns ``0..k-1``, released values in
``k..2k-1``, 0.0 where not ⊤), then the Algorithm 4 codes (columns ``2k..3k-1``).

Replay: **other** -- the prefixed ``"m0/…"`` (Algorithm 3) and ``"m1/…"`` (Algorithm 4) steps all declare the right
Δ = 1; the leaks are the released noisy value and the unscaled query noise, which a frozen-noise replay will NOT
flag (``BUG_KIND = "other"``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .svt_outputs_value import SVTOutputsValue
from .svt_unscaled_query_noise import SVTUnscaledQueryNoise
from ..classic._validation import check_epsilon, check_finite, check_positive_int
from ..classic.parallel import run_in_parallel
from ..noise import NoiseSource

__all__ = ["SVT34Parallel"]


@dataclass(frozen=True)
class SVT34Parallel:
    """Lyu Alg. 3 and Alg. 4 (each ``epsilon_each``, cutoff c) on the same answers; claims ``2·epsilon_each``.

    Output: float64 ``(n, 3k)``.  Noise steps: :func:`algorithms.classic.parallel.run_in_parallel` (``"m0/…"`` the
    Algorithm 3 steps, ``"m1/…"`` the Algorithm 4 steps; Laplace, Δ = 1).
    """

    epsilon_each: float
    threshold: float
    cutoff: int = 2
    delta: ClassVar[float] = 0.0
    BUG_KIND: ClassVar[str] = "other"

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon_each, "epsilon_each")
        check_finite("threshold", self.threshold)
        check_positive_int("cutoff", self.cutoff)

    @property
    def epsilon(self) -> float:
        """The composed claim ``2·epsilon_each``."""
        return 2.0 * float(self.epsilon_each)

    def parts(self) -> tuple[SVTOutputsValue, SVTUnscaledQueryNoise]:
        """The two mechanisms run side by side."""
        kw = dict(threshold=float(self.threshold), cutoff=int(self.cutoff))
        return SVTOutputsValue(float(self.epsilon_each), **kw), SVTUnscaledQueryNoise(float(self.epsilon_each), **kw)

    def __call__(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.release(x, n, NoiseSource(rng))

    def release(self, x: np.ndarray, n: int, noise: Any) -> np.ndarray:
        """Both parts on ``x``, each through its own prefixed noise steps, outputs side by side."""
        return run_in_parallel(self.parts(), x, n, noise).astype(np.float64, copy=False)

    def log_density(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        """Exact log density: the two parts draw independent noise, so it is the sum of their log densities on their
        own columns (Algorithm 3: ``2k``, Algorithm 4: ``k``)."""
        k = np.asarray(x).reshape(-1).shape[0]
        arr = np.asarray(out, dtype=np.float64).reshape(-1, 3 * k)
        alg3, alg4 = self.parts()
        return alg3.log_density(x, arr[:, :2 * k]) + alg4.log_density(x, arr[:, 2 * k:])

    def true_epsilon(self) -> float:
        """∞ (supremum over query lists, from the Algorithm 3 part)."""
        return math.inf
