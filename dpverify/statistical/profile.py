"""Auditing a claim that implies a whole privacy profile: ρ-zCDP, μ-GDP, (α, ε)-Rényi DP
(:mod:`dpverify.profiles`).

Such a claim implies ``(ε(δ), δ)``-DP at every ``δ``; a mechanism that violates one of these points violates the
claim.  :func:`audit_profile` runs the black-box audit (:func:`dpverify.statistical.auditor.audit`) at the points
``(ε(δ_i), δ_i)`` of ``k`` chosen ``δ_i`` (default :data:`dpverify.profiles.DEFAULT_DELTAS`), each at level
``alpha / k``: by the union bound (Bonferroni) the ``k`` lower confidence bounds hold together with probability at
least ``1 - alpha``, so a violation at any point refutes the claim at confidence ``1 - alpha``.  Auditing several
points of the profile matters because the statistical audit's power differs along it: a claim that is too weak in
the bulk of the privacy-loss distribution is seen at large ``δ``, one that is too weak in the tail at small ``δ``
(the privacy-profile view of Balle, Barthe & Gaboardi, "Privacy amplification by subsampling: tight analyses via
couplings and divergences", NeurIPS 2018; the hockey-stick test of each point as in Jagielski et al.,
NeurIPS 2020).

A point ``δ_i`` is dropped, with a note, when events of probability ``δ_i`` are too rare for the budget
(``δ_i < 30 / samples``: the bound ``ln((p_low - δ)/p_high)`` needs events seen tens of times) or when the claim
implies ``ε = 0`` there (the audit tests ``ε > 0``).  Every point is sampled on one shared worker pool, and point
``i`` is seeded with :func:`point_seed` of the root seed, so the same seed gives the same result on any number of
workers.
"""

from __future__ import annotations

import math
import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from numbers import Real
from typing import Any, Sequence

import numpy as np

from dpverify._validation import check_count, check_real, root_entropy
from dpverify.errors import InputError
from dpverify.execution.sampling import Mechanism, WorkerPool, resolve_workers
from dpverify.jsonsafe import json_clean, json_float
from dpverify.neighbours import Pair
from dpverify.profiles import DEFAULT_DELTAS, ProfileClaim
from dpverify.results import Measured, PrivacyClaim, ViolationVerdict
from dpverify.statistical.auditor import DEFAULT_SAMPLES, audit
from dpverify.statistical.result import AuditResult, Witness

__all__ = ["audit_profile", "point_seed", "ProfilePoint", "ProfileAuditResult", "MIN_EXPECTED_EVENTS",
           "AUDIT_OPTIONS"]

#: A profile point ``δ`` is tested only when ``δ · samples >= MIN_EXPECTED_EVENTS``.
MIN_EXPECTED_EVENTS = 30
#: The keyword arguments of :func:`dpverify.statistical.auditor.audit` that :func:`audit_profile` passes on.
AUDIT_OPTIONS = ("batch_size", "finalists", "nan_policy", "float_bits", "event_families", "ratio_test")
#: ``spawn_key`` prefix of the points' seeds (other prefixes are used inside the audit).
SEED_KEY = 7


def point_seed(entropy: int, index: int) -> int:
    """The seed of profile point ``index`` (its position in ``deltas``) under root entropy ``entropy``:
    ``SeedSequence(entropy, spawn_key=(7, index))`` as a 64-bit int."""
    seq = np.random.SeedSequence(entropy, spawn_key=(SEED_KEY, index))
    return int(seq.generate_state(1, dtype=np.uint64)[0])


@dataclass(frozen=True)
class ProfilePoint:
    """One point ``(epsilon_claimed, delta)`` of the claim's profile and its audit (``result``, at level
    ``alpha / k``)."""

    delta: float
    epsilon_claimed: float
    epsilon_lower_bound: float
    violation: bool
    result: AuditResult

    @property
    def excess(self) -> float:
        """``epsilon_lower_bound - epsilon_claimed`` (positive at a violation)."""
        return self.epsilon_lower_bound - self.epsilon_claimed

    def to_dict(self) -> dict[str, Any]:
        return {"delta": self.delta, "epsilon_claimed": json_float(self.epsilon_claimed),
                "epsilon_lower_bound": json_float(self.epsilon_lower_bound), "violation": self.violation,
                "alpha": self.result.alpha, "seed": self.result.seed, "result": self.result.to_dict()}


