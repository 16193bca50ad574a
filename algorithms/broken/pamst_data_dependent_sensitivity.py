"""BROKEN: PAMST whose utility sensitivity is computed from the private weights: ``Δu = (max w - min w)/|E|``.

Bug: Δu must bound the change of the utility between *neighbouring* inputs (seed 001 Sec. 2.2,
``Δu_G = max_r max_{w~w'} |u_G(w, r) - u_G(w', r)|``).  Seed 002 Sec. 3.4 states the normalised value
``Δu_G = 1/|E|`` for weights rescaled so that their "maximum global variation" is 1 (an unstated
normalisation, docs/findings.md F2); code that performs that rescaling with the *observed* range of the
weights -- ``Δu = (max w - min w)/|E|`` -- makes the noise level a function of the private data, the graph
analogue of the data-dependent Laplace scale of the classic catalogue
(:mod:`algorithms.broken.data_dependent_scale`).  A neighbour that widens the range
flattens the distribution; one that narrows it makes the output nearly deterministic.
Control: :class:`algorithms.graph.pamst.PAMST`.
True ε: up to ``|E|·ε`` (every logit lies within ``ε'|E|/2`` of the others, so each step is at most
``ε'|E|``-DP; the bound is approached on inputs whose range a neighbour can change by orders of magnitude).

Replay: **sensitivity bug** -- the inherited ``"em[i]"`` steps declare the data-dependent Δu (and the scale
derived from it), which differ between neighbours whose weight range differs; a frozen-noise replay flags the
changed declaration (``BUG_KIND = "sensitivity"``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..graph.pamst import PAMST
from ..graph.weighted_graph import WeightedGraph


@dataclass(frozen=True)
class PAMSTDataDependentSensitivity(PAMST):
    """PAMST with ``Δu = (max w − min w)/|E|``.  Noise steps: :meth:`PAMST.release`, declaring that Δu."""

    BUG_KIND: ClassVar[str] = "sensitivity"

    def utility_sensitivity(self, graph: WeightedGraph) -> float:
        spread = float(graph.weights.max() - graph.weights.min())  # BUG: read off the private weights
        return max(spread, 1e-12) / graph.n_edges

    def true_epsilon(self, graph: WeightedGraph | None = None) -> float:
        return float(self.epsilon) * (graph.n_edges if graph is not None else float("inf"))
