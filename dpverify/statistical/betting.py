"""The betting test of :func:`dpverify.statistical.anytime.audit_anytime`: bets, their growth, the ε grid.

A finalist ``(pair, direction, event S)`` bets ``lambda`` on ``Y - e^eps' Z - delta`` (``Y = 1[M(x) in S]``,
``Z = 1[M(x') in S]``, one row of each input's batch paired); a batch multiplies its wealth by ``prod (1 + lambda
(Y - e^eps' Z - delta))``, which depends on the batch through the counts of the four ``(Y, Z)`` pairs only.  The
module docstring of :mod:`dpverify.statistical.anytime` has the validity argument; this module has the arithmetic:
:func:`log_factors`, the growth-optimal bet :func:`bet_growth` (Waudby-Smith & Ramdas, JRSS-B 86(1), 2024: a
plug-in GRAPA bet), the estimates it is fed (:func:`shrunk`), the ε grid (:func:`wealth_grid`), a finalist's
wealth over the grid (:class:`Bet`, :func:`play`) and the portfolio's (:func:`tiers`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
from numpy.typing import NDArray


__all__ = ["LAMBDA_CAP", "BOUND_WEIGHT", "SHRINK_SE", "SIZE_SE", "PRIOR_WEIGHT", "GRID_BELOW", "GRID_ABOVE",
           "LAMBDA_STEPS", "Bet", "log_factors", "bet_growth", "shrunk", "bet_frequencies", "wealth_grid", "play",
           "tiers"]

#: bets are at most this fraction of ``1/(e^eps + delta)`` (a factor is then at least ``1 - LAMBDA_CAP``)
LAMBDA_CAP = 0.9
#: share of the initial wealth in the bound tier (its bets are clipped for the ε grid up to ``eps_max``)
BOUND_WEIGHT = 0.1
#: standard errors by which a candidate's scoring-half frequencies are moved against the claim when the finalists
#: are ranked (:func:`shrunk`)
SHRINK_SE = 1.0
#: ... and when a finalist's bets are sized from them (:func:`bet_frequencies`): more than for the ranks, since the
#: finalist is the best-looking of many candidates (its frequencies overstate it) and an oversized bet on an event
#: that does not grow loses wealth the rest of the stream must win back (the early epochs' bets on noise often lost
#: most of it on the catalogue's subtle violation ``svt-unscaled-query-noise``).  2 against 1: more verdicts on that
#: violation within StatDP's budget, slower on some violations of twice their claim
#: (``docs/anytime_calibration.py --size-se 1,2`` on run seeds not used to choose it; docs/auditor.md).
SIZE_SE = 2.0
#: weight of a finalist's scoring-half counts (per output, against its own batches since its checkpoint) in the
#: frequencies its bets are sized from
PRIOR_WEIGHT = 0.5
#: grid points of the ε lower bound in ``[0, eps]`` and in ``(eps, eps_max]``
GRID_BELOW, GRID_ABOVE = 41, 80
#: lambdas tried when maximising an expected growth (a fraction of the cap, evenly spaced)
LAMBDA_STEPS = 128


def log_factors(lam: NDArray[np.float64], c: NDArray[np.float64], delta: float) -> NDArray[np.float64]:
    """``ln(1 + lam (y - c z - delta))`` for ``(y, z) = (1, 1), (1, 0), (0, 1), (0, 0)`` (leading axis), broadcast
    over ``lam`` and ``c``; ``-inf`` where a factor is not positive (never for a bet within its cap)."""
    lam, c = np.asarray(lam, dtype=np.float64), np.asarray(c, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.stack(np.broadcast_arrays(np.log1p(lam * (1 - c - delta)), np.log1p(lam * (1 - delta)),
                                           np.log1p(-lam * (c + delta)), np.log1p(-lam * delta + 0 * c)))
    return np.where(np.isnan(out), -np.inf, out)

def bet_growth(p: Any, q: Any, c: float, delta: float, cap: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(lambda, g)``: the bet in ``[0, cap]`` (``LAMBDA_STEPS`` evenly spaced values) maximising the expected
    growth ``g = E ln(1 + lambda (Y - c Z - delta))`` of independent ``Y ~ Bernoulli(p)``, ``Z ~ Bernoulli(q)``, and
    that growth (``(0, 0)`` where no bet grows), elementwise over ``p`` and ``q``.  For a small mean ``mu = p - c q -
    delta`` of variance ``v``, ``g ~ mu^2 / (2 v)``."""
    p = np.asarray(p, dtype=np.float64)[..., None]
    q = np.asarray(q, dtype=np.float64)[..., None]
    lam = cap * np.arange(1, LAMBDA_STEPS + 1) / LAMBDA_STEPS
    l11, l10, l01, l00 = log_factors(lam, np.float64(c), delta)
    with np.errstate(invalid="ignore"):
        g = p * q * l11 + p * (1 - q) * l10 + (1 - p) * q * l01 + (1 - p) * (1 - q) * l00
    g = np.where(np.isnan(g), -np.inf, g)
    k = np.argmax(g, axis=-1)
    best = np.take_along_axis(g, k[..., None], axis=-1)[..., 0]
    return np.where(best > 0, lam[k], 0.0), np.where(best > 0, best, 0.0)

