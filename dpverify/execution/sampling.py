"""Batched, seeded sampling of a mechanism, on a process pool.

Every batch of outputs gets its own ``numpy.random.SeedSequence`` built from the audit's root entropy
and the batch's coordinates ``(phase, pair, side, batch)``; batches have a fixed size that does not
depend on the number of workers.  A given seed therefore produces the same outputs, hence the same
report, on one worker or many (docs/architecture.md, "Contracts the checks rely on").

The mechanism contract is enforced here: ``mechanism(x, n, rng)`` must return an array whose first
axis has length ``n``, of a numeric dtype, with the same trailing shape and dtype on every call.

Every batch is timed: :func:`run_batch` returns its outputs with a :class:`BatchTiming` -- the batch's wall time
and, for a mechanism that reports it through ``pop_timing()`` (a per-call library adapter,
:class:`dpverify.libraries.percall.PerCall`), the library calls it made and the seconds spent inside them.  The
timings travel back with the outputs from worker processes and Dask workers; they never enter a verdict.

Where the batches run: a :class:`WorkerPool` uses a local process pool, unless it was created while a
:class:`RemoteExecutor` was active (:func:`dpverify.execution.distributed.use_scheduler` activates one that sends the
batches to a Dask cluster).  Either way results come back in task order, so the executor never changes a
result.
"""

from __future__ import annotations

import math
import os
import pickle
import time
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Hashable, Iterable, Iterator, Protocol, Sequence

import numpy as np
from numpy.typing import NDArray

from dpverify.errors import DPVerifyError, MechanismError, mechanism_failure
from dpverify.execution.lanes import Lane
from dpverify.execution.worker_threads import at_threads, hold_threads, start_worker, worker_threads

__all__ = [
    "Mechanism", "Signature", "Task", "BatchTiming", "BatchOutput", "batch_sizes", "run_batch", "run_task",
    "single_threaded_libraries", "resolve_workers", "RemoteExecutor", "remote_executor", "WorkerPool",
    "NO_TIME", "SEARCH_PHASE", "TEST_PHASE", "SWEEP_PHASE", "INLINE_BELOW", "INLINE_SECONDS", "ONE_BY_ONE_SECONDS",
]

Mechanism = Callable[[Any, int, np.random.Generator], Any]

SEARCH_PHASE = 0
TEST_PHASE = 1
SWEEP_PHASE = 4   # (2: the event search's own generators, 3: the contract probe)


@dataclass(frozen=True)
class Signature:
    """Trailing shape and dtype of a mechanism's outputs."""

    shape: tuple[int, ...]
    dtype: str

    def describe(self) -> str:
        return f"rows of shape {self.shape} and dtype {self.dtype}"


@dataclass(frozen=True)
class Task:
    """One batch: ``n`` outputs of ``mechanism`` on the ``side`` input of pair ``pair_index``."""

    mechanism: Mechanism
    x: Any
    n: int
    entropy: int
    phase: int
    pair_index: int
    side: int
    batch: int
    pair_label: str
    nan_policy: str
    events: tuple[Any, ...] | None = None  # test phase: count these events instead of returning outputs
    hashes: bool = False                   # atom sweep: return one 64-bit hash per output row instead
    #: ``(pair index, side)`` whose seeds this batch uses when not its own: the first pair with an equal input
    #: (:func:`dpverify.execution.sources.stream_sources`), so that pairs sharing an input share its outputs
    source: tuple[int, int] | None = None

    @property
    def seed_key(self) -> tuple[int, int, int, int]:
        """The spawn key of this batch's generator: ``(phase, pair, side, batch)`` of its source."""
        i, side = self.source if self.source is not None else (self.pair_index, self.side)
        return self.phase, i, side, self.batch

    def where(self) -> str:
        return f"input x{self.side} of pair {self.pair_index} ('{self.pair_label}')"


