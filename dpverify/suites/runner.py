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

from dpverify.errors import DPVerifyError, SuiteError
from dpverify.suites.imports import resolve
from dpverify.suites.model import Builder, Entry, EntryOutcome, MODES, Suite
from dpverify.suites.schema import is_int, suite_error

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
