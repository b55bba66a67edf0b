"""MMV (memory-mapped values) files, as mmv(5) and libpcp_mmv lay them out: sans-IO.

An application publishes metrics in one file under $PCP_TMP_DIR/mmv/; the mmv agent
maps it read-only and exports its metrics.  The file is a header, a table of contents,
then sections of fixed-size records: instance domains, instances, metrics, values,
strings (256 bytes each) and labels.  Records point at each other by byte offsets from
the start of the file.  Version 1 keeps metric and instance names inline (64 bytes),
version 2 puts them in the strings section, version 3 adds labels.  Integers are in
the writer's native byte order.

`build` lays out a file's bytes from a `Description`, in libpcp_mmv's order (so a file
is the same, byte for byte, as libpcp_mmv's but for the generation and the pid);
`read` turns a file's bytes back into records with pmdammv's checks (`MMVError` with
the errno pmdammv gives a file it refuses; a section that is out of bounds or over
pmdammv's limits is left out, as pmdammv leaves it).  Each record layout below is one
struct format with a NamedTuple of PCP's field names.
"""

from __future__ import annotations

import errno
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import NamedTuple

MMV_NAMEMAX = 64
MMV_LABELMAX = 244
MMV_STRINGMAX = 256

MMV_VERSION1 = 1  # names inline
MMV_VERSION2 = 2  # names in the strings section
MMV_VERSION3 = 3  # + labels

MMV_FLAG_NOPREFIX = 0x1  # names not prefixed by the file's name
MMV_FLAG_PROCESS = 0x2  # the file lives as long as its writer's process
MMV_FLAG_SENTINEL = 0x4  # all-ones (NaN, empty string) values mean "no value"

MMV_TYPE_NOSUPPORT = -1
MMV_TYPE_I32 = 0
MMV_TYPE_U32 = 1
MMV_TYPE_I64 = 2
MMV_TYPE_U64 = 3
MMV_TYPE_FLOAT = 4
MMV_TYPE_DOUBLE = 5
MMV_TYPE_STRING = 6
MMV_TYPE_ELAPSED = 9

MMV_SEM_COUNTER = 1
MMV_SEM_INSTANT = 3
MMV_SEM_DISCRETE = 4

MMV_INDOM_NULL = 0xFFFFFFFF

# label value types (mmv_value_type_t)
MMV_STRING_TYPE = 1
MMV_NUMBER_TYPE = 2
MMV_BOOLEAN_TYPE = 3
MMV_NULL_TYPE = 4
MMV_ARRAY_TYPE = 5
MMV_MAP_TYPE = 6

#: pmdammv's limits on a file's sections
MAX_MMV_ITEMS = (1 << 10) - 1
MAX_MMV_SERIAL = (1 << 22) - 1
MAX_MMV_CLUSTER = (1 << 12) - 1
MAX_MMV_LABELS = (1 << 8) - 1


class TocType(IntEnum):
    """What a table-of-contents entry points at (mmv_toc_type_t)."""

    MMV_TOC_INDOMS = 1
    MMV_TOC_INSTANCES = 2
    MMV_TOC_METRICS = 3
    MMV_TOC_VALUES = 4
    MMV_TOC_STRINGS = 5
    MMV_TOC_LABELS = 6


# -- the on-disk records: one struct format and one NamedTuple each ---------------------


class DiskHeader(NamedTuple):
    magic: bytes
    version: int
    g1: int  # generation: set when writing starts ...
    g2: int  # ... and copied here when it is done
    tocs: int
    flags: int
    process: int
    cluster: int


class DiskToc(NamedTuple):
    type: int
    count: int
    offset: int


class DiskIndom(NamedTuple):
    serial: int
    count: int
    offset: int  # of its first instance
    shorttext: int  # string offsets, 0 for none
    helptext: int


class DiskInstance(NamedTuple):
    indom: int  # offset of its indom record
    padding: int
    internal: int
    external: bytes | int  # the name (version 1) or its string's offset


