"""Checks that read the mechanism's code path instead of only its outputs: sensitivity of a function
(``sensitivity``), frozen-noise replay of declared step sensitivities (``replay``), the budget ledger (``ledger``),
and the worst-pair search they share (``pair_search``, ``worst_pair``).
"""
