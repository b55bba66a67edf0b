"""pmlc's connection to a pmlogger (libpcp's __pmConnectLogger and __pmLogFindPort):
finding the logger's port or socket, the version handshake, one PDU each way.

Errors are PMErrors with PCP's codes; the caller words them (still_connected).
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
from dataclasses import dataclass
from pathlib import Path

from purepcp.pmapi.errors import PM_ERR_IPC, PM_ERR_TIMEOUT, PMError
from purepcp.pmapi.pdu import logcontrol as lc
from purepcp.pmapi.process import process_exists

PRIMARY_PID = 0  # PM_LOG_PRIMARY_PID
PRIMARY_PORT = 0  # PM_LOG_PRIMARY_PORT
ALL_PIDS = -1  # PM_LOG_ALL_PIDS
NO_PID = -2  # PM_LOG_NO_PID
NO_PORT = -2  # PM_LOG_NO_PORT

PDU_ERROR, PDU_RESULT, PDU_CREDS = 0x7000, 0x7001, 0x700C


@dataclass(frozen=True)
class LogPort:
    """One pmlogger's entry in the port map directory (__pmLogPort)."""

    pid: int
    port: int
    pmcd_host: str | None
    archive: str | None
    name: str


def _tmp_dir() -> Path | None:
    from purepcp.pmapi.paths import LayoutError, paths

    try:
        return paths().tmp_dir
    except LayoutError:
        return None


def _run_dir() -> Path:
    from purepcp.pmapi.paths import LayoutError, paths

    try:
        return paths().run_dir
    except LayoutError:
        return Path("/run/pcp")


def is_localhost(host: str) -> bool:
    """__pmIsLocalhost: this machine's name, localhost, or a local:/unix: spec."""
    if host.lower() == "localhost" or host.startswith(("local:", "unix:")):
        return True
    try:
        theirs = {a[4][0] for a in socket.getaddrinfo(host, None)}
        mine = {a[4][0] for a in socket.getaddrinfo(socket.gethostname(), None)}
    except OSError:
        return False
    return bool(theirs & mine) or any(a.startswith("127.") or a == "::1" for a in theirs)


def local_ports(pid: int) -> list[LogPort]:
    """__pmLogFindLocalPorts: the port map files for PID (the primary, all, or one)."""
    tmp = _tmp_dir()
    if tmp is None:
        return []
    folder = tmp / "pmlogger"
    if pid not in (PRIMARY_PID, ALL_PIDS) and not process_exists(pid):
        return []
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    if pid == PRIMARY_PID:
        names = [n for n in names if n == "primary"]
    elif pid == ALL_PIDS:
        names = [n for n in names if _is_portfile(n)]
    else:
        names = [n for n in names if n == str(pid)]
    found = []
    for name in names:
        try:
            lines = (folder / name).read_text(errors="replace").split("\n")
        except OSError:
            continue
        first = lines[0] if lines else ""
        if len(lines) < 2 or not first.strip().lstrip("+-").isdigit():
            continue
        owner = PRIMARY_PORT if name == "primary" else int(name) if name.isdigit() else None
        if owner is None:
            continue
        host = lines[1] if len(lines) > 2 else None
        archive = lines[2] if len(lines) > 3 else None
        found.append(LogPort(owner, int(first), host, archive, name))
    return found


def _is_portfile(name: str) -> bool:
    if name.isdigit() and int(name) > 1:
        return process_exists(int(name))
    return name == "primary"


def remote_ports(host: str, pid: int) -> list[LogPort]:
    """__pmLogFindPort for another host: pmcd's pmcd.pmlogger metrics say."""
    from purepcp.pmapi.context import Context

    ctx = Context.host(host)
    try:
        names = ["pmcd.pmlogger.port", "pmcd.pmlogger.host", "pmcd.pmlogger.archive"]
        pmids = ctx.lookup_names(names)
        fetched = ctx.fetch(pmids)
        ports = fetched.values(pmids[0])
        hosts = fetched.values(pmids[1])
        archives = fetched.values(pmids[2])
    finally:
        ctx.close()
    found = []
    for inst, port in sorted(ports.items()):
        if pid not in (ALL_PIDS, inst):
            continue
        found.append(LogPort(inst, int(port), hosts.get(inst), archives.get(inst), str(inst)))
    return found


def find_ports(host: str, pid: int) -> list[LogPort]:
    """__pmLogFindPort: the loggers on HOST (PID: the primary, all, or one)."""
    if is_localhost(host):
        return local_ports(pid)
    return remote_ports(host, pid)


