"""pmcd's access control: the `[access]` lists and who may connect, fetch and store.

This is PCP 6.0.3's libpcp access.c as pmcd uses it, without sockets or globals:

* `AccessRule` is one `allow`/`disallow` statement as the config parser read it.
* `HostEntry` and `AccountEntry` are the lists' entries, which
  `access_builder.AccessBuilder` makes from statements (names looked up through
  `lookups.Lookups`, host patterns read by `host_patterns`).
* `AccessControl` is the frozen lists; `AccessControl.decide(peer)` answers, with
  no connections counted, what a client may do (`access_log.dump_lists` prints the
  lists as pmcd logs them).
* `Gatekeeper` adds pmcd's connection counting (`__pmAccAddClient`,
  `__pmAccDelClient`, `__pmAccAddAccount`) for `maximum N connections`.

Host precedence is PCP's: entries are kept in order of wildcard level (0 is an
exact address, 4 is `.*`, 8 is `:*`, 1 is pmcd's unix socket) and a client's
denied operations are computed from the most general matching entry to the most
specific, each one overriding only the operations it names.  The connection limit
checked is that of the most specific matching entry, limited or not.  User and
group entries instead add up: any matching entry's denials apply, and once any
user (group) statement exists, an account no user (group) statement names falls
to the `*` entry, which denies everything unless `allow user *` says otherwise.

PCP 6.0.3 quirks kept on purpose (see the tests): a loopback client counts once
per address of the local host name (three times per address with glibc, so
`allow localhost : maximum 2 connections` refuses every loopback client); a
refused connection keeps the counts it took before the refusal; user and group
connection counts are never released (PCP has no __pmAccDelAccount; our
`Gatekeeper.del_account` exists for callers who want one); a `*` user or group
entry never counts connections, so its limit never bites.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntFlag
from typing import Literal

from purepcp.pmapi.errors import PM_ERR_CONNLIMIT, PM_ERR_PERMISSION

from .host_patterns import LOOPBACK, UNIX_ADDRESS, Family, client_address

__all__ = [
    "PMCD_OP_ALL",
    "PMCD_OP_FETCH",
    "PMCD_OP_NONE",
    "PMCD_OP_STORE",
    "AccessControl",
    "AccessRule",
    "AccountEntry",
    "Decision",
    "Gatekeeper",
    "HostEntry",
    "Peer",
    "PmcdOp",
]


class PmcdOp(IntFlag):
    """The operations access control governs, with pmcd.h's names and bits."""

    PMCD_OP_NONE = 0x0
    PMCD_OP_FETCH = 0x1
    PMCD_OP_STORE = 0x2
    PMCD_OP_ALL = 0x3


PMCD_OP_NONE = PmcdOp.PMCD_OP_NONE
PMCD_OP_FETCH = PmcdOp.PMCD_OP_FETCH
PMCD_OP_STORE = PmcdOp.PMCD_OP_STORE
PMCD_OP_ALL = PmcdOp.PMCD_OP_ALL

RuleKind = Literal["host", "user", "group"]


@dataclass(frozen=True)
class AccessRule:
    """One parsed `allow`/`disallow` statement: whom it names and what it says about them."""

    allow: bool
    kind: RuleKind
    names: tuple[str, ...]
    spec_ops: PmcdOp  # operations the statement speaks about
    deny_ops: PmcdOp  # of those (and possibly others), the ones it denies
    max_connections: int  # 0: no limit given
    line: int
    source: str = "pmcd"  # "pmcd" for pmcd.conf, "access" for pmcd.conf.access


# ---------------------------------------------------------------------------
# entries


@dataclass(frozen=True)
class HostEntry:
    """One host access list entry: an address and mask at a wildcard level, and its rule."""

    spec: str  # the name it came from (PCP's hostspec); "unix:" for the unix socket
    family: Family
    address: int  # already masked
    mask: int
    level: int  # 0 exact address ... 4 (`.*`) or 8 (`:*`); 1 for the unix socket
    spec_ops: PmcdOp
    deny_ops: PmcdOp
    max_connections: int

    def matches(self, family: Family, address: int) -> bool:
        """Whether a client address of FAMILY falls under this entry."""
        return family == self.family and (address & self.mask) == self.address


