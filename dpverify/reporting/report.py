"""Reports of suite runs: ``report.json`` (machine-readable) and a plain-text table (for people).

``report.json`` (schema ``dpverify.reporting.report``, version 1)::

    {"schema": "dpverify.report", "schema_version": 1, "dpverify_version": "0.1.0",
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
from dpverify.suites.suite import EntryOutcome

__all__ = ["SCHEMA", "SCHEMA_VERSION", "dpverify_version", "report_dict", "write_report_json", "write_reports",
           "summarize", "format_table"]

SCHEMA = "dpverify.report"
SCHEMA_VERSION = 1


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
    run) sees the old file or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
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


def _claim(o: EntryOutcome) -> str:
    if o.kind == "theorem":
        return str((o.details or {}).get("claim", "-"))
    if o.claim.sensitivity is not None:
        return f"Δ={_fmt(o.claim.sensitivity)}"
    txt = _fmt(o.claim.epsilon)
    return txt + (f" (δ={o.claim.delta:g})" if o.claim.delta > 0 else "")


def _ok(o: EntryOutcome) -> str:
    if o.outcome == "not-run":
        return "-"
    return "✓" if o.matched else "✗"


def _found(o: EntryOutcome) -> str:
    """The ε the entry established: a lower confidence bound (statistical), ``=x`` an exact loss (exact),
    ``p=x`` the goodness-of-fit p-value (em), ``Δ=x`` the largest change found (sensitivity), ``r=x`` the largest
    step change over its declared sensitivity (replay), ``Σε=x`` the recorded charges of the worst run composed
    (ledger)."""
    if o.kind == "exact" and o.epsilon_lower_bound is not None:
        return "=" + _fmt(o.epsilon_lower_bound)
    if o.kind == "sensitivity" and o.details is not None and "max_change" in o.details:
        return "Δ=" + _fmt(float(o.details["max_change"]))
    if o.kind == "replay" and o.details is not None and "max_ratio" in o.details:
        return "r=" + _fmt(float(o.details["max_ratio"]))
    if o.kind == "ledger" and o.details is not None and "total_epsilon" in o.details:
        return "Σε=" + _fmt(float(o.details["total_epsilon"]))
    if o.kind == "theorem" and o.details is not None:
        return _theorem_found(o.details)
    if o.kind == "em" and o.details is not None and "pvalue" in o.details:
        p = o.details["pvalue"]
        return "p=" + (f"{p:.2g}" if isinstance(p, float) else str(p))
    return _fmt(o.epsilon_lower_bound)


def _theorem_found(details: Mapping[str, Any]) -> str:
    """A theorem's estimate (``"0.812"``; ``"3/4 hold"`` for a sweep; ``"0 fail/500"`` for an "always" check)."""
    points = details.get("points")
    if points is not None:
        holds = sum(p.get("verdict") == "holds" for p in points)
        return f"{holds}/{len(points)} hold"
    if details.get("quantity") == "always":
        return f"{details.get('failure_count', 0)} fail/{details.get('runs', 0)}"
    est = details.get("estimate")
    return _fmt(float(est)) if isinstance(est, (int, float)) else str(est)


def format_table(outcomes: Sequence[EntryOutcome]) -> str:
    """Plain-text table (id, claim ε, ε found, true ε, outcome, expected, ok, samples, seconds), the error
    messages of failed entries, and a final line ``"N/M entries as expected"``.  "ε found" is the ε lower
    bound of a statistical audit, ``=x`` the exact loss of an exact check, ``p=x`` an em check's p-value."""
    header = ("id", "claim ε", "ε found", "true ε", "outcome", "expected", "ok", "samples", "seconds")
    right = (False, True, True, True, False, False, False, True, True)
    rows = [
        (
            o.name, _claim(o), _found(o), _fmt(o.true_epsilon), o.outcome,
            o.expectation, _ok(o), "-" if o.samples is None else str(o.samples),
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


def write_reports(out_dir: str | Path, outcomes: Sequence[EntryOutcome], meta: Mapping[str, Any]) -> dict[str, Path]:
    """``report.json`` (always) and, once the run is over, the plots, ``report.md`` and ``report.html``
    (:func:`dpverify.reporting.pages.write_reports`; imported lazily, it needs this module)."""
    from dpverify.reporting.pages import write_reports as write_pages

    return write_pages(out_dir, outcomes, meta)
