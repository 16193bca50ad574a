"""DPM ("DP-Mondrian") clustering, seed 004 (``../shared/seeds/004_e63c772e1db0dbd8.txt``),
"DPM: Clustering Sensitive Data through Separation"; digest ``../shared/research/seed-004-digest.md``.

So far: the split-selection step.

* :mod:`algorithms.dpm.score` -- split candidates (Sec. 3.1, Alg. 1 line 9), emptiness (Def. 5),
  centreness (Def. 6), score (Def. 7) and its sensitivity (Lemmas 3-5), pure and vectorised;
* :mod:`algorithms.dpm.split` -- :class:`DPMSplitEM`, the exponential-mechanism split selection
  (Alg. 1 lines 22-25, Def. 4 with the factor 2; ``exponent="printed"`` is Def. 4 literally).
"""

from algorithms.dpm.score import (
    DEFAULT_ALPHA,
    DEFAULT_Q,
    DEFAULT_T,
    centreness,
    centreness_from_rank,
    check_bounds,
    check_parameters,
    decode_candidates,
    emptiness,
    emptiness_from_count,
    interval_counts,
    n_splits,
    ranks,
    score,
    score_sensitivity,
    split_candidates,
)
from algorithms.dpm.split import DPMSplitEM, as_points

__all__ = [
    "DEFAULT_ALPHA",
    "DEFAULT_Q",
    "DEFAULT_T",
    "DPMSplitEM",
    "as_points",
    "centreness",
    "centreness_from_rank",
    "check_bounds",
    "check_parameters",
    "decode_candidates",
    "emptiness",
    "emptiness_from_count",
    "interval_counts",
    "n_splits",
    "ranks",
    "score",
    "score_sensitivity",
    "split_candidates",
]
