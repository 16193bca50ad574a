"""Ready-made audit targets for IBM's diffprivlib (Holohan et al., "Diffprivlib: The IBM Differential Privacy
Library", 2019): its noise mechanisms and its tools, one release per call, seeded from the audit's generator.

diffprivlib is seeded through ``random_state``: every mechanism and tool passes it to ``check_random_state``
(diffprivlib/utils.py), which returns a ``numpy.random.RandomState`` as is.  The targets build one ``RandomState``
per batch from the batch's generator (:class:`dpverify.libraries.percall.PerCall`, ``seed_kind="randomstate"``), so
an audit of a diffprivlib release is reproducible from its seed, on any number of workers.

**Neighbour models.**  diffprivlib's documentation does not name a neighbour relation; the sensitivities its tools
use say which one each guarantee is for (file and line of diffprivlib 0.6.6):

========================  ==========================  ===================================================================
tool                      neighbour model             evidence
========================  ==========================  ===================================================================
mean, nanmean             replace-one (n public)      ``LaplaceTruncated(sensitivity=(upper - lower) / array.size)``,
                                                      tools/utils.py:293: the size ``n`` is used as public
var, nanvar, std, nanstd  replace-one (n public)      ``sensitivity=((upper - lower) / array.size) ** 2 * (array.size - 1)``,
                                                      tools/utils.py:451
sum, nansum               replace-one (n public)      ``sensitivity=upper - lower`` and truncation to
                                                      ``[lower * n, upper * n]``, tools/utils.py:739 (adding a record
                                                      changes the sum by up to ``max(|lower|, |upper|)``, which exceeds
                                                      ``upper - lower`` when the bounds do not straddle 0)
count_nonzero             replace-one (n public)      ``sum(array_bool, bounds=(0, 1))``, tools/utils.py:147: the
                                                      truncation to ``[0, n]`` moves with ``n`` under add/remove
histogram                 add/remove-one              ``GeometricTruncated(sensitivity=1)`` per bin,
                                                      tools/histograms.py:143: replacing a record moves it between two
                                                      bins (L1 change 2)
quantile, percentile,     replace-one (n public)      ``Exponential(sensitivity=1, utility=-|i - quant * k|)`` with
median                                                ``k = array.size``, tools/quantiles.py:138
========================  ==========================  ===================================================================

A tool called with ``bounds=None`` (``range=None`` for a histogram) derives them from the data and warns
(``PrivacyLeakWarning``): the release is then not differentially private as claimed.  :class:`DiffprivlibTool`
reproduces that behaviour faithfully (it is what users run), records the warning once in its ``audit_notes`` and
never prints it per call.  Every batch gets a fresh ``BudgetAccountant`` (infinite budget): diffprivlib's default
accountant would otherwise keep one entry per call, forever, in the auditing process and in every worker.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from dpverify.errors import InputError
from dpverify.libraries.percall import PerCall

__all__ = ["DiffprivlibMechanism", "DiffprivlibTool", "TOOLS", "TOOL_NEIGHBOUR_MODELS", "INSTALL_HINT"]

INSTALL_HINT = "pip install 'dpverify[diffprivlib]'"

REPLACE_ONE = "replace-one (n public)"
ADD_REMOVE = "add/remove-one"

#: the neighbour model of each tool, read from the sensitivity it uses (see the module docstring)
TOOL_NEIGHBOUR_MODELS = {
    "mean": REPLACE_ONE, "nanmean": REPLACE_ONE, "var": REPLACE_ONE, "nanvar": REPLACE_ONE, "std": REPLACE_ONE,
    "nanstd": REPLACE_ONE, "sum": REPLACE_ONE, "nansum": REPLACE_ONE, "count_nonzero": REPLACE_ONE,
    "histogram": ADD_REMOVE, "quantile": REPLACE_ONE, "percentile": REPLACE_ONE, "median": REPLACE_ONE,
}

#: the tools :class:`DiffprivlibTool` supports
TOOLS = tuple(TOOL_NEIGHBOUR_MODELS)


def _diffprivlib() -> Any:
    try:
        import diffprivlib
    except ImportError as exc:
        raise InputError(f"this target needs diffprivlib, which is not installed ({exc}): {INSTALL_HINT}") from None
    return diffprivlib


def _batch_state(rng: np.random.Generator) -> np.random.RandomState:
    """The batch's ``RandomState`` (an ``MT19937`` seeded from the batch's generator)."""
    return np.random.RandomState(np.random.MT19937(int(rng.integers(2**63))))


class DiffprivlibMechanism(PerCall):
    """A diffprivlib noise mechanism, ``diffprivlib.mechanisms.<name>(**kwargs, random_state=...).randomise(x)``.

    The mechanism is built once per batch with the batch's ``RandomState`` and randomises the input ``x`` (a
    number) once per call.  ``name`` is any class of ``diffprivlib.mechanisms`` with ``randomise(value)``:
    ``Laplace``, ``LaplaceTruncated``, ``LaplaceFolded``, ``LaplaceBoundedDomain``, ``LaplaceBoundedNoise``,
    ``Gaussian``, ``GaussianAnalytic``, ``GaussianDiscrete``, ``Geometric``, ``GeometricTruncated``,
    ``GeometricFolded``, ``Staircase``, ``Uniform``, ``Snapping``; and ``Exponential``, whose input ``x`` is the
    utility list (the mechanism is then built per call and releases the index it selects).

    Neighbour model: the mechanisms are stated for inputs at distance at most ``sensitivity`` (``|x - x'| <=
    sensitivity`` for a value; for ``Exponential``, utilities differing by at most ``sensitivity`` each).
    Example::

        mech = DiffprivlibMechanism("Laplace", epsilon=1.0, sensitivity=1.0)
        dpverify.audit(mech, [(0.0, 1.0)], epsilon=1.0, samples=100_000, seed=0)
    """

    def __init__(self, name: str, **kwargs: Any) -> None:
        dpl = _diffprivlib()
        cls = getattr(dpl.mechanisms, name, None) if isinstance(name, str) else None
        if not isinstance(cls, type) or not hasattr(cls, "randomise"):
            names = sorted(n for n in dir(dpl.mechanisms) if hasattr(getattr(dpl.mechanisms, n), "randomise")
                           and n not in ("DPMechanism", "DPMachine"))
            raise InputError(f"diffprivlib.mechanisms has no mechanism {name!r}; choose one of {', '.join(names)}")
        if "random_state" in kwargs:
            raise InputError("do not pass random_state: the target seeds the mechanism from the audit's generator")
        self.mechanism_name = name
        self.epsilon = kwargs.get("epsilon")
        sens = kwargs.get("sensitivity")
        model = (f"utilities differing by at most sensitivity = {sens}" if name == "Exponential"
                 else f"|x - x'| <= sensitivity = {sens}")
        super().__init__(f"diffprivlib.mechanisms:{name}", neighbour_model=model, **kwargs)
        try:   # build one now: a wrong parameter fails here, with diffprivlib's own message
            if name != "Exponential":
                cls(**kwargs, random_state=0)
        except (TypeError, ValueError) as exc:
            raise InputError(f"diffprivlib.mechanisms.{name}({_kwargs(kwargs)}) is invalid: {exc}") from None

    def bind(self, n: int, rng: np.random.Generator) -> Callable[[Any], Any]:
        cls = self.resolved()
        state = _batch_state(rng)
        params = self.params
        if self.mechanism_name == "Exponential":
            def select(utility: Any) -> Any:
                return cls(**params, utility=list(np.ravel(utility)), random_state=state).randomise()

            return select
        return cls(**params, random_state=state).randomise

    def __repr__(self) -> str:
        return f"DiffprivlibMechanism({self.mechanism_name!r}, {_kwargs(self.params)})"


class DiffprivlibTool(PerCall):
    """A diffprivlib tool, ``diffprivlib.tools.<tool>(x, epsilon=..., bounds=..., random_state=...)``, one release
    per call on the dataset ``x`` (an array).

    ``tool`` is one of :data:`TOOLS`; ``bounds`` the data bounds ``(lower, upper)`` (the ``range`` of a ``histogram``,
    also accepted under that name; its released part is the counts; ignored by ``count_nonzero``, which has none); ``kwargs`` go to the tool
    (``quant=`` for ``quantile``, ``percent=`` for ``percentile``, ``bins=`` for ``histogram``, ``dtype=``, ...).
    ``bounds=None`` reproduces the library's own behaviour -- bounds taken from the data, which leaks (see the
    module docstring).  ``neighbour_model`` is the tool's, from :data:`TOOL_NEIGHBOUR_MODELS`.  Example (a pair of
    datasets of the same size, one record replaced)::

        mean = DiffprivlibTool("mean", epsilon=1.0, bounds=(0, 1))
        dpverify.audit(mean, [(np.zeros(10), np.r_[np.zeros(9), 1.0])], epsilon=1.0, seed=0)
    """

    def __init__(self, tool: str, epsilon: float, bounds: Any = None, **kwargs: Any) -> None:
        dpl = _diffprivlib()
        if tool not in TOOL_NEIGHBOUR_MODELS:
            raise InputError(f"DiffprivlibTool supports the tools {', '.join(TOOLS)}; got {tool!r}")
        for bad in ("random_state", "accountant"):
            if bad in kwargs:
                raise InputError(f"do not pass {bad}: the target sets it for every batch")
        if tool == "histogram" and "range" in kwargs:      # the library's own name for a histogram's bounds
            if bounds is not None:
                raise InputError("give a histogram's range once: bounds=... or range=..., not both")
            bounds = kwargs.pop("range")
        if not hasattr(dpl.tools, tool):
            raise InputError(f"this diffprivlib ({getattr(dpl, '__version__', '?')}) has no tools.{tool}")
        if bounds is not None:
            try:
                lower, upper = bounds
            except (TypeError, ValueError):
                raise InputError(f"bounds must be a pair (lower, upper), got {bounds!r}") from None
            bounds = (lower, upper)
        params = dict(kwargs, epsilon=epsilon)
        if tool == "histogram":
            params["range"] = bounds
        elif tool != "count_nonzero":
            params["bounds"] = bounds
        self.tool = tool
        self.epsilon = epsilon
        self.bounds = bounds
        super().__init__(f"diffprivlib.tools:{tool}", neighbour_model=TOOL_NEIGHBOUR_MODELS[tool],
                         output=0 if tool == "histogram" else None, **params)
        if bounds is None and tool != "count_nonzero":
            what = "range" if tool == "histogram" else "bounds"
            self.library_warnings.append(
                f"{what}=None: diffprivlib takes the {what} from the data (PrivacyLeakWarning), so the release is not "
                f"differentially private as claimed; give {what} known independently of the data")

    def bind(self, n: int, rng: np.random.Generator) -> Callable[[Any], Any]:
        from diffprivlib import BudgetAccountant

        return functools.partial(self.resolved(), random_state=_batch_state(rng), accountant=BudgetAccountant(),
                                 **self.params)

    def __repr__(self) -> str:
        extra = {k: v for k, v in self.params.items() if k not in ("epsilon", "bounds", "range")}
        return (f"DiffprivlibTool({self.tool!r}, epsilon={self.epsilon!r}, bounds={self.bounds!r}"
                + (f", {_kwargs(extra)}" if extra else "") + ")")


def _kwargs(kw: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in kw.items())
