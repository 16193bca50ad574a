"""The ``dpverify`` command line (also ``python -m dpverify``).

``dpverify run [PATHS...] [--full] [--sequential] [--select PATTERN] [--seed N] [--workers N] [--out DIR]
[--resume] [--scheduler ADDRESS]``
    Run audit suites (the quick budget unless ``--full``).  Progress on stderr (:mod:`dpverify.cli.progress`: a
    live status line on a terminal, one line per entry otherwise), the table on stdout, ``DIR/report.json``
    rewritten atomically after every entry, ``report.md`` and ``report.html`` with plots at the end
    (:func:`dpverify.reporting.pages.write_reports`).  Exit status 0 when every outcome equals its expectation, 1
    otherwise, 2 on usage or suite errors, 130 when interrupted by Ctrl-C (SIGINT) and 143 by SIGTERM: either
    way the final ``report.json`` (status ``interrupted``), ``report.md`` and ``report.html`` are written, keeping
    every finished entry and marking the others ``"not-run"``, wherever the signal lands -- a second signal
    included (:mod:`dpverify.cli.running`, :mod:`dpverify.cli.interrupts`).  An entry that raises is recorded as ``"error"`` and the run goes on.
    ``--resume`` reads ``DIR/report.json`` and keeps every finished entry (outcome other than ``"not-run"``)
    of the current selection whose record still matches its suite entry (kind, mechanism, claim, expectation,
    seed); only the others run.  A report of another mode, seed or set of suite files is refused, naming
    what differs.  ``--scheduler ADDRESS`` samples on a Dask cluster (:func:`dpverify.execution.distributed.use_scheduler`;
    same seed, same report).  ``--sequential`` runs each statistical entry as an anytime-valid audit with
    its own budget (:func:`dpverify.statistical.anytime.audit_anytime`): a betting test martingale checked after
    every batch, stopping at the first batch that certifies a violation, so a broken claim is reported after a
    fraction of the budget, with a looser bound than the full audit gives.

``dpverify certify [PATHS...] [--select PATTERN] [--seed N] [--workers N] [--out DIR] [--quick]
[--scheduler ADDRESS]``
    Run the suites at their full budgets (``--quick``: the quick ones, for smoke tests; recorded as the mode)
    and write ``DIR/report.json`` and ``DIR/certificate.json`` (:mod:`dpverify.reporting.certify`: code fingerprint,
    versions, seeds, outcomes).  Exit status as ``run``; an interrupted certify writes no certificate.

``dpverify compare BASE NEW [--json]``
    What changed between two reports or certificates (files, or directories holding one): regressions,
    fixed claims, ε lower bounds that rose beyond noise, theorem verdicts, added/removed entries, code
    fingerprint differences.  Exit status 3 when some claim that matched in BASE does not in NEW, else 0
    (2 on unreadable input).

``dpverify audit TARGET [--param K=V]... [--per-call] (--pair X0 X1 | --input X --relation JSON) CLAIM [--samples N]
[--seed N] [--workers N] [--out DIR]``
    Audit one mechanism or library target (:mod:`dpverify.cli.one_shot`); ``CLAIM`` is ``--epsilon E [--delta D]``,
    ``--zcdp RHO``, ``--gdp MU``, ``--rdp ALPHA EPS`` or ``--target-claim``.  Writes ``DIR/audit.toml`` (the suite
    entry that reruns it) and the report files of ``run``; prints the verdict sentence.  Exit 0: no violation
    detected; 1: violation; 2: usage error.

``dpverify list [PATHS...] [--select PATTERN]``
    One line per entry: ``suite/id``, kind, mechanism, claim, expectation.

Without ``PATHS``, ``run``, ``certify`` and ``list`` use the default suites (see :func:`dpverify.suites.default_suites`).
Output piped into a reader that stops early (``dpverify list | head -1``) ends the command quietly, exit status
141 as for SIGPIPE.  Any :class:`~dpverify.errors.DPVerifyError` is printed as ``dpverify: error: <message>`` (exit 2), followed by its
notes (a mechanism's error: the frames of the user's code where it failed, :func:`dpverify.errors.format_error`).

``dpverify bench [OPTIONS]``
    Run the benchmarks of the source checkout this dpverify is installed from: ``python -m benchmarks OPTIONS``
    there (``--quick``, ``--only NAMES``, ``--write docs/performance.md``; exit status its own).  An
    installation without the checkout gets an error saying so.

``dpverify reproduce NAME [--quick] [--seed N] [--workers N] [--out DIR]``
    Rerun a seed paper's experiment (:mod:`dpverify.cli.reproduce`), print its markdown report and write it
    to ``DIR/NAME.md`` (default DIR: ``dpverify-reproductions``).  ``dpverify reproduce --list`` (or no
    NAME) lists the reproductions.  Exit status 0, 2 on an unknown name or other errors, 130 when
    interrupted.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from dpverify.reporting.certify import write_certificate
from dpverify.reporting.compare import compare_runs, load_run_record
from dpverify.results import Measured
from dpverify.errors import DPVerifyError, InputError, format_error
from dpverify.cli.interrupts import Interrupts
from dpverify.cli.one_shot import add_audit_parser, write_audit_suite
from dpverify.cli.running import RunState, run_guarded
from dpverify.reporting.report import dpverify_version, format_table
from dpverify.cli.reproduce import REPRODUCTIONS, load_reproduction, run_reproduction
from dpverify.suites import (
    Entry,
    EntryOutcome,
    Suite,
    default_suites,
    entry_seed,
    load_suites,
    not_run_outcome,
    preflight,
    run_entry,
    select_entries,
)

__all__ = ["main", "build_parser"]

EXIT_OK = 0
EXIT_MISMATCH = 1
EXIT_USAGE = 2
EXIT_REGRESSION = 3
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 128 + 13  # as if ended by SIGPIPE, like other command-line tools


def _non_negative_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return v


def _positive_int(text: str) -> int:
    v = _non_negative_int(text)
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return v


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``dpverify``."""
    parser = argparse.ArgumentParser(
        prog="dpverify",
        description="Verify differential-privacy claims of real code by running audit suites. "
        "'pass' means no violation detected at the sample budget, not a proof of privacy.",
    )
    parser.add_argument("--version", action="version", version=f"dpverify {dpverify_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    paths_help = ("suite files (.toml) or directories of them; default: ./audits, or the checkout's "
                  "audits/ (suites with default = true)")
    select_help = ("fnmatch pattern over 'suite/id' or 'id' (e.g. 'classic/*', '*laplace*'); "
                   "repeat to select more")

    def suite_run_args(cmd: argparse.ArgumentParser, out_default: str) -> None:
        cmd.add_argument("paths", nargs="*", metavar="PATHS", help=paths_help)
        cmd.add_argument("--select", action="append", metavar="PATTERN", help=select_help)
        cmd.add_argument("--seed", type=_non_negative_int, default=0, metavar="N",
                         help="run seed; each entry's seed derives from it and its suite/id (default 0)")
        cmd.add_argument("--workers", type=_positive_int, default=None, metavar="N",
                         help="sampling processes per audit (default: all cores, or 1 when --jobs runs entries "
                         "side by side; results do not depend on it)")
        cmd.add_argument("--jobs", type=_positive_int, default=None, metavar="N",
                         help="entries run side by side in N processes (default: all cores; 1 with --scheduler); "
                         "results do not depend on it")
        cmd.add_argument("--out", default=out_default, metavar="DIR",
                         help=f"report directory; DIR/report.json (default: {out_default})")
        cmd.add_argument("--scheduler", metavar="ADDRESS",
                         help="sample on this Dask distributed cluster (e.g. tcp://10.0.0.5:8786) instead of local "
                         "processes; needs the 'distributed' extra; same seed, same report")

    run = sub.add_parser("run", help="run audit suites", description="Run audit suites and write a report.")
    suite_run_args(run, "dpverify-report")
    run.add_argument("--full", action="store_true", help="use each entry's full budget (default: quick)")
    run.add_argument("--sequential", action="store_true",
                     help="statistical entries run as anytime-valid audits (a betting test martingale, checked after every "
                     "batch) and stop at the first batch that certifies a violation: faster verdicts on broken "
                     "claims, looser bounds")
    run.add_argument("--resume", action="store_true",
                     help="keep the finished entries of DIR/report.json (same mode, seed and suites) and run "
                     "only the others")

    cert = sub.add_parser("certify", help="run suites at full budget and write a certificate",
                          description="Run audit suites at their full budgets and write DIR/report.json and "
                          "DIR/certificate.json: code fingerprint (git commit, hashes of the audited modules "
                          "and of dpverify), versions, seeds and every outcome.")
    suite_run_args(cert, "dpverify-certificate")
    cert.add_argument("--quick", action="store_true",
                      help="quick budgets instead (a smoke test; recorded as mode 'quick' in the certificate)")

    cmp_ = sub.add_parser("compare", help="list what changed between two reports or certificates",
                          description="Compare two runs entry by entry (suite/id): regressions, fixed claims, "
                          "epsilon lower bounds that rose beyond noise, theorem verdicts, added/removed entries, "
                          "code fingerprints.  Exit status 3 on a regression.")
    cmp_.add_argument("base", metavar="BASE", help="report.json, certificate.json, or a directory holding one")
    cmp_.add_argument("new", metavar="NEW", help="report.json, certificate.json, or a directory holding one")
    cmp_.add_argument("--json", action="store_true", help="print the comparison as JSON (schema dpverify.comparison)")

    add_audit_parser(sub, _non_negative_int, _positive_int)

    lst = sub.add_parser("list", help="list the entries of audit suites",
                         description="List suite entries: suite/id, kind, mechanism, claim, expectation.")
    lst.add_argument("paths", nargs="*", metavar="PATHS", help=paths_help)
    lst.add_argument("--select", action="append", metavar="PATTERN", help=select_help)

    rep = sub.add_parser("reproduce", help="rerun a seed paper's experiment and write a markdown report",
                         description="Rerun an experiment of a seed paper from scratch and compare it with "
                         "the printed numbers; the report is printed and written to DIR/NAME.md.")
    rep.add_argument("name", nargs="?", metavar="NAME", help="the reproduction (see --list)")
    rep.add_argument("--list", action="store_true", help="list the reproductions and exit")
    rep.add_argument("--quick", action="store_true",
                     help="a small configuration that runs in seconds (numbers not comparable with the paper)")
    rep.add_argument("--seed", type=_non_negative_int, default=0, metavar="N", help="run seed (default 0)")
    rep.add_argument("--workers", type=_positive_int, default=None, metavar="N",
                     help="processes (default: all cores; results do not depend on it)")
    rep.add_argument("--out", default="dpverify-reproductions", metavar="DIR",
                     help="directory of the report DIR/NAME.md and any figures (default: dpverify-reproductions)")

    bench = sub.add_parser("bench", help="run the benchmarks of a source checkout (python -m benchmarks)",
                           description="Run the benchmarks of the checkout dpverify is installed from (editable "
                           "install): python -m benchmarks with these options, e.g. --quick, --only peers, "
                           "--write docs/performance.md; `dpverify bench -- --help` lists them.")
    bench.add_argument("options", nargs="*", metavar="OPTIONS",
                       help="passed to python -m benchmarks (every argument after 'bench', as given)")
    return parser


