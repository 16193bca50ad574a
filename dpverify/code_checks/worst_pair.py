"""Worst-pair search: the neighbouring pair with the largest *exact* privacy loss, reported as a certificate.

For a mechanism with an exact output law (``log_pmf``/``pmf``, see :mod:`dpverify.exact`), a relation and a
base input ``x``, the search maximises the exact loss ``ε(x, x')`` (or ``δ(ε_claim)`` for an (ε, δ) claim)
over neighbours ``x'`` of ``x`` with the three-stage search of :mod:`dpverify.code_checks.pair_search` (the relation's
patterns and seeded random pairs; hill climbing with random restarts; a bounded Powell polish).

The result is a :class:`WorstPairCertificate`: inputs, pair, the output attaining the loss, its two exact
probabilities, the exact ε, δ at the claimed ε, the claim and the verdict -- evidence anybody can recompute
with :func:`dpverify.exact.exact_privacy_loss` on the two inputs.  A search explores part of the relation: a
certificate without a violation says no examined pair breaks the claim.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify.results import Measured, PrivacyClaim, ViolationVerdict
from dpverify.errors import InputError
from dpverify.exact.loss import DistributionCache, ExactPairResult, check_claim, pair_result
from dpverify.jsonsafe import json_clean, json_float
from dpverify._validation import plain_input, show_value
from dpverify.code_checks.pair_search import PairSearch, check_search_options, run_search

__all__ = ["WorstPairCertificate", "worst_pair_search"]


@dataclass(frozen=True, eq=False)
class WorstPairCertificate(ViolationVerdict):
    """The worst pair found and its exact loss.  ``stage`` tells which search stage found it; ``trace`` the best
    objective after each stage; ``evaluations`` the exact distributions computed."""

    mechanism: str
    relation: str
    claim_epsilon: float
    claim_delta: float
    x0: Any
    x1: Any
    label: str
    result: ExactPairResult
    stage: str
    evaluations: int
    seed: int
    trace: tuple[tuple[str, float], ...]

    def _measured(self) -> Measured:
        return Measured("exact_epsilon", self.epsilon)

    def _claim(self) -> PrivacyClaim:
        return PrivacyClaim(self.claim_epsilon, self.claim_delta)

    @property
    def epsilon(self) -> float:
        """Exact ε of the pair (a lower bound on the mechanism's ε over the relation)."""
        return self.result.loss.epsilon

    @property
    def epsilon_lower_bound(self) -> float:
        return self.epsilon

    @property
    def delta_at_claim(self) -> float:
        return self.result.delta_at_claim

    @property
    def violation(self) -> bool:
        return self.result.violation

    def summary(self) -> str:
        loss = self.result.loss
        verdict = "VIOLATION" if self.violation else "no examined pair breaks the claim"
        claim = f"ε={self.claim_epsilon:g}" + (f", δ={self.claim_delta:g}" if self.claim_delta else "")
        return (f"{self.mechanism} under {self.relation}: {verdict} of {claim}; worst pair ({self.label}, found "
                f"by {self.stage}) has exact ε = {loss.epsilon:.6g} at output {show_value(loss.output)} "
                f"(ln p0 = {loss.log_p0:.6g}, ln p1 = {loss.log_p1:.6g}), δ(ε_claim) = {self.delta_at_claim:.3g}; "
                f"{self.evaluations} exact distributions")

    def __str__(self) -> str:
        return self.summary()

    def to_dict(self) -> dict[str, Any]:
        return json_clean({
            "mechanism": self.mechanism, "relation": self.relation,
            "claim": {"epsilon": json_float(self.claim_epsilon), "delta": json_float(self.claim_delta)},
            "x0": plain_input(self.x0), "x1": plain_input(self.x1), "label": self.label,
            "loss": self.result.loss.to_dict(), "delta_at_claim": json_float(self.delta_at_claim),
            "violation": self.violation, "stage": self.stage, "evaluations": self.evaluations,
            "seed": self.seed, "trace": [[s, json_float(v)] for s, v in self.trace],
        })


class _ExactSearch(PairSearch):
    """Objective: the exact loss of the pair (ε first for pure claims, δ at the claim first otherwise)."""

    def __init__(self, mechanism: Any, epsilon: float, delta: float, max_evaluations: int) -> None:
        super().__init__(max_evaluations)
        self.cache = DistributionCache(mechanism)
        self.epsilon, self.delta = epsilon, delta

    @property
    def evaluations(self) -> int:
        return self.cache.evaluations

    def evaluate(self, x0: Any, x1: Any, label: str) -> tuple[tuple[float, float], ExactPairResult]:
        r = pair_result(self.cache, x0, x1, self.epsilon, self.delta, 0, label)
        obj = (r.loss.epsilon, r.delta_at_claim) if self.delta == 0 else (r.delta_at_claim, r.loss.epsilon)
        return obj, r


def worst_pair_search(mechanism: Any, relation: Any, x: Any, epsilon: float, delta: float = 0.0, *,
                      random_pairs: int = 16, restarts: int = 4, polish: bool = True, seed: int = 0,
                      base_radius: float = 0.0,
                      domain: Any = None, grid: int = 21, max_evaluations: int = 5000) -> WorstPairCertificate:
    """Search the neighbours of ``x`` under ``relation`` for the pair with the largest exact loss.

    ``base_radius`` > 0 (ℓ∞ relations) lets the search move the base too: pairs ``(x + b, x + b + d)`` with
    ``|b|_∞ <= base_radius``, since the worst pair need not sit at the given base.
    ``domain`` (``(low, high)``, or per-dimension lows and highs) is required for add/remove and replace
    relations: it bounds the records the search adds.  ``grid`` points per dimension; ``max_evaluations``
    caps the exact distributions computed.  Seeded: the same arguments give the same certificate.
    """
    from dpverify import neighbours as nb

    epsilon, delta = check_claim(epsilon, delta)
    if not isinstance(relation, nb.NeighbourRelation):
        raise InputError(f"relation must be a dpverify.neighbours relation (LInfNeighbours, L1Neighbours, "
                         f"AddRemoveOne, ReplaceOne), got {type(relation).__name__}")
    check_search_options(random_pairs, restarts, grid, max_evaluations, base_radius)
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    s = _ExactSearch(mechanism, epsilon, delta, max_evaluations)
    run_search(s, relation, x, rng, random_pairs=random_pairs, restarts=restarts, polish=polish,
               base_radius=base_radius, domain=domain, grid=grid)
    assert s.best_pair is not None
    x0, x1, label, result, stage = s.best_pair
    return WorstPairCertificate(
        mechanism=type(mechanism).__name__, relation=str(relation), claim_epsilon=epsilon, claim_delta=delta,
        x0=x0, x1=x1, label=label, result=result, stage=stage, evaluations=s.cache.evaluations, seed=seed,
        trace=tuple(s.trace))
