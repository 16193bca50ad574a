"""The shape of the dpverify package (docs/architecture.md): no import cycle between its modules, no private name
imported across modules, no module over 600 lines (references outside the repository: every tracked file,
tests/test_no_outside_references.py).

Static checks over the source (``ast``), so they hold for every module whether or not a test imports it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "dpverify"
MAX_LINES = 600


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _type_checking_block(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def imports(path: Path, *, top_level_only: bool) -> list[tuple[str, list[str], int]]:
    """``(module, imported names, line)`` of every dpverify import of a file (top-level statements only, without
    ``if TYPE_CHECKING:`` blocks, when ``top_level_only``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: list[tuple[str, list[str], int]] = []
    nodes: list[ast.AST] = []
    if top_level_only:
        stack = list(tree.body)
        while stack:
            n = stack.pop()
            if _type_checking_block(n):
                continue
            if isinstance(n, (ast.If, ast.Try)):
                stack.extend(n.body + n.orelse + getattr(n, "handlers", []) + getattr(n, "finalbody", []))
            elif isinstance(n, ast.ExceptHandler):
                stack.extend(n.body)
            else:
                nodes.append(n)
    else:
        nodes = list(ast.walk(tree))
    for n in nodes:
        if isinstance(n, ast.ImportFrom) and n.module and n.level == 0 and n.module.split(".")[0] == "dpverify":
            out.append((n.module, [a.name for a in n.names], n.lineno))
        elif isinstance(n, ast.Import):
            for a in n.names:
                if a.name.split(".")[0] == "dpverify":
                    out.append((a.name, [], n.lineno))
    return out


def resolve(module: str, name: str) -> str:
    """The module an imported name refers to: a submodule when ``module.name`` is one, else ``module``."""
    sub = f"{module}.{name}"
    return sub if sub in MODULES else module


def import_graph() -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_nodes_from(MODULES)
    for mod, path in MODULES.items():
        for target, names, _ in imports(path, top_level_only=True):
            for dst in {resolve(target, n) for n in names} or {target}:
                if dst in MODULES and dst != mod:
                    g.add_edge(mod, dst)
    return g


def test_the_package_has_subpackages_and_modules() -> None:
    assert len(MODULES) > 40
    for pkg in ("statistical", "exact", "code_checks", "theorems", "execution", "testing", "suites", "reporting",
                "cli", "neighbours"):
        assert f"dpverify.{pkg}" in MODULES, pkg
        assert ast.get_docstring(ast.parse(MODULES[f"dpverify.{pkg}"].read_text())), f"{pkg} has no docstring"


def test_no_import_cycle() -> None:
    g = import_graph()
    cycles = list(nx.simple_cycles(g))
    assert not cycles, f"import cycles between dpverify modules: {cycles[:5]}"


def test_no_private_name_imported_across_modules() -> None:
    bad = [f"{module_name(path)}:{line} imports {name} from {target}"
           for path in MODULES.values()
           for target, names, line in imports(path, top_level_only=False)
           for name in names if name.startswith("_")]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_size(name: str) -> None:
    lines = MODULES[name].read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{name} has {lines} lines (at most {MAX_LINES}): split it by what its parts are"


def test_the_checks_catch_what_they_look_for(tmp_path: Path) -> None:
    """The checks themselves can fail: a private import, a cycle and a long module are found in a toy package."""
    src = tmp_path / "m.py"
    src.write_text("from dpverify.statistical.auditor import _check_count\nimport dpverify.errors\n")
    found = imports(src, top_level_only=False)
    assert found == [("dpverify.statistical.auditor", ["_check_count"], 1), ("dpverify.errors", [], 2)]
    g = nx.DiGraph([("a", "b"), ("b", "a")])
    assert list(nx.simple_cycles(g))
    guarded = tmp_path / "g.py"
    guarded.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from dpverify.errors import X\n")
    assert imports(guarded, top_level_only=True) == []
