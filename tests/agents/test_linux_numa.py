"""The linux agent's NUMA family: hinv.nnode, hinv.node.online, kernel.pernode.cpu.*, mem.numa.*.

Parsers on fixed samples (pmdalinux's substring table scan, bandwidth.conf rules), and
the whole agent on a fake tree with two NUMA nodes numbered 0 and 2 (so node2 gets id 1,
as pmdalinux numbers them), CPUs 0-1 on node0 and 2-3 on node2.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from purepcp.agents.linux import Linux, numa
from purepcp.pmapi.ids import PM_IN_NULL
from tests.support.linux_fetch import fetch, instances

HZ = 300

#: user nice sys idle iowait irq softirq steal guest guest_nice, per CPU.
STAT = b"""\
cpu  1000 40 400 4000 900 100 50 8 30 4
cpu0 100 10 100 1000 300 10 5 1 10 1
cpu1 200 10 100 1000 200 20 10 2 0 1
cpu2 300 10 100 1000 250 30 15 2 20 1
cpu3 400 10 100 1000 150 40 20 3 0 1
intr 1
"""

NODE0_MEMINFO = b"""\
Node 0 MemTotal:       1000 kB
Node 0 MemFree:         600 kB
Node 0 MemUsed:         400 kB
Node 0 Active:          100 kB
Node 0 Inactive:         90 kB
Node 0 Active(anon):     10 kB
Node 0 Inactive(anon):   20 kB
Node 0 Mapped:           77 kB
Node 0 PageTables:       33 kB
Node 0 SecPageTables:     0 kB
Node 0 ShmemPmdMapped:    5 kB
Node 0 FilePmdMapped:     6 kB
Node 0 HugePages_Total:     4
Node 0 HugePages_Free:      3
"""

NODE0_NUMASTAT = b"numa_hit 500\nnuma_miss 7\nlocal_node 450\nother_node 50\n"


def msec(ticks: int) -> int:
    """TICKS in milliseconds at the fake clock rate."""
    return ticks * 1000 // HZ


def write(root: Path, path: str, data: bytes) -> None:
    """Write DATA at PATH under ROOT, creating directories."""
    target = root / path.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)


@pytest.fixture
def tree(tmp_path: Path, monkeypatch) -> Path:
    """A fake root: /proc/stat, /proc/meminfo and two NUMA nodes, 0 and 2."""
    for name in ("PCP_VAR_DIR", "LINUX_NNODES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LINUX_STATSPATH", str(tmp_path))
    monkeypatch.setenv("LINUX_NCPUS", "4")
    monkeypatch.setenv("LINUX_HERTZ", str(HZ))
    monkeypatch.setenv("PCP_PMDAS_DIR", str(tmp_path / "pmdas"))
    write(tmp_path, "/proc/stat", STAT)
    write(tmp_path, "/proc/meminfo", b"MemTotal: 2000 kB\nHugepagesize:    2048 kB\n")
    node = "/sys/devices/system/node"
    for name in ("online", "possible", "has_cpu"):
        write(tmp_path, f"{node}/{name}", b"0,2\n")
    write(tmp_path, f"{node}/node0/meminfo", NODE0_MEMINFO)
    write(tmp_path, f"{node}/node0/numastat", NODE0_NUMASTAT)
    write(tmp_path, f"{node}/node2/meminfo", b"Node 2 MemTotal:  3000 kB\n")
    write(tmp_path, f"{node}/node2/online", b"0\n")
    for n, cpus in ((0, (0, 1)), (2, (2, 3))):
        for cpu in cpus:
            (tmp_path / node.lstrip("/") / f"node{n}" / f"cpu{cpu}").mkdir()
        write(tmp_path, f"{node}/node{n}/cpulist", b"x\n")  # not a cpuN entry
    return tmp_path


@pytest.fixture
def agent(tree: Path) -> Iterator[Linux]:
    """A linux agent on the fake tree."""
    linux = Linux()
    yield linux
    linux.stop()


def test_table_scan_matches_substrings_like_pmdalinux() -> None:
    """A line sets the first table field found anywhere in it: later *PmdMapped lines win."""
    found = numa.table_scan(NODE0_MEMINFO, numa._MEMINFO_FIELDS)
    assert found[b"MemTotal:"] == 1000
    assert found[b"Active:"] == 100  # "Active(anon):" does not contain "Active:"
    assert found[b"Inactive(anon):"] == 20
    assert found[b"Mapped:"] == 6  # FilePmdMapped, the last line containing "Mapped:"
    assert found[b"PageTables:"] == 0  # SecPageTables
    assert found[b"HugePages_Total:"] == 4
    assert b"Dirty:" not in found
    assert numa.table_scan(b"numa_hit x\nnuma_hit 12\n", (b"numa_hit",)) == {b"numa_hit": 12}


def test_bandwidth_conf_rules() -> None:
    """Version first and exact; unknown nodes and blank lines stop reading; atof values."""
    nodes = {"node0": 0, "node2": 1}
    text = "# comment\nVersion:1.0\nnode0:1024.5\nnode2: 2e3junk\n"
    assert numa.parse_bandwidth(text, nodes) == {0: 1024.5, 1: 2000.0}
    assert numa.parse_bandwidth("node0:5\n", nodes) == {}  # no version line first
    assert numa.parse_bandwidth("Version: 1.0\nnode0:5\n", nodes) == {}  # no space allowed
    assert numa.parse_bandwidth("Version:1.0\nnode0:5\nnode9:1\nnode2:6\n", nodes) == {0: 5.0}
    assert numa.parse_bandwidth("Version:1.0\n\nnode0:5\n", nodes) == {}
    assert numa.parse_bandwidth(" Version:1.0\nnode0:5\n", nodes) == {}


def test_nodes_instances_and_labels(agent: Linux) -> None:
    """Nodes in version order get ids 0, 1, ...; numa_node is the id; online defaults to 1."""
    values = fetch(agent, "hinv.nnode", "hinv.node.online")
    assert values["hinv.nnode"] == {PM_IN_NULL: 2}
    assert values["hinv.node.online"] == {0: 1, 1: 0}  # node0 has no 'online' file
    assert instances(agent, numa.NODE_INDOM) == {0: "node0", 1: "node2"}
    assert agent.instance_labels(agent.numa_nodes, 1, "node2") == {"numa_node": 1}
    assert agent.numa_nodes.labels == {"device_type": "numa_node", "indom_name": "per numa_node"}


def test_pernode_cpu_time_sums_the_node_cpus(agent: Linux, tree: Path) -> None:
    """Each node adds up its CPUs' ticks, iowait held per CPU as pmdalinux holds it."""
    names = [f"kernel.pernode.cpu.{suffix}" for suffix, _ in numa.PERNODE]
    values = fetch(agent, *names)
    assert values["kernel.pernode.cpu.user"] == {0: msec(300), 1: msec(700)}
    assert values["kernel.pernode.cpu.intr"] == {0: msec(30 + 15), 1: msec(70 + 35)}
    assert values["kernel.pernode.cpu.vuser"] == {0: msec(300 - 10), 1: msec(700 - 20)}
    assert values["kernel.pernode.cpu.vnice"] == {0: msec(20 - 2), 1: msec(20 - 2)}
    assert values["kernel.pernode.cpu.wait.total"] == {0: msec(500), 1: msec(400)}
    assert values["kernel.pernode.cpu.guest_nice"] == {0: msec(2), 1: msec(2)}
    # cpu0's iowait falls by 20 ticks (held), cpu3's by 150 (taken)
    stat = STAT.replace(b"1000 300 10", b"1000 280 10").replace(b"1000 150 40", b"1000 0 40")
    write(tree, "/proc/stat", stat)
    values = fetch(agent, "kernel.pernode.cpu.wait.total")
    assert values["kernel.pernode.cpu.wait.total"] == {0: msec(500), 1: msec(250)}


