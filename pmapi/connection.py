"""Reaching a pmcd: host specifications, the connection handshake, and blocking I/O.

A host is named as PCP's tools name it: ``HOST``, ``HOST:PORT``, ``unix:PATH`` or
``local:`` (pmcd's unix socket, else localhost), and ``HOST[:PORT]@PROXY[:PORT]`` (or
``$PMPROXY_HOST``) for a pmcd reached through pmproxy.  ``connect`` opens the socket,
reads pmcd's greeting (an ERROR PDU whose datum says the protocol version and
features) and answers with a CVERSION credential, as libpcp's
__pmConnectHandshake does.  The trio flavour lives beside the context that uses it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
from dataclasses import dataclass

from .errors import PM_ERR_IPC, PM_ERR_TIMEOUT, PMError
from .paths import paths
from .pdu.codec import decode, encode
from .pdu.constants import PDU_VERSION2
from .pdu.framer import PDUFramer
from .pdu.records import PDU, Cred, CredsPDU, ErrorPDU, PDUInfo

#: pmcd's well-known port, unless PMCD_PORT says otherwise.
PMCD_PORT = 44321
#: pmproxy's, unless PMPROXY_PORT says otherwise.
PROXY_PORT = 44322
#: what a client of pmproxy says first, and what pmproxy answers (libpcp's negotiate_proxy)
PROXY_CLIENT_HELLO = b"pmproxy-client 1\n"
PROXY_SERVER_HELLO = b"pmproxy-server 1"
#: Seconds to wait for a connection (PMCD_CONNECT_TIMEOUT) and for each reply
#: (PMCD_REQUEST_TIMEOUT), as libpcp's defaults.
CONNECT_TIMEOUT = 5.0
REQUEST_TIMEOUT = 10.0


@dataclass(frozen=True)
class HostSpec:
    """Where a pmcd listens: a TCP host and port, or a unix socket path."""

    text: str  # as the user wrote it; PCP's messages quote this
    host: str | None = None
    port: int = PMCD_PORT
    path: str | None = None
    local: bool = False  # "local:": the unix socket, falling back to localhost
    proxy: tuple[str, int] | None = None  # the pmproxy to reach pmcd through (host, port)

    @property
    def hostname(self) -> str:
        """The name pmcd is known by: the host, or "localhost" for unix sockets."""
        return self.host or "localhost"


def _env_float(name: str, default: float) -> float:
    try:
        return float(os.environ[name])
    except (KeyError, ValueError):
        return default


def default_port() -> int:
    """pmcd's port: the first of PMCD_PORT's comma-separated list (pmapi.paths), else 44321."""
    return paths().pmcd_port


def parse_host(text: str) -> HostSpec:
    """Read a host specification; PMError(-EINVAL) for one that names nothing."""
    if text.startswith(("unix:", "local:")):
        scheme, _, path = text.partition(":")
        path = path or paths().pmcd_socket
        return HostSpec(text, path=path, local=scheme == "local")
    target, at, via = text.partition("@")
    host, port = _host_port(target, text, default_port())
    proxy = None
    if at:
        proxy = _host_port(via, text, _proxy_port())
    elif os.environ.get("PMPROXY_HOST"):
        proxy = (os.environ["PMPROXY_HOST"], _proxy_port())
    return HostSpec(text, host=host, port=port, proxy=proxy)


def _host_port(text: str, whole: str, default: int) -> tuple[str, int]:
    """HOST, HOST:PORT or [IPV6]:PORT, with DEFAULT for no port; WHOLE names the spec."""
    if text.startswith("[") and "]" in text:  # [ipv6]:port
        host, _, rest = text[1:].partition("]")
        port = rest.removeprefix(":")
    elif text.count(":") == 1:
        host, _, port = text.partition(":")
    else:
        host, port = text, ""
    if not host:
        raise PMError(-errno.EINVAL, f"bad host specification {whole!r}")
    if port and not port.isdigit():
        raise PMError(-errno.EINVAL, f"bad port in host specification {whole!r}")
    return host, int(port) if port else default


def _proxy_port() -> int:
    """pmproxy's port: the first of $PMPROXY_PORT's list, else 44322."""
    first = os.environ.get("PMPROXY_PORT", "").split(",")[0].strip()
    return int(first) if first.isdigit() else PROXY_PORT


def proxy_target(spec: HostSpec) -> bytes:
    """The line that names SPEC's pmcd to pmproxy, after the hellos: "HOST PORT\\n"."""
    return f"{spec.host} {spec.port}\n".encode()


def proxy_answer(buffer: bytes) -> tuple[bool, bytes] | None:
    """pmproxy's answer to our hello in BUFFER: (whether it is pmproxy's, the bytes after
    its line), or None while the line is still incomplete."""
    line, nl, rest = buffer.partition(b"\n")
    if not nl:
        return (False, b"") if len(buffer) > 256 else None
    return line.rstrip(b"\r") == PROXY_SERVER_HELLO, rest


