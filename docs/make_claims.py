"""Regenerate docs/claims.md: python docs/make_claims.py [--jobs N] [--papers DIR] [--no-run]

The ledger of every numbered statement of the three papers (Pinot, Morvan, Yger, Gouy-Pailler, Atif,
"Graph-based Clustering under Differential Privacy"; Pinot's report on private minimum spanning trees and MST
clustering, with its poster; Liebenow, Schütt et al., "DPM: Clustering Sensitive Data through Separation") is
data: ``docs/claims.toml``.  This script validates it (every referenced suite entry, finding, test and
reproduction exists; every row has a verdict and a reason where one is needed), runs every *decisive* suite
entry at the quick budget with run seed 0, derives each row's verdict from their outcomes, fails (exit 1) when a
derived verdict differs from the recorded one, and writes ``docs/claims.md``.

``--papers DIR`` (optional; the repository never needs the paper texts) scans every ``*.txt`` in DIR for
numbered statement names (Algorithm / Definition / Lemma / Proposition / Theorem / Corollary / Claim / Table /
Figure N[.M]), identifies the paper by its ``signature`` in the ledger, and reports every name that is neither a
ledger row nor a listed non-statement of that paper (exit 1 if any).  ``--no-run`` validates and scans only.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import re
import sys
import time
import tomllib
from collections import Counter
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from dpverify.suites import load_suites, run_entry  # noqa: E402 -- the only dpverify imports

LEDGER = ROOT / "docs" / "claims.toml"
OUTPUT = ROOT / "docs" / "claims.md"
FINDINGS = ROOT / "docs" / "findings.md"
REPRODUCTIONS = ROOT / "docs" / "reproductions"
COMMAND = "python docs/make_claims.py"

VERDICTS: tuple[str, ...] = ("holds", "violated", "proven-elsewhere", "not-checkable")
KINDS: tuple[str, ...] = ("algorithm", "definition", "lemma", "proposition", "theorem", "corollary", "claim",
                          "table", "figure")
#: outcome of a suite entry -> the verdict it supports
OUTCOME_VERDICT: dict[str, str] = {"pass": "holds", "holds": "holds", "violation": "violated", "violated": "violated"}
STATEMENT_RE = re.compile(
    r"\b(Algorithm|Definition|Lemma|Proposition|Theorem|Corollary|Claim|Table|Figure|Fig\.)\s*\.?\s+"
    r"((?:[A-Z]\.)?\d+(?:\.\d+)*)")


class LedgerError(Exception):
    """The ledger is inconsistent with the repository (a missing reference, an empty field, a bad verdict)."""


# ------------------------------------------------------------------------------------------ loading
@dataclass(frozen=True)
class Claim:
    """One row: a numbered statement of a paper, what implements it, what checks it and the verdict."""

    paper: str
    number: str
    kind: str
    statement: str
    code: tuple[str, ...]
    verdict: str
    decisive: tuple[str, ...]
    checks: tuple[str, ...]
    reason: str

    @property
    def key(self) -> str:
        return f"{self.paper}: {self.number}"


@dataclass(frozen=True)
class Paper:
    key: str
    title: str
    signature: str
    not_statements: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Ledger:
    papers: tuple[Paper, ...]
    claims: tuple[Claim, ...]

    def by_paper(self, key: str) -> list[Claim]:
        return [c for c in self.claims if c.paper == key]

    def suite_refs(self) -> list[str]:
        """Every suite entry the ledger names (decisive first), each once, in order."""
        seen: dict[str, None] = {}
        for c in self.claims:
            for ref in c.decisive:
                seen.setdefault(ref, None)
        for c in self.claims:
            for ref in c.checks:
                if ref_kind(ref) == "suite":
                    seen.setdefault(ref, None)
        return list(seen)

    def decisive_refs(self) -> list[str]:
        return list(dict.fromkeys(r for c in self.claims for r in c.decisive))


def ref_kind(ref: str) -> str:
    """``finding`` (``F12``), ``test`` (``tests/x.py::name``), ``repro`` (``repro:name``) or ``suite``
    (``suite/id``)."""
    if re.fullmatch(r"F\d+", ref):
        return "finding"
    if ref.startswith("tests/"):
        return "test"
    if ref.startswith("repro:"):
        return "repro"
    return "suite"


def _strings(value: Any, where: str, key: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise LedgerError(f"{where}: '{key}' must be a list of non-empty strings, got {value!r}")
    return tuple(value)


def load_ledger(path: Path = LEDGER) -> Ledger:
    """Read and validate the shape of ``docs/claims.toml`` (references are checked by :func:`check_references`)."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise LedgerError(f"cannot read the ledger {path}: {exc}") from None
    papers = []
    for p in raw.get("paper", []):
        ns = {d["name"]: d["reason"] for d in p.get("not_statements", [])}
        papers.append(Paper(p["key"], p["title"], p["signature"], ns))
    keys = {p.key for p in papers}
    claims = []
    for i, c in enumerate(raw.get("claim", [])):
        where = f"claim #{i + 1} ({c.get('paper')}: {c.get('number')})"
        for k in ("paper", "number", "kind", "statement", "verdict"):
            if not isinstance(c.get(k), str) or not c[k].strip():
                raise LedgerError(f"{where}: '{k}' is missing or empty")
        unknown = set(c) - {"paper", "number", "kind", "statement", "code", "verdict", "decisive", "checks", "reason"}
        if unknown:
            raise LedgerError(f"{where}: unknown keys {sorted(unknown)}")
        if c["paper"] not in keys:
            raise LedgerError(f"{where}: unknown paper {c['paper']!r}; papers: {sorted(keys)}")
        if c["kind"] not in KINDS:
            raise LedgerError(f"{where}: kind {c['kind']!r} is not one of {KINDS}")
        if c["verdict"] not in VERDICTS:
            raise LedgerError(f"{where}: verdict {c['verdict']!r} is not one of {VERDICTS}")
        claim = Claim(c["paper"], c["number"], c["kind"], c["statement"], _strings(c.get("code"), where, "code"),
                      c["verdict"], _strings(c.get("decisive"), where, "decisive"),
                      _strings(c.get("checks"), where, "checks"), str(c.get("reason", "")).strip())
        if claim.verdict in ("holds", "violated") and not claim.decisive:
            raise LedgerError(f"{where}: a '{claim.verdict}' row needs 'decisive' suite entries that check it")
        if claim.verdict in ("proven-elsewhere", "not-checkable"):
            if not claim.reason:
                raise LedgerError(f"{where}: a '{claim.verdict}' row needs a 'reason'")
            if claim.decisive:
                raise LedgerError(f"{where}: a '{claim.verdict}' row has no decisive checks; move them to 'checks'")
        if any(ref_kind(r) != "suite" for r in claim.decisive):
            raise LedgerError(f"{where}: 'decisive' holds suite entries ('suite/id') only, got {claim.decisive}")
        claims.append(claim)
    dup = [k for k, n in Counter(c.key for c in claims).items() if n > 1]
    if dup:
        raise LedgerError(f"duplicate rows: {dup}")
    return Ledger(tuple(papers), tuple(claims))


