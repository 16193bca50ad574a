"""Tests of dpverify.suites: loading and validating suite files, resolving mechanisms, pairs, seeds,
selection and running entries (with a fake audit; the real audit runs in tests/test_cli.py)."""

from __future__ import annotations

import functools
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dpverify.suites import loader as loader_mod
from dpverify.suites import runner as suite_mod
from dpverify.errors import InputError, MechanismError, SuiteError
from dpverify.suites import (
    DEFAULT_LEDGER_RUNS,
    Budget,
    Claim,
    Entry,
    build_mechanism,
    build_pairs,
    default_suite_dir,
    default_suites,
    entry_seed,
    load_suite,
    load_suites,
    preflight,
    resolve,
    run_entry,
    run_suites,
    select_entries,
)

DATA = Path(__file__).parent / "data"
SUITES = DATA / "suites"
TINY = SUITES / "tiny.toml"
if str(DATA) not in sys.path:
    sys.path.insert(0, str(DATA))

import mechs  # noqa: E402  (tests/data/mechs.py)

HEAD = '[suite]\nname = "t"\nimport_paths = ["{data}"]\n'.replace("{data}", str(DATA).replace("\\", "/"))
GOOD = """
[[entry]]
id = "a"
kind = "statistical"
mechanism = "mechs:laplace_sum"
params = { epsilon = 1.0 }
claim = { epsilon = 1.0 }
expect = "pass"
pairs = [[0.0, 1.0]]
"""


def write(tmp_path: Path, body: str, name: str = "s.toml", head: str = HEAD) -> Path:
    p = tmp_path / name
    p.write_text(head + body, encoding="utf-8")
    return p


def entry_toml(**over: str | None) -> str:
    """A valid entry with some lines replaced (value None removes the key)."""
    lines = {
        "id": '"e1"',
        "kind": '"statistical"',
        "mechanism": '"mechs:laplace_sum"',
        "params": "{ epsilon = 1.0 }",
        "claim": "{ epsilon = 1.0 }",
        "expect": '"pass"',
        "pairs": "[[0.0, 1.0]]",
    }
    lines.update(over)
    return "\n[[entry]]\n" + "".join(f"{k} = {v}\n" for k, v in lines.items() if v is not None)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> mechs.FakeAudit:
    f = mechs.FakeAudit()
    monkeypatch.setattr(suite_mod, "audit", f)
    return f


# -------------------------------------------------------------------------------------------------
# loading
# -------------------------------------------------------------------------------------------------


def test_load_tiny_suite() -> None:
    s = load_suite(TINY)
    assert s.name == "tiny" and s.default and s.path == TINY
    assert s.description.startswith("Tiny")
    assert [e.id for e in s.entries] == ["laplace", "laplace-class-linf", "rr", "identity"]
    lap, linf, rr, ident = s.entries
    assert lap.name == "tiny/laplace"
    assert lap.claim == Claim(1.0, 0.0)
    assert lap.expect == "pass" and lap.true_epsilon == 1.0 and lap.alpha == 0.001
    assert lap.pairs is not None and lap.pairs[0] == (0.0, 1.0)
    assert isinstance(lap.pairs[0][0], float)
    assert lap.quick == Budget(20000, 5000) and lap.full == Budget(40000, 10000)  # from [suite]
    assert linf.quick == Budget(10000, 4000)  # the entry's own
    assert linf.relation is not None and linf.relation.kind == "linf" and linf.relation.radius == 1.0
    assert linf.input.dtype == np.float64 and linf.random_pairs == 2
    assert isinstance(rr.pairs[0][0], int)
    assert ident.true_epsilon == math.inf
    x0, x1 = ident.pairs[0]
    assert x0.dtype == np.int64 and x1.tolist() == [1, 1]
    assert lap.audit_options() == {"alpha": 0.001}
    assert ident.audit_options() == {}


def test_values_conversion_nan_inf_and_nested(tmp_path: Path) -> None:
    p = write(tmp_path, entry_toml(pairs="[[[1.0, nan], [1.0, inf]], [[[1, 2], [3, 4]], [[1, 2], [3, 5]]], [1, 2.5]]",
                                   alpha="0.1", nan_policy='"outcome"', float_bits="true", finalists="2",
                                   batch_size="1000"))
    e = load_suite(p).entries[0]
    (a0, a1), (m0, m1), (s0, s1) = e.pairs
    assert a0.dtype == np.float64 and math.isnan(a0[1]) and math.isinf(a1[1])
    assert m0.shape == (2, 2) and m0.dtype == np.int64
    assert s0 == 1 and isinstance(s0, int) and s1 == 2.5
    assert e.audit_options() == {"alpha": 0.1, "nan_policy": "outcome", "float_bits": True,
                                 "finalists": 2, "batch_size": 1000}


def test_suite_name_defaults_to_stem_and_default_budgets(tmp_path: Path) -> None:
    p = write(tmp_path, GOOD, name="my-suite.toml", head="")
    s = load_suite(p)
    assert s.name == "my-suite" and not s.default
    e = s.entries[0]
    assert e.quick == Budget(100_000, None) and e.full == Budget(1_000_000, None)