class DiskMetric(NamedTuple):
    name: bytes | int  # the name (version 1) or its string's offset
    item: int
    type: int
    semantics: int
    dimension: int  # pmUnits, as its native 32-bit word
    indom: int
    padding: int
    shorttext: int
    helptext: int


class DiskValue(NamedTuple):
    value: bytes  # pmAtomValue, 8 bytes
    extra: int  # ELAPSED: the negated start of a timed section; STRING: its offset
    metric: int  # offset of its metric record
    instance: int  # offset of its instance record, 0 for none


class DiskLabel(NamedTuple):
    flags: int
    identity: int
    internal: int
    payload: bytes


HEADER = struct.Struct("=4siQQiIii")
TOC = struct.Struct("=iiQ")
INDOM = struct.Struct("=IIQQQ")
INSTANCE1 = struct.Struct(f"=QIi{MMV_NAMEMAX}s")
INSTANCE2 = struct.Struct("=QIiQ")
METRIC1 = struct.Struct(f"={MMV_NAMEMAX}sIiiIiIQQ")
METRIC2 = struct.Struct("=QIiiIiIQQ")
VALUE = struct.Struct("=8sqQQ")
STRING = struct.Struct(f"={MMV_STRINGMAX}s")
LABEL = struct.Struct(f"=IIi{MMV_LABELMAX}s")

#: Where g2 sits in the header: a writer sets it last, when the file is complete.
G2_OFFSET = 16
MAGIC = b"MMV\0"

#: How each metric type's value sits in the 8-byte pmAtomValue (STRING: its length).
ATOM = {
    MMV_TYPE_I32: struct.Struct("=i"),
    MMV_TYPE_U32: struct.Struct("=I"),
    MMV_TYPE_I64: struct.Struct("=q"),
    MMV_TYPE_U64: struct.Struct("=Q"),
    MMV_TYPE_FLOAT: struct.Struct("=f"),
    MMV_TYPE_DOUBLE: struct.Struct("=d"),
    MMV_TYPE_STRING: struct.Struct("=i"),
    MMV_TYPE_ELAPSED: struct.Struct("=q"),
}
EXTRA = struct.Struct("=q")  # a value's extra field, 8 bytes after the atom


class MMVError(Exception):
    """A description libpcp_mmv refuses, or a file pmdammv refuses: errno in `code`."""

    def __init__(self, code: int, message: str = "") -> None:
        super().__init__(message or errno.errorcode.get(code, str(code)))
        self.code = code


# -- what a file says -------------------------------------------------------------------


@dataclass(frozen=True)
class Instance:
    """One instance of an instance domain: internal id and external name."""

    internal: int
    external: str


@dataclass(frozen=True)
class Indom:
    """An instance domain: its serial, instances, and help texts (None: absent)."""

    serial: int
    instances: tuple[Instance, ...] = ()
    shorttext: str | None = None
    helptext: str | None = None


@dataclass(frozen=True)
class Metric:
    """A metric: name (below the file's prefix), item, type, semantics, units (the
    packed pmUnits word), instance domain serial (0 or MMV_INDOM_NULL: none), texts."""

    name: str
    item: int
    type: int
    semantics: int = 0
    dimension: int = 0
    indom: int = 0
    shorttext: str | None = None
    helptext: str | None = None

    @property
    def singular(self) -> bool:
        return self.indom in (0, MMV_INDOM_NULL)


@dataclass(frozen=True)
class Label:
    """A label record: PM_LABEL_* flags, the identity it labels, an instance, JSON."""

    flags: int
    identity: int
    internal: int
    payload: str


@dataclass(frozen=True)
class Description:
    """What a writer publishes: what `build` lays out."""

    metrics: tuple[Metric, ...]
    indoms: tuple[Indom, ...] = ()
    labels: tuple[Label, ...] = ()
    cluster: int = 0
    flags: int = 0
    version: int | None = None  # None: the least version that holds it


@dataclass(frozen=True)
class Layout:
    """A built file: its bytes, and where each value record is.

    `values` maps (metric name, instance name or None) to the value record's offset;
    `types` maps a value record's offset to its metric's type.
    """

    data: bytes
    version: int
    values: dict[tuple[str, str | None], int] = field(default_factory=dict)
    types: dict[int, int] = field(default_factory=dict)


