"""The pmlogger control file: which pmloggers pmlogger_check and pmlogger_daily manage.

$PCP_PMLOGGERCONTROL_PATH (else $PCP_SYSCONF_DIR/pmlogger/control), then each file of
the directory of that name plus ".d" in name order, holds, one per line,

    host  primary(y/n)  socks(y/n)  directory  pmlogger-arguments...

with comments (#), blank lines and in-line variable assignments ($NAME=value, which stay
in force for every later line and file, and reach the pmlogger started).  The format's
version is such an assignment, $version=1.1; a file without one is read as version 1.0,
whose lines have no socks field (with PCP's warning).  The words PCP_ARCHIVE_DIR and
PCP_LOG_DIR are replaced by those directories before a line is read, LOCALHOSTNAME in a
directory by this host's name; a directory may be quoted ("..."), or computed ($VAR,
`cmd` or $(cmd), evaluated by the shell, as PCP's scripts do).

The parser yields, in file order, what PCP's scripts say (Message: the warnings and
errors, in PCP's words, and -N's echo of assignments) and the lines to act on
(ControlLine), so that a command interleaves its own output with them as PCP's does.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

#: Backup copies of a control file, which are never read.
BACKUP_SUFFIXES = (".rpmsave", ".rpmnew", ".rpmorig", ".dpkg-dist", ".dpkg-old", ".dpkg-new")
_ASSIGN = re.compile(r"\$([A-Za-z][A-Za-z0-9_]*)=(.*)")
_NAME_REF = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


@dataclass(frozen=True)
class ControlLine:
    """One pmlogger to manage: its control line's fields, after substitution."""

    file: str
    line: int
    host: str  # as written (LOCALHOSTNAME or a host name)
    primary: bool
    socks: bool
    directory: str  # quotes removed, computed, LOCALHOSTNAME replaced
    args: str  # pmlogger's arguments, as shell words
    env: tuple[tuple[str, str], ...] = ()  # the assignments in force

    @property
    def target(self) -> str:
        """The host pmlogger is to log: local: for the primary and LOCALHOSTNAME."""
        return "local:" if self.primary or self.host == "LOCALHOSTNAME" else self.host


@dataclass(frozen=True)
class Message:
    """Text to print where PCP's scripts print it (kind: warning, error, note)."""

    kind: str
    text: str


def control_files(control: str) -> list[str]:
    """CONTROL, then the files of CONTROL.d in POSIX name order."""
    extra = f"{control}.d"
    try:
        names = sorted(os.listdir(extra), key=lambda n: n.encode())
    except OSError:
        names = []
    return [control, *(os.path.join(extra, n) for n in names)]


def default_control_path(env: Mapping[str, str]) -> str:
    """$PCP_PMLOGGERCONTROL_PATH, else $PCP_SYSCONF_DIR/pmlogger/control."""
    path = env.get("PCP_PMLOGGERCONTROL_PATH")
    if path:
        return path
    return os.path.join(env.get("PCP_SYSCONF_DIR", "/etc/pcp"), "pmlogger", "control")


def warning(prog: str, where: str, text: str) -> Message:
    return Message("warning", f"{prog} [{where}]\nWarning: {text}")


def error(prog: str, where: str, text: str, host: str) -> Message:
    return Message(
        "error", f'{prog}: [{where}]\nError: {text}\n... logging for host "{host}" unchanged'
    )


