"""pmval: report one metric's values, one row per sample, as PCP's pmval(1) reports them.

The metric may carry its own source and instances ("host:metric[inst,...]").  A
counter is reported as a rate over each sampling interval unless -r is given, so
its first fetch only supplies the previous value.  Instances become columns headed
by their names (-i narrows them through the context's profile); event metrics are
dumped record by record.  Live sources (-h, -L, the local pmcd) and archives are
supported: an archive is replayed interpolated, one sample per interval from the
start of the time window (pmval_replay.py), or record by record with -U.
"""

from __future__ import annotations

import contextlib
import socket
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import tzinfo
from typing import Any

from purepcp.pmapi.archive.context import PM_MODE_FORW, PM_MODE_INTERP
from purepcp.pmapi.archive.format import ArchiveError
from purepcp.pmapi.convert import StoreValueError, parse_typed_value, pmExtractValue
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.errors import (
    PM_ERR_CONV,
    PM_ERR_EOL,
    PM_ERR_NOTCONN,
    PM_ERR_TYPE,
    PMError,
    pmErrStr,
)
from purepcp.pmapi.events import EventParam, event_flags_str, unpack_event_records
from purepcp.pmapi.hostname import context_hostname
from purepcp.pmapi.ids import PM_IN_NULL, PM_INDOM_NULL, pmIDStr, pmInDomStr
from purepcp.pmapi.metricspec import MetricSpec, SpecError, parse_metric_spec
from purepcp.pmapi.options import (
    ALIGN,
    ARCHIVE,
    DERIVED,
    FINISH,
    HELP,
    HOST,
    HOSTZONE,
    INTERVAL,
    LOCALPMDA,
    NAMESPACE,
    ORIGIN,
    SAMPLES,
    SPECLOCAL,
    START,
    TIMEZONE,
    VERSION,
    Opt,
    Parsed,
    Tool,
    archive_end,
    load_derived,
)
from purepcp.pmapi.printvalue import pmPrintValue, pmval_real, pmval_width
from purepcp.pmapi.rate import CounterRates, rate_units_str, timestamp_seconds
from purepcp.pmapi.timewindow import (
    NSEC,
    PM_MAX_TIME_T,
    TimeParseError,
    format_stamp,
    new_zone,
    parse_interval_ns,
    parse_time_window,
    pm_ctime,
    tzinfo_for,
)
from purepcp.pmapi.types import PMSem, PMType, ValFmt, pmTypeStr
from purepcp.pmapi.units import pmUnitsStr
from purepcp.pmapi.values import Result, Timestamp, Value, ValueBlock, ValueSet
from purepcp.pmapi.zone import context_zone
from purepcp.tools.stdio import write

PROG = "pmval"

# options pmval has that the shared set does not (or has with another letter)
GUIMODE = Opt("g", "guimode", None, "start under a new time control (not available)")
GUIPORT = Opt("p", "guiport", "N", "use the time control on port N (not available)")
CONTAINER = Opt(None, "container", "NAME", "query the container NAME (not available)")
DELAY = Opt("d", "delay", None, "pause between samples when replaying an archive")
PRECISION = Opt("f", "precision", "N", "fixed-point values with N digits after the point")
INSTANCES = Opt("i", "instances", "INST", "report only these instances (comma-separated)")
RAW = Opt("r", "raw", None, "report counters as they are, not as rates")
NOINTERP = Opt("U", "nointerp", "FILE", "replay archive FILE record by record, no interval")
VERBOSE = Opt("v", "verbose", None, "say more (event metrics with no values)")
WIDTH = Opt("w", "width", "N", "make each column N characters wide")
FILTER = Opt("x", "filter", "VALUE", "store VALUE into the metric before fetching it")
STAMP = Opt("X", "timestamp", None, "timestamps with the date and microseconds (-XX: ns)")

GENERAL = (ALIGN, ARCHIVE, GUIMODE, HOST, NAMESPACE, ORIGIN, GUIPORT, START, SAMPLES, FINISH,
           INTERVAL, TIMEZONE, HOSTZONE, VERSION, HELP, SPECLOCAL, LOCALPMDA, CONTAINER,
           DERIVED)  # fmt: skip
REPORTING = (DELAY, PRECISION, INSTANCES, RAW, NOINTERP, VERBOSE, WIDTH, FILTER, STAMP)
TOOL = Tool(
    PROG, "[options] metricname", [("General options", GENERAL), ("Reporting options", REPORTING)]
)

_EVENT_TYPES = (PMType.PM_TYPE_EVENT, PMType.PM_TYPE_HIGHRES_EVENT)
_REAL_TYPES = (PMType.PM_TYPE_FLOAT, PMType.PM_TYPE_DOUBLE)
_FLAG_NAMES = ((1 << 0, "point"), (1 << 1, "start"), (1 << 2, "end"), (1 << 3, "id"),
               (1 << 4, "parent"))  # fmt: skip
