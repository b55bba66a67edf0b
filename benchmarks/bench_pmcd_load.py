"""Benchmark: 100, 300 and 500 concurrent clients against our pmcd and PCP 6's pmcd.

Both daemons run the same two agents: pmcd's own agent (PCP's pmda_pmcd.so line
in pmcd.conf, which our pmcd serves with its own pmcd agent in-process and PCP's
pmcd loads as a DSO) and PCP's C agent pmdasample as a pipe agent (domain 29),
with a namespace of just the metrics fetched.  Every fetch asks for seven
metrics, three answered by pmcd itself (pmcd.numclients, pmcd.pdu_in.total,
pmcd.pdu_out.total) and four by the pipe agent (sample.seconds,
sample.long.one, sample.long.hundred, and sample.colour with its three
instances), so each fetch is one pipe round trip plus pmcd's own work.

For each client count, each daemon is started afresh on an ephemeral port, and:

1. every client connects at once (TCP connect, pmcd's greeting ERROR PDU, then
   CREDS and PROFILE); a client with no greeting within --connect-timeout
   (default 5 s, libpcp's PMCD_CONNECT_TIMEOUT), or a greeting refusing it, is
   counted as not accepted.  PCP's pmcd listens with a backlog of 5, so in such a
   burst the kernel drops most SYNs and those clients retry after 1 s and 3 s;
   many are still waiting at 5 s.  --ramp S spreads the connects over S seconds
   instead;
2. once all have connected or given up, every accepted client does --fetches
   FETCH PDUs, one every --interval seconds (on a fixed schedule, each client
   starting at a random offset within the first interval so that they do not
   fetch in lockstep).  A reply not in within --fetch-timeout (default 10 s,
   libpcp's PMCD_REQUEST_TIMEOUT) ends that client, as it would a libpcp
   context; its remaining fetches count as unanswered, as do any not done when
   the phase's deadline (fetches x interval + fetch timeout + 5 s) passes;
3. all clients hold their connections while pmcd's RSS is read ("held"), then
   all close; once a fresh client sees pmcd.numclients back to 1 (itself), pmcd's
   RSS is read again ("after").

Printed per daemon and client count: connections accepted (of N), fetches
answered (of accepted clients x fetches), p50 and p99 latency of the answered
fetches (request sent to reply read; a daemon that accepted fewer clients had
fewer fetches a second to answer), pmcd's CPU seconds from the first connect
to the "after" reading (utime + stime of pmcd's own process in /proc/PID/stat,
children NOT included: for PCP's pmcd that is pmcd and its pmcd DSO agent, for
ours pmcd and its in-process pmcd agent; the pipe agent's CPU is printed apart
as "agent CPU"), and pmcd's RSS before the clients come, held (all connected,
fetching done), peak (VmHWM over the daemon's life) and after all clients left,
with after - before.  Then the ratios ours / PCP's for p99 and CPU, and the
targets: all connections accepted and all fetches answered at 500 clients, p99
within 2x PCP's where PCP answers at all, RSS after within 10 MB of before.

The load generator is --workers (default 2) Python processes of this script
running trio with raw PDUs, the clients split between them.  Each fetch PDU is
encoded once per client and replies are checked by their header (the first
reply of each client is decoded in full and must carry values for every
metric), so a fetch costs the generator a send, a receive and a few struct
reads.  Its CPU is printed as "gen %core": the busiest worker's CPU seconds
over the fetch phase's wall time; at 500 clients, one fetch every 0.5 s each
(1000 fetches/s in all), that was 8-12% of a core per worker on a 2-core
machine (3-5% at 100 clients), so the generator is not the bottleneck.  Each worker raises its
RLIMIT_NOFILE soft limit to the hard limit.

    .venv/bin/python benchmarks/bench_pmcd_load.py [--clients 100,300,500]
        [--fetches 20] [--interval 0.5] [--runs 3] [--ramp 0] [--only ours|PCP]

prints one table per run, then the median of every figure over the runs (the
ratios are of those medians).  Never port 44321; every daemon, agent and
worker is stopped on exit, Ctrl-C and failure included.  A daemon that dies
under load is reported ("pmcd died at N clients") and the benchmark goes on
with a fresh one.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import random
import resource
import select
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.reference_pmcd import PMCD, PMDAS, running_pmcd  # noqa: E402
from purepcp.pmapi.pdu.codec import decode, encode  # noqa: E402
from purepcp.pmapi.pdu.constants import PDUType  # noqa: E402
from purepcp.pmapi.pdu.framer import PDUFramer  # noqa: E402
from purepcp.pmapi.pdu.records import (  # noqa: E402
    PDU,
    Cred,
    CredsPDU,
    ErrorPDU,
    FetchPDU,
    PMNSIdsPDU,
    PMNSNamesPDU,
    ProfilePDU,
    ResultPDU,
)

SAMPLE = PMDAS / "sample" / "pmdasample"
CONF = [
    f"pmcd\t2\tdso\tpmcd_init\t{PMDAS / 'pmcd' / 'pmda_pmcd.so'}",
    f"sample\t29\tpipe\tbinary\t{SAMPLE} -d 29",
]
NAMESPACE = """\
root {
    pmcd
    sample
}
pmcd {
    numclients\t2:0:3
    pdu_in
    pdu_out
}
pmcd.pdu_in {
    total\t2:1:16
}
pmcd.pdu_out {
    total\t2:2:16
}
sample {
    seconds\t29:0:2
    long
    colour\t29:0:5
}
sample.long {
    one\t29:0:10
    hundred\t29:0:12
}
"""
METRICS = (
    "pmcd.numclients",
    "pmcd.pdu_in.total",
    "pmcd.pdu_out.total",
    "sample.seconds",
    "sample.long.one",
    "sample.long.hundred",
    "sample.colour",
)

TARGET_P99_RATIO = 2.0
TARGET_RSS_DELTA_MB = 10.0
_HEADER = struct.Struct(">iii")  # length, type, from
_CLK_TCK = os.sysconf("SC_CLK_TCK")


# --------------------------------------------------------------------------
# the load generator: one worker process, its clients on trio


def _creds_and_profile() -> bytes:
    """What a client sends after pmcd's greeting: CREDS (CVERSION, no features), PROFILE."""
    return encode(CredsPDU((Cred.version(0),), os.getpid())) + encode(ProfilePDU(0, 0, ()))


