"""Validity checks of the sampling contract, run before any verdict.

The confidence bound of an audit (:mod:`dpverify.audit`) holds only if the outputs it counts are independent
draws of the mechanism on the stated inputs.  Three ways a mechanism or its caller can break that silently,
each turned into an error that names the fix:

* **the mechanism ignores** ``rng`` -- it draws from ``np.random``'s global state, ``random``, a generator it
  creates itself, or the operating system.  Then one seed does not give one set of outputs, and forked
  sampling workers (which inherit the same global state) produce *identical* batches: the samples are not
  independent and the bound means nothing.  Checked by calling the mechanism twice with the same seed (the
  outputs must be equal) and with other seeds (a random mechanism's outputs must change), and, during the
  search, by refusing two identical non-constant batches;
* **rows that are not independent** -- one noise value drawn per call and broadcast to the ``n`` rows;
* **calls that are not independent** -- the mechanism keeps state between calls (a call counter, a privacy-budget
  accountant that changes the noise, a cache of noise, a mutable default argument) or changes its input in place
  (``x += noise`` on the caller's array): its outputs then depend on how many calls came before, and on how the
  batches were spread over workers, so they are no sample of one law.  Checked by calling it with the probe's first
  seed again after the other probe calls, and once more after the audit's sampling (:class:`ContractProbe`; the
  sampling in this process then has made every earlier call), and by comparing the input with a copy taken before
  the first call.  State that changes only after many calls, in batches drawn on worker processes (each works on
  its own copy of the mechanism), is not seen;
* **a pair whose two inputs are equal** -- its two output laws are the same; auditing it only spends the
  multiple-testing budget, and a user who meant two neighbours made a mistake that must not pass as "no
  violation".

docs/architecture.md, "Contracts the checks rely on": the mechanism draws *all* its randomness from ``rng``.

**Seedless libraries.**  Some libraries cannot be seeded at all: OpenDP draws its random bits from a
cryptographically secure generator seeded by the operating system (``fill_bytes`` in its Rust crate,
``traits/samplers``), Google's DP library behind python-dp from ``SecureURBG`` (``algorithms/rand.h``), a buffer
of operating-system random bytes.  A mechanism wrapping them
declares it with the attribute ``reproducible = False``; the same-seed checks are skipped for it (they would always
fail), and with them the checks of state kept between calls, which re-draw a seed; the others stand: different
seeds must still give different outputs unless the output is constant, rows must still be independent, and the
input must be left as it is.  Such a run is not reproducible from its seed, but its samples are
independent draws (fresh operating-system entropy in every call), so the confidence bound holds.
"""

from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
from numpy.typing import NDArray

from dpverify.errors import InputError, MechanismError
from dpverify.neighbours import Pair

__all__ = ["inputs_equal", "check_pairs_differ", "check_rng_contract", "contract_probe", "ContractProbe",
           "check_batches_distinct", "declares_seedless", "PROBE_ROWS"]

#: outputs per call of the contract probe
PROBE_ROWS = 256
_HEAD_ROWS = 64      # rows a constancy check looks at first
_KEY_ROWS = 64       # rows of a batch its key hashes


