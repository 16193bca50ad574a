"""Calibration of the anytime-valid audit (dpverify.statistical.anytime): false alarms and samples to a verdict.

    python docs/anytime_calibration.py                 # 200 runs per calibration mechanism (a few minutes, 1 core)
    python docs/anytime_calibration.py --runs 50       # a smoke run
    python docs/anytime_calibration.py --skip-false-alarms --spacings 1.25,1.5,2   # other checkpoint spacings
    python docs/anytime_calibration.py --skip-false-alarms --finalists 3,8         # other numbers of finalists
    python docs/anytime_calibration.py --skip-false-alarms --size-se 1,2           # other sizings of the bets
    python docs/anytime_calibration.py --skip-false-alarms --keep-pairs none,4     # narrowing to fewer pairs

Prints two markdown tables with the command line that made them (docs/auditor.md quotes them):

* **false alarms** -- ``audit_anytime`` on correct mechanisms whose claim is tight (true ε = claimed ε), ``--runs``
  runs each with seeds 10000, 10001, ... (and at most ``NARROWED_RUNS`` of a case with more pairs than the audit
  keeps, on a stream long enough to narrow); the count of violations, its exact 95 % (Clopper-Pearson) interval and
  the one-sided binomial p-value of "rate <= alpha" (``scipy.stats.binomtest``), the protocol of the audit's
  false-alarm measurement in docs/auditor.md;
* **samples to a verdict** -- every ``expect = "violation"`` statistical entry of audits/catalogue.toml, run as
  ``dpverify run --sequential`` runs it (:func:`dpverify.suites.run_entry` with ``sequential=True``, the entry's
  quick budget and seed under run seed 0): the outputs per input drawn until the verdict (the whole stream, its
  searched outputs included), the checkpoints reached, and whether the entry's violation is at least twice its
  claim (true ε from the suite file);
* **run seeds** -- the same for the entries at least twice their claim that miss 10⁴ at run seed 0 or are listed in
  ``ORACLES``, over run seeds 0 .. ``--seeds`` - 1: the median and how many runs reach a verdict within 10⁴;
* **oracle** -- for those entries whose law is known in closed form (``ORACLES``), the samples per input the
  *best* event needs: the events are the superlevel sets of the exact likelihood ratio of each pair and direction
  (Neyman-Pearson; on a fine grid), and for each the least ``n`` at which the expected counts ``(round(n p),
  round(n q))`` give ``ln(p_low / q_high) > ε`` -- about even odds of a verdict -- with the audit's fixed-sample
  test, Clopper-Pearson bounds at ``alpha/2`` each (no search, no union over finalists: what no fixed-sample audit
  can beat with this test); and the best growth rate ``g*`` of the anytime audit's test martingale over the same
  events (:func:`dpverify.statistical.anytime.bet_growth`, the bet optimal for the exact ``p, q`` within the audit's
  cap) with ``ln(1 / ((1 - BOUND_WEIGHT) alpha)) / g*``, the outputs per input its wealth needs on average to reach
  the threshold with that event known from the start (no search, no portfolio: a floor for the anytime audit).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402

from algorithms.classic import Geometric, Laplace, RandomizedResponse  # noqa: E402
from dpverify.statistical import anytime, betting  # noqa: E402
from dpverify.statistical.anytime import audit_anytime, bet_growth  # noqa: E402
from dpverify.suites import load_suite, run_entry  # noqa: E402
from dpverify.suites.runner import build_mechanism, build_pairs  # noqa: E402

GOAL = 10_000
CASES = (
    ("Laplace ε=0.5, pair (0, 1)", Laplace(epsilon=0.5), [(0.0, 1.0)], 0.5),
    ("Geometric ε=0.5, pair (0, 1)", Geometric(epsilon=0.5), [(0, 1)], 0.5),
    ("Randomized response ε=1, k=2", RandomizedResponse(epsilon=1.0, k=2), [(0, 1)], 1.0),
    # three pairs over four inputs: the pairs that share an input share its stream (dpverify.execution.sources)
    ("Laplace ε=0.5, pairs (0, 1), (0, −1), (1, 2)", Laplace(epsilon=0.5), [(0.0, 1.0), (0.0, -1.0), (1.0, 2.0)],
     0.5),
)
#: a tight claim on more pairs than the anytime audit keeps, with a stream long enough to narrow
#: (dpverify.statistical.narrowing): its own budget, NARROWED_RUNS runs (the cases above run --runs)
NARROWED_CASE = ("Laplace ε=0.5, six pairs at distance 1, 150,000 per input (narrowed from 65,536)",
                 Laplace(epsilon=0.5), [(float(i), float(i) + (1.0 if i % 2 else -1.0)) for i in range(6)], 0.5)
NARROWED_SAMPLES, NARROWED_RUNS = 150_000, 100


def false_alarms(runs: int, samples: int, search: int, first: int, alpha: float) -> list[str]:
    lines = ["| calibration mechanism (claim tight) | alarms | rate | exact 95 % interval |", "|---|---|---|---|"]
    total = n = 0
    narrowed_runs = min(runs, NARROWED_RUNS)
    for (name, mech, pairs, eps), m, r in [*((c, samples, runs) for c in CASES),
                                           (NARROWED_CASE, NARROWED_SAMPLES, narrowed_runs)]:
        k = sum(audit_anytime(mech, pairs, eps, samples=m, search_samples=search, first_samples=first,
                              alpha=alpha, seed=10_000 + s, workers=1).violation for s in range(r))
        ci = stats.binomtest(k, r).proportion_ci(0.95, method="exact")
        lines.append(f"| {name} | {k}/{r} | {k / r:.4f} | [{ci.low:.4f}, {ci.high:.4f}] |")
        total, n = total + k, n + r
    test = stats.binomtest(total, n, alpha, alternative="greater")
    ci = stats.binomtest(total, n).proportion_ci(0.95, method="exact")
    lines.append(f"| **all** | **{total}/{n}** | {total / n:.4f} | [{ci.low:.4f}, {ci.high:.4f}] |")
    lines.append("")
    lines.append(f"α = {alpha}; a stream of {samples:,} samples per input (the last row: {NARROWED_SAMPLES:,}; first "
                 f"checkpoint at {first:,}, searches on at most the last {search:,}); one-sided binomial p-value of "
                 f"'rate ≤ α': {test.pvalue:.3g}.")
    return lines


def ratio(entry) -> float | None:  # noqa: ANN001
    t = entry.true_epsilon
    if t is None:
        return None
    t = math.inf if str(t) == "inf" else float(t)
    return t / entry.claim.epsilon


def verdicts(workers: int, missed: list[str]) -> list[str]:
    suite = load_suite(ROOT / "audits" / "catalogue.toml")
    lines = ["| entry | true ε / claim | verdict | samples per input to verdict | checkpoints | ≤ 10⁴ | seconds |",
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
        lines.append(f"| `{entry.id}` | {r_txt} | {o.outcome} | {stv:,} of {d.get('samples', 0):,} budget | "
                     f"{len(d.get('rounds', []))}/{d.get('planned_rounds')} | "
                     f"{'yes' if o.outcome == 'violation' and stv <= GOAL else 'no'} | {o.seconds:.2f} |")
        if r is not None and r >= 2 and (o.outcome != "violation" or stv > GOAL or entry.id in ORACLES):
            missed.append(entry.id)
    return lines


# ---- oracle: the best event of each pair, from the exact law -------------------------------------------------------

def _cp_bound(k_num: int, k_den: int, n: int, level: float) -> float:
    lo = stats.beta.ppf(level, k_num, n - k_num + 1) if k_num > 0 else 0.0
    hi = stats.beta.ppf(1 - level, k_den + 1, n - k_den) if k_den < n else 1.0
    return math.log(lo / hi) if lo > 0 else -math.inf


def _least_n(p: float, q: float, eps: float, level: float, bound, top: int = 10**8) -> int | None:  # noqa: ANN001
    """Least n (to 1 %) with bound(round(n p), round(n q), n, level) > eps."""
    def ok(n: int) -> bool:
        return bound(int(round(n * p)), int(round(n * q)), n, level) > eps
    lo, hi = 10, top
    if not ok(hi):
        return None
    while hi > 1.01 * lo:
        mid = int(math.sqrt(lo * hi))
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def _superlevel_events(P0: np.ndarray, P1: np.ndarray, eps: float):  # noqa: ANN202
    """(p, q) of the superlevel sets of the likelihood ratio, both directions, that exceed e^eps (about 60)."""
    for a, b in ((P0, P1), (P1, P0)):
        with np.errstate(divide="ignore", invalid="ignore"):
            lr = np.where(b > 0, a / b, np.inf)
        order = np.argsort(-lr, kind="stable")
        ca, cb = np.cumsum(a[order]), np.cumsum(b[order])
        for m in np.unique(np.geomspace(1, len(order), 400).astype(int)):
            p, q = float(ca[m - 1]), float(cb[m - 1])
            if p > q * math.exp(eps) and q > 0:
                yield p, q


def _laplace_bins(x: float, scale: float, grid: np.ndarray) -> np.ndarray:
    cdf = np.where(grid < x, 0.5 * np.exp((grid - x) / scale), 1 - 0.5 * np.exp(-(grid - x) / scale))
    return np.diff(np.r_[0.0, cdf, 1.0])


def _law_laplace(entry, mech, pair) -> tuple[np.ndarray, np.ndarray]:  # noqa: ANN001
    grid = np.arange(-60, 61, 0.02) * mech.scale
    return _laplace_bins(float(pair.x0), mech.scale, grid), _laplace_bins(float(pair.x1), mech.scale, grid)


def _law_geometric(entry, mech, pair) -> tuple[np.ndarray, np.ndarray]:  # noqa: ANN001
    k = np.arange(-3000, 3001)
    pmf = lambda x: (1 - mech.alpha) / (1 + mech.alpha) * mech.alpha ** np.abs(k - int(x))  # noqa: E731
    return pmf(pair.x0), pmf(pair.x1)


def _law_two_laplace(entry, mech, pair) -> tuple[np.ndarray, np.ndarray]:  # noqa: ANN001
    """Two independent x + Lap(b): the likelihood ratio depends on (clip(y1), clip(y2)) to [x0, x1] only, so the
    law of the pair of clipped values (atoms at the ends, 400 bins between) is sufficient."""
    lo, hi = sorted((float(pair.x0), float(pair.x1)))
    inner = np.linspace(lo, hi, 401)

    def clipped(x: float) -> np.ndarray:
        cdf = np.where(inner < x, 0.5 * np.exp((inner - x) / mech.scale), 1 - 0.5 * np.exp(-(inner - x) / mech.scale))
        return np.r_[cdf[0], np.diff(cdf), 1 - cdf[-1]]
    c0, c1 = clipped(float(pair.x0)), clipped(float(pair.x1))
    return np.outer(c0, c0).ravel(), np.outer(c1, c1).ravel()


def _law_noisy_max_exponential(entry, mech, pair) -> tuple[np.ndarray, np.ndarray]:  # noqa: ANN001
    """max_i (x_i + Exp(b)): CDF prod_i (1 - e^(-(t - x_i)/b))_+ on a fine grid."""
    grid = np.arange(-5, 400, 0.02)

    def bins(x: np.ndarray) -> np.ndarray:
        cdf = np.prod([np.where(grid > v, -np.expm1(-(grid - v) / mech.scale), 0.0) for v in x], axis=0)
        return np.diff(np.r_[0.0, cdf, 1.0])
    return bins(np.asarray(pair.x0, float)), bins(np.asarray(pair.x1, float))


def _law_svt_outputs_value(entry, mech, pair) -> tuple[np.ndarray, np.ndarray]:  # noqa: ANN001
    """Sparse vector with cutoff 1 releasing the value: the output (index i of the first ⊤, its value v) has density
    f_nu(v - x_i) * int_{r <= v - T} f_rho(r) prod_{j<i} F_nu(T + r - x_j) dr; plus "no ⊤" (grid of r and v)."""
    assert int(mech.cutoff) == 1
    T, bt, bq = float(mech.threshold), float(mech.threshold_scale), float(mech.query_scale)
    r = np.arange(-40 * bt, 40 * bt, 0.01)
    v = np.arange(-30 * bq, 40 * bq, 0.02)
    pdf = lambda z, b: np.exp(-np.abs(z) / b) / (2 * b)  # noqa: E731
    cdf = lambda z, b: np.where(z < 0, 0.5 * np.exp(z / b), 1 - 0.5 * np.exp(-z / b))  # noqa: E731

    def law(x: np.ndarray) -> np.ndarray:
        out, g = [], pdf(r, bt)
        for i in range(len(x)):
            G = np.cumsum(g) * 0.01
            out.append(pdf(v - x[i], bq) * np.interp(v - T, r, G, left=0.0, right=G[-1]) * 0.02)
            g = g * cdf(T + r - x[i], bq)
        return np.r_[np.concatenate(out), max(0.0, float(np.sum(g) * 0.01))]
    return law(np.asarray(pair.x0, float)), law(np.asarray(pair.x1, float))


#: entries whose exact law the oracle knows (the entry's mechanism and pairs)
ORACLES = {
    "laplace-half-noise": _law_laplace,
    "geometric-ignores-sensitivity": _law_geometric,
    "budget-spent-twice": _law_two_laplace,
    "svt-outputs-value": _law_svt_outputs_value,
    "noisy-max-returns-value-exponential": _law_noisy_max_exponential,
}


def oracle(entry, alpha: float) -> tuple[str, int | None, str, float]:  # noqa: ANN001
    """(best event for the fixed-sample test, its least n; best event for the test martingale, its growth g*) over
    the entry's pairs and directions."""
    mech, eps, delta = build_mechanism(entry), entry.claim.epsilon, entry.claim.delta
    cap = anytime.LAMBDA_CAP / (math.exp(eps) + delta)
    best: tuple[float, str, float, float] | None = None
    grow: tuple[float, str, float, float] | None = None
    for pair in build_pairs(entry, 0):
        P0, P1 = ORACLES[entry.id](entry, mech, pair)
        events = list(_superlevel_events(P0, P1, eps))
        if not events:
            continue
        p_all, q_all = np.array(events).T
        _, g_all = bet_growth(p_all, q_all, math.exp(eps), delta, cap)
        k = int(np.argmax(g_all))
        if grow is None or g_all[k] > grow[0]:
            grow = (float(g_all[k]), pair.label, float(p_all[k]), float(q_all[k]))
        for p, q in events:
            # normal approximation to rank the events, then the exact requirement of the best few
            z = stats.norm.ppf(1 - alpha / 2)
            gap = math.log(p / q) - eps
            approx = (z * (math.sqrt((1 - p) / p) + math.sqrt((1 - q) / q)) / gap) ** 2
            if best is None or approx < best[0]:
                best = (approx, pair.label, p, q)
    if best is None or grow is None:
        return "-", None, "-", 0.0
    _, label, p, q = best
    fixed = _least_n(p, q, eps, alpha / 2, _cp_bound)
    g, glabel, gp, gq = grow
    return (f"{label}: p = {p:.4g}, q = {q:.4g}, ln(p/q) = {math.log(p / q):.3g}", fixed,
            f"{glabel}: p = {gp:.4g}, q = {gq:.4g}", g)


