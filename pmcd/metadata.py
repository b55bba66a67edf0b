"""What pmcd remembers of an agent's metadata: descriptors, help text and labels.

They are constant for an agent's life (PCP's agents declare them once), so pmcd keeps
each answer the first time a client asks and answers later clients from memory, without
a round trip to the agent.  The cache lives with the agent's channel, so a restarted
agent starts with an empty one, and it forgets on the agent's word: a fetch whose result
carries PMCD_LABEL_CHANGE drops the labels, PMCD_NAMES_CHANGE the descriptors and help
(names that come and go may bring or take metrics).

A store may change what an agent answers (PCP's sample goes busy after `pmstore
sample.not_ready N`, and answers PM_ERR_PMDANOTREADY to the next request whatever it
is), so after a store the cache is not answered from until the agent has answered a
request again.

Not kept: errors (an agent may learn a metric later), instance labels (they follow the
instances and each client's profile), and anything for a client that names a container
(an agent may answer such a client for that container alone).
"""

from __future__ import annotations

from typing import Any

from purepcp.pmapi.pdu.constants import PMCDState

#: Entries kept per kind at most (an agent with more metrics than this is re-asked).
LIMIT = 1 << 16


class MetadataCache:
    """One agent's answers to descriptor, help text and label requests."""

    __slots__ = ("descs", "labels", "texts", "trusted")

    def __init__(self) -> None:
        #: False from a store until the agent's next answer: requests go to the agent
        self.trusted = True
        self.descs: dict[int, Any] = {}  # pmid -> DescPDU
        self.texts: dict[tuple[int, int], Any] = {}  # (ident, type) -> TextPDU
        self.labels: dict[tuple[int, int], Any] = {}  # (ident, type) -> LabelPDU

    def keep(self, table: dict, key: Any, answer: Any) -> Any:
        """Remember ANSWER under KEY in TABLE (unless it is full) and return it."""
        if len(table) < LIMIT:
            table[key] = answer
        return answer

    def changed(self, changes: int) -> None:
        """The agent said its labels or names changed (a result's state flags)."""
        if changes & PMCDState.PMCD_LABEL_CHANGE:
            self.labels.clear()
        if changes & PMCDState.PMCD_NAMES_CHANGE:
            self.descs.clear()
            self.texts.clear()

    def clear(self) -> None:
        self.descs.clear()
        self.texts.clear()
        self.labels.clear()
