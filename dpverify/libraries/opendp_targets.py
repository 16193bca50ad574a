"""Ready-made audit targets for OpenDP (the OpenDP Library, opendp.org; API of opendp 0.16): a ``Measurement``,
one release per call, with its own privacy map as the claim.

:class:`OpenDPMeasurement` names a *factory*, an import path ``"module:function"`` returning a ``Measurement``:
measurements are Rust objects that do not pickle, so every sampling process builds its own from the factory (once,
then cached).  OpenDP cannot be seeded -- its samplers draw their bits from a cryptographically secure generator
seeded by the operating system (``fill_bytes``, ``rust/src/traits/samplers/mod.rs`` of the OpenDP repository) --
so the target says ``reproducible = False`` (see :mod:`dpverify.statistical.contract`).  The generator is
per thread and survives ``fork`` safely: two forked workers draw different streams (checked when this module was
written, and by ``tests/test_library_targets.py``).

:meth:`OpenDPMeasurement.claim` reads the measurement's privacy map at ``d_in`` in its own output measure:
``MaxDivergence`` gives ``PrivacyClaim(ε)``, ``Approximate(MaxDivergence)`` (``make_fix_delta``) ``PrivacyClaim(ε,
δ)``, ``ZeroConcentratedDivergence`` a ``ZCDPClaim(ρ)`` of :mod:`dpverify.profiles`, ``SmoothedMaxDivergence``
(a privacy profile ``δ(ε)``) an :class:`dpverify.libraries.opendp_profile.OpenDPProfileClaim` wrapping the profile.

**Neighbour models** (OpenDP's metrics, "Metrics" in the OpenDP documentation): ``SymmetricDistance`` counts the
records added or removed, so ``d_in = 1`` on an unsized vector domain is *add/remove-one*; on a sized domain
(``vector_domain(..., size=n)``) the only neighbours are at even distances and ``d_in = 2`` is *replace-one with n
public* (one record changed = one removed and one added).  ``AbsoluteDistance`` at ``d_in`` is ``|x - x'| <=
d_in``.  :attr:`OpenDPMeasurement.neighbour_model` says which applies, from the measurement's own input domain
and metric.

Ready factories, so that suites can name them: :func:`laplace`, :func:`gaussian`, :func:`geometric`,
:func:`clamped_sum`, :func:`count`.  They enable OpenDP's ``"contrib"`` feature (its constructors need it) in the
process that builds them.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from dpverify.errors import InputError
from dpverify.libraries.percall import PerCall, resolve_import_path
from dpverify.results import PrivacyClaim

__all__ = ["OpenDPMeasurement", "laplace", "gaussian", "geometric", "clamped_sum", "count", "INSTALL_HINT"]

INSTALL_HINT = "pip install 'dpverify[opendp]'"

#: measurements built in this process, by (factory, parameters)
_built: dict[tuple[str, str], Any] = {}


def _opendp() -> Any:
    """``opendp.prelude`` with the ``contrib`` feature on (an :class:`InputError` naming the fix when missing)."""
    try:
        import opendp.prelude as dp
    except ImportError as exc:
        raise InputError(f"this target needs opendp, which is not installed ({exc}): {INSTALL_HINT}") from None
    dp.enable_features("contrib")
    return dp


def _type(dp: Any, T: Any) -> Any:
    return {"float": float, "int": int}.get(T, T) if isinstance(T, str) else T


def _atom(dp: Any, T: Any) -> Any:
    T = _type(dp, T)
    return dp.atom_domain(T=T, nan=False) if T in (float, "f64", "f32") else dp.atom_domain(T=T)


# ---- ready factories -----------------------------------------------------------------------------------------

def laplace(scale: float, T: Any = "float") -> Any:
    """``make_laplace`` on a number (``T="float"``; ``"int"`` gives OpenDP's discrete Laplace on 32-bit integers):
    ε-DP (``MaxDivergence``) with ``ε = d_in / scale`` under ``AbsoluteDistance``."""
    dp = _opendp()
    return dp.m.make_laplace(_atom(dp, T), dp.absolute_distance(T=_type(dp, T)), float(scale))


def gaussian(scale: float, T: Any = "float") -> Any:
    """``make_gaussian`` on a number: ρ-zCDP (``ZeroConcentratedDivergence``) with ``ρ = (d_in / scale)² / 2``."""
    dp = _opendp()
    return dp.m.make_gaussian(_atom(dp, T), dp.absolute_distance(T=_type(dp, T)), float(scale))


def geometric(scale: float, bounds: Any = None) -> Any:
    """``make_geometric`` (integer Laplace) on a 32-bit integer, optionally with ``bounds`` (a constant-time
    sampler): ε-DP with ``ε = d_in / scale``."""
    dp = _opendp()
    return dp.m.make_geometric(dp.atom_domain(T=int), dp.absolute_distance(T=int), float(scale),
                               bounds=None if bounds is None else tuple(int(b) for b in bounds))


def clamped_sum(bounds: Any, scale: float, size: int | None = None) -> Any:
    """A vector of floats, clamped to ``bounds``, summed, plus Laplace noise of ``scale``.

    Neighbour model: OpenDP's ``SymmetricDistance``.  Without ``size`` it is add/remove-one at ``d_in = 1`` (the
    sum's sensitivity is ``max(|lower|, |upper|)``); with ``size=n`` (a sized domain: ``n`` public) the
    neighbours are replace-one at ``d_in = 2`` (sensitivity ``upper - lower``) -- build the target with
    ``OpenDPMeasurement(..., d_in=2)``."""
    dp = _opendp()
    lower, upper = (float(b) for b in bounds)
    domain = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=None if size is None else int(size))
    return ((domain, dp.symmetric_distance()) >> dp.t.then_clamp((lower, upper)) >> dp.t.then_sum()
            >> dp.m.then_laplace(float(scale)))


def count(scale: float, T: Any = "float") -> Any:
    """The number of records of a vector (of ``T``) plus discrete Laplace noise of ``scale``: ε-DP with ``ε = d_in
    / scale`` under ``SymmetricDistance`` (add/remove-one at ``d_in = 1``)."""
    dp = _opendp()
    domain = dp.vector_domain(_atom(dp, T))
    return (domain, dp.symmetric_distance()) >> dp.t.then_count() >> dp.m.then_laplace(float(scale))


# ---- the target ------------------------------------------------------------------------------------------------

def neighbour_model_of(measurement: Any, d_in: Any) -> str:
    """The neighbour relation ``d_in`` means under the measurement's input metric and domain (module docstring)."""
    metric = str(measurement.input_metric)
    size = getattr(measurement.input_domain, "size", None)
    if metric.startswith("SymmetricDistance"):
        if size is None:
            return ("add/remove-one" if d_in == 1 else
                    f"up to {d_in} records added or removed (SymmetricDistance {d_in})")
        if d_in == 2:
            return f"replace-one (n = {size} public; SymmetricDistance 2 on a sized domain)"
        return (f"SymmetricDistance {d_in} on a sized domain (n = {size}): only even distances are neighbours; "
                "d_in = 2 is replace-one")
    if metric.startswith("ChangeOneDistance"):
        return f"replace-one ({d_in} record(s) changed)"
    if metric.startswith("AbsoluteDistance"):
        return f"|x - x'| <= {d_in}"
    return f"{metric} at distance {d_in}"


def _python(x: Any) -> Any:
    """Numpy values as the Python values OpenDP's type inference expects (``np.int64`` would be refused)."""
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, (list, tuple)):
        return [_python(v) for v in x]
    return x


