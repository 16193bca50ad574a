"""Seed 001, Sec. 4, Figures 1-2: PTClust on the circles and moons graphs (n = 100), with ARI over runs.

Source: Pinot et al., "Graph-based clustering under differential privacy" (UAI 2018), Sec. 4 "Experiments": two
noisy synthetic datasets (two concentric circles, two moons), 100 nodes each, embedded in the plane; the graphs are
"built with respect to the strong homogeneity condition: edge weights within clusters are between w_min = 0.1 and
w_max = 0.3 while edges between clusters have a weight strictly above w_max²/w_min = 0.9. In practice, the complete
graph has trimmed from its irrelevant edges (i.e. not respecting the strong homogeneity condition) ... weights are
normalized between 0 and 1."  PTClust is run with mu = 0.1 and ε in {1.0, 0.7, 0.5}, "for suitable tau and p
ensuring final weights between 0 and 1".  The paper shows one picture per setting and no numbers; here we also
report the adjusted Rand index (ARI) against the ground truth over many seeded runs.

Dataset construction (our reading; the paper gives no recipe beyond the sentence above)
-------------------------------------------------------------------------------------
* Points and ground truth: ``sklearn.datasets.make_circles(100, noise=0.05, factor=0.5, random_state=r)``
  and ``make_moons(100, noise=0.05, random_state=r)``; ``r`` is drawn from the seed.
* Within-cluster edges: the symmetrised k-nearest-neighbour graph *inside each ground-truth cluster*
  (k = 6, raised until every cluster's subgraph is connected).  Their Euclidean lengths are mapped
  affinely (one map for the whole dataset) onto ``[w_min, w_max] = [0.1, 0.3]``: shortest -> 0.1,
  longest -> 0.3.
* Between-cluster edges: the ``N_BETWEEN = 5`` shortest node pairs with ends in different clusters;
  their lengths are mapped affinely onto ``[0.92, 1.0]`` (strictly above ``w_max²/w_min = 0.9``).
* Every other pair of the complete graph is dropped ("trimmed").  All weights lie in ``[0.1, 1]``.
  :func:`check_homogeneity` verifies the numbers, connectivity and the connectivity of each cluster; the
  true MST then contains exactly one between-cluster edge (the lightest), and DBMSTClu on it recovers the
  ground truth.
* The effect of ``N_BETWEEN`` (1, 5, 10) is reported in a sensitivity table: the noise in PAMST's
  topology makes the number of between-cluster edges in the released tree the main driver of the ARI.

tau and p
---------
Weight-Release returns ``(w + Y + tau)/p`` with ``Y ~ Lap(s)``; no finite ``(tau, p)`` keeps every released
weight in ``(0, 1]`` with certainty.  Rule: ``tau = 3 s`` and ``p = 1 + 2 tau`` with ``s`` the variant's
Laplace scale (``PTClust.weight_scale``: ``2mu/ε`` printed, ``2(|V|-1)mu/ε`` corrected) and 1 the *public*
upper bound of the normalised weights (not the data maximum, which is private).  A released weight then
leaves ``(0, 1]`` only if ``|Y| > tau`` roughly: probability ``<= exp(-3) ~ 5 %``; the report gives the
observed fraction.  Weights <= 0 are clipped by PTClust before DBMSTClu (post-processing).

Runs and seeds
--------------
``np.random.SeedSequence(seed).spawn(4)`` gives the streams for the datasets, the figure runs, the ARI
runs and the sensitivity runs; each stream is spawned over the *full* grid (dataset x ε x variant), so a
cell's randomness does not depend on ``quick`` or on ``workers``.  All runs are serial (a PTClust run on a
100-node graph costs about 2 ms); ``workers`` is accepted for the common ``reproduce`` signature and ignored.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..graph.dbmstclu import dbmstclu
from ..graph.mst import mst_edges
from ..graph.ptclust import PTClust
from ..graph.weighted_graph import WeightedGraph

__all__ = [
    "DATASETS",
    "EPSILONS",
    "HomogeneousGraph",
    "build_dataset",
    "check_homogeneity",
    "ptclust_for",
    "ptclust_runs",
    "reproduce",
    "tau_p",
]

DATASETS: tuple[str, ...] = ("circles", "moons")
EPSILONS: tuple[float, ...] = (1.0, 0.7, 0.5)
VARIANTS: tuple[str, ...] = ("printed", "corrected")
N_NODES: int = 100
MU: float = 0.1
W_MIN: float = 0.1
W_MAX: float = 0.3
#: Between-cluster weights are mapped onto [W_BETWEEN_LOW, W_BETWEEN_HIGH], strictly above w_max²/w_min.
W_BETWEEN_LOW: float = 0.92
W_BETWEEN_HIGH: float = 1.0
K_NEIGHBOURS: int = 6
N_BETWEEN: int = 5
SENSITIVITY_N_BETWEEN: tuple[int, ...] = (1, 5, 10)
NOISE: float = 0.05
CIRCLES_FACTOR: float = 0.5
TAU_SCALES: float = 3.0
#: A run counts as "recovered" when its ARI is at least this (two main clusters plus a singleton or two).
GOOD_ARI: float = 0.9
RUNS_FULL: int = 200
RUNS_QUICK: int = 5
#: Streams of SeedSequence(seed).spawn(4).
_DATA, _FIGURES, _RUNS, _SENSITIVITY = range(4)


# ------------------------------------------------------------------------------------------ datasets
@dataclass(frozen=True)
class HomogeneousGraph:
    """A strongly homogeneous graph on 2-D points: ``between[i]`` says edge ``i`` joins two clusters."""

    name: str
    points: np.ndarray
    truth: np.ndarray
    graph: WeightedGraph
    between: np.ndarray
    k: int
    random_state: int


def _points(name: str, random_state: int) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import make_circles, make_moons

    if name == "circles":
        x, y = make_circles(N_NODES, noise=NOISE, factor=CIRCLES_FACTOR, random_state=random_state)
    elif name == "moons":
        x, y = make_moons(N_NODES, noise=NOISE, random_state=random_state)
    else:
        raise ValueError(f"unknown dataset {name!r}; use one of {DATASETS}")
    return np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.int64)


def _affine(d: np.ndarray, low: float, high: float) -> np.ndarray:
    span = float(d.max() - d.min()) if d.size else 0.0
    if span == 0.0:
        return np.full(d.shape, low)
    return np.clip(low + (high - low) * (d - d.min()) / span, low, high)  # clip: rounding at the top end


def _connected(n: int, edges: np.ndarray, nodes: np.ndarray) -> bool:
    sub = np.isin(edges, nodes).all(axis=1)
    relabel = np.full(n, -1, dtype=np.int64)
    relabel[nodes] = np.arange(nodes.size)
    g = WeightedGraph(int(nodes.size), relabel[edges[sub]], np.ones(int(sub.sum())))
    return g.is_connected()


def build_dataset(name: str, random_state: int, *, n_between: int = N_BETWEEN) -> HomogeneousGraph:
    """The strongly homogeneous graph of ``name`` (module docstring), deterministic in ``random_state``."""
    from scipy.spatial.distance import pdist, squareform

    x, y = _points(name, random_state)
    n = x.shape[0]
    dist = squareform(pdist(x))
    u, v = np.triu_indices(n, k=1)
    same = y[u] == y[v]
    within_dist = np.where(y[:, None] == y[None, :], dist, np.inf)
    np.fill_diagonal(within_dist, np.inf)
    for k in range(K_NEIGHBOURS, n):
        nn = np.argsort(within_dist, axis=1, kind="stable")[:, :k]
        mask = np.zeros((n, n), dtype=bool)
        mask[np.repeat(np.arange(n), k), nn.ravel()] = True
        mask &= np.isfinite(within_dist)
        mask |= mask.T
        keep = mask[u, v]
        within_edges = np.column_stack([u[keep], v[keep]])
        if all(_connected(n, within_edges, np.flatnonzero(y == c)) for c in np.unique(y)):
            break
    between_ids = np.flatnonzero(~same)
    chosen = between_ids[np.argsort(dist[u, v][between_ids], kind="stable")[:n_between]]
    edges = np.concatenate([within_edges, np.column_stack([u[chosen], v[chosen]])])
    weights = np.concatenate([_affine(dist[u, v][keep], W_MIN, W_MAX),
                              _affine(dist[u, v][chosen], W_BETWEEN_LOW, W_BETWEEN_HIGH)])
    between = np.concatenate([np.zeros(within_edges.shape[0], dtype=bool), np.ones(chosen.size, dtype=bool)])
    data = HomogeneousGraph(name, x, y, WeightedGraph(n, edges, weights), between, k, int(random_state))
    check_homogeneity(data)
    return data


def check_homogeneity(data: HomogeneousGraph) -> None:
    """Raise ``RuntimeError`` unless the graph has the strong-homogeneity numbers of seed 001 Sec. 4."""
    g, b, y = data.graph, data.between, data.truth
    crosses = y[g.edges[:, 0]] != y[g.edges[:, 1]]
    problems = []
    if not np.array_equal(crosses, b):
        problems.append("the between-cluster mask does not match the ground truth")
    w_in, w_out = g.weights[~b], g.weights[b]
    if w_in.size and not (w_in.min() >= W_MIN and w_in.max() <= W_MAX):
        problems.append(f"within-cluster weights span [{w_in.min()}, {w_in.max()}], not inside [{W_MIN}, {W_MAX}]")
    if w_out.size == 0 or not w_out.min() > W_MAX ** 2 / W_MIN:
        problems.append(f"between-cluster weights must exist and exceed w_max²/w_min = {W_MAX ** 2 / W_MIN:g}")
    if not (g.weights.min() > 0 and g.weights.max() <= 1):
        problems.append("weights are not normalised into (0, 1]")
    if not g.is_connected():
        problems.append("the graph is not connected")
    for c in np.unique(y):
        if not _connected(g.n_nodes, g.edges[~b], np.flatnonzero(y == c)):
            problems.append(f"cluster {int(c)} is not connected by within-cluster edges")
    if problems:
        raise RuntimeError(f"{data.name}: " + "; ".join(problems))


# ------------------------------------------------------------------------------------------ PTClust
def tau_p(scale: float) -> tuple[float, float]:
    """The normalisation rule: ``tau = 3 s``, ``p = 1 + 2 tau`` (1 = public bound of the weights)."""
    tau = TAU_SCALES * float(scale)
    return tau, 1.0 + 2.0 * tau


def ptclust_for(graph: WeightedGraph, epsilon: float, variant: str) -> PTClust:
    """PTClust with mu = 0.1 (ℓ∞) and the tau/p rule for this variant's Laplace scale."""
    scale = PTClust(epsilon, mu=MU, variant=variant).weight_scale(graph)
    tau, p = tau_p(scale)
    return PTClust(epsilon, mu=MU, neighbours="linf", tau=tau, p=p, variant=variant)


