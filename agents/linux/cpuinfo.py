"""The linux agent's CPU and device inventory: hinv.cpu.*, hinv.machine, hinv.map.*, and
the small kernel counts beside them (login counts, the /proc/sys/kernel counters),
computed as PCP 6.0.3's pmdalinux computes them.

Sources (pmdalinux's files in parentheses): /proc/cpuinfo (proc_cpuinfo.c), the CPUs'
thermal_throttle and cpufreq sysfs files, utmp (login.c),
/proc/sys/kernel/{random/*,pid_max,pty/nr} (proc_sys_kernel.c), /proc/scsi/scsi
(proc_scsi.c) and each disk's wwid (proc_partitions.c).  Interrupts and softirqs are
interrupts.py's, pressure stall information pressure.py's.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

from purepcp.pmapi.cnumbers import atof, atoi, scan_int
from purepcp.pmda import InDom, refresh

from . import system
from .base import LinuxBase
from .blockdev import scsi_id
from .instids import InstanceIds
from .records import (
    COUNT,
    COUNTER,
    DISCRETE,
    FLOAT,
    INSTANT,
    KBYTE,
    MSEC,
    NONE,
    STRING,
    U32,
    U64,
    USEC,
    MetricInfo,
    records_of,
    units_of,
)

# pmdalinux's instance domain serials (linux.h)
CPU = 0
DISK = 1
SCSI = 11

PER_USEC = units_of("/ microsec")

#: (name, cluster, item, type, indom, semantics, units, source)
_TABLE: tuple[tuple[str, int, int, Any, int | None, Any, Any, str], ...] = (
    ("hinv.cpu.clock", 18, 0, FLOAT, CPU, DISCRETE, PER_USEC, "cpuinfo 'cpu MHz' (last)"),
    ("hinv.cpu.vendor", 18, 1, STRING, CPU, DISCRETE, NONE, "cpuinfo 'vendor...'"),
    ("hinv.cpu.model", 18, 2, STRING, CPU, DISCRETE, NONE, "cpuinfo 'model', else name"),
    ("hinv.cpu.stepping", 18, 3, STRING, CPU, DISCRETE, NONE, "cpuinfo 'step...'"),
    ("hinv.cpu.cache", 18, 4, U32, CPU, DISCRETE, KBYTE, "cpuinfo 'cache size', atoi"),
    ("hinv.cpu.bogomips", 18, 5, FLOAT, CPU, DISCRETE, NONE, "cpuinfo 'bogo...', atof"),
    ("hinv.machine", 18, 7, STRING, None, DISCRETE, NONE, "SGI prominfo, else uname -m"),
    ("hinv.map.cpu_node", 18, 8, U32, CPU, DISCRETE, NONE, "sysfs node*/cpuN"),
    ("hinv.cpu.model_name", 18, 9, STRING, CPU, DISCRETE, NONE, "cpuinfo 'model name'"),
    ("hinv.cpu.flags", 18, 10, STRING, CPU, DISCRETE, NONE, "cpuinfo 'flags'"),
    ("hinv.cpu.cache_alignment", 18, 11, U32, CPU, DISCRETE, NONE, "cpuinfo 'cache_align...'"),
    ("hinv.cpu.thermal_throttle.core.count", 55, 2, U64, CPU, COUNTER, COUNT, "sysfs"),
    ("hinv.cpu.thermal_throttle.core.time", 55, 3, U64, CPU, COUNTER, MSEC, "sysfs"),
    ("hinv.cpu.thermal_throttle.package.count", 55, 4, U64, CPU, COUNTER, COUNT, "sysfs"),
    ("hinv.cpu.thermal_throttle.package.time", 55, 5, U64, CPU, COUNTER, COUNT, "sysfs"),
    ("hinv.cpu.frequency_scaling.count", 55, 6, U64, CPU, COUNTER, COUNT, "cpufreq"),
    ("hinv.cpu.frequency_scaling.time", 55, 7, U64, CPU, COUNTER, USEC, "cpufreq"),
    ("hinv.cpu.frequency_scaling.max", 55, 8, U32, CPU, INSTANT, PER_USEC, "cpufreq, MHz"),
    ("hinv.cpu.frequency_scaling.min", 55, 9, U32, CPU, INSTANT, PER_USEC, "cpufreq, MHz"),
    ("hinv.map.scsi", 15, 0, STRING, SCSI, DISCRETE, NONE, "/proc/scsi/scsi + sysfs block"),
    ("hinv.map.scsi_id", 0, 103, STRING, DISK, DISCRETE, NONE, "/sys/block/D/device/wwid"),
    ("kernel.all.nroots", 25, 1, U32, None, INSTANT, NONE, "utmp USER_PROCESS root"),
    ("kernel.all.nsessions", 25, 2, U32, None, INSTANT, NONE, "utmp entries"),
    ("kernel.all.entropy.avail", 72, 0, U32, None, INSTANT, NONE, "random/entropy_avail"),
    ("kernel.all.entropy.poolsize", 72, 1, U32, None, INSTANT, NONE, "random/poolsize"),
    ("kernel.all.pid_max", 72, 2, U32, None, DISCRETE, NONE, "kernel/pid_max"),
    ("kernel.all.nptys", 72, 3, U32, None, INSTANT, NONE, "kernel/pty/nr"),
)

#: This family's metrics, as pmdalinux declares them.
METRICS: tuple[MetricInfo, ...] = records_of(_TABLE)

_U32 = 0xFFFFFFFF
_U64 = (1 << 64) - 1
_SPACE = b" \t\n\v\f\r"

# --- /proc/cpuinfo --------------------------------------------------------------------------


@dataclass
class CpuDetails:
    """What pmdalinux keeps of one CPU's /proc/cpuinfo block (cpuinfo_t)."""

    sapic: str | None = None
    vendor: str | None = None
    model: str | None = None
    model_name: str | None = None
    stepping: str | None = None
    flags: str | None = None
    cache: int = 0
    cache_align: int = 0
    bogomips: float = 0.0
    clock: float = 0.0


