"""pmDesc: the metadata that says how to interpret a metric's values."""

from __future__ import annotations

from dataclasses import dataclass, field

from .ids import PM_INDOM_NULL, pmInDomStr
from .types import PMSem, PMType, pmSemStr, type_description
from .units import Units


@dataclass(frozen=True, slots=True)
class Desc:
    """A metric descriptor with PCP's field names (pmid, type, indom, sem, units)."""

    pmid: int
    type: int = PMType.PM_TYPE_U32
    indom: int = PM_INDOM_NULL
    sem: int = PMSem.PM_SEM_INSTANT
    units: Units = field(default_factory=Units)

    def describe(self) -> str:
        """The two lines pminfo -d prints for this descriptor (without the PMID line)."""
        if self.type == PMType.PM_TYPE_NOSUPPORT:
            return "    Data Type: Not Supported"
        type_text = type_description(self.type)
        if type_text == "???":
            type_text += f" ({self.type})"
        sem_text = pmSemStr(self.sem)
        if sem_text == "???":
            sem_text += f" ({self.sem})"
        return (
            f"    Data Type: {type_text}  InDom: {pmInDomStr(self.indom)} 0x{self.indom:x}\n"
            f"    Semantics: {sem_text}  Units: {self.units.text()}"
        )
