"""The linux agent: declared as the catalog says, computing values as pmdalinux does.

Component tests run everywhere: the agent's descriptors, namespace and help
against agents/linux/catalog.py; a fetch of every metric on this host, with the
Python type each value must have; instance names and a few values against /proc
and psutil; the /proc parsers and pmdalinux's instance rules on fixed samples; and
the whole agent on a fake /proc tree ($LINUX_STATSPATH) whose disks, CPUs and
mounts change between fetches.  Interop tests (marker interop) run PCP's own pmcd
twice, once with this agent as a pipe agent and once with PCP's pmdalinux, and
compare what PCP's pminfo and pmprobe say about both.
"""

from __future__ import annotations

import inspect
import math
import os
import re
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import psutil
import pytest

from purepcp.agents.linux import (
    ALL_INDOMS,
    NET_COUNTERS,
    Linux,
    catalog,
    make_pmns,
    meminfo,
    procfs,
    speed_mbyte,
    system,
    vmstat,
)
from purepcp.agents.linux import INDOMS as AGENT_INDOMS
from purepcp.agents.linux.catalog import (
    BY_NAME,
    INDOMS,
    LOAD_INSTANCES,
    METRICS,
    REQUIRED,
    MetricInfo,
)
from purepcp.pmapi.errors import PM_ERR_APPVERSION
from purepcp.pmapi.ids import PM_IN_NULL
from purepcp.pmapi.pdu.records import DescReqPDU
from purepcp.pmapi.types import PMSem, PMType
from tests.support.linux_fetch import fetch, instances
from tests.support.reference_pmcd import RunningPMCD, reference_pmcd, require_reference

ROOT = Path(__file__).resolve().parents[2]
PMDALINUX = "/var/lib/pcp/pmdas/linux/pmdalinux"
HZ = os.sysconf("SC_CLK_TCK")
INTEGER_TYPES = {
    PMType.PM_TYPE_32,
    PMType.PM_TYPE_U32,
    PMType.PM_TYPE_64,
    PMType.PM_TYPE_U64,
}

#: The /proc/vmstat fields this host's kernel gives (names only).
HOST_VMSTAT = {
    line.split(b" ", 1)[0].decode()
    for line in Path("/proc/vmstat").read_bytes().split(b"\n")
    if line
}


def _vmstat_valued(fields: set[str]) -> set[str]:
    """The mem.vmstat metrics pmdalinux gives a value when /proc/vmstat has FIELDS."""
    valued = {f for f in vmstat.READ if vmstat.SOURCE[f] in fields} | set(vmstat.TOTALS)
    for field, parts in vmstat.FALLBACKS.items():
        if field not in fields and all(part in fields for part in parts):
            valued.add(field)  # pmdalinux's sum of the two parts
    return {vmstat.PREFIX + f for f in valued}


#: Metrics pmdalinux answers with an error on every kernel we support (2.6 on), and so do we.
ANSWERED_WITH_ERRORS = {"swap.in": PM_ERR_APPVERSION, "swap.out": PM_ERR_APPVERSION}

#: Metrics a Linux host may legitimately have no value for.
MAY_BE_EMPTY = {
    # /proc/vmstat fields of older (or differently configured) kernels
    *(
        vmstat.PREFIX + f
        for f, _, _ in vmstat.FIELDS
        if vmstat.PREFIX + f not in _vmstat_valued(HOST_VMSTAT)
    ),
    "mem.util.shared",  # MemShared: 2.4 kernels only
    # /proc/meminfo fields of 32-bit, vendor or differently configured kernels
    *(
        meminfo.PREFIX + suffix
        for suffix, _, field, _ in (*meminfo.FIELDS, *meminfo.HUGEPAGE_BYTES)
        if field.encode() not in procfs.parse_meminfo(Path("/proc/meminfo").read_bytes())
    ),
    "network.interface.speed",  # no interface with a speed (lo, virtual ones)
    "network.interface.baudrate",
    "network.interface.duplex",
    "network.interface.mtu",
    *(name for name in BY_NAME if name.startswith("disk.dev.")),  # no disks (containers)
    *(name for name in BY_NAME if name.startswith("filesys.")),  # statfs refused
}


def pmid(agent: Linux, name: str) -> int:
    """The PMID the agent's namespace gives NAME."""
    return agent.pmns.lookup(name)


def one(values: dict[str, Any], name: str) -> Any:
    """The value of singular metric NAME in a `fetch` answer."""
    return values[name][PM_IN_NULL]


@pytest.fixture
def agent(monkeypatch) -> Iterator[Linux]:
    """A linux agent on this host's /proc (saving no instance ids), stopped afterwards."""
    for name in ("PCP_VAR_DIR", "LINUX_STATSPATH", "LINUX_HERTZ", "LINUX_NCPUS"):
        monkeypatch.delenv(name, raising=False)
    linux = Linux()
    yield linux
    linux.stop()


# --- declarations: descriptors, namespace, help ---------------------------------------------


def test_every_catalog_metric_declared_with_its_descriptor(agent: Linux) -> None:
    """Every catalog metric is declared, and DESC_REQ answers the catalog's descriptor."""
    assert {m.name for m in Linux.metrics} == set(BY_NAME)
    for info in METRICS:
        assert pmid(agent, info.name) == info.pmid, info.name
        assert agent.handle(DescReqPDU(info.pmid)).desc == info.desc(), info.name


def test_indoms_are_the_catalog_ones() -> None:
    """The agent's instance domains are the catalog's, load average fixed at 1, 5, 15."""
    assert set(AGENT_INDOMS) == set(INDOMS)
    assert all(getattr(Linux, attr) in AGENT_INDOMS.values() for attr in ("cpus", "disks"))
    assert AGENT_INDOMS[2].instances == dict(LOAD_INSTANCES)
    assert all(AGENT_INDOMS[s].refresher for s in (0, 1, 3, 5))


def test_pmns_file_matches_catalog(agent: Linux) -> None:
    """pmns/linux is what make_pmns writes, and names every catalog metric with its PMID."""
    text = (ROOT / "pmns" / "linux").read_text()
    assert text == make_pmns.render(), (
        "pmns/linux is stale: run python -m purepcp.agents.linux.make_pmns"
    )
    assert dict(agent.pmns.items()) == {m.name: m.pmid for m in METRICS}  # name by name


def test_help_covers_every_metric_and_indom_in_our_own_words(agent: Linux) -> None:
    """help/linux has text for every metric and indom (that its one-liners are not PCP's is
    checked against pmdalinux itself by test_help_present_where_pmdalinux_has_it)."""
    assert agent.help is not None
    assert set(agent.help.pmids) == {m.pmid for m in METRICS}
    assert set(agent.help.indoms) == {agent.indom_id(indom) for indom in ALL_INDOMS.values()}
    for info in METRICS:
        oneline, text = agent.help.pmids[info.pmid]
        assert oneline and text, info.name


def test_help_lines_fit_pcp_qa_limit(agent: Linux) -> None:
    """No line of a long help text is over 84 characters, the limit PCP's QA test 469
    holds every agent's `pminfo -T` output to (pmcd's help shares the file format)."""
    assert agent.help is not None
    texts = [text for _, text in agent.help.pmids.values()]
    texts += [text for _, text in agent.help.indoms.values()]
    texts += (ROOT / "help" / "pmcd").read_text().splitlines()
    long = [line for text in texts for line in text.splitlines() if len(line) > 84]
    assert not long, long[:3]


