"""The explicit noise-source hooks (``release(x, n, noise)``, :mod:`algorithms.noise`) of the instrumented
mechanisms: same draws as ``__call__``, the declared steps, the broken catalogue's ``BUG_KIND``, and PAMST's
step-by-step ``release`` against its exact law.

Fixed seeds throughout; the one statistical test (PAMST's chi-square) states its level.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import math
import pkgutil

import numpy as np
import pytest
from scipy import stats

import algorithms.broken
from algorithms.broken import (
    BudgetSpentTwice,
    ExponentialMechanismNoHalf,
    FloatingPointLaplace,
    GaussianClassicLargeEpsilon,
    GeometricIgnoresSensitivity,
    HistogramScaleEpsilon,
    LaplaceHalfNoise,
    LaplaceMSTL1ScaleForLInf,
    LaplaceMSTTrueWeights,
    MeanDataDependentScale,
    NoisyMaxReturnsValue,
    PAMSTDataDependentSensitivity,
    PAMSTFullBudgetEachStep,
    PAMSTNoHalf,
    PAMSTReleasesWeights,
    SumMissingClipping,
    SumNaNThroughClipping,
    SVTNoCutoff,
    SVTNoQueryNoise,
    SVTOutputsValue,
    SVTUnscaledQueryNoise,
)
from algorithms.classic.clipped_sum import ClippedSum
from algorithms.classic.exponential import ExponentialMechanism
from algorithms.classic.gaussian import Gaussian
from algorithms.classic.geometric import Geometric
from algorithms.classic.histogram import Histogram
from algorithms.classic.laplace import Laplace
from algorithms.classic.noisy_max import ReportNoisyMax, answer_noise, first_argmax
from algorithms.classic.sparse_vector import SparseVector
from algorithms.dpm.split import DPMSplitEM
from algorithms.graph.laplace_mst import LaplaceMST
from algorithms.graph.pamst import PAMST
from algorithms.graph.weight_release import WeightRelease
from algorithms.graph.weighted_graph import WeightedGraph
from algorithms.noise import NoiseSource, bernoulli, laplace_noise, random_bytes

K4 = WeightedGraph.complete(4, [1.0, 2.0, 3.0, 1.5, 2.5, 4.0])
C5 = WeightedGraph.from_arrays(5, [(0, 1), (1, 2), (2, 3), (3, 4), (4, 0), (0, 2)], [1.0, 2.0, 0.5, 3.0, 1.0, 2.0])
SUM_DATA = np.array([0.5, -2.0, 7.0, 0.25])
NAN_DATA = np.array([0.5, np.nan, 0.25])
QUERIES = np.array([0.2, 3.0, -1.0, 2.5, 0.7])
DPM_POINTS = np.array([0.05, 0.1, 0.12, 0.4, 0.45, 0.5, 0.52, 0.9])

# (id, mechanism, input): every mechanism with a release whose __call__ draws through it.
CASES = [
    ("laplace", Laplace(0.5, 2.0), np.array([1.0, -3.0])),
    ("gaussian", Gaussian(0.5, 1e-5, 2.0), np.array([1.0, -3.0])),
    ("gaussian-classic", Gaussian(0.5, 1e-5, calibration="classic"), 4.0),
    ("geometric", Geometric(0.5, 2), np.array([3, -1])),
    ("histogram", Histogram(0.5), np.array([3.0, 0.0, 5.0])),
    ("clipped-sum", ClippedSum(0.5, -1.0, 2.0), SUM_DATA),
    ("clipped-sum-nan", ClippedSum(0.5, -1.0, 2.0), NAN_DATA),
    ("exponential", ExponentialMechanism(1.0, 2.0), np.array([0.0, 1.0, 3.0, 2.0])),
    ("noisy-max-laplace", ReportNoisyMax(1.0), QUERIES),
    ("noisy-max-exponential", ReportNoisyMax(1.0, "exponential"), QUERIES),
    ("svt", SparseVector(1.0, 1.0, cutoff=2), QUERIES),
    ("dpm-split", DPMSplitEM(1.0, 8.0, 0.1), DPM_POINTS),
    ("dpm-split-printed", DPMSplitEM(1.0, 8.0, 0.25, d=1, exponent="printed"), DPM_POINTS),
    ("laplace-mst", LaplaceMST(1.0), K4),
    ("laplace-mst-linf-weights", LaplaceMST(1.0, mu=0.5, neighbours="linf", release_weights=True), C5),
    ("weight-release-l1", WeightRelease(1.0, mu=0.5, tau=1.0, p=2.0), C5),
    ("weight-release-per-edge", WeightRelease(1.0, calibration="per-edge"), C5),
    ("weight-release-theorem-11", WeightRelease(1.0, calibration="theorem-11", p=3.0), C5),
    # the broken catalogue
    ("budget-spent-twice", BudgetSpentTwice(0.5), 2.0),
    ("mean-data-dependent-scale", MeanDataDependentScale(0.5, -1.0, 2.0), SUM_DATA),
    ("exponential-no-half", ExponentialMechanismNoHalf(1.0, 2.0), np.array([0.0, 1.0, 3.0, 2.0])),
    ("float-laplace", FloatingPointLaplace(0.5), np.array([0.0, 1.0])),
    ("gaussian-classic-large-epsilon", GaussianClassicLargeEpsilon(10.0, 0.1), np.array([0.0, 1.0])),
    ("geometric-ignores-sensitivity", GeometricIgnoresSensitivity(0.5, 3), np.array([3, -1])),
    ("histogram-scale-epsilon", HistogramScaleEpsilon(0.5), np.array([3.0, 0.0, 5.0])),
    ("laplace-half-noise", LaplaceHalfNoise(0.5), 1.0),
    ("laplace-mst-l1-scale-for-linf", LaplaceMSTL1ScaleForLInf(1.0, mu=0.5), C5),
    ("laplace-mst-true-weights", LaplaceMSTTrueWeights(1.0, release_weights=True), C5),
    ("missing-clipping", SumMissingClipping(0.5, -1.0, 2.0), SUM_DATA),
    ("nan-through-clipping", SumNaNThroughClipping(0.5, -1.0, 2.0), NAN_DATA),
    ("noisy-max-returns-value", NoisyMaxReturnsValue(1.0), QUERIES),
    ("noisy-max-returns-value-exp", NoisyMaxReturnsValue(1.0, "exponential"), QUERIES),
    ("svt-no-cutoff", SVTNoCutoff(1.0, 1.0), QUERIES),
    ("svt-no-query-noise", SVTNoQueryNoise(1.0, 1.0), QUERIES),
    ("svt-outputs-value", SVTOutputsValue(1.0, 1.0, cutoff=2), QUERIES),
    ("svt-unscaled-query-noise", SVTUnscaledQueryNoise(1.0, 1.0), QUERIES),
]
N = 64
SEED = 20240601

#: sha256 (first 16 hex digits) of ``__call__(x, N, default_rng(SEED))`` computed with the code *before* the
#: noise hooks were added (commit 1db6b98): the hooks must not change a single draw.
LEGACY_DIGESTS = {
    "gaussian": "96243bfd8dbb319a",
    "gaussian-classic": "20c616203ad04cbc",
    "geometric": "b1a4f5c6f176bcb1",
    "clipped-sum": "6518bb64c94d3b8f",
    "clipped-sum-nan": "ac93291d853cf799",
    "exponential": "f6a8ac26e5c66c34",
    "dpm-split": "01f752fe37d70081",
    "dpm-split-printed": "f6372064b98ad3cf",
    "laplace-mst": "51a38069fd6c27b0",
    "laplace-mst-linf-weights": "bcae2b889bf939f8",
    "weight-release-l1": "dbbc38ae42a55338",
    "weight-release-per-edge": "1f6db79b4efd3265",
    "weight-release-theorem-11": "d3afe2a43afcd841",
    "budget-spent-twice": "c268339db55e28a1",
    "mean-data-dependent-scale": "20911e2bce0f20d1",
    "exponential-no-half": "05885a369eb81fc9",
    "float-laplace": "9619ae21d9beba45",
    "gaussian-classic-large-epsilon": "a8b2e9fcf7993888",
    "geometric-ignores-sensitivity": "1d039d276c4773fb",
    "laplace-mst-l1-scale-for-linf": "dc6b762888fcffc6",
    "laplace-mst-true-weights": "447c59ca4d904374",
    "missing-clipping": "9ea637eb8a797e4f",
    "nan-through-clipping": "6fc25bb54d0d25e6",
}


#: Mechanisms whose sampler was later made cheaper with the same output law but another random stream (Laplace
#: draws from :func:`algorithms.noise.laplace_noise`; SVT query noise drawn only for the runs still answering;
#: report-noisy-max's noise stored query by query): the sha256 prefix of that stream.  Their law is tested in the
#: mechanism's own test file (test_classic_mechanisms.py, test_broken_mechanisms.py, test_public_suite_mechanisms.py:
#: exact SVT pattern probabilities, Laplace KS tests, report-noisy-max pmfs) and the Laplace draws by
#: test_laplace_noise_law below.
RESAMPLED_DIGESTS = {
    "laplace": "4d060354aa269946",
    "laplace-half-noise": "1672e43238ba427c",
    "noisy-max-exponential": "2922518366650f7f",
    "noisy-max-returns-value-exp": "6d0b578bd2826683",
    "histogram": "dad547341756f8f8",
    "noisy-max-laplace": "593e29d75f24abbc",
    "histogram-scale-epsilon": "4ed66a4b43a4edcb",
    "noisy-max-returns-value": "fc9b71deeb87200c",
    "svt": "32c94d88460b6ce7",
    "svt-no-cutoff": "1632055eadc269c3",
    "svt-no-query-noise": "4fe0c9eb32050848",
    "svt-outputs-value": "535f0574bab6f02c",
    "svt-unscaled-query-noise": "ef78f08f1d4cd9e8",
}


def _digest(out: np.ndarray) -> str:
    out = np.ascontiguousarray(out)
    h = hashlib.sha256(f"{out.dtype.str}{out.shape}".encode())
    h.update(out.tobytes())
    return h.hexdigest()[:16]


class Recording(NoiseSource):
    """Plain noise that also records every step's declaration."""

    def __init__(self, rng: np.random.Generator) -> None:
        super().__init__(rng)
        self.steps: list[dict] = []

    def add(self, step, value, draw, *, sensitivity, norm="l1", scale=None, kind="other"):
        self.steps.append(dict(op="add", step=step, value=np.asarray(value), sensitivity=sensitivity, norm=norm,
                               scale=scale, kind=kind))
        return super().add(step, value, draw, sensitivity=sensitivity, norm=norm, scale=scale, kind=kind)

    def select(self, step, utilities, draw, *, sensitivity, norm="linf", scale=None):
        self.steps.append(dict(op="select", step=step, value=np.asarray(utilities), sensitivity=sensitivity,
                               norm=norm, scale=scale, kind="selection"))
        return super().select(step, utilities, draw, sensitivity=sensitivity, norm=norm, scale=scale)