def benchmarks_root() -> Path:
    """The checkout holding ``benchmarks/`` next to this ``dpverify`` package, or an InputError."""
    root = Path(__file__).resolve().parents[2]
    if not (root / "benchmarks" / "__main__.py").is_file():
        raise InputError("dpverify bench runs the benchmarks of a source checkout, and this dpverify is installed "
                         f"without them ({root / 'benchmarks'} does not exist); clone the repository and "
                         "`pip install -e \".[dev]\"` in it, or run `python -m benchmarks` there")
    return root


def _cmd_bench(options: Sequence[str]) -> int:
    """``dpverify bench OPTIONS``: every argument goes to ``python -m benchmarks`` unparsed (a leading ``--``
    is dropped)."""
    import subprocess

    root = benchmarks_root()
    options = list(options[1:] if options[:1] == ["--"] else options)
    return subprocess.run([sys.executable, "-m", "benchmarks", *options], cwd=root).returncode


def _load(paths: Sequence[str]) -> list[Suite]:
    return load_suites(paths) if paths else default_suites()


def _cmd_list(args: argparse.Namespace, out: TextIO) -> int:
    entries = select_entries(_load(args.paths), args.select)
    rows = [(e.name, e.kind, e.mechanism, str(e.claim), f"expect {e.expect}") for e in entries]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip(), file=out)
    return EXIT_OK


