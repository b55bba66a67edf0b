"""PCP's log-import API (``from pcp import pmi``): a script builds a PCP archive from
data of its own, one pmiWrite at a time, as with PCP's pmi module over libpcp_import.

The names, arguments, return values and errors are PCP's (pmiStart(3), pmiAddMetric(3),
pmiPutValue(3), pmiWrite(3) ...); the archive is written by purepcp's ArchiveWriter with
libpcp_import's choices, so PCP's tools read the same archive from the same script:

- nothing is written until the first pmiWrite (or a result, text or label put): then
  the three files are made, labelled with that first time, this host's name and zone
  unless pmiSetHostname and pmiSetTimezone said otherwise;
- values given by pmiPutValue wait for pmiWrite, which writes them as one record, each
  metric's values in ascending instance order; a metric's descriptor, and its instance
  domain (whole, again after any pmiAddInstance), go to the .meta just before the first
  record that needs them;
- the temporal index gets an entry before a record that brought metadata with it, before
  one that starts a new volume, every 100000 bytes of volume, and at pmiEnd;
- a value that does not parse as its metric's type is PM_ERR_CONV, as strtol/strtod would
  see it: the first value of a metric in a record that fails leaves the metric's value set
  in error (written so), a later one is dropped.

Errors raise pmiErr with libpcp_import's code (PMI_ERR_*, or libpcp's PM_ERR_*); bad
argument types raise what ctypes raises in PCP's binding.  An archive not ended by pmiEnd
is ended when its object is collected, or at exit, as PCP's are.

Where libpcp_import would write a damaged archive, this does not: pmiSetVersion after the
first write keeps the version the archive began with, and a pmiPutMark before the
context's first record (possible only in an inheriting context) writes nothing.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import os
import re
import struct
import sys
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from purepcp.pmapi.archive.writer import ArchiveWriter
    from purepcp.pmapi.labels import LabelSet
    from purepcp.pmapi.values import Timestamp, ValueSet


from .pmi_cpmi import (  # noqa: F401  (PCP's pmi module exports them all)
    PMI_ERR_ADDLABELERROR,
    PMI_ERR_BADHANDLE,
    PMI_ERR_BADLABELID,
    PMI_ERR_BADLABELINSTANCE,
    PMI_ERR_BADLABELTYPE,
    PMI_ERR_BADMETRICNAME,
    PMI_ERR_BADSEM,
    PMI_ERR_BADTEXTCLASS,
    PMI_ERR_BADTEXTID,
    PMI_ERR_BADTEXTTYPE,
    PMI_ERR_BADTIMESTAMP,
    PMI_ERR_BADTYPE,
    PMI_ERR_BADVERSION,
    PMI_ERR_BASE,
    PMI_ERR_DUPINSTID,
    PMI_ERR_DUPINSTNAME,
    PMI_ERR_DUPMETRICID,
    PMI_ERR_DUPMETRICNAME,
    PMI_ERR_DUPTEXT,
    PMI_ERR_DUPVALUE,
    PMI_ERR_EMPTYLABELNAME,
    PMI_ERR_EMPTYLABELVALUE,
    PMI_ERR_EMPTYTEXTCONTENT,
    PMI_ERR_INSTNOTNULL,
    PMI_ERR_INSTNULL,
    PMI_ERR_NODATA,
    PMI_MAXERRMSGLEN,
    PMIErrCode,
    pmiErrSymDict,
)

_MESSAGES: dict[int, str] = {
    PMI_ERR_DUPMETRICNAME: "Metric name already defined",
    PMI_ERR_DUPMETRICID: "Metric pmID already defined",
    PMI_ERR_DUPINSTNAME: "External instance name already defined",
    PMI_ERR_DUPINSTID: "Internal instance identifer already defined",
    PMI_ERR_INSTNOTNULL: "Null instance expected for a singular metric",
    PMI_ERR_INSTNULL: "Null instance not allowed for a non-singular metric",
    PMI_ERR_BADHANDLE: "Illegal handle",
    PMI_ERR_DUPVALUE: "Value already assigned for this metric-instance",
    PMI_ERR_BADTYPE: "Illegal metric type",
    PMI_ERR_BADSEM: "Illegal metric semantics",
    PMI_ERR_NODATA: "No data to output",
    PMI_ERR_BADMETRICNAME: "Illegal metric name",
    PMI_ERR_BADTIMESTAMP: "Illegal result timestamp",
    PMI_ERR_BADTEXTTYPE: "Illegal text type",
    PMI_ERR_BADTEXTCLASS: "Illegal text class",
    PMI_ERR_BADTEXTID: "Illegal text identifier",
    PMI_ERR_EMPTYTEXTCONTENT: "Text is empty",
    PMI_ERR_DUPTEXT: "Help text already exists",
    PMI_ERR_BADLABELTYPE: "Illegal label type",
    PMI_ERR_BADLABELID: "Illegal label identifier",
    PMI_ERR_BADLABELINSTANCE: "Illegal label instance",
    PMI_ERR_EMPTYLABELNAME: "Label name is empty",
    PMI_ERR_EMPTYLABELVALUE: "Label value is empty",
    PMI_ERR_ADDLABELERROR: "Error adding label",
    PMI_ERR_BADVERSION: "Illegal log version",
}

# libpcp's numbers this module needs (pmapi.h), as plain ints: cheap to import
_PM_ID_NULL = _PM_INDOM_NULL = _PM_IN_NULL = 0xFFFFFFFF
_PM_ERR_NAME, _PM_ERR_INDOM, _PM_ERR_INST = -12357, -12359, -12360
_PM_ERR_CONV, _PM_ERR_NOCONTEXT = -12362, -12376
_PM_LOG_VERS02, _PM_LOG_VERS03 = 2, 3
_PM_SEMS = frozenset({1, 3, 4})  # instant, counter, discrete
_PM_TYPE_32, _PM_TYPE_U32, _PM_TYPE_64, _PM_TYPE_U64 = 0, 1, 2, 3
_PM_TYPE_FLOAT, _PM_TYPE_DOUBLE, _PM_TYPE_STRING = 4, 5, 6
_PM_TEXT_ONELINE, _PM_TEXT_HELP, _PM_TEXT_PMID, _PM_TEXT_INDOM = 1, 2, 4, 8
_PM_LABEL_CONTEXT, _PM_LABEL_DOMAIN, _PM_LABEL_INDOM = 1 << 0, 1 << 1, 1 << 2
_PM_LABEL_CLUSTER, _PM_LABEL_ITEM, _PM_LABEL_INSTANCES = 1 << 3, 1 << 4, 1 << 5
_PM_LABEL_COMPOUND, _PM_LABEL_OPTIONAL = 1 << 6, 1 << 7
_LABEL_TYPES = frozenset(
    {
        _PM_LABEL_CONTEXT,
        _PM_LABEL_DOMAIN,
        _PM_LABEL_INDOM,
        _PM_LABEL_CLUSTER,
        _PM_LABEL_ITEM,
        _PM_LABEL_INSTANCES,
    }
)
_PMI_DOMAIN = 245  # the domain libpcp_import gives a metric added with PM_ID_NULL
_FLUSH_BYTES = 100_000  # libpcp_import's distance between temporal index entries
_MARK_GAP_NS = 1_000_000  # a <mark> is 1 msec after the last record


def pmiErrStr(code: int) -> str:
    """The message for CODE: libpcp_import's for a PMI_ERR_* code, else libpcp's."""
    message = _MESSAGES.get(code)
    if message is not None:
        return message
    from purepcp.pmapi.errors import pmErrStr

    return pmErrStr(code)


class pmiErr(Exception):
    """A log-import failure; args[0] is the code (PMI_ERR_* or a libpcp PM_ERR_*).

    str() is what PCP's binding prints: the PMI_ERR_* symbol and its message (as the
    bytes repr PCP's ctypes call returns), and a single space for any other code.
    """

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.code = args[0] if args and isinstance(args[0], int) else 0

    def __str__(self) -> str:
        symbol = pmiErrSymDict.get(self.code)
        if symbol is None:
            return " "
        return f"{symbol} {_MESSAGES[self.code].encode()!r}"

    def errno(self) -> int:
        return self.code


# -- C argument conversions, as ctypes does them for PCP's binding -------------------------


def _c_arg(value: Any, argno: int, bits: int, signed: bool) -> int:
    """VALUE as the C integer argument ARGNO: ctypes's wrap-around, or its ArgumentError."""
    if not isinstance(value, int):
        raise ctypes.ArgumentError(f"argument {argno}: TypeError: wrong type")
    value &= (1 << bits) - 1
    if signed and value >> (bits - 1):
        value -= 1 << bits
    return value


