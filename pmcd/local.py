"""A local context's source: pmcd.conf's in-process agents, asked with no daemon between.

PCP's PM_CONTEXT_LOCAL (the tools' -L) loads the DSO agents named in pmcd.conf into
the client and skips pmcd's own agent, which only makes sense inside pmcd.  Here
the Python agents of the `dso` lines are loaded the same way, and each request is
answered by pmcd's own request handling (routing by domain, namespaces, errors),
so a local context answers exactly as our pmcd would.  -K edits the agent list:
``add,DOMAIN,MODULE[,CLASS]``, ``del,DOMAIN`` and ``clear``, as pmSpecLocalPMDA.
"""

from __future__ import annotations

import errno
from typing import Any

import trio

from purepcp.pmapi.errors import PM_ERR_NOAGENT, PMError
from purepcp.pmapi.paths import paths
from purepcp.pmapi.pdu.records import PDU, ProfilePDU
from purepcp.pmda.agent import combined_pmns
from purepcp.pmda.inproc import AgentLoadError, load_agent

from .channels import InProcessChannel
from .config import AgentLine, load_config
from .daemon import host_context_labels
from .files import pmcd_conf_path
from .session import Session


class LocalSpecError(PMError):
    """A -K specification that cannot be applied."""

    def __init__(self, spec: str, why: str) -> None:
        super().__init__(-errno.EINVAL, f'bad -K "{spec}": {why}')


def apply_changes(
    lines: list[tuple[str, int, str]], changes: list[str]
) -> list[tuple[str, int, str]]:
    """(name, domain, spec) agents after -K CHANGES (add/del/clear), in order."""
    agents = list(lines)
    for change in changes:
        words = change.split(",")
        op = words[0]
        if op == "clear" and len(words) == 1:
            agents = []
        elif op == "del" and len(words) == 2 and words[1].isdigit():
            agents = [a for a in agents if a[1] != int(words[1])]
        elif op == "add" and len(words) in (3, 4) and words[1].isdigit() and words[2]:
            spec = words[2] if len(words) == 3 or words[3] in ("", "-") else ":".join(words[2:])
            agents = [a for a in agents if a[1] != int(words[1])]
            agents.append(("", int(words[1]), spec))
        else:
            raise LocalSpecError(change, "expected add,DOMAIN,MODULE[,CLASS], del,DOMAIN or clear")
    return agents


def _configured(config: str | None) -> list[tuple[str, int, str]]:
    path = config or str(pmcd_conf_path(paths()))
    agents = []
    for line in load_config(path).agents:
        if _local_candidate(line):
            agents.append((line.name, line.domain, line.python_spec or ""))
    return agents


def _local_candidate(line: AgentLine) -> bool:
    """A dso line for a Python agent other than pmcd's own."""
    if line.kind != "dso" or line.is_pmcd_agent:
        return False
    return line.python_spec is not None


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
            for name, domain, spec in agents:
                try:
                    agent = load_agent(spec, domain)
                except AgentLoadError as exc:
                    raise PMError(PM_ERR_NOAGENT, str(exc)) from None
                name = name or agent.name or spec
                channels[domain] = InProcessChannel(name, domain, agent, inline=True)
        except BaseException:
            for channel in channels.values():
                channel.agent.stop()
            raise
        sources = {  # each agent's own namespace file (a package's, beside its module)
            type(c.agent).source_file("pmns"): (c.agent.name.upper(), c.domain)
            for c in channels.values()
        }
        files = [path for path in sources if path.exists()]
        pmns = combined_pmns(files, dict(sources[path] for path in files))
        labels = host_context_labels()
        # as libpcp: a domain with no agent loaded is PM_ERR_NOAGENT, whatever the request
        every_domain = _EveryDomain()
        session = Session(
            0, None, lambda: pmns, channels, lambda: 0.0, lambda: labels, lambda: every_domain
        )
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
