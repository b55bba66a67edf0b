"""The archive a run dumps, as every section of the dump reads it, and how it names things."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from purepcp.pmapi.cnumbers import int32
from purepcp.pmapi.errors import PMError
from purepcp.pmapi.values import Timestamp

from .clock import Clock
from .metadata import Metadata

if TYPE_CHECKING:
    from purepcp.pmapi.archive import Archive
    from purepcp.pmapi.archive.reader import End
    from purepcp.pmapi.pmns import PMNS

    from .options import Options


@dataclass(frozen=True)
class Source:
    """The open archive, its metadata as libpcp holds it, the options, the clock, where
    the records end (None: damage hides it), and the namespace names come from."""

    archive: Archive
    meta: Metadata
    o: Options
    clock: Clock
    end: End | None
    pmns: PMNS
    _names: dict[int, list[str]] = field(default_factory=dict, repr=False, compare=False)

    def names(self, pmid: int) -> list[str]:
        """pmNameAll: every name of PMID in the namespace in use ([] for none)."""
        found = self._names.get(pmid)
        if found is None:
            try:
                found = self.pmns.names(pmid)
            except PMError:
                found = []
            self._names[pmid] = found
        return found

    def name_text(self, pmid: int) -> str:
        """__pmPrintMetricNames: the names joined by " or ", else "<nonames>"."""
        return " or ".join(self.names(pmid)) or "<nonames>"

    def inst_text(self, indom: int, inst: int, stamp: Timestamp) -> str:
        """An instance as the values print it: '3 or "cyan"', or '3 or ???' unnamed."""
        name = self.meta.inst_name(indom, int32(inst), stamp)
        return f"{int32(inst)} or ???" if name is None else f'{int32(inst)} or "{name}"'
