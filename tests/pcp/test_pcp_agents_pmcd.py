"""PCP's own Python agents installed under our pmcd, run by PCP's binding and by ours:
PCP's pminfo gives the same names, descriptors, help and values (or errors) both ways.

Each agent is installed as its Install script would (its directory copied, with the
``.py`` links PCP's pyprep makes, into a private PCP_PMDAS_DIR) and given a pmcd.conf
line and a namespace root; what an agent reports on is given to it where that can be
done on a loopback machine (a metrics file for openmetrics, a closed port for netcheck,
a private PostgreSQL server, a private Open vSwitch on its dummy datapath), and otherwise
it reports the missing service, as it does on PCP's binding."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.pcp_bindings import SYSTEM_PYTHON, require_pcp_bindings
from tests.support.waiting import wait_until

PMDAS = Path("/var/lib/pcp/pmdas")
PMINFO = "/usr/bin/pminfo"


def _netcheck(home: Path, shared: Path) -> None:
    """Only the port_open check, of localhost's port 1 (closed), checked at each fetch."""
    conf = home / "netcheck.conf"
    text = conf.read_text()
    for old, new in (
        ("modules = ping\n", "modules = port_open\n"),
        ("hosts = DGW,DNS\n", "hosts = localhost\n"),
        ("background_check = True\n", "background_check = False\n"),
        ("#ports = 80,443\n", "ports = 1\n"),
    ):
        assert old in text, f"PCP's netcheck.conf has changed: no {old!r}"
        text = text.replace(old, new)
    conf.write_text(text)


OPENMETRICS_SOURCE = """\
# HELP demo_requests_total Requests served.
# TYPE demo_requests_total counter
demo_requests_total{path="/a"} 7
demo_requests_total{path="/b"} 11
# HELP demo_temperature_celsius A temperature.
# TYPE demo_temperature_celsius gauge
demo_temperature_celsius 21.5
"""


def _openmetrics(home: Path, shared: Path) -> None:
    """One source: a file of OpenMetrics text (openmetrics reads file:// URLs)."""
    for old in (home / "config.d").iterdir():
        old.unlink()
    (home / "demo.txt").write_text(OPENMETRICS_SOURCE)
    (home / "config.d" / "demo.url").write_text(f"file://{home / 'demo.txt'}\n")


POSTGRES_BIN = next(iter(sorted(Path("/usr/lib/postgresql").glob("*/bin"))), None)


@contextlib.contextmanager
def _postgres_server(shared: Path):
    """A private PostgreSQL server (Debian's postgresql), as its own user, listening only
    on a unix socket in SHARED/pgsock, with trust authentication; stopped after."""
    data, sockets = shared / "pgdata", shared / "pgsock"
    for path in (data, sockets):
        path.mkdir()
        shutil.chown(path, "postgres", "postgres")

    def as_postgres(*argv: str) -> None:
        subprocess.run(["runuser", "-u", "postgres", "--", *argv], check=True, cwd=shared,
                       capture_output=True, timeout=120)  # fmt: skip

    as_postgres(f"{POSTGRES_BIN}/initdb", "-D", str(data), "-A", "trust", "-U", "postgres")
    options = f"-c listen_addresses='' -k {sockets}"
    ctl = [f"{POSTGRES_BIN}/pg_ctl", "-D", str(data)]
    as_postgres(*ctl, "-o", options, "-l", str(data / "log"), "-w", "start")  # (-w: until up)
    try:
        yield
    finally:
        as_postgres(*ctl, "-m", "immediate", "-w", "stop")


def _postgresql(home: Path, shared: Path) -> None:
    """The agent's configuration naming the private server's socket directory."""
    conf = home / "pmdapostgresql.conf"
    text = conf.read_text()
    assert "host=local\n" in text, "PCP's pmdapostgresql.conf has changed: no host=local"
    conf.write_text(text.replace("host=local\n", f"host={shared / 'pgsock'}\n"))


OVS_SCHEMA = Path("/usr/share/openvswitch/vswitch.ovsschema")
OVSDB_SERVER, OVS_VSWITCHD = "/usr/sbin/ovsdb-server", "/usr/sbin/ovs-vswitchd"


