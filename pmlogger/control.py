"""pmlogger's control port, where pmlc (PCP's or ours) connects.

At start-up (once the first archive exists) the logger listens on a TCP port, the first
free one from $PMLOGGER_PORT (4330) up, on IPv4 and IPv6, and on a unix socket,
$PCP_RUN_DIR/pmlogger.<pid>.socket; it writes the port map file
$PCP_TMP_DIR/pmlogger/<pid> (the port, pmcd's host, the archive's full name, the -m or
-x note) and, with -P, the links $PCP_TMP_DIR/pmlogger/primary and
$PCP_RUN_DIR/pmlogger.primary.socket.  All of them go when the logger ends.

One client at a time: a second is told EADDRINUSE; a client the [access] section does
not let in is told PM_ERR_PERMISSION.  The logging loop calls `wait` instead of sleeping,
so a request is answered as soon as it comes.  What a request does is the `Service`'s
business (main.py's adapter over the logger): this module is sockets and PDUs.
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TextIO

from purepcp.pmapi.errors import PM_ERR_IPC, PM_ERR_PERMISSION, PMError
from purepcp.pmapi.pdu import logcontrol as lc
from purepcp.pmapi.process import process_exists

PORT_BASE = 4330
CFD_INET, CFD_IPV6, CFD_UNIX = 0, 1, 2
#: the LOG_REQUEST types QA uses to inject delays (pmlc's "qa N": 100 + N)
QA_OFF, QA_SLEEPY = 100, 101
#: the ops of the [access] section (PM_OP_LOG_*)
OP_ADV, OP_MAND, OP_ENQ = 0x1, 0x2, 0x4
OP_ALL = 0x7


class Service(Protocol):
    """What the control port asks of the logger."""

    def status(self) -> lc.LogStatus: ...

    def new_volume(self) -> int: ...

    def control(self, request: lc.LogControl, client: str) -> bytes: ...


@dataclass(frozen=True)
class Registration:
    """What the port map file says about this logger."""

    pmcd_host: str
    archive: str
    note: str | None
    primary: bool


class ControlPort:
    """The listening sockets, the port map files, and the one client."""

    def __init__(
        self,
        service: Service | None,
        log: TextIO,
        access: AccessList | None = None,
        ipc_version: int = lc.LOG_PDU_VERSION,
    ) -> None:
        self.service = service
        self.ipc_version = ipc_version
        self.version = ipc_version
        self.log = log
        self.access = access or AccessList(())
        self.listeners: list[socket.socket] = []
        self.port = -1
        self.client: socket.socket | None = None
        self.client_host = ""
        self.denied = 0  # the [access] ops this client may not use
        self.buf = bytearray()
        self.qa_case = 0
        self.files: list[Path] = []  # to remove at the end (links checked first)
        self.primary_link: Path | None = None
        self.registration: Registration | None = None  # (what the port map file says)

    # -- start and end ------------------------------------------------------------------

    def open(self, reg: Registration, tmp_dir: Path, run_dir: Path) -> None:
        """Listen, and tell the world where: the port map file, -P's links."""
        pid = os.getpid()
        self._listen_inet()
        self._listen_unix(run_dir / f"pmlogger.{pid}.socket")
        if not self.listeners:
            return
        mapdir = tmp_dir / "pmlogger"
        try:
            mapdir.mkdir(mode=0o775, parents=True, exist_ok=True)
        except OSError as exc:
            self.log.write(f"pmlogger: error creating port file dir {mapdir}: {exc.strerror}\n")
            raise SystemExit(1) from None
        mapfile = mapdir / str(pid)
        self.registration = reg
        self._write_map(mapfile)
        if reg.primary:
            self._primary_links(mapdir / "primary", mapfile, run_dir)

    def _write_map(self, mapfile: Path) -> None:
        """The port map file: port, pmcd's host, the archive's full name, the note."""
        reg = self.registration
        assert reg is not None
        archive = reg.archive
        if not os.path.isabs(archive):
            archive = os.path.join(os.getcwd(), archive)
        lines = [str(self.port), reg.pmcd_host, archive] + ([reg.note] if reg.note else [])
        with contextlib.suppress(OSError):
            mapfile.unlink()
        try:
            fd = os.open(mapfile, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            with os.fdopen(fd, "w") as f:
                f.write("".join(f"{line}\n" for line in lines))
            if mapfile not in self.files:
                self.files.append(mapfile)
        except OSError:
            pass  # (not fatal, as in PCP)

    def archive_changed(self, archive: str) -> None:
        """A new archive (SIGUSR2): the port map file names it, as PCP's re-exec'd one's."""
        reg = self.registration
        if reg is None or reg.archive == archive:
            return
        self.registration = Registration(reg.pmcd_host, archive, reg.note, reg.primary)
        for path in list(self.files):
            if path.name == str(os.getpid()):
                self._write_map(path)

    def _listen_inet(self) -> None:
        base = PORT_BASE
        env = os.environ.get("PMLOGGER_PORT")
        if env is not None:
            try:
                base = int(env, 0)
                if base < 0:
                    raise ValueError
            except ValueError:
                self.log.write(f"GetPorts: ignored bad PMLOGGER_PORT = '{env}'\n")
                base = PORT_BASE
        local = os.environ.get("PMLOGGER_LOCAL", "0")
        loopback = local.strip().lstrip("+-").isdigit() and int(local) != 0
        for family, anyaddr, lo in (
            (socket.AF_INET, "0.0.0.0", "127.0.0.1"),
            (socket.AF_INET6, "::", "::1"),
        ):
            try:
                sock = socket.socket(family, socket.SOCK_STREAM)
            except OSError:
                continue
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                with contextlib.suppress(OSError):
                    sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            port = self.port if self.port > 0 else base
            bound = False
            while port < 65536:
                try:
                    sock.bind((lo if loopback else anyaddr, port))
                    bound = True
                    break
                except OSError as exc:
                    if exc.errno != errno.EADDRINUSE or self.port > 0:
                        break
                    port += 1
            if not bound:
                sock.close()
                continue
            self.port = port
            self._add(sock)

    def _listen_unix(self, path: Path) -> None:
        try:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        except OSError:
            return
        try:
            with contextlib.suppress(OSError):
                path.unlink()
            path.parent.mkdir(parents=True, exist_ok=True)
            sock.bind(str(path))
            os.chmod(path, 0o666)
        except OSError as exc:
            self.log.write(f"__pmBind({path}): {exc.strerror}\n")
            sock.close()
            return
        self.files.append(path)
        self._add(sock)

    def _add(self, sock: socket.socket) -> None:
        sock.set_inheritable(False)
        sock.listen(int(os.environ.get("PMLOGGER_MAXPENDING", "5") or 5))
        sock.setblocking(False)
        self.listeners.append(sock)

    def _primary_links(self, link: Path, mapfile: Path, run_dir: Path) -> None:
        """-P: the link 'primary' to our port map file (a stale one, whose logger is
        gone, removed first; a live one ends this logger) and the primary socket link."""
        if link.is_symlink():
            pid = _pid_of_link(link)
            if pid is not None and not process_exists(pid):
                with contextlib.suppress(OSError):
                    link.unlink()
                with contextlib.suppress(OSError):
                    (link.parent / str(pid)).unlink()
        elif link.exists():
            with contextlib.suppress(OSError):
                link.unlink()
        if link.exists() or link.is_symlink():
            pid = _pid_of_link(link)
            who = "<unknown>" if pid is None else str(pid)
            self.log.write(
                f"pmlogger: ERROR: there is already a primary pmlogger running, pid {who} "
                f"linkfile={link}\n"
            )
            self.close()
            raise SystemExit(1)
        try:
            os.symlink(mapfile, link)
            self.primary_link = link
        except OSError as exc:
            self.log.write(
                f"pmlogger: error creating primary logger symbolic link {link}: {exc.strerror}\n"
            )
        sock_link = run_dir / "pmlogger.primary.socket"
        if sock_link.is_symlink():
            pid = _pid_of_link(sock_link, first_digits=True)
            if pid is not None and not process_exists(pid):
                with contextlib.suppress(OSError):
                    sock_link.unlink()
        target = run_dir / f"pmlogger.{os.getpid()}.socket"
        if target in self.files and not (sock_link.exists() or sock_link.is_symlink()):
            try:
                os.symlink(target, sock_link)
                self.files.append(sock_link)
            except OSError as exc:
                self.log.write(
                    "pmlogger: error creating primary logger socket symbolic link "
                    f"{sock_link}: {exc.strerror}\n"
                )

    def close(self) -> None:
        """Stop listening; the files go (the primary link only while it is still ours)."""
        if self.client is not None:
            self._drop()
        for sock in self.listeners:
            sock.close()
        self.listeners = []
        if self.primary_link is not None:
            pid = _pid_of_link(self.primary_link)
            if pid is None or pid == os.getpid():
                with contextlib.suppress(OSError):
                    self.primary_link.unlink()
            self.primary_link = None
        for path in self.files:
            with contextlib.suppress(OSError):
                path.unlink()
        self.files = []

    # -- serving --------------------------------------------------------------------------

    def wait(self, seconds: float) -> None:
        """Serve requests for up to SECONDS (the logging loop's sleep)."""
        end = time.monotonic() + max(seconds, 0.0)
        while True:
            socks = list(self.listeners) + ([self.client] if self.client is not None else [])
            left = end - time.monotonic()
            if not socks:
                if left > 0:
                    time.sleep(left)
                return
            try:
                ready, _, _ = select.select(socks, [], [], max(left, 0.0))
            except InterruptedError:
                return  # (a signal: the loop looks at it)
            except (OSError, ValueError):
                return
            if not ready:
                return
            if self.client is not None and self.client in ready:
                # (first: a client that has gone is gone before the next one knocks)
                self._readable()
                if self.client is not None or not any(s in self.listeners for s in ready):
                    return  # (a request may have changed what to log: the loop looks)
            for sock in ready:
                if sock in self.listeners:
                    self._accept(sock)
            if time.monotonic() >= end:
                return

    def _send(self, data: bytes) -> bool:
        assert self.client is not None
        try:
            self.client.setblocking(True)
            self.client.settimeout(5)
            self.client.sendall(data)
            return True
        except OSError:
            return False
        finally:
            with contextlib.suppress(OSError):
                self.client.setblocking(False)

    def _accept(self, listener: socket.socket) -> None:
        try:
            conn, addr = listener.accept()
        except OSError:
            return
        conn.setblocking(True)
        conn.settimeout(5)
        if self.client is not None:
            _send_error(conn, -errno.EADDRINUSE)
            conn.close()
            return
        # (a unix-socket client is named by the socket's path, as libpcp names it)
        host = listener.getsockname() if listener.family == socket.AF_UNIX else None
        host = host or _client_host(listener.family, addr)
        address = "" if listener.family == socket.AF_UNIX else addr[0]
        denied = self.access.check(listener.family, address)
        if denied is None:
            _send_error(conn, PM_ERR_PERMISSION)
            time.sleep(1)  # (as PCP's, for QA's sake)
            conn.close()
            return
        if listener.family == socket.AF_UNIX and not _same_user(conn):
            _send_error(conn, PM_ERR_PERMISSION)
            conn.close()
            return
        if not _send_error(conn, self.ipc_version, os.getpid()):
            conn.close()
            return
        conn.setblocking(False)
        self.client, self.client_host, self.denied = conn, host, denied
        self.buf = bytearray()
        self.version = self.ipc_version

    def _drop(self) -> None:
        assert self.client is not None
        with contextlib.suppress(OSError):
            self.client.close()
        self.client = None
        self.client_host = ""
        self.qa_case = 0
        self.buf = bytearray()

    def _readable(self) -> None:
        assert self.client is not None
        try:
            data = self.client.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._drop()
            return
        self.buf += data
        while self.client is not None and len(self.buf) >= 12:
            length = int.from_bytes(self.buf[:4], "big", signed=True)
            if length < 12 or length > 1 << 24:
                self._drop()
                return
            if len(self.buf) < length:
                return
            frame = bytes(self.buf[:length])
            del self.buf[:length]
            if self.qa_case == QA_SLEEPY:
                time.sleep(5)
            status = self._dispatch(frame)
            if status < 0:
                self._send_code(status)
                self._drop()

    def _send_code(self, code: int) -> bool:
        from purepcp.pmapi.pdu.codec import encode
        from purepcp.pmapi.pdu.records import ErrorPDU

        return self._send(encode(ErrorPDU(code)))

    def _dispatch(self, frame: bytes) -> int:
        """One PDU from the client: 0, or a status that ends the connection."""
        kind = lc.pdu_type(frame)
        try:
            if kind == 0x700C:  # PDU_CREDS: the version the client chose
                return self._creds(frame)
            if kind == lc.PDU_LOG_REQUEST:
                return self._request(lc.decode_request(frame))
            if kind == lc.PDU_LOG_CONTROL:
                return self._control(frame)
        except PMError as exc:
            return exc.code
        self.log.write(f"client_req: bad PDU type 0x{kind:x}\n")
        self.log.flush()
        return PM_ERR_IPC

    def _creds(self, frame: bytes) -> int:
        from purepcp.pmapi.pdu.codec import decode

        pdu = decode(frame)
        for cred in getattr(pdu, "creds", ()):
            if cred.c_type == 1:  # CVERSION
                self.version = cred.vala
        return 0

    def _request(self, kind: int) -> int:
        assert self.service is not None  # (set before the loop serves anything)
        if kind == lc.LOG_REQUEST_STATUS:
            status = self.service.status()
            return 0 if self._send(lc.encode_status(status, self.version)) else PM_ERR_IPC
        if kind == lc.LOG_REQUEST_NEWVOLUME:
            if self.denied & OP_MAND:
                code = PM_ERR_PERMISSION
            else:
                try:
                    code = self.service.new_volume()
                except PMError as exc:
                    code = exc.code
            return 0 if self._send_code(code) else PM_ERR_IPC
        if kind == lc.LOG_REQUEST_SYNC:
            return 0 if self._send_code(0) else PM_ERR_IPC
        if kind in (QA_OFF, QA_SLEEPY):
            if self.denied & OP_MAND:
                return 0 if self._send_code(PM_ERR_PERMISSION) else PM_ERR_IPC
            self.qa_case = 0 if kind == QA_OFF else kind
            return 0 if self._send_code(0) else PM_ERR_IPC
        self.log.write(f"do_request: bad request type {kind}\n")
        self.log.flush()
        return PM_ERR_IPC

    def _control(self, frame: bytes) -> int:
        try:
            request = lc.decode_control(frame)
        except PMError as exc:
            self.log.write(f"Error: {exc.message}\n")
            return 0 if self._send_code(exc.code) else PM_ERR_IPC
        need = {lc.PM_LOG_MANDATORY: OP_MAND, lc.PM_LOG_ADVISORY: OP_ADV}.get(request.control, 0)
        if request.control not in (lc.PM_LOG_MANDATORY, lc.PM_LOG_ADVISORY, lc.PM_LOG_ENQUIRE):
            self.log.write(f"Bad control PDU type {request.control}\n")
            code = PM_ERR_IPC
        elif self.denied & need:
            code = PM_ERR_PERMISSION
        else:
            assert self.service is not None
            reply = self.service.control(request, self.client_host or "pmlogger")
            return 0 if self._send(reply) else PM_ERR_IPC
        self.log.write(f"Error: {PMError(code).message}\n")
        self.log.flush()
        return 0 if self._send_code(code) else PM_ERR_IPC


# -- [access] ------------------------------------------------------------------------------


@dataclass(frozen=True)
class AccessRule:
    """One host of an [access] statement: the ops it names and those it denies."""

    host: str
    specified: int  # the ops the statement speaks of
    denied: int  # of those, the ones denied


class AccessList:
    """The [access] section: which hosts may connect, and which ops each may not use."""

    def __init__(self, rules: tuple[AccessRule, ...]) -> None:
        self.rules = rules

    def check(self, family: int, address: str) -> int | None:
        """The ops denied to a client (at ADDRESS, or on the unix socket); None if it
        may not connect at all.

        As libpcp's __pmAccAddClient: with no rules all is allowed; every rule naming
        the client applies, the less specific first, each setting the ops it speaks of
        (a client no rule names may do everything); a client denied every op is refused.
        """
        if not self.rules:
            return 0
        client = None if family == socket.AF_UNIX else _ip(address)
        if family != socket.AF_UNIX and client is None:
            return None
        matches = []
        for k, rule in enumerate(self.rules):
            level = _level(rule.host, client)
            if level >= 0:
                matches.append((level, k, rule))
        denied = 0
        for *_, rule in sorted(matches, key=lambda m: (m[0], m[1])):
            denied = (denied & ~rule.specified) | rule.denied
        return None if denied & OP_ALL == OP_ALL else denied


def _ip(address: str) -> object | None:
    import ipaddress

    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip


def _level(spec: str, client: object | None) -> int:
    """How specifically SPEC names the client (its address; None: the unix socket),
    higher being more specific, or -1 if it does not (libpcp's host specs: "*" is
    every client, ".*" every IPv4 one, ":*" every IPv6 one, "a.b.*" a subnet,
    "unix:*" the unix socket, "local:*" that and this host, else a host or address)."""
    import ipaddress

    if spec == "*":
        return 0
    if spec.startswith(("unix:", "local:")):
        if client is None:
            return 0 if spec.endswith(":*") or spec.endswith(":") else 1
        if spec.startswith("unix:"):
            return -1
        spec = "localhost"
    if client is None:
        return -1
    if spec.endswith("*"):
        head = spec[:-1]
        if isinstance(client, ipaddress.IPv4Address):
            if head in ("", "."):
                return 0
            parts = [p for p in head.split(".") if p]
            ok = str(client).split(".")[: len(parts)] == parts and not head.startswith(":")
            return len(parts) if ok else -1
        if isinstance(client, ipaddress.IPv6Address):
            if head in (":", ""):
                return 0
            return 1 if str(client.exploded).startswith(head.rstrip(":")) else -1
        return -1
    names = {spec}
    if spec.lower() == "localhost":
        names.add(socket.gethostname())
        if getattr(client, "is_loopback", False):
            return 10
    for name in names:
        try:
            if ipaddress.ip_address(name) == client:
                return 10
        except ValueError:
            pass
        try:
            infos = socket.getaddrinfo(name, None)
        except OSError:
            continue
        for info in infos:
            if _ip(str(info[4][0])) == client:
                return 10
    return -1


# -- helpers --------------------------------------------------------------------------------


def _send_error(conn: socket.socket, code: int, sender: int = 0) -> bool:
    from purepcp.pmapi.pdu.codec import encode
    from purepcp.pmapi.pdu.records import ErrorPDU

    try:
        conn.sendall(encode(ErrorPDU(code, None, sender)))
        return True
    except OSError:
        return False


def _client_host(family: int, addr: object) -> str:
    if family == socket.AF_UNIX:
        return "localhost"
    host = addr[0] if isinstance(addr, tuple) else str(addr)
    try:
        name = socket.getnameinfo((host, 0), socket.NI_NAMEREQD)[0]
        return name
    except OSError:
        return host


def _same_user(conn: socket.socket) -> bool:
    """A unix-socket client: root, or this logger's user."""
    import struct

    try:
        raw = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        _, uid, _ = struct.unpack("3i", raw)
    except (OSError, AttributeError):
        return False
    return uid == 0 or uid in (os.getuid(), os.geteuid())


def _pid_of_link(link: Path, first_digits: bool = False) -> int | None:
    try:
        target = os.readlink(link)
    except OSError:
        return None
    tail = target.rsplit("/", 1)[-1] if "/" in target and not first_digits else target
    digits = ""
    started = False
    for ch in tail:
        if ch.isdigit():
            digits += ch
            started = True
        elif started:
            break
    return int(digits) if digits else None