# -- writing ----------------------------------------------------------------------------


def _encoded(text: str | bytes) -> bytes:
    return text if isinstance(text, bytes) else text.encode("utf-8")


def check(desc: Description, *, inline: bool = False) -> int:
    """The version DESC needs, as libpcp_mmv's checks work it out; MMVError(errno)
    for what they refuse (ESRCH, E2BIG, EINVAL).  INLINE: the checks of
    mmv_stats_init, whose names are fixed 64-byte fields (always version 1)."""
    version = MMV_VERSION1
    serials = {i.serial for i in desc.indoms}
    for indom in desc.indoms:
        if indom.serial in (0, MMV_INDOM_NULL):
            raise MMVError(errno.ESRCH, f"indom serial {indom.serial} is reserved")
        for text in (indom.shorttext, indom.helptext):
            if text is not None and len(_encoded(text)) >= MMV_STRINGMAX:
                raise MMVError(errno.E2BIG, "indom help text too long")
        for inst in () if inline else indom.instances:
            size = len(_encoded(inst.external))
            if size == 0:
                raise MMVError(errno.EINVAL, "empty instance name")
            if size >= MMV_STRINGMAX:
                raise MMVError(errno.E2BIG, "instance name too long")
            if size >= MMV_NAMEMAX:
                version = MMV_VERSION2
    for metric in desc.metrics:
        size = len(_encoded(metric.name))
        if not MMV_TYPE_NOSUPPORT <= metric.type <= MMV_TYPE_ELAPSED or size == 0:
            raise MMVError(errno.EINVAL, f"bad metric type or name: {metric.name!r}")
        if size >= MMV_STRINGMAX:
            raise MMVError(errno.E2BIG, "metric name too long")
        if size >= MMV_NAMEMAX and not inline:
            version = MMV_VERSION2
        if not metric.singular and metric.indom not in serials:
            raise MMVError(errno.ESRCH, f"{metric.name}: no indom {metric.indom}")
    if desc.labels:
        version = MMV_VERSION3
    return version


def _cstring(text: str | bytes | None, size: int) -> bytes:
    """TEXT as strncpy leaves it in SIZE bytes, with the last one NUL."""
    return _encoded(text or b"")[: size - 1]


def _stored(text: str | bytes, size: int) -> str:
    """TEXT as a reader finds it in a SIZE-byte field."""
    return _cstring(text, size).split(b"\0", 1)[0].decode("utf-8", "surrogateescape")


def generation(seconds: int, microseconds: int) -> int:
    """A header generation number from a time of day, as libpcp_mmv makes them."""
    return (seconds & 0xFFFFFFFF) << 32 | (microseconds & 0xFFFFFFFF)


class _Strings:
    """The strings section as it fills: each text's offset, in order of arrival."""

    def __init__(self, start: int) -> None:
        self.start = start
        self.payloads: list[bytes] = []

    def add(self, text: str | bytes | None) -> int:
        offset = self.start + len(self.payloads) * STRING.size
        self.payloads.append(_cstring(text, MMV_STRINGMAX))
        return offset

    def text(self, text: str | bytes | None) -> int:
        """Offset of TEXT added, 0 for an absent text."""
        return 0 if text is None else self.add(text)


