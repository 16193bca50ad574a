"""Comparing two runs (``dpverify compare BASE NEW``): a run record read from a ``report.json`` or a certificate,
and the changes between two of them -- regressions, fixes, verdict and outcome changes, a rise of the ε found,
claims changed, entries added or removed -- with the code that changed between them."""


from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dpverify.errors import InputError
from dpverify.jsonsafe import format_number as _fmt
from dpverify.reporting.report import READABLE_VERSIONS, SCHEMA as REPORT_SCHEMA
from dpverify.reporting.certify import CERTIFICATE_SCHEMA
from dpverify.suites.kinds import comparison_rule
from dpverify.suites.records import record_number, witness_upper_bound

__all__ = ["COMPARISON_SCHEMA", "CHANGE_KINDS", "RunRecord", "load_run_record", "witness_upper_bound", "EntryChange",
           "CodeChange", "Comparison", "compare_runs"]

COMPARISON_SCHEMA = "dpverify.comparison"
#: The kinds of change :func:`compare_runs` reports, in the order of the table.
CHANGE_KINDS: tuple[str, ...] = ("regression", "fixed", "verdict-changed", "outcome-changed", "epsilon-rose",
                                 "claim-changed", "added", "removed")
_LABELS = {"regression": "REGRESSION", "fixed": "fixed", "verdict-changed": "verdict",
           "outcome-changed": "outcome", "epsilon-rose": "ε rose", "claim-changed": "claim changed",
           "added": "added", "removed": "removed"}
_VERDICTS = ("holds", "violated", "inconclusive")



# --------------------------------------------------------------------------------------------------
# loading a report or a certificate
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunRecord:
    """A loaded ``report.json`` or ``certificate.json``: where it came from, which (``"report"`` or
    ``"certificate"``), the whole document, and its entry records by ``suite/id`` (in file order)."""

    path: Path
    kind: str
    doc: dict[str, Any]
    entries: dict[str, dict[str, Any]] = field(repr=False)

    @property
    def fingerprint(self) -> dict[str, Any] | None:
        """The code fingerprint (certificates only)."""
        fp = self.doc.get("fingerprint")
        return fp if isinstance(fp, dict) else None

    def describe(self) -> str:
        """``"certificate, full mode, seed 0, created 2025-..., 6 entries"`` (plus the status if not complete)."""
        status = self.doc.get("status")
        extra = "" if status in (None, "complete") else f", status {status}"
        return (f"{self.kind}, {self.doc.get('mode')} mode, seed {self.doc.get('seed')}, created "
                f"{self.doc.get('created')}, {len(self.entries)} {'entry' if len(self.entries) == 1 else 'entries'}{extra}")


def load_run_record(path: str | Path) -> RunRecord:
    """Load a ``report.json`` or ``certificate.json``, or the one a directory holds (``certificate.json`` first).

    Raises :class:`~dpverify.errors.InputError` naming the file and the problem.
    """
    p = Path(path)
    if p.is_dir():
        for name in ("certificate.json", "report.json"):
            if (p / name).is_file():
                p = p / name
                break
        else:
            raise InputError(f"{p}: the directory holds neither certificate.json nor report.json; pass the --out "
                             "DIR of a `dpverify run` or `dpverify certify`, or the JSON file itself")
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{p}: no such file; pass a report.json, a certificate.json or a directory holding one") \
            from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{p}: cannot read it: {exc}") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{p}: not valid JSON ({exc}); pass a report.json or certificate.json written by "
                         "dpverify") from None
    schemas = {REPORT_SCHEMA: "report", CERTIFICATE_SCHEMA: "certificate"}
    schema = doc.get("schema") if isinstance(doc, dict) else None
    if schema not in schemas:
        raise InputError(f"{p}: schema {schema!r} is neither {REPORT_SCHEMA!r} nor {CERTIFICATE_SCHEMA!r}; pass a "
                         "report.json or certificate.json written by dpverify")
    if doc.get("schema_version") not in READABLE_VERSIONS:
        raise InputError(f"{p}: schema version {doc.get('schema_version')!r} is not supported (this dpverify "
                         f"reads versions {', '.join(map(str, READABLE_VERSIONS))}); compare it with the dpverify "
                         "version that wrote it")
    raw = doc.get("entries")
    if not isinstance(raw, list) or not all(isinstance(e, dict) and isinstance(e.get("suite"), str)
                                            and isinstance(e.get("id"), str) for e in raw):
        raise InputError(f"{p}: 'entries' is not a list of records with 'suite' and 'id'; the file is damaged")
    return RunRecord(path=p, kind=schemas[schema], doc=doc,
                     entries={f"{e['suite']}/{e['id']}": e for e in raw})


