"""Benchmark: `pmdumplog -a` over a 4-million-value archive, ours against PCP's.

Both run as whole processes writing to /dev/null, in turns, round after round; the
figure is the median wall time.  The two outputs are compared once, byte for byte,
before timing.  Also shown, for where the time goes: ours reading and decoding every
value without formatting it.  Target: ours / PCP's <= 2 for pmdumplog -a.  The archive
is benchmarks/big_archive.py's (20 metrics x 10 instances x 20,000 samples, written by
PCP's pmi).

    .venv/bin/python benchmarks/bench_archive_read.py [--rounds N]
"""

from __future__ import annotations

import argparse
import filecmp
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_pminfo import timed  # noqa: E402
from benchmarks.big_archive import ensure  # noqa: E402

TARGET = 2.0
READER = """
import sys
from purepcp.pmapi.archive import Archive
n = 0
with Archive(sys.argv[1]) as a:
    for rec in a.records():
        for vs in rec.result.vsets:
            n += len(vs.atoms(a.descs[vs.pmid].type))
print(n)
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if shutil.which("pmdumplog") is None:
        print("reference PCP 6 is not installed: no pmdumplog (Debian package pcp)")
        return 1
    base = ensure()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    ours_cmd = f'"{sys.executable}" -m purepcp.tools.pmdumplog -a "{base}"'
    theirs_cmd = f'pmdumplog -a "{base}"'
    with tempfile.TemporaryDirectory(prefix="bench-dumplog-") as tmp:
        for name, cmd in (("ours", ours_cmd), ("theirs", theirs_cmd)):
            subprocess.run(["sh", "-c", f"{cmd} > {tmp}/{name}"], env=env, check=True)
        if not filecmp.cmp(f"{tmp}/ours", f"{tmp}/theirs", shallow=False):
            print("the two pmdumplog -a outputs differ: nothing to compare")
            return 1
    ours_t, theirs_t, read_t = [], [], []
    for _ in range(args.rounds):
        seconds, out = timed([sys.executable, "-c", READER, base], env)
        read_t.append(seconds)
        values = int(out)
        ours_t.append(timed(["sh", "-c", f"{ours_cmd} > /dev/null"], env)[0])
        theirs_t.append(timed(["sh", "-c", f"{theirs_cmd} > /dev/null"], env)[0])
    ours, theirs = statistics.median(ours_t), statistics.median(theirs_t)
    print(f"archive: {base} ({values:,} values), median of {args.rounds} rounds")
    print(f"ours pmdumplog -a > /dev/null: {ours:.2f} s")
    print(f"PCP's pmdumplog -a > /dev/null: {theirs:.2f} s")
    reading = statistics.median(read_t)
    print(f"(ours reading and decoding every value, no formatting: {reading:.2f} s)")
    ratio = ours / theirs
    print(f"ratio ours/PCP: {ratio:.2f} (target <= {TARGET})")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
