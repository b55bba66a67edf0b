"""How dbpmda prints what agents answer: values, results, instances, labels, help, status.

Every format here is libpcp's or dbpmda's own (pmPrintValue, __pmPrintResult,
__pmDumpResult, printindom, __pmDumpProfile, dohelp, dostatus), so output can be
compared line for line with PCP's dbpmda.
"""

from __future__ import annotations

import math
import struct
import time
from collections.abc import Callable, Sequence
from typing import Any

from purepcp.pmapi.cnumbers import int32, uint32
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.errors import pmErrStr
from purepcp.pmapi.ids import PM_IN_NULL, PM_INDOM_NULL, pmIDStr
from purepcp.pmapi.labels import LabelSet
from purepcp.pmapi.types import PMType, ValFmt
from purepcp.pmapi.values import ARRAY_CODES, Result, ValueBlock, ValueSet, block_payload

T = PMType
_FAIL = object()


def desc_text(desc: Desc) -> str:
    """pmPrintDesc: the descriptor's two lines (one for a metric that is not supported)."""
    return desc.describe() + "\n"


# -- values -------------------------------------------------------------------------------


def _host_bytes(block: ValueBlock) -> bytes:
    """The block's payload as dbpmda holds it after decoding: numbers in host order."""
    code = ARRAY_CODES.get(block.vtype)
    if code is not None and len(block.vbuf) == struct.calcsize(code):
        return struct.pack("=" + code, *struct.unpack(">" + code, block.vbuf))
    return block.vbuf


def _extract(valfmt: int, value: int | ValueBlock, itype: int) -> Any:
    """pmExtractValue with the output type equal to the input type; _FAIL if it refuses."""
    if valfmt == ValFmt.PM_VAL_INSITU:
        if not isinstance(value, int):
            return _FAIL
        if itype == T.PM_TYPE_32:
            return int32(value)
        if itype == T.PM_TYPE_U32:
            return uint32(value)
        if itype == T.PM_TYPE_FLOAT:
            return struct.unpack("=f", struct.pack("=I", uint32(value)))[0]
        return _FAIL
    if valfmt not in (ValFmt.PM_VAL_DPTR, ValFmt.PM_VAL_SPTR) or not isinstance(value, ValueBlock):
        return _FAIL
    vtype, vbuf = value.vtype, value.vbuf
    fixed = {T.PM_TYPE_64: ">q", T.PM_TYPE_U64: ">Q", T.PM_TYPE_DOUBLE: ">d", T.PM_TYPE_FLOAT: ">f"}
    if itype in fixed:
        code = fixed[itype]
        if len(vbuf) != struct.calcsize(code) or vtype not in (itype, 0):
            return _FAIL
        return struct.unpack(code, vbuf)[0]
    if itype in (T.PM_TYPE_STRING, T.PM_TYPE_AGGREGATE):
        return vbuf if vtype in (itype, 0) else _FAIL
    return _FAIL


def _g(value: float, digits: int) -> str:
    return f"%.{digits}g" % value


def _unknown_value(valfmt: int, value: int | ValueBlock) -> str:
    """pmPrintValue's guesses for a value of unknown type: number, float, text, hex."""
    if valfmt == ValFmt.PM_VAL_INSITU and isinstance(value, int):
        word = uint32(value)
        parts = [str(word)]
        as_float = struct.unpack("=f", struct.pack("=I", word))[0]
        if not math.isnan(as_float):
            parts.append(_g(as_float, 8))
        parts.append(f"0x{word:x}")
        return " ".join(parts)
    if not isinstance(value, ValueBlock):
        return f"pmPrintValue: bad valfmt ({valfmt})?\n"
    raw = _host_bytes(value)
    parts = []
    if len(raw) == 8:
        parts.append(str(struct.unpack("=Q", raw)[0]))
        as_double = struct.unpack("=d", raw)[0]
        if not math.isnan(as_double):
            parts.append(_g(as_double, 16))
    if len(raw) == 4:
        as_float = struct.unpack("=f", raw)[0]
        if not math.isnan(as_float):
            parts.append(_g(as_float, 8))
    if all(0x20 <= b < 0x7F for b in raw):
        parts.append('"' + raw.decode("ascii") + '"')
    parts.append("[" + raw.hex() + "]")
    return " ".join(parts)


