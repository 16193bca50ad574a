"""Exhaustive corner search for PAMST on small complete graphs, with the exact pmf.

For each base weight vector (zeros plus ``--bases`` random integer vectors in 0..5) and every corner
``w + mu·d``, ``d`` in ``{-1, +1}^|E|``, of seed 001's ℓ∞ ball, compute the exact output pmfs of PAMST
(:func:`algorithms.graph.pamst.pamst_pmf`, uniform random start) and the best output event's log
likelihood ratio ``ln P_w(S)/P_w'(S)`` (outcomes sorted by their ratio, best prefix).  Prints the top
pairs for PAMST (derived Δu = mu), Definition 2.6's Δu = 2mu, and the no-half / full-budget twins.

    python docs/find_pamst_corners.py [--nodes 4] [--bases 20] [--epsilon 1.0] [--seed 0]

Used to choose the K4 corner pair of audits/graph.toml (docs/findings.md, F1).
"""

from __future__ import annotations

import argparse
import itertools
import math

import numpy as np

from algorithms.graph.pamst import pamst_pmf
from algorithms.graph.weighted_graph import WeightedGraph


def best_event(p: dict[int, float], q: dict[int, float]) -> tuple[float, float, float]:
    """(ln P(S)/Q(S), P(S), Q(S)) of the best event S (a prefix of outcomes by likelihood ratio)."""
    keys = sorted(set(p) | set(q), key=lambda k: -(math.log(p.get(k, 1e-300)) - math.log(q.get(k, 1e-300))))
    best, big_p, big_q = (0.0, 0.0, 0.0), 0.0, 0.0
    for k in keys:
        big_p += p.get(k, 0.0)
        big_q += q.get(k, 0.0)
        if big_p > 0 and big_q > 0 and math.log(big_p / big_q) > best[0]:
            best = (math.log(big_p / big_q), big_p, big_q)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=4)
    ap.add_argument("--bases", type=int, default=20)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--mu", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    g = WeightedGraph.complete(args.nodes, np.zeros(args.nodes * (args.nodes - 1) // 2))
    m, k = g.n_edges, args.nodes - 1
    rng = np.random.default_rng(args.seed)
    bases = [np.zeros(m)] + [rng.integers(0, 6, m).astype(float) for _ in range(args.bases)]
    variants = {"PAMST (Δu = mu)": 1.0, "Def. 2.6 (Δu = 2mu)": 0.5, "no-half twin": 2.0, "full-budget twin": float(k)}
    for name, mult in variants.items():
        c = mult * args.epsilon / k / (2 * args.mu)
        rows = []
        for w in bases:
            p = pamst_pmf(g.with_weights(w), c)
            for d in itertools.product((-1.0, 1.0), repeat=m):
                q = pamst_pmf(g.with_weights(w + args.mu * np.asarray(d)), c)
                rows.append((*best_event(p, q), w, d))
        rows.sort(key=lambda r: -r[0])
        for r in rows[:2]:
            sign = "".join("+" if v > 0 else "-" for v in r[4])
            print(f"{name:22s} claim ε={args.epsilon:g}  best event ln-ratio {r[0]:.4f}  P={r[1]:.4f} Q={r[2]:.4f}  "
                  f"w={r[3].astype(int).tolist()} d={sign}")


if __name__ == "__main__":
    main()