_FLAG_MISSED = 1 << 31
_ARCHIVE_DIR = "/var/log/pcp/pmlogger"


def _signed(inst: int) -> int:
    """An instance id as C's int (PM_IN_NULL is -1)."""
    return inst - (1 << 32) if inst >= 1 << 31 else inst


def _cstr(text: str, width: int, prec: int | None = None) -> str:
    """printf's "%*.*s" of TEXT, counting bytes as C does."""
    raw = text.encode("utf-8", "surrogateescape")
    if prec is not None:
        raw = raw[:prec]
    return " " * max(0, width - len(raw)) + raw.decode("utf-8", "surrogateescape")


class _Exit(Exception):
    """End the run with STATUS (messages were already written)."""

    def __init__(self, status: int) -> None:
        self.status = status


def split_instances(text: str) -> list[str]:
    """An -i argument's instance names: separated by commas or blanks, quotes kept together."""
    names, i, n = [], 0, len(text)
    while True:
        while i < n and text[i] in ", \t\n":
            i += 1
        if i >= n:
            return names
        if text[i] in "\"'":
            quote = text[i]
            end = text.find(quote, i + 1)
            end = n if end < 0 else end
            names.append(text[i + 1 : end])
            i = end + 2  # getinstance also swallows the character after the quote
        else:
            start = i
            while i < n and text[i] not in ", \t\n":
                i += 1
            names.append(text[start:i])
            i += 1


# --- options -----------------------------------------------------------------------------


@dataclass
class Options:
    hosts: list[str] = field(default_factory=list)
    archives: list[str] = field(default_factory=list)
    local: bool = False
    specs: list[str] = field(default_factory=list)
    namespace: str | None = None
    start: str | None = None
    finish: str | None = None
    align: str | None = None
    origin: str | None = None
    interval_ns: int = 0
    samples: int = 0
    samples_given: bool = False
    timezone: str | None = None
    hostzone: bool = False
    delay: bool = False
    fixed: int = -1
    insts: list[str] | None = None  # -i names, None for every instance
    raw: bool = False
    nointerp: bool = False
    verbose: bool = False
    cols: int = 0
    filter: str | None = None
    xflag: int = 0
    unsupported: list[str] = field(default_factory=list)


def _read_options(pairs: list[tuple[Opt, str]], errors: list[str]) -> Options:
    """The options as libpcp and pmval read them, in order; complaints go to ERRORS."""
    o = Options()
    for opt, value in pairs:
        if opt is HOST:
            if o.hosts:
                errors.append(f"{PROG}: too many hosts requested: {value}\n")
            elif o.archives:
                errors.append(f"{PROG}: only one host or archive allowed\n")
            else:
                o.hosts.append(value)
        elif opt in (ARCHIVE, NOINTERP):
            if o.hosts:
                errors.append(f"{PROG}: only one host or archive allowed\n")
            else:
                o.archives.append(value)
            if opt is NOINTERP:
                o.nointerp = True
        elif opt is LOCALPMDA:
            o.local = True
        elif opt is SPECLOCAL:
            o.specs.append(value)
        elif opt is NAMESPACE:
            o.namespace = value
        elif opt is START:
            o.start = value
        elif opt is FINISH:
            o.finish = value
        elif opt is ALIGN:
            o.align = value
        elif opt is ORIGIN:
            o.origin = value
        elif opt is INTERVAL:
            try:
                o.interval_ns = parse_interval_ns(value)
            except TimeParseError as exc:
                errors.append(
                    f"{PROG}: -t argument not in pmParseHighResInterval(3) format:\n{exc.errmsg}\n"
                )
        elif opt is SAMPLES:
            count, ok = _strtol(value)
            o.samples, o.samples_given = count, True
            if not ok or count < 0:
                errors.append(f"{PROG}: -s requires a positive numeric argument\n")
        elif opt is TIMEZONE:
            if o.hostzone:
                errors.append(f"{PROG}: at most one of -Z and -z allowed\n")
            else:
                o.timezone = value
        elif opt is HOSTZONE:
            if o.timezone is not None:
                errors.append(f"{PROG}: at most one of -Z and -z allowed\n")
            else:
                o.hostzone = True
        elif opt is DELAY:
            o.delay = True
        elif opt is PRECISION:
            o.fixed, ok = _strtol(value)
            if not ok or o.fixed < 0:
                errors.append(f"{PROG}: -f requires +ve numeric argument\n")
        elif opt is INSTANCES:
            o.insts = (o.insts or []) + split_instances(value)
        elif opt is RAW:
            o.raw = True
        elif opt is VERBOSE:
            o.verbose = True
        elif opt is WIDTH:
            o.cols, ok = _strtol(value)
            if not ok or o.cols < 1:
                errors.append(f"{PROG}: -w requires +ve numeric argument\n")
        elif opt is FILTER:
            o.filter = value
        elif opt is STAMP:
            o.xflag += 1
        elif opt is DERIVED:
            problem = load_derived(value)
            if problem:
                errors.append(f"{PROG}: pmLoadDerivedConfig failed: {problem}\n")
        elif opt in (GUIMODE, GUIPORT, CONTAINER):
            o.unsupported.append(f"--{opt.long}")
    return o


