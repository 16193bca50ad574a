"""The interfaces dpverify consumes, declared in one place (structural ``Protocol``s: an object qualifies by its
methods, never by inheriting from dpverify).

=========================  ============================================  ===========================================
protocol                   what it is                                    checks that use it
=========================  ============================================  ===========================================
:class:`Mechanism`         ``mechanism(x, n, rng) -> ndarray``           every statistical check (``dpverify.audit``)
:class:`ExactLaw`          ``log_pmf(x) -> (outputs, log_p)``            ``exact`` (``dpverify.exact.exact_audit``)
                           or ``pmf(x)``
:class:`NoiseRelease`      ``release(x, n, noise)`` drawing all noise    ``replay`` (frozen-noise replay)
                           through a :class:`NoiseSource`
:class:`LedgerKeeper`      ``privacy_ledger(x, rng) -> [Charge]``        ``ledger`` (recomposed budget)
:class:`Theorem`           quantity, bound, direction, ``sample``        ``theorem`` (``dpverify.check_theorem``)
:class:`Relation`          the public methods of a neighbour relation    pairs everywhere (subclass
                                                                         ``dpverify.neighbours.NeighbourRelation``)
=========================  ============================================  ===========================================

A check kind (:class:`dpverify.suites.kinds.CheckKind`) and an event family
(:data:`dpverify.statistical.search.EventFamily`) are the two extension points of the verifier itself
(docs/architecture.md).  :func:`capabilities` lists which of these protocols an object offers, which is how
:func:`dpverify.testing.check_mechanism` chooses the checks it runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = ["Mechanism", "ExactLaw", "NoiseSource", "NoiseRelease", "Charge", "LedgerKeeper", "Theorem", "Relation",
           "capabilities"]


@runtime_checkable
class Mechanism(Protocol):
    """``n`` independent outputs on input ``x``, first axis of length ``n``, every random number drawn from ``rng``
    (same seed, same outputs).  Discrete outputs are integer codes, continuous ones floats."""

    def __call__(self, x: Any, n: int, rng: np.random.Generator) -> np.ndarray: ...


@runtime_checkable
class ExactLaw(Protocol):
    """An exact output law: ``log_pmf(x)`` returns ``(outputs, log_p)`` over a finite support (or ``pmf(x)`` an array
    or a dict ``output -> probability``; either method qualifies)."""

    def log_pmf(self, x: Any) -> tuple[Any, np.ndarray]: ...


@runtime_checkable
class NoiseSource(Protocol):
    """What a replayable mechanism draws its noise through (``algorithms.noise.NoiseSource`` is the plain one; the
    replay passes recording and replaying sources with the same methods)."""

    def add(self, step: str, value: Any, draw: Callable[[np.random.Generator], Any], *, sensitivity: float,
            norm: str = "l1", scale: float | None = None, kind: str = "other") -> np.ndarray: ...

    def select(self, step: str, utilities: Any, draw: Callable[[np.random.Generator], Any], *, sensitivity: float,
               norm: str = "linf", scale: float | None = None) -> np.ndarray: ...


@runtime_checkable
class NoiseRelease(Protocol):
    """``release(x, n, noise)``: the mechanism with every randomised step declared to ``noise``."""

    def release(self, x: Any, n: int, noise: NoiseSource) -> np.ndarray: ...


@runtime_checkable
class Charge(Protocol):
    """One privacy charge a run records: the mechanism ``kind``, its ``epsilon`` and ``delta``, the recursion
    ``level`` (or ``None``), the ``subset`` of records it touched (or ``None``) and whether it composes ``parallel``
    with its siblings."""

    kind: str
    epsilon: float
    delta: float
    level: int | None
    subset: Any
    parallel: bool


@runtime_checkable
class LedgerKeeper(Protocol):
    """``privacy_ledger(x, rng)``: the charges of one run on ``x``, recorded as the algorithm spends its budget."""

    def privacy_ledger(self, x: Any, rng: np.random.Generator) -> Sequence[Charge]: ...


@runtime_checkable
class Theorem(Protocol):
    """A utility theorem as a checkable object: ``quantity`` (``"probability"``, ``"mean"``, ``"quantile"``,
    ``"always"``), its ``bound`` and ``direction`` (``"at_least"``, ``"at_most"``, ``"equal"``), the ``hypotheses``
    it needs, and ``sample(n, rng)``: ``n`` independent values of the quantity's variable."""

    name: str
    statement: str
    quantity: str
    parameters: Mapping[str, Any]

    def hypotheses(self) -> Any: ...

    def bound(self) -> float: ...

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray: ...


@runtime_checkable
class Relation(Protocol):
    """The public methods of a neighbour relation (``dpverify.neighbours.NeighbourRelation`` implements them; a user
    relation subclasses it and registers with ``dpverify.neighbours.register_relation``)."""

    @property
    def name(self) -> str: ...

    def reason_not_neighbours(self, x0: Any, x1: Any) -> str | None: ...

    def contains(self, x0: Any, x1: Any) -> bool: ...

    def patterns(self, x: Any) -> list[Any]: ...

    def random_pairs(self, x: Any, k: int, rng_or_seed: np.random.Generator | int) -> list[Any]: ...

    def pairs(self, x: Any, patterns: bool = True, random: int = 0, seed: Any = None) -> list[Any]: ...


def capabilities(obj: Any) -> frozenset[str]:
    """The protocols ``obj`` offers, by name: ``"mechanism"``, ``"exact"`` (``log_pmf`` or ``pmf``), ``"replay"``
    (``release``), ``"ledger"`` (``privacy_ledger``), ``"theorem"``, ``"relation"``.

    >>> sorted(capabilities(lambda x, n, rng: rng.random(n)))
    ['mechanism']
    """
    found = set()
    if callable(obj) and not isinstance(obj, type):
        found.add("mechanism")
    if callable(getattr(obj, "log_pmf", None)) or callable(getattr(obj, "pmf", None)):
        found.add("exact")
    if callable(getattr(obj, "release", None)):
        found.add("replay")
    if callable(getattr(obj, "privacy_ledger", None)):
        found.add("ledger")
    if all(hasattr(obj, a) for a in ("quantity", "bound", "sample", "hypotheses")):
        found.add("theorem")
    if all(callable(getattr(obj, a, None)) for a in ("reason_not_neighbours", "patterns", "random_pairs")):
        found.add("relation")
    return frozenset(found)
