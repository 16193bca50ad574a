"""DPM split scores: candidates, emptiness, centreness, score and its sensitivity.

Source: seed 004, "DPM: Clustering Sensitive Data through Separation" (Liebenow, Schütt et al.,
CCS 2024), Sec. 3.1-3.4, Definitions 5-7, Algorithm 1 lines 9 and
21-25, Lemmas 3-5 (Sec. 4.3.1, proofs A.2-A.4); docs/findings.md F12.

Every function here is pure and vectorised over the candidates: a data column is sorted once and
all candidates are looked up with :func:`numpy.searchsorted` (``O((n + |W|) log n)`` per column).

Conventions and the ambiguities they resolve
--------------------------------------------
* **Candidates** (Sec. 3.1, Alg. 1 line 9).  ``K = floor((b − a)/β)`` intervals per
  dimension (the paper does not say how ``(b−a)/β`` is rounded; the authors' code uses ``int(...)``,
  i.e. floor, with no tolerance — so ``(b−a)/β = 0.3/0.1 = 2.9999999999999996`` gives ``K = 2``,
  exactly as the code does).  Candidate ``(i, k)`` sits at ``s = a + (k + 0.5)·β`` (the interval
  centre; Alg. 1 line 25 omits ``a``).  The range ``[a + Kβ, b]`` left over by the floor holds no
  candidate.  One range ``R = [a, b]`` is shared by all dimensions (Sec. 2.1).
* **Candidate index** (Alg. 1 lines 23-25).  Dimension-major: ``index = i·K + k``, decoded as
  ``i = index // K``, ``k = index mod K`` (:func:`decode_candidates`).  The printed decoding
  ``d* = ⌊d·numSplits / i*⌋``, ``s* = ((d·numSplits mod i*) + 0.5)·β`` is wrong
  (its ``/`` and ``mod`` are swapped); this is the authors' code's decoding.
* **Emptiness** (Def. 5).  ``|s|`` counts the points in the **closed** interval
  ``[s − β/2, s + β/2]`` (computed literally as ``s ∓ 0.5·β`` in floating point), so a point on the
  boundary shared by two neighbouring candidates counts in both.  (The authors' code instead uses
  half-open ``fast_histogram`` bins of width ``(b−a)/K ≥ β``.)
  ``e = 1 − |s|/ñ`` is **not clipped** by default, as in Def. 5; ``clip=True`` clips to ``[0, 1]``
  like the authors' code.  Clipping is 1-Lipschitz, so Lemma 4's ``Δ_e = 1/ñ`` holds either way.
* **Centreness** (Def. 6).  Rank ``r = #{x ∈ S^(i) : x < s}``, the *left* insertion index
  (``np.searchsorted(sorted, s, side="left")``, as in the code; the paper has no tie rule).  The
  outer formula is used when ``|ñ/2 − r| ≥ ñ/2 − ñq`` (the code's test; at the boundary both formulas
  give ``t``, so the choice is immaterial), the inner one otherwise.  Def. 6 covers only
  ``r ∈ [0, ñ]``; with this test a rank ``r > ñ`` (possible whenever ``ñ < |S|``) takes the outer
  formula and gets a *negative* centreness ``(ñ − r)·t/(ñq)`` (Def. 6 leaves ``r > ñ`` undefined).  The
  function is continuous and piecewise linear in ``r`` with slopes ``±t/(ñq)`` (outer) and
  ``±2(1−t)/(ñ(1−2q))`` (inner).
* **Parameter validity** (Def. 6: "t, q are valid if t ≥ 2q > 0").  :func:`check_parameters` also
  requires ``t ≤ 1`` (so ``q < 1/2``): Lemma 3's proof needs the inner slope to be at most the outer
  one, ``2|1 − t|q ≤ t(1 − 2q)``, which ``t ≥ 2q`` guarantees only for ``t ≤ 1`` (e.g. ``q = 0.3,
  t = 4`` satisfies Def. 6 but has inner slope ``15/ñ > 40/(3ñ)`` = outer slope), and ``q = 1/2``
  makes the inner formula ``0/0``.  Sec. 3.2 says the minimum inner score is ``1 − t``; by the
  formula it is ``t`` (at ``r = ñq``).
* **Score** (Def. 7): ``f = c + α·e``.
* **Sensitivity** (Lemma 5): ``Δ_f = (t/q + α)/(ñ − λ)`` for add/remove neighbours (Def. 1) with
  ``ñ`` held fixed for both data sets, as in the proofs of Lemmas 3-5.  Adding one point moves every
  rank by 0 or +1 and every count by 0 or +1, so each candidate's score changes by a value in
  ``[−(t/q + α)/ñ, +t/(ñq)]`` (an *increase* can only come from the centreness): the bound holds
  for every ``λ ∈ [0, ñ)``; ``λ`` only makes it more conservative (docs/findings.md F12).  ``ñ − λ ≤ 0``
  leaves the paper's ``Δ_f`` undefined (Sec. 3.3, Def. 8).

Defaults (Sec. 5.2, 6.4): ``t = 0.3``, ``q = 1/12``, ``α = 5`` (so ``t/q + α = 8.6``).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = [
    "DEFAULT_T",
    "DEFAULT_Q",
    "DEFAULT_ALPHA",
    "check_parameters",
    "check_bounds",
    "n_splits",
    "split_candidates",
    "decode_candidates",
    "interval_counts",
    "ranks",
    "emptiness_from_count",
    "centreness_from_rank",
    "emptiness",
    "centreness",
    "score",
    "score_sensitivity",
]

DEFAULT_T: float = 0.3
DEFAULT_Q: float = 1.0 / 12.0
DEFAULT_ALPHA: float = 5.0


# -- validation ---------------------------------------------------------------------------------
def _real(name: str, value: object) -> float:
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or not math.isfinite(float(value)):
        raise ValueError(f"{name} must be a finite real number, got {value!r}")
    return float(value)


def _positive(name: str, value: object) -> float:
    v = _real(name, value)
    if v <= 0.0:
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    return v


def check_parameters(
    t: float,
    q: float,
    alpha: float,
    n_tilde: float | None = None,
    beta: float | None = None,
    lam: float | None = None,
) -> None:
    """Validate the score parameters; raise :class:`ValueError` naming the violated rule.

    * ``t ≥ 2q > 0`` -- Def. 6 ("t, q are valid parameters if t ≥ 2q > 0"; Sec. 3.2: the inner
      slope must not exceed the outer one), plus ``t ≤ 1`` (see the module docstring: without it
      Def. 6's rule does not imply Lemma 3);
    * ``α > 0`` -- Def. 7;
    * ``ñ > 0`` and finite (Defs. 5-6 say ``ñ ∈ ℕ_+``; any positive real is accepted here, as in the
      authors' code, which keeps ``ñ`` as a float);
    * ``β > 0`` and finite; ``λ ≥ 0`` and finite (Def. 8 has ``λ > 0``; ``0`` means no offset; a
      negative offset would make ``Δ_f`` smaller than the true sensitivity).
    """
    t = _real("t", t)
    q = _real("q", q)
    if not (t >= 2.0 * q > 0.0):
        raise ValueError(
            f"centreness parameters must satisfy t >= 2q > 0 (seed 004 Def. 6 validity; Lemma 3 needs the "
            f"inner slope <= the outer slope), got t={t!r}, q={q!r} (2q={2.0 * q!r})"
        )
    if t > 1.0:
        raise ValueError(
            f"centreness parameter t must be <= 1 (the inner centreness then rises to 1 at the median and "
            f"t >= 2q implies Lemma 3's slope condition), got t={t!r}"
        )
    _positive("alpha", alpha)
    if n_tilde is not None:
        _positive("n_tilde (the noisy count)", n_tilde)
    if beta is not None:
        _positive("beta (the split interval size)", beta)
    if lam is not None:
        lam_v = _real("lam (the offset lambda)", lam)
        if lam_v < 0.0:
            raise ValueError(f"lam (the offset lambda) must be >= 0 (seed 004 Def. 8), got {lam!r}")


def check_bounds(bounds: tuple[float, float]) -> tuple[float, float]:
    """The public range ``R = [a, b]`` shared by all dimensions (Sec. 2.1): finite ``a < b``."""
    try:
        a, b = bounds
    except (TypeError, ValueError):
        raise ValueError(f"bounds must be a pair (a, b), got {bounds!r}") from None
    a = _real("bounds[0] (a)", a)
    b = _real("bounds[1] (b)", b)
    if not a < b:
        raise ValueError(f"bounds must satisfy a < b, got {bounds!r}")
    return a, b


# -- candidates ---------------------------------------------------------------------------------
def n_splits(bounds: tuple[float, float], beta: float) -> int:
    """``K = numSplits = floor((b − a)/β)`` (Alg. 1 line 9; floor as in the authors' code)."""
    a, b = check_bounds(bounds)
    if isinstance(beta, bool) or not isinstance(beta, numbers.Real) or not (float(beta) > 0.0) \
            or not math.isfinite(float(beta)):
        raise ValueError(f"beta (the split interval size) must be finite and > 0, got {beta!r}")
    k = math.floor((b - a) / float(beta))
    if k < 1:
        raise ValueError(
            f"beta={beta!r} is wider than the range [{a!r}, {b!r}]: floor((b - a)/beta) = {k} < 1 split "
            f"candidate per dimension"
        )
    return int(k)


def split_candidates(bounds: tuple[float, float], beta: float, d: int) -> tuple[np.ndarray, np.ndarray]:
    """All split candidates ``W`` (Sec. 3.1, Alg. 1 lines 9, 23-25), dimension-major.

    Returns ``(dims, positions)``, both of length ``d·K`` with ``K = floor((b − a)/β)``: candidate
    ``index = i·K + k`` is in dimension ``dims[index] = i`` at ``positions[index] = a + (k + 0.5)·β``.
    """
    if isinstance(d, bool) or not isinstance(d, numbers.Integral) or int(d) < 1:
        raise ValueError(f"d (the number of dimensions) must be an integer >= 1, got {d!r}")
    k = n_splits(bounds, beta)
    a, _ = check_bounds(bounds)
    dims = np.repeat(np.arange(int(d), dtype=np.int64), k)
    positions = np.tile(a + (np.arange(k, dtype=np.float64) + 0.5) * float(beta), int(d))
    return dims, positions


def decode_candidates(
    index: np.ndarray | int, bounds: tuple[float, float], beta: float, d: int
) -> tuple[np.ndarray, np.ndarray]:
    """Decode candidate indices into ``(dimension, position)`` (the corrected Alg. 1 lines 24-25):
    ``i = index // K``, ``s = a + ((index mod K) + 0.5)·β``."""
    k = n_splits(bounds, beta)
    a, _ = check_bounds(bounds)
    idx = np.asarray(index)
    if idx.dtype.kind not in "iu":
        raise ValueError(f"candidate indices must be integers, got dtype {idx.dtype}")
    if idx.size and (idx.min() < 0 or idx.max() >= int(d) * k):
        raise ValueError(f"candidate indices must lie in [0, {int(d) * k}), got {index!r}")
    idx = idx.astype(np.int64)
    return idx // k, a + ((idx % k) + 0.5) * float(beta)


# -- per-candidate statistics -------------------------------------------------------------------
def _column(column: object, presorted: bool) -> np.ndarray:
    col = np.asarray(column, dtype=np.float64)
    if col.ndim != 1:
        raise ValueError(f"a data column must be 1-D, got shape {col.shape}")
    return col if presorted else np.sort(col)


def interval_counts(sorted_column: np.ndarray, positions: np.ndarray, beta: float) -> np.ndarray:
    """``|s| = #{x : s − β/2 ≤ x ≤ s + β/2}`` (Def. 5, closed interval) for each position; int64.
    ``sorted_column`` must be sorted ascending."""
    pos = np.asarray(positions, dtype=np.float64)
    half = 0.5 * float(beta)
    hi = np.searchsorted(sorted_column, pos + half, side="right")
    lo = np.searchsorted(sorted_column, pos - half, side="left")
    return (hi - lo).astype(np.int64)


def ranks(sorted_column: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Rank ``r(s, S) = #{x ∈ S : x < s}`` (Sec. 2.1, left insertion index); int64."""
    return np.searchsorted(sorted_column, np.asarray(positions, dtype=np.float64), side="left").astype(np.int64)


def emptiness_from_count(count: np.ndarray, n_tilde: float, clip: bool = False) -> np.ndarray:
    """``e = 1 − |s|/ñ`` (Def. 5); clipped to ``[0, 1]`` when ``clip`` (the authors' code)."""
    e = 1.0 - np.asarray(count, dtype=np.float64) / float(n_tilde)
    return np.clip(e, 0.0, 1.0) if clip else e


def centreness_from_rank(r: np.ndarray, n_tilde: float, t: float, q: float, *, validate: bool = True) -> np.ndarray:
    """Def. 6 as a function of the rank ``r`` (any real ``r ≥ 0``).

    Outer formula ``(ñ/2 − |r − ñ/2|)·t/(ñq)`` when ``|ñ/2 − r| ≥ ñ/2 − ñq`` (this includes every
    ``r > ñ``, where it is negative), inner formula
    ``(t − 2q)/(1 − 2q) + (ñ/2 − |r − ñ/2|)·(1 − t)/(ñ/2 − ñq)`` otherwise.
    Values: ``c(0) = c(ñ) = 0``, ``c(ñq) = t``, ``c(ñ/2) = 1``.  ``validate=False`` skips the validity rules
    of :func:`check_parameters` (to study invalid regimes such as ``t < 2q``; ``0 < q < 1/2`` and ``ñ > 0`` are
    still needed for the formula to be defined).  With ``validate=False`` ``n_tilde`` may also be an array
    broadcast against ``r`` (one ñ per node, as :class:`algorithms.dpm.dpm.DPM` scores all nodes at once).
    """
    if validate:
        check_parameters(t, q, 1.0, n_tilde=n_tilde)
    elif not (0.0 < float(q) < 0.5 and np.all(np.asarray(n_tilde, dtype=np.float64) > 0.0)):
        raise ValueError(f"the centreness formula needs 0 < q < 1/2 and n_tilde > 0, got q={q!r}, n_tilde={n_tilde!r}")
    r = np.asarray(r, dtype=np.float64)
    n = np.asarray(n_tilde, dtype=np.float64)         # a scalar, or one ñ per row broadcast against r
    half = 0.5 * n
    nq = n * float(q)
    dist = np.abs(r - half)
    core = half - dist
    outer = dist >= half - nq
    c_outer = core * float(t) / nq
    c_inner = (float(t) - 2.0 * float(q)) / (1.0 - 2.0 * float(q)) + core * (1.0 - float(t)) / (half - nq)
    return np.where(outer, c_outer, c_inner)


def emptiness(
    column: object,
    positions: object,
    beta: float,
    n_tilde: float,
    *,
    clip: bool = False,
    presorted: bool = False,
) -> np.ndarray:
    """Emptiness ``e_β(S, ñ, s) = 1 − |s|/ñ`` (Def. 5) of each position for one data column.

    ``|s|`` counts the closed interval ``[s − β/2, s + β/2]``; ``clip=True`` clips ``e`` to
    ``[0, 1]`` (the authors' code; not in the paper).  ``presorted=True`` skips sorting ``column``.
    """
    _positive("beta (the split interval size)", beta)
    _positive("n_tilde (the noisy count)", n_tilde)
    col = _column(column, presorted)
    return emptiness_from_count(interval_counts(col, positions, beta), n_tilde, clip)


def centreness(
    column: object,
    positions: object,
    n_tilde: float,
    t: float = DEFAULT_T,
    q: float = DEFAULT_Q,
    *,
    presorted: bool = False,
) -> np.ndarray:
    """Centreness ``c_{t,q}(S, ñ, s)`` (Def. 6) of each position for one data column; rank by left
    insertion (:func:`ranks`), branches as in :func:`centreness_from_rank`."""
    col = _column(column, presorted)
    return centreness_from_rank(ranks(col, positions), n_tilde, t, q)


def score(
    data: object,
    dims: object,
    positions: object,
    beta: float,
    n_tilde: float,
    t: float = DEFAULT_T,
    q: float = DEFAULT_Q,
    alpha: float = DEFAULT_ALPHA,
    clip_emptiness: bool = False,
    *,
    part: str = "score",
    validate: bool = True,
) -> np.ndarray:
    """Score ``f_{t,q,β}(S, ñ, s) = c_{t,q}(S, ñ, s) + α·e_β(S, ñ, s)`` (Def. 7) of every candidate.

    ``data``: shape ``(n,)`` (one dimension) or ``(n, d)``; ``n = 0`` is allowed.  ``dims``/
    ``positions``: the candidates (e.g. from :func:`split_candidates`), ``dims`` in ``[0, d)``.
    Each used column is sorted once; all its candidates are looked up by binary search.
    No range check on ``data`` here (see :class:`algorithms.dpm.split.DPMSplitEM`).
    ``part="centreness"`` or ``"emptiness"`` returns that term alone (Lemmas 3 and 4 bound them separately);
    ``validate=False`` skips the parameter rules (``t ≥ 2q``, ``t ≤ 1``) to study invalid regimes.
    """
    if part not in ("score", "centreness", "emptiness"):
        raise ValueError(f"part must be 'score', 'centreness' or 'emptiness', got {part!r}")
    if validate:
        check_parameters(t, q, alpha, n_tilde=n_tilde, beta=beta)
    x = np.asarray(data, dtype=np.float64)
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2:
        raise ValueError(f"data must have shape (n,) or (n, d), got {x.shape}")
    dims_arr = np.asarray(dims)
    pos = np.asarray(positions, dtype=np.float64)
    if dims_arr.ndim != 1 or pos.shape != dims_arr.shape:
        raise ValueError(f"dims and positions must be 1-D of equal length, got {dims_arr.shape} and {pos.shape}")
    if dims_arr.size and (dims_arr.dtype.kind not in "iu" or dims_arr.min() < 0 or dims_arr.max() >= x.shape[1]):
        raise ValueError(f"dims must be integers in [0, {x.shape[1]}) (the data has {x.shape[1]} columns)")
    counts = np.empty(pos.shape, dtype=np.int64)
    rank = np.empty(pos.shape, dtype=np.int64)
    for i in np.unique(dims_arr):
        sel = dims_arr == i
        col = np.sort(x[:, i])
        counts[sel] = interval_counts(col, pos[sel], beta)
        rank[sel] = ranks(col, pos[sel])
    c = centreness_from_rank(rank, n_tilde, t, q, validate=validate)
    e = emptiness_from_count(counts, n_tilde, clip_emptiness)
    if part == "centreness":
        return c
    if part == "emptiness":
        return e
    return c + float(alpha) * e


def candidate_table(
    data: object,
    bounds: tuple[float, float] = (0.0, 1.0),
    beta: float = 0.1,
    d: int = 1,
    n_tilde: float = 10.0,
    t: float = DEFAULT_T,
    q: float = DEFAULT_Q,
    alpha: float = DEFAULT_ALPHA,
    part: str = "score",
    validate: bool = True,
    clip_emptiness: bool = False,
) -> np.ndarray:
    """The score (or one term, ``part``) of ``data`` at every split candidate of ``bounds``/``beta``/``d``
    (:func:`split_candidates`), for a fixed noisy count ``ñ``: a fixed-length vector, the function whose
    sensitivity Lemmas 3-5 bound (``t/(ñq)``, ``1/ñ`` and ``(t/q + α)/ñ`` in ℓ∞ over the candidates, under
    add/remove one record, ``ñ`` held fixed as the proofs do)."""
    dims, positions = split_candidates(bounds, beta, d)
    return score(data, dims, positions, beta, n_tilde, t, q, alpha, clip_emptiness, part=part, validate=validate)


def score_sensitivity(
    n_tilde: float,
    lam: float = 0.0,
    t: float = DEFAULT_T,
    q: float = DEFAULT_Q,
    alpha: float = DEFAULT_ALPHA,
    *,
    clamp: bool = False,
) -> float:
    """``Δ_f = (t/q + α)/(ñ − λ)`` (Lemma 5 = Lemma 3's ``t/((ñ−λ)q)`` + α·Lemma 4's ``1/(ñ−λ)``;
    Alg. 1 line 22).

    The paper's ``Δ_f`` is undefined for ``ñ − λ ≤ 0`` (typical at deep recursion levels with
    Sec. 6.1's budget split): this raises :class:`ValueError` unless ``clamp=True``, which reproduces the authors' code
    and uses ``max(ñ − λ, 1)``.  The clamp is sound at a fixed ``ñ ≥ 1`` (the true sensitivity is
    ``(t/q + α)/ñ ≤ t/q + α``) but *under-states* it when ``ñ < 1``.
    """
    check_parameters(t, q, alpha, n_tilde=n_tilde, lam=lam)
    denom = float(n_tilde) - float(lam)
    if clamp:
        denom = max(denom, 1.0)
    elif denom <= 0.0:
        raise ValueError(
            f"n_tilde - lam = {denom!r} <= 0: the score sensitivity (t/q + alpha)/(n_tilde - lam) of seed 004 "
            f"Lemma 5 is undefined there (the authors' code clamps n_tilde - lam to >= 1; pass clamp=True "
            f"to reproduce it)"
        )
    return (float(t) / float(q) + float(alpha)) / denom
