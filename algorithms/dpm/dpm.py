"""DPM ("DP-Mondrian"), Algorithm 1 of seed 004, end to end, batched over runs, with a budget ledger.

Source: seed 004, "DPM: Clustering Sensitive Data through Separation" (Liebenow, Schütt et al.,
CCS 2024): Algorithm 1 (Sec. 3, listing lines 2-28), Sec. 3.3 (noisy counts,
offset λ, Eq. (1), the per-level budget split), Sec. 3.4 (averaging), Algorithm 2 (Sec. 3.5), Theorem 1 /
Corollary 4 (Sec. 4.4), defaults Sec. 5.2 and 6.1/6.4; the listing's errata and corrections below and in
docs/findings.md (F9, F11-F17, F25-F28).  The pieces live in :mod:`algorithms.dpm.score`
(Defs. 5-7, Lemmas 3-5), :mod:`~algorithms.dpm.split` (the EM, Def. 4), :mod:`~algorithms.dpm.interval_size`
(Alg. 2) and :mod:`~algorithms.dpm.averaging` (DP-AVG); this module composes them.

The algorithm (one run; :meth:`DPM.fit`)
----------------------------------------
1. Budgets: ``ε_int, ε_cnt, ε_exp, ε_avg = fractions·ε`` (0.04/0.18/0.18/0.6, Sec. 6.1 -- the printed
   "ε = 0.04ε_int + …" means the fractions, §5 item 13); ``δ_cnt, δ_avg = 0.2δ, 0.8δ``.  Per level
   ``ε_cnt_i = ε_cnt·√2^i / Σ_{j≤τ_r} √2^j`` (``τ_r + 1`` count levels) and ``ε_exp_i = ε_exp·√2^i /
   Σ_{j<τ_r} √2^j`` (``τ_r`` split levels) -- Alg. 1 lines 4-5 (the printed objective (2) is linear; the
   √2^i profile minimises ``Σ 2^i/ε_i``, §5 item 11).  ``λ_i = −ln(2δ_cnt')/ε_cnt_i`` with the per-level
   ``δ_cnt' = δ_cnt/(τ_r + 1)`` (line 6's unnamed δ, settled as the authors' code, §5 item 5).
2. ``ñ_D = |D| + Lap(1/ε_cnt_0)`` (line 7; the scale is ``1/ε_cnt``, §5 item 3), ``τ_e = ñ_D/2^τ_r``.
3. ``β`` = Algorithm 2 on ``D`` with ``ñ_D`` and ``ε_int`` (line 8), ``K = ⌊(b − a)/β⌋`` candidates per
   dimension at ``a + (k + ½)β`` (line 9 and the corrected lines 24-25, §5 item 15).
4. ``BuildClustering`` (lines 13-20), level by level: a node at depth ``γ < τ_r`` draws a candidate with
   probability ``∝ exp(ε_exp_γ f/(2Δ_f))`` (Def. 4 with the factor 2, §5 item 2), ``Δ_f = (t/q + α)/(ñ − λ_γ)``
   (line 22), splits into ``{x^(d*) ≤ s*}`` and ``{x^(d*) > s*}`` (lines 26-27), draws both children's
   noisy counts with ``ε_cnt_{γ+1}`` and halts -- the node becomes a leaf -- if either is ``< τ_e``
   (line 18).  Depth ``τ_r`` nodes are leaves (line 14).
5. Every leaf: ``(Σ_{x ∈ S} x + N(0, σ² I_d)) / ñ_S`` (line 11, DP-AVG with ``(ε_avg, δ_avg)`` and ℓ2
   sensitivity ``max(|a|, |b|)·√d``, :mod:`~algorithms.dpm.averaging`).  Output: the noisy centres and the
   noisy counts (weights).

Resolved ambiguities (each also a parameter where the paper and the code differ)
------------------------------------------------------------------------------
* **Neighbours**: add/remove one point (Def. 1).  All budgets and sensitivities are for that relation.
* **Data outside the public range** (§5 item 32): ``out_of_range="raise"`` (default) refuses it with the
  offending point; ``"clip"`` clips every coordinate to ``[a, b]`` first (the guarantee then holds for the
  raw data, clipping being a per-record map).  The authors' code does neither.
* **Exponent**: ``exponent="two"`` (default, Thm. 2, Lemma 10, the code); ``"printed"`` is Def. 4 literally
  (no factor 2; a broken twin that is only ``2ε_exp``-DP per level in general).
* **ñ − λ ≤ 0** (§5 item 8; typical at deep levels): ``offset="clamp"`` (default) uses
  ``Δ_f = (t/q + α)/max(ñ − λ, min(ñ, 1))``; ``"code"`` the authors' ``max(ñ − λ, 1)``; ``"none"`` drops λ
  (``Δ_f = (t/q + α)/ñ``; the proofs of Lemmas 3-5 hold ñ fixed, so the offset is not needed, §5 item 7).
  At a fixed ñ the true score sensitivity is ``(t/q + α)/ñ``, so any denominator ``≤ ñ`` is sound: "clamp"
  and "none" are, "code" under-states Δ_f whenever ``ñ < 1`` (possible when ``τ_e < 1``, i.e. ``ñ_D < 2^τ_r``).
* **A node with ñ ≤ 0** cannot be scored (Defs. 5-6 need ñ ∈ ℕ_+): it is not split and becomes a leaf --
  a function of the released ñ, i.e. post-processing.  Its centre divides by ``max(ñ, 1)`` (the code
  returns 0 for an empty leaf; any public-only rule is post-processing).
* **Halting** (line 18): ``halt="strict"`` stops when a child's ñ is ``< τ_e`` (the paper);
  ``"inclusive"`` uses ``≤`` (the code).  The discarded children's counts are still charged (§1.7 remark 3).
* **Rank, intervals, ties**: as :mod:`~algorithms.dpm.score` (left insertion rank, closed intervals
  ``[s − β/2, s + β/2]``, centreness outer branch for ``r > ñ``).  ``clip_emptiness=True`` clips the
  emptiness to ``[0, 1]`` as the code does.
* **Algorithm 2**: the code's σ grid 0.5…29.5, 30 repetitions, 1-D simulation, percentile sensitivity 2;
  the table rows share one standard sample scaled by σ (``table_draws="shared"`` in
  :mod:`~algorithms.dpm.interval_size`; cached per simulation size: the data-independent simulation the
  issue asks to compute once).  Lemma 1 (sensitivity 2) is false for ``d ≥ 2``
  (``docs/findings.md`` F11, F15): DPM inherits that flaw; it is kept as printed so audits can measure it.
* **δ**: a parameter.  The paper's ``δ = 1/(ñ_D√ñ_D)`` is data-dependent (§5 item 14); pass a public value
  (the reproduction uses the true n, as the authors' code).
* **Accounting**: ``accounting="algorithm-1"`` (default) treats ε_cnt and ε_exp as totals split over the
  levels (Alg. 1, the experiments; total = ε).  ``"theorem-1"`` spends them *per level*, which is how
  Theorem 1 / Corollary 4 count them, ``((τ_r+1)ε_cnt + τ_r ε_exp + ε_avg + ε_int, (τ_r+1)δ_cnt + δ_avg)``
  = 3.34ε and 2.4δ with the defaults (§5 item 12): the ledger then refuses the run unless the claim is raised.

Budget ledger
-------------
Every call is charged to an :class:`algorithms.ledger.BudgetLedger` *before* it is made, with the claim
``(epsilon, delta)``: a configuration whose spending would exceed the claim raises
:class:`algorithms.ledger.BudgetExceededError`.  Charges: ``laplace-count`` (level 0 on D, then level γ+1
on the children of level γ, ``parallel`` = number of disjoint nodes, ``(ε_cnt_i, δ_cnt')``), ``dp-percentile``
(``ε_int`` on the averaged gaps of D), ``exponential`` (level γ, ``ε_exp_γ``), ``gaussian-average``
(``(ε_avg, δ_avg)`` on the leaves).  :meth:`DPM.privacy_ledger` returns one run's charges without enforcement
(the protocol of ``dpverify.check_ledger``).  The count's ``δ_cnt'`` is the paper's (Cor. 2, Lemma 7); the
Laplace count is in fact ``(ε, 0)``-DP and δ_cnt only bounds the event ``ñ − λ > |S|``.

Batched sampling and noise
--------------------------
:meth:`DPM.sample` runs ``n`` independent runs at once: the tree is processed level by level for all runs,
node statistics are ``numpy.bincount`` s over (run, node, candidate) keys, and every noise draw has a
data-independent shape (all ``2^γ`` node slots of a level, used or not), so the stream layout never depends
on the data.  Draws go through :class:`algorithms.noise.NoiseSource` steps ``count[0]``, ``dp-percentile``,
``uniform-in-interval``, ``split-em[γ]``, ``count[γ+1]``, ``gaussian-sum``.  (Frozen-noise replay of the
whole recursion is not meaningful: with frozen noise the neighbour's halting decisions may differ, which is
allowed.  The steps are replayable one at a time, see ``audits/sensitivity.toml``.)
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
import numpy as np

from ..classic._validation import check_choice, check_delta, check_epsilon, check_n, check_positive_int
from .averaging import analytic_gaussian_sigma, sum_l2_sensitivity
from .interval_size import (
    DEFAULT_PERCENTILE,
    DEFAULT_REPETITIONS,
    DEFAULT_SIGMAS,
    TABLE_DIMS,
    _check_sigmas,
    averaged_gaps,
    closest_sigma,
    dp_percentile,
    unit_gap_percentile,
)
from .score import DEFAULT_ALPHA, DEFAULT_Q, DEFAULT_T, centreness_from_rank, check_bounds, check_parameters
from ..ledger import BudgetLedger, Charge
from ..noise import NoiseSource

__all__ = ["DPM", "DPMBatch", "DPMClustering", "DEFAULT_FRACTIONS", "DEFAULT_DELTA_FRACTIONS", "level_budgets"]

#: ``(ε_int, ε_cnt, ε_exp, ε_avg)`` as fractions of ε (Sec. 6.1; the code's ``epsilon_scale_*``).
DEFAULT_FRACTIONS: tuple[float, float, float, float] = (0.04, 0.18, 0.18, 0.6)
#: ``(δ_cnt, δ_avg)`` as fractions of δ (Sec. 6.1).
DEFAULT_DELTA_FRACTIONS: tuple[float, float] = (0.2, 0.8)

EXPONENTS = ("two", "printed")
OFFSETS = ("clamp", "code", "none")
HALTS = ("strict", "inclusive")
ACCOUNTINGS = ("algorithm-1", "theorem-1")
OUT_OF_RANGE = ("raise", "clip")


def level_budgets(total: float, levels: int) -> np.ndarray:
    """``total·√2^i / Σ_{j<levels} √2^j`` for ``i = 0..levels−1`` (Alg. 1 lines 4-5)."""
    w = np.sqrt(2.0 ** np.arange(levels, dtype=np.float64))
    return float(total) * w / w.sum()


def _fractions(name: str, value: object, k: int) -> tuple[float, ...]:
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be {k} numbers, got {value!r}") from None
    if arr.shape != (k,) or not np.all(np.isfinite(arr)) or np.any(arr <= 0.0):
        raise ValueError(f"{name} must be {k} finite numbers > 0, got {value!r}")
    if abs(float(arr.sum()) - 1.0) > 1e-9:
        raise ValueError(f"{name} must sum to 1 (fractions of the total budget), got {value!r} (sum {arr.sum()!r})")
    return tuple(float(v) for v in arr)


@dataclass(frozen=True)
class DPMBatch:
    """``n`` DPM runs, one row per run.  Leaf slots: a leaf at depth ``γ``, node ``j`` occupies slot
    ``j·2^{τ_r−γ}`` of ``2^τ_r`` (its leftmost descendant), so slots are unique; unused slots are NaN.

    ``centres`` ``(n, 2^τ_r, d)``, ``weights`` ``(n, 2^τ_r)`` -- the private output; ``n_clusters`` ``(n,)``;
    the released intermediate values (all charged to the budget, so also private): ``n_tilde`` (``ñ_D``),
    ``beta``, ``first_split`` ``(n, 2)`` (dimension, candidate index ``k``; ``(−1, −1)`` if the root is a leaf),
    ``depth`` (deepest leaf).  ``charges``: the ledger (the union over the runs: every level any run reached,
    ``parallel`` the most nodes any run had).  ``partition`` ``(n, |D|)``: each point's leaf slot -- internal
    state for tests, **not** part of the private output.
    """

    centres: np.ndarray
    weights: np.ndarray
    n_clusters: np.ndarray
    n_tilde: np.ndarray
    beta: np.ndarray
    first_split: np.ndarray
    depth: np.ndarray
    charges: tuple[Charge, ...]
    partition: np.ndarray

    def run(self, i: int) -> "DPMClustering":
        """Run ``i`` with the unused slots dropped."""
        used = ~np.isnan(self.weights[i])
        return DPMClustering(
            centres=self.centres[i][used].copy(), weights=self.weights[i][used].copy(),
            n_tilde=float(self.n_tilde[i]), beta=float(self.beta[i]),
            first_split=(int(self.first_split[i, 0]), int(self.first_split[i, 1])),
            depth=int(self.depth[i]), charges=self.charges, slots=np.flatnonzero(used),
            partition=self.partition[i].copy(),
        )


@dataclass(frozen=True)
class DPMClustering:
    """One DPM run: ``centres`` ``(k, d)`` and ``weights`` ``(k,)`` (the private output), ``n_tilde``, ``beta``,
    ``first_split``, ``depth``, ``charges`` (the ledger), ``slots`` (leaf slot of each centre) and
    ``partition`` (each point's leaf slot; internal, not private output)."""

    centres: np.ndarray
    weights: np.ndarray
    n_tilde: float
    beta: float
    first_split: tuple[int, int]
    depth: int
    charges: tuple[Charge, ...]
    slots: np.ndarray
    partition: np.ndarray

    @property
    def n_clusters(self) -> int:
        return int(self.weights.size)

    def total_budget(self) -> tuple[float, float]:
        """``(Σε, Σδ)`` of the ledger (basic composition)."""
        return math.fsum(c.epsilon for c in self.charges), math.fsum(c.delta for c in self.charges)


@dataclass(frozen=True)
class DPM:
    """DPM (seed 004 Algorithm 1; module docstring).  Claimed: ``(epsilon, delta)``-DP under add/remove one point.

    ``bounds``: the public range ``[a, b]`` of every dimension; ``d``: the dimension; ``tau_r``: the split depth
    (7: at most 128 clusters); ``t, q, alpha``: the score (Defs. 6-7); ``fractions``/``delta_fractions``: the
    budget split; ``sigmas``, ``repetitions``, ``percentile``, ``percentile_sensitivity``, ``table_dims``,
    ``table_seed``: Algorithm 2; ``tau_e``: a fixed public halting threshold instead of ``ñ_D/2^τ_r``; the
    other options are the resolved ambiguities of the module docstring.
    """

    epsilon: float
    delta: float
    bounds: tuple[float, float]
    d: int
    tau_r: int = 7
    t: float = DEFAULT_T
    q: float = DEFAULT_Q
    alpha: float = DEFAULT_ALPHA
    fractions: tuple[float, float, float, float] = DEFAULT_FRACTIONS
    delta_fractions: tuple[float, float] = DEFAULT_DELTA_FRACTIONS
    sigmas: tuple[float, ...] = DEFAULT_SIGMAS
    repetitions: int = DEFAULT_REPETITIONS
    percentile: float = DEFAULT_PERCENTILE
    percentile_sensitivity: float = 2.0
    table_dims: str = "code"
    table_seed: int = 0
    exponent: str = "two"
    offset: str = "clamp"
    halt: str = "strict"
    accounting: str = "algorithm-1"
    out_of_range: str = "raise"
    clip_emptiness: bool = False
    tau_e: float | None = None
    sigma_avg: float = field(init=False, repr=False)

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_delta(self.delta)
        if not float(self.delta) < 1.0:
            raise ValueError(f"delta must be in (0, 1), got {self.delta!r}")
        object.__setattr__(self, "bounds", check_bounds(self.bounds))
        check_positive_int("d", self.d)
        check_positive_int("tau_r", self.tau_r)
        check_parameters(self.t, self.q, self.alpha)
        object.__setattr__(self, "fractions", _fractions("fractions", self.fractions, 4))
        object.__setattr__(self, "delta_fractions", _fractions("delta_fractions", self.delta_fractions, 2))
        object.__setattr__(self, "sigmas", _check_sigmas(self.sigmas))
        a, b = self.bounds
        if max(self.sigmas) / 2.0 > b - a:
            raise ValueError(
                f"the largest sigma {max(self.sigmas)!r} gives beta = sigma/2 wider than the range [{a!r}, {b!r}] "
                f"(no split candidate); pass sigmas with max(sigmas) <= 2(b - a) = {2.0 * (b - a)!r} (the default "
                f"grid 0.5..29.5 of the authors' code suits ranges of width >= 14.75)"
            )
        check_positive_int("repetitions", self.repetitions)
        if not isinstance(self.percentile, numbers.Real) or not 0.0 < float(self.percentile) < 100.0:
            raise ValueError(f"percentile must be a real number in (0, 100), got {self.percentile!r}")
        if not float(self.percentile_sensitivity) > 0.0:
            raise ValueError(f"percentile_sensitivity must be > 0, got {self.percentile_sensitivity!r}")
        check_choice("table_dims", self.table_dims, TABLE_DIMS)
        check_choice("exponent", self.exponent, EXPONENTS)
        check_choice("offset", self.offset, OFFSETS)
        check_choice("halt", self.halt, HALTS)
        check_choice("accounting", self.accounting, ACCOUNTINGS)
        check_choice("out_of_range", self.out_of_range, OUT_OF_RANGE)
        if self.tau_e is not None and not (isinstance(self.tau_e, numbers.Real) and math.isfinite(float(self.tau_e))):
            raise ValueError(f"tau_e must be None (ñ_D/2^tau_r) or a finite number, got {self.tau_e!r}")
        eps_avg = float(self.epsilon) * self.fractions[3]
        delta_avg = float(self.delta) * self.delta_fractions[1]
        object.__setattr__(self, "sigma_avg",
                           analytic_gaussian_sigma(eps_avg, delta_avg, sum_l2_sensitivity(self.bounds, int(self.d))))

    # -- budgets -------------------------------------------------------------------------------------
    def budgets(self) -> dict[str, np.ndarray | float]:
        """Every budget the run uses: ``eps_int``, ``eps_avg``, ``delta_avg`` (floats), ``eps_cnt`` (``τ_r+1``
        levels), ``eps_exp`` (``τ_r`` levels), ``delta_cnt`` (per count level), ``lam`` (``τ_r+1`` offsets)."""
        eps = float(self.epsilon)
        f_int, f_cnt, f_exp, f_avg = self.fractions
        d_cnt, d_avg = (float(self.delta) * f for f in self.delta_fractions)
        levels = int(self.tau_r)
        if self.accounting == "algorithm-1":
            eps_cnt = level_budgets(eps * f_cnt, levels + 1)
            eps_exp = level_budgets(eps * f_exp, levels)
            delta_cnt = d_cnt / (levels + 1)
        else:  # Theorem 1 / Corollary 4: ε_cnt, ε_exp, δ_cnt spent at every level
            eps_cnt = np.full(levels + 1, eps * f_cnt)
            eps_exp = np.full(levels, eps * f_exp)
            delta_cnt = d_cnt
        lam = -np.log(2.0 * delta_cnt) / eps_cnt
        return {"eps_int": eps * f_int, "eps_avg": eps * f_avg, "delta_avg": d_avg, "eps_cnt": eps_cnt,
                "eps_exp": eps_exp, "delta_cnt": delta_cnt, "lam": lam}

    def score_sensitivity(self, n_tilde: np.ndarray, level: int) -> np.ndarray:
        """``Δ_f`` of each node with noisy count ``n_tilde`` at ``level`` (the ``offset`` rule)."""
        lam = float(self.budgets()["lam"][level])
        nt = np.asarray(n_tilde, dtype=np.float64)
        if self.offset == "none":
            denom = nt
        elif self.offset == "code":
            denom = np.maximum(nt - lam, 1.0)
        else:
            denom = np.maximum(nt - lam, np.minimum(nt, 1.0))
        return (float(self.t) / float(self.q) + float(self.alpha)) / denom

    # -- input ---------------------------------------------------------------------------------------
    def points(self, x: object) -> np.ndarray:
        """The validated data set as ``(N, d)`` float64 (clipped when ``out_of_range="clip"``)."""
        a, b = self.bounds
        d = int(self.d)
        try:
            arr = np.asarray(x, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"DPM needs a numeric data set of shape (n, {d}), got {type(x).__name__}") from None
        if arr.ndim == 1 and d == 1:
            arr = arr[:, None]
        if arr.ndim != 2 or arr.shape[1] != d:
            raise ValueError(f"DPM was built for d={d} dimensions; the data set has shape {arr.shape} "
                             f"(expected (n, {d})" + (" or (n,)" if d == 1 else "") + ")")
        if arr.shape[0] < 2:
            raise ValueError(f"DPM needs at least 2 points (Algorithm 2 needs a gap between neighbouring points), "
                             f"got {arr.shape[0]}")
        bad = ~np.isfinite(arr)
        if bad.any():
            row = int(np.argmax(bad.any(axis=1)))
            raise ValueError(f"the data set must be finite: point {row} = {arr[row].tolist()} has a NaN or "
                             f"infinite coordinate; drop or impute it before running DPM")
        out = (arr < a) | (arr > b)
        if out.any():
            if self.out_of_range == "clip":
                return np.clip(arr, a, b)
            row = int(np.argmax(out.any(axis=1)))
            raise ValueError(
                f"{int(out.any(axis=1).sum())} point(s) lie outside the public range [{a!r}, {b!r}]^{d}, e.g. point "
                f"{row} = {arr[row].tolist()}; DP needs every point inside the range (seed 004 Sec. 2.1): clip the "
                f"data first or pass out_of_range='clip'"
            )
        return np.ascontiguousarray(arr)

    # -- runs ------------------------------------------------------------------------------------------
    def fit(self, x: object, rng: np.random.Generator) -> DPMClustering:
        """One run of DPM on ``x``; the ledger enforces the claim."""
        return self.sample(x, 1, rng).run(0)

    def sample(self, x: object, n: int, rng: np.random.Generator) -> DPMBatch:
        """``n`` independent runs (batched); the ledger enforces the claim."""
        return self.release(x, n, NoiseSource(rng))

    def privacy_ledger(self, x: object, rng: np.random.Generator) -> tuple[Charge, ...]:
        """The charges of one run on ``x``, recorded without enforcement (``dpverify.check_ledger``)."""
        return self.release(x, 1, NoiseSource(rng), enforce=False).charges

    def release(self, x: object, n: int, noise: NoiseSource, *, enforce: bool = True) -> DPMBatch:
        """``n`` runs drawing all randomness from ``noise`` (module docstring, "Batched sampling")."""
        n = check_n(n)
        data = self.points(x)
        N, d = data.shape
        a, b = self.bounds
        tau_r = int(self.tau_r)
        L = 2 ** tau_r
        bud = self.budgets()
        eps_cnt, eps_exp = bud["eps_cnt"], bud["eps_exp"]
        dcnt = float(bud["delta_cnt"])
        ledger = BudgetLedger(float(self.epsilon), float(self.delta)) if enforce else BudgetLedger()

        # line 7: the root count
        ledger.charge("laplace-count", float(eps_cnt[0]), dcnt, level=0, subset="D")
        scale0 = 1.0 / float(eps_cnt[0])
        n_root = np.asarray(noise.add("count[0]", float(N), lambda g: g.laplace(0.0, scale0, size=n),
                                      sensitivity=1.0, norm="l1", scale=scale0, kind="laplace"), dtype=np.float64)
        tau_e = n_root / L if self.tau_e is None else np.full(n, float(self.tau_e))

        # line 8: Algorithm 2
        ledger.charge("dp-percentile", float(bud["eps_int"]), 0.0, subset="averaged gaps of D")
        p_tilde = dp_percentile(averaged_gaps(data), float(self.percentile) / 100.0, float(bud["eps_int"]),
                                (0.0, b - a), n, noise, sensitivity=float(self.percentile_sensitivity))
        beta = self._betas(p_tilde, n_root)
        K = np.floor((b - a) / beta).astype(np.int64)          # >= 1: checked against max(sigmas) at construction
        kmax = int(K.max())

        # per-point candidate lookups, once per distinct beta (few values; run r uses row group[r]):
        # rank index J, interval index range [Lo, Up)
        betas, group = np.unique(beta, return_inverse=True)
        J = np.empty((betas.size, N, d), dtype=np.int32)
        Lo = np.empty_like(J)
        Up = np.empty_like(J)
        for g, bv in enumerate(betas):
            k = int(np.floor((b - a) / bv))
            pos = a + (np.arange(k, dtype=np.float64) + 0.5) * float(bv)
            half = 0.5 * float(bv)
            J[g] = np.searchsorted(pos, data, side="right")
            Lo[g] = np.searchsorted(pos + half, data, side="left")
            Up[g] = np.searchsorted(pos - half, data, side="right")

        node = np.zeros((n, N), dtype=np.int64)          # node of each point within its level; -1 once in a leaf
        slot = np.full((n, N), -1, dtype=np.int64)       # final leaf slot of each point
        active = np.ones((n, 1), dtype=bool)
        nt = n_root[:, None].copy()                      # ñ of each node slot
        leaf_w = np.full((n, L), np.nan)
        first_split = np.full((n, 2), -1, dtype=np.int64)
        depth = np.zeros(n, dtype=np.int64)
        rows = np.arange(n)[:, None]

        def make_leaves(level: int, mask: np.ndarray) -> None:
            r, j = np.nonzero(mask)
            s = j * 2 ** (tau_r - level)
            leaf_w[r, s] = nt[r, j]
            depth[r] = np.maximum(depth[r], level)
            pts = mask[rows, np.maximum(node, 0)] & (node >= 0)
            slot[pts] = (node[pts] * 2 ** (tau_r - level))
            node[pts] = -1
            active[mask] = False

        for level in range(tau_r):
            M = active.shape[1]
            make_leaves(level, active & (nt <= 0.0))     # ñ <= 0: scores undefined, not split
            if not active.any():
                break
            # line 22-23: scores of every candidate of every active node, then one EM draw per node
            scores = self._node_scores(data, node, active, nt, group, J, Lo, Up, K, kmax)   # (n, M, d*kmax)
            delta_f = self.score_sensitivity(np.where(active, nt, 1.0), level)      # (n, M)
            k_exp = 2.0 if self.exponent == "two" else 1.0
            coef = float(eps_exp[level]) / (k_exp * delta_f)
            logits = scores * coef[..., None]
            ledger.charge("exponential", float(eps_exp[level]), 0.0, level=level,
                          subset=f"nodes of level {level}", parallel=int(active.sum(axis=1).max()))
            units = scores / delta_f[..., None]
            choice = np.asarray(noise.select(
                f"split-em[{level}]", units,
                lambda g: np.argmax(logits + g.gumbel(size=logits.shape), axis=-1),
                sensitivity=1.0, norm="linf", scale=float(eps_exp[level]) / k_exp), dtype=np.int64)
            dstar = choice // kmax
            kstar = choice % kmax
            sstar = a + (kstar + 0.5) * beta[:, None]
            if level == 0:
                first_split[active[:, 0], 0] = dstar[active[:, 0], 0]
                first_split[active[:, 0], 1] = kstar[active[:, 0], 0]
            # lines 26-27: split every active node's points
            inside = node >= 0
            safe = np.maximum(node, 0)
            dsel = dstar[rows, safe]
            xv = data[np.arange(N)[None, :], dsel]
            child = np.where(inside, 2 * node + (xv > sstar[rows, safe]), -1)
            # lines 16-17: both children's noisy counts (every slot of the next level, used or not)
            r_i, p_i = np.nonzero(inside)
            counts = np.bincount(r_i * (2 * M) + child[r_i, p_i], minlength=n * 2 * M).reshape(n, 2 * M)
            counts = counts.astype(np.float64)
            ledger.charge("laplace-count", float(eps_cnt[level + 1]), dcnt, level=level + 1,
                          subset=f"children of the nodes of level {level}",
                          parallel=int(2 * active.sum(axis=1).max()))
            sc = 1.0 / float(eps_cnt[level + 1])
            child_nt = np.asarray(noise.add(f"count[{level + 1}]", counts,
                                            lambda g: g.laplace(0.0, sc, size=counts.shape),
                                            sensitivity=1.0, norm="l1", scale=sc, kind="laplace"), dtype=np.float64)
            # line 18: halt when a child's count is below tau_e (the parent becomes the leaf)
            low = child_nt < tau_e[:, None] if self.halt == "strict" else child_nt <= tau_e[:, None]
            halts = active & (low[:, 0::2] | low[:, 1::2])
            make_leaves(level, halts)
            cont = np.repeat(active, 2, axis=1)
            moved = node >= 0
            node = np.where(moved, child, node)
            active, nt = cont, np.where(cont, child_nt, np.nan)
        if active.any():                                 # the loop ran to depth tau_r (line 14)
            make_leaves(tau_r, active)

        # line 11: DP-AVG of every leaf (all slots drawn; unused slots discarded)
        n_leaves = (~np.isnan(leaf_w)).sum(axis=1)
        ledger.charge("gaussian-average", float(bud["eps_avg"]), float(bud["delta_avg"]), subset="leaves",
                      parallel=int(max(n_leaves.max(), 1)))
        r_i, p_i = np.nonzero(slot >= 0)
        key = r_i * L + slot[r_i, p_i]
        sums = np.stack([np.bincount(key, weights=data[p_i, i], minlength=n * L) for i in range(d)],
                        axis=-1).reshape(n, L, d)
        sig = float(self.sigma_avg)
        noisy = np.asarray(noise.add("gaussian-sum", sums, lambda g: g.normal(0.0, sig, size=sums.shape),
                                     sensitivity=sum_l2_sensitivity(self.bounds, d), norm="l2", scale=sig,
                                     kind="gaussian"), dtype=np.float64)
        centres = noisy / np.maximum(leaf_w, 1.0)[..., None]
        centres[np.isnan(leaf_w)] = np.nan
        return DPMBatch(centres=centres, weights=leaf_w, n_clusters=n_leaves, n_tilde=n_root, beta=beta,
                        first_split=first_split, depth=depth, charges=ledger.charges, partition=slot)

    # -- helpers ---------------------------------------------------------------------------------------
    def _betas(self, p_tilde: np.ndarray, n_root: np.ndarray) -> np.ndarray:
        """Alg. 2 lines 10-11 for each run's ``p̃`` and ``ñ_D`` (shared-draw table, cached per size)."""
        m = np.maximum(n_root, 2.0).astype(np.int64)
        unit = np.empty(m.shape, dtype=np.float64)
        for mv in np.unique(m):
            unit[m == mv] = unit_gap_percentile(int(mv), int(self.repetitions), float(self.percentile), int(self.d),
                                                self.table_dims, int(self.table_seed))
        return closest_sigma(p_tilde / unit, self.sigmas) / 2.0

    def _node_scores(self, data: np.ndarray, node: np.ndarray, active: np.ndarray, nt: np.ndarray, group: np.ndarray,
                     J: np.ndarray, Lo: np.ndarray, Up: np.ndarray, K: np.ndarray, kmax: int) -> np.ndarray:
        """Def. 7 scores ``(n, M, d·kmax)`` of every candidate of every node slot; ``−inf`` for inactive nodes
        and for candidates ``k ≥ K`` of a run with a wider β.  ``J``/``Lo``/``Up`` hold the per-point candidate
        lookups of each distinct β, ``group[r]`` the row of run ``r``."""
        n, N = node.shape
        M = active.shape[1]
        d = data.shape[1]
        r_i, p_i = np.nonzero(node >= 0)
        g_i = group[r_i]
        base = (r_i * M + node[r_i, p_i]) * (kmax + 1)
        size = n * M * (kmax + 1)
        out = np.full((n, M, d, kmax), -np.inf)
        ntv = np.where(active, nt, 1.0)[..., None]
        valid = (np.arange(kmax)[None, :] < K[:, None])[:, None, :] & active[..., None]        # (n, M, kmax)
        for i in range(d):
            rank = np.cumsum(np.bincount(base + J[g_i, p_i, i], minlength=size).reshape(n, M, kmax + 1),
                             axis=-1)[..., :kmax]
            cnt = np.cumsum(np.bincount(base + Lo[g_i, p_i, i], minlength=size).reshape(n, M, kmax + 1)
                            - np.bincount(base + Up[g_i, p_i, i], minlength=size).reshape(n, M, kmax + 1),
                            axis=-1)[..., :kmax]
            c = centreness_from_rank(rank, ntv, float(self.t), float(self.q), validate=False)
            e = 1.0 - cnt / ntv
            if self.clip_emptiness:
                e = np.clip(e, 0.0, 1.0)
            out[:, :, i, :] = np.where(valid, c + float(self.alpha) * e, -np.inf)
        return out.reshape(n, M, d * kmax)

