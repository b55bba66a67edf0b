"""pmlogsize: where an archive's bytes go, file by file, as PCP's pmlogsize reports.

For each file of an archive (a volume, the .index, the .meta) one block: the bytes of
records, the bytes of framing ("overhead"), and with -d each metric's (or instance
domain's) share, largest first; -r adds how much of that repeats the previous value.
PCP's arithmetic is kept where it is its own: percentages in single precision, a v3
record's timestamp counted as 16 bytes, an instance domain delta's deletions as libpcp's
pmlogsize walks them.  An archive named by its base name is every file that matches it.
"""

from __future__ import annotations

import os
import struct
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

PROG = "pmlogsize"
USAGE = """Usage: pmlogsize [options] archive

Options:
  -d, --detail          detailed output (per metric and per indom)
  -r, --replication     report replicated metric values and instances
  -v, --verbose         verbose output
  -x thres, --threshold=thres
                        cull detailed report after thres % of space reported
  -?, --help            show this usage message and exit
"""
_WORD = struct.Struct(">i")
_UWORD = struct.Struct(">I")
_META_HEAD = struct.Struct(">ii")
_F32 = struct.Struct("f")
#: the on-disk .meta record types (libpcp.h TYPE_*), and the largest
TYPE_DESC, TYPE_INDOM_V2, TYPE_LABEL_V2, TYPE_TEXT, TYPE_INDOM, TYPE_INDOM_DELTA = 1, 2, 3, 4, 5, 6
TYPE_LABEL = TYPE_MAX = 7
PM_VAL_INSITU = 0
PM_LOG_VERS03 = 3
PDU_HEADER_BYTES = 12  # len, type, from: what a record's value offsets count from


@dataclass(frozen=True)
class Flags:
    detail: bool = False
    replication: bool = False
    verbose: int = 0
    threshold: int = -1


def f32(x: float) -> float:
    """X rounded to C's float."""
    return _F32.unpack(_F32.pack(x))[0]


def percent(part: int, whole: int) -> str:
    """C's "%.0f" of 100*(float)PART/WHOLE, all in single precision as pmlogsize has it."""
    scaled = f32(100 * f32(part))
    if whole == 0:
        value = float("nan") if scaled == 0 else float("inf") * (1 if scaled > 0 else -1)
        return {"nan": "-nan", "inf": "inf", "-inf": "-inf"}[str(value)]
    return f"{f32(scaled / f32(whole)):.0f}"


def _past(threshold: int, reported: int, total: int) -> bool:
    """Whether -x's cut-off is reached: REPORTED bytes are over THRESHOLD % of TOTAL."""
    return threshold != -1 and f32(f32(100 * f32(reported)) / f32(total)) > threshold


def plural(n: int, word: str, always: bool = True) -> str:
    """'N word' with an s unless N is 1 (or, ALWAYS False, unless N is at most 1)."""
    single = n == 1 if always else n <= 1
    return f"{n} {word}" + ("" if single else "s")


# -- the files ------------------------------------------------------------------------


def archive_files(operand: str, verbose: int) -> list[str] | str:
    """The files OPERAND names: itself if a regular file, else every file of the archive
    it is the base name of, in name order; a one-line error if none."""
    if os.path.isfile(operand):
        return [operand]
    directory, stem = os.path.split(operand)
    directory = directory or "."
    try:
        entries = [".", "..", *os.listdir(directory)]  # (readdir's order, traced by -vvv)
    except OSError as exc:
        return f'Error: scandir("{directory}", ...) failed: {exc.strerror}'
    if verbose > 2 and entries:
        sys.stderr.write(f'argbasename="{stem}" len={len(stem)}\n')
    chosen = [name for name in entries if _belongs(name, stem, verbose)]
    chosen.sort(key=os.fsencode)
    if not chosen:
        return f'Error: no PCP archive files match "{operand}"'
    return [name if directory == "." else os.path.join(directory, name) for name in chosen]


