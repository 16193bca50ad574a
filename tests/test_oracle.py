"""The oracle bound (dpverify.statistical.oracle) and the closed-form laws of the catalogue (``log_density`` / ``pmf``).

Every random draw uses a FIXED seed; no retries.  Error levels:

* Monte Carlo against closed forms: the Laplace oracle at ε = 0.1, n = 10^6, α = 0.05 has a Monte-Carlo standard
  deviation of 1.1e-6 over seeds (measured on 8 seeds with the default 4·10^6 draws); the tolerance 2e-5 is ~18 of
  them.  Closed forms of other laws: tolerance 2e-3 (the Gaussian tail estimate at δ = 0.1, ε ≈ 11).
* Normalisation of ``log_density``: numerical integration (trapezoid rule on a grid through the centre) to 1e-3,
  sums over the integers to 1e-9.
* Samples against the law: chi-square goodness of fit on cells (expected counts from the density), asserting
  ``p > 1e-4`` (false-failure level 1e-4 per check if the sampler had exactly the documented law).
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest
from scipy import stats
from scipy.optimize import minimize_scalar

from algorithms.broken.budget_spent_twice import BudgetSpentTwice
from algorithms.broken.float_laplace import FloatingPointLaplace
from algorithms.broken.gaussian_classic_large_epsilon import GaussianClassicLargeEpsilon
from algorithms.broken.geometric_ignores_sensitivity import GeometricIgnoresSensitivity
from algorithms.broken.histogram_scale_epsilon import HistogramScaleEpsilon
from algorithms.broken.laplace_half_noise import LaplaceHalfNoise
from algorithms.broken.missing_clipping import SumMissingClipping
from algorithms.broken.nan_through_clipping import SumNaNThroughClipping
from algorithms.broken.no_noise import NoNoise
from algorithms.classic import Geometric, Histogram, Laplace, RandomizedResponse
from algorithms.classic.clipped_sum import ClippedSum
from algorithms.classic.gaussian import Gaussian
from dpverify.errors import InputError
from dpverify.neighbours import LInfNeighbours, Pair
from dpverify.statistical.oracle import Law, _one_step_law, law_of, level_set_bound, oracle_bound


# ------------------------------------------------------------------------------------------------ closed forms
def laplace_closed_form(eps: float, n: int, alpha: float, delta: float = 0.0) -> float:
    """The oracle of Laplace(ε) on the pair (0, 1), computed analytically.

    With ``x_num = 1``, ``x_den = 0`` the loss is ``L(o) = ε(|o| − |o − 1|)``: ``−ε`` below 0, ``ε(2o − 1)`` on [0, 1],
    ``ε`` above 1, so the level sets are the tails ``{o ≥ t}``, ``t ∈ [0, 1]``, with ``p_num = 1 − e^{−ε(1−t)}/2``
    and ``p_den = e^{−εt}/2``; the other direction is the mirror image.  Grid over t, then a bounded 1-D search."""

    def p(t: Any) -> tuple[Any, Any]:
        return 1 - 0.5 * np.exp(-eps * (1 - np.asarray(t))), 0.5 * np.exp(-eps * np.asarray(t))

    grid = np.linspace(0.0, 1.0, 20_001)
    best, j = level_set_bound(*p(grid), n, alpha, delta)
    lo, hi = grid[max(j - 1, 0)], grid[min(j + 1, len(grid) - 1)]
    res = minimize_scalar(lambda t: -level_set_bound(*p(t), n, alpha, delta)[0], bounds=(lo, hi), method="bounded",
                          options={"xatol": 1e-10})
    return max(best, -float(res.fun))


@pytest.mark.parametrize("n, alpha", [(1_000_000, 0.05), (2_000_000, 0.1)])
def test_monte_carlo_matches_the_laplace_closed_form(n: int, alpha: float) -> None:
    got = oracle_bound(Laplace(epsilon=0.1), [(0.0, 1.0)], n, alpha=alpha, seed=0)
    assert got.method == "monte-carlo" and got.oracle_samples == 4 * n
    assert got.bound == pytest.approx(laplace_closed_form(0.1, n, alpha), abs=2e-5)
    assert 0.0 <= got.threshold <= 0.1 + 1e-12          # a level of the loss, in [−ε, ε]


def test_gaussian_with_delta_matches_its_closed_form() -> None:
    # level sets of the Gaussian loss are the tails {o >= c}: P1 = Φ((1 − c)/σ), P0 = Φ(−c/σ)
    mech = GaussianClassicLargeEpsilon(epsilon=10.0, delta=0.1)
    c = np.linspace(0.0, 2.5, 250_001)
    exact, _ = level_set_bound(stats.norm.sf((c - 1) / mech.sigma), stats.norm.sf(c / mech.sigma), 1_000_000, 0.05,
                               0.1)
    got = oracle_bound(mech, [(0.0, 1.0)], 1_000_000, delta=0.1, oracle_samples=2_000_000)
    assert got.bound == pytest.approx(exact, abs=2e-3) and got.bound > 10.0


def test_exact_path_for_randomized_response() -> None:
    # RR with eps = 1, k = 2: the event {out = x} has p = e/(1+e) against 1/(1+e) exactly
    got = oracle_bound(RandomizedResponse(epsilon=1.0, k=2), [(0, 1)], 100_000)
    want, _ = level_set_bound(np.array([np.e / (1 + np.e)]), np.array([1 / (1 + np.e)]), 100_000, 0.05, 0.0)
    assert got.method == "exact" and got.oracle_samples is None and got.bound == pytest.approx(want, rel=1e-12)


def test_exact_path_groups_ties_into_level_sets() -> None:
    # k = 4, pair (0, 1): L = +1 on code 0, 0 on codes 2 and 3 (a tie), −1 on code 1: three level sets
    e = math.e
    p_num = np.cumsum([e, 2.0, 1.0]) / (e + 3)
    p_den = np.cumsum([1.0, 2.0, e]) / (e + 3)
    for n in (30, 1_000, 1_000_000):
        want, _ = level_set_bound(p_num, p_den, n, 0.05, 0.0)
        got = oracle_bound(RandomizedResponse(epsilon=1.0, k=4), [(0, 1)], n)
        assert got.bound == pytest.approx(want, rel=1e-12)
        assert min(abs(got.threshold - 1.0), abs(got.threshold)) < 1e-12


def test_oracle_is_at_least_what_a_fixed_event_certifies() -> None:
    eps, n = 0.5, 200_000
    got = oracle_bound(Laplace(epsilon=eps), [(0.0, 1.0)], n, seed=3)
    for t in (0.0, 0.5, 1.0, 2.0):       # tail events {o >= t} on x_num = 1 against x_den = 0, exact probabilities
        p1 = 1 - 0.5 * math.exp(-eps * (1 - t)) if t <= 1 else 0.5 * math.exp(-eps * (t - 1))
        fixed, _ = level_set_bound([p1], [0.5 * math.exp(-eps * t)], n, 0.05, 0.0)
        assert got.bound >= fixed - 2e-5
    rr = oracle_bound(RandomizedResponse(epsilon=1.0, k=4), [(0, 1)], n)
    for event in ([0], [0, 2], [0, 2, 3], [2]):
        pmf0, pmf1 = RandomizedResponse(epsilon=1.0, k=4).pmf(0), RandomizedResponse(epsilon=1.0, k=4).pmf(1)
        fixed, _ = level_set_bound([pmf0[event].sum()], [pmf1[event].sum()], n, 0.05, 0.0)
        assert rr.bound >= fixed - 1e-12


def test_oracle_grows_with_the_budget_towards_the_true_epsilon() -> None:
    rr = [oracle_bound(RandomizedResponse(epsilon=1.0, k=4), [(0, 1)], n).bound for n in 10 ** np.arange(3, 10)]
    assert np.all(np.diff(rr) > 0) and 0.99 < rr[-1] < 1.0
    mech, pairs = Histogram(epsilon=0.5), [(np.zeros(3), np.array([1.0, 0.0, 0.0]))]
    b = [oracle_bound(mech, pairs, n, seed=1, oracle_samples=2_000_000).bound for n in (10_000, 100_000, 1_000_000)]
    assert b[0] < b[1] < b[2] < 0.5 and b[2] > 0.47
    half = [oracle_bound(LaplaceHalfNoise(epsilon=0.1), [(0.0, 1.0)], n, seed=2).bound for n in (10_000, 1_000_000)]
    assert half[0] < half[1] < 0.2 and half[1] > 0.19        # true ε of the broken twin: 2ε


def test_delta_claims_lower_the_bound() -> None:
    mech = Gaussian(epsilon=1.0, delta=0.01)
    with_delta = oracle_bound(mech, [(0.0, 1.0)], 1_000_000, delta=0.01).bound
    without = oracle_bound(mech, [(0.0, 1.0)], 1_000_000).bound
    assert with_delta < without
    never = oracle_bound(RandomizedResponse(epsilon=1.0, k=2), [(0, 1)], 1000, delta=0.999)
    assert never.bound == -math.inf and json.loads(json.dumps(never.to_dict()))["bound"] == "-inf"


def test_point_masses_and_impossible_outputs() -> None:
    # NoNoise: every output on x is impossible on x' (L = +inf): p_num = 1, p_den = 0 and the bound is
    # ln(CP_low(n; n) / CP_high(0; n)) = ln(a^(1/n) / (1 − a^(1/n))) at a = α/2
    n = 2_000_000
    want = math.log(0.025) / n - math.log(-math.expm1(math.log(0.025) / n))
    got = oracle_bound(NoNoise(epsilon=0.1), [(3.0, 4.0)], n)
    assert got.p_num == 1.0 and got.p_den == 0.0 and got.threshold == math.inf
    assert got.bound == pytest.approx(want, rel=1e-9)
    nan_pair = [(np.array([0.5, 0.2, 0.9]), np.array([0.5, 0.2, np.nan]))]
    assert oracle_bound(SumNaNThroughClipping(0.1, 0.0, 1.0), nan_pair, n).bound == pytest.approx(want, rel=1e-9)
    # the fixed twin counts a NaN record as `lower`: an add/remove-like pair of the correct clipped sum
    assert oracle_bound(ClippedSum(0.1, 0.0, 1.0), nan_pair, n).bound < 0.1


def test_pairs_directions_and_result_fields() -> None:
    pairs = LInfNeighbours(radius=1.0).pairs(np.array([0.0]))
    got = oracle_bound(Laplace(epsilon=1.0), [Pair(0.0, 0.25, "near")] + pairs, 100_000, oracle_samples=400_000)
    assert got.pair_index >= 1 and got.pair_label == pairs[got.pair_index - 1].label
    assert got.direction in (0, 1) and 0 < got.p_den < got.p_num <= 1
    d = json.loads(json.dumps(got.to_dict()))
    assert set(d) >= {"bound", "pair_index", "direction", "threshold", "p_num", "p_den", "samples", "alpha", "delta",
                      "method", "oracle_samples"}
    same = oracle_bound(Laplace(epsilon=1.0), [Pair(0.0, 0.25, "near")] + pairs, 100_000, oracle_samples=400_000)
    assert same == got                                                        # seeded
    swapped = oracle_bound(Laplace(epsilon=1.0), [(1.0, 0.0)], 100_000, oracle_samples=400_000)
    assert swapped.bound == pytest.approx(oracle_bound(Laplace(epsilon=1.0), [(0.0, 1.0)], 100_000,
                                                       oracle_samples=400_000).bound, abs=2e-3)


# ------------------------------------------------------------------------------------------------ the laws
def test_law_sources() -> None:
    assert law_of(RandomizedResponse(epsilon=1.0, k=4)).source == "pmf"
    for mech in (Laplace(0.1), LaplaceHalfNoise(0.1), Histogram(0.1), HistogramScaleEpsilon(0.1), Gaussian(1.0, 0.01),
                 Gaussian(0.5, 0.01, calibration="classic"), GaussianClassicLargeEpsilon(10.0, 0.1), Geometric(0.1),
                 GeometricIgnoresSensitivity(0.1), NoNoise(0.1), ClippedSum(0.1, 0.0, 1.0),
                 SumMissingClipping(0.1, 0.0, 1.0), SumNaNThroughClipping(0.1, 0.0, 1.0)):
        law = law_of(mech)
        assert isinstance(law, Law) and law.kind == "density" and law.source == "log_density", type(mech).__name__
    # a law inherited from a class whose sampler the subclass overrides is stale: not used
    assert law_of(BudgetSpentTwice(0.1), 0.0) is None                      # two noise steps, no law of its own
    assert law_of(FloatingPointLaplace(0.1), 0.0).source == "noise-step"   # its own release, read as one step
    # the pmf adapter: log mass of each code, -inf outside the codes
    ld = law_of(RandomizedResponse(epsilon=1.0, k=2)).log_density(0, np.array([0, 1, 2, -1]))
    assert np.allclose(ld[:2], np.log([math.e / (1 + math.e), 1 / (1 + math.e)])) and np.all(ld[2:] == -np.inf)


@pytest.mark.parametrize("mech, x", [
    (Laplace(0.5), 0.3), (Laplace(1.0), np.array([0.0, 2.0])), (Geometric(0.5), 4),
    (Gaussian(1.0, 0.01), np.array([1.0, -1.0])), (Gaussian(0.5, 0.01, calibration="classic"), 0.0),
    (GaussianClassicLargeEpsilon(10.0, 0.1), 0.0), (GeometricIgnoresSensitivity(0.5, 2), np.array([1, 3])),
    (ClippedSum(0.5, 0.0, 1.0), np.array([0.5, 0.2, 0.9])), (SumMissingClipping(0.5, 0.0, 1.0), np.array([0.5, 10.0])),
])
def test_the_hand_written_law_equals_the_noise_step(mech: Any, x: Any) -> None:
    out = np.asarray(mech(x, 1000, np.random.default_rng(5)))
    out = np.concatenate([out, out + 0.5, out[:, ::-1] if out.ndim == 2 else -out])
    got, step = mech.log_density(x, out), _one_step_law(mech)(x, out)
    assert got.shape == (len(out),)
    assert np.array_equal(np.isfinite(got), np.isfinite(step))
    assert np.allclose(got[np.isfinite(got)], step[np.isfinite(step)], rtol=1e-12, atol=1e-12)


def _grid_check(mech: Any, x: Any, centre: np.ndarray, scale: float, samples: int = 200_000) -> None:
    """Continuous law in 1 or 2 coordinates: exp(log_density) integrates to 1 and matches sampled cell counts."""
    d = len(centre)
    axes = [np.linspace(c - 40 * scale, c + 40 * scale, (1601 if d == 2 else 40_001)) for c in centre]
    mesh = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, d)
    dens = np.exp(mech.log_density(x, mesh if d == 2 else mesh[:, 0])).reshape([len(a) for a in axes])
    total = dens
    for a in reversed(axes):
        total = np.trapezoid(total, a, axis=-1)
    assert total == pytest.approx(1.0, abs=1e-3)
    # cells: 8 per coordinate over ±3 scales (grid-aligned), plus the outside as one cell
    step = len(axes[0]) // 80                                     # grid nodes per scale/2
    edges_idx = [len(a) // 2 + step * np.arange(-6, 7) for a in axes]
    probs = []
    for cell in np.ndindex(*[len(e) - 1 for e in edges_idx]):
        block = dens[tuple(slice(e[i], e[i + 1] + 1) for e, i in zip(edges_idx, cell))]
        for k in reversed(range(d)):
            block = np.trapezoid(block, axes[k][edges_idx[k][cell[k]]:edges_idx[k][cell[k] + 1] + 1], axis=-1)
        probs.append(float(block))
    out = np.asarray(mech(x, samples, np.random.default_rng(11)), dtype=np.float64).reshape(samples, d)
    counts, _ = np.histogramdd(out, bins=[a[e] for a, e in zip(axes, edges_idx)])
    observed = np.r_[counts.reshape(-1), samples - counts.sum()]
    expected = np.r_[probs, max(1.0 - sum(probs), 0.0)] * samples
    assert _chisquare_p(observed, expected) > 1e-4


def _chisquare_p(observed: np.ndarray, expected: np.ndarray) -> float:
    """Chi-square p-value; cells expecting fewer than 5 are pooled (the last cell is the outside)."""
    small = expected < 5
    observed = np.r_[observed[~small], observed[small].sum()]
    expected = np.r_[expected[~small], expected[small].sum()]
    if expected[-1] <= 0:
        observed, expected = observed[:-1], expected[:-1]
    return float(stats.chisquare(observed, expected * observed.sum() / expected.sum()).pvalue)


@pytest.mark.parametrize("mech, x, centre, scale", [
    (Laplace(0.5), 0.3, [0.3], 2.0),
    (LaplaceHalfNoise(0.5), 0.0, [0.0], 1.0),
    (Histogram(1.0), np.array([2.0, 5.0]), [2.0, 5.0], 1.0),
    (HistogramScaleEpsilon(0.5), np.array([1.0, 0.0]), [1.0, 0.0], 0.5),
    (Gaussian(1.0, 0.01), np.array([1.0, -1.0]), [1.0, -1.0], None),
    (Gaussian(0.5, 0.01, calibration="classic"), 0.0, [0.0], None),
    (GaussianClassicLargeEpsilon(10.0, 0.1), 2.0, [2.0], None),
    (ClippedSum(0.5, 0.0, 1.0), np.array([0.5, 0.2, 7.0]), [1.7], 2.0),
    (SumMissingClipping(0.5, 0.0, 1.0), np.array([0.5, 10.0]), [10.5], 2.0),
])
def test_continuous_laws_are_normalised_and_match_the_sampler(mech: Any, x: Any, centre: list, scale: Any) -> None:
    _grid_check(mech, x, np.asarray(centre, dtype=float), scale if scale is not None else mech.sigma)


@pytest.mark.parametrize("mech, x", [(Geometric(0.5), 3), (Geometric(0.2, sensitivity=2), -1),
                                     (GeometricIgnoresSensitivity(0.5, 2), 7)])
def test_geometric_laws_sum_to_one_and_match_the_sampler(mech: Any, x: int) -> None:
    support = np.arange(x - 600, x + 601)
    p = np.exp(mech.log_density(x, support))
    assert p.sum() == pytest.approx(1.0, abs=1e-9)
    assert np.all(mech.log_density(x, np.array([x + 0.5, np.nan])) == -np.inf)
    out = mech(x, 200_000, np.random.default_rng(7))
    keep = np.abs(support - x) <= 15                               # the integers x-15..x+15, then the rest
    observed = np.histogram(out, bins=np.arange(x - 15, x + 17) - 0.5)[0]
    observed = np.r_[observed, len(out) - observed.sum()]
    expected = np.r_[p[keep], 1 - p[keep].sum()] * len(out)
    assert _chisquare_p(observed, expected) > 1e-4
    # vector input: the coordinates are independent
    two = mech.log_density(np.array([x, 0]), np.array([[x + 1, 2], [x, 0]]))
    assert two == pytest.approx([mech.log_density(x, np.array([x + 1]))[0] + mech.log_density(0, np.array([2]))[0],
                                 mech.log_density(x, np.array([x]))[0] + mech.log_density(0, np.array([0]))[0]])


def test_point_mass_laws() -> None:
    mech = NoNoise(epsilon=0.1)
    x = np.array([3.0, -1.0])
    out = mech(x, 5, np.random.default_rng(0))
    assert np.all(mech.log_density(x, out) == 0.0)                     # mass 1 on x (counting measure)
    assert np.all(mech.log_density(x, out + np.array([0.0, 1e-9])) == -np.inf)
    assert mech.log_density(2.0, np.array([2.0, 2.5])).tolist() == [0.0, -np.inf]
    nan_twin, with_nan = SumNaNThroughClipping(0.1, 0.0, 1.0), np.array([0.5, np.nan])
    assert np.all(np.isnan(nan_twin(with_nan, 10, np.random.default_rng(0))))
    assert nan_twin.log_density(with_nan, np.array([np.nan, 0.5])).tolist() == [0.0, -np.inf]
    assert nan_twin.log_density(np.array([0.5]), np.array([np.nan]))[0] == -np.inf
    assert np.isfinite(nan_twin.log_density(np.array([0.5]), np.array([0.5]))[0])


# ------------------------------------------------------------------------------------------------ bad input
def test_a_mechanism_without_a_law_is_an_input_error() -> None:
    def opaque(x, n, rng):
        return x + rng.laplace(size=n)

    with pytest.raises(InputError, match="exposes no output law"):
        oracle_bound(opaque, [(0.0, 1.0)], 1000)
    with pytest.raises(InputError, match="exposes no output law"):
        oracle_bound(BudgetSpentTwice(0.1), [(0.0, 1.0)], 1000)


class _WrongLaw:
    """Samples Lap(1) but claims a point mass at x: the law and the sampler disagree."""

    def __call__(self, x, n, rng):
        return x + rng.laplace(size=n)

    def log_density(self, x, out):
        return np.where(np.asarray(out) == x, 0.0, -np.inf)


@pytest.mark.parametrize("kwargs, match", [
    (dict(samples=0), "samples"), (dict(samples=-5), "samples"), (dict(samples=1.5), "samples"),
    (dict(alpha=0.0), "alpha"), (dict(alpha=1.0), "alpha"), (dict(delta=-0.1), "delta"), (dict(delta=1.0), "delta"),
    (dict(oracle_samples=0), "oracle_samples"), (dict(pairs=[]), "empty"), (dict(pairs=[(0.0,)]), "element 0"),
])
def test_bad_arguments_are_input_errors(kwargs: dict, match: str) -> None:
    args = dict(mechanism=Laplace(1.0), pairs=[(0.0, 1.0)], samples=1000) | kwargs
    mech, pairs, n = args.pop("mechanism"), args.pop("pairs"), args.pop("samples")
    with pytest.raises(InputError, match=match):
        oracle_bound(mech, pairs, n, **args)


def test_a_law_that_contradicts_its_sampler_is_an_input_error() -> None:
    with pytest.raises(InputError, match="disagree"):
        oracle_bound(_WrongLaw(), [(0.0, 1.0)], 1000, oracle_samples=1000)
