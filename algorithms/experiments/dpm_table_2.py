"""Reproduce Table 2 of seed 004 on the synthetic data (Synth-10d, Synth-100d): KMeans, DP-Lloyd and DPM.

Source: seed 004, Liebenow, Schütt et al., "DPM: Clustering Sensitive Data through Separation" (CCS 2024),
Sec. 6 (6.1 set-up, 6.2 results), Table 1 (data), Table 2 (results), App. C.1 (metrics).  The paper's MNIST/Fashion
embeddings and UCI data cannot be rebuilt offline (the CNN is unspecified); scikit-learn's bundled digits
stand in as a small real data set, without paper numbers.  EM-MC and LSH-Splits are not reproduced.

Protocol (Sec. 6.1-6.2), as settled for this reproduction:

* **Data** (:mod:`algorithms.dpm.datasets`): the authors' ``make_blobs`` (σ = 1, centres in (−100, 100)^d,
  ``random_state=42``), clipped to R = (−100, 100) (the authors' code does not clip); digits with R = (0, 16).
* **Algorithms**: KMeans++ (``n_init=1, max_iter=300``) and DP-Lloyd (diffprivlib, the public box) with
  k = the true number of classes; DPM (:class:`algorithms.dpm.DPM`, the paper's defaults) with
  ``out_of_range="clip"``; ε = 1, δ = 1/(n√n) with the true n (the authors' code; DP-Lloyd ignores δ).
* **Metrics** (:mod:`algorithms.dpm.metrics`): squared inertia, silhouette on a seeded 10 000-point
  subsample, majority-label accuracy, and the KMeans distance as the per-private-centre mean distance to each
  reference set, averaged over the reference sets, normalised by the box diameter (b − a)·√d.
* **Reference sets of the KMeans distance**: the paper takes the top-20 runs by silhouette of a
  hyper-parameter search of non-private KMeans.  Here: the KMeans runs of the KMeans column itself (k = the
  true number of classes), ranked by silhouette, the top ``min(20, runs)`` -- with 20 runs, all of them.
  (KMeans' own distance therefore includes a zero term for itself.)
* **Runs and seeds**: 20 runs per algorithm and data set (quick: 3).  Run ``i`` of algorithm ``j`` on data set
  ``s`` uses ``SeedSequence(seed).spawn(#datasets)[s].spawn(3)[j].spawn(runs)[i]``, whose two children seed
  the algorithm and the silhouette subsample.  Every task runs with BLAS/OpenMP limited to one thread and
  the results are collected in task order, so the report depends on ``seed`` and ``quick`` only, not on
  ``workers``.  "±" is the standard deviation over runs (ddof = 1).
"""

from __future__ import annotations

import math
import os
import shlex
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..dpm.baselines import dp_lloyd, kmeans
from ..dpm.datasets import Dataset, digits, synth
from ..dpm.metrics import (
    DEFAULT_SILHOUETTE_SAMPLE,
    ClusteringScores,
    box_diameter,
    evaluate,
    kmeans_distance,
)

__all__ = ["reproduce", "Config", "DataSpec", "FULL", "QUICK", "PRINTED", "ALGORITHMS", "METRICS",
           "run_experiment", "Results"]

NAME = "dpm-table-2-synth"
ALGORITHMS: tuple[str, ...] = ("KMeans", "DP-Lloyd", "DPM")
EPSILON: float = 1.0
#: The paper's number of reference KMeans solutions ("we pick the top 20 KMeans runs", App. C.1).
TOP_REFERENCES: int = 20
#: The data sets' generator seed in the authors' code (``make_blobs(..., random_state=42)``).
DATA_SEED: int = 42
#: Relative float-rounding floor: identical runs can differ in the last bits (SIMD reductions depend on memory
#: alignment, so on the process), so differences below this fraction of the scale are printed as 0 and
#: silhouettes are rounded to 12 decimals before ranking -- the report stays independent of ``workers``.
ROUNDING_FLOOR: float = 1e-9

