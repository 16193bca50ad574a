"""Ready-made library targets (dpverify.libraries.*_targets): diffprivlib, OpenDP and python-dp releases audited
directly, one release per call.  Each library's tests are skipped when it is not installed.

Error level: every audit runs at alpha = 0.05 with a fixed seed, so each verdict is deterministic.  A "pass" of a
correctly calibrated release would turn into a violation for at most 5 % of seeds; the violations asserted here
are large (an impossible event, or a true ε twice the claim) and hold for any seed at these budgets."""

from __future__ import annotations

import multiprocessing

import numpy as np
import pytest

import dpverify


def _fork_draws(mech, x, n=20):
    """Outputs of ``mech`` in two processes forked after this one used it (they must not repeat each other)."""
    mech(x, 3, np.random.default_rng(0))
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    children = [ctx.Process(target=_child, args=(mech, x, n, queue)) for _ in range(2)]
    for c in children:
        c.start()
    out = [queue.get(timeout=60), queue.get(timeout=60)]
    for c in children:
        c.join(timeout=60)
    return out


def _child(mech, x, n, queue):
    queue.put(mech(x, n, np.random.default_rng(0)))


# ---- diffprivlib ------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def dpl():
    return pytest.importorskip("diffprivlib", reason="diffprivlib is not installed (pip install 'dpverify[diffprivlib]')")


def test_diffprivlib_laplace_passes_at_its_epsilon_and_fails_at_half(dpl):
    from dpverify.libraries.diffprivlib_targets import DiffprivlibMechanism

    mech = DiffprivlibMechanism("Laplace", epsilon=1.0, sensitivity=1.0)
    budget = dict(samples=100_000, search_samples=20_000, batch_size=25_000, seed=1, workers=2)
    ok = dpverify.audit(mech, [(0.0, 1.0)], epsilon=1.0, **budget)
    assert not ok.violation and ok.reproducible and ok.library is not None and ok.library.calls > 0
    bad = dpverify.audit(mech, [(0.0, 1.0)], epsilon=0.5, **budget)
    assert bad.violation and bad.epsilon_lower_bound > 0.8
    assert mech.neighbour_model == "|x - x'| <= sensitivity = 1.0"


def test_diffprivlib_seeding_is_reproducible(dpl):
    from dpverify.libraries.diffprivlib_targets import DiffprivlibMechanism, DiffprivlibTool

    for mech, x in ((DiffprivlibMechanism("Geometric", epsilon=1.0, sensitivity=1), 3),
                    (DiffprivlibTool("mean", epsilon=1.0, bounds=(0, 1)), np.linspace(0, 1, 10))):
        a, b = (mech(x, 50, np.random.default_rng(4)) for _ in range(2))
        assert np.array_equal(a, b) and not np.array_equal(a, mech(x, 50, np.random.default_rng(5)))


def test_diffprivlib_mean_without_bounds_is_a_violation(dpl):
    """bounds=None: diffprivlib takes the bounds from the data -- the range of the output leaks the maximum."""
    from dpverify.libraries.diffprivlib_targets import DiffprivlibTool

    mean = DiffprivlibTool("mean", epsilon=1.0)
    x0, x1 = np.r_[np.zeros(9), 1.0], np.r_[np.zeros(9), 100.0]         # replace-one neighbours, n public
    r = dpverify.audit(mean, [(x0, x1)], epsilon=1.0, samples=10_000, search_samples=2_000, batch_size=2_500,
                       seed=0, workers=2)
    assert r.violation and r.epsilon_lower_bound > 3            # x0 outputs lie in [0, 1], x1 outputs in [0, 100]
    assert mean.neighbour_model == "replace-one (n public)"
    assert any("bounds=None" in n for n in r.notes)                    # recorded once, not printed per call
    assert any("PrivacyLeakWarning" in w for w in mean.library_warnings)


def test_diffprivlib_sum_audited_under_add_remove_is_a_violation(dpl):
    """tools.sum is calibrated for replace-one (sensitivity upper - lower, output truncated to [lower n, upper n]);
    removing a record from a dataset with bounds (5, 10) moves the truncation range: an impossible event."""
    from dpverify.libraries.diffprivlib_targets import DiffprivlibTool

    total = DiffprivlibTool("sum", epsilon=1.0, bounds=(5.0, 10.0))
    r = dpverify.audit(total, [(np.full(10, 5.0), np.full(9, 5.0))], epsilon=1.0, samples=10_000,
                       search_samples=2_000, batch_size=2_500, seed=0, workers=2)
    assert r.violation and total.neighbour_model == "replace-one (n public)"


