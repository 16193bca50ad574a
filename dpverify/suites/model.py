"""The data model of suite files: budgets, claims, relations, builders, entries, suites and entry outcomes."""


from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


from dpverify.errors import DPVerifyError, SuiteError
from dpverify.jsonsafe import json_clean, json_float
from dpverify.results import Measured, PrivacyClaim, Verdict
from dpverify.suites.imports import resolve


SUPPORTED_KINDS: tuple[str, ...] = ("statistical", "exact", "em", "sensitivity", "replay", "ledger", "theorem")
#: Norms a sensitivity claim can be made in.
NORMS: tuple[str, ...] = ("l1", "l2", "linf")
EXPECTATIONS: tuple[str, ...] = ("pass", "violation")
#: What a ``theorem`` entry may expect (the verdicts of :mod:`dpverify.theorems.check`).
THEOREM_EXPECTATIONS: tuple[str, ...] = ("holds", "violated", "inconclusive")
RELATION_KINDS: tuple[str, ...] = ("linf", "l1", "add_remove", "replace")
MODES: tuple[str, ...] = ("quick", "full")

#: Runs per pair of a replay entry that gives no ``runs``.
DEFAULT_REPLAY_RUNS = 32
#: Runs of a ledger entry that gives no ``runs`` (the default of :func:`dpverify.code_checks.ledger.check_ledger`).
DEFAULT_LEDGER_RUNS = 20

#: Budgets of entries (and suites) that name none.
DEFAULT_BUDGETS: dict[str, tuple[int, int | None]] = {
    "quick": (100_000, None),
    "full": (1_000_000, None),
}

SUITE_KEYS = ("name", "description", "default", "import_paths", "plugins", "quick", "full")
ENTRY_KEYS = (
    "id", "kind", "mechanism", "params", "claim", "expect", "true_epsilon", "description",
    "pairs", "input", "relation", "random_pairs", "search", "utilities", "sensitivity",
    "alpha", "nan_policy", "float_bits", "finalists", "batch_size", "ratio_test", "keep_pairs",
    "quick", "full", "function", "runs", "sweep", "deltas",
)
REQUIRED_ENTRY_KEYS = ("id", "kind", "mechanism", "claim", "expect")
AUDIT_OPTION_KEYS = ("alpha", "nan_policy", "float_bits", "finalists", "batch_size", "ratio_test", "keep_pairs")
#: the options only the anytime audit (``--sequential``) takes, and those only the fixed-sample audit takes
ANYTIME_ONLY, FIXED_ONLY = ("keep_pairs",), ("ratio_test",)
#: ``keep_pairs`` of an entry that narrows to no fewer pairs (every pair drawn to the end: ``keep_pairs = "all"``)
KEEP_ALL = "all"
ID_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+\-]*$")





@dataclass(frozen=True)
class Budget:
    """Sample budget of one mode: fresh samples per input and samples of the event search."""

    samples: int
    search_samples: int | None = None


