"""The Weight-Release mechanism of seed 001, as printed and corrected.

Source: seed 001, Pinot et al., "Graph-based clustering under differential privacy" (UAI 2018), Sec. 3.3.2,
**Definition 3.12**: ``M_wr(G, w, s, tau, p) = (G, w' = (w + (Y_1..Y_|E|) + tau)/p)`` with ``Y_i ~ Lap(0, s)``
i.i.d., one per edge; **Theorem 11**: ``M_wr(G, ., ε/p, tau, p)`` "is ε-differentially private on G" (proof: a
Laplace mechanism followed by the post-processing ``(.+tau)/p``); **Algorithm 3** (PTClust) line 3 calls it on the
PAMST tree with ``s = 2mu/ε`` (half of the budget ε, per-edge change ``mu``).

What the calibration must be: adding ``tau`` and dividing by ``p`` is post-processing and cannot change the
privacy loss.  Releasing ``k`` weights with i.i.d. ``Lap(s)`` noise costs ``Δ1/s`` where ``Δ1`` is the ℓ1
change of those ``k`` weights between neighbours -- ``k·mu`` under seed 001's ℓ∞ Definition 2.1.  Hence:

* ``calibration="l1"`` (corrected, default): ``s = Δ1/ε`` with ``Δ1`` derived from the neighbourhood
  (``k·mu`` for ℓ∞, ``r`` for ℓ1); ε-DP.
* ``calibration="per-edge"`` (Algorithm 3 as printed, ``s = mu/ε`` at budget ε, i.e. ``2mu/ε`` at ε/2):
  true ε = ``k·ε`` under ℓ∞ -- the sensitivity of one coordinate, not of the vector.
* ``calibration="theorem-11"`` (Theorem 11 as printed, ``s = ε/p``): true ε = ``k·mu·p/ε`` under ℓ∞
  (a scale that *shrinks* as the budget shrinks), ε-DP only when ``k·mu·p <= ε²``.

Output: ``(n, |E|)`` released weights, edge order of the input graph.

Noise steps (:meth:`WeightRelease.release`, :mod:`algorithms.noise`): one ``"weights"`` Laplace step
protecting the weight vector (one ``(|E|,)`` row per run) in ℓ1, declaring the sensitivity the scale ``s``
is calibrated for, ``s·ε`` (:func:`weight_release_sensitivity`): ``Δ1`` (``"l1"``), ``mu`` (``"per-edge"``:
the sensitivity of one coordinate, so a replay on ℓ∞ neighbours flags it) or ``ε²/p`` (``"theorem-11"``:
the value the printed scale ``ε/p`` implicitly assumes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..classic._validation import check_choice, check_epsilon, check_n
from .neighbourhood import as_neighbourhood
from .weighted_graph import GraphError, WeightedGraph
from ..noise import NoiseSource

__all__ = ["WeightRelease", "weight_release_scale", "weight_release_sensitivity", "CALIBRATIONS"]

CALIBRATIONS: tuple[str, ...] = ("l1", "per-edge", "theorem-11")


def weight_release_scale(calibration: str, epsilon: float, n_edges: int, neighbourhood: Any, p: float) -> float:
    """The Laplace scale ``s`` for releasing ``n_edges`` weights at budget ``epsilon``."""
    if calibration == "l1":
        return neighbourhood.l1_change(n_edges) / epsilon
    if calibration == "per-edge":
        return neighbourhood.max_edge_change(n_edges) / epsilon
    return epsilon / p


def weight_release_sensitivity(calibration: str, epsilon: float, n_edges: int, neighbourhood: Any,
                               p: float) -> float:
    """The ℓ1 sensitivity the scale of :func:`weight_release_scale` is calibrated for (``scale·ε``)."""
    if calibration == "l1":
        return neighbourhood.l1_change(n_edges)
    if calibration == "per-edge":
        return neighbourhood.max_edge_change(n_edges)
    return epsilon * epsilon / p


def _check_normalisation(tau: float, p: float) -> None:
    if isinstance(tau, bool) or not isinstance(tau, (int, float)) or not math.isfinite(tau) or tau < 0:
        raise ValueError(f"tau must be a finite number >= 0 (seed 001 Def. 3.12), got {tau!r}")
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not math.isfinite(p) or p < 1:
        raise ValueError(f"p must be a finite number >= 1 (seed 001 Def. 3.12), got {p!r}")


def release(weights: np.ndarray, scale: float, tau: float, p: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """Def. 3.12 on a weight vector: ``(w + Lap(scale) + tau)/p``, ``n`` rows."""
    return (weights + rng.laplace(0.0, scale, size=(n, weights.shape[0])) + tau) / p


@dataclass(frozen=True)
class WeightRelease:
    """Weight-Release (seed 001 Def. 3.12) as a mechanism ``(graph, n, rng) -> (n, |E|) weights``."""

    epsilon: float
    mu: float = 1.0
    neighbours: Any = "linf"
    tau: float = 0.0
    p: float = 1.0
    calibration: str = "l1"
    delta: ClassVar[float] = 0.0

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        as_neighbourhood(self.neighbours, self.mu)
        _check_normalisation(self.tau, self.p)
        check_choice("calibration", self.calibration, CALIBRATIONS)

    def scale(self, graph: WeightedGraph) -> float:
        return weight_release_scale(self.calibration, float(self.epsilon), graph.n_edges,
                                    as_neighbourhood(self.neighbours, self.mu), float(self.p))

    def noise_sensitivity(self, graph: WeightedGraph) -> float:
        """The ℓ1 sensitivity the scale is calibrated for (:func:`weight_release_sensitivity`)."""
        return weight_release_sensitivity(self.calibration, float(self.epsilon), graph.n_edges,
                                          as_neighbourhood(self.neighbours, self.mu), float(self.p))

    def true_epsilon(self, graph: WeightedGraph) -> float:
        """Exact privacy loss of the release: ``Δ1/s`` (Laplace mechanism + post-processing)."""
        return as_neighbourhood(self.neighbours, self.mu).l1_change(graph.n_edges) / self.scale(graph)

    def __call__(self, x: WeightedGraph, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.release(x, n, NoiseSource(rng))

    def release(self, x: WeightedGraph, n: int, noise: NoiseSource) -> np.ndarray:
        """Def. 3.12 against an explicit noise source: one ``"weights"`` Laplace step protecting the weight
        vector with ℓ1 sensitivity :meth:`noise_sensitivity`; ``(· + tau)/p`` is post-processing."""
        if not isinstance(x, WeightedGraph):
            raise GraphError(f"WeightRelease takes a WeightedGraph, got {type(x).__name__}.")
        n = check_n(n)
        scale = self.scale(x)
        noisy = noise.add("weights", x.weights, lambda rng: rng.laplace(0.0, scale, size=(n, x.weights.shape[0])),
                          sensitivity=self.noise_sensitivity(x), norm="l1", scale=scale, kind="laplace")
        return (noisy + float(self.tau)) / float(self.p)
