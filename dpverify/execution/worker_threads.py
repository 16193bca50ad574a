"""The BLAS and OpenMP threads of an audit's processes, and what each worker process does when it starts.

numpy's and scipy's BLAS (OpenBLAS in their wheels) and scikit-learn's OpenMP start as many threads as the machine
has cores, and OpenBLAS's threads spin for a while (about 0.1 s) each time they are started, waiting for work.  An
audit runs one process per core already, and the event search keeps the libraries on one thread around its own work
(:func:`dpverify.execution.sampling.single_threaded_libraries`): their threads give an audit nothing and cost it.
Worse, forking a worker stops OpenBLAS's threads in the forking process (its fork handler), and the next change of
their number starts them anew, spinning: in a freshly forked worker its first event search took about 100 ms and
twice that in CPU (vector outputs, 512 per input, against 20 ms), and in the audit's own process the searches after
a fork ran at half speed, its spinning threads on the cores the workers needed.

Hence two settings, neither of which changes a result (only how many threads a library uses):

* :func:`use_one_thread` -- the ``dpverify`` command line and the benchmarks set :data:`THREAD_VARIABLES` to 1 before
  numpy is imported, so that no library of theirs, nor of the workers they fork, starts threads at all.  The peers a
  benchmark runs inherit the variables: both tools run with the same setting.  Where the user set one of the
  variables, or ``DPVERIFY_THREADS=keep`` (:data:`OPT_OUT`), nothing is set.
* :func:`start_worker` -- every worker process of a :class:`dpverify.execution.sampling.WorkerPool` (of a program
  that calls :func:`dpverify.audit` in its own process too) keeps ``max(1, cores // workers)`` threads from its
  start (the rule of joblib's loky workers): one each with two workers on two cores.  The process that forks them
  holds the same share while the pool has workers (:func:`hold_threads`; restored when the pool closes), so that they
  inherit it and set nothing themselves, and no one-thread block of its own search sets and restores its number
  (:func:`at_threads`).  Left as they are where the user set one of :data:`THREAD_VARIABLES`.
"""

from __future__ import annotations

import os
from typing import Any, Mapping

from dpverify.execution.memory import keep_freed_memory

__all__ = ["OPT_OUT", "THREAD_VARIABLES", "use_one_thread", "threads_setting", "usable_cores", "worker_threads",
           "start_worker", "hold_threads", "at_threads"]

#: the variables with which a user sets the libraries' threads (then left as set)
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
                    "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")
#: ``DPVERIFY_THREADS=keep`` leaves the libraries' threads alone in the command line and the benchmarks
OPT_OUT = "DPVERIFY_THREADS"

_set_here = False


def _user_choice(environ: Mapping[str, str]) -> str | None:
    if environ.get(OPT_OUT, "").strip().lower() == "keep":
        return f"{OPT_OUT}=keep"
    for name in THREAD_VARIABLES:
        if name in environ:
            return f"{name}={environ[name]} set by the user"
    return None


def use_one_thread(environ: dict[str, str] | None = None) -> bool:
    """Set every one of :data:`THREAD_VARIABLES` to 1 in ``environ`` (default: this process's, read by the libraries
    when they load: call it before numpy is imported) unless the user chose (:func:`_user_choice`); whether it did."""
    global _set_here
    env = os.environ if environ is None else environ
    if _set_here and environ is None:
        return True
    if _user_choice(env) is not None:
        return False
    for name in THREAD_VARIABLES:
        env[name] = "1"
    if environ is None:
        _set_here = True
    return True


def threads_setting(environ: Mapping[str, str] | None = None) -> str:
    """One line for reports and benchmark headers: the libraries' threads in this process."""
    env = os.environ if environ is None else environ
    if _set_here and environ is None:
        return "one BLAS/OpenMP thread per process (OMP_NUM_THREADS=1, OPENBLAS_NUM_THREADS=1, ...)"
    choice = _user_choice(env)
    return f"the libraries' own ({choice})" if choice else "the libraries' defaults (a thread per core)"


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


def at_threads(info: list[dict[str, Any]], threads: int) -> bool:
    """Whether every library of ``info`` (threadpoolctl's ``info()``) runs ``threads`` threads already: then nothing
    needs setting, and nothing is set (setting OpenBLAS's number in a forked process starts its threads anew)."""
    return all(lib.get("num_threads") == threads for lib in info)


def hold_threads(threads: int) -> Any | None:
    """Set the libraries of this process to ``threads`` threads until the returned limiter's
    ``restore_original_limits()`` (``None``: they run that many already).  A
    :class:`dpverify.execution.sampling.WorkerPool` holds the process that forks its workers at their share for as long
    as it has them, so that the workers inherit it and the fork stops no thread that the process's next search would
    start again."""
    from threadpoolctl import ThreadpoolController

    controller = ThreadpoolController()
    if at_threads(controller.info(), threads):
        return None
    return controller.limit(limits=threads)


def start_worker(threads: int | None) -> None:
    """The initializer of every worker process of a :class:`dpverify.execution.sampling.WorkerPool`: freed memory
    kept (:func:`dpverify.execution.memory.keep_freed_memory`) and the libraries' threads set to ``threads`` for
    the worker's life (``None``: left as they are; nothing is set where they run that many already, as when the
    forking process held them there)."""
    keep_freed_memory()
    if threads is not None:
        hold_threads(threads)