@dataclass(frozen=True)
class AccountEntry:
    """One user or group access list entry; `ident` is None for the `*` entry."""

    name: str
    ident: int | None  # uid for users, gid for groups
    members: tuple[int, ...]  # a user's gids, or a group's uids
    spec_ops: PmcdOp
    deny_ops: PmcdOp
    max_connections: int


# ---------------------------------------------------------------------------
# deciding


@dataclass(frozen=True)
class Peer:
    """A client as pmcd sees it: its address (None on pmcd's unix socket) and credentials."""

    address: str | None
    uid: int | None = None  # from the unix socket's peer credentials, or authentication
    gid: int | None = None

    @classmethod
    def unix(cls, uid: int | None = None, gid: int | None = None) -> Peer:
        """A client on pmcd's unix domain socket."""
        return cls(None, uid, gid)


@dataclass(frozen=True)
class Decision:
    """The verdict for one client: 0 or why it was refused, and the operations denied it."""

    status: int  # 0, PM_ERR_PERMISSION or PM_ERR_CONNLIMIT
    deny: PmcdOp

    @property
    def may_connect(self) -> bool:
        return self.status >= 0

    @property
    def may_fetch(self) -> bool:
        return self.may(PMCD_OP_FETCH)

    @property
    def may_store(self) -> bool:
        return self.may(PMCD_OP_STORE)

    def may(self, op: PmcdOp) -> bool:
        """Whether the client is connected and OP is not denied it."""
        return self.may_connect and not (self.deny & op)


_ALLOW_ALL = Decision(0, PMCD_OP_NONE)


@dataclass(frozen=True)
class AccessControl:
    """pmcd's access lists, frozen; no [access] section means empty lists: allow all."""

    hosts: tuple[HostEntry, ...] = ()
    users: tuple[AccountEntry, ...] = ()
    groups: tuple[AccountEntry, ...] = ()
    local_addresses: tuple[str, ...] = ()  # what a loopback client stands for
    creds_required: bool = False  # user or group statements: clients must show credentials

    def decide(self, peer: Peer, *, creds_required: bool = False) -> Decision:
        """What PEER may do, counting no connections (as if it were the only client)."""
        return Gatekeeper(self).admit(peer, creds_required=creds_required, commit=False)


