"""The registry of neighbour relations that suite files name: ``relation = { kind = "<name>", ... }``.

The built-in relations (``linf``, ``l1``, ``add_remove``, ``replace``) are registered here; a user relation -- any
subclass of :class:`~dpverify.neighbours.base.NeighbourRelation` -- joins them with :func:`register_relation` (in
a module a suite lists under ``[suite] plugins``), after which suite entries, the audit, pair searches and
:func:`dpverify.testing.strategies.neighbour_pairs` use it through its public methods alone.

Example::

    from dpverify.neighbours import register_relation
    register_relation("swap-adjacent", SwapAdjacent)      # SwapAdjacent(**params) from the suite table
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from dpverify.errors import InputError
from dpverify.neighbours.base import NeighbourRelation
from dpverify.neighbours.datasets import AddRemoveOne, ReplaceOne
from dpverify.neighbours.vectors import L1Neighbours, LInfNeighbours

__all__ = ["BUILTIN_RELATIONS", "register_relation", "relation_names", "build_relation", "is_builtin_relation"]

RelationFactory = Callable[..., NeighbourRelation]

_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_.\-]*$")
_FACTORIES: dict[str, RelationFactory] = {
    "linf": lambda radius: LInfNeighbours(radius),
    "l1": lambda radius: L1Neighbours(radius),
    "add_remove": lambda candidates=None: AddRemoveOne(candidates=candidates),
    "replace": lambda candidates=None: ReplaceOne(candidates=candidates),
}
#: The relations dpverify ships (their suite keys are validated by :mod:`dpverify.suites.schema`).
BUILTIN_RELATIONS: tuple[str, ...] = tuple(_FACTORIES)


def register_relation(name: str, factory: RelationFactory, *, replace: bool = False) -> None:
    """Make ``relation = { kind = name, key = value, ... }`` build ``factory(key=value, ...)``.

    ``factory`` is a :class:`NeighbourRelation` subclass or a function returning an instance.  Registering a name
    twice raises unless ``replace`` (a built-in name can never be replaced).
    """
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise InputError(f"relation name must be a word of letters, digits, '_', '.', '-' starting with a letter, "
                         f"got {name!r}")
    if not callable(factory):
        raise InputError(f"relation {name!r}: the factory must be callable (a NeighbourRelation subclass or a "
                         f"function returning one), got {type(factory).__name__}")
    if name in BUILTIN_RELATIONS:
        raise InputError(f"relation {name!r} is built in and cannot be replaced; register under another name")
    if name in _FACTORIES and not replace and _FACTORIES[name] is not factory:
        raise InputError(f"relation {name!r} is already registered; pass replace=True to replace it")
    _FACTORIES[name] = factory


def relation_names() -> tuple[str, ...]:
    """Every registered relation name, built-ins first."""
    return tuple(_FACTORIES)


def is_builtin_relation(name: str) -> bool:
    return name in BUILTIN_RELATIONS


def build_relation(name: str, **params: Any) -> NeighbourRelation:
    """The relation registered as ``name``, built with ``params``; an InputError names what went wrong."""
    factory = _FACTORIES.get(name)
    if factory is None:
        raise InputError(f"unknown relation kind {name!r}; registered: {', '.join(_FACTORIES)} (a user relation "
                         f"is registered with dpverify.neighbours.register_relation in a suite plugin module)")
    try:
        relation = factory(**params)
    except InputError:
        raise
    except TypeError as exc:
        raise InputError(f"relation {name!r} cannot be built from {params!r}: {exc}") from None
    if not isinstance(relation, NeighbourRelation):
        raise InputError(f"relation {name!r}: its factory returned a {type(relation).__name__}, not a "
                         f"dpverify.neighbours.NeighbourRelation")
    return relation
