"""Scaling curves of the audits (issue 9, "scaling curves ... as plots"): time against size, as tables and plots.

    python -m benchmarks.bench_scaling                              # full measurement (about 3-5 min on 2 idle cores)
    python -m benchmarks.bench_scaling --quick                      # fewer and smaller points; under 60 s
    python -m benchmarks.bench_scaling --write docs/performance.md  # also rewrite the generated section + PNGs
    python -m benchmarks.bench_scaling --wait-idle 600 ...          # first wait (<= 600 s) for an idle machine
    python -m benchmarks.bench_scaling --images DIR ...             # PNGs into DIR instead of docs/images

Four curves, each point the best wall time of up to ``k`` seeded repeats of the same work (a point stops
repeating once its repeats have taken ``REPEAT_CAP_S`` seconds), with **one worker process**
(``workers=1``: the curves are about the audit, not about the pool).  Every statistical audit uses the
audit's default search budget, ``search_samples = min(samples, 200 000)`` (passed explicitly).

1. ``samples`` -- :func:`dpverify.audit` time against ``samples`` (10^4 .. 4·10^6) on two catalogue entries
   (``audits/catalogue.toml``): ``laplace`` (``Laplace(0.1)``, the pair (0, 1)) and ``histogram``
   (``Histogram(0.1)``, input 5 × 1.0, its ℓ1 radius-1 pattern pairs); mechanism and pairs are built by
   :mod:`dpverify.suites` from the entries.  The time is split into the search phase (search draws + event
   search) and the test phase (fresh draws counted on the finalists' events).
2. ``graph`` -- audit time against |V| on complete graphs ``K_|V|`` (weights U(0, 5), one corner pair
   ``(w, w + d)``, ``d`` a random sign vector: ``algorithms.graph.examples.corner_pairs`` as in
   ``audits/graph.toml``) for PAMST (``PAMST(1, mu=1)``) and Sealfon's Laplace MST calibrated for ℓ∞
   (``LaplaceMST(1, mu=1, neighbours="linf")``), fixed samples.
3. ``dpm`` -- audit time against the data set size n for DPM end to end (``DPMOutput("structure", ...)`` of
   ``audits/dpm.toml`` on ``pivot_pairs(n/2, n/2, 0.2, 0.8, 0.5)``) and for Algorithm 2 alone
   (``IntervalSizeEst(1, ñ = n, [0, 64], d = 1)`` on ``spread_gap_pairs(n - 1, 64, 64)``; its lookup table
   is simulated once per n, cold, inside the timed region), fixed samples per series.
4. ``exact`` -- time of the exact PAMST privacy check, :func:`dpverify.exact.exact_audit` (the exact output law
   of both inputs of one corner pair, spanning-tree enumeration included, and their exact loss) against |V| on
   ``K_3 ..``.

Every curve gets a table (x, seconds, seconds per unit), the log-log slope fitted by ``np.polyfit`` on
``(log x, log t)`` over its points with ``t > 0.05 s`` (over all its points when fewer than two are that slow,
and said so), and a log-log PNG ``scaling-<curve>.png`` in ``--images`` (default ``docs/images``).
With ``--write FILE`` the text between ``<!-- BEGIN scaling -->`` and ``<!-- END scaling -->`` of ``FILE`` is
replaced by the printed report, which links the PNGs relative to ``FILE``; nothing in it is typed by hand.
"""

from __future__ import annotations

import math
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

import dpverify
from algorithms.dpm.examples import pivot_pairs, spread_gap_pairs
from algorithms.dpm.interval_size import IntervalSizeEst, unit_gap_percentile
from algorithms.dpm.outputs import DPMOutput
from algorithms.graph.examples import corner_pairs
from algorithms.graph.laplace_mst import LaplaceMST
from algorithms.graph.pamst import PAMST
from algorithms.graph.weighted_graph import WeightedGraph
from benchmarks.bench_graph import (LoadMeter, background_busy, bench_arguments, fmt_time, report_header,
                                    wait_for_idle, write_section)
from dpverify.exact import exact_audit
from dpverify.suites import build_mechanism, build_pairs, load_suite

BEGIN, END = "<!-- BEGIN scaling -->", "<!-- END scaling -->"

