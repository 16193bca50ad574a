"""Innovations: a vector output's coordinates unmixed in their order, for noise mixed by a causal linear map.

Counters under continual observation (the binary and tree mechanisms of Chan, Shi & Song, "Private and Continual
Release of Statistics", ACM TISSEC 2011, §3.4, and of Dwork, Naor, Pitassi & Rothblum, STOC 2010), factorised linear
releases and running sums publish ``o = M·(a + z)``: the answers ``a`` of the input, independent noise ``z``, and a
mixing ``M`` that is lower triangular in the order of release (output ``t`` uses the noise drawn up to ``t``).  The
privacy loss lives in the noise's coordinates -- for Laplace noise ``Σ_v (|z_v − a'_v| − |z_v − a_v|)/b_v``, a sum
over the few nodes the changed record is counted in -- and the output's coordinates mix it: no coordinate, plain
sum, first difference (the unmixing of running sums only) or linear score of the output has its level sets.

The unmixing can be estimated.  The covariance of ``o`` is ``M·D²·Mᵀ`` (``D`` the noise's standard deviations), and
since ``M·D`` is lower triangular with a positive diagonal it *is* the Cholesky factor of that covariance (the
factorisation is unique).  So ``e = L⁻¹·(o − mean)``, ``L`` the Cholesky factor of the covariance estimated on the
search's selection half (within each input, pooled: the two inputs' means differ, their noise does not), are the
noise's coordinates at unit variance -- each output coordinate less its best linear prediction from the ones
before it, scaled: the *innovations*.  At unit variance the Laplace loss weighs every innovation alike, so the
clipped sum at the innovations' medians under the two inputs
(:func:`dpverify.statistical.anchors.median_clipped_sum`) has the loss's level sets again, whatever the noise
scale of each node.

:func:`innovation_sum` builds that feature, or returns ``None`` where it adds nothing: outputs that are not finite
numeric rows of two columns or more on the selection half, and mixings the search already undoes -- independent
coordinates (the unmixing is the identity) and running sums (it is the first differences), each to within
:data:`TRIVIAL` of a coefficient.  A column that is a linear function of the ones before it (a total released
beside its parts) is left out.  Like the search's other fitted scores it is fitted on the selection half only:
the scoring half and the test stay independent of it.  Mixings that are not triangular in the release order
(hierarchical histograms made consistent) get some other triangular unmixing, whose coordinates are not the
noise's: a poor candidate, never a wrong bound."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import LinAlgError, cholesky, solve_triangular

from dpverify.statistical.anchors import MEDIAN_ROWS, ClippedSum, median_clipped_sum
from dpverify.statistical.columns import MAX_COLUMNS

__all__ = ["InnovationSum", "Whitening", "whitening", "innovation_map", "innovation_sum", "unmixed_sum",
           "fine_grained", "fine_grained_sorted", "TRIVIAL", "TRIVIAL_SE"]

#: largest coefficient (relative to the diagonal, in standard units) by which an unmixing may differ from the identity
#: or from the first differences and still count as one of them (:func:`innovation_map`), or :data:`TRIVIAL_SE`
#: standard errors of an estimated coefficient (about 1/sqrt(rows)) where that is more: the error from 2 x 8,192 rows
#: is about 0.008, from the few hundred rows of an anytime audit's first checkpoints about 0.05
TRIVIAL, TRIVIAL_SE = 0.1, 5.0
#: least share of a column's variance that is not a linear function of the columns before it, for the column to have
#: an innovation of its own (:func:`innovation_map`)
NEW_VARIANCE = 1e-6
#: least number of distinct values, and largest share of the rows one value may hold, of every column for the rows to
#: count as noise of a continuous or fine-grained law (:func:`innovation_map`)
MIN_DISTINCT, MAX_ATOM = 16, 0.25
#: rows of each selection half whose innovations' medians :func:`innovation_sum` takes: the innovations' moves are
#: the noise's, a few hundredths of its scale for a small ε spread over several nodes, which the medians of
#: :data:`~dpverify.statistical.anchors.MEDIAN_ROWS` rows do not tell from their noise
INNOVATION_ROWS = 65_536


@dataclass(frozen=True, eq=False)
class Whitening:
    """The noise of the selection half's usable columns ``columns`` at unit variance: ``e = unmix·(o[columns] − mean)``
    with ``unmix`` lower triangular (:func:`whitening`), ``mean`` the input's own column means (``mean0``, ``mean1``);
    ``centred`` the rows it was fitted on, both inputs', each less its own means."""

    columns: tuple[int, ...]
    unmix: NDArray = field(repr=False)
    mean0: NDArray = field(repr=False)
    mean1: NDArray = field(repr=False)
    sd: NDArray = field(repr=False)
    centred: NDArray = field(repr=False)

    def offset(self, unmix: NDArray) -> NDArray[np.float64]:
        """The offset that centres ``unmix·o[columns]`` between the two inputs' means."""
        return -unmix @ ((self.mean0 + self.mean1) / 2)


