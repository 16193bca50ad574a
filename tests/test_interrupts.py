"""An interrupted ``dpverify run`` always leaves a readable report, wherever the signal lands.

``dpverify run`` is started as a subprocess (``python -m dpverify run``) on a small suite and stopped by SIGINT
(Ctrl-C) or SIGTERM (what CI runners and ``timeout`` send) after many different delays: while the suite loads,
while an entry samples (in this process or in ``--jobs`` workers), while ``report.json`` is rewritten, while the
final plots and pages are written, after the run finished; also two SIGINTs in quick succession and a second one
during the final write, and signals sent to the whole process group as a terminal's Ctrl-C is.  Each time
``report.json`` must parse with a final status (``interrupted`` or ``complete``, never ``running``),
``report.md`` and ``report.html`` must exist, every finished entry must be in the report, and stderr must hold no
traceback.

The delays count from the moment the command line has installed its signal handlers (read from
``/proc/PID/status``): before that, while the interpreter starts and imports dpverify (a few tenths of a
second), a signal ends the process the default way.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from markers import SIGINT_IGNORED

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="reads the signal mask from /proc (Linux)"),
]

DATA = Path(__file__).parent / "data"

SUITE = """[suite]
name = "stoppable"
import_paths = ["{data}"]
quick = {{ samples = 600000, search_samples = 100000 }}
{entries}
"""

ENTRY = """
[[entry]]
id = "laplace-{i}"
kind = "statistical"
mechanism = "mechs:laplace_sum"
params = {{ epsilon = 1.0 }}
claim = {{ epsilon = {claim} }}
expect = "{expect}"
alpha = 0.001
pairs = [[0.0, 1.0]]
"""


def write_suite(path: Path, entries: int = 6) -> Path:
    """A suite of ``entries`` quick statistical entries (about 0.3 s each), half of them violations."""
    body = "".join(ENTRY.format(i=i, claim=1.0 if i % 2 else 0.25, expect="pass" if i % 2 else "violation")
                   for i in range(entries))
    path.write_text(SUITE.format(data=DATA.as_posix(), entries=body))
    return path


def caught_signals(pid: int) -> int:
    """The mask of signals process ``pid`` catches (``SigCgt`` of ``/proc/PID/status``); 0 once it is gone."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    for line in text.splitlines():
        if line.startswith("SigCgt:"):
            return int(line.split()[1], 16)
    return 0


def finished_entries(report: Path) -> int:
    """Entries with an outcome in ``report`` (0 while it does not exist or is being replaced)."""
    try:
        return sum(e["outcome"] != "not-run" for e in json.loads(report.read_text())["entries"])
    except (OSError, ValueError, KeyError):
        return 0


def reached(trigger: str, out: Path) -> bool:
    """Whether the run writing to ``out`` has reached ``trigger``: ``start`` (its signal handlers are installed),
    ``entries:K`` (report.json holds K finished entries), ``plots`` (the final write has begun: plots/ exists),
    ``md`` (report.md is written, report.html not yet), ``html`` (the run is over)."""
    if trigger.startswith("entries:"):
        return finished_entries(out / "report.json") >= int(trigger.split(":")[1])
    return trigger == "start" or (out / {"plots": "plots", "md": "report.md", "html": "report.html"}[trigger]).exists()


@dataclass(frozen=True)
class Case:
    name: str
    signals: tuple[tuple[float, int], ...]  # (seconds after the trigger, signal)
    trigger: str = "start"
    args: tuple[str, ...] = ("--jobs", "1")
    group: bool = False                      # send to the whole process group (a terminal's Ctrl-C)


def run_case(case: Case, tmp: Path, suite: Path) -> tuple[Case, int, str, Path]:
    out = tmp / case.name
    proc = subprocess.Popen([sys.executable, "-m", "dpverify", "run", str(suite), "--out", str(out), *case.args],
                            cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not caught_signals(proc.pid) & (1 << (signal.SIGTERM - 1)):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"{case.name}: the command never installed its SIGTERM handler")
            time.sleep(0.002)
        while not reached(case.trigger, out) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        t0 = time.monotonic()
        for delay, sig in case.signals:
            time.sleep(max(0.0, t0 + delay - time.monotonic()))
            if proc.poll() is None:
                (os.killpg if case.group else os.kill)(proc.pid, sig)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return case, proc.returncode, err, out


