"""The auditor on randomly drawn instances of the hard failure classes, against the oracle bound.

    python -m benchmarks.random_cases --count 264 --seed 0 --write docs/auditor.md   # about 17 min on 2 cores
    python -m benchmarks.random_cases --count 10 --quick                            # smoke run

The suites hold instances this team chose; a user's mechanism is none of them.  This draws instances of eleven
classes at random (:func:`draw_case`; mechanisms in :mod:`algorithms.hard.planted`, :mod:`algorithms.hard.joint`,
:mod:`algorithms.hard.mixed_noise`, :mod:`algorithms.hard.iterates`, :mod:`algorithms.classic.top_k` and
:mod:`algorithms.classic.continual_counting`),
each with 1-3 pairs of which one is
the worst, and a claim that is either the true ε of the pairs (a *control*: any violation is a false alarm) or the
true ε divided by a factor drawn in [1.1, 4] (a *violation*):

* ``laplace-vector`` -- ``x + Lap(scale)`` in ``d`` = 1-32 coordinates, the pairs differing in 1-``d`` of them by
  ±1 or ±2 (joint events in many coordinates);
* ``mixed-output`` -- :class:`~algorithms.hard.planted.MarkedLaplace` with a NaN or constant marker released with a
  data-dependent probability in [10⁻³, 0.3]; the planted loss in the mass part or in the continuous part;
* ``rare-leak`` -- the same with the input itself released with probability 3·10⁻⁵-3·10⁻³ (true ε = ∞; the
  claim is the continuous part's ε), controls releasing a NaN with that probability on both inputs;
* ``pmf-table`` -- :class:`~algorithms.hard.planted.TabulatedPMF` over 2-400 outcomes, the largest ratio planted
  on an outcome of probability 10⁻⁴-10⁻² in half of the instances;
* ``bits-rr`` -- :class:`~algorithms.hard.planted.IndependentRR` on 2-24 bits with their own ε_j in [0.02, 0.3],
  the pairs differing in 1-``d`` bits (the loss is a weighted sum over them);
* ``gaussian-delta`` -- :class:`~algorithms.hard.planted.GaussianVector` in 1-16 coordinates at the analytic σ of
  (ε, δ) for its pair's ℓ2 distance (0.5-2), δ in [10⁻⁴, 10⁻²]: an (ε, δ) claim, tested by the hockey-stick test;
* ``top-k`` -- :class:`~algorithms.classic.top_k.OneShotTopK`: the ordered top 1-4 of 4-10 integer scores
  (logits' coefficient 0.3-5: from flat to sharp, where the leak is a low-scored item lifted into the top k in a
  few outputs of ten thousand), the neighbours adding a record to one score or to several (ℓ∞ distance 1);
* ``counter`` -- :class:`~algorithms.classic.continual_counting.FactorisedCounter`: the noisy running counts of a 0/1
  stream of 4-32 steps by the Binary Mechanism or the square-root factorisation (ε in [0.2, 2]), the neighbours
  counting one step once more or once less (the loss is a sum over the noise nodes that step is counted in, mixed
  into every later count);
* ``scale`` -- :class:`~algorithms.hard.planted.ScaledNoise`: Laplace or Gaussian noise in 2-32 coordinates whose
  *scale* moves with the input (a data-dependent scale: relative moves of 3-50 % in 1-``d`` coordinates, true ε =
  ∞, the loss growing with the distance from the centre in all of them at once) and whose centres move within the
  claim; controls move only the centres of Laplace noise at the claim;
* ``mixing`` -- :class:`~algorithms.hard.mixed_noise.MixedLaplace`: ``M·(x + Lap(scale))`` in 2-32 coordinates, ``M``
  a random orthogonal matrix, a random Gaussian one, the Haar synthesis matrix (a wavelet release) or a random
  lower-triangular one (a causal release), the pairs as for ``laplace-vector``: the loss lives in the noise's
  coordinates, which every output coordinate mixes;
* ``iterates`` -- :class:`~algorithms.hard.iterates.NoisyGradientDescent`: every iterate of 2-16 steps of noisy
  gradient descent with per-record clipping (rate 0.2-1, clipping bound 0.3-2) on 1-10 records in [−3, 3], the
  neighbours replacing one record by another drawn in [−3, 3] (the loss couples each iterate with the one before
  through the clipped update).

Each instance is audited by :func:`dpverify.audit` (``SAMPLES`` test and ``SEARCH`` search outputs per input,
α = 0.05, 2 workers, seed = the instance's) and its oracle bound computed at the same budget
(:func:`dpverify.statistical.oracle.oracle_bound`: the bound of a test that knew the optimal event).  A violation
is *detectable* when its oracle bound exceeds the claim.  ``--results FILE`` keeps one JSON line per finished
instance and a rerun skips those (an interrupted run loses none; a line whose instance differs from the one drawn now,
written by another version of the classes, is run again); ``--write FILE`` replaces the text between
``<!-- BEGIN random-cases seed S -->`` and ``<!-- END random-cases seed S -->`` (one section per ``--seed``).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from algorithms.hard.joint import LaplaceVector
from algorithms.classic.gaussian import analytic_gaussian_sigma
from algorithms.classic.continual_counting import FactorisedCounter, binary_factors, square_root_factors
from algorithms.classic.top_k import OneShotTopK
from algorithms.hard.iterates import NoisyGradientDescent
from algorithms.hard.mixed_noise import MixedLaplace, haar_matrix
from algorithms.hard.planted import GaussianVector, IndependentRR, MarkedLaplace, ScaledNoise, TabulatedPMF

KINDS = ("laplace-vector", "mixed-output", "rare-leak", "pmf-table", "bits-rr", "gaussian-delta", "top-k", "counter",
         "scale", "mixing", "iterates")
SAMPLES, SEARCH = 1_000_000, 200_000
QUICK_SAMPLES, QUICK_SEARCH = 100_000, 20_000
ALPHA = 0.05
#: a violation whose oracle bound is at least this many times the claim is detectable *with a margin*: the audit
#: pays for its search and tests 3 finalists at α/3, which the oracle does not, so a violation whose oracle bound
#: is just above the claim is often missed by any searching audit
CLEAR = 1.25
WORKERS = 2
#: Monte-Carlo oracle draws over all pairs and directions of one instance (exact pmf laws ignore it)
ORACLE_ROWS = 8_000_000


def markers(seed: int) -> tuple[str, str]:
    """The markers of the generated section of the run with root ``seed`` (one section per seed)."""
    return f"<!-- BEGIN random-cases seed {seed} -->", f"<!-- END random-cases seed {seed} -->"


@dataclass
class Case:
    """One drawn instance: ``claim`` is its true ε (a control) or that divided by ``factor`` (a violation)."""

    index: int
    kind: str
    mechanism: Any
    pairs: list[tuple[Any, Any]]
    claim: float
    true_epsilon: float
    violating: bool
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def delta(self) -> float:
        """The claimed δ: the Gaussian instances' (:class:`~algorithms.hard.planted.GaussianVector`), else 0."""
        return float(self.mechanism.delta) if isinstance(self.mechanism, GaussianVector) else 0.0

    @property
    def nan_policy(self) -> str:
        """``"outcome"`` where a NaN row is a release of the mechanism (the NaN marker), else the audit's default."""
        return "outcome" if getattr(self.mechanism, "marker", None) == "nan" else "raise"

    @property
    def name(self) -> str:
        return f"{self.kind}-{self.index}"


