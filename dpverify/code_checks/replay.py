"""Frozen-noise replay: run a mechanism on neighbours with the same noise and compare what the noise protects.

A mechanism written with an explicit noise source (a method ``release(x, n, noise)`` that takes all its
randomness from ``noise.add`` / ``noise.select``; the protocol is described in ``algorithms/noise.py``) declares
at every randomised step the exact quantity the noise protects, the noise scale and the sensitivity that scale
is calibrated for.  :func:`frozen_noise_replay` runs it

* on ``x0`` with a *recording* source: the real draws, every step's value, declared sensitivity and output kept;
* on ``x1`` with a *replaying* source: no new draws -- each step returns the output recorded on ``x0``.  A later
  step that depends on earlier noisy outputs (an adaptive mechanism such as PAMST or DPM) therefore continues
  from the same history on both inputs, which is the coupling the privacy proofs use, and each step compares
  the same query on the two inputs.

Per step and run it measures ``‖value(x1) − value(x0)‖`` in the step's norm and compares the largest change with
the declared sensitivity.  For a selection step (``noise.select``: exponential mechanism, report-noisy-max,
permute-and-flip) the law depends on the utilities only through their differences, so the change compared is
``min_c ‖u(x1) − u(x0) − c‖∞ = (max − min of u(x1) − u(x0)) / 2`` (candidates unavailable on both sides are
ignored; a candidate available on one side only is an infinite change); the raw ℓ∞ change is reported too.

A pair **violates** when some step's change exceeds its declared sensitivity, when a step's declared
sensitivity or noise scale differs between ``x0`` and ``x1`` (a calibration read off the private data), or when
the two runs make different steps (the control flow depends on the data beyond the noisy outputs).  Both
directions of each pair are replayed.  Without a violation the result says that *on these pairs and runs*
every step stayed within its declared sensitivity -- not that the mechanism is private: a step whose noise is
too small for its declared sensitivity (a scale bug) is outside what a replay checks.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify._validation import counted
from dpverify.results import Measured, ViolationVerdict
from dpverify.errors import InputError, MechanismError
from dpverify.jsonsafe import json_clean, json_float
from dpverify.neighbours import Pair, as_pairs
from dpverify.code_checks.sensitivity import differences, norm_of

__all__ = ["StepRecord", "StepComparison", "PairReplay", "ReplayResult", "frozen_noise_replay"]

_NORMS = ("l1", "l2", "linf")


@dataclass(frozen=True, eq=False)
class StepRecord:
    """One randomised step of one run of a mechanism (all ``n`` runs at once)."""

    index: int
    step: str
    op: str  # "add" or "select"
    value: np.ndarray  # (n, ...) the protected quantity of every run
    output: np.ndarray
    sensitivity: float
    norm: str
    scale: float | None
    kind: str


def _as_runs(value: Any, shape: tuple[int, ...]) -> np.ndarray:
    v = np.asarray(value, dtype=np.float64)
    if v.shape == shape:
        return v
    try:
        return np.broadcast_to(v, shape).copy()
    except ValueError:
        raise MechanismError(f"a noise step's value of shape {v.shape} does not broadcast to its output of shape "
                             f"{shape}") from None


def _utility_runs(utilities: Any, runs: int) -> np.ndarray:
    """The ``(runs, m)`` utility table of a selection step (a shared ``(m,)`` row repeated per run)."""
    u = np.asarray(utilities, dtype=np.float64)
    return u if (u.ndim >= 2 and u.shape[0] == runs) else np.broadcast_to(u, (runs,) + u.shape).copy()


def _checked(step: Any, sensitivity: Any, norm: Any) -> float:
    if not isinstance(step, str) or not step:
        raise MechanismError(f"a noise step needs a non-empty name, got {step!r}")
    if norm not in _NORMS:
        raise MechanismError(f"step {step!r}: norm must be one of {_NORMS}, got {norm!r}")
    try:
        s = float(sensitivity)
    except (TypeError, ValueError):
        raise MechanismError(f"step {step!r}: declared sensitivity must be a number, got {sensitivity!r}") from None
    if not s > 0:
        raise MechanismError(f"step {step!r}: declared sensitivity must be > 0, got {sensitivity!r}")
    return s


def _scale(scale: Any) -> float | None:
    return None if scale is None else float(scale)


class _Recording:
    """Draws the real noise and records every step."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.steps: list[StepRecord] = []

    def add(self, step: str, value: Any, draw: Callable[[np.random.Generator], Any], *, sensitivity: float,
            norm: str = "l1", scale: float | None = None, kind: str = "other") -> np.ndarray:
        s = _checked(step, sensitivity, norm)
        out = value + draw(self.rng)
        arr = np.asarray(out)
        self.steps.append(StepRecord(len(self.steps), step, "add", _as_runs(value, arr.shape), arr.copy(), s, norm,
                                     _scale(scale), kind))
        return out

    def select(self, step: str, utilities: Any, draw: Callable[[np.random.Generator], Any], *,
               sensitivity: float, norm: str = "linf", scale: float | None = None) -> np.ndarray:
        s = _checked(step, sensitivity, norm)
        out = np.asarray(draw(self.rng))
        u = _utility_runs(utilities, out.shape[0] if out.ndim else 1)
        self.steps.append(StepRecord(len(self.steps), step, "select", u, out.copy(), s, norm, _scale(scale),
                                     "selection"))
        return out


