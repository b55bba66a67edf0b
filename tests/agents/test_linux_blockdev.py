"""The linux agent's block devices: partitions, dm, md, zram, WWIDs, tapes, disk.dev extras.

pmdalinux's rules on a fake tree ($LINUX_STATSPATH) with such devices: which
domain each /proc/diskstats line goes to and the name it gets, the values and
their 32-bit quirks, capacities from /proc/partitions, schedulers, zram's and
tapes' sysfs files, ids kept in pmdaCache files; sources that are missing give
no values and no errors.  `make_tree` is also used to compare with pmdalinux by hand.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from purepcp.agents.linux import Linux, blockdev, procfs
from purepcp.pmapi.ids import PM_IN_NULL
from tests.support.linux_fetch import fetch, instances

U32 = 0xFFFFFFFF

DISKSTATS = b"""\
   7       0 loop0 1 0 2 0 0 0 0 0 0 0 0 0 0 0 0 0 0
   8       0 sda 100 5 2001 50 40 3 801 4294967300 2 60 4294967396 7 1 16 3 9 4294967297
   8       1 sda1 90 4 1800 45 30 2 600 20 0 50 70 1 0 8 1 2 3
   8       2 sda2 10 1 201 5 10 1 200 4294967295 0 10 10
   8      16 sdb 50 0 400 10 20 0 160 5 1 12 15 4294967295 2 4294967295 1 1 4294967295
 253       0 dm-0 10 0 80 1 1 0 8 1 0 2 2 0 0 0 0
 253       1 dm-1 11 0 8589934594 1 1 0 8589934594 1 0 2 2 0 0 0 0
 253       2 dm-2 12 0 88 1 1 0 8 1 0 2 2 0 0 0 0
   9       0 md0 20 0 160 2 4 0 32 2 0 3 3 0 0 0 0 1 1
   9       1 md1 21 0 168 2 4 0 32 2 0 3 3
 252       0 zram0 30 0 240 3 5 0 40 3 0 4 4 0 0 0 0 0 0
 259       0 nvme0n1 7 0 56 1 3 0 24 1 0 2 2 0 0 0 0
  11       0 sr0 1 0 8 1 0 0 0 0 0 1 1
"""

PARTITIONS = b"""\
major minor  #blocks  name

   8        0   1000000 sda
   8        1    500000 sda1
   8        2         0 sda2
   8       16   1000000 sdb
 253        0    300000 dm-0
 253        2    300001 dm-2
   9        0    200000 md0
 259        0   2000000 nvme0n1
"""

NAA = b"naa.600a0b800026b2820000a1b24dd0f3ad\n"
MDADM = """#!/bin/sh
case "$3" in
/dev/myraid) exit 0;;
*) exit 2;;
esac
"""


def make_tree(root: Path, *, mapper_node: bool = False) -> None:
    """A fake / with partitions, dm, md, zram, multipath disks and a tape, under ROOT.

    With MAPPER_NODE (root only), dm-2 has no sysfs name but a /dev/mapper node.
    """
    files: dict[str, bytes] = {
        "proc/diskstats": DISKSTATS,
        "proc/partitions": PARTITIONS,
        "sys/block/sda/queue/scheduler": b"none mq-deadline [bfq] kyber\n",
        "sys/block/sda/device/wwid": NAA,
        "sys/block/sdb/device/wwid": NAA,
        "sys/block/sdb/queue/iosched/fifo_batch": b"16\n",
        "sys/block/nvme0n1/wwid": b"eui.0025388b71b1c4a1\n",
        "sys/block/nvme0n1/queue/scheduler": b"none\n",
        "sys/block/dm-0/dm/name": b"vg-root\n",
        "sys/block/zram0/disksize": b"1073741824\n",
        "sys/block/zram0/mm_stat": b"  4096  2048  8192  0  8192  3  1  2  0\n",
        "sys/block/zram0/io_stat": b"   1   2   3   4\n",
        "sys/class/scsi_tape/st0/stats/in_flight": b"1\n",
        "sys/class/scsi_tape/st0/stats/io_ns": b"123456789\n",
        "sys/class/scsi_tape/st0/stats/read_byte_cnt": b"65536\n",
        "sys/class/scsi_tape/st0/stats/read_cnt": b"2\n",
        "sys/class/scsi_tape/st0/stats/write_cnt": b"-1\n",
        "sys/class/scsi_tape/nst0/stats/read_cnt": b"99\n",
        "sys/class/scsi_tape/st1/dev": b"9:1\n",
    }
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    (root / "dev" / "md").mkdir(parents=True)
    (root / "dev" / "md" / "myraid").symlink_to("../md0")
    (root / "dev" / "md" / "0").symlink_to("../md1")  # numeric names are skipped
    (root / "dev" / "mapper").mkdir()
    if mapper_node:
        os.mknod(root / "dev" / "mapper" / "vg-swap", 0o600 | stat.S_IFBLK, os.makedev(253, 2))
    mdadm = root / "mdadm"
    mdadm.write_text(MDADM)
    mdadm.chmod(0o755)


@pytest.fixture
def tree(tmp_path: Path, monkeypatch) -> Iterator[tuple[Linux, Path]]:
    """A linux agent on the fake tree, with the fake mdadm."""
    make_tree(tmp_path)
    monkeypatch.setenv("LINUX_STATSPATH", str(tmp_path))
    monkeypatch.setenv("LINUX_MDADM", str(tmp_path / "mdadm"))
    monkeypatch.delenv("PCP_VAR_DIR", raising=False)
    agent = Linux()
    yield agent, tmp_path
    agent.stop()


def names(prefix: str) -> list[str]:
    """The family's metric names under PREFIX."""
    return [m.name for m in blockdev.METRICS if m.name.startswith(prefix + ".")]


