"""An installed dpverify does not take the generic top-level name ``algorithms``: the repository's algorithms/ folder is
installed as ``dpverify.algorithms`` (setup.py), its modules import each other relatively, and a suite's
``"algorithms.x:y"`` resolves to the installed package when no checkout is on the path."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _outside_env() -> dict[str, str]:
    """The environment of a process started outside the checkout: no PYTHONPATH pointing into it."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    return env


def test_the_algorithms_import_each_other_relatively() -> None:
    """An absolute ``import algorithms...`` inside algorithms/ would break once it is installed as
    dpverify.algorithms."""
    bad = []
    for f in sorted((ROOT / "algorithms").rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            names = ([node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else
                     [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            if any(n == "algorithms" or n.startswith("algorithms.") for n in names):
                bad.append(f"{f.relative_to(ROOT)}:{node.lineno}")
    assert not bad, f"use relative imports inside algorithms/: {bad}"


def test_outside_a_checkout_suites_resolve_to_the_installed_algorithms(tmp_path: Path) -> None:
    suite = tmp_path / "mine.toml"
    suite.write_text('[[entry]]\nid = "laplace"\nkind = "statistical"\n'
                     'mechanism = "algorithms.classic.laplace:Laplace"\nparams = { epsilon = 1.0 }\n'
                     'pairs = [[0.0, 1.0]]\nclaim = { epsilon = 1.0 }\nexpect = "pass"\n'
                     'quick = { samples = 2000 }\n', encoding="utf-8")
    code = ("import importlib.util, sys\n"
            "assert importlib.util.find_spec('algorithms') is None, 'a top-level algorithms is importable'\n"
            "from dpverify.suites.imports import resolve\n"
            "print(resolve('algorithms.classic.laplace:Laplace').__module__)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=_outside_env(), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "dpverify.algorithms.classic.laplace"
    run = subprocess.run([sys.executable, "-m", "dpverify", "run", str(suite), "--out", str(tmp_path / "out"),
                          "--workers", "1"], cwd=tmp_path, env=_outside_env(), capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    assert "1/1 entries as expected" in run.stdout


@pytest.mark.slow
def test_the_wheel_has_no_top_level_algorithms(tmp_path: Path) -> None:
    """The built wheel holds dpverify/ (with dpverify/algorithms/) and its metadata, nothing else at the top.  Built
    from a copy of the sources without build outputs: a stale build/ of an older layout would leak into the wheel."""
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", ".bench-venv",
                                                             "dpverify-*", "__pycache__", ".hypothesis"))
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), str(src)],
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = tmp_path.glob("dpverify-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert {n.split("/")[0] for n in names} == {"dpverify", wheel.name.split("-py")[0] + ".dist-info"}
    assert "dpverify/algorithms/classic/laplace.py" in names and "dpverify/algorithms/__init__.py" in names
