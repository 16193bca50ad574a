"""Phase 1 of the audit (:func:`dpverify.audit`): the search samples of every pair, the event search on each
(:func:`dpverify.statistical.search.search_events`) and the finalists chosen among every pair's candidates (phase 2,
the fresh samples that test them, is :mod:`dpverify.statistical.auditor`'s)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace
from typing import Any, Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from dpverify.errors import MechanismError
from dpverify.execution.sampling import (SEARCH_PHASE, SWEEP_PHASE, BatchOutput, BatchTiming, NO_TIME,
                                         Mechanism, Signature, Task, WorkerPool, batch_sizes, run_batch)
from dpverify.neighbours import Pair
from dpverify.statistical.anchors import input_anchors
from dpverify.statistical.atoms import row_hashes
from dpverify.statistical.contract import check_batches_distinct
from dpverify.statistical.privacy_loss import loss_histogram
from dpverify.statistical.candidates import MASS_FAMILIES
from dpverify.statistical.search import Candidate, EventFamily, SearchSettings, atom_candidates, rank_candidates
from dpverify.statistical.stats import epsilon_lower_bound, wilson_lower, wilson_upper

__all__ = ["search_phase", "SearchPhase", "power_ranks", "pair_tasks", "grouped_batches", "SWEEP_FRACTION",
           "MASS_FAMILIES"]

SWEEP_FRACTION = 10
#: a point mass is rare, and may take the finalist slot reserved for one, when seen in at most this share of the
#: scoring half (both inputs' counts together)
RARE_MASS_SHARE = 0.01


def grouped_batches(tasks: Sequence[Task], results: Sequence[BatchOutput],
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
    grouped, signature = grouped_batches(job.tasks, results[:len(job.tasks)], job.expected)
    check_batches_distinct([v for side in (0, 1) for v in grouped[(job.pair_index, side)]],
                           f"pair {job.pair_index} ('{job.tasks[0].pair_label}')")
    o0, o1 = (np.concatenate(grouped[(job.pair_index, side)]) for side in (0, 1))
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(job.entropy, spawn_key=(2, job.pair_index))))
    found, scored, kind = job.settings.run(o0, o1, rng)
    if job.sweep:
        swept, _ = grouped_batches(job.sweep, results[len(job.tasks):], signature)
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


def pair_tasks(mechanism: Mechanism, pair: Pair, i: int, n: int | tuple[int, int], batch_size: int, entropy: int,
                nan_policy: str, phase: int, events: tuple[Any, ...] | None = None) -> tuple[Task, ...]:
    """The batches of ``n`` outputs per input of pair ``i`` in ``phase`` (``(n0, n1)``: that many on each input;
    with ``events``: count them; in the sweep phase: hash the rows)."""
    n0, n1 = n if isinstance(n, tuple) else (n, n)
    return tuple(Task(mechanism, x, m, entropy, phase, i, side, b, pair.label, nan_policy, events,
                      phase == SWEEP_PHASE)
                 for side, x, k in ((0, pair.x0, n0), (1, pair.x1, n1)) for b, m in enumerate(batch_sizes(k, batch_size))
                 if m > 0)


def _check_signatures(found: Sequence[_PairFound], pair_list: Sequence[Pair]) -> None:
    """Every pair's outputs have pair 0's signature (trailing shape, dtype), as :func:`grouped_batches` checks within
    one pair: the same error when they do not."""
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
                 target: float | None = None, vectors: bool = True, claim: float | None = None) -> SearchPhase:
    """Phase 1 of :func:`audit`: sample ``search_samples`` outputs per input of every pair (and the atom sweep, a
    tenth of ``n_test`` when that is larger), search the events and choose at most ``finalists`` of them, ranked by
    the bound they are projected to reach on ``n_test`` fresh samples at the normal quantile ``z``.  The samples are
    seeded from ``entropy`` (phases ``SEARCH_PHASE`` and ``SWEEP_PHASE``): the same finalists on any number of
    workers.  ``vectors``: the outputs may be vectors (the contract probe's shape says; their search fits a logistic
    regression, so scikit-learn is imported here before the workers fork -- never for scalar outputs).

    ``claim`` (the audit passes its claimed ε): when no finalist is projected above it and some candidate is, the
    candidate likeliest to certify a bound above it (:func:`power_ranks` at ``claim``) is made a finalist, in place
    of the last of them when they are ``finalists``, never with one finalist (:func:`_with_claim_finalist`).

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
        return _PairSearch(pair_tasks(mechanism, pair_list[i], i, search_samples, batch_size, entropy, nan_policy,
                                      SEARCH_PHASE), i, expected,
                           replace(settings, anchors=input_anchors(pair_list[i].x0, pair_list[i].x1)), entropy,
                           pair_tasks(mechanism, pair_list[i], i, n_sweep, batch_size, entropy, nan_policy,
                                      SWEEP_PHASE) if n_sweep else ())

    side_by_side = len(pair_list) > 1 and (pool.workers > 1 or pool.remote)
    if side_by_side and vectors and not pool.started:
        # the search of vector outputs fits a logistic regression; import scikit-learn once here, before
        # the pool forks, rather than once in every worker (about 1 s each, per audit)
        import sklearn.linear_model  # noqa: F401
    if side_by_side:
        # every pair's search at once, pair 0's in this process (sampled here too), the others on the workers (those
        # no worker has started when pair 0 is done are taken back here: WorkerPool.run_alongside);
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
    if target is None and len(ranks) and not ranks[order[0]] > 0:
        # no candidate is projected to certify anything after the optimism correction: the one test goes to the
        # candidate likeliest to give a positive bound (power_ranks at target 0), not to the least negative rank,
        # mostly an event almost certain under both inputs, which certifies nothing (a rare item seen 10 / 1
        # times in a top-k's outputs, ranked -0.13, lost to the union of every output at -0.00)
        order = np.argsort(-power_ranks([c for _, c in candidates], n_scores, samples, z, delta, 0.0), kind="stable")
    # one finalist is reserved for the best point-mass candidate whose own (uncorrected) scoring-half score is
    # positive: a rare atom seen a few times and never under the neighbour is structure, not luck, but the
    # optimism correction sized for many candidates would push it below every tail event
    # (with a target: whose score exceeds the target -- an atom projected below the claim cannot certify it)
    # Only a *rare* point mass (seen in at most RARE_MASS_SHARE of its scoring half under both inputs together)
    # takes the reserved slot: a large mass -- a clipped feature's atom at its clip bound, a quarter of the
    # outputs -- is ranked well without it and would otherwise take the slot from the rare leak it exists for
    floor = 0.0 if target is None else target
    # and of those the one of largest uncorrected score: the correction that the slot bypasses would, among the
    # rare masses, again put a leak seen 8 / 0 times below a clipped sum's value seen 37 / 6 times
    mass = [r for r in order if candidates[r][1].family in MASS_FAMILIES and candidates[r][1].score > floor
            and candidates[r][1].count_num + candidates[r][1].count_den <= RARE_MASS_SHARE * n_scores[r]]
    # the output's own point masses first: a feature's self-made atom (a clipped sum's saturated corner, family
    # self-atom) mixes the continuous outputs' rare corner with any leak there, and is a tail event of that feature
    own = [r for r in mass if candidates[r][1].family != "self-atom"]
    mass = own or mass
    if mass and finalists > 1:
        best = max(mass, key=lambda r: candidates[r][1].score)
        order = np.r_[[best], [r for r in order if r != best]].astype(np.intp)
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

    if claim is not None and target is None and chosen:
        chosen = _with_claim_finalist(chosen, candidates, n_scores, samples, z, delta, claim, finalists)
    assert signature is not None
    return SearchPhase(chosen, n_candidates, tuple(sorted(kinds)), signature, histograms, timing)