def _c_uint(value: Any, argno: int) -> int:
    return _c_arg(value, argno, 32, False)


def _c_int(value: Any, argno: int) -> int:
    return _c_arg(value, argno, 32, True)


def _c_string(value: Any) -> str:
    """A str or bytes argument as the C string libpcp_import sees (up to its first NUL)."""
    if type(value) is str and value.isascii() and "\0" not in value:
        return value  # (the common case, as it is)
    if not isinstance(value, bytes):
        value = value.encode("utf-8")  # (str's error, or AttributeError, as PCP's binding)
    return value.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")


# -- values: text to atoms as strtol, strtoul, strtoll, strtoull, strtof, strtod read them ---

_C_SPACE = "[ \t\n\v\f\r]*"
_INTEGER = re.compile(_C_SPACE + r"([+-]?)([0-9]+)")
_REAL = re.compile(
    _C_SPACE
    + r"""(?P<real>[+-]?
        (?:(?P<hex>0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?)
          |(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?
          |(?i:inf(?:inity)?)
          |(?i:nan)(?:\([0-9A-Za-z_]*\))?))""",
    re.VERBOSE,
)
_FLOAT32 = struct.Struct("f")
_FLOAT32_BITS = struct.Struct("I")


class _ConvError(Exception):
    """The text is not all a number (the PM_ERR_CONV of libpcp_import)."""


def _integer(text: str, bits: int, signed: bool) -> int:
    """TEXT read by strtol/strtoll (SIGNED) or strtoul/strtoull, to a BITS-bit result."""
    if text.isascii() and text.isdigit():
        negative, magnitude = False, int(text)  # (the common case, without the pattern)
    elif text == "":
        return 0  # (no digits, and the end pointer is at a NUL: libpcp takes that as 0)
    else:
        m = _INTEGER.fullmatch(text)
        if m is None:
            raise _ConvError
        negative, magnitude = m.group(1) == "-", int(m.group(2))
    if signed:  # strtoll clamps to the 64-bit range, then C casts to the type's width
        value = max(-(1 << 63), min((1 << 63) - 1, -magnitude if negative else magnitude))
    else:  # strtoull: an overflowing magnitude is ULLONG_MAX, else negated modulo 2**64
        value = (1 << 64) - 1 if magnitude >= 1 << 64 else (-magnitude if negative else magnitude)
    value &= (1 << bits) - 1
    if signed and value >> (bits - 1):
        value -= 1 << bits
    return value


def _real(text: str, single: bool) -> float:
    """TEXT read by strtod, or by strtof (SINGLE: rounded to a float, infinite past its range)."""
    if text == "":
        return 0.0
    m = _REAL.fullmatch(text)
    if m is None:
        raise _ConvError
    real = m.group("real").split("(", 1)[0]  # (a NaN's "(chars)" choose nothing here)
    value = float.fromhex(real) if m.group("hex") else float(real)
    if not single:
        return value
    try:
        nearest = _FLOAT32.unpack(_FLOAT32.pack(value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)
    if m.group("hex") or not _float32_tie(value, nearest):
        return nearest
    # VALUE, the double nearest the text, is halfway between two floats: the text
    # itself says which way strtof rounds (unless it is exactly halfway too)
    from decimal import Decimal
    from fractions import Fraction

    other = 2 * value - nearest
    exact = Fraction(Decimal(real))
    if exact == Fraction(value):
        return nearest
    below, above = sorted((nearest, other))
    return above if exact > Fraction(value) else below


def _float32_tie(value: float, nearest: float) -> bool:
    """Whether VALUE lies exactly halfway between NEAREST, the float it rounds to, and
    the float on its other side (where rounding the text twice may differ from once)."""
    if value == nearest or not math.isfinite(value):
        return False
    bits = _FLOAT32_BITS.unpack(_FLOAT32.pack(nearest))[0]
    step = 1 if (value > nearest) == (nearest >= 0) else -1
    other = _FLOAT32.unpack(_FLOAT32_BITS.pack(bits + step))[0]
    return value - nearest == other - value


_PARSERS = {
    _PM_TYPE_32: lambda text: _integer(text, 32, True),
    _PM_TYPE_U32: lambda text: _integer(text, 32, False),
    _PM_TYPE_64: lambda text: _integer(text, 64, True),
    _PM_TYPE_U64: lambda text: _integer(text, 64, False),
    _PM_TYPE_FLOAT: lambda text: _real(text, True),
    _PM_TYPE_DOUBLE: lambda text: _real(text, False),
    _PM_TYPE_STRING: lambda text: text,
}


def _valid_metric_name(name: str) -> bool:
    """The PMNS rule libpcp_import checks: dot-separated components, each a letter then
    letters, digits and underscores (ASCII, as C's isalpha and isalnum read them)."""
    return re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_]*)*", name) is not None