#: (field of ClusteringScores, row label, direction) in the order of Table 2, plus the raw distance.
METRICS: tuple[tuple[str, str], ...] = (
    ("silhouette", "Silh. Score ↑"),
    ("accuracy", "Accuracy ↑"),
    ("inertia", "Inertia ↓"),
    ("norm_kmeans_distance", "Norm. KMeans Dist. ↓"),
    ("kmeans_distance", "KMeans Dist. (raw) ↓"),
    ("n_centres", "Number of centres"),
)

# Seed 004, Table 2 (Sec. 6.2), quoted from the paper: the KMeans, DP-Lloyd and DPM columns, verbatim.
PRINTED: dict[str, dict[str, dict[str, str]]] = {
    "Synth-10d": {
        "silhouette": {"KMeans": "0.97 ± 0.00", "DP-Lloyd": "0.61 ± 0.05", "DPM": "0.96 ± 0.02"},
        "accuracy": {"KMeans": "1.00 ± 0.00", "DP-Lloyd": "0.66 ± 0.05", "DPM": "0.99 ± 0.01"},
        "inertia": {"KMeans": "1.0e06 ± 2.0e-10", "DP-Lloyd": "6.0e08 ± 1.0e08", "DPM": "1.8e07 ± 2.7e07"},
        "norm_kmeans_distance": {"KMeans": "0.00 ± 0.00", "DP-Lloyd": "0.12 ± 0.01", "DPM": "0.01 ± 0.00"},
    },
    "Synth-100d": {
        "silhouette": {"KMeans": "0.98 ± 0.00", "DP-Lloyd": "0.58 ± 0.04", "DPM": "0.98 ± 0.01"},
        "accuracy": {"KMeans": "1.00 ± 0.00", "DP-Lloyd": "0.63 ± 0.04", "DPM": "1.00 ± 0.01"},
        # the source renders the std as "2.6e09" with E-form "2.6E-09" (in the paper's text): negative exponent
        "inertia": {"KMeans": "1.0e07 ± 2.6e-09", "DP-Lloyd": "1.5e10 ± 9.7e08", "DPM": "5.4e08 ± 3.4e08"},
        "norm_kmeans_distance": {"KMeans": "0.00 ± 0.00", "DP-Lloyd": "0.21 ± 0.01", "DPM": "0.03 ± 0.00"},
    },
}


def _parse_printed(cell: str) -> tuple[float, float, float]:
    """``"1.8e07 ± 2.7e07"`` -> ``(mean, sd, half a unit of the last printed digit of the mean)``."""
    mean_s, sd_s = (p.strip() for p in cell.split("±"))
    mantissa = mean_s.lower().split("e")[0]
    exponent = int(mean_s.lower().split("e")[1]) if "e" in mean_s.lower() else 0
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    return float(mean_s), float(sd_s), 0.5 * 10.0 ** (exponent - decimals)


# --------------------------------------------------------------------------------------------------
# configuration
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DataSpec:
    """A data set of the experiment: ``kind`` "synth" (``n`` points, ``d`` dims, ``classes`` Gaussians) or
    "digits"; ``paper`` names its Table 2 block (None: no paper numbers)."""

    label: str
    kind: str
    n: int
    d: int
    classes: int
    paper: str | None

    def build(self) -> Dataset:
        if self.kind == "synth":
            return synth(n=self.n, d=self.d, centers=self.classes, seed=DATA_SEED)
        if self.kind == "digits":
            return digits()
        raise ValueError(f"unknown data set kind {self.kind!r}; use 'synth' or 'digits'")


@dataclass(frozen=True)
class Config:
    datasets: tuple[DataSpec, ...]
    runs: int


#: The paper's setting: 100 000 points, 64 Gaussians, 20 runs; plus digits.  About 15-20 min on 2 cores.
FULL = Config(
    datasets=(
        DataSpec("Synth-10d", "synth", 100_000, 10, 64, "Synth-10d"),
        DataSpec("Synth-100d", "synth", 100_000, 100, 64, "Synth-100d"),
        DataSpec("digits", "digits", 1797, 64, 10, None),
    ),
    runs=20,
)
#: A smoke configuration (seconds): 5 000 points, d = 10 only, 3 runs -- NOT comparable with the paper.
QUICK = Config(
    datasets=(
        DataSpec("Synth-10d (n = 5 000)", "synth", 5_000, 10, 64, "Synth-10d"),
        DataSpec("digits", "digits", 1797, 64, 10, None),
    ),
    runs=3,
)


