"""Audit in growing stages and stop at the first violation: samples and seconds until the verdict.

``audit_sequential(mechanism, pairs, epsilon, samples=N)`` runs :func:`dpverify.audit` with ``N / g^(K-1)``,
..., ``N / g``, ``N`` test samples per input (``g = growth``, ``K`` stages, the first at least
``first_samples``), each stage on fresh, independently seeded samples, and stops as soon as a stage
reports a violation.  A gross violation is then found with a small fraction of the budget; a mechanism
without a detectable violation costs the whole ladder, about ``g / (g - 1)`` times one audit at ``N``.

**Error level.**  Stage ``k`` (of ``K``, counted from 0) runs at level ``alpha_k = alpha / 2^(K-k)``: the
last stage gets ``alpha / 2``, the one before ``alpha / 4``, ...; ``sum alpha_k < alpha``.  By the union
bound every stage's ε lower bound holds at once with probability at least ``1 - alpha``, so the largest of
them is a lower confidence bound at level ``1 - alpha`` and a violation reported at any stage is a
violation at level ``alpha`` -- stopping early costs no validity.  The price is the last stage's smaller
level: its bound is a little lower than one audit's at ``alpha`` (about ``sqrt(ln 2 / ln(1/alpha))``
standard errors of the log ratio).

The search budget scales with the test budget (``search_samples * n_k / samples``, at least
``min(search_samples, 1000)``).  As with :func:`dpverify.audit`, "no violation detected" after the last
stage is never a proof of privacy.

Reference: group-sequential testing with a Bonferroni alpha-spending function (Jennison & Turnbull 2000,
ch. 1-2, the simplest conservative spending); DP-Sniper (Bichsel et al., S&P 2021) for the per-audit bound.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from dpverify.results import Measured, PrivacyClaim, ViolationVerdict
from dpverify._validation import check_count, root_entropy
from dpverify.statistical.auditor import DEFAULT_SAMPLES, DEFAULT_SEARCH_CAP, audit
from dpverify.errors import InputError
from dpverify.jsonsafe import json_float
from dpverify.neighbours import Pair
from dpverify.statistical.result import AuditResult, LibraryTiming
from dpverify.execution.sampling import Mechanism, WorkerPool, resolve_workers

__all__ = ["SequentialResult", "Stage", "audit_sequential", "stage_plan"]


@dataclass(frozen=True)
class Stage:
    """One stage of the ladder: its budget, level and outcome."""

    samples: int
    search_samples: int
    alpha: float
    epsilon_lower_bound: float
    violation: bool
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {"samples": self.samples, "search_samples": self.search_samples, "alpha": self.alpha,
                "epsilon_lower_bound": json_float(self.epsilon_lower_bound), "violation": self.violation,
                "seconds": self.seconds}


@dataclass(frozen=True)
class SequentialResult(ViolationVerdict):
    """Outcome of :func:`audit_sequential`.

    ``violation`` and ``epsilon_lower_bound`` (the largest stage bound) hold at level ``1 - alpha`` jointly
    over the stages run.  ``samples_to_verdict`` counts the outputs drawn per input of one pair (search +
    test, all stages run); ``seconds`` the wall time.  ``last`` is the full result of the last stage run.
    ``library`` sums the library timing of the stages (per-call library adapters only, else ``None``).
    """

    violation: bool
    epsilon_lower_bound: float
    epsilon: float
    delta: float
    alpha: float
    stages: tuple[Stage, ...]
    planned_stages: int
    last: AuditResult
    seconds: float
    seed: int
    notes: tuple[str, ...] = field(default=())
    library: LibraryTiming | None = field(default=None, compare=False)


    def _measured(self) -> Measured:
        return Measured("epsilon_lower_bound", self.epsilon_lower_bound)

    def _claim(self) -> PrivacyClaim:
        return PrivacyClaim(self.epsilon, self.delta)

    @property
    def stopped_early(self) -> bool:
        return len(self.stages) < self.planned_stages

    @property
    def samples_to_verdict(self) -> int:
        return sum(s.samples + s.search_samples for s in self.stages)

    def summary(self) -> str:
        lb = self.epsilon_lower_bound
        lb_txt = f"{lb:.4g}" if math.isfinite(lb) else str(lb)
        claim = f"ε = {self.epsilon:g}" + (f", δ = {self.delta:g}" if self.delta > 0 else "")
        where = (f"stage {len(self.stages)} of {self.planned_stages}, {self.samples_to_verdict} outputs per input "
                 f"in all, {self.seconds:.3g} s")
        if self.violation:
            return (f"VIOLATION of the claim {claim} at {where}: true ε ≥ {lb_txt} with confidence "
                    f"{1 - self.alpha:.0%} (all stages jointly). {self.last.summary()}")
        library = f" Library: {self.library.summary()}." if self.library is not None else ""
        return (f"No violation of the claim {claim} detected after {where} (ε lower bound {lb_txt} at "
                f"confidence {1 - self.alpha:.0%}). This is not a proof of privacy.{library}")

    def __str__(self) -> str:
        return self.summary()

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict, "violation": self.violation,
            "epsilon_lower_bound": json_float(self.epsilon_lower_bound), "epsilon": self.epsilon,
            "delta": self.delta, "alpha": self.alpha, "stages": [s.to_dict() for s in self.stages],
            "planned_stages": self.planned_stages, "samples_to_verdict": self.samples_to_verdict,
            "seconds": self.seconds, "seed": self.seed, "notes": list(self.notes), "last": self.last.to_dict(),
            "library": None if self.library is None else self.library.to_dict(),
        }


def stage_plan(samples: int, search_samples: int, first_samples: int, growth: float,
               alpha: float) -> list[tuple[int, int, float]]:
    """``(test samples, search samples, alpha)`` of every stage, smallest first (see the module docstring)."""
    samples = check_count("samples", samples)
    search_samples = check_count("search_samples", search_samples)
    first_samples = check_count("first_samples", first_samples)
    if not (isinstance(growth, (int, float)) and math.isfinite(growth) and growth > 1):
        raise InputError(f"growth must be a number > 1, got {growth!r}")
    if first_samples > samples:
        raise InputError(f"first_samples ({first_samples}) must not exceed samples ({samples})")
    k = 1 + int(math.floor(math.log(samples / first_samples) / math.log(growth) + 1e-9))
    search_floor = min(search_samples, 1000)
    plan = []
    for j in range(k):
        n = max(first_samples, math.ceil(samples / growth ** (k - 1 - j)))
        s = max(search_floor, round(search_samples * n / samples), 2)
        plan.append((n, s, alpha / 2 ** (k - j)))
    return plan


def audit_sequential(
    mechanism: Mechanism,
    pairs: Sequence[Pair] | Sequence[tuple[Any, Any]],
    epsilon: float,
    delta: float = 0.0,
    *,
    samples: int = DEFAULT_SAMPLES,
    search_samples: int | None = None,
    first_samples: int | None = None,
    growth: float = 4.0,
    alpha: float = 0.05,
    seed: int | np.random.SeedSequence | None = None,
    workers: int | None = None,
    **audit_options: Any,
) -> SequentialResult:
    """Audit in stages of growing budget; stop at the first stage that finds a violation.

    ``samples`` / ``search_samples`` are the last stage's budget (as in :func:`dpverify.audit`);
    ``first_samples`` (default ``max(1000, samples // 64)``) the first stage's test samples; ``growth`` the
    ratio between stages.  ``audit_options`` (``finalists``, ``batch_size``, ``nan_policy``, ``float_bits``)
    go to every stage.  Same seed => same result, whatever ``workers`` is.

    Returns
    -------
    SequentialResult
        The stages run, the last stage's :class:`~dpverify.statistical.result.AuditResult`, and the verdict; each
        stage runs at level ``alpha / 2**k`` so that the verdict holds at level ``alpha`` whatever stage stops.

    Raises
    ------
    InputError, MechanismError
        As :func:`dpverify.audit`.

    Examples
    --------
    >>> def no_noise(x, n, rng):
    ...     return x + 0.0 * rng.random(n)
    >>> r = audit_sequential(no_noise, [(0.0, 1.0)], epsilon=1.0, samples=64_000, seed=0, workers=1)
    >>> r.violation, len(r.stages) < r.planned_stages
    (True, True)
    """
    t0 = time.perf_counter()
    for bad in ("pool", "epsilon", "delta", "samples", "search_samples", "alpha", "seed", "workers"):
        if bad in audit_options:
            raise InputError(f"audit_sequential got {bad!r} twice")
    if not (isinstance(alpha, (int, float)) and 0 < alpha < 1):
        raise InputError(f"alpha must lie in (0, 1), got {alpha!r}")
    samples = check_count("samples", samples)
    if search_samples is None:
        search_samples = min(samples, DEFAULT_SEARCH_CAP)
    if first_samples is None:
        first_samples = min(samples, max(1000, samples // 64))
    if workers is not None:
        workers = check_count("workers", workers)
    plan = stage_plan(samples, search_samples, first_samples, growth, alpha)
    entropy = root_entropy(seed)
    stages: list[Stage] = []
    best = -math.inf
    last: AuditResult | None = None
    library: LibraryTiming | None = None
    with WorkerPool(resolve_workers(workers)) as pool:
        for k, (n, s, a) in enumerate(plan):
            stage_seed = int(np.random.SeedSequence([entropy, k]).generate_state(1, np.uint64)[0])
            last = audit(mechanism, pairs, epsilon, delta, samples=n, search_samples=s, alpha=a,
                         seed=stage_seed, pool=pool, **audit_options)
            stages.append(Stage(n, s, a, last.epsilon_lower_bound, last.violation, last.seconds))
            best = max(best, last.epsilon_lower_bound)
            if last.library is not None:
                library = last.library if library is None else library + last.library
            if last.violation:
                break
    assert last is not None
    return SequentialResult(violation=last.violation, epsilon_lower_bound=max(best, 0.0), epsilon=last.epsilon,
                            delta=last.delta, alpha=float(alpha), stages=tuple(stages), planned_stages=len(plan),
                            last=last, seconds=time.perf_counter() - t0, seed=entropy, notes=last.notes,
                            library=library)