def _text(value: bytes) -> str:
    """A cpuinfo value as a string."""
    return value.decode("utf-8", "replace")


def _apply(info: CpuDetails, key: bytes, value: bytes) -> None:
    """One cpuinfo line into INFO, by pmdalinux's ordered prefix tests (first match wins;
    a field once set is kept, but for the clock)."""
    k = key.lower()
    if info.sapic is None and k.startswith(b"sapic"):
        info.sapic = _text(value)
    elif info.model_name is None and k.startswith((b"model name", b"hardware")):
        info.model_name = _text(value)
    elif info.model is None and k.startswith((b"model", b"cpu model", b"cpu variant")):
        info.model = _text(value)
    elif info.vendor is None and k.startswith((b"vendor", b"cpu implementer")):
        info.vendor = _text(value)
    elif info.stepping is None and k.startswith((b"step", b"revision", b"cpu revision")):
        info.stepping = _text(value)
    elif info.flags is None and k.startswith(b"flags"):
        info.flags = _text(value)
    elif info.flags is None and k.startswith(b"features"):
        info.flags = _text(value.strip(_SPACE))
    elif info.cache == 0 and k.startswith(b"cache size"):
        info.cache = atoi(value)
    elif info.cache_align == 0 and k.startswith(b"cache_align"):
        info.cache_align = atoi(value)
    elif info.bogomips == 0.0 and k.startswith(b"bogo"):
        info.bogomips = atof(value)
    elif k.startswith(b"cpu mhz"):
        info.clock = atof(value)
    elif info.clock == 0.0 and k.startswith(b"cycle frequency"):
        info.clock = atof(value.split(b" ", 1)[0]) / 1000000


