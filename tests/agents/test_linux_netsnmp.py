"""The linux agent's IPv4 SNMP and netstat family (network.ip/icmp/icmpmsg/tcp/udp/udplite/
mptcp): its tables, the parsers of /proc/net/snmp and /proc/net/netstat on samples of our
own, pmdalinux's value rules (no value for a missing column or -1, tcp.maxconn's
exception, IcmpMsg's numbered columns), and the agent on a fake /proc tree.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from purepcp.agents.linux import ALL_INDOMS, Linux, catalog
from purepcp.agents.linux import netsnmp as ns
from purepcp.agents.linux.records import COUNT, MBYTE, MSEC, NONE, U64
from purepcp.pmapi.ids import PM_IN_NULL, pmInDom_build
from purepcp.pmapi.pdu.records import InstanceReqPDU
from purepcp.pmapi.types import PMSem

MAX = (1 << 64) - 1

# Samples written for these tests (made-up numbers; the kernel's layout).
SNMP = (
    b"Ip: Forwarding DefaultTTL InReceives InHdrErrors InAddrErrors ForwDatagrams"
    b" InUnknownProtos InDiscards InDelivers OutRequests OutDiscards OutNoRoutes"
    b" ReasmTimeout ReasmReqds ReasmOKs ReasmFails FragOKs FragFails FragCreates OutTransmits\n"
    b"Ip: 1 63 900 1 2 3 4 5 890 870 6 7 30 8 9 10 11 12 13 871\n"
    b"Icmp: InMsgs InErrors InCsumErrors InDestUnreachs OutMsgs OutRateLimitGlobal OutEchos\n"
    b"Icmp: 40 -1 0 17 22 99 5\n"
    b"IcmpMsg: InType3 OutType0 InType8 InType300 OutType+11 InTypeX OutType3\n"
    b"IcmpMsg: 17 5 21 1000 2 77 -1\n"
    b"Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails"
    b" EstabResets CurrEstab InSegs OutSegs RetransSegs InErrs OutRsts InCsumErrors\n"
    b"Tcp: 1 200 120000 -1 50 60 7 8 3 5000 4800 12 0 9 0\n"
    b"Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors"
    b" InCsumErrors IgnoredMulti\n"
    b"Udp: 300 4 0 310 0 0 0 2\n"
    b"UdpLite: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors"
    b" InCsumErrors IgnoredMulti MemErrors\n"
    b"UdpLite: 0 0 0 0 0 0 0 0 0\n"
)

NETSTAT = (
    b"TcpExt: SyncookiesSent TW TWRecycled PAWSActive TCPFastOpenActiveFail TCPHPHits"
    b" TCPMemoryPressuresChrono TcpTimeoutRehash TCPSomethingNew\n"
    b"TcpExt: 1 250 0 3 4 18446744073709551615 77 5 6\n"
    b"IpExt: InNoRoutes InTruncatedPkts InMcastPkts InOctets OutOctets InCsumErrors"
    b" InNoECTPkts ReasmOverlaps\n"
    b"IpExt: 0 0 12 123456789012 98765432109 0 5000 0\n"
)


def snmp_values(data: bytes, *names: str) -> dict[str, Any]:
    """Cluster 14's values for NAMES (all of them if none) from the bytes DATA."""
    return ns.snmp_values(ns.parse_snmp(data), names or ns.SNMP_NAMES)


def netstat_values(data: bytes, *names: str) -> dict[str, Any]:
    """Cluster 53's values for NAMES (all of them if none) from the bytes DATA."""
    return ns.netstat_values(ns.parse_netstat(data), names or ns.NETSTAT_NAMES)


# -- the tables ---------------------------------------------------------------------------


def test_tables_make_pmdalinux_metrics() -> None:
    """286 metrics with distinct names and items, all 64-bit, in the catalog and agent."""
    assert len(ns.METRICS) == 286
    assert len({m.name for m in ns.METRICS}) == 286
    assert len({m.pmid for m in ns.METRICS}) == 286
    assert {m.cluster for m in ns.METRICS} == {14, 53}
    assert {m.type for m in ns.METRICS} == {U64}
    assert {m.name for m in ns.METRICS if m.indom is not None} == {
        "network.icmpmsg.intype",
        "network.icmpmsg.outtype",
    }
    assert all(catalog.BY_NAME[m.name] is m for m in ns.METRICS)
    assert {m.name for m in ns.METRICS} == ns.SNMP_NAMES | ns.NETSTAT_NAMES


