"""Client credentials reach the agents that ask for them, as PCP's pmcd sends them.

An agent that sets PDU_FLAG_AUTH (or CONTAINER) in its CREDS gets each client's
connection attributes as ATTR PDUs from the client's context before that
client's first request to it: on the unix socket the uid, gid and pid the kernel
gives for the peer (SO_PEERCRED); a container a client names; nothing from a TCP
client, and never a uid a client claims for itself.  Our agent framework exposes
them as `Agent.client`.  The interop tests run PCP's own pmdaproc, which refuses
clients it knows nothing of, under our pmcd.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import trio

from purepcp.pmapi.errors import PM_ERR_IPC, PM_ERR_NOTCONN
from purepcp.pmapi.ids import pmID_build
from purepcp.pmapi.pdu.constants import Attr
from purepcp.pmapi.pdu.records import AttrPDU, ErrorPDU, HighResFetchPDU, ProfilePDU
from purepcp.pmcd.config import parse_config
from purepcp.pmcd.daemon import Daemon, Settings, namespace_for
from purepcp.pmda.clients import ClientTable
from purepcp.pmda.testing import AgentHarness
from tests.support.our_pmcd import ROOT, our_pmcd
from tests.support.pdu_client import Client  # the bare PDU client
from tests.support.reference_pmcd import reference_pmcd, require_reference

#: A test agent (in the simple agent's namespace) that answers with what pmcd told it
#: of the asking client, and records every ATTR PDU it gets in a file beside it.
WHOAMI = """
import json
import sys
from pathlib import Path

from purepcp.pmapi.errors import PMError
from purepcp.pmapi.pdu.records import AttrPDU
from purepcp.pmda import U32, Agent, main, metric

RECORD = Path(__file__).with_suffix(".attrs")


class Whoami(Agent):
    name, domain = "simple", 253
    wants_credentials = True

    def handle(self, pdu):
        if isinstance(pdu, AttrPDU):
            with RECORD.open("a") as f:
                f.write(json.dumps([pdu.sender, pdu.attr, pdu.value.decode()]) + "\\n")
        return super().handle(pdu)

    def _known(self, value):
        if not self.client.authenticated:
            raise PMError(-12387)  # PM_ERR_PERMISSION: as pmdaproc, for a stranger
        return value

    @metric("simple.numfetch", U32)
    def uid(self):
        return self._known(self.client.uid)

    @metric("simple.time.user", U32)
    def gid(self):
        return self._known(self.client.gid)

    @metric("simple.time.sys", U32)
    def pid(self):
        return self._known(self.client.pid)


if __name__ == "__main__":
    sys.exit(main(Whoami))
