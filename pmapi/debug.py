"""The -D debug options a tool was given (pmSetDebug's names), for the traces of our own
that mean something to a user: libpcp's internal ones (PDU dumps, lexer states) have
no counterpart here and are accepted silently (pmapi.options.debug_spec_ok).

- fetch: each fetch that brings news of pmcd's state prints libpcp's line for it,
  "PMCD state changes: agent(s) added restarted dropped" (fetch.c's dump_fetch_flags).
"""

from __future__ import annotations

import sys

from .pdu.constants import PMCDState

#: the options set (lower case names; "all" sets every one)
enabled: set[str] = set()


def set_options(spec: str) -> None:
    """Add -D SPEC's names (comma separated; numbers are libpcp's old bit masks, ignored)."""
    enabled.update(t.strip().lower() for t in spec.split(",") if t.strip())


def on(name: str) -> bool:
    """Whether the debug option NAME is set."""
    return name in enabled or "all" in enabled


def state_changes(flags: int) -> str:
    """libpcp's words for the PMCD_* state change FLAGS a fetch brought."""
    words = []
    agents = PMCDState.PMCD_ADD_AGENT | PMCDState.PMCD_RESTART_AGENT | PMCDState.PMCD_DROP_AGENT
    if flags & agents:
        agent = "agent(s)"
        for bit, word in (
            (PMCDState.PMCD_ADD_AGENT, " added"),
            (PMCDState.PMCD_RESTART_AGENT, " restarted"),
            (PMCDState.PMCD_DROP_AGENT, " dropped"),
        ):
            if flags & bit:
                agent += word
        words.append(agent)
    if flags & PMCDState.PMCD_LABEL_CHANGE:
        words.append("label change")
    if flags & PMCDState.PMCD_NAMES_CHANGE:
        words.append("names change")
    return "PMCD state changes: " + ", ".join(words) + "\n"


def fetch_news(flags: int) -> None:
    """-D fetch: tell of the state changes a fetch brought, on stderr, as libpcp does."""
    if flags > 0 and on("fetch"):
        sys.stderr.write(state_changes(flags))
        sys.stderr.flush()
