"""Running an agent as a daemon PMDA: pmdaGetOpt's flags, the connection to pmcd, the loop.

`main(AgentClass)` is what `python -m purepcp.agents.NAME` runs.  The agent talks PDUs with
pmcd over its standard input and output (-p, the default), or listens on a TCP
port (-i PORT) or a unix socket (-u PATH) and serves the pmcd that connects.  As
libpcp_pmda does, the agent speaks first: a CREDS PDU announcing protocol version
2; everything after that is pmcd's request and the agent's reply (pmda.agent).
"""

from __future__ import annotations

import argparse
import logging
import os
import socket
import struct
import sys
from collections.abc import Callable, Sequence
from typing import BinaryIO

from purepcp.pmapi.errors import PM_ERR_GENERIC, PMError
from purepcp.pmapi.pdu.codec import PDUError, decode, encode
from purepcp.pmapi.pdu.constants import PDUType
from purepcp.pmapi.pdu.framer import PDUFramer
from purepcp.pmapi.pdu.records import Cred, CredsPDU, ErrorPDU

from .agent import Agent
from .clients import CREDENTIAL_FLAGS

#: Protocol version an agent announces in its CREDS PDU.
AGENT_PDU_VERSION = 2


def options(agent_class: type[Agent]) -> argparse.ArgumentParser:
    """pmdaGetOpt's command line (-d -l -i -u -p -D -U), for AGENT_CLASS."""
    parser = argparse.ArgumentParser(
        prog=f"pmda{agent_class.name}",
        description=f"The {agent_class.name} performance metrics domain agent.",
    )
    parser.add_argument(
        "-d",
        "--domain",
        type=int,
        default=agent_class.domain,
        help=f"performance metrics domain (default {agent_class.domain})",
    )
    parser.add_argument("-l", "--log", metavar="LOGFILE", help="log file (default: stderr)")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("-p", "--pipe", action="store_true", help="talk to pmcd on stdin/stdout")
    where.add_argument("-i", "--inet", type=int, metavar="PORT", help="listen on TCP PORT")
    where.add_argument("-u", "--unix", metavar="SOCKET", help="listen on unix SOCKET")
    parser.add_argument("-D", "--debug", metavar="FLAGS", help="debug flags (log at debug level)")
    parser.add_argument("-U", "--username", help="accepted for PCP compatibility; not used")
    return parser


def main(agent_class: type[Agent], argv: Sequence[str] | None = None) -> int:
    """Parse the command line, connect to pmcd and serve it until it hangs up (ARGV:
    the agent's options; None for this process's own, which it then runs as)."""
    if argv is None:
        show_as_agent(agent_class.name, sys.argv[1:])
    args = options(agent_class).parse_args(argv)
    log = _open_log(agent_class.name, args.log, args.debug)
    try:
        agent = agent_class(args.domain, log=log)
    except (PMError, OSError, ValueError) as exc:
        log.error("%s: cannot start: %s", agent_class.name, exc)
        return 1
    try:
        agent.start()
    except Exception as exc:  # the agent's own start-up: one line in its log, not a traceback
        log.error("%s: cannot start: %s", agent_class.name, exc)
        agent.stop()
        return 1
    try:
        if args.inet is not None or args.unix is not None:
            return _serve_listening(agent, args.inet, args.unix)
        return serve_stream(agent, sys.stdin.buffer, sys.stdout.buffer)
    except (KeyboardInterrupt, BrokenPipeError, ConnectionResetError):
        return 0
    except OSError as exc:  # e.g. -i PORT already taken, -u PATH in a missing directory
        where = f"port {args.inet}" if args.inet is not None else args.unix or "stdin/stdout"
        log.error("%s: cannot serve on %s: %s", agent_class.name, where, exc.strerror or exc)
        return 1
    finally:
        agent.stop()


def show_as_agent(name: str, args: Sequence[str]) -> None:
    """Have this process look like PCP's agent NAME run with ARGS: named pmdaNAME (its
    comm, which pmdaproc's psinfo.fname and hotproc's fname give), its command line
    $PCP_PMDAS_DIR/NAME/pmdaNAME ARGS, as pmcd runs PCP's, where that program is
    installed (what PCP's scripts look for), else pmdaNAME ARGS."""
    from purepcp.pmapi.proctitle import set_command_line, set_process_name

    program = f"pmda{name}"
    set_process_name(program)
    where = _pmdas_dir()
    path = os.path.join(where, name, program) if where else ""
    if not (path and os.path.isfile(path) and set_command_line([path, *args])):
        set_command_line([program, *args])


def _pmdas_dir() -> str:
    """$PCP_PMDAS_DIR, from the environment pmcd gives its agents or pcp.conf ("" if
    neither says)."""
    where = os.environ.get("PCP_PMDAS_DIR")
    if where:
        return where
    from purepcp.pmapi.paths import LayoutError, paths

    try:
        return str(paths().pmdas_dir)
    except (LayoutError, OSError, KeyError):
        return ""


