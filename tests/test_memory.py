"""Freed memory kept in the process (dpverify.execution.memory): the user's choices are respected, the setting takes
effect (glibc serves a large array from its heap instead of a mapping of its own) in this process, in a peer started
with its environment, and in the audit's worker processes."""

from __future__ import annotations

import json
import platform
import subprocess
import sys

import pytest

from dpverify.execution import memory

glibc = pytest.mark.skipif(not (platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"),
                           reason="glibc's malloc only")

#: a fresh interpreter's report after allocating and touching a 64 MB array: glibc's bytes in mmapped blocks (mallinfo2)
MAPPED = """
import ctypes, json, sys
sys.path.insert(0, {root!r})
{setup}
import numpy as np
class Info(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]
info = ctypes.CDLL(None).mallinfo2
info.restype = Info
a = np.ones(8_000_000)
print(json.dumps({{"mapped": info().hblkhd, "heap": info().arena, "applied": {applied}}}))
"""


def _report(setup: str = "", applied: str = "None", env: dict[str, str] | None = None) -> dict:
    import os
    root = str(__import__("pathlib").Path(__file__).resolve().parents[1])
    code = MAPPED.format(root=root, setup=setup, applied=applied)
    full = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_") and k != memory.OPT_OUT}
    full.update(env or {})
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("environ, choice", [
    ({}, None),
    ({"DPVERIFY_MALLOC": "system"}, "DPVERIFY_MALLOC=system"),
    ({"DPVERIFY_MALLOC": " System "}, "DPVERIFY_MALLOC=system"),
    ({"DPVERIFY_MALLOC": "keep"}, None),
    ({"MALLOC_MMAP_MAX_": "65536"}, "MALLOC_MMAP_MAX_ set by the user"),
    ({"MALLOC_TRIM_THRESHOLD_": "0"}, "MALLOC_TRIM_THRESHOLD_ set by the user"),
    ({"GLIBC_TUNABLES": "glibc.malloc.mmap_threshold=4096"}, "glibc.malloc tunables set by the user"),
    ({"GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX512F"}, None),
])
def test_the_users_choice_is_left_alone(environ: dict[str, str], choice: str | None) -> None:
    assert memory._user_choice(environ) == choice
    if choice is not None:
        assert memory.malloc_environment(environ) == {}


@glibc
def test_large_arrays_come_from_the_heap_once_kept() -> None:
    default = _report()
    assert default["mapped"] >= 64_000_000                      # glibc's default: a mapping of its own
    kept = _report("from dpverify.execution.memory import keep_freed_memory\napplied = keep_freed_memory()",
                   "applied")
    assert kept["applied"] is True
    assert kept["mapped"] < 64_000_000 <= kept["heap"]
    opted_out = _report("from dpverify.execution.memory import keep_freed_memory\napplied = keep_freed_memory()",
                        "applied", {"DPVERIFY_MALLOC": "system"})
    assert opted_out["applied"] is False and opted_out["mapped"] >= 64_000_000


@glibc
def test_a_peer_gets_the_setting_through_its_environment() -> None:
    env = memory.malloc_environment({})
    assert env == {"MALLOC_MMAP_MAX_": "0", "MALLOC_TRIM_THRESHOLD_": str(memory.TRIM_THRESHOLD)}
    peer = _report(env=env)                                        # a program that never imports dpverify
    assert peer["mapped"] < 64_000_000 <= peer["heap"]


WORKERS = """
import json, sys
sys.path.insert(0, {root!r})
from dpverify.execution import memory
from dpverify.execution.sampling import WorkerPool
kept = "freed memory kept"
with WorkerPool(2) as pool:
    pool.start()
    pooled = [s.startswith(kept) for s in pool._pool.map(memory.malloc_setting, [None, None])]
    lanes = [lane.submit(memory.malloc_setting, None).result().startswith(kept) for lane in pool.lanes()]
print(json.dumps({{"parent": memory._applied, "pool": pooled, "lanes": lanes}}))
"""


@glibc
def test_the_audits_workers_keep_freed_memory() -> None:
    """In a program that never made the setting itself (it calls the audit as a library): its own malloc stays as it
    is, the audit's worker processes make it when they start."""
    import os
    from pathlib import Path
    root = str(Path(__file__).resolve().parents[1])
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_") and k != memory.OPT_OUT}
    done = subprocess.run([sys.executable, "-c", WORKERS.format(root=root)], capture_output=True, text=True,
                          env=env, timeout=120, cwd=root)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got == {"parent": False, "pool": [True, True], "lanes": [True, True]}


def test_the_setting_is_named() -> None:
    line = memory.malloc_setting({"DPVERIFY_MALLOC": "system"})
    assert line.startswith("freed memory kept") if memory._applied else "DPVERIFY_MALLOC=system" in line
