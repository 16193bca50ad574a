"""Fast tests of benchmarks/bench_dpsniper.py, benchmarks/dpsniper_runner.py and benchmarks/dpsniper_mechanisms.py
(issue 22): the mapping covers DP-Sniper's default set, the port of ``TruncatedGeometricMechanism`` has DP-Sniper's
output law, DP-Sniper's input pairs and budget, parsing of the runner's output, ratios and goals, the report.  No
network; DP-Sniper's venv is used only if it already exists (else that test is skipped)."""

from __future__ import annotations

import json
from pathlib import Path
import math

import numpy as np
import pytest
from scipy import stats

from benchmarks import bench_dpsniper as bd
from benchmarks import dpsniper_mechanisms as dm
from benchmarks import dpsniper_runner as rn

#: exp_default.py's run_dpsniper calls at the pinned commit, in order (class names)
EXP_DEFAULT_ORDER = ["LaplaceMechanism", "TruncatedGeometricMechanism", "NoisyHist1", "NoisyHist2",
                     "ReportNoisyMax1", "ReportNoisyMax2", "ReportNoisyMax3", "ReportNoisyMax4",
                     "SparseVectorTechnique1", "SparseVectorTechnique2", "SparseVectorTechnique3",
                     "SparseVectorTechnique4", "SparseVectorTechnique5", "SparseVectorTechnique6", "Rappor",
                     "OneTimeRappor", "LaplaceParallel", "SVT34Parallel", "PrefixSum", "NumericalSVT"]


def test_mapping_covers_the_default_set_and_builds():
    assert list(rn.DEFAULT_SET) == EXP_DEFAULT_ORDER
    assert set(bd.MAPPING) == set(rn.DEFAULT_SET) == set(rn.MODULES) == set(bd.PUBLISHED)
    x_rng = np.random.default_rng(0)
    for name, target in bd.MAPPING.items():
        mech = target.build()
        for x0, x1 in bd.dpverify_pairs(name):
            out = np.asarray(mech(x0, 7, x_rng))
            assert out.shape[0] == 7, name
        assert target.port == target.mechanism.startswith("benchmarks.dpsniper_mechanisms:")
    assert [n for n, t in bd.MAPPING.items() if t.port] == ["TruncatedGeometricMechanism"]


def test_pattern_pairs_follow_dpsniper_pattern_generator():
    # non-component-wise: one above, one below, each followed by its swap
    assert rn.pattern_pairs(1, "FLOAT", [-10, 10], False) == [([1.0], [0.0]), ([0.0], [1.0]), ([1.0], [2.0]),
                                                              ([2.0], [1.0])]
    pairs = rn.pattern_pairs(10, "FLOAT", [-10, 10], True, swapped=False)
    assert len(pairs) == 8 and all(len(a) == len(b) == 10 for a, b in pairs)
    assert pairs[4][1] == [2.0] * 5 + [0.0] * 5                          # half half
    assert pairs[7] == ([1.0] * 5 + [0.0] * 5, [0.0] * 5 + [1.0] * 5)    # X shape
    assert all(max(abs(u - v) for u, v in zip(a, b)) <= 1 for a, b in pairs)
    # clipping to the domain: [0, 5] keeps 0..2; INT stays int
    assert rn.pattern_pairs(1, "INT", [0, 5], False, swapped=False) == [([1], [0]), ([1], [2])]
    assert rn.pattern_pairs(1, "INT", [1, 5], False, swapped=False)[0] == ([1], [1])
    # the best pairs of DP-Sniper's reference log are among them (with the swap)
    svt = rn.pattern_pairs(10, "FLOAT", [-10, 10], True)
    assert ([0.0] * 5 + [1.0] * 5, [1.0] * 5 + [0.0] * 5) in svt


def test_scaled_config_and_samples_used():
    full = rn.scaled_config(1.0)
    assert full == rn.DEFAULT_CONFIG
    small = rn.scaled_config(0.002)
    assert small["n_train"] == 21_400 and small["n_final"] == 400_000 and small["n_check"] == 21_000
    assert small["n_check"] % 1000 == 0 and small["confidence"] == 0.9
    with pytest.raises(ValueError):
        rn.scaled_config(0.0)
    # Laplace: 4 ordered pairs
    assert rn.samples_used(full, 4) == 4 * (2 + 1 + 2) * 10_700_000 + 400_000_000
    # dpverify draws no more than DP-Sniper at the same fraction, on every mechanism
    for frac in (0.002, 0.01, 1.0):
        cfg = rn.scaled_config(frac)
        samples, search = bd.dpverify_budget(cfg)
        assert 2 * bd.FINALISTS * samples <= 2 * cfg["n_final"] and search == cfg["n_train"] + cfg["n_check"]
        for name in rn.DEFAULT_SET:
            n_unordered = len(bd.dpverify_pairs(name))
            assert bd.dpverify_outputs(n_unordered, samples, search) <= rn.samples_used(cfg, 2 * n_unordered), name


