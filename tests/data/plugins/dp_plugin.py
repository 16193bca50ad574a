"""A user's plugin, written against dpverify's public API only (tests/test_extension.py): a check kind of its own
and a neighbour relation of its own, registered when a suite lists this module under ``[suite] plugins``.

* kind ``output-range``: draws ``samples`` outputs of the mechanism on the entry's input and checks that every one
  lies in ``[low, high]`` (a release promised to be clipped); outcome ``violation`` when one does not, and the
  report cell shows the fraction outside;
* relation ``swap-adjacent``: vectors that differ by swapping two adjacent coordinates (neighbours for a
  permutation-invariance claim).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from dpverify.errors import InputError
from dpverify.neighbours import NeighbourRelation, Pair, register_relation
from dpverify.suites import build_mechanism
from dpverify.suites.kinds import CheckKind, RunContext, make_outcome, register_kind


class SwapAdjacent(NeighbourRelation):
    """``x0 ~ x1`` when ``x1`` is ``x0`` with coordinates ``i`` and ``i + 1`` swapped (``i < limit``)."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit = limit

    @property
    def name(self) -> str:
        return "swap two adjacent coordinates"

    def _vec(self, x: Any) -> np.ndarray:
        a = np.asarray(x, dtype=float)
        if a.ndim != 1 or len(a) < 2:
            raise InputError(f"swap-adjacent needs a vector of length >= 2, got shape {a.shape}")
        return a

    def reason_not_neighbours(self, x0: Any, x1: Any) -> str | None:
        a, b = self._vec(x0), self._vec(x1)
        if a.shape != b.shape:
            return "different lengths"
        diff = np.flatnonzero(a != b)
        if len(diff) == 0:
            return "equal inputs"
        if len(diff) != 2 or diff[1] != diff[0] + 1 or a[diff[0]] != b[diff[1]] or a[diff[1]] != b[diff[0]]:
            return "not one swap of adjacent coordinates"
        return None

    def _swap(self, a: np.ndarray, i: int) -> Pair:
        b = a.copy()
        b[i], b[i + 1] = a[i + 1], a[i]
        return Pair(a, b, f"swap[{i}]")

    def _positions(self, a: np.ndarray) -> list[int]:
        m = len(a) - 1 if self.limit is None else min(self.limit, len(a) - 1)
        return [i for i in range(m) if a[i] != a[i + 1]]

    def patterns(self, x: Any) -> list[Pair]:
        a = self._vec(x)
        return [self._swap(a, i) for i in self._positions(a)]

    def random_pairs(self, x: Any, k: int, rng_or_seed: np.random.Generator | int) -> list[Pair]:
        a = self._vec(x)
        rng = rng_or_seed if isinstance(rng_or_seed, np.random.Generator) else np.random.default_rng(rng_or_seed)
        pos = self._positions(a)
        return [self._swap(a, int(rng.choice(pos))) for _ in range(k)] if pos else []

    def l1_distance_bound(self, dim: int) -> float:
        return float("inf")

    def l2_distance_bound(self, dim: int) -> float:
        return float("inf")

    def linf_distance_bound(self, dim: int) -> float:
        return float("inf")


def _validate(options: dict[str, Any], where: str) -> dict[str, Any]:
    low, high = options.get("low"), options.get("high")
    if not all(isinstance(v, (int, float)) for v in (low, high)) or not low < high:
        raise InputError(f"output-range needs numbers low < high, got low={low!r}, high={high!r}")
    samples = options.get("samples", 10_000)
    if not isinstance(samples, int) or samples < 1:
        raise InputError(f"output-range: samples must be a positive integer, got {samples!r}")
    return {"low": float(low), "high": float(high), "samples": samples}


