"""Block devices beyond whole disks: partitions, device-mapper, md, zram, WWIDs and tapes.

pmdalinux (proc_partitions.c, sysfs_tapestats.c at PCP 6.0.3) sorts every line
of /proc/diskstats into one instance domain, in this order: dm-* devices
(DM_INDOM, named by their device-mapper name, left out if they have none),
md* devices (MD_INDOM, named by the /dev/md link to them, else as in the
kernel), partitions, whole disks (DISK_INDOM, the core's), zram* devices and
names that look like a WWID; loop, ram and CD-ROM devices are left out.  Each
device's counts give the same set of metrics under disk.partitions, disk.dm,
disk.md and zram (`FIELDS`, the values in `COUNTS`); disk.wwid adds them up
over the whole disks that are paths to one SCSI WWID.  Capacities come from
/proc/partitions, read only when a capacity metric is asked for; schedulers
from /sys/block/NAME/queue/scheduler; zram's own counts from its sysfs files;
tape counts from /sys/class/scsi_tape/stN/stats.  Instance ids are pmdaCache's
(0, 1, ... in order first seen, saved in config/pmda/60.SERIAL) but for tapes,
whose ids are not saved.
"""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Callable
from typing import Any

from purepcp.pmapi.cnumbers import scan_ints, strtol
from purepcp.pmda import InDom, refresh

from . import procfs
from .base import LinuxBase
from .instids import InstanceIds
from .records import (
    BYTE,
    COUNT,
    COUNTER,
    DISCRETE,
    I32,
    INSTANT,
    KBYTE,
    MSEC,
    NONE,
    STRING,
    U32,
    U64,
    MetricInfo,
    units_of,
)

_U32 = 0xFFFFFFFF
_U64 = 0xFFFFFFFFFFFFFFFF
NSEC = units_of("nanosec")

# pmdalinux's instance domains (linux.h) and clusters (pmda.c) of this family.
DISK_INDOM, PARTITIONS_INDOM, DM_INDOM, MD_INDOM = 1, 10, 24, 25
TAPEDEV_INDOM, ZRAM_INDOM, WWID_INDOM = 34, 38, 42
CLUSTER_STAT, CLUSTER_PARTITIONS, CLUSTER_DM, CLUSTER_MD, CLUSTER_MDADM = 0, 10, 54, 59, 60
CLUSTER_TAPEDEV, CLUSTER_ZRAM = 71, 86
CLUSTER_ZRAM_IO, CLUSTER_ZRAM_MM, CLUSTER_ZRAM_BD, CLUSTER_WWID = 87, 88, 89, 92

Counts = tuple[int, ...]  # procfs.BLOCK_FIELDS


def _sectors_kb(*columns: int) -> Callable[[Counts], int]:
    """Half the sum of sector COLUMNS: 512-byte sectors as Kbyte."""
    return lambda d: sum(d[c] for c in columns) // 2 & _U64


def _sum64(*columns: int) -> Callable[[Counts], int]:
    """The sum of COLUMNS, 64-bit."""
    return lambda d: sum(d[c] for c in columns) & _U64


def _ticks(*columns: int) -> Callable[[Counts], int]:
    """The sum of 32-bit tick COLUMNS in 32-bit arithmetic (pmdalinux keeps them unsigned int)."""
    return lambda d: sum(d[c] & _U32 for c in columns) & _U32


#: A device's metric SUFFIX from its /proc/diskstats counts (all but capacity).
COUNTS: dict[str, Callable[[Counts], int]] = {
    "read": _sum64(0),
    "write": _sum64(4),
    "total": _sum64(0, 4),
    "blkread": _sum64(2),
    "blkwrite": _sum64(6),
    "blktotal": _sum64(2, 6),
    "read_bytes": _sectors_kb(2),
    "write_bytes": _sectors_kb(6),
    "total_bytes": _sectors_kb(2, 6),
    "read_merge": _sum64(1),
    "write_merge": _sum64(5),
    "avactive": _ticks(9),
    "aveq": _ticks(10),
    "read_rawactive": _ticks(3),
    "write_rawactive": _ticks(7),
    "total_rawactive": _ticks(3, 7),
    "discard": _sum64(11),
    "blkdiscard": _sum64(13),
    "discard_bytes": _sectors_kb(13),
    "discard_merge": _sum64(12),
    "discard_rawactive": _ticks(14),
    "flush": _sum64(15),
    "flush_rawactive": _ticks(16),
    "inflight": _ticks(8),
}

