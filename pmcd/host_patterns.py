"""Host patterns and client addresses, as libpcp's access control reads them.

`inet_wildcard` and `ipv6_wildcard` are parseInetWildCard and parseIPv6WildCard: a
pattern ending in `*` becomes the text of an address and a mask with a wildcard
level (4 for `.*`, 8 for `:*`, fewer for each component given), or `BadPattern` with
the note PCP logs.  `address_value` and `client_address` give addresses as the
integers the access lists compare.
"""

from __future__ import annotations

import socket
from typing import Literal

from purepcp.pmapi.cnumbers import int32, strtol

__all__ = [
    "LOOPBACK",
    "UNIX_ADDRESS",
    "BadPattern",
    "Family",
    "address_value",
    "client_address",
    "inet_wildcard",
    "ipv6_wildcard",
]

Family = Literal["inet", "ipv6", "unix"]

UNIX_ADDRESS = 0  # every unix-socket client matches every unix entry, as in PCP
#: the loopback addresses, which a client stands for this host's own addresses with
LOOPBACK = frozenset({("inet", 0x7F000001), ("ipv6", 1)})


class BadPattern(Exception):
    """A host pattern PCP refuses: the note it logs."""


def _ch(text: str, i: int) -> str:
    """TEXT[I] as C reads a string: its NUL past the end."""
    return text[i] if i < len(text) else "\0"


def inet_wildcard(name: str) -> tuple[int, str, str]:
    """parseInetWildCard: level, address and mask text for an IPv4 pattern ending in `*`."""
    level, ip, mask, p = 4, [], [], 0
    if _ch(name, p) == ".":
        p += 1
        if _ch(name, p) != "*":
            raise BadPattern(f"Error: Bad IP address wildcard, {name}")
    while _ch(name, p) not in ("\0", "*"):
        scan = strtol(name, 10, p)  # (int)strtol(p, &p, 10)
        n, p = int32(int(scan.value)), scan.end
        if _ch(name, p) not in (".", "*") or n < 0 or n > 255:
            raise BadPattern(f"Error: Bad IP address wildcard, {name}")
        ip.append(str(n))
        mask.append("255")
        level -= 1
        if level < 1:
            raise BadPattern(f'Error: Too many dots in host pattern "{name}"')
        p += 1
    ip += ["0"] * level
    mask += ["0"] * level
    return level, ".".join(ip), ".".join(mask)


def ipv6_wildcard(name: str) -> tuple[int, str, str]:
    """parseIPv6WildCard: level, address and mask text for an IPv6 pattern ending in `*`."""
    level, empty, ip, mask, p = 8, False, "", "", 0
    if _ch(name, p) == ":":
        p += 1
        if _ch(name, p) != "*":
            if _ch(name, p) != ":":
                raise BadPattern(f"Error: Bad IPv6 address wildcard, {name}")
            ip = mask = ":"
    while _ch(name, p) not in ("\0", "*"):
        if _ch(name, p) == ":":
            if empty:
                raise BadPattern(f'Error: Too many empty regions in host pattern "{name}"')
            empty = True
            ip += ":"
            mask += ":"
        else:
            scan = strtol(name, 16, p)  # (int)strtol(p, &p, 16)
            n, p = int32(int(scan.value)), scan.end
            if _ch(name, p) not in (":", "*") or n < 0 or n > 0xFFFF:
                raise BadPattern(f"Error: Bad IPv6 address wildcard, {name}")
            if ip:
                ip += ":"
                mask += ":"
            ip += f"{n:x}"
            mask += "ffff"
        level -= 1
        if level < 1:
            raise BadPattern(f'Error: Too many colons in host pattern "{name}"')
        p += 1
    if level == 8 or (level == 7 and empty):
        return 8, "::", "::"
    tail = ":0" if empty else "::"
    return level, ip + tail, mask + tail


def address_value(family: Family, text: str) -> int:
    """inet_pton as an integer; raises OSError as __pmStringToSockAddr fails."""
    af = socket.AF_INET if family == "inet" else socket.AF_INET6
    return int.from_bytes(socket.inet_pton(af, text.partition("%")[0]), "big")


def client_address(address: str) -> tuple[Family, int]:
    """A client's address as (family, integer)."""
    text = address.partition("%")[0]
    if ":" in text:
        return "ipv6", address_value("ipv6", text)
    return "inet", address_value("inet", text)
