"""A record's text as pmdumplog prints it: its size (-s), its time, each metric's values.

pmlogger writes few record layouts, so a layout met before is written through a
template made from it: its text with a printf conversion for each value, all values
formatted by one % operation.  Anything a template cannot hold exactly (events,
strings, aggregates, a NaN that may carry its sign) takes the careful path.
"""

from __future__ import annotations

import bisect
from typing import Any

from purepcp.pmapi.archive.format import PM_LOG_VERS03
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.errors import pmErrStr
from purepcp.pmapi.ids import PM_INDOM_NULL, pmIDStr
from purepcp.pmapi.printvalue import pmPrintValue
from purepcp.pmapi.types import PMType, ValFmt
from purepcp.pmapi.values import Result, Timestamp, ValueBlock, ValueSet

from .events import event_text
from .source import Source

#: pmPrintValue's conversion per numeric type (minimum width 1)
_CONVERSIONS = {
    PMType.PM_TYPE_32: "%d",
    PMType.PM_TYPE_U32: "%d",
    PMType.PM_TYPE_64: "%d",
    PMType.PM_TYPE_U64: "%d",
    PMType.PM_TYPE_FLOAT: "%.8g",
    PMType.PM_TYPE_DOUBLE: "%.16g",
}
#: How a value set's insitu words read as the atoms of its descriptor's type
_INSITU_ATOMS = {
    PMType.PM_TYPE_32: lambda vset: vset.atoms(PMType.PM_TYPE_32),
    PMType.PM_TYPE_U32: lambda vset: vset.values,
    PMType.PM_TYPE_FLOAT: lambda vset: vset.atoms(PMType.PM_TYPE_FLOAT),
}
#: The types whose value blocks the reader decodes into plain numbers
_BLOCK_NUMBERS = frozenset(
    (PMType.PM_TYPE_64, PMType.PM_TYPE_U64, PMType.PM_TYPE_FLOAT, PMType.PM_TYPE_DOUBLE)
)


def _block_atoms(vset: ValueSet) -> Any:
    return vset.values


