"""StatDP's half of ``benchmarks/bench_peers.py``: runs inside StatDP's own virtual environment.

    .bench-venv/statdp/bin/python benchmarks/statdp_runner.py < spec.json > results.jsonl

Reads one JSON object from stdin::

    {"seed": 0, "alpha": 0.05, "cores": 2, "event_iterations": 100000, "detect_iterations": 500000,
     "probes": 6, "max_seconds": 900,
     "tasks": [{"id": "noisy-max-laplace", "algorithm": "noisy_max_v1a", "claim": 0.1,
                "kwargs": {}, "num_input": 5, "sensitivity": "ALL_DIFFER"}, ...]}

and writes one JSON line per finished task (flushed, so the caller sees progress), then ``{"done": true}``.
Nothing from the project is imported here (the venv holds only ``pystatdp`` and its dependencies);
the pure search logic (:func:`next_probe`, :func:`search_bound`) is importable without ``pystatdp`` and
is tested in ``tests/test_bench_peers.py``.

**The algorithms** are StatDP's own catalogue (``cmla-psu/statdp``, ``statdp/algorithms.py``, MIT),
re-typed with ``pystatdp`` 0.1.3.1's calling convention ``algorithm(queries, epsilon, **kwargs)``:
``pystatdp`` dropped StatDP's ``prng`` first argument and ships none of these algorithms (only a PyDP
wrapper), so its algorithms draw from a global generator.  That generator is kept **per process**
(:func:`_rng`, keyed by the process id and seeded from the spec's seed): ``pystatdp`` runs the algorithm
in ``multiprocessing`` workers started by ``fork``, and a single module-level generator would give every
worker the same stream.  ``laplace`` is not in StatDP's file; it is DP-Sniper's ``Laplace`` (scalar
``x + Lap(1/ε)``) written in StatDP's style.

**Verdict and bound from p-values.** ``pystatdp.detect_counterexample(algorithm, test_epsilon, ...)``
returns, per test ε, the p-value of the null hypothesis "the algorithm is test-ε-DP" (event selection on
``event_iterations`` runs per input, then the test on ``detect_iterations`` fresh runs). The verdict is the
first probe, at the claimed ε: ``p ≤ alpha`` is a violation. The bound is searched over test ε, in the
spirit of DP-Sniper's ``statdpwrapper`` (a binary search; one ``detect_counterexample`` call per probe):
doubling from the claim while it is rejected, bisection after the first non-rejection (or in ``(0, claim)``
if the claim is not rejected), at most ``probes`` probes (fewer once the bracket is within 5 %); the bound
is the largest probed ε with ``p ≤ alpha`` (0 if none). It is NOT a confidence bound valid over all probes
(every probe selects its own event; no multiplicity correction).
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from typing import Any

import numpy as np

# --------------------------------------------------------------------------------------------------
# the search of the bound (pure; no pystatdp)
# --------------------------------------------------------------------------------------------------

#: doubling stops here (an impossible event keeps p = 0 up to large ε; StatDP's p tends to 1 beyond)
EPS_CAP: float = 64.0
#: bisection stops when the bracket (lo, hi] is this narrow relative to hi
REL_TOL: float = 0.05


def next_probe(claim: float, history: list[tuple[float, float]], alpha: float) -> float | None:
    """The next test ε given ``history`` = [(test ε, p), ...] (first probe: the claim); ``None`` when
    the search is over (the cap reached while still rejected, or the bracket narrower than ``REL_TOL``)."""
    if not history:
        return float(claim)
    rejected = [e for e, p in history if p <= alpha]
    kept = [e for e, p in history if p > alpha]
    lo = max(rejected, default=0.0)
    hi = min((e for e in kept if e > lo), default=None)
    if hi is None:
        nxt = 2.0 * lo
        return nxt if nxt <= EPS_CAP else None
    if hi - lo <= REL_TOL * hi:
        return None
    return 0.5 * (lo + hi)


def search_bound(claim: float, history: list[tuple[float, float]], alpha: float) -> float:
    """The largest probed ε whose hypothesis StatDP rejected (``p ≤ alpha``); 0 if none."""
    return max((e for e, p in history if p <= alpha), default=0.0)


# --------------------------------------------------------------------------------------------------
# StatDP's algorithms (statdp/algorithms.py), in pystatdp's calling convention
# --------------------------------------------------------------------------------------------------

_SEED = [0]
_PYSTATDP_GENERATE: list[Any] = [None]
_GENERATORS: dict[int, np.random.Generator] = {}


def _rng() -> np.random.Generator:
    """One generator per process (pystatdp forks its pool workers; see the module docstring)."""
    pid = os.getpid()
    g = _GENERATORS.get(pid)
    if g is None:
        g = _GENERATORS[pid] = np.random.default_rng([_SEED[0], pid])
    return g


def _hamming_distance(result1: Any, result2: Any) -> int:
    from itertools import zip_longest
    return sum(r1 != r2 for r1, r2 in zip_longest(result1, result2))


def laplace(queries, epsilon):
    return float(queries[0]) + _rng().laplace(scale=1.0 / epsilon)


def noisy_max_v1a(queries, epsilon):
    return (np.asarray(queries, dtype=np.float64) + _rng().laplace(scale=2.0 / epsilon, size=len(queries))).argmax()


def noisy_max_v1b(queries, epsilon):
    return (np.asarray(queries, dtype=np.float64) + _rng().laplace(scale=2.0 / epsilon, size=len(queries))).max()


def noisy_max_v2a(queries, epsilon):
    return (np.asarray(queries, dtype=np.float64)
            + _rng().exponential(scale=2.0 / epsilon, size=len(queries))).argmax()


def noisy_max_v2b(queries, epsilon):
    return (np.asarray(queries, dtype=np.float64) + _rng().exponential(scale=2.0 / epsilon, size=len(queries))).max()


def histogram_eps(queries, epsilon):
    return (np.asarray(queries, dtype=np.float64) + _rng().laplace(scale=epsilon, size=len(queries)))[0]


def histogram(queries, epsilon):
    return (np.asarray(queries, dtype=np.float64) + _rng().laplace(scale=1.0 / epsilon, size=len(queries)))[0]


def SVT(queries, epsilon, N, T):  # noqa: N802,N803 (StatDP's names)
    prng, out, c1 = _rng(), [], 0
    noisy_T = T + prng.laplace(scale=2.0 / epsilon)
    for query in queries:
        if query + prng.laplace(scale=4.0 * N / epsilon) >= noisy_T:
            out.append(True)
            c1 += 1
            if c1 >= N:
                break
        else:
            out.append(False)
    return out.count(False)


def iSVT1(queries, epsilon, N, T):  # noqa: N802,N803
    noisy_T = T + _rng().laplace(scale=2.0 / epsilon)
    out = [bool(query >= noisy_T) for query in queries]
    true_count = int(len(queries) / 2)
    return _hamming_distance((i < true_count for i in range(len(queries))), out)


def iSVT2(queries, epsilon, N, T):  # noqa: N802,N803
    prng = _rng()
    noisy_T = T + prng.laplace(scale=2.0 / epsilon)
    out = [bool(query + prng.laplace(scale=2.0 / epsilon) >= noisy_T) for query in queries]
    true_count = int(len(queries) / 2)
    return _hamming_distance((i < true_count for i in range(len(queries))), out)


def iSVT3(queries, epsilon, N, T):  # noqa: N802,N803
    prng, out, c1 = _rng(), [], 0
    noisy_T = T + prng.laplace(scale=4.0 / epsilon)
    for query in queries:
        if query + prng.laplace(scale=4.0 / (3.0 * epsilon)) > noisy_T:
            out.append(True)
            c1 += 1
            if c1 >= N:
                break
        else:
            out.append(False)
    true_count = int(len(queries) / 2)
    return _hamming_distance((i < true_count for i in range(len(queries))), out)


def iSVT4(queries, epsilon, N, T):  # noqa: N802,N803
    prng, out, c1 = _rng(), [], 0
    noisy_T = T + prng.laplace(scale=2.0 / epsilon)
    for query in queries:
        eta2 = prng.laplace(scale=2.0 * N / epsilon)
        if query + eta2 > noisy_T:
            out.append(query + eta2)
            c1 += 1
            if c1 >= N:
                break
        else:
            out.append(False)
    return out.count(False), out[-1]


def statdp_patterns(num_input: int, sensitivity: Any) -> list[tuple[np.ndarray, np.ndarray]]:
    """StatDP's neighbour patterns (``cmla-psu/statdp``, ``statdp/generators.py``): d1 = all ones, then
    one below / one above, and for ``ALL_DIFFER`` also one above rest below, one below rest above, half-half,
    all above, all below, x shape.  ``pystatdp`` 0.1.3.1 re-typed the half-half and x-shape patterns with
    ``int(n / 2) + 1`` entries per half, so its d2 (and x-shape d1) have ``n + 2`` entries instead of ``n``
    (``[2, 2, 2, 0, 0, 0, 0]`` for n = 5); a noisy max on 7 answers can return index 5 or 6, an output
    impossible on d1, and the correct noisy max is then rejected at every ε.  The runner uses these
    original patterns unless a task asks for ``"patterns": "pystatdp"``."""
    n, h = int(num_input), int(num_input / 2)
    ones = [1] * n
    cands = [(ones, [0] + [1] * (n - 1)), (ones, [2] + [1] * (n - 1))]
    if getattr(sensitivity, "name", str(sensitivity)) == "ALL_DIFFER":
        lo, hi = int(math.floor(n / 2.0)), int(math.ceil(n / 2.0))
        cands += [(ones, [2] + [0] * (n - 1)), (ones, [0] + [2] * (n - 1)), (ones, [2] * h + [0] * (n - h)),
                  (ones, [2] * n), (ones, [0] * n), ([1] * lo + [0] * hi, [0] * lo + [1] * hi)]
    return [(np.asarray(a, dtype=int), np.asarray(b, dtype=int)) for a, b in cands]


ALGORITHMS = {f.__name__: f for f in (laplace, noisy_max_v1a, noisy_max_v1b, noisy_max_v2a, noisy_max_v2b,
                                      histogram, histogram_eps, SVT, iSVT1, iSVT2, iSVT3, iSVT4)}


# --------------------------------------------------------------------------------------------------
# driver
# --------------------------------------------------------------------------------------------------


def _jsonable(x: Any) -> Any:
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating, float)):
        v = float(x)
        return v if math.isfinite(v) else str(v)
    if isinstance(x, np.ndarray):
        return _jsonable(x.tolist())
    return x


def run_task(task: dict[str, Any], spec: dict[str, Any], detector: Any, sens: dict[str, Any]) -> dict[str, Any]:
    alg = ALGORITHMS[task["algorithm"]]
    claim, alpha = float(task["claim"]), float(spec["alpha"])
    kwargs = dict(task.get("kwargs", {}))
    kwargs["epsilon"] = claim
    options: dict[str, Any] = dict(event_iterations=int(spec["event_iterations"]),
                                   detect_iterations=int(spec["detect_iterations"]), cores=int(spec["cores"]),
                                   quiet=True, loglevel=40)
    if task.get("databases") is not None:
        d1, d2 = task["databases"]
        options["databases"] = (np.asarray(d1, dtype=float), np.asarray(d2, dtype=float))
    else:
        options["num_input"] = (int(task["num_input"]),)
        options["sensitivity"] = sens[task.get("sensitivity", "ALL_DIFFER")]
    import pystatdp as _module  # detect_counterexample looks generate_databases up in this namespace
    if task.get("patterns", "statdp") == "statdp":
        _module.generate_databases = lambda algorithm, num, default_kwargs, sensitivity: tuple(
            (a, b, default_kwargs) for a, b in statdp_patterns(num, sensitivity))
    else:
        _module.generate_databases = _PYSTATDP_GENERATE[0]
    history: list[tuple[float, float]] = []
    probes: list[dict[str, Any]] = []
    t_task = time.perf_counter()
    while len(history) < int(spec["probes"]):
        if history and time.perf_counter() - t_task > float(spec["max_seconds"]):
            break
        eps = next_probe(claim, history, alpha)
        if eps is None:
            break
        t0 = time.perf_counter()
        (res,) = detector.detect_counterexample(alg, (eps,), kwargs, **options)
        seconds = time.perf_counter() - t0
        _, p, d1, d2, _, event = res
        history.append((eps, float(p)))
        probes.append({"epsilon": eps, "p": float(p), "seconds": seconds, "d1": _jsonable(d1),
                       "d2": _jsonable(d2), "event": _jsonable(event)})
    return {"id": task["id"], "algorithm": task["algorithm"], "patterns": task.get("patterns", "statdp"),
            "claim": claim, "alpha": alpha, "probes": probes,
            "verdict_p": probes[0]["p"], "violation": probes[0]["p"] <= alpha,
            "verdict_seconds": probes[0]["seconds"], "bound": search_bound(claim, history, alpha),
            "bound_seconds": sum(pr["seconds"] for pr in probes)}


def main() -> int:
    spec = json.loads(sys.stdin.read())
    _SEED[0] = int(spec.get("seed", 0))
    import logging
    logging.disable(logging.CRITICAL)
    from pystatdp import ALL_DIFFER, ONE_DIFFER, pystatdp  # noqa: F401  (inside the venv only)
    from pystatdp.hypotest import test_statistics
    from numba import njit

    @njit
    def _seed_numba(s):  # numba's own generator (used by test_statistics' binomial thinning)
        np.random.seed(s)

    _seed_numba(_SEED[0])
    t0 = time.perf_counter()
    test_statistics(10, 5, 0.1, 100)  # JIT-compile before any timed region
    print(json.dumps({"warmup_seconds": time.perf_counter() - t0}), flush=True)
    import pystatdp as _module
    _PYSTATDP_GENERATE[0] = _module.generate_databases
    detector = pystatdp()
    sens = {"ALL_DIFFER": ALL_DIFFER, "ONE_DIFFER": ONE_DIFFER}
    for task in spec["tasks"]:
        try:
            out = run_task(task, spec, detector, sens)
        except Exception as exc:  # noqa: BLE001 -- reported, the caller prints it
            out = {"id": task["id"], "algorithm": task["algorithm"], "error": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(_jsonable(out)), flush=True)
    print(json.dumps({"done": True}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
