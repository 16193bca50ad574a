"""Seed 002's bound comparisons and clustering results as checkable objects (the protocol of
:mod:`dpverify.theorems.check`).

Source: seed 002, Pinot, "Nodes clustering in a graph under differential privacy" (the PAMST report),
report numbering; its errata E1, E14, E15, E17, E18, E19, E21 are explained where they are used.

=================================  ======================================================================
class                              statement (report numbering)
=================================  ======================================================================
:class:`BoundComparisonLambert`    Thm 3.5.1: ``α >= α*(n, γ) = (γ/n) e^{W(ln h_{n,γ})}`` ⇒ ``B_Exp <= B_Lap``
                                   (``form="proof"``: the proof's last line ``e^{W(h)}``, E15)
:class:`BoundComparisonDensity`    Thm 3.5.2: ``α >= 3`` ⇒ ``B_Exp <= B_Lap``; ``form="abstract"``: the
                                   abstract's ``|E| >= 2(|V|-1)`` (E1)
:class:`BlockOrderPreservation`    Thm 4.2.1: blocks ``E_1 < ... < E_K`` stay ordered under the graph Laplace
                                   mechanism with probability ``> 1 - Σ e^{-tε}(1/2 + tε/4)(|E_i|+|E_{i+1}|-1)``
                                   (E19), and two valid replacements (a), (b)
:class:`FullOrderPreservation`     Eq 4.3: the whole weight order survives with probability
                                   ``>= 1 - (|E|-1)(1 - F_{Y1+Y2}(min gap))`` (sign fixed, E18)
:class:`ClusterPathClosure`        Claim 4.1.1: a cluster in the sense of Def 4.1.1 is closed under MST paths
                                   (readings of E21)
=================================  ======================================================================

Notation (§3.5): ``n = |V| - 1``, ``|E| = α n``; ``B_Lap = (2n/ε) ln(|E|/γ)`` is Thm 3.2.1's bound (Sealfon's
Laplace MST) and ``B_Exp = (2n/(|E|ε)) (n ln(n/γ) + 2 ln n!)`` Cor 3.4.1's (PAMST).  Both scale as ``1/ε``, so
the comparisons do not depend on ``ε`` (they are evaluated at ``ε = 1``).  ``B_Exp`` decreases and ``B_Lap``
increases in ``α``, so ``B_Exp <= B_Lap`` is monotone in ``α``: the hardest graph allowed by a hypothesis
``α >= α_0`` is the one at ``α = α_0``, which is where the grids check.

Thm 4.2.1 / Eq 4.3 run the graph-based Laplace mechanism as coded
(:func:`algorithms.graph.laplace_mst.graph_laplace`, seed 002 Def 2.2.4: ``w' = w + Lap(1/ε)`` per edge).
Everything there depends on ``ε`` and the gap ``t`` only through ``s = εt``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import integrate, optimize
from scipy.special import gammaln, lambertw

from ..graph.laplace_mst import graph_laplace
from ..graph.mst import mst_edges
from ..graph.weighted_graph import WeightedGraph
from .base import FieldParameters, Property
from .params import (
    real as _real,
    positive as _positive,
    integer as _integer,
    choice as _choice,
)

__all__ = [
    "b_lap",
    "b_exp",
    "log_h",
    "alpha_star",
    "alpha_star_proof",
    "exact_threshold",
    "ThresholdRow",
    "threshold_table",
    "first_failing_n",
    "pair_failure",
    "two_block_probability",
    "full_order_probability",
    "worst_gap",
    "BoundComparisonLambert",
    "BoundComparisonDensity",
    "BlockOrderPreservation",
    "FullOrderPreservation",
    "ClusterPathClosure",
    "find_path_violation",
]

#: Relative rounding tolerance of the float64 comparison ``B_Exp <= B_Lap (1 + tol)``.  ``α*`` comes from
#: ``lambertw`` and ``exp`` with a relative error of a few 1e-15 (times ``W <= 25`` on the grids); 1e-12 is 50x
#: that and far below the 1e-6 step of the "slightly above" points.
REL_TOL: float = 1e-12
#: Largest float64 (``h_{n,γ}`` above it overflows in the proof's form of the threshold).
_LOG_FLOAT_MAX: float = math.log(np.finfo(np.float64).max)
#: Working-array budget (entries of a ``(runs, edges)`` array) of the Laplace samplers.
_CHUNK_ENTRIES: int = 1 << 21
#: Largest graph :class:`ClusterPathClosure` enumerates (every dataset ``D`` and every cluster ``C ⊂ D``).
_CLUSTER_MAX_NODES: int = 8


# --------------------------------------------------------------------------------------------------
# parameter checks (malformed parameters raise; parameters outside a theorem's hypotheses do not)
# --------------------------------------------------------------------------------------------------

def _reals(name: str, values: Any) -> tuple[float, ...]:
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise ValueError(f"{name} must be a list of numbers, got {values!r}")
    out = tuple(_real(f"{name}[{i}]", v) for i, v in enumerate(values))
    if not out:
        raise ValueError(f"{name} must hold at least one number")
    return out


def _gamma_problems(gammas: tuple[float, ...]) -> list[str]:
    bad = [g for g in gammas if not 0.0 < g <= 1.0]
    if bad:
        return [f"gamma = {', '.join(f'{g:g}' for g in bad)} outside (0, 1], the range Thm 3.2.1 and Cor 3.4.1 "
                "are stated for; use 0 < gamma <= 1"]
    return []


# --------------------------------------------------------------------------------------------------
# §3.5: the two bounds, the Lambert threshold and the exact threshold
# --------------------------------------------------------------------------------------------------

def b_lap(n: Any, n_edges: Any, gamma: Any, epsilon: float = 1.0) -> Any:
    """Thm 3.2.1's bound ``(2n/ε) ln(|E|/γ)`` with ``n = |V| - 1`` (``n_edges`` may be real: ``α n``)."""
    n, n_edges = np.asarray(n, dtype=np.float64), np.asarray(n_edges, dtype=np.float64)
    return 2.0 * n / epsilon * np.log(n_edges / gamma)


