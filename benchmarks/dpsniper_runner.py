"""DP-Sniper's half of ``benchmarks/bench_dpsniper.py``: runs inside DP-Sniper's own virtual environment.

    .bench-venv/dpsniper/bin/python benchmarks/dpsniper_runner.py < spec.json > results.jsonl

Reads one JSON object from stdin::

    {"fraction": 0.01, "processes": 2, "seed": 0, "torch_threads": 1,
     "tasks": ["LaplaceMechanism", "NoisyHist1", ...]}

and writes one JSON line per finished task (flushed, so the caller sees progress), then ``{"done": true}``.
Nothing from the project is imported here (the venv holds only DP-Sniper and its dependencies); the pure parts
(:data:`DEFAULT_SET`, :func:`scaled_config`, :func:`pattern_pairs`, :func:`samples_used`) import no DP-Sniper
module and are tested in ``tests/test_bench_dpsniper.py``.

**What runs** is DP-Sniper's own experiment (Bichsel, Gehr, Drachsler-Cohen, Tsankov, Vechev, "DP-Sniper:
Black-Box Discovery of Differential Privacy Violations using Classifiers", IEEE S&P 2021), at the pinned commit of
``eth-sri/dp-sniper``: ``dpsniper/experiments/exp_default.py``'s mechanism, input domain, pattern generator,
output size and feature transform for each mechanism (:data:`DEFAULT_SET` is that file's list, entry by entry),
its logistic-regression attack (``LogisticRegressionFactory`` with ``SGDOptimizerFactory(learning_rate=0.3,
momentum=0.3, step_size=500)``, ``regularization_weight=0.001``, ``epochs=10``, as ``run_exp_default`` with
``use_mlp=False``), and ``dpsniper/experiments/my_experiment.py``'s steps: ``DDSearch`` over every input pair (train
on ``n_train`` outputs per input, threshold on ``n``, estimate ε on ``n_check``), then
``DDWitness.compute_eps_high_precision`` on ``n_final`` fresh outputs per input: the reported ε lower bound
(``eps_lcb``) holds with the configured confidence (``DDConfig.confidence`` = 0.9).

**Budget.**  ``DDConfig``'s defaults (``dpsniper/search/ddconfig.py``: ``n_train = n = n_check = 10.7 M``,
``n_final = 200 M``, ``c = 0.01``, batch sizes 10 000 / 100 000, ``confidence = 0.9``) times ``fraction``; DP-Sniper
requires ``n_check`` and ``n_final`` ≥ 10 000 to be multiples of 1000, so they are rounded down to one.

**Time.**  ``search_seconds`` (``DDSearch``, every pair) + ``final_seconds`` (the high-precision estimate) =
``seconds``, the two regions ``my_experiment.py`` measures (``time_dd_search``, ``time_final_estimate_eps``); the
start of DP-Sniper's process pool (``initialize_dpsniper``, ``spawn`` workers importing torch) is reported
apart (``startup_seconds``) and not counted, and so is one warm-up run of the first mechanism at
:data:`WARMUP_FRACTION` of the default budget (``warmup_seconds``; spec ``"warmup": false`` skips it): the first
mechanism's timed regions otherwise hold the workers' first use of the classifier and torch, about 3 s.

**Randomness.**  DP-Sniper draws from numpy's and torch's global generators, and its pool workers re-seed them from
fresh entropy (``MyParallelExecutor._init_worker_process``), so its runs cannot be repeated from a seed; ``seed``
only seeds the parent process.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import sys
import tempfile
import time
from typing import Any

# --------------------------------------------------------------------------------------------------
# exp_default.py, as data (pure; no DP-Sniper import)
# --------------------------------------------------------------------------------------------------

#: DDConfig's defaults (dpsniper/search/ddconfig.py at the pinned commit)
DEFAULT_CONFIG: dict[str, Any] = {"c": 0.01, "n_train": 10_700_000, "n": 10_700_000, "n_check": 10_700_000,
                                  "n_final": 200_000_000, "prediction_batch_size": 10_000,
                                  "training_batch_size": 100_000, "confidence": 0.9}

#: run_exp_default's list (dpsniper/experiments/exp_default.py), in its order:
#: name (class name, the label of DP-Sniper's logs) -> constructor keyword arguments, input domain
#: (dimensions, base type, [low, high]), component-wise neighbourhood of PatternGenerator, classifier input size,
#: special values of FlagsFeatureTransformer (None: no feature transform)
DEFAULT_SET: dict[str, dict[str, Any]] = {
    "LaplaceMechanism": {"kwargs": {}, "domain": (1, "FLOAT", [-10, 10]), "component_wise": False, "output_size": 1,
                         "flags": None},
    "TruncatedGeometricMechanism": {"kwargs": {}, "domain": (1, "INT", [0, 5]), "component_wise": False,
                                    "output_size": 1, "flags": None},
    "NoisyHist1": {"kwargs": {}, "domain": (5, "INT", [0, 10]), "component_wise": False, "output_size": 5,
                   "flags": None},
    "NoisyHist2": {"kwargs": {}, "domain": (5, "INT", [0, 10]), "component_wise": False, "output_size": 5,
                   "flags": None},
    "ReportNoisyMax1": {"kwargs": {}, "domain": (5, "FLOAT", [-10, 10]), "component_wise": True, "output_size": 1,
                        "flags": None},
    "ReportNoisyMax2": {"kwargs": {}, "domain": (5, "FLOAT", [-10, 10]), "component_wise": True, "output_size": 1,
                        "flags": None},
    "ReportNoisyMax3": {"kwargs": {}, "domain": (5, "FLOAT", [-10, 10]), "component_wise": True, "output_size": 1,
                        "flags": None},
    "ReportNoisyMax4": {"kwargs": {}, "domain": (5, "FLOAT", [-10, 10]), "component_wise": True, "output_size": 1,
                        "flags": None},
    "SparseVectorTechnique1": {"kwargs": {"c": 1, "t": 0.5}, "domain": (10, "FLOAT", [-10, 10]),
                               "component_wise": True, "output_size": 20, "flags": [-1]},
    "SparseVectorTechnique2": {"kwargs": {"c": 1, "t": 1}, "domain": (10, "FLOAT", [-10, 10]),
                               "component_wise": True, "output_size": 20, "flags": [-1]},
    "SparseVectorTechnique3": {"kwargs": {"c": 1, "t": 1}, "domain": (10, "FLOAT", [-10, 10]),
                               "component_wise": True, "output_size": 30, "flags": [-1000.0, -2000.0]},
    "SparseVectorTechnique4": {"kwargs": {"c": 1, "t": 1}, "domain": (10, "FLOAT", [-10, 10]),
                               "component_wise": True, "output_size": 20, "flags": [-1]},
    "SparseVectorTechnique5": {"kwargs": {"c": 1, "t": 1}, "domain": (10, "FLOAT", [-10, 10]),
                               "component_wise": True, "output_size": 10, "flags": None},
    "SparseVectorTechnique6": {"kwargs": {"c": 1, "t": 1}, "domain": (10, "FLOAT", [-10, 10]),
                               "component_wise": True, "output_size": 10, "flags": None},
    "Rappor": {"kwargs": {}, "domain": (1, "INT", [-10, 10]), "component_wise": False, "output_size": 20,
               "flags": None},
    "OneTimeRappor": {"kwargs": {}, "domain": (1, "INT", [-10, 10]), "component_wise": False, "output_size": 20,
                      "flags": None},
    "LaplaceParallel": {"kwargs": {"eps": 0.005, "n_parallel": 20}, "domain": (1, "FLOAT", [-10, 10]),
                        "component_wise": False, "output_size": 20, "flags": None},
    "SVT34Parallel": {"kwargs": {}, "domain": (10, "FLOAT", [-10, 10]), "component_wise": True, "output_size": 80,
                      "flags": [-1, -1000.0, -2000.0]},
    "PrefixSum": {"kwargs": {}, "domain": (10, "FLOAT", [-10, 10]), "component_wise": True, "output_size": 10,
                  "flags": None},
    "NumericalSVT": {"kwargs": {}, "domain": (10, "FLOAT", [-10, 10]), "component_wise": True, "output_size": 10,
                     "flags": None},
}

#: the module of dpsniper/mechanisms/ defining each class
MODULES: dict[str, str] = {
    "LaplaceMechanism": "laplace", "TruncatedGeometricMechanism": "geometric", "NoisyHist1": "noisy_hist",
    "NoisyHist2": "noisy_hist", **{f"ReportNoisyMax{i}": "report_noisy_max" for i in range(1, 5)},
    **{f"SparseVectorTechnique{i}": "sparse_vector_technique" for i in range(1, 7)}, "Rappor": "rappor",
    "OneTimeRappor": "rappor", "LaplaceParallel": "parallel", "SVT34Parallel": "parallel", "PrefixSum": "prefix_sum",
    "NumericalSVT": "sparse_vector_technique",
}


def _round_check(n: int) -> int:
    """DDConfig's rule: a sample size ≥ 10 000 must be a multiple of 1000 (rounded down here)."""
    return n - n % 1000 if n >= 10_000 else max(n, 1)


