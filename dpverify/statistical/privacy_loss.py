"""Empirical privacy-loss histogram of one neighbouring pair, from the audit's search samples.

The privacy loss of output ``o`` on the pair ``(x0, x1)`` is ``L(o) = ln P[M(x0) = o] / P[M(x1) = o]``; its
distribution under ``o ~ M(x0)`` (the privacy-loss distribution) is what an ε-DP claim bounds: ``|L| <= ε``
everywhere for pure DP.  :func:`loss_histogram` estimates it from samples of both sides by binning the outputs
(each distinct value when the outputs take few values, else quantile bins of the pooled sample) and taking the
log-ratio of the two empirical frequencies per bin; at most ``MAX_ROWS`` samples per side are used.

This is a *descriptive* picture for reports: binning merges outputs (which lowers the loss), sampling noise
inflates it in sparse bins, and bins seen on one side only have an infinite empirical loss.  The audit's verdict
and its ε lower bound never use it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpverify.statistical.events import unique_rows

__all__ = ["loss_histogram", "MAX_DISCRETE_VALUES", "CONTINUOUS_BINS", "MAX_ROWS"]

#: Outputs with at most this many distinct rows (both sides together) are binned value by value.
MAX_DISCRETE_VALUES = 64
#: Quantile bins of the pooled sample for continuous scalar outputs.
CONTINUOUS_BINS = 40
#: Rows used per side (the samples are i.i.d., so a prefix is a fair subsample; keeps audits fast).
MAX_ROWS = 20_000
#: Rows whose distinct values decide between value-by-value and quantile binning.
PROBE_ROWS = 2_000


def _codes(out0: np.ndarray, out1: np.ndarray) -> tuple[np.ndarray, np.ndarray, int, str] | None:
    """Bin indices of both samples, the number of bins and how they were made; None if no binning applies."""
    a = out0.reshape(len(out0), -1)
    b = out1.reshape(len(out1), -1)
    if a.shape[1] > 1 and a.dtype.kind == "f":
        return None  # continuous vector outputs: no canonical one-dimensional binning
    both = np.concatenate([a, b])
    if both.dtype.kind == "f" and not np.isfinite(both).all():
        both = np.where(np.isnan(both), np.inf, both)  # NaN outputs form their own value
    # a cheap probe first: sorting every row only pays when the outputs take few values
    if len(unique_rows(both[:PROBE_ROWS])[0]) <= MAX_DISCRETE_VALUES:
        first, inverse = unique_rows(both)
        if len(first) <= MAX_DISCRETE_VALUES:
            return inverse[: len(a)], inverse[len(a):], len(first), "values"
    if both.shape[1] != 1 or both.dtype.kind not in "iuf":
        return None  # continuous vector outputs: no canonical one-dimensional binning
    x = both[:, 0].astype(np.float64)
    finite = x[np.isfinite(x)]
    edges = np.unique(np.quantile(finite, np.linspace(0.0, 1.0, CONTINUOUS_BINS + 1)[1:-1]))
    codes = np.searchsorted(edges, x, side="right")
    return codes[: len(a)], codes[len(a):], len(edges) + 1, "quantile bins"


def loss_histogram(out0: Any, out1: Any, bins: int = 30) -> dict[str, Any] | None:
    """The binned privacy-loss distribution of ``out0`` (samples of ``M(x0)``) against ``out1`` (of ``M(x1)``).

    Returns a JSON-ready dict: ``edges`` and ``mass`` (a histogram of the finite per-bin losses, weighted by
    the bins' frequency under ``x0``), ``mass_plus_inf`` / ``mass_minus_inf`` (frequency under ``x0`` of bins
    never seen under ``x1``, and under ``x1`` of bins never seen under ``x0``), ``max_abs_finite_loss``, the
    number of output bins and how they were made; or ``None`` when the outputs cannot be binned (continuous
    vectors).
    """
    a, b = np.asarray(out0)[:MAX_ROWS], np.asarray(out1)[:MAX_ROWS]
    if len(a) == 0 or len(b) == 0:
        return None
    coded = _codes(a, b)
    if coded is None:
        return None
    c0, c1, k, how = coded
    p0 = np.bincount(c0, minlength=k) / len(c0)
    p1 = np.bincount(c1, minlength=k) / len(c1)
    seen = (p0 > 0) & (p1 > 0)
    losses = np.log(p0[seen] / p1[seen])
    weights = p0[seen]
    if len(losses):
        top = float(np.abs(losses).max())
        top = top if top > 0 else 1.0
        mass, edges = np.histogram(losses, bins=bins, range=(-top, top), weights=weights)
    else:
        top, mass, edges = math.nan, np.zeros(0), np.zeros(0)
    return {
        "edges": [float(e) for e in edges],
        "mass": [float(m) for m in mass],
        "mass_plus_inf": float(p0[(p0 > 0) & (p1 == 0)].sum()),
        "mass_minus_inf": float(p1[(p1 > 0) & (p0 == 0)].sum()),
        "max_abs_finite_loss": top if len(losses) else None,
        "output_bins": int(k),
        "binning": how,
        "samples": [int(len(c0)), int(len(c1))],
    }
