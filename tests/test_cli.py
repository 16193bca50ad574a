"""Tests of the dpverify command line (in process via ``cli.main``), report.json and the table."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from markers import SIGINT_IGNORED

from dpverify.cli import commands as cli
from dpverify.reporting import report as report_mod
from dpverify.suites import runner as suite_mod
from dpverify.errors import InputError
from dpverify.reporting.report import format_table, write_report_json
from dpverify.suites import load_suite, not_run_outcome, run_suites

DATA = Path(__file__).parent / "data"
SUITES = DATA / "suites"
TINY = SUITES / "tiny.toml"
ROOT = Path(__file__).resolve().parent.parent
if str(DATA) not in sys.path:
    sys.path.insert(0, str(DATA))

import mechs  # noqa: E402  (tests/data/mechs.py)

#: What a run leaves in its --out directory (the plots and pages need matplotlib).
REPORT_FILES = {"report.json", "report.md", "report.html", "plots"}
ENTRY_KEYS = {"suite", "id", "kind", "mechanism", "claim", "expectation", "outcome", "matched",
              "epsilon_lower_bound", "true_epsilon", "samples", "search_samples", "seed", "seconds",
              "witness", "error", "details", "measured"}


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> mechs.FakeAudit:
    f = mechs.FakeAudit()
    monkeypatch.setattr(suite_mod, "audit", f)
    return f


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``dpverify *argv`` in process; run/certify one entry at a time (``--jobs 1``) unless ``--jobs`` is given,
    so that in-process fakes (monkeypatched audits, counters) see every entry."""
    if argv and argv[0] in ("run", "certify") and "--jobs" not in argv:
        argv = (*argv, "--jobs", "1")
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def read_report(out_dir: Path) -> dict[str, Any]:
    return json.loads((out_dir / "report.json").read_text(encoding="utf-8"))


# -------------------------------------------------------------------------------------------------
# version, usage, list
# -------------------------------------------------------------------------------------------------


def test_version_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.strip() == f"dpverify {report_mod.dpverify_version()}"


def test_version_subprocess() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-m", "dpverify", "--version"], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("dpverify ")


def test_no_command_and_bad_options(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys)
    assert code == 2 and "usage" in err
    code, _, err = run(capsys, "run", str(TINY), "--seed", "-1")
    assert code == 2 and "--seed" in err and "integer >= 0" in err
    code, _, err = run(capsys, "run", str(TINY), "--workers", "0")
    assert code == 2 and "--workers" in err
    code, _, err = run(capsys, "frobnicate")
    assert code == 2 and "invalid choice" in err


def test_list(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "list", str(SUITES))
    assert code == 0 and err == ""
    lines = out.strip().splitlines()
    assert len(lines) == 6
    assert lines[0].split() == ["second/laplace-l1", "statistical", "mechs:laplace_sum", "ε=1", "expect", "pass"]
    assert lines[-1].split() == ["tiny/identity", "statistical", "mechs:identity", "ε=1", "expect", "violation"]
    code, out, _ = run(capsys, "list", str(TINY), "--select", "rr")
    assert code == 0 and out.split()[0] == "tiny/rr" and len(out.strip().splitlines()) == 1