# --- a fetch on this host ------------------------------------------------------------------


def refresh_outputs(agent: Linux) -> dict[str, Any]:
    """What every cluster refresh method returns when all metrics are asked for."""
    outputs: dict[str, Any] = {}
    for _, method in inspect.getmembers(Linux, lambda v: hasattr(v, "_pmda_refresh")):
        outputs.update(method(agent))
    return outputs


def _python_type(info: MetricInfo) -> type:
    """The Python type the framework expects for values of INFO's type."""
    if info.type in INTEGER_TYPES:
        return int
    if info.type in (PMType.PM_TYPE_FLOAT, PMType.PM_TYPE_DOUBLE):
        return float
    assert info.type == PMType.PM_TYPE_STRING
    return str


def test_refresh_values_have_the_python_type_of_their_metric(agent: Linux) -> None:
    """Refresh methods give int, float or str as each metric's type requires, in range."""
    outputs = refresh_outputs(agent)
    assert set(outputs) <= set(BY_NAME)
    for name, value in outputs.items():
        info = BY_NAME[name]
        if value is None or name in ANSWERED_WITH_ERRORS:
            continue
        values = value.values() if info.indom is not None else [value]
        if info.indom is not None:
            assert isinstance(value, dict), name
            assert all(type(inst) is int for inst in value), name
        for v in values:
            assert v is None or type(v) is _python_type(info), (name, v)
            if type(v) is int:
                bits = 32 if info.type in (PMType.PM_TYPE_U32, PMType.PM_TYPE_32) else 64
                assert 0 <= v < 1 << bits, (name, v)


def test_fetch_of_every_metric(agent: Linux) -> None:
    """A fetch of every metric has no errors, and the first families have values wherever
    this host has them.  (Whether the other families' metrics have values depends on the
    host's devices, NFS, SysV objects, ...: the interop tests compare their value counts
    with pmdalinux's on the same host, pmprobe -v.)"""
    values = fetch(agent, *BY_NAME)
    errors = {name: v for name, v in values.items() if isinstance(v, int)}
    assert errors == ANSWERED_WITH_ERRORS
    family_names = {m.name for family in catalog.FAMILIES for m in family.METRICS}
    empty = {name for name, v in values.items() if not v and name not in family_names}
    assert empty <= MAY_BE_EMPTY
    for name, got in values.items():
        info = BY_NAME[name]
        if name in ANSWERED_WITH_ERRORS:
            continue
        assert isinstance(got, dict)
        if info.indom is None:
            assert set(got) <= {PM_IN_NULL}, name
        else:
            assert set(got) <= set(instances(agent, info.indom)), name


def test_vmstat_values_exactly_where_the_kernel_has_the_field(agent: Linux) -> None:
    """mem.vmstat.X has a value iff /proc/vmstat has X (or it is computed), no error otherwise."""
    names = [vmstat.PREFIX + f for f, _, _ in vmstat.FIELDS]
    values = fetch(agent, *names)
    assert {name for name, v in values.items() if v} == _vmstat_valued(HOST_VMSTAT)
    assert {name for name, v in values.items() if v == {}} == set(names) - _vmstat_valued(
        HOST_VMSTAT
    )


def test_instances_named_as_pcp_names_them(agent: Linux) -> None:
    """Instances are named and numbered by pmdalinux's rules, checked against /proc."""
    stat = Path("/proc/stat").read_text()
    cpus = sorted(int(m) for m in re.findall(r"^cpu(\d+) ", stat, re.MULTILINE))
    if os.sysconf("SC_NPROCESSORS_CONF") == 1:
        cpus = [0]
    assert instances(agent, 0) == {n: f"cpu{n}" for n in cpus}
    assert instances(agent, 2) == {1: "1 minute", 5: "5 minute", 15: "15 minute"}
    disks = [name for name, _ in procfs.parse_diskstats(Path("/proc/diskstats").read_bytes())]
    assert instances(agent, 1) == dict(enumerate(disks))
    net = Path("/proc/net/dev").read_text().splitlines()
    names = [line.split(":")[0].strip() for line in net if ":" in line]
    assert instances(agent, 3) == dict(enumerate(names))
    mounts = procfs.filesys_mounts(procfs.parse_mounts(Path("/proc/self/mounts").read_bytes()))
    assert instances(agent, 5) == dict(enumerate(mounts))


def test_values_agree_with_proc_and_psutil(agent: Linux) -> None:
    """Units and values agree with /proc/meminfo, sysconf and psutil."""
    meminfo = procfs.parse_meminfo(Path("/proc/meminfo").read_bytes())
    names = ("hinv.ncpu", "mem.physmem", "hinv.physmem", "hinv.ninterface", "kernel.all.hz")
    before = psutil.cpu_times()
    values = fetch(agent, *names, "kernel.all.cpu.user", "hinv.pagesize", "swap.length")
    after = psutil.cpu_times()
    assert one(values, "hinv.ncpu") == len(instances(agent, 0))
    assert one(values, "mem.physmem") == meminfo[b"MemTotal"]
    assert one(values, "hinv.physmem") == meminfo[b"MemTotal"] >> 10
    assert one(values, "swap.length") == meminfo[b"SwapTotal"] * 1024
    assert one(values, "hinv.ninterface") == len(psutil.net_io_counters(pernic=True))
    assert one(values, "kernel.all.hz") == HZ
    assert one(values, "hinv.pagesize") == os.sysconf("SC_PAGE_SIZE")
    user = one(values, "kernel.all.cpu.user")
    assert round(before.user * 1000) <= user <= round(after.user * 1000)


def test_disk_counts_agree_with_psutil(agent: Linux) -> None:
    """Per-disk counts lie between two psutil readings taken around the fetch."""
    before = psutil.disk_io_counters(perdisk=True)
    values = fetch(agent, "disk.dev.read", "disk.dev.read_bytes", "disk.all.read")
    after = psutil.disk_io_counters(perdisk=True)
    disks = instances(agent, 1)
    for inst, count in values["disk.dev.read"].items():
        name = disks[inst]
        assert before[name].read_count <= count <= after[name].read_count
        kbytes = values["disk.dev.read_bytes"][inst]
        assert before[name].read_bytes // 1024 <= kbytes <= after[name].read_bytes // 1024
    assert one(values, "disk.all.read") >= sum(values["disk.dev.read"].values())


def test_each_source_is_read_once_per_fetch(agent: Linux, monkeypatch) -> None:
    """A fetch reads each /proc file once, and only those its metrics need."""
    reads: list[str] = []
    read = agent.proc.read
    monkeypatch.setattr(agent.proc, "read", lambda path: reads.append(path) or read(path))
    names = ("hinv.ncpu", "kernel.percpu.cpu.user", "disk.dev.read", "hinv.ndisk", "disk.all.read")
    fetch(agent, *names)
    assert sorted(reads) == ["/proc/diskstats", "/proc/stat"]
    reads.clear()
    fetch(agent, "mem.util.free")
    assert reads == ["/proc/meminfo"]
    reads.clear()
    fetch(agent, "swap.pagesin", "mem.vmstat.pgpgin", "mem.vmstat.pgsteal_total", "swap.pagesout")
    assert reads == ["/proc/vmstat"]  # clusters 0 and 28 share one read


