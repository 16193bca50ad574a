"""What each event family of the search costs: the default quick run, in one process, with the time spent in every
family's search function added up (cProfile's cumulative times), next to the run's total.

    python docs/family_costs.py            # the default suites at their quick budgets (about 2 minutes)
    python docs/family_costs.py --select 'catalogue/*'

Prints a markdown table (family, function, seconds, share of the run); docs/auditor.md quotes it.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dpverify.suites import default_suites, run_suites  # noqa: E402

#: (family, function name, module file) -- the search functions of each family (dpverify/statistical/).
FAMILIES: tuple[tuple[str, str, str], ...] = (
    ("all event families (the whole event search)", "search_events", "search.py"),
    ("thresholds, intervals, point masses of scalar features", "_scalar_features", "search.py"),
    ("  of which two-sided tails", "_two_sided_tails", "search.py"),
    ("outcome unions (discrete outputs)", "_outcome_unions", "search.py"),
    ("item events (integer vector outputs)", "item_events", "items.py"),
    ("conditional cells (raw and monotone orders)", "_cell_unions", "search.py"),
    ("  of which the monotone (isotonic) order", "monotone_log_ratio", "search.py"),
    ("logistic-regression score (fit)", "fit_linear_score", "learned.py"),
    ("product density-ratio score (fit)", "fit_product_ratio", "cells.py"),
    ("thresholds anchored at the pair's inputs", "anchored_specs", "anchors.py"),
    ("whitening of the noise columns (innovations, independent components)", "whitening", "innovations.py"),
    ("innovations (noise mixed by a causal linear map)", "innovation_sum", "innovations.py"),
    ("independent components (noise mixed by any linear map)", "independent_sum", "independent.py"),
    ("dispersion scores (noise scale moving with the input)", "fit_dispersion", "dispersion.py"),
    ("Markov scores (a non-linear chain of noisy steps: its test and fit)", "fit_markov", "markov.py"),
    ("deeper tails beside the best threshold candidates", "with_deeper", "deeper.py"),
    ("atom sweep: hashing the sweep's rows", "row_hashes", "atoms.py"),
    ("atom sweep: candidates from repeated hashes", "atom_candidates", "search.py"),
    ("sampling contract checks", "contract_probe", "contract.py"),
)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--select", action="append", default=None, help="fnmatch pattern over suite/id (repeatable)")
    args = ap.parse_args()
    suites = default_suites(ROOT)
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    outcomes = run_suites(suites, mode="quick", seed=0, workers=1, select=args.select)
    prof.disable()
    total = time.perf_counter() - t0
    stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    print(f"{len(outcomes)} entries, {sum(o.matched for o in outcomes)} as expected, {total:.1f} s in one process "
          f"(profiled; the profiler itself slows the run)\n")
    print("| family | function | seconds | share of the run |")
    print("|---|---|---|---|")
    for label, func, file in FAMILIES:
        cum = sum(v[3] for (f, _, name), v in stats.items() if name == func and f.endswith(file))
        print(f"| {label} | `{func}` | {cum:.1f} | {cum / total:.1%} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
