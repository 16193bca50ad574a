"""The oracle bound: the best ε lower bound any event-based audit could certify at a given budget.

An event-based black-box audit certifies ``ln((CP_low(k_num; n) − δ) / CP_high(k_den; n))`` for an event ``S``
counted on ``n`` fresh outputs per input (:mod:`dpverify.stats`).  For a pair ``(x, x')`` and a direction the
best event is a level set of the privacy loss ``L(o) = ln f_x(o) − ln f_x'(o)`` (Neyman--Pearson):
``S_t = {L ≥ t}``.  The *oracle bound* is

    max over pairs, directions and thresholds t of ln((CP_low(n·p_num(t); n, α/2) − δ) / CP_high(n·p_den(t); n, α/2))

with the *expected* counts ``n·p`` (``scipy.stats.beta.ppf`` takes non-integer counts): what an auditor that
knew the optimal event in advance -- no search sample, no multiple testing, level α/2 on each side -- would
certify with typical counts.  It is the physical limit of event-based auditing at that budget; dpverify's bound
divided by it is the auditor's tightness (``docs/auditor.md``).  dpverify pays for its search and for testing
several finalists (Bonferroni), so a ratio close to but below 1 is the expected best.

Laws, read from the mechanism:

* ``pmf(x)`` -- an exact pmf over the integer codes the mechanism returns (randomized response, exponential
  mechanism, truncated geometric, report-noisy-max, ...): the level sets are computed exactly;
* ``log_density(x, out)`` -- the log density of each output row under ``x`` w.r.t. one dominating measure (−inf
  where impossible): Monte Carlo with importance weights.  Draw ``o`` from the mechanism on ``x_num``;
  ``p_num(t) = E_num[1{L ≥ t}]`` and ``p_den(t) = E_num[e^{−L} 1{L ≥ t}]``.  The second identity holds because
  ``{L ≥ t}`` for finite ``t`` lies inside the support of ``x_num``'s law (mass of ``x_den`` outside it has
  ``L = −inf``); outputs impossible under ``x_den`` (``L = +inf``) weigh 0.
* a **single additive noise step** written against :class:`algorithms.noise.NoiseSource` (``release(x, n,
  noise)`` with one ``noise.add`` of ``kind`` ``"laplace"``, ``"gaussian"`` or ``"geometric"`` and nothing else,
  the output being that step's result): the law ``value + noise`` is read from the step (value, scale, kind), so
  Laplace, Gaussian and geometric mechanisms and their mis-calibrated twins need no hand-written density.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from dpverify.errors import InputError
from dpverify.jsonsafe import json_float
from dpverify.neighbours import as_pairs

__all__ = ["OracleBound", "oracle_bound", "law_of", "level_set_bound"]

GRID = 4000


@dataclass(frozen=True)
class OracleBound:
    """The oracle bound and the level set that attains it (``threshold`` on the privacy loss ``L``)."""

    bound: float
    pair_index: int
    direction: int
    threshold: float
    p_num: float
    p_den: float
    samples: int
    alpha: float
    delta: float
    method: str                 # "exact" | "monte-carlo"
    oracle_samples: int | None

    def to_dict(self) -> dict[str, Any]:
        return {"bound": json_float(self.bound), "pair_index": self.pair_index, "direction": self.direction,
                "threshold": json_float(self.threshold), "p_num": self.p_num, "p_den": self.p_den,
                "samples": self.samples, "alpha": self.alpha, "delta": self.delta, "method": self.method,
                "oracle_samples": self.oracle_samples}


def _cp_low(k: NDArray, n: int, level: float) -> NDArray:
    with np.errstate(invalid="ignore", divide="ignore"):
        out = stats.beta.ppf(level, k, n - k + 1.0)
    return np.where(k <= 0, 0.0, np.nan_to_num(out))


def _cp_high(k: NDArray, n: int, level: float) -> NDArray:
    with np.errstate(invalid="ignore", divide="ignore"):
        out = stats.beta.ppf(1.0 - level, k + 1.0, n - k)
    return np.where(k >= n, 1.0, np.nan_to_num(out, nan=1.0))


def level_set_bound(p_num: NDArray, p_den: NDArray, samples: int, alpha: float, delta: float
                    ) -> tuple[float, int]:
    """``max_t`` of the certified bound at the expected counts, over level sets with probabilities ``p_num[t]``,
    ``p_den[t]``; returns the bound and the index of the best level set."""
    k_num = np.clip(np.asarray(p_num) * samples, 0.0, samples)
    k_den = np.clip(np.asarray(p_den) * samples, 0.0, samples)
    lo = _cp_low(k_num, samples, alpha / 2) - delta
    hi = _cp_high(k_den, samples, alpha / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        b = np.where(lo > 0, np.log(np.where(lo > 0, lo, 1.0)) - np.log(hi), -np.inf)
    i = int(np.argmax(b))
    return float(b[i]), i


# ------------------------------------------------------------------------------------------------ laws
class _OneStep:
    """Records the single additive step of a ``release(x, n, noise)`` mechanism."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.steps: list[tuple[Any, float | None, str]] = []
        self.selected = False
        self.result: Any = None

    def add(self, step: str, value: Any, draw: Callable, *, sensitivity: float, norm: str = "l1",
            scale: float | None = None, kind: str = "other") -> np.ndarray:
        self.steps.append((np.asarray(value, dtype=np.float64), scale, kind))
        self.result = value + draw(self.rng)
        return self.result

    def select(self, step: str, utilities: Any, draw: Callable, **kw: Any) -> np.ndarray:
        self.selected = True
        return np.asarray(draw(self.rng))


