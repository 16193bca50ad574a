"""The black-box audit engine on mechanisms whose true ε is known in closed form.

Error levels: every audit here runs at a fixed seed, so each assertion is deterministic.  The
statements they check hold for a fresh seed with probability at least 1 - alpha (bounds below the
true ε) or with overwhelming probability (violations at least 2x the claim, at these budgets); the
fixed seeds were not chosen by retrying.
"""

import functools
import math
import pickle

import numpy as np
import pytest
from scipy import stats

import audit_mechs as m
import dpverify
from dpverify import InputError, MechanismError
from dpverify.neighbours import LInfNeighbours, Pair

FAST = dict(samples=50_000, search_samples=20_000, workers=1)


def test_correct_laplace_passes_and_bound_is_below_truth():
    r = dpverify.audit(m.laplace, [(0.0, 1.0)], epsilon=0.1, samples=400_000, seed=3, workers=1)
    assert not r.violation
    assert 0.08 < r.epsilon_lower_bound <= 0.1
    assert r.output_kind == "scalar"
    assert "not a proof of privacy" in r.summary()


def test_half_noise_is_a_violation():
    half = lambda x, n, rng: m.laplace(x, n, rng, epsilon=0.2)  # noqa: E731  true ε = 0.2
    r = dpverify.audit(half, [(0.0, 1.0)], epsilon=0.1, samples=400_000, seed=4, workers=1)
    assert r.violation
    assert 0.1 < r.epsilon_lower_bound <= 0.2
    assert r.witness is not None and r.witness.pair.label == "pair[0]"
    assert "VIOLATION" in r.summary()


def test_discrete_outputs_and_outcome_events():
    ok = dpverify.audit(m.randomized_response, [(0, 1)], epsilon=1.0, seed=5, **FAST)
    assert not ok.violation and ok.output_kind == "discrete"
    assert 0.8 < ok.epsilon_lower_bound <= 1.0
    bad = dpverify.audit(m.rr_wrong_formula, [(0, 1)], epsilon=0.5, seed=5, **FAST)
    assert bad.violation
    assert 1.0 < bad.epsilon_lower_bound <= 0.5 + math.log(3)
    assert "out ∈" in bad.witness.event


def test_impossible_event_detected_with_witness():
    r = dpverify.audit(m.shifted_support, [(0.0, 1.0)], epsilon=1.0, seed=6, **FAST)
    assert r.violation and r.witness.test.impossible
    # the event lies below 1: impossible for x = 1, so the numerator is x0 = 0
    assert r.witness.numerator_input == 0.0 and r.witness.test.count_den == 0
    r2 = dpverify.audit(m.identity, [(0.0, 1.0)], epsilon=5.0, seed=6, **FAST)
    assert r2.violation and r2.witness.test.impossible
    assert r2.epsilon_lower_bound > 5.0


def test_indistinguishable_outputs_give_zero_bound():
    r = dpverify.audit(m.constant, [(0, 1)], epsilon=0.1, seed=1, **FAST)
    assert not r.violation and r.epsilon_lower_bound == 0.0 and r.witness is None
    assert any("no event" in note or "no tested event" in note for note in r.notes)


def test_point_masses_in_continuous_outputs():
    # clipping Laplace(2) to [-1, 2] is post-processing: still 0.5-DP, with mass at -1 and 2
    r = dpverify.audit(m.clipped_laplace, [(0.0, 1.0)], epsilon=0.5, samples=200_000, seed=7, workers=1)
    assert not r.violation
    assert 0.4 < r.epsilon_lower_bound <= 0.5


def test_vector_outputs_statistics_and_learned_event():
    x = np.zeros(5)
    pairs = [p for p in LInfNeighbours(1.0).pairs(x) if p.label == "all-up"]
    r = dpverify.audit(m.vector_shift, pairs, epsilon=1.0, seed=8, **FAST)  # true ε = 2.5
    assert r.violation and r.output_kind == "vector"
    assert 1.0 < r.epsilon_lower_bound <= 2.5


