"""Utility-theorem checks: Monte Carlo estimates of what a theorem bounds, against the bound.

A paper proves "with probability at least X the tree has the right shape" or "the error exceeds Y with
probability at most γ".  :func:`check_theorem` runs the algorithm as coded many times (seeded, batched, on a
process pool -- the same seed gives the same result on any number of workers), puts an exact or otherwise
valid confidence interval around the estimate and returns a :class:`TheoremResult` with a verdict:

- ``holds``: the whole interval lies on the claimed side of the bound;
- ``violated``: the whole interval lies on the other side;
- ``inconclusive``: the interval contains the bound (with ``runs_needed``, the number of runs that would
  resolve it if the estimate stayed where it is).

``holds`` is evidence at level ``alpha`` for *these parameters and inputs*, never a proof of the theorem.

The theorem protocol (duck-typed; ``dpverify`` never imports a specific algorithm -- the papers' theorems
live in :mod:`algorithms.theorems`).  A theorem object, built from keyword parameters, has:

``name`` (str)
    e.g. ``"seed 001 Theorem 13"``.
``statement`` (str)
    the claim as checked, with the reading chosen where the paper is ambiguous.
``quantity`` (str)
    ``"probability"`` (of an event), ``"mean"`` or ``"quantile"`` (of a real-valued quantity), or
    ``"always"`` (a deterministic property that must hold on every instance).
``direction`` (str)
    ``"at_least"`` (the claim is ``quantity >= bound``), ``"at_most"`` (``quantity <= bound``) or
    ``"equal"`` (an identity, e.g. a distribution function: ``holds`` then means *consistent*: the interval
    contains the value; ``violated`` that it excludes it); ignored for ``"always"``.
``level`` (float)
    only for ``"quantile"``: which quantile, e.g. ``0.9``.
``parameters`` (dict)
    the parameters the check runs at (JSON-able scalars); shown in reports and used as plot axes.
``size`` (number, optional)
    the size of the input (e.g. ``|V|``); the smallest violated point of a sweep is reported by it.
``hypotheses()`` -> list[str]
    what is wrong with the inputs/parameters for the theorem to apply (``[]``: it applies).  A non-empty
    list gives an error naming the problems, never a verdict.
``bound()`` -> float
    the bound at the parameters.  NaN is an error (no verdict); ``±inf`` is allowed and marked vacuous.
``sample(n, rng)`` -> array
    ``n`` independent runs with the generator ``rng``: for ``"probability"`` a bool array (did the event
    the claim is about happen in run ``i``) -- or, for a conditional probability, a float array of 0/1
    with NaN for the runs where the conditioning event did not happen (they are not counted), for ``"mean"``/``"quantile"`` a float array (the quantity in
    run ``i``), for ``"always"`` a tuple ``(ok, failures)``: ``ok`` a bool array (one entry per instance
    checked), ``failures`` a list of dicts, one per instance with ``ok`` False, each with at least
    ``"size"`` (a number: the smallest counterexample is the one reported).
``deterministic`` (bool, optional, ``"always"`` only)
    ``True`` for a fixed grid of instances: ``sample`` is called once, and may return any number of them.
``exact()`` -> float | None (optional)
    the exact value of the quantity where it can be computed; the result says whether the interval
    contains it (a cross-check of the sampler, not part of the verdict).
"""


from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify._validation import check_count, check_real, counted as count_of, root_entropy
from dpverify.errors import InputError, MechanismError
from dpverify.execution.sampling import WorkerPool, batch_sizes, resolve_workers
from dpverify.theorems.result import DEFAULT_BATCH_SIZE, DIRECTIONS, MAX_FAILURES_KEPT, QUANTITIES, SweepResult, TheoremResult, VERDICTS, plain_value
from dpverify.theorems.intervals import binomial_interval, mean_interval, quantile_interval, runs_needed, vacuous, verdict_of

__all__ = ["check_theorem", "check_sweep", "VerdictRates", "verdict_rates", "TheoremResult", "SweepResult",
           "runs_needed", "QUANTITIES", "DIRECTIONS", "VERDICTS"]



# --------------------------------------------------------------------------------------------------
# the protocol, validated
# --------------------------------------------------------------------------------------------------


