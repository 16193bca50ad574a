"""The beta-binomial mixture confidence sequence: coverage at every time (simulated), monotone bounds, the
closed forms at k = 0 and k = n, and its use as a running intersection."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special, stats

from dpverify.errors import InputError
from dpverify.statistical.confseq import (
    ProportionSequence,
    centred_prior,
    log_mixture,
    mixture_lower,
    mixture_upper,
)


@pytest.mark.parametrize("p, prior", [(0.3, (0.5, 0.5)), (0.02, (0.5, 0.5)), (0.3, centred_prior(150, 500, 125.0)),
                                      (0.3, centred_prior(100, 500, 125.0))])
def test_misses_at_any_time_at_most_level(p: float, prior: tuple[float, float]) -> None:
    """2000 Bernoulli(p) streams of 3000 draws, looked at after every draw: the share of streams whose sequence
    ever excludes p is <= level = 0.1 (exact binomial test at 0.001; the last prior is centred away from p).
    Missing at some time is M_N(p) >= 1/level for some N (the module docstring)."""
    rng = np.random.default_rng(0)
    level, streams, n = 0.1, 2000, 3000
    k = np.cumsum(rng.random((streams, n)) < p, axis=1)
    steps = np.arange(1, n + 1)
    missed = (log_mixture(k, steps, p, *prior) >= math.log(1 / level)).any(axis=1)
    assert stats.binomtest(int(missed.sum()), streams, level, alternative="greater").pvalue > 0.001
    assert missed.mean() <= level


def test_ends_are_where_the_mixture_crosses_the_boundary() -> None:
    for k, n in [(3, 100), (50, 100), (999, 1000), (1, 10_000)]:
        lo, hi = mixture_lower(k, n, 0.05), mixture_upper(k, n, 0.05)
        assert 0 < lo < k / n < hi < 1
        assert log_mixture(k, n, lo) == pytest.approx(math.log(20), abs=1e-6)
        assert log_mixture(k, n, hi) == pytest.approx(math.log(20), abs=1e-6)


def test_closed_forms_at_zero_and_all_successes() -> None:
    a0, b0, level = 0.5, 0.5, 0.01
    for n in (1, 10, 1000):
        hi = 1 - (level * math.exp(special.betaln(a0, n + b0) - special.betaln(a0, b0))) ** (1 / n)
        lo = (level * math.exp(special.betaln(n + a0, b0) - special.betaln(a0, b0))) ** (1 / n)
        assert mixture_upper(0, n, level) == pytest.approx(hi, rel=1e-9)
        assert mixture_lower(0, n, level) == 0.0
        assert mixture_lower(n, n, level) == pytest.approx(lo, rel=1e-9)
        assert mixture_upper(n, n, level) == 1.0


def test_monotone_in_the_right_direction() -> None:
    """More successes raise both ends, a smaller level widens the interval, more draws at one rate narrow it."""
    lows = [mixture_lower(k, 500, 0.05) for k in range(0, 501, 50)]
    highs = [mixture_upper(k, 500, 0.05) for k in range(0, 501, 50)]
    assert np.all(np.diff(lows) > 0) and np.all(np.diff(highs) > 0)
    assert mixture_lower(100, 500, 0.001) < mixture_lower(100, 500, 0.05)
    assert mixture_upper(100, 500, 0.001) > mixture_upper(100, 500, 0.05)
    widths = [mixture_upper(n // 5, n, 0.05) - mixture_lower(n // 5, n, 0.05) for n in (100, 1000, 10_000)]
    assert widths[0] > widths[1] > widths[2]


def test_wider_than_a_fixed_sample_interval_but_not_by_much() -> None:
    """The price of validity at every time: wider than Clopper-Pearson at the same level, within a factor 2 here."""
    from dpverify.statistical.stats import clopper_pearson_lower, clopper_pearson_upper

    k, n, level = 3000, 10_000, 0.01
    cp = float(clopper_pearson_upper(k, n, level) - clopper_pearson_lower(k, n, level))
    cs = mixture_upper(k, n, level) - mixture_lower(k, n, level)
    assert cp < cs < 2 * cp


def test_running_intersection() -> None:
    s = ProportionSequence(level=0.05)
    for _ in range(5):
        s.update(30, 100)
    assert (s.k, s.n) == (150, 500)
    lows = [lo for _, lo, _ in s.history]
    highs = [hi for _, _, hi in s.history]
    assert lows == sorted(lows) and highs == sorted(highs, reverse=True)
    assert s.lower == max(lows) and s.upper == min(highs) and s.lower < 0.3 < s.upper


@pytest.mark.parametrize("call, match", [
    (lambda: mixture_lower(5, 3, 0.05), "k <= n"),
    (lambda: mixture_upper(1, 3, 1.5), "level"),
    (lambda: ProportionSequence(level=0.05, a0=0.0), "prior"),
    (lambda: ProportionSequence(level=0.05).update(5, 4), "k <= n"),
    (lambda: centred_prior(1, 10, 0.0), "strength"),
])
def test_bad_arguments_are_named(call, match: str) -> None:
    with pytest.raises(InputError, match=match):
        call()