# ------------------------------------------------------------------------------------------ references
def suite_entries() -> dict[str, Any]:
    """Every entry of every suite in ``audits/``, by ``suite/id``."""
    suites = load_suites(sorted((ROOT / "audits").glob("*.toml")))
    return {f"{s.name}/{e.id}": e for s in suites for e in s.entries}


def finding_ids(path: Path = FINDINGS) -> set[str]:
    return set(re.findall(r"^## (F\d+)\.", path.read_text(encoding="utf-8"), flags=re.M))


def test_exists(ref: str) -> bool:
    """``tests/<file>.py::<function>`` names a test function defined at the top level of that file."""
    file, _, name = ref.partition("::")
    path = ROOT / file
    if not name or not path.is_file():
        return False
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name for n in tree.body)


def code_exists(ref: str) -> bool:
    """``module:attr`` imports (``algorithms`` only) and has the attribute."""
    module, _, attr = ref.partition(":")
    if not module.startswith("algorithms."):
        return False
    try:
        return hasattr(importlib.import_module(module), attr) if attr else True
    except ImportError:
        return False


def check_references(ledger: Ledger, entries: dict[str, Any] | None = None) -> list[str]:
    """Every problem with a reference: a suite entry, finding, test, reproduction or code path that does not
    exist, and every decisive entry whose *expected* outcome does not support the row's verdict."""
    entries = suite_entries() if entries is None else entries
    findings = finding_ids()
    problems = []
    for c in ledger.claims:
        for ref in (*c.decisive, *c.checks):
            kind = ref_kind(ref)
            ok = (ref in entries if kind == "suite" else ref in findings if kind == "finding"
                  else test_exists(ref) if kind == "test"
                  else (REPRODUCTIONS / f"{ref.removeprefix('repro:')}.md").is_file())
            if not ok:
                problems.append(f"{c.key}: {kind} {ref!r} does not exist")
        for ref in c.code:
            if not code_exists(ref):
                problems.append(f"{c.key}: code {ref!r} does not import")
        for ref in c.decisive:
            if ref in entries and OUTCOME_VERDICT.get(entries[ref].expect) != c.verdict:
                problems.append(f"{c.key}: verdict {c.verdict!r} but decisive {ref} expects {entries[ref].expect!r}")
    return problems


