"""``dpverify audit TARGET``: a one-shot audit of a single mechanism or library target from the command line.

The command turns its arguments into a one-entry suite file, ``DIR/audit.toml`` -- the same entry a user would write
to keep the claim as a regression test (copy it into a suite) -- and runs it exactly as ``dpverify run DIR/audit.toml``
does: same validation and error messages, same report files (``report.json``, ``report.md``, ``report.html``).  It
then prints the verdict sentence of the result (what ``print(result)`` gives in Python).

``TARGET`` is an import path ``module:attribute`` (with ``--import-path DIR`` for a module that is not installed):

* a mechanism ``mechanism(x, n, rng)`` (a function, or a class instantiated with the ``--param`` values);
* with ``--per-call``, a function that makes **one release per call**, ``release(x, **params, random_state=...)``
  (a library call such as ``diffprivlib.tools.mean``), wrapped in :class:`dpverify.libraries.percall.PerCall`;
  ``--seed-arg NAME`` names the keyword the library is seeded through, ``--seed-arg none`` says it cannot be
  seeded (the run is then not reproducible, the bound still holds);
* a ready-made library target, e.g. ``dpverify.libraries.diffprivlib_targets:DiffprivlibTool`` with
  ``--param tool=mean --param epsilon=1 --param bounds=[0,1]``, or
  ``dpverify.libraries.opendp_targets:OpenDPMeasurement`` with ``--target-claim`` (its own privacy map gives the
  claim).

The claim is one of ``--epsilon E [--delta D]``, ``--zcdp RHO``, ``--gdp MU``, ``--rdp ALPHA EPS`` or
``--target-claim``; the inputs are ``--pair X0 X1`` (repeatable; JSON values) or ``--input X --relation JSON``.
Exit status 0 when no violation is detected, 1 on a violation, 2 on usage errors.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from dpverify.errors import InputError
from dpverify.statistical.ratio_tests import RATIO_TESTS

__all__ = ["add_audit_parser", "write_audit_suite", "AUDIT_SUITE_NAME"]

AUDIT_SUITE_NAME = "audit.toml"
PER_CALL = "dpverify.libraries.percall:PerCall"


def _json_value(text: str) -> Any:
    """A command-line value: JSON when it parses (numbers, lists, objects, true/false), else the string itself."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _param(text: str) -> tuple[str, Any]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r} (e.g. --param epsilon=1.0)")
    return key.strip(), _json_value(value)


def add_audit_parser(sub: Any, non_negative_int: Any, positive_int: Any) -> argparse.ArgumentParser:
    """Add the ``audit`` subcommand to ``sub`` (the subparsers of :func:`dpverify.cli.commands.build_parser`)."""
    cmd = sub.add_parser(
        "audit", help="audit one mechanism or library target (one-shot)",
        description="Audit one mechanism or library target against a claim and write the same report files as "
        "'run' (plus DIR/audit.toml, the suite entry that reruns it).  'pass' means no violation detected at "
        "this budget, not a proof of privacy.  Exit status 0: no violation detected; 1: violation; 2: usage error.")
    cmd.add_argument("target", metavar="TARGET", help="import path module:attribute of the mechanism or target")
    cmd.add_argument("--param", action="append", type=_param, default=[], metavar="KEY=VALUE",
                     help="a parameter of TARGET (JSON value, else a string); repeat for more")
    cmd.add_argument("--per-call", action="store_true",
                     help="TARGET makes one release per call: release(x, **params, random_state=...)")
    cmd.add_argument("--seed-arg", default="random_state", metavar="NAME",
                     help="with --per-call: the keyword TARGET is seeded through (default random_state; 'none': "
                     "it draws its own randomness and the run cannot be reproduced)")
    cmd.add_argument("--pair", nargs=2, action="append", default=[], metavar=("X0", "X1"),
                     help="a pair of neighbouring inputs (JSON values); repeat for more")
    cmd.add_argument("--input", metavar="X", help="a base input (JSON) whose neighbours --relation builds")
    cmd.add_argument("--relation", metavar="JSON",
                     help='the neighbour relation, e.g. \'{"kind": "add_remove"}\' or \'{"kind": "linf", "radius": 1}\'')
    claim = cmd.add_mutually_exclusive_group(required=True)
    claim.add_argument("--epsilon", type=float, metavar="E", help="claim: (E, --delta)-DP")
    claim.add_argument("--zcdp", type=float, metavar="RHO", help="claim: RHO-zCDP")
    claim.add_argument("--gdp", type=float, metavar="MU", help="claim: MU-GDP")
    claim.add_argument("--rdp", type=float, nargs=2, metavar=("ALPHA", "EPS"), help="claim: (ALPHA, EPS)-Renyi DP")
    claim.add_argument("--target-claim", action="store_true", help="claim: the one TARGET states (its claim())")
    cmd.add_argument("--delta", type=float, default=0.0, metavar="D", help="with --epsilon (default 0)")
    cmd.add_argument("--deltas", type=float, nargs="+", metavar="D",
                     help="profile claims: the deltas of the profile points audited (default 0.1 0.01 0.001)")
    cmd.add_argument("--samples", type=positive_int, default=100_000, metavar="N",
                     help="fresh outputs per input in the test (default 100000)")
    cmd.add_argument("--search-samples", type=positive_int, default=None, metavar="N",
                     help="outputs per input in the event search (default min(samples, 200000))")
    cmd.add_argument("--alpha", type=float, default=None, metavar="A", help="error level (default 0.05)")
    cmd.add_argument("--float-bits", action="store_true", help="also search events on the low-order float bits")
    cmd.add_argument("--ratio-test", choices=RATIO_TESTS, default=None,
                     help="how the finalists' fresh counts become a bound: two Clopper-Pearson bounds (default) or "
                          "'auto', the exact conditional test on Poisson-sized samples where the search projects it "
                          "tighter (more power at the same alpha; false alarms on an exactly tight claim near alpha)")
    cmd.add_argument("--import-path", action="append", default=[], metavar="DIR",
                     help="a directory to import TARGET's module from (repeatable)")
    cmd.add_argument("--seed", type=non_negative_int, default=0, metavar="N", help="run seed (default 0)")
    cmd.add_argument("--workers", type=positive_int, default=None, metavar="N",
                     help="sampling processes (default: all cores; results do not depend on it)")
    cmd.add_argument("--out", default="dpverify-audit", metavar="DIR",
                     help="report directory (default: dpverify-audit)")
    return cmd


