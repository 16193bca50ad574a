"""An anytime-valid sequential audit: a betting test of the claim that stops as soon as the evidence suffices.

``audit_anytime(mechanism, pairs, epsilon, samples=N)`` looks for the violation :func:`dpverify.audit` looks for --
an event ``S`` with ``P[M(x) in S] > e^eps P[M(x') in S] + delta`` -- on a single *stream* of outputs per input,
and stops at the first batch after which a test martingale certifies it.  A gross violation stops after a few
hundred outputs per input; a subtle one as soon as the evidence is there; a mechanism without a detectable
violation spends the whole budget ``N`` (outputs per input, every one counted: there is no separate search sample).

**The test martingale.**  Fix a pair ``(x, x')`` and a direction.  For an event ``S`` chosen before observation
``t``, let ``Y_t = 1[M(x)_t in S]`` and ``Z_t = 1[M(x')_t in S]`` (fresh, independent draws).  If ``M`` is
``(eps, delta)``-DP then ``E[Y_t - e^eps Z_t - delta | past] <= 0``, so for any *predictable* bet ``lambda_t in
[0, 1/(e^eps + delta))``

    K_t = prod_{s <= t} (1 + lambda_s (Y_s - e^eps Z_s - delta))

is a nonnegative supermartingale with ``K_0 = 1`` (a "test supermartingale"), and Ville's inequality (Ville,
*Étude critique de la notion de collectif*, 1939) gives ``P(exists t: K_t >= 1/alpha) <= alpha`` whatever rule
stops the stream (Ramdas, Grünwald, Vovk & Shafer, "Game-theoretic statistics and safe anytime-valid inference",
Stat. Sci. 38(4), 2023; Shafer & Vovk's testing by betting).  The event and the bet may change at any time as long
as they are chosen from data seen before: the audit's event search runs on the stream itself, at *checkpoints*, so
no sample is spent on a search alone.  Within a batch the event and the bet are fixed at its start and the
observations are i.i.d., so the batch multiplies ``K`` by ``prod (1 + lambda (Y - e^eps Z - delta))`` over its
rows (``Y`` and ``Z`` of the same row index paired): four counts per batch suffice.

**Checkpoints and finalists.**  The stream is drawn in batches (``first_batch`` outputs per input, then a
sixteenth of the stream so far, at most ``batch_size``; every batch seeded by its coordinates, so results do not
depend on the number of workers).  At the checkpoints ``first_samples, growth * first_samples, ...`` the event
search of :func:`dpverify.audit` (:func:`dpverify.statistical.search.search_events`, every family, and thresholds
anchored at the pair's inputs: :mod:`dpverify.statistical.anchors`) runs on the stream so far (its last
``search_samples`` outputs per input), and the ``finalists`` candidates of largest
*expected growth* are bet on until the next checkpoint: ``g = max_lambda E log(1 + lambda (Y - e^eps Z -
delta))`` for Bernoulli ``Y, Z`` with the frequencies of the search's scoring half, each moved one standard error
against the claim (:func:`bet_growth`; for a small gap ``g ~ mean^2 / (2 var)``, so ``ln(1/alpha) / g`` outputs
per input certify the violation).  The finalists of the epoch that ends compete too, with their counts so far (those
that sized their bets and their epoch's, which played no part in choosing them), so that an event the stream has
confirmed is not dropped for a new one that only looks better on the search's scoring half.  Before the first
checkpoint nothing is bet.  From the first checkpoint with ``NARROW_FROM`` outputs per input and an ``NARROW_SHARE``-th
of the budget on, only the pairs holding a finalist and the best-scoring others, ``keep_pairs`` in all, go on being
drawn and searched (:mod:`dpverify.statistical.narrowing`: a correct mechanism's pass draws most of its stream on a
few pairs; which streams are drawn is decided from past outputs, so the bets stay predictable).

**The bets.**  Each finalist bets, in every batch, the ``lambda`` that maximises that expected growth at its running
frequency estimate -- its scoring-half frequencies moved ``SIZE_SE`` = 2 standard errors against the claim (they
chose it, so they flatter it), pooled at half weight with its counts in the batches since its checkpoint, taken as
they are (:func:`dpverify.statistical.betting.bet_frequencies`) -- clipped to ``[0, LAMBDA_CAP / (e^eps + delta)]``
(a plug-in GRAPA bet, Waudby-Smith & Ramdas, "Estimating means of bounded random variables by betting", JRSS-B
86(1), 2024, sec. 5; predictable: it uses data before the batch only).  The audit's wealth is a *portfolio*: at each
checkpoint the whole wealth is split over the new finalists in proportion to their expected growth (weights chosen
from past data: a rebalanced average of test supermartingales on one filtration is again one), and it stays idle
(unchanged) while no candidate has a positive expected growth.  (Pairs that share an input share its stream,
:mod:`dpverify.execution.sources`: the filtration is that of every distinct input's stream, each pair's factor is a
supermartingale factor on it as before -- its two inputs' rows are still fresh independent draws -- and the average
needs no independence between pairs.)  The audit stops with a violation when the wealth at the claimed ``eps``
reaches ``1/alpha``.

**The ε lower bound.**  The same events, weights and bets define a wealth ``E_t(eps')`` for every ``eps'`` of a
grid: two tiers share the events and portfolio weights, a *claim* tier of weight ``1 - BOUND_WEIGHT`` with the bets
above (valid for every ``eps' <= eps``, since ``lambda < 1/(e^eps + delta) <= 1/(e^eps' + delta)``) and a *bound*
tier of weight ``BOUND_WEIGHT`` whose bets are those clipped to ``LAMBDA_CAP / (e^eps_max + delta)`` (valid for
every ``eps' <= eps_max = eps + max(eps, 1)``).  ``E_t(eps') = (1 - w) A_t(eps') 1[eps' <= eps] + w B_t(eps')``.
For each fixed ``eps'`` this is a nonnegative supermartingale under "``M`` is ``(eps', delta)``-DP" with ``E_0 <=
1``.  Each factor ``1 + lambda (Y - e^eps' Z - delta)`` is nonincreasing in ``eps'`` (it moves only through ``-
lambda e^eps' Z``) and the bets and weights do not depend on ``eps'``, so ``A_t``, ``B_t`` and hence ``E_t`` are
*pathwise* nonincreasing in ``eps'`` (the indicator only drops).  Let ``eps*`` be the true ε (at this ``delta``)
and ``L = max{eps' in grid : sup_{s <= t} E_s(eps') >= 1/alpha}``.  If ``L > eps*`` then, by monotonicity,
``sup_s E_s(eps*) >= sup_s E_s(L) >= 1/alpha``, so ``P(L > eps*) <= P(exists s: E_s(eps*) >= 1/alpha) <= alpha``
by Ville: ``L`` is a lower confidence bound at level ``1 - alpha``, valid at any stopping time, with the whole
``alpha`` (no split: the verdict is the event ``L >= eps``).  The claim tier costs ``ln(1/(1 - w))`` in the
threshold of the verdict, the bound tier reaches values above the claim only with ``ln(1/w)`` more.  ``L`` is
reported (at least 0); "no violation detected" after the whole budget is never a proof of privacy.

References: Ville (1939); Waudby-Smith & Ramdas (JRSS-B 86(1), 2024) for betting with predictable plug-in bets;
Ramdas, Grünwald, Vovk & Shafer (Stat. Sci. 2023) and Shafer & Vovk (*Game-Theoretic Foundations for Probability
and Finance*, 2019) for test martingales and anytime validity; DP-Sniper (Bichsel et al., S&P 2021) for the event
search; Jagielski et al. (NeurIPS 2020) for the hockey-stick form ``P[S] - e^eps P'[S] - delta``.
"""

