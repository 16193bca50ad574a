"""DPM as an audit mechanism: ``DPMOutput(view, **dpm_params)(x, n, rng) -> array`` (the sampler contract of
:mod:`algorithms`), one row per run, from the batched :meth:`algorithms.dpm.dpm.DPM.sample`.

Which outputs may be audited: every value DPM's transcript releases to its own control flow -- ``ñ_D``, ``β``,
each split, each noisy count -- is charged to the budget (seed 004 Thm. 1's composition covers the transcript,
not only the final centres), so a claim of ``(ε, δ)`` must hold for any function of the transcript.  The views:

* ``"n_clusters"`` -- the number of leaves, int64 ``(n,)`` (a function of the output: the number of centres);
* ``"first_split"`` -- the root's split as one code ``1 + dim·K + k`` with ``K`` the run's candidate count
  (0 when the root was not split), int64 ``(n,)``;
* ``"beta"`` -- Algorithm 2's interval size, float64 ``(n,)`` (discrete values ``σ/2``);
* ``"structure"`` -- ``(n_clusters, first-split code, index of β in sigmas)``, int64 ``(n, 3)``: the coarse
  shape of a run, what a pivot point that flips the first split or the stop changes;
* ``"first_centre"`` -- the centre of leaf slot 0 (the leftmost leaf, always present), float64 ``(n, d)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..classic._validation import check_choice
from .dpm import DPM
from ..ledger import Charge

__all__ = ["DPMOutput", "VIEWS"]

VIEWS: tuple[str, ...] = ("n_clusters", "first_split", "beta", "structure", "first_centre")


class DPMOutput:
    """A view of DPM's runs as a batched sampler; ``params`` are :class:`DPM`'s.  ``epsilon``/``delta`` are the
    claim of the wrapped DPM.  Also forwards ``privacy_ledger`` (for ledger checks)."""

    def __init__(self, view: str = "structure", **params: Any) -> None:
        self.view = check_choice("view", view, VIEWS)
        self.dpm = DPM(**params)          # DPM normalises array-valued bounds, sigmas and fractions to tuples
        self.epsilon = float(self.dpm.epsilon)
        self.delta = float(self.dpm.delta)

    def __repr__(self) -> str:
        return f"DPMOutput(view={self.view!r}, {self.dpm!r})"

    def privacy_ledger(self, x: object, rng: np.random.Generator) -> tuple[Charge, ...]:
        return self.dpm.privacy_ledger(x, rng)

    def __call__(self, x: object, n: int, rng: np.random.Generator) -> np.ndarray:
        batch = self.dpm.sample(x, n, rng)
        if self.view == "n_clusters":
            return batch.n_clusters.astype(np.int64)
        if self.view == "beta":
            return batch.beta.astype(np.float64)
        if self.view == "first_centre":
            return batch.centres[:, 0, :].copy()
        a, b = self.dpm.bounds
        k = np.floor((b - a) / batch.beta).astype(np.int64)
        dim, pos = batch.first_split[:, 0], batch.first_split[:, 1]
        code = np.where(dim >= 0, 1 + dim * k + pos, 0).astype(np.int64)
        if self.view == "first_split":
            return code
        sig = np.asarray(self.dpm.sigmas)
        beta_index = np.argmin(np.abs(sig[None, :] / 2.0 - batch.beta[:, None]), axis=1).astype(np.int64)
        return np.stack([batch.n_clusters.astype(np.int64), code, beta_index], axis=1)