def _strtol(text: str) -> tuple[int, bool]:
    """strtol(TEXT, &end, 10) as a C int, and whether all of TEXT was read."""
    body = text.lstrip(" \t\n\v\f\r")
    sign = body[:1] if body[:1] in "+-" else ""
    digits = body[len(sign) :]
    count = len(digits) - len(digits.lstrip("0123456789"))
    if count == 0:
        return 0, not text
    n = int(sign + digits[:count])
    n = max(-(1 << 63), min((1 << 63) - 1, n))  # long, then the cast to int wraps
    n = (n + (1 << 31)) % (1 << 32) - (1 << 31)
    return n, count == len(digits)


# --- the reporter ------------------------------------------------------------------------


@dataclass
class Sample:
    vset: ValueSet
    stamp: Timestamp


class Reporter:
    """pmval's state between samples: the metric, its instances, the previous sample."""

    def __init__(self, ctx: Any, o: Options, spec: MetricSpec, zone: tzinfo) -> None:
        self.ctx = ctx
        self.o = o
        self.spec = spec
        self.zone = zone
        self.metric = spec.metric
        self.iall = o.insts is None and not spec.insts
        self.inames: list[str] = list(spec.insts) if spec.insts else list(o.insts or [])
        self.iids: list[int] = []
        self.pairs: list[tuple[int, str]] = []  # (signed id, name), sorted by id
        self.cols = o.cols
        self.style = -1
        self.finish_real = float(PM_MAX_TIME_T)
        self.current_rates: dict[int, float | None] = {}
        self.rates = CounterRates()
        self.prev_insts: list[int] = []
        self.names: dict[int, tuple[str, Desc | None]] = {}  # event parameter metadata
        self.indom_cache: tuple[int, dict[int, str]] | None = None
        self.inst_names: dict[int, str] = {}
        self.hostname = ""
        self.archive = ctx.kind == "archive"
        self.raw_archive = self.archive and o.nointerp  # -U: every record, no interpolation
        self.source = ""  # the archive named, for the header
        self.origin: Timestamp | None = None
        self.finish: Timestamp | None = None  # the window's end, None when open
        self.reporting = False

    # -- setup ---------------------------------------------------------------------------

    # pmval asks an archive for every instance it ever saw (the *Archive calls)
    def _instances(self, indom: int) -> list[tuple[int, str]]:
        ctx = self.ctx
        return ctx.instances_archive(indom) if self.archive else ctx.instances(indom)

    def _instance_id(self, indom: int, name: str) -> int:
        ctx = self.ctx
        return (
            ctx.instance_id_archive(indom, name) if self.archive else ctx.instance_id(indom, name)
        )

    def _instance_name(self, indom: int, inst: int) -> str:
        ctx = self.ctx
        if self.archive:
            return ctx.instance_name_archive(indom, inst)
        return ctx.instance_name(indom, inst)

    def lookup(self) -> None:
        """initapi: the metric's PMID and descriptor."""
        try:
            self.pmid = self.ctx.lookup_name(self.metric)
        except PMError as exc:
            msg = f"{PROG}: pmLookupName({self.metric}): {pmErrStr(exc.code)}\n"
            raise self.die(msg) from None
        try:
            self.desc = self.ctx.lookup_desc(self.pmid)
        except PMError as exc:
            raise self.die(f"{PROG}: pmLookupDesc: {pmErrStr(exc.code)}\n") from None
        if self.desc.indom == PM_INDOM_NULL and self.spec.insts:
            raise self.die(f"{PROG}: {self.metric}: singular metrics do not have instances\n")
        self.events = self.desc.type in _EVENT_TYPES
        self.counter = self.desc.sem == PMSem.PM_SEM_COUNTER and not self.o.raw

    def init_instances(self) -> None:
        """initinsts: the instances to report, sorted by id; -i sets the profile."""
        indom = self.desc.indom
        if indom == PM_INDOM_NULL:
            self.pairs = []
            return
        if not self.iall:
            ids = []
            for name in self.inames:
                try:
                    ids.append(self._instance_id(indom, name))
                except PMError:
                    raise self.die(f"{PROG}: instance {name} not available\n") from None
            self.iids = ids
            try:
                self.ctx.profile.add(indom, ids)
            except PMError as exc:
                raise self.die(f"{PROG}: pmAddProfile: {pmErrStr(exc.code)}\n") from None
            names = self.inames
        else:
            try:
                found = self._instances(indom)
            except PMError as exc:
                raise self.die(
                    f"{PROG}: pmGetInDom({pmInDomStr(indom)}): {pmErrStr(exc.code)}\n"
                ) from None
            self.iids = [inst for inst, _ in found]
            self.inames = names = [name for _, name in found]
        pairs = [(_signed(i), n) for i, n in zip(self.iids, names, strict=True)]
        self.pairs = sorted(pairs, key=lambda pair: pair[0])

    def store_filter(self) -> None:
        """-x: store the value into the metric (every reported instance) first."""
        text = self.o.filter
        if text is None:
            return
        if self.events:
            type_, atom = PMType.PM_TYPE_STRING, text
        else:
            type_ = self.desc.type
            try:
                atom = parse_typed_value(text, type_)
            except StoreValueError as exc:
                kind = f"PM_TYPE_{pmTypeStr(type_)}"
                if exc.code == PM_ERR_TYPE:
                    msg = f'filter "{text}" incompatible with metric type ({kind})'
                elif exc.code == -34:  # -ERANGE
                    msg = f'filter value "{text}" is out of range for metric data type ({kind})'
                else:
                    msg = f'failed to convert value "{text}": {pmErrStr(exc.code)}'
                raise self.die(f"{PROG}: {msg}\n") from None
        insts = list(self.iids) if self.desc.indom != PM_INDOM_NULL else []
        insts = insts or [PM_IN_NULL]
        try:
            vset = ValueSet.of_atoms(self.pmid, type_, [(inst, atom) for inst in insts])
            self.ctx.store(Result(Timestamp(0, 0), (vset,)))
        except PMError as exc:
            raise self.die(f'{PROG}: store value "{text}" failed: {pmErrStr(exc.code)}\n') from None

    def die(self, message: str) -> _Exit:
        sys.stdout.flush()
        sys.stderr.write(message)
        return _Exit(1)

    # -- output --------------------------------------------------------------------------

    def header(self, samples: int, interval_ns: int) -> str:
        """printhdr: what is reported, from where, how often."""
        lines = []
        if not self.events:
            lines.append(f"metric:    {self.metric}")
        if self.archive:
            lines.append(f"archive:   {self.source}")
        lines.append(f"host:      {self.hostname}")
        if self.archive and self.origin is not None:
            lines.append(f"start:     {pm_ctime(self.origin, self.zone)}")
            if self.finish is not None:
                lines.append(f"end:       {pm_ctime(self.finish, self.zone)}")
        if not self.events:
            sems = {
                PMSem.PM_SEM_COUNTER: "cumulative counter",
                PMSem.PM_SEM_INSTANT: "instantaneous value",
                PMSem.PM_SEM_DISCRETE: "discrete instantaneous value",
            }
            sem = sems.get(self.desc.sem, "unknown")
            if self.desc.sem == PMSem.PM_SEM_COUNTER and not self.o.raw:
                sem += " (converting to rate)"
            lines.append(f"semantics: {sem}")
            units = f"units:     {pmUnitsStr(self.desc.units) or 'none'}"
            if self.counter:
                units += f" (converting to {rate_units_str(self.desc.units)})"
            lines.append(units)
        lines.append(f"samples:   {'all' if samples < 0 else samples}")
        if samples > 1 and not self.raw_archive:
            lines.append(f"interval:  {timestamp_seconds(_ns_stamp(interval_ns)):1.2f} sec")
        return "".join(line + "\n" for line in lines)

    def labels(self) -> str:
        """printlabels: the instance names over their columns (full names first if too long)."""
        if self.events:
            return ""
        out = []
        cols = self.cols
        if self.style == -1:
            self.style = 0
            for _, name in self.pairs:
                size = len(name.encode("utf-8", "surrogateescape"))
                if size > cols:
                    self.style = 2
                    break
                if size > cols - 3:
                    self.style = 1
            if self.style == 2:
                out += [f"full label for instance[{i}]: {name}\n"
                        for i, (_, name) in enumerate(self.pairs)]  # fmt: skip
        out.append("\n")
        if self.archive and self.pairs:
            out.append(" " * 12)  # over the timestamps archive replay puts first
        for _, name in self.pairs:
            if not self.counter or self.style != 0 or self.o.fixed != -1:
                out.append(_cstr(name, cols, cols) + " ")
            else:  # rates have decimals: shift the names left over them
                out.append(_cstr(name, cols - 3, cols - 3) + "    ")
        if self.pairs:
            out.append("\n")
        return "".join(out)

    def value_text(self, valfmt: int, value: Value, width: int, where: str) -> str:
        """One value in its column: pmval's own format for floats, else pmPrintValue's."""
        if self.desc.type in _REAL_TYPES:
            try:
                real = pmExtractValue(valfmt, value.value, self.desc.type, PMType.PM_TYPE_DOUBLE)
            except PMError as exc:
                raise self.die(f"{PROG}:{where} pmExtractValue: {pmErrStr(exc.code)}\n") from None
            return pmval_real(real, self.desc.sem, width, self.o.fixed)
        return pmPrintValue(valfmt, self.desc.type, value.value, width)

    def values(self, vset: ValueSet) -> str:
        """printvals: one row of values, "?" where an instance has none."""
        valfmt = vset.valfmt
        vlist = _sorted_vlist(vset)
        cols = self.cols
        if self.desc.indom == PM_INDOM_NULL:
            if len(vlist) == 1:
                return self.value_text(valfmt, vlist[0], cols, "printvals") + "\n"
            return _cstr("?", cols) + "\n"
        by_inst = {_signed(v.inst): (j, v) for j, v in enumerate(vlist)}
        out = []
        for inst, _ in self.pairs:
            found = by_inst.get(inst)
            if found is None:
                out.append(_cstr("?", cols))
            else:
                out.append(self.value_text(valfmt, found[1], cols, f"printvals[{found[0]}]"))
            out.append(" ")
        out.append("\n")
        if self.iall:
            known = {inst for inst, _ in self.pairs}
            for j, v in enumerate(vlist):
                if _signed(v.inst) not in known:
                    text = self.value_text(valfmt, v, 1, f"printvals[{j}]")
                    out.append(
                        f"Warning: value={text}, but instance={_signed(v.inst)} is unknown\n"
                    )
        return "".join(out)

    def rate_values(self, vset: ValueSet, rates: dict[int, float | None]) -> str:
        """printrates: each instance's rate since the previous sample, "?" without one."""
        vlist = _sorted_vlist(vset)
        cols = self.cols
        fixed = self.o.fixed
        counter = PMSem.PM_SEM_COUNTER

        def rate_of(inst: int) -> float | None:
            return rates.get(inst & 0xFFFFFFFF)

        if self.desc.indom == PM_INDOM_NULL:
            rate = rate_of(vlist[0].inst) if len(vlist) == 1 else None
            if rate is None or len(self.prev_insts) != 1:
                return _cstr("?", cols) + "\n"
            return pmval_real(rate, counter, cols, fixed) + "\n"
        out = []
        for inst, _ in self.pairs:
            rate = rate_of(inst)
            out.append(_cstr("?", cols) if rate is None else pmval_real(rate, counter, cols, fixed))
            out.append(" ")
        out.append("\n")
        if self.iall:
            known = {inst for inst, _ in self.pairs}
            for j, v in enumerate(vlist):
                inst = _signed(v.inst)
                if inst in known or j >= len(self.prev_insts) or self.prev_insts[j] != inst:
                    continue
                rate = rate_of(inst)
                text = pmval_real(rate if rate is not None else 0.0, counter, 1, fixed)
                out.append(f"Warning: value={text}, but instance={inst} is unknown\n")
        return "".join(out)

    # -- events --------------------------------------------------------------------------

    def events_text(self, vset: ValueSet) -> str:
        """printevents: every event record of every instance, parameter by parameter."""
        out: list[str] = []
        highres = self.desc.type != PMType.PM_TYPE_EVENT
        for j, v in enumerate(_sorted_vlist(vset)):
            inst = v.inst & 0xFFFFFFFF
            if inst == PM_IN_NULL:
                out.append(f"{self.metric}:")
            else:
                name = self.event_instance_name(inst)
                if name is None:
                    continue
                out.append(f"{self.metric}[{name}]:")
            out.append(self.event_array(vset, j, v, highres))
        return "".join(out)

    def event_instance_name(self, inst: int) -> str | None:
        if self.iids:
            for iid, name in zip(self.iids, self.inames, strict=True):
                if iid == inst:
                    return name
            return None
        if inst not in self.inst_names:
            try:
                self.inst_names[inst] = self._instance_name(self.desc.indom, inst)
            except PMError as exc:
                raise self.die(
                    f"{PROG}: pmNameInDom: {self.metric}[{inst}]: {pmErrStr(exc.code)}\n"
                ) from None
        return self.inst_names[inst]

    def event_array(self, vset: ValueSet, j: int, v: Value, highres: bool) -> str:
        want = PMType.PM_TYPE_HIGHRES_EVENT if highres else PMType.PM_TYPE_EVENT
        try:
            if vset.valfmt == ValFmt.PM_VAL_INSITU:
                raise PMError(PM_ERR_CONV)
            if vset.vtype != want:
                raise PMError(PM_ERR_TYPE)
            payload = vset.values[j]
            records = unpack_event_records(bytes(payload), highres)
        except PMError as exc:
            return f" pmUnpackEventRecords: {pmErrStr(exc.code)}\n"
        out = [f" {len(records)} event records\n"]
        for r, record in enumerate(records):
            digits = 9 if highres else 3
            out.append("  " + format_stamp(record.stamp, self.zone, digits=digits))
            out.append(f" --- event record [{r}]")
            if not record.params:
                out.append(" ---\n    ==> No parameters\n")
                continue
            for p, param in enumerate(record.params):
                out.append(self.event_param(param, p, record.flags))
        return "".join(out)

    def event_param(self, param: EventParam, p: int, flags: int) -> str:
        """myvaluesetdump: one parameter of one record."""
        if param.kind == "flags":
            return f" flags 0x{flags:x} ({event_flags_str(flags)}) ---\n"
        if param.kind == "missed":
            return f"    ==> {param.value} missed event records\n"
        meta = self.param_meta(param.pmid)  # type: ignore[arg-type]
        if isinstance(meta, str):
            return meta
        name, desc = meta
        out = " ---\n" if p == 0 else ""
        out += f"    {name}"
        if desc.indom != PM_INDOM_NULL:
            iname = self.param_instance(desc.indom, PM_IN_NULL)
            out += f"[{_signed(PM_IN_NULL)}]" if iname is None else f'["{iname}"]'
        out += " "
        if desc.type in (PMType.PM_TYPE_AGGREGATE, PMType.PM_TYPE_AGGREGATE_STATIC):
            vbuf = param.value.vbuf if isinstance(param.value, ValueBlock) else b""
            return out + f"[{vbuf.hex()}]\n"
        return out + pmPrintValue(param.valfmt, desc.type, param.value, 1) + "\n"

    def param_meta(self, pmid: int) -> tuple[str, Desc] | str:
        if pmid in self.names:
            return self.names[pmid]  # type: ignore[return-value]
        try:
            name = self.ctx.name_all(pmid)[0]
        except PMError as exc:
            return f"\t{pmIDStr(pmid)}: pmNameID: {pmErrStr(exc.code)}\n"
        try:
            desc = self.ctx.lookup_desc(pmid)
        except PMError as exc:
            return f"\t{name}: pmLookupDesc: {pmErrStr(exc.code)}\n"
        self.names[pmid] = (name, desc)
        return name, desc

    def param_instance(self, indom: int, inst: int) -> str | None:
        if self.indom_cache is None or self.indom_cache[0] != indom:
            try:
                found = dict(self._instances(indom))
            except PMError:
                found = {}
            self.indom_cache = (indom, found)
        return self.indom_cache[1].get(inst)

    # -- fetching ------------------------------------------------------------------------

    def stamp_text(self, stamp: Timestamp) -> str:
        """mytimestamp: a record's time of day, as archive replay prefixes each line."""
        return format_stamp(stamp, self.zone, digits=3)

    def _next_record(self) -> tuple[ValueSet, Timestamp] | int:
        """-U: the next record holding the metric; -1 after reporting a <mark>."""
        while True:
            result = self.ctx.fetch_archive()
            if not result.vsets:
                write(f"{self.stamp_text(result.timestamp)}  Archive logging suspended\n")
                self.reporting = False
                return -1
            for vset in result.vsets:
                if vset.pmid == self.pmid:
                    return vset, result.timestamp

    def fetch(self) -> Sample | int:
        """getvals: the next sample, -1 if it has no values (reported), -2 past -T."""
        call = "pmFetchArchive" if self.raw_archive else "pmFetch"
        try:
            if self.raw_archive:
                got = self._next_record()
                if got == -1:
                    return -1
                vset, stamp = got  # type: ignore[misc]
            else:
                fetched = self.ctx.fetch([self.pmid])
                vset, stamp = fetched.result.vsets[0], fetched.timestamp
        except PMError as exc:
            if exc.code == PM_ERR_EOL:
                raise _Exit(0) from None
            # (PCP's words; ours add where the archive is damaged)
            why = str(exc) if isinstance(exc, ArchiveError) else pmErrStr(exc.code)
            raise self.die(f"\n{PROG}: {call}: {why}\n") from None
        if timestamp_seconds(stamp) > self.finish_real:
            return -2
        self.note_rates(vset, stamp)
        if vset.numval == 0:
            if self.archive:
                write(f"{self.stamp_text(stamp)}  ")
            if not self.events:
                write("No values available\n")
            elif self.o.verbose:
                write(f"{self.metric}: No values available\n")
            return -1
        if vset.numval < 0:
            if self.events and vset.numval == PM_ERR_NOTCONN:
                raise _Exit(0)
            sys.stdout.flush()
            sys.stderr.write(f"\n{PROG}: {call}: {pmErrStr(vset.numval)}\n")
            sys.stderr.flush()
            return -1
        return Sample(vset, stamp)

    def note_rates(self, vset: ValueSet, stamp: Timestamp) -> None:
        """Hand every counter sample to the shared rate helper (a failed one resets it)."""
        if not self.counter or self.events:
            return
        try:
            self.current_rates = self.rates.update_set(self.desc, vset, stamp)
        except PMError as exc:
            raise self.die(f"{PROG}:printrate pmExtractValue: {pmErrStr(exc.code)}\n") from None

    def instances_changed(self, vset: ValueSet) -> bool:
        """chkinsts: does the sample name an instance we have no name for?"""
        if self.desc.indom == PM_INDOM_NULL or self.events:
            return False
        known = {inst for inst, _ in self.pairs}
        return any(_signed(inst) not in known for inst in vset.insts)

    def report(self, sample: Sample) -> str:
        if self.events:
            return self.events_text(sample.vset)
        if not self.counter:
            return self.values(sample.vset)
        return self.rate_values(sample.vset, self.current_rates)


