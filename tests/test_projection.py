"""The projected bound that scores the event search's candidates (dpverify/statistical/projection.py)."""

import numpy as np
import pytest

from dpverify.statistical.projection import ProjectedBound
from dpverify.statistical.stats import epsilon_lower_bound, wilson_lower, wilson_upper


def formula(k_num, k_den, n_search, n_test, z, delta, z_search=1.0):
    """The projected bound written out once per element, as the scorer computed it before its lookup table."""
    p_num, p_den = np.asarray(k_num) / n_search, np.asarray(k_den) / n_search
    lo = wilson_lower(p_num, n_test, z) - z_search * np.sqrt(p_num * (1 - p_num) / n_search)
    hi = wilson_upper(p_den, n_test, z) + z_search * np.sqrt(p_den * (1 - p_den) / n_search)
    return epsilon_lower_bound(np.maximum(lo, 0.0), hi, delta)


@pytest.mark.parametrize("n_search", [1, 7, 256, 5000])
@pytest.mark.parametrize("delta", [0.0, 1e-5, 0.2])
def test_the_table_gives_the_formula_bit_for_bit(n_search: int, delta: float) -> None:
    """Integer counts of a small search half are looked up in a per-count table of the bounds and their logs: the
    values are those of the formula exactly (including -inf where the lower bound is at most delta, and the counts
    0 and n_search), in every call after the one that built the table, large or small."""
    rng = np.random.default_rng(n_search)
    scorer = ProjectedBound(n_search, 100_000, 1.64, delta)
    for size in (3 * n_search + 1, 5, 1, 2 * n_search + 40):
        k_num = rng.integers(0, n_search + 1, size)
        k_den = rng.integers(0, n_search + 1, size)
        k_num[:1], k_den[-1:] = n_search, 0
        got, want = scorer(k_num, k_den), formula(k_num, k_den, n_search, 100_000, 1.64, delta)
        assert got.dtype == np.float64 and np.array_equal(got, want)
    assert scorer._table is not None
    if delta == 0.2:
        assert np.isneginf(scorer(np.array([0]), np.array([0]))).all()


def test_counts_the_table_does_not_hold_take_the_formula() -> None:
    """Fractional counts and empty arrays are scored by the formula, table or not."""
    scorer = ProjectedBound(100, 10_000, 2.0, 0.0)
    scorer(np.arange(101), np.arange(101)[::-1])                   # builds the table
    assert scorer._table is not None
    for k_num, k_den in ((np.array([2.5, 50.0]), np.array([1.0, 3.0])), (np.array([], dtype=int), np.array([], dtype=int))):
        assert np.array_equal(scorer(k_num, k_den), formula(k_num, k_den, 100, 10_000, 2.0, 0.0))


def test_few_counts_of_a_large_half_build_no_table() -> None:
    """The table costs n_search + 1 evaluations: it is built only for a call of more than half that many counts."""
    scorer = ProjectedBound(1_000_000, 10_000_000, 2.0, 0.0)
    scorer(np.array([10, 20]), np.array([5, 30]))
    assert scorer._table is None
