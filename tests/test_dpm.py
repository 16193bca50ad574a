"""Tests of the full DPM (seed 004 Algorithm 1, ``algorithms.dpm.dpm``): scores of every node against the
reference score table, the partition, halting, the ledger, the averaging, the batched sampler, bad inputs.
Deterministic tests use fixed seeds; the one statistical comparison states its error level."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from algorithms.dpm import DPM, candidate_table
from algorithms.dpm.dpm import level_budgets
from algorithms.ledger import BudgetExceededError
from algorithms.noise import NoiseSource

SIGMAS = (0.2, 0.4, 0.6, 0.8, 1.0)


class Recorder(NoiseSource):
    """A NoiseSource that keeps every step's name, value/utilities, declared calibration and output."""

    def __init__(self, rng: np.random.Generator) -> None:
        super().__init__(rng)
        self.steps: list[tuple[str, str, np.ndarray, dict]] = []
        self.outputs: dict[str, np.ndarray] = {}

    def add(self, step, value, draw, **kw):  # type: ignore[override]
        out = super().add(step, value, draw, **kw)
        self.steps.append(("add", step, np.array(value, dtype=np.float64), kw))
        self.outputs[step] = np.array(out)
        return out

    def select(self, step, utilities, draw, **kw):  # type: ignore[override]
        out = super().select(step, utilities, draw, **kw)
        self.steps.append(("select", step, np.array(utilities, dtype=np.float64), dict(kw, chosen=out)))
        return out