# ------------------------------------------------------------------------------------------ running
def _run_one(ref: str) -> dict[str, Any]:
    entry = suite_entries()[ref]
    o = run_entry(entry, "quick", 0, workers=1)
    summary = (o.details or {}).get("summary") if o.details else None
    return {"ref": ref, "outcome": o.outcome, "expect": entry.expect, "matched": o.matched, "seconds": o.seconds,
            "error": o.error, "lower_bound": o.epsilon_lower_bound, "summary": summary}


def run_decisive(refs: Sequence[str], jobs: int = 2) -> dict[str, dict[str, Any]]:
    """Run the suite entries ``refs`` at the quick budget, run seed 0 (one process per job)."""
    if jobs <= 1:
        results = [_run_one(r) for r in refs]
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            results = list(pool.map(_run_one, refs))
    return {r["ref"]: r for r in results}


def derive(claim: Claim, runs: dict[str, dict[str, Any]]) -> str | None:
    """The verdict the decisive outcomes give (``None``: they disagree, or one did not end in a verdict)."""
    verdicts = {OUTCOME_VERDICT.get(runs[r]["outcome"]) for r in claim.decisive}
    return verdicts.pop() if len(verdicts) == 1 and None not in verdicts else None


# ------------------------------------------------------------------------------------------ papers
def scan_papers(ledger: Ledger, directory: Path) -> tuple[dict[str, list[str]], list[str]]:
    """Numbered statement names in the paper texts of ``directory`` that are missing from the ledger, per file;
    and the files no paper signature matched."""
    missing: dict[str, list[str]] = {}
    unknown: list[str] = []
    for path in sorted(directory.glob("*.txt")):
        text = path.read_text(encoding="utf-8", errors="replace")
        paper = next((p for p in ledger.papers if p.signature.lower() in text.lower()), None)
        if paper is None:
            unknown.append(path.name)
            continue
        rows = {c.number for c in ledger.by_paper(paper.key)}
        names = {f"{'Figure' if m.group(1) == 'Fig.' else m.group(1)} {m.group(2)}"
                 for m in STATEMENT_RE.finditer(text)}
        gone = sorted(n for n in names if n not in rows and n not in paper.not_statements)
        missing[f"{path.name} ({paper.key})"] = gone
    return missing, unknown


def rows_not_in_texts(ledger: Ledger, directory: Path) -> dict[str, list[str]]:
    """Per paper, the ledger rows whose number no text of that paper in ``directory`` mentions (a typo)."""
    found: dict[str, set[str]] = {p.key: set() for p in ledger.papers}
    for path in sorted(directory.glob("*.txt")):
        text = path.read_text(encoding="utf-8", errors="replace")
        paper = next((p for p in ledger.papers if p.signature.lower() in text.lower()), None)
        if paper is not None:
            found[paper.key] |= {f"{'Figure' if m.group(1) == 'Fig.' else m.group(1)} {m.group(2)}"
                                 for m in STATEMENT_RE.finditer(text)}
    return {p.key: [c.number for c in ledger.by_paper(p.key) if found[p.key] and c.number not in found[p.key]]
            for p in ledger.papers}


# ------------------------------------------------------------------------------------------ writing
def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _refs(refs: Iterable[str], runs: dict[str, dict[str, Any]]) -> str:
    out = []
    for r in refs:
        if ref_kind(r) == "suite" and r in runs:
            out.append(f"`{r}` ({runs[r]['outcome']})")
        else:
            out.append(f"`{r}`")
    return ", ".join(out) if out else "-"


