"""Regenerate docs/theorems.md, its plots (docs/theorems/*.png) and the verdict table of docs/findings.md.

    python docs/make_theorem_findings.py            # full budgets of audits/theorems_*.toml
    python docs/make_theorem_findings.py --quick    # quick budgets (the ones CI reproduces)

Runs every entry of the theorem suites (``audits/theorems_*.toml``) with run seed 0 -- exactly what
``python -m dpverify run audits/theorems_*.toml [--full]`` runs -- and writes, from those outcomes only:
docs/theorems.md (one section per entry: statement, inputs, verdict, the per-point table and the plot), the
plots, and the table between ``<!-- BEGIN theorem verdicts -->`` / ``<!-- END theorem verdicts -->`` in
docs/findings.md (violated first, with the smallest counterexample found).  It also measures the checker itself
(:func:`dpverify.theorems.check.verdict_rates`) on a theorem whose probability is known exactly.  Nothing in the
generated text is typed by hand.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_graph import write_section  # noqa: E402
from dpverify.jsonsafe import format_number  # noqa: E402
from dpverify.reporting.plots import plot_theorem  # noqa: E402
from dpverify.suites import EntryOutcome, load_suites, run_suites  # noqa: E402
from dpverify.theorems.check import SweepResult, TheoremResult, verdict_rates  # noqa: E402

DOC = ROOT / "docs" / "theorems.md"
FINDINGS = ROOT / "docs" / "findings.md"
PLOTS = ROOT / "docs" / "theorems"
BEGIN, END = "<!-- BEGIN theorem verdicts -->", "<!-- END theorem verdicts -->"
ORDER = {"violated": 0, "error": 1, "inconclusive": 2, "holds": 3}

INTRO = """# Utility theorems, checked by Monte Carlo

