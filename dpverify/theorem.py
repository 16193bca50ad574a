"""Utility-theorem checks: Monte Carlo estimates of what a theorem bounds, against the bound.

A paper proves "with probability at least X the tree has the right shape" or "the error exceeds Y with
probability at most γ".  :func:`check_theorem` runs the algorithm as coded many times (seeded, batched, on a
process pool -- the same seed gives the same result on any number of workers), puts an exact or otherwise
valid confidence interval around the estimate and returns a :class:`TheoremResult` with a verdict:

- ``holds``: the whole interval lies on the claimed side of the bound;
- ``violated``: the whole interval lies on the other side;
- ``inconclusive``: the interval contains the bound (with ``runs_needed``, the number of runs that would
  resolve it if the estimate stayed where it is).

``holds`` is evidence at level ``alpha`` for *these parameters and inputs*, never a proof of the theorem.

The theorem protocol (duck-typed; ``dpverify`` never imports a specific algorithm -- the papers' theorems
live in :mod:`algorithms.theorems`).  A theorem object, built from keyword parameters, has:

``name`` (str)
    e.g. ``"seed 001 Theorem 13"``.
``statement`` (str)
    the claim as checked, with the reading chosen where the paper is ambiguous.
``quantity`` (str)
    ``"probability"`` (of an event), ``"mean"`` or ``"quantile"`` (of a real-valued quantity), or
    ``"always"`` (a deterministic property that must hold on every instance).
``direction`` (str)
    ``"at_least"`` (the claim is ``quantity >= bound``), ``"at_most"`` (``quantity <= bound``) or
    ``"equal"`` (an identity, e.g. a distribution function: ``holds`` then means *consistent*: the interval
    contains the value; ``violated`` that it excludes it); ignored for ``"always"``.
``level`` (float)
    only for ``"quantile"``: which quantile, e.g. ``0.9``.
``parameters`` (dict)
    the parameters the check runs at (JSON-able scalars); shown in reports and used as plot axes.
``size`` (number, optional)
    the size of the input (e.g. ``|V|``); the smallest violated point of a sweep is reported by it.
``hypotheses()`` -> list[str]
    what is wrong with the inputs/parameters for the theorem to apply (``[]``: it applies).  A non-empty
    list gives an error naming the problems, never a verdict.
``bound()`` -> float
    the bound at the parameters.  NaN is an error (no verdict); ``±inf`` is allowed and marked vacuous.
``sample(n, rng)`` -> array
    ``n`` independent runs with the generator ``rng``: for ``"probability"`` a bool array (did the event
    the claim is about happen in run ``i``) -- or, for a conditional probability, a float array of 0/1
    with NaN for the runs where the conditioning event did not happen (they are not counted), for ``"mean"``/``"quantile"`` a float array (the quantity in
    run ``i``), for ``"always"`` a tuple ``(ok, failures)``: ``ok`` a bool array (one entry per instance
    checked), ``failures`` a list of dicts, one per instance with ``ok`` False, each with at least
    ``"size"`` (a number: the smallest counterexample is the one reported).
``deterministic`` (bool, optional, ``"always"`` only)
    ``True`` for a fixed grid of instances: ``sample`` is called once, and may return any number of them.
``exact()`` -> float | None (optional)
    the exact value of the quantity where it can be computed; the result says whether the interval
    contains it (a cross-check of the sampler, not part of the verdict).
"""
