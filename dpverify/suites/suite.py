"""Audit suites: TOML files that say what to check, on which inputs, with which claim and expectation.

A suite file holds one ``[suite]`` table and any number of ``[[entry]]`` tables::

    [suite]
    name = "classic"                    # default: the file's stem
    description = "Classic mechanisms and their broken twins"
    default = true                      # part of the default ``dpverify run`` (see below)
    import_paths = [".."]               # optional: directories (relative to this file) searched
                                        # when importing the mechanisms of this suite
    quick = { samples = 100000 }        # optional: budgets used by entries that give none
    full  = { samples = 2000000 }

    [[entry]]
    id = "laplace"                                   # unique within the suite
    kind = "statistical"                             # statistical | exact | em | sensitivity | replay
                                                     # | ledger | theorem (see below)
    mechanism = "algorithms.classic.laplace:Laplace" # "module:attribute"
    params = { epsilon = 0.1 }                       # a class is instantiated with them,
                                                     # a function wrapped with functools.partial
    claim = { epsilon = 0.1, delta = 0.0 }           # delta optional (0)
    expect = "pass"                                  # "pass" or "violation"
    true_epsilon = 0.1                               # optional float or "inf"
    description = "..."                              # optional
    pairs = [[0.0, 1.0]]                             # EITHER explicit pairs [x0, x1] ...
    # input = [1.0, 1.0]                             # ... OR an input and a neighbour relation
    # relation = { kind = "linf", radius = 1.0 }     # linf | l1 | add_remove | replace (+ candidates)
    # random_pairs = 0                               # extra seeded random pairs from the relation
    # input = { build = "pkg.mod:make_graph", params = { n = 4 } }   # an input built by a function
    # pairs = { build = "pkg.mod:worst_pairs", params = {} }         # pairs built by a function; a
                                                     # relation given with pairs checks every pair
    alpha = 0.05                                     # optional audit options: alpha, nan_policy,
                                                     # float_bits, finalists, batch_size
    quick = { samples = 100000, search_samples = 50000 }
    full  = { samples = 2000000, search_samples = 500000 }

    [[entry]]
    id = "dpm-ledger"
    kind = "ledger"                                  # the privacy charges one run records, recomposed
    mechanism = "algorithms.dpm.dpm:DPM"             # instances have privacy_ledger(x, rng)
    params = { epsilon = 1.0 }
    input = [0.1, 0.4, 0.5]                          # or { build = "module:function", params = {...} }
    claim = { epsilon = 1.0, delta = 1e-6 }          # the claimed total budget
    expect = "pass"
    runs = 20                                        # optional: independent runs (default 20)

Kinds.  ``statistical``: the black-box audit (:func:`dpverify.audit`) with the entry's budget.  ``exact``: the
mechanism's exact output law (``log_pmf``/``pmf``) on the pairs (:func:`dpverify.exact.exact_audit`), or -- with
``search = { base_radius = 2.0, restarts = 8, random_pairs = 16, polish = true, domain = [0, 1], grid = 21,
max_evaluations = 5000 }`` (every key optional) and an ``input`` with a ``relation`` -- the worst pair found by
:func:`dpverify.code_checks.worst_pair.worst_pair_search`; budgets do not apply.  ``em``: the sampler's frequencies against
``softmax(ε·u/(2Δu))`` (:func:`dpverify.exact.em_check.check_exponential_mechanism`) with ``input`` (passed to the
sampler), optional ``utilities`` (default: the input) and ``sensitivity`` (default 1); ``quick``/``full`` give
the samples; ``claim.epsilon`` is the ε the sampler claims.  ``ledger``: the charges the mechanism's
``privacy_ledger(x, rng)`` records on ``input`` in ``runs`` runs, recomposed by basic composition against the
claim (:func:`dpverify.code_checks.ledger.check_ledger`); it takes no pairs, relation or budgets.

    [[entry]]
    id = "laplace-tail"
    kind = "theorem"                                 # a utility theorem checked by Monte Carlo
    mechanism = "algorithms.theorems.private_mst:LaplaceAccuracy"   # the theorem class (dpverify.theorems.check)
    params = { epsilon = 1.0, k = 4 }                # its keyword parameters
    sweep = { param = "gamma", values = [0.1, 0.5] } # optional: one parameter swept (a plot per entry)
    expect = "holds"                                 # "holds" | "violated" | "inconclusive"
    quick = { samples = 2000 }                       # runs per sweep point

``theorem``: the theorem object's Monte Carlo check (:func:`dpverify.theorems.check.check_theorem`, or
:func:`~dpverify.theorems.check.check_sweep` with each point at ``alpha / len(values)``); the outcome is the verdict
(``holds`` / ``violated`` / ``inconclusive``); it takes no claim (the theorem states its bound), pairs, input
or relation.

Lists of numbers become numpy arrays (``int64`` when every element is an integer, else ``float64``);
scalars stay Python ``int``/``float``; TOML ``nan``/``inf`` are allowed.

Inputs that TOML cannot spell (a weighted graph, say) are built by a function: ``input`` or ``pairs`` may be
a table ``{ build = "module:attribute", params = {...} }``; the callable is imported like a mechanism and
called with ``params`` (lists become arrays).  A ``pairs`` builder returns ``(x0, x1)`` or
``(x0, x1, label)`` tuples.  A ``relation`` given together with ``pairs`` validates every pair (an entry
whose pairs are not neighbours under its relation is an error, not an audit).

Everything is validated when the file is loaded: an unknown key, a missing key, a bad value, a duplicate
id, both or neither of ``pairs``/``input``... raise :class:`~dpverify.errors.SuiteError` naming the file,
the entry and the key, and what to write instead.  Import paths are resolved by :func:`resolve` (again a
``SuiteError``, never a raw ``ImportError``).

Running: :func:`run_entry` audits one entry with the budget of the mode (``"quick"`` or ``"full"``) and a
seed derived from the run seed, the suite name and the entry id only (:func:`entry_seed`), so selecting,
adding or reordering entries never changes another entry's result.  An entry that raises is recorded
as outcome ``"error"`` and the run goes on.
"""

from __future__ import annotations

import difflib
import fnmatch
import functools
import importlib
import inspect
import math
import re
import sys
import time
import tomllib
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dpverify.errors import DPVerifyError, SuiteError
from dpverify.jsonsafe import json_clean, json_float

if TYPE_CHECKING:  # result.py imports dpverify.neighbours; keep this module importable on its own
    from dpverify.neighbours import Pair
    from dpverify.statistical.result import AuditResult

__all__ = [
    "SUPPORTED_KINDS",
    "EXPECTATIONS",
    "RELATION_KINDS",
    "MODES",
    "Budget",
    "Claim",
    "Relation",
    "Builder",
    "Entry",
    "Suite",
    "EntryOutcome",
    "load_suite",
    "load_suites",
    "default_suite_dir",
    "default_suites",
    "resolve",
    "build_mechanism",
    "build_pairs",
    "entry_seed",
    "select_entries",
    "preflight",
    "run_entry",
    "not_run_outcome",
    "run_suites",
    "audit",
]

SUPPORTED_KINDS: tuple[str, ...] = ("statistical", "exact", "em", "sensitivity", "replay", "ledger", "theorem")
#: Norms a sensitivity claim can be made in.
NORMS: tuple[str, ...] = ("l1", "l2", "linf")
EXPECTATIONS: tuple[str, ...] = ("pass", "violation")
#: What a ``theorem`` entry may expect (the verdicts of :mod:`dpverify.theorems.check`).
THEOREM_EXPECTATIONS: tuple[str, ...] = ("holds", "violated", "inconclusive")
RELATION_KINDS: tuple[str, ...] = ("linf", "l1", "add_remove", "replace")
MODES: tuple[str, ...] = ("quick", "full")

#: Runs per pair of a replay entry that gives no ``runs``.
DEFAULT_REPLAY_RUNS = 32
#: Runs of a ledger entry that gives no ``runs`` (the default of :func:`dpverify.code_checks.ledger.check_ledger`).
DEFAULT_LEDGER_RUNS = 20

#: Budgets of entries (and suites) that name none.
DEFAULT_BUDGETS: dict[str, tuple[int, int | None]] = {
    "quick": (100_000, None),
    "full": (1_000_000, None),
}

