"""The check_mechanism battery (dpverify.testing.battery): every check runs, applies only where the mechanism has
the capability, and fails on the contract breaches and privacy bugs it is for.

Statistical checks at fixed seeds: Laplace at claim ε = 0.5 (no violation expected; the audit's false-alarm rate is
≤ α = 0.05, and this seed is fixed) and LaplaceHalfNoise (true ε 1.0 against 0.5 at 50 000 samples: detected with
probability far above 1 − 10⁻⁶).
"""

from __future__ import annotations

import numpy as np
import pytest

from algorithms.broken.laplace_half_noise import LaplaceHalfNoise
from algorithms.classic.laplace import Laplace
from algorithms.classic.randomized_response import RandomizedResponse
from dpverify import check_mechanism
from dpverify.errors import InputError
from dpverify.interfaces import ExactLaw, Mechanism, NoiseRelease, capabilities
from dpverify.testing import CHECKS, parametrize_with_checks, run_one_check

PAIRS = [(0.0, 1.0)]


def global_state(x, n, rng):  # type: ignore[no-untyped-def]
    return x + np.random.laplace(0.0, 1.0, size=n)


def wrong_length(x, n, rng):  # type: ignore[no-untyped-def]
    return x + rng.laplace(0.0, 1.0, size=n + 1)


def test_capabilities_and_protocols() -> None:
    lap, rr = Laplace(epsilon=0.5), RandomizedResponse(epsilon=1.0, k=2)
    assert capabilities(lap) >= {"mechanism", "replay"} and "exact" not in capabilities(lap)
    assert "exact" in capabilities(rr)
    assert isinstance(lap, Mechanism) and isinstance(lap, NoiseRelease) and not isinstance(lap, ExactLaw)


def test_correct_laplace_passes_every_check_that_applies() -> None:
    r = check_mechanism(Laplace(epsilon=0.5), PAIRS, epsilon=0.5, samples=50_000, seed=0)
    assert [o.name for o in r.outcomes] == list(CHECKS)
    assert {o.name: o.status for o in r.outcomes} == {
        "shape": "passed", "empty": "passed", "rng": "passed", "pickle": "passed", "statistical": "passed",
        "exact": "skipped", "replay": "passed", "ledger": "skipped"}
    assert r.ok and "no violation detected" in r["statistical"].detail
    r.raise_for_failures()
    assert "capabilities" in r.to_dict() and "statistical" in r.summary()


def test_exact_law_is_checked_when_present() -> None:
    r = check_mechanism(RandomizedResponse(epsilon=1.0, k=2), [(0, 1)], epsilon=1.0, samples=20_000, seed=0,
                        checks=["exact"])
    assert r["exact"].status == "passed" and "exact ε 1" in r["exact"].detail
    bad = check_mechanism(RandomizedResponse(epsilon=1.0, k=2), [(0, 1)], epsilon=0.5, checks=["exact"])
    assert bad["exact"].status == "failed" and not bad.ok


def test_half_noise_fails_the_audit_but_not_the_replay() -> None:
    """A scale bug: the statistical audit sees it, the replay (which checks sensitivities, not scales) does not."""
    r = check_mechanism(LaplaceHalfNoise(epsilon=0.5), PAIRS, epsilon=0.5, samples=50_000, seed=0,
                        checks=["statistical", "replay"])
    assert r["statistical"].status == "failed" and r["replay"].status == "passed"
    with pytest.raises(AssertionError, match="statistical"):
        r.raise_for_failures()


def test_contract_breaches_fail_their_checks() -> None:
    assert check_mechanism(global_state, PAIRS, epsilon=1.0, checks=["rng"])["rng"].status == "failed"
    shape = check_mechanism(wrong_length, PAIRS, epsilon=1.0, checks=["shape"])["shape"]
    assert shape.status == "failed" and "first axis 1" in shape.detail
    pick = check_mechanism(lambda x, n, rng: x + rng.laplace(size=n), PAIRS, epsilon=1.0, checks=["pickle"])
    assert pick["pickle"].status == "failed" and "module level" in pick["pickle"].detail


def test_bad_arguments() -> None:
    with pytest.raises(InputError, match="unknown checks"):
        check_mechanism(Laplace(epsilon=0.5), PAIRS, epsilon=0.5, checks=["speed"])
    with pytest.raises(InputError, match="at least one"):
        check_mechanism(Laplace(epsilon=0.5), [], epsilon=0.5)
    with pytest.raises(InputError, match="not callable"):
        check_mechanism(object(), PAIRS, epsilon=0.5)


CASES = [
    ("laplace", Laplace(epsilon=0.5), PAIRS, {"epsilon": 0.5, "samples": 20_000, "seed": 1}),
    ("randomized-response", RandomizedResponse(epsilon=1.0, k=2), [(0, 1)],
     {"epsilon": 1.0, "samples": 20_000, "seed": 1}),
]


@parametrize_with_checks(CASES)
def test_parametrized_battery(case, check):  # type: ignore[no-untyped-def]
    run_one_check(case, check)


def test_interfaces_doctest() -> None:
    import doctest

    import dpverify.interfaces

    assert doctest.testmod(dpverify.interfaces).failed == 0
