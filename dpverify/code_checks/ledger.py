"""Budget-ledger check: do the privacy charges a composed algorithm records add up to its claim?

A composed algorithm (DPM, seed 004 Algorithm 1) spends its budget over many mechanism calls -- a Laplace count
per tree level, an exponential mechanism per split level, a percentile, an average per leaf.  An algorithm that
keeps a ledger exposes ``privacy_ledger(x, rng) -> Sequence[Charge]``: the charges of *one* run on ``x``,
recorded without enforcement (the protocol of ``algorithms/ledger.py``; duck-typed here -- any objects with the
attributes ``kind``, ``epsilon``, ``delta``, ``level``, ``subset`` and ``parallel`` will do, and ``dpverify``
never imports ``algorithms``).

:func:`check_ledger` calls it on ``runs`` independent generators (the charges may depend on the run: a
recursion can stop early), validates every charge and recomposes each run itself by **basic composition**
(seed 004 Sec. 2.3; Dwork & Roth, Thm. 3.16): ``Σε`` and ``Σδ`` over the charges, a charge with
``parallel = k`` -- the same call on ``k`` disjoint subsets -- counted once (parallel composition).  The
algorithm's own totals are never trusted.

A pass means *the recorded charges compose to at most the claim*: the declared accounting adds up.  It does
not check that each call really is as private as it declares (a Laplace count with the wrong scale, a
sensitivity bug), nor that the charges cover every access to the data, nor that the subsets of a parallel
charge really are disjoint -- the statistical, exact and replay checks are for the calls themselves.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from dpverify._validation import check_count, check_real, plain_input, root_entropy, show_value
from dpverify.errors import InputError, MechanismError
from dpverify.statistical.result import LedgerResult

__all__ = ["CHARGE_ATTRIBUTES", "check_ledger"]

#: Attributes every recorded charge must have (those of ``algorithms.ledger.Charge``).
CHARGE_ATTRIBUTES: tuple[str, ...] = ("kind", "epsilon", "delta", "level", "subset", "parallel")

_PROTOCOL = ("a method privacy_ledger(x, rng) returning the charges of one run on x, recorded without "
             "enforcement: objects with attributes kind (str), epsilon, delta (finite, >= 0), level (int or None), "
             "subset and parallel (int >= 1, the number of disjoint subsets the call ran on), e.g. "
             "algorithms.ledger.Charge")


def _name(m: Any) -> str:
    return getattr(m, "__qualname__", None) or type(m).__name__


def _show_input(x: Any, limit: int = 200) -> str:
    try:
        text = show_value(plain_input(x))
    except Exception:  # noqa: BLE001 -- a ragged or odd input: show its repr
        text = repr(x)
    return text if len(text) <= limit else text[:limit] + "..."


def _charge(c: Any, run: int, index: int) -> dict[str, Any]:
    """One recorded charge as a plain dict, or an :class:`InputError` naming it and what is wrong."""
    shown = repr(c)
    shown = shown if len(shown) <= 160 else shown[:160] + "..."
    where = f"run {run}, charge #{index} ({shown})"
    missing = [a for a in CHARGE_ATTRIBUTES if not hasattr(c, a)]
    if missing:
        raise InputError(f"{where}: no attribute {', '.join(repr(a) for a in missing)}; a charge needs "
                         f"{', '.join(CHARGE_ATTRIBUTES)} (e.g. algorithms.ledger.Charge)")
    kind = c.kind
    if not isinstance(kind, str) or not kind.strip():
        raise InputError(f"{where}: kind must be a non-empty string naming the mechanism (e.g. 'laplace-count'), "
                         f"got {kind!r}")
    out: dict[str, Any] = {"kind": kind}
    for attr in ("epsilon", "delta"):
        v = getattr(c, attr)
        if not isinstance(v, numbers.Real) or isinstance(v, bool):
            raise InputError(f"{where}: {attr} must be a number, got {v!r}")
        if not math.isfinite(float(v)) or float(v) < 0:
            raise InputError(f"{where}: {attr} must be finite and >= 0, got {v!r}; a charge records the "
                             f"{attr} one call spends")
        out[attr] = float(v)
    level = c.level
    if level is not None and (not isinstance(level, numbers.Integral) or isinstance(level, bool)):
        raise InputError(f"{where}: level must be an integer (the recursion level) or None, got {level!r}")
    out["level"] = None if level is None else int(level)
    out["subset"] = c.subset if isinstance(c.subset, str) else repr(c.subset)
    par = c.parallel
    if not isinstance(par, numbers.Integral) or isinstance(par, bool) or par < 1:
        raise InputError(f"{where}: parallel must be an integer >= 1 (on how many disjoint subsets the call ran "
                         f"with this budget; 1 for a single call), got {par!r}")
    out["parallel"] = int(par)
    return out


def _one_run(ledger: Any, x: Any, rng: np.random.Generator, run: int) -> list[dict[str, Any]]:
    """The validated charges of one run."""
    try:
        recorded = ledger(x, rng)
        if isinstance(recorded, Iterable) and not isinstance(recorded, (str, bytes, Mapping)):
            recorded = list(recorded)  # a generator runs the mechanism's code here
    except Exception as exc:  # noqa: BLE001 -- named and re-raised as a dpverify error
        raise MechanismError(f"privacy_ledger raised {type(exc).__name__}: {exc} in run {run} on the input "
                             f"{_show_input(x)}") from exc
    if not isinstance(recorded, list):
        raise InputError(f"privacy_ledger must return a sequence of charges (the calls of one run), got "
                         f"{type(recorded).__name__} in run {run}; expected {_PROTOCOL}")
    return [_charge(c, run, j) for j, c in enumerate(recorded)]


def _by_kind(charges: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for kind in dict.fromkeys(c["kind"] for c in charges):
        mine = [c for c in charges if c["kind"] == kind]
        out[kind] = {"epsilon": math.fsum(c["epsilon"] for c in mine),
                     "delta": math.fsum(c["delta"] for c in mine), "charges": len(mine)}
    return out


def _by_level(charges: list[dict[str, Any]]) -> dict[int | None, float]:
    levels = sorted({c["level"] for c in charges}, key=lambda lv: (lv is not None, lv or 0))
    return {lv: math.fsum(c["epsilon"] for c in charges if c["level"] == lv) for lv in levels}


def check_ledger(mechanism: Any, x: Any, epsilon: float, delta: float = 0.0, *, runs: int = 20,
                 seed: int | np.random.SeedSequence | None = None, rtol: float = 1e-9) -> LedgerResult:
    """Recompose the privacy charges ``mechanism`` records on ``x`` and compare them with the claim ``(ε, δ)``.

    Parameters
    ----------
    mechanism : an object with ``privacy_ledger(x, rng) -> Sequence[charge]`` (see the module docstring).
    x : the input of the runs.
    epsilon, delta : the claimed total budget (``ε`` finite > 0, ``δ`` in ``[0, 1)``).
    runs : independent runs; run ``i`` gets ``default_rng(SeedSequence(seed).spawn(runs)[i])``.
    seed : root seed (``None``: fresh entropy, reported as ``result.seed``).  Same seed, same result.
    rtol : relative tolerance on the claim (budgets split into fractions do not add up exactly in floating
        point): a total up to ``claim·(1 + rtol)`` passes.

    Returns
    -------
    LedgerResult
        The composed totals of the worst run against the claim, per kind and per level, and ``verdict``
        (``violation`` when a run's charges compose to more than the claim).

    Raises
    ------
    InputError
        A bad claim or option, a mechanism without ``privacy_ledger``, or a malformed charge (missing attribute,
        non-finite or negative ε/δ, empty kind, ``parallel`` not an integer >= 1; the message names the run and the
        charge).
    MechanismError
        ``privacy_ledger`` raises (the message names the run and the input).
    """
    epsilon = check_real("epsilon", epsilon, low=0.0, high=math.inf, low_open=True, high_open=True)
    delta = check_real("delta", delta, low=0.0, high=1.0, low_open=False, high_open=True)
    runs = check_count("runs", runs)
    rtol = check_real("rtol", rtol, low=0.0, high=1.0, low_open=False, high_open=True)
    entropy = root_entropy(seed)
    ledger = getattr(mechanism, "privacy_ledger", None)
    if not callable(ledger):
        raise InputError(f"check_ledger needs a mechanism that records its privacy budget: {_PROTOCOL}; "
                         f"{_name(mechanism)} has no privacy_ledger")

    per_run: list[list[dict[str, Any]]] = []
    totals: list[tuple[float, float]] = []
    for i, child in enumerate(np.random.SeedSequence(entropy).spawn(runs)):
        charges = _one_run(ledger, x, np.random.default_rng(child), i)
        per_run.append(charges)
        totals.append((math.fsum(c["epsilon"] for c in charges), math.fsum(c["delta"] for c in charges)))

    def exceeds(t: tuple[float, float]) -> bool:
        return t[0] > epsilon * (1.0 + rtol) or t[1] > delta * (1.0 + rtol)

    # a violating run first, then the most ε, then the most δ; the earliest run among equals
    worst = max(range(runs), key=lambda i: (exceeds(totals[i]), totals[i][0], totals[i][1], -i))
    charges = per_run[worst]
    return LedgerResult(
        mechanism=_name(mechanism), claimed_epsilon=epsilon, claimed_delta=delta,
        total_epsilon=totals[worst][0], total_delta=totals[worst][1],
        min_total_epsilon=min(e for e, _ in totals), worst_run=worst, run_totals=tuple(totals),
        charges=tuple(charges), by_kind=_by_kind(charges), by_level=_by_level(charges), runs=runs,
        seed=entropy, rtol=rtol,
    )