def whitening(sel0: NDArray, sel1: NDArray) -> Whitening | None:
    """The columns of the selection-half outputs ``sel0`` and ``sel1`` (``(n, k)`` numeric rows) that are noise (of
    the first :data:`MAX_COLUMNS`, those that are finite on both halves and fine-grained -- :data:`MIN_DISTINCT` values
    or more and no value held by more than :data:`MAX_ATOM` of the rows, not labels, bits or SVT's "not released" --
    less those a linear function of the ones before), whitened by the Cholesky factor of their covariance on the
    first :data:`~dpverify.statistical.anchors.MEDIAN_ROWS` rows of each half.  ``None`` when the rows are not numeric
    rows of two columns or more, or fewer than two columns are kept."""
    if (sel0.ndim != 2 or sel0.shape[1] < 2 or sel0.dtype.kind not in "biuf" or sel1.dtype.kind not in "biuf"
            or min(len(sel0), len(sel1)) < 8):
        return None
    k = min(sel0.shape[1], MAX_COLUMNS)
    a = np.array(sel0[:MEDIAN_ROWS, :k], dtype=np.float64)
    b = np.array(sel1[:MEDIAN_ROWS, :k], dtype=np.float64)
    usable = np.isfinite(a).all(axis=0) & np.isfinite(b).all(axis=0)
    usable[usable] = fine_grained(np.concatenate([a[:, usable], b[:, usable]]))
    if usable.sum() < 2:
        return None
    a[:, ~usable] = 0.0                                  # (left out below; a and b are copies)
    b[:, ~usable] = 0.0
    mean0, mean1 = a.mean(axis=0), b.mean(axis=0)
    centred = np.concatenate([a - mean0, b - mean1])
    sd = centred.std(axis=0)
    sd[~usable] = 1.0                                    # (left out below)
    corr = (centred / sd).T @ (centred / sd) / (len(centred) - 2)
    kept: list[int] = []
    for j in np.flatnonzero(usable).tolist():            # Cholesky on the columns kept so far, one column more
        try:
            factor = cholesky(corr[np.ix_(kept + [j], kept + [j])], lower=True)
        except LinAlgError:
            continue
        if factor[-1, -1] ** 2 > NEW_VARIANCE:
            kept.append(j)
    if len(kept) < 2:
        return None
    factor = cholesky(corr[np.ix_(kept, kept)], lower=True)
    unmix = solve_triangular(factor, np.eye(len(kept)), lower=True) / sd[kept]     # e = unmix·(o − mean)
    return Whitening(tuple(kept), unmix, mean0[kept], mean1[kept], sd[kept], centred[:, kept])


def innovation_map(sel0: NDArray, sel1: NDArray,
                   white: Whitening | None = None) -> tuple[tuple[int, ...], NDArray, NDArray] | None:
    """The unmixing fitted on the selection-half outputs ``sel0`` and ``sel1`` (``(n, k)`` numeric rows): the
    output columns it uses (those of :func:`whitening`), and the lower-triangular matrix ``A`` and offset ``c`` with
    ``e = A·o[columns] + c`` the innovations at unit variance.  ``None`` where :func:`whitening` is, and when the
    unmixing is the identity or the first differences to within :data:`TRIVIAL` (or :data:`TRIVIAL_SE` standard
    errors; the search's coordinates and :class:`~dpverify.statistical.anchors.ClippedSum`'s differences view have
    those).  ``white``: :func:`whitening` of the same halves, when the caller has it."""
    white = whitening(sel0, sel1) if white is None else white
    if white is None:
        return None
    kept = list(white.columns)
    if _trivial(white.unmix, kept, white.sd, max(TRIVIAL, TRIVIAL_SE / float(np.sqrt(len(white.centred))))):
        return None
    return white.columns, white.unmix, white.offset(white.unmix)


def fine_grained(rows: NDArray) -> NDArray[np.bool_]:
    """Which columns of ``rows`` have :data:`MIN_DISTINCT` distinct values or more and no value held by more than
    :data:`MAX_ATOM` of the rows: noise of a continuous or fine-grained law (Laplace, Gaussian, geometric at small
    ε), not labels, bits or a point mass standing for "not released" (SVT's answers), whose dependence a linear
    unmixing does not undo."""
    s = np.sort(rows, axis=0)
    return np.array([fine_grained_sorted(s[:, j]) for j in range(s.shape[1])], dtype=bool)


def fine_grained_sorted(column: NDArray) -> bool:
    """:func:`fine_grained` of one column, sorted."""
    new = np.flatnonzero(column[1:] != column[:-1])
    if len(new) + 1 < MIN_DISTINCT:
        return False
    # the longest run of one value: the largest gap between the starts of consecutive runs
    starts = np.concatenate([[0], new + 1, [len(column)]])
    return bool(np.diff(starts).max() <= MAX_ATOM * len(column))


