"""Clustering metrics of DPM's evaluation: inertia, silhouette, accuracy and the KMeans distance.

Source: seed 004, Liebenow, Schütt et al., "DPM: Clustering Sensitive Data through Separation" (CCS 2024),
Sec. 6.2 and App. C.1, Definitions 9-12, and Table 2.  What the paper leaves open is fixed and stated here:
squared inertia, the per-centre-mean KMeans distance normalised by the diameter, and silhouette
sub-sampling, as the authors' evaluation code (UzL-PrivSec/clustering-evaluation) does.

Every metric labels a point by its **nearest centre** (Euclidean; :func:`assign`), i.e. the clustering
``C_i = {x : i = argmin_j ||x − c_j||}`` induced by a set of centres.  The paper leaves several details
open; they are resolved here as follows (each function's docstring repeats its resolution):

* **Inertia (Def. 10)** prints ``Σ_i Σ_{x∈C_i} ||c_i − x||_2`` (not squared).  The reported numbers
  imply *squared* distances (Table 2: Synth's KMeans inertia 1.0e06 = n·d·σ² for
  n = 100 000, d = 10, σ = 1; non-squared would be ≈ 3.2e05), and the authors' ``j_score`` squares, as
  scikit-learn does.  :func:`inertia` therefore squares by default; ``squared=False`` is the printed
  Def. 10.
* **Silhouette (Def. 11)**: scikit-learn's ``silhouette_score`` on a seeded random **subsample** of
  ``sample_size = 10 000`` points (as the authors' code), −1 when fewer than two clusters are
  non-empty (the paper's convention for ``|C| < 2``).
* **Accuracy (Def. 12)**: majority-label purity, ``(1/n) Σ_i max_l |{x_j ∈ C_i : y_j = l}|``.  It grows
  with the number of centres (a centre per point scores 1).
* **KMeans distance (Def. 9)**: the paper's formula sums over the private centres and runs over ℓ of
  its ℓ + 1 reference sets, and it never defines the "Norm." of its tables.  Settled as the authors'
  ``norm_kmeans_dist`` (their evaluation code): the mean over the reference sets ``C_1..C_ℓ`` of the
  **per-private-centre mean** of ``min_{c′∈C_i} ||c − c′||_2``; normalised = divided by the diameter of
  the public box.  The code divides by ``2·radius`` with ``radius`` undefined in its ``datasets.py``; here
  the diameter of ``[a, b]^d`` is used, i.e. **(b − a)·√d** (for Synth, ``R = (−100, 100)``, d = 10:
  200·√10 ≈ 632.5).  Only private → reference distances enter, so a private solution that misses
  reference centres is not penalised, and fewer private centres tend to score better.

All functions validate their inputs and raise :class:`ValueError` naming the problem and the fix.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "ClusteringScores",
    "DEFAULT_SILHOUETTE_SAMPLE",
    "accuracy",
    "assign",
    "box_diameter",
    "evaluate",
    "inertia",
    "kmeans_distance",
    "silhouette",
]

#: The authors' ``silhouette_score(..., sample_size=10000)`` (their evaluation code).
DEFAULT_SILHOUETTE_SAMPLE: int = 10_000
#: At most this many entries of the (points × centres) distance matrix are held at once by :func:`assign`.
_CHUNK_ENTRIES: int = 1 << 20


# -- validation ------------------------------------------------------------------------------------
def _as_points(data: object, name: str = "data") -> np.ndarray:
    """``data`` as a finite float array of shape ``(n, d)`` with ``n, d ≥ 1``."""
    try:
        x = np.asarray(data, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a numeric array of shape (n, d), got {type(data).__name__}") from None
    if x.ndim != 2:
        raise ValueError(f"{name} must have shape (n, d) (one row per point), got shape {x.shape}; "
                         f"reshape a single point or a 1-d column with .reshape(-1, d)")
    if x.shape[0] == 0 or x.shape[1] == 0:
        raise ValueError(f"{name} is empty (shape {x.shape}); pass at least one point with at least one dimension")
    if not np.all(np.isfinite(x)):
        bad = int(np.count_nonzero(~np.all(np.isfinite(x), axis=1)))
        raise ValueError(f"{name} contains NaN or infinite values ({bad} rows); drop or impute those rows first")
    return x


def _as_centres(centres: object, d: int, name: str = "centres") -> np.ndarray:
    """``centres`` as a finite float array of shape ``(k, d)``, ``k ≥ 1``."""
    try:
        c = np.asarray(centres, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a numeric array of shape (k, d), got {type(centres).__name__}") from None
    if c.ndim == 1 and c.size == d and d > 0:
        c = c.reshape(1, d)
    if c.ndim != 2 or (c.size and c.shape[1] != d):
        raise ValueError(f"{name} must have shape (k, {d}) (one row per centre, {d} = the data's dimension), "
                         f"got shape {c.shape}")
    if c.shape[0] == 0:
        raise ValueError(f"{name} is empty: a clustering needs at least one centre (did the algorithm "
                         f"return no cluster? score such a run separately)")
    if not np.all(np.isfinite(c)):
        bad = int(np.count_nonzero(~np.all(np.isfinite(c), axis=1)))
        raise ValueError(f"{name} contains NaN or infinite values ({bad} of {c.shape[0]} centres); "
                         f"an algorithm produced invalid centres -- drop them or fix the algorithm")
    return c


def _as_labels(labels: object, n: int) -> np.ndarray:
    y = np.asarray(labels)
    if y.ndim != 1 or y.shape[0] != n:
        raise ValueError(f"labels must be a 1-d array with one label per point ({n}), got shape {y.shape}")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError("labels contain NaN or infinite values; pass a class label for every point")
    return y


def box_diameter(bounds: tuple[float, float], d: int) -> float:
    """The diameter ``(b − a)·√d`` of the public box ``[a, b]^d`` (the normaliser of Def. 9 here)."""
    try:
        a, b = bounds
    except (TypeError, ValueError):
        raise ValueError(f"bounds must be a pair (a, b) of the public range, got {bounds!r}") from None
    for v in (a, b):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(float(v)):
            raise ValueError(f"bounds must be finite reals (a, b), got {bounds!r}")
    if not float(a) < float(b):
        raise ValueError(f"bounds must satisfy a < b, got {bounds!r}")
    if isinstance(d, bool) or not isinstance(d, numbers.Integral) or int(d) < 1:
        raise ValueError(f"d (the dimension) must be an integer >= 1, got {d!r}")
    return (float(b) - float(a)) * math.sqrt(int(d))


# -- nearest centres -------------------------------------------------------------------------------
def _nearest(x: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index of the nearest centre and the squared distance to it, for validated ``x`` and ``c``.

    The argmin uses ``||x||² − 2x·c + ||c||²`` in chunks of points (BLAS speed, at most
    ``_CHUNK_ENTRIES`` distances at a time: 8 MiB, so 100 000 × 100 points against 128 centres needs a
    few MiB besides the data); ``np.argmin`` returns the lowest index among equal minima.  The returned
    distance is then recomputed directly as ``Σ (x − c)²`` for the chosen centre (no cancellation).
    """
    n, k = x.shape[0], c.shape[0]
    c_sq = np.einsum("ij,ij->i", c, c)
    idx = np.empty(n, dtype=np.intp)
    step = max(1, _CHUNK_ENTRIES // max(k, 1))
    for start in range(0, n, step):
        xs = x[start:start + step]
        # ||x||² is constant per row and does not change the argmin
        scores = c_sq[None, :] - 2.0 * (xs @ c.T)
        idx[start:start + step] = np.argmin(scores, axis=1)
    sq = np.empty(n)
    for start in range(0, n, step):
        diff = x[start:start + step] - c[idx[start:start + step]]
        sq[start:start + step] = np.einsum("ij,ij->i", diff, diff)
    return idx, sq


def assign(data: object, centres: object) -> np.ndarray:
    """Index of the nearest centre (Euclidean) of every point: the clustering a set of centres induces
    (seed 004 Sec. 6.2: every metric is computed on this assignment).

    Ties go to the lowest centre index (``np.argmin`` on ``||c||² − 2x·c``, so "tie" means equal up to
    float rounding of that expression).  Works in chunks of points, so ``100 000 × 100`` points against
    128 centres needs only a few MiB beyond the data.  Returns an ``intp`` array of shape ``(n,)``.
    """
    x = _as_points(data)
    c = _as_centres(centres, x.shape[1])
    return _nearest(x, c)[0]


# -- the metrics -----------------------------------------------------------------------------------
def inertia(data: object, centres: object, *, squared: bool = True) -> float:
    """Inertia (seed 004 Def. 10, App. C.1): the sum over points of the distance to the nearest centre.

    ``squared=True`` (default): ``Σ_x min_c ||x − c||²``, scikit-learn's ``KMeans.inertia_`` and the
    authors' ``j_score``; the reported Table 2 numbers imply it (Def. 10, Table 2).
    ``squared=False``: ``Σ_x min_c ||x − c||`` as Def. 10 is printed.
    """
    x = _as_points(data)
    c = _as_centres(centres, x.shape[1])
    return _inertia_from(_nearest(x, c)[1], squared)


def _inertia_from(sq: np.ndarray, squared: bool) -> float:
    return float(np.sum(sq)) if squared else float(np.sum(np.sqrt(sq)))


def silhouette(data: object, centres: object, *, sample_size: int | None = DEFAULT_SILHOUETTE_SAMPLE,
               seed: int | np.random.SeedSequence | None) -> float:
    """Silhouette score (seed 004 Def. 11, App. C.1) of the nearest-centre clustering.

    As the authors' evaluation code: ``sklearn.metrics.silhouette_score`` (Euclidean) on a
    random subsample of ``sample_size`` points drawn without replacement by
    ``numpy.random.default_rng(seed).choice(n, sample_size, replace=False)``, each labelled by its nearest
    centre among **all** points' clustering (the subsample only thins the points the score averages
    over and compares with).  ``sample_size=None`` or ``sample_size >= n`` uses every point (no
    randomness).  Returns −1 when fewer than two clusters are non-empty on the points scored (the
    paper: "only defined for |C| ≥ 2, otherwise it is set to −1"), and also when every scored point is
    its own cluster (scikit-learn then raises; the authors' code returns −1 on any error).
    """
    x = _as_points(data)
    c = _as_centres(centres, x.shape[1])
    return _silhouette_from(x, _nearest(x, c)[0], sample_size, seed)


def _silhouette_from(x: np.ndarray, idx: np.ndarray, sample_size: int | None,
                     seed: int | np.random.SeedSequence | None) -> float:
    from sklearn.metrics import silhouette_score

    n = x.shape[0]
    if sample_size is not None:
        if isinstance(sample_size, bool) or not isinstance(sample_size, numbers.Integral) or sample_size < 2:
            raise ValueError(f"sample_size must be an integer >= 2 or None (all points), got {sample_size!r}")
        if sample_size < n:
            if seed is None:
                raise ValueError("silhouette subsamples the points (sample_size < n): pass seed=<int> so the "
                                 "score is reproducible, or sample_size=None to use every point")
            rows = np.sort(np.random.default_rng(seed).choice(n, int(sample_size), replace=False))
            x, idx = x[rows], idx[rows]
    n_clusters = np.unique(idx).size
    if n_clusters < 2 or n_clusters >= x.shape[0]:
        return -1.0
    return float(silhouette_score(x, idx, metric="euclidean"))


def accuracy(data: object, centres: object, labels: object) -> float:
    """Clustering accuracy (seed 004 Def. 12, App. C.1): majority-label purity of the nearest-centre
    clustering, ``(1/n) Σ_i max_l |{x_j ∈ C_i : y_j = l}|`` with ``lbl(C_i)`` the most frequent true label
    in ``C_i`` (empty clusters contribute 0).  It grows with the number of centres."""
    x = _as_points(data)
    c = _as_centres(centres, x.shape[1])
    y = _as_labels(labels, x.shape[0])
    return _accuracy_from(_nearest(x, c)[0], y, c.shape[0])


def _accuracy_from(idx: np.ndarray, y: np.ndarray, k: int) -> float:
    _, codes = np.unique(y, return_inverse=True)
    n_labels = int(codes.max()) + 1
    table = np.bincount(idx * n_labels + codes.ravel(), minlength=k * n_labels).reshape(k, n_labels)
    return float(table.max(axis=1).sum() / idx.size)


def kmeans_distance(centres: object, reference_sets: Sequence[object], *,
                    bounds: tuple[float, float] | None = None, d: int | None = None,
                    normalise: bool = False) -> float:
    """KMeans distance (seed 004 Def. 9, App. C.1), as the authors' ``norm_kmeans_dist``:

    ``KD = (1/ℓ) Σ_{i=1}^{ℓ} (1/|C_priv|) Σ_{c∈C_priv} min_{c′∈C_i} ||c − c′||_2``

    over the ℓ reference sets ``C_i`` (non-private KMeans solutions; ℓ = ``len(reference_sets)``, each of
    any size ``(k_i, d)``).  ``normalise=False`` returns this raw value (in data units);
    ``normalise=True`` divides it by the diameter ``(b − a)·√d`` of the public box ``[a, b]^d`` given by
    ``bounds`` (the paper's "Norm. KMeans Dist."; the code's ``2·radius`` is undefined, see the module
    docstring).  ``d`` defaults to the centres' dimension and, if given, must equal it.
    """
    c = np.asarray(centres, dtype=float) if not isinstance(centres, np.ndarray) else centres.astype(float)
    if c.ndim != 2:
        raise ValueError(f"centres must have shape (k, d) (one row per private centre), got shape {c.shape}")
    dim = c.shape[1]
    if d is not None and (isinstance(d, bool) or not isinstance(d, numbers.Integral) or int(d) != dim):
        raise ValueError(f"d={d!r} does not match the centres' dimension {dim}; pass d={dim} or omit it")
    c = _as_centres(c, dim, "centres (the private solution)")
    if isinstance(reference_sets, np.ndarray) and reference_sets.ndim == 2:
        raise ValueError("reference_sets must be a sequence of (k_i, d) arrays (one per KMeans run), got a "
                         "single 2-d array; wrap it in a list: [reference]")
    refs = list(reference_sets)
    if not refs:
        raise ValueError("reference_sets is empty: Def. 9 averages over at least one non-private KMeans solution")
    total = 0.0
    for i, ref in enumerate(refs):
        r = _as_centres(ref, dim, f"reference_sets[{i}]")
        dist = np.sqrt(((c[:, None, :] - r[None, :, :]) ** 2).sum(axis=2))  # (k_priv, k_i), small
        total += float(np.mean(dist.min(axis=1)))
    raw = total / len(refs)
    if not normalise:
        return raw
    if bounds is None:
        raise ValueError("normalise=True divides by the diameter of the public box: pass bounds=(a, b)")
    return raw / box_diameter(bounds, dim)


# -- all at once -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class ClusteringScores:
    """The scores of one clustering (one run of one algorithm), seed 004 Sec. 6.2 / App. C.1.

    ``inertia`` is squared (see :func:`inertia`); ``kmeans_distance`` is the raw Def. 9 value and
    ``norm_kmeans_distance`` that divided by ``(b − a)·√d``; ``accuracy`` is NaN when no labels were given.
    """

    silhouette: float
    accuracy: float
    inertia: float
    kmeans_distance: float
    norm_kmeans_distance: float
    n_centres: int


def evaluate(data: object, labels: object | None, centres: object, reference_sets: Sequence[object] | None,
             bounds: tuple[float, float], seed: int | np.random.SeedSequence | None, *,
             sample_size: int | None = DEFAULT_SILHOUETTE_SAMPLE) -> ClusteringScores:
    """All metrics of Table 2 for one set of ``centres`` (one nearest-centre assignment shared by all).

    ``seed`` drives only the silhouette subsample; ``labels=None`` gives ``accuracy = NaN`` and
    ``reference_sets=None`` gives NaN KMeans distances (fill them in later with :func:`kmeans_distance`
    when the reference solutions are not known yet, e.g. ``dataclasses.replace(scores, ...)``).
    """
    x = _as_points(data)
    c = _as_centres(centres, x.shape[1])
    diameter = box_diameter(bounds, x.shape[1])
    idx, sq = _nearest(x, c)
    acc = math.nan if labels is None else _accuracy_from(idx, _as_labels(labels, x.shape[0]), c.shape[0])
    raw = math.nan if reference_sets is None else kmeans_distance(c, reference_sets)
    return ClusteringScores(
        silhouette=_silhouette_from(x, idx, sample_size, seed),
        accuracy=acc,
        inertia=_inertia_from(sq, True),
        kmeans_distance=raw,
        norm_kmeans_distance=raw / diameter,
        n_centres=int(c.shape[0]),
    )