"""


def _agent(tmp: Path) -> Path:
    path = tmp / "agent" / "whoami.py"
    path.parent.mkdir()
    path.write_text(WHOAMI)
    return path


def _conf(kind: str, agent: Path) -> str:
    """pmcd.conf running the test agent as KIND: in-process, pipe or unix socket."""
    if kind == "dso":
        return f"simple 253 dso Whoami {agent}\n"
    if kind == "pipe":
        return f"simple 253 pipe binary {sys.executable} {agent}\n"
    sock = agent.with_suffix(".sock")
    return f"simple 253 socket unix {sock} {sys.executable} {agent} -u {sock}\n"


def _pminfo(pmcd, *argv: str, via_unix: bool):
    """Our pminfo against PMCD."""
    host = f"unix:{pmcd.unix}" if via_unix else pmcd.host
    command = [sys.executable, "-m", "purepcp.tools.pminfo", "-h", host, *argv]
    return subprocess.run(
        command, env=pmcd.env, capture_output=True, text=True, timeout=60, cwd=ROOT
    )


def _values(output: str) -> dict[str, str]:
    """{metric: value or error} from pminfo -f output."""
    found: dict[str, str] = {}
    name = None
    for line in output.splitlines():
        if name and line.strip().startswith(("value ", "Error: ")):
            found[name] = line.strip().removeprefix("value ")
        elif line and not line.startswith(" "):
            name = line.strip()
    return found


WHO = ("simple.numfetch", "simple.time.user", "simple.time.sys")


@pytest.mark.parametrize("kind", ["dso", "pipe", "socket"])
def test_an_agent_learns_who_its_unix_socket_clients_are(tmp_path, kind):
    agent = _agent(tmp_path)
    with our_pmcd(_conf(kind, agent), tmp_path) as pmcd:
        run = _pminfo(pmcd, "-f", *WHO, via_unix=True)
        assert run.returncode == 0, run.stderr
        values = _values(run.stdout)
        assert values["simple.numfetch"] == str(os.getuid())
        assert values["simple.time.user"] == str(os.getgid())
        pid = int(values["simple.time.sys"])  # the pminfo process itself
        assert pid != os.getpid() and pid > 0
        # over TCP the client brings nothing, and the agent treats it as a stranger
        tcp = _pminfo(pmcd, "-f", *WHO, via_unix=False)
        assert set(_values(tcp.stdout).values()) == {
            "Error: No permission to perform requested operation"
        }
        # the ATTR PDUs, as PCP's pmcd sends them: from the client's context, newest
        # first (libpcp's one-bucket hash walk), each value with its NUL
        records = agent.with_suffix(".attrs").read_text().splitlines()
        assert len(records) == 3, records
        sent = [json.loads(line) for line in records]
        assert [attr for _, attr, _ in sent] == [
            Attr.PCP_ATTR_PROCESSID,
            Attr.PCP_ATTR_GROUPID,
            Attr.PCP_ATTR_USERID,
        ]
        assert [value for _, _, value in sent] == [
            f"{pid}\0",
            f"{os.getgid()}\0",
            f"{os.getuid()}\0",
        ]
        assert "Traceback" not in pmcd.log()


@pytest.mark.interop
def test_an_unprivileged_client_is_told_apart_from_root():
    """PCP's pminfo run as user nobody (our interpreter may be out of its reach) through
    the unix socket: the agent sees nobody's uid and gid, not pmcd's."""
    require_reference("pminfo")
    if os.getuid() != 0 or shutil.which("runuser") is None:
        pytest.skip("needs root and runuser to run a client as user nobody")
    nobody = pwd.getpwnam("nobody")
    with tempfile.TemporaryDirectory(prefix="purepcp-creds-") as where:
        tmp = Path(where)
        tmp.chmod(0o755)  # nobody must reach the unix socket in it
        agent = _agent(tmp)
        with our_pmcd(_conf("pipe", agent), tmp) as pmcd:
            run = subprocess.run(
                ["runuser", "-u", "nobody", "--", "pminfo", "-h", f"unix:{pmcd.unix}", "-f", *WHO],
                env=pmcd.env,
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert run.returncode == 0, run.stderr
            values = _values(run.stdout)
            assert values["simple.numfetch"] == str(nobody.pw_uid)
            assert values["simple.time.user"] == str(nobody.pw_gid)


@pytest.mark.trio
async def test_a_client_cannot_claim_a_uid_for_itself(tmp_path):
    """ATTR PDUs from a client are taken only for its container: a TCP client that
    says it is uid 0 gets PM_ERR_IPC, and the agent hears nothing of it."""
    agent = _agent(tmp_path)
    config = parse_config(_conf("dso", agent))
    daemon = Daemon(config, namespace_for(config, None), Settings(port=0, addresses=["127.0.0.1"]))
    async with trio.open_nursery() as nursery:
        where = await nursery.start(daemon.run)
        c = await Client.connect(int(where[0].rsplit(":", 1)[1]))
        await c.send(AttrPDU(Attr.PCP_ATTR_USERID, b"0\0"))
        assert await c.receive() == ErrorPDU(PM_ERR_IPC)
        await c.send(AttrPDU(Attr.PCP_ATTR_CONTAINER, b"web\0"))
        await c.send(ProfilePDU(0, 0, ()))
        reply = await c.ask(HighResFetchPDU(0, (pmID_build(253, 0, 0),)))
        assert reply.result.vsets[0].numval == -12387  # still a stranger
        nursery.cancel_scope.cancel()
    records = [json.loads(line) for line in agent.with_suffix(".attrs").read_text().splitlines()]
    assert records == [[0, Attr.PCP_ATTR_CONTAINER, "web\0"]]  # the container alone


def test_the_framework_keeps_each_contexts_credentials():
    table = ClientTable()
    table.set_attribute(3, Attr.PCP_ATTR_USERID, b"1000\0")
    table.set_attribute(3, Attr.PCP_ATTR_GROUPID, b"100\0")
    table.set_attribute(3, Attr.PCP_ATTR_CONTAINER, b"db\0")
    client = table.client(3)
    assert (client.uid, client.gid, client.pid, client.container) == (1000, 100, None, "db")
    assert client.authenticated and not table.client(4).authenticated
    table.set_attribute(3, Attr.PCP_ATTR_USERID, b"not a number\0")
    assert table.client(3).uid is None  # never taken as root, as C's atoi would
    table.end(3)
    assert table.client(3).uid is None


def test_the_harness_asks_as_a_given_client(tmp_path):
    agent = _agent(tmp_path)
    with AgentHarness.load(f"{agent}:Whoami") as whoami:
        with pytest.raises(Exception, match="No permission"):
            whoami.fetch("simple.numfetch")
        whoami.as_client(uid=1000, gid=100, pid=42)
        assert whoami.fetch_many(*WHO) == [1000, 100, 42]
        # the client goes (pmcd's PM_ERR_NOTCONN): a newcomer in its context is a stranger
        whoami.agent.handle(ErrorPDU(PM_ERR_NOTCONN, None, whoami.context))
        with pytest.raises(Exception, match="No permission"):
            whoami.fetch("simple.numfetch")


# -- PCP's own pmdaproc under our pmcd ------------------------------------------------------

PMDAPROC = "/var/lib/pcp/pmdas/proc/pmdaproc"
PMDALINUX = "/var/lib/pcp/pmdas/linux/pmdalinux"
PCP_AGENTS = f"proc 3 pipe binary {PMDAPROC} -d 3\nlinux 60 pipe binary {PMDALINUX}\n"


def _pcp_tools_env(env: dict[str, str]) -> dict[str, str]:
    return dict(env, PCP_PYTHON_PROG="/usr/bin/python3")


def _proc_view(run) -> tuple[int, str]:
    """What pminfo -f proc.psinfo.pid showed: its status and either the error or 'pid 1'
    (the instances themselves come and go between two runs)."""
    if "Error:" in run.stdout:
        return run.returncode, run.stdout.strip().splitlines()[-1].strip()
    return run.returncode, "pid 1" if " value 1\n" in run.stdout else "no pid 1"


@pytest.mark.interop
def test_pcps_pmdaproc_answers_under_our_pmcd_as_under_its_own(tmp_path):
    require_reference("pminfo", "pcp")
    if not os.path.exists(PMDAPROC):
        pytest.skip(f"no {PMDAPROC} (Debian package pcp)")
    with (
        our_pmcd(PCP_AGENTS, tmp_path, "-n", "/var/lib/pcp/pmns/root") as ours,
        reference_pmcd(
            [
                "pmcd 2 dso pmcd_init /var/lib/pcp/pmdas/pmcd/pmda_pmcd.so",
                *PCP_AGENTS.splitlines(),
            ]
        ) as theirs,
    ):
        their_unix = os.path.join(theirs.tmp, "run", "pmcd.socket")
        views = {}
        for name, pmcd, unix in (("ours", ours, ours.unix), ("PCP's", theirs, their_unix)):
            env = _pcp_tools_env(pmcd.env)
            local = subprocess.run(
                ["pminfo", "-h", f"unix:{unix}", "-f", "proc.psinfo.pid"],
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
            )
            remote = subprocess.run(
                ["pminfo", "-h", pmcd.host, "-f", "proc.psinfo.pid"],
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
            )
            # (PCP 6.0.3's pcp ps dies of a process that ends between its instance list and
            # its fetch, as other tests' processes do all the time: PID 1 alone never ends)
            ps = subprocess.run(
                ["pcp", "-h", f"unix:{unix}", "ps", "-p", "1"],
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
            )
            first = ps.stdout.splitlines()[2].split() if ps.returncode == 0 else []
            views[name] = (_proc_view(local), _proc_view(remote), ps.returncode, first[1:2])
        assert views["ours"] == views["PCP's"]
        assert views["ours"][0] == (0, "pid 1")  # the unix socket client sees processes
        assert views["ours"][1][1] == "Error: No permission to perform requested operation"
        assert views["ours"][2:] == (0, ["1"])  # pcp ps lists PID 1
        assert "Traceback" not in ours.log()
