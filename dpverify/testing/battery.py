"""``check_mechanism``: one call that runs every check a mechanism's capabilities allow (model: scikit-learn's
``check_estimator``), and ``parametrize_with_checks`` to run them as separate pytest tests.

The battery first checks the sampling contract, then the privacy claim with every kind of check the object
offers (:func:`dpverify.interfaces.capabilities`):

* ``shape`` -- ``mechanism(x, n, rng)`` returns an array with first axis ``n`` for ``n = 1`` and ``n = 7``, the
  same trailing shape and dtype kind for both inputs of every pair, and no ``object`` dtype;
* ``empty`` -- ``n = 0`` gives an empty array of the same trailing shape (or a clear error, never a crash deep
  inside numpy);
* ``rng`` -- the outputs depend on the ``rng`` given and on nothing else
  (:func:`dpverify.statistical.contract.check_rng_contract`);
* ``pickle`` -- the mechanism survives a pickle round trip with the same outputs at the same seed (the sampling
  pool sends it to worker processes);
* ``statistical`` -- the black-box audit on the pairs (always);
* ``exact`` -- the exact loss from ``log_pmf``/``pmf``, when the mechanism has one;
* ``replay`` -- frozen-noise replay, when it has ``release(x, n, noise)``;
* ``ledger`` -- its recorded charges recomposed against the claim, when it has ``privacy_ledger``.

Each check gives a :class:`CheckOutcome` (``passed``, ``failed``, ``skipped`` with the reason, or ``error`` when
the check could not run); :class:`MechanismChecks` gathers them.  A passed privacy check means no violation was
detected at that budget, never that the mechanism is private.

Example::

    from dpverify.testing import check_mechanism
    report = check_mechanism(Laplace(epsilon=0.5), [(0.0, 1.0)], epsilon=0.5, samples=50_000, seed=0)
    print(report.summary())
    report.raise_for_failures()          # AssertionError naming every failed check
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpverify.errors import DPVerifyError, InputError
from dpverify.interfaces import capabilities
from dpverify.neighbours import Pair, as_pairs

__all__ = ["CHECKS", "CheckOutcome", "MechanismChecks", "check_mechanism", "parametrize_with_checks", "run_one_check"]

#: Every check of the battery, in the order it runs.
CHECKS: tuple[str, ...] = ("shape", "empty", "rng", "pickle", "statistical", "exact", "replay", "ledger")
STATUSES: tuple[str, ...] = ("passed", "failed", "skipped", "error")


@dataclass(frozen=True)
class CheckOutcome:
    """One check of the battery: its ``name``, ``status`` (:data:`STATUSES`), a one-line ``detail`` and the check's
    own result object (``None`` for the contract checks)."""

    name: str
    status: str
    detail: str
    result: Any = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status, "detail": self.detail}


@dataclass(frozen=True)
class MechanismChecks:
    """The battery's outcomes for one mechanism."""

    mechanism: str
    capabilities: frozenset[str]
    outcomes: tuple[CheckOutcome, ...]

    @property
    def failed(self) -> list[CheckOutcome]:
        """The checks that failed or could not run."""
        return [o for o in self.outcomes if o.status in ("failed", "error")]

    @property
    def ok(self) -> bool:
        """No check failed or errored (skipped checks do not count)."""
        return not self.failed

    def __getitem__(self, name: str) -> CheckOutcome:
        for o in self.outcomes:
            if o.name == name:
                return o
        raise KeyError(f"no check {name!r} in this battery; ran: {', '.join(o.name for o in self.outcomes)}")

    def summary(self) -> str:
        lines = [f"{self.mechanism} (capabilities: {', '.join(sorted(self.capabilities))})"]
        lines += [f"  {o.status:<7} {o.name:<12} {o.detail}" for o in self.outcomes]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"mechanism": self.mechanism, "capabilities": sorted(self.capabilities),
                "outcomes": [o.to_dict() for o in self.outcomes]}

    def raise_for_failures(self) -> None:
        """Raise ``AssertionError`` listing every failed check (for use in a test)."""
        if self.failed:
            raise AssertionError("checks failed:\n" + "\n".join(f"  {o.name}: {o.detail}" for o in self.failed))


def _name(m: Any) -> str:
    return getattr(m, "__name__", None) or type(m).__name__


def _signature(out: Any, n: int, where: str) -> tuple[tuple[int, ...], str]:
    a = np.asarray(out)
    if a.ndim == 0 or a.shape[0] != n:
        raise AssertionError(f"{where}: expected first axis {n}, got shape {a.shape}")
    if a.dtype == object:
        raise AssertionError(f"{where}: object dtype; return numbers (integer codes or floats)")
    return a.shape[1:], a.dtype.kind


