"""Classic differential-privacy facts the papers' algorithms rely on, as checkable objects.

The three papers (Pinot, Morvan, Yger, Gouy-Pailler, Atif, "Graph-based Clustering under Differential Privacy";
Pinot's report on private minimum spanning trees and MST clustering; Liebenow, Schütt et al., "DPM: Clustering
Sensitive Data through Separation") quote composition, post-processing and the exponential mechanism's accuracy
from Dwork & Roth (2014) and prove a structural fact (strong ⇒ weak homogeneity) in one line.  Their privacy
and utility theorems are checked elsewhere (``audits/graph.toml``, ``audits/theorems_*.toml``); the ledger of
every numbered statement (``docs/claims.md``) needs these too:

======================================  ================================================================
:class:`HomogeneityImplication`         Pinot et al. §3.2 **Proposition 3.1**: a strongly homogeneous cluster
                                        (Def 3.11) is weakly homogeneous (Def 3.10) -- brute force over every
                                        spanning tree of random small graphs and clusterings, plus the closed
                                        form :func:`algorithms.theorems.graph_clustering.strong_homogeneity`
                                        cross-checked against the definition.
:class:`ExponentialMechanismAccuracyReport`  Pinot's report §1.5 **Proposition 1.5.2** (Dwork & Roth Thm 3.11):
                                        ``P[u(M) <= OPT - (2Δu/ε)(ln|R| + t)] <= e^{-t}`` on the catalogue's
                                        exponential mechanism (random or hardest utilities) and on every step
                                        of a whole PAMST run (Algorithm 1 of the report).
:class:`SimpleComposition`              report **Prop 1.4.2** / Pinot et al. **Theorem 4** / DPM's sequential
                                        composition: ``k`` independent (ε_i, δ_i) releases, exact joint pmf.
:class:`AdaptiveComposition`            report **Prop 1.4.3**: the second release's ε chosen from the first
                                        output, exact joint pmf.
:class:`PostProcessed`                  report **Prop 1.4.1** / poster Prop 1 / Pinot et al. **Theorem 5**:
                                        ``h ∘ M`` for deterministic ``h``, exact pmf.
======================================  ================================================================

The composed mechanisms are built from :class:`LeakyRandomizedResponse`, k-ary randomized response that with
probability ``δ`` releases the input itself: exactly (ε, δ)-DP on every pair of distinct inputs (local DP), so
the exact audit (``dpverify.exact.exact_audit``, suite kind ``exact``) measures how much of the composed budget
is really spent -- the basic composition bound is attained for pure ε (``δ = 0``).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..classic.exponential import ExponentialMechanism, exponential_mechanism_pmf
from ..graph.pamst import PAMST
from ..graph.weighted_graph import WeightedGraph
from .base import FieldParameters, Property
from .graph_clustering import strong_homogeneity
from .params import choice as _choice, integer as _integer, positive as _positive, real as _real

__all__ = [
    "spanning_trees",
    "homogeneous_by_definition",
    "HomogeneityImplication",
    "ExponentialMechanismAccuracyReport",
    "LeakyRandomizedResponse",
    "SimpleComposition",
    "AdaptiveComposition",
    "PostProcessed",
]


# ------------------------------------------------------------------------------------------ Proposition 3.1
def spanning_trees(n_nodes: int, edges: np.ndarray) -> list[tuple[int, ...]]:
    """Every spanning tree of the graph ``(range(n_nodes), edges)`` as a sorted tuple of edge ids (brute force
    over ``(|V|-1)``-subsets with a union-find acyclicity test; meant for ``|E| <= 15``)."""
    m = len(edges)
    if m > 21:
        raise ValueError(f"spanning_trees enumerates edge subsets: use at most 21 edges, got {m}")
    out = []
    for subset in itertools.combinations(range(m), n_nodes - 1):
        parent = list(range(n_nodes))

        def find(a: int) -> int:
            while parent[a] != a:
                parent[a] = parent[parent[a]]
                a = parent[a]
            return a

        ok = True
        for e in subset:
            a, b = find(int(edges[e][0])), find(int(edges[e][1]))
            if a == b:
                ok = False
                break
            parent[a] = b
        if ok:
            out.append(subset)
    return out


def _separable(tree: tuple[int, ...], edges: np.ndarray, weights: np.ndarray, labels: np.ndarray,
               cluster: int) -> bool:
    """Def 3.10/3.11's inner condition for one tree ``T`` and one cluster ``C_i``: every cut edge ``e^(ij)`` of
    ``T`` at ``C_i`` satisfies ``H_{T|C_i}(e)`` of Def 3.9, ``α·max_{T|C_i} w < w(e)`` with ``α = max/min``,
    i.e. ``max² < w(e)·min`` (exact for integer weights).  No edge of ``T`` inside ``C_i``: vacuous."""
    inside = [e for e in tree if labels[edges[e][0]] == cluster and labels[edges[e][1]] == cluster]
    cut = [e for e in tree if (labels[edges[e][0]] == cluster) != (labels[edges[e][1]] == cluster)]
    if not inside or not cut:
        return True
    mx = max(weights[e] for e in inside)
    mn = min(weights[e] for e in inside)
    return all(mx * mx < weights[e] * mn for e in cut)


def homogeneous_by_definition(n_nodes: int, edges: np.ndarray, weights: np.ndarray, labels: np.ndarray,
                              cluster: int, trees: list[tuple[int, ...]] | None = None) -> tuple[bool, bool]:
    """``(strong, weak)`` for cluster ``C_i`` straight from Pinot et al. Defs 3.10 and 3.11: the condition of
    :func:`_separable` for *every* spanning tree (strong) and for every *minimum* spanning tree (weak, ties
    included: every tree of minimum total weight)."""
    trees = spanning_trees(n_nodes, edges) if trees is None else trees
    totals = [sum(weights[e] for e in t) for t in trees]
    best = min(totals)
    strong = all(_separable(t, edges, weights, labels, cluster) for t in trees)
    weak = all(_separable(t, edges, weights, labels, cluster) for t, tot in zip(trees, totals) if tot == best)
    return strong, weak


@dataclass(frozen=True)
class HomogeneityImplication(FieldParameters, Property):
    """Pinot et al. §3.2 **Proposition 3.1**: if cluster ``C_i`` is strongly homogeneous (Def 3.11: the
    homogeneous separability of Def 3.9 on every spanning tree) then it is weakly homogeneous (Def 3.10: on
    every minimum spanning tree).

    Each instance: a connected random graph on ``n_nodes`` nodes (a random recursive tree plus each other pair
    with probability ``density``), integer weights uniform in ``1..max_weight`` (small ranges make ties and
    strongly homogeneous clusters common), a random labelling into ``n_clusters`` non-empty clusters.  For
    every cluster the check computes both definitions by brute force over all spanning trees and fails the
    instance when (a) strong holds and weak does not (Proposition 3.1 false) or (b) the closed form
    :func:`algorithms.theorems.graph_clustering.strong_homogeneity` (used by the Theorem 13/14 checks)
    disagrees with Def 3.11.  ``weights="planted"`` draws intra-cluster weights in ``1..2`` and inter weights
    in ``3..max_weight`` so that strong homogeneity is frequent (the premise must occur for the check to say
    anything: the failures' dicts and :attr:`premise_rate` report how often it did).
    """

    n_nodes: int = 5
    n_clusters: int = 2
    density: float = 0.5
    max_weight: int = 6
    weights: str = "uniform"

    name: ClassVar[str] = "Pinot et al. Proposition 3.1 (strong homogeneity implies weak homogeneity)"
    deterministic: ClassVar[bool] = False
    WEIGHTS: ClassVar[tuple[str, ...]] = ("uniform", "planted")

    def __post_init__(self) -> None:
        _integer("n_nodes", self.n_nodes, 2)
        if self.n_nodes > 7:
            raise ValueError(f"n_nodes enumerates every spanning tree: use at most 7, got {self.n_nodes}")
        _integer("n_clusters", self.n_clusters, 1)
        if self.n_clusters > self.n_nodes:
            raise ValueError(f"n_clusters must be at most n_nodes = {self.n_nodes}, got {self.n_clusters}")
        _real("density", self.density)
        if not 0.0 <= self.density <= 1.0:
            raise ValueError(f"density must lie in [0, 1], got {self.density}")
        _integer("max_weight", self.max_weight, 1)
        _choice("weights", self.weights, self.WEIGHTS)
        if self.weights == "planted" and self.max_weight < 3:
            raise ValueError(f"weights='planted' draws inter weights in 3..max_weight: use max_weight >= 3, "
                             f"got {self.max_weight}")

    @property
    def statement(self) -> str:
        return ("every cluster that is strongly homogeneous (Def 3.11, all spanning trees) is weakly homogeneous "
                "(Def 3.10, all minimum spanning trees); and the closed form of strong homogeneity agrees with "
                f"Def 3.11 -- random graphs on {self.n_nodes} nodes, {self.n_clusters} clusters, "
                f"{self.weights} integer weights <= {self.max_weight}")

    @property
    def size(self) -> int:
        return self.n_nodes

    def _instance(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n = self.n_nodes
        pairs = {(int(rng.integers(v)), v) for v in range(1, n)}
        for u, v in itertools.combinations(range(n), 2):
            if (u, v) not in pairs and rng.random() < self.density:
                pairs.add((u, v))
        edges = np.array(sorted(pairs), dtype=np.int64)
        labels = np.concatenate([np.arange(self.n_clusters), rng.integers(self.n_clusters, size=n - self.n_clusters)])
        labels = labels[rng.permutation(n)]
        same = labels[edges[:, 0]] == labels[edges[:, 1]]
        if self.weights == "uniform":
            w = rng.integers(1, self.max_weight + 1, size=len(edges))
        else:
            w = np.where(same, rng.integers(1, 3, size=len(edges)), rng.integers(3, self.max_weight + 1, size=len(edges)))
        return edges, w.astype(np.int64), labels

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, list[dict[str, Any]]]:
        ok = np.ones(n, dtype=bool)
        failures: list[dict[str, Any]] = []
        for i in range(n):
            edges, w, labels = self._instance(rng)
            trees = spanning_trees(self.n_nodes, edges)
            graph = WeightedGraph.from_arrays(self.n_nodes, edges, w.astype(np.float64))
            closed = strong_homogeneity(graph, labels)
            canon = {int(c): k for k, c in enumerate(dict.fromkeys(labels.tolist()))}  # closed form's numbering
            wl = [int(x) for x in w]
            for c in range(self.n_clusters):
                strong, weak = homogeneous_by_definition(self.n_nodes, edges, wl, labels, c, trees)
                closed_ok = not any(p.startswith(f"cluster {canon[c]} ") for p in closed.problems)
                problem = ("strong but not weak" if strong and not weak
                           else "closed form disagrees with Def 3.11" if strong != closed_ok else None)
                if problem is not None:
                    ok[i] = False
                    failures.append({"size": self.n_nodes, "problem": problem, "cluster": c,
                                     "edges": edges.tolist(), "weights": wl, "labels": labels.tolist()})
        return ok, failures

    def premise_rate(self, n: int, seed: int = 0) -> float:
        """Fraction of (instance, cluster) cases that are strongly homogeneous, on ``n`` instances drawn as
        :meth:`sample` draws them: how often Proposition 3.1's premise occurs (the check is vacuous without)."""
        rng = np.random.default_rng(seed)
        hits = 0
        for _ in range(n):
            edges, w, labels = self._instance(rng)
            trees = spanning_trees(self.n_nodes, edges)
            wl = [int(x) for x in w]
            hits += sum(homogeneous_by_definition(self.n_nodes, edges, wl, labels, c, trees)[0]
                        for c in range(self.n_clusters))
        return hits / (n * self.n_clusters)


# ------------------------------------------------------------------------------------------ Proposition 1.5.2
@dataclass(frozen=True)
class ExponentialMechanismAccuracyReport(FieldParameters):
    """Pinot's report §1.5 **Proposition 1.5.2** (reformulation of Dwork & Roth Thm 3.11): for every ``t``,
    ``P[u(x, M_Exp(x, u, R, ε)) <= OPT_u(x) - (2Δu/ε)(ln|R| + t)] <= e^{-t}``.

    ``mechanism="catalogue"``: :class:`algorithms.classic.exponential.ExponentialMechanism` on ``n_candidates``
    utilities -- ``utilities="threshold"`` puts every non-optimal candidate exactly at the threshold (the
    hardest vector: the bound is within a factor ``1 + (|R|-1)e^{-t}/|R|`` of the truth), ``"random"`` draws
    them once from ``U(-3·scale·(ln|R| + t), 0)`` with ``graph_seed``.  ``exact()`` is the pmf.

    ``mechanism="pamst"``: one whole run of :class:`algorithms.graph.pamst.PAMST` (report Algorithm 1; total
    budget ``epsilon``, each of the ``|V|-1`` steps an exponential mechanism with ``ε/(|V|-1)`` and PAMST's own
    Δu) on the complete graph ``K_{n_candidates}`` with ``U(0, spread)`` weights (``graph_seed``).  The event
    is checked at step ``step`` (``|R_step|``, ``OPT`` and the threshold recomputed from the run's own ranges:
    the bound applies to each step conditionally on the past, hence unconditionally) -- or, with ``step = -1``,
    at *any* step, against the union bound ``min(1, (|V|-1)e^{-t})``.
    """

    t: float = 1.0
    epsilon: float = 1.0
    n_candidates: int = 100
    sensitivity: float = 1.0
    mechanism: str = "catalogue"
    utilities: str = "threshold"
    step: int = 0
    spread: float = 10.0
    graph_seed: int = 0

    name: ClassVar[str] = "Pinot report Proposition 1.5.2 (exponential mechanism accuracy)"
    quantity: ClassVar[str] = "probability"
    direction: ClassVar[str] = "at_most"
    MECHANISMS: ClassVar[tuple[str, ...]] = ("catalogue", "pamst")
    UTILITIES: ClassVar[tuple[str, ...]] = ("threshold", "random")

    def __post_init__(self) -> None:
        _real("t", self.t)
        _positive("epsilon", self.epsilon)
        _integer("n_candidates", self.n_candidates, 2)
        _positive("sensitivity", self.sensitivity)
        _choice("mechanism", self.mechanism, self.MECHANISMS)
        _choice("utilities", self.utilities, self.UTILITIES)
        _positive("spread", self.spread)
        _integer("graph_seed", self.graph_seed, 0)
        if self.mechanism == "pamst":
            if self.n_candidates > 12:
                raise ValueError(f"mechanism='pamst' runs on K_n with n = n_candidates: use at most 12, "
                                 f"got {self.n_candidates}")
            if not isinstance(self.step, int) or not -1 <= self.step < self.n_candidates - 1:
                raise ValueError(f"step must be -1 (any step) or a step index in [0, {self.n_candidates - 2}], "
                                 f"got {self.step!r}")

    @property
    def statement(self) -> str:
        where = (f"the catalogue's exponential mechanism, |R| = {self.n_candidates}, {self.utilities} utilities"
                 if self.mechanism == "catalogue" else
                 f"PAMST on K_{self.n_candidates}, " + ("any step (union bound)" if self.step < 0
                                                        else f"step {self.step}"))
        return f"P[u(M) <= OPT - (2Δu/ε)(ln|R| + t)] <= e^-t for {where}"

    @property
    def size(self) -> int:
        return self.n_candidates

    def hypotheses(self) -> list[str]:
        return []

    def bound(self) -> float:
        if self.mechanism == "pamst" and self.step < 0:
            return min(1.0, (self.n_candidates - 1) * math.exp(-self.t))
        return math.exp(-self.t)

    # -- catalogue EM ---------------------------------------------------------------------------------
    @property
    def scale(self) -> float:
        """``2Δu/ε`` of the catalogue mechanism."""
        return 2.0 * self.sensitivity / self.epsilon

    @property
    def threshold(self) -> float:
        """``OPT - (2Δu/ε)(ln|R| + t)`` with ``OPT = 0``."""
        return -self.scale * (math.log(self.n_candidates) + self.t)

    def utility_vector(self) -> np.ndarray:
        """The catalogue mechanism's utilities (``OPT = 0`` at candidate 0)."""
        if self.utilities == "threshold":
            u = np.full(self.n_candidates, min(self.threshold, 0.0))
        else:
            u = np.random.default_rng(self.graph_seed).uniform(3.0 * min(self.threshold, 0.0), 0.0, self.n_candidates)
        u[0] = 0.0
        return u

    def _em_event(self, chosen: np.ndarray) -> np.ndarray:
        u = self.utility_vector()
        return u[chosen] <= self.threshold + 1e-12 * self.scale

    def exact(self) -> float | None:
        if self.mechanism != "catalogue":
            return None
        pmf = exponential_mechanism_pmf(self.utility_vector(), self.epsilon, self.sensitivity)
        return float(pmf[self._em_event(np.arange(self.n_candidates))].sum())

    # -- PAMST ----------------------------------------------------------------------------------------
    def graph(self) -> WeightedGraph:
        """``K_{n_candidates}`` with ``U(0, spread)`` weights drawn with ``graph_seed``."""
        n = self.n_candidates
        edges = np.array(list(itertools.combinations(range(n), 2)), dtype=np.int64)
        w = np.random.default_rng(self.graph_seed).uniform(0.0, self.spread, len(edges))
        return WeightedGraph.from_arrays(n, edges, w)

    def _pamst_events(self, trees: np.ndarray, graph: WeightedGraph, pm: PAMST) -> np.ndarray:
        """``(runs, |V|-1)`` bool: did step ``i`` of each run pick a utility at or below its threshold."""
        runs, steps = trees.shape
        eu, ev = graph.edges[:, 0], graph.edges[:, 1]
        step_scale = 2.0 * pm.utility_sensitivity(graph) / pm.step_epsilon(graph)
        in_s = np.zeros((runs, graph.n_nodes), dtype=bool)
        rows = np.arange(runs)
        events = np.zeros((runs, steps), dtype=bool)
        in_s[:, 0] = True  # PAMST runs here with the fixed start vertex 0: S_0 = {0}
        for i in range(steps):
            cut = in_s[:, eu] != in_s[:, ev]
            w = np.where(cut, graph.weights, np.inf)
            wmin = w.min(axis=1)
            size = cut.sum(axis=1)
            e = trees[:, i]
            u = -np.abs(graph.weights[e] - wmin)
            thr = -step_scale * (np.log(size) + self.t)
            events[:, i] = u <= thr + 1e-12 * step_scale
            if not np.all(cut[rows, e]):
                raise RuntimeError("PAMST chose an edge outside its range R_S: the sampler and the check disagree")
            in_s[rows, eu[e]] = True
            in_s[rows, ev[e]] = True
        return events

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        if self.mechanism == "catalogue":
            chosen = ExponentialMechanism(self.epsilon, self.sensitivity)(self.utility_vector(), n, rng)
            return self._em_event(np.asarray(chosen))
        graph = self.graph()
        pm = PAMST(epsilon=self.epsilon, mu=self.sensitivity, start=0)
        events = self._pamst_events(pm.trees(graph, n, rng), graph, pm)
        return events.any(axis=1) if self.step < 0 else events[:, self.step]


# ------------------------------------------------------------------------------------------ composition
def _check_epsilon(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def _check_delta(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value < 1.0:
        raise ValueError(f"{name} must be a number in [0, 1), got {value!r}")
    return float(value)


def _check_k(k: Any) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or k < 2:
        raise ValueError(f"k must be an integer >= 2, got {k!r}")
    return k


def _category(x: Any, k: int) -> int:
    v = np.asarray(x)
    if v.ndim != 0 or not np.issubdtype(v.dtype, np.integer) or not 0 <= int(v) < k:
        raise ValueError(f"x must be one category in [0, {k - 1}], got {x!r}")
    return int(v)


@dataclass(frozen=True)
class LeakyRandomizedResponse:
    """k-ary randomized response (keep ``x`` with ``e^ε/(e^ε + k - 1)``) that with probability ``delta``
    releases ``x`` through a separate output ``k + x`` instead.  Outputs ``0..2k-1``.  Exactly (ε, δ)-DP on
    every pair of distinct inputs: the leak output ``k + x`` has probability ``δ`` under ``x`` and 0 under any
    other input, the rest is ``(1 - δ)`` times randomized response.  ``delta = 0`` is plain randomized response.
    """

    epsilon: float
    delta: float = 0.0
    k: int = 2

    def __post_init__(self) -> None:
        _check_epsilon("epsilon", self.epsilon)
        _check_delta("delta", self.delta)
        _check_k(self.k)

    @property
    def outputs(self) -> int:
        return 2 * self.k

    def pmf(self, x: Any) -> np.ndarray:
        """Exact pmf over ``0..2k-1``."""
        c = _category(x, self.k)
        keep = 1.0 / (1.0 + (self.k - 1) * math.exp(-self.epsilon))
        p = np.zeros(2 * self.k)
        p[: self.k] = (1.0 - self.delta) * (1.0 - keep) / (self.k - 1)
        p[c] = (1.0 - self.delta) * keep
        p[self.k + c] = self.delta
        return p

    def __call__(self, x: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        p = self.pmf(x)
        return rng.choice(p.size, size=int(n), p=p).astype(np.int64)


def _sample_from_pmf(mech: Any, x: Any, n: int, rng: np.random.Generator) -> np.ndarray:
    p = mech.pmf(x)
    return rng.choice(p.size, size=int(n), p=p / p.sum()).astype(np.int64)


@dataclass(frozen=True)
class SimpleComposition:
    """Pinot's report §1.4 **Proposition 1.4.2** (Dwork & Roth Thm 3.16), Pinot et al. **Theorem 4** with
    independent parts, DPM §4.4's sequential composition: ``A_[k](x) = (A_1(x), ..., A_k(x))`` with ``A_i`` a
    :class:`LeakyRandomizedResponse` at ``(epsilons[i], deltas[i])`` is ``(Σε_i, Σδ_i)``-DP.  The output is
    one integer code (mixed radix ``2k`` per part); :meth:`pmf` is the product law.  With ``δ = 0`` the bound is
    attained (each part's worst ratio is attained on the same output), so a claim below ``Σε_i`` is violated.
    """

    epsilons: tuple[float, ...] = (0.5, 0.5)
    deltas: tuple[float, ...] | None = None
    k: int = 2

    def __post_init__(self) -> None:
        eps = tuple(self.epsilons) if not isinstance(self.epsilons, (int, float)) else ()
        if not eps:
            raise ValueError(f"epsilons must be a non-empty list of numbers > 0, got {self.epsilons!r}")
        for i, e in enumerate(eps):
            _check_epsilon(f"epsilons[{i}]", e)
        dl = (0.0,) * len(eps) if self.deltas is None else tuple(self.deltas)
        if len(dl) != len(eps):
            raise ValueError(f"deltas must have one entry per part ({len(eps)}), got {self.deltas!r}")
        for i, d in enumerate(dl):
            _check_delta(f"deltas[{i}]", d)
        _check_k(self.k)
        object.__setattr__(self, "epsilons", eps)
        object.__setattr__(self, "deltas", dl)

    @property
    def parts(self) -> tuple[LeakyRandomizedResponse, ...]:
        return tuple(LeakyRandomizedResponse(e, d, self.k) for e, d in zip(self.epsilons, self.deltas))

    def composed_budget(self) -> tuple[float, float]:
        """``(Σε_i, Σδ_i)``: what Proposition 1.4.2 certifies."""
        return float(sum(self.epsilons)), float(sum(self.deltas))

    def pmf(self, x: Any) -> np.ndarray:
        """Exact joint pmf: the outer product of the parts' pmfs, flattened (part 0 most significant)."""
        p = np.ones(1)
        for part in self.parts:
            p = np.multiply.outer(p, part.pmf(x)).ravel()
        return p

    def __call__(self, x: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        return _sample_from_pmf(self, x, n, rng)


@dataclass(frozen=True)
class AdaptiveComposition:
    """Pinot's report §1.4 **Proposition 1.4.3** (adaptive composition, Dwork et al. 2006): the first release
    ``o_1 = A_1(x)`` (a :class:`LeakyRandomizedResponse` at ``(epsilon, delta)``) chooses the second one's
    privacy parameter, ``ε_2 = second_epsilons[o_1 mod len]`` (each at most ``max(second_epsilons)``), and the
    output is ``(o_1, A_2(x))``.  Certified: ``(epsilon + max ε_2, 2·delta)`` (the second part leaks with the
    same ``delta``).  :meth:`pmf` is the exact joint law ``p_1(o_1)·p_2(o_2 | o_1)``."""

    epsilon: float = 0.5
    second_epsilons: tuple[float, ...] = (0.25, 0.5)
    delta: float = 0.0
    k: int = 2

    def __post_init__(self) -> None:
        _check_epsilon("epsilon", self.epsilon)
        eps = tuple(self.second_epsilons) if not isinstance(self.second_epsilons, (int, float)) else ()
        if not eps:
            raise ValueError(f"second_epsilons must be a non-empty list of numbers > 0, got {self.second_epsilons!r}")
        for i, e in enumerate(eps):
            _check_epsilon(f"second_epsilons[{i}]", e)
        _check_delta("delta", self.delta)
        _check_k(self.k)
        object.__setattr__(self, "second_epsilons", eps)

    def composed_budget(self) -> tuple[float, float]:
        """``(ε_1 + max ε_2, 2δ)``: what Proposition 1.4.3 certifies."""
        return float(self.epsilon + max(self.second_epsilons)), 2.0 * float(self.delta)

    def pmf(self, x: Any) -> np.ndarray:
        first = LeakyRandomizedResponse(self.epsilon, self.delta, self.k)
        p1 = first.pmf(x)
        rows = [p1[o] * LeakyRandomizedResponse(self.second_epsilons[o % len(self.second_epsilons)], self.delta,
                                                self.k).pmf(x) for o in range(first.outputs)]
        return np.concatenate(rows)

    def __call__(self, x: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        return _sample_from_pmf(self, x, n, rng)


@dataclass(frozen=True)
class PostProcessed:
    """Pinot's report §1.4 **Proposition 1.4.1** (post-processing; its poster's Proposition 1, Pinot et al.
    **Theorem 5**): ``h ∘ A`` with ``A`` a :class:`LeakyRandomizedResponse` at ``(epsilon, delta)`` on ``k``
    categories and a deterministic ``h`` on its outputs ``0..2k-1``: ``"parity"`` (``o mod 2``), ``"bucket"``
    (``(o mod k) // 2``: pairs of categories, leak and non-leak merged), ``"identity"`` (``h = id``, the
    control) or ``"constant"`` (everything to 0: exact ε = 0).  :meth:`pmf` sums ``A``'s pmf over each
    preimage, so the exact ε of ``h ∘ A`` is at most that of ``A``."""

    epsilon: float = 1.0
    delta: float = 0.0
    k: int = 4
    mapping: str = "parity"

    MAPPINGS: ClassVar[tuple[str, ...]] = ("parity", "bucket", "identity", "constant")

    def __post_init__(self) -> None:
        _check_epsilon("epsilon", self.epsilon)
        _check_delta("delta", self.delta)
        _check_k(self.k)
        _choice("mapping", self.mapping, self.MAPPINGS)

    def h(self, o: np.ndarray) -> np.ndarray:
        """The deterministic post-processing map on the inner outputs."""
        o = np.asarray(o)
        if self.mapping == "parity":
            return o % 2
        if self.mapping == "bucket":
            return (o % self.k) // 2
        if self.mapping == "identity":
            return o
        return np.zeros_like(o)

    def pmf(self, x: Any) -> np.ndarray:
        inner = LeakyRandomizedResponse(self.epsilon, self.delta, self.k)
        p = inner.pmf(x)
        images = self.h(np.arange(inner.outputs))
        out = np.zeros(int(images.max()) + 1)
        np.add.at(out, images, p)
        return out

    def __call__(self, x: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        inner = LeakyRandomizedResponse(self.epsilon, self.delta, self.k)
        return self.h(inner(x, n, rng)).astype(np.int64)