class Duck:
    """The protocol without subclassing :class:`NoiseSource` (it is duck-typed)."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.names: list[str] = []

    def add(self, step, value, draw, *, sensitivity, norm="l1", scale=None, kind="other"):
        self.names.append(step)
        return value + draw(self.rng)

    def select(self, step, utilities, draw, *, sensitivity, norm="linf", scale=None):
        self.names.append(step)
        return np.asarray(draw(self.rng))


def _steps(mech, x, n=8, seed=0) -> list[dict]:
    rec = Recording(np.random.default_rng(seed))
    mech.release(x, n, rec)
    return rec.steps


# --------------------------------------------------------------------------------------------------
# release draws exactly what __call__ draws
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name,mech,x", CASES, ids=[c[0] for c in CASES])
def test_release_equals_call(name, mech, x):
    via_call = mech(x, N, np.random.default_rng(SEED))
    via_release = mech.release(x, N, NoiseSource(np.random.default_rng(SEED)))
    recorded = mech.release(x, N, Recording(np.random.default_rng(SEED)))
    duck = Duck(np.random.default_rng(SEED))
    ducked = mech.release(x, N, duck)
    assert duck.names, f"{name}: release made no noise step"
    for out in (via_release, recorded, ducked):
        assert out.dtype == via_call.dtype and out.shape == via_call.shape
        assert np.array_equal(out, via_call, equal_nan=out.dtype.kind == "f")
    if name in LEGACY_DIGESTS:
        assert _digest(via_call) == LEGACY_DIGESTS[name], f"{name}: __call__ no longer draws the pre-hook stream"
    if name in RESAMPLED_DIGESTS:
        assert _digest(via_call) == RESAMPLED_DIGESTS[name], f"{name}: __call__ no longer draws the pinned stream"


@pytest.mark.parametrize("name,mech,x", CASES, ids=[c[0] for c in CASES])
def test_release_validates_input(name, mech, x):
    with pytest.raises(ValueError):
        mech.release(x, -1, NoiseSource(np.random.default_rng(0)))


def test_laplace_noise_law() -> None:
    """algorithms.noise.laplace_noise (exponential magnitude, random sign) has the law of rng.laplace: KS against
    Laplace(0, b), two-sample KS against rng.laplace, fair signs independent of the magnitude (fixed seeds, each
    assertion at false-failure level 1e-4); float64 of the requested shape."""
    b, n = 3.0, 400_000
    x = laplace_noise(np.random.default_rng(61), b, n)
    assert x.dtype == np.float64 and x.shape == (n,)
    assert stats.kstest(x, "laplace", args=(0.0, b)).pvalue > 1e-4
    assert stats.ks_2samp(x, np.random.default_rng(62).laplace(0.0, b, n)).pvalue > 1e-4
    neg = x < 0
    assert abs(neg.mean() - 0.5) < 4.0 * math.sqrt(0.25 / n)
    assert stats.ks_2samp(-x[neg], x[~neg]).pvalue > 1e-4  # the magnitude does not depend on the sign
    assert abs(np.corrcoef(neg[:-1], neg[1:])[0, 1]) < 4.0 / math.sqrt(n)  # consecutive signs independent
    g = np.random.default_rng(63)
    assert laplace_noise(g, b, (3, 7)).shape == (3, 7) and laplace_noise(g, b, 0).shape == (0,)


def test_laplace_noise_into_out() -> None:
    """laplace_noise(out=...) fills the given C-contiguous array with the draws laplace_noise(size=...) returns."""
    out = np.empty((4, 9))
    got = laplace_noise(np.random.default_rng(5), 2.0, out=out)
    assert got is out
    np.testing.assert_array_equal(out, laplace_noise(np.random.default_rng(5), 2.0, (4, 9)))


@pytest.mark.parametrize("bit_generator", [np.random.PCG64, np.random.PCG64DXSM, np.random.SFC64, np.random.Philox,
                                           np.random.MT19937])
def test_random_bytes_is_generator_bytes(bit_generator) -> None:
    """random_bytes(rng, k) gives rng.bytes(k)'s bytes and leaves the generator where rng.bytes leaves it, through
    lengths that leave a 32-bit half pending or not, and 32-bit draws of other kinds in between (which read the
    pending half): two generators of one seed, one read each way, stay in step (deterministic)."""
    a, b = (np.random.Generator(bit_generator(7)) for _ in range(2))
    for k in (1, 3, 4, 5, 8, 9, 12, 13, 31, 32, 33, 64, 100, 1250, 4097):
        assert random_bytes(a, k).tobytes() == b.bytes(k)
        assert a.random() == b.random()
        if k % 3 == 0:
            np.testing.assert_array_equal(a.integers(0, 2 ** 32, size=k % 4, dtype=np.uint32),
                                          b.integers(0, 2 ** 32, size=k % 4, dtype=np.uint32))
    assert a.bytes(7) == b.bytes(7) and a.standard_exponential() == b.standard_exponential()
    assert random_bytes(a, 0).tobytes() == b.bytes(0) == b""


@pytest.mark.parametrize("p", [0.475, 0.525, 3.5 / 256, 1.0 - 2.0 ** -9, 2.0 ** -10])
def test_bernoulli_law(p: float) -> None:
    """algorithms.noise.bernoulli has the law of rng.random(shape) < p, P = ceil(p 2^53)/2^53 (= p here): the
    frequency within 4.5 binomial standard deviations (fixed seed, false-failure level 7e-6 each).  3.5/256 and
    1 - 2^-9 have a threshold byte that ties with the first byte drawn with probability 1/256 and then half or all of
    the 45 low bits' range below it, so the low draws carry a share of the mass that a first-byte-only sampler
    would get wrong (by 1/512 each: 33 and 88 standard deviations at this size)."""
    n = 4_000_000
    x = bernoulli(np.random.default_rng(17), p, (n // 4, 4))
    assert x.dtype == np.bool_ and x.shape == (n // 4, 4)
    assert abs(x.mean() - p) < 4.5 * math.sqrt(p * (1.0 - p) / n)


def test_bernoulli_per_column_probabilities_and_edges() -> None:
    """Probabilities broadcast over the trailing axes; 0 and 1 are exact; out-of-range or badly shaped
    probabilities are refused by name; the draws are a function of the generator's state (same seed, same bits)."""
    p = np.array([0.0, 1.0, 0.2, 0.9, 2.0 ** -53])
    x = bernoulli(np.random.default_rng(3), p, (200_000, 5))
    assert not x[:, 0].any() and x[:, 1].all() and not x[:, 4].any()  # 2^-53: P(any of 200,000) < 3e-11
    for j, pj in ((2, 0.2), (3, 0.9)):
        assert abs(x[:, j].mean() - pj) < 4.5 * math.sqrt(pj * (1 - pj) / x.shape[0])
    np.testing.assert_array_equal(x, bernoulli(np.random.default_rng(3), p, (200_000, 5)))
    assert bernoulli(np.random.default_rng(0), 0.5, 7).shape == (7,)
    assert bernoulli(np.random.default_rng(0), 0.5, (0, 3)).shape == (0, 3)
    assert bernoulli(np.random.default_rng(0), np.zeros(0), (4, 0)).shape == (4, 0)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        bernoulli(np.random.default_rng(0), [0.5, 1.5], (2, 2))
    with pytest.raises(ValueError, match="broadcast"):
        bernoulli(np.random.default_rng(0), np.full((2, 2), 0.5), 4)
    with pytest.raises(ValueError, match="broadcast"):
        bernoulli(np.random.default_rng(0), np.full(3, 0.5), (2, 4))