@dataclass(frozen=True)
class Claim:
    """The claim of a suite entry: (epsilon, delta)-DP (:attr:`privacy`, a validated
    :class:`~dpverify.results.PrivacyClaim`); a claim in another privacy definition (``profile``: ρ-zCDP, μ-GDP or
    (α, ε)-Rényi DP, a :class:`dpverify.profiles.ProfileClaim`, audited on the (ε, δ(ε)) profile it implies); the
    target's own claim (``from_target``: read from the mechanism's ``claim()`` when the entry runs, e.g. an OpenDP
    measurement's privacy map); or (``sensitivity`` entries) a sensitivity Δ in ``norm``.

    A ``replay`` entry may state no claim: it checks the sensitivities its mechanism declares at every step.
    """

    epsilon: float | None
    delta: float = 0.0
    sensitivity: float | None = None
    norm: str | None = None
    profile: Any = None
    from_target: bool = False

    def __post_init__(self) -> None:
        if self.epsilon is not None:
            PrivacyClaim(self.epsilon, self.delta)          # validates: 0 <= ε < inf, 0 <= δ < 1
        if self.sensitivity is not None and not (0 < self.sensitivity < float("inf")):
            raise SuiteError(f"a sensitivity claim must be a finite number > 0, got {self.sensitivity!r}")

    @property
    def privacy(self) -> PrivacyClaim | None:
        """The (ε, δ) claim as the result model's :class:`~dpverify.results.PrivacyClaim` (``None`` for a
        sensitivity claim, a profile claim or no claim)."""
        return None if self.epsilon is None else PrivacyClaim(self.epsilon, self.delta)

    @property
    def is_profile(self) -> bool:
        """The entry is audited on a privacy profile (a zCDP/GDP/RDP claim, or the target's own claim)."""
        return self.profile is not None or self.from_target

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"epsilon": self.epsilon, "delta": self.delta}
        if self.sensitivity is not None:
            out.update(sensitivity=self.sensitivity, norm=self.norm)
        if self.profile is not None:
            out["profile"] = self.profile.to_dict()
        if self.from_target:
            out["from_target"] = True
        return out

    def __str__(self) -> str:
        if self.sensitivity is not None:
            return f"Δ={self.sensitivity:g} ({self.norm})"
        if self.profile is not None:
            return str(self.profile)
        if self.from_target:
            return "the target's own claim"
        if self.epsilon is None:
            return "declared step sensitivities"
        return f"ε={self.epsilon:g}" + (f" δ={self.delta:g}" if self.delta > 0 else "")


@dataclass(frozen=True, eq=False)
class Relation:
    """A neighbour relation named by a suite entry (see :mod:`dpverify.neighbours`): a built-in kind with its radius
    or candidates, or a registered user relation with its ``params``."""

    kind: str
    radius: float | None = None
    candidates: tuple[Any, ...] | None = None
    params: dict[str, Any] | None = None

    def build(self) -> Any:
        """The :mod:`dpverify.neighbours` relation object."""
        from dpverify.neighbours import build_relation

        if self.kind in ("linf", "l1"):
            return build_relation(self.kind, radius=self.radius)
        if self.kind in ("add_remove", "replace"):
            return build_relation(self.kind, candidates=None if self.candidates is None else list(self.candidates))
        try:
            return build_relation(self.kind, **(self.params or {}))
        except DPVerifyError as exc:
            raise SuiteError(str(exc)) from None


@dataclass(frozen=True, eq=False)
class Builder:
    """``{ build = "module:attribute", params = {...} }``: a suite value computed by a function."""

    build: str
    params: dict[str, Any]

    def __call__(self, where: str, search_paths: Sequence[str | Path] = ()) -> Any:
        fn = resolve(self.build, where=where, search_paths=search_paths)
        if not callable(fn):
            raise SuiteError(f"{where}: {self.build} is a {type(fn).__name__}, not a callable builder")
        try:
            return fn(**self.params)
        except DPVerifyError:
            raise
        except Exception as exc:  # noqa: BLE001 -- a failing builder is a suite error, named
            raise SuiteError(f"{where}: {self.build}(**{self.params!r}) raised {type(exc).__name__}: {exc}; "
                             f"fix the builder's params") from None


