"""network.{tcpconn,tcpconn6,udpconn,udpconn6,rawconn,rawconn6,unix}.* and interface addresses.

Socket counts come from the kernel's socket tables, as pmdalinux's proc_net_tcp.c,
proc_net_udp.c, proc_net_raw.c and proc_net_unix.c count them: TCP sockets by
the state column of /proc/net/tcp and tcp6, UDP sockets in state 1 or 7 of
/proc/net/udp and udp6, every line but the header of /proc/net/raw and raw6, and
unix sockets by type and state in /proc/net/unix.  A table the kernel lacks (no
IPv6, say) counts nothing, so its metrics are 0, as pmdalinux reports them.

The interface addresses (cluster 33, instance domain 17) are read where
pmdalinux reads them, in its order: the `address` file of each entry of
/sys/class/net, the IPv4 address of each name SIOCGIFCONF lists, and
/proc/net/if_inet6 (the last line of an interface wins).  An instance request
takes all three; a fetch takes only those of the metrics it asks for.
network.interface.{wireless,type,virtual} (cluster 3) follow pmdalinux's sysfs
pass then its ioctl pass, including the way one fetch's other interface metrics
change them (see `NetConn._netconn_refresh_link`).
"""

from __future__ import annotations

import fcntl
import functools
import os
import socket
import struct
from array import array
from typing import Any

from purepcp.pmapi.cnumbers import atoi, scan_hex
from purepcp.pmda import InDom, refresh

from .base import LinuxBase
from .instids import InstanceIds
from .records import COUNT, DISCRETE, INSTANT, NONE, STRING, U32, MetricInfo

#: pmdalinux's serials: the interfaces (Core's) and their addresses.
NET_DEV_INDOM = 3
NET_ADDR_INDOM = 17

#: TCP states in the kernel's numbering (include/net/tcp_states.h), from 1.
TCP_STATES = (
    "established",
    "syn_sent",
    "syn_recv",
    "fin_wait1",
    "fin_wait2",
    "time_wait",
    "close",
    "close_wait",
    "last_ack",
    "listen",
    "closing",
)

#: Socket tables: (metric prefix, cluster, /proc file, what is counted).
TABLES: tuple[tuple[str, int, str, str], ...] = (
    ("network.tcpconn.", 19, "/proc/net/tcp", "tcp"),
    ("network.tcpconn6.", 76, "/proc/net/tcp6", "tcp"),
    ("network.rawconn.", 77, "/proc/net/raw", "raw"),
    ("network.rawconn6.", 78, "/proc/net/raw6", "raw"),
    ("network.udpconn.", 79, "/proc/net/udp", "udp"),
    ("network.udpconn6.", 80, "/proc/net/udp6", "udp"),
    ("network.unix.", 81, "/proc/net/unix", "unix"),
)

#: The counts of each kind of table: (name suffix, item).
COUNTS: dict[str, tuple[tuple[str, int], ...]] = {
    "tcp": tuple((state, n) for n, state in enumerate(TCP_STATES, 1)),
    "raw": (("count", 1),),
    "udp": (("established", 1), ("listen", 2)),
    "unix": (
        ("datagram.count", 1),
        ("stream.established", 2),
        ("stream.listen", 3),
        ("stream.count", 4),
    ),
}

#: network.interface.* of cluster 3 this family serves: (suffix, item).
LINK_ROWS = (("wireless", 28), ("type", 29), ("virtual", 30))

#: network.interface.* of cluster 33: (suffix, item), all strings per NET_ADDR_INDOM.
ADDR_ROWS = (("inet_addr", 0), ("ipv6_addr", 1), ("ipv6_scope", 2), ("hw_addr", 3))