def test_network_speed_in_pcp_float_arithmetic() -> None:
    """network.interface.speed converts Mbit/s as pmdalinux's float code does."""
    assert speed_mbyte(1000) == pytest.approx(119.20928955078125)
    assert speed_mbyte(0xFFFFFFFF) == 512000000.0  # an unknown speed, as pmdalinux shows it


# --- parsers and instance rules on fixed samples -------------------------------------------

DISKSTATS = b"""\
   7       0 loop0 1 0 2 0 0 0 0 0 0 0 0 0 0 0 0 0 0
   8       0 sda 100 5 2001 50 40 3 801 4294967300 2 60 4294967396 0 0 0 0 0 0
   8       1 sda1 90 4 1800 45 30 2 600 20 0 50 70
 253       0 dm-0 10 0 80 1 1 0 8 1 0 2 2
 259       0 nvme0n1 7 0 56 1 3 0 24 1 0 2 2 0 0 0 0
 259       1 nvme0n1p1 7 0 56 1 3 0 24 1 0 2 2
 179       0 mmcblk0 1 0 8 1 0 0 0 0 0 1 1
 179       1 mmcblk0p1 1 0 8 1 0 0 0 0 0 1 1
  11       0 sr0 1 0 8 1 0 0 0 0 0 1 1
 252       0 zram0 1 0 8 1 0 0 0 0 0 1 1
   9       0 md0 1 0 8 1 0 0 0 0 0 1 1
   1       0 ram0 1 0 8 1 0 0 0 0 0 1 1
   8      16 sdb 1 2 3 4
1000       0 notindented 1 0 8 1 0 0 0 0 0 1 1
"""


def test_parse_diskstats_keeps_whole_disks_only() -> None:
    """parse_diskstats keeps whole disks, and reads the old short line format."""
    rows = dict(procfs.parse_diskstats(DISKSTATS))
    assert list(rows) == ["sda", "nvme0n1", "mmcblk0", "sdb"]
    assert rows["sda"] == (100, 5, 2001, 50, 40, 3, 801, 4294967300, 2, 60, 4294967396)
    assert rows["sdb"] == (1, 0, 2, 0, 3, 0, 4, 0, 0, 0, 0)  # the old 4-count format
    every = [name for name, _ in procfs.parse_diskstats(DISKSTATS, keep=lambda _: True)]
    assert len(every) == 13  # every line starting with a blank


@pytest.mark.parametrize(
    ("name", "partition", "disk"),
    [
        ("sda", False, True),
        ("sda1", True, False),
        ("vda", False, True),
        ("xvda", False, True),
        ("xvda2", True, False),
        ("nvme0n1", False, True),
        ("nvme0n1p1", True, False),
        ("mmcblk0", False, True),
        ("mmcblk0p2", True, False),
        ("rbd0", False, True),
        ("rbd0p1", True, False),
        ("nbd3", False, True),
        ("nbd3p1", True, False),
        ("loop0", False, False),
        ("ram1", False, False),
        ("zram0", False, False),
        ("sr0", False, False),
        ("dm-0", False, False),
        ("md127", False, False),
        ("cciss/c0d0", False, True),
        ("cciss/c0d0p1", True, False),
        ("rd/c0d0", False, True),
        ("ida/disk", True, False),  # a name with '/' and no trailing digits
        ("xvm0", True, False),
        ("xvmvol", False, False),
        ("360000000000000000", True, False),  # a WWID: ends in a digit, so a "partition"
    ],
)
def test_partition_and_disk_rules(name: str, partition: bool, disk: bool) -> None:
    """is_partition and is_disk decide as pmdalinux's _pm_ispartition and _pm_isdisk."""
    assert procfs.is_partition(name) is partition
    assert procfs.is_disk(name) is disk


STAT = b"""\
cpu  1000 20 300 4000 500 60 70 8 9 1
cpu0 600 10 200 2000 300 30 40 4 5 1
cpu2 400 10 100 2000 200 30 30 4 4 0
intr 12345 1 2 3
ctxt 6789
btime 1700000000
processes 4242
procs_running 3
procs_blocked 1
softirq 1 2 3
"""


def test_parse_stat() -> None:
    """parse_stat reads the cpu lines by CPU number and the counter lines."""
    stat = procfs.parse_stat(STAT)
    assert stat.all == (1000, 20, 300, 4000, 500, 60, 70, 8, 9, 1)
    assert sorted(stat.cpus) == [0, 2]
    assert stat.cpus[2][4] == 200
    assert stat.counters == {
        b"intr": 12345,
        b"ctxt": 6789,
        b"btime": 1700000000,
        b"processes": 4242,
        b"procs_running": 3,
        b"procs_blocked": 1,
    }
    old = procfs.parse_stat(b"cpu  1 2 3 4\ncpu0 1 2 3 4\n")  # a 2.4 kernel: four fields
    assert old.all == (1, 2, 3, 4, 0, 0, 0, 0, 0, 0)


NET_DEV = b"""\
Inter-|   Receive                                                |  Transmit
 face |bytes packets errs drop fifo frame compressed multicast|bytes packets errs drop fifo ...
    lo: 100 2 0 0 0 0 0 0 100 2 0 0 0 0 0 0
  eth0: 5000 50 1 2 3 4 5 6 7000 70 7 8 9 10 11 12
veth1a2b:1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16
"""


def test_parse_net_dev() -> None:
    """parse_net_dev names interfaces by the text before ':' and reads 16 counters."""
    rows = procfs.parse_net_dev(NET_DEV)
    assert [name for name, _ in rows] == ["lo", "eth0", "veth1a2b"]
    assert rows[1][1] == (5000, 50, 1, 2, 3, 4, 5, 6, 7000, 70, 7, 8, 9, 10, 11, 12)
    assert rows[2][1] == tuple(range(1, 17))
    # a damaged line: the counters up to the first word that is not a number (sscanf's
    # reading), never an exception that fails the whole cluster (it did: ValueError)
    damaged = procfs.parse_net_dev(b"eth9: 10 20 x\xff 40\nlo: \xfe\n")
    assert damaged == [("eth9", (10, 20, *[0] * 14)), ("lo", (0,) * 16)]


MOUNTS = b"""\
proc /proc proc rw,nosuid 0 0
sysfs /sys sysfs rw 0 0
/dev/disk/by-uuid/1234 / ext4 rw,relatime 0 0
devtmpfs /dev devtmpfs rw 0 0
tmpfs /dev/shm tmpfs rw 0 0
cgroup /sys/fs/cgroup/cpu cgroup rw,cpu 0 0
cgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0
/dev/sda2 /home xfs rw 0 0
/dev/sda2 /srv/home xfs ro 0 0
/dev/mapper/vg-data /data ext4 ro,noatime 0 0
/dev/md0 /raid ext4 rw 0 0
systemd-1 /mnt/auto autofs rw 0 0
server:/export /mnt/nfs nfs4 rw 0 0
/dev/loop0 /snap/core squashfs ro 0 0
overlay /var/lib/docker/overlay2/x/merged overlay rw 0 0
"""


