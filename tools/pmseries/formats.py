"""The things pmseries prints and the text of their parts: instances (in pmseries'
order), values, descriptor fields and label sets."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from purepcp.pmapi.cnumbers import atol, int32, uint32

#: pmseries' phrases for the descriptor's type words (compared ignoring case)
TYPE_PHRASES = {
    "32": "32-bit int",
    "64": "64-bit int",
    "u32": "32-bit unsigned int",
    "u64": "64-bit unsigned int",
    "float": "float",
    "double": "double",
    "string": "string",
    "aggregate": "aggregate",
    "aggregate_static": "aggregate static",
    "event": "event record array",
    "highres_event": "highres event record array",
    "no_support": "Not Supported",
}
UNKNOWN = "???"
NULL_ID = 0xFFFFFFFF


@dataclass
class Inst:
    """An instance of the series being reported, and its labels once read."""

    instid: str
    name: str
    series: str
    labels: list[tuple[str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class Value:
    """One value as on_series_value sees it: INSTANCE is the instance's series id, or
    the metric's own for a metric without instances."""

    instance: str
    timestamp: str
    ns: int
    value: str


def compare_insts(a: Inst, b: Inst) -> int:
    """series_instance_compare: numbers as numbers (their difference as a C int), then
    names byte by byte."""
    if a.instid != b.instid:
        return int32(atol(a.instid) - atol(b.instid))
    return (a.name > b.name) - (a.name < b.name)


def sorted_labels(labels: list[tuple[str, str]]) -> str:
    """Labels as pmseries prints them: by name, `{"name":value,...}`."""
    ordered = sorted(labels, key=lambda nv: nv[0].encode("utf-8", "surrogateescape"))
    return "{" + ",".join(f'"{n}":{v}' for n, v in ordered) + "}"


def pmid_parts(text: str) -> tuple[str, int]:
    """A descriptor's pmid field: its text as printed and its number (PM_ID_NULL when
    it is not domain.cluster.item)."""
    m = re.match(r"\s*(\d+)\.\s*(\d+)\.\s*(\d+)", text)
    if m:
        d, c, i = (uint32(int(g)) for g in m.groups())
        return text, (d & 0x1FF) << 22 | (c & 0xFFF) << 10 | (i & 0x3FF)
    return ("PM_ID_NULL" if text == "none" else text), NULL_ID


def indom_parts(text: str) -> tuple[str, int]:
    """A descriptor's indom field: its text as printed and its number."""
    m = re.match(r"\s*(\d+)\.\s*(\d+)", text)
    if m:
        d, s = (uint32(int(g)) for g in m.groups())
        return text, (d & 0x1FF) << 22 | (s & 0x3FFFFF)
    return ("PM_INDOM_NULL" if text == "none" else text), NULL_ID
