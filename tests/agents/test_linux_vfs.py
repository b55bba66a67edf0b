"""The linux agent's vfs family: vfs.*, vfs.locks.*, tmpfs.*, swapdev.*, mem.slabinfo.*,
mem.ksm.*, tty.serial.*, sysfs.kernel.*, hinv.hugepagesize and pmda.*: parsers on samples
of our own, pmdalinux's rules and quirks (root-only files, kept values), and the agent on a
fake tree.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from purepcp.agents.linux import Linux, catalog, vfs
from purepcp.pmapi import PCP_COMPAT_VERSION
from purepcp.pmda.testing import AgentHarness

# Samples written for these tests.
SLABINFO = b"""slabinfo - version: 2.1
# name <active_objs> <num_objs> <objsize> <objperslab> <pagesperslab> : tunables ...
test_cache   100  120  256  16  1 : tunables  0  0  0 : slabdata   7   8   0
big cache     10   10 4096   8  8 : tunables  0  0  0 : slabdata   2   2   0
"""

SERIAL = b"""serinfo:1.0 driver revision:
0: uart:16550A port:000003F8 irq:4 tx:218 rx:5 fe:2 RTS|DTR
1: uart:unknown port:000002F8 irq:3
2: uart:16550A port:000003E8 irq:9 tx:0 rx:0
"""

LOCKS = b"""1: POSIX  ADVISORY  WRITE 811 08:01:1234 0 EOF
1: -> POSIX  ADVISORY  WRITE 812 08:01:1234 0 EOF
2: FLOCK  ADVISORY  READ 900 00:1a:77 0 EOF
3: OFDLCK ADVISORY  READ -1 08:01:99 0 EOF
4: LEASE  ACTIVE    READ 950 08:01:55 0 EOF
5: DELEG  ACTIVE    RW 951 08:01:56 0 EOF
"""

SWAPS = b"""Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority
/dev/sda2                               partition\t2097148\t\t1024\t\t-2
/swapfile                               file\t\t1048572\t\t0\t\t5
"""


# --- the table ---------------------------------------------------------------------------


def test_metrics_table() -> None:
    """61 metrics with pmdalinux's clusters and items."""
    by_name = {m.name: m for m in vfs.METRICS}
    assert len(by_name) == len(vfs.METRICS) == 61
    assert set(by_name) <= set(catalog.BY_NAME)
    assert len({(m.cluster, m.item) for m in vfs.METRICS}) == 61
    assert by_name["vfs.files.count"].type == vfs.I32
    assert by_name["sysfs.kernel.debug.extfrag_unusable"].indom == 19


# --- parsers and rules ---------------------------------------------------------------------


def test_parse_slabinfo_v2() -> None:
    """Version 2.1 columns; a space in a name before a letter becomes '_'; total_size is
    active objects * pages per slab pages / objects per slab."""
    caches = vfs.parse_slabinfo(SLABINFO, 12)
    assert caches is not None and list(caches) == ["test_cache", "big_cache"]
    test = caches["test_cache"]
    assert (test.active_objs, test.total_objs, test.object_size) == (100, 120, 256)
    assert (test.objects_per_slab, test.pages_per_slab) == (16, 1)
    assert (test.active_slabs, test.total_slabs) == (7, 8)
    assert test.total_size == (1 * 100 << 12) // 16
    assert caches["big_cache"].total_size == (8 * 10 << 12) // 8


def test_parse_slabinfo_versions_and_errors() -> None:
    """Version 1.1 has no objects per slab nor total slabs; 1.0 gives a 0 total slabs; a
    line that does not scan ends the reading; no header, no caches."""
    v11 = vfs.parse_slabinfo(
        b"slabinfo - version: 1.1\nkmem 5 6 32 1 2 1\nbad x\nlate 1 1 1 1 1 1\n", 12
    )
    assert v11 is not None and list(v11) == ["kmem"]
    assert v11["kmem"].objects_per_slab is None and v11["kmem"].total_slabs is None
    assert v11["kmem"].total_size == (1 * 1) << 12
    v10 = vfs.parse_slabinfo(b"slabinfo - version: 1.0\nold 3 4\n", 12)
    assert v10 is not None and v10["old"].total_slabs == 0 and v10["old"].object_size is None
    assert vfs.parse_slabinfo(b"", 12) is None
    assert vfs.parse_slabinfo(b"slabinfo - version: 3.0\nx 1 1\n", 12) == {}


def test_parse_serial() -> None:
    """Ports with a known uart, the fields their line has (zero error counts omitted)."""
    assert vfs.parse_serial(SERIAL) == [
        ("0", {"tty.serial.irq": 4, "tty.serial.tx": 218, "tty.serial.rx": 5,
               "tty.serial.frame": 2}),
        ("2", {"tty.serial.irq": 9, "tty.serial.tx": 0, "tty.serial.rx": 0}),
    ]  # fmt: skip