def _stamp(sec: int, frac: str) -> str:
    try:
        tm = time.localtime(sec)
    except (OverflowError, OSError, ValueError):
        tm = time.localtime(0)
    return f"{tm.tm_hour:02d}:{tm.tm_min:02d}:{tm.tm_sec:02d}.{frac}"


def _event_summary(payload: bytes, highres: bool) -> str:
    """libpcp's one-line summary of an event record array: count, missed, timestamps."""
    try:
        (nrecords,) = struct.unpack_from(">i", payload, 0)
        base = 4
        stamp_fmt = ">qq" if highres else ">ii"
        head = struct.calcsize(stamp_fmt) + 8
        first = struct.unpack_from(stamp_fmt, payload, base) if nrecords > 0 else (0, 0)
        nmissed = 0
        for _ in range(nrecords - 1):
            flags, nparams = struct.unpack_from(">Ii", payload, base + head - 8)
            if flags & 0x80000000:  # PM_EVENT_FLAG_MISSED
                nmissed += nparams
                continue
            base += head
            for _ in range(nparams):
                (word,) = struct.unpack_from(">I", payload, base + 4)
                base += 4 + ((word & 0xFFFFFF) + 3) // 4 * 4
        last = struct.unpack_from(stamp_fmt, payload, base) if nrecords > 1 else first
    except struct.error:
        return "[bad event record array]"

    def show(ts: tuple[int, int]) -> str:
        return _stamp(ts[0], f"{ts[1]:09d}" if highres else f"{ts[1] // 1000:03d}")

    text = f"[{nrecords} event record" + ("" if nrecords == 1 else "s")
    if nmissed > 0:
        text += f" ({nmissed} missed)"
    if nrecords > 0:
        text += " timestamp" + ("s" if nrecords > 1 else "") + " " + show(first)
        if nrecords > 1:
            text += "..." + show(last)
    return text + "]"


def format_value(valfmt: int, type_: int, value: int | ValueBlock) -> str:
    """pmPrintValue(valfmt, type, value, 1): one value as libpcp prints it."""
    t = type_
    atom: Any = None
    if t not in (T.PM_TYPE_UNKNOWN, T.PM_TYPE_EVENT, T.PM_TYPE_HIGHRES_EVENT):
        atom = _extract(valfmt, value, t)
        if atom is _FAIL:
            t = T.PM_TYPE_UNKNOWN
    if t in (T.PM_TYPE_32, T.PM_TYPE_U32, T.PM_TYPE_64, T.PM_TYPE_U64):
        return str(atom)
    if t == T.PM_TYPE_FLOAT:
        return _g(atom, 8)
    if t == T.PM_TYPE_DOUBLE:
        return _g(atom, 16)
    if t == T.PM_TYPE_STRING:
        return '"' + atom.split(b"\0", 1)[0].decode("utf-8", "surrogateescape") + '"'
    if t in (T.PM_TYPE_AGGREGATE, T.PM_TYPE_UNKNOWN):
        return _unknown_value(valfmt, value)
    if t in (T.PM_TYPE_EVENT, T.PM_TYPE_HIGHRES_EVENT):
        if isinstance(value, ValueBlock):
            return _event_summary(value.vbuf, t == T.PM_TYPE_HIGHRES_EVENT)
        return f"[pmlc control {uint32(value):#x}]"
    if t == T.PM_TYPE_NOSUPPORT:
        return "pmPrintValue: bogus value, metric Not Supported\n"
    return f"pmPrintValue: unknown value type={t}\n"


def values_of(vs: ValueSet) -> list[tuple[int, int | ValueBlock]]:
    """(inst, lval or ValueBlock) for each value of VS, as pmValue holds them."""
    if vs.numval <= 0:
        return []
    if vs.valfmt == ValFmt.PM_VAL_INSITU:
        return [(inst, int32(word)) for inst, word in zip(vs.insts, vs.values, strict=True)]
    return [
        (inst, ValueBlock(vs.vtype, block_payload(vs.vtype, v)))
        for inst, v in zip(vs.insts, vs.values, strict=True)
    ]


# -- results ------------------------------------------------------------------------------