def render(ledger: Ledger, runs: dict[str, dict[str, Any]], seconds: float, platform: str) -> str:
    lines = [
        f"<!-- generated by `{COMMAND}` from docs/claims.toml; do not edit by hand -->",
        "# Ledger of the papers' numbered statements",
        "",
        f"Generated by `{COMMAND}` (data: `docs/claims.toml`): every numbered algorithm, definition, lemma, "
        "proposition, theorem, corollary, claim, table and figure of the three papers, the code that implements it, "
        "what checks it and the verdict.  The command ran every *decisive* suite entry below at the quick budget "
        f"(run seed 0): {len(runs)} entries in {seconds:.0f} s on {platform}; the outcome of each is shown next to it.",
        "",
        "Verdicts: **holds** -- every decisive check ran in this command and agreed with the statement (for a privacy "
        "claim: no violation detected at that budget, never a proof of privacy; for a theorem: the confidence "
        "interval lies on the claimed side); **violated** -- the decisive checks ran in this command and contradict "
        "the statement as printed; **proven-elsewhere** -- proven in the paper or a cited source, not re-checked "
        "(the reason says why); **not-checkable** -- a definition, illustration, informal statement or measured "
        "experiment, with no bound to check (the reason says which; experiments that are reproduced say where).  "
        "`Fn` is a finding of `docs/findings.md`, `tests/...` a test, `repro:name` a reproduction "
        "(`dpverify reproduce name`, output in `docs/reproductions/`).",
        "",
        "| paper | statements | holds | violated | proven elsewhere | not checkable |",
        "|---|---|---|---|---|---|",
    ]
    for p in ledger.papers:
        cs = ledger.by_paper(p.key)
        n = Counter(c.verdict for c in cs)
        lines.append(f"| {p.title} | {len(cs)} | {n['holds']} | {n['violated']} | {n['proven-elsewhere']} | "
                     f"{n['not-checkable']} |")
    n = Counter(c.verdict for c in ledger.claims)
    lines.append(f"| **all** | {len(ledger.claims)} | {n['holds']} | {n['violated']} | {n['proven-elsewhere']} | "
                 f"{n['not-checkable']} |")
    for p in ledger.papers:
        lines += ["", f"## {p.title}", "", "| # | kind | statement | code | decisive checks | other evidence | "
                  "verdict | reason |", "|---|---|---|---|---|---|---|---|"]
        for c in ledger.by_paper(p.key):
            code = ", ".join(f"`{x}`" for x in c.code) or "-"
            lines.append(f"| {c.number} | {c.kind} | {_cell(c.statement)} | {code} | {_refs(c.decisive, runs)} | "
                         f"{_refs(c.checks, runs)} | **{c.verdict}** | {_cell(c.reason) or '-'} |")
        if p.not_statements:
            lines += ["", "Numbered names in the text that are not statements of this paper: " + "; ".join(
                f"{k} ({v})" for k, v in p.not_statements.items()) + "."]
    lines.append("")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2, help="suite entries run side by side (default 2)")
    ap.add_argument("--papers", type=Path, help="a directory of paper texts to cross-check the ledger against")
    ap.add_argument("--no-run", action="store_true", help="validate (and scan) only; do not run or write")
    ap.add_argument("--out", type=Path, default=OUTPUT, help="where to write the markdown (default docs/claims.md)")
    args = ap.parse_args(argv)
    if args.jobs < 1:
        ap.error(f"--jobs must be >= 1, got {args.jobs}")
    ledger = load_ledger()
    status = 0
    problems = check_references(ledger)
    for p in problems:
        print("LEDGER:", p)
    if problems:
        status = 1
    if args.papers is not None:
        if not args.papers.is_dir():
            ap.error(f"--papers {args.papers} is not a directory")
        missing, unknown = scan_papers(ledger, args.papers)
        for name, gone in missing.items():
            print(f"papers: {name}: {'all numbered statements in the ledger' if not gone else 'MISSING ' + ', '.join(gone)}")
            status |= bool(gone)
        for key, extra in rows_not_in_texts(ledger, args.papers).items():
            if extra:
                print(f"papers: {key}: ledger rows not found in any text of the paper: {', '.join(extra)}")
                status = 1
        for name in unknown:
            print(f"papers: {name}: no paper signature matched (not a paper of the ledger)")
    for p in ledger.papers:
        print(f"{p.key}: {len(ledger.by_paper(p.key))} statements")
    if args.no_run or problems:
        return status
    refs = ledger.decisive_refs()
    t0 = time.perf_counter()
    runs = run_decisive(refs, args.jobs)
    seconds = time.perf_counter() - t0
    for ref, r in runs.items():
        mark = "ok" if r["matched"] else "MISMATCH"
        print(f"{mark:8s} {ref:70s} {r['outcome']:12s} expected {r['expect']:12s} {r['seconds']:7.2f} s")
        if not r["matched"]:
            status = 1
    for c in ledger.claims:
        if c.decisive and derive(c, runs) != c.verdict:
            print(f"VERDICT {c.key}: recorded {c.verdict!r}, the decisive outcomes give "
                  f"{[runs[r]['outcome'] for r in c.decisive]}")
            status = 1
    import platform as _platform
    args.out.write_text(render(ledger, runs, seconds, f"{_platform.machine()} / Python {_platform.python_version()}"),
                        encoding="utf-8")
    n = Counter(c.verdict for c in ledger.claims)
    print(f"wrote {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}: {len(ledger.claims)} "
          f"statements ({dict(n)}), {len(runs)} decisive entries run in {seconds:.1f} s")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
