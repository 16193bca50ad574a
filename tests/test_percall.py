"""The per-call adapter (dpverify.libraries.percall): a one-release-per-call function audited through the batched
contract -- seeded and reproducible on any number of workers, or seedless and said so -- with library timing.

Error level: the audits here run at alpha = 0.05 with fixed seeds, so each verdict is deterministic; a verdict on a
correctly calibrated release would fail with probability at most 5 % over seeds."""

from __future__ import annotations

import multiprocessing
import pickle

import numpy as np
import pytest

import dpverify
from dpverify.errors import InputError, MechanismError
from dpverify.execution import sampling
from dpverify.execution.sampling import SEARCH_PHASE, Task, run_batch
from dpverify.libraries import PerCall, per_call


def noisy_value(x, *, scale, random_state):
    """One Laplace release of ``x``, seeded through ``random_state`` (a RandomState, diffprivlib style)."""
    return x + random_state.laplace(0.0, scale)


def noisy_int_seed(x, *, scale, seed):
    return x + np.random.RandomState(seed).laplace(0.0, scale)


def noisy_generator(x, *, scale, rng):
    return x + rng.laplace(0.0, scale)


def noisy_global(x, *, scale):
    """Seedless: np.random's global state (forked workers would share it without the adapter's reseeding)."""
    return x + np.random.laplace(0.0, scale)


def histogram_like(x, *, random_state):
    return np.array([x, 1.0 - x]) + random_state.laplace(0.0, 1.0, size=2), np.array([0.0, 0.5, 1.0])


def not_a_number(x, *, random_state):
    return "a"


AUDIT = dict(samples=150_000, search_samples=20_000, batch_size=25_000, seed=7)


def _comparable(r):
    d = r.to_dict()
    for k in ("seconds", "workers", "library"):
        d.pop(k)
    return d


def test_seeded_release_gives_the_same_result_on_one_and_two_workers(monkeypatch):
    # the pool starts whatever the machine's speed: on a fast moment of a machine the 340,000 calls take less than
    # INLINE_SECONDS, and the pool would run them here (workers == 1), which this test is not about
    monkeypatch.setattr(sampling, "INLINE_SECONDS", 0.0)
    mech = PerCall(noisy_value, scale=1.0)
    r1 = dpverify.audit(mech, [(0.0, 1.0)], epsilon=1.0, workers=1, **AUDIT)
    r2 = dpverify.audit(mech, [(0.0, 1.0)], epsilon=1.0, workers=2, **AUDIT)
    assert r2.workers == 2                                  # the test phase ran on the worker processes
    assert r1.reproducible and r2.reproducible
    assert _comparable(r1) == _comparable(r2)
    assert not r1.violation
    # timing: every batch's calls are counted (the contract probe's are not), the share is a share
    for r in (r1, r2):
        lib = r.library
        assert lib is not None and lib.calls == 2 * (AUDIT["search_samples"] + AUDIT["samples"])
        assert 0 < lib.library_share <= 1 and lib.calls_per_second > 0
        assert 0 < lib.library_seconds <= lib.sampling_seconds
        assert "calls/s" in r.summary() and "of sampling time inside the library" in r.summary()
        assert r.to_dict()["library"]["calls"] == lib.calls


def test_seedless_release_passes_the_contract_and_says_it_is_not_reproducible():
    mech = PerCall(noisy_global, seed_arg=None, scale=1.0)
    assert mech.reproducible is False
    r = dpverify.audit(mech, [(0.0, 1.0)], epsilon=1.0, samples=20_000, seed=0, workers=1)
    assert not r.violation and r.reproducible is False
    assert any("draws its own randomness" in n for n in r.notes)
    assert "same seed does not reproduce" in r.summary() and r.to_dict()["reproducible"] is False


def test_seedless_release_is_caught_by_the_contract_without_the_declaration():
    """The same function called by a plain mechanism that ignores rng is refused: the declaration is what lets it
    through."""
    with pytest.raises(MechanismError, match="same seed returned different outputs"):
        dpverify.audit(_PlainGlobal(), [(0.0, 1.0)], epsilon=1.0, samples=2000, seed=0, workers=1)


class _PlainGlobal:
    def __call__(self, x, n, rng):
        return x + np.random.laplace(0.0, 1.0, size=n)


