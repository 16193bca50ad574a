"""Item events for integer vector outputs: the output as a set of items, and each coordinate as a category.

Many mechanisms release *indices*: the k items of a private top-k (one-shot Gumbel or peeling exponential
mechanism), the queries an SVT answered, a private set union's items, the argmax of several rounds of report noisy
max.  Their values are labels, not quantities: ``out[j] <= 6`` means nothing, and the threshold and interval events
of :mod:`dpverify.statistical.search` cannot isolate one label between others.  When the leak sits in a rare item
(a low-scored item that the neighbour's extra record lifts into the top k, seen in one output in ten thousand), it
is also spread over hundreds of distinct rows -- every k-tuple that holds the item -- each seen a few times, so
the outcome unions of whole rows, which order the rows by their own counts, cannot find it either.

Two families pool the rows by their items instead (:func:`item_events`), both prefix unions in estimated
likelihood-ratio order (:func:`dpverify.statistical.unions.prefix_unions`):

* **item sets** ``{some entry of o is in V}``: items ordered by the ratio of the rows holding them, a row in the
  union from its first item of that order on (:class:`ItemSetEvent`) -- the level sets of a loss that depends on
  which items were released, whatever their positions;
* **categories of a coordinate** ``{o[j] in V}`` (:class:`~dpverify.statistical.events.ValueSetEvent` on
  :class:`~dpverify.statistical.features.Column`) for each of the first ``MAX_COLUMNS`` coordinates with more than
  two values: the level sets of a loss that also depends on the position (which round chose the item).

Both run on integer outputs of at least two coordinates and of three to :data:`MAX_ITEMS` distinct values (a 0/1
vector's item events are the thresholds of its max and min), the item sets on rows of at most :data:`MAX_WIDTH`
entries.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from dpverify.statistical.candidates import CandidateSearch
from dpverify.statistical.columns import MAX_COLUMNS
from dpverify.statistical.events import ValueSetEvent
from dpverify.statistical.features import Column
from dpverify.statistical.unions import prefix_unions

__all__ = ["ItemSetEvent", "item_events", "unions_suffice", "MAX_ITEMS", "MAX_WIDTH", "HONEST_ABOVE",
           "FREQUENT_OUTCOME"]

#: integer vector outputs with at most this many distinct entry values get the item families
MAX_ITEMS = 1024
#: rows of at most this many entries get the item sets (a top-k's k, a set's size); longer rows only the categories
#: of their first ``MAX_COLUMNS`` coordinates
MAX_WIDTH = 64
#: outcome unions of whole rows alone suffice when every distinct row was seen at least this many times on the
#: selection halves (its ratio is then estimated on its own counts); a rarer row sends the search to the items
FREQUENT_OUTCOME = 20
#: with at most this many items, the rows holding each are counted on a row-by-item table instead of sorted rows
TABLE_ITEMS = 64
#: with more items than this, the prefix length is chosen on the selection half too (``honest`` prefix unions)
HONEST_ABOVE = 64


@dataclass(frozen=True)
class ItemSetEvent:
    """``{some entry of o is in items}`` for integer vector outputs."""

    items: tuple[int, ...]

    @property
    def description(self) -> str:
        vals = ", ".join(str(v) for v in self.items[:5]) + (", …" if len(self.items) > 5 else "")
        return f"some out[j] ∈ {{{vals}}}"

    def contains(self, out: NDArray) -> NDArray[np.bool_]:
        out = np.asarray(out)
        if out.dtype.kind not in "iu":
            return np.zeros(len(out), dtype=bool)
        rows = out.reshape(len(out), -1)
        return np.isin(rows, np.asarray(self.items, dtype=np.int64)).any(axis=1)


def _rows_holding(codes: NDArray, m: int) -> NDArray[np.int64]:
    """How many rows of ``codes`` (``(n, k)`` item codes) hold each item ``0..m-1`` at least once."""
    if m <= TABLE_ITEMS:                  # a row-by-item table of n m bytes: no sort
        held = np.zeros((len(codes), m), dtype=bool)
        held[np.arange(len(codes))[:, None], codes] = True
        return held.sum(axis=0)
    c = np.sort(codes, axis=1)
    first = np.ones(c.shape, dtype=bool)
    first[:, 1:] = c[:, 1:] != c[:, :-1]
    return np.bincount(c[first], minlength=m)


def unions_suffice(selection_counts: Sequence[NDArray]) -> bool:
    """Whether the outcome unions of whole rows already hold the best events: every distinct row seen at least
    :data:`FREQUENT_OUTCOME` times on the two selection halves together (``selection_counts``: per row, per half)."""
    total = np.sum(selection_counts, axis=0)
    return bool(len(total)) and int(total.min()) >= FREQUENT_OUTCOME


def item_events(halves: tuple[NDArray, NDArray, NDArray, NDArray], search: CandidateSearch) -> None:
    """Add the item-set and coordinate-category candidates of one pair's four halves (``(n, k)`` integer outputs,
    ``k >= 2``) to ``search``; nothing when the outputs hold fewer than three or more than :data:`MAX_ITEMS` distinct
    values."""
    if halves[0].ndim != 2 or halves[0].shape[1] < 2 or halves[0].dtype.kind not in "iu":
        return
    width = halves[0].shape[1]
    if width > MAX_WIDTH:                 # long rows (a histogram of many bins): the categories of the first columns
        halves = tuple(h[:, :MAX_COLUMNS] for h in halves)
    found = _coded(halves)
    if found is None:
        return
    items, codes = found
    if width <= MAX_WIDTH:
        _item_sets(codes, items, search)
    _categories(codes, items, search)


def _coded(halves: Sequence[NDArray]) -> tuple[NDArray, list[NDArray]] | None:
    """The distinct values of the halves and each half's entries as int16 indices into them; ``None`` for fewer than
    three values (a 0/1 vector's item events are the thresholds of its max and min, which the search has) or more
    than :data:`MAX_ITEMS`.  Values within a span of 2**16 are found by counting and coded by a table lookup (one
    pass; a sort of the n k entries took most of the family's time on RAPPOR's 20 bits)."""
    lo = min(int(h.min()) for h in halves)
    hi = max(int(h.max()) for h in halves)
    if hi - lo < 1 << 16:
        present = np.zeros(hi - lo + 1, dtype=bool)
        for h in halves:
            present[np.bincount(h.ravel().astype(np.intp) - lo, minlength=hi - lo + 1) > 0] = True
        items = np.flatnonzero(present) + lo
        if not 3 <= len(items) <= MAX_ITEMS:
            return None
        table = np.cumsum(present).astype(np.int16) - 1
        return items, [table[h.astype(np.intp) - lo] for h in halves]     # (h - lo would wrap in h's dtype)
    items = np.unique(np.concatenate([h.ravel() for h in halves]))
    if not 3 <= len(items) <= MAX_ITEMS:
        return None
    return items, [np.searchsorted(items, h).astype(np.int16) for h in halves]      # m <= MAX_ITEMS < 2**15


def _item_sets(codes: Sequence[NDArray], items: NDArray, search: CandidateSearch) -> None:
    """The prefix unions "some entry is in V" of the items ``items`` (``codes``: each half's entries as indices into
    them)."""
    m = len(items)

    def cumulative(order: NDArray) -> Sequence[NDArray]:
        rank = np.empty(m, dtype=np.int16)
        rank[order] = np.arange(m, dtype=np.int16)
        return [np.cumsum(np.bincount(rank[c].min(axis=1), minlength=m)) for c in codes]

    prefix_unions([_rows_holding(c, m) for c in codes], m, search,
                  lambda idx: ItemSetEvent(tuple(int(v) for v in items[idx])), "items", "items",
                  honest=m > HONEST_ABOVE, cumulative=cumulative)


def _categories(codes: Sequence[NDArray], items: NDArray, search: CandidateSearch) -> None:
    """The prefix unions "out[j] in V" of each of the first ``MAX_COLUMNS`` coordinates with more than two values."""
    m = len(items)
    for j in range(min(codes[0].shape[1], MAX_COLUMNS)):
        counts = [np.bincount(c[:, j], minlength=m) for c in codes]
        seen = np.flatnonzero(np.sum(counts, axis=0))
        if len(seen) <= 2:                # a binary coordinate: its thresholds are these events already
            continue
        labels, feature = items[seen], Column(j)
        prefix_unions([k[seen] for k in counts], len(seen), search,
                      lambda idx, v=labels, f=feature: ValueSetEvent(f, tuple(float(x) for x in v[idx])),
                      f"{feature.name}:categories", "items", honest=len(seen) > HONEST_ABOVE)