def test_filesys_rule() -> None:
    """filesys_mounts applies pmdalinux's filesystem rule to a mount table."""
    links = {"/dev/disk/by-uuid/1234": "/dev/sda1", "/dev/sda2": "/dev/sda2"}
    mounts = procfs.filesys_mounts(procfs.parse_mounts(MOUNTS), links.get)
    assert mounts == {
        "/dev/sda1": ("/", "rw,relatime"),
        "/dev/sda2": ("/home", "rw"),  # the first mount of a device wins
        "/dev/mapper/vg-data": ("/data", "ro,noatime"),
        "/dev/md0": ("/raid", "rw"),
    }
    overlay_root = b"overlay / overlay rw,lowerdir=/a 0 0\n/dev/vdb /x ext4 rw 0 0\n"
    found = procfs.filesys_mounts(procfs.parse_mounts(overlay_root), lambda path: None)
    assert list(found) == ["overlay", "/dev/vdb"]  # / is kept whatever its device
    assert procfs.is_readonly("ro,noatime") and not procfs.is_readonly("rw,errors=remount-ro")


VMSTAT_SAMPLE = b"""\
nr_free_pages 100
nr_slab_reclaimable 30
pgpgin 12345
pgscan_kswapd 7
pgscan_kswapd_normal 3
pgscan_direct 5
pgscan_direct_throttle 2
pgsteal_kswapd 4
pgsteal_direct 6
pgsteal_anon 1000
thp_split_page 8
thp_split_page_failed 1
pgfault x42y
pgmajfault none
unknown_field 9
"""


def test_vmstat_values_as_pmdalinux_reads_them() -> None:
    """Known fields only; digits from the first digit; totals over table fields by prefix."""
    got = vmstat.values(VMSTAT_SAMPLE)
    assert got == {
        "nr_free_pages": 100,
        "nr_slab_reclaimable": 30,
        "pgpgin": 12345,
        "pgscan_kswapd": 7,
        "pgscan_kswapd_normal": 3,
        "pgscan_direct": 5,
        "pgscan_direct_throttle": 2,
        "pgsteal_kswapd": 4,
        "pgsteal_direct": 6,
        "thp_split_page": 8,
        "thp_split_page_failed": 1,
        "pgfault": 42,  # sscanf from the first digit
        "pgscan_kswapd_total": 7 + 3,
        "pgscan_direct_total": 5 + 2,  # pmdalinux counts the throttle field in too
        "pgsteal_total": 4 + 6,  # pgsteal_anon is not one of pmdalinux's fields
        "thp_split": 8 + 1,
        # nr_slab: 30 + (missing unreclaimable, -1 as a uint64) = 29, as pmdalinux computes it
        "nr_slab": 29,
    }


def test_vmstat_balloon_counts_swapped_as_in_pmdalinux() -> None:
    """pmdalinux serves balloon_inflate's field as balloon_deflate (item 103) and back."""
    got = vmstat.values(b"balloon_inflate 11\nballoon_deflate 22\nballoon_migrate 33\n")
    assert (got["balloon_deflate"], got["balloon_inflate"], got["balloon_migrate"]) == (11, 22, 33)
    assert BY_NAME["mem.vmstat.balloon_deflate"].item == 103
    only_deflate = vmstat.values(b"balloon_deflate 22\n")
    assert only_deflate["balloon_inflate"] == 22 and "balloon_deflate" not in only_deflate


def test_vmstat_fallbacks_and_empty_file() -> None:
    """nr_slab as pmdalinux sums it: both parts missing give 2**64 - 2; -1 means no value."""
    assert vmstat.values(b"")["nr_slab"] == (1 << 64) - 2
    assert "nr_slab" not in vmstat.values(b"nr_slab_unreclaimable 0\n")
    assert vmstat.values(b"nr_slab 5\nnr_slab_reclaimable 30\n")["nr_slab"] == 5
    assert vmstat.values(b"") == {
        "pgscan_direct_total": 0,
        "pgscan_kswapd_total": 0,
        "pgsteal_total": 0,
        "nr_slab": (1 << 64) - 2,
        "thp_split": (1 << 64) - 2,
    }


def test_vmstat_table_is_pmdalinux_cluster_28() -> None:
    """Items 0..178 once each, every one a mem.vmstat catalog record of pmdalinux's shape."""
    assert sorted(item for _, item, _ in vmstat.FIELDS) == list(range(179))
    for field, item, (sem, units) in vmstat.FIELDS:
        info = BY_NAME[vmstat.PREFIX + field]
        assert (info.cluster, info.item, info.sem, info.units) == (28, item, sem, units)
        assert info.type == PMType.PM_TYPE_U64 and info.indom is None


def test_meminfo_table_values_as_pmdalinux_computes_them() -> None:
    """One field per metric, missing ones unvalued; hugepage bytes are count * size kB * 1024."""
    mem = procfs.parse_meminfo(
        b"HighTotal:  1000 kB\nLowFree: 20 kB\nDirectMap2M: 2068480 kB\n"
        b"HugePages_Total:       4\nHugePages_Free:  3\nHugePages_Rsvd: 0\n"
        b"Hugepagesize:    2048 kB\nHardwareCorrupted:     8 kB\n"
    )
    got = meminfo.values(mem)
    assert {k: v for k, v in got.items() if v is not None} == {
        "mem.util.highTotal": 1000,
        "mem.util.lowFree": 20,
        "mem.util.directMap2M": 2068480,
        "mem.util.corrupthardware": 8,
        "mem.util.hugepagesRsvd": 0,
        "mem.util.hugepagesTotalBytes": 4 * 2048 * 1024,
        "mem.util.hugepagesFreeBytes": 3 * 2048 * 1024,
        "mem.util.hugepagesRsvdBytes": 0,
    }
    # highFree, lowTotal, ...: no value; pmdalinux does not derive them on 64-bit kernels
    assert got["mem.util.highFree"] is None and got["mem.util.lowTotal"] is None
    assert got["mem.util.hugepagesSurpBytes"] is None  # HugePages_Surp missing
    # no Hugepagesize: pmdalinux multiplies by its -1 marker shifted, modulo 2**64
    assert meminfo.values({b"HugePages_Free": 2})["mem.util.hugepagesFreeBytes"] == (2 * -1024) % (
        1 << 64
    )


def test_meminfo_table_is_pmdalinux_cluster_1() -> None:
    """The table's items are free in cluster 1 and its records have pmdalinux's shape."""
    rows = (*meminfo.FIELDS, *meminfo.HUGEPAGE_BYTES)
    items = [item for _, item, _, _ in rows]
    assert len(set(items)) == len(items) == 23
    others = {m.item for m in METRICS if m.cluster == 1} - set(items)
    assert others.isdisjoint(items)
    for suffix, item, _, units in rows:
        info = BY_NAME[meminfo.PREFIX + suffix]
        assert (info.cluster, info.item, info.units) == (1, item, units)
        assert info.type == PMType.PM_TYPE_U64 and info.sem == PMSem.PM_SEM_INSTANT


INTERRUPTS = b"""\
           CPU0       CPU1       CPU2
  0:         10          1          2   IO-APIC   2-edge      timer
  8:          0        100          0   IO-APIC   8-edge      rtc0
NMI:          3          4          5   Non-maskable interrupts
LOC:       1000       2000       3000   Local timer interrupts
 ERR:          7
ERR:          9
MIS:          8
"""