# Each case: entry overrides (or a whole body), then substrings the message must contain.
ENTRY_ERRORS: list[tuple[str, str, list[str]]] = [
    ("unknown key", entry_toml(expected='"pass"'), ["entry 'e1'", "key 'expected'", "did you mean 'expect'"]),
    ("missing claim", entry_toml(claim=None), ["entry 'e1'", "key 'claim'", "missing required key", "epsilon ="]),
    ("missing kind", entry_toml(kind=None), ["entry 'e1'", "key 'kind'", 'kind = "statistical"']),
    ("missing mechanism", entry_toml(mechanism=None), ["entry 'e1'", "key 'mechanism'"]),
    ("missing id", entry_toml(id=None), ["entry #1", "key 'id'", "missing"]),
    ("claim without epsilon", entry_toml(claim="{ delta = 0.1 }"), ["entry 'e1'", "key 'claim.epsilon'"]),
    ("negative epsilon", entry_toml(claim="{ epsilon = -1.0 }"), ["entry 'e1'", "key 'claim.epsilon'", "> 0"]),
    ("bad delta", entry_toml(claim="{ epsilon = 1.0, delta = 1.5 }"), ["entry 'e1'", "key 'claim.delta'"]),
    ("unknown claim key", entry_toml(claim="{ epsilon = 1.0, eps = 2 }"), ["entry 'e1'", "key 'eps'"]),
    ("bad expect", entry_toml(expect='"fail"'), ["entry 'e1'", "key 'expect'", "'fail'", 'expect = "violation"']),
    ("bad expect in a list", entry_toml(expect='["pass", "fail"]'), ["entry 'e1'", "key 'expect'", "'fail'"]),
    ("expect list repeats", entry_toml(expect='["pass", "pass"]'), ["entry 'e1'", "key 'expect'", "listed twice"]),
    ("unsupported kind", entry_toml(kind='"lemma"'), ["entry 'e1'", "key 'kind'", "'lemma'",
                                                         "supported kinds: statistical, exact, em"]),
    ("search on a statistical entry", entry_toml(search='{ restarts = 2 }'),
     ["entry 'e1'", "key 'search'", 'kind = "exact"']),
    ("sensitivity on a statistical entry", entry_toml(sensitivity='1.0'),
     ["entry 'e1'", "key 'sensitivity'", 'kind = "em"']),
    ("em entry with pairs", entry_toml(kind='"em"'), ["entry 'e1'", "key 'pairs'", "em entry takes an input"]),
    ("em entry without input", entry_toml(kind='"em"', pairs=None), ["entry 'e1'", "key 'input'", "missing"]),
    ("search without input", entry_toml(kind='"exact"', search='{ restarts = 2 }'),
     ["entry 'e1'", "key 'search'", "needs an input and a relation"]),
    ("bad search value", entry_toml(kind='"exact"', pairs=None, input="[0.0]",
                                    relation='{ kind = "linf", radius = 1.0 }', search='{ restarts = -1 }'),
     ["entry 'e1'", "key 'search.restarts'"]),
    ("bad import path", entry_toml(mechanism='"mechs.laplace_sum"'), ["entry 'e1'", "key 'mechanism'",
                                                                       "module:attribute"]),
    ("both pairs and input", entry_toml(input="[1.0]", relation='{ kind = "linf", radius = 1.0 }'),
     ["entry 'e1'", "key 'input'", "not both"]),
    ("neither pairs nor input", entry_toml(pairs=None), ["entry 'e1'", "key 'pairs'", "neither", "relation"]),
    ("input without relation", entry_toml(pairs=None, input="[1.0]"), ["entry 'e1'", "key 'relation'"]),
    ("relation without input", entry_toml(pairs=None, relation='{ kind = "l1", radius = 1.0 }'),
     ["entry 'e1'", "key 'input'"]),
    ("unknown relation kind", entry_toml(pairs=None, input="[1.0]", relation='{ kind = "l2", radius = 1.0 }'),
     ["entry 'e1'", "key 'relation.kind'", "'l2'", "linf, l1, add_remove, replace"]),
    ("relation without radius", entry_toml(pairs=None, input="[1.0]", relation='{ kind = "linf" }'),
     ["entry 'e1'", "key 'relation.radius'"]),
    ("unknown relation key", entry_toml(pairs=None, input="[1.0]", relation='{ kind = "replace", radius = 1.0 }'),
     ["entry 'e1'", "key 'radius'", "candidates"]),
    ("random_pairs with pairs", entry_toml(random_pairs="3"), ["entry 'e1'", "key 'random_pairs'"]),
    ("negative random_pairs", entry_toml(pairs=None, input="[1.0]", relation='{ kind = "l1", radius = 1.0 }',
                                         random_pairs="-1"), ["entry 'e1'", "key 'random_pairs'"]),
    ("empty pairs", entry_toml(pairs="[]"), ["entry 'e1'", "key 'pairs'"]),
    ("pair of three", entry_toml(pairs="[[0.0, 1.0, 2.0]]"), ["entry 'e1'", "key 'pairs[0]'", "[x0, x1]"]),
    ("ragged input", entry_toml(pairs="[[[[1, 2], [1]], [[1, 2], [1, 3]]]]"), ["entry 'e1'", "key 'pairs[0][0]'",
                                                                               "ragged"]),
    ("string input", entry_toml(pairs='[["a", "b"]]'), ["entry 'e1'", "key 'pairs[0][0]'", "number"]),
    ("bad budget", entry_toml(quick="{ samples = 0 }"), ["entry 'e1'", "key 'quick.samples'", "positive"]),
    ("unknown budget key", entry_toml(full="{ sample = 10 }"), ["entry 'e1'", "key 'sample'", "'samples'"]),
    ("bad true_epsilon", entry_toml(true_epsilon='"big"'), ["entry 'e1'", "key 'true_epsilon'", '"inf"']),
    ("bad alpha", entry_toml(alpha="1.5"), ["entry 'e1'", "key 'alpha'"]),
    ("bad float_bits", entry_toml(float_bits='"yes"'), ["entry 'e1'", "key 'float_bits'"]),
    ("bad finalists", entry_toml(finalists="0"), ["entry 'e1'", "key 'finalists'"]),
    ("bad id", entry_toml(id='"a/b"'), ["entry #1", "key 'id'", "'a/b'"]),
    ("params not a table", entry_toml(params="3"), ["entry 'e1'", "key 'params'"]),
    ("duplicate id", entry_toml() + entry_toml(), ["entry 'e1'", "key 'id'", "duplicate", "#1 and #2"]),
]


