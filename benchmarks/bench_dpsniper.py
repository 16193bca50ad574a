"""dpverify side by side with DP-Sniper on DP-Sniper's default benchmark set (issue 22).

    python -m benchmarks.bench_dpsniper --mirror DIR               # DP-Sniper at --fraction of its default budget
    python -m benchmarks.bench_dpsniper --quick                    # smoke run: a fifth of that fraction
    python -m benchmarks.bench_dpsniper --fraction 0.002 --only LaplaceMechanism,NoisyHist1
    python -m benchmarks.bench_dpsniper --write docs/performance.md  # also rewrite the generated section
    python -m benchmarks.bench_dpsniper --no-dpsniper              # dpverify's half only
    python -m benchmarks.bench_dpsniper --profile all              # profile every mechanism (default: goal missed)
    python -m benchmarks.bench_dpsniper --no-profile --json R.json # no profiles; everything measured into R.json
    python -m benchmarks.bench_dpsniper --repeat 3                 # three side-by-side runs: goal met in how many
    python -m benchmarks.bench_dpsniper --no-dpsniper --no-profile --fraction 0.1 --section dpsniper-published \
        --write docs/performance.md                                # dpverify alone against the published bounds

**DP-Sniper** (Bichsel, Gehr, Drachsler-Cohen, Tsankov, Vechev, S&P 2021; ``eth-sri/dp-sniper`` at commit
:data:`DPSNIPER_COMMIT`, the last one of its history, 2021-08-27) is not on the package registry: it is installed
from a git copy of its repository (``--mirror DIR``, a bare clone or snapshot holding that commit, or the
``DPSNIPER_MIRROR`` environment variable) into its own virtual environment, never into the project's:
``python -m venv DIR``, ``git --git-dir=MIRROR archive COMMIT | tar -x -C DIR/src``, ``pip install`` of
:data:`DPSNIPER_PINS` (its ``setup.py`` requirements at versions that install on Python 3.11; torch as the CPU-only
wheel ``2.13.0+cpu`` where the index has it, else the regular ``torch==2.13.0``), then ``pip install --no-deps
DIR/src``.  DP-Sniper runs there as a subprocess (``benchmarks/dpsniper_runner.py``: its docstring says which of
DP-Sniper's code runs and how the budget, times and samples are counted), 2 processes, logistic-regression
classifier as in ``exp_default.py``.

**dpverify** audits the same mechanism (:data:`MAPPING`: a class of ``algorithms/`` with DP-Sniper's parameters, or
a port of :mod:`benchmarks.dpsniper_mechanisms`) on DP-Sniper's own input pairs (``PatternGenerator``'s patterns;
dpverify tests both directions of each, DP-Sniper lists both orders) with :func:`dpverify.audit`, ``workers = 2``,
``alpha = 1 − confidence`` (0.1: DP-Sniper's 90 %), ``search_samples = n_train + n_check`` (the outputs per input
DP-Sniper's search draws on each pair: ``n_train`` to train its classifier and ``n_check`` for the estimate that
picks its pair, besides ``n`` on the second input for its threshold) and ``samples = n_final``
outputs per input for one finalist (:data:`FINALISTS`: one event on one pair, as DP-Sniper takes its best pair to
its final estimate): ``2·n_final`` outputs for the final test (at most: with ``ratio_test = "auto"``,
:data:`RATIO_TEST`, a finalist whose search frequencies project a tighter bound from the conditional Poisson test gets
Poisson-sized samples of mean ``n_final − 4·sqrt(n_final)``, never more than ``n_final``), the outputs of DP-Sniper's
final estimate, and fewer in all than DP-Sniper draws (:func:`dpverify_outputs` against :func:`benchmarks.dpsniper_runner.samples_used`).

Goal of issue 22, per mechanism: dpverify's ε lower bound ≥ DP-Sniper's, in ≤ 1/10 of DP-Sniper's wall time.
With ``--repeat K`` the side-by-side run is made K times (dpverify's half, then DP-Sniper's, each time): the main
table is the first run's, a second one (:mod:`benchmarks.dpsniper_repeats`) says per mechanism in how many runs the
goal was met and how far each figure moved.  Every mechanism that misses it in some run (``--profile all``: every one; ``--no-profile``: none) is then audited again, same
budget and seed, in one process under cProfile (:mod:`benchmarks.profiling`): the section says where dpverify's time
goes on it, which phase dominates how often, and the *sampling floor*, the CPU seconds of the mechanism's own code
for dpverify's outputs, against DP-Sniper's time (above ``WORKERS / SPEED_GOAL`` of it the goal is out of reach at
this sample count).
"""

from __future__ import annotations

import importlib
import json
import math
import os
import statistics
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

from benchmarks import dpsniper_runner as runner
from benchmarks.dpsniper_repeats import repeat_table
from benchmarks.peer_runner import floats, json_objects, run_runner
from benchmarks.profiling import AUDIT_PHASES, Profile, dominance_sentence, profile_call
from benchmarks.bench_graph import (LoadMeter, background_busy, bench_arguments, fmt_busy, report_header,
                                    usable_cpus, verdict, wait_for_idle, write_section)

BEGIN, END = "<!-- BEGIN dpsniper -->", "<!-- END dpsniper -->"


def markers(section: str) -> tuple[str, str]:
    """The markers of the generated section ``section`` (``--section``; default ``dpsniper``, the side-by-side run;
    ``dpsniper-published`` holds dpverify's half alone at a larger fraction against the published bounds)."""
    return f"<!-- BEGIN {section} -->", f"<!-- END {section} -->"
ROOT = Path(__file__).resolve().parent.parent
RUNNER = Path(__file__).resolve().parent / "dpsniper_runner.py"
DEFAULT_VENV = Path(".bench-venv/dpsniper")
DPSNIPER_REPO = "eth-sri/dp-sniper"
#: the pinned commit of DP-Sniper (its last: "added bibtex entry", 2021-08-27)
DPSNIPER_COMMIT = "ee087b2584ca97d1064154db5dd2bda0bb5a8ceb"
#: torch: the CPU-only build (no CUDA libraries; found by pip where its index or find-links have it)
TORCH_CPU, TORCH_REGULAR = "torch==2.13.0+cpu", "torch==2.13.0"
#: DP-Sniper's setup.py requirements (matplotlib, pandas, numpy, torch, tensorboard, scikit-learn, mmh3), pinned
DPSNIPER_PINS: tuple[str, ...] = (TORCH_CPU, "numpy==2.4.6", "scikit-learn==1.8.0", "pandas==3.1.1",
                                  "matplotlib==3.11.2", "tensorboard==2.21.0", "mmh3==5.3.1")
