"""Ready-made audit targets for Google's differential-privacy library through python-dp (OpenMined, import name
``pydp``): the Laplace aggregations of ``pydp.algorithms.laplacian``, one release per call.

**Neighbour model: add/remove-one record.**  Google's library bounds each privacy unit's contribution
(``l0_sensitivity``: partitions a unit contributes to; ``linf_sensitivity``: contributions per partition; both 1 by
default, so a unit is one record) and calibrates the noise to *adding or removing* one unit: ``BoundedSum`` sets
its L∞ sensitivity to ``max_contributions_per_partition * max(|lower|, |upper|)`` (``BoundedSum::BuildMechanism``,
``cc/algorithms/bounded-sum.h`` of google/differential-privacy), the sensitivity of adding or removing one record
clamped to ``[lower, upper]``.  Replacing a record can move the sum by ``upper - lower``, twice as much when the
bounds are symmetric: audit these targets on add/remove pairs, or a replace-one audit will (rightly) find the
guarantee does not cover it.  ``Count`` is the same with sensitivity 1; ``BoundedMean``, ``BoundedVariance``,
``BoundedStandardDeviation`` are built from noisy sums and counts; ``Max``, ``Min``, ``Median``, ``Percentile``
are order statistics over the same privacy unit.

**Randomness.**  The library cannot be seeded: it draws from ``SecureURBG`` (``cc/algorithms/rand.h``), a
process-wide 64 KiB buffer of operating-system random bytes.  A forked worker inherits the parent's buffer, so two
workers forked after the auditing process used the library would draw the *same* noise until the buffer refills
(observed with python-dp 1.1.5: identical ``quick_result`` outputs in two forked workers).  The target therefore
drains the inherited buffer (16 Ki draws of 8 bytes, twice its size, about 10 ms) on its first call in every
process other than the one that built it; it says ``reproducible = False`` (:mod:`dpverify.statistical.contract`).

One algorithm object serves a whole batch: ``quick_result`` "resets the privacy budget first"
(``pydp/algorithms/_algorithm.py``, ``MetaAlgorithm.quick_result``), so every call is a fresh release with the full
ε, as a new object's would be (and it is 2.5 times faster than building one per call).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from dpverify.errors import InputError
from dpverify.libraries.percall import PerCall

__all__ = ["PyDPAggregation", "drain_inherited_randomness", "ALGORITHMS", "NEIGHBOUR_MODEL", "INSTALL_HINT", "DRAIN_DRAWS"]

INSTALL_HINT = "pip install 'dpverify[pydp]'"

#: the neighbour model of every aggregation (see the module docstring)
NEIGHBOUR_MODEL = "add/remove-one (one record per privacy unit: l0_sensitivity = linf_sensitivity = 1)"

#: the aggregations of pydp.algorithms.laplacian, and whether they take bounds
ALGORITHMS = {"BoundedMean": True, "BoundedSum": True, "BoundedVariance": True, "BoundedStandardDeviation": True,
              "Max": True, "Min": True, "Median": True, "Percentile": True, "Count": False}

#: 8-byte uniform draws that empty SecureURBG's inherited 64 KiB buffer twice over
DRAIN_DRAWS = 2 * 65536 // 8


def _laplacian() -> Any:
    try:
        import pydp.algorithms.laplacian as laplacian
    except ImportError as exc:
        raise InputError(f"this target needs python-dp (import name pydp), which is not installed ({exc}): "
                         f"{INSTALL_HINT}") from None
    return laplacian


def drain_inherited_randomness() -> None:
    """Use up the ``SecureURBG`` buffer this process inherited through ``fork`` (see the module docstring)."""
    from pydp.distributions import LaplaceDistribution

    draw = LaplaceDistribution(epsilon=1.0, sensitivity=1.0).get_uniform_double
    for _ in range(DRAIN_DRAWS):
        draw()


class PyDPAggregation(PerCall):
    """``pydp.algorithms.laplacian.<algorithm>(epsilon=..., lower_bound=..., upper_bound=..., dtype=...)``, one
    ``quick_result(list(x))`` per call on the dataset ``x``.

    ``algorithm`` is one of :data:`ALGORITHMS`; ``dtype`` ``"float"``, ``"int"`` or ``"int64"``; ``kwargs`` go to
    the algorithm (``delta``, ``l0_sensitivity``, ``linf_sensitivity``, ``percentile``).  ``Count`` takes no bounds.
    Bounds left ``None`` on a bounded algorithm make the library infer them privately (``ApproxBounds``, part of
    the budget), which needs large datasets.  ``neighbour_model`` is :data:`NEIGHBOUR_MODEL`.  Example::

        total = PyDPAggregation("BoundedSum", epsilon=1.0, lower_bound=0.0, upper_bound=1.0)
        dpverify.audit(total, [([0.5] * 10, [0.5] * 9)], epsilon=1.0, seed=0)
    """

    def __init__(self, algorithm: str, epsilon: float, lower_bound: float | None = None,
                 upper_bound: float | None = None, dtype: str = "float", **kwargs: Any) -> None:
        laplacian = _laplacian()
        if algorithm not in ALGORITHMS or not hasattr(laplacian, algorithm):
            raise InputError(f"PyDPAggregation supports {', '.join(n for n in ALGORITHMS if hasattr(laplacian, n))}; "
                             f"got {algorithm!r}")
        params = dict(kwargs, epsilon=epsilon, dtype=dtype)
        if ALGORITHMS[algorithm]:
            params.update({k: v for k, v in (("lower_bound", lower_bound), ("upper_bound", upper_bound))
                           if v is not None})
        elif lower_bound is not None or upper_bound is not None:
            raise InputError(f"{algorithm} takes no bounds")
        self.algorithm = algorithm
        self.epsilon = epsilon
        super().__init__(f"pydp.algorithms.laplacian:{algorithm}", seed_arg=None, neighbour_model=NEIGHBOUR_MODEL,
                         **params)
        try:   # a wrong parameter fails here, with the library's message
            self.resolved()(**self.params)
        except (TypeError, ValueError, RuntimeError) as exc:
            raise InputError(f"pydp.algorithms.laplacian.{algorithm}({_kwargs(self.params)}) is invalid: {exc}") \
                from None

    def prepare_process(self) -> None:
        super().prepare_process()
        if self.in_worker:
            drain_inherited_randomness()

    def convert_input(self, x: Any) -> Any:
        return x if isinstance(x, list) else np.asarray(x).ravel().tolist()

    def bind(self, n: int, rng: np.random.Generator) -> Callable[[Any], Any]:
        return self.resolved()(**self.params).quick_result

    def __repr__(self) -> str:
        extra = {k: v for k, v in self.params.items() if k != "epsilon"}
        return f"PyDPAggregation({self.algorithm!r}, epsilon={self.epsilon!r}, {_kwargs(extra)})"


def _kwargs(kw: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in kw.items())
