"""The papers' utility theorems as checkable objects (the protocol of :mod:`dpverify.theorems.check`).

Each class states one theorem (or lemma, corollary, proposition) of a seed paper at given parameters: the
quantity it bounds, the bound as a function of the parameters, the direction of the claim, the hypotheses
and a vectorised sampler of the algorithm as coded in :mod:`algorithms`.  ``dpverify.check_theorem`` runs the
Monte Carlo and gives the verdict; the suites ``audits/theorems_*.toml`` hold one entry per theorem.

- :mod:`algorithms.theorems.graph_clustering` -- seed 001 (PAMST / Weight-Release / DBMSTClu / PTClust).
- :mod:`algorithms.theorems.private_mst` -- seed 002 Thm 1.4.1, 3.2.1, 3.4.2, Cor 3.4.1, Prop 3.4.1, App. A.3.
- :mod:`algorithms.theorems.mst_clustering` -- seed 002 Thm 3.5.1/3.5.2, Thm 4.2.1 / Eq 4.3, Claim 4.1.1.
- :mod:`algorithms.theorems.dpm` -- seed 004 Lemma 8, Sec. 5.2, Thm 2 / Cor 5, Lemmas 9-11.
- :mod:`algorithms.theorems.classic_dp` -- seed 001 Prop 3.1, seed 002 Prop 1.5.2, Props 1.4.1-1.4.3 (suite
  ``audits/claims.toml``, used by the ledger ``docs/claims.md``).
"""