def test_cpus_without_a_node_count_nowhere(tree: Path) -> None:
    """A CPU missing from every node directory adds to no node."""
    os.rmdir(tree / "sys/devices/system/node/node2/cpu3")
    linux = Linux()
    try:
        values = fetch(linux, "kernel.pernode.cpu.user")
    finally:
        linux.stop()
    assert values["kernel.pernode.cpu.user"] == {0: msec(300), 1: msec(300)}


def test_no_node_directory_is_one_node(tree: Path, monkeypatch) -> None:
    """Without /sys/devices/system/node (or with $LINUX_NNODES) every CPU is in node0."""
    monkeypatch.setenv("LINUX_NNODES", "1")
    linux = Linux()
    try:
        values = fetch(linux, "hinv.nnode", "kernel.pernode.cpu.user", "mem.numa.util.total")
    finally:
        linux.stop()
    assert values["hinv.nnode"] == {PM_IN_NULL: 1}
    assert values["kernel.pernode.cpu.user"] == {0: msec(1000)}
    assert values["mem.numa.util.total"] == {0: 1000}


def test_one_cpu_system_takes_the_cpu_line(tree: Path, monkeypatch) -> None:
    """On a one-CPU kernel node id 0 gets the all-CPU line."""
    monkeypatch.setenv("LINUX_NCPUS", "1")
    monkeypatch.setenv("LINUX_NNODES", "1")
    linux = Linux()
    try:
        values = fetch(linux, "kernel.pernode.cpu.sys")
    finally:
        linux.stop()
    assert values["kernel.pernode.cpu.sys"] == {0: msec(400)}


