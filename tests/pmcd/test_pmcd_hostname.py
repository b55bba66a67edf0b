"""pmcd -H HOST: the host name pmcd gives, for a fleet of pmcds on one machine.

As PCP's pmcd -H, it is pmcd.hostname (what pmlogger puts in an archive's label).  Ours
also gives it as the `hostname` context label, so that each such pmcd is its own series
source (PCP's takes that label from gethostname(2) whatever -H says).
"""

from __future__ import annotations

import json
import socket

from purepcp.pmapi.context import Context
from purepcp.pmapi.ids import PM_ID_NULL, PM_IN_NULL
from purepcp.pmapi.labels import PM_LABEL_CONTEXT
from purepcp.pmcd.main import options
from tests.support.our_pmcd import our_pmcd

CONF = "pmcd 2 dso PmcdAgent purepcp.pmcd.pmcd_agent\n"


def _hostname_and_label(host: str) -> tuple[str, str]:
    """(pmcd.hostname, the hostname context label) from the pmcd at HOST."""
    with Context.host(host) as ctx:
        pmid = ctx.lookup_name("pmcd.hostname")
        hostname = ctx.fetch([pmid]).values(pmid)[PM_IN_NULL]
        labels = ctx.labels(PM_ID_NULL, PM_LABEL_CONTEXT)
    return hostname, json.loads(labels[0].json)["hostname"]


def test_dash_H_is_read_and_absent_is_none():
    assert options(["-H", "fleet-07"]).hostname == "fleet-07"
    assert options(["--hostname=web1"]).hostname == "web1"
    assert options([]).hostname is None


def test_dash_H_names_pmcd_hostname_and_the_hostname_context_label(tmp_path):
    with our_pmcd(CONF, tmp_path, "-H", "fleet-07") as pmcd:
        assert _hostname_and_label(pmcd.host) == ("fleet-07", "fleet-07")


def test_without_dash_H_both_are_this_hosts_name(tmp_path):
    with our_pmcd(CONF, tmp_path) as pmcd:
        me = socket.gethostname()
        assert _hostname_and_label(pmcd.host) == (me, me)