METRICS: tuple[MetricInfo, ...] = (
    *(
        MetricInfo(
            prefix + suffix,
            cluster,
            item,
            U32,
            None,
            INSTANT,
            COUNT,
            source=f"{path}: {kind} sockets ({suffix}); 0 if the file is missing",
        )
        for prefix, cluster, path, kind in TABLES
        for suffix, item in COUNTS[kind]
    ),
    *(
        MetricInfo(
            f"network.interface.{suffix}",
            3,
            item,
            U32,
            NET_DEV_INDOM,
            DISCRETE,
            NONE,
            source="/sys/class/net/IF, then the ethtool and wireless ioctls, as pmdalinux",
        )
        for suffix, item in LINK_ROWS
    ),
    *(
        MetricInfo(
            f"network.interface.{suffix}",
            33,
            item,
            STRING,
            NET_ADDR_INDOM,
            DISCRETE,
            NONE,
            source="SIOCGIFCONF (inet), /proc/net/if_inet6 (ipv6), /sys/class/net/IF/address",
        )
        for suffix, item in ADDR_ROWS
    ),
)

_U32 = 0xFFFFFFFF

# --- the socket tables (sans-IO) ---------------------------------------------------------


def _lines(data: bytes) -> list[bytes]:
    """The newline-terminated lines of DATA (pmdalinux's loop drops an unterminated tail)."""
    return data.split(b"\n")[:-1]


def _column(line: bytes, index: int) -> int | None:
    """Column INDEX (from 0) of LINE read as sscanf's %x, or None if absent or not hex."""
    words = line.split(None, index + 1)
    return scan_hex(words[index]) if len(words) > index else None


def count_tcp(data: bytes) -> list[int]:
    """Sockets by TCP state (index 1..11) of /proc/net/tcp or tcp6: column 4 read as hex."""
    counts = [0] * (len(TCP_STATES) + 1)
    for line in _lines(data):
        state = _column(line, 3)
        if state is not None and state < len(counts):
            counts[state] += 1
    return counts


def count_udp(data: bytes) -> tuple[int, int]:
    """(established, listen) of /proc/net/udp or udp6: sockets in state 1 and in state 7."""
    established = listen = 0
    for line in _lines(data):
        state = _column(line, 3)
        if state == 0x07:
            listen += 1
        elif state == 0x01:
            established += 1
    return established, listen


def count_raw(data: bytes) -> int:
    """The lines of /proc/net/raw or raw6 after the header (as fgets counts them)."""
    lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    return max(lines - 1, 0)


def count_unix(data: bytes) -> tuple[int, int, int, int]:
    """(datagram, stream established, stream listening, stream) sockets of /proc/net/unix.

    The fifth column is the type (1 stream, 2 datagram), the sixth the state (1
    listening, 3 connected); a line without both in hex (the header) is skipped.
    """
    datagram = established = listening = stream = 0
    for line in _lines(data):
        words = line.split(None, 6)
        if len(words) < 6:
            continue
        kind, state = scan_hex(words[4]), scan_hex(words[5])
        if kind is None or state is None:
            continue
        if kind == 0x0002:
            datagram += 1
        elif kind == 0x0001:
            if state == 0x01:
                listening += 1
            elif state == 0x03:
                established += 1
            stream += 1
    return datagram, established, listening, stream


def table_values(prefix: str, kind: str, data: bytes | None) -> dict[str, int]:
    """The metrics of one socket table from its file's DATA (all 0 when it is missing)."""
    data = data or b""
    if kind == "tcp":
        counts = count_tcp(data)
        return {prefix + state: counts[n] for n, state in enumerate(TCP_STATES, 1)}
    if kind == "udp":
        established, listen = count_udp(data)
        return {prefix + "established": established, prefix + "listen": listen}
    if kind == "raw":
        return {prefix + "count": count_raw(data)}
    names = (suffix for suffix, _ in COUNTS["unix"])
    return {prefix + name: n & _U32 for name, n in zip(names, count_unix(data), strict=True)}


# --- interface addresses (sans-IO parts) ---------------------------------------------------

#: pmdalinux's names of the kernel's IPv6 address scopes (IPV6_ADDR_* in proc_net_dev.h).
IPV6_SCOPES = {0x0000: "Global", 0x0020: "Link", 0x0040: "Site", 0x0080: "Compat", 0x0010: "Host"}


