"""Vector neighbour relations (ℓ∞ and ℓ1 balls) over vectors and edge weights of graphs with a public topology."""

from __future__ import annotations

import abc
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify.errors import InputError
from dpverify.neighbours.base import ALL_COORDINATES_MAX, NeighbourRelation, Pair, RELATIVE_TOLERANCE, check_dim, check_pair_count, check_radius, dedupe, first_nonfinite, is_weighted, make_rng

# --------------------------------------------------------------------------------------------------
# Vector relations (plain vectors or edge weights of a public topology)
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Vector:
    """A validated vector input: its float weights and how to rebuild an object of the same kind."""

    w: np.ndarray
    original: Any
    weighted: bool

    def rebuild(self, new_w: np.ndarray) -> Any:
        if self.weighted:
            return self.original.with_weights(new_w)
        return new_w

    def base(self) -> Any:
        """The base input as ``x0`` of a pair: the original object, or a float copy of the array."""
        return self.original if self.weighted else self.w.copy()


def as_vector(x: Any, what: str, relation: str) -> _Vector:
    weighted = is_weighted(x)
    raw = x.weights if weighted else x
    label = f"{what}.weights" if weighted else what
    if isinstance(raw, (str, bytes)):
        raise InputError(f"{relation}: {label} must be a 1-D numeric array, got a string.")
    try:
        a = np.asarray(raw)
    except (ValueError, TypeError) as exc:
        raise InputError(f"{relation}: {label} cannot be read as a 1-D numeric array ({exc}).") from None
    if a.dtype.kind not in "biuf":
        raise InputError(
            f"{relation}: {label} must be a 1-D numeric array, got dtype {a.dtype} "
            f"(type {type(x).__name__}); pass a float vector or an object with .weights and .with_weights()."
        )
    if a.ndim != 1:
        if a.ndim == 0:
            hint = " wrap a scalar as [value]."
        else:
            hint = " flatten it, or use AddRemoveOne / ReplaceOne for datasets."
        raise InputError(f"{relation}: {label} must be 1-D, got an array of shape {a.shape};{hint}")
    if a.size == 0:
        raise InputError(f"{relation}: {label} is empty; give at least one coordinate.")
    a = a.astype(float)
    bad = first_nonfinite(a)
    if bad is not None:
        raise InputError(
            f"{relation}: {label}[{bad[0]}] is {a[bad]}; neighbour distances need finite values."
        )
    return _Vector(a, x, weighted)


def _same_topology(a: Any, b: Any) -> bool:
    if not (hasattr(a, "edges") and hasattr(b, "edges")):
        return True
    try:
        return bool(np.array_equal(np.asarray(list(a.edges)), np.asarray(list(b.edges))))
    except (TypeError, ValueError):
        return bool(a.edges == b.edges)


def _half(m: int) -> int:
    """Size of the first half, as in StatDP (``int(m / 2)``)."""
    return m // 2


def _coordinate_indices(m: int) -> list[int]:
    if m <= ALL_COORDINATES_MAX:
        return list(range(m))
    return [0, m - 1]


class _VectorRelation(NeighbourRelation):
    """Shared machinery of the ℓ∞ and ℓ1 relations."""

    radius: float

    def _pair_vectors(self, x0: Any, x1: Any) -> tuple[_Vector, _Vector]:
        cls = type(self).__name__
        v0 = as_vector(x0, "x0", cls)
        v1 = as_vector(x1, "x1", cls)
        if v0.weighted != v1.weighted:
            kind0, kind1 = ("a weighted input" if v.weighted else "an array" for v in (v0, v1))
            raise InputError(f"{cls}: x0 is {kind0} but x1 is {kind1}; compare inputs of the same kind.")
        return v0, v1

    @abc.abstractmethod
    def _distance(self, diff: np.ndarray) -> float: ...

    @abc.abstractmethod
    def _scale(self, a: np.ndarray, b: np.ndarray) -> float: ...

    def reason_not_neighbours(self, x0: Any, x1: Any) -> str | None:
        v0, v1 = self._pair_vectors(x0, x1)
        if v0.weighted and type(x0) is not type(x1):
            return f"x0 is a {type(x0).__name__} but x1 is a {type(x1).__name__}"
        if v0.weighted and not _same_topology(x0, x1):
            return "the two inputs have different edges (the topology is public and must be equal)"
        if v0.w.shape != v1.w.shape:
            return f"different dimensions ({v0.w.size} and {v1.w.size} coordinates)"
        dist = self._distance(v1.w - v0.w)
        tol = RELATIVE_TOLERANCE * max(self.radius, self._scale(v0.w, v1.w))
        if dist > self.radius + tol:
            return f"distance {dist:.17g} exceeds the radius {self.radius!r}"
        return None

    def _pairs_from_shifts(self, v: _Vector, shifts: Sequence[tuple[str, np.ndarray]]) -> list[Pair]:
        return [Pair(v.base(), v.rebuild(v.w + s), label) for label, s in shifts]


