"""Running the entries of ``dpverify run`` / ``dpverify certify`` so that the report survives any interruption.

:func:`run_guarded` loads and selects the suites, runs the entries (one after the other, or ``--jobs`` side by side
in worker processes) and always ends with a final write of ``report.json``, ``report.md`` and ``report.html``
whose status is ``complete`` or ``interrupted`` -- whether Ctrl-C or SIGTERM (:mod:`dpverify.cli.interrupts`)
lands while the suites load, while an entry runs, while ``report.json`` is rewritten between entries, or during
the final write itself (later signals are held until it is done).  ``report.json`` is rewritten after every
entry (status ``running``), so the finished entries are never lost, even to SIGKILL.

Entries not finished when the run stops are recorded as ``not-run``.  With ``--resume``, nothing is written
until the finished entries of the existing report have been read: an interruption before that leaves the old
report as it was.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

from dpverify.cli.interrupts import Interrupts, ignore_interrupts_in_worker
from dpverify.cli.progress import Progress
from dpverify.errors import DPVerifyError, InputError
from dpverify.reporting.pages import write_reports
from dpverify.suites import Entry, EntryOutcome, Suite, not_run_outcome, run_entry

__all__ = ["RunState", "run_guarded", "execute", "with_plot_path", "run_in_worker", "stop_workers"]


@dataclass
class RunState:
    """Everything the report of a run is written from, at any moment of the run.

    ``entries`` is the selection (empty until the suites are loaded), ``results`` the finished outcomes by name
    (the entries kept by ``--resume`` included), ``meta`` the report's metadata.  ``writable`` is false while a
    resumed report has not been read yet; ``started`` once the first ``report.json`` of this run was written."""

    out_dir: Path
    mode: str
    seed: int
    meta: dict[str, Any]
    entries: list[Entry] = field(default_factory=list)
    results: dict[str, EntryOutcome] = field(default_factory=dict)
    writable: bool = True
    started: bool = False

    def outcomes(self) -> list[EntryOutcome]:
        """Every entry in suite order: its finished outcome, else ``not-run``."""
        return [self.results.get(e.name) or not_run_outcome(e, self.mode, self.seed) for e in self.entries]

    def snapshot(self, status: str) -> list[EntryOutcome]:
        """Write the report with ``status`` (``report.json`` only while ``running``); the outcomes written."""
        outcomes = self.outcomes()
        try:
            write_reports(self.out_dir, outcomes, {**self.meta, "status": status})
        except OSError as exc:
            raise InputError(f"cannot write the report {self.out_dir / 'report.json'}: {exc}; pass another "
                             "--out DIR") from None
        self.started = True
        return outcomes


def with_plot_path(outcome: EntryOutcome) -> EntryOutcome:
    """A theorem entry's details name its plot ``plots/<suite>__<id>.png``, which
    :func:`dpverify.reporting.pages.write_reports` draws once the run is over (when matplotlib is installed)."""
    if outcome.kind != "theorem" or outcome.outcome == "error" or outcome.details is None:
        return outcome
    from dpverify.reporting.plots import matplotlib_available

    if not matplotlib_available():
        return outcome
    return replace(outcome, details={**outcome.details, "plot": f"plots/{outcome.suite}__{outcome.id}.png"})


def run_in_worker(entry: Entry, mode: str, seed: int, workers: int | None, sequential: bool = False) -> EntryOutcome:
    """A ``--jobs`` worker: run one entry; the in-memory result object stays behind (the report uses records)."""
    return replace(run_entry(entry, mode, seed, workers, sequential), result=None)


def stop_workers(pool: ProcessPoolExecutor) -> None:
    """Stop the worker processes of ``pool`` now, without waiting for the entries they run."""
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        try:
            proc.terminate()
        except (OSError, ValueError):  # already gone
            pass
    pool.shutdown(wait=False, cancel_futures=True)


def execute(state: RunState, args: argparse.Namespace, jobs: int, sequential: bool, err: TextIO,
            interrupts: Interrupts) -> None:
    """Run the entries of ``state`` not finished yet, recording each outcome in ``state.results`` as it finishes
    and rewriting ``report.json`` (status ``running``) after each one; a signal during a rewrite is raised once
    the rewrite is done.  A ``KeyboardInterrupt`` propagates (the caller writes the final report)."""
    todo = [(i, e) for i, e in enumerate(state.entries) if e.name not in state.results]
    if not todo:
        return
    with interrupts.deferred():
        state.snapshot("running")
    jobs = min(jobs, len(todo))
    workers = args.workers if jobs == 1 or args.workers is not None else 1
    with Progress(err, state.entries, done=state.results.values()) as progress:
        try:
            if jobs > 1:
                _side_by_side(state, todo, jobs, workers, sequential, progress, interrupts)
                return
            for k, (i, entry) in enumerate(todo):
                progress.start(entry, i)
                outcome = with_plot_path(run_entry(entry, state.mode, state.seed, workers, sequential))
                _finished(state, outcome, i, k + 1 < len(todo), progress, interrupts)
        except KeyboardInterrupt:
            interrupts.hold()  # acknowledged: the run stops, and nothing interrupts the stopping
            progress.interrupted()
            raise


def _finished(state: RunState, outcome: EntryOutcome, index: int, more: bool, progress: Progress,
              interrupts: Interrupts) -> None:
    if interrupts.stopping and outcome.outcome == "error":
        # the signal landed in a library that turned it into an exception of its own (a C extension interrupted
        # while it imports reports "ImportError: initialization failed"): the entry did not finish, so it is
        # reported not-run, as the entry a signal interrupts always is -- not as an error the code never made
        raise KeyboardInterrupt
    state.results[outcome.name] = outcome
    progress.finish(outcome, index)
    if interrupts.stopping:  # a signal some library swallowed: stop all the same
        raise KeyboardInterrupt
    if more:
        with interrupts.deferred():
            state.snapshot("running")


def _side_by_side(state: RunState, todo: list[tuple[int, Entry]], jobs: int, workers: int | None, sequential: bool,
                  progress: Progress, interrupts: Interrupts) -> None:
    """``--jobs N``: the entries in ``N`` processes, each entry sampling with ``--workers`` (default 1) processes.
    Each entry's seed derives from the run seed and its suite/id, so the outcomes are those of a sequential run;
    the report (every entry in suite order) is rewritten as each one finishes, in whatever order they finish.
    On an interruption the running entries are dropped (reported ``not-run``, as a sequential run drops its
    current entry) and their processes stopped at once."""
    pool = ProcessPoolExecutor(max_workers=jobs, initializer=ignore_interrupts_in_worker)
    try:
        futures = {pool.submit(run_in_worker, entry, state.mode, state.seed, workers, sequential): (i, entry)
                   for i, entry in todo}
        for k, future in enumerate(as_completed(futures)):
            i, entry = futures[future]
            try:
                outcome = future.result()
            except BrokenProcessPool as exc:  # a worker died (killed, out of memory): say which entry
                if interrupts.stopping:       # killed by the same signal that stops the run
                    raise KeyboardInterrupt from None
                raise InputError(f"the process running {entry.name} died ({exc}); rerun with --jobs 1 to see "
                                 "why, or --resume to keep the finished entries") from None
            progress.start(entry, i)
            _finished(state, with_plot_path(outcome), i, k + 1 < len(todo), progress, interrupts)
    except BaseException:
        interrupts.hold()
        stop_workers(pool)
        raise
    pool.shutdown(wait=True)


def run_guarded(state: RunState, args: argparse.Namespace, interrupts: Interrupts, err: TextIO, *,
                load: Callable[[], tuple[Sequence[Suite], list[Entry]]],
                meta: Callable[[Sequence[Suite]], dict[str, Any]],
                prepare: Callable[[list[Entry]], None],
                kept: Callable[[Sequence[Suite], list[Entry]], dict[str, EntryOutcome]] | None,
                jobs: int, sequential: bool, sampling: Callable[[], Any],
                finish: Callable[[RunState, list[EntryOutcome]], None] | None = None) -> tuple[list[EntryOutcome], bool]:
    """Load the suites (``load``), record the selection and ``meta`` in ``state``, ``prepare`` the entries (preflight),
    read the entries ``kept`` by ``--resume``, run the rest inside ``sampling()`` and write the final report --
    then ``finish(state, outcomes)`` (the certificate) when the run was not interrupted.  Returns the outcomes and whether
    the run was interrupted.  Usage errors raised before the first report is written propagate and write nothing.
    """
    interrupted = False
    t0 = time.perf_counter()
    try:
        interrupts.resume()  # the command line paused the signals until a report could be written
        suites, entries = load()
        state.entries = list(entries)
        state.meta = meta(suites)
        prepare(state.entries)
        if kept is not None:
            state.results = kept(suites, state.entries)
        state.writable = True
        with sampling():
            execute(state, args, jobs, sequential, err, interrupts)
        interrupts.hold()  # the run is over: nothing interrupts its final write
    except KeyboardInterrupt:
        interrupts.hold()
        interrupted = True
    except BaseException:
        interrupts.hold()
        if state.started:  # the run stopped: the report must not say "running"
            try:
                state.snapshot("interrupted")
            except (DPVerifyError, OSError):
                pass
        raise
    if not state.writable:  # interrupted before --resume read the old report: leave it as it was
        return state.outcomes(), True
    state.meta["wall_seconds"] = round(time.perf_counter() - t0, 1)  # the pages set it beside the entries' sum
    outcomes = state.snapshot("interrupted" if interrupted else "complete")
    if finish is not None and not interrupted:
        finish(state, outcomes)
    return outcomes, interrupted
