"""dbpmda: the PMDA debugger, as PCP's dbpmda(1), for PCP's agents and ours.

Read commands (from a script file, standard input, or a terminal with line
editing and history), send the requests they stand for to one agent, and
print the replies exactly as PCP 6's dbpmda prints them:

    dbpmda -n /var/lib/pcp/pmns/root -e < script
    dbpmda -n root script.txt

An agent is opened as a pipe agent (`open pipe PATH ARGS...`), reached on a
socket it listens on (`open socket unix PATH`, `open socket inet PORT`,
`open socket ipv6 PORT`) or, our extension for Python agents, loaded into
this process (`open dso SPEC [CLASS] [DOMAIN]`, SPEC being a module such as
`purepcp.agents.simple` or a file `path/agent.py`; PCP's form loads a C library).
`help` lists the commands.  Differences from PCP's dbpmda are listed in
docs/agents.md ("Debugging an agent with dbpmda").
"""

from __future__ import annotations

import contextlib
import getopt
import io
import logging
import os
import pwd
import socket
import subprocess
import sys
import time
from typing import IO, Any

from purepcp.pmapi.errors import PM_ERR_PMNS, PMError, SourceError, pmErrStr
from purepcp.pmapi.ids import is_dynamic_root, pmIDStr, pmInDomStr
from purepcp.pmapi.options import getopt_message
from purepcp.pmapi.paths import LayoutError, paths
from purepcp.pmapi.pdu.constants import PM_TEXT_PMID
from purepcp.pmapi.pmns import PMNS
from purepcp.pmda.inproc import AgentLoadError, load_agent

from .daemon import DaemonAgent, DeadChannel, spawn
from .driver import Driver
from .fmt import help_text
from .gram import ParseAbort, Parser, Stmt
from .inproc import InProcAgent
from .lex import Lexer, Output, Source
from .state import DebugOptions, Profile

PROG = "dbpmda"
_USAGE = """\
Usage: dbpmda [options] [script]

General options:
  -n FILE, --namespace=FILE
                        use an alternative PMNS
  -f, --norc            skip .dbpmdarc processing
  -q N, --creds-timeout=N
                        initial negoptionsotiation timeout (seconds)
  -U USER, --username=USER
                        run under named user account
  -v, --valgrind        running under valgrind, don't dlclose() dso PMDAs
  -?, --help            show this usage message and exit

Input options:
  -e, --echo-input      echo input
  -i, --interactive     be interactive and prompt
"""


class UsageError(Exception):
    """Bad command line: the message (if any) goes before the usage text."""


def default_pmns_path() -> str:
    """The default namespace, as libpcp finds it: $PMNS_DEFAULT (pmapi.paths: in the
    environment, the layout file, else $PCP_VAR_DIR/pmns/root)."""
    return str(paths().pmns_default)