@pytest.mark.parametrize("shape", [(1001, 7), (3, 4096), (5000,), (20, 3, 50)])
def test_bernoulli_is_its_definition_on_the_raw_stream(shape: tuple[int, ...]) -> None:
    """bernoulli's tiled comparisons (whole rows of repeated thresholds, then the blocks left over) give, entry by
    entry, the outcome of its definition on the same raw stream: the first byte below the threshold's, or equal to
    it and the 45 low bits (drawn for the ties in order) below the threshold's own."""
    p = np.random.default_rng(9).random(shape[1:]) if len(shape) > 1 else 0.37
    got = bernoulli(np.random.default_rng(31), p, shape)
    bits = np.random.default_rng(31).bit_generator
    size = math.prod(shape)
    high = bits.random_raw((size + 7) // 8).view(np.uint8)[:size].reshape(shape)
    t = np.ceil(np.ldexp(np.broadcast_to(p, shape), 53)).astype(np.uint64)
    t_hi = np.minimum(t >> np.uint64(45), np.uint64(255))
    t_lo = t - (t_hi << np.uint64(45))
    want = high < t_hi
    tie = high == t_hi
    assert tie.any()
    want[tie] = (bits.random_raw(int(tie.sum())) >> np.uint64(19)) < t_lo[tie]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("m", [1, 2, 5, 40, 300])
def test_first_argmax_is_numpys_argmax(m: int) -> None:
    """first_argmax equals np.argmax along the rows (first of tied maxima) on column-stored noisy answers, ties
    and repeated columns included, for one column, a few, and more than its uint8 index holds (its fallback)."""
    rng = np.random.default_rng(m)
    values = answer_noise("laplace", 1.0, (5_000, m), rng)
    values[:500] = np.round(values[:500])  # many ties among the first rows
    if m > 2:
        values[500:1000, 2] = values[500:1000, 1]
    got = first_argmax(values)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, np.argmax(values, axis=1))
    np.testing.assert_array_equal(first_argmax(np.ascontiguousarray(values)), np.argmax(values, axis=1))
    assert first_argmax(np.empty((0, m))).shape == (0,)