@dataclass(frozen=True)
class BatchTiming:
    """Where the time of one or more batches went (``time.perf_counter`` seconds).

    ``seconds``: wall time of the batches in :func:`run_batch` (the mechanism's call, the output checks, the event
    counting or hashing), measured for every mechanism; ``calls`` and ``library_seconds``: the library releases
    and the time inside them, reported by a mechanism with ``pop_timing()`` (zero otherwise).  Add timings with
    ``+``; :data:`NO_TIME` is the zero.
    """

    seconds: float = 0.0
    calls: int = 0
    library_seconds: float = 0.0

    def __add__(self, other: "BatchTiming") -> "BatchTiming":
        return BatchTiming(self.seconds + other.seconds, self.calls + other.calls,
                           self.library_seconds + other.library_seconds)

    @staticmethod
    def total(timings: Iterable["BatchTiming"]) -> "BatchTiming":
        """The sum of ``timings`` (:data:`NO_TIME` for none)."""
        out = NO_TIME
        for t in timings:
            out = out + t
        return out


#: the zero timing
NO_TIME = BatchTiming()


@dataclass(frozen=True)
class BatchOutput:
    """What :func:`run_batch` returns for one batch: ``value`` (the outputs, the event counts or the row hashes),
    the outputs' ``signature`` and the batch's ``timing``."""

    value: Any
    signature: Signature
    timing: BatchTiming


def batch_sizes(total: int, batch_size: int) -> list[int]:
    """Split ``total`` into batches of ``batch_size`` (the last one smaller)."""
    full, rest = divmod(total, batch_size)
    return [batch_size] * full + ([rest] if rest else [])


def _check_output(task: Task, raw: Any) -> tuple[NDArray, Signature]:
    where = task.where()
    try:
        out = np.asarray(raw)
    except Exception as exc:  # ragged lists and the like
        raise MechanismError(
            f"the output of the mechanism on {where} is not an array ({exc}); the contract is one row of fixed "
            "length per sample. Return rows of one length: a set or list of items as a 0/1 indicator vector over "
            "the items, or padded to its largest length with a value no item takes (e.g. -1)"
        ) from None
    if out.ndim == 0 or out.shape[0] != task.n:
        got = "a scalar" if out.ndim == 0 else f"{out.shape[0]} rows"
        raise MechanismError(
            f"the mechanism returned {got} for n={task.n} on {where}; the contract is "
            "mechanism(x, n, rng) -> array whose first axis has length n (one row per sample)"
        )
    if out.dtype.kind not in "biuf":
        raise MechanismError(
            f"the mechanism returned dtype {out.dtype} on {where}; outputs must be numeric "
            "(encode categorical outputs as integer codes, the same code for a value on every call: its index in a "
            "fixed list of the possible values; records as rows of numbers)"
        )
    if out.dtype.kind == "b":
        out = out.astype(np.int8)
    if out.ndim > 2:
        out = out.reshape(task.n, -1)
    if out.dtype.kind == "f" and task.nan_policy == "raise":
        nan = np.isnan(out)
        if nan.any():
            frac = nan.reshape(task.n, -1).any(axis=1).mean()
            raise MechanismError(
                f"the mechanism returned NaN in {frac:.2%} of the outputs on {where}. NaN outputs "
                "cannot be compared by value; if a NaN output is a real release of the mechanism (it "
                "then distinguishes inputs), audit with nan_policy='outcome'"
            )
    return out, Signature(tuple(out.shape[1:]), str(out.dtype))


@contextmanager
def single_threaded_libraries(scope: str = "numpy") -> Iterator[None]:
    """BLAS and OpenMP on one thread inside the block (threadpoolctl).  The audit's own computations -- the
    logistic regression of the event search, the linear score of its events -- are on tall, thin matrices
    (n x d, d <= 32), where the libraries' threads cost more than they give, and the audit already runs one
    process per core (with two workers, their threads made the catalogue's SVT verdicts about twice as slow).
    The mechanism's own calls are not limited.

    ``scope`` names the set of libraries to limit, scanned once per process on first use (the scan takes
    milliseconds): ``"numpy"`` (numpy's and scipy's BLAS, loaded once dpverify is), ``"sklearn"`` (also
    scikit-learn's OpenMP: use it after importing scikit-learn)."""
    controller = _controllers.get(scope)
    if controller is None:
        from threadpoolctl import ThreadpoolController

        controller = _controllers[scope] = ThreadpoolController()
    if at_threads(controller.info(), 1):
        # on one thread already (a worker, or a process that set the variables): set nothing, which starts no thread
        yield
        return
    with controller.limit(limits=1):
        yield


