"""The projected ε lower bound that scores candidate events in the event search (:mod:`dpverify.statistical.search`):
what the final test would give at ``n_test`` outputs per input if an event's search-sample frequencies were exact,
widened by the search estimate's own standard error."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from dpverify.statistical.stats import epsilon_lower_bound, wilson_lower, wilson_upper

__all__ = ["ProjectedBound"]


@dataclass
class ProjectedBound:
    """Projected ε lower bound of events seen ``k_num`` / ``k_den`` times in ``n_search`` outputs.

    The Wilson bounds the final test would give at ``n_test`` outputs if the frequencies were exact,
    widened by ``z_search`` standard errors of the search estimate itself.
    """

    n_search: int
    n_test: int
    z: float
    delta: float
    z_search: float = 1.0

    #: per count 0..n_search: ln of the lower bound less delta, ln of the upper bound, whether the first is defined
    _table: tuple[NDArray, NDArray, NDArray] | None = field(default=None, init=False, repr=False)

    def _bounds(self, k_num: NDArray, k_den: NDArray) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        p_num = np.asarray(k_num) / self.n_search
        p_den = np.asarray(k_den) / self.n_search
        se_num = np.sqrt(p_num * (1 - p_num) / self.n_search)
        se_den = np.sqrt(p_den * (1 - p_den) / self.n_search)
        lo = wilson_lower(p_num, self.n_test, self.z) - self.z_search * se_num
        hi = wilson_upper(p_den, self.n_test, self.z) + self.z_search * se_den
        return np.maximum(lo, 0.0), hi

    def __call__(self, k_num: NDArray, k_den: NDArray) -> NDArray[np.float64]:
        """The projected bound of every event (``k_num``, ``k_den``: its counts under the numerator's and the
        denominator's input, arrays of one shape)."""
        k_num, k_den = np.asarray(k_num), np.asarray(k_den)
        counts = k_num.dtype.kind in "iu" and k_den.dtype.kind in "iu"
        if self._table is None and counts and 2 * k_num.size > self.n_search:
            # integer counts of a small search half: both bounds of every count 0..n_search and their logs
            # (epsilon_lower_bound's) once, then looked up -- the same elementwise arithmetic, so the same values;
            # the search's one selection call for every feature's thresholds has some 20 elements per possible
            # count at a few hundred outputs per half
            lo, hi = self._bounds(np.arange(self.n_search + 1), np.arange(self.n_search + 1))
            p_low = lo - self.delta
            with np.errstate(divide="ignore", invalid="ignore"):
                self._table = np.log(np.where(p_low > 0, p_low, 1.0)), np.log(hi), p_low > 0
        if (self._table is not None and counts and k_num.size
                and 0 <= min(k_num.min(), k_den.min()) and max(k_num.max(), k_den.max()) <= self.n_search):
            log_lo, log_hi, positive = self._table
            return np.where(positive[k_num], log_lo[k_num] - log_hi[k_den], -np.inf)
        return epsilon_lower_bound(*self._bounds(k_num, k_den), self.delta)
