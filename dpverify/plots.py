"""Plots of theorem checks: the estimate with its confidence interval against the bound, over a sweep.

Needs matplotlib (the ``plots`` extra: ``pip install "dpverify[plots]"``); :func:`matplotlib_available` says
whether it is there, and :func:`plot_theorem` raises :class:`~dpverify.errors.InputError` naming the extra
when it is not.  The Agg backend is used, so plotting works without a display.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path
from typing import Any

from dpverify.errors import InputError
from dpverify.theorem import SweepResult, TheoremResult

__all__ = ["matplotlib_available", "plot_theorem", "VERDICT_COLOURS"]

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


def plot_theorem(result: SweepResult | TheoremResult, path: str | Path, title: str | None = None) -> Path:
    """Draw ``result`` to ``path`` (PNG) and return the path.

    A sweep: one point per value of the swept parameter -- the estimate with its interval (at the per-point
    level), coloured by verdict, and the bound as a dashed line.  An ``"always"`` theorem: the number of
    counterexamples per point.  A single check is drawn as a sweep of one point.
    """
    plt = _pyplot()
    if isinstance(result, TheoremResult):
        points, param, values = (result,), "", ("",)
    else:
        points, param, values = result.points, result.param, result.values
    xs, labels = _axis_values(values)
    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=110)
    first = points[0]
    if first.quantity == "always":
        fails = [p.failure_count for p in points]
        ax.bar(xs, fails, color=[VERDICT_COLOURS[p.verdict] for p in points], width=0.6 if labels else None)
        ax.set_ylabel(f"counterexamples (of {first.runs} instances per point)")
    else:
        for x, p in zip(xs, points):
            lo, hi = p.interval
            lo = p.estimate if not math.isfinite(lo) else lo
            hi = p.estimate if not math.isfinite(hi) else hi
            ax.errorbar([x], [p.estimate], yerr=[[p.estimate - lo], [hi - p.estimate]], fmt="o", capsize=4,
                        color=VERDICT_COLOURS[p.verdict])
        exact = [(x, p.exact) for x, p in zip(xs, points) if p.exact is not None]
        if exact:
            ax.plot(*zip(*exact), "x", color="0.35", label="exact value")
        bounds = [p.bound if math.isfinite(p.bound) else float("nan") for p in points]
        ax.plot(xs, bounds, "k--", marker="_", label="bound")
        quantity = {"probability": "probability", "mean": "mean"}.get(first.quantity, f"{first.level}-quantile")
        ax.set_ylabel(f"{quantity} ({_SYMBOLS[first.direction]} bound claimed)")
        for verdict, colour in VERDICT_COLOURS.items():
            if any(p.verdict == verdict for p in points):
                ax.plot([], [], "o", color=colour, label=verdict)
        ax.legend(loc="best", fontsize=8)
    if labels is not None:
        ax.set_xticks(xs, labels, rotation=30 if max(len(s) for s in labels) > 6 else 0, fontsize=8)
    elif len(xs) > 2 and min(xs) > 0 and max(xs) / min(xs) > 50:
        ax.set_xscale("log")
    ax.set_xlabel(param)
    level = first.alpha
    ax.set_title(title or f"{first.name}\n{first.runs} runs per point, intervals at {1 - level:.3g}", fontsize=9)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


_SYMBOLS = {"at_least": ">=", "at_most": "<=", "equal": "=="}
