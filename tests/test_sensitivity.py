"""check_sensitivity: correct functions pass, wrong claims are found with a witness, bad input is refused.

Every check here is deterministic (fixed seeds; hypothesis runs seeded without an example database), so
there is no false-alarm level to state: a verdict either reproduces or the code changed.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from algorithms.dpm.score import candidate_table
from dpverify.errors import InputError
from dpverify.neighbours import AddRemoveOne, L1Neighbours, LInfNeighbours, ReplaceOne
from dpverify.code_checks.sensitivity import change, check_sensitivity


def clipped_sum(x: np.ndarray, lo: float = 0.0, hi: float = 1.0) -> float:
    return float(np.clip(np.asarray(x, dtype=float), lo, hi).sum())


def unclipped_sum(x: np.ndarray) -> float:
    return float(np.asarray(x, dtype=float).sum())


def nan_sum(x: np.ndarray) -> float:
    return float(np.clip(np.asarray(x, dtype=float), 0.0, 1.0).sum())  # np.clip keeps NaN


def mean(x: np.ndarray) -> float:
    x = np.asarray(x, dtype=float)
    return float(np.clip(x, 0, 1).mean()) if x.size else 0.0


def test_change_norms_and_nonfinite() -> None:
    assert change([0, 0], [3, 4], "l1") == 7
    assert change([0, 0], [3, 4], "l2") == 5
    assert change([0, 0], [3, 4], "linf") == 4
    assert change([np.nan, 1], [np.nan, 1]) == 0  # NaN on both sides: unchanged
    assert change([1.0], [np.nan]) == np.inf
    assert change([np.inf], [np.inf]) == 0
    with pytest.raises(InputError, match="shapes"):
        change([1, 2], [1, 2, 3])


def test_clipped_sum_passes_and_reaches_its_bound() -> None:
    r = check_sensitivity(clipped_sum, 1.0, AddRemoveOne(), np.array([0.2, 0.5, 0.9]), domain=(-2, 3), seed=1)
    assert not r.violation
    assert r.max_change == pytest.approx(1.0)  # adding a record >= 1 attains the bound


def test_missing_clipping_is_found_with_a_witness() -> None:
    r = check_sensitivity(unclipped_sum, 1.0, AddRemoveOne(), np.array([0.2, 0.5]), domain=(-5, 5), seed=1)
    assert r.violation
    assert r.max_change == pytest.approx(5.0)  # the largest record of the domain
    assert AddRemoveOne().contains(r.x0, r.x1)
    assert abs(unclipped_sum(r.x0) - unclipped_sum(r.x1)) == pytest.approx(r.max_change)
    assert "VIOLATION" in r.summary()


def test_nan_record_is_an_infinite_change_only_when_opted_in() -> None:
    base = np.array([0.2, 0.5])
    r0 = check_sensitivity(nan_sum, 1.0, AddRemoveOne(), base, domain=(0, 1), examples=0)
    assert not r0.violation
    r1 = check_sensitivity(nan_sum, 1.0, AddRemoveOne(), base, domain=(0, 1), examples=0, nonfinite=True)
    assert r1.violation and r1.max_change == np.inf
    assert np.isnan(r1.f1) or np.isnan(r1.f0)


def test_replace_relation_doubles_the_clipped_sum_range() -> None:
    r = check_sensitivity(partial(clipped_sum, lo=-1.0, hi=1.0), 1.0, ReplaceOne(), np.array([1.0, 0.5]),
                          domain=(-1, 1), examples=0)
    assert r.violation and r.max_change == pytest.approx(2.0)
    ok = check_sensitivity(partial(clipped_sum, lo=-1.0, hi=1.0), 2.0, ReplaceOne(), np.array([0.0, 0.5]),
                           domain=(-1, 1), examples=0)
    assert not ok.violation


def test_vector_relations_and_norms() -> None:
    x = np.array([1.0, 2.0, 3.0])
    ident = lambda w: np.asarray(w, dtype=float)  # noqa: E731
    # ℓ∞ radius 0.5: identity has ℓ1 sensitivity 3·0.5, ℓ∞ sensitivity 0.5
    r = check_sensitivity(ident, 0.5, LInfNeighbours(0.5), x, norm="l1", examples=0)
    assert r.violation and r.max_change == pytest.approx(1.5)
    assert not check_sensitivity(ident, 1.5, LInfNeighbours(0.5), x, norm="l1", examples=0).violation
    assert not check_sensitivity(ident, 0.5, LInfNeighbours(0.5), x, norm="linf", examples=0).violation
    # ℓ1 radius 1: identity has ℓ1 sensitivity 1
    assert not check_sensitivity(ident, 1.0, L1Neighbours(1.0), x, norm="l1", examples=0).violation
    r2 = check_sensitivity(lambda w: float(np.max(w) - np.min(w)), 0.5, LInfNeighbours(0.5), x,
                           norm="linf", examples=0)
    assert r2.violation and r2.max_change == pytest.approx(1.0)  # the range moves at both ends


def test_data_dependent_mean_exceeds_a_fixed_claim() -> None:
    # |mean(D) - mean(D + x)| <= 1/(n+1) for records in [0, 1]; with n = 1 that is 1/2
    r = check_sensitivity(mean, 0.25, AddRemoveOne(), np.array([0.0]), domain=(0, 1), examples=0)
    assert r.violation and r.max_change == pytest.approx(0.5)


def test_dpm_lemmas_3_to_5_hold_and_fail_for_t_below_2q() -> None:
    x = np.linspace(0.05, 0.95, 10)
    kw = dict(bounds=(0.0, 1.0), beta=0.1, n_tilde=10.0)
    for part, claim in (("centreness", 0.3 / (10 / 12)), ("emptiness", 0.1), ("score", 8.6 / 10)):
        r = check_sensitivity(partial(candidate_table, part=part, **kw), claim, AddRemoveOne(), x,
                              norm="linf", domain=(0, 1), examples=0)
        assert not r.violation, r.summary()
        assert r.max_change == pytest.approx(claim)  # each lemma is tight on this input
    bad = check_sensitivity(partial(candidate_table, t=0.1, q=0.2, validate=False, **kw), (0.1 / 0.2 + 5) / 10,
                            AddRemoveOne(), x, norm="linf", domain=(0, 1), examples=0)
    assert bad.violation  # inner slope 2(1-t)/(ñ(1-2q)) = 0.3 > t/(ñq) = 0.05


def test_seeded_search_is_reproducible() -> None:
    args = (unclipped_sum, 1.0, AddRemoveOne(), np.array([0.2, 0.5]))
    a = check_sensitivity(*args, domain=(-5, 5), seed=3, examples=0, random_pairs=5)
    b = check_sensitivity(*args, domain=(-5, 5), seed=3, examples=0, random_pairs=5)
    assert a.to_dict() == b.to_dict()


@pytest.mark.parametrize("claimed", [0, -1, float("nan"), float("inf"), "1", True])
def test_bad_claims_are_refused(claimed: object) -> None:
    with pytest.raises(InputError, match="claimed sensitivity must be a finite number > 0"):
        check_sensitivity(clipped_sum, claimed, AddRemoveOne(), np.array([0.5]), domain=(0, 1))  # type: ignore[arg-type]


def test_bad_input_gives_clear_errors() -> None:
    with pytest.raises(InputError, match="norm must be one of"):
        check_sensitivity(clipped_sum, 1.0, AddRemoveOne(), np.array([0.5]), domain=(0, 1), norm="l3")
    with pytest.raises(InputError, match="relation must be a dpverify.neighbours.NeighbourRelation"):
        check_sensitivity(clipped_sum, 1.0, "add_remove", np.array([0.5]), domain=(0, 1))  # type: ignore[arg-type]
    with pytest.raises(InputError, match="domain"):
        check_sensitivity(clipped_sum, 1.0, AddRemoveOne(), np.array([0.5]))
    # a relation that does not match f's input: a dataset relation given a weighted-graph-like vector works,
    # but an ℓ∞ relation given a 2-D dataset is refused by the relation itself
    with pytest.raises(InputError, match="1-D"):
        check_sensitivity(clipped_sum, 1.0, LInfNeighbours(1.0), np.zeros((3, 2)), examples=0)

    def picky(x: np.ndarray) -> float:
        if len(x) > 2:
            raise ValueError("at most two records")
        return float(np.sum(x))

    with pytest.raises(InputError, match="f raised ValueError: at most two records on an input generated"):
        check_sensitivity(picky, 1.0, AddRemoveOne(), np.array([0.1, 0.2]), domain=(0, 1), examples=0)
    with pytest.raises(InputError, match="on the base input"):
        check_sensitivity(picky, 1.0, AddRemoveOne(), np.array([0.1, 0.2, 0.3]), domain=(0, 1), examples=0)
    with pytest.raises(InputError, match="fixed shape|fixed-length"):
        check_sensitivity(lambda x: np.asarray(x), 1.0, AddRemoveOne(), np.array([0.1, 0.2]), domain=(0, 1),
                          examples=0)


def test_sensitivity_suite_runs_as_expected() -> None:
    """The default sensitivity suite (audits/sensitivity.toml): every entry's outcome equals its expectation."""
    from pathlib import Path

    from dpverify.suites import load_suite, run_suites

    suite = load_suite(Path(__file__).resolve().parents[1] / "audits" / "sensitivity.toml")
    outcomes = run_suites([suite], seed=0)
    bad = [(o.name, o.outcome, o.error) for o in outcomes if not o.matched]
    assert not bad
    assert len(outcomes) == 36
