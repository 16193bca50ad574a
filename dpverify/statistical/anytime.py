"""An anytime-valid sequential audit: verdicts that stop as soon as they are certain.

``audit_anytime(mechanism, pairs, epsilon, samples=N)`` looks for the violation :func:`dpverify.audit` looks for --
an event ``S`` with ``P[M(x) in S] > e^eps P[M(x') in S] + delta`` -- but tests its candidate events on a *stream*
of fresh batches and stops at the first batch after which the evidence certifies a violation.  A gross violation
stops after the first round's search and a few hundred test samples per input; a subtle one as soon as the evidence
is there; a mechanism without a detectable violation spends the whole budget.

**Rounds.**  The test budget ``N`` is split into ``R`` rounds of geometrically growing size (ratio ``growth``,
the first at least ``first_samples``, by default 8000: about what certifying a violation of twice a claim of 0.1
takes on the best event, so that such a violation can stop in the first round).  Round ``r`` searches events on its
own search sample, growing with the round like its test budget (the first of several rounds at most a quarter of
its test budget; :func:`dpverify.statistical.auditor.search_phase`: the audit's event families, the finalists
chosen on the search sample only, ranked by how many standard errors of their search estimate their projected
bound lies above the claim -- their chance of certifying it -- rather than by the bound itself), then counts the
finalists on fresh batches of ``first_batch`` outputs per input until the stream has ``16 first_batch``, then of a
sixteenth of the stream so far (stopping points about 6 % apart, at most ``batch_size``) until the round's budget
is spent.  Every round draws from its own seed; every batch from the seed of its coordinates, so results do not
depend on the number of workers.

**Bounds.**  After every batch each finalist ``(pair, direction, S)`` has two confidence sequences
(:mod:`dpverify.statistical.confseq`: Robbins' beta-binomial mixture, Howard et al., Ann. Stat. 2021, sec. 3.2):
a lower one for ``p = P[M(x) in S]`` and an upper one for ``q = P[M(x') in S]``, each with its prior centred on
the search sample's counts (independent of the test stream).  They give ``eps_t = ln((p_low,t - delta) /
q_high,t)`` (Jagielski et al., NeurIPS 2020), and the audit stops with a violation when ``eps_t > epsilon``.

**Validity (why stopping at any batch costs nothing).**  The first of ``R > 1`` rounds gets level ``alpha_1 = alpha /
2``, each other ``alpha_r = alpha / (2 (R - 1))`` (:func:`round_levels`; fixed before any data).  In round
``r`` with ``F_r`` finalists each of the ``2 F_r`` sequences runs at level ``alpha_r / (2 F_r)``; a sequence holds
at *every* batch at once except with that probability (Ville's inequality), whatever rule stops it.  The finalists
are chosen on search samples independent of the round's test stream, so conditional on them the union bound over
the ``2 F_r`` sequences gives ``alpha_r``, and over the rounds ``sum alpha_r = alpha``.  So with probability at
least ``1 - alpha`` every ``eps_t`` of every round and batch is below the true ε (at this delta) simultaneously:
their maximum (reported) is a lower confidence bound, and a violation reported at any stopping time is a violation
at level ``alpha``.  "No violation detected" after the whole budget is never a proof of privacy.

Compared with the ladder of :func:`dpverify.statistical.sequential.audit_sequential` (full audits at budgets ×4
apart, level ``alpha / 2^(K-k)`` per stage), a verdict is reached at the first batch the evidence suffices, not
at the end of a stage; the price is the width of a confidence sequence over a fixed-sample interval (about
``(1/2) ln(N / prior weight)`` more in the log-boundary), so the plain audit stays the tool for tightness figures.

References: Robbins (1970) and Howard, Ramdas, McAuliffe & Sekhon (Ann. Stat. 49(2), 2021) for mixture confidence
sequences; Waudby-Smith & Ramdas (JRSS-B 86(1), 2024) for betting sequences (a tighter alternative, not used:
it needs bets per observation, the test phase returns counts per batch); DP-Sniper (Bichsel et al., S&P 2021)
for the event search and the union bound.
"""