def _toml(value: Any) -> str:
    """``value`` as a TOML value (strings, numbers, booleans, lists, tables of those)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(str(k))} = {_toml(v)}" for k, v in value.items()) + " }"
    if value is None:
        raise InputError("null is not a value a suite can hold; leave the parameter out instead")
    raise InputError(f"cannot write {type(value).__name__} {value!r} into a suite file")


def _claim(args: argparse.Namespace) -> dict[str, Any]:
    if args.target_claim:
        return {"from_target": True}
    if args.zcdp is not None:
        return {"zcdp": args.zcdp}
    if args.gdp is not None:
        return {"gdp": args.gdp}
    if args.rdp is not None:
        return {"rdp": {"alpha": args.rdp[0], "epsilon": args.rdp[1]}}
    claim: dict[str, Any] = {"epsilon": args.epsilon}
    if args.delta:
        claim["delta"] = args.delta
    return claim


def audit_entry(args: argparse.Namespace) -> dict[str, Any]:
    """The suite entry (a dict of TOML values) that the ``audit`` arguments describe."""
    params = dict(args.param)
    mechanism = args.target
    if args.per_call:
        # a suite file has no null: "none" says the release cannot be seeded (PerCall reads it as None)
        seed_arg = "none" if args.seed_arg.lower() == "none" else args.seed_arg
        params = {"release": args.target, "seed_arg": seed_arg, **params}
        mechanism = PER_CALL
    entry: dict[str, Any] = {"id": "audit", "kind": "statistical", "mechanism": mechanism, "params": params,
                             "claim": _claim(args), "expect": "pass"}
    if args.pair and (args.input is not None or args.relation is not None):
        raise InputError("give either --pair X0 X1 or --input X with --relation, not both")
    if args.pair:
        entry["pairs"] = [[_json_value(a), _json_value(b)] for a, b in args.pair]
    elif args.input is not None and args.relation is not None:
        relation = _json_value(args.relation)
        if not isinstance(relation, dict):
            raise InputError(f"--relation must be a JSON object such as '{{\"kind\": \"add_remove\"}}', "
                             f"got {args.relation!r}")
        entry["input"], entry["relation"] = _json_value(args.input), relation
    else:
        raise InputError("no inputs: give --pair X0 X1 (repeatable), or --input X with --relation JSON")
    if args.deltas:
        entry["deltas"] = list(args.deltas)
    if args.alpha is not None:
        entry["alpha"] = args.alpha
    if args.float_bits:
        entry["float_bits"] = True
    if args.ratio_test is not None:
        entry["ratio_test"] = args.ratio_test
    budget: dict[str, Any] = {"samples": args.samples}
    if args.search_samples is not None:
        budget["search_samples"] = args.search_samples
    entry["quick"] = budget
    entry["full"] = budget
    return entry


def write_audit_suite(args: argparse.Namespace) -> Path:
    """Write ``DIR/audit.toml``, the one-entry suite of the ``audit`` arguments, and return its path."""
    entry = audit_entry(args)
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create the report directory {out}: {exc}; pass another --out DIR") from None
    import_paths = [str(Path(p).resolve()) for p in args.import_path]
    lines = ["# written by `dpverify audit`: rerun with `dpverify run " + str(out / AUDIT_SUITE_NAME) + "`,",
             "# or copy the entry into a suite of your own to keep the claim as a regression test",
             "[suite]", 'name = "audit"', f"description = {_toml('one-shot audit of ' + args.target)}"]
    if import_paths:
        lines.append(f"import_paths = {_toml(import_paths)}")
    lines += ["", "[[entry]]"] + [f"{key} = {_toml(value)}" for key, value in entry.items()]
    path = out / AUDIT_SUITE_NAME
    try:
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc}; pass another --out DIR") from None
    return path
