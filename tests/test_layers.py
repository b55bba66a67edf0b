"""The layers of docs/architecture.md hold: each package imports only those below it, no
two modules import each other (directly or round a loop), lazily or not, and nothing
imports a tool.  Imports made only for type checkers (under ``if TYPE_CHECKING:``) are not
arrows: they never run, and a Protocol is how two sides meet without one."""

from __future__ import annotations

import ast
import re
import subprocess
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: what each layer (a repository folder, installed as purepcp.FOLDER) may import, bottom up
BELOW = {
    "pmapi": set(),
    "pmda": {"pmapi"},
    "series": {"pmapi"},
    "agents": {"pmapi", "pmda"},
    "pmcd": {"pmapi", "pmda"},
    "pmlogger": {"pmapi"},
    "pmproxy": {"pmapi", "series"},
    "tools": {"pmapi", "series"},
    # PCP's own Python API names, installed as they are (not under purepcp)
    "cpmapi": {"pmapi"},
    "pcp": {"pmapi", "pmda", "cpmapi"},
}
#: the layers installed under their own name rather than as purepcp.LAYER (from compat/)
API_NAMES = {"pcp", "cpmapi"}
FOLDERS = {folder: folder if folder in API_NAMES else f"purepcp.{folder}" for folder in BELOW}
#: where each layer's code is in the repository
PLACES = {folder: ROOT / "compat" / folder if folder in API_NAMES else ROOT / folder
          for folder in BELOW}  # fmt: skip


def modules() -> dict[str, tuple[Path, bool]]:
    """Every module of the packages: dotted name -> (file, is a package's __init__)."""
    found = {}
    for folder, package in FOLDERS.items():
        for path in PLACES[folder].rglob("*.py"):
            parts = [package, *path.relative_to(PLACES[folder]).with_suffix("").parts]
            is_init = parts[-1] == "__init__"
            found[".".join(parts[:-1] if is_init else parts)] = (path, is_init)
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _run_time_nodes(tree: ast.AST):
    """Every node of TREE but those under ``if TYPE_CHECKING:`` (its else branch runs)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            todo.extend(node.orelse)
        else:
            todo.extend(ast.iter_child_nodes(node))


def imports(name: str, path: Path, is_init: bool, known: set[str]) -> set[str]:
    """Every module NAME imports at run time anywhere in its file (inside functions too):
    for ``from P import X``, the submodule P.X when X is one (P is then only the package
    the submodule is found in, already being imported), else P itself."""
    named: set[str] = set()
    for node in _run_time_nodes(ast.parse(path.read_text())):
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


def layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if parts[0] == "purepcp" else parts[0]


def test_each_package_imports_only_the_layers_below_it():
    wrong = sorted(
        f"{name} imports {dep}"
        for name, deps in graph().items()
        for dep in deps
        if (below := layer(dep)) != layer(name) and below not in BELOW[layer(name)]
    )
    assert wrong == []


def test_no_command_imports_another():
    """A command's module (a console script's) is imported by nothing: what two commands
    share lives in a module of its own, or lower down."""
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    commands = {target.split(":")[0] for target in scripts.values()}
    wrong = sorted(
        f"{name} imports {dep}"
        for name, deps in graph().items()
        for dep in deps & commands
        if not dep.startswith(name + ".")  # a command's own package (dbpmda's parts)
    )
    assert wrong == []


def test_the_client_library_is_not_the_house():
    """pmapi/ is libpcp's counterpart, not the house: tools and series live above it.  It
    was half the code when they lived inside it; with them out it is about 30% (pmns,
    labels, the PDU codec, archives, derived metrics, contexts, time windows, C numbers),
    and a third is the line past which something that is not libpcp has moved back in."""

    def lines(folder: str) -> int:
        return sum(len(p.read_text().splitlines()) for p in PLACES[folder].rglob("*.py"))

    total = sum(lines(folder) for folder in BELOW)
    assert lines("pmapi") / total < 1 / 3


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


def test_everything_imports_the_layers_under_purepcp():
    """Run from the repository, `import pmapi` would find the folder and load a second copy
    of the library beside purepcp.pmapi; installed, it fails.  No code, test, benchmark,
    embedded script or document imports a layer by its folder name."""
    folders = "|".join(sorted(set(BELOW) - API_NAMES))
    bare = re.compile(
        rf"^\s*(?:import\s+(?:[\w.]+\s*,\s*)*(?:{folders})\b"
        rf"|from\s+(?:{folders})(?:\.\w+)*\s+import\b)",
        re.M,
    )
    tracked = subprocess.run(
        ["git", "ls-files", "*.py", "*.md", "*.tmpl"], cwd=ROOT, capture_output=True, text=True
    ).stdout.split()
    wrong = [
        f"{name}:{text[: m.start()].count(chr(10)) + 1}"
        for name in tracked
        if (ROOT / name).is_file()
        for text in [(ROOT / name).read_text(errors="replace")]
        for m in bare.finditer(text)
    ]
    assert wrong == []


def test_no_test_module_imports_another():
    """What tests share lives in tests/support: a test module (or a conftest) imported by
    another would be collected twice over, run its module fixtures for the importer too, and
    tie the two files' edits together.  Nothing under tests/ imports one, lazily or not."""
    tests = ROOT / "tests"

    def is_test_module(dotted: str) -> bool:
        last = dotted.rsplit(".", 1)[-1]
        return last.startswith("test_") or last == "conftest"

    wrong = []
    for path in sorted(tests.rglob("*.py")):
        package = ".".join(path.relative_to(ROOT).parent.parts)
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                named = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from its own package (or above)
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, base] if base else up)
                named = [base, *(f"{base}.{alias.name}" for alias in node.names)]
            else:
                continue
            if any(name.startswith("tests.") and is_test_module(name) for name in named):
                wrong.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert wrong == []


def test_hypothesis_counts_follow_the_profile():
    """A test asking hypothesis for N examples asks for examples(N) (tests/support/examples.py):
    a bare number would hold under every profile, and the dev profile would not be quick."""
    bare = re.compile(r"max_examples\s*=\s*\d")
    wrong = [
        f"{path.relative_to(ROOT)}:{text[: m.start()].count(chr(10)) + 1}"
        for path in sorted((ROOT / "tests").rglob("*.py"))
        if path.name != "conftest.py"
        for text in [path.read_text()]
        for m in bare.finditer(text)
    ]
    assert wrong == []
