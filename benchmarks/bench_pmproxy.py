"""Benchmark: our pmproxy against PCP 6's, both in front of the same reference pmcd.

The reference pmcd runs PCP's pmcd, linux and proc agents (what PCP's pmproxy
usually fronts).  One client (Python's http.client, a kept-alive connection) times:

- ``/pmapi/fetch`` latency, p50 and p99, of three linux metrics on an explicit
  context, request after request (target: ours at most 1.5x PCP's p50);
- a whole-namespace ``/metrics`` scrape on a new context each time (as PCP's pmproxy
  always scrapes: every descriptor, label set and help text read again), and the
  scrape Prometheus gets from ours, whose /metrics requests share a context per pmcd
  (target: ours at most 1x PCP's).

The two pmproxies are timed in turn, round after round; each figure is the median of
the rounds.

    .venv/bin/python benchmarks/bench_pmproxy.py [--quick]
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import pwd
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.reference_pmcd import PMDAS, reference_installed, running_pmcd  # noqa: E402

PCP_PMPROXY = "/usr/lib/pcp/bin/pmproxy"
CONF = [
    f"pmcd\t2\tdso\tpmcd_init\t{PMDAS / 'pmcd' / 'pmda_pmcd.so'}",
    f"linux\t60\tpipe\tbinary\t{PMDAS / 'linux' / 'pmdalinux'} -d 60",
    f"proc\t3\tpipe\tbinary\t{PMDAS / 'proc' / 'pmdaproc'} -d 3",
]
FETCH = "/pmapi/{c}/fetch?names=kernel.all.load,hinv.ncpu,mem.util.free"
REFERENCE_CONF = (
    "[pmproxy]\npcp.enabled = true\nhttp.enabled = true\nredis.enabled = false\n"
    "secure.enabled = false\n[pmseries]\nenabled = false\n[discover]\nenabled = false\n"
    "[pmsearch]\nenabled = false\n"
)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def proxy(ours: bool, pmcd_port: int, tmp: str) -> Iterator[int]:
    """Our pmproxy or PCP's on a free loopback port, its pmcd localhost:PMCD_PORT."""
    port = _free_port()
    env = dict(os.environ, PYTHONPATH=str(ROOT), PMCD_PORT=str(pmcd_port), PCP_RUN_DIR=tmp)
    common = ["-f", "-p", str(port), "-i", "127.0.0.1", "-l", f"{tmp}/pmproxy.log"]
    if ours:
        argv = [sys.executable, "-m", "purepcp.pmproxy.main", *common]
    else:
        Path(tmp, "pmproxy.conf").write_text(REFERENCE_CONF)
        user = pwd.getpwuid(os.getuid()).pw_name
        argv = [PCP_PMPROXY, "-A", "-c", f"{tmp}/pmproxy.conf", "-s", f"{tmp}/s", "-U", user]
        argv += common
    proc = subprocess.Popen(
        argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                request(port, "/pmapi/nosuch")
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError(f"{argv[0]} did not start") from None
                time.sleep(0.05)
        yield port
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)


def request(port: int, path: str, conn: http.client.HTTPConnection | None = None) -> bytes:
    own = conn is None
    conn = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.request("GET", path)
        return conn.getresponse().read()
    finally:
        if own:
            conn.close()


def context(port: int, conn: http.client.HTTPConnection) -> int:
    return json.loads(request(port, "/pmapi/context?polltimeout=120", conn))["context"]


def fetch_latencies(port: int, number: int) -> list[float]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        path = FETCH.format(c=context(port, conn))
        request(port, path, conn)
        out = []
        for _ in range(number):
            start = time.perf_counter()
            request(port, path, conn)
            out.append(time.perf_counter() - start)
        return out
    finally:
        conn.close()


def scrape_seconds(port: int, fresh: bool) -> tuple[float, int]:
    """A whole /metrics scrape: on a new context (FRESH), else as Prometheus asks."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        path = f"/metrics?context={context(port, conn)}" if fresh else "/metrics"
        start = time.perf_counter()
        body = request(port, path, conn)
        return time.perf_counter() - start, body.count(b"\n")
    finally:
        conn.close()


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer requests and rounds")
    args = parser.parse_args()
    if not reference_installed() or not os.path.exists(PCP_PMPROXY):
        print("bench_pmproxy: the reference PCP 6 (Debian's pcp) is not installed")
        return 1
    number, rounds = (300, 2) if args.quick else (2000, 3)
    with (
        tempfile.TemporaryDirectory(prefix="bench-pmproxy-") as pmcd_dir,
        tempfile.TemporaryDirectory(prefix="bench-pmproxy-") as ours_dir,
        tempfile.TemporaryDirectory(prefix="bench-pmproxy-") as theirs_dir,
        running_pmcd(False, CONF, pmcd_dir) as (pmcd_port, _),
        proxy(True, pmcd_port, ours_dir) as ours,
        proxy(False, pmcd_port, theirs_dir) as theirs,
    ):
        p50 = {ours: [], theirs: []}
        p99 = {ours: [], theirs: []}
        cold = {ours: [], theirs: []}
        warm: list[float] = []
        lines = {}
        scrape_seconds(ours, False)  # (Prometheus's first scrape: the shared context's start)
        for _ in range(rounds):
            for port in (ours, theirs):
                latencies = fetch_latencies(port, number)
                p50[port].append(quantile(latencies, 0.5))
                p99[port].append(quantile(latencies, 0.99))
                seconds, lines[port] = scrape_seconds(port, fresh=True)
                cold[port].append(seconds)
            warm.append(scrape_seconds(ours, fresh=False)[0])
    med = statistics.median
    rows = [
        ("/pmapi/fetch p50", med(p50[ours]) * 1e3, med(p50[theirs]) * 1e3, "ms", 1.5),
        ("/pmapi/fetch p99", med(p99[ours]) * 1e3, med(p99[theirs]) * 1e3, "ms", None),
        ("/metrics, new context", med(cold[ours]), med(cold[theirs]), "s", 1.0),
        ("/metrics, Prometheus's (ours shared)", med(warm), med(cold[theirs]), "s", 1.0),
    ]
    print(f"pmcd: PCP 6's with pmcd, linux, proc; /metrics {lines[ours]} lines (ours), "
          f"{lines[theirs]} (PCP's); medians of {rounds} rounds of {number} fetches")  # fmt: skip
    for name, mine, pcp, unit, target in rows:
        ratio = mine / pcp
        verdict = "" if target is None else (" met" if ratio <= target else " NOT met")
        goal = "" if target is None else f" (target <= {target:g}){verdict}"
        figures = f"ours {mine:8.3f} {unit}  PCP {pcp:8.3f} {unit}  ratio {ratio:5.2f}"
        print(f"{name:38s} {figures}{goal}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
