"""The black-box (epsilon, delta) audit.

``audit(mechanism, pairs, epsilon, delta)`` looks for an event ``S`` and a pair of neighbouring
inputs ``(x, x')`` with ``P[M(x) in S] > e^epsilon P[M(x') in S] + delta``.  Two phases:

1. **search** -- ``search_samples`` outputs per input of every pair; for both directions of every
   pair, :func:`dpverify.statistical.search.search_events` proposes the best event of each family;
2. **test** -- the ``finalists`` best candidates (at most one per pair and direction, ranked by a
   score corrected for the optimism of picking the best of many) are re-counted on ``samples``
   *fresh* outputs per input.  For each, Clopper--Pearson bounds at level ``alpha / (2 K)``
   (``K`` finalists: a Bonferroni correction over every event, pair and direction tested) give
   ``eps_LB = ln((p_low - delta) / p_high)``.  With probability at least ``1 - alpha`` every one of
   these bounds holds at once, so their maximum is a lower confidence bound on the true epsilon
   (at this delta).  A violation is reported when it exceeds the claimed epsilon.

The events are chosen on data independent of the test samples, so the search heuristics cannot
inflate the bound.  An event seen under one input and never under the other (an *impossible*
event) yields a large finite bound, flagged as such in the witness.

References: DP-Sniper (Bichsel et al., S&P 2021) for the Clopper--Pearson bound with a union bound;
StatDP (Ding et al., CCS 2018) for the categorical/threshold events; Jagielski et al. (NeurIPS
2020) for ``ln((p_low - delta) / p_high)``; docs/auditor.md for the families and their costs.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from dpverify.statistical.contract import (
    check_batches_distinct,
    check_pairs_differ,
    check_rng_contract,
    declares_seedless,
)
from dpverify._validation import check_count, check_real, root_entropy
from dpverify.errors import InputError, MechanismError
from dpverify.statistical.atoms import row_hashes
from dpverify.statistical.search import Candidate, EventFamily, SearchSettings, atom_candidates, rank_candidates
from dpverify.neighbours import Pair, as_pairs
from dpverify.statistical.privacy_loss import loss_histogram
from dpverify.statistical.result import REPRODUCIBLE_NOTE, AuditResult, EventTest, LibraryTiming, Witness
from dpverify.execution.sampling import (
    SEARCH_PHASE,
    SWEEP_PHASE,
    TEST_PHASE,
    BatchOutput,
    BatchTiming,
    NO_TIME,
    Mechanism,
    Signature,
    Task,
    batch_sizes,
    WorkerPool,
    resolve_workers,
    run_batch,
)
from dpverify.statistical.ratio_tests import RATIO_TESTS, event_tests, plan_tests
from dpverify.statistical.stats import (
    epsilon_lower_bound,
    normal_quantile,
    wilson_lower,
    wilson_upper,
)

__all__ = ["audit", "search_phase", "SearchPhase", "DEFAULT_SAMPLES"]

DEFAULT_SAMPLES = 1_000_000
DEFAULT_SEARCH_CAP = 200_000
SWEEP_FRACTION = 10
#: families of events on point masses: they get a finalist slot of their own per pair and direction
MASS_FAMILIES = ("atom", "nan")
NAN_POLICIES = ("raise", "outcome")


def _grouped(tasks: Sequence[Task], results: Sequence[BatchOutput],
             expected: Signature | None) -> tuple[dict[tuple[int, int], list[Any]], Signature]:
    """The batches' values by ``(pair, side)``, in batch order.  Every output must have the signature
    (trailing shape, dtype) of the first one seen, or of ``expected`` when given."""
    signature, first_where = expected, "the earlier pairs"
    grouped: dict[tuple[int, int], list[Any]] = defaultdict(list)
    for task, out in zip(tasks, results):
        value, sig = out.value, out.signature
        if signature is None:
            signature, first_where = sig, task.where()
        elif sig != signature:
            raise MechanismError(
                f"the mechanism returned {sig.describe()} on {task.where()} but {signature.describe()} "
                f"on {first_where}; every input must give outputs of the same shape and dtype "
                "(pad or encode variable-length outputs)"
            )
        grouped[(task.pair_index, task.side)].append(value)
    assert signature is not None
    return grouped, signature


def _count_events(mechanism: Mechanism, pairs: Sequence[Pair], events: dict[int, tuple[Any, ...]],
                  sizes: dict[int, tuple[int, int]], batch_size: int, entropy: int, nan_policy: str, pool: WorkerPool,
                  expected: Signature | None) -> tuple[dict[tuple[int, int], Any], BatchTiming]:
    """Phase 2: ``sizes[i]`` fresh outputs on the two inputs of each pair ``i`` in ``events``; the counts of their
    events, and the batches' timing."""
    tasks = [t for i in sorted(events)
             for t in _pair_tasks(mechanism, pairs[i], i, sizes[i], batch_size, entropy, nan_policy, TEST_PHASE,
                                  events[i])]
    results = pool.run(tasks, fn=run_batch)
    grouped, _ = _grouped(tasks, results, expected)
    counts = {k: np.sum(v, axis=0) for k, v in grouped.items()}
    for i in events:                      # an input drawn 0 times counts nothing
        for side in (0, 1):
            counts.setdefault((i, side), np.zeros(len(events[i]), dtype=np.int64))
    return counts, BatchTiming.total(r.timing for r in results)


