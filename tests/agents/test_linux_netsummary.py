"""The linux agent's network summaries: network.all (90), network.softnet (57), sockstat (11, 73).

Parsers and rules on fixed samples (the interfaces.conf pattern, softnet_stat's
hexadecimal words, sockstat's sscanf reading), and the whole agent on a fake /proc
tree: which interfaces network.all sums, softnet lines given to CPU instances in
order, values present only when the lines have enough words, and sockstat's
remembered values.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from purepcp.agents.linux import Linux, netsummary
from purepcp.agents.linux.catalog import BY_NAME
from purepcp.pmapi.ids import PM_IN_NULL

NET_DEV = b"""\
Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop
    lo: 100 2 0 0 0 0 0 0 100 2 0 0 0 0 0 0
  eth0: 5000 50 1 2 3 4 5 6 7000 70 7 8 9 10 11 12
 bond0: 900 9 9 9 0 0 0 0 900 9 9 9 0 0 0 0
bond0.7: 10 1 0 0 0 0 0 0 20 2 0 0 0 0 0 0
 veth9: 300 3 0 1 0 0 0 0 400 4 0 1 0 0 0 0
"""

STAT = b"""\
cpu  1000 20 300 4000 500 60 70 8 9 1
cpu0 600 10 200 2000 300 30 40 4 5 1
cpu2 400 10 100 2000 200 30 30 4 4 0
intr 1
"""

#: A 5.10+ kernel's lines: 13 words (backlog length and CPU id added after flow_limit_count).
SOFTNET = b"""\
0000000a 00000001 00000002 00000000 00000000 00000000 00000000 00000000 00000003 00000004 \
00000005 00000000 00000000
ffffffff 00000010 00000020 00000000 00000000 00000000 00000000 00000000 00000030 00000040 \
00000050 00000000 00000002
"""

SOCKSTAT = b"""\
sockets: used 42
TCP: inuse 16 orphan 1 tw 2 alloc 17 mem 99
UDP: inuse 3 mem 4
UDPLITE: inuse 5
RAW: inuse 6
FRAG: inuse 7 memory 8
"""

SOCKSTAT6 = b"""\
TCP6: inuse 11
UDP6: inuse 12
UDPLITE6: inuse 13
RAW6: inuse 14
FRAG6: inuse 15 memory 16
"""


# --- network.all ----------------------------------------------------------------------------


def test_interfaces_pattern_drops_comments_and_space() -> None:
    """interfaces.conf: '#' to end of line and every white space character are removed."""
    text = "# comment\n^(lo |  # loopback\n  docker[0-9]+ |\n\tface)$\n"
    assert netsummary.interfaces_pattern(text) == "^(lo|docker[0-9]+|face)$"


def test_load_excluded(tmp_path: Path) -> None:
    """The file's pattern; without the file, the one PCP installs (a host with only purepcp
    sums what one with PCP installed sums: not docker0, veth1 or virbr0); pmdalinux's
    built-in default for an empty or bad pattern."""
    default = netsummary.load_excluded(None)
    assert default.pattern == netsummary.DEFAULT_EXCLUDED
    installed = netsummary.load_excluded(str(tmp_path / "absent"))
    assert installed.pattern == netsummary.INSTALLED_EXCLUDED
    for name in ("lo", "docker0", "veth12", "virbr0-nic", "cni-podman3", "tun0", "bond1"):
        assert installed.search(name), name
    assert not installed.search("eth0") and not installed.search("docker0x")
    conf = tmp_path / "interfaces.conf"
    conf.write_text("# only comments\n")
    assert netsummary.load_excluded(str(conf)).pattern == default.pattern
    conf.write_text("^(lo|(bad)$\n")
    assert netsummary.load_excluded(str(conf)).pattern == default.pattern
    conf.write_text("^(lo | veth[[:digit:]]+)$ # ours\n")
    excluded = netsummary.load_excluded(str(conf))
    assert excluded.search("veth9") and excluded.search("lo") and not excluded.search("bond0")


def test_net_all_sums_interfaces_not_excluded() -> None:
    """The default leaves out lo, bondN, teamN and face (whole names), and sums the rest."""
    excluded = netsummary.load_excluded(None)
    interfaces = [
        ("lo", tuple(range(100, 116))),
        ("eth0", (5000, 50, 1, 2, 3, 4, 5, 6, 7000, 70, 7, 8, 9, 10, 11, 12)),
        ("bond0", (1,) * 16),
        ("team12", (1,) * 16),
        ("face", (1,) * 16),
        ("bond0.7", (10, 1, 0, 0, 0, 0, 0, 0, 20, 2, 0, 0, 0, 0, 0, 0)),
        ("wlan0", (2**64 - 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0)),
    ]
    sums = netsummary.net_all(interfaces, excluded)
    in_bytes = (5000 + 10 + 2**64 - 1) % 2**64
    out_bytes = 7000 + 20 + 1
    assert sums == [
        *(in_bytes, 51, 1, 2),
        *(out_bytes, 72, 7, 8),
        *((in_bytes + out_bytes) % 2**64, 123, 8, 10),
    ]
    assert netsummary.net_all([], excluded) == [0] * 12


# --- network.softnet ------------------------------------------------------------------------


def test_softnet_line_words() -> None:
    """Up to 11 words of at most 8 hex digits; the count sscanf would return."""
    line = SOFTNET.split(b"\n")[1]
    words, count = netsummary.softnet_line(line)
    assert count == 11
    assert words[:3] == [0xFFFFFFFF, 0x10, 0x20] and words[8:] == [0x30, 0x40, 0x50]
    words, count = netsummary.softnet_line(b"00000001 00000002 00000003 0 0 0 0 0 00000004")
    assert count == 9 and words == [1, 2, 3, 0, 0, 0, 0, 0, 4, 0, 0]
    assert netsummary.softnet_line(b"123456789 2")[0][:3] == [0x12345678, 9, 2]
    assert netsummary.softnet_line(b"00000001 zz 3")[1] == 1
    assert netsummary.softnet_line(b"")[1] == -1


def test_softnet_lines_go_to_cpus_in_order() -> None:
    """The Nth line belongs to the Nth CPU instance; CPUs past the last line get nothing."""
    percpu, count = netsummary.softnet(SOFTNET, [0, 2])
    assert percpu[0][0] == 10 and percpu[2][0] == 0xFFFFFFFF and count == 11
    percpu, _ = netsummary.softnet(SOFTNET, [0, 2, 3])
    assert set(percpu) == {0, 2}


# --- network.sockstat -----------------------------------------------------------------------


def test_sockstat_numbers() -> None:
    """Each number after its word; a line cut short leaves the numbers after the cut alone."""
    values: dict[str, int] = {}
    netsummary.sockstat(SOCKSTAT, netsummary.SOCKSTAT, values)
    assert values == {
        "network.sockstat.total": 42,
        "network.sockstat.tcp.inuse": 16,
        "network.sockstat.tcp.orphan": 1,
        "network.sockstat.tcp.tw": 2,
        "network.sockstat.tcp.alloc": 17,
        "network.sockstat.tcp.mem": 99,
        "network.sockstat.udp.inuse": 3,
        "network.sockstat.udp.mem": 4,
        "network.sockstat.udplite.inuse": 5,
        "network.sockstat.raw.inuse": 6,
        "network.sockstat.frag.inuse": 7,
        "network.sockstat.frag.memory": 8,
    }
    netsummary.sockstat(b"TCP: inuse 20 orphan x tw 9\n", netsummary.SOCKSTAT, values)
    assert values["network.sockstat.tcp.inuse"] == 20
    assert values["network.sockstat.tcp.tw"] == 2  # sscanf stopped at "x"
    netsummary.sockstat(b"sockets: used 4294967297\n", netsummary.SOCKSTAT, values)
    assert values["network.sockstat.total"] == 1  # stored in a C int
    six: dict[str, int] = {}
    netsummary.sockstat(SOCKSTAT6, netsummary.SOCKSTAT6, six)
    assert six["network.sockstat.udplite6.inuse"] == 13
    assert six["network.sockstat.frag6.memory"] == 16


# --- the agent on a fake tree -------------------------------------------------------------------


@pytest.fixture
def tree(tmp_path: Path, monkeypatch) -> Iterator[tuple[Linux, Path]]:
    """An agent on a fake /proc tree, with $PCP_SYSCONF_DIR holding no interfaces.conf."""
    net = tmp_path / "proc" / "net"
    net.mkdir(parents=True)
    (tmp_path / "proc" / "stat").write_bytes(STAT)
    for name, data in (
        ("dev", NET_DEV),
        ("softnet_stat", SOFTNET),
        ("sockstat", SOCKSTAT),
        ("sockstat6", SOCKSTAT6),
    ):
        (net / name).write_bytes(data)
    monkeypatch.setenv("LINUX_STATSPATH", str(tmp_path))
    monkeypatch.setenv("PCP_SYSCONF_DIR", str(tmp_path / "etc"))
    monkeypatch.setenv("LINUX_NCPUS", "4")
    monkeypatch.delenv("PCP_VAR_DIR", raising=False)
    agent = Linux()
    yield agent, tmp_path
    agent.stop()


def fetch(agent: Linux, *names: str) -> dict[str, Any]:
    """{name: value} for singular NAMES, {name: {inst: value}} for the others ({} if none)."""
    result = agent.fetch([agent.pmns.lookup(name) for name in names])
    values: dict[str, Any] = {}
    for name, vs in zip(names, result.vsets, strict=True):
        got = dict(zip(vs.insts, vs.atoms(BY_NAME[name].type), strict=True))
        values[name] = got.get(PM_IN_NULL, got) if BY_NAME[name].indom is None else got
    return values


def test_agent_network_all(tree) -> None:
    """No interfaces.conf: the exclusions PCP installs; eth0 and bond0.7 are summed, not veth9."""
    agent, _ = tree
    values = fetch(agent, *(f"network.all.{row[0]}" for row in netsummary.NET_ALL))
    assert values["network.all.in.bytes"] == 5000 + 10
    assert values["network.all.out.packets"] == 70 + 2
    assert values["network.all.total.drops"] == 2 + 8


def test_agent_network_all_reads_interfaces_conf(tree) -> None:
    """$PCP_SYSCONF_DIR/linux/interfaces.conf replaces the default pattern."""
    _, root = tree
    conf = root / "etc" / "linux"
    conf.mkdir(parents=True)
    (conf / "interfaces.conf").write_text("^(lo|veth[0-9]+)$\n")
    agent = Linux()
    try:
        values = fetch(agent, "network.all.in.bytes")
        assert values["network.all.in.bytes"] == 5000 + 900 + 10
    finally:
        agent.stop()


def test_agent_network_all_without_net_dev(tree) -> None:
    """No /proc/net/dev: no interfaces, so sums of 0 (pmdalinux's values too)."""
    agent, root = tree
    (root / "proc" / "net" / "dev").unlink()
    agent.proc.close()  # the agent keeps files open: make it open them again
    assert fetch(agent, "network.all.total.bytes")["network.all.total.bytes"] == 0


def test_agent_softnet(tree) -> None:
    """Per-CPU values on the CPU instances of /proc/stat (0 and 2), and their sums."""
    agent, root = tree
    names = [m.name for m in netsummary.METRICS if m.cluster == 57]
    values = fetch(agent, *names)
    assert values["network.softnet.percpu.processed"] == {0: 10, 2: 0xFFFFFFFF}
    assert values["network.softnet.percpu.flow_limit_count"] == {0: 5, 2: 0x50}
    assert values["network.softnet.processed"] == 10 + 0xFFFFFFFF
    assert values["network.softnet.cpu_collision"] == 3 + 0x30
    assert values["network.softnet.received_rps"] == 4 + 0x40

    # an older kernel's 10 words: no flow_limit_count at all
    old = b"00000001 0 0 0 0 0 0 0 00000002 00000003\n" * 2
    (root / "proc" / "net" / "softnet_stat").write_bytes(old)
    values = fetch(agent, *names)
    assert values["network.softnet.flow_limit_count"] == {}
    assert values["network.softnet.percpu.flow_limit_count"] == {}
    assert values["network.softnet.received_rps"] == 6

    (root / "proc" / "net" / "softnet_stat").unlink()
    agent.proc.close()  # the agent keeps files open: make it open them again
    values = fetch(agent, *names)
    assert all(v == {} for v in values.values())


def test_agent_sockstat_keeps_last_values(tree) -> None:
    """Socket counts; unreadable files keep the last numbers, and a new agent has zeros."""
    agent, root = tree
    names = [m.name for m in netsummary.METRICS if m.cluster in (11, 73)]
    values = fetch(agent, *names)
    assert values["network.sockstat.tcp.mem"] == 99
    assert values["network.sockstat.raw6.inuse"] == 14
    (root / "proc" / "net" / "sockstat").unlink()
    (root / "proc" / "net" / "sockstat6").unlink()
    agent.proc.close()  # the agent keeps files open: make it open them again
    assert fetch(agent, *names) == values
    fresh = Linux()
    try:
        assert set(fetch(fresh, *names).values()) == {0}
    finally:
        fresh.stop()


def test_softnet_plain_words_and_odd_ones() -> None:
    """Plain words of up to 8 hex digits are read word by word; anything else (a longer
    word, 0x, a sign) the way sscanf("%08llx") reads it."""
    assert netsummary.softnet_line(b"0000000a 0000000B 0000000c\n") == (
        [10, 11, 12] + [0] * 8,
        3,
    )
    twelve = b" ".join(b"%08x" % n for n in range(1, 13))
    assert netsummary.softnet_line(twelve) == (list(range(1, 12)), 11)
    assert netsummary.softnet_line(b"0x1f 2")[0][:2] == [0x1F, 2]
    assert netsummary.softnet_line(b"-1 2")[0][:2] == [2**64 - 1, 2]
    assert netsummary.softnet_line(b"123456789 2")[1] == 3
