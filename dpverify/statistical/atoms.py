"""Point masses that a search sample is too small to see: the atom sweep.

A continuous mechanism that, with a small probability ``p``, releases its exact input (``if rng.random() < p:
return x``) has an event -- "the output equals x" -- seen about ``p·n`` times under ``x`` and never under the
neighbour ``x'``.  At the test budget ``n`` it certifies an unbounded ε as soon as ``p·n`` reaches a few
sightings, but a search sample of ``n_search << n`` outputs sees it ``p·n_search`` times: too few to tell it from
the continuous part, where every value is seen once.  Black-box auditors that choose events only on a small
search sample are fooled by such *hidden low-probability mass* (the "Curator attack", arXiv 2411.16516).

The sweep draws ``n_sweep`` extra outputs per input (a tenth of the test budget when that is larger than the
search sample) and keeps of each output only a 64-bit hash of its row (:func:`row_hashes`: 8 bytes per output,
computed where the batch is drawn).  Values repeated within the sweep are the point masses; under the two
inputs of a pair their counts give the candidate :class:`HashSetEvent` -- a union of atoms ordered by their
likelihood ratio on one half of the sweep, its length chosen on the other half (as
:func:`dpverify.statistical.search._outcome_unions`), so the choice stays independent of the test samples.

A hash collision merely adds outputs to the event: the event is still a fixed set chosen before the test,
so the test stays valid.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
from numpy.typing import NDArray

from dpverify.statistical.features import rows_per_block

__all__ = ["row_hashes", "HashSetEvent", "repeated_hashes"]

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _mix(h: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """splitmix64's finaliser (a bijection of 64-bit words with good avalanche)."""
    h = h ^ (h >> np.uint64(30))
    h = h * _M1
    h = h ^ (h >> np.uint64(27))
    h = h * _M2
    return h ^ (h >> np.uint64(31))


def row_hashes(out: NDArray, columns: Sequence[int] | None = None) -> NDArray[np.uint64]:
    """One 64-bit hash per output row (of its ``columns`` only, when given), equal for equal rows (``-0.0`` and
    ``0.0`` are one value; NaNs are one value).  Vectorised: a few integer passes per column, over a block of rows at
    a time (whose temporaries stay in the CPU's caches)."""
    a = np.asarray(out)
    a = a if a.ndim == 2 else a.reshape(len(a), -1)
    cols = list(range(a.shape[1])) if columns is None else list(columns)
    h = np.empty(len(a), dtype=np.uint64)
    step = rows_per_block(a)
    with np.errstate(over="ignore"):
        for start in range(0, len(a), step):
            block = a[start:start + step][:, cols]
            if block.dtype.kind == "f":
                block = block.astype(np.float64, copy=False)   # a fresh copy already: changed in place
                block += 0.0
                block[np.isnan(block)] = np.nan
                bits = block.view(np.uint64)
            else:
                bits = block.astype(np.int64).view(np.uint64)
            hb = np.full(len(block), _GOLDEN, dtype=np.uint64)
            for j in range(bits.shape[1]):
                hb = _mix((hb ^ bits[:, j]) + _GOLDEN * np.uint64(j + 1))
            h[start:start + step] = hb
    return h


@dataclass(frozen=True)
class HashSetEvent:
    """``{o : hash(o) in hashes}``: a set of point masses found by the atom sweep.  ``examples`` are rows of the
    atoms seen in the search sample, for the description only."""

    hashes: tuple[int, ...]
    examples: tuple[str, ...] = field(default=(), compare=False)

    @property
    def description(self) -> str:
        k = len(self.hashes)
        shown = ", ".join(self.examples[:3]) + (", …" if len(self.examples) > 3 else "")
        if shown:
            return f"out is one of {k} point mass{'es' if k > 1 else ''} {{{shown}}}" + (
                f" ({k - len(self.examples)} more unseen in the search sample)" if k > len(self.examples) else "")
        return f"out is one of {k} point mass{'es' if k > 1 else ''} (row hashes {', '.join(hex(h) for h in self.hashes[:3])}{', …' if k > 3 else ''})"

    def contains(self, out: NDArray) -> NDArray[np.bool_]:
        return np.isin(row_hashes(out), np.asarray(self.hashes, dtype=np.uint64))


def repeated_hashes(h_sel0: NDArray[np.uint64], h_sel1: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """Hashes seen at least twice in the pooled selection half: the atoms."""
    pooled = np.sort(np.concatenate([h_sel0, h_sel1]))
    if len(pooled) < 2:
        return pooled[:0]
    dup = pooled[1:] == pooled[:-1]
    return np.unique(pooled[1:][dup])
