"""Freed memory kept in the process, so that the next large array reuses pages already touched (glibc's malloc).

numpy takes every array from the C library's ``malloc``.  glibc's ``malloc`` maps each block above its mmap threshold
(at most 32 MB) with ``mmap`` of its own and unmaps it on ``free``: every large array of an audit (1,070,000 rows of
20 float64 columns are 171 MB; an event search at that size allocates many of them) comes back as fresh pages that
the kernel zero-fills on first touch, one page fault each.  On a virtual machine whose host takes back the guest's
free pages (virtio-balloon free page reporting, as on the machine the benchmark's figures come from), such a page
costs more again: the host must supply it anew.  ``python -m benchmarks.bench_memory`` measures both, first touches and whole audits
(``docs/performance.md``, "Freed memory kept in the process").

:func:`keep_freed_memory` tells glibc (``mallopt``) to take every block from its heap (``M_MMAP_MAX = 0``) and to give
the heap's free top back to the kernel only above :data:`TRIM_THRESHOLD` (``M_TRIM_THRESHOLD``), so that freed blocks
stay mapped and the next arrays reuse them.  What it costs: a process holds on to the memory of its largest moment
(up to 2 GB more, the most ``mallopt`` can be told) until it exits.  The ``dpverify`` command line and the benchmarks
call it first thing; :class:`dpverify.execution.sampling.WorkerPool`'s worker processes call it when they start (they
are the audit's own and exit with it).  A program that calls :func:`dpverify.audit` in its own process keeps its
malloc settings.  It changes no result: only where memory comes from.  Nothing is done where the C library is not
glibc, where the user set glibc's malloc variables (:data:`USER_VARIABLES`, or ``glibc.malloc`` tunables in
``GLIBC_TUNABLES``), or with ``DPVERIFY_MALLOC=system`` (:data:`OPT_OUT`).
"""

from __future__ import annotations

import ctypes
import os
import platform
from typing import Mapping

__all__ = ["OPT_OUT", "TRIM_THRESHOLD", "USER_VARIABLES", "keep_freed_memory", "malloc_environment",
           "malloc_setting"]

#: ``DPVERIFY_MALLOC=system`` leaves the C library's malloc alone
OPT_OUT = "DPVERIFY_MALLOC"
#: the heap's free top is given back to the kernel only above this many bytes (``mallopt`` takes an ``int``)
TRIM_THRESHOLD = 2**31 - 1
#: glibc's own malloc variables: set by the user, they are left as they are
USER_VARIABLES = ("MALLOC_MMAP_MAX_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_")
_M_TRIM_THRESHOLD = -1
_M_MMAP_MAX = -4

_applied = False


def _glibc() -> bool:
    return platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"


def _user_choice(environ: Mapping[str, str]) -> str | None:
    """What in ``environ`` says to leave malloc alone, or ``None``."""
    if environ.get(OPT_OUT, "").strip().lower() == "system":
        return f"{OPT_OUT}=system"
    for name in USER_VARIABLES:
        if name in environ:
            return f"{name} set by the user"
    if "glibc.malloc." in environ.get("GLIBC_TUNABLES", ""):
        return "glibc.malloc tunables set by the user"
    return None


def keep_freed_memory(environ: Mapping[str, str] | None = None) -> bool:
    """Tell glibc's malloc to keep freed blocks in this process (module docstring); whether it now does.  Called
    again, it does nothing more."""
    global _applied
    if _applied:
        return True
    env = os.environ if environ is None else environ
    if not _glibc() or _user_choice(env) is not None:
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    # mallopt returns 1 on success; the threshold first, so that a failure of the second leaves the defaults' mmap use
    if mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) != 1 or mallopt(_M_MMAP_MAX, 0) != 1:
        return False
    _applied = True
    return True


def malloc_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment variables that give another program on glibc (a peer tool in a benchmark) the setting
    :func:`keep_freed_memory` makes, read by glibc when that program starts; empty where this process would not
    make it."""
    env = os.environ if environ is None else environ
    if not _glibc() or _user_choice(env) is not None:
        return {}
    return {"MALLOC_MMAP_MAX_": "0", "MALLOC_TRIM_THRESHOLD_": str(TRIM_THRESHOLD)}


def malloc_setting(environ: Mapping[str, str] | None = None) -> str:
    """One line for reports and benchmark headers: what this process's malloc does with freed blocks."""
    env = os.environ if environ is None else environ
    if _applied:
        return "freed memory kept in the process (glibc mallopt: M_MMAP_MAX=0, M_TRIM_THRESHOLD=2 GB)"
    choice = _user_choice(env)
    if not _glibc():
        return "the C library's malloc (not glibc: left alone)"
    return f"glibc's malloc defaults ({choice})" if choice else "glibc's malloc defaults"
