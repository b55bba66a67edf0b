"""purepcp.pmapi.timewindow: the tools' -t, -S/-T/-O/-A and -z/-Z options, as libpcp reads them.

Unit tests pin examples and invariants; the interop tests (marker `interop`) ask the
reference libpcp itself, through ctypes in the system interpreter, about the same
texts, times and zones: pmParseHighResInterval, pmParseInterval, __pmParseHighResTime,
pmParseHighResTimeWindow, pmNewZone with pmCtime, pmLocaltime, pmPrintStamp and
pmPrintHighResStamp, __pmTimezone and __pmZoneinfo.
"""

from __future__ import annotations

import functools
import json
import math
import os
import random
import shutil
import subprocess
from datetime import UTC, datetime, timedelta
from fractions import Fraction
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from purepcp.pmapi.timewindow import (
    NSEC,
    PM_MAX_TIME_T,
    PosixZone,
    TimeParseError,
    format_stamp,
    format_stamps,
    new_zone,
    parse_interval,
    parse_interval_ns,
    parse_posix_tz,
    parse_time,
    parse_time_window,
    pcp_timezone,
    pcp_zoneinfo,
    pm_ctime,
    tzinfo_for,
)
from tests.support.examples import examples

SYSTEM_PYTHON = "/usr/bin/python3"
SKIP_REASON = "reference PCP 6 is not installed: no python3-pcp (Debian package pcp)"


def utc(*fields: int) -> int:
    """Seconds since the epoch of a UTC date and time."""
    return int(datetime(*fields, tzinfo=UTC).timestamp())


# --- intervals -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "seconds"),
    [
        ("2", 2.0),
        ("0.5", 0.5),
        ("2sec", 2.0),
        ("1min", 60.0),
        ("1 min 30 sec", 90.0),
        ("1.5h", 5400.0),
        ("100msec", 0.1),
        ("250 usecs", 0.00025),
        ("3 days", 259200.0),
        ("2hrs", 7200.0),
        ("1 hour 1 minute 1 second", 3661.0),
        ("1ms", 60.0),  # the trailing "s" goes, leaving "m": minutes, as in libpcp
        ("1 2", 3.0),  # a second bare number adds seconds
        ("  7  ", 7.0),
        ("1e1", 10.0),
        ("0x10", 16.0),
        ("5 Minutes", 300.0),
    ],
)
def test_parse_interval(spec: str, seconds: float) -> None:
    assert parse_interval(spec) == pytest.approx(seconds, rel=1e-15)


@pytest.mark.parametrize(
    ("spec", "errmsg"),
    [
        ("junk", "junk\n^ -- unexpected value\n"),
        ("", "\n^ -- Null or empty specification\n"),
        ("1 junk", "1 junk\n  ^ -- unexpected value\n"),
        ("1,5", "1,5\n ^ -- unexpected value\n"),
        ("\t10 weeks", "\t10 weeks\n\t   ^ -- unexpected value\n"),
        ("-5", "-5\n^ -- unexpected value\n"),
    ],
)
def test_parse_interval_errors(spec: str, errmsg: str) -> None:
    with pytest.raises(TimeParseError) as info:
        parse_interval(spec)
    assert info.value.errmsg == errmsg
    assert isinstance(info.value, ValueError)
    assert "\n" not in str(info.value)
    assert info.value.reason in str(info.value)


def test_parse_interval_ns_rounds_as_pmtimespecFromReal() -> None:
    assert parse_interval_ns("0.9999999999") == NSEC
    assert parse_interval_ns("1e-10") == 0
    assert parse_interval_ns("0.3") == 300_000_000
    assert parse_interval_ns("1.5 msec") == 1_500_000
    with pytest.raises(TimeParseError):
        parse_interval_ns("nan")


_UNITS = {"": 1, "s": 1, "sec": 1, "secs": 1, "msec": Fraction(1, 1000), "usec": Fraction(1, 10**6),
          "min": 60, "m": 60, "minutes": 60, "h": 3600, "hr": 3600, "hours": 3600, "d": 86400,
          "days": 86400}  # fmt: skip


@given(
    st.lists(
        st.tuples(
            st.integers(0, 10**6), st.sampled_from(sorted(_UNITS)), st.sampled_from(["", " ", "  "])
        ),
        min_size=1,
        max_size=6,
    )
)
def test_parse_interval_sums_its_parts(parts: list[tuple[int, str, str]]) -> None:
    spec = " ".join(f"{value}{space}{unit}" for value, unit, space in parts)
    expected = sum(value * _UNITS[unit] for value, unit, _ in parts)
    assert parse_interval(spec) == pytest.approx(float(expected), rel=1e-12)
    assert parse_interval_ns(spec) == pytest.approx(expected * NSEC, rel=1e-12, abs=1)


# --- single times and windows ----------------------------------------------------------