# --- rules and parsers ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("dm-0", "dm"),
        ("md127", "md"),
        ("md127p1", "md"),  # md partitions go to md, as in pmdalinux
        ("sda1", "partition"),
        ("nvme0n1p2", "partition"),
        ("sda", "disk"),
        ("nvme0n1", "disk"),
        ("zram0", "zram"),
        ("loop0", None),
        ("ram0", None),
        ("sr0", None),
        ("3600a0b800026b28x", "disk"),  # 17 characters: not a WWID
        ("3600a0b800026b282x", "wwid"),  # 18 characters, not a partition (no trailing digit)
        ("3600a0b800026b2821", "partition"),  # a trailing digit makes it a partition first
    ],
)
def test_device_kind_follows_pmdalinux_order(name: str, kind: str | None) -> None:
    """dm, md, partition, disk, zram, wwid, in that order; loop, ram, CD-ROM left out."""
    assert blockdev.device_kind(name) == kind


def test_parse_block_devices_keeps_discard_and_flush() -> None:
    """17 counts per line; discard needs all 4 of its fields, flush both of its."""
    devices = {d.name: d for d in procfs.parse_block_devices(DISKSTATS)}
    assert len(devices) == 13
    sda = devices["sda"]
    assert (sda.major, sda.minor) == (8, 0)
    assert sda.counts[11:] == (7, 1, 16, 3, 9, 4294967297)
    assert devices["sda2"].counts[11:] == (0,) * 6  # an 11-count line
    assert devices["md0"].counts[11:] == (0, 0, 0, 0, 1, 1)
    short = procfs.parse_block_devices(
        b"   8 1 sda1 1 2 3 4\n   8 2 sda2 1 2 3 4 5 6 7 8 9 10 11 1 2 3\n"
    )
    assert short[0].short and short[0].counts == (1, 0, 2, 0, 3, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    assert short[1].counts[11:] == (0, 0, 0, 0, 0, 0)  # 3 of the 4 discard counts: all 0


def test_parse_partitions() -> None:
    """/proc/partitions sizes by name; the header and blank lines are skipped."""
    sizes = procfs.parse_partitions(PARTITIONS)
    assert sizes["sda"] == 1000000 and sizes["sda2"] == 0 and "name" not in sizes


@pytest.mark.parametrize(
    ("line", "selected"),
    [
        (b"noop deadline [cfq]\n", "cfq"),
        (b"[none] mq-deadline\n", "none"),
        (b"none\n", None),
        (b"noop [deadline\n", None),
        (b"", None),
    ],
)
def test_scheduler_is_the_bracketed_one(line: bytes, selected: str | None) -> None:
    """The scheduler in brackets, or None (pmdalinux's "unknown")."""
    assert blockdev.scheduler(line) == selected


def test_scsi_id_maps_prefixes() -> None:
    """t10./eui./naa. become 1/2/3; the last byte is dropped; nothing is "unknown"."""
    assert blockdev.scsi_id(NAA) == "3600a0b800026b2820000a1b24dd0f3ad"
    assert blockdev.scsi_id(b"t10.ATA     QEMU HARDDISK\n") == "1ATA     QEMU HARDDISK"
    assert blockdev.scsi_id(b"eui.0025\n") == "20025"
    assert blockdev.scsi_id(b"abc") == "ab"  # no newline: the last byte goes anyway
    assert blockdev.scsi_id(None) == "unknown"


def test_tape_field() -> None:
    """A stats file feeds the first counter its name begins (its value: strtoll, unsigned)."""
    assert blockdev.tape_field("read_cnt") == 4
    assert blockdev.tape_field("read") == 3  # read_byte_cnt comes first
    assert blockdev.tape_field("bogus") is None


# --- the agent on the fake tree ------------------------------------------------------------


def test_instances_and_names(tree) -> None:
    """Each device in its domain, with pmdalinux's names and device_name labels."""
    agent, _ = tree
    assert instances(agent, 1) == {0: "sda", 1: "sdb", 2: "nvme0n1"}
    assert instances(agent, 10) == {0: "sda1", 1: "sda2"}
    assert instances(agent, 24) == {0: "vg-root"}  # dm-1 and dm-2 have no name: left out
    assert instances(agent, 25) == {0: "myraid", 1: "md1"}
    assert instances(agent, 38) == {0: "zram0"}
    assert instances(agent, 42) == {0: "3600a0b800026b2820000a1b24dd0f3ad", 1: "20025388b71b1c4a1"}
    assert instances(agent, 34) == {0: "st0"}  # nst0 is st0's twin, st1 has no stats
    assert agent.instance_labels(agent.blockdev_dm, 0, "vg-root") == {"device_name": "vg-root"}
    assert agent.blockdev_md.labels == {"device_type": "block", "indom_name": "per md device"}
    assert agent.blockdev_partitions.labels["indom_name"] == "per partition"
    assert agent.blockdev_zram.labels == {}


def test_dm_name_from_mapper_node(tmp_path: Path, monkeypatch) -> None:
    """Without sysfs dm/name, a block node in /dev/mapper with the same numbers names it."""
    if os.geteuid() != 0:
        pytest.skip("making a block device node needs root")
    make_tree(tmp_path, mapper_node=True)
    monkeypatch.setenv("LINUX_STATSPATH", str(tmp_path))
    agent = Linux()
    try:
        assert instances(agent, 24) == {0: "vg-root", 1: "vg-swap"}
        values = fetch(agent, "hinv.map.dmname", "disk.dm.capacity")
        assert values["hinv.map.dmname"] == {0: "dm-0", 1: "dm-2"}
        assert values["disk.dm.capacity"] == {0: 300000, 1: 300001}
    finally:
        agent.stop()


def test_partition_values(tree) -> None:
    """disk.partitions.* from the counts; 32-bit ticks wrap; capacity only when not 0."""
    agent, _ = tree
    values = fetch(agent, *names("disk.partitions"))
    assert values["disk.partitions.read"] == {0: 90, 1: 10}
    assert values["disk.partitions.total"] == {0: 120, 1: 20}
    assert values["disk.partitions.read_bytes"] == {0: 900, 1: 100}  # 201 // 2
    assert values["disk.partitions.total_bytes"] == {0: 1200, 1: 200}  # (201 + 200) // 2
    assert values["disk.partitions.total_rawactive"][1] == 4  # 5 + 0xffffffff, 32 bits
    assert values["disk.partitions.capacity"] == {0: 500000}  # sda2's size is 0: no value
    assert values["disk.partitions.discard"] == {0: 1, 1: 0}
    assert values["disk.partitions.blkdiscard"] == {0: 8, 1: 0}
    assert values["disk.partitions.discard_bytes"] == {0: 4, 1: 0}
    assert values["disk.partitions.flush_rawactive"] == {0: 3, 1: 0}
    assert values["disk.partitions.inflight"] == {0: 0, 1: 0}


def test_old_short_lines_stop_partition_details(tree) -> None:
    """After a 4-count line, merges and times of partitions and zram have no value (as in PCP)."""
    agent, root = tree
    (root / "proc" / "diskstats").write_bytes(DISKSTATS + b"   8      3 sda3 1 2 3 4\n")
    values = fetch(agent, "disk.partitions.read", "disk.partitions.avactive", "zram.read_merge")
    assert values["disk.partitions.read"][2] == 1
    assert values["disk.partitions.avactive"] == {}
    assert values["zram.read_merge"] == {}


def test_dm_and_md_values(tree) -> None:
    """disk.dm and disk.md: Kbyte counts are 32-bit there; hinv.map gives kernel names."""
    agent, root = tree
    values = fetch(
        agent, *names("disk.dm"), *names("disk.md"), "hinv.map.dmname", "hinv.map.mdname"
    )
    assert values["hinv.map.dmname"] == {0: "dm-0"}
    assert values["hinv.map.mdname"] == {0: "md0", 1: "md1"}
    assert values["disk.dm.read"] == {0: 10}
    assert values["disk.dm.capacity"] == {0: 300000}
    assert values["disk.md.capacity"] == {0: 200000}  # md1 is not in /proc/partitions
    assert values["disk.md.flush"] == {0: 1, 1: 0}
    (root / "sys" / "block" / "dm-1" / "dm").mkdir(parents=True)
    (root / "sys" / "block" / "dm-1" / "dm" / "name").write_bytes(b"big\n")
    values = fetch(agent, "disk.dm.read_bytes", "disk.dm.blkread", "disk.dm.total_bytes")
    assert instances(agent, 24) == {0: "vg-root", 1: "big"}
    assert values["disk.dm.blkread"][1] == 8589934594
    assert values["disk.dm.read_bytes"][1] == (8589934594 // 2) & U32  # truncated, as in PCP
    assert values["disk.dm.total_bytes"][1] == (2 * 8589934594 // 2) & U32


def test_md_status_runs_mdadm(tree, monkeypatch) -> None:
    """disk.md.status is mdadm's wait status for /dev/NAME; -1 without mdadm."""
    agent, root = tree
    assert fetch(agent, "disk.md.status")["disk.md.status"] == {0: 0, 1: 2 << 8}
    agent.mdadm = str(root / "no-such-mdadm")
    assert fetch(agent, "disk.md.status")["disk.md.status"] == {0: -1, 1: -1}


def test_disk_dev_extras(tree) -> None:
    """Discard and flush counts, scheduler (sysfs, or guessed from iosched), capacity."""
    agent, _ = tree
    wanted = [*names("disk.dev"), *names("disk.all")]
    values = fetch(agent, *wanted)
    assert values["disk.dev.discard"] == {0: 7, 1: 4294967295, 2: 0}
    assert values["disk.dev.discard_bytes"] == {0: 8, 1: 4294967295 // 2, 2: 0}
    assert values["disk.dev.flush_rawactive"] == {0: 1, 1: U32, 2: 0}  # 32 bits
    assert values["disk.dev.scheduler"] == {0: "bfq", 1: "deadline", 2: "unknown"}
    assert values["disk.dev.capacity"] == {0: 1000000, 1: 1000000, 2: 2000000}
    assert values["disk.all.discard"] == {PM_IN_NULL: 7 + 4294967295}
    assert values["disk.all.flush"] == {PM_IN_NULL: 10}
    assert values["disk.all.flush_rawactive"] == {PM_IN_NULL: (1 + U32) & U32}


def test_wwid_sums_paths_as_pmdalinux(tree) -> None:
    """disk.wwid adds up its paths; some sums are 32-bit, discard_bytes is the last path's."""
    agent, _ = tree
    values = fetch(agent, *names("disk.wwid"))
    assert values["disk.wwid.scsi_paths"] == {0: "sda sdb", 1: "nvme0n1"}
    assert values["disk.wwid.read"] == {0: 150, 1: 7}
    assert values["disk.wwid.discard"] == {0: (7 + U32) & U32, 1: 0}  # 64-bit type, 32-bit sum
    assert values["disk.wwid.discard_bytes"] == {0: U32 // 2, 1: 0}  # the last path only
    assert values["disk.wwid.write_rawactive"][0] == (4 + 5) & U32
    assert values["disk.wwid.inflight"] == {0: 3, 1: 0}
    assert values["disk.wwid.scheduler"] == {0: "deadline", 1: "unknown"}
    assert values["disk.wwid.capacity"] == {}  # pmdalinux reads no sizes for it alone
    values = fetch(agent, "disk.wwid.capacity", "disk.dm.capacity")
    assert values["disk.wwid.capacity"] == {0: 2000000, 1: 2000000}


def test_zram_values(tree) -> None:
    """zram counts, disksize in Kbyte, mm_stat bytes >> 10 and pages << 2; no bd_stat file."""
    agent, _ = tree
    values = fetch(agent, *names("zram"), *names("zram.io_stat"), *names("zram.mm_stat"))
    assert values["zram.read"] == {0: 30}
    assert values["zram.capacity"] == {0: 1048576}
    assert values["zram.io_stat.failed.reads"] == {0: 1}
    assert values["zram.io_stat.notify_free"] == {0: 4}
    assert values["zram.mm_stat.data_size.original"] == {0: 4}
    assert values["zram.mm_stat.mem.used_total"] == {0: 8}
    assert values["zram.mm_stat.pages.same"] == {0: 12}
    assert values["zram.mm_stat.pages.huge"] == {0: 8}
    bd = fetch(agent, "zram.bd_stat.count", "zram.bd_stat.writes")
    assert bd == {"zram.bd_stat.count": {}, "zram.bd_stat.writes": {}}


def test_tape_values(tree) -> None:
    """tape.dev.* from st0's stats files (others 0), and hinv.ntape."""
    agent, _ = tree
    values = fetch(agent, "hinv.ntape", *names("tape.dev"))
    assert values["hinv.ntape"] == {PM_IN_NULL: 1}
    assert values["tape.dev.io_ns"] == {0: 123456789}
    assert values["tape.dev.read_byte_cnt"] == {0: 65536}
    assert values["tape.dev.write_cnt"] == {0: (1 << 64) - 1}
    assert values["tape.dev.write_ns"] == {0: 0}


def test_missing_sources_give_no_values(tmp_path: Path, monkeypatch) -> None:
    """No diskstats, partitions or sysfs: every metric exists with no value, and no error."""
    (tmp_path / "proc").mkdir()
    monkeypatch.setenv("LINUX_STATSPATH", str(tmp_path))
    monkeypatch.setenv("LINUX_MDADM", str(tmp_path / "none"))
    agent = Linux()
    try:
        values = fetch(agent, *(m.name for m in blockdev.METRICS))
        assert all(isinstance(v, dict) for v in values.values())
        valued = {name for name, v in values.items() if v}
        assert valued == {"disk.all." + s for s in blockdev.DEV_SUFFIXES} | {"hinv.ntape"}
        assert values["hinv.ntape"] == {PM_IN_NULL: 0}
    finally:
        agent.stop()


def test_ids_saved_as_pmdacache(tmp_path: Path, monkeypatch) -> None:
    """Partition, dm, md, zram and WWID ids go to config/pmda/60.N; tape ids are not saved."""
    make_tree(tmp_path)
    monkeypatch.setenv("LINUX_STATSPATH", str(tmp_path))
    monkeypatch.setenv("PCP_VAR_DIR", str(tmp_path / "var"))
    saved = tmp_path / "var" / "config" / "pmda"
    saved.mkdir(parents=True)
    (saved / "60.10").write_text("2 0 2147483647\n4 1700000000 sda2\n")
    agent = Linux()
    try:
        assert instances(agent, 10) == {4: "sda2", 5: "sda1"}
        assert instances(agent, 42)
        assert instances(agent, 34) == {0: "st0"}
    finally:
        agent.stop()
    for serial in (10, 24, 25, 38, 42):
        assert (saved / f"60.{serial}").exists(), serial
    assert not (saved / "60.34").exists()
    assert "5 " in (saved / "60.10").read_text()


def test_one_read_of_diskstats_per_fetch(tree, monkeypatch) -> None:
    """Disks, partitions, dm, md and zram share one read of /proc/diskstats per fetch."""
    agent, _ = tree
    reads: list[str] = []
    read = agent.proc.read
    monkeypatch.setattr(agent.proc, "read", lambda path: reads.append(path) or read(path))
    fetch(agent, "disk.dev.read", "disk.partitions.read", "disk.dm.read", "zram.read")
    assert reads.count("/proc/diskstats") == 1
    assert "/proc/partitions" not in reads  # only capacity metrics need it