def test_noise_source_add_in_place_only_on_a_temporary_draw() -> None:
    """NoiseSource.add forms value + draw in the draw's array only when nothing else refers to it."""
    src = NoiseSource(np.random.default_rng(0))
    kept = np.arange(6.0).reshape(2, 3)
    out = src.add("s", np.ones(3), lambda g: kept, sensitivity=1.0)
    assert np.array_equal(kept, np.arange(6.0).reshape(2, 3)) and out is not kept
    np.testing.assert_array_equal(out, kept + 1.0)
    column = np.array([[1.0], [2.0]])  # broadcasting beyond the draw's shape: a new array
    assert src.add("s", column, lambda g: np.zeros((2, 3)), sensitivity=1.0).shape == (2, 3)
    ints = src.add("s", 0.5, lambda g: np.arange(3), sensitivity=1.0)
    assert ints.dtype == np.float64 and np.array_equal(ints, np.arange(3) + 0.5)


# --------------------------------------------------------------------------------------------------
# declared steps
# --------------------------------------------------------------------------------------------------


def test_missing_clipping_declares_clipped_sensitivity_on_unclipped_sum():
    data = np.array([0.5, 100.0, -3.0])
    (good,) = _steps(ClippedSum(1.0, -1.0, 2.0), data)
    (bad,) = _steps(SumMissingClipping(1.0, -1.0, 2.0), data)
    assert good["step"] == bad["step"] == "sum" and good["norm"] == bad["norm"] == "l1"
    assert good["sensitivity"] == bad["sensitivity"] == 2.0          # max(|l|, |u|)
    assert float(good["value"]) == 0.5 + 2.0 - 1.0                    # clipped
    assert float(bad["value"]) == 97.5                                # the unclipped sum
    (nan,) = _steps(SumNaNThroughClipping(1.0, -1.0, 2.0), NAN_DATA)
    assert math.isnan(float(nan["value"])) and nan["sensitivity"] == 2.0