def _belongs(name: str, stem: str, verbose: int) -> bool:
    """Whether file NAME is one of archive STEM's (as __pmLogBaseName splits names): its
    .meta, .index or a volume."""
    from purepcp.pmapi.archive.reader import log_base_name

    size = len(stem)
    if verbose > 2:
        sys.stderr.write(f'd_name="{name}"? ')
    split = log_base_name(name)
    if len(name) < size + 1 or name[size] != "." or split is None:
        return _say(verbose, False, "no (not expected extension after basename)")
    base, word = split
    if base != stem:
        return _say(verbose, False, f"no (first {size} chars not matched)")
    if word in ("meta", "index") or word[:1].isdigit():
        return _say(verbose, True, "yes")
    return _say(verbose, False, "no (non-digit after basename)")


def _say(verbose: int, answer: bool, why: str) -> bool:
    if verbose > 2:
        sys.stderr.write(why + "\n")
    return answer


def report_file(path: str, flags: Flags) -> None:
    """One file's block: its name line, then the report its label's volume number asks for."""
    from purepcp.pmapi.archive.reader import file_bytes
    from purepcp.pmapi.errors import PMError, pmErrStr

    try:
        outside = os.stat(path).st_size
    except OSError as exc:
        sys.stderr.write(f"{path}: cannot stat file: {exc.strerror}\n")
        raise SystemExit(1) from None
    try:
        data = file_bytes(path)
    except PMError as exc:
        sys.stderr.write(f"{path}: cannot open file: {exc.message}\n")
        return
    version, vol = label_fields(data)
    if version < 0:
        sys.stderr.write(f"{path}: cannot load label record: {pmErrStr(version)}\n")
        return
    inside = len(data)
    line = f"{path}:"
    if inside != outside:
        line += f" [compression reduces size below by about {percent(inside - outside, inside)}%]"
    print(line)
    start = _WORD.unpack_from(data)[0]
    if vol == -2:
        report_index(data, start, version)
    elif vol == -1:
        report_meta(data, start, flags)
    else:
        report_data(data, start, version, path, flags)


def label_fields(data: Any) -> tuple[int, int]:
    """(version, volume) from a file's label, checked as __pmLogLoadLabel checks it:
    version, length and trailer, not the magic number; else (error code, 0)."""
    from purepcp.pmapi.archive.format import LABEL_BYTES, LABEL_V2, LABEL_V3
    from purepcp.pmapi.errors import PM_ERR_LABEL, PM_ERR_NODATA

    if len(data) < 8:
        return PM_ERR_NODATA, 0
    length, magic = struct.unpack_from(">iI", data)
    version = magic & 0xFF
    if LABEL_BYTES.get(version) != length or len(data) < length:
        return PM_ERR_LABEL, 0
    if _WORD.unpack_from(data, length - 4)[0] != length:
        return PM_ERR_LABEL, 0
    layout = LABEL_V3 if version == PM_LOG_VERS03 else LABEL_V2
    return version, layout.unpack_from(data)[5]  # (the volume number, in both layouts)


# -- .index ---------------------------------------------------------------------------


def report_index(data: Any, start: int, version: int) -> None:
    size = len(data)
    entry = 32 if version >= PM_LOG_VERS03 else 20
    count = (size - start) // entry
    index = count * entry
    print(f"  index: {index} bytes [{percent(index, size)}%, {count} entries]")
    print(f"  overhead: {start} bytes [{percent(start, size)}%]")
    _unaccounted(size - index - start)


def _unaccounted(rest: int) -> None:
    if rest:
        print(f"  unaccounted for: {rest} bytes")


# -- .meta ----------------------------------------------------------------------------


@dataclass
class InDomTally:
    """One instance domain's records, bytes and (inst, name) pairs seen, repeats apart."""

    indom: int
    nrec: int = 0
    bytes: int = 0
    seen: list[tuple[int, str]] = field(default_factory=list)
    dups: int = 0
    dup_bytes: int = 0