START = (utc(2026, 11, 20, 0, 0, 0), 250_000_000)  # an archive's first record
END = (utc(2026, 11, 21, 12, 0, 0), 0)  # and its last
NOW = utc(2026, 11, 21, 9, 0, 0)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("@10:00", utc(2026, 11, 20, 10, 0, 0) * NSEC),
        ("@10:00:30.25", utc(2026, 11, 20, 10, 0, 30) * NSEC + 250_000_000),
        ("@ Mon Nov 21 10:00:00 2026", utc(2026, 11, 21, 10, 0, 0) * NSEC),  # day name ignored
        ("@Nov 21", utc(2026, 11, 21, 0, 0, 0) * NSEC),
        ("@21", utc(2026, 11, 21, 21, 0, 0) * NSEC),  # an hour, via the free-form dates
        ("2026-11-21 10:00:00", utc(2026, 11, 21, 10, 0, 0) * NSEC),
        ("-10min", (END[0] - 600) * NSEC),
        ("30sec", (START[0] + 30) * NSEC + START[1]),
        ("+1.5h", (START[0] + 5400) * NSEC + START[1]),
        ("yesterday", utc(2026, 11, 20, 0, 0, 0) * NSEC),
        ("last monday", utc(2026, 11, 16, 0, 0, 0) * NSEC),
        ("tomorrow 10:00", utc(2026, 11, 22, 10, 0, 0) * NSEC),
        ("2 days ago", (END[0] - 2 * 86400) * NSEC),  # counts back from the end
        ("Nov 21, 2026 10:00 EST", utc(2026, 11, 21, 15, 0, 0) * NSEC),
        ("21-Nov-2026", utc(2026, 11, 21, 0, 0, 0) * NSEC),
        ("11/21/2026 10:00 pm", utc(2026, 11, 21, 22, 0, 0) * NSEC),
        ("20261121", (START[0] + 20261121) * NSEC + START[1]),  # an interval: seconds
        ("@20261121", utc(2026, 11, 21, 0, 0, 0) * NSEC),  # no ctime, so a free-form date
        ("10:00 +0530", utc(2026, 11, 21, 4, 30, 0) * NSEC),
    ],
)
def test_parse_time(spec: str, expected: int) -> None:
    assert parse_time(spec, START, END, tz="UTC", now=NOW) == expected


def test_parse_time_in_a_zone() -> None:
    assert parse_time("@Nov 21 10:00 2026", START, END, tz="AEDT-11") == (
        utc(2026, 11, 20, 23, 0, 0) * NSEC
    )
    melbourne = parse_time("2026-07-01 10:00", START, END, tz=":Australia/Melbourne", now=NOW)
    assert melbourne == utc(2026, 7, 1, 0, 0, 0) * NSEC


def test_parse_time_live_source_has_no_end_to_count_back_from() -> None:
    # "-10min" is no interval without an end; the free-form reading makes it now - 10min
    assert parse_time("-10min", NOW, None, tz="UTC", now=NOW) == (NOW - 600) * NSEC


@pytest.mark.parametrize(
    ("spec", "errmsg"),
    [
        ("junk", "junk\n^ -- unexpected value\n"),
        ("@10:00 junk", "10:00 junk\n      ^ -- unexpected value\n"),
        ("@Mon 99", "Mon 99\n    ^ -- unexpected value\n"),  # nor a free-form date: 99:00
    ],
)
def test_parse_time_errors(spec: str, errmsg: str) -> None:
    with pytest.raises(TimeParseError) as info:
        parse_time(spec, START, END, tz="UTC", now=NOW)
    assert info.value.errmsg == errmsg


def test_parse_time_window_archive() -> None:
    window = parse_time_window("@10:00", "-1hour", "15min", "+1h", START, END, tz="UTC")
    assert window.start_ns == utc(2026, 11, 20, 10, 0, 0) * NSEC
    assert window.end_ns == (END[0] - 3600) * NSEC
    assert window.origin_ns == utc(2026, 11, 20, 11, 0, 0) * NSEC
    assert window.warning is None
    assert window.start == utc(2026, 11, 20, 10, 0, 0)


def test_parse_time_window_defaults_and_clamps() -> None:
    window = parse_time_window(None, None, None, None, START, END)
    assert (window.start_ns, window.end_ns, window.origin_ns) == (
        START[0] * NSEC + START[1],
        END[0] * NSEC,
        START[0] * NSEC + START[1],
    )
    clamped = parse_time_window("-10d", "+100d", None, None, START, END, tz="UTC")
    assert (clamped.start_ns, clamped.end_ns) == (window.start_ns, window.end_ns)


def test_parse_time_window_live() -> None:
    window = parse_time_window(None, None, "1min", None, (NOW, 5), None)
    assert window.open_ended and window.end == math.inf
    assert window.start_ns == (NOW + 60) * NSEC  # -A rounds up to the next minute
    assert window.end_ns == PM_MAX_TIME_T * NSEC


