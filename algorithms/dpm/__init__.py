"""DPM ("DP-Mondrian") clustering, seed 004: Liebenow, Schütt, Braun, Gehrke, Thaeter, Mohammadi,
"DPM: Clustering Sensitive Data through Separation" (CCS 2024, arXiv 2307.02969).

:class:`DPM` is the whole algorithm (Algorithm 1, :mod:`algorithms.dpm.dpm`); its pieces:

* :mod:`algorithms.dpm.score` -- split candidates (Sec. 3.1, Alg. 1 line 9), emptiness (Def. 5),
  centreness (Def. 6), score (Def. 7) and its sensitivity (Lemmas 3-5), pure and vectorised;
* :mod:`algorithms.dpm.split` -- :class:`DPMSplitEM`, the exponential-mechanism split selection
  (Alg. 1 lines 22-25, Def. 4 with the factor 2; ``exponent="printed"`` is Def. 4 literally);
* :mod:`algorithms.dpm.interval_size` -- Algorithm 2 (IntervalSizeEst) with the DP percentile on averaged gaps
  (Sec. 3.5, Lemmas 1-2);
* :mod:`algorithms.dpm.averaging` -- DP-AVG, the Gaussian noisy sums of the leaves (Sec. 3.4);
* :mod:`algorithms.dpm.dpm` -- Algorithm 1 end to end, batched over runs, with its budget ledger.
"""

from .score import (
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
    candidate_table,
)
from .split import DPMSplitEM, as_points
from .interval_size import IntervalSizeEst, averaged_gaps, gap_rank_counts, percentile_utility_on_grid
from .averaging import DPAverage, clipped_sum, sum_l2_sensitivity
from .dpm import DPM, DPMBatch, DPMClustering

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
    "candidate_table",
    "IntervalSizeEst",
    "averaged_gaps",
    "gap_rank_counts",
    "percentile_utility_on_grid",
    "DPAverage",
    "clipped_sum",
    "sum_l2_sensitivity",
    "DPM",
    "DPMBatch",
    "DPMClustering",
]
