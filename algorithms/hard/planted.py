"""Mechanisms with a planted privacy loss whose parameters are drawn at random (``benchmarks/random_cases.py``).

The hard suite's mechanisms are fixed instances; these are the same failure classes as parametric families, so
that the auditor can be measured on many instances nobody chose by hand:

* :class:`MarkedLaplace` -- *mixed outputs*: ``x + Lap(scale)`` per coordinate, except that with a probability
  that depends on the input (``p_low`` below a public trigger on ``x[0]``, ``p_high`` at or above it) a marker is
  released instead: a row of NaN (a suppressed answer), a constant sentinel, or the input itself (a debug branch:
  a *rare leak* when the probability is small).  The loss of the mass part is ``ln(p1/p0)``, that of the
  continuous part ``ln((1 − p1)/(1 − p0))`` plus the Laplace loss, at most ``‖x1 − x0‖₁/scale`` in absolute
  value, so the true ε of a pair is ``max(|ln(p1/p0)|, |ln((1 − p1)/(1 − p0))| + ‖x1 − x0‖₁/scale)`` (Dwork &
  Roth 2014, Theorem 3.6, for the Laplace part), and ∞ for the input marker released with positive probability.
* :class:`TabulatedPMF` -- an arbitrary discrete law per input (a table of pmfs over ``0..m-1``): true ε =
  ``max_o |ln(p_x0(o)/p_x1(o))|``, where the planted outcome may be rare.
* :class:`GaussianVector` -- an *(ε, δ) claim*: ``x + N(0, σ²)`` per coordinate; a pair at ℓ2 distance ``s`` has
  ``δ(ε) = Φ(s/2σ − εσ/s) − e^ε Φ(−s/2σ − εσ/s)`` (Balle & Wang, ICML 2018, Theorem 8), so its true ε at the
  mechanism's ``delta`` is the root of ``δ(ε) = delta``.
* :class:`ScaledNoise` -- *a data-dependent noise scale in many coordinates*: ``c_j + b·e^{s_j}·z_j`` with Laplace
  or Gaussian ``z_j``, where the input holds both the centres ``c`` and the log scale factors ``s`` (a stand-in for a
  noise scale computed from the data: a range, a norm or a record count).  Two inputs whose scales differ in any
  coordinate have true ε = ∞ (the log density ratio grows with ``|o_j − c_j|``); with equal scales and Laplace noise
  it is ``Σ_j |c_j − c'_j| / (b·e^{s_j})`` (Dwork & Roth 2014, Theorem 3.6), with Gaussian noise ∞ again.
* :class:`IndependentRR` -- *joint events in many coordinates*: randomized response on each bit of a bit vector
  with its own ``ε_j`` (Warner 1965; Erlingsson, Pihur & Korolova, CCS 2014, sec. 3 for per-bit budgets): true ε
  of a pair = ``Σ_j ε_j`` over the bits in which the inputs differ, attained only by the joint event on all of them.

Each is a frozen, picklable ``mechanism(x, n, rng) -> ndarray`` with ``epsilon_on(x0, x1)`` (the true ε of a pair)
and ``log_density(x, out)`` or ``pmf(x)`` for :mod:`dpverify.statistical.oracle`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

from ..classic.gaussian import gaussian_delta
from .gaussian_sigma import gaussian_draws, gaussian_log_density

#: the markers of :class:`MarkedLaplace` besides a constant (a float)
MARKERS = ("nan", "input")


def _ln_ratio(a: float, b: float) -> float:
    """``|ln(a/b)|`` for probabilities, ∞ when exactly one is 0, 0 when both are."""
    if a == b:
        return 0.0
    if a == 0.0 or b == 0.0:
        return math.inf
    return abs(math.log(a / b))


@dataclass(frozen=True)
class MarkedLaplace:
    """``x + Lap(scale)`` per coordinate, or, with probability ``p(x)`` (``p_high`` if ``x[0] >= trigger``, else
    ``p_low``), a marker: ``"nan"`` (a row of NaN), ``"input"`` (``x`` itself; inputs must then be integer-valued,
    so that a Laplace draw, which is never an integer vector, cannot be mistaken for another input's marker in
    :meth:`log_density`) or a float (that constant in every coordinate)."""

    scale: float
    p_low: float = 0.0
    p_high: float = 0.0
    trigger: float = 0.5
    marker: str | float = "nan"

    def __post_init__(self) -> None:
        if not self.scale > 0:
            raise ValueError(f"scale must be positive, got {self.scale!r}")
        for name in ("p_low", "p_high"):
            p = getattr(self, name)
            if not 0.0 <= p < 1.0:
                raise ValueError(f"{name} must be in [0, 1), got {p!r}")
        if isinstance(self.marker, str) and self.marker not in MARKERS:
            raise ValueError(f"marker must be one of {MARKERS} or a float, got {self.marker!r}")

    def p(self, x: object) -> float:
        """The probability of releasing the marker on input ``x``."""
        return self.p_high if float(np.ravel(np.asarray(x, dtype=np.float64))[0]) >= self.trigger else self.p_low

    def _marker_row(self, v: np.ndarray) -> np.ndarray:
        if self.marker == "nan":
            return np.full(v.shape, np.nan)
        if self.marker == "input":
            return v.copy()
        return np.full(v.shape, float(self.marker))

    def __call__(self, x: object, n: int, rng: np.random.Generator) -> np.ndarray:
        v = np.asarray(x, dtype=np.float64)
        out = v + rng.laplace(0.0, self.scale, size=(n,) + v.shape)
        out[rng.random(n) < self.p(x)] = self._marker_row(v)
        return out

    def _atoms(self, rows: np.ndarray) -> np.ndarray:
        """Rows that are a marker of some input (the atoms of the dominating measure)."""
        if self.marker == "nan":
            return np.isnan(rows).all(axis=1)
        if self.marker == "input":
            return (rows == np.round(rows)).all(axis=1)
        return (rows == float(self.marker)).all(axis=1)

    def log_density(self, x: object, out: np.ndarray) -> np.ndarray:
        """With respect to counting measure on the markers plus Lebesgue measure elsewhere: ``ln p(x)`` on ``x``'s
        marker, ``−inf`` on another input's, ``ln(1 − p(x)) + Σ_j (−ln(2·scale) − |o_j − x_j|/scale)`` elsewhere."""
        v = np.asarray(x, dtype=np.float64).reshape(-1)
        rows = np.asarray(out, dtype=np.float64).reshape(len(out), -1)
        p = self.p(x)
        atom = self._atoms(rows)
        mine = atom & (rows == v).all(axis=1) if self.marker == "input" else atom
        with np.errstate(divide="ignore", invalid="ignore"):
            cont = math.log1p(-p) + (-math.log(2.0 * self.scale) - np.abs(rows - v) / self.scale).sum(axis=1)
            ld = np.where(atom, np.where(mine, math.log(p) if p > 0 else -np.inf, -np.inf), cont)
        return ld

    def epsilon_on(self, x0: object, x1: object) -> float:
        """True ε of the pair (module docstring)."""
        p0, p1 = self.p(x0), self.p(x1)
        if self.marker == "input" and (p0 > 0 or p1 > 0):
            return math.inf
        dist = float(np.abs(np.asarray(x0, dtype=np.float64) - np.asarray(x1, dtype=np.float64)).sum())
        return max(_ln_ratio(p1, p0), abs(math.log1p(-p1) - math.log1p(-p0)) + dist / self.scale)


