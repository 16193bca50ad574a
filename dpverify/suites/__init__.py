"""Audit suites (this package): TOML files that say what to check, on which inputs, with which claim and expectation.

A suite file holds one ``[suite]`` table and any number of ``[[entry]]`` tables::

    [suite]
    name = "classic"                    # default: the file's stem
    description = "Classic mechanisms and their broken twins"
    default = true                      # part of the default ``dpverify run`` (see below)
    import_paths = [".."]               # optional: directories (relative to this file) searched
                                        # when importing the mechanisms of this suite
    quick = { samples = 100000 }        # optional: budgets used by entries that give none
    full  = { samples = 2000000 }

    [[entry]]
    id = "laplace"                                   # unique within the suite
    kind = "statistical"                             # statistical | exact | em | sensitivity | replay
                                                     # | ledger | theorem (see below)
    mechanism = "algorithms.classic.laplace:Laplace" # "module:attribute"
    params = { epsilon = 0.1 }                       # a class is instantiated with them,
                                                     # a function wrapped with functools.partial
    claim = { epsilon = 0.1, delta = 0.0 }           # delta optional (0)
    expect = "pass"                                  # "pass" or "violation"
    true_epsilon = 0.1                               # optional float or "inf"
    description = "..."                              # optional
    pairs = [[0.0, 1.0]]                             # EITHER explicit pairs [x0, x1] ...
    # input = [1.0, 1.0]                             # ... OR an input and a neighbour relation
    # relation = { kind = "linf", radius = 1.0 }     # linf | l1 | add_remove | replace (+ candidates)
    # random_pairs = 0                               # extra seeded random pairs from the relation
    # input = { build = "pkg.mod:make_graph", params = { n = 4 } }   # an input built by a function
    # pairs = { build = "pkg.mod:worst_pairs", params = {} }         # pairs built by a function; a
                                                     # relation given with pairs checks every pair
    alpha = 0.05                                     # optional audit options: alpha, nan_policy,
                                                     # float_bits, finalists, batch_size,
                                                     # ratio_test ("clopper-pearson" | "auto")
    quick = { samples = 100000, search_samples = 50000 }
    full  = { samples = 2000000, search_samples = 500000 }

    [[entry]]
    id = "dpm-ledger"
    kind = "ledger"                                  # the privacy charges one run records, recomposed
    mechanism = "algorithms.dpm.dpm:DPM"             # instances have privacy_ledger(x, rng)
    params = { epsilon = 1.0 }
    input = [0.1, 0.4, 0.5]                          # or { build = "module:function", params = {...} }
    claim = { epsilon = 1.0, delta = 1e-6 }          # the claimed total budget
    expect = "pass"
    runs = 20                                        # optional: independent runs (default 20)

Kinds.  ``statistical``: the black-box audit (:func:`dpverify.audit`) with the entry's budget.  ``exact``: the
mechanism's exact output law (``log_pmf``/``pmf``) on the pairs (:func:`dpverify.exact.exact_audit`), or -- with
``search = { base_radius = 2.0, restarts = 8, random_pairs = 16, polish = true, domain = [0, 1], grid = 21,
max_evaluations = 5000 }`` (every key optional) and an ``input`` with a ``relation`` -- the worst pair found by
:func:`dpverify.code_checks.worst_pair.worst_pair_search`; budgets do not apply.  ``em``: the sampler's frequencies against
``softmax(ε·u/(2Δu))`` (:func:`dpverify.exact.em_check.check_exponential_mechanism`) with ``input`` (passed to the
sampler), optional ``utilities`` (default: the input) and ``sensitivity`` (default 1); ``quick``/``full`` give
the samples; ``claim.epsilon`` is the ε the sampler claims.  ``ledger``: the charges the mechanism's
``privacy_ledger(x, rng)`` records on ``input`` in ``runs`` runs, recomposed by basic composition against the
claim (:func:`dpverify.code_checks.ledger.check_ledger`); it takes no pairs, relation or budgets.

    [[entry]]
    id = "laplace-tail"
    kind = "theorem"                                 # a utility theorem checked by Monte Carlo
    mechanism = "algorithms.theorems.private_mst:LaplaceAccuracy"   # the theorem class (dpverify.theorems.check)
    params = { epsilon = 1.0, k = 4 }                # its keyword parameters
    sweep = { param = "gamma", values = [0.1, 0.5] } # optional: one parameter swept (a plot per entry)
    expect = "holds"                                 # "holds" | "violated" | "inconclusive", or a list of them
    quick = { samples = 2000 }                       # runs per sweep point

``theorem``: the theorem object's Monte Carlo check (:func:`dpverify.theorems.check.check_theorem`, or
:func:`~dpverify.theorems.check.check_sweep` with each point at ``alpha / len(values)``); the outcome is the verdict
(``holds`` / ``violated`` / ``inconclusive``); ``expect`` may list several outcomes, any of which matches
(``["inconclusive", "holds"]`` for a bound that is attained exactly, where the interval falls below it with
probability α/2 and ``holds`` is then as true as ``inconclusive``); it takes no claim (the theorem states its
bound), pairs, input or relation.

Lists of numbers become numpy arrays (``int64`` when every element is an integer, else ``float64``);
scalars stay Python ``int``/``float``; TOML ``nan``/``inf`` are allowed.

Inputs that TOML cannot spell (a weighted graph, say) are built by a function: ``input`` or ``pairs`` may be
a table ``{ build = "module:attribute", params = {...} }``; the callable is imported like a mechanism and
called with ``params`` (lists become arrays).  A ``pairs`` builder returns ``(x0, x1)`` or
``(x0, x1, label)`` tuples.  A ``relation`` given together with ``pairs`` validates every pair (an entry
whose pairs are not neighbours under its relation is an error, not an audit).

Everything is validated when the file is loaded: an unknown key, a missing key, a bad value, a duplicate
id, both or neither of ``pairs``/``input``... raise :class:`~dpverify.errors.SuiteError` naming the file,
the entry and the key, and what to write instead.  Import paths are resolved by :func:`resolve` (again a
``SuiteError``, never a raw ``ImportError``).

Running: :func:`run_entry` audits one entry with the budget of the mode (``"quick"`` or ``"full"``) and a
seed derived from the run seed, the suite name and the entry id only (:func:`entry_seed`), so selecting,
adding or reordering entries never changes another entry's result.  An entry that raises is recorded
as outcome ``"error"`` and the run goes on.

Modules: ``model`` (the data classes), ``schema`` (validation of the tables), ``loader`` (files and the default
suite directory), ``imports`` (import paths), ``runner`` (one runner per kind of check).
"""