#: the budget (fraction of DP-Sniper's default) of the untimed warm-up run before the timed ones
WARMUP_FRACTION = 0.0005


def scaled_config(fraction: float) -> dict[str, Any]:
    """:data:`DEFAULT_CONFIG` with every sample size times ``fraction`` (``n_check``, ``n_final`` rounded down to a
    multiple of 1000 from 10 000 on, as ``DDConfig`` requires; every size at least 1)."""
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction must be in (0, 1], got {fraction}")
    cfg = dict(DEFAULT_CONFIG)
    for key in ("n_train", "n", "n_check", "n_final"):
        cfg[key] = max(1, int(DEFAULT_CONFIG[key] * fraction))
    cfg["n_check"] = _round_check(cfg["n_check"])
    cfg["n_final"] = _round_check(cfg["n_final"])
    return cfg


def pattern_pairs(dimensions: int, base_type: str, bounds: list[float], component_wise: bool,
                  swapped: bool = True) -> list[tuple[list[float], list[float]]]:
    """DP-Sniper's input pairs: ``PatternGenerator.get_input_pairs`` (dpsniper/input/pattern_generator.py, StatDP's
    patterns clipped to the domain; each pair followed by its swap unless ``swapped`` is false)."""
    n, h = int(dimensions), int(dimensions / 2)
    ones = [1] * n
    raw = [(ones, [0] + [1] * (n - 1)), (ones, [2] + [1] * (n - 1))]
    if component_wise:
        raw += [(ones, [2] + [0] * (n - 1)), (ones, [0] + [2] * (n - 1)), (ones, [2] * h + [0] * (n - h)),
                (ones, [2] * n), (ones, [0] * n), ([1] * h + [0] * (n - h), [0] * h + [1] * (n - h))]
    lo, hi = bounds
    conv = float if base_type == "FLOAT" else int
    out = []
    for a1, a2 in raw:
        c1 = [conv(max(lo, min(hi, v))) for v in a1]
        c2 = [conv(max(lo, min(hi, v))) for v in a2]
        out.append((c1, c2))
        if swapped:
            out.append((c2, c1))
    return out