from __future__ import annotations

import math
import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from dpverify._validation import check_count, check_real, counted, root_entropy
from dpverify.errors import InputError
from dpverify.execution.sampling import BatchTiming, Mechanism, Signature, WorkerPool, resolve_workers, run_batch
from dpverify.jsonsafe import json_float
from dpverify.neighbours import Pair, as_pairs
from dpverify.results import Measured, PrivacyClaim, ViolationVerdict
from dpverify.statistical.auditor import DEFAULT_SAMPLES, DEFAULT_SEARCH_CAP
from dpverify.statistical.contract import check_pairs_differ, contract_probe, declares_seedless
from dpverify.statistical.privacy_loss import loss_histogram
from dpverify.statistical.result import (REPRODUCIBLE_NOTE, EventTest, LibraryTiming, Witness, bound_text, claim_text,
                                         trailing_notes, witness_text)
from dpverify.statistical.betting import (BOUND_WEIGHT, GRID_BELOW, LAMBDA_CAP, Bet, bet_growth, play, shrunk, tiers,
                                          wealth_grid)
from dpverify.statistical.narrowing import KEEP_PAIRS, narrows, pairs_to_drop
from dpverify.statistical.search import Candidate, SearchSettings
from dpverify.statistical.streams import Drawn, Found, Streams

