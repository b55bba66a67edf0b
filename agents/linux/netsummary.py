"""Network summaries: network.all.* (cluster 90), network.softnet.* (57), network.sockstat.*
(11 and 73).

Facts from src/pmdas/linux/pmda.c, proc_net_dev.c, proc_net_softnet.c,
proc_net_sockstat.c and proc_net_sockstat6.c at PCP 6.0.3:

- network.all.* sum the /proc/net/dev counters of the interfaces of this fetch
  whose names do not match a POSIX extended regular expression: the text of
  $PCP_SYSCONF_DIR/linux/interfaces.conf with "#" comments and all white space
  removed, or, without that file (or if it does not compile), pmdalinux's own
  default `DEFAULT_EXCLUDED`.  The file is read once, when first needed.  The sums
  are 64-bit and always have a value (0 without /proc/net/dev).
- network.softnet.* read /proc/net/softnet_stat, one line per online CPU: pmdalinux
  gives the Nth line to the Nth CPU instance (the CPUs of /proc/stat in id order),
  and reads each line as up to 11 hexadecimal words of at most 8 digits, of which it
  keeps words 0, 1, 2, 8, 9 and 10.  The network.softnet.percpu.* metrics are per
  CPU (instance domain 60.0, with its labels) and the others are their sums over
  the CPUs.  How many words the last CPU's line had decides which metrics have values
  at all (9 for the first four, 10 for received_rps, 11 for flow_limit_count); a
  CPU left without a line has no value.
- network.sockstat.* are the 32-bit numbers after fixed words of /proc/net/sockstat
  and /proc/net/sockstat6.  pmdalinux keeps them in static memory it never clears:
  a number the file does not give keeps its last value (0 if never read), and every
  metric always has a value.
"""

from __future__ import annotations

import functools
import logging
import re
from typing import Any

from purepcp.pmapi.cnumbers import scan_int, strtoul
from purepcp.pmapi.paths import LayoutError, paths
from purepcp.pmda import refresh

from .base import LinuxBase
from .records import BYTE, COUNT, COUNTER, I32, INSTANT, U64, MetricInfo

log = logging.getLogger(__name__)

CPU_INDOM = 0  # pmdalinux's CPU_INDOM
NET_ALL_CLUSTER, SOFTNET_CLUSTER, SOCKSTAT_CLUSTER, SOCKSTAT6_CLUSTER = 90, 57, 11, 73
_U64 = (1 << 64) - 1

# --- network.all --------------------------------------------------------------------------

#: Interfaces pmdalinux leaves out of network.all.* when interfaces.conf is empty or bad.
DEFAULT_EXCLUDED = "^(lo|bond[0-9]+|team[0-9]+|face)$"
#: What PCP's installed interfaces.conf leaves out (loopback, bonds and teams, tunnels,
#: libvirt, CNI, podman and docker bridges, veth pairs): used when there is no such file,
#: so that a host with only purepcp sums the same interfaces as one with PCP installed.
INSTALLED_EXCLUDED = (
    "^(lo|bond[0-9]+|team[0-9]+|tun[0-9]+|virbr[0-9]+|virbr[0-9]+-nic|cni[0-9]+"
    "|cni-podman[0-9]+|docker[0-9]+|veth[0-9]+|face)$"
)

#: (suffix, item, units, /proc/net/dev columns summed): network.all.SUFFIX.
NET_ALL: tuple[tuple[str, int, Any, tuple[int, ...]], ...] = (
    ("in.bytes", 0, BYTE, (0,)),
    ("in.packets", 1, COUNT, (1,)),
    ("in.errors", 2, COUNT, (2,)),
    ("in.drops", 3, COUNT, (3,)),
    ("out.bytes", 4, BYTE, (8,)),
    ("out.packets", 5, COUNT, (9,)),
    ("out.errors", 6, COUNT, (10,)),
    ("out.drops", 7, COUNT, (11,)),
    ("total.bytes", 8, BYTE, (0, 8)),
    ("total.packets", 9, COUNT, (1, 9)),
    ("total.errors", 10, COUNT, (2, 10)),
    ("total.drops", 11, COUNT, (3, 11)),
)