def test_list_delta_claim(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = TINY.read_text().replace("claim = { epsilon = 1.0 }\nexpect = \"violation\"",
                                    "claim = { epsilon = 1.0, delta = 1e-6 }\nexpect = \"violation\"")
    (tmp_path / "t.toml").write_text(text.replace('import_paths = [".."]', f'import_paths = ["{DATA.as_posix()}"]'))
    code, out, _ = run(capsys, "list", str(tmp_path / "t.toml"), "--select", "identity")
    assert code == 0 and "ε=1 δ=1e-06" in out


# -------------------------------------------------------------------------------------------------
# run: exit codes, progress, table, report
# -------------------------------------------------------------------------------------------------


def test_run_all_match(tmp_path: Path, capsys: pytest.CaptureFixture[str], fake: mechs.FakeAudit) -> None:
    out_dir = tmp_path / "rep"
    code, out, err = run(capsys, "run", str(SUITES), "--out", str(out_dir), "--seed", "5", "--workers", "3")
    assert code == 0
    progress = [line for line in err.splitlines() if line.startswith("[")]
    assert len(progress) == 6
    assert progress[0].startswith("[1/6] second/laplace-l1 ... pass (") and progress[0].endswith(" s)")
    assert progress[5].startswith("[6/6] tiny/identity ... violation (")
    assert out.strip().splitlines()[-1] == "6/6 entries as expected"
    assert "tiny/identity" in out and "✓" in out and "✗" not in out
    assert all(c["workers"] == 3 for c in fake.calls)

    rep = read_report(out_dir)
    assert rep["schema"] == "dpverify.report" and rep["schema_version"] == 2
    assert rep["status"] == "complete" and rep["mode"] == "quick" and rep["seed"] == 5 and rep["workers"] == 3
    assert rep["dpverify_version"] == report_mod.dpverify_version()
    assert rep["python"] and rep["platform"] and rep["created"].endswith("+00:00")
    assert len(rep["entries"]) == 6
    for e in rep["entries"]:
        assert set(e) == ENTRY_KEYS
        assert e["seed"] == suite_mod.entry_seed(5, e["suite"], e["id"])
    ident = rep["entries"][-1]
    assert ident["outcome"] == "violation" and ident["matched"] is True
    assert ident["epsilon_lower_bound"] == "inf" and ident["true_epsilon"] == "inf"
    assert ident["claim"] == {"epsilon": 1.0, "delta": 0.0}
    assert ident["witness"]["event"] == "out > 0.5" and ident["witness"]["impossible"] is True
    assert rep["entries"][0]["true_epsilon"] is None and rep["entries"][0]["error"] is None
    assert rep["summary"]["entries"] == 6 and rep["summary"]["matched"] == 6
    assert rep["summary"]["mismatched"] == 0 and rep["summary"]["errors"] == 0
    assert isinstance(rep["summary"]["seconds"], float)
    assert {p.name for p in out_dir.iterdir()} <= REPORT_FILES  # no temp files left


def test_run_full_mode_and_select(tmp_path: Path, capsys: pytest.CaptureFixture[str], fake: mechs.FakeAudit) -> None:
    code, out, err = run(capsys, "run", str(SUITES), "--full", "--select", "tiny/*", "--select", "laplace-l1",
                         "--out", str(tmp_path))
    assert code == 0
    # second.toml gives no full budget: the built-in default
    assert [c["samples"] for c in fake.calls] == [1_000_000, 40000, 40000, 40000, 40000]
    assert read_report(tmp_path)["mode"] == "full"
    assert out.strip().splitlines()[-1] == "5/5 entries as expected"


def test_run_mismatch_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str], fake: mechs.FakeAudit) -> None:
    fake.violating, fake.oracle = (), False  # nothing is caught: both broken entries mismatch
    code, out, err = run(capsys, "run", str(SUITES), "--out", str(tmp_path))
    assert code == 1
    assert "[6/6] tiny/identity ... pass (" in err and "expected violation" in err
    assert out.strip().splitlines()[-1] == "4/6 entries as expected"
    assert "✗" in out
    summary = read_report(tmp_path)["summary"]
    assert summary == {**summary, "entries": 6, "matched": 4, "mismatched": 2, "errors": 0}


def test_run_entry_error_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(suite_mod, "audit", mechs.FakeAudit(raise_on={0: InputError("samples too small")}))
    code, out, err = run(capsys, "run", str(TINY), "--out", str(tmp_path))
    assert code == 1
    assert "[1/4] tiny/laplace ... error (" in err and "samples too small" in err
    assert "tiny/laplace: error: samples too small" in out
    rep = read_report(tmp_path)
    assert rep["entries"][0]["outcome"] == "error" and rep["entries"][0]["error"] == "samples too small"
    assert rep["summary"]["errors"] == 1 and rep["summary"]["matched"] == 3