def _noise_log_density(z: NDArray, scale: float, kind: str) -> NDArray:
    if kind == "laplace":
        return -math.log(2 * scale) - np.abs(z) / scale
    if kind == "gaussian":
        return -0.5 * math.log(2 * math.pi * scale * scale) - z * z / (2 * scale * scale)
    # two-sided geometric with parameter alpha = scale, on the integers
    k = np.rint(z)
    ld = math.log((1 - scale) / (1 + scale)) + np.abs(k) * math.log(scale)
    return np.where(k == z, ld, -np.inf)


def _one_step_law(mechanism: Any) -> Callable[[Any, NDArray], NDArray] | None:
    release = getattr(mechanism, "release", None)
    if not callable(release):
        return None

    def step_of(x: Any) -> tuple[NDArray, float, str] | None:
        rec = _OneStep(np.random.default_rng(0))
        try:
            out = np.asarray(release(x, 4, rec))
        except Exception:
            return None
        if rec.selected or len(rec.steps) != 1:
            return None
        value, scale, kind = rec.steps[0]
        if kind not in ("laplace", "gaussian", "geometric") or scale is None or not scale > 0:
            return None
        if out.shape != np.shape(rec.result) or not np.array_equal(out, rec.result):
            return None                      # the output is not the step's result (post-processed)
        return value, float(scale), kind

    def log_density(x: Any, out: NDArray) -> NDArray:
        s = step_of(x)
        if s is None:
            raise InputError("the mechanism has no single additive noise step on this input")
        value, scale, kind = s
        z = np.asarray(out, dtype=np.float64) - value
        ld = _noise_log_density(z, scale, kind)
        return ld.reshape(len(ld), -1).sum(axis=1)

    return log_density


def law_of(mechanism: Any, x: Any = None) -> tuple[str, Callable[..., Any]] | None:
    """``("pmf", pmf)``, ``("density", log_density)`` or ``None``: the output law the mechanism exposes (on
    ``x`` when given: a one-step law must be readable there)."""
    if callable(getattr(mechanism, "pmf", None)):
        try:
            if x is not None:
                mechanism.pmf(x)
            return "pmf", mechanism.pmf
        except NotImplementedError:     # a class that inherits pmf but releases continuous values
            pass
    if callable(getattr(mechanism, "log_density", None)):
        return "density", mechanism.log_density
    law = _one_step_law(mechanism)
    if law is None:
        return None
    if x is not None:
        try:
            law(x, np.asarray(mechanism(x, 2, np.random.default_rng(0))))
        except Exception:
            return None
    return "density", law


