"""The exact output law of the sparse vector technique (every variant with one threshold draw), by integration.

Source: Lyu, Su, Li, "Understanding the Sparse Vector Technique for Differential Privacy" (PVLDB 10(6), 2017),
Figure 1, Algorithms 1 and 3--6, and the privacy proof of their Theorem 2, whose first step is the identity used
here: conditioned on the noisy threshold ``T + ρ = T + r`` the answers are independent, so the probability of an
answer pattern ``a`` (⊤ = 1, ⊥ = 0, −1 = not answered after the cutoff) on query answers ``q`` is

    P[a] = ∫ f_ρ(r) · Π_{i: a_i = ⊥} F_ν(T + r − q_i) · Π_{i: a_i = ⊤} (1 − F_ν(T + r − q_i)) dr

(``F_ν`` the Laplace CDF of the query noise).  Variants:

* **released comparison value** (Lyu Alg. 3, Roth's lecture notes): a ⊤ releases ``v_i = q_i + ν_i``, which
  pins ``ν_i`` and bounds the threshold noise, ``r ≤ v_i − T``; the density (counting measure on the patterns,
  Lebesgue measure on the released values) is

      f(a, v) = Π_{i: ⊤} f_ν(v_i − q_i) · ∫_{−∞}^{min_⊤ v_i − T} f_ρ(r) Π_{i: ⊥} F_ν(T + r − q_i) dr;

* **fresh release noise** (Dwork & Roth's NumericSparse, ShadowDP's ``NumericalSparseVector``): the pattern's
  probability above times ``Π_{i: ⊤} f_η(v_i − q_i)`` with the release noise's own Laplace scale;
* **no query noise** (Lyu Alg. 5): each answer is the indicator of ``q_i ≥ T + r``, so ``P[a]`` is the ρ-mass
  of an interval, in closed form.

The integrals are taken on a grid of ``r`` in log space (trapezoid rule, cumulative for the upper limit of the
released-value case; the log of the cumulative integral is interpolated linearly and extrapolated linearly below
the grid, where it is asymptotically linear).  The grid spans 40 scales of the widest noise around every kink, so
the mass it leaves out is below ``e^{−40}``; its step is a few hundredths of a scale, and the relative error of
the probabilities is below 1e-6 (tests: the patterns' probabilities sum to 1, the closed form of Alg. 5, and the
ratio 0.0982 of Lyu Alg. 1 quoted in :mod:`algorithms.classic.sparse_vector`).

This is the law the oracle bound of ``dpverify.statistical.oracle`` reads through ``log_density(x, out)``.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numpy.typing import NDArray

__all__ = ["sparse_vector_log_density", "answer_patterns", "laplace_log_cdf", "laplace_log_sf", "GRID_POINTS"]

#: Points of the integration grid over the threshold noise.
GRID_POINTS: int = 100_001
#: Half-width of the grid in scales of the widest noise, around the kinks.
GRID_SCALES: float = 40.0

ABOVE, BELOW, NOT_ANSWERED = 1, 0, -1


def laplace_log_cdf(z: NDArray, scale: float) -> NDArray:
    """``ln P[Lap(0, scale) ≤ z]``, accurate in both tails."""
    z = np.asarray(z, dtype=np.float64) / scale
    neg = np.minimum(z, 0.0)
    pos = np.maximum(z, 0.0)
    return np.where(z < 0, neg - math.log(2.0), np.log1p(-0.5 * np.exp(-pos)))


def laplace_log_sf(z: NDArray, scale: float) -> NDArray:
    """``ln P[Lap(0, scale) ≥ z]`` (the law is continuous), accurate in both tails."""
    return laplace_log_cdf(-np.asarray(z, dtype=np.float64), scale)


def _laplace_log_pdf(z: NDArray, scale: float) -> NDArray:
    return -math.log(2.0 * scale) - np.abs(np.asarray(z, dtype=np.float64)) / scale


def _consistent(pattern: NDArray, cutoff: int | None) -> bool:
    """Whether an answer pattern can be produced: codes in {−1, 0, 1}; with a cutoff, answers stop exactly after
    the ``cutoff``-th ⊤ (−1 from there on, never before); without one, no −1."""
    if not np.isin(pattern, (ABOVE, BELOW, NOT_ANSWERED)).all():
        return False
    answered = pattern != NOT_ANSWERED
    if cutoff is None:
        return bool(answered.all())
    tops = np.cumsum(pattern == ABOVE)
    # query i is answered iff fewer than `cutoff` ⊤ came before it
    before = np.concatenate([[0], tops[:-1]])
    return bool(np.array_equal(answered, before < cutoff))


def answer_patterns(k: int, cutoff: int | None, limit: int = 100_000) -> NDArray[np.int8]:
    """Every answer pattern an SVT run on ``k`` queries can produce (⊤ = 1, ⊥ = 0, −1 = not answered after the
    ``cutoff``-th ⊤; no −1 without a cutoff), as int8 rows.  Raises ``ValueError`` beyond ``limit`` patterns."""
    rows: list[list[int]] = []

    def extend(prefix: list[int], tops: int) -> None:
        if len(rows) > limit:
            raise ValueError(f"more than {limit} answer patterns")
        if len(prefix) == k:
            rows.append(prefix)
            return
        if cutoff is not None and tops >= cutoff:
            rows.append(prefix + [NOT_ANSWERED] * (k - len(prefix)))
            return
        extend(prefix + [BELOW], tops)
        extend(prefix + [ABOVE], tops + 1)

    extend([], 0)
    return np.array(rows, dtype=np.int8).reshape(len(rows), k)


def _unique_patterns(codes: NDArray) -> tuple[NDArray[np.int64], NDArray[np.intp]]:
    """Distinct rows of ``codes`` and each row's index among them.  Valid codes (−1, 0, 1) of up to 39 queries are
    packed into one base-3 integer per row (a 1-D unique is much faster than a row sort); other rows go through
    ``np.unique(axis=0)``."""
    k = codes.shape[1]
    valid = ((codes >= NOT_ANSWERED) & (codes <= ABOVE)).all()
    if k <= 39 and valid:
        digits = (codes + 1).astype(np.int64)
        packed = digits @ (3 ** np.arange(k, dtype=np.int64))
        keys, first, inverse = np.unique(packed, return_index=True, return_inverse=True)
        return codes[first].astype(np.int64), inverse.reshape(-1)
    patterns, inverse = np.unique(codes.astype(np.int64), axis=0, return_inverse=True)
    return patterns, inverse.reshape(-1)


def _grid(queries: NDArray, threshold: float, scales: tuple[float, ...]) -> NDArray:
    kinks = np.concatenate([[0.0], queries - threshold])
    width = GRID_SCALES * max(scales)
    return np.linspace(kinks.min() - width, kinks.max() + width, GRID_POINTS)


def _log_trapezoid_cumulative(log_f: NDArray, r: NDArray) -> NDArray:
    """``ln ∫_{r_0}^{r_j} f`` for every grid point ``j`` (−inf at ``j = 0``), from ``ln f`` on the grid."""
    top = float(np.max(log_f))
    if not np.isfinite(top):
        return np.full(r.shape, -np.inf)
    f = np.exp(log_f - top)
    steps = 0.5 * (f[1:] + f[:-1]) * np.diff(r)
    cum = np.concatenate([[0.0], np.cumsum(steps)])
    with np.errstate(divide="ignore"):
        return np.log(cum) + top


def _interp_log_cumulative(u: NDArray, r: NDArray, log_cum: NDArray) -> NDArray:
    """``ln ∫_{−∞}^{u} f`` at the points ``u``: linear interpolation of the cumulative log integral, linear
    extrapolation below the grid (the tails of every factor are exponential there) and the total above it."""
    finite = np.flatnonzero(np.isfinite(log_cum))
    if finite.size < 2:
        return np.full(np.shape(u), -np.inf)
    i0, i1 = finite[0], min(finite[0] + 100, finite[-1])
    slope = (log_cum[i1] - log_cum[i0]) / (r[i1] - r[i0])
    out = np.interp(u, r[finite], log_cum[finite])
    below = u < r[i0]
    if below.any():
        out = np.where(below, log_cum[i0] + slope * (u - r[i0]), out)
    return out


def sparse_vector_log_density(
    queries: NDArray,
    out: NDArray,
    *,
    threshold: float,
    threshold_scale: float,
    query_scale: float | None,
    cutoff: int | None,
    output_values: bool = False,
    value_scale: float | None = None,
) -> NDArray[np.float64]:
    """Log density of each output row of an SVT variant on ``queries`` (see the module docstring).

    ``out``: what the sampler returns -- codes ``(n, k)`` or, with ``output_values``, floats ``(n, 2k)`` (codes, then
    the released values, 0.0 where the code is not ⊤).  ``value_scale``: ``None`` when a ⊤ releases its comparison
    value ``q_i + ν_i`` (Lyu Alg. 3), else the Laplace scale of fresh release noise.  Rows no run can produce
    (inconsistent patterns, a value where none is released) get ``−inf``.
    """
    q = np.asarray(queries, dtype=np.float64).reshape(-1)
    k = q.shape[0]
    arr = np.asarray(out, dtype=np.float64)
    width = 2 * k if output_values else k
    arr = arr.reshape(-1, width)
    n = arr.shape[0]
    codes_f = arr[:, :k]
    codes = np.rint(codes_f)
    result = np.full(n, -np.inf)
    ok_rows = (codes == codes_f).all(axis=1)
    values = arr[:, k:] if output_values else None
    if values is not None:
        ok_rows &= ((codes == ABOVE) | (values == 0.0)).all(axis=1)
    patterns, inverse = _unique_patterns(codes)
    if query_scale is None:
        return _no_query_noise(q, patterns, inverse, values, ok_rows, threshold, threshold_scale, cutoff, result)
    alg3 = values is not None and value_scale is None
    needed = [j for j, pattern in enumerate(patterns)
              if _consistent(pattern, cutoff) and not (alg3 and (pattern == ABOVE).any())]
    totals = dict(zip(needed, _pattern_totals(q, patterns[needed], threshold, threshold_scale, query_scale)))
    for j, pattern in enumerate(patterns):
        rows = np.flatnonzero((inverse == j) & ok_rows)
        if rows.size == 0 or not _consistent(pattern, cutoff):
            continue
        above = pattern == ABOVE
        if alg3 and above.any():
            # Alg. 3: the released values pin ν_i and bound r by min_⊤ v_i − T
            v = values[np.ix_(rows, np.flatnonzero(above))]
            r, log_cum = _pattern_integral(tuple(q), tuple(int(a) for a in pattern), float(threshold),
                                           float(threshold_scale), float(query_scale), False)
            dens = _interp_log_cumulative(v.min(axis=1) - threshold, r, log_cum)
            dens += _laplace_log_pdf(v - q[above], query_scale).sum(axis=1)
            result[rows] = dens
            continue
        total = totals[j]
        if values is not None and above.any():
            v = values[np.ix_(rows, np.flatnonzero(above))]
            scale = query_scale if value_scale is None else value_scale
            result[rows] = total + _laplace_log_pdf(v - q[above], scale).sum(axis=1)
        else:
            result[rows] = total
    return result


@functools.lru_cache(maxsize=64)
def _pattern_integral(q: tuple[float, ...], pattern: tuple[int, ...], threshold: float, threshold_scale: float,
                      query_scale: float, with_tops: bool) -> tuple[NDArray, NDArray]:
    """The grid ``r`` and ``ln ∫_{r_0}^{r_j} f_ρ Π_⊥ F_ν(T + r − q_i) [Π_⊤ (1 − F_ν(T + r − q_i))] dr`` on it (the ⊤
    factors with ``with_tops``), cached: an audit's oracle evaluates the same few patterns batch after batch."""
    qa = np.asarray(q)
    r = _grid(qa, threshold, (threshold_scale, query_scale))
    log_f = _laplace_log_pdf(r, threshold_scale)
    for i, a in enumerate(pattern):
        if a == BELOW:
            log_f += laplace_log_cdf(threshold + r - qa[i], query_scale)
        elif a == ABOVE and with_tops:
            log_f += laplace_log_sf(threshold + r - qa[i], query_scale)
    return r, _log_trapezoid_cumulative(log_f, r)


