"""Exact privacy loss from exact output distributions.

Sampling bounds ε from below; when a mechanism's output law can be computed, the privacy loss between two
inputs is a number.  For two output laws ``p0 = M(x0)``, ``p1 = M(x1)`` over a finite set of outputs:

* ``ε(x0, x1) = max_o |ln p0(o) − ln p1(o)|`` -- the pure-DP loss of the pair (Dwork & Roth 2014, Def. 2.4
  with singleton events, which suffice for discrete outputs); an output in one support only gives ``ε = ∞``
  (a *support mismatch*);
* the hockey-stick divergence ``δ(ε') = max over the two directions of Σ_o max(0, p_a(o) − e^{ε'} p_b(o))``:
  the smallest δ such that the pair satisfies (ε', δ)-DP (Barthe & Olmedo 2013; Balle et al. 2018, Thm 1);
* ``ε(δ)``: the smallest ε' with ``δ(ε') ≤ δ`` (the pair's privacy profile).

Distributions are given in log-space (``(outputs, log_p)``), so probabilities far below 1e-308 are handled;
or with rational probabilities (:class:`fractions.Fraction` values), in which case the worst ratio is kept as
an exact fraction (:attr:`PrivacyLoss.exact_ratio`) and :meth:`PrivacyLoss.delta_exact` gives δ as a
fraction for a rational ``e^{ε'}``.

A mechanism offers its exact law by a method ``log_pmf(x) -> (outputs, log_p)`` (``outputs`` indexed along
the first axis, encoded as the mechanism's samples are) or ``pmf(x)`` returning a 1-D array (output ``i`` has
probability ``pmf[i]``) or a dict ``{output: probability}``; :func:`exact_distribution` reads either.
:func:`exact_audit` checks a claim on a list of pairs; :mod:`dpverify.code_checks.worst_pair` searches a relation for
the worst pair.  An exact loss is exact *for the pairs examined*; the mechanism's ε over the whole relation
is at least the largest of them.
"""


from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from scipy import optimize

from dpverify._validation import counted
from dpverify.results import Measured, PrivacyClaim, ViolationVerdict
from dpverify.errors import InputError, MechanismError
from dpverify.jsonsafe import json_clean, json_float
from dpverify.neighbours.base import value_key


__all__ = [
    "ExactDistribution",
    "ExactUnavailable",
    "PrivacyLoss",
    "ExactPairResult",
    "ExactAuditResult",
    "exact_distribution",
    "exact_privacy_loss",
    "exact_audit",
    "MASS_TOLERANCE",
]

#: A distribution whose probabilities sum to 1 within this tolerance is accepted.
MASS_TOLERANCE = 1e-8
#: Relative tolerance of the verdict: exact ε above ``claim·(1 + REL_TOL) + ABS_TOL`` is a violation
#: (the log-space arithmetic of the distributions is exact to ~1e-12).
REL_TOL = 1e-9
ABS_TOL = 1e-12


class ExactUnavailable(MechanismError):
    """The mechanism has no exact output law for this input (no ``log_pmf``/``pmf``, or it declined)."""


