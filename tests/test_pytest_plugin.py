"""dpverify.assert_private / assert_theorem and the pytest plugin (dp_audit fixture and marker, dp_seed,
--dp-seed), run in throw-away pytest sessions (pytester), plus the downstream example project's tests."""

from __future__ import annotations

import shutil
import zlib
from importlib.metadata import entry_points
from pathlib import Path

import pytest

import audit_mechs as m
import dpverify
from dpverify import InputError
from theorem_toys import LaplaceTail

pytest_plugins = ["pytester"]

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "downstream_project"
FAST = dict(samples=40_000, search_samples=20_000, workers=1)

# a test module for the inner sessions: a correct and a buggy Laplace mechanism (scale 1/ε vs 1/(3ε))
MECHANISMS = """
import pytest

def laplace(x, n, rng):
    return x + rng.laplace(0.0, 1.0, size=n)

def too_little_noise(x, n, rng):
    return x + rng.laplace(0.0, 1.0 / 3.0, size=n)
"""


def test_the_plugin_is_registered_as_a_pytest11_entry_point() -> None:
    plugins = {ep.name: ep.value for ep in entry_points(group="pytest11")}
    assert plugins.get("dpverify") == "dpverify.testing.pytest_plugin"


def test_assert_private_returns_the_result_on_a_pass() -> None:
    result = dpverify.assert_private(m.laplace, [(0.0, 1.0)], epsilon=0.1, seed=3, **FAST)
    assert isinstance(result, dpverify.AuditResult)
    assert not result.violation and result.samples == FAST["samples"] and result.seed == 3
    assert "not a proof of privacy" in str(result)


def test_assert_private_raises_with_the_violation_text() -> None:
    with pytest.raises(AssertionError) as info:
        dpverify.assert_private(m.laplace, [(0.0, 1.0)], epsilon=0.05, seed=3, **FAST)
    text = str(info.value)
    assert text.startswith("VIOLATION of the claim ε = 0.05: true ε ≥ ")
    assert "witness pair 'pair[0]'" in text
    assert "with x = 0.0" in text or "with x = 1.0" in text
    assert text.rstrip().endswith("reproduce with dpverify.audit(..., samples=40000, seed=3)")


def test_assert_private_rejects_unknown_options() -> None:
    with pytest.raises(InputError, match="unknown option.*sample_count.*search_samples"):
        dpverify.assert_private(m.laplace, [(0.0, 1.0)], epsilon=0.1, sample_count=10)


def test_assert_theorem_passes_on_holds_and_fails_otherwise() -> None:
    # P(|Lap(1)| > 1) = e^-1 = 0.368: 'at most 1.1 e^-1' holds, 'at most 0.9 e^-1' is violated and
    # 'at most e^-1' (the exact value) cannot be resolved -- except for an unlucky draw, probability <= 2.5 %
    # (seed 1 with 2 000 runs is one: its interval ends at 0.3658 < e^-1; seed 1 with 5 000 runs is not)
    ok = dpverify.assert_theorem(LaplaceTail(t=1.0, factor=1.1), runs=20_000, seed=1, workers=1)
    assert ok.verdict == "holds"
    with pytest.raises(AssertionError, match=r"(?s)^toy Laplace tail .*violated: P <= .*reproduce with .*seed=1\)"):
        dpverify.assert_theorem(LaplaceTail(t=1.0, factor=0.9), runs=20_000, seed=1, workers=1)
    with pytest.raises(AssertionError, match=r"inconclusive: .*runs would resolve it"):
        dpverify.assert_theorem(LaplaceTail(t=1.0, factor=1.0), runs=5_000, seed=1, workers=1)
    with pytest.raises(InputError, match="unknown option.*samples"):
        dpverify.assert_theorem(LaplaceTail(), samples=10)