@pytest.mark.parametrize("body, needles", [c[1:] for c in ENTRY_ERRORS], ids=[c[0] for c in ENTRY_ERRORS])
def test_entry_errors_name_file_entry_and_key(tmp_path: Path, body: str, needles: list[str]) -> None:
    p = write(tmp_path, body)
    with pytest.raises(SuiteError) as info:
        load_suite(p)
    msg = str(info.value)
    assert str(p) in msg
    for needle in needles:
        assert needle in msg, (needle, msg)
    assert ";" in msg  # problem; what to write instead


SUITE_ERRORS: list[tuple[str, str, list[str]]] = [
    ("invalid toml", '[suite\nname = "x"\n', ["not valid TOML"]),
    ("no entries", '[suite]\nname = "x"\n', ["no entries", "[[entry]]"]),
    ("unknown top-level key", 'oops = 1\n' + GOOD, ["key 'oops'"]),
    ("unknown suite key", '[suite]\nnam = "x"\n' + GOOD, ["[suite]", "key 'nam'", "did you mean 'name'"]),
    ("bad suite name", '[suite]\nname = "a b"\n' + GOOD, ["[suite]", "key 'name'"]),
    ("bad default", '[suite]\ndefault = "yes"\n' + GOOD, ["[suite]", "key 'default'"]),
    ("bad suite budget", '[suite]\nquick = 5\n' + GOOD, ["[suite]", "key 'quick'"]),
]


@pytest.mark.parametrize("text, needles", [c[1:] for c in SUITE_ERRORS], ids=[c[0] for c in SUITE_ERRORS])
def test_suite_level_errors(tmp_path: Path, text: str, needles: list[str]) -> None:
    p = write(tmp_path, text, head="")
    with pytest.raises(SuiteError) as info:
        load_suite(p)
    assert str(p) in str(info.value)
    for needle in needles:
        assert needle in str(info.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SuiteError, match="no such suite file"):
        load_suite(tmp_path / "nope.toml")
    with pytest.raises(SuiteError, match="no such suite file or directory"):
        load_suites([tmp_path / "nope.toml"])


def test_load_suites_directory_sorted_and_duplicate_names(tmp_path: Path) -> None:
    suites = load_suites([SUITES])
    assert [s.name for s in suites] == ["second", "tiny"]  # second.toml < tiny.toml
    assert [s.name for s in load_suites([TINY, SUITES])] == ["tiny", "second"]  # no file twice
    write(tmp_path, GOOD, name="one.toml", head='[suite]\nname = "same"\n')
    write(tmp_path, GOOD, name="two.toml", head='[suite]\nname = "same"\n')
    with pytest.raises(SuiteError, match="suite name 'same' is also used by"):
        load_suites([tmp_path])
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SuiteError, match="no \\*.toml"):
        load_suites([empty])


def test_default_suites(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    audits = tmp_path / "audits"
    audits.mkdir()
    write(audits, GOOD, name="a.toml", head='[suite]\nname = "a"\n')
    write(audits, GOOD, name="b.toml", head='[suite]\nname = "b"\n')
    assert default_suite_dir(tmp_path) == audits
    assert [s.name for s in default_suites(tmp_path)] == ["a", "b"]  # none marked: all
    write(audits, GOOD, name="b.toml", head='[suite]\nname = "b"\ndefault = true\n')
    assert [s.name for s in default_suites(tmp_path)] == ["b"]
    monkeypatch.chdir(tmp_path)
    assert default_suite_dir() == Path.cwd() / "audits"


def test_default_suite_dir_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loader_mod, "__file__", str(tmp_path / "site" / "dpverify" / "suites" / "loader.py"))
    with pytest.raises(SuiteError, match="pass suite files or directories, or run from a checkout"):
        default_suite_dir(tmp_path)
    checkout = tmp_path / "checkout"
    (checkout / "audits").mkdir(parents=True)
    monkeypatch.setattr(loader_mod, "__file__", str(checkout / "dpverify" / "suites" / "loader.py"))
    assert default_suite_dir(tmp_path) == checkout / "audits"