def samples_used(cfg: dict[str, Any], n_pairs: int) -> int:
    """Mechanism outputs one DP-Sniper run draws: per (ordered) pair ``n_train`` per input for training, ``n`` on
    the second input for the threshold, ``n_check`` per input for the ε estimate; then ``n_final`` per input of the
    best pair."""
    return n_pairs * (2 * cfg["n_train"] + cfg["n"] + 2 * cfg["n_check"]) + 2 * cfg["n_final"]


# --------------------------------------------------------------------------------------------------
# DP-Sniper (inside its venv)
# --------------------------------------------------------------------------------------------------


def build(name: str) -> tuple[Any, Any, Any]:
    """(mechanism, PatternGenerator, LogisticRegressionFactory) of ``name`` as exp_default.py builds them."""
    import importlib

    from dpsniper.classifiers.classifier_factory import LogisticRegressionFactory
    from dpsniper.classifiers.feature_transformer import FlagsFeatureTransformer
    from dpsniper.classifiers.torch_optimizer_factory import SGDOptimizerFactory
    from dpsniper.input.input_domain import InputBaseType, InputDomain
    from dpsniper.input.pattern_generator import PatternGenerator

    spec = DEFAULT_SET[name]
    cls = getattr(importlib.import_module(f"dpsniper.mechanisms.{MODULES[name]}"), name)
    mechanism = cls(**spec["kwargs"])
    dims, base, bounds = spec["domain"]
    generator = PatternGenerator(InputDomain(dims, getattr(InputBaseType, base), list(bounds)), spec["component_wise"])
    transform = FlagsFeatureTransformer(list(spec["flags"])) if spec["flags"] is not None else None
    factory = LogisticRegressionFactory(feature_transform=transform, in_dimensions=spec["output_size"],
                                        optimizer_factory=SGDOptimizerFactory(learning_rate=0.3, momentum=0.3,
                                                                              step_size=500),
                                        regularization_weight=0.001, epochs=10, label=name)
    return mechanism, generator, factory


