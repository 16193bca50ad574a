"""Fast test of benchmarks/bench_scaling.py (issue 9, scaling curves): a tiny configuration, two points per
series, run into tmp_path -- the report's four tables, finite slopes, valid PNGs, and that --write replaces only
the scaling section."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from benchmarks import bench_scaling as bs

TINY = bs.Points(samples=(2_000, 4_000), pamst_nodes=(4, 5), lmst_nodes=(4, 5), graph_samples=2_000,
                 dpm_sizes=(20, 40), dpm_samples=400, interval_sizes=(25, 50), interval_samples=2_000,
                 exact_nodes=(3, 4), repeats=1)


@pytest.fixture(scope="module")
def curves():
    return bs.run_curves(TINY, seed=3)


def test_every_curve_has_its_points_and_positive_times(curves):
    assert list(curves) == list(bs.CURVES)
    for name, series in curves.items():
        assert series, name
        for s in series:
            assert len(s.xs) == 2 and len(s.seconds) == 2 and all(t > 0 for t in s.seconds)
            b, used, _ = bs.slope(s.xs, s.seconds)
            assert math.isfinite(b) and used == 2, (name, s.label)
            if name != "exact":                                 # audits: the search/test split is measured
                assert all(e["search"] > 0 and e["test"] is not None for e in s.extra), (name, s.label)


def test_slope_rule():
    assert bs.slope([1, 10, 100], [0.1, 1.0, 10.0])[0] == pytest.approx(1.0)
    # points at or below SLOPE_MIN_S are left out when two others remain
    b, used, fallback = bs.slope([1, 10, 100, 1000], [0.01, 0.1, 0.4, 1.6])
    assert used == 3 and not fallback and b == pytest.approx(math.log(16) / math.log(100))
    b, used, fallback = bs.slope([1, 10], [0.001, 0.01])
    assert fallback and used == 2 and b == pytest.approx(1.0)
    assert math.isnan(bs.slope([5], [1.0])[0])


def test_report_plots_and_write_section(curves, tmp_path: Path):
    images = tmp_path / "images"
    doc = tmp_path / "performance.md"
    doc.write_text("# Performance\n\nhand text\n\n<!-- BEGIN peers -->\nother section\n<!-- END peers -->\n\n"
                   f"## Scaling\n\n{bs.BEGIN}\nold scaling text\n{bs.END}\n\ntrailing text\n", encoding="utf-8")
    links = bs.write_plots(curves, images, doc.parent)
    assert set(links) == set(bs.CURVES)
    for name, link in links.items():
        assert link == f"images/scaling-{name}.png"
        png = tmp_path / link
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = bs.report("python -m benchmarks.bench_scaling --test", 3, False, TINY, curves, links, (0.0, 0.0, 0.0))
    for title, _, _ in bs.CURVES.values():
        assert f"### {title}" in text
    assert text.count("|---|") >= 4                       # one table per curve
    assert text.count("log-log slope **") == 7            # 2 + 2 + 2 series and the exact check
    for name in bs.CURVES:
        assert f"](images/scaling-{name}.png)" in text
    assert "slope **nan" not in text and "slope nan" not in text
    bs.write_section(doc, text, bs.BEGIN, bs.END)
    out = doc.read_text(encoding="utf-8")
    assert "old scaling text" not in out and text in out
    assert out.startswith("# Performance\n\nhand text\n\n<!-- BEGIN peers -->\nother section\n<!-- END peers -->\n")
    assert out.endswith(f"{bs.END}\n\ntrailing text\n")
    assert out.count(bs.BEGIN) == 1 and out.count(bs.END) == 1


def test_main_writes_only_into_the_given_places(monkeypatch, tmp_path: Path):
    monkeypatch.setattr(bs, "QUICK", TINY)
    doc = tmp_path / "perf.md"
    assert bs.main(["--quick", "--write", str(doc), "--images", str(tmp_path / "img")]) == 0
    out = doc.read_text(encoding="utf-8")
    assert out.count(bs.BEGIN) == 1 and "--images" in out and "(img/scaling-exact.png)" in out
    assert sorted(p.name for p in (tmp_path / "img").iterdir()) == sorted(f"scaling-{n}.png" for n in bs.CURVES)


def test_phase_clock_splits_the_audit_without_changing_it():
    import dpverify
    from algorithms.classic.laplace import Laplace

    pairs = [(0.0, 1.0)]
    plain = dpverify.audit(Laplace(0.1), pairs, 0.1, samples=20_000, search_samples=5_000, seed=7, workers=1)
    info = bs.timed_audit(Laplace(0.1), pairs, 0.1, 0.0, 20_000, 7)(0)
    assert info["search_samples"] == 20_000 and info["pairs"] == 1   # min(samples, SEARCH_CAP)
    assert info["search"] > 0 and info["test"] > 0
    clock = bs.PhaseClock(Laplace(0.1), 2 * 5_000)
    timed = dpverify.audit(clock, pairs, 0.1, samples=20_000, search_samples=5_000, seed=7, workers=1)
    assert timed.epsilon_lower_bound == plain.epsilon_lower_bound and clock.test_start is not None
    assert clock.epsilon == 0.1 and repr(clock) == repr(Laplace(0.1))
