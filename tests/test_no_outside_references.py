"""Nothing in the repository points to a file outside it.

Docstrings, comments, suite descriptions and docs cite papers (authors, title, section / definition / algorithm
number) or files of the repository, never the authors' local notes (``../shared/...``, ``/work/shared/...``, the
research digests -- neither their file names nor bare citations such as "digest §5 item 17" or "digest E7" --,
a design document outside the repository (``DESIGN.md``), the seed papers' text files by path).
Scans every tracked text file (``git ls-files``) except this one.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SELF = Path(__file__).resolve().relative_to(ROOT).as_posix()

#: Substrings that only occur in a reference to a file outside the repository.
PATTERNS: tuple[str, ...] = ("../shared", "/work/shared", "anchors-auditing", "anchors-algorithms", "-digest.md",
                             "DESIGN.md")
#: A seed paper's text file cited by path ("seeds/001_a0b55f69d4ef326d.txt", "seed file 004_....txt").
SEED_FILE = re.compile(r"(?:seeds/|\b)\d{3}_[0-9a-f]{8,}\.txt")
#: A bare citation of the research digests ("digest §4.3", "Digest E7", "the digest's"), as a word: not
#: ``hexdigest``, ``digest_size``, ``h.digest()`` or ``_digest(...)``.
DIGEST = re.compile(r"(?<![\w.])digest\b", re.IGNORECASE)
#: Identifiers that spell "digest" but cite nothing: the suite entry of seed 002's own worked example of
#: Theorem 4.2.1 (1000 + 1000 edges); renaming it would rename the entry, its plot and the docs that list it.
ALLOWED_IDS: tuple[str, ...] = ("thm421-printed-digest-example",)
SUFFIXES: tuple[str, ...] = (".py", ".md", ".toml", ".txt", ".cfg", ".yml", ".yaml")
#: Files allowed to spell the patterns because they search for them (their check code, not a reference).
EXEMPT: frozenset[str] = frozenset({SELF, "tests/test_claims_ledger.py"})


def outside_references(text: str) -> list[tuple[int, str]]:
    """``(line number, pattern)`` of every line of ``text`` containing one of :data:`PATTERNS` or matching
    :data:`DIGEST` (outside :data:`ALLOWED_IDS`; reported only when no pattern already flags the line)."""
    found = []
    for i, line in enumerate(text.splitlines(), 1):
        hits = [(i, pat) for pat in PATTERNS if pat in line]
        if not hits and SEED_FILE.search(line):
            hits.append((i, SEED_FILE.pattern))
        for ident in ALLOWED_IDS:
            line = line.replace(ident, "")
        if not hits and DIGEST.search(line):
            hits.append((i, DIGEST.pattern))
        found += hits[:1]  # one report per line
    return found


def tracked_text_files() -> list[str]:
    if shutil.which("git") is None:
        pytest.skip("git is not installed: cannot list the tracked files")
    proc = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=False)
    if proc.returncode != 0:
        pytest.skip(f"not a git checkout: {proc.stderr.decode(errors='replace').strip()}")
    names = [n for n in proc.stdout.decode("utf-8", errors="replace").split("\0") if n]
    return sorted(n for n in names if n.endswith(SUFFIXES) and n not in EXEMPT and (ROOT / n).is_file())


def test_no_tracked_file_points_outside_the_repository() -> None:
    files = tracked_text_files()
    assert files, "git ls-files listed no text file"
    bad = [f"{name}:{i}: {pat!r}" for name in files
           for i, pat in outside_references((ROOT / name).read_text(encoding="utf-8", errors="replace"))]
    assert not bad, ("lines pointing to files outside the repository (cite the paper, with its section / "
                     "definition / algorithm number, or a file of the repository instead):\n" + "\n".join(bad))


@pytest.mark.parametrize("line", [
    "Source: seed 001 (``../shared/seeds/001_a0b55f69d4ef326d.txt``), Sec. 3.3.1",
    "# see /work/shared/DESIGN.md",
    "The layout follows DESIGN.md §2 (pipeline stages).",
    "as in seeds/002_9f1c2ab3d4e5f607.txt, Table 3.1",
    "the seed file 004_5e6f7a8b9c0d1e2f.txt defines the neighbourhood",
    "Catalogue row #7 of anchors-auditing.md §4.1",
    "(anchors-algorithms.md §8.3)",
    "digest ``seed-004-digest.md`` §4.1",
    "The paper gives no σ formula and never defines \"radius\" (digest §5 item 17).",
    "``norm_kmeans_dist`` (digest §4.3 [CODE]): the mean over the reference sets",
    "of ``|E|·mu``, so the scale must be ``|E|·mu/ε`` (digest E7: the two neighbourhoods",
    "(seed-004 digest §2)",
    "authors' code use exp(ε f/(2Δ_f)).  Digest §1.3: the Def. 4 form is only 2ε-DP.",
    "# the digest's worked numbers for ε = 1, τ_r = 7",
])
def test_the_check_catches_an_outside_reference(line: str) -> None:
    text = f'"""A docstring.\n\n{line}\n"""\n'
    assert [i for i, _ in outside_references(text)] == [3]


def test_the_check_passes_a_paper_citation() -> None:
    text = ('Source: Pinot et al., "Graph-based clustering under differential privacy" (UAI 2018), Sec. 3.3.1,\n'
            "Algorithm 2; DP-Sniper (Bichsel et al., S&P 2021) benchmark SVT1; ``hashlib.sha256(b).hexdigest()``.\n")
    assert outside_references(text) == []


@pytest.mark.parametrize("line", [
    "return hashlib.sha256(out.tobytes()).hexdigest()",
    "h = hashlib.blake2b(digest_size=16); h.update(b); key = h.digest()",
    "assert _digest(via_call) == LEGACY_DIGESTS[name]",
    "| `theorems-seed002-clustering/thm421-printed-digest-example` | seed 002 Theorem 4.2.1 |",
])
def test_the_check_passes_a_hash_digest_and_an_entry_id(line: str) -> None:
    assert outside_references(f"# {line}\n") == []
