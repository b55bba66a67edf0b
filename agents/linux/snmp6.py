"""network.ip6.*, network.icmp6.*, network.udp6.*, network.udplite6.*: /proc/net/snmp6.

One cluster (58) of 82 unsigned 64-bit counters, each a line "Field value" of
/proc/net/snmp6.  `GROUPS` is the table: per protocol, the metric name prefix,
the kernel's field prefix and the field suffixes in item order (items count up
from 0 across the groups); the metric's last name component is the suffix in
lower case.  Rows and items come from src/pmdas/linux/proc_net_snmp6.[ch] and
pmda.c at PCP 6.0.3.

Values follow pmdalinux's linux_table_scan: a line belongs to the first field of
the table that occurs anywhere in it, and the value is the run of digits that
starts at the first digit after that field.  pmdalinux never forgets a value: a
field the kernel does not give keeps its last value (0 if never seen), and when
the file cannot be read every metric keeps its last value, so every metric always
has a value (0 on a host with IPv6 disabled).  `scan` is sans-IO; the memory is
the agent's (`Snmp6._snmp6_values`).
"""

from __future__ import annotations

import functools
import operator
import re
from collections.abc import Callable
from typing import Any

from purepcp.pmda import refresh

from .base import LinuxBase
from .records import COUNT, COUNTER, U64, MetricInfo

#: pmdalinux's cluster for /proc/net/snmp6 (CLUSTER_NET_SNMP6).
CLUSTER = 58
#: The file, under $LINUX_STATSPATH.
PATH = "/proc/net/snmp6"

#: (metric name prefix, kernel field prefix, field suffixes in item order).
GROUPS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "network.ip6.",
        "Ip6",
        (
            *("InReceives", "InHdrErrors", "InTooBigErrors", "InNoRoutes", "InAddrErrors"),
            *("InUnknownProtos", "InTruncatedPkts", "InDiscards", "InDelivers"),
            *("OutForwDatagrams", "OutRequests", "OutDiscards", "OutNoRoutes"),
            *("ReasmTimeout", "ReasmReqds", "ReasmOKs", "ReasmFails"),
            *("FragOKs", "FragFails", "FragCreates", "InMcastPkts", "OutMcastPkts"),
            *("InOctets", "OutOctets", "InMcastOctets", "OutMcastOctets"),
            *("InBcastOctets", "OutBcastOctets"),
            *("InNoECTPkts", "InECT1Pkts", "InECT0Pkts", "InCEPkts"),
        ),
    ),
    (
        "network.icmp6.",
        "Icmp6",
        (
            *("InMsgs", "InErrors", "OutMsgs", "OutErrors", "InCsumErrors"),
            *("InDestUnreachs", "InPktTooBigs", "InTimeExcds", "InParmProblems"),
            *("InEchos", "InEchoReplies"),
            *("InGroupMembQueries", "InGroupMembResponses", "InGroupMembReductions"),
            *("InRouterSolicits", "InRouterAdvertisements"),
            *("InNeighborSolicits", "InNeighborAdvertisements", "InRedirects", "InMLDv2Reports"),
            *("OutDestUnreachs", "OutPktTooBigs", "OutTimeExcds", "OutParmProblems"),
            *("OutEchos", "OutEchoReplies"),
            *("OutGroupMembQueries", "OutGroupMembResponses", "OutGroupMembReductions"),
            *("OutRouterSolicits", "OutRouterAdvertisements"),
            *("OutNeighborSolicits", "OutNeighborAdvertisements", "OutRedirects"),
            "OutMLDv2Reports",
        ),
    ),
    (
        "network.udp6.",
        "Udp6",
        (
            *("InDatagrams", "NoPorts", "InErrors", "OutDatagrams"),
            *("RcvbufErrors", "SndbufErrors", "InCsumErrors", "IgnoredMulti"),
        ),
    ),
    (
        "network.udplite6.",
        "UdpLite6",
        (
            *("InDatagrams", "NoPorts", "InErrors", "OutDatagrams"),
            *("RcvbufErrors", "SndbufErrors", "InCsumErrors"),
        ),
    ),
)

#: (metric name, kernel field) in item order.
ROWS: tuple[tuple[str, bytes], ...] = tuple(
    (prefix + suffix.lower(), (field + suffix).encode())
    for prefix, field, suffixes in GROUPS
    for suffix in suffixes
)

#: This family's metrics, as pmdalinux declares them: all counters of U64 count.
METRICS: tuple[MetricInfo, ...] = tuple(
    MetricInfo(name, CLUSTER, item, U64, None, COUNTER, COUNT, source=f"{PATH} {field.decode()}")
    for item, (name, field) in enumerate(ROWS)
)

_FIELDS = tuple(field for _, field in ROWS)
_DIGITS = b"0123456789"
_U64 = (1 << 64) - 1
#: The fields no earlier field of the table occurs in: a line "FIELD digits" with one of
#: these belongs to it without a scan of the table (every field, as it happens).
_DIRECT = {
    field: item
    for item, field in enumerate(_FIELDS)
    if not any(earlier in field for earlier in _FIELDS[:item])
}


