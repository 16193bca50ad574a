"""Where dpverify's time goes: one call under cProfile, cumulative seconds per phase of an audit.

Used by :mod:`benchmarks.bench_peers` (the sequential verdict, :data:`ANYTIME_PHASES`) and
:mod:`benchmarks.bench_dpsniper` (:func:`dpverify.audit`, :data:`AUDIT_PHASES`).  The call must run in one process
(``workers = 1``) so that the profiler sees every function.

A phase is a function of ``dpverify`` (its name and its file below ``dpverify/``): its seconds are the function's
cumulative time (every call, callees included, recursion counted once), so the table's numbers are what cProfile's
``cumtime`` column shows.  Each phase names the phase it is part of (``parent``); the first phase of a table is the
whole call and the phases whose parent it is are its *top-level* phases, which do not overlap, so that
``other = wall − Σ top-level`` is the time of the call spent nowhere in the table (and the profiler's overhead
outside it).  A phase whose ``parent`` is a tuple lies inside the union of those phases (the mechanism's sampling
batches run in phase 1 and in phase 2).  :func:`missing_functions` names the phases whose function no longer exists,
so that a renamed function fails a test instead of showing zeros.

The *sorting* seconds of a profile are numpy's sort's own time in the whole call (:func:`sorting_seconds`): every
threshold, interval and cell of the event search is read off sorted values, so they say how much of a search is the
sorting of its selection sample, the one primitive whose cost grows faster than the sample.

The *sampler* seconds of a profile (:func:`profile_call` with ``mechanism``) are the cumulative time of the
mechanism's own ``__call__`` (or function) when called by the sampling layer for the audit's batches
(``_sample`` in ``execution/sampling.py``; not the contract probe): CPU seconds that no change to dpverify can
save at this sample count, measured with the profiler's overhead on every Python call the mechanism makes.
"""

from __future__ import annotations

import ast
import cProfile
import pstats
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

#: the dpverify package directory (phases name their files relative to it)
PACKAGE = Path(__file__).resolve().parent.parent / "dpverify"
#: where the sampling layer calls the mechanism: (function, file) -- the sampler's seconds are counted on this edge
SAMPLER_CALLER = ("_sample", "execution/sampling.py")
OTHER = "other"


@dataclass(frozen=True)
class Phase:
    """One row of a phase table: ``key`` (short name, a column header), ``label`` (what it is), the ``function``
    and its ``file`` below ``dpverify/`` whose cumulative time it is, and the key(s) of the phase(s) it is part of
    (``None`` for the first row, the whole call); ``short``: a few words for a table cell."""

    key: str
    label: str
    function: str
    file: str
    parent: str | tuple[str, ...] | None = None
    short: str = ""                 # a few words for a table cell (default: the label)

    @property
    def name(self) -> str:
        return self.short or self.label

    @property
    def parents(self) -> tuple[str, ...]:
        return () if self.parent is None else (self.parent,) if isinstance(self.parent, str) else self.parent


def _search_rows(search: str) -> tuple[Phase, ...]:
    """The rows inside phase 1 (:func:`dpverify.statistical.search_phase.search_phase`, key ``search``): the event
    search and its families, the atom sweep's candidates, the distinct-batch check."""
    S = "statistical/search.py"
    return (
        Phase("distinct", "contract checks: distinct search batches", "check_batches_distinct",
              "statistical/contract.py", search, "distinct-batch check"),
        Phase("events", "event search (search_events)", "search_events", S, search, "event search"),
        Phase("scalar", "threshold / interval / tail / atom events on scalar features", "_scalar_features", S, "events",
              "scalar-feature events"),
        Phase("lr", "logistic-regression score (scikit-learn fit)", "fit_linear_score", "statistical/learned.py", "events", "LR fit"),
        Phase("ratio", "product-ratio score (fit)", "fit_product_ratio", "statistical/cells.py", "events",
              "product-ratio fit"),
        Phase("outcomes", "unions of discrete outcomes", "_outcome_unions", S, "events", "outcome unions"),
        Phase("cells", "unions of cells", "_cell_unions", S, "events", "cell unions"),
        Phase("items", "item events (integer vector outputs)", "item_events", "statistical/items.py", "events",
              "item events"),
        Phase("whitening", "whitening of the noise columns (for the innovations and independent components)",
              "whitening", "statistical/innovations.py", "events", "whitening"),
        Phase("innovations", "innovations (noise mixed by a causal linear map, fit)", "innovation_sum",
              "statistical/innovations.py", "events", "innovations fit"),
        Phase("independent", "independent components (noise mixed by any linear map, FastICA fit)", "independent_sum",
              "statistical/independent.py", "events", "independent-components fit"),
        Phase("dispersion", "dispersion scores (noise scale moving with the input, fit)", "fit_dispersion",
              "statistical/dispersion.py", "events", "dispersion fit"),
        Phase("markov", "Markov scores (a non-linear chain of noisy steps, test and fit)", "fit_markov",
              "statistical/markov.py", "events", "Markov fit"),
        Phase("deeper", "deeper tails beside the best threshold candidates", "with_deeper", "statistical/deeper.py",
              "events", "deeper tails"),
        Phase("fit_cells", "cell partition (fit)", "fit_cells", "statistical/cells.py", "cells", "cell fit"),
        Phase("atoms", "atom-sweep candidates", "atom_candidates", S, search, "atom-sweep candidates"),
    )