def _direction_curves(kind: str, law: Callable, mechanism: Any, x_num: Any, x_den: Any, m: int,
                      rng: np.random.Generator, batch: int) -> tuple[NDArray, NDArray, NDArray]:
    """Thresholds ``t`` (descending) with ``p_num(t)``, ``p_den(t)`` of the level sets ``{L ≥ t}``."""
    if kind == "pmf":
        p_num = np.asarray(law(x_num), dtype=np.float64)
        p_den = np.asarray(law(x_den), dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            L = np.log(p_num) - np.log(p_den)
        keep = p_num > 0
        L, pn, pd = L[keep], p_num[keep], p_den[keep]
        order = np.argsort(-L, kind="stable")
        return L[order], np.cumsum(pn[order]), np.cumsum(pd[order])
    Ls: list[NDArray] = []
    done = 0
    while done < m:
        k = min(batch, m - done)
        o = np.asarray(mechanism(x_num, k, rng))
        with np.errstate(invalid="ignore"):
            Ls.append(np.asarray(law(x_num, o)) - np.asarray(law(x_den, o)))
        done += k
    L = np.sort(np.concatenate(Ls))[::-1]
    L = L[~np.isnan(L)]
    w = np.where(np.isposinf(L), 0.0, np.exp(-np.where(np.isposinf(L), 0.0, L)))
    p_num = np.arange(1, len(L) + 1) / m
    p_den = np.cumsum(w) / m
    # the last index of each run of equal L values (a level set contains all of them)
    last = np.flatnonzero(np.r_[L[1:] != L[:-1], True])
    if len(last) > GRID:
        last = last[np.unique(np.linspace(0, len(last) - 1, GRID).round().astype(int))]
    return L[last], p_num[last], p_den[last]


def oracle_bound(mechanism: Any, pairs: Sequence[Any], samples: int, *, alpha: float = 0.05, delta: float = 0.0,
                 seed: int = 0, oracle_samples: int | None = None, batch_size: int = 500_000) -> OracleBound:
    """The oracle bound of ``mechanism`` on ``pairs`` at ``samples`` test outputs per input (see the module
    docstring).  ``oracle_samples``: Monte-Carlo outputs per pair and direction for a density law (default
    ``max(4·samples, 2·10^6)``, at most 2·10^7)."""
    pair_list = as_pairs(pairs)
    law = law_of(mechanism, pair_list[0].x0)
    if law is None:
        raise InputError(
            f"{type(mechanism).__name__} exposes no output law: give it pmf(x) (discrete outputs) or "
            "log_density(x, out), or write it as one additive noise step against algorithms.noise.NoiseSource"
        )
    kind, fn = law
    m = oracle_samples or int(min(max(4 * samples, 2_000_000), 20_000_000))
    best: OracleBound | None = None
    for i, p in enumerate(pair_list):
        for direction, (xn, xd) in enumerate(((p.x0, p.x1), (p.x1, p.x0))):
            rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(i, direction)))
            t, pn, pd = _direction_curves(kind, fn, mechanism, xn, xd, m, rng, batch_size)
            if len(t) == 0:
                continue
            b, j = level_set_bound(pn, pd, samples, alpha, delta)
            if best is None or b > best.bound:
                best = OracleBound(b, i, direction, float(t[j]), float(pn[j]), float(pd[j]), samples, alpha,
                                   delta, "exact" if kind == "pmf" else "monte-carlo",
                                   None if kind == "pmf" else m)
    assert best is not None
    return best
