"""BROKEN: PAMST whose exponential-mechanism steps drop the factor 2: ``P(r) ∝ exp(ε' u(r)/Δu)``.

Bug: seed 001 Definition 2.6 (and McSherry-Talwar) divide by ``2Δu``; code that writes
``exp(eps * u / sens)`` (the form of report-noisy-max with one-sided noise, or of the "monotone" EM) doubles
every step's loss.  Control: :class:`algorithms.graph.pamst.PAMST` (derived Δu = mu, exactly ε-DP).
True ε: ``2ε`` (each of the ``|V|-1`` steps is ``2ε/(|V|-1)``-DP and the bound is approached).

Replay: **calibration bug** -- the inherited ``"em[i]"`` steps declare the right Δu; only their coefficient
is doubled, which a frozen-noise replay will NOT flag (``BUG_KIND = "calibration"``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..graph.pamst import PAMST
from ..graph.weighted_graph import WeightedGraph


@dataclass(frozen=True)
class PAMSTNoHalf(PAMST):
    """PAMST with ``P(r) ∝ exp(ε' u(r)/Δu)``.  Noise steps: :meth:`PAMST.release` (Δu right, scale ``ε'/Δu``)."""

    BUG_KIND: ClassVar[str] = "calibration"

    def coefficient(self, graph: WeightedGraph) -> float:
        return 2.0 * super().coefficient(graph)  # BUG: ε'/Δu instead of ε'/(2Δu)

    def true_epsilon(self, graph: WeightedGraph | None = None) -> float:
        return 2.0 * super().true_epsilon(graph)