# -------------------------------------------------------------------------------------------------
# resolving mechanisms
# -------------------------------------------------------------------------------------------------


def test_resolve_ok() -> None:
    assert resolve("mechs:laplace_sum") is mechs.laplace_sum
    assert resolve("mechs:LaplaceSum.__call__") is mechs.LaplaceSum.__call__


def test_resolve_unknown_module() -> None:
    with pytest.raises(SuiteError) as info:
        resolve("no_such_module_xyz.sub:f", where="s.toml: entry 'e'")
    msg = str(info.value)
    assert "s.toml: entry 'e'" in msg and "key 'mechanism'" in msg
    assert "'no_such_module_xyz.sub:f'" in msg and "module 'no_such_module_xyz' not found" in msg
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_resolve_unknown_attribute_suggests() -> None:
    with pytest.raises(SuiteError) as info:
        resolve("mechs:laplace_summ", where="s.toml: entry 'e'")
    msg = str(info.value)
    assert "module 'mechs' has no attribute 'laplace_summ'" in msg and "'laplace_sum'" in msg
    with pytest.raises(SuiteError, match="'mechs:LaplaceSum' has no attribute 'nope'"):
        resolve("mechs:LaplaceSum.nope")


def test_resolve_broken_modules(tmp_path: Path) -> None:
    (tmp_path / "dpv_broken_dep_mod.py").write_text("import no_such_dependency_xyz\n")
    (tmp_path / "dpv_raising_mod.py").write_text("raise ValueError('bad config')\n")
    with pytest.raises(SuiteError, match="importing module 'dpv_broken_dep_mod' failed: No module named"):
        resolve("dpv_broken_dep_mod:f", search_paths=[tmp_path])
    with pytest.raises(SuiteError, match="raised ValueError: bad config"):
        resolve("dpv_raising_mod:f", search_paths=[tmp_path])


def test_unknown_import_path_in_suite_names_entry(tmp_path: Path) -> None:
    p = write(tmp_path, entry_toml(mechanism='"mechs:nope"'))
    e = load_suite(p).entries[0]  # loading does not import
    with pytest.raises(SuiteError) as info:
        build_mechanism(e)
    assert f"{p}: entry 'e1': key 'mechanism'" in str(info.value)
    with pytest.raises(SuiteError, match="entry 'e1'"):
        preflight([e])


def _entry(tmp_path: Path, **over: str | None) -> Entry:
    return load_suite(write(tmp_path, entry_toml(**over))).entries[0]


def test_build_mechanism_function_and_class(tmp_path: Path) -> None:
    m = build_mechanism(_entry(tmp_path))
    assert isinstance(m, functools.partial) and m.func is mechs.laplace_sum and m.keywords == {"epsilon": 1.0}
    c = build_mechanism(_entry(tmp_path, mechanism='"mechs:LaplaceSum"', params="{ epsilon = 0.5 }"))
    assert isinstance(c, mechs.LaplaceSum) and c.epsilon == 0.5
    plain = build_mechanism(_entry(tmp_path, mechanism='"mechs:identity"', params=None))
    assert plain is mechs.identity
    out = c(0.0, 7, np.random.default_rng(0))
    assert out.shape == (7,)


@pytest.mark.parametrize("over, needle", [
    ({"params": "{ epsilon = 1.0, eps = 2 }"}, "does not accept"),
    ({"mechanism": '"mechs:LaplaceSum"', "params": "{ eps = 1.0 }"}, "raised TypeError"),
    ({"mechanism": '"mechs:LaplaceSum"', "params": "{ epsilon = -1.0 }"}, "raised ValueError: epsilon must be > 0"),
    ({"mechanism": '"mechs:NOT_CALLABLE"', "params": None}, "not callable"),
])
def test_build_mechanism_errors(tmp_path: Path, over: dict[str, str | None], needle: str) -> None:
    e = _entry(tmp_path, **over)
    with pytest.raises(SuiteError) as info:
        build_mechanism(e)
    assert needle in str(info.value) and "entry 'e1'" in str(info.value)


# -------------------------------------------------------------------------------------------------
# pairs and seeds
# -------------------------------------------------------------------------------------------------


def test_build_pairs_explicit_and_relation() -> None:
    lap, linf, _, ident = load_suite(TINY).entries
    pairs = build_pairs(lap, 1)
    assert len(pairs) == 1 and (pairs[0].x0, pairs[0].x1) == (0.0, 1.0)
    assert build_pairs(ident, 1)[0].x0.dtype == np.int64
    rel = build_pairs(linf, 123)
    assert len(rel) >= 3
    assert all(np.max(np.abs(np.asarray(p.x0) - np.asarray(p.x1))) <= 1.0 + 1e-12 for p in rel)
    again = build_pairs(linf, 123)
    assert [p.label for p in again] == [p.label for p in rel]
    assert all(np.array_equal(a.x1, b.x1) for a, b in zip(rel, again))


