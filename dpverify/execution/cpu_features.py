"""numpy's sorting kernels on CPUs where its AVX-512 ones are slow (AMD Zen 4).

numpy (2.x) sorts, partitions and finds the distinct values of 32- and 64-bit arrays with x86-simd-sort, and takes
its AVX-512 kernels on any CPU that has AVX-512.  Their partition step writes every vector with the memory-destination
form of ``vpcompress``, which AMD Zen 4 (family 0x19 with AVX-512) runs in microcode: AMD's *Software Optimization
Guide for the AMD Zen4 Microarchitecture*, Sec. 2.11.2, says to avoid it; the slowdown is numpy/x86-simd-sort issue 6
and is discussed in numpy pull request 32690.  On such a CPU numpy's AVX2 kernels of the same functions are several
times faster, and sorting is a large part of the event search's time on vector outputs (``python -m
benchmarks.bench_numpy_kernels`` measures both settings side by side: ``docs/performance.md``, "numpy's sorting
kernels on AMD Zen 4").

numpy chooses its kernels once, when it is first imported, from the environment variable ``NPY_DISABLE_CPU_FEATURES``;
nothing changes them afterwards.  :func:`use_avx2_sort` sets that variable to numpy's AVX-512 dispatch targets
(:data:`AVX512_TARGETS`) *before* numpy is imported, on such a CPU only, and only where the user has set neither
``NPY_DISABLE_CPU_FEATURES`` nor ``NPY_ENABLE_CPU_FEATURES`` nor ``DPVERIFY_NUMPY_AVX512=keep`` (:data:`OPT_OUT`).  The
``dpverify`` command line and the benchmarks call it first thing, and worker processes forked from them inherit
numpy's choice, so an audit's results still do not depend on its number of workers.  A program that imports numpy
itself and then calls :func:`dpverify.audit` keeps numpy's default kernels unless it sets the variable before
importing numpy (:func:`sort_environment` says what to set).

What it costs: numpy's float64 ``exp`` and ``log`` lose their AVX-512 kernels too (the same targets hold them; several
times slower per call), and their last bit may differ, so a score computed through them may differ in its last bits
and a mechanism whose outputs depend on the last bit of ``np.exp`` or ``np.log`` may give other outputs on the same
seed than under numpy's default kernels.  The same benchmark compares the searches' candidates, whole audits' bounds
and the default suite's outcomes under both settings.
"""

from __future__ import annotations

import os
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Mapping

__all__ = ["AVX512_TARGETS", "OPT_OUT", "slow_avx512_sort", "sort_environment", "use_avx2_sort", "numpy_setting",
           "numpy_kernels"]

#: numpy's AVX-512 dispatch targets (numpy >= 2.4 names them ``X86_V4``, ``AVX512_ICL``, ``AVX512_SPR``); disabling
#: them leaves numpy its AVX2 (``X86_V3``) kernels
AVX512_TARGETS = "X86_V4 AVX512_ICL AVX512_SPR"
#: ``DPVERIFY_NUMPY_AVX512=keep`` leaves numpy's choice of kernels alone
OPT_OUT = "DPVERIFY_NUMPY_AVX512"
#: the first numpy version whose dispatch targets carry the names of :data:`AVX512_TARGETS`
NUMPY_NAMES_SINCE = (2, 4)
NUMPY_VARIABLES = ("NPY_DISABLE_CPU_FEATURES", "NPY_ENABLE_CPU_FEATURES")


def _cpuinfo() -> str:
    try:
        return Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:                  # not Linux: no CPU is treated as slow
        return ""


def slow_avx512_sort(cpuinfo: str | None = None) -> bool:
    """Whether this CPU (its first processor in ``/proc/cpuinfo``, or the text ``cpuinfo``) is an AMD Zen 4: vendor
    ``AuthenticAMD``, family 25 (0x19) and the ``avx512f`` flag (the Zen 3 CPUs of that family have no AVX-512; Zen 5,
    family 26, stores compressed vectors at full speed)."""
    fields: dict[str, str] = {}
    for line in (_cpuinfo() if cpuinfo is None else cpuinfo).splitlines():
        if not line.strip():
            if fields:
                break                # the first processor's block is enough
            continue
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    return (fields.get("vendor_id") == "AuthenticAMD" and fields.get("cpu family") == "25"
            and "avx512f" in fields.get("flags", "").split())


def _numpy_version() -> tuple[int, ...] | None:
    try:
        text = version("numpy")
    except PackageNotFoundError:
        return None
    parts = []
    for p in text.split(".")[:2]:
        digits = "".join(ch for ch in p if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def sort_environment(environ: Mapping[str, str] | None = None, cpuinfo: str | None = None,
                     numpy_version: tuple[int, ...] | None = None) -> dict[str, str]:
    """The environment variables that give numpy its AVX2 sorting kernels here (``{}`` when nothing is to change):
    ``{"NPY_DISABLE_CPU_FEATURES": AVX512_TARGETS}`` on a CPU of :func:`slow_avx512_sort`, with numpy >= 2.4
    installed (older versions name their targets otherwise), unless ``environ`` (default: this process's) already
    sets one of numpy's CPU-feature variables or ``DPVERIFY_NUMPY_AVX512=keep``."""
    env = os.environ if environ is None else environ
    if env.get(OPT_OUT, "").strip().lower() == "keep" or any(v in env for v in NUMPY_VARIABLES):
        return {}
    found = _numpy_version() if numpy_version is None else numpy_version
    if found is None or found < NUMPY_NAMES_SINCE or not slow_avx512_sort(cpuinfo):
        return {}
    return {"NPY_DISABLE_CPU_FEATURES": AVX512_TARGETS}


def use_avx2_sort() -> bool:
    """Set :func:`sort_environment`'s variables in this process if numpy has not been imported yet (numpy reads them
    once, at its import; child processes inherit them).  Returns whether anything was set."""
    if "numpy" in sys.modules:
        return False
    env = sort_environment()
    os.environ.update(env)
    return bool(env)


def numpy_setting() -> str:
    """numpy's CPU-feature variables of this process, ``"NAME=value"`` joined by ``", "``, or ``"default"`` when none
    is set (a result may depend on them: certificates record it)."""
    parts = [f"{v}={os.environ[v].strip()}" for v in NUMPY_VARIABLES if os.environ.get(v, "").strip()]
    return ", ".join(parts) or "default"


def numpy_kernels() -> str:
    """A line for benchmark headers: :func:`numpy_setting` when it is not the default (``""`` then)."""
    setting = numpy_setting()
    if setting == "default":
        return ""
    why = (" (numpy's AVX2 sorting kernels: its AVX-512 ones are slow on AMD Zen 4, "
           "dpverify.execution.cpu_features)" if os.environ.get(NUMPY_VARIABLES[0], "").strip() == AVX512_TARGETS
           else "")
    return "numpy kernels: " + setting + why
