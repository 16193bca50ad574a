"""Running a peer tool's runner script in the peer's own virtual environment (StatDP: ``statdp_runner.py``,
DP-Sniper: ``dpsniper_runner.py``): the JSON spec goes to its stdin, one JSON object per line comes back on its
stdout (a result per task as it finishes, a start-up or warm-up line, ``{"done": true}`` at the end)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any


def json_objects(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    """The JSON objects among ``lines`` (other lines -- a peer's own prints -- are skipped)."""
    for line in lines:
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            yield obj


def floats(obj: dict[str, Any], keys: Iterable[str]) -> dict[str, Any]:
    """``obj`` with the ``keys`` a runner wrote as strings (``"inf"``, ``"nan"``) turned into floats."""
    for key in keys:
        if isinstance(obj.get(key), str):
            obj[key] = float(obj[key])
    return obj


#: prints the numpy dispatch targets of the interpreter that runs it (numpy >= 2 and older numpy)
DISPATCH_PROBE = ("import json\ntry:\n    from numpy._core._multiarray_umath import __cpu_dispatch__ as d\n"
                  "except ImportError:\n    from numpy.core._multiarray_umath import __cpu_dispatch__ as d\n"
                  "print(json.dumps(list(d)))")


def peer_environment(py: Path) -> dict[str, str]:
    """The environment of a peer's runner: this process's, with the malloc setting this process made (freed memory
    kept in the process, :mod:`dpverify.execution.memory`, through glibc's variables, which the peer's processes read
    when they start), and this process's choice of numpy's AVX2 sorting kernels
    (:mod:`dpverify.execution.cpu_features`, made by ``benchmarks/__init__.py``), which the peer shares when its numpy
    has the same AVX-512 targets, and not otherwise (an older numpy names them differently and, before
    x86-simd-sort, has no AVX-512 sort for the variable to avoid: it would only lose its AVX-512 ``exp`` and
    ``log``).  The libraries' threads (one per process, :mod:`dpverify.execution.worker_threads`, set in this
    process's environment by ``benchmarks/__init__.py``) come with this process's environment."""
    from dpverify.execution.cpu_features import AVX512_TARGETS
    from dpverify.execution.memory import keep_freed_memory, malloc_environment

    env = dict(os.environ)
    if keep_freed_memory():                      # (already made by benchmarks/__init__.py: nothing more happens)
        env.update(malloc_environment())
    if env.get("NPY_DISABLE_CPU_FEATURES", "").strip() != AVX512_TARGETS:
        return env
    clean = {k: v for k, v in env.items() if k != "NPY_DISABLE_CPU_FEATURES"}
    try:
        done = subprocess.run([str(py), "-c", DISPATCH_PROBE], capture_output=True, text=True, env=clean, timeout=120)
        targets = set(json.loads(done.stdout.strip().splitlines()[-1]))
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return clean
    return env if set(AVX512_TARGETS.split()) <= targets else clean


def run_runner(py: Path, runner: Path, spec: dict[str, Any], cwd: Path, *,
               on_result: Callable[[dict[str, Any]], None], result_key: str) -> tuple[list[str], str | None, float]:
    """Run ``py runner`` with ``spec`` on its stdin; ``on_result(obj)`` for every result line (an object with
    ``result_key``) as it arrives.  Returns (every stdout line, an error message when the runner failed or did not
    finish, wall seconds)."""
    env = peer_environment(py)                   # (its probe of the peer's numpy is not part of the wall time)
    t0 = time.perf_counter()
    proc = subprocess.Popen([str(py), str(runner)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=str(cwd), env=env)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(spec))
    proc.stdin.close()
    lines = []
    for line in proc.stdout:
        lines.append(line)
        for obj in json_objects([line]):
            if result_key in obj:
                on_result(obj)
    stderr = proc.stderr.read() if proc.stderr is not None else ""
    code = proc.wait()
    done = any(obj.get("done") for obj in json_objects(lines))
    error = None
    if code != 0 or not done:
        error = f"{runner.name} exited with {code}: " + " ".join(stderr.strip().splitlines()[-3:])
    return lines, error, time.perf_counter() - t0