def report_meta(data: Any, start: int, flags: Flags) -> None:
    size = len(data)
    overhead = start
    counts = [0] * (TYPE_MAX + 1)
    sizes = [0] * (TYPE_MAX + 1)
    indoms: dict[int, InDomTally] = {}
    at = start
    while at + 8 <= size:
        length, mtype = _META_HEAD.unpack_from(data, at)
        overhead += 4
        need = length - 12
        body = bytes(data[at + 8 : at + 8 + max(need, 0)])
        if need < 0 or len(body) != need:
            sys.stderr.write(f"Error: metadata read failed: len {len(body)} not {need}\n")
            raise SystemExit(1)
        if not TYPE_DESC <= mtype <= TYPE_MAX:
            sys.stderr.write(f"Error: bad metadata type: {mtype}\n")
            raise SystemExit(1)
        counts[mtype] += 1
        sizes[mtype] += 4 + need
        _meta_record(mtype, body, counts[mtype], indoms, flags)
        at += 8 + need + 4
        overhead += 4
    for kind in (TYPE_INDOM_DELTA, TYPE_INDOM_V2):
        counts[TYPE_INDOM] += counts[kind]
        sizes[TYPE_INDOM] += sizes[kind]
    counts[TYPE_LABEL] += counts[TYPE_LABEL_V2]
    sizes[TYPE_LABEL] += sizes[TYPE_LABEL_V2]
    _meta_summary(counts, sizes, indoms, size, flags)
    print(f"  overhead: {overhead} bytes [{percent(overhead, size)}%]")
    kinds = (TYPE_DESC, TYPE_INDOM, TYPE_LABEL, TYPE_TEXT)
    _unaccounted(size - sum(sizes[k] for k in kinds) - overhead)


def _meta_record(
    mtype: int, body: bytes, nth: int, indoms: dict[int, InDomTally], flags: Flags
) -> None:
    if mtype == TYPE_DESC and flags.verbose:
        print(_desc_line(body))
    elif mtype in (TYPE_INDOM, TYPE_INDOM_DELTA, TYPE_INDOM_V2):
        if flags.verbose or flags.detail or flags.replication:
            _tally_indom(mtype, body, indoms, flags)
    elif mtype in (TYPE_LABEL, TYPE_LABEL_V2, TYPE_TEXT) and flags.detail and nth == 1:
        word = "TEXT" if mtype == TYPE_TEXT else "LABEL"
        print(f"{word}: TODO ... nothing reported as yet")  # (PCP 6.0.3 prints just this)


def _desc_line(body: bytes) -> str:
    from purepcp.pmapi.ids import pmIDStr

    line = f"PMID: {pmIDStr(_UWORD.unpack_from(body)[0])}"
    numnames = _WORD.unpack_from(body, 20)[0]
    at = 24
    for _ in range(numnames):
        length = _WORD.unpack_from(body, at)[0]
        name = body[at + 4 : at + 4 + length].split(b"\0")[0]  # (printf's "%*.*s")
        line += " " + name.rjust(length).decode("utf-8", "surrogateescape")
        at += 4 + length
    return line


_INDOM_WORDS = {TYPE_INDOM_V2: "INDOM_V2", TYPE_INDOM: "INDOM", TYPE_INDOM_DELTA: "INDOM_DELTA"}


def _tally_indom(mtype: int, body: bytes, indoms: dict[int, InDomTally], flags: Flags) -> None:
    """Count one instance domain record as pmlogsize does: after the first deleted
    instance of a delta record (a negative id) it reads that same id for the rest."""
    from purepcp.pmapi.ids import pmInDomStr

    at = 8 if mtype == TYPE_INDOM_V2 else 12
    indom = _UWORD.unpack_from(body, at)[0]
    ninst = _WORD.unpack_from(body, at + 4)[0]
    at += 8
    line = f"{_INDOM_WORDS[mtype]}: {pmInDomStr(indom)}" if flags.verbose else ""
    tally = indoms.setdefault(indom, InDomTally(indom))
    tally.nrec += 1
    tally.bytes += 4 + (8 if mtype == TYPE_INDOM_V2 else 12) + 4 + 4
    if flags.verbose:
        line += f" {ninst} instance" + ("s" if ninst > 1 else "")
    stridx = at + 4 * ninst
    strings = at + 8 * ninst
    for j in range(ninst):
        inst = _WORD.unpack_from(body, at)[0]
        if inst < 0:
            if flags.verbose and j == ninst - 1:
                line += " ... "
            continue
        at += 4
        offset = strings + _WORD.unpack_from(body, stridx + 4 * j)[0]
        end = body.find(b"\0", offset)  # (a damaged record's last name may lack its NUL)
        name = body[offset : end if end >= 0 else len(body)].decode("utf-8", "surrogateescape")
        if flags.verbose and j == 0:
            line += f' {inst} "{name}"'
        elif flags.verbose and j == ninst - 1:
            line += f' ... {inst} "{name}"'
        cost = 8 + len(name.encode("utf-8", "surrogateescape")) + 1
        if (inst, name) in tally.seen:
            tally.dups += 1
            tally.dup_bytes += cost
        else:
            tally.seen.append((inst, name))
        tally.bytes += cost
    if flags.verbose:
        print(line)