class Session:
    """The state of one dbpmda run: namespace, agent, profile and switches."""

    def __init__(self, output: Output, source: Source, *, pmns: PMNS, pmnsfile: str | None):
        self.output = output
        self.source = source
        self.pmns = pmns
        self.pmnsfile = pmnsfile
        self.cmd_namespace: str | None = None
        self.agent: Driver | None = None
        self.pid = 0
        self.profile = Profile()
        self.profile_changed = True
        self.timer = False
        self.get_desc = False
        self.get_iname = False
        self.debug = DebugOptions()
        self.creds_timeout = 3

    # -- what the grammar asks ---------------------------------------------------------

    def lookup_name(self, name: str) -> int:
        return self.pmns.lookup(name)

    def pmid_known(self, pmid: int) -> bool:
        try:
            self.pmns.names(pmid)
        except PMError:
            return False
        return True

    def metric_names(self, pmid: int) -> list[str]:
        try:
            return self.pmns.names(pmid)
        except PMError:
            return []

    def fix_dynamic_pmid(self, name: str, pmid: int) -> int:
        if is_dynamic_root(pmid) and self.agent is not None:
            return self.agent.dynamic_pmid(name, pmid)
        return pmid

    def action(self, what: str, *args: Any) -> None:
        getattr(self, f"do_{what}")(*args)

    # -- actions run while parsing -------------------------------------------------------

    def do_profile(self, indom: int, what: str, inst: int | None) -> None:
        insts = None if inst is None else [inst]
        if what in ("ALL", "ADD"):
            self.profile.add(indom, insts)
        else:
            self.profile.delete(indom, insts)
        self.profile_changed = True

    def do_debug(self, spec: str) -> None:
        if spec.startswith("-"):
            self.debug.change(spec[1:], enable=False)
        else:
            self.debug.change(spec)

    def do_debug_all(self, on: bool) -> None:
        self.debug.change("all", enable=on)

    def do_timer(self, on: bool) -> None:
        self.timer = on

    def do_getdesc(self, on: bool) -> None:
        self.get_desc = on

    def do_getiname(self, on: bool) -> None:
        self.get_iname = on

    def do_wait(self, seconds: int) -> None:
        if seconds > 0:
            time.sleep(seconds)

    def do_watch(self, path: str) -> None:
        cmd = (
            f'xterm -hold -title "dbpmda watch {path}" -geom 80x16 -bg dodgerblue4 '
            f"-e tail -f {path} &"
        )
        if subprocess.call(cmd, shell=True) != 0:
            self.output.err(f"watch cmd: {cmd} failed: {pmErrStr(-1)}\n")

    def close_agent(self) -> None:
        agent, self.agent = self.agent, None
        if agent is not None:
            agent.close()

    def opened(self, agent: Driver) -> None:
        self.agent = agent
        self.profile = Profile()
        self.profile_changed = True

    def do_open_pipe(self, argv: list[str]) -> None:
        path = argv[0]
        try:
            os.stat(path)
        except OSError as exc:
            self.output.err(f"openpmda: stat {path} failed: {exc.strerror}\n")
            return
        self.close_agent()
        self.output.out(f"Start {os.path.basename(path)} PMDA: {' '.join(argv)}\n")
        try:
            proc = spawn(argv)
        except OSError as exc:
            # PCP's dbpmda forks before it finds out: the child reports, the agent is "open"
            self.output.err(f"execvp: {exc.strerror}\n")
            dead = DeadChannel()
            agent = DaemonAgent(self, path, dead.rfd, dead.wfd, dead=dead)
        else:
            assert proc.stdin is not None and proc.stdout is not None
            agent = DaemonAgent(self, path, proc.stdout.fileno(), proc.stdin.fileno(), proc=proc)
            self.pid = proc.pid
        self.opened(agent)
        agent.handshake(self.creds_timeout)

    def do_open_unix(self, path: str) -> None:
        try:
            os.stat(path)
        except OSError as exc:
            self.output.err(f"opensocket: {path}: {exc.strerror}\n")
            return
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.close_agent()
        try:
            sock.connect(path)
        except OSError as exc:
            self.output.err(f"opensocket: connect: {exc.strerror}\n")
            sock.close()
            return
        self.output.out(f"Connect to PMDA on socket {path}\n")
        self._socket_opened(sock, path)

    def do_open_inet(self, port: int, ipv6: bool) -> None:
        family = socket.AF_INET6 if ipv6 else socket.AF_INET
        try:
            sock = socket.socket(family, socket.SOCK_STREAM)
        except OSError as exc:
            self.output.err(f"opensocket: socket: {exc.strerror}\n")
            return
        self.close_agent()
        try:
            # __pmSockAddrSetPort's htons keeps the low 16 bits (as pmdaInet does)
            sock.connect(("::1" if ipv6 else "127.0.0.1", port & 0xFFFF))
        except (OSError, OverflowError) as exc:
            self.output.err(f"opensocket: connect: {getattr(exc, 'strerror', None) or exc}\n")
            sock.close()
            return
        where = f"{'ipv6' if ipv6 else 'inet'} port {port}"
        self.output.out(f"Connect to PMDA on {where}\n")
        self._socket_opened(sock, where)

    def _socket_opened(self, sock: socket.socket, name: str) -> None:
        agent = DaemonAgent(self, name, sock.fileno(), sock.fileno(), sock=sock)
        self.opened(agent)
        agent.handshake(self.creds_timeout)

    def do_open_dso(self, spec: str, class_name: str | None, domain: int | None) -> None:
        if class_name and not _is_python(spec):  # PCP's form: a C library and its init
            self.open_library(spec, class_name, domain or 0)
            return
        if class_name and ":" not in spec.rsplit("/", 1)[-1]:
            spec = f"{spec}:{class_name}"
        log = logging.getLogger(f"dbpmda.{spec}")
        if not log.handlers:
            handler = logging.StreamHandler(self.output.stderr)
            handler.setFormatter(logging.Formatter(f"{PROG}: %(message)s"))
            log.addHandler(handler)
            log.propagate = False
        try:
            agent = load_agent(spec, domain, log=log)
        except AgentLoadError as exc:
            self.output.err(f"opendso: {exc}\n")
            return
        except Exception as exc:  # an agent failing to start in some other way
            self.output.err(f"opendso: {spec}: {type(exc).__name__}: {exc}\n")
            return
        self.close_agent()
        self.opened(InProcAgent(self, spec, agent))

    def open_library(self, path: str, init: str, domain: int) -> None:
        """PCP's `open dso PATH INIT [DOMAIN]` for a C library, which we serve from a
        host process (purepcp.pmda.hosted) and drive as dbpmda drives a loaded DSO; a
        failure is reported as PCP's opendso() reports it."""
        from purepcp.pmda.hosted import HostedLibrary, LoadFailure

        try:
            os.stat(path)
        except OSError as exc:
            self.output.err(f"opendso: {path}: {exc.strerror}\n")
            return
        self.close_agent()
        try:
            debug = ",".join(sorted(self.debug.on))
            hosted = HostedLibrary.start(os.path.basename(path), domain, path, init, debug)
        except LoadFailure as failure:
            self.output.out(_opendso_failure(failure, path, init))
            return
        self.opened(InProcAgent(self, path, hosted, interface=hosted.interface))

    # -- statements ----------------------------------------------------------------------

    def run_statement(self, stmt: Stmt) -> bool:
        """Carry out STMT; False when it is `quit`."""
        kind = stmt.type
        if kind == "QUIT":
            return False
        if kind == "OPEN":
            self.profile_changed = True
        elif kind == "CLOSE":
            if self.agent is None:
                self.source.warn("No PMDA currently opened")
            self.close_agent()
        elif kind == "HELP":
            self.output.out(help_text(stmt.topic, stmt.full))
        elif kind == "STATUS":
            self.output.out(self.status())
        elif kind == "NAMESPACE":
            self.load_namespace(stmt.name or "")
        elif kind in _AGENT_COMMANDS:
            if self.agent is None:
                self.source.warn("No PMDA currently opened")
            else:
                self.agent_command(self.agent, stmt)
        return True

    def agent_command(self, agent: Driver, stmt: Stmt) -> None:
        """A command for the open agent, timed when `timer on` (and it succeeded)."""
        start = time.perf_counter()
        out = self.output.out
        a: Any = agent
        kind = stmt.type
        if kind == "DESC":
            out(f"PMID: {pmIDStr(stmt.pmid)}\n")
            sts = a.describe(stmt.pmid)
        elif kind == "FETCH":
            out("PMID(s):" + "".join(" " + pmIDStr(p) for p in stmt.pmids) + "\n")
            sts = a.fetch(stmt.pmids)
        elif kind == "INFO" and stmt.number == PM_TEXT_PMID:
            out(f"PMID: {pmIDStr(stmt.pmid)}\n")
            sts = a.text(stmt.pmid, stmt.number)
        elif kind == "INFO":
            out(f"pmInDom: {pmInDomStr(stmt.indom)}\n")
            sts = a.text(stmt.indom, stmt.number)
        else:
            sts = {
                "INSTANCE": lambda: a.instance(stmt.indom, stmt.number, stmt.name),
                "STORE": lambda: a.store(stmt.pmid, stmt.name or ""),
                "LABEL": lambda: a.label(stmt.number, stmt.pmid, stmt.indom),
                "PMNS_NAME": lambda: a.pmns_name(stmt.pmid),
                "PMNS_PMID": lambda: a.pmid(stmt.name),
                "PMNS_CHILDREN": lambda: a.children(stmt.name),
                "PMNS_TRAVERSE": lambda: a.traverse(stmt.name),
                "ATTR": lambda: a.attr(stmt.number, stmt.name),
            }[kind]()
        if sts is not None and sts >= 0 and self.timer:
            out(f"Timer: {time.perf_counter() - start:f} seconds\n")

    def status(self) -> str:
        if self.cmd_namespace is not None:
            namespace = self.cmd_namespace
        else:
            namespace = self.pmnsfile if self.pmnsfile is not None else "(default)"
        lines = ["\n", f"Namespace:              {namespace}\n"]
        if self.agent is None:
            lines.append("PMDA:                   none\n")
        else:
            lines.append(f"PMDA:                   {self.agent.name}\n")
            lines.append(self.agent.status_lines(self.pid))  # type: ignore[attr-defined]
        lines.append(f"Debug options:          {self.debug.describe()}\n")
        for label, on in (("Timer", self.timer), ("Getdesc", self.get_desc)):
            lines.append(f"{label + ':':<24}{'on' if on else 'off'}\n")
        lines.append(f"Getiname:               {'on' if self.get_iname else 'off'}\n")
        lines.append("\n" + self.profile.dump() + "\n")
        return "".join(lines)

    def load_namespace(self, path: str) -> None:
        """`namespace FILE`: load it, or report why not and reload the previous one."""
        self.cmd_namespace = path
        try:
            self.pmns = load_pmns(path)
            return
        except PMError as exc:
            self.output.err(pmns_complaint(exc))
            self.output.err(f'{PROG}: Cannot load namespace from "{path}": {pmErrStr(exc.code)}\n')
        if self.pmnsfile is None:
            self.output.err(f"{PROG}: Reload default namespace\n")
            where = default_pmns_path()
        else:
            self.output.err(f'{PROG}: Reload namespace from "{self.pmnsfile}"\n')
            where = self.pmnsfile
        try:
            self.pmns = load_pmns(where)
        except PMError as exc:
            self.output.err(pmns_complaint(exc))
            if self.pmnsfile is None:
                self.output.err(f"{PROG}: Cannot load default namespace: {pmErrStr(exc.code)}\n")
            else:
                self.output.err(
                    f'{PROG}: Cannot load namespace from "{where}": {pmErrStr(exc.code)}\n'
                )
            raise SystemExit(1) from None


