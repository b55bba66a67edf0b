"""The linux agent's /proc/net/snmp6 family (network.ip6, icmp6, udp6, udplite6; cluster 58).

The table scan on fixed samples (pmdalinux's linux_table_scan rules), and the whole
agent on a fake /proc tree: values, a field the kernel lacks, and pmdalinux's habit
of keeping the last values (0 before any) when the file cannot be read.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from purepcp.agents.linux import Linux, snmp6
from purepcp.agents.linux.catalog import BY_NAME
from purepcp.pmapi.ids import PM_IN_NULL

SNMP6 = b"""\
Ip6InReceives                   \t54
Ip6InHdrErrors                  \t1
Ip6InDelivers                   \t50
Ip6OutRequests                  \t61
Ip6InOctets                     \t18446744073709551615
Ip6InMcastOctets                \t99
Ip6InCEPkts                     \t3
Icmp6InMsgs                     \t7
Icmp6InCsumErrors               \t2
Icmp6InErrors                   \t5
Icmp6InType134                  \t4
Icmp6OutType133                 \t6
Icmp6OutMLDv2Reports            \t8
Udp6InDatagrams                 \t11
Udp6InCsumErrors                \t12
Udp6MemErrors                   \t13
Udp6IgnoredMulti                \t14
UdpLite6InDatagrams             \t15
UdpLite6InCsumErrors            \t16
"""


def value(values: list[int], name: str) -> int:
    """The scanned value of metric NAME."""
    return values[BY_NAME[name].item]


def test_table_matches_pmdalinux_items() -> None:
    """82 counters, items 0..81 in the order of proc_net_snmp6.h, names from the fields."""
    assert [m.item for m in snmp6.METRICS] == list(range(82))
    assert snmp6.ROWS[0] == ("network.ip6.inreceives", b"Ip6InReceives")
    assert snmp6.ROWS[31] == ("network.ip6.incepkts", b"Ip6InCEPkts")
    assert snmp6.ROWS[36] == ("network.icmp6.incsumerrors", b"Icmp6InCsumErrors")
    assert snmp6.ROWS[51] == ("network.icmp6.inmldv2reports", b"Icmp6InMLDv2Reports")
    assert snmp6.ROWS[74] == ("network.udp6.ignoredmulti", b"Udp6IgnoredMulti")
    assert snmp6.ROWS[81] == ("network.udplite6.incsumerrors", b"UdpLite6InCsumErrors")
    assert all(m.cluster == 58 and m.indom is None for m in snmp6.METRICS)


def test_scan_reads_each_field() -> None:
    """Each known field's number; unknown lines (per-type ICMP, MemErrors) are ignored."""
    values = [0] * 82
    snmp6.scan(SNMP6, values)
    assert value(values, "network.ip6.inreceives") == 54
    assert value(values, "network.ip6.inhdrerrors") == 1
    assert value(values, "network.ip6.indelivers") == 50
    assert value(values, "network.ip6.outrequests") == 61
    assert value(values, "network.ip6.inoctets") == 2**64 - 1
    assert value(values, "network.ip6.inmcastoctets") == 99
    assert value(values, "network.icmp6.inerrors") == 5
    assert value(values, "network.icmp6.incsumerrors") == 2
    assert value(values, "network.icmp6.outmldv2reports") == 8
    assert value(values, "network.udp6.incsumerrors") == 12
    assert value(values, "network.udp6.ignoredmulti") == 14
    assert value(values, "network.udplite6.indatagrams") == 15
    assert value(values, "network.udplite6.incsumerrors") == 16
    assert value(values, "network.udp6.inerrors") == 0  # not in the sample
    assert (
        sum(values)
        == 54 + 1 + 50 + 61 + 2**64 - 1 + 99 + 3 + 7 + 2 + 5 + 8 + sum(range(11, 17)) - 13
    )


def test_scan_keeps_what_the_file_lacks() -> None:
    """A field missing from a later read keeps its earlier value, as in pmdalinux's table."""
    values = [0] * 82
    snmp6.scan(SNMP6, values)
    snmp6.scan(b"Ip6InReceives 60\n", values)
    assert value(values, "network.ip6.inreceives") == 60
    assert value(values, "network.ip6.indelivers") == 50


