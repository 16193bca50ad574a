"""PAMST whose utility sensitivity is read off the data: ``Δu = max_e w(e) - min_e w(e)``.

Bug: Δu must bound the change of the utility between *neighbouring* inputs (seed 001 Sec. 2.2:
``Δu_G = max_r max_{w~w'} |u_G(w, r) - u_G(w', r)|``); taking the spread of the utilities on the actual
input ("the utility ranges over [min, max]") makes the noise level itself a function of the private
weights, the analogue of the data-dependent Laplace scale of the classic catalogue
(:mod:`algorithms.broken.data_dependent_scale`).  When the weights are nearly equal the mechanism is
nearly deterministic.  Control: :class:`algorithms.graph.pamst.PAMST`.
True ε: unbounded over inputs (the coefficient ``ε'/(2·spread)`` grows without limit as the spread shrinks).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from algorithms.graph.pamst import PAMST
from algorithms.graph.weighted_graph import WeightedGraph


@dataclass(frozen=True)
class PAMSTDataDependentSensitivity(PAMST):
    def utility_sensitivity(self, graph: WeightedGraph) -> float:
        spread = float(graph.weights.max() - graph.weights.min())  # BUG: depends on the private weights
        return max(spread, 1e-12)

    def true_epsilon(self, graph: WeightedGraph | None = None) -> float:
        return math.inf