#: threadpoolctl controllers of this process, by scope (see :func:`single_threaded_libraries`)
_controllers: dict[str, Any] = {}


def _pop_timing(mechanism: Any) -> tuple[int, float]:
    pop = getattr(mechanism, "pop_timing", None)
    if pop is None:
        return 0, 0.0
    calls, seconds = pop()
    return int(calls), float(seconds)


def run_batch(task: Task) -> BatchOutput:
    """Worker entry point: draw one batch; return it (search), the event counts (test) or the row hashes (sweep),
    with the batch's :class:`BatchTiming`."""
    t0 = time.perf_counter()
    _pop_timing(task.mechanism)   # drop what earlier calls in this process left (the contract probe)
    value, sig = _sample(task)
    calls, library = _pop_timing(task.mechanism)
    return BatchOutput(value, sig, BatchTiming(time.perf_counter() - t0, calls, library))


def run_task(task: Task) -> tuple[Any, Signature]:
    """:func:`run_batch` without the timing: ``(value, signature)``."""
    out = run_batch(task)
    return out.value, out.signature


def _sample(task: Task) -> tuple[Any, Signature]:
    seq = np.random.SeedSequence(task.entropy, spawn_key=task.seed_key)
    rng = np.random.Generator(np.random.PCG64(seq))
    try:
        raw = task.mechanism(task.x, task.n, rng)
    except MechanismError:
        raise
    except Exception as exc:
        raise mechanism_failure(f"the mechanism raised {type(exc).__name__} on {task.where()}: {exc}",
                                cause=exc) from None
    try:
        out, sig = _check_output(task, raw)
    except MechanismError as exc:  # the contract is broken: say where the mechanism is defined
        raise mechanism_failure(str(exc), mechanism=task.mechanism) from None
    if task.hashes:
        from dpverify.statistical.atoms import row_hashes

        return row_hashes(out), sig
    if task.events is None:
        return out, sig
    from dpverify.statistical.events import count_events

    with single_threaded_libraries():
        counts = count_events(task.events, out)
    return counts, sig


def resolve_workers(workers: int | None) -> int:
    if workers is None:
        return max(1, os.cpu_count() or 1)
    return int(workers)


class RemoteExecutor(Protocol):
    """Somewhere else to run a :class:`WorkerPool`'s tasks (see :mod:`dpverify.execution.distributed`)."""

    def slots(self) -> int:
        """How many tasks it runs at once (reported as the workers used)."""
        ...

    def unsendable(self, task: Any) -> str | None:
        """Why ``task`` cannot be sent (the pool then samples in this process and notes why), or ``None``."""
        ...

    def run(self, tasks: Sequence[Any], fn: Callable[[Any], Any]) -> list[Any]:
        """``[fn(t) for t in tasks]``, computed elsewhere, in task order."""
        ...


_remote: RemoteExecutor | None = None


@contextmanager
def remote_executor(executor: RemoteExecutor) -> Iterator[RemoteExecutor]:
    """Make every :class:`WorkerPool` created inside the block run its tasks on ``executor``.

    Process-wide while the block is open; blocks nest (the innermost wins).  Users call
    :func:`dpverify.execution.distributed.use_scheduler`, which builds the executor.
    """
    global _remote
    previous, _remote = _remote, executor
    try:
        yield executor
    finally:
        _remote = previous


#: A pool not yet started runs a call here when it expects the call to take less than ``INLINE_SECONDS`` (forking
#: the workers and sending them the tasks costs a sizeable part of a second): from the outputs per second of the same function
#: measured on earlier calls run here, or, on a first call, when the tasks draw fewer than ``INLINE_BELOW`` outputs
#: in all (a small audit, the first stages of :func:`dpverify.statistical.sequential.audit_sequential`).  A first call
#: of more runs its first task here to measure the speed, then decides for the others.  Where a task runs never
#: changes its result.
INLINE_BELOW = 100_000
INLINE_SECONDS = 0.25

