"""Validation of the ``[[entry]]`` tables of a suite file: every key, its type and its value, with errors that
name the file, the entry, the key and what to write instead."""


from __future__ import annotations

import difflib
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dpverify.errors import DPVerifyError, SuiteError
from dpverify.suites.imports import IMPORT_RE
from dpverify.suites.values import audit_options, check_alpha, is_int, is_number, suite_error
from dpverify.suites.model import AUDIT_OPTION_KEYS, Budget, Builder, Claim, DEFAULT_LEDGER_RUNS, DEFAULT_REPLAY_RUNS, ENTRY_KEYS, EXPECTATIONS, Entry, ID_RE, NORMS, RELATION_KINDS, REQUIRED_ENTRY_KEYS, Relation, SUPPORTED_KINDS, THEOREM_EXPECTATIONS


def check_keys(table: dict[str, Any], allowed: Sequence[str], where: str, what: str) -> None:
    for key in table:
        if key not in allowed:
            close = difflib.get_close_matches(key, allowed, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            raise suite_error(where, key, f"unknown key in {what}", f"{hint}allowed keys: {', '.join(allowed)}")


def _convert_value(v: Any, where: str, key: str) -> Any:
    """Suite value -> audit input: lists become int64/float64 arrays, scalars stay Python numbers."""
    if isinstance(v, list):
        try:
            arr = np.array(v)
        except ValueError as exc:
            raise suite_error(where, key, f"ragged nested list ({exc})",
                       "every row of a nested list must have the same length") from None
        if arr.dtype.kind in "iu":
            return arr.astype(np.int64)
        if arr.dtype.kind == "f":
            return arr.astype(np.float64)
        if arr.dtype.kind == "b":
            return arr
        raise suite_error(where, key, f"list of {arr.dtype.name if arr.dtype.kind != 'O' else 'mixed values'} "
                   "is not a numeric input",
                   "write numbers (integers become int64 arrays, floats float64; nan/inf allowed), "
                   "with nested lists of equal lengths")
    if isinstance(v, (bool, int, float)):
        return v
    if isinstance(v, dict):
        return {k: _convert_value(x, where, f"{key}.{k}") for k, x in v.items()}
    raise suite_error(where, key, f"value {v!r} is not numeric", "write a number or a list of numbers")


def parse_budget(value: Any, where: str, key: str, fallback: Budget) -> Budget:
    if value is None:
        return fallback
    if not isinstance(value, dict):
        raise suite_error(where, key, f"expected a table, got {value!r}",
                   f"write {key} = {{ samples = 100000, search_samples = 50000 }}")
    check_keys(value, ("samples", "search_samples"), where, f"'{key}'")
    samples = value.get("samples", fallback.samples)
    search = value.get("search_samples", fallback.search_samples)
    if not is_int(samples) or samples < 1:
        raise suite_error(where, f"{key}.samples", f"expected a positive integer, got {samples!r}",
                   "write e.g. samples = 100000")
    if search is not None and (not is_int(search) or search < 1):
        raise suite_error(where, f"{key}.search_samples", f"expected a positive integer, got {search!r}",
                   "write e.g. search_samples = 50000, or leave it out for audit's default")
    return Budget(samples=samples, search_samples=search)


def _sensitivity_claim(value: Any, where: str) -> Claim:
    fix = 'write claim = { sensitivity = 1.0, norm = "l1" } (norm: l1, l2 or linf; default l1)'
    if not isinstance(value, dict):
        raise suite_error(where, "claim", f"expected a table, got {value!r}", fix)
    check_keys(value, ("sensitivity", "norm"), where, "'claim' of a sensitivity entry")
    if "sensitivity" not in value:
        raise suite_error(where, "claim.sensitivity", "missing", fix)
    sens = value["sensitivity"]
    if not is_number(sens) or not (0 < sens < math.inf):
        raise suite_error(where, "claim.sensitivity", f"expected a finite number > 0, got {sens!r}", fix)
    norm = value.get("norm", "l1")
    if norm not in NORMS:
        raise suite_error(where, "claim.norm", f"unknown norm {norm!r}", f"use one of: {', '.join(NORMS)}")
    return Claim(epsilon=None, sensitivity=float(sens), norm=norm)


#: The claim forms beyond (ε, δ) a statistical entry may state (see :mod:`dpverify.profiles`).
PROFILE_FORMS = ("zcdp", "gdp", "rdp", "from_target")


def _profile_claim(value: dict[str, Any], where: str, kind: str) -> Claim:
    """``claim = { zcdp = ρ }``, ``{ gdp = μ }``, ``{ rdp = { alpha = α, epsilon = ε } }`` or ``{ from_target = true }``
    (statistical entries only): validated here, audited on the (ε, δ(ε)) profile they imply."""
    fix = ('write claim = { zcdp = 0.5 }, { gdp = 1.0 }, { rdp = { alpha = 2.0, epsilon = 0.5 } } or '
           '{ from_target = true } (one of them)')
    if kind != "statistical":
        raise suite_error(where, "claim", f"a '{kind}' entry takes an (epsilon, delta) claim",
                          "zCDP, GDP, Renyi-DP and target claims are audited by statistical entries; "
                          "write claim = { epsilon = ..., delta = ... }")
    forms = [k for k in value if k in PROFILE_FORMS]
    if len(value) != 1 or len(forms) != 1:
        raise suite_error(where, "claim", f"expected exactly one claim form, got keys {sorted(value)}", fix)
    form = forms[0]
    if form == "from_target":
        if value[form] is not True:
            raise suite_error(where, "claim.from_target", f"expected true, got {value[form]!r}",
                              "write claim = { from_target = true } (the mechanism's claim() gives the claim)")
        return Claim(epsilon=None, from_target=True)
    from dpverify.profiles import parse_claim

    try:
        return Claim(epsilon=None, profile=parse_claim(value))
    except DPVerifyError as exc:
        raise suite_error(where, "claim", str(exc), fix) from None


def _claim(value: Any, where: str, kind: str = "statistical") -> Claim:
    if kind == "sensitivity":
        return _sensitivity_claim(value, where)
    if kind == "replay" and value is None:
        return Claim(epsilon=None)
    fix = "write claim = { epsilon = 0.5 } or claim = { epsilon = 0.5, delta = 1e-6 }"
    if not isinstance(value, dict):
        raise suite_error(where, "claim", f"expected a table, got {value!r}", fix)
    if any(k in PROFILE_FORMS for k in value):
        return _profile_claim(value, where, kind)
    check_keys(value, ("epsilon", "delta"), where, "'claim'")
    if "epsilon" not in value:
        raise suite_error(where, "claim.epsilon", "missing", fix + " (or a zcdp, gdp, rdp or from_target claim)")
    eps = value["epsilon"]
    if not is_number(eps) or not (0 < eps < math.inf):
        raise suite_error(where, "claim.epsilon", f"expected a finite number > 0, got {eps!r}", fix)
    delta = value.get("delta", 0.0)
    if not is_number(delta) or not (0 <= delta < 1):
        raise suite_error(where, "claim.delta", f"expected a number in [0, 1), got {delta!r}", fix)
    return Claim(epsilon=float(eps), delta=float(delta))


def _deltas(raw: dict[str, Any], where: str, claim: Claim) -> tuple[float, ...] | None:
    """The ``deltas`` of a profile claim's points (a list of numbers in (0, 1)), or ``None``."""
    if "deltas" not in raw:
        return None
    value = raw["deltas"]
    if not claim.is_profile:
        raise suite_error(where, "deltas", "only a zcdp, gdp, rdp or from_target claim is audited at profile points",
                          "remove deltas, or state the claim in one of those forms")
    if (not isinstance(value, list) or not value
            or not all(is_number(d) and 0 < d < 1 for d in value)):
        raise suite_error(where, "deltas", f"expected a non-empty list of numbers in (0, 1), got {value!r}",
                          "write e.g. deltas = [0.1, 0.01, 0.001]")
    return tuple(float(d) for d in value)


def _relation(value: Any, where: str) -> Relation:
    fix_kind = ('write relation = { kind = "linf", radius = 1.0 } (kinds: linf, l1 with radius; '
                'add_remove, replace with optional candidates = [...])')
    if not isinstance(value, dict):
        raise suite_error(where, "relation", f"expected a table, got {value!r}", fix_kind)
    kind = value.get("kind")
    if kind is None:
        raise suite_error(where, "relation.kind", "missing", fix_kind)
    if kind not in RELATION_KINDS:
        from dpverify.neighbours import relation_names

        if kind not in relation_names():
            raise suite_error(where, "relation.kind", f"unknown relation kind {kind!r}",
                              f"use one of: {', '.join(relation_names())} (a user relation is registered with "
                              f"dpverify.neighbours.register_relation in a module listed in [suite] plugins)")
        params = {k: _convert_value(v, where, f"relation.{k}") for k, v in value.items() if k != "kind"}
        return Relation(kind=kind, params=params)
    if kind in ("linf", "l1"):
        check_keys(value, ("kind", "radius"), where, f"relation '{kind}'")
        radius = value.get("radius")
        if radius is None:
            raise suite_error(where, "relation.radius", f"missing (relation '{kind}' needs a radius)",
                       f'write relation = {{ kind = "{kind}", radius = 1.0 }}')
        if not is_number(radius) or not (0 < radius < math.inf):
            raise suite_error(where, "relation.radius", f"expected a finite number > 0, got {radius!r}",
                       f'write relation = {{ kind = "{kind}", radius = 1.0 }}')
        return Relation(kind=kind, radius=float(radius))
    check_keys(value, ("kind", "candidates"), where, f"relation '{kind}'")
    cands = value.get("candidates")
    if cands is None:
        return Relation(kind=kind)
    if not isinstance(cands, list) or not cands:
        raise suite_error(where, "relation.candidates", f"expected a non-empty list, got {cands!r}",
                   "write candidates = [0.0, 1.0] (records that may be added or substituted)")
    return Relation(kind=kind, candidates=tuple(_convert_value(c, where, "relation.candidates")
                                                 for c in cands))


def _builder(value: dict[str, Any], where: str, key: str) -> Builder:
    fix = f'write {key} = {{ build = "module:function", params = {{ ... }} }}'
    check_keys(value, ("build", "params"), where, f"{key} builder")
    target = value.get("build")
    if not isinstance(target, str) or not IMPORT_RE.match(target):
        raise suite_error(where, f"{key}.build", f"expected an import path \"module:attribute\", got {target!r}", fix)
    params = value.get("params", {})
    if not isinstance(params, dict):
        raise suite_error(where, f"{key}.params", f"expected a table, got {params!r}", fix)
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
        raise suite_error(where, "pairs", f"expected a non-empty list of [x0, x1], got {value!r}", fix)
    out = []
    for i, p in enumerate(value):
        if not isinstance(p, list) or len(p) != 2:
            raise suite_error(where, f"pairs[{i}]", f"expected a list [x0, x1] of two inputs, got {p!r}", fix)
        out.append((_convert_value(p[0], where, f"pairs[{i}][0]"),
                    _convert_value(p[1], where, f"pairs[{i}][1]")))
    return tuple(out)


def _true_epsilon(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, str) and value.strip().lower() in ("inf", "+inf", "infinity"):
        return math.inf
    if is_number(value) and value >= 0:
        return float(value)
    raise suite_error(where, "true_epsilon", f"expected a number >= 0 or \"inf\", got {value!r}",
               'write true_epsilon = 0.1 or true_epsilon = "inf", or leave it out when unknown')


def _check_random_pairs(random_pairs: Any, where: str) -> None:
    if not is_int(random_pairs) or random_pairs < 0:
        raise suite_error(where, "random_pairs", f"expected an integer >= 0, got {random_pairs!r}",
                          "write random_pairs = 10")


def _mechanism_params_description(raw: dict[str, Any], where: str) -> tuple[str, dict[str, Any], str]:
    """The ``mechanism`` import path, the ``params`` table (lists as arrays) and the ``description`` of an entry."""
    mech = raw["mechanism"]
    if not isinstance(mech, str) or not IMPORT_RE.match(mech):
        raise suite_error(where, "mechanism", f"expected an import path \"module:attribute\", got {mech!r}",
                          'write e.g. mechanism = "algorithms.classic.laplace:Laplace"')
    params = raw.get("params", {})
    if not isinstance(params, dict):
        raise suite_error(where, "params", f"expected a table, got {params!r}", "write params = { epsilon = 0.1 }")
    params = {k: _convert_value(v, where, f"params.{k}") if isinstance(v, list) else v for k, v in params.items()}
    description = raw.get("description", "")
    if not isinstance(description, str):
        raise suite_error(where, "description", f"expected a string, got {description!r}", 'write description = "..."')
    return mech, params, description


def _expectation(value: Any, allowed: Sequence[str], where: str, what: str, fix: str) -> str:
    """The entry's expectation: one outcome, or a list of distinct outcomes any of which matches (for a check whose
    right outcome is a coin, e.g. a theorem whose bound is attained exactly: ``holds`` is as true there as
    ``inconclusive``).  A list is kept as its outcomes joined by ``"|"`` (see :attr:`Entry.expected`)."""
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
        raise suite_error(where, "expect", f"expected an outcome or a non-empty list of outcomes, got {value!r}", fix)
    for v in values:
        if v not in allowed:
            raise suite_error(where, "expect", f"unknown expectation {v!r} for {what}", fix)
    if len(set(values)) != len(values):
        raise suite_error(where, "expect", f"an outcome is listed twice in {value!r}", "list each outcome once")
    return "|".join(values)


def parse_entry(raw: Any, index: int, suite: str, path: Path, budgets: dict[str, Budget],
           import_paths: tuple[Path, ...]) -> Entry:
    where = f"{path}: entry #{index + 1}"
    if not isinstance(raw, dict):
        raise suite_error(where, None, "is not a table", "write each entry as an [[entry]] table")
    eid = raw.get("id")
    if eid is not None:
        if not isinstance(eid, str) or not ID_RE.match(eid):
            raise suite_error(where, "id", f"invalid id {eid!r}",
                       "use letters, digits and _ . + - (no spaces or '/'), e.g. id = \"laplace-eps1\"")
        where = f"{path}: entry '{eid}'"
    if isinstance(raw.get("kind"), str) and raw["kind"] not in SUPPORTED_KINDS:
        return _registered_kind_entry(raw, suite, path, where, budgets, import_paths)
    check_keys(raw, ENTRY_KEYS, where, "[[entry]]")
    raw = _function_alias(raw, where)
    for key in REQUIRED_ENTRY_KEYS:
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
            raise suite_error(where, key, "missing required key", f"add {examples[key]}")
    kind = raw["kind"]
    if kind not in SUPPORTED_KINDS:
        raise suite_error(where, "kind", f"kind {kind!r} is not supported",
                   f"supported kinds: {', '.join(SUPPORTED_KINDS)}")
    mech, params, description = _mechanism_params_description(raw, where)
    if kind == "theorem":
        expect = _expectation(raw["expect"], THEOREM_EXPECTATIONS, where, "a theorem entry",
                              'write expect = "holds", "violated" or "inconclusive" (the verdict measured), or a '
                              'list of them, e.g. ["inconclusive", "holds"] for a bound that is attained')
        return _theorem_entry(raw, suite, path, where, mech, params, expect, description, budgets, import_paths)
    expect = _expectation(raw["expect"], EXPECTATIONS, where, f"a '{kind}' entry",
                          'write expect = "pass" (no violation expected) or expect = "violation"')

    has_pairs, has_input, has_rel = "pairs" in raw, "input" in raw, "relation" in raw
    pairs = relation = inp = None
    random_pairs = raw.get("random_pairs", 0)
    search, utilities, sensitivity = _kind_options(raw, kind, where)
    runs = _runs(raw, kind, where)
    if kind == "sensitivity":
        if not has_rel:
            raise suite_error(where, "relation", "a sensitivity entry needs the neighbour relation its claim is made for",
                       'add e.g. relation = { kind = "add_remove" } or relation = { kind = "linf", radius = 1.0 }')
        relation = _relation(raw["relation"], where)
        if has_input:
            inp = _value_or_builder(raw["input"], where, "input")
        if has_pairs:
            pairs = _pairs(raw["pairs"], where)
        if not has_input and not (search or {}).get("domain"):
            raise suite_error(where, "input", "a sensitivity entry needs a base input, or search.domain for a dataset "
                       "relation", "add input = [...] or search = { domain = [0.0, 1.0] }")
        _check_random_pairs(random_pairs, where)
        has_pairs = has_input = has_rel = False
    if kind == "ledger":
        inp = _ledger_input(raw, where)
        has_pairs = has_input = has_rel = False
    if kind == "em":
        inp = _value_or_builder(raw["input"], where, "input")
        has_pairs = has_input = has_rel = False
    elif kind == "exact" and search is not None and not (has_input and has_rel):
        raise suite_error(where, "search", "a worst-pair search needs an input and a relation",
                   'write input = ... and relation = { kind = "linf", radius = 1.0 } instead of pairs')
    if has_pairs and has_input:
        raise suite_error(where, "input", "gives both pairs and an input",
                   "keep either pairs = [[x0, x1], ...] or input = ... with relation = {...}, not both")
    if kind in ("em", "sensitivity", "ledger"):
        pass
    elif has_pairs:
        pairs = _pairs(raw["pairs"], where)
        if has_rel:
            relation = _relation(raw["relation"], where)
        if "random_pairs" in raw:
            raise suite_error(where, "random_pairs", "needs input and relation, but the entry gives explicit pairs",
                       "remove random_pairs, or replace pairs by input = ... and relation = {...}")
    elif has_input or has_rel:
        if not has_rel:
            raise suite_error(where, "relation", "input given without a neighbour relation",
                       'add e.g. relation = { kind = "linf", radius = 1.0 }')
        if not has_input:
            raise suite_error(where, "input", "relation given without an input",
                       "add e.g. input = [1.0, 1.0, 1.0]")
        inp = _value_or_builder(raw["input"], where, "input")
        relation = _relation(raw["relation"], where)
        _check_random_pairs(random_pairs, where)
    else:
        raise suite_error(where, "pairs", "no inputs: the entry gives neither pairs nor input/relation",
                   'add pairs = [[x0, x1], ...], or input = [...] with relation = { kind = "linf", radius = 1.0 }')

    options = audit_options(raw, where)

    claim = _claim(raw.get("claim"), where, kind)
    return Entry(
        suite=suite, path=path, id=eid, kind=kind, mechanism=mech, params=params,
        claim=claim, deltas=_deltas(raw, where, claim), expect=expect, runs=runs,
        quick=parse_budget(raw.get("quick"), where, "quick", budgets["quick"]),
        full=parse_budget(raw.get("full"), where, "full", budgets["full"]),
        true_epsilon=_true_epsilon(raw.get("true_epsilon"), where), description=description,
        pairs=pairs, input=inp, relation=relation,
        random_pairs=random_pairs if (inp is not None or kind == "sensitivity") and kind != "em" else 0,
        search=search, utilities=utilities, sensitivity=sensitivity,
        import_paths=import_paths, **options,
    )


#: The keys every entry of a registered (non-built-in) kind may take, besides the kind's own ``keys``.
REGISTERED_KIND_KEYS = ("id", "kind", "mechanism", "params", "claim", "expect", "description", "true_epsilon",
                        "pairs", "input", "relation", "random_pairs", "alpha", "quick", "full")


def _registered_kind_entry(raw: dict[str, Any], suite: str, path: Path, where: str, budgets: dict[str, Budget],
                           import_paths: tuple[Path, ...]) -> Entry:
    """An entry of a kind registered with :func:`dpverify.suites.kinds.register_kind`: the common keys validated
    here, the kind's own keys by its ``validate`` (into ``Entry.options``)."""
    from dpverify.suites.kinds import get_kind, kind_names

    name = raw["kind"]
    if name not in kind_names():
        raise suite_error(where, "kind", f"kind {name!r} is not supported",
                          f"supported kinds: {', '.join(kind_names())} (a kind of your own is registered with "
                          f"dpverify.suites.kinds.register_kind in a module listed under [suite] plugins)")
    kind = get_kind(name)
    check_keys(raw, REGISTERED_KIND_KEYS + kind.keys, where, f"[[entry]] of kind '{name}'")
    required = ("id", "mechanism", "expect") + (("claim",) if kind.needs_claim else ()) + kind.required
    for key in required:
        if key not in raw:
            raise suite_error(where, key, f"missing required key of a '{name}' entry",
                              f"add {key} = ... (see the documentation of the '{name}' kind)")
    mech, params, description = _mechanism_params_description(raw, where)
    expect = _expectation(raw["expect"], kind.expectations, where, f"a '{name}' entry",
                          f"write expect = one of {', '.join(repr(e) for e in kind.expectations)}, or a list of them")
    pairs = _pairs(raw["pairs"], where) if "pairs" in raw else None
    inp = _value_or_builder(raw["input"], where, "input") if "input" in raw else None
    relation = _relation(raw["relation"], where) if "relation" in raw else None
    random_pairs = raw.get("random_pairs", 0)
    _check_random_pairs(random_pairs, where)
    alpha = check_alpha(raw, where)
    options = {k: _convert_value(raw[k], where, k) for k in kind.keys if k in raw}
    if kind.validate is not None:
        try:
            options = dict(kind.validate(options, where))
        except SuiteError:
            raise
        except DPVerifyError as exc:
            raise SuiteError(f"{where}: {exc}") from None
    claim = _claim(raw["claim"], where, "statistical") if "claim" in raw else Claim(epsilon=None)
    return Entry(
        suite=suite, path=path, id=raw["id"], kind=name, mechanism=mech, params=params, claim=claim, expect=expect,
        quick=parse_budget(raw.get("quick"), where, "quick", budgets["quick"]),
        full=parse_budget(raw.get("full"), where, "full", budgets["full"]),
        true_epsilon=_true_epsilon(raw.get("true_epsilon"), where), description=description,
        pairs=pairs, input=inp, relation=relation, random_pairs=random_pairs,
        alpha=alpha, import_paths=import_paths, options=options,
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
            raise suite_error(where, key, f"a theorem entry takes no {key} ({why})",
                       f"remove {key}; a theorem entry takes {', '.join(_THEOREM_KEYS)}")
    sweep = None
    if "sweep" in raw:
        fix = 'write sweep = { param = "epsilon", values = [0.5, 1.0, 2.0] }'
        value = raw["sweep"]
        if not isinstance(value, dict):
            raise suite_error(where, "sweep", f"expected a table, got {value!r}", fix)
        check_keys(value, ("param", "values"), where, "sweep")
        param, values = value.get("param"), value.get("values")
        if not isinstance(param, str) or not param:
            raise suite_error(where, "sweep.param", f"expected a parameter name, got {param!r}", fix)
        if param in params:
            raise suite_error(where, "sweep.param", f"{param!r} is also in params", f"remove {param} from params")
        if not isinstance(values, list) or not values:
            raise suite_error(where, "sweep.values", f"expected a non-empty list, got {values!r}", fix)
        sweep = (param, tuple(_convert_value(v, where, "sweep.values") if isinstance(v, list) else v
                              for v in values))
    alpha = check_alpha(raw, where)
    batch_size = raw.get("batch_size")
    if batch_size is not None and (not is_int(batch_size) or batch_size < 1):
        raise suite_error(where, "batch_size", f"expected a positive integer, got {batch_size!r}", "write batch_size = 1000")
    return Entry(
        suite=suite, path=path, id=raw["id"], kind="theorem", mechanism=mech, params=params,
        claim=Claim(epsilon=None), expect=expect, description=description,
        quick=parse_budget(raw.get("quick"), where, "quick", budgets["quick"]),
        full=parse_budget(raw.get("full"), where, "full", budgets["full"]),
        alpha=alpha, batch_size=batch_size, import_paths=import_paths,
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
        raise suite_error(where, "function", "only sensitivity entries name a function",
                   'write mechanism = "module:attribute" instead')
    if "mechanism" in raw:
        raise suite_error(where, "function", "gives both function and mechanism", "keep function = \"module:attribute\"")
    out = dict(raw)
    out["mechanism"] = out.pop("function")
    return out


def _runs(raw: dict[str, Any], kind: str, where: str) -> int:
    default = DEFAULT_LEDGER_RUNS if kind == "ledger" else DEFAULT_REPLAY_RUNS
    if "runs" not in raw:
        return default
    if kind not in ("replay", "ledger"):
        raise suite_error(where, "runs", f"only replay and ledger entries take runs (this entry is {kind!r})", "remove runs")
    runs = raw["runs"]
    if not is_int(runs) or runs < 1:
        raise suite_error(where, "runs", f"expected an integer >= 1, got {runs!r}", f"write runs = {default}")
    return int(runs)


#: Keys a ledger entry refuses: it runs on one input and draws no samples for a test.
_LEDGER_UNUSED_KEYS = ("pairs", "relation", "random_pairs", "quick", "full", *AUDIT_OPTION_KEYS)


def _ledger_input(raw: dict[str, Any], where: str) -> Any:
    """The input of a ``ledger`` entry (a value or a builder); the keys it has no use for are errors."""
    for key in _LEDGER_UNUSED_KEYS:
        if key in raw:
            on_pairs = key in ("pairs", "relation", "random_pairs")
            what = ("runs privacy_ledger(x, rng) on one input, not on pairs" if on_pairs
                    else "draws no samples and runs no statistical test")
            raise suite_error(where, key, f"a ledger entry {what}",
                       f"remove {key}; a ledger entry takes input = [...] and optionally runs = {DEFAULT_LEDGER_RUNS}")
    if "input" not in raw:
        raise suite_error(where, "input", "missing: a ledger entry needs the input privacy_ledger(x, rng) runs on",
                   'add input = [...] or input = { build = "module:function", params = { ... } }')
    return _value_or_builder(raw["input"], where, "input")


def _kind_options(raw: dict[str, Any], kind: str, where: str) -> tuple[dict[str, Any] | None, Any, float | None]:
    """Validate the keys that belong to one kind: ``search`` (exact), ``utilities``/``sensitivity`` (em)."""
    if kind not in ("exact", "sensitivity") and "search" in raw:
        raise suite_error(where, "search", f"only exact and sensitivity entries search for pairs (this entry is {kind!r})",
                   'remove search, or write kind = "exact"')
    keys = dict(_SEARCH_KEYS, **_SENSITIVITY_SEARCH_KEYS) if kind == "sensitivity" else _SEARCH_KEYS
    if kind != "em":
        for key in ("utilities", "sensitivity"):
            if key in raw:
                raise suite_error(where, key, f"only em entries take {key} (this entry is {kind!r})",
                           f'remove {key}, or write kind = "em"')
        search = raw.get("search")
        if search is None:
            return None, None, None
        if not isinstance(search, dict):
            raise suite_error(where, "search", f"expected a table, got {search!r}",
                       "write search = { base_radius = 2.0, restarts = 8 }")
        check_keys(search, tuple(keys), where, "search")
        out: dict[str, Any] = {}
        for key, value in search.items():
            typ = keys[key]
            ok = {"number": is_number(value) and value >= 0, "int": is_int(value) and value >= 0,
                  "bool": isinstance(value, bool), "list": isinstance(value, list)}[typ]
            if not ok:
                raise suite_error(where, f"search.{key}", f"expected {'a number >= 0' if typ == 'number' else typ}, "
                           f"got {value!r}", "see the module docstring of dpverify.suites for the search keys")
            out[key] = _convert_value(value, where, f"search.{key}") if typ == "list" else value
        return out, None, None
    for key in ("pairs", "relation", "random_pairs"):
        if key in raw:
            raise suite_error(where, key, "an em entry takes an input (the sampler's input), not pairs or a relation",
                       "remove it; give input = [...] and optionally utilities = [...], sensitivity = 1.0")
    if "input" not in raw:
        raise suite_error(where, "input", "missing: an em entry needs the sampler's input",
                   "add input = [0.0, 1.0, 2.0] (for a sampler whose input is the utility vector)")
    utilities = raw.get("utilities")
    if utilities is not None:
        utilities = _value_or_builder(utilities, where, "utilities")
    sensitivity = raw.get("sensitivity", 1.0)
    if not is_number(sensitivity) or not (0 < sensitivity < math.inf):
        raise suite_error(where, "sensitivity", f"expected a finite number > 0, got {sensitivity!r}",
                   "write sensitivity = 1.0")
    return None, utilities, float(sensitivity)
