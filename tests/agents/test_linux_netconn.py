"""The linux agent's socket-count and interface-address family (network.tcpconn*, udpconn*,
rawconn*, unix, network.interface.{wireless,type,virtual,inet_addr,ipv6_addr,ipv6_scope,
hw_addr}): its table, the parsers on samples of our own, pmdalinux's rules (0 for a
missing socket table, the last IPv6 address winning, instance order, the sysfs pass
stopping at the first interface without a speed file) and the agent on a fake tree.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from purepcp.agents.linux import Linux, catalog
from purepcp.agents.linux import netconn as nc
from purepcp.agents.linux.records import COUNT, DISCRETE, INSTANT, NONE, STRING, U32
from purepcp.pmapi.ids import PM_IN_NULL
from tests.support.linux_fetch import fetch, instances

# Samples written for these tests (made-up sockets; the kernel's layout).
TCP = (
    b"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid\n"
    b"   0: 0100007F:0277 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0\n"
    b"   1: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0\n"
    b"   2: 0100007F:0277 0100007F:A1B2 01 00000000:00000000 00:00000000 00000000  1000\n"
    b"   3: 0100007F:A1B2 0100007F:0277 06 00000000:00000000 03:00000F2C 00000000     0\n"
    b"   4: 0100007F:A1B3 0100007F:0277 08 00000000:00000000 00:00000000 00000000  1000\n"
    b"   5: 0100007F:A1B4 0100007F:0277 0C 00000000:00000000 00:00000000 00000000  1000\n"
)
UDP = (
    b"   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid\n"
    b"  10: 00000000:0044 00000000:0000 07 00000000:00000000 00:00000000 00000000     0\n"
    b"  11: 3500007F:0035 00000000:0000 07 00000000:00000000 00:00000000 00000000   101\n"
    b"  12: 0200000A:9C40 0800080A:0035 01 00000000:00000000 00:00000000 00000000  1000\n"
)
RAW = (
    b"   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid\n"
    b"   1: 00000000:0001 00000000:0000 07 00000000:00000000 00:00000000 00000000     0\n"
    b"   2: 00000000:003A 00000000:0000 07 00000000:00000000 00:00000000 00000000     0\n"
)
UNIX = (
    b"Num       RefCount Protocol Flags    Type St Inode Path\n"
    b"0000000000000000: 00000002 00000000 00010000 0001 01 20001 /run/a.sock\n"
    b"0000000000000000: 00000003 00000000 00000000 0001 03 20002 /run/a.sock\n"
    b"0000000000000000: 00000003 00000000 00000000 0001 03 20003\n"
    b"0000000000000000: 00000002 00000000 00000000 0001 02 20004\n"
    b"0000000000000000: 00000002 00000000 00000000 0002 01 20005 /dev/log\n"
    b"0000000000000000: 00000002 00000000 00000000 0002 03 20006\n"
    b"0000000000000000: 00000002 00000000 00000000 0005 03 20007\n"
)
IF_INET6 = (
    b"00000000000000000000000000000001 01 80 10 80       lo\n"
    b"fe800000000000000202b3fffe1e8329 02 40 20 80     eth0\n"
    b"20010db8000000000000000000000042 02 40 00 00     eth0\n"
    b"fec00000000000000000000000000007 03 30 40 80    wlan0\n"
    b"20010db8000000000000000000000043 03 7f 0e 80    wlan0\n"
)
NET_DEV = (
    b"Inter-|   Receive                                                |  Transmit\n"
    b" face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets\n"
    + b"".join(
        name.rjust(6) + b": " + b" ".join(b"0" for _ in range(16)) + b"\n"
        for name in (b"lo", b"eth0", b"wlan0", b"br0")
    )
)


# --- the table --------------------------------------------------------------------------


def test_metrics_table() -> None:
    """39 metrics with pmdalinux's clusters, items, types and semantics."""
    by_name = {m.name: m for m in nc.METRICS}
    assert len(by_name) == len(nc.METRICS) == 39
    counts = [m for m in nc.METRICS if m.cluster not in (3, 33)]
    assert all((m.type, m.sem, m.units, m.indom) == (U32, INSTANT, COUNT, None) for m in counts)
    assert {m.cluster for m in counts} == {19, 76, 77, 78, 79, 80, 81}
    assert (
        by_name["network.tcpconn.established"].item,
        by_name["network.tcpconn.closing"].item,
    ) == (
        1,
        11,
    )
    assert by_name["network.unix.stream.count"].item == 4
    for suffix, item in (("wireless", 28), ("type", 29), ("virtual", 30)):
        m = by_name[f"network.interface.{suffix}"]
        assert (m.cluster, m.item, m.type, m.indom, m.sem, m.units) == (
            3,
            item,
            U32,
            3,
            DISCRETE,
            NONE,
        )
    for suffix, item in (("inet_addr", 0), ("ipv6_addr", 1), ("ipv6_scope", 2), ("hw_addr", 3)):
        m = by_name[f"network.interface.{suffix}"]
        assert (m.cluster, m.item, m.type, m.indom, m.sem) == (33, item, STRING, 17, DISCRETE)
    assert set(by_name) <= set(catalog.BY_NAME)


