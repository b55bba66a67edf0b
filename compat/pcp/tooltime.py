"""The tool-support helpers PCP's binding has on pmContext, which pmconfig and PCP's
tools call (pmContext.set_connect_options, get_current_tz, set_timezone,
datetime_to_secs, get_mode_step, prepare_execute): the context and source a command line
names, the process's time zone, and an archive's replay mode."""

from __future__ import annotations

import datetime
import os
import time

import cpmapi as c_api

from . import structures as _structures


def _new_zone(tz: str) -> None:
    """pmNewZone: TZ made the process's zone."""
    from cpmapi import zones
    from purepcp.pmapi.timewindow import new_zone

    zones.add(new_zone(tz), tz)


def _which_zone() -> str:
    from cpmapi import zones

    return zones.which()


def set_connect_options(options, source, speclocal):
    """The context type and source named by the options (else by SOURCE: a path is an
    archive, "@" local, anything else a host); ends option processing."""
    if c_api.pmGetOptionArchives():
        typed, source = c_api.PM_CONTEXT_ARCHIVE, options.pmGetOptionArchives()[0]
    elif c_api.pmGetOptionHosts():
        typed, source = c_api.PM_CONTEXT_HOST, options.pmGetOptionHosts()[0]
    elif c_api.pmGetOptionLocalPMDA():
        typed, source = c_api.PM_CONTEXT_LOCAL, None
    elif "/" in source:
        typed = c_api.PM_CONTEXT_ARCHIVE
        options.pmSetOptionArchive(source)
    elif source != "@":
        typed = c_api.PM_CONTEXT_HOST
        options.pmSetOptionHost(source)
    else:
        typed, source = c_api.PM_CONTEXT_LOCAL, None
        options.pmSetOptionLocalPMDA()
    options.pmSetOptionContext(typed)
    if typed == c_api.PM_CONTEXT_LOCAL and speclocal:
        for spec in filter(None, speclocal.split(";")):
            options.pmSetOptionSpecLocal(spec)
    options.pmSetOptionFlags(options.pmGetOptionFlags() | c_api.PM_OPTFLAG_DONE)
    c_api.pmEndOptions()
    return typed, source


def get_current_tz(options=None, set_dst=-1):
    """The local zone as a POSIX TZ string ("EST+5", "IST-5:30")."""
    if set_dst >= 0:
        dst = 1 if set_dst else 0
    else:
        when = options.pmGetOptionOrigin() if options else None
        dst = time.localtime(when).tm_isdst if when is not None else time.localtime().tm_isdst
    offset = time.altzone if dst else time.timezone
    text = time.tzname[dst]
    if offset:
        hours, minutes = int(offset / 3600.0), int(offset % 3600 / 60)
        text += ("+" if offset >= 0 else "") + str(hours) + (f":{minutes}" if minutes else "")
    return text


def posix_tz_to_utc_offset(timezone):
    """A POSIX TZ offset as "UTC+H" (the POSIX sign is the reverse)."""
    if not timezone or ("+" not in timezone and "-" not in timezone):
        return "UTC+0"
    if "+" in timezone:
        return "UTC-" + timezone.split("+")[1]
    return "UTC+" + timezone.split("-")[1]


def set_timezone(options):
    """Make the -Z zone, the -z (context's) zone or the local zone the process's."""
    zone = options.pmGetOptionTimezone()
    if zone:
        os.environ["TZ"] = zone
        time.tzset()
        _new_zone(zone)
    elif options.pmGetOptionHostZone():
        os.environ["TZ"] = _which_zone()
        time.tzset()
    else:
        zone = get_current_tz(options)
        os.environ["TZ"] = zone
        time.tzset()
        _new_zone(zone)


_SECONDS_PER = {
    c_api.PM_TIME_SEC: 1.0,
    c_api.PM_TIME_MSEC: 1e-3,
    c_api.PM_TIME_USEC: 1e-6,
    c_api.PM_TIME_NSEC: 1e-9,
}


def datetime_to_secs(value, precision=c_api.PM_TIME_SEC):
    """VALUE (a naive local datetime) as time since the epoch in PRECISION units."""
    if precision not in _SECONDS_PER:
        raise ValueError("Unsupported precision requested")
    delta = value - datetime.datetime.fromtimestamp(0)
    micro = delta.microseconds + (delta.seconds + delta.days * 86400.0) * 1e6
    return micro / 1e6 / _SECONDS_PER[precision] if precision != c_api.PM_TIME_USEC else micro


def get_mode_step(archive, interpol, interval):
    """pmSetMode's mode and step: forward without interpolation, else interpolated."""
    if not interpol or archive:
        return c_api.PM_MODE_FORW, None
    return c_api.PM_MODE_INTERP, _structures.timespec(interval.tv_sec, interval.tv_usec * 1000)


def prepare_execute(self, options, archive, interpol, interval):
    """Set the zone, and an archive's mode from the origin."""
    set_timezone(options)
    if self.type == c_api.PM_CONTEXT_ARCHIVE:
        mode, step = get_mode_step(archive, interpol, interval)
        self.pmSetModeHighRes(mode, options.pmGetOptionHighResOrigin(), step)
