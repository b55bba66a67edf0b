"""A lean pmproxy: at start it loads neither the series engine nor what only that needs.

Redis's client, NumPy, construct and the archive reader are 25 MB of a pmproxy's
memory; one that serves only /pmapi and /metrics (or whose clients have not asked
for /series yet) never loads them.  The first /series request does, in a thread.
"""

from __future__ import annotations

import json
import subprocess
import sys

from tests.support.our_pmcd import ROOT

LATE = ("numpy", "redis", "construct", "purepcp.series.store", "purepcp.pmapi.archive.reader")


def test_pmproxy_starts_without_the_series_engine():
    code = "import json, sys\nimport purepcp.pmproxy.main\nprint(json.dumps(sorted(sys.modules)))\n"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert done.returncode == 0, done.stderr
    modules = json.loads(done.stdout)
    loaded = [m for m in modules if any(m == x or m.startswith(x + ".") for x in LATE)]
    assert loaded == []
