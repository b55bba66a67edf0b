"""What `pcp uptime` and `pcp mpstat` need beyond CPU time: kernel.uname.*,
kernel.all.nusers, hinv.map.cpu_num, hinv.cpu.online and kernel.percpu.intr,
computed as PCP 6.0.3's pmdalinux computes them (pmda.c, getinfo.c, login.c,
proc_cpuinfo.c, proc_interrupts.c).
"""

from __future__ import annotations

import os
import re
import struct

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


def nusers(data: bytes) -> int:
    """USER_PROCESS entries with a user name in utmp DATA (whole records only)."""
    count = 0
    for at in range(0, len(data) - UTMP_SIZE + 1, UTMP_SIZE):
        if _TYPE.unpack_from(data, at)[0] == USER_PROCESS and data[at + _USER_AT] != 0:
            count += 1
    return count


# --- /sys/devices/system/cpu/cpuN/online: hinv.cpu.online ---------------------------------

_UNSIGNED = re.compile(rb"\s*([+-]?)([0-9]+)")


def online(data: bytes | None) -> int:
    """hinv.cpu.online from the 'online' file's DATA: fscanf %u, 1 when absent or no number."""
    if data is None:
        return 1
    m = _UNSIGNED.match(data)
    if m is None:
        return 1
    value = int(m[2]) & 0xFFFFFFFF
    return (-value) & 0xFFFFFFFF if m[1] == b"-" else value


# --- /proc/interrupts: kernel.percpu.intr -------------------------------------------------

_U64 = (1 << 64) - 1
_SPACE = b" \t\n\v\f\r"
_STRTOUL = re.compile(rb"[ \t\n\v\f\r]*([+-]?)([0-9]+)")
_SPECIAL = re.compile(rb"(?:ERR|Err|BAD|MIS):[ \t\n\v\f\r]*[+-]?[0-9]")


def _column_to_cpuid(cpuids: list[int], column: int) -> int:
    """pmdalinux's column_to_cpuid(): the slot a column's (or an instance's) count uses."""
    if cpuids[column] == column:
        return column
    for slot, cpuid in enumerate(cpuids):
        if cpuid == column:
            return slot
    return 0


def percpu_intr(data: bytes, ncpus: int) -> dict[int, int] | None:
    """kernel.percpu.intr by CPU instance (0 .. NCPUS-1) from /proc/interrupts DATA.

    As pmdalinux: the header's numbers give each column's CPU; each row but the
    ERR/Err/BAD/MIS ones adds its first NCOLUMNS numbers (strtoul, a number not
    followed by white space skipped) to the slot column_to_cpuid() picks, and an
    instance reads the slot column_to_cpuid() picks for its number.  Those two
    agree while the online CPUs are 0 .. N-1.  None when there is no header line.
    """
    lines = data.split(b"\n")
    if not data:
        return None
    cpuids = [0] * ncpus
    ncolumns = 0
    for m in re.finditer(rb"[0-9]+", lines[0]):
        if ncolumns >= ncpus:
            break
        cpuids[ncolumns] = int(m[0]) & 0xFFFFFFFF
        ncolumns += 1
    counts = [0] * ncpus
    for line in lines[1:]:
        if not line or _SPECIAL.match(line):
            continue
        line += b"\n"
        start = len(line) - len(line.lstrip(_SPACE))
        end = start
        while end < len(line) and line[end] not in _SPACE:
            end += 1
        # a name ending in ':' or '_' loses that character instead of the space after it
        at = end if end > start and line[end - 1] in b":_" else end + 1
        for column in range(ncolumns):
            m = _STRTOUL.match(line, at)
            if m is None:  # no number: strtoul leaves end at the start
                if at >= len(line) or line[at] not in _SPACE:
                    continue
                value = 0
            else:
                if m.end() >= len(line) or line[m.end()] not in _SPACE:
                    continue
                value = min(int(m[2]), _U64)
                value = (-value) & _U64 if m[1] == b"-" else value
                at = m.end()
            slot = _column_to_cpuid(cpuids, column)
            counts[slot] = (counts[slot] + value) & _U64
    return {inst: counts[_column_to_cpuid(cpuids, inst)] for inst in range(ncpus)}