def test_parse_time_window_alignment_warning_and_error() -> None:
    window = parse_time_window(None, None, "1000d", None, START, END)
    assert window.warning == "1000d\n^ -- alignment specified by -A switch could not be applied\n"
    assert window.start_ns == START[0] * NSEC + START[1]  # the window stands, unaligned
    with pytest.raises(TimeParseError) as info:
        parse_time_window(None, None, "0", None, START, END)
    assert info.value.reason == "alignment specified by -A switch could not be applied"
    with pytest.raises(TimeParseError):
        parse_time_window(None, "junk", None, None, START, END)


@given(
    st.integers(utc(2000, 1, 1), utc(2037, 1, 1)),
    st.integers(0, 10 * 86400),
    st.integers(1, 86400),
    st.sampled_from(["UTC", "AEDT-11", "America/New_York"]),
)
def test_window_is_within_the_log(first: int, length: int, step: int, tz: str) -> None:
    window = parse_time_window("-1d", "+2d", f"{step}s", "-30min", first, first + length, tz=tz)
    assert first * NSEC <= window.start_ns
    assert window.end_ns <= (first + length) * NSEC
    if window.warning is None and window.start_ns <= window.end_ns:
        assert window.start_ns % (step * NSEC) == 0


# --- zones and printing ----------------------------------------------------------------


def test_zones() -> None:
    at = datetime(2026, 7, 1, tzinfo=UTC)
    assert at.astimezone(tzinfo_for("AEDT-11")).utcoffset() == timedelta(hours=11)
    assert at.astimezone(tzinfo_for("EST")).utcoffset() == timedelta(hours=-5)  # a zone file
    assert at.astimezone(new_zone("EST")).utcoffset() == timedelta(0)  # pmNewZone: "EST+0"
    assert at.astimezone(new_zone("EST")).tzname() == "EST"
    assert at.astimezone(tzinfo_for(":Australia/Melbourne")).utcoffset() == timedelta(hours=10)
    assert at.astimezone(tzinfo_for("IST-5:30")).utcoffset() == timedelta(hours=5, minutes=30)
    assert at.astimezone(tzinfo_for("<+0530>-5:30")).tzname() == "+0530"
    assert at.astimezone(tzinfo_for("junk")).utcoffset() == timedelta(0)  # glibc: UTC
    assert parse_posix_tz("junk") is None
    assert isinstance(parse_posix_tz("EST5EDT,M3.2.0,M11.1.0"), PosixZone)


def test_local_zone_follows_tz(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "JST-9")
    assert pm_ctime(utc(2026, 11, 21, 10, 0, 0)) == "Sat Nov 21 19:00:00 2026"
    monkeypatch.setenv("TZ", "")
    assert pm_ctime(utc(2026, 11, 21, 10, 0, 0)) == "Sat Nov 21 10:00:00 2026"


@pytest.mark.parametrize(
    ("rule", "name", "years"),
    [
        ("EST5EDT,M3.2.0,M11.1.0", "America/New_York", (2007, 2037)),
        ("AEST-10AEDT,M10.1.0,M4.1.0/3", "Australia/Melbourne", (2008, 2037)),
        ("GMT0BST,M3.5.0/1,M10.5.0", "Europe/London", (1997, 2037)),
        ("NZST-12NZDT,M9.5.0,M4.1.0/3", "Pacific/Auckland", (2008, 2037)),
    ],
)
def test_posix_rules_agree_with_the_zone_files(rule: str, name: str, years: tuple) -> None:
    posix, olson = parse_posix_tz(rule), ZoneInfo(name)
    assert posix is not None

    @settings(max_examples=examples(300))
    @given(st.integers(utc(years[0], 1, 1), utc(years[1], 1, 1)), st.sampled_from([0, 1]))
    def check(sec: int, fold: int) -> None:
        at = datetime.fromtimestamp(sec, UTC)
        mine, theirs = at.astimezone(posix), at.astimezone(olson)
        assert (mine.utcoffset(), mine.tzname()) == (theirs.utcoffset(), theirs.tzname())
        assert mine.fold == theirs.fold
        wall = mine.replace(tzinfo=None, fold=fold)
        assert wall.replace(tzinfo=posix).utcoffset() == wall.replace(tzinfo=olson).utcoffset()

    check()


def test_posix_rule_transitions() -> None:
    zone = parse_posix_tz("EST5EDT,M3.2.0,M11.1.0")
    assert zone is not None
    spring, autumn = utc(2026, 3, 8, 7, 0, 0), utc(2026, 11, 1, 6, 0, 0)
    assert datetime.fromtimestamp(spring - 1, zone).strftime("%H:%M:%S %Z") == "01:59:59 EST"
    assert datetime.fromtimestamp(spring, zone).strftime("%H:%M:%S %Z") == "03:00:00 EDT"
    assert datetime.fromtimestamp(autumn - 1, zone).strftime("%H:%M:%S %Z") == "01:59:59 EDT"
    assert datetime.fromtimestamp(autumn, zone).strftime("%H:%M:%S %Z") == "01:00:00 EST"