@dataclass(frozen=True)
class _PairSearch:
    """Phase 1 for one pair: its search batches and what the event search needs (picklable, so that the
    pairs can be searched on the worker pool side by side)."""

    tasks: tuple[Task, ...]
    pair_index: int
    expected: Signature | None
    settings: SearchSettings
    entropy: int
    sweep: tuple[Task, ...] = ()

    @property
    def n(self) -> int:
        """Outputs this pair's search draws (both inputs)."""
        return sum(t.n for t in self.tasks) + sum(t.n for t in self.sweep)


@dataclass(frozen=True)
class _PairFound:
    candidates: list[Candidate]
    scored: int
    kind: str
    histogram: dict[str, Any] | None
    signature: Signature
    timing: BatchTiming


def _search_pair(job: _PairSearch, run: Callable[[Sequence[Task]], list[BatchOutput]] | None = None) -> _PairFound:
    """Sample the pair's search outputs (``run``: where the batches run, :func:`run_batch` on each; default here)
    and search its events.

    The event search's generator is the pair's own (``spawn_key=(2, pair)``), so the result is the same
    wherever and in whatever order the pairs are searched.
    """
    tasks = job.tasks + job.sweep
    results = run(tasks) if run is not None else [run_batch(t) for t in tasks]
    grouped, signature = _grouped(job.tasks, results[:len(job.tasks)], job.expected)
    check_batches_distinct([v for side in (0, 1) for v in grouped[(job.pair_index, side)]],
                           f"pair {job.pair_index} ('{job.tasks[0].pair_label}')")
    o0, o1 = (np.concatenate(grouped[(job.pair_index, side)]) for side in (0, 1))
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(job.entropy, spawn_key=(2, job.pair_index))))
    found, scored, kind = job.settings.run(o0, o1, rng)
    if job.sweep:
        swept, _ = _grouped(job.sweep, results[len(job.tasks):], signature)
        h0, h1 = (np.concatenate(swept[(job.pair_index, side)]) for side in (0, 1))
        cfg = job.settings
        found = found + atom_candidates(h0, h1, cfg.n_test, cfg.z, cfg.delta, _examples(o0, o1))
    return _PairFound(found, scored, kind, loss_histogram(o0, o1), signature,
                      BatchTiming.total(r.timing for r in results))


