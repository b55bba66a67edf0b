"""pmdumplog -I and -i: instance domains as written on disk, and as libpcp holds them."""

from __future__ import annotations

from purepcp.pmapi.archive.format import InDomRecord
from purepcp.pmapi.cnumbers import int32
from purepcp.pmapi.ids import pmInDomStr

from .source import Source


def disk_indoms_text(src: Source) -> str:
    """dumpDiskInDom: every instance domain record as written, deltas as add/del."""
    parts = ["\nInstance Domains on-disk ...\n"]
    for _, record in src.archive.meta:
        if not isinstance(record, InDomRecord):
            continue
        delta = " delta" if record.delta else ""
        head = f"{src.clock.stamp(record.stamp)} InDom: {pmInDomStr(record.indom)}{delta}"
        parts.append(f"{head} {len(record.insts)} instances\n")
        for inst, name in zip(record.insts, record.names, strict=True):
            if not record.delta:
                parts.append(f'   {int32(inst)} or "{name}"\n')
            elif name is None:
                parts.append(f"   del {int32(inst)}\n")
            else:
                parts.append(f'   add {int32(inst)} or "{name}"\n')
    return "".join(parts)


def indoms_text(src: Source) -> str:
    """dumpInDom: instance domains in hash order, each oldest first, full and sorted."""
    parts = ["\nInstance Domains in the Log ...\n"]
    for node in src.meta.indoms.walk():
        parts.append(f"InDom: {pmInDomStr(node.key)}\n")
        for item in reversed(node.data):
            parts.append(f"{src.clock.stamp(item.stamp)} {len(item.insts)} instances\n")
            for inst, name in zip(item.insts, item.names, strict=True):
                parts.append(f'   {inst} or "{"(null)" if name is None else name}"\n')
    return "".join(parts)
