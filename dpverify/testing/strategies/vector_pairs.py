"""Strategies of ℓ∞ / ℓ1 neighbouring vector pairs (weight neighbours of graphs included)."""


from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from hypothesis.strategies import SearchStrategy

from dpverify.errors import InputError
from dpverify.neighbours import Pair
from dpverify.neighbours.base import check_radius
from dpverify.neighbours.vectors import as_vector
from dpverify.testing.strategies.arguments import DrawFn, check_dim, check_range, is_int
from dpverify.testing.strategies.values import vector_values


# --------------------------------------------------------------------------------------------------
# Vector pairs (ℓ∞ / ℓ1 weight neighbours)
# --------------------------------------------------------------------------------------------------


def _fit_linf(w0: np.ndarray, w1: np.ndarray, r: float) -> np.ndarray:
    """Move coordinates of ``w1`` towards ``w0`` by ulps until ``max|w1 - w0| <= r`` as computed."""
    w1 = w1.copy()
    for _ in range(64):
        bad = ~(np.abs(w1 - w0) <= r)
        if not bad.any():
            return w1
        w1[bad] = np.nextafter(w1[bad], w0[bad])
    bad = ~(np.abs(w1 - w0) <= r)  # pragma: no cover - rounding never needs 64 ulps
    w1[bad] = w0[bad]  # pragma: no cover
    return w1


def _fit_l1(w0: np.ndarray, w1: np.ndarray, r: float) -> np.ndarray:
    """Move coordinates of ``w1`` towards ``w0`` by ulps until ``sum|w1 - w0| <= r`` as computed."""
    w1 = _fit_linf(w0, w1, r)
    for _ in range(4 * w1.size + 64):
        diff = np.abs(w1 - w0)
        if float(np.sum(diff)) <= r:
            return w1
        moving = diff > 0
        k = int(np.argmax(np.where(moving, np.spacing(np.abs(w1)), -1.0)))  # the coarsest moved coordinate
        w1[k] = np.nextafter(w1[k], w0[k])
    for _ in range(4096):  # pragma: no cover - rounding excess of many ulps; shrink all coordinates
        if float(np.sum(np.abs(w1 - w0))) <= r:
            return w1
        w1 = np.nextafter(w1, w0)
    return w0.copy()  # pragma: no cover


def _half_signs(m: int, k: int, first: float) -> np.ndarray:
    return np.where(np.arange(m) < k, first, -first)


