"""pmcd.conf, read exactly as PCP 6.0.3's pmcd reads it (src/pmcd/src/config.c).

`parse_config` / `load_config` give a `PmcdConfig`: the agent lines that parsed
(`AgentLine`, in file order), the `[access]` statements (`AccessRule`) and the
access lists built from them (`AccessControl`), every message pmcd would have
printed (`ConfigMessage`, PCP's wording, with file and line), and pmcd's verdict
(`ok`).  Nothing is printed, started or connected.

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
other dso lines parse as in PCP and `AgentLine.load_problem` says why a C DSO
cannot be loaded, for the daemon to report when it starts the agent.
"""

from __future__ import annotations

import errno
import io
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Literal

from purepcp.pmapi.errors import pmErrStr

from .access import (
    PMCD_OP_ALL,
    PMCD_OP_FETCH,
    PMCD_OP_NONE,
    PMCD_OP_STORE,
    AccessBuilder,
    AccessControl,
    AccessRule,
    Lookups,
    PmcdOp,
    RuleKind,
)

__all__ = [
    "MAXDOMID",
    "AgentChanges",
    "AgentLine",
    "AgentType",
    "ConfigMessage",
    "PmcdConfig",
    "agents_differ",
    "compare_agents",
    "load_config",
    "parse_config",
]

MAXDOMID = 510  # 511 is DYNAMIC_PMID
#: How pmcd.conf names pmcd's own agent in our form (a dso line's MODULE:CLASS).
PMCD_AGENT = "purepcp.pmcd.pmcd_agent:PmcdAgent"
LINEBUF_SIZE = 200  # pmcd's line buffer starts at, and grows by, this many bytes

AgentKind = Literal["dso", "pipe", "socket"]
SocketFamily = Literal["inet", "ipv6", "unix"]


class AgentType(IntEnum):
    """pmcd's agent IPC types (AgentInfo.ipcType), with pmcd.h's names and numbers."""

    AGENT_DSO = 0
    AGENT_SOCKET = 1
    AGENT_PIPE = 2


_MODULE = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*\Z")
_LIBRARY = re.compile(r"\.(so|dylib|dll)\Z")


