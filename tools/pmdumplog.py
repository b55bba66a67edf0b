"""pmdumplog: dump a PCP archive's label, metadata, temporal index and records, as PCP 6's.

The sections come in PCP's order (label, descriptors, label sets, help text, on-disk
and in-memory instance domains, temporal index, records) and in PCP's own orders
within each section: descriptors and instance domains in the order libpcp's hash
tables hold them, label sets by time then type then identifier, help text by
identifier.  Records are read forwards or (-r) backwards from the time window's
edge; metric-name arguments pick value sets out of each record.  Damage in a data
volume ends the dump after every record before it, with one line naming the file
and byte offset; `-v FILE` dumps any file's framed records in hex.
"""

from __future__ import annotations

import bisect
import errno
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import tzinfo
from fractions import Fraction
from typing import Any

from purepcp.pmapi import version_line
from purepcp.pmapi.archive import Archive, ArchiveError
from purepcp.pmapi.archive.format import (
    FRAME,
    PM_LOG_VERS03,
    PM_TEXT_HELP,
    PM_TEXT_INDOM,
    PM_TEXT_ONELINE,
    PM_TEXT_PMID,
    DescRecord,
    InDomRecord,
    LabelRecord,
)
from purepcp.pmapi.archive.reader import End, base_name
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.errors import (
    PM_ERR_LOGFILE,
    PM_ERR_NAME,
    PM_ERR_NONLEAF,
    PM_ERR_PMID_LOG,
    PM_ERR_PMNS,
    PMError,
    SourceError,
    pmErrStr,
)
from purepcp.pmapi.events import event_flags_str, unpack_event_records
from purepcp.pmapi.ids import PM_ID_NULL, PM_INDOM_NULL, pmIDStr, pmInDomStr
from purepcp.pmapi.labels import (
    PM_LABEL_CLUSTER,
    PM_LABEL_COMPOUND,
    PM_LABEL_CONTEXT,
    PM_LABEL_DOMAIN,
    PM_LABEL_INDOM,
    PM_LABEL_INSTANCES,
    PM_LABEL_ITEM,
    PM_LABEL_OPTIONAL,
    LabelSet,
    pmLabelFlagString,
    pmLabelIdentString,
)
from purepcp.pmapi.options import Opt, Tool, debug_spec_ok, pcp_getopt, warn_damaged_end
from purepcp.pmapi.pmns import PMNS
from purepcp.pmapi.printvalue import pmPrintValue
from purepcp.pmapi.timewindow import (
    NSEC,
    PM_MAX_TIME_T,
    TimeParseError,
    new_zone,
    parse_time_window,
    pm_ctime,
    tzinfo_for,
)
from purepcp.pmapi.types import PMType, ValFmt
from purepcp.pmapi.values import Result, Timestamp, ValueBlock, ValueSet

PROG = "pmdumplog"

# -- options ---------------------------------------------------------------------------

ALL = Opt("a", "all", None, "dump everything")
DESCS = Opt("d", "descs", None, "dump metric descriptions")
LABELSETS = Opt("e", "labelsets", None, "dump all metric label metadata")
HELPTEXT = Opt("h", "helptext", None, "dump all metric help text")
DISKINDOMS = Opt("I", "on-disk-insts", None, "dump on-disk instance domain descriptions")
INDOMS = Opt("i", "insts", None, "dump instance domain descriptions")
VLABEL = Opt("L", None, None, "more verbose form of archive label dump")
LABEL = Opt("l", "label", None, "dump the archive label")
MARKS = Opt("M", "markrecs", None, "report <mark> records")
METRICS = Opt("m", "metrics", None, "dump values of the metrics (default)")
REVERSE = Opt("r", "reverse", None, "process archive in reverse chronological order")
SIZES = Opt("s", "sizes", None, "report size of data records in archive")
TINDEX = Opt("t", None, None, "dump the temporal index")
RAW = Opt("v", None, "FILE", "verbose hex dump of a physical file in raw format")
XSTAMP = Opt("x", None, None, "include date, usec (-xx) and Epoch (-xxx) in reported timestamps")

# PCP's own wording for the shared options in pmdumplog's usage message
_NAMESPACE = Opt("n", "namespace", "FILE", "use an alternative PMNS")
_START = Opt("S", "start", "TIME", "start of the time window")
_FINISH = Opt("T", "finish", "TIME", "end of the time window")
_TIMEZONE = Opt("Z", "timezone", "TZ", "set reporting timezone")
_HOSTZONE = Opt("z", "hostzone", None, "set reporting timezone to local time of metrics source")
_VERSION = Opt("V", "version", None, "display version number and exit")
_HELP = Opt("?", "help", None, "show this usage message and exit")

USAGE_OPTIONS = (ALL, DESCS, LABELSETS, HELPTEXT, DISKINDOMS, INDOMS, VLABEL, LABEL, MARKS,
                 METRICS, _NAMESPACE, REVERSE, _START, SIZES, _FINISH, TINDEX, RAW, XSTAMP,
                 _TIMEZONE, _HOSTZONE, _VERSION, _HELP)  # fmt: skip
TOOL = Tool(PROG, "[options] [archive [metricname ...]]", [("Options", USAGE_OPTIONS)])

#: the short options pmdumplog takes (-V is long-only there: "--version")
SHORTS = "aD:dehIilLmMn:rS:sT:tv:xZ:z?"
#: long options in PCP's table order (ambiguity messages list them in this order)
LONGS: tuple[tuple[str, str, bool], ...] = (
    ("debug", "D", True), ("all", "a", False), ("descs", "d", False),
    ("labelsets", "e", False), ("helptext", "h", False), ("on-disk-insts", "I", False),
    ("insts", "i", False), ("label", "l", False), ("markrecs", "M", False),
    ("metrics", "m", False), ("namespace", "n", True), ("reverse", "r", False),
    ("start", "S", True), ("sizes", "s", False), ("finish", "T", True),
    ("timezone", "Z", True), ("hostzone", "z", False), ("version", "V", False),
    ("help", "?", False),
)  # fmt: skip


