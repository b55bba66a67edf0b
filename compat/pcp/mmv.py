"""PCP's `pcp.mmv` module: publish metrics from a Python program through an MMV file.

The same names and behaviour as PCP's binding over libpcp_mmv: describe instance
domains (`mmv_indom`, `mmv_instance`) and metrics (`mmv_metric`), hand them to a
`MemoryMappedValues`, `start()` it, then update values through the handles
`lookup_mapping` gives.  The file is laid out by purepcp.pmapi.mmv and updated in
place through a shared memory map, as libpcp_mmv does; the mmv agent (ours or
PCP's pmdammv) exports it as mmv.NAME.METRIC.

PCP's binding is kept exactly, quirks included, so that a script writes the same
file under either: `mmv_metric` and `mmv_indom` store the short text as the help
text too, and `mmv_metric` leaves `semantics` and `dimension` zero (set them on the
structure after building it to have them in the file); a file that cannot be
written, or a description libpcp_mmv refuses, leaves the values unstarted
(`started()` is 0) rather than raising.
"""

from __future__ import annotations

import contextlib
import ctypes
import mmap
import os
import struct
import time
from ctypes import POINTER, Structure, c_char, c_char_p, c_int, c_int64, c_uint
from typing import Any

from purepcp.pmapi import mmv as _mmv
from purepcp.pmapi.mmv import (
    MMV_ARRAY_TYPE,
    MMV_BOOLEAN_TYPE,
    MMV_FLAG_NOPREFIX,
    MMV_FLAG_PROCESS,
    MMV_FLAG_SENTINEL,
    MMV_INDOM_NULL,
    MMV_LABELMAX,
    MMV_MAP_TYPE,
    MMV_NAMEMAX,
    MMV_NULL_TYPE,
    MMV_NUMBER_TYPE,
    MMV_SEM_COUNTER,
    MMV_SEM_DISCRETE,
    MMV_SEM_INSTANT,
    MMV_STRING_TYPE,
    MMV_STRINGMAX,
    MMV_TYPE_DOUBLE,
    MMV_TYPE_ELAPSED,
    MMV_TYPE_FLOAT,
    MMV_TYPE_I32,
    MMV_TYPE_I64,
    MMV_TYPE_NOSUPPORT,
    MMV_TYPE_STRING,
    MMV_TYPE_U32,
    MMV_TYPE_U64,
)

from .structures import pmAtomValue, pmUnits


def _bytes(text: Any) -> Any:
    """TEXT as bytes (PCP's binding encodes str as UTF-8; None and bytes pass)."""
    return text.encode("utf-8") if isinstance(text, str) else text


class mmv_instance(Structure):
    """One instance of an instance domain: internal id and external name."""

    _fields_ = [("internal", c_int), ("external", c_char * MMV_NAMEMAX)]

    def __init__(self, inst: int, name: str | bytes) -> None:
        super().__init__()
        self.external = _bytes(name)
        self.internal = inst


class mmv_indom(Structure):
    """An instance domain: serial, instances (set_instances) and help texts."""

    _fields_ = [
        ("serial", c_uint),
        ("count", c_uint),
        ("instances", POINTER(mmv_instance)),
        ("shorttext", c_char_p),
        ("helptext", c_char_p),
    ]

    def __init__(
        self, serial: int, shorttext: str | bytes = "", helptext: str | bytes = ""
    ) -> None:
        super().__init__()
        self.shorttext = _bytes(shorttext)
        self.helptext = _bytes(shorttext)  # (PCP's binding: the short text, twice)
        self.serial = serial

    def set_instances(self, instances: list[mmv_instance]) -> None:
        """Make INSTANCES this domain's instances (copied, with their count)."""
        self.count = len(instances)
        array = (mmv_instance * self.count)()
        for slot, inst in zip(array, instances, strict=True):
            slot.internal, slot.external = inst.internal, inst.external
        self.instances = array


class mmv_metric(Structure):
    """One metric: name, item, type (`typeof`), semantics, units, indom and texts."""

    _fields_ = [
        ("name", c_char * MMV_NAMEMAX),
        ("item", c_int),
        ("typeof", c_int),
        ("semantics", c_int),
        ("dimension", pmUnits),
        ("indom", c_uint),
        ("shorttext", c_char_p),
        ("helptext", c_char_p),
    ]

    def __init__(
        self,
        name: str | bytes,
        item: int,
        typeof: int,
        semantics: int,
        dimension: pmUnits,
        indom: int = 0,
        shorttext: str | bytes = "",
        helptext: str | bytes = "",
    ) -> None:
        super().__init__()
        # As PCP's binding: semantics and dimension are not stored, the short text
        # is stored as the help text too.
        self.shorttext = _bytes(shorttext)
        self.helptext = _bytes(shorttext)
        self.typeof = typeof
        self.indom = indom
        self.item = item
        self.name = _bytes(name)