#: Tasks expected to take at least this long each (from the outputs per second of their function, measured or hinted
#: with :meth:`WorkerPool.hint_rate`) go to the workers one at a time rather than in chunks: sending a task costs about a
#: millisecond, while a chunk of slow tasks (a per-call library's batch takes seconds) can leave one worker idle
#: while another finishes it.
ONE_BY_ONE_SECONDS = 0.05


def _speed_key(fn: Callable[[Any], Any], task: Any, mechanism: Any = None) -> Hashable:
    """What a measured speed belongs to: the task function and the mechanism of the task (a :class:`Task`'s, or the
    first of the tasks a task carries, e.g. one pair's search), so that a pool shared by the audits of several
    mechanisms learns each one's speed rather than applying the last one's."""
    if mechanism is None:
        mechanism = getattr(task, "mechanism", None)
    if mechanism is None:
        inner = getattr(task, "tasks", None)
        mechanism = getattr(inner[0], "mechanism", None) if inner else None
    try:
        hash(mechanism)
    except Exception:               # unhashable (e.g. a dataclass with an array field): the object itself
        mechanism = id(mechanism)
    return fn, mechanism


def _outputs(tasks: Sequence[Any]) -> float:
    """Outputs the tasks draw in all (their ``n``), or infinity when some task does not say."""
    total = 0
    for t in tasks:
        n = getattr(t, "n", None)
        if not isinstance(n, int):
            return math.inf
        total += n
    return total


def _no_op(_: Any) -> None:
    """A task that does nothing (:meth:`WorkerPool.start`)."""


