"""What the mmv agent exports from a directory of MMV files, as pmdammv's map_stats
builds it: the files it loads (each mapped read-only), the namespace, descriptors,
instance domains and labels, and the reads of live values and texts from the maps.

A `Catalog` is built by one scan and never changed; the agent builds a new one when a
file appears, goes, or is rewritten (`Catalog.stale`).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import mmap
import os
import re
import struct
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from purepcp.pmapi import mmv
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.errors import (
    PM_ERR_APPVERSION,
    PM_ERR_GENERIC,
    PM_ERR_INST,
    PM_ERR_PMID,
    PMError,
)
from purepcp.pmapi.ids import PM_IN_NULL, PM_INDOM_NULL, pmID_build, pmInDom_build
from purepcp.pmapi.pmns import PMNS
from purepcp.pmapi.types import PMSem, PMType
from purepcp.pmapi.units import Units

#: the agent's own metrics (cluster 0): item -> name below the prefix
CONTROL = {0: "control.reload", 1: "control.debug", 2: "control.files"}
#: what an ELAPSED metric is exported as: a counter of microseconds
ELAPSED_DESC = (PMType.PM_TYPE_64, PMSem.PM_SEM_COUNTER, Units(0, 1, 0, 0, 1, 0))
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.]*\Z")
_G1G2 = struct.Struct("=QQ")


def process_exists(pid: int) -> bool:
    """Whether process PID is alive (as __pmProcessExists)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass(eq=False)
