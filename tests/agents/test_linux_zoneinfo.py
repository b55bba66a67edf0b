"""The linux agent's zone family: mem.zoneinfo.* (/proc/zoneinfo) and mem.buddyinfo.*.

The whole agent on a fake /proc with two NUMA nodes (0 and 2): instance names and ids,
hidden empty zones, the per-node block, sscanf-style key matching, the protection lists,
pmdalinux's quirks (no nr_free_pages, sticky nr_zone_* flags, buddyinfo's numa_node
label always 0, 32-bit buddy counts), saved ids, and missing files.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from purepcp.agents.linux import Linux, zoneinfo
from purepcp.pmapi.cnumbers import strtoul
from tests.support.linux_fetch import fetch, instances

ZONEINFO = b"""\
Node 0, zone      DMA
  per-node stats
      nr_inactive_anon 100
      nr_mapped    7
      workingset_nodes 3
      workingset_activate_anon 4
  pages free     3840
        boost    0
        min      21
        low      26
        high     31
        spanned  4095
        present  3998
        managed  3840
        cma      0
        protection: (0, 3019, 11723)
      nr_free_pages 3840
      nr_free_pages_blocks 3584
      nr_zone_active_anon 5
      numa_hit     9
  pagesets
    cpu: 0
              count:    0
              high:     0
  node_unreclaimable:  0
Node 0, zone  Movable
  pages free     0
        min      0
        present  0
        protection: (0, 0, 0)
Node 2, zone   Normal
  per-node stats
      nr_inactive_anon 200
  pages free     100
        min      -1
        node_scanned 5
        present  1000
        protection: (7)
"""

#: /proc/buddyinfo: the kernel ends each line with a space before the newline.
BUDDYINFO = b"".join(
    line + b" \n"
    for line in (
        b"Node 0, zone      DMA      0      1      2",
        b"Node 0, zone   Normal      5      6      7",
        b"Node 2, zone   Normal      8      9 4294967297",
    )
)


@pytest.fixture
def tree(tmp_path: Path, monkeypatch) -> Path:
    """A fake root with /proc/zoneinfo and /proc/buddyinfo."""
    monkeypatch.delenv("PCP_VAR_DIR", raising=False)
    monkeypatch.setenv("LINUX_STATSPATH", str(tmp_path))
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "zoneinfo").write_bytes(ZONEINFO)
    (tmp_path / "proc" / "buddyinfo").write_bytes(BUDDYINFO)
    return tmp_path


@pytest.fixture
def agent(tree: Path) -> Iterator[Linux]:
    """A linux agent on the fake tree."""
    linux = Linux()
    yield linux
    linux.stop()


def kb(agent: Linux, pages: int) -> int:
    """PAGES in Kbyte, in 64-bit arithmetic."""
    return ((pages * agent.pagesize) % 2**64) // 1024


def test_table_matches_pmdalinux() -> None:
    """68 zoneinfo items 0..67, protection, two buddyinfo metrics."""
    assert [item for _, item, _ in zoneinfo.ZONEINFO] == list(range(68))
    assert len(zoneinfo.METRICS) == 71
    assert zoneinfo.ZONE_KEYS["workingset_activate_anon"] == 57  # "workingset_active_anon"
    assert zoneinfo.ZONE_KEYS["node_scanned"] == zoneinfo.ZONE_KEYS["scanned"] == 4


def test_zone_instances_and_values(agent: Linux, tree: Path) -> None:
    """Zones and per-node blocks, empty zones hidden, values in Kbyte."""
    names = [f"mem.zoneinfo.{suffix}" for suffix, _, _ in zoneinfo.ZONEINFO]
    values = fetch(agent, *names)
    assert instances(agent, 32) == {0: "node0", 1: "DMA::node0", 3: "node2", 4: "Normal::node2"}
    assert values["mem.zoneinfo.free"] == {1: kb(agent, 3840), 4: kb(agent, 100)}
    assert values["mem.zoneinfo.high"] == {1: kb(agent, 31)}  # "high:" lines do not match
    assert values["mem.zoneinfo.min"] == {1: kb(agent, 21), 4: kb(agent, 2**64 - 1)}
    assert values["mem.zoneinfo.scanned"] == {4: kb(agent, 5)}
    assert values["mem.zoneinfo.nr_inactive_anon"] == {0: kb(agent, 100), 3: kb(agent, 200)}
    assert values["mem.zoneinfo.nr_mapped"] == {0: kb(agent, 7)}
    assert values["mem.zoneinfo.workingset_active_anon"] == {0: kb(agent, 4)}
    assert values["mem.zoneinfo.nr_zone_active_anon"] == {1: kb(agent, 5)}
    assert values["mem.zoneinfo.numa_hit"] == {1: kb(agent, 9)}
    assert values["mem.zoneinfo.nr_free_pages"] == {}  # pmdalinux never reads it
    assert values["mem.zoneinfo.cma"] == {1: 0}
    assert agent.instance_labels(agent.zoneinfo_zones, 1, "DMA::node0") == {
        "numa_node": 0,
        "zone": "DMA",
    }
    assert agent.instance_labels(agent.zoneinfo_zones, 3, "node2") == {"numa_node": 2}

    # the next read: DMA loses two lines, Movable gets pages
    text = ZONEINFO.replace(b"      nr_zone_active_anon 5\n", b"")
    text = text.replace(b"      numa_hit     9\n", b"")
    text = text.replace(b"present  0", b"present  5")
    (tree / "proc" / "zoneinfo").write_bytes(text)
    values = fetch(agent, "mem.zoneinfo.nr_zone_active_anon", "mem.zoneinfo.numa_hit")
    assert 2 in instances(agent, 32)
    assert values["mem.zoneinfo.nr_zone_active_anon"] == {1: kb(agent, 5)}  # sticky
    assert values["mem.zoneinfo.numa_hit"] == {}


def test_protection(agent: Linux) -> None:
    """One instance per number of each zone's protection list, hidden zones included."""
    values = fetch(agent, "mem.zoneinfo.protection")
    assert instances(agent, 33) == {
        0: "DMA::node0::lowmem_reserved0",
        1: "DMA::node0::lowmem_reserved1",
        2: "DMA::node0::lowmem_reserved2",
        3: "Movable::node0::lowmem_reserved0",
        4: "Movable::node0::lowmem_reserved1",
        5: "Movable::node0::lowmem_reserved2",
        6: "Normal::node2::lowmem_reserved0",
    }
    assert values["mem.zoneinfo.protection"] == {
        0: 0,
        1: kb(agent, 3019),
        2: kb(agent, 11723),
        3: 0,
        4: 0,
        5: 0,
        6: kb(agent, 7),
    }
    assert agent.instance_labels(
        agent.zoneinfo_protection, 6, "Normal::node2::lowmem_reserved0"
    ) == {"numa_node": 2, "zone": "Normal", "lowmem_reserved": 0}
    assert agent.zoneinfo_protection.labels == {}