@dataclass(frozen=True)
class LInfNeighbours(_VectorRelation):
    """ℓ∞ neighbours: ``||x0 - x1||_inf <= radius`` on vectors or edge weights of a public topology.

    Pinot et al., "Graph-based clustering under differential privacy" (UAI 2018), Definition 2.1 with
    ``mu = radius``.
    Noise calibration: ℓ1 bound ``dim * radius``, ℓ2 bound ``radius * sqrt(dim)``, ℓ∞ bound ``radius``.
    """

    radius: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "radius", check_radius(self.radius, "LInfNeighbours"))

    @property
    def name(self) -> str:
        return f"ℓ∞ radius {self.radius!r}"

    def _distance(self, diff: np.ndarray) -> float:
        return float(np.max(np.abs(diff)))

    def _scale(self, a: np.ndarray, b: np.ndarray) -> float:
        return float(max(np.max(np.abs(a)), np.max(np.abs(b))))

    def patterns(self, x: Any) -> list[Pair]:
        """StatDP's patterns (``generators.py``) with step ``d = radius``.

        ``one-up[i]`` / ``one-down[i]`` (``x ± d·e_i`` for i = 0 and the last index, every index when
        dim <= 4), ``all-up``, ``all-down``, ``half-up-half-down``, ``half-down-half-up``,
        ``one-up-rest-down``, ``one-down-rest-up``, ``rest-down-last-up``, ``rest-up-last-down`` (the
        odd entry last: a sequential mechanism such as the sparse vector technique answers it after
        all the others) and ``x-shape`` (``x + s·d/2`` vs ``x - s·d/2``).
        """
        v = as_vector(x, "x", "LInfNeighbours")
        m, d, h = v.w.size, self.radius, _half(v.w.size)
        shifts: list[tuple[str, np.ndarray]] = []
        for i in _coordinate_indices(m):
            e = np.zeros(m)
            e[i] = d
            shifts += [(f"one-up[{i}]", e), (f"one-down[{i}]", -e)]
        ones = np.ones(m)
        half = np.where(np.arange(m) < h, 1.0, -1.0)  # + on the first half, - on the second
        one_rest = -ones.copy()
        one_rest[0] = 1.0
        rest_last = -ones.copy()  # the up entry last: order matters for sequential mechanisms (SVT)
        rest_last[-1] = 1.0
        shifts += [
            ("all-up", d * ones),
            ("all-down", -d * ones),
            ("half-up-half-down", d * half),
            ("half-down-half-up", -d * half),
            ("one-up-rest-down", d * one_rest),
            ("one-down-rest-up", -d * one_rest),
            ("rest-down-last-up", d * rest_last),
            ("rest-up-last-down", -d * rest_last),
        ]
        out = self._pairs_from_shifts(v, shifts)
        out.append(Pair(v.rebuild(v.w + 0.5 * d * half), v.rebuild(v.w - 0.5 * d * half), "x-shape"))
        return dedupe(out)

    def random_pairs(self, x: Any, k: int, rng_or_seed: np.random.Generator | int) -> list[Pair]:
        """``k`` pairs ``(x, x + u)``: even j ``random[j]`` with ``u`` uniform in ``[-d, d]^m``, odd j
        ``random-vertex[j]`` with ``u`` a uniform random sign vector times ``d`` (a vertex of the box).
        """
        k = check_pair_count(k)
        v = as_vector(x, "x", "LInfNeighbours")
        rng = make_rng(rng_or_seed)
        m, d = v.w.size, self.radius
        shifts: list[tuple[str, np.ndarray]] = []
        for j in range(k):
            if j % 2 == 0:
                shifts.append((f"random[{j}]", rng.uniform(-d, d, size=m)))
            else:
                shifts.append((f"random-vertex[{j}]", d * rng.choice(np.array([-1.0, 1.0]), size=m)))
        return self._pairs_from_shifts(v, shifts)

    def l1_distance_bound(self, dim: int) -> float:
        return check_dim(dim) * self.radius

    def l2_distance_bound(self, dim: int) -> float:
        return self.radius * math.sqrt(check_dim(dim))

    def linf_distance_bound(self, dim: int) -> float:
        check_dim(dim)
        return self.radius


