"""Numerical sparse vector: SVT that releases a *freshly noised* answer for every ⊤.

Source: Wang, Ding, Wang, Kifer, Zhang, "Proving Differential Privacy with Shadow Execution" (PLDI 2019),
benchmark ``NumericalSparseVector`` (after Dwork & Roth 2014, §3.6 "NumericSparse"), with Δ = 1 and ℓ∞
neighbours (precondition ``−1 ≤ q[i] − q'[i] ≤ 1`` for every i)::

    η1 = Lap(3/ε),  T' = T + η1,  count = 0
    for each query q_i while count < c:
        η2 = Lap(6c/ε)
        if q_i + η2 ≥ T':  η3 = Lap(3c/ε);  output q_i + η3;  count += 1
        else:              output 0  (here: code ⊥)

Budget (ShadowDP's loop invariant ``ε/3 + count·2ε/(3c)``): ε/3 for the threshold, and for each of the at most c
⊤ answers ε/(3c) for the comparison (its noise is aligned by 2) plus ε/(3c) for the released value -- ε in total.
The difference from Lyu et al.'s broken Algorithm 3 (:class:`algorithms.broken.svt_outputs_value.SVTOutputsValue`)
is that the released value uses *fresh* noise η3, not the η2 of the comparison, so it says nothing about ρ.
DP-Sniper's ``NumericalSVT`` (Bichsel et al., IEEE S&P 2021, §6: ε = 0.1, c = 2, T = 1, 10 queries).

True ε: at most ε (the proved bound, :meth:`NumericalSVT.true_epsilon`; tightness not in closed form).  A hard
instance for black-box audits: DP-Sniper's 90 % lower bound is 0.0343 (logistic regression) / 0.0345 (MLP)
at ε = 0.1; StatDP gave none.

Output: float64 ``(n, 2k)`` as every value-releasing SVT here: columns ``0..k-1`` the codes (1.0 = ⊤, 0.0 = ⊥,
−1.0 = not answered after the c-th ⊤), columns ``k..2k-1`` the released values ``q_i + η3`` (0.0 where the code
is not ⊤).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ._validation import check_epsilon, check_finite, check_n, check_positive_int
from .sparse_vector import NOT_ANSWERED, QUERY_SENSITIVITY, as_queries, still_answering
from .sparse_vector_law import sparse_vector_log_density
from ..noise import NoiseSource, laplace_noise

__all__ = ["NumericalSVT"]


@dataclass(frozen=True)
class NumericalSVT:
    """ShadowDP's numerical SVT (Δ = 1): η1 ~ Lap(3/ε), η2 ~ Lap(6c/ε), released ``q_i + Lap(3c/ε)``.

    Output: float64 ``(n, 2k)`` (codes, then values).

    Noise steps (:meth:`release`): ``"threshold"`` (``T``, scale ``3/ε``), and per query asked ``"query[i]"``
    (the comparison, scale ``6c/ε``, drawn for the runs still answering) and ``"value[i]"`` (the released answer,
    scale ``3c/ε``, drawn for the runs whose answer is ⊤, made only when there is one); all Laplace, ℓ1
    sensitivity Δ = 1 on one scalar per run.  Which runs a step draws for (in row order) follows from the earlier
    steps' outputs, so a replay on a neighbour sees the same runs.
    """

    epsilon: float
    threshold: float
    cutoff: int = 2
    delta: ClassVar[float] = 0.0

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_finite("threshold", self.threshold)
        check_positive_int("cutoff", self.cutoff)

    @property
    def threshold_scale(self) -> float:
        """Scale ``3/ε`` of η1."""
        return 3.0 / float(self.epsilon)

    @property
    def query_scale(self) -> float:
        """Scale ``6c/ε`` of the comparison noise η2."""
        return 6.0 * int(self.cutoff) / float(self.epsilon)

    @property
    def value_scale(self) -> float:
        """Scale ``3c/ε`` of the release noise η3."""
        return 3.0 * int(self.cutoff) / float(self.epsilon)

    def __call__(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.release(x, n, NoiseSource(rng))

    def release(self, x: np.ndarray, n: int, noise: Any) -> np.ndarray:
        """The sampler written against an explicit noise source (steps: see the class docstring)."""
        queries = as_queries(x)
        n = check_n(n)
        c, k = int(self.cutoff), queries.shape[0]
        t_scale, q_scale, v_scale = self.threshold_scale, self.query_scale, self.value_scale
        kw = dict(sensitivity=QUERY_SENSITIVITY, norm="l1", kind="laplace")
        noisy_threshold = noise.add("threshold", float(self.threshold),
                                    lambda g: laplace_noise(g, t_scale, n), scale=t_scale, **kw)
        out = np.zeros((n, 2 * k))  # codes in the first k columns, released values in the last k
        codes, values = out[:, :k], out[:, k:]
        codes.fill(float(NOT_ANSWERED))
        # The runs still answering: row numbers (None: all n, in order), noisy thresholds, ⊤ counts so far.
        rows: np.ndarray | None = None
        thr = np.broadcast_to(np.asarray(noisy_threshold, dtype=np.float64), (n,))
        count = np.zeros(n, dtype=np.int64)
        for i in range(k):
            m = n if rows is None else rows.shape[0]
            noisy_query = noise.add(f"query[{i}]", queries[i], lambda g: laplace_noise(g, q_scale, m),
                                    scale=q_scale, **kw)
            above = noisy_query >= thr
            codes[slice(None) if rows is None else rows, i] = above
            top = np.flatnonzero(above) if rows is None else rows[above]
            if top.size:
                values[top, i] = noise.add(f"value[{i}]", queries[i],
                                           lambda g: laplace_noise(g, v_scale, top.size), scale=v_scale, **kw)
            count += above
            kept = still_answering(count < c, rows, thr, count)
            if kept is None:
                break
            rows, (thr, count) = kept
        return out

    def log_density(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        """Exact log density of each output row on ``x``: the pattern's probability (integral over η1) times the
        fresh release noise's density at each ⊤ (:func:`algorithms.classic.sparse_vector_law.sparse_vector_log_density`)."""
        return sparse_vector_log_density(as_queries(x), out, threshold=float(self.threshold),
                                         threshold_scale=self.threshold_scale, query_scale=self.query_scale,
                                         cutoff=int(self.cutoff), output_values=True, value_scale=self.value_scale)

    def true_epsilon(self) -> float:
        """The proved bound ε (ShadowDP); an upper bound, tightness not in closed form."""
        return float(self.epsilon)
