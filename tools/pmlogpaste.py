"""pmlogpaste: keep a piece of text (a command's output, a note) as a one-record archive.

    pmlogpaste [-f file] [-h host] [-l name:value ...] [-m metric] [-o archive] [-t tz] [text ...]

The text is the operands joined by spaces, else the contents of -f FILE, else standard
input; it is read as a C string (up to its first NUL byte).  The archive (default
"paste", a version 2 archive as libpcp_import writes one) holds one string metric
(default "paste.value", PMID 245.0.1, discrete, no units) with that text as its only
value, stamped with the current time; -l adds context labels, which then stand in for
the "hostname" label a reader would otherwise derive.  The files are laid out as
libpcp_import lays them out: the descriptor, the record, the labels after it, and an
index entry before the record and one at the end.
"""

from __future__ import annotations

import os
import socket
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from purepcp.pmapi.options import Opt, Tool, pcp_getopt

PROG = "pmlogpaste"
TOOL = Tool(
    PROG,
    "[options] archive",
    [
        (
            "Options",
            [
                Opt("h", "hostname", "HOST", "set hostname"),
                Opt("t", "timezone", "TZ", "set timezone"),
                Opt("o", "outfile", "OUT", "set outfile"),
                Opt("m", "metric", "NAME", "set metric name"),
                Opt("f", "file", "FILE", "set filename"),
                Opt("l", "label", "LABEL", "set label"),
                Opt("?", "help", None, "show this usage message and exit"),
            ],
        )
    ],
)
SHORTS = "f:h:m:o:t:l:?"
#: The long options, in PCP's table order (an ambiguous prefix lists them so).
LONGS = [(o.long, o.short, o.arg is not None) for _, group in TOOL.sections for o in group]

DEFAULT_METRIC = "paste.value"
DEFAULT_ARCHIVE = "paste"
#: libpcp_import's PMID for the first metric added with PM_ID_NULL: domain 245, item 1.
PASTE_PMID = (245 << 22) | 1
#: The JSON words pmiPutLabel leaves unquoted (compared ignoring case, as it does).
JSON_WORDS = ("true", "false", "null")

#: pmiErrStr's messages for the libpcp_import errors pmlogpaste can meet.
ERR_BADMETRICNAME = "Illegal metric name"
ERR_EMPTYLABELVALUE = "Label value is empty"
ERR_ADDLABEL = "Error adding label"


class PasteError(Exception):
    """A step failed: the message is pmlogpaste's line, without the program name."""


@dataclass(frozen=True)
class Request:
    """What the command line asks for."""

    outfile: str = DEFAULT_ARCHIVE
    metric: str = DEFAULT_METRIC
    hostname: str | None = None
    timezone: str | None = None
    filename: str | None = None
    labels: tuple[str, ...] = ()
    words: tuple[str, ...] = ()


@dataclass
class _Seen:
    """Options as they come (the last of each wins; -l accumulates)."""

    values: dict[str, str] = field(default_factory=dict)
    labels: list[str] = field(default_factory=list)
    operands: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    help: bool = False


_KEYS = {"o": "outfile", "m": "metric", "h": "hostname", "t": "timezone", "f": "filename"}


def parse(argv: Sequence[str]) -> Request | tuple[list[str], bool]:
    """The request, or the complaints (and whether --help was among the options) that
    end the run with the usage message."""
    seen = _Seen()
    for item in pcp_getopt(argv, SHORTS, LONGS):
        if isinstance(item, str):
            seen.operands.append(item)
        elif item[0] == "!":
            seen.errors.append(str(item[1]))
        elif item[0] == "?":
            seen.help = True
        elif item[0] == "l":
            seen.labels.append(str(item[1]))
        else:
            seen.values[_KEYS[item[0]]] = str(item[1])
    if "filename" in seen.values and seen.operands:
        seen.errors.append("-f/--file cannot be used with command line input")
    if seen.errors or seen.help:
        return seen.errors, seen.help
    return Request(labels=tuple(seen.labels), words=tuple(seen.operands), **seen.values)


# -- the pieces ------------------------------------------------------------------------


def valid_metric_name(name: str) -> bool:
    """PMNS rules as libpcp_import checks them: dotted components, each starting with a
    letter, then letters, digits and underscores."""
    parts = name.split(".")
    return all(p and p[0].isascii() and p[0].isalpha() for p in parts) and all(
        c.isascii() and (c.isalnum() or c == "_") for p in parts for c in p
    )


def label_token(token: str) -> tuple[str | None, str | None]:
    """NAME:VALUE split as strtok(3) splits it on ':' (empty fields skipped, a third
    field ignored): (name, value), either None when missing."""
    fields = [f for f in token.split(":") if f]
    return (fields[0] if fields else None, fields[1] if len(fields) > 1 else None)


def label_json(name: str, value: str) -> str:
    """The one-label JSON map pmiPutLabel builds: the value quoted unless a JSON word."""
    if value.lower() in JSON_WORDS:
        return f'{{"{name}":{value}}}'
    return f'{{"{name}":"{value}"}}'


