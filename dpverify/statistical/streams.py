"""Where the anytime audit's streams live: each pair's outputs so far, kept in the process that draws them.

:func:`dpverify.statistical.anytime.audit_anytime` draws one stream of outputs per input of every pair, batch after
batch.  After each batch its bets need four counts per finalist (rows where the finalist's event holds under both
inputs, only the numerator's, only the denominator's, neither: :func:`joint_counts`); at each checkpoint the event
search needs every pair's last ``cap`` outputs per input.  Both are computed where the outputs are:

* :class:`PairStream` -- one pair's kept batches (the last ``cap`` outputs per input);
* :class:`StreamLane` -- the streams of some pairs with the mechanism and their inputs: it draws a batch of each
  (seeded by the batch's coordinates, as every batch of an audit; an input an earlier pair has too by that pair's,
  :mod:`dpverify.execution.sources`, and drawn once for all of the lane's pairs that have it), checks it, keeps it
  and counts the finalists' events on it, and runs the checkpoint's search on its streams;
* :class:`Streams` -- the audit's side.  It starts with one lane in this process; once that has taken
  :data:`LANE_SECONDS` (or, within a checkpoint's search, once the pairs left are projected to take
  :data:`MOVE_SEARCH_SECONDS` here) and there are several pairs and workers, it sends each worker process of the
  pool its share of the lanes' state once (pair ``i`` to lane ``i mod workers``,
  :meth:`dpverify.execution.sampling.WorkerPool.lanes`), and from then on only batch numbers and events go out and
  counts and candidates come back.  (Sending every batch's outputs to this process, as a plain process pool returns
  them, cost about what the second core saved: the sequential verdicts of the catalogue ran no faster on two workers
  than on one.)  With a remote executor (a Dask cluster) the batches are drawn there and the lane stays here.

Results do not depend on where a lane runs: each batch is seeded by its coordinates, each pair's stream is the same
sequence of batches wherever it is kept, and results are read in pair order (errors too: the first pair's first).
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from dpverify.errors import DPVerifyError, MechanismError
from dpverify.execution.sampling import (NO_TIME, TEST_PHASE, BatchOutput, BatchTiming, Signature, Task, WorkerPool,
                                         run_batch, single_threaded_libraries)
from dpverify.execution.sources import Source, stream_sources
from dpverify.neighbours import Pair
from dpverify.statistical.anchors import input_anchors
from dpverify.statistical.contract import check_batches_distinct
from dpverify.statistical.search import Candidate, SearchSettings

__all__ = ["PairStream", "StreamLane", "Streams", "Drawn", "Found", "StreamSearch", "joint_counts", "search_stream",
           "shared_batch", "reused", "LANE_SECONDS", "MOVE_SEARCH_SECONDS"]

#: seconds of draws and searches in this process after which an audit with several pairs and workers moves its
#: lanes to the worker processes (starting them and sending the streams costs a few hundredths of a second)
LANE_SECONDS = 0.05
#: projected seconds of the searches a checkpoint has left after which the lanes move while it runs (Streams.search)
MOVE_SEARCH_SECONDS = 0.1
#: spawn key of the generators of the checkpoints' searches (the batches use ``TEST_PHASE``)
STREAM_SEARCH = 6

_TOKENS = itertools.count()


def joint_counts(event: Any, direction: int, out0: NDArray, out1: NDArray) -> tuple[int, int, int, int]:
    """``(n11, n10, n01, n00)`` of a finalist on one batch: rows (the ``j``-th output under each input paired) where
    its event holds under both inputs, the numerator's only, the denominator's only, neither (``direction`` 0: the
    numerator is ``x0``)."""
    num, den = (out0, out1) if direction == 0 else (out1, out0)
    with single_threaded_libraries():
        y = np.asarray(event.contains(num), dtype=bool)
        z = np.asarray(event.contains(den), dtype=bool)
    n11 = int(np.count_nonzero(y & z))
    n10, n01 = int(np.count_nonzero(y)) - n11, int(np.count_nonzero(z)) - n11
    return n11, n10, n01, len(y) - n11 - n10 - n01


@dataclass(frozen=True)
class StreamSearch:
    """A checkpoint's event search on one pair's stream so far (picklable: a remote executor runs it)."""

    o0: NDArray
    o1: NDArray
    pair_index: int
    checkpoint: int
    settings: SearchSettings
    entropy: int

    @property
    def n(self) -> int:
        """Outputs searched (the worker pool's measure of a task's size)."""
        return len(self.o0) + len(self.o1)


@dataclass(frozen=True)
class Found:
    """A pair's search result: its candidates, the output kind and the scoring half's size (the candidates' counts
    come from it unless they say)."""

    candidates: list[Candidate]
    kind: str
    n_score: int

    @classmethod
    def dropped(cls) -> "Found":
        """The result of a pair the audit no longer draws (:func:`dpverify.statistical.narrowing.pairs_to_drop`)."""
        return cls([], "", 0)


def search_stream(job: StreamSearch) -> Found:
    """:func:`search_events` on the job's outputs, with the pair's own generator for this checkpoint."""
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(
        job.entropy, spawn_key=(STREAM_SEARCH, job.checkpoint, job.pair_index))))
    found, _, kind = job.settings.run(job.o0, job.o1, rng)
    return Found(found, kind, len(job.o0) - len(job.o0) // 2)


class PairStream:
    """One pair's kept batches, per input, with their numbers: the last ones holding at least ``cap`` outputs
    without counting the newest (which may have been drawn ahead of the audit's stop: :meth:`outputs` leaves it out
    when asked to)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.batches: tuple[list[tuple[int, NDArray]], list[tuple[int, NDArray]]] = ([], [])
        self.held = [0, 0]          # outputs in the kept batches of each input

    def add(self, side: int, b: int, out: NDArray) -> None:
        kept = self.batches[side]
        kept.append((b, out))
        self.held[side] += len(out)
        # drop the oldest while the batches between it and the newest hold the cap
        while len(kept) > 2 and self.held[side] - len(kept[0][1]) - len(kept[-1][1]) >= self.cap:
            self.held[side] -= len(kept.pop(0)[1])

    def arrays(self, side: int, upto: int | None = None) -> list[NDArray]:
        """The kept batches of input ``side`` numbered below ``upto`` (all without it)."""
        return [a for b, a in self.batches[side] if upto is None or b < upto]

    def outputs(self, side: int, upto: int | None = None) -> NDArray:
        """The last ``cap`` outputs of input ``side`` in the batches numbered below ``upto`` (only the batches that
        hold them are copied)."""
        tail: list[NDArray] = []
        need = self.cap
        for a in reversed(self.arrays(side, upto)):
            tail.append(a)
            need -= len(a)
            if need <= 0:
                break
        return np.concatenate(tail[::-1])[-self.cap:]


