"""Neighbour relations as explicit objects, and generators of candidate neighbouring pairs.

A differential-privacy claim is only meaningful together with the neighbour relation it is proved
for.  This package makes the relation an object that every other part of dpverify can ask:

* ``contains(x0, x1)`` / ``validate_pair(x0, x1)`` -- are two inputs neighbours (and if not, why)?
* ``patterns(x)`` -- deterministic, structured candidate pairs ``(x, x')`` around a base input;
* ``random_pairs(x, k, seed)`` -- seeded random neighbours (same seed, same pairs);
* ``pairs(x, patterns=True, random=0, seed=None)`` -- both, deduplicated;
* ``l1_distance_bound(dim)``, ``l2_distance_bound(dim)``, ``linf_distance_bound(dim)`` -- the largest
  distance between neighbours, from which a reference algorithm derives its noise scale.  Deriving the
  noise from the relation object means a mismatch between the neighbourhood a paper proves and the one
  its code uses cannot happen silently.

Relations
---------
:class:`LInfNeighbours` (radius mu)
    Vectors (or edge weights of a graph with public topology) with ``||x0 - x1||_inf <= mu``.  This is
    the weight-neighbourhood used by PAMST / PTClust: Pinot, Morvan, Yger, Gouy-Pailler, Atif, "Graph-based
    clustering under differential privacy" (UAI 2018), Definition 2.1 (two weight functions on the same edge
    set are neighbouring if ``max_e |w(e) - w'(e)| <= mu``) and Definition 2.2 (same ``V`` and ``E``).
:class:`L1Neighbours` (radius r)
    Vectors / edge weights with ``||x0 - x1||_1 <= r``: the weight-neighbourhood of Sealfon,
    "Shortest paths and distances with differential privacy", PODS 2016 (the Laplace-MST baseline).
:class:`AddRemoveOne`
    Datasets (a 1-D array of scalar records or a 2-D array with one record per row, seen as multisets)
    that differ by adding or removing exactly one record (unbounded DP).
:class:`ReplaceOne`
    Datasets of the same size that differ in exactly one record (bounded DP).

The structured patterns of the vector relations follow StatDP (Ding, Wang, Wang, Zhang, Kifer,
"Detecting Violations of Differential Privacy", CCS 2018), ``statdp/generators.py``
(``generate_databases``): "one above", "one below", "one above rest below", "one below rest above",
"half-half", "all above", "all below" and "X shape", here applied around an arbitrary base vector ``x``
with the step scaled to the relation's radius (StatDP uses ``x = 1`` and step 1).  StatDP's X shape
pair is at ℓ∞ distance 1 around the base ``1/2``; we centre it on ``x`` in the same way (``x0 = x + s·d/2``,
``x1 = x - s·d/2`` with ``s = (+1, ..., +1, -1, ..., -1)``), so that it is a neighbour pair.

Weighted graphs are accepted by the vector relations through the :class:`WeightedInput` protocol
(an object with a 1-D ``.weights`` and a ``.with_weights(new)`` copy constructor); only the weights
are perturbed, the topology is kept.

Floating-point tolerance: a vector pair at distance ``dist`` is accepted when
``dist <= radius + 1e-12 * max(radius, scale)`` where ``scale`` is the largest magnitude in the pair
(ℓ∞ relation) or the larger ℓ1 norm of the pair (ℓ1 relation), so that rounding in ``x + d`` never
rejects a generated pair.  Records of datasets are compared exactly.
"""

from dpverify.neighbours.base import RELATIVE_TOLERANCE, NeighbourRelation, Pair, WeightedInput, as_pairs
from dpverify.neighbours.datasets import AddRemoveOne, ReplaceOne
from dpverify.neighbours.registry import build_relation, register_relation, relation_names
from dpverify.neighbours.vectors import L1Neighbours, LInfNeighbours

__all__ = [
    "Pair",
    "WeightedInput",
    "NeighbourRelation",
    "LInfNeighbours",
    "L1Neighbours",
    "AddRemoveOne",
    "ReplaceOne",
    "as_pairs",
    "RELATIVE_TOLERANCE",
    "register_relation",
    "relation_names",
    "build_relation",
]
