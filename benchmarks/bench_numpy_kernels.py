"""numpy's default kernels against its AVX2 sorting kernels (``dpverify.execution.cpu_features``), side by side.

    python -m benchmarks.bench_numpy_kernels                               # print the tables
    python -m benchmarks.bench_numpy_kernels --write docs/performance.md   # also rewrite the generated section

The section written is the one of this machine's kind of CPU: ``numpy-kernels`` on an AMD Zen 4 (where dpverify
chooses the AVX2 sort), ``numpy-kernels-other-cpu`` elsewhere (where it keeps numpy's default kernels).

numpy picks its kernels at import, so each setting runs in a fresh interpreter of its own (``--child SETTING``,
alternating, ``--rounds`` times each, best or median over them as the tables say): *default* (numpy's own choice;
``DPVERIFY_NUMPY_AVX512=keep``) and *AVX2 sort* (``NPY_DISABLE_CPU_FEATURES`` set to
:data:`dpverify.execution.cpu_features.AVX512_TARGETS`, what the command line and the benchmarks choose on AMD Zen 4).
Measured in each: numpy's sorting functions and float64 ``exp`` / ``log`` (best of 5 calls), the event search
(:func:`dpverify.statistical.search.search_events`) of DP-Sniper's mechanisms (``benchmarks.bench_dpsniper``'s
``MAPPING``, first pair, 214,000 outputs per input: the search sample at 0.01 of DP-Sniper's budget; median of 3 after
one warm-up) with a fingerprint of its candidates (events, directions, counts; their scores, functions of the counts
through ``np.log`` and ``np.sqrt``, are compared apart), and whole one-process audits of three of them at that
budget (median of 2 after one warm-up; the ε bound each reached); and the default suites' quick run (``python -m
dpverify run``, not with ``--quick``): its wall time and which records' outcomes and ε bounds differ between the
settings.  Equal fingerprints and bounds: the kernels changed the time, not what was found.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import statistics
import subprocess
import sys
import time
import timeit
from pathlib import Path
from typing import Any, Callable

from benchmarks.alternating import alternate, publish
from benchmarks.bench_graph import LoadMeter, background_busy, bench_arguments, report_header, wait_for_idle
from dpverify.execution.cpu_features import AVX512_TARGETS, NUMPY_VARIABLES, OPT_OUT, slow_avx512_sort

BEGIN, END = "<!-- BEGIN numpy-kernels -->", "<!-- END numpy-kernels -->"
#: the block a run on a CPU that is not an AMD Zen 4 writes (the Zen 4 one keeps its own: both are evidence)
BEGIN_OTHER, END_OTHER = "<!-- BEGIN numpy-kernels-other-cpu -->", "<!-- END numpy-kernels-other-cpu -->"
ROOT = Path(__file__).resolve().parent.parent
SETTINGS = ("default", "avx2-sort")
#: the event searches timed (the DP-Sniper rows that missed the speed goal, and two that met it)
SEARCHES = ("NoisyHist1", "NoisyHist2", "ReportNoisyMax1", "SparseVectorTechnique3", "SparseVectorTechnique6",
            "Rappor", "OneTimeRappor", "LaplaceParallel", "SVT34Parallel", "PrefixSum", "NumericalSVT")
#: the whole audits timed
AUDITS = ("NoisyHist1", "LaplaceParallel", "PrefixSum")
SEARCH_N = 214_000
FRACTION = 0.01


def child_env(setting: str) -> dict[str, str]:
    """This process's environment with numpy's CPU-feature variables as ``setting`` wants them."""
    env = {k: v for k, v in os.environ.items() if k not in NUMPY_VARIABLES and k != OPT_OUT}
    if setting == "default":
        env[OPT_OUT] = "keep"
    else:
        env["NPY_DISABLE_CPU_FEATURES"] = AVX512_TARGETS
    return env


def _best(f: Callable[[], Any], number: int = 5) -> float:
    return min(timeit.repeat(f, number=1, repeat=number))


def measure(seed: int, quick: bool) -> dict[str, Any]:
    """Everything one setting measures, in this process (``--child``)."""
    import numpy as np

    import benchmarks.bench_dpsniper as B
    from benchmarks import dpsniper_runner as runner
    from dpverify.statistical.anchors import input_anchors
    from dpverify.statistical.search import search_events

    rng = np.random.default_rng(seed)
    x, big = rng.laplace(size=107_000), rng.random(1_000_000)
    prim = {"np.sort, 107,000 float64": _best(lambda: np.sort(x)),
            "np.argsort, 107,000 float64": _best(lambda: np.argsort(x)),
            "np.unique, 107,000 float64": _best(lambda: np.unique(x)),
            "np.partition, 107,000 float64": _best(lambda: np.partition(x, 53_500)),
            "np.exp, 1,000,000 float64": _best(lambda: np.exp(big)),
            "np.log, 1,000,000 float64": _best(lambda: np.log(big))}
    searches: dict[str, Any] = {}
    n = SEARCH_N // 10 if quick else SEARCH_N
    for name in SEARCHES[:3] if quick else SEARCHES:
        mech = B.MAPPING[name].build()
        x0, x1 = B.dpverify_pairs(name)[0]
        r = np.random.default_rng(seed)
        o0, o1 = np.asarray(mech(x0, n, r)), np.asarray(mech(x1, n, r))

        def run() -> Any:
            return search_events(o0, o1, n_test=2_000_000, z=1.28, delta=0.0, rng=np.random.default_rng(seed + 1),
                                 anchors=input_anchors(x0, x1))

        found = run()                                 # warm-up (first touch of the arrays, lazy imports)
        times = []
        for _ in range(3):
            t = time.perf_counter()
            run()
            times.append(time.perf_counter() - t)
        # the events, directions and counts (the scores are functions of the counts through np.log / np.sqrt,
        # whose last bit may differ between the kernels: compared apart)
        fingerprint = hashlib.sha1(repr([(c.event.description, c.direction, c.count_num, c.count_den)
                                    for c in found[0]]).encode()).hexdigest()[:12]
        searches[name] = {"seconds": statistics.median(times), "fingerprint": fingerprint,
                          "scores": [c.score for c in found[0]]}
    audits: dict[str, Any] = {}
    cfg = runner.scaled_config(FRACTION / 10 if quick else FRACTION)
    for name in AUDITS[:1] if quick else AUDITS:
        B.audit_one(name, {**cfg, **B.WARMUP_CONFIG}, seed, workers=1)
        times, bound = [], None
        for _ in range(2):
            t = time.perf_counter()
            res = B.audit_one(name, cfg, seed, workers=1)
            times.append(time.perf_counter() - t)
            bound = float(res.epsilon_lower_bound)
        audits[name] = {"seconds": statistics.median(times), "bound": bound}
    return {"primitives": prim, "searches": searches, "audits": audits,
            "disabled": os.environ.get("NPY_DISABLE_CPU_FEATURES")}


def run_child(setting: str, seed: int, quick: bool) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "benchmarks.bench_numpy_kernels", "--child", setting, "--seed", str(seed)]
    done = subprocess.run(cmd + (["--quick"] if quick else []), capture_output=True, text=True,
                          env=child_env(setting), check=False)
    if done.returncode != 0:
        raise RuntimeError(f"the {setting} child failed: " + " ".join(done.stderr.strip().splitlines()[-3:]))
    out = json.loads(done.stdout.strip().splitlines()[-1])
    wanted = child_env(setting).get("NPY_DISABLE_CPU_FEATURES")
    if out["disabled"] != wanted:      # the child must have loaded numpy under the setting it stands for
        raise RuntimeError(f"the {setting} child ran with NPY_DISABLE_CPU_FEATURES={out['disabled']!r}, not {wanted!r}")
    return out


def run_suite(setting: str, seed: int, out: Path) -> dict[str, Any]:
    """The default suites' quick run (``python -m dpverify run``, the README's first Quick start command) in a fresh
    interpreter under ``setting``: its wall time and every record's outcome and ε bound."""
    cmd = [sys.executable, "-m", "dpverify", "run", "--seed", str(seed), "--out", str(out)]
    t = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=child_env(setting), cwd=ROOT, check=False)
    seconds = time.perf_counter() - t
    report_file = out / "report.json"
    if not report_file.is_file():
        raise RuntimeError(f"the {setting} suite run wrote no report: " + " ".join(done.stderr.strip().splitlines()[-3:]))
    doc = json.loads(report_file.read_text(encoding="utf-8"))
    records = {f"{e.get('suite', '')}/{e.get('id', '')}": [e.get("outcome"), e.get("epsilon_lower_bound")]
               for e in doc["entries"]}
    return {"seconds": seconds, "records": records}


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}×" if b > 0 else "–"


