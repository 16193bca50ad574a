"""RAPPOR and one-time RAPPOR: Bloom filter, permanent and instantaneous randomized response.

Source: Erlingsson, Pihur, Korolova, "RAPPOR: Randomized Aggregatable Privacy-Preserving Ordinal
Response" (CCS 2014), §3 steps 1--3 (Bloom filter ``B`` of the value with ``h`` hash functions into ``k``
bits; permanent randomized response ``B'``: each bit is set to 1 with probability ``f/2``, to 0 with
probability ``f/2`` and kept with probability ``1 − f``; instantaneous randomized response ``S``: each bit is
reported 1 with probability ``q`` if ``B'_j = 1`` and ``p`` if ``B'_j = 0``) and §4 (Theorems 1--2: the
permanent response is ``ε∞``-DP, ``ε∞ = 2h·ln((1 − f/2)/(f/2))``; one report ``S`` is ``ε1``-DP,
``ε1 = h·ln(q*(1 − p*)/(p*(1 − q*)))`` with ``q* = P(S_j = 1 | B_j = 1) = ½f(p + q) + (1 − f)q`` and
``p* = P(S_j = 1 | B_j = 0) = ½f(p + q) + (1 − f)p``).  DP-Sniper's benchmarks ``Rappor`` (steps 1--3,
``h = 4``, ``k = 20``, ``f = 0.75``, ``p = 0.45``, ``q = 0.55``) and ``OneTimeRappor`` (steps 1--2, ``f = 0.95``)
(Bichsel, Steffen, Bogunovic, Vechev, "DP-Sniper", IEEE S&P 2021, §6 benchmark list).  Each of the ``n`` outputs is
one independent run of the whole client (a fresh permanent response per run, as in DP-Sniper's sampler): the
mechanism audited is one report of one value.

Bloom filter: bit ``murmur3_32(str(v), seed=i) mod k`` for ``i = 0 … h − 1`` (MurmurHash3 x86 32-bit, Austin
Appleby, public domain, read as a *signed* 32-bit integer and reduced with Python's non-negative ``%``, the
convention of the ``mmh3`` package DP-Sniper hashes with; :func:`murmur3_32` is implemented here, no
dependency).  Colliding hashes set fewer than ``h`` bits.

True ε (local DP: any two values are neighbours).  Bits are independent given the value, and the filters
of ``v`` and ``v'`` differ in ``a = |B(v) ∖ B(v')|`` and ``b = |B(v') ∖ B(v)|`` bits.  With
``q1 = P(S_j = 1 | B_j = 1)`` and ``q0 = P(S_j = 1 | B_j = 0)`` (``q1 > q0``) the largest log-ratio of one output,
``ln P(s | v) − ln P(s | v')``, is ``a·ln(q1/q0) + b·ln((1 − q0)/(1 − q1))`` (each differing bit at its most
telling value), attained; :meth:`RapporBase.pair_epsilon` is the larger of the two directions.  Over all
values it is ``h·ln(q1/q0) + h·ln((1 − q0)/(1 − q1))`` -- two values with disjoint filters of ``h`` bits each,
which exist (e.g. 6 and 10: {0, 6, 14, 17} and {2, 3, 9, 18}) -- i.e. the paper's ``ε1`` (RAPPOR) and ``ε∞`` (one-time RAPPOR, where
``q1 = 1 − f/2``, ``q0 = f/2``).  At DP-Sniper's parameters:

* ``Rappor``: ``q1 = 0.5125``, ``q0 = 0.4875``, per bit ``ln(q1/q0) = 0.050010``; true ε = 8 × 0.050010 =
  **0.40008**; on DP-Sniper's pairs (1, 0) and (1, 2) (filters {3, 10, 13}, {0, 11, 18} and {7, 10, 11, 19} of
  the values 1, 0 and 2 -- value 0 and 1 lose a bit to a collision -- so 6 resp. 5 differing bits) **0.30006**
  (resp. 0.25005); DP-Sniper's 90 % lower bound 0.293 (logistic regression) / 0.3008 (MLP).
* ``OneTimeRappor``: per bit ``ln((1 − f/2)/(f/2)) = ln(1.05/0.95) = 0.100083``; true ε = 8 × 0.100083 =
  **0.80067**; on DP-Sniper's pairs **0.60050** (resp. 0.50042); DP-Sniper's lower bound 0.5978 / 0.5999.

(The true ε on DP-Sniper's own pairs, 0.30006 and 0.60050, is what its bounds approach; the MLP bound 0.3008
exceeds 0.30006 by 0.0008, within what a 90 % confidence bound allows one run in ten.)

Sampling: the randomized-response steps act on each bit independently and, per run, draw a fresh permanent
response, so the reported bit ``j`` of one run is Bernoulli(``q1``) where the filter is set and Bernoulli(``q0``)
elsewhere, independently over bits and runs (``q1``, ``q0`` as below: ``q*``, ``p*`` of §4 for RAPPOR, ``1 − f/2``,
``f/2`` for one-time RAPPOR); the sampler draws that law directly, one uniform per bit.

Output: int8 ``(n, k)`` in {0, 1}, the reported bits.  :meth:`RapporBase.log_density` is the exact log pmf
of each row (counting measure on {0, 1}^k).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar

import numpy as np

from ._validation import check_n, check_positive_int
from ..noise import bernoulli

__all__ = ["Rappor", "OneTimeRappor", "RapporBase", "murmur3_32", "bloom_bits", "as_value"]

_M32 = 0xFFFFFFFF


def _rotl32(v: int, r: int) -> int:
    return ((v << r) | (v >> (32 - r))) & _M32


def murmur3_32(data: bytes | str, seed: int = 0, signed: bool = True) -> int:
    """MurmurHash3 x86 32-bit of ``data`` (UTF-8 for a string) with ``seed``; signed like ``mmh3.hash``."""
    raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    c1, c2 = 0xCC9E2D51, 0x1B873593
    h = seed & _M32
    nblocks = len(raw) // 4
    for i in range(nblocks):
        k = int.from_bytes(raw[4 * i: 4 * i + 4], "little")
        k = _rotl32((k * c1) & _M32, 15)
        h ^= (k * c2) & _M32
        h = (_rotl32(h, 13) * 5 + 0xE6546B64) & _M32
    tail = raw[4 * nblocks:]
    k = 0
    if len(tail) >= 3:
        k ^= tail[2] << 16
    if len(tail) >= 2:
        k ^= tail[1] << 8
    if len(tail) >= 1:
        k ^= tail[0]
        k = _rotl32((k * c1) & _M32, 15)
        h ^= (k * c2) & _M32
    h ^= len(raw)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _M32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _M32
    h ^= h >> 16
    return h - (1 << 32) if signed and h >= (1 << 31) else h


@lru_cache(maxsize=4096)
def bloom_bits(value: int, n_hashes: int, filter_size: int) -> tuple[int, ...]:
    """The sorted set bits of the Bloom filter of ``value``: ``murmur3_32(str(value), i) mod k``."""
    return tuple(sorted({murmur3_32(str(value), seed=i) % filter_size for i in range(n_hashes)}))


def as_value(x: object) -> int:
    """The client's value: one integer (a Python or numpy integer, an integral float, or a 1-element array)."""
    arr = np.asarray(x)
    if arr.size != 1:
        raise ValueError(f"x must be one value (a scalar), got shape {arr.shape}")
    v = arr.reshape(()).item()
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not float(v).is_integer():
        raise ValueError(f"x must be an integer value, got {x!r}")
    return int(v)


