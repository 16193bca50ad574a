"""The sparse vector technique (SVT), Lyu–Su–Li Algorithm 1, and the shared SVT engine.

Source: Lyu, Su, Li, "Understanding the Sparse Vector Technique for Differential Privacy"
(PVLDB 10(6), 2017), Figure 1, **Algorithm 1** (their proposed, correct variant), with Δ = 1::

    ε1 = ε/2,  ρ = Lap(Δ/ε1),  ε2 = ε − ε1,  count = 0
    for each query q_i:
        ν_i = Lap(2cΔ/ε2)
        if q_i(D) + ν_i ≥ T + ρ:  output a_i = ⊤;  count += 1;  abort if count ≥ c
        else:                     output a_i = ⊥

Theorem 2 of the paper proves ε-DP for queries of sensitivity Δ with ℓ∞ neighbours (every answer may
move by Δ). The control ``SVT`` of StatDP (Ding et al., CCS 2018) / ``SVT1`` of DP-Sniper (Bichsel et al.,
S&P 2021).
True ε = ε: the proved bound is returned by :meth:`SparseVector.true_epsilon`. For c = 1 it is
approached (not attained): on ``x = (0, …, 0, 1)`` vs ``x' = (1, …, 1, 0)`` the output ``(⊥, …, ⊥, ⊤)``
has log-probability ratio 0.0982 with 10 queries and 0.09999 with 20 (numerical integration over ρ,
tests/test_sparse_vector_law.py). DP-Sniper's empirical lower bound at ε = 0.1 is 0.0858.

Output encoding (all SVT variants): int8 array ``(n, len(x))`` with 1 = ⊤, 0 = ⊥, −1 = not answered
(after the abort). :func:`run_sparse_vector` is the one engine behind this class and the broken
variants of :mod:`algorithms.broken` (Lyu Algorithms 3–6), which differ only in the noise scales,
the cutoff and whether the noisy value is released.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ._validation import as_finite_vector, check_epsilon, check_finite, check_n, check_positive_int
from .sparse_vector_law import answer_patterns, sparse_vector_log_density
from ..noise import NoiseSource, laplace_noise

__all__ = ["SparseVector", "SparseVectorBase", "run_sparse_vector", "as_queries", "ABOVE", "BELOW", "NOT_ANSWERED",
           "QUERY_SENSITIVITY"]

ABOVE: int = 1
BELOW: int = 0
NOT_ANSWERED: int = -1
#: Δ of every SVT variant here (Lyu et al. 2017 with Δ = 1): the sensitivity each noise step is calibrated for.
QUERY_SENSITIVITY: float = 1.0
#: :func:`run_sparse_vector` stops drawing for the runs past their cutoff once they make this share of the runs it
#: draws for (a CPU trade-off: dropping them costs a copy of the survivors; the output law does not depend on it).
COMPACT_SHARE: float = 0.5


def as_queries(x: object) -> np.ndarray:
    """A non-empty 1-D vector of finite query answers."""
    return as_finite_vector(x, "query answers")


def run_sparse_vector(
    queries: np.ndarray,
    n: int,
    rng: Any,
    *,
    threshold: float,
    threshold_scale: float,
    query_scale: float | None,
    cutoff: int | None,
    output_values: bool = False,
) -> np.ndarray:
    """Run ``n`` independent copies of an SVT variant, vectorised over the copies.

    Parameters
    ----------
    rng:
        A generator, or an explicit noise source (anything with the :mod:`algorithms.noise` protocol).  The noise goes through
        ``"threshold"`` (``T + ρ``) and ``"query[i]"`` (``q_i + ν_i``, only when there is query noise)
        Laplace steps, each declaring ℓ1 sensitivity Δ = :data:`QUERY_SENSITIVITY` (one scalar per run);
        a generator is wrapped in a plain :class:`~algorithms.noise.NoiseSource` (same draws).  A
        ``"query[i]"`` step draws for the runs still answering only (those below the cutoff, in row order),
        so its output has one entry per such run; the steps stop when no run answers any more.  Which runs
        answer is a function of the earlier steps' outputs, so a replay that feeds them to another input
        sees the same runs at every step.
    threshold_scale:
        Laplace scale of the threshold noise ρ (drawn once per copy, before the queries).
    query_scale:
        Laplace scale of the per-query noise ν_i, or ``None`` for no query noise (Lyu Alg. 5).
    cutoff:
        Abort after this many ⊤ answers, or ``None`` to answer every query (Lyu Alg. 5, 6).
    output_values:
        Release the noisy answer ``q_i + ν_i`` of each ⊤ (Lyu Alg. 3).

    Returns
    -------
    int8 codes ``(n, k)`` (1 = ⊤, 0 = ⊥, −1 = not answered); with ``output_values`` a float64
    ``(n, 2k)`` array: the codes as floats, then the released values (0.0 where the code is not ⊤).
    """
    noise = NoiseSource(rng) if isinstance(rng, np.random.Generator) else rng  # duck-typed noise source
    k = queries.shape[0]
    noisy_threshold = noise.add("threshold", threshold, lambda g: laplace_noise(g, threshold_scale, n),
                                sensitivity=QUERY_SENSITIVITY, norm="l1", scale=threshold_scale, kind="laplace")
    if output_values:  # one float64 array: the codes (written as floats) in its first k columns, the values after
        out = np.zeros((n, 2 * k), dtype=np.float64)
        codes, values = out[:, :k], out[:, k:]
        codes.fill(float(NOT_ANSWERED))
    else:
        out = codes = np.full((n, k), NOT_ANSWERED, dtype=np.int8)
        values = None
    # The runs still answering: their row numbers (None: all n, in order), noisy thresholds, ⊤ counts so far.
    rows: np.ndarray | None = None
    thr = np.broadcast_to(np.asarray(noisy_threshold, dtype=np.float64), (n,))
    count = np.zeros(n, dtype=np.int64) if cutoff is not None and cutoff > 1 else None
    for i in range(k):
        m = n if rows is None else rows.shape[0]
        if query_scale is None:
            noisy_query = np.full(m, queries[i])
        else:
            noisy_query = noise.add(f"query[{i}]", queries[i], lambda g: laplace_noise(g, query_scale, m),
                                    sensitivity=QUERY_SENSITIVITY, norm="l1", scale=query_scale, kind="laplace")
        above = noisy_query >= thr
        where = slice(None) if rows is None else rows
        codes[where, i] = above
        if values is not None:
            values[where, i] = np.where(above, noisy_query, 0.0)
        if cutoff is None:
            continue
        if count is None:  # cutoff 1: a run stops at its first ⊤
            keep = ~above
        else:
            count += above
            keep = count < cutoff
        kept = still_answering(keep, rows, thr, count)
        if kept is None:
            break
        rows, (thr, count) = kept
    return out


def still_answering(keep: np.ndarray, rows: np.ndarray | None,
                    *per_run: np.ndarray | None) -> tuple[np.ndarray | None, tuple[np.ndarray | None, ...]] | None:
    """The runs of an SVT loop that go on to the next query: ``keep`` marks them among the current ones, ``rows``
    are the current ones' row numbers (``None``: all, in order) and ``per_run`` arrays hold one value per current
    run (``None`` passes through).  Returns ``(rows, per_run)`` restricted to the kept runs, or ``None`` when no
    run goes on."""
    n_keep = int(np.count_nonzero(keep))
    if n_keep == 0:
        return None
    if n_keep == len(keep):
        return rows, per_run
    idx = np.flatnonzero(keep)
    return (idx if rows is None else rows.take(idx)), tuple(None if a is None else a.take(idx) for a in per_run)


@dataclass(frozen=True)
class SparseVectorBase:
    """What every SVT variant shares: the claim (``epsilon``), the public ``threshold``, parameter
    checks and sampling through :func:`run_sparse_vector`.

    A variant sets ``threshold_scale`` and ``query_scale`` (``None``: no query noise), may add a
    ``cutoff`` field (none: every query is answered) and sets ``output_values`` to release the noisy
    value of each ⊤.

    Noise steps (:meth:`release`): ``"threshold"`` (the public ``T``, Laplace ``threshold_scale``) and, when
    the variant has query noise, one ``"query[i]"`` step per query asked (``q_i``, Laplace ``query_scale``),
    all declaring ℓ1 sensitivity Δ = 1 on one scalar per run.  A replay feeds ``D``'s noisy threshold and
    noisy answers to ``D'``, so both follow the same ⊤/⊥ path.
    """

    epsilon: float
    threshold: float
    delta: ClassVar[float] = 0.0
    output_values: ClassVar[bool] = False

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_finite("threshold", self.threshold)
        if self.cutoff_or_none is not None:
            check_positive_int("cutoff", self.cutoff_or_none)

    @property
    def cutoff_or_none(self) -> int | None:
        cutoff = getattr(self, "cutoff", None)
        return None if cutoff is None else int(cutoff)

    @property
    def threshold_scale(self) -> float:
        raise NotImplementedError

    @property
    def query_scale(self) -> float | None:
        raise NotImplementedError

    def __call__(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.release(x, n, NoiseSource(rng))

    def release(self, x: np.ndarray, n: int, noise: NoiseSource) -> np.ndarray:
        """The sampler written against an explicit noise source (steps: see the class docstring)."""
        return run_sparse_vector(
            as_queries(x),
            check_n(n),
            noise,
            threshold=float(self.threshold),
            threshold_scale=self.threshold_scale,
            query_scale=self.query_scale,
            cutoff=self.cutoff_or_none,
            output_values=self.output_values,
        )

    def support(self, x: np.ndarray) -> np.ndarray:
        """Every output row the variant can return on ``len(x)`` queries (its answer patterns), for an exact oracle;
        ``NotImplementedError`` when it releases values or has too many patterns to list."""
        if self.output_values:
            raise NotImplementedError("the variant releases noisy values: its outputs are not a finite set")
        try:
            return answer_patterns(as_queries(x).shape[0], self.cutoff_or_none)
        except ValueError as exc:
            raise NotImplementedError(str(exc)) from None

    def log_density(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        """Exact log density of each output row on ``x`` (counting measure on the answer patterns, Lebesgue measure
        on released values), by integration over the threshold noise:
        :func:`algorithms.classic.sparse_vector_law.sparse_vector_log_density`."""
        return sparse_vector_log_density(as_queries(x), out, threshold=float(self.threshold),
                                         threshold_scale=self.threshold_scale, query_scale=self.query_scale,
                                         cutoff=self.cutoff_or_none, output_values=self.output_values)


@dataclass(frozen=True)
class SparseVector(SparseVectorBase):
    """Lyu–Su–Li Algorithm 1 (Δ = 1): ρ ~ Lap(2/ε), ν_i ~ Lap(4c/ε), abort after ``cutoff`` ⊤.

    Output: int8 codes of shape ``(n, len(x))``.
    """

    cutoff: int = 1

    @property
    def threshold_scale(self) -> float:
        """Scale ``Δ/ε1`` of ρ, ``ε1 = ε/2``."""
        return 1.0 / (float(self.epsilon) / 2.0)

    @property
    def query_scale(self) -> float:
        """Scale ``2cΔ/ε2`` of ν_i, ``ε2 = ε − ε1 = ε/2``."""
        return 2.0 * int(self.cutoff) / (float(self.epsilon) / 2.0)


    def true_epsilon(self) -> float:
        """The proved bound ε (Lyu et al. Thm 2); an upper bound, tightness not in closed form."""
        return float(self.epsilon)