def _describe(theorem: Any) -> str:
    name = getattr(theorem, "name", None) or type(theorem).__name__
    params = getattr(theorem, "parameters", None)
    return f"{name} at {dict(params)}" if isinstance(params, Mapping) and params else str(name)


def _protocol(theorem: Any) -> tuple[str, str, float | None]:
    """Validate the protocol attributes; return ``(quantity, direction, level)``."""
    missing = [a for a in ("name", "statement", "quantity", "parameters", "hypotheses", "bound", "sample")
               if not hasattr(theorem, a)]
    if missing:
        raise InputError(f"{type(theorem).__name__} is not a theorem object: no {', '.join(missing)}; see the "
                         "protocol in the docstring of dpverify.theorems.check (e.g. the classes of algorithms.theorems)")
    quantity = theorem.quantity
    if quantity not in QUANTITIES:
        raise InputError(f"{_describe(theorem)}: quantity {quantity!r} is not one of {', '.join(QUANTITIES)}")
    direction = getattr(theorem, "direction", None)
    if quantity == "always":
        direction = "at_least"
    elif direction not in DIRECTIONS:
        raise InputError(f"{_describe(theorem)}: direction {direction!r} is not one of {', '.join(DIRECTIONS)}")
    level = None
    if quantity == "quantile":
        level = getattr(theorem, "level", None)
        if not isinstance(level, (int, float)) or isinstance(level, bool) or not 0 < level < 1:
            raise InputError(f"{_describe(theorem)}: a quantile theorem needs level in (0, 1), got {level!r}")
        level = float(level)
    if not isinstance(theorem.parameters, Mapping):
        raise InputError(f"{_describe(theorem)}: parameters must be a dict, got {type(theorem.parameters).__name__}")
    return quantity, direction, level


def _hypotheses_and_bound(theorem: Any) -> float:
    """Refuse a theorem whose hypotheses fail or whose bound is NaN (no verdict); return the bound."""
    try:
        problems = list(theorem.hypotheses())
    except Exception as exc:  # noqa: BLE001 -- a crashing hypotheses() is reported, named
        raise InputError(f"{_describe(theorem)}: hypotheses() raised {type(exc).__name__}: {exc}") from None
    if problems:
        raise InputError(f"{_describe(theorem)}: the theorem's hypotheses do not hold, so no verdict:\n  - "
                         + "\n  - ".join(str(p) for p in problems))
    if theorem.quantity == "always":
        return 1.0
    try:
        bound = float(theorem.bound())
    except Exception as exc:  # noqa: BLE001
        raise InputError(f"{_describe(theorem)}: bound() raised {type(exc).__name__}: {exc}; check the "
                         "parameters") from None
    if math.isnan(bound):
        raise InputError(f"{_describe(theorem)}: the bound is NaN at these parameters, so no verdict; the "
                         "formula is undefined there (e.g. a log of a non-positive number) -- change the parameters")
    return bound


def _exact(theorem: Any) -> float | None:
    fn = getattr(theorem, "exact", None)
    if fn is None:
        return None
    try:
        value = fn()
    except Exception as exc:  # noqa: BLE001
        raise InputError(f"{_describe(theorem)}: exact() raised {type(exc).__name__}: {exc}") from None
    return None if value is None else float(value)


@dataclass(frozen=True)
class _Batch:
    theorem: Any
    n: int
    entropy: int
    point: int
    batch: int


