"""``neighbour_pairs(relation)``: the pair strategy of any neighbour relation object."""


from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from dpverify.errors import InputError
from dpverify.neighbours import AddRemoveOne, L1Neighbours, LInfNeighbours, NeighbourRelation, Pair, ReplaceOne
from dpverify.neighbours.base import is_weighted
from dpverify.testing.strategies.arguments import DrawFn, check_bool, check_domain, check_positive, check_sizes, check_special, is_int
from dpverify.testing.strategies.values import RecordSpec
from dpverify.testing.strategies.dataset_pairs import add_remove_around, add_remove_generated, check_base_dataset, replace_around, replace_generated
from dpverify.testing.strategies.vector_pairs import VectorSource, draw_vector_pair, shifted_weights, vector_source


# --------------------------------------------------------------------------------------------------
# Dispatch on a relation object
# --------------------------------------------------------------------------------------------------


def _prefixed(strategy: SearchStrategy[Pair], prefix: str) -> SearchStrategy[Pair]:
    return strategy.map(lambda p: Pair(p.x0, p.x1, prefix + p.label))


def neighbour_pairs(
    relation: Any,
    x: Any = None,
    *,
    domain: tuple[float, float] | None = None,
    min_size: int = 0,
    max_size: int = 20,
    special: Sequence[float] = (),
    nonfinite: bool = False,
    base_radius: float | None = None,
) -> SearchStrategy[Pair]:
    """Pairs of neighbours under ``relation`` (an object of :mod:`dpverify.neighbours`).

    ``LInfNeighbours`` / ``L1Neighbours``: ``x`` (a vector or weighted input; or an int dimension when
    ``domain`` is given) is required.  With ``domain=(low, high)`` the base weights are drawn from it
    (keeping ``x``'s dimension and topology; ``special`` values are used there), labels ``domain-base:...``;
    elif ``base_radius`` the base is ``x`` shifted by at most ``base_radius`` in ℓ∞ (StatDP shift
    patterns), labels ``shifted-x:...``; else the base is ``x``, labels ``x:...``.  See :func:`linf_pairs`
    / :func:`l1_pairs`.

    ``special`` values need ``domain`` there (they are drawn as base weights).

    ``AddRemoveOne`` / ``ReplaceOne``: ``domain=(low, high)`` (the public range of a record's values) is
    required unless the relation has ``candidates``, in which case every record is drawn from the
    candidates.  Records are scalars unless ``x`` is 2-D (then ``x.shape[1]`` columns) or the candidates
    are rows.  With ``x`` half of the pairs are around the fixed dataset ``x`` (labels ``around-x:...``)
    and half on generated datasets of ``min_size``..``max_size`` records (labels ``generated:...``);
    without ``x`` all are generated.  See :func:`add_remove_pairs` / :func:`replace_pairs`.

    Every pair satisfies ``relation.contains(p.x0, p.x1)``, except pairs holding NaN / ±inf records
    (``nonfinite=True``, dataset relations only): the relation rejects such records as malformed.
    """
    if isinstance(relation, (LInfNeighbours, L1Neighbours)):
        return _vector_neighbour_pairs(relation, x, domain, special, nonfinite, base_radius)
    if isinstance(relation, (AddRemoveOne, ReplaceOne)):
        return _dataset_neighbour_pairs(relation, x, domain, min_size, max_size, special, nonfinite, base_radius)
    if isinstance(relation, NeighbourRelation):
        return _relation_pairs(relation, x)
    raise InputError(
        f"neighbour_pairs: relation must be a dpverify.neighbours.NeighbourRelation (LInfNeighbours, L1Neighbours, "
        f"AddRemoveOne, ReplaceOne or a subclass of your own), got {type(relation).__name__}: {relation!r}."
    )


def _relation_pairs(relation: NeighbourRelation, x: Any) -> SearchStrategy[Pair]:
    """Pairs of any other relation, through its public methods only: around a base drawn from ``x`` (an input or a
    strategy of inputs), either one of ``relation.patterns(base)`` or ``relation.random_pairs(base, 1, seed)`` with a
    drawn seed.  Every pair is checked with ``relation.contains``."""
    if x is None:
        raise InputError(f"neighbour_pairs: {type(relation).__name__} is not a built-in relation, so pairs are drawn "
                         f"around a base input: pass x (an input, or a Hypothesis strategy of inputs)")
    base = x if isinstance(x, SearchStrategy) else st.just(x)

    @st.composite
    def pairs(draw: DrawFn) -> Pair:
        b = draw(base)
        if draw(st.booleans()):
            patterns = relation.patterns(b)
            if patterns:
                return draw(st.sampled_from(patterns))
        drawn = relation.random_pairs(b, 1, draw(st.integers(0, 2**32 - 1)))
        assume(len(drawn) == 1)
        if not relation.contains(drawn[0].x0, drawn[0].x1):
            raise InputError(f"neighbour_pairs: {type(relation).__name__}.random_pairs returned a pair that its own "
                             f"contains() rejects: {drawn[0].label}")
        return drawn[0]

    return pairs()


