"""The mem.util.* metrics pmdalinux reads from /proc/meminfo that the catalog's
hand-written records do not cover, as one table (cluster 1).

Each row is (metric suffix, item, /proc/meminfo field, units); our help text is
in help/linux.  pmdalinux (proc_meminfo.c, pmda.c at PCP 6.0.3) gives a metric no value
when its field is missing from /proc/meminfo: it does not derive HighTotal,
HighFree, LowTotal or LowFree on kernels without high memory (64-bit ones), so
neither do we; `pcp free` copes with their absence.  The four hugepages*Bytes
metrics are a page count times Hugepagesize (kB) * 1024, in 64-bit arithmetic;
pmdalinux checks only the count, so a missing Hugepagesize acts as -1 there.
"""

from __future__ import annotations

from collections.abc import Mapping

from purepcp.pmapi.types import PMSem
from purepcp.pmapi.units import Space, Units

#: The cluster of /proc/meminfo metrics in pmdalinux.
CLUSTER = 1
PREFIX = "mem.util."
SEM = PMSem.PM_SEM_INSTANT

_KBYTE = Units(dimSpace=1, scaleSpace=Space.PM_SPACE_KBYTE)
_BYTE = Units(dimSpace=1, scaleSpace=Space.PM_SPACE_BYTE)
_COUNT = Units(dimCount=1)
_U64 = (1 << 64) - 1

#: mem.util.SUFFIX metrics that are one /proc/meminfo field as the kernel gives it.
FIELDS: tuple[tuple[str, int, str, Units], ...] = (
    ("highTotal", 16, "HighTotal", _KBYTE),
    ("highFree", 17, "HighFree", _KBYTE),
    ("lowTotal", 18, "LowTotal", _KBYTE),
    ("lowFree", 19, "LowFree", _KBYTE),
    (
        "reverseMaps",
        28,
        "ReverseMaps",
        _KBYTE,
    ),
    ("bounce", 32, "Bounce", _KBYTE),
    (
        "NFS_Unstable",
        33,
        "NFS_Unstable",
        _KBYTE,
    ),
    ("hugepagesRsvd", 46, "HugePages_Rsvd", _COUNT),
    ("hugepagesSurp", 47, "HugePages_Surp", _COUNT),
    (
        "directMap4k",
        48,
        "DirectMap4k",
        _KBYTE,
    ),
    (
        "directMap2M",
        49,
        "DirectMap2M",
        _KBYTE,
    ),
    ("vmallocTotal", 50, "VmallocTotal", _KBYTE),
    ("vmallocUsed", 51, "VmallocUsed", _KBYTE),
    ("vmallocChunk", 52, "VmallocChunk", _KBYTE),
    ("mmap_copy", 53, "MmapCopy", _KBYTE),
    ("quicklists", 54, "Quicklists", _KBYTE),
    (
        "corrupthardware",
        55,
        "HardwareCorrupted",
        _KBYTE,
    ),
    ("anonhugepages", 56, "AnonHugePages", _KBYTE),
    (
        "directMap1G",
        57,
        "DirectMap1G",
        _KBYTE,
    ),
)

#: mem.util.SUFFIX metrics that are a hugepage count times the hugepage size, in bytes.
HUGEPAGE_BYTES: tuple[tuple[str, int, str, Units], ...] = (
    ("hugepagesTotalBytes", 60, "HugePages_Total", _BYTE),
    ("hugepagesFreeBytes", 61, "HugePages_Free", _BYTE),
    ("hugepagesRsvdBytes", 62, "HugePages_Rsvd", _BYTE),
    ("hugepagesSurpBytes", 63, "HugePages_Surp", _BYTE),
)


def values(mem: Mapping[bytes, int]) -> dict[str, int | None]:
    """This table's metric values (full names) from parsed /proc/meminfo MEM; None = no value."""
    found: dict[str, int | None] = {
        PREFIX + suffix: mem.get(field.encode()) for suffix, _, field, _ in FIELDS
    }
    size = mem.get(b"Hugepagesize", -1) << 10  # pmdalinux's int64 -1 when missing
    for suffix, _, field, _ in HUGEPAGE_BYTES:
        count = mem.get(field.encode())
        found[PREFIX + suffix] = None if count is None else (count * size) & _U64
    return found
