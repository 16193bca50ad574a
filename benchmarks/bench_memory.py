"""glibc's malloc defaults against freed memory kept in the process (``dpverify.execution.memory``), side by side.

    python -m benchmarks.bench_memory                               # print the tables
    python -m benchmarks.bench_memory --write docs/performance.md   # also rewrite the generated section

Each setting runs in fresh interpreters (alternating, ``--rounds`` times each): *defaults* (``DPVERIFY_MALLOC=system``:
glibc maps every large block and unmaps it on free) and *kept* (what the command line, the benchmarks and the audit's
workers choose).  Measured in each: the first touch of a fresh 171 MB float64 array (1,070,000 rows of 20 columns, a
search half at 0.1 of DP-Sniper's budget), then of the next one right after the first is freed, then of one after a
pause of :data:`PAUSE` seconds (a host that takes back a guest's free pages does so after such a pause); and
dpverify's half of the DP-Sniper comparison (``python -m benchmarks.bench_dpsniper --no-dpsniper --no-profile``, 2
workers) on :data:`AUDITS` at ``--fraction`` of DP-Sniper's budget: each audit's wall time and ε bound (the setting
moves where memory comes from, never a result: the bounds must be the same).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.alternating import alternate, publish
from benchmarks.bench_graph import LoadMeter, background_busy, bench_arguments, report_header, wait_for_idle
from dpverify.execution.memory import OPT_OUT, USER_VARIABLES, malloc_setting

BEGIN, END = "<!-- BEGIN malloc -->", "<!-- END malloc -->"
ROOT = Path(__file__).resolve().parent.parent
SETTINGS = ("defaults", "kept")
#: the audits timed: DP-Sniper rows that missed the speed goal at 0.1 of its budget
AUDITS = ("NoisyHist1", "OneTimeRappor", "LaplaceParallel", "PrefixSum", "SparseVectorTechnique6")
FRACTION = 0.1
#: seconds between freeing an array and touching a fresh one
PAUSE = 3.0
TOUCH_ROWS, TOUCH_COLUMNS = 1_070_000, 20


def child_env(setting: str) -> dict[str, str]:
    """This process's environment without glibc's malloc variables, and with the opt-out for ``defaults``."""
    env = {k: v for k, v in os.environ.items() if k not in USER_VARIABLES and k != OPT_OUT}
    if setting == "defaults":
        env[OPT_OUT] = "system"
    return env


def touch() -> dict[str, Any]:
    """Milliseconds to allocate and fill a fresh array: the first, the next right after freeing it, one after
    :data:`PAUSE` seconds (run in the child, whose malloc setting is its environment's)."""
    import numpy as np

    def fill() -> float:
        t = time.perf_counter()
        a = np.empty((TOUCH_ROWS, TOUCH_COLUMNS))
        a.fill(1.0)
        seconds = time.perf_counter() - t
        del a
        return seconds * 1e3

    first, again = fill(), fill()
    time.sleep(PAUSE)
    return {"first": first, "again": again, "after_pause": fill(), "setting": malloc_setting()}


def run_touch(setting: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "benchmarks.bench_memory", "--child"], capture_output=True,
                          text=True, env=child_env(setting), cwd=ROOT, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"the {setting} child failed: " + " ".join(done.stderr.strip().splitlines()[-3:]))
    out = json.loads(done.stdout.strip().splitlines()[-1])
    if out["setting"].startswith("freed memory kept") != (setting == "kept"):
        raise RuntimeError(f"the {setting} child ran with {out['setting']!r}")
    return out


def run_audits(setting: str, fraction: float, names: tuple[str, ...], seed: int, out: Path) -> dict[str, Any]:
    """dpverify's half of the DP-Sniper comparison in a fresh interpreter under ``setting``: seconds and bound of
    each audit."""
    cmd = [sys.executable, "-m", "benchmarks.bench_dpsniper", "--no-dpsniper", "--no-profile", "--fraction",
           str(fraction), "--only", ",".join(names), "--seed", str(seed), "--json", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, env=child_env(setting), cwd=ROOT, check=False)
    if not out.is_file():                     # (its exit status says whether DP-Sniper's goal was met: not asked here)
        raise RuntimeError(f"the {setting} audits failed: " + " ".join(done.stderr.strip().splitlines()[-3:]))
    rows = json.loads(out.read_text(encoding="utf-8"))["dpverify"]
    return {k: {"seconds": v["seconds"], "bound": v["bound"]} for k, v in rows.items()}


