"""The seven built-in check kinds, registered in :mod:`dpverify.suites.kinds` like any user kind: their runners
(``statistical``, ``exact``, ``em``, ``sensitivity``, ``replay``, ``ledger``, ``theorem``), their report cells and
their comparison rules."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from dpverify.errors import DPVerifyError, SuiteError
from dpverify.jsonsafe import format_number as _fmt
from dpverify.suites import runner
from dpverify.suites.imports import resolve
from dpverify.results import Measured
from dpverify.suites.kinds import CheckKind, RunContext, make_outcome, register_kind
from dpverify.suites.model import ANYTIME_ONLY, FIXED_ONLY, KEEP_ALL, THEOREM_EXPECTATIONS, Entry, EntryOutcome
from dpverify.suites.records import exact_rise, statistical_rise
from dpverify.suites.runner import build_mechanism, build_pairs, built_input

__all__ = ["BUILTIN_KINDS"]


# --------------------------------------------------------------------------------------------------
# runners
# --------------------------------------------------------------------------------------------------


def _run_statistical(entry: Entry, mechanism: Any, ctx: RunContext) -> EntryOutcome:
    """A ``statistical`` entry: the black-box audit with the entry's budget (``--sequential``: the anytime-valid
    audit with that test budget, :func:`dpverify.statistical.anytime.audit_anytime`)."""
    budget = entry.budget(ctx.mode)
    pairs = build_pairs(entry, ctx.seed)
    options = entry.audit_options()
    if budget.search_samples is not None:
        options["search_samples"] = budget.search_samples
    if entry.claim.is_profile:
        return _run_profile(entry, mechanism, pairs, {k: v for k, v in options.items() if k not in ANYTIME_ONLY}, ctx)
    details: dict[str, Any] = {}
    samples, search_samples = budget.samples, None
    if ctx.sequential:
        # the anytime-valid audit (stops at the first batch that certifies a violation); the ×4 ladder stays
        # available as dpverify.audit_sequential
        from dpverify.statistical.anytime import audit_anytime

        # (its test martingales take no ratio_test: that option is the fixed-sample audit's)
        anytime_options = {k: v for k, v in options.items() if k not in FIXED_ONLY}
        if anytime_options.get("keep_pairs") == KEEP_ALL:
            anytime_options["keep_pairs"] = None
        result = audit_anytime(mechanism, pairs, entry.claim.epsilon, entry.claim.delta,
                               samples=budget.samples, seed=ctx.seed, workers=ctx.workers, **anytime_options)
        details["anytime"] = {k: v for k, v in result.to_dict().items()
                              if k not in ("witness", "loss_histogram", "library", "notes")}
        samples, search_samples = result.test_samples, result.search_samples
    else:
        result = runner.audit(mechanism, pairs, entry.claim.epsilon, entry.claim.delta,
                              samples=budget.samples, seed=ctx.seed, workers=ctx.workers,
                              **{k: v for k, v in options.items() if k not in ANYTIME_ONLY})
        samples, search_samples = result.samples, result.search_samples
    bound = result.epsilon_lower_bound
    if result.loss_histogram is not None:
        details["loss_histogram"] = result.loss_histogram
    outcome = "violation" if result.violation else "pass"
    witness = None if result.witness is None else result.witness.to_dict()
    return make_outcome(
        entry, ctx, outcome=outcome, epsilon_lower_bound=float(bound), samples=int(samples),
        search_samples=int(search_samples), witness=witness, result=result, details=details or None,
        measured=Measured("epsilon_lower_bound", float(bound)),
    )


def target_claim(entry: Entry, mechanism: Any) -> Any:
    """The claim a ``from_target`` entry's mechanism states about itself: ``mechanism.claim()`` (e.g. an OpenDP
    measurement's privacy map at the input distance it was built for), a PrivacyClaim or a ProfileClaim."""
    from dpverify.profiles import ProfileClaim
    from dpverify.results import PrivacyClaim

    claim_of = getattr(mechanism, "claim", None)
    if not callable(claim_of):
        raise SuiteError(f"{entry.where}: claim = {{ from_target = true }} needs a mechanism with a claim() method "
                         f"(e.g. dpverify.libraries.opendp_targets:OpenDPMeasurement); {entry.mechanism} has none. "
                         "State the claim instead: claim = { epsilon = ... } or { zcdp = ... }")
    claim = claim_of()
    if not isinstance(claim, (PrivacyClaim, ProfileClaim)):
        raise SuiteError(f"{entry.where}: {entry.mechanism}.claim() returned {type(claim).__name__}, not a "
                         "dpverify.results.PrivacyClaim or dpverify.profiles.ProfileClaim")
    return claim


