"""Checks of single values of a suite file, and the error that names a bad one (file, entry, key, problem, fix):
the numbers, the level ``alpha`` and the optional audit options of a statistical entry (:data:`AUDIT_OPTION_KEYS`
of :mod:`dpverify.suites.model`, passed on to :func:`dpverify.audit`)."""

from __future__ import annotations

from typing import Any

from dpverify.errors import SuiteError
from dpverify.statistical.ratio_tests import RATIO_TESTS
from dpverify.suites.model import KEEP_ALL

__all__ = ["suite_error", "is_int", "is_number", "check_alpha", "audit_options"]


def suite_error(where: str, key: str | None, problem: str, fix: str) -> SuiteError:
    """The error for ``key`` of the entry or table ``where``: the problem, then the fix."""
    k = f" key '{key}':" if key else ""
    return SuiteError(f"{where}:{k} {problem}; {fix}")


def is_int(v: Any) -> bool:
    """An integer that is not a bool (TOML's ``true`` must not pass for 1)."""
    return isinstance(v, int) and not isinstance(v, bool)


def is_number(v: Any) -> bool:
    """An int or a float that is not a bool."""
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def check_alpha(raw: dict[str, Any], where: str) -> float | None:
    """An entry's ``alpha`` (``None`` when it gives none) in (0, 1)."""
    alpha = raw.get("alpha")
    if alpha is not None and (not is_number(alpha) or not 0 < alpha < 1):
        raise suite_error(where, "alpha", f"expected a number in (0, 1), got {alpha!r}", "write alpha = 0.05")
    return None if alpha is None else float(alpha)


def audit_options(raw: dict[str, Any], where: str) -> dict[str, Any]:
    """A statistical entry's optional audit options, checked: ``alpha``, ``nan_policy``, ``float_bits``,
    ``finalists``, ``batch_size``, ``ratio_test``, ``keep_pairs`` (``None`` for each one the entry leaves out)."""
    nan_policy = raw.get("nan_policy")
    if nan_policy is not None and not isinstance(nan_policy, str):
        raise suite_error(where, "nan_policy", f"expected a string, got {nan_policy!r}", 'write nan_policy = "raise"')
    float_bits = raw.get("float_bits")
    if float_bits is not None and not isinstance(float_bits, bool):
        raise suite_error(where, "float_bits", f"expected true or false, got {float_bits!r}", "write float_bits = true")
    for key in ("finalists", "batch_size"):
        v = raw.get(key)
        if v is not None and (not is_int(v) or v < 1):
            raise suite_error(where, key, f"expected a positive integer, got {v!r}", f"write e.g. {key} = 3")
    ratio_test = raw.get("ratio_test")
    if ratio_test is not None and ratio_test not in RATIO_TESTS:
        raise suite_error(where, "ratio_test", f"expected one of {', '.join(RATIO_TESTS)}, got {ratio_test!r}",
                          'write ratio_test = "auto" (or leave it out for "clopper-pearson")')
    keep = raw.get("keep_pairs")
    if keep is not None and keep != KEEP_ALL and (not is_int(keep) or keep < 1):
        raise suite_error(where, "keep_pairs", f'expected a positive integer or "all", got {keep!r}',
                          'write keep_pairs = 8 (pairs drawn to the end of a --sequential audit) or keep_pairs = "all"')
    return {"alpha": check_alpha(raw, where), "nan_policy": nan_policy, "float_bits": float_bits,
            "finalists": raw.get("finalists"), "batch_size": raw.get("batch_size"), "ratio_test": ratio_test,
            "keep_pairs": keep}