@dataclass
class Options:
    """What the command line asked for, as pmdumplog's flags."""

    flags: set[str] = field(default_factory=set)  # the dump letters: d e h I i L l M m r s t
    xflag: int = 0
    rawfile: str | None = None
    namespace: PMNS | None = None
    start: str | None = None
    finish: str | None = None
    timezone: str | None = None
    hostzone: bool = False
    operands: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)  # pmprintf's buffer, in order
    errors: int = 0
    exit_now: bool = False  # --version
    runtime_error: bool = False  # messages only, no usage (a namespace that would not load)


class _Exit(Exception):
    """End the run with STATUS (everything was already written)."""

    def __init__(self, status: int) -> None:
        self.status = status


def parse_options(argv: Sequence[str]) -> Options:
    """Read ARGV as pmGetOptions with pmdumplog's overrides; complaints collect in messages."""
    o = Options()
    for item in pcp_getopt(argv, SHORTS, LONGS):
        if isinstance(item, str):
            o.operands.append(item)
            continue
        letter, value = item
        if letter == "!":
            o.messages.append(f"{PROG}: {value}\n")
            o.errors += 1
        elif letter == "?":
            o.errors += 1
        elif letter == "a":
            o.flags |= set("diLlmst")
        elif letter == "L":
            o.flags |= {"L", "l"}
        elif letter in "dehIilMmrst":
            o.flags.add(letter)
        elif letter == "x":
            o.xflag += 1
        elif letter == "v":
            o.flags.add("v")
            o.rawfile = value
        elif letter == "n":
            _load_namespace(o, str(value))
        elif letter == "S":
            o.start = value
        elif letter == "T":
            o.finish = value
        elif letter in "Zz":
            _set_zone(o, letter, value)
        elif letter == "V":
            o.exit_now = True
            o.messages.append(version_line(PROG) + "\n")
        elif letter == "D" and not debug_spec_ok(str(value)):
            o.messages.append(f"{PROG}: unrecognized debug options specification ({value})\n")
            o.errors += 1
        # a good -D (debugging) is accepted and has no effect here
    return o


def _set_zone(o: Options, letter: str, value: str | None) -> None:
    if (letter == "Z" and o.hostzone) or (letter == "z" and o.timezone is not None):
        o.messages.append(f"{PROG}: at most one of -Z and -z allowed\n")
        o.errors += 1
    elif letter == "Z":
        o.timezone = value
    else:
        o.hostzone = True


def _load_namespace(o: Options, path: str) -> None:
    """-n: load PATH now, as pmLoadASCIINameSpace does; a failure is a runtime error."""
    try:
        o.namespace = PMNS.from_file(path)
        return
    except SourceError as exc:
        if exc.code == PM_ERR_PMNS:
            sys.stderr.write(f"Error Parsing ASCII PMNS: {exc.what}\n")
        else:  # the file would not open
            sys.stderr.write(f'Error Parsing ASCII PMNS: Cannot open "{path}"\n')
        code = exc.code
    except (OSError, PMError) as exc:
        code = exc.code if isinstance(exc, PMError) else -(exc.errno or errno.EIO)
    o.messages.append(f'{PROG}: Cannot load namespace from "{path}": {pmErrStr(code)}\n')
    o.runtime_error = True
    o.errors += 1


def _usage_exit(o: Options) -> _Exit:
    """pmUsageMessage: the collected messages, then the usage unless that is not wanted."""
    sys.stdout.flush()
    text = "".join(o.messages)
    if not (o.exit_now or o.runtime_error):
        text += TOOL.usage()
    sys.stderr.write(text)
    return _Exit(0 if o.exit_now else 1)


# -- libpcp's hash tables ------------------------------------------------------------------


@dataclass
class _Node:
    key: int
    data: Any


class CHash:
    """libpcp's __pmHashCtl: chains newest-first, grown (and relinked) as libpcp grows them.

    Walking it gives PCP's order for the sections pmdumplog prints "as hashed".
    """

    def __init__(self) -> None:
        self.buckets: list[list[_Node]] = []
        self.nodes = 0

    def add(self, key: int, data: Any) -> None:
        self.nodes += 1
        if not self.buckets:
            self.buckets = [[]]
        elif self.nodes // 4 > len(self.buckets):
            self._grow()
        self.buckets[key % len(self.buckets)].insert(0, _Node(key, data))

    def _grow(self) -> None:
        size = len(self.buckets) * 2
        if size % 2:
            size += 1
        if size % 3:
            size += 2
        if size % 5:
            size += 2
        fresh: list[list[_Node]] = [[] for _ in range(size)]
        for chain in reversed(self.buckets):
            for node in chain:
                fresh[node.key % size].insert(0, node)
        self.buckets = fresh

    def search(self, key: int) -> _Node | None:
        if not self.buckets:
            return None
        for node in self.buckets[key % len(self.buckets)]:
            if node.key == key:
                return node
        return None

    def walk(self) -> Iterator[_Node]:
        for chain in self.buckets:
            yield from chain


# -- timestamps ----------------------------------------------------------------------------


def _ts_cmp(a: Timestamp, b: Timestamp) -> int:
    return (a.sec - b.sec) or (a.nsec - b.nsec)


def _ts_sub(a: Timestamp, b: Timestamp) -> float:
    """__pmTimestampSub: A - B in seconds, as a double."""
    return float(Fraction((a.sec - b.sec) * NSEC + a.nsec - b.nsec, NSEC))


def _signed(v: int) -> int:
    """A 32-bit word as C's int."""
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


