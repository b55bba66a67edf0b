"""The pmcd's answers the probes are judged on: every probed metric looked up, described
and fetched at once (fetch_groups), each group told its metric's PMID."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Sequence
from typing import Any

from purepcp.pmapi.errors import PM_ERR_TOOSMALL, PMError, pmErrStr
from purepcp.pmapi.ids import PM_ID_NULL

from .groups import PROG, Group

_STRING = 6


class Probe:
    """The probed metrics' descriptors and values, by PMID."""

    def __init__(self) -> None:
        self.descs: dict[int, Any] = {}
        self.vsets: dict[int, Any] = {}

    def values(self, pmid: int) -> list | None:
        vset = self.vsets.get(pmid)
        if vset is None:
            return None
        if vset.numval <= 0:
            return []
        desc = self.descs.get(pmid)
        type_ = desc.type if desc is not None else None
        try:
            atoms = vset.atoms(type_)
        except (PMError, ValueError, TypeError):
            return [None] * vset.numval
        return [_plain(atom, type_) for atom in atoms]

    def type_of(self, pmid: int) -> int | None:
        desc = self.descs.get(pmid)
        return None if desc is None else int(desc.type)


def _plain(atom: Any, type_: int | None) -> Any:
    """A value as the probes compare it: a number, a string, or None (neither)."""
    if type_ == _STRING:
        if isinstance(atom, bytes):
            return atom.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")
        return atom if isinstance(atom, str) else None
    if isinstance(atom, (int, float)):
        return atom
    return None


def probe_groups(ctx: Any, groups: Sequence[Group]) -> Probe:
    """fetch_groups: look up, describe and fetch every valid group's probed metric."""
    answers = Probe()
    probing = [g for g in groups if g.valid and g.metric is not None]
    names = [str(g.metric) for g in probing]
    try:
        if not names:
            raise PMError(PM_ERR_TOOSMALL)
        pmids = ctx.lookup_names(names)
    except PMError as exc:
        if len(names) == 1:
            groups[0].pmid = PM_ID_NULL
        else:
            sys.stderr.write(f"{PROG}: cannot lookup metric names: {pmErrStr(exc.code)}\n")
        return answers
    known = [p for p in dict.fromkeys(pmids) if p != PM_ID_NULL]
    try:
        result = ctx.fetch(known).result if known else None
    except PMError as exc:
        sys.stderr.write(f"{PROG}: cannot fetch metric values: {pmErrStr(exc.code)}\n")
        return answers
    for group in groups:
        group.pmid = PM_ID_NULL
    for group, pmid in zip(probing, pmids, strict=True):
        group.pmid = pmid
    for pmid in known:
        with contextlib.suppress(PMError):
            answers.descs[pmid] = ctx.lookup_desc(pmid)
    if result is not None:
        answers.vsets = {vs.pmid: vs for vs in result.vsets}
    return answers