#: the phases of :func:`dpverify.audit` (dpverify/statistical/auditor.py)
AUDIT_PHASES: tuple[Phase, ...] = (
    Phase("audit", "whole audit (dpverify.audit)", "audit", "statistical/auditor.py", short="audit"),
    Phase("contract", "contract checks: the rng probe", "contract_probe", "statistical/contract.py", "audit",
          "rng contract probe"),
    Phase("search", "phase 1: search samples, event search, finalists, every pair", "search_phase",
          "statistical/search_phase.py", "audit", "phase 1"),
    *_search_rows("search"),
    Phase("count", "phase 2: fresh samples, counting the finalists' events", "_count_events",
          "statistical/auditor.py", "audit", "phase 2"),
    Phase("sampling", "sampling batches (phases 1 and 2): the mechanism, output checks, counting / hashing",
          "run_batch", "execution/sampling.py", ("search", "count"), "sampling batches"),
)

#: the phases of the sequential verdict (:func:`dpverify.statistical.anytime.audit_anytime`, the betting engine):
#: the checkpoints' event searches on the stream so far (``search_stream``, dpverify/statistical/streams.py), the
#: stream's batches (``run_batch``), the finalists' events counted on them (``joint_counts``) and the bets
#: (``play``, dpverify/statistical/betting.py)
ANYTIME_PHASES: tuple[Phase, ...] = (
    Phase("anytime", "whole verdict (the stream to its stop)", "audit_anytime", "statistical/anytime.py",
          short="verdict"),
    Phase("contract", "contract checks: the rng probe", "contract_probe", "statistical/contract.py", "anytime",
          "rng contract probe"),
    Phase("search", "checkpoint searches: event search on the stream so far, every pair", "search_stream",
          "statistical/streams.py", "anytime", "checkpoint searches"),
    *[p for p in _search_rows("search") if p.key not in ("distinct", "atoms")],   # neither runs in a stream search
    Phase("sampling", "the stream's batches: the mechanism, output checks", "run_batch", "execution/sampling.py",
          "anytime", "sampling batches"),
    Phase("counting", "the finalists' events counted on each batch", "joint_counts", "statistical/streams.py",
          "anytime", "event counts"),
    Phase("bets", "the bets: each finalist's wealth over the ε grid", "play", "statistical/betting.py", "anytime",
          "bets"),
)


#: the label of the ``other`` row, by the key of the table's whole call
OTHER_LABELS: dict[str, str] = {
    "": "other: in no phase above (set-up, bookkeeping, the profiler outside the call)",
    "anytime": "other: distinct-batch checks, bookkeeping, set-up, the profiler outside the call",
}


def check_table(phases: Sequence[Phase]) -> None:
    """Raise ``ValueError`` unless the first phase is the whole call and every other names known parents."""
    if not phases or phases[0].parent is not None:
        raise ValueError("the first phase must be the whole call (parent None)")
    keys = [p.key for p in phases]
    if len(set(keys)) != len(keys) or OTHER in keys:
        raise ValueError(f"phase keys must be unique and not {OTHER!r}: {keys}")
    for p in phases[1:]:
        if not p.parents or any(q not in keys or q == p.key for q in p.parents):
            raise ValueError(f"phase {p.key!r}: unknown parent {p.parent!r}")