def test_build_pairs_add_remove_and_replace(tmp_path: Path) -> None:
    e = _entry(tmp_path, pairs=None, input="[1, 0, 1]", relation='{ kind = "add_remove", candidates = [0, 1] }')
    pairs = build_pairs(e, 0)
    assert pairs and all(abs(len(p.x0) - len(p.x1)) == 1 for p in pairs)
    r = _entry(tmp_path, pairs=None, input="[1, 0, 1]", relation='{ kind = "replace" }')
    assert all(len(p.x0) == len(p.x1) for p in build_pairs(r, 0))


def test_entry_seed_is_stable_and_distinct() -> None:
    s = entry_seed(0, "tiny", "laplace")
    assert isinstance(s, int) and 0 <= s < 2**32
    assert s == entry_seed(0, "tiny", "laplace")
    assert s == int(np.random.SeedSequence([0, __import__("zlib").crc32(b"tiny/laplace")]).generate_state(1)[0])
    assert s != entry_seed(1, "tiny", "laplace")
    assert s != entry_seed(0, "tiny", "rr") and s != entry_seed(0, "other", "laplace")
    with pytest.raises(SuiteError, match="seed"):
        entry_seed(-1, "tiny", "laplace")


# -------------------------------------------------------------------------------------------------
# selection and running
# -------------------------------------------------------------------------------------------------


def test_select_entries() -> None:
    suites = load_suites([SUITES])
    names = lambda sel: [e.name for e in select_entries(suites, sel)]  # noqa: E731
    assert len(names(None)) == 6
    assert names("tiny/*") == ["tiny/laplace", "tiny/laplace-class-linf", "tiny/rr", "tiny/identity"]
    assert names("laplace*") == ["second/laplace-l1", "tiny/laplace", "tiny/laplace-class-linf"]
    assert names("tiny/rr") == ["tiny/rr"]
    assert names(["rr", "identity"]) == ["tiny/rr", "tiny/identity"]
    with pytest.raises(SuiteError, match="no entry matches the selection 'zzz'"):
        select_entries(suites, "zzz")


def test_seeds_stable_under_selection(fake: mechs.FakeAudit) -> None:
    suites = load_suites([SUITES])
    all_out = {o.name: o.seed for o in run_suites(suites, seed=7)}
    all_calls = [c["seed"] for c in fake.calls]
    assert list(all_out.values()) == all_calls
    fake.calls.clear()
    one = run_suites(suites, seed=7, select="tiny/rr")
    assert [o.name for o in one] == ["tiny/rr"] and one[0].seed == all_out["tiny/rr"]
    assert fake.calls[0]["seed"] == all_out["tiny/rr"]
    # and with a suite loaded alone
    alone = run_suites([load_suite(TINY)], seed=7, select="identity")
    assert alone[0].seed == all_out["tiny/identity"]
    assert len(set(all_out.values())) == len(all_out)


def test_run_entry_passes_budget_and_options(fake: mechs.FakeAudit) -> None:
    lap = load_suite(TINY).entries[0]
    o = run_entry(lap, "quick", 3, workers=2)
    call = fake.calls[-1]
    assert call["name"] == "laplace_sum" and call["epsilon"] == 1.0 and call["delta"] == 0.0
    assert call["samples"] == 20000 and call["search_samples"] == 5000
    assert call["alpha"] == 0.001 and call["workers"] == 2 and call["seed"] == entry_seed(3, "tiny", "laplace")
    assert "finalists" not in call and "nan_policy" not in call
    assert o.outcome == "pass" and o.matched and o.error is None
    assert o.epsilon_lower_bound == pytest.approx(0.9) and o.samples == 20000 and o.search_samples == 5000
    assert o.witness is not None and o.witness["event"] == "out > 0.5" and o.result is not None
    run_entry(lap, "full", 3, None)
    assert fake.calls[-1]["samples"] == 40000 and fake.calls[-1]["search_samples"] == 10000
    with pytest.raises(SuiteError, match="unknown mode"):
        run_entry(lap, "fast", 3, None)


def test_run_entry_without_search_samples_leaves_audit_default(tmp_path: Path, fake: mechs.FakeAudit) -> None:
    run_entry(_entry(tmp_path, quick="{ samples = 10 }"), "quick", 0, None)
    assert fake.calls[-1]["samples"] == 10 and "search_samples" not in fake.calls[-1]


def test_run_entry_violation_and_mismatch(fake: mechs.FakeAudit) -> None:
    ident = load_suite(TINY).entries[3]
    o = run_entry(ident)
    assert o.outcome == "violation" and o.matched and o.epsilon_lower_bound == math.inf
    assert o.to_dict()["epsilon_lower_bound"] == "inf" and o.to_dict()["true_epsilon"] == "inf"
    fake.violating = ()
    o2 = run_entry(ident)
    assert o2.outcome == "pass" and not o2.matched