class MappedFile:
    """One loaded file: its name, cluster, map, and the records read from it."""

    name: str
    cluster: int
    map: mmap.mmap
    records: mmv.MMVFile
    gen: int
    pid: int  # the writer's pid when MMV_FLAG_PROCESS, else 0

    @property
    def flags(self) -> int:
        return self.records.header.flags

    @property
    def size(self) -> int:
        return self.records.size

    def changed(self) -> bool:
        """Whether the writer has begun rewriting the file, or (MMV_FLAG_PROCESS) died."""
        g1, g2 = _G1G2.unpack_from(self.map, 8)
        return g1 != self.gen or g2 != self.gen or bool(self.pid and not process_exists(self.pid))

    def close(self) -> None:
        with contextlib.suppress(BufferError, ValueError):
            self.map.close()

    @functools.cached_property
    def _by_item(self) -> dict[int, list[tuple[mmv.DiskMetric, int | None, dict[int, int]]]]:
        """Per item, each metric record with it: (record, its first value's offset,
        {instance: value offset}), so a fetch need not scan the values section."""
        values: dict[int, list[mmv.FileValue]] = {}
        for value in self.records.values:
            values.setdefault(value.metric, []).append(value)
        index: dict[int, list[tuple[mmv.DiskMetric, int | None, dict[int, int]]]] = {}
        for metric in self.records.metrics:
            mine = values.get(metric.offset, [])
            per_inst: dict[int, int] = {}
            for value in mine:
                if value.internal is not None:
                    per_inst.setdefault(value.internal & 0xFFFFFFFF, value.offset)
            first = mine[0].offset if mine else None
            index.setdefault(metric.record.item, []).append((metric.record, first, per_inst))
        return index

    def lookup(self, item: int, inst: int) -> tuple[mmv.DiskMetric, int]:
        """The metric record with ITEM and its value record's offset for INST, as
        mmv_lookup_item finds them (PM_ERR_PMID: no such item; PM_ERR_INST: no such
        value)."""
        status = PM_ERR_PMID
        for record, first, per_inst in self._by_item.get(item, ()):
            status = PM_ERR_INST
            if first is None:
                continue
            if record.indom in (0, -1) or inst == PM_IN_NULL:
                return record, first
            offset = per_inst.get(inst)
            if offset is not None:
                return record, offset
        raise PMError(status)

    def text(self, offset: int) -> str:
        """The help text at OFFSET; PM_ERR_GENERIC if it runs past the end."""
        try:
            return mmv.c_string(self.map, offset)
        except ValueError:
            raise PMError(PM_ERR_GENERIC) from None

    def value(self, metric: mmv.DiskMetric, offset: int) -> Any:
        """The current value at OFFSET (None: no value now), as mmv_fetchCallBack reads
        it: sentinels with MMV_FLAG_SENTINEL, a timed section still running, a string."""
        type_ = metric.type
        if type_ == mmv.MMV_TYPE_NOSUPPORT:
            raise PMError(PM_ERR_APPVERSION)
        if type_ not in mmv.ATOM:
            return None
        sentinel = bool(self.flags & mmv.MMV_FLAG_SENTINEL)
        if type_ == mmv.MMV_TYPE_STRING:
            return self._string(offset, sentinel)
        raw = self.map[offset : offset + 8]
        atom, extra = mmv.read_value(self.map, offset, type_)
        if (
            sentinel
            and raw == b"\xff" * 8
            and type_ not in (mmv.MMV_TYPE_FLOAT, mmv.MMV_TYPE_DOUBLE)
        ):
            return None  # (a NaN float or double never equals the NaN sentinel, as in C)
        if type_ == mmv.MMV_TYPE_ELAPSED and extra < 0:  # inside a timed section
            sec, usec = divmod(time.time_ns() // 1000, 1_000_000)
            atom = _int64(atom + (sec * 1e6 + usec) + extra)
        return atom

    def _string(self, offset: int, sentinel: bool) -> str | None:
        where = mmv.read_value(self.map, offset, mmv.MMV_TYPE_STRING)[1]
        if where < 0 or self.size < where + 4:  # (pmdammv checks sizeof(int) bytes)
            raise PMError(PM_ERR_GENERIC)
        raw = self.map[where : min(self.size, where + mmv.MMV_STRINGMAX - 1)]
        if sentinel and raw[:1] in (b"", b"\0"):
            return None
        return raw.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")


def _int64(number: float) -> int:
    value = int(number) & 0xFFFFFFFFFFFFFFFF
    return value - (1 << 64) if value >> 63 else value


@dataclass
class Catalog:
    """Everything one scan of the directory found."""

    prefix: str
    domain: int
    files: list[MappedFile] = field(default_factory=list)
    pmns: PMNS = field(default_factory=PMNS)
    descs: dict[int, Desc] = field(default_factory=dict)
    indoms: dict[int, dict[int, str]] = field(default_factory=dict)
    reload: int = 0  # a file was being written: scan again at the next request

    def close(self) -> None:
        for f in self.files:
            f.close()

    def stale(self) -> bool:
        """Whether a loaded file has been rewritten or its writer has gone."""
        return any(f.changed() for f in self.files)

    def lookup(self, pmid: int, inst: int) -> tuple[MappedFile, mmv.DiskMetric, int]:
        """(file, metric record, value offset) of PMID's instance INST, as
        mmv_lookup_stat_metric finds it among the files with PMID's cluster."""
        cluster, item = pmid >> 10 & 0xFFF, pmid & 0x3FF
        status = PM_ERR_PMID
        for f in self.files:
            if f.cluster != cluster:
                continue
            try:
                metric, offset = f.lookup(item, inst)
            except PMError as exc:
                status = exc.code
                continue
            if metric.type == mmv.MMV_TYPE_NOSUPPORT:
                status = PM_ERR_APPVERSION
                continue
            return f, metric, offset
        raise PMError(status)


def scan(statsdir: Path, prefix: str, domain: int) -> Catalog:
    """Load every MMV file in STATSDIR and build what the agent exports from them."""
    catalog = Catalog(prefix, domain)
    for item, name in CONTROL.items():
        pmid = pmID_build(domain, 0, item)
        catalog.pmns.add(f"{prefix}.{name}", pmid, at_front=True)
        catalog.descs[pmid] = Desc(pmid, PMType.PM_TYPE_32, PM_INDOM_NULL, PMSem.PM_SEM_INSTANT)
    try:
        names = sorted(n for n in os.listdir(statsdir) if not n.startswith("."))
    except OSError:
        names = []
    for name in names:
        path = statsdir / name
        try:
            loaded = _load(catalog, name, path)
        except mmv.MMVError as exc:
            if exc.code == errno.EAGAIN:
                catalog.reload = 1
            continue
        except OSError:
            continue
        if loaded is not None:
            catalog.files.append(loaded)
    for f in catalog.files:
        _add_metrics(catalog, f)
        _add_indoms(catalog, f)
    return catalog


def _load(catalog: Catalog, name: str, path: Path) -> MappedFile | None:
    """One file mapped and read, with create_client_stat's checks (MMVError)."""
    st = path.stat()
    if not path.is_file():
        return None
    if st.st_size < mmv.HEADER.size:
        raise mmv.MMVError(errno.EINVAL)
    with open(path, "rb") as fh:
        mapped = mmap.mmap(fh.fileno(), st.st_size, prot=mmap.PROT_READ)
    try:
        header = mmv.read_header(mapped)
        writer = header.process if header.flags & mmv.MMV_FLAG_PROCESS else 0
        if writer and not process_exists(writer):
            raise mmv.MMVError(errno.ESRCH)
        cluster = _cluster(catalog, header.cluster)
        records = mmv.read(mapped)
    except BaseException:
        mapped.close()
        raise
    pid = header.process if header.flags & mmv.MMV_FLAG_PROCESS else 0
    return MappedFile(name, cluster, mapped, records, header.g1, pid)


def _cluster(catalog: Catalog, requested: int) -> int:
    """The cluster a file gets: the one it asks for (even if in use), or the lowest
    free one from 1 if it asks for 0, as choose_cluster does."""
    if requested:
        if not 0 <= requested <= mmv.MAX_MMV_CLUSTER:
            raise mmv.MMVError(errno.EINVAL)
        return requested
    used = {f.cluster for f in catalog.files}
    chosen = next(c for c in range(1, len(used) + 2) if c not in used)
    if chosen > mmv.MAX_MMV_CLUSTER:
        raise mmv.MMVError(errno.EAGAIN)
    return chosen


def _add_metrics(catalog: Catalog, f: MappedFile) -> None:
    """Name and describe a file's metrics, with verify_metric_name's and
    verify_metric_item's checks (a bad or duplicate one is left out)."""
    stem = catalog.prefix if f.flags & mmv.MMV_FLAG_NOPREFIX else f"{catalog.prefix}.{f.name}"
    seen: list[int] = []
    for metric in f.records.metrics:
        record = metric.record
        earlier, item = list(seen), record.item
        seen.append(item)
        path = f"{stem}.{metric.name}"
        if not _NAME.match(path) or path in catalog.pmns:
            continue
        if item > 0x3FF or item in earlier:
            continue
        pmid = pmID_build(catalog.domain, f.cluster, item)
        try:
            catalog.pmns.add(path, pmid, at_front=True, checked=False)
        except PMError:
            continue
        catalog.descs.setdefault(pmid, _desc(catalog, f, pmid, record))


def _desc(catalog: Catalog, f: MappedFile, pmid: int, record: mmv.DiskMetric) -> Desc:
    """A metric's descriptor, as create_metric makes it."""
    if record.indom in (0, -1):
        indom = PM_INDOM_NULL
    else:
        indom = _indom_id(catalog.domain, f.cluster, record.indom)
    if record.type == mmv.MMV_TYPE_ELAPSED:
        type_, sem, units = ELAPSED_DESC
    else:
        type_ = record.type
        sem = record.semantics or PMSem.PM_SEM_COUNTER
        units = Units.unpack(record.dimension)
    return Desc(pmid, type_, indom, sem, units)


def _indom_id(domain: int, cluster: int, serial: int) -> int:
    return pmInDom_build(domain, ((cluster << 11) | (serial & 0xFFFFFFFF)) & 0x3FFFFF)


def _add_indoms(catalog: Catalog, f: MappedFile) -> None:
    """A file's instance domains, merged with any of the same id (update_indom)."""
    for indom in f.records.indoms:
        serial = indom.record.serial
        if serial > mmv.MAX_MMV_SERIAL:
            continue
        instances = catalog.indoms.setdefault(_indom_id(catalog.domain, f.cluster, serial), {})
        for internal, external in indom.instances:
            instances.setdefault(internal & 0xFFFFFFFF, external)
