"""Result objects of the black-box audit and of the budget-ledger check.

Shaped like ``scipy.stats`` results: named fields, never bare tuples.  The wording rule of the project
holds here: a result without a violation says *no violation detected at this sample budget* (or, for a
ledger, *the recorded charges compose to at most the claim*), never that the mechanism *is* differentially
private.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any


from dpverify.results import Measured, PrivacyClaim, ViolationVerdict
from dpverify._validation import counted
from dpverify.jsonsafe import json_clean, json_float
from dpverify.neighbours import Pair

__all__ = ["EventTest", "Witness", "AuditResult", "LibraryTiming", "LedgerResult", "REPRODUCIBLE_NOTE", "claim_text",
           "bound_text", "witness_text", "trailing_notes"]

#: The note of an audit whose mechanism declares ``reproducible = False`` (it draws its own randomness).
REPRODUCIBLE_NOTE = ("the mechanism draws its own randomness: the same seed does not reproduce this run; the "
                     "confidence bound still holds because the samples are independent")


@dataclass(frozen=True)
class LibraryTiming:
    """Where the time of an audit of a per-call library release went (:class:`dpverify.libraries.percall.PerCall`).

    ``calls``: library releases made for the audit's batches (the contract probe's calls excepted);
    ``library_seconds``: time inside them, summed over every worker; ``sampling_seconds``: the batches' wall
    times (mechanism calls, output checks, event counting), summed over every worker; ``audit_seconds``: the
    audit's wall time.  Timings differ from run to run; they never enter a verdict.
    """

    calls: int
    library_seconds: float
    sampling_seconds: float
    audit_seconds: float

    @property
    def calls_per_second(self) -> float:
        """Library calls per second of the audit's wall time."""
        return self.calls / self.audit_seconds if self.audit_seconds > 0 else math.nan

    @property
    def library_share(self) -> float:
        """Share of the sampling time spent inside the library (``library_seconds / sampling_seconds``)."""
        return self.library_seconds / self.sampling_seconds if self.sampling_seconds > 0 else math.nan

    def __add__(self, other: "LibraryTiming") -> "LibraryTiming":
        return LibraryTiming(self.calls + other.calls, self.library_seconds + other.library_seconds,
                             self.sampling_seconds + other.sampling_seconds, self.audit_seconds + other.audit_seconds)

    def summary(self) -> str:
        """E.g. ``412 calls/s, 93 % of sampling time inside the library``."""
        share = self.library_share
        share_txt = f"{100 * share:.0f} %" if math.isfinite(share) else "an unknown share"
        cps = self.calls_per_second
        cps_txt = f"{cps:,.0f}" if math.isfinite(cps) and cps >= 10 else f"{cps:.3g}"
        return f"{cps_txt} calls/s, {share_txt} of sampling time inside the library"

    def __str__(self) -> str:
        return self.summary()

    def to_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "library_seconds": self.library_seconds,
                "sampling_seconds": self.sampling_seconds, "audit_seconds": self.audit_seconds,
                "calls_per_second": json_float(self.calls_per_second),
                "library_share": json_float(self.library_share)}