__all__ = ["AnytimeResult", "Round", "audit_anytime", "stream_plan"]

#: first checkpoint (outputs per input before the first search and the first bet), by default
FIRST_SAMPLES = 256
#: a stream's batch is the outputs so far over this (stopping points ``1 + 1/STREAM_STEP`` apart)
STREAM_STEP = 16
NAN_POLICIES = ("raise", "outcome")


@dataclass(frozen=True)
class Round:
    """One epoch of the stream, from a checkpoint to the next: the outputs searched at its checkpoint, its length,
    how far the stream went in it, the level of the whole test, its finalists, the ε lower bound at its end and the
    pairs drawn in it (:mod:`dpverify.statistical.narrowing`)."""

    search_samples: int
    test_budget: int
    test_samples: int
    alpha: float
    finalists: int
    epsilon_lower_bound: float
    violation: bool
    pairs: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"search_samples": self.search_samples, "test_budget": self.test_budget,
                "test_samples": self.test_samples, "alpha": self.alpha, "finalists": self.finalists,
                "epsilon_lower_bound": json_float(self.epsilon_lower_bound), "violation": self.violation,
                "pairs": self.pairs}


@dataclass(frozen=True)
class AnytimeResult(ViolationVerdict):
    """Outcome of :func:`audit_anytime`.

    ``epsilon_lower_bound``: the largest ``eps'`` of the grid whose wealth reached ``1/alpha`` at some batch, a
    lower confidence bound on the true ε at level ``1 - alpha`` valid at the (data-dependent) stopping time (module
    docstring); ``violation``: the wealth at the claimed ε reached ``1/alpha`` (then the bound is at least ε).
    ``samples``: the budget, outputs per input of the stream; ``samples_to_verdict``: the outputs per input drawn
    (the whole stream up to the stopping batch, the searched outputs among them); ``test_samples``: those drawn after
    the first checkpoint, while bets were placed; ``search_samples``: those before it.  ``n_streams``: the streams
    drawn, one per distinct input of the pairs (:mod:`dpverify.execution.sources`; ``2 n_pairs`` when no two pairs
    share an input); ``outputs``: the outputs drawn in all, ``n_streams * samples_to_verdict`` unless pairs were
    dropped (:mod:`dpverify.statistical.narrowing`).  ``witness``: the finalist
    holding the largest share of the claim tier's wealth at the end, with its counts in its epoch
    (``witness.test.samples`` outputs per input) and the audit's bound; its ``p_num_low`` / ``p_den_high`` are NaN
    (the test martingale bounds ε directly, not the two probabilities).
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
    n_streams: int
    output_kind: str
    seed: int
    seconds: float
    workers: int
    notes: tuple[str, ...] = field(default=())
    loss_histogram: dict[str, Any] | None = field(default=None, compare=False)
    reproducible: bool = True
    library: LibraryTiming | None = field(default=None, compare=False)
    outputs: int = 0

    def _measured(self) -> Measured:
        return Measured("epsilon_lower_bound", self.epsilon_lower_bound)

    def _claim(self) -> PrivacyClaim:
        return PrivacyClaim(self.epsilon, self.delta)

    @property
    def confidence(self) -> float:
        return 1.0 - self.alpha

    @property
    def stopped_early(self) -> bool:
        """The audit stopped before spending its budget (always with a violation)."""
        return self.samples_to_verdict < self.samples

    @property
    def search_samples(self) -> int:
        """Outputs per input drawn before the first checkpoint, searched and never bet on
        (``samples_to_verdict - test_samples``)."""
        return self.samples_to_verdict - self.test_samples

    def summary(self) -> str:
        """One paragraph in the project's wording rules."""
        lb_txt, claim = bound_text(self.epsilon_lower_bound), claim_text(self.epsilon, self.delta)
        where = (f"stopped after {self.samples_to_verdict} samples per input ({self.search_samples} before the first "
                 f"bet, searched at {counted(len(self.rounds), 'checkpoint')} of {self.planned_rounds})")
        extras = trailing_notes(self.reproducible, self.library)
        if self.violation:
            assert self.witness is not None
            return (f"VIOLATION of the claim {claim}: true ε ≥ {lb_txt} with confidence {self.confidence:.0%} "
                    f"(anytime-valid), {witness_text(self.witness)}; {where}.{extras}")
        last = self.rounds[-1].pairs if self.rounds else self.n_pairs
        over = counted(self.n_pairs, "pair")
        if 0 < last < self.n_pairs:
            over += (f" ({last} of them drawn to the end; the others, whose events scored lowest, dropped at a "
                     "checkpoint)")
        return (f"No violation of the claim {claim} detected over {over}; {where}, the whole budget (ε lower bound "
                f"{lb_txt} at confidence {self.confidence:.0%}, anytime-valid). This is not a proof of privacy."
                f"{extras}")

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
            "stopped_early": self.stopped_early, "n_pairs": self.n_pairs, "n_streams": self.n_streams,
            "outputs": self.outputs,
            "output_kind": self.output_kind,
            "seed": self.seed, "seconds": self.seconds, "workers": self.workers, "notes": list(self.notes),
            "loss_histogram": self.loss_histogram, "reproducible": self.reproducible,
            "library": None if self.library is None else self.library.to_dict(),
        }


