"""Independent components: a vector output's noise unmixed when a linear map mixes it across coordinates.

Releases that add independent noise in one basis and publish in another -- the wavelet mechanism (Xiao, Wang &
Gehrke, "Differential Privacy via Wavelet Transforms", ICDE 2010: Laplace noise on the Haar coefficients, the
histogram rebuilt from them), the Fourier perturbation algorithm (Rastogi & Nath, SIGMOD 2010), the matrix mechanism
(Li et al., PODS 2010: ``W·A⁺·(A·x + z)``) or a rotation of the output -- publish ``o = M·(a + z)`` with ``M`` dense.
The privacy loss of Laplace noise lives in the coordinates of ``z`` (a clipped sum there,
:class:`dpverify.statistical.anchors.ClippedSum`), which every output coordinate mixes.  The Cholesky unmixing of
:mod:`dpverify.statistical.innovations` undoes ``M`` only when it is triangular in the release order; for any other
``M`` its whitened coordinates ``w = U·(o − mean)`` are still a rotation ``w = R·z/σ`` of the noise: uncorrelated,
not independent.

A rotation of independent non-Gaussian noise is identifiable (Comon, "Independent component analysis, a new
concept?", Signal Processing 36, 1994): the rotation back makes the coordinates independent, and FastICA (Hyvärinen
& Oja, Neural Networks 13, 2000; :class:`sklearn.decomposition.FastICA`) finds it from the whitened rows.  This module
runs it only where the whitened coordinates are not independent already: :func:`cross_cumulant_z` tests the
fourth-order cross-cumulants ``E[(w_i² − 1)(w_j² − 1)]`` of every pair of them, which are zero for independent
coordinates (the noise of independent columns and of causal mixings, which the search's coordinates and the
innovations have) and ``Σ_k R_ik² R_jk² κ_k`` for a rotation of noise of excess kurtosis ``κ_k`` (3 for Laplace).
Gaussian noise is independent once whitened, and its loss is linear: the search's linear score has it.

:func:`independent_sum` returns the clipped sum at the independent components' medians under the two inputs, a
feature fitted on the selection half only (the scoring half and the test stay independent of it), or ``None``."""

from __future__ import annotations

import warnings

import numpy as np
from numpy.typing import NDArray

from dpverify.statistical.innovations import InnovationSum, Whitening, unmixed_sum, whitening

__all__ = ["independent_sum", "cross_cumulant_z", "DEPENDENT_Z", "MIN_KURTOSIS"]

#: standard errors by which some pair's fourth-order cross-cumulant of the whitened coordinates must differ from 0 for
#: them to count as dependent (:func:`cross_cumulant_z`; the largest of ``k(k−1)/2`` pairs, up to 496 at 32 columns,
#: exceeds 6 standard errors under independence about once in 10⁶ searches: then one feature more, no wrong bound)
DEPENDENT_Z = 6.0
#: least absolute excess kurtosis of two independent components or more: FastICA identifies a rotation only of
#: non-Gaussian noise (Laplace: 3, uniform: −1.2)
MIN_KURTOSIS = 0.2
#: FastICA's iterations and tolerance (on at most 2 × 8,192 rows and 32 columns: milliseconds to a tenth of a second)
MAX_ITER, TOL = 200, 1e-4


def cross_cumulant_z(w: NDArray[np.float64]) -> float:
    """The largest ``|E[u_i u_j]| / se`` over pairs ``i < j`` of the whitened rows ``w`` (``(n, k)``, unit variance),
    ``u = w² − 1``, ``se`` each product's standard deviation over ``sqrt(n)``: how far the fourth-order
    cross-cumulants are from the zero of independent coordinates."""
    n = len(w)
    u = w * w - 1.0
    mean = u.T @ u / n
    sq = u * u
    var = np.maximum(sq.T @ sq / n - mean * mean, 1e-300)
    z = np.abs(mean) / np.sqrt(var / n)
    np.fill_diagonal(z, 0.0)
    return float(z.max())


def independent_sum(sel0: NDArray, sel1: NDArray, white: Whitening | None = None) -> InnovationSum | None:
    """The clipped sum at the medians of the independent components of the selection-half outputs ``sel0``,
    ``sel1``: the whitened noise columns of :func:`dpverify.statistical.innovations.whitening`, rotated by FastICA
    (seeded: the same feature on every run) when they are dependent (:func:`cross_cumulant_z` above
    :data:`DEPENDENT_Z`) and two components or more are non-Gaussian.  ``None`` otherwise, and when no component
    moves between the inputs.  ``white``: :func:`~dpverify.statistical.innovations.whitening` of the same halves,
    when the caller has it."""
    white = whitening(sel0, sel1) if white is None else white
    if white is None:
        return None
    w = white.centred @ white.unmix.T
    if cross_cumulant_z(w) <= DEPENDENT_Z:
        return None
    from sklearn.decomposition import FastICA
    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)       # a rotation short of convergence is a feature too
        ica = FastICA(whiten=False, fun="logcosh", max_iter=MAX_ITER, tol=TOL, random_state=0)
        s = ica.fit_transform(w)
    kurtosis = (s ** 4).mean(axis=0) / np.maximum((s * s).mean(axis=0), 1e-300) ** 2 - 3.0
    if np.count_nonzero(np.abs(kurtosis) >= MIN_KURTOSIS) < 2:
        return None
    unmix = ica.components_ @ white.unmix
    scale = np.sqrt(((white.centred @ unmix.T) ** 2).mean(axis=0))
    if not np.all(np.isfinite(scale) & (scale > 0)):          # (a NaN or infinite coefficient makes its scale so)
        return None
    unmix = unmix / scale[:, None]
    return unmixed_sum(sel0, sel1, white.columns, unmix, white.offset(unmix), "independent components")
