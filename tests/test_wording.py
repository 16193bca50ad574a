"""Verdict sentences say what was observed, in proper English: an event seen under one input and never under the
other is "never observed in N samples under x1" (not "impossible": a finite sample cannot show that), and one
pair is "1 pair"."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np

import dpverify
from dpverify._validation import counted

sys.path.insert(0, str(Path(__file__).parent / "data"))

import mechs  # noqa: E402

ROOT = Path(__file__).parents[1]


def test_counted() -> None:
    assert counted(1, "pair") == "1 pair"
    assert counted(0, "pair") == "0 pairs"
    assert counted(3, "entry", "entries") == "3 entries"
    assert counted(np.int64(1), "run") == "1 run"


def test_a_never_observed_witness_says_what_was_observed() -> None:
    result = dpverify.audit(mechs.identity, [(np.array([0.0, 1.0]), np.array([1.0, 1.0]))], epsilon=1.0,
                            samples=20_000, search_samples=5_000, seed=0, workers=1)
    assert result.violation and result.witness is not None and result.witness.test.count_den == 0
    text = str(result)
    den = "x1" if result.witness.test.direction == 0 else "x0"
    assert f"never observed in 20000 samples under {den}" in text, text
    assert "impossible" not in text


def test_one_pair_is_singular() -> None:
    result = dpverify.audit(mechs.LaplaceSum(epsilon=1.0), [(0.0, 1.0)], epsilon=10.0, samples=20_000, search_samples=5_000,
                            seed=0, workers=1)
    assert not result.violation
    assert "over 1 pair " in str(result) and "1 pairs" not in str(result), str(result)


def test_no_message_writes_a_count_before_a_fixed_plural() -> None:
    """Messages built as f"{n} pairs" read "1 pairs" for one; they use counted() (or a count that is never 1)."""
    pattern = re.compile(r"\{(?:len\([^)]*\)|self\.n_pairs|self\.evaluations|self\.runs)\} "
                         r"(?:pairs|entries|runs|instances|charges)\b")
    bad = [f"{p.relative_to(ROOT)}:{i}" for p in sorted((ROOT / "dpverify").rglob("*.py"))
           for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
           if pattern.search(line) and "never 1" not in line]
    assert not bad, bad
