"""hotproc.*: pmdaproc's "hot process" arithmetic and selection, as pure logic.

pmdaproc (PCP 6.0.3) keeps a second process instance domain, 3.39, holding the
processes a configured predicate calls "hot".  A timer re-evaluates every process
each `refresh` seconds; the hotproc.* metrics then serve those processes.  This
module is that logic without I/O or threads (the agent wires it); the predicate
language is predicate.py's (its parse, Predicate and errors are here too, for the
agent and the timer), its patterns recomp.py's.

Per-process inputs
    parse_reading(stat, status, io, schedstat, pagesize) -> Reading | None
    derive(previous, current, elapsed, hz) -> Derived   (hotproc.predicate.* values)
    fname_variable(comm), psargs_variable(pid, psargs), name_variable(name)
    variables(reading, derived, uname, gname, fname, psargs) -> dict for evaluate()
    select(predicate, candidates, previous, elapsed, hz) -> Selection  (one tick)

Totals
    idle_ticks(proc_stat) -> int;  totals(...) -> Totals;  NO_TOTALS

Facts (pmdaproc 6.0.3: hotproc.c, proc_pid.c, pmda.c)
- Variables: uid gid (real ids from status), uname gname (the names; "UNKNOWN"
  without one; at most 63 chars), fname (stat's comm; at most 255), psargs (the
  instance-name text after "NNNNNN ", i.e. the command line, NULs as spaces, or
  "(comm)"; at most 255), cpuburn ctxswitch iodemand iowait schedwait virtualsize
  residentsize (see Derived), syscalls (accepted, fatal when evaluated).
- Timer: refresh defaults to 10 s; it runs only while a config is present
  (config_gen != 0).  Its first pass comes one refresh after it starts; each pass
  reads stat, status, io and schedstat of every process (not threads; a process's
  stat already covers its threads), skips one whose stat or status cannot be read,
  keeps the readings for the next pass, and makes the hot list.  Between passes the
  instance domain is those hot pids still in /proc (plus their threads when threads
  are on); hotproc.nprocs counts that domain; hotproc.predicate.* of a pid not in
  the hot list is PM_ERR_INST.
- Stores (all of cluster 60): only a root client (else PM_ERR_PERMISSION); items other
  than refresh, config and reload_config give PM_ERR_PERMISSION.
  * hotproc.control.refresh (U32): any value, 0 included, becomes the interval; the
    timer restarts if one runs.
  * hotproc.control.config (STRING): parse error -> PM_ERR_BADSTORE, nothing changes;
    empty (whitespace, comments, skipped words) -> hotproc disabled: config_gen 0,
    config "", hot list emptied at once, timer stopped; else config_gen += 1, the new
    predicate applies from the next pass (the hot list stays until then), and the
    timer starts if config_gen became 1.
  * hotproc.control.reload_config (U32, value ignored, fetches 0): re-reads
    $PCP_PMDAS_DIR/proc/hotproc.conf (/var/lib/pcp/pmdas/proc/hotproc.conf): if it is
    missing or world-writable nothing changes; if it parses to a predicate, that
    predicate applies and config_gen becomes 1 (reset, not incremented); then the
    timer restarts if config_gen != 0.  (A failing parse leaves everything but is
    not reported to the client; an empty file blanks the config text but keeps
    config_gen, after which pmdaproc's next pass dereferences a null tree.)
  * At start-up the same file is read: a predicate there -> config_gen 1.
- config_gen counts the successful non-empty stores since the last disable (or the
  last load of hotproc.conf, which sets 1).
- Rates: pmdaproc takes one wall-clock time per pass in whole seconds (an integer
  division of tv_usec) and divides each counter's change by the change of that;
  a counter that went down counts as +2**64 (its 64-bit wrap rule).  A process
  not in the previous pass gets 0 for every rate.  Totals are computed from the
  second pass on (before that, all 0).
- Where this module deliberately differs (each a slip in pmdaproc; the agent may
  choose): `elapsed` is whatever the caller passes (we suggest exact monotonic
  seconds); iowait uses stat's delayacct_blkio_ticks as fractional seconds (pmdaproc
  reads the guest_time field, one place late, and truncates it to whole seconds);
  a pid whose start time changed is a new process (pmdaproc compares its counters
  with the old process's); evaluation errors raise instead of exiting.
  iodemand is bytes per second, as pmdaproc computes it, although its metric's
  units say Kbytes per second.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from purepcp.pmapi.cnumbers import float32

from . import fields
from .predicate import (
    VARIABLES,
    Number,
    Predicate,
    PredicateError,
    PredicateRuntimeError,
    config_text,
    parse,
)
from .recomp import PatternError, compile_pattern, translate_pattern

#: The predicate's names (predicate.py, recomp.py) are here too, for the agent and the timer.
__all__ = [
    "NO_TOTALS",
    "VARIABLES",
    "Candidate",
    "Derived",
    "Number",
    "PatternError",
    "Predicate",
    "PredicateError",
    "PredicateRuntimeError",
    "Reading",
    "Selection",
    "Totals",
    "compile_pattern",
    "config_text",
    "derive",
    "fname_variable",
    "idle_ticks",
    "name_variable",
    "parse",
    "parse_reading",
    "psargs_variable",
    "select",
    "totals",
    "translate_pattern",
    "variables",
]

# --------------------------------------------------------------------------------------
# Per-process readings and the values derived from two of them
# --------------------------------------------------------------------------------------

_STAT = {name: fields.STAT_FIELDS[f"proc.psinfo.{name}"][0] for name in (
    "utime", "stime", "start_time", "vsize", "rss", "delayacct_blkio_time")}  # fmt: skip
_RUN_DELAY = fields.SCHEDSTAT_FIELDS["proc.schedstat.run_delay"]
_WRAP = float(2**64)  # pmdaproc's diff_counter() adds this to a negative change


@dataclass(frozen=True)
class Reading:
    """One process's counters at one timer pass, in the files' own units."""

    comm: str  # stat's command name, without its parentheses
    start_time: int  # clock ticks after boot: tells a reused pid from the old process
    cpu_ticks: int  # utime + stime
    blkio_ticks: int  # delayacct_blkio_ticks
    vsize_kb: int  # stat's vsize (bytes) // 1024
    rss_kb: int  # stat's rss (pages) * page size // 1024
    uid: int  # real ids, from status
    gid: int
    vctxsw: int
    nvctxsw: int
    read_bytes: int  # 0 when io cannot be read (pmdaproc's rule)
    write_bytes: int
    run_delay_ns: int  # 0 when schedstat cannot be read


def parse_reading(
    stat: bytes | None,
    status: bytes | None,
    io: bytes | None,
    schedstat: bytes | None,
    pagesize: int,
) -> Reading | None:
    """A Reading from /proc/PID/{stat,status,io,schedstat}'s bytes; None when stat or
    status is missing or unreadable (pmdaproc leaves such a process out of the pass)."""
    if not stat or not status:
        return None
    try:
        comm, rest = fields.split_stat(stat)
        numbers = {name: int(rest[index]) for name, index in _STAT.items()}
    except (ValueError, IndexError):
        return None
    lines = fields.status_lines(status)
    counts = fields.keyed_numbers(io) if io else {}
    try:
        run_delay = int(schedstat.split()[_RUN_DELAY]) if schedstat else 0
    except (ValueError, IndexError):
        run_delay = 0
    return Reading(
        comm=comm.decode("utf-8", "surrogateescape"),
        start_time=numbers["start_time"],
        cpu_ticks=numbers["utime"] + numbers["stime"],
        blkio_ticks=numbers["delayacct_blkio_time"],
        vsize_kb=numbers["vsize"] // 1024,
        rss_kb=numbers["rss"] * pagesize // 1024,
        uid=_first_number(lines.get(b"Uid")),
        gid=_first_number(lines.get(b"Gid")),
        vctxsw=_first_number(lines.get(b"voluntary_ctxt_switches")),
        nvctxsw=_first_number(lines.get(b"nonvoluntary_ctxt_switches")),
        read_bytes=counts.get(b"read_bytes", 0),
        write_bytes=counts.get(b"write_bytes", 0),
        run_delay_ns=run_delay,
    )


def _first_number(line: bytes | None) -> int:
    words = line.split() if line else []
    return int(words[0]) if words and words[0].isdigit() else 0


@dataclass(frozen=True)
class Derived:
    """A process's hotproc.predicate.* values for one pass, and its CPU use."""

    cpuburn: float  # CPU seconds per second (1.0 = one CPU), rounded to a C float
    ctxswitch: float  # voluntary + involuntary context switches per second
    iodemand: float  # bytes read + written (io's read_bytes, write_bytes) per second
    iowait: float  # seconds of block I/O delay per second
    schedwait: float  # seconds waiting on a run queue per second (schedstat run_delay)
    virtualsize: int  # Kbytes (hotproc.predicate.virtualsize is its low 32 bits)
    residentsize: int  # Kbytes
    cpu_seconds: float  # CPU seconds used since the previous pass (0 when first seen)


