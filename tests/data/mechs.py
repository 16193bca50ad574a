"""Tiny mechanisms for the suite/CLI tests (contract ``mechanism(x, n, rng) -> ndarray``).

Imported by the test suites in ``tests/data/suites`` through ``[suite] import_paths = [".."]``, so the
tests depend on no reference algorithm written elsewhere in the project.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def laplace_sum(x: Any, n: int, rng: np.random.Generator, *, epsilon: float, sensitivity: float = 1.0) -> np.ndarray:
    """``sum(x) + Lap(sensitivity / epsilon)``: epsilon-DP when ``sensitivity`` bounds the change of the sum."""
    return float(np.sum(x)) + rng.laplace(0.0, sensitivity / epsilon, size=n)


class LaplaceSum:
    """Class form of :func:`laplace_sum` (instantiated with the entry's params)."""

    def __init__(self, epsilon: float, sensitivity: float = 1.0) -> None:
        if epsilon <= 0:
            raise ValueError("epsilon must be > 0")
        self.epsilon = epsilon
        self.sensitivity = sensitivity

    def __call__(self, x: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        return laplace_sum(x, n, rng, epsilon=self.epsilon, sensitivity=self.sensitivity)


def randomized_response(x: Any, n: int, rng: np.random.Generator, *, p_truth: float = 0.75) -> np.ndarray:
    """Report the bit ``x`` with probability ``p_truth``, else its flip (ln(p/(1-p))-DP); integer codes."""
    keep = rng.random(n) < p_truth
    bit = int(x)
    return np.where(keep, bit, 1 - bit).astype(np.int64)


def identity(x: Any, n: int, rng: np.random.Generator) -> np.ndarray:
    """No noise at all: infinitely private-leaking (every pair gives an impossible event)."""
    return np.full(n, float(np.sum(x)))


def crash(x: Any, n: int, rng: np.random.Generator) -> np.ndarray:
    """Always raises a plain RuntimeError (not a DPVerifyError)."""
    raise RuntimeError("boom")


NOT_CALLABLE = 42


# --------------------------------------------------------------------------------------------------
# Test doubles for dpverify.suites.audit (used by tests/test_suite.py and tests/test_cli.py)
# --------------------------------------------------------------------------------------------------


def mechanism_name(mechanism: Any) -> str:
    """``laplace_sum`` for a function or a partial of it, ``LaplaceSum`` for an instance."""
    func = getattr(mechanism, "func", mechanism)
    return getattr(func, "__name__", type(func).__name__)


def make_result(violation: bool = False, lb: float = 0.5, epsilon: float = 1.0, delta: float = 0.0,
                samples: int = 1000, search_samples: int = 500, seed: int = 0) -> Any:
    """A hand-built :class:`dpverify.statistical.result.AuditResult` with a witness."""
    from dpverify.neighbours import Pair
    from dpverify.statistical.result import AuditResult, EventTest, Witness

    test = EventTest(
        pair_index=0, pair_label="pair[0]", direction=0, event="out > 0.5",
        count_num=600, count_den=0 if violation else 400, samples=samples,
        p_num_low=0.55, p_den_high=0.003 if violation else 0.45, epsilon_lower_bound=lb, search_score=1.0,
    )
    return AuditResult(
        violation=violation, epsilon_lower_bound=lb, epsilon=epsilon, delta=delta, alpha=0.05,
        witness=Witness(Pair(0.0, 1.0, "pair[0]"), test), tests=(test,), samples=samples,
        search_samples=search_samples, n_pairs=1, n_candidates=3, output_kind="continuous", seed=seed,
        seconds=0.0, workers=1,
    )


def mechanism_epsilon(mechanism: Any) -> float | None:
    """The ``epsilon`` the mechanism was built with (partial keyword or instance attribute), if any."""
    keywords = getattr(mechanism, "keywords", None)
    if isinstance(keywords, dict) and "epsilon" in keywords:
        return float(keywords["epsilon"])
    eps = getattr(mechanism, "epsilon", None)
    return None if eps is None else float(eps)


class FakeAudit:
    """Stands in for :func:`dpverify.audit`: records every call and reports a violation (bound ``inf``)
    for mechanisms named in ``violating`` or -- when ``oracle`` -- built with a larger ``epsilon`` than
    the claim, else a pass (bound 0.9 epsilon); raises ``raise_on[i]`` on the i-th call (from 0)."""

    def __init__(self, violating: tuple[str, ...] = ("identity",),
                 raise_on: dict[int, BaseException] | None = None, oracle: bool = True) -> None:
        self.violating = violating
        self.raise_on = dict(raise_on or {})
        self.oracle = oracle
        self.calls: list[dict[str, Any]] = []

    def __call__(self, mechanism: Any, pairs: Any, epsilon: float, delta: float = 0.0, **kw: Any) -> Any:
        index = len(self.calls)
        self.calls.append({"mechanism": mechanism, "name": mechanism_name(mechanism), "pairs": pairs,
                           "epsilon": epsilon, "delta": delta, **kw})
        if index in self.raise_on:
            raise self.raise_on[index]
        mech_eps = mechanism_epsilon(mechanism)
        violation = mechanism_name(mechanism) in self.violating or (
            self.oracle and mech_eps is not None and mech_eps > epsilon * (1 + 1e-9))
        return make_result(violation, lb=float("inf") if violation else 0.9 * epsilon, epsilon=epsilon,
                           delta=delta, samples=kw.get("samples", 1000),
                           search_samples=kw.get("search_samples") or 500, seed=kw.get("seed") or 0)


def one_release_laplace(x: Any, *, epsilon: float, random_state: np.random.RandomState) -> float:
    """One release per call, seeded through ``random_state`` like a library call (diffprivlib's convention):
    ``sum(x) + Lap(1/epsilon)``, for the per-call adapter and ``dpverify audit --per-call``."""
    return float(np.sum(x)) + random_state.laplace(0.0, 1.0 / epsilon)