class Clock:
    """Times as pmdumplog prints them: in the reporting zone, usec for v2 and nsec for v3."""

    def __init__(self, zone: tzinfo, version: int, start: Timestamp, xflag: int) -> None:
        self.zone = zone
        self.v3 = version == PM_LOG_VERS03
        self.start = start
        self.xflag = xflag
        self._ctimes: dict[int, str] = {}

    def ctime(self, sec: int) -> str:
        """pmCtime without its newline: "Sat Nov 21 09:42:24 2026"."""
        text = self._ctimes.get(sec)
        if text is None:
            text = self._ctimes[sec] = pm_ctime(sec, self.zone)
        return text

    def hms(self, t: Timestamp) -> str:
        """myPrintTimestamp: HH:MM:SS and the fraction (9 digits for v3, else 6)."""
        clock = self.ctime(t.sec)[11:19]
        return f"{clock}.{t.nsec:09d}" if self.v3 else f"{clock}.{_cdiv(t.nsec, 1000):06d}"

    def stamp(self, t: Timestamp) -> str:
        """dump_pmTimestamp: with -x the date, -xx the offset from the start, -xxx the epoch."""
        text = self.hms(t)
        if self.xflag:
            ctime = self.ctime(t.sec)
            text = f"{ctime[:10]} {text} {ctime[20:24]}"
        if self.xflag >= 2:
            text += f" ({_ts_sub(t, self.start):.{9 if self.v3 else 6}f})"
        if self.xflag >= 3:
            text += f" {t.sec & 0xFFFFFFFFFFFFFFFF}"
        return text

    def timeval(self, sec: int, usec: int) -> str:
        """dump_timeval: an event record's time (microseconds, no epoch with -xxx)."""
        ctime = self.ctime(sec)
        text = f"{ctime[11:19]}.{usec:06d}"
        if self.xflag:
            text = f"{ctime[:10]} {text} {ctime[20:24]}"
        if self.xflag >= 2:
            start_usec = _cdiv(self.start.nsec, 1000)
            offset = float(Fraction((sec - self.start.sec) * 10**6 + usec - start_usec, 10**6))
            text += f" ({offset:.6f})"
        return text

    def highres(self, sec: int, nsec: int) -> str:
        """pmPrintHighResStamp: HH:MM:SS.nnnnnnnnn."""
        return f"{self.ctime(sec)[11:19]}.{nsec:09d}"


def _cdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


# -- the archive's metadata as libpcp holds it ---------------------------------------------


@dataclass
class _InDom:
    """One __pmLogInDom: a time, whether it is a delta, members sorted by instance id."""

    stamp: Timestamp
    delta: bool
    insts: list[int]
    names: list[str | None]
    _lookup: dict[int, str | None] | None = field(default=None, repr=False)

    def name_of(self, inst: int) -> str | None:
        """The name of INST (the first entry for it), None when it is not a member."""
        if self._lookup is None:
            self._lookup = {}
            for i, name in zip(self.insts, self.names, strict=True):
                self._lookup.setdefault(i, name)
        return self._lookup.get(inst)


@dataclass
class _LabelRec:
    """One __pmLogLabelSet: the label sets of one type and identifier from STAMP on."""

    stamp: Timestamp
    sets: list[LabelSet]


class Metadata:
    """The archive's .meta loaded into libpcp's shapes: hashed descriptors and instance
    domains, time-ordered chains of instance domains and label sets, and help text.
    """

    def __init__(self, archive: Archive) -> None:
        self.archive = archive
        self.descs = CHash()
        self.indoms = CHash()
        self.labels = CHash()
        self._timelines: dict[int, tuple[list[Timestamp], list[_InDom]]] = {}
        for _, record in archive.meta:
            if isinstance(record, DescRecord):
                self._add_desc(record.desc)
            elif isinstance(record, InDomRecord) and record.insts:
                self._add_indom(record)
            elif isinstance(record, LabelRecord):
                self._add_labels(record)
        self._drop_duplicate_labels()
        for node in self.indoms.walk():
            _undelta(node.data)

    def _add_desc(self, desc: Desc) -> None:
        """__pmLogAddDesc: the first descriptor of a PMID stays (the reader has refused
        an archive whose descriptors of one metric disagree)."""
        if self.descs.search(desc.pmid) is None:
            self.descs.add(desc.pmid, desc)

    def _add_indom(self, record: InDomRecord) -> None:
        """addindom: keep each chain newest first; a duplicate at the same time moves up."""
        pairs = sorted(
            zip((_signed(i) for i in record.insts), record.names, strict=True), key=lambda p: p[0]
        )
        item = _InDom(record.stamp, record.delta, [p[0] for p in pairs], [p[1] for p in pairs])
        node = self.indoms.search(record.indom)
        if node is None:
            self.indoms.add(record.indom, [item])
            return
        chain: list[_InDom] = node.data
        at = 0
        while at < len(chain) and _ts_cmp(chain[at].stamp, item.stamp) > 0:
            at += 1
        if at < len(chain) and _ts_cmp(chain[at].stamp, item.stamp) == 0:
            same = at
            while same < len(chain) and _ts_cmp(chain[same].stamp, item.stamp) == 0:
                if (chain[same].insts, chain[same].names) == (item.insts, item.names):
                    if same == at:
                        return
                    item = chain.pop(same)
                    break
                same += 1
        chain.insert(at, item)

    def _add_labels(self, record: LabelRecord) -> None:
        """addlabel: context labels share one identifier; chains are newest first."""
        kind = record.type & ~(PM_LABEL_COMPOUND | PM_LABEL_OPTIONAL)
        ident = PM_ID_NULL if kind == PM_LABEL_CONTEXT else record.ident
        item = _LabelRec(record.stamp, list(record.sets))
        outer = self.labels.search(kind)
        inner = outer.data.search(ident) if outer is not None else None
        if inner is None or not inner.data[0].sets:
            if outer is None:
                outer = _Node(kind, CHash())
                self.labels.add(kind, outer.data)
            outer.data.add(ident, [item])
            return
        chain: list[_LabelRec] = inner.data
        at = 0
        while at < len(chain) and _ts_cmp(chain[at].stamp, item.stamp) >= 0:
            at += 1
        chain.insert(at, item)

    def _drop_duplicate_labels(self) -> None:
        """check_dup_labels: a label set repeated from the record before it is dropped."""
        for outer in self.labels.walk():
            for inner in outer.data.walk():
                chain: list[_LabelRec] = inner.data
                at = 0
                while at + 1 < len(chain):
                    newer, older = chain[at], chain[at + 1]
                    seen = {_labelset_key(s) for s in older.sets}
                    newer.sets = [s for s in newer.sets if _labelset_key(s) not in seen]
                    if newer.sets:
                        at += 1
                    else:
                        del chain[at]

    def desc(self, pmid: int) -> Desc | None:
        node = self.descs.search(pmid)
        return node.data if node is not None else None

    def indom_at(self, indom: int, stamp: Timestamp) -> _InDom | None:
        """__pmLogSearchInDom: the first record at or before STAMP in the newest-first chain
        (of records at one time, the one nearest the chain's head).
        """
        timeline = self._timelines.get(indom)
        if timeline is None:
            node = self.indoms.search(indom)
            oldest_first = list(reversed(node.data)) if node is not None else []
            timeline = self._timelines[indom] = ([i.stamp for i in oldest_first], oldest_first)
        stamps, items = timeline
        at = bisect.bisect_right(stamps, stamp)
        return items[at - 1] if at else None

    def inst_name(self, indom: int, inst: int, stamp: Timestamp) -> str | None:
        """pmNameInDom in an archive context at STAMP; None when it fails."""
        item = self.indom_at(indom, stamp)
        return item.name_of(inst) if item is not None else None


