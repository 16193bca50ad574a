"""Validity checks of the sampling contract (dpverify.statistical.contract): a mechanism that ignores ``rng`` and a pair
of equal inputs get a clear error, never a verdict.  Deterministic checks: no error level to state."""

from __future__ import annotations

import numpy as np
import pytest

import dpverify
from dpverify.statistical.contract import check_batches_distinct, inputs_equal
from dpverify.errors import InputError, MechanismError


def global_state_laplace(x, n, rng):
    return x + np.random.laplace(0.0, 1.0, size=n)          # ignores rng: np.random's global state


def own_generator_laplace(x, n, rng):
    return x + np.random.default_rng(1234).laplace(0.0, 1.0, size=n)   # same samples for every seed


def one_draw_per_call(x, n, rng):
    return np.full(n, x + rng.laplace(0.0, 1.0))            # rows not independent


def good_laplace(x, n, rng):
    return x + rng.laplace(0.0, 1.0, size=n)


def constant(x, n, rng):
    return np.full(n, float(x))                              # deterministic: a law, not a contract breach


@pytest.mark.parametrize("mech, words", [
    (global_state_laplace, "same seed returned different outputs"),
    (own_generator_laplace, "same outputs on input x0 of pair 0 ('pair[0]') for different seeds"),
    (one_draw_per_call, "rows are not independent"),
])
def test_mechanism_that_ignores_rng_is_refused(mech, words):
    with pytest.raises(MechanismError) as err:
        dpverify.audit(mech, [(0.0, 1.0)], epsilon=1.0, samples=2000, seed=0, workers=1)
    assert words in str(err.value)


def test_refused_on_several_workers_too():
    with pytest.raises(MechanismError, match="does not draw its randomness from the rng"):
        dpverify.audit(global_state_laplace, [(0.0, 1.0)], epsilon=1.0, samples=300_000, seed=0, workers=2)


def test_good_and_deterministic_mechanisms_pass_the_contract():
    assert not dpverify.audit(good_laplace, [(0.0, 1.0)], epsilon=1.0, samples=2000, seed=0, workers=1).violation
    r = dpverify.audit(constant, [(0.0, 1.0)], epsilon=1.0, samples=2000, seed=0, workers=1)
    assert r.violation and r.witness.test.impossible


@pytest.mark.parametrize("pair", [
    (1.0, 1.0),
    (np.array([1.0, 2.0]), np.array([1.0, 2.0])),
    (np.array([1.0, np.nan]), np.array([1.0, np.nan])),
])
def test_pair_of_equal_inputs_is_refused(pair):
    with pytest.raises(InputError, match=r"pair 1 \('pair\[1\]'\) has two equal inputs"):
        dpverify.audit(good_laplace, [(0.0, 1.0), pair], epsilon=1.0, samples=1000, seed=0, workers=1)


def test_inputs_equal():
    assert inputs_equal(np.array([1, 2]), np.array([1.0, 2.0]))
    assert not inputs_equal(np.array([1, 2]), np.array([1, 2, 3]))
    assert not inputs_equal(np.array([1.0, 2.0]), np.array([1.0, 2.5]))
    assert inputs_equal("a", "a") and not inputs_equal("a", "b")


def test_identical_batches_are_refused_but_constant_ones_are_not():
    rng = np.random.default_rng(0)
    b = rng.laplace(size=(100, 2))
    check_batches_distinct([np.zeros((100, 2)), np.zeros((100, 2)), b], "x")
    with pytest.raises(MechanismError, match="batches 0 and 2"):
        check_batches_distinct([b, rng.laplace(size=(100, 2)), b.copy()], "x")


def test_batches_that_differ_only_between_the_hashed_rows_are_not_refused():
    """A batch's key hashes a few evenly spaced rows: two batches equal on those rows share a key, and the full
    comparison then tells them apart (a mostly-0 mechanism: its rare 1s fall between the sampled rows); a third batch
    equal to the first, after the impostor, is still refused."""
    a = np.zeros((10_000, 1))
    a[[5, 77]] = 1.0
    b = np.zeros((10_000, 1))
    b[[6, 78]] = 1.0
    check_batches_distinct([a, b], "x")
    with pytest.raises(MechanismError, match="batches 0 and 2"):
        check_batches_distinct([a, b, a.copy()], "x")
    # a varying batch whose first rows are all one value is not constant
    c = np.zeros((1000, 3))
    c[-1] = 2.0
    with pytest.raises(MechanismError, match="batches 0 and 1"):
        check_batches_distinct([c, c.copy()], "x")


def rare_one(x, n, rng):
    """0 with probability 0.997, else 1, drawn from ``rng``: a correct mechanism whose 256-row probe batches are often
    all 0 (0.997^256 = 0.46) and then identical for different seeds."""
    return (rng.random(n) < 0.003).astype(np.float64) + 0.0 * x


def test_low_entropy_mechanism_passes_whatever_the_seed():
    """The contract probe calls a mechanism with three seeds; two constant batches that happen to be equal are its
    law (a likely outcome), not a repeated draw, even when the third batch varies.  Over 60 root seeds the pattern
    (first two probe batches all 0, the third not) occurs about 0.46^2 * 0.54 * 60 = 7 times; none may be refused."""
    from dpverify.statistical.contract import check_rng_contract

    for entropy in range(60):
        check_rng_contract(rare_one, 0.0, entropy, "input x0 of pair 0")


def test_probe_returns_the_outputs_trailing_shape():
    """The contract probe says what the outputs look like (the audits import scikit-learn before their workers fork
    only for vector outputs); ``None`` when the mechanism fails on the probe (its first batch reports that)."""
    from dpverify.statistical.contract import check_rng_contract

    assert check_rng_contract(rare_one, 0.0, 0, "x0") == ()
    assert check_rng_contract(lambda x, n, rng: rng.laplace(size=(n, 3, 2)), 0.0, 0, "x0") == (3, 2)
    assert check_rng_contract(lambda x, n, rng: 1 / 0, 0.0, 0, "x0") is None