def report(command: str, seed: int, rounds: list[dict[str, dict[str, Any]]],
           busy: tuple[float | None, float | None, float | None]) -> str:
    L = report_header(command, seed, busy)
    L += [f"CPU of this machine an AMD Zen 4 (`dpverify.execution.cpu_features.slow_avx512_sort`): "
          f"**{'yes' if slow_avx512_sort() else 'no'}**. Each setting ran {len(rounds)} times in a fresh interpreter, "
          "alternating; *default*: numpy's own kernels (`DPVERIFY_NUMPY_AVX512=keep`), *AVX2 sort*: "
          f"`NPY_DISABLE_CPU_FEATURES={AVX512_TARGETS}`. Ratio = default / AVX2 sort (above 1: the AVX2 sort is "
          "faster).", ""]

    def per(setting: str, part: str, key: str, field: str | None, best: bool) -> float:
        vals = [r[setting][part][key] if field is None else r[setting][part][key][field] for r in rounds]
        return min(vals) if best else statistics.median(vals)

    first = rounds[0]["default"]
    L += ["| numpy call (best of 5 calls, best over the rounds) | default, ms | AVX2 sort, ms | ratio |",
          "|---|---|---|---|"]
    for k in first["primitives"]:
        a, b = per("default", "primitives", k, None, True), per("avx2-sort", "primitives", k, None, True)
        L.append(f"| `{k}` | {a * 1e3:.2f} | {b * 1e3:.2f} | {_ratio(a, b)} |")
    L += ["", f"| event search (`search_events`, first pair, {SEARCH_N if first['searches'] else 0:,} outputs per "
              "input; median of 3, median over the rounds) | default, s | AVX2 sort, s | ratio | same events and "
              "counts | largest score difference |", "|---|---|---|---|---|---|"]
    same_all = True
    for k in first["searches"]:
        a, b = per("default", "searches", k, "seconds", False), per("avx2-sort", "searches", k, "seconds", False)
        fingerprints = {r[s]["searches"][k]["fingerprint"] for r in rounds for s in SETTINGS}
        same_all &= len(fingerprints) == 1
        sa, sb = rounds[0]["default"]["searches"][k]["scores"], rounds[0]["avx2-sort"]["searches"][k]["scores"]
        diff = max((abs(x - y) for x, y in zip(sa, sb)), default=0.0) if len(sa) == len(sb) else math.inf
        L.append(f"| {k} | {a:.3f} | {b:.3f} | {_ratio(a, b)} | {'yes' if len(fingerprints) == 1 else '**no**'} | "
                 f"{diff:.1e} |")
    L += ["", f"| whole audit (`benchmarks.bench_dpsniper.audit_one`, 0.01 of DP-Sniper's budget, 1 process; median "
              "of 2, median over the rounds) | default, s | AVX2 sort, s | ratio | ε bound (default / AVX2 sort) |",
          "|---|---|---|---|---|"]
    for k in first["audits"]:
        a, b = per("default", "audits", k, "seconds", False), per("avx2-sort", "audits", k, "seconds", False)
        ba, bb = rounds[0]["default"]["audits"][k]["bound"], rounds[0]["avx2-sort"]["audits"][k]["bound"]
        same_all &= ba == bb
        L.append(f"| {k} | {a:.2f} | {b:.2f} | {_ratio(a, b)} | {ba:.4g} / {bb:.4g} |")
    L += ["", f"Candidates and bounds the same under both settings: **{'yes' if same_all else 'no'}**."]
    if all("suite" in r[s] for r in rounds for s in SETTINGS):
        a = statistics.median(r["default"]["suite"]["seconds"] for r in rounds)
        b = statistics.median(r["avx2-sort"]["suite"]["seconds"] for r in rounds)
        ra, rb = rounds[0]["default"]["suite"]["records"], rounds[0]["avx2-sort"]["suite"]["records"]
        outcome = [k for k in ra if k in rb and ra[k][0] != rb[k][0]]
        bound = [k for k in ra if k in rb and ra[k][1] != rb[k][1]]
        L += ["", f"The default suites' quick run (`python -m dpverify run`, {len(ra)} records; wall of the whole "
                  f"command, median over the rounds): default {a:.1f} s, AVX2 sort {b:.1f} s ({_ratio(a, b)}); "
                  f"records whose outcome differs between the settings: **{len(outcome)}**"
                  + (f" ({', '.join(outcome)})" if outcome else "") + f"; whose ε bound differs: {len(bound)}"
                  + ("" if not bound else " (" + "; ".join(f"`{k}` {ra[k][1]!r} / {rb[k][1]!r}" for k in bound[:6])
                     + (", …" if len(bound) > 6 else "") + ")") + "."]
    return "\n".join(L)