@dataclass(frozen=True)
class TabulatedPMF:
    """Input ``i`` (an integer) -> an outcome code in ``0..m-1`` drawn from ``table[i]`` (a pmf)."""

    table: tuple[tuple[float, ...], ...]

    def __post_init__(self) -> None:
        sizes = {len(row) for row in self.table}
        if len(sizes) != 1 or not self.table:
            raise ValueError("table must hold one or more pmfs of one length")
        for i, row in enumerate(self.table):
            r = np.asarray(row, dtype=np.float64)
            if (r < 0).any() or abs(r.sum() - 1.0) > 1e-9:
                raise ValueError(f"table[{i}] is not a pmf (negative entries or sum {r.sum()!r})")

    def pmf(self, x: object) -> np.ndarray:
        return np.asarray(self.table[int(np.ravel(np.asarray(x))[0])], dtype=np.float64)

    def __call__(self, x: object, n: int, rng: np.random.Generator) -> np.ndarray:
        cdf = np.cumsum(self.pmf(x))
        return np.minimum(np.searchsorted(cdf, rng.random(n) * cdf[-1], side="right"), len(cdf) - 1)

    def epsilon_on(self, x0: object, x1: object) -> float:
        p, q = self.pmf(x0), self.pmf(x1)
        return max((_ln_ratio(float(a), float(b)) for a, b in zip(p, q)), default=0.0)


