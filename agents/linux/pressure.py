"""The linux agent's pressure stall information: kernel.all.pressure.*, as PCP 6.0.3's
pmdalinux reads /proc/pressure/{cpu,memory,io,irq} (proc_pressure.c).

Each file's "some" and/or "full" line gives three averages (instances "10 second",
"1 minute", "5 minute") read as C floats, and a total in microseconds; a line that is
missing or does not scan (and every line after it) gives no values.
"""

from __future__ import annotations

import re
from typing import Any

from purepcp.pmapi.cnumbers import strtof_decimal, strtoul_value
from purepcp.pmda import InDom, refresh

from .base import LinuxBase
from .records import COUNTER, FLOAT, INSTANT, NONE, U64, USEC, MetricInfo, records_of

PRESSUREAVG = 37  # pmdalinux's instance domain serial (linux.h)

#: (name, cluster, item, type, indom, semantics, units, source)
_TABLE: tuple[tuple[str, int, int, Any, int | None, Any, Any, str], ...] = (
    ("kernel.all.pressure.cpu.some.avg", 83, 0, FLOAT, PRESSUREAVG, INSTANT, NONE, "cpu"),
    ("kernel.all.pressure.cpu.some.total", 83, 1, U64, None, COUNTER, USEC, "cpu"),
    ("kernel.all.pressure.memory.some.avg", 84, 0, FLOAT, PRESSUREAVG, INSTANT, NONE, "memory"),
    ("kernel.all.pressure.memory.some.total", 84, 1, U64, None, COUNTER, USEC, "memory"),
    ("kernel.all.pressure.memory.full.avg", 84, 2, FLOAT, PRESSUREAVG, INSTANT, NONE, "memory"),
    ("kernel.all.pressure.memory.full.total", 84, 3, U64, None, COUNTER, USEC, "memory"),
    ("kernel.all.pressure.io.some.avg", 85, 0, FLOAT, PRESSUREAVG, INSTANT, NONE, "io"),
    ("kernel.all.pressure.io.some.total", 85, 1, U64, None, COUNTER, USEC, "io"),
    ("kernel.all.pressure.io.full.avg", 85, 2, FLOAT, PRESSUREAVG, INSTANT, NONE, "io"),
    ("kernel.all.pressure.io.full.total", 85, 3, U64, None, COUNTER, USEC, "io"),
    ("kernel.all.pressure.irq.full.avg", 93, 0, FLOAT, PRESSUREAVG, INSTANT, NONE, "irq"),
    ("kernel.all.pressure.irq.full.total", 93, 1, U64, None, COUNTER, USEC, "irq"),
)

#: This family's metrics, as pmdalinux declares them.
METRICS: tuple[MetricInfo, ...] = records_of(_TABLE)

_FLOAT = rb"[ \t\n\v\f\r]*([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"
_S = rb"[ \t\n\v\f\r]*"


def _pressure_line(kind: bytes) -> re.Pattern[bytes]:
    """fscanf's "KIND avg10=%f avg60=%f avg300=%f total=%llu\\n" as a pattern."""
    return re.compile(
        kind
        + _S
        + rb"avg10="
        + _FLOAT
        + _S
        + rb"avg60="
        + _FLOAT
        + _S
        + rb"avg300="
        + _FLOAT
        + _S
        + rb"total="
        + _S
        + rb"([+-]?)([0-9]+)"
        + _S
    )


_SOME, _FULL = _pressure_line(b"some"), _pressure_line(b"full")
Stall = tuple[tuple[float, float, float], int]


def parse_pressure(data: bytes, kinds: tuple[str, ...]) -> dict[str, Stall]:
    """The lines of a /proc/pressure file in the order pmdalinux reads them (KINDS, "some"
    and/or "full"): {kind: ((avg10, avg60, avg300), total)} for those that scan."""
    found: dict[str, Stall] = {}
    at = 0
    for kind in kinds:
        m = (_SOME if kind == "some" else _FULL).match(data, at)
        if m is None:
            break
        avgs = (strtof_decimal(m[1]), strtof_decimal(m[2]), strtof_decimal(m[3]))  # %f
        found[kind] = (avgs, strtoul_value(m[4] + m[5]))  # %llu
        at = m.end()
    return found


#: (cluster, /proc/pressure file, the kinds pmdalinux reads, metric prefix)
PRESSURE_FILES: tuple[tuple[int, str, tuple[str, ...], str], ...] = (
    (83, "cpu", ("some",), "kernel.all.pressure.cpu"),
    (84, "memory", ("some", "full"), "kernel.all.pressure.memory"),
    (85, "io", ("some", "full"), "kernel.all.pressure.io"),
    (93, "irq", ("full",), "kernel.all.pressure.irq"),
)
PRESSURE_INSTANCES = {10: "10 second", 60: "1 minute", 300: "5 minute"}
_PRESSURE = {row[0]: row for row in PRESSURE_FILES}


class Pressure(LinuxBase):
    """kernel.all.pressure.*: one cluster per /proc/pressure file."""

    pressure_avg_indom = InDom(PRESSUREAVG, PRESSURE_INSTANCES)

    def _pressure_file(self, cluster: int) -> dict[str, Any]:
        """One /proc/pressure file's metrics: no values for a line that is missing."""
        _, file, kinds, prefix = _PRESSURE[cluster]
        data = self.proc.read(f"/proc/pressure/{file}")
        values: dict[str, Any] = {}
        for kind, (avg, total) in parse_pressure(data or b"", kinds).items():
            values[f"{prefix}.{kind}.avg"] = dict(zip(PRESSURE_INSTANCES, avg, strict=True))
            values[f"{prefix}.{kind}.total"] = total
        return values

    @refresh(83)
    def _pressure_refresh_cpu(self) -> dict[str, Any]:
        """Cluster 83: /proc/pressure/cpu (its "some" line)."""
        return self._pressure_file(83)

    @refresh(84)
    def _pressure_refresh_memory(self) -> dict[str, Any]:
        """Cluster 84: /proc/pressure/memory."""
        return self._pressure_file(84)

    @refresh(85)
    def _pressure_refresh_io(self) -> dict[str, Any]:
        """Cluster 85: /proc/pressure/io."""
        return self._pressure_file(85)

    @refresh(93)
    def _pressure_refresh_irq(self) -> dict[str, Any]:
        """Cluster 93: /proc/pressure/irq (its "full" line)."""
        return self._pressure_file(93)
