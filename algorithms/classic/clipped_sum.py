"""Bounded (clipped) sum with Laplace noise, robust to NaN records.

Source: Dwork & Roth (2014), Thm 3.6 applied to ``Σ_i clip(x_i, l, u)``; Wilson, Zhang, Lam,
Desfontaines, Simmons-Marengo, Gipson, "Differentially Private SQL with Bounded User Contribution"
(PoPETs 2020), §3 (bounded sum); Google DP library ``BoundedSum``. Neighbours: add/remove one
record, so the ℓ1 sensitivity of the clipped sum is ``max(|l|, |u|)`` (a record contributes
``clip(v, l, u) ∈ [l, u]``). Release ``Σ clip(x_i, l, u) + Lap(max(|l|, |u|)/ε)``.

**NaN handling (the fix of dp-recorder's NaN injection, Cebere et al., arXiv 2602.17454):** ``np.clip`` propagates
NaN, so a single NaN record would make the released sum NaN — an output impossible on the
neighbour without that record (true ε = ∞, see
:class:`algorithms.broken.nan_through_clipping.SumNaNThroughClipping`). Here every NaN record is
first replaced by the fixed in-range value ``lower`` (then clipped, a no-op), so a NaN record
contributes exactly like a record equal to ``lower`` and the sensitivity bound holds for every input.
±inf records are clipped to ``upper``/``lower`` by ``np.clip`` as usual.

True ε = ε exactly (add/remove of a record at the bound with the larger magnitude attains it); 0.1
at ε = 0.1. Under *replace-one* neighbours the sensitivity would be ``u − l`` instead (not modelled).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ._validation import as_dataset, check_epsilon, check_finite, check_n
from .laplace import laplace_log_density
from ..noise import NoiseSource

__all__ = ["BoundedRecords", "ClippedSum", "check_bounds", "sum_sensitivity", "clip_records"]


def check_bounds(lower: float, upper: float) -> tuple[float, float]:
    """Finite clipping bounds with ``lower < upper``."""
    lo = check_finite("lower", lower)
    hi = check_finite("upper", upper)
    if not lo < hi:
        raise ValueError(f"lower must be < upper, got lower={lower!r}, upper={upper!r}")
    return lo, hi


def sum_sensitivity(lower: float, upper: float) -> float:
    """ℓ1 sensitivity ``max(|l|, |u|)`` of a clipped sum under add/remove-one neighbours."""
    return max(abs(float(lower)), abs(float(upper)))


def clip_records(records: np.ndarray, lower: float, upper: float) -> np.ndarray:
    """Map NaN records to ``lower``, then clip every record to ``[lower, upper]``."""
    return np.clip(np.where(np.isnan(records), lower, records), lower, upper)


@dataclass(frozen=True)
class BoundedRecords:
    """The claimed ε and the clipping bounds ``[lower, upper]`` of a mechanism over bounded records, checked on
    construction; the base of the clipped sums and means (:class:`ClippedSum`, :class:`~algorithms.classic.noisy_mean.
    NoisyMean` and their broken twins)."""

    epsilon: float
    lower: float
    upper: float
    delta: ClassVar[float] = 0.0

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_bounds(self.lower, self.upper)


@dataclass(frozen=True)
class ClippedSum(BoundedRecords):
    """``Σ clip(x_i, l, u) + Lap(max(|l|, |u|)/ε)``, NaN records counted as ``lower``.

    ``x`` is a 1-D dataset (possibly empty). Output: float64 of shape ``(n,)``.

    Noise steps (:meth:`release`): one ``"sum"`` Laplace step protecting ``Σ bounded_records(x)`` with ℓ1
    sensitivity ``max(|l|, |u|)`` (``scale=max(|l|, |u|)/ε``).  Twins that override
    :meth:`bounded_records` inherit :meth:`release`: the value is then what *they* sum, the declared
    sensitivity still ``max(|l|, |u|)``.
    """

    @property
    def scale(self) -> float:
        """Laplace scale ``max(|l|, |u|)/ε``."""
        return sum_sensitivity(self.lower, self.upper) / float(self.epsilon)

    def bounded_records(self, records: np.ndarray) -> np.ndarray:
        """The records that are summed: NaN mapped to ``lower``, all clipped to ``[lower, upper]``."""
        return clip_records(records, float(self.lower), float(self.upper))

    def __call__(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.release(x, n, NoiseSource(rng))

    def release(self, x: np.ndarray, n: int, noise: NoiseSource) -> np.ndarray:
        """The sampler written against an explicit noise source: one ``"sum"`` Laplace step protecting the
        sum of :meth:`bounded_records` with ℓ1 sensitivity ``max(|l|, |u|)``."""
        records = as_dataset(x)
        n = check_n(n)
        total = float(np.sum(self.bounded_records(records)))
        scale = self.scale
        return noise.add("sum", total, lambda rng: rng.laplace(0.0, scale, size=n),
                         sensitivity=sum_sensitivity(self.lower, self.upper), norm="l1", scale=scale,
                         kind="laplace")

    def log_density(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        """Exact log density of each output (``out`` of shape ``(m,)``) under the dataset ``x``, the law of
        :meth:`release`: with ``T = Σ bounded_records(x)`` and ``b =`` :attr:`scale`, ``ln f_x(o) = −ln(2b) − |o − T|/b``
        w.r.t. Lebesgue measure on ℝ plus counting measure on the atom NaN.  When ``T`` is NaN (a twin whose
        :meth:`bounded_records` lets NaN through) the output is NaN surely: ``0`` at NaN, ``−inf`` elsewhere; when
        ``T`` is a number, NaN outputs get ``−inf``.  Twins that override only :meth:`bounded_records` or
        :attr:`scale` (``SumMissingClipping``, ``SumNaNThroughClipping``) keep an exact law."""
        total = float(np.sum(self.bounded_records(as_dataset(x))))
        o = np.asarray(out, dtype=np.float64).reshape(-1)
        if np.isnan(total):
            return np.where(np.isnan(o), 0.0, -np.inf)
        return laplace_log_density(o, total, self.scale)

    def true_epsilon(self) -> float:
        """Exact ε under add/remove-one neighbours: the claimed ε."""
        return float(self.epsilon)