def context_labels(tokens: Sequence[str]):
    """The context label set -l TOKENS make (later names replacing earlier), or None."""
    from purepcp.pmapi.errors import PMError
    from purepcp.pmapi.labels import PM_LABEL_CONTEXT, add_labels

    lset = None
    for token in tokens:
        name, value = label_token(token)
        if name is None:
            raise PasteError(f"invalid label token {token}: No error")
        shown = f"{name}:{'(null)' if value is None else value}"
        if value is None:
            raise PasteError(f"error adding label {shown}: {ERR_EMPTYLABELVALUE}")
        try:
            lset = add_labels(lset, label_json(name, value), int(PM_LABEL_CONTEXT))
        except PMError:
            raise PasteError(f"error adding label {shown}: {ERR_ADDLABEL}") from None
    return lset


def read_text(request: Request) -> bytes:
    """The value's bytes (to the first NUL).  Raises OSError if -f names a file that
    cannot be read."""
    if request.filename is None and request.words:
        data = " ".join(request.words).encode("utf-8", "surrogateescape")
    elif request.filename in (None, "-"):
        data = sys.stdin.buffer.read()
    else:
        with open(request.filename, "rb") as f:
            data = f.read()
    return data.split(b"\0", 1)[0]


def write_archive(request: Request, text: bytes, lset, stamp) -> None:
    """The archive, as pmiStart ... pmiWrite ... pmiEnd writes it."""
    from purepcp.pmapi.archive.format import LabelRecord
    from purepcp.pmapi.archive.writer import ArchiveWriter
    from purepcp.pmapi.desc import Desc
    from purepcp.pmapi.errors import PMError, pmErrStr
    from purepcp.pmapi.ids import PM_ID_NULL
    from purepcp.pmapi.labels import PM_LABEL_CONTEXT
    from purepcp.pmapi.timewindow.hostzone import pcp_timezone
    from purepcp.pmapi.types import PMSem, PMType
    from purepcp.pmapi.values import Result, ValueSet

    hostname = request.hostname if request.hostname is not None else socket.gethostname()
    zone = request.timezone if request.timezone is not None else pcp_timezone()
    try:
        writer = ArchiveWriter(request.outfile, hostname=hostname, timezone=zone, start=stamp)
    except PMError as exc:
        sys.stderr.write(f"__pmLogNewFile: {_newfile_detail(request.outfile, exc)}\n")
        raise PasteError(f"error writing archive: {pmErrStr(exc.code)}") from None
    with writer:
        desc = Desc(PASTE_PMID, PMType.PM_TYPE_STRING, sem=PMSem.PM_SEM_DISCRETE)
        start_meta, start_log = writer.meta_offset, writer.log_offset
        writer.put_desc(desc, [request.metric])
        writer.put_index(stamp, start_meta, start_log)
        value = text.decode("utf-8", "surrogateescape")
        vset = ValueSet.of_atoms(PASTE_PMID, PMType.PM_TYPE_STRING, [(0xFFFFFFFF, value)])
        writer.put_result(Result(stamp, (vset,)))
        if lset is not None:
            writer.put_labels(LabelRecord(stamp, int(PM_LABEL_CONTEXT), PM_ID_NULL, (lset,)))
        writer.put_index(stamp)


def _newfile_detail(base: str, exc) -> str:
    """__pmLogNewFile's complaint about the first file it could not create."""
    import errno

    if exc.code == -errno.EEXIST:
        return f'"{_first_existing(base)}" already exists, not over-written'
    return f'failed to create "{base}.index": {os.strerror(-exc.code)}'


def _first_existing(base: str) -> str:
    """The first of the archive's files, in the order libpcp creates them, that exists."""
    for suffix in (".index", ".meta", ".0"):
        if os.path.exists(base + suffix):
            return base + suffix
    return base + ".index"


def now():
    """The current time at microsecond precision, as pmiWrite records it."""
    from purepcp.pmapi.values import Timestamp

    ns = time.time_ns()
    return Timestamp(ns // 1_000_000_000, (ns % 1_000_000_000) // 1000 * 1000)


# -- the command -------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """pmlogpaste(1) on ARGV (else sys.argv): its exit status."""
    return TOOL.main(_run, argv)


def _run(argv: list[str]) -> int:
    request = parse(argv)
    if not isinstance(request, Request):
        errors, _help = request
        for line in errors:
            sys.stderr.write(f"{PROG}: {line}\n")
        sys.stderr.write(TOOL.usage())
        return 1
    try:
        text = read_text(request)
    except OSError as exc:  # (PCP's pmlogpaste crashes here: ours says why, writes nothing)
        sys.stderr.write(f"{PROG}: cannot read {request.filename}: {exc.strerror}\n")
        return 1
    try:
        if not valid_metric_name(request.metric):
            raise PasteError(f"error adding metric descriptor: {ERR_BADMETRICNAME}")
        lset = context_labels(request.labels)
        write_archive(request, text, lset, now())
    except PasteError as exc:
        sys.stderr.write(f"{PROG}: {exc}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
