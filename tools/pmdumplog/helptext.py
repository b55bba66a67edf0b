"""pmdumplog -h: the help text in the archive, metrics then instance domains."""

from __future__ import annotations

from purepcp.pmapi.archive.format import (
    PM_TEXT_HELP,
    PM_TEXT_INDOM,
    PM_TEXT_ONELINE,
    PM_TEXT_PMID,
)
from purepcp.pmapi.ids import pmIDStr, pmInDomStr

from .source import Source


def helptext_text(src: Source) -> str:
    """dumpHelpText: PMIDs then InDoms, by identifier; one-line text before help."""
    parts = ["\nMetric Help Text in the Log ...\n"]
    texts = src.archive.texts
    for kind, show in ((PM_TEXT_PMID, pmIDStr), (PM_TEXT_INDOM, pmInDomStr)):
        idents = {i for (t, i) in texts if t in (kind | PM_TEXT_ONELINE, kind | PM_TEXT_HELP)}
        label = "PMID" if kind == PM_TEXT_PMID else "InDom"
        for ident in sorted(idents):
            oneline = texts.get((kind | PM_TEXT_ONELINE, ident))
            if oneline is not None:
                parts.append(f"{label}: {show(ident)} [{oneline}]\n")
            text = texts.get((kind | PM_TEXT_HELP, ident))
            if text is not None:
                parts.append(f"{label}: {show(ident)}\n{text}\n")
    return "".join(parts)
