"""Writes pmns/linux, the linux agent's namespace, from the catalog (python -m this module)."""

from __future__ import annotations

import os
from pathlib import Path

from . import catalog

PMNS_PATH = Path(__file__).resolve().parents[2] / "pmns" / "linux"


def render() -> str:
    """The namespace in pmns(5) format, one block per non-leaf name, in catalog order."""
    children: dict[str, list[str]] = {}
    pmids = {m.name: f"LINUX:{m.cluster}:{m.item}" for m in catalog.METRICS}
    for name in pmids:
        parts = name.split(".")
        for depth in range(1, len(parts)):
            below = children.setdefault(".".join(parts[:depth]), [])
            if parts[depth] not in below:
                below.append(parts[depth])
    blocks = [
        "/*\n * Namespace of the linux agent (domain LINUX, 60 by default).\n"
        " * Generated from agents/linux/catalog.py by agents/linux/make_pmns.py.\n */\n"
    ]
    for parent, below in children.items():
        lines = (f"    {child}\t{pmids.get(f'{parent}.{child}', '')}".rstrip() for child in below)
        blocks.append(f"{parent} {{\n" + "\n".join(lines) + "\n}\n")
    return "\n".join(blocks)


if __name__ == "__main__":
    part = PMNS_PATH.with_name(f".{PMNS_PATH.name}.{os.getpid()}")
    part.write_text(render())
    part.replace(PMNS_PATH)  # whole, so an agent starting meanwhile never reads half of it
