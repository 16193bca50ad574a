"""The baselines of DPM's evaluation: non-private KMeans++ and DP-Lloyd (diffprivlib).

Source: seed 004, Liebenow, Schütt et al., "DPM: Clustering Sensitive Data through Separation" (CCS 2024),
Sec. 6.1 ("Baselines").
Both receive ``k`` = the reported number of classes (Table 1), unlike DPM.

* :func:`kmeans` -- scikit-learn's ``KMeans(n_clusters=k, n_init=1, max_iter=300, random_state=seed)``
  (k-means++ initialisation), the authors' setting (their evaluation code).
* :func:`dp_lloyd` -- DP-Lloyd from IBM's diffprivlib (Holohan et al., ref. [12] of the paper):
  ``diffprivlib.models.KMeans(n_clusters=k, epsilon=ε, bounds=(lower, upper), random_state=seed)``,
  pure ε-DP (δ is unused).  It is given the **public** box ``[a, b]^d`` (never data-derived bounds,
  which would leak), and refuses data outside it (clip first, e.g. with
  :func:`algorithms.dpm.datasets.clip_to_bounds`): diffprivlib would clip silently, which is fine for
  privacy but hides a mismatch between the data and the declared range.

diffprivlib is optional and imported lazily inside :func:`dp_lloyd`, so ``import algorithms.dpm`` never
needs it.  diffprivlib 0.6.6 does not import with scikit-learn >= 1.9 (it imports ``DOUBLE`` from
``sklearn.tree._tree``, which 1.9 removed); the project's ``baselines`` and ``dev`` extras pin
``diffprivlib==0.6.6`` with ``scikit-learn<1.9`` (see ``pyproject.toml``).
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

__all__ = ["kmeans", "dp_lloyd", "DIFFPRIVLIB_FIX"]

#: How to get a working diffprivlib (named in the ImportError of :func:`dp_lloyd`).
DIFFPRIVLIB_FIX: str = ('pip install -e ".[baselines]" (or: pip install "diffprivlib==0.6.6" "scikit-learn<1.9"); '
                        "diffprivlib 0.6.6 does not import with scikit-learn >= 1.9")


def _check_data(data: object) -> np.ndarray:
    try:
        x = np.asarray(data, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"data must be a numeric array of shape (n, d), got {type(data).__name__}") from None
    if x.ndim != 2 or x.shape[0] == 0 or x.shape[1] == 0:
        raise ValueError(f"data must be a non-empty array of shape (n, d), got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        bad = int(np.count_nonzero(~np.all(np.isfinite(x), axis=1)))
        raise ValueError(f"data contains NaN or infinite values ({bad} rows); drop or impute those rows first")
    return x


def _check_k(k: object, n: int) -> int:
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise ValueError(f"k (the number of clusters) must be an integer, got {k!r}")
    if int(k) < 1:
        raise ValueError(f"k (the number of clusters) must be >= 1, got {k}")
    if int(k) > n:
        raise ValueError(f"k={k} is larger than the number of points n={n}; pass k <= n")
    return int(k)


def _random_state(seed: object) -> int:
    """An ``int`` in ``[0, 2**32)`` for scikit-learn / diffprivlib from an int or a SeedSequence."""
    if isinstance(seed, np.random.SeedSequence):
        return int(seed.generate_state(1, dtype=np.uint32)[0])
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not 0 <= int(seed) < 2 ** 32:
        raise ValueError(f"seed must be an integer in [0, 2**32) or a numpy SeedSequence, got {seed!r}")
    return int(seed)


def kmeans(data: object, k: int, seed: int | np.random.SeedSequence) -> np.ndarray:
    """Non-private KMeans++ (seed 004 Sec. 6.1): the ``(k, d)`` cluster centres of
    ``sklearn.cluster.KMeans(n_clusters=k, n_init=1, max_iter=300, random_state=seed)`` fitted on ``data``."""
    from sklearn.cluster import KMeans

    x = _check_data(data)
    k = _check_k(k, x.shape[0])
    model = KMeans(n_clusters=k, n_init=1, max_iter=300, random_state=_random_state(seed)).fit(x)
    return np.asarray(model.cluster_centers_, dtype=float)


def _import_diffprivlib_kmeans() -> type:
    try:
        from diffprivlib.models import KMeans as DPKMeans  # noqa: N811
    except ImportError as exc:  # absent, or present but broken by an incompatible scikit-learn
        raise ImportError(f"dp_lloyd needs diffprivlib, which could not be imported ({exc}); fix: "
                          f"{DIFFPRIVLIB_FIX}") from exc
    return DPKMeans


def dp_lloyd(data: object, k: int, bounds: tuple[float, float], epsilon: float,
             seed: int | np.random.SeedSequence) -> np.ndarray:
    """DP-Lloyd (seed 004 Sec. 6.1): the ``(k, d)`` centres of diffprivlib's ε-DP k-means,
    ``diffprivlib.models.KMeans(n_clusters=k, epsilon=epsilon, bounds=(a·1_d, b·1_d), random_state=seed)``.

    ``bounds = (a, b)`` is the public range of every coordinate (the box ``[a, b]^d``); data outside it
    raise a :class:`ValueError` (clip to the bounds first).  diffprivlib's ``PrivacyLeakWarning`` is
    silenced only inside the call (it is raised when bounds are *not* given, which never happens here).
    Raises :class:`ImportError` naming the fix when diffprivlib is missing or cannot be imported.
    """
    x = _check_data(data)
    k = _check_k(k, x.shape[0])
    try:
        a, b = (float(v) for v in bounds)
    except (TypeError, ValueError):
        raise ValueError(f"bounds must be a pair (a, b) of the public range, got {bounds!r}") from None
    if not (math.isfinite(a) and math.isfinite(b) and a < b):
        raise ValueError(f"bounds must be finite with a < b, got {bounds!r}")
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real) or not 0 < float(epsilon) < math.inf:
        raise ValueError(f"epsilon must be a finite real > 0, got {epsilon!r}")
    outside = int(np.count_nonzero(np.any((x < a) | (x > b), axis=1)))
    if outside:
        raise ValueError(f"{outside} of {x.shape[0]} points lie outside the public box [{a:g}, {b:g}]^{x.shape[1]}; "
                         f"DP-Lloyd's guarantee assumes data inside the bounds: clip first, e.g. "
                         f"np.clip(data, {a:g}, {b:g}) or algorithms.dpm.datasets.clip_to_bounds")
    dp_kmeans = _import_diffprivlib_kmeans()
    from diffprivlib.utils import PrivacyLeakWarning

    d = x.shape[1]
    model = dp_kmeans(n_clusters=k, epsilon=float(epsilon), bounds=(np.full(d, a), np.full(d, b)),
                      random_state=_random_state(seed))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        model.fit(x)
    return np.asarray(model.cluster_centers_, dtype=float)
