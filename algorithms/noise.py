"""An explicit noise source: the randomness of a mechanism, drawn one named step at a time.

Mechanisms written against :class:`NoiseSource` expose, at every randomised step, the exact quantity the
noise protects, the noise scale and the sensitivity that scale is calibrated for.  That is the hook a
verifier needs for *frozen-noise replay* (``dpverify.code_checks.replay``): run the mechanism on ``D`` and on a neighbour
``D'`` with the same draws, and compare the protected quantities step by step against the declared
sensitivities -- a sensitivity bug then shows up deterministically, without any statistics.

Protocol (duck-typed; ``algorithms`` never imports ``dpverify``)
----------------------------------------------------------------
A mechanism that supports replay has a method ``release(x, n, noise)`` that draws ``n`` outputs on ``x``
and takes all its randomness from ``noise`` through two calls:

``noise.add(step, value, draw, *, sensitivity, norm="l1", scale=None, kind="other")``
    Additive noise: returns ``value + draw(rng)``.  ``value`` is the exact quantity (broadcastable to the
    draw's shape; the first axis of the draw indexes the ``n`` runs), ``sensitivity`` the largest change of
    ``value`` between neighbours that the noise is calibrated for, measured in ``norm`` (``"l1"``,
    ``"l2"`` or ``"linf"``) over the trailing axes of one run; ``scale`` the noise scale (Laplace ``b``,
    Gaussian ``σ``, geometric ``α``), ``kind`` the noise law (``"laplace"``, ``"gaussian"``,
    ``"geometric"`` or ``"other"``).
``noise.select(step, utilities, draw, *, sensitivity, norm="linf", scale=None)``
    A selection (exponential mechanism, report-noisy-max, …): returns ``draw(rng)``, the chosen indices, one
    per run.  ``utilities`` is the ``(n, m)`` (or ``(m,)``, shared by all runs) score table the selection
    protects, with ``-inf`` for candidates that are not available in a run; ``sensitivity`` is the Δu the
    selection is calibrated for (ℓ∞ over the candidates by default), ``scale`` its coefficient (e.g.
    ``ε/(2Δu)``).

``step`` is a short name (``"laplace"``, ``"em[3]"``, …); a replay matches the steps of the two runs by
order and name.  :class:`NoiseSource` is the plain implementation: it just calls ``draw(self.rng)``, so a
mechanism's ``__call__(x, n, rng)`` written as ``self.release(x, n, NoiseSource(rng))`` draws exactly the
same numbers as before it was instrumented.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["NoiseSource", "NORMS", "KINDS", "laplace_noise", "bernoulli", "random_bytes"]

#: Norms a step's sensitivity can be declared in.
NORMS: tuple[str, ...] = ("l1", "l2", "linf")
#: Noise laws :meth:`NoiseSource.add` knows by name (anything else is ``"other"``).
KINDS: tuple[str, ...] = ("laplace", "gaussian", "geometric", "other")

Draw = Callable[[np.random.Generator], Any]

#: index, within the 8 bytes of a float64, of the byte that holds the sign bit
_SIGN_BYTE = 7 if sys.byteorder == "little" else 0


def laplace_noise(rng: np.random.Generator, scale: float, size: int | tuple[int, ...] | None = None, *,
                  out: np.ndarray | None = None) -> np.ndarray:
    """``size`` i.i.d. Laplace(0, ``scale``) draws (float64), the law of ``rng.laplace(0.0, scale, size)``; with
    ``out`` (a C-contiguous float64 array, instead of ``size``) written into it and returned.

    A Laplace variable is an exponential one with a fair random sign: ``scale·S·E`` with ``E ~ Exp(1)`` and ``S``
    uniform on ``{−1, +1}`` independent of ``E`` has density ``exp(−|z|/scale)/(2·scale)``.  ``E`` is numpy's
    ziggurat ``standard_exponential`` and ``S`` one raw bit of ``rng.bytes`` per draw, written into the sign bit
    of ``scale·E`` -- about 2.5x less CPU than ``rng.laplace`` (one logarithm per draw), and a different stream
    for the same seed (same law).
    """
    out = rng.standard_exponential(size) if out is None else rng.standard_exponential(out=out)
    out *= scale
    m = out.size
    if m:
        bits = np.unpackbits(random_bytes(rng, (m + 7) // 8), count=m)
        bits <<= 7
        out.reshape(-1).view(np.uint8)[_SIGN_BYTE::8] ^= bits
    return out


#: bit generators whose 32-bit draws are the halves of their 64-bit ones, low half first, the high half kept for the
#: next 32-bit draw (numpy's ``has_uint32`` / ``uinteger`` state); MT19937 draws 32 bits natively and is not among them
_SPLIT_64 = (np.random.PCG64, np.random.PCG64DXSM, np.random.SFC64, np.random.Philox)


def random_bytes(rng: np.random.Generator, length: int) -> np.ndarray:
    """``np.frombuffer(rng.bytes(length), np.uint8)`` -- the same bytes, and the generator left in the same state --
    without ``Generator.bytes``' fixed cost (about 12 µs a call here, against 1 µs for the raw draws: it goes through
    ``integers(0, 2**32, dtype=uint32)``; on the SVT's 11 Laplace steps of a 256-row batch that was a sixth of the
    call).

    ``rng.bytes(length)`` is ``ceil(length / 4)`` 32-bit draws, little-endian.  For the bit generators of
    :data:`_SPLIT_64` those are the pending half (``has_uint32``: the high half of a 64-bit draw that an earlier
    32-bit draw left) if there is one, then the 64-bit raw draws' low and high halves in turn; an odd number of
    halves from the raw draws leaves the last high half pending, as ``rng.bytes`` does.  Any other generator takes
    ``rng.bytes`` itself."""
    bg = rng.bit_generator
    if type(bg) not in _SPLIT_64 or length <= 0 or sys.byteorder != "little":
        return np.frombuffer(rng.bytes(length), dtype=np.uint8)
    state = bg.state
    pending = int(state["has_uint32"])
    halves = (length - 1) // 4 + 1 - pending                  # halves the raw draws give
    raw = bg.random_raw((halves + 1) // 2)
    words = raw.view(np.uint32)[:halves]
    if pending:
        words = np.concatenate([np.array([state["uinteger"]], dtype=np.uint32), words])
    if pending or halves % 2:                                   # the pending half changes
        state = bg.state
        state["has_uint32"], state["uinteger"] = halves % 2, int(raw[-1] >> np.uint64(32)) if halves % 2 else 0
        bg.state = state
    return words.view(np.uint8)[:length]


#: bits of a uniform double of numpy's ``Generator.random`` (``(next_uint64 >> 11) · 2^-53``)
_DOUBLE_BITS = 53
#: low bits of the 53 that :func:`bernoulli` draws only for the draws whose first byte ties with the threshold's
_LOW_BITS = _DOUBLE_BITS - 8
#: entries per row of :func:`bernoulli`'s comparisons (whole blocks of the probabilities' trailing axes)
_TILE = 4096


def bernoulli(rng: np.random.Generator, p: float | np.ndarray, shape: int | tuple[int, ...]) -> np.ndarray:
    """A boolean array of ``shape``, entry ``i`` true with probability ``p[i]`` (``p`` broadcast to ``shape``'s
    trailing axes), independently: exactly the law of ``rng.random(shape) < p``.

    ``rng.random`` is ``U = K·2^-53`` with ``K`` uniform on 53 bits, so ``U < p`` holds iff ``K < T = ⌈p·2^53⌉``
    (``p·2^53`` is exact in floating point): probability ``T/2^53``.  Here ``K = H·2^45 + L`` is drawn lazily:
    the high byte ``H`` for every entry (raw bytes of ``rng.bit_generator``), compared with ``T``'s high byte; only
    where they tie (probability 1/256) are the 45 low bits ``L`` drawn and compared with ``T``'s -- the same
    probability ``T_hi/256 + (1/256)·T_lo/2^45 = T/2^53``, about 5x less CPU than ``rng.random(shape) < p`` (one
    byte of the random stream per entry instead of eight: 15 against 77 ms for 1,000,000 rows of 20 columns), and a
    different stream for the same seed (same law).
    """
    prob = np.asarray(p, dtype=np.float64)
    if np.any(~((prob >= 0.0) & (prob <= 1.0))):
        raise ValueError(f"bernoulli: probabilities must lie in [0, 1], got {p!r}")
    threshold = np.ceil(np.ldexp(prob, _DOUBLE_BITS)).astype(np.uint64)  # T ∈ [0, 2^53]
    # split T = hi·2^45 + lo with hi ≤ 255 (T = 2^53 becomes 255·2^45 + 2^45: every low draw passes)
    hi = np.minimum(threshold >> np.uint64(_LOW_BITS), np.uint64(255))
    lo = threshold - (hi << np.uint64(_LOW_BITS))
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if prob.ndim > len(shape):
        raise ValueError(f"bernoulli: probabilities of shape {prob.shape} do not broadcast to {shape}")
    # the thresholds over the trailing axes (small); an entry's flat index modulo their size finds its own
    try:
        trailing = shape[len(shape) - prob.ndim:]
        lo, hi = (np.broadcast_to(a, trailing).reshape(-1) for a in (lo, hi.astype(np.uint8)))
    except ValueError:
        raise ValueError(f"bernoulli: probabilities of shape {prob.shape} do not broadcast to {shape}") from None
    size = math.prod(shape)
    if size == 0:
        return np.zeros(shape, dtype=np.bool_)
    high = rng.bit_generator.random_raw((size + 7) // 8).view(np.uint8)[:size]
    out, tied = np.empty(size, dtype=np.bool_), np.empty(size, dtype=np.bool_)
    # the comparisons on rows of several trailing blocks against the thresholds repeated as often (a long inner loop
    # instead of one per short block: 4-5x faster on 20 columns), the remaining blocks as they are
    t = hi.size
    reps = max(1, _TILE // t)
    head = size // (t * reps) * (t * reps)
    for part, thresholds in ((slice(0, head), np.tile(hi, reps)), (slice(head, size), hi)):
        width = thresholds.size
        np.less(high[part].reshape(-1, width), thresholds, out=out[part].reshape(-1, width))
        np.equal(high[part].reshape(-1, width), thresholds, out=tied[part].reshape(-1, width))
    tie = np.flatnonzero(tied)
    if tie.size:
        low = rng.bit_generator.random_raw(tie.size) >> np.uint64(64 - _LOW_BITS)
        out[tie] = low < lo[tie % lo.size]
    return out.reshape(shape)


def _check(step: str, sensitivity: Any, norm: str, kind: str | None = None) -> None:
    if not isinstance(step, str) or not step:
        raise ValueError(f"a noise step needs a non-empty name, got {step!r}")
    if norm not in NORMS:
        raise ValueError(f"step {step!r}: norm must be one of {NORMS}, got {norm!r}")
    if kind is not None and kind not in KINDS:
        raise ValueError(f"step {step!r}: kind must be one of {KINDS}, got {kind!r}")
    try:
        s = float(sensitivity)
    except (TypeError, ValueError):
        raise ValueError(f"step {step!r}: sensitivity must be a number, got {sensitivity!r}") from None
    if not s > 0:  # NaN fails too; +inf is allowed (a step that claims nothing)
        raise ValueError(f"step {step!r}: sensitivity must be > 0, got {sensitivity!r}")


def _is_temporary(a: Any) -> bool:
    """Whether ``a`` is a writeable float ndarray owning its memory that only the caller's local name refers to
    (``sys.getrefcount`` counts that name and its own argument)."""
    return (type(a) is np.ndarray and a.dtype.kind == "f" and a.flags.owndata and a.flags.writeable
            and sys.getrefcount(a) <= 3)


class NoiseSource:
    """Plain noise: every step is ``draw(rng)`` on the wrapped generator (see the module docstring)."""

    def __init__(self, rng: np.random.Generator) -> None:
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"NoiseSource needs a numpy.random.Generator, got {type(rng).__name__}")
        self.rng = rng

    def add(self, step: str, value: Any, draw: Draw, *, sensitivity: float, norm: str = "l1",
            scale: float | None = None, kind: str = "other") -> np.ndarray:
        """``value + draw(rng)``; the keywords describe the calibration (checked, otherwise unused).

        When the draw is a fresh float array that nothing else refers to and that already has the sum's shape and
        dtype, the sum is formed in it (the same numbers: IEEE addition is commutative) instead of in a new array.
        """
        _check(step, sensitivity, norm, kind)
        d = draw(self.rng)
        if (_is_temporary(d) and isinstance(value, (int, float, np.ndarray, np.generic))
                and np.shape(value) in ((), d.shape[d.ndim - np.ndim(value):]) and np.result_type(value, d) == d.dtype):
            d += value
            return d
        return value + d

    def select(self, step: str, utilities: Any, draw: Draw, *, sensitivity: float, norm: str = "linf",
               scale: float | None = None) -> np.ndarray:
        """``draw(rng)``: the chosen candidate of every run."""
        _check(step, sensitivity, norm)
        return np.asarray(draw(self.rng))