def _check_probability(name: str, value: float, *, open_interval: bool = False) -> float:
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or not math.isfinite(float(value)):
        raise ValueError(f"{name} must be a finite real number, got {value!r}")
    v = float(value)
    ok = 0.0 < v < 1.0 if open_interval else 0.0 <= v <= 1.0
    if not ok:
        interval = "(0, 1)" if open_interval else "[0, 1]"
        raise ValueError(f"{name} must lie in {interval}, got {value!r}")
    return v


@dataclass(frozen=True)
class RapporBase:
    """What RAPPOR and one-time RAPPOR share: the Bloom filter, the per-bit report probabilities
    ``q1 = P(S_j = 1 | B_j = 1)``, ``q0 = P(S_j = 1 | B_j = 0)``, sampling, the exact law and the true ε."""

    delta: ClassVar[float] = 0.0

    def _check_filter(self) -> None:
        check_positive_int("n_hashes", self.n_hashes)
        check_positive_int("filter_size", self.filter_size)
        _check_probability("f", self.f, open_interval=True)

    def report_probabilities(self) -> tuple[float, float]:
        """``(q1, q0)``: probability that a reported bit is 1 when the true bit is 1, resp. 0."""
        raise NotImplementedError

    def bits(self, x: object) -> tuple[int, ...]:
        """The set bits of the Bloom filter of the value ``x``."""
        return bloom_bits(as_value(x), int(self.n_hashes), int(self.filter_size))

    def bloom_filter(self, x: object) -> np.ndarray:
        """The Bloom filter of ``x`` as an int8 vector of length ``filter_size``."""
        b = np.zeros(int(self.filter_size), dtype=np.int8)
        b[list(self.bits(x))] = 1
        return b

    @property
    def bit_epsilon(self) -> float:
        """Largest loss of one differing bit, ``max(ln(q1/q0), ln((1 − q0)/(1 − q1)))``."""
        q1, q0 = self.report_probabilities()
        return max(math.log(q1 / q0), math.log((1.0 - q0) / (1.0 - q1)))

    @property
    def epsilon(self) -> float:
        """The claim: the paper's bound ``h·ln(q1/q0) + h·ln((1 − q0)/(1 − q1))`` (``ε1`` resp. ``ε∞``)."""
        q1, q0 = self.report_probabilities()
        h = int(self.n_hashes)
        return h * math.log(q1 / q0) + h * math.log((1.0 - q0) / (1.0 - q1))

    def pair_epsilon(self, x0: object, x1: object) -> float:
        """Exact ε of the pair ``(x0, x1)``: ``max`` over the two directions of
        ``a·ln(q1/q0) + b·ln((1 − q0)/(1 − q1))`` (``a``, ``b`` the bits set only in the first, only in the second)."""
        q1, q0 = self.report_probabilities()
        s0, s1 = set(self.bits(x0)), set(self.bits(x1))
        a, b = len(s0 - s1), len(s1 - s0)
        up, down = math.log(q1 / q0), math.log((1.0 - q0) / (1.0 - q1))
        return max(a * up + b * down, b * up + a * down)

    def true_epsilon(self) -> float:
        """Sup of :meth:`pair_epsilon` over all values: ``h·ln(q1/q0) + h·ln((1 − q0)/(1 − q1))`` (two values
        with disjoint filters of ``h`` bits each exist)."""
        return self.epsilon

    def __call__(self, x: object, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` independent reports on the value ``x``: bit ``j`` is 1 with probability ``q1`` where the Bloom
        filter is set and ``q0`` elsewhere, independently over bits and runs -- the law of the randomized-response
        steps run one after the other with a fresh permanent response per run (module docstring), drawn with one
        Bernoulli per bit (:func:`algorithms.noise.bernoulli`, the law of ``rng.random(shape) < p``)."""
        n = check_n(n)
        q1, q0 = self.report_probabilities()
        p_one = np.where(self.bloom_filter(x) == 1, q1, q0)
        return bernoulli(rng, p_one, (n, p_one.shape[0])).view(np.int8)

    def log_density(self, x: object, out: np.ndarray) -> np.ndarray:
        """Exact log pmf of each row of ``out`` (shape ``(m, filter_size)``) under the value ``x``; −inf for rows
        that are not 0/1 vectors of the right length."""
        rows = np.asarray(out)
        if rows.ndim == 1:
            rows = rows.reshape(1, -1)
        k = int(self.filter_size)
        if rows.ndim != 2 or rows.shape[1] != k:
            raise ValueError(f"out must have shape (m, {k}), got {np.asarray(out).shape}")
        q1, q0 = self.report_probabilities()
        bloom = self.bloom_filter(x).astype(bool)
        p_one = np.where(bloom, q1, q0)
        valid = np.all((rows == 0) | (rows == 1), axis=1)
        one = rows == 1
        with np.errstate(divide="ignore"):
            ll = np.where(one, np.log(p_one), np.log1p(-p_one)).sum(axis=1)
        return np.where(valid, ll, -np.inf)


@dataclass(frozen=True)
class Rappor(RapporBase):
    """RAPPOR steps 1--3 (Bloom filter, permanent and instantaneous randomized response), one report.

    Output: int8 ``(n, filter_size)`` in {0, 1}.  DP-Sniper's ``Rappor``: ``h = 4``, ``k = 20``, ``f = 0.75``,
    ``p = 0.45``, ``q = 0.55``.
    """

    f: float = 0.75
    p: float = 0.45
    q: float = 0.55
    n_hashes: int = 4
    filter_size: int = 20

    def __post_init__(self) -> None:
        self._check_filter()
        _check_probability("p", self.p)
        _check_probability("q", self.q)
        q1, q0 = self.report_probabilities()
        if not (0.0 < q0 < q1 < 1.0):
            raise ValueError(f"need 0 < p* < q* < 1 (q > p), got p={self.p!r}, q={self.q!r}")

    def report_probabilities(self) -> tuple[float, float]:
        """``q* = ½f(p + q) + (1 − f)q`` and ``p* = ½f(p + q) + (1 − f)p`` (Erlingsson et al. §4)."""
        f, p, q = float(self.f), float(self.p), float(self.q)
        return 0.5 * f * (p + q) + (1.0 - f) * q, 0.5 * f * (p + q) + (1.0 - f) * p


@dataclass(frozen=True)
class OneTimeRappor(RapporBase):
    """One-time RAPPOR, steps 1--2 (Bloom filter and permanent randomized response only).

    Output: int8 ``(n, filter_size)`` in {0, 1}.  DP-Sniper's ``OneTimeRappor``: ``h = 4``, ``k = 20``, ``f = 0.95``.
    """

    f: float = 0.95
    n_hashes: int = 4
    filter_size: int = 20

    def __post_init__(self) -> None:
        self._check_filter()

    def report_probabilities(self) -> tuple[float, float]:
        """``q1 = 1 − f/2`` and ``q0 = f/2``."""
        f = float(self.f)
        return 1.0 - 0.5 * f, 0.5 * f
