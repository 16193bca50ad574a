"""Run dpverify's sampling on an existing Dask distributed cluster (issue 8, point 5).

By default the batches of an audit (:func:`dpverify.audit`) and of a theorem check
(:func:`dpverify.check_theorem`, :func:`dpverify.check_sweep`) run on a local process pool
(:class:`dpverify.execution.sampling.WorkerPool`).  Inside :func:`use_scheduler` every pool created sends its batches to
a Dask cluster instead (``Client.map`` on chunks of batches, then ``Client.gather``, results in batch
order)::

    from dpverify.execution.distributed import use_scheduler
    with use_scheduler("tcp://10.0.0.5:8786"):      # or a distributed.Client
        result = dpverify.audit(mechanism, pairs, epsilon=1.0, seed=0)

Every batch carries its own seed (``SeedSequence`` spawned from the root seed and the batch's coordinates,
with a batch size that never depends on the workers), so the result is the one the local pool gives for the
same seed -- only ``result.workers`` (the cluster's threads used) and the timings differ.  The workers must
be able to import the mechanism's module (Dask pickles module-level functions by reference); lambdas and
closures travel by value (cloudpickle).  A task that cannot be serialised at all is sampled in this process,
as the local pool does, with a note in the result.

Dask is an optional dependency: ``pip install "dpverify[distributed]"``.
"""

from __future__ import annotations

import math
from concurrent.futures import CancelledError
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from dpverify.errors import DPVerifyError, InputError
from dpverify.execution.sampling import remote_executor

__all__ = ["use_scheduler", "DaskExecutor", "SchedulerError", "DEFAULT_TIMEOUT"]

#: Seconds to wait for the scheduler to answer, and for at least one worker to join it.
DEFAULT_TIMEOUT = 10.0

INSTALL_HINT = 'pip install "dpverify[distributed]"'


class SchedulerError(DPVerifyError, RuntimeError):
    """The Dask scheduler cannot be reached, has no workers, or lost work while running dpverify's batches."""


def _import_distributed() -> Any:
    try:
        import distributed
    except ImportError as exc:
        raise InputError(
            f"running on a Dask cluster needs dask.distributed, which is not installed ({exc}); "
            f"install it with: {INSTALL_HINT}"
        ) from None
    return distributed


class _Chunk:
    """Consecutive batches sent as one Dask task (a plain object, so Dask does not look inside it)."""

    __slots__ = ("fn", "tasks")

    def __init__(self, fn: Callable[[Any], Any], tasks: Sequence[Any]) -> None:
        self.fn = fn
        self.tasks = tasks


def _run_chunk(chunk: _Chunk) -> list[Any]:
    """Dask task: run the chunk's batches in order."""
    return [chunk.fn(t) for t in chunk.tasks]


class DaskExecutor:
    """Runs a :class:`~dpverify.execution.sampling.WorkerPool`'s tasks on a ``distributed.Client`` (see the module doc).

    Tasks are grouped in about four chunks per worker thread (as the local pool does) to keep the
    scheduler's per-task overhead small; results come back in task order.
    """

    def __init__(self, client: Any) -> None:
        self.client = client

    def slots(self) -> int:
        """Worker threads of the cluster (at least 1)."""
        return max(1, sum(self.client.nthreads().values()))

    def unsendable(self, task: Any) -> str | None:
        """Why ``task`` cannot be serialised for the workers, or ``None``."""
        import cloudpickle

        try:
            cloudpickle.dumps(task)
        except Exception as exc:  # noqa: BLE001 -- any serialisation failure means: run it here
            return (f"the mechanism or its input cannot be serialised for the Dask cluster "
                    f"({type(exc).__name__}: {exc}); sampled in this process")
        return None

    def run(self, tasks: Sequence[Any], fn: Callable[[Any], Any]) -> list[Any]:
        """``[fn(t) for t in tasks]`` on the cluster, in task order."""
        distributed = _import_distributed()
        size = max(1, math.ceil(len(tasks) / (4 * self.slots())))
        chunks = [_Chunk(fn, tuple(tasks[i:i + size])) for i in range(0, len(tasks), size)]
        futures = self.client.map(_run_chunk, chunks, pure=False)
        try:
            parts = self.client.gather(futures)
        except (distributed.scheduler.KilledWorker, CancelledError, OSError, TimeoutError) as exc:
            raise SchedulerError(
                f"the Dask cluster at {self.client.scheduler.address} failed while running dpverify's batches "
                f"({type(exc).__name__}: {exc}); check the workers' logs (memory, crashes) and run again"
            ) from None
        finally:
            self.client.cancel(futures)
        return [r for part in parts for r in part]


def _connect(distributed: Any, address: str, timeout: float) -> Any:
    try:
        return distributed.Client(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise SchedulerError(
            f"could not reach a Dask scheduler at {address!r} within {timeout:g} s ({type(exc).__name__}: {exc}); "
            "check the address (the scheduler prints it when started with `dask scheduler`) and that it runs"
        ) from None


@contextmanager
def use_scheduler(scheduler: Any, *, timeout: float = DEFAULT_TIMEOUT) -> Iterator[Any]:
    """Run the sampling of every audit and theorem check inside the block on a Dask cluster.

    ``scheduler`` is a scheduler address (``"tcp://host:8786"``; a client is connected, and closed on exit)
    or a ``distributed.Client`` (used as is, left open).  Yields the client.  ``timeout`` bounds the wait for
    the scheduler to answer and for a first worker.  Raises :class:`~dpverify.errors.InputError` when Dask is
    not installed or ``scheduler`` is neither, :class:`SchedulerError` when the scheduler cannot be reached or
    has no worker.  The setting is process-wide while the block is open; blocks nest.
    """
    distributed = _import_distributed()
    try:
        timeout = float(timeout)
    except (TypeError, ValueError):
        raise InputError(f"timeout must be a number of seconds, got {timeout!r}") from None
    if not math.isfinite(timeout) or timeout <= 0:
        raise InputError(f"timeout must be a positive number of seconds, got {timeout!r}")
    if isinstance(scheduler, distributed.Client):
        client, owned = scheduler, False
    elif isinstance(scheduler, str) and scheduler.strip():
        client, owned = _connect(distributed, scheduler.strip(), timeout), True
    else:
        raise InputError(
            "use_scheduler needs a Dask scheduler address such as 'tcp://127.0.0.1:8786' or a "
            f"distributed.Client, got {scheduler!r}"
        )
    try:
        try:
            client.wait_for_workers(1, timeout=timeout)
        except (OSError, TimeoutError) as exc:
            raise SchedulerError(
                f"the Dask scheduler at {client.scheduler.address} has no worker after {timeout:g} s "
                f"({type(exc).__name__}); start some with `dask worker {client.scheduler.address}`"
            ) from None
        with remote_executor(DaskExecutor(client)):
            yield client
    finally:
        if owned:
            client.close()