def test_pm_ctime_and_stamps() -> None:
    t = (utc(2026, 11, 21, 10, 0, 1), 123_456_789)
    assert pm_ctime(t, "UTC") == "Sat Nov 21 10:00:01 2026"
    assert pm_ctime(utc(2026, 11, 1, 9, 5, 0), "UTC") == "Sun Nov  1 09:05:00 2026"
    assert pm_ctime(t, "AEDT-11") == "Sat Nov 21 21:00:01 2026"
    assert format_stamp(t, "UTC") == "10:00:01.123"
    assert format_stamp(t, "UTC", digits=6) == "10:00:01.123456"
    assert format_stamp(t, "UTC", digits=9) == "10:00:01.123456789"
    assert format_stamp(t, "UTC", digits=0) == "10:00:01"
    assert format_stamp(t, "UTC", digits=6, date=True) == "Sat Nov 21 10:00:01.123456 2026"
    assert format_stamp(1.5, "UTC") == "00:00:01.500"


def test_far_years_print() -> None:
    assert pm_ctime(utc(9999, 12, 31, 23, 59, 59) + 86400 * 366, "UTC") == (
        "Sun Dec 31 23:59:59 10000"
    )


@pytest.mark.parametrize(
    ("tz", "when", "expected"),
    [
        ("AEDT-11", None, "AEDT-11"),
        (":UTC", None, "UTC"),
        (":Asia/Kolkata", None, "IST-5:30"),
        (":America/New_York", utc(2026, 1, 15), "EST+5"),
        (":America/New_York", utc(2026, 7, 15), "EDT+4"),
        (":Australia/Melbourne", utc(2026, 1, 15), "AEDT-11"),
        # longer than 40: libpcp drops each ":00" (and whatever follows the last one)
        ("AEST-10:00:00AEDT-11:00:00,M10.1.0/2:00:00,M4.1.0/3:00:00", None,
         "AEST-10AEDT-11,M10.1.0/2,M4.1.0/3"),
        ("X" * 41, utc(2026, 1, 15), "X" * 40),
    ],
)  # fmt: skip
def test_pcp_timezone(tz: str, when: int | None, expected: str) -> None:
    assert pcp_timezone(when if when is not None else NOW, {"TZ": tz}) == expected


def test_pcp_zoneinfo(tmp_path) -> None:
    link = tmp_path / "localtime"
    link.symlink_to("/usr/share/zoneinfo/Australia/Melbourne")
    assert pcp_zoneinfo(str(link)) == ":Australia/Melbourne"
    assert pcp_zoneinfo(str(tmp_path / "absent")) is None
    zones = tmp_path / "zoneinfo"
    files = {"Area/City": b"TZif-one", "Other/Place": b"TZif-two", "posix/Area/City": b"TZif-one"}
    for name, data in files.items():
        (zones / name).parent.mkdir(parents=True, exist_ok=True)
        (zones / name).write_bytes(data)
    copy = tmp_path / "copy"
    copy.write_bytes(b"TZif-one")
    assert pcp_zoneinfo(str(copy), str(zones)) == ":Area/City"  # the shortest name wins
    copy.write_bytes(b"TZif-xxx")
    assert pcp_zoneinfo(str(copy), str(zones)) is None


# --- against the reference libpcp ------------------------------------------------------