# --------------------------------------------------------------------------------------------------
# distributions
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class ExactDistribution:
    """A finite output law: ``outputs`` (first axis indexes the outcomes, unique) and ``log_p``.

    ``fractions`` holds the probabilities as :class:`Fraction` when they were given rationally.
    """

    outputs: np.ndarray
    log_p: np.ndarray
    fractions: tuple[Fraction, ...] | None = None

    def __len__(self) -> int:
        return int(self.log_p.shape[0])

    @property
    def p(self) -> np.ndarray:
        return np.exp(self.log_p)

    @classmethod
    def from_log_pmf(cls, outputs: Any, log_p: Any, what: str = "distribution") -> ExactDistribution:
        """From outputs and natural-log probabilities; checks shapes, finiteness and total mass."""
        out = np.asarray(outputs)
        lp = np.asarray(log_p, dtype=np.float64)
        if out.ndim == 0 or lp.ndim != 1 or out.shape[0] != lp.shape[0]:
            raise InputError(f"{what}: outputs (shape {out.shape}) and log-probabilities (shape {lp.shape}) must "
                             f"have the same first axis, with log-probabilities 1-D")
        if lp.shape[0] == 0:
            raise InputError(f"{what}: empty distribution (no outputs)")
        if np.isnan(lp).any() or (lp == np.inf).any():
            raise InputError(f"{what}: log-probabilities contain NaN or +inf (first at output index "
                             f"{int(np.flatnonzero(~(lp < np.inf))[0])})")
        keep = lp > -np.inf
        out, lp = out[keep], lp[keep]
        _check_mass(float(np.exp(lp - lp.max()).sum() * math.exp(lp.max())), what)
        return cls(outputs=out, log_p=lp)

    @classmethod
    def from_pmf(cls, pmf: Any, what: str = "distribution") -> ExactDistribution:
        """From a 1-D probability array (output = index) or a dict ``{output: probability}``; Fraction
        probabilities are kept exactly."""
        if isinstance(pmf, dict):
            keys = list(pmf.keys())
            vals = list(pmf.values())
            if not keys:
                raise InputError(f"{what}: empty pmf dict")
            if all(isinstance(v, (Fraction, int)) for v in vals):
                fr = [Fraction(v) for v in vals]
                if any(v < 0 for v in fr):
                    raise InputError(f"{what}: negative probability in the pmf")
                if sum(fr) != 1:
                    raise InputError(f"{what}: rational probabilities sum to {sum(fr)}, not exactly 1")
                pairs = [(k, v) for k, v in zip(keys, fr) if v > 0]
                outputs = _outputs_array([k for k, _ in pairs])
                lp = np.array([_log_fraction(v) for _, v in pairs])
                return cls(outputs=outputs, log_p=lp, fractions=tuple(v for _, v in pairs))
            p = np.asarray(vals, dtype=np.float64)
            _check_probabilities(p, what)
            return cls.from_log_pmf(_outputs_array(keys), _log(p), what)
        p = np.asarray(pmf, dtype=np.float64)
        if p.ndim != 1:
            raise InputError(f"{what}: a pmf array must be 1-D (probability of output i at index i), got shape "
                             f"{p.shape}; return a dict or (outputs, log_p) from log_pmf for other outputs")
        _check_probabilities(p, what)
        return cls.from_log_pmf(np.arange(p.shape[0]), _log(p), what)