def _examples(o0: np.ndarray, o1: np.ndarray) -> Callable[[np.ndarray], tuple[str, ...]]:
    """Readable rows of the search sample whose hashes are given (the atoms the sweep found), for descriptions."""
    rows = np.concatenate([o0, o1])
    hashes = row_hashes(rows)

    def show(chosen: np.ndarray) -> tuple[str, ...]:
        idx = [int(np.flatnonzero(hashes == h)[0]) for h in chosen[:3] if (hashes == h).any()]
        flat = rows.reshape(len(rows), -1)
        return tuple((f"{flat[i][0]:.6g}" if flat.shape[1] == 1 else
                      "(" + ",".join(f"{v:.6g}" for v in flat[i][:8]) + (",…" if flat.shape[1] > 8 else "") + ")")
                     for i in idx)

    return show


def _pair_tasks(mechanism: Mechanism, pair: Pair, i: int, n: int | tuple[int, int], batch_size: int, entropy: int,
                nan_policy: str, phase: int, events: tuple[Any, ...] | None = None) -> tuple[Task, ...]:
    """The batches of ``n`` outputs per input of pair ``i`` in ``phase`` (``(n0, n1)``: that many on each input;
    with ``events``: count them; in the sweep phase: hash the rows)."""
    n0, n1 = n if isinstance(n, tuple) else (n, n)
    return tuple(Task(mechanism, x, m, entropy, phase, i, side, b, pair.label, nan_policy, events,
                      phase == SWEEP_PHASE)
                 for side, x, k in ((0, pair.x0, n0), (1, pair.x1, n1)) for b, m in enumerate(batch_sizes(k, batch_size))
                 if m > 0)


def _check_signatures(found: Sequence[_PairFound], pair_list: Sequence[Pair]) -> None:
    """Every pair's outputs have pair 0's signature (trailing shape, dtype), as :func:`_grouped` checks within one
    pair: the same error when they do not."""
    first = found[0].signature
    for i, f in enumerate(found[1:], start=1):
        if f.signature != first:
            raise MechanismError(
                f"the mechanism returned {f.signature.describe()} on pair {i} ('{pair_list[i].label}') but "
                f"{first.describe()} on pair 0 ('{pair_list[0].label}'); every input must give outputs of the same "
                "shape and dtype (pad or encode variable-length outputs)")


@dataclass(frozen=True)
class SearchPhase:
    """What phase 1 of an audit found: the finalists ``chosen`` (pair index, candidate), the number of events
    considered, the output kinds seen, the outputs' signature, each pair's privacy-loss histogram and the batches'
    timing."""

    chosen: list[tuple[int, Candidate]]
    n_candidates: int
    kinds: tuple[str, ...]
    signature: Signature
    histograms: dict[int, dict[str, Any] | None]
    timing: BatchTiming


#: with a target, candidates ranked this many standard errors below it are not tested (unless nothing ranks higher)
POWER_FLOOR = -3.0


def power_ranks(candidates: Sequence[Candidate], n_score: NDArray[np.int64], n_test: int, z: float, delta: float,
                target: float) -> NDArray[np.float64]:
    """``(b - target) / se``: ``b`` the bound a candidate is projected to reach on ``n_test`` test samples at the
    normal quantile ``z`` if its scoring-half frequencies were exact, ``se`` the standard error of ``ln(p_num /
    p_den)`` estimated from those counts (each count at least 1/2).  Higher is likelier to exceed ``target``: a
    candidate far above it on few counts and one just above it on many both rank well; an event almost certain
    under both inputs, or rare and seen once, does not.  Uses the search sample only."""
    if not candidates:
        return np.zeros(0)
    ns = np.asarray(n_score, dtype=np.float64)
    k_num = np.array([c.count_num for c in candidates], dtype=np.float64)
    k_den = np.array([c.count_den for c in candidates], dtype=np.float64)
    p_num, p_den = k_num / ns, k_den / ns
    lo = wilson_lower(p_num, n_test, z)
    hi = wilson_upper(p_den, n_test, z)
    with np.errstate(divide="ignore", invalid="ignore"):
        b = epsilon_lower_bound(np.maximum(lo, 0.0), hi, delta)
        se = np.sqrt((1 - p_num) / np.maximum(k_num, 0.5) + (1 - p_den) / np.maximum(k_den, 0.5)
                     + 1.0 / ns)
        out = (b - target) / se
    return np.where(np.isfinite(out) | (out > 0), out, -np.inf)