@dataclass(frozen=True)
class IndependentRR:
    """Each bit ``j`` of a 0/1 input vector kept with probability ``e^{ε_j}/(1 + e^{ε_j})``, else flipped;
    output: int8 bits ``(n, d)``."""

    eps_bits: tuple[float, ...]

    @property
    def keep(self) -> np.ndarray:
        e = np.asarray(self.eps_bits, dtype=np.float64)
        return 1.0 / (1.0 + np.exp(-e))

    def _bits(self, x: object) -> np.ndarray:
        b = np.asarray(x).reshape(-1).astype(np.int8)
        if b.shape != (len(self.eps_bits),) or ((b != 0) & (b != 1)).any():
            raise ValueError(f"input must be {len(self.eps_bits)} bits (0 or 1), got {np.asarray(x).tolist()!r}")
        return b

    def __call__(self, x: object, n: int, rng: np.random.Generator) -> np.ndarray:
        flip = rng.random((n, len(self.eps_bits))) >= self.keep
        return (self._bits(x) ^ flip).astype(np.int8)

    def log_density(self, x: object, out: np.ndarray) -> np.ndarray:
        same = np.asarray(out).reshape(len(out), -1) == self._bits(x)
        keep = self.keep
        return np.where(same, np.log(keep), np.log1p(-keep)).sum(axis=1)

    def epsilon_on(self, x0: object, x1: object) -> float:
        return float(np.asarray(self.eps_bits)[self._bits(x0) != self._bits(x1)].sum())


@dataclass(frozen=True)
class GaussianVector:
    """``x + N(0, sigma²)`` per coordinate; ``delta``: the δ at which :meth:`epsilon_on` reports a pair's true ε."""

    sigma: float
    delta: float

    def __call__(self, x: object, n: int, rng: np.random.Generator) -> np.ndarray:
        return gaussian_draws(x, n, self.sigma, rng)

    def log_density(self, x: object, out: np.ndarray) -> np.ndarray:
        return gaussian_log_density(x, out, self.sigma)

    def epsilon_on(self, x0: object, x1: object) -> float:
        """The smallest ε with ``δ(ε) <= delta`` on the pair (module docstring); 0 when ``δ(0) <= delta``."""
        s = float(np.linalg.norm(np.ravel(np.asarray(x0, dtype=np.float64) - np.asarray(x1, dtype=np.float64))))
        if s == 0.0 or gaussian_delta(self.sigma, 0.0, s) <= self.delta:
            return 0.0
        hi = 1.0
        while gaussian_delta(self.sigma, hi, s) > self.delta:
            hi *= 2.0
        return float(brentq(lambda e: gaussian_delta(self.sigma, e, s) - self.delta, 0.0, hi, xtol=1e-12))


@dataclass(frozen=True)
class ScaledNoise:
    """``x[0] + scale·exp(x[1])·z`` per coordinate, ``z`` standard Laplace (``kind="laplace"``) or standard normal
    (``"gaussian"``): an input is a ``(2, d)`` array of centres and log scale factors."""

    scale: float
    kind: str = "laplace"

    def __post_init__(self) -> None:
        if not self.scale > 0:
            raise ValueError(f"scale must be positive, got {self.scale!r}")
        if self.kind not in ("laplace", "gaussian"):
            raise ValueError(f"kind must be 'laplace' or 'gaussian', got {self.kind!r}")

    def _parts(self, x: object) -> tuple[np.ndarray, np.ndarray]:
        v = np.asarray(x, dtype=np.float64)
        if v.ndim != 2 or v.shape[0] != 2:
            raise ValueError(f"an input is a (2, d) array of centres and log scale factors, got shape {v.shape}")
        return v[0], self.scale * np.exp(v[1])

    def __call__(self, x: object, n: int, rng: np.random.Generator) -> np.ndarray:
        centre, b = self._parts(x)
        z = rng.laplace(size=(n, len(centre))) if self.kind == "laplace" else rng.normal(size=(n, len(centre)))
        return centre + b * z

    def log_density(self, x: object, out: np.ndarray) -> np.ndarray:
        centre, b = self._parts(x)
        z = (np.asarray(out, dtype=np.float64) - centre) / b
        if self.kind == "laplace":
            return (-np.log(2 * b) - np.abs(z)).sum(axis=1)
        return (-np.log(b) - 0.5 * math.log(2 * math.pi) - 0.5 * z * z).sum(axis=1)

    def epsilon_on(self, x0: object, x1: object) -> float:
        """∞ when the scales differ in a coordinate or the noise is Gaussian and the centres differ; else the
        Laplace loss's supremum ``Σ_j |c_j − c'_j| / b_j`` (0 for equal inputs)."""
        (c0, b0), (c1, b1) = self._parts(x0), self._parts(x1)
        if not np.array_equal(b0, b1):
            return math.inf
        moved = float(np.sum(np.abs(c0 - c1) / b0))
        return moved if self.kind == "laplace" or moved == 0.0 else math.inf
