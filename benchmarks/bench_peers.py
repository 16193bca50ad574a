"""dpverify side by side with StatDP, and the throughput of the classic samplers (issue 9).

    python -m benchmarks.bench_peers                              # full budgets (StatDP's defaults)
    python -m benchmarks.bench_peers --quick                      # smaller budgets on both sides
    python -m benchmarks.bench_peers --write docs/performance.md  # also rewrite the generated section
    python -m benchmarks.bench_peers --venv DIR                   # StatDP's venv (default .bench-venv/statdp)
    python -m benchmarks.bench_peers --no-statdp                  # dpverify's half and the samplers only

**StatDP** (``pystatdp`` 0.1.3.1, the only StatDP on the package registry) is installed into its own
virtual environment, never into the project's: ``python -m venv DIR`` then ``pip install`` of the pins in
:data:`STATDP_PINS` (``numpy<1.24`` because ``pystatdp/core.py`` uses ``np.bool``, removed in numpy 1.24;
``numba`` 0.58.1, the last release that supports numpy 1.23 on Python 3.11).  StatDP runs there as a
subprocess (``benchmarks/statdp_runner.py``: its docstring says how p-values become a verdict and a bound,
and which ``pystatdp`` defects it works around).  Both tools run on the same mechanisms in one run, one
after the other (dpverify first), with 2 processes each:

* dpverify's **verdict**: the entry of ``audits/catalogue.toml`` (its mechanism, pairs, claim and α) as a
  sequential audit (:func:`dpverify.statistical.sequential.audit_sequential`) whose last stage has StatDP's budget
  (``event_iterations`` search and ``detect_iterations`` test outputs per input), stopping at the first
  violation: the same maximum budget as StatDP's verdict, and the time and outputs until the verdict.
* dpverify's **bound**: the same entry with its own budget (``quick`` or ``full``), through
  :func:`dpverify.suites.run_entry`; wall time and the ε lower bound (a 1 − α confidence bound over every pair
  and event tested).
* StatDP: StatDP's own version of the mechanism (same noise, same ε; StatDP's own output encodings, e.g. the
  number of ⊥ of an SVT), StatDP's neighbour patterns on an input of the catalogue's length, StatDP's
  default iterations (full) or a fifth of them (quick).  Verdict time = the probe at the claimed ε; bound =
  largest probed ε rejected at p ≤ 0.05 in a doubling/bisection search (at most ``probes`` probes: 8 quick,
  10 full; it stops once the bracket is within 5 %).

Goals of issue 9, per mechanism: dpverify reaches its verdict in ≤ 1/10 of StatDP's verdict time, with an ε
lower bound at least as large as StatDP's bound; each classic batched sampler within 3× of the raw numpy
draws of the noise it uses (10^6 outputs, best of k).
"""

from __future__ import annotations

import dataclasses
import math
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from benchmarks.peer_runner import floats, json_objects, run_runner
from benchmarks.profiling import ANYTIME_PHASES, profile_call
from benchmarks.bench_graph import (LoadMeter, background_busy, bench_arguments, fmt_busy, fmt_time, report_header,
                                    usable_cpus, verdict, wait_for_idle, write_section)

BEGIN, END = "<!-- BEGIN peers -->", "<!-- END peers -->"
ROOT = Path(__file__).resolve().parent.parent
CATALOGUE = ROOT / "audits" / "catalogue.toml"
RUNNER = Path(__file__).resolve().parent / "statdp_runner.py"
DEFAULT_VENV = Path(".bench-venv/statdp")
#: what StatDP's venv gets; numpy < 1.24 for ``np.bool`` in pystatdp/core.py, numba 0.58.1 for that numpy.
STATDP_PINS: tuple[str, ...] = ("numpy==1.23.5", "numba==0.58.1", "pystatdp==0.1.3.1")

SPEED_GOAL: float = 10.0      # StatDP verdict time / dpverify verdict time
SAMPLER_GOAL: float = 3.0     # sampler time / raw draw time
STATDP_ALPHA: float = 0.05
WORKERS: int = 2


@dataclass(frozen=True)
class Budget:
    mode: str                 # catalogue budget of dpverify ("quick" / "full")
    event_iterations: int     # StatDP event selection, runs per input
    detect_iterations: int    # StatDP hypothesis test, runs per input
    probes: int               # StatDP detect_counterexample calls per mechanism (the first: the claim)
    max_seconds: float        # StatDP: no new probe after this many seconds on one mechanism
    draws: int                # sampler throughput: outputs per call
    repeats: int              # sampler throughput: best of


FULL = Budget("full", 100_000, 500_000, 10, 900.0, 1_000_000, 5)
QUICK = Budget("quick", 20_000, 100_000, 8, 120.0, 1_000_000, 3)


@dataclass(frozen=True)
class Peer:
    """A catalogue entry and StatDP's version of the same mechanism."""
    entry: str                # id in audits/catalogue.toml
    statdp: str               # function of benchmarks/statdp_runner.py (StatDP's name)
    kwargs: dict[str, Any] = field(default_factory=dict)
    num_input: int | None = None
    databases: tuple[list[float], list[float]] | None = None
    sensitivity: str = "ALL_DIFFER"
    published: str = ""       # DP-Sniper's benchmark name, a key of PUBLISHED (claimed ε = 0.1 there)
    patterns: str = "statdp"


