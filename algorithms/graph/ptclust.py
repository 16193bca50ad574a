"""PTClust: private graph clustering = PAMST topology + Weight-Release weights + DBMSTClu.

Source: seed 001, Pinot et al., "Graph-based clustering under differential privacy" (UAI 2018), Sec. 3.3.2,
**Algorithm 3**::

    T  = PAMST(G, w, u_G, ε/2)
    T' = M_wr(T, w|_E(T), 2mu/ε, tau, p)
    return DBMSTClu(T')

and **Theorem 12** (PTClust is ε-DP: PAMST at ε/2 plus Weight-Release "at ε/2" by Theorem 11, composed).

Printed versus corrected (see :mod:`algorithms.graph.weight_release` and ``docs/findings.md``): line 3
adds ``Lap(2mu/ε)`` to each of the ``|V|-1`` tree weights, which is ε/2-DP for *one* weight but
``(|V|-1)·ε/2`` for the vector under seed 001's ℓ∞ neighbourhood.  ``variant="printed"`` implements
Algorithm 3 as printed; ``variant="corrected"`` uses the ℓ1 calibration ``s = 2(|V|-1)mu/ε`` (generally:
the ℓ1 change of ``|V|-1`` weights over ε/2), which makes Theorem 12's composition argument valid.

Non-positive released weights (Laplace noise creates them; DBMSTClu needs weights in (0, 1]) are clipped
to ``floor`` before clustering (:func:`algorithms.graph.dbmstclu.dbmstclu` with ``nonpositive="clip"``);
post-processing, so privacy is unaffected.  The ``n`` trees are clustered together by
:func:`algorithms.graph.dbmstclu_batch.dbmstclu_batch`, whose labels equal the scalar call's row by
row.  Released weights above 1 are kept (DBMSTClu's index is scale-free; seed 001 only asks that tau
and p make most weights land in (0, 1]).

Output (``release="partition"``, default): the cluster label of every node, canonical (clusters numbered
by their smallest node), shape ``(n, |V|)`` int64.  ``release="tree"``: the weighted tree handed to
DBMSTClu -- the PAMST tree code (or edge ids) and the released weights of its edges (ascending edge id),
float64 -- the object Theorem 12's composition argument is about.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..classic._validation import check_choice, check_epsilon, check_n
from .dbmstclu_batch import dbmstclu_batch
from .neighbourhood import as_neighbourhood
from .pamst import MAX_CODE_EDGES, PAMST, as_graph, tree_codes
from .weight_release import _check_normalisation, release
from .weighted_graph import WeightedGraph

__all__ = ["PTClust", "VARIANTS"]

VARIANTS: tuple[str, ...] = ("printed", "corrected")
RELEASES: tuple[str, ...] = ("partition", "tree")


@dataclass(frozen=True)
class PTClust:
    """PTClust (seed 001 Algorithm 3) as a mechanism ``(graph, n, rng) -> labels or weighted trees``.

    ``pamst_sensitivity`` is passed to :class:`PAMST` (``None``: its derived Δu).
    """

    epsilon: float
    mu: float = 1.0
    neighbours: Any = "linf"
    tau: float = 0.0
    p: float = 1.0
    variant: str = "corrected"
    release: str = "partition"
    pamst_sensitivity: float | None = None
    floor: float = 1e-9
    delta: ClassVar[float] = 0.0

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        as_neighbourhood(self.neighbours, self.mu)
        _check_normalisation(self.tau, self.p)
        check_choice("variant", self.variant, VARIANTS)
        check_choice("release", self.release, RELEASES)
        if not (isinstance(self.floor, (int, float)) and self.floor > 0):
            raise ValueError(f"floor must be a number > 0, got {self.floor!r}")

    def pamst(self) -> PAMST:
        """Line 2: PAMST at ε/2."""
        return PAMST(self.epsilon / 2.0, mu=self.mu, neighbours=self.neighbours,
                     sensitivity=self.pamst_sensitivity)

    def weight_scale(self, graph: WeightedGraph) -> float:
        """Line 3's Laplace scale: ``2mu/ε`` (printed) or ``Δ1(|V|-1 weights)/(ε/2)`` (corrected)."""
        hood = as_neighbourhood(self.neighbours, self.mu)
        k = graph.n_nodes - 1
        if self.variant == "printed":
            return 2.0 * hood.max_edge_change(k) / float(self.epsilon)
        return 2.0 * hood.l1_change(k) / float(self.epsilon)

    def true_epsilon(self, graph: WeightedGraph) -> float:
        """Upper bound by composition: PAMST's bound at ε/2 plus ``Δ1/s`` of the weight release."""
        hood = as_neighbourhood(self.neighbours, self.mu)
        return self.pamst().true_epsilon(graph) + hood.l1_change(graph.n_nodes - 1) / self.weight_scale(graph)

    def weighted_trees(self, graph: WeightedGraph, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Lines 2-3 for ``n`` runs: sorted tree edge ids ``(n, |V|-1)`` and released weights."""
        trees = np.sort(self.pamst().trees(graph, n, rng), axis=1)
        noisy = release(np.zeros(graph.n_nodes - 1), self.weight_scale(graph), float(self.tau),
                        float(self.p), n, rng)
        noisy += graph.weights[trees] / float(self.p)
        return trees, noisy

    def __call__(self, x: WeightedGraph, n: int, rng: np.random.Generator) -> np.ndarray:
        graph = as_graph(x, "PTClust")
        n = check_n(n)
        trees, noisy = self.weighted_trees(graph, n, rng)
        if self.release == "tree":
            topo = tree_codes(trees) if graph.n_edges <= MAX_CODE_EDGES else trees
            return np.column_stack([topo.reshape(n, -1).astype(np.float64), noisy])
        # line 4 on all n trees at once: labels identical to dbmstclu(tree_i, nonpositive="clip") per row
        return dbmstclu_batch(graph.n_nodes, graph.edges[trees], noisy, nonpositive="clip",
                              floor=float(self.floor))