#: One row per per-device metric: (suffix, item in disk.partitions and zram, item in
#: disk.dev and disk.wwid, semantics, units, 32-bit).  disk.dm and disk.md number
#: them as partitions do but from 13 on one higher (13 is hinv.map.{dm,md}name).
FIELDS: tuple[tuple[str, int, int, Any, Any, bool], ...] = (
    ("read", 0, 4, COUNTER, COUNT, False),
    ("write", 1, 5, COUNTER, COUNT, False),
    ("total", 2, 28, COUNTER, COUNT, False),
    ("blkread", 3, 6, COUNTER, COUNT, False),
    ("blkwrite", 4, 7, COUNTER, COUNT, False),
    ("blktotal", 5, 36, COUNTER, COUNT, False),
    ("read_bytes", 6, 38, COUNTER, KBYTE, False),
    ("write_bytes", 7, 39, COUNTER, KBYTE, False),
    ("total_bytes", 8, 40, COUNTER, KBYTE, False),
    ("read_merge", 9, 49, COUNTER, COUNT, False),
    ("write_merge", 10, 50, COUNTER, COUNT, False),
    ("avactive", 11, 46, COUNTER, MSEC, True),
    ("aveq", 12, 47, COUNTER, MSEC, True),
    ("read_rawactive", 13, 72, COUNTER, MSEC, True),
    ("write_rawactive", 14, 73, COUNTER, MSEC, True),
    ("total_rawactive", 15, 79, COUNTER, MSEC, True),
    ("capacity", 16, 87, DISCRETE, KBYTE, False),
    ("discard", 17, 88, COUNTER, COUNT, False),
    ("blkdiscard", 18, 89, COUNTER, COUNT, False),
    ("discard_bytes", 19, 90, COUNTER, KBYTE, False),
    ("discard_merge", 20, 91, COUNTER, COUNT, False),
    ("discard_rawactive", 21, 92, COUNTER, MSEC, True),
    ("flush", 22, 93, COUNTER, COUNT, False),
    ("flush_rawactive", 23, 94, COUNTER, MSEC, True),
    ("inflight", 24, 95, INSTANT, NONE, True),
)
#: The disk.dev (and disk.all) suffixes this family adds to the core's.
DEV_SUFFIXES = (
    "discard",
    "blkdiscard",
    "discard_bytes",
    "discard_merge",
    "discard_rawactive",
    "flush",
    "flush_rawactive",
)
#: disk.all.SUFFIX's item is disk.dev.SUFFIX's plus this, for DEV_SUFFIXES.
ALL_ITEM_OFFSET = 8
#: disk.dm and disk.md give these as 32-bit values (pmdalinux truncates them).
DMMD_32BIT = frozenset({"read_bytes", "write_bytes", "total_bytes"})
#: Partition (and zram) metrics that pmdalinux stops giving once it has seen an old short line.
NEED_FULL_LINE = frozenset(s for s, item, *_ in FIELDS if 9 <= item <= 15)

#: (name, item, semantics, units) of zram's io_stat, mm_stat and bd_stat metrics, by cluster.
ZRAM_FILES: dict[int, tuple[str, tuple[tuple[str, Any, Any], ...]]] = {
    CLUSTER_ZRAM_IO: (
        "io_stat",
        (
            ("zram.io_stat.failed.reads", COUNTER, COUNT),
            ("zram.io_stat.failed.writes", COUNTER, COUNT),
            ("zram.io_stat.invalid", COUNTER, COUNT),
            ("zram.io_stat.notify_free", COUNTER, COUNT),
        ),
    ),
    CLUSTER_ZRAM_MM: (
        "mm_stat",
        (
            ("zram.mm_stat.data_size.original", INSTANT, KBYTE),
            ("zram.mm_stat.data_size.compressed", INSTANT, KBYTE),
            ("zram.mm_stat.mem.used_total", INSTANT, KBYTE),
            ("zram.mm_stat.mem.limit", INSTANT, KBYTE),
            ("zram.mm_stat.mem.max_used", INSTANT, KBYTE),
            ("zram.mm_stat.pages.same", COUNTER, KBYTE),
            ("zram.mm_stat.pages.compacted", COUNTER, KBYTE),
            ("zram.mm_stat.pages.huge", COUNTER, KBYTE),
        ),
    ),
    CLUSTER_ZRAM_BD: (
        "bd_stat",
        (
            ("zram.bd_stat.count", COUNTER, KBYTE),
            ("zram.bd_stat.reads", COUNTER, KBYTE),
            ("zram.bd_stat.writes", COUNTER, KBYTE),
        ),
    ),
}
#: How pmdalinux scales each zram file's numbers to Kbyte: bytes >> 10, 4 KiB pages << 2.
ZRAM_SCALE: dict[str, Callable[[int], int]] = {
    **{name: (lambda v: v >> 10) for name, _, _ in ZRAM_FILES[CLUSTER_ZRAM_MM][1][:5]},
    **{name: (lambda v: v << 2 & _U64) for name, _, _ in ZRAM_FILES[CLUSTER_ZRAM_MM][1][5:]},
    **{name: (lambda v: v << 2 & _U64) for name, _, _ in ZRAM_FILES[CLUSTER_ZRAM_BD][1]},
}

