"""dbpmda's agents in another process, reached through a pipe pair or a socket: PDUs
written and read as dbpmda's pmda.c does, with its messages ("Error PDU: ..."), and the
child process's life (spawn, reap, a channel for an agent that could not start)."""

from __future__ import annotations

import contextlib
import errno
import os
import select
import socket
import struct
import subprocess
import time
from typing import TYPE_CHECKING, Any

from purepcp.pmapi.cnumbers import uint32
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.errors import (
    PM_ERR_IPC,
    PM_ERR_NOTCONN,
    PM_ERR_TIMEOUT,
    PM_ERR_VALUE,
    PMError,
    pmErrStr,
)
from purepcp.pmapi.ids import pmIDStr, pmInDomStr
from purepcp.pmapi.pdu.codec import PDUError, decode, encode
from purepcp.pmapi.pdu.constants import CVERSION, PM_TEXT_HELP, PM_TEXT_ONELINE, PDUType
from purepcp.pmapi.pdu.framer import PDUFramer
from purepcp.pmapi.pdu.records import (
    AttrPDU,
    Cred,
    CredsPDU,
    DescPDU,
    DescReqPDU,
    ErrorPDU,
    FetchPDU,
    InstancePDU,
    InstanceReqPDU,
    LabelPDU,
    LabelReqPDU,
    PMNSChildPDU,
    PMNSIdsPDU,
    PMNSNamesPDU,
    PMNSTraversePDU,
    ResultPDU,
    TextPDU,
    TextReqPDU,
)
from purepcp.pmapi.values import Result

from .driver import PM_LABEL_INSTANCES, Driver, child_lines, text_line
from .fmt import desc_text, instance_lines, label_lines
from .gram import ATTR_NAMES

if TYPE_CHECKING:
    from .main import Session

_EMPTY = "Error: __pmGetPDU() failed: PDU empty, PMDA may have died\n"
#: The libpcp decoder dbpmda names when a name list does not decode.
_NAMES = "__pmDecodeNameList"


