"""Reference implementations of the graph algorithms of seeds 001 and 002 (weight-differential privacy).

The topology of the input graph is public; the edge weights are the private input (seed 001,
Definitions 2.1-2.3).  Every mechanism here follows dpverify's contract ``mechanism(x, n, rng)`` with
``x`` a :class:`~algorithms.graph.weighted_graph.WeightedGraph`, and derives its noise scale or
utility sensitivity from a declared weight neighbourhood (:mod:`algorithms.graph.neighbourhood`).
"""

from .weighted_graph import GraphError, WeightedGraph

__all__ = ["GraphError", "WeightedGraph"]