SVT_KW = {"N": 1, "T": 1.0}  # the catalogue's cutoff c = 1 and threshold T = 1
PEERS: tuple[Peer, ...] = (
    Peer("laplace", "laplace", databases=([0.0], [1.0]), published="Laplace"),
    Peer("histogram", "histogram", num_input=5, sensitivity="ONE_DIFFER", published="NoisyHist1"),
    Peer("histogram-scale-epsilon", "histogram_eps", num_input=5, sensitivity="ONE_DIFFER", published="NoisyHist2"),
    Peer("noisy-max-laplace", "noisy_max_v1a", num_input=5, published="ReportNoisyMax1"),
    Peer("noisy-max-exponential", "noisy_max_v2a", num_input=5, published="ReportNoisyMax2"),
    Peer("noisy-max-returns-value-laplace", "noisy_max_v1b", num_input=5, published="ReportNoisyMax3"),
    Peer("noisy-max-returns-value-exponential", "noisy_max_v2b", num_input=5, published="ReportNoisyMax4"),
    Peer("svt", "SVT", SVT_KW, num_input=10, published="SVT1"),
    Peer("svt-no-query-noise", "iSVT1", SVT_KW, num_input=10, published="SVT5"),
    Peer("svt-no-cutoff", "iSVT2", SVT_KW, num_input=10, published="SVT6"),
    Peer("svt-unscaled-query-noise", "iSVT3", SVT_KW, num_input=10, published="SVT4"),
    Peer("svt-outputs-value", "iSVT4", SVT_KW, num_input=10, published="SVT3"),
)
#: pystatdp as shipped (its own neighbour patterns) on the correct noisy max: shows the pattern defect.
AS_SHIPPED = Peer("noisy-max-laplace", "noisy_max_v1a", num_input=5, patterns="pystatdp")

#: DP-Sniper's reference logs (Bichsel et al., S&P 2021; eth-sri/dp-sniper ``eval_sp2021/reference-results``,
#: StatDP run through DP-Sniper's wrapper; claimed ε = 0.1, 90 % confidence):
#: name -> (DP-Sniper LR ε_LB, its seconds, StatDP #1 ε_LB, StatDP seconds search + verify)
PUBLISHED: dict[str, tuple[float, float, float, str]] = {
    "Laplace": (0.0968, 21, 0.0998, "46 + 362"),
    "NoisyHist1": (0.0978, 38, 0.0828, "505 + 429"),
    "NoisyHist2": (4.602, 41, 9.717, "817 + 428"),
    "ReportNoisyMax1": (0.0923, 62, 0.0920, "60 + 400"),
    "ReportNoisyMax2": (0.0975, 58, 0.0996, "59 + 400"),
    "ReportNoisyMax3": (0.2478, 62, 0.1991, "132 + 436"),
    "ReportNoisyMax4": (0.3463, 63, 0.1960, "132 + 431"),
    "SVT1": (0.0858, 126, 0.0298, "344 + 405"),
    "SVT3": (0.1716, 160, 0.0231, "5821 + 443"),
    "SVT4": (0.1687, 130, 0.1709, "556 + 461"),
    "SVT5": (1.761, 59, 14.31, "351 + 373"),
    "SVT6": (0.272, 96, 0.322, "755 + 623"),
}


# --------------------------------------------------------------------------------------------------
# StatDP's venv and runner
# --------------------------------------------------------------------------------------------------


class VenvError(RuntimeError):
    """StatDP's virtual environment could not be made or used (the message says why)."""


def venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def ensure_venv(venv: Path, log: Callable[[str], None] = lambda s: None) -> Path:
    """``venv``'s interpreter, creating the venv and installing :data:`STATDP_PINS` when it cannot yet
    import ``pystatdp``; raises :class:`VenvError` with the failing command's output."""
    py = venv_python(venv)
    probe = [str(py), "-c", "import numpy, numba, pystatdp; print(numpy.__version__, numba.__version__)"]
    if py.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return py
    steps = [[sys.executable, "-m", "venv", str(venv)],
             [str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *STATDP_PINS], probe]
    for cmd in steps:
        log(f"[bench_peers] {' '.join(cmd)}")
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            tail = "\n".join((r.stderr or r.stdout).strip().splitlines()[-5:])
            raise VenvError(f"`{' '.join(cmd)}` failed (exit {r.returncode}): {tail}")
    return py


def statdp_spec(peers: Iterable[Peer], budget: Budget, claims: dict[str, float], seed: int) -> dict[str, Any]:
    """The JSON object ``statdp_runner.py`` reads: one task per peer, claim from the catalogue."""
    tasks = []
    for i, p in enumerate(peers):
        task: dict[str, Any] = {"id": p.entry if p.patterns == "statdp" else f"{p.entry} (pystatdp patterns)",
                                "algorithm": p.statdp, "claim": claims[p.entry], "kwargs": dict(p.kwargs),
                                "sensitivity": p.sensitivity, "patterns": p.patterns}
        if p.databases is not None:
            task["databases"] = [list(p.databases[0]), list(p.databases[1])]
        else:
            task["num_input"] = p.num_input
        tasks.append(task)
    return {"seed": seed, "alpha": STATDP_ALPHA, "cores": WORKERS, "event_iterations": budget.event_iterations,
            "detect_iterations": budget.detect_iterations, "probes": budget.probes,
            "max_seconds": budget.max_seconds, "tasks": tasks}


def parse_runner_output(lines: Iterable[str]) -> tuple[dict[str, dict[str, Any]], float | None, bool]:
    """``statdp_runner.py``'s JSON lines -> (results by task id, warm-up seconds, finished)."""
    results: dict[str, dict[str, Any]] = {}
    warmup, done = None, False
    for obj in json_objects(lines):
        if obj.get("done"):
            done = True
        elif "warmup_seconds" in obj:
            warmup = float(obj["warmup_seconds"])
        elif "id" in obj:
            results[obj["id"]] = floats(obj, ("bound", "verdict_p"))
    return results, warmup, done