class DaemonAgent(Driver):
    """An agent in another process, reached through a pipe pair or a socket."""

    def __init__(
        self,
        session: Session,
        name: str,
        rfd: int,
        wfd: int,
        *,
        proc: subprocess.Popen | None = None,
        sock: socket.socket | None = None,
        dead: DeadChannel | None = None,
    ) -> None:
        super().__init__(session)
        self.name = name
        self.rfd, self.wfd = rfd, wfd
        self.proc, self.sock, self.dead = proc, sock, dead
        self.version: int | None = None
        self.framer = PDUFramer()

    # -- I/O -------------------------------------------------------------------------

    def send(self, pdu: Any) -> int:
        """Write one PDU: 0, or a negative PCP status."""
        try:
            data = memoryview(encode(pdu))
        except PDUError as exc:
            return exc.code
        try:
            while data:
                written = os.write(self.wfd, data)
                data = data[written:]
        except OSError as exc:
            return PM_ERR_IPC if exc.errno == errno.EBADF else -(exc.errno or errno.EIO)
        return 0

    def get(self, timeout: float | None = None) -> tuple[int, bytes | None]:
        """__pmGetPDU: (PDU type, its bytes), (0, None) at end of file, or (status < 0, None)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            try:
                frame = self.framer.next_frame()
            except PDUError as exc:
                return exc.code, None
            if frame is not None:
                (pdutype,) = struct.unpack_from(">i", frame, 4)
                return pdutype, frame
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return PM_ERR_TIMEOUT, None
                ready, _, _ = select.select([self.rfd], [], [], left)
                if not ready:
                    return PM_ERR_TIMEOUT, None
            try:
                data = os.read(self.rfd, 65536)
            except OSError as exc:
                return -(exc.errno or 5), None
            if not data:
                return (PM_ERR_IPC if self.framer.buffered else 0), None
            self.framer.feed(data)

    def request(self, pdu: Any, what: str) -> tuple[int | None, Any]:
        """Send PDU and read the reply: (type, decoded record), (type or status, None)
        when nothing decodable came, (type, PDUError) for a reply that does not decode,
        or (None, status) after printing why PDU could not be sent."""
        sts = self.send(pdu)
        if sts < 0:
            self.out(f"Error: {what}() failed: {pmErrStr(sts)}\n")
            return None, sts
        pdutype, frame = self.get()
        if frame is None:
            return pdutype, None
        try:
            return pdutype, decode(frame)
        except PDUError as exc:
            return pdutype, exc

    def reply(self, pdutype: int, record: Any, want: type, decoder: str, wrong: str = "") -> Any:
        """The record if it is the WANT reply; otherwise print why not and return the status."""
        if isinstance(record, want):
            return record
        if pdutype == want.TYPE and isinstance(record, PDUError):
            self.out(f"Error: {decoder}() failed: {pmErrStr(record.code)}\n")
            return record.code
        return self.not_wanted(pdutype, record, wrong)

    def not_wanted(self, pdutype: int, record: Any, wrong: str = "") -> int:
        if pdutype == PDUType.PDU_ERROR:
            if isinstance(record, ErrorPDU):
                self.out(f"Error PDU: {pmErrStr(record.code)}\n")
                return record.code
            code = record.code if isinstance(record, PDUError) else PM_ERR_IPC
            self.out(f"Error: __pmDecodeError() failed: {pmErrStr(code)}\n")
            return code
        if pdutype == 0:
            self.out(_EMPTY)
            return 0
        if wrong:
            self.out(f"Error: __pmGetPDU() failed: wrong PDU ({uint32(pdutype):x})\n")
        else:
            self.out(f"Error: __pmGetPDU() failed: {pmErrStr(pdutype)}\n")
        return pdutype if pdutype < 0 else PM_ERR_IPC

    # -- connection life ---------------------------------------------------------------

    def handshake(self, timeout: int) -> None:
        """Wait for the agent's CREDS and answer with ours (dbpmda's pmdaversion)."""
        err = self.session.output.err
        pdutype, frame = self.get(timeout)
        if pdutype == PDUType.PDU_CREDS and frame is not None:
            try:
                creds = decode(frame)
            except PDUError as exc:
                err(f"Warning: version exchange failed for PMDA {self.name}: {exc.message}\n")
                return
            versions = [c.vala for c in creds.creds if c.c_type == CVERSION]
            if versions:
                self.version = versions[-1]
                sts = self.send(CredsPDU((Cred.version(0),), os.getpid()))
                if sts < 0:
                    err(f"Warning: version exchange failed for PMDA {self.name}: {pmErrStr(sts)}\n")
            return
        if pdutype < 0:
            err(f"__pmGetPDU({self.rfd}): {pmErrStr(pdutype)}\n")
        elif pdutype == 0:
            err("pmdaversion: expecting PDU_CREDS, got EOF\n")
        else:
            try:
                label = PDUType(pdutype).label
            except ValueError:
                label = f"TYPE-{pdutype}?"
            err(f"pmdaversion: expecting PDU_CREDS, got PDU type {label}\n")
        err(f"Warning: no version exchange with PMDA {self.name} after {timeout} secs\n")

    def close(self) -> None:
        """End the context (ERROR PM_ERR_NOTCONN), close the channel, reap a child."""
        self.send(ErrorPDU(PM_ERR_NOTCONN))
        if self.sock is not None:
            with contextlib.suppress(OSError):
                self.sock.close()
        if self.dead is not None:
            self.dead.close()
        if self.proc is not None:
            for pipe in (self.proc.stdin, self.proc.stdout):
                with contextlib.suppress(OSError):
                    if pipe is not None:
                        pipe.close()
            reap(self.proc)

    # -- commands ----------------------------------------------------------------------

    def desc(self, pmid: int, show: bool = True) -> tuple[int, Desc | None]:
        pdutype, record = self.request(DescReqPDU(pmid), "__pmSendDescReq")
        if pdutype is None:
            return record, None
        got = self.reply(pdutype, record, DescPDU, "__pmDecodeDesc", wrong="x")
        if not isinstance(got, DescPDU):
            return got, None
        if show or "pdu" in self.session.debug:
            self.out(desc_text(got.desc))
        return pdutype, got.desc

    def describe(self, pmid: int) -> int:
        """The `desc` command: the descriptor, or why not."""
        return self.desc(pmid)[0]

    def fetch(self, pmids: list[int]) -> int:
        descs = None
        if self.session.get_desc or self.session.get_iname:
            descs = []
            for pmid in pmids:
                sts, desc = self.desc(pmid, show=False)
                if sts < 0 or desc is None:
                    return sts
                descs.append(desc)
        sts = self.send_profile()
        if sts < 0:
            return sts
        got = self.ask(
            FetchPDU(0, tuple(pmids)), "__pmSendFetch", ResultPDU, "__pmDecodeResult", wrong="x"
        )
        if not isinstance(got, ResultPDU):
            return got
        self.print_fetched(got.result, descs, self.iname)
        return 0

    def send_profile(self, announce: bool = False) -> int:
        if not self.session.profile_changed:
            return 0
        if announce:
            self.out("Sending Profile...\n")
        sts = self.send(self.session.profile.pdu())
        if sts < 0:
            self.out(f"Error: __pmSendProfile() failed: {pmErrStr(sts)}\n")
        else:
            self.session.profile_changed = False
        return sts

    def iname(self, indom: int, inst: int) -> str | None:
        pdutype, record = self.request(InstanceReqPDU(indom, inst), "__pmSendInstanceReq")
        if pdutype is None:
            return None
        got = self.reply(pdutype, record, InstancePDU, "__pmDecodeInstance")
        if not isinstance(got, InstancePDU):
            return None
        return got.names[0] if got.names else ""

    def instance(self, indom: int, inst: int, name: str | None) -> int:
        self.out(f"pmInDom: {pmInDomStr(indom)}\n")
        request = InstanceReqPDU(indom, uint32(inst), name)
        got = self.ask(request, "__pmSendInstanceReq", InstancePDU, "__pmDecodeInstance")
        if not isinstance(got, InstancePDU):
            return got
        self.out(instance_lines(got.insts, got.names))
        return 0

    def store(self, pmid: int, text: str) -> int:
        self.out(f"PMID: {pmIDStr(pmid)}\nGetting description...\n")
        sts, desc = self.desc(pmid, show=False)
        if sts < 0 or desc is None:
            return sts
        sts = self.send_profile(announce=True)
        if sts < 0:
            return sts
        self.out("Getting Result Structure...\n")
        got = self.ask(FetchPDU(0, (desc.pmid,)), "__pmSendFetch", ResultPDU, "__pmDecodeResult")
        if not isinstance(got, ResultPDU):
            return got
        if "fetch" in self.session.debug:
            self.print_fetched(got.result, None, self.iname)
        if not got.result.vsets:
            self.out(f"Error: {pmIDStr(pmid)} not available!\n")
            return PM_ERR_VALUE
        new = self.fill_values(got.result.vsets[0], desc, pmid, text)
        if new is None:
            return PM_ERR_VALUE
        self.out("Sending Result...\n")
        result = Result(got.result.timestamp, (new, *got.result.vsets[1:]))
        pdutype, record = self.request(ResultPDU(result), "__pmSendResult")
        if pdutype is None:
            return record
        if isinstance(record, ErrorPDU):
            if record.code < 0:
                self.out(f"Error PDU: {pmErrStr(record.code)}\n")
            return record.code
        return self.not_wanted(pdutype, record)

    def text(self, ident: int, kind: int) -> int:
        sts = 0
        for first in (True, False):
            ttype = kind | (PM_TEXT_ONELINE if first else PM_TEXT_HELP)
            pdutype, record = self.request(TextReqPDU(ident, ttype), "__pmSendTextReq")
            if pdutype is None:
                sts = record
                continue
            got = self.reply(pdutype, record, TextPDU, "__pmDecodeText")
            if isinstance(got, TextPDU):
                self.out(text_line(got.text, first))
                sts = 0
            else:
                sts = got
        return sts

    def label(self, label_type: int, ident: int, indom: int) -> int:
        ident = self.heading(label_type, ident, indom)
        if label_type == PM_LABEL_INSTANCES:
            self.send_profile()
        got = self.ask(
            LabelReqPDU(ident, label_type), "__pmSendLabelReq", LabelPDU, "__pmDecodeLabel"
        )
        if not isinstance(got, LabelPDU):
            return got
        self.out(label_lines(got.sets))
        if not got.sets:
            self.out("Info: __pmDecodeLabel() returns 0 label sets\n")
        return 0

    def ask(self, pdu: Any, sender: str, want: type, decoder: str, wrong: str = "") -> Any:
        """request() then reply(): the WANT record, or the status after printing why not."""
        pdutype, record = self.request(pdu, sender)
        if pdutype is None:
            return record
        return self.reply(pdutype, record, want, decoder, wrong)

    def pmns_name(self, pmid: int) -> int:
        self.out(f"PMID: {pmIDStr(pmid)}\n")
        got = self.ask(PMNSIdsPDU(0, (pmid,)), "__pmSendIDList", PMNSNamesPDU, _NAMES)
        if not isinstance(got, PMNSNamesPDU):
            return got
        self.out("".join(f"   {n}\n" for n in got.names))
        return 0

    def pmid(self, name: str) -> int:
        self.out(f"Metric: {name}\n")
        got = self.ask(PMNSNamesPDU((name,)), "__pmSendIDList", PMNSIdsPDU, "__pmDecodeIDList")
        if not isinstance(got, PMNSIdsPDU):
            return got
        if not got.pmids:
            self.out(f"Error: __pmDecodeIDList() failed: {pmErrStr(PM_ERR_IPC)}\n")
            return PM_ERR_IPC
        self.out(f"   {pmIDStr(got.pmids[0])}\n")
        return 0

    def children(self, name: str) -> int:
        self.out(f"Metric: {name}\n")
        got = self.ask(PMNSChildPDU(name, 1), "__pmSendChildReq", PMNSNamesPDU, _NAMES)
        if not isinstance(got, PMNSNamesPDU):
            return got
        self.out(child_lines(got))
        return 0

    def traverse(self, name: str) -> int:
        self.out(f"Metric: {name}\n")
        got = self.ask(PMNSTraversePDU(name), "__pmSendTraversePMNS", PMNSNamesPDU, _NAMES)
        if not isinstance(got, PMNSNamesPDU):
            return got
        self.out("".join(f"   {n}\n" for n in got.names))
        return 0

    def attr(self, attr: int, value: str | None) -> int:
        self.out(
            f"Attribute: {ATTR_NAMES.get(attr, '')}={value if value is not None else chr(39) * 2}\n"
        )
        raw = b"" if value is None else value.encode("utf-8", "surrogateescape") + b"\0"
        sts = self.send(AttrPDU(attr, raw))
        if sts < 0:
            self.out(f"Error: __pmSendAuth() failed: {pmErrStr(sts)}\n")
            return sts
        self.out("Success\n")
        return 0

    def dynamic_pmid(self, name: str, pmid: int) -> int:
        """Ask the agent for the PMID of NAME below a dynamic root (PMError if it refuses)."""
        sts = self.send(PMNSNamesPDU((name,)))
        if sts < 0:
            raise PMError(sts)
        pdutype, frame = self.get()
        if pdutype < 0:
            raise PMError(pdutype)
        if frame is None:
            return pmid
        try:
            record = decode(frame)
        except PDUError as exc:
            raise PMError(exc.code) from None
        if isinstance(record, PMNSIdsPDU):
            if record.status < 0:
                raise PMError(record.status)
            return record.pmids[0] if record.pmids else pmid
        if isinstance(record, ErrorPDU):
            raise PMError(record.code)
        return pmid

    def status_lines(self, pid: int) -> str:
        version = "unknown!" if self.version is None else str(self.version)
        return f"Connection:             daemon (pid: {pid})\nPMDA PMAPI Version:     {version}\n"


def reap(proc: subprocess.Popen, grace: float = 2.0) -> None:
    """Wait for a child agent that was told to go; end it if it does not."""
    for stop in (None, proc.terminate, proc.kill):
        if stop is not None:
            with contextlib.suppress(OSError):
                stop()
        try:
            proc.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


def spawn(argv: list[str]) -> subprocess.Popen:
    """Start a pipe agent: its stdin and stdout are ours to talk on, stderr is shared.

    Like PCP's dbpmda the agent inherits SIGPIPE ignored, so a write to a
    closed channel fails with EPIPE instead of killing it.
    """
    return subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        bufsize=0,
        close_fds=True,
        restore_signals=False,
    )


class DeadChannel:
    """The two ends of a pipe agent that could not be started: reads see end of
    file, writes fail with EPIPE (what PCP's dbpmda sees after its exec fails)."""

    def __init__(self) -> None:
        self.rfd, far = os.pipe()
        os.close(far)
        near, self.wfd = os.pipe()
        os.close(near)

    def close(self) -> None:
        for fd in (self.rfd, self.wfd):
            with contextlib.suppress(OSError):
                os.close(fd)


__all__ = ["DaemonAgent", "DeadChannel", "reap", "spawn"]
