"""Adversarial search over neighbouring pairs for any pair objective.

Shared by :mod:`dpverify.code_checks.worst_pair` (objective: the exact privacy loss of a pair) and
:mod:`dpverify.code_checks.sensitivity` (objective: the change ``‖f(x) − f(x')‖`` of a function).  Given a relation and a
base input ``x`` the search runs three stages, each candidate going through :meth:`PairSearch.consider`:

1. **patterns** -- the relation's structured pairs (StatDP-style, :meth:`NeighbourRelation.patterns`) and
   seeded random pairs;
2. **local** -- hill climbing with random restarts.  ℓ∞ radius μ: over the lattice ``x' = x + d``,
   ``d ∈ {−μ, 0, μ}^m`` (coordinate moves, first improvement, seeded sweep order), started from the best
   pattern and from ``restarts`` random corners of the box; ``base_radius`` > 0 lets the base move too.  ℓ1
   radius r: every ``±r`` move of one coordinate and every ``±r/2`` split over two.  Add/remove one record:
   every removal, and additions of records on a grid of the ``domain`` box (with the data's own values and
   their floating-point neighbours, where ties and interval boundaries break proofs); replace one: every
   record replaced by each grid record;
3. **polish** -- bounded Powell (:func:`scipy.optimize.minimize`) from the best point of the box (ℓ∞), or of
   the added record (add/remove, replace): objectives are often largest in the interior of a face.

Everything random is drawn from one seeded generator, so the same arguments give the same best pair.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from scipy import optimize

from dpverify._validation import check_count, show_value
from dpverify.errors import InputError
from dpverify.neighbours import AddRemoveOne, L1Neighbours, LInfNeighbours, NeighbourRelation, ReplaceOne
from dpverify.neighbours.vectors import as_vector

__all__ = ["PairSearch", "run_search", "check_search_options"]


class PairSearch(abc.ABC):
    """Keeps the best pair found; every candidate goes through :meth:`consider`.

    Subclasses define :meth:`evaluate` (the objective of one pair, as a tuple compared lexicographically,
    and a payload kept with the best pair) and may override :attr:`evaluations` (what counts against
    ``max_evaluations``; by default every call of :meth:`evaluate`).
    """

    def __init__(self, max_evaluations: int) -> None:
        self.max_evaluations = max_evaluations
        self.calls = 0
        self.best: tuple[float, ...] = (-math.inf, -math.inf)
        self.best_pair: tuple[Any, Any, str, Any, str] | None = None
        self.stage = "patterns"
        self.trace: list[tuple[str, float]] = []

    @abc.abstractmethod
    def evaluate(self, x0: Any, x1: Any, label: str) -> tuple[tuple[float, ...], Any]:
        """``(objective, payload)`` of the pair ``(x0, x1)``; larger objectives are worse pairs."""

    @property
    def evaluations(self) -> int:
        return self.calls

    @property
    def exhausted(self) -> bool:
        return self.evaluations >= self.max_evaluations

    def consider(self, x0: Any, x1: Any, label: str) -> float:
        obj, payload = self.evaluate(x0, x1, label)
        self.calls += 1
        if obj > self.best:
            self.best, self.best_pair = obj, (x0, x1, label, payload, self.stage)
        return obj[0]

    def mark(self, stage: str) -> None:
        self.trace.append((self.stage, self.best[0]))
        self.stage = stage


def _vector(x: Any) -> tuple[np.ndarray, Callable[[np.ndarray], Any]]:
    """The float weights of a vector input and how to rebuild one (validated by :mod:`dpverify.neighbours`)."""
    v = as_vector(x, "x", "worst_pair_search")
    return v.w, v.rebuild


def _hill_climb(s: PairSearch, start: np.ndarray, box: np.ndarray, score: Callable[[np.ndarray], float],
                rng: np.random.Generator) -> None:
    """First-improvement coordinate search, coordinate ``i`` over ``{-box[i], 0, box[i]}``, from ``start``."""
    d = start.copy()
    current = score(d)
    improved = True
    while improved and not s.exhausted:
        improved = False
        for i in rng.permutation(d.shape[0]):
            for v in (-box[i], 0.0, box[i]):
                if v == d[i] or s.exhausted:
                    continue
                trial = d.copy()
                trial[i] = v
                val = score(trial)
                if val > current + 1e-12:
                    d, current, improved = trial, val, True
                    break


def _search_linf(s: PairSearch, x: Any, mu: float, base_radius: float, restarts: int, polish: bool,
                 rng: np.random.Generator) -> None:
    """Pairs ``(x + b, x + b + d)`` with ``|d| <= mu`` and the base shift ``|b| <= base_radius`` (0: fixed base)."""
    w, rebuild = _vector(x)
    m = w.shape[0]
    k = 2 * m if base_radius > 0 else m
    box = np.concatenate([np.full(m, mu), np.full(k - m, base_radius)])

    def pair(z: np.ndarray) -> tuple[Any, Any]:
        z = np.clip(z, -box, box)
        b = z[m:] if k > m else 0.0
        return (x if k == m else rebuild(w + b)), rebuild(w + b + z[:m])

    def score(z: np.ndarray) -> float:
        return s.consider(*pair(z), "local")

    starts = []
    if s.best_pair is not None:  # the best pattern's shift, moved to the base x
        d0 = np.clip(_vector(s.best_pair[1])[0] - _vector(s.best_pair[0])[0], -mu, mu)
        starts.append(np.concatenate([d0, np.zeros(k - m)]))
    starts += [rng.choice([-1.0, 1.0], size=k) * box for _ in range(restarts)]
    for z0 in starts:
        _hill_climb(s, z0, box, score, rng)
    s.mark("polish")
    if polish and s.best_pair is not None and not s.exhausted:
        bx0, bx1 = _vector(s.best_pair[0])[0], _vector(s.best_pair[1])[0]
        z_best = np.clip(np.concatenate([bx1 - bx0, (bx0 - w)[:k - m]]), -box, box)
        budget = max(1, s.max_evaluations - s.evaluations)
        optimize.minimize(lambda z: -s.consider(*pair(z), "polish"), z_best, method="Powell",
                          bounds=list(zip(-box, box)),
                          options={"maxfev": min(budget, 60 * k), "xtol": 1e-6 * mu, "ftol": 1e-12})


def _search_l1(s: PairSearch, x: Any, r: float) -> None:
    w, rebuild = _vector(x)
    m = w.shape[0]
    for i in range(m):
        for sign in (-1.0, 1.0):
            d = np.zeros(m)
            d[i] = sign * r
            s.consider(x, rebuild(w + d), f"local[{i}:{sign * r:+g}]")
    if m <= 16:
        for i in range(m):
            for j in range(i + 1, m):
                for si in (-0.5, 0.5):
                    for sj in (-0.5, 0.5):
                        if s.exhausted:
                            return
                        d = np.zeros(m)
                        d[i], d[j] = si * r, sj * r
                        s.consider(x, rebuild(w + d), f"local[{i},{j}]")


def _grid_records(data: np.ndarray, domain: Any, grid: int) -> np.ndarray:
    """Candidate records: a grid over the domain box plus the data's values and their float neighbours."""
    dim = 1 if data.ndim == 1 else data.shape[1]
    lo, hi = _domain(domain, dim)
    axes = []
    for k in range(dim):
        col = data if data.ndim == 1 else data[:, k]
        vals = np.concatenate([np.linspace(lo[k], hi[k], grid), col, np.nextafter(col, -np.inf),
                               np.nextafter(col, np.inf)])
        axes.append(np.unique(np.clip(vals, lo[k], hi[k])))
    if dim == 1:
        return axes[0]
    mesh = np.meshgrid(*[a if a.shape[0] <= grid else np.linspace(lo[k], hi[k], grid) for k, a in enumerate(axes)],
                       indexing="ij")
    return np.stack([g.ravel() for g in mesh], axis=1)


