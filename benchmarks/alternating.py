"""Two settings side by side in fresh interpreters, alternating round by round (shared by the benchmarks that compare
a process-wide setting: ``bench_numpy_kernels``, ``bench_memory``), and the printing of their generated section."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Sequence

from benchmarks.bench_graph import write_section


def alternate(tag: str, settings: Sequence[str], rounds: int,
              measure: Callable[[str, int, Path], dict[str, Any]]) -> list[dict[str, dict[str, Any]]]:
    """``rounds`` rounds of ``measure(setting, round, scratch_dir)`` for every setting, in the given order in even
    rounds and reversed in odd ones (so that neither setting always runs first), each round's results by setting."""
    out = []
    with tempfile.TemporaryDirectory(prefix=f"{tag}-") as tmp:
        for r in range(rounds):
            row: dict[str, dict[str, Any]] = {}
            for s in settings if r % 2 == 0 else list(settings)[::-1]:
                row[s] = measure(s, r, Path(tmp))
            out.append(row)
            print(f"[{tag}] round {r + 1} done", file=sys.stderr, flush=True)
    return out


def publish(tag: str, text: str, write: Path | None, begin: str, end: str) -> None:
    """Print the section and, with ``write``, replace its generated block in that file."""
    print(text)
    if write is not None:
        write_section(write, text, begin, end)
        print(f"\n[{tag}] wrote the generated section of {write}", file=sys.stderr)
