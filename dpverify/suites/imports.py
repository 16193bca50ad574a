"""Resolving the ``"module:attribute"`` import paths a suite file names (:func:`resolve`): every failure is a
:class:`~dpverify.errors.SuiteError` naming the entry and the path, never a raw ``ImportError``."""

from __future__ import annotations

import difflib
import importlib
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dpverify.errors import SuiteError

__all__ = ["IMPORT_RE", "MODULE_RE", "BUNDLED", "resolve", "load_plugins"]

#: The reference algorithms: the top-level package of a checkout, installed as ``dpverify.algorithms`` (so that an
#: installed dpverify does not take the generic name ``algorithms``).  A suite names them ``algorithms.x:y`` either way.
BUNDLED = ("algorithms", "dpverify.algorithms")

#: ``"package.module:attribute"`` with a dotted attribute allowed.
MODULE_RE = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
IMPORT_RE = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


def resolve(import_path: str, *, where: str | None = None, search_paths: Sequence[str | Path] = ()) -> Any:
    """Import ``"package.module:attribute"`` (the attribute may be dotted) and return the object.

    ``search_paths`` (a suite's ``import_paths``) are put in front of ``sys.path`` if missing, and stay
    there (worker processes and imports inside the mechanism need them).  Every failure is a
    :class:`SuiteError` naming ``where`` (e.g. the entry) and the path.
    """
    ctx = f"{where}: key 'mechanism'" if where else "mechanism"
    if not isinstance(import_path, str) or not IMPORT_RE.match(import_path):
        raise SuiteError(f"{ctx}: {import_path!r} is not an import path \"module:attribute\"; "
                         'write e.g. "algorithms.classic.laplace:Laplace"')
    mod_name, attr = import_path.split(":", 1)
    added = [str(Path(p)) for p in search_paths if str(Path(p)) not in sys.path]
    if added:
        # kept on sys.path: worker processes and lazy imports inside the mechanism need them too
        sys.path[:0] = added
        importlib.invalidate_caches()
    try:
        module = _import(mod_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing and (mod_name == missing or mod_name.startswith(missing + ".")):
            searched = ", ".join(str(p) for p in search_paths) or "none"
            raise SuiteError(
                f"{ctx}: cannot import '{import_path}': module '{missing}' not found (searched sys.path and the "
                f"suite's import_paths: {searched}); check the spelling, install the package (pip install -e . in "
                "a checkout), or add the module's directory to [suite] import_paths, relative to the suite file: "
                'import_paths = ["."] for a module next to the suite file') from None
        raise SuiteError(f"{ctx}: cannot import '{import_path}': importing module '{mod_name}' failed: "
                         f"{exc}") from None
    except Exception as exc:  # noqa: BLE001 -- any error while importing user code
        raise SuiteError(f"{ctx}: cannot import '{import_path}': importing module '{mod_name}' raised "
                         f"{type(exc).__name__}: {exc}") from None
    obj: Any = module
    done = f"{mod_name}:"
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            names = [n for n in dir(obj) if not n.startswith("_")]
            close = difflib.get_close_matches(part, names, n=3)
            hint = f"did you mean {', '.join(repr(c) for c in close)}?" if close else \
                "check the name after ':'"
            owner = f"module '{mod_name}'" if obj is module else f"'{done}'"
            raise SuiteError(f"{ctx}: cannot import '{import_path}': {owner} has no attribute "
                             f"'{part}'; {hint}") from None
        done = f"{done}{part}" if done.endswith(":") else f"{done}.{part}"
    return obj


def _import(mod_name: str) -> Any:
    """``importlib.import_module(mod_name)``; a module of the reference algorithms (``algorithms.*``) that no checkout
    provides is taken from the installed ``dpverify.algorithms``."""
    try:
        return importlib.import_module(mod_name)
    except ModuleNotFoundError as exc:
        top, installed = BUNDLED
        if exc.name != top or not (mod_name == top or mod_name.startswith(top + ".")):
            raise
        try:
            return importlib.import_module(installed + mod_name[len(top):])
        except ModuleNotFoundError:
            raise exc from None


def load_plugins(modules: Sequence[str], *, where: str | None = None, search_paths: Sequence[str | Path] = ()) -> None:
    """Import the plugin ``modules`` a suite lists (``[suite] plugins``): modules that register check kinds
    (:func:`dpverify.suites.kinds.register_kind`) or neighbour relations
    (:func:`dpverify.neighbours.register_relation`) when imported.  Importing twice is free; every failure is a
    :class:`SuiteError` naming the module."""
    ctx = f"{where}: key 'plugins'" if where else "plugins"
    for p in search_paths:
        s = str(p)
        if s not in sys.path:
            sys.path.insert(0, s)
    for name in modules:
        if not isinstance(name, str) or not MODULE_RE.match(name):
            raise SuiteError(f"{ctx}: {name!r} is not a module name; write e.g. plugins = [\"my_package.dp_kinds\"]")
        try:
            importlib.import_module(name)
        except SuiteError:
            raise
        except Exception as exc:  # noqa: BLE001 -- a failing plugin is a suite error, named
            raise SuiteError(f"{ctx}: importing plugin {name!r} failed with {type(exc).__name__}: {exc}; check the "
                             f"module name and the suite's import_paths") from None