@dataclass(frozen=True)
class L1Neighbours(_VectorRelation):
    """ℓ1 neighbours: ``||x0 - x1||_1 <= radius`` on vectors or edge weights (Sealfon, PODS 2016).

    Noise calibration: all three bounds (ℓ1, ℓ2, ℓ∞) equal ``radius`` (one coordinate moved by radius).
    """

    radius: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "radius", check_radius(self.radius, "L1Neighbours"))

    @property
    def name(self) -> str:
        return f"ℓ1 radius {self.radius!r}"

    def _distance(self, diff: np.ndarray) -> float:
        return float(np.sum(np.abs(diff)))

    def _scale(self, a: np.ndarray, b: np.ndarray) -> float:
        return float(max(np.sum(np.abs(a)), np.sum(np.abs(b))))

    def patterns(self, x: Any) -> list[Pair]:
        """``one-up[i]`` / ``one-down[i]`` (``x ± r·e_i``; i = 0, last, every index when dim <= 4),
        ``spread-up`` / ``spread-down`` (``x ± r/m`` on every coordinate), ``half-up-half-down`` /
        ``half-down-half-up`` (``±r/m`` with opposite signs on the two halves) and ``x-shape``
        (``x + s·r/(2m)`` vs ``x - s·r/(2m)``); every pair is at ℓ1 distance exactly ``r``.
        """
        v = as_vector(x, "x", "L1Neighbours")
        m, r, h = v.w.size, self.radius, _half(v.w.size)
        shifts: list[tuple[str, np.ndarray]] = []
        for i in _coordinate_indices(m):
            e = np.zeros(m)
            e[i] = r
            shifts += [(f"one-up[{i}]", e), (f"one-down[{i}]", -e)]
        step = r / m
        half = np.where(np.arange(m) < h, 1.0, -1.0)
        shifts += [
            ("spread-up", np.full(m, step)),
            ("spread-down", np.full(m, -step)),
            ("half-up-half-down", step * half),
            ("half-down-half-up", -step * half),
        ]
        out = self._pairs_from_shifts(v, shifts)
        out.append(Pair(v.rebuild(v.w + 0.5 * step * half), v.rebuild(v.w - 0.5 * step * half), "x-shape"))
        return dedupe(out)

    def random_pairs(self, x: Any, k: int, rng_or_seed: np.random.Generator | int) -> list[Pair]:
        """``k`` pairs ``(x, x + u)``: even j ``random[j]`` with ``u`` uniform on the ℓ1 sphere of radius
        ``r`` (normalised i.i.d. Laplace vector), odd j ``random-coordinate[j]`` with ``u = ±r·e_i`` for a
        uniform random coordinate ``i`` and sign.
        """
        k = check_pair_count(k)
        v = as_vector(x, "x", "L1Neighbours")
        rng = make_rng(rng_or_seed)
        m, r = v.w.size, self.radius
        shifts: list[tuple[str, np.ndarray]] = []
        for j in range(k):
            if j % 2 == 0:
                g = rng.laplace(size=m)
                norm = float(np.sum(np.abs(g)))
                while norm == 0.0:  # probability zero; keeps the division safe
                    g = rng.laplace(size=m)
                    norm = float(np.sum(np.abs(g)))
                shifts.append((f"random[{j}]", g * (r / norm)))
            else:
                e = np.zeros(m)
                e[int(rng.integers(m))] = r if rng.random() < 0.5 else -r
                shifts.append((f"random-coordinate[{j}]", e))
        return self._pairs_from_shifts(v, shifts)

    def l1_distance_bound(self, dim: int) -> float:
        check_dim(dim)
        return self.radius

    def l2_distance_bound(self, dim: int) -> float:
        check_dim(dim)
        return self.radius

    def linf_distance_bound(self, dim: int) -> float:
        check_dim(dim)
        return self.radius