#: tape.dev.NAME: (item, semantics, units), item also the counter's index; files of the same name.
TAPE_FIELDS: tuple[tuple[str, Any, Any], ...] = (
    ("in_flight", INSTANT, COUNT),
    ("io_ns", COUNTER, NSEC),
    ("other_cnt", COUNTER, COUNT),
    ("read_byte_cnt", COUNTER, BYTE),
    ("read_cnt", COUNTER, COUNT),
    ("read_ns", COUNTER, NSEC),
    ("resid_cnt", COUNTER, COUNT),
    ("write_byte_cnt", COUNTER, BYTE),
    ("write_cnt", COUNTER, COUNT),
    ("write_ns", COUNTER, NSEC),
)
HINV_NTAPE_ITEM = 16


def _type(u32: bool) -> Any:
    """U32 or U64."""
    return U32 if u32 else U64


def _records() -> tuple[MetricInfo, ...]:
    """Every metric of the family, built from the tables above."""
    out: list[MetricInfo] = []
    by_suffix = {row[0]: row for row in FIELDS}
    for suffix in DEV_SUFFIXES:
        _, _, item, sem, units, u32 = by_suffix[suffix]
        out.append(MetricInfo(f"disk.dev.{suffix}", 0, item, _type(u32), DISK_INDOM, sem, units))
    out.append(MetricInfo("disk.dev.scheduler", 0, 59, STRING, DISK_INDOM, DISCRETE, NONE))
    out.append(MetricInfo("disk.dev.capacity", 0, 87, U64, DISK_INDOM, DISCRETE, KBYTE))
    for suffix in DEV_SUFFIXES:
        _, _, item, sem, units, u32 = by_suffix[suffix]
        out.append(
            MetricInfo(
                f"disk.all.{suffix}", 0, item + ALL_ITEM_OFFSET, _type(u32), None, sem, units
            )
        )
    for prefix, cluster, indom in (
        ("disk.partitions", CLUSTER_PARTITIONS, PARTITIONS_INDOM),
        ("zram", CLUSTER_ZRAM, ZRAM_INDOM),
    ):
        for suffix, item, _, sem, units, u32 in FIELDS:
            out.append(
                MetricInfo(f"{prefix}.{suffix}", cluster, item, _type(u32), indom, sem, units)
            )
    for kind, cluster, indom in (("dm", CLUSTER_DM, DM_INDOM), ("md", CLUSTER_MD, MD_INDOM)):
        for suffix, item, _, sem, units, u32 in FIELDS:
            out.append(
                MetricInfo(
                    f"disk.{kind}.{suffix}",
                    cluster,
                    item if item < 13 else item + 1,
                    _type(u32 or suffix in DMMD_32BIT),
                    indom,
                    sem,
                    units,
                )
            )
        out.append(MetricInfo(f"hinv.map.{kind}name", cluster, 13, STRING, indom, DISCRETE, NONE))
    out.append(MetricInfo("disk.md.status", CLUSTER_MDADM, 0, I32, MD_INDOM, INSTANT, NONE))
    for suffix, _, item, sem, units, u32 in FIELDS:
        # pmdalinux sums inflight over the paths as a 64-bit number
        type_ = U64 if suffix == "inflight" else _type(u32)
        out.append(
            MetricInfo(f"disk.wwid.{suffix}", CLUSTER_WWID, item, type_, WWID_INDOM, sem, units)
        )
    out.append(
        MetricInfo("disk.wwid.scheduler", CLUSTER_WWID, 59, STRING, WWID_INDOM, DISCRETE, NONE)
    )
    out.append(
        MetricInfo("disk.wwid.scsi_paths", CLUSTER_WWID, 3, STRING, WWID_INDOM, DISCRETE, NONE)
    )
    for cluster, (_, rows) in ZRAM_FILES.items():
        for item, (name, sem, units) in enumerate(rows):
            out.append(MetricInfo(name, cluster, item, U64, ZRAM_INDOM, sem, units))
    for item, (name, sem, units) in enumerate(TAPE_FIELDS):
        out.append(
            MetricInfo(f"tape.dev.{name}", CLUSTER_TAPEDEV, item, U64, TAPEDEV_INDOM, sem, units)
        )
    out.append(
        MetricInfo("hinv.ntape", CLUSTER_TAPEDEV, HINV_NTAPE_ITEM, U32, None, DISCRETE, NONE)
    )
    return tuple(out)