def b_exp(n: Any, n_edges: Any, gamma: Any, epsilon: float = 1.0) -> Any:
    """Cor 3.4.1's bound ``(2n/(|E|ε)) (n ln(n/γ) + 2 ln n!)`` with ``n = |V| - 1``."""
    n, n_edges = np.asarray(n, dtype=np.float64), np.asarray(n_edges, dtype=np.float64)
    return 2.0 * n / (n_edges * epsilon) * (n * np.log(n / gamma) + 2.0 * gammaln(n + 1.0))


def log_h(n: Any, gamma: Any) -> Any:
    """``ln h_{n,γ}`` of Thm 3.5.1, ``h = γ^{-n/γ} (2π)^{1/γ} n^{(3n+1)/γ} e^{-2n/γ + 1/(6nγ)}``."""
    n = np.asarray(n, dtype=np.float64)
    return (-n * np.log(gamma) + math.log(2.0 * math.pi) + (3.0 * n + 1.0) * np.log(n)
            - 2.0 * n + 1.0 / (6.0 * n)) / gamma


def alpha_star(n: Any, gamma: Any) -> Any:
    """Thm 3.5.1's threshold ``α* = (γ/n) e^{W(ln h_{n,γ})}`` (principal branch of Lambert W)."""
    n = np.asarray(n, dtype=np.float64)
    return gamma / n * np.exp(lambertw(log_h(n, gamma)).real)


def alpha_star_proof(n: Any, gamma: Any) -> Any:
    """The threshold as Proof 3.5.1's last line writes it, ``(γ/n) e^{W(h_{n,γ})}`` (E15), in float64:
    ``inf`` where ``h`` overflows (``ln h > 709.78``)."""
    n = np.asarray(n, dtype=np.float64)
    with np.errstate(over="ignore"):
        h = np.exp(log_h(n, gamma))
        return gamma / n * np.exp(lambertw(h).real)


def _log_alpha_star_proof(n: float, gamma: float) -> float:
    """``ln((γ/n) e^{W(e^L)})`` with ``L = ln h``, in log space (``W(e^L) = w`` solves ``w + ln w = L``)."""
    big_l = float(log_h(n, gamma))
    w = big_l - math.log(big_l) if big_l > 1.0 else float(lambertw(math.exp(big_l)).real)
    for _ in range(4):  # Newton on w + ln w - L
        w -= (w + math.log(w) - big_l) / (1.0 + 1.0 / w)
    return math.log(gamma / n) + w


def _proof_form_reach(gamma: float, n_max: int = 100_000) -> int:
    """The largest ``n`` (0 if none >= 2) up to which the proof's ``(γ/n) e^{W(h)}`` is finite in float64."""
    n = np.arange(2, n_max + 1, dtype=np.float64)
    fits = np.flatnonzero(log_h(n, gamma) <= _LOG_FLOAT_MAX)
    return int(n[fits[-1]]) if fits.size else 0


def _margin(n: float, alpha: float, gamma: float) -> float:
    """``ln(αn/γ) - (n ln(n/γ) + 2 ln n!)/(αn)``: ``B_Lap - B_Exp`` divided by ``2n/ε`` (increasing in α)."""
    return math.log(alpha * n / gamma) - (n * math.log(n / gamma) + 2.0 * float(gammaln(n + 1.0))) / (alpha * n)


def exact_threshold(n: float, gamma: float) -> float:
    """The smallest ``α`` with ``B_Exp <= B_Lap`` (root of :func:`_margin`, ``ln n!`` by ``gammaln``)."""
    hi = max(2.0 * float(alpha_star(n, gamma)), 1.0)
    return float(optimize.brentq(lambda a: _margin(n, a, gamma), gamma / n, hi, xtol=1e-300, rtol=1e-15))


@dataclass(frozen=True)
class ThresholdRow:
    """One row of :func:`threshold_table`: Thm 3.5.1's ``α*`` against the exact threshold."""

    n: int
    gamma: float
    alpha_star: float
    alpha_exact: float

    @property
    def relative_gap(self) -> float:
        """``(α* - α_exact)/α_exact`` (>= 0 up to rounding: ``α*`` is sufficient, the Robbins slack)."""
        return (self.alpha_star - self.alpha_exact) / self.alpha_exact


def threshold_table(ns: Any, gammas: Any) -> list[ThresholdRow]:
    """Thm 3.5.1's tightness: ``α*(n, γ)`` and the exact threshold for every ``n`` in ``ns``, ``γ`` in
    ``gammas``.  The only slack of ``α*`` is Robbins' bound on ``n!`` (Lemma 3.5.1): relative gap about
    1e-4 at n = 2, 6e-8 at n = 10, 3e-12 at n = 100, below float64 resolution from n ~ 1000."""
    return [ThresholdRow(int(n), float(g), float(alpha_star(int(n), float(g))), exact_threshold(int(n), float(g)))
            for g in gammas for n in ns]


def first_failing_n(alpha: float, gamma: float, n_max: int, n_min: int = 2) -> int | None:
    """The smallest integer ``n`` in ``[n_min, n_max]`` with ``B_Exp > B_Lap (1 + REL_TOL)`` at density ``α``
    (a scan of every integer, vectorised), or ``None``."""
    n = np.arange(n_min, n_max + 1, dtype=np.float64)
    bad = np.flatnonzero(b_exp(n, alpha * n, gamma) > b_lap(n, alpha * n, gamma) * (1.0 + REL_TOL))
    return int(n[bad[0]]) if bad.size else None


def _n_grid(n_max: int, n_points: int) -> np.ndarray:
    return np.unique(np.round(np.geomspace(2, n_max, n_points)).astype(np.int64))