# Runs under the system interpreter: a zone for pmNewZone (or null) and requests on stdin;
# a request may name its own zone, which stays the reporting zone for those that follow.
REFERENCE = r"""
import ctypes, json, os, sys, tempfile, time
from ctypes import POINTER, byref, c_char_p, c_int, c_long, c_longlong, c_void_p
from pcp.pmapi import LIBPCP, timespec, timeval

LIBPCP.pmParseHighResInterval.argtypes = [c_char_p, POINTER(timespec), POINTER(c_char_p)]
LIBPCP.pmParseInterval.argtypes = [c_char_p, POINTER(timeval), POINTER(c_char_p)]
LIBPCP.__pmParseHighResTime.argtypes = [c_char_p] + [POINTER(timespec)] * 3 + [POINTER(c_char_p)]
LIBPCP.pmParseHighResTimeWindow.argtypes = (
    [c_char_p] * 4 + [POINTER(timespec)] * 5 + [POINTER(c_char_p)])
LIBPCP.pmNewZone.argtypes = [c_char_p]
LIBPCP.pmCtime.argtypes = [POINTER(c_longlong), c_char_p]
LIBPCP.pmCtime.restype = c_char_p
LIBPCP.pmPrintStamp.argtypes = [c_void_p, POINTER(timeval)]
LIBPCP.pmPrintHighResStamp.argtypes = [c_void_p, POINTER(timespec)]
LIBPCP.__pmTimezone.restype = c_char_p
LIBPCP.__pmZoneinfo.restype = c_char_p
libc = ctypes.CDLL(None)
libc.fopen.restype = c_void_p
libc.fopen.argtypes = [c_char_p, c_char_p]
libc.fclose.argtypes = [c_void_p]

class tm(ctypes.Structure):
    _fields_ = [(n, c_int) for n in ("sec", "min", "hour", "mday", "mon", "year", "wday",
                "yday", "isdst")] + [("gmtoff", c_long), ("zone", c_char_p)]
LIBPCP.pmLocaltime.argtypes = [POINTER(c_longlong), POINTER(tm)]

def b(s):
    return None if s is None else s.encode()

def ns(t):
    return t.tv_sec * 10**9 + t.tv_nsec

def text(err):
    return err.value.decode() if err.value else None

def printed(fn, arg):
    fd, path = tempfile.mkstemp()
    os.close(fd)
    fp = libc.fopen(path.encode(), b"w")
    fn(fp, arg)
    libc.fclose(fp)
    with open(path) as f:
        out = f.read()
    os.unlink(path)
    return out

def run(req):
    if "zone" in req:
        assert LIBPCP.pmNewZone(req["zone"].encode()) >= 0
    op = req["op"]
    if op == "interval":
        t, tv, err = timespec(), timeval(), c_char_p()
        sts = LIBPCP.pmParseHighResInterval(b(req["spec"]), byref(t), byref(err))
        if sts < 0:
            return {"sts": sts, "errmsg": text(err)}
        LIBPCP.pmParseInterval(b(req["spec"]), byref(tv), byref(c_char_p()))
        return {"sts": sts, "ns": ns(t), "tv": [tv.tv_sec, tv.tv_usec]}
    if op == "time":
        out, err = timespec(), c_char_p()
        before = time.time_ns()
        sts = LIBPCP.__pmParseHighResTime(b(req["spec"]), byref(timespec(*req["start"])),
                                          byref(timespec(*req["end"])), byref(out), byref(err))
        after = time.time_ns()
        res = {"sts": sts, "now": [before, after]}
        res.update({"errmsg": text(err)} if sts < 0 else {"ns": ns(out)})
        return res
    if op == "window":
        s, e, o, err = timespec(), timespec(), timespec(), c_char_p()
        before = time.time_ns()
        sts = LIBPCP.pmParseHighResTimeWindow(
            b(req["S"]), b(req["T"]), b(req["A"]), b(req["O"]),
            byref(timespec(*req["start"])), byref(timespec(*req["end"])),
            byref(s), byref(e), byref(o), byref(err))
        after = time.time_ns()
        res = {"sts": sts, "errmsg": text(err), "now": [before, after]}
        if sts >= 0:
            res.update(start=ns(s), end=ns(e), origin=ns(o))
        return res
    if op == "format":
        sec, nsec = req["t"]
        when = c_longlong(sec)
        r = tm()
        LIBPCP.pmLocaltime(byref(when), byref(r))
        return {
            "ctime": LIBPCP.pmCtime(byref(when), ctypes.create_string_buffer(32)).decode(),
            "stamp": printed(LIBPCP.pmPrintStamp, byref(timeval(sec, nsec // 1000))),
            "hrstamp": printed(LIBPCP.pmPrintHighResStamp, byref(timespec(sec, nsec))),
            "tm": [r.year + 1900, r.mon, r.mday, r.hour, r.min, r.sec, r.wday, r.isdst > 0,
                   r.gmtoff],
        }
    if op == "timezone":
        if req["TZ"] is None:
            os.unsetenv("TZ")
        else:
            os.putenv("TZ", req["TZ"])
        return {"tz": LIBPCP.__pmTimezone().decode()}
    if op == "zoneinfo":
        z = LIBPCP.__pmZoneinfo()
        return {"zoneinfo": z.decode() if z else None}
    raise ValueError(op)

job = json.load(sys.stdin)
if job["zone"] is not None:
    assert LIBPCP.pmNewZone(job["zone"].encode()) >= 0
print(json.dumps([run(r) for r in job["requests"]]))
"""


def _env(tz_env: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "TZ")}
    if tz_env is not None:
        env["TZ"] = tz_env
    return env


@functools.cache
def _reference_available() -> bool:
    if shutil.which(SYSTEM_PYTHON) is None:
        return False
    probe = subprocess.run(
        [SYSTEM_PYTHON, "-c", "from pcp import pmapi"],
        capture_output=True,
        env=_env(None),
        timeout=60,
    )
    return probe.returncode == 0