def report(command: str, seed: int, fraction: float, rounds: list[dict[str, dict[str, Any]]],
           busy: tuple[float | None, float | None, float | None]) -> str:
    L = report_header(command, seed, busy)
    L += [f"Each setting ran {len(rounds)} times in fresh interpreters, alternating; *defaults*: "
          f"`{OPT_OUT}=system` (glibc maps each large block and unmaps it on free), *kept*: "
          "`dpverify.execution.memory.keep_freed_memory` (glibc's mallopt: every block from the heap, whose free "
          "top stays mapped up to 2 GB). Ratio = defaults / kept (above 1: faster with freed memory kept).", ""]
    L += [f"| first touch of a {TOUCH_ROWS * TOUCH_COLUMNS * 8 / 1e6:.0f} MB float64 array (allocate and fill; "
          "median over the rounds) | defaults, ms | kept, ms | ratio |", "|---|---|---|---|"]
    labels = {"first": "the process's first", "again": "the next, right after freeing it",
              "after_pause": f"the next, {PAUSE:g} s after freeing it"}
    for key, label in labels.items():
        a = statistics.median(r["defaults"]["touch"][key] for r in rounds)
        b = statistics.median(r["kept"]["touch"][key] for r in rounds)
        L.append(f"| {label} | {a:.0f} | {b:.0f} | {a / b:.2f}× |")
    first = rounds[0]["defaults"]["audits"]
    L += ["", f"| dpverify's half of the DP-Sniper comparison, {fraction:g} of its budget, 2 workers (wall of each "
              "audit: every round, then the median) | defaults, s | kept, s | ratio of the medians | ε bound |",
          "|---|---|---|---|---|"]
    same = True
    for k in first:
        a = [r["defaults"]["audits"][k]["seconds"] for r in rounds]
        b = [r["kept"]["audits"][k]["seconds"] for r in rounds]
        bounds = {r[s]["audits"][k]["bound"] for r in rounds for s in SETTINGS}
        same &= len(bounds) == 1
        ma, mb = statistics.median(a), statistics.median(b)
        L.append(f"| {k} | {', '.join(f'{x:.2f}' for x in a)} (median {ma:.2f}) | "
                 f"{', '.join(f'{x:.2f}' for x in b)} (median {mb:.2f}) | {ma / mb:.2f}× | "
                 + (f"{first[k]['bound']:.4g} (same in every run)" if len(bounds) == 1 else
                    "**differs**: " + ", ".join(f"{x:.4g}" for x in sorted(bounds))) + " |")
    L += ["", f"ε bounds the same under both settings in every run: **{'yes' if same else 'no'}**."]
    return "\n".join(L)


def main(argv: list[str] | None = None) -> int:
    args_in = sys.argv[1:] if argv is None else argv
    if args_in[:1] == ["--child"]:
        print(json.dumps(touch()))
        return 0
    args = bench_arguments("python -m benchmarks.bench_memory", __doc__,
                           "a smoke run: one round, two audits at 0.002 of DP-Sniper's budget", argv)
    command = " ".join(["python -m benchmarks.bench_memory", *args_in])
    fraction = 0.002 if args.quick else FRACTION
    names = AUDITS[:2] if args.quick else AUDITS
    busy_before = wait_for_idle(args.wait_idle, "bench_memory")
    meter = LoadMeter()

    def one_setting(setting: str, r: int, tmp: Path) -> dict[str, Any]:
        return {"touch": run_touch(setting),
                "audits": run_audits(setting, fraction, names, args.seed, tmp / f"{setting}-{r}.json")}

    rounds = alternate("bench_memory", SETTINGS, 1 if args.quick else 2, one_setting)
    text = report(command, args.seed, fraction, rounds, (busy_before, meter.others(), background_busy()))
    publish("bench_memory", text, args.write, BEGIN, END)
    return 0


if __name__ == "__main__":
    sys.exit(main())
