"""pmcd's access lists as it logs them at start-up and on request (__pmAccDumpLists).

`dump_lists` gives PCP's text byte for byte: the host list (address, mask, wildcard
level, spec), then the user and group lists, each row with its operations (`y`
allowed, `n` denied, blank not spoken of) and current/maximum connections.
"""

from __future__ import annotations

import grp
import pwd
import socket
from collections.abc import Callable, Sequence

from .access import PMCD_OP_ALL, AccessControl, AccountEntry, Gatekeeper, HostEntry, PmcdOp
from .host_patterns import Family

__all__ = ["dump_lists"]


def dump_lists(
    control: AccessControl,
    counts: Gatekeeper | None = None,
    *,
    user_name: Callable[[int], str] | None = None,
    group_name: Callable[[int], str] | None = None,
) -> str:
    """CONTROL's lists as pmcd logs them, with COUNTS' current connections."""
    hosts = counts.host_counts if counts else [0] * len(control.hosts)
    users = counts.user_counts if counts else [0] * len(control.users)
    groups = counts.group_counts if counts else [0] * len(control.groups)
    return "\n".join(
        [
            "",
            _dump_hosts(control.hosts, hosts),
            _dump_accounts("user", control.users, users, group_name or _group_name),
            _dump_accounts("group", control.groups, groups, user_name or _user_name),
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
