"""The learned score of the event search: a logistic regression telling the outputs on ``x0`` from those on ``x1``
(DP-Sniper's attack model, Bichsel et al., S&P 2021, Sec. 5), whose threshold events the search then ranks with the
others (:mod:`dpverify.statistical.search`)."""


from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from dpverify.execution.sampling import single_threaded_libraries
from dpverify.statistical.features import LinearScore

__all__ = ["fit_linear_score", "LR_FIT_SAMPLES", "NEWTON_COLUMNS"]

#: rows of each side the fit uses at most (a uniform subsample of the concatenated outputs beyond)
LR_FIT_SAMPLES = 50_000
#: outputs of at most this many coordinates are fitted by Newton-Cholesky, wider ones by L-BFGS
NEWTON_COLUMNS = 64


def fit_linear_score(o0: NDArray, o1: NDArray, rng: np.random.Generator) -> LinearScore | None:
    """Fit a logistic regression telling ``x0``'s outputs from ``x1``'s (DP-Sniper's attack model)."""
    from sklearn.linear_model import LogisticRegression

    n0, n1 = len(o0), len(o1)
    r0, r1 = o0.reshape(n0, -1), o1.reshape(n1, -1)
    y = np.r_[np.zeros(n0), np.ones(n1)]
    if n0 + n1 > 2 * LR_FIT_SAMPLES:
        # the rows of the concatenated outputs at idx, gathered from each side without concatenating them all
        idx = rng.choice(n0 + n1, 2 * LR_FIT_SAMPLES, replace=False)
        first = idx < n0
        X = np.empty((len(idx), r0.shape[1]), dtype=np.result_type(r0, r1))
        X[first], X[~first] = r0[idx[first]], r1[idx[~first] - n0]
        y = y[idx]
    else:
        X = np.concatenate([r0, r1])
    X = X.astype(np.float64, copy=False)     # (X is a fresh array: standardised in place below)
    if not np.isfinite(X).all():
        X = np.where(np.isfinite(X), X, np.where(np.isnan(X), 0.0, np.sign(X) * 1e300))
    mean, scale = X.mean(axis=0), X.std(axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    X -= mean
    X /= scale
    if not np.isfinite(X).all():
        return None
    # Newton-Cholesky (a few n x d^2 steps) for few columns, L-BFGS beyond: 2-3x as fast at 20 columns
    model = LogisticRegression(max_iter=200, solver="newton-cholesky" if X.shape[1] <= NEWTON_COLUMNS else "lbfgs")
    with single_threaded_libraries("sklearn"):        # its OpenMP and BLAS threads only slow these small fits down
        model.fit(X, y)
    return LinearScore(tuple(mean), tuple(scale), tuple(model.coef_[0]), float(model.intercept_[0]))