@dataclass(frozen=True)
class Drawn:
    """One pair's batch as the audit reads it: each input's output ``signatures``, the batch's ``timing``, the
    finalists' :func:`joint_counts` (in the order asked), or the ``error`` that stopped it."""

    signatures: tuple[Signature, ...] = ()
    timing: BatchTiming = BatchTiming()
    counts: tuple[tuple[int, int, int, int], ...] = ()
    error: DPVerifyError | None = None


def shared_batch(task: Task, shared: dict[tuple[int, int, int, int], BatchOutput]) -> BatchOutput:
    """``run_batch(task)``, or the batch of the same source drawn before (``shared``, by seed) with no time of its
    own: an input several pairs share is drawn once per lane."""
    if task.seed_key in shared:
        return reused(shared[task.seed_key], False)
    out = shared[task.seed_key] = run_batch(task)
    return out


def reused(out: BatchOutput, first: bool) -> BatchOutput:
    """``out`` as the first pair with its source reads it, or as a later one (its draw's time counted once)."""
    return out if first else dataclasses.replace(out, timing=NO_TIME)


def signature_error(got: Signature, where: str, expected: Signature) -> MechanismError:
    """The error of outputs whose shape or dtype differs from the first batch's."""
    return MechanismError(
        f"the mechanism returned {got.describe()} on {where} but {expected.describe()} on the first batch; every "
        "input must give outputs of the same shape and dtype (pad or encode variable-length outputs)")


