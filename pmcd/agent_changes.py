"""What a reload of pmcd.conf does to the running agents (pmcd's AgentsDiffer).

`compare_agents` matches the old and new agent lines by domain: an agent only the
new file names is started, one only the old file names is stopped, and one both
name is restarted when `agents_differ` says so, else kept running.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .config import AgentLine, PmcdConfig

__all__ = ["AgentChanges", "agents_differ", "compare_agents"]


def agents_differ(a: AgentLine, b: AgentLine) -> bool:
    """pmcd's AgentsDiffer: must the agent be restarted to go from A to B?

    As in PCP, the label and a pipe's `notready` do not count, and neither does a
    socket's name: only its family, port and command.
    """
    if a.domain != b.domain or a.kind != b.kind:
        return True
    if a.kind == "dso":
        return (a.path, a.entry) != (b.path, b.entry)
    if a.kind == "socket":
        return (a.family, a.port, a.argv) != (b.family, b.port, b.argv)
    return a.argv != b.argv


@dataclass(frozen=True)
class AgentChanges:
    """What a reload does to the agents, by domain."""

    added: tuple[AgentLine, ...]  # start these
    removed: tuple[AgentLine, ...]  # stop these
    changed: tuple[tuple[AgentLine, AgentLine], ...]  # (old, new): stop old, start new
    kept: tuple[tuple[AgentLine, AgentLine], ...]  # (old, new): keep the running agent

    @property
    def any(self) -> bool:
        return bool(self.added or self.removed or self.changed)


def compare_agents(
    old: PmcdConfig | Sequence[AgentLine], new: PmcdConfig | Sequence[AgentLine]
) -> AgentChanges:
    """Which agents a reload from OLD to NEW adds, removes, restarts and keeps."""
    old_agents = old.agents if isinstance(old, PmcdConfig) else tuple(old)
    new_agents = new.agents if isinstance(new, PmcdConfig) else tuple(new)
    before = {a.domain: a for a in old_agents}
    after = {a.domain: a for a in new_agents}
    added = tuple(a for a in new_agents if a.domain not in before)
    removed = tuple(a for a in old_agents if a.domain not in after)
    changed, kept = [], []
    for agent in new_agents:
        previous = before.get(agent.domain)
        if previous is not None:
            (changed if agents_differ(previous, agent) else kept).append((previous, agent))
    return AgentChanges(added, removed, tuple(changed), tuple(kept))
