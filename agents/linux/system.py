"""What `pcp uptime` and `pcp mpstat` need beyond CPU time: kernel.uname.*,
kernel.all.nusers, hinv.map.cpu_num, hinv.cpu.online and kernel.percpu.intr,
computed as PCP 6.0.3's pmdalinux computes them (pmda.c, getinfo.c, login.c,
proc_cpuinfo.c, proc_interrupts.c); and the parsers the cpuinfo family shares
with them: /proc/interrupts and /proc/softirqs as one table (`parse_irq_table`)
and utmp's user, root and session counts (`login_counts`).
"""

from __future__ import annotations

import os
import re
import struct
from dataclasses import dataclass, field
from typing import Any

from purepcp.pmapi.cnumbers import scan_int, strtoul

#: kernel.uname.* from uname(2): (metric, os.uname_result field), cluster 12.
UNAME: tuple[tuple[str, str], ...] = (
    ("kernel.uname.release", "release"),
    ("kernel.uname.version", "version"),
    ("kernel.uname.sysname", "sysname"),
    ("kernel.uname.machine", "machine"),
    ("kernel.uname.nodename", "nodename"),
)

#: The release files pmdalinux tries, in order, under $LINUX_STATSPATH/etc.
RELEASE_FILES = (
    "debian_version",
    "oracle-release",
    "fedora-release",
    "redhat-release",
    "slackware-version",
    "SuSE-release",
    "lsb-release",
)


