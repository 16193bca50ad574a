"""Distribution checks shared by the mechanism tests: goodness of fit and exact SVT pattern
probabilities (by numerical integration over the threshold noise)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import integrate, stats


def chisquare_p(samples: np.ndarray, support: np.ndarray, probs: np.ndarray) -> float:
    """Chi-square p-value of integer ``samples`` against ``probs`` on ``support`` (cells < 5 pooled)."""
    samples = np.asarray(samples).reshape(-1)
    assert np.isin(samples, support).all(), "sample outside the documented support"
    observed = np.bincount(np.searchsorted(support, samples), minlength=support.size).astype(float)
    expected = probs * samples.size
    small = expected < 5
    if small.any():
        observed = np.append(observed[~small], observed[small].sum())
        expected = np.append(expected[~small], expected[small].sum())
        if expected[-1] == 0:
            observed, expected = observed[:-1], expected[:-1]
    expected = expected * observed.sum() / expected.sum()
    return float(stats.chisquare(observed, expected).pvalue)


def ks_p(samples: np.ndarray, cdf: Callable[[np.ndarray], np.ndarray] | str, *args: Any) -> float:
    return float(stats.kstest(np.asarray(samples).reshape(-1), cdf, args=args).pvalue)


def laplace_logcdf(t: float, scale: float) -> float:
    z = t / scale
    return z - math.log(2.0) if z < 0 else math.log1p(-0.5 * math.exp(-z))


def svt_pattern_log_probability(
    pattern: tuple[int, ...], q: np.ndarray, threshold: float, rho_scale: float, nu_scale: float
) -> float:
    """log ∫ f_ρ(r) Π_j g_j(r) dr with g = F_ν(T + r − q_j) (⊥), 1 − F_ν (⊤), 1 (not answered)."""
    qs = [float(v) for v in q]
    log_norm = -math.log(2.0 * rho_scale)

    def integrand(r: float) -> float:
        log_value = log_norm - abs(r) / rho_scale
        for code, qj in zip(pattern, qs):
            if code == 0:
                log_value += laplace_logcdf(threshold + r - qj, nu_scale)
            elif code == 1:
                log_value += laplace_logcdf(qj - threshold - r, nu_scale)
        return math.exp(log_value)

    points = sorted({qj - threshold for qj in qs} | {0.0})
    value, _ = integrate.quad(
        integrand, -80 * rho_scale, 80 * rho_scale, points=points, limit=500, epsabs=0.0, epsrel=1e-10
    )
    return math.log(value)


def valid_patterns(k: int, cutoff: int | None) -> list[tuple[int, ...]]:
    patterns = set()
    for bits in itertools.product([0, 1], repeat=k):
        codes, count = [], 0
        for b in bits:
            if cutoff is not None and count >= cutoff:
                codes.append(-1)
            else:
                codes.append(b)
                count += b
        patterns.add(tuple(codes))
    return sorted(patterns)


def pattern_index(codes: np.ndarray, patterns: list[tuple[int, ...]]) -> np.ndarray:
    weights = 3 ** np.arange(codes.shape[1])
    keys = (codes.astype(np.int64) + 1) @ weights
    pattern_keys = (np.array(patterns, dtype=np.int64) + 1) @ weights
    order = np.argsort(pattern_keys)
    position = np.searchsorted(pattern_keys[order], keys)
    assert np.all(pattern_keys[order][np.minimum(position, len(patterns) - 1)] == keys), "invalid pattern"
    return order[position]


def two_sample_chisquare_p(a: np.ndarray, b: np.ndarray) -> float:
    """Chi-square p-value that two samples of integer codes come from the same law (cells with an expected count
    below 5 in either sample pooled into one)."""
    a, b = np.asarray(a).reshape(-1), np.asarray(b).reshape(-1)
    cells = np.union1d(a, b)
    table = np.array([np.bincount(np.searchsorted(cells, s), minlength=cells.size) for s in (a, b)], dtype=float)
    expected = table.sum(axis=0) * (table.sum(axis=1, keepdims=True) / table.sum())
    small = (expected < 5).any(axis=0)
    if small.any():
        table = np.column_stack([table[:, ~small], table[:, small].sum(axis=1)])
    table = table[:, table.sum(axis=0) > 0]
    if table.shape[1] < 2:
        return 1.0
    return float(stats.chi2_contingency(table, correction=False).pvalue)


def rows_as_codes(out: np.ndarray) -> np.ndarray:
    """One integer per row of small-integer codes (−1, 0, 1): its base-3 digits."""
    codes = np.asarray(out).astype(np.int64) + 1
    return codes @ (3 ** np.arange(codes.shape[1], dtype=np.int64))


def legacy_run_sparse_vector(queries: np.ndarray, n: int, rng: np.random.Generator, *, threshold: float,
                             threshold_scale: float, query_scale: float | None, cutoff: int | None,
                             output_values: bool = False) -> np.ndarray:
    """The SVT engine as it was before the samplers were made cheaper (``rng.laplace`` for every run at every
    query, masked by the runs still answering): the reference the faster engine is tested against."""
    k = queries.shape[0]
    noisy_threshold = threshold + rng.laplace(0.0, threshold_scale, size=n)
    codes = np.full((n, k), -1, dtype=np.int8)
    values = np.zeros((n, k), dtype=np.float64) if output_values else None
    count = np.zeros(n, dtype=np.int64)
    for i in range(k):
        active = count < cutoff if cutoff is not None else np.ones(n, dtype=bool)
        if not active.any():
            break
        if query_scale is None:
            noisy_query = np.full(n, queries[i])
        else:
            noisy_query = queries[i] + rng.laplace(0.0, query_scale, size=n)
        above = noisy_query >= noisy_threshold
        codes[:, i] = np.where(active, above.astype(np.int8), np.int8(-1))
        if values is not None:
            values[:, i] = np.where(active & above, noisy_query, 0.0)
        count += active & above
    if values is None:
        return codes
    return np.concatenate([codes.astype(np.float64), values], axis=1)


def legacy_svt(mech: Any, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``mech(x, n, rng)`` of an SVT variant of :class:`algorithms.classic.sparse_vector.SparseVectorBase` through
    :func:`legacy_run_sparse_vector`."""
    return legacy_run_sparse_vector(np.asarray(x, dtype=np.float64), n, rng, threshold=float(mech.threshold),
                                    threshold_scale=mech.threshold_scale, query_scale=mech.query_scale,
                                    cutoff=mech.cutoff_or_none, output_values=mech.output_values)


