"""Tests of dpverify.check_ledger: recomposing the privacy charges a mechanism records (basic composition)."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import numpy as np
import pytest

import dpverify
from algorithms.ledger import BudgetLedger, Charge
from dpverify import InputError, LedgerResult, MechanismError, check_ledger


class Fixed:
    """Records the same charges (algorithms.ledger.Charge objects) in every run."""

    def __init__(self, charges):
        self.charges = list(charges)

    def privacy_ledger(self, x, rng):
        return list(self.charges)


class Plain:
    """Records plain SimpleNamespace charges (duck typing: no algorithms import needed)."""

    def __init__(self, *charges):
        self.charges = [SimpleNamespace(**c) for c in charges]

    def privacy_ledger(self, x, rng):
        return self.charges


def ns(kind="lap", epsilon=0.1, delta=0.0, level=None, subset="D", parallel=1):
    return dict(kind=kind, epsilon=epsilon, delta=delta, level=level, subset=subset, parallel=parallel)


class Recursion:
    """A recursion whose depth (1..4) is drawn from the run's generator: each level spends 0.25 on 2**level
    disjoint cells.  Remembers the depths it drew."""

    def __init__(self, step=0.25, levels=4):
        self.step, self.levels, self.depths = step, levels, []

    def privacy_ledger(self, x, rng):
        depth = int(rng.integers(1, self.levels + 1))
        self.depths.append(depth)
        return [Charge("laplace-count", self.step, 0.0, lv, f"level-{lv} cells", 2**lv) for lv in range(depth)]


def test_totals_are_exact_sums_of_charges() -> None:
    m = Fixed([Charge("laplace-count", 0.1, 0.0, 0, "D"), Charge("exponential", 0.3, 0.0, 1, "D"),
               Charge("gaussian", 0.2, 1e-6, None, "leaves"), Charge("laplace-count", 0.1, 0.0, 1, "D")])
    r = check_ledger(m, [1.0, 2.0], epsilon=1.0, delta=1e-5, runs=3, seed=0)
    assert isinstance(r, LedgerResult)
    assert r.total_epsilon == math.fsum([0.1, 0.3, 0.2, 0.1]) and r.total_delta == 1e-6
    assert not r.violation and r.verdict == "pass"
    assert r.slack_epsilon == pytest.approx(0.3) and r.slack_delta == pytest.approx(9e-6)
    assert r.claimed_epsilon == 1.0 and r.claimed_delta == 1e-5 and r.runs == 3 and r.seed == 0
    assert r.min_total_epsilon == r.total_epsilon and len(r.run_totals) == 3
    assert r.by_kind == {"laplace-count": {"epsilon": 0.2, "delta": 0.0, "charges": 2},
                         "exponential": {"epsilon": 0.3, "delta": 0.0, "charges": 1},
                         "gaussian": {"epsilon": 0.2, "delta": 1e-6, "charges": 1}}
    assert r.by_level == {None: 0.2, 0: 0.1, 1: pytest.approx(0.4)}
    assert r.charges[2] == {"kind": "gaussian", "epsilon": 0.2, "delta": 1e-6, "level": None, "subset": "leaves",
                            "parallel": 1}
    text = str(r)
    assert "the recorded charges compose to at most the claim (basic composition)" in text
    assert "is private" not in text and "Fixed" in text


def test_agrees_with_the_algorithms_ledger_totals() -> None:
    led = BudgetLedger()
    for lv in range(5):
        led.charge("laplace-count", 0.1 / 3, level=lv, parallel=2**lv)
    led.charge("gaussian-average", 0.2, 1e-7, subset="leaves", parallel=32)
    r = check_ledger(Fixed(led.charges), None, 1.0, 1e-6, runs=1, seed=0)
    assert (r.total_epsilon, r.total_delta) == led.total()


def test_parallel_charge_is_counted_once() -> None:
    m = Plain(ns(epsilon=0.5, parallel=64), ns(epsilon=0.5, parallel=1))
    r = check_ledger(m, 0, epsilon=1.0, runs=2, seed=1)
    assert r.total_epsilon == 1.0 and not r.violation
    assert [c["parallel"] for c in r.charges] == [64, 1]


def test_run_dependent_ledger_reports_max_and_min() -> None:
    m = Recursion()
    r = check_ledger(m, [0.5], epsilon=1.0, runs=12, seed=3)
    assert len(m.depths) == 12 and len(set(m.depths)) > 1  # the seed gives different depths
    deepest = max(m.depths)
    assert r.total_epsilon == 0.25 * deepest == r.max_total_epsilon
    assert r.min_total_epsilon == 0.25 * min(m.depths)
    assert r.worst_run == m.depths.index(deepest)  # the first of the deepest runs
    assert [e for e, _ in r.run_totals] == [0.25 * d for d in m.depths]
    assert len(r.charges) == deepest and r.by_level == {lv: 0.25 for lv in range(deepest)}
    assert not r.violation
    # the same recursion against a smaller claim: only the deep runs violate, the worst run is one of them
    m2 = Recursion()
    r2 = check_ledger(m2, [0.5], epsilon=0.25 * (deepest - 1), runs=12, seed=3)
    assert m2.depths == m.depths and r2.violation and r2.total_epsilon == 0.25 * deepest
    assert r2.slack_epsilon == pytest.approx(-0.25)
    assert f"run {r2.worst_run} of 12" in str(r2) and "VIOLATION" in str(r2)


def test_violation_in_epsilon_only() -> None:
    r = check_ledger(Plain(ns(epsilon=0.6), ns(epsilon=0.6)), 0, epsilon=1.0, delta=1e-6, runs=2, seed=0)
    assert r.violation and r.total_epsilon == 1.2 and r.total_delta == 0.0
    assert "Σε = 1.2 > ε = 1" in str(r) and "Σδ" not in str(r).split("compose")[1].split(";")[0]


def test_violation_in_delta_only() -> None:
    m = Plain(ns(epsilon=0.1, delta=1e-6), ns(epsilon=0.1, delta=1e-6))
    r = check_ledger(m, 0, epsilon=1.0, delta=1.5e-6, runs=2, seed=0)
    assert r.violation and r.total_epsilon == pytest.approx(0.2) and r.slack_epsilon > 0
    assert r.total_delta == 2e-6 and r.slack_delta < 0
    assert "Σδ = 2e-06 > δ = 1.5e-06" in str(r) and "Σε = 0.2 >" not in str(r)
    # a pure-ε claim: any δ spent is a violation
    r0 = check_ledger(m, 0, epsilon=1.0, runs=1, seed=0)
    assert r0.violation and r0.claimed_delta == 0.0


def test_delta_violation_run_is_the_worst_run_even_with_less_epsilon() -> None:
    class Alternating:
        def privacy_ledger(self, x, rng):
            big = rng.random() < 0.5
            return [SimpleNamespace(**ns(epsilon=0.9 if big else 0.1, delta=0.0 if big else 1e-3))]

    r = check_ledger(Alternating(), 0, epsilon=1.0, delta=1e-4, runs=16, seed=0)
    assert r.violation and r.total_delta == 1e-3 and r.total_epsilon == 0.1
    assert r.max_total_epsilon == 0.9  # the ε-heaviest run is still visible


def test_rtol_boundary() -> None:
    at = Plain(ns(epsilon=1.0 + 1e-9))
    assert not check_ledger(at, 0, 1.0, runs=1, seed=0).violation  # exactly claim·(1 + rtol)
    assert check_ledger(at, 0, 1.0, runs=1, seed=0, rtol=0.0).violation
    assert check_ledger(Plain(ns(epsilon=1.0 + 3e-9)), 0, 1.0, runs=1, seed=0).violation
    # a budget split in thirds does not add up exactly in floating point; rtol absorbs it
    thirds = Plain(*[ns(epsilon=0.1 / 3) for _ in range(3)], ns(epsilon=0.9))
    assert not check_ledger(thirds, 0, 1.0, runs=1, seed=0).violation


def test_numpy_values_and_tuple_or_generator_ledgers() -> None:
    class Gen:
        def privacy_ledger(self, x, rng):
            yield SimpleNamespace(**ns(epsilon=np.float32(0.25), level=np.int64(2), parallel=np.int64(4)))
            yield SimpleNamespace(**ns(epsilon=np.float64(0.25)))

    r = check_ledger(Gen(), 0, 1.0, runs=2, seed=0)
    assert r.total_epsilon == 0.5 and r.by_level == {None: 0.25, 2: 0.25}
    assert type(r.charges[0]["parallel"]) is int and type(r.charges[0]["level"]) is int
    json.dumps(r.to_dict(), allow_nan=False)


def test_empty_ledger_spends_nothing() -> None:
    r = check_ledger(Plain(), 0, 1.0, runs=2, seed=0)
    assert r.total_epsilon == 0.0 and not r.violation and r.by_kind == {} and "no charges" in str(r)


@pytest.mark.parametrize("charge, needles", [
    (ns(epsilon=math.nan), ["charge #1", "epsilon must be finite and >= 0", "nan"]),
    (ns(epsilon=math.inf), ["charge #1", "epsilon must be finite"]),
    (ns(epsilon=-0.1), ["charge #1", "epsilon must be finite and >= 0", "-0.1"]),
    (ns(delta=-1e-9), ["charge #1", "delta must be finite and >= 0"]),
    (ns(delta=math.nan), ["charge #1", "delta must be finite"]),
    (ns(epsilon="0.1"), ["charge #1", "epsilon must be a number", "'0.1'"]),
    (ns(epsilon=True), ["charge #1", "epsilon must be a number"]),
    (ns(parallel=0), ["charge #1", "parallel must be an integer >= 1", "disjoint subsets", "got 0"]),
    (ns(parallel=2.0), ["charge #1", "parallel must be an integer >= 1"]),
    (ns(kind=""), ["charge #1", "kind must be a non-empty string"]),
    (ns(kind=3), ["charge #1", "kind must be a non-empty string", "got 3"]),
    (ns(level="top"), ["charge #1", "level must be an integer", "'top'"]),
    ({k: v for k, v in ns().items() if k != "delta"}, ["charge #1", "no attribute 'delta'",
                                                       "kind, epsilon, delta, level, subset, parallel"]),
    ({"kind": "lap"}, ["no attribute 'epsilon', 'delta', 'level', 'subset', 'parallel'"]),
])
def test_bad_charges_are_input_errors_naming_the_charge(charge: dict, needles: list[str]) -> None:
    m = Plain(ns(), charge)
    with pytest.raises(InputError) as info:
        check_ledger(m, 0, 1.0, runs=2, seed=0)
    msg = str(info.value)
    assert "run 0" in msg and "namespace(" in msg  # names the run and shows the charge
    for needle in needles:
        assert needle in msg, (needle, msg)


def test_bad_charge_in_a_later_run_names_that_run() -> None:
    class LateNaN:
        def __init__(self):
            self.calls = 0

        def privacy_ledger(self, x, rng):
            self.calls += 1
            return [Charge("lap", math.nan if self.calls == 3 else 0.1, 0.0, None, "D")]

    with pytest.raises(InputError, match=r"run 2, charge #0 \(Charge\(kind='lap', epsilon=nan"):
        check_ledger(LateNaN(), 0, 1.0, runs=5, seed=0)


@pytest.mark.parametrize("returned", [None, 0.5, "laplace", {"kind": "lap"}])
def test_ledger_that_is_not_a_sequence(returned) -> None:
    class Odd:
        def privacy_ledger(self, x, rng):
            return returned

    with pytest.raises(InputError, match="privacy_ledger must return a sequence of charges"):
        check_ledger(Odd(), 0, 1.0, runs=1, seed=0)


def test_mechanism_without_privacy_ledger() -> None:
    def mechanism(x, n, rng):
        return np.zeros(n)

    with pytest.raises(InputError) as info:
        check_ledger(mechanism, 0, 1.0)
    msg = str(info.value)
    assert "privacy_ledger(x, rng)" in msg and "mechanism has no privacy_ledger" in msg
    assert "kind" in msg and "parallel" in msg  # explains the protocol
    with pytest.raises(InputError, match="has no privacy_ledger"):
        check_ledger(SimpleNamespace(privacy_ledger=3), 0, 1.0)


def test_raising_ledger_is_a_mechanism_error_naming_the_input() -> None:
    class Raises:
        def privacy_ledger(self, x, rng):
            raise ZeroDivisionError("empty cell")

    with pytest.raises(MechanismError) as info:
        check_ledger(Raises(), np.array([1.5, 2.5]), 1.0, seed=0)
    msg = str(info.value)
    assert "privacy_ledger raised ZeroDivisionError: empty cell" in msg and "[1.5, 2.5]" in msg and "run 0" in msg
    assert isinstance(info.value.__cause__, ZeroDivisionError)


def test_raising_generator_ledger_is_a_mechanism_error() -> None:
    class Gen:
        def privacy_ledger(self, x, rng):
            yield Charge("lap", 0.1, 0.0, None, "D")
            raise KeyError("level")

    with pytest.raises(MechanismError, match="privacy_ledger raised KeyError"):
        check_ledger(Gen(), [1, 2], 1.0, seed=0)


@pytest.mark.parametrize("kwargs, needle", [
    (dict(epsilon=0.0), "epsilon must lie in"),
    (dict(epsilon=math.inf), "epsilon must lie in"),
    (dict(delta=1.0), "delta must lie in"),
    (dict(runs=0), "runs must be an integer >= 1"),
    (dict(seed=-1), "seed must be a non-negative integer"),
    (dict(rtol=-1e-9), "rtol must lie in"),
])
def test_bad_options(kwargs: dict, needle: str) -> None:
    args = dict(epsilon=1.0) | kwargs
    with pytest.raises(InputError, match=needle):
        check_ledger(Plain(ns()), 0, **args)


def test_same_seed_same_result_and_spawned_generators() -> None:
    a = check_ledger(Recursion(), 0, 1.0, runs=10, seed=42)
    b = check_ledger(Recursion(), 0, 1.0, runs=10, seed=42)
    assert a.to_dict() == b.to_dict()
    # run i gets default_rng(SeedSequence(seed).spawn(runs)[i])
    seen = []

    class Records:
        def privacy_ledger(self, x, rng):
            seen.append(rng.random())
            return []

    check_ledger(Records(), 0, 1.0, runs=3, seed=7)
    expected = [np.random.default_rng(s).random() for s in np.random.SeedSequence(7).spawn(3)]
    assert seen == expected
    # seed=None draws fresh entropy and reports it: rerunning with it repeats the result
    c = check_ledger(Recursion(), 0, 1.0, runs=10)
    assert check_ledger(Recursion(), 0, 1.0, runs=10, seed=c.seed).to_dict() == c.to_dict()


def test_json_round_trip() -> None:
    m = Plain(ns(kind="count", epsilon=0.4, level=0, parallel=2), ns(kind="avg", epsilon=0.7, delta=1e-7))
    r = check_ledger(m, np.arange(3), 1.0, 1e-6, runs=4, seed=5)
    d = r.to_dict()
    again = json.loads(json.dumps(d, allow_nan=False))
    assert again == d
    assert again["violation"] is True and again["verdict"] == "violation"
    assert again["total_epsilon"] == pytest.approx(1.1) and again["slack_epsilon"] == pytest.approx(-0.1)
    assert again["by_level"] == {"none": 0.7, "0": 0.4}
    assert again["by_kind"]["avg"] == {"epsilon": 0.7, "delta": 1e-7, "charges": 1}
    assert again["charges"][0] == {"kind": "count", "epsilon": 0.4, "delta": 0.0, "level": 0, "subset": "D",
                                   "parallel": 2}
    assert again["run_totals"] == [[pytest.approx(1.1), 1e-7]] * 4 and again["min_total_epsilon"] == again[
        "total_epsilon"]
    assert {"claimed_epsilon", "claimed_delta", "runs", "seed", "rtol", "worst_run"} <= set(again)


def test_exported() -> None:
    assert dpverify.check_ledger is check_ledger and "check_ledger" in dpverify.__all__
    assert "LedgerResult" in dpverify.__all__