def search_phase(mechanism: Mechanism, pair_list: Sequence[Pair], *, search_samples: int, n_test: int, z: float,
                 delta: float, entropy: int, pool: WorkerPool, batch_size: int, finalists: int, nan_policy: str,
                 float_bits: bool = False, event_families: Sequence[EventFamily] = (),
                 target: float | None = None, vectors: bool = True) -> SearchPhase:
    """Phase 1 of :func:`audit`: sample ``search_samples`` outputs per input of every pair (and the atom sweep, a
    tenth of ``n_test`` when that is larger), search the events and choose at most ``finalists`` of them, ranked by
    the bound they are projected to reach on ``n_test`` fresh samples at the normal quantile ``z``.  The samples are
    seeded from ``entropy`` (phases ``SEARCH_PHASE`` and ``SWEEP_PHASE``): the same finalists on any number of
    workers.  ``vectors``: the outputs may be vectors (the contract probe's shape says; their search fits a logistic
    regression, so scikit-learn is imported here before the workers fork -- never for scalar outputs).

    ``target`` (the anytime audit passes its claimed ε): rank by :func:`power_ranks` instead, how many standard
    errors of its search estimate a candidate's projected bound lies above ``target`` -- the chance that the
    event certifies the violation, rather than the bound it is projected to reach.  Without it (the audit), an
    event whose optimism-corrected bound is not positive is chosen only when nothing is, and then the least
    negative, usually an event almost certain under both inputs, which cannot exceed any ε > 0."""
    samples = n_test
    timing = NO_TIME

    def sample(tasks: Sequence[Task]) -> list[BatchOutput]:
        return pool.run(tasks, fn=run_batch)

    # the atom sweep (dpverify.statistical.atoms): point masses too rare for the search sample, on a tenth of the test
    # budget, when that is larger than the search sample
    n_sweep = samples // SWEEP_FRACTION if samples // SWEEP_FRACTION > search_samples else 0
    candidates: list[tuple[int, Candidate]] = []
    n_candidates = 0
    kinds: set[str] = set()
    signature: Signature | None = None
    histograms: dict[int, dict[str, Any] | None] = {}

    settings = SearchSettings(samples, z, delta, float_bits, nan_policy == "outcome", tuple(event_families))

    def job(i: int, expected: Signature | None) -> _PairSearch:
        return _PairSearch(_pair_tasks(mechanism, pair_list[i], i, search_samples, batch_size, entropy,
                                       nan_policy, SEARCH_PHASE), i, expected, settings, entropy,
                           _pair_tasks(mechanism, pair_list[i], i, n_sweep, batch_size, entropy, nan_policy,
                                       SWEEP_PHASE) if n_sweep else ())

    side_by_side = len(pair_list) > 1 and (pool.workers > 1 or pool.remote)
    if side_by_side and vectors and not pool.started:
        # the search of vector outputs fits a logistic regression; import scikit-learn once here, before
        # the pool forks, rather than once in every worker (about 1 s each, per audit)
        import sklearn.linear_model  # noqa: F401
    if side_by_side:
        # every pair's search at once, pair 0's in this process (sampled here too), the others on the workers;
        # the pairs' output signatures are compared once all are back
        found_all = pool.run_alongside([job(i, None) for i in range(len(pair_list))], fn=_search_pair)
        _check_signatures(found_all, pair_list)
    else:
        first = _search_pair(job(0, None), sample)            # pair 0 first: it fixes the signature
        found_all = [first] + [_search_pair(job(i, first.signature), sample) for i in range(1, len(pair_list))]
    for i, f in enumerate(found_all):
        signature = f.signature
        histograms[i] = f.histogram
        kinds.add(f.kind)
        n_candidates += f.scored
        timing = timing + f.timing
        candidates.extend((i, c) for c in f.candidates)

    # ---- choose finalists: best optimism-corrected scores, one per (pair, direction) and slot: point masses
    # (atoms, NaN) have a slot of their own, so that a large tail event cannot crowd out a rare atom ------
    n_score = search_samples - search_samples // 2
    n_scores = np.array([c.n_score or n_score for _, c in candidates])
    if target is None:
        ranks = rank_candidates([c for _, c in candidates], n_scores, samples, z, delta)
    else:
        ranks = power_ranks([c for _, c in candidates], n_scores, samples, z, delta, target)
    chosen: list[tuple[int, Candidate]] = []
    seen_groups: set[tuple[int, int, str]] = set()
    order = np.argsort(-ranks, kind="stable")
    # one finalist is reserved for the best point-mass candidate whose own (uncorrected) scoring-half score is
    # positive: a rare atom seen a few times and never under the neighbour is structure, not luck, but the
    # optimism correction sized for many candidates would push it below every tail event
    # (with a target: whose score exceeds the target -- an atom projected below the claim cannot certify it)
    floor = 0.0 if target is None else target
    mass = [r for r in order if candidates[r][1].family in MASS_FAMILIES and candidates[r][1].score > floor]
    if mass and finalists > 1:
        order = np.r_[mass[:1], [r for r in order if r != mass[0]]].astype(np.intp)
    for r in order:
        i, c = candidates[r]
        # a projected bound <= 0 cannot show a violation but would cost Bonferroni budget;
        # only the best candidate is tested when no candidate is positive
        useless = (ranks[r] <= 0 if target is None else ranks[r] <= POWER_FLOOR) and r != order[0]
        slot = (i, c.direction, "mass" if c.family in MASS_FAMILIES else "shape")
        if not np.isfinite(ranks[r]) or useless or slot in seen_groups:
            continue
        seen_groups.add(slot)
        chosen.append((i, c))
        if len(chosen) == finalists:
            break

    assert signature is not None
    return SearchPhase(chosen, n_candidates, tuple(sorted(kinds)), signature, histograms, timing)