def _shape(mechanism: Any, pairs: Sequence[Pair], seed: int) -> str:
    sigs = set()
    for i, p in enumerate(pairs):
        for side, x in (("x0", p.x0), ("x1", p.x1)):
            for n in (1, 7):
                out = mechanism(x, n, np.random.default_rng([seed, i, n]))
                sigs.add(_signature(out, n, f"pair {i} {side}, n={n}"))
    if len(sigs) > 1:
        raise AssertionError(f"outputs differ in trailing shape or dtype kind across inputs: {sorted(sigs)}")
    shape, kind = sigs.pop()
    return f"outputs of shape (n, {', '.join(map(str, shape))}) dtype kind {kind!r}" if shape else \
        f"outputs of shape (n,) dtype kind {kind!r}"


def _empty(mechanism: Any, pairs: Sequence[Pair], seed: int) -> str:
    x = pairs[0].x0
    try:
        out = np.asarray(mechanism(x, 0, np.random.default_rng(seed)))
    except DPVerifyError as exc:
        return f"n = 0 refused with a clear error: {exc}"
    if out.ndim == 0 or out.shape[0] != 0:
        raise AssertionError(f"n = 0 returned shape {out.shape}, expected an empty first axis")
    ref = np.asarray(mechanism(x, 2, np.random.default_rng(seed)))
    if out.shape[1:] != ref.shape[1:]:
        raise AssertionError(f"n = 0 returned trailing shape {out.shape[1:]}, n = 2 {ref.shape[1:]}")
    return "n = 0 gives an empty array"


def _rng(mechanism: Any, pairs: Sequence[Pair], seed: int) -> str:
    from dpverify.statistical.contract import check_rng_contract

    for i, p in enumerate(pairs):
        check_rng_contract(mechanism, p.x0, seed, f"pair {i} ('{p.label}')")
    return "outputs depend on the rng given and on nothing else"


def _pickle(mechanism: Any, pairs: Sequence[Pair], seed: int) -> str:
    try:
        copy = pickle.loads(pickle.dumps(mechanism))
    except Exception as exc:  # noqa: BLE001 -- named in the outcome
        raise AssertionError(f"cannot be pickled ({type(exc).__name__}: {exc}): define it at module level (not a "
                             f"lambda or a local function) so the sampling pool can send it to workers") from None
    a = np.asarray(mechanism(pairs[0].x0, 5, np.random.default_rng(seed)))
    b = np.asarray(copy(pairs[0].x0, 5, np.random.default_rng(seed)))
    if a.shape != b.shape or not np.array_equal(a, b, equal_nan=a.dtype.kind == "f"):
        raise AssertionError("the unpickled copy gives other outputs at the same seed")
    return "pickle round trip keeps the outputs"


