"""Benchmark: fetch throughput through our pmcd against the reference PCP 6 pmcd.

The same client (PCP's own Python bindings, pmFetch in a loop, run by the
system python3) fetches the same metrics from each daemon, configured alike:
pmcd's own agent (PCP's pmda_pmcd.so line, which our pmcd serves with its own
pmcd agent in-process) and the reference pmdalinux as a pipe agent.  Two metric
sets are timed: pmcd.* metrics (pmcd's own work) and linux metrics (a relay
through a pipe agent).  Prints fetches per second for both daemons and the
ratio ours / reference; the target is a ratio of at least 0.8 for each set on a
quiet machine (issue 25; it was 0.5).

    .venv/bin/python benchmarks/bench_pmcd_throughput.py [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.reference_pmcd import (
    PMDAS,
    reference_installed,
    running_pmcd,
    timed_fetch_seconds,
)

CONF = [
    f"pmcd\t2\tdso\tpmcd_init\t{PMDAS / 'pmcd' / 'pmda_pmcd.so'}",
    f"linux\t60\tpipe\tbinary\t{PMDAS / 'linux' / 'pmdalinux'} -d 60",
]

SETS = {
    "pmcd.* metrics": (
        "pmcd.numagents",
        "pmcd.numclients",
        "pmcd.version",
        "pmcd.agent.status",
        "pmcd.agent.type",
        "pmcd.pdu_in.total",
        "pmcd.pdu_out.total",
        "pmcd.timezone",
        "pmcd.hostname",
        "pmcd.control.timeout",
    ),
    "linux pipe agent": (
        "kernel.all.load",
        "kernel.all.cpu.user",
        "kernel.all.cpu.sys",
        "kernel.all.cpu.idle",
        "kernel.all.pswitch",
        "mem.physmem",
        "mem.util.free",
        "mem.util.cached",
        "swap.free",
        "hinv.ncpu",
    ),
}

TARGET = 0.8


def measure(number: int, rounds: int) -> tuple[dict[str, float], dict[str, float]]:
    """Seconds per fetch of each metric set from ours and from the reference.

    Both daemons run at once and are timed in turn, round after round, so that
    whatever else the machine is doing falls on both alike; each figure is the
    median over the rounds.
    """
    with (
        tempfile.TemporaryDirectory(prefix="bench-tput-") as ours_dir,
        tempfile.TemporaryDirectory(prefix="bench-tput-") as ref_dir,
        running_pmcd(True, CONF, ours_dir) as (ours_port, _),
        running_pmcd(False, CONF, ref_dir) as (ref_port, _),
    ):
        times: dict[int, dict[str, list[float]]] = {ours_port: {}, ref_port: {}}
        for _ in range(rounds):
            for name, names in SETS.items():
                for port in (ours_port, ref_port):
                    seconds = timed_fetch_seconds(port, names, number)
                    times[port].setdefault(name, []).append(seconds)
    ours = {name: statistics.median(runs) for name, runs in times[ours_port].items()}
    reference = {name: statistics.median(runs) for name, runs in times[ref_port].items()}
    return ours, reference


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer fetches")
    args = parser.parse_args()
    if not reference_installed() or not (PMDAS / "linux" / "pmdalinux").exists():
        print(
            "reference PCP 6 is not installed (Debian packages pcp and python3-pcp): this "
            "benchmark's client and pipe agent come from it, so it cannot run"
        )
        return 1
    number, rounds = (300, 3) if args.quick else (2_000, 7)
    ours, reference = measure(number, rounds)
    print(
        f"fetches per second; client: PCP's Python bindings, pmFetch in a loop; "
        f"median of {rounds} rounds, the two daemons taking turns"
    )
    print(f"{'metrics':18} {'ours':>10} {'reference':>10} {'ratio':>7}")
    worst = None
    for name in SETS:
        ratio = reference[name] / ours[name]
        worst = ratio if worst is None else min(worst, ratio)
        print(f"{name:18} {1 / ours[name]:10.0f} {1 / reference[name]:10.0f} {ratio:7.2f}")
    verdict = "meets" if worst >= TARGET else "misses"
    print(f"lowest ratio ours / reference: {worst:.2f} ({verdict} the >= {TARGET} target)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
