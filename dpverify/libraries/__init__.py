"""Audit the releases of DP libraries directly: one call per release, adapted to the batched mechanism contract.

* :mod:`dpverify.libraries.percall` -- :class:`PerCall`, the adapter from ``release(x, **params, random_state=...)``
  to ``mechanism(x, n, rng)``, with library timing;
* :mod:`dpverify.libraries.diffprivlib_targets` -- IBM's diffprivlib mechanisms and tools (seeded: reproducible);
* :mod:`dpverify.libraries.opendp_targets` -- OpenDP measurements, with their own privacy maps as claims;
* :mod:`dpverify.libraries.pydp_targets` -- Google's DP library through python-dp.

Each target module imports its library lazily and says how to install it when it is missing.
"""

from __future__ import annotations

from dpverify.libraries.percall import PerCall, per_call, resolve_import_path

__all__ = ["PerCall", "per_call", "resolve_import_path"]
