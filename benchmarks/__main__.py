"""Every benchmark in one command (issue 9): ``python -m benchmarks`` (also ``dpverify bench``).

    python -m benchmarks --write docs/performance.md             # all sections, full budgets (about 1 hour)
    python -m benchmarks --quick --write docs/performance.md     # all sections, smoke budgets
    python -m benchmarks --only peers,suites                     # some of them

Runs each benchmark below as its own process (``python -m benchmarks.<name> ...``), one after the other, so
that none times another's imports or memory, and passes on ``--quick``, ``--seed``, ``--write`` and
``--wait-idle`` (``--no-statdp`` and ``--venv`` go to ``peers``; ``--no-dpsniper``, ``--dpsniper-venv``,
``--dpsniper-mirror`` and ``--dpsniper-fraction`` to ``dpsniper``).  Each rewrites only its own section of the
``--write`` file.  Exit status 0 when every benchmark met its goals, 1 otherwise (every benchmark still runs).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: name -> what it measures (module benchmarks.bench_<name>), in the order of docs/performance.md
BENCHMARKS: dict[str, str] = {
    "graph": "PAMST samplers: one tree on G(1000, 0.9), trees per second (issue 3)",
    "exact": "exact PAMST output law on K6 and 10-vertex graphs (issue 4)",
    "dpm": "one DPM run on Synth-10d / Synth-100d (issue 6)",
    "peers": "dpverify and StatDP side by side; sampler throughput (issue 9)",
    "scaling": "audit time against samples, graph size, data size; exact-check time (issue 9)",
    "suites": "wall time of the quick default run and of every suite at full budget (issue 9)",
    "libraries": "per-call audits of diffprivlib and OpenDP targets: dpverify's share of the wall time (issue 19)",
    "dpsniper": "dpverify and DP-Sniper side by side on DP-Sniper's default set (issue 22)",
    "numpy_kernels": "numpy's default kernels against its AVX2 sorting kernels (AMD Zen 4; issue 22)",
    "memory": "glibc's malloc defaults against freed memory kept in the process (issue 22)",
}


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="every benchmark's smoke budget")
    p.add_argument("--seed", type=int, default=0, help="root seed of every measurement (default 0)")
    p.add_argument("--write", metavar="FILE", type=Path, help="rewrite the generated sections of FILE")
    p.add_argument("--wait-idle", metavar="SECONDS", type=float, default=0.0,
                   help="each benchmark first waits up to SECONDS for an idle machine")
    p.add_argument("--only", metavar="NAMES", default=",".join(BENCHMARKS),
                   help=f"comma-separated subset of: {', '.join(BENCHMARKS)} (default: all)")
    p.add_argument("--no-statdp", action="store_true", help="peers: dpverify's half and the samplers only")
    p.add_argument("--venv", metavar="DIR", help="peers: StatDP's virtual environment")
    p.add_argument("--no-dpsniper", action="store_true", help="dpsniper: dpverify's half only")
    p.add_argument("--dpsniper-venv", metavar="DIR", help="dpsniper: DP-Sniper's virtual environment")
    p.add_argument("--dpsniper-mirror", metavar="DIR",
                   help="dpsniper: git copy of eth-sri/dp-sniper to install DP-Sniper from (if its venv is absent)")
    p.add_argument("--dpsniper-fraction", metavar="F", type=float,
                   help="dpsniper: fraction of DP-Sniper's default budget (default: the benchmark's)")
    p.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    args = p.parse_args(argv)
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown or not names:
        p.error(f"--only: unknown benchmark(s) {', '.join(unknown) or '(none given)'}; choose from "
                f"{', '.join(BENCHMARKS)}")
    args.names = names
    return args


def command_for(name: str, args: argparse.Namespace) -> list[str]:
    cmd = [sys.executable, "-m", f"benchmarks.bench_{name}", "--seed", str(args.seed)]
    if args.quick:
        cmd.append("--quick")
    if args.write is not None:   # the benchmarks run in the checkout: a path inside it is given relative to it
        target = args.write.resolve()
        cmd += ["--write", str(target.relative_to(ROOT) if target.is_relative_to(ROOT) else target)]
    if args.wait_idle:
        cmd += ["--wait-idle", str(args.wait_idle)]
    if name == "peers":
        cmd += ["--no-statdp"] if args.no_statdp else []
        cmd += ["--venv", args.venv] if args.venv else []
    if name == "dpsniper":
        cmd += ["--no-dpsniper"] if args.no_dpsniper else []
        cmd += ["--venv", args.dpsniper_venv] if args.dpsniper_venv else []
        cmd += ["--mirror", args.dpsniper_mirror] if args.dpsniper_mirror else []
        cmd += ["--fraction", str(args.dpsniper_fraction)] if args.dpsniper_fraction else []
    return cmd


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if args.list:
        for name, what in BENCHMARKS.items():
            print(f"{name:8s} {what}")
        return 0
    status: dict[str, tuple[int, float]] = {}
    for name in args.names:
        cmd = command_for(name, args)
        print(f"[benchmarks] {name}: {' '.join(cmd[1:])}", file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        code = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL if args.write else None).returncode
        status[name] = (code, time.perf_counter() - t0)
    print("\nbenchmark  exit  seconds", file=sys.stderr)
    for name, (code, secs) in status.items():
        print(f"{name:9s}  {code:4d}  {secs:7.0f}{'' if code == 0 else '   (goal missed or error)'}", file=sys.stderr)
    return 0 if all(code == 0 for code, _ in status.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
