"""Audit a library function that makes one release per call: the adapter to the batched mechanism contract.

dpverify samples a mechanism in batches, ``mechanism(x, n, rng) -> array with n rows`` (docs/architecture.md,
"Contracts the checks rely on").  The DP libraries people use release one value per call instead --
``diffprivlib.tools.mean(x, epsilon=1, bounds=(0, 1))``, an OpenDP ``Measurement`` ``meas(x)``, a python-dp
``BoundedSum(...).quick_result(x)``.  :class:`PerCall` wraps such a function: a batch of ``n`` outputs is ``n``
calls, stacked into an array, seeded from the audit's generator wherever the library can be seeded:

* ``seed_kind="randomstate"`` (the default, for diffprivlib and scikit-learn style ``random_state``): one
  ``numpy.random.RandomState`` on an ``MT19937`` seeded from the batch's ``rng``, passed to every call of the batch.
  diffprivlib's ``check_random_state`` returns a ``RandomState`` as is (diffprivlib/utils.py, ``check_random_state``)
  and every call advances it, so the calls are independent and the batch is reproducible from its seed;
* ``seed_kind="int"``: a fresh integer seed in ``[0, 2**31)`` per call, drawn from ``rng``;
* ``seed_kind="generator"``: the batch's ``numpy.random.Generator`` itself;
* ``seed_arg=None``: the library cannot be seeded; it draws its own randomness (OpenDP and Google's DP library
  read the operating system's CSPRNG).  The adapter then says ``reproducible = False``: the contract check
  (:func:`dpverify.statistical.contract.check_rng_contract`) skips its same-seed test, the audit notes that the
  seed does not reproduce the run, and the bound still holds because the calls are independent.

**Forked workers.**  The sampling workers are forked from the auditing process, and fork copies every
process-wide generator: ``np.random``'s global state, ``random``'s, and a library's own buffered generator.
Without care, two workers would then replay the same "random" stream.  A seedless adapter therefore reseeds
``np.random`` and ``random`` from the operating system on its first call in each process other than the one
that built it (:meth:`PerCall.prepare_process`); library targets extend the hook for their own generators
(:class:`dpverify.libraries.pydp_targets.PyDPAggregation` drains the 64 KiB buffer Google's ``SecureURBG`` keeps).

**Outputs.**  A scalar per call gives a batch of shape ``(n,)``, an array of shape ``s`` one of shape ``(n, *s)``.
A tuple (e.g. ``diffprivlib.tools.histogram``'s ``(counts, edges)``) is refused: pass ``output=0`` (an index) or
``output=callable`` to pick the released part.

**Timing.**  Every library call is timed with ``time.perf_counter`` (two reads per call: about 0.1 µs, under 1 % of
the cheapest library release measured, diffprivlib's Laplace mechanism at about 10 µs); :meth:`PerCall.pop_timing`
hands the count and the seconds to the sampling layer (:func:`dpverify.execution.sampling.run_batch`), and the
audit reports calls per second and the share of sampling time spent inside the library
(:class:`dpverify.statistical.result.LibraryTiming`).
"""

from __future__ import annotations

import functools
import importlib
import os
import random
import threading
import time
import warnings
from typing import Any, Callable

import numpy as np
from numpy.typing import NDArray

from dpverify.errors import InputError, MechanismError

__all__ = ["PerCall", "per_call", "resolve_import_path", "SEED_KINDS", "MAX_WARNINGS"]

#: how :class:`PerCall` seeds the library (see the module docstring)
SEED_KINDS = ("randomstate", "int", "generator")

#: distinct library warnings kept per adapter (the first ones seen)
MAX_WARNINGS = 5

#: import paths resolved in this process (every worker resolves and caches its own)
_resolved: dict[str, Any] = {}

#: (process id, preparation key) pairs already prepared in this process (see PerCall.prepare_process)
_prepared: set[tuple[int, str]] = set()
#: per thread: (calls, seconds inside the library) of each adapter (by id) not yet popped (see PerCall.pop_timing)
_timing = threading.local()


def _thread_counts() -> dict[int, tuple[int, float]]:
    counts = getattr(_timing, "counts", None)
    if counts is None:
        counts = _timing.counts = {}
    return counts