def test_table_kinds() -> None:
    """Semantics and units as pmdalinux declares them, its Mbyte slip included."""
    kinds = {m.name: (m.sem, m.units) for m in ns.METRICS}
    assert kinds["network.tcp.rtomin"] == (PMSem.PM_SEM_INSTANT, MSEC)
    assert kinds["network.tcp.rtomax"] == (PMSem.PM_SEM_INSTANT, MSEC)
    for level in ("rtoalgorithm", "maxconn", "currestab"):
        assert kinds["network.tcp." + level] == (PMSem.PM_SEM_INSTANT, NONE)
    assert kinds["network.tcp.tcpmemorypressureschrono"] == (PMSem.PM_SEM_COUNTER, MBYTE)
    assert kinds["network.ip.forwarding"] == (PMSem.PM_SEM_COUNTER, COUNT)
    others = Counter(kinds.values())
    assert others[(PMSem.PM_SEM_COUNTER, COUNT)] == 286 - 6


def test_icmpmsg_indom() -> None:
    """Instance domain 60.23: 256 fixed instances Type0 .. Type255, no labels."""
    indom = ALL_INDOMS[ns.ICMPMSG_INDOM]
    assert indom is ns.NetSnmp.netsnmp_icmpmsg_indom
    assert indom.instances == {n: f"Type{n}" for n in range(256)}
    assert indom.labels == {}


# -- /proc/net/snmp -----------------------------------------------------------------------


def test_snmp_columns_by_name() -> None:
    """Each value goes with the header column at its position; unknown columns are skipped."""
    values = snmp_values(SNMP)
    assert values["network.ip.forwarding"] == 1
    assert values["network.ip.defaultttl"] == 63
    assert values["network.ip.fragcreates"] == 13
    assert values["network.icmp.inmsgs"] == 40
    assert values["network.icmp.outmsgs"] == 22
    assert values["network.icmp.outechos"] == 5  # after the unknown OutRateLimitGlobal
    assert values["network.tcp.rtomax"] == 120000
    assert values["network.tcp.currestab"] == 3
    assert values["network.udp.indatagrams"] == 300
    assert values["network.udp.recvbuferrors"] == 0
    assert values["network.udplite.memerrors"] == 0


def test_snmp_missing_and_minus_one() -> None:
    """A column the kernel does not give, or a value of -1, has no value; not 0."""
    values = snmp_values(SNMP)
    assert "network.icmp.inerrors" not in values  # -1
    assert "network.icmp.intimeexcds" not in values  # no such column in the sample
    assert "network.udp.memerrors" not in values  # column of newer kernels
    assert values["network.icmp.incsumerrors"] == 0


def test_tcp_maxconn_always_has_a_value() -> None:
    """pmdalinux gives tcp.maxconn a value even when it holds the no-value mark."""
    assert snmp_values(SNMP)["network.tcp.maxconn"] == MAX
    no_tcp = b"Udp: InDatagrams\nUdp: 5\n"
    assert snmp_values(no_tcp)["network.tcp.maxconn"] == MAX
    assert "network.tcp.rtomin" not in snmp_values(no_tcp)
    assert ns.snmp_values(None, ns.SNMP_NAMES) == {"network.tcp.maxconn": MAX}
    tcp = b"Tcp: MaxConn RtoMin\nTcp: 4096 200\n"
    assert snmp_values(tcp)["network.tcp.maxconn"] == 4096


def test_icmpmsg_numbered_columns() -> None:
    """IcmpMsg's InTypeN/OutTypeN columns give instance N; N must be below 256; the
    number is read as sscanf's %u reads it; -1 is no value for that instance."""
    values = snmp_values(SNMP)
    assert values["network.icmpmsg.intype"] == {3: 17, 8: 21}
    assert values["network.icmpmsg.outtype"] == {0: 5, 11: 2}  # OutType3 is -1
    quiet = b"Ip: Forwarding\nIp: 2\n"
    assert snmp_values(quiet)["network.icmpmsg.intype"] == {}
    assert "network.icmpmsg.intype" not in ns.snmp_values(None, ns.SNMP_NAMES)
    # a number cut to 32 bits, as sscanf("%u") stores it in an unsigned int
    wraps = b"IcmpMsg: InType4294967299 InType-4294967293\nIcmpMsg: 6 7\n"
    assert snmp_values(wraps)["network.icmpmsg.intype"] == {3: 7}


def test_snmp_line_pairs_and_repeats() -> None:
    """Pairs of lines; the value line's tag picks the section; a column named twice keeps
    its last value; a section given twice merges; a lone last line is ignored."""
    data = (
        b"Ip: Forwarding InReceives InReceives\nIp: 1 5 6\n"
        b"Ip: DefaultTTL\nIp: 64\n"
        b"Xyz: Forwarding\nXyz: 9\n"
        b"Tcp: RtoMin\n"
    )
    values = snmp_values(data)
    assert values["network.ip.forwarding"] == 1
    assert values["network.ip.inreceives"] == 6
    assert values["network.ip.defaultttl"] == 64
    assert "network.tcp.rtomin" not in values