@contextlib.contextmanager
def _ovs_switch(shared: Path):
    """A private Open vSwitch (Debian's openvswitch-switch): its database server and its
    switch daemon with OVS's own dummy datapath (its test mode: no kernel module, no real
    network devices), in SHARED/ovs, which OVS_RUNDIR names for the agent's ovs-vsctl,
    ovs-ofctl and ovs-appctl; one bridge with a dummy port and a flow; stopped after."""
    ovs = shared / "ovs"
    ovs.mkdir()
    names = ("OVS_RUNDIR", "OVS_LOGDIR", "OVS_DBDIR", "OVS_SYSCONFDIR")

    def command(*argv: str) -> None:
        subprocess.run(argv, check=True, capture_output=True, timeout=300)

    command("ovsdb-tool", "create", str(ovs / "conf.db"), str(OVS_SCHEMA))
    daemons: list[subprocess.Popen] = []
    quiet = ("--no-chdir", "--pidfile", "--log-file", "-vconsole:off")
    with _env_dirs(ovs, *names), contextlib.ExitStack() as stack:
        for argv in (
            [OVSDB_SERVER, *quiet, f"--remote=punix:{ovs / 'db.sock'}", str(ovs / "conf.db")],
            [OVS_VSWITCHD, *quiet, "--enable-dummy=override"],
        ):
            stderr = stack.enter_context(open(ovs / f"{Path(argv[0]).name}.stderr", "wb"))
            daemons.append(subprocess.Popen(argv, stdout=stderr, stderr=stderr))
            stack.callback(daemons[-1].wait, timeout=60)
            stack.callback(daemons[-1].terminate)
            if argv[0] == OVSDB_SERVER:  # (--retry: until the server listens)
                command("ovs-vsctl", "--retry", "--timeout=300", "--no-wait", "init")
        # (without --no-wait, ovs-vsctl returns once the switch has made the bridge)
        command("ovs-vsctl", "--timeout=300", "add-br", "br0", "--", "add-port", "br0", "p1",
                "--", "set", "interface", "p1", "type=dummy", "ofport_request=1")  # fmt: skip
        command("ovs-ofctl", "add-flow", "br0", "priority=10,in_port=1,actions=drop")
        # (the switch publishes its event counters about once a second, none at first)
        wait_until("the switch's first event counts", _ovs_counted, daemons[-1])
        yield


def _ovs_counted() -> bool:
    shown = subprocess.run(["ovs-appctl", "coverage/show"], capture_output=True, text=True,
                           timeout=60)  # fmt: skip
    return "bridge_reconfigure" in shown.stdout


@dataclass(frozen=True)
class Agent:
    """One of PCP's Python agents: its domain, the Python modules it needs beyond PCP's
    binding (module, Debian package for PCP's interpreter, PyPI package for ours), the
    commands it runs (command, Debian package), and how to prepare its installed copy."""

    domain: int
    modules: tuple[tuple[str, str, str], ...] = ()
    commands: tuple[tuple[str, str], ...] = ()
    prepare: Callable[[Path, Path], None] | None = None
    moving: str = ""  # a pattern of the metrics whose values move between two runs
    sporadic: str = ""  # ... and of those whose values may also be there or not
    service: Callable[[Path], contextlib.AbstractContextManager[None]] | None = None
    may_have_none: bool = False  # its metrics come from hardware this machine may lack
    known_failure: str = ""  # why ours cannot run it yet (a strict xfail)