class WorkerPool:
    """A process pool created on first use and reused for every batch of an audit.

    Falls back to the calling process (and says so in ``note``) when the tasks cannot be pickled,
    e.g. a lambda or a closure as the mechanism.  Created inside :func:`remote_executor` (i.e. inside
    :func:`dpverify.execution.distributed.use_scheduler`), it sends every task to that executor instead.
    """

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.used = 1
        self.note: str | None = None
        self._pool: ProcessPoolExecutor | None = None
        self._remote = _remote
        self._remote_checked = False
        self._rates: dict[Any, float] = {}   # outputs per second of each fn and mechanism run here (INLINE_SECONDS)
        self._lanes: list[Lane] = []
        self._held: Any | None = None     # this process's library threads held at the workers' share (_executor)
        self._holding = False

    def hint_rate(self, fn: Callable[[Any], Any], outputs_per_second: float, mechanism: Any = None) -> None:
        """Expect ``fn`` to draw about ``outputs_per_second`` on ``mechanism``'s tasks (e.g. measured on the contract
        probe of a per-call library, thousands of times slower per output than a vectorised mechanism) until a rate
        is measured here; it decides where the first call runs and how tasks are chunked, never a result."""
        key = _speed_key(fn, None, mechanism)
        if key not in self._rates and math.isfinite(outputs_per_second) and outputs_per_second > 0:
            self._rates[key] = float(outputs_per_second)

    def _executor(self, processes: int) -> ProcessPoolExecutor:
        """A process pool of ``processes`` of this pool's workers, each started by
        :func:`dpverify.execution.worker_threads.start_worker` (freed memory kept; the libraries' threads shared out
        among the ``workers``).  Until :meth:`close`, this process's libraries run the workers' share of threads too
        (:func:`dpverify.execution.worker_threads.hold_threads`): it runs alongside them, and they inherit it."""
        return ProcessPoolExecutor(max_workers=processes, initializer=start_worker, initargs=(self._hold(),))

    def _hold(self) -> int | None:
        """The libraries' threads of each worker, held at that share in this process too until :meth:`close`
        (:meth:`_executor`)."""
        threads = worker_threads(self.workers)
        if not self._holding and threads is not None:
            self._held, self._holding = hold_threads(threads), True
        return threads

    def start(self) -> None:
        """Start the worker processes now rather than on the first call that needs them (e.g. before timed work, or
        once for the audits of several mechanisms that share this pool).  Nothing happens with one worker, with a
        remote executor or once started."""
        if self._pool is None and self._remote is None and self.workers > 1:
            self._pool = self._executor(self.workers)
            list(self._pool.map(_no_op, range(self.workers)))   # fork every worker now

    def run(self, tasks: Sequence[Any], fn: Callable[[Any], Any] = run_task) -> list[Any]:
        """Run ``fn`` (default :func:`run_task`; :func:`run_batch` to get the timings too) on every task; results in task order (so they do not depend
        on the number of workers).  ``fn`` must be a module-level function for the pool to pickle it.  A dpverify
        error (a mechanism that breaks the contract or raises; its notes name the user's own frames) comes without
        the pool's frames or remote traceback, whether the task ran here or in a worker."""
        return self._stripped(self._run, tasks, fn)

    @staticmethod
    def _stripped(call: Callable[..., list[Any]], *args: Any) -> list[Any]:
        """``call(*args)``, a dpverify error without the pool's frames (its notes name the user's own)."""
        try:
            return call(*args)
        except DPVerifyError as exc:
            raise exc.with_traceback(None) from None

    def lanes(self) -> list[Lane]:
        """One :class:`dpverify.execution.lanes.Lane` per worker (a process reached through a pipe), started on the
        first call and kept until :meth:`close`: what is sent to lane ``w`` always runs in the same process, so a
        task may leave state there for the next ones (the anytime audit keeps each pair's stream where it is drawn:
        :mod:`dpverify.statistical.streams`).  Local workers only (not with a remote executor)."""
        if self._remote is not None:
            raise RuntimeError("lanes are local worker processes; this pool sends its tasks to a remote executor")
        if not self._lanes:
            self._lanes = [Lane(start_worker, (self._hold(),)) for _ in range(self.workers)]
        self.used = max(self.used, self.workers)
        return self._lanes

    @property
    def lanes_started(self) -> bool:
        """:meth:`lanes` was called (their processes run)."""
        return bool(self._lanes)

    def picklable(self, task: Any) -> bool:
        """Whether ``task`` can be sent to a worker; if not, :attr:`note` says so (the tasks then run here)."""
        return self._picklable(task)

    def _picklable(self, task: Any) -> bool:
        """Whether ``task`` can be sent to a worker; if not, :attr:`note` says so and the tasks run here."""
        try:
            pickle.dumps(task)
        except Exception as exc:
            self.note = (
                f"the mechanism or its input cannot be pickled ({type(exc).__name__}); sampled in "
                "one process -- define it at module level to use several workers"
            )
            return False
        return True

    def _run(self, tasks: Sequence[Any], fn: Callable[[Any], Any]) -> list[Any]:
        if self._remote is not None and tasks and self.note is None:
            if not self._remote_checked:
                self._remote_checked = True
                self.note = self._remote.unsendable(tasks[0])
            if self.note is None:
                self.used = max(self.used, min(self._remote.slots(), len(tasks)))
                return self._remote.run(tasks, fn)
        if self.workers <= 1 or len(tasks) <= 1 or self.note is not None:
            return [fn(t) for t in tasks]
        if self._pool is None:
            if not self._picklable(tasks[0]):
                return [fn(t) for t in tasks]
            work = _outputs(tasks)
            rate = self._rates.get(_speed_key(fn, tasks[0]))
            if rate is None and math.isfinite(work) and work >= INLINE_BELOW:
                # unknown speed: time the first task here, then decide for the others (a vectorised mechanism
                # often draws the whole budget faster than the workers start)
                first = self._timed(fn, tasks[:1])
                rest = self._run(tasks[1:], fn)
                return first + rest
            if self._small(tasks, fn):
                # starting the processes would cost more than they save: run here, and learn how fast fn is
                return self._timed(fn, tasks)
            self._pool = self._executor(self.workers)
        self.used = max(self.used, min(self.workers, len(tasks)))
        rate = self._rates.get(_speed_key(fn, tasks[0]))
        slow = rate is not None and _outputs(tasks) / len(tasks) / rate >= ONE_BY_ONE_SECONDS
        chunk = 1 if slow else max(1, math.ceil(len(tasks) / (4 * self.workers)))
        return list(self._pool.map(fn, tasks, chunksize=chunk))

    def run_alongside(self, tasks: Sequence[Any], fn: Callable[[Any], Any]) -> list[Any]:
        """Like :meth:`run`, but ``tasks[0]`` runs in this process while the workers run the others: for a few large
        tasks (the event search of each pair), so that two of them on two workers take the time of one rather than
        of two.  When this process is done with ``tasks[0]`` it takes back, last first, the tasks no worker has
        started yet (8 pair searches on 2 workers: about 3 each here and there instead of 1 and 3.5); each task runs
        once, wherever, so the results are the same.  Falls back to :meth:`run` with one worker, one task, a remote
        executor or unpicklable tasks."""
        if self._remote is not None or self.workers <= 1 or len(tasks) <= 1 or self.note is not None:
            return self.run(tasks, fn)
        if self._pool is None:
            if not self._picklable(tasks[1]):
                return self.run(tasks, fn)
            if self._small(tasks, fn):
                return self._stripped(self._timed, fn, tasks)
            self._pool = self._executor(self.workers)
        return self._stripped(self._alongside, tasks, fn)

    def _alongside(self, tasks: Sequence[Any], fn: Callable[[Any], Any]) -> list[Any]:
        self.used = max(self.used, min(self.workers, len(tasks) - 1))
        futures = [self._pool.submit(fn, t) for t in tasks[1:]]
        try:
            results: list[Any] = [fn(tasks[0])] + [None] * len(futures)
            # then take back, last first, the tasks no worker has started (those still cancellable): with more tasks
            # than workers, the workers' queue would otherwise be the whole wait (8 pairs on 2 workers: 3.5 each)
            here: set[int] = set()
            errors: dict[int, Exception] = {}
            for i in range(len(futures) - 1, -1, -1):
                if futures[i].cancel():
                    here.add(i)
                    try:
                        results[i + 1] = fn(tasks[i + 1])
                    except Exception as exc:  # raised below in task order: the first failing task's, as in one process
                        errors[i] = exc
            for i, f in enumerate(futures):
                if i in errors:
                    raise errors[i]
                if i not in here:
                    results[i + 1] = f.result()
            return results
        finally:
            for f in futures:
                f.cancel()

    def _small(self, tasks: Sequence[Any], fn: Callable[[Any], Any]) -> bool:
        """The tasks would take less than ``INLINE_SECONDS`` here (at ``fn``'s outputs per second measured or hinted;
        fewer than ``INLINE_BELOW`` outputs when it has none): starting the processes would cost more than it saves."""
        work, rate = _outputs(tasks), self._rates.get(_speed_key(fn, tasks[0]))
        return (work / rate if rate else (0.0 if work < INLINE_BELOW else math.inf)) < INLINE_SECONDS

    def _timed(self, fn: Callable[[Any], Any], tasks: Sequence[Any]) -> list[Any]:
        """``[fn(t) for t in tasks]`` here, learning ``fn``'s outputs per second from it."""
        t0 = time.perf_counter()
        results = [fn(t) for t in tasks]
        elapsed = time.perf_counter() - t0
        work = _outputs(tasks)
        if elapsed > 0 and math.isfinite(work) and work > 0:
            self._rates[_speed_key(fn, tasks[0])] = work / elapsed
        return results

    @property
    def started(self) -> bool:
        """Worker processes are running (created by the first :meth:`run` that needed them; :meth:`lanes` apart)."""
        return self._pool is not None

    @property
    def remote(self) -> bool:
        """Tasks go to a remote executor (a Dask cluster)."""
        return self._remote is not None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None
        for lane in self._lanes:
            lane.shutdown(cancel_futures=True)
        self._lanes = []
        if self._held is not None:
            self._held.restore_original_limits()
        self._held, self._holding = None, False

    def __enter__(self) -> "WorkerPool":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
