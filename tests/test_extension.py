"""A check kind and a neighbour relation of a user's own (tests/data/plugins/dp_plugin.py), added without editing
dpverify: loaded by a suite's ``[suite] plugins``, run by ``dpverify run`` in process and in a fresh process, shown in
the reports, compared by ``dpverify compare``, and used by the strategies and the pair search.

Statistical entries run at fixed seeds; the violation entry (true ε 1 against a claim of 0.5 at 2·10⁵ samples) is
detected with probability far above 1 − 10⁻⁶ and the pass entry's pairs have one law (no false alarm above α).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings

from dpverify.cli import commands as cli
from dpverify.code_checks.sensitivity import check_sensitivity
from dpverify.errors import InputError, SuiteError
from dpverify.neighbours import build_relation, register_relation, relation_names
from dpverify.suites import load_suite
from dpverify.suites.kinds import CheckKind, get_kind, kind_names, register_kind
from dpverify.testing.strategies import neighbour_pairs

PLUGINS = Path(__file__).parent / "data" / "plugins"
if str(PLUGINS) not in sys.path:
    sys.path.insert(0, str(PLUGINS))

import dp_plugin  # noqa: E402  (registers output-range and swap-adjacent)

SUITE = f'''
[suite]
name = "mine"
plugins = ["dp_plugin"]
import_paths = ["{PLUGINS.as_posix()}"]

[[entry]]
id = "clipped-in-range"
kind = "output-range"
mechanism = "dp_plugin:clipped_laplace"
input = [1.0, 2.0]
low = -3.0
high = 3.0
samples = 20000
expect = "pass"

[[entry]]
id = "unclipped-leaves-range"
kind = "output-range"
mechanism = "dp_plugin:unclipped_laplace"
input = [1.0, 2.0]
low = -3.0
high = 3.0
expect = "violation"

[[entry]]
id = "first-coordinate-not-swap-invariant"
kind = "statistical"
mechanism = "dp_plugin:first_coordinate"
input = [0.0, 1.0, 1.0]
relation = {{ kind = "swap-adjacent", limit = 1 }}
claim = {{ epsilon = 0.5 }}
expect = "violation"
true_epsilon = 1.0
quick = {{ samples = 200000, search_samples = 20000 }}

[[entry]]
id = "sum-swap-invariant"
kind = "statistical"
mechanism = "dp_plugin:noisy_sum"
input = [0.0, 1.0, 1.0]
relation = {{ kind = "swap-adjacent" }}
claim = {{ epsilon = 0.1 }}
expect = "pass"
quick = {{ samples = 100000, search_samples = 20000 }}
'''


@pytest.fixture()
def suite_file(tmp_path: Path) -> Path:
    p = tmp_path / "mine.toml"
    p.write_text(SUITE, encoding="utf-8")
    return p


def test_registries_know_the_plugin() -> None:
    assert "output-range" in kind_names() and kind_names()[:7] == (
        "statistical", "exact", "em", "sensitivity", "replay", "ledger", "theorem")
    assert get_kind("output-range") is dp_plugin.OUTPUT_RANGE
    assert "swap-adjacent" in relation_names()
    rel = build_relation("swap-adjacent", limit=1)
    assert rel.contains([0.0, 1.0, 1.0], [1.0, 0.0, 1.0]) and not rel.contains([0.0, 1.0, 1.0], [1.0, 1.0, 0.0])


def test_suite_loads_and_validates_the_kinds_keys(suite_file: Path, tmp_path: Path) -> None:
    suite = load_suite(suite_file)
    e = suite.entries[0]
    assert e.kind == "output-range" and e.options == {"low": -3.0, "high": 3.0, "samples": 20000}
    assert e.plugins == ("dp_plugin",)
    bad = tmp_path / "bad.toml"
    bad.write_text(SUITE.replace("low = -3.0\nhigh = 3.0\nsamples = 20000", "low = 3.0\nhigh = -3.0"), encoding="utf-8")
    with pytest.raises(SuiteError, match="clipped-in-range.*low < high"):
        load_suite(bad)
    bad.write_text(SUITE.replace("samples = 20000", "sample = 20000"), encoding="utf-8")
    with pytest.raises(SuiteError, match="sample"):
        load_suite(bad)
    bad.write_text(SUITE.replace('plugins = ["dp_plugin"]', 'plugins = ["no_such_plugin_module"]'), encoding="utf-8")
    with pytest.raises(SuiteError, match="importing plugin 'no_such_plugin_module' failed"):
        load_suite(bad)
    bad.write_text(SUITE.replace('kind = "output-range"', 'kind = "output-rnage"', 1), encoding="utf-8")
    with pytest.raises(SuiteError, match="kind 'output-rnage' is not supported.*output-range"):
        load_suite(bad)


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = cli.main(argv)
    return code, capsys.readouterr().out


def test_run_reports_and_compare(suite_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out1, out2 = tmp_path / "r1", tmp_path / "r2"
    code, text = _run(["run", str(suite_file), "--out", str(out1), "--jobs", "1", "--workers", "1"], capsys)
    assert code == 0, text
    doc = json.loads((out1 / "report.json").read_text())
    by_id = {r["id"]: r for r in doc["entries"]}
    assert by_id["clipped-in-range"]["outcome"] == "pass"
    assert by_id["unclipped-leaves-range"]["outcome"] == "violation"
    assert by_id["unclipped-leaves-range"]["details"]["outside_fraction"] > 0.01      # P(|L| > 0) ≈ 0.05 here
    assert by_id["first-coordinate-not-swap-invariant"]["outcome"] == "violation"
    assert 0.5 < by_id["first-coordinate-not-swap-invariant"]["epsilon_lower_bound"] <= 1.0
    assert by_id["sum-swap-invariant"]["outcome"] == "pass"
    assert "out=0" in text and "out=0" in (out1 / "report.md").read_text()           # the kind's report cell

    # a fresh process: the plugin is imported from the suite file again, entries run side by side
    proc = subprocess.run([sys.executable, "-m", "dpverify", "run", str(suite_file), "--out", str(out2), "--jobs", "2",
                           "--workers", "1"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    doc2 = json.loads((out2 / "report.json").read_text())
    key = ("id", "outcome", "epsilon_lower_bound", "witness", "details")
    assert [{k: r[k] for k in key} for r in doc2["entries"]] == [{k: r[k] for k in key} for r in doc["entries"]]

    code, text = _run(["compare", str(out1 / "report.json"), str(out2 / "report.json")], capsys)
    assert code == 0 and "REGRESSION" not in text

    # the kind's comparison rule: a larger fraction outside the range in NEW is reported as a rise
    base = json.loads((out1 / "report.json").read_text())
    for r in base["entries"]:
        if r["id"] == "unclipped-leaves-range":
            r["details"]["outside_fraction"] = r["details"]["outside_fraction"] / 2
    (tmp_path / "base.json").write_text(json.dumps(base))
    code, text = _run(["compare", str(tmp_path / "base.json"), str(out1 / "report.json")], capsys)
    assert "outside fraction" in text, text


@settings(max_examples=40, deadline=None, derandomize=True)
@given(neighbour_pairs(dp_plugin.SwapAdjacent(), [0.0, 1.0, 2.0, 3.0]))
def test_strategies_draw_pairs_of_a_user_relation(pair) -> None:  # type: ignore[no-untyped-def]
    assert dp_plugin.SwapAdjacent().contains(pair.x0, pair.x1)


def test_pair_search_with_a_user_relation() -> None:
    """The sensitivity of ``x[0]`` under adjacent swaps of ``[0, 1, 3]`` is 1 (swap 0 and 1): a claim of 0.5 is
    refuted by the generic stage of the pair search (the relation's patterns and random pairs)."""
    res = check_sensitivity(lambda x: np.asarray(x, dtype=float)[:1], 0.5, dp_plugin.SwapAdjacent(), [0.0, 1.0, 3.0],
                            seed=1, examples=0)
    assert res.violation and res.max_change == pytest.approx(1.0)


def test_registration_errors() -> None:
    with pytest.raises(InputError, match="built in"):
        register_kind(CheckKind(name="statistical", run=lambda e, c: None))  # type: ignore[arg-type,return-value]
    with pytest.raises(InputError, match="already registered"):
        register_kind(CheckKind(name="output-range", run=lambda e, c: None))  # type: ignore[arg-type,return-value]
    with pytest.raises(InputError, match="required keys"):
        CheckKind(name="x", run=lambda e, c: None, keys=("a",), required=("b",))  # type: ignore[arg-type,return-value]
    with pytest.raises(InputError, match="built in"):
        register_relation("linf", dp_plugin.SwapAdjacent)
    with pytest.raises(InputError, match="not a dpverify.neighbours.NeighbourRelation"):
        register_relation("not-a-relation", lambda: object(), replace=True)
        build_relation("not-a-relation")
    with pytest.raises(InputError, match="unknown relation kind 'nope'"):
        build_relation("nope")


def test_event_family_of_ones_own() -> None:
    """A user event family (pairwise differences) is searched on every pair, its candidates compete with the
    built-in ones, and the audit gives the same result on one worker and on two (the family is pickled)."""
    from dpverify import audit
    from dpverify.statistical.search import search_events

    rng = np.random.default_rng(5)
    o0 = dp_plugin.opposite_moves([0.0, 0.0, 0.0], 20_000, rng)
    o1 = dp_plugin.opposite_moves([1.0, -1.0, 0.0], 20_000, rng)
    found, _, kind = search_events(o0, o1, n_test=100_000, z=3.0, delta=0.0, rng=np.random.default_rng(0),
                                   families=(dp_plugin.PairwiseDifferences(),))
    groups = {c.group for c in found}
    assert kind == "vector" and any(g.startswith("diff(out[0]-out[1])") for g in groups)
    pair = [(np.zeros(3), np.array([1.0, -1.0, 0.0]))]
    runs = [audit(dp_plugin.opposite_moves, pair, 1.0, samples=40_000, search_samples=10_000, seed=3, workers=w,
                  event_families=(dp_plugin.PairwiseDifferences(),)) for w in (1, 2)]
    assert runs[0].epsilon_lower_bound == runs[1].epsilon_lower_bound
    assert runs[0].witness is not None and runs[0].witness.event == runs[1].witness.event
    with pytest.raises(InputError, match="event_families must be callables"):
        audit(dp_plugin.opposite_moves, pair, 1.0, samples=1000, event_families=("sum",))  # type: ignore[arg-type]