AGENTS = {
    "simple": Agent(253, moving=r"simple\.(now|time\.)"),
    "trivial": Agent(250, moving=r"trivial\.time"),
    "unbound": Agent(132),
    "nfsclient": Agent(62, moving=r"nfsclient\."),
    "haproxy": Agent(145),
    "gluster": Agent(118),
    "zswap": Agent(125, moving=r"zswap\."),
    "elasticsearch": Agent(108),
    "json": Agent(
        137,
        modules=(
            ("jsonpointer", "python3-json-pointer", "jsonpointer"),
            ("six", "python3-six", "six"),
        ),
    ),
    "rabbitmq": Agent(143, modules=(("requests", "python3-requests", "requests"),)),
    "openmetrics": Agent(
        144,
        modules=(("requests", "python3-requests", "requests"),),
        prepare=_openmetrics,
        moving=r"openmetrics\.control\.(calls|fetch_time|parse_time)",  # (per request)
    ),
    "netcheck": Agent(152, prepare=_netcheck, moving=r"netcheck\.port\.time"),
    "lmsensors": Agent(74, commands=(("/usr/bin/sensors", "lm-sensors"),), may_have_none=True),
    "bpftrace": Agent(
        151,
        commands=(("/usr/bin/bpftrace", "bpftrace"),),
        known_failure="bpftrace's agent imports cpmda before pcp, and purepcp installs no "
        "top-level cpmda: importing pcp is what makes it importable (pcp.cmodules)",
    ),
    "openvswitch": Agent(
        126,
        commands=(
            (OVS_VSWITCHD, "openvswitch-switch"),
            ("/usr/bin/ovs-vsctl", "openvswitch-switch"),  # (and the schema)
        ),
        service=_ovs_switch,
        moving=r"openvswitch\.flow\.duration",
        # (the switch's event counters: each appears once its event has happened, as
        # the agents' own requests make new ones happen)
        sporadic=r"openvswitch\.coverage\.",
    ),
    "postgresql": Agent(
        110,
        modules=(("psycopg2", "python3-psycopg2", "psycopg2-binary"),),
        commands=(("/usr/sbin/runuser", "util-linux"),),
        prepare=_postgresql,
        moving=r"postgresql\.",  # (the server's statistics move as the agent asks)
        service=_postgres_server,
    ),
}


def _has_module(python: str, module: str) -> bool:
    done = subprocess.run([python, "-c", f"import {module}"], cwd="/",
                          capture_output=True, timeout=60)  # fmt: skip
    return done.returncode == 0


def _requirements(name: str, agent: Agent) -> None:
    """Skip, naming the package, when what the agent needs is not here."""
    require_pcp_bindings()
    script = PMDAS / name / f"pmda{name}.python"
    if not script.exists() or not os.access(PMINFO, os.X_OK):
        pytest.skip(f"PCP's {name} agent and pminfo are not installed (Debian package pcp)")
    if agent.service is _postgres_server and POSTGRES_BIN is None:
        pytest.skip("the postgresql agent needs a PostgreSQL server (Debian postgresql)")
    for command, debian in agent.commands:
        if not os.access(command, os.X_OK):
            pytest.skip(f"the {name} agent runs {command}, not installed (Debian {debian})")
    for module, debian, pypi in agent.modules:
        if not _has_module(SYSTEM_PYTHON, module):
            pytest.skip(f"the {name} agent needs {module} on PCP's side (Debian {debian})")
        if not _has_module(sys.executable, module):
            pytest.skip(f"the {name} agent needs {module} on ours (PyPI {pypi})")


def _install(name: str, agent: Agent, pmdas: Path) -> Path:
    """The agent's directory copied into PMDAS as Install leaves it: files, not links,
    and a ``.py`` link beside each helper ``.python`` file (PCP's pyprep)."""
    home = pmdas / name
    shutil.copytree(PMDAS / name, home, symlinks=False)
    for helper in home.rglob("*.python"):
        link = helper.with_suffix(".py")
        if helper.name != f"pmda{name}.python" and not link.exists():
            link.symlink_to(helper.name)
    if agent.prepare is not None:
        agent.prepare(home, pmdas.parent)
    for path in [pmdas, *pmdas.rglob("*")]:  # the agent runs as PCP's user
        if path.is_dir():
            path.chmod(0o755)
        elif not path.is_symlink():
            path.chmod(0o644)
    return home


@contextlib.contextmanager
def _env_dirs(where: Path, *names: str):
    """The environment variables NAMES (PCP's or a service's directories) set to WHERE, as
    our pmcd and its agents take them from the environment, and set back after."""
    saved = {name: os.environ.get(name) for name in names}
    os.environ.update({name: str(where) for name in names})
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _ipc_prot(home: Path) -> str:
    """The pmcd.conf protocol words the agent's Install script gives it ("binary", or
    "binary notready" for an agent that says when it is ready)."""
    found = re.search(r'^ipc_prot="([^"]*)"', (home / "Install").read_text(), re.M)
    return found.group(1) if found else "binary"