_AGENT_COMMANDS = frozenset(
    {
        "DESC",
        "FETCH",
        "INSTANCE",
        "STORE",
        "INFO",
        "LABEL",
        "PMNS_NAME",
        "PMNS_PMID",
        "PMNS_CHILDREN",
        "PMNS_TRAVERSE",
        "ATTR",
    }
)


def load_pmns(path: str) -> PMNS:
    """A namespace file as pmLoadASCIINameSpace(path, 1) reads it (PMError if it cannot)."""
    try:
        return PMNS.from_file(path, dupok=True)
    except PMError:
        raise
    except OSError as exc:
        raise PMError(-(exc.errno or 5), str(exc)) from None
    except Exception as exc:  # anything else the parser trips on is a namespace problem
        raise PMError(PM_ERR_PMNS, str(exc)) from None


def pmns_complaint(exc: PMError) -> str:
    """libpcp's first line about a namespace that would not load."""
    if isinstance(exc, SourceError) and exc.code < 0 and -exc.code < 12345:
        return f'Error Parsing ASCII PMNS: Cannot open "{exc.file}"\n'
    what = exc.what if isinstance(exc, SourceError) else (exc.detail or exc.message)
    return f"Error Parsing ASCII PMNS: {what}\n"


# -- command line ---------------------------------------------------------------------------


