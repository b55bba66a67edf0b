"""Writes pmns/linux, the linux agent's namespace, from the catalog (python -m this module)."""

from __future__ import annotations

from pathlib import Path

from purepcp.pmda import pmnsfile

from . import catalog

PMNS_PATH = Path(__file__).resolve().parents[2] / "pmns" / "linux"


def render() -> str:
    """The namespace in pmns(5) format, one block per non-leaf name, in catalog order."""
    return pmnsfile.render(
        ((m.name, f"LINUX:{m.cluster}:{m.item}") for m in catalog.METRICS),
        "Namespace of the linux agent (domain LINUX, 60 by default).\n"
        "Generated from agents/linux/catalog.py by agents/linux/make_pmns.py.",
    )


if __name__ == "__main__":
    pmnsfile.write(PMNS_PATH, render())
