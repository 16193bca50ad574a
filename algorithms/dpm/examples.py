"""Small datasets used by the DPM audit suites (``audits/exact.toml``); TOML cannot spell 110 repeated rows."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["repeated_point", "split_scores"]


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
    from algorithms.dpm.split import DPMSplitEM

    data = repeated_point(point, copies)
    mech = DPMSplitEM(1.0, float(n_tilde), float(beta), bounds=(float(bounds[0]), float(bounds[1])),
                      d=data.shape[1])
    return mech.scores(data)