_SHORT = "q:D:efin:U:v?"
_LONG = {
    "debug": "D",
    "echo-input": "e",
    "norc": "f",
    "interactive": "i",
    "namespace": "n",
    "creds-timeout": "q",
    "username": "U",
    "valgrind": "v",
    "help": "?",
}


def _parse_options(argv: list[str]) -> tuple[dict[str, Any], list[str]]:
    """The options (by short letter; -D may repeat) and the other arguments."""
    longopts = [
        name + ("=" if _SHORT[_SHORT.index(c) + 1 : _SHORT.index(c) + 2] == ":" else "")
        for name, c in _LONG.items()
    ]
    try:
        pairs, rest = getopt.getopt(argv, _SHORT, longopts)
    except getopt.GetoptError as exc:
        raise UsageError(getopt_message(exc)) from None
    opts: dict[str, Any] = {"D": []}
    for flag, value in pairs:
        letter = flag[1:] if not flag.startswith("--") else _LONG[flag[2:]]
        if letter == "D":
            opts["D"].append(value)
        else:
            opts[letter] = value
    return opts, rest


def _critical(err: IO[str], message: str) -> None:
    """pmNotifyErr(LOG_CRIT, ...): a dated message on stderr."""
    err.write(f"[{time.ctime()[:19]}] {PROG}({os.getpid()}) Critical: {message}\n")