def _sorted_vlist(vset: ValueSet) -> list[Value]:
    return sorted(vset.vlist, key=lambda v: _signed(v.inst))


def _ns_stamp(ns: int) -> Timestamp:
    return Timestamp(*divmod(ns, NSEC))


# --- main -------------------------------------------------------------------------------


def _usage_error(messages: list[str]) -> _Exit:
    sys.stdout.flush()
    sys.stderr.write("".join(messages) + TOOL.usage())
    return _Exit(1)


def _runtime_error(messages: list[str]) -> _Exit:
    sys.stdout.flush()
    sys.stderr.write("".join(messages))
    return _Exit(1)


def main(argv: Sequence[str] | None = None) -> int:
    return TOOL.main(_run_to_end, argv)


def _run_to_end(argv: list[str]) -> int:
    try:
        return run(argv)
    except _Exit as done:
        return done.status


def run(argv: list[str]) -> int:
    parsed = TOOL.parse(argv)  # unknown options, -?, -V
    pairs, operands = parsed.pairs, parsed.operands
    errors: list[str] = []
    o = _read_options(pairs, errors)
    if not errors and not operands:
        errors.append(f"{PROG}: error - no metricname specified\n")
    elif not errors and len(operands) > 1:
        errors.append(f"{PROG}: error - too many arguments\n")
    if errors:
        raise _usage_error(errors)

    try:
        spec = parse_metric_spec(operands[0])
    except SpecError as exc:
        errors.append(exc.errmsg)
        spec = MetricSpec(operands[0])
    if spec.source is not None:
        if spec.kind == "archive":
            if o.hosts:
                errors.append(f"{PROG}: only one host or archive allowed\n")
            elif not o.archives:
                o.archives.append(spec.source)
        elif spec.kind == "local":
            o.local = True
        elif o.archives:
            errors.append(f"{PROG}: only one host or archive allowed\n")
        elif not o.hosts:
            o.hosts.append(spec.source)
    if not o.hosts and not o.archives and not o.local and o.origin is not None:
        o.archives.append(f"{_ARCHIVE_DIR}/{socket.gethostname()}")
    archive = bool(o.archives) and not o.local
    if not archive:
        if o.start is not None or o.align is not None or o.origin is not None:
            errors.append(f"{PROG}: time window options are supported for archives only\n")
        if o.hostzone and o.local:
            errors.append(f"{PROG}: use of timezone from metric source requires a source\n")
        if o.nointerp:
            errors.append(f"{PROG}: uninterpolated mode can only be used with archives")
        if o.delay:
            errors.append(f"{PROG}: delay can only be used with archives\n")
    if errors:
        raise _usage_error(errors)
    if o.unsupported:
        raise _runtime_error([f"{PROG}: {', '.join(o.unsupported)}: not available in purepcp\n"])

    # the source: a host named by the spec wins over -h
    values: dict[str, str | bool] = {}
    if o.local:
        values["local-PMDA"] = True
    elif o.archives:
        values["archive"] = spec.source if spec.kind == "archive" and spec.source else o.archives[0]
    elif spec.kind == "host" and spec.source:
        values["host"] = spec.source
    elif o.hosts:
        values["host"] = o.hosts[0]
    if o.namespace is not None:
        values["namespace"] = o.namespace
    ctx = TOOL.context(Parsed(values=values, specs=o.specs))
    try:
        return report(ctx, o, spec)
    finally:
        with contextlib.suppress(PMError, OSError):
            ctx.close()