def reference(
    requests: list[dict[str, Any]], zone: str | None = None, tz_env: str | None = None
) -> list[dict[str, Any]]:
    """Answer REQUESTS with libpcp, its reporting zone set by pmNewZone(ZONE) unless None."""
    if not _reference_available():
        pytest.skip(SKIP_REASON)
    done = subprocess.run(
        [SYSTEM_PYTHON, "-c", REFERENCE],
        input=json.dumps({"zone": zone, "requests": requests}),
        capture_output=True,
        text=True,
        env=_env(tz_env),
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


# Zones as pmNewZone takes them.  POSIX rules with DST but no transition rules
# ("XST5XDT") are left out: glibc replays its posixrules file for those (see
# parse_posix_tz).  None is the process's own zone.
ZONES = [None, "UTC", "EST", "AEDT-11", ":Australia/Melbourne", "America/New_York", "EST5EDT",
         "NZST-12NZDT,M9.5.0,M4.1.0/3", "IST-5:30", "Europe/Dublin", "junk", "Asia/Kolkata",
         "Australia/Lord_Howe", "America/St_Johns", "<+0530>-5:30", "GMT0BST,M3.5.0/1,M10.5.0",
         "XST-10XDT,M10.1.0,M4.1.0/3", "XST5XDT,J60/1,J300", "XST5XDT,59,300/-1",
         "Pacific/Chatham", "XST3XDT2,M3.5.0/-2,M10.5.0/26"]  # fmt: skip

_WORDS = ["", " ", "1", "2.5", "0.5", "1e3", "0x10", ".5", "-1", "+2", "s", "sec", "secs",
          "m", "ms", "min", "mins", "minute", "minutes", "h", "hr", "hrs", "hour", "hours", "d",
          "day", "days", "msec", "usec", "nsec", "millisecond", "microseconds", "nanosecond",
          "SEC", "Hours", "x", "junk", ",", "\t", "inf", "1e400", "ss", "S", "0.9999999999",
          "1.0000000005", "0.3"]  # fmt: skip


@pytest.mark.interop
@settings(max_examples=examples(5), deadline=None)
@given(st.lists(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=5), min_size=200))
def test_intervals_match_libpcp(word_lists: list[list[str]]) -> None:
    specs = ["".join(words) for words in word_lists] + ["2", "junk", "", "1 min 30 sec"]
    answers = reference([{"op": "interval", "spec": s} for s in specs])
    for spec, want in zip(specs, answers, strict=True):
        try:
            secs = parse_interval(spec)
        except TimeParseError as e:
            assert want == {"sts": -1, "errmsg": e.errmsg}, spec
            continue
        assert want["sts"] == 0, spec
        if math.isnan(secs):
            continue  # libpcp takes NaN and converts it to garbage; we refuse it
        whole = int(secs)
        usec = math.floor((Fraction(secs) - whole) * 10**6 + Fraction(1, 2))
        assert (parse_interval_ns(spec), [whole, usec]) == (want["ns"], want["tv"]), spec


TIME_SPECS = [
    "@10:00", "@10:00:30", "@10:00:30.25", "@ Mon Nov 21 10:00:00 2026", "@Nov 21 10:00:00 2026",
    "2026-11-21 10:00:00", "2026-11-21", "-10min", "30sec", "+30", "+1h", "-1 hour", "yesterday",
    "last monday", "@21", "@Nov 21", "@Jan 5", "@5", "@Mon", "@Nov", "@2026", "@Feb 31 2026",
    "tomorrow 10:00", "2 days ago", "now", "", "@junk", "-junk", "junk", "@", "@10am", "@10pm",
    "@12am", "@12pm", "@13pm", "@10:30pm 2026", "@Sat Nov 21 10:00:00.5 2026", "10:00", "10am",
    "noon", "Nov 21", "21 Nov 2026", "21-Nov-2026", "11/21/2026", "2026/11/21", "11/21",
    "20261121", "1030", "10", "next week", "this week", "last year", "1 year ago", "2 months",
    "-2 months", "monday", "next friday", "third tuesday", "Nov 21, 2026 10:00 UTC", "10:00 EST",
    "10:00 -0500", "10:00:30 +0530", "10:00 pm PDT", "Sat, 21 Nov 2026 10:00:00 +0000",
    "(comment) 10:00", "10:00 (unterminated", "a.m.", "10 a.m.", "10 p.m.", "Sept 1", "sept. 1",
    "Thurs", "yesterday 14:00", "today", "tomorrow", "1 fortnight ago", "5 mins", "5 secs ago",
    "sec", "min", "10:00 10:00", "Nov 21 Nov 22", "2026-11", "@10:61", "@24:00", "@10:00:61",
    "@Nov 0 2026", "@Dec 31 23:59:59 9999", "1969-12-31", "1970-01-01 00:00:00", "2100-03-01",
    "Jan 31 + 1 month", "2026-01-31 1 month", "Mar 8 2026 2:30", "@Mar 8 02:30 2026",
    "@Oct 4 02:30 2026", "@   10:00", " @10:00", "@@10:00", "- 10min", "+ 10min", "--10min",
    "-+10", "+-10", "@10:00 junk", "@Mon 10:00", "@Monday", "@June 3", "10 EDT", "12:00 z",
    "12:00 j", "last", "ago", "10:00 dst", "10:00 cet dst", "2 weeks ago monday",
    "Nov 21 2026 UTC 10:00", "10:00:00.5", "@10:00:00.999999999", "@Nov 1 01:30 2026",
    "Nov 1 2026 1:30", "@Apr 5 02:30 2026",
]  # fmt: skip