def test_percpu_intr_sums_columns_as_pmdalinux() -> None:
    """Each CPU's column summed; ERR:/MIS: skipped, but ' ERR:' is an ordinary row."""
    assert system.percpu_intr(INTERRUPTS, 3) == {
        0: 10 + 0 + 3 + 1000 + 7,
        1: 1 + 100 + 4 + 2000,
        2: 2 + 0 + 5 + 3000,
    }
    assert system.percpu_intr(b"", 3) is None  # no header line: no values
    assert system.percpu_intr(b"           CPU0\n", 2) == {0: 0, 1: 0}


def test_percpu_intr_offline_cpu_mapping_kept() -> None:
    """With cpu1 offline, pmdalinux's column_to_cpuid() puts CPU2's column into cpu0's
    count and reads 0 for cpu2 (kept, so values agree with pmdalinux)."""
    data = b"     CPU0   CPU2\n  0:   10   20   IO-APIC\n  1:   1   2   x\n"
    assert system.percpu_intr(data, 4) == {0: 33, 1: 33, 2: 0, 3: 33}  # 1, 3: not instances


def test_distro_as_pmdalinux_finds_it(tmp_path: Path) -> None:
    """First release file that opens; Debian prefix; DISTRIB_ID= dropped; '?' otherwise."""
    etc = tmp_path / "etc"
    etc.mkdir()
    assert system.distro(str(tmp_path)) == "?"
    (etc / "lsb-release").write_bytes(b"DISTRIB_ID=Ubuntu\nDISTRIB_RELEASE=22.04\n")
    assert system.distro(str(tmp_path)) == "Ubuntu"
    (etc / "redhat-release").write_bytes(b"Red Hat Enterprise Linux release 9.2 (Plow)\n")
    assert system.distro(str(tmp_path)) == "Red Hat Enterprise Linux release 9.2 (Plow)"
    (etc / "debian_version").write_bytes(b"")
    assert system.distro(str(tmp_path)) == "?"  # the first file opens but is empty
    (etc / "debian_version").write_bytes(b"12.11\n")
    assert system.distro(str(tmp_path)) == "Debian 12.11"


def _utmp(kind: int, user: bytes) -> bytes:
    """One struct utmp record of type KIND for USER."""
    record = bytearray(system.UTMP_SIZE)
    record[0:2] = kind.to_bytes(2, sys.byteorder)
    record[44 : 44 + len(user)] = user
    return bytes(record)


def test_nusers_counts_named_user_processes() -> None:
    """USER_PROCESS records with a user name, root's too; others and partial records not."""
    data = (
        _utmp(2, b"reboot")  # BOOT_TIME
        + _utmp(7, b"root")
        + _utmp(7, b"alice")
        + _utmp(7, b"")  # no name: skipped, as login.c does
        + _utmp(8, b"bob")  # DEAD_PROCESS
    )
    assert system.nusers(data) == 2
    assert system.nusers(data + _utmp(7, b"carol")[:100]) == 2
    assert system.nusers(b"") == 0


def test_cpu_online_file_read_as_pmdalinux() -> None:
    """fscanf %u of the online file; 1 when it is missing or has no number."""
    assert [system.online(d) for d in (b"0\n", b"1\n", None, b"", b"x")] == [0, 1, 1, 1, 1]


def test_parse_meminfo_loadavg_uptime_vmstat() -> None:
    """The small parsers read their files' fields, and reject garbage."""
    meminfo = b"MemTotal:       2048000 kB\nMemFree:  512 kB\nHugePages_Total:      4\nBad line\n"
    assert procfs.parse_meminfo(meminfo) == {
        b"MemTotal": 2048000,
        b"MemFree": 512,
        b"HugePages_Total": 4,
    }
    load = procfs.parse_loadavg(b"1.50 0.75 0.25 3/456 7890\n")
    assert load == procfs.LoadAvg((1.5, 0.75, 0.25), 3, 456, 7890)
    assert procfs.parse_loadavg(b"garbage\n") is None
    assert procfs.parse_uptime(b"1234.56 2345.67\n") == (1234.56, 2345.67)
    vmstat = b"nr_free_pages 10\npswpin 5\npswpout 7\n"
    assert procfs.parse_vmstat(vmstat, [b"pswpin", b"pswpout", b"nr_free_pages", b"gone"]) == {
        b"pswpin": 5,
        b"pswpout": 7,
        b"nr_free_pages": 10,
    }


# --- the whole agent on a fake /proc ---------------------------------------------------------

MEMINFO = b"""\
MemTotal:       2048000 kB
MemFree:         512000 kB
MemShared:         1000 kB
Buffers:          10000 kB
Cached:          300000 kB
Dirty:              100 kB
Writeback:            0 kB
SwapTotal:       100000 kB
SwapFree:         40000 kB
HugePages_Total:      4
Active(file):      5000 kB
Inactive(file):    6000 kB
SReclaimable:      7000 kB
"""


class FakeProc:
    """A /proc tree under a temporary directory, for an agent started with $LINUX_STATSPATH."""

    def __init__(self, root: Path) -> None:
        """Create the tree, with the samples above as its files."""
        self.root = root
        (root / "proc" / "self").mkdir(parents=True)
        (root / "proc" / "net").mkdir()
        self.write(
            stat=STAT,
            diskstats=DISKSTATS,
            meminfo=MEMINFO,
            loadavg=b"1.50 0.75 0.25 3/456 7890\n",
            uptime=b"1234.56 2345.67\n",
            vmstat=b"pswpin 5\npswpout 4294967297\n",
            zoneinfo=b"Node 0, zone DMA\n        low      10\nNode 0, zone Normal\n  low 20\n",
            **{"net/dev": NET_DEV},
            **{
                "self/mounts": b"/dev/fake1 / ext4 rw 0 0\ntmpfs /run tmpfs rw 0 0\n"
                b"/dev/fake1 /bind ext4 rw 0 0\n/dev/mapper/vg-x /nowhere/at/all xfs ro 0 0\n"
            },
        )

    def write(self, **files: bytes) -> None:
        """Write each of FILES (a name under proc/) with its contents."""
        for name, data in files.items():
            (self.root / "proc" / name).write_bytes(data)


@pytest.fixture
def fake(tmp_path: Path, monkeypatch) -> Iterator[tuple[Linux, FakeProc]]:
    """A linux agent reading the fake /proc tree under a temporary directory."""
    monkeypatch.setenv("LINUX_STATSPATH", str(tmp_path))
    monkeypatch.delenv("PCP_VAR_DIR", raising=False)
    monkeypatch.setenv("LINUX_NCPUS", "4")
    monkeypatch.setenv("LINUX_HERTZ", str(FAKE_HZ))
    proc = FakeProc(tmp_path)
    linux = Linux()
    yield linux, proc
    linux.stop()


#: The fake tree's clock rate ($LINUX_HERTZ): not 100, so that msec conversion truncates.
FAKE_HZ = 300


def msec(ticks: int) -> int:
    """TICKS of the fake tree in milliseconds, as pmdalinux converts them."""
    return ticks * 1000 // FAKE_HZ