def _switch_user(user: str, err: IO[str]) -> None:
    """pmSetProcessIdentity: become USER (group first), or exit."""
    try:
        entry = pwd.getpwnam(user)
    except KeyError:
        _critical(err, f"cannot find the {user} user to switch to")
        raise SystemExit(1) from None
    for what, call, ident in (
        ("setgid to gid", os.setgid, entry.pw_gid),
        ("setuid to uid", os.setuid, entry.pw_uid),
    ):
        if (os.getgid() if call is os.setgid else os.getuid()) == ident:
            continue
        try:
            if call is os.setuid and os.getgroups():
                with contextlib.suppress(PermissionError):
                    os.initgroups(user, entry.pw_gid)
            call(ident)
        except OSError as exc:
            key = "gid" if call is os.setgid else "uid"
            _critical(err, f"{what} of {user} user ({key}={ident}): {exc.strerror}")
            raise SystemExit(1) from None


def run(
    argv: list[str],
    stdin: IO[str] | None = None,
    stdout: IO[str] | None = None,
    stderr: IO[str] | None = None,
) -> int:
    """dbpmda with ARGV (no program name) on these streams; the exit status."""
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    output = Output(stdout, stderr)
    settings = _settings(argv, output)
    if isinstance(settings, int):
        return settings
    opts, rest, debug, timeout = settings
    if "U" in opts:
        try:
            _switch_user(opts["U"], stderr)
        except SystemExit as exc:
            return int(exc.code or 0)
    namespace = opts.get("n")
    try:
        pmns = load_pmns(default_pmns_path() if namespace is None else namespace)
    except PMError as exc:
        if namespace is None:
            output.err(f"{PROG}: Cannot load default namespace: {pmErrStr(exc.code)}\n")
        else:
            output.err(pmns_complaint(exc))
            output.err(f'{PROG}: Cannot load namespace from "{namespace}": {pmErrStr(exc.code)}\n')
        return 1
    script: IO[str] | None = None
    if rest:
        try:
            script = open(rest[0], errors="surrogateescape", newline="")  # noqa: SIM115
        except OSError as exc:
            output.err(f"{PROG}: cannot open {rest[0]}: {exc.strerror}\n")
            return 1
    stream = script if script is not None else (stdin if stdin is not None else sys.stdin)
    tty = script is None and stdin is None and _isatty(sys.stdin)
    rcfile = None
    if "f" not in opts and os.access(".dbpmdarc", os.R_OK):
        with contextlib.suppress(OSError):
            rcfile = open(".dbpmdarc", errors="surrogateescape", newline="")  # noqa: SIM115
    source = Source(
        stream,
        output,
        echo="e" in opts,
        interactive="i" in opts or tty,
        rcfile=rcfile,
        readline_input=_readline_input() if tty else None,
    )
    session = Session(output, source, pmns=pmns, pmnsfile=namespace)
    session.debug = debug
    session.creds_timeout = timeout
    try:
        return _loop(session, source)
    except KeyboardInterrupt:
        with contextlib.suppress(OSError):
            output.out("\n")
        return 130
    except BrokenPipeError:  # whoever read our output has gone (dbpmda ... | head)
        with contextlib.suppress(Exception):
            os.dup2(os.open(os.devnull, os.O_WRONLY), stdout.fileno())
        return 1
    except SystemExit as exc:
        return int(exc.code or 0)
    finally:
        session.close_agent()
        if script is not None:
            script.close()