def _trivial(unmix: NDArray, kept: list[int], sd: NDArray, within: float) -> bool:
    """Whether ``unmix`` (rows scaled to a unit diagonal) is the identity or the first differences of consecutive
    columns, to within ``within`` of each coefficient in standard units (coefficient ``i`` of row ``j`` times
    ``sd_i / sd_j``, ``sd`` the columns' standard deviations: a column of a hundred times the scale of another
    multiplies the noise of the estimated coefficient by a hundred in raw units)."""
    rows = unmix / np.diag(unmix)[:, None]
    units = sd[None, :] / sd[:, None]
    eye = np.eye(len(kept))
    if np.abs((rows - eye) * units).max() <= within:
        return True
    if kept != list(range(kept[0], kept[0] + len(kept))):
        return False
    return bool(np.abs((rows - (eye - np.eye(len(kept), k=-1))) * units).max() <= within)


@dataclass(frozen=True, eq=False)
class InnovationSum:
    """The clipped sum ``clipped`` of the innovations ``e = matrix·o[columns] + offset`` (:func:`innovation_map`):
    for Laplace noise mixed by a causal linear map, the privacy loss up to an affine map.  A row with a NaN or an
    infinite value in the used columns gives NaN innovations, and the clipped sum makes such a row +inf (a row's
    innovations mix all its columns before it, so no one innovation can be clipped as its own column would be)."""

    columns: tuple[int, ...]
    matrix: NDArray = field(repr=False)
    offset: NDArray = field(repr=False)
    clipped: ClippedSum
    #: what the unmixed coordinates are (:mod:`dpverify.statistical.independent`: "independent components")
    label: str = "innovations"

    @property
    def name(self) -> str:
        return f"clipped-sum({self.label}, medians)"

    def innovations(self, cols: NDArray) -> NDArray[np.float64]:
        """The innovations, one row per innovation, from ``cols`` (the used output columns, one row each)."""
        return _unmixed(self.matrix, self.offset, cols)

    def __call__(self, out: NDArray) -> NDArray[np.float64]:
        rows = np.asarray(out)
        rows = rows.reshape(len(rows), -1)
        last = self.columns[-1] + 1
        used = rows[:, :last] if self.columns == tuple(range(last)) else rows[:, list(self.columns)]
        # (the transposed rows go to the product as they are: one contiguous row per innovation comes out)
        return self.clipped.on_columns(rows, self.innovations(_nan_for_nonfinite(np.asarray(used, np.float64)).T))

    def on_columns(self, out: NDArray, cols: NDArray) -> NDArray[np.float64]:
        """The feature of the float rows ``out`` from ``cols``, their first columns as float64 rows (NaN as +inf:
        :meth:`dpverify.statistical.columns.SortedColumns.by_column`): the same values as calling it on ``out``."""
        if max(self.columns) >= cols.shape[0] or cols.shape[1] != len(out):
            return self(out)
        return self.clipped.on_columns(out, self.innovations(_nan_for_nonfinite(cols[list(self.columns)])))


def _unmixed(matrix: NDArray, offset: NDArray, cols: NDArray) -> NDArray[np.float64]:
    """``matrix·cols + offset``: the innovations, one row per innovation, of the used output columns ``cols`` (one
    row each)."""
    with np.errstate(invalid="ignore", over="ignore"):
        e = matrix @ cols
        e += offset[:, None]
    return e


def _nan_for_nonfinite(cols: NDArray) -> NDArray[np.float64]:
    """``cols`` with every NaN and infinite value as NaN (a copy only where there is one): a row's innovations are
    then NaN, whichever of the two its source held."""
    return cols if np.isfinite(cols).all() else np.where(np.isfinite(cols), cols, np.nan)


def innovation_sum(sel0: NDArray, sel1: NDArray, white: Whitening | None = None) -> InnovationSum | None:
    """The :class:`InnovationSum` of a vector search with selection-half outputs ``sel0``, ``sel1``: the unmixing
    of :func:`innovation_map`, then the clipped sum at the innovations' medians under the two inputs
    (:func:`~dpverify.statistical.anchors.median_clipped_sum`; one moving innovation other than the first suffices:
    it is no column of the output, while the first is its first column rescaled).  ``None`` where either is."""
    found = innovation_map(sel0, sel1, white)
    return None if found is None else unmixed_sum(sel0, sel1, *found)


def unmixed_sum(sel0: NDArray, sel1: NDArray, columns: tuple[int, ...], matrix: NDArray, offset: NDArray,
                label: str = "innovations") -> InnovationSum | None:
    """The clipped sum at the medians under the two inputs of the unmixed coordinates ``matrix·o[columns] + offset``
    of the first :data:`INNOVATION_ROWS` rows of each selection half (``label`` names them), or ``None`` when fewer
    than two of them move, or only the first of innovations (the first output column rescaled)."""
    views = []
    for sel in (sel0, sel1):
        cols = np.asarray(sel[:INNOVATION_ROWS], dtype=np.float64)[:, list(columns)].T
        views.append(_unmixed(matrix, offset, _nan_for_nonfinite(cols)).T)
    clipped = median_clipped_sum(views[0], views[1], single=True, rows=INNOVATION_ROWS,
                                 first_is_column=label == "innovations")
    if clipped is None:
        return None
    return InnovationSum(columns, matrix, offset, clipped, label)
