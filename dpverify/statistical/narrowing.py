"""Which pairs an anytime audit keeps drawing once its searches have seen enough of every stream.

:func:`dpverify.statistical.anytime.audit_anytime` draws a stream per input of every pair and searches every
pair at each checkpoint.  Most of a stream's outputs come late (the checkpoints double), and on most mechanisms the
events that grow are on a few pairs: from the first checkpoint with at least :data:`NARROW_FROM` outputs per input
and an :data:`NARROW_SHARE`-th of the budget on (:func:`narrows`), the audit keeps only the pairs that hold a
finalist and, up to ``keep`` pairs, those whose best candidate has the largest scoring-half score
(:attr:`dpverify.statistical.search.Candidate.score`, the search's projected ε bound, corrected for the number of
candidates); the others are neither drawn nor searched again -- as StatDP tests only the pair its event selection
chose, but here chosen again at every checkpoint among the pairs still drawn.

Validity does not depend on the rule: which streams go on being drawn is decided from outputs already seen, so the
bets stay predictable and every factor of the test martingale is a supermartingale factor as before (module
docstring of :mod:`dpverify.statistical.anytime`).  Power may: a pair dropped at that checkpoint whose violation
only shows on more outputs is lost.  The constants were chosen on the catalogue's violations with many pairs that
stop late (run seeds 0-23 of ``svt-unscaled-query-noise`` at StatDP's budget and of the two
``noisy-max-returns-value`` entries: narrowing from 16,384 outputs per input lost most of the first one's verdicts,
from 65,536 about none); ``docs/anytime_calibration.py --keep-pairs`` compares them on run seeds not used to choose
them, and on a synthetic rare leak (docs/auditor.md quotes it).
"""

from __future__ import annotations

import math
from typing import Sequence

from dpverify.statistical.betting import Bet
from dpverify.statistical.streams import Found

__all__ = ["NARROW_FROM", "NARROW_SHARE", "KEEP_PAIRS", "narrows", "pairs_to_drop"]

#: outputs per input of the stream so far from which a checkpoint drops pairs (at least)
NARROW_FROM = 65_536
#: ... and from which share of the budget (``samples / NARROW_SHARE``)
NARROW_SHARE = 8
#: pairs kept by default, those holding a finalist among them (more only when the finalists are on more pairs)
KEEP_PAIRS = 4


def narrows(position: int, samples: int) -> bool:
    """Whether a checkpoint after ``position`` outputs per input of a budget of ``samples`` drops pairs."""
    return position >= max(NARROW_FROM, samples / NARROW_SHARE)


def pairs_to_drop(found: Sequence[Found], bets: Sequence[Bet], keep: int, dropped: frozenset[int]) -> list[int]:
    """The pairs (indices into ``found``, one result per pair, those in ``dropped`` already dropped) to stop drawing:
    all but those holding one of the ``bets`` and, up to ``keep`` pairs in all, those of largest best candidate
    score (ties: the lower index first; a pair without a candidate scores -inf)."""
    if keep < 1:
        raise ValueError(f"keep must be at least 1, got {keep!r}")
    live = [i for i in range(len(found)) if i not in dropped]
    kept = {b.pair_index for b in bets}

    def best(i: int) -> float:
        scores = [c.score for c in found[i].candidates if not math.isnan(c.score)]
        return max(scores, default=-math.inf)

    for i in sorted(live, key=lambda i: (-best(i), i)):
        if len(kept) >= keep:
            break
        kept.add(i)
    return [i for i in live if i not in kept]