def _domain(domain: Any, dim: int) -> tuple[np.ndarray, np.ndarray]:
    if domain is None:
        raise InputError("searching add/remove or replace neighbours needs the record domain: pass "
                         "domain=(low, high) (the public range of a record's values)")
    arr = np.asarray(domain, dtype=np.float64)
    if arr.shape == (2,):
        lo, hi = np.full(dim, arr[0]), np.full(dim, arr[1])
    elif arr.shape == (2, dim):
        lo, hi = arr[0], arr[1]
    else:
        raise InputError(f"domain must be (low, high) or (lows, highs) with {dim} values each, got shape {arr.shape}")
    if not (np.isfinite(lo).all() and np.isfinite(hi).all() and (lo < hi).all()):
        raise InputError(f"domain must be finite with low < high, got {domain!r}")
    return lo, hi


def _search_dataset(s: PairSearch, x: Any, kind: str, domain: Any, grid: int, polish: bool,
                    extra_records: Sequence[float] = ()) -> None:
    data = np.asarray(x, dtype=np.float64)
    recs = _grid_records(data, domain, grid)
    if len(extra_records):  # e.g. NaN / ±inf records, opted into by the caller
        extra = np.asarray(extra_records, dtype=np.float64)
        extra = extra if data.ndim == 1 else np.repeat(extra[:, None], data.shape[1], axis=1)
        recs = np.concatenate([recs, extra])
    lo, hi = _domain(domain, 1 if data.ndim == 1 else data.shape[1])
    best_rec: dict[int, tuple[float, Any]] = {}
    if kind == "add_remove":
        for i in range(data.shape[0]):
            s.consider(data, np.delete(data, i, axis=0), f"remove[{i}]")
        targets = [-1]
    else:
        targets = list(range(data.shape[0]))

    def make(i: int, rec: Any) -> np.ndarray:
        rec = np.asarray(rec, dtype=np.float64)
        if i < 0:
            return np.concatenate([data, rec.reshape((1,) + data.shape[1:])])
        out = data.copy()
        out[i] = rec
        return out

    for i in targets:
        for rec in recs:
            if s.exhausted:
                return
            val = s.consider(data, make(i, rec), f"add[{show_value(rec)}]" if i < 0 else f"replace[{i}]<-{show_value(rec)}")
            if val > best_rec.get(i, (-math.inf, None))[0]:
                best_rec[i] = (val, rec)
    s.mark("polish")
    if polish:
        for i, (_, rec) in best_rec.items():
            if s.exhausted:
                return
            r0 = np.atleast_1d(np.asarray(rec, dtype=np.float64))
            budget = max(1, s.max_evaluations - s.evaluations)

            def neg(z: np.ndarray, i: int = i) -> float:
                z = np.clip(z, lo, hi)
                return -s.consider(data, make(i, z[0] if data.ndim == 1 else z), "polish")

            optimize.minimize(neg, r0, method="Powell", bounds=list(zip(lo, hi)),
                              options={"maxfev": min(budget, 200), "xtol": 1e-9, "ftol": 1e-12})