def _instance_matches(wanted: str, name: str) -> bool:
    """PCP's instance-name rule: a name with a space matches up to and including it."""
    space = wanted.find(" ")
    if space < 0:
        return wanted == name
    return name.startswith(wanted[: space + 1])


# -- the context: what a script has declared, and the archive being written -----------------


@dataclass
class _Metric:
    name: str
    pmid: int
    type: int
    indom: int
    sem: int
    units: int  # the packed pmUnits word
    written: bool = False


def _first_word(name: str) -> str | None:
    """NAME up to and including its first space (what PCP matches it by), or None."""
    space = name.find(" ")
    return name[: space + 1] if space >= 0 else None


@dataclass
class _InDom:
    """An instance domain's members in the order added, with the lookups PCP's rules
    need: a name with a space is known by its words up to the space, others whole."""

    indom: int
    names: list[str] = field(default_factory=list)
    insts: list[int] = field(default_factory=list)
    written: bool = False
    _whole: dict[str, int] = field(default_factory=dict, repr=False)
    _first: dict[str, int] = field(default_factory=dict, repr=False)
    _ids: set[int] = field(default_factory=set, repr=False)

    def find(self, wanted: str) -> int | None:
        """The instance WANTED names (by PCP's first-space rule), or None."""
        word = _first_word(wanted)
        return self._whole.get(wanted) if word is None else self._first.get(word)

    def add(self, name: str, inst: int) -> int:
        """Add NAME and INST; PMI_ERR_DUPINSTNAME or _DUPINSTID for the first member
        (in order) that either clashes with, else 0."""
        if self.find(name) is not None or inst in self._ids:
            for known, known_inst in zip(self.names, self.insts, strict=True):
                if _instance_matches(name, known):
                    return PMI_ERR_DUPINSTNAME
                if inst == known_inst:
                    return PMI_ERR_DUPINSTID
        self.names.append(name)
        self.insts.append(inst)
        self._whole.setdefault(name, inst)
        word = _first_word(name)
        if word is not None:
            self._first.setdefault(word, inst)
        self._ids.add(inst)
        self.written = False  # (the whole domain goes to the archive again)
        return 0

    def copy(self) -> _InDom:
        copy = _InDom(self.indom)
        for name, inst in zip(self.names, self.insts, strict=True):
            copy.add(name, inst)
        return copy


@dataclass(frozen=True)
class _Handle:
    metric: int  # index into the context's metrics
    inst: int


@dataclass
class _Text:
    type: int  # PM_TEXT_PMID or PM_TEXT_INDOM, | PM_TEXT_ONELINE or PM_TEXT_HELP
    ident: int
    content: str
    written: bool = False


@dataclass
class _Label:
    type: int  # one PM_LABEL_* kind
    ident: int
    labelset: LabelSet

    def kind_of(self, kind: int, ident: int, inst: int) -> bool:
        """Whether a label of KIND for IDENT (and INST) goes into this one's set."""
        if self.type != kind or self.ident != ident:
            return False
        return kind != _PM_LABEL_INSTANCES or self.labelset.inst == inst


class _Shared:
    """libpcp_import's process-wide state, shared by every context as there: the volume
    size past which the next record gets an index entry, the size at which a volume ends
    (read once, from $PCP_LOGIMPORT_MAXLOGSZ or the first archive's version), and the time
    of the last record, text or label written (pmiEnd's last index entry is at that time,
    whichever context wrote it)."""

    size = _FLUSH_BYTES
    max_volume: int | None = None
    stamp: tuple[int, int] = (0, 0)


def _max_volume(version: int) -> int:
    if _Shared.max_volume is None:
        text = os.environ.get("PCP_LOGIMPORT_MAXLOGSZ")
        if text is None:
            limit = (1 << 63) - 1 if version >= _PM_LOG_VERS03 else 0x7FFFFFFF
        else:  # (strtoull's leading number; 0, read again each time, ends every volume)
            m = _INTEGER.match(text)
            limit = _integer(m.group(), 64, False) if m else 0
        _Shared.max_volume = limit or None
        return limit
    return _Shared.max_volume


def _default_version() -> int:
    """$PCP_ARCHIVE_VERSION, from the environment or pcp.conf, else 2 (pmiStart's)."""
    text = os.environ.get("PCP_ARCHIVE_VERSION")
    if text is None:
        try:
            from purepcp.pmapi.paths import paths

            text = paths().values.get("PCP_ARCHIVE_VERSION")
        except Exception:  # (no layout: the fallback, as libpcp without pcp.conf)
            text = None
    m = re.match(r"\s*[+-]?\d+", text or "")
    version = int(m.group()) if m else _PM_LOG_VERS02
    return version if version in (_PM_LOG_VERS02, _PM_LOG_VERS03) else _PM_LOG_VERS02


