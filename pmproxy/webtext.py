"""The text of pmproxy's web API calls: values as pmproxy writes them (JSON or OpenMetrics
text), type and units names, PMIDs and instance domains as parameters give them, names
tested against patterns (exact, glob or regex), and a derived-metric configuration's
lines (webgroup_derived_metrics)."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from purepcp.pmapi.cnumbers import uint32
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.ids import PM_ID_NULL, PM_INDOM_NULL, pmID_build, pmInDom_build
from purepcp.pmapi.types import PMType
from purepcp.pmapi.units import pmUnitsStr

from .webrecords import WebError

__all__ = [
    "TYPE_NAMES",
    "check_match",
    "derived_config_lines",
    "name_matcher",
    "parse_indom",
    "parse_pmid",
    "type_name",
    "units_text",
    "value_text",
]

#: pmwebapi_type_str's names, by PM_TYPE
TYPE_NAMES = (
    "32", "u32", "64", "u64", "float", "double", "string",
    "aggregate", "aggregate_static", "event", "highres_event",
)  # fmt: skip


def value_text(type_: int, atom: Any, json: bool = True) -> str:
    """A value as pmproxy writes it (webgroup_encode_value): integers in decimal, floats
    with %.8g, doubles with %.16g, strings quoted (in JSON).  A NaN or infinity, which
    JSON cannot hold, is null in JSON and NaN/+Inf/-Inf in OpenMetrics text."""
    if type_ in (PMType.PM_TYPE_32, PMType.PM_TYPE_U32, PMType.PM_TYPE_64, PMType.PM_TYPE_U64):
        return str(int(atom))
    if type_ in (PMType.PM_TYPE_FLOAT, PMType.PM_TYPE_DOUBLE):
        v = float(atom)
        if v != v or v in (float("inf"), float("-inf")):
            if json:
                return "null"
            return "NaN" if v != v else ("+Inf" if v > 0 else "-Inf")
        return ("%.8g" if type_ == PMType.PM_TYPE_FLOAT else "%.16g") % v
    if type_ == PMType.PM_TYPE_STRING:
        from json import dumps

        return dumps(atom if isinstance(atom, str) else bytes(atom).decode("utf-8", "replace"))
    return "null"


def type_name(type_: int) -> str:
    if 0 <= type_ < len(TYPE_NAMES):
        return TYPE_NAMES[type_]
    return "unsupported" if type_ == PMType.PM_TYPE_NOSUPPORT else "unknown"


def units_text(desc: Desc) -> str:
    return pmUnitsStr(desc.units) or "none"


def parse_pmid(text: str) -> int:
    """webgroup_parse_pmid: "D.C.I", "0x..." or a decimal number; PM_ID_NULL otherwise."""
    if len(text) > 1 and text[:2].lower() == "0x":
        m = re.match(r"0[xX]([0-9a-fA-F]+)", text)
        return uint32(int(m.group(1), 16)) if m else PM_ID_NULL
    m = re.match(r"\s*(\d+)(?:\.(\d+)\.(\d+))?", text)
    if not m:
        return PM_ID_NULL
    try:
        if m.group(2) is None:
            return uint32(int(m.group(1)))
        return pmID_build(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return PM_ID_NULL


def parse_indom(text: str) -> int:
    """webgroup_parse_indom: "D.S", "0x..." or a decimal number; PM_INDOM_NULL otherwise."""
    if len(text) > 1 and text[:2].lower() == "0x":
        m = re.match(r"0[xX]([0-9a-fA-F]+)", text)
        return uint32(int(m.group(1), 16)) if m else PM_INDOM_NULL
    m = re.match(r"\s*(\d+)(?:\.(\d+))?", text)
    if not m:
        return PM_INDOM_NULL
    try:
        if m.group(2) is None:
            return uint32(int(m.group(1)))
        return pmInDom_build(int(m.group(1)), int(m.group(2)))
    except ValueError:
        return PM_INDOM_NULL


def name_matcher(match: str | None, patterns: Sequence[str]) -> Callable[[str], bool]:
    """A test of names against PATTERNS by MATCH ("exact", "glob" or "regex")."""
    if match in (None, "exact"):
        wanted = set(patterns)
        return wanted.__contains__
    if match == "glob":
        return lambda name: any(fnmatch.fnmatchcase(name, p) for p in patterns)
    if match == "regex":
        try:
            regexes = [re.compile(p) for p in patterns]
        except re.error:
            return lambda name: False
        return lambda name: any(r.search(name) for r in regexes)
    raise WebError(f"{match} - invalid 'match' parameter value")


def check_match(match: str | None) -> None:
    if match not in (None, "exact", "glob", "regex"):
        raise WebError(f"{match} - invalid 'match' parameter value")


def derived_config_lines(config: str) -> Iterator[tuple[int, str, str | None]]:
    """webgroup_derived_metrics' reading of a derived-metric configuration: each
    (line number from 0, name, expression or None when the text ends first).  Names end
    at white space or "="; an expression ends at a newline, "&" or ";"."""
    markers = "\r\n&;"
    line = 0
    p, end = 0, len(config)
    while p < end:
        c = config[p]
        if c.isspace():
            if c == "\n":
                line += 1
            p += 1
            continue
        if c == "#":
            while p < end and config[p] not in markers:
                p += 1
            if p == end:
                return
            line += 1
            p += 1
            continue
        start = p
        while p < end and not config[p].isspace() and config[p] != "=":
            p += 1
        name = config[start:p]
        if p == end:
            yield line, name, None
            return
        while p < end and ((config[p].isspace() and config[p] not in markers) or config[p] == "="):
            p += 1
        start = p
        while p < end and config[p] not in markers:
            p += 1
        if p == end:
            yield line, name, None
            return
        yield line, name, config[start:p]
        line += 1
        p += 1
