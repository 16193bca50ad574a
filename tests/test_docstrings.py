"""Docstrings for users: every public function of ``dpverify`` says what it returns and what it raises, and the
examples in the docstrings of the public modules run (doctest, fixed seeds)."""

from __future__ import annotations

import doctest
import importlib
import inspect

import pytest

import dpverify

PUBLIC = [n for n in dpverify.__all__ if not n.startswith("__") and inspect.isfunction(getattr(dpverify, n))]
MODULES = sorted({getattr(dpverify, n).__module__ for n in PUBLIC} | {
    "dpverify.results", "dpverify.interfaces", "dpverify.exact.loss", "dpverify.testing.battery"})


def test_public_functions_are_listed() -> None:
    assert {"audit", "check_theorem", "check_mechanism", "check_sensitivity", "assert_private"} <= set(PUBLIC)


@pytest.mark.parametrize("name", PUBLIC)
def test_public_function_says_what_it_returns_and_raises(name: str) -> None:
    doc = inspect.getdoc(getattr(dpverify, name)) or ""
    assert "Return" in doc, f"dpverify.{name}: say what it returns"
    assert "Raise" in doc or "raise" in doc, f"dpverify.{name}: say what it raises"


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples_run(module: str) -> None:
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{module}: {result.failed} of {result.attempted} doctest examples failed"