def _pminfo_under_our_pmcd(name: str, agent: Agent, python: str, where: Path) -> str:
    """pminfo -dfmtT NAME against our pmcd running PCP's agent NAME by PYTHON."""
    from tests.support.our_pmcd import our_pmcd

    where.mkdir()
    home = _install(name, agent, where)
    (where / "root").write_text(f"root {{\n\t{name}\t{agent.domain}:*:*\n}}\n")
    (where / "config" / "pmda").mkdir(parents=True)  # (openmetrics keeps its ids here)
    for path in (where / "config", where / "config" / "pmda"):
        path.chmod(0o777)
    # (our pmcd's PYTHONPATH would give PCP's interpreter our pcp package)
    command = f"/usr/bin/env -u PYTHONPATH {python} {home / f'pmda{name}.python'}"
    conf = f"{name}\t{agent.domain}\tpipe\t{_ipc_prot(home)}\t{command}\n"
    dirs = _env_dirs(where, "PCP_LOG_DIR", "PCP_VAR_DIR", "PCP_TMP_DIR")
    with dirs, our_pmcd(conf, where, "-n", str(where / "root"), *_PATIENT) as pmcd:
        _wait_ready(pmcd, name)
        done = pmcd.run(PMINFO, "-dfmtT", name)
    return f"exit {done.returncode}\n{done.stdout}{done.stderr}"


#: pmcd's start-up and response timeouts for the agents, long: a busy machine may make an
#: agent slower than pmcd's default 3 and 5 seconds, which is not what is tested here
_PATIENT = ("-q", "60", "-t", "60")

#: what pminfo says of an agent that is still starting (not ready, PMDA_NOTREADY)
_STARTING = ("No PMCD agent for domain of request", "Try again")


def _wait_ready(pmcd, name: str) -> None:
    """Wait until agent NAME answers for its names: an agent that starts not ready
    (netcheck, openmetrics) says when it is ready, and until then pmcd refuses."""

    def ready() -> bool:
        done = pmcd.run(PMINFO, name)
        return not any(text in done.stdout + done.stderr for text in _STARTING)

    wait_until(f"the {name} agent to be ready", ready, pmcd.proc, describe=pmcd.log)


def _mask_moving(text: str, agent: Agent) -> str:
    """TEXT (pminfo -f's) with the values of the agent's moving metrics masked (and the
    instances named after a process), and those of its sporadic ones masked whole."""
    blocks = text.split("\n\n")
    for n, block in enumerate(blocks):
        if agent.sporadic and re.match(agent.sporadic, block):
            values = r"(?m)^(( +(inst \[.*\] )?value .*|No value\(s\) available!)(\n|$))+"
            blocks[n] = re.sub(values, "    VALUES COME AND GO\n", block)
        elif agent.moving and re.match(agent.moving, block):
            blocks[n] = re.sub(r"(?m)^( +)(inst \[.*\] )?value .*$", r"\1\2value MOVES", block)
            blocks[n] = re.sub(r'inst \[\d+ or "pid\d+"\]', "inst [PID]", blocks[n])
    return "\n\n".join(blocks)


@pytest.mark.interop
@pytest.mark.parametrize("name", sorted(AGENTS))
def test_pcp_agent_under_our_pmcd(name, request):
    """PCP's agent NAME, unchanged, installed under our pmcd: pminfo -dfmtT answers the
    same whether PCP's binding or ours runs it."""
    agent = AGENTS[name]
    _requirements(name, agent)
    if agent.known_failure:
        request.applymarker(pytest.mark.xfail(reason=agent.known_failure, strict=True))
    answers: list[str] = []
    # (a directory PCP's user can read, which pytest's 0700 one is not)
    with tempfile.TemporaryDirectory(prefix="pcp-agent-") as shared:
        os.chmod(shared, 0o755)
        with agent.service(Path(shared)) if agent.service else contextlib.nullcontext():
            answers += _both_ways(name, agent, Path(shared))
    if not agent.may_have_none:
        assert f"\n{name}." in answers[0], answers[0]
    assert answers[1] == answers[0]


def _both_ways(name: str, agent: Agent, shared: Path) -> list[str]:
    """pminfo's answers, PCP's binding's and ours, with moving values masked."""
    answers = []
    for which, python in (("pcp", SYSTEM_PYTHON), ("ours", sys.executable)):
        text = _pminfo_under_our_pmcd(name, agent, python, shared / which)
        text = text.replace(str(shared / which), "HOME")
        if agent.sporadic:  # (masked below: some must have come, on either binding)
            some = rf"(?m)^{agent.sporadic}.*\n(.+\n)*? +(inst \[.*\] )?value "
            assert re.search(some, text), f"no values of {agent.sporadic} by {which}:\n{text}"
        answers.append(_mask_moving(text, agent))
    return answers