def test_fake_proc_cpu_and_counters(fake) -> None:
    """CPU times, /proc/stat counters, load, uptime and swap paging from a fake /proc."""
    agent, proc = fake
    names = [m.name for m in METRICS if m.cluster in (0, 2, 26) and not m.name.startswith("disk")]
    values = fetch(agent, *names)
    assert instances(agent, 0) == {0: "cpu0", 2: "cpu2"}  # CPU 1 is offline
    assert one(values, "hinv.ncpu") == 2
    assert one(values, "kernel.all.hz") == FAKE_HZ
    assert one(values, "kernel.all.cpu.user") == msec(1000) == 3333
    assert one(values, "kernel.all.cpu.intr") == msec(60 + 70)
    assert one(values, "kernel.all.cpu.vuser") == msec(1000 - 9)
    assert one(values, "kernel.all.cpu.vnice") == msec(20 - 1)
    assert values["kernel.percpu.cpu.user"] == {0: msec(600), 2: msec(400)}
    assert values["kernel.percpu.cpu.wait.total"] == {0: msec(300), 2: msec(200)}
    assert one(values, "kernel.all.intr") == 12345
    assert one(values, "kernel.all.pswitch") == 6789
    assert one(values, "kernel.all.sysfork") == 4242
    assert one(values, "kernel.all.running") == 3
    assert one(values, "kernel.all.blocked") == 1
    assert one(values, "kernel.all.boottime") == 1700000000
    assert one(values, "swap.pagesin") == 5
    assert one(values, "swap.pagesout") == 1  # a 32-bit counter
    assert values["kernel.all.load"] == pytest.approx({1: 1.5, 5: 0.75, 15: 0.25})
    assert one(values, "kernel.all.runnable") == 3
    assert one(values, "kernel.all.nprocs") == 456
    assert one(values, "kernel.all.lastpid") == 7890
    assert one(values, "kernel.all.uptime") == 1234.56
    assert one(values, "kernel.all.idletime") == 2345.67

    # iowait falling by less than 100 ticks keeps its old value; a larger fall is taken
    proc.write(stat=STAT.replace(b"500 60", b"480 60").replace(b"2000 300", b"2000 250"))
    values = fetch(agent, "kernel.all.cpu.wait.total", "kernel.percpu.cpu.wait.total")
    assert one(values, "kernel.all.cpu.wait.total") == msec(500)
    assert values["kernel.percpu.cpu.wait.total"] == {0: msec(300), 2: msec(200)}
    proc.write(stat=STAT.replace(b"2000 300", b"2000 150"))
    values = fetch(agent, "kernel.percpu.cpu.wait.total")
    assert values["kernel.percpu.cpu.wait.total"] == {0: msec(150), 2: msec(200)}

    agent.ncpus_configured = 1  # a uniprocessor kernel: cpu0 is the all-CPU line
    values = fetch(agent, "kernel.percpu.cpu.user", "hinv.ncpu")
    assert values["kernel.percpu.cpu.user"] == {0: msec(1000)}


def test_fake_proc_disks_keep_their_ids(fake) -> None:
    """Disks keep their ids when they go and come back; 32-bit counters wrap."""
    agent, proc = fake
    dev = [m.name for m in METRICS if m.name.startswith("disk.dev.")]
    values = fetch(agent, "hinv.ndisk", *dev, "disk.all.total_rawactive", "disk.all.aveq")
    assert instances(agent, 1) == {0: "sda", 1: "nvme0n1", 2: "mmcblk0", 3: "sdb"}
    assert one(values, "hinv.ndisk") == 4
    assert values["disk.dev.blkread"][0] == 2001
    assert values["disk.dev.read_bytes"][0] == 1000  # sectors // 2
    assert values["disk.dev.total_bytes"][0] == (2001 + 801) // 2
    assert values["disk.dev.write_rawactive"][0] == 4  # 32 bits, wrapped
    assert values["disk.dev.total_rawactive"][0] == 54
    assert values["disk.dev.aveq"][0] == 100
    assert values["disk.dev.write"][3] == 3 and values["disk.dev.blkwrite"][3] == 4
    assert one(values, "disk.all.total_rawactive") == 54 + 2 + 1 + 0
    assert one(values, "disk.all.aveq") == 100 + 2 + 1 + 0

    lines = DISKSTATS.splitlines(keepends=True)
    without_sda = b"".join(line for line in lines if b" sda " not in line)
    proc.write(diskstats=without_sda + b"   8      32 sdc 1 0 2 0 0 0 0 0 0 0 0\n")
    assert instances(agent, 1) == {1: "nvme0n1", 2: "mmcblk0", 3: "sdb", 4: "sdc"}
    proc.write(diskstats=DISKSTATS)
    values = fetch(agent, "disk.dev.read", "hinv.ndisk")
    assert instances(agent, 1) == {0: "sda", 1: "nvme0n1", 2: "mmcblk0", 3: "sdb"}
    assert values["disk.dev.read"][0] == 100


def test_disk_and_interface_ids_saved_as_pmdacache_saves_them(tmp_path, monkeypatch) -> None:
    """With $PCP_VAR_DIR, disk and interface ids are loaded from and saved to pmdaCache files."""
    monkeypatch.setenv("LINUX_STATSPATH", str(tmp_path))
    monkeypatch.setenv("PCP_VAR_DIR", str(tmp_path / "var"))
    FakeProc(tmp_path)
    saved = tmp_path / "var" / "config" / "pmda"
    saved.mkdir(parents=True)
    # as PCP's pmdalinux left it (a key in brackets is allowed, and skipped)
    (saved / "60.1").write_text("2 0 2147483647\n0 1795240148 sdb\n5 1795240148 [00ff] gone\n")
    first = Linux()
    try:
        assert instances(first, 1) == {0: "sdb", 6: "sda", 7: "nvme0n1", 8: "mmcblk0"}
        assert instances(first, 3) == {0: "lo", 1: "eth0", 2: "veth1a2b"}
    finally:
        first.stop()
    lines = (saved / "60.1").read_text().splitlines()
    assert lines[0] == "2 0 2147483647"
    entries = [line.split(" ", 2) for line in lines[1:]]
    assert [(int(i), name) for i, _, name in entries] == [
        (0, "sdb"),
        (5, "gone"),
        (6, "sda"),
        (7, "nvme0n1"),
        (8, "mmcblk0"),
    ]
    assert all(stamp.isdigit() for _, stamp, _ in entries)
    interfaces = (saved / "60.3").read_text().splitlines()[1:]
    assert [re.sub(r" \d+ ", " STAMP ", line) for line in interfaces] == [
        "0 STAMP lo",
        "1 STAMP eth0",
        "2 STAMP veth1a2b",
    ]
    (tmp_path / "proc" / "diskstats").write_bytes(DISKSTATS.replace(b" sda ", b" sdc "))
    again = Linux()
    try:
        assert instances(again, 1) == {0: "sdb", 7: "nvme0n1", 8: "mmcblk0", 9: "sdc"}
    finally:
        again.stop()
    assert not (saved / "60.5").exists()  # filesystem ids are not saved, as in PCP


