"""DPM's split-interval size: Algorithm 2 (IntervalSizeEst) and its DP percentile (Lemmas 1-2).

Source: seed 004, "DPM: Clustering Sensitive Data through Separation" (Liebenow, Schütt et al.,
CCS 2024), Sec. 3.5 (Algorithm 2), Sec. 4.2 (Lemma 1: the DP
percentile "applied to distances between neighbouring data points has a sensitivity of 2"; Lemma 2:
Algorithm 2 is ``(ε_int, 0)``-DP), proof of Lemma 1 in App. A.1; both fail for d >= 2
(docs/findings.md F11, F15).

Algorithm 2, as implemented here
--------------------------------
1. **Table** (lines 2-7).  For every ``σ`` in ``sigmas``: draw ``m = int(max(ñ, 2))`` Gaussian
   samples, take the gaps of the sorted samples, their 65th percentile ``p`` (``numpy.percentile``,
   linear interpolation), averaged over ``repetitions`` Monte-Carlo repetitions; ``T[p] = σ``.  The
   table depends only on public quantities (``ñ``, ``d``, ``sigmas``) and on its **own** generator
   seeded with ``table_seed``, never on the mechanism's noise, so it is a fixed public function (the
   authors' code draws it from the global ``np.random`` state, so their β is not reproducible).
2. **Averaged gaps** (line 8): ``A = (1/d) Σ_i Dists(D^(i))`` -- each dimension sorted
   *independently*, the ``j``-th gaps averaged over the dimensions (:func:`averaged_gaps`; length
   ``|D| − 1``).
3. **DP percentile** (line 9): :func:`dp_percentile` of ``A`` at ``p = 0.65`` within the public bounds
   ``(0, b − a)`` (no averaged gap of data in ``[a, b]^d`` exceeds ``b − a``).
4. **Lookup** (lines 10-11): ``σ* = T[closest key to p̃]``, ``β = σ*/2``
   (:meth:`IntervalSizeEst.beta_from_percentile`).

The DP percentile ("DP-PERCENTILE", Du et al. 2020 Alg. 4.3 = Smith 2011's exponential-mechanism
quantile, as implemented by diffprivlib's ``tools.quantile``; our own code, same law)
------------------------------------------------------------------------------------------------
Values are clipped to the bounds ``[lo, hi]``, sorted, and the bounds are added as end points:
``s = (lo, c_(0), …, c_(k−1), hi)``.  The ``k + 1`` intervals ``I_i = [s_i, s_{i+1}]``
(``i = 0..k``; the brief's "k intervals" is one short: ``k`` values and two end points make ``k + 1``)
get utility ``u_i = −|i − p·k|`` and are drawn with probability ``∝ |I_i|·exp(ε u_i/(2Δ))``; the
output is uniform inside the drawn interval.  Equivalently the output has the density
``∝ exp(ε u(v)/(2Δ))`` on ``[lo, hi]`` with ``u(v) = −|#{c < v} − p·k|`` (a point inside ``I_i`` has
exactly ``i`` values below it), i.e. the exponential mechanism over the continuum with the
data-independent Lebesgue base measure; this is why the interval lengths enter the draw and why
``u(v)`` -- a function of the output point, not of the interval index -- is what must have bounded
sensitivity.  :func:`percentile_utility_on_grid` evaluates it on a fixed grid.

*Sensitivity of ``u`` for the values themselves* (Du et al., diffprivlib: 1): adding one value moves
``#{c < v}`` by 0 or 1 and ``k`` by 1, so ``|Δu(v)| ≤ max(p, 1 − p) ≤ 1``; replacing one value moves
``#{c < v}`` by at most 1 at fixed ``k``: again ``≤ 1``.

*On the averaged gaps* (Lemma 1 claims 2): in one dimension adding a point either splits one gap
into two (``#{a < v}`` moves by ``−1..+2``) or appends a gap at an end (``0..+1``), and ``k = |A|``
grows by one, so ``|Δu(v)| ≤ 2`` -- Lemma 1 holds for ``d = 1``.  **For ``d ≥ 2`` it is false**
(docs/findings.md F11, F15): the new point enters every dimension's sort order at
a different rank, so the ``j``-th gaps of different dimensions are re-paired and every entry of ``A``
can change.  Inserting a point at the bottom of dimension 0 and at the top of dimension 1 shifts the
dimension-0 gaps by one index against the dimension-1 gaps; with dimension-0 gaps ``1, 2, …, m`` and
dimension-1 gaps ``m, …, 1`` and the new point a copy of dimension 0's minimum and of dimension 1's
maximum (zero new gaps), every ``A_j`` is ``(m + 1)/2`` before and ``m/2`` after, so
``#{a < (m+1)/2}`` jumps from ``0`` to ``m + 1 = |D|`` -- the largest change possible
(``tests/test_dpm_interval_size.py``).  The utility ``u(v)`` then moves by ``≈ p·|D|``.  The DP
percentile calibrated for ``Δ = 2`` is therefore not ``ε_int``-DP on the averaged gaps for ``d ≥ 2``.
"Exchange" in the proof of Lemma 1 vs. add/remove in Def. 1 is a second (harmless for ``d = 1``)
discrepancy (Sec. 2.3, Sec. 4.2 and App. A.1).

Errata and choices (Sec. 3.5, Sec. 6.4)
---------------------------------------
* **Budget / sensitivity.**  The public code calls diffprivlib ``percentile(A, 65,
  epsilon=0.5·ε_int, bounds=(0, b − a))`` (sensitivity 1 inside diffprivlib): the law
  ``∝ |I|·exp(0.5 ε_int u/2)`` is exactly ours with ``sensitivity=2`` (``ε_int·u/(2·2)``).
  ``sensitivity`` is a parameter: 2 = Lemma 1 / the code (default), 1 = DP-PERCENTILE with ``ε_int``
  unadjusted (what one would write ignoring that the inputs are gaps).
* **``sigmas = [30]``** (Sec. 6.4, §5 item 18): taken literally a single candidate makes Algorithm 2
  return ``β = 15`` on every data set (ε_int spent for nothing); ``sigmas=(30.0,)`` reproduces that.
  The default is the code's grid ``0.5, 1.0, …, 29.5`` (59 values).
* **``ñ`` for the simulation** (§5 item 20): the table samples ``int(max(ñ, 2))`` points (the code uses
  ``int(ñ)``, which fails for ``ñ < 2``).  ``σ`` is a standard deviation (code: ``normal(scale=σ)``).
* **Simulated dimensions** (``table_dims``): ``"code"`` (default) simulates 1-D samples, as the
  authors' code does; ``"paper"`` follows Alg. 2 lines 4-5 literally (``ñ`` points from
  ``N(0, σ² I_d)``, dimension-averaged gaps; ``d`` times the cost).  The table is public either way.
* **``repetitions``**: 30 Monte-Carlo repetitions per σ, the 65th percentiles averaged (the code);
  Alg. 2 has one (``repetitions=1``).
* **Shared draws** (``table_draws="shared"``, what :class:`algorithms.dpm.dpm.DPM` uses): Alg. 2 line 4 samples
  ``X ~ N(0, σ² I)`` for every σ; drawing ``X = σ·Z`` from one standard sample ``Z`` is such a sample for each
  σ (the σ's samples are then correlated, which Alg. 2 does not forbid), and since the gaps and their
  percentile are positively homogeneous, ``T``'s key for σ is exactly ``σ·k₁(ñ)`` with ``k₁`` the key of
  ``σ = 1`` (:func:`unit_gap_percentile`, cached per simulation size).  One simulation instead of
  ``|sigmas|`` (59): this is most of the authors' run time (Sec. 3.6) and it is data-independent.  The
  closest key to ``p̃`` is then the σ closest to ``p̃/k₁``.  ``"independent"`` (default here) draws every σ
  afresh, as the code does.
* **Closest key** (line 10, "approximate equality"): ``argmin |key − p̃|``; an exact tie (a
  probability-zero event) goes to the smaller key.
* **The code's ``except: return 0``** ("Bug in percentile for uci_letters") is not copied: it returns
  ``β = 0`` and DPM then divides by it.  Here the inputs are validated up front (finite data inside
  ``[a, b]^d``, ``ñ`` finite, a valid σ grid) and the interval law is computed in log space, where the
  normaliser is always finite (the last interval ``[max A, b − a]`` or some other has positive
  length); should it ever not be, :class:`ValueError` is raised with the reason instead of returning 0.

Noise steps (:mod:`algorithms.noise`; ``release(x, n, noise)``)
--------------------------------------------------------------
1. ``noise.select("dp-percentile", u, draw, sensitivity=Δ, norm="linf", scale=ε/(2Δ))`` -- the
   interval index of each run; ``u`` the ``(k+1,)`` interval utilities.  The draw weights them by the
   interval lengths (the base measure).  Note that the candidate set (the intervals) itself depends
   on the data (``k + 1`` of them), so two neighbours' utility vectors differ in length; the
   fixed-length view for a sensitivity check is :func:`percentile_utility_on_grid`.
2. ``noise.add("uniform-in-interval", 0.0, draw, sensitivity=inf, norm="linf", kind="other")`` -- the
   uniform position inside the chosen interval.  Given the interval it is data-independent; it
   protects nothing, hence the declared sensitivity ``∞`` ("claims nothing").

Everything after (the table lookup, ``β = σ*/2``) is post-processing.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import ClassVar

import numpy as np
from scipy.special import logsumexp

from ..classic._validation import check_choice, check_epsilon, check_n, check_positive, check_positive_int
from .score import check_bounds
from .split import as_points
from ..noise import NoiseSource

__all__ = [
    "DEFAULT_SIGMAS",
    "DEFAULT_REPETITIONS",
    "DEFAULT_PERCENTILE",
    "TABLE_DIMS",
    "dists",
    "averaged_gaps",
    "gap_rank_counts",
    "percentile_utilities",
    "percentile_utility_on_grid",
    "dp_percentile_law",
    "dp_percentile_cdf",
    "dp_percentile",
    "IntervalSizeEst",
    "unit_gap_percentile",
    "closest_sigma",
]

#: The authors' code's σ grid ``np.arange(0.5, 30, 0.5)`` = 0.5, 1.0, …, 29.5 (59 values).
DEFAULT_SIGMAS: tuple[float, ...] = tuple(float(s) for s in np.arange(0.5, 30, 0.5))
#: Monte-Carlo repetitions per σ in the code's table.
DEFAULT_REPETITIONS: int = 30
#: Alg. 2's percentile (Sec. 3.5: "the 65th percentile").
DEFAULT_PERCENTILE: float = 65.0
#: How the table simulates: 1-D samples (the code) or ``N(0, σ² I_d)`` averaged over dimensions (Alg. 2).
TABLE_DIMS: tuple[str, ...] = ("code", "paper")
#: Whether the table's σ rows share one standard sample (scaled by σ) or are drawn independently.
TABLE_DRAWS: tuple[str, ...] = ("independent", "shared")


# -- gaps ---------------------------------------------------------------------------------------
def _as_data(data: object) -> np.ndarray:
    """``(n,)`` or ``(n, d)`` float64, finite, as ``(n, d)``."""
    x = np.asarray(data, dtype=np.float64)
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2 or x.shape[1] < 1:
        raise ValueError(f"data must have shape (n,) or (n, d) with d >= 1, got {np.shape(data)}")
    if not np.all(np.isfinite(x)):
        raise ValueError("data must be finite (no NaN or infinite coordinates)")
    return x


def dists(column: object) -> np.ndarray:
    """``Dists`` of Alg. 2 (lines 12-14): the gaps ``x_(j+1) − x_(j)`` of the sorted 1-D column,
    length ``n − 1`` (empty for ``n ≤ 1``)."""
    x = np.asarray(column, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"column must be 1-D, got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("column must be finite (no NaN or infinite values)")
    return np.diff(np.sort(x))


def averaged_gaps(data: object) -> np.ndarray:
    """``A = (1/d) Σ_i Dists(D^(i))`` (Alg. 2 line 8): every dimension sorted independently, the
    ``j``-th gaps averaged over the ``d`` dimensions (the code's ``np.sum(gaps, axis=1)/d``).

    ``data``: ``(n,)`` (scalar records, ``d = 1``) or ``(n, d)``.  Output: ``(max(n − 1, 0),)``.
    """
    x = _as_data(data)
    if x.shape[0] <= 1:
        return np.empty(0, dtype=np.float64)
    gaps = np.diff(np.sort(x, axis=0), axis=0)
    return np.sum(gaps, axis=1) / x.shape[1]


def _as_thresholds(thresholds: object, name: str = "thresholds") -> np.ndarray:
    v = np.asarray(thresholds, dtype=np.float64)
    if v.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array, got shape {v.shape}")
    if np.any(np.isnan(v)):
        raise ValueError(f"{name} must not contain NaN")
    return v


def gap_rank_counts(data: object, thresholds: object) -> np.ndarray:
    """``#{a ∈ A : a < v}`` for every threshold ``v`` (``A`` = :func:`averaged_gaps` of ``data``).

    This is the rank the DP percentile's utility depends on: a point ``v`` of the output range lies in
    the interval with exactly this many values below it.  Output: int64, ``(len(thresholds),)`` --
    fixed length, so neighbouring data sets are comparable entry by entry (Lemma 1 claims the entries
    move by at most 2; true for ``d = 1``, false for ``d ≥ 2``, see the module docstring).
    """
    a = np.sort(averaged_gaps(data))
    v = _as_thresholds(thresholds)
    return np.searchsorted(a, v, side="left").astype(np.int64)


# -- the DP percentile --------------------------------------------------------------------------
def _check_p(p: object) -> float:
    if not isinstance(p, numbers.Real) or isinstance(p, bool) or not (0.0 <= float(p) <= 1.0):
        raise ValueError(f"p (the quantile) must be a real number in [0, 1], got {p!r}")
    return float(p)


def _as_values(values: object) -> np.ndarray:
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 1:
        raise ValueError(f"values must be 1-D, got shape {v.shape}")
    if not np.all(np.isfinite(v)):
        raise ValueError("values must be finite (no NaN or infinite values)")
    return v


def percentile_utilities(values: object, p: float, bounds: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """The DP percentile's candidate intervals and utilities (Smith 2011; diffprivlib ``quantile``).

    ``values`` are clipped to ``bounds = (lo, hi)`` and sorted; the bounds are appended as end points.
    Returns ``(edges, utilities)``: ``edges`` of shape ``(k + 2,)`` (``k = len(values)``), interval
    ``i = [edges[i], edges[i+1]]`` for ``i = 0..k``, and ``utilities[i] = −|i − p·k|``, shape ``(k + 1,)``.

    Sensitivity for the values themselves: ``≤ max(p, 1 − p) ≤ 1`` under add/remove and under replace,
    in the sense of the utility ``u(v) = −|#{c < v} − p·k|`` of each fixed output point ``v`` (module
    docstring); the interval *index* is not a fixed candidate across neighbours.
    """
    p = _check_p(p)
    lo, hi = check_bounds(bounds)
    v = np.clip(_as_values(values), lo, hi)
    k = v.size
    edges = np.concatenate(([lo], np.sort(v), [hi]))
    utilities = -np.abs(np.arange(k + 1, dtype=np.float64) - p * k)
    return edges, utilities


def percentile_utility_on_grid(data: object, p: float, bounds: tuple[float, float], grid: object) -> np.ndarray:
    """``u(v) = −|#{clip(a) < v} − p·k|`` at every grid point ``v ∈ [lo, hi]``: the utility of the
    interval containing ``v`` (intervals taken as ``(s_i, s_{i+1}]``, the first one closed), computed
    from the averaged gaps ``A`` of ``data`` (``k = |A|``).

    A function of the data set with a fixed output length, for sensitivity checks: Lemma 1 claims
    ``max_v |u_D(v) − u_{D'}(v)| ≤ 2`` for add/remove neighbours (the reason the code halves ``ε_int``).
    """
    p = _check_p(p)
    lo, hi = check_bounds(bounds)
    g = _as_thresholds(grid, "grid")
    if np.any((g < lo) | (g > hi)):
        raise ValueError(f"grid points must lie inside bounds [{lo!r}, {hi!r}]")
    a = np.sort(np.clip(averaged_gaps(data), lo, hi))
    r = np.searchsorted(a, g, side="left")
    return -np.abs(r - p * a.size)


def _check_sensitivity(sensitivity: object) -> float:
    return check_positive("sensitivity", sensitivity)


def _interval_log_weights(values: object, p: float, epsilon: float, bounds: tuple[float, float],
                          sensitivity: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(edges, utilities, log_probs)`` of the interval draw, normalised in log space."""
    epsilon = check_epsilon(epsilon)
    sensitivity = _check_sensitivity(sensitivity)
    edges, utilities = percentile_utilities(values, p, bounds)
    widths = np.diff(edges)
    with np.errstate(divide="ignore"):
        logw = epsilon * utilities / (2.0 * sensitivity) + np.log(widths)
    norm = logsumexp(logw)
    if not np.isfinite(norm):
        raise ValueError(
            "the DP percentile's interval weights cannot be normalised (log normaliser "
            f"{norm!r}); the authors' code returns beta = 0 here ('Bug in percentile'), this raises instead"
        )
    return edges, utilities, logw - norm


def dp_percentile_law(values: object, p: float, epsilon: float, bounds: tuple[float, float],
                      sensitivity: float = 2.0) -> tuple[np.ndarray, np.ndarray]:
    """Exact law of the interval draw: ``(edges, probs)``, ``probs[i] ∝ |I_i|·exp(ε u_i/(2Δ))``
    (zero for zero-length intervals); the output is uniform inside the interval."""
    edges, _, logp = _interval_log_weights(values, p, epsilon, bounds, sensitivity)
    return edges, np.exp(logp)


def dp_percentile_cdf(values: object, p: float, epsilon: float, bounds: tuple[float, float],
                      points: object, sensitivity: float = 2.0) -> np.ndarray:
    """Exact CDF ``Pr[p̃ ≤ v]`` of :func:`dp_percentile` at every ``v`` in ``points``."""
    edges, probs = dp_percentile_law(values, p, epsilon, bounds, sensitivity)
    v = _as_thresholds(points, "points")
    widths = np.diff(edges)
    left = edges[:-1]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        frac = np.where(widths > 0, np.clip((v[:, None] - left) / widths, 0.0, 1.0),
                        (v[:, None] >= left).astype(np.float64))
    return np.clip(frac @ probs, 0.0, 1.0)


def dp_percentile(values: object, p: float, epsilon: float, bounds: tuple[float, float], n: int,
                  noise: NoiseSource, sensitivity: float = 2.0) -> np.ndarray:
    """``n`` independent draws of the DP ``p``-quantile of ``values`` within ``bounds`` (Du et al.
    2020 Alg. 4.3 / Smith 2011 / diffprivlib ``quantile``): an interval with probability
    ``∝ |I_i|·exp(ε u_i/(2Δ))``, then a uniform point inside it.  ``p ∈ [0, 1]`` (0.65 for Alg. 2).

    ``sensitivity`` is the ``Δ`` of the utility: 2 as Lemma 1 claims for gaps (diffprivlib with
    ``ε/2``), 1 for plain values.  Two noise steps (module docstring).  Output: float64 ``(n,)``.
    """
    n = check_n(n)
    sensitivity = _check_sensitivity(sensitivity)
    edges, utilities, logp = _interval_log_weights(values, p, epsilon, bounds, sensitivity)
    cdf = np.cumsum(np.exp(logp))
    total = float(cdf[-1])

    def choose(rng: np.random.Generator) -> np.ndarray:
        # inverse CDF: index i with cdf[i-1] <= U·total < cdf[i]; never a zero-probability interval
        return np.searchsorted(cdf, rng.random(n) * total, side="right").astype(np.int64)

    idx = noise.select("dp-percentile", utilities, choose, sensitivity=sensitivity, norm="linf",
                       scale=float(epsilon) / (2.0 * sensitivity))
    idx = np.minimum(np.asarray(idx, dtype=np.int64), utilities.size - 1)
    u = noise.add("uniform-in-interval", 0.0, lambda rng: rng.random(n), sensitivity=math.inf,
                  norm="linf", kind="other")
    widths = np.diff(edges)
    return edges[idx] + widths[idx] * np.asarray(u, dtype=np.float64)


# -- the public lookup table ---------------------------------------------------------------------
def _simulated_gap_percentile(rng: np.random.Generator, m: int, reps: int, q: float, sigma: float,
                              d: int, table_dims: str) -> float:
    """Mean over ``reps`` repetitions of the ``q``-th percentile of the gaps of ``m`` samples of
    ``N(0, σ²)`` (``table_dims="code"``) or of the dimension-averaged gaps of ``N(0, σ² I_d)`` ("paper")."""
    if table_dims == "code":
        x = np.sort(rng.normal(0.0, sigma, size=(m, reps)), axis=0)
        gaps = np.diff(x, axis=0)                                    # (m-1, reps)
    else:
        x = np.sort(rng.normal(0.0, sigma, size=(m, reps, d)), axis=0)
        gaps = np.sum(np.diff(x, axis=0), axis=2) / d                # (m-1, reps)
    return float(np.mean(np.percentile(gaps, q, axis=0)))


@lru_cache(maxsize=512)
def unit_gap_percentile(m: int, repetitions: int = DEFAULT_REPETITIONS, percentile: float = DEFAULT_PERCENTILE,
                        d: int = 1, table_dims: str = "code", table_seed: int = 0) -> float:
    """``k₁(m)``: the table key of ``σ = 1`` for simulation size ``m`` (shared draws; the key of σ is
    ``σ·k₁(m)``).  Data-independent and deterministic: its generator is seeded by ``(table_seed, m)``.
    Cached, so repeated runs with the same ``m = int(max(ñ, 2))`` simulate once."""
    m = max(int(m), 2)
    check_choice("table_dims", table_dims, TABLE_DIMS)
    rng = np.random.default_rng([int(table_seed), m])
    return _simulated_gap_percentile(rng, m, int(repetitions), float(percentile), 1.0, int(d), table_dims)


def closest_sigma(ratio: np.ndarray, sigmas: tuple[float, ...]) -> np.ndarray:
    """The σ of ``sigmas`` closest to each ``ratio = p̃/k₁`` (Alg. 2 line 10 with shared draws: the closest
    key ``σ·k₁`` to ``p̃``); exact ties go to the smaller σ.  Vectorised."""
    sig = np.sort(np.asarray(sigmas, dtype=np.float64))
    r = np.asarray(ratio, dtype=np.float64)
    if np.any(np.isnan(r)):
        raise ValueError("p_tilde must not be NaN")
    j = np.searchsorted(sig, r, side="left")
    hi = np.minimum(j, sig.size - 1)
    lo = np.maximum(j - 1, 0)
    take_hi = (sig[hi] - r) < (r - sig[lo])
    return np.where(take_hi, sig[hi], sig[lo])


# -- Algorithm 2 --------------------------------------------------------------------------------
def _check_sigmas(sigmas: object) -> tuple[float, ...]:
    try:
        arr = np.asarray(sigmas, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"sigmas must be a non-empty 1-D sequence of numbers, got {sigmas!r}") from None
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"sigmas must be a non-empty 1-D sequence of numbers, got {sigmas!r}")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0.0):
        raise ValueError(f"sigmas must be finite and > 0, got {sigmas!r}")
    if np.unique(arr).size != arr.size:
        raise ValueError(f"sigmas must not repeat a value, got {sigmas!r}")
    return tuple(float(s) for s in arr)


