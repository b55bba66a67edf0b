"""pmie's control file: which pmies pmie_check starts and stops and pmie_daily rotates.

$PCP_PMIECONTROL_PATH (else $PCP_SYSCONF_DIR/pmie/control) and its .d directory, in
pmapi.controlfile's shape, with a log file in the fourth field:

    host  primary(y/n)  socks(y/n)  logfile  pmie-arguments...

PCP_LOG_DIR is replaced before a line is read, LOCALHOSTNAME in a log file by this
host's name (and a host LOCALHOSTNAME, or the primary's, is pmie's local:).  Version 1.0
lines ($version=1.0) have no primary field.  The two scripts read lines differently, and
say different words about them, so the reader takes its rules from a Dialect:
pmie_check refuses a missing or bad version, y/n fields that are neither, and arguments
not starting with a hyphen; pmie_daily only counts the fields.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from purepcp.pmapi.controlfile import ControlReader, Message


@dataclass(frozen=True)
class PmieLine:
    """One pmie to manage: its control line's fields, after substitution."""

    file: str
    line: int
    host: str  # pmie's -h: local: for the primary and LOCALHOSTNAME
    primary: bool
    socks: bool
    logfile: str  # LOCALHOSTNAME replaced, its directory's symbolic links resolved
    args: str  # pmie's arguments, as shell words
    env: tuple[tuple[str, str], ...] = ()  # the assignments in force

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


def default_control_path(env: Mapping[str, str]) -> str:
    """$PCP_PMIECONTROL_PATH, else $PCP_SYSCONF_DIR/pmie/control."""
    path = env.get("PCP_PMIECONTROL_PATH")
    if path:
        return path
    return os.path.join(env.get("PCP_SYSCONF_DIR", "/etc/pcp"), "pmie", "control")


def unsymlink(path: str) -> str:
    """PCP's _unsymlink_path: PATH with its directory's real path, when it has one."""
    if not path:
        return path
    directory = os.path.dirname(path) or "."
    if not os.path.isdir(directory):
        return path
    return os.path.join(os.path.realpath(directory), os.path.basename(path))


@dataclass(frozen=True)
class Dialect:
    """How one script reads and reports control lines."""

    strict: bool  # pmie_check's checks of version, y/n fields and arguments
    backups: tuple[str, ...]  # names (anywhere in the path) of backup files skipped
    verbose_fields: bool  # -VV prints each line's fields (pmie_daily)


CHECK = Dialect(strict=True, backups=(".rpmsave", ".rpmnew"), verbose_fields=False)
DAILY = Dialect(
    strict=False,
    backups=(".rpmsave", ".rpmnew", ".rpmorig", ".dpkg-dist", ".dpkg-old", ".dpkg-new"),
    verbose_fields=True,
)


def report(dialect: Dialect, prog: str, kind: str, where: str, host: str, text: str) -> Message:
    """A warning or error about the control line at WHERE, in DIALECT's script's words."""
    label = kind.capitalize()
    if not dialect.strict:
        return Message(
            kind,
            f'{prog}: {label}: {text}\n[{where}] ... inference engine for host "{host}" unchanged',
        )
    if kind == "warning":
        return Message(kind, f"{prog} [{where}]\nWarning: {text}")
    return Message(
        kind,
        f"{prog}: [{where}]\nError: {text}\n"
        f'... automated performance reasoning for host "{host}" unchanged',
    )


@dataclass
class PmieControl(ControlReader):
    """Reads pmie control files in turn, as DIALECT's script does."""

    dialect: Dialect = CHECK
    very_verbose: bool = False
    hostname: str = field(default_factory=lambda: socket.gethostname() or "localhost")

    def warning(self, where: str, host: str, text: str) -> Message:
        return report(self.dialect, self.prog, "warning", where, host, text)

    def error(self, where: str, host: str, text: str) -> Message:
        return report(self.dialect, self.prog, "error", where, host, text)

    def parse_file(self, path: str) -> Iterator[PmieLine | Message]:
        """The messages and lines of one control file."""
        if self._is_backup(path):
            text = f'ignored backup control file "{path}"'
            if self.dialect.strict:
                yield self.warning(f"{path}:0", "", text)
            else:
                yield Message("warning", f"Warning: {text}")
            return
        text = self.read(path)
        if text is None:
            return
        file_version = ""  # (each file is read by a shell of its own)
        for where, number, words in self.lines(path, text):
            if self.dialect.verbose_fields and self.very_verbose:
                names = ("host", "primary", "socks", "log", "args")
                shown = " ".join(f'{n}="{w}"' for n, w in zip(names, words, strict=True))
                yield Message("note", f"[{where}] {shown}")
            host = words[0]
            if not host or host.startswith("#"):
                continue
            if host.startswith("$"):
                yield from self.assign(where, words)
                continue
            version = self.version or file_version
            if self.dialect.strict:
                if self.version and self.version not in ("1.0", "1.1"):
                    yield self.error(where, host, f"bad version ({self.version}) in control file")
                    return
                if not version:
                    yield self.warning(
                        where, host, "missing $version, assuming version 1.0 control format"
                    )
                    version = file_version = "1.0"
            yield from self._record(path, number, where, version, words)

    def _is_backup(self, path: str) -> bool:
        if self.dialect.strict:
            return any(b in path for b in self.dialect.backups)
        return path.endswith(self.dialect.backups)

    def _record(
        self, path: str, number: int, where: str, version: str, words: list[str]
    ) -> Iterator[PmieLine | Message]:
        host, primary, socks, logfile, args = words
        if version == "1.0" and (self.dialect.strict or primary):
            args = f"{logfile} {args}" if logfile else ""
            logfile, socks, primary = socks, primary, "n"
        if not (primary and socks and logfile and args):
            yield self.error(where, host, "insufficient fields in control file record")
            return
        if self.dialect.strict:
            problem = _strict_problem(primary, socks, args)
            if problem:
                yield self.error(where, host, problem)
                return
        logfile = unsymlink(logfile.replace("LOCALHOSTNAME", self.hostname, 1))
        if primary == "y" or host == "LOCALHOSTNAME":
            host = "local:"
        yield PmieLine(
            file=path,
            line=number,
            host=host,
            primary=primary == "y",
            socks=socks == "y",
            logfile=logfile,
            args=args,
            env=tuple(self.assignments.items()),
        )


def _strict_problem(primary: str, socks: str, args: str) -> str | None:
    """pmie_check's objection to a line's fields, in its words."""
    if primary not in ("y", "n"):
        return f'primary field in control file record must be y or n, not "{primary}"'
    if socks not in ("y", "n"):
        return f'socks field in control file record must be y or n, not "{socks}"'
    if not args.startswith("-"):
        return f'args field in control file must begin with a hyphen not "{args}"'
    return None


def pmie_config(args: str) -> str:
    """The configuration file -c in ARGS names, else "" (PCP's _get_configfile)."""
    words = args.split()
    found = ""
    for i, word in enumerate(words):
        if word == "-c" and i + 1 < len(words):
            found = words[i + 1]
        elif word.startswith("-c") and len(word) > 2:
            found = word[2:]
    return found