class _Context:
    """One pmiStart: the metrics, instances, handles, text and labels declared, the values
    waiting for pmiWrite, and (from the first write on) the archive's writer."""

    def __init__(self, archive: str, inherit: _Context | None) -> None:
        self.archive = archive
        self.version = _default_version()
        self.hostname: str | None = None
        self.timezone: str | None = None
        self.writer: ArchiveWriter | None = None
        self.ended = False
        self.pending: dict[int, dict[int, Any] | int] = {}  # pmid -> {inst: value}, or error
        self.last_stamp: tuple[int, int] = (0, 0)  # the last record's time (the next's floor)
        self.metrics: list[_Metric] = []
        self.by_name: dict[str, int] = {}  # metric name -> index in metrics
        self.by_pmid: dict[int, _Metric] = {}
        self.indoms: dict[int, _InDom] = {}
        self.handles: list[_Handle] = []
        self.found: dict[tuple[Any, Any], _Handle] = {}  # pmiPutValue's lookups, kept
        self.texts: list[_Text] = []
        self.labels: list[_Label] = []
        if inherit is not None:
            for m in inherit.metrics:
                self._add(replace(m, written=False))
            self.indoms = {i: d.copy() for i, d in inherit.indoms.items()}
            self.handles = list(inherit.handles)
            self.texts = [replace(t, written=False) for t in inherit.texts]
            self.labels = list(inherit.labels)
            self.last_stamp = inherit.last_stamp

    # -- declarations ---------------------------------------------------------------------

    def add_metric(self, name: str, pmid: int, type_: int, indom: int, sem: int, units: int) -> int:
        if not _valid_metric_name(name):
            return PMI_ERR_BADMETRICNAME
        if name in self.by_name or pmid in self.by_pmid:
            for m in self.metrics:  # (the first clash, in order, says which)
                if m.name == name:
                    return PMI_ERR_DUPMETRICNAME
                if m.pmid == pmid:
                    return PMI_ERR_DUPMETRICID
        if type_ not in _PARSERS:
            return PMI_ERR_BADTYPE
        if sem not in _PM_SEMS:
            return PMI_ERR_BADSEM
        if pmid == _PM_ID_NULL:  # libpcp_import picks one: cluster and item from a count
            serial = len(self.metrics) + 1
            if serial >= 1 << 22:
                return PMI_ERR_DUPMETRICID
            pmid = _PMI_DOMAIN << 22 | (serial >> 10) << 10 | serial % (1 << 10)
        self._add(_Metric(name, pmid, type_, indom, sem, units))
        return 0

    def _add(self, metric: _Metric) -> None:
        self.by_name[metric.name] = len(self.metrics)
        self.by_pmid[metric.pmid] = metric
        self.metrics.append(metric)

    def add_instance(self, indom: int, name: str, inst: int) -> int:
        domain = self.indoms.get(indom)
        if domain is None:
            domain = self.indoms[indom] = _InDom(indom)
        return domain.add(name, inst)

    def handle(self, name: str, instance: str | None) -> _Handle | int:
        """The metric and instance NAME and INSTANCE name, or an error code."""
        if instance == "":
            instance = None  # (libpcp_import's allowance for Perl)
        index = self.by_name.get(name)
        if index is None:
            return _PM_ERR_NAME
        m = self.metrics[index]
        if m.indom == _PM_INDOM_NULL:
            return PMI_ERR_INSTNOTNULL if instance is not None else _Handle(index, _PM_IN_NULL)
        if instance is None:
            return PMI_ERR_INSTNULL
        domain = self.indoms.get(m.indom)
        if domain is None:
            return _PM_ERR_INDOM
        inst = domain.find(instance)
        return _PM_ERR_INST if inst is None else _Handle(index, inst)

    def get_handle(self, name: str, instance: str | None) -> int:
        found = self.handle(name, instance)
        if isinstance(found, int):
            return found
        self.handles.append(found)
        return len(self.handles)

    def put_value(self, handle: _Handle, text: str) -> int:
        """Add TEXT, a value of HANDLE's metric and instance, to the record being built."""
        metric = self.metrics[handle.metric]
        values = self.pending.get(metric.pmid)
        if values is not None and metric.indom == _PM_INDOM_NULL:
            return PMI_ERR_DUPVALUE
        if isinstance(values, int):
            return values  # (this metric's values are in error already)
        if values is not None and handle.inst in values:
            return PMI_ERR_DUPVALUE
        try:
            atom = _PARSERS[metric.type](text)
        except _ConvError:
            if values is None:  # the metric's first value: its whole set is in error
                self.pending[metric.pmid] = _PM_ERR_CONV
            return _PM_ERR_CONV
        if values is None:
            self.pending[metric.pmid] = {handle.inst: atom}
        else:
            values[handle.inst] = atom
        return 0

    def put_text(self, type_: int, class_: int, ident: int, content: str | None) -> int:
        if type_ not in (_PM_TEXT_PMID, _PM_TEXT_INDOM):
            return PMI_ERR_BADTEXTTYPE
        if class_ not in (_PM_TEXT_ONELINE, _PM_TEXT_HELP):
            return PMI_ERR_BADTEXTCLASS
        if ident == _PM_ID_NULL:
            return PMI_ERR_BADTEXTID
        if not content:
            return PMI_ERR_EMPTYTEXTCONTENT
        kind = type_ | class_
        if any(t.type == kind and t.ident == ident and t.content == content for t in self.texts):
            return PMI_ERR_DUPTEXT
        self.texts.append(_Text(kind, ident, content))
        return 0

    def put_label(self, flags: int, ident: int, inst: int, name: str, value: str) -> int:
        kind = flags & ~(_PM_LABEL_OPTIONAL | _PM_LABEL_COMPOUND)
        if kind not in _LABEL_TYPES:
            return PMI_ERR_BADLABELTYPE
        if kind == _PM_LABEL_INSTANCES and inst == _PM_IN_NULL:
            return PMI_ERR_BADLABELINSTANCE
        if ident == _PM_ID_NULL and kind != _PM_LABEL_CONTEXT:
            return PMI_ERR_BADLABELID
        if not name:
            return PMI_ERR_EMPTYLABELNAME
        if not value:
            return PMI_ERR_EMPTYLABELVALUE
        at = next((i for i, lb in enumerate(self.labels) if lb.kind_of(kind, ident, inst)), None)
        label = self.labels[at] if at is not None else None
        # a JSON literal stays bare, anything else is quoted (neither is escaped)
        bare = value.lower() in ("true", "false", "null")
        text = f'{{"{name}":{value}}}' if bare else f'{{"{name}":"{value}"}}'
        from purepcp.pmapi.errors import PMError
        from purepcp.pmapi.labels import add_labels

        try:
            labelset = add_labels(label.labelset if label else None, text, flags)
        except (PMError, ValueError):
            return PMI_ERR_ADDLABELERROR
        if kind == _PM_LABEL_INSTANCES:
            labelset = replace(labelset, inst=inst)
        if at is None:
            self.labels.append(_Label(kind, ident, labelset))
        else:
            self.labels[at] = _Label(kind, ident, labelset)
        return 0

    # -- writing ------------------------------------------------------------------------

    def _check_time(self, stamp: tuple[int, int]) -> int:
        if stamp >= self.last_stamp:
            return 0
        print(
            f"Fatal Error: timestamp {self._clock(stamp)} not greater than previous valid "
            f"timestamp {self._clock(self.last_stamp)}",
            file=sys.stderr,
        )
        return PMI_ERR_BADTIMESTAMP

    def _clock(self, stamp: tuple[int, int]) -> str:
        """STAMP as libpcp prints a timestamp: the time of day in the archive's zone."""
        from purepcp.pmapi.timewindow.epoch import localtime
        from purepcp.pmapi.timewindow.tz import host_localtime, tzinfo_for

        zone = host_localtime()
        if self.writer is not None:
            zone = tzinfo_for(self.writer.label.timezone)
        tm = localtime(stamp[0], zone)
        return f"{tm.hour:02d}:{tm.min:02d}:{tm.sec:02d}.{stamp[1]:09d}"

    def write(self, stamp: tuple[int, int]) -> int:
        """pmiWrite: the waiting values as one record at STAMP, then waiting text and labels."""
        texts_due = any(not t.written for t in self.texts)
        if not self.pending and not texts_due and not self.labels:
            return PMI_ERR_NODATA
        sts = self._check_time(stamp)
        if sts:
            return sts
        self.last_stamp = stamp
        if self.pending:
            pending, self.pending = self.pending, {}
            sts = self._put_result(stamp, self._value_sets(pending))
            if sts < 0:
                return sts
        sts = self._put_texts()
        return sts if sts < 0 else self._put_labels()

    def put_result(self, stamp: tuple[int, int], vsets: list[ValueSet]) -> int:
        """pmiPutResult: a whole record from the caller, written at once."""
        sts = self._check_time(stamp)
        if sts == 0:
            sts = self._put_result(stamp, vsets)
            self.last_stamp = stamp
        return sts

    def _value_sets(self, pending: dict[int, dict[int, Any] | int]) -> list[ValueSet]:
        from purepcp.pmapi.values import ValueSet

        types = {pmid: m.type for pmid, m in self.by_pmid.items()}
        sets = []
        for pmid, values in pending.items():
            if isinstance(values, int):
                sets.append(ValueSet.of_error(pmid, values))
                continue
            pairs = sorted(values.items())  # (instances are signed: libpcp's order)
            if pairs[0][0] < 0:
                pairs = [(inst & 0xFFFFFFFF, atom) for inst, atom in pairs]
            sets.append(ValueSet.of_atoms(pmid, types[pmid], pairs))
        return sets

    def _start(self, stamp: tuple[int, int]) -> ArchiveWriter:
        """The archive's writer, its files made at the first write (labelled with STAMP)."""
        if self.writer is not None:
            return self.writer
        import socket

        from purepcp.pmapi.archive.writer import ArchiveWriter
        from purepcp.pmapi.timewindow.hostzone import pcp_timezone, pcp_zoneinfo
        from purepcp.pmapi.values import Timestamp

        hostname = self.hostname if self.hostname is not None else socket.gethostname()
        if self.timezone is not None:
            timezone, zoneinfo = self.timezone, ""
        else:
            timezone, zoneinfo = pcp_timezone(), pcp_zoneinfo() or ""
        self.writer = ArchiveWriter(
            self.archive,
            hostname=hostname,
            timezone=timezone,
            start=Timestamp(*stamp),
            version=self.version,
            zoneinfo=zoneinfo,
        )
        return self.writer

    def _start_or_say(self, stamp: tuple[int, int]) -> ArchiveWriter:
        """_start, saying on stderr why the files cannot be made, as libpcp does."""
        from purepcp.pmapi.errors import PMError

        try:
            return self._start(stamp)
        except PMError as exc:
            why = (exc.detail or exc.message).replace("cannot create", "failed to create", 1)
            print(f"__pmLogNewFile: {why}", file=sys.stderr)
            raise

    def _describe(self, writer: ArchiveWriter, pmid: int, stamp: Timestamp) -> bool:
        """Write PMID's descriptor and instance domain if the archive lacks them (True then)."""
        m = self.by_pmid.get(pmid)
        if m is None:
            return False
        wrote = False
        if not m.written:
            from purepcp.pmapi.desc import Desc
            from purepcp.pmapi.units import Units

            desc = Desc(m.pmid, m.type, m.indom, m.sem, Units.unpack(m.units))
            writer.put_desc(desc, [m.name])
            m.written = wrote = True
        if m.indom != _PM_INDOM_NULL:
            wrote = self._describe_indom(writer, m.indom, stamp) or wrote
        return wrote

    def _describe_indom(self, writer: ArchiveWriter, indom: int, stamp: Timestamp) -> bool:
        domain = self.indoms.get(indom)
        if domain is None or domain.written:
            return False
        writer.put_indom(stamp, indom, domain.insts, domain.names)
        domain.written = True
        return True

    def _put_result(self, stamp: tuple[int, int], vsets: list[ValueSet]) -> int:
        from purepcp.pmapi.archive.writer import encode_record
        from purepcp.pmapi.errors import PMError
        from purepcp.pmapi.values import Result, Timestamp

        _Shared.stamp = stamp
        ts = Timestamp(*stamp)
        try:
            writer = self._start_or_say(stamp)
            meta_before = writer.meta_offset
            data = encode_record(Result(ts, tuple(vsets)), writer.version)
            described = False
            for vs in vsets:
                described = self._describe(writer, vs.pmid, ts) or described
            if writer.log_offset + len(data) >= _max_volume(writer.version):
                writer.new_volume(ts, index=False)
                _Shared.size = _FLUSH_BYTES
                described = True
            if described or writer.log_offset + len(data) > _Shared.size:
                # the entry points before this record and the metadata it brought
                writer.put_index(ts, meta_before, writer.log_offset)
                _Shared.size = writer.log_offset + _FLUSH_BYTES
            writer.put_record_bytes(data, ts)
        except PMError as exc:
            return exc.code
        return 0

    def _put_texts(self) -> int:
        from purepcp.pmapi.errors import PMError
        from purepcp.pmapi.values import Timestamp

        _Shared.stamp = stamp = self.last_stamp
        ts = Timestamp(*stamp)
        try:
            writer = self._start_or_say(stamp)
            described = False
            for text in self.texts:
                if text.written:
                    continue
                if text.type & _PM_TEXT_PMID:
                    described = self._describe(writer, text.ident, ts) or described
                elif text.type & _PM_TEXT_INDOM:
                    described = self._describe_indom(writer, text.ident, ts) or described
                writer.put_text(text.type, text.ident, text.content)
                text.written = True
            if described:
                writer.put_index(ts)
        except PMError as exc:
            return exc.code
        return 0

    def _put_labels(self) -> int:
        from purepcp.pmapi.archive.format import LabelRecord
        from purepcp.pmapi.errors import PMError
        from purepcp.pmapi.values import Timestamp

        _Shared.stamp = stamp = self.last_stamp
        ts = Timestamp(*stamp)
        try:
            writer = self._start_or_say(stamp)
            described = False
            for label in self.labels:
                if label.type == _PM_LABEL_ITEM:
                    described = self._describe(writer, label.ident, ts) or described
                elif label.type in (_PM_LABEL_INDOM, _PM_LABEL_INSTANCES):
                    described = self._describe_indom(writer, label.ident, ts) or described
                writer.put_labels(LabelRecord(ts, label.type, label.ident, (label.labelset,)))
            self.labels = []
            if described:
                writer.put_index(ts)
        except PMError as exc:
            return exc.code
        return 0

    def put_mark(self) -> int:
        """A <mark> 1 msec after the last record (none before any record)."""
        if self.last_stamp == (0, 0) or self.writer is None:
            return 0
        from purepcp.pmapi.errors import PMError
        from purepcp.pmapi.values import Timestamp

        sec, nsec = self.last_stamp
        try:
            self.writer.put_mark(Timestamp.from_ns(sec * 1_000_000_000 + nsec + _MARK_GAP_NS))
        except PMError as exc:
            return exc.code
        return 0

    def end(self) -> int:
        """pmiEnd: a last index entry, and the files closed."""
        self.ended = True
        writer, self.writer = self.writer, None
        if writer is None:
            return 0
        from purepcp.pmapi.errors import PMError
        from purepcp.pmapi.values import Timestamp

        try:
            writer.put_index(Timestamp(*_Shared.stamp))
            writer.close()
        except PMError as exc:
            writer._close_all()
            return exc.code
        return 0

    def dump(self) -> str:
        """pmiDump's report on this context."""
        lines = [f" archive: {self.archive}"]
        state = "end" if self.ended else "active" if self.writer is not None else "start"
        lines.append(
            f"  state: {3 if self.ended else 2 if self.writer else 1} ({state}) hostname: "
            f"{self.hostname or '<undefined>'} timezone: {self.timezone or '<undefined>'}"
        )
        if not self.metrics:
            lines.append("  No metrics.")
        for i, m in enumerate(self.metrics):
            lines.append(f"  metric[{i}] name={m.name} pmid={_id_str(m.pmid)}")
            lines.append(_desc_text(m))
        if not self.indoms:
            lines.append("  No indoms.")
        for i, d in enumerate(self.indoms.values()):
            lines.append(f"  indom[{i}] indom={_indom_str(d.indom)}")
            lines += [
                f"   instance[{j}] {n} ({k})"
                for j, (n, k) in enumerate(zip(d.names, d.insts, strict=True))
            ]
        if not self.handles:
            lines.append("  No handles.")
        for i, h in enumerate(self.handles):
            m = self.metrics[h.metric]
            lines.append(f"  handle[{i}] metric={m.name} ({_id_str(m.pmid)}) instance={h.inst}")
        lines += self._dump_metadata()
        if not self.pending:
            lines.append("  No pmResult.")
        for pmid, values in self.pending.items():
            shown = values if isinstance(values, int) else list(values)
            lines.append(f"  pending {_id_str(pmid)}: {shown}")
        return "\n".join(lines)

    def _dump_metadata(self) -> list[str]:
        lines = [] if self.texts else ["  No text."]
        for i, t in enumerate(self.texts):
            what = f"pmid={_id_str(t.ident)}" if t.type & _PM_TEXT_PMID else ""
            what = what or f"indom={_indom_str(t.ident)}"
            shown = f"[{t.content}]" if t.type & _PM_TEXT_ONELINE else f"\n{t.content}"
            lines.append(f"  text[{i}] {what} {shown}")
        if not self.labels:
            lines.append("  No labels.")
        for i, label in enumerate(self.labels):
            json = label.labelset.json.decode("utf-8", "replace")
            lines.append(f"  label[{i}] type={label.type} ident={label.ident:#x} {json}")
        return lines