INT, TERM = signal.SIGINT, signal.SIGTERM
DELAYS = (0.0, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.45, 0.6, 0.8, 1.1, 1.5)
CASES = (
    # after the handlers are installed: parsing, loading the suite, importing the mechanisms, the first entry
    [Case(f"int-{d}", ((d, INT),)) for d in DELAYS]
    + [Case(f"term-{d}", ((d, TERM),)) for d in (0.0, 0.15, 0.6)]
    # later phases, reached by watching the report: between entries, during the final write, after the run
    + [Case(f"int-{t}", ((0.0, INT),), t) for t in ("entries:1", "entries:3", "plots", "html")]
    + [Case(f"term-{t}", ((0.0, TERM),), t) for t in ("entries:2", "md")]
    # two signals: in quick succession, and a second one during the final write
    + [Case("double-int-start", ((0.15, INT), (0.17, INT))),
       Case("double-int-entries:1", ((0.0, INT), (0.02, INT)), "entries:1"),
       Case("int-then-int-plots", ((0.0, INT), (0.1, INT)), "plots"),
       Case("int-then-term-entries:3", ((0.0, INT), (0.3, TERM)), "entries:3")]
    # entries side by side in worker processes; sampling workers receiving a terminal's Ctrl-C too
    + [Case("jobs2-int-0.5", ((0.5, INT),), args=("--jobs", "2")),
       Case("jobs2-int-entries:2", ((0.0, INT),), "entries:2", ("--jobs", "2")),
       Case("jobs2-term-entries:1", ((0.0, TERM),), "entries:1", ("--jobs", "2"))]
    + [Case(f"workers2-group-int-{t}", ((0.3, INT),), t, ("--jobs", "1", "--workers", "2"), group=True)
       for t in ("start", "entries:1")]
    + [Case("workers2-group-term", ((0.1, TERM),), "entries:1", ("--jobs", "1", "--workers", "2"), group=True)]
)


@SIGINT_IGNORED
def test_every_interruption_leaves_a_final_readable_report(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "stoppable.toml")
    with ThreadPoolExecutor(max_workers=3) as pool:
        results = list(pool.map(lambda c: run_case(c, tmp_path, suite), CASES))
    statuses, stopped_after = set(), set()
    for case, code, err, out in results:
        where = f"{case.name}: exit {code}, stderr:\n{err}"
        report = json.loads((out / "report.json").read_text())
        statuses.add(report["status"])
        assert report["status"] in ("interrupted", "complete"), where
        assert (out / "report.md").is_file() and (out / "report.html").is_file(), where
        assert "Traceback" not in err, where
        finished = [e for e in report["entries"] if e["outcome"] != "not-run"]
        assert all(e["outcome"] in ("pass", "violation") for e in finished), where
        if case.trigger.startswith("entries:"):  # what report.json held when the signal was sent is still there
            assert len(finished) >= int(case.trigger.split(":")[1]), where
        if report["status"] == "interrupted":
            stopped_after.add(len(finished))
            assert code == 128 + case.signals[0][1], where
            assert f"dpverify: interrupted after {len(finished)}/{len(report['entries'])} entries" in err, where
        else:
            assert code == 0 and len(finished) == 6, where
    # the signals landed all over the run: before any entry finished, between entries, after the run
    assert statuses == {"interrupted", "complete"}
    assert 0 in stopped_after and any(0 < k < 6 for k in stopped_after), stopped_after


def test_finished_entries_are_kept_and_resume_runs_the_rest(tmp_path: Path) -> None:
    """SIGTERM once two entries are in report.json: those two (at least) keep their outcomes, the entry that was
    running is ``not-run``, and ``--resume`` runs only the entries not finished."""
    suite = write_suite(tmp_path / "stoppable.toml")
    out = tmp_path / "mid"
    proc = subprocess.Popen([sys.executable, "-m", "dpverify", "run", str(suite), "--out", str(out), "--jobs", "1"],
                            cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONFAULTHANDLER": "1"})
    try:
        deadline = time.monotonic() + 60
        while finished_entries(out / "report.json") < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    report = json.loads((out / "report.json").read_text())
    assert proc.returncode == 143 and report["status"] == "interrupted", err
    outcomes = [e["outcome"] for e in report["entries"]]
    done = [o for o in outcomes if o != "not-run"]
    assert 2 <= len(done) < len(outcomes) and done == outcomes[: len(done)], outcomes  # in order, none lost
    assert f"interrupted after {len(done)}/{len(outcomes)} entries" in err
    resumed = subprocess.run([sys.executable, "-m", "dpverify", "run", str(suite), "--out", str(out), "--resume",
                              "--jobs", "1"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert f"{len(done)} finished entries kept" in resumed.stderr, resumed.stderr
    final = json.loads((out / "report.json").read_text())
    assert final["status"] == "complete" and [e["outcome"] for e in final["entries"]][: len(done)] == done
