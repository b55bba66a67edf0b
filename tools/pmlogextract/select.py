"""What a -c configuration picks: metrics (by PMID) and, for some, instances.

Built as PCP's dometric builds its list, metric by metric, against each input's
namespace and instance domains; applied to a record as PCP's searchmlist applies it
(instances come out in the order the configuration lists them).
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field

from purepcp.pmapi.archive.reader import Archive
from purepcp.pmapi.errors import PM_ERR_NAME, PMError, pmErrStr
from purepcp.pmapi.ids import PM_IN_NULL, PM_INDOM_NULL, pmID_build, pmID_cluster, pmID_domain
from purepcp.pmapi.types import ValFmt
from purepcp.pmapi.values import Result, ValueSet

from .config import Spec, warn

_PM_LABEL_CONTEXT, _PM_LABEL_DOMAIN, _PM_LABEL_INDOM = 1, 2, 4
_PM_LABEL_CLUSTER, _PM_LABEL_ITEM, _PM_LABEL_INSTANCES = 8, 16, 32
_PM_TEXT_PMID, _PM_TEXT_INDOM = 4, 8


@dataclass(frozen=True)
class Choice:
    """One metric picked: its instance domain, and its instances (None: all)."""

    pmid: int
    indom: int
    instances: tuple[int, ...] | None


@dataclass
class Selection:
    """The metrics a configuration picks, in the order it named them."""

    choices: dict[int, Choice] = field(default_factory=dict)

    @property
    def pmids(self) -> dict[int, Choice]:
        return self.choices

    @property
    def indoms(self) -> set[int]:
        return {c.indom for c in self.choices.values()}

    def wants_label(self, type_: int, ident: int) -> bool:
        """Whether a label set of TYPE for IDENT goes with the metrics picked (PCP's
        test, domain labels included: it compares pmID_domain of the domain number)."""
        pmids = list(self.choices)
        if type_ == _PM_LABEL_CONTEXT:
            return True
        if type_ == _PM_LABEL_DOMAIN:
            return any(pmID_domain(ident) == pmID_domain(p) for p in pmids)
        if type_ == _PM_LABEL_CLUSTER:
            ident = pmID_build(pmID_domain(ident), pmID_cluster(ident), 0)
            return any(ident == pmID_build(pmID_domain(p), pmID_cluster(p), 0) for p in pmids)
        if type_ == _PM_LABEL_ITEM:
            return ident in self.choices
        if type_ in (_PM_LABEL_INDOM, _PM_LABEL_INSTANCES):
            return ident in self.indoms
        import sys

        from .abandon import Abandon
        from .options import PROG

        sys.stderr.write(f"{PROG}: Error: invalid label set type: {type_}\n")
        raise Abandon

    def wants_text(self, type_: int, ident: int) -> bool:
        if type_ & _PM_TEXT_PMID:
            return ident in self.choices
        if type_ & _PM_TEXT_INDOM:
            return ident in self.indoms
        import sys

        from .abandon import Abandon
        from .options import PROG

        sys.stderr.write(f"{PROG}: Error: invalid text type: {type_}\n")
        raise Abandon


class Resolver:
    """dometric for each metric of the configuration, against every input in turn."""

    def __init__(self, path: str, archives: Sequence[Archive]) -> None:
        self.path = path
        self.archives = archives
        self.selection = Selection()

    def __call__(self, spec: Spec) -> None:
        found = False
        code = PM_ERR_NAME
        for archive in self.archives:
            try:
                leaves = archive.pmns.traverse(spec.name)
            except PMError as exc:
                code = exc.code
                continue
            found = True
            for leaf in leaves:
                self._metric(archive, leaf, spec)
        if not found:
            warn(
                self.path,
                spec.line,
                f'Problem with lookup for metric "{spec.name}" ... metric ignored',
            )
            import sys

            sys.stderr.write(f"Reason: {pmErrStr(code)}\n")

    def _metric(self, archive: Archive, name: str, spec: Spec) -> None:
        try:
            pmid = archive.pmns.lookup(name)
        except PMError as exc:
            warn(self.path, spec.line, f'Metric "{name}" is unknown ... not extracted')
            import sys

            sys.stderr.write(f"Reason: {pmErrStr(exc.code)}\n")
            return
        if pmid in self.selection.choices:
            return
        desc = archive.descs.get(pmid)
        if desc is None:
            return
        if not spec.instances:
            insts = (PM_IN_NULL,) if desc.indom == PM_INDOM_NULL else None
            self.selection.choices[pmid] = Choice(pmid, desc.indom, insts)
            return
        picked: list[int] = []
        for want in spec.instances:
            inst = _instance(archive, desc.indom, want)
            if inst is None:
                warn(
                    self.path,
                    spec.line,
                    f'Instance "{want}" is not defined for the metric "{name}"',
                )
            else:
                picked.append(inst)
        if not picked:
            warn(
                self.path,
                spec.line,
                f'None of the instances for metric "{name}" are valid, metric not extracted',
            )
            return
        self.selection.choices[pmid] = Choice(pmid, desc.indom, tuple(picked))


def _instance(archive: Archive, indom: int, want: str | int) -> int | None:
    """pmLookupInDomArchive (a name) or pmNameInDomArchive (a number) over the whole
    archive: the instance's number, None if the archive never had it."""
    history = archive.indoms.get(indom, [])
    if isinstance(want, int):
        for record in history:
            if want in record.insts:
                return want
        return None
    for record in reversed(history):
        for inst, name in zip(record.insts, record.names, strict=True):
            if name == want:
                return inst
    for record in reversed(history):
        for inst, name in zip(record.insts, record.names, strict=True):
            if name is not None and name.split(" ", 1)[0] == want:
                return inst
    return None