def _desc_text(metric: _Metric) -> str:
    from purepcp.pmapi.desc import Desc
    from purepcp.pmapi.units import Units

    units = Units.unpack(metric.units)
    return Desc(metric.pmid, metric.type, metric.indom, metric.sem, units).describe()


def _id_str(pmid: int) -> str:
    if pmid == _PM_ID_NULL:
        return "PM_ID_NULL"
    return f"{(pmid >> 22) & 0x1FF}.{(pmid >> 10) & 0xFFF}.{pmid & 0x3FF}"


def _indom_str(indom: int) -> str:
    if indom == _PM_INDOM_NULL:
        return "PM_INDOM_NULL"
    return f"{(indom >> 22) & 0x1FF}.{indom & 0x3FFFFF}"


class _Registry:
    """libpcp_import's table of contexts: numbered from 1 in order of pmiStart, and the
    one used last (a new context inherits from it)."""

    contexts: ClassVar[list[_Context]] = []
    current: _Context | None = None

    @classmethod
    def add(cls, context: _Context) -> int:
        """Number CONTEXT and make it current; the first also arranges that archives
        still open at exit are finished then (PCP's objects end theirs when collected
        at exit; an exit handler runs while everything they need is still there)."""
        if not cls.contexts:
            import atexit

            atexit.register(cls.end_all)
        cls.contexts.append(context)
        cls.current = context
        return len(cls.contexts)

    @classmethod
    def end_all(cls) -> None:
        for context in cls.contexts:
            if not context.ended:
                with contextlib.suppress(Exception):
                    context.end()