def seeds_and_oracles(ids: list[str], seeds: int, alpha: float, workers: int) -> list[str]:
    suite = load_suite(ROOT / "audits" / "catalogue.toml")
    lines = ["| entry | run seeds: median samples to verdict | ≤ 10⁴ | oracle event, fixed-sample (best pair) | "
             "oracle, fixed-sample (Clopper–Pearson) | oracle event, test martingale | growth g* per output | "
             "ln(1/((1−w)α)) / g* |", "|---|---|---|---|---|---|---|---|"]
    threshold = math.log(1 / ((1 - anytime.BOUND_WEIGHT) * alpha))
    for entry in suite.entries:
        if entry.id not in ids:
            continue
        stv = []
        for s in range(seeds):
            o = run_entry(entry, "quick", s, workers, sequential=True)
            stv.append((o.details or {}).get("anytime", {}).get("samples_to_verdict", 0)
                       if o.outcome == "violation" else math.inf)
        med = float(np.median(stv))
        within = sum(v <= GOAL for v in stv)
        if entry.id in ORACLES:
            event, fixed, gevent, g = oracle(entry, alpha)
        else:
            event, fixed, gevent, g = "(law not in closed form here)", None, "-", 0.0
        fmt = lambda n: "-" if n is None else f"{n:,}"  # noqa: E731
        lines.append(f"| `{entry.id}` | {med:,.0f} | {within}/{seeds} | {event} | {fmt(fixed)} | {gevent} | "
                     f"{g:.3g} | {fmt(round(threshold / g) if g > 0 else None)} |")
    lines.append("")
    lines.append(f"Run seeds 0 .. {seeds - 1}; oracle, fixed-sample: the least n per input at which the expected "
                 f"counts of the best event certify ε > claim (about even odds), α = {alpha} (α/2 per bound); "
                 f"test martingale: the best event's growth per output at the best bet within the cap, and the "
                 f"outputs per input it needs on average to reach the threshold (w = {anytime.BOUND_WEIGHT}).")
    return lines


