"""Certificates of a suite run and the comparison of two runs (``dpverify certify`` / ``dpverify compare``).

**Certificate.**  ``dpverify certify`` runs suites at their full budgets and writes ``DIR/report.json`` (as
``dpverify run`` does) and ``DIR/certificate.json`` (schema ``dpverify.certificate``, version 1, written
atomically)::

    {"schema": "dpverify.certificate", "schema_version": 2, "created": "...", "dpverify_version": "0.1.0",
     "status": "complete", "mode": "full", "seed": 0, "workers": null, "suites": [...], "select": null,
     "matched": true,                                   # every outcome equals its expectation
     "fingerprint": {
        "git": {"commit": "<sha1>", "dirty": false} | null,    # `git rev-parse HEAD` / `git status --porcelain`
                                                             # in the working directory; null outside a checkout
        "modules": {"algorithms.classic.laplace": {"path": "algorithms/classic/laplace.py", "sha256": "..."}},
        "entry_modules": {"classic/laplace": ["algorithms.classic.laplace"], ...},
        "dpverify": {"sha256": "...", "files": {"audit.py": "...", ...}}},
     "versions": {"python", "numpy", "numpy_kernels", "scipy", "dpverify", "platform"},
     "seeds": {"run": 0, "entries": {"classic/laplace": 123..., ...}},
     "report": "report.json", "entries": [<the records of report.json>], "summary": {...}}

``modules`` holds the source file of every module an entry names (its ``mechanism``, and the ``build`` function
of a built input, pairs or utilities -- imported the way :func:`dpverify.suites.resolve` does) and of every other
module of the same top-level packages loaded once the run is over whose file lies under the working directory
and outside ``site-packages`` (the project's helpers those modules import -- not numpy's internals).  The
``dpverify`` hash covers every ``.py`` file of the package.  A module without a source file (a builtin) has
``path`` and ``sha256`` null.

**Comparison.**  :func:`compare_runs` takes two loaded records (:func:`load_run_record`: a ``report.json``, a
``certificate.json`` or a directory holding one; a certificate is preferred) and lists, entry by entry (matched
by ``suite/id``):

* ``regression`` -- the outcome equalled its expectation in BASE and does not in NEW (including a NEW outcome
  ``error`` or ``not-run``);
* ``fixed`` -- the other way round;
* ``verdict-changed`` -- a ``theorem`` entry whose verdict (holds / violated / inconclusive) differs;
* ``outcome-changed`` -- any other change of outcome (e.g. an unexpected ``pass`` turned into an ``error``);
* ``epsilon-rose`` -- the ε lower bound rose beyond what run-to-run noise explains (rule below);
* ``claim-changed`` -- the entry's claim, expectation or mechanism differs (a flipped expectation can hide a
  regression, so it is always shown);
* ``added`` / ``removed`` -- entries present in one record only;

plus, when both are certificates, the code fingerprint differences (git commit and dirty flag, each module's
hash, each dpverify file's hash, versions).  Only ``regression`` makes ``dpverify compare`` exit non-zero.

*When has an ε lower bound risen beyond noise?*  ``report.json`` keeps, for a ``statistical`` entry, the witness
event's counts: ``count_num`` of ``samples`` fresh outputs on the numerator input fell in the event, ``count_den``
of ``samples_den`` on the other input (Poisson-sized samples differ; older records have ``samples`` only), with the Clopper-Pearson bounds ``p_num_low`` and ``p_den_high`` the audit used at its
per-test level ``a`` (``alpha / (2K)`` for ``K`` tests).  :func:`witness_upper_bound` recovers ``a`` from
``p_num_low`` (``a = Beta(k, n-k+1).cdf(p_num_low)``, else from ``p_den_high``) and returns BASE's *upper*
confidence bound on that event's privacy loss at the same level, ``ln((U_num - δ) / L_den)``.  NEW's lower bound
*rose* when it exceeds that upper bound: if NEW's witness is the same event on the same pair, that event's loss
grew (both bounds hold with probability ``1 - 2a`` each), so the code's behaviour changed; if it is another
event, NEW found a stronger event than BASE's strongest (a change of the code or a luckier search -- the detail
says which case it is).  An impossible BASE event (``count_den = 0``) has an infinite upper bound: nothing rises
above it.  Without a witness BASE's threshold is the claimed ε.  For ``exact`` entries the ε is computed, not
sampled: any rise beyond floating-point rounding (relative 1e-9) counts.  Other kinds have no ε bound to compare;
their outcome changes are listed.
"""


from __future__ import annotations

import hashlib
import json
import platform
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from dpverify.execution.cpu_features import numpy_setting
from dpverify.reporting.report import dpverify_version, report_dict, write_text_atomic
from dpverify.suites import Builder, Entry, EntryOutcome, entry_seed, resolve

__all__ = ["CERTIFICATE_SCHEMA", "CERTIFICATE_VERSION", "git_fingerprint", "entry_modules", "code_fingerprint",
           "versions", "certificate_dict", "write_certificate"]

CERTIFICATE_SCHEMA = "dpverify.certificate"
CERTIFICATE_VERSION = 2


# --------------------------------------------------------------------------------------------------
# the code fingerprint
# --------------------------------------------------------------------------------------------------


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 16), b""):
            h.update(block)
    return h.hexdigest()


def _git(args: Sequence[str], cwd: Path) -> str | None:
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):  # no git installed, or it hung
        return None
    return proc.stdout if proc.returncode == 0 else None


def git_fingerprint(cwd: str | Path | None = None) -> dict[str, Any] | None:
    """``{"commit": <HEAD>, "dirty": <uncommitted or untracked changes>}`` of the git checkout holding ``cwd``
    (default: the working directory); ``None`` outside a checkout or without git."""
    where = Path.cwd() if cwd is None else Path(cwd)
    head = _git(["rev-parse", "HEAD"], where)
    if head is None:
        return None
    status = _git(["status", "--porcelain"], where)
    return {"commit": head.strip(), "dirty": None if status is None else bool(status.strip())}


