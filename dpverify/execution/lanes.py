"""A lane: one worker process reached through a pipe, running the calls sent to it one at a time, in order.

:meth:`dpverify.execution.sampling.WorkerPool.lanes` gives one per worker.  The anytime audit keeps each pair's
stream in the lane that draws it (:mod:`dpverify.statistical.streams`) and sends it a call per batch: a batch number
and the finalists' events out, four counts per finalist back, a few hundred bytes each way.  A single-process
``concurrent.futures.ProcessPoolExecutor`` did the same with a management thread, a call queue and a result queue
per lane: about 300 µs of round trip and 270 µs of this process's CPU per call on this project's 2-core machine,
against 55 and 25 µs through a bare pipe (``multiprocessing.Pipe``; a local measurement), and the audit's main
process ran beside both workers on their two cores.

A call's reply is read when its :meth:`Reply.result` is asked for, or when a later call's is (replies come in the
order the calls were sent).  An exception raised by the call is raised by :meth:`Reply.result`; a worker that died
(killed, out of memory) raises :class:`concurrent.futures.process.BrokenProcessPool`, as a process pool's worker
does.
"""

from __future__ import annotations

import collections
import multiprocessing
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable

__all__ = ["Lane", "Reply"]

#: seconds :meth:`Lane.shutdown` waits for the worker to exit before terminating it (with ``cancel_futures``: a
#: call drawn ahead that nobody will read is not waited for)
_EXIT_WAIT = 5.0
_CANCEL_WAIT = 0.2


def _serve(conn: Any, initializer: Callable[..., None] | None, initargs: tuple[Any, ...]) -> None:
    """The worker's loop: ``(fn, args)`` in, ``(True, fn(*args))`` or ``(False, exception)`` out; ``None`` ends it."""
    if initializer is not None:
        initializer(*initargs)
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            return
        if message is None:
            return
        fn, args = message
        try:
            reply: tuple[bool, Any] = (True, fn(*args))
        except BaseException as exc:              # KeyboardInterrupt too: the caller decides
            reply = (False, exc)
        try:
            conn.send(reply)
        except (BrokenPipeError, EOFError):
            return
        except Exception as exc:                  # a result or an exception that does not pickle
            conn.send((False, RuntimeError(f"the worker's reply could not be sent back: {type(exc).__name__}: {exc}")))


class Reply:
    """The reply to one call of a :class:`Lane`."""

    def __init__(self, lane: "Lane") -> None:
        self._lane = lane
        self._done = False
        self._ok = False
        self._value: Any = None

    def _set(self, ok: bool, value: Any) -> None:
        self._done, self._ok, self._value = True, ok, value

    def result(self) -> Any:
        """The call's return value (waiting for it); its exception raised here."""
        if not self._done:
            self._lane._read_until(self)
        if not self._ok:
            raise self._value
        return self._value


class Lane:
    """One worker process (started at once, ``initializer(*initargs)`` first) that runs the calls :meth:`submit`
    sends it in order; state a call leaves in the process is there for the next ones."""

    def __init__(self, initializer: Callable[..., None] | None = None, initargs: tuple[Any, ...] = ()) -> None:
        ctx = multiprocessing.get_context()
        self._conn, child = ctx.Pipe()
        self._process = ctx.Process(target=_serve, args=(child, initializer, initargs), daemon=True)
        self._process.start()
        child.close()
        self._pending: collections.deque[Reply] = collections.deque()
        self._broken: str | None = None

    def submit(self, fn: Callable[..., Any], *args: Any) -> Reply:
        """Send ``fn(*args)`` (both picklable) to the worker; its reply comes with :meth:`Reply.result`."""
        if self._broken is not None:
            raise BrokenProcessPool(self._broken)
        try:
            self._conn.send((fn, args))
        except (BrokenPipeError, EOFError, ConnectionResetError):
            raise self._died() from None
        reply = Reply(self)
        self._pending.append(reply)
        return reply

    def _read_until(self, reply: Reply) -> None:
        while not reply._done:
            if self._broken is not None:
                raise BrokenProcessPool(self._broken)
            try:
                ok, value = self._conn.recv()
            except (EOFError, OSError):
                raise self._died() from None
            self._pending.popleft()._set(ok, value)

    def _died(self) -> BrokenProcessPool:
        self._process.join(timeout=1.0)
        self._broken = (f"a worker process of the audit died (exit code {self._process.exitcode}: killed, or out "
                        "of memory?); rerun with fewer workers or a smaller batch_size")
        return BrokenProcessPool(self._broken)

    def shutdown(self, cancel_futures: bool = False) -> None:
        """End the worker: after the calls sent so far (their replies read and dropped), or, with ``cancel_futures``,
        after the call it is running (terminated if that takes more than a fifth of a second); a worker that does not
        exit within a few seconds is terminated."""
        if self._process.pid is None:
            return
        try:
            if not cancel_futures:
                while self._pending and self._broken is None:
                    try:
                        self._read_until(self._pending[-1])
                    except Exception:
                        break
            self._conn.send(None)
        except (BrokenPipeError, EOFError, OSError):
            pass
        self._process.join(timeout=_CANCEL_WAIT if cancel_futures else _EXIT_WAIT)
        if self._process.is_alive():
            self._process.terminate()
            self._process.join(timeout=_EXIT_WAIT)
        if self._process.is_alive():
            self._process.kill()
            self._process.join()
        self._conn.close()
        self._pending.clear()
