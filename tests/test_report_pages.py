"""Tests of dpverify.reporting.pages: report.md and the self-contained report.html with plots."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from dpverify.reporting.pages import write_reports
from dpverify.suites import load_suite, run_suites

TESTS = Path(__file__).parent
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

SUITE = f"""[suite]
name = "pages"
import_paths = ["{TESTS.as_posix()}", "{(TESTS / 'data').as_posix()}"]

[[entry]]
id = "ok"
kind = "statistical"
mechanism = "mechs:laplace_sum"
params = {{ epsilon = 1.0 }}
claim = {{ epsilon = 1.0 }}
expect = "pass"
pairs = [[0.0, 1.0]]
quick = {{ samples = 20000, search_samples = 20000 }}

[[entry]]
id = "leaky"
kind = "statistical"
mechanism = "mechs:laplace_sum"
params = {{ epsilon = 1.0 }}
claim = {{ epsilon = 0.2 }}
expect = "violation"
pairs = [[0.0, 1.0]]
quick = {{ samples = 20000, search_samples = 20000 }}

[[entry]]
id = "tail"
kind = "theorem"
mechanism = "theorem_toys:LaplaceTail"
params = {{ factor = 1.2 }}
sweep = {{ param = "t", values = [0.5, 1.0] }}
expect = "holds"
quick = {{ samples = 5000 }}
"""


def _run(tmp_path: Path) -> list:
    path = tmp_path / "pages.toml"
    path.write_text(SUITE, encoding="utf-8")
    return run_suites([load_suite(path)])


def test_pages_with_plots_after_the_run(tmp_path: Path) -> None:
    outcomes = _run(tmp_path)
    assert [o.outcome for o in outcomes] == ["pass", "violation", "holds"]
    out = tmp_path / "out"
    paths = write_reports(out, outcomes, {"mode": "quick", "seed": 0, "workers": 1, "status": "complete"})
    assert set(paths) == {"json", "md", "html"}
    plots = sorted(p.name for p in (out / "plots").iterdir())
    # the violation's witness histogram, the theorem sweep and the summary; no histogram for the passing entry
    assert plots == ["epsilon_summary.png", "pages__leaky.png", "pages__tail.png"]
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "| pages/leaky | statistical | 0.2 |" in md and "3/3 entries as expected" in md
    assert "![plot of pages/tail](plots/pages__tail.png)" in md and "never that the mechanism is private" in md
    html = (out / "report.html").read_text(encoding="utf-8")
    assert html.count("data:image/png;base64,") == 3
    assert "src=\"http" not in html and "<link" not in html  # self-contained
    doc = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert doc["entries"][1]["details"]["loss_histogram"]["binning"] == "quantile bins"


def test_a_running_report_writes_only_the_json(tmp_path: Path) -> None:
    outcomes = _run(tmp_path)[:1]
    out = tmp_path / "out"
    paths = write_reports(out, outcomes, {"mode": "quick", "seed": 0, "workers": 1, "status": "running"})
    assert set(paths) == {"json"} and not (out / "report.md").exists() and not (out / "plots").exists()


def test_mismatches_and_errors_come_first(tmp_path: Path) -> None:
    from dataclasses import replace

    outcomes = _run(tmp_path)
    flipped = [outcomes[0], outcomes[1], replace(outcomes[2], outcome="error", matched=False,
                                                  error="the theorem's hypotheses do not hold")]
    out = tmp_path / "out"
    write_reports(out, flipped, {"mode": "quick", "seed": 0, "workers": 1, "status": "interrupted"})
    md = (out / "report.md").read_text(encoding="utf-8")
    entries = md.split("## Entries")[1]
    assert entries.index("pages/tail: error") < entries.index("pages/ok: pass")
    assert "the theorem's hypotheses do not hold" in entries