def test_geometric_twin_declares_one_while_parameter_says_delta():
    (good,) = _steps(Geometric(0.5, 3), 4)
    (bad,) = _steps(GeometricIgnoresSensitivity(0.5, 3), 4)
    assert good["sensitivity"] == 3 and good["kind"] == bad["kind"] == "geometric"
    assert bad["sensitivity"] == 1 and GeometricIgnoresSensitivity(0.5, 3).sensitivity == 3
    assert bad["scale"] == pytest.approx(math.exp(-0.5)) and good["scale"] == pytest.approx(math.exp(-0.5 / 3))


def test_data_dependent_mean_declares_size_dependent_sensitivity():
    m = MeanDataDependentScale(0.5, 0.0, 2.0)
    (a,) = _steps(m, np.array([1.0, 2.0]))
    (b,) = _steps(m, np.array([1.0, 2.0, 0.5]))
    assert a["sensitivity"] == 1.0 and b["sensitivity"] == pytest.approx(2.0 / 3.0)
    assert a["scale"] != b["scale"]


@pytest.mark.parametrize("mech,declared", [
    (LaplaceMST(1.0), 1.0),                                            # Sealfon: ℓ1 radius 1
    (LaplaceMST(2.0, mu=0.5, neighbours="linf"), 0.5 * C5.n_edges),   # |E|·mu
    (LaplaceMSTL1ScaleForLInf(2.0, mu=0.5), 0.5),                     # the bug: mu as the ℓ1 sensitivity
    (LaplaceMSTTrueWeights(1.0), 1.0),
])
def test_laplace_mst_declares_the_l1_sensitivity_of_its_scale(mech, declared):
    (step,) = _steps(mech, C5)
    assert step["step"] == "weights" and step["norm"] == "l1" and step["kind"] == "laplace"
    assert step["sensitivity"] == declared
    assert step["scale"] == mech.scale(C5) == pytest.approx(declared / mech.epsilon)
    assert np.array_equal(step["value"], C5.weights)


