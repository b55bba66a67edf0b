"""A context's instance profile: which instances later fetches should return.

The rules are pmAddProfile's and pmDelProfile's: a global state, and per instance
domain either "all but these" (PM_PROFILE_INCLUDE with an exclusion list) or "only
these" (PM_PROFILE_EXCLUDE with an inclusion list).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from .errors import PM_ERR_PROFILESPEC, PMError
from .ids import PM_INDOM_NULL
from .pdu.constants import PM_PROFILE_EXCLUDE, PM_PROFILE_INCLUDE

if TYPE_CHECKING:
    from .pdu.records import ProfilePDU


class Profile:
    """The instances a context asks for; ``changed`` until the next fetch sends it."""

    def __init__(self) -> None:
        self.state = PM_PROFILE_INCLUDE
        self.indoms: dict[int, tuple[int, set[int]]] = {}
        self.changed = False
        self.version = 0  # counts changes, so answers computed ahead can tell they are stale

    def _change(self, indom: int, insts: Iterable[int] | None, include: bool) -> None:
        wanted = None if insts is None else set(insts)
        if indom == PM_INDOM_NULL:
            if wanted:
                raise PMError(PM_ERR_PROFILESPEC)
            self.state = PM_PROFILE_INCLUDE if include else PM_PROFILE_EXCLUDE
            self.indoms.clear()
        elif not wanted:
            self.indoms[indom] = (PM_PROFILE_INCLUDE if include else PM_PROFILE_EXCLUDE, set())
        else:
            state, listed = self.indoms.get(indom, (PM_PROFILE_EXCLUDE, set()))
            # an INCLUDE entry lists exclusions, an EXCLUDE entry lists inclusions
            if (state == PM_PROFILE_EXCLUDE) == include:
                listed |= wanted
            else:
                listed -= wanted
            self.indoms[indom] = (state, listed)
        self.changed = True
        self.version += 1

    def add(self, indom: int, insts: Iterable[int] | None = None) -> None:
        """pmAddProfile: include INSTS of INDOM (all of them if None)."""
        self._change(indom, insts, include=True)

    def delete(self, indom: int, insts: Iterable[int] | None = None) -> None:
        """pmDelProfile: exclude INSTS of INDOM (all of them if None)."""
        self._change(indom, insts, include=False)

    def wants(self, indom: int, inst: int) -> bool:
        """Whether a fetch under this profile returns instance INST of INDOM."""
        entry = self.indoms.get(indom)
        if entry is None:
            return self.state == PM_PROFILE_INCLUDE
        state, listed = entry
        return (inst in listed) == (state == PM_PROFILE_EXCLUDE)

    def pdu(self, ctxid: int, sender: int) -> ProfilePDU:
        """The PROFILE PDU that tells pmcd this profile."""
        from .pdu.records import InDomProfile, ProfilePDU  # (archive replay never needs it)

        entries = tuple(
            InDomProfile(indom, state, tuple(sorted(listed)))
            for indom, (state, listed) in self.indoms.items()
        )
        return ProfilePDU(ctxid, self.state, entries, sender)