def build(desc: Description, *, gen: int, process: int, version: int | None = None) -> Layout:
    """The bytes of the file DESC describes, in libpcp_mmv's layout and order.

    GEN goes in both generation fields (the file is complete); PROCESS is the
    writer's pid.  VERSION overrides the one the description needs (a version 1
    file truncates long names, as mmv_stats_init does).
    """
    needed = check(desc, inline=version == MMV_VERSION1)
    version = version or desc.version or needed
    v1 = version == MMV_VERSION1
    indoms, metrics = desc.indoms, desc.metrics
    by_serial = {i.serial: i for i in indoms}
    inst_rec = INSTANCE1 if v1 else INSTANCE2
    metric_rec = METRIC1 if v1 else METRIC2
    name_size = MMV_NAMEMAX if v1 else MMV_STRINGMAX

    def instances_of(m: Metric) -> Sequence[Instance | None]:
        return (None,) if m.singular else by_serial[m.indom].instances

    nvalues = sum(len(instances_of(m)) for m in metrics)
    nstrings = (
        (0 if v1 else sum(len(i.instances) for i in indoms) + len(metrics))
        + sum(len(instances_of(m)) for m in metrics if m.type == MMV_TYPE_STRING)
        + sum((m.shorttext is not None) + (m.helptext is not None) for m in metrics)
        + sum((i.shorttext is not None) + (i.helptext is not None) for i in indoms)
    )
    tocs = 2 + (2 if indoms else 0) + (1 if nstrings else 0) + (1 if desc.labels else 0)
    indoms_at = HEADER.size + tocs * TOC.size
    instances_at = indoms_at + len(indoms) * INDOM.size
    metrics_at = instances_at + sum(len(i.instances) for i in indoms) * inst_rec.size
    values_at = metrics_at + len(metrics) * metric_rec.size
    strings_at = values_at + nvalues * VALUE.size
    labels_at = strings_at + nstrings * STRING.size
    strings = _Strings(strings_at)

    toc = []
    if indoms:
        toc.append(DiskToc(TocType.MMV_TOC_INDOMS, len(indoms), indoms_at))
        total = sum(len(i.instances) for i in indoms)
        toc.append(DiskToc(TocType.MMV_TOC_INSTANCES, total, instances_at))
    toc.append(DiskToc(TocType.MMV_TOC_METRICS, len(metrics), metrics_at))
    toc.append(DiskToc(TocType.MMV_TOC_VALUES, nvalues, values_at))
    if nstrings:
        toc.append(DiskToc(TocType.MMV_TOC_STRINGS, nstrings, strings_at))
    if desc.labels:
        toc.append(DiskToc(TocType.MMV_TOC_LABELS, len(desc.labels), labels_at))

    # where each indom's instances start, and each instance's record
    first: dict[int, int] = {}
    inst_at: dict[tuple[int, int], int] = {}
    at = instances_at
    for i in indoms:
        first[i.serial] = at
        for k in range(len(i.instances)):
            inst_at[i.serial, k] = at + k * inst_rec.size
        at += len(i.instances) * inst_rec.size

    # strings, in libpcp_mmv's order: v2 names, string values, metric help, indom help
    inst_names = [strings.add(x.external) for i in indoms for x in i.instances] if not v1 else []
    metric_names = [strings.add(m.name) for m in metrics] if not v1 else []
    value_recs: list[DiskValue] = []
    where_values: dict[tuple[str, str | None], int] = {}
    value_types: dict[int, int] = {}
    for index, m in enumerate(metrics):
        metric_at = metrics_at + index * metric_rec.size
        for k, inst in enumerate(instances_of(m)):
            extra = strings.add(b"") if m.type == MMV_TYPE_STRING else 0
            where = 0 if inst is None else inst_at[m.indom, k]
            offset = values_at + len(value_recs) * VALUE.size
            value_recs.append(DiskValue(bytes(8), extra, metric_at, where))
            key = (
                _stored(m.name, name_size),
                None if inst is None else _stored(inst.external, name_size),
            )
            where_values.setdefault(key, offset)
            value_types[offset] = m.type
    metric_texts = [(strings.text(m.shorttext), strings.text(m.helptext)) for m in metrics]
    indom_texts = [(strings.text(i.shorttext), strings.text(i.helptext)) for i in indoms]

    out = bytearray()
    out += HEADER.pack(MAGIC, version, gen, gen, tocs, desc.flags, process, desc.cluster)
    for entry in toc:
        out += TOC.pack(*entry)
    for i, (short, long_) in zip(indoms, indom_texts, strict=True):
        out += INDOM.pack(i.serial, len(i.instances), first[i.serial], short, long_)
    names = iter(inst_names)
    for n, i in enumerate(indoms):
        indom_at = indoms_at + n * INDOM.size
        for x in i.instances:
            external = _cstring(x.external, MMV_NAMEMAX) if v1 else next(names)
            out += inst_rec.pack(indom_at, 0, x.internal, external)
    for index, m in enumerate(metrics):
        name = _cstring(m.name, MMV_NAMEMAX) if v1 else metric_names[index]
        short, long_ = metric_texts[index]
        out += metric_rec.pack(
            name, m.item, m.type, m.semantics, m.dimension, _int32(m.indom), 0, short, long_
        )
    for value in value_recs:
        out += VALUE.pack(*value)
    for payload in strings.payloads:
        out += STRING.pack(payload)
    for label in desc.labels:
        payload = _cstring(label.payload, MMV_LABELMAX)
        out += LABEL.pack(label.flags, label.identity, _int32(label.internal), payload)
    return Layout(bytes(out), version, where_values, value_types)


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