class Gatekeeper:
    """Connection counts for one AccessControl: admission as pmcd does it, client by client."""

    def __init__(self, control: AccessControl) -> None:
        self.control = control
        self.host_counts = [0] * len(control.hosts)
        self.user_counts = [0] * len(control.users)
        self.group_counts = [0] * len(control.groups)

    def admit(self, peer: Peer, *, creds_required: bool = False, commit: bool = True) -> Decision:
        """A new client: host rules (__pmAccAddClient), then credentials (CheckAccountAccess)."""
        decision = self.add_client(peer.address, commit=commit)
        if not decision.may_connect:
            return decision
        if (peer.uid is None or peer.gid is None) and (
            creds_required or self.control.creds_required
        ):
            # pmcd 6.0.3 answers the CREDS PDU with this error but keeps the client,
            # with the host rules' mask still in force: `deny` says what that is
            return Decision(PM_ERR_PERMISSION, decision.deny)
        return self.add_account(peer.uid, peer.gid, decision.deny, commit=commit)

    def _client_ids(self, address: str | None) -> list[tuple[Family, int]] | None:
        """getClientIds: the address, or for a loopback client this host's addresses."""
        if address is None:
            return [("unix", UNIX_ADDRESS)]
        ident = client_address(address)
        if ident not in LOOPBACK:
            return [ident]
        if not self.control.local_addresses:
            return None
        return [client_address(a) for a in self.control.local_addresses]

    def add_client(self, address: str | None, *, commit: bool = True) -> Decision:
        """__pmAccAddClient: host rules for a client at ADDRESS (None: the unix socket)."""
        hosts = self.control.hosts
        if not hosts:
            return _ALLOW_ALL
        ids = self._client_ids(address)
        if ids is None:
            return Decision(PM_ERR_PERMISSION, PMCD_OP_NONE)
        counts = self.host_counts if commit else list(self.host_counts)
        deny = PMCD_OP_NONE
        last: int | None = None
        for family, value in ids:
            for i in range(len(hosts) - 1, -1, -1):  # most general first
                entry = hosts[i]
                if entry.matches(family, value):
                    deny = PmcdOp((deny & ~entry.spec_ops) | entry.deny_ops)
                    last = i
            if deny == PMCD_OP_ALL:
                return Decision(PM_ERR_PERMISSION, deny)
            if last is not None:
                limit = hosts[last].max_connections
                if limit and counts[last] >= limit:
                    return Decision(PM_ERR_CONNLIMIT, PMCD_OP_ALL)
            for i, entry in enumerate(hosts):
                if entry.max_connections and entry.matches(family, value):
                    counts[i] += 1
        return Decision(0, deny)

    def del_client(self, address: str | None) -> None:
        """__pmAccDelClient: a client pmcd admitted has gone (not for refused ones)."""
        ids = self._client_ids(address) or []
        for family, value in ids:
            for i, entry in enumerate(self.control.hosts):
                if entry.max_connections and entry.matches(family, value):
                    self.host_counts[i] -= 1

    def add_account(
        self, uid: int | None, gid: int | None, deny: PmcdOp, *, commit: bool = True
    ) -> Decision:
        """__pmAccAddAccount: user and group rules, on top of DENY from the host rules."""
        users, groups = self.control.users, self.control.groups
        if not users and not groups:
            return Decision(0, deny)
        if uid is None or gid is None:
            return Decision(PM_ERR_PERMISSION, PMCD_OP_ALL)
        if uid < 0 and gid < 0:
            return Decision(PM_ERR_PERMISSION, PMCD_OP_ALL)
        ucounts = self.user_counts if commit else list(self.user_counts)
        gcounts = self.group_counts if commit else list(self.group_counts)
        for entries, counts, own, other in (
            (users, ucounts, uid, gid),
            (groups, gcounts, gid, uid),
        ):
            matched = False
            for i in range(1, len(entries)):
                entry = entries[i]
                if (own >= 0 and entry.ident == own) or (other >= 0 and other in entry.members):
                    if entry.max_connections and counts[i] >= entry.max_connections:
                        return Decision(PM_ERR_CONNLIMIT, PMCD_OP_ALL)
                    deny = PmcdOp(deny | entry.deny_ops)
                    matched = True
            if entries and not matched:
                entry = entries[0]
                if entry.max_connections and counts[0] >= entry.max_connections:
                    return Decision(PM_ERR_CONNLIMIT, PMCD_OP_ALL)
                deny = PmcdOp(deny | entry.deny_ops)
        if deny == PMCD_OP_ALL:
            return Decision(PM_ERR_PERMISSION, deny)
        self._count_user(uid, True, +1, ucounts, gcounts)
        self._count_group(gid, True, +1, ucounts, gcounts)
        return Decision(0, deny)

    def del_account(self, uid: int, gid: int) -> None:
        """Undo add_account's counting (PCP 6.0.3 never does: its account counts only grow)."""
        self._count_user(uid, True, -1, self.user_counts, self.group_counts)
        self._count_group(gid, True, -1, self.user_counts, self.group_counts)

    def _count_user(
        self, uid: int, descend: bool, step: int, ucounts: list[int], gcounts: list[int]
    ) -> None:
        """updateUserAccountConnections: the user's entry, then (once) its groups' entries."""
        for i in range(1, len(self.control.users)):
            entry = self.control.users[i]
            if entry.ident != uid:
                continue
            if entry.max_connections:
                ucounts[i] += step
            if descend:
                for gid in entry.members:
                    self._count_group(gid, False, step, ucounts, gcounts)

    def _count_group(
        self, gid: int, descend: bool, step: int, ucounts: list[int], gcounts: list[int]
    ) -> None:
        """updateGroupAccountConnections: the group's entry, then (once) its users' entries."""
        for i in range(1, len(self.control.groups)):
            entry = self.control.groups[i]
            if entry.ident != gid:
                continue
            if entry.max_connections:
                gcounts[i] += step
            if descend:
                for uid in entry.members:
                    self._count_user(uid, False, step, ucounts, gcounts)
