"""Goodness-of-fit check of a sampler that claims to be the exponential mechanism (docs/architecture.md; the catalogue's EM checks).

The exponential mechanism (McSherry & Talwar, FOCS 2007; Dwork & Roth 2014, Definition 3.4 and
Theorem 3.10) with utility vector ``u``, sensitivity ``Δu`` and privacy parameter ``ε`` selects
candidate ``r`` with probability ``softmax(ε u / (2Δu))_r``.  :func:`check_exponential_mechanism`
draws ``samples`` outputs of a user's sampler and tests the null hypothesis that they are i.i.d. from
that law.

Statistic: Pearson's chi-square ``X² = Σ (O − E)² / E`` (``scipy.stats.power_divergence`` with
``lambda_="pearson"``), after pooling every category whose expected count is below ``min_expected``
into one cell (merged into the smallest remaining cell if the pool itself stays below
``min_expected``); ``dof = cells − 1``.  Pearson rather than the G-test (likelihood ratio) because its
null distribution is closer to ``χ²`` at small expected counts -- the false-alarm rate on correct
samplers is what a verifier must keep -- e.g. with 10 candidates, 30 samples and ``α = 0.05`` the
G-test rejected a correct sampler 8.3 % of the time and Pearson 4.9 % (20 000 simulated runs).  With
the default ``samples = 100 000`` the two statistics agree.

Power: under a fixed alternative ``p₁`` the statistic is approximately noncentral ``χ²(dof, λ)`` with
``λ = n Σ (p₁ − p₀)² / p₀`` over the pooled cells (``n`` times Pearson's ``χ²``-divergence of ``p₁``
from ``p₀``; Cohen's ``w²``, Cohen 1988, ch. 7).  The default alternative is
``softmax(2 · ε u / (2Δu))``: the "missing factor 2" bug (the exponent without the 1/2).  The
approximation is checked against Monte-Carlo rejection rates in ``tests/test_em_check.py``; it can
overstate the power at very small sample sizes (tens of samples over many candidates).

A result with ``consistent`` true means *no deviation detected from softmax(εu/(2Δu)) at this sample
size*, never that the sampler *is* the exponential mechanism; read it together with
``power_vs_alternative`` (``underpowered`` flags power below 0.8).

Seeding: the root is ``np.random.SeedSequence(seed)``; batch ``b`` of ``batch_size`` draws uses its
``b``-th spawned child (``SeedSequence(seed, spawn_key=(b,))``), as in :mod:`dpverify.execution.sampling`, so
memory stays bounded by one batch and a seed always gives the same counts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from numpy.typing import NDArray
from scipy import stats
from scipy.special import softmax

from dpverify.results import CheckResult, Measured, PrivacyClaim, Verdict
from dpverify._validation import check_count, check_real, root_entropy
from dpverify.errors import InputError, MechanismError
from dpverify.jsonsafe import json_clean, json_float
from dpverify.execution.sampling import batch_sizes

__all__ = ["check_exponential_mechanism", "EMCheckResult", "Deviation", "em_power", "em_samples_for_power"]

Sampler = Callable[[Any, int, np.random.Generator], Any]

UNDERPOWERED_BELOW = 0.8
_MAX_SEARCH_SAMPLES = 2**62


# ---------------------------------------------------------------------------------------------------
# result objects


@dataclass(frozen=True)
class Deviation:
    """The category whose count is furthest from its expectation.

    ``observed`` and ``expected`` are counts; ``residual`` is the standardised (adjusted) residual
    ``(O − n p) / sqrt(n p (1 − p))``, approximately N(0, 1) per category under the null.  For an
    output outside ``[0, |u|)`` (or of null probability 0) ``expected`` is 0 and ``residual`` is
    ``inf``.
    """

    category: int
    observed: int
    expected: float
    residual: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "category": self.category,
            "observed": self.observed,
            "expected": json_float(self.expected),
            "residual": json_float(self.residual),
        }


@dataclass(frozen=True, eq=False)
class EMCheckResult(CheckResult):
    """Outcome of :func:`check_exponential_mechanism` (named fields, like ``scipy.stats`` results).

    ``statistic`` is Pearson's ``X²`` on the pooled cells, ``pvalue`` its ``χ²(dof)`` tail
    (``statistic = inf``, ``pvalue = 0`` when the sampler returned an impossible output).
    ``counts`` has one entry per candidate; ``observed_freq = counts / samples_drawn``.
    ``pooled`` lists the candidates merged into one cell.  ``power_vs_alternative`` is the power of
    this test at level ``alpha`` with ``samples`` draws against ``alternative_pmf``
    (= ``softmax(alternative_factor · ε u / (2Δu))``), by the noncentral ``χ²`` approximation.
    Arrays are read-only; results compare by identity (``eq=False``: array fields).
    """

    statistic: float
    pvalue: float
    dof: int
    alpha: float
    samples: int
    samples_drawn: int
    counts: NDArray[np.int64]
    expected_pmf: NDArray[np.float64]
    observed_freq: NDArray[np.float64]
    pooled: tuple[int, ...]
    largest_deviation: Deviation | None
    power_vs_alternative: float
    alternative_factor: float
    alternative_pmf: NDArray[np.float64]
    epsilon: float
    sensitivity: float
    min_expected: float
    seed: int
    out_of_range: int = 0
    out_of_range_examples: tuple[int, ...] = field(default=())
    notes: tuple[str, ...] = field(default=())

    @property
    def verdict(self) -> Verdict:
        """:attr:`Verdict.PASS` when the frequencies are consistent with the claimed law, else ``violation``."""
        return Verdict.PASS if self.consistent else Verdict.VIOLATION

    def _measured(self) -> Measured:
        return Measured("pvalue", self.pvalue)

    def _claim(self) -> PrivacyClaim:
        return PrivacyClaim(self.epsilon)

    def __post_init__(self) -> None:
        for arr in (self.counts, self.expected_pmf, self.observed_freq, self.alternative_pmf):
            arr.setflags(write=False)  # frozen means frozen

    @property
    def consistent(self) -> bool:
        """``pvalue >= alpha``: no deviation from the claimed softmax detected at this sample size."""
        return bool(self.pvalue >= self.alpha)

    @property
    def underpowered(self) -> bool:
        """Power against the alternative below 0.8: a pass says little about that bug."""
        return bool(self.power_vs_alternative < UNDERPOWERED_BELOW)

    def samples_for_power(self, target: float = 0.95) -> int | None:
        """Smallest number of samples at which this test reaches power ``target`` against the same
        alternative (see :func:`em_samples_for_power`); ``None`` if no sample size does."""
        return em_samples_for_power(
            self.expected_pmf, self.alternative_pmf, target=target, alpha=self.alpha,
            min_expected=self.min_expected,
        )

    def summary(self) -> str:
        """One line, in the project's wording: never "is the exponential mechanism"."""
        claim = f"softmax(εu/(2Δu)) with ε = {self.epsilon:g}, Δu = {self.sensitivity:g}"
        power = (
            f"power {self.power_vs_alternative:.3g} against the factor-{self.alternative_factor:g} "
            "alternative" + (" (UNDERPOWERED)" if self.underpowered else "")
        )
        if self.out_of_range:
            ex = ", ".join(str(v) for v in self.out_of_range_examples)
            m = self.expected_pmf.size
            if all(not 0 <= v < m for v in self.out_of_range_examples):
                why = f"outside [0, {m}), expected probability 0"
            else:
                why = f"expected probability 0: outside [0, {m}) or a softmax entry that underflows to 0"
            return (
                f"DEVIATION from {claim}: the sampler returned {self.out_of_range} impossible output(s) "
                f"({why}), e.g. {ex}, in the first {self.samples_drawn} draws."
            )
        test = (
            f"Pearson X² = {self.statistic:.4g}, dof = {self.dof}, p = {self.pvalue:.3g}"
            f" {'≥' if self.consistent else '<'} α = {self.alpha:g}, {self.samples_drawn} samples"
        )
        if self.consistent:
            return f"No deviation detected from {claim}: {test}; {power}."
        d = self.largest_deviation
        where = ""
        if d is not None:
            where = (
                f"; largest deviation at candidate {d.category}: observed {d.observed}, expected "
                f"{d.expected:.1f} (residual {d.residual:+.3g})"
            )
        return f"DEVIATION from {claim}: {test}{where}."

    def __str__(self) -> str:
        return self.summary()

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary (non-finite floats as strings, arrays as lists)."""
        return json_clean(
            {
                "verdict": self.verdict,
                "consistent": self.consistent,
                "underpowered": self.underpowered,
                "statistic": self.statistic,
                "pvalue": self.pvalue,
                "dof": self.dof,
                "alpha": self.alpha,
                "samples": self.samples,
                "samples_drawn": self.samples_drawn,
                "counts": self.counts,
                "expected_pmf": self.expected_pmf,
                "observed_freq": self.observed_freq,
                "pooled": list(self.pooled),
                "largest_deviation": None if self.largest_deviation is None else self.largest_deviation.to_dict(),
                "power_vs_alternative": self.power_vs_alternative,
                "alternative_factor": self.alternative_factor,
                "alternative_pmf": self.alternative_pmf,
                "epsilon": self.epsilon,
                "sensitivity": self.sensitivity,
                "min_expected": self.min_expected,
                "seed": self.seed,
                "out_of_range": self.out_of_range,
                "out_of_range_examples": list(self.out_of_range_examples),
                "notes": list(self.notes),
                "summary": self.summary(),
            }
        )


# ---------------------------------------------------------------------------------------------------
# pooling and power


def _pool_mask(p0: NDArray[np.float64], n: int, min_expected: float) -> NDArray[np.bool_]:
    """Boolean mask of the categories pooled into one cell at sample size ``n``.

    Categories with expected count ``n p0 < min_expected`` (or ``p0 == 0``) are pooled; if the pool's
    expected count is still below ``min_expected`` (or 0) it absorbs the smallest remaining category,
    so that no cell has a tiny expectation.  May return all-True (one cell: nothing to test).
    """
    expected = n * p0
    small = (expected < min_expected) | (p0 <= 0.0)
    if not small.any() or small.all():
        return small
    pooled_expected = expected[small].sum()
    if pooled_expected < min_expected or pooled_expected <= 0.0:
        rest = np.flatnonzero(~small)
        small = small.copy()
        small[rest[np.argmin(expected[rest])]] = True
    return small


def _cells(values: NDArray, mask: NDArray[np.bool_]) -> NDArray:
    """``values`` with the masked categories summed into one last cell."""
    if not mask.any():
        return values
    return np.append(values[~mask], values[mask].sum())


def _power_at(p0: NDArray[np.float64], p1: NDArray[np.float64], n: int, alpha: float, min_expected: float) -> float:
    mask = _pool_mask(p0, n, min_expected)
    a0, a1 = _cells(p0, mask), _cells(p1, mask)
    dof = a0.size - 1
    if dof < 1:
        return 0.0
    noncentrality = n * float(np.sum((a1 - a0) ** 2 / a0))
    critical = stats.chi2.isf(alpha, dof)
    if noncentrality <= 0.0:
        return float(stats.chi2.sf(critical, dof))
    return float(stats.ncx2.sf(critical, dof, noncentrality))


def _as_pmf(p: Any, name: str) -> NDArray[np.float64]:
    arr = np.asarray(p, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise InputError(f"{name} must be a non-empty 1-D vector of probabilities")
    if not math.isclose(float(arr.sum()), 1.0, abs_tol=1e-9):
        raise InputError(f"{name} must sum to 1, sums to {float(arr.sum())!r}")
    return arr


def em_power(
    null_pmf: Any, alternative_pmf: Any, samples: int, *, alpha: float = 0.05, min_expected: float = 5.0
) -> float:
    """Power of the pooled Pearson test of :func:`check_exponential_mechanism` at level ``alpha`` with
    ``samples`` draws from ``alternative_pmf`` when the null is ``null_pmf``.

    Noncentral chi-square approximation: ``P[χ²(dof, λ) > χ²_{1−α}(dof)]`` with
    ``λ = samples · Σ (p₁ − p₀)² / p₀`` over the cells pooled at this sample size.  0 when pooling
    leaves a single cell (nothing can be tested).
    """
    p0, p1 = _as_pmf(null_pmf, "null_pmf"), _as_pmf(alternative_pmf, "alternative_pmf")
    if p0.shape != p1.shape:
        raise InputError(f"null_pmf and alternative_pmf differ in length ({p0.size} vs {p1.size})")
    samples = check_count("samples", samples)
    alpha = check_real("alpha", alpha, low=0.0, high=1.0, low_open=True, high_open=True)
    min_expected = check_real("min_expected", min_expected, low=0.0, high=math.inf, low_open=False, high_open=True)
    return _power_at(p0, p1, samples, alpha, min_expected)


def em_samples_for_power(
    null_pmf: Any, alternative_pmf: Any, *, target: float = 0.95, alpha: float = 0.05, min_expected: float = 5.0
) -> int | None:
    """Smallest ``n`` with :func:`em_power` ``>= target`` (doubling, then bisection on integers).

    Power grows with ``n`` except for small dips where the pooling changes; the bisection returns an
    ``n`` whose power reaches ``target`` while ``n − 1``'s does not.  ``None`` when the alternative
    cannot be told from the null at any sample size (equal pmfs, e.g. all utilities equal).
    """
    p0, p1 = _as_pmf(null_pmf, "null_pmf"), _as_pmf(alternative_pmf, "alternative_pmf")
    if p0.shape != p1.shape:
        raise InputError(f"null_pmf and alternative_pmf differ in length ({p0.size} vs {p1.size})")
    target = check_real("target", target, low=0.0, high=1.0, low_open=True, high_open=True)
    alpha = check_real("alpha", alpha, low=0.0, high=1.0, low_open=True, high_open=True)
    min_expected = check_real("min_expected", min_expected, low=0.0, high=math.inf, low_open=False, high_open=True)
    positive = p0 > 0
    if np.any(p1[~positive] > 0):
        divergence = math.inf
    else:
        divergence = float(np.sum((p1[positive] - p0[positive]) ** 2 / p0[positive]))
    if divergence <= 0.0 and target > alpha:
        return None

    def power(n: int) -> float:
        return _power_at(p0, p1, n, alpha, min_expected)

    if power(1) >= target:
        return 1
    lo, hi = 1, 2
    while power(hi) < target:
        lo, hi = hi, hi * 2
        if hi > _MAX_SEARCH_SAMPLES:
            return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if power(mid) >= target:
            hi = mid
        else:
            lo = mid
    return hi


# ---------------------------------------------------------------------------------------------------
# the check


def _check_utilities(utilities: Any) -> NDArray[np.float64]:
    try:
        u = np.asarray(utilities, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"utilities must be a 1-D vector of finite numbers: {exc}") from None
    if u.ndim != 1 or u.size == 0:
        raise InputError(f"utilities must be a non-empty 1-D vector (one score per candidate), got shape {u.shape}")
    bad = np.flatnonzero(~np.isfinite(u))
    if bad.size:
        raise InputError(
            f"utilities must be finite; entry {int(bad[0])} is {u[bad[0]]!r} ({bad.size} non-finite in all)"
        )
    return u


def _draw(sampler: Sampler, x: Any, n: int, rng: np.random.Generator, m: int) -> NDArray:
    """One batch of ``n`` codes, checked against the contract ``sampler(x, n, rng) -> int (n,)``."""
    expected = f"integer codes of shape ({n},): one index in [0, {m}) per sample"
    try:
        raw = sampler(x, n, rng)
    except MechanismError:
        raise
    except Exception as exc:
        raise MechanismError(f"the sampler raised {type(exc).__name__} for n={n}: {exc}") from None
    try:
        out = np.asarray(raw)
    except Exception as exc:  # ragged lists and the like
        raise MechanismError(f"the sampler's output is not an array ({exc}); expected {expected}") from None
    if out.shape != (n,):
        raise MechanismError(f"the sampler returned shape {out.shape} for n={n}; expected {expected}")
    if out.dtype.kind not in "iu":
        raise MechanismError(f"the sampler returned dtype {out.dtype}; expected {expected}")
    return out


def check_exponential_mechanism(
    sampler: Sampler,
    utilities: Any,
    epsilon: float,
    sensitivity: float = 1.0,
    *,
    samples: int = 100_000,
    alpha: float = 0.05,
    seed: int | np.random.SeedSequence | None = None,
    input: Any = None,
    alternative_factor: float = 2.0,
    min_expected: float = 5.0,
    batch_size: int = 100_000,
) -> EMCheckResult:
    """Test whether ``sampler``'s outputs follow ``softmax(ε u / (2Δu))`` (exponential mechanism).

    Parameters
    ----------
    sampler
        ``sampler(x, n, rng) -> ndarray`` of ``n`` integer codes, shape ``(n,)``, each an index into
        ``utilities`` (the mechanism contract of docs/architecture.md).
    utilities
        The utility vector ``u`` (one finite score per candidate) the sampler claims to use.
    epsilon, sensitivity
        The claimed ``ε > 0`` and ``Δu > 0``.
    samples
        Number of draws (in batches of ``batch_size``; memory is bounded by one batch).
    alpha
        Level of the test: ``consistent`` is ``pvalue >= alpha``.
    seed
        Root seed (``np.random.SeedSequence(seed)``; batch ``b`` uses its ``b``-th spawned child).
        ``None`` draws fresh entropy, reported as ``result.seed``.
    input
        The ``x`` passed to the sampler; default the utility vector itself (the input of
        ``algorithms.classic.exponential.ExponentialMechanism``).
    alternative_factor
        Power is reported against ``softmax(alternative_factor · ε u / (2Δu))``; the default 2 is the
        exponent without its factor 1/2.
    min_expected
        Categories with a smaller expected count are pooled into one cell.

    Returns
    -------
    EMCheckResult
        ``statistic``, ``pvalue``, ``consistent``, ``power_vs_alternative``, ...  An output outside
        ``[0, |u|)`` stops the sampling at once with ``pvalue = 0`` (its null probability is 0).

    Raises
    ------
    InputError
        Invalid ``epsilon``, ``sensitivity``, ``utilities``, ``samples``, ``alpha``, ...
    MechanismError
        The sampler raised, or returned something other than integer codes of shape ``(n,)``.
    """
    if not callable(sampler):
        raise InputError(f"sampler must be callable as sampler(x, n, rng) -> ndarray, got {type(sampler).__name__}")
    u = _check_utilities(utilities)
    epsilon = check_real("epsilon", epsilon, low=0.0, high=math.inf, low_open=True, high_open=True)
    sensitivity = check_real("sensitivity", sensitivity, low=0.0, high=math.inf, low_open=True, high_open=True)
    samples = check_count("samples", samples)
    alpha = check_real("alpha", alpha, low=0.0, high=1.0, low_open=True, high_open=True)
    alternative_factor = check_real(
        "alternative_factor", alternative_factor, low=0.0, high=math.inf, low_open=True, high_open=True
    )
    min_expected = check_real("min_expected", min_expected, low=0.0, high=math.inf, low_open=False, high_open=True)
    batch_size = check_count("batch_size", batch_size)
    entropy = root_entropy(seed)
    x = u if input is None else input
    m = u.size

    scale = epsilon / (2.0 * sensitivity)
    p0 = softmax(scale * u)
    p1 = softmax(alternative_factor * scale * u)
    power = _power_at(p0, p1, samples, alpha, min_expected)
    possible = p0 > 0.0

    counts = np.zeros(m, dtype=np.int64)
    drawn = 0
    bad_count = 0
    bad_examples: list[int] = []
    for b, n_b in enumerate(batch_sizes(samples, batch_size)):
        rng = np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(b,)))
        out = _draw(sampler, x, n_b, rng, m)
        drawn += n_b
        in_range = (out >= 0) & (out < m)
        batch_counts = np.bincount(out[in_range].astype(np.intp), minlength=m)
        counts += batch_counts
        bad = ~in_range
        bad_count += int(np.count_nonzero(bad))
        bad_examples.extend(int(v) for v in np.unique(out[bad])[:5])
        impossible = np.flatnonzero(~possible & (batch_counts > 0))
        bad_count += int(batch_counts[impossible].sum())
        bad_examples.extend(int(v) for v in impossible[:5])
        if bad_count:
            break

    common = dict(
        dof=0, alpha=alpha, samples=samples, samples_drawn=drawn, counts=counts, expected_pmf=p0,
        observed_freq=counts / drawn, power_vs_alternative=power, alternative_factor=alternative_factor,
        alternative_pmf=p1, epsilon=epsilon, sensitivity=sensitivity, min_expected=min_expected, seed=entropy,
    )
    if bad_count:
        examples = tuple(sorted(set(bad_examples)))[:5]
        first = examples[0]
        observed = int(counts[first]) if 0 <= first < m else int(np.count_nonzero(out == first))
        return EMCheckResult(
            statistic=math.inf, pvalue=0.0, pooled=(), largest_deviation=Deviation(first, observed, 0.0, math.inf),
            out_of_range=bad_count, out_of_range_examples=examples,
            notes=(f"sampling stopped after {drawn} of {samples} draws at the first impossible output",),
            **common,
        )

    mask = _pool_mask(p0, drawn, min_expected)
    observed_cells = _cells(counts.astype(np.float64), mask)
    expected_cells = _cells(drawn * p0, mask)
    dof = observed_cells.size - 1
    notes: list[str] = []
    if dof < 1:
        statistic, pvalue = 0.0, 1.0
        notes.append(
            f"every candidate pooled into one cell (expected counts below {min_expected:g}): nothing to test"
        )
    else:
        res = stats.power_divergence(observed_cells, expected_cells, lambda_="pearson")
        statistic, pvalue = float(res.statistic), float(res.pvalue)
    common["dof"] = dof
    return EMCheckResult(
        statistic=statistic, pvalue=pvalue, pooled=tuple(int(i) for i in np.flatnonzero(mask)),
        largest_deviation=_largest_deviation(counts, p0, drawn), notes=tuple(notes), **common,
    )


def _largest_deviation(counts: NDArray[np.int64], p0: NDArray[np.float64], n: int) -> Deviation:
    expected = n * p0
    var = expected * (1.0 - p0)
    with np.errstate(divide="ignore", invalid="ignore"):
        residual = np.where(var > 0, (counts - expected) / np.sqrt(var), 0.0)
    i = int(np.argmax(np.abs(residual)))
    return Deviation(i, int(counts[i]), float(expected[i]), float(residual[i]))
