"""pmcd.conf, read exactly as PCP 6.0.3's pmcd reads it (src/pmcd/src/config.c).

`parse_config` / `load_config` give a `PmcdConfig`: the agent lines that parsed
(`AgentLine`, in file order), the `[access]` statements (`AccessRule`) and the
access lists built from them (`AccessControl`), every message pmcd would have
printed (`ConfigMessage`, PCP's wording, with file and line), and pmcd's verdict
(`ok`).  Nothing is printed, started or connected.  Its scanner (pmcd's line
buffer and tokens) is `conf_scanner`, the `[access]` section's statements are
read by `conf_access`, and what a reload does to the agents is `agent_changes`.

What pmcd does, and so do we:

* Agent lines are `NAME DOMAIN dso ENTRY PATH`, `NAME DOMAIN pipe binary
  [notready ...] COMMAND ARGS...` or `NAME DOMAIN socket inet|ipv6|unix PORT|PATH
  [COMMAND ARGS...]`; keywords are case-insensitive; the `[access]` section, if
  any, comes last, and `FILE.access` (if it exists) holds more statements, without
  the `[access]` line.
* Tokens are separated by white space; `"..."` quotes (keeping white space, `#`
  and, in the access section, `,:;[]`); `\\#` and `\\"` escape; `#` starts a
  comment anywhere; a line ending in a backslash continues on the next one.
* Nothing is expanded: no `$VARIABLES`, no `~`, no globbing.  The
  `$PCP_PMDAS_DIR` in PCP's sources is replaced by `make` (and by each agent's
  Install script), so installed files hold literal paths; commands are exec'd
  directly, never through a shell.
* Errors are reported and parsing goes on with the next line, as pmcd does.  PCP
  quirks kept: only the *last* agent line's success decides whether the agent
  part is good (so earlier bad lines are reported but do not stop pmcd), and the
  `[access]` section is skipped without a word when that last line was bad; a
  relative DSO path usually ends the parse (pmcd overwrites the line's newline
  while reporting it; only a further word after the path, with no comment,
  lets it read on); a continued line counts as one line, so later line
  numbers lag behind the file's; pmcd's line buffer grows by 200 bytes for each
  continuation or long line and never shrinks, so the eleventh such growth in
  one parse is "ridiculously long"; `unlimited connections` can never parse;
  a number too large for a C int wraps around as it does in pmcd.

Our extension, for agents written in Python and loaded into pmcd's process: a
`dso` line whose PATH is a Python module (`purepcp.agents.simple`) or an absolute
`.py` file, with ENTRY the agent class (or `-` for the module's only one):

    simple  253  dso  Simple  purepcp.agents.simple
    mine    400  dso  Mine    /opt/agents/mine.py

`AgentLine.python_spec` gives what `purepcp.pmda.inproc.load_agent` takes
(`purepcp.agents.simple:Simple`).  PCP would reject the first line (PATH not absolute);
other dso lines parse as in PCP.  pmcd loads no C library into itself: a C DSO line's
agent is served by a host process as a pipe agent (`AgentLine.dso_host_argv`,
purepcp.pmda.dsohost), and `AgentLine.load_problem` says why it cannot be where PCP's
libpcp_pmda is missing.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from enum import IntEnum
from typing import Literal

from .access import AccessControl, AccessRule
from .access_builder import AccessBuilder
from .conf_access import AccessStatements
from .conf_scanner import NL, LineBuffer, Scanner
from .lookups import Lookups

__all__ = [
    "MAXDOMID",
    "AgentLine",
    "AgentType",
    "ConfigMessage",
    "PmcdConfig",
    "load_config",
    "parse_config",
]

MAXDOMID = 510  # 511 is DYNAMIC_PMID
#: How pmcd.conf names pmcd's own agent in our form (a dso line's MODULE:CLASS).
PMCD_AGENT = "purepcp.pmcd.pmcd_agent:PmcdAgent"

AgentKind = Literal["dso", "pipe", "socket"]
SocketFamily = Literal["inet", "ipv6", "unix"]


class AgentType(IntEnum):
    """pmcd's agent IPC types (AgentInfo.ipcType), with pmcd.h's names and numbers."""

    AGENT_DSO = 0
    AGENT_SOCKET = 1
    AGENT_PIPE = 2


@functools.cache
def _have_libpcp_pmda() -> bool:
    """Whether PCP's agent library is installed (what a C DSO agent needs)."""
    from ctypes.util import find_library

    return find_library("pcp_pmda") is not None