def _run(entry: Any, ctx: RunContext) -> Any:
    mechanism = build_mechanism(entry)
    opts = entry.options
    rng = np.random.default_rng(ctx.seed)
    out = np.asarray(mechanism(entry.input, opts["samples"], rng), dtype=float)
    outside = (out < opts["low"]) | (out > opts["high"])
    frac = float(outside.mean())
    witness = None if not outside.any() else {"value": float(out[np.flatnonzero(outside)[0]])}
    return make_outcome(entry, ctx, outcome="violation" if outside.any() else "pass", samples=opts["samples"],
                        search_samples=None, witness=witness, details={"outside_fraction": frac})


def _found(o: Any) -> str:
    return f"out={(o.details or {}).get('outside_fraction', float('nan')):.3g}"


def _rise(b: Mapping[str, Any], n: Mapping[str, Any]) -> str | None:
    fb = (b.get("details") or {}).get("outside_fraction")
    fn = (n.get("details") or {}).get("outside_fraction")
    if isinstance(fb, float) and isinstance(fn, float) and fn > fb:
        return f"outside fraction {fb:.3g} -> {fn:.3g}"
    return None


OUTPUT_RANGE = register_kind(CheckKind(
    name="output-range", run=_run, description="every output inside [low, high]", keys=("low", "high", "samples"),
    required=("low", "high"), validate=_validate, needs_claim=False, found=_found, rise=_rise,
), replace=True)
register_relation("swap-adjacent", SwapAdjacent, replace=True)


def clipped_laplace(x: Any, n: int, rng: np.random.Generator, *, scale: float = 1.0, clip: float = 3.0) -> np.ndarray:
    """The sum of ``x`` plus Laplace noise, clipped to ``[-clip, clip]`` (promised range)."""
    return np.clip(float(np.sum(x)) + rng.laplace(0.0, scale, size=n), -clip, clip)


def unclipped_laplace(x: Any, n: int, rng: np.random.Generator, *, scale: float = 1.0) -> np.ndarray:
    """The same without the clip: outputs leave the promised range."""
    return float(np.sum(x)) + rng.laplace(0.0, scale, size=n)


def first_coordinate(x: Any, n: int, rng: np.random.Generator, *, scale: float = 1.0) -> np.ndarray:
    """Laplace noise on the first coordinate only: not invariant under swaps (true ε = |x[0] − x[1]| / scale)."""
    return float(np.asarray(x, dtype=float)[0]) + rng.laplace(0.0, scale, size=n)


def noisy_sum(x: Any, n: int, rng: np.random.Generator, *, scale: float = 1.0) -> np.ndarray:
    """Laplace noise on the sum: invariant under swaps (the two outputs have one law; true ε = 0)."""
    return float(np.sum(x)) + rng.laplace(0.0, scale, size=n)


class Difference:
    """A scalar feature of vector outputs: ``out[:, i] − out[:, j]``."""

    def __init__(self, i: int, j: int) -> None:
        self.i, self.j = i, j
        self.name = f"diff(out[{i}]-out[{j}])"

    def __call__(self, out: np.ndarray) -> np.ndarray:
        out = np.asarray(out, dtype=float)
        return out[:, self.i] - out[:, self.j]


class PairwiseDifferences:
    """An event family of the user's own: thresholds of every pairwise coordinate difference of a vector output
    (first ``limit`` coordinates).  Module-level and picklable, so the audit can search pairs on its workers."""

    def __init__(self, limit: int = 4) -> None:
        self.limit = limit

    def __call__(self, data: Any, search: Any) -> None:
        from dpverify.statistical.search import feature_events

        if data.kind != "vector":
            return
        k = min(self.limit, data.halves[0].shape[1])
        for i in range(k):
            for j in range(i + 1, k):
                feature_events(Difference(i, j), data, search)


def opposite_moves(x: Any, n: int, rng: np.random.Generator, *, scale: float = 1.0) -> np.ndarray:
    """Laplace noise on every coordinate of ``x`` (a vector)."""
    x = np.asarray(x, dtype=float)
    return x + rng.laplace(0.0, scale, size=(n, len(x)))