@pytest.mark.parametrize("exc, text", [
    (InputError("epsilon must be > 0"), "epsilon must be > 0"),
    (MechanismError("mechanism returned 3 rows"), "mechanism returned 3 rows"),
    (ZeroDivisionError("division by zero"), "ZeroDivisionError: division by zero"),
])
def test_run_entry_errors_are_recorded(monkeypatch: pytest.MonkeyPatch, exc: Exception, text: str) -> None:
    monkeypatch.setattr(suite_mod, "audit", mechs.FakeAudit(raise_on={0: exc}))
    o = run_entry(load_suite(TINY).entries[0])
    assert o.outcome == "error" and not o.matched and o.error == text
    assert o.epsilon_lower_bound is None and o.witness is None


def test_crashing_entry_does_not_stop_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = mechs.FakeAudit(raise_on={1: RuntimeError("kaboom")})
    monkeypatch.setattr(suite_mod, "audit", fake)
    seen: list[tuple[str, int, int]] = []
    started: list[str] = []
    outs = run_suites([load_suite(TINY)], on_result=lambda o, i, n: seen.append((o.name, i, n)),
                      on_start=lambda e, i, n: started.append(e.name))
    assert [o.outcome for o in outs] == ["pass", "error", "pass", "violation"]
    assert outs[1].error == "RuntimeError: kaboom"
    assert seen == [(o.name, i, 4) for i, o in enumerate(outs)] and started == [o.name for o in outs]


def test_unresolvable_mechanism_is_an_entry_error(tmp_path: Path, fake: mechs.FakeAudit) -> None:
    o = run_entry(_entry(tmp_path, mechanism='"mechs:gone"'))
    assert o.outcome == "error" and "entry 'e1'" in (o.error or "") and "'gone'" in (o.error or "")
    assert not fake.calls


def test_run_suites_validates_mode_and_seed() -> None:
    with pytest.raises(SuiteError, match="unknown mode"):
        run_suites([load_suite(TINY)], mode="slow")
    with pytest.raises(SuiteError, match="seed"):
        run_suites([load_suite(TINY)], seed=-3)


def test_real_audit_run_entry() -> None:
    """End to end with the real dpverify.audit on the tiny suite (small budgets, one worker)."""
    pytest.importorskip("dpverify.statistical.auditor")
    outs = run_suites([load_suite(TINY)], mode="quick", seed=0, workers=1)
    got: dict[str, Any] = {o.id: (o.outcome, o.matched, o.error) for o in outs}
    assert got == {"laplace": ("pass", True, None), "laplace-class-linf": ("pass", True, None),
                   "rr": ("pass", True, None), "identity": ("violation", True, None)}
    ident = outs[3]
    assert ident.epsilon_lower_bound is not None and ident.epsilon_lower_bound > 1.0
    assert ident.witness is not None and ident.witness["impossible"] is True
    # same seed, same result
    again = run_suites([load_suite(TINY)], mode="quick", seed=0, workers=1, select="identity")
    assert again[0].epsilon_lower_bound == ident.epsilon_lower_bound


# ------------------------------------------------------------------------------------------ builders
BUILT = """
[[entry]]
id = "built-input"
kind = "statistical"
mechanism = "mechs:laplace_sum"
params = { epsilon = 1.0 }
claim = { epsilon = 1.0 }
expect = "pass"
input = { build = "numpy:full", params = { shape = 2, fill_value = 0.5 } }
relation = { kind = "linf", radius = 1.0 }

[[entry]]
id = "built-pairs"
kind = "statistical"
mechanism = "mechs:laplace_sum"
params = { epsilon = 1.0 }
claim = { epsilon = 1.0 }
expect = "pass"
pairs = { build = "mechs:pair_list", params = { shift = 0.5 } }
relation = { kind = "linf", radius = 1.0 }
"""


def test_inputs_and_pairs_built_by_functions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mechs, "pair_list", lambda shift: [(np.zeros(2), np.full(2, shift), "built")],
                        raising=False)
    s = load_suite(write(tmp_path, BUILT))
    by_id = {e.id: e for e in s.entries}
    pairs = build_pairs(by_id["built-input"], seed=0)
    assert np.array_equal(pairs[0].x0, [0.5, 0.5]) and len(pairs) > 3  # the relation's patterns
    (p,) = build_pairs(by_id["built-pairs"], seed=0)
    assert p.label == "built" and np.array_equal(p.x1, [0.5, 0.5])
    # a relation given with pairs validates them
    monkeypatch.setattr(mechs, "pair_list", lambda shift: [(np.zeros(2), np.full(2, 3.0))])
    with pytest.raises(SuiteError, match="key 'pairs'.*exceeds the radius"):
        build_pairs(by_id["built-pairs"], seed=0)


@pytest.mark.parametrize("value,needle", [
    ('{ build = "not a path" }', "key 'pairs.build'"),
    ('{ build = "mechs:x", params = 3 }', "key 'pairs.params'"),
    ('{ build = "mechs:x", other = 1 }', "unknown key in pairs builder"),
])
def test_builder_errors_name_the_key(tmp_path: Path, value: str, needle: str) -> None:
    with pytest.raises(SuiteError, match=needle):
        load_suite(write(tmp_path, entry_toml(pairs=value)))


