"""The PTClust figures reproduction (seed 001 Sec. 4): quick mode end to end, datasets, determinism."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("matplotlib")
pytest.importorskip("sklearn")

from algorithms.experiments.ptclust_figures import (  # noqa: E402
    DATASETS,
    MU,
    W_MAX,
    W_MIN,
    build_dataset,
    check_homogeneity,
    ptclust_for,
    ptclust_runs,
    reproduce,
    tau_p,
)
from algorithms.graph.dbmstclu import dbmstclu  # noqa: E402
from algorithms.graph.mst import mst_edges  # noqa: E402


@pytest.fixture(scope="module")
def quick_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    out = tmp_path_factory.mktemp("ptclust")
    first = reproduce(quick=True, seed=0, out_dir=out, workers=None)
    second = reproduce(quick=True, seed=0, out_dir=out, workers=2)
    return out, first, second


def test_figures_written(quick_runs: tuple[Path, str, str]) -> None:
    out, report, _ = quick_runs
    for name in DATASETS:
        png = out / f"ptclust-figures-{name}.png"
        assert png.is_file() and png.stat().st_size > 10_000
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert png.name in report


def test_report_has_ari_table_with_all_methods(quick_runs: tuple[Path, str, str]) -> None:
    _, report, _ = quick_runs
    assert report.startswith("python -m dpverify reproduce ptclust-figures --quick --seed 0")
    assert "--quick --seed 0" in report.splitlines()[0]
    assert "| dataset | ε | method |" in report
    for name in DATASETS:
        assert f"| {name} | – | DBMSTClu (true MST) | – | 1.000 (deterministic) |" in report
        for eps in ("1.0", "0.7", "0.5"):
            for variant in ("printed", "corrected"):
                assert f"| {name} | {eps} | PTClust {variant} |" in report
    assert "## Interpretation" in report


def test_same_seed_same_report_independent_of_workers(quick_runs: tuple[Path, str, str]) -> None:
    _, first, second = quick_runs
    # the first line echoes the command (workers included); everything else must be identical
    assert first.splitlines()[1:] == second.splitlines()[1:]


@pytest.mark.parametrize("name", DATASETS)
def test_dataset_is_strongly_homogeneous_and_dbmstclu_recovers_truth(name: str) -> None:
    from sklearn.metrics import adjusted_rand_score

    for random_state in (0, 1, 12345):
        data = build_dataset(name, random_state)
        check_homogeneity(data)
        g, b = data.graph, data.between
        assert g.n_nodes == 100 and g.is_connected()
        assert np.all(data.truth[g.edges[b, 0]] != data.truth[g.edges[b, 1]])
        assert np.all(data.truth[g.edges[~b, 0]] == data.truth[g.edges[~b, 1]])
        assert g.weights[~b].min() >= W_MIN and g.weights[~b].max() <= W_MAX
        assert g.weights[b].min() > W_MAX ** 2 / W_MIN and g.weights.max() <= 1.0
        tree = mst_edges(g)
        assert int(b[tree].sum()) == 1
        labels = dbmstclu(g.subgraph_edges(tree)).labels
        assert adjusted_rand_score(data.truth, labels) == 1.0
        again = build_dataset(name, random_state)
        assert again.graph == g and np.array_equal(again.points, data.points)


def test_check_homogeneity_rejects_violations() -> None:
    from dataclasses import replace

    data = build_dataset("moons", 0)
    w = data.graph.weights.copy()
    w[np.flatnonzero(data.between)[0]] = 0.85
    with pytest.raises(RuntimeError, match="between-cluster"):
        check_homogeneity(replace(data, graph=data.graph.with_weights(w)))
    w = data.graph.weights.copy()
    w[np.flatnonzero(~data.between)[0]] = 0.31
    with pytest.raises(RuntimeError, match="within-cluster"):
        check_homogeneity(replace(data, graph=data.graph.with_weights(w)))


def test_tau_p_rule_and_runs_match_ptclust_call() -> None:
    data = build_dataset("circles", 3)
    mech = ptclust_for(data.graph, 1.0, "printed")
    assert mech.mu == MU and mech.variant == "printed"
    assert (mech.tau, mech.p) == tau_p(2 * MU / 1.0) == pytest.approx((0.6, 2.2))
    runs = ptclust_runs(mech, data.graph, 4, np.random.default_rng(7))
    assert np.array_equal(runs.labels, mech(data.graph, 4, np.random.default_rng(7)))
    corrected = ptclust_for(data.graph, 0.5, "corrected")
    assert corrected.tau == pytest.approx(3 * 2 * 99 * MU / 0.5)
