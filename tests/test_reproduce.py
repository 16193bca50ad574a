"""Tests of ``dpverify reproduce`` (dpverify.cli.reproduce and the CLI subcommand) and of the seed 002
Table 3.1 reproduction in quick mode (algorithms.experiments.pinot_table_3_1)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dpverify.cli import commands as cli
from dpverify.cli import reproduce as reproduce_mod
from dpverify.errors import InputError

NAME = "pinot-table-3.1"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def quick_reports(tmp_path_factory: pytest.TempPathFactory) -> dict[int, str]:
    """The quick report written by the CLI with 1 and with 2 workers, same seed and --out."""
    out = tmp_path_factory.mktemp("reproductions")
    texts = {}
    for workers in (1, 2):
        code = cli.main(["reproduce", NAME, "--quick", "--seed", "3", "--workers", str(workers), "--out", str(out)])
        assert code == 0
        texts[workers] = (out / f"{NAME}.md").read_text(encoding="utf-8")
    return texts


def test_quick_end_to_end_through_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "reproduce", NAME, "--quick", "--out", str(tmp_path))
    assert code == 0, err
    report = tmp_path / f"{NAME}.md"
    assert report.is_file()
    text = report.read_text(encoding="utf-8")
    assert out == text  # the report is printed as written
    assert str(report) in err
    first = text.splitlines()[:5]
    assert any(f"dpverify reproduce {NAME} --quick --seed 0" in line for line in first)
    assert "QUICK MODE" in text and "NOT comparable" in text
    # the side-by-side table: one row per (p, method, ε), printed next to ours
    assert "| p | method | ε | printed | ours (mean ± SD) |" in text
    assert "| 0.1 | Laplace | 0.1 | 4055.5 ± 90.6 |" in text
    assert "| 0.9 | PAMST | 1 | 0.9 ± 0.1 |" in text
    assert text.count("\n| ") >= 40
    # the duplicated printed PAMST cells are found from the data, not hardcoded
    assert "PAMST, ε = 0.1: the printed cells at p = 0.5, 0.7 are identical (64.7 ± 2.5)" in text
    assert "PAMST, ε = 0.4: the printed cells at p = 0.5, 0.7 are identical (9.1 ± 0.6)" in text
    assert "Δu = 1/|E|" in text and "1/|E| per edge" in text
    assert not list(tmp_path.glob(".*.tmp"))  # atomic write left no temporary file


def test_same_seed_same_report_for_any_workers(quick_reports: dict[int, str]) -> None:
    assert quick_reports[1] == quick_reports[2]
    assert "--seed 3" in quick_reports[1]


def test_other_seed_other_numbers(tmp_path: Path, quick_reports: dict[int, str]) -> None:
    text = reproduce_mod.run_reproduction(NAME, quick=True, seed=4, out_dir=tmp_path, workers=1)
    assert text != quick_reports[1]
    assert (tmp_path / f"{NAME}.md").read_text(encoding="utf-8") == text


def test_unknown_name_exit_2_names_known(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "reproduce", "pinot-table-3.2", "--out", str(tmp_path))
    assert code == 2
    assert out == ""
    assert "unknown reproduction 'pinot-table-3.2'" in err
    assert "did you mean 'pinot-table-3.1'" in err
    for name in reproduce_mod.REPRODUCTIONS:
        assert name in err
    assert "Traceback" not in err
    assert not any(tmp_path.iterdir())  # nothing ran, nothing written


def test_list_and_no_name(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["reproduce", "--list"], ["reproduce"]):
        code, out, _ = run(capsys, *argv)
        assert code == 0
        for name, path in reproduce_mod.REPRODUCTIONS.items():
            assert name in out and path in out


def test_registry_uses_import_strings() -> None:
    assert reproduce_mod.REPRODUCTIONS == {
        "dpm-table-2-synth": "algorithms.experiments.dpm_table_2:reproduce",
        "pinot-table-3.1": "algorithms.experiments.pinot_table_3_1:reproduce",
        "ptclust-figures": "algorithms.experiments.ptclust_figures:reproduce",
    }
    assert all(isinstance(v, str) for v in reproduce_mod.REPRODUCTIONS.values())


def test_runner_validates_and_wraps_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(InputError, match="workers"):
        reproduce_mod.run_reproduction(NAME, quick=True, seed=0, out_dir=tmp_path, workers=0)
    with pytest.raises(InputError, match="seed"):
        reproduce_mod.run_reproduction(NAME, quick=True, seed=-1, out_dir=tmp_path, workers=1)
    monkeypatch.setitem(reproduce_mod.REPRODUCTIONS, "nowhere", "algorithms.experiments.no_such_module:reproduce")
    with pytest.raises(InputError, match="reproduction 'nowhere' cannot be loaded.*no_such_module"):
        reproduce_mod.run_reproduction("nowhere", quick=True, seed=0, out_dir=tmp_path, workers=1)


def test_runner_writes_what_the_function_returns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []

    def fake(*, quick: bool, seed: int, out_dir: Path, workers: int | None) -> str:
        calls.append((quick, seed, out_dir, workers))
        (out_dir / "figure.txt").write_text("x")
        return "# fake"

    monkeypatch.setattr(reproduce_mod, "resolve", lambda *a, **k: fake)
    monkeypatch.setitem(reproduce_mod.REPRODUCTIONS, "fake", "x:y")
    out = tmp_path / "sub" / "dir"
    text = reproduce_mod.run_reproduction("fake", quick=True, seed=7, out_dir=str(out), workers=2)
    assert calls == [(True, 7, out, 2)]
    assert text == "# fake\n" and (out / "fake.md").read_text() == "# fake\n"
    assert (out / "figure.txt").is_file()


# -------------------------------------------------------------------------------------------------
# the experiment itself (small configurations)
# -------------------------------------------------------------------------------------------------


def test_experiment_seeding_independent_of_runs_and_workers() -> None:
    from algorithms.experiments.pinot_table_3_1 import Config, run_experiment

    small = Config(n_nodes=40, runs=2, p_values=(0.3, 0.9), epsilons=(0.4, 1.0))
    more = Config(n_nodes=40, runs=3, p_values=(0.3, 0.9), epsilons=(0.4, 1.0))
    a = run_experiment(small, seed=1, workers=1)
    b = run_experiment(more, seed=1, workers=2)
    # run i of density j depends only on (seed, j, i): the first two runs agree
    assert np.array_equal(a.errors, b.errors[:, :2])
    assert np.array_equal(a.mst_cost, b.mst_cost[:, :2])
    assert a.errors.shape == (2, 2, 2, 2)
    assert np.all(a.errors >= -1e-9)  # no spanning tree is lighter than the MST


def test_duplicate_detection_and_flags_come_from_the_data() -> None:
    from algorithms.experiments import pinot_table_3_1 as t

    cells = [t.Cell(p, "PAMST", 0.1, v, 1.0, m, 1.0, 1.0)
             for p, v, m in ((0.1, 300.0, 300.0), (0.3, 100.0, 100.0), (0.5, 60.0, 60.0), (0.7, 60.0, 43.0),
                             (0.9, 33.0, 33.0))]
    groups = t._duplicate_groups(cells)
    assert [[c.p for c in g] for g in groups] == [[0.5, 0.7]]
    (line,) = t._duplicates(cells)
    assert "The copy is the cell at p = 0.7" in line
    assert [c.p for c in cells if c.off] == [0.7]