@dataclass(frozen=True)
class Runs:
    """``runs`` PTClust runs: labels, tree edge ids, released weights and DBMSTClu cut ids per run."""

    labels: np.ndarray
    trees: np.ndarray
    weights: np.ndarray
    cuts: list[np.ndarray]


def ptclust_runs(mech: PTClust, graph: WeightedGraph, runs: int, rng: np.random.Generator) -> Runs:
    """``mech(graph, runs, rng)`` step by step (same randomness, same labels), keeping the trees too."""
    trees, noisy = mech.weighted_trees(graph, runs, rng)
    labels = np.empty((runs, graph.n_nodes), dtype=np.int64)
    cuts = []
    for i in range(runs):
        res = dbmstclu(graph.subgraph_edges(trees[i]).with_weights(noisy[i]), nonpositive="clip",
                       floor=float(mech.floor))
        labels[i] = res.labels
        cuts.append(trees[i][res.cuts])
    return Runs(labels, trees, noisy, cuts)


def _ari(truth: np.ndarray, labels: np.ndarray) -> np.ndarray:
    from sklearn.metrics import adjusted_rand_score

    return np.array([adjusted_rand_score(truth, lab) for lab in np.atleast_2d(labels)])


@dataclass(frozen=True)
class Cell:
    dataset: str
    epsilon: float | None
    method: str
    tau: float
    p: float
    ari: np.ndarray
    k: np.ndarray
    between_in_tree: np.ndarray
    outside: float  # fraction of released weights outside (0, 1]

    def row(self) -> str:
        eps = "–" if self.epsilon is None else f"{self.epsilon:.1f}"
        sd = "(deterministic)" if self.epsilon is None else f"± {self.ari.std(ddof=1) if self.ari.size > 1 else 0.0:.3f}"
        tp = "–" if self.epsilon is None else f"{self.tau:.3g} / {self.p:.3g}"
        out = "–" if self.epsilon is None else f"{self.outside:.3f}"
        return (f"| {self.dataset} | {eps} | {self.method} | {tp} | {self.ari.mean():.3f} {sd} | "
                f"{np.mean(self.ari >= GOOD_ARI):.2f} | {self.k.mean():.2f} | {self.between_in_tree.mean():.2f} | "
                f"{out} | {self.ari.size} |")