# -- PCP's Python API --------------------------------------------------------------------


_UNIT_FIELDS = ("dimSpace", "dimTime", "dimCount", "scaleSpace", "scaleTime", "scaleCount")


def _units_word(units: Any) -> int:
    """A pmUnits (PCP's shape) as the 32-bit word archives hold; ctypes's ArgumentError
    for anything else, as PCP's binding raises it."""
    try:
        nibbles = [getattr(units, name) & 0xF for name in _UNIT_FIELDS]
    except (AttributeError, TypeError):
        what = type(units).__name__
        raise ctypes.ArgumentError(
            f"argument 6: TypeError: expected pmUnits instance instead of {what}"
        ) from None
    word = 0
    for nibble in nibbles:
        word = word << 4 | nibble
    return word << 8


class pmiLogImport:
    """A PCP archive being made from an external source (a libpcp_import context)."""

    def __init__(self, path: str | bytes, inherit: int = 0) -> None:
        if not isinstance(path, bytes):
            path = path.encode("utf-8")
        self._path = path
        parent = _Registry.current if inherit and _Registry.contexts else None
        context = _Context(os.fsdecode(path.split(b"\0", 1)[0]), parent)
        self._context: _Context | None = context
        self._ctx = _Registry.add(context)

    def read_path(self) -> bytes:
        """The archive's base name (as bytes, as PCP's binding keeps it)."""
        return self._path

    def read_ctx(self) -> int:
        """The context's number (from 1), or -1 once ended."""
        return self._ctx

    path = property(read_path)
    ctx = property(read_ctx)

    def __del__(self) -> None:
        context = getattr(self, "_context", None)
        if context is not None and not context.ended:
            with contextlib.suppress(Exception):  # (at exit: nothing left to tell)
                context.end()
        self._ctx = -1

    def _use(self) -> _Context:
        context = self._context
        if context is None:
            raise pmiErr(_PM_ERR_NOCONTEXT)
        _Registry.current = context
        return context

    @staticmethod
    def _check(status: int) -> int:
        if status < 0:
            raise pmiErr(status)
        return status

    # -- helpers: identifiers and units ----------------------------------------------------

    @staticmethod
    def pmiID(domain: int, cluster: int, item: int) -> int:
        """The pmID DOMAIN.CLUSTER.ITEM."""
        domain, cluster, item = _c_int(domain, 1), _c_int(cluster, 2), _c_int(item, 3)
        return (domain & 0x1FF) << 22 | (cluster & 0xFFF) << 10 | item & 0x3FF

    @staticmethod
    def pmiCluster(domain: int, cluster: int) -> int:
        """The pmID DOMAIN.CLUSTER.0."""
        domain, cluster = _c_int(domain, 1), _c_int(cluster, 2)
        return (domain & 0x1FF) << 22 | (cluster & 0xFFF) << 10

    @staticmethod
    def pmiInDom(domain: int, serial: int) -> int:
        """The pmInDom DOMAIN.SERIAL."""
        domain, serial = _c_int(domain, 1), _c_int(serial, 2)
        return (domain & 0x1FF) << 22 | serial & 0x3FFFFF

    @staticmethod
    def pmiUnits(
        dim_space: int,
        dim_time: int,
        dim_count: int,
        scale_space: int,
        scale_time: int,
        scale_count: int,
    ) -> Any:
        """A pmUnits of these dimensions and scales (each kept to its 4 bits)."""
        values = (dim_space, dim_time, dim_count, scale_space, scale_time, scale_count)
        from .structures import pmUnits

        units = pmUnits()
        for argno, (name, value) in enumerate(zip(_UNIT_FIELDS, values, strict=True), 1):
            nibble = _c_int(value, argno) & 0xF
            setattr(units, name, nibble - 16 if nibble > 7 else nibble)
        units.pad = 0
        return units

    # -- the archive's label ---------------------------------------------------------------

    def pmiSetHostname(self, hostname: str | bytes) -> int:
        """The host named in the archive's label (this host's name otherwise)."""
        self._use().hostname = _c_string(hostname)
        return 0

    def pmiSetTimezone(self, timezone: str | bytes) -> int:
        """The zone named in the archive's label (this host's otherwise)."""
        self._use().timezone = _c_string(timezone)
        return 0

    def pmiSetVersion(self, version: int) -> int:
        """The archive's format version, 2 or 3 (before the first write)."""
        context = self._use()
        if not isinstance(version, int):
            version = _PM_LOG_VERS02
        if version not in (_PM_LOG_VERS02, _PM_LOG_VERS03):
            raise pmiErr(PMI_ERR_BADVERSION)
        if context.writer is None:
            context.version = version
        return 0

    # -- metrics and instances -------------------------------------------------------------

    def pmiAddMetric(
        self, name: str | bytes, pmid: int, typed: int, indom: int, sem: int, units: Any
    ) -> int:
        """Declare a metric (PM_ID_NULL: one is chosen in domain 245)."""
        context = self._use()
        name = _c_string(name)
        pmid, typed, indom = _c_uint(pmid, 2), _c_int(typed, 3), _c_uint(indom, 4)
        sem, word = _c_int(sem, 5), _units_word(units)
        return self._check(context.add_metric(name, pmid, typed, indom, sem, word))

    def pmiAddInstance(self, indom: int, instance: str | bytes, instid: int) -> int:
        """Add INSTANCE (name) and INSTID (number) to INDOM."""
        context = self._use()
        name = _c_string(instance)
        return self._check(context.add_instance(_c_uint(indom, 1), name, _c_int(instid, 3)))

    # -- values ------------------------------------------------------------------------------

    def pmiPutValue(self, name: str | bytes, inst: str | bytes | None, value: str | bytes) -> int:
        """A value (as text) of metric NAME, instance INST (None for a singular metric),
        for the next pmiWrite."""
        context = self._use()
        try:  # (a name and instance found before name the same metric and instance now)
            found = context.found.get((name, inst))
        except TypeError:  # (unhashable: _c_string says what PCP's binding says)
            found = None
        if found is None:
            found = context.handle(_c_string(name), None if inst is None else _c_string(inst))
            if isinstance(found, int):
                _c_string(value)  # (a bad value's exception comes before the lookup's)
                raise pmiErr(found)
            context.found[name, inst] = found
        return self._check(context.put_value(found, _c_string(value)))

    def pmiGetHandle(self, name: str | bytes, inst: str | bytes | None) -> int:
        """A handle (from 1) for metric NAME and instance INST, for pmiPutValueHandle."""
        context = self._use()
        instance = None if inst is None else _c_string(inst)
        return self._check(context.get_handle(_c_string(name), instance))

    def pmiPutValueHandle(self, handle: int, value: str | bytes) -> int:
        """pmiPutValue for the metric and instance of HANDLE."""
        context = self._use()
        text = _c_string(value)  # (PCP's binding encodes before ctypes converts the rest)
        handle = _c_int(handle, 1)
        if not 0 < handle <= len(context.handles):
            raise pmiErr(PMI_ERR_BADHANDLE)
        return self._check(context.put_value(context.handles[handle - 1], text))

    def pmiWrite(self, sec: int, usec: int) -> int:
        """Write the values put since the last write as one record at SEC.USEC (now, if
        SEC is negative), then any text and labels waiting."""
        context = self._use()
        sec, usec = _c_arg(sec, 1, 64, True), _c_int(usec, 2)
        return self._check(context.write(_stamp(sec, usec * 1000)))

    def pmiHighResWrite(self, sec: int, nsec: int) -> int:
        """pmiWrite with a time in nanoseconds."""
        context = self._use()
        sec, nsec = _c_arg(sec, 1, 64, True), _c_int(nsec, 2)
        return self._check(context.write(_stamp(sec, nsec)))

    def put_result(self, result: Any) -> int:
        """pmiPutResult: write RESULT (a pmResult, or a pointer to one) as a record now."""
        context = self._use()
        stamp, vsets = _result_sets(result, highres=False)
        return self._check(context.put_result(stamp, vsets))

    def put_highres_result(self, result: Any) -> int:
        """pmiPutHighResResult: put_result for a pmHighResResult (nanosecond time)."""
        context = self._use()
        stamp, vsets = _result_sets(result, highres=True)
        return self._check(context.put_result(stamp, vsets))

    def pmiPutMark(self) -> int:
        """A <mark> record (a gap in the data), 1 msec after the last record."""
        return self._check(self._use().put_mark())

    # -- metadata ---------------------------------------------------------------------------

    def pmiPutText(self, typ: int, cls: int, ident: int, content: str | bytes) -> int:
        """One-line (PM_TEXT_ONELINE) or help (PM_TEXT_HELP) text for a metric
        (PM_TEXT_PMID) or an instance domain (PM_TEXT_INDOM), written by the next pmiWrite."""
        context = self._use()
        text = _c_string(content)
        typ, cls, ident = _c_uint(typ, 1), _c_uint(cls, 2), _c_uint(ident, 3)
        return self._check(context.put_text(typ, cls, ident, text))

    def pmiPutLabel(
        self, typ: int, ident: int, inst: int, name: str | bytes, content: str | bytes
    ) -> int:
        """A label NAME=CONTENT of kind TYP (PM_LABEL_*) for IDENT (and INST), written by
        the next pmiWrite."""
        context = self._use()
        label, text = _c_string(name), _c_string(content)
        typ, ident, inst = _c_uint(typ, 1), _c_uint(ident, 2), _c_uint(inst, 3)
        return self._check(context.put_label(typ, ident, inst, label, text))

    @staticmethod
    def pmiDump() -> None:
        """Describe the current context on stderr (diagnostic)."""
        contexts, current = _Registry.contexts, _Registry.current
        if current is None:
            print(
                f"pmiDump: context -1 of {len(contexts)} Error: current context is not defined.",
                file=sys.stderr,
            )
            return
        number = contexts.index(current)
        print(f"pmiDump: context {number} of {len(contexts)}{current.dump()}", file=sys.stderr)

    def pmiEnd(self) -> int:
        """Finish the archive: a last index entry, and the files closed."""
        context = self._use()
        self._context = None
        self._ctx = -1
        return self._check(context.end())