def _is_module(path: str) -> bool:
    """Whether a dso PATH names a Python module (our extension) rather than a library:
    a dotted module name, or a bare one that names a module there is (found, not
    imported); any other relative path is PCP's "not absolute"."""
    import importlib.util

    from purepcp.pmda.specs import is_module_path

    if not is_module_path(path):
        return False
    if "." in path:
        return True
    try:
        return importlib.util.find_spec(path) is not None
    except (ImportError, ValueError):
        return False


@dataclass(frozen=True)
class AgentLine:
    """One agent line of pmcd.conf that parsed: name, domain, and how pmcd reaches it."""

    name: str
    domain: int
    line: int
    kind: AgentKind
    entry: str | None = None  # dso: the init function (ours: the agent class, or "-")
    path: str | None = None  # dso: the library (ours: a module or .py file)
    argv: tuple[str, ...] = ()  # pipe: the command; socket: optional command to start
    notready: bool = False  # pipe: agent starts not ready (PMDA_NOTREADY)
    family: SocketFamily | None = None  # socket
    port: int | None = None  # socket: a number (or a service's port for inet/ipv6)
    socket_name: str | None = None  # socket: the service name, or the unix socket path

    @property
    def ipc_type(self) -> AgentType:
        """The kind as pmcd's number."""
        return AgentType[f"AGENT_{self.kind.upper()}"]

    @property
    def python_spec(self) -> str | None:
        """For a Python dso line, the spec `purepcp.pmda.inproc.load_agent` takes; else None."""
        if self.kind != "dso" or self.path is None:
            return None
        is_file = self.path.startswith("/") and self.path.endswith(".py")
        if not (is_file or _is_module(self.path)):
            return None
        return self.path if self.entry in (None, "-") else f"{self.path}:{self.entry}"

    @property
    def is_pmcd_agent(self) -> bool:
        """Whether this is pmcd's own agent: ours, or PCP's pmda_pmcd.so (domain 2), which
        ours stands in for.  pmcd answers it from its own state; a local context skips it."""
        if self.kind != "dso":
            return False
        if self.domain == 2 and (self.path or "").endswith("pmda_pmcd.so"):
            return True
        return self.python_spec == PMCD_AGENT

    @property
    def is_c_dso(self) -> bool:
        """Whether this is a C library's dso line (not pmcd's own agent): pmcd serves it
        through a host process (purepcp.pmda.dsohost), never loading C code itself."""
        return self.kind == "dso" and self.python_spec is None and not self.is_pmcd_agent

    def dso_host_argv(self, python: str) -> tuple[str, ...]:
        """The pipe agent command that serves this C DSO line."""
        entry = self.entry or f"{self.name}_init"
        return (
            python,
            "-m",
            "purepcp.pmda.dsohost",
            self.path or "",
            entry,
            str(self.domain),
            self.name,
        )

    @property
    def load_problem(self) -> str | None:
        """Why this pmcd cannot start the agent (a C DSO where PCP's libpcp_pmda is
        missing), or None."""
        if not self.is_c_dso or _have_libpcp_pmda():
            return None
        return (
            f'pmcd: cannot load "{self.name}" agent: {self.path} is a C DSO '
            f"(entry {self.entry}), and serving one needs PCP's libpcp_pmda, which is not "
            "installed; run it as a pipe agent, or install PCP's libraries"
        )

    @property
    def command_line(self) -> str | None:
        """The argv as pmcd logs it (BuildCmdLine): quoted where it has blanks."""
        if not self.argv:
            return None
        words = []
        for arg in self.argv:
            text = arg.replace('"', '\\"')
            words.append(f'"{text}"' if (" " in arg or "\t" in arg) else text)
        return " ".join(words)