# --- the parsers --------------------------------------------------------------------------


def test_count_tcp_by_state() -> None:
    """The state column is hex; the header and states beyond CLOSING are not counted."""
    counts = nc.count_tcp(TCP)
    assert counts[10] == 2  # LISTEN (0A)
    assert counts[1] == counts[6] == counts[8] == 1
    assert sum(counts) == 5  # state 0C (a kernel-internal state) is left out
    values = nc.table_values("network.tcpconn.", "tcp", TCP)
    assert values["network.tcpconn.listen"] == 2
    assert values["network.tcpconn.time_wait"] == 1
    assert values["network.tcpconn.syn_sent"] == 0
    assert len(values) == 11


def test_unterminated_last_line_is_dropped() -> None:
    """As pmdalinux's buffered loop, a last line without a newline is not counted."""
    cut = TCP.rsplit(b"\n", 2)[0]  # ends with the CLOSE_WAIT line, without its newline
    assert nc.count_tcp(cut)[8] == 0
    assert sum(nc.count_tcp(cut)) == 4


def test_count_udp_raw_unix() -> None:
    """UDP by state 1 and 7, raw by lines, unix by type and state (sequenced packets left out)."""
    assert nc.count_udp(UDP) == (1, 2)
    assert nc.count_raw(RAW) == 2
    assert nc.count_raw(RAW.rstrip(b"\n")) == 2  # fgets counts a last partial line
    assert nc.count_raw(b"") == 0
    assert nc.count_unix(UNIX) == (2, 2, 1, 4)
    values = nc.table_values("network.unix.", "unix", UNIX)
    assert values == {
        "network.unix.datagram.count": 2,
        "network.unix.stream.established": 2,
        "network.unix.stream.listen": 1,
        "network.unix.stream.count": 4,
    }


def test_missing_table_counts_nothing() -> None:
    """A socket table the kernel lacks gives 0 for each count, as pmdalinux reports."""
    tcp6 = nc.table_values("network.tcpconn6.", "tcp", None)
    assert len(tcp6) == 11 and set(tcp6.values()) == {0}
    assert nc.table_values("network.udpconn6.", "udp", None) == {
        "network.udpconn6.established": 0,
        "network.udpconn6.listen": 0,
    }


def test_if_inet6_last_address_wins() -> None:
    """Address text as inet_ntop writes it, /prefix in decimal, scope names; last line wins."""
    found = nc.parse_if_inet6(IF_INET6)
    assert found["lo"] == ("::1/128", "Host")
    assert found["eth0"] == ("2001:db8::42/64", "Global")
    assert found["wlan0"] == ("2001:db8::43/127", "Unknown")
    assert nc.parse_if_inet6(IF_INET6.split(b"\n", 3)[1] + b"\n") == {
        "eth0": ("fe80::202:b3ff:fe1e:8329/64", "Link")
    }
    assert nc.parse_if_inet6(b"garbage line\n") == {}


def test_first_word() -> None:
    """sysfs values as fscanf %63s reads them (a number of them then as atoi reads it)."""
    assert nc.first_word(b"02:fc:00:00:00:01\n") == "02:fc:00:00:00:01"
    assert nc.first_word(b"\n") is None
    assert nc.first_word(None) is None
    assert nc.first_word(b"x" * 100) == "x" * 63


def test_ipv4_addresses_on_this_host() -> None:
    """SIOCGIFCONF lists the loopback's address here (every Linux host has one)."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        found = nc.ipv4_addresses(sock.fileno())
    if "lo" not in found:
        pytest.skip("no IPv4 loopback address in this network namespace")
    assert found["lo"].startswith("127.")


# --- the agent on a fake tree ---------------------------------------------------------------


class Tree:
    """A fake /proc and /sys under a temporary directory."""

    def __init__(self, root: Path) -> None:
        """The socket tables, /proc/net/dev, if_inet6, and sysfs for lo, eth0, wlan0, br0."""
        self.root = root
        self.write(
            "proc/net/tcp",
            TCP,
            "proc/net/udp",
            UDP,
            "proc/net/raw",
            RAW,
            "proc/net/unix",
            UNIX,
            "proc/net/dev",
            NET_DEV,
            "proc/net/if_inet6",
            IF_INET6,
        )
        for name, kind, address, speed in (
            ("lo", b"772", b"00:00:00:00:00:00", None),
            ("eth0", b"1", b"52:54:00:12:34:56", b"1000"),
            ("wlan0", b"1", b"a0:b1:c2:d3:e4:f5", b"-1"),
            ("br0", b"1", b"", b"-1"),
        ):
            base = f"sys/class/net/{name}/"
            self.write(base + "type", kind + b"\n", base + "address", address + b"\n")
            if speed is not None:
                self.write(base + "speed", speed + b"\n")
        (root / "sys/class/net/wlan0/wireless").mkdir()
        for name in ("lo", "br0"):
            (root / "sys/devices/virtual/net" / name).mkdir(parents=True)
        (root / "sys/class/net/bonding_masters").write_bytes(b"\n")

    def write(self, *pairs: Any) -> None:
        """Write each (path, bytes) pair under the root."""
        for path, data in zip(pairs[::2], pairs[1::2], strict=True):
            (self.root / path).parent.mkdir(parents=True, exist_ok=True)
            (self.root / path).write_bytes(data)


@pytest.fixture
def tree(tmp_path: Path, monkeypatch) -> Iterator[tuple[Linux, Tree]]:
    """An agent on the fake tree; the kernel's answers to SIOCGIFCONF and ethtool faked."""
    monkeypatch.setenv("LINUX_STATSPATH", str(tmp_path))
    monkeypatch.delenv("PCP_VAR_DIR", raising=False)
    monkeypatch.setattr(nc, "ipv4_addresses", lambda fd: {"lo": "127.0.0.1", "eth0:1": "10.1.2.3"})
    kinds = {"eth0": "ethtool", "wlan0": "wireless"}
    monkeypatch.setattr(nc, "link_kind", lambda fd, name: kinds.get(name))
    fake = Tree(tmp_path)
    agent = Linux()
    yield agent, fake
    agent.stop()


