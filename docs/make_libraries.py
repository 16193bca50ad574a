"""Regenerate docs/libraries.md: python docs/make_libraries.py [--float-samples N]

What the audits say about real DP libraries called once per release (IBM's diffprivlib, OpenDP, Google's
differential-privacy library through python-dp):

1. runs ``audits/libraries.toml`` at its quick budgets, run seed 0, in this process (so that every result keeps its
   timing: calls per second and the share of sampling time inside the library) and tabulates every entry with the
   neighbour model its target states;
2. runs the floating-point events (``float_bits=True``, Mironov 2012) on the libraries' Laplace and Gaussian
   samplers, next to numpy's ``Generator.laplace`` (the catalogue's known positive control), and reports what is
   and is not found;
3. writes docs/libraries.md with the worked example.

Needs the extras: ``pip install -e ".[dev]"`` (diffprivlib, opendp, python-dp and dp-accounting are in ``dev``).
OpenDP and python-dp cannot be seeded, so their rows are one draw: a rerun gives other bounds (the verdicts hold at
the stated confidence either way).  About 3-4 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import dpverify  # noqa: E402
from dpverify.jsonsafe import format_number  # noqa: E402
from dpverify.suites import build_mechanism, load_suite, run_suites  # noqa: E402

SUITE = ROOT / "audits" / "libraries.toml"
OUTPUT = ROOT / "docs" / "libraries.md"
COMMAND = "python docs/make_libraries.py"
LIBRARIES = {"dpl-": "diffprivlib", "odp-": "OpenDP", "pydp-": "python-dp"}


def numpy_laplace(x: Any, n: int, rng: np.random.Generator) -> np.ndarray:
    """The positive control: ``x + Generator.laplace(0, 10)`` in doubles (ε = 0.1 on inputs 1 apart)."""
    return float(x) + rng.laplace(0.0, 10.0, size=n)


def _float_targets() -> list[tuple[str, Any, float, float]]:
    """(name, mechanism, claimed ε, claimed δ) of the samplers audited with floating-point events."""
    from dpverify.libraries.diffprivlib_targets import DiffprivlibMechanism
    from dpverify.libraries.opendp_targets import OpenDPMeasurement
    from dpverify.profiles import ZCDPClaim

    return [
        ("numpy Generator.laplace (control, catalogue finding)", numpy_laplace, 0.1, 0.0),
        ("diffprivlib Laplace(ε=0.1)", DiffprivlibMechanism("Laplace", epsilon=0.1, sensitivity=1.0), 0.1, 0.0),
        ("diffprivlib GaussianAnalytic(ε=0.5, δ=1e-3)",
         DiffprivlibMechanism("GaussianAnalytic", epsilon=0.5, delta=1e-3, sensitivity=1.0), 0.5, 1e-3),
        ("OpenDP make_laplace(scale=10), ε = 0.1",
         OpenDPMeasurement("dpverify.libraries.opendp_targets:laplace", scale=10.0), 0.1, 0.0),
        # its own claim: ρ = (1/2)²/2 = 0.125 zCDP, converted to ε at δ = 1e-3 (dpverify.profiles)
        ("OpenDP make_gaussian(scale=2), its ρ = 0.125 zCDP at δ = 1e-3",
         OpenDPMeasurement("dpverify.libraries.opendp_targets:gaussian", scale=2.0),
         ZCDPClaim(rho=0.125).epsilon(1e-3), 1e-3),
    ]


def float_rows(samples: int) -> list[str]:
    rows = ["| sampler | claim | float events | ε lower bound | verdict | witness event | calls/s |",
            "|---|---|---|---|---|---|---|"]
    for name, mech, eps, delta in _float_targets():
        r = dpverify.audit(mech, [(0.0, 1.0)], epsilon=eps, delta=delta, samples=samples,
                           search_samples=min(samples, 100_000), float_bits=True, seed=0, workers=2)
        event = "-" if r.witness is None else r.witness.event.replace("|", "\\|")
        calls = "-" if r.library is None else f"{r.library.calls_per_second:,.0f}"
        claim = f"ε={eps:.4g}" + (f", δ={delta:g}" if delta else "")
        rows.append(f"| {name} | {claim} | on | {format_number(r.epsilon_lower_bound)} | "
                    f"{'**violation**' if r.violation else 'no violation detected'} | {event} | {calls} |")
        print(f"float bits: {name}: {r.epsilon_lower_bound:.4g} ({'violation' if r.violation else 'pass'})",
              file=sys.stderr, flush=True)
    return rows


def suite_rows() -> tuple[list[str], int, int, float]:
    suite = load_suite(SUITE)
    t0 = time.perf_counter()
    outcomes = run_suites([suite], mode="quick", seed=0, workers=2)
    seconds = time.perf_counter() - t0
    by_id = {e.id: e for e in suite.entries}
    rows = ["| library | entry | neighbour model of the target | claim | expected | outcome | ε found | true ε | "
            "calls/s | in library | seeded |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    for o in outcomes:
        entry = by_id[o.id]
        lib = next(v for k, v in LIBRARIES.items() if o.id.startswith(k))
        model = (getattr(build_mechanism(entry), "neighbour_model", None) or "-").replace("|", "\\|")
        result = o.result
        point = getattr(result, "worst", None)
        timing = getattr(point.result if point is not None else result, "library", None)
        reproducible = getattr(point.result if point is not None else result, "reproducible", True)
        claim = (o.details or {}).get("profile_text") or str(o.claim)
        found = format_number(o.epsilon_lower_bound)
        d = (o.details or {}).get("worst_delta")
        if isinstance(d, float) and d > 0:
            found += f" at δ={d:g}"
        mark = "" if o.matched else " ✗"
        rows.append(
            f"| {lib} | `{o.id}` | {model} | {claim} | {o.expectation} | {o.outcome}{mark} | {found} | "
            f"{format_number(o.true_epsilon)} | "
            f"{'-' if timing is None else f'{timing.calls_per_second:,.0f}'} | "
            f"{'-' if timing is None else f'{100 * timing.library_share:.0f} %'} | "
            f"{'yes' if reproducible else 'no'} |")
    described = [f"- `{e.id}`: {e.description}" for e in suite.entries
                 if e.description.startswith(("MISUSE", "FINDING"))]
    rows += ["", "What each misuse and finding is (from the suite's descriptions):", ""] + described
    matched = sum(o.matched for o in outcomes)
    return rows, matched, len(outcomes), seconds


EXAMPLE = '''```python
import numpy as np
import dpverify
from dpverify.libraries.diffprivlib_targets import DiffprivlibTool

# the release you make in production, one call per release: diffprivlib's mean of 10 records in [0, 1]
target = DiffprivlibTool("mean", epsilon=1.0, bounds=(0.0, 1.0))
print(target.neighbour_model)          # replace-one (n public): audit it on datasets of the same size
x0 = np.zeros(10)
x1 = np.r_[np.zeros(9), 1.0]           # one record replaced
result = dpverify.audit(target, [(x0, x1)], epsilon=1.0, samples=20_000, seed=0)
print(result)                          # verdict, ε lower bound, witness, calls/s and the library's share of the time

# any function that makes one release per call, seeded through its random_state keyword
def my_release(x, *, epsilon, random_state):
    return float(np.sum(x)) + random_state.laplace(0.0, 1.0 / epsilon)

print(dpverify.audit(dpverify.per_call(my_release, epsilon=1.0), [(0.0, 1.0)], epsilon=1.0, seed=0))

# a claim in another privacy definition: OpenDP's Gaussian, its own zCDP claim, audited on the implied profile
from dpverify.libraries.opendp_targets import OpenDPMeasurement
gauss = OpenDPMeasurement("dpverify.libraries.opendp_targets:gaussian", scale=1.0)
print(gauss.claim())                   # ρ=0.5 zCDP, read from its privacy map at d_in = 1
print(dpverify.audit_profile(gauss, [(0.0, 1.0)], gauss.claim(), deltas=[0.01], samples=50_000, seed=0))
```

The same from the command line (writes `dpverify-audit/report.{json,md,html}` and `dpverify-audit/audit.toml`, the
suite entry that reruns it):

```bash
dpverify audit dpverify.libraries.diffprivlib_targets:DiffprivlibTool --param tool=mean --param epsilon=1 \\
    --param 'bounds=[0, 1]' --pair '[0,0,0,0,0,0,0,0,0,0]' '[0,0,0,0,0,0,0,0,0,1]' --epsilon 1 --samples 20000
dpverify audit dpverify.libraries.opendp_targets:OpenDPMeasurement \\
    --param factory=dpverify.libraries.opendp_targets:gaussian --param scale=1.0 --pair 0.0 1.0 --target-claim
dpverify audit mypackage.releases:noisy_sum --per-call --param epsilon=1 --pair '[1,2]' '[1,2,3]' --epsilon 1
```'''


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--float-samples", type=int, default=100_000, help="samples per input of the float audits")
    args = parser.parse_args()
    t0 = time.perf_counter()
    rows, matched, total, suite_seconds = suite_rows()
    float_table = float_rows(args.float_samples)
    versions = ", ".join(f"{p} {version(p)}" for p in ("diffprivlib", "opendp", "python-dp", "dp-accounting",
                                                       "numpy"))
    text = f"""# Real DP libraries under audit