@dataclass
class ControlParser:
    """Reads control files in turn; assignments and the version carry from one to the next."""

    prog: str
    env: dict[str, str]  # PCP's variables (PCP_ARCHIVE_DIR, PCP_LOG_DIR) and the process's
    showme: bool = False
    very_verbose: bool = False
    hostname: str = field(default_factory=lambda: socket.gethostname() or "localhost")
    assignments: dict[str, str] = field(default_factory=dict)

    @property
    def version(self) -> str:
        return self.assignments.get("version", "")

    def parse_file(self, path: str) -> Iterator[ControlLine | Message]:
        """The messages and lines of one control file."""
        if path.endswith(BACKUP_SUFFIXES):
            yield warning(self.prog, f"{path}:0", f'ignored backup control file "{path}"')
            return
        try:
            with open(path, encoding="utf-8", errors="surrogateescape") as f:
                text = f.read()
        except OSError:
            return
        yield from self.parse_text(path, text)

    def parse_text(self, path: str, text: str) -> Iterator[ControlLine | Message]:
        for key in ("PCP_ARCHIVE_DIR", "PCP_LOG_DIR"):
            text = text.replace(key, self.env.get(key, ""))
        for number, raw in enumerate(text.splitlines(), start=1):
            yield from self._line(path, number, raw)

    def _line(self, path: str, number: int, raw: str) -> Iterator[ControlLine | Message]:
        where = f"{path}:{number}"
        words = _read_fields(raw)
        host = words[0] if words else ""
        if self.very_verbose and host and not host.startswith("#"):
            names = ("host", "primary", "socks", "dir", "args")
            shown = " ".join(f'{n}="{w}"' for n, w in zip(names, _padded(words), strict=True))
            yield Message("note", f"[{where}] {shown}")
        if not host or host.startswith("#"):
            return
        if host.startswith("$"):
            yield from self._assign(where, " ".join(_padded(words)))
            return
        primary, socks, directory, args = _padded(words)[1:]
        if self.version in ("", "1.0"):
            if not self.version:
                yield warning(self.prog, where, "processing default version 1.0 control format")
                self.assignments["version"] = "1.0"
            args = f"{directory} {args}".strip() if directory else args
            directory, socks = socks, "n"
        directory, args, problem = self._dir_and_args(directory, args)
        if problem:
            yield error(self.prog, where, problem, host)
        if not (primary and socks and directory and args):
            yield error(self.prog, where, "insufficient fields in control file record", host)
            return
        yield ControlLine(
            file=path,
            line=number,
            host=host,
            primary=primary == "y",
            socks=socks == "y",
            directory=directory.replace("LOCALHOSTNAME", self.hostname, 1),
            args=args,
            env=tuple(self.assignments.items()),
        )

    def _assign(self, where: str, text: str) -> Iterator[Message]:
        """$NAME=value: remembered for later lines (PATH and IFS refused), as PCP's."""
        if self.showme:
            yield Message("note", f"# {text}")
        m = _ASSIGN.match(text)
        if m is None:
            yield warning(
                self.prog, where, "in-line command is not a variable assignment, line ignored"
            )
            return
        name, shown = m.group(1), _assignment_text(m.group(2))
        if name in ("PATH", "IFS"):
            yield warning(self.prog, where, f"cannot change ${name}, line ignored")
            return
        if self.showme:
            yield Message("note", f"+ export {name}; {name}={shown}")
        self.assignments[name] = self._expand(_assigned_value(shown))

    def _expand(self, text: str) -> str:
        scope = {**self.env, **self.assignments}
        return _NAME_REF.sub(lambda m: scope.get(m.group(1) or m.group(2), ""), text)

    def _dir_and_args(self, directory: str, args: str) -> tuple[str, str, str | None]:
        """PCP's rules for a quoted or computed directory: (directory, args, error)."""
        closer = None
        if len(directory) > 1 and directory.startswith('"') and directory.endswith('"'):
            return directory[1:-1], args, None
        if directory.startswith('"'):
            closer = '"'
        elif directory.startswith("`"):
            closer = "`"
        elif "`" in directory:
            return directory, args, f'embedded ` without initial ": {directory}'
        elif directory.startswith("$("):
            closer = ")"
        elif "$(" in directory:
            return directory, args, f'embedded $( without initial ": {directory}'
        elif "$" in directory:
            return self._shell_echo(directory), args, None
        if closer is None:
            return directory, args, None
        words = args.split()
        for i, word in enumerate(words):
            if word.endswith(closer):
                joined = " ".join([directory, *words[: i + 1]])
                return self._shell_echo(joined), " ".join(words[i + 1 :]), None
        return directory, args, f"quote not terminated: {directory} {args}"

    def _shell_echo(self, text: str) -> str:
        """The shell's `eval echo TEXT`, with the assignments in force."""
        env = {**os.environ, **self.env, **self.assignments}
        done = subprocess.run(
            ["sh", "-c", f"eval echo {text}"], capture_output=True, text=True, env=env, check=False
        )
        return done.stdout.rstrip("\n")


def _read_fields(raw: str) -> list[str]:
    """The shell's `read host primary socks dir args`: four words, then the rest."""
    text = re.sub(r"\\(.)", r"\1", raw).strip(" \t")
    words = text.split(None, 4)
    if len(words) == 5:
        words[4] = words[4].strip()
    return words


def _padded(words: Sequence[str]) -> list[str]:
    return [*words, "", "", "", "", ""][:5]


def _assignment_text(text: str) -> str:
    """The part of an assignment PCP's sed keeps: a quoted value to its closing quote,
    else the text up to the first of ; & < > |."""
    for quote in ("'", '"'):
        if text.startswith(quote) and quote in text[1:]:
            return text[: text.index(quote, 1) + 1]
    return re.split(r"[;&<>|]", text, maxsplit=1)[0]


def _assigned_value(text: str) -> str:
    """An assignment's value as the shell takes it: quoted, or up to ; & < > |."""
    if text.startswith("'"):
        end = text.find("'", 1)
        return text[1:end] if end > 0 else text[1:]
    if text.startswith('"'):
        end = text.find('"', 1)
        return text[1:end] if end > 0 else text[1:]
    return re.split(r"[;&<>|]", text, maxsplit=1)[0].strip()
