"""The malloc benchmark's arms and its report (the timed runs themselves are `python -m benchmarks.bench_memory`)."""

from __future__ import annotations

import pytest

from benchmarks import bench_memory


def test_the_arms_environments(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MALLOC_MMAP_MAX_", "7")          # a variable of the user's would decide both arms: dropped
    monkeypatch.setenv("DPVERIFY_MALLOC", "system")
    defaults, kept = bench_memory.child_env("defaults"), bench_memory.child_env("kept")
    assert defaults["DPVERIFY_MALLOC"] == "system" and "DPVERIFY_MALLOC" not in kept
    assert "MALLOC_MMAP_MAX_" not in defaults and "MALLOC_MMAP_MAX_" not in kept


def _round(seconds: tuple[float, float], bounds: tuple[float, float]) -> dict:
    touch = {"first": 400.0, "again": 20.0, "after_pause": 200.0, "setting": ""}
    return {s: {"touch": dict(touch, after_pause=touch["after_pause"] / (1 if s == "defaults" else 25)),
                "audits": {"NoisyHist1": {"seconds": t, "bound": b}}}
            for s, t, b in zip(bench_memory.SETTINGS, seconds, bounds)}


def test_report_ratios_and_bounds() -> None:
    text = bench_memory.report("cmd", 0, 0.1, [_round((4.0, 2.0), (0.1, 0.1)), _round((6.0, 3.0), (0.1, 0.1))],
                               (0.0, 0.0, 0.0))
    assert "| the next, 3 s after freeing it | 200 | 8 | 25.00× |" in text
    assert "| NoisyHist1 | 4.00, 6.00 (median 5.00) | 2.00, 3.00 (median 2.50) | 2.00× | 0.1 (same in every run) |" in text
    assert "in every run: **yes**" in text
    differs = bench_memory.report("cmd", 0, 0.1, [_round((4.0, 2.0), (0.1, 0.2))], (0.0, 0.0, 0.0))
    assert "**differs**: 0.1, 0.2" in differs and "in every run: **no**" in differs


def test_alternate_reverses_the_order_every_other_round(tmp_path) -> None:
    from benchmarks.alternating import alternate

    calls = []

    def one(setting: str, r: int, tmp) -> dict:
        calls.append((r, setting))
        assert tmp.is_dir()
        return {"r": r}

    rounds = alternate("test", ("a", "b"), 3, one)
    assert calls == [(0, "a"), (0, "b"), (1, "b"), (1, "a"), (2, "a"), (2, "b")]
    assert rounds == [{"a": {"r": r}, "b": {"r": r}} for r in range(3)]