@dataclass(frozen=True, eq=False)
class Entry:
    """One validated ``[[entry]]`` of a suite file.

    Either ``pairs`` (explicit pairs ``(x0, x1)`` or a :class:`Builder`; ``relation``, if set, validates them)
    or ``input`` (a value or a :class:`Builder`) with ``relation``.
    Audit options left as ``None`` take :func:`dpverify.audit`'s defaults.
    """

    suite: str
    path: Path
    id: str
    kind: str
    mechanism: str
    params: dict[str, Any]
    claim: Claim
    expect: str
    quick: Budget
    full: Budget
    true_epsilon: float | None = None
    description: str = ""
    pairs: tuple[tuple[Any, Any], ...] | Builder | None = None
    input: Any = None
    relation: Relation | None = None
    random_pairs: int = 0
    search: dict[str, Any] | None = None
    utilities: Any = None
    sensitivity: float | None = None
    alpha: float | None = None
    nan_policy: str | None = None
    float_bits: bool | None = None
    finalists: int | None = None
    batch_size: int | None = None
    ratio_test: str | None = None
    keep_pairs: int | str | None = None
    import_paths: tuple[Path, ...] = ()
    runs: int = DEFAULT_REPLAY_RUNS
    sweep: tuple[str, tuple[Any, ...]] | None = None
    options: dict[str, Any] | None = None
    plugins: tuple[str, ...] = ()
    deltas: tuple[float, ...] | None = None

    @property
    def name(self) -> str:
        """``"suite/id"``, unique within a run."""
        return f"{self.suite}/{self.id}"

    @property
    def expected(self) -> tuple[str, ...]:
        """The outcomes that match this entry's expectation: ``expect`` is one outcome, or several joined by
        ``"|"`` (a suite's ``expect = ["inconclusive", "holds"]``)."""
        return tuple(self.expect.split("|"))

    @property
    def where(self) -> str:
        """Location used in error messages: ``"<file>: entry '<id>'"``."""
        return f"{self.path}: entry '{self.id}'"

    def budget(self, mode: str) -> Budget:
        """The budget of ``mode`` (``"quick"`` or ``"full"``)."""
        if mode == "quick":
            return self.quick
        if mode == "full":
            return self.full
        raise SuiteError(f"unknown mode {mode!r}; use 'quick' or 'full'")

    def audit_options(self) -> dict[str, Any]:
        """The optional audit keyword arguments this entry sets (the others keep audit's defaults)."""
        opts: dict[str, Any] = {}
        for key in AUDIT_OPTION_KEYS:
            value = getattr(self, key)
            if value is not None:
                opts[key] = value
        return opts


@dataclass(frozen=True, eq=False)
class Suite:
    """One suite file: its name, description, path, entries, and whether it is in the default run."""

    name: str
    description: str
    path: Path
    entries: tuple[Entry, ...]
    default: bool = False

    def __len__(self) -> int:
        return len(self.entries)


@dataclass(frozen=True, eq=False)
class EntryOutcome:
    """Result of running one entry.

    ``outcome`` is ``"pass"`` (no violation detected at this budget -- not a proof of privacy),
    ``"violation"``, ``"error"`` (the entry could not be audited; ``error`` says why) or ``"not-run"``
    (the run was interrupted first).  ``matched`` is whether ``outcome`` is one of the expected outcomes
    (``expectation``: one outcome, or several joined by ``"|"``).
    """

    suite: str
    id: str
    kind: str
    mechanism: str
    claim: Claim
    expectation: str
    outcome: str
    matched: bool
    epsilon_lower_bound: float | None
    true_epsilon: float | None
    samples: int | None
    search_samples: int | None
    seed: int
    seconds: float
    witness: dict[str, Any] | None = None
    error: str | None = None
    details: dict[str, Any] | None = None
    result: Any = field(default=None, repr=False)
    measured: Measured | None = None

    @property
    def verdict(self) -> Verdict | str:
        """The outcome as a :class:`~dpverify.results.Verdict` (a user kind's own outcome strings stay strings)."""
        try:
            return Verdict(self.outcome)
        except ValueError:
            return self.outcome

    @property
    def name(self) -> str:
        return f"{self.suite}/{self.id}"

    def _claim_record(self) -> dict[str, Any]:
        record: dict[str, Any] = {"epsilon": json_float(self.claim.epsilon), "delta": json_float(self.claim.delta)}
        if self.claim.is_profile:
            tested = (self.details or {}).get("profile_claim")
            record["profile"] = tested if tested is not None else json_clean(self.claim.to_dict().get("profile"))
            record["text"] = str(self.claim)
        return record

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (``inf``/``nan`` as strings), the per-entry record of ``report.json``."""
        return {
            "suite": self.suite,
            "id": self.id,
            "kind": self.kind,
            "mechanism": self.mechanism,
            "claim": self._claim_record(),
            "expectation": self.expectation,
            "outcome": self.outcome,
            "matched": self.matched,
            "epsilon_lower_bound": json_float(self.epsilon_lower_bound),
            "true_epsilon": json_float(self.true_epsilon),
            "samples": self.samples,
            "search_samples": self.search_samples,
            "seed": self.seed,
            "seconds": round(self.seconds, 6),
            "witness": json_clean(self.witness),
            "error": self.error,
            "details": json_clean(self.details),
            "measured": None if self.measured is None else self.measured.to_dict(),
        }