def _labelset_key(lset: LabelSet) -> tuple:
    """What samelabelset compares: the instance, the label count, each name and its value.

    (Names within a set are unique, so comparing them as a set is PCP's comparison.)
    """
    js = lset.json
    pairs = frozenset(
        (js[x.name : x.name + x.namelen], js[x.value : x.value + x.valuelen]) for x in lset.labels
    )
    return (lset.inst, lset.nlabels, pairs)


def _undelta(chain: list[_InDom]) -> None:
    """__pmLogUndeltaInDom for a whole chain: oldest first, each delta applied to the
    full record before it (a delta with none before it is left as it is).
    """
    for k in range(len(chain) - 2, -1, -1):
        item, prior = chain[k], chain[k + 1]
        if item.delta and not prior.delta:
            item.insts, item.names = _merge(prior, item)
            item.delta = False


def _merge(full: _InDom, delta: _InDom) -> tuple[list[int], list[str | None]]:
    """A delta's additions (sorted in) and deletions (taken out) applied to FULL."""
    insts: list[int] = []
    names: list[str | None] = []
    i = j = 0
    while i < len(full.insts) or j < len(delta.insts):
        if i < len(full.insts) and j < len(delta.insts):
            gone = delta.names[j] is None
            if gone and full.insts[i] == delta.insts[j]:
                i += 1
                j += 1
                continue
            if not gone and full.insts[i] > delta.insts[j]:
                insts.append(delta.insts[j])
                names.append(delta.names[j])
                j += 1
                continue
        if i < len(full.insts):
            insts.append(full.insts[i])
            names.append(full.names[i])
            i += 1
        else:
            insts.append(delta.insts[j])
            names.append(delta.names[j])
            j += 1
    return insts, names


# -- opening -------------------------------------------------------------------------------


def open_archive(name: str) -> Archive:
    """The archive NAME, failing with the code pmNewContext would give for it (the
    reader makes libpcp's checks of labels and metadata at open)."""
    if name == "":  # C's basename("") is ".", and the folder's ".." then looks like a volume
        raise PMError(PM_ERR_LOGFILE)
    named = os.path.exists(name) or _compressed(name)  # (a file of some archive, as named)
    base = base_name(name) if named else name
    found = [base + s for s in (".meta", ".index", ".0")]
    if not named and not any(os.path.exists(p) or _compressed(p) for p in found):
        raise PMError(-errno.ENOENT)
    return Archive(name)


def _compressed(path: str) -> bool:
    return any(os.path.exists(path + ext) for ext in (".xz", ".lzma", ".bz2", ".gz", ".zst"))


# -- the dump --------------------------------------------------------------------------


