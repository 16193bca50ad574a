"""The BLAS and OpenMP threads of an audit's worker processes, and what each worker does when it starts.

numpy's and scipy's BLAS (OpenBLAS in their wheels) start as many threads as the machine has cores.  A worker process
of :class:`dpverify.execution.sampling.WorkerPool` is forked from a process that had them; the event search limits
them to one around its own work (:func:`dpverify.execution.sampling.single_threaded_libraries`), and setting them back
afterwards starts the library's threads anew in a fresh worker, where they spin waiting for work for a while: the
first event search of a freshly forked worker took about 100 ms and twice that in CPU (the spinning thread on the
other core, which the other worker needed) against 20 ms with one thread (vector outputs, 512 per input). Every
worker therefore keeps ``max(1, cores // workers)`` threads from its start (the rule of joblib's loky workers): one
each with two workers on two cores, the machine's cores shared among the workers otherwise.  The user's own choice
wins: nothing is changed when one of :data:`THREAD_VARIABLES` is set.  It changes no result: only how many threads a
library uses.
"""

from __future__ import annotations

import os
from typing import Mapping

from dpverify.execution.memory import keep_freed_memory

__all__ = ["THREAD_VARIABLES", "worker_threads", "start_worker"]

#: the variables with which a user sets the libraries' threads (then left as set)
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
                    "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def worker_threads(workers: int, environ: Mapping[str, str] | None = None) -> int | None:
    """The BLAS/OpenMP threads each of ``workers`` worker processes keeps: ``max(1, cores // workers)``, or ``None``
    (left as they are) when the user set one of :data:`THREAD_VARIABLES`."""
    env = os.environ if environ is None else environ
    if any(name in env for name in THREAD_VARIABLES):
        return None
    return max(1, usable_cores() // max(1, workers))


def start_worker(threads: int | None) -> None:
    """The initializer of every worker process of a :class:`dpverify.execution.sampling.WorkerPool`: freed memory
    kept (:func:`dpverify.execution.memory.keep_freed_memory`) and the libraries' threads set to ``threads`` for
    the worker's life (``None``: left as they are)."""
    keep_freed_memory()
    if threads is not None:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=threads)
