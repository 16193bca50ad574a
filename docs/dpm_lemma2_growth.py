"""How far Algorithm 2 (DPM's IntervalSizeEst, seed 004 Sec. 3.5) is from its claimed ε_int for d = 2.

    python docs/dpm_lemma2_growth.py

For m = 8 … 40 it builds the opposite-gap pair (dimension-0 gaps 1..m, dimension-1 gaps m..1, plus the point that
re-pairs them; ``algorithms.dpm.examples.opposite_gap_pairs``), scaled so that one gap unit is c·k₁ with k₁ the
σ = 1 key of the lookup table and c = min(1.5, 0.95·59/(m+1)) (so that the default σ grid 0.5…29.5 both resolves
the averaged gaps, which move by half a unit, and reaches them), and prints the exact privacy loss of the released
β (``IntervalSizeEst.log_pmf``) at ε_int = 1 and the percentile sensitivity 2 of Lemma 1, with the event (a β
value) that attains it.  Every number in docs/findings.md F15 comes from this output.
"""

from __future__ import annotations

import numpy as np

from algorithms.dpm.examples import opposite_gap_pairs
from algorithms.dpm.interval_size import IntervalSizeEst, unit_gap_percentile


def main() -> None:
    print("| m | |D| | range [0, high] | exact ε of β (claimed 1) | its event: β, Pr under D and D' |")
    print("|---|---|---|---|---|")
    for m in (8, 16, 24, 32, 40):
        k1 = unit_gap_percentile(m + 1)
        c = min(1.5, 0.95 * 59.0 / (m + 1))
        high = round(c * k1 * m * (m + 1) / 2.0, 3)
        (d0, d1), = opposite_gap_pairs(m, high)
        est = IntervalSizeEst(1.0, float(m + 1), (0.0, high), d=2, table_draws="shared")
        betas, l0 = est.log_pmf(d0)
        _, l1 = est.log_pmf(d1)
        ok = np.isfinite(l0) & np.isfinite(l1)
        diff = np.where(ok, np.abs(l0 - l1), -np.inf)
        j = int(np.argmax(diff))
        print(f"| {m} | {m + 1} | {high:g} | {diff[j]:.3f} | β = {betas[j]:g}: {np.exp(l0[j]):.2e}, "
              f"{np.exp(l1[j]):.2e} |")


if __name__ == "__main__":
    main()
