"""Benchmark: `pmie` with 50 rules over the 4-million-value archive, ours against PCP's.

The rules are five kinds a site writes (a threshold over some instance with a print
action, an average, a conjunction of a quantifier and a sum, arithmetic on two named
instances, a percentage quantifier with an action), cycled over the archive's 20
metrics (half of them counters, so rates), evaluated every 10 s of the archive's
20,000 s: 2,000 evaluations of 50 rules.  Both run as whole processes (ours through its
console script) in turns, round after round; their standard outputs (the actions'
lines) are compared byte for byte first; the figure is the median wall time of each.
Target: ours / PCP's <= 1.

    .venv/bin/python benchmarks/bench_pmie.py [--rounds N] [--interval 10]
"""

from __future__ import annotations

import argparse
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
from benchmarks.big_archive import METRICS, ensure  # noqa: E402

TARGET = 1.0
OURS = Path(sys.executable).with_name("pmie")
RULES = 50
#: the kinds of rule, cycled: {m} the metric, {i} the rule's number
KINDS = (
    'r{i} = some_inst ( {m} > {t} ) -> print "r{i} %i %v";',
    "r{i} = avg_inst {m};",
    "r{i} = all_inst ( {m} >= 0 ) && sum_inst {m} > {i};",
    "r{i} = max_inst ( {m} #'inst03' + {m} #'inst07' );",
    'r{i} = 50%_inst ( {m} < {i} ) -> print "half %i";',
)


def rules() -> str:
    """The 50 rules, one per line."""
    lines = []
    for i in range(RULES):
        metric = f"bench.m{i % METRICS:02d}"
        lines.append(KINDS[i % len(KINDS)].format(i=i, m=metric, t=i * 3))
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--interval", default="10", help="pmie -t (default 10 seconds)")
    args = parser.parse_args()
    theirs_bin = shutil.which("pmie", path="/usr/bin:/bin")
    if theirs_bin is None:
        print("reference PCP 6 is not installed: no pmie (Debian package pcp)")
        return 1
    base = ensure()
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp, "rules.pmie")
        config.write_text(rules())
        argv = ["-a", base, "-c", str(config), "-t", args.interval]
        outs = [
            subprocess.run([cmd, *argv], env=env, capture_output=True, check=False)
            for cmd in (str(OURS), theirs_bin)
        ]
        if outs[0].stdout != outs[1].stdout or outs[0].returncode != outs[1].returncode:
            print("the two pmies' outputs differ: nothing to compare")
            return 1
        ours_t, theirs_t = [], []
        for _ in range(args.rounds):
            ours_t.append(timed([str(OURS), *argv], env)[0])
            theirs_t.append(timed([theirs_bin, *argv], env)[0])
    ours, theirs = statistics.median(ours_t), statistics.median(theirs_t)
    lines = outs[1].stdout.count(b"\n")
    print(f"archive: {base} (4,000,000 values), {RULES} rules every {args.interval} s")
    print(f"actions' output: {lines} lines, identical; median of {args.rounds} rounds")
    print(f"ours pmie: {ours:.3f} s")
    print(f"PCP's pmie: {theirs:.3f} s")
    ratio = ours / theirs
    print(f"ratio ours/PCP: {ratio:.2f} (target <= {TARGET})")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
