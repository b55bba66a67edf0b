"""Control files: the tables of daemons PCP's housekeeping scripts manage, one per line.

pmlogger's ($PCP_PMLOGGERCONTROL_PATH) and pmie's ($PCP_PMIECONTROL_PATH) share a shape:
the file, then each file of the directory of its name plus ".d" in POSIX name order,
holds lines of

    host  primary(y/n)  socks(y/n)  place  arguments...

(place: pmlogger's archive directory, pmie's log file), comments (#), blank lines and
in-line variable assignments ($NAME=value, which stay in force for every later line and
file, and reach the daemon started).  The format's version is such an assignment,
$version=1.1.  Fields are read as the shell's `read` reads them (backslashes dropped,
the last field the rest of the line).

This module holds what both readers share: the list of files, the field split, and the
assignment rules with PCP's warnings; each daemon's own reader (its substitutions,
its version rules, its record) builds on ControlReader.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import ClassVar

#: Backup copies of a control file, which are never read.
BACKUP_SUFFIXES = (".rpmsave", ".rpmnew", ".rpmorig", ".dpkg-dist", ".dpkg-old", ".dpkg-new")
_ASSIGN = re.compile(r"\$([A-Za-z][A-Za-z0-9_]*)=(.*)")
_NAME_REF = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
FIELDS = 5  # host primary socks place args


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


def read_fields(raw: str) -> list[str]:
    """The shell's `read host primary socks place args`: always five words, the last
    the rest of the line, missing ones empty."""
    text = re.sub(r"\\(.)", r"\1", raw).strip(" \t")
    words = text.split(None, FIELDS - 1)
    if len(words) == FIELDS:
        words[-1] = words[-1].strip()
    return [*words, *[""] * (FIELDS - len(words))]


def assignment_text(text: str) -> str:
    """The part of an assignment PCP's sed keeps: a quoted value to its closing quote,
    else the text up to the first of ; & < > |."""
    for quote in ("'", '"'):
        if text.startswith(quote) and quote in text[1:]:
            return text[: text.index(quote, 1) + 1]
    return re.split(r"[;&<>|]", text, maxsplit=1)[0]


def assigned_value(text: str) -> str:
    """An assignment's value as the shell takes it: quoted, or up to ; & < > |."""
    if text.startswith("'"):
        end = text.find("'", 1)
        return text[1:end] if end > 0 else text[1:]
    if text.startswith('"'):
        end = text.find('"', 1)
        return text[1:end] if end > 0 else text[1:]
    return re.split(r"[;&<>|]", text, maxsplit=1)[0].strip()


def warning(prog: str, where: str, text: str) -> Message:
    """The warning pmlogger_check and pmie_check print for a control line."""
    return Message("warning", f"{prog} [{where}]\nWarning: {text}")


@dataclass
class ControlReader:
    """Reads control files in turn; assignments carry from one line and file to the next.

    A daemon's reader sets SUBSTITUTE (the words replaced by PCP's directories before a
    file is read) and writes `record`, which turns a line's five fields into messages
    and its record."""

    SUBSTITUTE: ClassVar[tuple[str, ...]] = ("PCP_LOG_DIR",)

    prog: str
    env: Mapping[str, str]  # PCP's variables and the process's
    showme: bool = False
    assignments: dict[str, str] = field(default_factory=dict)

    @property
    def version(self) -> str:
        return self.assignments.get("version", "")

    def read(self, path: str) -> str | None:
        """PATH's text with SUBSTITUTE replaced, None when it cannot be read."""
        try:
            with open(path, encoding="utf-8", errors="surrogateescape") as f:
                text = f.read()
        except OSError:
            return None
        for key in self.SUBSTITUTE:
            text = text.replace(key, self.env.get(key, ""))
        return text

    def lines(self, path: str, text: str) -> Iterator[tuple[str, int, list[str]]]:
        """(where, line number, fields) of each line of TEXT, read from PATH."""
        for number, raw in enumerate(text.splitlines(), start=1):
            yield f"{path}:{number}", number, read_fields(raw)

    def warning(self, where: str, host: str, text: str) -> Message:
        """This reader's warning about the line at WHERE (HOST its first field)."""
        return warning(self.prog, where, text)

    def assign(self, where: str, words: list[str]) -> Iterator[Message]:
        """$NAME=value: remembered for later lines (PATH and IFS refused), as PCP's;
        -N echoes the line and the shell command it becomes."""
        text = " ".join(words)
        if self.showme:
            yield Message("note", f"# {text}")
        m = _ASSIGN.match(text)
        if m is None:
            yield self.warning(
                where, words[0], "in-line command is not a variable assignment, line ignored"
            )
            return
        name, shown = m.group(1), assignment_text(m.group(2))
        if name in ("PATH", "IFS"):
            yield self.warning(where, words[0], f"cannot change ${name}, line ignored")
            return
        if self.showme:
            yield Message("note", f"+ export {name}; {name}={shown}")
        self.assignments[name] = self.expand(assigned_value(shown))

    def expand(self, text: str) -> str:
        """$NAME and ${NAME} in TEXT, from the assignments and the environment."""
        scope = {**self.env, **self.assignments}
        return _NAME_REF.sub(lambda m: scope.get(m.group(1) or m.group(2), ""), text)