def _run_profile(entry: Entry, mechanism: Any, pairs: Any, options: dict[str, Any],
                 ctx: RunContext) -> EntryOutcome:
    """A ``statistical`` entry whose claim is a zCDP / GDP / Rényi-DP claim or the target's own: the (ε, δ(ε))
    profile the claim implies, audited at the entry's ``deltas`` (:func:`dpverify.statistical.profile.audit_profile`;
    ``--sequential`` does not apply to it)."""
    from dpverify.statistical.profile import audit_profile

    claim = target_claim(entry, mechanism) if entry.claim.from_target else entry.claim.profile
    budget = entry.budget(ctx.mode)
    result = audit_profile(mechanism, pairs, claim, deltas=entry.deltas, samples=budget.samples, seed=ctx.seed,
                           workers=ctx.workers, **options)
    record = result.to_dict()
    details: dict[str, Any] = {"profile_claim": claim.to_dict(), "profile_text": str(claim),
                               "points": record.get("points"), "summary": result.summary(),
                               "worst_delta": float(result.worst.delta),
                               "worst_epsilon_claimed": float(result.worst.epsilon_claimed)}
    witness = None if result.witness is None else result.witness.to_dict()
    return make_outcome(
        entry, ctx, outcome="violation" if result.violation else "pass",
        epsilon_lower_bound=float(result.epsilon_lower_bound), samples=int(result.samples),
        search_samples=int(result.search_samples), witness=witness, result=result, details=details,
    )


def _run_exact(entry: Entry, mechanism: Any, ctx: RunContext) -> EntryOutcome:
    """An ``exact`` entry: exact losses on its pairs, or the worst pair of a search."""
    from dpverify.exact.loss import exact_audit
    from dpverify.code_checks.worst_pair import worst_pair_search

    if entry.search is not None:
        assert entry.relation is not None
        opts = dict(entry.search)
        opts.setdefault("seed", ctx.seed)
        result = worst_pair_search(mechanism, entry.relation.build(), built_input(entry, entry.input),
                                   entry.claim.epsilon, entry.claim.delta, **opts)
        loss, label, evaluations = result.result.loss, result.label, result.evaluations
    else:
        result = exact_audit(mechanism, build_pairs(entry, ctx.seed), entry.claim.epsilon, entry.claim.delta)
        loss, label, evaluations = result.worst.loss, result.worst.label, result.evaluations
    outcome = "violation" if result.violation else "pass"
    witness = {"pair_label": label, "output": loss.to_dict()["output"], "log_p0": loss.log_p0,
               "log_p1": loss.log_p1, "exact_epsilon": loss.epsilon, "delta_at_claim": result.delta_at_claim}
    return make_outcome(entry, ctx, outcome=outcome, epsilon_lower_bound=float(result.epsilon), samples=None,
                        search_samples=evaluations, witness=witness, details=result.to_dict(), result=result)


def _run_em(entry: Entry, mechanism: Any, ctx: RunContext) -> EntryOutcome:
    """An ``em`` entry: goodness of fit of the sampler's frequencies to ``softmax(ε·u/(2Δu))``."""
    from dpverify.exact.em_check import check_exponential_mechanism

    budget = entry.budget(ctx.mode)
    x = built_input(entry, entry.input)
    u = x if entry.utilities is None else built_input(entry, entry.utilities)
    opts = {} if entry.alpha is None else {"alpha": entry.alpha}
    result = check_exponential_mechanism(mechanism, u, entry.claim.epsilon, entry.sensitivity or 1.0,
                                         samples=budget.samples, seed=ctx.seed, input=x, **opts)
    outcome = "pass" if result.consistent else "violation"
    return make_outcome(entry, ctx, outcome=outcome, samples=budget.samples,
                        search_samples=None, details=result.to_dict(),
                        result=result)