@dataclass(frozen=True)
class EventTest:
    """One (pair, direction, event) hypothesis tested on fresh samples.

    ``direction`` 0 compares ``P[M(x0) in S]`` with ``P[M(x1) in S]``; 1 the reverse.
    ``count_num`` of ``samples`` outputs of the numerator input fell in ``S``, ``count_den`` of the
    denominator input's ``samples_den`` (``None``: ``samples`` as well).  ``p_num_low`` / ``p_den_high`` are
    Clopper--Pearson bounds on the two probabilities at the Bonferroni-corrected level.  ``method``: how
    ``epsilon_lower_bound`` was computed -- ``"clopper-pearson"``, ``ln((p_num_low - delta) / p_den_high)``, or
    ``"poisson"``, the conditional test of the ratio on Poisson-sized samples
    (:func:`dpverify.statistical.stats.poisson_ratio_lower` at twice that level: one bound instead of two), which the
    audit chooses on search data where it certifies more.
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
    samples_den: int | None = None
    method: str = "clopper-pearson"

    @property
    def n_den(self) -> int:
        """Outputs drawn on the denominator input."""
        return self.samples if self.samples_den is None else self.samples_den

    @property
    def impossible(self) -> bool:
        """The event was never observed in ``samples`` draws under the denominator input, and was under the
        numerator (not a proof that it cannot happen: the bound stays finite)."""
        return self.count_den == 0 and self.count_num > 0

    @property
    def point_estimate(self) -> float:
        """``ln(p̂_num / p̂_den)`` (``inf`` for an event never observed under the denominator input); not a bound, for reading only."""
        if self.count_num == 0:
            return -math.inf
        if self.count_den == 0:
            return math.inf
        if self.n_den == self.samples:
            return math.log(self.count_num / self.count_den)
        return math.log(self.count_num / self.samples) - math.log(self.count_den / self.n_den)

    def to_dict(self) -> dict[str, Any]:
        return {
            "pair_index": self.pair_index,
            "pair_label": self.pair_label,
            "direction": self.direction,
            "event": self.event,
            "count_num": self.count_num,
            "count_den": self.count_den,
            "samples": self.samples,
            "samples_den": self.n_den,
            "method": self.method,
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




def claim_text(epsilon: float, delta: float) -> str:
    """``"ε = 0.5"`` or ``"ε = 0.5, δ = 1e-06"``: the claim as the verdict sentences write it."""
    return f"ε = {epsilon:g}" + (f", δ = {delta:g}" if delta > 0 else "")


def bound_text(bound: float) -> str:
    """An ε lower bound for a verdict sentence (4 significant digits; ``inf`` as is)."""
    return f"{bound:.4g}" if math.isfinite(bound) else str(bound)


def witness_text(w: Witness) -> str:
    """``"witness pair 'p' direction 0, event E"`` plus, for an event never seen under the other input, how many
    samples it was not seen in."""
    den = "x1" if w.test.direction == 0 else "x0"
    seen = f" (never observed in {w.test.n_den} samples under {den})" if w.test.impossible else ""
    return f"witness pair '{w.pair.label}' direction {w.test.direction}, event {w.event}{seen}"


def trailing_notes(reproducible: bool, library: "LibraryTiming | None") -> str:
    """The sentences after a verdict on reproducibility and library timing (empty when none apply)."""
    out = "" if reproducible else f" Note: {REPRODUCIBLE_NOTE}."
    return out + ("" if library is None else f" Library: {library.summary()}.")

@dataclass(frozen=True)
class AuditResult(ViolationVerdict):
    """Outcome of :func:`dpverify.audit`.

    ``epsilon_lower_bound`` is a lower confidence bound on the mechanism's true epsilon (at the given
    delta) at level ``1 - alpha``, simultaneously over every pair, direction and event tested on fresh
    samples (Bonferroni).  ``violation`` is ``epsilon_lower_bound > epsilon``.

    ``reproducible`` is ``False`` when the mechanism declares that it draws its own randomness (``reproducible =
    False``: OpenDP, Google's DP library): the seed then does not reproduce the run, but the bound holds (the
    samples are still independent).  ``library`` times the library calls of a per-call adapter
    (:class:`LibraryTiming`), ``None`` for other mechanisms.
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
    #: The witness pair's binned empirical privacy-loss histogram from the search samples (descriptive, never
    #: used by the verdict; :func:`dpverify.statistical.privacy_loss.loss_histogram`); pair 0's when there is no witness.
    loss_histogram: dict[str, Any] | None = field(default=None, compare=False)
    reproducible: bool = True
    library: LibraryTiming | None = field(default=None, compare=False)

    def _measured(self) -> Measured:
        return Measured("epsilon_lower_bound", self.epsilon_lower_bound)

    def _claim(self) -> PrivacyClaim:
        return PrivacyClaim(self.epsilon, self.delta)

    @property
    def confidence(self) -> float:
        return 1.0 - self.alpha

    def summary(self) -> str:
        """One paragraph in the project's wording rules."""
        lb_txt, claim = bound_text(self.epsilon_lower_bound), claim_text(self.epsilon, self.delta)
        extras = trailing_notes(self.reproducible, self.library)
        if self.violation:
            assert self.witness is not None
            return (
                f"VIOLATION of the claim {claim}: true ε ≥ {lb_txt} with confidence "
                f"{self.confidence:.0%}, {witness_text(self.witness)}; {self.samples} fresh samples per input.{extras}"
            )
        return (
            f"No violation of the claim {claim} detected with {self.samples} fresh samples per input "
            f"over {counted(self.n_pairs, 'pair')} (ε lower bound {lb_txt} at confidence {self.confidence:.0%}). "
            f"This is not a proof of privacy.{extras}"
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
            "loss_histogram": self.loss_histogram,
            "reproducible": self.reproducible,
            "library": None if self.library is None else self.library.to_dict(),
        }


def _eps_delta(eps: float, delta: float, claim_delta: float) -> str:
    """``Σε = a`` plus ``, Σδ = b`` when the claim or the total has a δ."""
    return f"Σε = {eps:.6g}" + (f", Σδ = {delta:.6g}" if claim_delta > 0 or delta > 0 else "")