def _is_module(path: str) -> bool:
    """Whether a dso PATH names a Python module (our extension) rather than a library."""
    return bool(_MODULE.match(path)) and not _LIBRARY.search(path)


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
    def load_problem(self) -> str | None:
        """Why this pmcd cannot start the agent in-process (a C DSO), or None."""
        if self.kind != "dso" or self.python_spec is not None:
            return None
        return (
            f'pmcd: cannot load "{self.name}" agent: {self.path} is a C DSO '
            f"(entry {self.entry}); this pmcd loads only Python agents in-process "
            "(dso CLASS module or dso CLASS /path/file.py), or run it as a pipe agent"
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
# the scanner: pmcd's line buffer, byte for byte

_NL, _NUL = 0x0A, 0x00
_SPACE = frozenset(b" \t\n\v\f\r")
_DELIMS = frozenset(b",:;[]")
_DIGITS = frozenset(b"0123456789")


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


class _LineBuffer:
    """pmcd's static line buffer: its size outlives a file (and, in pmcd, a reload)."""

    def __init__(self) -> None:
        self.data = bytearray()


class _Scanner:
    """GetNextLine, SkipWhitespace and FindNextToken over one file's bytes."""

    def __init__(self, data: bytes, lines: _LineBuffer, emit: Callable[[str, int], None]) -> None:
        self.stream = io.BytesIO(data)
        self.feof = False
        self.lb = lines
        self.emit = emit
        self.init = False
        self.error = False
        self.doing_access = False
        self.quoted = False
        self.token = 0
        self.tokenend = 0
        self.n_lines = 0
        self.linesize = 0

    # -- buffer access

    def ch(self, i: int) -> int:
        """The byte at I; past the buffer, a newline (see below)."""
        # pmcd only reads past its string after cutting the newline off a bad dso
        # line; it then reads on through heap memory, and where we tried it, it met
        # a newline there and went on with the next line
        buf = self.lb.data
        return buf[i] if 0 <= i < len(buf) else _NL

    @property
    def cur(self) -> int:
        return self.ch(self.token)

    def _fgets(self, limit: int) -> bytes | None:
        """fgets(3): up to LIMIT-1 bytes, through a newline; None at end of file."""
        data = self.stream.readline(limit - 1)
        if not data:
            self.feof = True
            return None
        if len(data) < limit - 1 and not data.endswith(b"\n"):
            self.feof = True
        return data

    def _strlen(self) -> int:
        buf = self.lb.data
        end = buf.find(b"\0")
        return len(buf) if end < 0 else end

    def get_next_line(self) -> None:
        """The next line into the buffer, continuation lines joined."""
        buf = self.lb.data
        if not buf:
            buf.extend(bytes(LINEBUF_SIZE))
        buf[0] = _NUL
        self.token = 0
        if self.feof:
            return
        end, still, at_eof = 0, len(buf), False
        while True:
            data = self._fgets(still)
            if data is None:
                at_eof = True
            else:
                buf[end : end + len(data) + 1] = data + b"\0"
            linesize = self._strlen()
            more = 0
            if linesize == 0:
                break
            if buf[linesize - 1] != _NL:
                if self.feof:
                    buf[linesize] = _NL  # final line without a newline: add one
                    if linesize + 1 < len(buf):
                        linesize += 1
                        buf[linesize] = _NUL
                        break
                more = 1
            elif linesize > 1 and buf[linesize - 2] == ord("\\"):
                buf[linesize - 2] = ord(" ")
                linesize -= 1
                more = 2
            if not more:
                break
            if len(buf) > 10 * LINEBUF_SIZE:
                self.emit(
                    f"pmcd config[line {self.n_lines + 1}]: Error: ridiculously long line "
                    f"({len(buf)} characters)",
                    self.n_lines + 1,
                )
                buf[0] = _NUL
                self.error = True
                self.linesize = linesize
                return
            buf.extend(bytes(LINEBUF_SIZE))
            end = linesize
            still = LINEBUF_SIZE + more
            if at_eof:
                buf[end + 1] = _NUL
                linesize += 1
                break
        self.linesize = linesize
        self.n_lines += 1

    def skip_whitespace(self) -> None:
        while self.cur:
            c = self.cur
            if c in _SPACE:
                if c == _NL:
                    return
                self.token += 1
            elif c == ord("#"):
                self.token = self.linesize - 1
                return
            else:
                return

    def next(self, source: str) -> None:
        """FindNextToken: move to the next token, setting token..tokenend."""
        while True:
            if self.init:
                if self.cur == _NUL or self.error:
                    return
                if self.cur == _NL:
                    self.get_next_line()
                else:
                    if self.quoted:
                        self.tokenend += 1
                        self.quoted = False
                    self.token = self.tokenend
                self.skip_whitespace()
            else:
                self.init = True
                self.error = False
                self.get_next_line()
                self.skip_whitespace()
            if not (self.doing_access and self.cur == _NL):
                break

        c = self.cur
        if c in (_NUL, _NL):
            self.tokenend = self.token
            return
        if self.doing_access and c in _DELIMS:
            self.tokenend = self.token + 1
            return
        raw = self.token
        self.tokenend = self.token + 1
        if c == ord("#"):
            self.token = self.tokenend = self.linesize - 1
        else:
            self._find_end(source)
            if self.error:
                return
        if self.ch(raw) == ord('"'):
            self.token += 1
            self.quoted = True
        else:
            self.quoted = False

    def _find_end(self, source: str) -> None:
        """The rest of FindNextToken: where a word or quoted string ends."""
        in_quotes = self.cur == ord('"')
        fix = False
        limit = len(self.lb.data)
        while True:
            got_end = self.ch(self.tokenend) in _SPACE
            while not got_end:
                c = self.ch(self.tokenend)
                if c == ord("#"):
                    if self.ch(self.tokenend - 1) == ord("\\") or in_quotes:
                        fix = True
                    else:
                        got_end = True
                elif c in _DELIMS:
                    got_end = self.doing_access and not in_quotes
                elif c == ord('"'):
                    if self.ch(self.tokenend - 1) == ord("\\"):
                        fix = True
                    elif in_quotes:
                        in_quotes = False
                        got_end = True
                else:
                    got_end = c in _SPACE
                if got_end:
                    break
                self.tokenend += 1
            if in_quotes:
                while self.ch(self.tokenend) in _SPACE and self.ch(self.tokenend) != _NL:
                    self.tokenend += 1
            if not (in_quotes and self.ch(self.tokenend) != _NL):
                break
        if in_quotes:
            self.error = True
            self.lb.data[self.token] = _NUL
            self.tokenend = self.token
            self.emit(
                f"{source} config[line {self.n_lines}]: Error: unterminated quoted string",
                self.n_lines,
            )
            return
        if fix:
            # drop each backslash before # or ", moving the token's end-aligned bytes up
            buf = self.lb.data
            start, stop = self.token, min(self.tokenend, limit - 1)
            kept = bytearray(
                buf[i]
                for i in range(start, stop + 1)
                if not (buf[i] == ord("\\") and self.ch(i + 1) in (ord("#"), ord('"')))
            )
            buf[stop + 1 - len(kept) : stop + 1] = kept
            self.token = stop + 1 - len(kept)

    # -- token tests --------------------------------------------------------

    def token_bytes(self) -> bytes:
        return bytes(self.lb.data[self.token : self.tokenend])

    def copy(self) -> str:
        """CopyToken."""
        return _text(self.token_bytes())

    def is_(self, word: str) -> bool:
        """TokenIs: the token is WORD, ignoring case."""
        return self.token_bytes().lower() == word.encode().lower()

    def is_number(self) -> bool:
        """TokenIsNumber: all digits (and not empty)."""
        if self.token == self.tokenend:
            return False
        p = self.token
        while self.ch(p) in _DIGITS:
            p += 1
        return p == self.tokenend

    def number(self) -> int:
        """TokenNumVal: the leading digits' value, wrapping as a C int does."""
        value, p = 0, self.token
        while self.ch(p) in _DIGITS:
            value = _int32(value * 10 + self.ch(p) - ord("0"))
            p += 1
        return value

    def rest_of_line(self) -> str:
        """From the token to the end of the buffer's string (pmcd prints this for bad paths)."""
        buf = self.lb.data
        end = buf.find(b"\0", self.token)
        return _text(bytes(buf[self.token : len(buf) if end < 0 else end]))

    def skip_line(self, source: str) -> None:
        """SkipLine."""
        while self.cur and self.cur != _NL:
            self.next(source)
        self.next(source)


# ---------------------------------------------------------------------------
# the parser


class _Failed(Exception):
    """A statement or agent line was refused (its message already emitted)."""


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
        self.lines = _LineBuffer()
        self.s = _Scanner(b"", self.lines, self.emit)  # replaced for each file

    def emit(self, text: str, line: int | None = None) -> None:
        self.messages.append(
            ConfigMessage(text, self.file, self.s.n_lines if line is None else line)
        )

    def error(self, source: str, what: str) -> None:
        self.emit(f"{source} config[line {self.s.n_lines}]: Error: {what}")

    # -- ReadConfigFiles ----------------------------------------------------

    def read(self, config: bytes, access: bytes | None) -> bool:
        s = self.s = _Scanner(config, self.lines, self.emit)
        source = "pmcd"
        sts = 0
        s.next(source)
        while s.cur and not s.error:
            if s.cur == _NL:
                s.skip_line(source)
                continue
            if s.cur == ord("["):
                break
            sts = self._agent_line(source)
            s.skip_line(source)
        if s.error:
            self.emit(f"{source} config: Can't continue, giving up")
            sts = -1
        if s.cur == ord("[") and sts != -1 and not self._access_section(source):
            sts = -1
        if sts >= 0 and access is not None:
            self.file = f"{self.path}.access" if self.path else None
            s = self.s = _Scanner(access, self.lines, self.emit)
            s.doing_access = True
            s.next("access")
            if not self._access("access"):
                sts = -1
        return sts >= 0

    def _agent_line(self, source: str) -> int:
        """One agent line: 0 or -1, which becomes pmcd's status (the last line decides)."""
        s = self.s
        label = s.copy()
        s.next(source)
        if not s.is_number():
            self.error(source, f'expected domain number for "{label}" agent')
            return -1
        domain = s.number()
        s.next(source)
        if domain < 0 or domain > MAXDOMID:
            self.error(source, f'Illegal domain number ({domain}) for "{label}" agent')
            return -1
        for other in self.agents:
            if other.domain == domain:
                self.error(
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
                self.error(source, "expected `dso', `socket' or `pipe'")
                return -1
        except _Failed:
            return -1
        self.agents.append(agent)
        return 0

    def _dso(self, source: str, label: str, domain: int) -> AgentLine:
        """ParseDso (PATH may also be a Python module: our extension)."""
        s, line = self.s, self.s.n_lines
        s.next(source)
        if s.cur == _NL:
            self.error("pmcd", "expected DSO entry point")
            raise _Failed
        entry = s.copy()
        s.next(source)
        if s.cur == _NL:
            self.error("pmcd", "expected DSO pathname")
            raise _Failed
        path = s.copy()
        if not path.startswith("/") and not _is_module(path):
            rest = s.rest_of_line()
            if rest.endswith("\n"):
                # pmcd cuts the newline off its line buffer to print this, so the
                # scanner meets the end of its string there (see _Scanner.ch)
                buf = self.lines.data
                buf[buf.find(b"\0", s.token) - 1] = _NUL
                rest = rest[:-1]
            self.error("pmcd", f'path "{rest}" to PMDA is not absolute')
            raise _Failed
        s.next(source)
        if s.cur != _NL:
            self.error("pmcd", "too many parameters for DSO")
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
            self.error(source, "expected socket address domain (`inet', `ipv6', or `unix')")
            raise _Failed
        s.next(source)
        port: int | None = None
        name: str | None = None
        if s.cur == _NL:
            self.error(source, "expected socket port name or number")
            raise _Failed
        if s.is_number():
            port = s.number()
        else:
            name = s.copy()
        s.next(source)
        if family != "unix" and name is not None:
            port = self.lookups.service_port(name)
            if port is None:
                self.error(source, f"failed to get port number for port name {name}")
                raise _Failed
        argv = self._argv(source) if s.cur != _NL else ()
        return AgentLine(
            label, domain, line, "socket", argv=argv, family=family, port=port, socket_name=name
        )

    def _pipe(self, source: str, label: str, domain: int) -> AgentLine:
        """ParsePipe."""
        s, line = self.s, self.s.n_lines
        s.next(source)
        if not s.is_("binary"):
            self.error(source, "pipe PDU type expected (`binary')")
            raise _Failed
        notready = False
        while True:
            s.next(source)
            if s.cur == _NL:
                self.error(source, "command to create pipe agent expected.")
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
            if not (s.cur and s.cur != _NL):
                return tuple(args)

    # -- the access section -------------------------------------------------

    def _access_section(self, source: str) -> bool:
        """ParseAccessControls: the `[access]` line in its three spellings, then statements."""
        s = self.s
        s.doing_access = True
        if s.is_("[access]"):
            s.next(source)
        else:
            if s.is_("["):
                s.next(source)
                if not s.is_("access"):
                    self.error(source, '"access" keyword expected')
                    return False
            elif not s.is_("[access"):
                self.error(source, '"access" keyword expected')
                return False
            s.next(source)
            if s.cur != ord("]"):
                self.error(source, "']' expected")
                return False
            s.next(source)
        return self._access("pmcd")

    def _access(self, source: str) -> bool:
        """ParseAccess: statements to the end of the file."""
        s = self.s
        ok, count, creds = True, 0, False
        while s.cur and not s.error:
            if s.is_("allow"):
                allow = True
            elif s.is_("disallow"):
                allow = False
            else:
                self.error(source, "allow or disallow statement expected")
                ok = False
                while s.cur and not s.error and s.cur != ord(";"):
                    s.next(source)
                if s.cur and not s.error and s.cur == ord(";"):
                    s.next(source)
                    continue
                return False
            s.next(source)
            kind: RuleKind = "host"
            if s.is_("user") or s.is_("users"):
                kind = "user"
                s.next(source)
            elif s.is_("group") or s.is_("groups"):
                kind = "group"
                s.next(source)
            elif s.is_("host") or s.is_("hosts"):
                s.next(source)
            result = self._statement(source, allow, kind)
            if result < 0:
                ok = False
            elif kind != "host":
                creds = True
            if result > 0:
                count += 1
            while s.cur and not s.error and s.cur != ord(";"):
                s.next(source)
            if not s.cur or s.error:
                return False
            s.next(source)
        if not ok:
            return False
        if count == 0:
            self.error(source, "no valid statements in [access] section")
            return False
        if creds:
            self.builder.creds_required = True
        return True

    def _statement(self, source: str, allow: bool, kind: RuleKind) -> int:
        """ParseHosts / ParseUsers / ParseGroups: -1 bad, 0 nothing added, 1 added."""
        s = self.s
        try:
            names = self._names(source, kind)
            s.next(source)
            spec, deny, maxcons = self._ops(source, allow)
        except _Failed:
            return -1
        line = s.n_lines
        self.rules.append(AccessRule(allow, kind, tuple(names), spec, deny, maxcons, line, source))
        add = {
            "host": self.builder.add_host,
            "user": self.builder.add_user,
            "group": self.builder.add_group,
        }[kind]
        added = 0
        for name in names:
            status, notes = add(name, spec, deny, maxcons)
            for note in notes:
                self.emit(note, line)
            if status >= 0:
                added = 1
                continue
            ignorable = kind == "host" and status in (-errno.EHOSTUNREACH, -errno.EHOSTDOWN)
            if ignorable:
                self.emit("Warning: the following access control specification will be ignored")
            self.emit(
                f"{source} config[line {s.n_lines}]: Warning: access control error for "
                f"{kind} '{name}': {pmErrStr(status)}"
            )
            if not ignorable:
                return -1
        return added

    def _names(self, source: str, kind: str) -> list[str]:
        """ParseNames: a comma-separated list ending at ':'."""
        s, names, another = self.s, [], True
        while s.cur and another and (s.tokenend - s.token > 1 or s.cur not in (ord(":"), ord(";"))):
            names.append(s.copy())
            s.next(source)
            if s.cur not in (ord(","), ord(":")):
                self.error(source, f"',' or ':' expected after \"{names[-1]}\"")
                raise _Failed
            if s.cur == ord(","):
                s.next(source)
                another = True
            else:
                another = False
        if not names:
            self.error(source, f"no {kind}s in allow/disallow statement")
            raise _Failed
        if another:
            self.error(source, f"{kind} expected after ','")
            raise _Failed
        if s.cur != ord(":"):
            self.error(source, f"':' expected after \"{names[-1]}\"")
            raise _Failed
        return names

    def _ops(self, source: str, allow: bool) -> tuple[PmcdOp, PmcdOp, int]:
        """ParseAccessSpec: the operations list, as (spec_ops, deny_ops, max connections)."""
        state = {"spec": 0, "deny": 0, "max": 0}
        self._ops_list(source, allow, state, recursion=False)
        return PmcdOp(state["spec"]), PmcdOp(state["deny"]), state["max"]

    def _ops_list(self, source: str, allow: bool, st: dict[str, int], recursion: bool) -> None:
        s = self.s
        have_ops = have_all = have_comma = False
        if s.cur == ord(";"):
            self.error(source, "empty or incomplete permissions list")
            raise _Failed
        if not recursion:
            st["max"] = 0
        while s.cur and s.cur != ord(";"):
            op = 0
            if s.is_("fetch"):
                op = PMCD_OP_FETCH
            elif s.is_("store"):
                op = PMCD_OP_STORE
            elif s.is_("all"):
                if have_ops:
                    self.error(source, 'can\'t have "all" mixed with specific permissions')
                    raise _Failed
                have_all = True
                if recursion:
                    self.error(source, 'can\'t have "all" within an "all except"')
                    raise _Failed
                s.next(source)
                st["deny"] = PMCD_OP_NONE if allow else PMCD_OP_ALL
                if s.is_("except"):
                    s.next(source)
                    self._ops_list(source, not allow, st, recursion=True)
                st["spec"] = PMCD_OP_ALL
            elif s.is_("maximum") or s.is_("unlimited"):
                unlimited = s.cur in (ord("u"), ord("U"))
                if st["max"]:
                    self.error(source, "connection limit already specified")
                    raise _Failed
                if recursion and not have_ops:
                    self.error(source, 'connection limit may not immediately follow "all except"')
                    raise _Failed
                if recursion == allow:  # a disallow statement, allowing for "all except"
                    self.error(source, "can't specify connection limit in a disallow statement")
                    raise _Failed
                if unlimited:
                    st["max"] = -1  # and no next token: "connections" is never seen
                else:
                    s.next(source)
                    if not s.is_number() or s.number() <= 0:
                        self.error(source, "maximum connection limit must be a positive number")
                        raise _Failed
                    st["max"] = s.number()
                    s.next(source)
                if not s.is_("connections"):
                    self.error(source, '"connections" expected')
                    raise _Failed
                s.next(source)
            else:
                self.error(source, "bad access specifier")
                raise _Failed
            if op:
                if have_all:
                    self.error(source, 'can\'t have "all" mixed with specific permissions')
                    raise _Failed
                have_ops = True
                st["spec"] |= op
                if allow:
                    st["deny"] &= ~op
                else:
                    st["deny"] |= op
                s.next(source)
            if s.cur not in (ord(","), ord(";")):
                self.error(source, "',' or ';' expected in permission list")
                raise _Failed
            if s.cur == ord(","):
                have_comma = True
                s.next(source)
            else:
                have_comma = False
        if have_comma:
            self.error(source, "misplaced (trailing) ',' in permission list")
            raise _Failed


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


# ---------------------------------------------------------------------------
# reloading


def agents_differ(a: AgentLine, b: AgentLine) -> bool:
    """pmcd's AgentsDiffer: must the agent be restarted to go from A to B?

    As in PCP, the label and a pipe's `notready` do not count, and neither does a
    socket's name: only its family, port and command.
    """
    if a.domain != b.domain or a.kind != b.kind:
        return True
    if a.kind == "dso":
        return (a.path, a.entry) != (b.path, b.entry)
    if a.kind == "socket":
        return (a.family, a.port, a.argv) != (b.family, b.port, b.argv)
    return a.argv != b.argv


@dataclass(frozen=True)
class AgentChanges:
    """What a reload does to the agents, by domain."""

    added: tuple[AgentLine, ...]  # start these
    removed: tuple[AgentLine, ...]  # stop these
    changed: tuple[tuple[AgentLine, AgentLine], ...]  # (old, new): stop old, start new
    kept: tuple[tuple[AgentLine, AgentLine], ...]  # (old, new): keep the running agent

    @property
    def any(self) -> bool:
        return bool(self.added or self.removed or self.changed)


def compare_agents(
    old: PmcdConfig | Sequence[AgentLine], new: PmcdConfig | Sequence[AgentLine]
) -> AgentChanges:
    """Which agents a reload from OLD to NEW adds, removes, restarts and keeps."""
    old_agents = old.agents if isinstance(old, PmcdConfig) else tuple(old)
    new_agents = new.agents if isinstance(new, PmcdConfig) else tuple(new)
    before = {a.domain: a for a in old_agents}
    after = {a.domain: a for a in new_agents}
    added = tuple(a for a in new_agents if a.domain not in before)
    removed = tuple(a for a in old_agents if a.domain not in after)
    changed, kept = [], []
    for agent in new_agents:
        previous = before.get(agent.domain)
        if previous is not None:
            (changed if agents_differ(previous, agent) else kept).append((previous, agent))
    return AgentChanges(added, removed, tuple(changed), tuple(kept))