#: entries of the spacing and finalists comparisons besides the misses: two 2x violations that reach 10^4 at every seed
COMPARED_ALSO = ("laplace-half-noise", "geometric-ignores-sensitivity")


def compared(option: str, values: list[float], label: str, ids: list[str], seeds: int, first_seed: int,
             workers: int, patch: Callable[[float], Any] | None = None,
             budget: tuple[int, int] | None = None) -> list[str]:
    """Samples to a verdict of ``ids`` with ``audit_anytime``'s ``option`` at each of ``values`` (or with ``patch(v)``,
    a context manager that sets the value some other way), run seeds ``first_seed .. first_seed + seeds - 1`` and,
    held out, the next ``seeds``: whether another value does better on seeds not used to look at it.  ``label``
    formats a value for the table; ``budget``: ``(samples, search_samples)`` instead of the entries' quick ones."""
    from functools import partial
    from unittest import mock

    from dpverify.suites import Budget

    suite = load_suite(ROOT / "audits" / "catalogue.toml")
    entries = [e for e in suite.entries if e.id in ids]
    a, b, c = first_seed, first_seed + seeds, first_seed + 2 * seeds
    lines = [f"| entry | {option} | run seeds {a}–{b - 1}: verdicts, ≤ 10⁴, median | "
             f"run seeds {b}–{c - 1}: verdicts, ≤ 10⁴, median |", "|---|---|---|---|"]
    for entry in entries:
        if budget is not None:
            entry = dataclasses.replace(entry, quick=Budget(*budget))
        for v in values:
            # suite entries have no such option: run_entry's sequential path calls anytime.audit_anytime
            with (patch(v) if patch is not None else
                  mock.patch.object(anytime, "audit_anytime", partial(audit_anytime, **{option: v}))):
                stv = []
                for s in range(a, c):
                    o = run_entry(entry, "quick", s, workers, sequential=True)
                    stv.append((o.details or {}).get("anytime", {}).get("samples_to_verdict", 0)
                               if o.outcome == "violation" else math.inf)
            lines.append(f"| `{entry.id}` | {label.format(v)} | {halves_cells(stv, seeds)} |")
    return lines