class StreamLane:
    """The streams of the pairs ``pairs`` (index -> pair) of one audit: draws, checks, keeps and counts their batches
    and searches them (see the module docstring)."""

    def __init__(self, mechanism: Any, pairs: dict[int, Pair], entropy: int, nan_policy: str, cap: int,
                 sources: dict[int, tuple[Source, Source]] | None = None) -> None:
        self.mechanism, self.pairs, self.entropy, self.nan_policy = mechanism, dict(pairs), entropy, nan_policy
        # the seeds of each pair's two streams (dpverify.execution.sources): a pair sharing an input with an earlier
        # one draws it with that pair's seeds, so the lane draws it once for both
        self.sources = {i: (sources or {}).get(i, ((i, 0), (i, 1))) for i in self.pairs}
        self.streams = {i: PairStream(cap) for i in self.pairs}
        # each pair's anchored thresholds (dpverify.statistical.anchors), read off its inputs once
        self.anchors = {i: input_anchors(p.x0, p.x1) for i, p in self.pairs.items()}

    def part(self, indices: Sequence[int]) -> "StreamLane":
        """A lane of the pairs ``indices`` only, with their streams so far."""
        lane = StreamLane(self.mechanism, {i: self.pairs[i] for i in indices}, self.entropy, self.nan_policy,
                          next(iter(self.streams.values())).cap if self.streams else 1,
                          {i: self.sources[i] for i in indices})
        lane.streams = {i: self.streams[i] for i in indices}
        return lane

    def release(self, indices: Sequence[int]) -> "StreamLane":
        """The pairs ``indices`` with their streams so far, as a lane of their own, no longer held here."""
        part = self.part(indices)
        for i in indices:
            for held in (self.pairs, self.sources, self.streams, self.anchors):
                del held[i]
        return part

    def adopt(self, lane: "StreamLane") -> None:
        """Hold the pairs of ``lane`` (released by another: :meth:`release`) with this lane's."""
        self.pairs.update(lane.pairs)
        self.sources.update(lane.sources)
        self.streams.update(lane.streams)
        self.anchors.update(lane.anchors)

    def tasks(self, i: int, b: int, m: int) -> list[Task]:
        """Batch ``b`` (``m`` outputs per input) of pair ``i``: a task per input."""
        p = self.pairs[i]
        return [Task(self.mechanism, x, m, self.entropy, TEST_PHASE, i, side, b, p.label, self.nan_policy,
                     source=self.sources[i][side])
                for side, x in ((0, p.x0), (1, p.x1))]

    def draw(self, b: int, m: int, bets: dict[int, list[tuple[int, Any]]], check_distinct: bool,
             expected: Signature | None, drawn: dict[int, list[BatchOutput]] | None = None,
             dropped: frozenset[int] = frozenset()) -> dict[int, Drawn]:
        """Batch ``b`` of every pair of the lane but the ``dropped`` ones (or the batches ``drawn`` elsewhere):
        kept, checked (against the ``expected`` signature, or the first output's when none is given yet; with
        ``check_distinct``, the pair's batches so far are not repeats of each other) and counted for the finalists
        ``bets[i]`` (``(direction, event)`` of pair ``i``).  A dropped pair's :class:`Drawn` is empty."""
        out: dict[int, Drawn] = {}
        shared: dict[tuple[int, int, int, int], BatchOutput] = {}     # this batch of each source drawn here
        for i in self.pairs:
            if i in dropped:
                out[i] = Drawn()
                continue
            try:
                outs = drawn[i] if drawn is not None else [shared_batch(t, shared) for t in self.tasks(i, b, m)]
                for t, o in zip(self.tasks(i, b, m), outs):
                    if expected is None:               # the first batch: its first output fixes the signature
                        expected = o.signature
                    elif o.signature != expected:
                        raise signature_error(o.signature, t.where(), expected)
                stream = self.streams[i]
                for side, o in enumerate(outs):
                    stream.add(side, b, o.value)
                if check_distinct:
                    check_batches_distinct(stream.arrays(0) + stream.arrays(1), f"pair {i} ('{self.pairs[i].label}')")
                counts = tuple(joint_counts(ev, d, outs[0].value, outs[1].value) for d, ev in bets.get(i, ()))
                out[i] = Drawn(tuple(o.signature for o in outs), BatchTiming.total(o.timing for o in outs), counts)
            except DPVerifyError as exc:
                out[i] = Drawn(error=exc)
        return out

    def jobs(self, k: int, settings: SearchSettings, skip: Sequence[int] = ()) -> dict[int, StreamSearch]:
        """Checkpoint ``k``'s search of every pair of the lane (but those in ``skip``), on its stream so far."""
        return {i: StreamSearch(s.outputs(0), s.outputs(1), i, k,
                                dataclasses.replace(settings, anchors=self.anchors[i]), self.entropy)
                for i, s in self.streams.items() if i not in skip}

    def search(self, k: int, settings: SearchSettings, skip: Sequence[int] = ()) -> dict[int, Found]:
        """Checkpoint ``k``'s search of every pair of the lane but those in ``skip`` (searched already)."""
        return {i: search_stream(j) for i, j in self.jobs(k, settings, skip).items()}

    def outputs(self, i: int, upto: int) -> tuple[NDArray, NDArray] | None:
        """Pair ``i``'s last outputs per input in the batches numbered below ``upto`` (``None`` without any)."""
        s = self.streams[i]
        return (s.outputs(0, upto), s.outputs(1, upto)) if s.arrays(0, upto) else None


