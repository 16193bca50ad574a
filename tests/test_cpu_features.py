"""numpy's sorting kernels on AMD Zen 4 (dpverify.execution.cpu_features): which CPUs, which environments, and that
the command line chooses them before numpy is imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from dpverify.execution.cpu_features import (AVX512_TARGETS, NUMPY_NAMES_SINCE, OPT_OUT, numpy_kernels,
                                             numpy_setting, slow_avx512_sort, sort_environment, use_avx2_sort)


def block(vendor: str, family: int, flags: str, processor: int = 0) -> str:
    return (f"processor\t: {processor}\nvendor_id\t: {vendor}\ncpu family\t: {family}\nmodel\t\t: 17\n"
            f"model name\t: test cpu\nflags\t\t: fpu sse2 avx2 {flags}\n\n")


ZEN4 = block("AuthenticAMD", 25, "avx512f avx512bw avx512vl")


@pytest.mark.parametrize("text, slow", [
    (ZEN4, True),
    (ZEN4 + block("AuthenticAMD", 25, "avx512f", 1), True),
    (block("AuthenticAMD", 25, "bmi2"), False),                       # Zen 3: same family, no AVX-512
    (block("AuthenticAMD", 26, "avx512f avx512bw"), False),           # Zen 5
    (block("GenuineIntel", 6, "avx512f avx512bw"), False),            # Intel: x86-simd-sort's own target
    (block("AuthenticAMD", 25, "avx512fp16"), False),                 # a flag that merely starts with avx512f
    ("", False),                                                       # no /proc/cpuinfo (not Linux)
    (block("GenuineIntel", 6, "") + ZEN4, False),                     # only the first processor counts
])
def test_slow_avx512_sort_is_zen4_only(text: str, slow: bool) -> None:
    assert slow_avx512_sort(text) is slow


@pytest.mark.parametrize("environ, version, expected", [
    ({}, (2, 4), {"NPY_DISABLE_CPU_FEATURES": AVX512_TARGETS}),
    ({}, (3, 0), {"NPY_DISABLE_CPU_FEATURES": AVX512_TARGETS}),
    ({}, (2, 3), {}),                                                  # older numpy names its targets otherwise
    ({OPT_OUT: "keep"}, (2, 4), {}),
    ({OPT_OUT: " KEEP "}, (2, 4), {}),
    ({OPT_OUT: "other"}, (2, 4), {"NPY_DISABLE_CPU_FEATURES": AVX512_TARGETS}),
    ({"NPY_DISABLE_CPU_FEATURES": ""}, (2, 4), {}),                    # the user's own choice, even empty
    ({"NPY_ENABLE_CPU_FEATURES": "X86_V3"}, (2, 4), {}),
])
def test_sort_environment_respects_the_users_choice(environ: dict[str, str], version: tuple[int, int],
                                                    expected: dict[str, str]) -> None:
    assert sort_environment(environ, ZEN4, version) == expected
    assert sort_environment(environ, block("GenuineIntel", 6, "avx512f"), version) == {}


def test_use_avx2_sort_never_acts_after_numpy_is_imported() -> None:
    assert "numpy" in sys.modules
    before = dict(os.environ)
    assert use_avx2_sort() is False
    assert dict(os.environ) == before


def test_numpy_setting_names_the_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NPY_DISABLE_CPU_FEATURES", raising=False)
    monkeypatch.delenv("NPY_ENABLE_CPU_FEATURES", raising=False)
    assert numpy_setting() == "default" and numpy_kernels() == ""
    monkeypatch.setenv("NPY_DISABLE_CPU_FEATURES", AVX512_TARGETS)
    assert numpy_setting() == f"NPY_DISABLE_CPU_FEATURES={AVX512_TARGETS}"
    assert numpy_kernels().startswith(f"numpy kernels: NPY_DISABLE_CPU_FEATURES={AVX512_TARGETS} (")


def _numpy_version() -> tuple[int, int]:
    major, minor = np.__version__.split(".")[:2]
    return int(major), int(minor)


@pytest.mark.skipif(_numpy_version() < NUMPY_NAMES_SINCE, reason="numpy before 2.4 names its targets otherwise")
def test_the_targets_are_numpys_dispatch_targets() -> None:
    """If numpy renames its targets, the variable would silently do nothing: this fails instead."""
    from numpy._core._multiarray_umath import __cpu_dispatch__
    x86 = any(name.startswith("X86_") for name in __cpu_dispatch__)
    if not x86:
        pytest.skip("numpy has no x86 dispatch targets on this machine")
    assert set(AVX512_TARGETS.split()) <= set(__cpu_dispatch__)


PROBE = ("import os, sys, json; import dpverify.cli; import numpy; "
         "from numpy._core._multiarray_umath import __cpu_features__ as f; "
         "print(json.dumps({'var': os.environ.get('NPY_DISABLE_CPU_FEATURES'), 'v4': f.get('X86_V4')}))")


def _probe(extra: dict[str, str]) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k not in ("NPY_DISABLE_CPU_FEATURES", "NPY_ENABLE_CPU_FEATURES",
                                                            OPT_OUT)}
    env.update(extra)
    # -W error: numpy turns a target it does not know into an import warning, which must not happen here
    done = subprocess.run([sys.executable, "-W", "error", "-c", PROBE], capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_command_line_chooses_the_kernels_before_numpy_loads() -> None:
    """In a fresh interpreter, importing the command line sets the variable exactly on a Zen 4 CPU with numpy >= 2.4
    (on this project's machine: yes), and numpy then runs without its AVX-512 targets; opting out leaves them."""
    wanted = sort_environment({})
    got = _probe({})
    assert got["var"] == wanted.get("NPY_DISABLE_CPU_FEATURES")
    if wanted:
        assert got["v4"] is False
    kept = _probe({OPT_OUT: "keep"})
    assert kept["var"] is None
    if wanted:
        assert kept["v4"] is True                   # a Zen 4 CPU has AVX-512: numpy's default takes it