def _text(raw: bytes | None) -> str | None:
    return None if raw is None else raw.decode("utf-8", "surrogateescape")


def _description(
    metrics: list[mmv_metric], indoms: list[mmv_indom], cluster: int, flags: int
) -> _mmv.Description:
    """What the structures describe, as purepcp.pmapi.mmv records."""
    return _mmv.Description(
        tuple(
            _mmv.Metric(
                _text(m.name) or "",
                m.item,
                m.typeof,
                m.semantics,
                struct.unpack("=I", bytes(m.dimension))[0],
                m.indom,
                _text(m.shorttext),
                _text(m.helptext),
            )
            for m in metrics
        ),
        tuple(
            _mmv.Indom(
                i.serial,
                tuple(
                    _mmv.Instance(i.instances[k].internal, _text(i.instances[k].external) or "")
                    for k in range(i.count if i.instances else 0)
                ),
                _text(i.shorttext),
                _text(i.helptext),
            )
            for i in indoms
        ),
        cluster=cluster,
        flags=flags,
    )


def _path(name: bytes) -> str:
    """Where file NAME lives: $PCP_TMP_DIR/mmv/NAME, or NAME itself if absolute."""
    text = os.fsdecode(name)
    if text.startswith(os.sep):
        return text
    from purepcp.pmapi.mmvdir import make_stats_dir, stats_dir

    folder = stats_dir()
    make_stats_dir(folder)  # (PCP's packaging makes it; purepcp's layout, its users)
    return os.path.join(folder, text)