#: the lanes held by this process (a worker of :meth:`WorkerPool.lanes`), by audit
_HELD: dict[str, StreamLane] = {}


def _hold(token: str, lane: StreamLane) -> None:
    _HELD[token] = lane


def _call(token: str, method: str, *args: Any) -> Any:
    return getattr(_HELD[token], method)(*args)


def _drop(token: str) -> None:
    _HELD.pop(token, None)


class Streams:
    """The audit's streams: the lanes of its pairs, here or on the pool's workers (module docstring)."""

    def __init__(self, mechanism: Any, pairs: Sequence[Pair], entropy: int, nan_policy: str, cap: int,
                 pool: WorkerPool) -> None:
        self.n_pairs = len(pairs)
        sources = self.sources = stream_sources(pairs)
        self.n_streams = len({source for two in sources for source in two})    # one per distinct input
        self.local: StreamLane | None = StreamLane(mechanism, dict(enumerate(pairs)), entropy, nan_policy, cap,
                                                   dict(enumerate(sources)))
        self.pool = pool
        self.token = f"{os.getpid()}-{next(_TOKENS)}"
        self.lanes: list[Any] = []               # worker lanes (executors) once moved
        self.where: dict[int, int] = {}           # pair -> index of the worker lane holding it
        self.spent = 0.0                          # seconds of draws and searches in this process
        self.dropped: frozenset[int] = frozenset()   # pairs no longer drawn nor searched (drop)
        self._vectors = False                     # the outputs are vectors (maybe_move: scikit-learn before a fork)

    @property
    def moved(self) -> bool:
        return bool(self.lanes)

    def _submit(self, method: str, *args: Any) -> Callable[[], list[Any]]:
        """``method(*args)`` sent to every worker lane now; the returned function waits for the results and merges
        them in pair order (:meth:`_received`)."""
        futures = [lane.submit(_call, self.token, method, *args) for lane in self.lanes]
        return lambda: self._received([f.result() for f in futures])

    def maybe_move(self, vectors: bool) -> None:
        """Send the lanes to the pool's workers if this process has spent :data:`LANE_SECONDS` on them and the pool has
        several local workers and the audit several pairs (scikit-learn, which the search of ``vectors`` uses, is
        imported once here before the workers start).  The first checkpoint's search therefore starts here unless the
        draws before it took that long: a freshly started worker costs more than a short search of a few hundred
        outputs per input gains on the second core (the gross violations that stop there: ``histogram-scale-epsilon``,
        9 pairs, 0.07 s here against 0.17 s moved first); :meth:`search` moves them while it runs when its projected
        time says otherwise."""
        self._vectors = vectors
        if self.local is not None and self.spent >= LANE_SECONDS and self._movable():
            self._move()

    def _movable(self) -> bool:
        """Whether the lanes can go to the pool's workers (several local workers and pairs, picklable lanes)."""
        pool, local = self.pool, self.local
        if local is None or self.n_pairs < 2 or pool.workers < 2 or pool.remote or pool.note is not None:
            return False
        return pool.lanes_started or pool.picklable(local.part([0]))

    def _move(self) -> None:
        pool, local = self.pool, self.local
        assert local is not None
        if self._vectors and not pool.lanes_started:
            import sklearn.linear_model  # noqa: F401  (before the workers fork)
        lanes = pool.lanes()
        width = min(len(lanes), self.n_pairs)
        sent = [lanes[w].submit(_hold, self.token, local.part(range(w, self.n_pairs, width))) for w in range(width)]
        for f in sent:
            f.result()
        self.lanes, self.local = lanes[:width], None
        self.where = {i: i % width for i in range(self.n_pairs)}

    def send(self, b: int, m: int, bets: dict[int, list[tuple[int, Any]]], check_distinct: bool,
             expected: Signature | None) -> Callable[[], list[Drawn]]:
        """Batch ``b`` of every pair not :attr:`dropped` (:meth:`StreamLane.draw`): sent to the worker lanes now, or
        drawn here when the returned function is called; that function gives the pairs' :class:`Drawn` in pair order
        and raises the first pair's error.  Batches are drawn in the order sent (a lane runs its calls in order)."""
        if self.local is None:
            return self._submit("draw", b, m, bets, check_distinct, expected, None, self.dropped)
        return lambda: self._draw_here(b, m, bets, check_distinct, expected)

    def _draw_here(self, b: int, m: int, bets: dict[int, list[tuple[int, Any]]], check_distinct: bool,
                   expected: Signature | None) -> list[Drawn]:
        t0 = time.perf_counter()
        drawn = None
        if self.pool.remote:
            tasks = [t for i in range(self.n_pairs) if i not in self.dropped for t in self.local.tasks(i, b, m)]
            unique: dict[tuple[int, int, int, int], Task] = {}     # each source's batch once (its first pair's task)
            for t in tasks:
                unique.setdefault(t.seed_key, t)
            got = dict(zip(unique, self.pool.run(list(unique.values()), fn=run_batch)))
            outs = iter(reused(got[t.seed_key], unique[t.seed_key] is t) for t in tasks)
            drawn = {i: [next(outs), next(outs)] for i in range(self.n_pairs) if i not in self.dropped}
        got = self._received([self.local.draw(b, m, bets, check_distinct, expected, drawn, self.dropped)])
        self.spent += time.perf_counter() - t0
        return got

    def _received(self, parts: list[dict[int, Any]]) -> list[Any]:
        merged: dict[int, Any] = {}
        for part in parts:
            merged.update(part)
        got = [merged[i] for i in range(self.n_pairs)]
        for d in got:
            if isinstance(d, Drawn) and d.error is not None:
                raise d.error.with_traceback(None)
        return got

    @property
    def live_streams(self) -> int:
        """The distinct inputs' streams of the pairs not :attr:`dropped` (a batch draws ``m`` outputs of each)."""
        return len({source for i, two in enumerate(self.sources) if i not in self.dropped for source in two})

    def drop(self, pairs: Sequence[int]) -> None:
        """Stop drawing and searching the streams of ``pairs`` (their kept outputs stay for :meth:`outputs`); on
        worker lanes, the pairs left are then spread evenly over them (:meth:`_balance`)."""
        self.dropped = self.dropped | frozenset(pairs)
        if self.lanes:
            self._balance()

    def _balance(self) -> None:
        """Move pairs still drawn from the worker lanes holding more than their share to those holding less (the
        highest indices first), so that the draws keep both cores busy; results do not depend on where a pair is."""
        live = [i for i in range(self.n_pairs) if i not in self.dropped]
        width = len(self.lanes)
        held = {w: [i for i in live if self.where[i] == w] for w in range(width)}
        fuller = sorted(range(width), key=lambda w: (-len(held[w]), w))
        share = {w: len(live) // width + (rank < len(live) % width) for rank, w in enumerate(fuller)}
        order = sorted(range(width), key=lambda w: (len(held[w]) - share[w], w))  # most wanting first
        spare = [i for w in range(width) for i in held[w][share[w]:]][::-1]
        moves: dict[int, list[int]] = {}                                         # pair -> [from, to]
        for w in order:
            while len(held[w]) < share[w] and spare:
                i = spare.pop()
                moves[i] = [self.where[i], w]
                held[w].append(i)
        for source in {a for a, _ in moves.values()}:
            ids = tuple(i for i, (a, _) in moves.items() if a == source)
            part = self.lanes[source].submit(_call, self.token, "release", ids).result()
            for target in {moves[i][1] for i in ids}:
                mine = tuple(i for i in ids if moves[i][1] == target)
                self.lanes[target].submit(_call, self.token, "adopt", part.part(mine)).result()
                self.where.update({i: target for i in mine})

    def search(self, k: int, settings: SearchSettings) -> list[Found]:
        """Checkpoint ``k``'s search of every pair not :attr:`dropped` on its stream so far, in pair order (a dropped
        pair's :meth:`Found.dropped`).  Searched here, pair by pair, until the lanes move: when the pairs left would
        take :data:`MOVE_SEARCH_SECONDS` here at the pace of those done (and the lanes can move), the workers search
        the others."""
        done: dict[int, Found] = {i: Found.dropped() for i in self.dropped}
        if self.local is None:
            return self._received([done] + [f.result() for f in [
                lane.submit(_call, self.token, "search", k, settings, tuple(done)) for lane in self.lanes]])
        t0 = time.perf_counter()
        jobs = self.local.jobs(k, settings, tuple(done))
        if self.pool.remote and len(jobs) > 1:
            found = dict(zip(jobs, self.pool.run(list(jobs.values()), fn=search_stream)))
            self.spent += time.perf_counter() - t0
            return self._received([done, found])
        searched = 0
        for i in jobs:
            done[i] = search_stream(jobs[i])
            searched += 1
            elapsed = time.perf_counter() - t0
            left = len(jobs) - searched
            if left and elapsed / searched * left >= MOVE_SEARCH_SECONDS and self._movable():
                self.spent += elapsed
                self._move()
                futures = [lane.submit(_call, self.token, "search", k, settings, tuple(done)) for lane in self.lanes]
                return self._received([done] + [f.result() for f in futures])
        self.spent += time.perf_counter() - t0
        return self._received([done])

    def outputs(self, i: int, upto: int) -> tuple[NDArray, NDArray] | None:
        """Pair ``i``'s last outputs per input in the batches numbered below ``upto``."""
        if self.local is not None:
            return self.local.outputs(i, upto)
        return self.lanes[self.where[i]].submit(_call, self.token, "outputs", i, upto).result()

    def close(self) -> None:
        """Drop the lanes' state in the workers (the pool itself stays)."""
        for lane in self.lanes:
            try:
                lane.submit(_drop, self.token).result()
            except Exception:            # a broken worker: its state went with it
                pass
        self.lanes = []