def _floats(a: Any) -> list[float]:
    return [float(v) for v in list(a)]


def _num(x: Any) -> Any:
    v = float(x)
    return v if math.isfinite(v) else str(v)


def run_task(name: str, cfg_dict: dict[str, Any], processes: int) -> dict[str, Any]:
    from dpsniper.attack.dpsniper import DPSniper
    from dpsniper.search.ddconfig import DDConfig
    from dpsniper.search.ddsearch import DDSearch

    config = DDConfig(n_processes=processes, **cfg_dict)
    mechanism, generator, factory = build(name)
    t0 = time.perf_counter()
    search = DDSearch(mechanism, DPSniper(mechanism, factory, config), generator, config)
    results = search._compute_results_for_all_inputs()  # DDSearch.run without its log line: every pair's result
    best = None
    for res in results:
        if best is None or res > best:
            best = res
    t1 = time.perf_counter()
    search_eps = best.eps
    pairs = [{"a1": _floats(r.a1), "a2": _floats(r.a2), "eps": _num(r.eps), "eps_lcb": _num(r.lower_bound)}
             for r in results]  # the n_check estimates, before the final one overwrites the best's
    best.compute_eps_high_precision(mechanism, config)
    t2 = time.perf_counter()
    return {"name": name, "eps_lcb": _num(best.lower_bound), "eps": _num(best.eps), "search_eps": _num(search_eps),
            "a1": _floats(best.a1), "a2": _floats(best.a2), "attack": str(best.attack).split(", CLASSIFIER")[0],
            "search_seconds": t1 - t0, "final_seconds": t2 - t1, "seconds": t2 - t0,
            "samples": samples_used(cfg_dict, len(results)), "pairs": pairs, "config": cfg_dict,
            "confidence": cfg_dict["confidence"]}


def main() -> int:
    spec = json.loads(sys.stdin.read())
    import numpy as np
    import torch

    from dpsniper.utils.initialization import initialize_dpsniper

    seed = int(spec.get("seed", 0))
    np.random.seed(seed)
    torch.manual_seed(seed)
    cfg = scaled_config(float(spec["fraction"]))
    processes = int(spec.get("processes", 2))
    from dpsniper.search.ddconfig import DDConfig
    out_dir = tempfile.mkdtemp(prefix="dpsniper-")
    try:
        t0 = time.perf_counter()
        with initialize_dpsniper(DDConfig(n_processes=processes, **cfg), out_dir=out_dir,
                                 torch_threads=spec.get("torch_threads")):
            from dpsniper.utils.my_multiprocessing import the_parallel_executor
            # wait for the spawned workers (each imports torch in its initializer): not part of any timed region
            the_parallel_executor.execute(math.sqrt, [1.0] * processes)
            print(json.dumps({"startup_seconds": time.perf_counter() - t0, "config": cfg,
                              "torch": torch.__version__, "numpy": np.__version__}), flush=True)
            if spec.get("warmup", True) and spec["tasks"]:
                # one untimed run of the first task at a tiny budget: the workers' first use of DP-Sniper's classifier
                # and torch (about 3 s on the first mechanism otherwise), as dpverify's half warms up its own
                t1 = time.perf_counter()
                run_task(spec["tasks"][0], scaled_config(WARMUP_FRACTION), processes)
                print(json.dumps({"warmup_seconds": time.perf_counter() - t1, "warmup_task": spec["tasks"][0]}),
                      flush=True)
            for name in spec["tasks"]:
                try:
                    out = run_task(name, cfg, processes)
                except Exception as exc:  # noqa: BLE001 -- reported, the caller prints it
                    out = {"name": name, "error": f"{type(exc).__name__}: {exc}"}
                print(json.dumps(out), flush=True)
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)
    print(json.dumps({"done": True}), flush=True)
    return 0


if __name__ == "__main__":
    # the pool's workers are started by ``spawn`` and import this file as ``__mp_main__``: keep them out of main()
    sys.exit(main())
