"""The common result model (dpverify.results): one verdict vocabulary, a validated claim, and ``verdict`` /
``claim`` / ``measured`` under the same names on every result class; report.json version 2 and the reader of
version 1.  Fixed seeds; the audits below have no statistical assertion beyond the field names and types."""

from __future__ import annotations

import doctest
import json
import math
from pathlib import Path

import pytest

import dpverify.results
from algorithms.classic.laplace import Laplace
from algorithms.classic.randomized_response import RandomizedResponse
from dpverify import audit, check_exponential_mechanism, check_theorem
from dpverify.errors import InputError
from dpverify.exact import exact_audit
from dpverify.reporting.compare import compare_runs, load_run_record
from dpverify.results import CheckResult, Measured, PrivacyClaim, Verdict


def test_doctests() -> None:
    assert doctest.testmod(dpverify.results).failed == 0


@pytest.mark.parametrize("eps, delta, match", [(-0.1, 0.0, "epsilon"), (math.inf, 0.0, "epsilon"),
                                               (1.0, 1.0, "delta"), ("1", 0.0, "number"), (math.nan, 0.0, "number")])
def test_claims_are_validated(eps: object, delta: object, match: str) -> None:
    with pytest.raises(InputError, match=match):
        PrivacyClaim(eps, delta)  # type: ignore[arg-type]


def test_verdict_vocabulary() -> None:
    assert [v.value for v in Verdict] == ["pass", "violation", "holds", "violated", "inconclusive", "error", "not-run"]
    assert json.dumps({"v": Verdict.HOLDS}) == '{"v": "holds"}' and str(Verdict.PASS) == "pass"
    assert "not a proof of privacy" in Verdict.PASS.meaning


def test_every_result_answers_verdict_claim_measured() -> None:
    lap = Laplace(epsilon=0.5)
    a = audit(lap, [(0.0, 1.0)], 0.5, samples=20_000, seed=0, workers=1)
    e = exact_audit(RandomizedResponse(epsilon=1.0, k=2), [(0, 1)], 0.5)
    em = check_exponential_mechanism(lambda u, n, rng: rng.integers(0, 3, size=n), [0.0, 1.0, 2.0], 1.0,
                                     samples=5_000, seed=0)
    for r, name in ((a, "epsilon_lower_bound"), (e, "exact_epsilon"), (em, "pvalue")):
        assert isinstance(r, CheckResult) and isinstance(r.verdict, Verdict) and r.measured.name == name
        assert isinstance(r.claim, PrivacyClaim)
    assert a.claim == PrivacyClaim(0.5) and a.measured.value == a.epsilon_lower_bound
    assert e.verdict == Verdict.VIOLATION and e.claim.epsilon == 0.5 and e.measured.value == pytest.approx(1.0)
    assert em.verdict == Verdict.VIOLATION                       # uniform is not softmax(εu/2)


def test_theorem_verdict_is_a_verdict() -> None:
    import numpy as np

    class Coin:
        name, statement, quantity, direction, parameters = "coin", "P[heads] >= 0.4", "probability", "at_least", {}

        def hypotheses(self):  # type: ignore[no-untyped-def]
            return []

        def bound(self) -> float:
            return 0.4

        def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
            return rng.random(n) < 0.5

    r = check_theorem(Coin(), runs=20_000, seed=0)
    assert r.verdict is Verdict.HOLDS and r.verdict == "holds" and r.measured.name == "estimate"


def test_report_version_2_and_the_reader_of_version_1(tmp_path: Path) -> None:
    from dpverify.cli import commands as cli

    suite = tmp_path / "s.toml"
    suite.write_text('[[entry]]\nid = "lap"\nkind = "statistical"\nmechanism = "algorithms.classic.laplace:Laplace"\n'
                     'params = { epsilon = 0.5 }\npairs = [[0.0, 1.0]]\nclaim = { epsilon = 0.5 }\nexpect = "pass"\n'
                     'quick = { samples = 20000 }\n', encoding="utf-8")
    assert cli.main(["run", str(suite), "--out", str(tmp_path / "r"), "--jobs", "1", "--workers", "1"]) == 0
    doc = json.loads((tmp_path / "r" / "report.json").read_text())
    assert doc["schema_version"] == 2
    rec = doc["entries"][0]
    assert rec["measured"] == {"name": "epsilon_lower_bound", "value": rec["epsilon_lower_bound"]}
    old = dict(doc, schema_version=1, entries=[{k: v for k, v in rec.items() if k != "measured"}])
    (tmp_path / "v1.json").write_text(json.dumps(old))
    comparison = compare_runs(load_run_record(tmp_path / "v1.json"), load_run_record(tmp_path / "r" / "report.json"))
    assert not comparison.entries and comparison.unchanged == 1
    # --resume reads the version-1 record too (the entry is kept, not rerun)
    (tmp_path / "r" / "report.json").write_text(json.dumps(old))
    assert cli.main(["run", str(suite), "--out", str(tmp_path / "r"), "--jobs", "1", "--resume"]) == 0
    assert Measured("x", 1.0).to_dict() == {"name": "x", "value": 1.0}


@pytest.mark.parametrize("suite, entry_id, name", [
    ("exact.toml", "pamst-path5-worst-pair", "exact_epsilon"),
    ("catalogue.toml", "laplace", "epsilon_lower_bound"),
])
def test_suite_outcomes_carry_the_measured_quantity(suite: str, entry_id: str, name: str) -> None:
    from dpverify.suites import load_suite, run_entry

    root = Path(__file__).resolve().parents[1]
    entry = next(e for e in load_suite(root / "audits" / suite).entries if e.id == entry_id)
    out = run_entry(entry, "quick", 0, workers=1)
    assert out.measured is not None and out.measured.name == name
    assert out.measured.value == pytest.approx(out.epsilon_lower_bound)
    assert out.verdict in (Verdict.PASS, Verdict.VIOLATION) and out.to_dict()["measured"]["name"] == name


def test_suite_claim_is_validated_and_converts() -> None:
    from dpverify.errors import SuiteError
    from dpverify.suites import Claim

    assert Claim(epsilon=0.5, delta=1e-6).privacy == PrivacyClaim(0.5, 1e-6)
    assert Claim(epsilon=None, sensitivity=1.0, norm="l1").privacy is None
    with pytest.raises(InputError, match="delta"):
        Claim(epsilon=0.5, delta=2.0)
    with pytest.raises(SuiteError, match="sensitivity"):
        Claim(epsilon=None, sensitivity=-1.0, norm="l1")