def _log(p: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(p)


def _log_fraction(v: Fraction) -> float:
    return math.log(v.numerator) - math.log(v.denominator)


def _outputs_array(keys: list[Any]) -> np.ndarray:
    if all(isinstance(k, tuple) for k in keys):
        return np.array(keys)
    arr = np.array(keys)
    if arr.ndim != 1:
        arr = np.empty(len(keys), dtype=object)
        arr[:] = keys
    return arr


def _check_probabilities(p: np.ndarray, what: str) -> None:
    if p.size == 0:
        raise InputError(f"{what}: empty pmf")
    if not np.isfinite(p).all() or (p < 0).any():
        bad = int(np.flatnonzero(~(np.isfinite(p) & (p >= 0)))[0])
        raise InputError(f"{what}: probability at output {bad} is {p[bad]!r}; probabilities must be finite and >= 0")


def _check_mass(total: float, what: str) -> None:
    if not abs(total - 1.0) <= MASS_TOLERANCE:
        raise InputError(f"{what}: probabilities sum to {total!r}, not 1 (tolerance {MASS_TOLERANCE}); an exact "
                         f"distribution must list every output with positive probability")


def exact_distribution(mechanism: Any, x: Any) -> ExactDistribution:
    """The exact output law of ``mechanism`` on ``x``, from its ``log_pmf(x)`` or ``pmf(x)``."""
    name = getattr(type(mechanism), "__name__", repr(mechanism))
    fn = getattr(mechanism, "log_pmf", None)
    kind = "log_pmf"
    if fn is None:
        fn, kind = getattr(mechanism, "pmf", None), "pmf"
    if fn is None:
        raise ExactUnavailable(f"{name} offers no exact output law: give it a method log_pmf(x) -> (outputs, "
                               f"log_p) or pmf(x) -> array/dict, or audit it statistically (dpverify.audit)")
    try:
        value = fn(x)
    except NotImplementedError as exc:
        raise ExactUnavailable(f"{name}.{kind} is not available for this input: {exc}") from None
    except (InputError, ExactUnavailable):
        raise
    except Exception as exc:  # noqa: BLE001 -- a failing pmf is the mechanism's error, named
        raise MechanismError(f"{name}.{kind}(x) raised {type(exc).__name__}: {exc}") from None
    what = f"{name}.{kind}(x)"
    if kind == "log_pmf":
        if not (isinstance(value, tuple) and len(value) == 2):
            raise MechanismError(f"{what} must return a tuple (outputs, log_p), got {type(value).__name__}")
        return ExactDistribution.from_log_pmf(value[0], value[1], what)
    return ExactDistribution.from_pmf(value, what)


# --------------------------------------------------------------------------------------------------
# privacy loss of one pair
# --------------------------------------------------------------------------------------------------


def _row_keys(outputs: np.ndarray) -> np.ndarray:
    """Outputs as a 1-D array of comparable keys (rows of a 2-D output become bytes)."""
    if outputs.dtype == object:
        return np.array([repr(o) for o in outputs.tolist()])
    if outputs.ndim == 1:
        return outputs
    flat = np.ascontiguousarray(outputs.reshape(outputs.shape[0], -1))
    return flat.view(np.dtype((np.void, flat.dtype.itemsize * flat.shape[1]))).ravel()


def _align(d0: ExactDistribution, d1: ExactDistribution) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Union of outputs; log-probabilities of both laws on it (``-inf`` outside a support), and for each
    union output the index into d0 or d1 where it came from (-1 if absent)."""
    if d0.outputs.dtype.kind != d1.outputs.dtype.kind and not (
            d0.outputs.dtype.kind in "iuf" and d1.outputs.dtype.kind in "iuf"):
        raise InputError(f"the two distributions encode outputs differently ({d0.outputs.dtype} vs "
                         f"{d1.outputs.dtype}); a mechanism must encode outputs the same way on every input")
    if d0.outputs.shape[1:] != d1.outputs.shape[1:]:
        raise InputError(f"outputs have different shapes on the two inputs ({d0.outputs.shape[1:]} vs "
                         f"{d1.outputs.shape[1:]})")
    out0, out1 = d0.outputs, d1.outputs
    if out0.dtype != out1.dtype and out0.dtype != object:
        common = np.result_type(out0.dtype, out1.dtype)
        out0, out1 = out0.astype(common), out1.astype(common)
    k0, k1 = _row_keys(out0), _row_keys(out1)
    keys, inv = np.unique(np.concatenate([k0, k1]), return_inverse=True)
    n0 = k0.shape[0]
    if np.unique(inv[:n0]).size != n0 or np.unique(inv[n0:]).size != k1.shape[0]:
        raise InputError("a distribution lists the same output twice; merge duplicate outputs first")
    l0 = np.full(keys.shape[0], -np.inf)
    l1 = np.full(keys.shape[0], -np.inf)
    l0[inv[:n0]] = d0.log_p
    l1[inv[n0:]] = d1.log_p
    i0 = np.full(keys.shape[0], -1)
    i1 = np.full(keys.shape[0], -1)
    i0[inv[:n0]] = np.arange(n0)
    i1[inv[n0:]] = np.arange(k1.shape[0])
    return l0, l1, i0, i1


def _delta_direction(la: np.ndarray, lb: np.ndarray, eps: float) -> float:
    """``Σ max(0, p_a − e^{eps} p_b)`` computed as ``Σ p_a · (−expm1(eps + lb − la))`` where positive."""
    with np.errstate(invalid="ignore"):
        diff = la - lb
    sel = diff > eps
    if not sel.any():
        return 0.0
    return float(np.sum(np.exp(la[sel]) * -np.expm1(eps + lb[sel] - la[sel])))


@dataclass(frozen=True, eq=False)
class PrivacyLoss:
    """Exact privacy loss between two output laws ``p0`` (input x0) and ``p1`` (input x1).

    ``epsilon`` is ``max_o |ln p0(o) − ln p1(o)|`` (``inf`` on a support mismatch); ``output`` attains it;
    ``direction`` is ``0`` when ``p0(output) > p1(output)`` (the loss of x0 against x1) and ``1`` otherwise;
    ``log_p0``/``log_p1`` are the two log-probabilities at ``output``; ``mismatched`` counts outputs in one
    support only.  :meth:`delta` is the hockey-stick curve, :meth:`epsilon_for_delta` its inverse.
    """

    epsilon: float
    output: Any
    direction: int
    log_p0: float
    log_p1: float
    n_outputs: int
    mismatched: int
    exact_ratio: Fraction | None = None
    _l0: np.ndarray = field(default=None, repr=False)
    _l1: np.ndarray = field(default=None, repr=False)
    _f0: tuple[Fraction, ...] | None = field(default=None, repr=False)
    _f1: tuple[Fraction, ...] | None = field(default=None, repr=False)

    def delta(self, epsilon: float) -> float:
        """``δ(ε')``: the smallest δ for which the pair satisfies (ε', δ)-DP in both directions."""
        eps = _check_eps_prime(epsilon)
        return max(_delta_direction(self._l0, self._l1, eps), _delta_direction(self._l1, self._l0, eps))

    def delta_curve(self, epsilons: Iterable[float]) -> np.ndarray:
        """``δ(ε')`` at each of ``epsilons``."""
        return np.array([self.delta(e) for e in epsilons])

    def delta_exact(self, exp_epsilon: Fraction | int) -> Fraction:
        """δ as an exact fraction for a rational ``e^{ε'}`` (needs rational distributions)."""
        if self._f0 is None or self._f1 is None:
            raise InputError("delta_exact needs both distributions with Fraction probabilities (from_pmf with "
                             "a dict of Fractions)")
        r = Fraction(exp_epsilon)
        if r < 1:
            raise InputError(f"exp_epsilon must be >= 1 (ε' >= 0), got {r}")
        d01 = sum((max(Fraction(0), a - r * b) for a, b in zip(self._f0, self._f1)), Fraction(0))
        d10 = sum((max(Fraction(0), b - r * a) for a, b in zip(self._f0, self._f1)), Fraction(0))
        return max(d01, d10)

    def epsilon_for_delta(self, delta: float) -> float:
        """The smallest ε' >= 0 with ``δ(ε') <= delta`` (``inf`` if the mass on mismatched outputs exceeds it)."""
        if not (isinstance(delta, (int, float)) and 0 <= delta < 1):
            raise InputError(f"delta must be a number in [0, 1), got {delta!r}")
        if delta == 0:
            return self.epsilon
        finite = np.isfinite(self._l0) & np.isfinite(self._l1)
        top = float(np.max(np.abs(self._l0[finite] - self._l1[finite]))) if finite.any() else 0.0
        if self.delta(top) > delta:
            return math.inf
        if self.delta(0.0) <= delta:
            return 0.0
        return float(optimize.brentq(lambda e: self.delta(e) - delta, 0.0, top, xtol=1e-13, rtol=1e-12))

    def to_dict(self) -> dict[str, Any]:
        return json_clean({
            "epsilon": json_float(self.epsilon), "output": _jsonable_output(self.output),
            "direction": self.direction, "log_p0": json_float(self.log_p0), "log_p1": json_float(self.log_p1),
            "n_outputs": self.n_outputs, "mismatched": self.mismatched,
            "exact_ratio": None if self.exact_ratio is None else str(self.exact_ratio),
        })


def _check_eps_prime(epsilon: Any) -> float:
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, np.floating, np.integer)) \
            or not epsilon >= 0:
        raise InputError(f"ε' must be a number >= 0, got {epsilon!r}")
    return float(epsilon)