def stream_plan(samples: int, first_samples: int, growth: float, first_batch: int,
                batch_size: int) -> tuple[list[int], list[int]]:
    """``(checkpoints, batches)`` of a stream of ``samples`` outputs per input: the checkpoints ``first_samples,
    growth * first_samples, ...`` below ``samples`` (the searches; the epochs between them are the result's rounds),
    and the batch sizes, summing to ``samples``: ``first_batch`` until the stream has ``STREAM_STEP first_batch``,
    then ``1/STREAM_STEP`` of the outputs so far (stopping points about 6 % apart), at most ``batch_size``, every
    checkpoint a batch boundary.  Fixed before any data."""
    samples = check_count("samples", samples)
    first_samples = check_count("first_samples", first_samples)
    first_batch = check_count("first_batch", first_batch)
    batch_size = check_count("batch_size", batch_size)
    if not (isinstance(growth, (int, float)) and math.isfinite(growth) and growth > 1):
        raise InputError(f"growth must be a number > 1, got {growth!r}")
    if first_samples > samples:
        raise InputError(f"first_samples ({first_samples}) must not exceed samples ({samples})")
    checkpoints = [first_samples]
    while True:
        nxt = max(checkpoints[-1] + 1, int(round(checkpoints[-1] * growth)))
        if nxt >= samples:
            break
        checkpoints.append(nxt)
    if checkpoints[0] >= samples:
        checkpoints = []
    ends = checkpoints + [samples]
    batches: list[int] = []
    done = 0
    for end in ends:
        while done < end:
            size = min(max(first_batch, done // STREAM_STEP), batch_size, end - done)
            batches.append(size)
            done += size
    return checkpoints, batches


def audit_anytime(
    mechanism: Mechanism,
    pairs: Sequence[Pair] | Sequence[tuple[Any, Any]],
    epsilon: float,
    delta: float = 0.0,
    *,
    samples: int = DEFAULT_SAMPLES,
    search_samples: int | None = None,
    first_samples: int | None = None,
    growth: float = 2.0,
    first_batch: int = 256,
    alpha: float = 0.05,
    seed: int | np.random.SeedSequence | None = None,
    workers: int | None = None,
    batch_size: int = 100_000,
    finalists: int = 8,
    keep_pairs: int | None = KEEP_PAIRS,
    nan_policy: str = "raise",
    float_bits: bool = False,
    event_families: Sequence[Any] = (),
    pool: WorkerPool | None = None,
) -> AnytimeResult:
    """Audit the claim that ``mechanism`` is ``(epsilon, delta)``-DP on a stream of outputs, stopping at the first
    batch after which a test martingale certifies a violation (module docstring: the checkpoints, the bets, the
    validity argument).

    Parameters
    ----------
    mechanism, pairs, epsilon, delta, alpha, seed, workers, batch_size, nan_policy, float_bits, event_families, pool
        As :func:`dpverify.audit`.
    samples
        Budget: outputs per input of the stream (searched and bet on alike); a pass spends all of it.
    search_samples
        Outputs per input a checkpoint's search sees at most: the last ones of the stream so far (default
        ``min(samples, 200_000)``).
    first_samples
        The first checkpoint: outputs per input drawn before the first search and the first bet (default
        ``min(samples, 256)``).
    growth
        Ratio between consecutive checkpoints.
    first_batch
        Outputs per input of the stream's first batches (until the stream has sixteen of them); then a sixteenth of
        the stream so far, at most ``batch_size``.
    finalists
        Events bet on between two checkpoints (at most; those of largest expected growth over every pair and
        direction, only those with a positive one).  The default, 8, was chosen on the catalogue's violations:
        with several pairs of vector outputs (``svt-outputs-value``) more of the events that grow are bet on
        early, and the portfolio weights by expected growth keep the others' share small
        (``docs/anytime_calibration.py --finalists`` compares numbers on run seeds not used to choose it).

    keep_pairs
        From the first checkpoint with ``NARROW_FROM`` outputs per input and an ``NARROW_SHARE``-th of ``samples`` on,
        only the pairs holding a finalist and, up to ``keep_pairs`` in all, those of best search score go on being
        drawn and searched (:mod:`dpverify.statistical.narrowing`); ``None`` draws every pair to the end.

    Returns
    -------
    AnytimeResult
        The verdict, the anytime-valid ε lower bound, its witness, the epochs run, ``samples_to_verdict``.

    Raises
    ------
    InputError, MechanismError
        As :func:`dpverify.audit`.

    Examples
    --------
    >>> def no_noise(x, n, rng):
    ...     return x + 0.0 * rng.random(n)
    >>> r = audit_anytime(no_noise, [(0.0, 1.0)], epsilon=1.0, samples=100_000, seed=0, workers=1)
    >>> r.violation, r.samples_to_verdict <= 1000
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
        first_samples = min(samples, FIRST_SAMPLES)
    finalists = check_count("finalists", finalists)
    if keep_pairs is not None:
        keep_pairs = check_count("keep_pairs", keep_pairs)
    if nan_policy not in NAN_POLICIES:
        raise InputError(f"nan_policy must be one of {NAN_POLICIES}, got {nan_policy!r}")
    event_families = tuple(event_families)
    if any(not callable(f) for f in event_families):
        raise InputError("event_families must be callables family(data, search)")
    checkpoints, batches = stream_plan(samples, first_samples, growth, first_batch, batch_size)
    pair_list = as_pairs(pairs)
    check_pairs_differ(pair_list)
    entropy = root_entropy(seed)
    where = f"input x0 of pair 0 ('{pair_list[0].label}')"
    probe = contract_probe(mechanism, pair_list[0].x0, entropy, where)
    reproducible = not declares_seedless(mechanism)
    notes: list[str] = [] if reproducible else [REPRODUCIBLE_NOTE]

    grid, eps_max = wealth_grid(epsilon)
    at_claim = GRID_BELOW - 1                                    # grid[at_claim] == epsilon
    below = np.arange(len(grid)) <= at_claim
    cap_a, cap_b = LAMBDA_CAP / (math.exp(epsilon) + delta), LAMBDA_CAP / (math.exp(eps_max) + delta)
    c_grid = np.exp(grid)
    threshold = math.log(1.0 / alpha)
    z = math.sqrt(2.0 * math.log(1.0 / alpha))                  # the searches rank for the projected bound at z
    # log wealth of the two tiers over the grid at the start of the current epoch; the claim tier exists below eps
    wealth_a = np.where(below, math.log1p(-BOUND_WEIGHT), -np.inf)
    wealth_b = np.full(len(grid), math.log(BOUND_WEIGHT))
    best_log = np.logaddexp(wealth_a, wealth_b)                   # running maximum over batch ends
    bets: list[Bet] = []
    lead: Bet | None = None
    rounds: list[Round] = []
    epoch_search, epoch_used, epoch_budget = 0, 0, 0
    kinds: set[str] = set()
    timing = BatchTiming()
    signature: Signature | None = None
    position, violated, outputs = 0, False, 0
    checkpoint_at = {c: k for k, c in enumerate(checkpoints)}
    ends = checkpoints[1:] + [samples]

    def bound() -> float:
        hit = np.flatnonzero(best_log >= threshold)
        return float(grid[hit[-1]]) if len(hit) else 0.0

    def close_epoch() -> None:
        nonlocal wealth_a, wealth_b
        wealth_a, wealth_b = tiers(wealth_a, wealth_b, bets)
        rounds.append(Round(epoch_search, epoch_budget, epoch_used, alpha, len(bets), bound(), violated,
                            len(pair_list) - len(streams.dropped)))

    with (nullcontext(pool) if pool is not None else WorkerPool(resolve_workers(workers))) as pool:
        if hasattr(mechanism, "pop_timing"):
            calls, seconds = mechanism.pop_timing()
            if calls and seconds > 0:
                pool.hint_rate(run_batch, calls / seconds, mechanism)
        streams = Streams(mechanism, pair_list, entropy, nan_policy, search_samples, pool)
        starts = np.concatenate([[0], np.cumsum(batches)]).tolist()      # position before each batch
        sent: dict[int, Callable[[], list[Drawn]]] = {}

        def send(b: int) -> Callable[[], list[Drawn]]:
            asked: dict[int, list[tuple[int, Any]]] = {}
            for bet in bets:
                asked.setdefault(bet.pair_index, []).append((bet.direction, bet.event))
            check = starts[b + 1] == first_samples or (b == 0 and not checkpoints)
            return streams.send(b, batches[b], asked, check, signature)

        try:
            for b, m in enumerate(batches):
                if position in checkpoint_at:
                    k = checkpoint_at[position]
                    if k > 0:
                        close_epoch()
                    epoch_search = min(position, search_samples)
                    epoch_budget, epoch_used = ends[k] - position, 0
                    streams.maybe_move(vectors=bool(signature is not None and signature.shape))
                    found = streams.search(k, SearchSettings(max(ends[k] - position, 1000), z, delta, float_bits,
                                                             nan_policy == "outcome", event_families, deeper=False))
                    kinds.update(f.kind for f in found if f.kind)
                    bets = _choose(found, finalists, epsilon, delta, cap_a, grid, bets)
                    if keep_pairs is not None and narrows(position, samples):
                        streams.drop(pairs_to_drop(found, bets, keep_pairs, streams.dropped))
                    if not bets:
                        notes.append(f"checkpoint {k + 1}: no event had a positive expected growth on the stream "
                                     "so far")
                if b not in sent:
                    sent[b] = send(b)
                if streams.moved and b + 1 < len(batches) and starts[b + 1] not in checkpoint_at:
                    # the batches and the bets are fixed until the next checkpoint: the workers draw the next batch
                    # while this one's bets are played (drawn ahead of a stop, it is never read)
                    sent[b + 1] = send(b + 1)
                drawn = sent.pop(b)()
                outputs += m * streams.live_streams
                signature = next(d.signatures[0] for d in drawn if d.signatures)
                timing = timing + BatchTiming.total(d.timing for d in drawn)
                position += m
                if epoch_budget:
                    epoch_used += m
                if not bets:
                    continue
                seen = {i: iter(d.counts) for i, d in enumerate(drawn)}
                for bet in bets:
                    play(bet, next(seen[bet.pair_index]), grid, c_grid, delta, epsilon, cap_a, cap_b, below)
                log_a, log_b = tiers(wealth_a, wealth_b, bets)
                now = np.logaddexp(log_a, log_b)
                best_log = np.maximum(best_log, now)
                lead = max(bets, key=lambda x: x.log_weight + x.log_a[at_claim])
                if now[at_claim] >= threshold:
                    violated = True
                    break
            # the privacy-loss histogram of the witness's pair (pair 0 without one) on the last outputs of its stream
            at = lead.pair_index if lead is not None and bound() > 0 else 0
            last = streams.outputs(at, b + 1 if batches else 0)
        finally:
            streams.close()
        if checkpoints and position > checkpoints[0]:
            close_epoch()
        workers_used = pool.used
        if pool.note:
            notes.append(pool.note)
    probe.check_unchanged(mechanism, pair_list[0].x0, where)
    notes.extend(str(n) for n in getattr(mechanism, "audit_notes", ()) or ())
    lb = bound()
    witness = None
    if lead is not None and lb > 0:
        w = lead
        witness = Witness(pair_list[w.pair_index], EventTest(
            w.pair_index, pair_list[w.pair_index].label, w.direction, w.description, w.k_num, w.k_den, w.n,
            math.nan, math.nan, lb, w.growth))
    histogram = loss_histogram(*last) if last is not None else None
    seconds = time.perf_counter() - t0
    library = (LibraryTiming(timing.calls, timing.library_seconds, timing.seconds, seconds)
               if hasattr(mechanism, "pop_timing") else None)
    bet_on = max(0, position - first_samples) if checkpoints else 0
    return AnytimeResult(
        violation=violated, epsilon_lower_bound=lb, epsilon=epsilon, delta=delta, alpha=alpha, witness=witness,
        rounds=tuple(rounds), planned_rounds=len(checkpoints), samples=samples, samples_to_verdict=position,
        test_samples=bet_on, n_pairs=len(pair_list), output_kind="/".join(sorted(kinds)), seed=entropy,
        n_streams=streams.n_streams, outputs=outputs,
        seconds=seconds, workers=workers_used, notes=tuple(notes),
        loss_histogram=histogram,
        reproducible=reproducible, library=library)


def _carried(bet: Bet) -> Candidate:
    """A finalist of the epoch that ends, as a candidate of the next checkpoint: its counts those that sized its
    bets (its scoring-half counts, or its evidence when it was carried itself) plus its counts in the epoch."""
    kn, kd, ns = bet.prior
    return Candidate(bet.event, bet.direction, math.nan, kn + bet.k_num, kd + bet.k_den, "carried", "carried",
                     ns + bet.n)


def _choose(found: list[Found], finalists: int, epsilon: float, delta: float, cap: float,
            grid: NDArray[np.float64], incumbents: Sequence[Bet] = ()) -> list[Bet]:
    """The ``finalists`` candidates of largest expected growth at the claim (scoring-half frequencies moved one
    standard error against the claim), weighted in proportion to it; none when no candidate grows.  The
    ``incumbents`` (the finalists of the epoch that ends) are candidates too, with their counts so far
    (:func:`_carried`).

    Candidates of one pair and direction with the same scoring-half counts count once (the first in the search's
    order): families often propose one set under several descriptions (``out[9] ≥ 1``, ``out[9] ∈ {1}`` and a cell
    union on outputs whose coordinate 9 is -1, 0 or 1), and three bets on one set are one bet, where the portfolio
    could hold three different events."""
    cands = [(i, c) for i, f in enumerate(found) for c in f.candidates]
    cands += [(b.pair_index, _carried(b)) for b in incumbents if b.n > 0]
    if not cands:
        return []
    n = np.array([c.n_score or found[i].n_score for i, c in cands], dtype=np.float64)
    p, q = shrunk([c.count_num for _, c in cands], [c.count_den for _, c in cands], n)
    _, g = bet_growth(p, q, math.exp(epsilon), delta, cap)
    order: list[int] = []
    seen: set[tuple[int, int, int, int, int]] = set()
    for j in (int(j) for j in np.argsort(-g, kind="stable") if g[j] > 0):
        i, c = cands[j]
        key = (i, c.direction, c.count_num, c.count_den, int(n[j]))
        if key not in seen:
            seen.add(key)
            order.append(j)
            if len(order) == finalists:
                break
    if not order:
        return []
    total = float(sum(g[j] for j in order))
    return [Bet(cands[j][0], cands[j][1].direction, cands[j][1].event, cands[j][1].event.description, float(g[j]),
                 math.log(g[j] / total), (cands[j][1].count_num, cands[j][1].count_den, int(n[j])),
                 np.zeros(len(grid)), np.zeros(len(grid))) for j in order]