_SUITE_KEYS = ("name", "description", "default", "import_paths", "quick", "full")
_ENTRY_KEYS = (
    "id", "kind", "mechanism", "params", "claim", "expect", "true_epsilon", "description",
    "pairs", "input", "relation", "random_pairs", "search", "utilities", "sensitivity",
    "alpha", "nan_policy", "float_bits", "finalists", "batch_size",
    "quick", "full", "function", "runs", "sweep",
)
_REQUIRED_ENTRY_KEYS = ("id", "kind", "mechanism", "claim", "expect")
_AUDIT_OPTION_KEYS = ("alpha", "nan_policy", "float_bits", "finalists", "batch_size")
_ID_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+\-]*$")
_IMPORT_RE = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


# --------------------------------------------------------------------------------------------------
# data model
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Budget:
    """Sample budget of one mode: fresh samples per input and samples of the event search."""

    samples: int
    search_samples: int | None = None


@dataclass(frozen=True)
class Claim:
    """The claim under audit: (epsilon, delta)-DP, or (``sensitivity`` entries) a sensitivity Δ in ``norm``.

    A ``replay`` entry may state no claim: it checks the sensitivities its mechanism declares at every step.
    """

    epsilon: float | None
    delta: float = 0.0
    sensitivity: float | None = None
    norm: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"epsilon": self.epsilon, "delta": self.delta}
        if self.sensitivity is not None:
            out.update(sensitivity=self.sensitivity, norm=self.norm)
        return out

    def __str__(self) -> str:
        if self.sensitivity is not None:
            return f"Δ={self.sensitivity:g} ({self.norm})"
        if self.epsilon is None:
            return "declared step sensitivities"
        return f"ε={self.epsilon:g}" + (f" δ={self.delta:g}" if self.delta > 0 else "")


@dataclass(frozen=True, eq=False)
class Relation:
    """A neighbour relation named by a suite entry (see :mod:`dpverify.neighbours`)."""

    kind: str
    radius: float | None = None
    candidates: tuple[Any, ...] | None = None

    def build(self) -> Any:
        """The :mod:`dpverify.neighbours` relation object."""
        from dpverify import neighbours

        if self.kind == "linf":
            return neighbours.LInfNeighbours(self.radius)
        if self.kind == "l1":
            return neighbours.L1Neighbours(self.radius)
        cands = None if self.candidates is None else list(self.candidates)
        if self.kind == "add_remove":
            return neighbours.AddRemoveOne(candidates=cands)
        if self.kind == "replace":
            return neighbours.ReplaceOne(candidates=cands)
        raise SuiteError(f"unknown relation kind {self.kind!r}; use one of {', '.join(RELATION_KINDS)}")


@dataclass(frozen=True, eq=False)
class Builder:
    """``{ build = "module:attribute", params = {...} }``: a suite value computed by a function."""

    build: str
    params: dict[str, Any]

    def __call__(self, where: str, search_paths: Sequence[str | Path] = ()) -> Any:
        fn = resolve(self.build, where=where, search_paths=search_paths)
        if not callable(fn):
            raise SuiteError(f"{where}: {self.build} is a {type(fn).__name__}, not a callable builder")
        try:
            return fn(**self.params)
        except DPVerifyError:
            raise
        except Exception as exc:  # noqa: BLE001 -- a failing builder is a suite error, named
            raise SuiteError(f"{where}: {self.build}(**{self.params!r}) raised {type(exc).__name__}: {exc}; "
                             f"fix the builder's params") from None


@dataclass(frozen=True, eq=False)
class Entry:
    """One validated ``[[entry]]`` of a suite file.

    Either ``pairs`` (explicit pairs ``(x0, x1)`` or a :class:`Builder`; ``relation``, if set, validates them)
    or ``input`` (a value or a :class:`Builder`) with ``relation``.
    Audit options left as ``None`` take :func:`dpverify.audit`'s defaults.
    """

    suite: str
    path: Path
    id: str
    kind: str
    mechanism: str
    params: dict[str, Any]
    claim: Claim
    expect: str
    quick: Budget
    full: Budget
    true_epsilon: float | None = None
    description: str = ""
    pairs: tuple[tuple[Any, Any], ...] | Builder | None = None
    input: Any = None
    relation: Relation | None = None
    random_pairs: int = 0
    search: dict[str, Any] | None = None
    utilities: Any = None
    sensitivity: float | None = None
    alpha: float | None = None
    nan_policy: str | None = None
    float_bits: bool | None = None
    finalists: int | None = None
    batch_size: int | None = None
    import_paths: tuple[Path, ...] = ()
    runs: int = DEFAULT_REPLAY_RUNS
    sweep: tuple[str, tuple[Any, ...]] | None = None

    @property
    def name(self) -> str:
        """``"suite/id"``, unique within a run."""
        return f"{self.suite}/{self.id}"

    @property
    def where(self) -> str:
        """Location used in error messages: ``"<file>: entry '<id>'"``."""
        return f"{self.path}: entry '{self.id}'"

    def budget(self, mode: str) -> Budget:
        """The budget of ``mode`` (``"quick"`` or ``"full"``)."""
        if mode == "quick":
            return self.quick
        if mode == "full":
            return self.full
        raise SuiteError(f"unknown mode {mode!r}; use 'quick' or 'full'")

    def audit_options(self) -> dict[str, Any]:
        """The optional audit keyword arguments this entry sets (the others keep audit's defaults)."""
        opts: dict[str, Any] = {}
        for key in _AUDIT_OPTION_KEYS:
            value = getattr(self, key)
            if value is not None:
                opts[key] = value
        return opts


@dataclass(frozen=True, eq=False)
class Suite:
    """One suite file: its name, description, path, entries, and whether it is in the default run."""

    name: str
    description: str
    path: Path
    entries: tuple[Entry, ...]
    default: bool = False

    def __len__(self) -> int:
        return len(self.entries)


@dataclass(frozen=True, eq=False)
class EntryOutcome:
    """Result of running one entry.

    ``outcome`` is ``"pass"`` (no violation detected at this budget -- not a proof of privacy),
    ``"violation"``, ``"error"`` (the entry could not be audited; ``error`` says why) or ``"not-run"``
    (the run was interrupted first).  ``matched`` is ``outcome == expectation``.
    """

    suite: str
    id: str
    kind: str
    mechanism: str
    claim: Claim
    expectation: str
    outcome: str
    matched: bool
    epsilon_lower_bound: float | None
    true_epsilon: float | None
    samples: int | None
    search_samples: int | None
    seed: int
    seconds: float
    witness: dict[str, Any] | None = None
    error: str | None = None
    details: dict[str, Any] | None = None
    result: Any = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return f"{self.suite}/{self.id}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (``inf``/``nan`` as strings), the per-entry record of ``report.json``."""
        return {
            "suite": self.suite,
            "id": self.id,
            "kind": self.kind,
            "mechanism": self.mechanism,
            "claim": {"epsilon": json_float(self.claim.epsilon), "delta": json_float(self.claim.delta)},
            "expectation": self.expectation,
            "outcome": self.outcome,
            "matched": self.matched,
            "epsilon_lower_bound": json_float(self.epsilon_lower_bound),
            "true_epsilon": json_float(self.true_epsilon),
            "samples": self.samples,
            "search_samples": self.search_samples,
            "seed": self.seed,
            "seconds": round(self.seconds, 6),
            "witness": json_clean(self.witness),
            "error": self.error,
            "details": json_clean(self.details),
        }


# --------------------------------------------------------------------------------------------------
# loading and validation
# --------------------------------------------------------------------------------------------------