def _defined_functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def missing_functions(phases: Sequence[Phase], package: Path = PACKAGE) -> list[str]:
    """``"file:function"`` of every phase whose function is not defined (at any depth) in its file."""
    out = []
    cache: dict[str, set[str]] = {}
    for p in (*phases, Phase("sampler", "", SAMPLER_CALLER[0], SAMPLER_CALLER[1], "x")):
        path = package / p.file
        if p.file not in cache:
            cache[p.file] = _defined_functions(path) if path.is_file() else set()
        if p.function not in cache[p.file]:
            out.append(f"{p.file}:{p.function}")
    return out


def _in_file(filename: str, file: str) -> bool:
    return Path(filename).as_posix().endswith("dpverify/" + file)


def _code_key(mechanism: Any) -> tuple[str, int, str] | None:
    """cProfile's key ``(file, first line, name)`` of the function a call of ``mechanism`` runs, if Python code."""
    fn = mechanism if hasattr(mechanism, "__code__") else getattr(type(mechanism), "__call__", None)
    fn = getattr(fn, "__func__", fn)
    code = getattr(fn, "__code__", None)
    return None if code is None else (code.co_filename, code.co_firstlineno, code.co_name)


def sampler_seconds(stats: dict[Any, Any], mechanism: Any) -> float | None:
    """Cumulative seconds of ``mechanism``'s own code when called by the sampling layer (:data:`SAMPLER_CALLER`),
    from cProfile's ``stats``; ``None`` when its code is not Python (a builtin) or was never called there.  A
    mechanism that is not Python code falls back to every non-dpverify, non-builtin callee of the sampling layer."""
    fname, ffile = SAMPLER_CALLER
    callers = [k for k in stats if k[2] == fname and _in_file(k[0], ffile)]
    if not callers:
        return None
    key = _code_key(mechanism)
    if key is not None and key in stats:
        edges = stats[key][4]
        return float(sum(edges[c][3] for c in callers if c in edges))
    total, seen = 0.0, False
    for k, v in stats.items():
        if k[0] == "~" or "dpverify/" in Path(k[0]).as_posix():
            continue
        for c in callers:
            if c in v[4]:
                total += v[4][c][3]
                seen = True
    return total if seen else None