def _draw_in_child(mech, queue):
    queue.put(mech(0.0, 20, np.random.default_rng(0)))


def test_forked_workers_do_not_replay_the_inherited_global_state():
    mech = PerCall(noisy_global, seed_arg=None, scale=1.0)
    mech(0.0, 5, np.random.default_rng(0))                 # the auditing process uses np.random before forking
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    children = [ctx.Process(target=_draw_in_child, args=(mech, queue)) for _ in range(2)]
    for c in children:
        c.start()
    a, b = queue.get(timeout=30), queue.get(timeout=30)
    for c in children:
        c.join(timeout=30)
    assert not np.array_equal(a, b)


@pytest.mark.parametrize("release, seed_arg, seed_kind", [
    (noisy_value, "random_state", "randomstate"),
    (noisy_int_seed, "seed", "int"),
    (noisy_generator, "rng", "generator"),
])
def test_seed_kinds_are_reproducible_and_independent(release, seed_arg, seed_kind):
    mech = PerCall(release, seed_arg=seed_arg, seed_kind=seed_kind, scale=1.0)
    a = mech(0.0, 500, np.random.default_rng(1))
    b = mech(0.0, 500, np.random.default_rng(1))
    c = mech(0.0, 500, np.random.default_rng(2))
    assert a.shape == (500,) and np.array_equal(a, b) and not np.array_equal(a, c)
    assert len(np.unique(a)) == 500                          # every call a fresh draw
    assert abs(np.std(a) - np.sqrt(2)) < 0.2                 # Laplace(1): sd sqrt(2)


def test_tuple_outputs_need_output_and_arrays_stack():
    mech = PerCall(histogram_like)
    with pytest.raises(MechanismError, match=r"output=<index> \(output=0 for the counts\)"):
        mech(0.2, 3, np.random.default_rng(0))
    counts = PerCall(histogram_like, output=0)(0.2, 3, np.random.default_rng(0))
    assert counts.shape == (3, 2)
    picked = PerCall(histogram_like, output=lambda r: r[0].sum())(0.2, 3, np.random.default_rng(0))
    assert picked.shape == (3,)
    with pytest.raises(MechanismError, match="do not stack into a numeric array"):
        PerCall(not_a_number)(0.0, 3, np.random.default_rng(0))


def test_import_path_is_resolved_lazily_and_the_adapter_pickles():
    mech = PerCall(f"{__name__}:noisy_value", scale=2.0)
    clone = pickle.loads(pickle.dumps(mech))
    assert clone.function == f"{__name__}:noisy_value"
    np.testing.assert_array_equal(mech(1.0, 10, np.random.default_rng(3)), clone(1.0, 10, np.random.default_rng(3)))
    assert per_call(f"{__name__}:noisy_value", scale=2.0).params == {"scale": 2.0}


def test_pop_timing_counts_calls_and_resets():
    mech = PerCall(noisy_value, scale=1.0)
    mech(0.0, 30, np.random.default_rng(0))
    calls, seconds = mech.pop_timing()
    assert calls == 30 and seconds > 0
    assert mech.pop_timing() == (0, 0.0)
    out = run_batch(Task(mech, 0.0, 40, 5, SEARCH_PHASE, 0, 0, 0, "p", "raise"))
    assert out.timing.calls == 40 and 0 < out.timing.library_seconds <= out.timing.seconds


@pytest.mark.parametrize("kwargs, words", [
    (dict(seed_kind="os"), "seed_kind must be one of"),
    (dict(random_state=1), "do not pass it as a parameter"),
    (dict(seed_arg="not an identifier"), "seed_arg must be the name of the keyword"),
    (dict(output=1.5), "output must be an index"),
])
def test_bad_arguments_name_the_fix(kwargs, words):
    with pytest.raises(InputError, match=words):
        PerCall(noisy_value, **kwargs)


def test_bad_import_path_names_the_problem():
    with pytest.raises(InputError, match="has no attribute"):
        PerCall("numpy:no_such_function")
    with pytest.raises(InputError, match="module:attribute"):
        PerCall("no_colon_here")


def test_seed_arg_none_as_a_string_means_seedless():
    assert PerCall(noisy_global, seed_arg="none", scale=1.0).reproducible is False