def _delta(now: float, before: float) -> float:
    change = now - before
    return change + _WRAP if change < 0 else change


def derive(previous: Reading | None, current: Reading, elapsed: float, hz: int) -> Derived:
    """The values pmdaproc derives from a process's readings ELAPSED seconds apart
    (HZ clock ticks a second).  First seen (no PREVIOUS, another process under the
    same pid, or no time elapsed): every rate is 0."""
    sizes = {"virtualsize": current.vsize_kb, "residentsize": current.rss_kb}
    if previous is None or previous.start_time != current.start_time or elapsed <= 0:
        return Derived(0.0, 0.0, 0.0, 0.0, 0.0, **sizes, cpu_seconds=0.0)
    cpu = _delta(current.cpu_ticks / hz, previous.cpu_ticks / hz)
    switches = _delta(current.vctxsw, previous.vctxsw) + _delta(current.nvctxsw, previous.nvctxsw)
    io = _delta(current.read_bytes, previous.read_bytes) + _delta(
        current.write_bytes, previous.write_bytes
    )
    return Derived(
        cpuburn=float32(cpu / elapsed),
        ctxswitch=switches / elapsed,
        iodemand=io / elapsed,
        iowait=_delta(current.blkio_ticks, previous.blkio_ticks) / hz / elapsed,
        schedwait=_delta(current.run_delay_ns, previous.run_delay_ns) / (elapsed * 1e9),
        **sizes,
        cpu_seconds=cpu,
    )