def test_hockey_stick_delta():
    # N(0,1) vs N(1,1): exact δ(ε=1) = Φ(-0.5) - e Φ(-1.5) ≈ 0.127
    true_delta = stats.norm.cdf(-0.5) - math.e * stats.norm.cdf(-1.5)
    assert 0.12 < true_delta < 0.13
    bad = dpverify.audit(m.gaussian, [(0.0, 1.0)], epsilon=1.0, delta=0.05, seed=9, **FAST)
    assert bad.violation
    good = dpverify.audit(m.gaussian, [(0.0, 1.0)], epsilon=1.0, delta=true_delta, seed=9, **FAST)
    assert not good.violation


@pytest.mark.parametrize("search", [30_000, 120_000])   # 120 000: the learned score fits on a random subsample
def test_same_seed_same_result_whatever_the_workers(search: int):
    """Pairs searched side by side on the pool (2 workers) or one by one here: the same report."""
    args = dict(samples=60_000, search_samples=search, batch_size=10_000, seed=11)
    pairs = LInfNeighbours(1.0).pairs(np.zeros(3))
    one = dpverify.audit(m.vector_shift, pairs, epsilon=1.0, workers=1, **args).to_dict()
    two = dpverify.audit(m.vector_shift, pairs, epsilon=1.0, workers=2, **args).to_dict()
    assert two["workers"] == 2
    for d in (one, two):
        d.pop("seconds"), d.pop("workers")
    assert one == two


def test_seed_controls_the_result():
    a = dpverify.audit(m.laplace, [(0.0, 1.0)], epsilon=0.1, seed=1, **FAST)
    b = dpverify.audit(m.laplace, [(0.0, 1.0)], epsilon=0.1, seed=1, **FAST)
    c = dpverify.audit(m.laplace, [(0.0, 1.0)], epsilon=0.1, seed=2, **FAST)
    assert a.epsilon_lower_bound == b.epsilon_lower_bound != c.epsilon_lower_bound
    fresh = dpverify.audit(m.laplace, [(0.0, 1.0)], epsilon=0.1, seed=None, **FAST)
    again = dpverify.audit(m.laplace, [(0.0, 1.0)], epsilon=0.1, seed=fresh.seed, **FAST)
    assert fresh.epsilon_lower_bound == again.epsilon_lower_bound


def test_unpicklable_mechanism_falls_back_to_one_process():
    mech = lambda x, n, rng: x + rng.laplace(0, 10.0, size=n)  # noqa: E731
    r = dpverify.audit(mech, [(0.0, 1.0)], epsilon=0.1, samples=20_000, batch_size=5_000, workers=2, seed=0)
    assert r.workers == 1 and any("pickled" in note for note in r.notes)


def test_nan_outputs_error_by_default_and_outcome_policy():
    with pytest.raises(MechanismError, match="nan_policy='outcome'"):
        dpverify.audit(m.nan_outputs, [(0, 1)], epsilon=1.0, seed=0, **FAST)
    r = dpverify.audit(m.nan_release, [(0.5, math.nan)], epsilon=1.0, nan_policy="outcome", seed=0, **FAST)
    assert r.violation and r.witness.test.impossible


def test_result_serialises():
    r = dpverify.audit(m.identity, [Pair(0.0, 1.0, "p")], epsilon=1.0, seed=0, **FAST)
    d = r.to_dict()
    assert d["verdict"] == "violation" and d["witness"]["pair_label"] == "p"
    pickle.loads(pickle.dumps(r))


