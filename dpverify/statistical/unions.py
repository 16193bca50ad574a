"""Prefix unions in estimated likelihood-ratio order: the event family shared by the outcome unions, the cells,
the atom sweep and the item sets (:mod:`dpverify.statistical.items`).

``m`` outcomes (distinct outputs, cells, point masses, items) are ordered by the log ratio of their counts on the
selection half, and the unions of the first ``t`` of that order -- the Neyman--Pearson sets of the empirical
distributions (StatDP, Ding et al. CCS 2018, for categorical outputs) -- are the candidates; one per direction is
kept."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Callable

import numpy as np
from numpy.typing import NDArray

from dpverify.statistical.candidates import Candidate, CandidateSearch
from dpverify.statistical.events import Event

__all__ = ["prefix_unions", "Cumulative"]

#: ``cumulative(order)`` -> for each of the four halves, how many of its rows lie in the union of the first ``t + 1``
#: outcomes of ``order`` (``t = 0 .. m-1``): the prefix counts of outcomes that are not disjoint (a row holding
#: several items lies in every prefix from its first item on)
Cumulative = Callable[[NDArray], Sequence[NDArray]]


def prefix_unions(counts: Sequence[NDArray], m: int, search: CandidateSearch,
                  make: Callable[[NDArray], Event], group: str, family: str, honest: bool = False,
                  log_ratio: Callable[[NDArray, NDArray], NDArray] | None = None,
                  cumulative: Cumulative | None = None) -> None:
    """Prefix unions of ``m`` outcomes (``counts``: how many rows of each of the four halves are outcome ``0..m-1``)
    ordered by likelihood ratio.

    The order is estimated on the selection half.  By default the prefix length is chosen on the scoring half (a
    one-dimensional choice along a nested family, so its optimism is small when the outcomes are few: ordering
    and scoring on the same counts would pick unions of outcomes whose counts are high by chance).  With
    ``honest``, for families of hundreds of cells where that choice is no longer small, the length is chosen on
    the selection half too and the scoring half only scores the chosen union, so that finalists are ranked
    across families on counts that played no part in choosing them.  ``make(sorted outcome codes)`` builds the
    event.  ``log_ratio(an, ad)``: the estimated log likelihood ratio of each outcome from its selection-half
    counts that orders them (default: the smoothed ratio ``(an + 0.5) / (ad + 0.5)`` of each outcome alone).
    ``cumulative``: the prefix counts of outcomes that overlap (:data:`Cumulative`; default: the cumulative sums of
    ``counts`` in that order, for disjoint outcomes).
    """
    c = list(counts)
    search.scored += 2 * m
    for direction, (sn, sd, qn, qd) in enumerate(((0, 1, 2, 3), (1, 0, 3, 2))):
        an, ad = c[sn], c[sd]
        key = np.log((an + 0.5) / (ad + 0.5)) if log_ratio is None else log_ratio(an, ad)
        order = np.argsort(-key, kind="stable")
        cum = [np.cumsum(x[order]) for x in c] if cumulative is None else list(cumulative(order))
        kn, kd = cum[qn], cum[qd]
        if honest:
            i = int(np.argmax(search.projection(family, "select")(cum[sn], cum[sd])))
            s = search.projection(family)(kn[i:i + 1], kd[i:i + 1])
            kn, kd, i = kn[i:i + 1], kd[i:i + 1], (i, 0)
        else:
            s = search.score(kn, kd)
            i = int(np.argmax(s))
            i = (i, i)
        length, at = i
        if np.isfinite(s[at]):
            search.out.append(Candidate(make(np.sort(order[: length + 1])), direction, float(s[at]), int(kn[at]),
                                        int(kd[at]), f"{group}/d{direction}", family))
