"""Regenerate docs/workflow.md: a real session of dpverify's everyday workflow, and the HTML report screenshot.

    python docs/make_workflow_session.py

Runs, in a temporary directory, the commands a user runs day to day -- list a suite, run it (report.json,
report.md, report.html with plots), interrupt a run with Ctrl-C and ``--resume`` it, certify a small project's
privacy claims, break the project and ``compare`` the two certificates, check a utility theorem, and run a
downstream project's tests through the pytest plugin, sample on a Dask cluster -- and writes every command with the output it printed
(the temporary directory shown as ``$WORK``) to docs/workflow.md.  The screenshot docs/images/report-html.png is
the first page of the run's report.html rendered headless by PyMuPDF's HTML engine (``pip install pymupdf``; no
browser).  Nothing in docs/workflow.md is typed by hand except the connecting sentences below.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "workflow.md"
SHOT = ROOT / "docs" / "images" / "report-html.png"

PROJECT_SUITE = """[suite]
name = "sums"
description = "A project's own privacy claims: a clipped sum released with Laplace noise"
import_paths = ["."]

[[entry]]
id = "sum-eps1"
kind = "statistical"
mechanism = "noisy:noisy_sum"
params = { epsilon = 1.0 }
claim = { epsilon = 1.0 }
expect = "pass"
input = [0.2, 0.9, 0.4]
relation = { kind = "add_remove", candidates = [0.0, 1.0] }
quick = { samples = 200000 }
full = { samples = 400000 }
"""

MECHANISM = '''"""A project's mechanism: the sum of records clipped to [0, 1], with Laplace noise."""
import numpy as np


def noisy_sum(x, n, rng, epsilon=1.0):
    clipped = np.clip(np.asarray(x, dtype=float), 0.0, 1.0)
    return clipped.sum() + rng.laplace(0.0, SCALE / epsilon, size=n)


