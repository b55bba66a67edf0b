"""pmstore: set the value of a metric, for each of its instances or those named by -i.

The value is read as the metric's type would read it (decimal or 0x hex integers,
C floats, strings as given), stored over every value the metric has now, and one
line per instance reports the old and the new value.  Output, messages and exit
status are those of PCP 6's pmstore.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from typing import NoReturn

from purepcp.pmapi.cnumbers import int32
from purepcp.pmapi.convert import StoreValueError, parse_typed_value
from purepcp.pmapi.errors import PM_ERR_INDOM, PMError, pmErrStr
from purepcp.pmapi.ids import PM_ID_NULL, PM_IN_NULL, PM_INDOM_NULL
from purepcp.pmapi.options import (
    HELP,
    HOST,
    LOCALPMDA,
    NAMESPACE,
    SPECLOCAL,
    VERSION,
    Opt,
    Parsed,
    Tool,
)
from purepcp.pmapi.printvalue import pmPrintValue
from purepcp.pmapi.types import PMType
from purepcp.pmapi.values import Result, ValueSet

FETCH = Opt("F", "fetch", None, "fetch the value again after the store, and report that")
FORCE = Opt("f", "force", None, "store even when the metric has no value now")
INSTS = Opt("i", "insts", "INSTS", "store only into these instances (comma-separated names)")

_AGGREGATES = (PMType.PM_TYPE_AGGREGATE, PMType.PM_TYPE_AGGREGATE_STATIC)
_EVENTS = (PMType.PM_TYPE_EVENT, PMType.PM_TYPE_HIGHRES_EVENT)
_INST_SEPARATORS = re.compile(r"[, \t\n]+")


class _StoreTool(Tool):
    """pmstore words its failure to start a local context its own way."""

    def fail(self, message: str, usage: bool = False, status: int = 1) -> NoReturn:
        local = "Cannot make standalone connection on localhost: "
        if message.startswith(local):
            message = "Cannot make standalone local connection: " + message[len(local) :]
        super().fail(message, usage, status)


TOOL = _StoreTool(
    "pmstore",
    "[options] metricname value",
    [
        ("General options", (HOST, LOCALPMDA, SPECLOCAL, NAMESPACE, VERSION, HELP)),
        ("Value options", (FETCH, FORCE, INSTS)),
    ],
    posix=True,
)


def main(argv: Sequence[str] | None = None) -> int:
    return TOOL.main(_run, argv)


def _instance_names(parsed: Parsed) -> list[str] | None:
    """Every instance name given by -i, in order (-i may be given more than once)."""
    names: list[str] | None = None
    for opt, value in parsed.pairs:
        if opt is INSTS:
            found = [word for word in _INST_SEPARATORS.split(value) if word]
            if found:
                names = (names or []) + found
    return names


def _out(text: str) -> None:
    sys.stdout.write(text + "\n")


def _quit(text: str, stderr: bool = False) -> NoReturn:
    """Print TEXT (on stdout, as pmstore prints most failures) and exit with status 1."""
    sys.stdout.flush()
    (sys.stderr if stderr else sys.stdout).write(text + "\n")
    raise SystemExit(1)


def _run(argv: list[str]) -> int:
    parsed = TOOL.parse(argv)
    if len(parsed.operands) != 2:
        sys.stderr.write(TOOL.usage())
        return 1
    instnames = _instance_names(parsed)
    ctx = TOOL.context(parsed)
    try:
        _store(ctx, *parsed.operands, instnames, parsed.get("fetch"), parsed.get("force"))
    finally:
        sys.stdout.flush()
        ctx.close()
    return 0


def _store(ctx, name: str, text: str, instnames, refetch, force) -> None:
    try:
        pmid = ctx.lookup_names([name])[0]
    except PMError as exc:
        _quit(f"{name}: pmLookupName: {pmErrStr(exc.code)}")
    if pmid == PM_ID_NULL:
        _quit(f"{name}: unknown metric")
    try:
        desc = ctx.lookup_desc(pmid)
    except PMError as exc:
        _quit(f"{name}: pmLookupDesc: {pmErrStr(exc.code)}")
    if desc.type in _AGGREGATES:
        _quit(f"{TOOL.prog}: Cannot modify values for PM_TYPE_AGGREGATE metrics", stderr=True)
    if desc.type in _EVENTS:
        _quit(f"{TOOL.prog}: Cannot modify values for event type metrics", stderr=True)

    wanted = _restrict(ctx, name, desc.indom, instnames) if instnames is not None else []

    try:
        before = ctx.fetch([pmid]).result
    except PMError as exc:
        _quit(f"{name}: pre pmFetch: {pmErrStr(exc.code)}")
    old = before.vsets[0]
    if old.numval < 0:
        _quit(f"{name}: Error: {pmErrStr(old.numval)}")

    try:
        atom = parse_typed_value(text, desc.type)
    except StoreValueError as exc:
        _quit(str(exc), stderr=True)

    insts = list(old.insts)
    forced = False
    if not insts:
        if not force:
            _quit(f"{name}: No value(s) available!")
        # no value now: store one anyway, into the first instance asked for if any
        forced = True
        insts = wanted[:1] or [PM_IN_NULL]
    try:
        vset = ValueSet.of_atoms(pmid, desc.type, [(inst, atom) for inst in insts])
        ctx.store(Result(before.timestamp, (vset,)))
    except PMError as exc:
        _quit(f'{name}: new value="{text}" pmStore: {pmErrStr(exc.code)}')

    new = vset
    if refetch:
        try:
            new = ctx.fetch([pmid]).result.vsets[0]
        except PMError as exc:
            _quit(f"{name}: post pmFetch: {pmErrStr(exc.code)}")

    olds = [] if forced else list(old.vlist)
    for i, value in enumerate(new.vlist):
        line = name
        if desc.indom != PM_INDOM_NULL:
            inst = int32(value.inst)
            try:
                line += f' inst [{inst} or "{ctx.instance_name(desc.indom, value.inst)}"]'
            except PMError:
                line += f" inst [{inst}]"
        if i < len(olds):
            line += " old value=" + pmPrintValue(old.valfmt, desc.type, olds[i].value, 1)
        else:
            line += ' old value="(none)"'
        line += " new value=" + pmPrintValue(new.valfmt, desc.type, value.value, 1)
        _out(line)


def _restrict(ctx, name: str, indom: int, instnames: list[str]) -> list[int]:
    """Have later fetches return only the instances named; their ids."""
    ctx.profile.delete(indom)
    insts = []
    for instname in instnames:
        try:
            if indom == PM_INDOM_NULL:
                raise PMError(PM_ERR_INDOM)
            inst = ctx.instance_id(indom, instname)
        except PMError as exc:
            _quit(f"pmLookupInDom {name}[{instname}]: {pmErrStr(exc.code)}")
        try:
            ctx.profile.add(indom, [inst])
        except PMError as exc:
            _quit(f"pmAddProfile {name}[{instname}]: {pmErrStr(exc.code)}")
        insts.append(inst)
    return insts


if __name__ == "__main__":
    raise SystemExit(main())