from __future__ import annotations

import math
import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from dpverify._validation import check_count, check_real, counted, root_entropy
from dpverify.errors import InputError, MechanismError
from dpverify.execution.sampling import (
    TEST_PHASE,
    BatchTiming,
    Mechanism,
    Task,
    WorkerPool,
    resolve_workers,
    run_batch,
)
from dpverify.jsonsafe import json_float
from dpverify.neighbours import Pair, as_pairs
from dpverify.results import Measured, PrivacyClaim, ViolationVerdict
from dpverify.statistical.auditor import DEFAULT_SAMPLES, DEFAULT_SEARCH_CAP, search_phase
from dpverify.statistical.confseq import ProportionSequence, centred_prior
from dpverify.statistical.contract import check_pairs_differ, check_rng_contract, declares_seedless
from dpverify.statistical.result import (REPRODUCIBLE_NOTE, EventTest, LibraryTiming, Witness, bound_text, claim_text,
                                         trailing_notes, witness_text)
from dpverify.statistical.stats import epsilon_lower_bound

__all__ = ["AnytimeResult", "Round", "audit_anytime", "round_plan", "stream_batches"]

#: prior weight of a finalist's confidence sequences, as a fraction of its search (scoring-half) sample
PRIOR_FRACTION = 0.25
#: share of the level spent by the first of several rounds (the others share the rest equally)
FIRST_ALPHA = 0.5
#: a stream's batch is the outputs so far over this (stopping points ``1 + 1/STREAM_STEP`` apart)
STREAM_STEP = 16
#: rank a round's candidates by their chance of certifying the claim (search_phase's target) rather than by their
#: projected bound
RANK_BY_POWER = True
#: least default test budget of the first round: about what a confidence sequence needs to certify a violation of
#: twice a claim of 0.1 on the best event at the first round's level (docs/anytime_calibration.py, "oracle")
FIRST_SAMPLES = 8000
#: the first of several rounds searches at most 1/FIRST_SEARCH_RATIO of its test budget (a gross violation stops
#: after that search and a few hundred test outputs)
FIRST_SEARCH_RATIO = 4
NAN_POLICIES = ("raise", "outcome")


@dataclass(frozen=True)
class Round:
    """One search round: its budgets, level, finalists and how far its test stream went."""

    search_samples: int
    test_budget: int
    test_samples: int
    alpha: float
    finalists: int
    epsilon_lower_bound: float
    violation: bool

    def to_dict(self) -> dict[str, Any]:
        return {"search_samples": self.search_samples, "test_budget": self.test_budget,
                "test_samples": self.test_samples, "alpha": self.alpha, "finalists": self.finalists,
                "epsilon_lower_bound": json_float(self.epsilon_lower_bound), "violation": self.violation}


