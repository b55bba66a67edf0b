"""pmcd -H HOST: the host name pmcd gives, for a fleet of pmcds on one machine; and the
rest of pmcd's context labels.

As PCP's pmcd -H, it is pmcd.hostname (what pmlogger puts in an archive's label).  Ours
also gives it as the `hostname` context label, so that each such pmcd is its own series
source (PCP's takes that label from gethostname(2) whatever -H says).  The other context
labels are PCP's: the files of $PCP_SYSCONF_DIR/labels (and labels/optional), the host's
domain name and machine id, and a unix-socket client's groupid and userid.
"""

from __future__ import annotations

import json
import os
import socket

import pytest
import trio

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


def _context_labels(host: str) -> dict:
    with Context.host(host) as ctx:
        return json.loads(ctx.labels(PM_ID_NULL, PM_LABEL_CONTEXT)[0].json)


def test_context_labels_hold_the_label_files_and_a_local_clients_ids(tmp_path, monkeypatch):
    """As PCP's pmcd (QA 1826, 1184, 352): before, only hostname, domainname and
    machineid, whatever the files said and whoever asked."""
    sysconf = tmp_path / "etc"
    (sysconf / "labels" / "optional").mkdir(parents=True)
    (sysconf / "labels" / "site.json").write_text('{"site":"qa","hostname":"not-this"}')
    (sysconf / "labels" / "broken").write_text("{not json")  # (ignored, as by PCP's)
    (sysconf / "labels" / "optional" / "note").write_text('{"note":1}')
    (sysconf / "labels.conf").write_text("[global]\nmachineid_hash = sha256\n")
    monkeypatch.setenv("PCP_SYSCONF_DIR", str(sysconf))
    with our_pmcd(CONF, tmp_path) as pmcd:
        local = _context_labels(f"unix:{pmcd.unix}")
        assert (local["site"], local["note"], local["hostname"]) == ("qa", 1, socket.gethostname())
        assert (local["userid"], local["groupid"]) == (os.getuid(), os.getgid())
        assert "machineid_sha256" in local and "machineid" not in local
        remote = _context_labels(pmcd.host)  # (TCP: no credentials, so no ids)
        assert "userid" not in remote and remote["site"] == "qa"
        (sysconf / "labels" / "added.json").write_text('{"added":2}')
        assert _context_labels(pmcd.host)["added"] == 2  # read afresh, as PCP's pmcd does


@pytest.mark.trio
async def test_clients_hear_when_the_label_files_change(tmp_path):
    """PMCD_LABEL_CHANGE with the next fetch once the files say otherwise (PCP's
    CheckLabelChange, at SIGHUP and at each context label request)."""
    from purepcp.pmapi.pdu.constants import PMCDState
    from purepcp.pmapi.pdu.records import HighResFetchPDU, LabelReqPDU, ProfilePDU
    from purepcp.pmcd.config import parse_config
    from purepcp.pmcd.daemon import Daemon, Settings, namespace_for
    from tests.support.pdu_client import NUMFETCH, Client

    (tmp_path / "labels").mkdir()
    config = parse_config("simple 253 dso Simple purepcp.agents.simple\n")
    settings = Settings(port=0, addresses=["127.0.0.1"], sysconf_dir=str(tmp_path))
    async with trio.open_nursery() as nursery:
        daemon = Daemon(config, namespace_for(config, None), settings)
        where = await nursery.start(daemon.run)
        client = await Client.connect(int(where[0].rsplit(":", 1)[1]))
        await client.send(ProfilePDU(0, 0, ()))
        await client.ask(HighResFetchPDU(0, (NUMFETCH,)))
        await client.ask(LabelReqPDU(PM_ID_NULL, PM_LABEL_CONTEXT))
        await client.ask(HighResFetchPDU(0, (NUMFETCH,)))
        assert not client.changes & PMCDState.PMCD_LABEL_CHANGE  # (nothing changed yet)
        (tmp_path / "labels" / "new.json").write_text('{"new":1}')
        reply = await client.ask(LabelReqPDU(PM_ID_NULL, PM_LABEL_CONTEXT))
        assert json.loads(reply.sets[0].json)["new"] == 1
        await client.ask(HighResFetchPDU(0, (NUMFETCH,)))
        assert client.changes & PMCDState.PMCD_LABEL_CHANGE
        await client.stream.aclose()
        nursery.cancel_scope.cancel()