def run_statdp(py: Path, spec: dict[str, Any], log: Callable[[str], None] = lambda s: None) -> dict[str, Any]:
    """Run the runner in StatDP's venv; returns ``{"results", "warmup", "seconds", "error"}``."""
    def show(obj: dict[str, Any]) -> None:
        log(f"[bench_peers] StatDP {obj['id']}: " + (obj.get("error") or
            f"p = {obj['verdict_p']:.3g} at ε = {obj['claim']:g} in {obj['verdict_seconds']:.1f} s, "
            f"bound {obj['bound']} after {len(obj['probes'])} probes ({obj['bound_seconds']:.1f} s)"))

    lines, error, seconds = run_runner(py, RUNNER, spec, ROOT, on_result=show, result_key="id")
    results, warmup, _ = parse_runner_output(lines)
    return {"results": results, "warmup": warmup, "seconds": seconds, "error": error}


# --------------------------------------------------------------------------------------------------
# dpverify's half
# --------------------------------------------------------------------------------------------------


def catalogue_entries(ids: Iterable[str], path: Path = CATALOGUE) -> dict[str, Any]:
    from dpverify.suites import load_suite
    wanted = set(ids)
    found = {e.id: e for e in load_suite(path).entries if e.id in wanted}
    missing = wanted - set(found)
    if missing:
        raise KeyError(f"not in {path}: {sorted(missing)}")
    return found


#: ``(samples, search_samples)`` of the untimed warm-up run before dpverify's timed ones (:func:`run_dpverify`)
WARMUP_BUDGET = (4_000, 2_000)


def run_dpverify(ids: Iterable[str], mode: str, seed: int, workers: int = WORKERS,
                 samples: tuple[int, int] | None = None, sequential: bool = False,
                 log: Callable[[str], None] = lambda s: None, warmup: bool = True) -> dict[str, dict[str, Any]]:
    """Audit the catalogue entries ``ids`` (budget ``mode``, or ``samples = (samples, search_samples)``; with
    ``sequential``, as a ladder ending at that budget); returns per id: verdict, bound, seconds, samples,
    expectation, true ε, and for a ladder the stages run, planned, and outputs per input until the verdict.  After
    one untimed warm-up run of each entry at :data:`WARMUP_BUDGET` (lazy imports) unless ``warmup`` is false."""
    from dpverify.suites import Budget as SuiteBudget
    from dpverify.suites import run_entry
    out: dict[str, dict[str, Any]] = {}
    entries = catalogue_entries(ids)
    if entries and warmup:
        # one untimed run of every entry at a tiny budget in this process: the event search's lazy imports
        # (scikit-learn, scipy.optimize: about 0.5 s) are not counted, as StatDP's numba compilation is not, and
        # the workers each audit forks inherit them (scikit-learn is imported only for vector outputs: warming up
        # the first entry alone left it to the first vector entry's timed audit)
        for entry in entries.values():
            run_entry(dataclasses.replace(entry, quick=SuiteBudget(*WARMUP_BUDGET), full=SuiteBudget(*WARMUP_BUDGET)),
                      mode, run_seed=seed, workers=1, sequential=sequential)
    for eid, entry in entries.items():
        if samples is not None:
            entry = dataclasses.replace(entry, quick=SuiteBudget(*samples), full=SuiteBudget(*samples))
        o = run_entry(entry, mode, run_seed=seed, workers=workers, sequential=sequential)
        # ``dpverify run --sequential`` is the anytime-valid audit (dpverify.statistical.anytime): its epochs
        ladder = (o.details or {}).get("anytime") or {}
        out[eid] = {"stages": len(ladder.get("rounds", [])), "planned_stages": ladder.get("planned_rounds"),
                    "samples_to_verdict": ladder.get("samples_to_verdict"), "n_pairs": ladder.get("n_pairs"),
                    "n_streams": ladder.get("n_streams"), "outputs": ladder.get("outputs"),
                    "pairs_to_end": (ladder.get("rounds") or [{}])[-1].get("pairs"),
                    "outcome": o.outcome, "violation": o.outcome == "violation", "expect": entry.expect,
                    "bound": float(o.epsilon_lower_bound) if o.epsilon_lower_bound is not None else math.nan,
                    "seconds": float(o.seconds), "samples": o.samples, "search_samples": o.search_samples,
                    "claim": float(entry.claim.epsilon), "alpha": entry.alpha if entry.alpha is not None else 0.05,
                    "true_epsilon": entry.true_epsilon, "error": o.error}
        log(f"[bench_peers] dpverify {eid}{' (sequential)' if sequential else ''}: {o.outcome}, bound "
            f"{out[eid]['bound']:.4g} in {o.seconds:.1f} s")
    return out


#: the phases of the verdict profile (:mod:`benchmarks.profiling`): cumulative time of each, in one process
PROFILE_PHASES = ANYTIME_PHASES


def profile_verdict(eid: str, budget: "Budget", seed: int) -> dict[str, Any]:
    """dpverify's verdict run on ``eid`` (StatDP's budget, sequential) under cProfile in one process (workers = 1,
    so every function is seen): ``{"id", "wall", "phases": [(label indented by depth, cumulative seconds), ...],
    "dominant": (label, seconds), "sampler": seconds of the mechanism's own code or None}`` over
    :data:`PROFILE_PHASES` (:func:`benchmarks.profiling.profile_call`)."""
    from dpverify.suites.runner import build_mechanism

    mechanism = build_mechanism(catalogue_entries([eid])[eid])
    _, prof = profile_call(lambda: run_dpverify([eid], budget.mode, seed, workers=1,
                                                samples=(budget.detect_iterations, budget.event_iterations),
                                                sequential=True, warmup=False), PROFILE_PHASES, mechanism)
    key, secs = prof.dominant()
    return {"id": eid, "wall": prof.wall, "phases": [("  " * d + label, s) for _, label, s, d in prof.rows()],
            "dominant": (prof.label_of(key), secs), "sampler": prof.sampler}