def halves_cells(stv: list[float], seeds: int) -> str:
    """The two table cells of :func:`compared` for samples to a verdict ``stv`` (``inf``: none) over two halves of
    ``seeds`` run seeds each: verdicts, verdicts within 10⁴, median."""
    return " | ".join(f"{sum(x < math.inf for x in h)}/{seeds}, {sum(x <= GOAL for x in h)}/{seeds}, "
                      f"{float(np.median(h)):,.0f}" for h in (stv[:seeds], stv[seeds:]))


def size_se_patch(value: float) -> Any:
    """``betting.SIZE_SE`` set to ``value`` while the context lasts (the standard errors by which a finalist's
    choosing frequencies are moved against the claim when its bets are sized)."""
    from unittest import mock
    return mock.patch.object(betting, "SIZE_SE", value)


#: the violations with more pairs than ``KEEP_PAIRS`` that stop after the first narrowing checkpoint at run seed 0
#: (the others stop before it, where narrowing changes nothing)
NARROWED = ("noisy-max-returns-value-laplace", "noisy-max-returns-value-exponential")
#: the synthetic case of a rare leak: one pair of 13 leaks at this multiple of the claim, the other 12 are tight
ONE_LEAK = 1.1


def one_leak_pairs() -> list[tuple[float, float]]:
    """Twelve pairs of Laplace(0.1) at distance 1 (true ε = the claim 0.1) and, at index 7, one at distance
    ``ONE_LEAK`` (true ε ``ONE_LEAK`` times the claim)."""
    pairs = [(float(i), float(i) + (1.0 if i % 2 else -1.0)) for i in range(12)]
    pairs.insert(7, (50.0, 50.0 + ONE_LEAK))
    return pairs


