"""A local context's source: pmcd.conf's in-process agents, asked with no daemon between.

PCP's PM_CONTEXT_LOCAL (the tools' -L) loads the DSO agents named in pmcd.conf into
the client and skips pmcd's own agent, which only makes sense inside pmcd.  Here
the Python agents of the `dso` lines are loaded the same way, and a C library (a C
dso line, PCP's linux library for a linux line, -K's add,DOMAIN,PATH,INIT) is served
by a host process driven from this one (pmda.hosted), as our pmcd serves it.  Each
request is answered by pmcd's own request handling (routing by domain, namespaces,
errors), so a local context answers exactly as our pmcd would.  -K edits the agent
list: ``add,DOMAIN,MODULE[,CLASS]`` (or ``add,DOMAIN,PATH,INIT`` for a C library),
``del,DOMAIN`` and ``clear``, as pmSpecLocalPMDA.  As libpcp's, the context tells an
agent that asks (PDU_FLAG_AUTH) who its client is as soon as it is loaded: this
process's uid, gid and pid (pmdaproc answers no one it is not told of).
"""

from __future__ import annotations

import errno
import os
import sys
from typing import Any, NamedTuple

import trio

from purepcp.pmapi.errors import PM_ERR_NOAGENT, PMError
from purepcp.pmapi.paths import paths
from purepcp.pmapi.pdu.constants import Attr, PDUFlag
from purepcp.pmapi.pdu.records import PDU, Cred, CredsPDU, ProfilePDU
from purepcp.pmapi.pmns import PMNS
from purepcp.pmda.agent import combined_pmns
from purepcp.pmda.clients import CREDENTIAL_FLAGS
from purepcp.pmda.inproc import AgentLoadError, load_agent

from .channels import InProcessChannel
from .config import AgentLine, load_config
from .daemon import host_context_labels
from .files import namespace_root, pmcd_conf_path
from .session import Session

#: the linux agent's domain, which libpcp gives PCP's linux library for a linux line
LINUX_DOMAIN = 60


class LocalSpecError(PMError):
    """A -K specification that cannot be applied."""

    def __init__(self, spec: str, why: str) -> None:
        super().__init__(-errno.EINVAL, f'bad -K "{spec}": {why}')


class LocalAgent(NamedTuple):
    """One agent of a local context: a Python agent's SPEC ("module[:Class]"), or a C
    library's path with its init function ENTRY."""

    name: str
    domain: int
    spec: str
    entry: str | None = None


def apply_changes(agents: list[LocalAgent], changes: list[str]) -> list[LocalAgent]:
    """The agents after -K CHANGES (add/del/clear), in order."""
    agents = list(agents)
    for change in changes:
        words = change.split(",")
        op = words[0]
        if op == "clear" and len(words) == 1:
            agents = []
        elif op == "del" and len(words) == 2 and words[1].isdigit():
            agents = [a for a in agents if a.domain != int(words[1])]
        elif op == "add" and len(words) in (3, 4) and words[1].isdigit() and words[2]:
            agents = [a for a in agents if a.domain != int(words[1])]
            agents.append(_added(change, int(words[1]), words[2], words[3:]))
        else:
            raise LocalSpecError(change, "expected add,DOMAIN,MODULE[,CLASS], del,DOMAIN or clear")
    return agents


def _added(change: str, domain: int, where: str, rest: list[str]) -> LocalAgent:
    """The agent of -K add,DOMAIN,WHERE[,REST]: Python (module or .py file, optional class)
    or a C library (its init function required, as pmSpecLocalPMDA requires it)."""
    if _is_python(where):
        spec = where if not rest or rest[0] in ("", "-") else f"{where}:{rest[0]}"
        return LocalAgent("", domain, spec)
    if not rest or not rest[0]:
        raise LocalSpecError(change, "missing init-routine in spec")
    return LocalAgent("", domain, where, rest[0])


def _is_python(where: str) -> bool:
    """Whether a dso line's or -K's library names a Python agent (module or .py file)."""
    return AgentLine("", 0, 0, "dso", path=where).python_spec is not None


def _configured(config: str | None) -> list[LocalAgent]:
    """pmcd.conf's agents for a local context, as libpcp's build_dsotab picks them:
    every dso line but pmcd's own, and PCP's linux library for a linux line of any kind."""
    path = config or str(pmcd_conf_path(paths()))
    agents = []
    for line in load_config(path).agents:
        if line.kind != "dso" or line.is_pmcd_agent:
            if line.name == "linux" and (linux := _linux_library()) is not None:
                agents.append(LocalAgent(line.name, LINUX_DOMAIN, linux, "linux_init"))
        elif line.python_spec is not None:
            agents.append(LocalAgent(line.name, line.domain, line.python_spec))
        elif line.path:
            agents.append(LocalAgent(line.name, line.domain, line.path, line.entry or ""))
    return agents


def _linux_library() -> str | None:
    """PCP's linux agent library, which libpcp loads for a pmcd.conf linux line that is
    not a dso line; None where there is none (an installation of ours alone)."""
    path = paths().pmdas_dir / "linux" / "pmda_linux.so"
    return str(path) if path.exists() else None