def _vector_neighbour_pairs(
    relation: LInfNeighbours | L1Neighbours,
    x: Any,
    domain: Any,
    special: Any,
    nonfinite: Any,
    base_radius: Any,
) -> SearchStrategy[Pair]:
    fn = f"neighbour_pairs({type(relation).__name__})"
    norm = "linf" if isinstance(relation, LInfNeighbours) else "l1"
    if x is None:
        raise InputError(
            f"{fn}: pass x=, the base vector (or weighted input such as a graph) whose neighbours to "
            "generate; its length (topology) fixes the dimension."
        )
    if check_bool(nonfinite, "nonfinite", fn):
        raise InputError(
            f"{fn}: nonfinite=True applies to dataset relations only; weight neighbours need finite weights."
        )
    if domain is not None:
        lo, hi = check_domain(domain, fn)
        sp = check_special(special, lo, hi, fn)
        src = vector_source(x, lo, hi, fn, sp, name="x")
        return _prefixed(draw_vector_pair(src, relation.radius, norm), "domain-base:")
    if len(check_special(special, -math.inf, math.inf, fn)):
        raise InputError(f"{fn}: special values are drawn as base weights, so they need domain=(low, high).")
    if is_int(x):
        raise InputError(
            f"{fn}: x is the dimension {x}; pass domain=(low, high) to draw base vectors of that dimension, "
            "or pass the base vector itself."
        )
    src = vector_source(x, None, None, fn, name="x")
    if base_radius is not None:
        br = check_positive(base_radius, "base_radius", fn, "the largest ℓ∞ shift of the base from x")
        v = src.fixed
        shifted = VectorSource(src.m, None, src.rebuild, shifted_weights(v.w, br))
        return _prefixed(draw_vector_pair(shifted, relation.radius, norm), "shifted-x:")
    return _prefixed(draw_vector_pair(src, relation.radius, norm), "x:")


def _dataset_neighbour_pairs(
    relation: AddRemoveOne | ReplaceOne,
    x: Any,
    domain: Any,
    min_size: Any,
    max_size: Any,
    special: Any,
    nonfinite: Any,
    base_radius: Any,
) -> SearchStrategy[Pair]:
    cls = type(relation).__name__
    fn = f"neighbour_pairs({cls})"
    replace = isinstance(relation, ReplaceOne)
    nf = check_bool(nonfinite, "nonfinite", fn)
    if base_radius is not None:
        raise InputError(f"{fn}: base_radius applies to LInfNeighbours / L1Neighbours only; leave it None.")
    mn, mx = check_sizes(min_size, max_size, fn, gap=0 if replace else 1)
    if replace and mx < 1:
        raise InputError(f"{fn}: max_size must be at least 1 (a record to replace), got {max_size!r}.")
    x_dim: int | None = None
    if x is not None:
        xa = np.asarray(x) if not is_weighted(x) else None
        if xa is None or xa.ndim not in (1, 2):
            raise InputError(
                f"{fn}: x must be a dataset, a 1-D array of scalar records or a 2-D array with one record "
                f"per row, got {type(x).__name__}" + ("" if xa is None else f" of shape {xa.shape}") + "."
            )
        x_dim = None if xa.ndim == 1 else int(xa.shape[1])
    if relation.candidates is not None:
        cand = np.asarray(relation.candidates)
        if nf:
            raise InputError(f"{fn}: nonfinite=True cannot be combined with candidates (records come from them).")
        if len(check_special(special, -math.inf, math.inf, fn)):
            raise InputError(f"{fn}: special values cannot be combined with candidates (records come from them).")
        c_dim = None if cand.ndim == 1 else int(cand.shape[1])
        if x is not None and x_dim != c_dim:
            raise InputError(
                f"{fn}: x has {'scalar records' if x_dim is None else f'{x_dim}-column records'} but the "
                f"candidates are {'scalars' if c_dim is None else f'{c_dim}-column records'}; make them agree."
            )
        if replace and len({tuple(np.atleast_1d(c).tolist()) for c in cand}) < 2:
            raise InputError(
                f"{fn}: the relation has a single distinct candidate record, so no dataset of candidates has "
                "a replace-one neighbour; give at least two different candidates."
            )
        lo, hi = (float(cand.min()), float(cand.max())) if domain is None else check_domain(domain, fn)
        spec = RecordSpec(c_dim, lo, hi, (), True, False, cand)
    else:
        if domain is None:
            raise InputError(
                f"{fn}: pass domain=(low, high), the public range of a record's values, so that records can "
                "be generated (or give the relation candidates=...)."
            )
        lo, hi = check_domain(domain, fn)
        spec = RecordSpec(x_dim, lo, hi, check_special(special, lo, hi, fn), True, nf)
    generated = replace_generated(spec, mn, mx) if replace else add_remove_generated(spec, mn, mx)
    generated = _prefixed(generated, "generated:")
    if x is None:
        return generated
    base = check_base_dataset(x, spec, fn, "x", nonempty=replace)
    around = replace_around(spec, base) if replace else add_remove_around(spec, base)
    return st.one_of(_prefixed(around, "around-x:"), generated)
