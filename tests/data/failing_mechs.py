"""Mechanisms that fail, for the tests of how their errors reach the user (tests/test_mechanism_errors.py).

The tests look for the file and line numbers of this module in what the user sees, so keep the lines that fail
where they are or update the tests' LINE_* constants.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def one_row_too_many(x: Any, n: int, rng: np.random.Generator) -> np.ndarray:
    """Breaks the contract: ``n + 1`` rows for ``n`` samples."""
    return float(np.sum(x)) + rng.laplace(0.0, 1.0, size=n + 1)


def raises_in_a_helper(x: Any, n: int, rng: np.random.Generator) -> np.ndarray:
    """Raises a plain ValueError two calls deep in the user's code."""
    noise = rng.laplace(0.0, 1.0, size=n)
    return scale_noise(noise, -1.0)


def scale_noise(noise: np.ndarray, scale: float) -> np.ndarray:
    if scale <= 0:
        raise ValueError(f"the noise scale must be positive, got {scale}")  # LINE_RAISE
    return noise * scale
