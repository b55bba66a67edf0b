"""The mem.util.* metrics pmdalinux reads from /proc/meminfo that the catalog's
hand-written records do not cover, as one table (cluster 1).

Each row is (metric suffix, item, /proc/meminfo field, units, PCP's one-line
help).  pmdalinux (proc_meminfo.c, pmda.c at PCP 6.0.3) gives a metric no value
when its field is missing from /proc/meminfo: it does not derive HighTotal,
HighFree, LowTotal or LowFree on kernels without high memory (64-bit ones), so
neither do we; `pcp free` copes with their absence.  The four hugepages*Bytes
metrics are a page count times Hugepagesize (kB) * 1024, in 64-bit arithmetic;
pmdalinux checks only the count, so a missing Hugepagesize acts as -1 there.
"""

from __future__ import annotations

from collections.abc import Mapping

from pmapi.types import PMSem
from pmapi.units import Space, Units

#: The cluster of /proc/meminfo metrics in pmdalinux.
CLUSTER = 1
PREFIX = "mem.util."
SEM = PMSem.PM_SEM_INSTANT

_KBYTE = Units(dimSpace=1, scaleSpace=Space.PM_SPACE_KBYTE)
_BYTE = Units(dimSpace=1, scaleSpace=Space.PM_SPACE_BYTE)
_COUNT = Units(dimCount=1)
_U64 = (1 << 64) - 1

#: mem.util.SUFFIX metrics that are one /proc/meminfo field as the kernel gives it.
FIELDS: tuple[tuple[str, int, str, Units, str], ...] = (
    ("highTotal", 16, "HighTotal", _KBYTE, "Kbytes in high memory, from /proc/meminfo"),
    ("highFree", 17, "HighFree", _KBYTE, "Kbytes free high memory, from /proc/meminfo"),
    ("lowTotal", 18, "LowTotal", _KBYTE, "Kbytes in low memory total, from /proc/meminfo"),
    ("lowFree", 19, "LowFree", _KBYTE, "Kbytes free low memory, from /proc/meminfo"),
    (
        "reverseMaps",
        28,
        "ReverseMaps",
        _KBYTE,
        "Kbytes in reverse mapped pages, from /proc/meminfo",
    ),
    ("bounce", 32, "Bounce", _KBYTE, "Kbytes in bounce buffers, from /proc/meminfo"),
    (
        "NFS_Unstable",
        33,
        "NFS_Unstable",
        _KBYTE,
        "Kbytes in NFS unstable memory, from /proc/meminfo",
    ),
    ("hugepagesRsvd", 46, "HugePages_Rsvd", _COUNT, "a count of reserved hugepages"),
    ("hugepagesSurp", 47, "HugePages_Surp", _COUNT, "a count of surplus hugepages"),
    (
        "directMap4k",
        48,
        "DirectMap4k",
        _KBYTE,
        "amount of memory that is directly mapped in 4kB pages",
    ),
    (
        "directMap2M",
        49,
        "DirectMap2M",
        _KBYTE,
        "amount of memory that is directly mapped in 2MB pages",
    ),
    ("vmallocTotal", 50, "VmallocTotal", _KBYTE, "amount of kernel memory allocated via vmalloc"),
    ("vmallocUsed", 51, "VmallocUsed", _KBYTE, "amount of used vmalloc memory"),
    ("vmallocChunk", 52, "VmallocChunk", _KBYTE, "amount of vmalloc chunk memory"),
    ("mmap_copy", 53, "MmapCopy", _KBYTE, "amount of mmap_copy space (non-MMU kernels only)"),
    ("quicklists", 54, "Quicklists", _KBYTE, "amount of memory in the per-CPU quicklists"),
    (
        "corrupthardware",
        55,
        "HardwareCorrupted",
        _KBYTE,
        "amount of memory in hardware corrupted pages",
    ),
    ("anonhugepages", 56, "AnonHugePages", _KBYTE, "amount of memory in anonymous huge pages"),
    (
        "directMap1G",
        57,
        "DirectMap1G",
        _KBYTE,
        "amount of memory that is directly mapped in 1GB pages",
    ),
)

#: mem.util.SUFFIX metrics that are a hugepage count times the hugepage size, in bytes.
HUGEPAGE_BYTES: tuple[tuple[str, int, str, Units, str], ...] = (
    ("hugepagesTotalBytes", 60, "HugePages_Total", _BYTE, "amount of memory in total hugepages"),
    ("hugepagesFreeBytes", 61, "HugePages_Free", _BYTE, "amount of memory in free hugepages"),
    ("hugepagesRsvdBytes", 62, "HugePages_Rsvd", _BYTE, "amount of memory in reserved hugepages"),
    ("hugepagesSurpBytes", 63, "HugePages_Surp", _BYTE, "amount of memory in surplus hugepages"),
)


def values(mem: Mapping[bytes, int]) -> dict[str, int | None]:
    """This table's metric values (full names) from parsed /proc/meminfo MEM; None = no value."""
    found: dict[str, int | None] = {
        PREFIX + suffix: mem.get(field.encode()) for suffix, _, field, _, _ in FIELDS
    }
    size = mem.get(b"Hugepagesize", -1) << 10  # pmdalinux's int64 -1 when missing
    for suffix, _, field, _, _ in HUGEPAGE_BYTES:
        count = mem.get(field.encode())
        found[PREFIX + suffix] = None if count is None else (count * size) & _U64
    return found