def _cmd_reproduce(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.list or args.name is None:
        width = max(len(n) for n in REPRODUCTIONS)
        for name, path in sorted(REPRODUCTIONS.items()):
            print(f"{name.ljust(width)}  {path}", file=out)
        if args.name is None and not args.list:
            print("dpverify: pass a NAME to run one: dpverify reproduce NAME [--quick]", file=err)
        return EXIT_OK
    load_reproduction(args.name)  # an unknown name fails before anything runs
    print(f"reproducing {args.name} ({'quick' if args.quick else 'full'}, seed {args.seed}) ...", file=err,
          flush=True)
    t0 = time.perf_counter()
    try:
        text = run_reproduction(args.name, quick=args.quick, seed=args.seed, out_dir=args.out,
                                workers=args.workers)
    except KeyboardInterrupt:
        print(f"dpverify: interrupted; no report written for {args.name}", file=err)
        return EXIT_INTERRUPTED
    print(text, file=out, end="", flush=True)
    print(f"report: {Path(args.out) / (args.name + '.md')} ({time.perf_counter() - t0:.1f} s)", file=err)
    return EXIT_OK


def _run_meta(args: argparse.Namespace, mode: str, suites: Sequence[Suite]) -> dict[str, Any]:
    meta = {"mode": mode, "seed": args.seed, "workers": args.workers, "jobs": _jobs(args),
            "suites": [str(s.path) for s in suites],
            "select": args.select}
    if args.scheduler is not None:
        meta["scheduler"] = args.scheduler
    if _sequential(args):
        meta["sequential"] = True
    return meta


def _sequential(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "sequential", False))