def _loguniform(rng: np.random.Generator, lo: float, hi: float) -> float:
    return float(math.exp(rng.uniform(math.log(lo), math.log(hi))))


def _factor(rng: np.random.Generator, violating: bool) -> float:
    """How far a violation's claim lies below its true ε: log-uniform in [1.1, 4]; 1 for a control."""
    return _loguniform(rng, 1.1, 4.0) if violating else 1.0


def _claim(rng: np.random.Generator, true_eps: float, violating: bool) -> tuple[float, float]:
    """(claim, factor): the true ε, or it divided by :func:`_factor`."""
    factor = _factor(rng, violating)
    return true_eps / factor, factor


def _decoys(rng: np.random.Generator, worst: tuple[Any, Any], weaker: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """The worst pair and 0-2 weaker ones, in random order."""
    pairs = [worst] + weaker[: int(rng.integers(0, len(weaker) + 1))]
    return [pairs[i] for i in rng.permutation(len(pairs))]


def _moves(rng: np.random.Generator, d: int) -> tuple[NDArray, NDArray, int]:
    """An input of ``d`` integers in [0, 10) and a move of ±1 or ±2 in ``k`` = 1-``d`` of its coordinates."""
    k = int(rng.integers(1, d + 1))
    x0 = rng.integers(0, 10, size=d).astype(float)
    delta = np.zeros(d)
    where = rng.choice(d, size=k, replace=False)
    delta[where] = rng.choice([-2.0, -1.0, 1.0, 2.0], size=k)
    return x0, delta, k


def _part_pairs(rng: np.random.Generator, x0: NDArray, delta: NDArray) -> list[tuple[Any, Any]]:
    """The pair ``(x0, x0 + delta)`` and 0-2 weaker ones, moving a random part of ``delta``."""
    weaker = []
    for _ in range(2):
        part = delta * (rng.random(len(delta)) < 0.5)
        if np.abs(part).sum() > 0:
            weaker.append((x0, x0 + part))
    return _decoys(rng, (x0, x0 + delta), weaker)


def _laplace_vector(rng: np.random.Generator, violating: bool) -> tuple[Any, list, float, float, dict]:
    d = int(rng.choice([1, 2, 4, 8, 16, 32]))
    x0, delta, k = _moves(rng, d)
    true_eps = _loguniform(rng, 0.2, 2.0)
    l1 = float(np.abs(delta).sum())
    mech = LaplaceVector(epsilon=true_eps, calibrated_for=l1)          # scale = l1 / true ε
    pairs = _part_pairs(rng, x0, delta)
    claim, factor = _claim(rng, true_eps, violating)
    return mech, pairs, claim, true_eps, {"d": d, "moved": k, "l1": l1, "factor": round(factor, 3)}


def _mixing_matrix(rng: np.random.Generator, kind: str, d: int) -> NDArray:
    """A ``d × d`` mixing: ``orthogonal`` (Q of a Gaussian matrix's QR), ``dense`` (i.i.d. normal entries, columns of
    unit norm), ``haar`` (the orthonormal Haar synthesis matrix) or ``triangular`` (unit diagonal, normal entries
    below it)."""
    if kind == "orthogonal":
        return np.linalg.qr(rng.normal(size=(d, d)))[0]
    if kind == "dense":
        m = rng.normal(size=(d, d))
        return m / np.linalg.norm(m, axis=0)
    if kind == "haar":
        return haar_matrix(d).T
    return np.eye(d) + np.tril(rng.normal(size=(d, d)), k=-1)


def _mixing(rng: np.random.Generator, violating: bool) -> tuple[Any, list, float, float, dict]:
    d = int(rng.choice([2, 4, 8, 16, 32]))
    kind = str(rng.choice(["orthogonal", "dense", "haar", "triangular"]))
    matrix = _mixing_matrix(rng, kind, d)
    x0, delta, k = _moves(rng, d)
    true_eps = _loguniform(rng, 0.2, 2.0)
    l1 = float(np.abs(delta).sum())
    mech = MixedLaplace(matrix, l1 / true_eps)
    pairs = _part_pairs(rng, x0, delta)
    claim, factor = _claim(rng, true_eps, violating)
    return mech, pairs, claim, true_eps, {"d": d, "matrix": kind, "moved": k, "factor": round(factor, 3)}


def _iterates(rng: np.random.Generator, violating: bool) -> tuple[Any, list, float, float, dict]:
    steps, n = int(rng.choice([2, 4, 8, 16])), int(rng.integers(1, 11))
    rate, clip = float(rng.uniform(0.2, 1.0)), float(rng.uniform(0.3, 2.0))
    x0 = rng.uniform(-3.0, 3.0, size=n)

    def neighbour() -> tuple[Any, Any]:
        x1 = x0.copy()
        x1[int(rng.integers(n))] = rng.uniform(-3.0, 3.0)
        return x0, x1

    pairs = [neighbour() for _ in range(int(rng.integers(1, 4)))]
    # the true ε scales with the mechanism's ε parameter (the noise scale is inversely proportional to it)
    unit = max(NoisyGradientDescent(1.0, steps, rate, clip).epsilon_on(a, b) for a, b in pairs)
    mech = NoisyGradientDescent(_loguniform(rng, 0.2, 3.0) / max(unit, 1e-9), steps, rate, clip)
    true_eps = max(mech.epsilon_on(a, b) for a, b in pairs)
    claim, factor = _claim(rng, true_eps, violating)
    return mech, pairs, claim, true_eps, {"steps": steps, "records": n, "rate": round(rate, 3),
                                          "clip": round(clip, 3), "factor": round(factor, 3)}


def _mixed_output(rng: np.random.Generator, violating: bool) -> tuple[Any, list, float, float, dict]:
    d = int(rng.choice([1, 4]))
    marker = "nan" if rng.random() < 0.5 else -1.0
    claim = float(rng.uniform(0.5, 2.0))
    factor = _factor(rng, violating)
    where = "mass" if rng.random() < 0.5 else "continuous"
    p_low = _loguniform(rng, 1e-3, 0.3)
    mass_eps = claim * (factor if violating and where == "mass" else float(rng.uniform(0.0, 1.0)))
    p_high = min(p_low * math.exp(mass_eps), 0.9)
    mass_eps = math.log(p_high / p_low)
    c = abs(math.log1p(-p_high) - math.log1p(-p_low))
    x0 = np.zeros(d)
    x1 = x0.copy()
    x1[0] = 1.0
    cont_eps = claim * (factor if violating and where == "continuous" else 1.0)
    if cont_eps <= c:                 # the continuous part's offset alone exceeds the target: make its noise large
        cont_eps = c + 0.05 * claim
    scale = 1.0 / (cont_eps - c)      # ||x1 - x0||_1 = 1
    mech = MarkedLaplace(scale=scale, p_low=p_low, p_high=p_high, trigger=0.5, marker=marker)
    true_eps = mech.epsilon_on(x0, x1)
    if not violating:
        claim = true_eps
    weaker = [(x1, x1 + np.eye(d)[-1] * 0.5)]           # both above the trigger: the continuous part only
    pairs = _decoys(rng, (x0, x1), weaker)
    return mech, pairs, claim, true_eps, {"d": d, "marker": str(marker), "where": where, "p_low": p_low,
                                          "p_high": p_high, "factor": round(true_eps / claim, 3)}


def _rare_leak(rng: np.random.Generator, violating: bool) -> tuple[Any, list, float, float, dict]:
    d = int(rng.choice([1, 3, 8]))
    p = _loguniform(rng, 3e-5, 3e-3)
    claim = float(rng.uniform(0.5, 2.0))
    x0 = rng.integers(0, 5, size=d).astype(float)
    x1 = x0.copy()
    x1[0] = x0[0] + 1.0
    trigger = float(x1[0]) if rng.random() < 0.5 else -math.inf       # leak on x1 only, or on both
    if violating:
        mech = MarkedLaplace(scale=1.0 / claim, p_low=0.0 if trigger > -math.inf else p, p_high=p,
                             trigger=trigger if trigger > -math.inf else 0.0, marker="input")
    else:
        mech = MarkedLaplace(scale=1.0 / claim, p_low=p, p_high=p, trigger=0.0, marker="nan")
    true_eps = mech.epsilon_on(x0, x1)
    return mech, [(x0, x1)], claim, true_eps, {"d": d, "p": p, "one_sided": trigger > -math.inf,
                                               "factor": math.inf if violating else 1.0}


def _pmf_table(rng: np.random.Generator, violating: bool) -> tuple[Any, list, float, float, dict]:
    m = int(round(_loguniform(rng, 2, 400)))
    base = rng.dirichlet(np.full(m, float(rng.uniform(0.3, 2.0))))
    base = np.maximum(base, 1e-6)
    base /= base.sum()
    a = _loguniform(rng, 0.05, 1.5)
    tilt = rng.uniform(-a, a, size=m)
    rare = m >= 3 and rng.random() < 0.5
    if rare:                          # the largest ratio on an outcome of probability 1e-4 - 1e-2
        j = int(rng.integers(m))
        base[j] = _loguniform(rng, 1e-4, 1e-2)
        others = np.arange(m) != j
        base[others] *= (1.0 - base[j]) / base[others].sum()
        tilt[j] = a * float(rng.uniform(1.5, 3.0)) * (1 if rng.random() < 0.5 else -1)
    q = base * np.exp(tilt)
    q /= q.sum()
    mild = base * np.exp(tilt / 3.0)
    mild /= mild.sum()
    mech = TabulatedPMF((tuple(base.tolist()), tuple(q.tolist()), tuple(mild.tolist())))
    true_eps = mech.epsilon_on(0, 1)
    pairs = _decoys(rng, (0, 1), [(0, 2)])
    claim, factor = _claim(rng, true_eps, violating)
    return mech, pairs, claim, true_eps, {"m": m, "rare": bool(rare), "factor": round(factor, 3)}


def _bits_rr(rng: np.random.Generator, violating: bool) -> tuple[Any, list, float, float, dict]:
    d = int(rng.integers(2, 25))
    eps = tuple(float(e) for e in rng.uniform(0.02, 0.3, size=d))
    mech = IndependentRR(eps)
    x0 = rng.integers(0, 2, size=d)
    k = int(rng.integers(1, d + 1))
    flip = np.zeros(d, dtype=int)
    flip[rng.choice(d, size=k, replace=False)] = 1
    x1 = x0 ^ flip
    weaker = []
    if k > 1:
        some = flip.copy()
        some[np.flatnonzero(flip)[: k // 2]] = 0
        weaker.append((x0, x0 ^ some))
    pairs = _decoys(rng, (x0, x1), weaker)
    true_eps = mech.epsilon_on(x0, x1)
    claim, factor = _claim(rng, true_eps, violating)
    return mech, pairs, claim, true_eps, {"d": d, "flipped": k, "factor": round(factor, 3)}


def _gaussian_delta(rng: np.random.Generator, violating: bool) -> tuple[Any, list, float, float, dict]:
    d = int(rng.choice([1, 2, 4, 8, 16]))
    delta = _loguniform(rng, 1e-4, 1e-2)
    x0 = rng.integers(0, 10, size=d).astype(float)
    move = rng.normal(size=d)
    move *= _loguniform(rng, 0.5, 2.0) / np.linalg.norm(move)
    true_eps = _loguniform(rng, 0.3, 3.0)
    sigma = analytic_gaussian_sigma(true_eps, delta, float(np.linalg.norm(move)))
    mech = GaussianVector(sigma=sigma, delta=delta)
    pairs = _decoys(rng, (x0, x0 + move), [(x0, x0 + 0.5 * move)])
    claim, factor = _claim(rng, true_eps, violating)
    return mech, pairs, claim, mech.epsilon_on(x0, x0 + move), {"d": d, "delta": delta, "factor": round(factor, 3)}


def _top_k(rng: np.random.Generator, violating: bool) -> tuple[Any, list, float, float, dict]:
    m = int(rng.integers(4, 11))
    k = int(rng.integers(1, min(m - 1, 4) + 1))
    c = _loguniform(rng, 0.3, 5.0)                     # the logits' coefficient: sharp (rare leaks) to flat
    mech = OneShotTopK(k=k, epsilon=2.0 * k * c)
    u0 = rng.integers(0, 7, size=m).astype(float)

    def neighbour() -> tuple[Any, Any]:
        if rng.random() < 0.5:                         # a record in one bin
            return u0, u0 + np.eye(m)[int(rng.integers(m))]
        bump = (rng.random(m) < 0.5).astype(float)     # a record counted in several bins (l_inf distance 1)
        bump[int(rng.integers(m))] = 1.0
        return u0, u0 + bump

    pairs = [neighbour() for _ in range(int(rng.integers(1, 4)))]
    true_eps = max(mech.epsilon_on(a, b) for a, b in pairs)
    claim, factor = _claim(rng, true_eps, violating)
    return mech, pairs, claim, true_eps, {"m": m, "k": k, "c": round(c, 3), "factor": round(factor, 3)}


def _counter(rng: np.random.Generator, violating: bool) -> tuple[Any, list, float, float, dict]:
    left_right = {"binary": binary_factors, "square-root": square_root_factors}
    form = str(rng.choice(list(left_right)))
    T = int(rng.choice([4, 8, 12, 16, 24, 32]))
    left, right = left_right[form](T)
    mech = FactorisedCounter(left, right, _loguniform(rng, 0.2, 2.0), name=form)
    x0 = (rng.random(T) < 0.5).astype(float)

    def neighbour() -> tuple[Any, Any]:                # one step counted once more or once less
        x1 = x0.copy()
        s = int(rng.integers(T))
        x1[s] += 1.0 if x1[s] == 0.0 else -1.0
        return x0, x1

    pairs = [neighbour() for _ in range(int(rng.integers(1, 4)))]
    true_eps = max(mech.epsilon_on(a, b) for a, b in pairs)
    claim, factor = _claim(rng, true_eps, violating)
    return mech, pairs, claim, true_eps, {"form": form, "T": T, "factor": round(factor, 3)}


def _scale(rng: np.random.Generator, violating: bool) -> tuple[Any, list, float, float, dict]:
    d = int(rng.choice([2, 4, 8, 16, 32]))
    kind = str(rng.choice(["laplace", "gaussian"])) if violating else "laplace"
    claim = _loguniform(rng, 0.1, 2.0)
    mech = ScaledNoise(scale=1.0, kind=kind)
    x0 = np.zeros((2, d))
    x0[0] = rng.integers(0, 10, size=d)

    def neighbour() -> tuple[Any, Any]:
        x1 = x0.copy()
        move = rng.normal(size=d) * (rng.random(d) < 0.5)
        if violating:                                  # the scale of 1-d coordinates moves by 3-50 %, up or down
            k = int(rng.integers(1, d + 1))
            where = rng.choice(d, size=k, replace=False)
            x1[1, where] = np.log1p(np.exp(rng.uniform(np.log(0.03), np.log(0.5), size=k)) * rng.choice([-0.5, 1.0], k))
            share = float(rng.uniform(0.0, 1.0))       # the centres move within the claim (or not at all)
        else:
            move[int(rng.integers(d))] += 1.0          # a control moves some centre
            share = 1.0
        l1 = float(np.abs(move).sum())
        if l1 > 0:
            x1[0] += move * (share * claim / l1)       # Laplace noise of scale 1: the centres' ε is share·claim
        return x0, x1

    pairs = [neighbour() for _ in range(int(rng.integers(1, 3)))]
    true_eps = max(mech.epsilon_on(a, b) for a, b in pairs)
    if not violating:
        claim = true_eps
    return mech, pairs, claim, true_eps, {"d": d, "noise": kind, "factor": math.inf if violating else 1.0}


_DRAW = {"laplace-vector": _laplace_vector, "mixed-output": _mixed_output, "rare-leak": _rare_leak,
         "pmf-table": _pmf_table, "bits-rr": _bits_rr, "gaussian-delta": _gaussian_delta, "top-k": _top_k,
         "counter": _counter, "scale": _scale, "mixing": _mixing, "iterates": _iterates}


def draw_case(index: int, seed: int) -> Case:
    """Instance ``index`` of the run with root ``seed``: kind ``KINDS[index % len(KINDS)]``, a violation when
    ``(index // len(KINDS))`` is even, parameters from ``SeedSequence(seed, spawn_key=(index,))``."""
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(index,)))
    kind = KINDS[index % len(KINDS)]
    violating = (index // len(KINDS)) % 2 == 0
    mech, pairs, claim, true_eps, params = _DRAW[kind](rng, violating)
    return Case(index, kind, mech, pairs, float(claim), float(true_eps), violating, params)


def run_case(case: Case, seed: int, samples: int, search: int, workers: int = WORKERS) -> dict[str, Any]:
    """Audit ``case`` and compute its oracle bound at the same budget; a JSON-ready record."""
    import dpverify
    from dpverify.statistical.oracle import default_oracle_samples, oracle_bound

    t = time.perf_counter()
    res = dpverify.audit(case.mechanism, case.pairs, case.claim, case.delta, samples=samples, search_samples=search,
                         alpha=ALPHA, seed=np.random.SeedSequence(seed, spawn_key=(case.index, 1)),
                         workers=workers, nan_policy=case.nan_policy)
    seconds = time.perf_counter() - t
    per = min(default_oracle_samples(samples), max(1_000_000, ORACLE_ROWS // (2 * len(case.pairs))))
    oracle = oracle_bound(case.mechanism, case.pairs, samples, alpha=ALPHA, delta=case.delta, seed=seed,
                          oracle_samples=per)
    return {"index": case.index, "kind": case.kind, "name": case.name, "violating": case.violating,
            "claim": case.claim, "true_epsilon": case.true_epsilon, "params": case.params, "pairs": len(case.pairs),
            "verdict": "violation" if res.violation else "pass", "bound": float(res.epsilon_lower_bound),
            "oracle": float(oracle.bound), "oracle_p": [oracle.p_num, oracle.p_den], "seconds": seconds}


def summarise(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per kind (and ``all``): controls and their false alarms; violations, the detectable ones (oracle bound above
    the claim) and how many of those were found, the same for those with a margin (oracle bound at least
    :data:`CLEAR` times the claim); bound / oracle on the detectable ones."""
    out: dict[str, dict[str, Any]] = {}
    for kind in KINDS + ("all",):
        rs = [r for r in records if kind in ("all", r["kind"])]
        ctrl = [r for r in rs if not r["violating"]]
        viol = [r for r in rs if r["violating"]]
        det = [r for r in viol if r["oracle"] > r["claim"]]
        clear = [r for r in det if r["oracle"] >= CLEAR * r["claim"]]
        ratios = [r["bound"] / r["oracle"] for r in det if r["oracle"] > 0]
        out[kind] = {"cases": len(rs), "controls": len(ctrl),
                     "false_alarms": sum(r["verdict"] == "violation" for r in ctrl),
                     "violations": len(viol), "detectable": len(det),
                     "found": sum(r["verdict"] == "violation" for r in det), "clear": len(clear),
                     "found_clear": sum(r["verdict"] == "violation" for r in clear),
                     "found_undetectable": sum(r["verdict"] == "violation" for r in viol if r not in det),
                     "ratio_median": statistics.median(ratios) if ratios else math.nan,
                     "ratio_min": min(ratios) if ratios else math.nan}
    return out


def _fmt(x: float) -> str:
    return "∞" if x == math.inf else "–" if not math.isfinite(x) else f"{x:.4g}"


def report(records: list[dict[str, Any]], command: str, samples: int, search: int) -> str:
    """The generated section: the summary per kind, then every missed detectable violation and false alarm."""
    s = summarise(records)
    L = [f"Generated by `{command}`: {len(records)} instances, {samples:,} test + {search:,} search outputs per "
         f"input, α = {ALPHA}, {WORKERS} workers (every instance's audit time is in its `--results` line).", "",
         "| class | instances | controls: false alarms | violations: detectable (oracle > claim) | found | "
         f"detectable with a margin (oracle ≥ {CLEAR:g} × claim) | found | found, not detectable | "
         "bound / oracle on the detectable: median, min |",
         "|---|---|---|---|---|---|---|---|---|"]
    for kind in KINDS + ("all",):
        v = s[kind]
        L.append(f"| {'**all**' if kind == 'all' else f'`{kind}`'} | {v['cases']} | {v['false_alarms']} of "
                 f"{v['controls']} | {v['detectable']} of {v['violations']} | {v['found']} of {v['detectable']} | "
                 f"{v['clear']} | {v['found_clear']} of {v['clear']} | {v['found_undetectable']} | "
                 f"{_fmt(v['ratio_median'])}, {_fmt(v['ratio_min'])} |")
    missed = [r for r in records if r["violating"] and r["oracle"] > r["claim"] and r["verdict"] == "pass"]
    alarms = [r for r in records if not r["violating"] and r["verdict"] == "violation"]
    n_clear = sum(r["oracle"] >= CLEAR * r["claim"] for r in missed)
    L += ["", f"Missed detectable violations: {len(missed)} ({n_clear} with a margin, marked **margin**); false "
              f"alarms on controls: {len(alarms)}."]
    for r in missed + alarms:
        mark = " **margin**" if r["violating"] and r["oracle"] >= CLEAR * r["claim"] else ""
        L.append(f"- `{r['name']}`{mark} ({'violation' if r['violating'] else 'control'}): claim "
                 f"{_fmt(r['claim'])}, true ε {_fmt(r['true_epsilon'])}, oracle {_fmt(r['oracle'])} (its event's "
                 f"probabilities {' / '.join(_fmt(float(x)) for x in r.get('oracle_p', ()))}), bound "
                 f"{_fmt(r['bound'])}; "
                 + ", ".join(f"{k} = {_fmt(v) if isinstance(v, float) else v}" for k, v in r["params"].items()))
    return "\n".join(L)


def _load(path: Path | None) -> dict[int, dict[str, Any]]:
    if path is None or not path.exists():
        return {}
    return {r["index"]: r for r in (json.loads(line) for line in path.read_text().splitlines() if line.strip())}


def _same_case(record: dict[str, Any], case: Case) -> bool:
    """Whether a kept record is of ``case`` (its name, claim and parameters): a record written by another version of
    the classes, whose instance of that index differs, is run again instead of reused."""
    return (record.get("name") == case.name and record.get("violating") == case.violating
            and record.get("claim") == case.claim and record.get("params") == json.loads(json.dumps(case.params)))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.random_cases", description=__doc__.split("\n\n")[0])
    p.add_argument("--count", type=int, default=264, help="instances (default 264: 24 of each class)")
    p.add_argument("--seed", type=int, default=0, help="root seed of the instances and the audits (default 0)")
    p.add_argument("--quick", action="store_true", help=f"{QUICK_SAMPLES:,} + {QUICK_SEARCH:,} outputs per input")
    p.add_argument("--results", type=Path, help="JSON lines of finished instances (kept; a rerun skips them)")
    p.add_argument("--write", type=Path, help="replace the generated section of FILE (docs/auditor.md)")
    args = p.parse_args(argv)
    if args.count < 1:
        p.error("--count must be at least 1")
    samples, search = (QUICK_SAMPLES, QUICK_SEARCH) if args.quick else (SAMPLES, SEARCH)
    done = _load(args.results)
    records = []
    for i in range(args.count):
        case = draw_case(i, args.seed)
        if i in done and _same_case(done[i], case):
            records.append(done[i])
            continue
        r = run_case(case, args.seed, samples, search)
        records.append(r)
        if args.results is not None:
            with args.results.open("a") as f:
                f.write(json.dumps(r) + "\n")
        print(f"[random_cases] {case.name}: {'violation' if case.violating else 'control'} claim "
              f"{case.claim:.4g}, oracle {r['oracle']:.4g}, {r['verdict']} (bound {r['bound']:.4g}), "
              f"{r['seconds']:.1f} s", flush=True)
    given = list(argv if argv is not None else sys.argv[1:])
    if "--results" in given:                  # where finished instances are kept is no part of the command
        at = given.index("--results")
        del given[at:at + 2]
    command = "python -m benchmarks.random_cases " + " ".join(given)
    text = report(records, command.strip(), samples, search)
    print(text)
    if args.write is not None:
        from benchmarks.bench_graph import write_section
        write_section(args.write, text, *markers(args.seed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
