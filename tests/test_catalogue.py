"""Regression of the auditor on the catalogue (audits/catalogue.toml) and the graph suite (audits/graph.toml).

Every broken mechanism must be flagged and every correct one must not, at the suite's quick budget
(stated per entry in the TOML file) and at the fixed run seed 0 (each entry's seed derived from it
and its id, so it does not change when entries are added).  Deterministic: the same seed gives the
same outcome.  For a fresh seed a correct mechanism is flagged with probability at most alpha = 0.05
(the audit's guarantee; tests/test_calibration.py measures it), and the broken ones at these budgets
were chosen so that the violation is far beyond the sampling error (docs/auditor.md, column "ε LB").
"""

from pathlib import Path

import pytest

from dpverify.suites import load_suite, run_entry

AUDITS = Path(__file__).resolve().parents[1] / "audits"
SUITES = [load_suite(AUDITS / "catalogue.toml"), load_suite(AUDITS / "graph.toml")]
ENTRIES = [e for s in SUITES for e in s.entries]


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_catalogue_entry_meets_its_expectation(entry):
    outcome = run_entry(entry, mode="quick", run_seed=0, workers=1)
    assert outcome.error is None, outcome.error
    assert outcome.outcome == entry.expect, (
        f"{entry.id}: expected {entry.expect}, got {outcome.outcome} "
        f"(ε lower bound {outcome.epsilon_lower_bound}, true ε {entry.true_epsilon})"
    )
    if entry.true_epsilon is not None and entry.expect == "pass":
        # a valid lower bound never exceeds the truth (at this seed; probability >= 1 - alpha)
        assert outcome.epsilon_lower_bound <= entry.true_epsilon


def test_catalogue_pairs_every_broken_mechanism_with_a_control():
    broken = {e.mechanism.split(":")[0].rsplit(".", 1)[1] for e in ENTRIES
              if e.mechanism.startswith("algorithms.broken.")}
    import algorithms.broken as b
    modules = {m.__module__.rsplit(".", 1)[1] for m in map(lambda n: getattr(b, n), b.__all__)}
    assert modules <= broken, f"broken mechanisms without a catalogue entry: {sorted(modules - broken)}"