# -- pcp-pmda-unifi, an agent from PyPI ----------------------------------------------------

UNIFI_CONF = """\
[global]
poll_interval = 10
max_clients = 1000
grace_period = 300
enable_dpi = false

[controller:main]
url = http://127.0.0.1:1
api_key = not-a-real-key
sites = all
is_udm = false
verify_ssl = false
"""

#: pcp-pmda-unifi's launcher for an interpreter with the package on its path (its
#: setup's own text for that case)
UNIFI_LAUNCHER = "from pcp_pmda_unifi.pmda import run\nrun()\n"


def _unifi_under_our_pmcd(where: Path, command: str) -> tuple[str, str]:
    """(pminfo -dT unifi, pminfo -f unifi.controller) from our pmcd running COMMAND."""
    from tests.support.our_pmcd import our_pmcd

    (where / "root").write_text("root {\n\tunifi\t256:*:*\n}\n")
    with (
        _env_dirs(where, "PCP_LOG_DIR", "PCP_TMP_DIR"),
        our_pmcd(
            f"unifi\t256\tpipe\tbinary\t{command}\n", where, "-n", str(where / "root"), *_PATIENT
        ) as pmcd,
    ):
        _wait_ready(pmcd, "unifi")
        described = pmcd.run(PMINFO, "-dT", "unifi")
        wait_until("the unifi agent's first poll", lambda: "No value" not in _controller(pmcd))
        controller = _controller(pmcd)
    return described.stdout + described.stderr, controller


def _controller(pmcd) -> str:
    done = pmcd.run(PMINFO, "-f", "unifi.controller.up", "unifi.controller.version")
    return done.stdout + done.stderr


@pytest.mark.interop
def test_pypi_unifi_agent_under_our_pmcd():
    """pcp-pmda-unifi from PyPI, unmodified, deployed by its own setup command into a
    private PCP_PMDAS_DIR and run by our pmcd, its controller unreachable: it registers
    its namespace (every name, descriptor and help text the same as on PCP's binding)
    and reports the controller down, as it does on PCP's."""
    require_pcp_bindings()
    setup = Path(sys.executable).with_name("pcp-pmda-unifi-setup")
    if not setup.exists():
        pytest.skip("pcp-pmda-unifi is not installed (PyPI pcp-pmda-unifi)")
    if not _has_module(SYSTEM_PYTHON, "requests"):
        pytest.skip("pcp-pmda-unifi needs requests on PCP's side (Debian python3-requests)")
    import pcp_pmda_unifi

    answers = []
    with tempfile.TemporaryDirectory(prefix="pcp-unifi-") as shared:
        os.chmod(shared, 0o755)
        for which in ("pcp", "ours"):
            where = Path(shared) / which
            where.mkdir()
            env = dict(os.environ, PCP_PMDAS_DIR=str(where), PCP_SYSCONF_DIR=str(where / "etc"))
            subprocess.run([str(setup), "install"], env=env, check=True, capture_output=True,
                           timeout=60)  # fmt: skip
            home = where / "unifi"
            (home / "unifi.conf").write_text(UNIFI_CONF)
            if which == "ours":  # its setup's launcher, naming our environment's packages
                command = f"/usr/bin/env -u PYTHONPATH {sys.executable} {home / 'pmdaunifi.python'}"
            else:  # PCP's binding, with only the agent's package added to its path
                shutil.copytree(
                    Path(pcp_pmda_unifi.__file__).parent, where / "pkg" / "pcp_pmda_unifi"
                )
                (home / "launch.python").write_text(UNIFI_LAUNCHER)
                path = f"PYTHONPATH={where / 'pkg'}"
                command = f"/usr/bin/env {path} {SYSTEM_PYTHON} {home / 'launch.python'}"
            for path in [where, *where.rglob("*")]:
                path.chmod(0o755 if path.is_dir() else 0o644)
            answers.append(_unifi_under_our_pmcd(where, command))
    names = answers[0][0]
    assert "unifi.switch.port.rx_bytes" in names and names.count("\nunifi.") > 100, names
    assert 'inst [0 or "main"] value 0' in answers[0][1]  # (unifi.controller.up: down)
    assert answers[1] == answers[0]