@dataclass(frozen=True)
class AnytimeResult(ViolationVerdict):
    """Outcome of :func:`audit_anytime`.

    ``epsilon_lower_bound`` is the largest ``eps_t`` over every round, batch and finalist: a lower confidence bound
    on the true ε at level ``1 - alpha`` valid at the (data-dependent) stopping time.  ``samples_to_verdict``: the
    outputs drawn per input of one pair (search and test, every round run); ``test_samples``: the fresh test outputs
    per input among them; ``samples``: the test budget.  ``witness``: the finalist of the largest bound with its
    counts at the time the bound was reached (``witness.test.samples`` test draws).
    """

    violation: bool
    epsilon_lower_bound: float
    epsilon: float
    delta: float
    alpha: float
    witness: Witness | None
    rounds: tuple[Round, ...]
    planned_rounds: int
    samples: int
    samples_to_verdict: int
    test_samples: int
    n_pairs: int
    output_kind: str
    seed: int
    seconds: float
    workers: int
    notes: tuple[str, ...] = field(default=())
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

    @property
    def stopped_early(self) -> bool:
        """The audit stopped before spending its test budget (always with a violation)."""
        return self.test_samples < self.samples

    @property
    def search_samples(self) -> int:
        """Search outputs per input drawn over the rounds run (``samples_to_verdict - test_samples``)."""
        return self.samples_to_verdict - self.test_samples

    def summary(self) -> str:
        """One paragraph in the project's wording rules."""
        lb_txt, claim = bound_text(self.epsilon_lower_bound), claim_text(self.epsilon, self.delta)
        where = (f"stopped after {self.samples_to_verdict} samples per input ({self.search_samples} search + "
                 f"{self.test_samples} test, round {len(self.rounds)} of {self.planned_rounds})")
        extras = trailing_notes(self.reproducible, self.library)
        if self.violation:
            assert self.witness is not None
            return (f"VIOLATION of the claim {claim}: true ε ≥ {lb_txt} with confidence {self.confidence:.0%} "
                    f"(anytime-valid), {witness_text(self.witness)}; {where}.{extras}")
        return (f"No violation of the claim {claim} detected over {counted(self.n_pairs, 'pair')}; {where}, the whole "
                f"budget (ε lower bound {lb_txt} at confidence {self.confidence:.0%}, anytime-valid). "
                f"This is not a proof of privacy.{extras}")

    def __str__(self) -> str:
        return self.summary()

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict, "violation": self.violation,
            "epsilon_lower_bound": json_float(self.epsilon_lower_bound), "epsilon": self.epsilon,
            "delta": self.delta, "alpha": self.alpha,
            "witness": None if self.witness is None else self.witness.to_dict(),
            "rounds": [r.to_dict() for r in self.rounds], "planned_rounds": self.planned_rounds,
            "samples": self.samples, "samples_to_verdict": self.samples_to_verdict,
            "test_samples": self.test_samples, "search_samples": self.search_samples,
            "stopped_early": self.stopped_early, "n_pairs": self.n_pairs, "output_kind": self.output_kind,
            "seed": self.seed, "seconds": self.seconds, "workers": self.workers, "notes": list(self.notes),
            "loss_histogram": self.loss_histogram, "reproducible": self.reproducible,
            "library": None if self.library is None else self.library.to_dict(),
        }


