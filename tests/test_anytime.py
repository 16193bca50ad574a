"""audit_anytime: its stream plan, the bets and the monotone ε grid, early stopping on violations, the whole budget on
correct mechanisms, its false-alarm rate, independence from the number of workers, its result, and its use by
``dpverify run --sequential`` (tests/test_cli.py checks the report of that path)."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from scipy import stats

import dpverify
from algorithms.broken.laplace_half_noise import LaplaceHalfNoise
from algorithms.broken.no_noise import NoNoise
from algorithms.classic.laplace import Laplace
from algorithms.classic.randomized_response import RandomizedResponse
from dpverify.errors import InputError
from dpverify.results import Verdict
from dpverify.statistical import betting
from dpverify.statistical.anytime import AnytimeResult, audit_anytime, stream_plan
from dpverify.statistical.betting import bet_growth, wealth_grid
from dpverify.statistical.streams import joint_counts
from dpverify.statistical.events import IntervalEvent
from dpverify.statistical.features import Identity


def test_stream_plan_doubles_the_checkpoints_and_batches_end_on_them() -> None:
    checkpoints, batches = stream_plan(10_000, 256, 2.0, 256, 100_000)
    assert checkpoints == [256, 512, 1024, 2048, 4096, 8192]
    assert sum(batches) == 10_000
    ends = set(np.cumsum(batches).tolist())
    assert set(checkpoints) <= ends
    # a sixteenth of the stream so far once it has sixteen first batches, at most batch_size
    assert all(b <= max(256, a // 16) for a, b in zip(np.cumsum(batches), batches[1:]))
    assert max(stream_plan(10**8, 256, 2.0, 256, 100_000)[1]) == 100_000
    assert stream_plan(200, 200, 2.0, 256, 100_000) == ([], [200])


def test_bet_growth_is_the_growth_of_the_best_bet_within_the_cap() -> None:
    """budget-spent-twice's best event (p = 0.2666, q = 0.2187 at ε = 0.1): about mean² / (2 var) per output; no
    bet grows when p <= e^ε q; bets stay in [0, cap]."""
    c, cap = math.exp(0.1), betting.LAMBDA_CAP / math.exp(0.1)
    lam, g = bet_growth(0.2666, 0.2187, c, 0.0, cap)
    mean, var = 0.2666 - c * 0.2187, 0.2666 * 0.7334 + c ** 2 * 0.2187 * 0.7813
    assert float(g) == pytest.approx(mean ** 2 / (2 * var), rel=0.05)
    assert 0 < float(lam) <= cap
    lam, g = bet_growth(np.array([0.2, 0.9, 1.0]), np.array([0.2, 0.0, 0.0]), c, 0.0, cap)
    assert g[0] == 0 and lam[0] == 0 and np.all((lam >= 0) & (lam <= cap))
    assert lam[2] == pytest.approx(cap)                 # an impossible event: the largest bet
    # within the cap every factor stays positive at every ε' of the grid up to the tier's own eps_max
    grid, eps_max = wealth_grid(0.1)
    logs = betting.log_factors(np.float64(betting.LAMBDA_CAP / math.exp(eps_max)), np.exp(grid), 0.0)
    assert np.all(np.isfinite(logs)) and logs.min() >= math.log(1 - betting.LAMBDA_CAP) - 1e-12


def test_finalists_are_distinct_sets_of_outputs() -> None:
    """One set proposed under several descriptions (same pair, direction and scoring-half counts) is bet on once: the
    other finalists are the next events of other counts, of this pair or another."""
    from dpverify.statistical.anytime import _choose
    from dpverify.statistical.search import Candidate
    from dpverify.statistical.streams import Found

    f = Identity()
    same = [Candidate(IntervalEvent(f, 1.0, math.inf), 0, 1.0, 300, 100, "a"),
            Candidate(IntervalEvent(f, 1.0, 2.0e9), 0, 1.0, 300, 100, "b"),          # the same counts: the same set
            Candidate(IntervalEvent(f, 1.0, math.inf), 1, 1.0, 300, 100, "c"),        # other direction
            Candidate(IntervalEvent(f, 2.0, math.inf), 0, 1.0, 200, 60, "d")]
    other = [Candidate(IntervalEvent(f, 1.0, math.inf), 0, 1.0, 300, 100, "e")]       # same counts, other pair
    grid, _ = wealth_grid(0.1)
    bets = _choose([Found(same, "scalar", 1000), Found(other, "scalar", 1000)], 4, 0.1, 0.0, 10.0, grid)
    picked = [(b.pair_index, b.direction, b.prior) for b in bets]
    assert len(picked) == len(set(picked)) == 4
    assert set(picked) == {(0, 0, (300, 100, 1000)), (0, 1, (300, 100, 1000)), (0, 0, (200, 60, 1000)),
                           (1, 0, (300, 100, 1000))}
    first = [b for b in bets if (b.pair_index, b.direction, b.prior) == (0, 0, (300, 100, 1000))]
    assert first[0].event == same[0].event                 # the first proposed of the set's descriptions
    assert math.isclose(sum(math.exp(b.log_weight) for b in bets), 1.0)


def test_finalists_that_kept_growing_are_carried_to_the_next_checkpoint() -> None:
    """A finalist whose epoch confirmed it competes at the next checkpoint with the new search's candidates, with its
    counts so far (those that sized its bets plus its epoch's): chosen over weaker new ones, its evidence pooled in
    its new bets' prior; a finalist that saw no output of its epoch is not a candidate again."""
    from dpverify.statistical.anytime import _choose
    from dpverify.statistical.search import Candidate
    from dpverify.statistical.streams import Found

    f = Identity()
    grid, _ = wealth_grid(0.1)
    strong = IntervalEvent(f, 3.0, math.inf)
    [old] = _choose([Found([Candidate(strong, 1, 1.0, 70, 40, "a")], "scalar", 200)], 1, 0.1, 0.0, 10.0, grid)
    old.k_num, old.k_den, old.n = 900, 500, 2000                   # its epoch: 0.45 against 0.25
    weak = [Candidate(IntervalEvent(f, 0.0, 1.0), 0, 1.0, 400, 300, "b")]
    [kept] = _choose([Found(weak, "scalar", 1000)], 1, 0.1, 0.0, 10.0, grid, [old])
    assert (kept.pair_index, kept.direction, kept.event) == (0, 1, strong)
    assert kept.prior == (970, 540, 2200) and kept.n == 0 and not kept.log_a.any()
    idle = dataclasses.replace(old, k_num=0, k_den=0, n=0)
    [fresh] = _choose([Found(weak, "scalar", 1000)], 1, 0.1, 0.0, 10.0, grid, [idle])
    assert fresh.event == weak[0].event
    # carried or not, a worse incumbent gives way to a better new candidate
    better = [Candidate(IntervalEvent(f, 5.0, math.inf), 0, 1.0, 600, 100, "c")]
    [new] = _choose([Found(better, "scalar", 1000)], 1, 0.1, 0.0, 10.0, grid, [old])
    assert new.event == better[0].event


def test_bet_frequencies_shrink_the_choosing_counts_only() -> None:
    """A finalist's bet is sized from its scoring-half frequencies moved SIZE_SE standard errors against the claim
    (they chose it), pooled at PRIOR_WEIGHT per output with its own batches' counts, which are not moved: with none
    yet it is the shrunk estimate, and as they accumulate it tends to their plain frequencies, never to a shrunk
    version of them."""
    k_num, k_den, n = 600, 400, 2000
    p0, q0 = (float(v) for v in betting.shrunk(k_num, k_den, n, betting.SIZE_SE))
    assert betting.bet_frequencies(k_num, k_den, n, 0, 0, 0) == pytest.approx((p0, q0))
    assert p0 < k_num / n and q0 > k_den / n
    # moved further than the candidates' frequencies are for ranking them
    p_rank, q_rank = (float(v) for v in betting.shrunk(k_num, k_den, n))
    assert betting.SIZE_SE > betting.SHRINK_SE and p0 < p_rank and q0 > q_rank
    run = 10 ** 7
    p, q = betting.bet_frequencies(k_num, k_den, n, int(0.25 * run), int(0.2 * run), run)
    assert p == pytest.approx(0.25, abs=1e-4) and q == pytest.approx(0.2, abs=1e-4)
    # the scoring half counts as PRIOR_WEIGHT * n of the finalist's own outputs
    w = betting.PRIOR_WEIGHT * n
    p, q = betting.bet_frequencies(k_num, k_den, n, 250, 200, 1000)
    assert p == pytest.approx((w * p0 + 250) / (w + 1000)) and q == pytest.approx((w * q0 + 200) / (w + 1000))


def test_wealth_is_pathwise_nonincreasing_over_the_epsilon_grid() -> None:
    """The monotonicity the lower bound rests on: one finalist's batches on random outputs, the wealth of the claim
    tier (below ε) and of the bound tier never increase along the grid, so neither does their sum."""
    eps = 0.3
    grid, eps_max = wealth_grid(eps)
    below = np.arange(len(grid)) <= betting.GRID_BELOW - 1
    assert grid[betting.GRID_BELOW - 1] == eps and np.all(np.diff(grid) > 0) and grid[-1] == eps_max
    bet = betting.Bet(0, 0, IntervalEvent(Identity(), 0.5, math.inf), "out >= 0.5", 0.01, 0.0, (60, 40, 200),
                       np.zeros(len(grid)), np.zeros(len(grid)))
    rng = np.random.default_rng(0)
    cap_a, cap_b = betting.LAMBDA_CAP / math.exp(eps), betting.LAMBDA_CAP / math.exp(eps_max)
    for _ in range(20):
        counts = joint_counts(bet.event, bet.direction, rng.laplace(1.0, 1.0, 64), rng.laplace(0.0, 1.0, 64))
        betting.play(bet, counts, grid, np.exp(grid), 0.0, eps, cap_a, cap_b, below)
        a = np.where(below, math.log(0.9) + bet.log_a, -np.inf)
        total = np.logaddexp(a, math.log(0.1) + bet.log_b)
        assert np.all(np.diff(bet.log_a[below]) <= 1e-12) and np.all(np.diff(bet.log_b) <= 1e-12)
        assert np.all(np.diff(total) <= 1e-12)
    assert bet.n == 20 * 64 and bet.log_a[0] > 0          # it did bet, and won at ε' = 0


@pytest.mark.parametrize("kwargs, match", [
    (dict(samples=10, first_samples=20), "first_samples"),
    (dict(samples=1000, growth=1.0), "growth"),
    (dict(samples=0), "samples"),
    (dict(samples=1000, alpha=1.5), "alpha"),
    (dict(samples=1000, nan_policy="skip"), "nan_policy"),
])
def test_bad_arguments_are_named(kwargs: dict, match: str) -> None:
    with pytest.raises(InputError, match=match):
        audit_anytime(Laplace(0.1), [(0.0, 1.0)], 0.1, seed=0, workers=1, **kwargs)


def test_gross_violation_stops_after_a_few_hundred_samples() -> None:
    """No noise: the first checkpoint (256 outputs per input) finds the event, the next batch certifies it."""
    r = audit_anytime(NoNoise(0.1), [(3.0, 4.0)], 0.1, samples=1_000_000, seed=0, workers=1)
    assert r.violation and r.stopped_early and len(r.rounds) == 1
    assert r.samples_to_verdict == 512 and r.test_samples == 256 and r.search_samples == 256
    assert r.witness is not None and r.witness.test.impossible
    assert r.epsilon_lower_bound == pytest.approx(wealth_grid(0.1)[1])     # the grid's top: eps_max
    assert f"stopped after {r.samples_to_verdict} samples per input" in str(r)


def test_violation_of_twice_the_claim_stops_within_a_few_thousand() -> None:
    """Laplace with half the noise at ε = 1 (true ε = 2, alpha = 0.05)."""
    r = audit_anytime(LaplaceHalfNoise(1.0), [(0.0, 1.0)], 1.0, samples=1_000_000, seed=0, workers=1)
    assert r.violation and r.samples_to_verdict <= 5000 and 1.0 <= r.epsilon_lower_bound <= 2.0


def test_correct_mechanism_spends_the_whole_budget() -> None:
    r = audit_anytime(Laplace(0.5), [(0.0, 1.0)], 0.5, samples=50_000, seed=3, workers=1)
    assert not r.violation and not r.stopped_early and r.verdict is Verdict.PASS
    assert r.samples_to_verdict == 50_000 and len(r.rounds) == r.planned_rounds
    assert sum(x.test_samples for x in r.rounds) == r.test_samples == 50_000 - 256
    assert 0 <= r.epsilon_lower_bound <= 0.5
    assert "the whole budget" in str(r) and "not a proof of privacy" in str(r)


@pytest.mark.parametrize("mech, samples, violation", [(LaplaceHalfNoise(0.1), 200_000, True),
                                                    (Laplace(0.1), 400_000, False)])
def test_same_seed_same_result_whatever_the_workers(mech, samples: int, violation: bool) -> None:
    a = audit_anytime(mech, [(0.0, 1.0)], 0.1, samples=samples, seed=5, workers=1)
    b = audit_anytime(mech, [(0.0, 1.0)], 0.1, samples=samples, seed=5, workers=2)
    drop = ("seconds", "workers", "library")
    assert {k: v for k, v in a.to_dict().items() if k not in drop} == \
        {k: v for k, v in b.to_dict().items() if k not in drop}
    assert a.violation is violation


def test_false_alarm_rate_is_at_most_alpha() -> None:
    """150 anytime audits at alpha = 0.2 on mechanisms whose claim is tight (Laplace and randomized response at
    their true ε), small budgets.  The test fails only if the count exceeds the 0.999 quantile of
    Binomial(150, 0.2): error level 0.001 for a correct implementation (docs/auditor.md has the measured rates
    at alpha = 0.05)."""
    runs, alpha = 75, 0.2
    alarms = 0
    for mech, pairs, eps in ((Laplace(0.5), [(0.0, 1.0)], 0.5), (RandomizedResponse(epsilon=1.0, k=2), [(0, 1)], 1.0)):
        alarms += sum(audit_anytime(mech, pairs, eps, samples=8_000, alpha=alpha, seed=s, workers=1).violation
                      for s in range(runs))
    assert alarms <= stats.binom.ppf(0.999, 2 * runs, alpha)


def test_tight_control_rarely_alarms_over_forty_seeded_runs() -> None:
    """Laplace at its own ε, 40 seeded audits of 20,000 samples per input at alpha = 0.05: at most 2 alarms.  A
    regression check on fixed seeds (the statistical test is the one above): on this control the anchored event
    ``{o >= 1}`` has a ratio of exactly e^ε, so its bets are fair and the martingale wanders near the threshold, and
    the measured rate is small but not zero (docs/auditor.md, "False alarms"); at a rate of 5 in 600 more than 2 alarms
    in 40 runs happen with probability below 0.005 (checked below), at a rate of alpha with probability about 0.3."""
    alarms = sum(audit_anytime(Laplace(0.5), [(0.0, 1.0)], 0.5, samples=20_000, seed=1000 + s, workers=1).violation
                 for s in range(40))
    assert stats.binom.sf(2, 40, 5 / 600) < 0.005 < 0.3 < stats.binom.sf(2, 40, 0.05)
    assert alarms <= 2


def test_result_model_and_json() -> None:
    r = dpverify.audit_anytime(NoNoise(0.1), [(3.0, 4.0)], 0.1, samples=10_000, seed=0, workers=1)
    assert isinstance(r, AnytimeResult) and isinstance(r, dpverify.results.ViolationVerdict)
    assert r.verdict is Verdict.VIOLATION and r.claim == dpverify.PrivacyClaim(0.1)
    assert r.measured.name == "epsilon_lower_bound" and r.measured.value == r.epsilon_lower_bound
    d = json.loads(json.dumps(r.to_dict()))
    assert d["verdict"] == "violation" and d["samples_to_verdict"] == r.samples_to_verdict
    assert d["rounds"][0]["violation"] and d["witness"]["impossible"]
    assert str(r).startswith("VIOLATION of the claim ε = 0.1: true ε ≥ ") and "(anytime-valid)" in str(r)
    assert math.isfinite(r.epsilon_lower_bound)
