"""Tests of dpverify.cli.progress: the plain per-entry lines and the live status line on a (fake) terminal."""

from __future__ import annotations

import io
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from dpverify.cli import commands as cli
from dpverify.suites import runner as suite_mod
from dpverify.cli.progress import Progress, format_duration, outcome_tail
from dpverify.suites import Entry, EntryOutcome, load_suite, not_run_outcome

DATA = Path(__file__).parent / "data"
TINY = DATA / "suites" / "tiny.toml"
if str(DATA) not in sys.path:
    sys.path.insert(0, str(DATA))

import mechs  # noqa: E402  (tests/data/mechs.py)


class FakeTTY(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


class Clock:
    """A hand-driven monotonic clock."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def entries() -> list[Entry]:
    return list(load_suite(TINY).entries)  # tiny/laplace, tiny/laplace-class-linf, tiny/rr, tiny/identity


def done(entry: Entry, seconds: float, outcome: str = "pass") -> EntryOutcome:
    return replace(not_run_outcome(entry, "quick", 0), outcome=outcome, matched=outcome == entry.expect,
                   seconds=seconds)


def test_format_duration() -> None:
    assert format_duration(0) == "0:00"
    assert format_duration(61.4) == "1:01"
    assert format_duration(3725) == "1:02:05"
    assert format_duration(-3) == "0:00"


def test_outcome_tail(entries: list[Entry]) -> None:
    assert outcome_tail(done(entries[0], 4.21)) == "pass (4.2 s)"
    assert outcome_tail(done(entries[3], 1.0, "pass")) == "pass (1.0 s) -- expected violation"
    crashed = replace(done(entries[0], 0.5, "error"), error="RuntimeError: boom\nmore")
    assert outcome_tail(crashed) == "error (0.5 s): RuntimeError: boom"


def test_plain_stream_one_line_per_entry(entries: list[Entry]) -> None:
    stream = io.StringIO()
    with Progress(stream, entries) as p:
        assert not p.interactive
        p.start(entries[0], 0)
        assert stream.getvalue() == "[1/4] tiny/laplace ... "  # visible in a log while the entry runs
        p.finish(done(entries[0], 2.0), 0)
        p.start(entries[1], 1)
        p.interrupted()
    assert stream.getvalue() == ("[1/4] tiny/laplace ... pass (2.0 s)\n"
                                 "[2/4] tiny/laplace-class-linf ... interrupted\n")
    assert "\r" not in stream.getvalue() and p._thread is None  # no background thread off a terminal


def test_status_line_on_a_terminal(entries: list[Entry]) -> None:
    stream, clock = FakeTTY(), Clock()
    p = Progress(stream, entries, clock=clock, width=200)
    assert p.interactive
    p.start(entries[0], 0)
    try:
        assert stream.getvalue() == "\rtiny 0/4 done, 0:00 elapsed, ETA ? | [1/4] tiny/laplace 0.0 s"
        clock.now += 3.25
        p.refresh_now()
        assert stream.getvalue().endswith("\rtiny 0/4 done, 0:03 elapsed, ETA ? | [1/4] tiny/laplace 3.2 s")
        clock.now += 0.75
        p.finish(done(entries[0], 4.0), 0)
        text = stream.getvalue()
        line_len = len("tiny 0/4 done, 0:03 elapsed, ETA ? | [1/4] tiny/laplace 3.2 s")
        assert text.endswith("\r" + " " * line_len + "\r[1/4] tiny/laplace ... pass (4.0 s)\n")  # line erased
        p.start(entries[1], 1)
        # one entry of 4 s done, three left: ETA 12 s; 4 s spent in the suite so far
        assert stream.getvalue().endswith(
            "\rtiny 1/4 done, 0:04 elapsed, ETA 0:12 | [2/4] tiny/laplace-class-linf 0.0 s")
        assert p.status_line() == "tiny 1/4 done, 0:04 elapsed, ETA 0:12 | [2/4] tiny/laplace-class-linf 0.0 s"
    finally:
        p.close()
    assert stream.getvalue().endswith("\r")  # close() erases the status line
    assert p.status_line() == ""  # and forgets the running entry: the thread draws nothing more


def test_status_line_is_cut_to_the_width_and_shorter_lines_erase_longer(entries: list[Entry]) -> None:
    stream, clock = FakeTTY(), Clock()
    with Progress(stream, entries, clock=clock, width=30) as p:
        p.start(entries[1], 1)
        first = stream.getvalue()
        assert first == "\r" + p.status_line()[:29]
        p.refresh_now()
        assert stream.getvalue() == first * 2  # same length: no padding needed


def test_resumed_entries_count_as_done(entries: list[Entry]) -> None:
    stream, clock = FakeTTY(), Clock()
    with Progress(stream, entries, done=[done(entries[0], 10.0)], clock=clock, width=200) as p:
        p.start(entries[2], 2)
        assert p.status_line() == "tiny 1/4 done, 0:00 elapsed, ETA 0:30 | [3/4] tiny/rr 0.0 s"
        p.interrupted()
    assert stream.getvalue().endswith("[3/4] tiny/rr ... interrupted\n")


def test_background_thread_refreshes_and_stops(entries: list[Entry]) -> None:
    stream = FakeTTY()
    p = Progress(stream, entries, refresh=0.01)
    assert p.refresh == 0.5  # never more often than every 0.5 s
    p.start(entries[0], 0)
    thread = p._thread
    assert thread is not None and thread.daemon and thread.is_alive()
    p.finish(done(entries[0], 0.1), 0)
    p.start(entries[1], 1)
    assert p._thread is thread  # one thread for the whole run
    p.close()
    assert not thread.is_alive() and p._thread is None
    p.close()  # idempotent


def test_cli_on_a_fake_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(suite_mod, "audit", mechs.FakeAudit())
    err, out = FakeTTY(), io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(sys, "stdout", out)
    assert cli.main(["run", str(TINY), "--out", str(tmp_path), "--jobs", "1"]) == 0
    text = err.getvalue()
    assert "\rtiny 0/4 done, 0:00 elapsed, ETA ? | [1/4] tiny/laplace" in text
    assert "tiny 3/4 done" in text and "[4/4] tiny/identity ... violation (" in text
    # the permanent lines, once the status lines are erased, are the plain ones
    permanent = [seg for line in text.split("\n") for seg in [line.split("\r")[-1]] if seg.startswith("[")]
    assert [s.split(" ... ")[0] for s in permanent] == ["[1/4] tiny/laplace", "[2/4] tiny/laplace-class-linf",
                                                        "[3/4] tiny/rr", "[4/4] tiny/identity"]
    assert "4/4 entries as expected" in out.getvalue()