def check_mechanism(
    mechanism: Any,
    pairs: Any,
    *,
    epsilon: float,
    delta: float = 0.0,
    samples: int = 100_000,
    search_samples: int | None = None,
    seed: int = 0,
    checks: Sequence[str] | None = None,
    ledger_input: Any = None,
    workers: int | None = 1,
) -> MechanismChecks:
    """Run the battery (module docstring) on ``mechanism`` and its neighbouring ``pairs`` against the claim
    ``(epsilon, delta)``.

    Parameters
    ----------
    mechanism
        ``mechanism(x, n, rng) -> ndarray``, optionally with ``log_pmf``/``pmf``, ``release``, ``privacy_ledger``.
    pairs
        Neighbouring pairs ``(x0, x1)`` (or :class:`dpverify.neighbours.Pair`), e.g. ``relation.pairs(x)``.
    epsilon, delta
        The claim.
    samples, search_samples, workers
        Budget of the statistical audit (``search_samples`` defaults to the audit's own choice).
    seed
        Every check's seed derives from it: same seed, same outcomes.
    checks
        A subset of :data:`CHECKS` to run (default: all; the capability checks are skipped when the mechanism
        lacks the capability).
    ledger_input
        The input of the ledger check (default: the first pair's ``x0``).

    Returns
    -------
    MechanismChecks
        One :class:`CheckOutcome` per check.

    Raises
    ------
    InputError
        For bad arguments (no pairs, unknown check names); a failing mechanism never raises, it fails a check.
    """
    selected = tuple(CHECKS if checks is None else checks)
    unknown = [c for c in selected if c not in CHECKS]
    if unknown:
        raise InputError(f"unknown checks {unknown}; the battery has {', '.join(CHECKS)}")
    pair_list = as_pairs(pairs)
    if not pair_list:
        raise InputError("check_mechanism needs at least one neighbouring pair (x0, x1)")
    caps = capabilities(mechanism)
    if "mechanism" not in caps:
        raise InputError(f"{_name(mechanism)} is not callable as mechanism(x, n, rng)")

    def statistical() -> CheckOutcome:
        from dpverify.statistical.auditor import audit

        r = audit(mechanism, pair_list, epsilon, delta, samples=samples, search_samples=search_samples, seed=seed,
                  workers=workers)
        status = "failed" if r.violation else "passed"
        return CheckOutcome("statistical", status, f"ε lower bound {r.epsilon_lower_bound:.4g} against the claim "
                            f"{epsilon:g}" + (" (violation)" if r.violation else " (no violation detected)"), r)

    def exact() -> CheckOutcome:
        from dpverify.exact.loss import exact_audit

        r = exact_audit(mechanism, pair_list, epsilon, delta)
        return CheckOutcome("exact", "failed" if r.violation else "passed",
                            f"exact ε {r.epsilon:.6g} against the claim {epsilon:g}", r)

    def replay() -> CheckOutcome:
        from dpverify.code_checks.replay import frozen_noise_replay

        r = frozen_noise_replay(mechanism, pair_list, seed=seed)
        return CheckOutcome("replay", "failed" if r.violation else "passed",
                            "a step exceeds its declared sensitivity" if r.violation else
                            "every step within its declared sensitivity on these pairs", r)

    def ledger() -> CheckOutcome:
        from dpverify.code_checks.ledger import check_ledger

        x = pair_list[0].x0 if ledger_input is None else ledger_input
        r = check_ledger(mechanism, x, epsilon, delta, seed=seed)
        return CheckOutcome("ledger", "failed" if r.violation else "passed",
                            "recorded charges exceed the claim" if r.violation else
                            "recorded charges compose to at most the claim", r)

    contract: dict[str, Callable[[Any, Sequence[Pair], int], str]] = {
        "shape": _shape, "empty": _empty, "rng": _rng, "pickle": _pickle}
    claims: dict[str, tuple[str | None, Callable[[], CheckOutcome]]] = {
        "statistical": (None, statistical), "exact": ("exact", exact), "replay": ("replay", replay),
        "ledger": ("ledger", ledger)}
    outcomes: list[CheckOutcome] = []
    for name in CHECKS:
        if name not in selected:
            continue
        try:
            if name in contract:
                outcomes.append(CheckOutcome(name, "passed", contract[name](mechanism, pair_list, seed)))
                continue
            need, run = claims[name]
            if need is not None and need not in caps:
                method = {"exact": "log_pmf/pmf", "replay": "release(x, n, noise)", "ledger": "privacy_ledger"}[need]
                outcomes.append(CheckOutcome(name, "skipped", f"no {method} method"))
                continue
            outcomes.append(run())
        except AssertionError as exc:
            outcomes.append(CheckOutcome(name, "failed", str(exc)))
        except DPVerifyError as exc:
            status = "failed" if name in contract else "error"
            outcomes.append(CheckOutcome(name, status, f"{type(exc).__name__}: {exc}"))
        except Exception as exc:  # noqa: BLE001 -- a crashing mechanism fails the check, named
            outcomes.append(CheckOutcome(name, "failed" if name in contract else "error",
                                         f"{type(exc).__name__}: {exc}"))
    return MechanismChecks(_name(mechanism), caps, tuple(outcomes))


def parametrize_with_checks(cases: Sequence[tuple[str, Any, Any, dict[str, Any]]],
                            checks: Sequence[str] = CHECKS) -> Any:
    """A ``pytest.mark.parametrize`` over every (case, check): each check of each mechanism is its own test.

    ``cases``: ``(id, mechanism, pairs, kwargs)`` with the keyword arguments of :func:`check_mechanism`
    (``epsilon`` at least).  The decorated test receives ``case`` and ``check`` and calls
    :func:`run_one_check`::

        @parametrize_with_checks([("laplace", Laplace(0.5), [(0.0, 1.0)], {"epsilon": 0.5})])
        def test_mechanism(case, check):
            run_one_check(case, check)
    """
    import pytest

    params = [pytest.param(case, check, id=f"{case[0]}-{check}") for case in cases for check in checks]
    return pytest.mark.parametrize(("case", "check"), params)


def run_one_check(case: tuple[str, Any, Any, dict[str, Any]], check: str) -> CheckOutcome:
    """Run one check of one case (:func:`parametrize_with_checks`); skip the test when the check does not apply,
    fail it when the check fails."""
    import pytest

    _, mechanism, pairs, kwargs = case
    outcome = check_mechanism(mechanism, pairs, checks=[check], **kwargs)[check]
    if outcome.status == "skipped":
        pytest.skip(outcome.detail)
    if outcome.status != "passed":
        raise AssertionError(f"{check}: {outcome.status}: {outcome.detail}")
    return outcome