def _jsonable_output(o: Any) -> Any:
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, np.generic):
        return o.item()
    return o


def exact_privacy_loss(p0: ExactDistribution | Any, p1: ExactDistribution | Any) -> PrivacyLoss:
    """Exact loss between two output laws (each an :class:`ExactDistribution`, a pmf array or a dict)."""
    d0 = p0 if isinstance(p0, ExactDistribution) else ExactDistribution.from_pmf(p0, "p0")
    d1 = p1 if isinstance(p1, ExactDistribution) else ExactDistribution.from_pmf(p1, "p1")
    l0, l1, i0, i1 = _align(d0, d1)
    only0 = np.isfinite(l0) & ~np.isfinite(l1)
    only1 = np.isfinite(l1) & ~np.isfinite(l0)
    mismatched = int(only0.sum() + only1.sum())
    if mismatched:
        # the most probable mismatched output is the most telling witness
        cand0 = np.where(only0, l0, -np.inf)
        cand1 = np.where(only1, l1, -np.inf)
        j0, j1 = int(np.argmax(cand0)), int(np.argmax(cand1))
        j, direction = (j0, 0) if cand0[j0] >= cand1[j1] else (j1, 1)
        eps, ratio = math.inf, None
    else:
        diff = l0 - l1
        j = int(np.argmax(np.abs(diff)))
        direction = 0 if diff[j] >= 0 else 1
        eps = float(abs(diff[j]))
        ratio = None
    f0s = f1s = None
    if d0.fractions is not None and d1.fractions is not None and not mismatched:
        f0s = tuple(np.array(d0.fractions, dtype=object)[i0])
        f1s = tuple(np.array(d1.fractions, dtype=object)[i1])
        ratios = [max(a / b, b / a) for a, b in zip(f0s, f1s)]
        j = max(range(len(ratios)), key=ratios.__getitem__)
        ratio = ratios[j]
        direction = 0 if f0s[j] >= f1s[j] else 1
        eps = _log_fraction(ratio)
    src, idx = (d0, i0[j]) if i0[j] >= 0 else (d1, i1[j])
    return PrivacyLoss(epsilon=eps, output=src.outputs[idx], direction=direction, log_p0=float(l0[j]),
                       log_p1=float(l1[j]), n_outputs=int(l0.shape[0]), mismatched=mismatched,
                       exact_ratio=ratio, _l0=l0, _l1=l1, _f0=f0s, _f1=f1s)