def _open_log(name: str, path: str | None, debug: str | None) -> logging.Logger:
    log = logging.getLogger(f"pmda.{name}")
    handler: logging.Handler = logging.StreamHandler()
    if path:
        try:
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            handler = logging.FileHandler(path)
        except OSError as exc:  # say so on stderr (pmcd's log) and log there instead
            print(f"pmda{name}: cannot log to {path}: {exc.strerror}", file=sys.stderr)
    handler.setFormatter(
        logging.Formatter("[%(asctime)s] pmda" + name + "(%(process)d) %(levelname)s: %(message)s")
    )
    log.addHandler(handler)
    log.setLevel(logging.DEBUG if debug else logging.INFO)
    log.propagate = False
    return log


def _serve_listening(agent: Agent, port: int | None, path: str | None) -> int:
    """Listen as pmdaConnect does for -i/-u and serve the one pmcd that connects.

    Like libpcp_pmda, a TCP agent listens on the loopback address only, a unix
    socket replaces a stale path and is made group-writable, and the agent ends
    when that connection does.
    """
    if path is not None:
        if os.path.exists(path):
            os.unlink(path)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(path)
        os.chmod(path, 0o660)
    else:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port or 0))
    with listener:
        listener.listen(1)
        conn, _ = listener.accept()
    with (
        conn,
        conn.makefile("rb", buffering=0) as rfile,
        conn.makefile("wb", buffering=0) as wfile,
    ):
        return serve_stream(agent, rfile, wfile)  # type: ignore[arg-type]


def serve_stream(agent: Agent, rfile: BinaryIO, wfile: BinaryIO) -> int:
    """Announce ourselves with CREDS, then answer requests until end of file."""

    def write(data: bytes) -> None:
        wfile.write(data)
        wfile.flush()

    flags = CREDENTIAL_FLAGS if agent.wants_credentials else 0
    write(encode(CredsPDU((Cred.version(flags, AGENT_PDU_VERSION),), os.getpid())))
    read = getattr(rfile, "read1", rfile.read)  # whatever has arrived, not a full buffer
    return answer_requests(agent, read, write)


def answer_requests(
    agent: Agent, read: Callable[[int], bytes | None], write: Callable[[bytes], object]
) -> int:
    """The request loop: decode, handle, encode the reply; 0 at pmcd's end of file.

    A malformed request is logged and answered with its error code, as PCP's
    agents answer a bad request with an ERROR PDU; PDUs that never get a reply
    (ERROR, PROFILE, ATTR, CREDS, unknown types) get none even when malformed,
    since pmcd does not wait for one and would read it as the next answer.  An
    exception in agent code is logged and answered as PM_ERR_GENERIC, never
    ending the agent.  Bytes of an unfinished PDU at end of file are logged.
    """
    framer = PDUFramer()
    log = agent.log
    while True:
        try:
            data = read(1 << 16)
        except ConnectionResetError:  # pmcd and dbpmda close sockets with a reset (SO_LINGER 0)
            data = b""
        if not data:
            if framer.buffered:
                log.error(
                    "%s: %d bytes of an unfinished PDU at end of input", agent.name, framer.buffered
                )
            return 0
        framer.feed(data)
        try:
            frames = list(framer.frames())
        except PDUError as exc:
            log.error("%s: %s; closing", agent.name, exc)
            return 1
        for frame in frames:
            reply = _reply_to(agent, frame)
            if reply is not None:
                try:
                    write(reply)
                except (BrokenPipeError, ConnectionResetError):
                    log.info("%s: pmcd has gone; exiting", agent.name)
                    return 0


#: The requests an agent answers; everything else pmcd sends expects no reply.
ANSWERED = frozenset(
    {
        PDUType.PDU_FETCH,
        PDUType.PDU_DESC_REQ,
        PDUType.PDU_INSTANCE_REQ,
        PDUType.PDU_TEXT_REQ,
        PDUType.PDU_RESULT,
        PDUType.PDU_PMNS_NAMES,
        PDUType.PDU_PMNS_IDS,
        PDUType.PDU_PMNS_CHILD,
        PDUType.PDU_PMNS_TRAVERSE,
        PDUType.PDU_LABEL_REQ,
    }
)


def _reply_to(agent: Agent, frame: bytes) -> bytes | None:
    (pdutype,) = struct.unpack_from(">i", frame, 4)
    if pdutype not in ANSWERED and pdutype not in _SILENT:
        agent.log.error("%s: unrecognised PDU type %#x ignored", agent.name, pdutype)
        return None
    try:
        request = decode(frame)
    except PDUError as exc:
        agent.log.error("%s: bad %s PDU: %s", agent.name, PDUType(pdutype).name, exc)
        return encode(ErrorPDU(exc.code)) if pdutype in ANSWERED else None
    try:
        reply = agent.handle(request)
        return None if reply is None else encode(reply)
    except Exception as exc:  # agent code failed: answer, log, and keep serving
        agent.log.exception("%s: %s failed: %s", agent.name, type(request).__name__, exc)
        return encode(ErrorPDU(PM_ERR_GENERIC)) if pdutype in ANSWERED else None


#: The PDUs pmcd sends that get no reply.
_SILENT = frozenset({PDUType.PDU_ERROR, PDUType.PDU_PROFILE, PDUType.PDU_ATTR, PDUType.PDU_CREDS})
