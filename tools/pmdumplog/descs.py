"""pmdumplog -d: every metric descriptor, in the order libpcp's hash table holds them."""

from __future__ import annotations

from purepcp.pmapi.desc import Desc
from purepcp.pmapi.ids import pmIDStr

from .source import Source


def descs_text(src: Source) -> str:
    """dumpDesc: every descriptor in hash order, with its names."""
    parts = ["\nDescriptions for Metrics in the Log ...\n"]
    for node in src.meta.descs.walk():
        desc: Desc = node.data
        names = src.names(desc.pmid)
        parts.append(f"PMID: {pmIDStr(desc.pmid)} ({' or '.join(names) or '<noname>'})\n")
        parts.append(desc.describe() + "\n")
    return "".join(parts)
