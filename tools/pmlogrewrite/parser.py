"""The rules language, read as PCP's grammar reads it, into Rules.

A recursive-descent reading of PCP's yacc grammar: a clause cut short gets the
message PCP's grammar gives that prefix ("Expecting -> in hostname clause"), any
other misfit is "syntax error", and each clause's checks run where PCP's actions
run, so a message names the line PCP names (the parser looks ahead one token
exactly where the grammar needs to).  Clauses with wildcards (60.*, 60.2.*) apply
to every matching metric or instance domain of the input archive.
"""

from __future__ import annotations

from collections.abc import Iterator

from purepcp.pmapi.ids import (
    pmID_build,
    pmID_cluster,
    pmID_domain,
    pmID_item,
    pmIDStr,
    pmInDom_build,
    pmInDom_domain,
    pmInDom_serial,
    pmInDomStr,
)
from purepcp.pmapi.types import pmTypeStr
from purepcp.pmapi.units import Units, pmUnitsStr

from .errors import Where
from .lexer import Lexer, Token
from .source import Source
from .specs import (
    INDOM_DUPLICATE,
    PM_IN_NULL,
    PM_INDOM_NULL,
    GlobalFlag,
    IndomSpec,
    InstFlag,
    MetricFlag,
    MetricSpec,
    Output,
    Rules,
)
from .words import atoi, inst_name_eq, sem_str

PM_ID_NULL = 0xFFFFFFFF
DYNAMIC_PMID = 511
NUMERIC_TYPES = frozenset(range(6))
_GLOBAL_STARTS = ("HOSTNAME", "TIMEZONE", "ZONEINFO", "FEATURES", "TIME")