def _dpsniper_compute_f(c: int, eps: float = 0.1, n: int = 5) -> np.ndarray:
    """TruncatedGeometricMechanism._compute_f (dpsniper/mechanisms/geometric.py), re-typed."""
    k = math.ceil(math.log(2.0 / eps))
    d = int((math.pow(2, k + 1) + 1) * math.pow((math.pow(2, k) + 1), n - 1))
    z_le_c = np.atleast_2d(range(0, c))
    z_geq_c = np.atleast_2d(range(c, n))
    f = np.empty(n + 1, dtype=np.int64)
    f[:c] = np.multiply(np.power(2, k * (c - z_le_c)), np.power((np.power(2, k) + 1), n - (c - z_le_c)))
    f[c:n] = d - np.multiply(np.power(2, k * (z_geq_c - c + 1)), np.power((np.power(2, k) + 1), n - 1 - (z_geq_c - c)))
    f[-1] = d
    return f


def test_geosample_matches_dpsniper_definition():
    mech = dm.GeoSample()
    for c in range(6):
        f = dm.geosample_cdf(c)
        assert np.array_equal(f, _dpsniper_compute_f(c)), c
        assert np.all(np.diff(f) >= 0) and f[-1] == 17 * 9 ** 4
        # DP-Sniper's selection loop on fixed draws u = 1..d: the same z as searchsorted
        u = np.arange(1, f[-1] + 1)
        z = np.empty(u.shape[0])
        for idx in reversed(range(0, 6)):
            z[f[idx] >= u] = idx
        assert np.array_equal(z, np.searchsorted(f, u, side="left"))
        # the sampler counts that index by comparisons: the same outputs as searchsorted on the same draws
        draws = np.random.default_rng(7).integers(1, int(f[-1]) + 1, size=10_000)
        assert np.array_equal(mech(c, 10_000, np.random.default_rng(7)), np.searchsorted(f, draws, side="left"))
    # exact law: the largest log ratio over neighbouring counts is ln(1 + 2^-k) = ln(9/8)
    pmfs = [dm.geosample_pmf(c) for c in range(6)]
    worst = max(abs(math.log(a / b)) for c in range(5) for a, b in zip(pmfs[c], pmfs[c + 1]))
    assert worst == pytest.approx(math.log(9 / 8)) and mech.claimed_epsilon == pytest.approx(math.log(9 / 8))
    # samples follow the law (chi-square, level 1e-6 against a false alarm), contract: rng only
    out = mech(np.array([2]), 200_000, np.random.default_rng(1))
    counts = np.bincount(out.astype(int), minlength=6)
    assert stats.chisquare(counts, 200_000 * pmfs[2]).pvalue > 1e-6
    assert np.array_equal(mech(2, 50, np.random.default_rng(3)), mech(2, 50, np.random.default_rng(3)))
    with pytest.raises(ValueError):
        mech(6, 1, np.random.default_rng(0))


def test_parse_runner_output():
    lines = ['{"startup_seconds": 2.5, "config": {}}\n', "noise\n",
             '{"warmup_seconds": 0.5, "warmup_task": "NoisyHist2"}\n',
             json.dumps({"name": "NoisyHist2", "eps_lcb": "inf", "eps": 4.7, "seconds": 3.0}) + "\n",
             json.dumps({"name": "Rappor", "error": "ValueError: boom"}) + "\n", '{"done": true}\n']
    res, startup, done = bd.parse_runner_output(lines)
    assert done and startup["startup_seconds"] == 2.5 and startup["warmup_seconds"] == 0.5
    assert "NoisyHist2" not in res or "eps_lcb" in res["NoisyHist2"]     # the warm-up line is no result
    assert math.isinf(res["NoisyHist2"]["eps_lcb"]) and res["Rappor"]["error"].startswith("ValueError")
    assert bd.parse_runner_output(['{"startup_seconds": 1}'])[2] is False


