"""Small datasets used by the DPM audit suites (``audits/exact.toml``, ``audits/dpm.toml``); TOML cannot spell
110 repeated rows or computed gap profiles."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["repeated_point", "split_scores", "opposite_gaps", "opposite_gap_pairs", "spread_gaps", "spread_gap_pairs", "pivot_pairs", "pivot_pairs_first"]


def repeated_point(point: Sequence[float], copies: int) -> np.ndarray:
    """``copies`` rows equal to ``point`` (shape ``(copies, len(point))``): a dataset whose every candidate split
    has one extreme rank, so that one added point moves centreness and emptiness in opposite directions."""
    if isinstance(copies, bool) or not isinstance(copies, int) or copies < 1:
        raise ValueError(f"copies must be an integer >= 1, got {copies!r}")
    p = np.asarray(point, dtype=np.float64).reshape(1, -1)
    return np.repeat(p, copies, axis=0)


def split_scores(point: Sequence[float], copies: int, n_tilde: float, beta: float,
                 bounds: Sequence[float] = (0.0, 1.0)) -> np.ndarray:
    """The DPM split scores (seed 004 Def. 7, default t, q, α) of every candidate on ``repeated_point(point,
    copies)`` -- the utility vector an exponential-mechanism check compares the split sampler with."""
    from .split import DPMSplitEM

    data = repeated_point(point, copies)
    mech = DPMSplitEM(1.0, float(n_tilde), float(beta), bounds=(float(bounds[0]), float(bounds[1])),
                      d=data.shape[1])
    return mech.scores(data)


def _cumulative(gaps: np.ndarray) -> np.ndarray:
    return np.concatenate([[0.0], np.cumsum(gaps)])


def opposite_gaps(m: int, high: float) -> np.ndarray:
    """A ``d = 2`` data set of ``m + 1`` points in ``[0, high]^2`` whose dimension-0 gaps are ``1, 2, …, m`` and
    dimension-1 gaps ``m, …, 1`` (times ``high/(m(m+1)/2)``): every averaged gap of Algorithm 2 is the same,
    ``(m+1)/2`` units (``docs/findings.md`` F11)."""
    if isinstance(m, bool) or not isinstance(m, int) or m < 1:
        raise ValueError(f"m must be an integer >= 1, got {m!r}")
    unit = float(high) / (m * (m + 1) / 2.0)
    g = np.arange(1, m + 1, dtype=np.float64) * unit
    d = np.stack([_cumulative(g), _cumulative(g[::-1])], axis=1)
    return np.clip(d, 0.0, float(high))


def opposite_gap_pairs(m: int, high: float) -> list[list[np.ndarray]]:
    """``[[D, D ∪ {(0, high)}]]`` with ``D = opposite_gaps(m, high)``: the added point copies dimension 0's minimum
    and dimension 1's maximum (zero new gaps), which re-pairs the sorted gaps so that every averaged gap drops
    from ``(m+1)/2`` to ``m/2`` units -- the pair on which Lemma 1's sensitivity 2 fails by the most."""
    d0 = opposite_gaps(m, high)
    return [[d0, np.vstack([d0, [[0.0, float(high)]]])]]


def spread_gaps(m: int, high: float) -> np.ndarray:
    """The 1-D data set of ``m + 1`` points in ``[0, high]`` with gaps ``1, 2, …, m`` (scaled), as ``(m+1, 1)``."""
    if isinstance(m, bool) or not isinstance(m, int) or m < 1:
        raise ValueError(f"m must be an integer >= 1, got {m!r}")
    unit = float(high) / (m * (m + 1) / 2.0)
    return np.clip(_cumulative(np.arange(1, m + 1, dtype=np.float64) * unit), 0.0, float(high))[:, None]


def pivot_pairs(n_left: int, n_right: int, left: float, right: float, pivot: float, d: int = 1) -> list[list[np.ndarray]]:
    """``[[D, D ∪ {pivot}]]`` for DPM end-to-end audits: ``n_left`` points at ``left`` and ``n_right`` at ``right``
    in every coordinate, plus one pivot point placed to move the rank of the central candidates (and with it the
    first split) or the count of a side (and with it the stop)."""
    base = np.concatenate([np.full(int(n_left), float(left)), np.full(int(n_right), float(right))])
    d0 = np.repeat(base[:, None], int(d), axis=1)
    return [[d0, np.vstack([d0, np.full((1, int(d)), float(pivot))])]]


def spread_gap_pairs(m: int, high: float, point: float) -> list[list[np.ndarray]]:
    """``[[D, D ∪ {point}]]`` with ``D = spread_gaps(m, high)``: the one-dimensional counterpart of
    :func:`opposite_gap_pairs`, where Lemma 1's sensitivity 2 holds."""
    d0 = spread_gaps(m, high)
    return [[d0, np.vstack([d0, [[float(point)]]])]]


def pivot_pairs_first(n_left: int, n_right: int, left: float, right: float, pivot: float, d: int = 1) -> np.ndarray:
    """The first data set of :func:`pivot_pairs` (an input for checks that take one data set)."""
    return pivot_pairs(n_left, n_right, left, right, pivot, d)[0][0]
