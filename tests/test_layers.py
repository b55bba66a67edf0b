"""The layers of ../shared/GUIDE.md hold: each package imports only those below it, and
no two modules import each other (directly or round a loop), lazily or not."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: repository folder -> the package it installs as (setup.py)
FOLDERS = {
    "pmapi": "pmapi",
    "pmda": "pmda",
    "agents": "purepcp_agents",
    "pmcd": "pmcd",
    "pmlogger": "pmlogger",
    "pmproxy": "pmproxy",
}
#: what each package may import, bottom up
BELOW = {
    "pmapi": set(),
    "pmda": {"pmapi"},
    "purepcp_agents": {"pmapi", "pmda"},
    "pmcd": {"pmapi", "pmda"},
    "pmlogger": {"pmapi"},
    "pmproxy": {"pmapi"},
}


def modules() -> dict[str, tuple[Path, bool]]:
    """Every module of the packages: dotted name -> (file, is a package's __init__)."""
    found = {}
    for folder, package in FOLDERS.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = [package, *path.relative_to(ROOT / folder).with_suffix("").parts]
            is_init = parts[-1] == "__init__"
            found[".".join(parts[:-1] if is_init else parts)] = (path, is_init)
    return found


def imports(name: str, path: Path, is_init: bool, known: set[str]) -> set[str]:
    """Every module NAME imports anywhere in its file (inside functions too): for
    ``from P import X``, the submodule P.X when X is one (P is then only the package
    the submodule is found in, already being imported), else P itself."""
    named: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            named |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_init else name.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                submodule = f"{module}.{alias.name}"
                named.add(submodule if submodule in known else module)
    return named


def graph() -> dict[str, set[str]]:
    mods = modules()
    return {
        name: {m for m in imports(name, *where, set(mods)) if m in mods and m != name}
        for name, where in mods.items()
    }


def test_each_package_imports_only_the_layers_below_it():
    wrong = sorted(
        f"{name} imports {dep}"
        for name, deps in graph().items()
        for dep in deps
        if (top := dep.split(".")[0]) != name.split(".")[0] and top not in BELOW[name.split(".")[0]]
    )
    assert wrong == []


def test_no_import_cycles():
    edges = graph()
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(v: str) -> None:  # (Tarjan's strongly connected components)
        order[v] = low[v] = len(order)
        stack.append(v)
        for w in sorted(edges[v]):
            if w not in order:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], order[w])
        if low[v] == order[v]:
            component = [stack.pop()]
            while component[-1] != v:
                component.append(stack.pop())
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(edges):
        if v not in order:
            visit(v)
    assert cycles == []