def test_each_read_takes_the_new_numbers(agent: Linux, tree: Path) -> None:
    """Lines whose numbers change (wider, signed, in a protection list) are read again."""
    names = ("mem.zoneinfo.free", "mem.zoneinfo.min", "mem.zoneinfo.numa_hit")
    fetch(agent, *names, "mem.zoneinfo.protection")
    text = ZONEINFO.replace(b"pages free     3840", b"pages free     38400")
    text = text.replace(b"numa_hit     9", b"numa_hit     8")
    text = text.replace(b"min      21", b"min      -2")
    text = text.replace(b"protection: (0, 3019, 11723)", b"protection: (0, 3020, 11723)")
    (tree / "proc" / "zoneinfo").write_bytes(text)
    values = fetch(agent, *names, "mem.zoneinfo.protection")
    assert values["mem.zoneinfo.free"] == {1: kb(agent, 38400), 4: kb(agent, 100)}
    assert values["mem.zoneinfo.min"] == {1: kb(agent, 2**64 - 2), 4: kb(agent, 2**64 - 1)}
    assert values["mem.zoneinfo.numa_hit"] == {1: kb(agent, 8)}
    assert values["mem.zoneinfo.protection"][1] == kb(agent, 3020)


def test_line_kinds_do_not_depend_on_trailing_digits() -> None:
    """What a line ending in digits does is known from the text before them."""
    for line in ZONEINFO.decode().splitlines():
        stem = line.rstrip("0123456789")
        kind = zoneinfo.zoneinfo_stem(stem) if stem != line else None
        if kind is None:
            continue
        for digits in ("0", "17", "99999999999999999999999"):
            whole = zoneinfo.zoneinfo_line(stem + digits)
            if kind[0] == zoneinfo.PLAIN:
                assert whole == (zoneinfo.FIXED, kind[1], min(int(digits), 2**64 - 1), False)
            elif kind[0] == zoneinfo.VALUE:
                value = strtoul(kind[2] + digits).value
                assert whole == (zoneinfo.FIXED, kind[1], value, kind[3])
            else:
                assert whole == kind


