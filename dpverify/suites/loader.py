"""Loading suite files (:func:`load_suite`, :func:`load_suites`, the default suite directory) and resolving the
``"module:attribute"`` import paths they name (:func:`resolve`)."""


from __future__ import annotations

import dataclasses
import tomllib
from collections.abc import Iterable
from pathlib import Path


from dpverify.errors import SuiteError
from dpverify.suites.imports import load_plugins
from dpverify.suites.model import Budget, DEFAULT_BUDGETS, Entry, ID_RE, MODES, SUITE_KEYS, Suite
from dpverify.suites.schema import check_keys, parse_budget, parse_entry
from dpverify.suites.values import suite_error


def load_suite(path: str | Path) -> Suite:
    """Load and validate one suite file (see the module docstring for the format)."""
    path = Path(path)
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise SuiteError(f"{path}: no such suite file; pass an existing .toml file or directory") from None
    except IsADirectoryError:
        raise SuiteError(f"{path}: is a directory; use load_suites() for directories") from None
    except tomllib.TOMLDecodeError as exc:
        raise SuiteError(f"{path}: not valid TOML: {exc}; fix the syntax (see https://toml.io)") from None
    except OSError as exc:
        raise SuiteError(f"{path}: cannot read the suite file: {exc}") from None

    where = f"{path}: [suite]"
    check_keys(data, ("suite", "entry"), f"{path}", "the file (top level)")
    head = data.get("suite", {})
    if not isinstance(head, dict):
        raise suite_error(where, None, "is not a table", 'write [suite] then name = "..."')
    check_keys(head, SUITE_KEYS, where, "[suite]")
    name = head.get("name", path.stem)
    if not isinstance(name, str) or not ID_RE.match(name):
        raise suite_error(where, "name", f"invalid suite name {name!r}",
                   "use letters, digits and _ . + - (no spaces or '/'), e.g. name = \"classic\"")
    description = head.get("description", "")
    if not isinstance(description, str):
        raise suite_error(where, "description", f"expected a string, got {description!r}", 'write description = "..."')
    default = head.get("default", False)
    if not isinstance(default, bool):
        raise suite_error(where, "default", f"expected true or false, got {default!r}", "write default = true")
    raw_paths = head.get("import_paths", [])
    if not isinstance(raw_paths, list) or not all(isinstance(p, str) for p in raw_paths):
        raise suite_error(where, "import_paths", f"expected a list of directory strings, got {raw_paths!r}",
                   'write import_paths = [".."] (relative to the suite file)')
    import_paths = tuple((path.parent / p).resolve() for p in raw_paths)
    plugins = head.get("plugins", [])
    if not isinstance(plugins, list) or not all(isinstance(p, str) for p in plugins):
        raise suite_error(where, "plugins", f"expected a list of module names, got {plugins!r}",
                          'write plugins = ["my_package.dp_kinds"] (modules that register check kinds or relations)')
    load_plugins(plugins, where=where, search_paths=import_paths)
    budgets = {
        mode: parse_budget(head.get(mode), where, mode, Budget(*DEFAULT_BUDGETS[mode])) for mode in MODES
    }

    raw_entries = data.get("entry", [])
    if not isinstance(raw_entries, list) or not raw_entries:
        raise SuiteError(f"{path}: the suite has no entries; add at least one [[entry]] table")
    entries: list[Entry] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(raw_entries):
        entry = parse_entry(raw, i, name, path, budgets, import_paths)
        if plugins:
            entry = dataclasses.replace(entry, plugins=tuple(plugins))
        if entry.id in seen:
            raise suite_error(entry.where, "id",
                       f"duplicate id (entries #{seen[entry.id] + 1} and #{i + 1})",
                       "give every entry of a suite a different id")
        seen[entry.id] = i
        entries.append(entry)
    return Suite(name=name, description=description, path=path, entries=tuple(entries), default=default)


def _expand(paths: Iterable[str | Path]) -> list[Path]:
    files: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            found = sorted(p.glob("*.toml"))
            if not found:
                raise SuiteError(f"{p}: directory holds no *.toml suite files; pass a suite file or another directory")
            files.extend(found)
        elif p.exists():
            files.append(p)
        else:
            raise SuiteError(f"{p}: no such suite file or directory; pass an existing .toml file or directory")
    return files


def load_suites(paths: Iterable[str | Path]) -> list[Suite]:
    """Load suite files; a directory stands for every ``*.toml`` in it (sorted, not recursive).

    Two suites with the same name are refused (``suite/id`` must name one entry in a run).
    """
    suites: list[Suite] = []
    by_name: dict[str, Path] = {}
    for f in _expand(paths):
        resolved = f.resolve()
        if any(s.path.resolve() == resolved for s in suites):
            continue  # the same file named twice (e.g. a file and its directory)
        suite = load_suite(f)
        if suite.name in by_name:
            raise SuiteError(f"{f}: [suite] key 'name': suite name '{suite.name}' is also used by "
                             f"{by_name[suite.name]}; give every suite a different name")
        by_name[suite.name] = f
        suites.append(suite)
    if not suites:
        raise SuiteError("no suite files given; pass a .toml file or a directory of them")
    return suites


def default_suite_dir(cwd: str | Path | None = None) -> Path:
    """Where ``dpverify run`` looks without a path.

    ``./audits`` if it exists, else the ``audits/`` directory next to the installed package's parent
    directory (an editable install from a checkout); else a :class:`SuiteError`.
    """
    here = Path.cwd() if cwd is None else Path(cwd)
    local = here / "audits"
    if local.is_dir():
        return local
    checkout = Path(__file__).resolve().parents[2] / "audits"
    if checkout.is_dir():
        return checkout
    raise SuiteError("no audit suites found: there is no ./audits directory and dpverify is not installed "
                     "from a checkout; pass suite files or directories, or run from a checkout")


def default_suites(cwd: str | Path | None = None) -> list[Suite]:
    """The suites of the default run: those of :func:`default_suite_dir` marked ``default = true``
    in their ``[suite]`` table, or all of them when none is marked."""
    suites = load_suites([default_suite_dir(cwd)])
    marked = [s for s in suites if s.default]
    return marked or suites
