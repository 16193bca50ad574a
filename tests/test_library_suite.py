"""audits/libraries.toml at its quick budgets: every outcome as expected (diffprivlib, OpenDP and python-dp called
once per release; controls and documented misuses).  Runs when the extras are installed (they are in ``dev``).

Error level: the seeded entries (diffprivlib) are deterministic at their fixed seeds; the OpenDP and python-dp
controls cannot be seeded and run at alpha = 0.001, so a false alarm among them has probability at most 0.001 per
entry (7 entries: at most 0.007 per run); their violations are of twice the claim or more, found with margins of
0.4-1.0 in ε at these budgets (docs/libraries.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("diffprivlib", reason="the libraries suite needs diffprivlib: pip install -e '.[dev]'")
pytest.importorskip("opendp", reason="the libraries suite needs opendp: pip install -e '.[dev]'")
pytest.importorskip("pydp", reason="the libraries suite needs python-dp: pip install -e '.[dev]'")
pytest.importorskip("dp_accounting", reason="the zCDP entries need dp-accounting: pip install -e '.[dev]'")

from dpverify.suites import EntryOutcome, load_suite, run_suites  # noqa: E402

SUITE = Path(__file__).resolve().parents[1] / "audits" / "libraries.toml"


@pytest.fixture(scope="module")
def outcomes() -> dict[str, EntryOutcome]:
    (suite,) = [load_suite(SUITE)]
    return {o.id: o for o in run_suites([suite], mode="quick", seed=0, workers=2)}


def test_every_outcome_as_expected(outcomes: dict[str, EntryOutcome]) -> None:
    wrong = {i: (o.outcome, o.expectation, o.error) for i, o in outcomes.items() if not o.matched}
    assert not wrong
    assert len(outcomes) >= 12


def test_zcdp_claim_on_opendp_gaussian_passes_at_rho_and_is_flagged_at_half(
        outcomes: dict[str, EntryOutcome]) -> None:
    right, half = outcomes["odp-gaussian-zcdp"], outcomes["odp-gaussian-zcdp-half"]
    assert right.outcome == "pass" and half.outcome == "violation"
    assert right.details is not None and right.details["profile_claim"] == {"zcdp": 0.5}   # read from OpenDP's map
    assert half.details is not None and half.details["profile_claim"] == {"zcdp": 0.25}
    # the bound at δ = 0.01 exceeds the ε(0.01) that ρ = 0.25 implies (1.76), not the one ρ = 0.5 implies (2.75)
    assert half.details["worst_epsilon_claimed"] < half.epsilon_lower_bound < right.details["worst_epsilon_claimed"]


def test_every_library_and_both_outcomes_are_covered(outcomes: dict[str, EntryOutcome]) -> None:
    for prefix in ("dpl-", "odp-", "pydp-"):
        kinds = {o.expectation for i, o in outcomes.items() if i.startswith(prefix)}
        assert kinds == {"pass", "violation"}, prefix


def test_unseeded_targets_say_so(outcomes: dict[str, EntryOutcome]) -> None:
    assert outcomes["pydp-count"].result.reproducible is False
    assert outcomes["dpl-laplace"].result.reproducible is True
