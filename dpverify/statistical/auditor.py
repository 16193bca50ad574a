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
from typing import Any, Sequence

import numpy as np

from dpverify.statistical.deeper import expand
from dpverify.statistical.contract import check_pairs_differ, contract_probe, declares_seedless
from dpverify._validation import check_count, check_real, root_entropy
from dpverify.errors import InputError
from dpverify.statistical.search import Candidate, EventFamily
from dpverify.neighbours import Pair, as_pairs
from dpverify.statistical.result import REPRODUCIBLE_NOTE, AuditResult, EventTest, LibraryTiming, Witness
from dpverify.execution.sampling import (TEST_PHASE, BatchTiming, Mechanism, Signature, WorkerPool, resolve_workers,
                                         run_batch)
from dpverify.statistical.ratio_tests import RATIO_TESTS, event_tests, plan_tests
from dpverify.statistical.search_phase import (MASS_FAMILIES, SWEEP_FRACTION, SearchPhase,
                                               grouped_batches, pair_tasks, power_ranks, search_phase)
from dpverify.statistical.stats import normal_quantile

__all__ = ["audit", "search_phase", "SearchPhase", "DEFAULT_SAMPLES", "power_ranks", "MASS_FAMILIES", "SWEEP_FRACTION"]

DEFAULT_SAMPLES = 1_000_000
DEFAULT_SEARCH_CAP = 200_000
NAN_POLICIES = ("raise", "outcome")


def _count_events(mechanism: Mechanism, pairs: Sequence[Pair], events: dict[int, tuple[Any, ...]],
                  sizes: dict[int, tuple[int, int]], batch_size: int, entropy: int, nan_policy: str, pool: WorkerPool,
                  expected: Signature | None) -> tuple[dict[tuple[int, int], Any], BatchTiming]:
    """Phase 2: ``sizes[i]`` fresh outputs on the two inputs of each pair ``i`` in ``events``; the counts of their
    events, and the batches' timing."""
    tasks = [t for i in sorted(events)
             for t in pair_tasks(mechanism, pairs[i], i, sizes[i], batch_size, entropy, nan_policy, TEST_PHASE,
                                  events[i])]
    results = pool.run(tasks, fn=run_batch)
    grouped, _ = grouped_batches(tasks, results, expected)
    counts = {k: np.sum(v, axis=0) for k, v in grouped.items()}
    for i in events:                      # an input drawn 0 times counts nothing
        for side in (0, 1):
            counts.setdefault((i, side), np.zeros(len(events[i]), dtype=np.int64))
    return counts, BatchTiming.total(r.timing for r in results)


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
    where = f"input x0 of pair 0 ('{pair_list[0].label}')"
    probe = contract_probe(mechanism, pair_list[0].x0, entropy, where)
    probe_shape = probe.shape
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
                             vectors=probe_shape is None or bool(probe_shape), claim=epsilon)
        chosen, n_candidates, kinds, signature, histograms = (found.chosen, found.n_candidates, set(found.kinds),
                                                              found.signature, found.histograms)
        timing = timing + found.timing

        # ---- phase 2: fresh samples -----------------------------------------------------------
        tests: list[EventTest] = []
        if chosen:
            level = alpha / (2 * len(chosen))           # per probability; 2 * level per finalist
            chosen = expand(chosen)                     # each finalist's deeper events share its level
            by_pair: dict[int, list[Candidate]] = defaultdict(list)
            for i, c in chosen:
                by_pair[i].append(c)
            events = {i: tuple(c.event for c in cs) for i, cs in by_pair.items()}
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
    probe.check_unchanged(mechanism, pair_list[0].x0, where)   # state kept through the sampling done here
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
