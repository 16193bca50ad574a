"""Small module-level mechanisms for the audit-engine tests (picklable, so they run on worker pools).

They are deliberately independent of :mod:`algorithms`: these tests exercise the engine, the
catalogue regression (tests/test_catalogue.py) exercises the reference implementations.
"""

from __future__ import annotations

import numpy as np


def laplace(x, n, rng, epsilon=0.1):
    return np.asarray(x, dtype=float) + rng.laplace(0.0, 1.0 / epsilon, size=(n,) + np.shape(x))


def gaussian(x, n, rng, sigma=1.0):
    return np.asarray(x, dtype=float) + rng.normal(0.0, sigma, size=(n,) + np.shape(x))


def randomized_response(x, n, rng, epsilon=1.0):
    keep = rng.random(n) < np.exp(epsilon) / (1.0 + np.exp(epsilon))
    return np.where(keep, x, 1 - x).astype(np.int64)


def identity(x, n, rng):
    return np.full(n, float(x))


def constant(x, n, rng):
    return np.zeros(n, dtype=np.int64)


def clipped_laplace(x, n, rng, epsilon=0.5):
    """Laplace clipped to [-1, 2]: continuous with point masses at both ends (ε-DP, post-processing)."""
    return np.clip(x + rng.laplace(0.0, 1.0 / epsilon, size=n), -1.0, 2.0)


def shifted_support(x, n, rng):
    """x + Exponential(1): the support [x, inf) moves with x -- an impossible event exists."""
    return x + rng.exponential(1.0, size=n)


def wrong_rows(x, n, rng):
    return np.zeros(n - 1)


def nan_outputs(x, n, rng):
    out = rng.normal(size=n)
    if x == 1:
        out[:] = np.nan
    return out


def shape_depends_on_input(x, n, rng):
    return np.zeros((n, 2 if x == 0 else 3))


def raises(x, n, rng):
    raise ZeroDivisionError("boom")


def strings(x, n, rng):
    return np.array(["a"] * n)


def vector_shift(x, n, rng, epsilon=0.5):
    """Laplace on a 5-vector with scale 1/ε per coordinate; pairs differ in every coordinate by 1
    (ℓ∞ neighbours), so the true ε on such a pair is 5ε."""
    x = np.asarray(x, dtype=float)
    return x + rng.laplace(0.0, 1.0 / epsilon, size=(n, len(x)))


def nan_release(x, n, rng, epsilon=1.0):
    """Releases NaN when the input is NaN (a NaN-through-clipping bug)."""
    return np.clip(x, 0.0, 1.0) + rng.laplace(0.0, 1.0 / epsilon, size=n)


def rr_wrong_formula(x, n, rng, epsilon=0.5, k=4):
    """k-ary randomized response with the binary keep probability (true ε = ε + ln(k-1))."""
    keep = rng.random(n) < np.exp(epsilon) / (1.0 + np.exp(epsilon))
    other = (x + rng.integers(1, k, size=n)) % k
    return np.where(keep, x, other).astype(np.int64)


class LedgerRecursion:
    """A composed mechanism that keeps a privacy-budget ledger (the protocol ``privacy_ledger(x, rng)``).

    A recursion of random depth 1..``levels`` spends ``overspend·ε/(2·levels)`` on a count per level (level ``l``
    runs on ``2**l`` disjoint cells) and ``overspend·ε/2`` plus ``δ`` on a final average over the leaves: the full
    depth spends ``overspend·(ε, δ)``, an early stop less.  ``overspend > 1`` is the broken twin.
    """

    def __init__(self, epsilon: float = 1.0, delta: float = 0.0, levels: int = 3, overspend: float = 1.0) -> None:
        self.epsilon, self.delta, self.levels, self.overspend = epsilon, delta, levels, overspend

    def privacy_ledger(self, x, rng):
        from types import SimpleNamespace

        depth = int(rng.integers(1, self.levels + 1))
        eps = self.overspend * self.epsilon
        charges = [SimpleNamespace(kind="count", epsilon=eps / (2 * self.levels), delta=0.0, level=lv,
                                   subset=f"cells of level {lv}", parallel=2**lv) for lv in range(depth)]
        charges.append(SimpleNamespace(kind="average", epsilon=eps / 2, delta=self.overspend * self.delta,
                                       level=None, subset="leaves", parallel=2**depth))
        return charges


def slow_laplace(x, n, rng, epsilon=0.1, seconds=0.1):
    """:func:`laplace`, slowed by ``seconds`` per call (the same outputs): a mechanism slow enough that the pool starts
    its workers."""
    import time

    time.sleep(seconds)
    return laplace(x, n, rng, epsilon)