def round_plan(samples: int, search_samples: int, first_samples: int, growth: float,
               alpha: float) -> list[tuple[int, int, float]]:
    """``(test budget, search samples, alpha)`` of every round, smallest first: ``R`` test budgets in ratio
    ``growth`` summing to ``samples``, ``R`` the largest with the first at least ``first_samples`` (one round when
    even that is too many); search samples in proportion to the test budget, at least ``min(search_samples,
    1000)``, the first of several rounds at most a quarter of its test budget; levels ``alpha / 2`` for the first of
    several rounds, ``alpha / (2 (R - 1))`` for each other (:func:`round_levels`), summing to ``alpha``."""
    samples = check_count("samples", samples)
    search_samples = check_count("search_samples", search_samples)
    first_samples = check_count("first_samples", first_samples)
    if not (isinstance(growth, (int, float)) and math.isfinite(growth) and growth > 1):
        raise InputError(f"growth must be a number > 1, got {growth!r}")
    if first_samples > samples:
        raise InputError(f"first_samples ({first_samples}) must not exceed samples ({samples})")
    k = 1
    while samples * (growth - 1) / (growth ** (k + 1) - 1) >= first_samples:
        k += 1
    weights = [growth ** j for j in range(k)]
    budgets = [int(samples * w // sum(weights)) for w in weights]
    budgets[-1] += samples - sum(budgets)
    floor = min(search_samples, 1000)
    searches = [max(floor, round(search_samples * n / samples), 2) for n in budgets]
    if k > 1:
        searches[0] = min(searches[0], max(floor, budgets[0] // FIRST_SEARCH_RATIO, 2))
    return list(zip(budgets, searches, round_levels(alpha, k)))


def round_levels(alpha: float, rounds: int) -> list[float]:
    """The level of each of ``rounds`` rounds, summing to ``alpha``: the first of several rounds gets ``alpha`` times
    :data:`FIRST_ALPHA` (``1/2``), the others share the rest equally (``alpha / (2 (R - 1))`` each).  The first
    round gets more because the violations a small budget can certify stop there; sharing the rest equally keeps
    the last round, where the subtle ones stop, within ``ln(2 (R-1) / R)`` of ``alpha / R`` in the log-boundary."""
    if rounds == 1:
        return [alpha]
    rest = alpha * (1 - FIRST_ALPHA) / (rounds - 1)
    return [alpha - rest * (rounds - 1)] + [rest] * (rounds - 1)


def sequence_z(level: float, n_test: int, n_search: int) -> float:
    """About how many standard errors wide a confidence sequence at ``level`` is after ``n_test`` draws, its prior
    weighing ``PRIOR_FRACTION`` of the scoring half of ``n_search``: ``sqrt(2 ln(1/level) + ln(1 + n/rho))``, the
    normal-mixture boundary (Howard et al. 2021, sec. 3) with ``rho`` the prior weight.  Used to rank a round's
    candidates (search data only), never for a bound."""
    rho = max(2.0, PRIOR_FRACTION * (n_search - n_search // 2))
    return math.sqrt(2.0 * math.log(1.0 / level) + math.log1p(n_test / rho))


def stream_batches(total: int, first_batch: int, batch_size: int) -> list[int]:
    """Batch sizes of a round's test stream, summing to ``total``: ``first_batch`` until the stream has
    ``STREAM_STEP first_batch``, then ``1/STREAM_STEP`` of the outputs so far (stopping points about 6 % apart), at
    most ``batch_size``.  A confidence sequence may be looked at after every batch for free; fine batches let the
    stream stop close to the sample size at which the evidence suffices (doubling batches overshoot it by up to
    ×2)."""
    out: list[int] = []
    done = 0
    while done < total:
        size = min(max(first_batch, done // STREAM_STEP), batch_size, total - done)
        out.append(size)
        done += size
    return out


@dataclass
class _Finalist:
    pair_index: int
    direction: int
    description: str
    score: float
    num: ProportionSequence
    den: ProportionSequence
    best: EventTest | None = None


def audit_anytime(
    mechanism: Mechanism,
    pairs: Sequence[Pair] | Sequence[tuple[Any, Any]],
    epsilon: float,
    delta: float = 0.0,
    *,
    samples: int = DEFAULT_SAMPLES,
    search_samples: int | None = None,
    first_samples: int | None = None,
    growth: float = 4.0,
    first_batch: int = 256,
    alpha: float = 0.05,
    seed: int | np.random.SeedSequence | None = None,
    workers: int | None = None,
    batch_size: int = 100_000,
    finalists: int = 3,
    nan_policy: str = "raise",
    float_bits: bool = False,
    event_families: Sequence[Any] = (),
    pool: WorkerPool | None = None,
) -> AnytimeResult:
    """Audit the claim that ``mechanism`` is ``(epsilon, delta)``-DP, stopping at the first batch that certifies
    a violation (module docstring: the rounds, the confidence sequences, the validity argument).

    Parameters
    ----------
    mechanism, pairs, epsilon, delta, alpha, seed, workers, batch_size, finalists, nan_policy, float_bits, \
event_families, pool
        As :func:`dpverify.audit` (``finalists`` per round).
    samples
        Test budget: fresh outputs per input over all rounds; a pass spends all of it.
    search_samples
        Search outputs per input of the last round (default ``min(samples, 200_000)``); earlier rounds search on
        proportionally fewer (at least 1000).
    first_samples
        Least test budget of the first round (default ``min(samples, max(8000, samples // 256))``).  The first
        round searches on at most a quarter of its test budget.
    growth
        Ratio between the test budgets of consecutive rounds.
    first_batch
        Outputs per input of the first sixteen batches of each round's test stream; then a sixteenth of the stream so
        far, at most ``batch_size``.

    Returns
    -------
    AnytimeResult
        The verdict, the anytime-valid ε lower bound, its witness, the rounds run, ``samples_to_verdict``.

    Raises
    ------
    InputError, MechanismError
        As :func:`dpverify.audit`.

    Examples
    --------
    >>> def no_noise(x, n, rng):
    ...     return x + 0.0 * rng.random(n)
    >>> r = audit_anytime(no_noise, [(0.0, 1.0)], epsilon=1.0, samples=100_000, seed=0, workers=1)
    >>> r.violation, r.samples_to_verdict <= 6000
    (True, True)
    """
    t0 = time.perf_counter()
    if not callable(mechanism):
        raise InputError(f"mechanism must be callable as mechanism(x, n, rng) -> ndarray, got "
                         f"{type(mechanism).__name__}")
    epsilon = check_real("epsilon", epsilon, low=0.0, high=math.inf, low_open=True, high_open=True)
    delta = check_real("delta", delta, low=0.0, high=1.0, low_open=False, high_open=True)
    alpha = check_real("alpha", alpha, low=0.0, high=1.0, low_open=True, high_open=True)
    samples = check_count("samples", samples)
    search_samples = check_count("search_samples", min(samples, DEFAULT_SEARCH_CAP) if search_samples is None
                                 else search_samples)
    if search_samples < 2:
        raise InputError("search_samples must be at least 2")
    if first_samples is None:
        first_samples = min(samples, max(FIRST_SAMPLES, samples // 256))
    batch_size = check_count("batch_size", batch_size)
    first_batch = check_count("first_batch", first_batch)
    finalists = check_count("finalists", finalists)
    if nan_policy not in NAN_POLICIES:
        raise InputError(f"nan_policy must be one of {NAN_POLICIES}, got {nan_policy!r}")
    event_families = tuple(event_families)
    if any(not callable(f) for f in event_families):
        raise InputError("event_families must be callables family(data, search)")
    plan = round_plan(samples, search_samples, first_samples, growth, alpha)
    pair_list = as_pairs(pairs)
    check_pairs_differ(pair_list)
    entropy = root_entropy(seed)
    check_rng_contract(mechanism, pair_list[0].x0, entropy, f"input x0 of pair 0 ('{pair_list[0].label}')")
    reproducible = not declares_seedless(mechanism)
    notes: list[str] = [] if reproducible else [REPRODUCIBLE_NOTE]
    timing = BatchTiming()
    rounds: list[Round] = []
    best: EventTest | None = None
    drawn = 0
    tested = 0
    kinds: set[str] = set()
    histograms: dict[int, Any] = {}
    with (nullcontext(pool) if pool is not None else WorkerPool(resolve_workers(workers))) as pool:
        if hasattr(mechanism, "pop_timing"):
            calls, seconds = mechanism.pop_timing()
            if calls and seconds > 0:
                pool.hint_rate(run_batch, calls / seconds)
        for r, (n_test, n_search, a_r) in enumerate(plan):
            r_entropy = int(np.random.SeedSequence([entropy, r]).generate_state(1, np.uint64)[0])
            found = search_phase(mechanism, pair_list, search_samples=n_search, n_test=n_test,
                                 z=sequence_z(a_r / (2 * finalists), n_test, n_search), delta=delta,
                                 entropy=r_entropy, pool=pool, batch_size=batch_size, finalists=finalists,
                                 nan_policy=nan_policy, float_bits=float_bits, event_families=event_families,
                                 target=epsilon if RANK_BY_POWER else None)
            timing = timing + found.timing
            kinds.update(found.kinds)
            histograms = histograms or found.histograms
            sweep = n_test // 10 if n_test // 10 > n_search else 0
            drawn += n_search + sweep
            if not found.chosen:
                notes.append(f"round {r + 1}: no event separated the outputs of any pair on the search sample")
                rounds.append(Round(n_search, n_test, 0, a_r, 0, -math.inf, False))
                continue
            level = a_r / (2 * len(found.chosen))
            fins: list[_Finalist] = []
            for i, c in found.chosen:
                n_score = c.n_score or (n_search - n_search // 2)
                strength = max(2.0, PRIOR_FRACTION * n_score)
                fins.append(_Finalist(i, c.direction, c.event.description, c.score,
                                      ProportionSequence(level, *centred_prior(c.count_num, n_score, strength)),
                                      ProportionSequence(level, *centred_prior(c.count_den, n_score, strength))))
            by_pair: dict[int, list[int]] = {}
            for j, (i, _) in enumerate(found.chosen):
                by_pair.setdefault(i, []).append(j)
            events = {i: tuple(found.chosen[j][1].event for j in js) for i, js in by_pair.items()}
            used, round_best, violated = 0, -math.inf, False
            for b, m in enumerate(stream_batches(n_test, first_batch, batch_size)):
                tasks = [Task(mechanism, x, m, r_entropy, TEST_PHASE, i, side, b, pair_list[i].label, nan_policy,
                              events[i]) for i in sorted(events) for side, x in ((0, pair_list[i].x0),
                                                                                 (1, pair_list[i].x1))]
                outs = pool.run(tasks, fn=run_batch)
                for t, o in zip(tasks, outs):
                    if o.signature != found.signature:
                        raise MechanismError(
                            f"the mechanism returned {o.signature.describe()} on {t.where()} but "
                            f"{found.signature.describe()} on the search sample; every input must give outputs "
                            "of the same shape and dtype (pad or encode variable-length outputs)")
                timing = timing + BatchTiming.total(o.timing for o in outs)
                counts = {(t.pair_index, t.side): o.value for t, o in zip(tasks, outs)}
                used += m
                for i, js in by_pair.items():
                    for slot, j in enumerate(js):
                        f = fins[j]
                        k0, k1 = int(counts[(i, 0)][slot]), int(counts[(i, 1)][slot])
                        k_num, k_den = (k0, k1) if f.direction == 0 else (k1, k0)
                        f.num.update(k_num, m)
                        f.den.update(k_den, m)
                        lb = float(epsilon_lower_bound(f.num.lower, f.den.upper, delta))
                        if f.best is None or lb > f.best.epsilon_lower_bound:
                            f.best = EventTest(i, pair_list[i].label, f.direction, f.description, f.num.k, f.den.k,
                                               f.num.n, f.num.lower, f.den.upper, lb, f.score)
                        round_best = max(round_best, lb)
                        if best is None or lb > best.epsilon_lower_bound:
                            best = f.best
                if round_best > epsilon:
                    violated = True
                    break
            tested += used
            rounds.append(Round(n_search, n_test, used, a_r, len(fins), round_best, violated))
            if violated:
                break
        workers_used = pool.used
        if pool.note:
            notes.append(pool.note)
    notes.extend(str(n) for n in getattr(mechanism, "audit_notes", ()) or ())
    lb = best.epsilon_lower_bound if best is not None and best.epsilon_lower_bound > 0 else 0.0
    witness = Witness(pair_list[best.pair_index], best) if best is not None and lb > 0 else None
    seconds = time.perf_counter() - t0
    library = (LibraryTiming(timing.calls, timing.library_seconds, timing.seconds, seconds)
               if hasattr(mechanism, "pop_timing") else None)
    return AnytimeResult(
        violation=lb > epsilon, epsilon_lower_bound=lb, epsilon=epsilon, delta=delta, alpha=alpha, witness=witness,
        rounds=tuple(rounds), planned_rounds=len(plan), samples=samples, samples_to_verdict=drawn + tested,
        test_samples=tested, n_pairs=len(pair_list), output_kind="/".join(sorted(kinds)), seed=entropy,
        seconds=seconds, workers=workers_used, notes=tuple(notes),
        loss_histogram=histograms.get(witness.test.pair_index if witness is not None else 0),
        reproducible=reproducible, library=library)
