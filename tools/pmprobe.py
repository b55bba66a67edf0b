"""pmprobe: a quick look at which metrics exist and how many values each has now.

For every metric named (or every metric, with no names) one line is printed:
the name and its number of values, then, as asked, its values (-v), its
instance ids (-i) and/or instance names (-I).  A metric that fails is printed as
"name code message".  The output is that of PCP 6's pmprobe, line for line.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Sequence
from typing import Any

from purepcp.pmapi import version_line
from purepcp.pmapi.archive.damage import ArchiveError
from purepcp.pmapi.archive.modes import PM_MODE_FORW
from purepcp.pmapi.cnumbers import int32, strtol
from purepcp.pmapi.errors import PMError, pmErrStr
from purepcp.pmapi.ids import PM_INDOM_NULL
from purepcp.pmapi.options import (
    ARCHIVE,
    DEBUG,
    DERIVED,
    HELP,
    HOST,
    HOSTZONE,
    LOCALPMDA,
    NAMESPACE,
    ORIGIN,
    SPECLOCAL,
    TIMEZONE,
    Opt,
    Parsed,
    Tool,
    debug_complaint,
    load_derived,
)
from purepcp.pmapi.printvalue import pmPrintValue

PDU_START = 0x7000
PDU_MAX = 23  # the PDU types PCP's -V report has columns for (ERROR .. DESC_IDS)
LOOKUP_CEILING = 64 * 1024  # bytes of names per name lookup, as pmprobe reckons them


class _ListedAsD(Opt):
    """--version, listed as "-d, --version" as PCP's pmprobe lists it, though its getopt
    string lacks the d (PCP's pmprobe says "invalid option -- 'd'"; so does this one)."""

    def usage_line(self) -> str:
        return Opt("d", self.long, self.arg, self.help).usage_line()


# pmprobe spells some shared options its own way: --version has no working short form
# (-V means verbose) and --derived has no -c
VERSION_LONG = _ListedAsD(None, "version", None, "print the version and exit")
#: accepted, not listed: -e, which PCP's getopt string has and its pmprobe then refuses
#: with the usage alone (and -D, as every PCP tool's)
STRAY_E = Opt("e", None, None, "")
BATCH = Opt("b", "batch", "N", "fetch at most N metrics per request [128]")
FORCE = Opt("f", "force", None, "with -i or -I, list every instance of the domain")
FASTER = Opt("F", "faster", None, "take each name as a leaf, without a namespace walk")
EXTERNAL = Opt("I", "external", None, "list instance names")
INTERNAL = Opt("i", "internal", None, "list instance ids")
VERBOSE = Opt("V", "verbose", None, "report how many PDUs went each way")
VALUES = Opt("v", "values", None, "list the values")

TOOL = Tool(
    "pmprobe",
    "[options] [metricname ...]",
    [
        (
            "General options",
            (
                ARCHIVE,
                HOST,
                DERIVED,
                LOCALPMDA,
                SPECLOCAL,
                NAMESPACE,
                ORIGIN,
                TIMEZONE,
                HOSTZONE,
                VERSION_LONG,
                HELP,
            ),
        ),
        ("Protocol options", (BATCH,)),
        ("Reporting options", (FORCE, FASTER, EXTERNAL, INTERNAL, VERBOSE, VALUES)),
        ("", (DEBUG, STRAY_E)),
    ],
)


def main(argv: Sequence[str] | None = None) -> int:
    return TOOL.main(_run, argv)


def _run(argv: list[str]) -> int:
    parsed = TOOL.parse(argv)
    flags = _options(argv, parsed)
    ctx = TOOL.context(parsed)
    if ctx.kind == "archive":
        sys.stdout.write(_zone_note(parsed, ctx))
        flags["origin"] = TOOL.archive_origin(parsed, ctx)
    try:
        counts = _count_pdus(ctx) if flags["verbose"] else None
        _probe(ctx, parsed.operands, flags, sys.stdout.write)
        if counts is not None:
            _report_pdus(counts, sys.stdout.write)
    finally:
        sys.stdout.flush()
        ctx.close()
    return 0


# -- options -------------------------------------------------------------------------------


def _zone_note(parsed: Parsed, ctx: Any) -> str:
    """What pmGetContextOptions says of an archive's -z or -Z (nothing without them)."""
    if "hostzone" in parsed:
        host = ctx.archive.label.hostname
        return f'Note: timezone set to local timezone of host "{host}" from archive\n\n'
    if "timezone" in parsed:
        return f'Note: timezone set to "TZ={parsed.get("timezone")}"\n\n'
    return ""


def _whole_int(text: str) -> int | None:
    """TEXT as strtol reads a whole argument in base 10, kept in an int; None when strtol
    stops before its end (an empty argument is 0, as strtol reads it)."""
    scan = strtol(text)
    return int32(int(scan.value)) if scan.end == len(text) else None


def _options(argv: Sequence[str], parsed: Parsed) -> dict[str, Any]:
    """pmprobe's own options checked in order, as pmprobe and pmGetOptions check them."""
    prog = TOOL.prog
    errors: list[str] = []
    flags: dict[str, Any] = {
        "batch": 128,  # metrics per fetch
        "force": False,  # -f: instances from the domain, no fetch
        "faster": False,  # -F: operands are leaf names
        "inst": False,  # -i
        "names": False,  # -I
        "values": False,  # -v
        "verbose": False,  # -V
    }
    show_version = False
    zone = hostzone = False
    for opt, value in parsed.pairs:
        if opt is BATCH:
            batch = _whole_int(value)
            if batch is None:
                errors.append(f"{prog}: -b requires numeric argument")
            elif batch < 1:  # pmprobe would loop forever (0) or crash (negative)
                errors.append(f"{prog}: -b requires a positive numeric argument")
            else:
                flags["batch"] = batch
        elif opt is FORCE:
            flags["force"] = True
        elif opt is FASTER:
            flags["faster"] = True
        elif opt is INTERNAL:
            if flags["values"]:
                errors.append(f"{prog}: at most one of -i and -v allowed")
            flags["inst"] = True
        elif opt is EXTERNAL:
            if flags["values"]:
                errors.append(f"{prog}: at most one of -I and -v allowed")
            flags["names"] = True
        elif opt is VALUES:
            if flags["inst"] or flags["names"]:
                errors.append(f"{prog}: at most one of -v and (-i or -I) allowed")
            flags["values"] = True
        elif opt is VERBOSE:
            flags["verbose"] = True
        elif opt is VERSION_LONG:
            show_version = True
        elif opt is TIMEZONE:
            if hostzone:
                errors.append(f"{prog}: at most one of -Z and -z allowed")
            else:
                zone = True
        elif opt is HOSTZONE:
            if zone:
                errors.append(f"{prog}: at most one of -Z and -z allowed")
            else:
                hostzone = True
        elif opt is DERIVED:
            problem = load_derived(value)
            if problem:
                errors.append(f"{prog}: pmLoadDerivedConfig failed: {problem}")
        elif opt is DEBUG:
            if problem := debug_complaint(value):
                errors.append(f"{prog}: {problem}")
            else:
                from purepcp.pmapi import debug

                debug.set_options(value)
        elif opt is STRAY_E:
            errors.append("")  # (the usage, said alone)
    if "origin" in parsed and "archive" not in parsed:
        errors.append(f"{prog}: time window options are supported for archives only")
    if hostzone and "archive" not in parsed and "host" not in parsed:
        errors.append(f"{prog}: use of timezone from metric source requires a source")
    if errors or show_version:
        sys.stdout.flush()
        for line in filter(None, errors):
            sys.stderr.write(line + "\n")
        if show_version:
            sys.stderr.write(version_line(prog) + "\n")
        if errors:
            sys.stderr.write(TOOL.usage())
        raise SystemExit(0 if show_version else 1)
    return flags


# -- probing -------------------------------------------------------------------------------


def _error(code: int) -> str:
    return f"{code} {pmErrStr(code)}"


def _names(ctx, operands: Sequence[str], faster: bool, out: Callable[[str], Any]) -> list[str]:
    """The metric names to probe: all, the operands as given (-F), or the leaves below each."""
    if not operands:
        try:
            return ctx.traverse("")
        except PMError:
            return []
    if faster:
        return list(operands)
    names: list[str] = []
    for operand in operands:
        try:
            names += ctx.traverse(operand)
        except PMError as exc:
            out(f"{operand} {_error(exc.code)}\n")
    return names


def _batches(names: Sequence[str], batchsize: int) -> list[slice]:
    """Name lookups in batches: at most BATCHSIZE names and about 64 KB each."""
    batches = []
    start = 0
    while start < len(names):
        size = total = 0
        while start + size < len(names):
            length = len(names[start + size]) + 32
            if size >= batchsize or total + length >= LOOKUP_CEILING:
                break
            total += length
            size += 1
        size = max(size, 1)
        batches.append(slice(start, start + size))
        start += size
    return batches


def _lookup(ctx, names: list[str], batchsize: int, out: Callable[[str], Any]):
    """(name, PMID) of each name; the names of a failed lookup are reported and dropped."""
    found: list[tuple[str, int]] = []
    for batch in _batches(names, batchsize):
        chunk = names[batch]
        try:
            pmids = ctx.lookup_names(chunk)
        except PMError as exc:
            for name in chunk:
                out(f"{name} {_error(exc.code)}\n")
            continue
        found += zip(chunk, pmids, strict=True)
    return found


class _InDoms:
    """The last instance domain asked for, remembered (pmprobe asks again only on change)."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.indom: int | None = None
        self.answer: list[tuple[int, str]] | int = 0

    def get(self, indom: int) -> list[tuple[int, str]] | int:
        """(inst, name) pairs of INDOM, or the error code pmGetInDom gave."""
        if indom != self.indom:
            try:
                if self.ctx.kind == "archive":  # pmGetInDomArchive: all it ever held
                    self.answer = self.ctx.instances_archive(indom)
                else:
                    self.answer = self.ctx.instances(indom)
            except PMError as exc:
                self.answer = exc.code
            self.indom = indom
        return self.answer


def _probe(ctx, operands: Sequence[str], flags: dict[str, Any], out: Callable[[str], Any]):
    names = _names(ctx, operands, flags["faster"], out)
    metrics = _lookup(ctx, names, flags["batch"], out)
    inst, inames, values = flags["inst"], flags["names"], flags["values"]
    indoms = _InDoms(ctx)
    if flags["force"] and (inst or inames):
        for name, pmid in metrics:
            out(_domain_line(ctx, indoms, name, pmid, inst, inames) + "\n")
        return
    origin = flags.get("origin")
    batchsize = 1 if origin is not None else flags["batch"]  # an archive: one at a time
    told: set[tuple[str, int]] = set()
    for start in range(0, len(metrics), batchsize):
        batch = metrics[start : start + batchsize]
        pmids = [pmid for _, pmid in batch]
        _learn_descs(ctx, pmids)
        try:
            if origin is not None:  # each found from the origin on, uninterpolated
                ctx.set_mode(PM_MODE_FORW, origin)
            fetched = ctx.fetch(pmids)
        except PMError as exc:
            out(f"{batch[0][0]} {_error(exc.code)} (pmFetch)\n")
            if isinstance(exc, ArchiveError) and (exc.file, exc.offset) not in told:
                told.add((exc.file, exc.offset))  # where the archive is damaged, once
                sys.stderr.write(f"{TOOL.prog}: {exc}\n")
            continue
        for (name, pmid), vset in zip(batch, fetched.result.vsets, strict=False):
            desc = None
            if inst or inames or values:
                desc = fetched.descs.get(pmid)
                if desc is None:
                    try:
                        desc = ctx.lookup_desc(pmid)
                    except PMError as exc:
                        out(f"{name} {_error(exc.code)} (pmLookupDesc)\n")
                        continue
            out(f"{name} " + _values_line(indoms, desc, vset, inst, inames, values) + "\n")


def _learn_descs(ctx, pmids: list[int]) -> None:
    """Have CTX look up the descriptors of PMIDS before it fetches them.

    Context.fetch looks up descriptors it has not seen first, and that lookup fails
    as a whole when it asks about a single unknown PMID (pmcd answers one PMID with
    an error, several with a null descriptor each), which would fail the fetch that
    pmprobe needs to report per metric.  Asking about two or more never fails that
    way, and the fetch then finds every descriptor known.
    """
    with contextlib.suppress(PMError):  # if it fails, the fetch will say what is wrong
        ctx.lookup_descs(pmids if len(pmids) > 1 else pmids * 2)


def _domain_line(ctx, indoms: _InDoms, name: str, pmid: int, inst: bool, inames: bool) -> str:
    """-f with -i/-I: the instance domain's instances, no fetch."""
    try:
        desc = ctx.lookup_desc(pmid)
    except PMError as exc:
        return f"{name} {_error(exc.code)} (pmLookupDesc)"
    if desc.indom == PM_INDOM_NULL:
        return f"{name} 1 PM_IN_NULL" + (" PM_IN_NULL" if inst and inames else "")
    found = indoms.get(desc.indom)
    if isinstance(found, int):
        return f"{name} {_error(found)} (pmGetInDom)"
    text = f"{name} {len(found)}"
    for iid, iname in found:
        if inst:
            text += f" ?{int32(iid)}"
        if inames:
            text += f' "{iname}"'
    return text


def _values_line(indoms: _InDoms, desc, vset, inst: bool, inames: bool, values: bool) -> str:
    """What follows the name: the count (or error) and the values or instances asked for."""
    if vset.numval < 0:
        return _error(vset.numval)
    if vset.numval == 0:
        return "0"
    text = str(vset.numval)
    if values:
        for value in vset.vlist:
            text += " " + pmPrintValue(vset.valfmt, desc.type, value.value, 1)
    if not (inst or inames):
        return text
    if desc.indom == PM_INDOM_NULL:
        return text + " PM_IN_NULL" + (" PM_IN_NULL" if inst and inames else "")
    found = indoms.get(desc.indom)
    if isinstance(found, int):  # pmprobe prints this straight after the count
        return text + f"{_error(found)} (pmGetInDom)"
    known = dict(found)
    for iid in vset.insts:
        if inst:
            text += f" ?{int32(iid)}"
        if inames:
            iname = known.get(iid)
            text += f' "{iname}"' if iname is not None else f" ?{int32(iid)}"
    return text


# -- -V: PDU counts ------------------------------------------------------------------------


def _count_pdus(ctx) -> tuple[list[int], list[int]] | None:
    """Count the PDUs CTX's connection sends and receives from now on (host contexts)."""
    sent = [0] * (PDU_MAX + 1)
    received = [0] * (PDU_MAX + 1)
    connection = getattr(ctx.source, "connection", None)
    if connection is None:
        return sent, received  # local agents: no PDUs go anywhere
    # the connection's handshake has happened: pmcd's greeting in, our credentials out
    received[0] += 1
    sent[0x700C - PDU_START] += 1
    send, receive = connection.send, connection.receive

    def _tally(counts: list[int], pdu) -> None:
        slot = getattr(pdu, "TYPE", 0) - PDU_START
        if 0 <= slot < len(counts):
            counts[slot] += 1

    def counted_send(pdu):
        _tally(sent, pdu)
        return send(pdu)

    def counted_receive():
        pdu = receive()
        _tally(received, pdu)
        return pdu

    connection.send = counted_send
    connection.receive = counted_receive
    return sent, received


def _report_pdus(counts: tuple[list[int], list[int]], out: Callable[[str], Any]) -> None:
    for title, row in zip(("send", "recv"), counts, strict=True):
        shown = row[:PDU_MAX]
        out(f"PDUs {title}" + "".join(f" {n:3d}" for n in shown) + "\n")
        out(f"Total: {sum(shown)}\n")


if __name__ == "__main__":
    raise SystemExit(main())
