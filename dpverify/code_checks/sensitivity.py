"""Sensitivity checks: search for neighbouring inputs on which a function changes by more than its claimed Δ.

Most real differential-privacy bugs are a wrong sensitivity: the noise is right for a Δ the code does not
have.  :func:`check_sensitivity` takes the function ``f`` the noise protects (a number or a vector -- a whole
score table), the claimed Δ, the norm it is measured in (ℓ1, ℓ2 or ℓ∞) and the neighbour relation the claim is
made for, and looks for the pair ``x ~ x'`` with the largest ``‖f(x) − f(x')‖``:

1. **pairs** -- pairs the caller gives, the relation's structured patterns around the base input (StatDP
   style, :meth:`~dpverify.neighbours.NeighbourRelation.patterns`) and seeded random neighbours;
2. **hypothesis** -- property-based generation with :mod:`dpverify.testing.strategies` (ties, points on interval
   boundaries, duplicates, extreme values, tiny and large datasets); generation only, seeded, no example
   database, so a run is reproducible and bounded (hypothesis' own ``target`` optimisation phase was dropped:
   on saturated objectives it spent minutes in its search tree; the local stage below does the optimising);
3. **local** / **polish** -- the adversarial search of :mod:`dpverify.code_checks.pair_search` (hill climbing with random
   restarts on the ℓ∞ lattice, ℓ1 single and split moves, every removal and a grid of added or replacing
   records, then a bounded Powell polish with :func:`scipy.optimize.minimize`), around the base input and
   again around the best base the hypothesis stage found.

The result is a :class:`SensitivityResult`: the largest change found, the witness pair, both values of
``f``, the stage that found it and the verdict.  A search explores part of the relation: ``violation=False``
means *no examined pair exceeds the claim*, not that the claim is proved.  A function value that is NaN or
infinite on one input of a pair but not on the other counts as an infinite change (one NaN record turning a
sum into NaN is a classic bug, opted into with ``nonfinite=True``).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify.results import Measured, ViolationVerdict
from dpverify.errors import InputError
from dpverify.jsonsafe import json_clean, json_float
from dpverify.neighbours import AddRemoveOne, NeighbourRelation, Pair, ReplaceOne, as_pairs
from dpverify.neighbours.base import value_key
from dpverify._validation import counted, plain_input, show_value
from dpverify.code_checks.pair_search import PairSearch, check_search_options, run_search

__all__ = ["NORMS", "SensitivityResult", "check_sensitivity", "change", "differences", "norm_of"]

#: Norms in which a sensitivity can be claimed.
NORMS: tuple[str, ...] = ("l1", "l2", "linf")
_NORM_NAMES = {"l1": "ℓ1", "l2": "ℓ2", "linf": "ℓ∞"}
_NONFINITE_RECORDS = (math.nan, math.inf, -math.inf)


def _name(f: Any) -> str:
    inner = getattr(f, "func", None)  # functools.partial
    if inner is not None:
        return _name(inner)
    return getattr(f, "__qualname__", None) or type(f).__name__


def differences(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``b − a`` entry-wise, 0 where the entries are equal (including ``inf == inf`` and NaN on both sides)
    and ``inf`` where a NaN or infinity is on one side only."""
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    with np.errstate(invalid="ignore"):
        d = np.where(same, 0.0, b - a)
    return np.where(np.isnan(d), math.inf, d)


def norm_of(d: np.ndarray, norm: str, axis: int | None = None) -> np.ndarray:
    """The ``norm`` (``"l1"``, ``"l2"``, ``"linf"``) of the differences ``d`` along ``axis`` (all entries when
    ``None``); an infinite entry makes every norm infinite."""
    ad = np.abs(d)
    if norm == "l1":
        return ad.sum(axis=axis)
    if norm == "l2":
        inf = np.isinf(ad).any(axis=axis)
        return np.where(inf, math.inf, np.sqrt(np.sum(np.where(np.isinf(ad), 0.0, ad) ** 2, axis=axis)))
    return ad.max(axis=axis)


def change(v0: Any, v1: Any, norm: str = "l1") -> float:
    """``‖v1 − v0‖`` in ``norm``; entries equal on both sides (including ``inf == inf`` and NaN on both
    sides) contribute 0, a NaN or infinity on one side only makes the change infinite."""
    a = np.asarray(v0, dtype=np.float64)
    b = np.asarray(v1, dtype=np.float64)
    if a.shape != b.shape:
        raise InputError(f"f returned values of shapes {a.shape} and {b.shape} on a neighbouring pair; a "
                         "sensitivity compares outputs of the same shape -- return a fixed-length summary "
                         "(e.g. counts on a fixed grid)")
    if a.size == 0:
        return 0.0
    return float(norm_of(differences(a, b), norm))


