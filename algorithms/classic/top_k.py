"""Private top-k selection: the one-shot Gumbel mechanism (the k-fold peeling exponential mechanism).

Source: Durfee & Rogers, "Practical Differentially Private Top-k Selection with Pay-what-you-get Composition"
(NeurIPS 2019), Lemma 4.2 and Corollary 4.3: adding i.i.d. Gumbel noise to every score and releasing the indices
of the k largest noisy scores, in order, has exactly the law of k rounds of the exponential mechanism
(McSherry & Talwar, FOCS 2007) without replacement, each over the items not yet chosen.  With the logits
``c · u`` (``u`` the score vector, the input here) and ``c = ε / (2 k Δu)``, each round is the exponential
mechanism at ε/k for scores of ℓ∞ sensitivity Δu (Dwork & Roth 2014, Theorem 3.10), and the k rounds are ε-DP by
basic composition.

Output: the ordered k-tuple of item indices, int64 of shape ``(n, k)``.  Its law is exact
(:meth:`OneShotTopK.log_density` on the rows of :meth:`OneShotTopK.support`):
``P[(i_1, …, i_k)] = Π_j exp(c u_{i_j}) / Σ_{r ∉ {i_1..i_{j-1}}} exp(c u_r)``, so :meth:`OneShotTopK.epsilon_on`
gives the true ε of a pair by enumerating the ``m!/(m-k)!`` tuples.

The released items are labels: a neighbour that lifts one low-scored item into the top k shows up in a few of
ten thousand outputs spread over every tuple holding that item (dpverify's item events,
:mod:`dpverify.statistical.items`, pool them).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from ._validation import as_finite_vector, check_epsilon, check_n, check_positive, check_positive_int

__all__ = ["OneShotTopK", "MAX_SUPPORT"]

#: :meth:`OneShotTopK.support` enumerates at most this many ordered tuples
MAX_SUPPORT = 200_000


@dataclass(frozen=True)
class OneShotTopK:
    """The ordered indices of the ``k`` largest of ``c · u + Gumbel(0, 1)``, ``c = ε / (2 k Δu)``; ``x`` is the
    score vector ``u``."""

    k: int
    epsilon: float
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        check_positive_int("k", self.k)
        check_epsilon(self.epsilon)
        check_positive("sensitivity", self.sensitivity)

    @property
    def coefficient(self) -> float:
        """``c = ε / (2 k Δu)``: the logits of each round are ``c · u``."""
        return float(self.epsilon) / (2.0 * self.k * float(self.sensitivity))

    def _logits(self, x: object) -> np.ndarray:
        u = as_finite_vector(x, "scores")
        if u.size < self.k:
            raise ValueError(f"top-{self.k} of {u.size} scores: give at least k scores or a smaller k")
        return self.coefficient * u

    def __call__(self, x: object, n: int, rng: np.random.Generator) -> np.ndarray:
        logits = self._logits(x)
        n = check_n(n)
        noisy = logits + rng.gumbel(0.0, 1.0, size=(n, logits.size))
        top = np.argpartition(-noisy, self.k - 1, axis=1)[:, :self.k]
        order = np.argsort(-np.take_along_axis(noisy, top, axis=1), axis=1)
        return np.take_along_axis(top, order, axis=1).astype(np.int64)

    def log_density(self, x: object, out: np.ndarray) -> np.ndarray:
        """Log probability of each ordered tuple (rows of ``out``) under scores ``x``; ``-inf`` for a row that repeats
        an item or names none of ``0..m-1``."""
        logits = self._logits(x)
        rows = np.asarray(out).reshape(-1, self.k)
        ok = ((rows >= 0) & (rows < logits.size)).all(axis=1)
        rows = np.where(ok[:, None], rows, 0).astype(np.int64)
        srt = np.sort(rows, axis=1)
        ok &= (srt[:, 1:] != srt[:, :-1]).all(axis=1)
        left = np.broadcast_to(logits, (len(rows), logits.size)).copy()   # logits of the items not yet chosen
        out_lp = np.zeros(len(rows))
        for j in range(self.k):                  # log-sum-exp of what is left: no cancellation when the chosen
            out_lp += logits[rows[:, j]] - logsumexp(left, axis=1)   # items hold nearly all of the mass
            np.put_along_axis(left, rows[:, j:j + 1], -np.inf, axis=1)
        return np.where(ok, out_lp, -np.inf)

    def support(self, x: object) -> np.ndarray:
        """Every ordered tuple of ``k`` distinct items, ``(m!/(m-k)!, k)``; ``NotImplementedError`` above
        :data:`MAX_SUPPORT` tuples (no exact law there)."""
        m = self._logits(x).size
        size = math.perm(m, self.k)
        if size > MAX_SUPPORT:
            raise NotImplementedError(f"{size} ordered top-{self.k} tuples of {m} items: more than {MAX_SUPPORT}")
        return np.array(list(itertools.permutations(range(m), self.k)), dtype=np.int64).reshape(size, self.k)

    def epsilon_on(self, x0: object, x1: object) -> float:
        """The true ε on the pair: ``max |ln P_x0[t] − ln P_x1[t]|`` over every ordered tuple ``t``."""
        rows = self.support(x0)
        return float(np.max(np.abs(self.log_density(x0, rows) - self.log_density(x1, rows))))
