"""Exceptions of dpverify.

Every error a user can cause -- a bad parameter, a mechanism that breaks the contract, a suite entry
that names an unknown import path -- is raised as a subclass of :class:`DPVerifyError` with a message
that names the problem and what to do.  The command-line interface prints such messages without a
traceback.
"""

from __future__ import annotations


class DPVerifyError(Exception):
    """Base class of every error dpverify raises on purpose."""


class InputError(DPVerifyError, ValueError):
    """A parameter or input given to dpverify is invalid (epsilon <= 0, empty pair list, ...)."""


class MechanismError(DPVerifyError, RuntimeError):
    """The audited mechanism broke the contract ``mechanism(x, n, rng) -> ndarray`` or raised."""


class SuiteError(DPVerifyError, ValueError):
    """An audit-suite file is malformed or names something that cannot be loaded."""
