"""The metric pmval reports: its name, identifier and descriptor, and the instances that
are its columns (initapi and initinsts), looked up as pmval looks them up: an archive
is asked for every instance it ever held (the *Archive calls)."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from purepcp.pmapi.cnumbers import int32
from purepcp.pmapi.convert import StoreValueError, parse_typed_value
from purepcp.pmapi.errors import PM_ERR_TYPE, PMError, pmErrStr
from purepcp.pmapi.ids import PM_IN_NULL, PM_INDOM_NULL, pmInDomStr
from purepcp.pmapi.types import PMSem, PMType, pmTypeStr
from purepcp.pmapi.values import Result, Timestamp, Value, ValueSet

from .fatal import PROG, die
from .model import Column

if TYPE_CHECKING:
    from purepcp.pmapi.archive.context import ArchiveContext
    from purepcp.pmapi.context import BaseContext
    from purepcp.pmapi.desc import Desc

_EVENT_TYPES = (PMType.PM_TYPE_EVENT, PMType.PM_TYPE_HIGHRES_EVENT)


def sorted_values(vset: ValueSet) -> list[tuple[int, Value]]:
    """VSET's values with their instances as C ints (PM_IN_NULL is -1), in that order (as
    pmval sorts them)."""
    return sorted(((int32(v.inst), v) for v in vset.vlist), key=lambda pair: pair[0])


class Metric:
    """The metric named NAME in CTX, and the instances WANTED of it (None for all)."""

    def __init__(self, ctx: BaseContext, name: str, wanted: list[str] | None) -> None:
        self.ctx = ctx
        self.archive = cast("ArchiveContext", ctx) if ctx.kind == "archive" else None
        self.name = name
        self.every = wanted is None  # every instance: the columns follow the domain's changes
        self.inames: list[str] = list(wanted or [])
        self.iids: list[int] = []  # the instances' identifiers, as named (-i's order)
        self.columns: list[Column] = []  # the reported instances, by identifier
        self.pmid = 0
        self.desc: Desc

    @property
    def singular(self) -> bool:
        return self.desc.indom == PM_INDOM_NULL

    @property
    def events(self) -> bool:
        return self.desc.type in _EVENT_TYPES

    @property
    def counter(self) -> bool:
        return self.desc.sem == PMSem.PM_SEM_COUNTER

    def lookup(self, has_insts: bool) -> None:
        """initapi: the metric's PMID and descriptor (HAS_INSTS: the spec named instances)."""
        try:
            self.pmid = self.ctx.lookup_name(self.name)
        except PMError as exc:
            raise die(f"{PROG}: pmLookupName({self.name}): {pmErrStr(exc.code)}\n") from None
        try:
            self.desc = self.ctx.lookup_desc(self.pmid)
        except PMError as exc:
            raise die(f"{PROG}: pmLookupDesc: {pmErrStr(exc.code)}\n") from None
        if self.singular and has_insts:
            raise die(f"{PROG}: {self.name}: singular metrics do not have instances\n")

    # -- the instance domain, as pmval asks it --------------------------------------------

    def instances(self, indom: int) -> list[tuple[int, str]]:
        if self.archive is not None:
            return self.archive.instances_archive(indom)
        return self.ctx.instances(indom)

    def instance_id(self, indom: int, name: str) -> int:
        if self.archive is not None:
            return self.archive.instance_id_archive(indom, name)
        return self.ctx.instance_id(indom, name)

    def instance_name(self, indom: int, inst: int) -> str:
        if self.archive is not None:
            return self.archive.instance_name_archive(indom, inst)
        return self.ctx.instance_name(indom, inst)

    def init_instances(self) -> None:
        """initinsts: the instances to report, sorted by id; named ones set the profile."""
        indom = self.desc.indom
        if indom == PM_INDOM_NULL:
            self.columns = []
            return
        if not self.every:
            self.iids = [self._named(indom, name) for name in self.inames]
            try:
                self.ctx.profile.add(indom, self.iids)
            except PMError as exc:
                raise die(f"{PROG}: pmAddProfile: {pmErrStr(exc.code)}\n") from None
        else:
            try:
                found = self.instances(indom)
            except PMError as exc:
                raise die(
                    f"{PROG}: pmGetInDom({pmInDomStr(indom)}): {pmErrStr(exc.code)}\n"
                ) from None
            self.iids = [inst for inst, _ in found]
            self.inames = [name for _, name in found]
        pairs = zip(self.iids, self.inames, strict=True)
        self.columns = sorted((Column(int32(i), n) for i, n in pairs), key=lambda c: c.inst)

    def _named(self, indom: int, name: str) -> int:
        try:
            return self.instance_id(indom, name)
        except PMError:
            raise die(f"{PROG}: instance {name} not available\n") from None

    def instances_changed(self, vset: ValueSet) -> bool:
        """chkinsts: does the sample have an instance that is not a column?"""
        if self.singular or self.events:
            return False
        known = {c.inst for c in self.columns}
        return any(int32(inst) not in known for inst in vset.insts)

    def store(self, text: str) -> None:
        """-x: store TEXT into the metric (every reported instance) before fetching it."""
        if self.events:
            type_, atom = PMType.PM_TYPE_STRING, text
        else:
            type_ = self.desc.type
            try:
                atom = parse_typed_value(text, type_)
            except StoreValueError as exc:
                kind = f"PM_TYPE_{pmTypeStr(type_)}"
                if exc.code == PM_ERR_TYPE:
                    msg = f'filter "{text}" incompatible with metric type ({kind})'
                elif exc.code == -34:  # -ERANGE
                    msg = f'filter value "{text}" is out of range for metric data type ({kind})'
                else:
                    msg = f'failed to convert value "{text}": {pmErrStr(exc.code)}'
                raise die(f"{PROG}: {msg}\n") from None
        insts = (list(self.iids) if not self.singular else []) or [PM_IN_NULL]
        try:
            vset = ValueSet.of_atoms(self.pmid, type_, [(inst, atom) for inst in insts])
            self.ctx.store(Result(Timestamp(0, 0), (vset,)))
        except PMError as exc:
            raise die(f'{PROG}: store value "{text}" failed: {pmErrStr(exc.code)}\n') from None
