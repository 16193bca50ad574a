"""Result objects of the black-box audit.

Shaped like ``scipy.stats`` results: named fields, never bare tuples.  The wording rule of the project
holds here: a result without a violation says *no violation detected at this sample budget*, never
that the mechanism *is* differentially private.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from dpverify.jsonsafe import json_float
from dpverify.neighbours import Pair


@dataclass(frozen=True)
class EventTest:
    """One (pair, direction, event) hypothesis tested on fresh samples.

    ``direction`` 0 compares ``P[M(x0) in S]`` with ``P[M(x1) in S]``; 1 the reverse.
    ``count_num`` of ``samples`` outputs of the numerator input fell in ``S``, ``count_den`` of the
    denominator input's.  ``p_num_low`` / ``p_den_high`` are Clopper--Pearson bounds at the
    Bonferroni-corrected level; ``epsilon_lower_bound = ln((p_num_low - delta) / p_den_high)``.
    """

    pair_index: int
    pair_label: str
    direction: int
    event: str
    count_num: int
    count_den: int
    samples: int
    p_num_low: float
    p_den_high: float
    epsilon_lower_bound: float
    search_score: float

    @property
    def impossible(self) -> bool:
        """The event never happened under the denominator input but did under the numerator."""
        return self.count_den == 0 and self.count_num > 0

    @property
    def point_estimate(self) -> float:
        """``ln(p̂_num / p̂_den)`` (``inf`` for an impossible event); not a bound, for reading only."""
        if self.count_num == 0:
            return -math.inf
        if self.count_den == 0:
            return math.inf
        return math.log(self.count_num / self.count_den)

    def to_dict(self) -> dict[str, Any]:
        return {
            "pair_index": self.pair_index,
            "pair_label": self.pair_label,
            "direction": self.direction,
            "event": self.event,
            "count_num": self.count_num,
            "count_den": self.count_den,
            "samples": self.samples,
            "p_num_low": json_float(self.p_num_low),
            "p_den_high": json_float(self.p_den_high),
            "epsilon_lower_bound": json_float(self.epsilon_lower_bound),
            "point_estimate": json_float(self.point_estimate),
            "impossible": self.impossible,
            "search_score": json_float(self.search_score),
        }


@dataclass(frozen=True)
class Witness:
    """The pair, direction and event that gave the largest epsilon lower bound."""

    pair: Pair
    test: EventTest

    @property
    def event(self) -> str:
        return self.test.event

    @property
    def numerator_input(self) -> Any:
        return self.pair.x0 if self.test.direction == 0 else self.pair.x1

    @property
    def denominator_input(self) -> Any:
        return self.pair.x1 if self.test.direction == 0 else self.pair.x0

    def to_dict(self) -> dict[str, Any]:
        return {
            "pair_label": self.pair.label,
            "numerator_input": _jsonable(self.numerator_input),
            "denominator_input": _jsonable(self.denominator_input),
            **self.test.to_dict(),
        }


def _jsonable(x: Any) -> Any:
    """A JSON-friendly view of an input (arrays become lists, other objects their repr)."""
    import numpy as np

    if isinstance(x, np.ndarray):
        if x.size > 64:
            return f"array(shape={x.shape}, dtype={x.dtype})"
        return [_jsonable(v) for v in x.tolist()] if x.ndim else _jsonable(x.item())
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, float):
        return json_float(x)
    if isinstance(x, (int, str, bool)) or x is None:
        return x
    if isinstance(x, (np.integer, np.floating)):
        return _jsonable(x.item())
    weights = getattr(x, "weights", None)
    if weights is not None:
        return {"type": type(x).__name__, "weights": _jsonable(np.asarray(weights))}
    return repr(x)


@dataclass(frozen=True)
class AuditResult:
    """Outcome of :func:`dpverify.audit`.

    ``epsilon_lower_bound`` is a lower confidence bound on the mechanism's true epsilon (at the given
    delta) at level ``1 - alpha``, simultaneously over every pair, direction and event tested on fresh
    samples (Bonferroni).  ``violation`` is ``epsilon_lower_bound > epsilon``.
    """

    violation: bool
    epsilon_lower_bound: float
    epsilon: float
    delta: float
    alpha: float
    witness: Witness | None
    tests: tuple[EventTest, ...]
    samples: int
    search_samples: int
    n_pairs: int
    n_candidates: int
    output_kind: str
    seed: int
    seconds: float
    workers: int
    notes: tuple[str, ...] = field(default=())

    @property
    def confidence(self) -> float:
        return 1.0 - self.alpha

    @property
    def verdict(self) -> str:
        """``"violation"`` or ``"pass"`` (= no violation detected at this budget)."""
        return "violation" if self.violation else "pass"

    def summary(self) -> str:
        """One paragraph in the project's wording rules."""
        lb = self.epsilon_lower_bound
        lb_txt = f"{lb:.4g}" if math.isfinite(lb) else str(lb)
        claim = f"ε = {self.epsilon:g}" + (f", δ = {self.delta:g}" if self.delta > 0 else "")
        if self.violation:
            w = self.witness
            assert w is not None
            extra = " (an event impossible under the neighbour)" if w.test.impossible else ""
            return (
                f"VIOLATION of the claim {claim}: true ε ≥ {lb_txt} with confidence "
                f"{self.confidence:.0%}, witness pair '{w.pair.label}' direction {w.test.direction}, "
                f"event {w.event}{extra}; {self.samples} fresh samples per input."
            )
        return (
            f"No violation of the claim {claim} detected with {self.samples} fresh samples per input "
            f"over {self.n_pairs} pairs (ε lower bound {lb_txt} at confidence {self.confidence:.0%}). "
            "This is not a proof of privacy."
        )

    def __str__(self) -> str:
        return self.summary()

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "violation": self.violation,
            "epsilon_lower_bound": json_float(self.epsilon_lower_bound),
            "epsilon": self.epsilon,
            "delta": self.delta,
            "alpha": self.alpha,
            "witness": None if self.witness is None else self.witness.to_dict(),
            "tests": [t.to_dict() for t in self.tests],
            "samples": self.samples,
            "search_samples": self.search_samples,
            "n_pairs": self.n_pairs,
            "n_candidates": self.n_candidates,
            "output_kind": self.output_kind,
            "seed": self.seed,
            "seconds": self.seconds,
            "workers": self.workers,
            "notes": list(self.notes),
        }
