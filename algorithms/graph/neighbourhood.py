"""Weight neighbourhoods of the graph papers, as the reference algorithms need them.

The noise scale of a Laplace release and the utility sensitivity of an exponential-mechanism step are
derived from the neighbourhood the claim is made for, never typed in by hand, so that a mismatch between
the neighbourhood a paper proves and the one its code uses cannot happen silently
(the neighbour relations of :mod:`dpverify.neighbours`, README.md).

* ``"linf"`` with radius ``mu``: Pinot et al., "Graph-based clustering under differential privacy" (UAI 2018),
  Definition 2.1 (``max_e |w(e) - w'(e)| <= mu``); Pinot, "Nodes clustering in a graph under differential privacy"
  (the PAMST report), Definition 3.3.1 is the case ``mu = 1/2``.
* ``"l1"`` with radius ``r``: Sealfon (PODS 2016), the PAMST report's Definition 2.2.1
  (``sum_e |w(e) - w'(e)| <= r``, ``r = 1`` there).

This mirrors ``dpverify.neighbours.LInfNeighbours`` / ``L1Neighbours`` (``algorithms`` does not import
``dpverify``); an object with ``linf_distance_bound(dim)`` and ``l1_distance_bound(dim)`` methods, such as
those relations, is accepted wherever a kind string is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

__all__ = ["WeightNeighbourhood", "as_neighbourhood", "KINDS"]

KINDS: tuple[str, ...] = ("linf", "l1")


@dataclass(frozen=True)
class WeightNeighbourhood:
    """``kind`` in ``("linf", "l1")`` and its radius (> 0)."""

    kind: str = "linf"
    radius: float = 1.0

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"neighbours must be one of {KINDS}, got {self.kind!r}")
        r = self.radius
        if isinstance(r, bool) or not isinstance(r, (int, float)) or not math.isfinite(r) or r <= 0:
            raise ValueError(f"the neighbourhood radius (mu) must be finite and > 0, got {r!r}")
        object.__setattr__(self, "radius", float(r))

    def max_edge_change(self, n_edges: int) -> float:
        """Largest change of one edge weight between neighbours: ``mu`` (ℓ∞) or ``r`` (ℓ1)."""
        return self.radius

    def l1_change(self, n_edges: int) -> float:
        """Largest ℓ1 change of ``n_edges`` weights: ``n_edges * mu`` (ℓ∞) or ``r`` (ℓ1)."""
        return self.radius * n_edges if self.kind == "linf" else self.radius

    def __str__(self) -> str:
        return f"{'ℓ∞' if self.kind == 'linf' else 'ℓ1'} radius {self.radius:g}"


class _Duck:
    """Adapter for an object with ``linf_distance_bound`` / ``l1_distance_bound`` (dpverify relations)."""

    def __init__(self, relation: Any) -> None:
        self.relation = relation

    def max_edge_change(self, n_edges: int) -> float:
        return float(self.relation.linf_distance_bound(n_edges))

    def l1_change(self, n_edges: int) -> float:
        return float(self.relation.l1_distance_bound(n_edges))

    def __str__(self) -> str:
        return str(self.relation)


def as_neighbourhood(neighbours: Any, mu: float) -> Any:
    """A neighbourhood from a kind string plus radius, or from a relation object (radius ignored)."""
    if isinstance(neighbours, str):
        return WeightNeighbourhood(neighbours, mu)
    if isinstance(neighbours, WeightNeighbourhood):
        return neighbours
    if hasattr(neighbours, "linf_distance_bound") and hasattr(neighbours, "l1_distance_bound"):
        return _Duck(neighbours)
    raise ValueError(f"neighbours must be 'linf', 'l1' or a relation object with linf_distance_bound and "
                     f"l1_distance_bound, got {neighbours!r}")
