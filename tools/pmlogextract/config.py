"""The -c configuration file: metrics, each with an optional [instance list].

    kernel.all.load [ "1 minute", 15 ]
    disk.dev.read, sample.bin [100 200]

Read as PCP's lex/yacc grammar reads it: names, "quoted" or 'quoted' instance names,
instance numbers, commas optional between items, # comments.  Each metric is
resolved against the input archives' namespaces as its line is read (a subtree
names every metric below it); what cannot be resolved is a warning naming the file
and line, a syntax error ends the run.  The line a message names is the lexer's line
when the parser acted, as in PCP: for a metric with no instance list, the line of the
token after it.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from purepcp.pmapi.cnumbers import int32

_TOKEN = re.compile(
    r"""(?P<LSQB>\[)|(?P<RSQB>\])|(?P<COMMA>,)
    |(?P<NAME>[A-Za-z][A-Za-z0-9_.]*)
    |"(?P<DQ>[^"\n]+)"|'(?P<SQ>[^'\n]+)'
    |(?P<NUMBER>[0-9]+)
    |(?P<COMMENT>\#[^\n]*)|(?P<BLANK>[ \t\r]+)|(?P<NL>\n)""",
    re.VERBOSE,
)


class ConfigError(Exception):
    """yyerror: the run ends with this message and the line it happened on."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


@dataclass(frozen=True)
class Spec:
    """One metric of the file: its name, its instances (a name, or a number), and the
    line the parser was on when it acted on them."""

    name: str
    instances: tuple[str | int, ...]
    line: int


class _Lexer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0
        self.line = 1

    def next(self) -> tuple[str, str | int | None]:
        """The next token (kind, value); ("EOF", None) at the end."""
        text = self.text
        while self.at < len(text):
            m = _TOKEN.match(text, self.at)
            if m is None:
                raise ConfigError(self.line, f"Unexpected character '{text[self.at]}'")
            self.at = m.end()
            kind = m.lastgroup
            if kind == "NL":
                self.line += 1
            elif kind in ("COMMENT", "BLANK"):
                continue
            elif kind in ("DQ", "SQ"):
                return "STRING", m.group(kind)
            elif kind == "NUMBER":
                return "NUMBER", int32(int(m.group(kind)))
            elif kind == "NAME":
                return "NAME", m.group(kind)
            else:
                return str(kind), None
        return "EOF", None


def specs(text: str) -> Iterator[Spec]:
    """The metrics of TEXT in order, each when the parser would act on it; ConfigError
    (raised when the parser meets it) for a syntax error."""
    lex = _Lexer(text)
    kind, value = lex.next()
    first = True
    while kind != "EOF":
        if not first and kind == "COMMA":
            kind, value = lex.next()
        if kind != "NAME":
            raise ConfigError(lex.line, "syntax error")
        name = str(value)
        first = False
        kind, value = lex.next()
        if kind != "LSQB":
            yield Spec(name, (), lex.line)  # (acted on with the next token read)
            continue
        instances: list[str | int] = []
        kind, value = lex.next()
        while True:
            if kind not in ("NAME", "NUMBER", "STRING"):
                raise ConfigError(lex.line, "syntax error")
            assert value is not None
            instances.append(value)
            kind, value = lex.next()
            if kind == "COMMA":
                kind, value = lex.next()
                continue
            if kind == "RSQB":
                break
        yield Spec(name, tuple(instances), lex.line)
        kind, value = lex.next()


def warn(path: str, line: int, message: str) -> None:
    """yywarn: "Warning [FILE, line N]" and the message."""
    sys.stderr.write(f"Warning [{path}, line {line}]\n{message}\n")


def read_config(path: str, resolve: Callable[[Spec], None]) -> None:
    """Parse the file at PATH, handing each metric to RESOLVE as it is read; a file
    that cannot be opened, or a syntax error, ends the run (status 1)."""
    from .options import PROG

    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            text = f.read()
    except OSError as exc:
        sys.stderr.write(f'{PROG}: Cannot open config file "{path}": {exc.strerror}\n')
        raise SystemExit(1) from None
    try:
        for spec in specs(text):
            resolve(spec)
    except ConfigError as exc:
        sys.stderr.write(
            f"Specification error in configuration file ({path})\n[line {exc.line}] {exc.message}\n"
        )
        raise SystemExit(1) from None