#: This family's metrics, as pmdalinux declares them.
METRICS: tuple[MetricInfo, ...] = _records()

_DEV_NAMES = frozenset({"disk.dev.scheduler", "disk.dev.capacity"})
#: The capacity metrics for which pmdalinux reads /proc/partitions (not disk.wwid.capacity).
_CAPACITY = frozenset(
    f"{prefix}.capacity" for prefix in ("disk.dev", "disk.partitions", "disk.dm", "disk.md")
)


# --- pmdalinux's rules ----------------------------------------------------------------------


def is_wwid(name: str) -> bool:
    """pmdalinux's WWID test: 18 characters, the first 1, 2 or 3."""
    return len(name) == 18 and name[0] in "123"


def device_kind(name: str) -> str | None:
    """Which instance domain pmdalinux puts block device NAME in (None: left out)."""
    if name.startswith("dm-"):
        return "dm"
    if name.startswith("md"):
        return "md"
    if procfs.is_partition(name):
        return "partition"
    if procfs.is_disk(name):
        return "disk"
    if name.startswith("zram"):
        return "zram"
    if is_wwid(name):
        return "wwid"
    return None


def scheduler(line: bytes | None) -> str | None:
    """The [selected] scheduler of a queue/scheduler file's first line, None if none is marked."""
    if not line:
        return None
    line = line.split(b"\n", 1)[0][:1022]
    end = line.find(b"]")
    start = line.rfind(b"[", 0, end if end >= 0 else None)
    if start < 0 or end < 0:
        return None
    return line[start + 1 : end].decode(errors="replace")


def scsi_id(data: bytes | None) -> str:
    """A device's WWID from its sysfs wwid file, with pmdalinux's numeric prefixes, or "unknown".

    As pmdalinux does: the last byte read is dropped (the newline), the text
    stops at the last newline left, and t10./eui./naa. become 1/2/3.
    """
    if not data:
        return "unknown"
    text = data[:1024][:-1].split(b"\0", 1)[0]
    cut = text.rfind(b"\n")
    if cut >= 0:
        text = text[:cut]
    for prefix, digit in ((b"t10.", b"1"), (b"eui.", b"2"), (b"naa.", b"3")):
        if text.startswith(prefix):
            text = digit + text[4:]
            break
    return text.decode(errors="replace")


def parse_numbers(data: bytes | None, count: int) -> tuple[int, ...] | None:
    """The first COUNT unsigned numbers of a sysfs file (as fscanf %llu), None if fewer."""
    if data is None:
        return None
    numbers = scan_ints(data, count)
    return tuple(numbers) if len(numbers) == count else None


def tape_field(filename: str) -> int | None:
    """The tape counter a stats file feeds: the first whose name starts with FILENAME."""
    for index, (name, _, _) in enumerate(TAPE_FIELDS):
        if name.startswith(filename):
            return index
    return None


# --- the agent's part --------------------------------------------------------------------

Device = tuple[str, procfs.BlockDevice]  # instance name, the /proc/diskstats line


