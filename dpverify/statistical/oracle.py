"""The oracle bound: the best ε lower bound any event-based audit could certify at a given budget.

An event-based black-box audit counts an event ``S`` on fresh outputs of each input and certifies either

    ε_LB = ln((CP_low(k_num; n, a/2) − δ) / CP_high(k_den; n, a/2))

(Clopper--Pearson one-sided bounds on ``n`` outputs per input, :mod:`dpverify.statistical.stats`; the DP-Sniper /
Jagielski et al. bound, the hockey-stick test when ``δ > 0``), or, for ``δ = 0``, the conditional test of the ratio on
Poisson-sized samples of mean ``m = n − 4√n`` (:func:`dpverify.statistical.stats.poisson_ratio_lower`: the logit of
the Clopper--Pearson bound at level ``a`` of ``k_num`` out of ``k_num + k_den``), whichever certifies more, where
the audit is asked to (``ratio_test="auto"``).  For a pair
``(x, x')`` and a direction (``x_num = x``, ``x_den = x'`` or the reverse) the events that separate the two output laws
best are the level sets of the privacy loss

    L(o) = ln f_num(o) − ln f_den(o),        S_t = {o : L(o) ≥ t}

(Neyman--Pearson: among events of a given probability under ``x_den``, ``S_t`` has the largest probability under
``x_num``).  The *oracle bound* at budget ``n`` and level ``α`` is the maximum over pairs, directions and thresholds
``t`` of the first bound at ``a = α`` -- or, for the audit's ``ratio_test="auto"``, of the larger of the two
(:func:`dpverify.statistical.stats.projected_bounds`) -- with
``p_num(t) = P[M(x_num) ∈ S_t]``, ``p_den(t) = P[M(x_den) ∈ S_t]`` and the *expected* counts (``n·p``, resp. ``m·p``)
in place of observed ones (``scipy.stats.beta.ppf`` accepts non-integer counts; counts of 0 and ``n`` are handled as in
:mod:`dpverify.statistical.stats`).  It is what an auditor that knew the optimal event in advance -- no search sample,
no multiple testing -- would certify with typical counts: the physical limit of event-based auditing at that budget
with these two tests.  ``docs/auditor.md`` reports dpverify's bound as a fraction of it; dpverify pays for its search
and for testing several finalists (Bonferroni), so its ratio is expected a little below 1 -- and can exceed 1 by
chance, because its counts are observed, not expected.  Level sets are grouped by equal ``L`` (ties make them coarser;
an event that splits a tie class can beat the oracle by a hair).

Laws
----
:func:`law_of` reads the output law from the mechanism object and returns a :class:`Law` adapter (or ``None``):

``pmf(x)``
    a 1-D array over the integer outcome codes ``0..m-1`` that the sampler returns (randomized response, the
    exponential mechanism, truncated geometric, report-noisy-max, ...).  **Exact**: outcomes are sorted by ``L`` and
    ``p_num``, ``p_den`` are cumulative sums over the tie classes.  A ``pmf`` that raises ``NotImplementedError``
    (a twin that inherits it but releases values) is no law.
``support(x)`` with ``log_density(x, out)``
    a finite array of every output row the mechanism can return (the same on every input of the audit; SVT's
    answer patterns): the pmf over those rows is ``exp(log_density(x, support))``, and the oracle is **exact** as
    for ``pmf``.  A ``support`` that raises ``NotImplementedError`` (a variant that releases values) is skipped.
``log_density(x, out)``
    the log density of each output row (``out`` is what the sampler returns, first axis the rows) under ``x`` with
    respect to one dominating measure common to every input -- counting measure for discrete outputs, Lebesgue
    measure for continuous ones, counting measure on the atoms plus Lebesgue measure elsewhere for mixed ones --
    and ``−inf`` where the output is impossible.  **Monte Carlo with importance weights**: draw ``m``
    (``oracle_samples``) outputs ``o_i`` from the mechanism itself on ``x_num`` (seeded, in batches) and estimate

        p_num(t) = (1/m) Σ_i 1{L(o_i) ≥ t},        p_den(t) = (1/m) Σ_i e^{−L(o_i)} 1{L(o_i) ≥ t}.

    The second identity is importance sampling, ``P_den[S] = E_num[(f_den/f_num)(o) 1{o ∈ S}]``, and it only counts
    ``x_den``'s mass on the support of ``x_num``'s law.  That is exactly right for every level set with a finite
    ``t``: where ``f_num = 0`` and ``f_den > 0`` the loss is ``L = −inf < t``, so ``S_t`` holds none of that mass.
    Outputs impossible under ``x_den`` (``f_den = 0 < f_num``, ``L = +inf``) weigh ``e^{−inf} = 0``: they raise
    ``p_num`` and not ``p_den`` (the point masses of a leak).  An output drawn on ``x_num`` that the law calls
    impossible under ``x_num`` means the law and the sampler disagree: an :class:`InputError`.  The thresholds are
    the distinct sorted values of ``L`` (all of them up to :data:`GRID` classes; beyond, a grid dense both in rank
    and near the top, refined around the best grid point).
a single additive noise step
    a ``release(x, n, noise)`` written against :class:`algorithms.noise.NoiseSource` with exactly one ``noise.add``
    of ``kind`` ``"laplace"``, ``"gaussian"`` or ``"geometric"``, whose result is the output: the law ``value +
    noise`` is read from the step (value, scale, kind) -- a fallback for mechanisms without a hand-written law.

A law a class inherits from a base class while overriding the sampler (``__call__`` or ``release``) is *stale* --
the subclass draws something else (``BudgetSpentTwice(Laplace)`` releases two noisy copies) -- and is not used.

:func:`oracle_bound` takes the mechanism, the pairs (anything :func:`dpverify.neighbours.as_pairs` accepts), the
test budget ``samples`` per input, ``alpha``, ``delta`` and a seed, and returns an :class:`OracleBound`.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np
from numpy.typing import NDArray

from dpverify.errors import InputError
from dpverify.jsonsafe import json_float
from dpverify.neighbours import as_pairs
from dpverify.statistical.ratio_tests import RATIO_TESTS
from dpverify.statistical.stats import projected_bounds

__all__ = ["OracleBound", "Law", "law_of", "oracle_bound", "level_set_bound", "level_set_curves", "GRID"]

#: Thresholds evaluated per pair and direction when the loss takes more distinct values (plus a refinement).
GRID: int = 4000
#: Default Monte-Carlo outputs per pair and direction: ``max(4·samples, MIN_ORACLE_SAMPLES)``, at most
#: ``MAX_ORACLE_SAMPLES`` (memory: two float64 arrays of that length).
MIN_ORACLE_SAMPLES: int = 2_000_000
MAX_ORACLE_SAMPLES: int = 20_000_000
#: Losses within ``TIE_RELATIVE · max|L|`` of each other after rounding are one tie class (rounding noise of
#: ``ln f_num − ln f_den`` must not split a level set).
TIE_RELATIVE: float = 1e-10


@dataclass(frozen=True)
class OracleBound:
    """The oracle bound and the level set ``{L ≥ threshold}`` that attains it.

    ``bound``: the certified ε at the expected counts (``-inf`` when no level set certifies anything, e.g. a δ
    larger than every probability); ``pair_index`` / ``direction``: the pair (index into the normalised pairs) and
    direction (0: ``x_num = x0``; 1: ``x_num = x1``); ``p_num``, ``p_den``: the level set's probabilities;
    ``samples``, ``alpha``, ``delta``: the audit budget and claim it is for; ``method``: ``"exact"`` (pmf) or
    ``"monte-carlo"`` (density); ``oracle_samples``: Monte-Carlo outputs per pair and direction (``None`` when exact).
    """

    bound: float
    pair_index: int
    direction: int
    threshold: float
    p_num: float
    p_den: float
    samples: int
    alpha: float
    delta: float
    method: str
    oracle_samples: int | None
    pair_label: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"bound": json_float(self.bound), "pair_index": self.pair_index, "pair_label": self.pair_label,
                "direction": self.direction, "threshold": json_float(self.threshold), "p_num": self.p_num,
                "p_den": self.p_den, "samples": self.samples, "alpha": self.alpha, "delta": self.delta,
                "method": self.method, "oracle_samples": self.oracle_samples}

    def __str__(self) -> str:
        return (f"oracle bound {self.bound:.6g} at {self.samples} samples per input (alpha {self.alpha:g}, delta "
                f"{self.delta:g}): pair {self.pair_index} direction {self.direction}, level set L >= "
                f"{self.threshold:.6g} with p_num {self.p_num:.6g}, p_den {self.p_den:.6g} ({self.method})")


def level_set_bound(p_num: Any, p_den: Any, samples: int, alpha: float, delta: float = 0.0,
                    ratio_test: str = "clopper-pearson") -> tuple[float, int]:
    """``max_t`` of the bound certified at the expected counts over events with probabilities ``p_num[t]``,
    ``p_den[t]``, by the audit's test ``ratio_test`` (:func:`dpverify.audit`'s argument): Clopper--Pearson at level
    ``α/2`` per side, or with ``"auto"`` the better of that and the conditional Poisson test at level ``α``
    (:func:`dpverify.statistical.stats.projected_bounds`); returns the bound and the index of the best event (``-inf``
    and 0 when none certifies anything)."""
    p_num = np.atleast_1d(np.asarray(p_num, dtype=np.float64))
    p_den = np.atleast_1d(np.asarray(p_den, dtype=np.float64))
    cp, poisson = projected_bounds(p_num, p_den, samples, alpha, delta)
    b = np.maximum(cp, poisson) if ratio_test == "auto" else cp
    i = int(np.argmax(b))
    return float(b[i]), i


# ------------------------------------------------------------------------------------------------ laws
class Law(NamedTuple):
    """The output law of a mechanism, as :func:`law_of` found it.

    ``kind``: ``"pmf"`` (``function(x)`` is a pmf over outcome codes) or ``"density"`` (``function(x, out)`` is a
    log density per output row); ``source``: ``"pmf"``, ``"support"`` (a pmf over the rows of the mechanism's
    ``support(x)``, indexed ``0..m-1`` in that order), ``"log_density"`` or ``"noise-step"``.
    """

    kind: str
    function: Callable[..., Any]
    source: str

    def log_density(self, x: Any, out: Any) -> NDArray[np.float64]:
        """Log density (log mass for a pmf, on the codes ``out``) of each output row under ``x``."""
        if self.kind == "density":
            return np.asarray(self.function(x, out), dtype=np.float64)
        p = np.asarray(self.function(x), dtype=np.float64)
        codes = np.asarray(out).reshape(-1)
        ok = (codes >= 0) & (codes < len(p)) & (codes == np.floor(codes))
        with np.errstate(divide="ignore"):
            return np.where(ok, np.log(p[np.where(ok, codes, 0).astype(np.int64)]), -np.inf)


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
        with np.errstate(invalid="ignore"):
            ld = _noise_log_density(z, scale, kind)
        ld = np.where(np.isnan(ld), -np.inf, ld)
        return ld.reshape(len(ld), -1).sum(axis=1)

    return log_density


def _owner(cls: type, name: str) -> int | None:
    """Position in ``cls.__mro__`` of the class that defines ``name`` (``None``: nowhere, e.g. an instance attribute)."""
    for i, c in enumerate(cls.__mro__):
        if name in c.__dict__:
            return i
    return None


def _is_stale(mechanism: Any, name: str) -> bool:
    """Whether the law ``name`` is inherited from a class above one that overrides the sampler."""
    where = _owner(type(mechanism), name)
    if where is None:
        return False
    return any((s := _owner(type(mechanism), sampler)) is not None and s < where
               for sampler in ("__call__", "release"))


def law_of(mechanism: Any, x: Any = None) -> Law | None:
    """The output law ``mechanism`` exposes (see the module docstring), or ``None``: its own ``pmf(x)``, else its own
    ``log_density(x, out)``, else the law of its single additive noise step.  When ``x`` is given the law must be
    readable there (a pmf that raises ``NotImplementedError`` on ``x``, or a noise step not found on ``x``, is no law)."""
    pmf = getattr(mechanism, "pmf", None)
    if callable(pmf) and not _is_stale(mechanism, "pmf"):
        try:
            if x is not None:
                pmf(x)
            return Law("pmf", pmf, "pmf")
        except NotImplementedError:     # a class that inherits pmf but releases continuous values
            pass
    log_density = getattr(mechanism, "log_density", None)
    if callable(log_density) and not _is_stale(mechanism, "log_density"):
        support = getattr(mechanism, "support", None)
        if x is not None and callable(support) and not _is_stale(mechanism, "support"):
            try:
                rows = np.asarray(support(x))
            except NotImplementedError:   # a variant whose outputs are not a finite set (released values)
                rows = None
            if rows is not None:
                return Law("pmf", lambda z: np.exp(np.asarray(log_density(z, rows), dtype=np.float64)), "support")
        return Law("density", log_density, "log_density")
    law = _one_step_law(mechanism)
    if law is None:
        return None
    if x is not None:
        try:
            law(x, np.asarray(mechanism(x, 2, np.random.default_rng(0))))
        except Exception:
            return None
    return Law("density", law, "noise-step")


# ------------------------------------------------------------------------------------------------ curves
def _class_ends(L: NDArray) -> NDArray[np.int64]:
    """Indices of the last element of each tie class of the descending finite-or-infinite ``L``."""
    finite = L[np.isfinite(L)]
    step = TIE_RELATIVE * (float(np.max(np.abs(finite))) if finite.size else 1.0) or TIE_RELATIVE
    with np.errstate(invalid="ignore", over="ignore"):
        key = np.where(np.isfinite(L), np.round(L / step), L)
    return np.flatnonzero(np.r_[key[1:] != key[:-1], True])


def _pmf_curves(law: Law, x_num: Any, x_den: Any) -> tuple[NDArray, NDArray, NDArray]:
    p_num = np.asarray(law.function(x_num), dtype=np.float64).reshape(-1)
    p_den = np.asarray(law.function(x_den), dtype=np.float64).reshape(-1)
    if len(p_num) != len(p_den):          # codes beyond one pmf's length are impossible there
        m = max(len(p_num), len(p_den))
        p_num, p_den = np.pad(p_num, (0, m - len(p_num))), np.pad(p_den, (0, m - len(p_den)))
    keep = p_num > 0
    with np.errstate(divide="ignore"):
        L = np.log(p_num[keep]) - np.log(p_den[keep])
    order = np.argsort(-L, kind="stable")
    L, pn, pd = L[order], np.cumsum(p_num[keep][order]), np.cumsum(p_den[keep][order])
    ends = _class_ends(L)
    return L[ends], np.minimum(pn[ends], 1.0), np.minimum(pd[ends], 1.0)


def _monte_carlo_losses(law: Law, mechanism: Any, x_num: Any, x_den: Any, m: int, rng: np.random.Generator,
                        batch: int) -> NDArray[np.float64]:
    L = np.empty(m, dtype=np.float64)
    done = 0
    while done < m:
        k = min(batch, m - done)
        o = np.asarray(mechanism(x_num, k, rng))
        ln = np.asarray(law.log_density(x_num, o), dtype=np.float64).reshape(-1)
        if ln.shape != (k,):
            raise InputError(f"log_density(x, out) returned shape {ln.shape} for {k} output rows; it must return one "
                             "value per row")
        bad = int(np.count_nonzero(~(ln > -np.inf)))
        if bad:
            raise InputError(f"the law of {type(mechanism).__name__} gives log density -inf (or NaN) to {bad} of {k} "
                             "outputs its own sampler drew on the same input: the law and the sampler disagree")
        ld = np.asarray(law.log_density(x_den, o), dtype=np.float64).reshape(-1)
        with np.errstate(invalid="ignore"):
            L[done:done + k] = ln - ld              # +inf where impossible under x_den
        done += k
    return L


def level_set_curves(L: NDArray[np.float64], m: int | None = None) -> tuple[NDArray, NDArray, NDArray]:
    """Level sets of Monte-Carlo losses ``L`` (drawn on ``x_num``; sorted in place): thresholds ``t`` (descending),
    ``p_num(t)`` and the importance-weighted ``p_den(t)`` for every tie class (``m``: the number of draws, default
    ``len(L)``; NaN losses are dropped but stay in ``m``)."""
    m = len(L) if m is None else m
    L = L[~np.isnan(L)]
    L.sort()
    L = L[::-1]
    w = np.exp(-L)                                   # e^{-inf} = 0 at L = +inf: impossible under x_den
    np.cumsum(w, out=w)
    ends = _class_ends(L)
    return L[ends], (ends + 1.0) / m, np.minimum(w[ends] / m, 1.0)


def _best_on_curves(t: NDArray, pn: NDArray, pd: NDArray, samples: int, alpha: float, delta: float,
                    ratio_test: str = "clopper-pearson") -> tuple[float, int]:
    """The best level set, on a grid when there are more than :data:`GRID` classes (then refined)."""
    g = len(t)
    if g <= GRID:
        return level_set_bound(pn, pd, samples, alpha, delta, ratio_test)
    grid = np.unique(np.r_[np.linspace(0, g - 1, GRID // 2).round(),
                           np.geomspace(1, g, GRID // 2).round() - 1].astype(np.int64))
    b, j = level_set_bound(pn[grid], pd[grid], samples, alpha, delta, ratio_test)
    lo = int(grid[max(j - 1, 0)])
    hi = int(grid[min(j + 1, len(grid) - 1)])
    near = np.arange(lo, hi + 1)
    if len(near) > 20 * GRID:
        near = np.unique(np.linspace(lo, hi, 20 * GRID).round().astype(np.int64))
    b2, j2 = level_set_bound(pn[near], pd[near], samples, alpha, delta, ratio_test)
    return (b2, int(near[j2])) if b2 >= b else (b, int(grid[j]))


# ------------------------------------------------------------------------------------------------ the bound
def _check(samples: Any, alpha: Any, delta: Any, oracle_samples: Any, batch_size: Any) -> None:
    def is_int(v: Any) -> bool:
        return isinstance(v, numbers.Integral) and not isinstance(v, bool)

    if not is_int(samples) or samples < 1:
        raise InputError(f"samples must be a positive integer (test outputs per input), got {samples!r}")
    if not isinstance(alpha, numbers.Real) or isinstance(alpha, bool) or not 0.0 < float(alpha) < 1.0:
        raise InputError(f"alpha must be in (0, 1) (the audit's level; 0.05 for 95 % confidence), got {alpha!r}")
    if not isinstance(delta, numbers.Real) or isinstance(delta, bool) or not 0.0 <= float(delta) < 1.0:
        raise InputError(f"delta must be in [0, 1) (the claimed delta), got {delta!r}")
    if oracle_samples is not None and (not is_int(oracle_samples) or oracle_samples < 1):
        raise InputError(f"oracle_samples must be a positive integer or None, got {oracle_samples!r}")
    if not is_int(batch_size) or batch_size < 1:
        raise InputError(f"batch_size must be a positive integer, got {batch_size!r}")


def default_oracle_samples(samples: int) -> int:
    """``max(4·samples, 2·10^6)``, at most ``2·10^7``: Monte-Carlo outputs per pair and direction."""
    return int(min(max(4 * samples, MIN_ORACLE_SAMPLES), MAX_ORACLE_SAMPLES))


def oracle_bound(mechanism: Any, pairs: Sequence[Any], samples: int, *, alpha: float = 0.05, delta: float = 0.0,
                 seed: int = 0, oracle_samples: int | None = None, batch_size: int = 500_000,
                 ratio_test: str = "clopper-pearson") -> OracleBound:
    """The oracle bound of ``mechanism`` on ``pairs`` at ``samples`` test outputs per input (module docstring).

    ``pairs``: a list of :class:`~dpverify.neighbours.Pair` or ``(x0, x1)`` tuples; both directions of each are
    tried.  ``alpha``: the audit's level (each side at ``α/2``); ``delta``: the claimed δ.  ``seed``: the Monte-Carlo
    draws of pair ``i`` and direction ``d`` come from ``SeedSequence(seed, spawn_key=(i, d))``, in batches of
    ``batch_size`` rows; ``oracle_samples``: draws per pair and direction (default :func:`default_oracle_samples`).
    A pmf law is exact and ignores the three.  ``ratio_test``: the audit's test the oracle assumes
    (:func:`dpverify.audit`'s argument; ``"auto"`` adds the conditional Poisson test).  Raises :class:`InputError`
    when the mechanism exposes no law or ``ratio_test`` is unknown.
    """
    _check(samples, alpha, delta, oracle_samples, batch_size)
    if ratio_test not in RATIO_TESTS:
        raise InputError(f"ratio_test must be one of {RATIO_TESTS}, got {ratio_test!r}")
    pair_list = as_pairs(pairs)
    law = law_of(mechanism, pair_list[0].x0)
    if law is None:
        raise InputError(
            f"{type(mechanism).__name__} exposes no output law, so it has no oracle bound: give it pmf(x) (discrete "
            "outputs, a pmf over the codes it returns) or log_density(x, out), or write it as one additive noise step "
            "against algorithms.noise.NoiseSource"
        )
    m = int(oracle_samples) if oracle_samples is not None else default_oracle_samples(int(samples))
    best: OracleBound | None = None
    for i, p in enumerate(pair_list):
        for direction, (xn, xd) in enumerate(((p.x0, p.x1), (p.x1, p.x0))):
            if law.kind == "pmf":
                t, pn, pd = _pmf_curves(law, xn, xd)
            else:
                rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(i, direction)))
                t, pn, pd = level_set_curves(_monte_carlo_losses(law, mechanism, xn, xd, m, rng, batch_size), m)
            if len(t) == 0:
                continue
            b, j = _best_on_curves(t, pn, pd, int(samples), float(alpha), float(delta), ratio_test)
            if best is None or b > best.bound:
                best = OracleBound(b, i, direction, float(t[j]), float(pn[j]), float(pd[j]), int(samples),
                                   float(alpha), float(delta), "exact" if law.kind == "pmf" else "monte-carlo",
                                   None if law.kind == "pmf" else m, p.label)
    if best is None:  # every pmf was zero everywhere
        raise InputError(f"the law of {type(mechanism).__name__} gives no outcome positive probability")
    return best