# --------------------------------------------------------------------------------------------------
# checking a claim on pairs
# --------------------------------------------------------------------------------------------------


class DistributionCache:
    """Exact distributions of one mechanism, computed once per distinct input."""

    def __init__(self, mechanism: Any) -> None:
        self.mechanism = mechanism
        self._store: dict[tuple[Any, ...], ExactDistribution] = {}
        self.evaluations = 0

    def __call__(self, x: Any) -> ExactDistribution:
        key = value_key(x)
        d = self._store.get(key)
        if d is None:
            d = exact_distribution(self.mechanism, x)
            self.evaluations += 1
            if len(self._store) > 4096:
                self._store.clear()
            self._store[key] = d
        return d


def violates(loss: PrivacyLoss, epsilon: float, delta: float) -> bool:
    """Does the pair break (epsilon, delta)-DP?  Pure claims compare ε (exactly for rational laws); approximate
    claims compare δ(epsilon) with delta.  Tolerances: :data:`REL_TOL`, :data:`ABS_TOL`."""
    if delta == 0:
        if loss.exact_ratio is not None:
            return loss.exact_ratio > Fraction(math.exp(epsilon))
        return loss.epsilon > epsilon * (1 + REL_TOL) + ABS_TOL
    return loss.delta(epsilon) > delta * (1 + REL_TOL) + ABS_TOL


@dataclass(frozen=True, eq=False)
class ExactPairResult:
    """The exact loss of one pair (``label`` names it) and whether it breaks the claim."""

    index: int
    label: str
    loss: PrivacyLoss
    delta_at_claim: float
    violation: bool

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "label": self.label, "loss": self.loss.to_dict(),
                "delta_at_claim": json_float(self.delta_at_claim), "violation": self.violation}


@dataclass(frozen=True, eq=False)
class ExactAuditResult(ViolationVerdict):
    """Exact check of a claim on a list of pairs.

    ``epsilon`` is the largest exact loss over the pairs (the mechanism's ε over its whole relation is at least
    this); ``worst`` is the pair attaining it (for δ > 0 claims: the pair with the largest δ(ε_claim)).
    ``violation`` is exact up to floating-point tolerance: some pair breaks the claim.  No violation means no
    examined pair breaks it -- pairs not examined may.
    """

    claim_epsilon: float
    claim_delta: float
    epsilon: float
    delta_at_claim: float
    violation: bool
    worst: ExactPairResult
    pairs: tuple[ExactPairResult, ...]
    evaluations: int


    def _measured(self) -> Measured:
        return Measured("exact_epsilon", self.epsilon)

    def _claim(self) -> PrivacyClaim:
        return PrivacyClaim(self.claim_epsilon, self.claim_delta)

    @property
    def epsilon_lower_bound(self) -> float:
        """The exact ε of the worst pair: a lower bound on the mechanism's ε (same role as in audits)."""
        return self.epsilon

    def summary(self) -> str:
        verdict = "VIOLATION" if self.violation else "no examined pair breaks the claim"
        claim = f"ε={self.claim_epsilon:g}" + (f", δ={self.claim_delta:g}" if self.claim_delta else "")
        return (f"exact: {verdict} of {claim}; worst pair '{self.worst.label}' has exact ε = {self.epsilon:.6g}, "
                f"δ(ε_claim) = {self.delta_at_claim:.3g} ({counted(len(self.pairs), 'pair')})")

    def __str__(self) -> str:
        return self.summary()

    def to_dict(self) -> dict[str, Any]:
        return {"claim": {"epsilon": json_float(self.claim_epsilon), "delta": json_float(self.claim_delta)},
                "epsilon": json_float(self.epsilon), "delta_at_claim": json_float(self.delta_at_claim),
                "violation": self.violation, "worst": self.worst.to_dict(), "evaluations": self.evaluations,
                "pairs": [p.to_dict() for p in self.pairs]}