def distro(root: str = "") -> str:
    """kernel.uname.distro: the first line of the first release file that opens.

    debian_version gets a "Debian " prefix; lsb-release loses a leading
    "DISTRIB_ID = " or "DISTRIB_ID="; an empty or unreadable file, or none, gives "?".
    """
    for name in RELEASE_FILES:
        try:
            fd = os.open(f"{root}/etc/{name}", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            size = os.fstat(fd).st_size
            data = os.read(fd, size) if size > 0 else b""
        except OSError:
            data = b""
        finally:
            os.close(fd)
        if not data:
            return "?"
        if name == "lsb-release":
            data = data.removeprefix(b"DISTRIB_ID = ").removeprefix(b"DISTRIB_ID=")
        if name == "debian_version":
            data = b"Debian " + data
        text = data.split(b"\0", 1)[0].split(b"\n", 1)[0]
        return text.decode("utf-8", "replace")
    return "?"


# --- utmp(5): kernel.all.nusers -----------------------------------------------------------

#: glibc's utmp file (_PATH_UTMP), read by getutent(3) whatever $LINUX_STATSPATH says.
UTMP_PATH = "/var/run/utmp"
#: struct utmp on Linux's 64-bit and 32-bit ABIs alike: ut_type at 0, ut_user at 44.
UTMP_SIZE = 384
USER_PROCESS = 7
_TYPE = struct.Struct("=h")
_USER_AT = 44
_USER_SIZE = 32


def nusers(data: bytes) -> int:
    """USER_PROCESS entries with a user name in utmp DATA (whole records only)."""
    count = 0
    for at in range(0, len(data) - UTMP_SIZE + 1, UTMP_SIZE):
        if _TYPE.unpack_from(data, at)[0] == USER_PROCESS and data[at + _USER_AT] != 0:
            count += 1
    return count


# --- /sys/devices/system/cpu/cpuN/online: hinv.cpu.online ---------------------------------


def online(data: bytes | None) -> int:
    """hinv.cpu.online from the 'online' file's DATA: fscanf %u, 1 when absent or no number."""
    value = None if data is None else scan_int(data, 32, False)
    return 1 if value is None else value


# --- /proc/interrupts: kernel.percpu.intr -------------------------------------------------

_U64 = (1 << 64) - 1
_SPACE = b" \t\n\v\f\r"
_SPECIAL = re.compile(rb"(?:ERR|Err|BAD|MIS):[ \t\n\v\f\r]*[+-]?[0-9]")


def _column_to_cpuid(cpuids: list[int], column: int) -> int:
    """pmdalinux's column_to_cpuid(): the slot a column's (or an instance's) count uses."""
    if cpuids[column] == column:
        return column
    for slot, cpuid in enumerate(cpuids):
        if cpuid == column:
            return slot
    return 0


@dataclass
class IrqRow:
    """One row of /proc/interrupts or /proc/softirqs: its name, per-CPU cells, total, text."""

    name: str
    cells: list[tuple[int, int]]  # (CPU slot, count as a 32-bit unsigned) in column order
    total: int  # the row's sum, 64-bit
    label: str  # the text after the numbers, spaces squashed (pmdalinux's label_reformat)


@dataclass
class IrqTable:
    """A parsed /proc/interrupts or /proc/softirqs, as pmdalinux reads it, kept by column
    (few objects per row, as it is parsed at every fetch): row I is NAMES[I], with the
    counts VALUES[I] in the CPU slots SLOTS[I] and the text LABELS[I]."""

    cpuids: list[int]  # the CPU number of each header column (pmdalinux's online_cpumap)
    names: list[str] = field(default_factory=list)
    slots: list[list[int]] = field(default_factory=list)  # rows of one shape share one list
    values: list[list[int]] = field(default_factory=list)  # 64-bit counts, as read
    labels: list[str] = field(default_factory=list)  # pmdalinux's label_reformat of the text
    counts: list[int] = field(default_factory=list)  # per CPU slot: the sum of its cells
    errors: int | None = None  # the ERR:/Err:/BAD: line's count, if there was one
    misses: int | None = None  # the MIS: line's count, if there was one

    def slot(self, inst: int) -> int:
        """The count slot pmdalinux reads for CPU instance INST (column_to_cpuid)."""
        return _column_to_cpuid(self.cpuids, inst)

    @property
    def rows(self) -> list[IrqRow]:
        """The rows as IrqRow records (cells' counts as 32-bit unsigned, totals 64-bit)."""
        return [
            IrqRow(
                name,
                [(slot, value & 0xFFFFFFFF) for slot, value in zip(slots, values, strict=True)],
                sum(values) & _U64,
                label,
            )
            for name, slots, values, label in zip(
                self.names, self.slots, self.values, self.labels, strict=True
            )
        ]


_ERRORS = re.compile(rb"(?:ERR|Err|BAD):[ \t\n\v\f\r]*([+-]?)([0-9]+)")
_MISSES = re.compile(rb"MIS:[ \t\n\v\f\r]*([+-]?)([0-9]+)")
_RUN = re.compile(rb"[ \t\v\f\r]+")


def _fgets_lines(data: bytes) -> list[bytes]:
    """DATA's lines as fgets(3) gives them: each with its newline, the last one maybe without."""
    pieces = data.split(b"\n")
    lines = [piece + b"\n" for piece in pieces[:-1]]
    if pieces[-1]:
        lines.append(pieces[-1])
    return lines


def _label(text: bytes) -> str:
    """pmdalinux's label_reformat(): the text up to the newline, leading and trailing white
    space dropped and each run of white space kept as its last character."""
    text = text.split(b"\n", 1)[0].split(b"\0", 1)[0].lstrip(_SPACE).rstrip(_SPACE)
    return _RUN.sub(lambda m: m[0][-1:], text).decode("utf-8", "replace")


_SPACE_CLASS = rb"[ \t\n\v\f\r]"
_ROW_PATTERNS: dict[int, re.Pattern[bytes]] = {}
#: The rows of the last read of a file, by (header line, CPU count): (the CPU slots of a
#: row of the common shape, {line: (name, slots, counts, label)}); a row's reading depends
#: only on its line and these, and most lines are the same from one read to the next.
_ROWS: dict[tuple[bytes, int], tuple[list[int], dict[bytes, tuple[str, list[int], list[int], str]]]]
_ROWS = {}
#: Labels already reformatted, by the raw text after a row's numbers (the text rarely changes).
_LABELS: dict[bytes, str] = {}


def _row_pattern(ncolumns: int) -> re.Pattern[bytes]:
    """The common shape of a row: a name then NCOLUMNS unsigned numbers, each followed by
    white space; a row of any other shape takes parse_irq_table's general, slower path."""
    pattern = _ROW_PATTERNS.get(ncolumns)
    if pattern is None:
        number = _SPACE_CLASS + rb"*([0-9]{1,19})(?=" + _SPACE_CLASS + rb")"
        name = _SPACE_CLASS + rb"*([^ \t\n\v\f\r]+)(?=" + _SPACE_CLASS + rb")"
        pattern = re.compile(name + number * ncolumns + rb"(.*)", re.DOTALL)
        _ROW_PATTERNS[ncolumns] = pattern
    return pattern


def _label_of(text: bytes) -> str:
    """_label(TEXT), remembered (the texts are few and the same on every read)."""
    label = _LABELS.get(text)
    if label is None:
        if len(_LABELS) > 4096:
            _LABELS.clear()
        label = _LABELS[text] = _label(text)
    return label


def parse_irq_table(data: bytes, ncpus: int, special: bool = True) -> IrqTable | None:
    """/proc/interrupts (SPECIAL: with its ERR and MIS lines) or /proc/softirqs DATA, parsed
    as pmdalinux's refresh_proc_interrupts / refresh_proc_softirqs do.

    The header's numbers give each column's CPU (at most NCPUS); each other row adds
    its first NCOLUMNS numbers (strtoul; a number not followed by white space is
    skipped, a missing one counts 0) to the slot column_to_cpuid() picks.  A row's
    name loses a final ':' or '_'.  None when there is no header line.
    """
    lines = _fgets_lines(data)
    if not lines:
        return None
    cpuids = [0] * ncpus
    ncolumns = 0
    for m in re.finditer(rb"[0-9]+", lines[0]):
        if ncolumns >= ncpus:
            break
        cpuids[ncolumns] = min(int(m[0]), _U64) & 0xFFFFFFFF
        ncolumns += 1
    table = IrqTable(cpuids, counts=[0] * ncpus)
    context = (lines[0], ncpus)  # what a row's reading depends on, besides the row itself
    memo = _ROWS.get(context)
    if memo is None:
        if len(_ROWS) >= 8:
            _ROWS.clear()
        memo = _ROWS[context] = ([_column_to_cpuid(cpuids, c) for c in range(ncolumns)], {})
    slots, last = memo
    seen: dict[bytes, tuple[str, list[int], list[int], str]] = {}
    rows = []
    fast = _row_pattern(ncolumns).match if ncolumns else None
    end = ncolumns + 1
    for line in lines[1:]:
        if special and line[:1] in (b"E", b"B", b"M"):
            m = _ERRORS.match(line)
            if m:
                table.errors = scan_int(line[m.start(1) :], 32, False)  # %u
                continue
            m = _MISSES.match(line)
            if m:
                table.misses = scan_int(line[m.start(1) :], 32, False)
                continue
        row = last.get(line)  # a line as it was at the last read: read the same again
        if row is None:
            m = None if fast is None else fast(line)
            if m is None:
                row = _irq_row(line, cpuids, ncolumns)
            else:
                found = m.groups()
                name = found[0]
                if name[-1] in (58, 95):  # a final ':' or '_'
                    name = name[:-1]
                values = list(map(int, found[1:end]))  # at most 19 digits each: below 2**64
                label = _LABELS.get(found[end]) or _label_of(found[end])
                row = (name.decode("utf-8", "replace"), slots, values, label)
        seen[line] = row
        rows.append(row)
    _ROWS[context] = (slots, seen)
    if rows:
        table.names, table.slots, table.values, table.labels = map(list, zip(*rows, strict=True))
    row_slots, row_values = table.slots, table.values
    counts = table.counts
    same = [values for cells, values in zip(row_slots, row_values, strict=True) if cells is slots]
    for slot, column in zip(slots, zip(*same, strict=True), strict=False):  # no rows: none
        counts[slot] += sum(column)
    for cells, values in zip(row_slots, row_values, strict=True):
        if cells is not slots:
            for slot, value in zip(cells, values, strict=True):
                counts[slot] += value
    for slot, count in enumerate(counts):
        counts[slot] = count & _U64
    return table


def _irq_row(
    line: bytes, cpuids: list[int], ncolumns: int
) -> tuple[str, list[int], list[int], str]:
    """One row of any shape, read as pmdalinux reads it (strtoul column by column): its
    name, the slots and counts of its cells, its text."""
    start = len(line) - len(line.lstrip(_SPACE))
    end = start
    while end < len(line) and line[end] not in _SPACE:
        end += 1
    if end > start and line[end - 1] in b":_":
        name, at = line[start : end - 1], end  # the ':' is overwritten, values follow it
    else:
        name, at = line[start:end], end + 1
    slots: list[int] = []
    values: list[int] = []
    label_at: int | None = None
    for column in range(ncolumns):
        number = strtoul(line, 10, at)  # no number: the end is the start
        end = label_at = number.end
        if end >= len(line) or line[end] not in _SPACE:
            continue
        value, at = int(number.value), end
        slots.append(_column_to_cpuid(cpuids, column))
        values.append(value)
    label = "" if label_at is None else _label_of(line[label_at:])
    return name.decode("utf-8", "replace"), slots, values, label


def interrupts_table(agent: Any) -> IrqTable | None:
    """AGENT's /proc/interrupts parsed once per fetch, shared by kernel.percpu.intr and the
    cpuinfo family's interrupt metrics (None if unreadable or without a header)."""

    def parse() -> IrqTable | None:
        data = agent._read_once("/proc/interrupts")
        return None if data is None else parse_irq_table(data, agent.ncpus_configured)

    return agent._once("system.interrupts", parse)


def percpu_intr(data: bytes, ncpus: int) -> dict[int, int] | None:
    """kernel.percpu.intr by CPU instance (0 .. NCPUS-1) from /proc/interrupts DATA.

    As pmdalinux: the header's numbers give each column's CPU; each row but the
    ERR/Err/BAD/MIS ones adds its first NCOLUMNS numbers (strtoul, a number not
    followed by white space skipped) to the slot column_to_cpuid() picks, and an
    instance reads the slot column_to_cpuid() picks for its number.  Those two
    agree while the online CPUs are 0 .. N-1.  None when there is no header line.
    """
    table = parse_irq_table(data, ncpus)
    if table is None:
        return None
    return {inst: table.counts[table.slot(inst)] for inst in range(ncpus)}


# --- utmp(5): kernel.all.nroots, kernel.all.nsessions ------------------------------------


def login_counts(data: bytes) -> tuple[int, int, int]:
    """(nusers, nroots, nsessions) from utmp DATA, as pmdalinux's refresh_login_info counts:
    a USER_PROCESS entry with a user is a user (and a root if the user is "root"); every
    entry but a USER_PROCESS one without a user counts as a session."""
    users = roots = sessions = 0
    for at in range(0, len(data) - UTMP_SIZE + 1, UTMP_SIZE):
        if _TYPE.unpack_from(data, at)[0] == USER_PROCESS:
            user = data[at + _USER_AT : at + _USER_AT + _USER_SIZE].split(b"\0", 1)[0]
            if not user:
                continue
            users += 1
            roots += user == b"root"
        sessions += 1
    return users, roots, sessions