def test_run_bad_suite_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], fake: mechs.FakeAudit) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(TINY.read_text().replace('expect = "violation"', 'expect = "broken"'))
    code, out, err = run(capsys, "run", str(bad), "--out", str(tmp_path / "rep"))
    assert code == 2 and out == ""
    assert err.startswith("dpverify: error: ") and "entry 'identity'" in err and "key 'expect'" in err
    assert "Traceback" not in err
    assert not fake.calls and not (tmp_path / "rep").exists()


def test_run_unknown_import_exits_2_before_running(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   fake: mechs.FakeAudit) -> None:
    bad = tmp_path / "bad.toml"
    text = TINY.read_text().replace('import_paths = [".."]', f'import_paths = ["{DATA.as_posix()}"]')
    bad.write_text(text.replace('"mechs:identity"', '"mechs:identityy"').replace('"mechs:randomized_response"', '"nomod_xyz:randomized_response"'))
    code, _, err = run(capsys, "run", str(bad), "--out", str(tmp_path / "rep"))
    assert code == 2 and "Traceback" not in err
    assert "2 entries cannot be loaded" in err
    assert "entry 'identity': key 'mechanism'" in err and "did you mean 'identity'" in err
    assert not fake.calls


def test_run_missing_path_and_bad_select(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         fake: mechs.FakeAudit) -> None:
    code, _, err = run(capsys, "run", str(tmp_path / "nope.toml"), "--out", str(tmp_path))
    assert code == 2 and err.startswith("dpverify: error:") and "no such suite file" in err
    code, _, err = run(capsys, "run", str(TINY), "--select", "zzz*", "--out", str(tmp_path))
    assert code == 2 and "no entry matches the selection 'zzz*'" in err
    code, _, err = run(capsys, "list", str(TINY), "--select", "zzz*")
    assert code == 2 and "dpverify: error:" in err


def test_unwritable_out_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], fake: mechs.FakeAudit) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    code, _, err = run(capsys, "run", str(TINY), "--out", str(blocker))
    assert code == 2 and "cannot write the report" in err and "--out" in err and "Traceback" not in err
    assert not fake.calls


def test_default_run_uses_marked_suites(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch, fake: mechs.FakeAudit) -> None:
    audits = tmp_path / "audits"
    audits.mkdir()
    for src in (TINY, SUITES / "second.toml"):
        text = src.read_text().replace('import_paths = [".."]', f'import_paths = ["{DATA.as_posix()}"]')
        (audits / src.name).write_text(text)
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "run")
    assert code == 0 and out.strip().splitlines()[-1] == "4/4 entries as expected"  # tiny only (default = true)
    assert (tmp_path / "dpverify-report" / "report.json").exists()
    code, out, _ = run(capsys, "list")
    assert code == 0 and len(out.strip().splitlines()) == 4