def parse_cpuinfo(data: bytes, ncpus: int) -> tuple[dict[int, CpuDetails], CpuDetails | None]:
    """/proc/cpuinfo DATA as pmdalinux reads it: ({processor index: details}, shared).

    The Nth "processor" line (from 0, whatever number it carries) starts CPU N's
    block; lines of CPUs beyond NCPUS are ignored.  Lines before any "processor"
    line, or two "processor" lines in a row (aarch64's layout), make every CPU take
    the details gathered from the lines outside blocks ("shared", not None).
    """
    cpus: dict[int, CpuDetails] = {}
    shared = CpuDetails()
    dups = False
    previous_processor = False
    cpunum = -1
    for line in data.split(b"\n"):
        colon = line.find(b":")
        if colon < 0:
            continue
        value = line[colon + 2 :]
        if line.startswith(b"processor"):
            cpunum += 1
            if previous_processor:
                dups = True
            previous_processor = True
            continue
        previous_processor = False
        if cpunum >= ncpus:
            continue
        if dups or cpunum < 0:
            dups = True
            info = shared
        else:
            info = cpus.setdefault(cpunum, CpuDetails())
        _apply(info, line[:colon], value)
    return cpus, (shared if dups else None)


def cpu_nodes(root: str, ncpus: int) -> dict[int, int]:
    """{CPU: NUMA node} from the cpuN entries of ROOT/sys/devices/system/node/nodeM, as
    pmdalinux's cpu_node_setup(); no node directory (or $LINUX_NNODES, pmdalinux's test
    switch) puts CPUs 0 .. NCPUS-1 in node 0."""
    base = f"{root}/sys/devices/system/node"
    try:
        if os.environ.get("LINUX_NNODES") is not None:
            raise OSError("one node forced")
        names = os.listdir(base)
    except OSError:
        return dict.fromkeys(range(max(ncpus, 1)), 0)
    nodes: dict[int, int] = {}
    for name in sorted(names, key=_version_key):
        m = re.match(r"node([0-9]+)", name)
        if m is None:
            continue
        try:
            entries = os.listdir(f"{base}/{name}")
        except OSError:
            continue
        for entry in entries:
            c = re.match(r"cpu([0-9]+)", entry)
            if c is not None:
                nodes[int(c[1]) & _U32] = int(m[1]) & _U32
    return nodes


