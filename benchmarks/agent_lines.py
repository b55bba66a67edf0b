"""Code lines of our trivial and simple agents against PCP's Python versions of them.

Both sides are counted the same way: a line counts when it holds Python code; blank
lines, comments (so the shebang and PCP's licence header) and docstrings (a string
standing alone as the first statement of a module, class or function) do not.  A
string that is an argument, such as the help texts PCP's agents pass to add_metric,
is code.  Ours are the agent packages' Python files (``__init__.py``, ``__main__.py``);
PCP's are Debian's ``/var/lib/pcp/pmdas/NAME/pmdaNAME.python``.  Neither side counts
its namespace (pmns) or help file; both agents ship one.

    .venv/bin/python benchmarks/agent_lines.py
"""

from __future__ import annotations

import ast
import io
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PCP_PMDAS = Path("/var/lib/pcp/pmdas")
AGENTS = ("trivial", "simple")

_NOT_CODE = {
    tokenize.COMMENT,
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENCODING,
    tokenize.ENDMARKER,
}


def _docstring_lines(tree: ast.Module) -> set[int]:
    """The lines of every docstring in TREE."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        first = node.body[0] if node.body else None
        if (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
        ):
            lines.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return lines


def code_lines(source: str) -> int:
    """How many lines of SOURCE hold code (see the module's docstring)."""
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in _NOT_CODE:
            lines.update(range(token.start[0], token.end[0] + 1))
    return len(lines - _docstring_lines(ast.parse(source)))


def ours(agent: str) -> list[Path]:
    """Our agent's Python files."""
    return sorted((ROOT / "agents" / agent).glob("*.py"))


def pcps(agent: str) -> Path:
    """PCP's Python version of the agent (where Debian's pcp package puts it)."""
    return PCP_PMDAS / agent / f"pmda{agent}.python"


def count(paths: list[Path]) -> int:
    return sum(code_lines(path.read_text()) for path in paths)


def main() -> int:
    for agent in AGENTS:
        theirs = pcps(agent)
        their_count = str(count([theirs])) if theirs.exists() else "(PCP not installed)"
        print(f"{agent}: ours {count(ours(agent))}, PCP's Python {their_count}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