def legacy_svt_dwork_roth(mech: Any, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """:class:`algorithms.classic.sparse_vector_dwork_roth.SparseVectorDworkRoth` as it was sampled before the
    samplers were made cheaper (``rng.laplace`` for every run at every query)."""
    queries = np.asarray(x, dtype=np.float64)
    c, k = int(mech.cutoff), queries.shape[0]
    thresholds = np.column_stack([mech.threshold + rng.laplace(0.0, mech.threshold_scale, size=n) for _ in range(c)])
    codes = np.full((n, k), -1, dtype=np.int8)
    count = np.zeros(n, dtype=np.int64)
    rows = np.arange(n)
    for i in range(k):
        active = count < c
        if not active.any():
            break
        noisy_query = queries[i] + rng.laplace(0.0, mech.query_scale, size=n)
        above = noisy_query >= thresholds[rows, np.minimum(count, c - 1)]
        codes[:, i] = np.where(active, above.astype(np.int8), np.int8(-1))
        count += active & above
    return codes


def legacy_numerical_svt(mech: Any, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """:class:`algorithms.classic.numerical_svt.NumericalSVT` as it was sampled before the samplers were made
    cheaper (``rng.laplace`` for every run at every query, comparison and release noise alike)."""
    queries = np.asarray(x, dtype=np.float64)
    c, k = int(mech.cutoff), queries.shape[0]
    noisy_threshold = mech.threshold + rng.laplace(0.0, mech.threshold_scale, size=n)
    codes = np.full((n, k), -1.0)
    values = np.zeros((n, k))
    count = np.zeros(n, dtype=np.int64)
    for i in range(k):
        active = count < c
        if not active.any():
            break
        noisy_query = queries[i] + rng.laplace(0.0, mech.query_scale, size=n)
        released = queries[i] + rng.laplace(0.0, mech.value_scale, size=n)
        above = noisy_query >= noisy_threshold
        codes[:, i] = np.where(active, above.astype(np.float64), -1.0)
        values[:, i] = np.where(active & above, released, 0.0)
        count += active & above
    return np.concatenate([codes, values], axis=1)