def test_fake_proc_memory(fake) -> None:
    """mem.*, swap.* and hinv.physmem from a fake /proc/meminfo, missing fields unvalued."""
    agent, _ = fake
    names = [m.name for m in METRICS if m.cluster == 1]
    values = fetch(agent, *names)
    got = {name: v.get(PM_IN_NULL) for name, v in values.items()}
    assert got["mem.physmem"] == 2048000
    assert got["hinv.physmem"] == 2048000 >> 10
    assert got["mem.util.used"] == 2048000 - 512000
    assert got["mem.util.shared"] == 1000
    assert got["mem.util.other"] == 2048000 - 512000 - 300000 - 10000
    assert got["mem.util.cache_clean"] == 300000 - 100 - 0
    assert got["swap.length"] == 100000 * 1024
    assert got["swap.used"] == 60000 * 1024
    assert got["swap.free"] == 40000 * 1024
    assert got["mem.util.hugepagesTotal"] == 4
    low = 30 * os.sysconf("SC_PAGE_SIZE")  # bytes taken from kB, as pmdalinux does
    cache = 11000 - min(5500, low)
    assert got["mem.util.available"] == max(512000 - low + cache + 7000 - min(3500, low), 0)
    for missing in ("mem.util.mapped", "mem.util.slab", "mem.util.shmem", "mem.util.mlocked"):
        assert got[missing] is None, missing  # no such line: no value
    assert got["mem.util.hugepagesTotalBytes"] == (4 * -1024) % (1 << 64)  # no Hugepagesize
    for missing in ("mem.util.highFree", "mem.util.lowTotal", "mem.util.directMap4k"):
        assert got[missing] is None, missing


def test_fake_proc_uptime_and_mpstat_metrics(fake, monkeypatch) -> None:
    """uname, distro, nusers, cpu_num, cpu.online and percpu.intr from a fake tree."""
    agent, proc = fake
    root = proc.root
    (root / "etc").mkdir()
    (root / "etc" / "debian_version").write_bytes(b"11.9\n")
    cpu2 = root / "sys" / "devices" / "system" / "cpu" / "cpu2"
    cpu2.mkdir(parents=True)
    (cpu2 / "online").write_bytes(b"0\n")  # cpu0 has no file: 1, as in pmdalinux
    proc.write(interrupts=b"  CPU0  CPU1  CPU2\n 1:  5  6  7  x\nLOC:  50  60  70  y\n")
    utmp = root / "utmp"
    utmp.write_bytes(_utmp(7, b"alice") + _utmp(7, b"root") + _utmp(6, b"LOGIN"))
    agent.utmp_path = str(utmp)
    names = [
        *(name for name, _ in system.UNAME),
        "kernel.uname.distro",
        "kernel.all.nusers",
        "hinv.map.cpu_num",
        "hinv.cpu.online",
        "kernel.percpu.intr",
    ]
    got = fetch(agent, *names)
    assert got["kernel.uname.release"] == {PM_IN_NULL: os.uname().release}
    assert got["kernel.uname.nodename"] == {PM_IN_NULL: os.uname().nodename}
    assert got["kernel.uname.distro"] == {PM_IN_NULL: "Debian 11.9"}
    assert got["kernel.all.nusers"] == {PM_IN_NULL: 2}
    assert got["hinv.map.cpu_num"] == {0: 0, 2: 2}  # the fake /proc/stat has cpu0 and cpu2
    assert got["hinv.cpu.online"] == {0: 1, 2: 0}
    assert got["kernel.percpu.intr"] == {0: 55, 2: 77}
    agent.utmp_path = str(root / "no-utmp")
    assert fetch(agent, "kernel.all.nusers")["kernel.all.nusers"] == {PM_IN_NULL: 0}


def test_vmstat_plain_and_odd_text_read_alike() -> None:
    """The kernel's plain text (read by place, the layout worked out once per order of
    fields) gives what the line-by-line reading gives; a field twice keeps its last."""
    plain = b"pgpgin 5\nnr_free_pages 7\npgsteal_kswapd 2\npgsteal_direct 3\n"
    odd = plain + b"nr_slab_reclaimable\tx\n"  # a line without a space: ignored
    assert vmstat.values(plain) == vmstat.values(odd)
    assert vmstat.values(plain)["pgsteal_total"] == 5 and vmstat.values(plain)["pgpgin"] == 5
    swapped = b"nr_free_pages 8\npgpgin 6\n"  # another order: the layout is found again
    assert vmstat.values(swapped)["pgpgin"] == 6 and vmstat.values(swapped)["nr_free_pages"] == 8
    twice = b"pgpgin 1\npgpgin 2\n"
    assert vmstat.values(twice)["pgpgin"] == vmstat.values(twice + b"z")["pgpgin"] == 2
    assert vmstat.values(b"pgpgin 1\npgpgin x\n")["pgpgin"] == 1  # no digits: not a value
    assert vmstat.metric_values(plain) == {
        vmstat.PREFIX + name: v for name, v in vmstat.values(plain).items()
    }


def test_fake_proc_vmstat(fake) -> None:
    """mem.vmstat.* from a fake /proc/vmstat: fields it lacks have no value, and no error."""
    agent, proc = fake
    proc.write(vmstat=VMSTAT_SAMPLE)
    names = [m.name for m in METRICS if m.cluster == vmstat.CLUSTER]
    values = fetch(agent, *names)
    got = {name.removeprefix(vmstat.PREFIX): v[PM_IN_NULL] for name, v in values.items() if v}
    assert got == vmstat.values(VMSTAT_SAMPLE)
    assert values["mem.vmstat.pgmajfault"] == {} and values["mem.vmstat.pswpin"] == {}


def test_fake_proc_network_and_filesys(fake) -> None:
    """Interface counters, and filesystems chosen by the rule, from a fake /proc."""
    agent, _ = fake
    values = fetch(agent, "hinv.ninterface", *NET_COUNTERS)
    assert instances(agent, 3) == {0: "lo", 1: "eth0", 2: "veth1a2b"}
    assert one(values, "hinv.ninterface") == 3
    assert values["network.interface.out.carrier"][1] == 11
    assert values["network.interface.collisions"][1] == 10
    assert values["network.interface.total.bytes"][1] == 12000
    assert values["network.interface.total.mcasts"][1] == 6

    values = fetch(agent, "hinv.nfilesys", *(m.name for m in METRICS if m.cluster == 5))
    assert instances(agent, 5) == {0: "/dev/fake1", 1: "/dev/mapper/vg-x"}
    assert one(values, "hinv.nfilesys") == 2
    assert values["filesys.mountdir"] == {0: "/"}  # statfs of /nowhere/at/all fails: no values
    st = os.statvfs("/")
    assert values["filesys.capacity"][0] == st.f_blocks * st.f_bsize // 1024
    assert values["filesys.readonly"] == {0: 0}
    assert 0 <= values["filesys.full"][0] <= 100 or math.isnan(values["filesys.full"][0])


# --- against PCP's own pmdalinux, under PCP's own pmcd ----------------------------------------


@pytest.fixture(scope="module")
def pmcds(tmp_path_factory) -> Iterator[tuple[RunningPMCD, RunningPMCD]]:
    """(our agent, PCP's pmdalinux), each as domain 60 of a private reference pmcd."""
    require_reference("pminfo", "pmprobe")
    if not os.path.exists(PMDALINUX):
        pytest.skip(f"reference PCP 6 is not installed: no {PMDALINUX}")
    tmp = tmp_path_factory.mktemp("linux")
    tops = dict.fromkeys(name.split(".")[0] for name in BY_NAME)
    root = tmp / "root"
    root.write_text(
        "#define LINUX 60\nroot {\n"
        + "".join(f"    {top}\n" for top in tops)
        + "}\n"
        + (ROOT / "pmns" / "linux").read_text()
    )
    ours = [f"linux\t60\tpipe\tbinary\t{sys.executable} -m purepcp.agents.linux -d 60"]
    theirs = [f"linux\t60\tpipe\tbinary\t{PMDALINUX} -d 60"]
    with ExitStack() as stack:
        mine = stack.enter_context(
            reference_pmcd(ours, str(root), extra_env={"PYTHONPATH": str(ROOT)})
        )
        real = stack.enter_context(reference_pmcd(theirs))
        yield mine, real


