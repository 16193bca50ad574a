"""The theorem suites (audits/theorems_*.toml) reproduce their verdicts at the quick budget, run seed 0.

One test per entry (so pytest-xdist spreads them); each entry's expectation is the verdict measured when it was
written, so a change of verdict -- a sampler or bound that changed -- fails here.  Each verdict is a seeded,
deterministic computation; the entries' descriptions say which inputs they use."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpverify.suites import load_suites, preflight, run_entry

ROOT = Path(__file__).resolve().parents[1]
SUITES = load_suites(sorted((ROOT / "audits").glob("theorems_*.toml")))
ENTRIES = [e for s in SUITES for e in s.entries]


def test_theorem_suites_exist_and_load() -> None:
    assert {s.name for s in SUITES} >= {"theorems-seed001", "theorems-seed002-mst", "theorems-seed002-clustering",
                                        "theorems-seed004"}
    assert all(not s.default for s in SUITES)  # not in the default quick run (time budget of dpverify run)
    assert all(e.kind == "theorem" for e in ENTRIES)
    preflight(ENTRIES)


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_theorem_entry_reproduces_its_verdict(entry) -> None:  # noqa: ANN001 -- a suite Entry
    outcome = run_entry(entry, "quick", run_seed=0, workers=1)
    assert outcome.outcome in entry.expected and outcome.matched, outcome.error or outcome.details.get("summary")