def test_zone_ids_are_saved(tree: Path, monkeypatch) -> None:
    """Zone ids persist in $PCP_VAR_DIR/config/pmda/60.32 across agents."""
    monkeypatch.setenv("PCP_VAR_DIR", str(tree / "var"))
    first = Linux()
    try:
        fetch(first, "mem.zoneinfo.free")
    finally:
        first.stop()
    assert (tree / "var" / "config" / "pmda" / "60.32").exists()
    (tree / "proc" / "zoneinfo").write_bytes(
        ZONEINFO.split(b"Node 2")[0].replace(b"Node 0", b"Node 2")
    )
    second = Linux()
    try:
        fetch(second, "mem.zoneinfo.free")
        assert instances(second, 32) == {3: "node2", 5: "DMA::node2"}  # node2 kept its id
    finally:
        second.stop()


def test_buddyinfo(agent: Linux, tree: Path) -> None:
    """Orders counted from the first line; 32-bit counts; numa_node label always 0."""
    values = fetch(agent, "mem.buddyinfo.pages", "mem.buddyinfo.total")
    assert instances(agent, 31) == {
        i: f"{zone}::order{k}::{node}"
        for i, (zone, node, k) in enumerate(
            (z, n, k) for z, n in (("DMA", "node0"), ("Normal", "node0"), ("Normal", "node2"))
            for k in range(3)
        )
    }  # fmt: skip
    assert values["mem.buddyinfo.pages"] == dict(enumerate((0, 1, 2, 5, 6, 7, 8, 9, 1)))
    assert values["mem.buddyinfo.total"][5] == 7 * 4 * agent.pagesize // 1024
    assert values["mem.buddyinfo.total"][7] == 9 * 2 * agent.pagesize // 1024
    assert agent.instance_labels(agent.zoneinfo_buddies, 6, "Normal::order0::node2") == {
        "numa_node": 0,
        "zone": "Normal",
        "order": 0,
    }
    assert agent.zoneinfo_buddies.labels["indom_name"] == "per buddy per numa_node"
    # a zone that goes away keeps its instances and last counts
    (tree / "proc" / "buddyinfo").write_bytes(
        BUDDYINFO.split(b"Node 2")[0].replace(b" 5 ", b" 50 ")
    )
    values = fetch(agent, "mem.buddyinfo.pages")
    assert values["mem.buddyinfo.pages"] == dict(enumerate((0, 1, 2, 50, 6, 7, 8, 9, 1)))


def test_buddyinfo_splitting() -> None:
    """PCP's field split and node naming."""
    line = "Node 0, zone      DMA      0      1      2 \n"
    assert len(zoneinfo.buddy_tokens(line)) - 5 == 3  # the trailing " \n" counts
    assert len(zoneinfo.buddy_tokens(line.replace(" \n", "\n"))) - 5 == 2
    assert zoneinfo.buddy_node_name(line) == "node0"
    assert zoneinfo.buddy_node_name("Node 12, zone DMA 1") == "node12"


def test_missing_files_give_nothing(tmp_path: Path, monkeypatch) -> None:
    """No /proc/zoneinfo or /proc/buddyinfo: no instances, no values, no error."""
    monkeypatch.delenv("PCP_VAR_DIR", raising=False)
    monkeypatch.setenv("LINUX_STATSPATH", str(tmp_path))
    linux = Linux()
    try:
        names = [m.name for m in zoneinfo.METRICS]
        values = fetch(linux, *names)
        assert all(v == {} for v in values.values())
        assert instances(linux, 31) == instances(linux, 32) == instances(linux, 33) == {}
    finally:
        linux.stop()


def test_buddyinfo_not_understood_gives_no_values_and_no_error(tree: Path, caplog) -> None:
    """A first line too short to count orders from (garbage, a cut-off file): no buddyinfo
    instances or values and nothing logged; a good file later is read as usual."""
    (tree / "proc" / "buddyinfo").write_bytes(b"garbage\n")
    agent = Linux()
    try:
        values = fetch(agent, "mem.buddyinfo.pages")
        assert values["mem.buddyinfo.pages"] == {} and instances(agent, 31) == {}
        (tree / "proc" / "buddyinfo").write_bytes(BUDDYINFO)
        agent.proc.close()
        values = fetch(agent, "mem.buddyinfo.pages")
        assert values["mem.buddyinfo.pages"] == dict(enumerate((0, 1, 2, 5, 6, 7, 8, 9, 1)))
    finally:
        agent.stop()
    assert "failed" not in caplog.text
