"""pytest plugin of dpverify: keep privacy claims as tests (issue 8, point 4).

Installed with dpverify (entry point ``pytest11: dpverify``), so any project that has dpverify installed can
write::

    import pytest

    @pytest.mark.dp_audit(samples=200_000)
    def test_noisy_count_is_private(dp_audit):
        dp_audit(noisy_count, [(3.0, 4.0)], epsilon=1.0)

What it adds:

``dp_seed`` (fixture)
    The seed of the test: ``zlib.crc32`` of the test's node id (e.g. ``tests/test_x.py::test_a``), so every
    test has its own stable seed; the marker's ``seed=`` pins it; ``--dp-seed N`` on the command line
    overrides both (to reproduce a failure or try another seed).
``dp_audit`` (fixture)
    A callable ``dp_audit(mechanism, pairs, epsilon, delta=0.0, **options) -> AuditResult``:
    :func:`dpverify.assert_private` with the test's seed and the budget of the ``dp_audit`` marker (keyword
    ``options`` given in the call win over the marker's).  A violation fails the test with the witness pair,
    the event, the ε lower bound and the ``--dp-seed`` that reproduces it.
``@pytest.mark.dp_audit(seed=None, samples=None, **audit options)`` (marker)
    The budget of the ``dp_audit`` fixture: ``samples``, ``alpha`` and any :func:`dpverify.audit` option
    (``search_samples``, ``workers``, ``batch_size``, ...); on a test, a class or a module (``pytestmark``).
``--dp-seed N`` (option)
    The seed of every test that uses ``dp_seed`` or ``dp_audit``.

A passing ``dp_audit`` means *no violation detected at this sample budget*, never *is differentially
private*.  A mechanism with a known bug is kept as ``@pytest.mark.xfail(strict=True)``: the test fails if
the audit stops finding the bug.
"""

from __future__ import annotations

import argparse
import zlib
from typing import TYPE_CHECKING, Any, Callable, Sequence

import pytest

from dpverify.errors import InputError

if TYPE_CHECKING:  # the audit (and scipy) is imported on first use, not when pytest loads the plugin
    from dpverify.statistical.result import AuditResult

MARKER = "dp_audit"


def _seed_option(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--dp-seed needs a non-negative integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"--dp-seed needs a non-negative integer, got {value}")
    return value


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("dpverify", "dpverify privacy audits")
    group.addoption("--dp-seed", type=_seed_option, default=None, metavar="N",
                    help="seed of every dp_audit / dp_seed test (default: a stable seed per test, the crc32 of "
                         "its node id, or the dp_audit marker's seed=)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(seed=None, samples=None, **options): seed and budget of the dp_audit fixture "
        "(samples, alpha and any other dpverify.audit option)",
    )


def pytest_report_header(config: pytest.Config) -> str | None:
    seed = config.getoption("dp_seed")
    return None if seed is None else f"dpverify: --dp-seed {seed} (every dp_audit / dp_seed test)"


def _marker_options(node: pytest.Item) -> dict[str, Any]:
    marker = node.get_closest_marker(MARKER)
    if marker is None:
        return {}
    if marker.args:
        raise InputError(f"@pytest.mark.{MARKER} takes keyword arguments only (seed=..., samples=..., or another "
                         f"dpverify.audit option), got positional {marker.args!r}")
    return dict(marker.kwargs)


@pytest.fixture
def dp_seed(request: pytest.FixtureRequest) -> int:
    """The test's seed: ``--dp-seed N`` if given, else the ``dp_audit`` marker's ``seed=``, else the crc32 of
    the test's node id (stable across runs and machines, different for every test)."""
    option = request.config.getoption("dp_seed")
    if option is not None:
        return int(option)
    marked = _marker_options(request.node).get("seed")
    if marked is not None:
        return marked
    return zlib.crc32(request.node.nodeid.encode("utf-8"))


class DPAudit:
    """What the ``dp_audit`` fixture returns: :func:`dpverify.assert_private` with a seed and default options."""

    def __init__(self, seed: int, options: dict[str, Any]) -> None:
        self.seed = seed
        self.options = options

    def __call__(self, mechanism: Callable[..., Any], pairs: Sequence[Any], epsilon: float, delta: float = 0.0,
                 **options: Any) -> AuditResult:
        """Assert that the audit of ``(epsilon, delta)`` finds no violation; return the :class:`AuditResult`."""
        __tracebackhide__ = True  # pytest shows the test's line, not this wrapper
        merged = {**self.options, **options}
        try:
            from dpverify.testing.asserts import assert_private

            return assert_private(mechanism, pairs, epsilon, delta, seed=self.seed, **merged)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n  rerun this test with --dp-seed {self.seed}") from None


@pytest.fixture
def dp_audit(request: pytest.FixtureRequest, dp_seed: int) -> DPAudit:
    """:func:`dpverify.assert_private` with the test's :func:`dp_seed` and the ``dp_audit`` marker's budget."""
    options = _marker_options(request.node)
    options.pop("seed", None)
    return DPAudit(dp_seed, options)