def result_header(result: Result, ptr: int, *, dso: bool) -> str:
    """The first line of __pmPrintResult (an agent's reply) or __pmDumpResult (a DSO's)."""
    sec, nsec = result.timestamp.sec, result.timestamp.nsec
    if dso:
        usec = nsec // 1000
        return (
            f"pmResult dump from 0x{ptr:x} timestamp: {sec}.{usec:06d} "
            f"{_stamp(sec, f'{usec // 1000:03d}')}"
        )
    return (
        f"__pmResult dump from 0x{ptr:x} timestamp: {sec}.{nsec:09d} {_stamp(sec, f'{nsec:09d}')}"
    )


def print_result(
    out: Callable[[str], None],
    result: Result,
    names: Callable[[int], Sequence[str]],
    *,
    ptr: int,
    dso: bool,
    descs: Sequence[Desc] | None = None,
    iname: Callable[[int, int], str | None] | None = None,
) -> None:
    """A fetch result as dbpmda shows it: without descriptors (every value's type
    guessed, instance names ???) or with them (getdesc/getiname on)."""
    out(result_header(result, ptr, dso=dso) + f" numpmid: {result.numpmid}\n")
    for i, vs in enumerate(result.vsets):
        found = names(vs.pmid)
        if not found:
            out(f"  {pmIDStr(vs.pmid)} (<noname>):")
        else:
            out(f"  {pmIDStr(vs.pmid)} (" + (" or " if descs else ", ").join(found) + "):")
        if vs.numval == 0:
            out(" No values returned!\n")
            continue
        if vs.numval < 0:
            out(f" {pmErrStr(vs.numval)}\n")
            continue
        out(f" numval: {vs.numval} valfmt: {vs.valfmt} vlist[]:\n")
        desc = descs[i] if descs is not None else None
        for inst, value in values_of(vs):
            with_inst = inst != PM_IN_NULL if desc is None else desc.indom != PM_INDOM_NULL
            if vs.numval > 1 or with_inst:
                out(f"    inst [{int32(inst)}")
                name = iname(desc.indom, inst) if (iname is not None and desc is not None) else None
                out(f' or "{name}"] ' if name is not None else " or ???] ")
            else:
                out("   ")
            if desc is not None:
                text = format_value(vs.valfmt, desc.type, value)
            elif vs.valfmt == ValFmt.PM_VAL_INSITU:
                text = format_value(vs.valfmt, T.PM_TYPE_UNKNOWN, value)
            elif vs.valfmt in (ValFmt.PM_VAL_DPTR, ValFmt.PM_VAL_SPTR):
                text = format_value(vs.valfmt, vs.vtype, value)
            else:
                text = f"bad valfmt {vs.valfmt}"
            out(f"value {text}\n")


def instance_lines(insts: Sequence[int], names: Sequence[str]) -> str:
    """printindom: the instances of an INSTANCE reply (ids and/or names, as decoded)."""
    if not insts:
        return "Instance domain is empty\n"
    keep_insts = keep_names = len(insts) != 1
    if any(i != PM_IN_NULL for i in insts):
        keep_insts = True
    if any(n for n in names):
        keep_names = True
    lines = []
    for k, (inst, name) in enumerate(zip(insts, names, strict=True)):
        line = f"[{k:3d}]"
        if keep_insts:
            line += f" inst: {int32(inst)}"
        if keep_names:
            line += f' name: "{name}"'
        lines.append(line + "\n")
    return "".join(lines)


def label_lines(sets: Sequence[LabelSet]) -> str:
    """Each label set: its instance (or "Labels:") and name=value per label."""
    lines = []
    for k, lset in enumerate(sets):
        if lset.inst != PM_IN_NULL:
            lines.append(f"[{k:3d}] Labels inst: {int32(lset.inst)}\n")
        else:
            lines.append("Labels:\n")
        for lp in lset.labels:
            name = lset.json[lp.name : lp.name + lp.namelen].decode("utf-8", "surrogateescape")
            value = lset.json[lp.value : lp.value + lp.valuelen]
            lines.append(f"    {name}={value.decode('utf-8', 'surrogateescape')}\n")
    return "".join(lines)


def cluster_text(pmid: int) -> str:
    """strcluster(): the PMID's text without its last component."""
    return pmIDStr(pmid).rsplit(".", 1)[0]


