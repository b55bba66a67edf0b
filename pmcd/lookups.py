"""What pmcd asks the system about names: addresses, this host's name, accounts, services.

Access control and agent lines reach the system only through `Lookups`, so tests
replace any of its functions and need no DNS, passwd or services file.
`Lookups.resolve` returns every address getaddrinfo(3) gives, duplicates included:
PCP drops duplicates when resolving a host statement but not when it maps a loopback
client to the host's own addresses, where each duplicate counts against a
connection limit.
"""

from __future__ import annotations

import grp
import pwd
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = [
    "GroupAccount",
    "Lookups",
    "UserAccount",
    "system_group",
    "system_resolve",
    "system_service_port",
    "system_user",
]


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