from dpverify.suites.imports import resolve
from dpverify.suites.loader import default_suite_dir, default_suites, load_suite, load_suites
from dpverify.suites.model import (
    DEFAULT_LEDGER_RUNS,
    DEFAULT_REPLAY_RUNS,
    EXPECTATIONS,
    MODES,
    RELATION_KINDS,
    SUPPORTED_KINDS,
    THEOREM_EXPECTATIONS,
    Budget,
    Builder,
    Claim,
    Entry,
    EntryOutcome,
    Relation,
    Suite,
)
from dpverify.suites.runner import (
    audit,
    build_mechanism,
    build_pairs,
    entry_seed,
    not_run_outcome,
    preflight,
    run_entry,
    run_suites,
    select_entries,
)

__all__ = [
    "SUPPORTED_KINDS", "EXPECTATIONS", "THEOREM_EXPECTATIONS", "RELATION_KINDS", "MODES", "DEFAULT_LEDGER_RUNS",
    "DEFAULT_REPLAY_RUNS", "Budget", "Claim", "Relation", "Builder", "Entry", "Suite", "EntryOutcome", "load_suite",
    "load_suites", "default_suite_dir", "default_suites", "resolve", "build_mechanism", "build_pairs", "entry_seed",
    "select_entries", "preflight", "run_entry", "not_run_outcome", "run_suites", "audit",
]