def test_scan_follows_linux_table_scan_on_odd_lines() -> None:
    """A field anywhere in a line, then the first digits after it; a digitless match is skipped."""
    values = [0] * 82
    snmp6.scan(b"  [Ip6InDelivers]: x=42 y=7\nIp6OutRequests none\nUdp6NoPorts\t9 10\n", values)
    assert value(values, "network.ip6.indelivers") == 42
    assert value(values, "network.ip6.outrequests") == 0
    assert value(values, "network.udp6.noports") == 9


@pytest.fixture
def tree(tmp_path: Path, monkeypatch) -> Iterator[tuple[Linux, Path]]:
    """An agent on a fake /proc tree holding /proc/net/snmp6."""
    (tmp_path / "proc" / "net").mkdir(parents=True)
    (tmp_path / "proc" / "net" / "snmp6").write_bytes(SNMP6)
    monkeypatch.setenv("LINUX_STATSPATH", str(tmp_path))
    monkeypatch.delenv("PCP_VAR_DIR", raising=False)
    agent = Linux()
    yield agent, tmp_path
    agent.stop()


def fetch(agent: Linux, *names: str) -> dict[str, Any]:
    """{name: value} of singular metrics NAMES (None when there is no value)."""
    result = agent.fetch([agent.pmns.lookup(name) for name in names])
    values = {}
    for name, vs in zip(names, result.vsets, strict=True):
        got = dict(zip(vs.insts, vs.atoms(BY_NAME[name].type), strict=True))
        values[name] = got.get(PM_IN_NULL)
    return values


def test_agent_serves_every_counter(tree) -> None:
    """Every metric has a value: the file's number, or 0 for a field it does not give."""
    agent, _ = tree
    names = [m.name for m in snmp6.METRICS]
    values = fetch(agent, *names)
    assert values["network.ip6.inreceives"] == 54
    assert values["network.ip6.inoctets"] == 2**64 - 1
    assert values["network.udplite6.incsumerrors"] == 16
    assert values["network.ip6.fragoks"] == 0
    assert None not in values.values()


def test_agent_keeps_last_values_without_the_file(tree) -> None:
    """Like pmdalinux: an unreadable file leaves the last values (a new agent: zeros)."""
    agent, root = tree
    assert fetch(agent, "network.ip6.inreceives")["network.ip6.inreceives"] == 54
    (root / "proc" / "net" / "snmp6").unlink()
    agent.proc.close()  # the agent keeps files open: make it open them again
    assert fetch(agent, "network.ip6.inreceives")["network.ip6.inreceives"] == 54
    fresh = Linux()
    try:
        values = fetch(fresh, "network.ip6.inreceives", "network.udp6.indatagrams")
        assert values == {"network.ip6.inreceives": 0, "network.udp6.indatagrams": 0}
    finally:
        fresh.stop()


def _line_by_line(data: bytes, values: list[int]) -> None:
    """The careful scan: each line assigned as linux_table_scan assigns it."""
    for line in data.split(b"\n"):
        found = snmp6._match(line)
        if found is not None:
            values[found[0]] = found[1]


def test_plain_files_scan_as_line_by_line() -> None:
    """The kernel's plain text (read by place, the layout worked out once) and odd text
    give what the line-by-line table scan gives, including unknown fields that contain a
    table field (with or without digits of their own) and a field given twice."""
    full = b"".join(b"%s \t%d\n" % (field, n + 100) for n, (_, field) in enumerate(snmp6.ROWS))
    samples = [
        SNMP6,
        full,
        full + b"Ip6InReceives7x  \t5\n",  # its own digits after the field: 7
        full + b"XIp6InDelivers   \t9\n" + b"Ip6InDelivers 3\n",  # the last line wins
        full.replace(b"Ip6InHdrErrors", b"Ip6InHdrErrorsNew"),
        b"Ip6InReceives 5\r\n",  # not plain: the careful scan
        full,  # back to the first layout
    ]
    for data in samples:
        quick, careful = list(range(82)), list(range(82))
        snmp6.scan(data, quick)
        _line_by_line(data, careful)
        assert quick == careful, data[-60:]
    values = [0] * 82
    snmp6.scan(full + b"Ip6InReceives7x  \t5\n", values)
    assert value(values, "network.ip6.inreceives") == 7