def _settings(argv: list[str], output: Output) -> tuple[dict, list[str], DebugOptions, int] | int:
    """The command line's options, script, debug flags and -q timeout, or the exit
    status after printing the usage."""
    debug = DebugOptions()
    try:
        opts, rest = _parse_options(argv)
        if len(rest) > 1:
            raise UsageError("")
        errors = []
        for spec in opts["D"]:
            try:
                debug.change(spec)
            except PMError:
                errors.append(f"{PROG}: unrecognized debug flag specification ({spec})")
        timeout = 3
        if "q" in opts:
            try:
                timeout = int(opts["q"])
                if timeout <= 0:
                    raise ValueError
            except ValueError:
                errors.append(f"{PROG}: -q requires a positive numeric argument")
        if errors:
            raise UsageError("\n".join(errors))
        if "?" in opts:
            raise UsageError("")
    except UsageError as exc:
        message = str(exc)
        if message and not message.startswith(PROG):
            message = f"{PROG}: {message}"
        output.err((message + "\n" if message else "") + _USAGE)
        return 1
    return opts, rest, debug, timeout


def _loop(session: Session, source: Source) -> int:
    parser = Parser(Lexer(source), session)
    while True:
        try:
            stmt = parser.parse()
        except ParseAbort:
            stmt = None
        if source.at_eof:
            if source.interactive:
                session.output.out("\n")
            return 0
        if stmt is not None and not session.run_statement(stmt):
            return 0


def _isatty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError, io.UnsupportedOperation):
        return False


def _readline_input():
    """input() with GNU readline's editing and history, when the platform has it."""
    with contextlib.suppress(ImportError):
        import readline  # noqa: F401  (importing it is what turns editing on)
    return input


def main(argv: list[str] | None = None) -> int:
    """The dbpmda command."""
    if argv is None:
        argv = sys.argv[1:]
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, ValueError):
            stream.reconfigure(errors="surrogateescape")  # type: ignore[union-attr]
    stdin = None
    if not _isatty(sys.stdin):
        with contextlib.suppress(AttributeError, ValueError):
            sys.stdin.reconfigure(errors="surrogateescape", newline="")  # type: ignore[union-attr]
    try:
        return run(argv, stdin)
    except LayoutError as exc:  # a bad $PUREPCP_CONF line: one line, not a traceback
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 1


__all__ = ["Session", "main", "run"]


def _is_python(spec: str) -> bool:
    """Whether `open dso`'s SPEC names a Python agent (a module, or a .py file)."""
    from purepcp.pmda.specs import is_python_spec

    return is_python_spec(spec)


def _opendso_failure(failure: Any, path: str, init: str) -> str:
    """Why the C library at PATH could not be opened, as PCP's dbpmda prints it."""
    if failure.kind == "attach":
        return f'Error attaching DSO "{path}"\n{failure.detail}\n\n'
    if failure.kind == "entry":
        return f'Error: couldn\'t find init function "{init}" in DSO "{path}"\n'
    if failure.kind == "init":
        why = pmErrStr(int(failure.detail))
        return f'Error: initialization routine "{init}" failed in DSO "{path}": {why}\n'
    if failure.kind == "interface":
        version = failure.detail
        return f'Error: Unsupported PMDA interface version {version} returned by DSO "{path}"\n'
    return f'Error attaching DSO "{path}"\n{failure}\n\n'