def test_scalar_audits_on_two_workers_never_import_scikit_learn():
    """scikit-learn (about half a second to import) is only needed by the search of vector outputs: a fresh process
    auditing a scalar mechanism on two workers, with dpverify.audit and the anytime audit, never imports it."""
    import subprocess
    import sys

    code = ("import sys, dpverify\n"
            "from algorithms.classic.laplace import Laplace\n"
            "pairs = [(0.0, 1.0), (1.0, 2.0), (0.0, 0.5)]\n"
            "dpverify.audit(Laplace(0.5), pairs, 0.5, samples=200_000, search_samples=100_000, seed=0, workers=2)\n"
            "dpverify.audit_anytime(Laplace(0.5), pairs, 0.5, samples=100_000, seed=0, workers=2)\n"
            "print('sklearn' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


# ------------------------------------------------------------------- calls that are not independent of each other
def in_place_laplace(x, n, rng):
    x += rng.laplace(0.0, 1.0, size=x.shape)                 # the caller's input drifts from call to call
    return x + rng.laplace(0.0, 1.0, size=(n,) + x.shape)


class Accountant:
    """Noise of scale 1 for the first ``calls`` calls, then of scale 0.1 (a budget accountant gone wrong)."""

    def __init__(self, calls: int) -> None:
        self.calls, self.left = 0, calls

    def __call__(self, x, n, rng):
        self.calls += 1
        return x + rng.laplace(0.0, 1.0 if self.calls <= self.left else 0.1, size=n)


class Memo:
    """Keeps a cache that does not change its outputs: not a breach."""

    def __init__(self) -> None:
        self.seen = {}

    def __call__(self, x, n, rng):
        self.seen[n] = self.seen.get(n, 0) + 1
        return x + rng.laplace(0.0, 1.0, size=n)


class Opaque:
    """An input compared by identity (no value equality): its copy never compares equal, so it is not checked."""

    def __init__(self, v: float) -> None:
        self.v = v


def test_mechanism_that_changes_its_input_in_place_is_refused():
    with pytest.raises(MechanismError, match="changed its input in place"):
        dpverify.audit(in_place_laplace, [(np.zeros(3), np.ones(3))], epsilon=1.0, samples=2000, seed=0, workers=1)


@pytest.mark.parametrize("calls, words", [
    (1, "same seed returned different outputs"),             # changes between the first two calls
    (3, "after three calls with other seeds"),               # changes within the probe
    (6, "after the audit's sampling"),                       # changes during the sampling done in this process
])
def test_mechanism_that_keeps_state_between_calls_is_refused(calls, words):
    with pytest.raises(MechanismError) as err:
        dpverify.audit(Accountant(calls), [(0.0, 1.0)], epsilon=1.0, samples=2000, search_samples=1000, seed=0,
                       workers=1)
    assert words in str(err.value)


def test_sequential_audit_checks_the_state_too():
    from dpverify.statistical.anytime import audit_anytime

    with pytest.raises(MechanismError, match="keeps state between calls"):
        audit_anytime(Accountant(6), [(0.0, 1.0)], epsilon=1.0, samples=4000, seed=0, workers=1)


def test_state_that_leaves_the_outputs_alone_and_inputs_without_equality_pass():
    assert not dpverify.audit(Memo(), [(0.0, 1.0)], epsilon=1.0, samples=2000, seed=0, workers=1).violation

    def by_value(x, n, rng):
        return x.v + rng.laplace(0.0, 1.0, size=n)

    r = dpverify.audit(by_value, [(Opaque(0.0), Opaque(1.0))], epsilon=1.0, samples=2000, seed=0, workers=1)
    assert not r.violation


def test_outputs_that_are_no_rows_of_numbers_get_an_error_that_says_what_to_return():
    def item_lists(x, n, rng):          # the items above a noisy threshold: lists of varying length
        return [[i for i, v in enumerate(x + rng.laplace(size=len(x))) if v > 0.5] for _ in range(n)]

    def labels(x, n, rng):
        return np.where(rng.random(n) < 0.5, "yes", "no")

    with pytest.raises(MechanismError, match="0/1 indicator vector"):
        dpverify.audit(item_lists, [(np.zeros(4), np.ones(4))], epsilon=1.0, samples=2000, seed=0, workers=1)
    with pytest.raises(MechanismError, match="integer codes, the same code for a value on every call"):
        dpverify.audit(labels, [(0.0, 1.0)], epsilon=1.0, samples=2000, seed=0, workers=1)


def test_inputs_equal_compares_dicts_and_lists_item_by_item_and_in_place_changes_to_them_are_refused():
    assert inputs_equal({"a": np.zeros(3), "b": [1.0, np.ones(2)]}, {"a": np.zeros(3), "b": [1.0, np.ones(2)]})
    assert not inputs_equal({"a": np.zeros(3)}, {"a": np.ones(3)})
    assert not inputs_equal({"a": np.zeros(3)}, {"b": np.zeros(3)})
    assert not inputs_equal([np.zeros(2), 1.0], (np.zeros(2), 1.0))

    def bump(x, n, rng):                 # a dict input whose array the mechanism changes in place
        x["a"] += 1.0
        return x["a"][0] + rng.laplace(size=n)

    with pytest.raises(MechanismError, match="changed its input in place"):
        dpverify.audit(bump, [({"a": np.zeros(3)}, {"a": np.ones(3)})], epsilon=1.0, samples=2000, seed=0, workers=1)