def fname_variable(comm: str) -> str:
    """`fname` from stat's command name: pmdaproc drops one more pair of enclosing
    parentheses when the name starts with "(", and keeps 255 characters."""
    if comm.startswith("("):
        comm = comm[1:]
        if len(comm) < 256 and comm.endswith(")"):
            comm = comm[:-1]
    return comm[:255]


def psargs_variable(pid: int, psargs: str) -> str:
    """`psargs` for PID, whose proc.psinfo.psargs is PSARGS: pmdaproc takes its
    "%06d <psargs>" text from the 8th character, so a pid of 7 digits or more keeps
    some of its digits; 255 characters at most."""
    return f"{pid:06d} {psargs}"[7:][:255]


def name_variable(name: str | None) -> str:
    """`uname`/`gname` from a user or group NAME (None when the id has none)."""
    return "UNKNOWN" if name is None else name[:63]


def variables(
    reading: Reading, derived: Derived, *, uname: str, gname: str, fname: str, psargs: str
) -> dict[str, object]:
    """Every variable's value for one process, as evaluate() takes them (the strings
    already through fname_variable, psargs_variable, name_variable)."""
    return {
        "uid": reading.uid,
        "gid": reading.gid,
        "uname": uname,
        "gname": gname,
        "fname": fname,
        "psargs": psargs,
        "cpuburn": derived.cpuburn,
        "ctxswitch": derived.ctxswitch,
        "virtualsize": derived.virtualsize,
        "residentsize": derived.residentsize,
        "iodemand": derived.iodemand,
        "iowait": derived.iowait,
        "schedwait": derived.schedwait,
    }


