"""Several side-by-side runs of ``benchmarks.bench_dpsniper`` (``--repeat K``): how often each mechanism meets the goal.

On a shared 2-core machine one run's goal count moves from run to run: both tools' times move by tens of per cent,
and DP-Sniper reseeds its workers from fresh entropy, so its bound is a new random draw each run.  A row whose
speed-up lies near the goal's 10x, or whose DP-Sniper bound comes near dpverify's, passes in some runs and fails in
others.  The table this module writes gives, per mechanism, in how many of the K runs the goal was met, and the
spread of each measured quantity over the runs, so that a reader sees which rows are settled and which are not.

dpverify runs with seed ``s + k`` in run ``k`` (``s`` the command's ``--seed``): reproducible, and its bound and
witness vary over the runs as a fresh seed makes them vary, so that the table shows both tools' spread.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

__all__ = ["repeat_table", "spread"]


def spread(values: Sequence[float], fmt: str = "{:.3g}") -> str:
    """``min–max`` of the finite ``values`` (with the median between when there are three or more), or the one
    value when they are all equal; ``–`` when none is finite."""
    v = sorted(x for x in values if x is not None and math.isfinite(x))
    if not v:
        return "–"
    if v[0] == v[-1]:
        return fmt.format(v[0])
    if len(v) >= 3:
        return f"{fmt.format(v[0])} – {fmt.format(statistics.median(v))} – {fmt.format(v[-1])}"
    return f"{fmt.format(v[0])} – {fmt.format(v[-1])}"


def repeat_table(names: Sequence[str], rows: Sequence[dict[str, dict[str, Any]]], speed_goal: float) -> list[str]:
    """Markdown lines: per mechanism of ``names``, the goal's outcome in each run of ``rows`` (one dict per run,
    :func:`benchmarks.bench_dpsniper.compare`'s row per mechanism), both tools' bounds and times and the speed-up
    over the runs; then the count of mechanisms that met the goal in every run, in some, in none."""
    k = len(rows)
    lines = [f"| Mechanism | goal met (runs of {k}) | speed-up (min – median – max) | DP-Sniper: ε LB | "
             "dpverify: ε LB | DP-Sniper: s | dpverify: s |",
             "|---|---|---|---|---|---|---|"]
    every = some = none = evaluated = 0
    per_run = [0] * k
    for n in names:
        rs = [r[n] for r in rows if n in r]
        goals = [r["goal"] for r in rs if r.get("goal") is not None]
        if not goals:
            lines.append(f"| {n} | n/a | – | – | {spread([r['dp_bound'] for r in rs], '{:.4g}')} | – | "
                         f"{spread([r['dp_seconds'] for r in rs], '{:.2f}')} |")
            continue
        evaluated += 1
        met = sum(bool(g) for g in goals)
        for i, r in enumerate(rows):
            per_run[i] += bool((r.get(n) or {}).get("goal"))
        every += met == len(goals)
        some += 0 < met < len(goals)
        none += met == 0
        marks = "".join("✓" if g else "✗" for g in goals)
        lines.append(f"| {n} | {met} of {len(goals)} ({marks}) | "
                     f"{spread([r.get('speed', math.nan) for r in rs], '{:.1f}×')} | "
                     f"{spread([r.get('ds_bound', math.nan) for r in rs], '{:.4g}')} | "
                     f"{spread([r['dp_bound'] for r in rs], '{:.4g}')} | "
                     f"{spread([r.get('ds_seconds', math.nan) for r in rs], '{:.1f}')} | "
                     f"{spread([r['dp_seconds'] for r in rs], '{:.2f}')} |")
    if not evaluated:
        return lines + ["", "Goal not evaluated in these runs: DP-Sniper did not run."]
    lines += ["", (f"Over {k} runs of this command (goal: dpverify's ε LB ≥ DP-Sniper's in ≤ 1/{speed_goal:g} of "
                   f"its wall time): met in **every run on {every} of {evaluated}** mechanisms, in some runs on "
                   f"{some}, in none on {none}; per run: " + ", ".join(f"{c} of {evaluated}" for c in per_run) + ".")]
    return lines
