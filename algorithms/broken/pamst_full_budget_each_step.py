"""BROKEN: PAMST that gives every exponential-mechanism step the full budget ε instead of ``ε/(|V|-1)``.

Bug: seed 001 Algorithm 2 line 6 calls ``M_Exp(..., ε/(|V|-1))``; forgetting the split (a common slip when
an iterative mechanism reuses a one-shot primitive) spends ε per step.  Control:
:class:`algorithms.graph.pamst.PAMST`.  True ε: ``(|V|-1)·ε`` by composition (approached on graphs
where every step has a low-probability candidate).

Replay: **calibration (composition) bug** -- the inherited ``"em[i]"`` steps declare the right Δu; only
their coefficient (``ε/(2Δu)`` instead of ``ε/((|V|-1)2Δu)``) is too large, which a frozen-noise replay will
NOT flag (``BUG_KIND = "calibration"``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..graph.pamst import PAMST
from ..graph.weighted_graph import WeightedGraph


@dataclass(frozen=True)
class PAMSTFullBudgetEachStep(PAMST):
    """PAMST spending ε per step.  Noise steps: :meth:`PAMST.release` (Δu right, scale ``ε/(2Δu)``)."""

    BUG_KIND: ClassVar[str] = "calibration"

    def step_epsilon(self, graph: WeightedGraph) -> float:
        return float(self.epsilon)  # BUG: no division by |V|-1

    def true_epsilon(self, graph: WeightedGraph | None = None) -> float:
        k = graph.n_nodes - 1 if graph is not None else float("inf")
        return k * super().true_epsilon(graph)