MARKER = "DPSNIPER_COMMIT"

SPEED_GOAL: float = 10.0        # DP-Sniper seconds / dpverify seconds
WORKERS: int = 2
#: default fraction of DDConfig's budget (a full run at 1.0 takes days on 2 cores; see docs/performance.md)
DEFAULT_FRACTION: float = 0.01
QUICK_FACTOR: float = 0.2       # --quick runs at a fifth of --fraction

#: DP-Sniper's reference log (eth-sri/dp-sniper eval_sp2021/reference-results/dd_search_reg_data.log, logistic
#: regression, default budget, confidence 0.9): name -> (eps_lcb, seconds = time_dd_search + time_final_estimate_eps)
PUBLISHED: dict[str, tuple[float, float]] = {
    "LaplaceMechanism": (0.0968, 21), "TruncatedGeometricMechanism": (0.1156, 19), "NoisyHist1": (0.09779, 38),
    "NoisyHist2": (4.602, 41), "ReportNoisyMax1": (0.09225, 62), "ReportNoisyMax2": (0.0975, 58),
    "ReportNoisyMax3": (0.2478, 62), "ReportNoisyMax4": (0.3463, 63), "SparseVectorTechnique1": (0.0858, 126),
    "SparseVectorTechnique2": (0.08593, 160), "SparseVectorTechnique3": (0.1716, 160),
    "SparseVectorTechnique4": (0.1687, 130), "SparseVectorTechnique5": (1.761, 59),
    "SparseVectorTechnique6": (0.272, 96), "Rappor": (0.293, 145), "OneTimeRappor": (0.5978, 89),
    "LaplaceParallel": (0.03495, 104), "SVT34Parallel": (0.261, 364), "PrefixSum": (0.504, 97),
    "NumericalSVT": (0.03432, 152),
}


@dataclass(frozen=True)
class Target:
    """dpverify's version of one DP-Sniper mechanism."""
    mechanism: str                  # "module:Class"
    params: dict[str, Any] = field(default_factory=dict)
    claim: float = 0.1              # the ε DP-Sniper's instance is configured with (composed for the parallel ones)
    entry: str = ""                 # the suite entry with this mechanism ("file:id"), if any
    port: bool = False              # a port in benchmarks/dpsniper_mechanisms.py

    def build(self) -> Any:
        module, name = self.mechanism.split(":")
        return getattr(importlib.import_module(module), name)(**self.params)


_GEO_CLAIM = math.log1p(2.0 ** -math.ceil(math.log(2.0 / 0.1)))
SVT_T1 = {"epsilon": 0.1, "threshold": 1.0}
#: DP-Sniper name -> dpverify's mechanism with DP-Sniper's parameters (exp_default.py and the class defaults:
#: ε = 0.1 everywhere, SVT c = 1 and T = 1 except SVT1's T = 0.5, SVT34Parallel and NumericalSVT c = 2, T = 1)
MAPPING: dict[str, Target] = {
    "LaplaceMechanism": Target("algorithms.classic.laplace:Laplace", {"epsilon": 0.1}, entry="catalogue:laplace"),
    "TruncatedGeometricMechanism": Target("benchmarks.dpsniper_mechanisms:GeoSample", {"epsilon": 0.1, "n_max": 5},
                                          claim=_GEO_CLAIM, port=True),
    "NoisyHist1": Target("algorithms.classic.histogram:Histogram", {"epsilon": 0.1}, entry="catalogue:histogram"),
    "NoisyHist2": Target("algorithms.broken.histogram_scale_epsilon:HistogramScaleEpsilon", {"epsilon": 0.1},
                         entry="catalogue:histogram-scale-epsilon"),
    "ReportNoisyMax1": Target("algorithms.classic.noisy_max:ReportNoisyMax", {"epsilon": 0.1, "noise": "laplace"},
                              entry="catalogue:noisy-max-laplace"),
    "ReportNoisyMax2": Target("algorithms.classic.noisy_max:ReportNoisyMax", {"epsilon": 0.1, "noise": "exponential"},
                              entry="catalogue:noisy-max-exponential"),
    "ReportNoisyMax3": Target("algorithms.broken.noisy_max_returns_value:NoisyMaxReturnsValue",
                              {"epsilon": 0.1, "noise": "laplace"}, entry="catalogue:noisy-max-returns-value-laplace"),
    "ReportNoisyMax4": Target("algorithms.broken.noisy_max_returns_value:NoisyMaxReturnsValue",
                              {"epsilon": 0.1, "noise": "exponential"},
                              entry="catalogue:noisy-max-returns-value-exponential"),
    "SparseVectorTechnique1": Target("algorithms.classic.sparse_vector:SparseVector",
                                     {"epsilon": 0.1, "threshold": 0.5, "cutoff": 1}, entry="catalogue:svt (T = 1)"),
    "SparseVectorTechnique2": Target("algorithms.classic.sparse_vector_dwork_roth:SparseVectorDworkRoth",
                                     {**SVT_T1, "cutoff": 1}, entry="public:svt2"),
    "SparseVectorTechnique3": Target("algorithms.broken.svt_outputs_value:SVTOutputsValue", {**SVT_T1, "cutoff": 1},
                                     entry="catalogue:svt-outputs-value (ε = 1)"),
    "SparseVectorTechnique4": Target("algorithms.broken.svt_unscaled_query_noise:SVTUnscaledQueryNoise",
                                     {**SVT_T1, "cutoff": 1}, entry="catalogue:svt-unscaled-query-noise"),
    "SparseVectorTechnique5": Target("algorithms.broken.svt_no_query_noise:SVTNoQueryNoise", dict(SVT_T1),
                                     entry="catalogue:svt-no-query-noise"),
    "SparseVectorTechnique6": Target("algorithms.broken.svt_no_cutoff:SVTNoCutoff", dict(SVT_T1),
                                     entry="catalogue:svt-no-cutoff (ε = 1)"),
    "Rappor": Target("algorithms.classic.rappor:Rappor",
                     {"f": 0.75, "p": 0.45, "q": 0.55, "n_hashes": 4, "filter_size": 20},
                     claim=0.40008336459729044, entry="public:rappor"),
    "OneTimeRappor": Target("algorithms.classic.rappor:OneTimeRappor", {"f": 0.95, "n_hashes": 4, "filter_size": 20},
                            claim=0.800667668455861, entry="public:one-time-rappor"),
    "LaplaceParallel": Target("algorithms.classic.parallel:LaplaceParallel", {"epsilon_each": 0.005, "copies": 20},
                              entry="public:laplace-parallel"),
    "SVT34Parallel": Target("algorithms.broken.svt34_parallel:SVT34Parallel",
                            {"epsilon_each": 0.1, "threshold": 1.0, "cutoff": 2}, claim=0.2,
                            entry="public:svt34-parallel"),
    "PrefixSum": Target("algorithms.classic.prefix_sum:PrefixSum", {"epsilon": 0.1}, entry="public:prefix-sum-linf"),
    "NumericalSVT": Target("algorithms.classic.numerical_svt:NumericalSVT", {**SVT_T1, "cutoff": 2},
                           entry="public:numerical-svt"),
}