WORKERS = 1
#: search_samples = min(samples, SEARCH_CAP): the audit's default rule, made explicit.
SEARCH_CAP = 200_000
#: Times at or below this are too close to the fixed costs to enter the fitted slope.
SLOPE_MIN_S = 0.05
#: A point stops repeating once its repeats have taken this long (it is then the best of fewer than k).
REPEAT_CAP_S = 3.0
CATALOGUE = Path(__file__).resolve().parents[1] / "audits" / "catalogue.toml"
DEFAULT_IMAGES = Path("docs/images")

#: The curves, in report order: name -> (title, x label, unit of the per-unit column).
CURVES: dict[str, tuple[str, str, str]] = {
    "samples": ("Audit time against samples", "samples per input", "sample"),
    "graph": ("Audit time against graph size", "|V| (complete graph)", "edge"),
    "dpm": ("Audit time against data size (DPM)", "n (points in the data set)", "point"),
    "exact": ("Exact-check time against graph size (PAMST)", "|V| (complete graph)", "spanning tree"),
}


@dataclass(frozen=True)
class Points:
    """The x values of every series and the fixed budgets (the test passes tiny ones)."""
    samples: tuple[int, ...]            # curve 1: samples per input
    pamst_nodes: tuple[int, ...]        # curve 2
    lmst_nodes: tuple[int, ...]
    graph_samples: int
    dpm_sizes: tuple[int, ...]          # curve 3, DPM end to end
    dpm_samples: int
    interval_sizes: tuple[int, ...]     # curve 3, Algorithm 2 alone
    interval_samples: int
    exact_nodes: tuple[int, ...]        # curve 4
    repeats: int                        # k of best-of-k


FULL = Points(samples=(10_000, 40_000, 100_000, 400_000, 1_000_000, 4_000_000),
              pamst_nodes=(4, 6, 8, 10, 12, 14), lmst_nodes=(4, 6, 8, 11, 14, 18), graph_samples=100_000,
              dpm_sizes=(20, 60, 200, 600, 2000), dpm_samples=5_000,
              interval_sizes=(25, 250, 2_500, 25_000), interval_samples=100_000,
              exact_nodes=(3, 4, 5, 6, 7, 8), repeats=3)
QUICK = Points(samples=(10_000, 40_000, 100_000, 400_000),
               pamst_nodes=(4, 6, 8, 11), lmst_nodes=(4, 6, 8, 11), graph_samples=20_000,
               dpm_sizes=(20, 60, 200, 600), dpm_samples=2_000,
               interval_sizes=(25, 250, 2_500), interval_samples=20_000,
               exact_nodes=(3, 4, 5, 6, 7), repeats=2)


@dataclass
class Series:
    label: str
    xs: list[float] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    units: list[float] = field(default_factory=list)              # the per-unit divisor of each point
    repeats: list[int] = field(default_factory=list)
    extra: list[dict[str, Any]] = field(default_factory=list)     # per-point details for the table