def test_locks() -> None:
    """Kinds by prefix (OFDLCK is POSIX, DELEG a lease), RW both read and write, waiters
    skipped; all 0 without the file."""
    values = vfs.locks(LOCKS)
    assert (values["vfs.locks.posix.count"], values["vfs.locks.posix.write"]) == (2, 1)
    assert values["vfs.locks.posix.read"] == 1
    assert values["vfs.locks.flock.read"] == 1
    assert values["vfs.locks.lease.count"] == 2
    assert (values["vfs.locks.lease.read"], values["vfs.locks.lease.write"]) == (2, 1)
    assert set(vfs.locks(None).values()) == {0}


def test_sys_fs() -> None:
    """Each file's numbers as ints (wrapped to 32 bits); all 0 if one file is missing."""
    files = {
        "file-nr": b"800\t0\t9223372036854775807\n",
        "inode-state": b"1000 20 0 0 0 0 0\n",
        "dentry-state": b"500 400 45 0 0 0\n",
        "aio-max-nr": b"65536\n",
        "aio-nr": b"3\n",
    }
    values = vfs.sys_fs(files)
    assert values["vfs.files.count"] == 800
    assert values["vfs.files.max"] == -1  # glibc's %d of a huge number
    assert (values["vfs.dentry.free"], values["vfs.aio.max"], values["vfs.aio.count"]) == (
        400,
        65536,
        3,
    )
    assert set(vfs.sys_fs({**files, "aio-nr": None}).values()) == {0}


def test_parse_swaps() -> None:
    """Lines starting with '/': path, size, used, priority."""
    assert vfs.parse_swaps(SWAPS) == [
        ("/dev/sda2", 2097148, 1024, -2),
        ("/swapfile", 1048572, 0, 5),
    ]


def test_tmpfs_mounts() -> None:
    """tmpfs mounts only, named by the resolved mount point; the first of a name wins."""
    rows = [
        ("tmpfs", "/run", "tmpfs", "rw"),
        ("/dev/sda1", "/", "ext4", "rw"),
        ("tmpfs", "/var/run", "tmpfs", "rw"),
        ("shm", "/dev/shm", "tmpfs", "rw"),
    ]
    resolve = {"/var/run": "/run"}.get
    assert vfs.tmpfs_mounts(rows, resolve) == {"/run": "/run", "/dev/shm": "/dev/shm"}


def test_tmpfs_full_of_empty_filesystem() -> None:
    """0 used of 0 available is NaN, as pmdalinux's double division gives."""
    st = os.statvfs_result((4096, 4096, 0, 0, 0, 10, 10, 10, 0, 255))
    assert math.isnan(vfs.TMPFS_VALUES["tmpfs.full"](st))


def test_extfrag() -> None:
    """Normal zones only, summed; lines too short or without numbers skipped."""
    data = (
        b"Node 0, zone      DMA 0.000 0.000\n"
        b"Node 0, zone   Normal 0.250 0.500 0.125\n"
        b"Node 1, zone   Normal\n"
    )
    assert vfs.extfrag(data) == {"node0": (0.875, 3)}


# --- the agent on a fake tree ------------------------------------------------------------------


def _write(root: Path, path: str, data: bytes) -> None:
    """Write DATA at ROOT/PATH."""
    target = root / path.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)


@pytest.fixture
def tree(tmp_path: Path, monkeypatch) -> Iterator[tuple[AgentHarness, Path]]:
    """A harness around an agent reading a fake tree."""
    monkeypatch.setenv("LINUX_STATSPATH", str(tmp_path))
    for name in ("PCP_VAR_DIR", "LINUX_ACCESS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LINUX_NCPUS", "1")
    _write(tmp_path, "/proc/stat", b"cpu  1 2 3 4 5 6 7 8 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n")
    _write(tmp_path, "/proc/meminfo", b"MemTotal: 1000 kB\nHugepagesize:    2048 kB\n")
    _write(tmp_path, "/proc/slabinfo", SLABINFO)
    _write(tmp_path, "/proc/tty/driver/serial", SERIAL)
    _write(tmp_path, "/proc/locks", LOCKS)
    _write(tmp_path, "/proc/swaps", SWAPS)
    _write(tmp_path, "/sys/kernel/uevent_seqnum", b"4242\n")
    _write(tmp_path, "/sys/kernel/mm/ksm/pages_to_scan", b"100\n")
    _write(tmp_path, "/sys/kernel/mm/ksm/run", b"1\n")
    agent = Linux()
    yield AgentHarness(agent), tmp_path
    agent.stop()