Generated by `{COMMAND}` ({time.perf_counter() - t0:.0f} s on {platform.machine()}, 2 workers; {versions}).
Do not edit by hand.

dpverify audits a library call the way it is used: one release per call, through
`dpverify.libraries` (`PerCall` for any function; ready targets for diffprivlib's mechanisms and tools, any OpenDP
`Measurement`, python-dp's aggregations).  Each batch of calls is seeded from the audit's generator where the
library can be seeded (diffprivlib: a `RandomState` per batch through `random_state`), so the run is reproducible
from its seed on any number of workers.  OpenDP and python-dp draw from the operating system and cannot be seeded:
their results say `reproducible = false`, a rerun gives other samples, and the confidence bound holds all the same
because the samples are independent (python-dp needs care there: its process-wide random buffer is copied into
forked workers, which would then repeat each other's noise; the target drains the inherited buffer first).

## How to read a run of a seedless library

The verdict and the bound are statements at confidence 1 − α about *this* draw; a rerun is another draw, with
another bound.  A pass says no violation was detected at this budget (never that the call is private).  The
library's own controls below run at α = 0.001, so that a run, which no seed repeats, raises a false alarm with
probability at most 0.001.

## The libraries suite (`audits/libraries.toml`, quick budgets, run seed 0)

{matched}/{total} outcomes as expected ({suite_seconds:.0f} s).  "ε found" is the ε lower bound at confidence 1 − α
(for a zCDP claim, at the profile point where it exceeds the claim's ε(δ) most); "in library" the share of the
sampling time spent inside the library calls; "neighbour model" the one the target's guarantee is for, read from
the library's source or its own privacy map (the evidence is in the docstring of each `dpverify.libraries` module).

{chr(10).join(rows)}

## Floating-point attacks on the libraries' samplers

Mironov (CCS 2012) showed that a Laplace sample computed in doubles from a uniform double leaves holes in the set of
outputs that depend on the input; Delta-Siege (CCS 2023) found such violations in released libraries.  dpverify's
floating-point events (`float_bits=True`: events on the low-order bits of the outputs and on exact output values)
on inputs 0 and 1, {args.float_samples:,} samples per input, seed 0:

{chr(10).join(float_table)}

What this does and does not say: a violation is a proof (at the stated confidence) that the sampler's outputs,
bits and all, leak more than the claim; no violation means these events at this budget did not find one.  The event
`lowbit(out) ≤ -54` holds the outputs whose lowest set bit is below 2⁻⁵⁴: `0 + noise` computed in doubles reaches
them (near 0 the doubles are dense), `1 + noise` almost never does (its outputs near 0 are `1 + noise` with the
noise near −1, exact differences of doubles near 1: multiples of 2⁻⁵³), so the low bits of one release tell the two
inputs apart.  diffprivlib 0.6 draws its Laplace and
Gaussian noise from several uniforms (Holohan & Braghin 2021), but still returns `value + noise` computed in
doubles, and that sum is what leaks -- the precision attack of Mironov's section 3, as for numpy's
`Generator.laplace`.  OpenDP samples the noisy value exactly and rounds it to a double once, so every double in
range is reachable from either input: no floating-point event separated them at this budget.

## Worked example

{EXAMPLE}
"""
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUTPUT} ({matched}/{total} as expected)", file=sys.stderr)
    return 0 if matched == total else 1


if __name__ == "__main__":
    raise SystemExit(main())
