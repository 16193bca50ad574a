"""Hypothesis strategies that generate neighbouring inputs for property-based tests of DP code.

This module is what a user imports to write their own property tests ("for every pair of neighbouring
inputs, my function changes by at most its claimed sensitivity"), and what the hypothesis stage of
``dpverify.check_sensitivity`` draws its :class:`~dpverify.neighbours.Pair` objects from.  Every strategy
returns a :class:`hypothesis.strategies.SearchStrategy`, validates its arguments when it is *built* (a bad
argument raises :class:`~dpverify.errors.InputError` naming it and what to pass instead, before any test
runs), and is composed of hypothesis primitives only, so failing examples shrink to small, readable
inputs (index 0, the first pattern, the fewest records).

Strategies and the edge cases they are built to reach
-----------------------------------------------------
:func:`vectors` -- 1-D float vectors in ``[low, high]``.
    Besides arbitrary values (hypothesis floats in the range): the endpoints ``low`` and ``high``, ``0``
    when it lies inside, the user's ``special`` values (e.g. the edges of the split intervals of an
    algorithm), and the float neighbours (``np.nextafter``) of the endpoints and special values that lie
    inside the range; with ``ties=True`` also all-equal vectors and vectors whose values come from a pool
    of one to three values.
    Why: sensitivity proofs fail at boundaries and ties.  DPM ("Differentially private clustering by separation",
    Definition 5) counts the records in the *closed* interval ``[s - β/2, s + β/2]``, so adjacent
    intervals share their boundary point and a record exactly on it -- or one ulp beside it -- is counted
    twice or once; Definition 6 ranks a split candidate ``s`` by inserting it into the sorted records, and
    the tie convention (records equal to ``s``, several equal records) is not in the paper.  Such inputs
    have probability zero under a uniform draw, so they are drawn on purpose.
:func:`datasets` -- a dataset of scalar records (1-D array) or of ``dim``-column records (2-D array).
    Sizes hit ``min_size``, 0 (the empty dataset), 1, 2 and ``max_size`` on purpose, plus anything in
    between; record values as in :func:`vectors`; whole-record duplicates (records drawn from a small
    pool), all-identical datasets and extreme records.  ``nonfinite=True`` additionally allows NaN,
    +inf and -inf values (opt-in; never by default).
:func:`linf_pairs` / :func:`l1_pairs` -- weight-neighbour pairs ``x1 = x0 + d`` (vectors, or weighted
    inputs with a public topology such as graphs: only ``.weights`` change, through ``.with_weights``).
    The shift ``d`` follows the StatDP patterns of :mod:`dpverify.neighbours` (Ding et al., CCS 2018,
    ``generate_databases``): one coordinate up / down by the full radius, all up / all down, half up
    half down (at a drawn split point), one up rest down, random sign vectors, vertices ``{-r, 0, +r}``,
    the X shape (``x0 = x + u/2``, ``x1 = x - u/2``), and arbitrary shifts inside the ball.  For ℓ1: the
    whole budget on one coordinate, split over two coordinates, spread over all, arbitrary points inside
    the ball.  Extreme shifts are where a claimed sensitivity ``Δ = μ`` (seed 001, Def. 2.1) or ``Δ = r``
    (Sealfon) is attained, so they come first and most often.
:func:`add_remove_pairs` -- ``(D, D ∪ {x})`` and ``(D ∪ {x}, D)`` (both directions), with ``x`` a fresh
    record, a duplicate of an existing record (a tie), a boundary record (``low``, ``high``, special
    values and their float neighbours, corners of the box), or a new extreme beyond all others (moves the
    minimum / maximum, the range-dependent quantities and every rank).  ``x`` is inserted at a drawn
    position, not only at the end, since code may treat the first or last record specially.
:func:`replace_pairs` -- ``D`` and ``D`` with record ``i`` replaced (same size; both directions), by the
    same kinds of records plus a *nudge* (the record moved by one ulp, e.g. across a closed-interval
    boundary).  The replacement always differs from the replaced record.
:func:`neighbour_pairs` -- dispatches on a relation object of :mod:`dpverify.neighbours` and prefixes
    every label with how the pair was made (``x:``, ``domain-base:``, ``shifted-x:``, ``around-x:``,
    ``generated:``).

Guarantees: every pair satisfies ``relation.contains(p.x0, p.x1)`` for its relation (``LInfNeighbours(r)``,
``L1Neighbours(r)``, ``AddRemoveOne()``, ``ReplaceOne()``; the candidates' relation for
:func:`neighbour_pairs`), except pairs that hold NaN or ±inf records (``nonfinite=True``): the dataset
relations reject non-finite records as malformed inputs (``contains`` raises ``InputError``), so such pairs
are neighbours by construction (one record added / replaced) but cannot be checked by the relation.  The
vector strategies are stricter than the relation's 1e-12 relative tolerance: the *computed*
``x1.weights - x0.weights`` has ℓ∞ (resp. ℓ1, summed as ``np.sum(np.abs(...))``) norm at most ``radius``
exactly (coordinates are moved towards ``x0`` by ulps when rounding would overshoot).  Every dataset of a
generated dataset pair has between ``min_size`` and ``max_size`` records (``max_size >= min_size + 1`` for
add/remove); pairs around a fixed ``base`` dataset have ``len(base)`` and ``len(base) ± 1`` records.

Example::

    import numpy as np
    from hypothesis import given, target
    from dpverify.neighbours import LInfNeighbours
    from dpverify.testing.strategies import neighbour_pairs

    @given(neighbour_pairs(LInfNeighbours(1.0), x=np.zeros(3)))
    def test_sum_has_sensitivity_3(p):
        change = abs(p.x1.sum() - p.x0.sum())
        target(change)                      # steer hypothesis towards large changes
        assert change <= 3.0 + 1e-9, p.label

Modules: ``arguments`` (eager argument checks), ``values`` (vectors, datasets), ``dataset_pairs``,
``vector_pairs``, ``relations`` (the strategy of any relation object).
"""

from dpverify.testing.strategies.dataset_pairs import add_remove_pairs, replace_pairs
from dpverify.testing.strategies.relations import neighbour_pairs
from dpverify.testing.strategies.values import datasets, vectors
from dpverify.testing.strategies.vector_pairs import l1_pairs, linf_pairs

__all__ = ["vectors", "datasets", "linf_pairs", "l1_pairs", "add_remove_pairs", "replace_pairs", "neighbour_pairs"]