@dataclass(frozen=True, eq=False)
class SensitivityResult(ViolationVerdict):
    """The pair with the largest change found.

    ``max_change`` is ``‖f(x0) − f(x1)‖`` in ``norm`` (``inf`` when ``f`` is non-finite on one side only),
    ``violation`` whether it exceeds ``claimed`` (beyond a relative tolerance ``rtol`` for rounding),
    ``stage`` which search stage found the pair, ``trace`` the best change after each stage and
    ``evaluations`` the pairs examined.
    """

    function: str
    relation: str
    norm: str
    claimed: float
    max_change: float
    x0: Any
    x1: Any
    label: str
    f0: Any
    f1: Any
    stage: str
    evaluations: int
    seed: int
    rtol: float
    trace: tuple[tuple[str, float], ...]


    def _measured(self) -> Measured:
        return Measured("max_change", self.max_change)

    @property
    def violation(self) -> bool:
        return self.max_change > self.claimed * (1.0 + self.rtol)

    @property
    def ratio(self) -> float:
        """``max_change / claimed`` (> 1 for a violation)."""
        return self.max_change / self.claimed

    @property
    def witness(self) -> Pair:
        return Pair(self.x0, self.x1, self.label)

    def summary(self) -> str:
        verdict = ("VIOLATION" if self.violation else "no examined pair exceeds the claim")
        return (f"{self.function} under {self.relation}: {verdict}; largest {_NORM_NAMES[self.norm]} change "
                f"{self.max_change:.6g} vs claimed Δ = {self.claimed:.6g} (ratio {self.ratio:.4g}) on pair "
                f"{self.label!r} (found by {self.stage}): f(x0) = {show_value(self.f0)}, f(x1) = {show_value(self.f1)}; "
                f"{counted(self.evaluations, 'pair')} examined")

    def __str__(self) -> str:
        return self.summary()

    def to_dict(self) -> dict[str, Any]:
        return json_clean({
            "function": self.function, "relation": self.relation, "norm": self.norm,
            "claimed": json_float(self.claimed), "max_change": json_float(self.max_change),
            "ratio": json_float(self.ratio), "violation": self.violation,
            "witness": {"label": self.label, "x0": plain_input(self.x0), "x1": plain_input(self.x1),
                        "f0": np.asarray(self.f0, dtype=float).tolist(),
                        "f1": np.asarray(self.f1, dtype=float).tolist()},
            "stage": self.stage, "evaluations": self.evaluations, "seed": self.seed,
            "trace": [[s, json_float(v)] for s, v in self.trace],
        })