class _Diverged(Exception):
    pass


class _Replaying:
    """Returns the outputs recorded on ``x0``, step by step, and records ``x1``'s values."""

    def __init__(self, recorded: list[StepRecord]) -> None:
        self.recorded = recorded
        self.steps: list[StepRecord] = []

    def _next(self, step: str, op: str) -> StepRecord:
        i = len(self.steps)
        if i >= len(self.recorded):
            raise _Diverged(f"the run on x1 makes an extra step {step!r} (#{i}) that the run on x0 did not make")
        rec = self.recorded[i]
        if rec.step != step or rec.op != op:
            raise _Diverged(f"step #{i} is {rec.op} {rec.step!r} on x0 but {op} {step!r} on x1")
        return rec

    def add(self, step: str, value: Any, draw: Callable[[np.random.Generator], Any], *, sensitivity: float,
            norm: str = "l1", scale: float | None = None, kind: str = "other") -> np.ndarray:
        s = _checked(step, sensitivity, norm)
        rec = self._next(step, "add")
        self.steps.append(StepRecord(rec.index, step, "add", _as_runs(value, rec.output.shape), rec.output, s, norm,
                                     _scale(scale), kind))
        return rec.output.copy()

    def select(self, step: str, utilities: Any, draw: Callable[[np.random.Generator], Any], *,
               sensitivity: float, norm: str = "linf", scale: float | None = None) -> np.ndarray:
        s = _checked(step, sensitivity, norm)
        rec = self._next(step, "select")
        u = _utility_runs(utilities, rec.value.shape[0])
        self.steps.append(StepRecord(rec.index, step, "select", u, rec.output, s, norm, _scale(scale), "selection"))
        return rec.output.copy()


@dataclass(frozen=True)
class StepComparison:
    """One step compared across the two inputs: the largest change over the runs and the declarations."""

    index: int
    step: str
    op: str
    kind: str
    norm: str
    declared: float
    declared_x1: float
    scale: float | None
    scale_x1: float | None
    change: float
    raw_change: float
    run: int
    reason: str | None

    @property
    def violation(self) -> bool:
        return self.reason is not None

    @property
    def ratio(self) -> float:
        return self.change / self.declared if self.declared > 0 else math.inf

    def to_dict(self) -> dict[str, Any]:
        return json_clean({
            "index": self.index, "step": self.step, "op": self.op, "kind": self.kind, "norm": self.norm,
            "declared": json_float(self.declared), "declared_x1": json_float(self.declared_x1),
            "scale": json_float(self.scale), "scale_x1": json_float(self.scale_x1),
            "change": json_float(self.change), "raw_change": json_float(self.raw_change), "run": self.run,
            "violation": self.violation, "reason": self.reason,
        })


def _per_run_change(v0: np.ndarray, v1: np.ndarray, norm: str, shift_invariant: bool) -> tuple[np.ndarray, np.ndarray]:
    """(compared change, raw change) per run; the first axis indexes runs."""
    n = v0.shape[0]
    a = v0.reshape(n, -1)
    b = v1.reshape(n, -1)
    if a.shape[1] == 0:
        zero = np.zeros(n)
        return zero, zero
    d = differences(a, b)
    raw = norm_of(d, norm, axis=1)
    if not shift_invariant or norm != "linf":
        return raw, raw
    both_off = np.isinf(a) & np.isinf(b) & (a == b)  # unavailable on both sides (e.g. -inf utilities)
    dd = np.where(both_off, np.nan, d)
    with np.errstate(invalid="ignore"):
        hi = np.nanmax(np.where(np.isnan(dd), -np.inf, dd), axis=1)
        lo = np.nanmin(np.where(np.isnan(dd), np.inf, dd), axis=1)
    osc = np.where(np.isinf(hi) | np.isinf(lo), np.where(np.all(both_off, axis=1), 0.0, math.inf), (hi - lo) / 2.0)
    osc = np.where(np.isnan(osc), math.inf, osc)
    return osc, raw


