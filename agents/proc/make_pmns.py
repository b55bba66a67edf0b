"""Writes pmns/proc, the proc agent's namespace, from the catalogue (python -m this module)."""

from __future__ import annotations

from pathlib import Path

from purepcp.pmda import pmnsfile

from .catalog import ACCT_METRICS, CGROUP_METRICS, HOT_METRICS, METRICS

PMNS_PATH = Path(__file__).resolve().parents[2] / "pmns" / "proc"


def render() -> str:
    """The namespace in pmns(5) format, one block per non-leaf name, in pmdaproc's order
    (cgroup first and acct last, as in its root_proc)."""
    table = (*CGROUP_METRICS, *METRICS, *HOT_METRICS, *ACCT_METRICS)
    return pmnsfile.render(
        ((name, f"PROC:{cluster}:{item}") for name, cluster, item, *_ in table),
        "Namespace of the proc agent (domain PROC, 3 by default).\n"
        "Generated from agents/proc/catalog.py by agents/proc/make_pmns.py.",
    )


if __name__ == "__main__":
    pmnsfile.write(PMNS_PATH, render())
