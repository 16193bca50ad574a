"""Measure the core install: python docs/measure_install.py [EXTRAS]

Creates a fresh virtual environment in a temporary directory, times ``pip install <checkout>[EXTRAS]`` (default: the
core install, no extras), and prints the size of its site-packages, the number of distributions installed (pip and
setuptools excepted), and whether a top-level ``algorithms`` package was installed (it must not be: the reference
algorithms are ``dpverify.algorithms`` once installed).  The README quotes its output.  Needs the package registry.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    extras = sys.argv[1] if len(sys.argv) > 1 else ""
    target = f"{ROOT}[{extras}]" if extras else str(ROOT)
    with tempfile.TemporaryDirectory() as tmp:
        env_dir = Path(tmp) / "venv"
        venv.create(env_dir, with_pip=True)
        py = env_dir / "bin" / "python"
        t0 = time.perf_counter()
        subprocess.run([str(py), "-m", "pip", "install", "-q", target], check=True, cwd=tmp)
        seconds = time.perf_counter() - t0
        site = next((env_dir / "lib").glob("python*/site-packages"))
        size = sum(f.stat().st_size for f in site.rglob("*") if f.is_file() and not f.is_symlink())
        listed = json.loads(subprocess.run([str(py), "-m", "pip", "list", "--format", "json"], check=True,
                                           capture_output=True, text=True).stdout)
        dists = [d["name"] for d in listed if d["name"].lower() not in ("pip", "setuptools")]
        top_level = (site / "algorithms").exists()
        probe = subprocess.run([str(py), "-c", "import dpverify.algorithms.classic.laplace"], cwd=tmp)
    what = f"pip install .[{extras}]" if extras else "pip install ."
    print(f"`{what}` into a fresh venv: {size / 2**20:.0f} MiB in site-packages, {len(dists)} distributions "
          f"(dpverify and its dependencies), {seconds:.0f} s on this machine; top-level `algorithms` installed: "
          f"{'yes' if top_level else 'no'}; `dpverify.algorithms` imports: {'yes' if probe.returncode == 0 else 'no'}")
    print("distributions: " + ", ".join(sorted(dists, key=str.lower)))
    return 0 if not top_level and probe.returncode == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