@dataclass(frozen=True)
class ConfigMessage:
    """A message pmcd would print while reading its config; str() is PCP's exact text.

    `line` is the line the problem was found on, also for the libpcp notes PCP
    prints without one ("Error: Permission clash ..."; pmcd adds a timestamp).
    """

    text: str
    file: str | None = None
    line: int | None = None

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class PmcdConfig:
    """A parsed pmcd.conf (and pmcd.conf.access): what pmcd would run and allow."""

    agents: tuple[AgentLine, ...]
    access_rules: tuple[AccessRule, ...]
    access: AccessControl
    messages: tuple[ConfigMessage, ...]
    ok: bool  # pmcd's verdict: False means it would not start (or not reload)
    path: str | None = None

    def agent(self, name: str) -> AgentLine | None:
        """The agent line labelled NAME, if any."""
        return next((a for a in self.agents if a.name == name), None)


# ---------------------------------------------------------------------------
# the parser


class _Failed(Exception):
    """An agent line was refused (its message already reported)."""


class _Parser:
    """ReadConfigFiles and its helpers, over one pmcd.conf and its optional .access file."""

    def __init__(self, lookups: Lookups, path: str | None) -> None:
        self.lookups = lookups
        self.path = path
        self.file = path
        self.messages: list[ConfigMessage] = []
        self.agents: list[AgentLine] = []
        self.rules: list[AccessRule] = []
        self.builder = AccessBuilder(lookups)
        self.lines = LineBuffer()
        self.s = Scanner(b"", self.lines, self.record)  # replaced for each file

    def record(self, text: str, line: int) -> None:
        """Keep a message the scanner reports, with the file being read."""
        self.messages.append(ConfigMessage(text, self.file, line))

    # -- ReadConfigFiles ----------------------------------------------------

    def read(self, config: bytes, access: bytes | None) -> bool:
        s = self.s = Scanner(config, self.lines, self.record)
        source = "pmcd"
        sts = 0
        s.next(source)
        while s.cur and not s.error:
            if s.cur == NL:
                s.skip_line(source)
                continue
            if s.cur == ord("["):
                break
            sts = self._agent_line(source)
            s.skip_line(source)
        if s.error:
            s.note(f"{source} config: Can't continue, giving up")
            sts = -1
        if s.cur == ord("[") and sts != -1 and not self._access(source, header=True):
            sts = -1
        if sts >= 0 and access is not None:
            self.file = f"{self.path}.access" if self.path else None
            s = self.s = Scanner(access, self.lines, self.record)
            s.doing_access = True
            s.next("access")
            if not self._access("access", header=False):
                sts = -1
        return sts >= 0

    def _access(self, source: str, header: bool) -> bool:
        """The access statements from here on (after the `[access]` line, if HEADER)."""
        reader = AccessStatements(self.s, self.builder)
        ok = reader.section(source) if header else reader.statements(source)
        self.rules.extend(reader.rules)
        return ok

    def _agent_line(self, source: str) -> int:
        """One agent line: 0 or -1, which becomes pmcd's status (the last line decides)."""
        s = self.s
        label = s.copy()
        s.next(source)
        if not s.is_number():
            s.complain(source, f'expected domain number for "{label}" agent')
            return -1
        domain = s.number()
        s.next(source)
        if domain < 0 or domain > MAXDOMID:
            s.complain(source, f'Illegal domain number ({domain}) for "{label}" agent')
            return -1
        for other in self.agents:
            if other.domain == domain:
                s.complain(
                    source,
                    f'domain number for "{label}" agent clashes with "{other.name}" agent',
                )
                return -1
        try:
            if s.is_("dso"):
                agent = self._dso(source, label, domain)
            elif s.is_("socket"):
                agent = self._socket(source, label, domain)
            elif s.is_("pipe"):
                agent = self._pipe(source, label, domain)
            else:
                s.complain(source, "expected `dso', `socket' or `pipe'")
                return -1
        except _Failed:
            return -1
        self.agents.append(agent)
        return 0

    def _dso(self, source: str, label: str, domain: int) -> AgentLine:
        """ParseDso (PATH may also be a Python module: our extension)."""
        s, line = self.s, self.s.n_lines
        s.next(source)
        if s.cur == NL:
            s.complain("pmcd", "expected DSO entry point")
            raise _Failed
        entry = s.copy()
        s.next(source)
        if s.cur == NL:
            s.complain("pmcd", "expected DSO pathname")
            raise _Failed
        path = s.copy()
        if not path.startswith("/") and not _is_module(path):
            rest = s.cut_rest_of_line()
            s.complain("pmcd", f'path "{rest}" to PMDA is not absolute')
            raise _Failed
        s.next(source)
        if s.cur != NL:
            s.complain("pmcd", "too many parameters for DSO")
            raise _Failed
        return AgentLine(label, domain, line, "dso", entry=entry, path=path)

    def _socket(self, source: str, label: str, domain: int) -> AgentLine:
        """ParseSocket."""
        s, line = self.s, self.s.n_lines
        s.next(source)
        family: SocketFamily
        if s.is_("inet"):
            family = "inet"
        elif s.is_("ipv6"):
            family = "ipv6"
        elif s.is_("unix"):
            family = "unix"
        else:
            s.complain(source, "expected socket address domain (`inet', `ipv6', or `unix')")
            raise _Failed
        s.next(source)
        port: int | None = None
        name: str | None = None
        if s.cur == NL:
            s.complain(source, "expected socket port name or number")
            raise _Failed
        if s.is_number():
            port = s.number()
        else:
            name = s.copy()
        s.next(source)
        if family != "unix" and name is not None:
            port = self.lookups.service_port(name)
            if port is None:
                s.complain(source, f"failed to get port number for port name {name}")
                raise _Failed
        argv = self._argv(source) if s.cur != NL else ()
        return AgentLine(
            label, domain, line, "socket", argv=argv, family=family, port=port, socket_name=name
        )

    def _pipe(self, source: str, label: str, domain: int) -> AgentLine:
        """ParsePipe."""
        s, line = self.s, self.s.n_lines
        s.next(source)
        if not s.is_("binary"):
            s.complain(source, "pipe PDU type expected (`binary')")
            raise _Failed
        notready = False
        while True:
            s.next(source)
            if s.cur == NL:
                s.complain(source, "command to create pipe agent expected.")
                raise _Failed
            if not s.is_("notready"):
                break
            notready = True
        return AgentLine(label, domain, line, "pipe", argv=self._argv(source), notready=notready)

    def _argv(self, source: str) -> tuple[str, ...]:
        """BuildArgv: the rest of the line's tokens."""
        s, args = self.s, []
        while True:
            args.append(s.copy())
            s.next(source)
            if not (s.cur and s.cur != NL):
                return tuple(args)


# ---------------------------------------------------------------------------
# entry points


def _bytes(text: str | bytes) -> bytes:
    return text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text


def parse_config(
    text: str | bytes,
    *,
    access_text: str | bytes | None = None,
    lookups: Lookups | None = None,
    path: str | None = None,
) -> PmcdConfig:
    """Parse pmcd.conf TEXT (and pmcd.conf.access ACCESS_TEXT) as pmcd does."""
    parser = _Parser(lookups or Lookups(), path)
    ok = parser.read(_bytes(text), None if access_text is None else _bytes(access_text))
    return PmcdConfig(
        tuple(parser.agents),
        tuple(parser.rules),
        parser.builder.control(),
        tuple(parser.messages),
        ok,
        path,
    )


def load_config(path: str | os.PathLike[str], *, lookups: Lookups | None = None) -> PmcdConfig:
    """Read and parse the pmcd.conf at PATH, with PATH.access if there is one."""
    name = os.fspath(path)
    with open(name, "rb") as f:
        text = f.read()
    try:
        with open(f"{name}.access", "rb") as f:
            access: bytes | None = f.read()
    except OSError:
        access = None
    return parse_config(text, access_text=access, lookups=lookups, path=name)
