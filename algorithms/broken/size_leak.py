"""BROKEN: private mean that divides a noisy sum by the private ``len(data)`` and reports that count raw.

Bug pattern: the dataset size treated as public under add/remove neighbours -- the ``len(data)`` leak of
Cebere, Erb, Desfontaines, Bellet, Fitzsimons, "Privacy in Theory, Bugs in Practice: Grey-Box Auditing of
Differential Privacy Libraries" (PoPETs 2026, arXiv 2602.17454), reduced in dp-recorder's ``test_buggy_private_mean``
(``noisy_sum / len(data)``, ``len(data)`` flagged by ``ensure_equality``; dp-recorder's artifact appendix maps it to
Opacus, the test's own docstring to synthcity).  Reporting the record count next to the statistic is the same leak
made explicit.
Anchors-auditing.md §4.2 row #24.

Release ``(Y/m, m)`` with ``Y = Σ clip(x_i, l, u) + Lap(B/ε)``, ``B = max(|l|, |u|)`` and ``m = len(x)`` (NaN records
count as ``lower``).  The noisy sum alone is ε-DP; the two uses of ``m`` are not:

* ``m`` itself is released: under add/remove it differs between neighbours, so the event "second column = m" has
  probability 1 on one side and 0 on the other;
* even without that column, ``Y/m`` is ``Σclip/m + Lap(B/(mε))``: the Laplace scale depends on the private ``m``, and
  the log density ratio of scales ``B/(mε)`` and ``B/((m+1)ε)`` grows linearly in the output (the law of
  :class:`algorithms.broken.data_dependent_scale.MeanDataDependentScale`, reached here by a different code path:
  the noise step is calibrated right and the division comes after it).

True ε = **∞** (∞ at ε = 0.1).  Correct twin: :class:`algorithms.classic.noisy_mean.NoisyMean` (noisy sum and noisy
count, ε/2 each; the mean is their ratio).  Under replace-one neighbours with a truly public size the same code
would be ε-DP.

Output: float64 ``(n, 2)``: the released mean and the released count ``m``.

Replay: **other** -- the one ``"sum"`` step protects the clipped sum with its right sensitivity ``B`` and is the same
step on both neighbours; the leak is the use of ``len(x)`` after the noise, which a frozen-noise replay will NOT
flag (dp-recorder catches it only through its ``ensure_equality(n=...)`` hook) (``BUG_KIND = "other"``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..classic._validation import as_dataset, check_epsilon, check_n
from ..classic.clipped_sum import check_bounds, clip_records, sum_sensitivity
from ..noise import NoiseSource

__all__ = ["MeanLeaksSize"]


@dataclass(frozen=True)
class MeanLeaksSize:
    """Claims ε; releases ``((Σ clip(x) + Lap(B/ε)) / len(x), len(x))``. Output float64 ``(n, 2)``.

    Noise steps (:meth:`release`): one ``"sum"`` Laplace step protecting the clipped sum with ℓ1 sensitivity
    ``B = max(|l|, |u|)`` (``scale = B/ε``).
    """

    epsilon: float
    lower: float
    upper: float
    delta: ClassVar[float] = 0.0
    BUG_KIND: ClassVar[str] = "other"

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_bounds(self.lower, self.upper)

    @property
    def scale(self) -> float:
        """Laplace scale ``B/ε`` of the noisy sum."""
        return sum_sensitivity(self.lower, self.upper) / float(self.epsilon)

    def __call__(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.release(x, n, NoiseSource(rng))

    def release(self, x: np.ndarray, n: int, noise: Any) -> np.ndarray:
        """The noisy clipped sum (one ``"sum"`` step), divided by ``len(x)``, next to ``len(x)`` (the bug)."""
        records = as_dataset(x)
        if records.size == 0:
            raise ValueError("x must hold at least one record (the mean of an empty dataset is undefined)")
        n = check_n(n)
        total = float(np.sum(clip_records(records, float(self.lower), float(self.upper))))
        scale = self.scale
        noisy_sum = noise.add("sum", total, lambda g: g.laplace(0.0, scale, size=n),
                              sensitivity=sum_sensitivity(self.lower, self.upper), norm="l1", scale=scale,
                              kind="laplace")
        size = records.size  # BUG: private under add/remove, used as if it were public
        return np.column_stack([noisy_sum / size, np.full(n, float(size))])

    def log_density(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        """Exact log density of each row ``(y, c)`` (Lebesgue on the first coordinate × counting on the second):
        ``ln Lap(y − Σclip/m; B/(mε))`` where ``c = m``, −inf elsewhere."""
        records = as_dataset(x)
        m = records.size
        total = float(np.sum(clip_records(records, float(self.lower), float(self.upper))))
        rows = np.asarray(out, dtype=np.float64).reshape(-1, 2)
        b = self.scale / m
        ld = -math.log(2.0 * b) - np.abs(rows[:, 0] - total / m) / b
        return np.where(rows[:, 1] == m, ld, -np.inf)

    def true_epsilon(self) -> float:
        """∞ under add/remove-one neighbours."""
        return math.inf
