"""A file's label loaded and checked as libpcp loads and checks it, with the -Dlog trace
libpcp prints, and an archive's files found as libpcp finds them.

`Label` is libpcp's __pmLogLabel, filled in place as __pmLogLoadLabel fills it: a load
that fails part way leaves what it had read (the magic, say), and one that fails at the
trailer drops the strings; pmloglabel's choice of the golden label depends on that.
"""

from __future__ import annotations

import errno
import os
import struct
import sys
from dataclasses import dataclass

from purepcp.pmapi.archive.format import LABEL_BYTES, LABEL_V2, LABEL_V3
from purepcp.pmapi.archive.reader import file_bytes, find_file, log_base_name
from purepcp.pmapi.archive.versions import PM_LOG_MAGIC, PM_LOG_VERS02, PM_LOG_VERS03, swap_sec
from purepcp.pmapi.cnumbers import int32
from purepcp.pmapi.errors import PM_ERR_LABEL, PM_ERR_LOGFILE, PM_ERR_NODATA, PMError
from purepcp.pmapi.timewindow import tzinfo_for
from purepcp.pmapi.timewindow.epoch import localtime

PM_LOG_VOL_TI = -2
PM_LOG_VOL_META = -1
#: the string fields' sizes: (hostname, timezone, zoneinfo) by version
_FIELDS = {PM_LOG_VERS02: (64, 40, 0), PM_LOG_VERS03: (256, 256, 256)}


@dataclass
class Label:
    """__pmLogLabel: what a label holds (strings None when not loaded)."""

    magic: int = 0
    pid: int = 0
    sec: int = 0
    nsec: int = 0
    vol: int = 0
    features: int = 0
    hostname: str | None = None
    timezone: str | None = None
    zoneinfo: str | None = None

    @property
    def version(self) -> int:
        return self.magic & 0xFF

    def copy(self) -> Label:
        return Label(**vars(self))


def trace(text: str) -> None:
    sys.stderr.write(text)


def _cut(raw: bytes, size: int) -> str:
    """strndup(field, size - 1): the field up to its first NUL, at most SIZE - 1 bytes."""
    return raw[: size - 1].split(b"\0", 1)[0].decode("utf-8", "surrogateescape")


def read_file(path: str) -> bytes:
    """A file's bytes (decompressed as __pmFopen would); OSError if it will not open."""
    try:
        return bytes(file_bytes(path))
    except PMError as exc:
        code = -exc.code if -4096 < exc.code < 0 else errno.EIO
        raise OSError(code, os.strerror(code)) from None


def load_label(data: bytes, lp: Label, debug: bool) -> int:
    """__pmLogLoadLabel: fill LP from the label at the start of DATA; 0 or PCP's error."""
    if len(data) < 8:
        if debug:
            trace("__pmLogLoadLabel: file is empty\n")
        return PM_ERR_NODATA
    length, lp.magic = struct.unpack_from(">II", data)
    version = lp.magic & 0xFF
    size = LABEL_BYTES.get(version)
    if size is None:
        if debug:
            trace(f"__pmLogLoadLabel: label version {version} not supported\n")
        return PM_ERR_LABEL
    if length != size:
        if debug:
            trace(f"__pmLogLoadLabel: bad header len={length} (expected {size})\n")
        return PM_ERR_LABEL
    if len(data) < size - 4:
        if debug:
            got, want = len(data) - 8, size - 12
            trace(f"__pmLogLoadLabel: bad label read len={got}: expected {want}\n")
        return PM_ERR_LABEL
    host_size, tz_size, zi_size = _FIELDS[version]
    if version == PM_LOG_VERS03:
        fields = LABEL_V3.unpack_from(data[:size].ljust(size, b"\0"))
        _, _, lp.pid, sec, lp.nsec, lp.vol, lp.features, _, host, tz, zoneinfo, _ = fields
        lp.sec = swap_sec(sec)
        lp.zoneinfo = _cut(zoneinfo, zi_size)
    else:
        fields = LABEL_V2.unpack_from(data[:size].ljust(size, b"\0"))
        _, _, lp.pid, lp.sec, usec, lp.vol, host, tz, _ = fields
        lp.nsec, lp.features, lp.zoneinfo = int32(usec * 1000), 0, None
    lp.hostname, lp.timezone = _cut(host, host_size), _cut(tz, tz_size)
    got = min(4, len(data) - (size - 4))
    trailer = int32(struct.unpack(">I", data[size - 4 : size].ljust(4, b"\0"))[0])
    if got != 4 or trailer != length:
        if debug:
            trace(
                f"__pmLogLoadLabel: trailer read -> {got} (expect 4) or bad trailer "
                f"len={trailer} (expected {length})\n"
            )
        lp.hostname = lp.timezone = lp.zoneinfo = None
        return PM_ERR_LABEL
    return 0