def test_snmp_column_limit() -> None:
    """Only a /proc/net/snmp header's first 64 columns are looked at, as in pmdalinux."""
    fillers = b" ".join(b"F%d" % n for n in range(63))
    data = b"Ip: " + fillers + b" Forwarding DefaultTTL\nIp: " + b"0 " * 63 + b"1 64\n"
    values = snmp_values(data)
    assert values["network.ip.forwarding"] == 1
    assert "network.ip.defaultttl" not in values


def test_snmp_wanted_only() -> None:
    """Only the names asked for are computed."""
    assert snmp_values(SNMP, "network.tcp.rtomin", "mem.util.free") == {"network.tcp.rtomin": 200}


# -- /proc/net/netstat --------------------------------------------------------------------


def test_netstat_columns() -> None:
    """TcpExt and IpExt columns, kernel names that differ from the metric's included."""
    values = netstat_values(NETSTAT)
    assert values["network.tcp.syncookiessent"] == 1
    assert values["network.tcp.timewaited"] == 250  # TW
    assert values["network.tcp.pawsactiverejected"] == 3  # PAWSActive
    assert values["network.tcp.tcptimeoutrehash"] == 5  # TcpTimeoutRehash
    assert values["network.tcp.tcpmemorypressureschrono"] == 77
    # two metrics of pmdalinux read TCPFastOpenActiveFail
    assert values["network.tcp.fastopenactivefail"] == 4
    assert values["network.tcp.tcpfastopenactivefail"] == 4
    assert values["network.ip.inoctets"] == 123456789012
    assert values["network.ip.noectpkts"] == 5000


def test_netstat_no_value_rules() -> None:
    """Missing columns, the -1 mark and a missing MPTcpExt section give no values."""
    values = netstat_values(NETSTAT)
    assert "network.tcp.hphits" not in values  # 2**64 - 1
    assert "network.tcp.prequeued" not in values  # gone from recent kernels
    assert "network.tcp.pawspassiverejected" not in values
    assert not any(name.startswith("network.mptcp.") for name in values)
    assert ns.netstat_values(None, ns.NETSTAT_NAMES) == {}


def test_netstat_mptcp() -> None:
    """MPTcpExt's columns, one of them named like a TcpExt one (RcvPruned)."""
    data = NETSTAT + b"MPTcpExt: MPCapableSYNRX RcvPruned AddAddrDrop\nMPTcpExt: 3 4 5\n"
    values = netstat_values(data)
    assert values["network.mptcp.mpcapablesynrx"] == 3
    assert values["network.mptcp.rcvpruned"] == 4
    assert values["network.mptcp.addaddrdrop"] == 5
    assert "network.tcp.rcvpruned" not in values


def test_netstat_column_limit() -> None:
    """Only a /proc/net/netstat header's first 256 columns are looked at."""
    fillers = b" ".join(b"F%d" % n for n in range(255))
    data = b"TcpExt: " + fillers + b" TW TWKilled\nTcpExt: " + b"0 " * 255 + b"8 9\n"
    values = netstat_values(data)
    assert values["network.tcp.timewaited"] == 8
    assert "network.tcp.timewaitkilled" not in values


# -- the agent on a fake /proc ------------------------------------------------------------


@pytest.fixture
def fake(tmp_path: Path, monkeypatch) -> Iterator[tuple[Linux, Path]]:
    """A linux agent reading a fake /proc tree (with net/snmp and net/netstat)."""
    monkeypatch.setenv("LINUX_STATSPATH", str(tmp_path))
    monkeypatch.delenv("PCP_VAR_DIR", raising=False)
    net = tmp_path / "proc" / "net"
    net.mkdir(parents=True)
    (net / "snmp").write_bytes(SNMP)
    (net / "netstat").write_bytes(NETSTAT)
    linux = Linux()
    yield linux, net
    linux.stop()


def fetch(agent: Linux, *names: str) -> dict[str, dict[int, Any] | int]:
    """{name: {inst: value}} for each of NAMES, or its error code."""
    result = agent.fetch([agent.pmns.lookup(name) for name in names])
    found: dict[str, dict[int, Any] | int] = {}
    for name, vs in zip(names, result.vsets, strict=True):
        found[name] = (
            vs.numval if vs.numval < 0 else dict(zip(vs.insts, vs.atoms(U64), strict=True))
        )
    return found