def _log(msg: str) -> None:
    print(f"[bench_scaling] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------------
# timing
# --------------------------------------------------------------------------------------------------


class PhaseClock:
    """The mechanism, with a clock on its calls that tells the audit's two phases apart without looking inside
    the audit: the search phase draws ``search_samples`` outputs per input of every pair first (documented in
    :mod:`dpverify.audit`), so the first call after ``search_outputs`` outputs starts the test phase (fresh
    draws counted on the finalists' events).  One process only (``workers=1``); attributes are delegated."""

    def __init__(self, mechanism: Any, search_outputs: int) -> None:
        self._mechanism = mechanism
        self._left = search_outputs
        self.test_start: float | None = None

    def __call__(self, x: Any, n: int, rng: np.random.Generator) -> Any:
        if self._left <= 0 and self.test_start is None:
            self.test_start = time.perf_counter()
        out = self._mechanism(x, n, rng)
        self._left -= int(n)
        return out

    def __getattr__(self, name: str) -> Any:
        return getattr(self._mechanism, name)

    def __repr__(self) -> str:
        return repr(self._mechanism)


def best_point(fn: Callable[[int], dict[str, Any] | None], k: int) -> tuple[float, int, dict[str, Any]]:
    """Best wall time of ``fn(rep)`` over up to ``k`` repeats (fewer once they have taken ``REPEAT_CAP_S``),
    the number of repeats run and the details ``fn`` returned on the best repeat."""
    best, best_info, done, spent = math.inf, {}, 0, 0.0
    while done < k and (done == 0 or spent < REPEAT_CAP_S):
        t0 = time.perf_counter()
        info = fn(done) or {}
        el = time.perf_counter() - t0
        spent += el
        done += 1
        if el < best:
            best, best_info = el, info
    return best, done, best_info


def timed_audit(mechanism: Any, pairs: Any, epsilon: float, delta: float, samples: int, seed: int,
                **options: Any) -> Callable[[int], dict[str, Any]]:
    """One repeat of a seeded audit with ``search_samples = min(samples, SEARCH_CAP)`` (the audit's default rule;
    ``options``: other audit options, e.g. a catalogue entry's ``alpha``); reports the search/test split."""
    pairs = list(pairs)
    search = min(samples, SEARCH_CAP)

    def run(_: int) -> dict[str, Any]:
        clock = PhaseClock(mechanism, 2 * len(pairs) * search)
        t0 = time.perf_counter()
        r = dpverify.audit(clock, pairs, epsilon, delta, samples=samples, search_samples=search, seed=seed,
                           workers=WORKERS, **options)
        t1 = time.perf_counter()
        split = r.n_pairs == len(pairs) and r.search_samples == search
        test = (0.0 if clock.test_start is None else t1 - clock.test_start) if split else None
        return {"search": None if test is None else t1 - t0 - test, "test": test,
                "search_samples": r.search_samples, "bound": r.epsilon_lower_bound, "pairs": r.n_pairs}
    return run


def _seed(keys: list[int]) -> int:
    """A 63-bit audit seed derived from ``keys`` (the root seed, the curve, the series, the x value)."""
    return int(np.random.SeedSequence(keys).generate_state(1, np.uint64)[0] >> np.uint64(1))


def _add(series: Series, x: float, unit: float, k: int, fn: Callable[[int], dict[str, Any] | None],
         **extra: Any) -> None:
    t, done, info = best_point(fn, k)
    series.xs.append(float(x))
    series.seconds.append(t)
    series.units.append(float(unit))
    series.repeats.append(done)
    series.extra.append({**extra, **info})
    _log(f"  {series.label}: x = {x:g}: {fmt_time(t)} (best of {done})")


def _warm_up() -> None:
    """Import what the audits import lazily (event search, sklearn) before any timed region."""
    dpverify.audit(build_mechanism(_catalogue_entry("laplace")), [(0.0, 1.0)], 0.1, samples=2_000, seed=0,
                   workers=WORKERS)
    dpverify.audit(PAMST(1.0), _corner_pair(4, 0), 1.0, samples=2_000, seed=0, workers=WORKERS)
    dpverify.audit(DPMOutput("structure", **DPM_PARAMS), pivot_pairs(5, 5, 0.2, 0.8, 0.5), 10.0, 1e-6,
                   samples=500, seed=0, workers=WORKERS)
    exact_audit(PAMST(1.0), _corner_pair(3, 0), 1.0)


# --------------------------------------------------------------------------------------------------
# the curves
# --------------------------------------------------------------------------------------------------


def _catalogue_entry(entry_id: str) -> Any:
    return next(e for e in load_suite(CATALOGUE).entries if e.id == entry_id)


def curve_samples(points: Points, seed: int) -> list[Series]:
    """Curve 1: audit time against samples on the catalogue's ``laplace`` and ``histogram`` entries."""
    out = []
    for tag, entry_id in enumerate(("laplace", "histogram")):
        entry = _catalogue_entry(entry_id)
        mech, pairs = build_mechanism(entry), build_pairs(entry, seed)
        label = f"{entry_id}: {mech!r}, {len(pairs)} pair{'s' if len(pairs) > 1 else ''}"
        s = Series(label)
        for n in points.samples:
            ss = _seed([seed, 1, tag, n])
            _add(s, n, n, points.repeats, timed_audit(mech, pairs, entry.claim.epsilon, entry.claim.delta, n, ss,
                                                      **entry.audit_options()))
        out.append(s)
    return out


def _corner_pair(n_nodes: int, seed: int) -> list[tuple[WeightedGraph, WeightedGraph]]:
    """``(K_n(w), K_n(w + d))``: weights U(0, 5) and a sign vector ``d``, both drawn with ``seed``."""
    m = n_nodes * (n_nodes - 1) // 2
    rng = np.random.default_rng([seed, n_nodes])
    w, d = rng.uniform(0.0, 5.0, m), rng.choice([-1.0, 1.0], m)
    return [(a, b) for a, b, _ in corner_pairs(n_nodes, w, [d], 1.0)]


def curve_graph(points: Points, seed: int) -> list[Series]:
    """Curve 2: audit time against |V| for PAMST and the ℓ∞ Laplace MST on one corner pair of K_|V|."""
    out = []
    for tag, (mech, nodes) in enumerate(((PAMST(1.0, mu=1.0), points.pamst_nodes),
                                         (LaplaceMST(1.0, mu=1.0, neighbours="linf"), points.lmst_nodes))):
        s = Series(f"{type(mech).__name__}" + (" (ℓ∞ calibration)" if tag else ""))
        for n in nodes:
            pairs = _corner_pair(n, seed)
            ss = _seed([seed, 2, tag, n])
            _add(s, n, pairs[0][0].n_edges, points.repeats,
                 timed_audit(mech, pairs, 1.0, 0.0, points.graph_samples, ss), edges=pairs[0][0].n_edges)
        out.append(s)
    return out


DPM_PARAMS: dict[str, Any] = dict(epsilon=10.0, delta=1e-6, bounds=[0.0, 1.0], d=1, tau_r=2,
                                  sigmas=[0.1, 0.2, 0.4, 0.8])


def curve_dpm(points: Points, seed: int) -> list[Series]:
    """Curve 3: audit time against n for DPM end to end and for Algorithm 2 alone."""
    dpm = Series(f"DPM end to end (DPMOutput structure), {points.dpm_samples:,} samples")
    mech = DPMOutput("structure", **DPM_PARAMS)
    for n in points.dpm_sizes:
        pairs = pivot_pairs(n // 2, n - n // 2, 0.2, 0.8, 0.5)
        ss = _seed([seed, 3, 0, n])
        _add(dpm, n, n, points.repeats, timed_audit(mech, pairs, 10.0, 1e-6, points.dpm_samples, ss))
    alg2 = Series(f"Algorithm 2 (IntervalSizeEst, ñ = n, cold table), {points.interval_samples:,} samples")
    for n in points.interval_sizes:
        pairs = spread_gap_pairs(n - 1, 64.0, 64.0)
        ss = _seed([seed, 3, 1, n])

        def run(rep: int, n: int = n, pairs: Any = pairs, ss: int = ss) -> dict[str, Any]:
            unit_gap_percentile.cache_clear()
            est = IntervalSizeEst(1.0, float(n), [0.0, 64.0], d=1, table_draws="shared")
            return timed_audit(est, pairs, 1.0, 0.0, points.interval_samples, ss)(rep)

        _add(alg2, n, n, points.repeats, run)
    return [dpm, alg2]


def curve_exact(points: Points, seed: int) -> list[Series]:
    """Curve 4: exact PAMST check of one corner pair of K_|V| against |V|."""
    s = Series("exact_audit(PAMST(1, mu=1)), one corner pair")
    for n in points.exact_nodes:
        pairs = _corner_pair(n, seed)
        g = pairs[0][0]
        holder: dict[str, Any] = {}

        def run(_: int, pairs: Any = pairs) -> dict[str, Any]:
            holder["r"] = exact_audit(PAMST(1.0, mu=1.0), pairs, 1.0)
            return {}

        t, done, _ = best_point(run, points.repeats)
        trees = n ** (n - 2)  # Cayley
        s.xs.append(float(n))
        s.seconds.append(t)
        s.units.append(float(trees))
        s.repeats.append(done)
        s.extra.append({"edges": g.n_edges, "trees": trees, "epsilon": float(holder["r"].epsilon)})
        _log(f"  exact: |V| = {n}: {fmt_time(t)} (best of {done})")
    return [s]


CURVE_FUNCTIONS: dict[str, Callable[[Points, int], list[Series]]] = {
    "samples": curve_samples, "graph": curve_graph, "dpm": curve_dpm, "exact": curve_exact}


def run_curves(points: Points, seed: int) -> dict[str, list[Series]]:
    """Every curve of ``points`` (warm-up first)."""
    _warm_up()
    out = {}
    for name, fn in CURVE_FUNCTIONS.items():
        _log(f"curve {name} ...")
        out[name] = fn(points, seed)
    return out


# --------------------------------------------------------------------------------------------------
# slopes, plots, report
# --------------------------------------------------------------------------------------------------


def slope(xs: list[float], ts: list[float]) -> tuple[float, int, bool]:
    """Fitted log-log slope over the points with ``t > SLOPE_MIN_S`` (all points with ``t > 0`` when fewer
    than two qualify); the number of points used and whether the fallback was taken.  NaN below two points."""
    x, t = np.asarray(xs, dtype=float), np.asarray(ts, dtype=float)
    keep = t > SLOPE_MIN_S
    fallback = int(keep.sum()) < 2
    if fallback:
        keep = t > 0
    if int(keep.sum()) < 2 or np.unique(x[keep]).size < 2:
        return math.nan, int(keep.sum()), fallback
    return float(np.polyfit(np.log(x[keep]), np.log(t[keep]), 1)[0]), int(keep.sum()), fallback


def plot_curve(name: str, series: list[Series], image_dir: Path) -> Path:
    """The log-log PNG ``scaling-<name>.png`` of one curve in ``image_dir`` (created if missing)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    title, xlabel, _ = CURVES[name]
    image_dir.mkdir(parents=True, exist_ok=True)
    path = image_dir / f"scaling-{name}.png"
    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=100)
    for s in series:
        b, _, _ = slope(s.xs, s.seconds)
        ax.plot(s.xs, s.seconds, "o-", label=f"{s.label} (slope {b:.2f})")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(f"seconds (best of k, workers = {WORKERS})")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, format="png", metadata={"Software": None})
    plt.close(fig)
    return path


def _slope_text(s: Series) -> str:
    b, used, fallback = slope(s.xs, s.seconds)
    how = (f"all {used} points (fewer than two above {SLOPE_MIN_S:g} s)" if fallback
           else f"{used} points with t > {SLOPE_MIN_S:g} s")
    return f"log-log slope **{b:.2f}** ({how})"


def _opt_time(s: float | None) -> str:
    return "n/a" if s is None else fmt_time(s)


def _per_unit(t: float, unit: float) -> str:
    v = t / unit
    return f"{v * 1e9:.3g} ns" if v < 1e-6 else fmt_time(v)


def report_curves(curves: dict[str, list[Series]], points: Points, images: dict[str, str]) -> list[str]:
    """The markdown of the four curves (tables, slopes, links to the PNGs ``images[name]``)."""
    L: list[str] = []
    for name, series in curves.items():
        title, xlabel, unit = CURVES[name]
        L += [f"### {title}", ""]
        if name == "samples":
            L += ["Catalogue entries `laplace` and `histogram` (pairs as the suite builds them); search samples = "
                  f"min(samples, {SEARCH_CAP:,}) (the audit's default rule); test phase: from the first fresh draw "
                  "to the end (draws counted on the finalists' events, bounds), search phase: everything before "
                  "(search draws of every pair, event search, choice of finalists).", "",
                  "| series | samples | search samples | seconds | search phase | test phase | per sample | ε bound |"
                  " repeats |", "|---|---|---|---|---|---|---|---|---|"]
            for s in series:
                for x, t, u, k, e in zip(s.xs, s.seconds, s.units, s.repeats, s.extra):
                    L.append(f"| {s.label} | {int(x):,} | {e['search_samples']:,} | {fmt_time(t)} | "
                             f"{_opt_time(e['search'])} | {_opt_time(e['test'])} | {_per_unit(t, u)} | "
                             f"{e['bound']:.4f} | {k} |")
        elif name == "graph":
            L += [f"One corner pair of `K_|V|` (weights U(0, 5), random signs), {points.graph_samples:,} samples, "
                  f"search samples = min(samples, {SEARCH_CAP:,}) = {min(points.graph_samples, SEARCH_CAP):,}.", "",
                  "| series | \\|V\\| | \\|E\\| | seconds | search phase | test phase | per edge | ε bound "
                  "| repeats |",
                  "|---|---|---|---|---|---|---|---|---|"]
            for s in series:
                for x, t, u, k, e in zip(s.xs, s.seconds, s.units, s.repeats, s.extra):
                    L.append(f"| {s.label} | {int(x)} | {e['edges']} | {fmt_time(t)} | {_opt_time(e['search'])} | "
                             f"{_opt_time(e['test'])} | {_per_unit(t, u)} | {e['bound']:.4f} | {k} |")
        elif name == "dpm":
            L += ["DPM end to end: `DPMOutput(\"structure\", ε = 10, δ = 1e-6, [0, 1], d = 1, τ_r = 2, "
                  "σ 0.1..0.8)` on `pivot_pairs(n/2, n/2, 0.2, 0.8, 0.5)`; Algorithm 2: "
                  "`IntervalSizeEst(1, ñ = n, [0, 64], d = 1)` on `spread_gap_pairs(n - 1, 64, 64)`, its table "
                  f"simulated inside the timed region; search samples = min(samples, {SEARCH_CAP:,}).", "",
                  "| series | n | seconds | search phase | test phase | per point | ε bound | repeats |",
                  "|---|---|---|---|---|---|---|---|"]
            for s in series:
                for x, t, u, k, e in zip(s.xs, s.seconds, s.units, s.repeats, s.extra):
                    L.append(f"| {s.label} | {int(x):,} | {fmt_time(t)} | {_opt_time(e['search'])} | "
                             f"{_opt_time(e['test'])} | {_per_unit(t, u)} | {e['bound']:.4f} | {k} |")
        else:
            L += ["`dpverify.exact.exact_audit` of `PAMST(1, mu = 1)` on one corner pair of `K_|V|`: the exact law of "
                  "both inputs (every spanning tree, |V|^(|V|-2) by Cayley) and their exact privacy loss.", "",
                  "| \\|V\\| | \\|E\\| | spanning trees | seconds | per tree | exact ε of the pair | repeats |",
                  "|---|---|---|---|---|---|---|"]
            for s in series:
                for x, t, u, k, e in zip(s.xs, s.seconds, s.units, s.repeats, s.extra):
                    L.append(f"| {int(x)} | {e['edges']} | {e['trees']:,} | {fmt_time(t)} | {_per_unit(t, u)} | "
                             f"{e['epsilon']:.4f} | {k} |")
        L.append("")
        for s in series:
            L.append(f"- {s.label}: {_slope_text(s)} in {xlabel}.")
            if name == "samples" and all(e["test"] is not None for e in s.extra):
                b, used, _ = slope(s.xs, [e["test"] for e in s.extra])
                L.append(f"  - its test phase alone: slope {b:.2f} ({used} points).")
        if name == "exact":
            s = series[0]
            trees = [e["trees"] for e in s.extra]
            b, used, _ = slope(trees, s.seconds)
            L.append(f"- against the number of spanning trees instead: slope {b:.2f} ({used} points).")
        L += ["", f"![{title}]({images[name]})", ""]
    return L


def report(command: str, seed: int, quick: bool, points: Points, curves: dict[str, list[Series]],
           images: dict[str, str], busy: tuple[float | None, float | None, float | None]) -> str:
    L = report_header(command, seed, busy)
    L += [f"Each point: best wall time of up to {points.repeats} seeded repeats of the same work (fewer once the "
          f"repeats of a point have taken {REPEAT_CAP_S:g} s; the `repeats` column), workers = {WORKERS} (one "
          f"process: the curves are about the audits, not the pool).  Slopes: `np.polyfit` of log t on log x over "
          f"the points with t > {SLOPE_MIN_S:g} s.", ""]
    L += report_curves(curves, points, images)
    if quick:
        L += ["(--quick: fewer and smaller points, smaller budgets.)"]
    return "\n".join(L).rstrip("\n")


def write_plots(curves: dict[str, list[Series]], image_dir: Path, link_base: Path) -> dict[str, str]:
    """One PNG per curve in ``image_dir``; returns the links relative to ``link_base`` (posix paths)."""
    links = {}
    for name, series in curves.items():
        path = plot_curve(name, series, image_dir)
        links[name] = Path(os.path.relpath(path.resolve(), link_base.resolve())).as_posix()
    return links


def main(argv: list[str] | None = None) -> int:
    import argparse

    raw = sys.argv[1:] if argv is None else list(argv)
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--images", type=Path, default=DEFAULT_IMAGES, metavar="DIR",
                     help=f"where the PNGs go (default {DEFAULT_IMAGES})")
    known, rest = pre.parse_known_args(raw)
    args = bench_arguments("python -m benchmarks.bench_scaling", __doc__, "fewer and smaller points (< 60 s)", rest,
                           parents=[pre])
    points = QUICK if args.quick else FULL
    command = " ".join(["python -m benchmarks.bench_scaling", *raw])
    busy_before = wait_for_idle(args.wait_idle, "bench_scaling")
    meter = LoadMeter()
    t0 = time.perf_counter()
    curves = run_curves(points, args.seed)
    busy = (busy_before, meter.others(), background_busy())
    _log(f"measured in {time.perf_counter() - t0:.0f} s")
    link_base = args.write.parent if args.write is not None else Path("docs")
    images = write_plots(curves, known.images, link_base)
    text = report(command, args.seed, args.quick, points, curves, images, busy)
    print(text)
    if args.write is not None:
        write_section(args.write, text, BEGIN, END)
        _log(f"wrote the generated section of {args.write} and {len(images)} PNGs in {known.images}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