def _cell(data: HomogeneousGraph, epsilon: float, variant: str, runs: int, seq: np.random.SeedSequence,
          label: str) -> Cell:
    mech = ptclust_for(data.graph, epsilon, variant)
    r = ptclust_runs(mech, data.graph, runs, np.random.default_rng(seq))
    return Cell(data.name, epsilon, label, mech.tau, mech.p, _ari(data.truth, r.labels),
                r.labels.max(axis=1) + 1.0, data.between[r.trees].sum(axis=1).astype(float),
                float(np.mean((r.weights <= 0) | (r.weights > 1))))


def _dbmstclu_cell(data: HomogeneousGraph) -> tuple[Cell, np.ndarray, np.ndarray]:
    tree = mst_edges(data.graph)
    res = dbmstclu(data.graph.subgraph_edges(tree))
    cell = Cell(data.name, None, "DBMSTClu (true MST)", 0.0, 1.0, _ari(data.truth, res.labels),
                np.array([res.n_clusters], dtype=float), np.array([data.between[tree].sum()], dtype=float), 0.0)
    return cell, tree, res


# ------------------------------------------------------------------------------------------ figures
_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
            "#bcbd22", "#17becf")


def _draw(ax, data: HomogeneousGraph, edge_ids: np.ndarray, labels: np.ndarray, title: str,
          cut_ids: np.ndarray | None = None) -> None:
    from matplotlib.collections import LineCollection

    x = data.points
    e = data.graph.edges[edge_ids]
    b = data.between[edge_ids]
    cut = np.isin(edge_ids, cut_ids) if cut_ids is not None else np.zeros(edge_ids.size, dtype=bool)
    keep = ~cut
    ax.add_collection(LineCollection(x[e[keep & ~b]], colors="0.55", linewidths=0.6, zorder=1))
    ax.add_collection(LineCollection(x[e[keep & b]], colors="red", linewidths=1.2, zorder=2))
    ax.add_collection(LineCollection(x[e[cut]], colors="0.3", linewidths=0.8,
                                     linestyles="dotted", zorder=1))
    colours = [_PALETTE[int(c) % len(_PALETTE)] for c in labels]
    ax.scatter(x[:, 0], x[:, 1], c=colours, s=12, zorder=3, edgecolors="none")
    ax.set_title(title, fontsize=8)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_aspect("equal")
    ax.autoscale_view()


