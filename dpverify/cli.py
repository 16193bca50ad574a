"""The ``dpverify`` command line (also ``python -m dpverify``).

``dpverify run [PATHS...] [--full] [--select PATTERN] [--seed N] [--workers N] [--out DIR]``
    Run audit suites (the quick budget unless ``--full``).  One progress line per entry on stderr,
    the table on stdout, ``DIR/report.json`` rewritten after every entry.  Exit status 0 when every
    outcome equals its expectation, 1 otherwise, 2 on usage or suite errors, 130 when interrupted
    (Ctrl-C; the report keeps every finished entry and marks the others ``"not-run"``).

``dpverify list [PATHS...] [--select PATTERN]``
    One line per entry: ``suite/id``, kind, mechanism, claim, expectation.

Without ``PATHS`` both use the default suites (see :func:`dpverify.suite.default_suites`).
Any :class:`~dpverify.errors.DPVerifyError` is printed as ``dpverify: error: <message>`` (exit 2).

``dpverify reproduce NAME [--quick] [--seed N] [--workers N] [--out DIR]``
    Rerun a seed paper's experiment (:mod:`dpverify.reproduce`), print its markdown report and write it
    to ``DIR/NAME.md`` (default DIR: ``dpverify-reproductions``).  ``dpverify reproduce --list`` (or no
    NAME) lists the reproductions.  Exit status 0, 2 on an unknown name or other errors, 130 when
    interrupted.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from dpverify.errors import DPVerifyError, InputError
from dpverify.report import dpverify_version, format_table, write_report_json
from dpverify.reproduce import REPRODUCTIONS, load_reproduction, run_reproduction
from dpverify.suite import (
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
EXIT_INTERRUPTED = 130


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

    run = sub.add_parser("run", help="run audit suites", description="Run audit suites and write a report.")
    run.add_argument("paths", nargs="*", metavar="PATHS", help=paths_help)
    run.add_argument("--full", action="store_true", help="use each entry's full budget (default: quick)")
    run.add_argument("--select", action="append", metavar="PATTERN", help=select_help)
    run.add_argument("--seed", type=_non_negative_int, default=0, metavar="N",
                     help="run seed; each entry's seed derives from it and its suite/id (default 0)")
    run.add_argument("--workers", type=_positive_int, default=None, metavar="N",
                     help="sampling processes per audit (default: all cores; results do not depend on it)")
    run.add_argument("--out", default="dpverify-report", metavar="DIR",
                     help="report directory; DIR/report.json (default: dpverify-report)")

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
    return parser


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


def _progress_tail(o: EntryOutcome) -> str:
    tail = f"{o.outcome} ({o.seconds:.1f} s)"
    if o.outcome == "error":
        first = (o.error or "").splitlines()[0] if o.error else ""
        return f"{tail}: {first}"
    if not o.matched:
        tail += f" -- expected {o.expectation}"
    return tail


def _with_plot(outcome: EntryOutcome, out_dir: Path, err: TextIO) -> EntryOutcome:
    """A theorem entry's plot (``<out>/plots/<suite>__<id>.png``), its path recorded in the details."""
    if outcome.kind != "theorem" or outcome.result is None:
        return outcome
    from dpverify.plots import matplotlib_available, plot_theorem

    if not matplotlib_available():
        if not getattr(_with_plot, "warned", False):
            print('(theorem plots skipped: install matplotlib, e.g. pip install "dpverify[plots]")', file=err)
            _with_plot.warned = True  # type: ignore[attr-defined]
        return outcome
    name = f"{outcome.suite}__{outcome.id}.png"
    try:
        plot_theorem(outcome.result, out_dir / "plots" / name)
    except OSError as exc:
        raise InputError(f"cannot write the plot {out_dir / 'plots' / name}: {exc}; pass another --out DIR") from None
    return replace(outcome, details={**(outcome.details or {}), "plot": f"plots/{name}"})


def _cmd_run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    mode = "full" if args.full else "quick"
    suites = _load(args.paths)
    entries: list[Entry] = select_entries(suites, args.select)
    preflight(entries)
    report_path = Path(args.out) / "report.json"
    meta: dict[str, Any] = {
        "mode": mode,
        "seed": args.seed,
        "workers": args.workers,
        "suites": [str(s.path) for s in suites],
        "select": args.select,
    }
    finished: list[EntryOutcome] = []

    def snapshot(status: str) -> list[EntryOutcome]:
        rest = [not_run_outcome(e, mode, args.seed) for e in entries[len(finished):]]
        try:
            write_report_json(report_path, [*finished, *rest], {**meta, "status": status})
        except OSError as exc:
            raise InputError(f"cannot write the report {report_path}: {exc}; pass another --out DIR") from None
        return [*finished, *rest]

    entry_seed(args.seed, "", "")  # validates the seed before anything runs
    snapshot("running")
    total = len(entries)
    t0 = time.perf_counter()
    try:
        for i, entry in enumerate(entries):
            print(f"[{i + 1}/{total}] {entry.name} ... ", end="", file=err, flush=True)
            outcome = _with_plot(run_entry(entry, mode, args.seed, args.workers), Path(args.out), err)
            finished.append(outcome)
            print(_progress_tail(outcome), file=err, flush=True)
            snapshot("running" if i + 1 < total else "complete")
    except KeyboardInterrupt:
        print("interrupted", file=err, flush=True)
        outcomes = snapshot("interrupted")
        print(format_table(outcomes), file=out, flush=True)
        print(f"dpverify: interrupted after {len(finished)}/{total} entries; report with the finished "
              f"entries: {report_path}", file=err)
        return EXIT_INTERRUPTED
    print(format_table(finished), file=out, flush=True)
    print(f"report: {report_path} ({time.perf_counter() - t0:.1f} s)", file=err)
    return EXIT_OK if all(o.matched for o in finished) else EXIT_MISMATCH


def _tolerant(stream: TextIO) -> None:
    """Replace characters the console cannot encode (✓, ε on legacy code pages) instead of crashing."""
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None:
        try:
            reconfigure(errors="replace")
        except Exception:  # noqa: BLE001 -- best effort only
            pass


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``dpverify`` console script; returns the exit status."""
    out, err = sys.stdout, sys.stderr
    _tolerant(out)
    _tolerant(err)
    parser = build_parser()
    try:
        args = parser.parse_args(None if argv is None else list(argv))
    except SystemExit as exc:  # --help, --version and usage errors
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else EXIT_USAGE)
    if args.command is None:
        parser.print_help(err)
        return EXIT_USAGE
    try:
        if args.command == "list":
            return _cmd_list(args, out)
        if args.command == "reproduce":
            return _cmd_reproduce(args, out, err)
        return _cmd_run(args, out, err)
    except DPVerifyError as exc:
        print(f"dpverify: error: {exc}", file=err)
        return EXIT_USAGE
    except KeyboardInterrupt:  # while loading suites, before any entry ran
        print("dpverify: interrupted", file=err)
        return EXIT_INTERRUPTED


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
