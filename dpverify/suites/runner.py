"""Running suite entries: the mechanism and pairs an entry names, its seed, and one runner per kind of check
(:func:`run_entry`, :func:`run_suites`)."""


from __future__ import annotations

import fnmatch
import functools
import inspect
import time
import zlib
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from dpverify.errors import DPVerifyError, SuiteError, format_error
from dpverify.suites.imports import load_plugins, resolve
from dpverify.suites.model import Builder, Entry, EntryOutcome, MODES, Suite
from dpverify.suites.kinds import RunContext, get_kind, make_outcome
from dpverify.suites.values import is_int, suite_error

if TYPE_CHECKING:  # result.py imports dpverify.neighbours; keep this module importable on its own
    from dpverify.neighbours import Pair
    from dpverify.statistical.result import AuditResult

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
            raise suite_error(entry.where, "mechanism", f"an instance of {entry.mechanism} is not callable",
                       "name a class whose instances are mechanism(x, n, rng), or such a function")
        return mech
    if not callable(obj):
        raise suite_error(entry.where, "mechanism", f"{entry.mechanism} is a {type(obj).__name__}, not callable",
                   "name a function mechanism(x, n, rng, **params) or a class")
    if not params:
        return obj
    try:
        inspect.signature(obj).bind_partial(**params)
    except TypeError as exc:
        raise suite_error(entry.where, "params", f"{entry.mechanism} does not accept {sorted(params)}: {exc}",
                   "fix params to match the function's keyword arguments") from None
    except ValueError:
        pass  # no signature available (builtins): let the call decide
    return functools.partial(obj, **params)


def _instantiate(entry: Entry, cls: type, params: dict[str, Any]) -> Any:
    try:
        return cls(**params)
    except Exception as exc:  # noqa: BLE001 -- report any constructor failure as a suite error
        raise suite_error(entry.where, "params", f"{entry.mechanism}(**{params!r}) raised "
                   f"{type(exc).__name__}: {exc}", "fix params to match the class's constructor") from None


def _ledger_object(entry: Entry, obj: Any, params: dict[str, Any]) -> Any:
    """A ledger entry's object: an instance of the named class (made with ``params``) or the named object itself;
    either must have ``privacy_ledger(x, rng)``."""
    if inspect.isclass(obj):
        obj = _instantiate(entry, obj, params)
    elif params:
        raise suite_error(entry.where, "params", f"{entry.mechanism} is not a class, so it takes no params",
                   "name a class (instantiated with params) whose instances have privacy_ledger(x, rng)")
    if not callable(getattr(obj, "privacy_ledger", None)):
        raise suite_error(entry.where, "mechanism", f"{entry.mechanism} has no privacy_ledger(x, rng) method",
                   "name a class whose instances return the charges of one run from privacy_ledger(x, rng)")
    return obj


def build_pairs(entry: Entry, seed: int | None = None) -> list[Pair]:
    """The entry's pairs: its ``pairs`` (explicit or built; checked by its relation if it has one), or
    those of its relation on its input (patterns plus ``random_pairs`` random pairs drawn with ``seed``)."""
    from dpverify.neighbours import as_pairs

    relation = entry.relation.build() if entry.relation is not None else None
    if entry.pairs is not None:
        raw = built_input(entry, entry.pairs)
        try:
            return as_pairs(list(raw), relation)
        except DPVerifyError as exc:
            raise SuiteError(f"{entry.where}: key 'pairs': {exc}") from None
    assert relation is not None
    x = built_input(entry, entry.input)
    return relation.pairs(x, patterns=True, random=entry.random_pairs, seed=seed)


def entry_seed(run_seed: int, suite_name: str, entry_id: str) -> int:
    """Seed of one entry, derived from the run seed and ``"suite/id"`` only.

    ``SeedSequence([run_seed, crc32("suite/id")]).generate_state(1)[0]``: adding, removing or selecting
    other entries never changes it.
    """
    if not is_int(run_seed) and not isinstance(run_seed, np.integer):
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
    """:func:`dpverify.audit`, imported at call time (tests replace ``dpverify.suites.audit``)."""
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
            kind = get_kind(e.kind)
            (kind.prepare or build_mechanism)(e)
        except SuiteError as exc:
            problems.append(str(exc))
    if problems:
        raise SuiteError("\n".join(problems) if len(problems) == 1 else
                         f"{len(problems)} entries cannot be loaded:\n  " + "\n  ".join(problems))  # never 1


def not_run_outcome(entry: Entry, mode: str, run_seed: int) -> EntryOutcome:
    """The record of an entry an interrupted run did not reach (outcome ``"not-run"``)."""
    ctx = RunContext(mode=mode, seed=entry_seed(run_seed, entry.suite, entry.id), t0=time.perf_counter())
    return make_outcome(entry, ctx, outcome="not-run", matched=False, seconds=0.0)


def run_entry(entry: Entry, mode: str = "quick", run_seed: int = 0, workers: int | None = None,
              sequential: bool = False) -> EntryOutcome:
    """Audit one entry with the budget of ``mode`` and its derived seed.

    ``sequential``: a ``statistical`` entry runs as :func:`dpverify.statistical.anytime.audit_anytime`, the
    anytime-valid audit with the entry's test budget, stopping at the first batch that certifies a violation (its
    rounds go to ``details["anytime"]``).

    Never raises for a failing entry (except ``KeyboardInterrupt``): a :class:`DPVerifyError` gives
    outcome ``"error"`` with its message, any other exception the same with the exception type prepended.
    """
    entry.budget(mode)  # validates the mode
    seed = entry_seed(run_seed, entry.suite, entry.id)
    t0 = time.perf_counter()
    ctx = RunContext(mode=mode, seed=seed, t0=t0, workers=workers, sequential=sequential)
    try:
        if entry.plugins:  # a worker process that did not load the suite file registers the entry's plugins here
            load_plugins(entry.plugins, where=entry.where, search_paths=entry.import_paths)
        return get_kind(entry.kind).run(entry, ctx)
    except DPVerifyError as exc:  # with its notes: a mechanism's error says where in the user's code
        return make_outcome(entry, ctx, outcome="error", matched=False, error=format_error(exc))
    except Exception as exc:  # noqa: BLE001 -- one crashing entry never stops the run
        return make_outcome(entry, ctx, outcome="error", matched=False, error=f"{type(exc).__name__}: {exc}")


def built_input(entry: Entry, value: Any) -> Any:
    """``value`` itself, or what its builder returns (an entry's input, pairs or utilities)."""
    return value(entry.where, entry.import_paths) if isinstance(value, Builder) else value


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
