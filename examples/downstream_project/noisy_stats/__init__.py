"""noisy_stats -- an example downstream project of dpverify: two Laplace releases of a dataset of reals.

Both functions take a dataset (a 1-d array, one value per person) and return ``size`` independent releases
(the batched form the audit needs: ``size=None`` gives one).  Neighbouring datasets differ by one person added
or removed.

- :func:`noisy_count` releases ``len(data) + Lap(1/epsilon)``: the count changes by at most 1, so this is
  ``epsilon``-DP.
- :func:`noisy_sum` releases ``sum(clip(data, 0, upper)) + Lap(1/epsilon)``.  BUG (kept on purpose): one
  person moves the clipped sum by up to ``upper``, so the noise scale must be ``upper/epsilon``; as written
  the release is only ``upper*epsilon``-DP.  Its test is marked ``xfail(strict=True)``: it fails if the audit
  ever stops finding the bug.
"""

from __future__ import annotations

import numpy as np

__all__ = ["noisy_count", "noisy_sum"]


def noisy_count(data: np.ndarray, epsilon: float, rng: np.random.Generator, size: int | None = None) -> np.ndarray:
    """``len(data) + Lap(1/epsilon)``: epsilon-DP under add/remove one person."""
    return len(data) + rng.laplace(0.0, 1.0 / epsilon, size=size)


def noisy_sum(data: np.ndarray, epsilon: float, rng: np.random.Generator, upper: float = 5.0,
              size: int | None = None) -> np.ndarray:
    """``sum(clip(data, 0, upper)) + Lap(1/epsilon)`` -- claimed epsilon-DP, but the scale ignores ``upper``."""
    total = float(np.clip(np.asarray(data, dtype=float), 0.0, upper).sum())
    return total + rng.laplace(0.0, 1.0 / epsilon, size=size)  # BUG: should be upper / epsilon