def test_failing_builder_is_a_suite_error(tmp_path: Path) -> None:
    body = entry_toml(pairs=None, input='{ build = "numpy:full", params = { shape = -1, fill_value = 0.0 } }',
                      relation='{ kind = "linf", radius = 1.0 }')
    (entry,) = load_suite(write(tmp_path, body)).entries
    with pytest.raises(SuiteError, match=r"numpy:full\(\*\*.*raised ValueError"):
        build_pairs(entry, seed=0)


# -- sensitivity and replay entries --------------------------------------------------------------------------
def _sens(**over: str | None) -> str:
    base = {"kind": '"sensitivity"', "mechanism": None, "function": '"numpy:sum"', "params": None,
            "claim": "{ sensitivity = 1.0, norm = \"l1\" }", "pairs": None, "input": "[0.5, 0.2]",
            "relation": '{ kind = "add_remove" }', "search": "{ domain = [0.0, 1.0], examples = 0 }"}
    base.update(over)
    return entry_toml(**base)


SENSITIVITY_ERRORS = [
    ("claim without sensitivity", _sens(claim="{ epsilon = 1.0 }"), ["key 'epsilon'", "sensitivity, norm"]),
    ("claim missing sensitivity", _sens(claim="{ norm = \"l2\" }"), ["claim.sensitivity", "missing"]),
    ("claim sensitivity <= 0", _sens(claim="{ sensitivity = 0.0 }"), ["claim.sensitivity", "> 0"]),
    ("claim sensitivity nan", _sens(claim="{ sensitivity = nan }"), ["claim.sensitivity"]),
    ("unknown norm", _sens(claim='{ sensitivity = 1.0, norm = "l3" }'), ["claim.norm", "l1, l2, linf"]),
    ("no relation", _sens(relation=None), ["key 'relation'", "neighbour relation"]),
    ("no input nor domain", _sens(input=None, search="{ examples = 0 }"), ["key 'input'", "domain"]),
    ("function on a statistical entry", entry_toml(function='"numpy:sum"'), ["key 'function'", "only sensitivity"]),
    ("runs on a sensitivity entry", _sens(runs="3"), ["key 'runs'", "only replay"]),
    ("unknown search key", _sens(search="{ sample = 3 }"), ["search", "sample"]),
]


@pytest.mark.parametrize("body, needles", [c[1:] for c in SENSITIVITY_ERRORS], ids=[c[0] for c in SENSITIVITY_ERRORS])
def test_sensitivity_entry_errors(tmp_path: Path, body: str, needles: list[str]) -> None:
    with pytest.raises(SuiteError) as info:
        load_suite(write(tmp_path, body))
    for needle in needles:
        assert needle in str(info.value), (needle, str(info.value))


def test_sensitivity_and_replay_entries_run(tmp_path: Path) -> None:
    body = _sens(id='"sum"') + _sens(id='"sum-too-small"', claim="{ sensitivity = 0.5 }") + entry_toml(
        id='"replay"', kind='"replay"', mechanism='"algorithms.classic.laplace:Laplace"', claim=None, runs="4",
        params="{ epsilon = 1.0 }", pairs="[[0.0, 1.0], [0.0, 3.0]]", expect='"violation"')
    suite = load_suite(write(tmp_path, body))
    assert suite.entries[2].claim.epsilon is None and suite.entries[2].runs == 4
    outcomes = run_suites([suite])
    assert [o.outcome for o in outcomes] == ["pass", "violation", "violation"]
    assert all(o.matched for o in outcomes[:1]) and outcomes[1].matched is False
    assert outcomes[0].details["max_change"] == pytest.approx(1.0)
    assert outcomes[2].details["witness"]["label"].startswith("pair[1]")


# -- ledger entries -------------------------------------------------------------------------------------------
TESTS = Path(__file__).parent
LEDGER_HEAD = HEAD.replace("import_paths = [", f'import_paths = ["{TESTS.as_posix()}", ')


def _ledger(**over: str | None) -> str:
    base = {"kind": '"ledger"', "mechanism": '"audit_mechs:LedgerRecursion"', "params": "{ epsilon = 1.0 }",
            "claim": "{ epsilon = 1.0 }", "pairs": None, "input": "[0.1, 0.5]"}
    base.update(over)
    return entry_toml(**base)