# -- help -----------------------------------------------------------------------------------

USAGE: dict[str, tuple[str, ...]] = {
    "ATTR": ("attr name [value]", "attr attr# [value]"),
    "CLOSE": ("close",),
    "DBG": ("debug all | none", "debug [-]flag [ [-]flag ... ] (- prefix to clear)"),
    "DESC": ("desc metric",),
    "FETCH": ("fetch metric [ metric ... ]",),
    "GETDESC": ("getdesc on | off",),
    "GETINAME": ("getiname on | off",),
    "INFO": ("text metric", "text indom indom#"),
    "INSTANCE": ('instance indom# [ number | name | "name" ]',),
    "LABEL": (
        "label context",
        "label domain",
        "label indom indom#",
        "label cluster cluster#",
        "label item metric",
        "label instances indom#",
    ),
    "NAMESPACE": ("namespace fname",),
    "OPEN": (
        "open dso dsoname init_routine [ domain# ]",
        "open pipe execname [ arg ... ]",
        "open socket unix sockname",
        "open socket inet port#|service",
        "open socket ipv6 port#|service",
    ),
    "PMNS_CHILDREN": ("children metric-name",),
    "PMNS_NAME": ("name pmid#",),
    "PMNS_PMID": ("pmid metric-name",),
    "PMNS_TRAVERSE": ("traverse metric-name",),
    "PROFILE": ("profile indom# [ all | none ]", "profile indom# [ add | delete ] number"),
    "QUIT": ("quit",),
    "STATUS": ("status",),
    "STORE": ('store metric "value"',),
    "WATCH": ("watch logfilename",),
    "TIMER": ("timer on | off",),
    "WAIT": ("wait seconds",),
}
#: The order `help` lists the commands in.
HELP_ORDER = (
    *("ATTR", "PMNS_CHILDREN", "CLOSE", "DBG", "DESC", "FETCH", "GETDESC", "GETINAME"),
    *("INSTANCE", "LABEL", "PMNS_NAME", "NAMESPACE", "OPEN", "PMNS_PMID", "PROFILE", "QUIT"),
    *("STATUS", "STORE", "INFO", "TIMER", "PMNS_TRAVERSE", "WAIT", "WATCH"),
)
#: The paragraph `help COMMAND` adds under the usage (the messages of PCP 6.0.3's dbpmda).
DETAIL: dict[str, str] = {
    "ATTR": "Set a security attribute. These set aspects of per-user authentication,\n"
    "allowing a PMDA to provide different metric views for different users.\n",
    "CLOSE": "Close the pipe to a daemon PMDA or dlclose(3) a DSO PMDA. dbpmda does not\n"
    "exit, allowing another PMDA to be opened.\n",
    "DBG": "Specify which debugging options should be active (see pmdbg(1)).  Options\n"
    "may be specified by name (or number for the old bit-field options), with\n"
    "multiple options separated by white space.  All options may be selected or\n"
    "deselected if 'all' or 'none' is specified.  The current setting is\n"
    "displayed by the status command.\n\n",
    "DESC": "Print out the meta data description for the 'metric'.  The metric may be\n"
    "specified by name, or as a PMID of the form N, N.N or N.N.N.\n",
    "FETCH": "Fetch metrics from the PMDA.  The metrics may be specified as a list of\n"
    "metric names, or PMIDs of the form N, N.N or N.N.N.\n",
    "GETDESC": "Before doing a fetch, get the descriptor so that the result of a fetch\n"
    "can be printed out correctly.\n",
    "GETINAME": "After a fetch if the metric has an associated instance domain then lookup\n"
    "the external names of any instances returned, rather than reporting the\n"
    "instance name as ???.\n",
    "INFO": "Retrieve the help text for the 'metric' or 'indom' from the PMDA.  The one\n"
    "line message is shown between '[' and ']' with the long message on the next\n"
    "line.  To get the help text for an instance domain requires the word\n"
    "``indom'' before the indom number\n",
    "INSTANCE": "List the instances in 'indom'.  The list may be restricted to a specific\n"
    "instance 'name' or 'number'.\n",
    "NAMESPACE": "Unload the current Name Space and load up the given Name Space.\n"
    "If unsuccessful then will try to reload the previous Name Space.\n",
    "OPEN": "Open a PMDA as either a DSO, via a network socket (unix/inet/ipv6), or as a\n"
    "daemon (connected with a pipe).  The 'dsoname' and 'execname' fields are\n"
    "the path to the PMDA shared object file or executable.  The first socket PMDA\n"
    "field is the type - either unix (if supported), inet or ipv6.  The 'sockname'\n"
    "argument for unix sockets is a path of a named pipe where a PMDA is listening\n"
    "for connections.  The 'port' argument is a port number, 'serv' a service name\n"
    "typically defined in /etc/services (resolved to a port via getservent(3)).\n"
    "The arguments to this command are similar to a line in the pmcd.conf file.\n",
    "PMNS_CHILDREN": "Fetch and print the next name component of the direct decendents of\n"
    "metric-name in the PMNS, reporting for each if it is a leaf node or a\n"
    "non-leaf node.\n"
    "Most useful for PMDAs that support dynamic metrics in the PMNS.\n",
    "PMNS_NAME": "Print the name of the metric with PMID pmid#.  The pmid# syntax follows\n"
    "the source PMNS syntax, namely 3 numbers separated by '.' to encode\n"
    "the domain, cluster and item components of the PMID, e.g.\n"
    "    name 29.0.1004\n"
    "Most useful for PMDAs that support dynamic metrics in the PMNS.\n",
    "PMNS_PMID": "Print the PMID for the named metric\n"
    "Most useful for PMDAs that support dynamic metrics in the PMNS.\n",
    "PMNS_TRAVERSE": "Fetch and print all of the decendent metric names below metric-name\n"
    "in the PMNS.\n"
    "Most useful for PMDAs that support dynamic metrics in the PMNS.\n",
    "PROFILE": "For the instance domain specified, the profile may be changed to include\n"
    "'all' instances, no instances, add an instance or delete an instance.\n",
    "QUIT": "Exit dbpmda.  This also closes any open PMDAs.\n",
    "STATUS": "Display the state of dbpmda, including which PMDA is connected, which\n"
    "debug options are set, and the current profile.\n",
    "STORE": "Store the value (int, real or string) into the 'metric'.  The metric may be\n"
    "specified by name or as a PMID with the format N, N.N, N.N.N.  The value to\n"
    "be stored must be enclosed in quotes.  Unlike the other commands, a store\n"
    "must request a metric description and fetch the metric to determine how to\n"
    "interpret the value, and to allocate the PDU for transmitting the value,\n"
    "respectively.  The current profile will be used.\n",
    "TIMER": "Report the response time of the PMDA when sending and receiving PDUs.\n",
    "WATCH": "An xterm window is opened which tails the specified log file.  This window\n"
    "must be closed by the user when no longer required.\n",
    "WAIT": "Sleep for this number of seconds\n",
}


