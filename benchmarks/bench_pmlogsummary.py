"""Benchmark: `pmlogsummary` over the 4-million-value archive, ours against PCP's.

Both run as whole processes (ours through its console script), in turns, round after
round; the figure is the median wall time of each.  The outputs are compared byte for
byte first, for the default report and for `-a` (every column).  Target: ours / PCP's
<= 1.  The archive is benchmarks/big_archive.py's (20 metrics x 10 instances x 20,000
samples, written by PCP's pmi).

    .venv/bin/python benchmarks/bench_pmlogsummary.py [--rounds N] [--options "-a"]
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_pminfo import timed  # noqa: E402
from benchmarks.big_archive import ensure  # noqa: E402

TARGET = 1.0
OURS = Path(sys.executable).with_name("pmlogsummary")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--options", default="", help="pmlogsummary options for the timing")
    args = parser.parse_args()
    theirs_bin = shutil.which("pmlogsummary", path="/usr/bin:/bin")
    if theirs_bin is None:
        print("reference PCP 6 is not installed: no pmlogsummary (Debian package pcp)")
        return 1
    base = ensure()
    env = dict(os.environ)
    extra = shlex.split(args.options)
    for opts in ([], ["-a"], extra):
        outs = [
            subprocess.run([cmd, *opts, base], env=env, capture_output=True, check=False)
            for cmd in (str(OURS), theirs_bin)
        ]
        if outs[0].stdout != outs[1].stdout or outs[0].returncode != outs[1].returncode:
            print(f"the two pmlogsummary {' '.join(opts)} outputs differ: nothing to compare")
            return 1
    ours_t, theirs_t = [], []
    for _ in range(args.rounds):
        ours_t.append(timed([str(OURS), *extra, base], env)[0])
        theirs_t.append(timed([theirs_bin, *extra, base], env)[0])
    ours, theirs = statistics.median(ours_t), statistics.median(theirs_t)
    label = " ".join(["pmlogsummary", *extra])
    print(f"archive: {base} (4,000,000 values), median of {args.rounds} rounds")
    print(f"ours {label}: {ours:.3f} s")
    print(f"PCP's {label}: {theirs:.3f} s")
    ratio = ours / theirs
    print(f"ratio ours/PCP: {ratio:.2f} (target <= {TARGET})")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
