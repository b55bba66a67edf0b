"""The other PCP processes running on this host, as pmdapmcd finds them: pmproxy and pmie
by their pid files in $PCP_RUN_DIR, pmloggers by their port files in
$PCP_TMP_DIR/pmlogger (libpcp's __pmLogFindLocalPorts), pmies by their statistics
files in $PCP_TMP_DIR/pmie.  Names and numbers in them are read with C's strtol,
strtoul and atoi, casts included, as PCP reads them."""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from purepcp.pmapi.cnumbers import atoi, int32, strtol, strtoul, uint32
from purepcp.pmapi.errors import PMError
from purepcp.pmapi.pmiestats import PMIE_FIELDS, PMIE_STATS
from purepcp.pmapi.process import process_exists
from purepcp.pmapi.values import string_value

__all__ = [
    "PMIE_FIELDS",
    "PMIE_STATS",
    "LoggerPort",
    "find_pmies",
    "find_pmloggers",
    "process_exists",
    "running_services",
    "service_pid",
]


def service_pid(run_dir: str, name: str) -> int:
    """The pid in RUN_DIR/NAME.pid if that process runs, else 0: atoi of its first word
    (fscanf's %63s)."""
    try:
        words = Path(run_dir, f"{name}.pid").read_bytes().split()
    except OSError:
        return 0
    pid = atoi(words[0][:63]) if words else 0
    return pid if process_exists(pid) else 0


def running_services(run_dir: str) -> str:
    """pmcd.services: pmcd, and pmproxy when its pid file names a live process."""
    return "pmcd pmproxy" if service_pid(run_dir, "pmproxy") else "pmcd"


@dataclass(frozen=True)
class LoggerPort:
    """One running pmlogger's port file in $PCP_TMP_DIR/pmlogger (pid 0: "primary")."""

    pid: int
    name: str
    port: int
    pmcd_host: str | None
    archive: str | None


def _logger_pid(name: str) -> int | None:
    """The pmlogger a port file NAME is for: is_portfile's (pid_t)strtol, then the whole
    name as a pid (0 for "primary"); None for a file that is not a live one's."""
    scan = strtol(name)
    pid = int32(int(scan.value))
    if not (process_exists(pid) if pid > 1 else name == "primary"):
        return None
    if scan.end == len(name):
        return pid
    return 0 if name == "primary" else None


def find_pmloggers(tmp_dir: str) -> list[LoggerPort]:
    """The running pmloggers' port files, in name order, as __pmLogFindLocalPorts reads them."""
    directory = Path(tmp_dir, "pmlogger")
    try:
        names = sorted(os.listdir(directory))
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise PMError(-(exc.errno or errno.EIO)) from None
    found = []
    for name in names:
        pid = _logger_pid(name)
        if pid is None:
            continue
        try:
            with open(directory / name, errors="replace") as f:
                first, host, archive = f.readline(), f.readline(), f.readline()
        except OSError:
            continue
        number = strtol(first)  # the port, which must end its line
        if not first or first[number.end : number.end + 1] != "\n":
            continue
        found.append(
            LoggerPort(
                pid,
                name,
                uint32(int(number.value)),  # (int)strtol, as the U32 metric's word
                host.split("\n", 1)[0] if host else None,
                archive.split("\n", 1)[0] if archive else None,
            )
        )
    return found


def _pmie_pid(name: str) -> int | None:
    """The pmie a statistics file NAME is for: all of it read by strtoul, as a pid_t."""
    scan = strtoul(name)
    return int32(int(scan.value)) if scan.end == len(name) else None


def find_pmies(tmp_dir: str, run_dir: str) -> dict[int, tuple[str, dict[str, Any]]]:
    """{inst: (name, {metric leaf: value})} for each running pmie, and "primary" (inst 0)."""
    directory = Path(tmp_dir, "pmie")
    try:
        names = sorted(os.listdir(directory), key=lambda n: (len(n), n))
    except OSError:
        return {}
    found: dict[int, tuple[str, dict[str, Any]]] = {}
    for name in names:
        pid = _pmie_pid(name)
        if pid is None or not process_exists(pid):
            continue
        try:
            data = (directory / name).read_bytes()
        except OSError:
            continue
        if len(data) != PMIE_STATS.size:
            continue
        fields = PMIE_STATS.unpack(data)
        if fields[-1] != 1:  # the layout's version
            continue
        texts = [string_value(raw.split(b"\0", 1)[0] + b"\0") for raw in fields[:3]]
        found[pid] = (name, dict(zip(PMIE_FIELDS, (*texts, *fields[3:-1]), strict=True)))
    primary = service_pid(run_dir, "pmie")
    if primary in found:
        found[0] = ("primary", found[primary][1])
    return found
