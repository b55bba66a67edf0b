"""Who is asking: the clients pmcd forwards requests from, and their credentials.

pmcd sends an agent that asked for them (an agent class with `wants_credentials`)
each client's connection attributes as ATTR PDUs from the client's context
number, before that client's first request: on pmcd's unix socket the uid, gid
and pid the kernel vouches for, and any client's container name.  A TCP client
brings none.  When the client goes, pmcd says so with an ERROR PDU
(PM_ERR_NOTCONN) from the same context, and everything known of it is dropped.
This is what libpcp_pmda's pmdaAttribute and pmdaproc's per-context table keep.
"""

from __future__ import annotations

from dataclasses import dataclass

from purepcp.pmapi.pdu.constants import Attr, PDUFlag

#: The CREDS flags with which an agent asks pmcd for its clients' credentials (as
#: pmdaproc's PMDA_FLAG_AUTHORIZE | PMDA_FLAG_CONTAINER); pmcd honours either.
CREDENTIAL_FLAGS = PDUFlag.PDU_FLAG_AUTH | PDUFlag.PDU_FLAG_CONTAINER
#: The attributes a Client carries, and how many contexts' worth are kept at most
#: (pmcd reuses context numbers, so a table this size means a misbehaving pmcd).
_KEPT = (Attr.PCP_ATTR_USERID, Attr.PCP_ATTR_GROUPID, Attr.PCP_ATTR_PROCESSID)
MAX_CONTEXTS = 1 << 16


@dataclass(frozen=True)
class Client:
    """The client behind a request: its pmcd context and what pmcd told of it.

    `uid`, `gid` and `pid` are None for a client that brought no credentials (one
    on TCP, or any client of a pmcd that sends none); `authenticated` says whether
    uid and gid are known, as pmdaproc's access rule asks."""

    context: int
    uid: int | None = None
    gid: int | None = None
    pid: int | None = None
    container: str | None = None

    @property
    def authenticated(self) -> bool:
        return self.uid is not None and self.gid is not None


class ClientTable:
    """Every client context's attributes, as the ATTR PDUs from pmcd set them."""

    def __init__(self) -> None:
        self._attrs: dict[int, dict[int, str]] = {}
        self._cache: dict[int, Client] = {}

    def set_attribute(self, context: int, attr: int, value: bytes) -> None:
        """Record attribute ATTR (a PCP_ATTR_* code) of CONTEXT: VALUE, NUL-terminated
        or not; an empty container name clears it."""
        if context not in self._attrs and len(self._attrs) >= MAX_CONTEXTS:
            return
        text = value.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")
        attrs = self._attrs.setdefault(context, {})
        if attr == Attr.PCP_ATTR_CONTAINER and not text:
            attrs.pop(attr, None)
        else:
            attrs[attr] = text
        self._cache.pop(context, None)

    def known(self, context: int) -> bool:
        """Whether pmcd has told anything of CONTEXT's client (an attribute, at least)."""
        return context in self._attrs

    def end(self, context: int) -> None:
        """CONTEXT's client has gone: forget it."""
        self._attrs.pop(context, None)
        self._cache.pop(context, None)

    def client(self, context: int) -> Client:
        """The client in CONTEXT (with no credentials if pmcd sent none)."""
        found = self._cache.get(context)
        if found is None:
            attrs = self._attrs.get(context, {})
            ids = [_number(attrs.get(a)) for a in _KEPT]
            found = Client(context, *ids, attrs.get(Attr.PCP_ATTR_CONTAINER))
            self._cache[context] = found
        return found


def _number(text: str | None) -> int | None:
    """A decimal id as pmcd sends it (as pmdaproc's atoi reads it, but None if absent)."""
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        return None