def _run_sensitivity(entry: Entry, function: Any, ctx: RunContext) -> EntryOutcome:
    """A ``sensitivity`` entry: the largest change of the function found under the relation, against the claim."""
    from dpverify.code_checks.sensitivity import check_sensitivity

    assert entry.relation is not None and entry.claim.sensitivity is not None
    opts = dict(entry.search or {})
    opts.setdefault("seed", ctx.seed % 2**32)
    opts.setdefault("random_pairs", entry.random_pairs)
    x = None if entry.input is None else built_input(entry, entry.input)
    pairs = () if entry.pairs is None else list(built_input(entry, entry.pairs))
    result = check_sensitivity(function, entry.claim.sensitivity, entry.relation.build(), x,
                               norm=entry.claim.norm or "l1", pairs=pairs, **opts)
    outcome = "violation" if result.violation else "pass"
    details = result.to_dict()
    return make_outcome(entry, ctx, outcome=outcome, samples=None,
                        search_samples=result.evaluations,
                        witness=details["witness"], details=details, result=result)


def _run_replay(entry: Entry, mechanism: Any, ctx: RunContext) -> EntryOutcome:
    """A ``replay`` entry: frozen-noise replay of the mechanism's declared steps on the entry's pairs."""
    from dpverify.code_checks.replay import frozen_noise_replay

    result = frozen_noise_replay(mechanism, build_pairs(entry, ctx.seed), samples=entry.runs, seed=ctx.seed)
    outcome = "violation" if result.violation else "pass"
    details = result.to_dict()
    return make_outcome(entry, ctx, outcome=outcome, samples=entry.runs,
                        search_samples=None, witness=details["witness"],
                        details=details, result=result)


def _run_ledger(entry: Entry, mechanism: Any, ctx: RunContext) -> EntryOutcome:
    """A ``ledger`` entry: the charges of ``runs`` runs on the entry's input, recomposed against the claim."""
    from dpverify.code_checks.ledger import check_ledger

    assert entry.claim.epsilon is not None
    result = check_ledger(mechanism, built_input(entry, entry.input), entry.claim.epsilon, entry.claim.delta,
                          runs=entry.runs, seed=ctx.seed)
    outcome = "violation" if result.violation else "pass"
    return make_outcome(entry, ctx, outcome=outcome, samples=entry.runs,
                        search_samples=None, details=result.to_dict(),
                        result=result)


def _theorem_factory(entry: Entry) -> Callable[..., Any]:
    factory = resolve(entry.mechanism, where=entry.where, search_paths=entry.import_paths)
    if not callable(factory):
        raise SuiteError(f"{entry.where}: {entry.mechanism} is a {type(factory).__name__}, not a theorem class")
    return factory


def _theorem_instance(entry: Entry) -> Any:
    """The theorem object of an entry (at the first sweep value, if it sweeps): a SuiteError names bad params."""
    params = dict(entry.params)
    if entry.sweep is not None:
        params[entry.sweep[0]] = entry.sweep[1][0]
    try:
        return _theorem_factory(entry)(**params)
    except DPVerifyError:
        raise
    except Exception as exc:  # noqa: BLE001 -- bad parameters, named
        raise SuiteError(f"{entry.where}: {entry.mechanism}(**{params!r}) raised {type(exc).__name__}: {exc}; "
                         "fix params") from None


def _run_theorem(entry: Entry, ctx: RunContext) -> EntryOutcome:
    """A ``theorem`` entry: the Monte Carlo check of the theorem (or of its sweep), verdict against ``expect``."""
    from dpverify.theorems.check import DEFAULT_BATCH_SIZE, check_sweep, check_theorem

    runs = entry.budget(ctx.mode).samples
    opts: dict[str, Any] = dict(runs=runs, seed=ctx.seed, workers=ctx.workers,
                                batch_size=entry.batch_size or DEFAULT_BATCH_SIZE)
    if entry.alpha is not None:
        opts["alpha"] = entry.alpha
    if entry.sweep is not None:
        result: Any = check_sweep(_theorem_factory(entry), entry.params, entry.sweep[0], entry.sweep[1], **opts)
    else:
        result = check_theorem(_theorem_instance(entry), **opts)
    details = result.to_dict()
    witness = None if result.counterexample is None else {"counterexample": details["counterexample"]}
    return make_outcome(entry, ctx, outcome=result.verdict.value,
                        samples=runs, search_samples=None, witness=witness,
                        details=details, result=result)


