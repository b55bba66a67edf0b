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


def test_the_log_is_pcps(tmp_path):
    """QA 1458/1360: pmproxy's log as PCP's: libpcp's header, the PID line and request
    ports table as they are, notices as pmNotifyErr writes them, and on SIGTERM 'caught'
    and 'Shutdown' notices and the footer."""
    import re

    from tests.support.client_servers import ours_serving
    from tests.support.pmproxy_servers import our_pmproxy

    (tmp_path / "pmcd").mkdir()
    with ours_serving(tmp_path / "pmcd") as pmcd, our_pmproxy(pmcd.host, tmp_path / "p"):
        pass
    log = (tmp_path / "p" / "pmproxy.log").read_text()
    lines = log.splitlines()
    assert re.fullmatch(
        r"Log for pmproxy on \S+ started \w{3} \w{3} [ \d]\d [\d:]{8} \d{4}", lines[0]
    )
    assert lines[1] == ""
    assert re.fullmatch(r"pmproxy: PID = \d+, PDU version = 2, user = \S+ \(\d+\)", lines[2])
    assert lines[3:6] == [
        "pmproxy request port(s):",
        "  sts fd   port  family address",
        "  === ==== ===== ====== =======",
    ]
    assert re.fullmatch(r"  ok +\d+ +unix +\S+pmproxy\.socket", lines[6])
    assert re.fullmatch(r"  ok +\d+ +\d+ inet +127\.0\.0\.1", lines[7])
    assert re.search(r"^\[[^]]+\] pmproxy\(\d+\) Info: pmproxy caught SIGTERM$", log, re.M)
    assert re.search(r"^\[[^]]+\] pmproxy\(\d+\) Info: pmproxy Shutdown$", log, re.M)
    assert lines[-2] == "" and lines[-1].startswith("Log finished ")
    assert "listening on" not in log and "Info: Info:" not in log
