"""Reproductions of the seed papers' experiments: ``dpverify reproduce NAME``.

:data:`REPRODUCTIONS` maps a name to the import path ``"module:function"`` of a function

    ``fn(*, quick: bool, seed: int, out_dir: pathlib.Path, workers: int | None) -> str``

that runs the experiment from scratch (its numbers depend on ``seed`` and ``quick`` only, never on
``workers``), may write files (figures, data) into ``out_dir``, and returns a markdown report.
:func:`run_reproduction` resolves the function at run time (dpverify never imports an algorithm
statically), calls it and writes the report to ``out_dir/<name>.md`` atomically.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dpverify.errors import InputError, SuiteError
from dpverify.reporting.report import write_text_atomic
from dpverify.suites import resolve

__all__ = ["REPRODUCTIONS", "run_reproduction", "load_reproduction", "known_names"]

#: name -> "module:function" (resolved only when the reproduction runs).
REPRODUCTIONS: dict[str, str] = {
    "pinot-table-3.1": "algorithms.experiments.pinot_table_3_1:reproduce",
    "ptclust-figures": "algorithms.experiments.ptclust_figures:reproduce",
    "dpm-table-2-synth": "algorithms.experiments.dpm_table_2:reproduce",
}


def known_names() -> str:
    """The registered names, comma separated, for messages."""
    return ", ".join(sorted(REPRODUCTIONS))


def load_reproduction(name: str) -> Callable[..., Any]:
    """The function registered under ``name``; :class:`InputError` for an unknown or unloadable name."""
    if name not in REPRODUCTIONS:
        close = difflib.get_close_matches(name, list(REPRODUCTIONS), n=1, cutoff=0.5)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise InputError(f"unknown reproduction {name!r}; {hint}known reproductions: {known_names()} "
                         f"(dpverify reproduce --list)")
    path = REPRODUCTIONS[name]
    # in a checkout that is not installed, the algorithms package sits next to dpverify/
    root = Path(__file__).resolve().parents[2]
    search = [root] if (root / "algorithms" / "__init__.py").is_file() else []
    try:
        fn = resolve(path, search_paths=search)
    except SuiteError as exc:
        msg = str(exc).removeprefix("mechanism: ")
        raise InputError(f"reproduction {name!r} cannot be loaded: {msg}") from None
    if not callable(fn):
        raise InputError(f"reproduction {name!r}: {path} is not a function (got {type(fn).__name__})")
    return fn


def run_reproduction(name: str, *, quick: bool = False, seed: int = 0, out_dir: str | Path,
                     workers: int | None = None) -> str:
    """Run reproduction ``name`` and write its report to ``out_dir/<name>.md``; returns the report text."""
    fn = load_reproduction(name)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InputError(f"seed must be an integer >= 0, got {seed!r}")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise InputError(f"workers must be None (all cores) or an integer >= 1, got {workers!r}")
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create the output directory {out}: {exc}; pass another --out DIR") from None
    text = fn(quick=bool(quick), seed=seed, out_dir=out, workers=workers)
    if not isinstance(text, str):
        raise InputError(f"reproduction {name!r} returned {type(text).__name__}, expected the markdown report (str)")
    if not text.endswith("\n"):
        text += "\n"
    report = out / f"{name}.md"
    try:
        write_text_atomic(report, text)
    except OSError as exc:
        raise InputError(f"cannot write the report {report}: {exc}; pass another --out DIR") from None
    return text
