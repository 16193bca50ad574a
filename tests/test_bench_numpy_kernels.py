"""benchmarks/bench_numpy_kernels.py: the two settings' environments and the report of their rounds (the measuring
itself runs as ``python -m benchmarks.bench_numpy_kernels``, not in the tests)."""

from __future__ import annotations

import pytest

import benchmarks.bench_numpy_kernels as K
from dpverify.execution.cpu_features import AVX512_TARGETS, OPT_OUT


def test_child_environments(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NPY_DISABLE_CPU_FEATURES", "AVX2")
    monkeypatch.setenv("NPY_ENABLE_CPU_FEATURES", "X86_V3")
    default, avx2 = K.child_env("default"), K.child_env("avx2-sort")
    assert default[OPT_OUT] == "keep" and "NPY_DISABLE_CPU_FEATURES" not in default
    assert "NPY_ENABLE_CPU_FEATURES" not in default and "NPY_ENABLE_CPU_FEATURES" not in avx2
    assert avx2["NPY_DISABLE_CPU_FEATURES"] == AVX512_TARGETS and OPT_OUT not in avx2


def fake(setting: str, scale: float, fingerprint: str = "d", bound: float = 0.1) -> dict:
    return {"primitives": {"np.sort, 107,000 float64": 0.004 * scale},
            "searches": {"NoisyHist1": {"seconds": 0.2 * scale, "fingerprint": fingerprint, "scores": [0.5, 0.25 * scale]}},
            "audits": {"PrefixSum": {"seconds": 4.0 * scale, "bound": bound}}, "disabled": None}


def test_report_ratios_and_sameness() -> None:
    rounds = [{"default": fake("default", 2.0), "avx2-sort": fake("avx2-sort", 1.0)},
              {"default": fake("default", 3.0), "avx2-sort": fake("avx2-sort", 1.0)}]
    text = K.report("cmd", 0, rounds, (0.0, 0.0, 0.0))
    assert "| `np.sort, 107,000 float64` | 8.00 | 4.00 | 2.00× |" in text          # best over the rounds
    assert "| NoisyHist1 | 0.500 | 0.200 | 2.50× | yes | 2.5e-01 |" in text       # median over the rounds
    assert "| PrefixSum | 10.00 | 4.00 | 2.50× | 0.1 / 0.1 |" in text
    assert "the same under both settings: **yes**" in text
    rounds[1]["avx2-sort"]["searches"]["NoisyHist1"]["fingerprint"] = "other"
    text = K.report("cmd", 0, rounds, (0.0, 0.0, 0.0))
    assert "| **no** |" in text and "the same under both settings: **no**" in text
    rounds[1]["avx2-sort"]["searches"]["NoisyHist1"]["fingerprint"] = "d"
    rounds[0]["avx2-sort"]["audits"]["PrefixSum"]["bound"] = 0.2
    assert "the same under both settings: **no**" in K.report("cmd", 0, rounds, (0.0, 0.0, 0.0))


def test_report_of_the_suite_runs() -> None:
    def with_suite(setting: str, seconds: float, bound: float) -> dict:
        row = fake(setting, 1.0)
        row["suite"] = {"seconds": seconds, "records": {"s/a": ["pass", 0.5], "s/b": ["violation", bound]}}
        return row

    rounds = [{"default": with_suite("default", 30.0, 1.0), "avx2-sort": with_suite("avx2-sort", 20.0, 1.5)}]
    text = K.report("cmd", 0, rounds, (0.0, 0.0, 0.0))
    assert "default 30.0 s, AVX2 sort 20.0 s (1.50×)" in text
    assert "outcome differs between the settings: **0**; whose ε bound differs: 1 (`s/b` 1.0 / 1.5)." in text
    rounds[0]["avx2-sort"]["suite"]["records"]["s/a"][0] = "violation"
    assert "outcome differs between the settings: **1** (s/a)" in K.report("cmd", 0, rounds, (0.0, 0.0, 0.0))
    del rounds[0]["avx2-sort"]["suite"]
    assert "quick run" not in K.report("cmd", 0, rounds, (0.0, 0.0, 0.0))


def test_a_peer_shares_the_kernels_only_with_the_same_numpy_targets(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from benchmarks.peer_runner import peer_environment

    old = tmp_path / "old-python"                      # an interpreter whose numpy predates the X86_V4 names
    old.write_text('#!/bin/sh\necho \'["AVX2", "AVX512F", "AVX512_SKX", "AVX512_ICL"]\'\n')
    old.chmod(0o755)
    broken = tmp_path / "broken-python"
    broken.write_text("#!/bin/sh\nexit 3\n")
    broken.chmod(0o755)
    monkeypatch.setenv("NPY_DISABLE_CPU_FEATURES", AVX512_TARGETS)
    here = peer_environment(sys.executable)             # this project's numpy (>= 2.4 in its pins' range)
    import numpy as np
    if tuple(int(x) for x in np.__version__.split(".")[:2]) >= (2, 4):
        assert here["NPY_DISABLE_CPU_FEATURES"] == AVX512_TARGETS
    assert "NPY_DISABLE_CPU_FEATURES" not in peer_environment(old)
    assert "NPY_DISABLE_CPU_FEATURES" not in peer_environment(broken)
    monkeypatch.setenv("NPY_DISABLE_CPU_FEATURES", "AVX2")   # the user's own choice goes to every peer as it is
    assert peer_environment(old)["NPY_DISABLE_CPU_FEATURES"] == "AVX2"
