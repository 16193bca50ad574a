"""Reports of suite runs: ``report.json`` (machine-readable) and a plain-text table (for people).

``report.json`` (schema ``dpverify.reporting.report``, version 1)::

    {"schema": "dpverify.report", "schema_version": 2, "dpverify_version": "0.1.0",
     "created": "2025-01-01T12:00:00+00:00", "status": "complete",      # running | complete | interrupted
     "mode": "quick", "seed": 0, "workers": null, "python": "3.11.7", "platform": "Linux-...",
     "entries": [{"suite", "id", "kind", "mechanism", "claim": {"epsilon", "delta"}, "expectation",
                  "outcome", "matched", "epsilon_lower_bound", "true_epsilon", "samples",
                  "search_samples", "seed", "seconds", "witness", "error", "details"}, ...],
     "summary": {"entries", "matched", "mismatched", "errors", "not_run", "seconds"}}

JSON has no ``inf``/``nan``: they are written as the strings ``"inf"``/``"nan"``.  The file is written
atomically (a temporary file in the same directory, then :func:`os.replace`), so a reader -- or a run
interrupted mid-write -- never sees a half-written report.  The CLI rewrites it after every entry.

Outcome ``"pass"`` means *no violation detected at this budget*, never *is differentially private*.
"""

from __future__ import annotations

import json
import os
import platform
import tempfile
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from dpverify.jsonsafe import format_number as _fmt, json_clean
from dpverify.reporting.table_cells import claim_cell, found_cell, ok_cell
from dpverify.suites import EntryOutcome

__all__ = ["SCHEMA", "SCHEMA_VERSION", "READABLE_VERSIONS", "dpverify_version", "report_dict", "write_report_json",
           "summarize", "format_table", "write_text_atomic", "current_umask"]

SCHEMA = "dpverify.report"
SCHEMA_VERSION = 2
#: Versions :func:`dpverify.reporting.compare.load_run_record` and ``--resume`` read (1: no ``measured`` per entry).
READABLE_VERSIONS: tuple[int, ...] = (1, 2)


def dpverify_version() -> str:
    """The running dpverify's version (``dpverify.__version__``, else the installed metadata)."""
    try:
        import dpverify

        version = getattr(dpverify, "__version__", None)
        if isinstance(version, str):
            return version
    except Exception:  # noqa: BLE001 -- the package may be half-written in a checkout
        pass
    try:
        from importlib.metadata import version as _meta_version

        return _meta_version("dpverify")
    except Exception:  # noqa: BLE001
        return "unknown"


def summarize(outcomes: Sequence[EntryOutcome]) -> dict[str, Any]:
    """Counts of a run: entries, matched, mismatched (pass/violation against expectation), errors,
    not_run, and the total seconds spent in entries."""
    matched = sum(1 for o in outcomes if o.matched)
    errors = sum(1 for o in outcomes if o.outcome == "error")
    not_run = sum(1 for o in outcomes if o.outcome == "not-run")
    return {
        "entries": len(outcomes),
        "matched": matched,
        "mismatched": len(outcomes) - matched - errors - not_run,
        "errors": errors,
        "not_run": not_run,
        "seconds": round(sum(o.seconds for o in outcomes), 6),
    }


def report_dict(outcomes: Sequence[EntryOutcome], meta: Mapping[str, Any]) -> dict[str, Any]:
    """The ``report.json`` document.  ``meta`` gives ``mode``, ``seed``, ``workers`` and optionally
    ``status`` (default ``"complete"``); its other keys are added at the top level."""
    doc: dict[str, Any] = {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "dpverify_version": dpverify_version(),
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "status": "complete",
        "mode": None,
        "seed": None,
        "workers": None,
        "python": platform.python_version(),
        "platform": platform.platform(),
    }
    for key, value in meta.items():
        if key not in ("schema", "schema_version", "entries", "summary"):
            doc[key] = json_clean(value)
    doc["entries"] = [o.to_dict() for o in outcomes]
    doc["summary"] = summarize(outcomes)
    return doc


def write_report_json(path: str | Path, outcomes: Sequence[EntryOutcome], meta: Mapping[str, Any]) -> Path:
    """Write ``report.json`` atomically (temp file in the same directory + ``os.replace``).

    Creates the parent directory if needed and returns the path written.
    """
    path = Path(path)
    text = json.dumps(report_dict(outcomes, meta), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    write_text_atomic(path, text)
    return path


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and ``os.replace``: a reader (or an interrupted
    run) sees the old file or the new one, never half of one.  The file gets the mode ``open()`` would give it
    (``0o666`` less the umask: ``0o644`` under umask 022), so CI artifact servers can serve it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        if hasattr(os, "fchmod"):  # mkstemp's file is 0600 whatever the umask; give it the mode open() would
            os.fchmod(fd, 0o666 & ~current_umask())
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def current_umask() -> int:
    """The process's umask (``os.umask`` can only be read by setting it, so it is set and restored at once)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def format_table(outcomes: Sequence[EntryOutcome]) -> str:
    """Plain-text table (id, claim ε, ε found, true ε, outcome, expected, ok, samples, seconds), the error
    messages of failed entries, and a final line ``"N/M entries as expected"``.  "ε found" is the ε lower
    bound of a statistical audit, ``=x`` the exact loss of an exact check, ``p=x`` an em check's p-value."""
    header = ("id", "claim ε", "ε found", "true ε", "outcome", "expected", "ok", "samples", "seconds")
    right = (False, True, True, True, False, False, False, True, True)
    rows = [
        (
            o.name, claim_cell(o), found_cell(o), _fmt(o.true_epsilon), o.outcome,
            o.expectation, ok_cell(o), "-" if o.samples is None else str(o.samples),
            "-" if o.outcome == "not-run" else f"{o.seconds:.2f}",
        )
        for o in outcomes
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        parts = [c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right)]
        return "  ".join(parts).rstrip()

    out = [line(header), line(["-" * w for w in widths])]
    out.extend(line(r) for r in rows)
    errors = [o for o in outcomes if o.outcome == "error"]
    if errors:
        out.append("")
        out.extend(f"{o.name}: error: {o.error}" for o in errors)
    s = summarize(outcomes)
    if s["not_run"]:
        out.append("")
        out.append(f"{s['not_run']} entries not run (interrupted)")
    out.append("")
    out.append(f"{s['matched']}/{s['entries']} entries as expected")
    return "\n".join(out)
