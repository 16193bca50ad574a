"""dpverify.execution.distributed: audits and theorem checks on a Dask cluster give the local pool's results.

A LocalCluster with in-process workers (threads, fast to start) for most tests, and one with worker
processes.  Same seed => the same result on 1 local worker, 2 local workers or Dask; only ``workers`` and the
timings may differ.
"""

from __future__ import annotations

import socket
import sys
import threading
from typing import Any, Iterator

import numpy as np
import pytest
from distributed import Client, LocalCluster

import audit_mechs as m
import dpverify
from dpverify import InputError, MechanismError
from dpverify.execution.distributed import SchedulerError, use_scheduler
from dpverify.execution.sampling import WorkerPool
from theorem_toys import ExponentialValue, LaplaceTail

PAIRS = [(0.0, 1.0), (0.0, 0.5), (1.0, 0.0)]
AUDIT = dict(samples=60_000, search_samples=30_000, batch_size=10_000, seed=11)


@pytest.fixture(scope="module")
def client() -> Iterator[Client]:
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster:
        with Client(cluster, set_as_default=False) as c:
            yield c


def _same(d: dict[str, Any]) -> dict[str, Any]:
    """A result's dict without the fields that may differ between executors (timings, workers used)."""
    return {k: v for k, v in d.items() if k not in ("seconds", "workers")}


def thread_name(task: Any) -> str:
    """WorkerPool task function: the name of the thread that ran it."""
    return f"{task}:{threading.current_thread().name}"


def test_audit_on_dask_equals_the_local_pool(client: Client) -> None:
    one = dpverify.audit(m.laplace, PAIRS, epsilon=0.05, workers=1, **AUDIT)
    two = dpverify.audit(m.laplace, PAIRS, epsilon=0.05, workers=2, **AUDIT)
    with use_scheduler(client) as used:
        assert used is client
        dask = dpverify.audit(m.laplace, PAIRS, epsilon=0.05, workers=1, **AUDIT)
    assert one.violation  # scale 10 on a shift of 1 is ε = 0.1 > 0.05: a result worth comparing
    assert _same(dask.to_dict()) == _same(one.to_dict()) == _same(two.to_dict())
    assert dask.workers == 2  # the cluster's two threads, although workers=1 was asked of the local pool
    assert dask.notes == one.notes == ()


def test_theorem_check_and_sweep_on_dask_equal_the_local_pool(client: Client) -> None:
    opts = dict(runs=20_000, seed=5, batch_size=2_000)
    local = dpverify.check_theorem(LaplaceTail(t=1.0, factor=1.05), workers=1, **opts)
    sweep_local = dpverify.check_sweep(ExponentialValue, {"quantity": "quantile"}, "claimed", [2.0, 2.5],
                                       workers=1, **opts)
    with use_scheduler(client):
        dask = dpverify.check_theorem(LaplaceTail(t=1.0, factor=1.05), workers=1, **opts)
        sweep_dask = dpverify.check_sweep(ExponentialValue, {"quantity": "quantile"}, "claimed", [2.0, 2.5],
                                          workers=1, **opts)
    assert _same(dask.to_dict()) == _same(local.to_dict())
    assert dask.runs == 20_000
    strip = lambda d: {**_same(d), "points": [_same(p) for p in d["points"]]}  # noqa: E731
    assert strip(sweep_dask.to_dict()) == strip(sweep_local.to_dict())


def test_pools_inside_the_block_run_on_the_cluster_and_outside_locally(client: Client) -> None:
    tasks = list(range(7))
    with use_scheduler(client):
        inside = WorkerPool(1)
        with use_scheduler(client):  # nested blocks restore the outer one on exit
            pass
        also_inside = WorkerPool(1)
    outside = WorkerPool(1)
    for pool in (inside, also_inside):
        names = pool.run(tasks, fn=thread_name)
        assert [n.split(":")[0] for n in names] == [str(t) for t in tasks]  # task order
        assert all(not n.endswith(":MainThread") for n in names)
        assert pool.used == 2
    assert outside.run(tasks, fn=thread_name) == [f"{t}:{threading.current_thread().name}" for t in tasks]
    assert outside.used == 1


