"""Fast tests of benchmarks/profiling.py: the phase tables name functions that exist (a rename fails here instead of
showing zeros in docs/performance.md), the profile of a tiny audit adds up, the disjoint parts and the dominant
phase, the computed sentence."""

from __future__ import annotations

import math

import dpverify
import numpy as np
import pytest

from benchmarks import profiling as pf


def half_noise(x, n, rng):
    """Laplace noise of scale 1/(2ε) for a claim of ε = 1 (a violation), a 3-vector so that every family runs."""
    return np.asarray(x, dtype=np.float64) + rng.laplace(0.0, 0.5, size=(n, 3))


class Shifted:
    """A mechanism class: its ``__call__`` is what the sampler seconds count."""

    def __call__(self, x, n, rng):
        return x + rng.laplace(0.0, 1.0, size=n)


@pytest.mark.parametrize("table", [pf.AUDIT_PHASES, pf.ANYTIME_PHASES], ids=["audit", "anytime"])
def test_phase_tables_name_existing_functions(table):
    pf.check_table(table)
    assert pf.missing_functions(table) == []
    for p in table:
        assert (pf.PACKAGE / p.file).is_file(), p.file
    bogus = (*table, pf.Phase("gone", "renamed away", "no_such_function_xyz", "statistical/search.py", table[0].key))
    assert pf.missing_functions(bogus) == ["statistical/search.py:no_such_function_xyz"]


def test_check_table_rejects_bad_tables():
    whole = pf.Phase("all", "all", "audit", "statistical/auditor.py")
    with pytest.raises(ValueError):
        pf.check_table([pf.Phase("x", "x", "audit", "statistical/auditor.py", "all")])      # no whole first
    with pytest.raises(ValueError):
        pf.check_table([whole, pf.Phase("x", "x", "f", "statistical/auditor.py", "nowhere")])
    with pytest.raises(ValueError):
        pf.check_table([whole, pf.Phase("all", "dup", "f", "statistical/auditor.py", "all")])


@pytest.mark.parametrize("mechanism, pairs", [(half_noise, [(np.zeros(3), np.ones(3))]),
                                              (Shifted(), [(0.0, 1.0), (1.0, 2.0)])], ids=["vector", "class"])
def test_profile_of_a_tiny_audit_adds_up(mechanism, pairs):
    res, prof = pf.profile_call(lambda: dpverify.audit(mechanism, pairs, 1.0, samples=20_000, search_samples=4_000,
                                                      seed=0, workers=1), pf.AUDIT_PHASES, mechanism)
    assert res.epsilon_lower_bound >= 0
    sec = prof.seconds
    assert set(sec) == {p.key for p in pf.AUDIT_PHASES}
    assert all(v >= 0 for v in sec.values()), sec
    assert sec["audit"] > 0 and sec["search"] > 0 and sec["events"] > 0 and sec["sampling"] > 0 and sec["count"] > 0
    top = sum(sec[p.key] for p in prof.top_level())
    assert top <= sec["audit"] + 1e-6 <= prof.wall + 2e-6
    assert prof.other >= 0
    assert sec["events"] <= sec["search"] + 1e-6 and sec["sampling"] <= sec["search"] + sec["count"] + 1e-6
    leaves = prof.leaves()
    assert math.isclose(sum(leaves.values()), prof.wall, rel_tol=1e-9)
    assert all(v >= -1e-3 for v in leaves.values()), leaves        # own times: no child outgrows its parent
    key, secs = prof.dominant()
    assert secs == max(leaves.values()) and prof.label_of(key)
    # the mechanism's own code, as called for the audit's batches (not the contract probe): inside the batches
    assert prof.sampler is not None and 0 < prof.sampler <= sec["sampling"]
    rows = prof.rows()
    assert rows[0][0] == "audit" and rows[0][3] == 0 and rows[-1][0] == pf.OTHER
    assert [r[0] for r in rows if r[3] == 1][:3] == ["contract", "search", "count"]
    d = prof.to_dict()
    assert d["dominant"] == key and d["sampler"] == prof.sampler
    # the event search sorts its selection sample: numpy's sort has own time, inside the search
    assert 0 < prof.sorting <= sec["search"] + sec["count"] + 1e-6 and d["sorting"] == prof.sorting


def test_sorting_seconds_are_numpys_sort_own_time():
    """``sorting_seconds``: numpy's sort's own time over every caller, nothing else (not ``list.sort``, not the
    Python functions calling it)."""
    stats = {("~", 0, pf.NUMPY_SORT): (3, 3, 0.25, 0.25, {}),
             ("~", 0, "<method 'sort' of 'list' objects>"): (1, 1, 0.5, 0.5, {}),
             ("x.py", 1, "f"): (1, 1, 0.125, 0.375, {})}
    assert pf.sorting_seconds(stats) == 0.25
    assert pf.sorting_seconds({}) == 0.0


def _fake(phases, seconds, wall):
    return pf.Profile(tuple(phases), wall, {p.key: seconds.get(p.key, 0.0) for p in phases})


def test_leaves_take_a_phase_of_several_phases_out_of_their_union():
    prof = _fake(pf.AUDIT_PHASES, {"audit": 9.5, "contract": 0.5, "search": 6.0, "events": 3.0, "scalar": 2.0,
                                   "count": 2.0, "sampling": 4.0}, wall=10.0)
    leaves = prof.leaves()
    assert leaves["search+count"] == pytest.approx(6.0 + 2.0 - 3.0 - 4.0)
    assert leaves["events"] == pytest.approx(1.0) and leaves["other"] == pytest.approx(1.5)
    assert sum(leaves.values()) == pytest.approx(10.0)
    assert prof.dominant() == ("sampling", 4.0)
    assert prof.label_of("events") == "event search, rest" and prof.label_of("search+count") == \
        "phase 1 and phase 2, rest"
    # the anytime verdict (betting engine): checkpoint searches, the stream's batches and the bets are disjoint
    # top-level phases; what none of them holds is "other"
    any_ = _fake(pf.ANYTIME_PHASES, {"anytime": 10.0, "search": 5.0, "events": 4.0, "sampling": 3.0, "bets": 1.0},
                 wall=10.0)
    lv = any_.leaves()
    assert lv["search"] == pytest.approx(1.0) and lv["events"] == pytest.approx(4.0)
    assert lv["sampling"] == pytest.approx(3.0) and lv["bets"] == pytest.approx(1.0)
    assert lv["other"] == pytest.approx(1.0) and sum(lv.values()) == pytest.approx(10.0)
    assert any_.dominant() == ("events", 4.0)


def test_dominance_sentence():
    assert pf.dominance_sentence([]) == "No profiled mechanisms."
    s = pf.dominance_sentence(["sampling", "event search", "sampling"], "mechanisms")
    assert s == "The dominant phase is sampling on 2 of 3 mechanisms, event search on 1."