# --------------------------------------------------------------------------------------------------
# the runs
# --------------------------------------------------------------------------------------------------
_DATA_CACHE: dict[DataSpec, Dataset] = {}


def _dataset(spec: DataSpec) -> Dataset:
    """The data set of ``spec``, built once per process (deterministic: the generator seed is fixed)."""
    if spec not in _DATA_CACHE:
        _DATA_CACHE[spec] = spec.build()
    return _DATA_CACHE[spec]


def delta_for(n: int) -> float:
    """δ = 1/(n√n) with the true n (seed 004 Fig. 1 caption; the authors' ``hypersettings.py``)."""
    return 1.0 / (n * math.sqrt(n))


def _centres(algorithm: str, ds: Dataset, fit_seed: np.random.SeedSequence) -> np.ndarray:
    if algorithm == "KMeans":
        return kmeans(ds.data, ds.n_classes, fit_seed)
    if algorithm == "DP-Lloyd":
        return dp_lloyd(ds.data, ds.n_classes, ds.bounds, EPSILON, fit_seed)
    if algorithm == "DPM":
        try:
            from ..dpm import DPM
        except ImportError as exc:
            raise ImportError(f"the DPM column needs algorithms.dpm.DPM ({exc})") from exc
        model = DPM(epsilon=EPSILON, delta=delta_for(ds.n), bounds=ds.bounds, d=ds.d, out_of_range="clip")
        return np.asarray(model.fit(ds.data, np.random.default_rng(fit_seed)).centres, dtype=float)
    raise ValueError(f"unknown algorithm {algorithm!r}; known: {', '.join(ALGORITHMS)}")


@dataclass(frozen=True)
class RunResult:
    """One run: the centres and their scores (KMeans distances not yet filled in)."""

    centres: np.ndarray
    scores: ClusteringScores
    seconds: float


def _one_run(task: tuple[DataSpec, str, np.random.SeedSequence]) -> RunResult:
    """Fit one algorithm once and score it (one BLAS/OpenMP thread: results independent of the pool size)."""
    from threadpoolctl import threadpool_limits

    spec, algorithm, seq = task
    fit_seed, silhouette_seed = seq.spawn(2)
    with threadpool_limits(limits=1):
        ds = _dataset(spec)
        t0 = time.perf_counter()
        centres = _centres(algorithm, ds, fit_seed)
        seconds = time.perf_counter() - t0
        scores = evaluate(ds.data, ds.labels, centres, None, ds.bounds, silhouette_seed,
                          sample_size=DEFAULT_SILHOUETTE_SAMPLE)
    return RunResult(centres, scores, seconds)


@dataclass(frozen=True)
class DatasetResults:
    spec: DataSpec
    n: int
    d: int
    classes: int
    bounds: tuple[float, float]
    n_clipped: int
    runs: dict[str, list[RunResult]]
    references: tuple[int, ...]  # indices of the KMeans runs used as reference sets, best silhouette first


@dataclass(frozen=True)
class Results:
    config: Config
    seed: int
    datasets: tuple[DatasetResults, ...]


def _with_distances(res: list[RunResult], refs: Sequence[np.ndarray], bounds: tuple[float, float],
                    d: int) -> list[RunResult]:
    diameter = box_diameter(bounds, d)
    out = []
    for r in res:
        raw = kmeans_distance(r.centres, refs)
        if raw < ROUNDING_FLOOR * diameter:
            raw = 0.0  # float rounding between identical solutions
        out.append(replace(r, scores=replace(r.scores, kmeans_distance=raw, norm_kmeans_distance=raw / diameter)))
    return out