@pytest.mark.parametrize("calibration,declared", [("l1", 6 * 0.5), ("per-edge", 0.5), ("theorem-11", 0.25)])
def test_weight_release_declares_what_its_scale_assumes(calibration, declared):
    mech = WeightRelease(1.0 if calibration != "theorem-11" else 0.5, mu=0.5, p=1.0, calibration=calibration)
    (step,) = _steps(mech, C5)
    assert step["sensitivity"] == pytest.approx(declared)
    assert step["scale"] * mech.epsilon == pytest.approx(step["sensitivity"])


def test_svt_steps():
    steps = _steps(SparseVector(1.0, 1.0, cutoff=2), QUERIES)
    assert [s["step"] for s in steps][:2] == ["threshold", "query[0]"]
    assert all(s["sensitivity"] == 1.0 and s["norm"] == "l1" and s["kind"] == "laplace" for s in steps)
    assert [float(s["value"]) for s in steps[1:]] == QUERIES[:len(steps) - 1].tolist()
    no_noise = _steps(SVTNoQueryNoise(1.0, 1.0), QUERIES)
    assert [s["step"] for s in no_noise] == ["threshold"]
    assert len(_steps(SVTNoCutoff(1.0, 1.0), QUERIES)) == 1 + QUERIES.size


def test_budget_spent_twice_declares_two_laplace_steps():
    steps = _steps(BudgetSpentTwice(0.5, 2.0), 3.0)
    assert [s["step"] for s in steps] == ["laplace[0]", "laplace[1]"]
    assert all(s["sensitivity"] == 2.0 and float(s["value"]) == 3.0 for s in steps)