class _ChangeSearch(PairSearch):
    """Objective: ``‖f(x0) − f(x1)‖``; ``f`` is evaluated once per distinct input."""

    def __init__(self, f: Callable[[Any], Any], norm: str, relation: NeighbourRelation,
                 max_evaluations: int) -> None:
        super().__init__(max_evaluations)
        self.f, self.norm, self.relation = f, norm, relation
        self.values: dict[tuple[Any, ...], np.ndarray] = {}
        self.shape: tuple[int, ...] | None = None

    def value(self, x: Any, label: str, base: bool = False) -> np.ndarray:
        key = value_key(x)
        hit = self.values.get(key)
        if hit is not None:
            return hit
        try:
            out = self.f(x)
        except Exception as exc:  # noqa: BLE001 -- a user function failing is reported, named
            if base:
                raise InputError(
                    f"f raised {type(exc).__name__}: {exc} on the base input {show_value(x)}; check that the relation "
                    f"({self.relation}) matches the input f expects") from None
            raise InputError(
                f"f raised {type(exc).__name__}: {exc} on an input generated under {self.relation} (pair "
                f"{label!r}): {show_value(plain_input(x))}; f must accept every input the relation allows -- restrict the "
                "records with domain=(low, high), or fix f") from None
        try:
            v = np.asarray(out, dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError(f"f must return a number or a numeric array, got {type(out).__name__} "
                             f"({out!r:.80}) on {show_value(plain_input(x))}") from None
        if self.shape is None:
            self.shape = v.shape
        elif v.shape != self.shape:
            raise InputError(f"f returned shape {v.shape} on {label!r} but {self.shape} before; a sensitivity "
                             "compares outputs of one fixed shape -- return a fixed-length summary")
        if len(self.values) < 100_000:
            self.values[key] = v
        return v

    def evaluate(self, x0: Any, x1: Any, label: str) -> tuple[tuple[float, float], tuple[np.ndarray, np.ndarray]]:
        v0, v1 = self.value(x0, label), self.value(x1, label)
        return (change(v0, v1, self.norm), 0.0), (v0, v1)


def _check_claim(claimed: Any) -> float:
    if not isinstance(claimed, numbers.Real) or isinstance(claimed, bool) or not (0 < float(claimed) < math.inf):
        raise InputError(f"claimed sensitivity must be a finite number > 0, got {claimed!r}; a sensitivity is the "
                         "largest change of f between neighbours (e.g. 1.0 for a count under add/remove)")
    return float(claimed)


def _hypothesis_stage(s: _ChangeSearch, relation: NeighbourRelation, x: Any, domain: Any, examples: int,
                      nonfinite: bool, base_radius: float, seed: int, max_size: int) -> None:
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed

    from dpverify.testing import strategies as strategies

    strategy = strategies.neighbour_pairs(relation, x, domain=None if domain is None else tuple(domain),
                                          nonfinite=nonfinite, base_radius=base_radius or None,
                                          max_size=max_size)
    failure: list[BaseException] = []

    @hypothesis_seed(seed)
    @settings(max_examples=examples, database=None, deadline=None, derandomize=False,
              phases=(Phase.generate,), suppress_health_check=list(HealthCheck))
    @given(strategy)
    def explore(pair: Pair) -> None:
        if failure or s.exhausted:
            return
        try:
            s.consider(pair.x0, pair.x1, f"hypothesis:{pair.label}")
        except InputError as exc:
            failure.append(exc)
            return

    explore()
    if failure:
        raise failure[0]


def check_sensitivity(f: Callable[[Any], Any], claimed: float, relation: NeighbourRelation, x: Any = None, *,
                      norm: str = "l1", domain: Any = None, pairs: Iterable[Any] = (), examples: int = 200,
                      random_pairs: int = 16, restarts: int = 4, polish: bool = True, base_radius: float = 0.0,
                      grid: int = 21, nonfinite: bool = False, max_size: int = 20,
                      max_evaluations: int = 5000, seed: int = 0, rtol: float = 1e-9) -> SensitivityResult:
    """Search for neighbours ``x ~ x'`` (under ``relation``) with ``‖f(x) − f(x')‖ > claimed``.

    Parameters
    ----------
    f : the function whose sensitivity is claimed; takes one input, returns a number or a fixed-shape array.
    claimed : the claimed sensitivity Δ (finite, > 0).
    relation : a :mod:`dpverify.neighbours` relation (``LInfNeighbours``, ``L1Neighbours``, ``AddRemoveOne``,
        ``ReplaceOne``).
    x : the base input (a vector, a weighted graph, a dataset); required for the vector relations (it fixes
        the dimension / topology), optional for the dataset relations when ``domain`` is given.
    norm : ``"l1"``, ``"l2"`` or ``"linf"`` -- the norm of ``f(x) − f(x')`` the claim is made in.
    domain : ``(low, high)`` (or per-dimension lows and highs), the public range of a record's values; required
        for the dataset relations (the records the search may add), and for vector relations the range the
        hypothesis stage draws whole new bases from.
    pairs : extra pairs to examine first (``(x0, x1)`` tuples or :class:`~dpverify.neighbours.Pair`); each is
        validated against ``relation`` (unless ``nonfinite``).
    examples : hypothesis examples (0 skips the stage).  ``random_pairs``, ``restarts``, ``polish``,
        ``base_radius``, ``grid``: options of the local search (:mod:`dpverify.code_checks.pair_search`).
    nonfinite : also try NaN and ±inf records (dataset relations).
    max_size : the largest dataset the hypothesis stage generates.
    max_evaluations : cap on the pairs examined.  ``seed``: the seed of every random choice.
    rtol : relative tolerance on the claim (floating-point rounding).

    Returns
    -------
    SensitivityResult
        The largest change found, its witness pair and search stage, and ``verdict`` (``violation`` when the change
        exceeds the claim beyond ``rtol``).  A pass means no larger change was found by this search.

    Raises
    ------
    InputError
        A claim that is not a finite number > 0, an unknown norm, a relation that is not a relation object or does
        not match ``x``, or ``f`` raising on an input (the message names the input).

    Examples
    --------
    >>> import numpy as np
    >>> from dpverify.neighbours import AddRemoveOne
    >>> r = check_sensitivity(lambda d: np.sum(np.clip(d, 0, 1)), 0.5, AddRemoveOne(), [0.2, 0.9], domain=(0.0, 1.0),
    ...                       examples=0, seed=0)
    >>> r.violation, float(r.max_change)
    (True, 1.0)
    """
    claimed = _check_claim(claimed)
    if norm not in NORMS:
        raise InputError(f"norm must be one of {', '.join(NORMS)} (ℓ1, ℓ2, ℓ∞ of f(x) − f(x')), got {norm!r}")
    if not isinstance(relation, NeighbourRelation):
        raise InputError(f"relation must be a dpverify.neighbours.NeighbourRelation (LInfNeighbours, L1Neighbours, "
                         f"AddRemoveOne, ReplaceOne or a subclass of your own), got {type(relation).__name__}")
    if not callable(f):
        raise InputError(f"f must be callable (the function whose sensitivity is claimed), got {type(f).__name__}")
    check_search_options(random_pairs, restarts, grid, max_evaluations, base_radius)
    for name, v in (("examples", examples), ("max_size", max_size), ("seed", seed)):
        if not isinstance(v, numbers.Integral) or isinstance(v, bool) or v < 0:
            raise InputError(f"{name} must be an integer >= 0, got {v!r}")
    if not (isinstance(rtol, numbers.Real) and 0 <= rtol < 1):
        raise InputError(f"rtol must be a number in [0, 1), got {rtol!r}")
    dataset_relation = isinstance(relation, (AddRemoveOne, ReplaceOne))
    if x is None and (not dataset_relation or domain is None):
        raise InputError("check_sensitivity needs a base input x (for the vector relations it fixes the "
                         "dimension or graph topology); for add/remove or replace relations pass x or domain")
    if dataset_relation and domain is None:
        raise InputError("searching add/remove or replace neighbours needs the record domain: pass "
                         "domain=(low, high) (the public range of a record's values)")

    rng = np.random.default_rng(np.random.SeedSequence(seed))
    s = _ChangeSearch(f, norm, relation, max_evaluations)
    if x is not None:
        relation.patterns(x)  # validates x against the relation (clear InputError when they do not match)
        s.value(x, "base", base=True)
    for p in as_pairs(list(pairs)) if pairs else ():
        if not nonfinite:
            relation.validate_pair(p.x0, p.x1)
        s.consider(p.x0, p.x1, p.label)
    if x is not None:
        for p in relation.pairs(x, patterns=True, random=random_pairs, seed=int(rng.integers(2**63))):
            s.consider(p.x0, p.x1, p.label)
    s.mark("hypothesis")
    if examples and not s.exhausted:
        _hypothesis_stage(s, relation, x, domain, int(examples), nonfinite, float(base_radius), int(seed),
                          int(max_size))
    s.mark("local")
    extra = _NONFINITE_RECORDS if nonfinite else ()
    bases = [] if x is None else [x]
    if s.best_pair is not None:
        b = s.best_pair[0]
        values = np.asarray(getattr(b, "weights", b), dtype=np.float64)
        if values.size and np.isfinite(values).all() and (x is None or value_key(b) != value_key(x)):
            bases.append(b)
    for base in bases:
        if s.exhausted:
            break
        run_search(s, relation, base, rng, random_pairs=0, restarts=restarts, polish=polish,
                   base_radius=base_radius, domain=domain, grid=grid, extra_records=extra, patterns=False)
    if s.best_pair is None:
        raise InputError("no neighbouring pair was examined; give a base input x, pairs, or examples > 0")
    x0, x1, label, (v0, v1), stage = s.best_pair
    return SensitivityResult(
        function=_name(f), relation=str(relation), norm=norm, claimed=claimed, max_change=s.best[0],
        x0=x0, x1=x1, label=label, f0=v0 if v0.ndim else float(v0), f1=v1 if v1.ndim else float(v1),
        stage=stage, evaluations=s.evaluations, seed=int(seed), rtol=float(rtol), trace=tuple(s.trace))
