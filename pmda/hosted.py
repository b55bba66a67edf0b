"""A C agent library for a client that would load it (a local context, dbpmda's
`open dso`), served from a host process instead.

libpcp's __pmConnectLocal and PCP's dbpmda dlopen a DSO agent into the client.  We
load no C code into a Python process: as our pmcd does for a C `dso` line, a host
process (`python -m purepcp.pmda.dsohost --local`) loads the library with PCP's
libpcp_pmda and serves it on a pipe pair.  `HostedLibrary` drives that pipe
synchronously, one request and its reply at a time, and offers the calls made of an
in-process Python agent (`handle`, `stop`), so it stands where one would.

A library that cannot be found, loaded or initialised is a one-line warning in
__pmConnectLocal's words (`start` returns None); a local context goes on without
that domain, as libpcp's does.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from typing import Any

from purepcp.pmapi.errors import PM_ERR_NOAGENT, pmErrStr
from purepcp.pmapi.pdu.codec import PDUError, decode, encode
from purepcp.pmapi.pdu.constants import CVERSION, PDU_VERSION, PDUFlag
from purepcp.pmapi.pdu.framer import PDUFramer
from purepcp.pmapi.pdu.records import AttrPDU, Cred, CredsPDU, ErrorPDU, ProfilePDU
from purepcp.pmda.clients import CREDENTIAL_FLAGS

#: what a library's name gets when it is found only with it added (libpcp's DSO_SUFFIX)
DSO_SUFFIX = "so"
#: requests an agent answers with nothing (the others all get one reply)
_NO_REPLY = (ProfilePDU, AttrPDU, CredsPDU, ErrorPDU)


def find_library(name: str, pmdas_dir: str) -> str | None:
    """Where libpcp's __pmConnectLocal finds the DSO NAME: as named, in PCP_PMDAS_DIR,
    there with the suffix added, or as named with it; None (after its warning) if not."""
    tried = (
        name,
        f"{pmdas_dir}/{name}",
        f"{pmdas_dir}/{name}.{DSO_SUFFIX}",
        f"{name}.{DSO_SUFFIX}",
    )
    for path in tried:
        if os.access(path, os.F_OK):
            return path
    print(
        f'__pmConnectLocal: Warning: cannot find DSO at "{tried[-1]}" or "{name}"',
        file=sys.stderr,
    )
    return None


class HostedLibrary:
    """A C DSO agent in a dsohost process, asked synchronously over its pipe pair."""

    def __init__(self, name: str, domain: int, process: subprocess.Popen) -> None:
        self.name = name
        self.domain = domain
        self.process = process
        self.framer = PDUFramer()
        self.wants_credentials = False
        #: the feature flags of the library's CREDS (PDU_FLAG_AUTH: it wants its clients'
        #: attributes, as libpcp's __pmConnectLocal tests pmdaInterface's comm.flags)
        self.flags = 0
        self.dead = False
        self.interface = 0  # the library's PMDA interface version

    @classmethod
    def start(cls, name: str, domain: int, path: str, entry: str, debug: str = "") -> HostedLibrary:
        """The library at PATH initialised by ENTRY for DOMAIN, ready for requests, with
        libpcp's debug options DEBUG (the client's -D) set where it runs; LoadFailure (with
        the host's report) when it cannot be."""
        report_r, report_w = os.pipe()
        argv = [sys.executable, "-m", "purepcp.pmda.dsohost", "--report", str(report_w)]
        argv += ["--progname", _progname(), *(["--debug", debug] if debug else [])]
        argv += [path, entry, str(domain), name]
        try:
            process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                bufsize=0,
                close_fds=True,
                pass_fds=(report_w,),
            )
        finally:
            os.close(report_w)
        try:
            report = _read_all(report_r).decode(errors="replace").rstrip("\n").split("\t", 1)
        finally:
            os.close(report_r)
        hosted = cls(name, domain, process)
        if report[0] != "ok":
            hosted.stop()
            code = process.returncode
            raise LoadFailure(report[0] or "died", report[1] if len(report) > 1 else str(code))
        hosted.interface = int(report[1])
        if not hosted._handshake():
            hosted.stop()
            raise LoadFailure("handshake", "no version exchange")
        return hosted

    def _handshake(self) -> bool:
        """Take the agent's CREDS and answer it as pmcd does: whether that went well."""
        creds = self._read()
        if not isinstance(creds, CredsPDU):
            return False
        versions = [c for c in creds.creds if c.c_type == CVERSION]
        flags = self.flags = versions[0].flags if versions else 0
        self.wants_credentials = bool(flags & CREDENTIAL_FLAGS)
        auth = flags & PDUFlag.PDU_FLAG_AUTH
        answer = Cred(CVERSION, PDU_VERSION, auth >> 8, auth & 0xFF)
        return self._write(encode(CredsPDU((answer,), os.getpid())))

    def _write(self, data: bytes) -> bool:
        stdin = self.process.stdin
        assert stdin is not None
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(stdin.fileno(), view) :]
        except OSError:
            self.dead = True
            return False
        return True

    def _read(self) -> Any:
        """The next PDU record from the agent; None once it has gone or talks nonsense."""
        stdout = self.process.stdout
        assert stdout is not None
        while not self.dead:
            try:
                frame = self.framer.next_frame()
                if frame is not None:
                    return decode(frame)
                data = os.read(stdout.fileno(), 1 << 16)
            except (PDUError, OSError):
                data = b""
            if not data:
                self.dead = True
                break
            self.framer.feed(data)
        return None

    def handle(self, pdu: Any) -> Any:
        """The agent's reply to PDU (None for a PDU that gets none), as Agent.handle."""
        if self.dead or not self._write(encode(pdu)):
            return ErrorPDU(PM_ERR_NOAGENT)
        if isinstance(pdu, _NO_REPLY):
            return None
        reply = self._read()
        return ErrorPDU(PM_ERR_NOAGENT) if reply is None else reply

    def stop(self) -> None:
        """Close the pipe (the agent's pmdaMain then returns) and reap the host."""
        for pipe in (self.process.stdin, self.process.stdout):
            with contextlib.suppress(OSError):
                if pipe is not None:
                    pipe.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _progname() -> str:
    """This program's name, as libpcp's pmGetProgname gives it (a module run with -m is
    named by its package: dbpmda for purepcp/pmda/cli/dbpmda/__main__.py)."""
    where = sys.argv[0] or "pcp"
    name = os.path.basename(where)
    if name == "__main__.py":
        name = os.path.basename(os.path.dirname(where))
    return name.removesuffix(".py") or "pcp"