def _count(n: int) -> str:
    """A sample count for a sentence: ``1e6``, ``2.5e5``, or the digits when that would round."""
    short = f"{n:.3g}".replace("e+0", "e").replace("e+", "e")
    return short if n >= 10_000 and float(short) == n else f"{n:,}"


def _deltas_text(deltas: Sequence[float]) -> str:
    return ", ".join(f"{d:g}" for d in deltas)


@dataclass(frozen=True)
class ProfileAuditResult(ViolationVerdict):
    """Outcome of :func:`audit_profile`.

    ``claim`` (the field ``tested_claim``: :attr:`CheckResult.claim <dpverify.results.CheckResult.claim>` is a
    read-only property) is the claim audited.  ``points`` holds each audited point of the claim's profile;
    ``violation`` is whether any point's lower bound exceeds the ε the claim implies at its δ (confidence
    ``1 - alpha`` over the whole profile).  The ``worst`` point is the one where ``epsilon_lower_bound -
    epsilon_claimed`` is largest; ``epsilon_lower_bound`` and ``witness`` are its.  ``seed`` is the root entropy:
    pass it back as ``seed`` to repeat the run.  No violation means *no violation detected at these points and this
    budget*, never that the mechanism satisfies the claim.
    """

    tested_claim: ProfileClaim | PrivacyClaim
    points: list[ProfilePoint]
    samples: int
    search_samples: int
    seed: int
    alpha: float
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    workers: int = 1

    @property
    def violation(self) -> bool:
        """Some point's lower confidence bound exceeds the ε the claim implies at its δ."""
        return any(p.violation for p in self.points)

    @property
    def worst(self) -> ProfilePoint:
        """The point with the largest ``epsilon_lower_bound - epsilon_claimed`` (the first, on ties)."""
        return max(self.points, key=lambda p: p.excess)

    @property
    def epsilon_lower_bound(self) -> float:
        """The worst point's lower confidence bound on ε (at its δ)."""
        return self.worst.epsilon_lower_bound

    @property
    def witness(self) -> Witness | None:
        """The worst point's witness (pair, direction, event), ``None`` when it found no positive bound."""
        return self.worst.result.witness

    @property
    def confidence(self) -> float:
        return 1.0 - self.alpha

    def _measured(self) -> Measured:
        return Measured("epsilon_lower_bound", self.worst.epsilon_lower_bound)

    def _claim(self) -> ProfileClaim | PrivacyClaim:
        return self.tested_claim

    def summary(self) -> str:
        """One paragraph in the project's wording rules: the verdict, the worst point, the budget."""
        conf = f"{100 * self.confidence:g} % confidence"
        k = len(self.points)
        n = _count(self.samples)
        w = self.worst
        where = "1 profile point" if k == 1 else f"{k} profile points"
        if self.violation:
            bad = [p.delta for p in self.points if p.violation]
            extra = ""
            if k > 1:
                extra = (f"; worst of {k} profile points, violated at δ = {_deltas_text(bad)}" if len(bad) > 1
                         else f"; worst of {k} profile points, the only one violated")
            wit = self.witness
            if wit is not None:
                impossible = " (impossible under the neighbour)" if wit.test.impossible else ""
                extra += (f"; witness pair '{wit.pair.label}' direction {wit.test.direction}, "
                          f"event {wit.event}{impossible}")
            text = (f"VIOLATION of {self.claim}: at δ={w.delta:g} the claim implies ε ≤ {w.epsilon_claimed:.3g}, "
                    f"but ε ≥ {w.epsilon_lower_bound:.3g} ({conf}, {n} samples per input){extra}.")
        else:
            text = (f"No violation of {self.claim} detected at {where} (δ = "
                    f"{_deltas_text([p.delta for p in self.points])}) with {n} samples per input — not a proof of "
                    f"privacy (closest: ε ≥ {w.epsilon_lower_bound:.3g} against the implied ε ≤ "
                    f"{w.epsilon_claimed:.3g} at δ={w.delta:g}, {conf}).")
        if self.notes:
            text += " Notes: " + "; ".join(self.notes) + "."
        return text

    def __str__(self) -> str:
        return self.summary()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the claim, the verdict, the worst point, and every point with its audit."""
        w = self.worst
        return json_clean({
            "verdict": self.verdict,
            "violation": self.violation,
            "claim": self.claim.to_dict(),
            "claim_text": str(self.claim),
            "form": getattr(self.claim, "form", "dp"),
            "conversion": getattr(self.claim, "conversion", "none: an (ε, δ) claim is its own single point"),
            "epsilon_lower_bound": w.epsilon_lower_bound,
            "worst_delta": w.delta,
            "worst_epsilon_claimed": w.epsilon_claimed,
            "witness": None if self.witness is None else self.witness.to_dict(),
            "points": [p.to_dict() for p in self.points],
            "samples": self.samples,
            "search_samples": self.search_samples,
            "alpha": self.alpha,
            "seed": self.seed,
            "seconds": self.seconds,
            "workers": self.workers,
            "notes": list(self.notes),
            "summary": self.summary(),
        })


def _check_deltas(deltas: Any) -> list[float]:
    if isinstance(deltas, (str, bytes)) or not isinstance(deltas, Sequence) or len(deltas) == 0:
        raise InputError(f"deltas must be a non-empty sequence of numbers in (0, 1), e.g. [0.1, 0.01], got {deltas!r}")
    out = []
    for d in deltas:
        if isinstance(d, bool) or not isinstance(d, Real) or not 0 < float(d) < 1:
            raise InputError(f"every delta of deltas must be a number in (0, 1), got {d!r} in {list(deltas)!r}")
        out.append(float(d))
    if len(set(out)) != len(out):
        raise InputError(f"deltas has repeated values {out!r}: each profile point is audited once; remove repeats")
    return out


def audit_profile(
    mechanism: Mechanism,
    pairs: Sequence[Pair] | Sequence[tuple[Any, Any]],
    claim: ProfileClaim | PrivacyClaim,
    *,
    deltas: Sequence[float] | None = None,
    samples: int = DEFAULT_SAMPLES,
    search_samples: int | None = None,
    alpha: float = 0.05,
    seed: int | np.random.SeedSequence | None = None,
    workers: int | None = None,
    pool: WorkerPool | None = None,
    **audit_options: Any,
) -> ProfileAuditResult:
    """Audit a ρ-zCDP, μ-GDP or Rényi-DP claim (or an ``(ε, δ)`` claim) on the points of the profile it implies.

    Parameters
    ----------
    mechanism, pairs
        As for :func:`dpverify.statistical.auditor.audit`.
    claim
        A :class:`dpverify.profiles.ProfileClaim` (``ZCDPClaim``, ``GDPClaim``, ``RDPClaim``, ...) or a
        :class:`dpverify.results.PrivacyClaim` (audited at its own single point; ``deltas`` is then ignored).
    deltas
        The ``δ`` of the profile points (default ``(0.1, 0.01, 0.001)``); those below ``30 / samples`` are dropped
        with a note, and so are those where the claim implies ``ε = 0``.
    samples, search_samples
        Per point, as for ``audit``.
    alpha
        Error level of the whole profile: each of the ``k`` points is audited at ``alpha / k``.
    seed
        Root seed; point ``i`` of ``deltas`` uses :func:`point_seed` ``(root, i)``.  Same seed => same result,
        whatever ``workers`` is.  ``None`` draws fresh entropy, reported as ``result.seed``.
    workers, pool
        Processes to sample on, or an open :class:`dpverify.execution.sampling.WorkerPool` (``workers`` is then
        ignored); by default one pool is opened for all the points and closed at the end.
    audit_options
        Passed on to ``audit``: ``batch_size``, ``finalists``, ``nan_policy``, ``float_bits``, ``event_families``.

    Returns
    -------
    ProfileAuditResult
        ``violation`` (at any point), every point (``delta``, ``epsilon_claimed``, ``epsilon_lower_bound``,
        ``violation``, the point's ``AuditResult``), the ``worst`` point with its ``epsilon_lower_bound`` and
        ``witness``, ``verdict`` / ``claim`` / ``measured`` (:mod:`dpverify.results`), and notes on dropped points.
        No violation means *no violation detected at these points and this budget*, never that the claim holds.

    Raises
    ------
    InputError
        A claim of another type, ``deltas`` outside ``(0, 1)``, no point left to test at this budget (raise
        ``samples`` or pass larger ``deltas``), an unknown audit option, dp-accounting missing for a zCDP or
        Rényi-DP claim, and every bad argument ``audit`` refuses.
    MechanismError
        The mechanism breaks the sampling contract (see ``audit``).

    Examples
    --------
    >>> import numpy as np
    >>> from dpverify.profiles import GDPClaim
    >>> def gauss(x, n, rng):                   # σ = 1, sensitivity 1: exactly 1-GDP
    ...     return x + rng.normal(0.0, 1.0, size=n)
    >>> r = audit_profile(gauss, [(0.0, 1.0)], GDPClaim(0.5), deltas=[0.1], samples=100_000, seed=0, workers=1)
    >>> r.violation, r.worst.delta, r.epsilon_lower_bound > r.worst.epsilon_claimed
    (True, 0.1, True)
    """
    t_start = time.perf_counter()
    if not isinstance(claim, (ProfileClaim, PrivacyClaim)):
        raise InputError(
            f"claim must be a dpverify.profiles.ProfileClaim (ZCDPClaim, GDPClaim, RDPClaim) or a "
            f"dpverify.results.PrivacyClaim, got {type(claim).__name__}; build one from a mapping such as "
            "{'zcdp': 0.5} with dpverify.profiles.parse_claim")
    unknown = sorted(set(audit_options) - set(AUDIT_OPTIONS))
    if unknown:
        raise InputError(f"audit_profile got unknown options {unknown}; it passes on only {', '.join(AUDIT_OPTIONS)} "
                         "(the claim fixes epsilon and delta at each point)")
    samples = check_count("samples", samples)
    alpha = check_real("alpha", alpha, low=0.0, high=1.0, low_open=True, high_open=True)
    if workers is not None:
        workers = check_count("workers", workers)
    entropy = root_entropy(seed)
    notes: list[str] = []

    # ---- the points: (index in deltas, ε claimed, δ) ----------------------------------------------------------
    planned: list[tuple[int, float, float]] = []
    if isinstance(claim, PrivacyClaim):
        if deltas is not None:
            notes.append("deltas ignored: an (ε, δ) claim is audited at its own single point")
        planned.append((0, claim.epsilon, claim.delta))
    else:
        wanted = _check_deltas(DEFAULT_DELTAS if deltas is None else deltas)
        floor = MIN_EXPECTED_EVENTS / samples
        for i, d in enumerate(wanted):
            if d < floor:
                notes.append(f"δ={d:g} not tested: too rare for {_count(samples)} samples per input (a point needs "
                             f"δ ≥ {MIN_EXPECTED_EVENTS}/samples = {floor:.3g}; samples ≥ "
                             f"{math.ceil(MIN_EXPECTED_EVENTS / d):,} would test it)")
                continue
            eps = float(claim.epsilon(d))
            if not math.isfinite(eps):
                notes.append(f"δ={d:g} not tested: the claim implies no finite ε there")
            elif eps <= 0.0:
                notes.append(f"δ={d:g} not tested: the claim implies ε = 0 there (δ(0) ≤ δ), and the audit "
                             "tests ε > 0")
            else:
                planned.append((i, eps, d))
        if not planned:
            rare = [d for d in wanted if d < floor]
            fixes = []
            if rare:
                fixes.append(f"raise samples (to at least {math.ceil(MIN_EXPECTED_EVENTS / max(rare)):,} for "
                             f"δ = {max(rare):g}) or pass larger deltas")
            if len(rare) < len(wanted):
                fixes.append("pass deltas where the claim implies a finite ε > 0 (smaller δ)")
            raise InputError(f"no profile point of {claim} can be tested with samples={samples:,}: "
                             + "; ".join(notes) + ". To test one, " + ", or ".join(fixes))

    # ---- one audit per point, at alpha / k, on one pool ---------------------------------------------------------
    k = len(planned)
    points: list[ProfilePoint] = []
    used = 1
    with (nullcontext(pool) if pool is not None else WorkerPool(resolve_workers(workers))) as shared:
        for i, eps, d in planned:
            result = audit(mechanism, pairs, eps, d, samples=samples, search_samples=search_samples,
                           alpha=alpha / k, seed=point_seed(entropy, i), pool=shared, **audit_options)
            used = max(used, result.workers)
            points.append(ProfilePoint(d, eps, result.epsilon_lower_bound, result.violation, result))
    for p in points:
        for note in p.result.notes:
            if note not in notes:
                notes.append(note)
    return ProfileAuditResult(
        tested_claim=claim,
        points=points,
        samples=samples,
        search_samples=points[0].result.search_samples,
        seed=entropy,
        alpha=alpha,
        notes=notes,
        seconds=time.perf_counter() - t_start,
        workers=used,
    )
