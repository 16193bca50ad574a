"""``dpverify audit TARGET``: the one-shot audit of a single mechanism or library target (dpverify.cli.one_shot).

Statistical tests here use fixed seeds and budgets where the outcome is far from the decision boundary: the
violations are of twice the claim (true ε = 1 against a claim of 0.5, seen at ε ≥ 0.9 with 2·10⁴ samples), the
passes are correct mechanisms audited at their own ε (false alarm probability ≤ α = 0.05 by construction; the seed
is fixed, so the outcome is deterministic).
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from dpverify.cli import commands as cli

DATA = Path(__file__).parent / "data"


def _audit(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(["audit", *args, "--out", str(tmp_path / "out"), "--workers", "1"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_violation_prints_the_verdict_sentence_and_writes_the_reports(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _audit(tmp_path, capsys, "mechs:laplace_sum", "--import-path", str(DATA),
                            "--param", "epsilon=1", "--pair", "0", "1", "--epsilon", "0.5", "--samples", "20000")
    assert code == cli.EXIT_MISMATCH
    assert "VIOLATION of the claim ε = 0.5" in out
    files = {p.name for p in (tmp_path / "out").iterdir()}
    assert {"report.json", "report.md", "report.html", "audit.toml"} <= files
    record = json.loads((tmp_path / "out" / "report.json").read_text())
    (entry,) = record["entries"]
    assert entry["outcome"] == "violation" and entry["epsilon_lower_bound"] > 0.9
    assert "audit.toml" in err


def test_the_written_suite_reruns_to_the_same_outcome(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = _audit(tmp_path, capsys, "mechs:laplace_sum", "--import-path", str(DATA),
                        "--param", "epsilon=1", "--pair", "0", "1", "--epsilon", "1", "--samples", "20000")
    assert code == cli.EXIT_OK
    suite = tmp_path / "out" / "audit.toml"
    data = tomllib.loads(suite.read_text())
    assert data["entry"][0]["mechanism"] == "mechs:laplace_sum" and data["entry"][0]["claim"] == {"epsilon": 1.0}
    first = json.loads((tmp_path / "out" / "report.json").read_text())["entries"][0]
    assert cli.main(["run", str(suite), "--out", str(tmp_path / "rerun"), "--workers", "1"]) == cli.EXIT_OK
    again = json.loads((tmp_path / "rerun" / "report.json").read_text())["entries"][0]
    assert again["epsilon_lower_bound"] == first["epsilon_lower_bound"] and again["outcome"] == "pass"


def test_ratio_test_option_reaches_the_audit_and_its_suite_file(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _audit(tmp_path, capsys, "mechs:laplace_sum", "--import-path", str(DATA), "--param",
                          "epsilon=1", "--pair", "0", "1", "--epsilon", "0.5", "--samples", "20000",
                          "--ratio-test", "auto")
    assert code == cli.EXIT_MISMATCH
    data = tomllib.loads((tmp_path / "out" / "audit.toml").read_text())
    assert data["entry"][0]["ratio_test"] == "auto"
    (entry,) = json.loads((tmp_path / "out" / "report.json").read_text())["entries"]
    assert entry["witness"]["method"] == "poisson" and entry["epsilon_lower_bound"] > 0.9


def test_per_call_function_seeded_through_random_state(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ("mechs:one_release_laplace", "--per-call", "--import-path", str(DATA), "--param", "epsilon=1",
            "--pair", "0", "1", "--samples", "20000")
    code, out, _ = _audit(tmp_path, capsys, *args, "--epsilon", "0.5")
    assert code == cli.EXIT_MISMATCH and "VIOLATION" in out
    entry = tomllib.loads((tmp_path / "out" / "audit.toml").read_text())["entry"][0]
    assert entry["mechanism"] == "dpverify.libraries.percall:PerCall"
    assert entry["params"]["release"] == "mechs:one_release_laplace"


@pytest.mark.parametrize("args, message", [
    (("--epsilon", "1"), "no inputs"),
    (("--epsilon", "1", "--pair", "0", "1", "--input", "[0]", "--relation", '{"kind": "add_remove"}'),
     "not both"),
    (("--epsilon", "1", "--input", "[0, 1]", "--relation", "add_remove"), "--relation must be a JSON object"),
    (("--epsilon", "-1", "--pair", "0", "1"), "claim.epsilon"),
    (("--zcdp", "0", "--pair", "0", "1"), "claim"),
])
def test_usage_errors_name_the_problem(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...],
                                       message: str) -> None:
    code, _, err = _audit(tmp_path, capsys, "mechs:laplace_sum", "--import-path", str(DATA),
                          "--param", "epsilon=1", *args)
    assert code == cli.EXIT_USAGE
    assert message in err and "Traceback" not in err


def test_a_claim_is_required(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["audit", "mechs:laplace_sum", "--pair", "0", "1"]) == cli.EXIT_USAGE
    assert "one of the arguments" in capsys.readouterr().err


def test_diffprivlib_tool_from_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """diffprivlib's tools.sum with bounds (5, 10) audited under add/remove-one (a model it does not assume: its
    truncation to [5n, 10n] moves with n): a violation far above the claim."""
    pytest.importorskip("diffprivlib", reason="needs diffprivlib: pip install -e '.[dev]'")
    code, out, _ = _audit(tmp_path, capsys, "dpverify.libraries.diffprivlib_targets:DiffprivlibTool",
                          "--param", "tool=sum", "--param", "epsilon=1", "--param", "bounds=[5, 10]",
                          "--pair", "[10, 10, 10]", "[10, 10, 10, 10]", "--epsilon", "1", "--samples", "5000")
    assert code == cli.EXIT_MISMATCH and "VIOLATION of the claim ε = 1" in out
    record = json.loads((tmp_path / "out" / "report.json").read_text())["entries"][0]
    assert record["epsilon_lower_bound"] > 3


def test_opendp_measurement_with_its_own_zcdp_claim(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """OpenDP's make_gaussian(scale=1) claims ρ = 0.5 zCDP through its own map: passes (alpha 0.001: OpenDP cannot
    be seeded, so this is a fresh draw each run with false-alarm probability at most 0.001)."""
    pytest.importorskip("opendp", reason="needs opendp: pip install -e '.[dev]'")
    pytest.importorskip("dp_accounting", reason="needs dp-accounting: pip install -e '.[dev]'")
    code, out, _ = _audit(tmp_path, capsys, "dpverify.libraries.opendp_targets:OpenDPMeasurement",
                          "--param", "factory=dpverify.libraries.opendp_targets:gaussian", "--param", "scale=1.0",
                          "--pair", "0.0", "1.0", "--target-claim", "--deltas", "0.01", "--alpha", "0.001",
                          "--samples", "5000")
    assert code == cli.EXIT_OK, out
    assert "ρ=0.5 zCDP" in out and "No violation" in out
    record = json.loads((tmp_path / "out" / "report.json").read_text())["entries"][0]
    assert record["claim"]["profile"] == {"zcdp": 0.5}


def test_opendp_laplace_at_twice_its_distance_is_flagged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("opendp", reason="needs opendp: pip install -e '.[dev]'")
    code, out, _ = _audit(tmp_path, capsys, "dpverify.libraries.opendp_targets:OpenDPMeasurement",
                          "--param", "factory=dpverify.libraries.opendp_targets:laplace", "--param", "scale=0.5",
                          "--pair", "0.0", "2.0", "--target-claim", "--samples", "5000")
    assert code == cli.EXIT_MISMATCH and "VIOLATION" in out


def test_input_and_relation_instead_of_pairs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--input with --relation: the neighbours of [0.5, 0.5] under add/remove-one of a record in {1.0} (the sum moves
    by at most 1: ε = 1 for Laplace(1)); a claim of 0.5 is refuted."""
    code, out, _ = _audit(tmp_path, capsys, "mechs:laplace_sum", "--import-path", str(DATA), "--param", "epsilon=1",
                          "--input", "[0.5, 0.5]", "--relation", '{"kind": "add_remove", "candidates": [1.0]}',
                          "--epsilon", "0.5", "--samples", "20000")
    assert code == cli.EXIT_MISMATCH and "VIOLATION" in out
    entry = tomllib.loads((tmp_path / "out" / "audit.toml").read_text())["entry"][0]
    assert entry["relation"] == {"kind": "add_remove", "candidates": [1.0]} and "pairs" not in entry
