"""The PCP tools' time options, read as libpcp reads them: -t, -S/-T/-O/-A, -z/-Z.

The names here are the public surface; import them from this package, not its modules.
`parse_interval` is pmParseInterval; `parse_time` and `parse_time_window` are
__pmParseHighResTime and pmParseHighResTimeWindow, including the free-form dates
libpcp falls back to (its getdate grammar: "yesterday", "2026-11-21 10:00",
"last monday"); `new_zone` and `tzinfo_for` turn a TZ value (a zone file name or a
POSIX rule such as "AEDT-11") into a tzinfo, as glibc reads $TZ, without touching the
process environment; `pcp_timezone` and `pcp_zoneinfo` are this host's zone as PCP
records it; `pm_ctime` and `format_stamp` print times as pmCtime, pmPrintStamp and pmval
do.  Times are integer nanoseconds since the epoch inside, so results agree with
libpcp's timespecs exactly; floats are offered for convenience.

The modules, each named for what it holds (libpcp's rtime.c, getdate.y and tz.c):
scanning (the C-locale scanning primitives, TimeParseError), epoch (nanosecond
timestamps; localtime and mktime over a tzinfo), interval, tz (POSIX TZ rules and zone
files), hostzone (the host's zone for PCP), ctime (the "@" absolute form), datewords and
getdate (the free-form date grammar, imported on the first free-form date), window
(times and windows) and stamps (printing).  A module's names without an underscore are
what the others use of it; other layers use only this package's.
"""

from __future__ import annotations

from .epoch import NSEC, PM_MAX_TIME_T, Timestamp
from .hostzone import pcp_timezone, pcp_zoneinfo
from .interval import parse_interval, parse_interval_ns
from .scanning import TimeParseError
from .stamps import format_stamp, format_stamps, pm_ctime
from .tz import PosixZone, Zone, new_zone, parse_posix_tz, tzinfo_for
from .window import TimeWindow, parse_time, parse_time_window

__all__ = [
    "NSEC", "PM_MAX_TIME_T", "PosixZone", "TimeParseError", "TimeWindow", "Timestamp", "Zone",
    "format_stamp", "format_stamps", "new_zone", "parse_interval", "parse_interval_ns",
    "parse_posix_tz", "parse_time", "parse_time_window", "pcp_timezone", "pcp_zoneinfo",
    "pm_ctime", "tzinfo_for",
]  # fmt: skip