def _meta_summary(
    counts: list[int], sizes: list[int], indoms: dict[int, InDomTally], size: int, flags: Flags
) -> None:
    from purepcp.pmapi.ids import pmInDomStr

    if counts[TYPE_DESC]:
        metrics, n = sizes[TYPE_DESC], counts[TYPE_DESC]
        print(f"  metrics: {metrics} bytes [{percent(metrics, size)}%, {n} records]")
    if counts[TYPE_INDOM]:
        total = sizes[TYPE_INDOM]
        line = f"  indoms: {total} bytes [{percent(total, size)}%, {counts[TYPE_INDOM]} records"
        if flags.detail:
            line += f", {sum(len(t.seen) + t.dups for t in indoms.values())} instances"
        print(line + "]")
        if flags.detail and indoms:
            ranked = sorted(indoms.values(), key=lambda t: -t.bytes)  # (a stable sort, as glibc's)
            reported = 0
            for t in ranked:
                if _past(flags.threshold, reported, total):
                    print("    ...")
                    break
                insts = len(t.seen) + t.dups
                line = f"    {pmInDomStr(t.indom)}: {t.bytes} bytes [{percent(t.bytes, size)}%, "
                line += plural(t.nrec, "record", always=False) + ", "
                line += plural(insts, "instance", always=False)
                if flags.replication and t.dups:
                    line += f" ({t.dup_bytes} bytes for {plural(t.dups, 'dup', always=False)})"
                print(line + "]")
                reported += t.bytes
    for kind, word in ((TYPE_LABEL, "labels"), (TYPE_TEXT, "texts")):
        if counts[kind]:
            share = percent(sizes[kind], size)
            print(f"  {word}: {sizes[kind]} bytes [{share}%, {counts[kind]} records]")


# -- data volumes ---------------------------------------------------------------------


@dataclass
class MetricTally:
    """One metric's value sets: records, bytes, values, and the repeats of -r."""

    pmid: int
    names: list[str]
    nrec: int = 0
    bytes: int = 0
    nval: int = 0
    dups: int = 0
    dup_bytes: int = 0
    last: dict[int, bytes] = field(default_factory=dict)


def report_data(data: Any, start: int, version: int, path: str, flags: Flags) -> None:
    """A volume's block; its value sets are decoded only if the archive opens (as libpcp's
    pmNewContext must succeed for pmlogsize to see marks and metrics)."""
    size = len(data)
    stamp = 16 if version >= PM_LOG_VERS03 else 8  # (sizeof pmTimespec, pmTimeval)
    context = _context(path)
    overhead = start
    payload = nrec = nmark = 0
    metrics: dict[int, MetricTally] = {}
    at = start
    while at + 4 <= size:
        header = _WORD.unpack_from(data, at)[0]
        rlen = header - 8
        overhead += 4 + stamp + 4 + 4
        payload += rlen - stamp - 4
        body = bytes(data[at + 4 : at + 4 + rlen]) if rlen >= 0 else bytes(data[at + 4 :])
        if len(body) != rlen:
            sys.stderr.write(f"Error: data read failed: len {len(body)} not {rlen + 12}\n")
            raise SystemExit(1)
        at += 4 + rlen + 4
        nrec += 1
        if context is None:
            continue
        if _WORD.unpack_from(body, 12 if version >= PM_LOG_VERS03 else 8)[0] == 0:
            if flags.replication:
                for tally in metrics.values():
                    tally.last.clear()
            nmark += 1
            nrec -= 1
            continue
        if flags.detail:
            words, vsets = _value_sets(body, version)
            for vset in vsets:
                _tally_vset(body, words, vset, metrics, context, flags)
    line = f"  data: {payload} bytes [{percent(payload, size)}%, {nrec} records"
    if nmark:
        line += f" (+ {nmark} <mark> records)"
    print(line + "]")
    if flags.detail and metrics:
        _data_detail(metrics, payload, size, flags)
    print(f"  overhead: {overhead} bytes [{percent(overhead, size)}%]")
    _unaccounted(size - payload - overhead)