def test_meminfo_and_numastat(agent: Linux, tree: Path) -> None:
    """Per-node meminfo in kB with pmdalinux's quirks; numastat counters; missing files."""
    values = fetch(
        agent,
        "mem.numa.util.total",
        "mem.numa.util.mapped",
        "mem.numa.util.pageTables",
        "mem.numa.util.dirty",
        "mem.numa.util.hugepagesTotal",
        "mem.numa.util.hugepagesTotalBytes",
        "mem.numa.alloc.hit",
        "mem.numa.alloc.other_node",
        "mem.numa.alloc.foreign",
        "mem.numa.max_bandwidth",
    )
    assert values["mem.numa.util.total"] == {0: 1000, 1: 3000}
    assert values["mem.numa.util.mapped"] == {0: 6}
    assert values["mem.numa.util.pageTables"] == {0: 0}
    assert values["mem.numa.util.dirty"] == {}
    assert values["mem.numa.util.hugepagesTotal"] == {0: 4}
    assert values["mem.numa.util.hugepagesTotalBytes"] == {0: 4 * 2048 * 1024}
    assert values["mem.numa.alloc.hit"] == {0: 500}  # node2 has no numastat file
    assert values["mem.numa.alloc.other_node"] == {0: 50}
    assert values["mem.numa.alloc.foreign"] == {}
    assert values["mem.numa.max_bandwidth"] == {}  # no bandwidth.conf
    # a field once seen keeps its value; counters accumulate, even across a fall
    write(tree, "/sys/devices/system/node/node0/meminfo", b"Node 0 MemFree: 1 kB\n")
    write(tree, "/sys/devices/system/node/node0/numastat", b"numa_hit 400\n")
    values = fetch(agent, "mem.numa.util.total", "mem.numa.alloc.hit")
    assert values["mem.numa.util.total"] == {0: 1000, 1: 3000}
    assert values["mem.numa.alloc.hit"] == {0: (500 + 400 + (2**64 - 1 - 500)) % 2**64}


def test_numbers_are_read_again_whatever_the_layout(agent: Linux, tree: Path) -> None:
    """New numbers in the same layout, and a layout that changes, are both read."""
    fetch(agent, "mem.numa.util.free", "mem.numa.alloc.miss")
    meminfo = "/sys/devices/system/node/node0/meminfo"
    write(tree, meminfo, NODE0_MEMINFO.replace(b"MemFree:         600", b"MemFree:         601"))
    write(tree, "/sys/devices/system/node/node0/numastat", NODE0_NUMASTAT.replace(b" 7", b" 9"))
    values = fetch(agent, "mem.numa.util.free", "mem.numa.alloc.miss")
    assert values == {"mem.numa.util.free": {0: 601}, "mem.numa.alloc.miss": {0: 9}}
    write(tree, meminfo, b"Node 0 MemFree: 123456789 kB\nNode 0 Dirty: 5 kB\n")
    values = fetch(agent, "mem.numa.util.free", "mem.numa.util.dirty")
    assert values == {"mem.numa.util.free": {0: 123456789}, "mem.numa.util.dirty": {0: 5}}


def test_bandwidth_conf_is_read_and_reread(agent: Linux, tree: Path) -> None:
    """max_bandwidth from $PCP_PMDAS_DIR/linux/bandwidth.conf, reread when it changes."""
    conf = tree / "pmdas" / "linux" / "bandwidth.conf"
    conf.parent.mkdir(parents=True)
    conf.write_text("Version:1.0\nnode0:1024\nnode2:0\n")
    os.utime(conf, (1000, 1000))
    assert fetch(agent, "mem.numa.max_bandwidth")["mem.numa.max_bandwidth"] == {0: 1024.0}
    conf.write_text("Version:1.0\nnode2:512.5\n")
    os.utime(conf, (2000, 2000))
    assert fetch(agent, "mem.numa.max_bandwidth")["mem.numa.max_bandwidth"] == {1: 512.5}
    conf.unlink()
    assert fetch(agent, "mem.numa.max_bandwidth")["mem.numa.max_bandwidth"] == {}


def test_missing_sources_give_no_values(tmp_path: Path, monkeypatch) -> None:
    """An empty tree: one node (no sysfs), no /proc/stat, no meminfo: no values, no error."""
    monkeypatch.setenv("LINUX_STATSPATH", str(tmp_path))
    monkeypatch.setenv("LINUX_NCPUS", "2")
    monkeypatch.delenv("LINUX_NNODES", raising=False)
    linux = Linux()
    try:
        names = [m.name for m in numa.METRICS if m.name != "hinv.nnode"]
        names.remove("hinv.node.online")
        values = fetch(linux, "hinv.nnode", "hinv.node.online", *names)
    finally:
        linux.stop()
    assert values["hinv.nnode"] == {PM_IN_NULL: 1}
    assert values["hinv.node.online"] == {0: 1}
    assert all(values[name] == {} for name in names)


def test_table_rows_match_pmdalinux_items() -> None:
    """57 metrics, cluster 36 items 0..41, pernode items as in pmda.c."""
    assert len(numa.METRICS) == 57
    items = sorted(m.item for m in numa.METRICS if m.cluster == 36)
    assert items == list(range(42))
    assert sorted(i for _, i in numa.PERNODE) == [*range(62, 72), 77, 85, 86]