#: A plain line, "Field<blanks>digits", as the kernel writes every line of the file.
_PLAIN = re.compile(rb"^(\S+)[ \t]+([0-9]+)$", re.MULTILINE)
#: A whole file of such lines, each number below 2**64.
_PLAIN_FILE = re.compile(rb"(?:\S+[ \t]+[0-9]{1,19}\n)*")
#: The metric names, in item order.
NAMES: tuple[str, ...] = tuple(name for name, _ in ROWS)
_NAME_SET = frozenset(NAMES)


@functools.lru_cache(maxsize=8)
def _plan(names: frozenset[str]) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """The metric names among NAMES, in item order, and their items."""
    items = tuple(item for item, name in enumerate(NAMES) if name in names)
    return tuple(NAMES[item] for item in items), items


def _value_after(line: bytes, at: int) -> int | None:
    """The decimal number starting at the first digit of LINE at or after AT (None if none)."""
    start = next((i for i in range(at, len(line)) if line[i] in _DIGITS), None)
    if start is None:
        return None
    end = start
    while end < len(line) and line[end] in _DIGITS:
        end += 1
    return min(int(line[start:end]), _U64)  # strtoull saturates


@functools.lru_cache(maxsize=256)
def _field_rule(field: bytes) -> tuple[int, int | None] | None:
    """How `_match` assigns a line "FIELD digits" whose FIELD is not one of the table's: the
    item of the first table field within FIELD and the value when FIELD's own digits follow
    it (None: the line's number), or None when the line belongs to no item."""
    for item, name in enumerate(_FIELDS):
        at = field.find(name)
        if at >= 0:
            return item, _value_after(field, at + len(name))
    return None


def _match(line: bytes) -> tuple[int, int] | None:
    """(item, value) of LINE, as linux_table_scan assigns a line: its first field with a digit."""
    words = line.split()
    if not words:
        return None
    if len(words) == 2 and words[0] in _DIRECT and words[1].isdigit():
        return _DIRECT[words[0]], min(int(words[1]), _U64)  # the usual "Field value" line
    for item, field in enumerate(_FIELDS):
        at = line.find(field)
        if at >= 0:
            value = _value_after(line, at + len(field))
            if value is not None:
                return item, value
    return None


#: The last file layout seen: (its fields in order, a getter of every item's number in item
#: order from the numbers in file order, or None when the file does not give them plainly).
_layout: tuple[list[bytes], Callable[[list[bytes]], tuple[bytes, ...]] | None] | None = None


def _plan_layout(
    fields: list[bytes],
) -> tuple[list[bytes], Callable[[list[bytes]], tuple[bytes, ...]] | None]:
    """Work out (and keep) how a plain file naming FIELDS in order gives each item: by
    place when every item is some line's own field (the last such line), else None."""
    global _layout
    line_of: dict[int, int] = {}
    plain = True
    for n, field in enumerate(fields):
        item = _DIRECT.get(field)
        if item is None:
            rule = _field_rule(field)
            if rule is None:
                continue
            item, own = rule
            plain = plain and own is None
        line_of[item] = n
    if plain and len(line_of) == len(_FIELDS):
        _layout = fields, operator.itemgetter(*(line_of[item] for item in range(len(_FIELDS))))
    else:
        _layout = fields, None
    return _layout


def scan(data: bytes, values: list[int]) -> None:
    """Update VALUES (one per item) from the bytes of /proc/net/snmp6; others keep theirs."""
    if _PLAIN_FILE.fullmatch(data):
        # the kernel's text: the same fields in the same order each time, so by place
        words = data.split()
        fields = words[0::2]
        layout = _layout
        if layout is None or layout[0] != fields:
            layout = _plan_layout(fields)
        if layout[1] is not None:
            values[:] = map(int, layout[1](words[1::2]))
            return
    pairs = _PLAIN.findall(data)
    if len(pairs) * 2 == len(data.split()):
        # every line with words is a plain "Field digits" line: no scan of the table
        for field, number in pairs:
            item = _DIRECT.get(field)
            value = int(number) if len(number) < 20 else min(int(number), _U64)
            if item is None:
                rule = _field_rule(field)
                if rule is None:
                    continue
                item, own = rule
                if own is not None:
                    value = own
            values[item] = value
        return
    for line in data.split(b"\n"):
        found = _match(line)
        if found is not None:
            values[found[0]] = found[1]


class Snmp6(LinuxBase):
    """Cluster 58: the IPv6, ICMPv6, UDPv6 and UDP-Lite v6 counters of /proc/net/snmp6."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Agent's arguments; every counter starts at 0, as pmdalinux's table does."""
        super().__init__(*args, **kwargs)
        self._snmp6_values = [0] * len(ROWS)

    @refresh(CLUSTER)
    def _snmp6_refresh(self) -> dict[str, Any]:
        """Read /proc/net/snmp6 (if readable) and give the asked counters their last values."""
        data = self._read_once(PATH)
        if data is not None:
            scan(data, self._snmp6_values)
        names, items = _plan(_NAME_SET.intersection(self._wanted))
        values = self._snmp6_values
        return dict(zip(names, [values[item] for item in items], strict=True))