#: POSIX bracket classes, as Python's re spells them.
_POSIX_CLASSES = {
    "[:alpha:]": "a-zA-Z",
    "[:digit:]": "0-9",
    "[:alnum:]": "a-zA-Z0-9",
    "[:upper:]": "A-Z",
    "[:lower:]": "a-z",
    "[:xdigit:]": "0-9A-Fa-f",
    "[:space:]": r" \t\n\r\f\v",
    "[:blank:]": r" \t",
    "[:punct:]": r"!-/:-@\[-`{-~",
}


def interfaces_pattern(text: str) -> str:
    """The regular expression of an interfaces.conf file: comments and white space removed."""
    kept = []
    for line in text.split("\n"):
        kept.append("".join(line.split("#", 1)[0].split()))
    return "".join(kept)


def compile_excluded(pattern: str) -> re.Pattern[str] | None:
    """PATTERN (POSIX extended syntax, searched anywhere in a name) compiled, or None."""
    for posix, python in _POSIX_CLASSES.items():
        pattern = pattern.replace(posix, python)
    try:
        return re.compile(pattern)
    except re.error:
        return None


def load_excluded(path: str | None) -> re.Pattern[str]:
    """The excluded interfaces: PATH's pattern; with no file, the one PCP installs; with an
    empty or bad one, pmdalinux's built-in default."""
    text = None
    if path is not None:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            text = INSTALLED_EXCLUDED
    if text is not None:
        pattern = interfaces_pattern(text)
        if pattern:
            compiled = compile_excluded(pattern)
            if compiled is not None:
                return compiled
            log.error("ignoring %r pattern from %s: it does not compile", pattern, path)
    compiled = compile_excluded(DEFAULT_EXCLUDED)
    assert compiled is not None
    return compiled


def interfaces_conf() -> str | None:
    """Where interfaces.conf is: $PCP_SYSCONF_DIR/linux/interfaces.conf (None if unknown)."""
    try:
        return str(paths().sysconf_dir / "linux" / "interfaces.conf")
    except LayoutError:
        return None


def net_all(interfaces: list[tuple[str, tuple[int, ...]]], excluded: re.Pattern[str]) -> list[int]:
    """The 12 network.all sums (item order) over INTERFACES (name, counters) not EXCLUDED."""
    kept = [counts for name, counts in interfaces if excluded.search(name) is None]
    return [sum(c[col] for c in kept for col in columns) & _U64 for *_, columns in NET_ALL]


# --- network.softnet ------------------------------------------------------------------------

#: (name, item of the sum; the per-CPU metric is item + 6, word of the line, words needed).
SOFTNET: tuple[tuple[str, int, int, int], ...] = (
    ("processed", 0, 0, 9),
    ("dropped", 1, 1, 9),
    ("time_squeeze", 2, 2, 9),
    ("cpu_collision", 3, 8, 9),
    ("received_rps", 4, 9, 10),
    ("flow_limit_count", 5, 10, 11),
)
#: The same rows as (per-CPU metric name, sum's metric name, word, words needed).
_SOFTNET_NAMES: tuple[tuple[str, str, int, int], ...] = tuple(
    (f"network.softnet.percpu.{name}", f"network.softnet.{name}", word, needed)
    for name, _, word, needed in SOFTNET
)
_SOFTNET_WORDS = 11
_BLANKS = re.compile(rb"[ \t\n\v\f\r]*")
#: What a %x conversion takes in: a sign, 0x (the x not kept), hex digits.
_HEX_FIELD = re.compile(rb"[+-]?(?:0[xX])?[0-9a-fA-F]*")
_HEX_ONLY = re.compile(rb"[0-9a-fA-F]+")