def _distance(measurement: Any, d_in: Any) -> Any:
    """``d_in`` in the type of the input metric's distances (a suite file's ``1`` for a float metric is ``1.0``)."""
    metric = str(measurement.input_metric)
    if isinstance(d_in, (int, float)) and not isinstance(d_in, bool):
        if "f64" in metric or "f32" in metric:
            return float(d_in)
        if float(d_in).is_integer():
            return int(d_in)
    return d_in


class OpenDPMeasurement(PerCall):
    """An OpenDP ``Measurement`` as an audit target: each call ``meas(x)`` is one release.

    Parameters
    ----------
    factory
        Import path ``"module:function"`` of a function returning the measurement, called with ``params`` (e.g.
        ``"dpverify.libraries.opendp_targets:laplace"``); it runs once per process.
    d_in
        The input distance the audited pairs are at (``1``: add/remove-one for ``SymmetricDistance``, ``|x - x'| <=
        1`` for ``AbsoluteDistance``; ``2`` for replace-one on a sized domain); used by :meth:`claim` and
        :attr:`neighbour_model`.
    **params
        Arguments of the factory (``scale=1.0``, ``bounds=(0, 1)``, ...).

    ``reproducible`` is ``False``: OpenDP cannot be seeded.  Example::

        mech = OpenDPMeasurement("dpverify.libraries.opendp_targets:laplace", scale=1.0)
        dpverify.audit(mech, [(0.0, 1.0)], epsilon=mech.claim().epsilon, seed=0)
    """

    def __init__(self, factory: str, d_in: Any = 1, **params: Any) -> None:
        if not isinstance(factory, str):
            raise InputError("factory must be an import path 'module:function' (measurements do not pickle, so "
                             f"every sampling process builds its own); got {type(factory).__name__}")
        _opendp()
        self.factory = factory
        self.d_in = d_in
        super().__init__(factory, seed_arg=None, **params)
        meas = self.measurement()        # build it here: a wrong parameter fails now, with OpenDP's message
        self.neighbour_model = neighbour_model_of(meas, d_in)

    def measurement(self) -> Any:
        """The measurement, built from the factory in this process (once, then cached)."""
        key = (self.factory, repr(sorted(self.params.items())))
        meas = _built.get(key)
        if meas is None:
            _opendp()
            try:
                meas = resolve_import_path(self.factory)(**self.params)
            except InputError:
                raise
            except Exception as exc:
                raise InputError(f"the factory {self.factory}({', '.join(f'{k}={v!r}' for k, v in self.params.items())}) "
                                 f"failed: {type(exc).__name__}: {exc}") from None
            if not hasattr(meas, "map") or not hasattr(meas, "output_measure"):
                raise InputError(f"the factory {self.factory} returned {type(meas).__name__}, not an OpenDP "
                                 "Measurement")
            _built[key] = meas
        return meas

    def convert_input(self, x: Any) -> Any:
        return _python(x)

    def bind(self, n: int, rng: np.random.Generator) -> Callable[[Any], Any]:
        return self.measurement()

    def claim(self, d_in: Any = None) -> Any:
        """The measurement's own privacy claim at ``d_in`` (default: the target's), from its privacy map in its
        output measure (see the module docstring): a :class:`dpverify.results.PrivacyClaim`, a
        :class:`dpverify.profiles.ZCDPClaim` or an :class:`dpverify.libraries.opendp_profile.OpenDPProfileClaim`.
        Raises :class:`InputError` for a measure it cannot state."""
        dp = _opendp()
        meas = self.measurement()
        d = _distance(meas, self.d_in if d_in is None else d_in)
        try:
            d_out = meas.map(d)
        except Exception as exc:
            raise InputError(f"the privacy map of {self.factory} failed at d_in = {d!r} ({exc}); give a d_in of "
                             f"the input metric's type ({meas.input_metric})") from None
        measure = meas.output_measure
        if measure == dp.max_divergence():
            return PrivacyClaim(float(d_out))
        if measure == dp.approximate(dp.max_divergence()):
            eps, delta = d_out
            return PrivacyClaim(float(eps), float(delta))
        if measure == dp.zero_concentrated_divergence():
            from dpverify.profiles import ZCDPClaim

            return ZCDPClaim(rho=float(d_out))
        if measure == dp.smoothed_max_divergence():
            from dpverify.libraries.opendp_profile import OpenDPProfileClaim

            return OpenDPProfileClaim(self, d)
        raise InputError(f"{self.factory}'s output measure {measure} has no dpverify claim; state the claim yourself")

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"OpenDPMeasurement({self.factory!r}, d_in={self.d_in!r}" + (f", {params}" if params else "") + ")"