def two_clusters(n: int = 40, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.clip(np.concatenate([rng.normal(0.25, 0.03, (n // 2, 2)), rng.normal(0.75, 0.03, (n - n // 2, 2))]),
                   0.0, 1.0)


def model(**kw: object) -> DPM:
    base = dict(epsilon=20.0, delta=1e-3, bounds=(0.0, 1.0), d=2, tau_r=2, sigmas=SIGMAS)
    base.update(kw)
    return DPM(**base)  # type: ignore[arg-type]


def test_level_budgets_follow_sqrt_two_profile_and_sum_to_the_total() -> None:
    e = level_budgets(0.18, 8)
    assert math.isclose(e.sum(), 0.18, rel_tol=1e-12)
    assert np.allclose(e[1:] / e[:-1], math.sqrt(2.0))
    # worked numbers for ε = 1, τ_r = 7 (Sec. 6.1's split, Alg. 1 lines 4-5): ε_cnt_0 = 0.00497, ε_exp_6 = 0.05783
    b = DPM(epsilon=1.0, delta=1e-8, bounds=(-100.0, 100.0), d=10).budgets()
    assert round(float(b["eps_cnt"][0]), 5) == 0.00497 and round(float(b["eps_exp"][6]), 5) == 0.05783
    assert b["eps_cnt"].shape == (8,) and b["eps_exp"].shape == (7,)


def test_every_node_scores_equal_the_reference_score_table() -> None:
    """Each EM step's utilities (times Δ_f) equal :func:`candidate_table` on the node's points with its ñ, for
    every run of a batch (runs with different β included) and every active node of every level."""
    x = two_clusters()
    m = model(sigmas=(0.02, 0.05, 0.1, 0.2, 0.4), epsilon=5.0, tau_e=-1e9)
    rec = Recorder(np.random.default_rng(3))
    batch = m.release(x, 12, rec)
    assert np.unique(batch.beta).size > 1
    checked = 0
    for kind, step, units, kw in rec.steps:
        if not step.startswith("split-em["):
            continue
        level = int(step[len("split-em["):-1])
        width = 2 ** (m.tau_r - level)
        for r in range(units.shape[0]):
            for j in range(units.shape[1]):
                if not np.isfinite(units[r, j]).any():
                    continue                               # not an active node of this run
                pts = x[(batch.partition[r] >= j * width) & (batch.partition[r] < (j + 1) * width)]
                n_tilde = float(batch.n_tilde[r]) if level == 0 else float(rec.outputs[f"count[{level}]"][r, j])
                delta_f = m.score_sensitivity(np.array([n_tilde]), level)[0]
                ref = candidate_table(pts, m.bounds, float(batch.beta[r]), 2, n_tilde, m.t, m.q, m.alpha)
                k = int(np.floor(1.0 / batch.beta[r]))
                got = (units[r, j] * delta_f).reshape(2, -1)[:, :k].ravel()
                assert np.allclose(got, ref, rtol=1e-12, atol=1e-9), (r, level, j)
                assert np.all(np.isneginf(units[r, j].reshape(2, -1)[:, k:]))   # padded candidates of a wider β
                checked += 1
    assert checked >= 12


def test_partition_is_disjoint_complete_and_points_on_the_split_go_left() -> None:
    x = np.array([[0.1, 0.5], [0.3, 0.5], [0.5, 0.5], [0.7, 0.5], [0.9, 0.5], [0.5, 0.1]])
    m = model(tau_r=1, tau_e=-1e9, epsilon=50.0)
    rec = Recorder(np.random.default_rng(0))
    batch = m.release(x, 50, rec)
    assert np.all(batch.partition >= 0)                       # every point in exactly one leaf (a label each)
    assert set(np.unique(batch.partition)) <= {0, 1}
    for r in range(50):
        dim, k = batch.first_split[r]
        s = (k + 0.5) * batch.beta[r]
        left = x[:, dim] <= s
        assert np.array_equal(batch.partition[r] == 0, left), r   # lines 26-27: x <= s* left, x > s* right


def test_a_point_exactly_on_the_split_position_goes_to_the_left_child() -> None:
    # beta is 0.1 for sigma 0.2; the candidate k = 4 sits at 0.45: a point there must be on the "<=" side
    x = np.array([[0.45, 0.45], [0.1, 0.1], [0.9, 0.9], [0.45, 0.9]])
    m = model(tau_r=1, tau_e=-1e9, sigmas=(0.2,), epsilon=50.0)
    batch = m.sample(x, 400, np.random.default_rng(1))
    hit = (batch.first_split[:, 1] == 4)
    assert hit.any()
    for r in np.flatnonzero(hit):
        dim = batch.first_split[r, 0]
        assert batch.partition[r, 0] == 0 and (batch.partition[r, 3] == 0) == (dim == 0)


def test_halting_rules() -> None:
    x = two_clusters(60)
    full = model(tau_e=-1e9, epsilon=200.0).sample(x, 20, np.random.default_rng(0))
    assert np.all(full.n_clusters == 4) and np.all(full.depth == 2)
    root = model(tau_e=1e9).sample(x, 20, np.random.default_rng(0))   # a child is always below tau_e: root halts
    assert np.all(root.n_clusters == 1) and np.all(root.depth == 0)
    assert np.all(root.first_split[:, 0] >= 0)        # the split was drawn (and charged) before halting


def test_strict_and_inclusive_halting_differ_only_at_equality() -> None:
    x = two_clusters(40)
    a = model(tau_e=0.0).sample(x, 30, np.random.default_rng(2))
    b = model(tau_e=0.0, halt="inclusive").sample(x, 30, np.random.default_rng(2))
    assert np.array_equal(a.n_clusters, b.n_clusters)     # a continuous count equals tau_e with probability 0


def test_nodes_with_nonpositive_noisy_count_are_leaves_not_split() -> None:
    x = two_clusters(4)
    m = model(epsilon=0.05, tau_e=-1e9)          # count noise scale ~ 100: ñ_D <= 0 about half the time
    b = m.sample(x, 400, np.random.default_rng(0))
    neg = b.n_tilde <= 0
    assert neg.any() and (~neg).any()
    assert np.all(b.n_clusters[neg] == 1) and np.all(b.first_split[neg] == -1)


def test_centres_are_leaf_means_when_the_averaging_noise_is_negligible() -> None:
    x = two_clusters(200)
    m = model(epsilon=1e6, tau_e=-1e9, tau_r=1)
    run = m.fit(x, np.random.default_rng(5))
    assert run.n_clusters == 2
    for slot, centre, w in zip(run.slots, run.centres, run.weights):
        pts = x[run.partition == slot]
        assert w == pytest.approx(len(pts), abs=0.05)
        assert np.allclose(centre, pts.mean(axis=0), atol=1e-3)


def test_ledger_totals_the_claim_and_theorem_1_accounting_is_refused() -> None:
    x = two_clusters()
    m = model(epsilon=1.0, delta=1e-4, tau_e=-1e9)
    run = m.fit(x, np.random.default_rng(0))
    eps, dlt = run.total_budget()
    assert eps == pytest.approx(1.0, rel=1e-12) and dlt == pytest.approx(1e-4, rel=1e-12)
    kinds = [c.kind for c in run.charges]
    assert kinds.count("laplace-count") == 3 and kinds.count("exponential") == 2
    assert kinds.count("dp-percentile") == 1 and kinds.count("gaussian-average") == 1
    t1 = model(epsilon=1.0, delta=1e-4, tau_e=-1e9, accounting="theorem-1")
    with pytest.raises(BudgetExceededError, match="privacy budget exceeded"):
        t1.fit(x, np.random.default_rng(0))
    charges = t1.privacy_ledger(x, np.random.default_rng(0))
    # Theorem 1: (τ_r+1)·ε_cnt + τ_r·ε_exp + ε_avg + ε_int with ε_cnt = ε_exp = 0.18: 3·0.18 + 2·0.18 + 0.64 = 1.54
    assert math.fsum(c.epsilon for c in charges) == pytest.approx(1.54)
    assert math.fsum(c.delta for c in charges) == pytest.approx(1e-4 * (3 * 0.2 + 0.8))


def test_an_early_stop_spends_less_than_the_claim() -> None:
    run = model(epsilon=1.0, tau_e=1e9).fit(two_clusters(), np.random.default_rng(0))
    eps, _ = run.total_budget()
    assert eps < 1.0 and [c.level for c in run.charges if c.kind == "exponential"] == [0]


def test_printed_exponent_doubles_the_coefficient() -> None:
    x = two_clusters()
    seen = {}
    for exponent in ("two", "printed"):
        rec = Recorder(np.random.default_rng(0))
        model(exponent=exponent, epsilon=2.0).release(x, 4000, rec)
        _, _, units, kw = [s for s in rec.steps if s[1] == "split-em[0]"][0]
        chosen = kw["chosen"][:, 0]
        picked = units[np.arange(4000), 0, chosen]
        assert np.all(np.isfinite(picked) | np.isneginf(units[:, 0]).all(axis=1))  # -inf only for a root leaf
        seen[exponent] = (kw["scale"], float(np.mean(picked[np.isfinite(picked)])))
    # declared coefficient per unit of Δ_f: ε/2 (factor two) against ε (Def. 4 as printed)
    assert seen["printed"][0] == pytest.approx(2.0 * seen["two"][0])
    # and the printed form picks better-scoring splits on average (deterministic given the seeds)
    assert seen["printed"][1] > seen["two"][1]


def test_offset_rules() -> None:
    m = model()
    lam = float(m.budgets()["lam"][0])
    nt = np.array([0.5, 2.0, lam + 10.0])
    tq = m.t / m.q + m.alpha
    assert np.allclose(m.score_sensitivity(nt, 0), tq / np.array([0.5, 1.0, 10.0]))
    assert np.allclose(model(offset="code").score_sensitivity(nt, 0), tq / np.array([1.0, 1.0, 10.0]))
    assert np.allclose(model(offset="none").score_sensitivity(nt, 0), tq / nt)


def test_same_seed_same_runs_and_batch_rows_are_independent_runs() -> None:
    x = two_clusters(40)
    m = model(epsilon=2.0, tau_e=0.5)
    a = m.sample(x, 3000, np.random.default_rng(9))
    b = m.sample(x, 3000, np.random.default_rng(9))
    assert np.array_equal(a.n_clusters, b.n_clusters) and np.array_equal(a.centres, b.centres, equal_nan=True)
    # the batch sampler and one-run fits draw the same law: compare the number of clusters of 3000 batched runs
    # with 300 separate fits by a chi-square test of homogeneity (false alarm level 0.001, fixed seeds)
    single = np.array([m.fit(x, np.random.default_rng([9, i])).n_clusters for i in range(300)])
    cats = np.arange(1, 5)
    table = np.array([[np.sum(a.n_clusters == c) for c in cats], [np.sum(single == c) for c in cats]])
    table = table[:, table.sum(axis=0) > 0]
    assert stats.chi2_contingency(table).pvalue > 0.001


@pytest.mark.parametrize(
    "kw, data, match",
    [
        ({}, [[0.5, 1.5], [0.2, 0.2]], "outside the public range"),
        ({}, [[0.5, np.nan], [0.2, 0.2]], "NaN or infinite"),
        ({}, [[0.5, 0.5, 0.5], [0.2, 0.2, 0.2]], "built for d=2"),
        ({}, [[0.5, 0.5]], "at least 2 points"),
    ],
)
def test_bad_data_gets_a_clear_error(kw: dict, data: list, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        model(**kw).fit(np.array(data), np.random.default_rng(0))


def test_clip_option_clips_instead_of_refusing() -> None:
    m = model(out_of_range="clip")
    assert np.array_equal(m.points(np.array([[0.5, 1.5], [-2.0, 0.2]])), np.array([[0.5, 1.0], [0.0, 0.2]]))


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"epsilon": 0.0}, "epsilon"),
        ({"epsilon": float("nan")}, "epsilon"),
        ({"delta": 0.0}, "delta"),
        ({"delta": 1.0}, "delta"),
        ({"bounds": (1.0, 0.0)}, "a < b"),
        ({"d": 0}, "d"),
        ({"tau_r": 0}, "tau_r"),
        ({"t": 0.1, "q": 0.1}, "t >= 2q"),
        ({"fractions": (0.5, 0.5, 0.5, 0.5)}, "sum to 1"),
        ({"sigmas": (0.5, 30.0)}, "wider than the range"),
        ({"offset": "maybe"}, "offset"),
    ],
)
def test_bad_parameters_get_a_clear_error(kw: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        model(**kw)


def test_synth_scale_run_is_reasonable() -> None:
    """One run at a moderate scale (20 000 points, 16 blobs, d = 5): DPM finds clusters near the true centres."""
    from sklearn.datasets import make_blobs

    x, _, centres = make_blobs(n_samples=20_000, n_features=5, centers=16, random_state=1, center_box=(-100, 100),
                               cluster_std=1.0, return_centers=True)
    m = DPM(epsilon=1.0, delta=1 / (20_000 * math.sqrt(20_000)), bounds=(-100.0, 100.0), d=5, tau_r=5,
            out_of_range="clip")
    run = m.fit(x, np.random.default_rng(0))
    assert 8 <= run.n_clusters <= 32
    dist = np.sqrt(((run.centres[:, None, :] - centres[None]) ** 2).sum(-1)).min(axis=1)
    assert np.median(dist) < 20.0          # the box is 200 wide; a centre within 20 of a true blob centre


def test_audit_views_follow_the_sampler_contract() -> None:
    from algorithms.dpm.examples import pivot_pairs
    from algorithms.dpm.outputs import DPMOutput

    x = pivot_pairs(10, 10, 0.2, 0.8, 0.5)[0][1]
    params = dict(epsilon=10.0, delta=1e-6, bounds=[0.0, 1.0], d=1, tau_r=2, sigmas=[0.1, 0.2, 0.4, 0.8])
    shapes = {"n_clusters": (50,), "first_split": (50,), "beta": (50,), "structure": (50, 3), "first_centre": (50, 1)}
    for view, shape in shapes.items():
        out = DPMOutput(view, **params)(x, 50, np.random.default_rng(0))
        assert out.shape == shape and np.all(np.isfinite(out)), view
    s = DPMOutput("structure", **params)(x, 200, np.random.default_rng(1))
    b = DPMOutput("beta", **params)(x, 200, np.random.default_rng(1))
    assert np.allclose(np.asarray(params["sigmas"])[s[:, 2]] / 2.0, b)        # same runs, same seed
    assert set(np.unique(s[:, 0])) <= {1, 2, 3, 4} and np.all(s[:, 1] >= 0)
    with pytest.raises(ValueError, match="view"):
        DPMOutput("centres", **params)


def test_opposite_gap_pair_makes_every_averaged_gap_move() -> None:
    from algorithms.dpm.examples import opposite_gap_pairs
    from algorithms.dpm.interval_size import averaged_gaps

    (d0, d1), = opposite_gap_pairs(6, 21.0)      # unit = 21/(6·7/2) = 1
    assert np.allclose(averaged_gaps(d0), 3.5) and np.allclose(averaged_gaps(d1), 3.0)
    assert d0.min() >= 0.0 and d1.max() <= 21.0