def _run_batch(task: _Batch) -> Any:
    """Worker entry point: one batch of runs with its own seed ``(point, batch)``; validated."""
    seq = np.random.SeedSequence(task.entropy, spawn_key=(task.point, task.batch))
    rng = np.random.Generator(np.random.PCG64(seq))
    th = task.theorem
    where = f"{_describe(th)}, batch {task.batch}"
    try:
        raw = th.sample(task.n, rng)
    except (InputError, MechanismError):
        raise
    except Exception as exc:  # noqa: BLE001
        raise MechanismError(f"{where}: sample() raised {type(exc).__name__}: {exc}") from None
    if th.quantity == "always":
        if not (isinstance(raw, tuple) and len(raw) == 2):
            raise MechanismError(f"{where}: an 'always' theorem's sample(n, rng) must return (ok, failures): a bool "
                                 f"array and a list of dicts; got {type(raw).__name__}")
        ok = np.asarray(raw[0])
        if ok.ndim != 1 or ok.dtype.kind != "b":
            raise MechanismError(f"{where}: ok must be a 1-d bool array, got shape {ok.shape} dtype {ok.dtype}")
        failures = list(raw[1])
        if len(failures) != int((~ok).sum()):
            raise MechanismError(f"{where}: {int((~ok).sum())} instances failed but {len(failures)} failure "
                                 "records were returned; return one dict per failing instance")
        for f in failures:
            if not isinstance(f, Mapping) or "size" not in f:
                raise MechanismError(f"{where}: every failure record must be a dict with a 'size', got {f!r}")
        return ok, [dict(f) for f in failures]
    values = np.asarray(raw)
    if values.shape != (task.n,):
        raise MechanismError(f"{where}: sample({task.n}, rng) returned shape {values.shape}; the protocol wants "
                             f"one value per run, shape ({task.n},)")
    if values.dtype.kind not in "biuf":
        raise MechanismError(f"{where}: sample() returned dtype {values.dtype}; return bools or floats")
    values = values.astype(np.float64)
    if th.quantity == "probability":
        bad = ~(np.isnan(values) | (values == 0) | (values == 1))
        if bad.any():
            raise MechanismError(f"{where}: a probability theorem's sample() must return bools (or 0/1 with NaN "
                                 f"for runs outside the conditioning event); got e.g. {values[bad][0]!r}")
    elif not np.isfinite(values).all():
        raise MechanismError(f"{where}: sample() returned {int((~np.isfinite(values)).sum())} non-finite "
                             "values; a mean or quantile needs finite values")
    return values




# --------------------------------------------------------------------------------------------------
# the checks
# --------------------------------------------------------------------------------------------------


def _collect(theorem: Any, runs: int, batch_size: int, entropy: int, point: int,
             pool: WorkerPool) -> list[Any]:
    if getattr(theorem, "deterministic", False):
        return pool.run([_Batch(theorem, runs, entropy, point, 0)], fn=_run_batch)
    tasks = [_Batch(theorem, m, entropy, point, b) for b, m in enumerate(batch_sizes(runs, batch_size))]
    return pool.run(tasks, fn=_run_batch)


def _check_one(theorem: Any, runs: int, alpha: float, batch_size: int, entropy: int, point: int,
               pool: WorkerPool, seed: int | None, keep_samples: bool) -> TheoremResult:
    t0 = time.perf_counter()
    quantity, direction, level = _protocol(theorem)
    bound = _hypotheses_and_bound(theorem)
    exact = _exact(theorem)
    parts = _collect(theorem, runs, batch_size, entropy, point, pool)
    size = getattr(theorem, "size", None)
    size = None if size is None else float(size)
    common = dict(name=str(theorem.name), statement=str(theorem.statement), quantity=quantity,
                  direction=direction, level=level, parameters=dict(theorem.parameters), bound=bound,
                  alpha=alpha, size=size, seed=seed)
    if quantity == "always":
        ok = np.concatenate([p[0] for p in parts])
        failures = [f for p in parts for f in p[1]]
        n, n_fail = len(ok), len(failures)
        if n == 0:
            raise MechanismError(f"{_describe(theorem)}: sample() checked no instance; return at least one")
        smallest = min(failures, key=lambda f: float(f["size"])) if failures else None
        kept = failures[:MAX_FAILURES_KEPT]
        if smallest is not None and smallest not in kept:
            kept.append(smallest)
        interval = binomial_interval(n - n_fail, n, alpha)
        return TheoremResult(
            **common, estimate=(n - n_fail) / n, interval=interval, runs=n,
            verdict="violated" if n_fail else "holds", slack=None, slack_interval=None, runs_needed=None,
            vacuous=False, failures=tuple(kept), failure_count=n_fail, counterexample=smallest,
            seconds=time.perf_counter() - t0, samples=ok if keep_samples else None)
    values = np.concatenate(parts)
    std = None
    if quantity == "probability":
        counted = values[~np.isnan(values)]
        n, k = len(counted), int(counted.sum())
        if n == 0:
            raise MechanismError(f"{_describe(theorem)}: the conditioning event never happened in {count_of(runs, 'run')} "
                                 "(every run returned NaN); no estimate -- change the inputs or run more")
        estimate = k / n
        lo, hi = binomial_interval(k, n, alpha)
    elif quantity == "mean":
        n = len(values)
        estimate = float(values.mean())
        std = float(values.std(ddof=1)) if n > 1 else None
        lo, hi = mean_interval(values, alpha)
    else:
        assert level is not None
        n = len(values)
        estimate = float(np.quantile(values, level))
        lo, hi = quantile_interval(values, level, alpha)
    verdict = verdict_of(direction, bound, lo, hi)
    sign = 1.0 if direction == "at_least" else -1.0
    if direction == "equal":
        slack = -abs(estimate - bound)
        slack_interval = 0.0 if lo <= bound <= hi else -min(abs(lo - bound), abs(hi - bound))
    else:
        slack = sign * (estimate - bound)
        slack_interval = sign * ((lo if direction == "at_least" else hi) - bound)
    needed = None
    if verdict == "inconclusive":
        if quantity == "quantile":  # the level-quantile vs the bound is P(X <= bound) vs level
            p = float(np.mean(values <= bound))
            needed = runs_needed(p, level, alpha)
        else:
            needed = runs_needed(estimate, bound, alpha, quantity, std)
    exact_in = None if exact is None else bool(lo <= exact <= hi)
    return TheoremResult(
        **common, estimate=estimate, interval=(lo, hi), runs=n, verdict=verdict, slack=slack,
        slack_interval=slack_interval, runs_needed=needed, vacuous=vacuous(quantity, direction, bound),
        exact=exact, exact_in_interval=exact_in, seconds=time.perf_counter() - t0,
        samples=values if keep_samples else None)