def resolve_import_path(path: str) -> Any:
    """The object at ``"module:attribute"`` (``attribute`` may be dotted, e.g. ``"pkg.mod:Class.method"``), cached
    per process.  Raises :class:`InputError` naming what is missing."""
    cached = _resolved.get(path)
    if cached is not None:
        return cached
    module_name, sep, attr = path.partition(":")
    if not sep or not module_name or not attr:
        raise InputError(f"an import path must look like 'module:attribute' (e.g. 'diffprivlib.tools:mean'), "
                         f"got {path!r}")
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise InputError(f"cannot import module {module_name!r} of {path!r} ({exc}); install it or fix the path") \
            from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise InputError(f"module {module_name!r} has no attribute {attr!r} (import path {path!r})") from None
    _resolved[path] = obj
    return obj


def _seed_arg(seed_arg: str | None) -> str | None:
    """``None`` or the keyword; the string ``"none"`` (any case) also means ``None`` (a suite file has no null)."""
    if seed_arg is None or (isinstance(seed_arg, str) and seed_arg.strip().lower() == "none"):
        return None
    if not isinstance(seed_arg, str) or not seed_arg.isidentifier():
        raise InputError(f"seed_arg must be the name of the keyword the release is seeded through (e.g. "
                         f"'random_state'), or None when it cannot be seeded; got {seed_arg!r}")
    return seed_arg