def _read_all(fd: int) -> bytes:
    """Everything from FD up to its end of file."""
    chunks = []
    while chunk := os.read(fd, 4096):
        chunks.append(chunk)
    return b"".join(chunks)


class LoadFailure(Exception):
    """The host could not serve the library: its report's KIND (attach, entry, init,
    interface, nolibrary, handshake, died) and DETAIL (dlerror's text, a status...)."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail


def connect_local_warning(failure: LoadFailure, path: str, entry: str) -> str:
    """FAILURE in the words of libpcp's __pmConnectLocal (its lines, newline-ended)."""
    warning, where = "__pmConnectLocal: Warning:", f'in DSO "{path}"'
    if failure.kind == "attach":
        return f'{warning} error attaching DSO "{path}"\n{failure.detail}\n\n'
    if failure.kind == "entry":
        return f'{warning} couldn\'t find init function "{entry}" {where}\n'
    if failure.kind == "init":
        why = pmErrStr(int(failure.detail))
        return f'{warning} initialization routine "{entry}" failed {where}: {why}\n'
    if failure.kind == "interface":
        version = failure.detail
        return (
            f'__pmConnectLocal: Error: Unknown PMDA interface version {version} in "{path}" DSO\n'
        )
    return f'{warning} cannot serve DSO "{path}": {failure}\n'