# --------------------------------------------------------------------------------------------------
# comparison
# --------------------------------------------------------------------------------------------------


def ratio(a: float | None, b: float | None) -> float:
    """``a / b`` (``nan`` when either is missing or ``b`` is 0)."""
    if a is None or b is None or not b or math.isnan(a) or math.isnan(b):
        return math.nan
    return a / b


def compare(dp: dict[str, Any], sd: dict[str, Any] | None, dv: dict[str, Any] | None = None) -> dict[str, Any]:
    """One mechanism's row: speed ratios (StatDP / dpverify), bounds, and whether the goal is met
    (StatDP verdict time ≥ 10× dpverify's, dpverify's bound ≥ StatDP's, and dpverify's verdict the expected one
    when ``dv`` says which: a fast wrong verdict meets no goal).  ``dp`` is dpverify's audit at its own budget (the
    bound), ``dv`` its verdict run (default: ``dp`` too)."""
    dv = dp if dv is None else dv
    row: dict[str, Any] = {"dp_seconds": dp["seconds"], "dp_bound": dp["bound"], "dp_violation": dp["violation"],
                           "dv_seconds": dv["seconds"], "dv_violation": dv["violation"]}
    if sd is None or "error" in sd:
        row.update(sd_error=None if sd is None else sd["error"], goal=None)
        return row
    row.update(sd_seconds=sd["verdict_seconds"], sd_bound_seconds=sd["bound_seconds"], sd_bound=sd["bound"],
               sd_p=sd["verdict_p"], sd_violation=bool(sd["violation"]), sd_probes=len(sd["probes"]))
    row["speed"] = ratio(sd["verdict_seconds"], dv["seconds"])
    row["speed_bound"] = ratio(sd["bound_seconds"], dp["seconds"])
    row["tighter"] = dp["bound"] >= sd["bound"]
    expect = dv.get("expect")
    row["expected"] = expect not in ("violation", "pass") or bool(dv["violation"]) == (expect == "violation")
    row["goal"] = bool(row["speed"] >= SPEED_GOAL and row["tighter"] and row["expected"])
    return row


def statdp_outputs(peer: Peer, budget: Budget) -> tuple[int, int]:
    """``(pairs, outputs)`` of one StatDP verdict (``detect_counterexample`` at one ε): its event selection runs every
    input pair of its patterns ``event_iterations`` times per input, its test the selected pair ``detect_iterations``
    times per input."""
    from benchmarks.statdp_runner import statdp_patterns

    pairs = 1 if peer.databases is not None else len(statdp_patterns(int(peer.num_input or 5), peer.sensitivity))
    return pairs, 2 * (pairs * budget.event_iterations + budget.detect_iterations)


def per_output_rows(passes: Sequence[str], dv: dict[str, dict[str, Any]], sd_results: dict[str, Any],
                    budget: Budget) -> list[str]:
    """Table rows comparing the two tools per output drawn on the mechanisms dpverify passes (where both spend their
    whole budgets): dpverify's pairs and outputs (the outputs its streams drew: every distinct input of its pairs
    until the narrowing checkpoint, then those of the pairs it kept, :mod:`dpverify.statistical.narrowing`; pairs
    that share an input share its stream), StatDP's (:func:`statdp_outputs`), each tool's verdict time per million
    outputs and their ratio."""
    peers = {p.entry: p for p in PEERS}
    rows = []
    for e in passes:
        v, sd = dv.get(e, {}), sd_results.get(e)
        if sd is None or not v.get("n_pairs") or not v.get("samples_to_verdict") or e not in peers:
            continue
        d_out = int(v.get("outputs")
                    or int(v.get("n_streams") or 2 * int(v["n_pairs"])) * int(v["samples_to_verdict"]))
        kept = v.get("pairs_to_end")
        d_pairs = f"{v['n_pairs']} ({kept} to the end)" if kept and kept < v["n_pairs"] else f"{v['n_pairs']}"
        s_pairs, s_out = statdp_outputs(peers[e], budget)
        d_rate, s_rate = v["seconds"] / d_out * 1e6, sd["verdict_seconds"] / s_out * 1e6
        rows.append(f"| `{e}` | {d_pairs}, {d_out / 1e6:.1f} M, {v['seconds']:.2f} s, {d_rate:.2f} s "
                    f"| {s_pairs}, {s_out / 1e6:.1f} M, {sd['verdict_seconds']:.1f} s, {s_rate:.2f} s "
                    f"| {d_out / s_out:.1f}× | {s_rate / d_rate:.1f}× |")
    return rows


def goal_rows(dp: dict[str, dict[str, Any]], sd: dict[str, Any] | None,
              dv: dict[str, dict[str, Any]] | None = None) -> dict[str, dict[str, Any]]:
    """:func:`compare` for every peer dpverify ran (``dv``: the verdict runs, default ``dp``)."""
    dv = dp if dv is None else dv
    sd_results = {} if sd is None else sd["results"]
    return {p.entry: compare(dp[p.entry], sd_results.get(p.entry), dv.get(p.entry)) for p in PEERS if p.entry in dp}


# --------------------------------------------------------------------------------------------------
# sampler throughput
# --------------------------------------------------------------------------------------------------


