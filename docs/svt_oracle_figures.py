"""Print the exact oracle bounds of the correct SVT (Lyu et al. Alg. 1, ε = 0.1, c = 1, T = 0.5, ten queries) quoted in
docs/auditor.md: on the 13 pairs of ``audits/hard.toml`` (``LInfNeighbours(radius=1).pairs`` around ``(1, …, 1)``)
and on DP-Sniper's StatDP-pattern pairs, at several test budgets, at α = 0.1.  Exact: the law is the pmf over the
11 answer patterns (``SparseVector.support`` with ``log_density``).  Run: ``python docs/svt_oracle_figures.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from algorithms.classic.sparse_vector import SparseVector  # noqa: E402
from dpverify.neighbours import LInfNeighbours  # noqa: E402
from dpverify.statistical.oracle import oracle_bound  # noqa: E402


def dp_sniper_pairs(d: int = 10) -> list[tuple[np.ndarray, np.ndarray]]:
    """DP-Sniper's ``PatternGenerator`` (StatDP's patterns, component-wise neighbourhood) around ``(1, …, 1)``."""
    a, h = np.ones(d), d // 2
    raw = [(a, [0] + [1] * (d - 1)), (a, [2] + [1] * (d - 1)), (a, [2] + [0] * (d - 1)), (a, [0] + [2] * (d - 1)),
           (a, [2] * h + [0] * (d - h)), (a, [2] * d), (a, [0] * d), ([1] * h + [0] * (d - h), [0] * h + [1] * (d - h))]
    return [(np.asarray(x, float), np.asarray(y, float)) for x, y in raw]


def main() -> None:
    mech = SparseVector(0.1, 0.5, cutoff=1)
    ours = LInfNeighbours(radius=1.0).pairs(np.ones(10))
    for label, pairs in (("hard.toml pairs", ours), ("DP-Sniper pairs", dp_sniper_pairs())):
        for n in (10_000_000, 40_000_000, 200_000_000):
            print(f"{label}: {oracle_bound(mech, pairs, n, alpha=0.1)}", flush=True)


if __name__ == "__main__":
    main()