def connect_error(spec: HostSpec, code: int) -> PMError:
    """The error a failed connection gives, worded as PCP's tools report it."""
    return PMError(code, f'Cannot connect to PMCD on host "{spec.text}"')


def os_code(exc: OSError | UnicodeError) -> int:
    """The PCP error code for a failed connection: EXC from the socket calls, or the
    UnicodeError of a host name that cannot be a DNS name at all (an empty or overlong
    label), which is a name that does not resolve."""
    if isinstance(exc, (socket.gaierror, UnicodeError)):
        return -errno.EHOSTUNREACH  # as libpcp: a name that does not resolve is unreachable
    if isinstance(exc, TimeoutError):
        return PM_ERR_TIMEOUT
    return -(exc.errno or errno.ECONNREFUSED)


def handshake_reply(spec: HostSpec, greeting: PDU) -> tuple[CredsPDU, int]:
    """Our answer to pmcd's GREETING, and the features pmcd announced in it."""
    if not isinstance(greeting, ErrorPDU):
        raise connect_error(spec, PM_ERR_IPC)
    if greeting.code < 0:
        raise connect_error(spec, greeting.code)
    info = PDUInfo.unpack(greeting.datum) if greeting.datum is not None else None
    if info is None or info.version != PDU_VERSION2:
        raise connect_error(spec, PM_ERR_IPC)
    # no optional features asked for (no TLS, no authentication): flags 0
    return CredsPDU((Cred.version(0),), os.getpid()), info.features


class Connection:
    """A blocking connection to one pmcd: send a PDU, receive the next one."""

    def __init__(self, spec: HostSpec) -> None:
        self.spec = spec
        self.request_timeout = _env_float("PMCD_REQUEST_TIMEOUT", REQUEST_TIMEOUT)
        #: the bytes received and not yet taken as PDUs (an async reader feeds it too)
        self.framer = PDUFramer()
        self.sock = self._open(spec)
        self.features = 0  # the PDU_FLAG_* bits pmcd announced
        self.sock.settimeout(self.request_timeout)  # each reply must come within it
        try:
            self._handshake()
        except BaseException:
            self.close()
            raise

    @staticmethod
    def _open(spec: HostSpec) -> socket.socket:
        timeout = _env_float("PMCD_CONNECT_TIMEOUT", CONNECT_TIMEOUT)
        try:
            if spec.path is not None:
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                sock.settimeout(timeout)
                try:
                    sock.connect(spec.path)
                except OSError:
                    sock.close()
                    if not spec.local:
                        raise
                    # as libpcp: local: falls back to the loopback address
                    return socket.create_connection(("localhost", default_port()), timeout)
                return sock
            where = spec.proxy or (spec.host, spec.port)
            sock = socket.create_connection(where, timeout)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except (OSError, UnicodeError) as exc:
            raise connect_error(spec, os_code(exc)) from None
        return sock

    def _through_proxy(self) -> None:
        """Ask pmproxy for our pmcd, as libpcp's negotiate_proxy does: hello, its answer,
        then the pmcd's host and port; what follows its answer is pmcd's."""
        spec, sock = self.spec, self.sock
        try:
            sock.sendall(PROXY_CLIENT_HELLO)
            buffer = b""
            while (answer := proxy_answer(buffer)) is None:
                data = sock.recv(256)
                if not data:
                    raise connect_error(spec, PM_ERR_IPC)
                buffer += data
            ok, rest = answer
            if not ok:
                raise connect_error(spec, PM_ERR_IPC)
            sock.sendall(proxy_target(spec))
        except OSError as exc:
            raise connect_error(spec, os_code(exc)) from None
        self.framer.feed(rest)

    def _handshake(self) -> None:
        if self.spec.proxy is not None and self.spec.path is None:
            self._through_proxy()
        try:
            greeting = self.receive()
        except PMError as exc:
            raise connect_error(self.spec, exc.code) from None
        reply, self.features = handshake_reply(self.spec, greeting)
        self.send(reply)

    def send(self, pdu: PDU) -> None:
        try:
            self.sock.sendall(encode(pdu))
        except OSError as exc:
            raise PMError(os_code(exc)) from None

    def receive(self) -> PDU:
        """The next PDU from pmcd; PMError for a timeout, a closed channel or bad bytes."""
        framer = self.framer
        while True:
            frame = framer.next_frame()
            if frame is not None:
                return decode(frame)
            try:
                data = self.sock.recv(1 << 16)
            except OSError as exc:
                raise PMError(os_code(exc)) from None
            if not data:
                raise PMError(PM_ERR_IPC, "pmcd closed the connection")
            framer.feed(data)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()