Every utility theorem of the seed papers that issue 7 lists, checked against the algorithms as coded in
`algorithms/` by `dpverify.check_theorem` (protocol: `dpverify/theorems/check.py`; the theorems:
`algorithms/theorems/`; the suites: `audits/theorems_*.toml`).  A verdict is `holds` when the whole
confidence interval of the estimate lies on the claimed side of the bound, `violated` when it lies on the other
side, `inconclusive` otherwise; swept entries test each point at `alpha / points` (Bonferroni).  `holds` is
evidence for these inputs at this level, not a proof; the inputs were chosen where the theorem is hardest
(each entry's description says how).
"""


def _num(x: Any) -> str:
    """A number as the tables show it; strings (``"inf"`` from JSON records) as they are."""
    return x if isinstance(x, str) else format_number(x)


def _measured(o: EntryOutcome) -> str:
    r = o.result
    if isinstance(r, SweepResult):
        counts = {v: sum(p.verdict == v for p in r.points) for v in ("violated", "inconclusive", "holds")}
        values = [v.tolist() if hasattr(v, "tolist") else v for v in r.values]
        return f"over {r.param} ∈ {values}: " + ", ".join(f"{n} {v}" for v, n in counts.items() if n)
    if isinstance(r, TheoremResult):
        if r.quantity == "always":
            return f"{r.failure_count} counterexample(s) in {r.runs} instances"
        return f"{_num(r.estimate)} [{_num(r.interval[0])}, {_num(r.interval[1])}] vs bound {_num(r.bound)}"
    return o.error or "-"


def _counterexample(o: EntryOutcome) -> str:
    r = o.result
    ce = getattr(r, "counterexample", None)
    if ce is None and isinstance(r, TheoremResult) and r.violated and r.quantity != "always":
        ce = dict(r.parameters)
    if ce is None:
        return "-"
    shown = {k: v for k, v in ce.items() if k not in ("interval", "parameters")}
    return ", ".join(f"{k}={f'{v:.7g}' if isinstance(v, float) else v}" for k, v in shown.items())


def _name(o: EntryOutcome) -> str:
    r = o.result
    return getattr(r, "name", None) or o.mechanism.rsplit(":", 1)[-1]


def verdict_table(outcomes: list[EntryOutcome]) -> str:
    rows = ["| entry | theorem | claim | verdict | measured | smallest counterexample |",
            "|---|---|---|---|---|---|"]
    for o in sorted(outcomes, key=lambda o: (ORDER.get(o.outcome, 9), o.suite, o.id)):
        claim = (o.details or {}).get("claim", "-")
        cells = [f"`{o.suite}/{o.id}`", _name(o), claim, f"**{o.outcome}**", _measured(o), _counterexample(o)]
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(rows)


def _points_table(r: SweepResult | TheoremResult) -> str:
    points = r.points if isinstance(r, SweepResult) else (r,)
    param = r.param if isinstance(r, SweepResult) else "point"
    values = [v.tolist() if hasattr(v, "tolist") else v for v in r.values] if isinstance(r, SweepResult) else ["-"]
    if points[0].quantity == "always":
        rows = [f"| {param} | instances | counterexamples | smallest | verdict |", "|---|---|---|---|---|"]
        rows += [f"| {v} | {p.runs} | {p.failure_count} | {p.counterexample or '-'} | {p.verdict} |"
                 for v, p in zip(values, points)]
        return "\n".join(rows)
    rows = [f"| {param} | bound | estimate | interval | exact | slack | runs | verdict |",
            "|---|---|---|---|---|---|---|---|"]
    for v, p in zip(values, points):
        rows.append(f"| {v} | {_num(p.bound)}{' (vacuous)' if p.vacuous else ''} | {_num(p.estimate)} | "
                    f"[{_num(p.interval[0])}, {_num(p.interval[1])}] | {_num(p.exact)} | {_num(p.slack)} | "
                    f"{p.runs} | {p.verdict} |")
    return "\n".join(rows)


def entry_section(o: EntryOutcome, entry_description: str, plot: Path | None) -> str:
    r = o.result
    lines = [f"### `{o.suite}/{o.id}` -- {_name(o).replace('|', '∣')}: **{o.outcome}** (expected {o.expectation})", ""]
    if r is None:
        lines += [f"Error: {o.error}", ""]
        return "\n".join(lines)
    lines += [f"*Claim checked:* {r.statement}", "", f"*Inputs:* {entry_description or '-'}", "",
              f"*Result:* {r.summary()} ({o.seconds:.1f} s)", "", _points_table(r), ""]
    if plot is not None:
        lines += [f"![{o.id}]({plot.relative_to(DOC.parent).as_posix()})", ""]
    return "\n".join(lines)


class ScaledBound:
    """A theorem object with its bound multiplied by ``scale`` (a deliberately false bound for ``scale < 1``)."""

    def __init__(self, theorem: Any, scale: float) -> None:
        self.theorem, self.scale = theorem, scale
        for attr in ("name", "statement", "quantity", "direction", "parameters", "hypotheses", "sample", "exact"):
            setattr(self, attr, getattr(theorem, attr))

    def bound(self) -> float:
        return self.scale * self.theorem.bound()


def calibration_section(reps: int, seed: int) -> str:
    """The checker on seed 002 Theorem 1.4.1 with k = 1, where P(|Lap| >= ln(1/γ)/ε) = γ exactly."""
    from algorithms.theorems.private_mst import LaplaceAccuracy

    lines = ["## The checker itself: false alarms and power", "",
             "Seed 002 Theorem 1.4.1 with k = 1 is an identity: P(|Lap(1/ε)| >= ln(1/γ)/ε) = γ.  At the exact bound a",
             "correct checker says `violated` (and `holds`) at most alpha/2 = 2.5 % of the time; below, the same",
             f"theorem with the bound scaled down (a false bound) measures the power.  {reps} independent checks per row",
             "(seeds 0, 1, ...), rates with 95 % Clopper-Pearson intervals:", "",
             "| bound | runs per check | holds | violated | inconclusive |", "|---|---|---|---|---|"]
    for scale, runs in ((1.0, 1000), (1.0, 10000), (0.9, 1000), (0.9, 10000)):
        theorem = ScaledBound(LaplaceAccuracy(epsilon=1.0, k=1, gamma=0.3), scale)
        rates = verdict_rates(theorem, repetitions=reps, runs=runs, seed=seed)
        cells = []
        for v in ("holds", "violated", "inconclusive"):
            lo, hi = rates.interval(v)
            cells.append(f"{rates.rate(v):.3f} [{lo:.3f}, {hi:.3f}]")
        label = "exact (γ = 0.3)" if scale == 1.0 else f"{scale:g} × exact (false)"
        lines.append(f"| {label} | {runs} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="quick budgets (default: full)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--calibration-reps", type=int, default=2000,
                        help="independent checks per calibration row (default 2000)")
    parser.add_argument("--no-findings", action="store_true", help="do not touch docs/findings.md")
    args = parser.parse_args(argv)
    mode = "quick" if args.quick else "full"
    paths = sorted((ROOT / "audits").glob("theorems_*.toml"))
    suites = load_suites(paths)
    descriptions = {(e.suite, e.id): e.description for s in suites for e in s.entries}
    t0 = time.perf_counter()

    def progress(o: EntryOutcome, i: int, total: int) -> None:
        print(f"[{i + 1}/{total}] {o.suite}/{o.id}: {o.outcome} ({o.seconds:.1f} s)", file=sys.stderr, flush=True)

    outcomes = run_suites(suites, mode=mode, seed=args.seed, on_result=progress)
    seconds = time.perf_counter() - t0
    PLOTS.mkdir(parents=True, exist_ok=True)
    sections = []
    for o in sorted(outcomes, key=lambda o: (ORDER.get(o.outcome, 9), o.suite, o.id)):
        plot = None
        if o.result is not None:
            plot = plot_theorem(o.result, PLOTS / f"{o.suite}__{o.id}.png")
        sections.append(entry_section(o, descriptions[(o.suite, o.id)], plot))
    matched = sum(o.matched for o in outcomes)
    command = "python docs/make_theorem_findings.py" + (" --quick" if args.quick else "")
    header = (f"Generated by `{command}` ({mode} budgets, run seed {args.seed}; the same outcomes as "
              f"`python -m dpverify run {' '.join(p.relative_to(ROOT).as_posix() for p in paths)}"
              f"{'' if args.quick else ' --full'}`): {len(outcomes)} entries, {matched} as expected, "
              f"{seconds:.0f} s on {platform.machine()} / Python {platform.python_version()}.")
    table = verdict_table(outcomes)
    calib = calibration_section(args.calibration_reps, args.seed)
    DOC.write_text("\n".join([INTRO, header, "", "## Verdicts (violated first)", "", table, "", calib, "",
                              "## Each theorem", "", *sections]), encoding="utf-8")
    if not args.no_findings:
        write_section(FINDINGS, f"{header}\n\n{table}", BEGIN, END)
    print(f"wrote {DOC.relative_to(ROOT)}, {len(outcomes)} plots in {PLOTS.relative_to(ROOT)}"
          f"{'' if args.no_findings else ', and the table of docs/findings.md'} ({time.perf_counter() - t0:.0f} s)",
          file=sys.stderr)
    return 0 if matched == len(outcomes) else 1


if __name__ == "__main__":
    raise SystemExit(main())
