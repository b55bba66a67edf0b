"""Network interface state by ioctl, as pmdalinux reads it: flags, MTU, link speed and duplex.

pmdalinux ends up asking the kernel through ioctls on a datagram socket for
every interface (its sysfs pass always hands over to them): SIOCGIFFLAGS,
SIOCGIFMTU, and ETHTOOL_GSET through SIOCETHTOOL, with the wireless SIOCGIWRATE
when ethtool has nothing.  psutil.net_if_stats() does the same ioctls but turns
an unknown speed into 0, where PCP keeps the kernel's 0xffffffff, and it rereads
/proc/net/dev; these few calls keep PCP's numbers and cost a microsecond or two.
"""

from __future__ import annotations

import fcntl
import socket
import struct
from array import array

SIOCGIFFLAGS = 0x8913
SIOCGIFMTU = 0x8921
SIOCETHTOOL = 0x8946
SIOCGIWRATE = 0x8B21
ETHTOOL_GSET = 1
IFF_UP = 0x1
IFF_RUNNING = 0x40
IFNAMSIZ = 16

#: struct ifreq (40 bytes on 64-bit Linux): the name, then a union (a pointer, an int, ...).
_IFREQ_INT = struct.Struct("16si20x")
_IFREQ_SHORT = struct.Struct("16sh22x")
_IFREQ_PTR = struct.Struct("16sP16x")
_ETHTOOL_CMD_SIZE = 44  # struct ethtool_cmd
_U16 = struct.Struct("=H")  # ethtool_cmd has speed at offset 12, speed_hi at offset 28
_ETHTOOL_DUPLEX = 14
_NO_ECMD = bytes(_ETHTOOL_CMD_SIZE)
_GSET_REQUEST = array("B", struct.pack("=I", ETHTOOL_GSET) + _NO_ECMD[4:])


def _name(interface: str) -> bytes:
    """The interface name as the kernel takes it: at most IFNAMSIZ - 1 bytes."""
    return interface.encode()[: IFNAMSIZ - 1]


class NetIoctl:
    """The interface ioctls pmdalinux uses, on one datagram socket opened when first needed."""

    def __init__(self) -> None:
        """No socket yet."""
        self._sock: socket.socket | None = None
        self._ecmd = array("B", _NO_ECMD)  # the kernel writes its ethtool_cmd reply here

    def fileno(self) -> int:
        """The socket's descriptor, opening the socket the first time."""
        if self._sock is None:
            self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        return self._sock.fileno()

    def _request(self, request: int, layout: struct.Struct, interface: str) -> int | None:
        """The number the kernel leaves in an ifreq for REQUEST, or None if the ioctl fails."""
        try:
            reply = fcntl.ioctl(self.fileno(), request, layout.pack(_name(interface), 0))
        except OSError:
            return None
        return layout.unpack(reply)[1]

    def flags(self, interface: str) -> int | None:
        """The interface flags (IFF_UP, IFF_RUNNING, ...), or None if the ioctl fails."""
        value = self._request(SIOCGIFFLAGS, _IFREQ_SHORT, interface)
        return None if value is None else value & 0xFFFF

    def mtu(self, interface: str) -> int | None:
        """The MTU in bytes, or None if the ioctl fails."""
        return self._request(SIOCGIFMTU, _IFREQ_INT, interface)

    def link(self, interface: str) -> tuple[int, int] | None:
        """(speed in Mbit/s, duplex as PCP numbers it) or None when neither ioctl answers.

        From ethtool the speed is the 32-bit value the kernel reports (0xffffffff
        when unknown) and the duplex is ethtool's plus one, kept to 2 bits as
        pmdalinux stores it (1 half, 2 full, 0 unknown).  From the wireless
        bit rate, the speed is rounded to Mbit/s and the duplex is 1.
        """
        ecmd = self._ecmd
        ecmd[:] = _GSET_REQUEST
        request = _IFREQ_PTR.pack(_name(interface), ecmd.buffer_info()[0])
        try:
            fcntl.ioctl(self.fileno(), SIOCETHTOOL, request)
        except OSError:
            return self._wireless(interface)
        raw = ecmd.tobytes()
        speed_hi, speed = _U16.unpack_from(raw, 28)[0], _U16.unpack_from(raw, 12)[0]
        return speed_hi << 16 | speed, (raw[_ETHTOOL_DUPLEX] + 1) & 3

    def _wireless(self, interface: str) -> tuple[int, int] | None:
        """(bit rate rounded to Mbit/s, 1) from SIOCGIWRATE, or None for a wired interface."""
        rate = self._request(SIOCGIWRATE, _IFREQ_INT, interface)
        if rate is None:
            return None
        return int((rate + 500000) / 1000000) & 0xFFFFFFFF, 1

    def close(self) -> None:
        """Close the socket."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None
