"""The seed 004 Table 2 reproduction (algorithms.experiments.dpm_table_2) in quick mode, through the CLI:
report written, paper numbers and our rows present, same seed => same report for 1 and 2 workers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")
pytest.importorskip("diffprivlib")

from dpverify.cli import commands as cli  # noqa: E402
from dpverify.cli import reproduce as reproduce_mod  # noqa: E402

NAME = "dpm-table-2-synth"


@pytest.fixture(scope="module")
def quick_reports(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[int, str], str]:
    """The quick report written by the CLI with 1 and with 2 workers (same seed, same --out), and what the
    first run printed."""
    out = tmp_path_factory.mktemp("dpm-reproduction")
    texts: dict[int, str] = {}
    printed = ""
    for workers in (1, 2):
        import contextlib
        import io

        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            code = cli.main(["reproduce", NAME, "--quick", "--seed", "0", "--workers", str(workers), "--out", str(out)])
        assert code == 0
        texts[workers] = (out / f"{NAME}.md").read_text(encoding="utf-8")
        printed = printed or buf.getvalue()
    return out, texts, printed


def test_registered() -> None:
    assert reproduce_mod.REPRODUCTIONS[NAME] == "algorithms.experiments.dpm_table_2:reproduce"


def test_quick_report_written_with_paper_numbers_and_our_rows(quick_reports) -> None:
    out, texts, printed = quick_reports
    text = texts[1]
    assert printed == text  # the CLI prints the report it writes
    assert f"dpverify reproduce {NAME} --quick --seed 0" in text.splitlines()[2]
    assert "QUICK MODE" in text and "NOT comparable" in text
    # the paper's Table 2 (Synth-10d block), verbatim, next to ours
    header = "| metric | KMeans paper | KMeans ours | DP-Lloyd paper | DP-Lloyd ours | DPM paper | DPM ours |"
    assert header in text
    for cell in ("0.97 ± 0.00", "0.61 ± 0.05", "0.96 ± 0.02", "6.0e08 ± 1.0e08", "1.8e07 ± 2.7e07",
                 "0.12 ± 0.01", "0.01 ± 0.00"):
        assert f"| {cell} |" in text
    # our measured rows: one per metric, every algorithm a "mean ± sd" cell
    number = r"-?[0-9.]+(?:e[+-][0-9]+)?"
    for label in ("Silh. Score ↑", "Accuracy ↑", "Inertia ↓", "Norm. KMeans Dist. ↓", "KMeans Dist. (raw) ↓",
                  "Number of centres"):
        rows = [line for line in text.splitlines() if line.startswith(f"| {label} |")]
        assert len(rows) == 2, label  # Synth-10d (with paper) and digits (ours only)
        for row in rows:
            assert len(re.findall(rf"{number} ± {number}", row)) >= 3, row
    assert "| Number of centres | k = 64 (input) | 64.0 ± 0.0 |" in text
    assert "## digits" in text and "No paper numbers" in text
    # settings that make the numbers comparable are stated
    for phrase in ("**squared** distances", "subsample of 10000 points", "(b − a)·√d", "ranked by silhouette",
                   "δ = 1/(n√n)", "diffprivlib 0.6.6", "out_of_range=\"clip\""):
        assert phrase in text, phrase
    assert re.search(r"\d+ of 12 paper cells are consistent", text)
    png = out / f"{NAME}.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    assert f"]({NAME}.png)" in text


def test_same_seed_same_report_for_any_workers(quick_reports) -> None:
    _, texts, _ = quick_reports
    assert texts[1] == texts[2]


def test_other_seed_other_numbers(tmp_path: Path, quick_reports) -> None:
    _, texts, _ = quick_reports
    text = reproduce_mod.run_reproduction(NAME, quick=True, seed=1, out_dir=tmp_path, workers=1)
    assert text != texts[1] and "--seed 1" in text
    assert (tmp_path / f"{NAME}.md").read_text(encoding="utf-8") == text
    # the data sets are fixed (the authors' make_blobs(random_state=42), digits): only the runs change

    def data_rows(t: str) -> list[str]:
        starts = ("| Synth-10d (n = 5 000) | 5000 |", "| digits | 1797 |")
        return [line for line in t.splitlines() if line.startswith(starts)]

    assert data_rows(text) == data_rows(texts[1]) and len(data_rows(text)) == 2
