"""A mechanism that breaks the contract or raises in a worker process: the user sees the one line that matters and
where in *their* code, never the pool's ``_RemoteTraceback`` or ``concurrent.futures`` internals.

The mechanisms are in ``tests/data/failing_mechs.py``; the suite runs them with two sampling workers.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import dpverify
from dpverify.errors import MechanismError, format_error

DATA = Path(__file__).parent / "data"
MODULE = DATA / "failing_mechs.py"
if str(DATA) not in sys.path:
    sys.path.insert(0, str(DATA))

import failing_mechs  # noqa: E402

LINE_DEF_ROWS = 14    # def one_row_too_many
LINE_CALL = 22        # return scale_noise(noise, -1.0)
LINE_RAISE = 27       # raise ValueError(...)

SUITE = f"""[suite]
name = "failing"
import_paths = ["{DATA.as_posix()}"]
quick = {{ samples = 200000, search_samples = 100000 }}

[[entry]]
id = "rows"
kind = "statistical"
mechanism = "failing_mechs:one_row_too_many"
claim = {{ epsilon = 1.0 }}
expect = "pass"
pairs = [[0.0, 1.0]]

[[entry]]
id = "raises"
kind = "statistical"
mechanism = "failing_mechs:raises_in_a_helper"
claim = {{ epsilon = 1.0 }}
expect = "pass"
pairs = [[0.0, 1.0]]
"""


def test_the_lines_in_the_test_match_the_module() -> None:
    lines = MODULE.read_text().splitlines()
    assert lines[LINE_DEF_ROWS - 1].startswith("def one_row_too_many")
    assert "return scale_noise" in lines[LINE_CALL - 1]
    assert "LINE_RAISE" in lines[LINE_RAISE - 1]


def test_cli_run_shows_the_message_and_the_users_frames_only(tmp_path: Path) -> None:
    suite = tmp_path / "failing.toml"
    suite.write_text(SUITE)
    proc = subprocess.run([sys.executable, "-m", "dpverify", "run", str(suite), "--out", str(tmp_path / "rep"),
                           "--jobs", "1", "--workers", "2"], capture_output=True, text=True, timeout=300)
    err = proc.stderr
    assert proc.returncode == 1, err
    assert "the mechanism returned 100001 rows for n=100000" in err and "the contract is mechanism(x, n, rng)" in err, err
    assert "the mechanism raised ValueError" in err and "the noise scale must be positive, got -1.0" in err, err
    assert f'{MODULE}", line {LINE_RAISE}, in scale_noise' in err, err
    assert f'{MODULE}", line {LINE_CALL}, in raises_in_a_helper' in err, err
    assert f'{MODULE}", line {LINE_DEF_ROWS}, in one_row_too_many' in err, err
    for noise in ("_RemoteTraceback", "concurrent/futures", "multiprocessing", "dpverify/execution", "Traceback"):
        assert noise not in err, (noise, err)
    records = {e["id"]: e for e in json.loads((tmp_path / "rep" / "report.json").read_text())["entries"]}
    assert f"line {LINE_RAISE}, in scale_noise" in records["raises"]["error"]


def test_audit_on_two_workers_raises_without_the_remote_traceback() -> None:
    with pytest.raises(MechanismError) as info:
        dpverify.audit(failing_mechs.raises_in_a_helper, [(0.0, 1.0)], epsilon=1.0, samples=200_000,
                       search_samples=100_000, workers=2, seed=0)
    exc = info.value
    assert exc.__cause__ is None and exc.__suppress_context__
    text = format_error(exc)
    assert text.splitlines()[0].startswith("the mechanism raised ValueError on input x0 of pair 0")
    assert f'{MODULE}", line {LINE_RAISE}, in scale_noise' in text
    assert "concurrent" not in text and "dpverify/" not in text
    assert all("concurrent" not in str(entry.path) for entry in info.traceback)  # raised afresh here


def test_audit_python_traceback_shows_the_note(tmp_path: Path) -> None:
    """What a script calling ``dpverify.audit`` prints: the message, the user's frames (a note), no remote chain."""
    script = tmp_path / "script.py"
    script.write_text(f"import sys; sys.path.insert(0, {str(DATA)!r})\n"
                      "import dpverify, failing_mechs\n"
                      "dpverify.audit(failing_mechs.one_row_too_many, [(0.0, 1.0)], epsilon=1.0, samples=200_000,\n"
                      "               search_samples=100_000, workers=2)\n")
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert "MechanismError: the mechanism returned 100001 rows for n=100000" in proc.stderr, proc.stderr
    assert f'{MODULE}", line {LINE_DEF_ROWS}, in one_row_too_many' in proc.stderr
    assert "_RemoteTraceback" not in proc.stderr and "concurrent/futures" not in proc.stderr, proc.stderr
    assert len(proc.stderr.splitlines()) < 25, proc.stderr


def test_in_process_errors_carry_the_same_note() -> None:
    with pytest.raises(MechanismError) as info:
        dpverify.audit(failing_mechs.raises_in_a_helper, [(0.0, 1.0)], epsilon=1.0, samples=2000,
                       search_samples=1000, workers=1, seed=0)
    assert f'line {LINE_RAISE}, in scale_noise' in format_error(info.value)
