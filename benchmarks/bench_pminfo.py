"""Benchmark: `pminfo -f` over every metric of the linux agent, ours against PCP's pminfo.

Both tools ask the same reference PCP 6 pmcd (pmcd's own agent and the reference
pmdalinux as a pipe agent) for the values of every name whose PMID is in the
linux agent's domain (60), given as that agent's top-level subtrees.  Each run is
a whole process, start-up included, as a user runs it.  The two tools take turns
round after round; the figure is the median wall time.  The target is ours /
reference <= 3.  PCP's default derived metrics are switched off
(PCP_DERIVED_CONFIG empty) because ours has none yet: both then list the same names.

    .venv/bin/python benchmarks/bench_pminfo.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.reference_pmcd import PMDAS, running_pmcd  # noqa: E402

CONF = [
    f"pmcd\t2\tdso\tpmcd_init\t{PMDAS / 'pmcd' / 'pmda_pmcd.so'}",
    f"linux\t60\tpipe\tbinary\t{PMDAS / 'linux' / 'pmdalinux'} -d 60",
]
TARGET = 3.0
OURS = [sys.executable, "-m", "purepcp.tools.pminfo"]


def linux_subtrees(host: str, env: dict[str, str]) -> list[str]:
    """The top-level subtrees holding the linux agent's metrics (domain 60)."""
    out = subprocess.run(
        ["pminfo", "-h", host, "-m"], env=env, capture_output=True, text=True, check=True
    ).stdout
    tops = {}
    for line in out.splitlines():
        name, _, pmid = line.partition(" PMID: ")
        if pmid.startswith("60."):
            tops.setdefault(name.split(".")[0], None)
    return list(tops)


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=ROOT)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{argv[0]} failed: {done.stderr.strip()[-300:]}")
    return seconds, done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    args = parser.parse_args()
    if shutil.which("pminfo") is None or not (PMDAS / "linux" / "pmdalinux").exists():
        print("reference PCP 6 is not installed (Debian package pcp): nothing to compare with")
        return 1
    rounds = 3 if args.quick else 9
    env = dict(os.environ, PCP_DERIVED_CONFIG="", PYTHONPATH=str(ROOT))
    with (
        tempfile.TemporaryDirectory(prefix="bench-pminfo-") as tmp,
        running_pmcd(False, CONF, tmp) as (port, _),
    ):
        host = f"localhost:{port}"
        subtrees = linux_subtrees(host, env)
        ref_argv = ["pminfo", "-h", host, "-f", *subtrees]
        our_argv = [*OURS, "-h", host, "-f", *subtrees]
        ours, theirs = [], []
        lines = 0
        for _ in range(rounds):
            seconds, text = timed(ref_argv, env)
            theirs.append(seconds)
            seconds, mine = timed(our_argv, env)
            ours.append(seconds)
            lines = len(mine.splitlines())
            if len(text.splitlines()) != lines:
                print(f"warning: output lengths differ ({lines} vs {len(text.splitlines())})")
    ours_s, ref_s = statistics.median(ours), statistics.median(theirs)
    ratio = ours_s / ref_s
    print(
        f"pminfo -f over the linux agent's {len(subtrees)} subtrees ({lines} lines of "
        f"output); whole runs, start-up included; median of {rounds}, tools taking turns"
    )
    print(f"{'ours':>10} {'reference':>10} {'ratio':>7}")
    print(f"{ours_s:9.3f}s {ref_s:9.3f}s {ratio:7.2f}")
    verdict = "meets" if ratio <= TARGET else "misses"
    print(f"ours / reference: {ratio:.2f} ({verdict} the <= {TARGET:g} target)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