def test_compare_goal_needs_tightness_and_speed():
    dp = {"bound": 0.1, "seconds": 1.0, "error": None}
    assert bd.compare(dp, {"eps_lcb": 0.09, "seconds": 20.0})["goal"] is True
    slow = bd.compare(dp, {"eps_lcb": 0.09, "seconds": 5.0})
    assert slow["goal"] is False and slow["tighter"] and not slow["faster"]
    loose = bd.compare(dp, {"eps_lcb": 0.2, "seconds": 50.0})
    assert loose["goal"] is False and loose["bound_ratio"] == pytest.approx(0.5) and loose["speed"] == 50.0
    assert bd.compare(dp, {"error": "x"})["goal"] is None and bd.compare(dp, None)["goal"] is None


def test_report_with_and_without_dpsniper():
    names = ["LaplaceMechanism", "TruncatedGeometricMechanism"]
    cfg = rn.scaled_config(0.002)
    dp = {n: {"bound": 0.09, "seconds": 0.5, "violation": False, "claim": 0.1, "samples": 1, "search_samples": 1,
              "outputs": 10 ** 6, "witness": "1 / 0", "error": None} for n in names}
    ds = {"results": {"LaplaceMechanism": {"name": "LaplaceMechanism", "eps_lcb": 0.05, "eps": 0.1, "seconds": 10.0,
                                           "samples": 2 * 10 ** 6, "a1": [1.0], "a2": [0.0]},
                      "TruncatedGeometricMechanism": {"name": "TruncatedGeometricMechanism", "error": "boom"}},
          "startup": {"startup_seconds": 1.0}, "seconds": 12.0, "error": None}
    text = bd.report("cmd", 0.002, cfg, 0, names, dp, ds, (0.0, 0.0, 0.0), None, bd.DEFAULT_VENV,
                     {"torch": "2.13.0+cpu", "numpy": "2"}, smoke=True)
    assert "Smoke run at 0.002" in text and "0.05 (1 / 0), 10.0 s" in text and "error: boom" in text
    assert "met on **1 of 1** mechanisms" in text and bd.DPSNIPER_COMMIT[:12] in text
    none = bd.report("cmd", 0.01, cfg, 0, names, dp, None, (0.0, 0.0, 0.0), "skipped", bd.DEFAULT_VENV, None, False)
    assert "DP-Sniper did not run: skipped" in none and "Smoke run" not in none
    assert "not evaluated, DP-Sniper did not run" in none and "met on" not in none.split("published")[0]
    # dp's bounds (0.09) against the published ones (Laplace 0.0968, geometric 0.1156): below both
    assert "published bound (its reference run at the full default budget) on **0 of 2**" in none
    above = {n: {**dp[n], "bound": 0.1} for n in names}
    text = bd.report("cmd", 0.1, cfg, 0, names, above, None, (0.0, 0.0, 0.0), "skipped", bd.DEFAULT_VENV, None, False)
    assert "on **1 of 2** mechanisms, dpverify drawing at most" in text     # 0.1 >= 0.0968, < 0.1156


def test_section_option_names_the_markers(tmp_path):
    """``--section`` writes between its own markers and leaves the side-by-side section alone."""
    assert bd.markers("dpsniper") == (bd.BEGIN, bd.END)
    doc = tmp_path / "performance.md"
    doc.write_text(f"# P\n\n{bd.BEGIN}\nside by side\n{bd.END}\n\n<!-- BEGIN dpsniper-published -->\nold\n"
                   "<!-- END dpsniper-published -->\n")
    bd.main(["--fraction", "0.0005", "--only", "TruncatedGeometricMechanism", "--no-dpsniper", "--no-profile",
             "--section", "dpsniper-published", "--write", str(doc)])
    new = doc.read_text()
    assert "side by side" in new and "\nold\n" not in new and "| TruncatedGeometricMechanism |" in new


def test_ensure_venv_without_a_mirror_says_what_is_missing(tmp_path):
    with pytest.raises(bd.VenvError, match="--mirror DIR or DPSNIPER_MIRROR"):
        bd.ensure_venv(tmp_path / "none", None)