class RecordText:
    """dump_result for one run: each record's text, through its layout's template when
    it has one, and the templates made so far."""

    def __init__(self, src: Source) -> None:
        self.src = src
        self.sizes = "s" in src.o.flags
        #: when any instance domain changes: records between two such times that share a
        #: layout share a template
        self._indom_changes = sorted(
            {i.stamp for node in src.meta.indoms.walk() for i in node.data}
        )
        self._templates: dict[tuple[Any, ...], tuple[str, tuple[Any, ...]] | bool] = {}

    def text(self, result: Result) -> str:
        """dump_result: the size (-s), the time and each metric's values.

        A record laid out as an earlier one (the same metrics, instances and value
        formats under the same instance names: pmlogger writes few layouts) is written
        through that layout's template, all its values formatted by one % operation.
        """
        vsets = result.vsets
        if vsets:
            stamp = result.timestamp
            key = (
                bisect.bisect_right(self._indom_changes, stamp),
                *[(vset[:4], vset.insts.tobytes()) for vset in vsets],
            )
            template = self._templates.get(key)
            if template is None:
                template = self._templates[key] = self.template(result)
            if template:
                text, readers = template
                values = self._values_of(result, readers)
                out = text % values
                # (C prints a NaN with its sign bit set as "-nan": such records, and those
                # with any NaN, are written carefully)
                if "nan" not in out or ("nan" in text and not any(v != v for v in values)):
                    return out
        return self.careful(result)

    def template(self, result: Result) -> tuple[str, tuple[Any, ...]] | bool:
        """RESULT's text with each value (and the time) left as a printf conversion, and
        per value set how its values are read; False for a layout to write carefully
        (events, strings, aggregates, a value of another type than its descriptor's),
        or one whose template does not give exactly the careful text."""
        parts = []
        if self.sizes:
            parts.append(f"[{self._size(result)} bytes]\n".replace("%", "%%"))
        n = len(result.vsets)
        parts.append("%s" + f" {n} metric{'s' if n > 1 else ''}\n")
        readers: list[Any] = []
        for vset in result.vsets:
            if vset.numval <= 0:
                parts.append(self._vset_text(vset, result.timestamp).replace("%", "%%"))
                readers.append(None)
                continue
            desc = self.src.meta.desc(vset.pmid)
            conversion = _CONVERSIONS.get(desc.type) if desc is not None else None
            if desc is None or conversion is None:
                return False
            if vset.valfmt == ValFmt.PM_VAL_INSITU:
                if desc.type not in _INSITU_ATOMS:
                    return False
                readers.append(_INSITU_ATOMS[desc.type])
            elif vset.vtype == desc.type and desc.type in _BLOCK_NUMBERS:
                readers.append(_block_atoms)
            else:
                return False
            parts.append(self._vset_text(vset, result.timestamp, conversion))
        text, kept = "".join(parts), tuple(readers)
        if text % self._values_of(result, kept) != self.careful(result):
            return False
        return text, kept

    def _values_of(self, result: Result, readers: tuple[Any, ...]) -> tuple[Any, ...]:
        """What a template's conversions take for RESULT: its time, then its values."""
        values: list[Any] = [self.src.clock.stamp(result.timestamp)]
        for vset, read in zip(result.vsets, readers, strict=True):
            if read is not None:
                values.extend(read(vset))
        return tuple(values)

    def careful(self, result: Result) -> str:
        """dump_result value set by value set (the careful path)."""
        parts = []
        if self.sizes:
            parts.append(f"[{self._size(result)} bytes]\n")
        parts.append(self.src.clock.stamp(result.timestamp))
        if not result.vsets:
            parts.append("  <mark>\n")
            return "".join(parts)
        n = len(result.vsets)
        parts.append(f" {n} metric{'s' if n > 1 else ''}\n")
        for vset in result.vsets:
            parts.append(self._vset_text(vset, result.timestamp))
        return "".join(parts)

    def _size(self, result: Result) -> int:
        """do_size: the bytes the record takes in the volume."""
        v3 = self.src.archive.version == PM_LOG_VERS03
        nbyte = (24 if v3 else 20) + 8 * len(result.vsets)
        for vset in result.vsets:
            if vset.numval > 0:
                nbyte += 4 + 8 * vset.numval
                blocks = (v.value for v in vset.vlist if isinstance(v.value, ValueBlock))
                nbyte += sum((block.vlen + 3) // 4 * 4 for block in blocks)
        return nbyte

    def _vset_text(self, vset: ValueSet, stamp: Timestamp, conversion: str = "") -> str:
        """dump_result's lines for one value set; with CONVERSION (a template's), that
        printf conversion in place of each value and every other "%" doubled."""
        src = self.src
        head = f"    {pmIDStr(vset.pmid)} ({src.name_text(vset.pmid)})"
        if conversion:
            head = head.replace("%", "%%")
        if vset.numval == 0:
            return f"{head}: No values returned!\n"
        if vset.numval < 0:
            return f"{head}: {pmErrStr(vset.numval)}\n"
        desc = src.meta.desc(vset.pmid)
        if desc is None:  # as PCP does: guess the commonest cases
            kind = (
                PMType.PM_TYPE_32
                if vset.valfmt == ValFmt.PM_VAL_INSITU
                else PMType.PM_TYPE_AGGREGATE
            )
            desc = Desc(vset.pmid, kind, PM_INDOM_NULL)
        parts = []
        for j, v in enumerate(vset.vlist):
            if desc.type in (PMType.PM_TYPE_EVENT, PMType.PM_TYPE_HIGHRES_EVENT):
                parts.append(event_text(src, vset, v, desc, stamp))
                continue
            if j == 0:
                parts.append(f"{head}:" + ("\n       " if vset.numval > 1 else ""))
            else:
                parts.append("       ")
            if desc.indom != PM_INDOM_NULL:
                inst = f" inst [{src.inst_text(desc.indom, v.inst, stamp)}]"
                parts.append(inst.replace("%", "%%") if conversion else inst)
            value = conversion or pmPrintValue(vset.valfmt, desc.type, v.value, 1)
            parts.append(f" value {value}\n")
        return "".join(parts)
