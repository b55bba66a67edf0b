"""Benchmark: a fetch of 50 linux metrics through our linux agent, against PCP's pmdalinux.

Our figure: `Linux.fetch(pmids)` in-process, timed from the framework (what pmcd's
in-process agent call costs: every cluster's refresh, the instance domains, the
value sets).  The reference figure, measured in the same run: pmFetch of the same
50 names through PCP's own Python bindings from a private reference pmcd running
Debian's pmdalinux, both as the pipe agent Debian's pmcd.conf runs and as a DSO
(quicker).  Prints all figures and the ratios; the target is at most 3.

    .venv/bin/python benchmarks/bench_linux_fetch.py [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.reference_pmcd import PMDAS, reference_fetch_seconds
from purepcp_agents.linux import Linux
from purepcp_agents.linux.catalog import REQUIRED

#: The issue's list of linux metrics, and three more to make fifty.
NAMES = (*REQUIRED, "kernel.all.intr", "kernel.all.pswitch", "hinv.ninterface")


def ours(number: int) -> float:
    """Median seconds per in-process fetch of NAMES from our linux agent."""
    agent = Linux()
    pmids = [agent.pmns.lookup(name) for name in NAMES]
    for _ in range(min(number, 200)):
        agent.fetch(pmids)
    runs = []
    for _ in range(7):
        start = time.perf_counter()
        for _ in range(number):
            agent.fetch(pmids)
        runs.append((time.perf_counter() - start) / number)
    return statistics.median(runs)


def references(number: int) -> dict[str, float]:
    """Median seconds per real pmFetch of NAMES from pmdalinux under real pmcd, by setup.

    Debian's pmcd.conf runs pmdalinux as a pipe agent; it can also be loaded as a
    DSO, which is quicker.  Both are measured; missing ones are left out.
    """
    agent = PMDAS / "linux"
    setups = {
        "pipe (Debian's pmcd.conf)": f"linux\t60\tpipe\tbinary\t{agent / 'pmdalinux'} -d 60",
        "dso": f"linux\t60\tdso\tlinux_init\t{agent / 'pmda_linux.so'}",
    }
    found = {}
    for name, line in setups.items():
        seconds = reference_fetch_seconds([line], NAMES, number)
        if seconds is not None:
            found[name] = seconds
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer iterations")
    args = parser.parse_args()
    number = 200 if args.quick else 2_000
    assert len(NAMES) == 50 and len(set(NAMES)) == 50
    refs = references(number)
    mine = ours(number)
    print(f"fetch of {len(NAMES)} linux metrics")
    if not refs:
        print("reference: PCP 6 (Debian package pcp, with python3-pcp) is not installed")
    for setup, seconds in refs.items():
        print(f"reference: pmdalinux {setup:26} under real pmcd: {seconds * 1e6:8.1f} us")
    print(f"ours:      linux agent in-process, Agent.fetch:            {mine * 1e6:8.1f} us")
    for setup, seconds in refs.items():
        ratio = mine / seconds
        verdict = "meets" if ratio <= 3 else "misses"
        print(f"ratio ours / pmdalinux {setup}: {ratio:.2f} ({verdict} the <= 3 target)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
