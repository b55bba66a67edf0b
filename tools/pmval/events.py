"""An event metric's sample as pmval dumps it: every instance's records, each record's
time, flags and parameters (printevents and its helpers), names looked up once."""

from __future__ import annotations

from datetime import tzinfo

from purepcp.pmapi.cnumbers import uint32
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.errors import PM_ERR_CONV, PM_ERR_TYPE, PMError, pmErrStr
from purepcp.pmapi.events import EventParam, event_flags_str, unpack_event_records
from purepcp.pmapi.ids import PM_IN_NULL, PM_INDOM_NULL, pmIDStr
from purepcp.pmapi.printvalue import pmPrintValue
from purepcp.pmapi.timewindow import format_stamp
from purepcp.pmapi.types import PMType, ValFmt
from purepcp.pmapi.values import ValueBlock, ValueSet

from .fatal import PROG, die
from .metric import Metric, sorted_values

_AGGREGATES = (PMType.PM_TYPE_AGGREGATE, PMType.PM_TYPE_AGGREGATE_STATIC)


class EventDump:
    """Dumps METRIC's samples, record times in ZONE."""

    def __init__(self, metric: Metric, zone: tzinfo) -> None:
        self.metric = metric
        self.zone = zone
        self.highres = metric.desc.type != PMType.PM_TYPE_EVENT
        self.params: dict[int, tuple[str, Desc]] = {}  # parameter metrics' names, descriptors
        self.domain: tuple[int, dict[int, str]] | None = None  # the last domain asked about
        self.inst_names: dict[int, str] = {}

    def text(self, vset: ValueSet) -> str:
        """printevents: every event record of every instance, parameter by parameter."""
        out: list[str] = []
        name = self.metric.name
        for j, (_, v) in enumerate(sorted_values(vset)):
            inst = uint32(v.inst)
            if inst == PM_IN_NULL:
                out.append(f"{name}:")
            else:
                iname = self._instance_name(inst)
                if iname is None:
                    continue
                out.append(f"{name}[{iname}]:")
            out.append(self._records(vset, j))
        return "".join(out)

    def _instance_name(self, inst: int) -> str | None:
        m = self.metric
        if m.iids:
            for iid, name in zip(m.iids, m.inames, strict=True):
                if iid == inst:
                    return name
            return None
        if inst not in self.inst_names:
            try:
                self.inst_names[inst] = m.instance_name(m.desc.indom, inst)
            except PMError as exc:
                raise die(
                    f"{PROG}: pmNameInDom: {m.name}[{inst}]: {pmErrStr(exc.code)}\n"
                ) from None
        return self.inst_names[inst]

    def _records(self, vset: ValueSet, j: int) -> str:
        """The records of VSET's J-th value (an event array)."""
        want = PMType.PM_TYPE_HIGHRES_EVENT if self.highres else PMType.PM_TYPE_EVENT
        try:
            if vset.valfmt == ValFmt.PM_VAL_INSITU:
                raise PMError(PM_ERR_CONV)
            if vset.vtype != want:
                raise PMError(PM_ERR_TYPE)
            records = unpack_event_records(bytes(vset.values[j]), self.highres)
        except PMError as exc:
            return f" pmUnpackEventRecords: {pmErrStr(exc.code)}\n"
        out = [f" {len(records)} event records\n"]
        digits = 9 if self.highres else 3
        for r, record in enumerate(records):
            out.append("  " + format_stamp(record.stamp, self.zone, digits=digits))
            out.append(f" --- event record [{r}]")
            if not record.params:
                out.append(" ---\n    ==> No parameters\n")
                continue
            for p, param in enumerate(record.params):
                out.append(self._param(param, p, record.flags))
        return "".join(out)

    def _param(self, param: EventParam, p: int, flags: int) -> str:
        """myvaluesetdump: one parameter of one record."""
        if param.kind == "flags":
            return f" flags 0x{flags:x} ({event_flags_str(flags)}) ---\n"
        if param.kind == "missed":
            return f"    ==> {param.value} missed event records\n"
        assert param.pmid is not None
        meta = self._param_metric(param.pmid)
        if isinstance(meta, str):
            return meta
        name, desc = meta
        out = " ---\n" if p == 0 else ""
        out += f"    {name}"
        if desc.indom != PM_INDOM_NULL:
            iname = self._param_instance(desc.indom, PM_IN_NULL)
            out += "[-1]" if iname is None else f'["{iname}"]'  # (PM_IN_NULL as C's int)
        out += " "
        if desc.type in _AGGREGATES:
            vbuf = param.value.vbuf if isinstance(param.value, ValueBlock) else b""
            return out + f"[{vbuf.hex()}]\n"
        return out + pmPrintValue(param.valfmt, desc.type, param.value, 1) + "\n"

    def _param_metric(self, pmid: int) -> tuple[str, Desc] | str:
        """A parameter's metric name and descriptor, or the line saying why not."""
        if pmid in self.params:
            return self.params[pmid]
        ctx = self.metric.ctx
        try:
            name = ctx.name_all(pmid)[0]
        except PMError as exc:
            return f"\t{pmIDStr(pmid)}: pmNameID: {pmErrStr(exc.code)}\n"
        try:
            desc = ctx.lookup_desc(pmid)
        except PMError as exc:
            return f"\t{name}: pmLookupDesc: {pmErrStr(exc.code)}\n"
        self.params[pmid] = (name, desc)
        return name, desc

    def _param_instance(self, indom: int, inst: int) -> str | None:
        if self.domain is None or self.domain[0] != indom:
            try:
                found = dict(self.metric.instances(indom))
            except PMError:
                found = {}
            self.domain = (indom, found)
        return self.domain[1].get(inst)