def _sampling_on(scheduler: str | None) -> AbstractContextManager[Any]:
    """Local processes, or the Dask cluster at ``scheduler`` (:func:`dpverify.execution.distributed.use_scheduler`)."""
    if scheduler is None:
        return nullcontext()
    from dpverify.execution.distributed import use_scheduler

    return use_scheduler(scheduler)


def _load_selection(args: argparse.Namespace) -> tuple[list[Suite], list[Entry]]:
    """The suites and the selected entries (a usage error names the problem before anything runs)."""
    suites = _load(args.paths)
    return suites, select_entries(suites, args.select)


def _preflight(entries: list[Entry], seed: int) -> None:
    """Build every entry's mechanism and validate the seed: every usage error before anything runs."""
    preflight(entries)
    entry_seed(seed, "", "")


def _jobs(args: argparse.Namespace) -> int:
    """Entries run side by side: ``--jobs``, else every core; one on a Dask cluster (it does the sampling)."""
    if args.scheduler is not None:
        return 1
    return args.jobs if args.jobs is not None else max(1, os.cpu_count() or 1)


def _json_number(v: Any) -> float | None:
    """A report's number (``"inf"``/``"-inf"``/``"nan"`` as strings) as a float."""
    return None if v is None else float(v)


def _measured(value: Any) -> Measured | None:
    """A record's ``measured`` (report version 2; ``None`` in version 1)."""
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return None
    number = _json_number(value.get("value"))
    return None if number is None else Measured(value["name"], number)


