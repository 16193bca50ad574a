"""The privacy claims of noisy_stats, kept as tests with dpverify's pytest plugin.

The ``dp_audit`` fixture runs ``dpverify.assert_private`` with this test's seed (stable: the crc32 of the test
id; ``pytest --dp-seed N`` overrides it) and the budget of the ``dp_audit`` marker.  A pass means *no
violation detected at this budget*, not a proof of privacy.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpverify.neighbours import AddRemoveOne
from noisy_stats import noisy_count, noisy_sum

EPSILON = 0.5
DATA = np.array([1.0, 4.5, 2.0, 7.0])
# add or remove one person; the added person is at the ends of the clipping range
PAIRS = AddRemoveOne(candidates=[0.0, 5.0]).pairs(DATA)


# The audit calls mechanism(x, n, rng) -> n outputs; module-level functions so it can use worker processes.
def count_mechanism(x, n, rng):
    return noisy_count(x, EPSILON, rng, size=n)


def sum_mechanism(x, n, rng):
    return noisy_sum(x, EPSILON, rng, size=n)


@pytest.mark.dp_audit(samples=200_000, workers=1)
def test_noisy_count_keeps_epsilon(dp_audit):
    dp_audit(count_mechanism, PAIRS, epsilon=EPSILON)


@pytest.mark.xfail(strict=True, raises=AssertionError,
                   reason="known bug: noisy_sum's noise ignores the clipping bound (true epsilon = 5 x 0.5)")
@pytest.mark.dp_audit(samples=200_000, workers=1)
def test_noisy_sum_keeps_epsilon(dp_audit):
    dp_audit(sum_mechanism, PAIRS, epsilon=EPSILON)
