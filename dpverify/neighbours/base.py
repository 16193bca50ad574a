"""Base of the neighbour relations: the :class:`Pair` record, the :class:`NeighbourRelation` interface every
relation implements, shared input checks, and :func:`as_pairs` (explicit pairs into :class:`Pair` records)."""

from __future__ import annotations

import abc
import math
import numbers
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np


from dpverify.errors import InputError

__all__ = [
    "Pair",
    "WeightedInput",
    "NeighbourRelation",
        "as_pairs",
]

#: Relative tolerance used by the vector relations (see the module docstring).
RELATIVE_TOLERANCE: float = 1e-12

#: Datasets with at most this many records get a "remove[i]" / "replace[i,...]" pattern for every i.
ALL_RECORDS_MAX: int = 8
#: Vectors with at most this many coordinates get "one-up[i]" / "one-down[i]" for every i.
ALL_COORDINATES_MAX: int = 4

SWAPPED_SUFFIX = ":swapped"


# --------------------------------------------------------------------------------------------------
# Pair and the weighted-input protocol
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Pair:
    """A candidate pair of neighbouring inputs ``(x0, x1)`` with a readable ``label``.

    ``label`` names how the pair was made, e.g. ``"one-up[3]"``, ``"all-down"``, ``"random[7]"``,
    ``"remove[2]"``.  Equality compares the label and the inputs by value (arrays element-wise);
    pairs are not hashable because the arrays they hold are mutable.
    """

    x0: Any
    x1: Any
    label: str = "pair"

    def swapped(self) -> Pair:
        """The same pair in the other direction, ``(x1, x0)``; its label gains (or loses) ``:swapped``."""
        if self.label.endswith(SWAPPED_SUFFIX):
            label = self.label[: -len(SWAPPED_SUFFIX)]
        else:
            label = self.label + SWAPPED_SUFFIX
        return Pair(self.x1, self.x0, label)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Pair):
            return NotImplemented
        return (
            self.label == other.label
            and value_key(self.x0) == value_key(other.x0)
            and value_key(self.x1) == value_key(other.x1)
        )

    __hash__ = None  # type: ignore[assignment]


@runtime_checkable
class WeightedInput(Protocol):
    """An input whose private part is a 1-D weight vector on a public structure (e.g. a graph).

    ``weights`` is the 1-D array of (edge) weights; ``with_weights(new)`` returns a copy of the object
    with the same public structure (topology) and the weights ``new``.  The vector relations perturb
    only the weights and return objects of the same type.  If both objects of a pair also expose an
    ``edges`` attribute, :meth:`NeighbourRelation.contains` additionally requires equal ``edges``.
    """

    @property
    def weights(self) -> Any: ...

    def with_weights(self, new_weights: np.ndarray) -> Any: ...


def is_weighted(x: object) -> bool:
    return not isinstance(x, np.ndarray) and isinstance(x, WeightedInput)


# --------------------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------------------


def value_key(v: Any) -> tuple[Any, ...]:
    """A hashable key such that equal inputs (by value) have equal keys."""
    if is_weighted(v):
        w = np.asarray(v.weights)
        edges = getattr(v, "edges", None)  # the topology, when the input has one (WeightedGraph)
        topo = None if edges is None else np.ascontiguousarray(edges).tobytes()
        return ("weighted", type(v), w.shape, w.dtype.str, w.tobytes(), topo)
    a = np.asarray(v)
    if a.dtype.kind == "O":
        return ("object", repr(v))
    return ("array", a.shape, a.dtype.str, np.ascontiguousarray(a).tobytes())


def dedupe(pairs: Iterable[Pair]) -> list[Pair]:
    """Drop pairs whose ``(x0, x1)`` (in this order) already appeared; the first label wins."""
    seen: set[tuple[Any, ...]] = set()
    out: list[Pair] = []
    for p in pairs:
        key = (value_key(p.x0), value_key(p.x1))
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


def make_rng(rng_or_seed: Any) -> np.random.Generator:
    if isinstance(rng_or_seed, np.random.Generator):
        return rng_or_seed
    if isinstance(rng_or_seed, np.random.SeedSequence):
        return np.random.default_rng(rng_or_seed)
    if isinstance(rng_or_seed, numbers.Integral) and not isinstance(rng_or_seed, bool):
        if int(rng_or_seed) < 0:
            raise InputError(f"seed must be a non-negative integer, got {rng_or_seed}.")
        return np.random.default_rng(int(rng_or_seed))
    if rng_or_seed is None:
        raise InputError(
            "random neighbour pairs need a seed so that they are reproducible: pass an integer seed "
            "or a numpy.random.Generator."
        )
    raise InputError(
        f"expected an integer seed or a numpy.random.Generator, got {type(rng_or_seed).__name__}."
    )


def check_pair_count(k: Any, what: str = "k") -> int:
    if not isinstance(k, numbers.Integral) or isinstance(k, bool) or int(k) < 0:
        raise InputError(f"{what} (number of random pairs) must be a non-negative integer, got {k!r}.")
    return int(k)


def check_dim(dim: Any) -> int:
    if not isinstance(dim, numbers.Integral) or isinstance(dim, bool) or int(dim) < 1:
        raise InputError(f"dim must be a positive integer (the input dimension), got {dim!r}.")
    return int(dim)


def check_radius(radius: Any, cls: str) -> float:
    if not isinstance(radius, numbers.Real) or isinstance(radius, bool):
        raise InputError(f"{cls}: radius must be a positive finite number, got {radius!r}.")
    r = float(radius)
    if not math.isfinite(r) or r <= 0.0:
        raise InputError(
            f"{cls}: radius must be a positive finite number, got {radius!r}; it is the largest "
            "change between neighbouring inputs (mu in the weight-DP papers)."
        )
    return r


