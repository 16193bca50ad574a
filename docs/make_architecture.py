"""Regenerate the generated part of docs/architecture.md: the subpackages of dpverify (what lives there, modules,
lines) and the diagram of which subpackage imports which (a Mermaid graph in the doc and docs/images/architecture.png).

    python docs/make_architecture.py

Static analysis of the source (``ast``): top-level imports only, as tests/test_architecture.py checks them.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "dpverify"
DOC = ROOT / "docs" / "architecture.md"
IMAGE = ROOT / "docs" / "images" / "architecture.png"
BEGIN, END = "<!-- BEGIN generated -->", "<!-- END generated -->"

#: The pipeline order in which the subpackages are listed and drawn (left to right).
ORDER = ("errors", "_validation", "jsonsafe", "results", "interfaces", "neighbours", "execution", "statistical", "exact", "code_checks",
         "theorems", "suites", "reporting", "testing", "cli")


def unit(module: str) -> str:
    """The subpackage (or top-level module) a dotted module name belongs to."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "dpverify"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def top_level_imports(path: Path) -> set[str]:
    out: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    stack = list(tree.body)
    while stack:
        n = stack.pop()
        if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test):
            continue
        if isinstance(n, (ast.If, ast.Try)):
            stack.extend(n.body + n.orelse + getattr(n, "finalbody", []))
        elif isinstance(n, ast.ImportFrom) and n.module and n.module.startswith("dpverify"):
            out.add(n.module)
        elif isinstance(n, ast.Import):
            out.update(a.name for a in n.names if a.name.startswith("dpverify"))
    return out


def first_sentence(path: Path) -> str:
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    text = " ".join(doc.split("\n\n")[0].split())
    cut = text.find(". ")
    return (text if cut < 0 else text[:cut + 1]).replace("|", "\\|")


def collect() -> tuple[dict[str, list[Path]], nx.DiGraph]:
    units: dict[str, list[Path]] = {}
    graph = nx.DiGraph()
    for path in sorted(PACKAGE.rglob("*.py")):
        mod = module_name(path)
        u = unit(mod)
        if u in ("dpverify", "__main__"):
            continue
        units.setdefault(u, []).append(path)
        graph.add_node(u)
        for target in top_level_imports(path):
            v = unit(target)
            if v not in (u, "dpverify", "__main__"):
                graph.add_edge(u, v)
    return units, graph


def ordered(units: dict[str, list[Path]]) -> list[str]:
    known = [u for u in ORDER if u in units]
    return known + sorted(u for u in units if u not in known)


def table(units: dict[str, list[Path]]) -> str:
    rows = ["| subpackage | what lives there | modules | lines |", "|---|---|---|---|"]
    for u in ordered(units):
        paths = units[u]
        head = PACKAGE / u / "__init__.py" if (PACKAGE / u).is_dir() else PACKAGE / f"{u}.py"
        mods = ", ".join(p.stem for p in paths if p.stem != "__init__") or "–"
        lines = sum(p.read_text(encoding="utf-8").count("\n") for p in paths)
        name = f"`dpverify/{u}/`" if (PACKAGE / u).is_dir() else f"`dpverify/{u}.py`"
        rows.append(f"| {name} | {first_sentence(head)} | {mods} | {lines} |")
    return "\n".join(rows)


def mermaid(units: dict[str, list[Path]], graph: nx.DiGraph) -> str:
    lines = ["```mermaid", "flowchart LR"]
    for u in ordered(units):
        lines.append(f"    {u.strip('_')}[{u}]")
    for a, b in sorted(graph.edges):
        lines.append(f"    {a.strip('_')} --> {b.strip('_')}")
    lines.append("```")
    return "\n".join(lines)


def draw(units: dict[str, list[Path]], graph: nx.DiGraph) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    layers = {}
    for u in nx.topological_sort(graph.reverse()):   # dependencies first
        layers[u] = 1 + max((layers[v] for v in graph.successors(u)), default=-1)
    for u in graph:
        graph.nodes[u]["layer"] = layers[u]
    pos = nx.multipartite_layout(graph, subset_key="layer", align="vertical", scale=2.0)
    fig, ax = plt.subplots(figsize=(12, 6.5))
    nx.draw_networkx_edges(graph, pos, ax=ax, arrows=True, arrowsize=12, edge_color="#999999",
                           connectionstyle="arc3,rad=0.08", node_size=2600)
    nx.draw_networkx_nodes(graph, pos, ax=ax, node_color="#dfe9f5", edgecolors="#4a6fa5", node_size=2600)
    nx.draw_networkx_labels(graph, pos, ax=ax, font_size=8)
    ax.set_title("dpverify: which subpackage imports which (arrows point to the imported one)", fontsize=10)
    ax.axis("off")
    IMAGE.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(IMAGE, dpi=110, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    return True


def main() -> int:
    units, graph = collect()
    if not nx.is_directed_acyclic_graph(graph):
        print(f"import cycles between subpackages: {list(nx.simple_cycles(graph))[:5]}", file=sys.stderr)
    drawn = draw(units, graph)
    body = (f"Generated by `python docs/make_architecture.py` from the source (top-level imports, as "
            f"`tests/test_architecture.py` checks them).\n\n" + table(units) + "\n\n" + mermaid(units, graph) + "\n")
    if drawn:
        body += f"\n![import graph of the subpackages](images/{IMAGE.name})\n"
    text = DOC.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        print(f"{DOC} has no {BEGIN} ... {END} section", file=sys.stderr)
        return 1
    head, rest = text.split(BEGIN, 1)
    DOC.write_text(head + BEGIN + "\n\n" + body + "\n" + END + rest.split(END, 1)[1], encoding="utf-8")
    print(f"wrote {DOC.relative_to(ROOT)} ({len(units)} subpackages, {graph.number_of_edges()} import edges)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