def _with_claim_finalist(chosen: list[tuple[int, Candidate]], candidates: list[tuple[int, Candidate]],
                         n_scores: NDArray, n_test: int, z: float, delta: float, claim: float,
                         finalists: int) -> list[tuple[int, Candidate]]:
    """``chosen`` with the candidate likeliest to exceed ``claim`` (:func:`power_ranks`) among the finalists.

    The finalists are ranked by the bound they are projected to reach, which is what a pass's tightness needs; a
    violation needs a bound above the claim, and the two rankings part where the largest projected bound lies just
    below the claim on many counts and an event of larger ratio on fewer counts is the only one that can exceed it:
    a rare band of an iterate's state whose score's tail holds the loss.  When no finalist is projected above the
    claim (power rank below 0) and that candidate is (above 0: its bound at its scoring-half frequencies exceeds
    the claim), it takes the last finalist's place (or a free one), never that of the only finalist: ``power_ranks``
    has no correction for choosing among many candidates, so where the claim is at or above the true ε the
    candidate it picks is mostly a rare event projected above the claim by chance (with one finalist, as
    ``benchmarks/bench_dpsniper.py`` audits, it took the best event's place and left a Laplace mechanism with no
    bound).  The search sample alone decides, and the test's Bonferroni correction covers the finalists whichever
    they are."""
    if finalists == 1:
        return chosen          # never in place of the only finalist: the best-ranked event keeps its test
    power = power_ranks([c for _, c in candidates], n_scores, n_test, z, delta, claim)
    best = int(np.argmax(power))
    index = {id(c): r for r, (_, c) in enumerate(candidates)}
    held = [index[id(c)] for _, c in chosen]        # the finalists' places in ``candidates``
    if best in held or max(power[held]) >= 0.0 or not power[best] > 0.0:
        return chosen                               # a finalist is projected above the claim already, or none is
    kept = chosen if len(chosen) < finalists else chosen[:-1]
    return [*kept, candidates[best]]


