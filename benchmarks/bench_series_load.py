"""Benchmark: loading the 4-million-value archive into a fresh Redis, our pmseries --load
against PCP 6.0.3's.

The archive is benchmarks/big_archive.py's (20 metrics x 10 instances x 20,000 samples,
written by PCP's pmi).  Each round starts a private redis-server (no persistence) on a
free loopback port, times one command's whole run (process start to exit, every reply
read: both wait for their writes), and stops it; the two commands take turns.  Figures
are medians; values per second are the archive's 4,000,000 values over the time.

Two settings of [pmseries] stream.maxlen:
1. PCP's default, 8640: a stream keeps the newest 8640 entries of its 20,000.  PCP
   writes all 20,000 and Redis trims them; ours sends only the entries that stay.
   Target: ours at least 10x PCP's.
2. 100000, so that every entry stays: both write all 400,000 entries; this is the
   speed of writing, the same work on both sides.

    .venv/bin/python benchmarks/bench_series_load.py [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.big_archive import INSTANCES, METRICS, SAMPLES, ensure  # noqa: E402

VALUES = METRICS * INSTANCES * SAMPLES
OURS = [sys.executable, "-m", "purepcp.tools.pmseries"]
THEIRS = ["/usr/bin/pmseries"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fresh_redis(work: Path) -> tuple[subprocess.Popen, int]:
    port = free_port()
    proc = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", str(work), "--logfile", str(work / "redis.log")],
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, port
        except OSError:
            time.sleep(0.02)
    proc.kill()
    raise SystemExit("redis-server did not start")


def timed_load(command: list[str], base: str, conf: Path, work: Path) -> tuple[float, int]:
    """Seconds one load took into a fresh server, and the stream entries it left."""
    proc, port = fresh_redis(work)
    try:
        start = time.perf_counter()
        done = subprocess.run(
            [*command, "-c", str(conf), "-h", "127.0.0.1", "-p", str(port), "--load", base],
            capture_output=True,
            text=True,
        )
        took = time.perf_counter() - start
        if done.returncode != 0 or "processed" not in done.stdout:
            raise SystemExit(f"{command[-1]} failed: {done.stderr.strip()}")
        import redis

        client = redis.Redis(host="127.0.0.1", port=port)
        entries = sum(client.xlen(k) for k in client.scan_iter(match="pcp:values:*"))
        client.close()
        return took, entries
    finally:
        proc.kill()
        proc.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if not os.path.exists(THEIRS[0]) or shutil.which("redis-server") is None:
        print("needs PCP 6's pmseries (Debian package pcp) and redis-server")
        return 1
    base = ensure()
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for maxlen, target in ((8640, 10.0), (100_000, None)):
            conf = work / f"pmseries-{maxlen}.conf"
            conf.write_text(
                f"[discover]\nexclude.metrics =\n[pmseries]\nstream.maxlen = {maxlen}\n"
            )
            times: dict[str, list[float]] = {"ours": [], "pcp": []}
            kept: dict[str, int] = {}
            for _ in range(args.rounds):
                for who, command in (("ours", OURS), ("pcp", THEIRS)):
                    took, entries = timed_load(command, base, conf, work)
                    times[who].append(took)
                    kept[who] = entries
            ours, pcp = statistics.median(times["ours"]), statistics.median(times["pcp"])
            ratio = pcp / ours
            print(
                f"stream.maxlen {maxlen}: ours {ours:.2f} s ({VALUES / ours / 1e6:.2f}M values/s), "
                f"PCP's {pcp:.2f} s ({VALUES / pcp / 1e6:.2f}M values/s): {ratio:.1f}x"
                + (f" (target >= {target:.0f}x)" if target else "")
            )
            print(f"  stream entries left: ours {kept['ours']}, PCP's {kept['pcp']}; "
                  f"runs ours {[round(t, 2) for t in times['ours']]}, "
                  f"PCP's {[round(t, 2) for t in times['pcp']]}")  # fmt: skip
            if target:
                ok &= ratio >= target
        query = values_query(work, args.rounds)
        print(
            f"/series/values over a day of one metric ({DAY_SAMPLES} samples x {DAY_INSTS} "
            f"instances): ours {query['ours'] * 1000:.1f} ms, PCP's pmproxy "
            f"{query['pcp'] * 1000:.1f} ms: {query['pcp'] / query['ours']:.1f}x"
        )
    return 0 if ok else 1


DAY_SAMPLES, DAY_INSTS = 8640, 10  # (a day at 10 s: what a stream keeps by default)


def day_archive(work: Path) -> str:
    """One metric, ten instances, a day at 10 s intervals, written by our writer."""
    from purepcp.pmapi.archive import ArchiveWriter
    from purepcp.pmapi.desc import Desc
    from purepcp.pmapi.ids import pmID_build, pmInDom_build
    from purepcp.pmapi.types import PMSem, PMType
    from purepcp.pmapi.units import Units
    from purepcp.pmapi.values import Result, Timestamp, ValueSet

    base = str(work / "day")
    pmid, indom, t0 = pmID_build(245, 0, 1), pmInDom_build(245, 1), 1_700_000_000
    with ArchiveWriter(base, hostname="bench", timezone="UTC", start=Timestamp(t0)) as w:
        w.put_desc(Desc(pmid, PMType.PM_TYPE_DOUBLE, indom, PMSem.PM_SEM_INSTANT, Units()),
                   ["day.load"])  # fmt: skip
        w.put_indom(Timestamp(t0), indom, list(range(DAY_INSTS)),
                    [f"cpu{i}" for i in range(DAY_INSTS)])  # fmt: skip
        w.put_index(Timestamp(t0))
        for s in range(DAY_SAMPLES):
            pairs = [(i, (s % 97) * 0.5 + i) for i in range(DAY_INSTS)]
            w.put_result(Result(Timestamp(t0 + 10 * s), (ValueSet.of_atoms(
                pmid, PMType.PM_TYPE_DOUBLE, pairs),)))  # fmt: skip
    return base


def values_query(work: Path, rounds: int) -> dict[str, float]:
    """Median seconds of one /series/values request for the whole day, from PCP's pmproxy
    and ours on the same key server (the answers are compared first)."""
    import http.client

    from purepcp.series.load import ArchiveLoader
    from purepcp.series.store import Store, StoreConfig

    base = day_archive(work)
    proc, port = fresh_redis(work)
    procs = [proc]
    try:
        with Store(StoreConfig(servers=(("127.0.0.1", port),))) as store:
            ArchiveLoader(store, base).run()
        conf = work / "proxy.conf"
        conf.write_text(
            "[pmproxy]\npcp.enabled = false\nhttp.enabled = true\n[redis]\nenabled = true\n"
            f"servers = 127.0.0.1:{port}\n[pmseries]\nenabled = true\n[pmsearch]\n"
            "enabled = false\n[discover]\nenabled = false\n"
        )
        theirs, ours = free_port(), free_port()
        env = dict(os.environ, PCP_RUN_DIR=str(work), PCP_LOG_DIR=str(work), PCP_TMP_DIR=str(work))
        procs.append(subprocess.Popen(
            ["/usr/lib/pcp/bin/pmproxy", "-f", "-A", "-U", os.environ.get("USER", "root"),
             "-c", str(conf), "-p", str(theirs), "-i", "127.0.0.1", "-l", str(work / "p.log")],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))  # fmt: skip
        home = work / "home"
        ours_env = dict(os.environ, PUREPCP_LAYOUT="user", HOME=str(home),
                        XDG_RUNTIME_DIR=str(home / "run"), PYTHONPATH=str(ROOT))  # fmt: skip
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "purepcp.pmproxy.main", "-c", str(conf), "-p", str(ours),
             "-i", "127.0.0.1", "-l", str(work / "o.log")],
            env=ours_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))  # fmt: skip

        def get(port: int, path: str) -> bytes:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            try:
                conn.request("GET", path)
                return conn.getresponse().read()
            finally:
                conn.close()

        def ready(port: int) -> bool:
            try:
                return b"success" in get(port, "/series/ping")
            except OSError:
                return False

        deadline = time.monotonic() + 30
        while not (ready(theirs) and ready(ours)):
            if time.monotonic() > deadline:
                raise SystemExit("a pmproxy did not start")
            time.sleep(0.05)
        sid = get(ours, "/series/query?expr=day.load").decode().strip().strip('[]"\r\n')
        path = f"/series/values?series={sid}&start=1700000000&finish=1700086400"
        same = get(ours, path) == get(theirs, path)
        verdict = "yes" if same else "NO"
        print(f"/series/values answer: ours is PCP's pmproxy's, byte for byte: {verdict}")
        times: dict[str, list[float]] = {"ours": [], "pcp": []}
        for _ in range(max(rounds, 3) * 3):
            for who, p in (("ours", ours), ("pcp", theirs)):
                start = time.perf_counter()
                get(p, path)
                times[who].append(time.perf_counter() - start)
        return {who: statistics.median(t) for who, t in times.items()}
    finally:
        for p in procs:
            p.kill()
            p.wait()


if __name__ == "__main__":
    raise SystemExit(main())
