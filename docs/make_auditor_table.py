"""Regenerate the measured sections of docs/auditor.md.

    python docs/make_auditor_table.py            # full budgets (about 10 minutes on 2 cores)
    python docs/make_auditor_table.py --quick    # quick budgets, for a smoke run
    python docs/make_auditor_table.py --ratio-test auto   # the same with audit(ratio_test="auto"), its own section

Runs the catalogue suite (audits/catalogue.toml) at its full budget with run seed 0 and the
false-alarm measurement of the auditor on correct mechanisms, and rewrites the text between the
``<!-- BEGIN generated -->`` / ``<!-- END generated -->`` markers of docs/auditor.md (with ``--ratio-test auto``:
every statistical entry, the oracle and the calibration audits use ``ratio_test="auto"``, and the section is
``generated-auto``).  Every figure in that section is printed by this script; nothing there is typed by hand.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import math
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from algorithms.classic import (  # noqa: E402
    Geometric,
    Histogram,
    Laplace,
    RandomizedResponse,
    TruncatedGeometric,
)
from algorithms.hard.joint import LaplaceVector  # noqa: E402
from algorithms.hard.one_hot import OneHotRR  # noqa: E402
from algorithms.hard.rare_leak import ClippedLaplace, RoundedLaplace  # noqa: E402
from algorithms.hard.subsampling import SubsampledLaplaceCount  # noqa: E402
from dpverify.statistical.calibration import CalibrationCase, false_alarm_rate  # noqa: E402
from dpverify.errors import InputError  # noqa: E402
from dpverify.statistical.oracle import MIN_ORACLE_SAMPLES, OracleBound, default_oracle_samples, oracle_bound  # noqa: E402
from dpverify.suites import Entry, build_mechanism, build_pairs, entry_seed, load_suite, run_entry  # noqa: E402

DOC = ROOT / "docs" / "auditor.md"
BEGIN, END = "<!-- BEGIN generated -->", "<!-- END generated -->"

CALIBRATION_CASES = [
    CalibrationCase("Laplace ε=0.5, pair (0, 1)", Laplace(epsilon=0.5), [(0.0, 1.0)], 0.5),
    CalibrationCase("Geometric ε=0.5, pair (0, 1)", Geometric(epsilon=0.5), [(0, 1)], 0.5),
    CalibrationCase("Randomized response ε=1, k=2", RandomizedResponse(epsilon=1.0, k=2), [(0, 1)], 1.0),
    CalibrationCase("Truncated geometric ε=0.5, upper 5", TruncatedGeometric(epsilon=0.5, upper=5), [(0, 1)], 0.5),
    CalibrationCase("Histogram ε=0.5, one count +1", Histogram(epsilon=0.5),
                    [(np.zeros(3), np.array([1.0, 0.0, 0.0]))], 0.5),
    # the controls of the hard suite: point masses from post-processing, joint pairs, one-hot RR, subsampling
    CalibrationCase("hard: Laplace ε=1 rounded to 0.1", RoundedLaplace(epsilon=1.0), [(0.0, 1.0)], 1.0),
    CalibrationCase("hard: Laplace ε=1 clipped to [-1, 2]", ClippedLaplace(epsilon=1.0), [(0.0, 1.0)], 1.0),
    CalibrationCase("hard: 8-bin histogram ε=0.5 for l1 distance 2, replace-one pair", LaplaceVector(0.5, 2.0),
                    [(np.full(8, 5.0), np.r_[4.0, 6.0, np.full(6, 5.0)])], 0.5),
    CalibrationCase("hard: one-hot RR, 8 bits, ε/2 per bit", OneHotRR(epsilon=1.0, d=8, per_bit_share=0.5),
                    [(3, 5)], 1.0),
    CalibrationCase("hard: subsampled Laplace count ε=2, q=0.5, claim ln(1+q(e^ε-1))",
                    SubsampledLaplaceCount(epsilon=2.0, q=0.5), [(10, 11)],
                    SubsampledLaplaceCount(epsilon=2.0, q=0.5).true_epsilon()),
]


def fmt(v: float | None) -> str:
    if v is None:
        return "–"
    if math.isinf(v):
        return "∞"
    return f"{v:.4g}"


def true_epsilon(entry: Entry) -> float | None:
    """The suite's ``true_epsilon``, else the mechanism's own closed form ``true_epsilon()``."""
    if entry.true_epsilon is not None:
        return entry.true_epsilon
    if entry.float_bits:  # the closed forms are for real arithmetic, not for doubles
        return None
    try:
        return float(build_mechanism(entry).true_epsilon())
    except Exception:  # no closed form without more arguments (e.g. the number of queries)
        return None


#: Monte-Carlo oracle draws per entry, over all its pairs and directions (at least MIN_ORACLE_SAMPLES per pair and
#: direction).
ORACLE_ROWS: int = 60_000_000


def oracle_for_entry(entry: Entry, mode: str, run_seed: int = 0, ratio_test: str = "clopper-pearson"
                     ) -> OracleBound | None:
    """The oracle bound of a suite entry (``dpverify.statistical.oracle``) at the test budget of ``mode``, the entry's level and
    δ, on the very pairs its audit used (built with the entry's seed under ``run_seed``); ``None`` where there is
    none: not a statistical entry, a float-bits entry (the laws are for real arithmetic, not for doubles), or a
    mechanism that exposes no law.  Usable outside this script (e.g. on any loaded suite)."""
    if entry.kind != "statistical" or entry.float_bits:
        return None
    try:
        mech = build_mechanism(entry)
        pairs = build_pairs(entry, entry_seed(run_seed, entry.suite, entry.id))
        alpha = entry.alpha if entry.alpha is not None else 0.05
        samples = entry.budget(mode).samples
        # Monte-Carlo laws: at most ORACLE_ROWS draws over all pairs and directions (13-pair SVT entries would
        # otherwise draw 5·10^8 rows); exact laws ignore it
        per = min(default_oracle_samples(samples), max(MIN_ORACLE_SAMPLES, ORACLE_ROWS // (2 * len(pairs))))
        return oracle_bound(mech, pairs, samples, alpha=alpha, delta=entry.claim.delta, seed=0, oracle_samples=per,
                            ratio_test=ratio_test)
    except InputError:
        return None
    except Exception as exc:  # noqa: BLE001 -- a law that fails must not stop the table; say so
        print(f"warning: no oracle for {entry.name}: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        return None


def ratio(bound: float, best: float | None) -> float | None:
    """dpverify's bound as a fraction of the oracle's (``None`` without an oracle or when neither is positive)."""
    if best is None or not math.isfinite(best) or best <= 0:
        return None
    return max(bound, 0.0) / best


def suite_table(path: Path, mode: str, workers: int | None, ratio_test: str | None = None
                ) -> tuple[list[str], dict, float]:
    """Run one suite and return its generated table, its outcomes by entry id, and seconds (``ratio_test``: set on
    every statistical entry)."""
    suite = load_suite(path)
    rows, t0, oracle_seconds = [], time.time(), 0.0
    for entry in suite.entries:
        if ratio_test is not None and entry.kind == "statistical":
            entry = dataclasses.replace(entry, ratio_test=ratio_test)
        out = run_entry(entry, mode=mode, run_seed=0, workers=workers)
        t1 = time.time()
        found = (oracle_for_entry(entry, mode, ratio_test=entry.ratio_test or "clopper-pearson")
                 if out.samples else None)
        best = None if found is None else found.bound
        oracle_seconds += time.time() - t1
        print(f"{entry.id}: {out.outcome} LB={out.epsilon_lower_bound} oracle={best} ({out.seconds:.1f} s, oracle "
              f"{time.time() - t1:.1f} s)", flush=True)
        rows.append((entry, out, best))
    seconds = time.time() - t0 - oracle_seconds      # the audits' wall time, without the oracle's
    lines = [
        "| entry | mechanism | true ε | claimed ε (δ) | ε lower bound | oracle bound | bound / oracle | confidence | "
        "verdict | expected | samples per input (test + search) | seconds |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    matched = 0
    below = []
    for entry, out, best in rows:
        claim = fmt(entry.claim.epsilon) + (f" ({entry.claim.delta:g})" if entry.claim.delta else "")
        ok = out.outcome in entry.expected
        matched += ok
        conf = 1 - (entry.alpha if entry.alpha is not None else 0.05)
        lb = out.epsilon_lower_bound if out.epsilon_lower_bound is not None else 0.0
        r = ratio(lb, best)
        if r is not None and r < 0.95:
            below.append(f"- `{entry.id}`: {r:.3f} of the oracle ({fmt(lb)} against {fmt(best)})")
        lines.append(
            f"| `{entry.id}` | `{entry.mechanism.split(':')[1]}` | {fmt(true_epsilon(entry))} | {claim} | "
            f"{fmt(out.epsilon_lower_bound)} | {fmt(best)} | {'–' if r is None else f'{r:.3f}'} | {conf:.0%} | "
            f"{out.outcome}{'' if ok else ' ✗'} | {entry.expect} | {out.samples or 0:,} + {out.search_samples or 0:,} | "
            f"{out.seconds:.1f} |"
        )
    with_oracle = sum(1 for _, o, b in rows if ratio(o.epsilon_lower_bound or 0.0, b) is not None)
    lines += ["", f"{matched}/{len(rows)} outcomes as expected; {seconds:.0f} s. Bound / oracle ≥ 0.95 on "
              f"{with_oracle - len(below)} of the {with_oracle} entries with an oracle; below 0.95:", ""]
    lines += below or ["- none"]
    lines.append("")
    return lines, {e.id: o for e, o, _ in rows}, seconds


#: the power table's violation: Laplace at ε = 0.11 against a claim of 0.1 on the pair (0, 1), 1.1 times the claim
POWER_TRUE, POWER_CLAIM = 0.11, 0.1
POWER_BUDGETS = (50_000, 200_000, 1_000_000)


def power_table(runs: int) -> list[str]:
    """How often each test detects a violation of 1.1 times the claim, over ``runs`` seeds per budget (the same
    searches: only the finalists' test differs), counted by the calibration's loop over seeds
    (:func:`false_alarm_rate` counts violations, here true ones)."""
    case = CalibrationCase("1.1x", Laplace(POWER_TRUE), [(0.0, 1.0)], POWER_CLAIM)
    t0 = time.time()
    lines = [f"**Power** of the two tests on a violation of 1.1 times the claim (`Laplace({POWER_TRUE})` claimed "
             f"{POWER_CLAIM}-DP on the pair (0, 1), α = 0.05, search samples min(samples, 50,000), seeds 0…{runs - 1}):",
             "", "| test samples per input | detected, `clopper-pearson` | detected, `auto` |", "|---|---|---|"]
    for n in POWER_BUDGETS:
        found = {}
        for rt in ("clopper-pearson", "auto"):
            found[rt] = false_alarm_rate([case], runs, first_seed=0, alpha=0.05, samples=n,
                                         search_samples=min(n, 50_000), workers=1, ratio_test=rt).violations
        lines.append(f"| {n:,} | {found['clopper-pearson']}/{runs} | {found['auto']}/{runs} |")
    return lines + ["", f"({time.time() - t0:.0f} s)"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="quick budgets (smoke run)")
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--calibration-runs", type=int, default=200, help="audits per calibration case")
    ap.add_argument("--power-runs", type=int, default=40, help="seeds per budget of the power table (with "
                    "--ratio-test auto)")
    ap.add_argument("--ratio-test", choices=("clopper-pearson", "auto"), default=None,
                    help="set audit(ratio_test=...) on every statistical entry, the oracle and the calibration "
                         "audits, and write the section generated-<value> (default: the entries' own, section "
                         "generated)")
    args = ap.parse_args()
    begin, end = ((BEGIN, END) if args.ratio_test is None else
                  (f"<!-- BEGIN generated-{args.ratio_test} -->", f"<!-- END generated-{args.ratio_test} -->"))
    mode = "quick" if args.quick else "full"
    table, by_id, catalogue_seconds = suite_table(ROOT / "audits" / "catalogue.toml", mode, args.workers,
                                                  args.ratio_test)
    hard = ROOT / "audits" / "hard.toml"
    hard_table = suite_table(hard, mode, args.workers, args.ratio_test)[0] if hard.exists() else []

    t1 = time.time()
    cal = false_alarm_rate(CALIBRATION_CASES, args.calibration_runs, first_seed=10_000, alpha=0.05,
                           samples=20_000, search_samples=10_000, workers=1,
                           **({} if args.ratio_test is None else {"ratio_test": args.ratio_test}))
    cal_seconds = time.time() - t1
    lo, hi = cal.confidence_interval()

    flags = (" --quick" if args.quick else "") + (f" --ratio-test {args.ratio_test}" if args.ratio_test else "")
    lines = [
        begin,
        "",
        f"Generated by `python docs/make_auditor_table.py{flags}` on "
        f"{dt.date.today().isoformat()}, {platform.machine()} with {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, numpy {np.__version__}; {mode} budgets of "
        "`audits/catalogue.toml`, run seed 0. True ε: the suite's `true_epsilon` (on the audited "
        "pairs) or else the mechanism's `true_epsilon()` (supremum over all neighbours; – where the "
        "mechanism has no closed form, e.g. δ claims).",
        "",
        "Oracle bound: the best bound any event-based audit could certify at the entry's test samples, level "
        "and δ, with the optimal event (a level set of the true privacy loss) known in advance and typical counts "
        "(`dpverify.statistical.oracle`, with the audits' own `ratio_test`); – where the mechanism exposes no law.",
        "",
    ] + ([f"Every statistical entry, its oracle and the calibration audits below with `ratio_test = "
          f"\"{args.ratio_test}\"` (`docs/auditor.md`, step 3 of the audit).", ""] if args.ratio_test else []) + table + ["### The hard suite (`audits/hard.toml`)", ""] + hard_table
    tight = []
    for eid, truth in (("laplace", 0.1), ("svt-unscaled-query-noise", 0.175)):
        if eid in by_id:
            o = by_id[eid]
            tight.append(f"- `{eid}`: ε lower bound {o.epsilon_lower_bound:.4f} against true ε {truth} "
                         f"= {o.epsilon_lower_bound / truth:.1%} of the truth, with {o.samples:,} test and "
                         f"{o.search_samples:,} search samples per input, in {o.seconds:.1f} s.")
    lines += ["**Tightness** (ε lower bound / true ε):", ""] + tight + [""]

    lines += [
        f"**False-alarm rate** on correct mechanisms whose true ε equals the claim: "
        f"{cal.violations} violations in {cal.runs} audits at α = {cal.alpha} "
        f"(rate {cal.rate:.4f}, exact 95 % interval [{lo:.4f}, {hi:.4f}]; one-sided binomial p-value of "
        f"'rate ≤ α' {cal.pvalue:.3g}); {args.calibration_runs} audits per mechanism, seeds 10000…, "
        f"20 000 test + 10 000 search samples per input; {cal_seconds:.0f} s.",
        "",
        "| calibration mechanism | alarms |",
        "|---|---|",
    ]
    lines += [f"| {name} | {n}/{args.calibration_runs} |" for name, n in cal.per_case.items()]
    if args.ratio_test == "auto":
        lines += [""] + power_table(args.power_runs)
    lines += ["", end]

    text = DOC.read_text(encoding="utf-8")
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        tail = rest.split(end, 1)[1]
        text = head + "\n".join(lines) + tail
    else:
        text = text.rstrip() + "\n\n" + "\n".join(lines) + "\n"
    DOC.write_text(text, encoding="utf-8")
    print(f"wrote {DOC}")


if __name__ == "__main__":
    main()