def parse_if_inet6(data: bytes) -> dict[str, tuple[str, str]]:
    """{interface: (address/prefix, scope name)} from /proc/net/if_inet6, the last line winning.

    A line is the address as 32 hex digits, then the interface index, prefix
    length, scope and flags in hex, then the interface name.
    """
    found: dict[str, tuple[str, str]] = {}
    for line in data.splitlines():
        words = line.split()
        if len(words) < 6 or len(words[0]) != 32:
            continue
        try:
            address = socket.inet_ntop(socket.AF_INET6, bytes.fromhex(words[0].decode()))
            plen, scope = int(words[2], 16), int(words[3], 16)
        except (ValueError, UnicodeDecodeError):
            continue
        name = words[5][:20].decode(errors="replace")
        found[name] = (f"{address}/{plen}", IPV6_SCOPES.get(scope & 0xFFFF, "Unknown"))
    return found


@functools.lru_cache(maxsize=1)
def _if_inet6(data: bytes) -> dict[str, tuple[str, str]]:
    """`parse_if_inet6`, kept for the last file read (addresses seldom change); read only."""
    return parse_if_inet6(data)


def first_word(data: bytes | None, limit: int = 63) -> str | None:
    """The first word of a sysfs file (at most LIMIT bytes, as fscanf %63s), None if none."""
    words = (data or b"").split(None, 1)
    return words[0][:limit].decode(errors="replace") if words else None


# --- the ioctls pmdalinux makes ----------------------------------------------------------

SIOCGIFCONF = 0x8912
SIOCETHTOOL = 0x8946
SIOCGIWRATE = 0x8B21
ETHTOOL_GSET = 1
_IFREQ_SIZE = 40  # struct ifreq on 64-bit Linux
_IFCONF = struct.Struct("iP")  # struct ifconf: the length, then the buffer's address
_IFREQ_PTR = struct.Struct("16sP16x")
_IFREQ_INT = struct.Struct("16si20x")
_ETHTOOL_CMD = struct.pack("=I", ETHTOOL_GSET) + bytes(40)  # struct ethtool_cmd, 44 bytes


def ipv4_addresses(fd: int) -> dict[str, str]:
    """{label: IPv4 address} of SIOCGIFCONF, in its order, each label's first address.

    pmdalinux asks SIOCGIFADDR for each label SIOCGIFCONF lists, which answers the
    label's first address in the same kernel list, so the first one listed is kept.
    """
    count = 30
    while True:
        buf = array("B", bytes(_IFREQ_SIZE * count))
        try:
            reply = fcntl.ioctl(fd, SIOCGIFCONF, _IFCONF.pack(len(buf), buf.buffer_info()[0]))
        except OSError:
            return {}
        length = _IFCONF.unpack(reply)[0]
        if length < len(buf):
            break
        count *= 2  # as pmdalinux: a full buffer may have overflowed
    raw = buf.tobytes()
    found: dict[str, str] = {}
    for at in range(0, length - _IFREQ_SIZE + 1, _IFREQ_SIZE):
        name = raw[at : at + 16].split(b"\0", 1)[0].decode(errors="replace")
        if name not in found:
            found[name] = socket.inet_ntoa(raw[at + 20 : at + 24])
    return found


def link_kind(fd: int, interface: str) -> str | None:
    """ "ethtool" if ETHTOOL_GSET answers for INTERFACE, else "wireless" if SIOCGIWRATE does."""
    name = interface.encode()[:15]
    ecmd = array("B", _ETHTOOL_CMD)
    try:
        fcntl.ioctl(fd, SIOCETHTOOL, _IFREQ_PTR.pack(name, ecmd.buffer_info()[0]))
        return "ethtool"
    except OSError:
        pass
    try:
        fcntl.ioctl(fd, SIOCGIWRATE, _IFREQ_INT.pack(name, 0))
        return "wireless"
    except OSError:
        return None


_LINK_NAMES = frozenset(f"network.interface.{suffix}" for suffix, _ in LINK_ROWS)
_ADDR_NAMES = frozenset(f"network.interface.{suffix}" for suffix, _ in ADDR_ROWS)
_IPV6_NAMES = frozenset({"network.interface.ipv6_addr", "network.interface.ipv6_scope"})
_TABLE_NAMES = {
    cluster: frozenset(prefix + suffix for suffix, _ in COUNTS[kind])
    for prefix, cluster, _, kind in TABLES
}

