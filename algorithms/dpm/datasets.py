"""Data sets of DPM's evaluation: the synthetic Gaussian mixtures and, offline, scikit-learn's digits.

Source: seed 004, Liebenow, Schütt et al., "DPM: Clustering Sensitive Data through Separation" (CCS 2024),
Sec. 6.1 and Table 1.

* :func:`synth` -- Synth-10d / Synth-100d: "sampling the same number of data points from multiple
  Gaussians, one for each cluster".  The paper gives no σ, box or seed; the authors' code (evaluation ``datasets.py``
  [CODE]) uses ``sklearn.datasets.make_blobs(n_samples=100000, n_features=10|100, centers=64,
  random_state=42, center_box=(-100, 100), cluster_std=1)`` with the public range R = (−100, 100).
  There only the *centres* are boxed and the points are **not clipped**, so points near a face of the
  box fall outside R -- not "a few" in high dimension: with the authors' seed about 2% of the Synth-10d
  points and about a quarter of the Synth-100d points have at least one coordinate outside (a centre
  coordinate within a few σ of ±100 is likely among 64·100 of them).  DP needs every point inside the
  public range (DPM's averaging sensitivity and DP-Lloyd's both assume it; Sec. 2.1), so
  :func:`synth` **clips** them to R and reports how many points it clipped (:attr:`Dataset.n_clipped`)
  -- a departure from the authors' code; each clipped coordinate moves by a few σ = 1 at most, far
  less than the distance between the Gaussians.
* :func:`digits` -- ``sklearn.datasets.load_digits`` (1797 × 64 pixel intensities 0..16, 10 classes),
  public range (0, 16).  Not one of the paper's data sets; it ships with scikit-learn, so it works
  offline, and stands in for the paper's real data (MNIST/Fashion embeddings, UCI), which cannot be
  fetched here.

Each returns a :class:`Dataset`, which unpacks as ``data, labels, bounds = synth()``.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

__all__ = ["Dataset", "SYNTH_BOUNDS", "DIGITS_BOUNDS", "clip_to_bounds", "digits", "synth"]

#: The public range of the synthetic data (authors' code).
SYNTH_BOUNDS: tuple[float, float] = (-100.0, 100.0)
#: The public range of the digits' pixel intensities.
DIGITS_BOUNDS: tuple[float, float] = (0.0, 16.0)


@dataclass(frozen=True)
class Dataset:
    """A data set: ``data`` ``(n, d)`` inside ``bounds`` on every coordinate, true class ``labels`` ``(n,)``,
    the public range ``bounds = (a, b)`` and how many points were clipped into it.

    Iterating yields ``(data, labels, bounds)``, so ``data, labels, bounds = synth()`` works.
    """

    name: str
    data: np.ndarray
    labels: np.ndarray
    bounds: tuple[float, float]
    n_clipped: int = 0

    def __iter__(self) -> Iterator[object]:
        return iter((self.data, self.labels, self.bounds))

    @property
    def n(self) -> int:
        return int(self.data.shape[0])

    @property
    def d(self) -> int:
        return int(self.data.shape[1])

    @property
    def n_classes(self) -> int:
        return int(np.unique(self.labels).size)


def clip_to_bounds(data: np.ndarray, bounds: tuple[float, float]) -> tuple[np.ndarray, int]:
    """``(clipped copy of data, number of points with at least one coordinate outside [a, b])``."""
    a, b = float(bounds[0]), float(bounds[1])
    if not a < b:
        raise ValueError(f"bounds must satisfy a < b, got {bounds!r}")
    x = np.asarray(data, dtype=float)
    outside = int(np.count_nonzero(np.any((x < a) | (x > b), axis=1)))
    return np.clip(x, a, b), outside


def _check_int(name: str, value: object, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or int(value) < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def synth(n: int = 100_000, d: int = 10, centers: int = 64, seed: int = 42) -> Dataset:
    """Synth-``d``d (seed 004 Sec. 6.1, Table 1; the authors' code): ``n`` points from ``centers``
    isotropic Gaussians (σ = 1) with centres uniform in ``(−100, 100)^d``:
    ``sklearn.datasets.make_blobs(n_samples=n, n_features=d, centers=centers, random_state=seed,
    center_box=(-100, 100), cluster_std=1)``, bounds (−100, 100).

    Points outside the bounds are clipped to them (DP needs data inside the public range; the authors'
    code does not clip); :attr:`Dataset.n_clipped` says how many.  The defaults are the paper's
    Synth-10d with the authors' seed 42.
    """
    from sklearn.datasets import make_blobs

    n = _check_int("n (the number of points)", n, 1)
    d = _check_int("d (the dimension)", d, 1)
    centers = _check_int("centers (the number of Gaussians)", centers, 1)
    if centers > n:
        raise ValueError(f"centers={centers} > n={n}: every Gaussian needs at least one point; pass centers <= n")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not 0 <= int(seed) < 2 ** 32:
        raise ValueError(f"seed must be an integer in [0, 2**32), got {seed!r}")
    x, y = make_blobs(n_samples=n, n_features=d, centers=centers, random_state=int(seed),
                      center_box=SYNTH_BOUNDS, cluster_std=1.0)
    x, clipped = clip_to_bounds(x, SYNTH_BOUNDS)
    return Dataset(f"Synth-{d}d", x, np.asarray(y, dtype=np.intp), SYNTH_BOUNDS, clipped)


def digits() -> Dataset:
    """scikit-learn's handwritten digits (1797 × 64, intensities 0..16, 10 classes), bounds (0, 16).

    Bundled with scikit-learn (``sklearn.datasets.load_digits``), so no download; no point needs clipping.
    """
    from sklearn.datasets import load_digits

    bunch = load_digits()
    x, clipped = clip_to_bounds(np.asarray(bunch.data, dtype=float), DIGITS_BOUNDS)
    return Dataset("digits", x, np.asarray(bunch.target, dtype=np.intp), DIGITS_BOUNDS, clipped)
