"""Overhead of auditing a DP library one release per call (:class:`dpverify.libraries.percall.PerCall`).

    python -m benchmarks.percall_overhead             # the stated budgets, workers=2 (about 30 s on 2 idle cores)
    python -m benchmarks.percall_overhead --quick     # a tenth of them (a smoke run)

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

The command line that produced the table is printed above it.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from typing import Any

import numpy as np

import dpverify
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


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.percall_overhead", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="a tenth of the budgets (smoke run)")
    p.add_argument("--seed", type=int, default=0, help="root seed of every audit (default 0)")
    p.add_argument("--only", default="", help="comma-separated case names (default: all)")
    args = p.parse_args(argv)
    names = [n for n in CASES if not args.only or n in args.only.split(",")]
    print("command: python -m benchmarks.percall_overhead " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:])))
    rows = [run_case(n, 0.1 if args.quick else 1.0, args.seed) for n in names]
    print()
    print(table(rows))
    worst = max(r["dpverify_share"] for r in rows)
    print(f"\ngoal: dpverify share of wall <= {100 * GOAL:.0f} % -- worst {100 * worst:.1f} %: "
          + ("met" if worst <= GOAL else "NOT met"))
    return 0 if worst <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