def run_experiment(config: Config, seed: int, workers: int | None = None, progress: bool = False) -> Results:
    """Every (data set, algorithm, run) of ``config``; the results do not depend on ``workers``."""
    per_ds = np.random.SeedSequence(seed).spawn(len(config.datasets))
    tasks: list[tuple[DataSpec, str, np.random.SeedSequence]] = []
    for s, spec in enumerate(config.datasets):
        for a, ss in zip(ALGORITHMS, per_ds[s].spawn(len(ALGORITHMS))):
            tasks.extend((spec, a, run_ss) for run_ss in ss.spawn(config.runs))
    n_workers = max(1, min(len(tasks), workers if workers is not None else (os.cpu_count() or 1)))
    t0 = time.perf_counter()
    step = max(1, len(tasks) // 20)
    results: list[RunResult] = []

    def note(r: RunResult) -> None:
        results.append(r)
        done = len(results)
        if progress and (done % step == 0 or done == len(tasks)):
            print(f"{NAME}: {done}/{len(tasks)} runs ({time.perf_counter() - t0:.0f} s)", file=sys.stderr, flush=True)

    if n_workers == 1:
        for t in tasks:
            note(_one_run(t))
    else:
        # the expensive tasks (large d) first, for load balance; results are put back in task order
        order = sorted(range(len(tasks)), key=lambda i: -tasks[i][0].n * tasks[i][0].d)
        by_index: dict[int, RunResult] = {}
        with ProcessPoolExecutor(n_workers) as pool:
            for i, r in zip(order, pool.map(_one_run, [tasks[i] for i in order], chunksize=1)):
                by_index[i] = r
                note(r)
        results = [by_index[i] for i in range(len(tasks))]

    out = []
    for s, spec in enumerate(config.datasets):
        ds = _dataset(spec)
        block = results[s * len(ALGORITHMS) * config.runs:(s + 1) * len(ALGORITHMS) * config.runs]
        runs = {a: block[j * config.runs:(j + 1) * config.runs] for j, a in enumerate(ALGORITHMS)}
        sil = [round(r.scores.silhouette, 12) for r in runs["KMeans"]]
        ranked = sorted(range(config.runs), key=lambda i: (-sil[i], i))[:min(TOP_REFERENCES, config.runs)]
        refs = [runs["KMeans"][i].centres for i in ranked]
        runs = {a: _with_distances(rs, refs, ds.bounds, ds.d) for a, rs in runs.items()}
        out.append(DatasetResults(spec, ds.n, ds.d, ds.n_classes, ds.bounds, ds.n_clipped, runs, tuple(ranked)))
    return Results(config, seed, tuple(out))


# --------------------------------------------------------------------------------------------------
# the report
# --------------------------------------------------------------------------------------------------
def _values(runs: list[RunResult], metric: str) -> np.ndarray:
    return np.array([float(getattr(r.scores, metric)) for r in runs])


def _mean_sd(x: np.ndarray) -> tuple[float, float]:
    """Mean and SD (ddof = 1; NaN for one run); an SD below ``ROUNDING_FLOOR·|mean|`` is float rounding: 0."""
    m = float(np.mean(x))
    s = float(np.std(x, ddof=1)) if x.size > 1 else math.nan
    if math.isfinite(s) and s <= ROUNDING_FLOOR * abs(m):
        s = 0.0
    return m, s


def _fmt(metric: str, v: float) -> str:
    if not math.isfinite(v):
        return "–"
    if metric == "inertia":
        return f"{v:.2e}"
    if metric == "kmeans_distance":
        return f"{v:.2f}"
    if metric == "n_centres":
        return f"{v:.1f}"
    return f"{v:.3f}"


def _cell(metric: str, x: np.ndarray) -> str:
    m, s = _mean_sd(x)
    return f"{_fmt(metric, m)} ± {_fmt(metric, s)}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + ["| " + " | ".join(r) + " |" for r in rows]


def _consistent(metric: str, printed: str, x: np.ndarray) -> tuple[bool, float]:
    """Paper mean within ours ± (2·max(SD_ours, SD_paper) + half a unit of the paper's last digit)."""
    pm, psd, rounding = _parse_printed(printed)
    m, s = _mean_sd(x)
    tol = 2.0 * max(s if math.isfinite(s) else 0.0, psd) + rounding
    return abs(m - pm) <= tol, tol


def _plot(res: Results, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    blocks = res.datasets
    fig, axes = plt.subplots(1, len(blocks), figsize=(4.2 * len(blocks), 3.6), squeeze=False)
    for ax, blk in zip(axes[0], blocks):
        labels, means, sds, colours, hatches = [], [], [], [], []
        for alg, colour in (("DP-Lloyd", "tab:orange"), ("DPM", "tab:blue")):
            if blk.spec.paper is not None:
                pm, psd, _ = _parse_printed(PRINTED[blk.spec.paper]["norm_kmeans_distance"][alg])
                labels.append(f"{alg}\npaper")
                means.append(pm)
                sds.append(psd)
                colours.append(colour)
                hatches.append("//")
            m, s = _mean_sd(_values(blk.runs[alg], "norm_kmeans_distance"))
            labels.append(f"{alg}\nours")
            means.append(m)
            sds.append(0.0 if not math.isfinite(s) else s)
            colours.append(colour)
            hatches.append("")
        pos = np.arange(len(labels))
        bars = ax.bar(pos, means, yerr=sds, color=colours, capsize=4, edgecolor="black", linewidth=0.6)
        for bar, h in zip(bars, hatches):
            bar.set_hatch(h)
            if h:
                bar.set_alpha(0.55)
        ax.set_xticks(pos)
        ax.set_xticklabels(labels, fontsize=8)
        ax.set_title(blk.spec.label + ("" if blk.spec.paper else " (no paper values)"), fontsize=9)
        ax.set_ylabel("Norm. KMeans Dist. (mean ± SD) ↓", fontsize=8)
        ax.set_ylim(bottom=0)
    fig.suptitle(f"Seed 004 Table 2: normalised KMeans distance, ε = {EPSILON:g} ({res.config.runs} runs; "
                 f"hatched = paper)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)


def _command(quick: bool, seed: int, out_dir: Path) -> str:
    return (f"python -m dpverify reproduce {NAME}{' --quick' if quick else ''} --seed {seed} "
            f"--out {shlex.quote(str(out_dir))}")


def format_report(res: Results, out_dir: Path, quick: bool, figure: str) -> str:
    cfg = res.config
    lines: list[str] = []
    w = lines.append
    w(f"# Reproduction of seed 004, Table 2 (Synth): KMeans, DP-Lloyd, DPM{' -- QUICK MODE' if quick else ''}")
    w("")
    w(f"Produced by `{_command(quick, res.seed, out_dir)}` (the numbers depend only on the seed and the mode, "
      f"not on `--workers`).")
    w("")
    if quick:
        w(f"> **Quick mode: {cfg.runs} runs, Synth-10d with only {cfg.datasets[0].n} points. These numbers are NOT "
          f"comparable with the paper's (100 000 points, 20 runs); the consistency flags are meaningless here.** "
          f"Run without `--quick` for the reproduction.")
        w("")
    w("Source: Liebenow, Schütt et al., \"DPM: Clustering Sensitive Data through Separation\" (CCS 2024), "
      "Sec. 6.1-6.2, Table 1, Table 2 and App. C.1. EM-MC and LSH-Splits are not reproduced; the "
      "paper's embedding and UCI data cannot be rebuilt offline, scikit-learn's digits stand in (no paper numbers).")
    w("")
    w("## Settings")
    w("")
    rows = []
    for blk in res.datasets:
        a, b = blk.bounds
        rows.append([blk.spec.label, f"{blk.n}", f"{blk.d}", f"{blk.classes}", f"({a:g}, {b:g})",
                     f"{box_diameter(blk.bounds, blk.d):.4g}", f"{blk.n_clipped}", f"{delta_for(blk.n):.3e}"])
    lines.extend(_table(["data set", "n", "d", "classes (k of the baselines)", "public range R",
                         "diameter (b−a)·√d", "points clipped into R", "δ = 1/(n√n)"], rows))
    w("")
    w(f"- Synth: `sklearn.datasets.make_blobs(n_samples=n, n_features=d, centers=64, random_state={DATA_SEED}, "
      "center_box=(-100, 100), cluster_std=1)` as the authors' code, then clipped to R (the authors' code does "
      "not clip; DP needs the data inside the public range). Digits: `sklearn.datasets.load_digits()`.")
    w(f"- ε = {EPSILON:g} for every algorithm; δ = 1/(n√n) with the true n (the authors' code) for DPM; DP-Lloyd "
      "is pure ε-DP.")
    w("- KMeans: `sklearn.cluster.KMeans(n_clusters=k, n_init=1, max_iter=300, random_state=…)`. DP-Lloyd: "
      "`diffprivlib.models.KMeans(n_clusters=k, epsilon=1, bounds=(a·1_d, b·1_d), random_state=…)` (diffprivlib "
      "0.6.6). Both receive k = the number of classes. DPM: `algorithms.dpm.DPM(epsilon=1, delta=δ, bounds=R, d=d, "
      "out_of_range=\"clip\")` with the paper's defaults; it chooses its number of clusters itself (≤ 2^τ_r = 128).")
    w(f"- Metrics (`algorithms.dpm.metrics`), every point labelled by its nearest centre: **inertia** = sum of "
      f"**squared** distances (Def. 10 prints non-squared; the paper's numbers imply squared, Table 2); "
      f"**silhouette** = `sklearn.metrics.silhouette_score` on a seeded random subsample of "
      f"{DEFAULT_SILHOUETTE_SAMPLE} points (all points when n is smaller), −1 if fewer than 2 clusters are "
      f"non-empty; **accuracy** = majority-label purity (Def. 12); **KMeans distance** (Def. 9 as the authors' "
      f"`norm_kmeans_dist`) = mean over the reference sets of the per-private-centre mean distance to the "
      f"nearest reference centre; **Norm.** = divided by the diameter (b − a)·√d of the public box (the code's "
      f"`2·radius` is undefined).")
    w(f"- Reference sets of the KMeans distance: the paper uses the top-20 KMeans runs by silhouette of a "
      f"hyper-parameter search. Here: the {cfg.runs} KMeans runs of the KMeans column (k = the number of "
      f"classes), ranked by silhouette, top {min(TOP_REFERENCES, cfg.runs)} (i.e. all of them). KMeans' own "
      f"distance includes the zero distance to itself.")
    w(f"- {cfg.runs} runs per algorithm and data set; seeds `SeedSequence({res.seed}).spawn({len(cfg.datasets)})[s]"
      f".spawn(3)[algorithm].spawn({cfg.runs})[run]`, its two children seeding the algorithm and the silhouette "
      f"subsample. \"±\" = standard deviation over the runs (ddof = 1; below {ROUNDING_FLOOR:g} of the mean, "
      f"i.e. float rounding between identical runs, shown as 0). The paper's \"±\" is unspecified.")
    w("")
    for blk in res.datasets:
        w(f"## {blk.spec.label}")
        w("")
        if blk.spec.paper is not None:
            printed = PRINTED[blk.spec.paper]
            header = ["metric"] + [f"{a} {src}" for a in ALGORITHMS for src in ("paper", "ours")]
            rows = []
            for metric, label in METRICS:
                row = [label]
                for a in ALGORITHMS:
                    p = printed.get(metric, {}).get(a)
                    if p is None:
                        p = f"k = {blk.classes} (input)" if metric == "n_centres" and a != "DPM" else "–"
                    row += [p, _cell(metric, _values(blk.runs[a], metric))]
                rows.append(row)
            lines.extend(_table(header, rows))
            w("")
            w(f"Paper: Table 2, {blk.spec.paper} block (mean ± std over 20 runs). Number of centres: the paper gives "
              f"the baselines k and does not report DPM's. For σ = 1 Gaussians the optimal (squared) inertia is "
              f"about n·d·σ² = {blk.n * blk.d:.1e} (Table 2's KMeans column; slightly less after clipping).")
        else:
            rows = [[label] + [_cell(metric, _values(blk.runs[a], metric)) for a in ALGORITHMS]
                    for metric, label in METRICS]
            lines.extend(_table(["metric"] + [f"{a} ours" for a in ALGORITHMS], rows))
            w("")
            w("No paper numbers (not one of the paper's data sets).")
        w("")
        degenerate = ", ".join(f"{a} {int(np.sum(_values(blk.runs[a], 'silhouette') == -1.0))}/{cfg.runs}"
                               for a in ALGORITHMS)
        k_dpm = _values(blk.runs["DPM"], "n_centres")
        w(f"Runs with fewer than two non-empty clusters (silhouette set to −1): {degenerate}. DPM's number of "
          f"clusters ranges over {int(k_dpm.min())}–{int(k_dpm.max())}.")
        w("")
        ref_sil = [blk.runs["KMeans"][i].scores.silhouette for i in blk.references]
        w(f"Reference sets: KMeans runs {', '.join(str(i) for i in blk.references)} (by silhouette, "
          f"{max(ref_sil):.3f} … {min(ref_sil):.3f}).")
        w("")
    w("## Side by side with the paper")
    w("")
    w("✓: the paper's mean lies within ours ± (2·max(our SD, the paper's std) + half a unit of the paper's last "
      "printed digit); ✗ otherwise.")
    w("")
    rows = []
    n_ok = n_all = 0
    for blk in res.datasets:
        if blk.spec.paper is None:
            continue
        for metric, label in METRICS:
            for a in ALGORITHMS:
                p = PRINTED[blk.spec.paper].get(metric, {}).get(a)
                if p is None:
                    continue
                x = _values(blk.runs[a], metric)
                ok, tol = _consistent(metric, p, x)
                m, _ = _mean_sd(x)
                pm = _parse_printed(p)[0]
                ratio = f"{m / pm:.2f}" if pm != 0 else "–"
                rows.append([blk.spec.label, a, label, p, _cell(metric, x), ratio, "✓" if ok else "✗"])
                n_ok += ok
                n_all += 1
    lines.extend(_table(["data set", "algorithm", "metric", "paper", "ours", "ours/paper (means)", "consistent"],
                        rows))
    w("")
    w(f"{n_ok} of {n_all} paper cells are consistent with ours by this rule.")
    w("")
    w("## Norm. KMeans distance: DPM vs DP-Lloyd")
    w("")
    w(f"![normalised KMeans distance]({figure})")
    w("")
    for blk in res.datasets:
        dpm_m, dpm_s = _mean_sd(_values(blk.runs["DPM"], "norm_kmeans_distance"))
        dpl_m, dpl_s = _mean_sd(_values(blk.runs["DP-Lloyd"], "norm_kmeans_distance"))
        k_m, k_s = _mean_sd(_values(blk.runs["DPM"], "n_centres"))
        rel = "smaller" if dpm_m < dpl_m else "not smaller"
        w(f"- {blk.spec.label}: DPM {dpm_m:.3f} ± {dpm_s:.3f} vs DP-Lloyd {dpl_m:.3f} ± {dpl_s:.3f} "
          f"(DPM's is {rel}; ratio DP-Lloyd/DPM = {dpl_m / dpm_m:.1f}); DPM output {k_m:.1f} ± {k_s:.1f} "
          f"clusters for {blk.classes} classes.")
    w("")
    return "\n".join(lines)


def reproduce(*, quick: bool, seed: int, out_dir: Path, workers: int | None) -> str:
    """Run the experiment (:data:`QUICK` or :data:`FULL`), write ``dpm-table-2-synth.png`` into ``out_dir``
    and return the markdown report."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    cfg = QUICK if quick else FULL
    res = run_experiment(cfg, seed, workers, progress=not quick)
    figure = f"{NAME}.png"
    _plot(res, out_dir / figure)
    return format_report(res, out_dir, quick, figure)
