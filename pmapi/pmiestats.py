"""pmie's statistics file, $PCP_TMP_DIR/pmie/PID: how every PCP housekeeping tool finds
the pmies running on a host and what each is doing (pmdapmcd's pmcd.pmie metrics,
pmie_check, pmie_daily, pmiestatus).

Its layout is pmiestats_t (src/pmie/src/stats.h) with Linux's MAXPATHLEN (4096) and
MAXHOSTNAMELEN (64): three NUL-padded strings, then the evaluation counters, then the
layout's version (1).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

__all__ = [
    "PMIE_FIELDS",
    "PMIE_STATS",
    "PMIE_SUBDIR",
    "PmieStats",
    "pmie_stats_bytes",
    "read_pmie_stats",
]

PMIE_SUBDIR = "pmie"
PMIE_STATS = struct.Struct("@4097s4097s65sf7I")
PMIE_FIELDS = (
    "configfile",
    "logfile",
    "pmcd_host",
    "eval.expected",
    "numrules",
    "actions",
    "eval.true",
    "eval.false",
    "eval.unknown",
    "eval.actual",
)


@dataclass(frozen=True)
class PmieStats:
    """The strings of a statistics file (what pmiestatus prints, one a line)."""

    configfile: str
    logfile: str
    pmcd_host: str


def _text(raw: bytes) -> str:
    return raw.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")


def read_pmie_stats(path: str) -> PmieStats | None:
    """PATH's strings; None when it cannot be read or is not a statistics file (pmie
    writes it whole when it starts, so a short file is one still being made)."""
    try:
        with open(path, "rb") as f:
            data = f.read(PMIE_STATS.size + 1)
    except OSError:
        return None
    if len(data) != PMIE_STATS.size:
        return None
    fields = PMIE_STATS.unpack(data)
    return PmieStats(*(_text(raw) for raw in fields[:3]))


def pmie_stats_bytes(
    configfile: str, logfile: str, pmcd_host: str, counters: tuple[float, ...] = ()
) -> bytes:
    """A whole statistics file: the strings (cut to their fields), then the counters in
    PMIE_FIELDS' order (zero where not given), then the layout's version."""
    numbers = (*counters, *[0] * (7 - len(counters)))[:7]
    texts = (t.encode("utf-8", "surrogateescape") for t in (configfile, logfile, pmcd_host))
    return PMIE_STATS.pack(*texts, float(numbers[0]), *(int(n) for n in numbers[1:]), 1)
