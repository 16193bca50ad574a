"""Overhead of auditing a DP library one release per call (:class:`dpverify.libraries.percall.PerCall`).

    python -m benchmarks.bench_libraries              # the stated budgets, workers=2 (about 1 min on 2 idle cores)
    python -m benchmarks.bench_libraries --quick      # a tenth of them (a smoke run)
    python -m benchmarks --only libraries --write docs/performance.md   # regenerate its section

Runs :func:`dpverify.audit` with ``workers=2`` on three per-call targets, each on one pair of neighbours at the
target's own ε, and prints a markdown table:

* ``diffprivlib Laplace`` -- ``DiffprivlibMechanism("Laplace", epsilon=1, sensitivity=1)`` on ``(0, 1)``;
* ``diffprivlib tools.mean`` -- ``DiffprivlibTool("mean", epsilon=1, bounds=(0, 1))`` on ten records, one
  replaced;
* ``OpenDP laplace`` -- ``OpenDPMeasurement(opendp_targets:laplace, scale=1)`` on ``(0, 1)``.

Columns (all times ``time.perf_counter`` seconds):

* ``samples`` -- fresh test samples per input (``search`` search samples per input besides); ``calls`` -- library
  releases made for the audit's batches (the contract probe's 4 × 256 excepted);
* ``wall s`` -- the audit's wall time (``result.seconds``: validation, contract probe, starting the workers,
  sampling, event search and tests);
* ``calls/s`` -- ``calls / wall``;
* ``library share of sampling`` -- ``library_seconds / sampling_seconds``: of the batches' time in the workers,
  the part inside the library calls (the rest: dpverify's per-call loop, stacking, output checks, event counting);
* ``dpverify share of wall`` -- ``1 - library_seconds / (wall × workers_used)``: of the core-seconds the audit
  held (its wall time on every worker it used), the part *not* spent inside the library.  It charges to dpverify
  everything else: the per-call loop, the workers' start, the event search, a core left idle while the other
  finishes.  The goal is at most 10 %.

The command line that produced the table is printed above it; ``--write FILE`` replaces the text between
``<!-- BEGIN libraries -->`` and ``<!-- END libraries -->`` of FILE.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import numpy as np

import dpverify
from benchmarks.bench_graph import (LoadMeter, background_busy, bench_arguments, report_header, verdict,
                                    wait_for_idle, write_section)
from dpverify.libraries.diffprivlib_targets import DiffprivlibMechanism, DiffprivlibTool
from dpverify.libraries.opendp_targets import OpenDPMeasurement

WORKERS = 2
GOAL = 0.10

#: name -> (target builder, pair, samples, search_samples, batch_size) at full budget
CASES: dict[str, tuple[Any, tuple[Any, Any], int, int, int]] = {
    "diffprivlib Laplace": (lambda: DiffprivlibMechanism("Laplace", epsilon=1.0, sensitivity=1.0), (0.0, 1.0),
                            1_000_000, 200_000, 100_000),
    "diffprivlib tools.mean": (lambda: DiffprivlibTool("mean", epsilon=1.0, bounds=(0.0, 1.0)),
                               (np.linspace(0.0, 1.0, 10), np.r_[np.linspace(0.0, 1.0, 10)[:9], 0.0]),
                               100_000, 20_000, 10_000),
    "OpenDP laplace": (lambda: OpenDPMeasurement("dpverify.libraries.opendp_targets:laplace", scale=1.0),
                       (0.0, 1.0), 100_000, 20_000, 10_000),
}


def run_case(name: str, scale: float, seed: int) -> dict[str, Any]:
    build, pair, samples, search, batch = CASES[name]
    samples, search, batch = (max(1000, int(v * scale)) for v in (samples, search, batch))
    mech = build()
    t0 = time.perf_counter()
    r = dpverify.audit(mech, [pair], epsilon=1.0, samples=samples, search_samples=search, batch_size=batch,
                       seed=seed, workers=WORKERS)
    wall = time.perf_counter() - t0
    lib = r.library
    assert lib is not None
    return {"name": name, "samples": samples, "search": search, "calls": lib.calls, "wall": r.seconds,
            "outer_wall": wall, "workers": r.workers, "calls_per_s": lib.calls / r.seconds,
            "library_share": lib.library_share, "dpverify_share": 1.0 - lib.library_seconds / (r.seconds * r.workers),
            "verdict": r.verdict.value}


def table(rows: list[dict[str, Any]]) -> str:
    head = ("| target | samples (search) | calls | wall s | workers | calls/s | library share of sampling "
            "| dpverify share of wall | verdict |")
    lines = [head, "|" + "---|" * 9]
    for r in rows:
        lines.append(f"| {r['name']} | {r['samples']:,} ({r['search']:,}) | {r['calls']:,} | {r['wall']:.2f} | "
                     f"{r['workers']} | {r['calls_per_s']:,.0f} | {100 * r['library_share']:.1f} % | "
                     f"{100 * r['dpverify_share']:.1f} % | {r['verdict']} |")
    return "\n".join(lines)


BEGIN, END = "<!-- BEGIN libraries -->", "<!-- END libraries -->"


def main(argv: list[str] | None = None) -> int:
    args = bench_arguments("python -m benchmarks.bench_libraries", __doc__, "a tenth of the budgets (smoke run)",
                           argv)
    command = " ".join(["python -m benchmarks.bench_libraries", *(sys.argv[1:] if argv is None else argv)])
    busy_before = wait_for_idle(args.wait_idle, "bench_libraries")
    meter = LoadMeter()
    rows = [run_case(n, 0.1 if args.quick else 1.0, args.seed) for n in CASES]
    busy = (busy_before, meter.others(), background_busy())
    worst = max(r["dpverify_share"] for r in rows)
    ok = worst <= GOAL and all(r["workers"] == WORKERS for r in rows)
    L = report_header(command, args.seed, busy)
    L += ["### Goal of issue 19", "",
          "| Goal | Measured | Met |", "|---|---|---|",
          f"| dpverify's share of the wall time of a per-call audit ≤ {100 * GOAL:.0f} %, both cores used | worst "
          f"{100 * worst:.1f} %, workers used: {', '.join(str(r['workers']) for r in rows)} | {verdict(ok)} |", "",
          "### Per-call audits of three library targets (one pair, the target's own ε, workers = 2)", "",
          table(rows), "",
          "dpverify's share of wall = 1 − library seconds / (wall × workers used): every core-second the audit held "
          "and did not spend inside the library (per-call loop, stacking, output checks, worker start, event "
          "search, a core idle at the end).  The library share of sampling is measured inside the workers."]
    text = "\n".join(L)
    print(text)
    if args.write is not None:
        write_section(args.write, text, BEGIN, END)
        print(f"wrote the generated section of {args.write}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