def _now_usec() -> float:
    """The time of day in microseconds, as libpcp_mmv times intervals."""
    sec, usec = divmod(time.time_ns() // 1000, 1_000_000)
    return sec * 1e6 + usec


class _Mapped:
    """One started file: its memory map, and each value record's type by offset."""

    def __init__(self, path: str, layout: _mmv.Layout) -> None:
        with contextlib.suppress(OSError):
            os.unlink(path)  # a new file: the agent notices and reloads
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            os.fchmod(fd, 0o644)  # (what libpcp_mmv's umask gives, whatever ours is)
            os.ftruncate(fd, len(layout.data))
            self.map = mmap.mmap(fd, len(layout.data), mmap.MAP_SHARED)
        finally:
            os.close(fd)
        g2 = _mmv.G2_OFFSET
        self.map[:] = layout.data[:g2] + bytes(8) + layout.data[g2 + 8 :]
        self.map[g2 : g2 + 8] = layout.data[g2 : g2 + 8]  # complete: readers may load it
        self.layout = layout
        self.base = ctypes.addressof(c_char.from_buffer(self.map))

    def pointer(self, offset: int | None) -> Any:
        """A POINTER(pmAtomValue) to the value at OFFSET (NULL for None)."""
        if offset is None:
            return POINTER(pmAtomValue)()
        return ctypes.pointer(pmAtomValue.from_buffer(self.map, offset))

    def record(self, mapping: Any) -> tuple[Any, int, int] | None:
        """(atom, offset, type) of the value MAPPING points at; None for NULL or a
        pointer into some other map."""
        try:
            atom = mapping.contents
        except (ValueError, AttributeError):
            return None
        offset = ctypes.addressof(atom) - self.base
        type_ = self.layout.types.get(offset)
        return None if type_ is None else (atom, offset, type_)

    def extra(self, offset: int) -> Any:
        return c_int64.from_buffer(self.map, offset + 8)

    def close(self) -> None:
        with contextlib.suppress(BufferError):  # handles point into it: it goes with them
            self.map.close()


def _number(value: Any, position: int) -> float:
    """VALUE as the C double PCP's binding passes; ctypes' error otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ctypes.ArgumentError(f"argument {position}: TypeError: wrong type")
    return float(value)


#: How a number is added to (or put in) each type's atom field, as C converts it.
_FIELD = {
    MMV_TYPE_I32: "l",
    MMV_TYPE_U32: "ul",
    MMV_TYPE_I64: "ll",
    MMV_TYPE_U64: "ull",
    MMV_TYPE_FLOAT: "f",
    MMV_TYPE_DOUBLE: "d",
}


def _c_cast(value: float, type_: int) -> float | int:
    return value if type_ in (MMV_TYPE_FLOAT, MMV_TYPE_DOUBLE) else int(value)


class MemoryMappedValues:
    """A set of MMV metrics a program publishes, for the mmv agent to export."""

    def __init__(self, name: str | bytes, flags: int = 0, cluster: int = 42) -> None:
        self._name = _bytes(name)
        self._cluster = cluster
        self._flags = flags
        self._metrics: list[mmv_metric] = []
        self._indoms: list[mmv_indom] = []
        self._handle: _Mapped | None = None

    # -- life cycle -----------------------------------------------------------------

    def start(self) -> None:
        """Write the file with every metric and instance: from now the agent sees it.
        A description libpcp_mmv refuses, or a file that cannot be written, leaves
        the values unstarted."""
        desc = _description(self._metrics, self._indoms, self._cluster, self._flags)
        now = time.time_ns() // 1000
        gen = _mmv.generation(now // 1_000_000, now % 1_000_000)
        try:
            layout = _mmv.build(desc, gen=gen, process=os.getpid(), version=_mmv.MMV_VERSION1)
            self._handle = _Mapped(_path(self._name), layout)
        except (_mmv.MMVError, OSError, ValueError):
            self._handle = None

    def stop(self) -> None:
        """Unmap the file (and remove it, with MMV_FLAG_PROCESS): no more updates."""
        if self._handle is not None:
            if self._flags & MMV_FLAG_PROCESS:
                with contextlib.suppress(OSError):
                    os.unlink(_path(self._name))
            self._handle.close()
        self._handle = None

    def restart(self) -> None:
        """Stop if started, and start again."""
        self.stop()
        self.start()

    def started(self) -> int:
        """1 while the file is mapped, else 0."""
        return 0 if self._handle is None else 1

    def add_indoms(self, indoms: list[mmv_indom]) -> None:
        """Make INDOMS the instance domains (restarting if started)."""
        self._indoms = indoms
        if self.started():
            self.restart()

    def add_indom(self, indom: mmv_indom) -> None:
        """Add one instance domain."""
        self._indoms.append(indom)
        self.add_indoms(self._indoms)

    def add_metrics(self, metrics: list[mmv_metric]) -> None:
        """Make METRICS the metrics (restarting if started)."""
        self._metrics = metrics
        if self.started():
            self.restart()

    def add_metric(self, metric: mmv_metric) -> None:
        """Add one metric."""
        self._metrics.append(metric)
        self.add_metrics(self._metrics)

    # -- handles ----------------------------------------------------------------------

    def _offset(self, name: Any, inst: Any) -> int | None:
        """Where the value of metric NAME, instance INST is (as mmv_lookup_value_desc:
        a metric without instances answers whatever INST is)."""
        handle = self._handle
        if handle is None or name is None:
            return None
        name, inst = _bytes(name), _bytes(inst)
        key = name.decode("utf-8", "surrogateescape")
        values = handle.layout.values
        offset = values.get((key, None))
        if offset is not None or inst is None:
            return offset
        return values.get((key, inst.decode("utf-8", "surrogateescape")))

    def lookup_mapping(self, name: str | bytes, inst: str | bytes | None) -> Any:
        """A handle on the value of metric NAME, instance INST (None for a metric
        without instances): a POINTER(pmAtomValue) into the map, NULL if not found.
        The handle is what add, inc, set, set_string and interval_* take."""
        if self._handle is None:
            return POINTER(pmAtomValue)()
        return self._handle.pointer(self._offset(name, inst))

    def _update(self, mapping: Any, how: str, number: float) -> None:
        handle = self._handle
        found = None if handle is None else handle.record(mapping)
        if found is None:
            return
        atom, offset, type_ = found
        if type_ == MMV_TYPE_ELAPSED:
            extra = handle.extra(offset)  # type: ignore[union-attr]
            if how == "set":
                atom.ll, extra.value = int(number), 0
            elif number < 0:  # the start of a timed section
                extra.value = int(number)
            else:
                atom.ll += extra.value + int(number)
                extra.value = 0
            return
        field = _FIELD.get(type_)
        if field is not None:
            change = _c_cast(number, type_)
            setattr(atom, field, change if how == "set" else getattr(atom, field) + change)

    def add(self, mapping: Any, value: float) -> None:
        """Add VALUE to the mapped value."""
        self._update(mapping, "add", _number(value, 3))

    def inc(self, mapping: Any) -> None:
        """Add one to the mapped value."""
        self._update(mapping, "add", 1.0)

    def set(self, mapping: Any, value: float) -> None:
        """Set the mapped value to VALUE."""
        self._update(mapping, "set", _number(value, 3))

    def set_string(self, mapping: Any, value: str | bytes) -> None:
        """Set the mapped string value (ignored unless shorter than 255 bytes)."""
        raw = _bytes(value)
        handle = self._handle
        found = None if handle is None else handle.record(mapping)
        if found is None or raw is None:
            return
        atom, offset, type_ = found
        if type_ != MMV_TYPE_STRING or not 0 <= len(raw) < MMV_STRINGMAX - 1:
            return
        where = handle.extra(offset).value  # type: ignore[union-attr]
        text = raw.split(b"\0", 1)[0]
        handle.map[where : where + MMV_STRINGMAX] = text.ljust(MMV_STRINGMAX, b"\0")  # type: ignore[union-attr]
        atom.l = len(raw)

    def interval_start(self, mapping: Any) -> Any:
        """Start timing an interval on the mapped ELAPSED value; returns the handle
        to pass to interval_end."""
        if self._handle is not None and self._handle.record(mapping) is not None:
            self._update(mapping, "add", -_now_usec())
        return mapping

    def interval_end(self, mapping: Any) -> None:
        """End the interval: the time since interval_start is added to the value."""
        if self._handle is not None and self._handle.record(mapping) is not None:
            self._update(mapping, "add", _now_usec())

    # -- by name (slower: a lookup each time) -------------------------------------------

    def lookup_add(self, name: str | bytes, inst: str | bytes | None, value: float) -> None:
        """Add VALUE to metric NAME's instance INST."""
        number = _number(value, 4)
        self._update(self.lookup_mapping(name, inst), "add", number)

    def lookup_inc(self, name: str | bytes, inst: str | bytes | None) -> None:
        """Add one to metric NAME's instance INST."""
        self._update(self.lookup_mapping(name, inst), "add", 1.0)

    def lookup_set(self, name: str | bytes, inst: str | bytes | None, value: float) -> None:
        """Set metric NAME's instance INST to VALUE."""
        number = _number(value, 4)
        self._update(self.lookup_mapping(name, inst), "set", number)

    def lookup_interval_start(self, name: str | bytes, inst: str | bytes | None) -> Any:
        """Start an interval on metric NAME's instance INST; the handle for interval_end."""
        mapping = self.lookup_mapping(name, inst)
        return self.interval_start(mapping) if mapping else POINTER(pmAtomValue)()

    def lookup_set_string(
        self, name: str | bytes, inst: str | bytes | None, s: str | bytes
    ) -> None:
        """Set the string metric NAME's instance INST to S."""
        self.set_string(self.lookup_mapping(name, inst), s)

    def _fallback(self, name: Any, inst: Any, fall: Any) -> Any:
        if isinstance(fall, str):  # PCP's binding passes it on unencoded: ctypes refuses
            raise ctypes.ArgumentError("argument 4: TypeError: wrong type")
        mapping = self.lookup_mapping(name, inst)
        return mapping if mapping else self.lookup_mapping(name, fall)

    def lookup_add_fallback(
        self, name: str | bytes, inst: str | bytes | None, fall: bytes | None, value: float
    ) -> None:
        """Add VALUE to NAME's instance INST, or to instance FALL if INST is not found."""
        mapping = self._fallback(name, inst, fall)
        self._update(mapping, "add", _number(value, 5))

    def lookup_inc_fallback(
        self, name: str | bytes, inst: str | bytes | None, fallback: bytes | None
    ) -> None:
        """Add one to NAME's instance INST, or to instance FALLBACK if INST is not found."""
        self._update(self._fallback(name, inst, fallback), "add", 1.0)


__all__ = [
    "MMV_ARRAY_TYPE",
    "MMV_BOOLEAN_TYPE",
    "MMV_FLAG_NOPREFIX",
    "MMV_FLAG_PROCESS",
    "MMV_FLAG_SENTINEL",
    "MMV_INDOM_NULL",
    "MMV_LABELMAX",
    "MMV_MAP_TYPE",
    "MMV_NAMEMAX",
    "MMV_NULL_TYPE",
    "MMV_NUMBER_TYPE",
    "MMV_SEM_COUNTER",
    "MMV_SEM_DISCRETE",
    "MMV_SEM_INSTANT",
    "MMV_STRINGMAX",
    "MMV_STRING_TYPE",
    "MMV_TYPE_DOUBLE",
    "MMV_TYPE_ELAPSED",
    "MMV_TYPE_FLOAT",
    "MMV_TYPE_I32",
    "MMV_TYPE_I64",
    "MMV_TYPE_NOSUPPORT",
    "MMV_TYPE_STRING",
    "MMV_TYPE_U32",
    "MMV_TYPE_U64",
    "MemoryMappedValues",
    "mmv_indom",
    "mmv_instance",
    "mmv_metric",
    "pmAtomValue",
    "pmUnits",
]
