"""pmcd's access lists built from `[access]` statements, as libpcp's access.c builds them.

`AccessBuilder` takes statements one name at a time the way `__pmAccAddHost`,
`__pmAccAddUser` and `__pmAccAddGroup` do: host names are resolved, wildcards become
address/mask pairs with a wildcard level, and statements naming the same host (same
address and level) or account are merged, or refused with PCP's "Permission clash"
note when they disagree.  `AccessBuilder.control` freezes the result as an
`AccessControl`.  Host entries are kept in order of wildcard level (0 is an exact
address, 4 is `.*`, 8 is `:*`, 1 is pmcd's unix socket).

Not kept from PCP 6.0.3: a `*` user or group statement after named ones makes PCP
append an uninitialised entry (heap garbage, visible in pmcd's log) to the list; we
only rewrite the `*` entry.
"""

from __future__ import annotations

import errno
from dataclasses import dataclass, field

from purepcp.pmapi.errors import pmErrStr

from .access import PMCD_OP_ALL, AccessControl, AccountEntry, HostEntry, PmcdOp
from .host_patterns import (
    UNIX_ADDRESS,
    BadPattern,
    Family,
    address_value,
    client_address,
    inet_wildcard,
    ipv6_wildcard,
)
from .lookups import Lookups

__all__ = ["AccessBuilder"]

# the `*` entry a user or group list starts with: denies everything until `allow ... *`
_ACCOUNT_WILDCARD = AccountEntry("*", None, (), PMCD_OP_ALL, PMCD_OP_ALL, 0)


def _clash(old_spec: int, old_deny: int, old_max: int, spec: int, deny: int, maxcons: int) -> bool:
    """PCP's test for a statement contradicting an earlier one about the same target."""
    if old_max and maxcons and old_max != maxcons:
        return True
    return bool(old_spec & spec) and bool((old_spec & old_deny) ^ (spec & deny))


@dataclass
class _Spec:
    """One address/mask/level a host name or pattern stands for (PCP's hostspec)."""

    name: str
    family: Family
    address: int
    mask: int
    level: int


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
            family, value = client_address(text)
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
                address_value(family, name)  # type: ignore[arg-type]
            except (OSError, ValueError):
                continue
            return [name]
        out = []
        for text in self.lookups.resolve(name):
            try:
                client_address(text)
            except (OSError, ValueError):
                continue
            out.append(text)
        return out

    def _wildcard_spec(self, name: str, notes: list[str]) -> _Spec | None:
        """getWildCardSpec: an IPv4 or IPv6 pattern ending in `*`."""
        try:
            if ":" in name:
                family: Family = "ipv6"
                level, ip, mask = ipv6_wildcard(name)
            elif "." in name:
                family = "inet"
                level, ip, mask = inet_wildcard(name)
            else:
                raise BadPattern(f"Error: Bad IP address wildcard, {name}")
        except BadPattern as bad:
            notes.append(str(bad))
            return None
        try:
            address, netmask = address_value(family, ip), address_value(family, mask)
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
        return _Spec("unix:", "unix", UNIX_ADDRESS, 0, 1)

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