# --------------------------------------------------------------------------------------------------
# report cells: the quantity each kind establishes
# --------------------------------------------------------------------------------------------------


def _found_statistical(o: EntryOutcome) -> str:
    """The ε lower bound; for a profile claim ``x@δ=d``: the bound at the profile point where it exceeds the claim's
    ε(δ) most (``details.worst_delta``)."""
    d = (o.details or {}).get("worst_delta")
    return _fmt(o.epsilon_lower_bound) + (f"@δ={d:g}" if isinstance(d, float) and d > 0 else "")


def _found_exact(o: EntryOutcome) -> str:
    """``=x``: an exact loss."""
    return "=" + _fmt(o.epsilon_lower_bound) if o.epsilon_lower_bound is not None else _fmt(None)


def _found_detail(prefix: str, key: str) -> Callable[[EntryOutcome], str]:
    """``prefix`` + the number ``details[key]`` (the ε lower bound when the entry has none, e.g. an error)."""
    def cell(o: EntryOutcome) -> str:
        v = (o.details or {}).get(key)
        return prefix + _fmt(float(v)) if isinstance(v, (int, float)) else _fmt(o.epsilon_lower_bound)
    return cell


def _found_em(o: EntryOutcome) -> str:
    """``p=x``: the goodness-of-fit p-value."""
    p = (o.details or {}).get("pvalue")
    if p is None:
        return _fmt(o.epsilon_lower_bound)
    return "p=" + (f"{p:.2g}" if isinstance(p, float) else str(p))


def _found_theorem(o: EntryOutcome) -> str:
    """A theorem's estimate (``"0.812"``; ``"3/4 hold"`` for a sweep; ``"0 fail/500"`` for an "always" check)."""
    details: Mapping[str, Any] = o.details or {}
    if not details:
        return _fmt(o.epsilon_lower_bound)
    points = details.get("points")
    if points is not None:
        holds = sum(p.get("verdict") == "holds" for p in points)
        return f"{holds}/{len(points)} hold"
    if details.get("quantity") == "always":
        return f"{details.get('failure_count', 0)} fail/{details.get('runs', 0)}"
    est = details.get("estimate")
    return _fmt(float(est)) if isinstance(est, (int, float)) else str(est)


# --------------------------------------------------------------------------------------------------
# registration
# --------------------------------------------------------------------------------------------------


def _with_mechanism(fn: Callable[..., EntryOutcome]) -> Callable[[Entry, RunContext], EntryOutcome]:
    def run(entry: Entry, ctx: RunContext) -> EntryOutcome:
        return fn(entry, build_mechanism(entry), ctx)
    return run


def _statistical(entry: Entry, ctx: RunContext) -> EntryOutcome:
    return _run_statistical(entry, build_mechanism(entry), ctx)


def _theorem(entry: Entry, ctx: RunContext) -> EntryOutcome:
    return _run_theorem(entry, ctx)


BUILTIN_KINDS: tuple[CheckKind, ...] = (
    CheckKind("statistical", _statistical, "black-box audit: an ε lower bound at confidence 1 − α",
              found=_found_statistical, rise=statistical_rise, builtin=True),
    CheckKind("exact", _with_mechanism(_run_exact), "exact privacy loss from log_pmf (or the worst pair found)",
              found=_found_exact, rise=exact_rise, builtin=True),
    CheckKind("em", _with_mechanism(_run_em), "exponential-mechanism frequencies against softmax(ε·u/(2Δu))",
              found=_found_em, builtin=True),
    CheckKind("sensitivity", _with_mechanism(_run_sensitivity), "largest change of a function under a relation",
              found=_found_detail("Δ=", "max_change"), builtin=True),
    CheckKind("replay", _with_mechanism(_run_replay), "frozen-noise replay of declared step sensitivities",
              found=_found_detail("r=", "max_ratio"), needs_claim=False, builtin=True),
    CheckKind("ledger", _with_mechanism(_run_ledger), "recorded privacy charges recomposed against the claim",
              found=_found_detail("Σε=", "total_epsilon"), builtin=True),
    CheckKind("theorem", _theorem, "Monte-Carlo check of a utility theorem", expectations=THEOREM_EXPECTATIONS,
              needs_claim=False, found=_found_theorem, prepare=_theorem_instance, builtin=True),
)
for _kind in BUILTIN_KINDS:
    register_kind(_kind)