def test_dp_audit_fixture_passes_a_correct_and_fails_a_buggy_mechanism(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_mechs=MECHANISMS + """
@pytest.mark.dp_audit(samples=40_000, search_samples=20_000, workers=1)
def test_correct(dp_audit):
    result = dp_audit(laplace, [(0.0, 1.0)], epsilon=1.0)
    assert result.samples == 40_000 and not result.violation

@pytest.mark.dp_audit(samples=40_000, search_samples=20_000, workers=1)
def test_buggy(dp_audit, dp_seed):
    dp_audit(too_little_noise, [(0.0, 1.0)], epsilon=1.0)
""")
    result = pytester.runpytest("--strict-markers")
    result.assert_outcomes(passed=1, failed=1)
    seed = zlib.crc32(b"test_mechs.py::test_buggy")
    result.stdout.fnmatch_lines([
        "E * VIOLATION of the claim ε = 1: true ε ≥ *, witness pair 'pair[[]0[]]' direction *",
        "E * P[[]M(x) ∈ S[]] ≥ * of 40000) with x = *",
        f"E * reproduce with dpverify.audit(..., samples=40000, seed={seed})",
        f"E * rerun this test with --dp-seed {seed}",
    ])


def test_dp_seed_is_the_crc32_of_the_node_id_unless_pinned(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_seeds="""
import pytest, zlib

def test_default(dp_seed):
    assert dp_seed == zlib.crc32(b"test_seeds.py::test_default")

@pytest.mark.parametrize("k", [1, 2])
def test_each_parameter_has_its_own(dp_seed, k):
    assert dp_seed == zlib.crc32(f"test_seeds.py::test_each_parameter_has_its_own[{k}]".encode())

@pytest.mark.dp_audit(seed=7)
def test_marker_pins_it(dp_seed, dp_audit):
    assert dp_seed == 7 and dp_audit.seed == 7 and "seed" not in dp_audit.options
""")
    pytester.runpytest().assert_outcomes(passed=4)
    # --dp-seed overrides every test's seed, the marker's too
    pytester.makepyfile(test_override="""
import pytest

def test_plain(dp_seed):
    assert dp_seed == 123

@pytest.mark.dp_audit(seed=7)
def test_marked(dp_seed):
    assert dp_seed == 123
""")
    result = pytester.runpytest("test_override.py", "--dp-seed", "123")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["dpverify: --dp-seed 123 *"])


def test_marker_options_reach_the_audit_and_call_options_win(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_budget=MECHANISMS + """
pytestmark = pytest.mark.dp_audit(samples=30_000, search_samples=10_000, workers=1, alpha=0.01)

def test_module_marker(dp_audit):
    r = dp_audit(laplace, [(0.0, 1.0)], epsilon=1.0)
    assert (r.samples, r.search_samples, r.alpha) == (30_000, 10_000, 0.01)

def test_call_wins(dp_audit):
    r = dp_audit(laplace, [(0.0, 1.0)], epsilon=1.0, samples=20_000)
    assert (r.samples, r.alpha) == (20_000, 0.01)
""")
    pytester.runpytest().assert_outcomes(passed=2)


def test_bad_marker_and_option_are_named(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_bad=MECHANISMS + """
@pytest.mark.dp_audit(40_000)
def test_positional(dp_audit):
    pass

@pytest.mark.dp_audit(sample=40_000)
def test_unknown(dp_audit):
    dp_audit(laplace, [(0.0, 1.0)], epsilon=1.0)
""")
    result = pytester.runpytest()
    result.assert_outcomes(errors=1, failed=1)
    result.stdout.fnmatch_lines(["*takes keyword arguments only*", "*unknown option(s) sample;*"])
    bad = pytester.runpytest("--dp-seed", "-1")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*--dp-seed needs a non-negative integer, got -1*"])


def test_marker_is_registered(pytester: pytest.Pytester) -> None:
    pytester.runpytest("--markers").stdout.fnmatch_lines(["@pytest.mark.dp_audit(seed=None, samples=None, **options)*"])


def test_downstream_example_project(pytester: pytest.Pytester) -> None:
    """The documented example (examples/downstream_project): its correct mechanism passes, its buggy one is a
    strict xfail -- the audit finds the bug, so the example's suite passes."""
    shutil.copytree(EXAMPLE, pytester.path, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, xfailed=1)
    # and the buggy test fails with the witness when xfail is ignored
    strict = pytester.runpytest("-p", "no:cacheprovider", "--runxfail")
    strict.assert_outcomes(passed=1, failed=1)
    seed = zlib.crc32(b"tests/test_privacy.py::test_noisy_sum_keeps_epsilon")  # 3704253893, as its README says
    strict.stdout.fnmatch_lines(["E * witness pair 'add[[]1[]]' *", f"E * rerun this test with --dp-seed {seed}"])