@dataclass(frozen=True)
class Candidate:
    """One process at a timer pass: its reading and its string variables."""

    pid: int
    reading: Reading
    uname: str
    gname: str
    psargs: str  # already through psargs_variable


@dataclass(frozen=True)
class Selection:
    """One timer pass's outcome."""

    hot: dict[int, Derived]  # the hot pids (ascending) and their predicate values
    readings: dict[int, Reading]  # every candidate's reading: the next pass's previous
    hot_cpu_seconds: float  # CPU seconds the hot processes used since the last pass
    cold_cpu_seconds: float  # ... and the others


def select(
    predicate: Predicate,
    candidates: Iterable[Candidate],
    previous: Mapping[int, Reading],
    elapsed: float,
    hz: int,
) -> Selection:
    """Evaluate PREDICATE over one pass's CANDIDATES (PREVIOUS: the last pass's
    readings).  Raises PredicateRuntimeError where pmdaproc would exit."""
    hot: dict[int, Derived] = {}
    readings: dict[int, Reading] = {}
    spent = {True: 0.0, False: 0.0}
    for candidate in sorted(candidates, key=lambda c: c.pid):
        reading = candidate.reading
        derived = derive(previous.get(candidate.pid), reading, elapsed, hz)
        readings[candidate.pid] = reading
        values = variables(
            reading,
            derived,
            uname=candidate.uname,
            gname=candidate.gname,
            fname=fname_variable(reading.comm),
            psargs=candidate.psargs,
        )
        is_hot = predicate.evaluate(values)
        if is_hot:
            hot[candidate.pid] = derived
        spent[is_hot] += derived.cpu_seconds
    return Selection(hot, readings, spent[True], spent[False])


# --------------------------------------------------------------------------------------
# hotproc.total.*
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Totals:
    """hotproc.total.*: CPU seconds per second, summed over all CPUs (percent aside)."""

    cpuidle: float  # the machine's idle time (/proc/stat's cpu idle)
    cpuburn: float  # used by the hot processes
    transient: float  # cpuother.transient: not idle and not seen in processes
    not_cpuburn: float  # cpuother.not_cpuburn: used by the other processes
    other_total: float  # cpuother.total: transient + not_cpuburn
    other_percent: float  # cpuother.percent: other_total / (other_total + cpuburn) * 100


#: Before the second pass pmdaproc has no totals and answers 0 for each.
NO_TOTALS = Totals(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


def idle_ticks(proc_stat: bytes) -> int:
    """The idle clock ticks of all CPUs: /proc/stat's "cpu" line, 4th number (0 if
    unreadable, as pmdaproc's scanf failing)."""
    for line in proc_stat.split(b"\n"):
        words = line.split()
        if words[:1] == [b"cpu"]:
            try:
                return int(words[4])
            except (IndexError, ValueError):
                return 0
    return 0


def totals(
    elapsed: float,
    ncpus: int,
    idle_delta_ticks: int,
    hz: int,
    hot_cpu_seconds: float,
    cold_cpu_seconds: float,
) -> Totals:
    """hotproc.total.* for a pass ELAPSED seconds after the previous one, on NCPUS
    online CPUs, the cpu idle counter having moved IDLE_DELTA_TICKS (negative: +2**64).
    The transient part is what neither idle time nor the processes seen in both
    passes account for (processes that came or went, interrupts, I/O wait...),
    never below 0."""
    if elapsed <= 0:
        return NO_TOTALS
    idle = _delta(idle_delta_ticks, 0) / hz
    transient = max(0.0, ncpus * elapsed - (hot_cpu_seconds + cold_cpu_seconds + idle))
    burn, other, trans = hot_cpu_seconds / elapsed, cold_cpu_seconds / elapsed, transient / elapsed
    non_idle = trans + other + burn
    return Totals(
        cpuidle=idle / elapsed,
        cpuburn=burn,
        transient=trans,
        not_cpuburn=other,
        other_total=other + trans,
        other_percent=0.0 if non_idle == 0 else (trans + other) / non_idle * 100,
    )
