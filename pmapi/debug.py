"""The -D debug options a tool was given (pmSetDebug's names), for the traces of our own
that mean something to a user: libpcp's internal ones (PDU dumps, lexer states) have
no counterpart here and are accepted silently (pmapi.options.debug_spec_ok).

- fetch: each pmFetch's outcome, as libpcp's -Dfetch prints it: "pmFetch returns ...",
  the news of pmcd's state it brought ("PMCD state changes: agent(s) added restarted
  dropped", fetch.c's dump_fetch_flags) and the result's dump (__pmPrintResult), or
  "Error: ..." for a fetch that failed.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from .pdu.constants import PMCDState

if TYPE_CHECKING:
    from .desc import Desc
    from .values import Result, ValueSet

#: the options set (lower case names; "all" sets every one)
enabled: set[str] = set()


def set_options(spec: str) -> None:
    """Add -D SPEC's names (comma separated; numbers are libpcp's old bit masks, ignored)."""
    enabled.update(t.strip().lower() for t in spec.split(",") if t.strip())


def on(name: str) -> bool:
    """Whether the debug option NAME is set."""
    return name in enabled or "all" in enabled


def state_changes(flags: int) -> str:
    """libpcp's words for the PMCD_* state change FLAGS a fetch brought."""
    words = []
    agents = PMCDState.PMCD_ADD_AGENT | PMCDState.PMCD_RESTART_AGENT | PMCDState.PMCD_DROP_AGENT
    if flags & agents:
        agent = "agent(s)"
        for bit, word in (
            (PMCDState.PMCD_ADD_AGENT, " added"),
            (PMCDState.PMCD_RESTART_AGENT, " restarted"),
            (PMCDState.PMCD_DROP_AGENT, " dropped"),
        ):
            if flags & bit:
                agent += word
        words.append(agent)
    if flags & PMCDState.PMCD_LABEL_CHANGE:
        words.append("label change")
    if flags & PMCDState.PMCD_NAMES_CHANGE:
        words.append("names change")
    return "PMCD state changes: " + ", ".join(words) + "\n"


def fetch_outcome(
    result: Result | None,
    error: int,
    news: int,
    descs: dict[int, Desc | None],
    names: Callable[[int], list[str]],
    instance: Callable[[int, int], str],
) -> None:
    """-D fetch: what a fetch gave (RESULT, or the ERROR code), with the NEWS of pmcd's
    state it brought, as libpcp's pmFetch prints it; NAMES(pmid) and INSTANCE(indom,
    inst) are the context's (raising PMError when they cannot say)."""
    if not on("fetch"):
        return
    from .errors import pmErrStr

    out = ["pmFetch returns ...\n"]
    if result is None:
        out.append(f"Error: {pmErrStr(error)}\n")
    else:
        if news > 0:
            out.append(state_changes(news))
        out.append(result_dump(result, descs, names, instance))
    sys.stderr.write("".join(out))
    sys.stderr.flush()


def result_dump(
    result: Result,
    descs: dict[int, Desc | None],
    names: Callable[[int], list[str]],
    instance: Callable[[int, int], str],
) -> str:
    """__pmPrintResult's text: a header with the timestamp, then each value set."""
    import time

    sec, nsec = result.timestamp.sec, result.timestamp.nsec
    clock = time.strftime("%H:%M:%S", time.localtime(sec))
    out = [
        f"__pmResult dump from 0x{id(result):x} timestamp: {sec}.{nsec:09d} "
        f"{clock}.{nsec:09d} numpmid: {len(result.vsets)}\n"
    ]
    for vset in result.vsets:
        out.append(_valueset_dump(vset, descs.get(vset.pmid), names, instance))
    return "".join(out)


def _valueset_dump(
    vset: ValueSet,
    desc: Desc | None,
    names: Callable[[int], list[str]],
    instance: Callable[[int, int], str],
) -> str:
    """One value set as libpcp's dump_valueset writes it."""
    from .errors import PMError, pmErrStr
    from .ids import PM_INDOM_NULL, pmIDStr
    from .printvalue import pmPrintValue
    from .types import PMType, ValFmt

    try:
        known = ", ".join(names(vset.pmid))
    except PMError:
        known = "<noname>"
    out = [f"  {pmIDStr(vset.pmid)} ({known}):"]
    if vset.numval == 0:
        return out[0] + " No values returned!\n"
    if vset.numval < 0:
        return out[0] + f" {pmErrStr(vset.numval)}\n"
    out.append(f" numval: {vset.numval} valfmt: {vset.valfmt} vlist[]:\n")
    indom = desc.indom if desc is not None else PM_INDOM_NULL
    if vset.valfmt == ValFmt.PM_VAL_INSITU:
        values = list(vset.values)
    else:
        values = [value for _, value in vset.vlist]
    for inst, value in zip(vset.insts, values, strict=True):
        if vset.numval > 1 or inst != 0xFFFFFFFF:
            number = inst - (1 << 32) if inst >= 1 << 31 else inst
            try:
                out.append(f'    inst [{number} or "{instance(indom, inst)}"] ')
            except PMError:
                out.append(f"    inst [{number} or ???] ")
        else:
            out.append("   ")
        if desc is not None:
            type_ = desc.type
        elif vset.valfmt == ValFmt.PM_VAL_INSITU:
            type_ = PMType.PM_TYPE_UNKNOWN
        else:
            type_ = vset.vtype
        out.append("value " + pmPrintValue(vset.valfmt, type_, value, 1) + "\n")
    return "".join(out)
