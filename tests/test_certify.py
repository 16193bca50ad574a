"""Tests of dpverify.reporting.certify (certificates, loading, compare) and of `dpverify certify` / `dpverify compare`."""

from __future__ import annotations

import hashlib
import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest

from dpverify.cli import commands as cli
from dpverify.suites import runner as suite_mod
from dpverify.reporting.certify import code_fingerprint, entry_modules, git_fingerprint
from dpverify.reporting.compare import compare_runs, load_run_record, witness_upper_bound
from dpverify.errors import InputError
from dpverify.statistical.stats import clopper_pearson_lower, clopper_pearson_upper
from dpverify.suites import entry_seed, load_suite

DATA = Path(__file__).parent / "data"
TINY = DATA / "suites" / "tiny.toml"
ROOT = Path(__file__).resolve().parent.parent
if str(DATA) not in sys.path:
    sys.path.insert(0, str(DATA))

import mechs  # noqa: E402  (tests/data/mechs.py)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``dpverify *argv`` in process; run/certify one entry at a time (``--jobs 1``) unless ``--jobs`` is given,
    so that in-process fakes (monkeypatched audits, counters) see every entry."""
    if argv and argv[0] in ("run", "certify") and "--jobs" not in argv:
        argv = (*argv, "--jobs", "1")
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -------------------------------------------------------------------------------------------------
# hand-built records
# -------------------------------------------------------------------------------------------------


def witness(k_num: int, k_den: int, n: int = 10_000, level: float = 0.001, event: str = "out > 0.5",
            pair: str = "pair[0]") -> dict[str, Any]:
    """A statistical witness as report.json records it (bounds at the per-test ``level``)."""
    p_low = float(clopper_pearson_lower(k_num, n, level))
    p_high = float(clopper_pearson_upper(k_den, n, level))
    lb = math.log(p_low / p_high) if p_low > 0 else -math.inf
    return {"pair_label": pair, "direction": 0, "event": event, "count_num": k_num, "count_den": k_den,
            "samples": n, "p_num_low": p_low, "p_den_high": p_high, "epsilon_lower_bound": lb}


def rec(id: str, outcome: str = "pass", expectation: str = "pass", kind: str = "statistical",
        lb: float | str | None = 0.5, w: dict[str, Any] | None = None, details: dict[str, Any] | None = None,
        epsilon: float = 1.0, suite: str = "s", error: str | None = None) -> dict[str, Any]:
    return {"suite": suite, "id": id, "kind": kind, "mechanism": f"m:{id}",
            "claim": {"epsilon": epsilon, "delta": 0.0}, "expectation": expectation, "outcome": outcome,
            "matched": outcome == expectation, "epsilon_lower_bound": lb, "true_epsilon": None, "samples": 10_000,
            "search_samples": 1000, "seed": 1, "seconds": 0.1, "witness": w, "error": error, "details": details}


def theorem(verdict: str, estimate: float, interval: tuple[float, float]) -> dict[str, Any]:
    return {"estimate": estimate, "interval": list(interval), "bound": 0.75, "verdict": verdict}


def write(path: Path, entries: list[dict[str, Any]], schema: str = "dpverify.report", **meta: Any) -> Path:
    doc = {"schema": schema, "schema_version": 1, "created": "2025-01-01T00:00:00+00:00", "status": "complete",
           "mode": "full", "seed": 0, **meta, "entries": entries}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def compare(tmp_path: Path, base: list[dict[str, Any]], new: list[dict[str, Any]], **kw: Any) -> Any:
    return compare_runs(load_run_record(write(tmp_path / "base.json", base, **kw)),
                        load_run_record(write(tmp_path / "new.json", new, **kw)))


def by_entry(comparison: Any) -> dict[str, tuple[str, ...]]:
    return {c.entry: c.changes for c in comparison.entries}


# -------------------------------------------------------------------------------------------------
# witness_upper_bound: the noise rule of compare
# -------------------------------------------------------------------------------------------------


def test_witness_upper_bound_recovers_the_level() -> None:
    w = witness(6000, 4000, level=0.001)
    expected = math.log(float(clopper_pearson_upper(6000, 10_000, 0.001)) /
                        float(clopper_pearson_lower(4000, 10_000, 0.001)))
    ub = witness_upper_bound({"witness": w, "claim": {"epsilon": 1.0, "delta": 0.0}})
    assert ub == pytest.approx(expected, rel=1e-9)
    assert w["epsilon_lower_bound"] < math.log(6000 / 4000) < ub
    # the level is read from p_den_high when the numerator count is 0 (p_num_low is 0)
    w0 = witness(0, 4000, level=0.001)
    assert w0["p_num_low"] == 0.0
    assert witness_upper_bound({"witness": w0}) == pytest.approx(
        math.log(float(clopper_pearson_upper(0, 10_000, 0.001)) / float(clopper_pearson_lower(4000, 10_000, 0.001))))
    # impossible event in BASE: nothing can rise above it
    assert witness_upper_bound({"witness": witness(600, 0)}) == math.inf
    # delta is subtracted from the numerator's upper bound
    with_delta = witness_upper_bound({"witness": w, "claim": {"epsilon": 1.0, "delta": 0.01}})
    assert with_delta is not None and with_delta < ub
    assert witness_upper_bound({"witness": None}) is None
    assert witness_upper_bound({"witness": {"event": "x"}}) is None


def test_witness_upper_bound_of_a_real_audit() -> None:
    """On a real audit's witness, the recovered bound brackets the point estimate at the audit's own level."""
    import functools

    from dpverify.statistical.auditor import audit

    result = audit(functools.partial(mechs.laplace_sum, epsilon=1.0), [(0.0, 1.0)], epsilon=1.0, samples=20_000,
                   search_samples=5000, seed=3, workers=1)
    record = {"witness": result.witness.to_dict(), "claim": {"epsilon": 1.0, "delta": 0.0}}
    ub = witness_upper_bound(record)
    assert ub is not None and result.epsilon_lower_bound < result.witness.test.point_estimate < ub
    from scipy import stats

    t = result.witness.test
    level = stats.beta.cdf(t.p_num_low, t.count_num, t.samples - t.count_num + 1)
    assert level == pytest.approx(result.alpha / (2 * len(result.tests)), rel=1e-6)


# -------------------------------------------------------------------------------------------------
# compare_runs on hand-built reports: one test per kind of change
# -------------------------------------------------------------------------------------------------


def test_regression_and_fixed(tmp_path: Path) -> None:
    c = compare(tmp_path, [rec("a"), rec("b", outcome="pass", expectation="violation"), rec("c")],
                [rec("a", outcome="violation", lb="inf", w=witness(600, 0)),
                 rec("b", outcome="violation", expectation="violation"), rec("c")])
    assert by_entry(c) == {"s/a": ("regression", "epsilon-rose"), "s/b": ("fixed",)}
    assert c.regression and c.unchanged == 1
    regression = c.entries[0]
    assert regression.detail == ("pass -> violation (expected pass); ε lower bound 0.5 -> inf, above the claim 1 "
                                 "(BASE has no witness counts)")
    assert c.counts()["regression"] == 1 and c.counts()["fixed"] == 1
    c = compare(tmp_path, [rec("a", outcome="violation", lb="inf", expectation="violation")],
                [rec("a", outcome="violation", lb="inf", expectation="violation")])
    assert by_entry(c) == {}  # inf -> inf did not rise


def test_error_and_not_run_are_regressions(tmp_path: Path) -> None:
    c = compare(tmp_path, [rec("a"), rec("b")],
                [rec("a", outcome="error", lb=None, error="MechanismError: boom\ntrace"),
                 rec("b", outcome="not-run", lb=None)])
    assert by_entry(c) == {"s/a": ("regression",), "s/b": ("regression",)}
    assert "error: MechanismError: boom" in c.entries[0].detail and "trace" not in c.entries[0].detail


def test_outcome_changed_without_a_change_of_match(tmp_path: Path) -> None:
    c = compare(tmp_path, [rec("a", outcome="pass", expectation="violation")],
                [rec("a", outcome="error", expectation="violation", lb=None, error="boom")])
    assert by_entry(c) == {"s/a": ("outcome-changed",)} and not c.regression


def test_epsilon_rose_on_the_same_event(tmp_path: Path) -> None:
    base = rec("a", lb=0.3, w=witness(6000, 4000))       # BASE's upper bound on this event: about 0.5
    assert 0.45 < witness_upper_bound(base) < 0.55
    rose = rec("a", lb=0.6, w=witness(6500, 3500))       # NEW's lower bound 0.5... above it
    noise = rec("a", lb=0.35, w=witness(6100, 3900))     # within BASE's interval: not listed
    assert rose["witness"]["epsilon_lower_bound"] > witness_upper_bound(base)
    rose["epsilon_lower_bound"] = rose["witness"]["epsilon_lower_bound"]
    c = compare(tmp_path, [base], [rose])
    assert by_entry(c) == {"s/a": ("epsilon-rose",)} and not c.regression
    assert "above BASE's upper confidence bound" in c.entries[0].detail
    assert "on the same witness event" in c.entries[0].detail
    noise["epsilon_lower_bound"] = noise["witness"]["epsilon_lower_bound"]
    assert by_entry(compare(tmp_path, [base], [noise])) == {}


def test_epsilon_rose_through_another_event_and_with_a_regression(tmp_path: Path) -> None:
    base = rec("a", lb=0.3, w=witness(6000, 4000))
    other = rec("a", outcome="violation", lb=1.2, w=witness(7800, 2000, event="out > 1.5"))
    other["epsilon_lower_bound"] = other["witness"]["epsilon_lower_bound"]
    c = compare(tmp_path, [base], [other])
    assert by_entry(c) == {"s/a": ("regression", "epsilon-rose")}
    detail = c.entries[0].detail
    assert "NEW's witness is another event: 'out > 1.5' on pair[0]; BASE's: 'out > 0.5' on pair[0]" in detail
    assert detail.count("ε lower bound") == 1  # the rise replaces the plain before/after


def test_epsilon_rise_without_witness_uses_the_claim_and_impossible_events_never_rise(tmp_path: Path) -> None:
    c = compare(tmp_path, [rec("a", lb=0.2), rec("b", lb="inf", outcome="violation", expectation="violation",
                                                  w=witness(600, 0))],
                [rec("a", lb=0.9), rec("b", lb="inf", outcome="violation", expectation="violation",
                                       w=witness(900, 0))])
    assert by_entry(c) == {}  # 0.9 is below the claim 1; an impossible event's upper bound is inf
    c = compare(tmp_path, [rec("a", lb=0.2)], [rec("a", lb=1.1, outcome="violation")])
    assert by_entry(c) == {"s/a": ("regression", "epsilon-rose")}
    assert "above the claim 1 (BASE has no witness counts)" in c.entries[0].detail


def test_exact_epsilon_rose(tmp_path: Path) -> None:
    c = compare(tmp_path, [rec("x", kind="exact", lb=0.5), rec("y", kind="exact", lb=0.5)],
                [rec("x", kind="exact", lb=0.5 + 1e-12), rec("y", kind="exact", lb=0.6)])
    assert by_entry(c) == {"s/y": ("epsilon-rose",)}  # rounding is not a rise
    assert c.entries[0].detail == "exact ε 0.5 -> 0.6 (computed, no sampling noise)"


def test_theorem_verdicts(tmp_path: Path) -> None:
    base = [rec("t1", kind="theorem", outcome="holds", expectation="holds", lb=None,
                details=theorem("holds", 0.81, (0.79, 0.83))),
            rec("t2", kind="theorem", outcome="violated", expectation="holds", lb=None,
                details=theorem("violated", 0.6, (0.55, 0.65))),
            rec("t3", kind="theorem", outcome="holds", expectation="holds", lb=None,
                details={"points": [{"verdict": "holds"}, {"verdict": "holds"}]})]
    new = [rec("t1", kind="theorem", outcome="inconclusive", expectation="holds", lb=None,
               details=theorem("inconclusive", 0.76, (0.72, 0.80))),
           rec("t2", kind="theorem", outcome="inconclusive", expectation="holds", lb=None,
               details=theorem("inconclusive", 0.74, (0.70, 0.78))),
           rec("t3", kind="theorem", outcome="violated", expectation="holds", lb=None,
               details={"points": [{"verdict": "holds"}, {"verdict": "violated"}]})]
    c = compare(tmp_path, base, new)
    assert by_entry(c) == {"s/t1": ("regression", "verdict-changed"), "s/t3": ("regression", "verdict-changed"),
                           "s/t2": ("verdict-changed",)}
    details = {e.entry: e.detail for e in c.entries}
    assert details["s/t1"] == ("holds (estimate 0.81 [0.79, 0.83] vs bound 0.75) -> "
                               "inconclusive (estimate 0.76 [0.72, 0.8] vs bound 0.75)")
    assert details["s/t3"] == "holds (2/2 points hold) -> violated (1/2 points hold)"


def test_claim_changed_added_removed(tmp_path: Path) -> None:
    c = compare(tmp_path, [rec("a"), rec("gone"), rec("e", epsilon=1.0)],
                [rec("a", outcome="violation", expectation="violation"), rec("e", epsilon=2.0), rec("new")])
    assert by_entry(c) == {"s/a": ("outcome-changed", "claim-changed"), "s/e": ("claim-changed",),
                           "s/new": ("added",), "s/gone": ("removed",)}
    assert not c.regression  # a flipped expectation is shown, not counted as a regression
    details = {e.entry: e.detail for e in c.entries}
    assert details["s/a"].endswith("expectation pass -> violation")
    assert 'claim {"epsilon":1.0,"delta":0.0} -> {"epsilon":2.0,"delta":0.0}' in details["s/e"]
    assert [e.entry for e in c.entries] == ["s/a", "s/e", "s/new", "s/gone"]  # table order by kind


def test_notes_text_and_json(tmp_path: Path) -> None:
    base = load_run_record(write(tmp_path / "b.json", [rec("a")], mode="quick"))
    new = load_run_record(write(tmp_path / "n.json", [rec("a", outcome="violation"), rec("b")], status="interrupted"))
    c = compare_runs(base, new)
    assert "mode differs: quick -> full" in c.notes
    assert "NEW is interrupted: its not-run entries count as not matching" in c.notes
    assert any("code not compared" in n for n in c.notes)
    text = c.format_text()
    lines = text.splitlines()
    assert lines[0].startswith(f"BASE  {tmp_path / 'b.json'}  (report, quick mode, seed 0")
    row = next(line for line in lines if line.startswith("REGRESSION"))
    assert row.split()[:4] == ["REGRESSION", "s/a", "pass", "✓"] and "violation ✗" in row
    assert lines[-2] == "1 regression, 1 added, 0 unchanged"
    assert lines[-1].startswith("REGRESSION: 1 claim(s)")
    doc = c.to_dict()
    assert doc["schema"] == "dpverify.comparison" and doc["regression"] is True
    assert doc["changes"][0]["changes"] == ["regression"] and doc["changes"][0]["base"]["outcome"] == "pass"
    json.dumps(doc, allow_nan=False)


def test_code_changes_between_certificates(tmp_path: Path) -> None:
    fp = {"git": {"commit": "a" * 40, "dirty": False},
          "modules": {"m": {"path": "m.py", "sha256": "1" * 64}, "old": {"path": "old.py", "sha256": "2" * 64}},
          "dpverify": {"sha256": "x", "files": {"audit.py": "3" * 64}}}
    fp2 = {"git": {"commit": "b" * 40, "dirty": True},
           "modules": {"m": {"path": "m.py", "sha256": "4" * 64}},
           "dpverify": {"sha256": "y", "files": {"audit.py": "3" * 64, "new.py": "5" * 64}}}
    base = load_run_record(write(tmp_path / "b.json", [rec("a")], schema="dpverify.certificate", fingerprint=fp,
                                 versions={"numpy": "2.0", "python": "3.11"}))
    new = load_run_record(write(tmp_path / "n.json", [rec("a")], schema="dpverify.certificate", fingerprint=fp2,
                                versions={"numpy": "2.1", "python": "3.11"}))
    c = compare_runs(base, new)
    assert [(x.what, x.base, x.new) for x in c.code] == [
        ("git commit", "a" * 40, "b" * 40), ("git dirty", False, True), ("module m", "1" * 64, "4" * 64),
        ("module old", "2" * 64, None), ("dpverify new.py", None, "5" * 64), ("version numpy", "2.0", "2.1")]
    assert not c.entries and not c.notes and not c.regression
    text = c.format_text()
    assert "  module m: 111111111111 -> 444444444444" in text and "  module old: 222222222222 -> absent" in text
    assert "no entry changed" in text


@pytest.mark.parametrize("content, words", [
    ("{not json", "not valid JSON"),
    ('{"schema": "other", "schema_version": 1, "entries": []}', "schema 'other' is neither"),
    ('{"schema": "dpverify.report", "schema_version": 3, "entries": []}', "schema version 3 is not supported"),
    ('{"schema": "dpverify.report", "schema_version": 1, "entries": [{"id": "x"}]}', "the file is damaged"),
])
def test_load_run_record_errors(tmp_path: Path, content: str, words: str) -> None:
    path = tmp_path / "r.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=words):
        load_run_record(path)


def test_load_run_record_directories(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="holds neither certificate.json nor report.json"):
        load_run_record(tmp_path)
    with pytest.raises(InputError, match="no such file"):
        load_run_record(tmp_path / "missing.json")
    write(tmp_path / "report.json", [rec("a")])
    assert load_run_record(tmp_path).kind == "report"
    write(tmp_path / "certificate.json", [rec("a")], schema="dpverify.certificate")
    assert load_run_record(tmp_path).kind == "certificate"  # a certificate is preferred


# -------------------------------------------------------------------------------------------------
# the fingerprint
# -------------------------------------------------------------------------------------------------


def test_git_fingerprint(tmp_path: Path) -> None:
    inside = git_fingerprint(ROOT)
    if inside is None:
        pytest.skip("not a git checkout (or no git)")
    assert len(inside["commit"]) == 40 and isinstance(inside["dirty"], bool)
    assert git_fingerprint(tmp_path) is None  # outside any checkout


def test_code_fingerprint_hashes_audited_modules_and_builders(tmp_path: Path) -> None:
    (tmp_path / "h5_builders.py").write_text("def inputs(n):\n    return [0.5] * n\n", encoding="utf-8")
    suite_file = tmp_path / "b.toml"
    suite_file.write_text(f'''[suite]
name = "b"
import_paths = ["{DATA.as_posix()}", "{tmp_path.as_posix()}"]
[[entry]]
id = "built"
kind = "statistical"
mechanism = "mechs:laplace_sum"
params = {{ epsilon = 1.0 }}
claim = {{ epsilon = 1.0 }}
expect = "pass"
input = {{ build = "h5_builders:inputs", params = {{ n = 2 }} }}
relation = {{ kind = "linf", radius = 1.0 }}
''', encoding="utf-8")
    entries = list(load_suite(suite_file).entries)
    assert entry_modules(entries) == {"b/built": ["mechs", "h5_builders"]}
    fp = code_fingerprint(entries, cwd=tmp_path)
    assert fp["modules"]["h5_builders"] == {"path": "h5_builders.py", "sha256": sha256(tmp_path / "h5_builders.py")}
    assert fp["modules"]["mechs"]["sha256"] == sha256(DATA / "mechs.py")
    assert fp["modules"]["mechs"]["path"] == (DATA / "mechs.py").resolve().as_posix()  # outside cwd: absolute
    files = fp["dpverify"]["files"]
    assert files["reporting/certify.py"] == sha256(ROOT / "dpverify" / "reporting" / "certify.py")
    assert "cli/commands.py" in files
    assert fp["git"] is None  # tmp_path is no checkout


# -------------------------------------------------------------------------------------------------
# the commands
# -------------------------------------------------------------------------------------------------


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> mechs.FakeAudit:
    f = mechs.FakeAudit()
    monkeypatch.setattr(suite_mod, "audit", f)
    return f


def test_certify_full_budgets_and_certificate(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              fake: mechs.FakeAudit) -> None:
    code, out, err = run(capsys, "certify", str(TINY), "--seed", "4", "--out", str(tmp_path))
    assert code == 0, err
    assert [c["samples"] for c in fake.calls] == [40000] * 4  # the full budgets
    assert out.strip().splitlines()[-1] == "4/4 entries as expected"
    assert f"certificate: {tmp_path / 'certificate.json'} (full mode, every outcome as expected)" in err
    cert = json.loads((tmp_path / "certificate.json").read_text(encoding="utf-8"))
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert cert["schema"] == "dpverify.certificate" and cert["schema_version"] == 2
    assert cert["mode"] == "full" and cert["seed"] == 4 and cert["matched"] is True and cert["status"] == "complete"
    assert cert["entries"] == report["entries"] and cert["summary"] == report["summary"]
    assert cert["seeds"] == {"run": 4, "entries": {f"tiny/{i}": entry_seed(4, "tiny", i)
                                                    for i in ("laplace", "laplace-class-linf", "rr", "identity")}}
    assert cert["fingerprint"]["modules"]["mechs"]["sha256"] == sha256(DATA / "mechs.py")
    assert cert["fingerprint"]["entry_modules"]["tiny/rr"] == ["mechs"]
    assert set(cert["versions"]) == {"python", "numpy", "numpy_kernels", "scipy", "dpverify", "platform"}
    assert cert["report"] == "report.json"


def test_certify_quick_mismatch_and_interruption(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(suite_mod, "audit", mechs.FakeAudit(violating=()))
    code, _, err = run(capsys, "certify", str(TINY), "--quick", "--out", str(tmp_path))
    assert code == 1 and "NOT every outcome as expected" in err
    cert = json.loads((tmp_path / "certificate.json").read_text(encoding="utf-8"))
    assert cert["mode"] == "quick" and cert["matched"] is False
    # an interrupted certify leaves the report of the finished entries and no certificate (not even the old one)
    monkeypatch.setattr(suite_mod, "audit", mechs.FakeAudit(raise_on={1: KeyboardInterrupt()}))
    code, _, err = run(capsys, "certify", str(TINY), "--quick", "--out", str(tmp_path))
    assert code == 130 and "no certificate written" in err
    assert not (tmp_path / "certificate.json").exists()
    assert json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))["status"] == "interrupted"


def test_compare_command(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(suite_mod, "audit", mechs.FakeAudit())
    assert run(capsys, "certify", str(TINY), "--quick", "--out", str(tmp_path / "base"))[0] == 0
    monkeypatch.setattr(suite_mod, "audit", mechs.FakeAudit(violating=()))  # identity no longer caught
    assert run(capsys, "run", str(TINY), "--out", str(tmp_path / "new"))[0] == 1

    code, out, err = run(capsys, "compare", str(tmp_path / "base"), str(tmp_path / "new"))
    assert code == 3 and err == ""
    row = next(line for line in out.splitlines() if line.startswith("REGRESSION"))
    assert row.split()[:2] == ["REGRESSION", "tiny/identity"]
    assert "code not compared" in out  # NEW is a report
    code, out, _ = run(capsys, "compare", str(tmp_path / "base"), str(tmp_path / "new" / "report.json"), "--json")
    doc = json.loads(out)
    assert code == 3 and doc["regression"] is True and doc["counts"]["regression"] == 1
    assert doc["counts"]["unchanged"] == 3

    code, out, _ = run(capsys, "compare", str(tmp_path / "base"), str(tmp_path / "base"))
    assert code == 0 and "no entry changed" in out and out.strip().splitlines()[-1] == "4 unchanged"
    code, out, _ = run(capsys, "compare", str(tmp_path / "new"), str(tmp_path / "base"))
    assert code == 0 and "fixed" in out  # the other way round it is a fix

    code, out, err = run(capsys, "compare", str(tmp_path / "base"), str(tmp_path / "nowhere"))
    assert code == 2 and out == "" and err.startswith("dpverify: error: ") and "no such file" in err