def test_fake_root_only_files(tree) -> None:
    """Slab caches and serial ports: nothing for a client without credentials or not root,
    values for uid 0."""
    h, _ = tree
    assert h.fetch("mem.slabinfo.objects.active") == {}
    assert h.fetch("tty.serial.tx") == {}
    h.as_client(uid=1000, gid=1000)
    assert h.fetch("mem.slabinfo.objects.active") == {}
    h.as_client(uid=0, gid=0, context=2)
    assert h.fetch("mem.slabinfo.objects.active") == {"test_cache": 100, "big_cache": 10}
    assert h.fetch("mem.slabinfo.slabs.total") == {"test_cache": 8, "big_cache": 2}
    assert h.fetch("tty.serial.tx") == {"0": 218, "2": 0}
    assert h.fetch("tty.serial.frame") == {"0": 2, "2": 0}


def test_fake_all_access(tree, monkeypatch) -> None:
    """$LINUX_ACCESS=1 lets every client see them."""
    monkeypatch.setenv("LINUX_ACCESS", "1")
    agent = Linux()
    try:
        assert AgentHarness(agent).fetch("tty.serial.irq") == {"0": 4, "2": 9}
    finally:
        agent.stop()


def test_fake_serial_fields_kept(tree) -> None:
    """A port's counts its line no longer shows keep their last value."""
    h, root = tree
    h.as_client(uid=0, gid=0)
    assert h.fetch("tty.serial.frame") == {"0": 2, "2": 0}
    _write(root, "/proc/tty/driver/serial", SERIAL.replace(b" fe:2", b""))
    assert h.fetch("tty.serial.frame") == {"0": 2, "2": 0}


def test_fake_values(tree) -> None:
    """Swap devices, locks, uevents, huge page size, KSM, pmda.*."""
    h, _ = tree
    assert h.fetch("swapdev.free") == {"/dev/sda2": 2097148 - 1024, "/swapfile": 1048572}
    assert h.fetch("swapdev.priority") == {"/dev/sda2": -2, "/swapfile": 5}
    assert h.fetch("swapdev.vlength") == {"/dev/sda2": 0, "/swapfile": 0}
    assert h.fetch("vfs.locks.flock.count") == 1
    assert h.fetch("sysfs.kernel.uevent_seqnum") == 4242
    assert h.fetch("hinv.hugepagesize") == 2048 * 1024
    assert h.fetch("mem.ksm.run_state") == 1
    assert h.fetch("mem.ksm.pages_to_scan") == 100
    assert h.fetch("mem.ksm.full_scans") == 0  # no file: pmdalinux's never-set 0
    assert h.fetch("pmda.version") == PCP_COMPAT_VERSION
    assert h.fetch("pmda.uname").startswith(os.uname().sysname + " ")


def test_fake_missing_sources(tree) -> None:
    """Missing files: vfs.* all 0, no swap devices, no uevent number, no hugepage size; KSM
    keeps what it read."""
    h, root = tree
    assert h.fetch("mem.ksm.run_state") == 1
    for path in ("proc/swaps", "proc/meminfo", "sys/kernel/uevent_seqnum", "sys/kernel/mm/ksm/run"):
        (root / path).unlink()
    assert h.fetch("vfs.files.count") == 0
    assert h.fetch("swapdev.length") == {}
    assert h.fetch("sysfs.kernel.uevent_seqnum") is None
    assert h.fetch("hinv.hugepagesize") is None
    assert h.fetch("mem.ksm.run_state") == 1
    assert h.fetch("sysfs.kernel.debug.extfrag_unusable") == {}


def test_fake_tmpfs_statfs(tree) -> None:
    """The tmpfs metrics are statfs of the mount point as /proc/self/mounts writes it."""
    h, root = tree
    _write(root, "/proc/self/mounts", f"tmpfs {root} tmpfs rw 0 0\n".encode())
    st = os.statvfs(root)
    assert h.fetch("tmpfs.capacity") == {str(root.resolve()): st.f_blocks * st.f_bsize // 1024}
    assert h.fetch("tmpfs.maxfiles") == {str(root.resolve()): st.f_files & 0xFFFFFFFF}


def test_fake_ksm_reread(tree) -> None:
    """KSM files are reread at each fetch (kept open), other files in the directory are not
    read, and names are matched by pmdalinux's prefixes."""
    h, root = tree
    _write(root, "/sys/kernel/mm/ksm/advisor_mode", b"none\n")
    _write(root, "/sys/kernel/mm/ksm/pages_sharing", b"7\nignored\n")
    assert h.fetch_many("mem.ksm.run_state", "mem.ksm.pages_sharing") == [1, 7]
    _write(root, "/sys/kernel/mm/ksm/run", b"0\n")
    _write(root, "/sys/kernel/mm/ksm/pages_sharing", b"")  # empty: the value is kept
    assert h.fetch_many("mem.ksm.run_state", "mem.ksm.pages_sharing") == [0, 7]
