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
import socket
import subprocess
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from purepcp.pmapi.controlfile import (
    BACKUP_SUFFIXES,
    ControlReader,
    Message,
    control_files,
    warning,
)

__all__ = [
    "BACKUP_SUFFIXES",
    "ControlLine",
    "ControlParser",
    "Message",
    "control_files",
    "default_control_path",
    "error",
    "warning",
]


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


def default_control_path(env: Mapping[str, str]) -> str:
    """$PCP_PMLOGGERCONTROL_PATH, else $PCP_SYSCONF_DIR/pmlogger/control."""
    path = env.get("PCP_PMLOGGERCONTROL_PATH")
    if path:
        return path
    return os.path.join(env.get("PCP_SYSCONF_DIR", "/etc/pcp"), "pmlogger", "control")


def error(prog: str, where: str, text: str, host: str) -> Message:
    return Message(
        "error", f'{prog}: [{where}]\nError: {text}\n... logging for host "{host}" unchanged'
    )


@dataclass
class ControlParser(ControlReader):
    """pmlogger's control files: the version and other assignments carry from one to the next."""

    SUBSTITUTE = ("PCP_ARCHIVE_DIR", "PCP_LOG_DIR")

    very_verbose: bool = False
    hostname: str = field(default_factory=lambda: socket.gethostname() or "localhost")

    def parse_file(self, path: str) -> Iterator[ControlLine | Message]:
        """The messages and lines of one control file."""
        if path.endswith(BACKUP_SUFFIXES):
            yield warning(self.prog, f"{path}:0", f'ignored backup control file "{path}"')
            return
        text = self.read(path)
        if text is not None:
            yield from self._lines(path, text)

    def parse_text(self, path: str, text: str) -> Iterator[ControlLine | Message]:
        for key in self.SUBSTITUTE:
            text = text.replace(key, self.env.get(key, ""))
        yield from self._lines(path, text)

    def _lines(self, path: str, text: str) -> Iterator[ControlLine | Message]:
        for where, number, words in self.lines(path, text):
            yield from self._line(path, where, number, words)

    def _line(
        self, path: str, where: str, number: int, words: list[str]
    ) -> Iterator[ControlLine | Message]:
        host = words[0]
        if self.very_verbose and host and not host.startswith("#"):
            names = ("host", "primary", "socks", "dir", "args")
            shown = " ".join(f'{n}="{w}"' for n, w in zip(names, words, strict=True))
            yield Message("note", f"[{where}] {shown}")
        if not host or host.startswith("#"):
            return
        if host.startswith("$"):
            yield from self.assign(where, words)
            return
        primary, socks, directory, args = words[1:]
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
