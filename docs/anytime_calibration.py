"""Calibration of the anytime-valid audit (dpverify.statistical.anytime): false alarms and samples to a verdict.

    python docs/anytime_calibration.py                 # 200 runs per calibration mechanism (a few minutes, 1 core)
    python docs/anytime_calibration.py --runs 50       # a smoke run

Prints two markdown tables with the command line that made them (docs/auditor.md quotes them):

* **false alarms** -- ``audit_anytime`` on correct mechanisms whose claim is tight (true ε = claimed ε), ``--runs``
  runs each with seeds 10000, 10001, ...; the count of violations, its exact 95 % (Clopper-Pearson) interval and
  the one-sided binomial p-value of "rate <= alpha" (``scipy.stats.binomtest``), the protocol of the audit's
  false-alarm measurement in docs/auditor.md;
* **samples to a verdict** -- every ``expect = "violation"`` statistical entry of audits/catalogue.toml, run as
  ``dpverify run --sequential`` runs it (:func:`dpverify.suites.run_entry` with ``sequential=True``, the entry's
  quick test budget and seed under run seed 0): the outputs per input drawn until the verdict (search + test), the
  round reached, and whether the entry's violation is at least twice its claim (true ε from the suite file).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scipy import stats  # noqa: E402

from algorithms.classic import Geometric, Laplace, RandomizedResponse  # noqa: E402
from dpverify.statistical.anytime import audit_anytime  # noqa: E402
from dpverify.suites import load_suite, run_entry  # noqa: E402

GOAL = 10_000
CASES = (
    ("Laplace ε=0.5, pair (0, 1)", Laplace(epsilon=0.5), [(0.0, 1.0)], 0.5),
    ("Geometric ε=0.5, pair (0, 1)", Geometric(epsilon=0.5), [(0, 1)], 0.5),
    ("Randomized response ε=1, k=2", RandomizedResponse(epsilon=1.0, k=2), [(0, 1)], 1.0),
)


def false_alarms(runs: int, samples: int, search: int, alpha: float) -> list[str]:
    lines = ["| calibration mechanism (claim tight) | alarms | rate | exact 95 % interval |", "|---|---|---|---|"]
    total = 0
    for name, mech, pairs, eps in CASES:
        k = sum(audit_anytime(mech, pairs, eps, samples=samples, search_samples=search, alpha=alpha,
                              seed=10_000 + s, workers=1).violation for s in range(runs))
        ci = stats.binomtest(k, runs).proportion_ci(0.95, method="exact")
        lines.append(f"| {name} | {k}/{runs} | {k / runs:.4f} | [{ci.low:.4f}, {ci.high:.4f}] |")
        total += k
    n = runs * len(CASES)
    test = stats.binomtest(total, n, alpha, alternative="greater")
    ci = stats.binomtest(total, n).proportion_ci(0.95, method="exact")
    lines.append(f"| **all** | **{total}/{n}** | {total / n:.4f} | [{ci.low:.4f}, {ci.high:.4f}] |")
    lines.append("")
    lines.append(f"α = {alpha}; {samples:,} test samples per input (budget), search {search:,} in the last round; "
                 f"one-sided binomial p-value of 'rate ≤ α': {test.pvalue:.3g}.")
    return lines


def ratio(entry) -> float | None:  # noqa: ANN001
    t = entry.true_epsilon
    if t is None:
        return None
    t = math.inf if str(t) == "inf" else float(t)
    return t / entry.claim.epsilon


def verdicts(workers: int) -> list[str]:
    suite = load_suite(ROOT / "audits" / "catalogue.toml")
    lines = ["| entry | true ε / claim | verdict | samples per input to verdict | round | ≤ 10⁴ | seconds |",
             "|---|---|---|---|---|---|---|"]
    for entry in suite.entries:
        if entry.kind != "statistical" or entry.expect != "violation" or entry.claim.is_profile:
            continue
        r = ratio(entry)
        o = run_entry(entry, "quick", 0, workers, sequential=True)
        if o.outcome == "error":
            lines.append(f"| `{entry.id}` | | error: {o.error} | | | | |")
            continue
        d = (o.details or {}).get("anytime", {})
        stv = d.get("samples_to_verdict", 0)
        r_txt = "?" if r is None else ("∞" if math.isinf(r) else f"{r:.3g}")
        lines.append(f"| `{entry.id}` | {r_txt} | {o.outcome} | {stv:,} of {d.get('samples', 0):,} test budget | "
                     f"{len(d.get('rounds', []))}/{d.get('planned_rounds')} | "
                     f"{'yes' if o.outcome == 'violation' and stv <= GOAL else 'no'} | {o.seconds:.2f} |")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=200, help="anytime audits per calibration mechanism")
    ap.add_argument("--samples", type=int, default=20_000, help="test budget per input of a calibration run")
    ap.add_argument("--search", type=int, default=10_000, help="search samples of a calibration run's last round")
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--workers", type=int, default=1, help="workers of the catalogue runs")
    ap.add_argument("--skip-false-alarms", action="store_true")
    args = ap.parse_args()
    print(f"Command: `{' '.join(['python docs/anytime_calibration.py', *sys.argv[1:]])}`")
    print()
    if not args.skip_false_alarms:
        t0 = time.perf_counter()
        print("**False alarms** of `audit_anytime` on correct mechanisms whose claim is tight:")
        print()
        print("\n".join(false_alarms(args.runs, args.samples, args.search, args.alpha)))
        print(f"({time.perf_counter() - t0:.0f} s)")
        print()
    t0 = time.perf_counter()
    print("**Samples to a verdict** on the catalogue's violations (`dpverify run --sequential`, quick budgets, "
          "run seed 0):")
    print()
    print("\n".join(verdicts(args.workers)))
    print(f"({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