def test_smoke_dpverify_half():
    cfg = rn.scaled_config(0.0005)
    out = bd.run_dpverify(["LaplaceMechanism", "NoisyHist2"], cfg, seed=0, workers=1)
    assert out["NoisyHist2"]["error"] is None and out["NoisyHist2"]["bound"] > 1.0   # true ε = 10 on these pairs
    assert 0 <= out["LaplaceMechanism"]["bound"] <= 0.1 + 1e-9                      # a valid bound at ε = 0.1


def test_dpsniper_runner_in_its_venv_if_present():
    venv = bd.ROOT / bd.DEFAULT_VENV
    if bd.venv_ready(venv) is None:
        pytest.skip(f"no DP-Sniper venv at {bd.DEFAULT_VENV} (python -m benchmarks.bench_dpsniper --mirror DIR "
                    "creates it from a git copy of eth-sri/dp-sniper)")
    ds = bd.run_dpsniper(bd.venv_python(venv), {"fraction": 0.0002, "processes": 1, "seed": 0,
                                                 "tasks": ["NoisyHist2"]})
    assert ds["error"] is None, ds["error"]
    assert ds["startup"]["warmup_task"] == "NoisyHist2" and ds["startup"]["warmup_seconds"] > 0
    r = ds["results"]["NoisyHist2"]
    assert r["eps_lcb"] > 0.1 and r["samples"] == rn.samples_used(rn.scaled_config(0.0002), 4)
    # DP-Sniper's own PatternGenerator lists the pairs of pattern_pairs, in the same order
    assert [(p["a1"], p["a2"]) for p in r["pairs"]] == [tuple(map(lambda a: [float(v) for v in a], pr))
                                                        for pr in rn.pattern_pairs(5, "INT", [0, 10], False)]