@dataclass(frozen=True, eq=False)
class LedgerResult(ViolationVerdict):
    """Outcome of :func:`dpverify.check_ledger`: the charges a mechanism records, recomposed by basic composition.

    Per run, ``Σε`` and ``Σδ`` are the sums over the recorded charges (a charge run in parallel on ``k`` disjoint
    subsets counts once).  ``run_totals`` holds ``(Σε, Σδ)`` of every run; ``violation`` is whether some run's
    total exceeds the claim ``·(1 + rtol)`` in ε or in δ.  The *worst run* (index ``worst_run``) is a violating
    run if there is one, else the run spending the most ε (then δ); ``total_epsilon``, ``total_delta``,
    ``charges`` (plain dicts), ``by_kind`` (``{kind: {"epsilon", "delta", "charges"}}``) and ``by_level``
    (``{level: Σε}``, ``None`` for charges outside the recursion) describe it.  ``min_total_epsilon`` is the
    least ε any run spent (a recursion that stops early spends less).

    A result without a violation means *the recorded charges compose to at most the claim (basic
    composition)* -- the declared accounting adds up.  It says nothing about whether each call is as private
    as it declares (that is what the statistical, exact and replay checks are for).
    """

    mechanism: str
    claimed_epsilon: float
    claimed_delta: float
    total_epsilon: float
    total_delta: float
    min_total_epsilon: float
    worst_run: int
    run_totals: tuple[tuple[float, float], ...]
    charges: tuple[dict[str, Any], ...]
    by_kind: dict[str, dict[str, float]]
    by_level: dict[int | None, float]
    runs: int
    seed: int
    rtol: float


    def _measured(self) -> Measured:
        return Measured("total_epsilon", self.total_epsilon)

    def _claim(self) -> PrivacyClaim:
        return PrivacyClaim(self.claimed_epsilon, self.claimed_delta)

    @property
    def max_total_epsilon(self) -> float:
        """The largest ``Σε`` over the runs."""
        return max(e for e, _ in self.run_totals)

    @property
    def max_total_delta(self) -> float:
        """The largest ``Σδ`` over the runs."""
        return max(d for _, d in self.run_totals)

    @property
    def violation(self) -> bool:
        """Some run's recorded charges compose to more than the claim (beyond ``rtol``) in ε or in δ."""
        return (self.max_total_epsilon > self.claimed_epsilon * (1.0 + self.rtol)
                or self.max_total_delta > self.claimed_delta * (1.0 + self.rtol))

    @property
    def slack_epsilon(self) -> float:
        """``claimed ε − Σε`` of the worst run (negative for an ε violation)."""
        return self.claimed_epsilon - self.total_epsilon

    @property
    def slack_delta(self) -> float:
        """``claimed δ − Σδ`` of the worst run (negative for a δ violation)."""
        return self.claimed_delta - self.total_delta

    def _kinds(self) -> str:
        parts = [f"{k} ε={v['epsilon']:.4g}" + (f" δ={v['delta']:.3g}" if v["delta"] > 0 else "")
                 for k, v in self.by_kind.items()]
        return "; ".join(parts) if parts else "no charges"

    def summary(self) -> str:
        """One paragraph: verdict, totals against the claim, the spending by kind."""
        claim = f"ε = {self.claimed_epsilon:g}" + (f", δ = {self.claimed_delta:g}" if self.claimed_delta > 0 else "")
        totals = _eps_delta(self.total_epsilon, self.total_delta, self.claimed_delta)
        spread = (f"Σε over the runs from {self.min_total_epsilon:.6g} to {self.max_total_epsilon:.6g}"
                  if self.min_total_epsilon != self.max_total_epsilon else "the same Σε in every run")
        head = f"{self.mechanism}: "
        if self.violation:
            over = []
            if self.total_epsilon > self.claimed_epsilon * (1.0 + self.rtol):
                over.append(f"Σε = {self.total_epsilon:.6g} > ε = {self.claimed_epsilon:g}")
            if self.total_delta > self.claimed_delta * (1.0 + self.rtol):
                over.append(f"Σδ = {self.total_delta:.6g} > δ = {self.claimed_delta:g}")
            return (f"{head}VIOLATION of the claim {claim}: the charges recorded in run {self.worst_run} of "
                    f"{counted(self.runs, 'run')} compose (basic composition) to {' and '.join(over)}; "
                    f"{counted(len(self.charges), 'charge')}, by kind: {self._kinds()}; {spread}.")
        return (f"{head}the recorded charges compose to at most the claim (basic composition): {totals} "
                f"within {claim} (ε slack {self.slack_epsilon:.4g}) in the worst of {counted(self.runs, 'run')}; "
                f"{counted(len(self.charges), 'charge')}, by kind: {self._kinds()}; {spread}.  This checks the declared "
                "accounting only, not that each call is as private as it declares.")

    def __str__(self) -> str:
        return self.summary()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict; ``by_level`` keys are the levels as strings (``"none"`` outside the recursion)."""
        return json_clean({
            "verdict": self.verdict,
            "violation": self.violation,
            "mechanism": self.mechanism,
            "claimed_epsilon": self.claimed_epsilon,
            "claimed_delta": self.claimed_delta,
            "total_epsilon": self.total_epsilon,
            "total_delta": self.total_delta,
            "slack_epsilon": self.slack_epsilon,
            "slack_delta": self.slack_delta,
            "max_total_epsilon": self.max_total_epsilon,
            "max_total_delta": self.max_total_delta,
            "min_total_epsilon": self.min_total_epsilon,
            "worst_run": self.worst_run,
            "runs": self.runs,
            "seed": self.seed,
            "rtol": self.rtol,
            "run_totals": [list(t) for t in self.run_totals],
            "charges": list(self.charges),
            "by_kind": self.by_kind,
            "by_level": {("none" if k is None else str(k)): v for k, v in self.by_level.items()},
        })