# --------------------------------------------------------------------------------------------------
# comparing
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EntryChange:
    """What changed for one entry: its ``changes`` (kinds of :data:`CHANGE_KINDS`, most important first), the
    BASE and NEW records (``None`` when absent) and a one-line ``detail``."""

    entry: str
    changes: tuple[str, ...]
    base: Mapping[str, Any] | None
    new: Mapping[str, Any] | None
    detail: str

    def to_dict(self) -> dict[str, Any]:
        def brief(r: Mapping[str, Any] | None) -> dict[str, Any] | None:
            if r is None:
                return None
            keys = ("kind", "mechanism", "claim", "expectation", "outcome", "matched", "epsilon_lower_bound")
            return {k: r.get(k) for k in keys}

        return {"entry": self.entry, "changes": list(self.changes), "base": brief(self.base),
                "new": brief(self.new), "detail": self.detail}


@dataclass(frozen=True)
class CodeChange:
    """One difference of the code fingerprints or versions: ``what`` (``"git commit"``, ``"module m"``,
    ``"dpverify f.py"``, ``"version numpy"``) and the BASE and NEW values (``None``: absent)."""

    what: str
    base: Any
    new: Any

    def to_dict(self) -> dict[str, Any]:
        return {"what": self.what, "base": self.base, "new": self.new}


