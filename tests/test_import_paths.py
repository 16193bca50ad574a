"""A first custom suite next to its own module: without ``import_paths`` the module is not found, and the error
says how to fix it (``import_paths = ["."]`` in ``[suite]``, relative to the suite file)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpverify.errors import SuiteError
from dpverify.suites import load_suite, preflight, select_entries

MODULE = '''
import numpy as np

def noisy_sum(x, n, rng, epsilon=1.0):
    return float(np.sum(x)) + rng.laplace(0.0, 1.0 / epsilon, size=n)
'''

SUITE = '''[suite]
name = "first"
{paths}
quick = {{ samples = 2000, search_samples = 1000 }}

[[entry]]
id = "noisy-sum"
kind = "statistical"
mechanism = "my_first_mechanism_21:noisy_sum"
claim = {{ epsilon = 1.0 }}
expect = "pass"
pairs = [[0.0, 1.0]]
'''


def write(tmp_path: Path, paths: str) -> Path:
    (tmp_path / "my_first_mechanism_21.py").write_text(MODULE)
    suite = tmp_path / "first.toml"
    suite.write_text(SUITE.format(paths=paths))
    return suite


def test_a_module_next_to_the_suite_needs_import_paths_and_the_error_says_so(tmp_path: Path) -> None:
    suite = write(tmp_path, "")
    with pytest.raises(SuiteError) as info:
        preflight(select_entries([load_suite(suite)], None))
    message = str(info.value)
    assert "module 'my_first_mechanism_21' not found" in message
    assert 'import_paths = ["."]' in message and "relative to the suite file" in message, message
    assert "the suite's import_paths: none" in message, message


def test_with_import_paths_it_loads(tmp_path: Path) -> None:
    suite = write(tmp_path, 'import_paths = ["."]')
    preflight(select_entries([load_suite(suite)], None))
