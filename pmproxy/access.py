"""Who may write through pmproxy: stores (/pmapi/store) by client address, as pmcd's
[access] section does for its own clients.  PCP's pmproxy stores for anyone who can
reach it, and pmcd then sees only pmproxy's loopback connection; ours stores only for
clients on this host unless [pmwebapi] allow.store names more (docs/pmproxy.md).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

__all__ = ["LOOPBACK", "WriteAccess"]

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

#: this host's own addresses: IPv4's loopback network, IPv6's, and IPv4's as IPv6 maps it
LOOPBACK: tuple[Network, ...] = (
    ipaddress.ip_network("127.0.0.0/8"),
    ipaddress.ip_network("::1/128"),
    ipaddress.ip_network("::ffff:127.0.0.0/104"),
)


@dataclass(frozen=True)
class WriteAccess:
    """The client addresses allowed to store; a unix-socket client (address "") always is,
    as it is on this host."""

    networks: tuple[Network, ...] = LOOPBACK
    anyone: bool = False

    @classmethod
    def from_text(cls, text: str) -> WriteAccess:
        """allow.store's value: addresses or networks (10.0.0.0/8, fe80::/10), "localhost"
        for the loopback ones, or "*" for anyone, separated by commas or spaces.
        ValueError naming the word it cannot read."""
        networks: list[Network] = []
        anyone = False
        for word in text.replace(",", " ").split():
            if word == "*":
                anyone = True
            elif word == "localhost":
                networks.extend(LOOPBACK)
            else:
                try:
                    networks.append(ipaddress.ip_network(word, strict=False))
                except ValueError:
                    raise ValueError(f"{word!r} is not an address or network") from None
        return cls(tuple(networks), anyone)

    def allows(self, address: str) -> bool:
        if self.anyone or not address:
            return True
        try:
            ip = ipaddress.ip_address(address.split("%", 1)[0])
        except ValueError:
            return False
        return any(ip in network for network in self.networks)
