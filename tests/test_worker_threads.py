"""The BLAS and OpenMP threads of an audit's worker processes (dpverify.execution.worker_threads): the machine's cores
shared out among the workers, the user's own thread variables left alone, and the setting made in every worker process
(pool workers and lanes) but never in the audit's own process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dpverify.execution import worker_threads as wt


@pytest.mark.parametrize("workers", [1, 2, 3, 64])
def test_the_cores_are_shared_out_among_the_workers(workers: int) -> None:
    cores = wt.usable_cores()
    assert wt.worker_threads(workers, environ={}) == max(1, cores // workers)


@pytest.mark.parametrize("name", wt.THREAD_VARIABLES)
def test_the_users_thread_variables_are_left_alone(name: str) -> None:
    assert wt.worker_threads(2, environ={name: "4"}) is None
    assert wt.worker_threads(2, environ={"DPVERIFY_SOMETHING": "1"}) is not None


#: in a fresh interpreter: the libraries' threads here and in the workers and lanes of a pool of 2
REPORT = """
import json, sys
sys.path.insert(0, {root!r})
import sklearn.linear_model  # noqa: F401  (scikit-learn's OpenMP loaded before the workers fork, as an audit does)
from threadpoolctl import threadpool_info
from dpverify.execution.sampling import WorkerPool

def threads(_=None):
    return sorted({{d["num_threads"] for d in threadpool_info()}})

with WorkerPool(2) as pool:
    lanes = [lane.submit(threads).result() for lane in pool.lanes()]
    pool.start()
    workers = pool.run([0, 1], fn=threads)
print(json.dumps({{"here": threads(), "lanes": lanes, "workers": workers}}))
"""


def _report(env: dict[str, str]) -> dict:
    root = str(Path(__file__).resolve().parents[1])
    full = {k: v for k, v in os.environ.items() if k not in wt.THREAD_VARIABLES}
    full.update(env)
    done = subprocess.run([sys.executable, "-c", REPORT.format(root=root)], capture_output=True, text=True, env=full,
                          timeout=180)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_every_worker_process_keeps_its_share_of_threads() -> None:
    got = _report({})
    share = wt.worker_threads(2, environ={})
    assert got["lanes"] == [[share], [share]] and got["workers"] == [[share], [share]]
    if wt.usable_cores() > 1:
        assert got["here"] != [share] or share > 1       # the audit's own process keeps the libraries' defaults


def test_a_users_thread_variable_reaches_the_workers_unchanged() -> None:
    got = _report({"OPENBLAS_NUM_THREADS": "3", "OMP_NUM_THREADS": "3"})
    assert got["lanes"] == [got["here"]] * 2 and got["workers"] == [got["here"]] * 2


@pytest.mark.parametrize("environ, done", [
    ({}, True),
    ({"DPVERIFY_THREADS": "keep"}, False),
    ({"DPVERIFY_THREADS": " Keep "}, False),
    ({"OPENBLAS_NUM_THREADS": "4"}, False),
    ({"OMP_NUM_THREADS": "2"}, False),
    ({"DPVERIFY_THREADS": "other"}, True),
])
def test_one_thread_is_set_unless_the_user_chose(environ: dict[str, str], done: bool) -> None:
    env = dict(environ)
    assert wt.use_one_thread(env) is done
    if done:
        assert all(env[name] == "1" for name in wt.THREAD_VARIABLES)
        assert wt.threads_setting(env).startswith("the libraries' own (")    # the variables now read as set
    else:
        assert env == environ
        assert "keep" in wt.threads_setting(env).lower() or "set by the user" in wt.threads_setting(env)
    assert wt.threads_setting({}) == "the libraries' defaults (a thread per core)"


#: in a fresh interpreter: the command line's module first (as ``dpverify`` starts), then numpy's BLAS threads
CLI_THREADS = """
import json, sys
sys.path.insert(0, {root!r})
import dpverify.cli  # noqa: F401  (sets the variables before numpy loads)
import numpy  # noqa: F401
from threadpoolctl import threadpool_info
from dpverify.execution.worker_threads import threads_setting
print(json.dumps({{"threads": sorted({{d["num_threads"] for d in threadpool_info()}}), "setting": threads_setting()}}))
"""


def _cli_threads(user: dict[str, str], cli: bool = True) -> dict:
    root = str(Path(__file__).resolve().parents[1])
    full = {k: v for k, v in os.environ.items() if k not in wt.THREAD_VARIABLES and k != wt.OPT_OUT}
    full.update(user)
    code = CLI_THREADS.format(root=root)
    if not cli:
        code = code.replace("import dpverify.cli", "pass")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full, timeout=180)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_command_line_runs_its_libraries_on_one_thread() -> None:
    got = _cli_threads({})
    assert got["threads"] == [1] and got["setting"].startswith("one BLAS/OpenMP thread per process")


def test_the_command_line_leaves_the_users_threads_alone() -> None:
    user = {"OPENBLAS_NUM_THREADS": "2", "OMP_NUM_THREADS": "2"}
    got = _cli_threads(user)
    assert got["threads"] == _cli_threads(user, cli=False)["threads"]
    assert got["setting"].startswith("the libraries' own (")


#: in a fresh interpreter: this process's threads before, while and after a pool of 2 has worker processes, and
#: inside the search's one-thread block while it holds them
HOLD = """
import json, sys
sys.path.insert(0, {root!r})
import numpy  # noqa: F401
from threadpoolctl import threadpool_info
from dpverify.execution.sampling import WorkerPool, single_threaded_libraries

def threads(_=None):
    return sorted({{d["num_threads"] for d in threadpool_info()}})

out = {{"before": threads()}}
with WorkerPool(2) as pool:
    pool.start()
    out["while"] = threads()
    with single_threaded_libraries():
        out["inside"] = threads()
    out["after_block"] = threads()
out["after"] = threads()
print(json.dumps(out))
"""


def test_the_forking_process_holds_the_workers_share_while_it_has_workers() -> None:
    root = str(Path(__file__).resolve().parents[1])
    full = {k: v for k, v in os.environ.items() if k not in wt.THREAD_VARIABLES and k != wt.OPT_OUT}
    done = subprocess.run([sys.executable, "-c", HOLD.format(root=root)], capture_output=True, text=True, env=full,
                          timeout=180)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    share = wt.worker_threads(2, environ={})
    assert got["while"] == [share] and got["after_block"] == [share] and got["inside"] == [1]
    assert got["after"] == got["before"]                     # restored when the pool closes