def pick(result: Result, selection: Selection | None, skipped: Sequence[int]) -> Result | None:
    """searchmlist: RESULT's value sets that are picked and not skipped, with only the
    instances picked (in the order picked); None if no set is picked.

    PCP decides whether to pick instances from a set by looking at the value count of
    the set it looked at last (the result's last set, for the first one picked), and
    that is kept here: a picked set follows a set with values, or its instances stay.
    """
    vsets = result.vsets
    kept: list[tuple[ValueSet, Choice | None]] = []
    for vs in vsets:
        if vs.pmid in skipped:
            continue
        if selection is None:
            kept.append((vs, None))
            continue
        choice = selection.choices.get(vs.pmid)
        if choice is not None:
            kept.append((vs, choice))
    if not kept:
        return None
    if selection is None:
        return Result(result.timestamp, [vs for vs, _ in kept])
    out: list[ValueSet] = []
    last_numval = vsets[-1].numval  # (the stale set PCP's test looks at)
    for vs, choice in kept:
        assert choice is not None
        if choice.instances is not None and last_numval > 0:
            vs = _cherry_pick(vs, choice.instances)
            last_numval = vs.numval
        out.append(vs)
    return Result(result.timestamp, out)


def _cherry_pick(vs: ValueSet, wanted: tuple[int, ...]) -> ValueSet:
    """VS with the values of WANTED's instances, in WANTED's order (numval 0 if none)."""
    if vs.numval <= 0:
        return ValueSet(vs.pmid, 0, vs.valfmt, vs.vtype, array("I"), array("I"))
    position = {inst: i for i, inst in reversed(list(enumerate(vs.insts)))}
    rows = [position[w & 0xFFFFFFFF] for w in wanted if (w & 0xFFFFFFFF) in position]
    insts = array("I", [vs.insts[r] for r in rows])
    if vs.valfmt == ValFmt.PM_VAL_INSITU:
        values: object = array("I", [vs.values[r] for r in rows])
    else:
        values = tuple(vs.values[r] for r in rows)
    return ValueSet(vs.pmid, len(rows), vs.valfmt, vs.vtype, insts, values)
