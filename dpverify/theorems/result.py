"""Result objects of theorem checks: one theorem at one parameter point (:class:`TheoremResult`) and a sweep
over one parameter (:class:`SweepResult`), with the quantities, directions and verdicts they use."""


from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpverify._validation import counted
from dpverify.results import CheckResult, Measured, Verdict
from dpverify.jsonsafe import format_number as _num, json_clean, json_float



QUANTITIES: tuple[str, ...] = ("probability", "mean", "quantile", "always")
DIRECTIONS: tuple[str, ...] = ("at_least", "at_most", "equal")
VERDICTS: tuple[str, ...] = ("holds", "violated", "inconclusive")

#: Runs per batch (each batch has its own seed; the size never depends on the number of workers).
DEFAULT_BATCH_SIZE = 1000
#: Failures kept in a result (the smallest-size one is always kept).
MAX_FAILURES_KEPT = 20
#: ``runs_needed`` gives up (returns ``inf``) beyond this many runs.
MAX_RUNS_NEEDED = 10**12

_SYMBOL = {"at_least": ">=", "at_most": "<=", "equal": "=="}


# --------------------------------------------------------------------------------------------------
# results
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TheoremResult(CheckResult):
    """The Monte Carlo check of one theorem at one set of parameters.

    ``estimate`` is the empirical probability (of the event), mean or quantile -- for ``"always"`` the fraction
    of instances on which the property held; ``interval`` a two-sided ``1 - alpha`` confidence interval for it
    (Clopper-Pearson for probabilities, Student t for means -- valid as the runs grow, distribution-free order
    statistics for quantiles; for ``"always"`` the interval of the fraction of instances that hold).
    ``slack`` is how far the estimate lies on the claimed side of the bound (``estimate - bound`` for
    ``at_least``, ``bound - estimate`` for ``at_most``; negative when it lies on the wrong side), and
    ``slack_interval`` the same from the interval's end nearest the bound (conservative).  ``runs_needed``
    (inconclusive only) is the number of runs at which an interval around the same estimate would exclude
    the bound.  ``vacuous`` marks a bound that cannot fail (a probability >= 0, <= 1, or an infinite bound).
    """

    name: str
    statement: str
    quantity: str
    direction: str
    parameters: dict[str, Any]
    bound: float
    estimate: float
    interval: tuple[float, float]
    runs: int
    alpha: float
    verdict: Verdict
    slack: float | None
    slack_interval: float | None
    runs_needed: float | None
    vacuous: bool
    level: float | None = None
    exact: float | None = None
    exact_in_interval: bool | None = None
    failures: tuple[dict[str, Any], ...] = ()
    failure_count: int = 0
    counterexample: dict[str, Any] | None = None
    size: float | None = None
    seed: int | None = None
    seconds: float = 0.0
    samples: np.ndarray | None = field(default=None, repr=False, compare=False)


    def __post_init__(self) -> None:
        object.__setattr__(self, "verdict", Verdict(self.verdict))

    def _measured(self) -> Measured:
        return Measured("estimate", self.estimate)

    @property
    def holds(self) -> bool:
        return self.verdict == "holds"

    @property
    def violated(self) -> bool:
        return self.verdict == "violated"

    def confidence_interval(self) -> tuple[float, float]:
        """The ``1 - alpha`` confidence interval of the estimate (scipy.stats style)."""
        return self.interval

    def claim_text(self) -> str:
        """e.g. ``"P >= 0.75"``, ``"q0.9 <= 3.2"``, ``"always"``."""
        if self.quantity == "always":
            return "always"
        q = {"probability": "P", "mean": "E"}.get(self.quantity, f"q{self.level}")
        return f"{q} {_SYMBOL[self.direction]} {_num(self.bound)}"

    def summary(self) -> str:
        """One line: verdict, estimate and interval against the bound, runs."""
        if self.quantity == "always":
            n_fail = self.failure_count
            text = (f"{self.verdict}: {n_fail} counterexample(s) in {counted(self.runs, 'instance')}"
                    if n_fail else f"{self.verdict}: no counterexample in {counted(self.runs, 'instance')} (failure rate "
                                   f"< {_num(1 - self.interval[0])} at {1 - self.alpha:.0%})")
            if self.counterexample is not None:
                text += f"; smallest: {self.counterexample}"
            return text
        text = (f"{self.verdict}: {self.claim_text()}; estimate {_num(self.estimate)} "
                f"[{_num(self.interval[0])}, {_num(self.interval[1])}] from {counted(self.runs, 'run')}")
        if self.slack is not None and self.direction != "equal":
            text += f", slack {_num(self.slack)}"
        if self.vacuous:
            text += " (vacuous bound)"
        if self.verdict == "inconclusive" and self.runs_needed is not None:
            text += f"; ~{_num(self.runs_needed)} runs would resolve it"
        return text

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (``inf``/``nan`` as strings)."""
        return json_clean({
            "name": self.name, "statement": self.statement, "quantity": self.quantity,
            "direction": self.direction, "level": self.level, "claim": self.claim_text(),
            "parameters": dict(self.parameters),
            "bound": json_float(self.bound), "estimate": json_float(self.estimate),
            "interval": [json_float(self.interval[0]), json_float(self.interval[1])],
            "runs": self.runs, "alpha": self.alpha, "verdict": self.verdict,
            "slack": json_float(self.slack), "slack_interval": json_float(self.slack_interval),
            "runs_needed": json_float(self.runs_needed), "vacuous": self.vacuous,
            "exact": json_float(self.exact), "exact_in_interval": self.exact_in_interval,
            "failure_count": self.failure_count, "failures": list(self.failures),
            "counterexample": self.counterexample, "size": json_float(self.size), "seed": self.seed,
            "seconds": round(self.seconds, 6), "summary": self.summary(),
        })


@dataclass(frozen=True)
class SweepResult(CheckResult):
    """A theorem checked at every value of one parameter (each point at level ``alpha / len(values)``).

    ``verdict`` is ``violated`` if any point is violated, ``holds`` if every point holds, else
    ``inconclusive``; ``counterexample`` is the violated point of smallest ``size`` (else of smallest
    index), or for ``"always"`` theorems the smallest failing instance over all points.
    """

    name: str
    param: str
    values: tuple[Any, ...]
    points: tuple[TheoremResult, ...]
    alpha: float
    verdict: Verdict
    counterexample: dict[str, Any] | None
    seconds: float


    def __post_init__(self) -> None:
        object.__setattr__(self, "verdict", Verdict(self.verdict))

    def _measured(self) -> Measured:
        holds = sum(p.verdict == Verdict.HOLDS for p in self.points)
        return Measured("points_holding", float(holds))

    @property
    def point_alpha(self) -> float:
        return self.alpha / len(self.points)

    @property
    def statement(self) -> str:
        return self.points[0].statement

    def claim_text(self) -> str:
        """The first point's claim with the swept parameter named, e.g. ``"P >= bound(epsilon)"``."""
        first = self.points[0]
        if first.quantity == "always":
            return "always"
        return first.claim_text().rsplit(" ", 1)[0] + f" bound({self.param})"

    def summary(self) -> str:
        counts = {v: sum(p.verdict == v for p in self.points) for v in VERDICTS}
        text = (f"{self.verdict}: over {self.param} in {[plain_value(v) for v in self.values]}: "
                + ", ".join(f"{n} {v}" for v, n in counts.items() if n))
        if self.counterexample is not None:
            text += f"; smallest counterexample: {self.counterexample}"
        return text

    def to_dict(self) -> dict[str, Any]:
        return json_clean({
            "name": self.name, "param": self.param, "values": [plain_value(v) for v in self.values], "alpha": self.alpha,
            "point_alpha": self.point_alpha, "verdict": self.verdict, "counterexample": self.counterexample,
            "claim": self.claim_text(),
            "seconds": round(self.seconds, 6), "summary": self.summary(),
            "points": [p.to_dict() for p in self.points],
        })


def plain_value(v: Any) -> Any:
    """A sweep value as plain Python (arrays from suite files become lists), for summaries and records."""
    return v.tolist() if isinstance(v, np.ndarray) else v.item() if isinstance(v, np.generic) else v