def main(argv: list[str] | None = None) -> int:
    args_in = sys.argv[1:] if argv is None else argv
    if args_in[:1] == ["--child"]:
        rest = args_in[2:]              # (the setting is the child's environment)
        seed = int(rest[rest.index("--seed") + 1]) if "--seed" in rest else 0
        print(json.dumps(measure(seed, "--quick" in rest)))
        return 0
    args = bench_arguments("python -m benchmarks.bench_numpy_kernels", __doc__,
                           "a smoke run: fewer searches and audits at a tenth of the budget", argv)
    command = " ".join(["python -m benchmarks.bench_numpy_kernels", *args_in])
    busy_before = wait_for_idle(args.wait_idle, "bench_numpy_kernels")
    meter = LoadMeter()

    def one_setting(setting: str, r: int, tmp: Path) -> dict[str, Any]:
        got = run_child(setting, args.seed, args.quick)
        if not args.quick:
            got["suite"] = run_suite(setting, args.seed, tmp / f"{setting}-{r}")
        return got

    rounds = alternate("bench_numpy_kernels", SETTINGS, 1 if args.quick else 2, one_setting)
    text = report(command, args.seed, rounds, (busy_before, meter.others(), background_busy()))
    begin, end = (BEGIN, END) if slow_avx512_sort() else (BEGIN_OTHER, END_OTHER)
    publish("bench_numpy_kernels", text, args.write, begin, end)
    return 0


if __name__ == "__main__":
    sys.exit(main())