def test_closures_travel_to_the_cluster_and_unserialisable_tasks_run_here(client: Client) -> None:
    scale = 10.0
    closure = lambda x, n, rng: x + rng.laplace(0.0, scale, size=n)  # noqa: E731
    lock = threading.Lock()

    def holds_a_lock(x: float, n: int, rng: np.random.Generator) -> np.ndarray:
        with lock:
            return x + rng.laplace(0.0, scale, size=n)

    local = dpverify.audit(closure, PAIRS, epsilon=0.05, workers=1, **AUDIT)
    with use_scheduler(client):
        sent = dpverify.audit(closure, PAIRS, epsilon=0.05, **AUDIT)
        kept = dpverify.audit(holds_a_lock, PAIRS, epsilon=0.05, **AUDIT)
    assert sent.notes == () and sent.workers == 2
    assert len(kept.notes) == 1 and "cannot be serialised for the Dask cluster" in kept.notes[0]
    assert kept.workers == 1
    assert _same(sent.to_dict()) == _same(local.to_dict())
    assert {k: v for k, v in _same(kept.to_dict()).items() if k != "notes"} == \
        {k: v for k, v in _same(local.to_dict()).items() if k != "notes"}


def test_a_mechanism_error_on_a_worker_is_raised_here(client: Client) -> None:
    with use_scheduler(client), pytest.raises(MechanismError, match="raised ZeroDivisionError.*boom"):
        dpverify.audit(m.raises, PAIRS, epsilon=1.0, **AUDIT)


def test_missing_dask_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    with pytest.raises(InputError, match=r'pip install "dpverify\[distributed\]"'):
        with use_scheduler("tcp://127.0.0.1:8786"):
            pass


def test_unreachable_scheduler_is_a_clear_error() -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    with pytest.raises(SchedulerError, match=f"could not reach a Dask scheduler at '{address}' within 0.5 s"):
        with use_scheduler(address, timeout=0.5):
            pass


def test_a_scheduler_without_workers_is_a_clear_error() -> None:
    with LocalCluster(n_workers=0, processes=False, dashboard_address=":0") as cluster:
        with Client(cluster, set_as_default=False) as empty:
            with pytest.raises(SchedulerError, match="has no worker after 0.5 s.*dask worker"):
                with use_scheduler(empty, timeout=0.5):
                    pass


@pytest.mark.parametrize("scheduler, timeout, message", [
    (8786, 1.0, "needs a Dask scheduler address"),
    ("  ", 1.0, "needs a Dask scheduler address"),
    ("tcp://127.0.0.1:8786", 0.0, "timeout must be a positive number"),
    ("tcp://127.0.0.1:8786", "soon", "timeout must be a number"),
])
def test_bad_arguments(scheduler: Any, timeout: Any, message: str) -> None:
    with pytest.raises(InputError, match=message):
        with use_scheduler(scheduler, timeout=timeout):
            pass


@pytest.mark.slow
def test_worker_processes_by_address_give_the_same_result() -> None:
    local = dpverify.audit(m.laplace, PAIRS[:1], epsilon=0.05, workers=1, **AUDIT)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster:
        with use_scheduler(cluster.scheduler_address) as c:  # an address: a client of its own, closed on exit
            remote = dpverify.audit(m.laplace, PAIRS[:1], epsilon=0.05, workers=1, **AUDIT)
        assert c.status == "closed"
    assert remote.workers == 2
    assert _same(remote.to_dict()) == _same(local.to_dict())


def test_per_call_library_target_on_dask_equals_the_local_pool(client: Client) -> None:
    """A one-release-per-call diffprivlib target, seeded per batch through its random_state: the same outputs, hence
    the same result, on one local process, two, and the cluster (timings aside)."""
    pytest.importorskip("diffprivlib", reason="needs diffprivlib: pip install -e '.[dev]'")
    from dpverify.libraries.diffprivlib_targets import DiffprivlibMechanism

    target = DiffprivlibMechanism("Laplace", epsilon=1.0, sensitivity=2.0)     # true ε = 0.5 on inputs 1 apart
    opts = dict(samples=20_000, search_samples=10_000, batch_size=5_000, seed=3)
    one = dpverify.audit(target, [(0.0, 1.0)], epsilon=0.4, workers=1, **opts)
    two = dpverify.audit(target, [(0.0, 1.0)], epsilon=0.4, workers=2, **opts)
    with use_scheduler(client):
        dask = dpverify.audit(target, [(0.0, 1.0)], epsilon=0.4, workers=1, **opts)

    def same(d: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in _same(d).items() if k not in ("library", "workers")}

    assert same(dask.to_dict()) == same(one.to_dict()) == same(two.to_dict())
    # every call counted once, whichever thread of the cluster ran it: 2 inputs x (10 000 search + 20 000 test)
    assert dask.library is not None and one.library is not None
    assert dask.library.calls == one.library.calls == 2 * (10_000 + 20_000)
