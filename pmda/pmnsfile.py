"""An agent's namespace file written from its metric table: pmns(5) text, one block per
non-leaf name, children in the table's order (what an agent's make_pmns script writes)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path


def render(pmids: Iterable[tuple[str, str]], header: str) -> str:
    """The pmns(5) text for (name, "SYMBOL:cluster:item") pairs, after a comment HEADER."""
    leaves = dict(pmids)
    children: dict[str, list[str]] = {}
    for name in leaves:
        parts = name.split(".")
        for depth in range(1, len(parts)):
            below = children.setdefault(".".join(parts[:depth]), [])
            if parts[depth] not in below:
                below.append(parts[depth])
    comment = "".join(f" * {line}\n" if line else " *\n" for line in header.splitlines())
    blocks = [f"/*\n{comment} */\n"]
    for parent, below in children.items():
        lines = (f"    {child}\t{leaves.get(f'{parent}.{child}', '')}".rstrip() for child in below)
        blocks.append(f"{parent} {{\n" + "\n".join(lines) + "\n}\n")
    return "\n".join(blocks)


def write(path: Path, text: str) -> None:
    """Replace PATH with TEXT whole, so an agent starting meanwhile never reads half of it."""
    part = path.with_name(f".{path.name}.{os.getpid()}")
    part.write_text(text)
    part.replace(path)
