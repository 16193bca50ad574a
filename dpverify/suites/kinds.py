"""The registry of check kinds: what a suite entry's ``kind = "..."`` runs, and how its outcome is reported and
compared.

A :class:`CheckKind` bundles everything the rest of dpverify needs to know about one kind of check:

* its **suite schema** -- the entry keys it accepts besides the common ones (``keys``), which of them are required,
  and ``validate(options, where)`` that checks and normalises them (the result lands in ``Entry.options``);
* its **expectations** (``("pass", "violation")`` or a theorem's verdicts) and whether it needs a claim;
* its **runner** ``run(entry, ctx) -> EntryOutcome`` (:class:`RunContext` carries the mode, the entry's seed, the
  start time and the workers; :func:`make_outcome` fills the common fields);
* its **result type** (for documentation and :func:`dpverify.testing.check_mechanism`);
* its **report cell** ``found(outcome) -> str`` (the "ε found" column: a bound, an exact loss, a p-value, ...);
* its **comparison rule** ``rise(base_record, new_record) -> str | None`` (JSON records of ``report.json``: when does a
  rise of the measured quantity mean more than noise).

The suite runner, the reports and ``compare`` loop over this registry; the seven built-in kinds
(:mod:`dpverify.suites.builtin_kinds`) are registered the same way a user's kind is::

    from dpverify.suites.kinds import CheckKind, make_outcome, register_kind
    register_kind(CheckKind(name="output-range", run=run_output_range, keys=("low", "high"), ...))

A suite file makes its plugins known with ``[suite] plugins = ["my_package.dp_kinds"]``: the modules are imported
when the file is loaded (in every process that loads it), before its entries are validated.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dpverify.errors import InputError
from dpverify.results import Measured
from dpverify.suites.model import Entry, EntryOutcome

__all__ = ["CheckKind", "RunContext", "register_kind", "get_kind", "kind_names", "make_outcome", "comparison_rule",
           "found_cell_of"]

_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_\-]*$")


@dataclass(frozen=True)
class RunContext:
    """What a kind's runner gets besides the entry: the budget ``mode``, the entry's derived ``seed``, ``t0`` (the
    ``time.perf_counter()`` at its start), the sampling ``workers`` and whether the run is ``sequential``."""

    mode: str
    seed: int
    t0: float
    workers: int | None = None
    sequential: bool = False

    @property
    def seconds(self) -> float:
        """Seconds since the entry started."""
        return time.perf_counter() - self.t0


@dataclass(frozen=True)
class CheckKind:
    """One kind of check (see the module docstring for each field's role)."""

    name: str
    run: Callable[[Entry, RunContext], EntryOutcome]
    description: str = ""
    keys: tuple[str, ...] = ()
    required: tuple[str, ...] = ()
    validate: Callable[[dict[str, Any], str], dict[str, Any]] | None = None
    expectations: tuple[str, ...] = ("pass", "violation")
    needs_claim: bool = True
    result_type: type | None = None
    found: Callable[[EntryOutcome], str] | None = None
    rise: Callable[[Mapping[str, Any], Mapping[str, Any]], str | None] | None = None
    prepare: Callable[[Entry], Any] | None = None
    builtin: bool = field(default=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME_RE.match(self.name):
            raise InputError(f"check kind name must be a word of letters, digits, '_' or '-' starting with a letter, "
                             f"got {self.name!r}")
        if not callable(self.run):
            raise InputError(f"check kind {self.name!r}: run must be callable run(entry, ctx) -> EntryOutcome")
        for attr in ("validate", "found", "rise", "prepare"):
            v = getattr(self, attr)
            if v is not None and not callable(v):
                raise InputError(f"check kind {self.name!r}: {attr} must be callable or None, got {type(v).__name__}")
        if not self.expectations or not all(isinstance(e, str) and e for e in self.expectations):
            raise InputError(f"check kind {self.name!r}: expectations must be non-empty strings, "
                             f"got {self.expectations!r}")
        missing = [k for k in self.required if k not in self.keys]
        if missing:
            raise InputError(f"check kind {self.name!r}: required keys {missing} are not among its keys {self.keys}")


_KINDS: dict[str, CheckKind] = {}
_BUILTINS_LOADED = False


def _ensure_builtins() -> None:
    global _BUILTINS_LOADED
    if not _BUILTINS_LOADED:
        _BUILTINS_LOADED = True
        import dpverify.suites.builtin_kinds  # noqa: F401 -- registers the seven built-in kinds


def register_kind(kind: CheckKind, *, replace: bool = False) -> CheckKind:
    """Add ``kind`` to the registry (returns it, so it can decorate a module-level constant).

    A name already registered raises unless ``replace``; a built-in kind is never replaced.
    """
    if not isinstance(kind, CheckKind):
        raise InputError(f"register_kind takes a dpverify.suites.kinds.CheckKind, got {type(kind).__name__}")
    if not kind.builtin:
        _ensure_builtins()
    old = _KINDS.get(kind.name)
    if old is not None and old is not kind:
        if old.builtin:
            raise InputError(f"check kind {kind.name!r} is built in and cannot be replaced; use another name")
        if not replace:
            raise InputError(f"check kind {kind.name!r} is already registered; pass replace=True to replace it")
    _KINDS[kind.name] = kind
    return kind


def get_kind(name: str) -> CheckKind:
    """The registered kind ``name``; an InputError lists the registered names otherwise."""
    _ensure_builtins()
    kind = _KINDS.get(name)
    if kind is None:
        raise InputError(f"check kind {name!r} is not registered; registered: {', '.join(_KINDS)} (a kind of your "
                         f"own is registered with dpverify.suites.kinds.register_kind in a module listed under "
                         f"[suite] plugins)")
    return kind


def kind_names() -> tuple[str, ...]:
    """Every registered kind, built-ins first."""
    _ensure_builtins()
    return tuple(_KINDS)


def comparison_rule(name: str) -> Callable[[Mapping[str, Any], Mapping[str, Any]], str | None] | None:
    """The comparison rule of kind ``name``, or ``None`` (unknown kinds -- e.g. a report written with a plugin that
    is not loaded -- and kinds without one never report a rise)."""
    _ensure_builtins()
    kind = _KINDS.get(name)
    return None if kind is None else kind.rise


def found_cell_of(name: str) -> Callable[[EntryOutcome], str] | None:
    """The report cell of kind ``name`` (``None``: the ε lower bound is shown)."""
    _ensure_builtins()
    kind = _KINDS.get(name)
    return None if kind is None else kind.found


def make_outcome(entry: Entry, ctx: RunContext, **fields: Any) -> EntryOutcome:
    """An :class:`EntryOutcome` of ``entry`` with the common fields filled from the entry and ``ctx``; ``fields``
    (``outcome``, ``epsilon_lower_bound``, ``witness``, ``details``, ``result``, ...) override them.  ``matched``
    defaults to whether ``outcome`` is one of ``entry.expected`` and ``seconds`` to the time since ``ctx.t0``."""
    budget = entry.budget(ctx.mode)
    base: dict[str, Any] = dict(
        suite=entry.suite, id=entry.id, kind=entry.kind, mechanism=entry.mechanism, claim=entry.claim,
        expectation=entry.expect, true_epsilon=entry.true_epsilon, samples=budget.samples,
        search_samples=budget.search_samples, seed=ctx.seed, epsilon_lower_bound=None, seconds=ctx.seconds,
    )
    base.update(fields)
    base.setdefault("matched", base.get("outcome") in entry.expected)
    if "measured" not in base:
        measured = getattr(base.get("result"), "measured", None)
        base["measured"] = measured if isinstance(measured, Measured) else None
    return EntryOutcome(**base)