class Dumper:
    """One pmdumplog run over an open archive: each section writes to stdout."""

    def __init__(
        self, archive: Archive, meta: Metadata, o: Options, zone: tzinfo, end: End | None
    ) -> None:
        self.archive = archive
        self.o = o
        self.meta = meta
        self.pmns = o.namespace if o.namespace is not None else archive.pmns
        self.version = archive.version
        self.clock = Clock(zone, archive.version, archive.label.start, o.xflag)
        self.end = end
        self._names: dict[int, list[str]] = {}
        self.out = sys.stdout.write
        #: when any instance domain changes: records between two such times that share a
        #: layout share a template (result_text)
        self._indom_changes = sorted({i.stamp for node in meta.indoms.walk() for i in node.data})
        self._templates: dict[tuple[Any, ...], tuple[str, tuple[Any, ...]] | bool] = {}

    def names(self, pmid: int) -> list[str]:
        """pmNameAll: every name of PMID in the namespace in use ([] for none)."""
        found = self._names.get(pmid)
        if found is None:
            try:
                found = self.pmns.names(pmid)
            except PMError:
                found = []
            self._names[pmid] = found
        return found

    def name_text(self, pmid: int) -> str:
        """__pmPrintMetricNames: the names joined by " or ", else "<nonames>"."""
        return " or ".join(self.names(pmid)) or "<nonames>"

    # -- label -------------------------------------------------------------------------

    def label(self) -> None:
        """dumpLabel: version, host, start and end; -L adds zone, features and pid."""
        lab = self.archive.label
        lines = [f"Log Label (Log Format Version {self.version})"]
        lines.append(f"Performance metrics from host {lab.hostname}")
        lines.append(f"    commencing {self._label_time(lab.start)}")
        if self.end is None:
            lines.append("    ending     UNKNOWN")
        else:
            lines.append(f"    ending     {self._label_time(self.end.stamp)}")
        if "L" in self.o.flags:
            if lab.timezone:
                lines.append(f"Archive timezone: {lab.timezone}")
            if lab.zoneinfo:
                lines.append(f"Archive zoneinfo: {lab.zoneinfo}")
            if lab.features:
                lines.append(
                    f"Archive features: 0x{lab.features:x}{_unknown_features(lab.features)}"
                )
            lines.append(f"PID for pmlogger: {lab.pid}")
        self.out("".join(line + "\n" for line in lines))

    def _label_time(self, t: Timestamp) -> str:
        ctime = self.clock.ctime(t.sec)
        text = f"{ctime[:10]} {self.clock.hms(t)} {ctime[20:24]}"
        if self.o.xflag >= 3:
            text += f" {t.sec & 0xFFFFFFFFFFFFFFFF}"
        return text

    # -- descriptors, label sets, help text ----------------------------------------------

    def descs(self) -> None:
        """dumpDesc: every descriptor in hash order, with its names."""
        parts = ["\nDescriptions for Metrics in the Log ...\n"]
        for node in self.meta.descs.walk():
            desc: Desc = node.data
            names = self.names(desc.pmid)
            parts.append(f"PMID: {pmIDStr(desc.pmid)} ({' or '.join(names) or '<noname>'})\n")
            parts.append(desc.describe() + "\n")
        self.out("".join(parts))

    def labelsets(self) -> None:
        """dumpLabelSets: by time, then context, domain, cluster, item, indom, instances."""
        by_time: dict[Timestamp, list[str]] = {}
        for kind in (PM_LABEL_CONTEXT, PM_LABEL_DOMAIN, PM_LABEL_CLUSTER, PM_LABEL_ITEM,
                     PM_LABEL_INDOM, PM_LABEL_INSTANCES):  # fmt: skip
            outer = self.meta.labels.search(kind)
            for node in _label_nodes(kind, outer.data) if outer is not None else ():
                for rec in node.data:
                    text = _print_label_sets(node.key, kind, rec.sets)
                    by_time.setdefault(rec.stamp, []).append(text)
        parts = ["\nMetric Labels in the Log ...\n"]
        for when in self._label_times():
            parts.append(self.clock.stamp(when) + "\n")
            parts += by_time[when]
        self.out("".join(parts))

    def _label_times(self) -> list[Timestamp]:
        """The times dumpLabelSets visits: each round, the nearest later one as a double
        sees it, the first met in hash order winning a tie (a tie's earlier times are lost,
        as in PCP; times at or before the epoch are never shown).
        """
        first_met: dict[Timestamp, int] = {}
        for outer in self.meta.labels.walk():
            for inner in outer.data.walk():
                for rec in inner.data:
                    first_met.setdefault(rec.stamp, len(first_met))
        stamps = sorted(first_met)
        times: list[Timestamp] = []
        prev = Timestamp(0, 0)
        at = bisect.bisect_right(stamps, prev)
        while at < len(stamps):
            nearest = _ts_sub(stamps[at], prev)
            last = at
            while last + 1 < len(stamps) and _ts_sub(stamps[last + 1], prev) == nearest:
                last += 1
            pick = min(range(at, last + 1), key=lambda k: first_met[stamps[k]])
            prev = stamps[pick]
            times.append(prev)
            at = pick + 1
        return times

    def helptext(self) -> None:
        """dumpHelpText: PMIDs then InDoms, by identifier; one-line text before help."""
        parts = ["\nMetric Help Text in the Log ...\n"]
        texts = self.archive.texts
        for kind, show in ((PM_TEXT_PMID, pmIDStr), (PM_TEXT_INDOM, pmInDomStr)):
            idents = {i for (t, i) in texts if t in (kind | PM_TEXT_ONELINE, kind | PM_TEXT_HELP)}
            label = "PMID" if kind == PM_TEXT_PMID else "InDom"
            for ident in sorted(idents):
                oneline = texts.get((kind | PM_TEXT_ONELINE, ident))
                if oneline is not None:
                    parts.append(f"{label}: {show(ident)} [{oneline}]\n")
                text = texts.get((kind | PM_TEXT_HELP, ident))
                if text is not None:
                    parts.append(f"{label}: {show(ident)}\n{text}\n")
        self.out("".join(parts))

    # -- instance domains --------------------------------------------------------------

    def disk_indoms(self) -> None:
        """dumpDiskInDom: every instance domain record as written, deltas as add/del."""
        parts = ["\nInstance Domains on-disk ...\n"]
        for _, record in self.archive.meta:
            if not isinstance(record, InDomRecord):
                continue
            delta = " delta" if record.delta else ""
            head = f"{self.clock.stamp(record.stamp)} InDom: {pmInDomStr(record.indom)}{delta}"
            parts.append(f"{head} {len(record.insts)} instances\n")
            for inst, name in zip(record.insts, record.names, strict=True):
                if not record.delta:
                    parts.append(f'   {_signed(inst)} or "{name}"\n')
                elif name is None:
                    parts.append(f"   del {_signed(inst)}\n")
                else:
                    parts.append(f'   add {_signed(inst)} or "{name}"\n')
        self.out("".join(parts))

    def indoms(self) -> None:
        """dumpInDom: instance domains in hash order, each oldest first, full and sorted."""
        parts = ["\nInstance Domains in the Log ...\n"]
        for node in self.meta.indoms.walk():
            parts.append(f"InDom: {pmInDomStr(node.key)}\n")
            for item in reversed(node.data):
                parts.append(f"{self.clock.stamp(item.stamp)} {len(item.insts)} instances\n")
                for inst, name in zip(item.insts, item.names, strict=True):
                    parts.append(f'   {inst} or "{"(null)" if name is None else name}"\n')
        self.out("".join(parts))

    # -- temporal index ------------------------------------------------------------------

    def temporal_index(self) -> None:
        """dumpTI: each entry, and the integrity errors and warnings PCP checks for."""
        tabs = ("\t\t" if self.o.xflag else "") + ("\t\t" if self.o.xflag >= 2 else "")
        tabs += "\t" if self.version == PM_LOG_VERS03 else ""
        parts = ["\nTemporal Index\n", f"{tabs}\t\tLog Vol    end(meta)     end(log)\n"]
        base = self.archive.base
        meta_size: int | None = -1
        log_size: int | None = -1
        last = None
        for i, e in enumerate(self.archive.index):
            parts.append(
                f"{self.clock.stamp(e.stamp)}\t  {e.vol:5d}  {e.meta_offset:11d}  "
                f"{e.log_offset:11d}\n"
            )
            if i == 0:
                meta_size = _stat_size(base + ".meta")
            if last is None or e.vol != last.vol:
                log_size = _stat_size(f"{base}.{e.vol}")
                if log_size is None:
                    parts.append(f"\t\tWarning: file missing for log volume {e.vol}\n")
            parts += self._index_errors(e, last, meta_size, log_size)
            last = e
        self.out("".join(parts))

    def _index_errors(self, e: Any, last: Any, meta_size: int | None, log_size: int | None):
        errs = []
        if e.stamp.sec < 0 or not 0 <= e.stamp.nsec <= 999999999:
            errs.append(
                f"\t\tError: illegal timestamp value ({e.stamp.sec} sec, {e.stamp.nsec} nsec)\n"
            )
        if meta_size not in (None, -1) and e.meta_offset > meta_size:
            errs.append(f"\t\tError: offset to meta file past end of file ({meta_size})\n")
        if log_size not in (None, -1) and e.log_offset > log_size:
            errs.append(f"\t\tError: offset to log file past end of file ({log_size})\n")
        if last is not None:
            if _ts_cmp(e.stamp, last.stamp) < 0:
                errs.append(
                    "\t\tError: timestamp went backwards in time "
                    f"{self.clock.hms(last.stamp)} -> {self.clock.hms(e.stamp)}\n"
                )
            if e.vol < last.vol:
                errs.append("\t\tError: volume number decreased\n")
            if e.vol == last.vol and e.meta_offset < last.meta_offset:
                errs.append("\t\tError: offset to meta file decreased\n")
            if e.vol == last.vol and e.log_offset < last.log_offset:
                errs.append("\t\tError: offset to log file decreased\n")
        return errs

    # -- records -------------------------------------------------------------------------

    def records(self, pmids: list[int], window: tuple[Timestamp, Timestamp]) -> None:
        """The records in the time window, forwards or (-r) backwards; each one picked down
        to PMIDS when metrics were named.  Damage ends the dump with an error.
        """
        backwards = "r" in self.o.flags
        start, finish = window
        bounded = self.o.start is not None or self.o.finish is not None
        if backwards:
            done = start if bounded else Timestamp(0, 0)
        else:
            done = finish if bounded else Timestamp((1 << 31) - 1, 0)
        first = True
        try:
            for result in self._fetches(finish if backwards else start, backwards):
                picked = self._pick(result, pmids)
                if picked is None:
                    continue
                if first and backwards:
                    first = False
                    when = self.clock.ctime(picked.timestamp.sec)
                    self.out(f"\nLog finished at {when} - dump in reverse order\n")
                if _ts_cmp(picked.timestamp, done) * (-1 if backwards else 1) > 0:
                    return
                self.out("\n" + self.result_text(picked))
        except PMError as exc:
            sys.stdout.flush()
            sys.stderr.write(f"{PROG}: pmFetch: {exc}\n")
            raise _Exit(1) from None

    def _fetches(self, origin: Timestamp, backwards: bool) -> Iterator[Result]:
        """__pmLogFetch, record by record: nothing before the origin (after it, backwards),
        and the origin follows each record returned.
        """
        if backwards:
            if self.end is not None:
                source = self.archive.records(self.end.vol, self.end.offset, backwards=True)
            else:
                source = self.archive.records(backwards=True)
        else:
            source = self.archive.records_from(origin)
        sign = -1 if backwards else 1
        for rec in source:
            if _ts_cmp(rec.stamp, origin) * sign < 0:
                continue
            origin = rec.stamp
            yield rec.result

    def _pick(self, result: Result, pmids: list[int]) -> Result | None:
        """The value sets of PMIDS from RESULT in PMIDS' order (all of them without names,
        a mark with -M); None when nothing in it is wanted.
        """
        if not pmids or (not result.vsets and "M" in self.o.flags):
            return result
        by_pmid: dict[int, ValueSet] = {}
        for vset in result.vsets:
            if vset.pmid in pmids and vset.pmid not in by_pmid:
                by_pmid[vset.pmid] = vset
        chosen = [by_pmid.pop(p) for p in pmids if p in by_pmid]
        if not chosen:
            return None
        return Result(result.timestamp, tuple(chosen))

    def result_text(self, result: Result) -> str:
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
                template = self._templates[key] = self._template(result)
            if template:
                text, readers = template
                values = self._values_of(result, readers)
                out = text % values
                # (C prints a NaN with its sign bit set as "-nan": such records, and those
                # with any NaN, are written carefully)
                if "nan" not in out or ("nan" in text and not any(v != v for v in values)):
                    return out
        return self._result_text(result)

    def _template(self, result: Result) -> tuple[str, tuple[Any, ...]] | bool:
        """RESULT's text with each value (and the time) left as a printf conversion, and
        per value set how its values are read; False for a layout to write carefully
        (events, strings, aggregates, a value of another type than its descriptor's),
        or one whose template does not give exactly the careful text."""
        parts = []
        if "s" in self.o.flags:
            parts.append(f"[{self._size(result)} bytes]\n".replace("%", "%%"))
        n = len(result.vsets)
        parts.append("%s" + f" {n} metric{'s' if n > 1 else ''}\n")
        readers: list[Any] = []
        for vset in result.vsets:
            if vset.numval <= 0:
                parts.append(self._vset_text(vset, result.timestamp).replace("%", "%%"))
                readers.append(None)
                continue
            desc = self.meta.desc(vset.pmid)
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
        if text % self._values_of(result, kept) != self._result_text(result):
            return False
        return text, kept

    def _values_of(self, result: Result, readers: tuple[Any, ...]) -> tuple[Any, ...]:
        """What a template's conversions take for RESULT: its time, then its values."""
        values: list[Any] = [self.clock.stamp(result.timestamp)]
        for vset, read in zip(result.vsets, readers, strict=True):
            if read is not None:
                values.extend(read(vset))
        return tuple(values)

    def _result_text(self, result: Result) -> str:
        """dump_result value set by value set (the careful path)."""
        parts = []
        if "s" in self.o.flags:
            parts.append(f"[{self._size(result)} bytes]\n")
        parts.append(self.clock.stamp(result.timestamp))
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
        nbyte = (24 if self.version == PM_LOG_VERS03 else 20) + 8 * len(result.vsets)
        for vset in result.vsets:
            if vset.numval > 0:
                nbyte += 4 + 8 * vset.numval
                blocks = (v.value for v in vset.vlist if isinstance(v.value, ValueBlock))
                nbyte += sum((block.vlen + 3) // 4 * 4 for block in blocks)
        return nbyte

    def _vset_text(self, vset: ValueSet, stamp: Timestamp, conversion: str = "") -> str:
        """dump_result's lines for one value set; with CONVERSION (a template's), that
        printf conversion in place of each value and every other "%" doubled."""
        head = f"    {pmIDStr(vset.pmid)} ({self.name_text(vset.pmid)})"
        if conversion:
            head = head.replace("%", "%%")
        if vset.numval == 0:
            return f"{head}: No values returned!\n"
        if vset.numval < 0:
            return f"{head}: {pmErrStr(vset.numval)}\n"
        desc = self.meta.desc(vset.pmid)
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
                parts.append(self._event_text(vset, v, desc, stamp))
                continue
            if j == 0:
                parts.append(f"{head}:" + ("\n       " if vset.numval > 1 else ""))
            else:
                parts.append("       ")
            if desc.indom != PM_INDOM_NULL:
                inst = f" inst [{self._inst_text(desc.indom, v.inst, stamp)}]"
                parts.append(inst.replace("%", "%%") if conversion else inst)
            value = conversion or pmPrintValue(vset.valfmt, desc.type, v.value, 1)
            parts.append(f" value {value}\n")
        return "".join(parts)

    def _inst_text(self, indom: int, inst: int, stamp: Timestamp) -> str:
        name = self.meta.inst_name(indom, _signed(inst), stamp)
        return f"{_signed(inst)} or ???" if name is None else f'{_signed(inst)} or "{name}"'

    # -- event records -------------------------------------------------------------------

    def _event_text(self, vset: ValueSet, v: Any, desc: Desc, stamp: Timestamp) -> str:
        """dump_event: one instance's event records, parameter by parameter."""
        parts = [f"    {pmIDStr(vset.pmid)} ({self.name_text(vset.pmid)}"]
        if desc.indom != PM_INDOM_NULL:
            parts.append(f"[{self._inst_text(desc.indom, v.inst, stamp)}])")
        else:
            parts.append(")")
        parts.append(": ")
        highres = desc.type == PMType.PM_TYPE_HIGHRES_EVENT
        want = PMType.PM_TYPE_HIGHRES_EVENT if highres else PMType.PM_TYPE_EVENT
        if vset.valfmt == ValFmt.PM_VAL_INSITU or v.value.vtype != want:
            return "".join(parts)  # pmUnpackEventRecords fails: PCP prints nothing more
        try:
            records = unpack_event_records(bytes(v.value.vbuf), highres)
        except PMError:
            return "".join(parts)
        if not records:
            return "".join([*parts, "No event records\n"])
        missed = sum(
            r.params[1].value  # type: ignore[misc]
            for r in records
            if len(r.params) == 2
            and r.params[0].kind == "flags"
            and r.flags & (1 << 31)
            and r.params[1].kind == "missed"
        )
        parts.append(f"{len(records)}" + (f" (and {missed} missed)" if missed > 0 else ""))
        parts.append(" event record\n" if len(records) + missed == 1 else " event records\n")
        for r, record in enumerate(records):
            sec, nsec = record.stamp
            when = (
                self.clock.highres(sec, nsec) if highres else self.clock.timeval(sec, nsec // 1000)
            )
            parts.append(f"        --- event record [{r}] timestamp {when}")
            if not record.params:
                parts.append(" ---\n\t          No parameters\n")
                continue
            flags = 0
            for p, param in enumerate(record.params):
                text, flags = self._param_text(param, p, flags)
                parts.append(text)
        return "".join(parts)

    def _param_text(self, param: Any, p: int, flags: int) -> tuple[str, int]:
        """dump_parameter: the flags (first), the missed count, or one parameter's value."""
        if param.kind == "flags" and p == 0:
            flags = param.value
            return f" flags 0x{flags:x} ({event_flags_str(flags)}) ---\n", flags
        if param.kind == "missed" and p == 1 and flags & (1 << 31):
            return f"        ==> {_signed(param.value)} missed event records\n", flags
        names = self.names(param.pmid) if param.pmid is not None else []
        if names:
            head = (" ---\n" if p == 0 else "") + f"        {pmIDStr(param.pmid)} ("
            head += " or ".join(names) + "):"
        else:
            head = f"        PMID: {pmIDStr(param.pmid if param.pmid is not None else PM_ID_NULL)}:"
        desc = self.meta.desc(param.pmid) if param.pmid is not None else None
        if desc is None:
            return f"{head} pmLookupDesc: {pmErrStr(PM_ERR_PMID_LOG)}\n", flags
        value = pmPrintValue(param.valfmt, desc.type, param.value, 1)
        return f"{head} value {value}\n", flags


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


def _unknown_features(features: int) -> str:
    """The " [unknown: bit_NN ...]" note for feature bits PCP 6 does not know."""
    unknown = features & ~(1 << 31)
    if not unknown:
        return ""
    bits = [f"bit_{pos:02d}" for pos in range(31, -1, -1) if unknown >> pos & 1]
    return f" [unknown: {' '.join(bits)}]"


def _label_nodes(kind: int, inner: CHash) -> list[_Node]:
    """The identifiers of one label type in PCP's order: context labels along their one
    chain, the others by increasing identifier (the first in hash order for a repeat).
    """
    if kind == PM_LABEL_CONTEXT:
        return next((c for c in inner.buckets if c), [])
    first: dict[int, _Node] = {}
    for node in inner.walk():
        first.setdefault(node.key, node)
    return [first[key] for key in sorted(first)]


def _print_label_sets(ident: int, kind: int, sets: Iterable[LabelSet]) -> str:
    """pmPrintLabelSets for sets read from an archive (their JSONB is never NULL)."""
    idstr = pmLabelIdentString(ident, kind)
    lines = []
    for lset in sets:
        json = lset.json.decode("utf-8", "surrogateescape")
        where = f"{idstr}[{lset.inst}]" if kind & PM_LABEL_INSTANCES else idstr
        lines.append(f"    {where} labels ({len(lset.json)} bytes): {json}\n")
        for i, lp in enumerate(lset.labels):
            lines.append(
                f"        [{i}] name({lp.name},{lp.namelen}) : value({lp.value},{lp.valuelen}) "
                f"[{pmLabelFlagString(lp.flags)}]\n"
            )
    return "".join(lines)


def _stat_size(path: str) -> int | None:
    """__pmStat's size: the file's, -1 for a compressed copy (size unknown), None if absent."""
    if os.path.exists(path):
        try:
            return os.path.getsize(path)
        except OSError:
            return None
    return -1 if _compressed(path) else None


# -- raw dump (-v) -----------------------------------------------------------------------


def raw_dump(data: bytes) -> str:
    """rawdump: each framed record's length, offset and bytes in hex, 32 to a line."""
    parts = []
    at = 0
    while at + 4 <= len(data):
        length = FRAME.unpack_from(data, at)[0]
        parts.append(f"Dump ... record len: {length} @ offset: {at}")
        at += 4
        body = length - 8
        chunk = data[at : at + max(body, 0)]
        for i, byte in enumerate(chunk):
            if i % 32 == 0:
                parts.append("\n")
            if i % 4 == 0:
                parts.append(" ")
            parts.append(f"{byte:02x}")
        at += len(chunk)
        if len(chunk) < body:
            parts.append("Unexpected EOF\n")
        parts.append("\n")
        if at + 4 > len(data):
            if at >= len(data):
                parts.append("Unexpected EOF\n")
            break
        check = FRAME.unpack_from(data, at)[0]
        at += 4
        if check != length:
            parts.append(f"Trailer botch: {check} != {length}\n")
            break
    return "".join(parts)


def _raw(path: str) -> int:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        if exc.errno == errno.EISDIR:
            data = b""
        else:
            sys.stderr.write(f'{PROG}: Cannot open "{path}": {os.strerror(exc.errno or 0)}\n')
            return 1
    sys.stdout.write(f'Raw dump of physical archive file "{path}" ...\n')
    sys.stdout.write(raw_dump(data))
    return 0


# -- main ------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    return TOOL.main(_main, argv)


def _main(argv: list[str]) -> int:
    for stream in (sys.stdout, sys.stderr):  # names and values may hold any bytes
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="surrogateescape")
    try:
        return run(argv)
    except _Exit as done:
        return done.status


def run(argv: list[str]) -> int:
    o = parse_options(argv)
    raw = "v" in o.flags
    if o.errors or o.exit_now or (raw and o.operands) or (not raw and not o.operands):
        raise _usage_exit(o)
    if raw:
        return _raw(str(o.rawfile))
    if not o.flags & set("dehIiltm"):
        o.flags.add("m")
    name = o.operands.pop(0)
    if "," in name or os.path.isdir(name):
        sys.stderr.write(f"{PROG}: Multiple archives are not supported\n")
        return 1
    archive, meta = _open(name)
    with archive:
        end = archive.find_end()
        zone = _zone(o, archive)
        window = _window(o, name, archive, end, zone)
        pmids = _lookup_metrics(o, archive)
        dump = Dumper(archive, meta, o, zone, end)
        sections = (("l", dump.label), ("d", dump.descs), ("e", dump.labelsets),
                    ("h", dump.helptext), ("I", dump.disk_indoms), ("i", dump.indoms),
                    ("t", dump.temporal_index))  # fmt: skip
        for letter, section in sections:
            if letter in o.flags:
                section()
        if "m" in o.flags:
            dump.records(pmids, window)
    return 0


def _open(name: str) -> tuple[Archive, Metadata]:
    """The archive and its metadata, or the one-line complaint pmNewContext's failure gets."""
    try:
        archive = open_archive(name)
    except PMError as exc:
        # PCP's words, then (ours) the file and offset of the damage when there is some
        why = str(exc) if isinstance(exc, ArchiveError) else pmErrStr(exc.code)
        sys.stderr.write(f'{PROG}: Cannot open archive "{name}": {why}\n')
        raise _Exit(1) from None
    if archive.label.features & ~(1 << 31):
        sys.stderr.write(
            f"{PROG}: Warning: unsupported feature bits, other errors may follow ...\n"
        )
    return archive, Metadata(archive)


def _zone(o: Options, archive: Archive) -> tzinfo:
    """The reporting zone (-Z, -z or local), with the note PCP prints on stdout."""
    if o.hostzone:
        sys.stdout.write(
            f'Note: timezone set to local timezone of host "{archive.label.hostname}" '
            "from archive\n\n"
        )
        return new_zone(archive.label.timezone)
    if o.timezone is not None:
        sys.stdout.write(f'Note: timezone set to "TZ={o.timezone}"\n\n')
        return new_zone(o.timezone)
    return tzinfo_for(None)


def _window(
    o: Options, name: str, archive: Archive, end: End | None, zone: tzinfo
) -> tuple[Timestamp, Timestamp]:
    """The time window -S and -T give within the archive (its whole span by default)."""
    if end is None:
        warn_damaged_end(PROG, name)
    try:
        w = parse_time_window(
            o.start,
            o.finish,
            None,
            None,
            archive.label.start,
            end.stamp if end else None,
            tz=zone,
        )
    except TimeParseError as exc:
        sys.stdout.flush()
        sys.stderr.write(f"{PROG}: invalid time window.\n{exc.errmsg}\n")
        raise _Exit(1) from None
    finish_ns = min(w.end_ns, PM_MAX_TIME_T * NSEC)
    return (
        Timestamp(w.start_ns // NSEC, w.start_ns % NSEC),
        Timestamp(finish_ns // NSEC, finish_ns % NSEC),
    )


def _lookup_metrics(o: Options, archive: Archive) -> list[int]:
    """The PMIDs the metric-name arguments name (a non-leaf names every leaf below it)."""
    if not o.operands:
        return []
    pmns = o.namespace if o.namespace is not None else archive.pmns
    pmids: list[int] = []
    for name in o.operands:
        try:
            pmids.append(pmns.lookup(name))
            continue
        except PMError as exc:
            code = exc.code if exc.code in (PM_ERR_NONLEAF, PM_ERR_NAME) else PM_ERR_NAME
        if code == PM_ERR_NONLEAF:
            pmids += [pmns.lookup(leaf) for leaf in pmns.traverse(name)]
        else:
            sys.stderr.write(f"{PROG}: pmLookupName({name}): {pmErrStr(code)}\n")
    if not pmids:
        sys.stderr.write("No metric names can be translated, dump abandoned\n")
        raise _Exit(1)
    return pmids


__all__ = ["CHash", "Clock", "Dumper", "Metadata", "main", "open_archive",
           "parse_options", "raw_dump"]  # fmt: skip

if __name__ == "__main__":
    sys.exit(main())
