"""Plots for reports: theorem checks (estimate and interval against the bound over a sweep), the witness
pair's privacy-loss histogram of a statistical audit, and the ε found against the claim for every entry.

Every function draws from the JSON records of ``report.json`` (or result objects), so a report can be re-drawn
from its file.
Needs matplotlib (the ``plots`` extra: ``pip install "dpverify[plots]"``); :func:`matplotlib_available` says
whether it is there, and :func:`plot_theorem` raises :class:`~dpverify.errors.InputError` naming the extra
when it is not.  The Agg backend is used, so plotting works without a display.
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from dpverify.errors import InputError
from dpverify.theorems.check import SweepResult, TheoremResult

__all__ = ["matplotlib_available", "plot_theorem", "plot_loss_histogram", "plot_epsilon_summary", "VERDICT_COLOURS"]

VERDICT_COLOURS: dict[str, str] = {"holds": "tab:green", "violated": "tab:red", "inconclusive": "tab:orange"}


def matplotlib_available() -> bool:
    """Whether matplotlib can be imported (the ``plots`` extra is installed)."""
    return importlib.util.find_spec("matplotlib") is not None


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise InputError('plots need matplotlib: pip install "dpverify[plots]" (or matplotlib>=3.8)') from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _axis_values(values: tuple[Any, ...]) -> tuple[list[float], list[str] | None]:
    """Numeric x positions; categorical values (strings, arrays) are placed at 0, 1, ... with their labels."""
    try:
        xs = [float(v) for v in values]
        if all(math.isfinite(x) for x in xs):
            return xs, None
    except (TypeError, ValueError):
        pass
    return [float(i) for i in range(len(values))], [str(v) for v in values]


def _theorem_dict(result: SweepResult | TheoremResult | Mapping[str, Any]) -> dict[str, Any]:
    return dict(result) if isinstance(result, Mapping) else result.to_dict()


def _float(x: Any) -> float:
    """A number of a JSON record (``"inf"``/``"nan"`` strings included)."""
    return float(x) if x is not None else math.nan


def plot_theorem(result: SweepResult | TheoremResult | Mapping[str, Any], path: str | Path,
                 title: str | None = None) -> Path:
    """Draw a theorem check (a result object or its ``to_dict()`` record, e.g. from report.json) to ``path``.

    A sweep: one point per value of the swept parameter -- the estimate with its interval (at the per-point
    level), coloured by verdict, the exact value where known (grey x), and the bound as a dashed line.  An
    ``"always"`` theorem: the number of counterexamples per point.  A single check is drawn as one point.
    """
    plt = _pyplot()
    doc = _theorem_dict(result)
    if "points" in doc:
        points, param, values = doc["points"], doc["param"], tuple(doc["values"])
    else:
        points, param, values = [doc], "", ("",)
    xs, labels = _axis_values(values)
    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=90)
    first = points[0]
    if first["quantity"] == "always":
        fails = [p["failure_count"] for p in points]
        ax.bar(xs, fails, color=[VERDICT_COLOURS[p["verdict"]] for p in points], width=0.6)
        ax.set_ylabel(f"counterexamples (of {first['runs']} instances per point)")
    else:
        for x, p in zip(xs, points):
            est = _float(p["estimate"])
            lo, hi = (_float(v) for v in p["interval"])
            lo, hi = (lo if math.isfinite(lo) else est), (hi if math.isfinite(hi) else est)
            ax.errorbar([x], [est], yerr=[[est - lo], [hi - est]], fmt="o", capsize=4,
                        color=VERDICT_COLOURS[p["verdict"]])
        exact = [(x, _float(p["exact"])) for x, p in zip(xs, points) if p.get("exact") is not None]
        if exact:
            ax.plot(*zip(*exact), "x", color="0.35", label="exact value")
        bounds = [_float(p["bound"]) for p in points]
        ax.plot(xs, [b if math.isfinite(b) else math.nan for b in bounds], "k--", marker="_", label="bound")
        quantity = {"probability": "probability", "mean": "mean"}.get(first["quantity"], f"{first['level']}-quantile")
        ax.set_ylabel(f"{quantity} ({_SYMBOLS[first['direction']]} bound claimed)")
        for verdict, colour in VERDICT_COLOURS.items():
            if any(p["verdict"] == verdict for p in points):
                ax.plot([], [], "o", color=colour, label=verdict)
        ax.legend(loc="best", fontsize=8)
    if labels is not None:
        ax.set_xticks(xs, labels, rotation=30 if max(len(s) for s in labels) > 6 else 0, fontsize=8)
    elif len(xs) > 2 and min(xs) > 0 and max(xs) / min(xs) > 50:
        ax.set_xscale("log")
    ax.set_xlabel(param)
    ax.set_title(title or f"{first['name']}\n{first['runs']} runs per point, intervals at {1 - first['alpha']:.3g}",
                 fontsize=9)
    ax.grid(alpha=0.3)
    return _save(fig, plt, path)


def plot_loss_histogram(record: Mapping[str, Any], path: str | Path) -> Path | None:
    """The witness pair's empirical privacy-loss histogram of a statistical entry's record (report.json), with
    the claimed ±ε and the ε lower bound; ``None`` when the record has no histogram."""
    hist = (record.get("details") or {}).get("loss_histogram")
    if not hist or not hist.get("mass"):
        return None
    plt = _pyplot()
    edges, mass = hist["edges"], hist["mass"]
    fig, ax = plt.subplots(figsize=(6.4, 3.6), dpi=100)
    ax.bar(edges[:-1], mass, width=[b - a for a, b in zip(edges[:-1], edges[1:])], align="edge",
           color="tab:blue", alpha=0.7, label="binned empirical loss (mass under x0)")
    eps = _float((record.get("claim") or {}).get("epsilon"))
    if math.isfinite(eps):
        for sign in (-1, 1):
            ax.axvline(sign * eps, color="k", ls="--", lw=1, label="claimed ±ε" if sign > 0 else None)
    lb = _float(record.get("epsilon_lower_bound"))
    if math.isfinite(lb) and lb > 0:
        ax.axvline(lb, color="tab:red", lw=1.5, label="ε lower bound (audit)")
    inf = hist.get("mass_plus_inf", 0.0)
    note = f"; mass at +inf: {inf:.3g}" if inf else ""
    ax.set_xlabel("privacy loss ln P(o|x0)/P(o|x1) on the witness pair")
    ax.set_ylabel("probability under x0")
    ax.set_title(f"{record.get('suite')}/{record.get('id')}: {hist['output_bins']} output {hist['binning']}, "
                 f"{hist['samples'][0]} samples per side{note}\n(descriptive; the verdict does not use it)",
                 fontsize=9)
    ax.legend(loc="best", fontsize=8)
    ax.grid(alpha=0.3)
    return _save(fig, plt, path)


def plot_epsilon_summary(records: Sequence[Mapping[str, Any]], path: str | Path) -> Path | None:
    """Every statistical / exact entry: the ε found (lower bound, or exact loss) divided by its claimed ε, one row
    per entry (red beyond 1: a violation); ``None`` when no entry has an ε."""
    rows = [r for r in records if r.get("kind") in ("statistical", "exact")
            and (r.get("claim") or {}).get("epsilon") is not None and r.get("epsilon_lower_bound") is not None]
    if not rows:
        return None
    plt = _pyplot()
    height = 1.0 + 0.24 * len(rows)  # rows tall enough for labels readable at 100 % zoom
    fig, ax = plt.subplots(figsize=(8.0, height), dpi=100)
    ys = list(range(len(rows)))[::-1]
    ratios = [_float(r["epsilon_lower_bound"]) / _float(r["claim"]["epsilon"]) for r in rows]
    cap = 100.0
    shown = [min(x, cap) if x == x else 0.0 for x in ratios]
    ax.barh(ys, shown, color=["tab:red" if x > 1 else "tab:blue" for x in ratios], alpha=0.75, height=0.7)
    ax.axvline(1.0, color="k", lw=1.2)
    ax.set_xscale("symlog", linthresh=1.0)
    ax.set_xlim(0, cap)
    ax.set_yticks(ys, [f"{r['suite']}/{r['id']}" for r in rows], fontsize=9)
    ax.tick_params(axis="x", labelsize=9)
    ax.set_ylim(-0.6, len(rows) - 0.4)
    # no legend box: it hid the ends of long bars; the axis label says what the line is
    ax.set_xlabel(f"ε found / claimed ε (black line: the claim, ratio 1; bars cut at {cap:g})", fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    return _save(fig, plt, path, {"left": 0.42, "right": 0.98, "bottom": 0.6 / height, "top": 1 - 0.1 / height})


def _save(fig: Any, plt: Any, path: str | Path, margins: Mapping[str, float] | None = None) -> Path:
    # Fixed margins instead of tight_layout: tight_layout draws the figure once more just to measure it,
    # which doubled the time reports spend on plots.
    fig.subplots_adjust(**(margins or {"left": 0.12, "right": 0.97, "bottom": 0.15, "top": 0.86}))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


_SYMBOLS = {"at_least": ">=", "at_most": "<=", "equal": "=="}
