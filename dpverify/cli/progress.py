"""Progress of a suite run on stderr: a live status line on a terminal, one plain line per entry otherwise.

:class:`Progress` is driven by the command line (``dpverify run`` / ``dpverify certify``):
:meth:`Progress.start` before an entry runs, :meth:`Progress.finish` after it, :meth:`Progress.close` at the end
(or on Ctrl-C).  Two displays:

* **not a terminal** (a log file, CI, a pipe) -- exactly one line per entry, written in two parts so a reader of
  the log sees which entry is running::

      [3/12] classic/gauss ... pass (4.2 s)

* **a terminal** (``stream.isatty()``) -- the same line is printed once the entry finishes, and while an entry
  runs one status line is redrawn in place (carriage return, no ANSI codes) by a small background thread at
  most every ``refresh`` seconds (0.5 s)::

      classic 2/5 done, 0:41 elapsed, ETA 1:02 | [3/12] classic/gauss 12.5 s

  ``2/5`` counts the entries of the running entry's suite already finished (entries kept by ``--resume``
  count), ``elapsed`` is the time spent in that suite in this run, ``ETA`` the mean seconds of its finished
  entries times the entries left (``?`` before the first finishes), and the tail is the running entry's
  own elapsed time.  The line is cut to the terminal width so it never wraps.

Only the standard library is used (a :class:`threading.Thread` and an :class:`threading.Event`).
"""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TextIO

from dpverify.suites import Entry, EntryOutcome

__all__ = ["Progress", "outcome_tail", "format_duration", "REFRESH_SECONDS"]

#: Shortest interval between two redraws of the status line by the background thread.
REFRESH_SECONDS = 0.5


def outcome_tail(o: EntryOutcome) -> str:
    """What a finished entry's progress line ends with: ``"pass (4.2 s)"``, the first line of an error,
    ``"-- expected violation"`` when the outcome is not the expected one."""
    tail = f"{o.outcome} ({o.seconds:.1f} s)"
    if o.outcome == "error":
        first = (o.error or "").splitlines()[0] if o.error else ""
        return f"{tail}: {first}"
    if not o.matched:
        tail += f" -- expected {o.expectation}"
    return tail


def format_duration(seconds: float) -> str:
    """``m:ss`` (``h:mm:ss`` from one hour on) of a non-negative duration."""
    total = int(max(seconds, 0.0) + 0.5)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _is_tty(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if isatty is not None else False
    except (OSError, ValueError):  # a closed or detached stream
        return False


class Progress:
    """Progress display of a run of ``entries`` (every entry of the run, in order) on ``stream``.

    ``done`` are outcomes already finished before this run (kept by ``--resume``); they count as done in their
    suite's ``done/total`` and their seconds enter its ETA.  ``interactive`` defaults to ``stream.isatty()``;
    ``clock`` (seconds, monotonic) and ``width`` (default: the terminal's columns) exist for tests.  Use as a
    context manager, or call :meth:`close`, so the background thread stops and the status line is cleared.
    """

    def __init__(self, stream: TextIO, entries: Sequence[Entry], *, done: Iterable[EntryOutcome] = (),
                 interactive: bool | None = None, refresh: float = REFRESH_SECONDS,
                 clock: Callable[[], float] = time.monotonic, width: int | None = None) -> None:
        self.stream = stream
        self.interactive = _is_tty(stream) if interactive is None else interactive
        self.refresh = max(float(refresh), REFRESH_SECONDS)
        self.total = len(entries)
        self._clock = clock
        self._width = width
        self._suite_total: dict[str, int] = {}
        for e in entries:
            self._suite_total[e.suite] = self._suite_total.get(e.suite, 0) + 1
        self._suite_seconds: dict[str, list[float]] = {s: [] for s in self._suite_total}
        for o in done:
            if o.suite in self._suite_seconds:
                self._suite_seconds[o.suite].append(o.seconds)
        self._suite_started: dict[str, float] = {}
        self._current: tuple[Entry, int, float] | None = None
        self._shown = 0  # length of the status line on screen (0: none)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- driving ------------------------------------------------------------------------------------------

    def start(self, entry: Entry, index: int) -> None:
        """``entry`` (position ``index`` from 0 in the run) is about to run."""
        now = self._clock()
        with self._lock:
            self._suite_started.setdefault(entry.suite, now)
            self._current = (entry, index, now)
            if self.interactive:
                self._draw()
            else:
                self.stream.write(f"[{index + 1}/{self.total}] {entry.name} ... ")
                self.stream.flush()
        if self.interactive and self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="dpverify-progress", daemon=True)
            self._thread.start()

    def finish(self, outcome: EntryOutcome, index: int) -> None:
        """The entry at ``index`` finished with ``outcome``: its line is printed for good (an error's further lines,
        e.g. the user's frames where a mechanism failed, indented below it)."""
        with self._lock:
            self._current = None
            if outcome.suite in self._suite_seconds:
                self._suite_seconds[outcome.suite].append(outcome.seconds)
            if self.interactive:
                self._clear()
                self.stream.write(f"[{index + 1}/{self.total}] {outcome.name} ... ")
            self.stream.write(outcome_tail(outcome) + "\n")
            if outcome.outcome == "error":  # the rest of the error: where in the user's code it failed
                self.stream.writelines(f"    {line}\n" for line in (outcome.error or "").splitlines()[1:])
            self.stream.flush()

    def interrupted(self) -> None:
        """Ctrl-C: the running entry's line ends with ``interrupted``."""
        with self._lock:
            running = self._current
            self._current = None
            if self.interactive:
                self._clear()
                if running is not None:
                    entry, index, _ = running
                    self.stream.write(f"[{index + 1}/{self.total}] {entry.name} ... ")
            if running is not None:
                self.stream.write("interrupted\n")
            self.stream.flush()

    def close(self) -> None:
        """Stop the background thread and clear the status line (idempotent)."""
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join()
        with self._lock:
            self._current = None
            if self.interactive:
                self._clear()
                self.stream.flush()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the status line ----------------------------------------------------------------------------------

    def status_line(self) -> str:
        """The status line for the running entry now (``""`` when none runs); not cut to the width."""
        if self._current is None:
            return ""
        entry, index, started = self._current
        now = self._clock()
        finished = self._suite_seconds[entry.suite]
        total = self._suite_total[entry.suite]
        left = total - len(finished)
        eta = format_duration(sum(finished) / len(finished) * left) if finished else "?"
        elapsed = format_duration(now - self._suite_started[entry.suite])
        return (f"{entry.suite} {len(finished)}/{total} done, {elapsed} elapsed, ETA {eta} | "
                f"[{index + 1}/{self.total}] {entry.name} {now - started:.1f} s")

    def refresh_now(self) -> None:
        """Redraw the status line (what the background thread does every ``refresh`` seconds)."""
        with self._lock:
            self._draw()

    def _loop(self) -> None:
        while not self._stop.wait(self.refresh):
            self.refresh_now()

    def _columns(self) -> int:
        if self._width is not None:
            return self._width
        return shutil.get_terminal_size(fallback=(80, 24)).columns

    def _draw(self) -> None:
        """Rewrite the status line in place (caller holds the lock); spaces erase a longer previous line."""
        line = self.status_line()
        if not line:
            return
        line = line[: max(self._columns() - 1, 10)]
        self.stream.write("\r" + line.ljust(self._shown))
        self.stream.flush()
        self._shown = len(line)

    def _clear(self) -> None:
        """Blank the status line and return to its start (caller holds the lock)."""
        if self._shown:
            self.stream.write("\r" + " " * self._shown + "\r")
            self._shown = 0