def _kept_outcomes(report_path: Path, entries: Sequence[Entry], mode: str, seed: int, suites: Sequence[Suite],
                   err: TextIO, sequential: bool = False) -> dict[str, EntryOutcome]:
    """``--resume``: the finished entries of ``report_path`` that this invocation would produce again."""
    if not report_path.is_file():
        raise InputError(f"--resume: {report_path} does not exist; pass the --out DIR of the run to resume, or "
                         "drop --resume to start afresh")
    record = load_run_record(report_path)
    if record.kind != "report":
        raise InputError(f"--resume: {report_path} is not a report.json; pass the --out DIR of a `dpverify run`")
    differs = []
    if record.doc.get("mode") != mode:
        differs.append(f"mode: the report is {record.doc.get('mode')}, this run is {mode} (add or drop --full)")
    if bool(record.doc.get("sequential", False)) != sequential:
        differs.append(f"--sequential: the report was run {'with' if record.doc.get('sequential') else 'without'} "
                       f"it, this run {'with' if sequential else 'without'}")
    if record.doc.get("seed") != seed:
        differs.append(f"seed: the report has --seed {record.doc.get('seed')}, this run --seed {seed}")
    theirs = record.doc.get("suites") or []
    if sorted(str(Path(p).resolve()) for p in theirs) != sorted(str(s.path.resolve()) for s in suites):
        differs.append(f"suites: the report ran {', '.join(map(str, theirs)) or 'none'}, this run loads "
                       f"{', '.join(str(s.path) for s in suites)}")
    if differs:
        raise InputError(f"cannot resume {report_path}: it was written by another invocation -- "
                         + "; ".join(differs) + "; rerun with the report's settings, or drop --resume "
                         "(or pass another --out DIR) to start afresh")
    kept: dict[str, EntryOutcome] = {}
    stale: list[str] = []
    for e in entries:
        r = record.entries.get(e.name)
        if r is None or r.get("outcome") == "not-run":
            continue
        fresh = not_run_outcome(e, mode, seed)
        ref = fresh.to_dict()
        changed = [k for k in ("kind", "mechanism", "claim", "expectation", "seed") if r.get(k) != ref[k]]
        if changed:
            stale.append(f"{e.name} ({', '.join(changed)})")
            continue
        try:
            kept[e.name] = replace(
                fresh, outcome=str(r["outcome"]), matched=r.get("matched") is True,
                epsilon_lower_bound=_json_number(r.get("epsilon_lower_bound")), samples=r.get("samples"),
                search_samples=r.get("search_samples"), seconds=float(r.get("seconds") or 0.0),
                witness=r.get("witness"), error=r.get("error"), details=r.get("details"),
                measured=_measured(r.get("measured")))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"--resume: {report_path}: the record of {e.name} is damaged ({type(exc).__name__}: "
                             f"{exc}); drop --resume to start afresh") from None
    print(f"resuming {report_path}: {len(kept)} finished entries kept, {len(entries) - len(kept)} to run",
          file=err, flush=True)
    if stale:
        print(f"  run again (the suite entry changed since the report): {'; '.join(stale)}", file=err, flush=True)
    return kept


def _finish(outcomes: list[EntryOutcome], interrupted: bool, state: RunState, interrupts: Interrupts, out: TextIO,
            err: TextIO, t0: float) -> int | None:
    """Print the table; on an interruption the message and the exit status (130 for SIGINT, 143 for SIGTERM),
    else ``None``."""
    report_path = state.out_dir / "report.json"
    if interrupted and not state.writable:
        print(f"dpverify: interrupted before the run started; {report_path} left as it was", file=err)
        return interrupts.exit_status
    print(format_table(outcomes), file=out, flush=True)
    if interrupted:
        done = sum(o.outcome != "not-run" for o in outcomes)
        entries = "entry" if len(outcomes) == 1 else "entries"
        print(f"dpverify: interrupted after {done}/{len(outcomes)} {entries}; report with the finished "
              f"entries: {report_path}", file=err)
        return interrupts.exit_status
    if interrupts.stopping:
        print("dpverify: a stop signal arrived while the final report was written; the run had finished and its "
              "report is complete", file=err)
    print(f"report: {report_path} ({time.perf_counter() - t0:.1f} s)", file=err)
    return None