def test_socket_counts_from_the_tree(tree) -> None:
    """Each table's counts; tcp6, udp6 and raw6 are missing here, so they count 0."""
    agent, _ = tree
    names = [m.name for m in nc.METRICS if m.cluster not in (3, 33)]
    values = {name: v[PM_IN_NULL] for name, v in fetch(agent, *names).items()}
    assert values["network.tcpconn.listen"] == 2
    assert values["network.tcpconn.established"] == 1
    assert values["network.udpconn.listen"] == 2
    assert values["network.rawconn.count"] == 2
    assert values["network.unix.stream.count"] == 4
    assert values["network.tcpconn6.listen"] == 0
    assert values["network.udpconn6.established"] == 0
    assert values["network.rawconn6.count"] == 0


def test_address_instances_and_values(tree) -> None:
    """Instances are numbered sysfs first, then IPv4 labels, then IPv6 names; values per source."""
    agent, _ = tree
    names = instances(agent, 17)
    sysfs = sorted(names[i] for i in range(5))
    assert sysfs == ["bonding_masters", "br0", "eth0", "lo", "wlan0"]
    assert names[5] == "eth0:1"
    assert len(names) == 6
    ids = {name: inst for inst, name in names.items()}
    values = fetch(agent, *(f"network.interface.{s}" for s, _ in nc.ADDR_ROWS))
    assert values["network.interface.inet_addr"] == {
        ids["lo"]: "127.0.0.1",
        ids["eth0:1"]: "10.1.2.3",
    }
    assert values["network.interface.ipv6_addr"] == {
        ids["lo"]: "::1/128",
        ids["eth0"]: "2001:db8::42/64",
        ids["wlan0"]: "2001:db8::43/127",
    }
    assert values["network.interface.ipv6_scope"][ids["eth0"]] == "Global"
    hw = values["network.interface.hw_addr"]
    assert hw[ids["eth0"]] == "52:54:00:12:34:56"
    assert ids["br0"] not in hw and ids["bonding_masters"] not in hw  # empty, unreadable


def test_address_ids_follow_the_first_fetch(tree) -> None:
    """A first fetch of the IPv6 addresses alone numbers if_inet6's interfaces first."""
    agent, _ = tree
    values = fetch(agent, "network.interface.ipv6_addr")
    assert instances(agent, 17)[0] == "lo"
    assert values["network.interface.ipv6_addr"] == {
        0: "::1/128",
        1: "2001:db8::42/64",
        2: "2001:db8::43/127",
    }


def test_wireless_type_virtual(tree) -> None:
    """sysfs, then ethtool (type 1) or the wireless ioctl (type 0, wireless 1) override."""
    agent, _ = tree
    ids = {name: inst for inst, name in instances(agent, 3).items()}
    names = ("network.interface.wireless", "network.interface.type", "network.interface.virtual")
    values = fetch(agent, *names)
    by_name = {n: {name: values[n][i] for name, i in ids.items()} for n in names}
    assert by_name["network.interface.type"] == {"lo": 772, "eth0": 1, "wlan0": 0, "br0": 1}
    assert by_name["network.interface.wireless"] == {"lo": 0, "eth0": 0, "wlan0": 1, "br0": 0}
    assert by_name["network.interface.virtual"] == {"lo": 1, "eth0": 0, "wlan0": 0, "br0": 1}
    only = fetch(agent, "network.interface.virtual")["network.interface.virtual"]
    assert only == values["network.interface.virtual"]


def test_speed_in_the_same_fetch_stops_the_sysfs_pass(tree) -> None:
    """lo has no speed file: with the speed asked, no interface gets its sysfs values."""
    agent, _ = tree
    ids = {name: inst for inst, name in instances(agent, 3).items()}
    names = ("network.interface.type", "network.interface.virtual", "network.interface.speed")
    values = fetch(agent, *names)
    kind = {name: values["network.interface.type"][i] for name, i in ids.items()}
    assert kind == {"lo": 0, "eth0": 1, "wlan0": 0, "br0": 0}
    assert set(values["network.interface.virtual"].values()) == {0}