def shrunk(k_num: Any, k_den: Any, n: Any,
           se_moved: float = SHRINK_SE) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Frequencies ``k_num / n`` and ``k_den / n`` moved ``se_moved`` standard errors against the claim (down and
    up; the standard error of a smoothed frequency, so that an event never seen still gets one)."""
    k_num, k_den, n = (np.asarray(v, dtype=np.float64) for v in (k_num, k_den, n))
    n = np.maximum(n, 1.0)

    def se(k: NDArray[np.float64]) -> NDArray[np.float64]:
        s = (k + 0.5) / (n + 1.0)
        return np.sqrt(s * (1 - s) / n)

    return (np.clip(k_num / n - se_moved * se(k_num), 0.0, 1.0),
            np.clip(k_den / n + se_moved * se(k_den), 0.0, 1.0))

def bet_frequencies(k_num: int, k_den: int, n: int, run_num: int, run_den: int, run_n: int) -> tuple[float, float]:
    """The frequencies a finalist's next bet is sized from: its scoring-half frequencies ``k / n`` moved
    ``SIZE_SE`` standard errors against the claim (:func:`shrunk`) -- the finalist was chosen *because* they
    looked good, so they overstate it -- pooled with weight ``PRIOR_WEIGHT`` per output with its counts in its own
    batches since the checkpoint, taken as they are: those batches played no part in choosing it.  As they
    accumulate, the bet tends to the growth-optimal one of the event's true frequencies, where shrinking them too
    would keep it smaller than that for as long as the finalist is bet on."""
    p0, q0 = (float(v) for v in shrunk(k_num, k_den, n, SIZE_SE))
    w = PRIOR_WEIGHT * max(n, 1)
    return (w * p0 + run_num) / (w + run_n), (w * q0 + run_den) / (w + run_n)


def wealth_grid(epsilon: float) -> tuple[NDArray[np.float64], float]:
    """The ε grid of the lower bound, ``[0, eps]`` (``GRID_BELOW`` points, ``eps`` the last) then ``(eps, eps_max]``
    (``GRID_ABOVE`` points), and ``eps_max = eps + max(eps, 1)``."""
    eps_max = epsilon + max(epsilon, 1.0)
    grid = np.r_[epsilon * np.linspace(0.0, 1.0, GRID_BELOW), np.linspace(epsilon, eps_max, GRID_ABOVE + 1)[1:]]
    return grid, eps_max

@dataclass
class Bet:
    """A finalist of an epoch: its event, portfolio weight, counts (scoring half; its epoch's stream) and the log
    growth of its two tiers over the ε grid since its checkpoint."""

    pair_index: int
    direction: int
    event: Any
    description: str
    growth: float
    log_weight: float
    prior: tuple[int, int, int]
    log_a: NDArray[np.float64]
    log_b: NDArray[np.float64]
    k_num: int = 0
    k_den: int = 0
    n: int = 0

def play(bet: Bet, counts: tuple[int, int, int, int], grid: NDArray[np.float64], c_grid: NDArray[np.float64],
         delta: float, epsilon: float, cap_a: float, cap_b: float, below: NDArray[np.bool_]) -> None:
    """One batch of a finalist, given its ``counts`` on the batch (``(n11, n10, n01, n00)``: rows where its event
    holds under both inputs, the numerator's only, the denominator's only, neither --
    :func:`dpverify.statistical.streams.joint_counts`): its bet from the counts before the batch, then the batch's
    log factors over the grid in both tiers, and its counts."""
    kn, kd, ns = bet.prior
    p, q = bet_frequencies(kn, kd, ns, bet.k_num, bet.k_den, bet.n)
    lam_a = float(bet_growth(p, q, math.exp(epsilon), delta, cap_a)[0])
    lam_b = min(lam_a, cap_b)
    n11, n10, n01, n00 = counts
    column = np.array([n11, n10, n01, n00], dtype=np.float64)[:, None]
    for lam, attr, valid in ((lam_a, "log_a", below), (lam_b, "log_b", None)):
        if lam == 0.0:
            continue
        logs = log_factors(np.float64(lam), c_grid, delta)
        with np.errstate(invalid="ignore"):
            step = np.where(column > 0, column * logs, 0.0).sum(axis=0)
        if valid is not None:
            step = np.where(valid, step, 0.0)
        setattr(bet, attr, getattr(bet, attr) + step)
    bet.k_num += n11 + n10
    bet.k_den += n11 + n01
    bet.n += n11 + n10 + n01 + n00

def tiers(wealth_a: NDArray[np.float64], wealth_b: NDArray[np.float64],
           bets: Sequence[Bet]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The log wealth of both tiers over the grid: the epoch's starting wealth times the weighted growth of its
    finalists (the starting wealth itself without finalists)."""
    if not bets:
        return wealth_a, wealth_b
    w = np.array([x.log_weight for x in bets])[:, None]
    grow_a = np.logaddexp.reduce(w + np.stack([x.log_a for x in bets]), axis=0)
    grow_b = np.logaddexp.reduce(w + np.stack([x.log_b for x in bets]), axis=0)
    return wealth_a + grow_a, wealth_b + grow_b