def test_rappor_bloom_bits_match_dpsniper_mmh3_if_present():
    """DP-Sniper's Rappor hashes ``str(value)`` with ``mmh3.hash(.., seed=i) % filter_size``; the catalogue's
    :func:`algorithms.classic.rappor.bloom_bits` implements murmur3 itself: same filters on DP-Sniper's domain."""
    import subprocess

    from algorithms.classic.rappor import bloom_bits
    venv = bd.ROOT / bd.DEFAULT_VENV
    if bd.venv_ready(venv) is None:
        pytest.skip(f"no DP-Sniper venv at {bd.DEFAULT_VENV} (python -m benchmarks.bench_dpsniper --mirror DIR "
                    "creates it from a git copy of eth-sri/dp-sniper)")
    code = ("import json, mmh3; print(json.dumps([sorted({mmh3.hash(str(v), seed=i) % 20 for i in range(4)}) "
            "for v in range(-10, 11)]))")
    out = subprocess.run([str(bd.venv_python(venv)), "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == [sorted(set(bloom_bits(v, 4, 20))) for v in range(-10, 11)]


#: run in DP-Sniper's venv: outputs of DP-Sniper's own mechanism on given inputs, re-encoded as the catalogue's
#: classes encode them (the value-releasing SVTs: codes 1 / 0 / -1 then values; SVT34Parallel: Alg. 3's codes and
#: values, then Alg. 4's codes), reduced to the features of ``_features``
_VENV_LAW = r'''
import json, sys
import numpy as np
sys.path.insert(0, "benchmarks")
import dpsniper_runner as rn

def codes_values(x, false, aborted):
    codes = np.where(x == aborted, -1.0, np.where(x == false, 0.0, 1.0))
    return np.hstack([codes, np.where(codes == 1.0, x, 0.0)])

def features(o):
    o = np.asarray(o, dtype=np.float64).reshape(o.shape[0], -1)
    f = np.hstack([o, np.abs(o), o == 1.0, o == -1.0]).astype(np.float64)
    return f.mean(axis=0).tolist(), f.var(axis=0).tolist()

spec = json.loads(sys.stdin.read())
np.random.seed(spec["seed"])
out = {}
for name, inputs in spec["inputs"].items():
    mech = rn.build(name)[0]
    rows = []
    for a in inputs:
        o = mech.m(np.asarray(a, dtype=np.int64 if rn.DEFAULT_SET[name]["domain"][1] == "INT" else float), spec["n"])
        if name == "SparseVectorTechnique3":
            o = codes_values(o, -1000.0, -2000.0)
        elif name == "SVT34Parallel":
            o = np.hstack([codes_values(o[:, :10], -1000.0, -2000.0), o[:, 10:]])
        elif name == "NumericalSVT":
            o = codes_values(np.where(o == 0.0, -3000.0, o), -3000.0, -1000.0)
        rows.append(features(o))
    out[name] = rows
print(json.dumps(out))
'''


def _features(o: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    o = np.asarray(o, dtype=np.float64).reshape(o.shape[0], -1)
    f = np.hstack([o, np.abs(o), o == 1.0, o == -1.0]).astype(np.float64)
    return f.mean(axis=0), f.var(axis=0)


def test_mapped_mechanisms_have_dpsniper_output_law_if_present():
    """Every mechanism of :data:`MAPPING` against DP-Sniper's own class on the inputs of its first pattern: per
    output column the means of the value, its absolute value and the indicators of 1 and -1 agree (two-sample z,
    |z| < 6 on 20 000 outputs per input and side: a false alarm over the ~1500 comparisons has probability < 1e-5)."""
    import subprocess
    venv = bd.ROOT / bd.DEFAULT_VENV
    if bd.venv_ready(venv) is None:
        pytest.skip(f"no DP-Sniper venv at {bd.DEFAULT_VENV} (python -m benchmarks.bench_dpsniper --mirror DIR "
                    "creates it from a git copy of eth-sri/dp-sniper)")
    n = 20_000
    inputs = {name: [np.asarray(x).reshape(-1).tolist() for x in bd.dpverify_pairs(name)[0]] for name in bd.MAPPING}
    proc = subprocess.run([str(bd.venv_python(venv)), "-c", _VENV_LAW], input=json.dumps(
        {"seed": 1, "n": n, "inputs": inputs}), capture_output=True, text=True, cwd=str(bd.ROOT))
    assert proc.returncode == 0, proc.stderr[-2000:]
    theirs = json.loads(proc.stdout.strip().splitlines()[-1])
    rng = np.random.default_rng(2)
    worst = {}
    for name, target in bd.MAPPING.items():
        mech = target.build()
        for x, (m_ds, v_ds) in zip(bd.dpverify_pairs(name)[0], theirs[name]):
            m_dv, v_dv = _features(mech(x, n, rng))
            m_ds, v_ds = np.asarray(m_ds), np.asarray(v_ds)
            assert m_dv.shape == m_ds.shape, (name, m_dv.shape, m_ds.shape)
            se = np.sqrt((v_dv + v_ds) / n)
            z = np.where(se > 0, np.abs(m_dv - m_ds) / np.where(se > 0, se, 1.0), np.abs(m_dv - m_ds) * 1e9)
            worst[name] = max(worst.get(name, 0.0), float(z.max()))
    assert max(worst.values()) < 6.0, {k: round(v, 2) for k, v in worst.items() if v >= 6.0}


def test_driver_registers_dpsniper_and_passes_its_options():
    import benchmarks.__main__ as drv
    assert "dpsniper" in drv.BENCHMARKS
    cmd = drv.command_for("dpsniper", drv.parse(["--quick", "--only", "dpsniper", "--no-dpsniper",
                                                 "--dpsniper-mirror", "M", "--dpsniper-venv", "V",
                                                 "--dpsniper-fraction", "0.002"]))
    assert cmd[1:3] == ["-m", "benchmarks.bench_dpsniper"] and "--quick" in cmd and "--no-dpsniper" in cmd
    assert cmd[cmd.index("--mirror") + 1] == "M" and cmd[cmd.index("--venv") + 1] == "V"
    assert cmd[cmd.index("--fraction") + 1] == "0.002"
    assert "--mirror" not in drv.command_for("peers", drv.parse(["--dpsniper-mirror", "M"]))


def _profile(wall: float, sampler: float | None, **seconds: float):
    from benchmarks.profiling import AUDIT_PHASES, Profile
    return Profile(AUDIT_PHASES, wall, {p.key: seconds.get(p.key, 0.0) for p in AUDIT_PHASES}, sampler,
                   sorting=wall / 4)


def test_profile_section_renders_with_and_without_dpsniper_times():
    names = ["LaplaceMechanism", "NoisyHist1", "SparseVectorTechnique1"]
    profiles = {"LaplaceMechanism": _profile(2.0, 0.5, audit=1.9, search=1.0, events=0.3, scalar=0.2, count=0.9,
                                             sampling=1.5),
                "NoisyHist1": _profile(3.0, 0.1, audit=3.0, search=2.8, events=2.5, scalar=2.0, lr=0.4,
                                       sampling=0.2),
                "SparseVectorTechnique1": "MechanismError: boom"}
    ds_results = {"LaplaceMechanism": {"seconds": 2.0}, "NoisyHist1": {"seconds": 10.0}}
    text = "\n".join(bd.profile_section(names, profiles, ds_results))
    assert "every mechanism that misses the goal" in text and "| SparseVectorTechnique1 | error: MechanismError" in text
    lap = next(line for line in text.splitlines() if line.startswith("| LaplaceMechanism"))
    # 0.5 s of sampling against DP-Sniper's 2 s: 25 % > 2 cores / 10 = 20 %: out of reach
    assert lap.count("|") == 13 and "| sampling batches (75%) |" in lap and "0.50 s (25%) **> 20%**" in lap
    assert lap.endswith("| 0.50 s (25%; 25%) |")              # sorting: a quarter of the wall, 0.5 s of 2 s
    assert "Sorting takes 25% to 25% of the profiled wall (median 25%)." in text
    hist = next(line for line in text.splitlines() if line.startswith("| NoisyHist1"))
    assert "2.50 (scalar-feature events 2.00, LR fit 0.40)" in hist and "0.10 s (1%) |" in hist
    assert "The dominant phase is sampling batches on 1 of 2 profiled mechanisms (goal missed), scalar-feature " \
           "events on 1." in text
    assert "exceeds 20% of DP-Sniper's time on 1 of the 2 with DP-Sniper's time (LaplaceMechanism)" in text
    # no DP-Sniper data: seconds, no share, a sentence that says so
    alone = "\n".join(bd.profile_section(names, profiles, {}, "all"))
    # the floor without a share, sorting with its share of the wall only
    assert "every mechanism (cProfile" in alone and "| 0.50 s | 0.50 s (25%) |" in alone and "**>" not in alone
    assert "DP-Sniper's times are missing" in alone
    assert "No mechanism was profiled" in "\n".join(bd.profile_section(names, {}, {}))
    fl = bd.sampling_floor(profiles["NoisyHist1"], None)
    assert fl["floor"] == 0.1 and math.isnan(fl["share"]) and fl["out_of_reach"] is None


def test_report_and_json_with_profiles_and_missing_dpsniper(tmp_path):
    names = ["LaplaceMechanism"]
    cfg = rn.scaled_config(0.002)
    dp = {"LaplaceMechanism": {"bound": math.nan, "seconds": math.nan, "violation": None, "claim": 0.1, "samples": 1,
                               "search_samples": 1, "outputs": None, "witness": None, "error": "boom"}}
    profiles = {"LaplaceMechanism": _profile(1.0, 0.2, audit=1.0, search=0.5, count=0.4, sampling=0.6)}
    text = bd.report("cmd", 0.002, cfg, 0, names, dp, None, (0.0, 0.0, 0.0), "skipped", bd.DEFAULT_VENV, None, True,
                     profiles, "all")
    assert "### Where dpverify's time goes: every mechanism" in text and "| LaplaceMechanism | 1.00 |" in text
    assert "Where dpverify's time goes" not in bd.report("cmd", 0.002, cfg, 0, names, dp, None, (0.0, 0.0, 0.0),
                                                         "skipped", bd.DEFAULT_VENV, None, True, profiles, "none")
    rec = bd.json_record("cmd", 0.002, cfg, 0, dp, None, "skipped", {"LaplaceMechanism": bd.compare(dp[names[0]], None)},
                         {**profiles, "NoisyHist1": "boom"})
    out = json.loads(json.dumps(rec, allow_nan=False))
    p = out["profiles"]["LaplaceMechanism"]
    assert p["dominant"] == "sampling" and p["floor"] == 0.2 and p["out_of_reach"] is None
    assert out["profiles"]["NoisyHist1"] == {"error": "boom"}


def test_smoke_profile_and_main_without_dpsniper(tmp_path):
    cfg = rn.scaled_config(0.0005)
    prof = bd.profile_dpverify("NoisyHist2", cfg, 0)
    sec = prof.seconds
    assert all(v >= 0 for v in sec.values()) and sec["audit"] <= prof.wall
    assert sum(sec[p.key] for p in prof.top_level()) <= prof.wall and prof.sampler and prof.sampler > 0
    doc = tmp_path / "performance.md"
    doc.write_text(f"# P\n\n{bd.BEGIN}\nold\n{bd.END}\n")
    out = tmp_path / "r.json"
    code = bd.main(["--fraction", "0.0005", "--only", "NoisyHist2", "--no-dpsniper", "--profile", "all",
                    "--write", str(doc), "--json", str(out)])
    assert code == 1                                                      # no DP-Sniper: no goal met
    new = doc.read_text()
    assert "| NoisyHist2 |" in new and "The dominant phase is" in new and "--profile all" in new
    rec = json.loads(out.read_text())
    assert rec["profiles"]["NoisyHist2"]["wall"] > 0 and rec["dpsniper_error"].startswith("skipped")


def test_repeat_table_counts_runs_and_spreads():
    """``--repeat``'s table: per mechanism, the runs that met the goal and the spread of each figure; the summary
    counts mechanisms met in every run, some, none, and each run's total."""
    from benchmarks.dpsniper_repeats import repeat_table, spread
    assert spread([1.0, 1.0]) == "1" and spread([]) == "–" and spread([math.nan]) == "–"
    assert spread([3.0, 1.0]) == "1 – 3" and spread([3.0, 1.0, 2.0, 10.0]) == "1 – 2.5 – 10"
    dp = {"bound": 0.1, "seconds": 1.0}
    fast, slow = {"eps_lcb": 0.09, "seconds": 20.0}, {"eps_lcb": 0.09, "seconds": 5.0}
    runs = [{"A": bd.compare(dp, fast), "B": bd.compare(dp, fast), "C": bd.compare(dp, slow), "D": bd.compare(dp, None)},
            {"A": bd.compare(dp, fast), "B": bd.compare(dp, slow), "C": bd.compare(dp, slow), "D": bd.compare(dp, None)}]
    text = "\n".join(repeat_table(["A", "B", "C", "D"], runs, bd.SPEED_GOAL))
    assert "| A | 2 of 2 (✓✓) | 20.0× |" in text and "| B | 1 of 2 (✓✗) | 5.0× – 20.0× |" in text
    assert "| C | 0 of 2 (✗✗) |" in text and "| D | n/a |" in text
    assert "met in **every run on 1 of 3** mechanisms, in some runs on 1, in none on 1; per run: 2 of 3, 1 of 3." in text
    assert repeat_table(["D"], runs, 10.0)[-1].startswith("Goal not evaluated")


def test_repeat_option_runs_each_half_k_times(tmp_path, monkeypatch):
    """``--repeat 2`` runs both halves twice, writes the first run's table and the runs' table, and records every
    run in the JSON; ``--repeat 0`` is refused with a message."""
    calls = {"dp": 0, "ds": 0}

    def fake_dp(names, cfg, seed, log=None):
        calls["dp"] += 1
        return {n: {"bound": 0.1, "seconds": 1.0 * calls["dp"], "violation": False, "claim": 0.1, "samples": 1,
                    "search_samples": 1, "outputs": 10 ** 6, "witness": "1 / 0", "error": None} for n in names}

    def fake_ds(py, spec, log=None):
        calls["ds"] += 1
        return {"results": {n: {"name": n, "eps_lcb": 0.05, "eps": 0.1, "seconds": 15.0, "samples": 2 * 10 ** 6,
                                "a1": [1.0], "a2": [0.0]} for n in spec["tasks"]},
                "startup": {"startup_seconds": 1.0}, "seconds": 16.0, "error": None}

    monkeypatch.setattr(bd, "run_dpverify", fake_dp)
    monkeypatch.setattr(bd, "run_dpsniper", fake_ds)
    monkeypatch.setattr(bd, "ensure_venv", lambda venv, mirror, log: Path("python"))
    monkeypatch.setattr(bd, "venv_ready", lambda venv: {"torch": "t", "numpy": "n"})
    out = tmp_path / "r.json"
    rc = bd.main(["--only", "LaplaceMechanism", "--repeat", "2", "--no-profile", "--json", str(out)])
    assert calls == {"dp": 2, "ds": 2} and rc == 1            # 15 s / 2 s misses the goal in the second run
    rec = json.loads(out.read_text())
    assert len(rec["runs"]) == 2 and rec["runs"][1]["rows"]["LaplaceMechanism"]["goal"] is False
    assert bd.main(["--only", "LaplaceMechanism", "--repeat", "0", "--no-dpsniper"]) == 2