def inputs_equal(a: Any, b: Any) -> bool:
    """Whether two inputs are the same value: weighted inputs (graphs) by their weights and edges, arrays
    element by element (NaN equal to NaN), dicts key by key and lists and tuples item by item (each by this rule),
    anything else by ``==`` when that gives a plain truth value."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(inputs_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and type(a) is type(b):
        numeric = _numeric(a), _numeric(b)           # (records of numbers: one array comparison, not one per item)
        if numeric[0] is not None and numeric[1] is not None:
            return _arrays_equal(*numeric)
        return len(a) == len(b) and all(inputs_equal(u, v) for u, v in zip(a, b))
    if hasattr(a, "weights") and hasattr(b, "weights"):
        same = inputs_equal(np.asarray(a.weights), np.asarray(b.weights))
        if hasattr(a, "edges") and hasattr(b, "edges"):
            same = same and inputs_equal(np.asarray(a.edges), np.asarray(b.edges))
        return same
    try:
        xa, xb = np.asarray(a), np.asarray(b)
    except Exception:
        xa = xb = None
    if xa is not None and xb is not None and xa.dtype.kind in "biuf" and xb.dtype.kind in "biuf":
        return _arrays_equal(xa, xb)
    try:
        same = a == b
    except Exception:
        return False
    return same if isinstance(same, bool) else False


def _numeric(x: Any) -> NDArray | None:
    """``x`` as a numeric array, or ``None`` (ragged, or not numbers)."""
    try:
        arr = np.asarray(x)
    except Exception:
        return None
    return arr if arr.dtype.kind in "biuf" else None


def _arrays_equal(xa: NDArray, xb: NDArray) -> bool:
    if xa.shape != xb.shape:
        return False
    return bool(np.array_equal(xa, xb, equal_nan=xa.dtype.kind == "f" and xb.dtype.kind == "f"))


def check_pairs_differ(pairs: Sequence[Pair]) -> None:
    """Raise :class:`InputError` naming the first pair whose two inputs are equal."""
    for i, p in enumerate(pairs):
        if inputs_equal(p.x0, p.x1):
            raise InputError(
                f"pair {i} ('{p.label}') has two equal inputs; an audit compares the outputs on two *different* "
                "neighbouring inputs (equal inputs have the same output law and can never show a violation). "
                "Build the pairs with a neighbour relation, e.g. LInfNeighbours(radius).pairs(x), or fix the pair"
            )


def _draw(mechanism: Any, x: Any, n: int, entropy: int, key: int, flat: bool = True) -> NDArray | None:
    """The probe's ``key``-th batch (rows flattened with ``flat``), or ``None`` when the call fails or breaks the
    output contract (the audit's own first call reports it with its context)."""
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy, spawn_key=(3, key))))
    try:
        out = np.asarray(mechanism(x, n, rng))
    except Exception:
        return None
    if out.ndim == 0 or out.shape[0] != n or out.dtype.kind not in "biuf":
        return None
    return out.reshape(n, -1) if flat else out


def _same(a: NDArray, b: NDArray) -> bool:
    return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=a.dtype.kind == "f"))


def _constant(a: NDArray) -> bool:
    """Whether every row equals the first (NaN equal to NaN); the first rows answer most varying batches."""
    if len(a) == 0:
        return True
    for part in (a[:_HEAD_ROWS], a[_HEAD_ROWS:]):
        if not np.all((part == a[0]) | ((part != part) & (a[0] != a[0]))):
            return False
    return True


def declares_seedless(mechanism: Any) -> bool:
    """Whether ``mechanism`` declares that it draws its own randomness (attribute ``reproducible = False``)."""
    return getattr(mechanism, "reproducible", True) is False


def check_rng_contract(mechanism: Any, x: Any, entropy: int, where: str,
                       n: int = PROBE_ROWS) -> tuple[int, ...] | None:
    """The trailing shape of :func:`contract_probe`'s outputs (``None`` when it drew none it could use)."""
    return contract_probe(mechanism, x, entropy, where, n).shape


@dataclass(frozen=True)
class ContractProbe:
    """What :func:`contract_probe` saw: the trailing shape of the outputs (``None`` when the probe drew none it could
    use) and the first probe batch (``None`` for a mechanism that declares ``reproducible = False``), which
    :meth:`check_unchanged` draws again after the audit's sampling."""

    shape: tuple[int, ...] | None
    reference: NDArray | None = None
    entropy: int = 0

    def check_unchanged(self, mechanism: Any, x: Any, where: str) -> None:
        """Raise :class:`MechanismError` when the probe's first seed no longer gives the probe's first batch: the
        mechanism kept state through the calls made since (the sampling done in this process)."""
        if self.reference is None:
            return
        again = _draw(mechanism, x, len(self.reference), self.entropy, 0)
        if again is not None and not _same(self.reference, again):
            raise _stateful(where, "the audit's sampling")


