"""Benchmark: read and decode every value of a 4-million-value archive, ours against pmdumplog.

Ours opens the archive, walks every record and turns every value set into its
Python values; the reference is PCP's `pmdumplog -a ARCHIVE > /dev/null`, which
reads, decodes and formats them.  Each side runs as a whole process, in turns,
round after round; the figure is the median wall time.  Target: ours / reference
<= 2.  The archive is benchmarks/big_archive.py's (20 metrics x 10 instances x
20,000 samples, written by PCP's pmi).

    .venv/bin/python benchmarks/bench_archive_read.py [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_pminfo import timed  # noqa: E402
from benchmarks.big_archive import ensure  # noqa: E402

TARGET = 2.0
READER = """
import sys
from pmapi.archive import Archive
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
    ours_t, theirs_t = [], []
    for _ in range(args.rounds):
        seconds, out = timed([sys.executable, "-c", READER, base], dict(os.environ))
        ours_t.append(seconds)
        values = int(out)
        seconds, _ = timed(["sh", "-c", f'pmdumplog -a "{base}" > /dev/null'], dict(os.environ))
        theirs_t.append(seconds)
    ours, theirs = statistics.median(ours_t), statistics.median(theirs_t)
    print(f"archive: {base} ({values:,} values)")
    print(f"ours (read + decode every value): {ours:.2f} s")
    print(f"reference pmdumplog -a > /dev/null: {theirs:.2f} s")
    ratio = ours / theirs
    print(f"ratio ours/reference: {ratio:.2f} (target <= {TARGET})")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
