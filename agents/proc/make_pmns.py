"""Writes pmns/proc, the proc agent's namespace, from the catalogue (python -m this module)."""

from __future__ import annotations

from pathlib import Path

from purepcp.pmda import pmnsfile

from .catalog import HOT_METRICS, METRICS

PMNS_PATH = Path(__file__).resolve().parents[2] / "pmns" / "proc"


def render() -> str:
    """The namespace in pmns(5) format, one block per non-leaf name, in pmdaproc's order."""
    return pmnsfile.render(
        ((name, f"PROC:{cluster}:{item}") for name, cluster, item, *_ in (*METRICS, *HOT_METRICS)),
        "Namespace of the proc agent (domain PROC, 3 by default).\n"
        "Generated from agents/proc/catalog.py by agents/proc/make_pmns.py.",
    )


if __name__ == "__main__":
    pmnsfile.write(PMNS_PATH, render())