def test_agent_fetch(fake) -> None:
    """Values, instances and no-values through the agent's fetch."""
    agent, _ = fake
    got = fetch(
        agent,
        "network.tcp.maxconn",
        "network.tcp.rtomin",
        "network.icmp.inerrors",
        "network.icmpmsg.intype",
        "network.icmpmsg.outtype",
        "network.tcp.timewaited",
        "network.mptcp.addaddr",
        "network.ip.inoctets",
    )
    assert got == {
        "network.tcp.maxconn": {PM_IN_NULL: MAX},
        "network.tcp.rtomin": {PM_IN_NULL: 200},
        "network.icmp.inerrors": {},
        "network.icmpmsg.intype": {3: 17, 8: 21},
        "network.icmpmsg.outtype": {0: 5, 11: 2},
        "network.tcp.timewaited": {PM_IN_NULL: 250},
        "network.mptcp.addaddr": {},
        "network.ip.inoctets": {PM_IN_NULL: 123456789012},
    }


def test_agent_icmpmsg_instances(fake) -> None:
    """An instance request on 60.23 lists all 256 ICMP types."""
    agent, _ = fake
    reply = agent.handle(InstanceReqPDU(pmInDom_build(60, 23), PM_IN_NULL))
    assert dict(zip(reply.insts, reply.names, strict=True)) == {n: f"Type{n}" for n in range(256)}


def test_agent_reads_each_file_once(fake) -> None:
    """One read of each file per fetch, and only of the files whose clusters are asked."""
    agent, _ = fake
    reads: list[str] = []
    read = agent.proc.read

    def counting(path: str) -> bytes | None:
        reads.append(path)
        return read(path)

    agent.proc.read = counting  # type: ignore[method-assign]
    fetch(agent, *(m.name for m in ns.METRICS))
    assert sorted(reads) == ["/proc/net/netstat", "/proc/net/snmp"]
    reads.clear()
    fetch(agent, "network.tcp.rtomin", "network.udp.noports")
    assert reads == ["/proc/net/snmp"]


def test_agent_files_change_between_fetches(fake) -> None:
    """Each fetch reads afresh: a column gone since the last fetch has no value."""
    agent, net = fake
    assert fetch(agent, "network.tcp.hphits", "network.tcp.timewaited") == {
        "network.tcp.hphits": {},
        "network.tcp.timewaited": {PM_IN_NULL: 250},
    }
    (net / "netstat").write_bytes(b"TcpExt: TCPHPHits\nTcpExt: 12\n")
    assert fetch(agent, "network.tcp.hphits", "network.tcp.timewaited") == {
        "network.tcp.hphits": {PM_IN_NULL: 12},
        "network.tcp.timewaited": {},
    }


def test_agent_missing_files(fake) -> None:
    """Without the files every metric exists with no value (tcp.maxconn excepted), and the
    fetch succeeds."""
    agent, net = fake
    (net / "snmp").unlink()
    (net / "netstat").unlink()
    names = [m.name for m in ns.METRICS]
    got = fetch(agent, *names)
    assert {n for n, v in got.items() if v} == {"network.tcp.maxconn"}
    assert got["network.tcp.maxconn"] == {PM_IN_NULL: MAX}


# -- the quick paths give what the careful ones give --------------------------------------


def test_plain_and_odd_lines_read_alike() -> None:
    """A line of plain digits (converted when asked for) and one strtoull must read (a
    "-1", a tab inside a word, a sign) give each column what pmdalinux stores."""
    plain = netstat_values(b"TcpExt: SyncookiesSent TW PAWSActive\nTcpExt: 1 250 3\n")
    odd = netstat_values(b"TcpExt: SyncookiesSent TW PAWSActive\nTcpExt: 1\t9 +250 3x\n")
    assert plain == {
        "network.tcp.syncookiessent": 1,
        "network.tcp.timewaited": 250,
        "network.tcp.pawsactiverejected": 3,
    }
    assert odd == plain  # strtok splits at spaces only; strtoull stops at the first junk
    short = netstat_values(b"TcpExt: SyncookiesSent TW PAWSActive\nTcpExt: 1 -1\n")
    assert short == {"network.tcp.syncookiessent": 1}  # -1: no value; no third value


def test_columns_moving_between_reads() -> None:
    """The columns are found again when a section's header changes from one read to the
    next (a kernel update under a running agent), and when other names are asked."""
    first = netstat_values(b"TcpExt: TW SyncookiesSent\nTcpExt: 5 6\n")
    second = netstat_values(b"TcpExt: SyncookiesSent X TW\nTcpExt: 7 8 9\n")
    assert first == {"network.tcp.timewaited": 5, "network.tcp.syncookiessent": 6}
    assert second == {"network.tcp.timewaited": 9, "network.tcp.syncookiessent": 7}
    one = netstat_values(b"TcpExt: SyncookiesSent X TW\nTcpExt: 7 8 9\n", "network.tcp.timewaited")
    assert one == {"network.tcp.timewaited": 9}
    none = netstat_values(b"TcpExt: X\nTcpExt: 1\n", "network.tcp.timewaited")
    assert none == {}