def _err(where: str, key: str | None, problem: str, fix: str) -> SuiteError:
    k = f" key '{key}':" if key else ""
    return SuiteError(f"{where}:{k} {problem}; {fix}")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _check_keys(table: dict[str, Any], allowed: Sequence[str], where: str, what: str) -> None:
    for key in table:
        if key not in allowed:
            close = difflib.get_close_matches(key, allowed, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            raise _err(where, key, f"unknown key in {what}", f"{hint}allowed keys: {', '.join(allowed)}")


def _convert_value(v: Any, where: str, key: str) -> Any:
    """Suite value -> audit input: lists become int64/float64 arrays, scalars stay Python numbers."""
    if isinstance(v, list):
        try:
            arr = np.array(v)
        except ValueError as exc:
            raise _err(where, key, f"ragged nested list ({exc})",
                       "every row of a nested list must have the same length") from None
        if arr.dtype.kind in "iu":
            return arr.astype(np.int64)
        if arr.dtype.kind == "f":
            return arr.astype(np.float64)
        if arr.dtype.kind == "b":
            return arr
        raise _err(where, key, f"list of {arr.dtype.name if arr.dtype.kind != 'O' else 'mixed values'} "
                   "is not a numeric input",
                   "write numbers (integers become int64 arrays, floats float64; nan/inf allowed), "
                   "with nested lists of equal lengths")
    if isinstance(v, (bool, int, float)):
        return v
    if isinstance(v, dict):
        return {k: _convert_value(x, where, f"{key}.{k}") for k, x in v.items()}
    raise _err(where, key, f"value {v!r} is not numeric", "write a number or a list of numbers")


def _budget(value: Any, where: str, key: str, fallback: Budget) -> Budget:
    if value is None:
        return fallback
    if not isinstance(value, dict):
        raise _err(where, key, f"expected a table, got {value!r}",
                   f"write {key} = {{ samples = 100000, search_samples = 50000 }}")
    _check_keys(value, ("samples", "search_samples"), where, f"'{key}'")
    samples = value.get("samples", fallback.samples)
    search = value.get("search_samples", fallback.search_samples)
    if not _is_int(samples) or samples < 1:
        raise _err(where, f"{key}.samples", f"expected a positive integer, got {samples!r}",
                   "write e.g. samples = 100000")
    if search is not None and (not _is_int(search) or search < 1):
        raise _err(where, f"{key}.search_samples", f"expected a positive integer, got {search!r}",
                   "write e.g. search_samples = 50000, or leave it out for audit's default")
    return Budget(samples=samples, search_samples=search)


def _sensitivity_claim(value: Any, where: str) -> Claim:
    fix = 'write claim = { sensitivity = 1.0, norm = "l1" } (norm: l1, l2 or linf; default l1)'
    if not isinstance(value, dict):
        raise _err(where, "claim", f"expected a table, got {value!r}", fix)
    _check_keys(value, ("sensitivity", "norm"), where, "'claim' of a sensitivity entry")
    if "sensitivity" not in value:
        raise _err(where, "claim.sensitivity", "missing", fix)
    sens = value["sensitivity"]
    if not _is_number(sens) or not (0 < sens < math.inf):
        raise _err(where, "claim.sensitivity", f"expected a finite number > 0, got {sens!r}", fix)
    norm = value.get("norm", "l1")
    if norm not in NORMS:
        raise _err(where, "claim.norm", f"unknown norm {norm!r}", f"use one of: {', '.join(NORMS)}")
    return Claim(epsilon=None, sensitivity=float(sens), norm=norm)


def _claim(value: Any, where: str, kind: str = "statistical") -> Claim:
    if kind == "sensitivity":
        return _sensitivity_claim(value, where)
    if kind == "replay" and value is None:
        return Claim(epsilon=None)
    fix = "write claim = { epsilon = 0.5 } or claim = { epsilon = 0.5, delta = 1e-6 }"
    if not isinstance(value, dict):
        raise _err(where, "claim", f"expected a table, got {value!r}", fix)
    _check_keys(value, ("epsilon", "delta"), where, "'claim'")
    if "epsilon" not in value:
        raise _err(where, "claim.epsilon", "missing", fix)
    eps = value["epsilon"]
    if not _is_number(eps) or not (0 < eps < math.inf):
        raise _err(where, "claim.epsilon", f"expected a finite number > 0, got {eps!r}", fix)
    delta = value.get("delta", 0.0)
    if not _is_number(delta) or not (0 <= delta < 1):
        raise _err(where, "claim.delta", f"expected a number in [0, 1), got {delta!r}", fix)
    return Claim(epsilon=float(eps), delta=float(delta))


def _relation(value: Any, where: str) -> Relation:
    fix_kind = ('write relation = { kind = "linf", radius = 1.0 } (kinds: linf, l1 with radius; '
                'add_remove, replace with optional candidates = [...])')
    if not isinstance(value, dict):
        raise _err(where, "relation", f"expected a table, got {value!r}", fix_kind)
    kind = value.get("kind")
    if kind is None:
        raise _err(where, "relation.kind", "missing", fix_kind)
    if kind not in RELATION_KINDS:
        raise _err(where, "relation.kind", f"unknown relation kind {kind!r}",
                   f"use one of: {', '.join(RELATION_KINDS)}")
    if kind in ("linf", "l1"):
        _check_keys(value, ("kind", "radius"), where, f"relation '{kind}'")
        radius = value.get("radius")
        if radius is None:
            raise _err(where, "relation.radius", f"missing (relation '{kind}' needs a radius)",
                       f'write relation = {{ kind = "{kind}", radius = 1.0 }}')
        if not _is_number(radius) or not (0 < radius < math.inf):
            raise _err(where, "relation.radius", f"expected a finite number > 0, got {radius!r}",
                       f'write relation = {{ kind = "{kind}", radius = 1.0 }}')
        return Relation(kind=kind, radius=float(radius))
    _check_keys(value, ("kind", "candidates"), where, f"relation '{kind}'")
    cands = value.get("candidates")
    if cands is None:
        return Relation(kind=kind)
    if not isinstance(cands, list) or not cands:
        raise _err(where, "relation.candidates", f"expected a non-empty list, got {cands!r}",
                   "write candidates = [0.0, 1.0] (records that may be added or substituted)")
    return Relation(kind=kind, candidates=tuple(_convert_value(c, where, "relation.candidates")
                                                 for c in cands))


def _builder(value: dict[str, Any], where: str, key: str) -> Builder:
    fix = f'write {key} = {{ build = "module:function", params = {{ ... }} }}'
    _check_keys(value, ("build", "params"), where, f"{key} builder")
    target = value.get("build")
    if not isinstance(target, str) or not _IMPORT_RE.match(target):
        raise _err(where, f"{key}.build", f"expected an import path \"module:attribute\", got {target!r}", fix)
    params = value.get("params", {})
    if not isinstance(params, dict):
        raise _err(where, f"{key}.params", f"expected a table, got {params!r}", fix)
    return Builder(target, {k: _convert_value(v, where, f"{key}.params.{k}") if isinstance(v, list) else v
                            for k, v in params.items()})


def _value_or_builder(value: Any, where: str, key: str) -> Any:
    """A suite value: a table is a :class:`Builder`, anything else a converted value."""
    return _builder(value, where, key) if isinstance(value, dict) else _convert_value(value, where, key)


def _pairs(value: Any, where: str) -> tuple[tuple[Any, Any], ...] | Builder:
    if isinstance(value, dict):
        return _builder(value, where, "pairs")
    fix = "write pairs = [[x0, x1], ...], e.g. pairs = [[0.0, 1.0]] or pairs = [[[1, 2], [1, 3]]]"
    if not isinstance(value, list) or not value:
        raise _err(where, "pairs", f"expected a non-empty list of [x0, x1], got {value!r}", fix)
    out = []
    for i, p in enumerate(value):
        if not isinstance(p, list) or len(p) != 2:
            raise _err(where, f"pairs[{i}]", f"expected a list [x0, x1] of two inputs, got {p!r}", fix)
        out.append((_convert_value(p[0], where, f"pairs[{i}][0]"),
                    _convert_value(p[1], where, f"pairs[{i}][1]")))
    return tuple(out)


def _true_epsilon(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, str) and value.strip().lower() in ("inf", "+inf", "infinity"):
        return math.inf
    if _is_number(value) and value >= 0:
        return float(value)
    raise _err(where, "true_epsilon", f"expected a number >= 0 or \"inf\", got {value!r}",
               'write true_epsilon = 0.1 or true_epsilon = "inf", or leave it out when unknown')


def _entry(raw: Any, index: int, suite: str, path: Path, budgets: dict[str, Budget],
           import_paths: tuple[Path, ...]) -> Entry:
    where = f"{path}: entry #{index + 1}"
    if not isinstance(raw, dict):
        raise _err(where, None, "is not a table", "write each entry as an [[entry]] table")
    eid = raw.get("id")
    if eid is not None:
        if not isinstance(eid, str) or not _ID_RE.match(eid):
            raise _err(where, "id", f"invalid id {eid!r}",
                       "use letters, digits and _ . + - (no spaces or '/'), e.g. id = \"laplace-eps1\"")
        where = f"{path}: entry '{eid}'"
    _check_keys(raw, _ENTRY_KEYS, where, "[[entry]]")
    raw = _function_alias(raw, where)
    for key in _REQUIRED_ENTRY_KEYS:
        if key == "claim" and raw.get("kind") in ("replay", "theorem"):
            continue  # a replay checks the sensitivities its mechanism declares; a theorem states its own bound
        if key not in raw:
            examples = {
                "id": 'id = "laplace"',
                "kind": 'kind = "statistical"',
                "mechanism": 'mechanism = "algorithms.classic.laplace:Laplace"',
                "claim": "claim = { epsilon = 0.1, delta = 0.0 }",
                "expect": 'expect = "pass"',
            }
            raise _err(where, key, "missing required key", f"add {examples[key]}")
    kind = raw["kind"]
    if kind not in SUPPORTED_KINDS:
        raise _err(where, "kind", f"kind {kind!r} is not supported",
                   f"supported kinds: {', '.join(SUPPORTED_KINDS)}")
    mech = raw["mechanism"]
    if not isinstance(mech, str) or not _IMPORT_RE.match(mech):
        raise _err(where, "mechanism", f"expected an import path \"module:attribute\", got {mech!r}",
                   'write e.g. mechanism = "algorithms.classic.laplace:Laplace"')
    params = raw.get("params", {})
    if not isinstance(params, dict):
        raise _err(where, "params", f"expected a table, got {params!r}", "write params = { epsilon = 0.1 }")
    params = {k: _convert_value(v, where, f"params.{k}") if isinstance(v, list) else v
              for k, v in params.items()}
    expect = raw["expect"]
    if kind == "theorem" and expect not in THEOREM_EXPECTATIONS:
        raise _err(where, "expect", f"unknown expectation {expect!r} for a theorem entry",
                   'write expect = "holds", "violated" or "inconclusive" (the verdict measured)')
    if kind != "theorem" and expect not in EXPECTATIONS:
        raise _err(where, "expect", f"unknown expectation {expect!r}",
                   'write expect = "pass" (no violation expected) or expect = "violation"')
    description = raw.get("description", "")
    if not isinstance(description, str):
        raise _err(where, "description", f"expected a string, got {description!r}", 'write description = "..."')
    if kind == "theorem":
        return _theorem_entry(raw, suite, path, where, mech, params, expect, description, budgets, import_paths)

    has_pairs, has_input, has_rel = "pairs" in raw, "input" in raw, "relation" in raw
    pairs = relation = inp = None
    random_pairs = raw.get("random_pairs", 0)
    search, utilities, sensitivity = _kind_options(raw, kind, where)
    runs = _runs(raw, kind, where)
    if kind == "sensitivity":
        if not has_rel:
            raise _err(where, "relation", "a sensitivity entry needs the neighbour relation its claim is made for",
                       'add e.g. relation = { kind = "add_remove" } or relation = { kind = "linf", radius = 1.0 }')
        relation = _relation(raw["relation"], where)
        if has_input:
            inp = _value_or_builder(raw["input"], where, "input")
        if has_pairs:
            pairs = _pairs(raw["pairs"], where)
        if not has_input and not (search or {}).get("domain"):
            raise _err(where, "input", "a sensitivity entry needs a base input, or search.domain for a dataset "
                       "relation", "add input = [...] or search = { domain = [0.0, 1.0] }")
        if not _is_int(random_pairs) or random_pairs < 0:
            raise _err(where, "random_pairs", f"expected an integer >= 0, got {random_pairs!r}",
                       "write random_pairs = 10")
        has_pairs = has_input = has_rel = False
    if kind == "ledger":
        inp = _ledger_input(raw, where)
        has_pairs = has_input = has_rel = False
    if kind == "em":
        inp = _value_or_builder(raw["input"], where, "input")
        has_pairs = has_input = has_rel = False
    elif kind == "exact" and search is not None and not (has_input and has_rel):
        raise _err(where, "search", "a worst-pair search needs an input and a relation",
                   'write input = ... and relation = { kind = "linf", radius = 1.0 } instead of pairs')
    if has_pairs and has_input:
        raise _err(where, "input", "gives both pairs and an input",
                   "keep either pairs = [[x0, x1], ...] or input = ... with relation = {...}, not both")
    if kind in ("em", "sensitivity", "ledger"):
        pass
    elif has_pairs:
        pairs = _pairs(raw["pairs"], where)
        if has_rel:
            relation = _relation(raw["relation"], where)
        if "random_pairs" in raw:
            raise _err(where, "random_pairs", "needs input and relation, but the entry gives explicit pairs",
                       "remove random_pairs, or replace pairs by input = ... and relation = {...}")
    elif has_input or has_rel:
        if not has_rel:
            raise _err(where, "relation", "input given without a neighbour relation",
                       'add e.g. relation = { kind = "linf", radius = 1.0 }')
        if not has_input:
            raise _err(where, "input", "relation given without an input",
                       "add e.g. input = [1.0, 1.0, 1.0]")
        inp = _value_or_builder(raw["input"], where, "input")
        relation = _relation(raw["relation"], where)
        if not _is_int(random_pairs) or random_pairs < 0:
            raise _err(where, "random_pairs", f"expected an integer >= 0, got {random_pairs!r}",
                       "write random_pairs = 10")
    else:
        raise _err(where, "pairs", "no inputs: the entry gives neither pairs nor input/relation",
                   'add pairs = [[x0, x1], ...], or input = [...] with relation = { kind = "linf", radius = 1.0 }')

    alpha = raw.get("alpha")
    if alpha is not None and (not _is_number(alpha) or not 0 < alpha < 1):
        raise _err(where, "alpha", f"expected a number in (0, 1), got {alpha!r}", "write alpha = 0.05")
    nan_policy = raw.get("nan_policy")
    if nan_policy is not None and not isinstance(nan_policy, str):
        raise _err(where, "nan_policy", f"expected a string, got {nan_policy!r}", 'write nan_policy = "raise"')
    float_bits = raw.get("float_bits")
    if float_bits is not None and not isinstance(float_bits, bool):
        raise _err(where, "float_bits", f"expected true or false, got {float_bits!r}", "write float_bits = true")
    for key in ("finalists", "batch_size"):
        v = raw.get(key)
        if v is not None and (not _is_int(v) or v < 1):
            raise _err(where, key, f"expected a positive integer, got {v!r}", f"write e.g. {key} = 3")

    return Entry(
        suite=suite, path=path, id=eid, kind=kind, mechanism=mech, params=params,
        claim=_claim(raw.get("claim"), where, kind), expect=expect, runs=runs,
        quick=_budget(raw.get("quick"), where, "quick", budgets["quick"]),
        full=_budget(raw.get("full"), where, "full", budgets["full"]),
        true_epsilon=_true_epsilon(raw.get("true_epsilon"), where), description=description,
        pairs=pairs, input=inp, relation=relation,
        random_pairs=random_pairs if (inp is not None or kind == "sensitivity") and kind != "em" else 0,
        search=search, utilities=utilities, sensitivity=sensitivity,
        alpha=None if alpha is None else float(alpha), nan_policy=nan_policy, float_bits=float_bits,
        finalists=raw.get("finalists"), batch_size=raw.get("batch_size"), import_paths=import_paths,
    )


#: The keys a theorem entry takes (see :func:`_theorem_entry`).
_THEOREM_KEYS = ("id", "kind", "mechanism", "params", "expect", "description", "sweep", "alpha", "batch_size",
                 "quick", "full")


def _theorem_entry(raw: dict[str, Any], suite: str, path: Path, where: str, mech: str, params: dict[str, Any],
                   expect: str, description: str, budgets: dict[str, Budget],
                   import_paths: tuple[Path, ...]) -> Entry:
    """A ``theorem`` entry: the theorem class, its params, an optional one-parameter sweep, the runs per
    point (``quick``/``full`` ``samples``) and the verdict expected."""
    for key in raw:
        if key not in _THEOREM_KEYS:
            why = ("the theorem states its own bound" if key == "claim"
                   else "a theorem entry runs the theorem's own sampler on its own inputs")
            raise _err(where, key, f"a theorem entry takes no {key} ({why})",
                       f"remove {key}; a theorem entry takes {', '.join(_THEOREM_KEYS)}")
    sweep = None
    if "sweep" in raw:
        fix = 'write sweep = { param = "epsilon", values = [0.5, 1.0, 2.0] }'
        value = raw["sweep"]
        if not isinstance(value, dict):
            raise _err(where, "sweep", f"expected a table, got {value!r}", fix)
        _check_keys(value, ("param", "values"), where, "sweep")
        param, values = value.get("param"), value.get("values")
        if not isinstance(param, str) or not param:
            raise _err(where, "sweep.param", f"expected a parameter name, got {param!r}", fix)
        if param in params:
            raise _err(where, "sweep.param", f"{param!r} is also in params", f"remove {param} from params")
        if not isinstance(values, list) or not values:
            raise _err(where, "sweep.values", f"expected a non-empty list, got {values!r}", fix)
        sweep = (param, tuple(_convert_value(v, where, "sweep.values") if isinstance(v, list) else v
                              for v in values))
    alpha = raw.get("alpha")
    if alpha is not None and (not _is_number(alpha) or not 0 < alpha < 1):
        raise _err(where, "alpha", f"expected a number in (0, 1), got {alpha!r}", "write alpha = 0.05")
    batch_size = raw.get("batch_size")
    if batch_size is not None and (not _is_int(batch_size) or batch_size < 1):
        raise _err(where, "batch_size", f"expected a positive integer, got {batch_size!r}", "write batch_size = 1000")
    return Entry(
        suite=suite, path=path, id=raw["id"], kind="theorem", mechanism=mech, params=params,
        claim=Claim(epsilon=None), expect=expect, description=description,
        quick=_budget(raw.get("quick"), where, "quick", budgets["quick"]),
        full=_budget(raw.get("full"), where, "full", budgets["full"]),
        alpha=None if alpha is None else float(alpha), batch_size=batch_size, import_paths=import_paths,
        sweep=sweep,
    )


_SEARCH_KEYS = {"base_radius": "number", "restarts": "int", "random_pairs": "int", "polish": "bool",
                "domain": "list", "grid": "int", "max_evaluations": "int", "seed": "int"}
#: Extra search keys of sensitivity entries (see :func:`dpverify.code_checks.sensitivity.check_sensitivity`).
_SENSITIVITY_SEARCH_KEYS = {"examples": "int", "nonfinite": "bool", "max_size": "int"}


def _function_alias(raw: dict[str, Any], where: str) -> dict[str, Any]:
    """``function = "module:attr"`` is how a sensitivity entry names the function under test (stored as the
    entry's ``mechanism``)."""
    if "function" not in raw:
        return raw
    if raw.get("kind") != "sensitivity":
        raise _err(where, "function", "only sensitivity entries name a function",
                   'write mechanism = "module:attribute" instead')
    if "mechanism" in raw:
        raise _err(where, "function", "gives both function and mechanism", "keep function = \"module:attribute\"")
    out = dict(raw)
    out["mechanism"] = out.pop("function")
    return out


def _runs(raw: dict[str, Any], kind: str, where: str) -> int:
    default = DEFAULT_LEDGER_RUNS if kind == "ledger" else DEFAULT_REPLAY_RUNS
    if "runs" not in raw:
        return default
    if kind not in ("replay", "ledger"):
        raise _err(where, "runs", f"only replay and ledger entries take runs (this entry is {kind!r})", "remove runs")
    runs = raw["runs"]
    if not _is_int(runs) or runs < 1:
        raise _err(where, "runs", f"expected an integer >= 1, got {runs!r}", f"write runs = {default}")
    return int(runs)


#: Keys a ledger entry refuses: it runs on one input and draws no samples for a test.
_LEDGER_UNUSED_KEYS = ("pairs", "relation", "random_pairs", "quick", "full", *_AUDIT_OPTION_KEYS)


def _ledger_input(raw: dict[str, Any], where: str) -> Any:
    """The input of a ``ledger`` entry (a value or a builder); the keys it has no use for are errors."""
    for key in _LEDGER_UNUSED_KEYS:
        if key in raw:
            on_pairs = key in ("pairs", "relation", "random_pairs")
            what = ("runs privacy_ledger(x, rng) on one input, not on pairs" if on_pairs
                    else "draws no samples and runs no statistical test")
            raise _err(where, key, f"a ledger entry {what}",
                       f"remove {key}; a ledger entry takes input = [...] and optionally runs = {DEFAULT_LEDGER_RUNS}")
    if "input" not in raw:
        raise _err(where, "input", "missing: a ledger entry needs the input privacy_ledger(x, rng) runs on",
                   'add input = [...] or input = { build = "module:function", params = { ... } }')
    return _value_or_builder(raw["input"], where, "input")


def _kind_options(raw: dict[str, Any], kind: str, where: str) -> tuple[dict[str, Any] | None, Any, float | None]:
    """Validate the keys that belong to one kind: ``search`` (exact), ``utilities``/``sensitivity`` (em)."""
    if kind not in ("exact", "sensitivity") and "search" in raw:
        raise _err(where, "search", f"only exact and sensitivity entries search for pairs (this entry is {kind!r})",
                   'remove search, or write kind = "exact"')
    keys = dict(_SEARCH_KEYS, **_SENSITIVITY_SEARCH_KEYS) if kind == "sensitivity" else _SEARCH_KEYS
    if kind != "em":
        for key in ("utilities", "sensitivity"):
            if key in raw:
                raise _err(where, key, f"only em entries take {key} (this entry is {kind!r})",
                           f'remove {key}, or write kind = "em"')
        search = raw.get("search")
        if search is None:
            return None, None, None
        if not isinstance(search, dict):
            raise _err(where, "search", f"expected a table, got {search!r}",
                       "write search = { base_radius = 2.0, restarts = 8 }")
        _check_keys(search, tuple(keys), where, "search")
        out: dict[str, Any] = {}
        for key, value in search.items():
            typ = keys[key]
            ok = {"number": _is_number(value) and value >= 0, "int": _is_int(value) and value >= 0,
                  "bool": isinstance(value, bool), "list": isinstance(value, list)}[typ]
            if not ok:
                raise _err(where, f"search.{key}", f"expected {'a number >= 0' if typ == 'number' else typ}, "
                           f"got {value!r}", "see the module docstring of dpverify.suites.suite for the search keys")
            out[key] = _convert_value(value, where, f"search.{key}") if typ == "list" else value
        return out, None, None
    for key in ("pairs", "relation", "random_pairs"):
        if key in raw:
            raise _err(where, key, "an em entry takes an input (the sampler's input), not pairs or a relation",
                       "remove it; give input = [...] and optionally utilities = [...], sensitivity = 1.0")
    if "input" not in raw:
        raise _err(where, "input", "missing: an em entry needs the sampler's input",
                   "add input = [0.0, 1.0, 2.0] (for a sampler whose input is the utility vector)")
    utilities = raw.get("utilities")
    if utilities is not None:
        utilities = _value_or_builder(utilities, where, "utilities")
    sensitivity = raw.get("sensitivity", 1.0)
    if not _is_number(sensitivity) or not (0 < sensitivity < math.inf):
        raise _err(where, "sensitivity", f"expected a finite number > 0, got {sensitivity!r}",
                   "write sensitivity = 1.0")
    return None, utilities, float(sensitivity)


def load_suite(path: str | Path) -> Suite:
    """Load and validate one suite file (see the module docstring for the format)."""
    path = Path(path)
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise SuiteError(f"{path}: no such suite file; pass an existing .toml file or directory") from None
    except IsADirectoryError:
        raise SuiteError(f"{path}: is a directory; use load_suites() for directories") from None
    except tomllib.TOMLDecodeError as exc:
        raise SuiteError(f"{path}: not valid TOML: {exc}; fix the syntax (see https://toml.io)") from None
    except OSError as exc:
        raise SuiteError(f"{path}: cannot read the suite file: {exc}") from None

    where = f"{path}: [suite]"
    _check_keys(data, ("suite", "entry"), f"{path}", "the file (top level)")
    head = data.get("suite", {})
    if not isinstance(head, dict):
        raise _err(where, None, "is not a table", 'write [suite] then name = "..."')
    _check_keys(head, _SUITE_KEYS, where, "[suite]")
    name = head.get("name", path.stem)
    if not isinstance(name, str) or not _ID_RE.match(name):
        raise _err(where, "name", f"invalid suite name {name!r}",
                   "use letters, digits and _ . + - (no spaces or '/'), e.g. name = \"classic\"")
    description = head.get("description", "")
    if not isinstance(description, str):
        raise _err(where, "description", f"expected a string, got {description!r}", 'write description = "..."')
    default = head.get("default", False)
    if not isinstance(default, bool):
        raise _err(where, "default", f"expected true or false, got {default!r}", "write default = true")
    raw_paths = head.get("import_paths", [])
    if not isinstance(raw_paths, list) or not all(isinstance(p, str) for p in raw_paths):
        raise _err(where, "import_paths", f"expected a list of directory strings, got {raw_paths!r}",
                   'write import_paths = [".."] (relative to the suite file)')
    import_paths = tuple((path.parent / p).resolve() for p in raw_paths)
    budgets = {
        mode: _budget(head.get(mode), where, mode, Budget(*DEFAULT_BUDGETS[mode])) for mode in MODES
    }

    raw_entries = data.get("entry", [])
    if not isinstance(raw_entries, list) or not raw_entries:
        raise SuiteError(f"{path}: the suite has no entries; add at least one [[entry]] table")
    entries: list[Entry] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(raw_entries):
        entry = _entry(raw, i, name, path, budgets, import_paths)
        if entry.id in seen:
            raise _err(entry.where, "id",
                       f"duplicate id (entries #{seen[entry.id] + 1} and #{i + 1})",
                       "give every entry of a suite a different id")
        seen[entry.id] = i
        entries.append(entry)
    return Suite(name=name, description=description, path=path, entries=tuple(entries), default=default)


def _expand(paths: Iterable[str | Path]) -> list[Path]:
    files: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            found = sorted(p.glob("*.toml"))
            if not found:
                raise SuiteError(f"{p}: directory holds no *.toml suite files; pass a suite file or another directory")
            files.extend(found)
        elif p.exists():
            files.append(p)
        else:
            raise SuiteError(f"{p}: no such suite file or directory; pass an existing .toml file or directory")
    return files


def load_suites(paths: Iterable[str | Path]) -> list[Suite]:
    """Load suite files; a directory stands for every ``*.toml`` in it (sorted, not recursive).

    Two suites with the same name are refused (``suite/id`` must name one entry in a run).
    """
    suites: list[Suite] = []
    by_name: dict[str, Path] = {}
    for f in _expand(paths):
        resolved = f.resolve()
        if any(s.path.resolve() == resolved for s in suites):
            continue  # the same file named twice (e.g. a file and its directory)
        suite = load_suite(f)
        if suite.name in by_name:
            raise SuiteError(f"{f}: [suite] key 'name': suite name '{suite.name}' is also used by "
                             f"{by_name[suite.name]}; give every suite a different name")
        by_name[suite.name] = f
        suites.append(suite)
    if not suites:
        raise SuiteError("no suite files given; pass a .toml file or a directory of them")
    return suites


def default_suite_dir(cwd: str | Path | None = None) -> Path:
    """Where ``dpverify run`` looks without a path.

    ``./audits`` if it exists, else the ``audits/`` directory next to the installed package's parent
    directory (an editable install from a checkout); else a :class:`SuiteError`.
    """
    here = Path.cwd() if cwd is None else Path(cwd)
    local = here / "audits"
    if local.is_dir():
        return local
    checkout = Path(__file__).resolve().parents[2] / "audits"
    if checkout.is_dir():
        return checkout
    raise SuiteError("no audit suites found: there is no ./audits directory and dpverify is not installed "
                     "from a checkout; pass suite files or directories, or run from a checkout")


def default_suites(cwd: str | Path | None = None) -> list[Suite]:
    """The suites of the default run: those of :func:`default_suite_dir` marked ``default = true``
    in their ``[suite]`` table, or all of them when none is marked."""
    suites = load_suites([default_suite_dir(cwd)])
    marked = [s for s in suites if s.default]
    return marked or suites


# --------------------------------------------------------------------------------------------------
# mechanisms and pairs
# --------------------------------------------------------------------------------------------------


def resolve(import_path: str, *, where: str | None = None, search_paths: Sequence[str | Path] = ()) -> Any:
    """Import ``"package.module:attribute"`` (the attribute may be dotted) and return the object.

    ``search_paths`` (a suite's ``import_paths``) are put in front of ``sys.path`` if missing, and stay
    there (worker processes and imports inside the mechanism need them).  Every failure is a
    :class:`SuiteError` naming ``where`` (e.g. the entry) and the path.
    """
    ctx = f"{where}: key 'mechanism'" if where else "mechanism"
    if not isinstance(import_path, str) or not _IMPORT_RE.match(import_path):
        raise SuiteError(f"{ctx}: {import_path!r} is not an import path \"module:attribute\"; "
                         'write e.g. "algorithms.classic.laplace:Laplace"')
    mod_name, attr = import_path.split(":", 1)
    added = [str(Path(p)) for p in search_paths if str(Path(p)) not in sys.path]
    if added:
        # kept on sys.path: worker processes and lazy imports inside the mechanism need them too
        sys.path[:0] = added
        importlib.invalidate_caches()
    try:
        module = importlib.import_module(mod_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing and (mod_name == missing or mod_name.startswith(missing + ".")):
            raise SuiteError(
                f"{ctx}: cannot import '{import_path}': module '{missing}' not found; check the spelling, "
                "install the package (pip install -e . in a checkout) or add its directory to "
                "import_paths in [suite]") from None
        raise SuiteError(f"{ctx}: cannot import '{import_path}': importing module '{mod_name}' failed: "
                         f"{exc}") from None
    except Exception as exc:  # noqa: BLE001 -- any error while importing user code
        raise SuiteError(f"{ctx}: cannot import '{import_path}': importing module '{mod_name}' raised "
                         f"{type(exc).__name__}: {exc}") from None
    obj: Any = module
    done = f"{mod_name}:"
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            names = [n for n in dir(obj) if not n.startswith("_")]
            close = difflib.get_close_matches(part, names, n=3)
            hint = f"did you mean {', '.join(repr(c) for c in close)}?" if close else \
                "check the name after ':'"
            owner = f"module '{mod_name}'" if obj is module else f"'{done}'"
            raise SuiteError(f"{ctx}: cannot import '{import_path}': {owner} has no attribute "
                             f"'{part}'; {hint}") from None
        done = f"{done}{part}" if done.endswith(":") else f"{done}.{part}"
    return obj


def build_mechanism(entry: Entry) -> Callable[..., Any]:
    """The entry's mechanism ``mechanism(x, n, rng) -> ndarray`` (a ledger entry: an object with
    ``privacy_ledger(x, rng)``).

    A class is instantiated with ``params``; a function is wrapped with
    ``functools.partial(f, **params)`` (after checking the keywords against its signature).
    """
    obj = resolve(entry.mechanism, where=entry.where, search_paths=entry.import_paths)
    params = dict(entry.params)
    if entry.kind == "ledger":
        return _ledger_object(entry, obj, params)
    if inspect.isclass(obj):
        mech = _instantiate(entry, obj, params)
        if not callable(mech):
            raise _err(entry.where, "mechanism", f"an instance of {entry.mechanism} is not callable",
                       "name a class whose instances are mechanism(x, n, rng), or such a function")
        return mech
    if not callable(obj):
        raise _err(entry.where, "mechanism", f"{entry.mechanism} is a {type(obj).__name__}, not callable",
                   "name a function mechanism(x, n, rng, **params) or a class")
    if not params:
        return obj
    try:
        inspect.signature(obj).bind_partial(**params)
    except TypeError as exc:
        raise _err(entry.where, "params", f"{entry.mechanism} does not accept {sorted(params)}: {exc}",
                   "fix params to match the function's keyword arguments") from None
    except ValueError:
        pass  # no signature available (builtins): let the call decide
    return functools.partial(obj, **params)


def _instantiate(entry: Entry, cls: type, params: dict[str, Any]) -> Any:
    try:
        return cls(**params)
    except Exception as exc:  # noqa: BLE001 -- report any constructor failure as a suite error
        raise _err(entry.where, "params", f"{entry.mechanism}(**{params!r}) raised "
                   f"{type(exc).__name__}: {exc}", "fix params to match the class's constructor") from None


def _ledger_object(entry: Entry, obj: Any, params: dict[str, Any]) -> Any:
    """A ledger entry's object: an instance of the named class (made with ``params``) or the named object itself;
    either must have ``privacy_ledger(x, rng)``."""
    if inspect.isclass(obj):
        obj = _instantiate(entry, obj, params)
    elif params:
        raise _err(entry.where, "params", f"{entry.mechanism} is not a class, so it takes no params",
                   "name a class (instantiated with params) whose instances have privacy_ledger(x, rng)")
    if not callable(getattr(obj, "privacy_ledger", None)):
        raise _err(entry.where, "mechanism", f"{entry.mechanism} has no privacy_ledger(x, rng) method",
                   "name a class whose instances return the charges of one run from privacy_ledger(x, rng)")
    return obj


def build_pairs(entry: Entry, seed: int | None = None) -> list[Pair]:
    """The entry's pairs: its ``pairs`` (explicit or built; checked by its relation if it has one), or
    those of its relation on its input (patterns plus ``random_pairs`` random pairs drawn with ``seed``)."""
    from dpverify.neighbours import as_pairs

    relation = entry.relation.build() if entry.relation is not None else None
    if entry.pairs is not None:
        raw = _built_input(entry, entry.pairs)
        try:
            return as_pairs(list(raw), relation)
        except DPVerifyError as exc:
            raise SuiteError(f"{entry.where}: key 'pairs': {exc}") from None
    assert relation is not None
    x = _built_input(entry, entry.input)
    return relation.pairs(x, patterns=True, random=entry.random_pairs, seed=seed)


def entry_seed(run_seed: int, suite_name: str, entry_id: str) -> int:
    """Seed of one entry, derived from the run seed and ``"suite/id"`` only.

    ``SeedSequence([run_seed, crc32("suite/id")]).generate_state(1)[0]``: adding, removing or selecting
    other entries never changes it.
    """
    if not _is_int(run_seed) and not isinstance(run_seed, np.integer):
        raise SuiteError(f"run seed must be an integer >= 0, got {run_seed!r}")
    if run_seed < 0:
        raise SuiteError(f"run seed must be an integer >= 0, got {run_seed!r}")
    key = zlib.crc32(f"{suite_name}/{entry_id}".encode())
    return int(np.random.SeedSequence([int(run_seed), key]).generate_state(1)[0])


# --------------------------------------------------------------------------------------------------
# running
# --------------------------------------------------------------------------------------------------


def audit(mechanism: Callable[..., Any], pairs: Any, epsilon: float, delta: float = 0.0,
          **options: Any) -> AuditResult:
    """:func:`dpverify.audit`, imported at call time (tests replace ``dpverify.suites.suite.audit``)."""
    from dpverify.statistical.auditor import audit as _audit

    return _audit(mechanism, pairs, epsilon, delta, **options)


def _matches(entry: Entry, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(entry.name, p) or fnmatch.fnmatchcase(entry.id, p) for p in patterns)


def select_entries(suites: Iterable[Suite], select: str | Sequence[str] | None = None) -> list[Entry]:
    """Entries of ``suites`` in order, keeping those whose ``"suite/id"`` or ``"id"`` matches one of the
    fnmatch patterns ``select`` (all when ``None``).  A selection matching nothing is a SuiteError."""
    entries = [e for s in suites for e in s.entries]
    if select is None:
        return entries
    patterns = [select] if isinstance(select, str) else list(select)
    chosen = [e for e in entries if _matches(e, patterns)]
    if not chosen:
        shown = ", ".join(repr(p) for p in patterns)
        raise SuiteError(f"no entry matches the selection {shown} (patterns match 'suite/id' or 'id', "
                         "e.g. 'classic/*' or 'laplace*'); `dpverify list` shows the entries")
    return chosen


def preflight(entries: Iterable[Entry]) -> None:
    """Build every entry's mechanism once (imports, params); one SuiteError listing every failure."""
    problems: list[str] = []
    for e in entries:
        try:
            if e.kind == "theorem":
                _theorem_instance(e)
            else:
                build_mechanism(e)
        except SuiteError as exc:
            problems.append(str(exc))
    if problems:
        raise SuiteError("\n".join(problems) if len(problems) == 1 else
                         f"{len(problems)} entries cannot be loaded:\n  " + "\n  ".join(problems))


def _outcome(entry: Entry, mode: str, seed: int, **kw: Any) -> EntryOutcome:
    budget = entry.budget(mode)
    base: dict[str, Any] = dict(
        suite=entry.suite, id=entry.id, kind=entry.kind, mechanism=entry.mechanism, claim=entry.claim,
        expectation=entry.expect, true_epsilon=entry.true_epsilon, samples=budget.samples,
        search_samples=budget.search_samples, seed=seed, epsilon_lower_bound=None, seconds=0.0,
    )
    base.update(kw)
    return EntryOutcome(**base)


def not_run_outcome(entry: Entry, mode: str, run_seed: int) -> EntryOutcome:
    """The record of an entry an interrupted run did not reach (outcome ``"not-run"``)."""
    return _outcome(entry, mode, entry_seed(run_seed, entry.suite, entry.id), outcome="not-run",
                    matched=False)


def run_entry(entry: Entry, mode: str = "quick", run_seed: int = 0, workers: int | None = None,
              sequential: bool = False) -> EntryOutcome:
    """Audit one entry with the budget of ``mode`` and its derived seed.

    ``sequential``: a ``statistical`` entry runs as :func:`dpverify.statistical.sequential.audit_sequential`, a ladder of
    growing budgets ending at the entry's, stopping at the first violation (its stages go to ``details``).

    Never raises for a failing entry (except ``KeyboardInterrupt``): a :class:`DPVerifyError` gives
    outcome ``"error"`` with its message, any other exception the same with the exception type prepended.
    """
    entry.budget(mode)  # validates the mode
    seed = entry_seed(run_seed, entry.suite, entry.id)
    t0 = time.perf_counter()
    try:
        if entry.kind == "theorem":  # the class is instantiated per sweep point, not once
            return _run_theorem(entry, mode, seed, t0, workers)
        mechanism = build_mechanism(entry)
        if entry.kind == "exact":
            return _run_exact(entry, mechanism, mode, seed, t0)
        if entry.kind == "em":
            return _run_em(entry, mechanism, mode, seed, t0)
        if entry.kind == "sensitivity":
            return _run_sensitivity(entry, mechanism, mode, seed, t0)
        if entry.kind == "replay":
            return _run_replay(entry, mechanism, mode, seed, t0)
        if entry.kind == "ledger":
            return _run_ledger(entry, mechanism, mode, seed, t0)
        return _run_statistical(entry, mechanism, mode, seed, t0, workers, sequential)
    except DPVerifyError as exc:
        return _outcome(entry, mode, seed, outcome="error", matched=False, error=str(exc),
                        seconds=time.perf_counter() - t0)
    except Exception as exc:  # noqa: BLE001 -- one crashing entry never stops the run
        return _outcome(entry, mode, seed, outcome="error", matched=False,
                        error=f"{type(exc).__name__}: {exc}", seconds=time.perf_counter() - t0)


def _run_statistical(entry: Entry, mechanism: Any, mode: str, seed: int, t0: float,
                     workers: int | None, sequential: bool = False) -> EntryOutcome:
    """A ``statistical`` entry: the black-box audit with the entry's budget (or a ladder ending there)."""
    budget = entry.budget(mode)
    pairs = build_pairs(entry, seed)
    options = entry.audit_options()
    if budget.search_samples is not None:
        options["search_samples"] = budget.search_samples
    details: dict[str, Any] = {}
    if sequential:
        from dpverify.statistical.sequential import audit_sequential

        ladder = audit_sequential(mechanism, pairs, entry.claim.epsilon, entry.claim.delta,
                                  samples=budget.samples, seed=seed, workers=workers, **options)
        result = ladder.last
        details["sequential"] = {k: v for k, v in ladder.to_dict().items() if k != "last"}
        bound = ladder.epsilon_lower_bound
    else:
        result = audit(mechanism, pairs, entry.claim.epsilon, entry.claim.delta,
                       samples=budget.samples, seed=seed, workers=workers, **options)
        bound = result.epsilon_lower_bound
    if result.loss_histogram is not None:
        details["loss_histogram"] = result.loss_histogram
    seconds = time.perf_counter() - t0
    outcome = "violation" if result.violation else "pass"
    witness = None if result.witness is None else result.witness.to_dict()
    return _outcome(
        entry, mode, seed, outcome=outcome, matched=outcome == entry.expect,
        epsilon_lower_bound=float(bound), samples=int(result.samples),
        search_samples=int(result.search_samples), seconds=seconds, witness=witness, result=result,
        details=details or None,
    )


def _built_input(entry: Entry, value: Any) -> Any:
    """``value`` itself, or what its builder returns (an entry's input, pairs or utilities)."""
    return value(entry.where, entry.import_paths) if isinstance(value, Builder) else value


def _run_exact(entry: Entry, mechanism: Any, mode: str, seed: int, t0: float) -> EntryOutcome:
    """An ``exact`` entry: exact losses on its pairs, or the worst pair of a search."""
    from dpverify.exact.loss import exact_audit
    from dpverify.code_checks.worst_pair import worst_pair_search

    if entry.search is not None:
        assert entry.relation is not None
        opts = dict(entry.search)
        opts.setdefault("seed", seed)
        result = worst_pair_search(mechanism, entry.relation.build(), _built_input(entry, entry.input),
                                   entry.claim.epsilon, entry.claim.delta, **opts)
        loss, label, evaluations = result.result.loss, result.label, result.evaluations
    else:
        result = exact_audit(mechanism, build_pairs(entry, seed), entry.claim.epsilon, entry.claim.delta)
        loss, label, evaluations = result.worst.loss, result.worst.label, result.evaluations
    outcome = "violation" if result.violation else "pass"
    witness = {"pair_label": label, "output": loss.to_dict()["output"], "log_p0": loss.log_p0,
               "log_p1": loss.log_p1, "exact_epsilon": loss.epsilon, "delta_at_claim": result.delta_at_claim}
    return _outcome(entry, mode, seed, outcome=outcome, matched=outcome == entry.expect,
                    epsilon_lower_bound=float(result.epsilon), samples=None, search_samples=evaluations,
                    seconds=time.perf_counter() - t0, witness=witness, details=result.to_dict(), result=result)


def _run_em(entry: Entry, mechanism: Any, mode: str, seed: int, t0: float) -> EntryOutcome:
    """An ``em`` entry: goodness of fit of the sampler's frequencies to ``softmax(ε·u/(2Δu))``."""
    from dpverify.exact.em_check import check_exponential_mechanism

    budget = entry.budget(mode)
    x = _built_input(entry, entry.input)
    u = x if entry.utilities is None else _built_input(entry, entry.utilities)
    opts = {} if entry.alpha is None else {"alpha": entry.alpha}
    result = check_exponential_mechanism(mechanism, u, entry.claim.epsilon, entry.sensitivity or 1.0,
                                         samples=budget.samples, seed=seed, input=x, **opts)
    outcome = "pass" if result.consistent else "violation"
    return _outcome(entry, mode, seed, outcome=outcome, matched=outcome == entry.expect, samples=budget.samples,
                    search_samples=None, seconds=time.perf_counter() - t0, details=result.to_dict(),
                    result=result)


def _run_sensitivity(entry: Entry, function: Any, mode: str, seed: int, t0: float) -> EntryOutcome:
    """A ``sensitivity`` entry: the largest change of the function found under the relation, against the claim."""
    from dpverify.code_checks.sensitivity import check_sensitivity

    assert entry.relation is not None and entry.claim.sensitivity is not None
    opts = dict(entry.search or {})
    opts.setdefault("seed", seed % 2**32)
    opts.setdefault("random_pairs", entry.random_pairs)
    x = None if entry.input is None else _built_input(entry, entry.input)
    pairs = () if entry.pairs is None else list(_built_input(entry, entry.pairs))
    result = check_sensitivity(function, entry.claim.sensitivity, entry.relation.build(), x,
                               norm=entry.claim.norm or "l1", pairs=pairs, **opts)
    outcome = "violation" if result.violation else "pass"
    details = result.to_dict()
    return _outcome(entry, mode, seed, outcome=outcome, matched=outcome == entry.expect, samples=None,
                    search_samples=result.evaluations, seconds=time.perf_counter() - t0,
                    witness=details["witness"], details=details, result=result)


def _run_replay(entry: Entry, mechanism: Any, mode: str, seed: int, t0: float) -> EntryOutcome:
    """A ``replay`` entry: frozen-noise replay of the mechanism's declared steps on the entry's pairs."""
    from dpverify.code_checks.replay import frozen_noise_replay

    result = frozen_noise_replay(mechanism, build_pairs(entry, seed), samples=entry.runs, seed=seed)
    outcome = "violation" if result.violation else "pass"
    details = result.to_dict()
    return _outcome(entry, mode, seed, outcome=outcome, matched=outcome == entry.expect, samples=entry.runs,
                    search_samples=None, seconds=time.perf_counter() - t0, witness=details["witness"],
                    details=details, result=result)


def _run_ledger(entry: Entry, mechanism: Any, mode: str, seed: int, t0: float) -> EntryOutcome:
    """A ``ledger`` entry: the charges of ``runs`` runs on the entry's input, recomposed against the claim."""
    from dpverify.code_checks.ledger import check_ledger

    assert entry.claim.epsilon is not None
    result = check_ledger(mechanism, _built_input(entry, entry.input), entry.claim.epsilon, entry.claim.delta,
                          runs=entry.runs, seed=seed)
    outcome = "violation" if result.violation else "pass"
    return _outcome(entry, mode, seed, outcome=outcome, matched=outcome == entry.expect, samples=entry.runs,
                    search_samples=None, seconds=time.perf_counter() - t0, details=result.to_dict(),
                    result=result)


def _theorem_factory(entry: Entry) -> Callable[..., Any]:
    factory = resolve(entry.mechanism, where=entry.where, search_paths=entry.import_paths)
    if not callable(factory):
        raise SuiteError(f"{entry.where}: {entry.mechanism} is a {type(factory).__name__}, not a theorem class")
    return factory


def _theorem_instance(entry: Entry) -> Any:
    """The theorem object of an entry (at the first sweep value, if it sweeps): a SuiteError names bad params."""
    params = dict(entry.params)
    if entry.sweep is not None:
        params[entry.sweep[0]] = entry.sweep[1][0]
    try:
        return _theorem_factory(entry)(**params)
    except DPVerifyError:
        raise
    except Exception as exc:  # noqa: BLE001 -- bad parameters, named
        raise SuiteError(f"{entry.where}: {entry.mechanism}(**{params!r}) raised {type(exc).__name__}: {exc}; "
                         "fix params") from None


def _run_theorem(entry: Entry, mode: str, seed: int, t0: float, workers: int | None) -> EntryOutcome:
    """A ``theorem`` entry: the Monte Carlo check of the theorem (or of its sweep), verdict against ``expect``."""
    from dpverify.theorems.check import DEFAULT_BATCH_SIZE, check_sweep, check_theorem

    runs = entry.budget(mode).samples
    opts: dict[str, Any] = dict(runs=runs, seed=seed, workers=workers,
                                batch_size=entry.batch_size or DEFAULT_BATCH_SIZE)
    if entry.alpha is not None:
        opts["alpha"] = entry.alpha
    if entry.sweep is not None:
        result: Any = check_sweep(_theorem_factory(entry), entry.params, entry.sweep[0], entry.sweep[1], **opts)
    else:
        result = check_theorem(_theorem_instance(entry), **opts)
    details = result.to_dict()
    witness = None if result.counterexample is None else {"counterexample": details["counterexample"]}
    return _outcome(entry, mode, seed, outcome=result.verdict, matched=result.verdict == entry.expect,
                    samples=runs, search_samples=None, seconds=time.perf_counter() - t0, witness=witness,
                    details=details, result=result)


def run_suites(
    suites: Iterable[Suite],
    mode: str = "quick",
    seed: int = 0,
    workers: int | None = None,
    select: str | Sequence[str] | None = None,
    on_result: Callable[[EntryOutcome, int, int], None] | None = None,
    on_start: Callable[[Entry, int, int], None] | None = None,
    sequential: bool = False,
) -> list[EntryOutcome]:
    """Run every selected entry of ``suites`` in order.

    ``on_start(entry, index, total)`` is called before and ``on_result(outcome, index, total)`` after
    each entry (``index`` counts from 0).  A ``KeyboardInterrupt`` propagates; the outcomes reported
    through ``on_result`` so far are the finished ones.
    """
    if mode not in MODES:
        raise SuiteError(f"unknown mode {mode!r}; use 'quick' or 'full'")
    entry_seed(seed, "", "")  # validate the run seed before running anything
    entries = select_entries(suites, select)
    outcomes: list[EntryOutcome] = []
    total = len(entries)
    for i, entry in enumerate(entries):
        if on_start is not None:
            on_start(entry, i, total)
        outcome = run_entry(entry, mode, seed, workers, sequential)
        outcomes.append(outcome)
        if on_result is not None:
            on_result(outcome, i, total)
    return outcomes