def check_search_options(random_pairs: int, restarts: int, grid: int, max_evaluations: int,
                         base_radius: float) -> None:
    """Raise :class:`InputError` for a search option out of range."""
    for name, v, lo in (("random_pairs", random_pairs, 0), ("restarts", restarts, 0), ("grid", grid, 2),
                        ("max_evaluations", max_evaluations, 1)):
        check_count(name, v, lo)
    if not (isinstance(base_radius, (int, float)) and math.isfinite(base_radius) and base_radius >= 0):
        raise InputError(f"base_radius must be a finite number >= 0, got {base_radius!r}")


def run_search(s: PairSearch, relation: NeighbourRelation, x: Any, rng: np.random.Generator, *,
               random_pairs: int = 16, restarts: int = 4, polish: bool = True, base_radius: float = 0.0,
               domain: Any = None, grid: int = 21, extra_records: Sequence[float] = (),
               patterns: bool = True) -> None:
    """The three stages around the base ``x`` (see the module docstring); ``s`` keeps the best pair."""
    if patterns or random_pairs:
        for p in relation.pairs(x, patterns=patterns, random=random_pairs, seed=int(rng.integers(2**63))):
            s.consider(p.x0, p.x1, p.label)
    s.mark("local")
    if isinstance(relation, LInfNeighbours):
        _search_linf(s, x, float(relation.radius), float(base_radius), restarts, polish, rng)
    elif isinstance(relation, L1Neighbours):
        _search_l1(s, x, float(relation.radius))
        s.mark("polish")
    elif isinstance(relation, AddRemoveOne):
        _search_dataset(s, x, "add_remove", domain, grid, polish, extra_records)
    elif isinstance(relation, ReplaceOne):
        _search_dataset(s, x, "replace", domain, grid, polish, extra_records)
    s.mark("done")
