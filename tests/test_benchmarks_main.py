"""The one-command benchmark driver (python -m benchmarks, dpverify bench) and the suites benchmark."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import benchmarks.__main__ as drv
import benchmarks.bench_suites as bs
from dpverify.cli import commands as cli

ROOT = Path(__file__).resolve().parent.parent
TINY = ROOT / "tests" / "data" / "suites" / "tiny.toml"


def test_driver_lists_and_rejects_unknown_names(capsys: pytest.CaptureFixture[str]) -> None:
    assert drv.main(["--list"]) == 0
    listed = capsys.readouterr().out.split("\n")
    assert [line.split()[0] for line in listed if line] == list(drv.BENCHMARKS)
    with pytest.raises(SystemExit) as exc:
        drv.main(["--only", "peers,nope"])
    assert exc.value.code == 2 and "unknown benchmark(s) nope" in capsys.readouterr().err


def test_driver_passes_its_options_on(tmp_path: Path) -> None:
    args = drv.parse(["--quick", "--seed", "3", "--write", str(tmp_path / "p.md"), "--only", "peers,suites",
                      "--no-statdp", "--wait-idle", "60"])
    assert args.names == ["peers", "suites"]
    peers = drv.command_for("peers", args)
    assert peers[1:3] == ["-m", "benchmarks.bench_peers"] and "--quick" in peers and "--no-statdp" in peers
    assert peers[peers.index("--write") + 1] == str((tmp_path / "p.md").resolve())      # outside the checkout
    inside = drv.command_for("suites", drv.parse(["--write", str(ROOT / "docs" / "performance.md")]))
    assert inside[inside.index("--write") + 1] == "docs/performance.md"
    assert peers[peers.index("--seed") + 1] == "3" and peers[peers.index("--wait-idle") + 1] == "60.0"
    assert "--no-statdp" not in drv.command_for("suites", args)
    for name in drv.BENCHMARKS:                 # every listed benchmark is a module with a main()
        assert (ROOT / "benchmarks" / f"bench_{name}.py").is_file()


def test_dpverify_bench_forwards_and_explains_a_missing_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    out = subprocess.run([sys.executable, "-m", "dpverify", "bench", "--list"], cwd=tmp_path, capture_output=True,
                         text=True)
    assert out.returncode == 0 and "suites" in out.stdout
    monkeypatch.setattr(cli, "__file__", str(tmp_path / "site-packages" / "dpverify" / "cli.py"))
    assert cli.main(["bench", "--quick"]) == 2
    err = capsys.readouterr().err
    assert "source checkout" in err and "pip install -e" in err and "Traceback" not in err


def test_suites_benchmark_times_a_run_and_reports_it() -> None:
    run = bs.time_run([str(TINY), "--workers", "1", "--jobs", "1"], "quick default suites", seed=0)
    assert run["exit"] == 0 and run["entries"] == run["matched"] > 0 and run["wall"] > 0
    assert set(run["per_suite"]) == {"tiny"} and len(run["slowest"]) == run["entries"]
    text = bs.report("cmd", 0, [run], (0.0, 0.0, 0.0), quick=True)
    assert "| **PASS** |" in text and "not run (`--quick`)" in text and "tiny/" in text
    assert run["unexpected"] == [] and "not the one expected" not in text
    # an entry whose outcome was not the expected one is named, with what was expected and what came out
    missed = dict(run, matched=run["matched"] - 1, exit=1,
                  unexpected=[("tiny/some-entry", "violation", "pass", None)])
    text = bs.report("cmd", 0, [missed], (0.0, 0.0, 0.0), quick=True)
    assert "| **FAIL** |" in text and "| `tiny/some-entry` | violation | pass | – |" in text
    with pytest.raises(RuntimeError, match="wrote no report"):
        bs.time_run([str(TINY), "--select", "no-such-entry"], "quick default suites", seed=0)


@pytest.mark.parametrize("module, options", [
    ("benchmarks.bench_dpsniper", ("--mirror", "--fraction", "--only", "--repeat", "--no-dpsniper", "--quick")),
    ("benchmarks.bench_peers", ("--venv", "--no-statdp", "--write")),
    ("benchmarks.bench_scaling", ("--images", "--wait-idle")),
])
def test_benchmark_help_lists_its_own_options(module: str, options: tuple[str, ...],
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """A benchmark's own options (parsed before the common ones) are listed by --help with the common ones."""
    main = __import__(module, fromlist=["main"]).main
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    out = capsys.readouterr().out
    assert exc.value.code == 0 and all(o in out for o in options), out
