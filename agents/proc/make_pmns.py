"""Writes pmns/proc, the proc agent's namespace, from the catalogue (python -m this module)."""

from __future__ import annotations

import os
from pathlib import Path

from .catalog import HOT_METRICS, METRICS

PMNS_PATH = Path(__file__).resolve().parents[2] / "pmns" / "proc"


def render() -> str:
    """The namespace in pmns(5) format, one block per non-leaf name, in PMID order."""
    children: dict[str, list[str]] = {}
    pmids = {name: f"PROC:{cluster}:{item}" for name, cluster, item, *_ in (*METRICS, *HOT_METRICS)}
    for name in pmids:
        parts = name.split(".")
        for depth in range(1, len(parts)):
            below = children.setdefault(".".join(parts[:depth]), [])
            if parts[depth] not in below:
                below.append(parts[depth])
    blocks = [
        "/*\n * Namespace of the proc agent (domain PROC, 3 by default).\n"
        " * Generated from agents/proc/catalog.py by agents/proc/make_pmns.py.\n */\n"
    ]
    for parent, below in children.items():
        lines = (f"    {child}\t{pmids.get(f'{parent}.{child}', '')}".rstrip() for child in below)
        blocks.append(f"{parent} {{\n" + "\n".join(lines) + "\n}\n")
    return "\n".join(blocks)


if __name__ == "__main__":
    part = PMNS_PATH.with_name(f".{PMNS_PATH.name}.{os.getpid()}")
    part.write_text(render())
    part.replace(PMNS_PATH)  # whole, so an agent starting meanwhile never reads half of it