def sampler_cases() -> list[tuple[str, Callable[[], Any], Any, Callable[[np.random.Generator, int], Any], str]]:
    """(name, mechanism factory, input, raw draw(rng, n), what the raw draw is) for the classic samplers."""
    from algorithms.classic.clipped_sum import ClippedSum
    from algorithms.classic.exponential import ExponentialMechanism
    from algorithms.classic.gaussian import Gaussian
    from algorithms.classic.geometric import Geometric
    from algorithms.classic.histogram import Histogram
    from algorithms.classic.laplace import Laplace
    from algorithms.classic.noisy_max import ReportNoisyMax
    from algorithms.classic.prefix_sum import PrefixSum
    from algorithms.classic.randomized_response import RandomizedResponse
    from algorithms.classic.rappor import OneTimeRappor, Rappor
    from algorithms.classic.sparse_vector import SparseVector
    from algorithms.classic.truncated_geometric import TruncatedGeometric
    five, ten = np.zeros(5), np.ones(10)
    return [
        ("Laplace(0.1)", lambda: Laplace(0.1), 0.0, lambda g, n: g.laplace(0.0, 10.0, n), "`laplace(n)`"),
        ("Geometric(0.1)", lambda: Geometric(0.1), 0, lambda g, n: (g.geometric(0.1, n), g.geometric(0.1, n)),
         "2 × `geometric(n)`"),
        ("TruncatedGeometric(0.1, 10)", lambda: TruncatedGeometric(0.1, upper=10), 5,
         lambda g, n: (g.geometric(0.1, n), g.geometric(0.1, n)), "2 × `geometric(n)`"),
        ("Gaussian(1, 0.01, analytic)", lambda: Gaussian(1.0, delta=0.01, calibration="analytic"), 0.0,
         lambda g, n: g.normal(0.0, 1.0, n), "`normal(n)`"),
        ("RandomizedResponse(1, k=4)", lambda: RandomizedResponse(1.0, k=4), 0,
         lambda g, n: (g.random(n), g.integers(0, 3, n)), "`random(n)` + `integers(n)`"),
        ("ExponentialMechanism(1), 5 outcomes", lambda: ExponentialMechanism(1.0), five,
         lambda g, n: g.gumbel(0.0, 1.0, (n, 5)), "`gumbel((n, 5))`"),
        ("ReportNoisyMax(0.1, laplace), 5", lambda: ReportNoisyMax(0.1, noise="laplace"), five,
         lambda g, n: g.laplace(0.0, 20.0, (n, 5)), "`laplace((n, 5))`"),
        ("ReportNoisyMax(0.1, exponential), 5", lambda: ReportNoisyMax(0.1, noise="exponential"), five,
         lambda g, n: g.exponential(20.0, (n, 5)), "`exponential((n, 5))`"),
        ("Histogram(0.1), 5 bins", lambda: Histogram(0.1), np.ones(5), lambda g, n: g.laplace(0.0, 10.0, (n, 5)),
         "`laplace((n, 5))`"),
        ("SparseVector(0.1, T=1, c=1), 10 queries", lambda: SparseVector(0.1, threshold=1.0, cutoff=1), ten,
         lambda g, n: g.laplace(0.0, 1.0, (n, 11)), "`laplace((n, 11))`"),
        ("ClippedSum(0.1, [0, 1]), 3 records", lambda: ClippedSum(0.1, lower=0.0, upper=1.0),
         np.array([0.5, 0.2, 0.9]), lambda g, n: g.laplace(0.0, 10.0, n), "`laplace(n)`"),
        ("PrefixSum(0.1), 10 queries", lambda: PrefixSum(0.1), ten, lambda g, n: g.laplace(0.0, 10.0, (n, 10)),
         "`laplace((n, 10))`"),
        ("Rappor(), 20 bits (DP-Sniper's)", lambda: Rappor(), 1, lambda g, n: g.random((n, 20)) < 0.5,
         "`random((n, 20)) < p`"),
        ("OneTimeRappor(f=0.95), 20 bits", lambda: OneTimeRappor(f=0.95, n_hashes=4, filter_size=20), 1,
         lambda g, n: g.random((n, 20)) < 0.5, "`random((n, 20)) < p`"),
    ]


def best_time(fn: Callable[[np.random.Generator], Any], repeats: int, seed: int) -> float:
    best = math.inf
    for rep in range(repeats):
        g = np.random.default_rng([seed, rep])
        t0 = time.perf_counter()
        fn(g)
        best = min(best, time.perf_counter() - t0)
    return best