class Parser:
    """One run's rules: every file read in turn into the same Rules."""

    def __init__(self, source: Source, rules: Rules, where: Where, *, wflag: bool,
                 sflag: bool, out_version: int) -> None:  # fmt: skip
        self.source = source
        self.rules = rules
        self.where = where
        self.wflag = wflag
        self.sflag = sflag
        self.out_version = out_version
        self.lex: Lexer
        # wildcard state, as PCP's parser keeps it between a rule's head and its clauses
        self.star_indom = False
        self.walk_indoms = False
        self.star_domain = 0
        self.current_indom: IndomSpec | None = None
        self.star_metric = 0
        self.star_cluster = PM_ID_NULL
        self.walk_metrics = False
        self.current_metric: MetricSpec | None = None
        self._labels = None  # the label clauses' state (labelrules), made on first use
        self._texts = None  # ... and the text clauses' (textrules)

    # -- plumbing ----------------------------------------------------------------------

    def parse_file(self, path: str, text: str) -> None:
        self.where.path = path
        self.where.line = 1
        self.lex = Lexer(text, path)
        first = True
        while True:
            tok = self.peek()
            if tok.kind == "EOF":
                if first:
                    raise self.error("syntax error")
                return
            first = False
            self.spec()

    def peek(self) -> Token:
        tok = self.lex.peek()
        self.where.line = self.lex.lineno
        return tok

    def take(self) -> Token:
        tok = self.lex.next()
        self.where.line = self.lex.lineno
        return tok

    def accept(self, *kinds: str) -> Token | None:
        return self.take() if self.peek().kind in kinds else None

    def expect(self, *kinds: str, message: str = "syntax error") -> Token:
        tok = self.accept(*kinds)
        if tok is None:
            raise self.error(message)
        return tok

    def error(self, message: str):
        return self.where.error(message)

    def warn(self, message: str) -> None:
        self.where.warn(message)

    def wwarn(self, message: str) -> None:
        if self.wflag:
            self.where.warn(message)

    def spec(self) -> None:
        kind = self.take().kind
        handler = {"GLOBAL": self.global_spec, "INDOM": self.indom_spec,
                   "METRIC": self.metric_spec, "TEXT": self.text_spec,
                   "LABEL": self.label_spec}.get(kind)  # fmt: skip
        if handler is None:
            raise self.error("syntax error")
        handler()

    # -- global ------------------------------------------------------------------------

    def global_spec(self) -> None:
        self.expect("LBRACE")
        if self.accept("RBRACE"):
            return
        while True:
            kind = self.take().kind
            if kind not in _GLOBAL_STARTS:
                raise self.error("syntax error")
            getattr(self, f"global_{kind.lower()}")()
            if self.accept("RBRACE"):
                return

    def _assign(self, what: str) -> None:
        self.expect("ASSIGN", message=f"Expecting -> in {what} clause")

    def global_hostname(self) -> None:
        self._assign("hostname")
        tok = self.expect("HNAME", "GNAME", "NUMBER", "FLOAT",
                          message="Expecting hostname in hostname clause")  # fmt: skip
        g = self.rules.glob
        if g.flags & GlobalFlag.HOSTNAME:
            raise self.error("Duplicate global hostname clause")
        if self.source.label.hostname == tok.text:
            self.wwarn(f"Global hostname ({tok.text}): No change")
        else:
            g.hostname = tok.text
            g.flags |= GlobalFlag.HOSTNAME

    def global_timezone(self) -> None:
        self._assign("timezone")
        tok = self.expect("STRING", message="Expecting timezone string in timezone clause")
        g = self.rules.glob
        if g.flags & GlobalFlag.TIMEZONE:
            raise self.error("Duplicate global timezone clause")
        if self.source.label.timezone == tok.value:
            self.wwarn(f"Global timezone ({tok.value}): No change")
        else:
            g.timezone = str(tok.value)
            g.flags |= GlobalFlag.TIMEZONE

    def global_zoneinfo(self) -> None:
        self._assign("zoneinfo")
        tok = self.expect("STRING", message="Expecting zoneinfo string in zoneinfo clause")
        g = self.rules.glob
        if g.flags & GlobalFlag.ZONEINFO:
            raise self.error("Duplicate global zoneinfo clause")
        if self.out_version < 3:
            raise self.error(
                "Global zoneinfo clause requires output archive version of 3 or greater"
            )
        if self.source.label.zoneinfo == tok.value:
            self.wwarn(f"Global zoneinfo ({tok.value}): No change")
        else:
            g.zoneinfo = str(tok.value)
            g.flags |= GlobalFlag.ZONEINFO

    def global_features(self) -> None:
        self._assign("features")
        tok = self.expect("NUMBER", "BITS", message="Expecting features value in features clause")
        if tok.kind == "NUMBER":
            bits = int(tok.text) & 0xFFFFFFFF
        else:
            self.expect("LPAREN", message='Expecting ( after "bits" in features clause')
            self._last_token = self.expect(
                "NUMBER", message='Expecting list of bit numbers after "bits(" in features clause'
            )
            bits = 0
            tok = self._last_token
            while True:
                bit = atoi(tok.text)
                if bit < 0 or bit > 31:
                    raise self.error(f'Bit "{tok.text}" not in the range 0..31')
                bits |= 1 << bit
                if not self.accept("COMMA"):
                    break
                tok = self.expect("NUMBER")
            self.expect("RPAREN", message='Expecting ) after "bits(" in features clause')
        g = self.rules.glob
        if g.flags & GlobalFlag.FEATURES:
            raise self.error("Duplicate global features clause")
        if self.out_version < 3:
            raise self.error(
                "Global features clause requires output archive version of 3 or greater"
            )
        if self.source.label.features == bits:
            self.wwarn(f"Global features ({self.source.label.features}): No change")
        else:
            g.features = bits
            g.flags |= GlobalFlag.FEATURES

    def expect_number(self, message: str = "syntax error") -> int:
        tok = self.expect("NUMBER", message=message)
        return atoi(tok.text)

    def global_time(self) -> None:
        self._assign("time")
        if self.peek().kind not in ("PLUS", "MINUS", "NUMBER", "FLOAT"):
            raise self.error("Expecting delta of the form [+-][HH:[MM:]]SS[.d...] in time clause")
        sign = self.accept("PLUS", "MINUS")
        sec, nsec = self.time_value()
        if sign is not None and sign.kind == "MINUS":
            sec = -sec
        g = self.rules.glob
        g.sec, g.nsec = sec, nsec
        if g.flags & GlobalFlag.TIME:
            raise self.error("Duplicate global time clause")
        if sec == 0 and nsec == 0:
            self.wwarn("Global time: No change")
        else:
            g.flags |= GlobalFlag.TIME

    def time_value(self) -> tuple[int, int]:
        first = self.expect("NUMBER", "FLOAT")
        if first.kind == "FLOAT":
            f = float(first.text)
            if f > 59:
                self.warn(f"Seconds ({f:.6f}) in time clause more than 59")
            return int(f), _nsec(f)
        a = atoi(first.text)
        if not self.accept("COLON"):
            if a > 59:
                self.warn(f"Seconds ({a}) in time clause more than 59")
            return a, 0
        second = self.expect("NUMBER", "FLOAT")
        if second.kind == "FLOAT":
            f = float(second.text)
            self._minutes(a)
            if f > 59:
                self.warn(f"Seconds ({f:.6f}) in time clause more than 59")
            return a * 60 + int(f), _nsec(f)
        b = atoi(second.text)
        if not self.accept("COLON"):
            self._minutes(a)
            if b > 59:
                self.warn(f"Seconds ({b}) in time clause more than 59")
            return a * 60 + b, 0
        third = self.expect("NUMBER", "FLOAT")
        self._minutes(b)
        if third.kind == "FLOAT":
            f = float(third.text)
            if f > 59:
                self.warn(f"Seconds ({f:.6f}) in time clause more than 59")
            return a * 3600 + b * 60 + int(f), _nsec(f)
        c = atoi(third.text)
        if c > 59:
            self.warn(f"Seconds ({c}) in time clause more than 59")
        return a * 3600 + b * 60 + c, 0

    def _minutes(self, m: int) -> None:
        if m > 59:
            self.warn(f"Minutes ({m}) in time clause more than 59")

    # -- instance domains --------------------------------------------------------------

    def indom_int(self, tok: Token) -> int:
        """An instance domain's identifier (domain.serial or domain.*)."""
        if tok.kind == "INDOM_STAR":
            domain = atoi(tok.text.split(".")[0])
            if domain < 1 or domain >= DYNAMIC_PMID:
                raise self.error(f"Illegal domain field ({domain}) for indom")
            self.star_indom = True
            return pmInDom_build(domain, 0)
        head, _, tail = tok.text.partition(".")
        domain = atoi(head)
        if not tail:
            raise self.error("Missing serial field for indom")
        serial = atoi(tail)
        if domain < 1 or domain >= DYNAMIC_PMID:
            raise self.error(f"Illegal domain field ({domain}) for indom")
        if serial < 0 or serial >= 4194304:
            raise self.error(f"Illegal serial field ({serial}) for indom")
        self.star_indom = False
        return pmInDom_build(domain, serial)

    def start_indom(self, indom: int) -> IndomSpec | None:
        """The spec for INDOM, made on first use from the archive's instances."""
        found = self.rules.indom(indom)
        if found is not None:
            return found
        members = self.source.indom_members(indom)
        if members is None:
            self.wwarn(
                f"Instance domain {pmInDomStr(indom)}: Instance domain identifier not defined"
                " in the PCP archive log"
            )
            return None
        insts, names = members
        n = len(insts)
        spec = IndomSpec(indom, indom, insts, names, [InstFlag(0)] * n, [0] * n, [None] * n)
        self.rules.indoms.insert(0, spec)
        return spec

    def walk_indom(self) -> Iterator[IndomSpec]:
        if self.walk_indoms:
            for spec in list(self.rules.indoms):
                if pmInDom_domain(spec.old_indom) == self.star_domain:
                    yield spec
        elif self.current_indom is not None:
            yield self.current_indom

    def indom_spec(self) -> None:
        tok = self.expect(
            "FLOAT", "INDOM_STAR", message="Expecting <domain>.<serial> or <domain>.* in indom rule"
        )
        indom = self.indom_int(tok)
        if self.star_indom:
            self.star_domain = pmInDom_domain(indom)
            for key in self.source.indoms:
                if pmInDom_domain(key) == self.star_domain:
                    self.current_indom = self.start_indom(key)
            self.walk_indoms = True
        else:
            self.current_indom = self.start_indom(indom)
            self.walk_indoms = False
        self.expect("LBRACE")
        while not self.accept("RBRACE"):
            kind = self.take().kind
            if kind == "INDOM":
                self.indom_indom()
            elif kind == "INAME":
                self.indom_iname()
            elif kind == "INST":
                self.indom_inst()
            else:
                raise self.error("syntax error")

    def indom_indom(self) -> None:
        self.expect("ASSIGN", message="Expecting -> in indom clause")
        message = "Expecting <domain>.<serial> or <domain>.* in indom clause"
        tok = self.expect("DUPLICATE", "FLOAT", "INDOM_STAR", message=message)
        dup = 0
        if tok.kind == "DUPLICATE":
            dup = INDOM_DUPLICATE
            tok = self.expect("FLOAT", "INDOM_STAR")
        target = self.indom_int(tok)
        for spec in self.walk_indom():
            head = self.rules.indoms[0]
            if head.new_indom != head.old_indom:
                raise self.error(f"Duplicate indom clause for indom {pmInDomStr(head.old_indom)}")
            if self.star_indom:
                indom = pmInDom_build(pmInDom_domain(target), pmInDom_serial(spec.old_indom))
            else:
                indom = target
            if indom != spec.old_indom:
                spec.new_indom = indom
            else:
                self.wwarn(f"Instance domain {pmInDomStr(spec.old_indom)}: indom: No change")
            spec.indom_flags |= dup

    def indom_iname(self) -> None:
        old = self.expect(
            "STRING", message="Expecting old external instance name string in iname clause"
        )
        self.expect("ASSIGN", message="Expecting -> in iname clause")
        new = self.expect(
            "STRING",
            "DELETE",
            message="Expecting new external instance name string or DELETE in iname clause",
        )
        for spec in self.walk_indom():
            self.change_inst_by_name(
                spec, str(old.value), None if new.kind == "DELETE" else str(new.value)
            )

    def indom_inst(self) -> None:
        old = self.expect_number("Expecting old internal instance identifier in inst clause")
        self.expect("ASSIGN", message="Expecting -> in inst clause")
        new = self.expect(
            "NUMBER",
            "DELETE",
            message="Expecting new internal instance identifier or DELETE in inst clause",
        )
        for spec in self.walk_indom():
            self.change_inst_by_inst(
                spec, old, PM_IN_NULL if new.kind == "DELETE" else atoi(new.text)
            )

    def _conflict(self, spec: IndomSpec, i: int) -> None:
        raise self.error(
            f"Duplicate or conflicting clauses for instance [{spec.old_inst[i]}] "
            f'"{spec.old_iname[i]}" of indom {pmInDomStr(spec.old_indom)}'
        )

    def change_inst_by_name(self, spec: IndomSpec, old: str, new: str | None) -> None:
        i = next((k for k, n in enumerate(spec.old_iname) if inst_name_eq(n, old) > 0), None)
        if i is None:
            self.wwarn(
                f'Unknown instance "{old}" in iname clause for indom {pmInDomStr(spec.old_indom)}'
            )
            return
        flags = spec.inst_flags[i]
        if (new is None and flags) or flags & (InstFlag.INAME | InstFlag.DELETE):
            self._conflict(spec, i)
        if new is None:
            spec.inst_flags[i] |= InstFlag.DELETE
            spec.new_iname[i] = None
        elif spec.old_iname[i] == new:
            self.wwarn(
                f'Instance domain {pmInDomStr(spec.old_indom)}: Instance: "{spec.old_iname[i]}":'
                " No change"
            )
        else:
            spec.inst_flags[i] |= InstFlag.INAME
            spec.new_iname[i] = new

    def change_inst_by_inst(self, spec: IndomSpec, old: int, new: int) -> None:
        i = next((k for k, n in enumerate(spec.old_inst) if n == old), None)
        if i is None:
            self.wwarn(
                f"Unknown instance {old} in inst clause for indom {pmInDomStr(spec.old_indom)}"
            )
            return
        flags = spec.inst_flags[i]
        if (new == PM_IN_NULL and flags) or flags & (InstFlag.INST | InstFlag.DELETE):
            self._conflict(spec, i)
        if new == PM_IN_NULL:
            spec.inst_flags[i] |= InstFlag.DELETE
            spec.new_inst[i] = PM_IN_NULL
        elif spec.old_inst[i] == new:
            self.wwarn(
                f"Instance domain {pmInDomStr(spec.old_indom)}: Instance: {spec.old_inst[i]}:"
                " No change"
            )
        else:
            spec.new_inst[i] = new
            spec.inst_flags[i] |= InstFlag.INST

    # -- metrics -----------------------------------------------------------------------

    def pmid_int(self, tok: Token) -> int:
        parts = tok.text.split(".")
        domain = atoi(parts[0])
        if domain < 1 or domain > DYNAMIC_PMID:
            raise self.error(f"Illegal domain field ({domain}) for pmid")
        if domain == DYNAMIC_PMID:
            self.warn(f"Dynamic metric domain field ({domain}) for pmid")
        if tok.kind == "PMID_INT":
            cluster, item = atoi(parts[1]), atoi(parts[2])
            if cluster < 0 or cluster >= 4096:
                raise self.error(f"Illegal cluster field ({cluster}) for pmid")
            if item < 0 or item >= 1024:
                raise self.error(f"Illegal item field ({item}) for pmid")
            self.star_metric = 0
            return pmID_build(domain, cluster, item)
        if parts[1] == "*":
            self.star_metric = 2
            return pmID_build(domain, 0, 0)
        cluster = atoi(parts[1])
        if cluster >= 4096:
            raise self.error(f"Illegal cluster field ({cluster}) for pmid")
        self.star_metric = 1
        return pmID_build(domain, cluster, 0)

    def pmid_or_name(self, tok: Token) -> int:
        if tok.kind != "GNAME":
            return self.pmid_int(tok)
        pmid = self.source.lookup_name(tok.text)
        if pmid is None:
            self.wwarn(f"Metric: {tok.text}: Unknown metric name")
            pmid = PM_ID_NULL
        self.star_metric = 0
        return pmid

    def start_metric(self, pmid: int) -> MetricSpec | None:
        found = self.rules.metric(pmid)
        if found is not None:
            return found
        name = self.source.name_of(pmid)
        if name is None:
            self.wwarn(f"Metric {pmIDStr(pmid)} pmNameID: Unknown or illegal metric identifier")
            return None
        desc = self.source.desc(pmid)
        if desc is None:
            self.wwarn(
                f"Metric {pmIDStr(pmid)}: pmLookupDesc: Metric not defined in the PCP archive log"
            )
            return None
        spec = MetricSpec(name, desc, desc)
        self.rules.metrics.insert(0, spec)
        return spec

    def _star_match(self, pmid: int) -> bool:
        return pmID_domain(pmid) == self.star_domain and (
            self.star_cluster == PM_ID_NULL or self.star_cluster == pmID_cluster(pmid)
        )

    def walk_metric(self, flag: MetricFlag, which: str, dupok: bool,
                    first_dupok: bool | None = None) -> Iterator[MetricSpec]:  # fmt: skip
        if self.walk_metrics:
            targets = [m for m in self.rules.metrics if self._star_match(m.old_desc.pmid)]
        else:
            targets = [self.current_metric] if self.current_metric is not None else []
        for n, spec in enumerate(targets):
            ok = dupok if (n or first_dupok is None) else first_dupok
            if not ok and spec.flags & flag:
                raise self.error(f"Duplicate {which} clause for metric {spec.old_name}")
            if flag != MetricFlag.DELETE:
                if spec.flags & MetricFlag.DELETE:
                    raise self.error(
                        f"Conflicting {which} clause for deleted metric {spec.old_name}"
                    )
            elif spec.flags & ~MetricFlag.DELETE:
                raise self.error(f"Conflicting delete and other clauses for metric {spec.old_name}")
            yield spec

    def metric_spec(self) -> None:
        message = (
            "Expecting metric name or <domain>.<cluster>.<item> or <domain>.<cluster>.* or"
            " <domain>.*.* in metric rule"
        )
        tok = self.expect("PMID_INT", "PMID_STAR", "GNAME", message=message)
        pmid = self.pmid_or_name(tok)
        if self.star_metric:
            self.star_domain = pmID_domain(pmid)
            self.star_cluster = pmID_cluster(pmid) if self.star_metric == 1 else PM_ID_NULL
            for key in self.source.descs:
                if self._star_match(key):
                    self.current_metric = self.start_metric(key)
            self.walk_metrics = True
        else:
            self.current_metric = None if pmid == PM_ID_NULL else self.start_metric(pmid)
            self.walk_metrics = False
        self.expect("LBRACE")
        while not self.accept("RBRACE"):
            kind = self.take().kind
            handler = {"PMID": self.metric_pmid, "NAME": self.metric_name,
                       "TYPE": self.metric_type, "INDOM": self.metric_indom,
                       "SEM": self.metric_sem, "UNITS": self.metric_units,
                       "DELETE": self.metric_delete}.get(kind)  # fmt: skip
            if handler is None:
                raise self.error("syntax error")
            handler()

    def metric_pmid(self) -> None:
        self.expect("ASSIGN")
        tok = self.expect(
            "PMID_INT",
            "PMID_STAR",
            message="Expecting <domain>.<cluster>.<item> or <domain>.<cluster>.* or"
            " <domain>.*.* in pmid clause",
        )
        target = self.pmid_int(tok)  # (which sets the wildcard kind, as PCP's does)
        for spec in self.walk_metric(MetricFlag.PMID, "pmid", False):
            old = spec.old_desc.pmid
            if self.star_metric == 1:
                pmid = pmID_build(pmID_domain(target), pmID_cluster(target), pmID_item(old))
            elif self.star_metric == 2:
                pmid = pmID_build(pmID_domain(target), pmID_cluster(old), pmID_item(old))
            else:
                pmid = target
            if pmid == old:
                self.wwarn(f"Metric: {spec.old_name} ({pmIDStr(old)}): pmid: No change")
            else:
                spec.change(pmid=pmid)
                spec.flags |= MetricFlag.PMID

    def metric_name(self) -> None:
        self.expect("ASSIGN")
        tok = self.expect("GNAME", message="Expecting metric name in iname clause")
        for spec in self.walk_metric(MetricFlag.NAME, "name", False):
            if tok.text == spec.old_name:
                self.wwarn(
                    f"Metric: {spec.old_name} ({pmIDStr(spec.old_desc.pmid)}): name: No change"
                )
                continue
            pmid = self.source.lookup_name(tok.text)
            if pmid is not None:
                raise self.error(
                    f"Metric name {tok.text} already assigned for PMID {pmIDStr(pmid)}"
                )
            spec.new_name = tok.text
            spec.flags |= MetricFlag.NAME

    def metric_type(self) -> None:
        tok = self.expect("ASSIGN", "IF")
        if tok.kind == "ASSIGN":
            new = self.expect(
                "TYPE_NAME", message="Expecting XXX (from PM_TYPE_XXX) in type clause"
            )
            self._retype(None, int(new.value))  # type: ignore[arg-type]
            return
        cond = self.expect(
            "TYPE_NAME", message="Expecting XXX (from PM_TYPE_XXX) after if in type clause"
        )
        self.expect("ASSIGN")
        new = self.expect("TYPE_NAME", message="Expecting XXX (from PM_TYPE_XXX) in type clause")
        self._retype(int(cond.value), int(new.value))  # type: ignore[arg-type]

    def _retype(self, cond: int | None, new: int) -> None:
        for spec in self.walk_metric(MetricFlag.TYPE, "type", cond is not None):
            old = spec.old_desc.type
            where = f"Metric: {spec.old_name} ({pmIDStr(spec.old_desc.pmid)}): type:"
            if cond is None and new == old:
                self.wwarn(f"{where} PM_TYPE_{pmTypeStr(old)}: No change")
                continue
            if cond is not None and old != cond:
                self.wwarn(
                    f"{where} PM_TYPE_{pmTypeStr(old)}: No conditional change to"
                    f" PM_TYPE_{pmTypeStr(new)}"
                )
                continue
            if old not in NUMERIC_TYPES:
                raise self.error(f"Old type (PM_TYPE_{pmTypeStr(old)}) must be numeric")
            spec.change(type=new)
            spec.flags |= MetricFlag.TYPE

    def metric_indom(self) -> None:
        self.expect("ASSIGN")
        tok = self.expect(
            "FLOAT",
            "INDOM_STAR",
            "NULL_INT",
            message="Expecting <domain>.<serial> or NULL in indom clause",
        )
        target = PM_INDOM_NULL if tok.kind == "NULL_INT" else self.indom_int(tok)
        output, one_inst, one_name = Output.ALL, 0, None
        if self.accept("OUTPUT"):
            pick = self.expect(
                "INST",
                "INAME",
                "OUTPUT_TYPE",
                message="Expecting FIRST or LAST or INST or INAME or MIN or MAX or AVG for"
                " OUTPUT instance option",
            )
            if pick.kind == "INST":
                output, one_inst = Output.ONE, self.expect_number()
            elif pick.kind == "INAME":
                output, one_inst = Output.ONE, PM_IN_NULL
                one_name = str(self.expect("STRING").value)
            else:
                output = Output(int(pick.value))  # type: ignore[arg-type]
        for spec in self.walk_metric(MetricFlag.INDOM, "indom", False):
            old = spec.old_desc.indom
            if self.star_indom and tok.kind != "NULL_INT":
                indom = pmInDom_build(pmInDom_domain(target), pmInDom_serial(old))
            else:
                indom = target
            if indom == old:
                self.wwarn(
                    f"Metric: {spec.old_name} ({pmIDStr(spec.old_desc.pmid)}): indom:"
                    f" {pmInDomStr(old)}: No change"
                )
                continue
            if output in (Output.MIN, Output.MAX, Output.SUM, Output.AVG) and (
                spec.old_desc.type not in NUMERIC_TYPES
            ):
                raise self.error(
                    "OUTPUT option MIN, MAX, AVG or SUM requires type to be numeric, not"
                    f" PM_TYPE_{pmTypeStr(spec.old_desc.type)}"
                )
            spec.change(indom=indom)
            spec.flags |= MetricFlag.INDOM
            spec.output = output
            if output == Output.ONE:
                spec.one_name, spec.one_inst = one_name, one_inst
                if old == PM_INDOM_NULL:
                    spec.output = Output.FIRST
            if output == Output.ALL:
                if old != PM_INDOM_NULL and indom == PM_INDOM_NULL:
                    spec.output, spec.one_inst = Output.FIRST, PM_IN_NULL
                elif old == PM_INDOM_NULL and indom != PM_INDOM_NULL:
                    spec.output, spec.one_inst = Output.FIRST, 0

    def metric_sem(self) -> None:
        self.expect("ASSIGN")
        tok = self.expect("SEM_NAME", message="Expecting XXX (from PM_SEM_XXX) in sem clause")
        for spec in self.walk_metric(MetricFlag.SEM, "sem", False):
            if tok.value == spec.old_desc.sem:
                self.wwarn(
                    f"Metric: {spec.old_name} ({pmIDStr(spec.old_desc.pmid)}): sem:"
                    f" {sem_str(spec.old_desc.sem)}: No change"
                )
            else:
                spec.change(sem=tok.value)
                spec.flags |= MetricFlag.SEM

    def _signnumber(self, message: str = "syntax error") -> int:
        sign = self.accept("PLUS", "MINUS")
        if sign is None and self.peek().kind != "NUMBER":
            raise self.error(message)
        n = self.expect_number()
        return -n if sign is not None and sign.kind == "MINUS" else n

    def metric_units(self) -> None:
        self.expect("ASSIGN")
        dims = [self._signnumber("Expecting 3 numeric values for dim* fields of units")]
        for _ in range(2):
            self.expect("COMMA")
            dims.append(self._signnumber())
        self.expect("COMMA")
        space = self.expect(
            "SPACE_NAME",
            message="Expecting 0 or XXX (from PM_SPACE_XXX) for scaleSpace field of units",
        ).value
        self.expect("COMMA")
        time = self.expect(
            "TIME_NAME",
            message="Expecting 0 or XXX (from PM_TIME_XXX) for scaleTime field of units",
        ).value
        self.expect("COMMA")
        count = self.expect(
            "COUNT_NAME", message="Expecting 0 or ONE for scaleCount field of units"
        ).value
        rescale = self.accept("RESCALE") is not None
        try:
            units = Units(dims[0], dims[1], dims[2], space, time, count)  # type: ignore[arg-type]
        except ValueError:
            units = _wrapped_units(dims, space, time, count)
        for spec in self.walk_metric(MetricFlag.UNITS, "units", False):
            old = spec.old_desc.units
            same_dims = (old.dimSpace, old.dimTime, old.dimCount) == tuple(dims)
            if same_dims and (old.scaleSpace, old.scaleTime, old.scaleCount) == (
                space,
                time,
                count,
            ):
                self.wwarn(
                    f"Metric: {spec.old_name} ({pmIDStr(spec.old_desc.pmid)}): units:"
                    f" {pmUnitsStr(old)}: No change"
                )
                continue
            spec.change(units=units)
            spec.flags |= MetricFlag.UNITS
            if rescale:
                if same_dims:
                    spec.flags |= MetricFlag.RESCALE
                else:
                    self.wwarn(
                        f"Metric: {spec.old_name} ({pmIDStr(spec.old_desc.pmid)}): Dimension"
                        " changed, cannot rescale"
                    )
            elif self.sflag and same_dims:
                spec.flags |= MetricFlag.RESCALE

    def metric_delete(self) -> None:
        for spec in self.walk_metric(MetricFlag.DELETE, "delete", False, first_dupok=True):
            spec.flags |= MetricFlag.DELETE

    # -- help text and labels (text.py, labels.py) ----------------------------------

    def text_spec(self) -> None:
        from .textrules import TextClauses

        if self._texts is None:
            self._texts = TextClauses(self)
        self._texts.clause()

    def label_spec(self) -> None:
        from .labelrules import LabelClauses

        if self._labels is None:
            self._labels = LabelClauses(self)
        self._labels.clause()


def _nsec(f: float) -> int:
    return int(1_000_000_000 * (f - int(f)) + 0.5)


def _wrapped_units(dims: list[int], space: object, time: object, count: object) -> Units:
    """Units as C's 4-bit fields keep out-of-range values (wrapped)."""

    def wrap4(n: int) -> int:
        n &= 0xF
        return n - 16 if n & 8 else n

    return Units(wrap4(dims[0]), wrap4(dims[1]), wrap4(dims[2]), int(space) & 0xF,  # type: ignore[arg-type]
                 int(time) & 0xF, wrap4(int(count)))  # type: ignore[arg-type]  # fmt: skip