def _stateful(where: str, since: str) -> MechanismError:
    return MechanismError(
        f"the mechanism keeps state between calls: on {where}, one seed gave other outputs after {since} than "
        "before (a call counter, a privacy-budget accountant that changes the noise, a cache of noise, a mutable "
        "default argument). Its outputs then depend on how many calls came before, and on how the batches were "
        "spread over workers, so they are no sample of one law and no confidence bound can be given. Make every "
        "call independent of earlier ones (create such state inside the call), or audit what one fresh mechanism "
        "does: a mechanism object that builds a new instance in each call"
    )


def _snapshot(x: Any) -> tuple[bool, Any]:
    """``(True, a deep copy of x)`` when the copy compares equal to ``x`` (:func:`inputs_equal`), else ``(False,
    None)``: an input without a value comparison (compared by identity) or that cannot be copied is not checked."""
    try:
        kept = copy.deepcopy(x)
    except Exception:
        return False, None
    return (True, kept) if inputs_equal(kept, x) else (False, None)


def _check_input_kept(x: Any, snapshot: tuple[bool, Any], where: str) -> None:
    if snapshot[0] and not inputs_equal(snapshot[1], x):
        raise MechanismError(
            f"the mechanism changed its input in place on {where} (e.g. x += noise on the caller's array): later "
            "calls see another input, so the outputs are no sample of the mechanism on the stated input and no "
            "confidence bound can be given. Leave the input as it is: work on a copy (x = np.array(x, "
            "dtype=float)) or build a new array (x + noise). (Any change that makes the input compare unequal to a "
            "copy taken before the call counts, an attribute cached on the input included)"
        )