# ------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(epsilon=0.0), "epsilon must lie in"),
        (dict(epsilon=-1.0), "epsilon must lie in"),
        (dict(epsilon=math.nan), "epsilon must lie in"),
        (dict(epsilon=math.inf), "epsilon must lie in"),
        (dict(epsilon="a lot"), "epsilon must be a number"),
        (dict(delta=1.0), "delta must lie in"),
        (dict(delta=-0.1), "delta must lie in"),
        (dict(alpha=0.0), "alpha must lie in"),
        (dict(alpha=1.0), "alpha must lie in"),
        (dict(samples=0), "samples must be an integer >= 1"),
        (dict(samples=2.5), "samples must be an integer"),
        (dict(search_samples=1), "search_samples must be at least 2"),
        (dict(nan_policy="ignore"), "nan_policy must be one of"),
        (dict(seed=-3), "seed must be a non-negative integer"),
        (dict(finalists=0), "finalists must be an integer >= 1"),
    ],
)
def test_bad_parameters(kwargs, match):
    args = dict(mechanism=m.laplace, pairs=[(0.0, 1.0)], epsilon=0.1, samples=100)
    args.update(kwargs)
    with pytest.raises(InputError, match=match):
        dpverify.audit(**args)


def test_empty_pair_list():
    with pytest.raises(InputError, match="empty"):
        dpverify.audit(m.laplace, [], epsilon=0.1, samples=100)


def test_not_callable():
    with pytest.raises(InputError, match="callable"):
        dpverify.audit("laplace", [(0.0, 1.0)], epsilon=0.1, samples=100)


@pytest.mark.parametrize(
    "mech, match",
    [
        (m.wrong_rows, "returned 99 rows for n=100"),
        (m.shape_depends_on_input, "same shape and dtype"),
        (m.raises, "raised ZeroDivisionError on input x0 of pair 0"),
        (m.strings, "outputs must be numeric"),
    ],
)
def test_contract_violations(mech, match):
    with pytest.raises(MechanismError, match=match):
        dpverify.audit(mech, [(0, 1)], epsilon=0.1, samples=100, workers=1)


def shape_of_pair(x, n, rng):
    """Outputs of one column for inputs below 5, two from 5 on: pair 0 and pair 1 disagree."""
    return np.zeros((n, 1 if x < 5 else 2))


@pytest.mark.parametrize("workers", [1, 2])
def test_pairs_with_different_output_shapes_are_rejected(workers):
    """Pairs searched side by side (workers = 2: pair 0 here, pair 1 on a worker) are compared once all are back:
    the same error as when they run one after the other."""
    with pytest.raises(MechanismError, match=r"pair 1 .*same shape and dtype"):
        dpverify.audit(shape_of_pair, [(0, 1), (5, 6)], epsilon=0.1, samples=2000, workers=workers)


def test_contract_violation_in_worker_process_keeps_message():
    with pytest.raises(MechanismError, match="raised ZeroDivisionError"):
        dpverify.audit(m.raises, [(0, 1)], epsilon=0.1, samples=100, batch_size=50, workers=2)