def _guarded(args: argparse.Namespace, mode: str, interrupts: Interrupts, err: TextIO, *, resume: bool,
             finish: Any = None) -> tuple[RunState, list[EntryOutcome], bool]:
    """Run the suites of ``args`` (:func:`dpverify.cli.running.run_guarded`): the final report is written
    however the run ends."""
    state = RunState(Path(args.out), mode, args.seed, _run_meta(args, mode, []), writable=not resume)
    kept = None
    if resume:
        def kept(suites: Sequence[Suite], entries: list[Entry]) -> dict[str, EntryOutcome]:
            return _kept_outcomes(state.out_dir / "report.json", entries, mode, args.seed, suites, err,
                                  _sequential(args))
    outcomes, interrupted = run_guarded(
        state, args, interrupts, err, load=lambda: _load_selection(args),
        meta=lambda suites: _run_meta(args, mode, suites), prepare=lambda entries: _preflight(entries, args.seed),
        kept=kept, jobs=_jobs(args), sequential=_sequential(args), sampling=lambda: _sampling_on(args.scheduler),
        finish=finish)
    return state, outcomes, interrupted


def _cmd_run(args: argparse.Namespace, out: TextIO, err: TextIO, interrupts: Interrupts) -> int:
    mode = "full" if args.full else "quick"
    t0 = time.perf_counter()
    state, outcomes, interrupted = _guarded(args, mode, interrupts, err, resume=args.resume)
    code = _finish(outcomes, interrupted, state, interrupts, out, err, t0)
    if code is not None:
        return code
    return EXIT_OK if all(o.matched for o in outcomes) else EXIT_MISMATCH


def _cmd_audit(args: argparse.Namespace, out: TextIO, err: TextIO, interrupts: Interrupts) -> int:
    """``dpverify audit``: the one-entry suite of the arguments (:mod:`dpverify.cli.one_shot`), run as ``run`` runs
    it; then the verdict sentence.  Exit 0 when no violation is detected, 1 on a violation."""
    suite_path = write_audit_suite(args)
    args = argparse.Namespace(**vars(args), paths=[str(suite_path)], select=None, full=False, resume=False,
                              sequential=False, jobs=1, scheduler=None)
    t0 = time.perf_counter()
    state, outcomes, interrupted = _guarded(args, "quick", interrupts, err, resume=False)
    code = _finish(outcomes, interrupted, state, interrupts, out, err, t0)
    if code is not None:
        return code
    outcome = outcomes[0]
    if outcome.outcome == "error":
        print(f"dpverify: error: {outcome.error}", file=err)
        return EXIT_USAGE
    print(str(outcome.result) if outcome.result is not None else outcome.outcome, file=out)
    print(f"suite entry to rerun it: {suite_path}", file=err)
    return EXIT_OK if outcome.outcome == "pass" else EXIT_MISMATCH


