"""Wall time of the audit suites themselves (issue 9: "the quick default suite under 2 minutes, the full suites
under 30 minutes on 2 cores").

    python -m benchmarks.bench_suites                              # quick default run + every suite at full budget
    python -m benchmarks.bench_suites --quick                      # the quick default run only (about 2 min)
    python -m benchmarks.bench_suites --write docs/performance.md  # also rewrite the generated section

Each run is the command a user types, in a subprocess, timed by wall clock, with the report in a temporary
directory: ``python -m dpverify run`` (the default suites, quick budgets, ``--jobs`` = all cores) and
``python -m dpverify run --full audits`` (every suite of the checkout, the default ones and the theorem
suites, at full budgets).  The report says whether every outcome matched its expectation, the time per suite
(the sum of its entries' own seconds; entries run side by side, so these add up to more than the wall time)
and the slowest entries -- where to look first.

With ``--write FILE`` the text between ``<!-- BEGIN suites -->`` and ``<!-- END suites -->`` of ``FILE`` is
replaced by the printed report; nothing in that section is typed by hand.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from benchmarks.bench_graph import (LoadMeter, background_busy, bench_arguments, report_header, verdict,
                                    wait_for_idle, write_section)

BEGIN, END = "<!-- BEGIN suites -->", "<!-- END suites -->"
ROOT = Path(__file__).resolve().parent.parent
QUICK_GOAL_S: float = 120.0        # quick default suites
FULL_GOAL_S: float = 30 * 60.0     # every suite at full budget
SLOWEST: int = 10


def _log(msg: str) -> None:
    print(f"[bench_suites] {msg}", file=sys.stderr, flush=True)


def time_run(args: list[str], label: str, seed: int) -> dict[str, Any]:
    """Run ``python -m dpverify run ARGS --seed SEED --out TMP`` from the checkout; wall time and the report."""
    with tempfile.TemporaryDirectory(prefix="bench-suites-") as tmp:
        cmd = [sys.executable, "-m", "dpverify", "run", *args, "--seed", str(seed), "--out", tmp]
        _log(f"{label}: {' '.join(cmd[1:-2])} ...")
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        report_path = Path(tmp) / "report.json"
        doc = json.loads(report_path.read_text()) if report_path.is_file() else None
    if doc is None:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise RuntimeError(f"{label}: dpverify run wrote no report (exit {proc.returncode}): {' / '.join(tail)}")
    entries = doc["entries"]
    per_suite: dict[str, list[float]] = defaultdict(list)
    for e in entries:
        per_suite[e["suite"]].append(float(e["seconds"]))
    slow = sorted(entries, key=lambda e: -float(e["seconds"]))[:SLOWEST]
    _log(f"{label}: {wall:.0f} s, exit {proc.returncode}")
    return {"label": label, "command": "python -m dpverify run " + " ".join(args), "wall": wall,
            "exit": proc.returncode, "entries": len(entries), "matched": doc["summary"]["matched"],
            "jobs": doc.get("jobs"), "per_suite": {k: (len(v), sum(v)) for k, v in per_suite.items()},
            "slowest": [(f"{e['suite']}/{e['id']}", e["kind"], float(e["seconds"]), e["outcome"]) for e in slow],
            "unexpected": [(f"{e['suite']}/{e['id']}", e.get("expectation"), e["outcome"], e.get("error"))
                           for e in entries if not e.get("matched")]}


def report(command: str, seed: int, runs: list[dict[str, Any]],
           busy: tuple[float | None, float | None, float | None], quick: bool) -> str:
    L = report_header(command, seed, busy)
    L.append("### Goals of issue 9")
    L.append("")
    L.append("| Run | Entries (as expected) | Wall time | Goal | Met |")
    L.append("|---|---|---|---|---|")
    goals = {"quick default suites": QUICK_GOAL_S, "every suite, full budgets": FULL_GOAL_S}
    for r in runs:
        goal = goals[r["label"]]
        ok = r["wall"] <= goal and r["exit"] == 0
        L.append(f"| `{r['command']}` ({r['jobs']} jobs) | {r['entries']} ({r['matched']}) | {r['wall']:.0f} s "
                 f"| ≤ {goal:.0f} s, every outcome as expected | {verdict(ok)} |")
    if quick:
        L.append("| every suite, full budgets | – | not run (`--quick`) | ≤ 1800 s | – |")
    L.append("")
    for r in runs:
        if r["unexpected"]:
            L.append(f"Entries of `{r['command']}` whose outcome was not the one expected:")
            L.append("")
            L.append("| Entry | Expected | Outcome | Error |")
            L.append("|---|---|---|---|")
            for name, expected, outcome, error in r["unexpected"]:
                first_line = str(error or "–").splitlines()[0][:160].replace("|", "\\|")     # one table cell
                L.append(f"| `{name}` | {expected} | {outcome} | {first_line} |")
            L.append("")
    for r in runs:
        L.append(f"### {r['label'].capitalize()}: time per suite and the {SLOWEST} slowest entries")
        L.append("")
        L.append("| Suite | Entries | Sum of the entries' seconds |")
        L.append("|---|---|---|")
        for suite, (n, secs) in sorted(r["per_suite"].items(), key=lambda kv: -kv[1][1]):
            L.append(f"| {suite} | {n} | {secs:.1f} s |")
        L.append("")
        L.append("| Entry | Kind | Seconds | Outcome |")
        L.append("|---|---|---|---|")
        for name, kind, secs, outcome in r["slowest"]:
            L.append(f"| `{name}` | {kind} | {secs:.1f} | {outcome} |")
        L.append("")
    L.append("The entries run side by side (`--jobs` = all cores, one sampling process each), so the per-suite "
             "sums exceed the wall time.")
    return "\n".join(L)


def main(argv: list[str] | None = None) -> int:
    args = bench_arguments("python -m benchmarks.bench_suites", __doc__,
                           "the quick default run only (skip the full-budget run of every suite)", argv)
    command = " ".join(["python -m benchmarks.bench_suites", *(sys.argv[1:] if argv is None else argv)])
    busy_before = wait_for_idle(args.wait_idle, "bench_suites")
    meter = LoadMeter()
    runs = [time_run([], "quick default suites", args.seed)]
    if not args.quick:
        runs.append(time_run(["--full", "audits"], "every suite, full budgets", args.seed))
    busy = (busy_before, meter.others(), background_busy())
    text = report(command, args.seed, runs, busy, args.quick)
    print(text)
    if args.write is not None:
        write_section(args.write, text, BEGIN, END)
        _log(f"wrote the generated section of {args.write}")
    return 0 if all(r["exit"] == 0 for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