class PerCall:
    """A one-release-per-call function as a batched mechanism ``mechanism(x, n, rng)`` (see the module docstring).

    Parameters
    ----------
    release
        ``release(x, **params, **{seed_arg: seed}) -> scalar or array``: a module-level function (so that the
        adapter pickles for the sampling workers) or an import path ``"module:attribute"`` resolved lazily in each
        process, e.g. ``"diffprivlib.tools:mean"``.
    seed_arg
        The keyword the release is seeded through (default ``"random_state"``); ``None`` (or ``"none"``) when it
        cannot be seeded: the adapter is then ``reproducible = False``.
    seed_kind
        What is passed as the seed: ``"randomstate"`` (one ``np.random.RandomState`` per batch, shared by its
        calls), ``"int"`` (a fresh integer per call) or ``"generator"`` (the batch's ``np.random.Generator``).
    neighbour_model
        The neighbour relation the release's guarantee is stated for, as its library documents it (e.g.
        ``"replace-one (n public)"`` or ``"add/remove-one"``): shown in the audit's notes, so that a reader can
        check that the audited pairs match it.
    output
        Picks the released part of a call's return value: an index (``0`` for a histogram's counts) or a
        callable; ``None`` (default) keeps the value as it is.
    **params
        Keyword arguments of every call (``epsilon=1.0, bounds=(0, 1)``, ...).

    Attributes
    ----------
    reproducible : bool
        ``False`` when ``seed_arg`` is ``None``: the library draws its own randomness.
    library_warnings : list of str
        The distinct warnings the library emitted in this process (the first :data:`MAX_WARNINGS`); they are
        captured, never printed once per call.

    Examples
    --------
    A release seeded through ``random_state`` (any ``np.random.RandomState`` method style function works):

    >>> import numpy as np
    >>> def noisy_value(x, *, scale, random_state):
    ...     return x + random_state.laplace(0.0, scale)
    >>> mech = PerCall(noisy_value, scale=1.0)
    >>> out = mech(3.0, 5, np.random.default_rng(0))
    >>> out.shape, bool(np.all(out == mech(3.0, 5, np.random.default_rng(0))))
    ((5,), True)
    >>> mech.pop_timing()[0]
    10
    """

    def __init__(self, release: Callable[..., Any] | str, *, seed_arg: str | None = "random_state",
                 seed_kind: str = "randomstate", neighbour_model: str | None = None,
                 output: int | Callable[[Any], Any] | None = None, **params: Any) -> None:
        if isinstance(release, str):
            resolve_import_path(release)          # fail early, in the auditing process, with a clear message
        elif not callable(release):
            raise InputError(f"release must be a callable or an import path 'module:attribute', "
                             f"got {type(release).__name__}")
        if seed_kind not in SEED_KINDS:
            raise InputError(f"seed_kind must be one of {SEED_KINDS}, got {seed_kind!r}")
        seed_arg = _seed_arg(seed_arg)
        if seed_arg is not None and seed_arg in params:
            raise InputError(f"{seed_arg!r} is the keyword the adapter seeds the release through; do not pass it "
                             "as a parameter (or name another seed_arg)")
        if output is not None and not (callable(output) or (isinstance(output, int) and not isinstance(output, bool))):
            raise InputError(f"output must be an index (e.g. 0 for a histogram's counts) or a callable, got {output!r}")
        if neighbour_model is not None and not isinstance(neighbour_model, str):
            raise InputError(f"neighbour_model must be a string such as 'add/remove-one', got {neighbour_model!r}")
        self.function = release
        self.seed_arg = seed_arg
        self.seed_kind = seed_kind
        self.neighbour_model = neighbour_model
        self.output = output
        self.params = dict(params)
        self.library_warnings: list[str] = []
        self._home_pid = os.getpid()

    # ---- what the audit reads ------------------------------------------------------------------------------

    @property
    def reproducible(self) -> bool:
        """Whether the same seed reproduces the outputs (``False`` when the release cannot be seeded)."""
        return self.seed_arg is not None

    @property
    def name(self) -> str:
        """The release's name, for messages."""
        f = self.function
        return f if isinstance(f, str) else f"{getattr(f, '__module__', '?')}:{getattr(f, '__qualname__', f)}"

    @property
    def audit_notes(self) -> tuple[str, ...]:
        """Notes the audit adds to its result: the neighbour model, the library's warnings."""
        notes = []
        if self.neighbour_model:
            notes.append(f"{self.name}: the library's neighbour model is {self.neighbour_model}; the audited pairs "
                         "must be neighbours under it")
        notes += [f"{self.name} warned: {w}" for w in self.library_warnings]
        return tuple(notes)

    def pop_timing(self) -> tuple[int, float]:
        """``(calls, seconds inside the library)`` made by this thread since its last call of ``pop_timing``, then
        reset.  Per thread: a Dask worker with several threads runs batches of one adapter side by side, and each
        batch's timing is popped by the thread that ran it."""
        counts = _thread_counts()
        return counts.pop(id(self), (0, 0.0))

    # ---- the batched contract ------------------------------------------------------------------------------

    def resolved(self) -> Callable[..., Any]:
        """The release function (an import path resolved, and cached, in this process)."""
        f = self.function
        return resolve_import_path(f) if isinstance(f, str) else f

    def prepare_process(self) -> None:
        """Run once per process before its first batch.  In a process other than the one that built the adapter
        (a forked sampling worker), a seedless adapter reseeds ``np.random`` and ``random`` from the operating
        system, so that workers do not replay the generator state they inherited.  Subclasses extend it for their
        library's own generator (and call this one)."""
        if self.seed_arg is None and self.in_worker:
            np.random.seed()
            random.seed()

    @property
    def in_worker(self) -> bool:
        """This process is not the one that built the adapter (a forked sampling worker, a Dask worker)."""
        return os.getpid() != self._home_pid

    def preparation_key(self) -> str:
        """What :meth:`prepare_process` depends on: it runs once per process and key."""
        return f"{type(self).__module__}.{type(self).__qualname__}:{self.seed_arg is None}"

    def convert_input(self, x: Any) -> Any:
        """The input as the release takes it, converted once per batch (identity here; library targets turn numpy
        values into the Python values their library insists on)."""
        return x

    def bind(self, n: int, rng: np.random.Generator) -> Callable[[Any], Any]:
        """The one-argument release of one batch of ``n`` calls, seeded from ``rng`` (see ``seed_kind``)."""
        fn = self.resolved()
        if self.seed_arg is None:
            return functools.partial(fn, **self.params) if self.params else fn
        if self.seed_kind == "randomstate":
            seed: Any = np.random.RandomState(np.random.MT19937(int(rng.integers(2**63))))
        elif self.seed_kind == "generator":
            seed = rng
        else:
            seeds = iter(rng.integers(0, 2**31, size=n).tolist())
            kw = dict(self.params)
            arg = self.seed_arg

            def release(x: Any) -> Any:
                kw[arg] = next(seeds)
                return fn(x, **kw)

            return release
        return functools.partial(fn, **self.params, **{self.seed_arg: seed})

    def __call__(self, x: Any, n: int, rng: np.random.Generator) -> NDArray:
        """``n`` releases on ``x``, stacked to an array of ``n`` rows."""
        key = (os.getpid(), self.preparation_key())
        if key not in _prepared:
            self.prepare_process()
            _prepared.add(key)
        release = self.bind(n, rng)
        x = self.convert_input(x)
        outs: list[Any] = [None] * n
        clock = time.perf_counter
        inside = 0.0
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("default")      # each distinct warning once per batch, recorded, not printed
            for i in range(n):
                t0 = clock()
                r = release(x)
                inside += clock() - t0
                outs[i] = r
        counts = _thread_counts()
        calls, seconds = counts.get(id(self), (0, 0.0))
        counts[id(self)] = (calls + n, seconds + inside)
        self._record(caught)
        return self._stack(outs, n)

    # ---- helpers ---------------------------------------------------------------------------------------------

    def _record(self, caught: list[warnings.WarningMessage]) -> None:
        for w in caught:
            text = f"{w.category.__name__}: {w.message}"
            if text not in self.library_warnings and len(self.library_warnings) < MAX_WARNINGS:
                self.library_warnings.append(text)

    def _stack(self, outs: list[Any], n: int) -> NDArray:
        pick = self.output
        if pick is not None:
            try:
                outs = [pick(r) for r in outs] if callable(pick) else [r[pick] for r in outs]
            except Exception as exc:
                raise MechanismError(f"output={pick!r} could not pick the released part of what {self.name} "
                                     f"returned ({type(exc).__name__}: {exc})") from None
        first = outs[0] if n else None
        if isinstance(first, tuple):
            raise MechanismError(
                f"{self.name} returned a tuple of {len(first)} values (e.g. a histogram's (counts, edges)); pass "
                "output=<index> (output=0 for the counts) or output=<callable> to PerCall to pick the released part"
            )
        if n and isinstance(first, (float, int)) and not isinstance(first, bool):
            try:
                return np.fromiter(outs, dtype=np.float64 if isinstance(first, float) else np.int64, count=n)
            except (TypeError, ValueError, OverflowError):
                pass  # mixed types: np.asarray below decides
        try:
            out = np.asarray(outs)
        except ValueError as exc:
            raise MechanismError(f"the outputs of {self.name} do not stack into an array ({exc}); every call must "
                                 "return a value of the same shape") from None
        if out.dtype.kind not in "biuf":
            raise MechanismError(f"{self.name} returned {type(first).__name__} values, which do not stack into a "
                                 "numeric array; return numbers or numeric arrays, or pick them with output=...")
        return out

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["library_warnings"] = []
        return state

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        seed = f"seed_arg={self.seed_arg!r}" + (f", seed_kind={self.seed_kind!r}" if self.seed_arg else "")
        return f"{type(self).__name__}({self.name!r}, {seed}" + (f", {params}" if params else "") + ")"


def per_call(release: Callable[..., Any] | str, **kw: Any) -> PerCall:
    """Wrap a one-release-per-call function as a batched mechanism ``mechanism(x, n, rng)``.

    Returns
    -------
    PerCall
        ``PerCall(release, **kw)``: ``n`` calls ``release(x, **params, random_state=<batch seed>)`` per batch
        (``seed_arg=None``: a library that cannot be seeded; the audit then says ``reproducible = False``).

    Raises
    ------
    InputError
        A ``seed_arg`` that is not a keyword name, an unknown ``seed_kind``, or an import path that does not resolve.

    Examples
    --------
    >>> import numpy as np, dpverify
    >>> def noisy_sum(x, *, epsilon, random_state):
    ...     return float(np.sum(x)) + random_state.laplace(0.0, 1.0 / epsilon)
    >>> r = dpverify.audit(per_call(noisy_sum, epsilon=1.0), [(0.0, 1.0)], epsilon=0.5, samples=20_000,
    ...                    seed=0, workers=1)
    >>> r.violation
    True
    """
    return PerCall(release, **kw)