def test_pool_runs_small_calls_here_and_starts_for_large_ones():
    """Where a task runs is a matter of speed only: small calls stay in this process (no fork); a large first call
    times its first task here and starts the workers only when the rest would take longer than starting them; every
    way gives what running every task here gives."""
    from dpverify.execution.sampling import INLINE_BELOW, INLINE_SECONDS, SEARCH_PHASE, Task, WorkerPool, run_task

    def tasks(n_total, mech=m.laplace):
        per = n_total // 4
        return [Task(mech, 0.0, per, 5, SEARCH_PHASE, 0, 0, b, "p", "raise") for b in range(4)]

    small, large = tasks(INLINE_BELOW // 2), tasks(4 * INLINE_BELOW)
    slow = tasks(4 * INLINE_BELOW, functools.partial(m.slow_laplace, seconds=INLINE_SECONDS))
    with WorkerPool(2) as pool:
        got_small = pool.run(small)
        assert not pool.started and pool.used == 1
        pool._rates.clear()                 # a first call: its first task, timed here, decides
        got_large = pool.run(large)         # vectorised: the rest is faster here than starting the workers
        assert not pool.started and pool.used == 1
        # another mechanism: speeds are learnt per task function and mechanism, so the fast one's speed does not
        # decide for it: its first task is timed here, and 3 more tasks of INLINE_SECONDS each start the workers
        got_slow = pool.run(slow)
        assert pool.started and pool.used == 2
    for got, ts in ((got_small, small), (got_large, large), (got_slow, slow)):
        for (a, _), (b, _) in zip(got, [run_task(t) for t in ts]):
            np.testing.assert_array_equal(a, b)


def test_pool_start_forks_the_workers_before_the_first_call():
    """``WorkerPool.start`` starts the processes at once (e.g. before timed work, for a pool shared by several
    audits), does nothing with one worker, and the results are those of a pool started on demand."""
    from dpverify.execution.sampling import WorkerPool

    with WorkerPool(1) as one:
        one.start()
        assert not one.started
    pairs = [(0.0, 1.0), (0.0, 2.0)]
    kw = dict(epsilon=1.0, samples=20_000, search_samples=4_000, seed=3)
    with WorkerPool(2) as pool:
        pool.start()
        assert pool.started
        shared = [dpverify.audit(mech, pairs, pool=pool, **kw) for mech in (m.laplace, m.identity)]
    for got, mech in zip(shared, (m.laplace, m.identity)):
        own = dpverify.audit(mech, pairs, workers=2, **kw)
        assert got.epsilon_lower_bound == own.epsilon_lower_bound and got.violation == own.violation


def _pid_and_square(k: int) -> tuple[int, int]:
    import os
    return os.getpid(), k * k


def _slow_pid_and_square(k: int) -> tuple[int, int]:
    import time
    time.sleep(0.1)
    return _pid_and_square(k)


def _slow_or_raise(k: int) -> int:
    import time
    time.sleep(0.1)
    if k in (2, 11):
        raise ValueError(f"task {k} failed")
    return k


def test_run_alongside_raises_the_first_failing_task_in_task_order():
    """Of several failing tasks, the first in task order raises, as in one process, although this process runs the
    last task (taken back from the workers' queue) before a worker reaches task 2."""
    from dpverify.execution.sampling import WorkerPool

    with WorkerPool(2) as pool:
        with pytest.raises(ValueError, match="task 2 failed"):
            pool.run_alongside(list(range(12)), fn=_slow_or_raise)
        assert pool.run_alongside([0, 1, 3], fn=_slow_or_raise) == [0, 1, 3]     # the pool still works


def test_run_alongside_runs_the_first_task_here_and_the_rest_on_the_workers():
    """``run_alongside``: results in task order, task 0 in this process, the others in worker processes, except
    those no worker has started when this process is done with task 0, which it takes back (12 tasks of 0.1 s on
    2 workers: the last is still queued after 0.1 s); with one worker everything runs here."""
    import os
    from dpverify.execution.sampling import WorkerPool

    with WorkerPool(2) as pool:
        out = pool.run_alongside([0, 1, 2, 3], fn=_pid_and_square)
        assert [sq for _, sq in out] == [0, 1, 4, 9]
        assert out[0][0] == os.getpid()
        assert any(pid != os.getpid() for pid, _ in out[1:])
        assert pool.started
        out = pool.run_alongside(list(range(12)), fn=_slow_pid_and_square)
        assert [sq for _, sq in out] == [k * k for k in range(12)]
        here = [k for k, (pid, _) in enumerate(out) if pid == os.getpid()]
        assert here[0] == 0 and 11 in here and len(here) < 12
    with WorkerPool(1) as pool:
        out = pool.run_alongside([0, 1, 2], fn=_pid_and_square)
        assert [sq for _, sq in out] == [0, 1, 4] and {pid for pid, _ in out} == {os.getpid()}
        assert not pool.started
