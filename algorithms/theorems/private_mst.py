"""Seed 002's private-MST utility theorems as checkable objects (the protocol of :mod:`dpverify.theorems.check`).

Source: seed 002, Pinot, "Nodes clustering in a graph under differential privacy" (the PAMST report),
report numbering; its errata E7, E9, E10, E13, E17 are explained where they are used.

=============================  ==========================================================================
class                          statement (report numbering)
=============================  ==========================================================================
:class:`LaplaceAccuracy`       Thm 1.4.1 ([DMNS06]): ``P[‖f(x) - y‖∞ >= (Δ1/ε) ln(k/γ)] <= γ``
:class:`LaplaceMSTError`       Thm 3.2.1 ([Sea16]): ``P[Error_G(T') >= (2(|V|-1)/ε) ln(|E|/γ)] <= γ``
:class:`PAMSTPerStepError`     Thm 3.4.2: ``w(T) - w* < 2(|V|-1)/(|E|ε) ((|V|-1) ln((|V|-1)/γ) + Σ ln|R_i|)``
                               with probability ``>= 1 - γ``, ``w* = Σ_i min_{R_i} w``
:class:`PAMSTError`            Cor 3.4.1: ``Error_G(T) <= 2(|V|-1)/(|E|ε) ((|V|-1) ln((|V|-1)/γ) + 2 ln((|V|-1)!))``
:class:`PrimRangeFacts`        Prop 3.4.1 (``w* <= w(T*)``), Lemma 3.4.1, ``|R_i| <= i(|V|-i)`` (Proof 3.4.5):
                               random graphs and random or PAMST orders
:class:`PrimRangeFactsExhaustive`  the same on every small graph, integer weight vector and vertex order
:class:`LaplaceSumCDF`         App. A.3 (ii) ``F_{Y1+Y2}(x) = 1 - e^{-εx}(1/2 + εx/4)`` and the printed Eq 4.2
=============================  ==========================================================================

``Error_G(T) = w(T) - w(T*)`` is Definition 3.2.1 (the true weight of the released topology minus the MST
weight).  The algorithms are the reference implementations: :class:`algorithms.classic.laplace.Laplace`,
:class:`algorithms.graph.laplace_mst.LaplaceMST` (Sealfon: ``Lap(1/ε)`` per edge for the ℓ1 neighbourhood of
radius 1, then an exact MST) and :class:`algorithms.graph.pamst.PAMST`.  Thm 3.4.2 needs each run's ranges
``R_i``, which PAMST does not expose: :func:`prim_like_runs` is an instrumented, vectorised sampler of the same
law (tested against :func:`algorithms.graph.pamst.pamst_pmf`) that also returns ``min_{R_i} w`` and ``|R_i|``.

PAMST's utility sensitivity (erratum E7): the proof of Thm 3.4.2 uses ``Δu_G = 1/|E|`` (weights normalised so
that their "maximum global variation" is 1), which the statements of Thm 3.4.2 and Cor 3.4.1 do not say.
``calibration="normalised"`` runs PAMST with ``sensitivity = 1/|E|`` (the proof's reading, the default);
``calibration="unit"`` runs it with ``Δu = 1`` (Def 3.3.1's ``Δu_G = 1``, the value of ``PAMST(epsilon)`` for
ℓ∞ radius 1) against the printed bound, which keeps the ``1/|E|`` factor -- the mismatch E7 predicts.

Graph inputs (suites cannot spell a graph): ``topology`` (one of
:data:`algorithms.graph.examples.TOPOLOGIES`, built by :func:`algorithms.graph.examples.topology`),
``n_nodes``, ``p`` and ``graph_seed`` (random topology), and ``weights``:

- ``"two_level"``: a planted spanning tree (the breadth-first tree from vertex 0: the star of ``K_n``) at
  weight 0, every other edge at ``spread``: every wrong edge costs exactly ``spread``;
- ``"uniform"``: i.i.d. ``U(0, spread)`` (seed 002 Sec. 3.6 uses ``U(0, 10)``), drawn with ``graph_seed``;
- ``"integer"``: i.i.d. uniform integers ``0..round(spread)`` (ties), drawn with ``graph_seed``.

``quantity="probability"`` checks the statement as printed (the frequency of the bad event against ``γ``);
``quantity="quantile"`` checks the ``(1-γ)``-quantile of the error (Thm 3.2.1, Cor 3.4.1) or of
``(w(T) - w*)/RHS`` (Thm 3.4.2, bound 1) instead, which shows *how* loose the bound is in its own units.
(For a continuous error the two readings are equivalent; with atoms the quantile reading is slightly weaker:
it allows ``P(Error = bound) > 0``.)
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from ..classic.laplace import Laplace
from ..graph.examples import TOPOLOGIES, topology
from ..graph.laplace_mst import LaplaceMST, batched_mst
from ..graph.mst import mst_edges
from ..graph.pamst import PAMST
from ..graph.pamst_exact import pamst_log_pmf
from ..graph.weighted_graph import WeightedGraph
from .base import FieldParameters, Property
from .params import (
    real as _real,
    positive as _positive,
    integer as _integer,
    choice as _choice,
)

__all__ = [
    "PrimRuns",
    "prim_like_runs",
    "mst_graph",
    "LaplaceAccuracy",
    "LaplaceMSTError",
    "PAMSTPerStepError",
    "PAMSTError",
    "PrimRangeFacts",
    "PrimRangeFactsExhaustive",
    "LaplaceSumCDF",
    "WEIGHT_SCHEMES",
]

#: Weight schemes of :func:`mst_graph`.
WEIGHT_SCHEMES: tuple[str, ...] = ("two_level", "uniform", "integer")
_QUANTITIES: tuple[str, ...] = ("probability", "quantile")
_CALIBRATIONS: tuple[str, ...] = ("normalised", "unit")
_CLAIMS: tuple[str, ...] = ("prop_3_4_1", "lemma_3_4_1", "range_size")
#: Working-array budget (entries of a ``(runs, edges)`` array) of the batched samplers.
_CHUNK_ENTRIES: int = 1 << 21
#: Largest graph (vertices) on which :meth:`PAMSTError.exact` enumerates the exact PAMST law.
_EXACT_MAX_NODES: int = 7
#: Largest number of (graph, weight vector) instances :class:`PrimRangeFactsExhaustive` accepts.
_EXHAUSTIVE_MAX_INSTANCES: int = 2_000_000


# --------------------------------------------------------------------------------------------------
# parameter checks (malformed parameters raise; parameters outside a theorem's hypotheses do not)
# --------------------------------------------------------------------------------------------------

def _gamma_problems(gamma: float) -> list[str]:
    if not 0.0 < gamma <= 1.0:
        return [f"gamma = {gamma:g} is outside (0, 1], the range the theorem is stated for; use 0 < gamma <= 1"]
    return []


# --------------------------------------------------------------------------------------------------
# inputs and the instrumented sampler
# --------------------------------------------------------------------------------------------------

def mst_graph(topology_kind: str, n_nodes: int, weights: str, spread: float, p: float = 0.5,
              graph_seed: int = 0) -> WeightedGraph:
    """The graph a theorem entry runs on (module docstring, "Graph inputs")."""
    base = topology(topology_kind, n_nodes, 0.0, p=p, seed=graph_seed)
    m = base.n_edges
    if weights == "uniform":
        w = np.random.default_rng(graph_seed).uniform(0.0, spread, size=m)
    elif weights == "integer":
        w = np.random.default_rng(graph_seed).integers(0, int(round(spread)) + 1, size=m).astype(np.float64)
    else:  # two_level: breadth-first spanning tree from vertex 0 at weight 0
        indptr, nbr, eid = base.adjacency
        seen = np.zeros(n_nodes, dtype=bool)
        seen[0] = True
        low = np.zeros(m, dtype=bool)
        frontier = [0]
        while frontier:
            nxt = []
            for v in frontier:
                for u, e in zip(nbr[indptr[v]:indptr[v + 1]].tolist(), eid[indptr[v]:indptr[v + 1]].tolist()):
                    if not seen[u]:
                        seen[u] = True
                        low[e] = True
                        nxt.append(u)
            frontier = nxt
        w = np.where(low, 0.0, float(spread))
    return base.with_weights(w)


@dataclass(frozen=True)
class PrimRuns:
    """Instrumented Prim-like runs: per run and step ``i = 1..|V|-1`` (columns ``0..|V|-2``)."""

    order: np.ndarray       #: ``(runs, |V|-1)`` chosen edge ids, in selection order
    range_min: np.ndarray   #: ``(runs, |V|-1)`` ``min_{r in R_i} w(r)`` (the step's OPT, up to sign)
    range_size: np.ndarray  #: ``(runs, |V|-1)`` ``|R_i|``


def prim_like_runs(edges: np.ndarray, n_nodes: int, weights: np.ndarray, c: float | np.ndarray,
                   starts: np.ndarray, rng: np.random.Generator, present: np.ndarray | None = None) -> PrimRuns:
    """Runs of the Prim-like process of PAMST (seed 002 Algorithm 1; seed 001 Algorithm 2), instrumented.

    At step ``i`` the range ``R_i`` is the cut of the current vertex set ``S_i`` (edges with exactly one end
    in ``S_i``, among the ``present`` ones) and the edge ``r`` is drawn with probability
    ``∝ exp(-c (w(r) - min_{R_i} w))`` -- PAMST's exponential mechanism with ``c = ε/((|V|-1)·2Δu)``
    (:meth:`algorithms.graph.pamst.PAMST.coefficient`); ``c = 0`` gives a uniformly random Prim-like order.
    One uniform per run and step, inverse CDF (the law of :func:`algorithms.graph.pamst.pamst_batched`).

    ``weights``: ``(m,)`` shared or ``(runs, m)`` per run (entries of absent edges are ignored); ``c``: a
    number or ``(runs,)``; ``starts``: ``(runs,)`` start vertices; ``present``: ``None`` (every edge) or a
    ``(runs, m)`` bool mask (per-run subgraphs of a common edge list, each connected).
    """
    edges = np.asarray(edges, dtype=np.int64)
    eu, ev = edges[:, 0], edges[:, 1]
    m = edges.shape[0]
    starts = np.asarray(starts, dtype=np.int64)
    runs = starts.shape[0]
    w_all = np.broadcast_to(np.asarray(weights, dtype=np.float64), (runs, m))
    c_all = np.broadcast_to(np.asarray(c, dtype=np.float64), (runs,))
    steps = n_nodes - 1
    order = np.empty((runs, steps), dtype=np.int64)
    range_min = np.empty((runs, steps))
    range_size = np.empty((runs, steps), dtype=np.int64)
    chunk = max(1, _CHUNK_ENTRIES // max(m, n_nodes, 1))
    for lo in range(0, runs, chunk):
        hi = min(runs, lo + chunk)
        k = hi - lo
        rows = np.arange(k)
        w = w_all[lo:hi]
        cc = c_all[lo:hi, None]
        mask = None if present is None else present[lo:hi]
        in_s = np.zeros((k, n_nodes), dtype=bool)
        in_s[rows, starts[lo:hi]] = True
        for i in range(steps):
            cut = in_s[:, eu] != in_s[:, ev]
            if mask is not None:
                cut &= mask
            wmin = np.where(cut, w, np.inf).min(axis=1)
            prob = np.where(cut, np.exp(-cc * np.where(cut, w - wmin[:, None], 0.0)), 0.0)
            cum = np.cumsum(prob, axis=1)
            u = rng.random(k) * cum[:, -1]
            last = m - 1 - np.argmax(cut[:, ::-1], axis=1)       # guards u == cum[-1] (rounding)
            e = np.minimum(np.count_nonzero(cum <= u[:, None], axis=1), last)
            order[lo:hi, i] = e
            range_min[lo:hi, i] = wmin
            range_size[lo:hi, i] = cut.sum(axis=1)
            in_s[rows, eu[e]] = True
            in_s[rows, ev[e]] = True
    return PrimRuns(order, range_min, range_size)


# --------------------------------------------------------------------------------------------------
# Theorem 1.4.1 and App. A.3: the Laplace mechanism
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class LaplaceAccuracy(FieldParameters):
    """Seed 002 §1.4 Theorem 1.4.1 ([DMNS06]): for ``y = M_L(x, f, ε)`` with
    ``f: N^|X| -> R^k`` of ℓ1 sensitivity ``Δ1``, ``P[‖f(x) - y‖∞ >= (Δ1/ε) ln(k/γ)] <= γ`` for all
    ``γ in (0, 1]``.

    Run on :class:`algorithms.classic.laplace.Laplace` with ``f(x) = 0 in R^k`` (the noise does not depend on
    ``f(x)``).  Exact value: each ``|Y_j|`` exceeds ``b ln(k/γ)`` with probability ``γ/k``, so the event has
    probability ``1 - (1 - γ/k)^k <= γ``, with equality at ``k = 1`` (the bound is tight there: expect an
    inconclusive verdict) and slack about ``(k-1)γ²/(2k)`` for small ``γ``.
    """

    epsilon: float = 1.0
    k: int = 1
    gamma: float = 0.5
    sensitivity: float = 1.0
    name = "seed 002 Theorem 1.4.1 (Laplace accuracy)"
    quantity = "probability"
    direction = "at_most"
    level = None

    def __post_init__(self) -> None:
        _positive("epsilon", self.epsilon)
        _integer("k", self.k, 1)
        _real("gamma", self.gamma)
        _positive("sensitivity", self.sensitivity)

    @property
    def statement(self) -> str:
        return (f"P[ ||f(x) - M_L(x)||_inf >= (Δ1/ε) ln(k/γ) ] <= γ for the Laplace mechanism, k = {self.k} "
                f"outputs, Δ1 = {self.sensitivity:g}, ε = {self.epsilon:g}, γ = {self.gamma:g}")

    @property
    def size(self) -> int:
        return self.k

    def hypotheses(self) -> list[str]:
        return _gamma_problems(self.gamma)

    def threshold(self) -> float:
        """``(Δ1/ε) ln(k/γ)``."""
        return self.sensitivity / self.epsilon * math.log(self.k / self.gamma)

    def bound(self) -> float:
        return float(self.gamma)

    def exact(self) -> float:
        return 1.0 - (1.0 - self.gamma / self.k) ** self.k

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        y = Laplace(self.epsilon, self.sensitivity)(np.zeros(self.k), n, rng)
        return np.abs(y).max(axis=1) >= self.threshold()


@dataclass(frozen=True)
class LaplaceSumCDF(FieldParameters):
    """Seed 002 App. A.3 (ii): for ``Y1, Y2`` i.i.d. ``Lap(1/ε)``
    and ``x >= 0``, ``F_{Y1+Y2}(x) = 1 - e^{-εx}(1/2 + εx/4)`` (``form="appendix"``, the correct formula);
    and the same identity as printed in §4.2 Eq (4.2) for ``t > 0``, ``1 - e^{+εx}(1/2 + εx/4)``
    (``form="printed"``, erratum E17; it is below 1/2 - and negative from ``εx ≈ 0.479`` - so it cannot be this CDF).

    Direction ``"equal"`` on ``P(Y1 + Y2 <= x)``, with ``Y1, Y2`` the noise of
    :class:`algorithms.classic.laplace.Laplace` (sensitivity 1); :meth:`exact` is the true CDF (the appendix
    formula, which also integrates App. A.3 (i)'s density ``(ε/4)(1 + ε|u|)e^{-ε|u|}``).
    """

    epsilon: float = 1.0
    x: float = 1.0
    form: str = "appendix"
    name = "seed 002 App. A.3 / Eq. 4.2 (CDF of a sum of two Laplace variables)"
    quantity = "probability"
    direction = "equal"
    level = None

    def __post_init__(self) -> None:
        _positive("epsilon", self.epsilon)
        _real("x", self.x)
        _choice("form", self.form, ("appendix", "printed"))

    @property
    def statement(self) -> str:
        sign = "-" if self.form == "appendix" else "+"
        return (f"P(Y1 + Y2 <= x) = 1 - exp({sign}εx)(1/2 + εx/4), Y_i iid Lap(1/ε) ({self.form} form), "
                f"ε = {self.epsilon:g}, x = {self.x:g}")

    def hypotheses(self) -> list[str]:
        if self.form == "appendix" and self.x < 0:
            return [f"x = {self.x:g} < 0: App. A.3 (ii) states the CDF for x >= 0 only; use x >= 0"]
        if self.form == "printed" and self.x <= 0:
            return [f"x = {self.x:g} <= 0: Eq. 4.2 is stated for t > 0 only; use x > 0"]
        return []

    def bound(self) -> float:
        ex = self.epsilon * self.x
        sign = -1.0 if self.form == "appendix" else 1.0
        return 1.0 - math.exp(sign * ex) * (0.5 + ex / 4.0)

    def exact(self) -> float:
        ex = self.epsilon * abs(self.x)
        upper = math.exp(-ex) * (0.5 + ex / 4.0)        # P(Y1 + Y2 > |x|), by symmetry
        return 1.0 - upper if self.x >= 0 else upper

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        y = Laplace(self.epsilon, 1.0)(np.zeros(2), n, rng)
        return y.sum(axis=1) <= self.x


# --------------------------------------------------------------------------------------------------
# graph theorems: shared parameters
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _GraphTheorem(FieldParameters):
    epsilon: float = 1.0
    gamma: float = 0.5
    topology: str = "complete"
    n_nodes: int = 6
    weights: str = "two_level"
    spread: float = 1.0
    p: float = 0.5
    graph_seed: int = 0
    quantity: str = "probability"
    direction = "at_most"

    def __post_init__(self) -> None:
        _positive("epsilon", self.epsilon)
        _real("gamma", self.gamma)
        _choice("topology", self.topology, TOPOLOGIES)
        _integer("n_nodes", self.n_nodes, 2)
        _choice("weights", self.weights, WEIGHT_SCHEMES)
        if _real("spread", self.spread) < 0:
            raise ValueError(f"spread must be >= 0, got {self.spread!r}")
        if not 0.0 <= _real("p", self.p) <= 1.0:
            raise ValueError(f"p must lie in [0, 1], got {self.p!r}")
        _integer("graph_seed", self.graph_seed, 0)
        _choice("quantity", self.quantity, _QUANTITIES)

    @property
    def size(self) -> int:
        return self.n_nodes

    @property
    def level(self) -> float | None:
        return 1.0 - self.gamma if self.quantity == "quantile" else None

    @cached_property
    def graph(self) -> WeightedGraph:
        return mst_graph(self.topology, self.n_nodes, self.weights, self.spread, self.p, self.graph_seed)

    @cached_property
    def mst_weight(self) -> float:
        return float(self.graph.weights[mst_edges(self.graph)].sum())

    def _graph_text(self) -> str:
        g = self.graph
        return (f"{self.topology} graph, |V| = {g.n_nodes}, |E| = {g.n_edges}, {self.weights} weights "
                f"(spread {self.spread:g}), ε = {self.epsilon:g}, γ = {self.gamma:g}")

    def hypotheses(self) -> list[str]:
        return _gamma_problems(self.gamma)


def _tree_weights(graph: WeightedGraph, trees: np.ndarray) -> np.ndarray:
    """True weight of each tree: ``(runs,)`` int64 bitmask codes or ``(runs, |V|-1)`` edge ids."""
    if trees.ndim == 1:
        bits = (trees[:, None] >> np.arange(graph.n_edges)) & 1
        return bits @ graph.weights
    return graph.weights[trees].sum(axis=1)


@dataclass(frozen=True)
class LaplaceMSTError(_GraphTheorem):
    """Seed 002 §3.2 Theorem 3.2.1 ([Sea16]): for ``T'`` the MST topology of
    ``G' = M_GbL(G, ε)`` (``Lap(1/ε)`` on every weight, ℓ1 neighbourhood of radius 1),
    ``P[Error_G(T') >= (2(|V|-1)/ε) ln(|E|/γ)] <= γ``; ``Error_G`` is Def. 3.2.1.

    Run on :class:`algorithms.graph.laplace_mst.LaplaceMST` (``epsilon``, the default ℓ1 radius 1).  The proof
    bounds the error by ``2(|V|-1) max_e |Y_e|``, which no input attains: the hardest inputs found
    (``K_n`` with two weight levels, the gap at 2-6 noise scales) reach a ``(1-γ)``-quantile of a tenth (large
    ``K_n``) to a quarter (the triangle, small ``γ``) of the bound: a swap costs ``2 max|Y|`` only when two
    independent noises are both extreme.
    """

    name = "seed 002 Theorem 3.2.1 (Sealfon's Laplace MST error)"

    @property
    def statement(self) -> str:
        what = ("P[Error_G(T') >= B] <= γ" if self.quantity == "probability"
                else "the (1-γ)-quantile of Error_G(T') is <= B")
        return (f"{what}, B = (2(|V|-1)/ε) ln(|E|/γ), T' the MST of the Laplace-noised graph (Lap(1/ε)); "
                f"{self._graph_text()}")

    def bound_value(self) -> float:
        """``B = (2(|V|-1)/ε) ln(|E|/γ)``."""
        g = self.graph
        return 2.0 * (g.n_nodes - 1) / self.epsilon * math.log(g.n_edges / self.gamma)

    def bound(self) -> float:
        return float(self.gamma) if self.quantity == "probability" else self.bound_value()

    def errors(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``Error_G(T')`` of ``n`` runs."""
        trees = LaplaceMST(self.epsilon)(self.graph, n, rng)
        return _tree_weights(self.graph, trees) - self.mst_weight

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        err = self.errors(n, rng)
        return err >= self.bound_value() if self.quantity == "probability" else err


@dataclass(frozen=True)
class _PAMSTTheorem(_GraphTheorem):
    calibration: str = "normalised"

    def __post_init__(self) -> None:
        super().__post_init__()
        _choice("calibration", self.calibration, _CALIBRATIONS)

    @property
    def mechanism(self) -> PAMST:
        """PAMST with a uniform start and ``Δu = 1/|E|`` (``"normalised"``) or ``1`` (``"unit"``)."""
        du = 1.0 / self.graph.n_edges if self.calibration == "normalised" else 1.0
        return PAMST(self.epsilon, sensitivity=du)

    def _pamst_text(self) -> str:
        du = "1/|E|" if self.calibration == "normalised" else "1"
        return f"PAMST with Δu = {du} ({self.calibration}), uniform start; {self._graph_text()}"

    def rhs_constant(self) -> float:
        """``2(|V|-1)/(|E|ε) · (|V|-1) ln((|V|-1)/γ)``, the part of the bound that does not depend on ``R_i``."""
        g = self.graph
        k = g.n_nodes - 1
        return 2.0 * k / (g.n_edges * self.epsilon) * k * math.log(k / self.gamma)

    def range_coefficient(self) -> float:
        """``2(|V|-1)/(|E|ε)``, the factor of ``Σ ln|R_i|``."""
        g = self.graph
        return 2.0 * (g.n_nodes - 1) / (g.n_edges * self.epsilon)


@dataclass(frozen=True)
class PAMSTPerStepError(_PAMSTTheorem):
    """Seed 002 §3.4 Theorem 3.4.2: with probability at least ``1 - γ``,
    ``w(T) - w* < 2(|V|-1)/(|E|ε) ((|V|-1) ln((|V|-1)/γ) + Σ_i ln|R_i|)``, ``w* = Σ_i min_{r in R_i} w(r)``,
    ``R_i`` the (random) range of the ``i``-th exponential-mechanism call.

    The report does not introduce ``γ`` (erratum E9): read ``γ in (0, 1]``.  The proof uses ``Δu_G = 1/|E|``
    (E7): ``calibration`` (module docstring).  Checked: the frequency of ``w(T) - w* >= RHS`` (both sides
    random) is ``<= γ`` (``quantity="probability"``), or the ``(1-γ)``-quantile of ``(w(T) - w*)/RHS`` is
    ``<= 1`` (``"quantile"``), on runs of :func:`prim_like_runs` with PAMST's coefficient.
    """

    name = "seed 002 Theorem 3.4.2 (PAMST error w.r.t. the per-step optima)"

    @property
    def statement(self) -> str:
        rhs = "2(|V|-1)/(|E|ε)((|V|-1)ln((|V|-1)/γ) + Σ ln|R_i|)"
        what = (f"P[w(T) - w* >= {rhs}] <= γ" if self.quantity == "probability"
                else f"the (1-γ)-quantile of (w(T) - w*)/({rhs}) is <= 1")
        return f"{what}, w* = Σ_i min_(R_i) w; {self._pamst_text()}"

    def bound(self) -> float:
        return float(self.gamma) if self.quantity == "probability" else 1.0

    def runs(self, n: int, rng: np.random.Generator) -> PrimRuns:
        """``n`` instrumented PAMST runs (uniform start, PAMST's coefficient)."""
        g = self.graph
        c = self.mechanism.coefficient(g)
        return prim_like_runs(g.edges, g.n_nodes, g.weights, c, rng.integers(g.n_nodes, size=n), rng)

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        r = self.runs(n, rng)
        excess = self.graph.weights[r.order].sum(axis=1) - r.range_min.sum(axis=1)
        rhs = self.rhs_constant() + self.range_coefficient() * np.log(r.range_size).sum(axis=1)
        if self.quantity == "probability":
            return excess >= rhs
        return np.divide(excess, rhs, out=np.zeros_like(excess), where=rhs > 0)


@dataclass(frozen=True)
class PAMSTError(_PAMSTTheorem):
    """Seed 002 §3.4 Corollary 3.4.1: with probability (at least,
    E10) ``1 - γ``,
    ``Error_G(T) <= 2(|V|-1)/(|E|ε) ((|V|-1) ln((|V|-1)/γ) + 2 ln((|V|-1)!))`` for ``T = PAMST(G, w, ε)``
    (the report's "(V-1)!" is ``(|V|-1)!``, E10).

    Run on :class:`algorithms.graph.pamst.PAMST` (uniform start; ``calibration``, module docstring).  The
    checked event is ``Error_G(T) > B`` (the complement of the claimed ``<=``).  :meth:`exact` sums the exact
    PAMST law (:func:`algorithms.graph.pamst_exact.pamst_log_pmf`) over the trees with ``Error > B`` on graphs
    of at most 7 vertices.
    """

    name = "seed 002 Corollary 3.4.1 (PAMST error bound)"

    @property
    def statement(self) -> str:
        b = "2(|V|-1)/(|E|ε)((|V|-1)ln((|V|-1)/γ) + 2 ln((|V|-1)!))"
        what = (f"P[Error_G(T) > {b}] <= γ" if self.quantity == "probability"
                else f"the (1-γ)-quantile of Error_G(T) is <= {b}")
        return f"{what}; {self._pamst_text()}"

    def bound_value(self) -> float:
        k = self.graph.n_nodes - 1
        return self.rhs_constant() + self.range_coefficient() * 2.0 * math.lgamma(k + 1)

    def bound(self) -> float:
        return float(self.gamma) if self.quantity == "probability" else self.bound_value()

    def errors(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``Error_G(T)`` of ``n`` PAMST runs."""
        trees = self.mechanism.trees(self.graph, n, rng)
        return self.graph.weights[trees].sum(axis=1) - self.mst_weight

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        err = self.errors(n, rng)
        return err > self.bound_value() if self.quantity == "probability" else err

    def exact(self) -> float | None:
        g = self.graph
        if self.quantity != "probability" or g.n_nodes > _EXACT_MAX_NODES:
            return None
        trees, log_p = pamst_log_pmf(g, self.mechanism.coefficient(g))
        err = g.weights[trees].sum(axis=1) - self.mst_weight
        return float(np.exp(log_p)[err > self.bound_value()].sum())


# --------------------------------------------------------------------------------------------------
# Prop 3.4.1, Lemma 3.4.1 and |R_i| <= i(|V|-i): deterministic facts about every run
# --------------------------------------------------------------------------------------------------

def _pair_index(n: int) -> np.ndarray:
    """``(n, n)`` index of the pair ``{a, b}`` in ``np.triu_indices(n, 1)`` order (-1 on the diagonal)."""
    idx = -np.ones((n, n), dtype=np.int64)
    u, v = np.triu_indices(n, 1)
    idx[u, v] = idx[v, u] = np.arange(u.size)
    return idx


def _violations(claim: str, n: int, steps_min: np.ndarray, steps_size: np.ndarray, cut_t: np.ndarray,
                incident_t: np.ndarray, mst_w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per instance (rows; trailing axis = steps ``i = 1..n-1``): ``(ok, lhs, rhs)`` of ``claim``, which says
    ``lhs <= rhs`` (at the worst step).

    ``prop_3_4_1``: ``w* = Σ_i min_{R_i} w <= w(T*)`` (up to a relative 1e-9 for rounding);
    ``lemma_3_4_1``: ``R_i`` holds ``>= 1`` edge of ``T*`` (``cut_t``: how many) and ``I_i`` (the edges incident
    to ``S_i``) ``>= i`` (``incident_t``) -- lhs/rhs are the needed and the found count;
    ``range_size``: ``|R_i| <= i(n - i)``.
    """
    i = np.arange(1, n)
    if claim == "prop_3_4_1":
        w_star = steps_min.sum(axis=-1)
        ok = w_star <= mst_w + 1e-9 * (1.0 + np.abs(mst_w))
        return ok, w_star, np.broadcast_to(mst_w, w_star.shape)
    if claim == "lemma_3_4_1":
        need = np.concatenate([np.ones_like(cut_t), np.broadcast_to(i, incident_t.shape)], axis=-1)
        found = np.concatenate([cut_t, incident_t], axis=-1)
    else:
        need, found = steps_size, np.broadcast_to(i * (n - i), steps_size.shape)
    j = (need - found).argmax(axis=-1)[..., None]
    lhs = np.take_along_axis(need, j, axis=-1)[..., 0]
    rhs = np.take_along_axis(found, j, axis=-1)[..., 0]
    return lhs <= rhs, lhs, rhs


@dataclass(frozen=True)
class PrimRangeFacts(FieldParameters, Property):
    """Seed 002 §3.4 Proposition 3.4.1 (``w* <= w(T*)``), Lemma 3.4.1
    (every ``R_i`` holds an MST edge, ``I_i = ∪_{j<=i} R_j`` holds at least ``i``) and the inequality
    ``|R_i| <= i(|V|-i)`` of Proof 3.4.5 (docs/findings.md F23), on random instances: ``quantity="always"``.

    One instance = a random connected graph on ``n_nodes`` vertices (a random recursive spanning tree on a
    random labelling plus every other pair with probability ``p``), random weights (``"uniform"``: i.i.d.
    ``U(0, 1)``; ``"integer"``: i.i.d. ``0..levels-1``, ties) and one run: ``order="pamst"`` (PAMST's
    exponential mechanism with ``Δu = 1/|E|`` at ``epsilon``, via :func:`prim_like_runs`) or
    ``order="uniform"`` (each step a uniform edge of the cut: a uniformly random Prim-like order).  ``T*`` is
    the MST of :func:`algorithms.graph.laplace_mst.batched_mst` (Lemma 3.4.1 holds for every spanning tree).
    The proof of Prop. 3.4.1 is garbled (E13); the statement is true by a Hall argument (nested cuts, Hall's condition).
    """

    claim: str = "prop_3_4_1"
    n_nodes: int = 6
    p: float = 0.3
    weights: str = "integer"
    levels: int = 3
    order: str = "uniform"
    epsilon: float = 1.0
    name = "seed 002 Prop 3.4.1 / Lemma 3.4.1 / |R_i| <= i(|V|-i) (random instances)"
    direction = "at_most"
    level = None

    def __post_init__(self) -> None:
        _choice("claim", self.claim, _CLAIMS)
        if _integer("n_nodes", self.n_nodes, 2) > 28:
            raise ValueError(f"n_nodes must be <= 28 (the batched MST handles <= 400 edges), got {self.n_nodes}")
        if not 0.0 <= _real("p", self.p) <= 1.0:
            raise ValueError(f"p must lie in [0, 1], got {self.p!r}")
        _choice("weights", self.weights, ("uniform", "integer"))
        _integer("levels", self.levels, 1)
        _choice("order", self.order, ("uniform", "pamst"))
        _positive("epsilon", self.epsilon)

    @property
    def statement(self) -> str:
        what = {"prop_3_4_1": "w* = Σ_i min_(R_i) w <= w(T*)",
                "lemma_3_4_1": "each R_i holds an edge of T* and I_i holds >= i edges of T*",
                "range_size": "|R_i| <= i(|V|-i) at every step"}[self.claim]
        run = (f"PAMST runs (Δu = 1/|E|, ε = {self.epsilon:g})" if self.order == "pamst"
               else "uniformly random Prim-like orders")
        wts = "U(0,1)" if self.weights == "uniform" else f"integers 0..{self.levels - 1} (ties)"
        return f"{what}, on random connected graphs with |V| = {self.n_nodes}, p = {self.p:g}, {wts} weights, {run}"

    @property
    def size(self) -> int:
        return self.n_nodes

    def instances(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """``n`` random connected graphs as ``(present, weights)`` over the pairs of ``K_n_nodes``."""
        v = self.n_nodes
        pairs = v * (v - 1) // 2
        present = rng.random((n, pairs)) < self.p
        if v > 1:
            label = np.argsort(rng.random((n, v)), axis=1)
            rows = np.arange(n)[:, None]
            j = np.arange(1, v)
            parent = np.floor(rng.random((n, v - 1)) * j).astype(np.int64)
            present[rows, _pair_index(v)[label[:, 1:], np.take_along_axis(label, parent, axis=1)]] = True
        if self.weights == "uniform":
            w = rng.random((n, pairs))
        else:
            w = rng.integers(0, self.levels, size=(n, pairs)).astype(np.float64)
        return present, w

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, list[dict[str, Any]]]:
        v = self.n_nodes
        present, w = self.instances(n, rng)
        u_idx, v_idx = np.triu_indices(v, 1)
        edges = np.column_stack([u_idx, v_idx])
        m_inst = present.sum(axis=1)
        c = self.epsilon * m_inst / (2.0 * (v - 1)) if self.order == "pamst" else 0.0
        starts = rng.integers(v, size=n)
        runs = prim_like_runs(edges, v, w, c, starts, rng, present=present)
        kn = WeightedGraph.complete(v, np.zeros(edges.shape[0]))
        t_star = batched_mst(kn, np.where(present, w, np.inf))
        mst_w = np.take_along_axis(w, t_star, axis=1).sum(axis=1)
        # replay each run's vertex sets S_1, S_2, ... from its start and order
        rows = np.arange(n)
        in_s = np.zeros((n, v), dtype=bool)
        in_s[rows, starts] = True
        tu, tv = u_idx[t_star], v_idx[t_star]
        cut_t = np.empty((n, v - 1), dtype=np.int64)
        incident_t = np.empty((n, v - 1), dtype=np.int64)
        for i in range(v - 1):
            a, b = np.take_along_axis(in_s, tu, axis=1), np.take_along_axis(in_s, tv, axis=1)
            cut_t[:, i] = (a != b).sum(axis=1)
            incident_t[:, i] = (a | b).sum(axis=1)
            e = runs.order[:, i]
            in_s[rows, u_idx[e]] = True
            in_s[rows, v_idx[e]] = True
        ok, lhs, rhs = _violations(self.claim, v, runs.range_min, runs.range_size, cut_t, incident_t, mst_w)
        failures = [{"size": v, "edges": edges[present[r]].tolist(), "weights": w[r][present[r]].tolist(),
                     "order": edges[runs.order[r]].tolist(), "lhs": float(lhs[r]), "rhs": float(rhs[r])}
                    for r in np.flatnonzero(~ok)]
        return ok, failures


@dataclass(frozen=True)
class PrimRangeFactsExhaustive(FieldParameters, Property):
    """The claims of :class:`PrimRangeFacts` (Prop 3.4.1, Lemma 3.4.1, ``|R_i| <= i(|V|-i)``; seed 002 §3.4)
    on *every* instance of a tiny size: every connected graph on ``n_nodes`` labelled vertices, every weight
    vector in ``{0, ..., levels-1}^|E|`` (ties included) and every vertex order -- ``orders="prim"``: the
    orders PAMST can produce (each new vertex adjacent to the previous ones), ``orders="all"``: every
    permutation, i.e. every nested sequence ``S_1 ⊂ ... ⊂ S_{|V|-1}`` (the stronger statement a Hall argument
    proves).  Deterministic: one instance per (graph, weight vector), ``ok`` when every order passes; a
    failure names the first failing order.
    """

    claim: str = "prop_3_4_1"
    n_nodes: int = 4
    levels: int = 3
    orders: str = "prim"
    name = "seed 002 Prop 3.4.1 / Lemma 3.4.1 / |R_i| <= i(|V|-i) (exhaustive)"
    direction = "at_most"
    level = None
    deterministic = True

    def __post_init__(self) -> None:
        _choice("claim", self.claim, _CLAIMS)
        _integer("n_nodes", self.n_nodes, 2)
        _integer("levels", self.levels, 1)
        _choice("orders", self.orders, ("prim", "all"))
        pairs = self.n_nodes * (self.n_nodes - 1) // 2
        if (self.levels + 1) ** pairs > _EXHAUSTIVE_MAX_INSTANCES:
            raise ValueError(f"n_nodes = {self.n_nodes} with levels = {self.levels} gives up to "
                             f"{(self.levels + 1) ** pairs:,} (graph, weight) instances, more than "
                             f"{_EXHAUSTIVE_MAX_INSTANCES:,}; lower levels or n_nodes")

    @property
    def statement(self) -> str:
        what = {"prop_3_4_1": "w* = Σ_i min_(R_i) w <= w(T*)",
                "lemma_3_4_1": "each R_i holds an edge of T* and I_i holds >= i edges of T*",
                "range_size": "|R_i| <= i(|V|-i) at every step"}[self.claim]
        orders = "every Prim-like vertex order" if self.orders == "prim" else "every vertex permutation"
        return (f"{what}, on every connected graph with |V| = {self.n_nodes}, every weight vector in "
                f"{{0..{self.levels - 1}}}^|E| and {orders}")

    @property
    def size(self) -> int:
        return self.n_nodes

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, list[dict[str, Any]]]:
        """Every instance (``n`` and ``rng`` are unused: the grid is fixed)."""
        v, levels = self.n_nodes, self.levels
        u_idx, v_idx = np.triu_indices(v, 1)
        pairs = u_idx.size
        perms = np.array(list(itertools.permutations(range(v))), dtype=np.int64)
        prefix = np.bitwise_or.accumulate(np.left_shift(1, perms), axis=1)[:, :-1]     # S_1..S_{v-1}
        in_s = ((np.arange(1 << v)[:, None] >> np.arange(v)) & 1).astype(bool)
        oks: list[np.ndarray] = []
        failures: list[dict[str, Any]] = []
        for gmask in range(1, 1 << pairs):
            present = ((gmask >> np.arange(pairs)) & 1).astype(bool)
            ge = np.column_stack([u_idx[present], v_idx[present]])
            graph = WeightedGraph(v, ge, np.zeros(ge.shape[0]))
            if not graph.is_connected():
                continue
            nbr = np.zeros(v, dtype=np.int64)
            np.bitwise_or.at(nbr, ge[:, 0], np.left_shift(1, ge[:, 1]))
            np.bitwise_or.at(nbr, ge[:, 1], np.left_shift(1, ge[:, 0]))
            valid = np.ones(perms.shape[0], dtype=bool)
            if self.orders == "prim":
                valid = ((nbr[perms[:, 1:]] & prefix) != 0).all(axis=1)
            pv, orders = prefix[valid], perms[valid]
            cut = in_s[:, ge[:, 0]] != in_s[:, ge[:, 1]]                                   # (2^v, |E|)
            steps_size = cut.sum(axis=1)[pv]
            all_w = np.array(list(itertools.product(range(levels), repeat=ge.shape[0])), dtype=np.float64)
            for lo in range(0, all_w.shape[0], 4096):
                w = all_w[lo:lo + 4096]
                cut_min = np.where(cut[None], w[:, None, :], np.inf).min(axis=2)           # (W, 2^v)
                t_star = batched_mst(graph, w)
                t_in = np.moveaxis(cut[:, t_star], 0, 1)                                    # (W, 2^v, v-1)
                ends = in_s[:, ge[t_star, 0]] | in_s[:, ge[t_star, 1]]
                mst_w = np.take_along_axis(w, t_star, axis=1).sum(axis=1)
                sizes = np.broadcast_to(steps_size, (w.shape[0],) + pv.shape)
                ok, lhs, rhs = _violations(self.claim, v, cut_min[:, pv], sizes, t_in.sum(axis=2)[:, pv],
                                           np.moveaxis(ends.sum(axis=2), 0, 1)[:, pv], mst_w[:, None])
                good = ok.all(axis=1)
                oks.append(good)
                for r in np.flatnonzero(~good):
                    j = int(np.flatnonzero(~ok[r])[0])
                    failures.append({"size": v, "edges": ge.tolist(), "weights": w[r].tolist(),
                                     "order": orders[j].tolist(), "lhs": float(lhs[r, j]),
                                     "rhs": float(rhs[r, j])})
        return np.concatenate(oks), failures