def test_diffprivlib_histogram_releases_the_counts(dpl):
    from dpverify.libraries.diffprivlib_targets import DiffprivlibTool

    hist = DiffprivlibTool("histogram", epsilon=1.0, bounds=(0.0, 1.0), bins=4)
    out = hist(np.linspace(0, 1, 12), 5, np.random.default_rng(0))
    assert out.shape == (5, 4) and out.dtype.kind == "i" and hist.neighbour_model == "add/remove-one"


def test_diffprivlib_bad_names_are_refused(dpl):
    from dpverify.errors import InputError
    from dpverify.libraries.diffprivlib_targets import DiffprivlibMechanism, DiffprivlibTool

    with pytest.raises(InputError, match="no mechanism 'Laplass'"):
        DiffprivlibMechanism("Laplass", epsilon=1.0, sensitivity=1.0)
    with pytest.raises(InputError, match="is invalid"):
        DiffprivlibMechanism("Laplace", epsilon=-1.0, sensitivity=1.0)
    with pytest.raises(InputError, match="supports the tools"):
        DiffprivlibTool("mode", epsilon=1.0)


# ---- OpenDP ----------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def opendp():
    return pytest.importorskip("opendp", reason="opendp is not installed (pip install 'dpverify[opendp]')")


LAPLACE = "dpverify.libraries.opendp_targets:laplace"


def test_opendp_laplace_claim_is_its_map_and_passes(opendp):
    from dpverify.libraries.opendp_targets import OpenDPMeasurement, laplace
    from dpverify.results import PrivacyClaim

    mech = OpenDPMeasurement(LAPLACE, scale=1.0)
    assert mech.claim() == PrivacyClaim(laplace(1.0).map(1.0)) == PrivacyClaim(1.0)
    assert mech.claim(d_in=2.0).epsilon == 2.0 and mech.reproducible is False
    # OpenDP draws its own noise (no seed reaches it): a tight claim is a random pass, so the audit runs at
    # alpha = 1e-3, the chance that this test fails on a correct 1-DP Laplace (at 0.05 it would fail one run in 20)
    r = dpverify.audit(mech, [(0.0, 1.0)], epsilon=mech.claim().epsilon, samples=20_000, search_samples=5_000,
                       batch_size=5_000, seed=2, workers=2, alpha=1e-3)
    assert not r.violation and r.reproducible is False and r.library.calls == 50_000


def test_opendp_gaussian_claim_is_zcdp(opendp):
    profiles = pytest.importorskip("dpverify.profiles", reason="dpverify.profiles is not written yet")
    from dpverify.libraries.opendp_targets import OpenDPMeasurement

    claim = OpenDPMeasurement("dpverify.libraries.opendp_targets:gaussian", scale=1.0).claim()
    assert isinstance(claim, profiles.ZCDPClaim) and claim.rho == pytest.approx(0.5)


def gaussian_profile(scale):
    """A zCDP Gaussian turned into approximate DP: a SmoothedMaxDivergence (privacy profile) measurement."""
    import opendp.prelude as dp

    from dpverify.libraries.opendp_targets import gaussian

    return dp.c.make_zCDP_to_approxDP(gaussian(scale))


def test_opendp_profile_claim_wraps_the_measurements_profile(opendp):
    pytest.importorskip("dpverify.profiles", reason="dpverify.profiles is not written yet")
    from dpverify.libraries.opendp_targets import OpenDPMeasurement

    target = OpenDPMeasurement(f"{__name__}:gaussian_profile", scale=1.0)
    claim = target.claim()
    profile = gaussian_profile(1.0).map(1.0)
    assert claim.form == "opendp-profile" and claim.epsilon(1e-3) == pytest.approx(profile.epsilon(1e-3))
    assert claim.delta(1.0) == pytest.approx(profile.delta(1.0))
    assert [p.delta for p in claim.points((0.1, 0.01))] == [0.1, 0.01]