def test_selection_steps():
    (em,) = _steps(ExponentialMechanism(1.0, 2.0), np.array([0.0, 1.0]))
    assert em["op"] == "select" and em["sensitivity"] == 2.0 and em["scale"] == 0.25 and em["norm"] == "linf"
    (half,) = _steps(ExponentialMechanismNoHalf(1.0, 2.0), np.array([0.0, 1.0]))
    assert half["sensitivity"] == 2.0 and half["scale"] == 0.5
    (rnm,) = _steps(ReportNoisyMax(0.5), QUERIES)
    assert rnm["op"] == "select" and rnm["sensitivity"] == 1.0 and np.array_equal(rnm["value"], QUERIES)
    (value,) = _steps(NoisyMaxReturnsValue(0.5), QUERIES)
    assert value["op"] == "add" and value["norm"] == "linf" and value["sensitivity"] == 1.0
    dpm = DPMSplitEM(1.0, 8.0, 0.1)
    (split,) = _steps(dpm, DPM_POINTS)
    assert split["step"] == "split-em" and split["sensitivity"] == dpm.sensitivity()
    assert np.array_equal(split["value"], dpm.scores(DPM_POINTS))
    assert split["scale"] == pytest.approx(1.0 / (2.0 * dpm.sensitivity()))


def test_pamst_steps():
    n = 16
    mech = PAMST(1.2, mu=0.5)
    steps = _steps(mech, K4, n=n)
    assert [s["step"] for s in steps] == ["start", "em[0]", "em[1]", "em[2]"]
    assert steps[0]["sensitivity"] == math.inf
    for s in steps[1:]:
        assert s["op"] == "select" and s["norm"] == "linf"
        assert s["sensitivity"] == 0.5 and s["scale"] == pytest.approx(mech.coefficient(K4))
        u = s["value"]
        assert u.shape == (n, K4.n_edges)
        finite = np.isfinite(u)
        assert np.all(u[~finite] == -np.inf) and np.all(u[finite] <= 0)
        assert np.all(np.max(u, axis=1) == 0.0)                        # u = -|w - min_R w|
    # the cut grows: 3, then 4, then 3 candidates on K4
    assert [int(np.isfinite(s["value"][0]).sum()) for s in steps[1:]] == [3, 4, 3]
    fixed = _steps(PAMST(1.2, mu=0.5, start=2), K4, n=n)
    assert [s["step"] for s in fixed] == ["em[0]", "em[1]", "em[2]"]