def _options(runs: Any, alpha: Any, batch_size: Any) -> tuple[int, float, int]:
    return (check_count("runs", runs),
            check_real("alpha", alpha, low=0.0, high=1.0, low_open=True, high_open=True),
            check_count("batch_size", batch_size))


def check_theorem(theorem: Any, runs: int = 10_000, seed: int | None = None, alpha: float = 0.05,
                  batch_size: int = DEFAULT_BATCH_SIZE, workers: int | None = None,
                  keep_samples: bool = False) -> TheoremResult:
    """Check one theorem object (see the module docstring) by ``runs`` Monte Carlo runs.

    Runs are drawn in batches of ``batch_size``, batch ``b`` with the generator of
    ``SeedSequence(seed, spawn_key=(0, b))``, on ``workers`` processes (default: all cores; a theorem that
    cannot be pickled runs in this process) -- the result depends on ``seed`` only.  Raises
    :class:`~dpverify.errors.InputError` when the hypotheses do not hold or the bound is NaN (no verdict),
    :class:`~dpverify.errors.MechanismError` when ``sample`` breaks the protocol.

    Returns
    -------
    TheoremResult
        The estimate, its two-sided ``1 - alpha`` interval, the bound and the :class:`~dpverify.results.Verdict`
        (``holds``, ``violated`` or ``inconclusive``), the slack and the runs a verdict would need.

    Examples
    --------
    >>> import numpy as np
    >>> class Coin:                      # P[heads] >= 0.4 for a fair coin
    ...     name, statement, quantity, direction, parameters = "coin", "P[heads] >= 0.4", "probability", "at_least", {}
    ...     def hypotheses(self): return []
    ...     def bound(self): return 0.4
    ...     def sample(self, n, rng): return rng.random(n) < 0.5
    >>> check_theorem(Coin(), runs=20_000, seed=0, workers=1).verdict.value
    'holds'
    """
    runs, alpha, batch_size = _options(runs, alpha, batch_size)
    entropy = root_entropy(seed)
    with WorkerPool(resolve_workers(workers)) as pool:
        return _check_one(theorem, runs, alpha, batch_size, entropy, 0, pool, seed, keep_samples)