def _pattern_totals(q: NDArray, patterns: NDArray, threshold: float, threshold_scale: float, query_scale: float,
                    chunk: int = 128) -> NDArray[np.float64]:
    """``ln P[pattern]`` of each row of ``patterns`` (⊤ factors included), all at once: the log integrand of a pattern
    is ``ln f_ρ + Σ_⊥ ln F_ν(T + r − q_i) + Σ_⊤ ln(1 − F_ν(T + r − q_i))``, a matrix product of the patterns' ⊥ / ⊤
    indicators with the per-query log factors on the grid (``2^k`` patterns of a variant without cutoff cost one
    product, not ``2^k`` integrals)."""
    if len(patterns) == 0:
        return np.zeros(0)
    r = _grid(q, threshold, (threshold_scale, query_scale))
    log_rho = _laplace_log_pdf(r, threshold_scale)
    z = threshold + r[None, :] - q[:, None]
    log_cdf, log_sf = laplace_log_cdf(z, query_scale), laplace_log_sf(z, query_scale)
    out = np.empty(len(patterns))
    w = np.diff(r)
    for start in range(0, len(patterns), chunk):
        p = patterns[start:start + chunk]
        log_f = log_rho + (p == BELOW).astype(np.float64) @ log_cdf + (p == ABOVE).astype(np.float64) @ log_sf
        top = log_f.max(axis=1, keepdims=True)
        f = np.exp(log_f - top)
        total = (0.5 * (f[:, 1:] + f[:, :-1]) * w).sum(axis=1)
        with np.errstate(divide="ignore"):
            out[start:start + chunk] = np.log(total) + top[:, 0]
    return out