def audit(
    mechanism: Mechanism,
    pairs: Sequence[Pair] | Sequence[tuple[Any, Any]],
    epsilon: float,
    delta: float = 0.0,
    *,
    samples: int = DEFAULT_SAMPLES,
    search_samples: int | None = None,
    alpha: float = 0.05,
    seed: int | np.random.SeedSequence | None = None,
    workers: int | None = None,
    batch_size: int = 100_000,
    finalists: int = 3,
    nan_policy: str = "raise",
    float_bits: bool = False,
    event_families: Sequence[EventFamily] = (),
    pool: WorkerPool | None = None,
    ratio_test: str = "clopper-pearson",
) -> AuditResult:
    """Audit the claim that ``mechanism`` is ``(epsilon, delta)``-DP on the given neighbouring pairs.

    Parameters
    ----------
    mechanism
        ``mechanism(x, n, rng) -> ndarray`` with ``n`` rows (the contract of docs/architecture.md); it must be
        picklable (module level) to run on several workers.
    pairs
        Neighbouring inputs: :class:`dpverify.neighbours.Pair` objects or ``(x0, x1)`` tuples, e.g.
        from ``relation.pairs(x)``.  Both directions of every pair are tested.
    epsilon, delta
        The claim.  ``delta > 0`` makes this a hockey-stick test.
    samples
        Fresh outputs per input for the final test.
    search_samples
        Outputs per input for the event search (default ``min(samples, 200_000)``).
    alpha
        Error level: the reported bound holds with probability at least ``1 - alpha``.
    seed
        Root seed.  Same seed => same result, whatever ``workers`` is.  ``None`` draws fresh entropy,
        reported as ``result.seed`` so the run can be repeated.
    workers
        Processes for sampling (default: all cores).
    batch_size
        Outputs per mechanism call; fixed so that results do not depend on ``workers``.
    finalists
        Number of candidate events re-tested on fresh samples (Bonferroni factor).
    nan_policy
        ``"raise"`` (default): NaN outputs are an error; ``"outcome"``: NaN is an output value.
    float_bits
        Also search events on the low-order bits of float outputs (floating-point attacks).
    event_families
        Event families of your own (:data:`dpverify.statistical.search.EventFamily`: picklable callables
        ``family(data, search)``), searched on every pair after the built-in ones; their candidates compete for the
        finalists like every other, and the Bonferroni correction covers whatever is tested.
    pool
        A :class:`dpverify.execution.sampling.WorkerPool` to sample on, kept open by the caller across several
        audits (``workers`` is then ignored); by default the audit opens and closes its own.
    ratio_test
        How a finalist's fresh counts become a bound.  ``"clopper-pearson"`` (default): two Clopper--Pearson bounds,
        one per probability, at half the test's level each -- conservative: on a claim that is exactly tight its
        false-alarm rate is far below ``alpha``.  ``"auto"``: per pair, where the search's frequencies project a
        larger bound, the conditional test of the ratio on Poisson-sized samples
        (:func:`dpverify.statistical.stats.poisson_ratio_lower`; ``delta = 0`` only): exact at the test's whole
        level, hence a tighter bound and more power at the same ``alpha``, and a false-alarm rate close to
        ``alpha`` (never above) on exactly tight claims.

    Returns
    -------
    AuditResult
        ``violation``, ``epsilon_lower_bound`` (a lower confidence bound on the true ε at level ``1 - alpha``,
        over every pair, direction and event tested), the ``witness`` (pair, event, counts), every event tested,
        and ``verdict`` / ``claim`` / ``measured`` (:mod:`dpverify.results`).  No violation means *no violation
        detected at this budget*, never that the mechanism is private.

    Raises
    ------
    InputError
        Bad arguments (a claim out of range, no pairs, a pair of equal inputs, samples < 1, ...), each message
        naming the problem and the fix.
    MechanismError
        The mechanism breaks the sampling contract (it ignores ``rng``, repeats one noise value per call, returns
        outputs of changing shape) or raises: no verdict is given on such samples.

    Examples
    --------
    >>> import numpy as np, dpverify
    >>> def half_noise(x, n, rng):            # Laplace noise of scale 1/(2ε) for a claim of ε = 1
    ...     return x + rng.laplace(0.0, 0.5, size=n)
    >>> r = dpverify.audit(half_noise, [(0.0, 1.0)], epsilon=1.0, samples=50_000, seed=0, workers=1)
    >>> r.violation, r.verdict.value, r.epsilon_lower_bound > 1.5
    (True, 'violation', True)
    """
    t_start = time.perf_counter()
    event_families = tuple(event_families)
    bad = [f for f in event_families if not callable(f)]
    if bad:
        raise InputError(f"event_families must be callables family(data, search), got {type(bad[0]).__name__}")
    if not callable(mechanism):
        raise InputError(
            f"mechanism must be callable as mechanism(x, n, rng) -> ndarray, got {type(mechanism).__name__}"
        )
    epsilon = check_real("epsilon", epsilon, low=0.0, high=math.inf, low_open=True, high_open=True)
    delta = check_real("delta", delta, low=0.0, high=1.0, low_open=False, high_open=True)
    alpha = check_real("alpha", alpha, low=0.0, high=1.0, low_open=True, high_open=True)
    samples = check_count("samples", samples)
    search_samples = check_count(
        "search_samples", min(samples, DEFAULT_SEARCH_CAP) if search_samples is None else search_samples
    )
    if search_samples < 2:
        raise InputError("search_samples must be at least 2")
    batch_size = check_count("batch_size", batch_size)
    finalists = check_count("finalists", finalists)
    if ratio_test not in RATIO_TESTS:
        raise InputError(f"ratio_test must be one of {RATIO_TESTS}, got {ratio_test!r}")
    if nan_policy not in NAN_POLICIES:
        raise InputError(f"nan_policy must be one of {NAN_POLICIES}, got {nan_policy!r}")
    if workers is not None:
        workers = check_count("workers", workers)
    pair_list = as_pairs(pairs)
    check_pairs_differ(pair_list)
    entropy = root_entropy(seed)
    probe_shape = check_rng_contract(mechanism, pair_list[0].x0, entropy,
                                     f"input x0 of pair 0 ('{pair_list[0].label}')")
    reproducible = not declares_seedless(mechanism)
    n_workers = resolve_workers(workers)
    notes: list[str] = [] if reproducible else [REPRODUCIBLE_NOTE]
    timing = BatchTiming()

    with (nullcontext(pool) if pool is not None else WorkerPool(n_workers)) as pool:

        probe_calls, probe_seconds = mechanism.pop_timing() if hasattr(mechanism, "pop_timing") else (0, 0.0)
        if probe_calls and probe_seconds > 0:
            # a per-call library: its speed on the contract probe tells the pool to start the workers for the
            # search already (its default, run a first small call here, assumes vectorised outputs)
            pool.hint_rate(run_batch, probe_calls / probe_seconds, mechanism)

        # ---- phase 1: search.  With several workers and pairs, the pairs are searched side by side on
        # the pool (memory: one pair's search sample per worker); otherwise one pair at a time here, its
        # batches on the pool.  Same candidates either way.
        z = normal_quantile(alpha / (2 * finalists))
        found = search_phase(mechanism, pair_list, search_samples=search_samples, n_test=samples, z=z, delta=delta,
                             entropy=entropy, pool=pool, batch_size=batch_size, finalists=finalists,
                             nan_policy=nan_policy, float_bits=float_bits, event_families=event_families,
                             vectors=probe_shape is None or bool(probe_shape))
        chosen, n_candidates, kinds, signature, histograms = (found.chosen, found.n_candidates, set(found.kinds),
                                                              found.signature, found.histograms)
        timing = timing + found.timing

        # ---- phase 2: fresh samples -----------------------------------------------------------
        tests: list[EventTest] = []
        if chosen:
            by_pair: dict[int, list[Candidate]] = defaultdict(list)
            for i, c in chosen:
                by_pair[i].append(c)
            events = {i: tuple(c.event for c in cs) for i, cs in by_pair.items()}
            level = alpha / (2 * len(chosen))           # per probability; 2 * level per test
            plan = plan_tests(by_pair, ratio_test, samples, search_samples - search_samples // 2, level, delta,
                              entropy)
            notes.extend(f"pair {i}: a Poisson sample size exceeded the budget of {samples} outputs (probability "
                         "about 3e-5), so its finalists were not tested" for i in sorted(plan.oversized))
            counts, test_timing = _count_events(mechanism, pair_list, events, plan.sizes, batch_size, entropy,
                                                nan_policy, pool, signature)
            timing = timing + test_timing
            tests = event_tests(by_pair, counts, plan, pair_list, level, delta)
        else:
            notes.append("no event separated the outputs of any pair on the search sample")
        used = pool.used
        if pool.note:
            notes.append(pool.note)
    notes.extend(str(n) for n in getattr(mechanism, "audit_notes", ()) or ())
    tests.sort(key=lambda t: -t.epsilon_lower_bound)
    best = tests[0] if tests and tests[0].epsilon_lower_bound > 0 else None
    if tests and best is None:
        notes.append("no tested event gave a positive ε lower bound")
    lb = best.epsilon_lower_bound if best is not None else 0.0
    witness = Witness(pair_list[best.pair_index], best) if best is not None else None
    seconds = time.perf_counter() - t_start
    library = (LibraryTiming(timing.calls, timing.library_seconds, timing.seconds, seconds)
               if hasattr(mechanism, "pop_timing") else None)
    return AuditResult(
        violation=lb > epsilon,
        epsilon_lower_bound=lb,
        epsilon=epsilon,
        delta=delta,
        alpha=alpha,
        witness=witness,
        tests=tuple(tests),
        samples=samples,
        search_samples=search_samples,
        n_pairs=len(pair_list),
        n_candidates=n_candidates,
        output_kind="/".join(sorted(kinds)),
        seed=entropy,
        seconds=seconds,
        workers=used,
        notes=tuple(notes),
        loss_histogram=histograms.get(best.pair_index if best is not None else 0),
        reproducible=reproducible,
        library=library,
    )
