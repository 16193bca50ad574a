"""The finalist reserved for the claim (dpverify/statistical/search_phase.py, ``_with_claim_finalist``).

Deterministic: candidates with fixed counts, no sampling."""

from __future__ import annotations

import numpy as np

from dpverify.statistical.candidates import Candidate
from dpverify.statistical.events import IntervalEvent
from dpverify.statistical.features import Identity
from dpverify.statistical.search_phase import _with_claim_finalist, power_ranks
from dpverify.statistical.stats import normal_quantile

N_SCORE, N_TEST, Z = 100_000, 1_000_000, normal_quantile(0.05 / 6)


def cand(k_num: int, k_den: int, at: float) -> Candidate:
    return Candidate(IntervalEvent(Identity(), at, at + 1.0), 0, 0.0, k_num, k_den, "g")


def run(chosen: list[Candidate], others: list[Candidate], claim: float, finalists: int = 3) -> list[Candidate]:
    pool = [(0, c) for c in chosen + others]
    out = _with_claim_finalist([(0, c) for c in chosen], pool, np.full(len(pool), N_SCORE), N_TEST, Z, 0.0, claim,
                               finalists)
    return [c for _, c in out]


def test_an_event_likelier_to_exceed_the_claim_takes_the_last_place() -> None:
    # a large event of ratio ln(7389 / 6519) = 0.125 on many counts, against the claim 0.2; one of ratio 0.26 on
    # a few hundred counts is the only one that can exceed it
    big = [cand(7389, 6519, 0.0), cand(24500, 22214, 1.0), cand(34398, 33318, 2.0)]
    rare = cand(2120, 1634, 3.0)
    ranks = power_ranks(big + [rare], np.full(4, N_SCORE), N_TEST, Z, 0.0, 0.2)
    assert ranks[:3].max() < 0 < ranks[3]
    assert run(big, [rare], 0.2) == big[:2] + [rare]
    assert run(big[:2], [rare], 0.2) == big[:2] + [rare]            # a free place: appended
    assert run(big, [rare], 0.2, finalists=4) == big + [rare]


def test_finalists_kept_when_one_or_none_is_projected_above_the_claim() -> None:
    big = [cand(7389, 6519, 0.0), cand(24500, 22214, 1.0), cand(34398, 33318, 2.0)]
    rare = cand(2120, 1634, 3.0)
    assert run(big, [rare], 0.05) == big                               # the first is projected above 0.05
    assert run(big + [rare], [], 0.2) == big + [rare]                  # already a finalist
    assert run(big, [cand(100, 100, 4.0)], 0.2) == big                 # none projected above the claim


def test_never_in_place_of_the_only_finalist() -> None:
    big = [cand(7389, 6519, 0.0)]
    rare = cand(2120, 1634, 3.0)
    assert run(big, [rare], 0.2, finalists=1) == big
