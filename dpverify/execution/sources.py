"""Which stream each input of an audit draws from: pairs that share an input share its outputs.

The neighbour pairs of an audit often share inputs: a relation around one input pairs it with each of its
neighbours (13 pairs over 14 distinct inputs for an ℓ∞ ball around a 5-vector), and DP-Sniper's and StatDP's
pattern pairs share their base input.  Every batch is seeded by its coordinates ``(phase, pair, side, batch)``
(:func:`dpverify.execution.sampling.run_batch`); with :func:`stream_sources` an input that appeared before in the
pair list is seeded by the coordinates of its first appearance instead, so its outputs are *the same outputs*
wherever it appears, and a process holding several pairs with that input draws them once.

Why this is sound: within one pair the two inputs' outputs stay independent draws (two sides of one pair never
share a source, even when they are equal); across pairs the outputs were independent only to be thrown away.  A
test of several pairs that holds whatever their dependence (a union bound over pairs, events and directions; the
average of test supermartingales on one filtration) keeps its level: each pair's own statistic has the same law as
before.  Results still do not depend on the number of workers: a source is a seed, not a process.

Inputs are equal here when their *values and types* are (stricter than :func:`dpverify.neighbours.base.value_key`,
which tells the inputs of a pair apart by value alone: a stream shared by two inputs a mechanism could tell apart
would be a wrong sample of one of them): numpy arrays (not of object dtype) of the same dtype, shape and bytes,
Python or numpy scalars of the same type and value, lists and tuples of such scalars (nested) with the same
``repr``, and objects whose class defines ``__dpverify_key__()`` (a hashable key of everything a mechanism may read:
:class:`algorithms.graph.weighted_graph.WeightedGraph` has one) of the same class and key. Anything else (networkx
graphs, dicts, user objects without that method) is its own source: no sharing, the streams as before.
"""

from __future__ import annotations

from typing import Any, Hashable, Sequence

import numpy as np

__all__ = ["input_key", "stream_sources", "Source"]

#: the coordinates ``(pair index, side)`` whose seeds a stream uses
Source = tuple[int, int]

_SCALARS = (bool, int, float, complex, np.bool_, np.number)
#: lists and tuples up to this many scalars are compared by their repr (longer ones are their own source)
MAX_SEQUENCE = 100_000


def _plain(x: Any, budget: list[int]) -> bool:
    """``x`` is a (nested) list or tuple of scalars, at most ``budget[0]`` of them."""
    for v in x:
        if isinstance(v, (list, tuple)):
            if not _plain(v, budget):
                return False
        elif isinstance(v, _SCALARS):
            budget[0] -= 1
            if budget[0] < 0:
                return False
        else:
            return False
    return True


def input_key(x: Any) -> Hashable | None:
    """A key equal for two inputs exactly when a mechanism cannot tell them apart by value or type (module
    docstring); ``None`` for inputs that are never shared."""
    if isinstance(x, _SCALARS):
        return ("scalar", type(x).__name__, repr(x))
    if type(x) is np.ndarray and x.dtype != object:
        return ("ndarray", x.dtype.str, x.shape, x.tobytes())
    if type(x) in (list, tuple) and _plain(x, [MAX_SEQUENCE]):
        return ("sequence", repr(x))
    own = getattr(type(x), "__dpverify_key__", None)
    if callable(own):
        return ("object", type(x).__module__, type(x).__qualname__, own(x))
    return None


def stream_sources(pairs: Sequence[Any]) -> list[tuple[Source, Source]]:
    """For each pair (with inputs ``x0``, ``x1``) the sources of its two streams: ``(i, side)`` itself, or the
    first earlier ``(pair, side)`` with an equal input (:func:`input_key`).  The two sides of a pair never share a
    source (a pair of equal inputs keeps its own two)."""
    first: dict[Hashable, Source] = {}
    out: list[tuple[Source, Source]] = []
    for i, p in enumerate(pairs):
        keys = (input_key(p.x0), input_key(p.x1))
        src = [first.get(k, (i, side)) if k is not None else (i, side) for side, k in enumerate(keys)]
        if src[0] == src[1]:
            src = [(i, 0), (i, 1)]
        for side, k in enumerate(keys):
            if k is not None:
                first.setdefault(k, (i, side))
        out.append((src[0], src[1]))
    return out