def contract_probe(mechanism: Any, x: Any, entropy: int, where: str, n: int = PROBE_ROWS) -> ContractProbe:
    """Call ``mechanism(x, n, rng)`` five times and raise :class:`MechanismError` when it does not draw its
    randomness from ``rng``, or when its calls are not independent of each other:

    * two calls with the same seed must return the same outputs (else it draws from elsewhere: ``np.random``,
      ``random``, its own generator seeded from the clock or the OS);
    * with three different seeds, a mechanism whose outputs vary must not give the same *varying* batch twice
      (else it seeds a generator of its own and the samples of different batches repeat each other); two equal
      constant batches are no evidence -- a mechanism with a likely output (a rare release, a mostly-⊥ answer)
      often returns its mode on every row of a probe;
    * when every call returns ``n`` equal rows but the calls differ, the rows are not independent (one noise
      value per call);
    * the first seed must give the same outputs again after the calls with other seeds (else the mechanism keeps
      state between calls), and the input must compare equal to a copy taken before the first call (else the
      mechanism changes it in place).

    A deterministic mechanism (the same constant output for every seed) passes: that is its law.  The probe's
    seeds are derived from the audit's root entropy (``spawn_key=(3, ...)``), apart from every batch's.

    A mechanism that declares ``reproducible = False`` (:func:`declares_seedless`: it draws its own randomness,
    e.g. from the operating system) skips the checks that re-draw a seed (the same-seed check and the check of state
    kept between calls); the others stand.

    Returns the :class:`ContractProbe`: the trailing shape of the probe's outputs (``()`` for scalar outputs;
    ``None`` when the probe drew none it could use: the audit's own first batch then reports the mechanism's error)
    and the first batch, for :meth:`ContractProbe.check_unchanged` after the sampling.
    """
    snapshot = _snapshot(x)
    first = _draw(mechanism, x, n, entropy, 0, flat=False)
    _check_input_kept(x, snapshot, where)
    if first is None:
        return ContractProbe(None)
    shape = tuple(first.shape[1:])
    a = first.reshape(n, -1)
    seedless = declares_seedless(mechanism)
    b = None if seedless else _draw(mechanism, x, n, entropy, 0)
    if b is None and not seedless:
        return ContractProbe(shape)
    if b is not None and not _same(a, b):
        raise MechanismError(
            f"the mechanism does not draw its randomness from the rng it is given: two calls on {where} with the "
            "same seed returned different outputs. Samples drawn that way are not reproducible and, on several "
            "workers, not independent (forked workers share np.random's global state), so no confidence bound can "
            "be given. Draw every random number from the `rng` argument (rng.laplace(...), rng.random(...) "
            "instead of np.random.laplace, random.random or a generator created inside the mechanism). (A "
            "mechanism that keeps state between calls -- a call counter, a budget accountant -- fails the same way: "
            "make every call independent of earlier ones)"
        )
    others = [_draw(mechanism, x, n, entropy, k) for k in (1, 2)]
    _check_input_kept(x, snapshot, where)
    if any(o is None for o in others):
        return ContractProbe(shape)
    batches = [a] + others
    varies = not all(_constant(o) for o in batches)
    if not _constant(a) and any(_same(a, o) for o in others):   # a varying batch repeated
        raise MechanismError(
            f"the mechanism returned the same outputs on {where} for different seeds although its outputs vary: "
            "it ignores the rng it is given (e.g. it creates np.random.default_rng(<fixed seed>) itself), so every "
            "batch repeats the same samples and no confidence bound can be given. Draw every random number from "
            "the `rng` argument"
        )
    if not varies and not all(_same(a, o) for o in others) and n > 1:
        raise MechanismError(
            f"the mechanism returned {n} equal rows on {where} for every seed, but different rows for different "
            "seeds: it draws one random value per call and repeats it, so its rows are not independent samples. "
            "Draw the noise with size=(n, ...), one independent draw per row"
        )
    if seedless:
        return ContractProbe(shape)
    again = _draw(mechanism, x, n, entropy, 0)
    if again is not None and not _same(a, again):
        raise _stateful(where, "three calls with other seeds")
    return ContractProbe(shape, a, entropy)


def _key(batch: NDArray) -> bytes:
    """A hash of ``_KEY_ROWS`` evenly spaced rows of a batch and its shape: equal batches have equal keys (bytes of
    their rows), and a key shared by different batches only costs one full comparison.  Hashing whole batches took
    a tenth of a ten-dimensional audit's search."""
    a = np.asarray(batch)
    rows = np.ascontiguousarray(a[np.unique(np.linspace(0, len(a) - 1, _KEY_ROWS).astype(np.int64))])
    return hashlib.blake2b(rows.view(np.uint8).ravel(), digest_size=16).digest() + str(a.shape).encode()


def _bytes_equal(a: NDArray, b: NDArray) -> bool:
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a.view(np.uint8), b.view(np.uint8)))


def check_batches_distinct(batches: Sequence[NDArray], where: str) -> None:
    """Raise :class:`MechanismError` when two batches of outputs (drawn with different seeds) are identical (byte for
    byte) without being constant: the mechanism reused its randomness (e.g. ``np.random`` in forked workers)."""
    seen: dict[bytes, list[int]] = {}
    for b, batch in enumerate(batches):
        a = np.asarray(batch)
        if len(a) < 2 or _constant(a.reshape(len(a), -1)):
            continue
        key = _key(a)
        for earlier in seen.get(key, []):
            if _bytes_equal(np.asarray(batches[earlier]), a):
                raise MechanismError(
                    f"batches {earlier} and {b} of the outputs on {where} are identical although they were drawn "
                    "with different seeds: the mechanism does not draw from the rng it is given (forked workers "
                    "share np.random's global state), so the samples are not independent and no confidence bound "
                    "can be given. Draw every random number from the `rng` argument"
                )
        seen.setdefault(key, []).append(b)
