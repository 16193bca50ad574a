"""Signals during a run of the command line: SIGINT (Ctrl-C) and SIGTERM (what CI runners and ``timeout`` send).

Both stop a run the same way, once: the first signal raises :class:`KeyboardInterrupt` in the main thread, and
every later one is only recorded, so the code that handles the interruption -- stopping the workers, writing the
final ``report.json``, ``report.md`` and ``report.html`` -- is never itself interrupted.  :meth:`Interrupts.deferred`
postpones the first signal to the end of a block (a rewrite of ``report.json`` between two entries completes, then
the run stops); :meth:`Interrupts.hold` records every signal from then on without raising (the final write of a
run that finished).

A process forked while the handlers are installed (a sampling worker) inherits them.  There SIGTERM ends the process
as by default, and SIGINT is ignored while the run's process lives (a terminal's Ctrl-C reaches the whole process
group; the run's process stops its workers itself, and a worker's own ``KeyboardInterrupt`` would only print a
traceback), else it raises ``KeyboardInterrupt`` as by default.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType, TracebackType
from typing import Any

__all__ = ["Interrupts", "STOP_SIGNALS", "RETRY_SECONDS", "ignore_interrupts_in_worker"]

#: Seconds after which an interruption the run has not acknowledged (:meth:`Interrupts.hold`) is raised again.
RETRY_SECONDS = 0.25

#: The signals that stop a run.
STOP_SIGNALS: tuple[signal.Signals, ...] = (signal.SIGINT, signal.SIGTERM)


class Interrupts:
    """SIGINT and SIGTERM handlers for the duration of a ``with`` block (installed only in the main thread of the
    main interpreter, where Python allows it; a signal ignored when the block starts stays ignored).

    ``received`` lists the signals received, in order; :attr:`exit_status` is ``128 +`` the first one (130 for
    SIGINT, 143 for SIGTERM), or 130 for a ``KeyboardInterrupt`` raised without a signal.  ``restore=False``
    ignores both signals after the block: for a process about to exit, where a late signal would otherwise
    interrupt the interpreter's shutdown and print a traceback under a finished report, or change its exit status.
    ``paused=True`` starts as after :meth:`pause`: the command line installs the handlers first thing and resumes
    once it is ready to handle an interruption (a run: once it can write a report).
    """

    def __init__(self, *, restore: bool = True, paused: bool = False) -> None:
        self.received: list[int] = []
        self.restore = restore
        self._raised = False
        self._held = False
        self._deferring = 1 if paused else 0
        self._pid = os.getpid()
        self._previous: dict[int, Any] = {}
        self._retry = False
        self._pending_since: float | None = None
        self._closed = False
        self._watchdog: threading.Thread | None = None
        self._outer: Interrupts | None = None

    def __enter__(self) -> Interrupts:
        global _active
        if threading.current_thread() is not threading.main_thread():
            return self
        self._pid = os.getpid()
        _register_fork_hooks()
        self._outer, _active = _active, self
        for sig in STOP_SIGNALS:
            try:
                previous = signal.getsignal(sig)
                if previous is signal.SIG_IGN:  # e.g. started with nohup, or in the background of a script
                    continue
                self._previous[sig] = signal.signal(sig, self._handle)
            except (ValueError, OSError):  # not the main interpreter, or a platform without the signal
                continue
        self._start_watchdog()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        global _active
        self._closed = True
        if _active is self:
            _active = self._outer
        if not self.restore:  # the process is about to exit: ignore late signals at the OS level, which (unlike
            self.hold()       # a Python handler) the interpreter's shutdown does not reset to the default
            for sig in self._previous:
                signal.signal(sig, signal.SIG_IGN)
            return
        for sig, previous in self._previous.items():
            signal.signal(sig, previous)
        self._previous.clear()

    # -- the handler --------------------------------------------------------------------------------------

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if os.getpid() != self._pid:  # a forked worker inherited this handler
            if signum == signal.SIGINT and os.getppid() == self._pid:
                return  # a Ctrl-C of the process group: the run's process stops its workers itself
            if signum == signal.SIGINT:
                raise KeyboardInterrupt
            signal.signal(signum, signal.SIG_DFL)  # SIGTERM: end the worker, as by default
            os.kill(os.getpid(), signum)
            return
        retry, self._retry = self._retry, False
        if not retry:
            self.received.append(signum)
        if self._held or (self._raised and not retry):
            return
        if self._deferring or _ignoring_frame(frame):
            self._watch()  # raised when the deferred block ends, or by a retry
            return
        self._raised = True
        self._watch()
        raise KeyboardInterrupt

    def _watch(self) -> None:
        """Raise the interruption again every :data:`RETRY_SECONDS` until the run acknowledges it (:meth:`hold`).
        A signal is not raised where Python would only print the exception and go on -- in ``os.fork``'s hooks
        (the handlers are paused around every fork) or a ``__del__`` -- nor inside a deferred block; the retry
        raises it once the main thread is out of there, even when it then waits for workers."""
        if self._pending_since is None:
            self._pending_since = time.monotonic()

    def _start_watchdog(self) -> None:
        """The thread behind :meth:`_watch`, started with the block (never from a signal handler, which may run
        next to an ``os.fork``); it sleeps and reads two attributes, holding no lock a forked child could inherit."""
        main = threading.main_thread().ident
        if not self._previous or main is None or not hasattr(signal, "pthread_kill"):
            return
        retry_signal = signal.SIGINT if signal.SIGINT in self._previous else next(iter(self._previous))

        def watch() -> None:
            while not self._closed:
                time.sleep(RETRY_SECONDS / 5)
                since = self._pending_since
                if self._held or self._closed or since is None or time.monotonic() - since < RETRY_SECONDS:
                    continue
                self._pending_since = time.monotonic()
                self._retry = True
                signal.pthread_kill(main, retry_signal)  # to the main thread: it interrupts a blocking wait too

        self._watchdog = threading.Thread(target=watch, name="dpverify-interrupt-retry", daemon=True)
        self._watchdog.start()

    # -- what the run does with it ------------------------------------------------------------------------

    @property
    def stopping(self) -> bool:
        """A signal has been received."""
        return bool(self.received)

    @property
    def exit_status(self) -> int:
        """``128 +`` the first signal received (the shell's convention), 130 when none was."""
        return 128 + int(self.received[0]) if self.received else 128 + int(signal.SIGINT)

    def hold(self) -> None:
        """From now on signals are recorded, never raised (the run is stopping or writing its final report); this
        also acknowledges an interruption raised already (it is not raised again)."""
        self._held = True

    def pause(self) -> None:
        """Record signals without raising until the matching :meth:`resume` (pauses nest)."""
        self._deferring += 1

    def resume(self) -> None:
        """End a :meth:`pause`; a signal received meanwhile is raised now as ``KeyboardInterrupt`` (unless held,
        or one was raised already)."""
        self._deferring = max(self._deferring - 1, 0)
        if self._deferring == 0 and self.received and not (self._raised or self._held):
            self._raised = True
            raise KeyboardInterrupt

    @contextmanager
    def deferred(self) -> Iterator[None]:
        """Signals that arrive inside the block are raised as ``KeyboardInterrupt`` once it has finished."""
        self.pause()
        try:
            yield
        except BaseException:
            self._deferring = max(self._deferring - 1, 0)
            raise
        self.resume()


#: The innermost :class:`Interrupts` block open in this process (what the fork hooks pause).
_active: Interrupts | None = None
_fork_hooks = False
_blocked_for_fork = False


def _pause_for_fork() -> None:
    global _blocked_for_fork
    if _active is not None and os.getpid() == _active._pid and hasattr(signal, "pthread_sigmask"):
        _active._deferring += 1
        signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        _blocked_for_fork = True


def _resume_after_fork() -> None:  # in the parent; an exception raised here would be dropped: the retry raises it
    global _blocked_for_fork
    if _blocked_for_fork:
        _blocked_for_fork = False
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
        if _active is not None:
            _active._deferring = max(_active._deferring - 1, 0)


def _unblock_in_child() -> None:
    global _blocked_for_fork
    if _blocked_for_fork:
        _blocked_for_fork = False
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


def _register_fork_hooks() -> None:
    """Block SIGINT and SIGTERM around every ``os.fork`` of this process while a block is open (hooks are
    registered once per process: they cannot be unregistered).  A signal that arrives while a worker is forked
    would otherwise be handled inside a fork hook, where Python prints the ``KeyboardInterrupt`` and drops it;
    blocked, it is delivered when the fork is done, and raised by the retry."""
    global _fork_hooks
    if not _fork_hooks and hasattr(os, "register_at_fork"):
        os.register_at_fork(before=_pause_for_fork, after_in_parent=_resume_after_fork,
                            after_in_child=_unblock_in_child)
        _fork_hooks = True


#: Code objects of the fork hooks: a signal handled inside one of them is deferred, never raised.
_HOOK_CODES = frozenset(f.__code__ for f in (_pause_for_fork, _resume_after_fork, _unblock_in_child))


def _ignoring_frame(frame: FrameType | None) -> bool:
    """Whether Python would print and drop an exception raised in ``frame``: a fork hook, or a ``__del__``."""
    return frame is not None and (frame.f_code in _HOOK_CODES or frame.f_code.co_name == "__del__")


def ignore_interrupts_in_worker() -> None:
    """Initializer of the processes that run entries side by side: SIGINT ignored (a terminal's Ctrl-C reaches
    the whole process group; the main process stops the workers itself), SIGTERM back to its default (the main
    process ends a worker with it)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