def test_opendp_vector_factories_state_their_neighbour_model(opendp):
    from dpverify.libraries.opendp_targets import OpenDPMeasurement

    unsized = OpenDPMeasurement("dpverify.libraries.opendp_targets:clamped_sum", bounds=(0.0, 1.0), scale=1.0)
    sized = OpenDPMeasurement("dpverify.libraries.opendp_targets:clamped_sum", d_in=2, bounds=(0.0, 1.0), scale=1.0,
                              size=5)
    count = OpenDPMeasurement("dpverify.libraries.opendp_targets:count", scale=1.0)
    assert unsized.neighbour_model == "add/remove-one" and count.neighbour_model == "add/remove-one"
    assert sized.neighbour_model.startswith("replace-one (n = 5 public")
    assert unsized.claim().epsilon == pytest.approx(1.0, rel=1e-6)     # OpenDP rounds its float map up
    assert sized.claim().epsilon == pytest.approx(1.0, rel=1e-6)
    assert sized(np.zeros(5), 4, None).shape == (4,)
    assert count(np.zeros(5), 4, None).dtype.kind == "i"


def test_opendp_forked_workers_draw_different_noise(opendp):
    from dpverify.libraries.opendp_targets import OpenDPMeasurement

    a, b = _fork_draws(OpenDPMeasurement(LAPLACE, scale=1.0), 0.0)
    assert not np.array_equal(a, b)


# ---- python-dp (Google's DP library) ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def pydp():
    return pytest.importorskip("pydp", reason="python-dp is not installed (pip install 'dpverify[pydp]')")


def test_pydp_bounded_sum_passes_at_its_epsilon_under_add_remove(pydp):
    from dpverify.libraries.pydp_targets import NEIGHBOUR_MODEL, PyDPAggregation

    total = PyDPAggregation("BoundedSum", epsilon=1.0, lower_bound=0.0, upper_bound=1.0)
    # python-dp draws its own noise (no seed reaches it) and the claim is tight (bounds 0.94-0.97 at alpha = 0.05
    # over 12 runs, one CI run above 1): the audit runs at alpha = 1e-3, the chance that this test fails on a correct
    # 1-DP sum
    r = dpverify.audit(total, [(np.ones(10), np.ones(9))], epsilon=1.0, samples=50_000, search_samples=10_000,
                       batch_size=10_000, seed=0, workers=2, alpha=1e-3)
    assert not r.violation and r.reproducible is False and total.neighbour_model == NEIGHBOUR_MODEL


def test_pydp_bounded_sum_under_replace_one_is_a_violation(pydp):
    """Sensitivity max(|lower|, |upper|) = 1 covers adding or removing a record; replacing -1 by 1 moves the sum
    by 2: true ε = 2 against the claimed 1."""
    from dpverify.libraries.pydp_targets import PyDPAggregation

    total = PyDPAggregation("BoundedSum", epsilon=1.0, lower_bound=-1.0, upper_bound=1.0)
    x0, x1 = -np.ones(10), np.r_[-np.ones(9), 1.0]
    r = dpverify.audit(total, [(x0, x1)], epsilon=1.0, samples=50_000, search_samples=10_000, batch_size=10_000,
                       seed=0, workers=2)
    assert r.violation and r.epsilon_lower_bound > 1.5


def test_pydp_forked_workers_draw_different_noise(pydp):
    """Google's SecureURBG buffer is inherited through fork; the target drains it in every worker."""
    from dpverify.libraries.pydp_targets import PyDPAggregation

    a, b = _fork_draws(PyDPAggregation("BoundedMean", epsilon=1.0, lower_bound=0.0, upper_bound=1.0), [0.5] * 10)
    assert not np.array_equal(a, b)


def test_pydp_count_takes_no_bounds(pydp):
    from dpverify.errors import InputError
    from dpverify.libraries.pydp_targets import PyDPAggregation

    out = PyDPAggregation("Count", epsilon=1.0)(np.zeros(7), 5, None)
    assert out.shape == (5,) and out.dtype.kind == "i"
    with pytest.raises(InputError, match="takes no bounds"):
        PyDPAggregation("Count", epsilon=1.0, lower_bound=0.0)