#: Values by source ("hw", "inet", "ipv6", "scope"): {interface name or inst: value}.
Addresses = dict[str, dict[Any, str]]


class NetConn(LinuxBase):
    """Socket counts, interface addresses, and the wireless/type/virtual interface metrics."""

    netconn_addr_indom = InDom(
        NET_ADDR_INDOM, labels={"device_type": "interface", "indom_name": "per interface"}
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Interface address instances numbered as first seen (pmdalinux never reloads them)."""
        super().__init__(*args, **kwargs)
        self._netconn_addr_ids = InstanceIds()

    # -- socket tables -------------------------------------------------------------------

    def _netconn_table(self, cluster: int) -> dict[str, int]:
        """The metrics of the socket table of CLUSTER, from one read of its file."""
        for prefix, number, path, kind in TABLES:
            if number == cluster:
                return table_values(prefix, kind, self.proc.read(path))
        return {}

    @refresh(19)
    def _netconn_refresh_tcp(self) -> dict[str, int]:
        """Cluster 19: IPv4 TCP sockets by state."""
        return self._netconn_table(19)

    @refresh(76)
    def _netconn_refresh_tcp6(self) -> dict[str, int]:
        """Cluster 76: IPv6 TCP sockets by state."""
        return self._netconn_table(76)

    @refresh(77)
    def _netconn_refresh_raw(self) -> dict[str, int]:
        """Cluster 77: IPv4 raw sockets."""
        return self._netconn_table(77)

    @refresh(78)
    def _netconn_refresh_raw6(self) -> dict[str, int]:
        """Cluster 78: IPv6 raw sockets."""
        return self._netconn_table(78)

    @refresh(79)
    def _netconn_refresh_udp(self) -> dict[str, int]:
        """Cluster 79: IPv4 UDP sockets."""
        return self._netconn_table(79)

    @refresh(80)
    def _netconn_refresh_udp6(self) -> dict[str, int]:
        """Cluster 80: IPv6 UDP sockets."""
        return self._netconn_table(80)

    @refresh(81)
    def _netconn_refresh_unix(self) -> dict[str, int]:
        """Cluster 81: unix domain sockets."""
        return self._netconn_table(81)

    # -- interface addresses ---------------------------------------------------------------

    def _netconn_addresses(self) -> tuple[dict[int, str], Addresses]:
        """The address instances and values, read once per fetch (see `_netconn_read_addrs`)."""
        return self._once("netconn_addrs", self._netconn_read_addrs)

    def _netconn_read_addrs(self) -> tuple[dict[int, str], Addresses]:
        """({inst: name}, values by source) from the sources of the address metrics wanted.

        The order is pmdalinux's (sysfs, SIOCGIFCONF, if_inet6), which numbers
        new instances; an instance request wants every source.
        """
        wanted = self._wanted
        names: list[str] = []
        found: Addresses = {"hw": {}, "inet": {}, "ipv6": {}, "scope": {}}
        if "network.interface.hw_addr" in wanted:
            try:
                entries = os.listdir(self.proc.root + "/sys/class/net")
            except OSError:
                entries = []
            for name in entries:
                if name.startswith("."):
                    continue
                names.append(name)
                address = first_word(self.proc.read_unkept(f"/sys/class/net/{name}/address"))
                if address is not None:
                    found["hw"][name] = address
        if "network.interface.inet_addr" in wanted:
            found["inet"] = ipv4_addresses(self.net.fileno())
            names.extend(found["inet"])
        if not wanted.isdisjoint(_IPV6_NAMES):
            data = self.proc.read("/proc/net/if_inet6")
            for name, (address, scope) in _if_inet6(data or b"").items():
                names.append(name)
                found["ipv6"][name], found["scope"][name] = address, scope
        ids = self._netconn_addr_ids
        instances = {ids(name): name for name in names}
        return instances, {
            source: {ids(name): value for name, value in values.items()}
            for source, values in found.items()
        }

    @netconn_addr_indom.refresh
    def _netconn_addr_instances(self) -> dict[int, str] | None:
        """The interfaces with an address source: sysfs entries, IPv4 labels, IPv6 names."""
        instances, _ = self._netconn_addresses()
        return self._current(self.netconn_addr_indom, instances)

    @refresh(33)
    def _netconn_refresh_addrs(self) -> dict[str, Any]:
        """Cluster 33: each interface's IPv4, IPv6 (with its scope) and hardware address."""
        if self._wanted.isdisjoint(_ADDR_NAMES):
            return {}
        _, found = self._netconn_addresses()
        return {
            "network.interface.inet_addr": found["inet"],
            "network.interface.ipv6_addr": found["ipv6"],
            "network.interface.ipv6_scope": found["scope"],
            "network.interface.hw_addr": found["hw"],
        }

    # -- wireless, type, virtual -----------------------------------------------------------

    @refresh(3)
    def _netconn_refresh_link(self) -> dict[str, Any]:
        """Cluster 3, items 28-30: pmdalinux's sysfs pass, then its ioctl pass.

        The sysfs pass walks the interfaces in instance order and reads, for the
        metrics this fetch asks for, speed, mtu, flags, duplex, wireless, type and
        virtual; the first file missing (the speed of lo, for one) stops the pass
        for that interface and every later one.  The ioctl pass, run whenever the
        type, wireless, speed, baudrate or duplex is asked for, then sets type 1
        and wireless 0 where ethtool answers, or type 0 and wireless 1 where the
        wireless rate ioctl does.  Anything not set is 0.
        """
        wanted = self._wanted
        if wanted.isdisjoint(_LINK_NAMES):
            return {}
        want = {
            step: not wanted.isdisjoint(f"network.interface.{m}" for m in metrics)
            for step, metrics in _SYSFS_STEPS.items()
        }
        interfaces = sorted((inst, name) for inst, name, _ in self._netdev())
        kind = {inst: {"wireless": 0, "type": 0, "virtual": 0} for inst, _ in interfaces}
        for inst, name in interfaces:
            if not self._netconn_sysfs(name, want, kind[inst]):
                break
        if want["type"] or want["wireless"] or want["speed"] or want["duplex"]:
            fd = self.net.fileno()
            for inst, name in interfaces:
                found = link_kind(fd, name)
                if found == "ethtool":
                    kind[inst].update(type=1, wireless=0)
                elif found == "wireless":
                    kind[inst].update(type=0, wireless=1)
        return {
            f"network.interface.{suffix}": {inst: k[suffix] & _U32 for inst, k in kind.items()}
            for suffix, _ in LINK_ROWS
        }

    def _netconn_sysfs(self, name: str, want: dict[str, bool], kind: dict[str, int]) -> bool:
        """One interface's sysfs step into KIND; False where pmdalinux gives up on sysfs."""
        base = f"/sys/class/net/{name}/"
        read = self.proc.read_unkept
        for wanted, field in (
            (want["speed"], "speed"),
            (want["mtu"], "mtu"),
            (want["up"], "flags"),
        ):
            if wanted and first_word(read(base + field)) is None:
                return False
        root = self.proc.root
        duplex_lost = want["duplex"] and first_word(read(base + "duplex")) is None
        if duplex_lost and not os.path.exists(root + base):
            return False
        if want["wireless"]:
            kind["wireless"] = int(os.path.exists(root + base + "wireless"))
        if want["type"]:
            word = first_word(read(base + "type"))
            if word is None:
                return False
            kind["type"] = atoi(word) & _U32
        if want["virtual"]:
            path = f"{root}/sys/devices/virtual/net/{name}"
            kind["virtual"] = int(os.access(path, os.R_OK | os.X_OK))
        return True


#: pmdalinux's steps of the sysfs pass, and the network.interface metrics that ask for each.
_SYSFS_STEPS: dict[str, tuple[str, ...]] = {
    "speed": ("speed", "baudrate"),
    "mtu": ("mtu",),
    "up": ("up", "running"),
    "duplex": ("duplex",),
    "wireless": ("wireless",),
    "type": ("type",),
    "virtual": ("virtual",),
}
