"""Tests of :func:`dpverify.check_exponential_mechanism` (docs/architecture.md; the catalogue's EM checks).

Every statistical assertion uses a FIXED seed and states its error level; the outcomes are
deterministic (no retries):

* the correct exponential mechanism must pass at ``α = 1e-3``: for a sampler with exactly the
  claimed law that fails for at most a fraction 1e-3 of seeds (false-failure level 1e-3);
* the broken "no factor 1/2" twin must be rejected with ``p < 1e-6`` at 100 000 samples, where the
  computed power at level 1e-6 is > 0.999 999;
* the power formula is compared with a Monte-Carlo rejection rate within 4 binomial standard errors
  (false-failure level ≈ 6e-5 if the formula were exact).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats
from scipy.special import softmax

import dpverify
from algorithms.broken.exponential_no_half import ExponentialMechanismNoHalf
from algorithms.classic.exponential import ExponentialMechanism
from dpverify.exact.em_check import EMCheckResult, check_exponential_mechanism, em_power, em_samples_for_power
from dpverify.errors import InputError, MechanismError

U = np.arange(5.0)  # utilities [0, 1, 2, 3, 4]
EPS = 1.0


def test_exported_from_package() -> None:
    assert dpverify.check_exponential_mechanism is check_exponential_mechanism
    assert dpverify.EMCheckResult is EMCheckResult


def test_correct_em_passes() -> None:
    """False-failure level 1e-3 (α of the test); seed 0 fixed."""
    res = check_exponential_mechanism(ExponentialMechanism(EPS), U, EPS, samples=100_000, alpha=1e-3, seed=0)
    assert res.consistent and res.pvalue >= 1e-3
    assert res.verdict == "pass"
    assert res.dof == 4 and res.pooled == ()
    assert res.samples == res.samples_drawn == int(res.counts.sum()) == 100_000
    np.testing.assert_allclose(res.expected_pmf, softmax(EPS * U / 2.0))
    np.testing.assert_allclose(res.observed_freq, res.expected_pmf, atol=0.01)
    assert res.summary().startswith("No deviation detected from softmax(εu/(2Δu))")
    assert "is the" not in res.summary()


def test_no_half_bug_rejected_with_power() -> None:
    """The broken twin samples softmax(εu) -- exactly the default alternative -- so the computed
    power is the probability of this rejection; at level 1e-6 it exceeds 0.999999."""
    res = check_exponential_mechanism(ExponentialMechanismNoHalf(EPS), U, EPS, samples=100_000, seed=0)
    assert not res.consistent and res.verdict == "violation"
    assert res.pvalue < 1e-6
    assert res.power_vs_alternative >= 0.99
    assert em_power(res.expected_pmf, res.alternative_pmf, 100_000, alpha=1e-6) > 0.999999
    np.testing.assert_allclose(res.alternative_pmf, softmax(EPS * U))
    # the bug moves mass to the best candidate: that is where the largest deviation is
    d = res.largest_deviation
    assert d is not None and d.category == 4 and d.residual > 10
    assert d.observed == res.counts[4] and d.expected == pytest.approx(100_000 * res.expected_pmf[4])
    assert res.summary().startswith("DEVIATION") and "candidate 4" in res.summary()


def test_statistic_is_pearson_on_counts() -> None:
    res = check_exponential_mechanism(ExponentialMechanism(EPS), U, EPS, samples=5_000, seed=3)
    expected = 5_000 * res.expected_pmf
    x2 = float(np.sum((res.counts - expected) ** 2 / expected))
    assert res.statistic == pytest.approx(x2, rel=1e-12)
    assert res.pvalue == pytest.approx(stats.chi2.sf(x2, 4), rel=1e-9)


def test_power_matches_monte_carlo() -> None:
    """Noncentral-χ² power vs the rejection rate of 400 seeded runs of the broken twin.

    ``u = [0..4]``, ``ε = 0.1``, ``α = 0.05``, at the sample size where the predicted power is ≈ 0.5
    (1 299 samples).  Tolerance: 4 binomial standard errors, ``4·sqrt(p(1−p)/400) ≈ 0.10``.  (With
    2 000 runs the rate was 0.518 against a prediction of 0.500: the approximation bias is ≈ 0.02.)
    """
    eps, alpha, reps = 0.1, 0.05, 400
    p0, p1 = softmax(eps * U / 2), softmax(eps * U)
    n = em_samples_for_power(p0, p1, target=0.5, alpha=alpha)
    assert n is not None and 500 < n < 5_000
    predicted = em_power(p0, p1, n, alpha=alpha)
    assert predicted == pytest.approx(0.5, abs=0.01)
    mech = ExponentialMechanismNoHalf(eps)
    rejections = 0
    for seed in range(reps):
        res = check_exponential_mechanism(mech, U, eps, samples=n, alpha=alpha, seed=seed)
        assert res.power_vs_alternative == predicted
        rejections += not res.consistent
    rate = rejections / reps
    tolerance = 4.0 * math.sqrt(predicted * (1.0 - predicted) / reps)
    assert abs(rate - predicted) <= tolerance, (rate, predicted, tolerance)


def test_samples_for_power_is_the_threshold() -> None:
    res = check_exponential_mechanism(ExponentialMechanism(0.3), U, 0.3, samples=1_000, seed=0)
    n = res.samples_for_power(0.95)
    assert n is not None
    power = lambda k: em_power(res.expected_pmf, res.alternative_pmf, k, alpha=res.alpha)  # noqa: E731
    assert power(n) >= 0.95 > power(n - 1)
    assert res.underpowered == (res.power_vs_alternative < 0.8)
    # equal utilities: the alternative is the null, no sample size has power
    flat = check_exponential_mechanism(ExponentialMechanism(1.0), np.zeros(3), 1.0, samples=100, seed=0)
    assert flat.power_vs_alternative == pytest.approx(flat.alpha)
    assert flat.samples_for_power() is None and flat.underpowered


def test_pooling_of_small_cells() -> None:
    u = np.array([0.0, 0.0, 0.0, 10.0, 10.0, 10.0])
    # expected counts of candidates 0..2: 1000·e^-5/(3 + 3e^-5) ≈ 2.2 each -> pooled (6.7 >= 5)
    res = check_exponential_mechanism(ExponentialMechanism(1.0), u, 1.0, samples=1_000, seed=0)
    assert res.pooled == (0, 1, 2) and res.dof == 3
    observed = np.append(res.counts[3:], res.counts[:3].sum())
    expected = 1_000 * np.append(res.expected_pmf[3:], res.expected_pmf[:3].sum())
    assert res.statistic == pytest.approx(float(np.sum((observed - expected) ** 2 / expected)))
    # at 200 samples the pool (≈ 1.3) stays below 5 and absorbs the smallest other cell
    res = check_exponential_mechanism(ExponentialMechanism(1.0), u, 1.0, samples=200, seed=0)
    assert res.pooled == (0, 1, 2, 3) and res.dof == 2
    # min_expected=0: no pooling
    res = check_exponential_mechanism(ExponentialMechanism(1.0), u, 1.0, samples=200, seed=0, min_expected=0)
    assert res.pooled == () and res.dof == 5
    # everything pooled: nothing to test, says so
    res = check_exponential_mechanism(ExponentialMechanism(1.0), [0.0, 1.0], 1.0, samples=3, seed=0)
    assert res.dof == 0 and res.pvalue == 1.0 and res.power_vs_alternative == 0.0 and res.underpowered
    assert any("nothing to test" in note for note in res.notes)


def test_outputs_outside_support_fail_at_once() -> None:
    calls = []

    def off_by_one(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        calls.append(n)
        return ExponentialMechanism(EPS)(x, n, rng) + 1  # codes 1..5 for 5 candidates

    res = check_exponential_mechanism(off_by_one, U, EPS, samples=250_000, seed=0, batch_size=100_000)
    assert not res.consistent and res.pvalue == 0.0 and math.isinf(res.statistic)
    assert calls == [100_000]  # stopped after the first batch
    assert res.samples_drawn == 100_000 and res.out_of_range > 0
    assert res.out_of_range_examples == (5,)
    assert res.largest_deviation is not None and res.largest_deviation.category == 5
    assert "outside [0, 5)" in res.summary() and "probability 0" in res.summary()
    json.dumps(res.to_dict(), allow_nan=False)

    res = check_exponential_mechanism(lambda x, n, rng: np.full(n, -1), U, EPS, samples=10, seed=0)
    assert not res.consistent and res.out_of_range == 10 and res.out_of_range_examples == (-1,)


def test_seeded_batched_and_input() -> None:
    mech = ExponentialMechanism(EPS)
    a = check_exponential_mechanism(mech, U, EPS, samples=2_500, seed=7, batch_size=1_000)
    b = check_exponential_mechanism(mech, U, EPS, samples=2_500, seed=7, batch_size=1_000)
    c = check_exponential_mechanism(mech, U, EPS, samples=2_500, seed=8, batch_size=1_000)
    np.testing.assert_array_equal(a.counts, b.counts)
    assert not np.array_equal(a.counts, c.counts)
    assert a.counts.sum() == 2_500 and a.seed == 7
    # batch b draws from the b-th child of SeedSequence(seed)
    first = mech(U, 1_000, np.random.default_rng(np.random.SeedSequence(7).spawn(1)[0]))
    one_batch = check_exponential_mechanism(mech, U, EPS, samples=1_000, seed=7, batch_size=1_000)
    np.testing.assert_array_equal(one_batch.counts, np.bincount(first, minlength=5))
    # seed=None draws fresh entropy and reports it
    fresh = check_exponential_mechanism(mech, U, EPS, samples=100)
    again = check_exponential_mechanism(mech, U, EPS, samples=100, seed=fresh.seed)
    np.testing.assert_array_equal(fresh.counts, again.counts)

    # input= is what the sampler receives (here: a dataset whose utilities are given separately)
    data = np.array([0, 1, 1, 2, 2, 2])

    def from_data(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        return ExponentialMechanism(EPS)(np.bincount(x, minlength=3).astype(float), n, rng)

    res = check_exponential_mechanism(from_data, [1.0, 2.0, 3.0], EPS, samples=10_000, seed=0, input=data)
    assert res.consistent  # false-failure level 0.05 (default α), seed fixed


def test_sensitivity_and_factor_enter_the_null() -> None:
    res = check_exponential_mechanism(ExponentialMechanism(2.0, sensitivity=4.0), U, 2.0, 4.0, samples=100, seed=0)
    np.testing.assert_allclose(res.expected_pmf, softmax(2.0 * U / 8.0))
    np.testing.assert_allclose(res.alternative_pmf, softmax(2.0 * 2.0 * U / 8.0))
    res3 = check_exponential_mechanism(ExponentialMechanism(2.0), U, 2.0, samples=100, seed=0, alternative_factor=3)
    np.testing.assert_allclose(res3.alternative_pmf, softmax(3.0 * 2.0 * U / 2.0))


def test_to_dict_is_json_safe() -> None:
    res = check_exponential_mechanism(ExponentialMechanism(EPS), U, EPS, samples=1_000, seed=0)
    d = res.to_dict()
    text = json.dumps(d, allow_nan=False)
    assert json.loads(text)["counts"] == res.counts.tolist()
    assert d["consistent"] is res.consistent and d["summary"] == res.summary()
    assert set(d["largest_deviation"]) == {"category", "observed", "expected", "residual"}
    with pytest.raises(AttributeError):
        res.pvalue = 0.5  # type: ignore[misc]  # frozen
    with pytest.raises(ValueError):
        res.counts[0] = 0  # read-only arrays


GOOD = ExponentialMechanism(1.0)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(epsilon=0.0), "epsilon"),
        (dict(epsilon=-1.0), "epsilon"),
        (dict(epsilon=math.nan), "epsilon"),
        (dict(epsilon=math.inf), "epsilon"),
        (dict(sensitivity=0.0), "sensitivity"),
        (dict(sensitivity=-2.0), "sensitivity"),
        (dict(utilities=[]), "non-empty 1-D"),
        (dict(utilities=[[1.0, 2.0]]), "non-empty 1-D"),
        (dict(utilities=[0.0, math.nan]), "entry 1"),
        (dict(utilities=[0.0, math.inf]), "finite"),
        (dict(samples=0), "samples"),
        (dict(samples=2.5), "samples"),
        (dict(alpha=0.0), "alpha"),
        (dict(alpha=1.0), "alpha"),
        (dict(alpha=1.5), "alpha"),
        (dict(alternative_factor=0.0), "alternative_factor"),
        (dict(min_expected=-1.0), "min_expected"),
        (dict(seed=-3), "seed"),
        (dict(sampler="not callable"), "callable"),
    ],
)
def test_bad_inputs_raise(kwargs: dict, match: str) -> None:
    args = dict(sampler=GOOD, utilities=U, epsilon=1.0, sensitivity=1.0, samples=100, seed=0)
    args.update(kwargs)
    with pytest.raises(InputError, match=match):
        check_exponential_mechanism(**args)


@pytest.mark.parametrize(
    "sampler, match",
    [
        (lambda x, n, rng: np.zeros((n, 2), dtype=np.int64), r"shape \(100, 2\).*expected integer codes of shape \(100,\)"),
        (lambda x, n, rng: np.zeros(n - 1, dtype=np.int64), r"shape \(99,\).*shape \(100,\)"),
        (lambda x, n, rng: 3, r"shape \(\).*shape \(100,\)"),
        (lambda x, n, rng: np.zeros(n), r"dtype float64.*integer codes"),
        (lambda x, n, rng: np.zeros(n, dtype=bool), r"dtype bool.*integer codes"),
        (lambda x, n, rng: 1 / 0, r"raised ZeroDivisionError"),
    ],
)
def test_bad_sampler_raises(sampler, match: str) -> None:
    with pytest.raises(MechanismError, match=match):
        check_exponential_mechanism(sampler, U, 1.0, samples=100, seed=0)


def test_power_helpers_validate() -> None:
    p = softmax(U)
    with pytest.raises(InputError, match="sum to 1"):
        em_power(p * 2, p, 10)
    with pytest.raises(InputError, match="differ in length"):
        em_power(p, p[:3] / p[:3].sum(), 10)
    with pytest.raises(InputError, match="target"):
        em_samples_for_power(p, p, target=1.0)