def _version_key(name: str) -> list[Any]:
    """A sort key ordering names as versionsort(3) does: digit runs by value."""
    return [(0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", name)]


def machine(root: str, fallback: str) -> str:
    """hinv.machine: an SGI machine's IPnn from its prominfo, else FALLBACK (uname -m)."""
    try:
        with open(f"{root}/proc/sgi_prominfo/node0/version", "rb") as f:
            for line in f:
                if line.startswith(b"SGI"):
                    at = line.find(b" IP")
                    if at >= 0:
                        return line[at + 1 : at + 5].split(b"\0", 1)[0].decode("utf-8", "replace")
                    break
    except OSError:
        pass
    return fallback


# --- sysfs: thermal throttling, frequency scaling, scsi ids --------------------------------


def scan_ulong(data: bytes | None, default: int | None = 0) -> int | None:
    """fscanf %lu of DATA's first number (wrapped to 64 bits), or DEFAULT."""
    value = None if data is None else scan_int(data, 64, False)
    return default if value is None else value


def time_in_state(data: bytes) -> tuple[int, int, int, int]:
    """(count, time, max, min) from cpufreq's stats/time_in_state DATA, as pmdalinux sums
    it: count is the sum of MHz * residency, time the sum of residencies."""
    total = hits = maxfreq = minfreq = 0
    numbers = data.split()
    for at in range(0, len(numbers) - 1, 2):
        freq, count = scan_ulong(numbers[at], None), scan_ulong(numbers[at + 1], None)
        if freq is None or count is None:
            break
        freq //= 1000
        total = (total + freq * count) & _U64
        hits = (hits + count) & _U64
        maxfreq = max(maxfreq, freq)
        if minfreq == 0 or freq < minfreq:
            minfreq = freq
    return total, hits, maxfreq & _U32, minfreq & _U32


_SCSI_HOST = re.compile(
    rb"Host: *scsi([+-]?[0-9]+) *Channel: *([+-]?[0-9]+) *Id: *([+-]?[0-9]+) *Lun: *([+-]?[0-9]+)"
)


def parse_scsi(data: bytes) -> list[tuple[str, tuple[int, int, int, int]]]:
    """(instance name "scsiH:C:I:L TYPE", (H, C, I, L)) of each device in /proc/scsi/scsi."""
    found = []
    lines = data.split(b"\n")
    kind = b""
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        m = _SCSI_HOST.match(line) if line.startswith(b"Host:") else None
        if m is None:
            continue
        address = tuple(int(x) for x in m.groups())
        while i < len(lines):
            at = lines[i].find(b"Type:")
            i += 1
            if at >= 0:
                words = lines[i - 1][at + 5 :].split()
                if words:
                    kind = words[0]
                    break
        name = "scsi{}:{}:{}:{} {}".format(*address, kind.decode("utf-8", "replace"))
        found.append((name, address))  # type: ignore[arg-type]
    return found


#: /proc/sys/kernel files of cluster 72: (metric, file, value when missing or unparsed)
SYS_KERNEL: tuple[tuple[str, str, int], ...] = (
    ("kernel.all.pid_max", "/proc/sys/kernel/pid_max", 1 << 22),
    ("kernel.all.nptys", "/proc/sys/kernel/pty/nr", 0),
)


def _scan_u32(data: bytes | None) -> int | None:
    """fscanf %u of DATA (wrapped to 32 bits), or None."""
    return None if data is None else scan_int(data, 32, False)


# --- the agent's part ---------------------------------------------------------------------


class CpuInfo(LinuxBase):
    """hinv.cpu.*, hinv.machine, hinv.map.*, utmp counts and /proc/sys/kernel values."""

    cpuinfo_scsi_indom = InDom(SCSI, labels={"device_type": "block", "indom_name": "per disk"})

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Agent's arguments; pmdaCache-style ids for the scsi indom."""
        super().__init__(*args, **kwargs)
        self._cpuinfo_scsi_ids = InstanceIds(self._cache_file(self.cpuinfo_scsi_indom))
        self._cpuinfo_scsi: dict[int, tuple[str, str]] = {}  # inst -> (name, block device)
        self._cpuinfo_nodes: dict[int, int] | None = None
        self._cpuinfo_machine: str | None = None
        # the last /proc/cpuinfo read, its CPUs, their details and the values computed from them
        self._cpuinfo_memo: tuple[tuple[bytes, tuple[int, ...]], dict[int, CpuDetails], dict] | None
        self._cpuinfo_memo = None

    @cpuinfo_scsi_indom.refresh
    def _cpuinfo_scsi_instances(self) -> dict[int, str] | None:
        """Every scsi device seen with a block device (pmdalinux never retires one)."""
        scsi = self._once("cpuinfo.scsi", self._cpuinfo_read_scsi)
        return self._current(self.cpuinfo_scsi_indom, {i: n for i, (n, _) in scsi.items()})

    @refresh(18)
    def _cpuinfo_refresh_cpuinfo(self) -> dict[str, Any]:
        """Cluster 18: /proc/cpuinfo per CPU instance, the CPUs' nodes, hinv.machine."""
        wanted, values = self._wanted, {}
        if "hinv.machine" in wanted:
            if self._cpuinfo_machine is None:
                self._cpuinfo_machine = machine(self.proc.root, os.uname().machine)
            values["hinv.machine"] = self._cpuinfo_machine
        cpus = self._cpu_numbers()
        if "hinv.map.cpu_node" in wanted:
            if self._cpuinfo_nodes is None:
                self._cpuinfo_nodes = cpu_nodes(self.proc.root, self.ncpus_configured)
            nodes = self._cpuinfo_nodes
            values["hinv.map.cpu_node"] = {n: nodes[n] for n in cpus if n in nodes}
        if wanted.isdisjoint(_CPUINFO_NAMES):
            return values
        data = self.proc.read("/proc/cpuinfo")
        if data is None:
            return values
        key = (data, tuple(cpus))
        memo = self._cpuinfo_memo
        if memo is None or memo[0] != key:  # parsed again only when the file (or CPUs) change
            blocks, shared = parse_cpuinfo(data, self.ncpus_configured)
            details = {n: shared or blocks.get(n) or CpuDetails() for n in cpus}
            memo = self._cpuinfo_memo = (key, details, {})
        _, details, computed = memo
        for name, compute in _CPUINFO_VALUES.items():
            if name in wanted:
                got = computed.get(name)
                if got is None:
                    got = computed[name] = {n: compute(d) for n, d in details.items()}
                values[name] = dict(got)
        return values

    @refresh(55)
    def _cpuinfo_refresh_sysfs(self) -> dict[str, Any]:
        """Cluster 55: thermal throttling counts (0 when absent) and cpufreq figures."""
        wanted, values = self._wanted, {}
        cpus = self._cpu_numbers()
        base = "/sys/devices/system/cpu/cpu{}/"
        for name, file in _THROTTLE.items():
            if name in wanted:
                values[name] = {
                    n: scan_ulong(self.proc.read_unkept(base.format(n) + file)) for n in cpus
                }
        if wanted.isdisjoint(_FREQ_NAMES):
            return values
        freq: dict[str, dict[int, int]] = {name: {} for name in _FREQ_NAMES}
        for n in cpus:
            for name, value in self._cpuinfo_frequency(base.format(n)).items():
                freq[name][n] = value
        values.update(freq)
        return values

    def _cpuinfo_frequency(self, base: str) -> dict[str, int]:
        """One CPU's frequency_scaling.* from cpufreq/stats/time_in_state, or else from
        cpuinfo_{max,min}_freq and scaling_cur_freq (kHz made MHz)."""
        prefix = "hinv.cpu.frequency_scaling."
        data = self.proc.read_unkept(base + "cpufreq/stats/time_in_state")
        if data is not None:
            count, time, high, low = time_in_state(data)
            return {
                prefix + "count": count,
                prefix + "time": time,
                prefix + "max": high,
                prefix + "min": low,
            }
        found = {}
        for field, file in (
            ("max", "cpuinfo_max_freq"),
            ("min", "cpuinfo_min_freq"),
            ("count", "scaling_cur_freq"),
        ):
            khz = scan_ulong(self.proc.read_unkept(base + "cpufreq/" + file), None)
            if khz is not None:
                found[prefix + field] = (khz // 1000) & (_U64 if field == "count" else _U32)
        return found

    @refresh(15)
    def _cpuinfo_refresh_scsi(self) -> dict[str, Any]:
        """Cluster 15: hinv.map.scsi, each scsi device's block device name."""
        scsi = self._once("cpuinfo.scsi", self._cpuinfo_read_scsi)
        return {"hinv.map.scsi": {inst: dev for inst, (_, dev) in scsi.items()}}

    def _cpuinfo_read_scsi(self) -> dict[int, tuple[str, str]]:
        """Add the /proc/scsi/scsi devices not yet known whose sysfs block directory names a
        device (that directory is read without $LINUX_STATSPATH, as pmdalinux does)."""
        data = self.proc.read("/proc/scsi/scsi")
        ids = self._cpuinfo_scsi_ids
        known = {name for name, _ in self._cpuinfo_scsi.values()}
        for name, address in parse_scsi(data or b""):
            if name in known:
                continue
            path = "/sys/class/scsi_device/{}:{}:{}:{}/device/block".format(*address)
            try:
                entries = [e for e in os.listdir(path) if not e.startswith(".")]
            except OSError:
                continue
            if entries:
                self._cpuinfo_scsi[ids(name)] = (name, entries[0])
                known.add(name)
        if data is not None:
            ids.save()
        return self._cpuinfo_scsi

    @refresh(0)
    def _cpuinfo_refresh_scsi_id(self) -> dict[str, Any]:
        """Cluster 0: hinv.map.scsi_id, each disk's wwid from sysfs."""
        if "hinv.map.scsi_id" not in self._wanted:
            return {}
        ids = {}
        for inst, name, _ in self._disks():  # type: ignore[attr-defined]
            path = f"/sys/block/{name}/device/wwid"
            if not os.access(self.proc.root + path, os.F_OK):
                path = f"/sys/block/{name}/wwid"
            ids[inst] = scsi_id(self.proc.read_unkept(path))
        return {"hinv.map.scsi_id": ids}

    @refresh(25)
    def _cpuinfo_refresh_utmp(self) -> dict[str, Any]:
        """Cluster 25: root logins and sessions from utmp (0 without a utmp file)."""
        try:
            with open(self.utmp_path, "rb") as f:  # type: ignore[attr-defined]
                data = f.read()
        except OSError:
            data = b""
        _, roots, sessions = system.login_counts(data)
        return {"kernel.all.nroots": roots, "kernel.all.nsessions": sessions}

    @refresh(72)
    def _cpuinfo_refresh_sys_kernel(self) -> dict[str, Any]:
        """Cluster 72: pid_max, nptys and the entropy counts (0 when unreadable, as pmdalinux
        zeroes them first and reports them whatever happened)."""
        values: dict[str, Any] = {}
        for name, path, default in SYS_KERNEL:
            value = _scan_u32(self.proc.read(path))
            values[name] = default if value is None else value
        avail = self.proc.read("/proc/sys/kernel/random/entropy_avail")
        pool = self.proc.read("/proc/sys/kernel/random/poolsize")
        both = avail is not None and pool is not None
        values["kernel.all.entropy.avail"] = (_scan_u32(avail) if both else None) or 0
        values["kernel.all.entropy.poolsize"] = (_scan_u32(pool) if both else None) or 0
        return values


def _string(value: str | None) -> str:
    """A cpuinfo string, or "unknown" as pmdalinux gives for one never seen."""
    return "unknown" if value is None else value


#: hinv.cpu.* from a CPU's details; None is no value (pmdalinux's zero tests).
_CPUINFO_VALUES: dict[str, Any] = {
    "hinv.cpu.clock": lambda d: d.clock or None,
    "hinv.cpu.vendor": lambda d: _string(d.vendor),
    "hinv.cpu.model": lambda d: _string(d.model if d.model is not None else d.model_name),
    "hinv.cpu.stepping": lambda d: _string(d.stepping),
    "hinv.cpu.cache": lambda d: (d.cache & _U32) or None,
    "hinv.cpu.bogomips": lambda d: d.bogomips or None,
    "hinv.cpu.model_name": lambda d: _string(d.model_name if d.model_name is not None else d.model),
    "hinv.cpu.flags": lambda d: _string(d.flags),
    "hinv.cpu.cache_alignment": lambda d: (d.cache_align & _U32) or None,
}
_CPUINFO_NAMES = frozenset(_CPUINFO_VALUES)
_THROTTLE = {
    "hinv.cpu.thermal_throttle.core.count": "thermal_throttle/core_throttle_count",
    "hinv.cpu.thermal_throttle.core.time": "thermal_throttle/core_throttle_total_time_ms",
    "hinv.cpu.thermal_throttle.package.count": "thermal_throttle/package_throttle_count",
    "hinv.cpu.thermal_throttle.package.time": "thermal_throttle/package_throttle_total_time_ms",
}
_FREQ_NAMES = frozenset(f"hinv.cpu.frequency_scaling.{f}" for f in ("count", "time", "max", "min"))