def _cmd_certify(args: argparse.Namespace, out: TextIO, err: TextIO, interrupts: Interrupts) -> int:
    mode = "quick" if args.quick else "full"
    out_dir = Path(args.out)
    cert_path = out_dir / "certificate.json"
    try:
        cert_path.unlink(missing_ok=True)  # never leave an old certificate next to a new report
    except OSError as exc:
        raise InputError(f"cannot remove the old certificate {cert_path}: {exc}; pass another --out DIR") from None
    t0 = time.perf_counter()

    def certificate(state: RunState, outcomes: list[EntryOutcome]) -> None:
        try:
            write_certificate(out_dir, outcomes, {**state.meta, "status": "complete"}, state.entries)
        except OSError as exc:
            raise InputError(f"cannot write the certificate {cert_path}: {exc}; pass another --out DIR") from None

    state, outcomes, interrupted = _guarded(args, mode, interrupts, err, resume=False, finish=certificate)
    code = _finish(outcomes, interrupted, state, interrupts, out, err, t0)
    if code is not None:
        print("dpverify: no certificate written (the run did not finish)", file=err)
        return code
    matched = all(o.matched for o in outcomes)
    print(f"certificate: {cert_path} ({mode} mode, {'every' if matched else 'NOT every'} outcome as expected)",
          file=err)
    return EXIT_OK if matched else EXIT_MISMATCH


def _cmd_compare(args: argparse.Namespace, out: TextIO) -> int:
    comparison = compare_runs(load_run_record(args.base), load_run_record(args.new))
    if args.json:
        print(json.dumps(comparison.to_dict(), indent=2, ensure_ascii=False, allow_nan=False), file=out)
    else:
        print(comparison.format_text(), file=out)
    return EXIT_REGRESSION if comparison.regression else EXIT_OK


def _tolerant(stream: TextIO) -> None:
    """Replace characters the console cannot encode (✓, ε on legacy code pages) instead of crashing."""
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None:
        try:
            reconfigure(errors="replace")
        except Exception:  # noqa: BLE001 -- best effort only
            pass


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``dpverify`` console script; returns the exit status.

    SIGINT and SIGTERM stop every command the same way (:mod:`dpverify.cli.interrupts`); a run still writes its
    final report.  Called without ``argv`` (as the console script), both signals are ignored once the command is done: a
    late signal cannot interrupt the interpreter's shutdown under a finished report."""
    with Interrupts(restore=argv is not None, paused=True) as interrupts:
        try:
            code = _main(argv, interrupts)
            sys.stdout.flush()  # a reader that went away shows here, not in the interpreter's exit
            return code
        except BrokenPipeError:  # `dpverify list | head -1`: the reader has all it wants
            return _output_closed()


def _output_closed() -> int:
    """Standard output's reader closed the pipe: point stdout at devnull, so the interpreter's final flush does
    not fail again, and exit quietly with the status of a process ended by SIGPIPE (the Python documentation's
    "Note on SIGPIPE")."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout is not a file (captured, closed)
        pass
    return EXIT_BROKEN_PIPE


def _main(argv: Sequence[str] | None, interrupts: Interrupts) -> int:
    out, err = sys.stdout, sys.stderr
    _tolerant(out)
    _tolerant(err)
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["bench"] and argv[1:2] not in (["-h"], ["--help"]):  # options go through unparsed
        try:
            interrupts.resume()
            return _cmd_bench(argv[1:])
        except DPVerifyError as exc:
            print(f"dpverify: error: {format_error(exc)}", file=err)
            return EXIT_USAGE
        except KeyboardInterrupt:
            return interrupts.exit_status
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version and usage errors
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else EXIT_USAGE)
    if args.command is None:
        parser.print_help(err)
        return EXIT_USAGE
    try:
        if args.command == "run":  # run and certify resume the handlers once they can write a report
            return _cmd_run(args, out, err, interrupts)
        if args.command == "certify":
            return _cmd_certify(args, out, err, interrupts)
        if args.command == "audit":
            return _cmd_audit(args, out, err, interrupts)
        interrupts.resume()
        if args.command == "list":
            return _cmd_list(args, out)
        if args.command == "reproduce":
            return _cmd_reproduce(args, out, err)
        return _cmd_compare(args, out)
    except DPVerifyError as exc:
        print(f"dpverify: error: {format_error(exc)}", file=err)
        return EXIT_USAGE
    except KeyboardInterrupt:  # list, compare, reproduce
        print("dpverify: interrupted", file=err)
        return interrupts.exit_status


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