# --------------------------------------------------------------------------------------------------
# DP-Sniper's venv and runner
# --------------------------------------------------------------------------------------------------


class VenvError(RuntimeError):
    """DP-Sniper's virtual environment could not be made or used (the message says why)."""


def venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def find_mirror(given: Path | None) -> Path | None:
    """The git copy of DP-Sniper to install from: ``given``, else ``$DPSNIPER_MIRROR``; ``None`` if neither."""
    if given is not None:
        return given
    env = os.environ.get("DPSNIPER_MIRROR")
    return Path(env) if env else None


def _run(cmd: list[str], log: Callable[[str], None], **kw: Any) -> subprocess.CompletedProcess:
    log(f"[bench_dpsniper] {' '.join(cmd)}")
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def _fail(cmd: list[str], r: subprocess.CompletedProcess) -> VenvError:
    tail = "\n".join((r.stderr or r.stdout).strip().splitlines()[-5:])
    return VenvError(f"`{' '.join(cmd)}` failed (exit {r.returncode}): {tail}")


PROBE = ("import json, torch, numpy, sklearn, mmh3, dpsniper.experiments.exp_default; "
         "print(json.dumps({'torch': torch.__version__, 'numpy': numpy.__version__}))")


def venv_ready(venv: Path, commit: str = DPSNIPER_COMMIT) -> dict[str, Any] | None:
    """The versions in ``venv`` when it holds DP-Sniper at ``commit`` and imports it; else ``None``."""
    py, marker = venv_python(venv), venv / MARKER
    if not py.exists() or not marker.exists() or marker.read_text().strip() != commit:
        return None
    r = subprocess.run([str(py), "-c", PROBE], capture_output=True, text=True)
    return json.loads(r.stdout.strip().splitlines()[-1]) if r.returncode == 0 else None