def _no_query_noise(q: NDArray, patterns: NDArray, inverse: NDArray, values: NDArray | None, ok_rows: NDArray,
                    threshold: float, threshold_scale: float, cutoff: int | None, result: NDArray) -> NDArray:
    """Lyu Alg. 5: ⊤ at ``i`` iff ``r ≤ q_i − T``, ⊥ iff ``r > q_i − T``; a pattern is an interval of ρ."""
    for j, pattern in enumerate(patterns):
        rows = np.flatnonzero((inverse == j) & ok_rows)
        if rows.size == 0 or not _consistent(pattern, cutoff):
            continue
        above, below = pattern == ABOVE, pattern == BELOW
        hi = float(np.min(q[above] - threshold)) if above.any() else math.inf
        lo = float(np.max(q[below] - threshold)) if below.any() else -math.inf
        if hi <= lo:
            continue
        mass = _laplace_cdf(hi, threshold_scale) - _laplace_cdf(lo, threshold_scale)
        if mass <= 0.0:
            continue
        dens = np.full(rows.size, math.log(mass))
        if values is not None and above.any():
            v = values[np.ix_(rows, np.flatnonzero(above))]
            dens = np.where((v == q[above]).all(axis=1), dens, -np.inf)
        result[rows] = dens
    return result


def _laplace_cdf(z: float, scale: float) -> float:
    if math.isinf(z):
        return 1.0 if z > 0 else 0.0
    return 0.5 * math.exp(z / scale) if z < 0 else 1.0 - 0.5 * math.exp(-z / scale)
