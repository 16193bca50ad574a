"""Worst-pair search: the neighbouring pair with the largest *exact* privacy loss, reported as a certificate.

For a mechanism with an exact output law (``log_pmf``/``pmf``, see :mod:`dpverify.exact`), a relation and a
base input ``x``, the search maximises the exact loss ``ε(x, x')`` (or ``δ(ε_claim)`` for an (ε, δ) claim)
over neighbours ``x'`` of ``x`` in three stages:

1. **patterns** -- the relation's structured pairs (StatDP-style, :meth:`NeighbourRelation.patterns`) and
   seeded random pairs;
2. **local** -- hill climbing with random restarts.  ℓ∞ radius μ: over the lattice ``x' = x + d``,
   ``d ∈ {−μ, 0, μ}^m`` (coordinate moves, first improvement, seeded sweep order), started from the best
   pattern and from ``restarts`` random corners of the box.  ℓ1 radius r: every ``±r`` move of one coordinate
   and every ``±r/2`` split over two.  Add/remove one record: every removal, and additions of records on a
   grid of the ``domain`` box (with the data's own values and their floating-point neighbours, where ties
   and interval boundaries break proofs); replace one: every record replaced by each grid record;
3. **polish** -- bounded Powell (:func:`scipy.optimize.minimize`) from the best point of the box (ℓ∞), or of
   the added record (add/remove, replace): losses are often largest in the interior of a face.

The result is a :class:`WorstPairCertificate`: inputs, pair, the output attaining the loss, its two exact
probabilities, the exact ε, δ at the claimed ε, the claim and the verdict -- evidence anybody can recompute
with :func:`dpverify.exact.exact_privacy_loss` on the two inputs.  A search explores part of the relation: a
certificate without a violation says no examined pair breaks the claim.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import optimize

from dpverify.audit import _check_count
from dpverify.errors import InputError
from dpverify.exact import DistributionCache, ExactPairResult, check_claim, pair_result
from dpverify.jsonsafe import json_clean, json_float
from dpverify.neighbours import _as_vector

__all__ = ["WorstPairCertificate", "worst_pair_search"]


@dataclass(frozen=True, eq=False)
class WorstPairCertificate:
    """The worst pair found and its exact loss.  ``stage`` tells which search stage found it; ``trace`` the best
    objective after each stage; ``evaluations`` the exact distributions computed."""

    mechanism: str
    relation: str
    claim_epsilon: float
    claim_delta: float
    x0: Any
    x1: Any
    label: str
    result: ExactPairResult
    stage: str
    evaluations: int
    seed: int
    trace: tuple[tuple[str, float], ...]

    @property
    def epsilon(self) -> float:
        """Exact ε of the pair (a lower bound on the mechanism's ε over the relation)."""
        return self.result.loss.epsilon

    @property
    def epsilon_lower_bound(self) -> float:
        return self.epsilon

    @property
    def delta_at_claim(self) -> float:
        return self.result.delta_at_claim

    @property
    def violation(self) -> bool:
        return self.result.violation

    def summary(self) -> str:
        loss = self.result.loss
        verdict = "VIOLATION" if self.violation else "no examined pair breaks the claim"
        claim = f"ε={self.claim_epsilon:g}" + (f", δ={self.claim_delta:g}" if self.claim_delta else "")
        return (f"{self.mechanism} under {self.relation}: {verdict} of {claim}; worst pair ({self.label}, found "
                f"by {self.stage}) has exact ε = {loss.epsilon:.6g} at output {_show(loss.output)} "
                f"(ln p0 = {loss.log_p0:.6g}, ln p1 = {loss.log_p1:.6g}), δ(ε_claim) = {self.delta_at_claim:.3g}; "
                f"{self.evaluations} exact distributions")

    def __str__(self) -> str:
        return self.summary()

    def to_dict(self) -> dict[str, Any]:
        return json_clean({
            "mechanism": self.mechanism, "relation": self.relation,
            "claim": {"epsilon": json_float(self.claim_epsilon), "delta": json_float(self.claim_delta)},
            "x0": _plain(self.x0), "x1": _plain(self.x1), "label": self.label,
            "loss": self.result.loss.to_dict(), "delta_at_claim": json_float(self.delta_at_claim),
            "violation": self.violation, "stage": self.stage, "evaluations": self.evaluations,
            "seed": self.seed, "trace": [[s, json_float(v)] for s, v in self.trace],
        })


def _show(o: Any) -> str:
    return repr(o.tolist()) if isinstance(o, np.ndarray) else repr(o)


def _plain(x: Any) -> Any:
    """An input as JSON-able data: the weights (and edges) of a weighted input, else the array."""
    if hasattr(x, "weights") and hasattr(x, "with_weights"):
        out: dict[str, Any] = {"weights": np.asarray(x.weights).tolist()}
        if hasattr(x, "edges"):
            out["edges"] = np.asarray(x.edges).tolist()
        return out
    return np.asarray(x).tolist()


class _Search:
    """Keeps the best pair; every candidate goes through :meth:`consider`."""

    def __init__(self, mechanism: Any, epsilon: float, delta: float, max_evaluations: int) -> None:
        self.cache = DistributionCache(mechanism)
        self.epsilon, self.delta = epsilon, delta
        self.max_evaluations = max_evaluations
        self.best: tuple[float, float] = (-math.inf, -math.inf)
        self.best_pair: tuple[Any, Any, str, ExactPairResult, str] | None = None
        self.stage = "patterns"
        self.trace: list[tuple[str, float]] = []

    def objective(self, r: ExactPairResult) -> tuple[float, float]:
        return (r.loss.epsilon, r.delta_at_claim) if self.delta == 0 else (r.delta_at_claim, r.loss.epsilon)

    @property
    def exhausted(self) -> bool:
        return self.cache.evaluations >= self.max_evaluations

    def consider(self, x0: Any, x1: Any, label: str) -> float:
        r = pair_result(self.cache, x0, x1, self.epsilon, self.delta, 0, label)
        obj = self.objective(r)
        if obj > self.best:
            self.best, self.best_pair = obj, (x0, x1, label, r, self.stage)
        return obj[0]

    def mark(self, stage: str) -> None:
        self.trace.append((self.stage, self.best[0]))
        self.stage = stage


def _vector(x: Any) -> tuple[np.ndarray, Callable[[np.ndarray], Any]]:
    """The float weights of a vector input and how to rebuild one (validated by :mod:`dpverify.neighbours`)."""
    v = _as_vector(x, "x", "worst_pair_search")
    return v.w, v.rebuild


def _hill_climb(s: _Search, start: np.ndarray, box: np.ndarray, score: Callable[[np.ndarray], float],
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


def _search_linf(s: _Search, x: Any, mu: float, base_radius: float, restarts: int, polish: bool,
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
        budget = max(1, s.max_evaluations - s.cache.evaluations)
        optimize.minimize(lambda z: -s.consider(*pair(z), "polish"), z_best, method="Powell",
                          bounds=list(zip(-box, box)),
                          options={"maxfev": min(budget, 60 * k), "xtol": 1e-6 * mu, "ftol": 1e-12})


def _search_l1(s: _Search, x: Any, r: float) -> None:
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


def _search_dataset(s: _Search, x: Any, kind: str, domain: Any, grid: int, polish: bool) -> None:
    data = np.asarray(x, dtype=np.float64)
    recs = _grid_records(data, domain, grid)
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
            val = s.consider(data, make(i, rec), f"add[{_show(rec)}]" if i < 0 else f"replace[{i}]<-{_show(rec)}")
            if val > best_rec.get(i, (-math.inf, None))[0]:
                best_rec[i] = (val, rec)
    s.mark("polish")
    if polish:
        for i, (_, rec) in best_rec.items():
            if s.exhausted:
                return
            r0 = np.atleast_1d(np.asarray(rec, dtype=np.float64))
            budget = max(1, s.max_evaluations - s.cache.evaluations)

            def neg(z: np.ndarray, i: int = i) -> float:
                z = np.clip(z, lo, hi)
                return -s.consider(data, make(i, z[0] if data.ndim == 1 else z), "polish")

            optimize.minimize(neg, r0, method="Powell", bounds=list(zip(lo, hi)),
                              options={"maxfev": min(budget, 200), "xtol": 1e-9, "ftol": 1e-12})


def worst_pair_search(mechanism: Any, relation: Any, x: Any, epsilon: float, delta: float = 0.0, *,
                      random_pairs: int = 16, restarts: int = 4, polish: bool = True, seed: int = 0,
                      base_radius: float = 0.0,
                      domain: Any = None, grid: int = 21, max_evaluations: int = 5000) -> WorstPairCertificate:
    """Search the neighbours of ``x`` under ``relation`` for the pair with the largest exact loss.

    ``base_radius`` > 0 (ℓ∞ relations) lets the search move the base too: pairs ``(x + b, x + b + d)`` with
    ``|b|_∞ <= base_radius``, since the worst pair need not sit at the given base.
    ``domain`` (``(low, high)``, or per-dimension lows and highs) is required for add/remove and replace
    relations: it bounds the records the search adds.  ``grid`` points per dimension; ``max_evaluations``
    caps the exact distributions computed.  Seeded: the same arguments give the same certificate.
    """
    from dpverify import neighbours as nb

    epsilon, delta = check_claim(epsilon, delta)
    if not isinstance(relation, nb.NeighbourRelation):
        raise InputError(f"relation must be a dpverify.neighbours relation (LInfNeighbours, L1Neighbours, "
                         f"AddRemoveOne, ReplaceOne), got {type(relation).__name__}")
    for name, v, lo in (("random_pairs", random_pairs, 0), ("restarts", restarts, 0), ("grid", grid, 2),
                        ("max_evaluations", max_evaluations, 1)):
        _check_count(name, v, lo)
    if not (isinstance(base_radius, (int, float)) and math.isfinite(base_radius) and base_radius >= 0):
        raise InputError(f"base_radius must be a finite number >= 0, got {base_radius!r}")
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    s = _Search(mechanism, epsilon, delta, max_evaluations)
    for p in relation.pairs(x, patterns=True, random=random_pairs, seed=int(rng.integers(2**63))):
        s.consider(p.x0, p.x1, p.label)
    s.mark("local")
    if isinstance(relation, nb.LInfNeighbours):
        _search_linf(s, x, float(relation.radius), float(base_radius), restarts, polish, rng)
    elif isinstance(relation, nb.L1Neighbours):
        _search_l1(s, x, float(relation.radius))
        s.mark("polish")
    elif isinstance(relation, nb.AddRemoveOne):
        _search_dataset(s, x, "add_remove", domain, grid, polish)
    elif isinstance(relation, nb.ReplaceOne):
        _search_dataset(s, x, "replace", domain, grid, polish)
    s.mark("done")
    assert s.best_pair is not None
    x0, x1, label, result, stage = s.best_pair
    return WorstPairCertificate(
        mechanism=type(mechanism).__name__, relation=str(relation), claim_epsilon=epsilon, claim_delta=delta,
        x0=x0, x1=x1, label=label, result=result, stage=stage, evaluations=s.cache.evaluations, seed=seed,
        trace=tuple(s.trace))