def _comparison_failures(n: np.ndarray, alpha: np.ndarray, gamma: np.ndarray,
                         extra: dict[str, np.ndarray]) -> tuple[np.ndarray, list[dict[str, Any]]]:
    """Check ``B_Exp <= B_Lap (1 + REL_TOL)`` on the instances ``(n, α, γ)``; one failure record each."""
    be, bl = b_exp(n, alpha * n, gamma), b_lap(n, alpha * n, gamma)
    ok = be <= bl * (1.0 + REL_TOL)
    failures = [{"size": int(n[i]), "gamma": float(gamma[i]), "alpha": float(alpha[i]),
                 "n_edges": float(alpha[i] * n[i]), "B_exp": float(be[i]), "B_lap": float(bl[i]),
                 **{k: float(v[i]) for k, v in extra.items()}}
                for i in np.flatnonzero(~ok)]
    return ok, failures


@dataclass(frozen=True)
class BoundComparisonLambert:
    """Seed 002 §3.5 Theorem 3.5.1: with ``|E| = α n``, ``n = |V| - 1``,
    ``α >= α*(n, γ) = (γ/n) e^{W(ln h_{n,γ})}`` implies ``B_Exp,ε,γ <= B_Lap,ε,γ`` (Cor 3.4.1's PAMST bound
    below Thm 3.2.1's Laplace bound).  ``quantity="always"``, deterministic grid.

    Forms:

    - ``"statement"``: the threshold of the theorem's statement, ``e^{W(ln h)}``;
    - ``"proof"``: the proof's last line, ``α* = (γ/n) e^{W(h_{n,γ})}`` (erratum E15), evaluated in float64
      as printed.  ``h`` overflows float64 once ``ln h > 709.78`` (n >= 30 at γ = 0.5, n >= 5 at γ = 0.05);
      :meth:`hypotheses` then names the points (no verdict).  Where it evaluates it is astronomically larger
      than the statement's threshold, and larger than ``(n+1)/2``, the density of the complete graph: no
      simple graph satisfies that hypothesis, so the check holds vacuously.

    Instances: every ``n`` of a log-spaced integer grid on ``[2, n_max]`` (``n_points`` points) times every
    ``γ`` of ``gammas`` times three densities: ``α*`` itself (the hardest point, the comparison being monotone
    in ``α``), ``α*(1 + 1e-6)`` ("slightly above") and ``⌈α* n⌉/n`` (the sparsest graph the hypothesis
    admits).  The comparison runs in float64 with the relative tolerance :data:`REL_TOL` (1e-12): at ``α*``
    the true margin is Robbins' slack (Lemma 3.5.1, ``≈ 1/(360 n^3)``), below float64 resolution for
    ``n >~ 1000``, so at ``α*`` the check confirms the threshold to 1e-12, not the sign of that slack.
    Failures carry ``size = n``.  The statement's proof also says ``g(x) = x ln x`` is non-decreasing on
    ``R+`` (E14: it decreases on ``(0, 1/e)``); harmless, since ``αn/γ >= 1``.
    """

    gammas: tuple[float, ...] = (0.5, 0.1, 0.05, 0.01)
    n_max: int = 1_000_000
    n_points: int = 60
    form: str = "statement"
    name = "seed 002 Theorem 3.5.1 (B_Exp <= B_Lap above the Lambert-W density threshold)"
    quantity = "always"
    direction = "at_least"
    level = None
    deterministic = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "gammas", _reals("gammas", self.gammas))
        _integer("n_max", self.n_max, 2)
        _integer("n_points", self.n_points, 1)
        _choice("form", self.form, ("statement", "proof"))

    @property
    def statement(self) -> str:
        thr = "e^{W(ln h)}" if self.form == "statement" else "e^{W(h)} (the proof's last line, E15)"
        text = (f"|E| = α n >= (γ/n) {thr} n implies B_Exp <= B_Lap (relative tolerance {REL_TOL:g}), for "
                f"n = |V|-1 on a log grid of [2, {self.n_max}] ({self.n_points} points), γ in "
                f"{list(self.gammas)}, at α = α*, α*(1+1e-6) and ceil(α* n)/n")
        if self.form == "proof" and not self.hypotheses():
            n, g = self._instances_base()
            dense = int(np.sum(alpha_star_proof(n, g) > (n + 1) / 2))
            text += (f"; at {dense} of {n.size} (n, γ) points α* exceeds (n+1)/2, the density of the complete "
                     "graph (no simple graph satisfies the hypothesis there)")
        return text

    @property
    def parameters(self) -> dict[str, Any]:
        d = asdict(self)
        d["gammas"] = list(self.gammas)
        return d

    @property
    def size(self) -> int:
        return self.n_max

    def _instances_base(self) -> tuple[np.ndarray, np.ndarray]:
        grid = _n_grid(self.n_max, self.n_points).astype(np.float64)
        n, g = np.meshgrid(grid, np.asarray(self.gammas), indexing="ij")
        return n.ravel(), g.ravel()

    def threshold(self, n: Any, gamma: Any) -> Any:
        """The form's ``α*(n, γ)``."""
        return alpha_star(n, gamma) if self.form == "statement" else alpha_star_proof(n, gamma)

    def hypotheses(self) -> list[str]:
        problems = _gamma_problems(self.gammas)
        if problems or self.form == "statement":
            return problems
        n, g = self._instances_base()
        bad = np.flatnonzero(~np.isfinite(alpha_star_proof(n, g)))
        if bad.size:
            i = int(bad[0])
            lh = float(log_h(n[i], g[i]))
            la = _log_alpha_star_proof(float(n[i]), float(g[i]))
            reach = [f"n <= {k}" if k else "no n >= 2" for k in map(_proof_form_reach, self.gammas)]
            problems.append(
                f"form='proof': the proof's threshold (γ/n) e^{{W(h)}} (E15) overflows float64 at {bad.size} of "
                f"{n.size} grid points, first n = {int(n[i])}, γ = {g[i]:g}: h = e^{lh:.1f} > 1.8e308, and in log "
                f"space α* = e^{la:.1f}, far above (n+1)/2 = {(n[i] + 1) / 2:g}, the density of the complete "
                f"graph -- the proof's last line drops the ln of the statement's e^{{W(ln h)}}; use "
                f"form='statement', or only the points where it evaluates ("
                + ", ".join(f"γ = {gm:g}: {r}" for gm, r in zip(self.gammas, reach)) + ")")
        return problems

    def bound(self) -> float:
        return 1.0

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, list[dict[str, Any]]]:
        nn, gg = self._instances_base()
        a0 = self.threshold(nn, gg)
        a_int = np.ceil(a0 * nn) / nn
        n3, g3 = np.tile(nn, 3), np.tile(gg, 3)
        a3 = np.concatenate([a0, a0 * (1.0 + 1e-6), a_int])
        return _comparison_failures(n3, a3, g3, {"alpha_star": np.tile(a0, 3)})