def one_leak(values: list[Any], seeds: int, first_seed: int, workers: int) -> list[str]:
    """Rows of :func:`compared`'s table for the synthetic rare leak (:func:`one_leak_pairs`) at StatDP's budget; a
    verdict counts only with the leaking pair as its witness."""
    a, b, c = first_seed, first_seed + seeds, first_seed + 2 * seeds
    lines = []
    for v in values:
        stv = []
        for s in range(a, c):
            r = audit_anytime(Laplace(0.1), one_leak_pairs(), 0.1, samples=SIZING_BUDGET[0],
                              search_samples=SIZING_BUDGET[1], seed=s, workers=workers, keep_pairs=v)
            right = r.violation and r.witness is not None and r.witness.test.pair_index == 7
            stv.append(r.samples_to_verdict if right else math.inf)
        lines.append(f"| one pair of 13 at {ONE_LEAK:g}× the claim (Laplace, the others tight) | {v} | "
                     f"{halves_cells(stv, seeds)} |")
    return lines


def anytime_default(name: str) -> object:
    """The default of ``audit_anytime``'s parameter ``name``."""
    import inspect
    return inspect.signature(audit_anytime).parameters[name].default


#: the run seeds the finalists' number was chosen on (0 .. FINALISTS_TUNED - 1): its comparison starts after them
FINALISTS_TUNED = 32
#: the subtle violation the bets' sizing was chosen on, at StatDP's budget (``benchmarks.bench_peers``: 500,000
#: outputs per input, searches on at most the last 100,000), on run seeds 0 .. SIZING_TUNED - 1 (and the quick
#: budgets' entries on run seeds 0 .. 15): its comparison starts after them
SIZING_SUBTLE, SIZING_BUDGET, SIZING_TUNED = "svt-unscaled-query-noise", (500_000, 100_000), 72
#: first run seed of the synthetic rare leak in the narrowing comparison (seeds below were looked at by hand)
KEEP_SYNTHETIC_SEEDS = 100


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=200, help="anytime audits per calibration mechanism")
    ap.add_argument("--samples", type=int, default=20_000, help="stream budget per input of a calibration run")
    ap.add_argument("--search", type=int, default=10_000, help="outputs per input a calibration run's searches see "
                    "at most")
    ap.add_argument("--first", type=int, default=256, help="first checkpoint of a calibration run")
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--workers", type=int, default=1, help="workers of the catalogue runs")
    ap.add_argument("--seeds", type=int, default=8, help="run seeds of the entries at least twice their claim that "
                    "miss 10⁴ (0: no such table, no oracle)")
    ap.add_argument("--skip-false-alarms", action="store_true")
    ap.add_argument("--spacings", default="", help="comma-separated checkpoint spacings to compare (e.g. 1.5,2) "
                    "on the misses and two reaching entries, over 2 × --seeds run seeds")
    ap.add_argument("--finalists", default="", help="comma-separated numbers of finalists to compare (e.g. 3,8) on "
                    "the same entries, over 2 × --seeds run seeds after those the default was chosen on")
    ap.add_argument("--size-se", default="", help="comma-separated standard errors by which the finalists' choosing "
                    "frequencies are moved when their bets are sized (e.g. 1,2), on the same entries over 2 × --seeds "
                    f"run seeds after the finalists' and on {SIZING_SUBTLE} at StatDP's budget over 2 × --power-seeds "
                    "run seeds after those the default was chosen on")
    ap.add_argument("--power-seeds", type=int, default=24, help=f"run seeds of each half on {SIZING_SUBTLE}")
    ap.add_argument("--keep-pairs", default="", help="comma-separated numbers of pairs kept from the narrowing "
                    "checkpoint on ('none': every pair to the end), on the violations it can change, over 2 × --seeds "
                    f"run seeds after the finalists', on {SIZING_SUBTLE} and a synthetic rare leak at StatDP's budget "
                    "over 2 × --power-seeds run seeds after those the default was chosen on")
    args = ap.parse_args()
    print(f"Command: `{' '.join(['python docs/anytime_calibration.py', *sys.argv[1:]])}`")
    print()
    if not args.skip_false_alarms:
        t0 = time.perf_counter()
        print("**False alarms** of `audit_anytime` on correct mechanisms whose claim is tight:")
        print()
        print("\n".join(false_alarms(args.runs, args.samples, args.search, args.first, args.alpha)))
        print(f"({time.perf_counter() - t0:.0f} s)")
        print()
    t0 = time.perf_counter()
    print("**Samples to a verdict** on the catalogue's violations (`dpverify run --sequential`, quick budgets, "
          "run seed 0):")
    print()
    missed: list[str] = []
    print("\n".join(verdicts(args.workers, missed)))
    print(f"({time.perf_counter() - t0:.0f} s)")
    if args.seeds > 0 and missed:
        t0 = time.perf_counter()
        print()
        print("**Run seeds and oracle** for the entries at least twice their claim that miss 10⁴ at run seed 0 or whose "
              "law the oracle knows:")
        print()
        print("\n".join(seeds_and_oracles(missed, args.seeds, args.alpha, args.workers)))
        print(f"({time.perf_counter() - t0:.0f} s)")
    compared_ids = list(dict.fromkeys([*missed, *COMPARED_ALSO]))     # the misses, then two that reach the goal
    if args.spacings:
        t0 = time.perf_counter()
        print()
        print("**Checkpoint spacing**: samples per input to a verdict with other spacings of the checkpoints:")
        print()
        growths = [float(g) for g in args.spacings.split(",")]
        print("\n".join(compared("growth", growths, "{:g}×", compared_ids, max(args.seeds, 1), 0, args.workers)))
        print(f"({time.perf_counter() - t0:.0f} s)")
    if args.finalists:
        t0 = time.perf_counter()
        print()
        print(f"**Finalists**: samples per input to a verdict with other numbers of finalists (the default, "
              f"{anytime_default('finalists')}, was chosen on run seeds 0–{FINALISTS_TUNED - 1}; these are later ones):")
        print()
        values = [int(v) for v in args.finalists.split(",")]
        print("\n".join(compared("finalists", values, "{:d}", compared_ids, max(args.seeds, 1), FINALISTS_TUNED,
                                  args.workers)))
        print(f"({time.perf_counter() - t0:.0f} s)")
    if args.size_se:
        t0 = time.perf_counter()
        print()
        print(f"**Bet sizing**: samples per input to a verdict with the finalists' choosing frequencies moved by other "
              f"numbers of standard errors when their bets are sized (the default, {betting.SIZE_SE:g}, was chosen on "
              f"run seeds 0–15 of the first entries and 0–{SIZING_TUNED - 1} of `{SIZING_SUBTLE}`; these are later "
              f"ones; the last rows at StatDP's budget, {SIZING_BUDGET[0]:,} outputs per input):")
        print()
        values = [float(v) for v in args.size_se.split(",")]
        lines = compared("size_se", values, "{:g}", compared_ids, max(args.seeds, 1), FINALISTS_TUNED, args.workers,
                         size_se_patch)
        lines += compared("size_se", values, "{:g}", [SIZING_SUBTLE], args.power_seeds, SIZING_TUNED, args.workers,
                          size_se_patch, SIZING_BUDGET)[2:]
        print("\n".join(lines))
        print(f"({time.perf_counter() - t0:.0f} s)")
    if args.keep_pairs:
        t0 = time.perf_counter()
        print()
        print(f"**Narrowing**: samples per input to a verdict with other numbers of pairs kept from the narrowing "
              f"checkpoint on (the default, {anytime_default('keep_pairs')}, was chosen on run seeds 0–23 of "
              f"`{SIZING_SUBTLE}` at StatDP's budget and 0–23 of the first two entries; these are later ones; the last "
              f"rows at StatDP's budget, {SIZING_BUDGET[0]:,} outputs per input, the synthetic leak on run seeds "
              f"{KEEP_SYNTHETIC_SEEDS}–{KEEP_SYNTHETIC_SEEDS + 2 * args.power_seeds - 1}):")
        print()
        values = [None if v.strip() == "none" else int(v) for v in args.keep_pairs.split(",")]
        lines = compared("keep_pairs", values, "{}", list(NARROWED), max(args.seeds, 1), FINALISTS_TUNED, args.workers)
        lines += compared("keep_pairs", values, "{}", [SIZING_SUBTLE], args.power_seeds, SIZING_TUNED, args.workers,
                          budget=SIZING_BUDGET)[2:]
        lines += one_leak(values, args.power_seeds, KEEP_SYNTHETIC_SEEDS, args.workers)
        print("\n".join(lines))
        print(f"({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