def _close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return a == b or math.isclose(a, b, rel_tol=1e-12, abs_tol=0.0)


def _compare(r0: StepRecord, r1: StepRecord, rtol: float) -> StepComparison:
    if r0.value.shape != r1.value.shape:
        return StepComparison(r0.index, r0.step, r0.op, r0.kind, r0.norm, r0.sensitivity, r1.sensitivity, r0.scale,
                              r1.scale, math.inf, math.inf, 0,
                              f"the protected quantity has shape {r0.value.shape[1:]} on x0 but {r1.value.shape[1:]} "
                              "on x1")
    comp, raw = _per_run_change(r0.value, r1.value, r0.norm, r0.op == "select")
    run = int(np.argmax(comp)) if comp.size else 0
    worst = float(comp[run]) if comp.size else 0.0
    reason = None
    if not _close(r0.sensitivity, r1.sensitivity) or r0.norm != r1.norm:
        reason = (f"declared sensitivity depends on the data: {r0.sensitivity:.6g} ({r0.norm}) on x0, "
                  f"{r1.sensitivity:.6g} ({r1.norm}) on x1")
    elif not _close(r0.scale, r1.scale):
        reason = f"noise scale depends on the data: {r0.scale!r} on x0, {r1.scale!r} on x1"
    elif worst > r0.sensitivity * (1.0 + rtol):
        what = "utility change (up to a common shift)" if r0.op == "select" and r0.norm == "linf" else "change"
        reason = f"{what} {worst:.6g} exceeds the declared sensitivity {r0.sensitivity:.6g} (run {run})"
    return StepComparison(r0.index, r0.step, r0.op, r0.kind, r0.norm, r0.sensitivity, r1.sensitivity, r0.scale,
                          r1.scale, worst, float(raw[run]) if raw.size else 0.0, run, reason)


@dataclass(frozen=True, eq=False)
class PairReplay:
    """One direction of one pair: every step compared, or why the runs diverged."""

    label: str
    x0: Any
    x1: Any
    steps: tuple[StepComparison, ...]
    diverged: str | None

    @property
    def violation(self) -> bool:
        return self.diverged is not None or any(c.violation for c in self.steps)

    @property
    def worst(self) -> StepComparison | None:
        """The violating step (first), else the step closest to its declared sensitivity."""
        bad = [c for c in self.steps if c.violation]
        if bad:
            return bad[0]
        return max(self.steps, key=lambda c: c.ratio, default=None)

    def to_dict(self) -> dict[str, Any]:
        return json_clean({"label": self.label, "violation": self.violation, "diverged": self.diverged,
                           "steps": [c.to_dict() for c in self.steps]})


@dataclass(frozen=True, eq=False)
class ReplayResult(ViolationVerdict):
    """Every replayed pair; ``violation`` if any pair violates, ``witness`` the first violating pair (or the pair
    whose step came closest to its declared sensitivity)."""

    mechanism: str
    pairs: tuple[PairReplay, ...]
    samples: int
    seed: int


    def _measured(self) -> Measured:
        return Measured("max_ratio", self.max_ratio)

    @property
    def violation(self) -> bool:
        return any(p.violation for p in self.pairs)

    @property
    def witness(self) -> PairReplay:
        bad = [p for p in self.pairs if p.violation]
        if bad:
            return bad[0]
        return max(self.pairs, key=lambda p: p.worst.ratio if p.worst is not None else -math.inf)

    @property
    def max_ratio(self) -> float:
        """Largest change / declared sensitivity over every step of every pair."""
        return max((c.ratio for p in self.pairs for c in p.steps), default=0.0)

    def summary(self) -> str:
        w = self.witness
        if w.diverged is not None:
            detail = w.diverged
        elif w.worst is None:
            detail = "the mechanism made no randomised step"
        else:
            c = w.worst
            detail = c.reason or (f"largest step: {c.step!r} changed by {c.change:.6g} of declared "
                                  f"{c.declared:.6g} ({c.norm})")
        verdict = "VIOLATION" if self.violation else "every step within its declared sensitivity"
        return (f"{self.mechanism}: {verdict} on {counted(len(self.pairs), 'replayed pair direction')} x {counted(self.samples, 'run')}; "
                f"pair {w.label!r}: {detail}")

    def __str__(self) -> str:
        return self.summary()

    def to_dict(self) -> dict[str, Any]:
        return json_clean({"mechanism": self.mechanism, "violation": self.violation, "samples": self.samples,
                           "seed": self.seed, "max_ratio": json_float(self.max_ratio),
                           "witness": self.witness.to_dict(), "pairs": [p.to_dict() for p in self.pairs]})