def help_text(topic: str | None, full: bool) -> str:
    """dohelp(): every command's usage (no topic), or one command's usage [and detail]."""
    if topic is None:
        body = "".join(help_text(t, False) for t in HELP_ORDER)
        return "help [ command ]\n\n" + body + "\n"
    text = "\n" if full else ""
    text += "".join(line + "\n" for line in USAGE[topic])
    if full:
        text += "\n"
        if topic in DETAIL:
            text += DETAIL[topic] + "\n"
    return text


# -- debug options ---------------------------------------------------------------------------

#: libpcp's debug options in pmDebugOptions order; the first 29 also have an old bit.
DEBUG_OPTIONS = (
    *("pdu", "fetch", "profile", "value", "context", "indom", "pdubuf", "log", "logmeta"),
    *("optfetch", "af", "appl0", "appl1", "appl2", "pmns", "libpmda", "timecontrol", "pmc"),
    *("derive", "lock", "interp", "config", "pmapi", "fault", "auth", "discovery", "attr"),
    *("http", "desperate", "deprecated", "exec", "labels", "series", "libweb", "alloc"),
    *("services", "appl3", "appl4", "appl5", "access", "qa", "search", "query", "compress"),
    *("dev0", "dev1", "dev2", "pmlc", "appl6", "appl7", "appl8", "appl9", "tls"),
)
DEBUG_BITS = {name: 1 << i for i, name in enumerate(DEBUG_OPTIONS[:28])} | {"desperate": 1 << 30}