def _module_name(import_path: str) -> str:
    return import_path.split(":", 1)[0]


def entry_modules(entries: Iterable[Entry]) -> dict[str, list[str]]:
    """``{"suite/id": [module, ...]}``: the module of each entry's ``mechanism`` and of its ``build`` functions,
    imported with the suite's ``import_paths`` (:func:`dpverify.suites.resolve`)."""
    out: dict[str, list[str]] = {}
    for e in entries:
        paths = [e.mechanism] + [v.build for v in (e.input, e.pairs, e.utilities) if isinstance(v, Builder)]
        names: list[str] = []
        for p in paths:
            resolve(p, where=e.where, search_paths=e.import_paths)
            if _module_name(p) not in names:
                names.append(_module_name(p))
        out[e.name] = names
    return out


def _display_path(path: Path, cwd: Path) -> str:
    try:
        return path.relative_to(cwd).as_posix()
    except ValueError:
        return path.as_posix()


def _source(module_name: str) -> Path | None:
    module = sys.modules.get(module_name)
    file = getattr(module, "__file__", None) if module is not None else None
    path = Path(file).resolve() if isinstance(file, str) else None
    return path if path is not None and path.is_file() else None


def _project_file(path: Path, cwd: Path) -> bool:
    """Whether ``path`` is the project's own source: under ``cwd`` and not in an installed-packages directory."""
    return path.is_relative_to(cwd) and not {"site-packages", "dist-packages"} & set(path.parts)


def _module_files(names: Iterable[str], cwd: Path) -> dict[str, dict[str, str | None]]:
    """Path and sha256 of the modules ``names`` and of every other loaded module of the same top-level packages
    that is project source (:func:`_project_file`: a helper ``algorithms.classic.laplace`` imports, not numpy)."""
    tops = {n.split(".", 1)[0] for n in names}
    wanted = set(names)
    for m in list(sys.modules):
        path = _source(m) if m.split(".", 1)[0] in tops else None
        if path is not None and _project_file(path, cwd):
            wanted.add(m)
    out: dict[str, dict[str, str | None]] = {}
    for name in sorted(wanted):
        path = _source(name)
        out[name] = ({"path": None, "sha256": None} if path is None else
                     {"path": _display_path(path, cwd), "sha256": _sha256(path)})
    return out


def _dpverify_files() -> dict[str, Any]:
    """sha256 of every ``.py`` file of the dpverify package, and one hash over them all."""
    root = Path(__file__).resolve().parents[1]  # the dpverify package
    files = {p.relative_to(root).as_posix(): _sha256(p) for p in sorted(root.rglob("*.py"))}
    combined = hashlib.sha256("".join(f"{k}\0{v}\n" for k, v in files.items()).encode()).hexdigest()
    return {"sha256": combined, "files": files}


def code_fingerprint(entries: Sequence[Entry], cwd: str | Path | None = None) -> dict[str, Any]:
    """The ``fingerprint`` of a certificate: git state, audited modules' hashes, dpverify's files' hashes."""
    where = (Path.cwd() if cwd is None else Path(cwd)).resolve()
    by_entry = entry_modules(entries)
    names = [m for ms in by_entry.values() for m in ms]
    return {"git": git_fingerprint(where), "modules": _module_files(names, where), "entry_modules": by_entry,
            "dpverify": _dpverify_files()}


def versions() -> dict[str, str]:
    """Versions a result may depend on: python, numpy (and its CPU kernels:
    :func:`dpverify.execution.cpu_features.numpy_setting`), scipy, dpverify, and the platform string."""
    import numpy
    import scipy

    return {"python": platform.python_version(), "numpy": numpy.__version__, "numpy_kernels": numpy_setting(),
            "scipy": scipy.__version__, "dpverify": dpverify_version(), "platform": platform.platform()}


def certificate_dict(outcomes: Sequence[EntryOutcome], meta: Mapping[str, Any], entries: Sequence[Entry],
                     fingerprint: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The ``certificate.json`` document of a finished run.  ``meta`` is the run's report metadata (``mode``,
    ``seed``, ``workers``, ``suites``, ``select``, ``status``); ``fingerprint`` defaults to
    :func:`code_fingerprint` of ``entries``."""
    report = report_dict(outcomes, meta)
    seed = int(meta["seed"])
    return {
        "schema": CERTIFICATE_SCHEMA,
        "schema_version": CERTIFICATE_VERSION,
        "created": report["created"],
        "dpverify_version": report["dpverify_version"],
        "status": report["status"],
        "mode": report["mode"],
        "seed": seed,
        "workers": report["workers"],
        "suites": report.get("suites"),
        "select": report.get("select"),
        "matched": bool(outcomes) and all(o.matched for o in outcomes),
        "fingerprint": dict(code_fingerprint(entries) if fingerprint is None else fingerprint),
        "versions": versions(),
        "seeds": {"run": seed, "entries": {e.name: entry_seed(seed, e.suite, e.id) for e in entries}},
        "report": "report.json",
        "entries": report["entries"],
        "summary": report["summary"],
    }


def write_certificate(out_dir: str | Path, outcomes: Sequence[EntryOutcome], meta: Mapping[str, Any],
                      entries: Sequence[Entry]) -> Path:
    """Write ``out_dir/certificate.json`` atomically (:func:`dpverify.reporting.report.write_text_atomic`); its path."""
    path = Path(out_dir) / "certificate.json"
    doc = certificate_dict(outcomes, meta, entries)
    write_text_atomic(path, json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n")
    return path