def _stamp(sec: int, nsec: int) -> tuple[int, int]:
    """A write's time: now when SEC is negative (as libpcp's __pmGetTimestamp)."""
    if sec < 0:
        import time

        return divmod(time.time_ns(), 1_000_000_000)
    return (sec, nsec)


def _result_sets(result: Any, highres: bool) -> tuple[tuple[int, int], list[ValueSet]]:
    """A ctypes pmResult or pmHighResResult (or a pointer to one) as a time and ValueSets."""
    from array import array

    from purepcp.pmapi.values import ARRAY_CODES, ValueSet, block_atom

    from .structures import pmHighResResult, pmResult

    shape = pmHighResResult if highres else pmResult
    if isinstance(result, ctypes.Structure):
        result = ctypes.pointer(result)
    res = ctypes.cast(result, ctypes.POINTER(shape)).contents
    ts = res.timestamp
    stamp = (ts.tv_sec, ts.tv_nsec if highres else ts.tv_usec * 1000)
    vset_type = type(res.vset)._type_  # POINTER(pmValueSet)
    first = ctypes.addressof(res) + shape.vset.offset
    pointers = (vset_type * res.numpmid).from_address(first)
    sets = []
    for pointer in pointers:
        vs = pointer.contents
        if vs.numval < 0:
            sets.append(ValueSet.of_error(vs.pmid, vs.numval))
            continue
        vlist = (type(vs.vlist)._type_ * vs.numval).from_address(
            ctypes.addressof(vs) + type(vs).vlist.offset
        )
        ordered = sorted(vlist, key=lambda v: v.inst)  # (as libpcp sorts the caller's)
        insts = array("I", (v.inst & 0xFFFFFFFF for v in ordered))
        if vs.valfmt == 0:  # PM_VAL_INSITU: the words as they are
            words = array("I", (v.value.lval & 0xFFFFFFFF for v in ordered))
            sets.append(ValueSet(vs.pmid, vs.numval, 0, 255, insts, words))
            continue
        vtype, values = 255, []
        for v in ordered:
            block = v.value.pval.contents
            vtype = block.vtype
            payload = ctypes.string_at(ctypes.addressof(block) + 4, block.vlen - 4)
            code = ARRAY_CODES.get(vtype)  # (a block in memory holds this host's byte order)
            values.append(
                struct.unpack("=" + code, payload)[0] if code else block_atom(vtype, payload)
            )
        sets.append(ValueSet(vs.pmid, vs.numval, vs.valfmt, vtype, insts, tuple(values)))
    return stamp, sets