def bench_samplers(budget: Budget, seed: int, names: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """Outputs per second of each classic sampler (one batched call of ``budget.draws``) and of the raw
    numpy draws of its noise; ratio = sampler time / raw time (goal ≤ 3)."""
    rows = []
    keep = None if names is None else set(names)
    for name, make, x, raw, raw_text in sampler_cases():
        if keep is not None and name not in keep:
            continue
        mech, n = make(), budget.draws
        mech(x, 1000, np.random.default_rng(0))  # warm-up
        t_mech = best_time(lambda g: mech(x, n, g), budget.repeats, seed)
        t_raw = best_time(lambda g: raw(g, n), budget.repeats, seed)
        rows.append({"name": name, "raw": raw_text, "n": n, "mech_seconds": t_mech, "raw_seconds": t_raw,
                     "rate": n / t_mech, "raw_rate": n / t_raw, "ratio": t_mech / t_raw,
                     "goal": t_mech / t_raw <= SAMPLER_GOAL})
    return rows


# --------------------------------------------------------------------------------------------------
# report
# --------------------------------------------------------------------------------------------------


def fmt_eps(x: float | None) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if math.isinf(x):
        return "∞"
    return f"{x:.4g}"


def fmt_ratio(x: float | None) -> str:
    return "–" if x is None or math.isnan(x) else f"{x:.1f}×"


def fmt_verdict(violation: bool | None) -> str:
    return "–" if violation is None else ("violation" if violation else "pass")


def goal_cell(goal: bool | None, expected: bool = True) -> str:
    """The goal column: n/a without StatDP, **FAIL** (verdict) for a verdict other than the expected one."""
    return "n/a" if goal is None else verdict(goal) + ("" if expected else " (verdict)")


def fmt_verdict_run(v: dict[str, Any]) -> str:
    """dpverify's verdict cell: outcome (expected), epoch of the stream reached (checkpoint to checkpoint), outputs
    per input until the verdict, seconds."""
    if v["error"]:
        return f"error: {v['error']}"
    where = (f"epoch {v['stages']}/{v['planned_stages']}, {v['samples_to_verdict']:,} outputs/input, "
             if v.get("planned_stages") else "")
    return f"{fmt_verdict(v['violation'])} (expected {v['expect']}), {where}{v['seconds']:.2f} s"


def profile_section(profiles: Sequence[dict[str, Any]], rows: dict[str, dict[str, Any]],
                    workers: int = WORKERS) -> list[str]:
    """Markdown lines: the verdict profile (:func:`profile_verdict`) of each mechanism in ``profiles``, one column each,
    with the time the speed goal allows it (StatDP's verdict time / 10, from ``rows``: :func:`goal_rows`) and the
    mechanism's own code spread evenly over ``workers`` processes -- the floor of any verdict drawing those outputs
    on this many cores."""
    ids = [p["id"] for p in profiles]
    L = ["### Where dpverify's verdict time goes, on every mechanism that misses the speed goal (cProfile, one "
         "process)", "",
         "The same verdict runs as above with `workers = 1`, so that the profiler sees every function (profiler "
         "overhead included). Seconds and share of the whole verdict; indented rows are part of the row above "
         "(`benchmarks/profiling.py`). The last rows: the time the speed goal allows (StatDP's verdict time / "
         f"{SPEED_GOAL:g}) and the mechanism's own code for the outputs dpverify drew (its calls by the sampling "
         f"layer) spread evenly over {workers} workers: where that floor reaches the goal's time, no verdict that "
         "draws these outputs meets the goal on this machine, whatever its statistics cost.", "",
         "| Part | " + " | ".join(f"`{i}`" for i in ids) + " |", "|---|" + "---|" * len(ids)]
    labels = [label for label, _ in profiles[0]["phases"]]
    for k, label in enumerate(labels):
        indent = len(label) - len(label.lstrip(" "))
        cells = []
        for p in profiles:
            total = p["phases"][0][1] or 1.0
            secs = p["phases"][k][1]
            cells.append(f"{secs:.2f} ({secs / total:.0%})")
        L.append(f"| {'&nbsp;' * 2 * indent}{label.strip()} | " + " | ".join(cells) + " |")
    L.append("| largest part no other row contains | "
             + " | ".join(f"{p['dominant'][0].strip()}" if p.get("dominant") else "–" for p in profiles) + " |")
    own = [p.get("sampler") for p in profiles]
    L.append("| the mechanism's own code | " + " | ".join("–" if s is None else f"{s:.2f}" for s in own) + " |")
    goal = [rows.get(i, {}).get("sd_seconds") for i in ids]
    L.append(f"| the goal's time: StatDP's verdict / {SPEED_GOAL:g} | "
             + " | ".join("–" if g is None else f"{g / SPEED_GOAL:.2f}" for g in goal) + " |")
    L.append(f"| its own code over {workers} workers, share of the goal's time | "
             + " | ".join("–" if s is None or not g else f"{s / workers / (g / SPEED_GOAL):.0%}"
                          for s, g in zip(own, goal)) + " |")
    return L + [""]


def report(command: str, budget: Budget, seed: int, dp: dict[str, dict[str, Any]], sd: dict[str, Any] | None,
           samplers: list[dict[str, Any]], busy: tuple[float | None, float | None, float | None],
           statdp_error: str | None, venv: Path, dv: dict[str, dict[str, Any]] | None = None,
           profiles: Sequence[dict[str, Any]] = ()) -> str:
    """The markdown section.  ``dp``: dpverify at the entries' own budgets (bounds); ``dv``: dpverify's verdict
    runs (sequential, StatDP's budget; default ``dp``); ``profiles``: :func:`profile_verdict` of some of them (those
    that miss the speed goal)."""
    dv = dp if dv is None else dv
    L = report_header(command, seed, busy, " and the ratios between the two tools less so")
    sd_results = {} if sd is None else sd["results"]
    rows = goal_rows(dp, sd, dv)
    L.append("### Goals of issue 9")
    L.append("")
    n_speed = sum(1 for r in rows.values() if r.get("goal"))
    n_cmp = sum(1 for r in rows.values() if r.get("goal") is not None)
    n_samp = sum(1 for r in samplers if r["goal"])
    L.append("| Goal | Met on |")
    L.append("|---|---|")
    L.append(f"| ≥ {SPEED_GOAL:g}× less wall time than StatDP to a verdict, with an ε lower bound at least as "
             "large as "
             f"StatDP's | " + (f"{n_speed} of {n_cmp} mechanisms" if n_cmp else "not measured (StatDP did not run)")
             + " |")
    L.append(f"| batched sampler within {SAMPLER_GOAL:g}× of the raw numpy draws of its noise | {n_samp} of "
             f"{len(samplers)} samplers |")
    L.append("")
    missed = [e for e, r in rows.items() if r.get("goal") is False]
    if missed:
        passes = [e for e in missed if dv.get(e, {}).get("violation") is False]
        correct = [e for e in passes if rows[e].get("expected", True)]
        wrong = [e for e in passes if not rows[e].get("expected", True)]
        L.append(f"Of the {len(missed)} mechanisms that miss the goal, {len(correct)} "
                 + ("are" if len(correct) != 1 else "is") + " correct at the claim (dpverify's verdict `pass`, "
                 "as expected" + (": " + ", ".join(f"`{e}`" for e in correct) if correct else "")
                 + "): no test stops early there, both tools spend their whole budgets, and the goal asks for "
                 f"{SPEED_GOAL:g}× less time per output at the same budget"
                 + (f"; {len(wrong)} " + ("are violations" if len(wrong) != 1 else "is a violation")
                    + " that dpverify's stream did not certify within StatDP's test budget (verdict `pass`: "
                    + ", ".join(f"`{e}`" for e in wrong) + ")" if wrong else "")
                 + "; the others are violations where dpverify's stream ran until the evidence sufficed (the "
                 "outputs per input of its verdict cell).")
        L.append("")
        per_output = per_output_rows(passes, dv, sd_results, budget)
        if per_output:
            L.append("On those passes, per output drawn (both tools to the end of their budgets; dpverify's streams "
                     "run on every distinct input of the catalogue entry's pairs (pairs that share an input share "
                     "its stream) until the checkpoint where the audit narrows to the pairs in contention, then on "
                     "those of the pairs it kept, StatDP's event selection on every pair of its patterns and its test "
                     "on the pair it selected, both inputs of each counted):")
            L.append("")
            L.append("| Mechanism | dpverify: pairs, outputs, verdict time, s per M outputs | StatDP: pairs, outputs, "
                     "verdict time, s per M outputs | dpverify's outputs / StatDP's | time per output, StatDP / "
                     "dpverify |")
            L.append("|---|---|---|---|---|")
            L.extend(per_output)
            L.append("")
    L.append("### dpverify and StatDP side by side")
    L.append("")
    if statdp_error:
        L.append(f"**StatDP did not run: {statdp_error}** Only dpverify's half was measured; compare it with the "
                 "published figures below.")
        L.append("")
    else:
        assert sd is not None
        L.append(f"StatDP: `pystatdp` 0.1.3.1 in `{venv}` (pins: {', '.join(f'`{p}`' for p in STATDP_PINS)}), "
                 f"{WORKERS} processes, {budget.event_iterations:,} runs per input for the event selection and "
                 f"{budget.detect_iterations:,} for the test; up to {budget.probes} probes per mechanism; numba "
                 f"warm-up {fmt_time(sd['warmup'] or 0.0)} (not counted); the whole StatDP half took "
                 f"{sd['seconds']:.0f} s. dpverify, {WORKERS} workers: the verdict by the anytime-valid audit "
                 f"(`dpverify run --sequential`: a betting test martingale on one stream of at most "
                 f"{budget.detect_iterations:,} outputs per input, StatDP's test budget, shared by the pairs that "
                 "share an input, its events "
                 "re-searched on the stream so far at doubling checkpoints, stopping at the first batch where the "
                 f"evidence certifies a violation); the bound by the catalogue entry with its `{budget.mode}` "
                 "budget; each half after one untimed warm-up run at a tiny budget (dpverify: of every entry, for its "
                 "lazy imports, as StatDP's numba compilation).")
        L.append("")
    L.append("| Mechanism (catalogue id / StatDP name) | claim ε | true ε | dpverify: verdict (expected), epoch, "
             "time | dpverify: ε LB, time | StatDP: p at claim, verdict time | StatDP: bound (probes), time | "
             "speed-up to verdict (to bound) | goal |")
    L.append("|---|---|---|---|---|---|---|---|---|")
    for p in PEERS:
        if p.entry not in dp:
            continue
        d, r = dp[p.entry], rows[p.entry]
        true = fmt_eps(d["true_epsilon"]) if d["true_epsilon"] is not None else "–"
        vcell = fmt_verdict_run(dv[p.entry]) if p.entry in dv else "–"
        dcell = f"{fmt_eps(d['bound'])}, {d['seconds']:.2f} s" if not d["error"] else f"error: {d['error']}"
        if "sd_seconds" in r:
            scell = f"{r['sd_p']:.3g} ({fmt_verdict(r['sd_violation'])}), {r['sd_seconds']:.1f} s"
            bcell = f"{fmt_eps(r['sd_bound'])} ({r['sd_probes']}), {r['sd_bound_seconds']:.1f} s"
            speed = f"{fmt_ratio(r['speed'])} ({fmt_ratio(r['speed_bound'])})"
        else:
            scell = bcell = speed = "–" if not r.get("sd_error") else f"error: {r['sd_error']}"
        L.append(f"| `{p.entry}` / `{p.statdp}` | {d['claim']:g} | {true} | {vcell} | {dcell} | {scell} | {bcell} | "
                 f"{speed} | {goal_cell(r.get('goal'), r.get('expected', True))} |")
    L.append("")
    shipped = sd_results.get(f"{AS_SHIPPED.entry} (pystatdp patterns)")
    if shipped and "error" not in shipped:
        L.append(f"`pystatdp` as shipped (its own neighbour patterns) on the correct `noisy_max_v1a`: p = "
                 f"{shipped['verdict_p']:.3g} at the claim ε = {shipped['claim']:g} "
                 f"({fmt_verdict(shipped['violation'])}), bound {fmt_eps(shipped['bound'])}, witness pair "
                 f"{shipped['probes'][0]['d1']} vs {shipped['probes'][0]['d2']} (d2 has n + 2 entries: its "
                 "half-half and x-shape patterns are mis-typed), hence the original StatDP patterns above.")
        L.append("")
    L.append("How to read it. dpverify's ε LB is a lower confidence bound at level 1 − α (α of the entry: 0.1 for "
             "`laplace` and `svt-unscaled-query-noise`, 0.05 otherwise) valid over every pair, direction and event "
             "it tested. StatDP's verdict is its p-value at the claimed ε (violation iff p ≤ 0.05); its bound is "
             "the largest test ε it rejected (p ≤ 0.05) in a doubling/bisection search, one "
             "`detect_counterexample` call (event selection + test) per probe, with no correction for the "
             "several probes: not a confidence bound, and coarse (at most "
             f"{budget.probes} probes, doubling from the claim, then bisection to 5 %). StatDP's SVT variants "
             "return its own summaries (the number of ⊥, the "
             "Hamming distance to a fixed pattern, with the noisy value for `iSVT4`), dpverify's catalogue "
             "versions the whole answer vector; the noise and ε are the same. Speed-up to verdict = StatDP's "
             "verdict time / dpverify's verdict time; to bound = StatDP's bound search / dpverify's audit at its own "
             "budget; wall clock on this machine in this run, both tools with 2 processes. dpverify's sequential "
             "verdict holds at level α at whatever batch it stops (Ville's inequality on the test martingale); "
             "a `pass` is never a stop: no test certifies privacy, so on a correct mechanism both tools run to "
             "the end of their budgets and the speed-up to the verdict is the ratio of their costs at that budget.")
    L.append("")
    if profiles:
        L += profile_section(profiles, goal_rows(dp, sd, dv))
    L.append("### Published figures (DP-Sniper's reference logs, Bichsel et al., S&P 2021; claimed ε = 0.1 for every "
             "row; hardware not recorded)")
    L.append("")
    L.append("| Catalogue id | Published name | DP-Sniper (LR) ε LB | DP-Sniper s | StatDP ε LB | StatDP s "
             "(search + verify) | dpverify here: ε LB, s (claim) |")
    L.append("|---|---|---|---|---|---|---|")
    for p in PEERS:
        if p.entry not in dp or p.published not in PUBLISHED:
            continue
        lr, lr_s, sd_lb, sd_s = PUBLISHED[p.published]
        d = dp[p.entry]
        L.append(f"| `{p.entry}` | {p.published} | {lr:g} | {lr_s:g} | {sd_lb:g} | {sd_s} | {fmt_eps(d['bound'])}, "
                 f"{d['seconds']:.2f} (ε = {d['claim']:g}) |")
    L.append("")
    L.append(f"### Classic samplers: outputs per second against the raw numpy draws ({budget.draws:,} outputs per "
             f"call, best of {budget.repeats}, one core)")
    L.append("")
    L.append("| Sampler | raw draws of its noise | sampler | raw | sampler time / raw time | goal ≤ "
             f"{SAMPLER_GOAL:g}× |")
    L.append("|---|---|---|---|---|---|")
    for s in samplers:
        L.append(f"| `{s['name']}` | {s['raw']} | {s['rate'] / 1e6:.1f} M/s | {s['raw_rate'] / 1e6:.1f} M/s "
                 f"| {s['ratio']:.2f}× | {verdict(s['goal'])} |")
    return "\n".join(L)


def main(argv: list[str] | None = None) -> int:
    import argparse
    args_list = list(sys.argv[1:] if argv is None else argv)
    extra = argparse.ArgumentParser(add_help=False)
    extra.add_argument("--venv", type=Path, default=DEFAULT_VENV,
                       help=f"StatDP's own virtual environment, made there if missing (default {DEFAULT_VENV})")
    extra.add_argument("--no-statdp", action="store_true", help="dpverify's half only")
    ours, rest = extra.parse_known_args(args_list)
    args = bench_arguments("python -m benchmarks.bench_peers", __doc__,
                           "smaller budgets on both sides (catalogue `quick`, StatDP a fifth of its defaults)", rest,
                           parents=[extra])
    budget = QUICK if args.quick else FULL
    command = " ".join(["python -m benchmarks.bench_peers", *args_list])

    def log(s: str) -> None:
        print(s, file=sys.stderr, flush=True)

    busy_before = wait_for_idle(args.wait_idle, "bench_peers")
    meter = LoadMeter()
    log(f"[bench_peers] background load {fmt_busy(busy_before)}; {usable_cpus()} usable CPUs; dpverify half ...")
    ids = [p.entry for p in PEERS]
    dp = run_dpverify(ids, budget.mode, args.seed, log=log)
    dv = run_dpverify(ids, budget.mode, args.seed, samples=(budget.detect_iterations, budget.event_iterations),
                      sequential=True, log=log)
    sd, statdp_error = None, None
    if ours.no_statdp:
        statdp_error = "skipped (--no-statdp)."
    else:
        try:
            py = ensure_venv(ours.venv, log)
            spec = statdp_spec([*PEERS, AS_SHIPPED], budget, {i: dp[i]["claim"] for i in ids}, args.seed)
            sd = run_statdp(py, spec, log)
            statdp_error = sd["error"]
        except (VenvError, OSError) as exc:
            statdp_error = str(exc)
    profiles = []
    for e, r in goal_rows(dp, sd, dv).items():
        if r.get("goal") is not True:
            log(f"[bench_peers] profile of the verdict on {e} ...")
            profiles.append(profile_verdict(e, budget, args.seed))
    log("[bench_peers] sampler throughput ...")
    samplers = bench_samplers(budget, args.seed)
    busy_during = meter.others()
    busy_after = background_busy()
    text = report(command, budget, args.seed, dp, sd, samplers, (busy_before, busy_during, busy_after),
                  statdp_error, ours.venv, dv, profiles)
    print(text)
    if args.write is not None:
        write_section(args.write, text, BEGIN, END)
        log(f"\n[bench_peers] wrote the generated section of {args.write}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
