"""Metric and instance-domain identifiers, with PCP 6's bit layouts and text forms.

A pmID packs (flag:1, domain:9, cluster:12, item:10) and a pmInDom packs
(flag:1, domain:9, serial:22) into one unsigned 32-bit word, most significant
field first.  Identifiers stay plain ints everywhere (they travel through hot
paths); these functions build, split and print them as libpcp does.
"""

from __future__ import annotations

import re

PM_ID_NULL = 0xFFFFFFFF
PM_INDOM_NULL = 0xFFFFFFFF
PM_IN_NULL = 0xFFFFFFFF

#: Reserved domain for dynamic-subtree roots and derived metrics.
DYNAMIC_PMID = 511

_DOMAIN_MAX = (1 << 9) - 1
_CLUSTER_MAX = (1 << 12) - 1
_ITEM_MAX = (1 << 10) - 1
_SERIAL_MAX = (1 << 22) - 1


def _check(name: str, value: int, top: int) -> int:
    if not 0 <= value <= top:
        raise ValueError(f"{name} {value} out of range 0..{top}")
    return value


def pmID_build(domain: int, cluster: int, item: int) -> int:
    """The pmID for DOMAIN.CLUSTER.ITEM (flag bit clear)."""
    return (
        _check("domain", domain, _DOMAIN_MAX) << 22
        | _check("cluster", cluster, _CLUSTER_MAX) << 10
        | _check("item", item, _ITEM_MAX)
    )


def pmID_domain(pmid: int) -> int:
    return (pmid >> 22) & _DOMAIN_MAX


def pmID_cluster(pmid: int) -> int:
    return (pmid >> 10) & _CLUSTER_MAX


def pmID_item(pmid: int) -> int:
    return pmid & _ITEM_MAX


def pmInDom_build(domain: int, serial: int) -> int:
    """The pmInDom for DOMAIN.SERIAL (flag bit clear)."""
    return _check("domain", domain, _DOMAIN_MAX) << 22 | _check("serial", serial, _SERIAL_MAX)


def pmInDom_domain(indom: int) -> int:
    return (indom >> 22) & _DOMAIN_MAX


def pmInDom_serial(indom: int) -> int:
    return indom & _SERIAL_MAX


def dynamic_root(domain: int) -> int:
    """The PMID PCP gives a dynamic subtree root `name DOMAIN:*:*`."""
    return pmID_build(DYNAMIC_PMID, domain, 0)


def is_dynamic_root(pmid: int) -> bool:
    return pmID_domain(pmid) == DYNAMIC_PMID and pmID_item(pmid) == 0


def pmIDStr(pmid: int) -> str:
    """`60.0.1`, `PM_ID_NULL`, or `60.*.*` for a dynamic subtree root, as libpcp prints."""
    if pmid == PM_ID_NULL:
        return "PM_ID_NULL"
    if is_dynamic_root(pmid):
        return f"{pmID_cluster(pmid)}.*.*"
    return f"{pmID_domain(pmid)}.{pmID_cluster(pmid)}.{pmID_item(pmid)}"


def pmInDomStr(indom: int) -> str:
    """`60.2` or `PM_INDOM_NULL`, as libpcp prints."""
    if indom == PM_INDOM_NULL:
        return "PM_INDOM_NULL"
    return f"{pmInDom_domain(indom)}.{pmInDom_serial(indom)}"


_PMID_RE = re.compile(r"(\d+)\.(\d+)\.(\d+)")
_INDOM_RE = re.compile(r"(\d+)\.(\d+)")


def parse_pmid(text: str) -> int:
    """Parse `D.C.I` (or `PM_ID_NULL`); ValueError naming the text otherwise."""
    if text == "PM_ID_NULL":
        return PM_ID_NULL
    m = _PMID_RE.fullmatch(text.strip())
    if m is None:
        raise ValueError(f"not a PMID (expected domain.cluster.item): {text!r}")
    return pmID_build(*(int(g) for g in m.groups()))


def parse_indom(text: str) -> int:
    """Parse `D.S` (or `PM_INDOM_NULL`); ValueError naming the text otherwise."""
    if text == "PM_INDOM_NULL":
        return PM_INDOM_NULL
    m = _INDOM_RE.fullmatch(text.strip())
    if m is None:
        raise ValueError(f"not an instance domain (expected domain.serial): {text!r}")
    return pmInDom_build(*(int(g) for g in m.groups()))