# -- reading ----------------------------------------------------------------------------


class FileIndom(NamedTuple):
    """An instance domain read from a file: its record, and its instances."""

    record: DiskIndom
    instances: tuple[tuple[int, str], ...]  # (internal, external)


class FileMetric(NamedTuple):
    """A metric read from a file: where its record is, its name, and its record."""

    offset: int
    name: str
    record: DiskMetric


class FileValue(NamedTuple):
    """A value record read from a file: where it is, its metric's record offset, and
    its instance's internal id (None: a metric without instances)."""

    offset: int
    metric: int
    internal: int | None


class MMVFile(NamedTuple):
    """What `read` found in a file: the sections pmdammv would use."""

    header: DiskHeader
    size: int
    indoms: tuple[FileIndom, ...] = ()
    metrics: tuple[FileMetric, ...] = ()
    values: tuple[FileValue, ...] = ()
    labels: tuple[Label, ...] = ()


def read_header(data: bytes | memoryview, size: int | None = None) -> DiskHeader:
    """The header of a file pmdammv would load, or MMVError with the errno it gives:
    EINVAL (too short, not MMV, fewer than 2 TOC entries), ENOSYS (unknown version),
    EAGAIN (being written)."""
    size = len(data) if size is None else size
    if size < HEADER.size:
        raise MMVError(errno.EINVAL, "shorter than an MMV header")
    header = DiskHeader(*HEADER.unpack_from(data, 0))
    if header.magic[:3] != b"MMV" or header.magic[3:] != b"\0":
        raise MMVError(errno.EINVAL, "not an MMV file")
    if header.version not in (MMV_VERSION1, MMV_VERSION2, MMV_VERSION3):
        raise MMVError(errno.ENOSYS, f"MMV version {header.version} unsupported")
    if header.g1 == 0 or header.g1 != header.g2:
        raise MMVError(errno.EAGAIN, "MMV file still being written")
    if header.tocs < 2 or size < HEADER.size + header.tocs * TOC.size:
        raise MMVError(errno.EINVAL, "bad MMV table of contents")
    return header


def c_string(data: bytes | memoryview, offset: int, size: int = MMV_STRINGMAX) -> str:
    """The NUL-terminated text of SIZE bytes at OFFSET (the last byte is never text);
    ValueError if they run past the end."""
    if offset < 0 or offset + size > len(data):
        raise ValueError(f"string at {offset} runs past the end")
    raw = bytes(data[offset : offset + size - 1])
    return raw.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")


def _inline(raw: bytes) -> str:
    """A name kept inline in a fixed-size field, up to its first NUL."""
    return raw.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")


def _text(data: bytes | memoryview, offset: int) -> str:
    try:
        return c_string(data, offset)
    except ValueError:
        return ""


def read(data: bytes | memoryview) -> MMVFile:
    """Read a complete file's records as pmdammv reads them (read_header's checks; a
    section over its limit or past the end of the file is left out)."""
    header = read_header(data)
    size = len(data)
    v1 = header.version == MMV_VERSION1
    sections: dict[str, object] = {}
    for n in range(header.tocs):
        toc = DiskToc(*TOC.unpack_from(data, HEADER.size + n * TOC.size))
        reader = _SECTIONS.get(toc.type)
        if reader is not None:
            found = reader(data, toc, v1)
            if found is not None:
                sections[_SECTION_NAMES[toc.type]] = found
    return MMVFile(header, size, **sections)  # type: ignore[arg-type]


