"""Exceptions of dpverify.

Every error a user can cause -- a bad parameter, a mechanism that breaks the contract, a suite entry
that names an unknown import path -- is raised as a subclass of :class:`DPVerifyError` with a message
that names the problem and what to do.  The command-line interface prints such messages without a
traceback (:func:`format_error`: the message and its notes).  A :class:`MechanismError` built by
:func:`mechanism_failure` carries, as a note, the frames of the user's own code where the mechanism failed --
not dpverify's, not the process pool's -- even when it failed in a worker process.
"""

from __future__ import annotations

import functools
import inspect
import os
import sysconfig
import traceback
from types import TracebackType
from typing import Any

__all__ = ["DPVerifyError", "InputError", "MechanismError", "SuiteError", "format_error", "user_frames", "defined_at",
           "mechanism_failure"]


class DPVerifyError(Exception):
    """Base class of every error dpverify raises on purpose."""


class InputError(DPVerifyError, ValueError):
    """A parameter or input given to dpverify is invalid (epsilon <= 0, empty pair list, ...)."""


class MechanismError(DPVerifyError, RuntimeError):
    """The audited mechanism broke the contract ``mechanism(x, n, rng) -> ndarray`` or raised."""


class SuiteError(DPVerifyError, ValueError):
    """An audit-suite file is malformed or names something that cannot be loaded."""


def format_error(exc: BaseException) -> str:
    """The message of ``exc`` followed by its notes (:meth:`BaseException.add_note`): for a
    :class:`MechanismError`, where in the user's code it happened.  What the command line prints and a report
    records."""
    notes = [str(n) for n in getattr(exc, "__notes__", ()) or ()]
    return "\n".join([str(exc), *notes])


def _internal_dirs() -> tuple[str, ...]:
    """Directories whose frames are never the user's: dpverify itself and the standard library's process pools."""
    stdlib = sysconfig.get_paths().get("stdlib", "")
    here = os.path.dirname(os.path.abspath(__file__))
    return tuple(os.path.join(d, "") for d in (here, os.path.join(stdlib, "concurrent"),
                                                 os.path.join(stdlib, "multiprocessing")) if d)


def user_frames(tb: TracebackType | None, limit: int = 8) -> str:
    """The frames of traceback ``tb`` outside dpverify, ``concurrent.futures`` and ``multiprocessing`` (the last
    ``limit``), formatted as Python prints them; ``""`` when none is left."""
    internal = _internal_dirs()
    frames = [f for f in traceback.extract_tb(tb) if not os.path.abspath(f.filename).startswith(internal)]
    return "".join(traceback.format_list(frames[-limit:]))


def defined_at(obj: Any) -> str | None:
    """Where the callable ``obj`` (a function, a ``functools.partial``, an instance with ``__call__``) is defined,
    as ``File "path", line N, in name``; ``None`` when it has no Python source."""
    while isinstance(obj, functools.partial):
        obj = obj.func
    target = obj if inspect.isfunction(obj) or inspect.ismethod(obj) else getattr(type(obj), "__call__", None)
    code = getattr(inspect.unwrap(target), "__code__", None) if target is not None else None
    if code is None:
        return None
    return f'File "{code.co_filename}", line {code.co_firstlineno}, in {code.co_name}'


def mechanism_failure(message: str, *, cause: BaseException | None = None, mechanism: Any = None) -> MechanismError:
    """A :class:`MechanismError` with ``message`` and a note saying where in the user's code: the frames of
    ``cause``'s traceback outside dpverify and the process pool (the mechanism raised), else where ``mechanism``
    is defined (it returned something that breaks the contract).  The note travels with the error out of a worker
    process, and Python prints it under the message."""
    err = MechanismError(message)
    frames = user_frames(cause.__traceback__) if cause is not None else ""
    if frames:
        err.add_note("in your code (most recent call last):\n" + frames.rstrip("\n"))
    elif mechanism is not None:
        where = defined_at(mechanism)
        if where is not None:
            err.add_note(f"the mechanism:\n  {where}")
    return err