def first_nonfinite(a: np.ndarray) -> tuple[int, ...] | None:
    bad = np.argwhere(~np.isfinite(a))
    if bad.size == 0:
        return None
    return tuple(int(i) for i in bad[0])


# --------------------------------------------------------------------------------------------------
# Base class
# --------------------------------------------------------------------------------------------------


class NeighbourRelation(abc.ABC):
    """Common interface of all neighbour relations (see the module docstring).

    Subclasses implement :attr:`name`, :meth:`reason_not_neighbours`, :meth:`patterns`,
    :meth:`random_pairs` and the three distance bounds.
    """

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """A readable description, e.g. ``"ℓ∞ radius 1.0"`` or ``"add/remove one record"``."""

    def __str__(self) -> str:
        return self.name

    @abc.abstractmethod
    def reason_not_neighbours(self, x0: Any, x1: Any) -> str | None:
        """``None`` if ``x0 ~ x1``, otherwise why not.  Raises InputError for malformed inputs."""

    def contains(self, x0: Any, x1: Any) -> bool:
        """Whether ``x0`` and ``x1`` are neighbours under this relation.

        Raises :class:`InputError` for malformed inputs (empty, NaN/inf, wrong dimensionality);
        returns ``False`` for well-formed inputs that are simply not neighbours.
        """
        return self.reason_not_neighbours(x0, x1) is None

    def validate_pair(self, x0: Any, x1: Any) -> None:
        """Raise :class:`InputError` explaining why ``(x0, x1)`` is not a neighbour pair, if it is not."""
        reason = self.reason_not_neighbours(x0, x1)
        if reason is not None:
            raise InputError(f"not neighbours under {self.name}: {reason}")

    @abc.abstractmethod
    def patterns(self, x: Any) -> list[Pair]:
        """Deterministic structured candidate pairs ``(x, x')`` (deduplicated, all neighbours)."""

    @abc.abstractmethod
    def random_pairs(self, x: Any, k: int, rng_or_seed: np.random.Generator | int) -> list[Pair]:
        """``k`` seeded random neighbour pairs around ``x`` (same seed, same pairs)."""

    def pairs(
        self,
        x: Any,
        patterns: bool = True,
        random: int = 0,
        seed: np.random.Generator | int | None = None,
    ) -> list[Pair]:
        """Structured patterns (if ``patterns``) followed by ``random`` seeded random pairs, deduplicated.

        ``seed`` is required when ``random > 0``.  A pair equal (same ``x0`` and ``x1``) to an earlier one
        is dropped, so the list can hold fewer than ``len(patterns) + random`` pairs.
        """
        n_random = check_pair_count(random, "random")
        if not patterns and n_random == 0:
            raise InputError(
                "pairs(): nothing requested; set patterns=True and/or random=<number of random pairs>."
            )
        out: list[Pair] = []
        if patterns:
            out.extend(self.patterns(x))
        if n_random:
            out.extend(self.random_pairs(x, n_random, seed))  # type: ignore[arg-type]
        return dedupe(out)

    @abc.abstractmethod
    def l1_distance_bound(self, dim: int) -> float:
        """Largest ℓ1 distance between neighbours of dimension ``dim`` (ℓ1 sensitivity of the identity)."""

    @abc.abstractmethod
    def l2_distance_bound(self, dim: int) -> float:
        """Largest ℓ2 distance between neighbours of dimension ``dim``."""

    @abc.abstractmethod
    def linf_distance_bound(self, dim: int) -> float:
        """Largest ℓ∞ distance between neighbours of dimension ``dim``."""



# --------------------------------------------------------------------------------------------------
# Normalising user-given pairs
# --------------------------------------------------------------------------------------------------


def as_pairs(pairs: Any, relation: NeighbourRelation | None = None) -> list[Pair]:
    """Normalise a list of :class:`Pair` or of 2-tuples / 2-lists ``(x0, x1)`` to a list of :class:`Pair`.

    Tuples get the label ``"pair[i]"``; a 3-tuple ``(x0, x1, label)`` keeps its string label.  If ``relation`` is given, every pair is checked with
    :meth:`NeighbourRelation.validate_pair` and the first non-neighbour pair is reported by index.
    Raises :class:`InputError` for an empty list or an element that is not a pair (naming its index).
    """
    if isinstance(pairs, Pair):
        raise InputError("as_pairs: expected a list of pairs, got a single Pair; wrap it in a list: [pair].")
    if isinstance(pairs, (np.ndarray, str, bytes)) or not isinstance(pairs, Iterable):
        raise InputError(
            f"as_pairs: expected a list of Pair or (x0, x1) tuples, got {type(pairs).__name__}."
        )
    items = list(pairs)
    if not items:
        raise InputError("as_pairs: the list of pairs is empty; give at least one (x0, x1) pair.")
    out: list[Pair] = []
    for i, p in enumerate(items):
        if isinstance(p, Pair):
            out.append(p)
        elif isinstance(p, (tuple, list)) and len(p) == 2:
            out.append(Pair(p[0], p[1], f"pair[{i}]"))
        elif isinstance(p, tuple) and len(p) == 3 and isinstance(p[2], str):
            out.append(Pair(p[0], p[1], p[2]))
        else:
            what = f"a {type(p).__name__}"
            if isinstance(p, (tuple, list)):
                what += f" of length {len(p)}"
            raise InputError(
                f"as_pairs: element {i} is {what}, not a Pair or an (x0, x1) tuple; if you meant a single "
                "pair, wrap it in a list: [(x0, x1)]."
            )
    if relation is not None:
        for i, p in enumerate(out):
            try:
                relation.validate_pair(p.x0, p.x1)
            except InputError as exc:
                raise InputError(f"as_pairs: element {i} ({p.label}): {exc}") from None
    return out
