"""Report files honour the umask: CI artifact servers serve them only when they are readable by others.

The atomic writer goes through :func:`tempfile.mkstemp`, whose file is created with mode 0600 whatever the umask;
``report.json``, ``report.md``, ``report.html`` and ``certificate.json`` must instead get ``0o666 & ~umask``
like any file ``open()`` creates."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from dpverify.reporting.certify import certificate_dict
from dpverify.reporting.pages import write_reports
from dpverify.reporting.report import write_text_atomic
from dpverify.suites import load_suite, not_run_outcome, select_entries

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX file modes and umask")

TINY = Path(__file__).parent / "data" / "suites" / "tiny.toml"


@contextmanager
def umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("mask, expected", [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)],
                         ids=["umask022", "umask027", "umask077"])
def test_atomic_writes_honour_the_umask(tmp_path: Path, mask: int, expected: int) -> None:
    with umask(mask):
        write_text_atomic(tmp_path / "a.txt", "x\n")
        write_text_atomic(tmp_path / "a.txt", "y\n")  # replacing an existing file too
    assert mode(tmp_path / "a.txt") == expected
    assert (tmp_path / "a.txt").read_text() == "y\n"
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]  # no temporary file left behind


@pytest.mark.parametrize("mask, expected", [(0o022, 0o644), (0o027, 0o640)], ids=["umask022", "umask027"])
def test_report_and_certificate_files_are_readable_as_the_umask_says(tmp_path: Path, mask: int,
                                                                      expected: int) -> None:
    entries = select_entries([load_suite(TINY)], None)[:2]
    outcomes = [not_run_outcome(e, "quick", 0) for e in entries]
    meta = {"mode": "quick", "seed": 0, "workers": 1, "status": "interrupted"}
    with umask(mask):
        paths = write_reports(tmp_path, outcomes, meta)
        cert = tmp_path / "certificate.json"
        write_text_atomic(cert, str(certificate_dict(outcomes, meta, entries, fingerprint={})))
    assert sorted(paths) == ["html", "json", "md"]
    for path in [*paths.values(), cert]:
        assert mode(path) == expected, path.name