def report(ctx: Any, o: Options, spec: MetricSpec) -> int:
    reporter = Reporter(ctx, o, spec, tzinfo_for(None))
    reporter.hostname = context_hostname(ctx)

    # pmGetContextOptions: the reporting zone, then the time window
    if o.hostzone:
        try:
            reporter.zone = context_zone(ctx)
        except PMError as exc:
            raise _runtime_error(
                [f"{PROG}: Cannot set context timezone: {pmErrStr(exc.code)}\n"]
            ) from None
        where = " from archive" if reporter.archive else ""
        write(f'Note: timezone set to local timezone of host "{reporter.hostname}"{where}\n\n')
    elif o.timezone is not None:
        reporter.zone = new_zone(o.timezone)
        write(f'Note: timezone set to "TZ={o.timezone}"\n\n')
    now = time.time_ns()
    try:
        if reporter.archive:
            archive = ctx.archive
            window = parse_time_window(
                o.start, o.finish, o.align, o.origin, archive.label.start,
                archive_end(PROG, o.archives[0], archive), tz=reporter.zone,
            )  # fmt: skip
        else:
            window = parse_time_window(
                None, o.finish, None, None, (now // NSEC, now % NSEC), None, tz=reporter.zone
            )
    except TimeParseError as exc:
        raise _runtime_error([f"{PROG}: invalid time window.\n{exc.errmsg}\n"]) from None
    samples = o.samples if o.samples_given else -1
    interval_ns = o.interval_ns or NSEC
    reporter.finish_real = timestamp_seconds(_ns_stamp(window.end_ns))

    reporter.lookup()
    reporter.init_instances()
    if ctx.kind == "host":
        reporter.store_filter()
    if reporter.archive:
        reporter.source = o.archives[0] if o.archives else ""
        reporter.origin = _ns_stamp(window.origin_ns)
        if not window.open_ended:
            reporter.finish = _ns_stamp(window.end_ns)
        if reporter.events:
            reporter.raw_archive = True  # event records are never interpolated
        if reporter.raw_archive:
            ctx.set_mode(PM_MODE_FORW, reporter.origin)
        else:
            ctx.set_mode(PM_MODE_INTERP, reporter.origin, interval_ns)

    if samples < 0 and not window.open_ended and not reporter.raw_archive:
        finish = timestamp_seconds(_ns_stamp(window.end_ns))
        origin = timestamp_seconds(_ns_stamp(window.origin_ns))
        delta = timestamp_seconds(_ns_stamp(interval_ns))
        span = (finish - origin) / delta
        samples = 0 if span < 0 else int(span) + 1

    if o.timezone is None and not o.hostzone and not reporter.events:
        write("\n")
    if reporter.cols <= 0:
        try:
            reporter.cols = pmval_width(reporter.desc.type)
        except (KeyError, ValueError):
            raise reporter.die(
                f"{PROG}: unknown performance metric value type {pmTypeStr(reporter.desc.type)}\n"
            ) from None
    cols, fixed = reporter.cols, o.fixed
    if (fixed == 0 and fixed > cols) or (fixed > 0 and fixed > cols - 2):
        raise reporter.die(f"{PROG}: -f {fixed} too large for column width {cols}\n")
    write(reporter.header(samples, interval_ns))
    if reporter.archive and not reporter.raw_archive and samples >= 0 and not o.delay:
        from purepcp.tools.pmval_replay import replay_loop

        replay_loop(reporter, samples)  # the same rows, the fetches answered ahead
    else:
        loop(reporter, samples, interval_ns / NSEC)
    return 0


def loop(rep: Reporter, samples: int, interval: float) -> None:
    """pmval's main loop: a first sample (the previous value for a rate), then one per
    interval; a failed sample starts over from a first one."""
    forever = samples < 0
    have_prev = False
    no_values = False
    indom = rep.desc.indom != PM_INDOM_NULL
    stamped = rep.archive  # archive replay puts each record's time before its values
    pause = not rep.archive or rep.o.delay
    while forever or samples > 0:
        samples -= 1
        if not have_prev:
            got = rep.fetch()
            if isinstance(got, Sample):
                have_prev = True
                if indom:
                    write(rep.labels())
                rep.prev_insts = [_signed(v.inst) for v in _sorted_vlist(got.vset)]
                if rep.events or not rep.counter:
                    if stamped:
                        write(rep.stamp_text(got.stamp) + ("  " if rep.events else ""))
                    write(rep.report(got))
                    rep.reporting = True
                    continue
                if no_values or rep.reporting:
                    if stamped:
                        write(rep.stamp_text(got.stamp) + "  ")
                    write("No values available\n")
                no_values = False
            elif got == -2:
                break
            else:
                no_values = True
        if pause:
            time.sleep(interval)
        if not have_prev:
            continue
        got = rep.fetch()
        if got == -2:
            break
        if not isinstance(got, Sample):
            have_prev = False
            continue
        if rep.iall and rep.instances_changed(got.vset):
            rep.init_instances()
            write(rep.labels())
        if stamped:
            write(rep.stamp_text(got.stamp) + ("  " if rep.events else ""))
        write(rep.report(got))
        rep.reporting = True
        rep.prev_insts = [_signed(v.inst) for v in _sorted_vlist(got.vset)]


if __name__ == "__main__":
    raise SystemExit(main())