def _context(path: str) -> Any:
    from purepcp.pmapi.archive.context import ArchiveContext
    from purepcp.pmapi.errors import PMError

    try:
        return ArchiveContext(path)
    except (PMError, OSError):
        return None


@dataclass(frozen=True)
class ValueSet:
    """A value set as it lies in a record: pmid, value format, and its instances and
    words (NumPy views of the record); a word is the value in place, or where its value
    block is (in words from the start of the PDU the record came from)."""

    pmid: int
    valfmt: int
    insts: Any
    words: Any


def _value_sets(body: bytes, version: int) -> tuple[Any, list[ValueSet]]:
    """The record's body as big-endian words, and its value sets."""
    import numpy as np

    words = np.frombuffer(body, dtype=">i4", count=len(body) // 4)
    at = 3 if version >= PM_LOG_VERS03 else 2
    vsets = []
    numpmid = int(words[at]) if at < len(words) else _decode_failed()
    at += 1
    for _ in range(numpmid):
        if at + 2 > len(words):
            _decode_failed()
        pmid, numval = int(words[at]) & 0xFFFFFFFF, int(words[at + 1])
        at += 2
        valfmt, pairs = PM_VAL_INSITU, words[at:at]
        if numval > 0:
            valfmt = int(words[at]) if at < len(words) else _decode_failed()
            pairs = words[at + 1 : at + 1 + 2 * numval]
            if len(pairs) != 2 * numval:
                _decode_failed()
            at += 1 + 2 * numval
        vsets.append(ValueSet(pmid, valfmt, pairs[0::2], pairs[1::2]))
    return words, vsets


def _decode_failed() -> Any:
    """libpcp's decoding error for a record whose value sets overrun it; ends the run."""
    from purepcp.pmapi.errors import PM_ERR_IPC, pmErrStr

    sys.stderr.write(f"Error: __pmDecodeResult failed: {pmErrStr(PM_ERR_IPC)}\n")
    raise SystemExit(1)


def _block_lengths(words: Any, vset: ValueSet) -> Any:
    """The lengths of the value blocks VSET's words point to, each checked to lie
    inside the record (PDU offsets count a 3-word header the record does not hold)."""
    at = vset.words - PDU_HEADER_BYTES // 4
    if len(at) and (at.min() < 0 or at.max() >= len(words)):
        _decode_failed()
    lengths = words[at] & 0xFFFFFF
    if len(at) and (lengths.min() < 4 or (at * 4 + lengths).max() > 4 * len(words)):
        _decode_failed()
    return lengths


def _tally_vset(
    body: bytes,
    words: Any,
    vset: ValueSet,
    metrics: dict[int, MetricTally],
    context: Any,
    flags: Flags,
) -> None:
    from purepcp.pmapi.ids import pmIDStr

    line = f"PMID: {pmIDStr(vset.pmid)}" if flags.verbose else ""
    tally = metrics.get(vset.pmid)
    if tally is None:
        tally = metrics[vset.pmid] = MetricTally(vset.pmid, _names(context, vset.pmid))
        if flags.verbose and tally.names:
            line += f" ({', '.join(tally.names)})"
    tally.nrec += 1
    numval = len(vset.insts)
    tally.nval += numval
    cost = 8 + (4 + 8 * numval if numval else 0)
    insitu = vset.valfmt == PM_VAL_INSITU
    if not insitu:
        lengths = _block_lengths(words, vset)
        cost += int(((lengths + 3) & ~3).sum())
    if flags.replication:
        if insitu:
            values: list[Any] = vset.words.tolist()
        else:
            starts = ((vset.words - PDU_HEADER_BYTES // 4) * 4).tolist()
            values = [body[a : a + n] for a, n in zip(starts, lengths.tolist(), strict=True)]
        for inst, value in zip(vset.insts.tolist(), values, strict=True):
            if tally.last.get(inst) == value:
                tally.dups += 1
                tally.dup_bytes += 8 + (0 if insitu else len(value))
            else:
                tally.last[inst] = value
    if flags.verbose:
        print(f"{line} bytes={cost}")
    tally.bytes += cost


def _names(context: Any, pmid: int) -> list[str]:
    from purepcp.pmapi.errors import PMError

    try:
        return list(context.name_all(pmid))
    except PMError:
        return []


def _data_detail(metrics: dict[int, MetricTally], payload: int, size: int, flags: Flags) -> None:
    from purepcp.pmapi.ids import pmIDStr

    reported = 0
    for t in sorted(metrics.values(), key=lambda t: -t.bytes):  # (stable, as glibc's qsort)
        if _past(flags.threshold, reported, payload):
            print("    ...")
            break
        line = f"    {pmIDStr(t.pmid)}: {t.bytes} bytes [{percent(t.bytes, size)}%, "
        line += plural(t.nrec, "record") + ", " + plural(t.nval, "value")
        if flags.replication and t.dups:
            line += f" ({t.dup_bytes} bytes for {plural(t.dups, 'dup')})"
        line += "]"
        if t.names:
            line += f" ({', '.join(t.names)})"
        print(line)
        reported += t.bytes


# -- the command ----------------------------------------------------------------------


def parse(argv: list[str]) -> tuple[Flags, list[str]]:
    """pmlogsize's options (getopt "dD:rvx:?", GNU order), or the usage and status 1."""
    import getopt

    from purepcp.pmapi.options import debug_complaint, getopt_message

    longs = ["detail", "debug=", "replication", "verbose", "threshold=", "help"]
    try:
        pairs, operands = getopt.gnu_getopt(argv, "dD:rvx:?", longs)
    except getopt.GetoptError as exc:
        sys.stderr.write(f"{PROG}: {getopt_message(exc)}\n")
        _usage_exit()
    detail = replication = False
    verbose, threshold, errors = 0, -1, 0
    for flag, value in pairs:
        if flag in ("-d", "--detail"):
            detail = True
        elif flag in ("-r", "--replication"):
            detail = replication = True
        elif flag in ("-v", "--verbose"):
            verbose += 1
        elif flag in ("-x", "--threshold"):
            threshold = _atoi(value)
            if not 1 <= threshold <= 100:
                sys.stderr.write(f"Bad arg for -x ({value}): should be between 1 and 100\n")
                raise SystemExit(1)
        elif flag in ("-D", "--debug"):
            complaint = debug_complaint(value)
            if complaint:
                sys.stderr.write(complaint)
                errors += 1
        else:
            errors += 1
    if not errors and not operands:
        sys.stderr.write("Error: no archive specified\n\n")
        errors += 1
    if errors:
        _usage_exit()
    return Flags(detail, replication, verbose, threshold), operands


def _atoi(text: str) -> int:
    import re

    match = re.match(r"\s*([+-]?\d+)", text)
    return int(match.group(1)) if match else 0


def _usage_exit() -> None:
    sys.stderr.write(USAGE)
    raise SystemExit(1)


def run(argv: list[str]) -> int:
    flags, operands = parse(argv)
    for operand in operands:
        files = archive_files(operand, flags.verbose)
        if isinstance(files, str):
            sys.stderr.write(files + "\n")
            return 1
        for path in files:
            report_file(path, flags)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    from purepcp.tools.stdio import c_stdout

    try:
        with c_stdout():  # (so that its errors land among its output where PCP's do)
            return run(args)
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else 1
    except BrokenPipeError:
        return 1


if __name__ == "__main__":
    sys.exit(main())