def _load(agent: LocalAgent) -> Any:
    """AGENT started (a Python agent in this process, a C library in its host), or None
    for a C library that could not be (libpcp's warning given: the context goes on)."""
    if agent.entry is None:
        try:
            return load_agent(agent.spec, agent.domain)
        except AgentLoadError as exc:
            raise PMError(PM_ERR_NOAGENT, str(exc)) from None
    from purepcp.pmda.hosted import HostedLibrary, LoadFailure, connect_local_warning, find_library

    path = find_library(agent.spec, str(paths().pmdas_dir))
    if path is None:
        return None
    name = agent.name or os.path.basename(path)
    try:
        return HostedLibrary.start(name, agent.domain, path, agent.entry)
    except LoadFailure as failure:
        print(connect_local_warning(failure, path, agent.entry), end="", file=sys.stderr)
        return None


def _namespace(channels: dict[int, InProcessChannel]) -> PMNS:
    """The context's namespace, libpcp's for a local context: the default namespace (a
    C library has no file of its own), with the Python agents' own namespace files
    added; those alone where there is no default namespace file."""
    from purepcp.pmda.hosted import HostedLibrary

    sources = {  # each Python agent's own namespace file (a package's, beside its module)
        type(c.agent).source_file("pmns"): (c.agent.name.upper(), c.domain)
        for c in channels.values()
        if not isinstance(c.agent, HostedLibrary)
    }
    files = [path for path in sources if path.exists()]
    pmns = combined_pmns(files, dict(sources[path] for path in files))
    root = namespace_root(paths())
    if root is None:
        return pmns
    try:
        default = PMNS.from_file(str(root), cpp=False)
    except (OSError, PMError) as exc:
        raise PMError(PM_ERR_NOAGENT, f"cannot load the namespace {root}: {exc}") from None
    default.merge(pmns)
    return default


class _EveryDomain:
    """A container holding every domain number."""

    def __contains__(self, domain: object) -> bool:
        return True


class LocalSource:
    """Agents loaded into this process, answered through pmcd's session logic."""

    kind = "local"
    features = 0
    generation = 0

    def __init__(self, session: Session, channels: dict[int, InProcessChannel]) -> None:
        self.session = session
        self.channels = channels
        self.hostname = "local:"
        self.changes = 0

    @classmethod
    def start(cls, changes: list[str], config: str | None = None) -> LocalSource:
        agents = apply_changes(_configured(config), changes)
        channels: dict[int, InProcessChannel] = {}
        try:
            for agent in agents:
                loaded = _load(agent)
                if loaded is not None:
                    name = agent.name or loaded.name or agent.spec
                    channels[agent.domain] = InProcessChannel(
                        name, agent.domain, loaded, inline=True
                    )
        except BaseException:
            for channel in channels.values():
                channel.agent.stop()
            raise
        pmns = _namespace(channels)
        labels = _local_labels()
        # as libpcp: a domain with no agent loaded is PM_ERR_NOAGENT, whatever the request
        every_domain = _EveryDomain()
        session = Session(
            0,
            None,
            lambda: pmns,
            channels,
            lambda: 0.0,
            lambda *_: labels,
            lambda: every_domain,
            peer_creds=(os.getuid(), os.getgid(), os.getpid()),
        )
        try:
            trio.run(_connect, session, channels)
        except BaseException:
            for channel in channels.values():
                channel.agent.stop()
            raise
        return cls(session, channels)

    def exchange(self, pdu: PDU) -> Any:
        """The agents' answer to PDU (None for a profile), as pmcd would give it."""
        reply = trio.run(self.session.answer, pdu)
        return None if isinstance(pdu, ProfilePDU) else reply

    async def exchange_async(self, pdu: PDU) -> Any:
        reply = await self.session.answer(pdu)
        return None if isinstance(pdu, ProfilePDU) else reply

    def close(self) -> None:
        for channel in self.channels.values():
            channel.agent.stop()
        self.channels.clear()


async def _connect(session: Session, channels: dict[int, InProcessChannel]) -> None:
    """The context's attributes given to its agents, as libpcp's __pmConnectLocal gives
    them (build_dsoattrs) once each DSO is initialised: the container PCP_CONTAINER
    names, and this process's uid, gid and pid, from context 0 (this one's number), to
    every agent that asked for its clients' attributes with PDU_FLAG_AUTH; the others
    get none, then or later.  They come as pmcd gives a unix-socket client's (Session's
    handshake), and in the order of libpcp's walk of its table: the newest first."""
    container = os.environ.get("PCP_CONTAINER")
    if container is not None:
        session.set_attribute(Attr.PCP_ATTR_CONTAINER, os.fsencode(container))
    await session.answer(CredsPDU((Cred.version(0),)))
    for channel in channels.values():
        if not _flags(channel.agent) & PDUFlag.PDU_FLAG_AUTH:
            channel.flags = 0  # (libpcp's local context gives no attributes to such an agent)
            continue
        for pdu in session.attr_pdus():
            await channel.notify(pdu, 0.0)
        channel.attrs_sent[session.slot] = session.attr_version


def _flags(agent: Any) -> int:
    """The feature flags AGENT asked for: a C library's, from its CREDS; a Python
    agent's, from whether it wants its clients' credentials."""
    from purepcp.pmda.hosted import HostedLibrary

    if isinstance(agent, HostedLibrary):
        return agent.flags
    return int(CREDENTIAL_FLAGS) if getattr(agent, "wants_credentials", False) else 0


def _local_labels() -> tuple:
    """A local context's context labels, as libpcp's local_context_labels: the label
    files of $PCP_SYSCONF_DIR, the host's labels, and this process's uid and gid."""
    from purepcp.pmapi.paths import LayoutError

    try:
        sysconf: str | None = str(paths().sysconf_dir)
    except (LayoutError, OSError, KeyError):
        sysconf = None
    return host_context_labels(None, sysconf, (os.getuid(), os.getgid()))
