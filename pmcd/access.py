"""pmcd's access control: the `[access]` rules and who may connect, fetch and store.

This is PCP 6.0.3's libpcp access.c as pmcd uses it, without sockets or globals:

* `AccessRule` is one `allow`/`disallow` statement as the config parser read it.
* `AccessBuilder` turns statements into host, user and group entries the way
  `__pmAccAddHost`, `__pmAccAddUser` and `__pmAccAddGroup` do: host names are
  resolved, wildcards become address/mask pairs with a wildcard level, and
  statements naming the same host (same address and level) or account are merged,
  or refused with PCP's "Permission clash" note when they disagree.
* `AccessControl` is the frozen result; `AccessControl.decide(peer)` answers, with
  no connections counted, what a client may do.
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

Names reach the system only through `Lookups` (resolver, host name, passwd and
group databases, services), so tests need no DNS.  `Lookups.resolve` returns
every address getaddrinfo(3) gives, duplicates included: PCP drops duplicates
when resolving a host statement but not when it maps a loopback client to the
host's own addresses, where each duplicate counts against a connection limit.

PCP 6.0.3 quirks kept on purpose (see the tests): a loopback client counts once
per address of the local host name (three times per address with glibc, so
`allow localhost : maximum 2 connections` refuses every loopback client); a
refused connection keeps the counts it took before the refusal; user and group
connection counts are never released (PCP has no __pmAccDelAccount; our
`Gatekeeper.del_account` exists for callers who want one); a `*` user or group
entry never counts connections, so its limit never bites.  Not kept: a `*` user
or group statement after named ones makes PCP append an uninitialised entry (heap
garbage, visible in pmcd's log) to the list; we only rewrite the `*` entry.
"""

from __future__ import annotations

import errno
import grp
import pwd
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import IntFlag
from typing import Literal

from purepcp.pmapi.errors import PM_ERR_CONNLIMIT, PM_ERR_PERMISSION, pmErrStr