def check_claim(epsilon: Any, delta: Any) -> tuple[float, float]:
    """Validate a privacy claim (ε > 0 finite, 0 <= δ < 1) by the same rule as :func:`dpverify.audit`."""
    from dpverify._validation import check_real

    return (check_real("epsilon", epsilon, low=0.0, high=math.inf, low_open=True, high_open=True),
            check_real("delta", delta, low=0.0, high=1.0, low_open=False, high_open=True))


def pair_result(cache: Callable[[Any], ExactDistribution], x0: Any, x1: Any, epsilon: float, delta: float,
                index: int = 0, label: str = "pair") -> ExactPairResult:
    """Exact loss of one pair under the claim (distributions from ``cache``)."""
    loss = exact_privacy_loss(cache(x0), cache(x1))
    return ExactPairResult(index=index, label=label, loss=loss, delta_at_claim=loss.delta(epsilon),
                           violation=violates(loss, epsilon, delta))


def exact_audit(mechanism: Any, pairs: Any, epsilon: float, delta: float = 0.0, *,
                relation: Any = None) -> ExactAuditResult:
    """Exact privacy check of ``mechanism`` on ``pairs`` (``(x0, x1)``, ``(x0, x1, label)`` or
    :class:`~dpverify.neighbours.Pair`; a ``relation`` validates them) against the claim (epsilon, delta).

    Returns
    -------
    ExactAuditResult
        The exact ε (the largest over the pairs), δ at the claimed ε, the worst pair and output, and the verdict:
        a violation here is a fact about the law, not a statistical statement.

    Raises
    ------
    ExactUnavailable
        The mechanism has no ``log_pmf``/``pmf``.
    InputError
        A claim out of range, no pairs, pairs that are not neighbours under ``relation``.

    Examples
    --------
    >>> import math, numpy as np
    >>> class Coin:                      # randomized response on one bit with ε = 1
    ...     def pmf(self, x):
    ...         p = math.e / (1 + math.e)
    ...         return np.array([p, 1 - p]) if x == 0 else np.array([1 - p, p])
    >>> r = exact_audit(Coin(), [(0, 1)], epsilon=0.5)
    >>> round(r.epsilon, 6), r.violation
    (1.0, True)
    """
    from dpverify.neighbours import as_pairs

    epsilon, delta = check_claim(epsilon, delta)
    plist = as_pairs(pairs, relation)
    cache = DistributionCache(mechanism)
    results = tuple(pair_result(cache, p.x0, p.x1, epsilon, delta, i, p.label) for i, p in enumerate(plist))
    return summarise(results, epsilon, delta, cache.evaluations)


def summarise(results: Sequence[ExactPairResult], epsilon: float, delta: float,
              evaluations: int) -> ExactAuditResult:
    """Combine per-pair results into an :class:`ExactAuditResult`."""
    if not results:
        raise InputError("no pairs to check; give at least one pair (x0, x1)")
    key = (lambda r: r.loss.epsilon) if delta == 0 else (lambda r: (r.delta_at_claim, r.loss.epsilon))
    worst = max(results, key=key)
    return ExactAuditResult(
        claim_epsilon=epsilon, claim_delta=delta, epsilon=max(r.loss.epsilon for r in results),
        delta_at_claim=max(r.delta_at_claim for r in results), violation=any(r.violation for r in results),
        worst=worst, pairs=tuple(results), evaluations=evaluations)