def _figure(data: HomogeneousGraph, mst: np.ndarray, mst_res, runs: dict[tuple[str, float], tuple[Runs, PTClust]],
            path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    span = np.ptp(data.points, axis=0)
    fig, axes = plt.subplots(2, 5, figsize=(15, 2.6 + 6.0 * float(span[1] / span[0])))
    allids = np.arange(data.graph.n_edges)
    _draw(axes[0, 0], data, allids, data.truth,
          f"(a) homogeneous graph ({data.graph.n_edges} edges,\n{int(data.between.sum())} between clusters in red)")
    _draw(axes[0, 1], data, mst, mst_res.labels,
          f"(b) DBMSTClu on the true MST\nARI {_ari(data.truth, mst_res.labels)[0]:.2f}, K = {mst_res.n_clusters}",
          mst[mst_res.cuts])
    _draw(axes[1, 0], data, mst, data.truth, "(f) ground truth on the true MST")
    ax = axes[1, 1]
    ax.axis("off")
    lines = [f"{data.name}, n = {data.graph.n_nodes}, mu = {MU}", f"w in [{W_MIN}, {W_MAX}] within,",
             f"[{W_BETWEEN_LOW}, {W_BETWEEN_HIGH}] between", "tau = 3 s, p = 1 + 2 tau", "",
             "edges: the tree given to DBMSTClu", "(PAMST tree in c-e, g-i);", "red = between clusters;",
             "dotted = cut by DBMSTClu", ""]
    for variant in VARIANTS:
        for eps in EPSILONS:
            if (variant, eps) in runs:
                mech = runs[(variant, eps)][1]
                lines.append(f"{variant} ε={eps}: s={mech.weight_scale(data.graph):.3g}")
    ax.text(0.0, 1.0, "\n".join(lines), va="top", ha="left", fontsize=7, family="monospace",
            transform=ax.transAxes)
    letters = {("printed", 0): "c", ("printed", 1): "d", ("printed", 2): "e",
               ("corrected", 0): "g", ("corrected", 1): "h", ("corrected", 2): "i"}
    for row, variant in enumerate(VARIANTS):
        for j, eps in enumerate(EPSILONS):
            axx = axes[row, 2 + j]
            if (variant, eps) not in runs:
                axx.axis("off")
                continue
            r = runs[(variant, eps)][0]
            a = _ari(data.truth, r.labels[0])[0]
            _draw(axx, data, r.trees[0], r.labels[0],
                  f"({letters[(variant, j)]}) PTClust {variant}, ε = {eps}\n"
                  f"ARI {a:.2f}, K = {int(r.labels[0].max()) + 1}".replace("ARI -0.00", "ARI 0.00"),
                  r.cuts[0])
    fig.suptitle(f"Seed 001 Fig. {1 if data.name == 'circles' else 2} ({data.name}): one seeded run per panel",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)


# ------------------------------------------------------------------------------------------ report
_HEADER = ("| dataset | ε | method | τ / p | ARI mean ± SD | P(ARI ≥ 0.9) | mean K | between edges in tree | "
           "released w ∉ (0,1] | runs |\n|---|---|---|---|---|---|---|---|---|---|")


def _command(quick: bool, seed: int, out_dir: Path, workers: int | None) -> str:
    """The CLI command that reproduces this report (``workers`` does not change the numbers)."""
    return (f"python -m dpverify reproduce ptclust-figures{' --quick' if quick else ''} --seed {seed} "
            f"--out {shlex.quote(str(out_dir))}")


def reproduce(*, quick: bool, seed: int, out_dir: Path, workers: int | None) -> str:
    """Run the experiment, write ``ptclust-figures-{circles,moons}.png`` into ``out_dir``, return markdown."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    runs_per_cell = RUNS_QUICK if quick else RUNS_FULL
    streams = np.random.SeedSequence(seed).spawn(4)
    data_seqs = streams[_DATA].spawn(len(DATASETS))
    grid = len(DATASETS) * len(EPSILONS) * len(VARIANTS)
    fig_seqs = streams[_FIGURES].spawn(grid)
    run_seqs = streams[_RUNS].spawn(grid)
    sens_seqs = streams[_SENSITIVITY].spawn(len(DATASETS) * len(SENSITIVITY_N_BETWEEN) * len(EPSILONS))

    def index(d: int, e: int, v: int) -> int:
        return (d * len(EPSILONS) + e) * len(VARIANTS) + v

    cells: list[Cell] = []
    sens_cells: list[Cell] = []
    construction: list[str] = []
    figures: list[str] = []
    for d, name in enumerate(DATASETS):
        random_state = int(data_seqs[d].generate_state(1)[0] % (2 ** 31))
        data = build_dataset(name, random_state)
        g = data.graph
        w_in, w_out = g.weights[~data.between], g.weights[data.between]
        construction.append(
            f"| {name} | {random_state} | {data.k} | {g.n_edges} | {int(data.between.sum())} | "
            f"[{w_in.min():.3f}, {w_in.max():.3f}] | [{w_out.min():.3f}, {w_out.max():.3f}] | "
            f"{'yes' if g.is_connected() else 'no'} |")
        mst_cell, mst, mst_res = _dbmstclu_cell(data)
        cells.append(mst_cell)
        fig_runs: dict[tuple[str, float], tuple[Runs, PTClust]] = {}
        for e, eps in enumerate(EPSILONS):
            for v, variant in enumerate(VARIANTS):
                cells.append(_cell(data, eps, variant, runs_per_cell, run_seqs[index(d, e, v)],
                                   f"PTClust {variant}"))
                mech = ptclust_for(g, eps, variant)
                fig_runs[(variant, eps)] = (ptclust_runs(mech, g, 1, np.random.default_rng(fig_seqs[index(d, e, v)])),
                                            mech)
        fname = f"ptclust-figures-{name}.png"
        _figure(data, mst, mst_res, fig_runs, out_dir / fname)
        figures.append(fname)
        for b, nb in enumerate(SENSITIVITY_N_BETWEEN):
            alt = data if nb == N_BETWEEN else build_dataset(name, random_state, n_between=nb)
            for e, eps in enumerate(EPSILONS):
                seq = sens_seqs[(d * len(SENSITIVITY_N_BETWEEN) + b) * len(EPSILONS) + e]
                c = _cell(alt, eps, "printed", runs_per_cell, seq, f"PTClust printed, {nb} between edges")
                sens_cells.append(c)

    scale_lines = []
    for variant in VARIANTS:
        for eps in EPSILONS:
            mech = ptclust_for(data.graph, eps, variant)
            s = mech.weight_scale(data.graph)
            scale_lines.append(f"| {variant} | {eps:.1f} | {s:.4g} | {mech.tau:.4g} | {mech.p:.4g} | "
                               f"{mech.true_epsilon(data.graph):.4g} |")

    mode = f"quick ({RUNS_QUICK} runs per cell)" if quick else f"full ({RUNS_FULL} runs per cell)"
    lines = [
        _command(quick, seed, out_dir, workers),
        "",
        "# Seed 001, Sec. 4, Figures 1–2: PTClust on circles and moons (n = 100)",
        "",
        f"Mode: {mode}, seed {seed}.  CLI equivalent: `dpverify reproduce ptclust-figures"
        f"{' --quick' if quick else ''}{f' --seed {seed}' if seed else ''} --out {out_dir}` (writes this report "
        "to `<out>/ptclust-figures.md` and the figures next to it).",
        "Module: `algorithms/experiments/ptclust_figures.py` (its docstring states every choice below).",
        "",
        "## Datasets (our reading of the paper)",
        "",
        f"The paper only says the graphs satisfy strong homogeneity (within-cluster weights in [{W_MIN}, {W_MAX}], "
        f"between-cluster weights > w_max²/w_min = 0.9), were trimmed from the complete graph and normalised "
        f"into [0, 1].  Our construction: `make_circles(100, noise={NOISE}, factor={CIRCLES_FACTOR})` / "
        f"`make_moons(100, noise={NOISE})`; within-cluster edges = symmetrised k-NN graph inside each "
        f"ground-truth cluster (k = {K_NEIGHBOURS}, raised until each cluster is connected), lengths mapped "
        f"affinely onto [{W_MIN}, {W_MAX}]; between-cluster edges = the {N_BETWEEN} shortest cross-cluster "
        f"pairs, lengths mapped onto [{W_BETWEEN_LOW}, {W_BETWEEN_HIGH}]; all other pairs dropped.  "
        "The homogeneity numbers, connectivity and per-cluster connectivity are checked.",
        "",
        "| dataset | random_state | k | edges | between edges | within weights | between weights | connected |",
        "|---|---|---|---|---|---|---|---|",
        *construction,
        "",
        "## Mechanism parameters",
        "",
        f"PTClust (Algorithm 3): PAMST at ε/2 then Weight-Release and DBMSTClu, μ = {MU}, ℓ∞ neighbourhood.  "
        "*Printed*: Lap(2μ/ε) per tree weight, as in Algorithm 3 (ε/2 for one weight, (|V|−1)·ε/2 for "
        "the vector; with PAMST's ε/2 the bound is 50ε here).  *Corrected*: Lap(2(|V|−1)μ/ε), which makes the whole "
        "mechanism ε-DP.",
        "",
        "τ and p: the paper asks for “suitable τ and p ensuring final weights between 0 and 1”, impossible "
        "with certainty under Laplace noise.  Rule: τ = 3 s, p = 1 + 2τ (s = Laplace scale of the variant, "
        "1 = public upper bound of the normalised weights), so a weight leaves (0, 1] only if |noise| ≳ τ "
        "(probability ≤ e⁻³ ≈ 5 %).  Released weights ≤ 0 are clipped to 1e-9 before DBMSTClu.",
        "",
        "| variant | ε | Laplace scale s | τ | p | privacy bound (`PTClust.true_epsilon`) |",
        "|---|---|---|---|---|---|",
        *scale_lines,
        "",
        "## Adjusted Rand index against the ground truth",
        "",
        f"Mean ± SD over {runs_per_cell} independent runs per cell (DBMSTClu on the true MST is "
        f"deterministic: one value).  P(ARI ≥ {GOOD_ARI}) counts runs that recover the two clusters up to a "
        "few isolated nodes; “between edges in tree” is the mean number of between-cluster edges in the tree "
        "given to DBMSTClu (1 = partitioning topology).",
        "",
        _HEADER,
        *[c.row() for c in cells],
        "",
        f"Sensitivity to the number of between-cluster edges kept in the graph (PTClust printed; "
        f"{runs_per_cell} runs per cell; {N_BETWEEN} is the main setting):",
        "",
        _HEADER,
        *[c.row() for c in sens_cells],
        "",
        "## Figures",
        "",
        *[f"* `{f}` — (a) the homogeneous graph, (b) DBMSTClu on the true MST, (c–e) PTClust printed at "
          f"ε = 1.0, 0.7, 0.5, (f) ground truth, (g–i) PTClust corrected at ε = 1.0, 0.7, 0.5; one seeded run "
          f"per panel, nodes coloured by cluster, tree edges drawn (red: between clusters, dotted: cut by "
          f"DBMSTClu)." for f in figures],
        "",
        "Note: the paper's text assigns ε = 0.5, 0.7, 1.0 to panels (c), (d), (e), its captions the reverse; "
        "we follow the captions.",
        "",
        "## Interpretation",
        "",
        *"\n\n".join(_interpretation(cells, quick)).split("\n"),
    ]
    return "\n".join(lines) + "\n"


def _interpretation(cells: list[Cell], quick: bool) -> list[str]:
    """Three paragraphs whose numbers are taken from the ARI table."""

    def pick(method: str, eps: float | None) -> list[Cell]:
        return [c for c in cells if c.method == method and c.epsilon == eps]

    def mean_ari(method: str, eps: float | None) -> str:
        return ", ".join(f"{c.dataset} {c.ari.mean():.2f}" for c in pick(method, eps))

    def good(method: str, eps: float) -> str:
        return ", ".join(f"{c.dataset} {np.mean(c.ari >= GOOD_ARI):.0%}" for c in pick(method, eps))

    def between(method: str, eps: float) -> str:
        return ", ".join(f"{c.dataset} {c.between_in_tree.mean():.1f}" for c in pick(method, eps))

    def partitioning(method: str, eps: float) -> str:
        parts = []
        for c in pick(method, eps):
            ok = c.between_in_tree == 1
            parts.append(f"{c.dataset} {c.ari[ok].mean():.2f} ({int(ok.sum())}/{ok.size} runs)" if ok.any()
                         else f"{c.dataset} – (0/{ok.size} runs)")
        return ", ".join(parts)

    mst_ok = all(c.ari[0] == 1.0 for c in pick("DBMSTClu (true MST)", None))
    hi, lo = EPSILONS[0], EPSILONS[-1]
    corrected = [c.ari.mean() for c in cells if c.method == "PTClust corrected"]
    c_coef = 1.0 / (4 * (N_NODES - 1) * MU)
    return [
        ("DBMSTClu on the true MST recovers the ground truth on both graphs (ARI = 1), as the paper states.  "
         if mst_ok else "DBMSTClu on the true MST does NOT recover the ground truth on every graph (see the table).  ")
        + f"PAMST at ε/2 over |V| − 1 = {N_NODES - 1} steps draws each edge with probability ∝ exp(−c·w), "
        f"c = ε/(4(|V|−1)μ) = {c_coef:.4f}·ε, so over the whole weight range [0.1, 1] the preference changes by "
        f"less than {1 - np.exp(-c_coef * 0.9):.1%}: the released topology is essentially a random Prim tree.  "
        f"It contains on average more than one between-cluster edge (printed, ε = {hi}: {between('PTClust printed', hi)}), "
        "and DBMSTClu must cut each of them, which splits off pieces of the clusters.  Even when the tree has "
        f"exactly one between-cluster edge the mean ARI is only {partitioning('PTClust printed', hi)} "
        f"(printed, ε = {hi}): with Lap(2μ/ε) = Lap({2 * MU / hi:.1f}) noise on {N_NODES - 2} within-cluster "
        "weights, the largest noisy within-cluster weight typically exceeds the noisy between-cluster weight "
        f"(the gap between the smallest between-cluster and the largest within-cluster weight is "
        f"{W_BETWEEN_LOW} − {W_MAX} = {W_BETWEEN_LOW - W_MAX:.2f}, about three noise scales), and DBMSTClu "
        "cuts there instead.",
        f"The paper's single pictures (two main clusters plus one singleton at ε ∈ {{1.0, 0.7}}, degradation at "
        f"ε = 0.5) are possible outcomes of the printed variant — runs with ARI ≥ {GOOD_ARI} at ε = {hi}: "
        f"{good('PTClust printed', hi)}; at ε = {lo}: {good('PTClust printed', lo)} — but not typical ones: the "
        f"mean ARI is {mean_ari('PTClust printed', hi)} at ε = {hi} and {mean_ari('PTClust printed', lo)} at "
        f"ε = {lo}.  The qualitative trade-off (worse clustering as ε decreases) is reproduced; the near-perfect "
        "recovery at ε ∈ {1.0, 0.7} suggested by the figures is not the typical outcome on our graphs.  "
        "The sensitivity table shows that the result depends strongly on how many between-cluster edges the "
        "trimmed graph keeps, which the paper does not specify.",
        f"The corrected variant, which is actually ε-DP, adds noise of scale 2(|V|−1)μ/ε = "
        f"{2 * (N_NODES - 1) * MU:.1f}/ε, two orders of magnitude above the weight range: its released weights "
        f"carry essentially no information and its mean ARI stays between {min(corrected):.2f} and "
        f"{max(corrected):.2f} at every ε.  At these ε and n, the figures' utility rests on the "
        "under-calibrated (≈ 50ε-DP) printed noise.",
        *(["(Quick mode: few runs per cell; the numbers are indicative only.)"] if quick else []),
    ]