@dataclass(frozen=True)
class BoundComparisonDensity:
    """Seed 002 §3.5 Theorem 3.5.2: ``α >= 3`` implies ``B_Exp,ε,γ <= B_Lap,ε,γ`` for
    every ``γ`` (``form="theorem"``), and the abstract's claim that PAMST "will always
    outperform the Laplace mechanism when |E| >= 2(|V|-1)", i.e. ``α >= 2`` (``form="abstract"``, erratum E1).
    ``quantity="always"``, deterministic.

    Instances: ``α = α_0`` (3 or 2; the hardest density the hypothesis admits -- the comparison is monotone in
    ``α``) at every ``n`` of a log-spaced integer grid on ``[2, n_max]`` times every ``γ`` of ``gammas``; in
    addition every integer ``n`` in ``[2, n_max]`` is scanned (:func:`first_failing_n`) and the first failing
    ``n`` of each ``γ`` is added, so the smallest counterexample reported is exact.  The check is the
    inequality between the two formulas at real ``α``, also at ``n`` where no simple graph reaches ``α_0``
    (``α_0 > (n+1)/2``: n < 5 for α = 3, n < 3 for α = 2).  Failures carry ``size = n``.
    Measured (``α = 2``): the first failing ``n`` is 53 (γ = 0.5), 288 (0.1), 583 (0.05), 2946 (0.01), 29545
    (0.001), and every larger ``n`` fails (the exact threshold grows to 3 as ``n -> ∞``).
    """

    gammas: tuple[float, ...] = (0.5, 0.1, 0.05, 0.01, 0.001)
    n_max: int = 1_000_000
    n_points: int = 60
    form: str = "theorem"
    name = "seed 002 Theorem 3.5.2 / abstract (B_Exp <= B_Lap above a fixed density)"
    quantity = "always"
    direction = "at_least"
    level = None
    deterministic = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "gammas", _reals("gammas", self.gammas))
        _integer("n_max", self.n_max, 2)
        _integer("n_points", self.n_points, 1)
        _choice("form", self.form, ("theorem", "abstract"))

    @property
    def alpha(self) -> float:
        return 3.0 if self.form == "theorem" else 2.0

    @property
    def statement(self) -> str:
        where = "Thm 3.5.2" if self.form == "theorem" else "the abstract (E1)"
        return (f"|E| >= {self.alpha:g}(|V|-1) implies B_Exp <= B_Lap ({where}; relative tolerance {REL_TOL:g}), "
                f"at α = {self.alpha:g}, every integer n = |V|-1 in [2, {self.n_max}] scanned (log grid of "
                f"{self.n_points} points + the first failing n), γ in {list(self.gammas)}")

    @property
    def parameters(self) -> dict[str, Any]:
        d = asdict(self)
        d["gammas"] = list(self.gammas)
        return d

    @property
    def size(self) -> int:
        return self.n_max

    def hypotheses(self) -> list[str]:
        return _gamma_problems(self.gammas)

    def bound(self) -> float:
        return 1.0

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, list[dict[str, Any]]]:
        grid = _n_grid(self.n_max, self.n_points)
        ns, gs = [], []
        for g in self.gammas:
            first = first_failing_n(self.alpha, g, self.n_max)
            pts = grid if first is None else np.union1d(grid, [first])
            ns.append(pts)
            gs.append(np.full(pts.size, g))
        nn, gg = np.concatenate(ns).astype(np.float64), np.concatenate(gs)
        return _comparison_failures(nn, np.full(nn.size, self.alpha), gg, {})


# --------------------------------------------------------------------------------------------------
# §4.2: order preservation under the graph-based Laplace mechanism
# --------------------------------------------------------------------------------------------------

def pair_failure(s: Any) -> Any:
    """``P(Y1 - Y2 > t) = 1 - F_{Y1+Y2}(t) = e^{-s}(1/2 + s/4)`` for ``Y_i`` i.i.d. ``Lap(1/ε)``, ``s = εt >= 0``
    (App. A.3 (ii); Eq 4.2 with its sign fixed, E17)."""
    s = np.asarray(s, dtype=np.float64)
    return np.exp(-s) * (0.5 + s / 4.0)


def _log_cdf(x: np.ndarray) -> np.ndarray:
    """``ln F(x)`` of the standard Laplace law (scale 1)."""
    return np.where(x < 0, math.log(0.5) + np.minimum(x, 0.0), np.log1p(-0.5 * np.exp(-np.maximum(x, 0.0))))


def two_block_probability(a: int, b: int, s: float) -> float:
    """``P(max of a i.i.d. Lap(1) < s + min of b i.i.d. Lap(1))``: two blocks of ``a`` and ``b`` edges at two
    weight levels ``εt = s`` apart stay ordered under the graph Laplace mechanism.

    Numerical integration over the block-1 maximum ``m``: ``∫ a F(m)^{a-1} f(m) (1 - F(m - s))^b dm``, in
    log space, with breakpoints at the Laplace kinks and at the modes of both extremes.
    """
    la, lb = math.log(a), math.log(b)

    def integrand(m: float) -> float:
        x = np.asarray(m, dtype=np.float64)
        return float(np.exp(la + (a - 1) * _log_cdf(x) + math.log(0.5) - np.abs(x) + b * _log_cdf(s - x)))

    lo, hi = -40.0 - lb, s + 40.0 + la
    pts = sorted({0.0, s, max(la - math.log(2.0), 0.0), s - max(lb - math.log(2.0), 0.0)})
    value, _ = integrate.quad(integrand, lo, hi, points=[p for p in pts if lo < p < hi], limit=500,
                              epsabs=1e-13, epsrel=1e-11)
    return float(min(max(value, 0.0), 1.0))