def softnet_line(line: bytes) -> tuple[list[int], int]:
    """The 11 words of a softnet_stat LINE (0 where absent) and how many sscanf converted.

    pmdalinux reads "%08llx" eleven times: after optional white space, at most 8
    characters each, a sign and 0x counted among them (glibc's field width), read as
    strtoull in base 16; reading stops at the first word that is not hex.
    """
    plain = line.split(None, _SOFTNET_WORDS)[:_SOFTNET_WORDS]
    if plain and _HEX_ONLY.fullmatch(b"".join(plain)) and max(map(len, plain)) <= 8:
        # the kernel's words, up to 8 hex digits each: each word is one conversion
        count = len(plain)
        return [int(w, 16) for w in plain] + [0] * (_SOFTNET_WORDS - count), count
    words = [0] * _SOFTNET_WORDS
    at = 0
    for n in range(_SOFTNET_WORDS):
        start = _BLANKS.match(line, at).end()  # type: ignore[union-attr]
        field = _HEX_FIELD.match(line[start : start + 8]).group()  # type: ignore[union-attr]
        if not field.lstrip(b"+-"):  # nothing, or a sign alone: the conversion fails
            return words, (n if n or line.strip() else -1)
        words[n] = int(strtoul(field, 16).value)
        at = start + len(field)
    return words, _SOFTNET_WORDS


def softnet(data: bytes, cpus: list[int]) -> tuple[dict[int, list[int]], int]:
    """Each CPU's softnet words (the Nth line to the Nth of CPUS) and the last line's count.

    CPUs beyond the file's last line get nothing ("insufficient data" in pmdalinux).
    """
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()  # the end of the last line, not a line
    percpu: dict[int, list[int]] = {}
    count = 0
    for cpu, line in zip(cpus, lines, strict=False):
        percpu[cpu], count = softnet_line(line)
    return percpu, count


# --- network.sockstat -----------------------------------------------------------------------

#: (metric name, item, line's first word, index of the number's word) from /proc/net/sockstat.
SOCKSTAT: tuple[tuple[str, int, bytes, int], ...] = (
    ("network.sockstat.total", 9, b"sockets:", 2),
    ("network.sockstat.tcp.inuse", 0, b"TCP:", 2),
    ("network.sockstat.tcp.orphan", 10, b"TCP:", 4),
    ("network.sockstat.tcp.tw", 11, b"TCP:", 6),
    ("network.sockstat.tcp.alloc", 12, b"TCP:", 8),
    ("network.sockstat.tcp.mem", 13, b"TCP:", 10),
    ("network.sockstat.udp.inuse", 3, b"UDP:", 2),
    ("network.sockstat.udp.mem", 14, b"UDP:", 4),
    ("network.sockstat.udplite.inuse", 8, b"UDPLITE:", 2),
    ("network.sockstat.raw.inuse", 6, b"RAW:", 2),
    ("network.sockstat.frag.inuse", 15, b"FRAG:", 2),
    ("network.sockstat.frag.memory", 16, b"FRAG:", 4),
)
#: The same for /proc/net/sockstat6.
SOCKSTAT6: tuple[tuple[str, int, bytes, int], ...] = (
    ("network.sockstat.tcp6.inuse", 0, b"TCP6:", 2),
    ("network.sockstat.udp6.inuse", 1, b"UDP6:", 2),
    ("network.sockstat.udplite6.inuse", 2, b"UDPLITE6:", 2),
    ("network.sockstat.raw6.inuse", 3, b"RAW6:", 2),
    ("network.sockstat.frag6.inuse", 4, b"FRAG6:", 2),
    ("network.sockstat.frag6.memory", 5, b"FRAG6:", 4),
)


@functools.lru_cache(maxsize=4)
def _sockstat_groups(
    rows: tuple[tuple[str, int, bytes, int], ...],
) -> tuple[tuple[bytes, tuple[tuple[str, int], ...]], ...]:
    """ROWS grouped by the line they read: (line's first word, ((name, word index), ...))."""
    return tuple(
        (start, tuple((name, index) for name, _, first, index in rows if first == start))
        for start in dict.fromkeys(row[2] for row in rows)
    )


def sockstat(data: bytes, rows: tuple[tuple[str, int, bytes, int], ...], into: dict) -> None:
    """Update INTO {metric name: value} from a sockstat file's DATA, as pmdalinux's sscanf.

    A line is chosen by its start; its numbers are read in order and reading stops at
    the first word that is not one (the numbers after it keep their old values).
    """
    lines = data.split(b"\n")
    for start, picks in _sockstat_groups(rows):
        for line in lines:
            if not line.startswith(start):
                continue
            words = line.split()
            for name, index in picks:
                if index >= len(words):
                    break
                word = words[index]
                # plain digits below 2**31 are the int as they are; else sscanf's %d rules
                value = int(word) if word.isdigit() and len(word) < 10 else scan_int(word, 32, True)
                if value is None:
                    break
                into[name] = value