def test_ledger_entries_run_and_report(tmp_path: Path) -> None:
    import json

    from dpverify import LedgerResult
    from dpverify.reporting.report import format_table, report_dict

    body = (_ledger(id='"ok"', params="{ epsilon = 1.0, delta = 1e-6 }", claim="{ epsilon = 1.0, delta = 1e-6 }",
                    runs="8")
            + _ledger(id='"overspends"', params="{ epsilon = 1.0, overspend = 1.5 }", expect='"violation"')
            + _ledger(id='"delta-on-pure-claim"', params="{ epsilon = 0.5, delta = 1e-6 }", expect='"violation"',
                      input='{ build = "numpy:zeros", params = { shape = 3 } }'))
    suite = load_suite(write(tmp_path, body, head=LEDGER_HEAD))
    ok, over, pure = suite.entries
    assert ok.kind == "ledger" and ok.runs == 8 and over.runs == DEFAULT_LEDGER_RUNS == 20
    assert ok.claim == Claim(1.0, 1e-6) and ok.input.tolist() == [0.1, 0.5]
    outcomes = run_suites([suite])
    assert [o.outcome for o in outcomes] == ["pass", "violation", "violation"]
    assert all(o.matched for o in outcomes)
    assert outcomes[0].details["total_epsilon"] == pytest.approx(1.0)  # the full depth is reached in 8 runs
    assert outcomes[0].samples == 8 and outcomes[0].error is None
    assert outcomes[1].details["total_epsilon"] == pytest.approx(1.5)
    assert outcomes[2].details["total_delta"] == 1e-6 and outcomes[2].details["total_epsilon"] <= 0.5 + 1e-12
    assert isinstance(outcomes[0].result, LedgerResult)
    table = format_table(outcomes)
    assert "Σε=1 " in table and "Σε=1.5" in table and "3/3 entries as expected" in table
    doc = json.loads(json.dumps(report_dict(outcomes, {"mode": "quick", "seed": 0}), allow_nan=False))
    assert doc["entries"][1]["details"]["by_kind"]["count"]["charges"] >= 1
    # one seed, one result
    again = run_suites([suite])
    assert [o.details for o in again] == [o.details for o in outcomes]


LEDGER_ERRORS = [
    ("no input", _ledger(input=None), ["key 'input'", "privacy_ledger(x, rng)"]),
    ("pairs", _ledger(input=None, pairs="[[0.0, 1.0]]"), ["key 'pairs'", "one input"]),
    ("relation", _ledger(relation='{ kind = "add_remove" }'), ["key 'relation'", "one input"]),
    ("random_pairs", _ledger(random_pairs="3"), ["key 'random_pairs'"]),
    ("budget", _ledger(quick="{ samples = 10 }"), ["key 'quick'", "draws no samples", "runs = 20"]),
    ("audit option", _ledger(alpha="0.05"), ["key 'alpha'", "no statistical test"]),
    ("no claim", _ledger(claim=None), ["key 'claim'", "missing required key"]),
    ("sensitivity claim", _ledger(claim="{ sensitivity = 1.0 }"), ["key 'sensitivity'", "epsilon, delta"]),
    ("claim without epsilon", _ledger(claim="{ delta = 1e-6 }"), ["key 'claim.epsilon'"]),
    ("bad delta", _ledger(claim="{ epsilon = 1.0, delta = 2.0 }"), ["key 'claim.delta'"]),
    ("bad runs", _ledger(runs="0"), ["key 'runs'", "integer >= 1", "runs = 20"]),
    ("search", _ledger(search="{ restarts = 2 }"), ["key 'search'"]),
    ("utilities", _ledger(utilities="[1.0]"), ["key 'utilities'"]),
    ("unknown key", _ledger(run="3"), ["key 'run'", "did you mean 'runs'"]),
]


@pytest.mark.parametrize("body, needles", [c[1:] for c in LEDGER_ERRORS], ids=[c[0] for c in LEDGER_ERRORS])
def test_ledger_entry_errors(tmp_path: Path, body: str, needles: list[str]) -> None:
    p = write(tmp_path, body, head=LEDGER_HEAD)
    with pytest.raises(SuiteError) as info:
        load_suite(p)
    msg = str(info.value)
    assert f"{p}: entry 'e1'" in msg and ";" in msg
    for needle in needles:
        assert needle in msg, (needle, msg)


def test_ledger_mechanism_errors(tmp_path: Path) -> None:
    no_ledger = load_suite(write(tmp_path, _ledger(mechanism='"audit_mechs:laplace"', params=None),
                                 head=LEDGER_HEAD)).entries[0]
    with pytest.raises(SuiteError, match=r"entry 'e1': key 'mechanism': audit_mechs:laplace has no "
                                         r"privacy_ledger\(x, rng\) method"):
        build_mechanism(no_ledger)
    with pytest.raises(SuiteError, match="privacy_ledger"):
        preflight([no_ledger])
    params_on_function = load_suite(write(tmp_path, _ledger(mechanism='"audit_mechs:laplace"'),
                                          head=LEDGER_HEAD)).entries[0]
    with pytest.raises(SuiteError, match="key 'params': audit_mechs:laplace is not a class"):
        build_mechanism(params_on_function)
    bad_params = load_suite(write(tmp_path, _ledger(params="{ eps = 1.0 }"), head=LEDGER_HEAD)).entries[0]
    with pytest.raises(SuiteError, match="key 'params'.*unexpected keyword"):
        build_mechanism(bad_params)
    # a privacy_ledger that raises is an entry error naming the input, and the run goes on
    raising = load_suite(write(tmp_path, _ledger(params="{ levels = 0 }"), head=LEDGER_HEAD)).entries[0]
    out = run_entry(raising)
    assert out.outcome == "error" and not out.matched
    assert "privacy_ledger raised ValueError" in out.error and "[0.1, 0.5]" in out.error
