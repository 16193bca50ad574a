"""DPM's split selection: one exponential-mechanism draw over the split candidates.

Source: seed 004, Liebenow, Schütt et al., "DPM: Clustering Sensitive Data through Separation" (CCS 2024),
Algorithm 1 procedure ``Split`` lines 22-25 (with the split index corrected, :mod:`algorithms.dpm.score`),
Definition 4 (exponential mechanism), Definitions 5-7 (score), Lemmas 3-5 and Corollary 3 (Sec. 4.3).  Scores,
candidates and ``Δ_f`` come from :mod:`algorithms.dpm.score`.

The mechanism (:class:`DPMSplitEM`)
-----------------------------------
Input: a data set ``S`` (``(n,)`` for ``d = 1`` or ``(n, d)``) inside the public range ``[a, b]^d``.
Output: the index ``i* = i·K + k`` of the chosen candidate (dimension ``i``, position
``a + (k + 0.5)β``), drawn with probability ``∝ exp(ε f(S, ñ, s)/(2Δ_f))``,
``Δ_f = (t/q + α)/(ñ − λ)``.

* **Neighbours**: add/remove one point (Def. 1).
* **The noisy count ``ñ`` is a fixed, public parameter** of the mechanism, the same for ``S`` and
  ``S ∪ {x}``, exactly as in the proofs of Lemmas 3-5.  (In DPM it is the output of an earlier
  Laplace count and is charged separately, Alg. 1 lines 7/16-17.)  The data size ``|S|`` may differ
  from ``ñ``; an **empty data set is allowed** (every score is then ``α``: ranks 0, counts 0), since
  it is the add/remove neighbour of a one-point data set and the scores are well defined given ``ñ``.
* **Exponent (Def. 4 vs. Thm. 2, Lemma 10).**  ``exponent="two"`` (default) uses ``exp(ε f/(2Δ_f))``, the
  form of Thm. 2, Lemma 10 and the authors' code (diffprivlib ``Exponential(monotonic=False)``); the
  score is not monotone (adding a point raises some scores and lowers others), so the factor 2 is
  needed for ε-DP (Dwork & Roth, Thm 3.10).  ``exponent="printed"`` reproduces **Definition 4
  literally**, ``exp(ε f/Δ_f)`` without the factor 2 — a broken twin in the sense of
  :mod:`algorithms.broken` (cf. :class:`algorithms.broken.exponential_no_half.ExponentialMechanismNoHalf`):
  it claims ε but only guarantees ``2ε`` in general (see :meth:`DPMSplitEM.true_epsilon` for the
  exact supremum for this score).
* **Sampling**: Gumbel-max, one ``(n, |W|)`` Gumbel draw (:func:`algorithms.classic.exponential.gumbel_argmax`).
* **Exact law**: :meth:`DPMSplitEM.log_pmf` (``scipy.special.log_softmax`` of the logits).

Privacy loss (the value of :meth:`DPMSplitEM.true_epsilon`)
-----------------------------------------------------------
With ``ñ`` fixed, adding one point changes each score by ``δ_s ∈ [−Δ₀, +G]``, where
``Δ₀ = (t/q + α)/ñ`` (rank and count both up; Lemmas 3-5 at ``λ = 0``) and ``G = t/(ñq)`` (an
increase can only come from the centreness; counts only grow).  With logits ``a·f``
(``a = ε/(2Δ_f)`` or ``ε/Δ_f``), ``ln p'(s) − ln p(s) = a·δ_s − ln E_p[exp(a·δ)]``, so the privacy
loss is at most ``a·(Δ₀ + G) = ε_k · (2t/q + α)/(t/q + α) · (ñ − λ)/ñ`` with ``ε_k = ε/2`` ("two") or
``ε`` ("printed"): with the defaults ``(2t/q + α)/(t/q + α) = 12.2/8.6 ≈ 1.419``, i.e. ``≈ 0.709ε``
resp. ``≈ 1.419ε`` at ``λ = 0``, both below the generic bounds ``ε`` resp. ``2ε``
(:meth:`DPMSplitEM.generic_epsilon_bound`).  The bound is approached, for ``d ≥ 2`` and ``K ≥ 2``, as
``ñ·ε → ∞``: a candidate in dimension 0 just above the new point and in the upper outer quantile
carries almost all the mass and loses ``Δ₀``, while a candidate in dimension 1 above the new point,
in the lower outer quantile, gains ``G`` (``tests/test_dpm_split.py`` builds such a pair).  In one
dimension the two cannot coexist (the gaining candidate would have to lie above the losing one
yet have the lower rank), so the bound is not approached there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy.special import log_softmax

from ..classic._validation import check_choice, check_epsilon, check_n, check_positive, check_positive_int
from ..classic.exponential import gumbel_argmax
from .score import (
    DEFAULT_ALPHA,
    DEFAULT_Q,
    DEFAULT_T,
    check_bounds,
    check_parameters,
    decode_candidates,
    n_splits,
    score,
    score_sensitivity,
    split_candidates,
)
from ..noise import NoiseSource

__all__ = ["DPMSplitEM", "as_points"]

EXPONENTS: tuple[str, ...] = ("two", "printed")


def as_points(x: object, d: int, bounds: tuple[float, float]) -> np.ndarray:
    """Validate a DPM data set and return it as an ``(n, d)`` float64 array.

    Accepts ``(n,)`` when ``d = 1`` and ``(n, d)``; an empty data set (any shape of size 0) is
    ``(0, d)``.  Every coordinate must be finite and inside the public range ``[a, b]`` (Sec. 2.1:
    "D has range R"; DPM itself has no clipping step).  The score sensitivity
    (Lemmas 3-5) would survive points outside the range -- ranks and counts still move by at most
    one -- but the candidate grid and DPM's later Gaussian averaging assume it, so it is enforced here.
    """
    a, b = check_bounds(bounds)
    arr = np.asarray(x, dtype=np.float64)
    if arr.size == 0:
        return np.empty((0, d), dtype=np.float64)
    if arr.ndim == 1 and d == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[1] != d:
        raise ValueError(
            f"x must be a data set of shape (n, {d})" + (" or (n,)" if d == 1 else "")
            + f" for d={d}, got shape {arr.shape}"
        )
    bad = ~np.isfinite(arr)
    if bad.any():
        row = int(np.argmax(bad.any(axis=1)))
        raise ValueError(f"x must be finite: point x[{row}] = {arr[row].tolist()} has a NaN or infinite coordinate")
    out = (arr < a) | (arr > b)
    if out.any():
        row = int(np.argmax(out.any(axis=1)))
        raise ValueError(
            f"point x[{row}] = {arr[row].tolist()} lies outside the public range [{a!r}, {b!r}]^{d}; "
            f"clip the data to the public range first (seed 004 Sec. 2.1 assumes a <= x <= b; DPM has no clipping step)"
        )
    return arr


@dataclass(frozen=True)
class DPMSplitEM:
    """DPM's split selection (seed 004 Alg. 1 lines 22-25): draw a candidate index with probability
    ``∝ exp(ε f(S, ñ, s)/(2Δ_f))`` over all ``d·K`` candidates.  Output: int64 ``(n,)``.

    ``epsilon`` is the ``ε_exp`` of this call; ``n_tilde`` the noisy count, fixed and public;
    ``lam`` the offset ``λ ≥ 0`` (Def. 8; ``Δ_f = (t/q + α)/(ñ − λ)`` requires ``ñ − λ > 0``);
    ``bounds`` the public range ``[a, b]`` of every dimension; ``beta`` the interval size;
    ``exponent="printed"`` reproduces Definition 4 literally (no factor 2: a broken twin,
    true ε up to ``2ε``).  ``beta`` comes third because it has no default (Alg. 2 estimates it).

    Noise steps (:meth:`release`): one ``"split-em"`` selection over the scores ``f(S, ñ, s)`` of all
    candidates (shared by all runs), ℓ∞ sensitivity ``Δ_f`` and ``scale = ε/(2Δ_f)`` ("two") or ``ε/Δ_f``
    ("printed"): the coefficient of the scores in the logits.
    """

    epsilon: float
    n_tilde: float
    beta: float
    lam: float = 0.0
    bounds: tuple[float, float] = (0.0, 1.0)
    d: int = 1
    t: float = DEFAULT_T
    q: float = DEFAULT_Q
    alpha: float = DEFAULT_ALPHA
    exponent: str = "two"
    clip_emptiness: bool = False
    delta: ClassVar[float] = 0.0

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_positive("n_tilde", self.n_tilde)
        check_positive("beta", self.beta)
        check_positive_int("d", self.d)
        check_bounds(self.bounds)
        check_parameters(self.t, self.q, self.alpha, n_tilde=self.n_tilde, beta=self.beta, lam=self.lam)
        check_choice("exponent", self.exponent, EXPONENTS)
        if not isinstance(self.clip_emptiness, bool):
            raise ValueError(f"clip_emptiness must be a bool, got {self.clip_emptiness!r}")
        n_splits(self.bounds, self.beta)                     # raises if K < 1
        score_sensitivity(self.n_tilde, self.lam, self.t, self.q, self.alpha)   # raises if ñ − λ <= 0

    # -- candidates -------------------------------------------------------------------------------
    @property
    def n_splits(self) -> int:
        """``K = floor((b − a)/β)`` candidates per dimension."""
        return n_splits(self.bounds, self.beta)

    @property
    def n_candidates(self) -> int:
        """``|W| = d·K``."""
        return int(self.d) * self.n_splits

    def candidates(self) -> tuple[np.ndarray, np.ndarray]:
        """``(dims, positions)`` of all candidates, index ``i·K + k``."""
        return split_candidates(self.bounds, self.beta, self.d)

    def decode(self, index: np.ndarray | int) -> tuple[np.ndarray, np.ndarray]:
        """``(dimension, position)`` of candidate indices (corrected Alg. 1 lines 24-25)."""
        return decode_candidates(index, self.bounds, self.beta, self.d)

    # -- scores and law ---------------------------------------------------------------------------
    def sensitivity(self) -> float:
        """``Δ_f = (t/q + α)/(ñ − λ)`` (Lemma 5, Alg. 1 line 22)."""
        return score_sensitivity(self.n_tilde, self.lam, self.t, self.q, self.alpha)

    def scores(self, x: object) -> np.ndarray:
        """``f(S, ñ, s)`` for every candidate (Def. 7), shape ``(|W|,)``."""
        data = as_points(x, int(self.d), self.bounds)
        dims, positions = self.candidates()
        return score(data, dims, positions, self.beta, self.n_tilde, self.t, self.q, self.alpha,
                     clip_emptiness=self.clip_emptiness)

    def logits(self, x: object) -> np.ndarray:
        """``ε f/(2Δ_f)`` ("two") or ``ε f/Δ_f`` ("printed")."""
        k = 2.0 if self.exponent == "two" else 1.0
        return float(self.epsilon) * self.scores(x) / (k * self.sensitivity())

    def log_pmf(self, x: object) -> tuple[np.ndarray, np.ndarray]:
        """Exact output law: ``(np.arange(|W|), log_p)`` with ``log_p = log_softmax(logits)``."""
        return np.arange(self.n_candidates, dtype=np.int64), log_softmax(self.logits(x)).astype(np.float64)

    def coefficient(self) -> float:
        """The coefficient of the scores in the logits: ``ε/(2Δ_f)`` ("two") or ``ε/Δ_f`` ("printed")."""
        k = 2.0 if self.exponent == "two" else 1.0
        return float(self.epsilon) / (k * self.sensitivity())

    def __call__(self, x: object, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.release(x, n, NoiseSource(rng))

    def release(self, x: object, n: int, noise: NoiseSource) -> np.ndarray:
        """The sampler written against an explicit noise source: one ``"split-em"`` selection protecting
        the candidates' scores with ℓ∞ sensitivity ``Δ_f``."""
        n = check_n(n)
        scores = self.scores(x)
        k = 2.0 if self.exponent == "two" else 1.0
        logits = float(self.epsilon) * scores / (k * self.sensitivity())
        return noise.select("split-em", scores, lambda rng: gumbel_argmax(logits, n, rng),
                            sensitivity=self.sensitivity(), norm="linf", scale=self.coefficient())

    # -- privacy ------------------------------------------------------------------------------------
    def generic_epsilon_bound(self) -> float:
        """The exponential mechanism's generic bound for any score with sensitivity ``Δ_f``:
        ``ε`` ("two"; Dwork & Roth Thm 3.10) or ``2ε`` ("printed", Def. 4 literally)."""
        return float(self.epsilon) * (1.0 if self.exponent == "two" else 2.0)

    def true_epsilon(self) -> float:
        """Upper bound on the privacy loss over add/remove pairs at this fixed ``ñ``:
        ``ε_k·(2t/q + α)/(t/q + α)·(ñ − λ)/ñ`` with ``ε_k = ε/2`` ("two") or ``ε`` ("printed")
        (module docstring).  ``≈ 0.709ε`` resp. ``≈ 1.419ε`` with the defaults at ``λ = 0``; always
        ``< ε`` for "two" and ``< 2ε`` for "printed".  Approached for ``d ≥ 2``, ``K ≥ 2`` as
        ``ñ·ε → ∞``; not approached for ``d = 1``."""
        k = 2.0 if self.exponent == "two" else 1.0
        tq = float(self.t) / float(self.q)
        ratio = (2.0 * tq + float(self.alpha)) / (tq + float(self.alpha))
        shrink = (float(self.n_tilde) - float(self.lam)) / float(self.n_tilde)
        return float(self.epsilon) / k * ratio * shrink