# --- the metrics -----------------------------------------------------------------------------

#: This family's metrics, as pmdalinux declares them.
METRICS: tuple[MetricInfo, ...] = (
    *(
        MetricInfo(f"network.all.{suffix}", NET_ALL_CLUSTER, item, U64, None, COUNTER, units)
        for suffix, item, units, _ in NET_ALL
    ),
    *(
        MetricInfo(name, SOCKSTAT_CLUSTER, item, I32, None, INSTANT, COUNT)
        for name, item, _, _ in SOCKSTAT
    ),
    *(
        MetricInfo(name, SOCKSTAT6_CLUSTER, item, I32, None, INSTANT, COUNT)
        for name, item, _, _ in SOCKSTAT6
    ),
    *(
        MetricInfo(f"network.softnet.{name}", SOFTNET_CLUSTER, item, U64, None, COUNTER, COUNT)
        for name, item, _, _ in SOFTNET
    ),
    *(
        MetricInfo(
            f"network.softnet.percpu.{name}",
            SOFTNET_CLUSTER,
            item + 6,
            U64,
            CPU_INDOM,
            COUNTER,
            COUNT,
        )
        for name, item, _, _ in SOFTNET
    ),
)


class NetSummary(LinuxBase):
    """Clusters 90, 57, 11 and 73: network totals, softnet counts per CPU, socket counts."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Agent's arguments; socket counts start at 0 and interfaces.conf is read when needed."""
        super().__init__(*args, **kwargs)
        self._netsummary_excluded: re.Pattern[str] | None = None
        self._netsummary_sockstat: dict[str, int] = {name: 0 for name, *_ in SOCKSTAT}
        self._netsummary_sockstat6: dict[str, int] = {name: 0 for name, *_ in SOCKSTAT6}

    @refresh(NET_ALL_CLUSTER)
    def _netsummary_refresh_all(self) -> dict[str, Any]:
        """Cluster 90: the sums over /proc/net/dev's interfaces that are not excluded."""
        if self._netsummary_excluded is None:
            self._netsummary_excluded = load_excluded(interfaces_conf())
        netdev = self._netdev()  # type: ignore[attr-defined]  # Core's, read once per fetch
        interfaces = [(name, counts) for _, name, counts in netdev]
        sums = net_all(interfaces, self._netsummary_excluded)
        return {f"network.all.{row[0]}": value for row, value in zip(NET_ALL, sums, strict=True)}

    @refresh(SOFTNET_CLUSTER)
    def _netsummary_refresh_softnet(self) -> dict[str, Any]:
        """Cluster 57: /proc/net/softnet_stat, a line per CPU instance, and the sums."""
        data = self._read_once("/proc/net/softnet_stat")
        cpus = self._cpu_numbers()
        if data is None or not cpus:
            return {}
        percpu, count = softnet(data, cpus)
        values: dict[str, Any] = {}
        for percpu_name, total_name, word, needed in _SOFTNET_NAMES:
            if count < needed:
                continue
            each = {cpu: words[word] for cpu, words in percpu.items()}
            values[percpu_name] = each
            values[total_name] = sum(each.values()) & _U64
        return values

    @refresh(SOCKSTAT_CLUSTER)
    def _netsummary_refresh_sockstat(self) -> dict[str, Any]:
        """Cluster 11: /proc/net/sockstat's numbers (the last ones read, if unreadable)."""
        data = self._read_once("/proc/net/sockstat")
        if data is not None:
            sockstat(data, SOCKSTAT, self._netsummary_sockstat)
        return dict(self._netsummary_sockstat)

    @refresh(SOCKSTAT6_CLUSTER)
    def _netsummary_refresh_sockstat6(self) -> dict[str, Any]:
        """Cluster 73: /proc/net/sockstat6's numbers (the last ones read, if unreadable)."""
        data = self._read_once("/proc/net/sockstat6")
        if data is not None:
            sockstat(data, SOCKSTAT6, self._netsummary_sockstat6)
        return dict(self._netsummary_sockstat6)