@dataclass(frozen=True)
class Comparison:
    """The result of :func:`compare_runs`: changed entries, code changes, notes (mode/seed/status differences,
    a missing fingerprint) and the number of unchanged entries."""

    base: RunRecord
    new: RunRecord
    entries: tuple[EntryChange, ...]
    code: tuple[CodeChange, ...]
    notes: tuple[str, ...]
    unchanged: int

    @property
    def regression(self) -> bool:
        """Whether some claim that matched its expectation in BASE no longer does in NEW."""
        return any("regression" in c.changes for c in self.entries)

    def counts(self) -> dict[str, int]:
        """How many entries show each kind of change (an entry counts once per kind), and ``unchanged``."""
        out = {k: sum(k in c.changes for c in self.entries) for k in CHANGE_KINDS}
        out["unchanged"] = self.unchanged
        return out

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` document (schema ``dpverify.comparison``, version 1)."""
        def side(r: RunRecord) -> dict[str, Any]:
            return {"path": str(r.path), "kind": r.kind, "mode": r.doc.get("mode"), "seed": r.doc.get("seed"),
                    "status": r.doc.get("status"), "created": r.doc.get("created"), "entries": len(r.entries)}

        from dpverify.jsonsafe import json_clean

        return json_clean({"schema": COMPARISON_SCHEMA, "schema_version": 1, "base": side(self.base),
                           "new": side(self.new), "regression": self.regression, "counts": self.counts(),
                           "notes": list(self.notes), "changes": [c.to_dict() for c in self.entries],
                           "code": [c.to_dict() for c in self.code]})

    def format_text(self) -> str:
        """A plain-text report: the two records, notes, one row per changed entry, code changes, counts."""
        lines = [f"BASE  {self.base.path}  ({self.base.describe()})",
                 f"NEW   {self.new.path}  ({self.new.describe()})"]
        lines.extend(f"note: {n}" for n in self.notes)
        lines.append("")
        if self.entries:
            rows = [("change", "entry", "base", "new", "detail")]
            for c in self.entries:
                rows.append((", ".join(_LABELS[k] for k in c.changes), c.entry, _cell(c.base), _cell(c.new),
                             c.detail))
            widths = [max(len(r[i]) for r in rows) for i in range(4)]
            for r in rows:
                lines.append("  ".join([*(v.ljust(w) for v, w in zip(r[:4], widths)), r[4]]).rstrip())
        else:
            lines.append("no entry changed")
        if self.code:
            lines.append("")
            lines.append("code and environment:")
            lines.extend(f"  {c.what}: {_short(c.base)} -> {_short(c.new)}" for c in self.code)
        counts = self.counts()
        shown = [f"{counts[k]} {_LABELS[k].lower()}" for k in CHANGE_KINDS
                 if counts[k]]
        lines.append("")
        lines.append(", ".join([*shown, f"{counts['unchanged']} unchanged"]))
        if self.regression:
            lines.append(f"REGRESSION: {counts['regression']} claim(s) matched their expectation in BASE and do "
                         "not in NEW")
        return "\n".join(lines)


def _cell(r: Mapping[str, Any] | None) -> str:
    if r is None:
        return "-"
    mark = "" if r.get("outcome") == "not-run" else (" ✓" if r.get("matched") else " ✗")
    return f"{r.get('outcome')}{mark}"


def _short(v: Any) -> str:
    if v is None:
        return "absent"
    if isinstance(v, str) and len(v) == 64 and all(c in "0123456789abcdef" for c in v):
        return v[:12]
    return str(v)


def _theorem_text(r: Mapping[str, Any]) -> str:
    d = r.get("details")
    if not isinstance(d, Mapping):
        return str(r.get("outcome"))
    points = d.get("points")
    if isinstance(points, list):
        holds = sum(isinstance(p, Mapping) and p.get("verdict") == "holds" for p in points)
        return f"{r.get('outcome')} ({holds}/{len(points)} points hold)"
    interval = d.get("interval")
    est = record_number(d.get("estimate"))
    if isinstance(interval, list) and len(interval) == 2:
        return (f"{r.get('outcome')} (estimate {_fmt(est)} [{_fmt(record_number(interval[0]))}, "
                f"{_fmt(record_number(interval[1]))}] vs bound {_fmt(record_number(d.get('bound')))})")
    return str(r.get("outcome"))


def _epsilon_rise(b: Mapping[str, Any], n: Mapping[str, Any]) -> str | None:
    """The detail of an ε that rose beyond noise (module docstring), else ``None``: the comparison rule the entry's
    check kind registered (:mod:`dpverify.suites.kinds`); kinds that register none never report a rise."""
    kind = n.get("kind")
    if kind != b.get("kind") or not isinstance(kind, str):
        return None
    rule = comparison_rule(kind)
    return None if rule is None else rule(b, n)


def _entry_change(name: str, b: Mapping[str, Any], n: Mapping[str, Any]) -> EntryChange | None:
    changes: list[str] = []
    details: list[str] = []
    bm, nm = b.get("matched") is True, n.get("matched") is True
    theorem = b.get("kind") == n.get("kind") == "theorem"
    moved = b.get("outcome") != n.get("outcome")
    if bm and not nm:
        changes.append("regression")
    elif nm and not bm:
        changes.append("fixed")
    if moved and theorem and b.get("outcome") in _VERDICTS and n.get("outcome") in _VERDICTS:
        changes.append("verdict-changed")
    elif moved and bm == nm:
        changes.append("outcome-changed")
    if moved or bm != nm:
        if theorem:
            details.append(f"{_theorem_text(b)} -> {_theorem_text(n)}")
        else:
            details.append(f"{b.get('outcome')} -> {n.get('outcome')} (expected {n.get('expectation')})")
            lbs = (record_number(b.get("epsilon_lower_bound")), record_number(n.get("epsilon_lower_bound")))
            if _fmt(lbs[0]) != _fmt(lbs[1]):
                details.append(f"ε lower bound {_fmt(lbs[0])} -> {_fmt(lbs[1])}")
        if n.get("outcome") == "error" and n.get("error"):
            details.append(f"error: {str(n.get('error')).splitlines()[0]}")
    rise = _epsilon_rise(b, n)
    if rise is not None:
        changes.append("epsilon-rose")
        details = [d for d in details if not d.startswith("ε lower bound")] + [rise]
    redefined = [f"{k} {_compact(b.get(k))} -> {_compact(n.get(k))}"
                 for k in ("kind", "mechanism", "claim", "expectation") if b.get(k) != n.get(k)]
    if redefined:
        changes.append("claim-changed")
        details.extend(redefined)
    if not changes:
        return None
    return EntryChange(entry=name, changes=tuple(changes), base=b, new=n, detail="; ".join(details))


def _compact(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False, separators=(",", ":")) if isinstance(v, (dict, list)) else str(v)


def _code_changes(base: RunRecord, new: RunRecord) -> list[CodeChange]:
    fb, fn = base.fingerprint or {}, new.fingerprint or {}
    out: list[CodeChange] = []
    gb, gn = fb.get("git") or {}, fn.get("git") or {}
    for key in ("commit", "dirty"):
        if gb.get(key) != gn.get(key):
            out.append(CodeChange(f"git {key}", gb.get(key), gn.get(key)))
    mb, mn = fb.get("modules") or {}, fn.get("modules") or {}
    for name in sorted(set(mb) | set(mn)):
        hb = (mb.get(name) or {}).get("sha256") if name in mb else None
        hn = (mn.get(name) or {}).get("sha256") if name in mn else None
        if hb != hn:
            out.append(CodeChange(f"module {name}", hb, hn))
    db = (fb.get("dpverify") or {}).get("files") or {}
    dn = (fn.get("dpverify") or {}).get("files") or {}
    for name in sorted(set(db) | set(dn)):
        if db.get(name) != dn.get(name):
            out.append(CodeChange(f"dpverify {name}", db.get(name), dn.get(name)))
    vb, vn = base.doc.get("versions") or {}, new.doc.get("versions") or {}
    for key in sorted(set(vb) | set(vn)):
        if vb.get(key) != vn.get(key):
            out.append(CodeChange(f"version {key}", vb.get(key), vn.get(key)))
    return out


def compare_runs(base: RunRecord, new: RunRecord) -> Comparison:
    """What changed from ``base`` to ``new`` (see the module docstring for every kind of change and the rule
    for an ε lower bound that rose)."""
    notes: list[str] = []
    for key in ("mode", "seed"):
        if base.doc.get(key) != new.doc.get(key):
            notes.append(f"{key} differs: {base.doc.get(key)} -> {new.doc.get(key)}")
    for label, r in (("BASE", base), ("NEW", new)):
        status = r.doc.get("status")
        if status not in (None, "complete"):
            notes.append(f"{label} is {status}: its not-run entries count as not matching")
    if base.kind == new.kind == "certificate":
        code = _code_changes(base, new)
    else:
        code = []
        plain = [label for label, r in (("BASE", base), ("NEW", new)) if r.kind != "certificate"]
        notes.append(f"{' and '.join(plain)} {'is a report' if len(plain) == 1 else 'are reports'} without a "
                     "code fingerprint: code not compared (use `dpverify certify` for certificates)")
    changes: list[EntryChange] = []
    unchanged = 0
    for name, b in base.entries.items():
        n = new.entries.get(name)
        if n is None:
            changes.append(EntryChange(name, ("removed",), b, None, f"only in BASE ({b.get('outcome')})"))
            continue
        change = _entry_change(name, b, n)
        if change is None:
            unchanged += 1
        else:
            changes.append(change)
    for name, n in new.entries.items():
        if name not in base.entries:
            changes.append(EntryChange(name, ("added",), None, n, f"only in NEW ({n.get('outcome')})"))
    changes.sort(key=lambda c: CHANGE_KINDS.index(c.changes[0]))  # stable: file order within a kind
    return Comparison(base=base, new=new, entries=tuple(changes), code=tuple(code), notes=tuple(notes),
                      unchanged=unchanged)