def _fits(data: bytes | memoryview, offset: int, count: int, size: int) -> bool:
    return offset >= 0 and offset + count * size <= len(data)


def _read_metrics(data, toc: DiskToc, v1: bool) -> tuple[FileMetric, ...] | None:
    rec = METRIC1 if v1 else METRIC2
    if (
        toc.count > MAX_MMV_ITEMS
        or toc.count < 0
        or not _fits(data, toc.offset, toc.count, rec.size)
    ):
        return None
    found = []
    for k in range(toc.count):
        offset = toc.offset + k * rec.size
        record = DiskMetric(*rec.unpack_from(data, offset))
        if v1:
            name = _inline(record.name)  # type: ignore[arg-type]
        else:
            if record.name + STRING.size > len(data):  # type: ignore[operator]
                continue
            name = c_string(data, record.name)  # type: ignore[arg-type]
        found.append(FileMetric(offset, name, record))
    return tuple(found)


def _read_indoms(data, toc: DiskToc, v1: bool) -> tuple[FileIndom, ...] | None:
    if (
        toc.count > MAX_MMV_SERIAL
        or toc.count < 0
        or not _fits(data, toc.offset, toc.count, INDOM.size)
    ):
        return None
    rec = INSTANCE1 if v1 else INSTANCE2
    found = []
    for k in range(toc.count):
        record = DiskIndom(*INDOM.unpack_from(data, toc.offset + k * INDOM.size))
        if not _fits(data, record.offset, record.count, rec.size):
            continue
        instances = []
        for j in range(record.count):
            inst = DiskInstance(*rec.unpack_from(data, record.offset + j * rec.size))
            external = inst.external
            name = _inline(external) if v1 else _text(data, external)  # type: ignore[arg-type]
            instances.append((inst.internal, name))
        found.append(FileIndom(record, tuple(instances)))
    return tuple(found)


def _read_values(data, toc: DiskToc, v1: bool) -> tuple[FileValue, ...] | None:
    if toc.count < 0 or not _fits(data, toc.offset, toc.count, VALUE.size):
        return None
    rec = INSTANCE1 if v1 else INSTANCE2
    found = []
    for k in range(toc.count):
        offset = toc.offset + k * VALUE.size
        value = DiskValue(*VALUE.unpack_from(data, offset))
        internal = None
        if value.instance and value.instance + rec.size <= len(data):
            internal = DiskInstance(*rec.unpack_from(data, value.instance)).internal
        found.append(FileValue(offset, value.metric, internal))
    return tuple(found)


def _read_labels(data, toc: DiskToc, v1: bool) -> tuple[Label, ...] | None:
    if (
        toc.count > MAX_MMV_LABELS
        or toc.count < 0
        or not _fits(data, toc.offset, toc.count, LABEL.size)
    ):
        return None
    found = []
    for k in range(toc.count):
        record = DiskLabel(*LABEL.unpack_from(data, toc.offset + k * LABEL.size))
        payload = _inline(record.payload)
        found.append(Label(record.flags, record.identity, record.internal, payload))
    return tuple(found)


_SECTIONS = {
    TocType.MMV_TOC_METRICS: _read_metrics,
    TocType.MMV_TOC_INDOMS: _read_indoms,
    TocType.MMV_TOC_VALUES: _read_values,
    TocType.MMV_TOC_LABELS: _read_labels,
}
_SECTION_NAMES = {
    TocType.MMV_TOC_METRICS: "metrics",
    TocType.MMV_TOC_INDOMS: "indoms",
    TocType.MMV_TOC_VALUES: "values",
    TocType.MMV_TOC_LABELS: "labels",
}


def read_value(data: bytes | memoryview, offset: int, type_: int) -> tuple[int | float, int]:
    """The (atom, extra) of the value record at OFFSET, read as a TYPE value (a STRING's
    atom is its length, extra the offset of its text)."""
    atom = ATOM[type_].unpack_from(data, offset)[0]
    return atom, EXTRA.unpack_from(data, offset + 8)[0]
