"""Public entry points reject arguments of the wrong type instead of coercing them: ``epsilon="1.0"`` (a string)
and ``samples=1e5`` (a float) are errors naming the argument and the expected type, as every other argument's
mistakes already are."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import dpverify
from dpverify._validation import check_count, check_real
from dpverify.errors import InputError
from dpverify.exact import exact_audit

sys.path.insert(0, str(Path(__file__).parent / "data"))

import mechs  # noqa: E402

MECH = mechs.LaplaceSum(epsilon=1.0)
PAIRS = [(0.0, 1.0)]
SMALL = {"samples": 2000, "search_samples": 1000, "workers": 1}


class RR:
    """Randomized response with its exact law (for exact_audit)."""

    def __call__(self, x: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        return np.where(rng.random(n) < 0.75, int(x), 1 - int(x))

    def pmf(self, x: Any) -> np.ndarray:
        return np.array([0.75, 0.25]) if int(x) == 0 else np.array([0.25, 0.75])


def sampler(u: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    return rng.integers(0, len(u), size=n)


CALLS: dict[str, Callable[..., Any]] = {
    "audit": lambda **kw: dpverify.audit(MECH, PAIRS, **{"epsilon": 1.0, **SMALL, **kw}),
    "audit_sequential": lambda **kw: dpverify.audit_sequential(MECH, PAIRS, **{"epsilon": 1.0, **SMALL, **kw}),
    "assert_private": lambda **kw: dpverify.assert_private(MECH, PAIRS, **{"epsilon": 1.0, **SMALL, **kw}),
    "exact_audit": lambda **kw: exact_audit(RR(), [(0, 1)], **{"epsilon": 1.1, **kw}),
    "check_exponential_mechanism": lambda **kw: dpverify.check_exponential_mechanism(
        sampler, np.array([0.0, 1.0]), **{"epsilon": 1.0, "sensitivity": 1.0, "samples": 2000, **kw}),
}

BAD = [
    ("audit", {"epsilon": "1.0"}, "epsilon"),
    ("audit", {"samples": 1e5}, "samples"),
    ("audit", {"samples": 2000.0}, "samples"),
    ("audit", {"delta": "0"}, "delta"),
    ("audit", {"alpha": "0.05"}, "alpha"),
    ("audit", {"epsilon": True}, "epsilon"),
    ("audit_sequential", {"epsilon": "1.0"}, "epsilon"),
    ("audit_sequential", {"samples": 4000.0}, "samples"),
    ("assert_private", {"epsilon": "1.0"}, "epsilon"),
    ("assert_private", {"samples": 1e5}, "samples"),
    ("exact_audit", {"epsilon": "1.1"}, "epsilon"),
    ("check_exponential_mechanism", {"epsilon": "1.0"}, "epsilon"),
    ("check_exponential_mechanism", {"samples": 2000.0}, "samples"),
]


@pytest.mark.parametrize("call, kwargs, name", BAD, ids=[f"{c}-{k}={v!r}" for c, kv, _ in BAD for k, v in kv.items()])
def test_wrong_types_are_rejected_naming_the_argument(call: str, kwargs: dict[str, Any], name: str) -> None:
    with pytest.raises(InputError, match=name):
        CALLS[call](**kwargs)


def test_the_messages_say_the_expected_type() -> None:
    with pytest.raises(InputError, match=r"epsilon must be a number \(int or float\), got '1.0' \(a str\)"):
        check_real("epsilon", "1.0", low=0, high=np.inf, low_open=True, high_open=True)
    with pytest.raises(InputError, match=r"samples must be an integer >= 1, got 100000.0 \(a float\); write 100000"):
        check_count("samples", 1e5)


def test_numbers_of_every_numeric_type_are_still_accepted() -> None:
    assert check_real("epsilon", np.float32(0.5), low=0, high=np.inf, low_open=True, high_open=True) == 0.5
    assert check_real("epsilon", 2, low=0, high=np.inf, low_open=True, high_open=True) == 2.0
    assert check_count("samples", np.int64(5)) == 5
    assert dpverify.audit(MECH, PAIRS, epsilon=np.float64(1.0), samples=np.int64(2000), search_samples=1000,
                          workers=1).samples == 2000
