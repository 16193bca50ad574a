"""dpverify.execution.lanes.Lane: calls run in order in one process that keeps state, replies read in any order,
errors and a dead worker reported, shutdown with replies nobody read (deterministic, no randomness)."""

from __future__ import annotations

import os
from concurrent.futures.process import BrokenProcessPool

import pytest

from dpverify.execution.lanes import Lane

_STATE: list[int] = []


def _append(x: int) -> list[int]:
    _STATE.append(x)
    return list(_STATE)


def _pid() -> int:
    return os.getpid()


def _fail(message: str) -> None:
    raise ValueError(message)


def _exit_now() -> None:
    os._exit(3)


def _unpicklable():
    return lambda: None


def _init(value: int) -> None:
    _STATE.append(value)


def test_calls_run_in_order_in_one_process_with_state():
    lane = Lane(_init, (-1,))
    try:
        replies = [lane.submit(_append, i) for i in range(5)]
        # the last reply read first: the earlier ones are read on the way, in order
        assert replies[-1].result() == [-1, 0, 1, 2, 3, 4]
        assert [r.result() for r in replies] == [[-1] + list(range(i + 1)) for i in range(5)]
        assert lane.submit(_pid).result() == lane.submit(_pid).result() != os.getpid()
    finally:
        lane.shutdown()


def test_an_exception_is_raised_by_its_reply_only():
    lane = Lane()
    try:
        bad, good = lane.submit(_fail, "boom"), lane.submit(_append, 7)
        assert good.result() == [7]
        with pytest.raises(ValueError, match="boom"):
            bad.result()
        with pytest.raises(RuntimeError, match="could not be sent back"):
            lane.submit(_unpicklable).result()
        assert lane.submit(_append, 8).result() == [7, 8]        # the worker goes on after both
    finally:
        lane.shutdown()


def test_a_dead_worker_raises_broken_process_pool():
    lane = Lane()
    try:
        with pytest.raises(BrokenProcessPool, match="exit code 3"):
            lane.submit(_exit_now).result()
        with pytest.raises(BrokenProcessPool):
            lane.submit(_append, 1)
    finally:
        lane.shutdown(cancel_futures=True)


@pytest.mark.parametrize("cancel", [False, True])
def test_shutdown_with_replies_nobody_read(cancel):
    lane = Lane()
    for i in range(3):
        lane.submit(_append, i)
    lane.shutdown(cancel_futures=cancel)
    assert not lane._process.is_alive()
    lane.shutdown()                                             # twice: nothing left to do