def test_pamst_twins_declarations():
    wide = K4
    narrow = K4.with_weights(np.array([1.0, 1.1, 1.2, 1.05, 1.15, 1.3]))
    dd = PAMSTDataDependentSensitivity(1.0, mu=0.5)
    a = _steps(dd, wide)[1]["sensitivity"]
    b = _steps(dd, narrow)[1]["sensitivity"]
    assert a == pytest.approx(3.0 / 6) and b == pytest.approx(0.3 / 6) and a != b
    base = _steps(PAMST(1.0, mu=0.5), K4)[1]
    for twin, factor in ((PAMSTNoHalf(1.0, mu=0.5), 2.0), (PAMSTFullBudgetEachStep(1.0, mu=0.5), 3.0)):
        s = _steps(twin, K4)[1]
        assert s["sensitivity"] == base["sensitivity"] == 0.5
        assert s["scale"] == pytest.approx(factor * base["scale"])
    rows = PAMSTReleasesWeights(1.0).release(K4, 5, NoiseSource(np.random.default_rng(1)))
    assert rows.shape == (5, 4)
    for row in rows:
        edges = [e for e in range(K4.n_edges) if int(row[0]) >> e & 1]
        assert np.array_equal(row[1:], K4.weights[edges])


# --------------------------------------------------------------------------------------------------
# PAMST.release has PAMST's law
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mech", [PAMST(3.0, mu=0.5), PAMSTNoHalf(2.0, start=1)], ids=["random-start", "no-half"])
def test_pamst_release_law_matches_exact_pmf(mech):
    """Chi-square goodness of fit of 20,000 release() trees against :meth:`PAMST.log_pmf` on K4 (16 trees),
    fixed seed, level 1e-3 (bins with expected count < 5 merged)."""
    n = 20_000
    codes, log_p = mech.log_pmf(K4)
    out = mech.release(K4, n, NoiseSource(np.random.default_rng(7)))
    assert set(np.unique(out).tolist()) <= set(codes.tolist())
    observed = np.array([np.count_nonzero(out == c) for c in codes], dtype=float)
    expected = n * np.exp(log_p)
    small = expected < 5
    if small.any():
        observed = np.append(observed[~small], observed[small].sum())
        expected = np.append(expected[~small], expected[small].sum())
    assert stats.chisquare(observed, expected).pvalue > 1e-3


def test_pamst_release_output_encoding():
    mech = PAMST(1.0, output="edges")
    out = mech.release(C5, 10, NoiseSource(np.random.default_rng(3)))
    assert out.shape == (10, 4) and np.all(np.diff(out, axis=1) > 0)
    assert PAMST(1.0).release(C5, 0, NoiseSource(np.random.default_rng(3))).shape == (0,)


# --------------------------------------------------------------------------------------------------
# the broken catalogue says which bugs a replay can see
# --------------------------------------------------------------------------------------------------

SENSITIVITY_BUGS = {
    "missing_clipping", "nan_through_clipping", "data_dependent_scale", "means_data_dependent_scale",
    "geometric_ignores_sensitivity",
    "laplace_mst_l1_scale_for_linf", "pamst_data_dependent_sensitivity",
}


def _broken_classes() -> list[tuple[str, type]]:
    out = []
    for info in pkgutil.iter_modules(algorithms.broken.__path__):
        module = importlib.import_module(f"algorithms.broken.{info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__:
                out.append((info.name, cls))
    return out


def test_every_broken_class_has_a_bug_kind():
    classes = _broken_classes()
    assert len(classes) >= len(algorithms.broken.__all__)
    for module, cls in classes:
        assert getattr(cls, "BUG_KIND", None) in {"sensitivity", "calibration", "other"}, (module, cls)
        assert "Replay:" in inspect.getmodule(cls).__doc__, module
    assert {m for m, cls in classes if cls.BUG_KIND == "sensitivity"} == SENSITIVITY_BUGS


def test_instrumented_broken_classes():
    """Every broken class whose mechanism draws noise has a release, except the three documented ones."""
    without = {cls.__name__ for _, cls in _broken_classes() if not callable(getattr(cls, "release", None))}
    assert without == {"NoNoise", "RandomizedResponseBinaryFormula", "TruncatedGeometricByRejection"}