def ensure_venv(venv: Path, mirror: Path | None, log: Callable[[str], None] = lambda s: None,
                commit: str = DPSNIPER_COMMIT) -> Path:
    """``venv``'s interpreter, creating the venv from ``mirror`` at ``commit`` when it does not hold DP-Sniper yet;
    raises :class:`VenvError` with the failing command's output."""
    if venv_ready(venv, commit) is not None:
        return venv_python(venv)
    if mirror is None:
        raise VenvError(f"{venv} does not hold DP-Sniper at {commit[:12]} and no git copy of {DPSNIPER_REPO} was "
                        "given (--mirror DIR or DPSNIPER_MIRROR).")
    py, src = venv_python(venv), venv / "src"
    cmd = [sys.executable, "-m", "venv", str(venv)]
    if (r := _run(cmd, log)).returncode != 0:
        raise _fail(cmd, r)
    import shutil
    import tarfile
    shutil.rmtree(src, ignore_errors=True)
    src.mkdir(parents=True)
    cmd = ["git", f"--git-dir={mirror}", "archive", "--format=tar", commit]
    log(f"[bench_dpsniper] {' '.join(cmd)} | tar -x -C {src}")
    proc = subprocess.run(cmd, capture_output=True)
    if proc.returncode != 0:
        raise VenvError(f"`{' '.join(cmd)}` failed (exit {proc.returncode}): {proc.stderr.decode(errors='replace')}")
    import io
    with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as tar:
        tar.extractall(src, filter="data") if hasattr(tarfile, "data_filter") else tar.extractall(src)
    pip = [str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    cmd = [*pip, *DPSNIPER_PINS]
    if (r := _run(cmd, log)).returncode != 0:
        log(f"[bench_dpsniper] no CPU-only torch wheel ({TORCH_CPU}); trying {TORCH_REGULAR}")
        cmd = [*pip, TORCH_REGULAR, *DPSNIPER_PINS[1:]]
        if (r := _run(cmd, log)).returncode != 0:
            raise _fail(cmd, r)
    cmd = [*pip, "--no-deps", str(src)]
    if (r := _run(cmd, log)).returncode != 0:
        raise _fail(cmd, r)
    (venv / MARKER).write_text(commit + "\n")
    if venv_ready(venv, commit) is None:
        r = subprocess.run([str(py), "-c", PROBE], capture_output=True, text=True)
        raise _fail([str(py), "-c", "import dpsniper ..."], r)
    return py


def parse_runner_output(lines: Iterable[str]) -> tuple[dict[str, dict[str, Any]], dict[str, Any] | None, bool]:
    """``dpsniper_runner.py``'s JSON lines -> (results by mechanism name, start-up and warm-up lines merged,
    finished)."""
    results: dict[str, dict[str, Any]] = {}
    startup, done = None, False
    for obj in json_objects(lines):
        if obj.get("done"):
            done = True
        elif "startup_seconds" in obj or "warmup_seconds" in obj:   # the pool's start-up, then the warm-up run
            startup = {**(startup or {}), **obj}
        elif "name" in obj:
            results[obj["name"]] = floats(obj, ("eps_lcb", "eps", "search_eps"))
    return results, startup, done


def run_dpsniper(py: Path, spec: dict[str, Any], log: Callable[[str], None] = lambda s: None) -> dict[str, Any]:
    """Run the runner in DP-Sniper's venv; returns ``{"results", "startup", "seconds", "error"}``."""
    def show(obj: dict[str, Any]) -> None:
        log(f"[bench_dpsniper] DP-Sniper {obj['name']}: " + (obj.get("error") or
            f"ε LB {obj['eps_lcb']} (estimate {obj['eps']}) on {obj['a1']} / {obj['a2']} in "
            f"{obj['seconds']:.1f} s, {obj['samples']:,} outputs"))

    lines, error, seconds = run_runner(py, RUNNER, spec, ROOT, on_result=show, result_key="name")
    results, startup, _ = parse_runner_output(lines)
    return {"results": results, "startup": startup, "seconds": seconds, "error": error}


# --------------------------------------------------------------------------------------------------
# dpverify's half
# --------------------------------------------------------------------------------------------------


def dpverify_pairs(name: str) -> list[tuple[Any, Any]]:
    """DP-Sniper's input pairs of ``name`` (one order each) as dpverify inputs: a scalar for 1-dimensional domains
    (int for DP-Sniper's INT domains), else a float or int array."""
    spec = runner.DEFAULT_SET[name]
    dims, base, bounds = spec["domain"]
    out = []
    for a1, a2 in runner.pattern_pairs(dims, base, bounds, spec["component_wise"], swapped=False):
        conv = (lambda a: np.asarray(a, dtype=np.int64 if base == "INT" else np.float64))
        x1, x2 = conv(a1), conv(a2)
        out.append((x1.reshape(()).item() if dims == 1 else x1, x2.reshape(()).item() if dims == 1 else x2))
    return out


#: dpverify's finalists: one, as DP-Sniper takes one pair (its best on the check sample) to its final estimate, so
#: that dpverify's one final test gets the same n_final outputs per input (the audit's default of 3 would split them)
FINALISTS: int = 1
#: dpverify's test of the finalist's counts: ``"auto"``, the conditional Poisson test where the search projects it
#: tighter (both it and DP-Sniper's two Clopper--Pearson bounds are exact at the stated confidence; DP-Sniper's spends
#: half the level on each probability)
RATIO_TEST: str = "auto"


def dpverify_budget(cfg: dict[str, Any], finalists: int = FINALISTS) -> tuple[int, int]:
    """``(samples, search_samples)`` per input for dpverify at DP-Sniper's budget ``cfg``: ``n_final // finalists``
    and ``n_train + n_check``, the outputs per input of each pair DP-Sniper's search draws to train its classifier
    and to estimate the attack's ε that chooses its pair (dpverify's search splits them into its selection and
    scoring halves)."""
    return max(1, cfg["n_final"] // finalists), max(1, cfg["n_train"] + cfg["n_check"])


def dpverify_outputs(n_pairs: int, samples: int, search_samples: int, finalists: int = FINALISTS) -> int:
    """At most this many mechanism outputs in one :func:`dpverify.audit`: ``search_samples`` (or the atom sweep, a
    tenth of ``samples``, when larger) per input of every pair, and ``samples`` per input of each finalist's pair."""
    from dpverify.statistical.auditor import SWEEP_FRACTION
    sweep = samples // SWEEP_FRACTION if samples // SWEEP_FRACTION > search_samples else 0
    return 2 * n_pairs * (search_samples + sweep) + 2 * min(finalists, n_pairs) * samples


def witness_pair(pairs: list[tuple[Any, Any]], index: int, direction: int) -> str:
    """The witness's pair as DP-Sniper writes it: the input whose event probability is the larger one first."""
    x0, x1 = pairs[index]
    a, b = (x0, x1) if direction == 0 else (x1, x0)
    return fmt_pair(np.asarray(a).reshape(-1).tolist(), np.asarray(b).reshape(-1).tolist())


def audit_one(name: str, cfg: dict[str, Any], seed: int, workers: int = WORKERS,
              mechanism: Any = None, pool: Any = None) -> Any:
    """:func:`dpverify.audit` of :data:`MAPPING`'s ``name`` (or of ``mechanism``, an instance of it) on DP-Sniper's
    pairs at :func:`dpverify_budget`, on ``pool`` (a :class:`dpverify.execution.sampling.WorkerPool`) if given: the
    call the side-by-side run times and the profile repeats."""
    import dpverify
    samples, search = dpverify_budget(cfg)
    target = MAPPING[name]
    return dpverify.audit(target.build() if mechanism is None else mechanism, dpverify_pairs(name), target.claim,
                          samples=samples, search_samples=search, alpha=1.0 - cfg["confidence"], seed=seed,
                          workers=workers, finalists=FINALISTS, pool=pool, ratio_test=RATIO_TEST)


#: the budget of the unprofiled warm-up audit before the timed audits and each profile (lazy imports, first calls are not profiled)
WARMUP_CONFIG = {"n_train": 1_000, "n_check": 1_000, "n_final": 6_000}


def run_dpverify(names: Iterable[str], cfg: dict[str, Any], seed: int, workers: int = WORKERS,
                 log: Callable[[str], None] = lambda s: None) -> dict[str, dict[str, Any]]:
    """:func:`audit_one` of each mechanism of :data:`MAPPING` on DP-Sniper's pairs at :func:`dpverify_budget`, all on
    one pool of ``workers`` processes started before them, after one unprofiled warm-up audit of each in this
    process at :data:`WARMUP_CONFIG`'s budget: the pool's start-up and the event search's one-time lazy imports
    (scikit-learn, about 0.5 s, in this process and, through the fork, in every worker) are not counted, as DP-Sniper runs every mechanism on one process pool whose start-up (and torch
    import) is not counted in its times either.  (An audit that starts its own workers pays for forking a process
    that has imported the audit's libraries and for the workers' first use, a fixed cost that is a large share of
    an audit of a few tenths of a second.)"""
    import dpverify
    from dpverify.execution.sampling import WorkerPool

    names = list(names)
    samples, search = dpverify_budget(cfg)
    out: dict[str, dict[str, Any]] = {}
    with WorkerPool(workers) as pool:
        if names:
            # every mechanism once at a tiny budget in this process before the workers fork, so that they inherit
            # every module a timed audit imports (scikit-learn for the first vector output: about 0.5 s in each
            # worker that would otherwise pay for it inside the first vector mechanism's timed audit)
            for name in names:
                audit_one(name, {**cfg, **WARMUP_CONFIG}, seed, workers=1)
            pool.start()
            # the workers' first use (pages of the parent they copy on first touch) on a mechanism that is not
            # timed, so that it teaches the pool no speed of the timed ones (speeds are learnt per mechanism)
            dpverify.audit(warmup_laplace, [(0.0, 1.0)], 0.1, samples=samples, search_samples=search,
                           alpha=1.0 - cfg["confidence"], seed=seed, pool=pool, finalists=FINALISTS,
                           ratio_test=RATIO_TEST)
        for name in names:
            out[name] = _audit_row(name, cfg, seed, workers, pool, samples, search)
            o = out[name]
            log(f"[bench_dpsniper] dpverify {name}: " + (o["error"] or f"ε LB {o['bound']:.4g} in {o['seconds']:.1f} s"))
    return out


def warmup_laplace(x: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """``x + Lap(10)``: the untimed audit that starts the shared pool's workers in :func:`run_dpverify`."""
    return x + rng.laplace(0.0, 10.0, size=n)


def _audit_row(name: str, cfg: dict[str, Any], seed: int, workers: int, pool: Any, samples: int,
               search: int) -> dict[str, Any]:
    """One mechanism's timed audit on the shared ``pool`` (:func:`run_dpverify`), as a row of the results."""
    target, pairs = MAPPING[name], dpverify_pairs(name)
    try:
        res = audit_one(name, cfg, seed, workers, pool=pool)
    except Exception as exc:  # noqa: BLE001 -- reported in the table
        return {"bound": math.nan, "seconds": math.nan, "violation": None, "claim": target.claim,
                "samples": samples, "search_samples": search, "outputs": None, "witness": None,
                "error": f"{type(exc).__name__}: {exc}"}
    w = res.witness
    return {"bound": float(res.epsilon_lower_bound), "seconds": float(res.seconds),
            "violation": bool(res.violation), "claim": target.claim, "samples": samples,
            "search_samples": search, "outputs": dpverify_outputs(len(pairs), samples, search),
            "witness": None if w is None else witness_pair(pairs, w.test.pair_index, w.test.direction),
            "error": None}


def profile_dpverify(name: str, cfg: dict[str, Any], seed: int) -> Profile:
    """:func:`audit_one` of ``name`` (same budget and seed as the side-by-side run) under cProfile with ``workers =
    1`` (:func:`benchmarks.profiling.profile_call`, :data:`benchmarks.profiling.AUDIT_PHASES`), with the sampler
    seconds of the mechanism's own code; after an unprofiled warm-up audit at :data:`WARMUP_CONFIG`'s budget, so
    that the lazy imports of the event search (scikit-learn: about 0.5 s) are not counted in the first profile."""
    mechanism = MAPPING[name].build()
    audit_one(name, {**cfg, **WARMUP_CONFIG}, seed, workers=1, mechanism=mechanism)
    _, prof = profile_call(lambda: audit_one(name, cfg, seed, workers=1, mechanism=mechanism), AUDIT_PHASES,
                           mechanism)
    return prof


def run_profiles(names: Iterable[str], cfg: dict[str, Any], seed: int,
                 log: Callable[[str], None] = lambda s: None) -> dict[str, Profile | str]:
    """:func:`profile_dpverify` of each of ``names``: its :class:`~benchmarks.profiling.Profile`, or the error's
    text."""
    out: dict[str, Profile | str] = {}
    for name in names:
        try:
            p = out[name] = profile_dpverify(name, cfg, seed)
        except Exception as exc:  # noqa: BLE001 -- reported in the table
            out[name] = f"{type(exc).__name__}: {exc}"
            log(f"[bench_dpsniper] profile {name}: {out[name]}")
            continue
        key, secs = p.dominant()
        log(f"[bench_dpsniper] profile {name}: {p.wall:.2f} s in one process (profiler included); dominant "
            f"{p.label_of(key)} {secs:.2f} s; the mechanism's own sampling "
            + ("–" if p.sampler is None else f"{p.sampler:.2f} s"))
        log("[bench_dpsniper] profile " + json.dumps({"name": name, **p.to_dict()}, allow_nan=True))
    return out


# --------------------------------------------------------------------------------------------------
# comparison and report
# --------------------------------------------------------------------------------------------------


def ratio(a: float | None, b: float | None) -> float:
    """``a / b`` (``nan`` when either is missing or not finite or ``b`` is 0)."""
    if a is None or b is None or not b or not math.isfinite(a) or not math.isfinite(b):
        return math.nan
    return a / b


def compare(dp: dict[str, Any], ds: dict[str, Any] | None) -> dict[str, Any]:
    """One mechanism's row: bound ratio (dpverify / DP-Sniper), speed-up (DP-Sniper s / dpverify s), goal."""
    row: dict[str, Any] = {"dp_bound": dp["bound"], "dp_seconds": dp["seconds"], "goal": None}
    if ds is None or ds.get("error") or dp.get("error"):
        row["ds_error"] = None if ds is None else ds.get("error")
        return row
    row.update(ds_bound=float(ds["eps_lcb"]), ds_seconds=float(ds["seconds"]))
    row["bound_ratio"] = ratio(dp["bound"], row["ds_bound"]) if row["ds_bound"] > 0 else math.nan
    row["speed"] = ratio(row["ds_seconds"], dp["seconds"])
    row["tighter"] = dp["bound"] >= row["ds_bound"]
    row["faster"] = bool(row["speed"] >= SPEED_GOAL)
    row["goal"] = bool(row["tighter"] and row["faster"])
    return row


def fmt_eps(x: float | None) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return "∞" if math.isinf(x) else f"{x:.4g}"


def fmt_ratio(x: float | None) -> str:
    return "–" if x is None or math.isnan(x) else f"{x:.2f}×"


def fmt_pair(a1: Any, a2: Any) -> str:
    def one(a: Any) -> str:
        v = [int(t) if float(t).is_integer() else t for t in (a if isinstance(a, list) else [a])]
        return str(v[0]) if len(v) == 1 else "[" + ",".join(str(t) for t in v) + "]"
    return f"{one(a1)} / {one(a2)}"


def report(command: str, fraction: float, cfg: dict[str, Any], seed: int, names: list[str],
           dp: dict[str, dict[str, Any]], ds: dict[str, Any] | None, busy: tuple[float | None, float | None,
                                                                                  float | None],
           ds_error: str | None, venv: Path, versions: dict[str, Any] | None, smoke: bool,
           profiles: dict[str, Profile | str] | None = None, profile_mode: str = "missed",
           repeats: list[dict[str, dict[str, Any]]] | None = None) -> str:
    """The markdown section; ``profiles``: :func:`run_profiles` of the mechanisms profiled (``profile_mode``:
    ``"missed"``, those whose goal is FAIL in some run; ``"all"``; ``"none"``); ``repeats``: :func:`compare`'s rows
    of every run when there were several (``--repeat``; the main table is the first run's)."""
    L = report_header(command, seed, busy, " and the ratios between the two tools less so")
    ds_results = {} if ds is None else ds["results"]
    rows = {n: compare(dp[n], ds_results.get(n)) for n in names if n in dp}
    if smoke:
        L += [f"**Smoke run at {fraction:g} of DP-Sniper's default budget: it checks that the harness works end to "
              "end; the bounds of both tools are far looser than at the full budget and the times are dominated by "
              "fixed costs. Not a measurement of either tool.**", ""]
    samples, search = dpverify_budget(cfg)
    if ds_error:
        L += [f"**DP-Sniper did not run: {ds_error}** Only dpverify's half was measured; compare it with the published "
              "column.", ""]
    else:
        assert ds is not None
        ver = versions or {}
        L += [f"DP-Sniper: `{DPSNIPER_REPO}` at `{DPSNIPER_COMMIT[:12]}` in `{venv}` (torch {ver.get('torch', '?')}, "
              f"numpy {ver.get('numpy', '?')}), logistic regression as in its `exp_default.py`, "
              f"{WORKERS} processes, **{fraction:g} of its default budget**: n_train = n = {cfg['n_train']:,}, "
              f"n_check = {cfg['n_check']:,}, n_final = {cfg['n_final']:,} outputs per input, confidence "
              f"{cfg['confidence']:g}; its process pool's start-up "
              f"({(ds.get('startup') or {}).get('startup_seconds', 0.0):.1f} s) is not counted, nor its warm-up run of "
              f"the first mechanism at {runner.WARMUP_FRACTION:g} of the budget "
              f"({(ds.get('startup') or {}).get('warmup_seconds', 0.0):.1f} s: its workers' first use of the "
              "classifier); the whole DP-Sniper "
              f"half took {ds['seconds']:.0f} s. dpverify: `dpverify.audit`, {WORKERS} workers, α = "
              f"{1 - cfg['confidence']:.2g}, {search:,} search (n_train + n_check) + {samples:,} test outputs per input for {FINALISTS} finalist (one event on one pair, as DP-Sniper's one final estimate; `ratio_test = \"{RATIO_TEST}\"`) on DP-Sniper's "
              f"pairs (both directions), every audit on one pool of {WORKERS} worker processes started before them (its "
              "start-up not counted, as DP-Sniper's one process pool for all of its mechanisms; its workers' first use by "
              "one untimed audit of another mechanism at the same budget), after one small unprofiled warm-up audit of "
              "each mechanism in the parent process before the workers fork (one-time imports, which the workers "
              "inherit).", ""]
    L += ["| DP-Sniper mechanism | dpverify mechanism | DP-Sniper: ε LB (pair), time, outputs | published ε LB, s | "
          "dpverify: ε LB (pair), time, outputs (at most) | bound ratio | speed-up | goal |",
          "|---|---|---|---|---|---|---|---|"]
    n_goal = n_cmp = n_pub = n_above_pub = 0
    out_ratio: list[float] = []
    for n in names:
        if n not in dp:
            continue
        t, d, r = MAPPING[n], dp[n], rows[n]
        mech = f"`{t.mechanism.split(':')[1]}`" + (" (port)" if t.port else "")
        s = ds_results.get(n)
        if s is None:
            scell = "–" if not r.get("ds_error") else f"error: {r['ds_error']}"
        elif s.get("error"):
            scell = f"error: {s['error']}"
        else:
            scell = (f"{fmt_eps(float(s['eps_lcb']))} ({fmt_pair(s['a1'], s['a2'])}), {s['seconds']:.1f} s, "
                     f"{s['samples'] / 1e6:.1f} M")
        pub = PUBLISHED.get(n)
        pcell = f"{pub[0]:g}, {pub[1]:g}" if pub else "–"
        if d["error"]:
            dcell = f"error: {d['error']}"
        else:
            dcell = (f"{fmt_eps(d['bound'])} ({d['witness'] or 'no witness'}), {d['seconds']:.1f} s, "
                     f"{d['outputs'] / 1e6:.1f} M")
        if r["goal"] is not None:
            n_cmp += 1
            n_goal += bool(r["goal"])
            gcell = (verdict(bool(r["goal"])) + ("" if r["goal"] else
                     " (" + ", ".join(x for x, ok in (("bound", r["tighter"]), ("time", r["faster"])) if not ok)
                     + ")"))
        else:
            gcell = "n/a"
        if pub and not d["error"] and math.isfinite(d["bound"]):
            n_pub += 1
            n_above_pub += d["bound"] >= pub[0]
            out_ratio.append(d["outputs"] / runner.samples_used(runner.DEFAULT_CONFIG, 2 * len(dpverify_pairs(n))))
        L.append(f"| {n} | {mech} | {scell} | {pcell} | {dcell} | {fmt_ratio(r.get('bound_ratio'))} | "
                 f"{fmt_ratio(r.get('speed'))} | {gcell} |")
    L += ["", (f"Goal (dpverify's ε LB ≥ DP-Sniper's, in ≤ 1/{SPEED_GOAL:g} of its wall time) met on "
               f"**{n_goal} of {n_cmp}** mechanisms" + (" (smoke run)." if smoke else ".")) if n_cmp else
          f"Goal (dpverify's ε LB ≥ DP-Sniper's, in ≤ 1/{SPEED_GOAL:g} of its wall time): not evaluated, DP-Sniper did not run "
          "in this run.", ""]
    if repeats:
        L += [f"**Every run of the {len(repeats)}** (the table above is the first; each run is dpverify's half, then "
              f"DP-Sniper's; dpverify with seed {seed} + k in run k = 0, 1, …, DP-Sniper from fresh entropy; "
              "`benchmarks/dpsniper_repeats.py`):", ""] + repeat_table(names, repeats, SPEED_GOAL) + [""]
    if n_pub:
        L += [f"dpverify's ε LB ≥ DP-Sniper's published bound (its reference run at the full default budget) on "
              f"**{n_above_pub} of {n_pub}** mechanisms, dpverify drawing at most {max(out_ratio):.2g} of the outputs "
              "that run drew (`samples_used` of `benchmarks/dpsniper_runner.py` at the full budget, both orders of "
              "each pair).", ""]
    L.append("How to read it. Both bounds are 1 − α = 90 % lower confidence bounds on ε (DP-Sniper: Clopper–Pearson "
             "on its best pair's final estimate, union bound over the two probabilities; dpverify: over every pair, "
             "direction and event it tested, its finalist's counts by the two Clopper–Pearson bounds or, with "
             "`ratio_test = \"auto\"` where the search projects it tighter, by the exact conditional test of the "
             "ratio on Poisson-sized samples, at the whole level instead of half of it per probability). Bound ratio = dpverify's / DP-Sniper's; speed-up = DP-Sniper's time / "
             "dpverify's. DP-Sniper's time is its search over every pair plus the final estimate (the two timed "
             "regions of its `my_experiment.py`); dpverify's the audit's wall time. Outputs = mechanism outputs "
             "drawn (dpverify's: the most its budget allows). Published = DP-Sniper's reference log at the full "
             "budget (hardware not recorded). DP-Sniper's bound is negative when the lower bound of its first "
             "probability falls below the upper bound of the second (no evidence; dpverify reports 0 then). "
             "DP-Sniper reseeds its workers from fresh entropy: its row is one random run.")
    if profile_mode != "none":
        L += [""] + profile_section(names, profiles or {}, ds_results, profile_mode)
    return "\n".join(L)


def fmt_s(x: float | None) -> str:
    return "–" if x is None or not math.isfinite(x) else f"{max(x, 0.0):.2f}"


def sampling_floor(prof: Profile, ds_seconds: float | None) -> dict[str, Any]:
    """The mechanism's own sampling (``prof.sampler``, CPU seconds) against DP-Sniper's wall time ``ds_seconds``:
    its ``share`` of it, and ``out_of_reach`` when even spread over :data:`WORKERS` cores it exceeds
    ``ds_seconds / SPEED_GOAL`` (then no dpverify that draws these outputs can be 10× faster)."""
    floor = prof.sampler
    share = ratio(floor, ds_seconds) if floor is not None else math.nan
    reach = None if math.isnan(share) else bool(share / WORKERS > 1.0 / SPEED_GOAL)
    return {"floor": floor, "share": share, "out_of_reach": reach}


def profile_section(names: list[str], profiles: dict[str, Profile | str], ds_results: dict[str, Any], mode: str = "missed") -> list[str]:
    """The lines of the profile subsection: one row per profiled mechanism, a computed sentence on which phase
    dominates how often and on the sampling floor."""
    which = "every mechanism" if mode == "all" else "every mechanism that misses the goal"
    L = [f"### Where dpverify's time goes: {which} (cProfile, one process)", ""]
    profiled = [n for n in names if n in profiles]
    if not profiled:
        L += ["No mechanism was profiled" + (" (every mechanism met the goal or could not be compared)."
                                             if mode == "missed" else "."), ""]
        return L
    cap = f"{WORKERS / SPEED_GOAL:.0%}"
    L += [f"The same `dpverify.audit` (same budget and seed) rerun after the side-by-side runs with `workers = 1` "
          "under cProfile, so that the profiler sees every function (seconds), after an unprofiled warm-up audit at a tiny "
          "budget (lazy imports not counted): wall = one process with the profiler's overhead, hence more than the "
          "time above. Seconds are cumulative (`benchmarks/profiling.py`): contract "
          "probe + phase 1 + phase 2 + other = wall; sampling batches (the mechanism, dpverify's output checks, "
          "phase 2's event counting and the atom sweep's hashing) lie in phases 1 and 2; event search (with its "
          "largest families) and atom-sweep candidates in phase 1. Dominant phase = the largest of the disjoint "
          "parts (each row less the rows inside it). Sampling floor = CPU seconds of the mechanism's own code for "
          "dpverify's outputs (its calls by the sampling layer, profiler included) and their share of DP-Sniper's "
          f"time: above {cap} ({WORKERS} cores, 1/{SPEED_GOAL:g} of its time) the {SPEED_GOAL:g}× goal is out of "
          "reach at this sample count, whatever the rest of dpverify costs. Sorting = numpy's sort's own seconds in "
          "the whole audit (`benchmarks/profiling.py`'s `sorting_seconds`: the event search's columns, features and "
          "merges, the cells' fit) and their share of the wall, and of DP-Sniper's time as for the sampling floor.",
          "",
          "| Mechanism | wall, s (1 process) | contract probe | phase 1 | sampling batches | event search (largest "
          "families) | atom-sweep candidates | phase 2 | other | dominant phase | sampling floor (share of "
          "DP-Sniper's time) | sorting (share of wall; of DP-Sniper's time) |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    dominants: list[str] = []
    sorted_share: list[float] = []
    beyond: list[str] = []
    n_floor = 0
    for n in profiled:
        p = profiles[n]
        if isinstance(p, str):
            L.append(f"| {n} | error: {p} |" + " |" * 10)
            continue
        sec = p.seconds
        fams = sorted(((c.name, sec[c.key]) for c in p.children("events")), key=lambda kv: -kv[1])
        fam = ", ".join(f"{name} {v:.2f}" for name, v in fams[:3] if v >= 0.005)
        key, dsecs = p.dominant()
        dlabel = p.label_of(key)
        dominants.append(dlabel)
        s_ = ds_results.get(n) or {}
        ds_seconds = float(s_["seconds"]) if s_ and not s_.get("error") and s_.get("seconds") is not None else None
        fl = sampling_floor(p, ds_seconds)
        if fl["floor"] is None:
            fcell = "–"
        elif fl["out_of_reach"] is None:
            fcell = f"{fl['floor']:.2f} s"
        else:
            n_floor += 1
            fcell = f"{fl['floor']:.2f} s ({fl['share']:.0%})" + (" **> " + cap + "**" if fl["out_of_reach"] else "")
            if fl["out_of_reach"]:
                beyond.append(n)
        L.append(f"| {n} | {p.wall:.2f} | {fmt_s(sec['contract'])} | {fmt_s(sec['search'])} | "
                 f"{fmt_s(sec['sampling'])} | {fmt_s(sec['events'])}" + (f" ({fam})" if fam else "") + " | "
                 f"{fmt_s(sec['atoms'])} | {fmt_s(sec['count'])} | {fmt_s(p.other)} | {dlabel} "
                 f"({dsecs / p.wall:.0%}) | {fcell} | {p.sorting:.2f} s ({p.sorting / p.wall:.0%}"
                 + (f"; {p.sorting / ds_seconds:.0%}" if ds_seconds else "") + ") |")
        sorted_share.append(p.sorting / p.wall)
    what = "profiled mechanisms" + (" (goal missed)" if mode == "missed" else "")
    if not n_floor:
        floor = "DP-Sniper's times are missing: no sampling floor is compared with them."
    elif beyond:
        floor = (f"The mechanism's own sampling alone exceeds {cap} of DP-Sniper's time on {len(beyond)} of the "
                 f"{n_floor} with DP-Sniper's time ({', '.join(beyond)}): there {SPEED_GOAL:g}× is out of reach at "
                 "this sample count however fast the rest of dpverify gets.")
    else:
        floor = (f"The mechanism's own sampling stays below {cap} of DP-Sniper's time on each of the {n_floor} with "
                 f"DP-Sniper's time: the sampling floor does not rule the goal out.")
    sorting = (f" Sorting takes {min(sorted_share):.0%} to {max(sorted_share):.0%} of the profiled wall (median "
               f"{statistics.median(sorted_share):.0%})." if sorted_share else "")
    L += ["", dominance_sentence(dominants, what) + " " + floor + sorting, ""]
    return L


def main(argv: list[str] | None = None) -> int:
    import argparse
    args_list = list(sys.argv[1:] if argv is None else argv)
    extra = argparse.ArgumentParser(add_help=False)
    extra.add_argument("--venv", type=Path, default=DEFAULT_VENV,
                       help=f"DP-Sniper's own virtual environment, made there if missing (default {DEFAULT_VENV})")
    extra.add_argument("--mirror", type=Path, default=None,
                       help="a git copy of eth-sri/dp-sniper holding the pinned commit (or $DPSNIPER_MIRROR)")
    extra.add_argument("--fraction", type=float, default=DEFAULT_FRACTION,
                       help=f"share of DP-Sniper's default budget both tools run at (default {DEFAULT_FRACTION:g})")
    extra.add_argument("--only", default="", metavar="NAMES",
                       help="comma-separated mechanisms of DP-Sniper's set (default: all of them)")
    extra.add_argument("--no-dpsniper", action="store_true", help="dpverify's half only")
    extra.add_argument("--profile", choices=("missed", "all", "none"), default="missed",
                       help="which mechanisms to profile (default: those that miss the goal in some run)")
    extra.add_argument("--no-profile", action="store_true", help="the same as --profile none")
    extra.add_argument("--json", type=Path, default=None, metavar="FILE", help="also write every figure to FILE")
    extra.add_argument("--section", default="dpsniper",
                       help="name of the generated section --write replaces (default dpsniper)")
    extra.add_argument("--repeat", type=int, default=1, help="number of side-by-side runs (default 1)")
    ours, rest = extra.parse_known_args(args_list)
    profile_mode = "none" if ours.no_profile else ours.profile
    args = bench_arguments("python -m benchmarks.bench_dpsniper", __doc__,
                           f"smoke run: {QUICK_FACTOR:g} × --fraction", rest, parents=[extra])
    fraction = ours.fraction * (QUICK_FACTOR if args.quick else 1.0)
    names = [n.strip() for n in ours.only.split(",") if n.strip()] or list(runner.DEFAULT_SET)
    unknown = [n for n in names if n not in runner.DEFAULT_SET]
    if unknown:
        print(f"--only: unknown mechanism(s) {unknown}; choose from {', '.join(runner.DEFAULT_SET)}", file=sys.stderr)
        return 2
    if ours.repeat < 1:
        print(f"--repeat {ours.repeat}: give the number of side-by-side runs, 1 or more", file=sys.stderr)
        return 2
    cfg = runner.scaled_config(fraction)
    command = " ".join(["python -m benchmarks.bench_dpsniper", *args_list])

    def log(s: str) -> None:
        print(s, file=sys.stderr, flush=True)

    busy_before = wait_for_idle(args.wait_idle, "bench_dpsniper")
    meter = LoadMeter()
    log(f"[bench_dpsniper] background load {fmt_busy(busy_before)}; {usable_cpus()} usable CPUs; fraction "
        f"{fraction:g}; dpverify half ...")
    runs: list[tuple[dict[str, Any], dict[str, Any] | None, str | None]] = []
    versions, py, venv_error = None, None, None
    if ours.no_dpsniper:
        venv_error = "skipped (--no-dpsniper)."
    else:
        try:                                  # DP-Sniper's venv: made (or found) once for every run
            py = ensure_venv(ours.venv, find_mirror(ours.mirror), log)
            versions = venv_ready(ours.venv)
        except (VenvError, OSError) as exc:
            venv_error = str(exc)
    for k in range(ours.repeat):
        if ours.repeat > 1:
            log(f"[bench_dpsniper] run {k + 1} of {ours.repeat}")
        # dpverify's run k with seed + k: a reproducible seed per run, so that its bound's spread over the runs shows
        # as DP-Sniper's does (one seed in every run hid it: SparseVectorTechnique1's seed 0 draws a weak witness)
        dp = run_dpverify(names, cfg, args.seed + k, log=log)
        ds, ds_error = None, venv_error
        if py is not None:
            try:
                spec = {"fraction": fraction, "processes": WORKERS, "seed": args.seed, "tasks": names}
                ds = run_dpsniper(py, spec, log)
                ds_error = ds["error"]
            except OSError as exc:
                ds_error = str(exc)
        runs.append((dp, ds, ds_error))
    all_rows = [{n: compare(d[n], (s_ or {}).get("results", {}).get(n)) for n in names} for d, s_, _ in runs]
    dp, ds, ds_error = runs[0]
    rows = all_rows[0]
    # profiled: the mechanisms that missed the goal in any run
    missed = [n for n in names if any(r[n]["goal"] is False for r in all_rows)]
    to_profile = {"all": names, "none": [], "missed": missed}[profile_mode]
    if to_profile:
        log(f"[bench_dpsniper] profiles (one process, cProfile) of {', '.join(to_profile)} ...")
    profiles = run_profiles(to_profile, cfg, args.seed, log)
    busy = (busy_before, meter.others(), background_busy())
    smoke = args.quick or fraction < DEFAULT_FRACTION or len(names) < len(runner.DEFAULT_SET)
    text = report(command, fraction, cfg, args.seed, names, dp, ds, busy, ds_error, ours.venv, versions, smoke,
                  profiles, profile_mode, repeats=all_rows if ours.repeat > 1 else None)
    print(text)
    if args.write is not None:
        write_section(args.write, text, *markers(ours.section))
        log(f"\n[bench_dpsniper] wrote the generated section of {args.write}")
    if ours.json is not None:
        record = json_record(command, fraction, cfg, args.seed, dp, ds, ds_error, rows, profiles)
        if ours.repeat > 1:
            from dpverify.jsonsafe import json_clean
            record["runs"] = json_clean([{"seed": args.seed + k, "dpverify": d,
                                          "dpsniper": (s_ or {}).get("results", {}), "dpsniper_error": e, "rows": r}
                                         for k, ((d, s_, e), r) in enumerate(zip(runs, all_rows))])
        ours.json.write_text(json.dumps(record, indent=1, allow_nan=False) + "\n")
        log(f"[bench_dpsniper] wrote {ours.json}")
    return 0 if rows and all(r[n]["goal"] for r in all_rows for n in names) else 1


def json_record(command: str, fraction: float, cfg: dict[str, Any], seed: int, dp: dict[str, Any],
                ds: dict[str, Any] | None, ds_error: str | None, rows: dict[str, Any],
                profiles: dict[str, Profile | str]) -> Any:
    """Everything the run measured, JSON-safe (non-finite numbers as strings): both tools' results, the goal rows,
    each profile (:meth:`benchmarks.profiling.Profile.to_dict` with its sampling floor)."""
    from dpverify.jsonsafe import json_clean
    ds_results = (ds or {}).get("results", {})
    prof = {}
    for n, p in profiles.items():
        if isinstance(p, str):
            prof[n] = {"error": p}
            continue
        s_ = ds_results.get(n) or {}
        ds_seconds = float(s_["seconds"]) if s_ and not s_.get("error") and s_.get("seconds") is not None else None
        prof[n] = {**p.to_dict(), "dominant_label": p.label_of(p.dominant()[0]), **sampling_floor(p, ds_seconds)}
    return json_clean({"command": command, "fraction": fraction, "config": cfg, "seed": seed, "dpverify": dp,
                       "dpsniper": ds_results, "dpsniper_error": ds_error, "rows": rows, "profiles": prof})


if __name__ == "__main__":
    sys.exit(main())
