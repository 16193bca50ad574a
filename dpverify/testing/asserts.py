"""Privacy and utility claims as test assertions (issue 8, point 4).

In any test suite (pytest, unittest, a plain script)::

    import dpverify
    from dpverify.neighbours import LInfNeighbours

    def test_noisy_count_is_private():
        dpverify.assert_private(noisy_count, LInfNeighbours(1.0).pairs(3.0), epsilon=1.0,
                                samples=200_000, seed=0)

:func:`assert_private` runs :func:`dpverify.audit` and raises ``AssertionError`` with the audit's violation
text -- the witness pair, the event, the ε lower bound and the seed that reproduces it -- when the audit finds
a violation of the claim.  :func:`assert_theorem` runs :func:`dpverify.check_theorem` and raises unless the
verdict is ``holds``.  The pytest plugin (:mod:`dpverify.testing.pytest_plugin`) adds a ``dp_audit`` fixture and
marker on top of them.

Both default to ``seed=0``: a test gives the same outcome on every run, on any number of workers.  A passing
:func:`assert_private` means *no violation detected at this sample budget*, never that the mechanism is
differentially private.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Sequence

from dpverify.statistical.auditor import DEFAULT_SAMPLES, audit
from dpverify.errors import InputError
from dpverify.statistical.result import AuditResult
from dpverify.theorems.check import TheoremResult, check_theorem

__all__ = ["assert_private", "assert_theorem"]

_SHOWN = 200  # characters of an input shown in a failure message


def _options_of(fn: Callable[..., Any], fixed: Sequence[str]) -> tuple[str, ...]:
    """The keyword options of ``fn`` other than those ``fixed`` by the caller."""
    return tuple(name for name, p in inspect.signature(fn).parameters.items()
                 if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and name not in fixed)


_AUDIT_OPTIONS = _options_of(audit, ("mechanism", "pairs", "epsilon", "delta", "samples", "seed", "alpha"))
_THEOREM_OPTIONS = _options_of(check_theorem, ("theorem", "runs", "seed"))


def _check_options(caller: str, options: dict[str, Any], allowed: tuple[str, ...]) -> None:
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise InputError(f"{caller} got unknown option(s) {', '.join(unknown)}; "
                         f"the options it passes on are: {', '.join(allowed)}")


def _shown(x: Any) -> str:
    text = repr(x)
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "..."


def violation_message(result: AuditResult) -> str:
    """The failure text of :func:`assert_private`: the audit's summary, the witness inputs with their counts,
    and the seed that reproduces the run."""
    lines = [result.summary()]
    w = result.witness
    if w is not None:
        t = w.test
        lines.append(f"  P[M(x) ∈ S] ≥ {t.p_num_low:.4g} ({t.count_num} of {t.samples}) with x = "
                     f"{_shown(w.numerator_input)}")
        lines.append(f"  P[M(x') ∈ S] ≤ {t.p_den_high:.4g} ({t.count_den} of {t.n_den}) with x' = "
                     f"{_shown(w.denominator_input)}")
    lines.append(f"  reproduce with dpverify.audit(..., samples={result.samples}, seed={result.seed})")
    return "\n".join(lines)


def assert_private(mechanism: Callable[..., Any], pairs: Sequence[Any], epsilon: float, delta: float = 0.0, *,
                   samples: int = DEFAULT_SAMPLES, seed: int | None = 0, alpha: float = 0.05,
                   **options: Any) -> AuditResult:
    """Assert that an audit of the claim ``(epsilon, delta)`` finds no violation; return the audit result.

    Runs ``dpverify.audit(mechanism, pairs, epsilon, delta, samples=samples, seed=seed, alpha=alpha,
    **options)`` (``options``: any other :func:`dpverify.audit` keyword -- ``search_samples``, ``workers``,
    ``batch_size``, ``finalists``, ``nan_policy``, ``float_bits``).  Raises ``AssertionError`` on a
    violation, with the witness pair, the event, the ε lower bound and the seed.  With probability at most
    ``alpha`` a mechanism that keeps the claim fails this assertion (for a fixed seed the outcome is fixed).

    A pass means *no violation detected at this sample budget* on these pairs -- not a proof of privacy.
    Bad arguments raise :class:`~dpverify.errors.InputError`, a mechanism that breaks the contract
    :class:`~dpverify.errors.MechanismError`, as :func:`dpverify.audit` does.

    Returns
    -------
    AuditResult
        The audit, for further assertions on its bound or witness.

    Examples
    --------
    >>> def laplace(x, n, rng):
    ...     return x + rng.laplace(0.0, 1.0, size=n)
    >>> assert_private(laplace, [(0.0, 1.0)], epsilon=1.0, samples=20_000, workers=1).violation
    False
    """
    __tracebackhide__ = True  # pytest shows the caller's line
    _check_options("assert_private", options, _AUDIT_OPTIONS)
    result = audit(mechanism, pairs, epsilon, delta, samples=samples, seed=seed, alpha=alpha, **options)
    if result.violation:
        raise AssertionError(violation_message(result))
    return result


def assert_theorem(theorem: Any, runs: int = 10_000, seed: int | None = 0, **options: Any) -> TheoremResult:
    """Assert that :func:`dpverify.check_theorem` gives the verdict ``holds``; return the result.

    ``options`` are the other :func:`dpverify.check_theorem` keywords (``alpha``, ``batch_size``,
    ``workers``, ``keep_samples``).  Raises ``AssertionError`` when the verdict is ``violated`` or
    ``inconclusive`` (the message gives the estimate, its interval against the bound and, when
    inconclusive, about how many runs would resolve it).  ``holds`` is evidence at level ``alpha`` for these
    parameters, not a proof of the theorem.

    Returns
    -------
    TheoremResult
        The check, for further assertions on its estimate or slack.

    Raises
    ------
    AssertionError
        The verdict is not ``holds``.
    InputError
        As :func:`dpverify.check_theorem`.
    """
    __tracebackhide__ = True
    _check_options("assert_theorem", options, _THEOREM_OPTIONS)
    result = check_theorem(theorem, runs=runs, seed=seed, **options)
    if not result.holds:
        raise AssertionError(
            f"{result.name} ({result.statement}) at {result.parameters}: {result.summary()}\n"
            f"  reproduce with dpverify.check_theorem(..., runs={runs}, seed={seed})"
        )
    return result
