"""Fast tests of benchmarks/bench_peers.py and benchmarks/statdp_runner.py (issue 9): the bound search over
StatDP's p-values, parsing of the runner's output, ratios and goals, the report, and smoke runs with tiny
budgets.  No network; the StatDP venv is used only if it already exists (else that test is skipped)."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from benchmarks import bench_peers as bp
from benchmarks import statdp_runner as sr


def test_next_probe_doubles_while_rejected_then_bisects():
    assert sr.next_probe(0.1, [], 0.05) == 0.1
    h = [(0.1, 0.0)]
    assert sr.next_probe(0.1, h, 0.05) == pytest.approx(0.2)
    h += [(0.2, 0.01), (0.4, 0.5)]
    assert sr.next_probe(0.1, h, 0.05) == pytest.approx(0.3)
    assert sr.search_bound(0.1, h, 0.05) == pytest.approx(0.2)


def test_next_probe_bisects_below_an_unrejected_claim_and_stops_at_the_cap():
    assert sr.next_probe(0.1, [(0.1, 0.6)], 0.05) == pytest.approx(0.05)
    assert sr.search_bound(0.1, [(0.1, 0.6)], 0.05) == 0.0
    assert sr.next_probe(1.0, [(sr.EPS_CAP, 0.0)], 0.05) is None


def test_statdp_patterns_have_the_input_length():
    class Sens:
        name = "ALL_DIFFER"
    for n in (5, 10):
        pats = sr.statdp_patterns(n, Sens())
        assert len(pats) == 8
        assert all(a.shape == (n,) and b.shape == (n,) for a, b in pats)
        assert all(np.abs(a - b).max() <= 1 for a, b in pats)  # ℓ∞ neighbours
    assert len(sr.statdp_patterns(5, "ONE_DIFFER")) == 2


def test_statdp_algorithms_run_without_pystatdp():
    q = np.ones(10)
    assert 0 <= sr.noisy_max_v1a(q[:5], 0.1) < 5
    assert 0 <= sr.SVT(q, 0.1, 1, 1.0) <= 10
    count, last = sr.iSVT4(q, 1.0, 1, 1.0)
    assert 0 <= count <= 10


def test_parse_runner_output():
    lines = ['{"warmup_seconds": 1.5}\n', "noise\n",
             json.dumps({"id": "svt", "verdict_p": 0.3, "bound": "inf", "probes": []}) + "\n",
             json.dumps({"id": "x", "error": "ValueError: boom"}) + "\n", '{"done": true}\n']
    res, warm, done = bp.parse_runner_output(lines)
    assert warm == 1.5 and done
    assert math.isinf(res["svt"]["bound"]) and res["x"]["error"].startswith("ValueError")
    assert bp.parse_runner_output(['{"warmup_seconds": 1}'])[2] is False


def _sd(seconds: float, bound: float, p: float = 0.0) -> dict:
    return {"verdict_seconds": seconds, "bound_seconds": 3 * seconds, "bound": bound, "verdict_p": p,
            "violation": p <= 0.05, "probes": [{}, {}, {}]}


def test_compare_goal_needs_speed_and_tightness():
    dp = {"seconds": 1.0, "bound": 0.2, "violation": True}
    r = bp.compare(dp, _sd(20.0, 0.15))
    assert r["speed"] == 20.0 and r["speed_bound"] == 60.0 and r["tighter"] and r["goal"]
    assert not bp.compare(dp, _sd(5.0, 0.15))["goal"]        # too slow
    assert not bp.compare(dp, _sd(20.0, 0.4))["goal"]        # StatDP's bound larger
    assert bp.compare(dp, None)["goal"] is None
    # the verdict run (dv) sets the verdict speed, the audit at the entry's budget (dp) the bound
    r = bp.compare({"seconds": 10.0, "bound": 0.2, "violation": True}, _sd(20.0, 0.15),
                   {"seconds": 1.0, "violation": True})
    assert r["speed"] == 20.0 and r["speed_bound"] == 6.0 and r["goal"]
    assert bp.compare(dp, {"error": "x"})["sd_error"] == "x"
    assert math.isnan(bp.ratio(1.0, 0.0)) and bp.ratio(6.0, 2.0) == 3.0
    # a fast verdict other than the expected one meets no goal, and says so
    missed = bp.compare(dp, _sd(20.0, 0.15), {"seconds": 1.0, "violation": False, "expect": "violation"})
    assert missed["speed"] == 20.0 and not missed["expected"] and not missed["goal"]
    assert bp.goal_cell(missed["goal"], missed["expected"]) == "**FAIL** (verdict)"
    assert bp.compare(dp, _sd(20.0, 0.15), {"seconds": 1.0, "violation": True, "expect": "violation"})["goal"]


def test_statdp_spec_follows_the_catalogue_claims():
    claims = {p.entry: 0.1 for p in bp.PEERS}
    spec = bp.statdp_spec([*bp.PEERS, bp.AS_SHIPPED], bp.QUICK, claims, 7)
    assert spec["seed"] == 7 and spec["cores"] == bp.WORKERS and spec["probes"] == bp.QUICK.probes
    ids = [t["id"] for t in spec["tasks"]]
    assert len(ids) == len(set(ids)) == len(bp.PEERS) + 1
    lap = spec["tasks"][0]
    assert lap["databases"] == [[0.0], [1.0]] and "num_input" not in lap
    assert all(t["algorithm"] in sr.ALGORITHMS for t in spec["tasks"])
    assert set(bp.catalogue_entries(claims)) == set(claims)  # every peer is a catalogue entry


def _fake_dp(ids):
    return {i: {"outcome": "pass", "violation": False, "expect": "pass", "bound": 0.05, "seconds": 0.5,
                "samples": 10, "search_samples": 10, "claim": 0.1, "alpha": 0.05, "true_epsilon": 0.1, "error": None}
            for i in ids}


def test_report_with_and_without_statdp(tmp_path):
    ids = [p.entry for p in bp.PEERS]
    samplers = [{"name": "Laplace(0.1)", "raw": "`laplace(n)`", "n": 10, "mech_seconds": 2.0, "raw_seconds": 1.0,
                 "rate": 5e6, "raw_rate": 1e7, "ratio": 2.0, "goal": True}]
    busy = (0.0, 0.0, 0.0)
    text = bp.report("cmd", bp.QUICK, 0, _fake_dp(ids), None, samplers, busy, "pip failed: no network",
                     bp.DEFAULT_VENV)
    assert "StatDP did not run: pip failed: no network" in text and "1 of 1 samplers" in text
    assert "Published figures" in text and "0.0998" in text
    results = {i: dict(_sd(10.0, 0.04, p=0.5), id=i, claim=0.1) for i in ids}
    results["noisy-max-laplace (pystatdp patterns)"] = dict(_sd(2.0, 0.2), id="x", claim=0.1,
                                                            probes=[{"d1": [1] * 5, "d2": [2, 2, 2, 0, 0, 0, 0]}])
    sd = {"results": results, "warmup": 1.0, "seconds": 100.0, "error": None}
    text = bp.report("cmd", bp.QUICK, 0, _fake_dp(ids), sd, samplers, busy, None, bp.DEFAULT_VENV)
    assert f"{len(ids)} of {len(ids)} mechanisms" in text and "20.0× (60.0×)" in text
    assert "pystatdp` as shipped" in text
    # every fake verdict is a pass: per-output rows need dpverify's pairs and stream length
    dv = {i: dict(d, n_pairs=9, samples_to_verdict=500_000, seconds=4.5) for i, d in _fake_dp(ids).items()}
    text = bp.report("cmd", bp.QUICK, 0, _fake_dp(ids), sd, samplers, busy, None, bp.DEFAULT_VENV, dv=dv)
    pairs, outputs = bp.statdp_outputs(next(p for p in bp.PEERS if p.entry == "histogram"), bp.QUICK)
    assert pairs == 2 and outputs == 2 * (2 * bp.QUICK.event_iterations + bp.QUICK.detect_iterations)
    row = next(line for line in text.splitlines() if line.startswith("| `histogram` | 9, 9.0 M, 4.50 s, 0.50 s"))
    assert row.endswith(f"| {9e6 / outputs:.1f}× | {10.0 / outputs * 1e6 / 0.5:.1f}× |")
    # a violation the stream did not certify is not counted among the correct passes, and its goal says why
    missed = "svt-unscaled-query-noise"
    dv[missed] = dict(dv[missed], expect="violation", violation=False)
    text = bp.report("cmd", bp.QUICK, 0, _fake_dp(ids), sd, samplers, busy, None, bp.DEFAULT_VENV, dv=dv)
    assert (f"1 is a violation that dpverify's stream did not certify within StatDP's test budget (verdict `pass`: "
            f"`{missed}`)") in text
    assert f"{len(ids) - 1} are correct at the claim" in text
    assert next(line for line in text.splitlines() if line.startswith(f"| `{missed}` /")).endswith(
        "| **FAIL** (verdict) |")
    profs = [{"id": "svt", "wall": 2.0, "phases": [("whole verdict (every stage)", 1.5), ("  event search", 0.75)],
              "dominant": ("  event search", 0.75), "sampler": 0.4},
             {"id": "histogram", "wall": 3.0, "phases": [("whole verdict (every stage)", 2.0), ("  event search", 0.5)],
              "dominant": ("  event search", 0.5), "sampler": None}]
    text = bp.report("cmd", bp.QUICK, 0, _fake_dp(ids), sd, samplers, busy, None, bp.DEFAULT_VENV, profiles=profs)
    assert "| Part | `svt` | `histogram` |" in text
    assert "| &nbsp;&nbsp;&nbsp;&nbsp;event search | 0.75 (50%) | 0.50 (25%) |" in text
    # StatDP's fake verdicts take 10 s: the goal allows 1 s; 0.4 s of own code over 2 workers is 20 % of it
    assert "| the goal's time: StatDP's verdict / 10 | 1.00 | 1.00 |" in text
    assert "| its own code over 2 workers, share of the goal's time | 20% | – |" in text
    doc = tmp_path / "performance.md"
    doc.write_text("# Performance\n\n<!-- BEGIN peers -->\nold\n<!-- END peers -->\n\nafter\n")
    bp.write_section(doc, text, bp.BEGIN, bp.END)
    new = doc.read_text()
    assert "\nold\n" not in new and new.endswith("after\n") and new.count(bp.BEGIN) == 1


def test_smoke_dpverify_half_and_samplers():
    out = bp.run_dpverify(["laplace", "histogram-scale-epsilon"], "quick", 0, workers=1, samples=(4000, 2000))
    assert out["laplace"]["error"] is None and out["laplace"]["seconds"] > 0
    assert out["histogram-scale-epsilon"]["violation"] and out["histogram-scale-epsilon"]["bound"] > 0.1
    seq = bp.run_dpverify(["laplace", "histogram-scale-epsilon"], "quick", 0, workers=1, samples=(64_000, 16_000),
                          sequential=True)
    assert seq["laplace"]["stages"] == seq["laplace"]["planned_stages"]               # no violation: every epoch
    broken = seq["histogram-scale-epsilon"]
    assert broken["violation"] and broken["stages"] == 1 < broken["planned_stages"]  # ε = 10 against 0.1
    assert "epoch 1/" in bp.fmt_verdict_run(broken) and "(expected violation)" in bp.fmt_verdict_run(broken)
    prof = bp.profile_verdict("histogram-scale-epsilon", dataclasses.replace(bp.QUICK, event_iterations=2000,
                                                                          detect_iterations=8000), 0)
    phases = dict(prof["phases"])
    whole = phases["whole verdict (the stream to its stop)"]
    assert whole > 0 and phases["    event search (search_events)"] > 0
    assert whole >= phases["  checkpoint searches: event search on the stream so far, every pair"]
    assert prof["wall"] >= whole and prof["sampler"] > 0 and prof["dominant"][1] > 0
    rows = bp.bench_samplers(dataclasses.replace(bp.QUICK, draws=2000, repeats=1), 0, names=["Laplace(0.1)"])
    assert len(rows) == 1 and rows[0]["ratio"] > 0


def test_statdp_runner_in_its_venv_if_present():
    py = bp.venv_python(bp.ROOT / bp.DEFAULT_VENV)
    if not py.exists():
        pytest.skip(f"no StatDP venv at {bp.DEFAULT_VENV} (python -m benchmarks.bench_peers creates it)")
    spec = bp.statdp_spec([bp.PEERS[2]], dataclasses.replace(bp.QUICK, event_iterations=2000,
                                                            detect_iterations=4000, probes=1),
                          {"histogram-scale-epsilon": 0.1}, 0)
    sd = bp.run_statdp(py, spec)
    assert sd["error"] is None, sd["error"]
    r = sd["results"]["histogram-scale-epsilon"]
    assert r["violation"] and len(r["probes"]) == 1


def test_bisection_stops_within_the_relative_tolerance():
    h = [(0.1, 0.6), (0.05, 0.0), (0.075, 0.0), (0.0875, 0.0), (0.09375, 0.0), (0.096875, 0.0)]
    assert sr.next_probe(0.1, h, 0.05) is None  # bracket (0.0969, 0.1]: 3 % of 0.1
    assert sr.search_bound(0.1, h, 0.05) == pytest.approx(0.096875)
