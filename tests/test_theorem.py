"""Tests of dpverify.theorems.check (Monte Carlo checks of utility theorems) on toy theorems with known answers
(tests/theorem_toys.py), and of the ``theorem`` suite kind.

Every statistical assertion uses a fixed seed; where a verdict could in principle go the other way its
false-alarm level is stated next to it."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from dpverify.errors import InputError, MechanismError, SuiteError
from dpverify.theorems.check import check_sweep, check_theorem, runs_needed

TESTS = Path(__file__).parent
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from theorem_toys import Broken, ConditionalCoin, ExponentialValue, LaplaceTail, SquaresBelow  # noqa: E402


@pytest.mark.parametrize("factor, verdict", [(0.9, "violated"), (1.1, "holds")])
def test_probability_verdicts_far_from_the_bound(factor: float, verdict: str) -> None:
    # true P = e^-1 = 0.368; the bound is 10 % off, i.e. 0.037 = 24 standard errors at 1e5 runs: the other
    # verdict has probability < 1e-100.
    r = check_theorem(LaplaceTail(1.0, factor), runs=100_000, seed=3)
    assert r.verdict == verdict and r.runs == 100_000
    lo, hi = r.confidence_interval()
    assert lo < math.exp(-1) < hi and r.exact_in_interval is True  # coverage >= 95 % (seeded)
    assert r.slack == pytest.approx(r.bound - r.estimate)
    assert (r.slack > 0) == (verdict == "holds") and r.runs_needed is None and not r.vacuous
    assert r.slack_interval == pytest.approx(r.bound - hi)


def test_a_tight_bound_is_inconclusive_with_the_runs_that_would_resolve_it() -> None:
    # bound == the true value: "violated" would need the 95 % interval to miss the truth (<= 2.5 % per side).
    r = check_theorem(LaplaceTail(1.0, 1.0), runs=20_000, seed=4)
    assert r.verdict == "inconclusive"
    assert r.runs_needed is not None and r.runs_needed > 20_000
    assert "runs would resolve it" in r.summary()


def test_runs_needed_is_the_smallest_resolving_count() -> None:
    from dpverify.theorems.intervals import binomial_interval

    n = runs_needed(0.30, 0.32, 0.05)
    lo, hi = binomial_interval(round(0.30 * n), int(n), 0.05)
    assert hi < 0.32  # resolved at n ...
    lo, hi = binomial_interval(round(0.30 * n * 0.95), int(n * 0.95), 0.05)
    assert hi >= 0.32  # ... and not at 5 % fewer runs
    assert runs_needed(0.3, 0.3, 0.05) == math.inf
    # means: (z * sd / gap)^2
    assert runs_needed(1.0, 1.1, 0.05, "mean", std=1.0) == math.ceil((stats.norm.isf(0.025) / 0.1) ** 2)


def test_results_do_not_depend_on_the_number_of_workers() -> None:
    one = check_theorem(LaplaceTail(0.5, 1.0), runs=5_000, seed=11, batch_size=500, workers=1)
    two = check_theorem(LaplaceTail(0.5, 1.0), runs=5_000, seed=11, batch_size=500, workers=2)
    assert one.estimate == two.estimate and one.interval == two.interval
    other = check_theorem(LaplaceTail(0.5, 1.0), runs=5_000, seed=12, batch_size=500, workers=1)
    assert other.estimate != one.estimate  # the seed matters (equal with probability ~1e-2 at most)


def test_false_alarm_rate_of_the_verdict_at_a_tight_bound() -> None:
    # 300 independent checks of a bound equal to the truth, 400 runs each: each says "violated" with
    # probability <= alpha/2 = 2.5 % (Clopper-Pearson is conservative).  P(Bin(300, 0.025) > 17) < 1e-3.
    violated = sum(check_theorem(LaplaceTail(1.0, 1.0), runs=400, seed=s, workers=1).violated for s in range(300))
    assert violated <= 17


def test_mean_and_quantile_quantities() -> None:
    # Exp(1): mean 1, sd 1 -> 20 000 runs give a standard error of 0.007; bounds 0.2 away (28 se).
    assert check_theorem(ExponentialValue(1.2, "mean"), runs=20_000, seed=1).verdict == "holds"
    assert check_theorem(ExponentialValue(0.8, "mean"), runs=20_000, seed=1).verdict == "violated"
    # 0.9-quantile = ln 10 = 2.303; the order-statistic interval at 20 000 runs is about +-0.07.
    q_hold = check_theorem(ExponentialValue(2.5, "quantile"), runs=20_000, seed=1)
    q_viol = check_theorem(ExponentialValue(2.1, "quantile"), runs=20_000, seed=1)
    assert q_hold.verdict == "holds" and q_viol.verdict == "violated"
    assert q_hold.exact_in_interval and q_hold.claim_text() == "q0.9 <= 2.5"
    q_tight = check_theorem(ExponentialValue(math.log(10), "quantile"), runs=2_000, seed=1)
    assert q_tight.verdict == "inconclusive" and q_tight.runs_needed > 2_000  # 95 % coverage, seeded


def test_conditional_probability_counts_only_the_conditioned_runs() -> None:
    r = check_theorem(ConditionalCoin(0.45), runs=20_000, seed=2)
    assert 9_500 < r.runs < 10_500  # ~half the runs meet the condition (50 sd band)
    assert r.verdict == "holds" and abs(r.estimate - 0.5) < 0.03


def test_always_theorems_report_the_smallest_counterexample() -> None:
    ok = check_theorem(SquaresBelow(400), runs=1)
    assert ok.verdict == "holds" and ok.runs == 20 and ok.failure_count == 0
    assert "no counterexample in 20 instances" in ok.summary()
    bad = check_theorem(SquaresBelow(50), runs=1)
    assert bad.verdict == "violated" and bad.failure_count == 13  # 8..20
    assert bad.counterexample == {"size": 8, "square": 64}
    sweep = check_sweep(SquaresBelow, {"top": 20}, "limit", [400, 100, 70])
    assert sweep.verdict == "violated" and sweep.counterexample == {"size": 9, "square": 81}


def test_sweeps_test_each_point_at_a_bonferroni_level_and_name_the_smallest_violation() -> None:
    s = check_sweep(LaplaceTail, {"factor": 0.9}, "t", [2.0, 0.5, 1.0], runs=40_000, seed=5)
    assert s.verdict == "violated" and s.point_alpha == pytest.approx(0.05 / 3)
    assert all(p.alpha == pytest.approx(0.05 / 3) for p in s.points)
    assert s.counterexample is not None and s.counterexample["t"] == 0.5  # smallest size among the violated
    held = check_sweep(LaplaceTail, {"factor": 1.2}, "t", [0.5, 1.0], runs=40_000, seed=5)
    assert held.verdict == "holds" and held.counterexample is None
    doc = json.loads(json.dumps(s.to_dict(), allow_nan=False))
    assert doc["claim"] == "P <= bound(t)" and len(doc["points"]) == 3


def test_vacuous_bounds_are_marked() -> None:
    r = check_theorem(LaplaceTail(1.0, 5.0), runs=1_000, seed=0)  # 5/e > 1: a probability <= 1.84
    assert r.vacuous and r.verdict == "holds" and "vacuous" in r.summary()


@pytest.mark.parametrize("how, error, words", [
    ("hypotheses", InputError, "hypotheses do not hold, so no verdict"),
    ("nan", InputError, "the bound is NaN"),
    ("shape", MechanismError, "shape (101,)"),
    ("values", MechanismError, "must return bools"),
    ("raise", MechanismError, "sample() raised ZeroDivisionError: boom"),
    ("never-conditioned", MechanismError, "conditioning event never happened"),
])
def test_bad_theorems_get_clear_errors_not_verdicts(how: str, error: type, words: str) -> None:
    with pytest.raises(error, match=None) as info:
        check_theorem(Broken(how), runs=100, seed=0)
    assert words in str(info.value) and "toy broken" in str(info.value)


def test_protocol_errors() -> None:
    with pytest.raises(MechanismError, match="must return \\(ok, failures\\)"):
        check_theorem(Broken("always-tuple", quantity="always"), runs=10, seed=0)
    with pytest.raises(MechanismError, match="non-finite"):
        check_theorem(Broken("nonfinite", quantity="mean"), runs=10, seed=0)
    with pytest.raises(InputError, match="direction 'up' is not one of"):
        check_theorem(Broken("ok", direction="up"), runs=10, seed=0)
    with pytest.raises(InputError, match="is not a theorem object: no name"):
        check_theorem(object(), runs=10)
    with pytest.raises(InputError, match="runs"):
        check_theorem(LaplaceTail(), runs=0)
    with pytest.raises(InputError, match="both a fixed parameter and the swept one"):
        check_sweep(LaplaceTail, {"t": 1.0}, "t", [1.0])
    with pytest.raises(InputError, match="LaplaceTail.*t='x'.*raised ValueError"):
        check_sweep(LaplaceTail, {}, "t", ["x"])


# -- the suite kind --------------------------------------------------------------------------------------
HEAD = f'[suite]\nname = "th"\nimport_paths = ["{TESTS.as_posix()}"]\n'


def _entry(**over: str) -> str:
    base = {"id": '"tail"', "kind": '"theorem"', "mechanism": '"theorem_toys:LaplaceTail"',
            "params": "{ factor = 1.2 }", "sweep": '{ param = "t", values = [0.5, 1.0] }', "expect": '"holds"',
            "quick": "{ samples = 20000 }"}
    base.update(over)
    return "\n[[entry]]\n" + "".join(f"{k} = {v}\n" for k, v in base.items() if v)


def _timeless(x: object) -> object:
    """``x`` without its ``seconds`` keys (wall time differs between runs)."""
    if isinstance(x, dict):
        return {k: _timeless(v) for k, v in x.items() if k != "seconds"}
    if isinstance(x, list):
        return [_timeless(v) for v in x]
    return x


def test_theorem_entries_run_report_and_plot(tmp_path: Path) -> None:
    from dpverify.cli.commands import main
    from dpverify.suites import load_suite, run_suites

    path = tmp_path / "th.toml"
    path.write_text(HEAD + _entry() + _entry(id='"single"', params="{ factor = 0.9, t = 1.0 }", sweep="",
                                             expect='"violated"')
                    + _entry(id='"always"', mechanism='"theorem_toys:SquaresBelow"', params="{ limit = 50 }",
                             sweep="", expect='"violated"'), encoding="utf-8")
    suite = load_suite(path)
    assert suite.entries[0].sweep == ("t", (0.5, 1.0)) and suite.entries[0].claim.epsilon is None
    outcomes = run_suites([suite])
    assert [o.outcome for o in outcomes] == ["holds", "violated", "violated"] and all(o.matched for o in outcomes)
    assert outcomes[2].witness == {"counterexample": {"size": 8, "square": 64}}
    again = run_suites([suite])
    assert [_timeless(o.details) for o in again] == [_timeless(o.details) for o in outcomes]  # one seed, one result
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    first = report["entries"][0]
    assert first["outcome"] == "holds" and first["details"]["plot"] == "plots/th__tail.png"
    assert (out / "plots" / "th__tail.png").stat().st_size > 1000
    assert (out / "plots" / "th__always.png").exists()


@pytest.mark.parametrize("over, words", [
    ({"expect": '"pass"'}, "write expect = \"holds\", \"violated\" or \"inconclusive\""),
    ({"claim": "{ epsilon = 1.0 }"}, "the theorem states its own bound"),
    ({"pairs": "[[0, 1]]"}, "takes no pairs"),
    ({"sweep": '{ param = "factor", values = [1] }'}, "'factor' is also in params"),
    ({"sweep": '{ param = "t", values = [] }'}, "expected a non-empty list"),
    ({"alpha": "2"}, "expected a number in (0, 1)"),
    ({"expect": '["inconclusive", "pass"]'}, "unknown expectation 'pass' for a theorem entry"),
    ({"expect": '["holds", "holds"]'}, "an outcome is listed twice"),
    ({"expect": "[]"}, "expected an outcome or a non-empty list of outcomes"),
    ({"expect": '["holds", 1]'}, "expected an outcome or a non-empty list of outcomes"),
])
def test_theorem_entries_are_validated(tmp_path: Path, over: dict[str, str], words: str) -> None:
    from dpverify.suites import load_suite

    path = tmp_path / "th.toml"
    path.write_text(HEAD + _entry(**over), encoding="utf-8")
    with pytest.raises(SuiteError) as info:
        load_suite(path)
    assert words in str(info.value) and "entry 'tail'" in str(info.value)


def test_a_list_of_expected_outcomes_matches_any_of_them(tmp_path: Path) -> None:
    # An attained bound (factor 1: P = e^-1 exactly): the verdict is a coin between inconclusive and, with
    # probability <= alpha/2 per side, holds or violated; a suite lists the outcomes it accepts.  The verdicts
    # below are those of the fixed seeds (far from the bound, each other verdict has probability < 1e-100).
    from dpverify.suites import load_suite, run_suites

    path = tmp_path / "th.toml"
    path.write_text(HEAD + _entry(id='"tight"', params="{ factor = 1.0, t = 1.0 }", sweep="",
                                  expect='["inconclusive", "holds"]')
                    + _entry(id='"off"', params="{ factor = 0.9, t = 1.0 }", sweep="",
                             expect='["inconclusive", "holds"]'), encoding="utf-8")
    suite = load_suite(path)
    assert suite.entries[0].expect == "inconclusive|holds"
    assert suite.entries[0].expected == ("inconclusive", "holds")
    tight, off = run_suites([suite])
    assert tight.outcome in ("inconclusive", "holds") and tight.matched
    assert tight.to_dict()["expectation"] == "inconclusive|holds"
    assert off.outcome == "violated" and not off.matched


def test_theorem_entry_with_unmet_hypotheses_is_an_error_outcome(tmp_path: Path) -> None:
    from dpverify.suites import load_suite, preflight, run_suites

    path = tmp_path / "th.toml"
    path.write_text(HEAD + _entry(sweep='{ param = "t", values = [1.0, -1.0] }')
                    + _entry(id='"badparams"', params='{ factor = "x" }', sweep=""), encoding="utf-8")
    suite = load_suite(path)
    with pytest.raises(SuiteError, match="badparams.*raised ValueError"):
        preflight(suite.entries)
    outcome = run_suites([suite], select="th/tail")[0]
    assert outcome.outcome == "error" and not outcome.matched
    assert "hypotheses do not hold" in outcome.error and "t = -1.0 < 0" in outcome.error


def test_quantile_interval_matches_order_statistics() -> None:
    # The distribution-free interval of scipy's quantile_test contains the true quantile about 95 % of the
    # time: 200 seeded repetitions, P(Bin(200, 0.95) < 180) < 1e-3.
    cover = 0
    for s in range(200):
        x = np.random.default_rng(s).exponential(size=300)
        from dpverify.theorems.intervals import quantile_interval

        lo, hi = quantile_interval(x, 0.9, 0.05)
        cover += lo <= math.log(10) <= hi
    assert cover >= 180


def test_verdict_rates_measure_false_alarms_and_power() -> None:
    from dpverify.theorems.check import verdict_rates

    # Tight bound: "violated" is a false alarm, each at most alpha/2 = 2.5 %; 200 repetitions:
    # P(Bin(200, 0.025) > 13) < 1e-3.
    tight = verdict_rates(LaplaceTail(1.0, 1.0), repetitions=200, runs=500, seed=0)
    assert sum(tight.counts.values()) == 200 and tight.counts["violated"] <= 13 and tight.counts["holds"] <= 13
    lo, hi = tight.interval("inconclusive")
    assert lo <= tight.rate("inconclusive") <= hi
    # A bound 20 % below the truth at 5000 runs: 0.074 = 11 standard errors -> always "violated".
    far = verdict_rates(LaplaceTail(1.0, 0.8), repetitions=20, runs=5_000, seed=0)
    assert far.counts["violated"] == 20