def test_report_rewritten_after_every_entry(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    snapshots: list[dict[str, Any]] = []
    inner = mechs.FakeAudit()

    def spying_audit(*args: Any, **kw: Any) -> Any:
        snapshots.append(read_report(tmp_path))  # what a reader sees while this entry runs
        return inner(*args, **kw)

    monkeypatch.setattr(suite_mod, "audit", spying_audit)
    assert run(capsys, "run", str(TINY), "--out", str(tmp_path))[0] == 0
    assert len(snapshots) == 4
    for k, snap in enumerate(snapshots):
        assert snap["status"] == "running" and len(snap["entries"]) == 4
        outcomes = [e["outcome"] for e in snap["entries"]]
        assert outcomes[k:] == ["not-run"] * (4 - k)
        assert "not-run" not in outcomes[:k]
    final = read_report(tmp_path)
    assert final["status"] == "complete" and [e["outcome"] for e in final["entries"]] == \
        ["pass", "pass", "pass", "violation"]


def test_keyboard_interrupt_keeps_finished_entries(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(suite_mod, "audit", mechs.FakeAudit(raise_on={1: KeyboardInterrupt()}))
    code, out, err = run(capsys, "run", str(TINY), "--out", str(tmp_path))
    assert code == 130
    assert "interrupted after 1/4 entries" in err
    rep = read_report(tmp_path)
    assert rep["status"] == "interrupted"
    assert [(e["id"], e["outcome"]) for e in rep["entries"]] == [
        ("laplace", "pass"), ("laplace-class-linf", "not-run"), ("rr", "not-run"), ("identity", "not-run")]
    assert rep["entries"][0]["matched"] is True and rep["entries"][1]["matched"] is False
    assert rep["summary"]["not_run"] == 3 and rep["summary"]["matched"] == 1
    assert "not-run" in out and out.strip().splitlines()[-1] == "1/4 entries as expected"
    assert {p.name for p in tmp_path.iterdir()} <= REPORT_FILES


class _SignalTurnedIntoError(mechs.FakeAudit):
    """On its second call a SIGINT arrives, and the code it lands in turns the ``KeyboardInterrupt`` into an
    exception of its own, as a C extension interrupted while it imports does (``ImportError: initialization
    failed``)."""

    def __call__(self, *args: Any, **kw: Any) -> Any:
        if len(self.calls) == 1:
            self.calls.append({})
            try:
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(5.0)                     # the handler raises here
            except KeyboardInterrupt:
                raise ImportError("initialization failed") from None
            raise AssertionError("no SIGINT handler raised")
        return super().__call__(*args, **kw)


@SIGINT_IGNORED
def test_a_signal_a_library_turns_into_an_error_is_an_interruption(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str],
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The entry the signal landed in is reported not-run, never as an error of the audited code."""
    monkeypatch.setattr(suite_mod, "audit", _SignalTurnedIntoError())
    code, out, err = run(capsys, "run", str(TINY), "--out", str(tmp_path), "--jobs", "1")
    assert code == 130 and "interrupted after 1/4 entries" in err and "ImportError" not in err + out
    rep = read_report(tmp_path)
    assert rep["status"] == "interrupted"
    assert [e["outcome"] for e in rep["entries"]] == ["pass", "not-run", "not-run", "not-run"]
    assert rep["summary"]["errors"] == 0


# -------------------------------------------------------------------------------------------------
# report.json and the table
# -------------------------------------------------------------------------------------------------


def _outcomes(fake_audit: mechs.FakeAudit, monkeypatch: pytest.MonkeyPatch) -> list[suite_mod.EntryOutcome]:
    monkeypatch.setattr(suite_mod, "audit", fake_audit)
    return run_suites([load_suite(TINY)], seed=1)


def test_write_report_json_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outs = _outcomes(mechs.FakeAudit(), monkeypatch)
    path = tmp_path / "deep" / "report.json"
    assert write_report_json(path, outs, {"mode": "quick", "seed": 1, "workers": None}) == path
    before = path.read_text()
    json.loads(before)  # strict JSON: no bare Infinity/NaN
    assert "Infinity" not in before and "NaN" not in before

    def failing_replace(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(report_mod.os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        write_report_json(path, outs[:1], {"mode": "quick", "seed": 1, "workers": None})
    assert path.read_text() == before  # the old report is intact
    assert [p.name for p in path.parent.iterdir()] == ["report.json"]  # and no temp file is left


def test_report_encodes_nan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outs = _outcomes(mechs.FakeAudit(), monkeypatch)
    weird = suite_mod.EntryOutcome(**{**outs[0].__dict__, "epsilon_lower_bound": math.nan,
                                      "witness": {"x": [1.0, math.inf, -math.inf]}})
    write_report_json(tmp_path / "r.json", [weird], {"mode": "quick", "seed": 0, "workers": 2})
    rep = json.loads((tmp_path / "r.json").read_text())
    assert rep["entries"][0]["epsilon_lower_bound"] == "nan"
    assert rep["entries"][0]["witness"] == {"x": [1.0, "inf", "-inf"]}
    assert rep["workers"] == 2


def test_format_table(monkeypatch: pytest.MonkeyPatch) -> None:
    outs = _outcomes(mechs.FakeAudit(violating=(), raise_on={2: RuntimeError("boom")}), monkeypatch)
    outs.append(not_run_outcome(load_suite(SUITES / "second.toml").entries[0], "quick", 1))
    table = format_table(outs)
    lines = table.splitlines()
    assert lines[0].split() == ["id", "claim", "ε", "ε", "found", "true", "ε", "outcome", "expected", "ok",
                                "samples", "seconds"]
    rows = {line.split()[0]: line.split() for line in lines[2:7]}
    assert rows["tiny/laplace"][1:4] == ["1", "0.9", "1"] and rows["tiny/laplace"][6] == "✓"
    assert rows["tiny/laplace"][7] == "20000"
    assert rows["tiny/identity"][2:7] == ["0.9", "inf", "pass", "violation", "✗"]
    assert rows["tiny/rr"][4] == "error" and rows["tiny/rr"][2] == "-"
    assert rows["second/laplace-l1"][3:7] == ["-", "not-run", "pass", "-"]
    assert "tiny/rr: error: RuntimeError: boom" in table
    assert lines[-1] == "2/5 entries as expected"


# -------------------------------------------------------------------------------------------------
# end to end with the real audit
# -------------------------------------------------------------------------------------------------


def test_run_real_audit_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The tiny suites with the real dpverify.audit (small budgets, one worker): every entry as expected."""
    pytest.importorskip("dpverify.statistical.auditor")
    code, out, err = run(capsys, "run", str(SUITES), "--workers", "1", "--out", str(tmp_path))
    assert code == 0, out + err
    rep = read_report(tmp_path)
    got = {f"{e['suite']}/{e['id']}": e["outcome"] for e in rep["entries"]}
    assert got == {"second/laplace-l1": "pass", "second/count-add-remove-broken": "violation",
                   "tiny/laplace": "pass", "tiny/laplace-class-linf": "pass", "tiny/rr": "pass",
                   "tiny/identity": "violation"}
    broken = rep["entries"][1]
    assert broken["epsilon_lower_bound"] > 0.5 and broken["witness"] is not None
    assert rep["summary"]["matched"] == 6
    # one seed gives the same report
    again = tmp_path / "again"
    assert run(capsys, "run", str(SUITES), "--workers", "1", "--out", str(again))[0] == 0
    assert [e["epsilon_lower_bound"] for e in read_report(again)["entries"]] == \
        [e["epsilon_lower_bound"] for e in rep["entries"]]


def test_run_sequential_stops_early_on_the_broken_entry(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--sequential is the anytime-valid audit: the same verdicts as the plain run on the tiny suites; the broken
    identity stops in its first round before its test budget, the controls spend the whole budget; the report says
    so; --resume checks the flag."""
    code, out, err = run(capsys, "run", str(SUITES), "--workers", "1", "--out", str(tmp_path), "--sequential")
    assert code == 0, out + err
    rep = read_report(tmp_path)
    assert rep["sequential"] is True
    by_id = {e["id"]: e for e in rep["entries"]}
    broken = by_id["identity"]["details"]["anytime"]
    assert by_id["identity"]["outcome"] == "violation" and len(broken["rounds"]) == 1 and broken["stopped_early"]
    assert broken["samples_to_verdict"] < broken["samples"]
    control = by_id["laplace-l1"]["details"]["anytime"]
    assert by_id["laplace-l1"]["outcome"] == "pass" and len(control["rounds"]) == control["planned_rounds"]
    assert by_id["laplace-l1"]["samples"] == control["test_samples"]
    assert control["test_samples"] + control["search_samples"] == control["samples_to_verdict"] == control["samples"]
    code, _, err = run(capsys, "run", str(SUITES), "--workers", "1", "--out", str(tmp_path), "--resume")
    assert code == 2 and "--sequential: the report was run with it, this run without" in err


# -------------------------------------------------------------------------------------------------
# --resume, crashing entries, --scheduler
# -------------------------------------------------------------------------------------------------


def _interrupted_run(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                     suite: Path = TINY, at: int = 2) -> dict[str, Any]:
    """A run of ``suite`` interrupted (Ctrl-C) while its entry ``at`` runs; the report it leaves."""
    monkeypatch.setattr(suite_mod, "audit", mechs.FakeAudit(raise_on={at: KeyboardInterrupt()}))
    assert run(capsys, "run", str(suite), "--seed", "3", "--out", str(tmp_path))[0] == 130
    return read_report(tmp_path)


def test_resume_runs_only_the_unfinished_entries(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    before = _interrupted_run(tmp_path, capsys, monkeypatch)
    assert [e["outcome"] for e in before["entries"]] == ["pass", "pass", "not-run", "not-run"]
    fake = mechs.FakeAudit()
    monkeypatch.setattr(suite_mod, "audit", fake)
    code, out, err = run(capsys, "run", str(TINY), "--seed", "3", "--out", str(tmp_path), "--resume")
    assert code == 0
    assert [c["name"] for c in fake.calls] == ["randomized_response", "identity"]  # only the rest ran
    assert "resuming " in err and "2 finished entries kept, 2 to run" in err
    assert "[3/4] tiny/rr ... pass" in err and "[1/4]" not in err
    after = read_report(tmp_path)
    assert after["status"] == "complete" and after["entries"][:2] == before["entries"][:2]  # kept as recorded
    assert [e["outcome"] for e in after["entries"]] == ["pass", "pass", "pass", "violation"]
    assert out.strip().splitlines()[-1] == "4/4 entries as expected"
    # a complete report resumes to itself without running anything
    fake.calls.clear()
    assert run(capsys, "run", str(TINY), "--seed", "3", "--out", str(tmp_path), "--resume")[0] == 0
    assert not fake.calls and read_report(tmp_path)["entries"] == after["entries"]


def test_interrupted_resume_keeps_everything_finished(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    _interrupted_run(tmp_path, capsys, monkeypatch, at=1)
    monkeypatch.setattr(suite_mod, "audit", mechs.FakeAudit(raise_on={1: KeyboardInterrupt()}))
    code, _, err = run(capsys, "run", str(TINY), "--seed", "3", "--out", str(tmp_path), "--resume")
    assert code == 130 and "interrupted after 2/4 entries" in err
    rep = read_report(tmp_path)
    assert rep["status"] == "interrupted"
    assert [e["outcome"] for e in rep["entries"]] == ["pass", "pass", "not-run", "not-run"]
    monkeypatch.setattr(suite_mod, "audit", mechs.FakeAudit())
    assert run(capsys, "run", str(TINY), "--seed", "3", "--out", str(tmp_path), "--resume")[0] == 0
    assert read_report(tmp_path)["summary"]["matched"] == 4


def test_resume_refuses_another_invocation(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    _interrupted_run(tmp_path, capsys, monkeypatch)
    fake = mechs.FakeAudit()
    monkeypatch.setattr(suite_mod, "audit", fake)
    base = ["run", "--out", str(tmp_path), "--resume"]
    code, _, err = run(capsys, *base, str(TINY), "--seed", "3", "--full")
    assert code == 2 and "cannot resume" in err and "mode: the report is quick, this run is full" in err
    code, _, err = run(capsys, *base, str(TINY), "--seed", "4")
    assert code == 2 and "seed: the report has --seed 3, this run --seed 4" in err
    code, _, err = run(capsys, *base, str(SUITES), "--seed", "3")
    assert code == 2 and "suites: the report ran" in err and "second.toml" in err
    assert "drop --resume" in err and "Traceback" not in err
    code, _, err = run(capsys, "run", str(TINY), "--out", str(tmp_path / "none"), "--resume")
    assert code == 2 and "does not exist" in err
    assert not fake.calls
    assert read_report(tmp_path)["status"] == "interrupted"  # a refused resume leaves the report alone


def test_resume_reruns_changed_entries_and_follows_the_selection(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    suite = tmp_path / "tiny.toml"
    suite.write_text(TINY.read_text().replace('import_paths = [".."]', f'import_paths = ["{DATA.as_posix()}"]'))
    out_dir = tmp_path / "rep"
    monkeypatch.setattr(suite_mod, "audit", mechs.FakeAudit(raise_on={3: KeyboardInterrupt()}))
    assert run(capsys, "run", str(suite), "--out", str(out_dir))[0] == 130
    # the claim of the first entry changes: its old outcome no longer answers the suite
    suite.write_text(suite.read_text().replace("claim = { epsilon = 1.0 }\nexpect = \"pass\"",
                                               "claim = { epsilon = 2.0 }\nexpect = \"pass\"", 1))
    fake = mechs.FakeAudit()
    monkeypatch.setattr(suite_mod, "audit", fake)
    code, _, err = run(capsys, "run", str(suite), "--out", str(out_dir), "--resume", "--select", "laplace*",
                       "--select", "identity")
    assert code == 0
    assert "run again (the suite entry changed since the report): tiny/laplace (claim)" in err
    assert [c["name"] for c in fake.calls] == ["laplace_sum", "identity"]
    rep = read_report(out_dir)
    assert [e["id"] for e in rep["entries"]] == ["laplace", "laplace-class-linf", "identity"]
    assert rep["entries"][0]["claim"]["epsilon"] == 2.0


def test_crashing_entry_does_not_stop_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A mechanism raising a plain RuntimeError, with the real audit: recorded as an error, the next entry runs."""
    suite = tmp_path / "crash.toml"
    suite.write_text(f'''[suite]
name = "crash"
import_paths = ["{DATA.as_posix()}"]
quick = {{ samples = 5000, search_samples = 2000 }}
[[entry]]
id = "boom"
kind = "statistical"
mechanism = "mechs:crash"
claim = {{ epsilon = 1.0 }}
expect = "pass"
pairs = [[0.0, 1.0]]
[[entry]]
id = "after"
kind = "statistical"
mechanism = "mechs:randomized_response"
claim = {{ epsilon = 1.0986123 }}
expect = "pass"
alpha = 0.001
pairs = [[0, 1]]
''')
    code, out, err = run(capsys, "run", str(suite), "--workers", "1", "--out", str(tmp_path / "rep"))
    assert code == 1 and "Traceback" not in err
    rep = read_report(tmp_path / "rep")
    boom, after = rep["entries"]
    assert boom["outcome"] == "error" and "boom" in boom["error"]
    assert after["outcome"] == "pass" and rep["status"] == "complete"
    assert "[1/2] crash/boom ... error (" in err and "[2/2] crash/after ... pass (" in err
    assert out.strip().splitlines()[-1] == "1/2 entries as expected"


def test_scheduler_wraps_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import contextlib

    distributed = pytest.importorskip("dpverify.execution.distributed")
    events: list[str] = []

    @contextlib.contextmanager
    def fake_scheduler(address: str) -> Any:
        events.append(f"open {address}")
        yield None
        events.append("close")

    def audit(*args: Any, **kw: Any) -> Any:
        events.append("audit")
        return mechs.FakeAudit()(*args, **kw)

    monkeypatch.setattr(distributed, "use_scheduler", fake_scheduler)
    monkeypatch.setattr(suite_mod, "audit", audit)
    code, _, _ = run(capsys, "run", str(TINY), "--select", "rr", "--scheduler", "tcp://10.1.2.3:8786",
                     "--out", str(tmp_path))
    assert code == 0 and events == ["open tcp://10.1.2.3:8786", "audit", "close"]
    assert read_report(tmp_path)["scheduler"] == "tcp://10.1.2.3:8786"
    events.clear()
    assert run(capsys, "certify", str(TINY), "--quick", "--select", "rr", "--scheduler", "tcp://h:1",
               "--out", str(tmp_path / "c"))[0] == 0
    assert events == ["open tcp://h:1", "audit", "close"]


def test_scheduler_without_dask_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch, fake: mechs.FakeAudit) -> None:
    pytest.importorskip("dpverify.execution.distributed")
    monkeypatch.setitem(sys.modules, "distributed", None)  # `import distributed` now fails as if not installed
    code, out, err = run(capsys, "run", str(TINY), "--scheduler", "tcp://127.0.0.1:8786", "--out", str(tmp_path))
    assert code == 2 and out == "" and "Traceback" not in err
    assert err.startswith("dpverify: error: ") and 'pip install "dpverify[distributed]"' in err
    assert not fake.calls


def test_resume_damaged_report(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                               monkeypatch: pytest.MonkeyPatch) -> None:
    rep = _interrupted_run(tmp_path, capsys, monkeypatch)
    rep["entries"][0]["seconds"] = {"not": "a number"}
    (tmp_path / "report.json").write_text(json.dumps(rep), encoding="utf-8")
    code, _, err = run(capsys, "run", str(TINY), "--seed", "3", "--out", str(tmp_path), "--resume")
    assert code == 2 and "the record of tiny/laplace is damaged" in err and "Traceback" not in err
    (tmp_path / "report.json").write_text("{", encoding="utf-8")
    code, _, err = run(capsys, "run", str(TINY), "--seed", "3", "--out", str(tmp_path), "--resume")
    assert code == 2 and "not valid JSON" in err


# -------------------------------------------------------------------------------------------------
# --jobs: entries side by side
# -------------------------------------------------------------------------------------------------


def _timeless(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if k != "seconds"} for e in entries]


def test_jobs_run_entries_side_by_side_with_the_same_outcomes(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    code1, out1, _ = run(capsys, "run", str(SUITES), "--out", str(tmp_path / "one"), "--jobs", "1")
    code2, out2, err2 = run(capsys, "run", str(SUITES), "--out", str(tmp_path / "two"), "--jobs", "2")
    assert code1 == code2 == 0
    one, two = read_report(tmp_path / "one"), read_report(tmp_path / "two")
    assert two["jobs"] == 2 and one["jobs"] == 1 and two["status"] == "complete"
    # each entry's seed derives from the run seed and its suite/id: the same outcomes, listed in suite order
    assert _timeless(two["entries"]) == _timeless(one["entries"])
    assert [line.split()[0] for line in out2.splitlines()[2:8]] == [line.split()[0] for line in out1.splitlines()[2:8]]
    assert sorted(line.split()[0] for line in err2.splitlines() if line.startswith("[")) == [
        f"[{i}/6]" for i in range(1, 7)]


def test_jobs_is_one_on_a_dask_cluster_and_validated(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from dpverify.cli.commands import _jobs, build_parser

    args = build_parser().parse_args(["run", "--scheduler", "tcp://127.0.0.1:1", "--jobs", "4"])
    assert _jobs(args) == 1
    code, _, err = run(capsys, "run", str(TINY), "--out", str(tmp_path), "--jobs", "0")
    assert code == 2 and "--jobs" in err