__all__ = [
    "PMCD_OP_ALL",
    "PMCD_OP_FETCH",
    "PMCD_OP_NONE",
    "PMCD_OP_STORE",
    "AccessBuilder",
    "AccessControl",
    "AccessRule",
    "AccountEntry",
    "Decision",
    "Gatekeeper",
    "GroupAccount",
    "HostEntry",
    "Lookups",
    "Peer",
    "PmcdOp",
    "UserAccount",
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
Family = Literal["inet", "ipv6", "unix"]


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
# system lookups (injectable)


@dataclass(frozen=True)
class UserAccount:
    """A user from the passwd database: id and every group it belongs to."""

    name: str
    uid: int
    gids: tuple[int, ...]  # primary group first, then supplementary groups


@dataclass(frozen=True)
class GroupAccount:
    """A group from the group database: id and every user in it."""

    name: str
    gid: int
    uids: tuple[int, ...]  # users with it as primary group, and listed members


def system_resolve(name: str) -> list[str]:
    """Every address getaddrinfo gives NAME, as __pmGetAddrInfo asks (duplicates kept)."""
    try:
        infos = socket.getaddrinfo(name, None, socket.AF_UNSPEC, 0, 0, socket.AI_ADDRCONFIG)
    except (OSError, UnicodeError):
        return []
    return [str(info[4][0]) for info in infos if info[0] in (socket.AF_INET, socket.AF_INET6)]


def system_user(name: str) -> UserAccount | None:
    """NAME from the passwd database with its groups, as __pmUsersGroupIDs finds them."""
    try:
        entry = pwd.getpwnam(name)
    except (KeyError, ValueError):
        return None
    gids = [entry.pw_gid]
    for group in grp.getgrall():
        if name in group.gr_mem and group.gr_gid not in gids:
            gids.append(group.gr_gid)
    return UserAccount(name, entry.pw_uid, tuple(gids))


def system_group(name: str) -> GroupAccount | None:
    """NAME from the group database with its users, as __pmGroupsUserIDs finds them."""
    try:
        entry = grp.getgrnam(name)
    except (KeyError, ValueError):
        return None
    uids: list[int] = []
    for user in pwd.getpwall():
        if (user.pw_gid == entry.gr_gid or user.pw_name in entry.gr_mem) and (
            user.pw_uid not in uids
        ):
            uids.append(user.pw_uid)
    return GroupAccount(name, entry.gr_gid, tuple(uids))


def system_service_port(name: str) -> int | None:
    """The port /etc/services gives NAME for any protocol, or None."""
    try:
        return socket.getservbyname(name)
    except (OSError, UnicodeError):
        return None


@dataclass(frozen=True)
class Lookups:
    """Everything access control and agent lines ask the system: replace any for tests."""

    resolve: Callable[[str], Sequence[str]] = system_resolve
    hostname: Callable[[], str] = socket.gethostname
    user: Callable[[str], UserAccount | None] = system_user
    group: Callable[[str], GroupAccount | None] = system_group
    service_port: Callable[[str], int | None] = system_service_port
    ipv6: bool = True  # pmGetAPIConfig("ipv6"): does `*` include the `:*` wildcard


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


# the `*` entry a user or group list starts with: denies everything until `allow ... *`
_ACCOUNT_WILDCARD = AccountEntry("*", None, (), PMCD_OP_ALL, PMCD_OP_ALL, 0)

_UNIX_ADDRESS = 0  # every unix-socket client matches every unix entry, as in PCP


def _clash(old_spec: int, old_deny: int, old_max: int, spec: int, deny: int, maxcons: int) -> bool:
    """PCP's test for a statement contradicting an earlier one about the same target."""
    if old_max and maxcons and old_max != maxcons:
        return True
    return bool(old_spec & spec) and bool((old_spec & old_deny) ^ (spec & deny))


# ---------------------------------------------------------------------------
# host patterns


class _BadPattern(Exception):
    """A host pattern PCP refuses: the note it logs."""


def _ch(text: str, i: int) -> str:
    return text[i] if i < len(text) else "\0"


def _strtol(text: str, i: int, base: int) -> tuple[int, int]:
    """C's (int)strtol(text + i, &end, base): the value and where it stopped."""
    j = i
    while _ch(text, j) in " \t\n\v\f\r":
        j += 1
    sign = 1
    if _ch(text, j) in "+-":
        sign = -1 if text[j] == "-" else 1
        j += 1
    digits = "0123456789abcdef"[:base]
    if base == 16 and text[j : j + 2].lower() == "0x" and _ch(text, j + 2).lower() in digits:
        j += 2
    start = j
    value = 0
    while _ch(text, j).lower() in digits:
        value = value * base + digits.index(text[j].lower())
        j += 1
    if j == start:
        return 0, i
    value = max(-(2**63), min(2**63 - 1, sign * value))  # long, saturated
    value &= 0xFFFFFFFF  # then truncated to int
    return (value - 2**32 if value >= 2**31 else value), j


def _inet_wildcard(name: str) -> tuple[int, str, str]:
    """parseInetWildCard: level, address and mask text for an IPv4 pattern ending in `*`."""
    level, ip, mask, p = 4, [], [], 0
    if _ch(name, p) == ".":
        p += 1
        if _ch(name, p) != "*":
            raise _BadPattern(f"Error: Bad IP address wildcard, {name}")
    while _ch(name, p) not in ("\0", "*"):
        n, p = _strtol(name, p, 10)
        if _ch(name, p) not in (".", "*") or n < 0 or n > 255:
            raise _BadPattern(f"Error: Bad IP address wildcard, {name}")
        ip.append(str(n))
        mask.append("255")
        level -= 1
        if level < 1:
            raise _BadPattern(f'Error: Too many dots in host pattern "{name}"')
        p += 1
    ip += ["0"] * level
    mask += ["0"] * level
    return level, ".".join(ip), ".".join(mask)


def _ipv6_wildcard(name: str) -> tuple[int, str, str]:
    """parseIPv6WildCard: level, address and mask text for an IPv6 pattern ending in `*`."""
    level, empty, ip, mask, p = 8, False, "", "", 0
    if _ch(name, p) == ":":
        p += 1
        if _ch(name, p) != "*":
            if _ch(name, p) != ":":
                raise _BadPattern(f"Error: Bad IPv6 address wildcard, {name}")
            ip = mask = ":"
    while _ch(name, p) not in ("\0", "*"):
        if _ch(name, p) == ":":
            if empty:
                raise _BadPattern(f'Error: Too many empty regions in host pattern "{name}"')
            empty = True
            ip += ":"
            mask += ":"
        else:
            n, p = _strtol(name, p, 16)
            if _ch(name, p) not in (":", "*") or n < 0 or n > 0xFFFF:
                raise _BadPattern(f"Error: Bad IPv6 address wildcard, {name}")
            if ip:
                ip += ":"
                mask += ":"
            ip += f"{n:x}"
            mask += "ffff"
        level -= 1
        if level < 1:
            raise _BadPattern(f'Error: Too many colons in host pattern "{name}"')
        p += 1
    if level == 8 or (level == 7 and empty):
        return 8, "::", "::"
    tail = ":0" if empty else "::"
    return level, ip + tail, mask + tail


def _address(family: Family, text: str) -> int:
    """inet_pton as an integer; raises OSError as __pmStringToSockAddr fails."""
    af = socket.AF_INET if family == "inet" else socket.AF_INET6
    return int.from_bytes(socket.inet_pton(af, text.partition("%")[0]), "big")


def _parse_client(address: str) -> tuple[Family, int]:
    """A client's address as (family, integer)."""
    text = address.partition("%")[0]
    if ":" in text:
        return "ipv6", _address("ipv6", text)
    return "inet", _address("inet", text)


_LOOPBACK = {("inet", 0x7F000001), ("ipv6", 1)}


@dataclass
class _Spec:
    name: str
    family: Family
    address: int
    mask: int
    level: int


# ---------------------------------------------------------------------------
# building the lists


@dataclass
class AccessBuilder:
    """The host, user and group lists being built, statement by statement, as libpcp does."""

    lookups: Lookups = field(default_factory=Lookups)
    hosts: list[HostEntry] = field(default_factory=list)
    users: list[AccountEntry] = field(default_factory=list)
    groups: list[AccountEntry] = field(default_factory=list)
    creds_required: bool = False
    _my_host: tuple[str, tuple[str, ...]] | None = None  # (hostname, its addresses)

    # -- host statements ----------------------------------------------------

    def add_host(
        self, name: str, spec_ops: PmcdOp, deny_ops: PmcdOp, maxcons: int
    ) -> tuple[int, list[str]]:
        """__pmAccAddHost: 0 or -errno, and the notes PCP logs on the way."""
        notes: list[str] = []
        if maxcons < 0:
            return -errno.EINVAL, notes
        specs, status = self._host_specs(name, notes)
        if not specs:
            return status, notes
        found = 0
        previous: tuple[str, str] | None = None
        for spec in specs:
            index, match = self._find_host(spec)
            if match:
                old = self.hosts[index]
                if _clash(
                    old.spec_ops,
                    old.deny_ops,
                    old.max_connections,
                    spec_ops,
                    deny_ops,
                    maxcons,
                ):
                    # one note per (spec, earlier entry), however many addresses clash
                    if previous != (spec.name, old.spec):
                        notes.append(
                            f"Error: Permission clash for {spec.name} "
                            f"with earlier statement for {old.spec}"
                        )
                        previous = (spec.name, old.spec)
                    continue
                self.hosts[index] = HostEntry(
                    old.spec,
                    old.family,
                    old.address,
                    old.mask,
                    old.level,
                    PmcdOp(old.spec_ops | spec_ops),
                    PmcdOp(old.deny_ops | (spec_ops & deny_ops)),
                    maxcons or old.max_connections,
                )
            else:
                entry = HostEntry(
                    spec.name,
                    spec.family,
                    spec.address,
                    spec.mask,
                    spec.level,
                    PmcdOp(spec_ops),
                    PmcdOp(spec_ops & deny_ops),
                    maxcons,
                )
                self.hosts.insert(index, entry)
            found += 1
        return (0 if found else -errno.EINVAL), notes

    def _find_host(self, spec: _Spec) -> tuple[int, bool]:
        """Where SPEC's entry is (True) or would go (False): entries stay sorted by level."""
        for i, entry in enumerate(self.hosts):
            if entry.level > spec.level:
                return i, False
            if (
                entry.family == spec.family
                and entry.address == spec.address
                and entry.level == spec.level
            ):
                return i, True
        return len(self.hosts), False

    def _host_specs(self, name: str, notes: list[str]) -> tuple[list[_Spec], int]:
        """getHostAccessSpecs: the address/mask/level entries NAME stands for."""
        if name == "*":
            specs = [self._wildcard_spec(".*", notes)]
            if self.lookups.ipv6:
                specs.append(self._wildcard_spec(":*", notes))
            specs.append(self._unix_spec("*", notes))
            return [s for s in specs if s is not None], 0
        star = name.find("*")
        if star >= 0 and star != len(name) - 1:
            notes.append(f'Error: Wildcard in host pattern "{name}" is not at the end')
            return [], -errno.EINVAL
        specs: list[_Spec] = []
        if name.startswith(("local:", "unix:")):
            unix = self._unix_spec(name.partition(":")[2], notes)
            specs.append(unix)
            if name[0] == "u":
                return specs, 0
            name = "localhost"
        elif star >= 0:
            spec = self._wildcard_spec(name, notes)
            return ([spec] if spec else []), -errno.EINVAL

        if name.lower() == "localhost":
            my = self._my_host_id(notes)
            if my is None:
                notes.append("Error: Can't get host name/IP address, giving up")
                return [], -errno.EHOSTDOWN
            realname = my[0]
        else:
            realname = name
        addresses = self._resolve(realname)
        if not addresses:
            # PCP prints hstrerror(h_errno), which glibc leaves at NO_RECOVERY for ""
            why = "Unknown server error" if not realname else "Unknown host"
            notes.append(f"Error: __pmGetAddrInfo({realname}), {why}")
            return specs, -errno.EHOSTUNREACH
        seen: set[tuple[Family, int]] = set()
        for text in addresses:
            family, value = _parse_client(text)
            if (family, value) in seen:
                continue
            seen.add((family, value))
            full = 0xFFFFFFFF if family == "inet" else (1 << 128) - 1
            specs.append(_Spec(name, family, value, full, 0))
        return specs, 0

    def _resolve(self, name: str) -> list[str]:
        """NAME's addresses: IP literals directly, anything else through the resolver."""
        for family in ("inet", "ipv6"):
            try:
                _address(family, name)  # type: ignore[arg-type]
            except (OSError, ValueError):
                continue
            return [name]
        out = []
        for text in self.lookups.resolve(name):
            try:
                _parse_client(text)
            except (OSError, ValueError):
                continue
            out.append(text)
        return out

    def _wildcard_spec(self, name: str, notes: list[str]) -> _Spec | None:
        """getWildCardSpec: an IPv4 or IPv6 pattern ending in `*`."""
        try:
            if ":" in name:
                family: Family = "ipv6"
                level, ip, mask = _ipv6_wildcard(name)
            elif "." in name:
                family = "inet"
                level, ip, mask = _inet_wildcard(name)
            else:
                raise _BadPattern(f"Error: Bad IP address wildcard, {name}")
        except _BadPattern as bad:
            notes.append(str(bad))
            return None
        try:
            address, netmask = _address(family, ip), _address(family, mask)
        except (OSError, ValueError):
            notes.append("Error: __pmStringToSockAddr failure")
            return None
        return _Spec(name, family, address & netmask, netmask, level)

    @staticmethod
    def _unix_spec(path: str, notes: list[str]) -> _Spec:
        """getUnixSpec: pmcd's unix socket; any path given is ignored, with a warning."""
        rest = path.lstrip("/")
        if rest.endswith("*"):
            rest = rest[:-1]
        if rest:
            notes.append(f'Warning: Ignoring the path in host pattern "{path}"')
        return _Spec("unix:", "unix", _UNIX_ADDRESS, 0, 1)

    def _my_host_id(self, notes: list[str]) -> tuple[str, tuple[str, ...]] | None:
        """getmyhostid: this host's name and addresses (falling back to localhost's), once."""
        if self._my_host is None:
            try:
                hostname = self.lookups.hostname()
            except OSError:
                notes.append("Error: gethostname failure")
                return None
            addresses = tuple(self.lookups.resolve(hostname)) or tuple(
                self.lookups.resolve("localhost")
            )
            if not addresses:
                notes.append(f"Error: __pmGetAddrInfo failure for both {hostname} and localhost")
                return None
            self._my_host = (hostname, addresses)
        return self._my_host

    # -- user and group statements -----------------------------------------

    def add_user(
        self, name: str, spec_ops: PmcdOp, deny_ops: PmcdOp, maxcons: int
    ) -> tuple[int, list[str]]:
        """__pmAccAddUser: 0 or -errno, and the notes PCP logs on the way."""
        return self._add_account(self.users, "user", name, spec_ops, deny_ops, maxcons)

    def add_group(
        self, name: str, spec_ops: PmcdOp, deny_ops: PmcdOp, maxcons: int
    ) -> tuple[int, list[str]]:
        """__pmAccAddGroup: 0 or -errno, and the notes PCP logs on the way."""
        return self._add_account(self.groups, "group", name, spec_ops, deny_ops, maxcons)

    def _add_account(
        self,
        entries: list[AccountEntry],
        what: str,
        name: str,
        spec_ops: PmcdOp,
        deny_ops: PmcdOp,
        maxcons: int,
    ) -> tuple[int, list[str]]:
        notes: list[str] = []
        if maxcons < 0:
            return -errno.EINVAL, notes
        spec_ops, deny_ops = PmcdOp(spec_ops), PmcdOp(spec_ops & deny_ops)
        if name == "*":
            # always (re)writes the `*` entry: no merging, no clash check
            star = AccountEntry("*", None, (), spec_ops, deny_ops, maxcons)
            entries[:1] = [star]
            return 0, notes
        if what == "user":
            user = self.lookups.user(name)
            account = None if user is None else (user.uid, user.gids)
        else:
            group = self.lookups.group(name)
            account = None if group is None else (group.gid, group.uids)
        if account is None:
            notes.append(f'Error: Failed to lookup {what} "{name}": {pmErrStr(-errno.ENOENT)}')
            return -errno.EINVAL, notes
        if not entries:
            entries.append(_ACCOUNT_WILDCARD)
        ident, members = account
        for i in range(1, len(entries)):
            old = entries[i]
            if old.ident != ident:
                continue
            if _clash(old.spec_ops, old.deny_ops, old.max_connections, spec_ops, deny_ops, maxcons):
                notes.append(f"Error: Permission clash for {what} {name} with earlier statement")
                return -errno.EINVAL, notes
            entries[i] = AccountEntry(
                old.name,
                old.ident,
                old.members,
                PmcdOp(old.spec_ops | spec_ops),
                PmcdOp(old.deny_ops | deny_ops),
                maxcons or old.max_connections,
            )
            return 0, notes
        entries.append(AccountEntry(name, ident, members, spec_ops, deny_ops, maxcons))
        return 0, notes

    # -- result -------------------------------------------------------------

    def control(self) -> AccessControl:
        """The lists as they stand, frozen (with this host's addresses if hosts are listed)."""
        local: tuple[str, ...] = ()
        if self.hosts:
            my = self._my_host_id([])
            local = my[1] if my else ()
        return AccessControl(
            tuple(self.hosts),
            tuple(self.users),
            tuple(self.groups),
            local,
            self.creds_required,
        )


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

    def dump(
        self,
        counts: Gatekeeper | None = None,
        *,
        user_name: Callable[[int], str] | None = None,
        group_name: Callable[[int], str] | None = None,
    ) -> str:
        """The lists as pmcd logs them (__pmAccDumpLists), with COUNTS' current connections."""
        hosts = counts.host_counts if counts else [0] * len(self.hosts)
        users = counts.user_counts if counts else [0] * len(self.users)
        groups = counts.group_counts if counts else [0] * len(self.groups)
        return "\n".join(
            [
                "",
                _dump_hosts(self.hosts, hosts),
                _dump_accounts("user", self.users, users, group_name or _group_name),
                _dump_accounts("group", self.groups, groups, user_name or _user_name),
                "",
            ]
        )


_OPS_HEAD = "".join(f"{bit:02d} " for bit in range(PMCD_OP_ALL.bit_length()))
_OPS_RULE = "== " * PMCD_OP_ALL.bit_length()
_NAME_WIDTH, _ID_WIDTH = 39, 7


def _ops_cells(spec: PmcdOp, deny: PmcdOp) -> str:
    cells = []
    for bit in range(PMCD_OP_ALL.bit_length()):
        op = 1 << bit
        cells.append((" n " if deny & op else " y ") if spec & op else "   ")
    return "".join(cells)


def _host_text(family: Family, value: int) -> str:
    if family == "unix":
        return "/"
    af, size = (socket.AF_INET, 4) if family == "inet" else (socket.AF_INET6, 16)
    return socket.inet_ntop(af, value.to_bytes(size, "big"))


def _dump_hosts(hosts: Sequence[HostEntry], counts: Sequence[int]) -> str:
    if not hosts:
        return "Host access list empty: host-based access control turned off"
    w = _NAME_WIDTH
    lines = [
        "Host access list:",
        f"{_OPS_HEAD}Cur/MaxCons {'host-spec':<{w}} {'host-mask':<{w}} lvl host-name",
        f"{_OPS_RULE}=========== {'=' * w} {'=' * w} === ==============",
    ]
    for entry, count in zip(hosts, counts, strict=True):
        address = _host_text(entry.family, entry.address)
        mask = _host_text(entry.family, entry.mask)
        lines.append(
            f"{_ops_cells(entry.spec_ops, entry.deny_ops)}{count:5d} {entry.max_connections:5d} "
            f"{address:<{w}} {mask:<{w}} {entry.level:3d} {entry.spec}"
        )
    return "\n".join(lines)


def _user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except (KeyError, OverflowError):
        return "unknown"


def _group_name(gid: int) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except (KeyError, OverflowError):
        return "unknown"


def _dump_accounts(
    what: str,
    entries: Sequence[AccountEntry],
    counts: Sequence[int],
    member_name: Callable[[int], str],
) -> str:
    title = what.capitalize()
    if not entries:
        return f"{title} access list empty: {what}-based access control turned off"
    ident = "uid" if what == "user" else "gid"
    members = "group-list" if what == "user" else "user-list"
    name_width = _NAME_WIDTH - _ID_WIDTH - 1
    lines = [
        f"{title} access list:",
        f"{_OPS_HEAD}Cur/MaxCons {ident:>{_ID_WIDTH}} {what + '-name':<{name_width}} {members}",
        f"{_OPS_RULE}=========== {'=' * _ID_WIDTH} {'=' * name_width} {'=' * (_NAME_WIDTH + 19)}",
    ]
    for i in range(len(entries) - 1, -1, -1):
        entry = entries[i]
        number = "*" if i == 0 else str(entry.ident)
        row = (
            f"{_ops_cells(entry.spec_ops, entry.deny_ops)}{counts[i]:5d} "
            f"{entry.max_connections:5d} {number:>{_ID_WIDTH}} {entry.name:<{name_width}}"
        )
        for k, member in enumerate(entry.members):
            row += f"{',' if k else ' '}{member}({member_name(member)})"
        lines.append(row)
    return "\n".join(lines)


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
            return [("unix", _UNIX_ADDRESS)]
        ident = _parse_client(address)
        if ident not in _LOOPBACK:
            return [ident]
        if not self.control.local_addresses:
            return None
        return [_parse_client(a) for a in self.control.local_addresses]

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