def _release(mechanism: Any) -> Callable[..., Any]:
    release = getattr(mechanism, "release", None)
    if not callable(release):
        raise InputError(
            f"frozen-noise replay needs a mechanism written with an explicit noise source: a method "
            f"release(x, n, noise) that draws through noise.add / noise.select (see algorithms/noise.py); "
            f"{type(mechanism).__name__} has none")
    return release


def _replay_one(release: Callable[..., Any], pair: Pair, samples: int, seq: np.random.SeedSequence,
                rtol: float) -> PairReplay:
    rec = _Recording(np.random.default_rng(seq))
    try:
        release(pair.x0, samples, rec)
    except Exception as exc:  # noqa: BLE001 -- named and re-raised as a dpverify error
        raise MechanismError(f"the mechanism raised {type(exc).__name__}: {exc} on x0 of pair {pair.label!r}") from exc
    rep = _Replaying(rec.steps)
    diverged = None
    try:
        release(pair.x1, samples, rep)
    except _Diverged as exc:
        diverged = str(exc)
    except Exception as exc:  # noqa: BLE001
        raise MechanismError(f"the mechanism raised {type(exc).__name__}: {exc} on x1 of pair {pair.label!r} "
                             "(replaying x0's noisy outputs)") from exc
    if diverged is None and len(rep.steps) < len(rec.steps):
        diverged = (f"the run on x1 stops after {len(rep.steps)} steps, the run on x0 made {len(rec.steps)} "
                    f"(next: {rec.steps[len(rep.steps)].step!r})")
    steps = tuple(_compare(a, b, rtol) for a, b in zip(rec.steps, rep.steps))
    return PairReplay(pair.label, pair.x0, pair.x1, steps, diverged)


def frozen_noise_replay(mechanism: Any, pairs: Iterable[Any], *, samples: int = 32, seed: int = 0,
                        both_directions: bool = True, rtol: float = 1e-9) -> ReplayResult:
    """Replay ``mechanism`` on every pair with frozen noise and compare each step with its declared sensitivity.

    ``pairs``: :class:`~dpverify.neighbours.Pair` objects or ``(x0, x1)`` tuples (e.g. from a relation's
    ``pairs(x, random=k, seed=s)``); ``samples`` runs per pair (vectorised: one ``release`` call per input);
    ``seed`` seeds the noise of pair ``i`` with ``SeedSequence(seed, spawn_key=(i,))`` so a pair's replay does
    not depend on the others; ``both_directions`` also replays ``(x1, x0)``.

    Returns
    -------
    ReplayResult
        Per pair and step the largest change against the declared sensitivity; ``violation`` when a step exceeds
        it, when a declared sensitivity or scale differs between the inputs, or when the runs take other steps.

    Raises
    ------
    InputError
        Bad arguments, or a mechanism without ``release(x, n, noise)``.
    MechanismError
        The mechanism's ``release`` raises or declares a step wrongly.
    """
    release = _release(mechanism)
    items = as_pairs(pairs)
    if not isinstance(samples, numbers.Integral) or isinstance(samples, bool) or samples < 1:
        raise InputError(f"samples must be an integer >= 1 (runs per pair), got {samples!r}")
    if not isinstance(seed, numbers.Integral) or isinstance(seed, bool) or seed < 0:
        raise InputError(f"seed must be an integer >= 0, got {seed!r}")
    if not (isinstance(rtol, numbers.Real) and 0 <= rtol < 1):
        raise InputError(f"rtol must be a number in [0, 1), got {rtol!r}")
    out: list[PairReplay] = []
    for i, p in enumerate(items):
        seq = np.random.SeedSequence(int(seed), spawn_key=(i,))
        out.append(_replay_one(release, p, int(samples), seq, rtol))
        if both_directions:
            out.append(_replay_one(release, p.swapped(), int(samples), seq, rtol))
    return ReplayResult(type(mechanism).__name__, tuple(out), int(samples), int(seed))