def ok(result) -> str:
    """The output of a PCP tool that must have succeeded."""
    assert result.returncode == 0, result.stderr + result.stdout
    return result.stdout


LISTS = pytest.mark.parametrize("names", [list(REQUIRED), list(BY_NAME)], ids=["issue", "catalog"])


@pytest.mark.interop
@LISTS
def test_pminfo_descriptors_identical(pmcds, names: list[str]) -> None:
    """pminfo -m -d prints the same PMIDs and descriptors for both agents."""
    mine, real = pmcds
    assert ok(mine.run("pminfo", "-m", "-d", *names)) == ok(real.run("pminfo", "-m", "-d", *names))


@pytest.mark.interop
@LISTS
def test_pminfo_labels_identical(pmcds, names: list[str]) -> None:
    """pminfo -l prints the same merged labels, metric's and each instance's, for both agents."""
    mine, real = pmcds
    ours = ok(mine.run("pminfo", "-l", *names)).split("\n\n")
    theirs = ok(real.run("pminfo", "-l", *names)).split("\n\n")
    assert [b for b in ours if b not in theirs] == [] and len(ours) == len(theirs)


@pytest.mark.interop
@LISTS
def test_help_present_where_pmdalinux_has_it(pmcds, names: list[str]) -> None:
    """Every metric has one-line and long help if pmdalinux's has, in our own words."""
    mine, real = pmcds

    def helps(pmcd: RunningPMCD) -> dict[str, tuple[str, str]]:
        blocks = ok(pmcd.run("pminfo", "-tT", *names)).strip().split("\n\n")
        found = {}
        for block in blocks:
            head, _, rest = block.partition("\n")
            name, _, oneline = head.partition(" ")
            found[name] = (oneline, rest)
        return found

    ours, theirs = helps(mine), helps(real)
    missing = [n for n in names if ("<none>" in ours[n][0]) != ("<none>" in theirs[n][0])]
    copied = [n for n in names if ours[n][0] == theirs[n][0] and "<none>" not in ours[n][0]]
    assert (missing, copied) == ([], [])


def probe(pmcd: RunningPMCD, flag: str, names: list[str]) -> dict[str, list[str]]:
    """pmprobe FLAG's answer: {name: [count, ...what follows]}."""
    out = ok(pmcd.run("pmprobe", flag, *names))
    return {
        line.split(" ", 1)[0]: re.findall(r'"[^"]*"|\S+', line.split(" ", 1)[1])
        for line in out.splitlines()
    }


@pytest.mark.interop
@LISTS
def test_pmprobe_instances_identical(pmcds, names: list[str]) -> None:
    """pmprobe -I lists the same instance names for both agents."""
    mine, real = pmcds
    assert probe(mine, "-I", names) == probe(real, "-I", names)


@pytest.mark.interop
@LISTS
def test_pmprobe_value_counts_identical(pmcds, names: list[str]) -> None:
    """pmprobe -v gives both agents' metrics the same number of values."""
    mine, real = pmcds
    counts = {name: answer[0] for name, answer in probe(mine, "-v", names).items()}
    assert counts == {name: answer[0] for name, answer in probe(real, "-v", names).items()}


_VALUE = re.compile(r'    (?:inst \[(\d+) or "[^"]*"\] )?value (.*)')


def values_of(pmcd: RunningPMCD, names: list[str]) -> dict[str, dict[int, str]]:
    """pminfo -f's values: {name: {inst (PM_IN_NULL if singular): value as printed}}."""
    found: dict[str, dict[int, str]] = {}
    current: dict[int, str] = {}
    wanted = set(names)
    for line in ok(pmcd.run("pminfo", "-f", *names)).splitlines():
        if line in wanted:
            current = found[line] = {}
        elif m := _VALUE.fullmatch(line):
            current[PM_IN_NULL if m[1] is None else int(m[1])] = m[2]
    return found


#: Metrics PCP calls counters that are levels, and so may fall between two fetches.
LEVELS_CALLED_COUNTERS = {"mem.vmstat.nr_free_cma", "mem.vmstat.workingset_nodes"}

#: Instant metrics that cannot change between two fetches a moment apart.
STEADY = {
    "network.interface.mtu",
    "network.interface.up",
    "network.interface.running",
    "filesys.readonly",
    "filesys.blocksize",
    "mem.util.hugepagesTotal",
    "mem.util.hugepagesTotalBytes",
    "mem.util.vmallocTotal",
    "hinv.cpu.online",
    "kernel.all.nusers",
    "swap.length",
}


@pytest.mark.interop
@LISTS
def test_values_agree(pmcds, names: list[str]) -> None:
    """Discrete and steady values are equal; counters lie between two readings of pmdalinux."""
    mine, real = pmcds
    before, ours, after = values_of(real, names), values_of(mine, names), values_of(real, names)
    for name in ("hinv.ncpu", "hinv.physmem", "mem.physmem", "hinv.ninterface"):
        if name in names:
            assert ours[name] == before[name], name
    for name in names:
        info = BY_NAME[name]
        if info.sem == PMSem.PM_SEM_DISCRETE or name in STEADY:
            assert ours[name] == before[name] == after[name], name
        elif info.sem == PMSem.PM_SEM_COUNTER and name not in LEVELS_CALLED_COUNTERS:
            assert set(ours[name]) == set(before[name]), name
            # iowait may step back a little; each agent holds its own last value then
            slop = 100 * 1000 // HZ if name.endswith("wait.total") else 0
            for inst, value in ours[name].items():
                low, high = float(before[name][inst]), float(after[name][inst])
                assert low - slop <= float(value) <= high + slop, (name, inst, low, value, high)


#: A few /proc/vmstat counters that grow on any running system.
VMSTAT_COUNTERS = [
    f"mem.vmstat.{f}" for f in ("pgpgin", "pgpgout", "pgfault", "pgfree", "pgalloc_normal")
] + ["mem.vmstat.pgsteal_total", "mem.vmstat.pgscan_kswapd_total"]


@pytest.mark.interop
def test_vmstat_counters_between_two_pmdalinux_fetches(pmcds) -> None:
    """Our mem.vmstat counters lie between pmdalinux's, read just before and just after."""
    mine, real = pmcds
    before = values_of(real, VMSTAT_COUNTERS)
    ours = values_of(mine, VMSTAT_COUNTERS)
    after = values_of(real, VMSTAT_COUNTERS)
    for name in VMSTAT_COUNTERS:
        assert set(before[name]) == set(ours[name]) == set(after[name]) == {PM_IN_NULL}, name
        low, value, high = (int(v[name][PM_IN_NULL]) for v in (before, ours, after))
        assert low <= value <= high, (name, low, value, high)