def check_sweep(factory: Callable[..., Any], params: Mapping[str, Any], param: str, values: Sequence[Any],
                runs: int = 10_000, seed: int | None = None, alpha: float = 0.05,
                batch_size: int = DEFAULT_BATCH_SIZE, workers: int | None = None) -> SweepResult:
    """Check ``factory(**params, param=value)`` for every value (point ``i`` seeded ``(i, batch)``).

    Each point is tested at ``alpha / len(values)`` (Bonferroni), so the sweep's verdict as a whole errs with
    probability at most ``alpha``.  The verdict is ``violated`` if any point is, ``holds`` if all are.

    Returns
    -------
    SweepResult
        One :class:`TheoremResult` per value, the sweep's verdict and the first counterexample.

    Raises
    ------
    InputError
        Bad arguments, or a point whose hypotheses fail (no verdict).
    """
    runs, alpha, batch_size = _options(runs, alpha, batch_size)
    if not isinstance(param, str) or not param:
        raise InputError(f"param must be the name of a parameter, got {param!r}")
    values = tuple(values)
    if not values:
        raise InputError(f"the sweep over {param!r} has no values; give at least one")
    if param in params:
        raise InputError(f"{param!r} is both a fixed parameter and the swept one; remove it from params")
    entropy = root_entropy(seed)
    t0 = time.perf_counter()
    points: list[TheoremResult] = []
    with WorkerPool(resolve_workers(workers)) as pool:
        for i, v in enumerate(values):
            try:
                theorem = factory(**params, **{param: v})
            except (InputError, MechanismError):
                raise
            except Exception as exc:  # noqa: BLE001 -- bad parameters, named
                name = getattr(factory, "__qualname__", repr(factory))
                raise InputError(f"{name}(**{dict(params)!r}, {param}={v!r}) raised {type(exc).__name__}: {exc}; "
                                 "fix the parameters") from None
            points.append(_check_one(theorem, runs, alpha / len(values), batch_size, entropy, i, pool, seed,
                                     keep_samples=False))
    verdicts = [p.verdict for p in points]
    verdict = ("violated" if "violated" in verdicts else "holds" if all(v == "holds" for v in verdicts)
               else "inconclusive")
    counterexample = None
    if points[0].quantity == "always":
        fails = [p.counterexample for p in points if p.counterexample is not None]
        counterexample = min(fails, key=lambda f: float(f["size"])) if fails else None
    else:
        bad = [(i, p) for i, p in enumerate(points) if p.violated]
        if bad:
            i, p = min(bad, key=lambda ip: (math.inf if ip[1].size is None else ip[1].size, ip[0]))
            counterexample = {param: plain_value(values[i]), "size": p.size, "estimate": p.estimate,
                              "interval": list(p.interval), "bound": p.bound, "parameters": p.parameters}
    return SweepResult(name=points[0].name, param=param, values=values, points=tuple(points), alpha=alpha,
                       verdict=verdict, counterexample=counterexample, seconds=time.perf_counter() - t0)


@dataclass(frozen=True)
class VerdictRates:
    """How often each verdict came out of ``repetitions`` independent checks of one theorem object
    (seeds ``seed, seed + 1, ...``), with a two-sided 95 % Clopper-Pearson interval per rate."""

    counts: dict[str, int]
    repetitions: int
    runs: int
    alpha: float

    def rate(self, verdict: str) -> float:
        return self.counts[verdict] / self.repetitions

    def interval(self, verdict: str) -> tuple[float, float]:
        return binomial_interval(self.counts[verdict], self.repetitions, 0.05)


def verdict_rates(theorem: Any, repetitions: int, runs: int, seed: int = 0, alpha: float = 0.05,
                  batch_size: int = DEFAULT_BATCH_SIZE) -> VerdictRates:
    """Measure the checker on a theorem whose answer is known: run :func:`check_theorem` ``repetitions`` times
    (one process, seeds ``seed + i``) and count the verdicts.  At a bound equal to the true value each wrong
    verdict should come out at most ``alpha / 2`` of the time (false alarms); away from it, the rate of the
    right verdict is the checker's power at ``runs`` runs."""
    repetitions = check_count("repetitions", repetitions)
    counts = dict.fromkeys(VERDICTS, 0)
    for i in range(repetitions):
        counts[check_theorem(theorem, runs=runs, seed=seed + i, alpha=alpha, batch_size=batch_size,
                             workers=1).verdict] += 1
    return VerdictRates(counts=counts, repetitions=repetitions, runs=runs, alpha=alpha)