class LoggerLink:
    """A connection to one pmlogger: the LOG PDU version agreed, then PDUs."""

    def __init__(self, sock: socket.socket, version: int, pid: int) -> None:
        self.sock = sock
        self.version = version
        self.pid = pid
        self.buf = b""
        timeout = os.environ.get("PMLOGGER_REQUEST_TIMEOUT")
        self.timeout: float | None = None
        if timeout is not None and timeout.isdigit() and int(timeout) > 0:
            self.timeout = int(timeout)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()

    def send(self, data: bytes) -> None:
        try:
            self.sock.sendall(data)
        except BrokenPipeError:
            raise PMError(-errno.EPIPE) from None
        except OSError as exc:
            raise PMError(-(exc.errno or errno.EIO)) from None

    def receive(self) -> bytes | None:
        """The next PDU's bytes; None at the end of the connection."""
        self.sock.settimeout(self.timeout)
        try:
            while len(self.buf) < 4 or len(self.buf) < int.from_bytes(self.buf[:4], "big"):
                chunk = self.sock.recv(65536)
                if not chunk:
                    return None
                self.buf += chunk
        except TimeoutError:
            raise PMError(PM_ERR_TIMEOUT) from None
        except OSError:
            raise PMError(PM_ERR_IPC) from None
        length = int.from_bytes(self.buf[:4], "big")
        if length < 12:
            raise PMError(PM_ERR_IPC)
        frame, self.buf = self.buf[:length], self.buf[length:]
        return frame


def error_code(frame: bytes) -> int:
    """An ERROR PDU's code."""
    return int.from_bytes(frame[12:16], "big", signed=True)


def _connect_unix(path: str) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect("/" + path.lstrip("/"))
    except OSError as exc:
        sock.close()
        raise PMError(-(exc.errno or errno.ECONNREFUSED)) from None
    return sock


def _connect_inet(host: str, port: int) -> socket.socket:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError:
        raise PMError(-errno.EHOSTUNREACH) from None
    last = -errno.ECONNREFUSED
    for family, kind, proto, _, addr in infos:
        if family not in (socket.AF_INET, socket.AF_INET6):
            continue
        sock = socket.socket(family, kind, proto)
        try:
            sock.connect(addr)
            return sock
        except OSError as exc:
            last = -(exc.errno or errno.ECONNREFUSED)
            sock.close()
    raise PMError(last)


def connect_logger(spec: str, pid: int, port: int) -> tuple[LoggerLink, int, int]:
    """__pmConnectLogger: a link to the logger SPEC, PID and PORT name; with the PID
    and port found.  PMError if there is none."""
    if pid == NO_PID and port == PRIMARY_PORT:
        pid, port = PRIMARY_PID, NO_PORT
    original = pid
    while True:
        pid = original
        was_local = spec.startswith("local:")
        code = 0
        sock = None
        try:
            if was_local or spec.startswith("unix:"):
                path = spec.split(":", 1)[1]
                if path:
                    sock = _connect_unix(path)
                elif pid != NO_PID:
                    name = "primary" if pid == PRIMARY_PID else str(pid)
                    try:
                        sock = _connect_unix(str(_run_dir() / f"pmlogger.{name}.socket"))
                    except PMError:
                        home = Path.home() / ".pcp" / "run" / f"pmlogger.{pid}.socket"
                        sock = _connect_unix(str(home))
                else:
                    raise PMError(-errno.ECONNREFUSED)
            else:
                if pid == ALL_PIDS:
                    raise PMError(-errno.ECONNREFUSED)
                if port == NO_PORT:
                    ports = find_ports(spec, pid)
                    if len(ports) != 1:
                        raise PMError(-errno.ECONNREFUSED)
                    port = ports[0].port
                sock = _connect_inet(spec, port)
            link, pid = _handshake(sock, pid)
            return link, pid, port
        except PMError as exc:
            code = exc.code
            if sock is not None:
                sock.close()
        if was_local and (port != NO_PORT or pid != NO_PID):
            spec = "localhost"
            continue
        raise PMError(code)


def _handshake(sock: socket.socket, pid: int) -> tuple[LoggerLink, int]:
    """The logger's ACK (its version and PID), our choice of version back."""
    from purepcp.pmapi.pdu.codec import encode
    from purepcp.pmapi.pdu.records import Cred, CredsPDU

    link = LoggerLink(sock, lc.LOG_PDU_VERSION, pid)
    frame = link.receive()
    if frame is None:
        raise PMError(PM_ERR_IPC)
    kind = lc.pdu_type(frame)
    if kind != PDU_ERROR:
        raise PMError(PM_ERR_IPC)
    code = error_code(frame)
    sender = int.from_bytes(frame[8:12], "big", signed=True)
    if pid not in (NO_PID, PRIMARY_PID) and sender != pid:
        raise PMError(-errno.ECONNREFUSED)
    pid = sender
    if code < 0:
        raise PMError(code)
    link.version = min(code, lc.LOG_PDU_VERSION)
    link.pid = pid
    creds = CredsPDU((Cred(1, link.version, 0, 0),), os.getpid())
    link.send(encode(creds))
    return link, pid
