"""``dpverify`` writing into a pipe whose reader stops early (``dpverify list | head -1``): no BrokenPipeError
traceback, the quiet exit the Python documentation recommends ("Note on SIGPIPE")."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dpverify.reporting.report import write_report_json
from dpverify.suites import load_suite, not_run_outcome, select_entries

TINY = Path(__file__).parent / "data" / "suites" / "tiny.toml"
DPVERIFY = [sys.executable, "-m", "dpverify"]


def closed_reader(args: list[str]) -> subprocess.CompletedProcess[str]:
    """Run ``dpverify ARGS`` with its stdout a pipe whose read end is closed before it writes anything."""
    proc = subprocess.Popen([*DPVERIFY, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read()
    proc.wait(timeout=120)
    return subprocess.CompletedProcess(args, proc.returncode, "", err)


def test_list_into_a_closed_pipe_is_quiet() -> None:
    proc = closed_reader(["list", str(TINY)])
    assert proc.stderr == ""
    assert proc.returncode == 141


def test_compare_json_into_a_closed_pipe_is_quiet(tmp_path: Path) -> None:
    entries = select_entries([load_suite(TINY)], None)
    outcomes = [not_run_outcome(e, "quick", 0) for e in entries]
    for name in ("base", "new"):
        write_report_json(tmp_path / name / "report.json", outcomes, {"mode": "quick", "seed": 0})
    proc = closed_reader(["compare", str(tmp_path / "base"), str(tmp_path / "new"), "--json"])
    assert proc.stderr == ""
    assert proc.returncode == 141


@pytest.mark.skipif(shutil.which("head") is None or sys.platform == "win32", reason="needs a POSIX shell and head")
def test_list_piped_into_head() -> None:
    """The user's pipeline: the default suites' list (tens of kilobytes) into ``head -1``."""
    for _ in range(3):  # whether the reader is gone before the write is a race: try it a few times
        proc = subprocess.run(f"{sys.executable} -m dpverify list | head -1", shell=True, capture_output=True,
                              text=True, timeout=120, cwd=Path(__file__).parents[1])
        assert proc.stderr == "" and len(proc.stdout.splitlines()) == 1, proc.stderr