@dataclass
class _Tally:
    """One worker's counts and latencies."""

    accepted: int = 0
    refused: Counter[str] = field(default_factory=Counter)
    planned: int = 0
    sent: int = 0
    answered: int = 0
    problems: Counter[str] = field(default_factory=Counter)
    latencies: list[float] = field(default_factory=list)


class _Client:
    """One connection to pmcd, on trio."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self.buf = bytearray()

    async def frame(self) -> bytes:
        """The next whole PDU from pmcd; EOFError if pmcd closed the connection."""
        while True:
            if len(self.buf) >= 4:
                (length,) = struct.unpack_from(">i", self.buf)
                if length < _HEADER.size:
                    raise ValueError(f"PDU length {length}")
                if len(self.buf) >= length:
                    frame = bytes(self.buf[:length])
                    del self.buf[:length]
                    return frame
            data = await self.stream.receive_some(65536)
            if not data:
                raise EOFError
            self.buf += data

    def close(self) -> None:
        self.stream.socket.close()


async def _connect(port: int, timeout: float, tally: _Tally) -> _Client | None:
    """Connect and handshake; None (with the reason tallied) if not accepted in TIMEOUT."""
    import trio

    client: _Client | None = None
    reason = "no greeting within the connect timeout"
    with trio.move_on_after(timeout):
        try:
            client = _Client(await trio.open_tcp_stream("127.0.0.1", port))
            greeting = decode(await client.frame())
        except (OSError, EOFError, trio.BrokenResourceError) as exc:
            reason = f"connect failed: {exc.__class__.__name__}"
        else:
            if isinstance(greeting, ErrorPDU) and greeting.code >= 0:
                await client.stream.send_all(_creds_and_profile())
                tally.accepted += 1
                return client
            reason = f"refused: {greeting}"
    if client is not None:
        client.close()
    tally.refused[reason] += 1
    return None


async def _fetch_loop(
    client: _Client, fetch: bytes, first: float, spec: dict, deadline: float, tally: _Tally
) -> None:
    """SPEC["fetches"] fetches on a fixed schedule from FIRST; tally what comes back."""
    import trio

    interval, timeout, npmids = spec["interval"], spec["fetch_timeout"], len(spec["pmids"])
    tally.planned += spec["fetches"]
    with trio.move_on_at(deadline) as phase:
        for k in range(spec["fetches"]):
            await trio.sleep_until(first + k * interval)
            tally.sent += 1
            start = time.perf_counter()
            with trio.move_on_after(timeout) as waiting:
                try:
                    await client.stream.send_all(fetch)
                    frame = await client.frame()
                except (OSError, EOFError, ValueError, trio.BrokenResourceError) as exc:
                    tally.problems[f"connection lost ({exc.__class__.__name__})"] += 1
                    return
            if waiting.cancelled_caught:
                tally.problems["fetch timeout (client ended)"] += 1
                return
            elapsed = time.perf_counter() - start
            _, kind, _ = _HEADER.unpack_from(frame)
            if kind != PDUType.PDU_RESULT:
                tally.problems[f"reply {decode(frame)}"] += 1
                continue
            if k == 0:  # the first reply in full: a value set with values for every metric
                result = decode(frame)
                assert isinstance(result, ResultPDU)
                vsets = result.result.vsets
                if len(vsets) != npmids or any(v.numval <= 0 for v in vsets):
                    tally.problems["first result lacks values"] += 1
            tally.answered += 1
            tally.latencies.append(elapsed)
    if phase.cancelled_caught:
        tally.problems["cut off at the phase deadline"] += 1


async def _worker_main(spec: dict) -> None:
    """Connect, report, fetch, report, hold, close, report: driven by lines on stdin."""
    import trio

    tally = _Tally()

    async def next_command() -> str:
        line = await trio.to_thread.run_sync(sys.stdin.readline)
        if not line:  # the parent went away: stop at once
            os._exit(1)
        return line.strip()

    def report(**fields) -> None:
        print(json.dumps(fields), flush=True)

    slots: list[_Client | None] = [None] * spec["clients"]

    async def connect(i: int) -> None:
        if spec["ramp"]:
            await trio.sleep(random.uniform(0, spec["ramp"]))
        slots[i] = await _connect(spec["port"], spec["connect_timeout"], tally)

    async with trio.open_nursery() as nursery:
        for i in range(spec["clients"]):
            nursery.start_soon(connect, i)
    clients = [c for c in slots if c is not None]
    report(phase="connected", accepted=tally.accepted)

    await next_command()  # "go"
    fetch = encode(FetchPDU(0, tuple(spec["pmids"])))
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu0, wall0 = usage.ru_utime + usage.ru_stime, time.perf_counter()
    now, interval = trio.current_time(), spec["interval"]
    deadline = now + spec["fetches"] * interval + spec["fetch_timeout"] + 5
    async with trio.open_nursery() as nursery:
        for client in clients:
            first = now + random.uniform(0, interval)
            nursery.start_soon(_fetch_loop, client, fetch, first, spec, deadline, tally)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu = usage.ru_utime + usage.ru_stime - cpu0
    report(phase="fetched", cpu=cpu, wall=time.perf_counter() - wall0)

    await next_command()  # "close"
    for client in clients:
        client.close()
    report(
        phase="closed",
        accepted=tally.accepted,
        refused=dict(tally.refused),
        planned=tally.planned,
        sent=tally.sent,
        answered=tally.answered,
        problems=dict(tally.problems),
        latencies=tally.latencies,
    )


def worker(spec_json: str) -> int:
    """The body of one generator process (this script run with --worker SPEC)."""
    import trio

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops us
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    trio.run(_worker_main, json.loads(spec_json))
    return 0


# --------------------------------------------------------------------------
# the parent: daemons, a blocking client for checks, /proc readings


class _SyncClient:
    """A blocking bare PCP client, for looking names up and checking pmcd between phases."""

    def __init__(self, port: int, timeout: float = 10) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout)
        self.framer = PDUFramer()
        greeting = self.receive()
        if not (isinstance(greeting, ErrorPDU) and greeting.code >= 0):
            raise RuntimeError(f"pmcd refused a connection: {greeting}")
        self.sock.sendall(_creds_and_profile())

    def receive(self) -> PDU:
        while (frame := self.framer.next_frame()) is None:
            data = self.sock.recv(65536)
            if not data:
                raise EOFError("pmcd closed the connection")
            self.framer.feed(data)
        return decode(frame)

    def ask(self, pdu: PDU) -> PDU:
        self.sock.sendall(encode(pdu))
        return self.receive()

    def close(self) -> None:
        self.sock.close()


def _lookup(port: int) -> tuple[int, ...]:
    """The PMIDs of METRICS, checked to fetch with values for each."""
    client = _SyncClient(port)
    try:
        reply = client.ask(PMNSNamesPDU(METRICS))
        if not isinstance(reply, PMNSIdsPDU) or reply.status < 0:
            raise RuntimeError(f"name lookup failed: {reply}")
        result = client.ask(FetchPDU(0, reply.pmids))
        if not isinstance(result, ResultPDU):
            raise RuntimeError(f"test fetch failed: {result}")
        bad = [n for n, v in zip(METRICS, result.result.vsets, strict=True) if v.numval <= 0]
        if bad:
            raise RuntimeError(f"no values for {', '.join(bad)}")
        return reply.pmids
    finally:
        client.close()


def _numclients(port: int) -> int:
    """pmcd.numclients as a fresh client sees it (so at least 1)."""
    client = _SyncClient(port)
    try:
        reply = client.ask(PMNSNamesPDU(("pmcd.numclients",)))
        assert isinstance(reply, PMNSIdsPDU), reply
        result = client.ask(FetchPDU(0, reply.pmids))
        assert isinstance(result, ResultPDU), result
        return result.result.vsets[0].values[0]
    finally:
        client.close()


def _cpu_seconds(pid: int) -> float:
    """utime + stime of process PID itself (not its children), in seconds."""
    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text[text.rindex(")") + 2 :].split()  # fields from the 3rd (state) on
    return (int(fields[11]) + int(fields[12])) / _CLK_TCK


def _children(pid: int) -> list[int]:
    """The processes whose parent is PID (pmcd's agents)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                text = (entry / "stat").read_text()
                if int(text[text.rindex(")") + 2 :].split()[1]) == pid:
                    found.append(int(entry.name))
    return found


def _agents_cpu(pid: int) -> float:
    total = 0.0
    for child in _children(pid):
        with contextlib.suppress(OSError):
            total += _cpu_seconds(child)
    return total


def _status_mb(pid: int, key: str) -> float:
    """A kB figure (VmRSS, VmHWM) of process PID's /proc status, in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {key} for process {pid}")


class PmcdDied(Exception):
    """The daemon under test exited during a measurement."""


@dataclass
class Row:
    """One daemon's figures at one client count in one run."""

    clients: int
    accepted: int = 0
    planned: int = 0
    answered: int = 0
    p50: float | None = None  # seconds
    p99: float | None = None
    cpu: float | None = None  # pmcd's own CPU seconds
    agent_cpu: float | None = None
    rss_before: float | None = None  # MB
    rss_held: float | None = None
    rss_peak: float | None = None
    rss_after: float | None = None
    gen_core: float | None = None  # busiest worker: CPU seconds / wall seconds
    notes: list[str] = field(default_factory=list)

    @property
    def rss_delta(self) -> float | None:
        if self.rss_before is None or self.rss_after is None:
            return None
        return self.rss_after - self.rss_before


class _Watch:
    """Reads the daemon's /proc figures while we wait, and notices if it dies."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc, self.pid = proc, proc.pid
        self.cpu = _cpu_seconds(self.pid)
        self.agent_cpu = _agents_cpu(self.pid)
        self.peak = _status_mb(self.pid, "VmHWM")

    def sample(self) -> None:
        if self.proc.poll() is not None:
            raise PmcdDied(f"exit status {self.proc.returncode}")
        with contextlib.suppress(OSError, RuntimeError):
            self.cpu = _cpu_seconds(self.pid)
            self.peak = _status_mb(self.pid, "VmHWM")

    def alive(self) -> bool:
        return self.proc.poll() is None


def _start_workers(port: int, clients: int, pmids: Sequence[int], args) -> list[subprocess.Popen]:
    counts = [clients // args.workers + (i < clients % args.workers) for i in range(args.workers)]
    workers = []
    for count in counts:
        if not count:
            continue
        spec = {
            "port": port,
            "clients": count,
            "pmids": list(pmids),
            "fetches": args.fetches,
            "interval": args.interval,
            "connect_timeout": args.connect_timeout,
            "fetch_timeout": args.fetch_timeout,
            "ramp": args.ramp,
        }
        workers.append(
            subprocess.Popen(
                [sys.executable, __file__, "--worker", json.dumps(spec)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                bufsize=1,
            )
        )
    return workers


def _await_phase(
    workers: list[subprocess.Popen], phase: str, seconds: float, watch: _Watch
) -> tuple[list[dict], str | None]:
    """Each worker's report of PHASE, reading pmcd's figures meanwhile.

    Returns the reports and, if pmcd died meanwhile, why (the workers then still
    finish: they are bounded).  Raises RuntimeError if a worker fails or is late.
    """
    reports: dict[int, dict] = {}
    died = None
    deadline = time.monotonic() + seconds
    while len(reports) < len(workers):
        if died is None:
            try:
                watch.sample()
            except PmcdDied as exc:
                died = str(exc)
        left = deadline - time.monotonic()
        if left <= 0:
            raise RuntimeError(f"load generator gave no '{phase}' report in {seconds:.0f} s")
        waiting = [w for i, w in enumerate(workers) if i not in reports]
        ready, _, _ = select.select([w.stdout for w in waiting], [], [], min(left, 0.1))
        for i, w in enumerate(workers):
            if w.stdout in ready:
                line = w.stdout.readline()
                if not line:
                    raise RuntimeError(f"load generator worker exited ({w.wait()})")
                report = json.loads(line)
                if report.get("phase") != phase:
                    raise RuntimeError(f"worker said {report!r}, expected phase {phase!r}")
                reports[i] = report
    return [reports[i] for i in range(len(workers))], died


def _tell(workers: list[subprocess.Popen], command: str) -> None:
    for w in workers:
        assert w.stdin is not None
        w.stdin.write(command + "\n")
        w.stdin.flush()


def _percentile(ordered: Sequence[float], q: float) -> float:
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


@contextlib.contextmanager
def _stopping(workers: list[subprocess.Popen]) -> Iterator[None]:
    try:
        yield
    finally:
        for w in workers:
            if w.poll() is None:
                w.kill()
            w.wait()


def measure(ours: bool, clients: int, args) -> Row:
    """Start a daemon, run CLIENTS clients against it, and stop it: its Row."""
    with tempfile.TemporaryDirectory(prefix="bench-load-") as tmp:
        Path(tmp, "root").write_text(NAMESPACE)
        try:
            with running_pmcd(ours, CONF, tmp, Path(tmp, "root")) as (port, proc):
                return _measure(port, proc, clients, args)
        except RuntimeError as exc:
            log = Path(tmp, "pmcd.log")
            tail = log.read_text(errors="replace").strip().splitlines()[-3:] if log.exists() else []
            raise RuntimeError(" / ".join([str(exc).split(";")[0], *tail])) from None


def _measure(port: int, proc: subprocess.Popen, clients: int, args) -> Row:
    """Run CLIENTS clients against the daemon PROC listening on PORT: its Row."""
    row = Row(clients)
    pmids = _lookup(port)
    time.sleep(0.5)  # let pmcd finish with the lookup client
    row.rss_before = _status_mb(proc.pid, "VmRSS")
    watch = _Watch(proc)
    cpu0, agent_cpu0 = watch.cpu, watch.agent_cpu
    workers = _start_workers(port, clients, pmids, args)
    died = None
    with _stopping(workers):
        connect_wait = args.ramp + args.connect_timeout + 60  # generous: interpreter start-up
        _, died = _await_phase(workers, "connected", connect_wait, watch)
        _tell(workers, "go")
        fetch_wait = args.fetches * args.interval + args.fetch_timeout + 30
        fetched, now_died = _await_phase(workers, "fetched", fetch_wait, watch)
        died = died or now_died
        row.gen_core = max(r["cpu"] / r["wall"] for r in fetched if r["wall"] > 0)
        if watch.alive():
            row.rss_held = _status_mb(proc.pid, "VmRSS")
        _tell(workers, "close")
        closed, now_died = _await_phase(workers, "closed", 30, watch)
        died = died or now_died
    row.accepted = sum(r["accepted"] for r in closed)
    row.planned = sum(r["planned"] for r in closed)
    row.answered = sum(r["answered"] for r in closed)
    latencies = sorted(x for r in closed for x in r["latencies"])
    if latencies:
        row.p50, row.p99 = _percentile(latencies, 0.5), _percentile(latencies, 0.99)
    refused: Counter[str] = Counter()
    problems: Counter[str] = Counter()
    for r in closed:
        refused.update(r["refused"])
        problems.update(r["problems"])
    row.notes += [f"{n} connections: {why}" for why, n in refused.most_common()]
    row.notes += [f"{n} clients: {why}" for why, n in problems.most_common()]
    if died is None:
        died = _settle(port, watch, row)
    row.cpu = watch.cpu - cpu0
    row.agent_cpu = _agents_cpu(proc.pid) - agent_cpu0 if watch.alive() else None
    row.rss_peak = watch.peak
    if died is not None:
        row.notes.insert(0, f"pmcd died at {clients} clients ({died})")
    return row


def _settle(port: int, watch: _Watch, row: Row) -> str | None:
    """Wait for pmcd to count only a fresh client, then read RSS after; why pmcd died if so."""
    deadline = time.monotonic() + 15
    count = None
    while time.monotonic() < deadline:
        try:
            watch.sample()
            count = _numclients(port)
        except PmcdDied as exc:
            return str(exc)
        except (OSError, EOFError, RuntimeError, AssertionError) as exc:
            row.notes.append(f"after the run pmcd did not answer: {exc}")
            break
        if count <= 1:
            break
        time.sleep(0.2)
    else:
        row.notes.append(f"15 s after all clients left pmcd.numclients still {count}")
    time.sleep(0.5)
    try:
        watch.sample()
    except PmcdDied as exc:
        return str(exc)
    row.rss_after = _status_mb(watch.pid, "VmRSS")
    return None


# --------------------------------------------------------------------------
# tables


def _f(value: float | None, spec: str, scale: float = 1.0) -> str:
    return "-" if value is None else format(value * scale, spec)


def _ratio(a: float | None, b: float | None) -> str:
    return "-" if a is None or b is None or b == 0 else f"{a / b:.2f}"


HEADER = (
    f"{'clients':>7} {'pmcd':5} {'accepted':>9} {'answered':>13} {'p50 ms':>8} {'p99 ms':>8}"
    f" {'CPU s':>6} {'agentCPU':>8} | {'RSS MB: before':>14} {'held':>6} {'peak':>6}"
    f" {'after':>6} {'delta':>6} | {'gen %core':>9}"
)


def _line(name: str, row: Row) -> str:
    return (
        f"{row.clients:7d} {name:5} {f'{row.accepted}/{row.clients}':>9}"
        f" {f'{row.answered}/{row.planned}':>13} {_f(row.p50, '8.2f', 1e3)}"
        f" {_f(row.p99, '8.2f', 1e3)} {_f(row.cpu, '6.2f')} {_f(row.agent_cpu, '8.2f')} |"
        f" {_f(row.rss_before, '14.1f')} {_f(row.rss_held, '6.1f')} {_f(row.rss_peak, '6.1f')}"
        f" {_f(row.rss_after, '6.1f')} {_f(row.rss_delta, '+6.1f')} |"
        f" {_f(row.gen_core, '9.0f', 100)}"
    )


def print_table(rows: dict[int, dict[str, Row]], notes: bool = True) -> None:
    """Rows of both daemons at each client count, ratios, targets and notes."""
    print(HEADER)
    for pair in rows.values():
        for name, row in pair.items():
            print(_line(name, row))
        ours, pcp = pair.get("ours"), pair.get("PCP")
        if ours is not None and pcp is not None:
            print(
                f"{'':7} {'ours/PCP':28} {'':8} {_ratio(ours.p99, pcp.p99):>8}"
                f" {_ratio(ours.cpu, pcp.cpu):>6}"
            )
        if ours is not None:
            print(f"{'':8}targets: {_targets(ours, pcp)}")
        if notes:
            for name, row in pair.items():
                for note in row.notes:
                    print(f"{'':8}{name}: {note}")


def _targets(ours: Row, pcp: Row | None) -> str:
    def mark(ok: bool) -> str:
        return "ok" if ok else "MISSED"

    parts = []
    if ours.clients >= 500:
        parts.append(f"all accepted {mark(ours.accepted == ours.clients)}")
        parts.append(f"all answered {mark(ours.planned > 0 and ours.answered == ours.planned)}")
    if pcp is not None and pcp.p99 is not None and ours.p99 is not None:
        ratio = ours.p99 / pcp.p99
        parts.append(f"p99 {ratio:.2f}x PCP's (<= {TARGET_P99_RATIO:g}x) {mark(ratio <= 2)}")
    elif pcp is not None and pcp.p99 is None:
        parts.append("p99: PCP answered nothing, no comparison")
    delta = ours.rss_delta
    within = delta is not None and abs(delta) <= TARGET_RSS_DELTA_MB
    parts.append(f"RSS after within {TARGET_RSS_DELTA_MB:g} MB of before {mark(within)}")
    return "; ".join(parts)


def median_rows(runs: list[dict[int, dict[str, Row]]]) -> dict[int, dict[str, Row]]:
    """Every figure's median over the runs (None where any run lacks it)."""
    result: dict[int, dict[str, Row]] = {}
    for clients, pair in runs[0].items():
        result[clients] = {}
        for name in pair:
            rows = [run[clients][name] for run in runs]
            merged = Row(clients)
            for attr in (
                "accepted", "planned", "answered", "p50", "p99", "cpu", "agent_cpu",
                "rss_before", "rss_held", "rss_peak", "rss_after", "gen_core",
            ):  # fmt: skip
                values = [getattr(r, attr) for r in rows]
                if all(v is not None for v in values):
                    median = statistics.median(values)
                    if isinstance(values[0], int):
                        median = int(median)
                    setattr(merged, attr, median)
            merged.notes = [
                f"run {i}: {note}" for i, r in enumerate(rows, 1) for note in r.notes
                if "died" in note
            ]  # fmt: skip
            result[clients][name] = merged
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", default="100,300,500", help="client counts (100,300,500)")
    parser.add_argument("--fetches", type=int, default=20, help="fetches per client (20)")
    parser.add_argument("--interval", type=float, default=0.5, help="seconds between fetches (0.5)")
    parser.add_argument("--runs", type=int, default=3, help="runs; medians printed after (3)")
    parser.add_argument("--workers", type=int, default=2, help="generator processes (2)")
    parser.add_argument("--connect-timeout", type=float, default=5.0, help="seconds (5)")
    parser.add_argument("--fetch-timeout", type=float, default=10.0, help="seconds (10)")
    parser.add_argument(
        "--ramp", type=float, default=0.0,
        help="spread the connects at random over this many seconds (0: all at once)",
    )  # fmt: skip
    parser.add_argument("--only", choices=("ours", "PCP"), help="run one daemon only")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker is not None:
        return worker(args.worker)
    if not (PMCD.exists() and SAMPLE.exists() and (PMDAS / "pmcd" / "pmda_pmcd.so").exists()):
        print(
            "reference PCP 6 is not installed (Debian package pcp): its pmcd, pmda_pmcd.so "
            "and pmdasample are needed, so this benchmark cannot run"
        )
        return 1
    counts = [int(n) for n in args.clients.split(",")]
    daemons = [d for d in ("ours", "PCP") if args.only in (None, d)]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so that cleanup runs
    print(
        f"{args.fetches} fetches per client, one every {args.interval:g} s; FETCH of "
        f"{len(METRICS)} metrics (pmcd's own agent + pmdasample as a pipe agent); "
        f"connects {f'spread over {args.ramp:g} s' if args.ramp else 'all at once'}, "
        f"connect timeout {args.connect_timeout:g} s, fetch timeout {args.fetch_timeout:g} s; "
        f"{args.workers} generator processes"
    )
    print(
        "CPU s: pmcd's own utime+stime (children not included); agentCPU: the pipe "
        "agent's; p50/p99 of answered fetches; peak = VmHWM; gen %core: busiest generator "
        "process during the fetches"
    )
    runs: list[dict[int, dict[str, Row]]] = []
    for run in range(1, args.runs + 1):
        rows: dict[int, dict[str, Row]] = {}
        for clients in counts:
            rows[clients] = {}
            for name in daemons:
                try:
                    rows[clients][name] = measure(name == "ours", clients, args)
                except (RuntimeError, OSError, EOFError) as exc:  # reported, not fatal
                    rows[clients][name] = Row(clients, notes=[f"measurement failed: {exc}"])
        print(f"\nrun {run} of {args.runs}")
        print_table(rows)
        runs.append(rows)
    if args.runs > 1:
        print(f"\nmedians over {args.runs} runs (ratios of the medians)")
        print_table(median_rows(runs))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:  # daemons, agents and workers are stopped by now
        print("\ninterrupted", file=sys.stderr)
        sys.exit(130)