SOON = utc(2026, 11, 21, 9, 0, 0)
ARCHIVE = ([SOON - 86400 * 10 - 1234, 123456789], [SOON - 3 * 86400 + 55, 987654321])
LIVE = ([SOON, 500000000], [PM_MAX_TIME_T, 0])


def _ambiguous(a: int, b: int, tz: str | None) -> bool:
    """Whether A and B are the two readings of a repeated wall-clock hour in zone TZ.

    glibc's mktime picks between them by what it guessed last, so libpcp may give either.
    """
    return a != b and a % NSEC == b % NSEC and pm_ctime(a // NSEC, tz) == pm_ctime(b // NSEC, tz)


def _ours(call, clocks: list[int]) -> list[dict[str, Any]]:
    """CALL's answers, as libpcp's are shaped, for each clock reading around libpcp's call.

    A date relative to now ("now", "10:00") depends on the clock; libpcp read it between
    the two readings the reference reports.
    """
    answers = []
    for clock in clocks:
        try:
            answers.append(call(clock))
        except TimeParseError as e:
            answers.append({"sts": -1, "errmsg": e.errmsg})
    return answers


@pytest.mark.interop
@pytest.mark.parametrize("zone", ZONES)
def test_times_match_libpcp(zone: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TZ", raising=False)
    reqs = [
        {"op": "time", "spec": spec, "start": start, "end": end}
        for spec in TIME_SPECS
        for start, end in (ARCHIVE, LIVE)
    ]
    for req, want in zip(reqs, reference(reqs, zone=zone), strict=True):
        end = None if req["end"][0] == PM_MAX_TIME_T else tuple(req["end"])

        def call(clock: int, req=req, end=end) -> dict[str, Any]:
            got = parse_time(req["spec"], tuple(req["start"]), end, tz=zone, now=(0, clock))
            return {"sts": 0, "ns": got}

        answers = _ours(call, want.pop("now"))
        if want in answers:
            continue
        got = answers[0]
        assert "ns" in got and "ns" in want, (req, want, got)
        assert _ambiguous(got["ns"], want["ns"], zone), (req, want, got)


WINDOW_S = [None, "-1hour", "@10:00", "+30min", "yesterday", "junk", "-10d", "@Nov 20 2026",
            "+0", "-0", "+100d"]  # fmt: skip
WINDOW_T = [None, "-30min", "+2hours", "@23:00", "junk", "+0", "-100d", "tomorrow"]
WINDOW_A = [None, "1min", "15min", "1h", "0", "junk", "7d", "1000d", "0.3", "1 sec"]
WINDOW_O = [None, "-5min", "+1h", "@12:00", "junk", "+1000d", "-1000d"]


@pytest.mark.interop
@pytest.mark.parametrize("zone", [None, "AEDT-11", "America/New_York"])
def test_windows_match_libpcp(zone: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TZ", raising=False)
    combos = [(s, t, a, o) for s in WINDOW_S for t in WINDOW_T for a in WINDOW_A for o in WINDOW_O]
    random.Random(3).shuffle(combos)
    reqs = [
        {"op": "window", "S": s, "T": t, "A": a, "O": o, "start": first, "end": last}
        for s, t, a, o in combos[:1200]
        for first, last in (ARCHIVE, LIVE)
    ]
    for req, want in zip(reqs, reference(reqs, zone=zone), strict=True):
        last = None if req["end"][0] == PM_MAX_TIME_T else tuple(req["end"])

        def call(clock: int, req=req, last=last) -> dict[str, Any]:
            w = parse_time_window(req["S"], req["T"], req["A"], req["O"], tuple(req["start"]),
                                  last, tz=zone, now=(0, clock))  # fmt: skip
            return {"sts": 0 if w.warning else 1, "errmsg": w.warning,
                    "start": w.start_ns, "end": w.end_ns, "origin": w.origin_ns}  # fmt: skip

        answers = _ours(call, want.pop("now"))
        if want["sts"] == 0 and want["errmsg"] is None:
            # libpcp loses its -A warning text when a later -T or -O parses; ours keeps it
            for got in answers:
                if got["sts"] == 0:
                    got["errmsg"] = None
        # libpcp may read the clock for each time it parses (-S, -T, -O): a call that
        # straddles a second can mix the two readings, each field from one of them
        mixed = len(answers) > 1 and all(want[k] in [a.get(k) for a in answers] for k in want)
        assert want in answers or mixed, (req, want, answers)


# the process's own zone is left to the tests that can set $TZ for both sides
_FORMAT_ZONES = [z for z in ZONES if z is not None] + ["CST6CDT", "Europe/London"]


@pytest.mark.interop
@settings(max_examples=examples(2), deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 4102444800), st.integers(0, NSEC - 1)), min_size=50, max_size=100
    )
)
def test_formatting_matches_libpcp(stamps: list[tuple[int, int]]) -> None:
    # around this year's changes in both hemispheres, and some edges
    edges = [utc(2026, 3, 8, 7), utc(2026, 11, 1, 6), utc(2026, 4, 4, 16), utc(2026, 10, 3, 16)]
    stamps = stamps + [(t + d, 0) for t in edges for d in range(-5400, 5400, 900)]
    stamps += [(0, 0), (1, NSEC - 1), (2**31 - 1, 0), (2**31, 0)]
    cases = [(zone, t) for zone in _FORMAT_ZONES for t in stamps]
    reqs = [{"op": "format", "t": list(t)} for _, t in cases]
    for k in range(0, len(reqs), len(stamps)):
        reqs[k]["zone"] = cases[k][0]
    for (zone, t), want in zip(cases, reference(reqs), strict=True):
        sec, nsec = t
        got = {
            "ctime": pm_ctime(t, zone) + "\n",
            "stamp": format_stamp((sec, nsec // 1000 * 1000), zone),
            "hrstamp": format_stamp(t, zone, digits=9),
        }
        assert got == {k: want[k] for k in got}, (zone, t)
        local = datetime.fromtimestamp(sec, new_zone(zone))
        fields = [local.year, local.month - 1, local.day, local.hour, local.minute]
        fields += [local.second, local.isoweekday() % 7, bool(local.dst())]
        assert [*fields, local.utcoffset() // timedelta(seconds=1)] == want["tm"], (zone, t)


@pytest.mark.interop
def test_local_zone_from_tz_matches_libpcp(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Australia/Melbourne")
    stamps = [(utc(2026, 4, 4, 16) + d, 5) for d in range(-7200, 7200, 600)]
    reqs = [{"op": "format", "t": list(t)} for t in stamps]
    reqs += [{"op": "time", "spec": s, "start": ARCHIVE[0], "end": ARCHIVE[1]}
             for s in ("@10:00", "@Apr 5 01:30 2026", "yesterday", "2026-11-21 10:00")]  # fmt: skip
    answers = reference(reqs, tz_env="Australia/Melbourne")
    for t, want in zip(stamps, answers[: len(stamps)], strict=True):
        assert pm_ctime(t) + "\n" == want["ctime"]
        assert format_stamp(t, digits=9) == want["hrstamp"]
    for req, want in zip(reqs[len(stamps) :], answers[len(stamps) :], strict=True):
        clocks = want.pop("now")
        got = [{"sts": 0, "ns": parse_time(req["spec"], tuple(ARCHIVE[0]), tuple(ARCHIVE[1]),
                                           now=(0, c))} for c in clocks]  # fmt: skip
        assert want in got, (req, want, got)


@pytest.mark.interop
def test_timezone_names_match_libpcp() -> None:
    tzs = [None, "", ":Australia/Melbourne", ":America/New_York", ":Asia/Kolkata", ":UTC",
           ":junk", "AEDT-11", "UTC", "EST5EDT", "Australia/Melbourne", ":Etc/GMT+5",
           ":Europe/Dublin", ":America/St_Johns", ":Pacific/Chatham", ":Australia/Lord_Howe",
           ":Etc/GMT-14", ":America/Caracas", "X" * 41, ":" + "A" * 50, "<+0530>-5:30",
           "AEST-10:00:00AEDT-11:00:00,M10.1.0/2:00:00,M4.1.0/3:00:00",
           "ABC-10:00:00DEF-11:00:00,M10.1.0/2:00:00,M4.1.0/3:00:00" + "Z" * 30,
           ":Asia/Kathmandu", ":Africa/Monrovia"]  # fmt: skip
    answers = reference([{"op": "timezone", "TZ": tz} for tz in tzs] + [{"op": "zoneinfo"}])
    environ = {k: v for k, v in os.environ.items() if k != "TZ"}
    for tz, want in zip(tzs, answers, strict=False):
        env = environ if tz is None else {**environ, "TZ": tz}
        assert pcp_timezone(None, env) == want["tz"], tz
    assert pcp_zoneinfo() == answers[-1]["zoneinfo"]


@pytest.mark.skipif(
    not Path("/usr/share/zoneinfo/America/New_York").exists(),
    reason="the system time zone database (tzdata package) is not installed",
)
@pytest.mark.parametrize("zone", ["UTC", "Australia/Melbourne", "America/New_York", "Asia/Kolkata"])
def test_format_stamps_is_format_stamp_for_each(zone):
    """Across both 2023 daylight-saving changes of each zone, at odd times of day."""
    times = [t * 1_000_000_000 + 123_456_789 for t in range(1_680_000_000, 1_700_000_000, 7919)]
    times += [1_699_164_000 * 1_000_000_000 + k * 997_000_000 for k in range(-5000, 5000, 37)]
    want = [format_stamp(divmod(t, NSEC), zone) for t in times]
    assert format_stamps(times, zone) == want
