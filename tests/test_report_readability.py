"""report.md / report.html read well: witnesses as the verdict sentence with counts (not raw JSON), the workers as
used (not "workers None"), no "true ε -", the entries' summed seconds explained next to the wall time, a legend of
the "found" column; and, rendered by a real headless Chromium at phone width (390 px), no horizontal overflow."""

from __future__ import annotations

import html
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dpverify.reporting.pages import write_reports
from dpverify.suites import load_suite, run_suites

DATA = Path(__file__).parent / "data"
if str(DATA) not in sys.path:
    sys.path.insert(0, str(DATA))

SUITE = f"""[suite]
name = "readable"
import_paths = ["{DATA.as_posix()}"]
quick = {{ samples = 20000, search_samples = 10000 }}

[[entry]]
id = "laplace-with-a-rather-long-entry-name-that-must-wrap-or-scroll-on-a-phone"
kind = "statistical"
mechanism = "mechs:laplace_sum"
params = {{ epsilon = 1.0 }}
claim = {{ epsilon = 1.0 }}
expect = "pass"
pairs = [[0.0, 1.0]]

[[entry]]
id = "leaky"
kind = "statistical"
mechanism = "mechs:laplace_sum"
params = {{ epsilon = 1.0 }}
claim = {{ epsilon = 0.2 }}
expect = "violation"
true_epsilon = 1.0
pairs = [[0.0, 1.0]]

[[entry]]
id = "identity"
kind = "statistical"
mechanism = "mechs:identity"
claim = {{ epsilon = 1.0 }}
expect = "violation"
pairs = [[[0, 1], [1, 1]]]
"""


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("readable")
    (tmp / "readable.toml").write_text(SUITE)
    outcomes = run_suites([load_suite(tmp / "readable.toml")], workers=1)
    out = tmp / "report"
    write_reports(out, outcomes, {"mode": "quick", "seed": 0, "workers": None, "jobs": 2, "wall_seconds": 1.5,
                                  "status": "complete"})
    return out


def test_witnesses_read_as_the_verdict_with_counts(report: Path) -> None:
    md = (report / "report.md").read_text()
    assert "VIOLATION of the claim ε = 0.2: true ε ≥" in md
    assert re.search(r"P\[M\(x\) ∈ S\] ≥ \S+ \(\d+ of 20000\) with x = ", md)
    assert "never observed in 20000 samples under x'" in md  # the identity mechanism's witness
    assert '"count_num"' not in md and '"p_den_high"' not in md  # no raw JSON


def test_header_says_how_the_run_sampled_and_what_the_seconds_are(report: Path) -> None:
    md = (report / "report.md").read_text()
    assert "workers None" not in md
    assert "2 entries side by side, sampling processes per entry: 1" in md
    assert "wall time 1.5 s" in md and "summed over the entries (they ran 2 side by side" in md
    assert "true ε -" not in md and "true ε 1" in md


def test_found_column_has_a_legend(report: Path) -> None:
    assert "Found: a plain number is the ε lower bound of a statistical audit" in (report / "report.md").read_text()


def test_html_has_a_viewport_and_scrollable_tables(report: Path) -> None:
    html = (report / "report.html").read_text()
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in html
    assert '<div class="table"><table>' in html


CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
#: A page that lays the report out in a frame ``width`` px wide (headless Chromium's own window is never narrower
#: than 500 px) and writes the frame's document width and its own width into the DOM once loaded.
PROBE = """<!DOCTYPE html><html><body style="margin:0">
<iframe id="f" style="width:{width}px;height:844px;border:0" srcdoc="{page}"></iframe>
<script>document.getElementById('f').addEventListener('load', () => {{
  const d = document.getElementById('f').contentDocument.documentElement;
  document.body.setAttribute('data-probe', [d.scrollWidth, d.clientWidth].join(','));
}});</script></body></html>"""


def rendered_widths(report_html: Path, width: int, tmp: Path) -> tuple[int, int]:
    """``(document scroll width, viewport width)`` of ``report_html`` laid out by headless Chromium ``width`` px
    wide."""
    probe = tmp / f"probe-{width}.html"
    probe.write_text(PROBE.format(width=width, page=html.escape(report_html.read_text(), quote=True)))
    proc = subprocess.run([str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           f"--window-size={max(width, 1280) + 40},900", "--virtual-time-budget=5000", "--dump-dom",
                           probe.as_uri()], capture_output=True, text=True, timeout=120)
    found = re.search(r'data-probe="(\d+),(\d+)"', proc.stdout)
    assert found, f"chromium printed no probe (exit {proc.returncode}): {proc.stderr[-2000:]}"
    return int(found.group(1)), int(found.group(2))


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium): the report is "
                    "not rendered in a real browser")
@pytest.mark.parametrize("width", [390, 1280])
def test_chromium_renders_the_page_without_horizontal_overflow(report: Path, tmp_path: Path, width: int) -> None:
    scroll, viewport = rendered_widths(report / "report.html", width, tmp_path)
    assert viewport == width  # no vertical scrollbar is drawn (--hide-scrollbars), so all of it is the page's
    assert scroll <= viewport, f"the page is {scroll} px wide in a {viewport} px window: it scrolls sideways"