@dataclass
class Profile:
    """One profiled call: ``wall`` seconds (profiler included), cumulative ``seconds`` of each phase of
    ``phases`` (by key), ``sampler`` seconds (the mechanism's own code, or ``None``)."""

    phases: tuple[Phase, ...]
    wall: float
    seconds: dict[str, float]
    sampler: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    sorting: float = 0.0

    @property
    def whole(self) -> Phase:
        return self.phases[0]

    def children(self, key: str) -> list[Phase]:
        return [p for p in self.phases if p.parents == (key,)]

    def top_level(self) -> list[Phase]:
        return self.children(self.whole.key)

    @property
    def other(self) -> float:
        """``wall`` minus the top-level phases: time in none of them (and the profiler's outside the call)."""
        return self.wall - sum(self.seconds[p.key] for p in self.top_level())

    def depth(self, p: Phase) -> int:
        d = 0
        while p.parent is not None:
            d += 1
            parent = p.parents[0]
            p = next(q for q in self.phases if q.key == parent)
        return d

    def rows(self) -> list[tuple[str, str, float, int]]:
        """``(key, label, seconds, depth)`` in table order (children after their parent), then ``other``."""
        out: list[tuple[str, str, float, int]] = []

        def walk(p: Phase, d: int) -> None:
            out.append((p.key, p.label, self.seconds[p.key], d))
            for c in self.children(p.key):
                walk(c, d + 1)

        walk(self.whole, 0)
        for p in self.phases:   # phases inside a union of phases: after the top-level rows
            if len(p.parents) > 1:
                out.append((p.key, p.label, self.seconds[p.key], 1))
        out.append((OTHER, OTHER_LABELS.get(self.whole.key, OTHER_LABELS[""]), self.other, 1))
        return out

    def leaves(self) -> dict[str, float]:
        """Disjoint parts of ``wall`` (they sum to it): each phase's own time (its seconds less its children's);
        a phase inside a union of phases is taken out of that union's own time, which is reported under the key
        ``"a+b"``; ``other`` (the whole call's own time: a phase inside the whole and another phase takes its
        time out of ``other``, and the key is ``"a+other"``)."""
        own = {p.key: self.seconds[p.key] - sum(self.seconds[c.key] for c in self.children(p.key))
               for p in self.phases[1:]}
        own[OTHER] = self.other
        for p in self.phases:
            if len(p.parents) > 1:
                union = [OTHER if q == self.whole.key else q for q in p.parents]
                own["+".join(union)] = sum(own.pop(q) for q in union) - self.seconds[p.key]
        return own

    def label_of(self, key: str) -> str:
        """A few words naming ``key``, a phase or a part of :meth:`leaves`: a phase with rows inside it stands for
        its own time there (``"event search, rest"``)."""
        def name(k: str) -> str:
            return "other" if k == OTHER else next(p.name for p in self.phases if p.key == k)

        if "+" in key:
            return " and ".join(name(k) for k in key.split("+")) + ", rest"
        return name(key) + (", rest" if key != OTHER and self.children(key) else "")

    def dominant(self) -> tuple[str, float]:
        """The key and seconds of the largest of :meth:`leaves`."""
        return max(self.leaves().items(), key=lambda kv: kv[1])

    def to_dict(self) -> dict[str, Any]:
        key, secs = self.dominant()
        return {"wall": self.wall, "seconds": dict(self.seconds), "other": self.other, "sampler": self.sampler,
                "sorting": self.sorting,
                "leaves": self.leaves(), "dominant": key, "dominant_seconds": secs, **self.extra}


def profile_stats(stats: dict[Any, Any], phases: Sequence[Phase], wall: float, mechanism: Any = None) -> Profile:
    """The :class:`Profile` of cProfile's raw ``stats`` (``pstats.Stats(prof).stats``) of a call of ``wall``
    seconds."""
    check_table(phases)
    seconds = {}
    for p in phases:
        seconds[p.key] = float(sum(v[3] for (f, _, name), v in stats.items()
                                   if name == p.function and _in_file(f, p.file)))
    sampler = sampler_seconds(stats, mechanism) if mechanism is not None else None
    return Profile(tuple(phases), wall, seconds, sampler, sorting=sorting_seconds(stats))


#: cProfile's name of numpy's in-place sort (``np.sort`` copies, then calls it): the builtin whose own time is sorting
NUMPY_SORT = "<method 'sort' of 'numpy.ndarray' objects>"


def sorting_seconds(stats: dict[Any, Any]) -> float:
    """Own seconds of numpy's sort over the whole profiled call (every caller: the event search's columns, features
    and merges, the cells' fit, ``np.unique``), from cProfile's raw ``stats``."""
    return float(sum(v[2] for (f, _, name), v in stats.items() if f == "~" and name == NUMPY_SORT))


def profile_call(fn: Callable[[], Any], phases: Sequence[Phase], mechanism: Any = None) -> tuple[Any, Profile]:
    """Run ``fn()`` under cProfile (in this process: ``fn`` must not sample on other processes, i.e. ``workers =
    1``); its result and the :class:`Profile` of ``phases`` (with the sampler seconds of ``mechanism`` if given)."""
    check_table(phases)
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    try:
        result = fn()
    finally:
        prof.disable()
    wall = time.perf_counter() - t0
    return result, profile_stats(pstats.Stats(prof).stats, phases, wall, mechanism)


def dominance_sentence(dominants: Sequence[str], what: str = "profiled mechanisms") -> str:
    """"The dominant phase is X on 5 of 8 profiled mechanisms, Y on 3." from each profile's dominant label."""
    if not dominants:
        return f"No {what}."
    counts: dict[str, int] = {}
    for d in dominants:
        counts[d] = counts.get(d, 0) + 1
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    first, n = ranked[0]
    rest = "".join(f", {label} on {k}" for label, k in ranked[1:])
    return f"The dominant phase is {first} on {n} of {len(dominants)} {what}{rest}."