@dataclass(frozen=True)
class IntervalSizeEst:
    """Algorithm 2 (IntervalSizeEst, seed 004 Sec. 3.5): ``β = ½·T[DP-percentile₆₅(A)]``.

    ``epsilon`` is ``ε_int``; ``n_tilde`` the noisy count ``ñ_D`` (public: released earlier, Alg. 1
    line 7); ``bounds`` the public range ``R = [a, b]`` of every dimension; ``d`` the dimension;
    ``sigmas`` the σ grid (default: the code's 0.5…29.5); ``repetitions`` Monte-Carlo repetitions per σ;
    ``percentile`` in ``(0, 100)``; ``sensitivity`` the DP percentile's ``Δ`` (2: Lemma 1 and the code's
    ``0.5·ε_int``; 1: unadjusted); ``table_seed`` seeds the table's own generator; ``table_dims``
    ``"code"`` (1-D simulation) or ``"paper"`` (``N(0, σ² I_d)``).  Output of the sampler: float64
    ``(n,)``, values in ``{σ/2 : σ ∈ sigmas}``.  Claimed: ``(ε_int, 0)``-DP (Lemma 2) under add/remove --
    sound for ``d = 1``, not for ``d ≥ 2`` (module docstring).
    """

    epsilon: float
    n_tilde: float
    bounds: tuple[float, float] = (0.0, 1.0)
    d: int = 1
    sigmas: tuple[float, ...] = DEFAULT_SIGMAS
    repetitions: int = DEFAULT_REPETITIONS
    percentile: float = DEFAULT_PERCENTILE
    sensitivity: float = 2.0
    table_seed: int = 0
    table_dims: str = "code"
    table_draws: str = "independent"
    delta: ClassVar[float] = 0.0

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        if (not isinstance(self.n_tilde, numbers.Real) or isinstance(self.n_tilde, bool)
                or not math.isfinite(float(self.n_tilde))):
            raise ValueError(f"n_tilde (the noisy count) must be a finite real number, got {self.n_tilde!r}")
        object.__setattr__(self, "bounds", check_bounds(self.bounds))
        check_positive_int("d", self.d)
        object.__setattr__(self, "sigmas", _check_sigmas(self.sigmas))
        check_positive_int("repetitions", self.repetitions)
        pct = self.percentile
        if not isinstance(pct, numbers.Real) or isinstance(pct, bool) or not 0.0 < float(pct) < 100.0:
            raise ValueError(f"percentile must be a real number in (0, 100), got {pct!r}")
        _check_sensitivity(self.sensitivity)
        if not isinstance(self.table_seed, numbers.Integral) or isinstance(self.table_seed, bool) \
                or int(self.table_seed) < 0:
            raise ValueError(f"table_seed must be an integer >= 0, got {self.table_seed!r}")
        check_choice("table_dims", self.table_dims, TABLE_DIMS)
        check_choice("table_draws", self.table_draws, TABLE_DRAWS)

    # -- the public lookup table (lines 2-7) ------------------------------------------------------
    @property
    def simulation_size(self) -> int:
        """``int(max(ñ, 2))``: the number of simulated points per repetition."""
        return int(max(float(self.n_tilde), 2.0))

    @cached_property
    def _table(self) -> tuple[np.ndarray, np.ndarray]:
        m, reps, q, d = self.simulation_size, int(self.repetitions), float(self.percentile), int(self.d)
        sig = np.asarray(self.sigmas, dtype=np.float64)
        if self.table_draws == "shared":
            keys = sig * unit_gap_percentile(m, reps, q, d, self.table_dims, int(self.table_seed))
        else:
            rng = np.random.default_rng(int(self.table_seed))
            keys = np.array([_simulated_gap_percentile(rng, m, reps, q, s, d, self.table_dims) for s in self.sigmas])
        keys.setflags(write=False)
        sig.setflags(write=False)
        return keys, sig

    def table(self) -> tuple[np.ndarray, np.ndarray]:
        """``(keys, sigmas)``: ``T[keys[i]] = sigmas[i]`` (σ order).  Built once per object from its own
        generator (``table_seed``): a public, data-independent function of ``(ñ, d, sigmas, …)``."""
        keys, sig = self._table
        return keys.copy(), sig.copy()

    def beta_from_percentile(self, p_tilde: float | np.ndarray) -> np.ndarray:
        """``β = T[closest key to p̃]/2`` (Alg. 2 lines 10-11); exact ties go to the smaller key.
        Vectorised; returns float64 of the shape of ``p_tilde``."""
        keys, sig = self._table
        p = np.asarray(p_tilde, dtype=np.float64)
        if np.any(np.isnan(p)):
            raise ValueError("p_tilde must not be NaN")
        order = np.argsort(keys, kind="stable")
        sk = keys[order]
        j = np.searchsorted(sk, p, side="left")
        hi = np.minimum(j, sk.size - 1)
        lo = np.maximum(j - 1, 0)
        take_hi = (sk[hi] - p) < (p - sk[lo])
        pick = np.where(take_hi, hi, lo)
        return sig[order][pick] / 2.0

    # -- the data-dependent part (lines 8-9) -------------------------------------------------------
    def percentile_bounds(self) -> tuple[float, float]:
        """``(0, b − a)``: the public range of an averaged gap of data in ``[a, b]^d``."""
        a, b = self.bounds
        return 0.0, b - a

    def gaps(self, x: object) -> np.ndarray:
        """``A`` of the validated data set ``x`` (finite, inside ``[a, b]^d``)."""
        return averaged_gaps(as_points(x, int(self.d), self.bounds))

    def utility_on_grid(self, x: object, grid: object) -> np.ndarray:
        """:func:`percentile_utility_on_grid` of ``x`` with this object's quantile and bounds."""
        return percentile_utility_on_grid(as_points(x, int(self.d), self.bounds), float(self.percentile) / 100.0,
                                          self.percentile_bounds(), grid)

    def percentile_law(self, x: object) -> tuple[np.ndarray, np.ndarray]:
        """Exact law of ``p̃`` on ``x``: ``(edges, interval probabilities)`` (:func:`dp_percentile_law`)."""
        return dp_percentile_law(self.gaps(x), float(self.percentile) / 100.0, float(self.epsilon),
                                 self.percentile_bounds(), float(self.sensitivity))

    def beta_pmf(self, x: object) -> tuple[np.ndarray, np.ndarray]:
        """Exact output law on ``x``: ``(betas, probs)`` with ``betas = sigmas/2`` (σ order).

        ``Pr[β = σ_i/2] = F(hi_i) − F(lo_i)``, ``F`` the CDF of ``p̃`` and ``(lo_i, hi_i]`` the set of
        ``p̃`` whose closest key is ``keys[i]`` (midpoints between consecutive sorted keys).
        """
        keys, sig = self._table
        order = np.argsort(keys, kind="stable")
        sk = keys[order]
        mids = (sk[:-1] + sk[1:]) / 2.0
        cdf = dp_percentile_cdf(self.gaps(x), float(self.percentile) / 100.0, float(self.epsilon),
                                self.percentile_bounds(), mids, float(self.sensitivity))
        cum = np.concatenate(([0.0], cdf, [1.0]))
        probs_sorted = np.clip(np.diff(cum), 0.0, 1.0)
        probs = np.empty_like(probs_sorted)
        probs[order] = probs_sorted
        return sig / 2.0, probs

    def log_pmf(self, x: object) -> tuple[np.ndarray, np.ndarray]:
        """The exact law of β in the form ``dpverify``'s exact checks read: ``(betas, log_probs)``."""
        betas, probs = self.beta_pmf(x)
        with np.errstate(divide="ignore"):
            return betas, np.log(probs)

    # -- samplers ----------------------------------------------------------------------------------
    def __call__(self, x: object, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.release(x, n, NoiseSource(rng))

    def release(self, x: object, n: int, noise: NoiseSource) -> np.ndarray:
        """``n`` independent β values on ``x``: the DP percentile's two noise steps
        (:func:`dp_percentile`), then the table lookup (post-processing)."""
        n = check_n(n)
        a = self.gaps(x)
        p_tilde = dp_percentile(a, float(self.percentile) / 100.0, float(self.epsilon), self.percentile_bounds(),
                                n, noise, sensitivity=float(self.sensitivity))
        return self.beta_from_percentile(p_tilde)