def full_order_probability(m: int, s: float, step: float = 2e-3) -> float:
    """``P(Y_1 < s + Y_2 < 2s + Y_3 < ... < (m-1)s + Y_m)`` for i.i.d. ``Lap(1)``: ``m`` edges at equally spaced
    weights (gap ``s = εt``) keep their whole order.  Chain recursion ``φ_k(y) = f(y - ks) ∫_{-∞}^y φ_{k-1}`` on a
    grid whose nodes include every kink ``ks`` (trapezoid, error ``O(step²)``; about 1e-6 at the default)."""
    if m == 1:
        return 1.0
    h = s / math.ceil(s / step) if s > 0 else step
    lo, hi = -40.0, (m - 1) * s + 40.0
    y = lo + h * np.arange(int(math.ceil((hi - lo) / h)) + 1)
    phi = 0.5 * np.exp(-np.abs(y))
    for k in range(1, m):
        cum = integrate.cumulative_trapezoid(phi, y, initial=0.0)
        phi = 0.5 * np.exp(-np.abs(y - k * s)) * cum
    return float(min(max(integrate.trapezoid(phi, y), 0.0), 1.0))


def _block_bound(form: str, sizes: tuple[int, ...], s: float) -> float:
    a, b = np.asarray(sizes[:-1], dtype=np.float64), np.asarray(sizes[1:], dtype=np.float64)
    if form == "printed":
        return float(1.0 - np.sum(pair_failure(s) * (a + b - 1.0)))
    if form == "pairwise":
        return float(1.0 - np.sum(pair_failure(s) * a * b))
    return float(1.0 - np.sum((a + b) * 0.5 * math.exp(-s / 2.0)))


def _two_block_scan(a: int, b: int, s: np.ndarray, step: float = 0.01) -> np.ndarray:
    """:func:`two_block_probability` for many ``s`` at once (trapezoid on a fixed grid; error ~1e-5)."""
    m = np.arange(-40.0 - math.log(b), float(s.max()) + 40.0 + math.log(a), step)
    head = math.log(a) + (a - 1) * _log_cdf(m) + math.log(0.5) - np.abs(m)
    return integrate.trapezoid(np.exp(head[None, :] + b * _log_cdf(s[:, None] - m[None, :])), m, axis=1)


def worst_gap(a: int, b: int, form: str = "printed") -> float:
    """The ``s = εt`` minimising ``P(order kept) - bound`` for two blocks of ``a`` and ``b`` edges: a scan of
    ``s`` in ``[0.5, 40]`` (:func:`_two_block_scan`) refined by a bounded minimisation of the exact
    difference (:func:`two_block_probability`); the hardest gap for the printed Thm 4.2.1."""
    grid = np.geomspace(0.5, 40.0, 120)
    d = _two_block_scan(a, b, grid) - np.array([_block_bound(form, (a, b), s) for s in grid])
    i = int(np.argmin(d))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    res = optimize.minimize_scalar(lambda s: two_block_probability(a, b, s) - _block_bound(form, (a, b), s),
                                   bounds=(lo, hi), method="bounded", options={"xatol": 1e-3})
    return float(res.x)


def _path_graph(weights: np.ndarray) -> WeightedGraph:
    """A path with one edge per weight (the topology is irrelevant: the noise is i.i.d. per edge)."""
    m = weights.size
    edges = np.column_stack([np.arange(m), np.arange(1, m + 1)])
    return WeightedGraph.from_arrays(m + 1, edges, weights)


