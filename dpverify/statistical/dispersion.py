"""Dispersion scores: the privacy loss of noise whose *scale* depends on the input, in many coordinates at once.

A mechanism that computes its noise scale from the data (a range, a norm or a count of the input instead of a
public bound -- the "data-dependent scale" bug; a smooth-sensitivity release with the wrong smoothing; a per-record
clipping bound learnt from the records) releases ``o_j = c_j + s_j(x)·z_j`` with the same centres under both inputs
and scales that differ.  For noise of the exponential-power family, ``f(z) ∝ exp(−|z/b|^p)`` (Laplace ``p = 1``,
Gaussian ``p = 2``), whose mean of ``|z|^p`` is ``m = b^p/p``, the privacy loss of a pair is

    ``L(o) = Σ_j (1/m_1j − 1/m_0j)·|o_j − c_j|^p / p + const``,

a weighted sum of the coordinates' dispersions with the weight ``1/m_0j − 1/m_1j`` up to sign: its level sets are
"the output is far from its centre in many coordinates together", the tails of a chi-square or of a sum of
exponentials, which no single coordinate, sum, maximum or linear score has, and which the product ratio score
(:class:`~dpverify.statistical.cells.ProductRatioScore`) reaches only up to its outermost quantile bin (the loss keeps
growing beyond it, and the audit's best events lie there).

:func:`fit_dispersion` estimates these scores on the selection half, in units of the pooled scale of each
coordinate: the centres ``c_j`` are the pooled medians, ``m_ij`` the mean of ``|u_j|^p`` under input ``i``
(``u_j`` the coordinate in those units), and a coordinate is used when its two means differ significantly (a
two-sample z-test at :data:`PVALUE` / ``k``, Bonferroni over the ``k`` coordinates).  One score per power
``p = 1, 2`` (the noise's family is unknown); none when fewer than two coordinates are used (one coordinate's two-sided
tails are searched anyway).  Mechanisms whose centres move with the input as well have a loss with a linear part
too, which the linear and product ratio scores see; these scores are then a poorer candidate, never a wrong bound:
like every fitted score they are fitted on the selection half only, and the scoring half and the final test stay
independent of them."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import special

from dpverify.statistical.anchors import SortedColumn
from dpverify.statistical.columns import MAX_COLUMNS
from dpverify.statistical.features import transposed_copy
from dpverify.statistical.innovations import fine_grained_sorted

__all__ = ["DispersionScore", "fit_dispersion", "POWERS", "PVALUE"]

#: the exponents ``p`` of the scores fitted: Laplace-like (1) and Gaussian-like (2) noise
POWERS = (1, 2)
#: family-wise level of the per-coordinate tests that choose the coordinates used
PVALUE = 1e-3


@dataclass(frozen=True)
class DispersionScore:
    """``Σ_j weights_j·|(o_j − centres_j)/scales_j|^power`` over the output columns ``columns``: positive weights
    for the coordinates wider under the second input, negative for those wider under the first.  A row with a NaN
    or an infinite value in a used column scores NaN (no threshold event holds it)."""

    columns: tuple[int, ...]
    centres: tuple[float, ...]
    scales: tuple[float, ...]
    weights: tuple[float, ...]
    power: int

    @property
    def name(self) -> str:
        cols = ",".join(map(str, self.columns[:6])) + (",…" if len(self.columns) > 6 else "")
        return f"dispersion{self.power}(out[{cols}])"

    def __call__(self, out: NDArray) -> NDArray[np.float64]:
        rows = np.asarray(out)
        rows = rows.reshape(len(rows), -1)
        # the used columns as contiguous float64 rows (a column of a row-major output is a strided view)
        return self._of(transposed_copy(rows, np.float64, self.columns), range(len(self.columns)))

    def on_columns(self, out: NDArray, cols: NDArray) -> NDArray[np.float64]:
        """The score of the float rows ``out`` from ``cols``, their first columns as float64 rows (NaN as +inf:
        :meth:`dpverify.statistical.columns.SortedColumns.by_column`): the same values as calling it on ``out``."""
        if max(self.columns) >= cols.shape[0] or cols.shape[1] != len(out):
            return self(out)
        return self._of(cols, self.columns)

    def _of(self, cols: NDArray, where: Sequence[int]) -> NDArray[np.float64]:
        s = np.zeros(cols.shape[1])
        u = np.empty(cols.shape[1])
        with np.errstate(invalid="ignore", over="ignore"):
            for i, c, sc, w in zip(where, self.centres, self.scales, self.weights):
                np.subtract(cols[i], c, out=u)
                np.abs(u, out=u)
                if self.power == 1:
                    u *= w / sc
                else:
                    u /= sc
                    np.power(u, self.power, out=u)
                    u *= w
                s += u
        s[~np.isfinite(s)] = np.nan
        return s


def fit_dispersion(sel0: NDArray, sel1: NDArray, sorted_column: SortedColumn | None = None,
                   pooled_column: Callable[[int], NDArray] | None = None) -> list[DispersionScore]:
    """The dispersion scores of a vector search with selection-half outputs ``sel0``, ``sel1`` (``(n, k)`` numeric
    rows, ``k >= 2``): one per power in :data:`POWERS` that uses two coordinates or more, of the first
    :data:`MAX_COLUMNS` columns that are finite and fine-grained noise on both halves
    (:func:`~dpverify.statistical.innovations.fine_grained_sorted`: not labels, bits or a "not released" mass).
    Empty where no score applies.  ``sorted_column(j)``: column ``j`` of both halves with NaN as +inf, sorted (the
    search's :class:`~dpverify.statistical.columns.SortedColumns`); sorted here without it.  ``pooled_column(j)``: the
    two sorted together (the search's, which its other fits and events share; merged here without it)."""
    if (sel0.ndim != 2 or sel0.shape[1] < 2 or sel0.dtype.kind not in "biuf" or sel1.dtype.kind not in "biuf"
            or min(len(sel0), len(sel1)) < 8):
        return []
    k = min(sel0.shape[1], MAX_COLUMNS)
    # the two-sided normal quantile of the Bonferroni level over the k coordinates tested
    z_crit = float(-special.ndtri(PVALUE / (2 * k)))
    stats: dict[int, list[tuple[int, float, float, float]]] = {p: [] for p in POWERS}
    for j in range(k):
        s0, s1 = (sorted_column(j) if sorted_column is not None
                  else (np.sort(sel0[:, j].astype(np.float64)), np.sort(sel1[:, j].astype(np.float64))))
        if not all(np.isfinite(s[0]) and np.isfinite(s[-1]) for s in (s0, s1)):
            continue
        if pooled_column is not None:
            pooled = pooled_column(j)
        else:
            pooled = np.concatenate([s0, s1])
            pooled.sort(kind="stable")             # two sorted runs: merged in linear time
        if not fine_grained_sorted(pooled):
            continue
        centre = float(pooled[len(pooled) // 2])
        d0, d1 = np.abs(s0.astype(np.float64) - centre), np.abs(s1.astype(np.float64) - centre)
        for p in POWERS:
            u0, u1 = (d0, d1) if p == 1 else (d0 ** p, d1 ** p)
            m0, m1 = float(u0.mean()), float(u1.mean())
            unit = (len(u0) * m0 + len(u1) * m1) / (len(u0) + len(u1))     # the pooled mean of |o - c|^p
            if not (m0 > 0 and m1 > 0):
                continue
            se = math.sqrt(float(u0.var()) / len(u0) + float(u1.var()) / len(u1))
            if se > 0 and abs(m1 - m0) / se > z_crit:
                # in units where the pooled mean is 1: weight 1/m0 - 1/m1 (the loss's coefficient, up to 1/p)
                stats[p].append((j, centre, unit ** (1.0 / p), unit / m0 - unit / m1))
    return [DispersionScore(tuple(t[0] for t in st), tuple(t[1] for t in st), tuple(t[2] for t in st),
                            tuple(t[3] for t in st), p) for p, st in stats.items() if len(st) >= 2]