@st.composite
def _linf_shift(draw: DrawFn, m: int, r: float) -> tuple[str, np.ndarray, bool]:
    """``(label, d, x_shape)`` with ``||d||_inf <= r``; extreme patterns first (StatDP)."""
    kinds = ["one-up", "one-down", "all-up", "all-down"]
    if m >= 2:
        kinds += ["half-up-half-down", "half-down-half-up", "one-up-rest-down", "one-down-rest-up", "x-shape"]
    kinds += ["random-signs", "vertices", "random"]
    kind = draw(st.sampled_from(kinds))
    if kind in ("one-up", "one-down", "one-up-rest-down", "one-down-rest-up"):
        i = draw(st.one_of(st.sampled_from(sorted({0, m - 1})), st.integers(0, m - 1)))
        sign = 1.0 if kind.startswith("one-up") else -1.0
        if kind.endswith("rest-down") or kind.endswith("rest-up"):
            d = np.full(m, -sign * r)
            d[i] = sign * r
        else:
            d = np.zeros(m)
            d[i] = sign * r
        return f"{kind}[{i}]", d, False
    if kind in ("all-up", "all-down"):
        return kind, np.full(m, r if kind == "all-up" else -r), False
    if kind in ("half-up-half-down", "half-down-half-up", "x-shape"):
        k = draw(st.one_of(st.just(m // 2), st.integers(1, m - 1)))
        d = r * _half_signs(m, k, 1.0 if kind != "half-down-half-up" else -1.0)
        return f"{kind}[{k}]", d, kind == "x-shape"
    if kind == "random-signs":
        elements: SearchStrategy[float] = st.sampled_from([r, -r])
    elif kind == "vertices":
        elements = st.sampled_from([r, -r, 0.0])
    else:
        elements = st.one_of(st.sampled_from([r, -r, 0.0]), st.floats(-r, r))
    return kind, draw(hnp.arrays(np.float64, m, elements=elements)), False


@st.composite
def _l1_shift(draw: DrawFn, m: int, r: float) -> tuple[str, np.ndarray, bool]:
    """``(label, d, x_shape)`` with ``||d||_1 <= r`` (up to rounding, fixed by :func:`_fit_l1`)."""
    kinds = ["one-up", "one-down"] + (["split"] if m >= 2 else []) + ["spread-up", "spread-down"]
    if m >= 2:
        kinds += ["spread-half-up-half-down", "spread-half-down-half-up", "spread-signs", "x-shape"]
    kinds += ["inside"]
    kind = draw(st.sampled_from(kinds))
    d = np.zeros(m)
    if kind in ("one-up", "one-down"):
        i = draw(st.one_of(st.sampled_from(sorted({0, m - 1})), st.integers(0, m - 1)))
        d[i] = r if kind == "one-up" else -r
        return f"{kind}[{i}]", d, False
    if kind == "split":
        i = draw(st.integers(0, m - 1))
        j = draw(st.integers(0, m - 2))
        j += j >= i
        t = draw(st.one_of(st.just(0.5), st.floats(0.0, 1.0)))
        si, sj = draw(st.sampled_from([1.0, -1.0])), draw(st.sampled_from([1.0, -1.0]))
        d[i], d[j] = si * t * r, sj * (1.0 - t) * r
        return f"split[{i},{j}]", d, False
    step = r / m
    if kind in ("spread-up", "spread-down"):
        return kind, np.full(m, step if kind == "spread-up" else -step), False
    if kind in ("spread-half-up-half-down", "spread-half-down-half-up", "x-shape"):
        k = draw(st.one_of(st.just(m // 2), st.integers(1, m - 1)))
        d = step * _half_signs(m, k, -1.0 if kind == "spread-half-down-half-up" else 1.0)
        return f"{kind}[{k}]", d, kind == "x-shape"
    if kind == "spread-signs":
        return kind, draw(hnp.arrays(np.float64, m, elements=st.sampled_from([step, -step]))), False
    v = draw(hnp.arrays(np.float64, m, elements=st.floats(-1.0, 1.0)))
    scale = draw(st.one_of(st.just(1.0), st.floats(0.0, 1.0)))
    top = float(np.max(np.abs(v)))
    if top > 0.0:
        v = v / top  # max |v| = 1, so sum |v| in [1, m]: no overflow below
        d = v * (r * scale / float(np.sum(np.abs(v))))
    return kind, d, False


@dataclass(frozen=True, eq=False)
class VectorSource:
    """The base of vector pairs: a fixed vector / weighted input, or drawn weights on its topology."""

    m: int
    fixed: Any  # the _Vector of a fixed base, or None
    rebuild: Callable[[np.ndarray], Any]
    weights: SearchStrategy[np.ndarray] | None  # drawn base weights, or None for the fixed base


@st.composite
def draw_vector_pair(draw: DrawFn, src: VectorSource, radius: float, norm: str) -> Pair:
    shift = _linf_shift(src.m, radius) if norm == "linf" else _l1_shift(src.m, radius)
    fit = _fit_linf if norm == "linf" else _fit_l1
    if src.weights is None:
        w = src.fixed.w.copy()
        x0 = src.fixed.base()
    else:
        w = np.asarray(draw(src.weights), dtype=float)
        x0 = None
    label, d, x_shape = draw(shift)
    if x_shape:
        w0 = w + 0.5 * d
        w1 = fit(w0, w - 0.5 * d, radius)
        return Pair(src.rebuild(w0), src.rebuild(w1), label)
    w1 = fit(w, w + d, radius)
    return Pair(src.rebuild(w.copy()) if x0 is None else x0, src.rebuild(w1), label)


def vector_source(
    base: Any, low: Any, high: Any, fn: str, special: Sequence[float] = (), name: str = "base"
) -> VectorSource:
    if (low is None) != (high is None):
        raise InputError(f"{fn}: pass both base_low and base_high (the range of the base weights), or neither.")
    if is_int(base):
        m = check_dim(base, fn)
        assert m is not None
        if low is None:
            raise InputError(
                f"{fn}: base is the dimension {m}, so pass base_low= and base_high= (the range the base "
                "vectors are drawn from), or pass the base vector itself."
            )
        lo, hi = check_range(low, high, fn, ("base_low", "base_high"))
        return VectorSource(m, None, lambda w: np.array(w, dtype=float), vector_values(m, lo, hi, special, True))
    v = as_vector(base, name, fn)
    m = v.w.size
    if low is None:
        return VectorSource(m, v, v.rebuild if v.weighted else (lambda w: np.array(w, dtype=float)), None)
    lo, hi = check_range(low, high, fn, ("base_low", "base_high"))
    rebuild = v.rebuild if v.weighted else (lambda w: np.array(w, dtype=float))
    return VectorSource(m, None, rebuild, vector_values(m, lo, hi, special, True))


def linf_pairs(
    base: Any, radius: float, *, base_low: float | None = None, base_high: float | None = None
) -> SearchStrategy[Pair]:
    """ℓ∞ weight-neighbour pairs ``(x0, x1)`` with ``x1.weights = x0.weights + d``, ``||d||_inf <= radius``.

    ``base`` is a 1-D array, a weighted input (``.weights`` / ``.with_weights``; outputs keep its type
    and topology) or an int dimension.  Without ``base_low`` / ``base_high``, ``x0`` is the base itself
    (the same object for weighted inputs); with them, ``x0``'s weights are drawn by
    ``vectors(dim, base_low, base_high)`` (required for an int base).  ``x1`` may leave
    ``[base_low, base_high]`` by up to ``radius``: the relation does not bound the weights.

    Shift labels: ``one-up[i]``, ``one-down[i]``, ``all-up``, ``all-down``, ``half-up-half-down[k]`` (the
    first ``k`` coordinates up), ``half-down-half-up[k]``, ``one-up-rest-down[i]``,
    ``one-down-rest-up[i]``, ``x-shape[k]`` (``x0 = x + u/2``, ``x1 = x - u/2``), ``random-signs``,
    ``vertices`` (each coordinate -r, 0 or +r) and ``random`` (also arbitrary values in [-r, r]).
    """
    fn = "linf_pairs"
    r = check_radius(radius, fn)
    return draw_vector_pair(vector_source(base, base_low, base_high, fn), r, "linf")


def l1_pairs(
    base: Any, radius: float, *, base_low: float | None = None, base_high: float | None = None
) -> SearchStrategy[Pair]:
    """ℓ1 weight-neighbour pairs: as :func:`linf_pairs` with ``||d||_1 <= radius``.

    Shift labels: ``one-up[i]`` / ``one-down[i]`` (the whole budget on one coordinate), ``split[i,j]``
    (over two coordinates, signs drawn), ``spread-up`` / ``spread-down`` (``±r/m`` everywhere),
    ``spread-half-up-half-down[k]``, ``spread-half-down-half-up[k]``, ``spread-signs``, ``x-shape[k]``
    and ``inside`` (an arbitrary point of the ball, often on its surface).
    """
    fn = "l1_pairs"
    r = check_radius(radius, fn)
    return draw_vector_pair(vector_source(base, base_low, base_high, fn), r, "l1")


@st.composite
def shifted_weights(draw: DrawFn, w: np.ndarray, base_radius: float) -> np.ndarray:
    _, d, _ = draw(_linf_shift(w.size, base_radius))
    return _fit_linf(w, w + d, base_radius)