def _chunks(n: int, m: int) -> list[int]:
    per = max(1, _CHUNK_ENTRIES // max(m, 1))
    return [min(per, n - i) for i in range(0, n, per)]


_BLOCK_FORMS: tuple[str, ...] = ("printed", "pairwise", "half_gap")


@dataclass(frozen=True)
class BlockOrderPreservation:
    """Seed 002 §4.2 Theorem 4.2.1 (poster Prop 3): for edge blocks ``E_1, ..., E_K``
    (``K > 1``) with every weight of ``E_i`` below every weight of ``E_j`` for ``i < j`` (Eq 4.1), Eq 4.1 still
    holds on ``G' = M_GbL(G, ε)`` with probability greater than
    ``1 - Σ_i exp(-t_i ε)(1/2 + t_i ε/4)(|E_i| + |E_{i+1}| - 1)``, ``t_i = min_{e∈E_i, e'∈E_{i+1}} w(e') - w(e)``.

    Forms (the bound; the event is always "Eq 4.1 holds after noise"):

    - ``"printed"``: Thm 4.2.1 as printed (``E_i + E_{i+1} - 1`` read as ``|E_i| + |E_{i+1}| - 1``) -- false
      (E19): keeping ``E_i`` below ``E_{i+1}`` involves ``|E_i||E_{i+1}|`` pairs, while Eq 4.3 only covers the
      adjacent pairs of the full order;
    - ``"pairwise"``: replacement (a), the union bound over all pairs,
      ``1 - Σ_i |E_i||E_{i+1}| e^{-εt}(1/2 + εt/4)`` (valid);
    - ``"half_gap"``: replacement (b), ``1 - Σ_i (|E_i| + |E_{i+1}|)(1/2) e^{-εt/2}`` (valid: a pair can only
      swap if one of its two noises crosses the midpoint of the gap).

    Inputs (the hardest ones): block ``i`` has ``sizes[i]`` edges, all at weight ``i·t``, so the minimum gap
    ``t`` is attained by all ``|E_i||E_{i+1}|`` pairs.  ``t=None`` (printed form, two blocks only) takes the gap
    that minimises ``P - bound`` (:func:`worst_gap`).  The sampler is the graph Laplace mechanism as coded
    (:func:`algorithms.graph.laplace_mst.graph_laplace`, scale ``1/ε``) on a path graph carrying the blocks;
    :meth:`exact` integrates numerically for two blocks (:func:`two_block_probability`).
    Smallest counterexample of the printed form: ``|E_1| = |E_2| = 2`` at ``εt ≈ 5.63`` (``P = 0.97866`` vs
    ``0.97954``); with a block of size 1, ``|E_1| + |E_2| - 1 = |E_1||E_2|`` and the printed bound is the valid
    pairwise one (exactly tight for ``1, 1``: ``P = F_{Y1+Y2}(t)``, so "greater than" fails as an equality).
    """

    epsilon: float = 1.0
    t: float | None = None
    sizes: tuple[int, ...] = (2, 2)
    form: str = "printed"
    name = "seed 002 Theorem 4.2.1 (block order preserved by the graph Laplace mechanism)"
    quantity = "probability"
    direction = "at_least"
    level = None

    def __post_init__(self) -> None:
        _positive("epsilon", self.epsilon)
        if isinstance(self.sizes, (str, bytes)) or not hasattr(self.sizes, "__iter__"):
            raise ValueError(f"sizes must be a list of block sizes, got {self.sizes!r}")
        sizes = tuple(_integer(f"sizes[{i}]", k, 1) for i, k in enumerate(self.sizes))
        if not sizes:
            raise ValueError("sizes must hold at least one block size")
        object.__setattr__(self, "sizes", sizes)
        _choice("form", self.form, _BLOCK_FORMS)
        if self.t is None:
            if self.form != "printed" or len(sizes) != 2:
                raise ValueError("t=None (the worst gap) is defined for form='printed' with two blocks; give t")
            object.__setattr__(self, "t", worst_gap(sizes[0], sizes[1]) / self.epsilon)
        else:
            _real("t", self.t)

    @property
    def gap(self) -> float:
        assert self.t is not None
        return float(self.t)

    @property
    def statement(self) -> str:
        what = {"printed": "e^{-εt}(1/2 + εt/4)(|E_i| + |E_{i+1}| - 1) (as printed)",
                "pairwise": "|E_i||E_{i+1}| e^{-εt}(1/2 + εt/4) (replacement (a))",
                "half_gap": "(|E_i| + |E_{i+1}|)(1/2) e^{-εt/2} (replacement (b))"}[self.form]
        return (f"P(every edge of E_i stays below every edge of E_(i+1) after Lap(1/ε) noise) >= 1 - Σ_i {what}; "
                f"blocks of sizes {list(self.sizes)} at weights 0, t, 2t, ..., t = {self.gap:.6g}, "
                f"ε = {self.epsilon:g} (εt = {self.epsilon * self.gap:.6g})")

    @property
    def parameters(self) -> dict[str, Any]:
        d = asdict(self)
        d["sizes"] = list(self.sizes)
        return d

    @property
    def size(self) -> int:
        return int(sum(self.sizes))

    def hypotheses(self) -> list[str]:
        problems = []
        if len(self.sizes) < 2:
            problems.append(f"K = {len(self.sizes)} block: the theorem needs K > 1 blocks; give two sizes or more")
        if self.gap <= 0:
            problems.append(f"t = {self.gap:g} <= 0: Eq 4.1 needs every weight of E_i strictly below every weight "
                            "of E_(i+1); use t > 0")
        return problems

    def bound(self) -> float:
        return _block_bound(self.form, self.sizes, self.epsilon * self.gap)

    def exact(self) -> float | None:
        if len(self.sizes) != 2:
            return None
        return two_block_probability(self.sizes[0], self.sizes[1], self.epsilon * self.gap)

    def weights(self) -> np.ndarray:
        """Edge weights: block ``i`` at ``i·t``."""
        return np.repeat(self.gap * np.arange(len(self.sizes), dtype=np.float64), self.sizes)

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        graph = _path_graph(self.weights())
        starts = np.concatenate([[0], np.cumsum(self.sizes)[:-1]])
        out = []
        for k in _chunks(n, graph.n_edges):
            noisy = graph_laplace(graph, 1.0 / self.epsilon, k, rng)
            top = np.maximum.reduceat(noisy, starts, axis=1)
            bottom = np.minimum.reduceat(noisy, starts, axis=1)
            out.append(np.all(top[:, :-1] < bottom[:, 1:], axis=1))
        return np.concatenate(out) if out else np.zeros(0, dtype=bool)


@dataclass(frozen=True)
class FullOrderPreservation(FieldParameters):
    """Seed 002 §4.2 Eq (4.3) (Proof 4.2.1): for the weight-sorted edges
    ``e_1, ..., e_|E|`` and ``G' = M_GbL(G, ε)``,
    ``P(∃i: w'(e_i) > w'(e_{i+1})) <= (1 - F_{Y1+Y2}(min_i gap_i)) (|E| - 1)``, i.e. the whole order survives
    with probability at least ``1 - (|E| - 1) e^{-εg}(1/2 + εg/4)``, ``g`` the minimum adjacent gap.

    Forms: ``"corrected"`` -- the gap ``w(e_{i+1}) - w(e_i)`` (sign fixed, E18) and App. A.3's CDF (sign of
    Eq 4.2 fixed, E17); ``"printed"`` -- ``min_i {w(e_i) - w(e_{i+1})} = -(largest gap)`` as printed, with the
    true CDF (by symmetry ``F(-x) = 1 - F(x)``): the bound ``1 - (|E|-1) F(largest gap)`` is <= 0 (vacuous)
    for ``|E| >= 3``.  Inputs (the hardest): ``n_edges`` weights ``0, g, 2g, ...``, so every adjacent pair is
    at the minimum gap; the graph Laplace mechanism as coded on a path graph.  :meth:`exact`: the chain
    integral :func:`full_order_probability`.
    """

    epsilon: float = 1.0
    gap: float = 3.0
    n_edges: int = 10
    form: str = "corrected"
    name = "seed 002 Eq 4.3 (whole weight order preserved by the graph Laplace mechanism)"
    quantity = "probability"
    direction = "at_least"
    level = None

    def __post_init__(self) -> None:
        _positive("epsilon", self.epsilon)
        _real("gap", self.gap)
        _integer("n_edges", self.n_edges, 1)
        _choice("form", self.form, ("corrected", "printed"))

    @property
    def statement(self) -> str:
        arg = "g" if self.form == "corrected" else "-g (the printed min{w(e_i) - w(e_(i+1))}, E18)"
        return (f"P(w'(e_1) < ... < w'(e_|E|)) >= 1 - (|E|-1)(1 - F_(Y1+Y2)({arg})), |E| = {self.n_edges} "
                f"edges at weights 0, g, 2g, ..., g = {self.gap:g}, ε = {self.epsilon:g}")

    @property
    def size(self) -> int:
        return self.n_edges

    def hypotheses(self) -> list[str]:
        if self.gap <= 0:
            return [f"gap = {self.gap:g} <= 0: the edges must have distinct sorted weights; use gap > 0"]
        return []

    def bound(self) -> float:
        s = self.epsilon * self.gap
        fail = float(pair_failure(s)) if self.form == "corrected" else 1.0 - float(pair_failure(s))
        return 1.0 - (self.n_edges - 1) * fail

    def exact(self) -> float:
        return full_order_probability(self.n_edges, self.epsilon * self.gap)

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        graph = _path_graph(self.gap * np.arange(self.n_edges, dtype=np.float64))
        out = [np.all(np.diff(graph_laplace(graph, 1.0 / self.epsilon, k, rng), axis=1) > 0, axis=1)
               for k in _chunks(n, graph.n_edges)]
        return np.concatenate(out) if out else np.zeros(0, dtype=bool)


# --------------------------------------------------------------------------------------------------
# §4.1: Claim 4.1.1, clusters (Def 4.1.1) are closed under MST paths
# --------------------------------------------------------------------------------------------------

def _floyd(adj: np.ndarray) -> np.ndarray:
    d = adj.copy()
    np.fill_diagonal(d, 0.0)
    for k in range(d.shape[0]):
        d = np.minimum(d, d[:, k:k + 1] + d[k:k + 1, :])
    return d


def _bits(k: int) -> np.ndarray:
    """``(2^k, k)`` bool: row ``S`` is the membership vector of the subset with bitmask ``S``."""
    return ((np.arange(1 << k)[:, None] >> np.arange(k)) & 1).astype(bool)


def _clusters(d: np.ndarray, ties: str) -> np.ndarray:
    """Which non-empty subsets ``C`` (bitmasks of ``0..k-1``) satisfy Def 4.1.1 on the dataset with metric ``d``:
    for every split ``C = C1 ⊎ C2`` (both non-empty), the point of ``D - C1`` nearest to ``C1`` lies in ``C2`` --
    ``ties="all"``: every nearest point does; ``ties="some"``: at least one does."""
    k = d.shape[0]
    member = _bits(k)
    full = (1 << k) - 1
    # distance of every point to every subset S (inf for S empty), then the nearest outside points of S
    dist = np.where(member[:, None, :], d[None, :, :], np.inf).min(axis=2)
    outside = np.where(member, np.inf, dist)
    best = outside.min(axis=1, keepdims=True)
    nearest = (outside == best) & np.isfinite(best)
    near_mask = (nearest * (1 << np.arange(k))).sum(axis=1)
    s = np.arange(1 << k)[:, None]
    c = np.arange(1 << k)[None, :]
    proper = ((s & c) == s) & (s != 0) & (s != c)
    good = (near_mask[:, None] & ~c & full) == 0 if ties == "all" else (near_mask[:, None] & c) != 0
    return np.all(good | ~proper, axis=0) & (c[0] != 0)


def find_path_violation(graph: WeightedGraph, metric: str = "graph", tree: str = "induced", ties: str = "all",
                        datasets: str = "all") -> dict[str, Any] | None:
    """Brute force Claim 4.1.1 on one graph: for every dataset ``D ⊂ V`` (``datasets="all"``: every subset with
    >= 2 nodes; ``"full"``: ``D = V``) and every cluster ``C ⊂ D`` (Def 4.1.1, :func:`_clusters`), check that
    ``C`` induces a connected subtree of the MST ``T_D`` (every ``T_D`` path between two points of ``C`` stays
    in ``C``).  Returns the first violation found (smallest ``|D|``, then smallest ``C``) or ``None``.

    ``metric``: ``"graph"`` -- ``d`` = shortest paths in ``G`` (Def 4.1.1 as printed); ``"dataset"`` -- shortest
    paths in ``G[D]``.  ``tree``: ``"induced"`` -- ``T_D`` = the MST of ``G[D]`` (Proof 4.1.1); ``"closure"`` -- the
    MST of the complete graph on ``D`` weighted by ``d``.  Datasets ``D`` whose ``G[D]`` is disconnected are
    skipped when ``G[D]`` is needed (the proof assumes it connected).  MSTs by
    :func:`algorithms.graph.mst.mst_edges` (one MST when weights tie).
    """
    v = graph.n_nodes
    adj = np.full((v, v), np.inf)
    adj[graph.edges[:, 0], graph.edges[:, 1]] = graph.weights
    adj[graph.edges[:, 1], graph.edges[:, 0]] = graph.weights
    d_graph = _floyd(adj)
    masks = [(1 << v) - 1] if datasets == "full" else sorted(range(1 << v), key=lambda x: (bin(x).count("1"), x))
    for dmask in masks:
        nodes = np.flatnonzero((dmask >> np.arange(v)) & 1)
        k = nodes.size
        if k < 3:  # |D| <= 2: every cluster is a single point or D itself
            continue
        sub = adj[np.ix_(nodes, nodes)]
        iu, ju = np.triu_indices(k, 1)
        keep = np.isfinite(sub[iu, ju])
        induced = WeightedGraph.from_arrays(k, np.column_stack([iu[keep], ju[keep]]), sub[iu, ju][keep])
        if (metric == "dataset" or tree == "induced") and not induced.is_connected():
            continue
        d = d_graph[np.ix_(nodes, nodes)] if metric == "graph" else _floyd(sub)
        t_graph = induced if tree == "induced" else WeightedGraph.complete(k, d[iu, ju])
        t_edges = t_graph.edges[mst_edges(t_graph)]
        is_cluster = _clusters(d, ties)
        cm = np.arange(1 << k)
        inside = ((cm[:, None] >> t_edges[:, 0]) & 1) & ((cm[:, None] >> t_edges[:, 1]) & 1)
        closed = inside.sum(axis=1) == _bits(k).sum(axis=1) - 1
        bad = np.flatnonzero(is_cluster & ~closed & (_bits(k).sum(axis=1) >= 2))
        if bad.size:
            cmask = int(bad[0])
            return {"dataset": nodes.tolist(), "cluster": nodes[_bits(k)[cmask]].tolist(),
                    "tree": nodes[t_edges].tolist()}
    return None


def _random_connected_graph(n_nodes: int, p: float, weights: str, levels: int,
                            rng: np.random.Generator) -> WeightedGraph:
    """A random recursive spanning tree on a random labelling plus every other pair with probability ``p``;
    weights i.i.d. ``U(0, 1]`` (``"uniform"``) or uniform integers ``1..levels`` (``"integer"``, ties)."""
    v = n_nodes
    iu, ju = np.triu_indices(v, 1)
    index = np.full((v, v), -1, dtype=np.int64)
    index[iu, ju] = np.arange(iu.size)
    index[ju, iu] = np.arange(iu.size)
    present = rng.random(iu.size) < p
    label = rng.permutation(v)
    for j in range(1, v):
        present[index[label[j], label[rng.integers(j)]]] = True
    m = int(present.sum())
    w = 1.0 - rng.random(m) if weights == "uniform" else rng.integers(1, levels + 1, size=m).astype(np.float64)
    return WeightedGraph.from_arrays(v, np.column_stack([iu[present], ju[present]]), w)


@dataclass(frozen=True)
class ClusterPathClosure(FieldParameters, Property):
    """Seed 002 §4.1 Claim 4.1.1 ([XOX02]) with Definition 4.1.1: if
    ``c1, c2`` belong to a cluster ``C`` (Def 4.1.1), every point on the MST path between them is in ``C``.
    ``quantity="always"`` on random connected graphs (one instance = one graph, all its datasets and
    clusters enumerated by :func:`find_path_violation`; failures carry ``size = |V|``).

    Readings (erratum E21: ``d`` lives on ``G`` while Proof 4.1.1's ``T_D`` is the MST of ``G[D]``, and the
    argmin of Def 4.1.1 may not be unique):

    - ``metric="graph"``, ``tree="induced"`` -- the report's (Def 4.1.1's metric, Proof 4.1.1's tree).  False:
      a shortcut through a node outside ``D`` can make two far-apart (in ``G[D]``) points a cluster.
    - ``metric="graph"``, ``tree="closure"`` or ``metric="dataset"``, ``tree="induced"`` -- consistent
      readings; the proof goes through (with the cut property of MSTs, which it does not state) under
      ``ties="all"``.
    - ``datasets="full"`` (``D = V``): all readings coincide.
    - ``ties="all"`` (every nearest point must lie in ``C2``) or ``"some"`` (one suffices); they differ only
      when distances tie (``weights="integer"``), and under ``"some"`` the claim can fail for the MST chosen.

    Graphs: :func:`_random_connected_graph` (``n_nodes`` vertices, extra edges with probability ``p``).
    """

    n_nodes: int = 5
    p: float = 0.5
    weights: str = "uniform"
    levels: int = 3
    metric: str = "graph"
    tree: str = "induced"
    ties: str = "all"
    datasets: str = "all"
    name = "seed 002 Claim 4.1.1 (clusters of Def 4.1.1 are closed under MST paths)"
    level = None

    def __post_init__(self) -> None:
        if _integer("n_nodes", self.n_nodes, 2) > _CLUSTER_MAX_NODES:
            raise ValueError(f"n_nodes must be <= {_CLUSTER_MAX_NODES} (every subset is enumerated), "
                             f"got {self.n_nodes}")
        if not 0.0 <= _real("p", self.p) <= 1.0:
            raise ValueError(f"p must lie in [0, 1], got {self.p!r}")
        _choice("weights", self.weights, ("uniform", "integer"))
        _integer("levels", self.levels, 1)
        _choice("metric", self.metric, ("graph", "dataset"))
        _choice("tree", self.tree, ("induced", "closure"))
        _choice("ties", self.ties, ("all", "some"))
        _choice("datasets", self.datasets, ("all", "full"))

    @property
    def statement(self) -> str:
        metric = "shortest paths in G" if self.metric == "graph" else "shortest paths in G[D]"
        tree = "the MST of G[D]" if self.tree == "induced" else "the MST of (D, d)"
        data = "every D ⊂ V" if self.datasets == "all" else "D = V"
        wts = "U(0,1]" if self.weights == "uniform" else f"integers 1..{self.levels} (ties)"
        return (f"every cluster C ⊂ D (Def 4.1.1, d = {metric}, argmin ties: {self.ties}) is closed under the "
                f"paths of T_D = {tree}; {data}; random connected graphs with |V| = {self.n_nodes}, "
                f"p = {self.p:g}, {wts} weights")

    @property
    def size(self) -> int:
        return self.n_nodes

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, list[dict[str, Any]]]:
        ok = np.ones(n, dtype=bool)
        failures = []
        for r in range(n):
            g = _random_connected_graph(self.n_nodes, self.p, self.weights, self.levels, rng)
            found = find_path_violation(g, self.metric, self.tree, self.ties, self.datasets)
            if found is not None:
                ok[r] = False
                failures.append({"size": self.n_nodes, "edges": g.edges.tolist(), "weights": g.weights.tolist(),
                                 **found})
        return ok, failures