class BlockDev(LinuxBase):
    """Partitions, dm, md, zram, WWID and tape instance domains, and disk.dev's extras."""

    blockdev_partitions = InDom(
        PARTITIONS_INDOM, labels={"device_type": "block", "indom_name": "per partition"}
    )
    blockdev_dm = InDom(DM_INDOM, labels={"device_type": "block", "indom_name": "per dm device"})
    blockdev_md = InDom(MD_INDOM, labels={"device_type": "block", "indom_name": "per md device"})
    blockdev_zram = InDom(ZRAM_INDOM)
    blockdev_wwid = InDom(WWID_INDOM)
    blockdev_tape = InDom(TAPEDEV_INDOM)
    instance_label_rules = {
        serial: (lambda agent, inst, name: {"device_name": name})
        for serial in (PARTITIONS_INDOM, DM_INDOM, MD_INDOM)
    }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Agent's arguments; pmdaCache-style ids for each device kind, saved but for tapes."""
        super().__init__(*args, **kwargs)
        self._blockdev_ids = {
            kind: InstanceIds(self._cache_file(indom))
            for kind, indom in (
                ("partition", self.blockdev_partitions),
                ("dm", self.blockdev_dm),
                ("md", self.blockdev_md),
                ("zram", self.blockdev_zram),
                ("wwid", self.blockdev_wwid),
            )
        }
        self._blockdev_tape_ids = InstanceIds()  # pmdalinux does not save tape ids
        self._blockdev_short_lines = False  # pmdalinux's _pm_have_kernel_2_6_partition_stats
        self.mdadm = os.environ.get("LINUX_MDADM") or "/sbin/mdadm"

    # -- sources ---------------------------------------------------------------------------

    def _blockdev_devices(self) -> dict[str, dict[int, Device]]:
        """{kind: {inst: (name, line)}} for the partition, dm, md, zram and wwid-named devices."""
        return self._once("blockdev", self._blockdev_scan)

    def _blockdev_scan(self) -> dict[str, dict[int, Device]]:
        """Sort /proc/diskstats into instance domains as pmdalinux does, giving new ids."""
        found: dict[str, dict[int, Device]] = {kind: {} for kind in self._blockdev_ids}
        md_links: dict[str, str] | None = None
        for dev in self._diskstats():
            kind = device_kind(dev.name)
            if kind is None:
                continue
            name: str | None = dev.name
            if kind == "dm":
                name = self._blockdev_dm_name(dev)
                if name is None:
                    continue  # pmdalinux skips a dm device without a name
            elif kind == "md":
                if md_links is None:
                    md_links = self._blockdev_md_links()
                name = md_links.get(dev.name, dev.name)
            if dev.short:
                self._blockdev_short_lines = True
            if kind != "disk":
                found[kind][self._blockdev_ids[kind](name)] = (name, dev)
        for ids in self._blockdev_ids.values():
            if ids is not self._blockdev_ids["wwid"]:
                ids.save()
        return found

    def _blockdev_dm_name(self, dev: procfs.BlockDevice) -> str | None:
        """A dm device's name: sysfs dm/name, else the /dev/mapper node with its numbers."""
        data = self.proc.read(f"/sys/block/{dev.name}/dm/name")
        if data:
            return data.split(b"\0", 1)[0].split(b"\n", 1)[0].decode(errors="replace")
        mapper = self.proc.root + "/dev/mapper"
        try:
            entries = list(os.scandir(mapper))
        except OSError:
            return None
        for entry in entries:
            try:
                st = os.stat(entry.path)
            except OSError:
                continue
            if not stat.S_ISBLK(st.st_mode):
                continue
            if (os.major(st.st_rdev), os.minor(st.st_rdev)) == (dev.major, dev.minor):
                return entry.name
        return None

    def _blockdev_md_links(self) -> dict[str, str]:
        """{mdN: NAME} for each /dev/md/NAME link (first in directory order; numbers skipped)."""
        links: dict[str, str] = {}
        directory = self.proc.root + "/dev/md"
        try:
            names = os.listdir(directory)
        except OSError:
            return links
        for name in names:
            if name[:1] == "." or name[:1].isdigit():
                continue
            try:
                target = os.readlink(os.path.join(directory, name))
            except OSError:
                continue
            links.setdefault(os.path.basename(target), name)
        return links

    def _blockdev_capacity(self) -> dict[str, int]:
        """{kernel device name: size in Kbyte} from /proc/partitions, read once per fetch."""
        return self._read_once("/proc/partitions", procfs.parse_partitions) or {}

    def _blockdev_scheduler(self, name: str) -> str:
        """A device's I/O scheduler as pmdalinux reports it (guessed from iosched if no file)."""
        queue = f"/sys/block/{name}/queue/"
        data = self.proc.read(queue + "scheduler")
        if data is not None:
            return scheduler(data) or "unknown"
        root = self.proc.root
        for probe, guess in (
            ("iosched/quantum", "cfq"),
            ("iosched/fifo_batch", "deadline"),
            ("iosched/antic_expire", "anticipatory"),
            ("iosched", "noop"),
        ):
            if os.path.exists(root + queue + probe):
                return guess
        return "unknown"

    def _blockdev_scsi_id(self, name: str) -> str:
        """A disk's WWID (device/wwid, else wwid, under /sys/block/NAME), or "unknown"."""
        path = f"/sys/block/{name}/device/wwid"
        if not os.path.exists(self.proc.root + path):
            path = f"/sys/block/{name}/wwid"
        return scsi_id(self.proc.read(path))

    def _blockdev_wwids(self) -> dict[int, tuple[str, list[tuple[str, Counts]]]]:
        """{inst: (wwid, [(disk name, counts) of each path])}, once per fetch."""
        return self._once("blockdev-wwid", self._blockdev_scan_wwids)

    def _blockdev_scan_wwids(self) -> dict[int, tuple[str, list[tuple[str, Counts]]]]:
        """Group the disks by WWID; wwid-named devices of /proc/diskstats are instances too."""
        ids = self._blockdev_ids["wwid"]
        found: dict[int, tuple[str, list[tuple[str, Counts]]]] = {
            inst: (name, []) for inst, (name, _) in self._blockdev_devices()["wwid"].items()
        }
        for _, name, counts in self._disks():
            wwid = self._blockdev_scsi_id(name)
            if wwid.startswith("unknown"):
                continue
            inst = ids(wwid)
            found.setdefault(inst, (wwid, []))[1].append((name, counts))
        ids.save()
        return found

    def _blockdev_tapes(self) -> dict[int, tuple[str, list[int]]]:
        """{inst: (stN, counters)} from /sys/class/scsi_tape, once per fetch."""
        return self._once("blockdev-tape", self._blockdev_scan_tapes)

    def _blockdev_scan_tapes(self) -> dict[int, tuple[str, list[int]]]:
        """Read each stN device's stats directory (nstN and the like share its counters)."""
        found: dict[int, tuple[str, list[int]]] = {}
        base = "/sys/class/scsi_tape"
        try:
            devices = os.listdir(self.proc.root + base)
        except OSError:
            return found
        for device in devices:
            if not device.startswith("st") or not device[-1:].isdigit():
                continue
            stats = f"{base}/{device}/stats"
            try:
                files = os.listdir(self.proc.root + stats)
            except OSError:
                continue
            name = device[:15]
            counts = [0] * len(TAPE_FIELDS)
            for filename in files:
                if filename.startswith("."):
                    continue
                data = self.proc.read(f"{stats}/{filename}")
                index = tape_field(filename)
                if data and index is not None:
                    counts[index] = strtol(data[:63]).value & _U64  # strtoll, kept unsigned
            found[self._blockdev_tape_ids(name)] = (name, counts)
        return found

    # -- instance domains ------------------------------------------------------------------

    def _blockdev_instances(self, indom: InDom, kind: str) -> dict[int, str] | None:
        """The current instances of KIND's instance domain."""
        devices = self._blockdev_devices()[kind]
        return self._current(indom, {inst: name for inst, (name, _) in devices.items()})

    @blockdev_partitions.refresh
    def _blockdev_partition_instances(self) -> dict[int, str] | None:
        """The partitions of /proc/diskstats."""
        return self._blockdev_instances(self.blockdev_partitions, "partition")

    @blockdev_dm.refresh
    def _blockdev_dm_instances(self) -> dict[int, str] | None:
        """The named dm devices of /proc/diskstats."""
        return self._blockdev_instances(self.blockdev_dm, "dm")

    @blockdev_md.refresh
    def _blockdev_md_instances(self) -> dict[int, str] | None:
        """The md devices of /proc/diskstats."""
        return self._blockdev_instances(self.blockdev_md, "md")

    @blockdev_zram.refresh
    def _blockdev_zram_instances(self) -> dict[int, str] | None:
        """The zram devices of /proc/diskstats."""
        return self._blockdev_instances(self.blockdev_zram, "zram")

    @blockdev_wwid.refresh
    def _blockdev_wwid_instances(self) -> dict[int, str] | None:
        """The WWIDs of the disks."""
        wwids = self._blockdev_wwids()
        return self._current(self.blockdev_wwid, {inst: name for inst, (name, _) in wwids.items()})

    @blockdev_tape.refresh
    def _blockdev_tape_instances(self) -> dict[int, str] | None:
        """The stN tape devices with stats."""
        tapes = self._blockdev_tapes()
        return self._current(self.blockdev_tape, {inst: name for inst, (name, _) in tapes.items()})

    # -- clusters --------------------------------------------------------------------------

    @refresh(CLUSTER_STAT)
    def _blockdev_refresh_stat(self) -> dict[str, Any]:
        """Cluster 0's disk.dev.scheduler (sysfs) and disk.dev.capacity (/proc/partitions)."""
        wanted = self._wanted
        values: dict[str, Any] = {}
        if wanted.isdisjoint(_DEV_NAMES):
            return values
        disks = self._disks()
        if "disk.dev.scheduler" in wanted:
            values["disk.dev.scheduler"] = {
                inst: self._blockdev_scheduler(name) for inst, name, _ in disks
            }
        if "disk.dev.capacity" in wanted:
            sizes = self._blockdev_capacity()
            values["disk.dev.capacity"] = {
                inst: sizes[name] & _U64 for inst, name, _ in disks if sizes.get(name)
            }
        return values

    def _blockdev_values(
        self, prefix: str, devices: dict[int, Device], *, dmmd: bool = False
    ) -> dict[str, Any]:
        """The per-device metrics PREFIX.* asked for, from each device's counts."""
        wanted = self._wanted
        values: dict[str, Any] = {}
        for suffix, _, _, _, _, _ in FIELDS:
            name = f"{prefix}.{suffix}"
            if name not in wanted:
                continue
            if suffix == "capacity":
                values[name] = self._blockdev_capacities(prefix, devices)
                continue
            if not dmmd and suffix in NEED_FULL_LINE and self._blockdev_short_lines:
                continue  # pmdalinux: PM_ERR_APPVERSION once an old short line was seen
            value = COUNTS[suffix]
            if dmmd and suffix in DMMD_32BIT:
                values[name] = {i: value(d.counts) & _U32 for i, (_, d) in devices.items()}
            else:
                values[name] = {i: value(d.counts) for i, (_, d) in devices.items()}
        return values

    def _blockdev_capacities(self, prefix: str, devices: dict[int, Device]) -> dict[int, int]:
        """Sizes in Kbyte: zram's disksize, the others' /proc/partitions size when not 0."""
        if prefix == "zram":
            sizes = {}
            for inst, (_, dev) in devices.items():
                size = parse_numbers(self.proc.read(f"/sys/block/{dev.name}/disksize"), 1)
                sizes[inst] = size[0] >> 10 if size else 0
            return sizes
        blocks = self._blockdev_capacity()
        return {i: blocks[d.name] & _U64 for i, (_, d) in devices.items() if blocks.get(d.name)}

    @refresh(CLUSTER_PARTITIONS)
    def _blockdev_refresh_partitions(self) -> dict[str, Any]:
        """Cluster 10: disk.partitions.*."""
        return self._blockdev_values("disk.partitions", self._blockdev_devices()["partition"])

    @refresh(CLUSTER_ZRAM)
    def _blockdev_refresh_zram(self) -> dict[str, Any]:
        """Cluster 86: zram.* from /proc/diskstats, zram.capacity from sysfs disksize."""
        return self._blockdev_values("zram", self._blockdev_devices()["zram"])

    @refresh(CLUSTER_DM)
    def _blockdev_refresh_dm(self) -> dict[str, Any]:
        """Cluster 54: disk.dm.* and hinv.map.dmname."""
        devices = self._blockdev_devices()["dm"]
        values = self._blockdev_values("disk.dm", devices, dmmd=True)
        values["hinv.map.dmname"] = {i: d.name for i, (_, d) in devices.items()}
        return values

    @refresh(CLUSTER_MD)
    def _blockdev_refresh_md(self) -> dict[str, Any]:
        """Cluster 59: disk.md.* and hinv.map.mdname."""
        devices = self._blockdev_devices()["md"]
        values = self._blockdev_values("disk.md", devices, dmmd=True)
        values["hinv.map.mdname"] = {i: d.name for i, (_, d) in devices.items()}
        return values

    @refresh(CLUSTER_MDADM)
    def _blockdev_refresh_mdadm(self) -> dict[str, Any]:
        """Cluster 60: disk.md.status, the wait status of `mdadm --detail --test` per device."""
        devices = self._blockdev_devices()["md"]
        return {"disk.md.status": {i: self._blockdev_mdadm(n) for i, (n, _) in devices.items()}}

    def _blockdev_mdadm(self, name: str) -> int:
        """What pclose gives for `mdadm --detail --test /dev/NAME`: -1 if mdadm is not there."""
        if not os.access(self.mdadm, os.R_OK):
            return -1
        command = [self.mdadm, "--detail", "--test", f"/dev/{name}"]
        try:
            done = subprocess.run(
                command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
            )
        except PermissionError:
            return 126 << 8  # as the shell pmdalinux runs it through reports it
        except OSError:
            return 127 << 8
        code = done.returncode
        return (code & 0xFF) << 8 if code >= 0 else -code

    def _blockdev_zram_file(self, cluster: int) -> dict[str, Any]:
        """A zram sysfs statistics file's metrics, scaled to Kbyte where pmdalinux does."""
        filename, rows = ZRAM_FILES[cluster]
        values: dict[str, dict[int, int]] = {name: {} for name, _, _ in rows}
        for inst, (_, dev) in self._blockdev_devices()["zram"].items():
            numbers = parse_numbers(self.proc.read(f"/sys/block/{dev.name}/{filename}"), len(rows))
            if numbers is None:
                continue  # no values, as pmdalinux gives for a missing or short file
            for (name, _, _), number in zip(rows, numbers, strict=True):
                scale = ZRAM_SCALE.get(name)
                values[name][inst] = number if scale is None else scale(number)
        return values

    @refresh(CLUSTER_ZRAM_IO)
    def _blockdev_refresh_zram_io(self) -> dict[str, Any]:
        """Cluster 87: zram.io_stat.* from /sys/block/zramN/io_stat."""
        return self._blockdev_zram_file(CLUSTER_ZRAM_IO)

    @refresh(CLUSTER_ZRAM_MM)
    def _blockdev_refresh_zram_mm(self) -> dict[str, Any]:
        """Cluster 88: zram.mm_stat.* from /sys/block/zramN/mm_stat."""
        return self._blockdev_zram_file(CLUSTER_ZRAM_MM)

    @refresh(CLUSTER_ZRAM_BD)
    def _blockdev_refresh_zram_bd(self) -> dict[str, Any]:
        """Cluster 89: zram.bd_stat.* from /sys/block/zramN/bd_stat (backing device counts)."""
        return self._blockdev_zram_file(CLUSTER_ZRAM_BD)

    @refresh(CLUSTER_WWID)
    def _blockdev_refresh_wwid(self) -> dict[str, Any]:
        """Cluster 92: disk.wwid.*, summed over each WWID's paths with pmdalinux's arithmetic."""
        wanted = self._wanted
        wwids = self._blockdev_wwids()
        values: dict[str, Any] = {}
        # pmdalinux reads /proc/partitions for the other capacity metrics, not this one: the
        # WWID capacities have values only when one of those is in the same fetch
        sizes = self._blockdev_capacity() if not wanted.isdisjoint(_CAPACITY) else {}
        for suffix in _WWID_SUFFIXES:
            name = f"disk.wwid.{suffix}"
            if name not in wanted:
                continue
            values[name] = {}
            for inst, (_, paths) in wwids.items():
                value = self._blockdev_wwid_value(suffix, paths, sizes)
                if value is not None:
                    values[name][inst] = value
        return values

    def _blockdev_wwid_value(
        self, suffix: str, paths: list[tuple[str, Counts]], sizes: dict[str, int]
    ) -> Any:
        """One disk.wwid metric of one WWID from its paths (disks), as pmdalinux adds them up.

        The 32-bit tick counts add up in 32 bits; discard, blkdiscard,
        discard_merge and flush also add up in 32 bits though the metrics are
        64-bit; discard_bytes is the last path's; the scheduler is the last
        path's; capacity has no value if a path has no size.
        """
        if suffix == "scsi_paths":
            return " ".join(name for name, _ in paths)[:1023] if paths else None
        if suffix == "scheduler":
            return self._blockdev_scheduler(paths[-1][0]) if paths else None
        if suffix == "capacity":
            if not all(sizes.get(name) for name, _ in paths):
                return None
            return sum(sizes[name] for name, _ in paths) & _U64
        value = COUNTS[suffix]
        if suffix == "discard_bytes":
            return value(paths[-1][1]) & _U32 if paths else 0
        total = sum(value(counts) for _, counts in paths)
        if suffix in ("discard", "blkdiscard", "discard_merge", "flush") or suffix in _WWID_32:
            return total & _U32
        return total & _U64

    @refresh(CLUSTER_TAPEDEV)
    def _blockdev_refresh_tape(self) -> dict[str, Any]:
        """Cluster 71: tape.dev.* from sysfs, and hinv.ntape."""
        tapes = self._blockdev_tapes()
        values: dict[str, Any] = {"hinv.ntape": len(tapes)}
        for index, (field, _, _) in enumerate(TAPE_FIELDS):
            values[f"tape.dev.{field}"] = {inst: c[index] for inst, (_, c) in tapes.items()}
        return values


#: disk.wwid metrics that are 32-bit (their sums wrap at 2**32).
_WWID_32 = frozenset(row[0] for row in FIELDS if row[5] and row[0] != "inflight")
_WWID_SUFFIXES = (*(row[0] for row in FIELDS), "scheduler", "scsi_paths")