SCALE = 1.0  # sensitivity of a clipped sum under add/remove: 1
'''


def run(cmd: str, cwd: Path, env: dict[str, str], check_codes: tuple[int, ...] = (0,)) -> tuple[str, int]:
    """Run one shell-free command; return its combined output (stderr after stdout) and exit code."""
    proc = subprocess.run(shlex.split(cmd), cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    if proc.returncode not in check_codes:
        raise SystemExit(f"{cmd!r} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout + proc.stderr, proc.returncode


def interrupted_run(cmd: str, cwd: Path, env: dict[str, str], report: Path) -> tuple[str, int]:
    """Start ``cmd``, press Ctrl-C (SIGINT) once its report records a finished entry; return its output."""
    proc = subprocess.Popen(shlex.split(cmd), cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and proc.poll() is None:
        if report.exists() and '"outcome": "pass"' in report.read_text(encoding="utf-8"):
            break
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    return out + err, proc.returncode


def free_port() -> int:
    """A TCP port nobody listens on now (for the session's Dask scheduler)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def render_screenshot(html: Path, png: Path) -> None:
    """The first page of ``html`` as a PNG, laid out on A4 by PyMuPDF's HTML engine."""
    import pymupdf

    pdf = html.with_suffix(".pdf")
    story = pymupdf.Story(html=html.read_text(encoding="utf-8"))
    writer = pymupdf.DocumentWriter(str(pdf))
    page = pymupdf.paper_rect("a4")
    more = True
    while more:
        device = writer.begin_page(page)
        more, _ = story.place(page + (36, 36, -36, -36))
        story.draw(device)
        writer.end_page()
    writer.close()
    png.parent.mkdir(parents=True, exist_ok=True)
    pymupdf.open(str(pdf))[0].get_pixmap(dpi=90).save(str(png))


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="dpverify-session-") as tmp:
        work = Path(tmp)
        env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
                   COLUMNS="120")
        dp = f"{sys.executable} -m dpverify"
        shown: list[tuple[str, str, str, int]] = []  # (section, command, output, exit code)

        def step(section: str, cmd: str, cwd: Path = work, codes: tuple[int, ...] = (0,)) -> None:
            out, code = run(cmd, cwd, env, codes)
            shown.append((section, cmd, out, code))

        audits = ROOT / "audits"
        step("list", f"{dp} list {audits / 'catalogue.toml'} --select 'catalogue/laplace*'")
        step("run", f"{dp} run {audits / 'catalogue.toml'} --select 'catalogue/laplace*' --out laplace-report")
        step("files", f"{sys.executable} -c \"import os; print(*sorted(os.listdir('laplace-report')), "
                      f"*sorted(os.listdir('laplace-report/plots')), sep=chr(10))\"")
        report = work / "svt-report" / "report.json"
        cmd = f"{dp} run {audits / 'catalogue.toml'} --select 'catalogue/svt*' --out svt-report"
        out, code = interrupted_run(cmd, work, env, report)
        shown.append(("interrupt", cmd + "    # Ctrl-C after the first entry", out, code))
        step("resume", cmd + " --resume")

        (work / "project").mkdir()
        (work / "project" / "noisy.py").write_text(MECHANISM, encoding="utf-8")
        (work / "project" / "claims.toml").write_text(PROJECT_SUITE, encoding="utf-8")
        project = work / "project"
        step("certify", f"{dp} certify claims.toml --out cert-before", project)
        (project / "noisy.py").write_text(MECHANISM.replace("SCALE = 1.0", "SCALE = 0.5"), encoding="utf-8")
        step("certify-after", f"{dp} certify claims.toml --out cert-after", project, codes=(1,))
        step("compare", f"{dp} compare cert-before cert-after", project, codes=(3,))

        step("theorem", f"{dp} run {audits / 'theorems_seed002_clustering.toml'} --select '*thm421-printed-*' "
                        "--out theorem-report")
        port = free_port()
        scheduler = subprocess.Popen([sys.executable, "-m", "dask", "scheduler", "--port", str(port),
                                      "--no-dashboard"], cwd=work, env=env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        worker = subprocess.Popen([sys.executable, "-m", "dask", "worker", f"tcp://127.0.0.1:{port}", "--nworkers",
                                   "2", "--nthreads", "1", "--no-dashboard"], cwd=work, env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            time.sleep(8)  # the scheduler and its two worker processes start
            step("dask", f"{dp} run {audits / 'catalogue.toml'} --select 'catalogue/laplace*' --out dask-report "
                         f"--scheduler tcp://127.0.0.1:{port}")
        finally:
            for proc in (worker, scheduler):
                proc.send_signal(signal.SIGINT)
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
        step("plugin", f"{sys.executable} -m pytest -q -p no:cacheprovider {ROOT / 'examples' / 'downstream_project'}",
             cwd=ROOT / "examples" / "downstream_project")
        render_screenshot(work / "laplace-report" / "report.html", SHOT)

        def clean(text: str) -> str:
            return text.replace(str(work), "$WORK").replace(str(ROOT), "$REPO").replace(sys.executable, "python")

        parts = [INTRO]
        for section, cmd, out, code in shown:
            parts += [TEXT[section], "", "```", f"$ {clean(cmd)}", clean(out).rstrip(), f"[exit {code}]", "```", ""]
        parts += [OUTRO]
        DOC.write_text("\n".join(parts), encoding="utf-8")
    print(f"wrote {DOC.relative_to(ROOT)} and {SHOT.relative_to(ROOT)}", file=sys.stderr)
    return 0


INTRO = """# A session of use

Generated by `python docs/make_workflow_session.py`: every command below was run by that script, in a fresh
temporary directory (`$WORK`) from the repository (`$REPO`), and its output is pasted as printed; timings vary
from run to run, verdicts and ε bounds do not (seeded).
"""

TEXT = {
    "list": "What a suite holds (`--select` takes fnmatch patterns over `suite/id`):",
    "run": ("Run the selection at its quick budget. The table goes to stdout, progress to stderr (a live status line "
            "on a terminal; one line per entry otherwise), and the report directory gets `report.json` (rewritten "
            "after every entry), `report.md` and a self-contained `report.html` with the plots:"),
    "files": "The report directory:",
    "interrupt": ("Ctrl-C keeps every finished entry: the report is marked `interrupted` and lists the rest as "
                  "`not-run`:"),
    "resume": "`--resume` keeps the finished entries and runs only the others:",
    "certify": ("A project keeps its own privacy claims in a suite next to its code (`claims.toml`, mechanism "
                "`noisy.py`). `certify` runs them at the full budget and writes `certificate.json`: code "
                "fingerprint (git commit, sha256 of every audited module and of dpverify), versions, seeds, "
                "outcomes:"),
    "certify-after": ("Someone halves the noise scale (`SCALE = 0.5` in `noisy.py`) and certifies again; the claim "
                      "now fails:"),
    "compare": ("`compare` names the regression, the ε lower bound that rose beyond run-to-run noise, and the module "
                "whose hash changed; exit status 3 fails a CI job:"),
    "theorem": ("Utility theorems are suite entries too (`kind = \"theorem\"`): seed 002's Theorem 4.2.1 as printed, "
                "against the algorithm as coded, with its plot in `theorem-report/plots/`:"),
    "dask": ("The same selection sampled on a Dask cluster (a scheduler and two worker processes started for this "
             "session; `pip install \"dpverify[distributed]\"`): every ε found is the one of the local run above, "
             "since each batch carries its own seed:"),
    "plugin": ("In another project's test suite, the pytest plugin (loaded automatically once dpverify is installed) "
               "gives the `dp_audit` fixture and marker; the known bug is kept as a strict xfail:"),
}

OUTRO = """The first page of `laplace-report/report.html`, rendered headless (PyMuPDF's HTML engine, no browser):

![report.html](images/report-html.png)
"""


if __name__ == "__main__":
    raise SystemExit(main())
