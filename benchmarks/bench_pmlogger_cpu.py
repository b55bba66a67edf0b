"""Benchmark: pmlogger CPU seconds to log ~200 values every 100 ms, ours against PCP's.

Both loggers log the same metrics from the same reference pmcd (pmda_pmcd.so and the
reference pmdalinux), one after the other, for the same time; the figure is the CPU
time (user + system) each logger process used, read from /proc when it exits.  The
metric list is the linux agent's first metrics whose values add up to at least 200.
Target: ours / reference <= 2.

    .venv/bin/python benchmarks/bench_pmlogger_cpu.py [--seconds 30]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.reference_pmcd import PMDAS, reference_installed, running_pmcd  # noqa: E402

CONF = [
    f"pmcd\t2\tdso\tpmcd_init\t{PMDAS / 'pmcd' / 'pmda_pmcd.so'}",
    f"linux\t60\tpipe\tbinary\t{PMDAS / 'linux' / 'pmdalinux'} -d 60",
]
TARGET = 2.0
WANTED = 200


def pick_metrics(host: str) -> tuple[list[str], int]:
    """Linux metrics (in namespace order) whose value counts add up to WANTED or more."""
    env = dict(os.environ, PCP_DERIVED_CONFIG="")
    out = subprocess.run(
        ["pmprobe", "-h", host, "kernel", "mem", "disk", "network", "swap", "filesys"],
        env=env, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    names, total = [], 0
    for line in out.splitlines():
        name, _, count = line.rpartition(" ")
        if count.isdigit() and int(count) > 0:
            names.append(name)
            total += int(count)
            if total >= WANTED:
                break
    return names, total


def cpu_seconds(argv: list[str], seconds: float, cwd: str) -> float:
    """Run ARGV for SECONDS, stop it with SIGTERM, and return its CPU time."""
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(seconds)
    stat = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    used = (int(stat[11]) + int(stat[12])) / ticks  # utime, stime (fields 14, 15)
    proc.terminate()
    proc.wait(timeout=30)
    return used


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    args = parser.parse_args()
    if not reference_installed():
        print("reference PCP 6 is not installed (Debian package pcp): nothing to compare")
        return 1
    # An installed package has its modules byte-compiled; make sure ours are, so the
    # figure is not start-up spent compiling source (PYTHONDONTWRITEBYTECODE would hide it).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    packages = [str(ROOT / name) for name in ("pmapi", "pmlogger")]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *packages], env=env, check=True)
    with tempfile.TemporaryDirectory() as tmp, running_pmcd(False, CONF, tmp) as (port, _):
        host = f"127.0.0.1:{port}"
        names, values = pick_metrics(host)
        cfg = Path(tmp, "cfg")
        cfg.write_text("log mandatory on every 100 msec {\n" + "\n".join(names) + "\n}\n")
        common = ["-h", host, "-c", str(cfg), "-l", str(Path(tmp, "log"))]
        ours = cpu_seconds(
            [sys.executable, "-m", "purepcp.pmlogger.main", *common, str(Path(tmp, "ours"))],
            args.seconds,
            str(ROOT),
        )
        theirs = cpu_seconds(["pmlogger", *common, str(Path(tmp, "theirs"))], args.seconds, tmp)
    print(f"{len(names)} metrics, {values} values every 100 ms for {args.seconds:.0f} s")
    print(f"ours:      {ours:.2f} CPU s")
    print(f"reference: {theirs:.2f} CPU s")
    ratio = ours / theirs if theirs else float("inf")
    print(f"ratio ours/reference: {ratio:.2f} (target <= {TARGET})")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
