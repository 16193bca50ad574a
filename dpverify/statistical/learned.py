"""The learned score of the event search: a logistic regression telling the outputs on ``x0`` from those on ``x1``
(DP-Sniper's attack model, Bichsel et al., S&P 2021, Sec. 5), whose threshold events the search then ranks with the
others (:mod:`dpverify.statistical.search`)."""


from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from dpverify.execution.sampling import single_threaded_libraries
from dpverify.statistical.features import LinearScore

__all__ = ["fit_linear_score", "logistic_newton", "LR_FIT_SAMPLES", "NEWTON_COLUMNS", "NEWTON_TOL"]

#: rows of each side the fit uses at most (a uniform subsample of the concatenated outputs beyond)
LR_FIT_SAMPLES = 50_000
#: outputs of at most this many coordinates are fitted by Newton's method (:func:`logistic_newton`), wider ones by
#: scikit-learn's L-BFGS
NEWTON_COLUMNS = 64
#: :func:`logistic_newton` stops when no coordinate of the objective's gradient exceeds this, nor half the squared
#: Newton decrement (scikit-learn's ``tol`` and tests)
NEWTON_TOL = 1e-4
#: the sufficient decrease of the line search, per unit of the step's slope (scikit-learn's ``2^-11``)
ARMIJO = 2.0 ** -11
#: the L2 penalty of the fit, as scikit-learn's ``LogisticRegression`` default (``C = 1``): ``sum(loss) + |w|^2 / 2``
_C = 1.0


def fit_linear_score(o0: NDArray, o1: NDArray, rng: np.random.Generator) -> LinearScore | None:
    """Fit a logistic regression telling ``x0``'s outputs from ``x1``'s (DP-Sniper's attack model)."""
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
    if X.shape[1] <= NEWTON_COLUMNS:
        coef, intercept = logistic_newton(X, y)
        return LinearScore(tuple(mean), tuple(scale), tuple(float(c) for c in coef), intercept)
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(max_iter=200, solver="lbfgs")   # wide rows: no (d+1)^2 Gram matrix per step
    with single_threaded_libraries("sklearn"):        # its OpenMP and BLAS threads only slow these small fits down
        model.fit(X, y)
    return LinearScore(tuple(mean), tuple(scale), tuple(model.coef_[0]), float(model.intercept_[0]))


def logistic_newton(X: NDArray[np.float64], y: NDArray[np.float64], tol: float = NEWTON_TOL,
                    max_iter: int = 100) -> tuple[NDArray[np.float64], float]:
    """The L2-penalised logistic regression of scikit-learn's ``LogisticRegression()`` (``C = 1``, unpenalised
    intercept): ``(coef, intercept)`` minimising ``mean(log(1 + e^z) - y z) + |coef|^2 / (2 C n)``, ``z = X coef +
    intercept``, by Newton's method with a backtracking (Armijo) line search from zero: the steps of scikit-learn's
    ``newton-cholesky`` solver, which stops when no gradient coordinate and not half the squared Newton decrement
    exceeds ``tol`` (its default 1e-4: two steps on most searches' data).

    The same iterates, without the estimator's fixed cost: scikit-learn's fit took 2 ms on 256 rows of 5 columns
    and 44 ms on 100,000 (two Newton steps; its loss and gradient kernels, its validation and its solver objects),
    and the event search fits one score per pair at every checkpoint of an anytime audit (89 fits in a pass of the
    catalogue's ``histogram``), so that the fit was a fifth to a third of a vector search.  Each step here is one
    weighted Gram matrix ``A' diag(p(1-p)) A`` and a solve of a ``(d+1) x (d+1)`` system.  ``X`` is standardised
    by the caller; the objective is strictly convex (the penalty), so a separable sample has a finite minimiser too.
    """
    n, d = X.shape
    A = np.empty((n, d + 1))
    A[:, :d] = X
    A[:, d] = 1.0
    penalty = np.full(d + 1, 1.0 / (_C * n))
    penalty[d] = 0.0                                       # the intercept is not penalised

    def at(z: NDArray[np.float64], w: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
        """The objective at ``z = A w`` and ``exp(-|z|)``, from which the probabilities follow without overflow."""
        e = np.exp(-np.abs(z))
        return float(np.mean(np.log1p(e) + np.maximum(z, 0.0) - y * z) + 0.5 * penalty @ (w * w)), e

    def gradient(z: NDArray[np.float64], e: NDArray[np.float64],
                 w: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        q = 1.0 / (1.0 + e)
        p = np.where(z >= 0.0, q, e * q)                   # expit(z)
        return (p - y) @ A / n + penalty * w, p

    w, z = np.zeros(d + 1), np.zeros(n)
    loss, e = at(z, w)
    g, p = gradient(z, e, w)
    for _ in range(max_iter):
        H = _weighted_gram(A, p * (1.0 - p)) / n
        H[np.diag_indices(d + 1)] += penalty
        try:
            step = np.linalg.solve(H, -g)
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(H, -g, rcond=None)[0]
        dz, slope, t = A @ step, float(g @ step), 1.0
        for _ in range(21):                                # backtracking: halve until the Armijo decrease holds
            new, e_new = at(z + t * dz, w + t * step)
            if new - loss <= t * ARMIJO * slope:
                g_new, p_new = gradient(z + t * dz, e_new, w + t * step)
                break
            if abs(new - loss) <= 16 * np.finfo(np.float64).eps * abs(loss):
                # a change of the loss within its rounding: a step that shrinks the gradient is taken (scikit-learn's)
                g_new, p_new = gradient(z + t * dz, e_new, w + t * step)
                if np.abs(g_new).sum() < np.abs(g).sum():
                    break
            t *= 0.5
        else:
            break                                          # no decrease left in floating point: at the minimum
        w, z, loss, g, p = w + t * step, z + t * dz, new, g_new, p_new
        # scikit-learn's two tests: the largest gradient coordinate and half the squared Newton decrement
        if np.max(np.abs(g)) <= tol and 0.5 * float(step @ H @ step) <= tol:
            break
    return w[:d], float(w[d])


#: rows of :func:`_weighted_gram`'s blocks (six columns of them stay in a core's cache)
_GRAM_ROWS = 8192


def _weighted_gram(A: NDArray[np.float64], h: NDArray[np.float64]) -> NDArray[np.float64]:
    """``A' diag(h) A``, summed over blocks of rows that stay in cache: one product over all of a tall, narrow ``A``
    streams it from memory several times."""
    G = np.zeros((A.shape[1], A.shape[1]))
    for start in range(0, len(A), _GRAM_ROWS):
        a = A[start:start + _GRAM_ROWS]
        G += (a * h[start:start + _GRAM_ROWS, None]).T @ a
    return G