def check_label(data: bytes, lp: Label, vol: int, fd: int, debug: bool) -> int:
    """__pmLogChkLabel: load LP from DATA and check it is a label for VOL of a file
    holding more than its label; the version, or PCP's error."""
    sts = load_label(data, lp, debug)
    if sts < 0:
        return sts
    line = f"__pmLogChkLabel: fd={fd} vol={vol}" if debug else ""
    if lp.magic & 0xFFFFFF00 != PM_LOG_MAGIC:
        line += f" label magic 0x{lp.magic & 0xFFFFFF00:x} not 0x{PM_LOG_MAGIC:x} as expected"
        version = PM_ERR_LABEL
    elif lp.vol != vol:
        line += f" label volume {lp.vol} not {vol} as expected"
        version = PM_ERR_LABEL
    else:
        version = lp.version
        line += _description(lp)
        if len(data) == LABEL_BYTES.get(lp.version, -1):
            line += " file is empty"
            version = PM_ERR_NODATA
    if debug:
        trace(line + "\n")
    return version


def _description(lp: Label) -> str:
    """The bracketed summary of a good label in -Dlog's trace."""
    tm = localtime(lp.sec, tzinfo_for(None))
    text = (
        f" [magic=0x{lp.magic:08x} version={lp.version} vol={lp.vol} pid={lp.pid} "
        f"start={tm.hour:02d}:{tm.min:02d}:{tm.sec:02d}.{lp.nsec:09d}"
    )
    if lp.features:
        text += f" features=0x{lp.features:x}"
    text += f" host={lp.hostname}"
    if lp.timezone is not None:
        text += f" tz={lp.timezone}"
    if lp.zoneinfo is not None:
        text += f" zoneinfo={lp.zoneinfo}"
    return text + "]"


def encode_label(lp: Label) -> bytes | None:
    """__pmLogWriteLabel's bytes for LP (its magic as it is); None for an unknown version."""
    size = LABEL_BYTES.get(lp.version)
    if size is None:
        return None
    host = (lp.hostname or "").encode("utf-8", "surrogateescape")
    tz = (lp.timezone or "").encode("utf-8", "surrogateescape")
    if lp.version == PM_LOG_VERS03:
        zone = (lp.zoneinfo or "").encode("utf-8", "surrogateescape")
        return LABEL_V3.pack(
            size, lp.magic, lp.pid, swap_sec(lp.sec), lp.nsec, lp.vol, lp.features, 0,
            host[:255], tz[:255], zone[:255], size,
        )  # fmt: skip
    usec = int32(lp.nsec) // 1000 if lp.nsec >= 0 else -(-lp.nsec // 1000)
    return LABEL_V2.pack(size, lp.magic, lp.pid, lp.sec, usec, lp.vol, host[:63], tz[:39], size)


@dataclass(frozen=True)
class Files:
    """An archive's files as __pmLogFindOpen finds them: its name (directory and base),
    the .index and .meta (None if absent) and the range of volume numbers."""

    name: str
    index: str | None
    meta: str
    minvol: int
    maxvol: int

    def volume(self, vol: int) -> str:
        return f"{self.name}.{vol}"

    def volume_file(self, vol: int) -> str:
        """The file volume VOL is read from (compressed or not, as __pmFopen finds it)."""
        return find_file(self.name, f".{vol}") or self.volume(vol)


def find_open(name: str, debug: bool) -> Files:
    """__pmLogFindOpen: the files of the archive NAME (a base name or any of its files);
    PMError -ENOENT when nothing matches, PM_ERR_LOGFILE when the .meta or every volume
    is missing."""
    folder = os.path.dirname(name) or "."
    base = os.path.basename(name)
    if os.access(name, os.R_OK) or _compressed_exists(name):
        split = log_base_name(base)
        if split is not None:
            base = split[0]
    try:
        entries = os.listdir(folder)
    except OSError as exc:
        raise PMError(-(exc.errno or errno.EIO)) from None
    index = meta = None
    vols: list[int] = []
    exists = False
    for entry in entries:
        split = log_base_name(entry)
        if split is None or split[0] != base:
            continue
        path = f"{folder}/{entry}"
        if debug:
            trace(f'__pmLogOpen: inspect file "{path}"\n')
        if split[1] == "index":
            exists, index = True, path
        elif split[1] == "meta":
            exists, meta = True, path
        elif split[1].isdigit():
            exists = True
            vols.append(int(split[1]))
    if not vols or meta is None:
        raise PMError(PM_ERR_LOGFILE if exists else -errno.ENOENT)
    return Files(f"{folder}/{base}", index, meta, min(vols), max(vols))


_COMPRESSED = (".xz", ".lzma", ".bz2", ".bz", ".gz", ".Z", ".z")


def _compressed_exists(name: str) -> bool:
    return any(os.path.exists(name + ext) for ext in _COMPRESSED)
