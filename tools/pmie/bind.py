"""Binding: a parsed rule becomes a tree of evaluable nodes over an archive.

Each metric reference is looked up in the archive (its PMID, descriptor,
instance domain and the factor into canonical units), as pmie's pragmatics do
while the rule is read; a node's shape (host, instance and sample domains) and
its evaluator are chosen as pmie's syntax actions choose them.  Constant
subexpressions are evaluated at once, as pmie does.  A metric that cannot be
bound gets pmie's message and drops its statement.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import operators as ops
from . import tree as t
from . import values as v
from .values import Node

PROG = "pmie"
ARITH = {"+", "-", "*", "/"}
RELATIONAL = {"==", "!=", "<", ">", "<=", ">="}
UNARY = {"-": "neg", "!": "not", "instant": "instant"}
MERGE = {"rate", "rising", "falling"}
#: the operators whose values follow a metric's instances, reshaped when it is bound late
RESHAPED = frozenset(
    {"fetch", "neg", "not", "instant", "rising", "falling", "match", "nomatch"}
    | {"+", "-", "*", "/", "&&", "||", "==str", "!=str"}
    | RELATIONAL
    | {f"{op}_{axis}" for op in ("sum", "avg", "max", "min") for axis in ("host", "inst", "sample")}
)


class Unsupported(Exception):
    """A language feature this evaluator does not have yet."""


class BindError(Exception):
    """A metric could not be bound: its statement is dropped (the message is out)."""


def _scale(units) -> float:
    """pragmatics' scale(): the factor from a descriptor's units into canonical ones."""
    f = 1024.0 ** (units.dimSpace * units.scaleSpace)
    if units.scaleTime > 3:
        f *= 60.0 ** (units.dimTime * (units.scaleTime - 3))
    else:
        f *= 1000.0 ** (units.dimTime * (units.scaleTime - 3))
    return f * 10.0 ** (units.dimCount * units.scaleCount)


def _const(sem: int, value: object) -> Node:
    x = Node("nop", None, None, -1, -1, -1, 1, sem)
    x.new_ring()
    x.sample()[0] = value
    x.valid = 1
    return x


def _one(arg: Node) -> bool:
    """findEval's arity: does ARG always hold one value?"""
    if arg.op in v.AGGREGATES:
        return True
    if arg.tspan == 1:
        m = arg.metrics
        if m is None:
            return True
        # (a metric not bound yet has no descriptor: pmie's is zeroed, an instance domain)
        return m.desc is not None and (m.desc.indom == _INDOM_NULL or m.specinst != 0)
    return arg.sem == v.SEM_CHAR


_INDOM_NULL = 0xFFFFFFFF
#: PM_TYPE_32, U32, 64, U64, FLOAT, DOUBLE: what sum_* and avg_* can add up
_ARITHMETIC = frozenset(range(6))
#: types pmie cannot evaluate: aggregates, events, unknown (PM_TYPE_* numbers)
_BAD_TYPES = frozenset((7, 8, 9, 10, 255))


class Binder:
    """Builds nodes for the statements of one rule file against one archive."""

    def __init__(self, default, notify: Callable[[str, str], None], warn: Callable[[str], None],
                 pick: Callable[[str], Any] | None = None) -> None:  # fmt: skip
        self.default = default  # the source of metrics with no ':host' (a sources.*Source)
        self.pick = pick  # live: the source for a ':host' qualifier's connection string
        self.notify = notify  # pmNotifyErr (level, message)
        self.warn = warn  # a line on stderr
        self.clocks: list[Node] = []  # $delta and friends, kept current by the run
        #: what the parse actions refused, and the line each said it of (None: the
        #: statement's)
        self.errors: list[tuple[str, int | None]] = []
        self.waiting: list[v.Bound] = []  # live metrics not bound yet (tried again later)

    def syntax_error(self, message: str, line: int | None = None) -> None:
        """A statement pmie's parse actions refuse once its metrics are bound: the
        message, and the statement goes."""
        self.errors.append((message, line))

    def build(self, e: t.Expr | None) -> Node:
        if e is None:
            raise Unsupported("an incomplete expression")
        method = getattr(self, "_" + type(e).__name__.lower())
        return method(e)

    # -- leaves ---------------------------------------------------------------------------------

    def _num(self, e: t.Num) -> Node:
        return _const(v.SEM_NUMCONST, e.value)

    def _bool(self, e: t.Bool) -> Node:
        return _const(v.SEM_BOOLEAN, int(e.value))

    def _str(self, e: t.Str) -> Node:
        x = Node("nop", None, None, -1, -1, -1, 1, v.SEM_CHAR)
        x.tspan = len(e.text.encode()) + 1  # (nvals stays 1, as pmie's strConst leaves it)
        x.nvals = 1
        x.valid = 1
        x.text = e.text
        x.ring, x.ptrs, x.stamps = [[e.text]], [0], [0.0]
        return x

    def _macro(self, e: t.Macro) -> Node:
        return self.build(e.value)

    def _clock(self, e: t.Clock) -> Node:
        x = _const(v.SEM_NUMVAR, 0.0)
        x.op = "var"
        x.extra = e.name
        self.clocks.append(x)
        return x

    def _fetch(self, e: t.Fetch) -> Node:
        """fetchExpr: the metric at each host named (else the default one), bound now;
        one node holds all their values, host after host."""
        low, high = e.samples or (0, 0)
        fsz, dsz = (high - low + 1, 0) if low == 0 else (low + 1, high - low + 1)
        found: list[v.Bound] = []
        for host in e.hosts or (None,):
            src = self.default if host is None else self._host(host)
            m = v.Bound(e.metric, src.conn, src.hname, 0, None, 0.0, len(e.instances), -1,
                        list(e.instances) or None, None)  # fmt: skip
            m.source, m.wanted = src, list(e.instances)
            status = self.init_metric(m, reinit=False)
            if status < 0 or (status == 0 and not src.live):  # (an archive will not grow it)
                raise BindError(e.metric)
            m.ready = status == 1
            found.append(m)
        total = sum(m.m_idom for m in found if m.m_idom > 0)
        x = Node("fetch", None, None, len(found), total if total > 0 else -1, fsz, fsz,
                 v.SEM_UNKNOWN)  # fmt: skip
        x.metrics = found[0]
        x.hosts = found if len(found) > 1 else None
        for m in found:
            m.node = x
        x.new_ring()
        if not all(m.ready for m in found):
            x.evaluate = ops.fetch_waiting
            self.waiting.extend(m for m in found if not m.ready)
            if found[0].desc is not None:
                self._fetch_shape(x)
        else:
            self._fetch_eval(x)
        if dsz:
            d = Node("delay", x, None, x.hdom, x.e_idom, dsz, dsz, x.sem)
            d.new_ring()
            d.one1 = _one(x)
            d.evaluate = ops.delay
            return d
        return x

    def _host(self, name: str):
        """The source a ':host' qualifier names: a pmcd's connection, an archive's host."""
        if self.pick is None:
            return self.default
        return self.pick(name)

    def _fetch_eval(self, x: Node) -> None:
        """findEval and instFetchExpr for a fetch node whose metrics are bound."""
        m = x.metrics
        assert m is not None
        if m.desc.indom == _INDOM_NULL:
            x.evaluate = ops.fetch_one
        elif m.specinst == 0:
            x.evaluate = ops.fetch_all
            for each in v.bounds(x):
                each.namer = self._namer(each)
        else:
            x.evaluate = ops.fetch_named
        self._fetch_shape(x)

    def _namer(self, m: v.Bound):
        """How a fetch of every instance names one that has turned up at M's source."""
        indom = m.desc.indom
        return lambda inst: self._inst_name(m.source, m, indom, inst)

    def rebind(self, m: v.Bound) -> int:
        """reinitMetric: try a waiting metric again (1: bound, 0: not yet, -1: never);
        once bound, its node and the nodes above it take their shape from it."""
        status = self.init_metric(m, reinit=True)
        if status != 1:
            return status
        m.ready = True
        x = m.node
        assert x is not None
        if not all(each.ready for each in v.bounds(x)):
            return 1  # (bound, but the node waits for its other hosts' metrics)
        self._fetch_eval(x)
        # (reinitMetric's reshaping: up from the fetch, each node that may hold a set of
        # values takes the metric's instances and its evaluator's arity again, stopping
        # below an operator that makes one value of a set)
        node: Node | None = x
        while node is not None:
            if node.op in RESHAPED:
                v.inst_fetch_expr(node)
                if node.a1 is not None:
                    node.one1 = _one(node.a1)
                if node.a2 is not None:
                    node.one2 = _one(node.a2)
            node = node.parent
            if node is not None and node.op in v.AGGREGATES:
                break
        return 1

    def _fetch_shape(self, x: Node) -> None:
        """instFetchExpr at build time: semantics and instances from the metric."""
        m = x.metrics
        assert m is not None
        x.sem = v.PM_SEM_INSTANT if m.desc.sem == v.PM_SEM_COUNTER else m.desc.sem
        ninst = v.instances(x)
        if x.e_idom != ninst:
            v.reshape(x, ninst)
        x.new_ring()

    def _inst_name(self, src, m: v.Bound, indom: int, inst: int) -> str | None:
        from purepcp.pmapi.errors import PMError, pmErrStr

        try:
            if src.live:
                return dict(src.instances(indom)).get(inst)
            return src.instance_name(indom, inst)
        except PMError as exc:
            why = pmErrStr(exc.code)
            what = f"metric {m.name} from {src.where()}: instance domain"
            if src.live:
                self.notify("Error", f"{what} not (currently) available\n"
                            f"pmGetInDom failed: {why}\n")  # fmt: skip
            else:
                self.notify("Error", f"{what} not available in archive\n"
                            f"pmNameInDomArchive failed: {why}\n")  # fmt: skip
            return None

    def init_metric(self, m: v.Bound, reinit: bool) -> int:
        """pragmatics' init(): look the metric up at its source, with PCP's messages
        (only the first time); 1: bound, 0: try again later, -1: never."""
        from purepcp.pmapi.errors import PMError, pmErrStr

        src = m.source
        if src.live and not src.connect():
            return 0
        m.hname = src.hname
        if src.live:
            src.states.changed(src.conn, "reconn")
        ctx = src.context()
        try:
            m.pmid = ctx.lookup_name(m.name)
        except PMError as exc:
            if not reinit:
                self.warn(f"{PROG}: metric {m.name} not in namespace for {src.where()}\n"
                          f"pmLookupName failed: {pmErrStr(exc.code)}\n")  # fmt: skip
            return 0
        try:
            desc = ctx.lookup_desc(m.pmid)
        except PMError as exc:
            if not reinit:
                why = pmErrStr(exc.code)
                self.warn(f"{PROG}: metric {m.name} not currently available from "
                          f"{src.where()}\npmLookupDesc failed: {why}\n")  # fmt: skip
            return 0
        m.desc = desc  # (known even while the metric waits for its instances)
        if desc.type in _BAD_TYPES:
            self.warn(f"{PROG}: metric {m.name} has inappropriate type\n")
            return -1
        if desc.indom == _INDOM_NULL:
            if m.specinst:
                self.warn(f"{PROG}: metric {m.name} has no instances\n")
                return -1
            m.m_idom = 1
            status = 1
        else:
            status = self._instances(src, m, desc, reinit)
        if status == 1:
            m.conv = _scale(desc.units)
            if desc.sem == v.PM_SEM_COUNTER:
                m.vals = [0.0] * max(m.m_idom, 0)
        return status

    def _instances(self, src, m: v.Bound, desc, reinit: bool) -> int:
        from purepcp.pmapi.errors import PMError, pmErrStr

        try:
            found = src.instances(desc.indom)
        except PMError as exc:
            why = pmErrStr(exc.code)
            if src.live:
                self.warn(f"Instance domain for metric {m.name} from {src.where()} not "
                          f"(currently) available\npmGetIndom failed: {why}\n")  # fmt: skip
                return 0
            self.warn(f"Metric {m.name} from {src.where()} - instance domain not available "
                      f"in archive\npmGetInDomArchive failed: {why}\n")  # fmt: skip
            return -1
        if not m.specinst:
            m.iids = [i for i, _ in found]
            m.inames = [n for _, n in found]
            m.m_idom = len(found)
            return 1
        wanted = m.wanted
        iids: list[int] = []
        missing = False
        for name in wanted:
            hit = next((i for i, n in found if _same_instance(name, n)), None)
            if hit is None:
                if not reinit:
                    self.notify("Error", f"metric {m.name} from {src.where()} does not "
                                f'(currently) have instance "{name}"\n')  # fmt: skip
                missing = True
            else:
                iids.append(hit)
        if missing:  # (those found first: the node has their shape while it waits)
            m.iids, m.m_idom = iids, len(iids)
            m.inames = [n for n in wanted if any(_same_instance(n, f) for _, f in found)]
            return 0
        m.iids, m.inames, m.m_idom = iids, list(wanted), len(iids)
        return 1

    # -- operators ------------------------------------------------------------------------------

    def _unary(self, e: t.Unary) -> Node:
        arg = self.build(e.arg)
        if e.op in MERGE:
            return self._merge(e.op, arg)
        x = Node(UNARY[e.op], arg, None, arg.hdom, arg.e_idom, arg.tdom, abs(arg.tdom), arg.sem)
        x.new_ring()
        x.one1 = _one(arg)
        x.evaluate = ops.unary
        return _fold(x)

    def _merge(self, op: str, arg: Node) -> Node:
        if arg.nsmpls < 2:
            v.change_samples(arg, 2)
        x = Node(op, arg, None, arg.hdom, arg.e_idom, arg.tdom, abs(arg.tdom), arg.sem)
        x.new_ring()
        x.one1 = _one(arg)
        x.evaluate = ops.merge
        return x

    def _binary(self, e: t.Binary) -> Node:
        a1, a2 = self.build(e.left), self.build(e.right)
        self._check_domains(a1, a2, e.line)
        arg = v.primary(a1, a2)
        sem = v.SEM_BOOLEAN if e.op in RELATIONAL else arg.sem
        op = e.op
        if op in ("==", "!="):
            if _stringy(a1) != _stringy(a2):  # (relExpr's checkTypes, once bound)
                self.syntax_error("operands have mixed string and arithmetic types", e.line)
            elif _stringy(a1):
                op += "str"
        elif e.op in RELATIONAL and (_string_values(a1) or _string_values(a2)):
            raise Unsupported("string ordering")
        x = Node(op, a1, a2, arg.hdom, arg.e_idom, arg.tdom, abs(arg.tdom), sem)
        x.new_ring()
        if e.op in RELATIONAL and x.tspan > 0:
            for k in range(x.nsmpls):
                x.ring[k][0] = v.B_UNKNOWN
        x.one1, x.one2 = _one(a1), _one(a2)
        x.evaluate = ops.andor if e.op in ("&&", "||") else ops.binary
        return _fold(x)

    def _check_domains(self, a1: Node, a2: Node, line: int) -> None:
        """checkDoms: two operands of several values each must have as many hosts,
        instances and samples."""
        if a1.nvals == 1 or a2.nvals == 1:
            return
        for what, m, n in (("host", a1.hdom, a2.hdom), ("instance", a1.e_idom, a2.e_idom),
                           ("time", a1.tdom, a2.tdom)):  # fmt: skip
            if m != n:
                self.syntax_error(f"{what} domains have different size ({m} and {n})", line)
                return

    def _aggregate(self, e: t.Aggregate) -> Node:
        return self._domain(e.op, e.axis, self.build(e.arg), e.line)

    def _quantifier(self, e: t.Quantifier) -> Node:
        arg = self.build(e.arg)
        x = self._domain(e.op, e.axis, arg)
        if e.op == "pcnt":
            assert e.percent is not None
            x.a2 = _const(v.SEM_NUMCONST, e.percent / 100.0)
        return x

    def _domain(self, op: str, axis: str, arg: Node, line: int | None = None) -> Node:
        hdom, idom, tdom = arg.hdom, arg.e_idom, arg.tdom
        if axis == "host":
            hdom = idom = -1
        elif axis == "inst":
            idom = -1
        else:
            tdom = -1
        m = arg.metrics
        if op in ("sum", "avg") and m is not None and m.desc is not None \
                and m.desc.type not in _ARITHMETIC:  # fmt: skip
            from purepcp.pmapi.types import pmTypeStr

            why = f"arithmetic (not {pmTypeStr(m.desc.type)}) operand required"
            self.syntax_error(f"{why} for aggregate operator", line)
        sem = v.PM_SEM_INSTANT if op == "count" else arg.sem
        x = Node(f"{op}_{axis}", arg, None, hdom, idom, tdom, abs(tdom), sem)
        x.new_ring()
        x.evaluate = ops.aggregate
        return x

    def _match(self, e: t.Match) -> Node:
        from .ere import compile_ere

        arg = self.build(e.arg)
        pattern = _const(v.SEM_REGEX, 0)
        pattern.extra = compile_ere(e.pattern)
        x = Node("nomatch" if e.negate else "match", arg, pattern, arg.hdom, arg.e_idom,
                 arg.tdom, abs(arg.tdom), arg.sem)  # fmt: skip
        x.metrics = arg.metrics
        x.new_ring()
        x.evaluate = ops.match_inst
        return x

    def _ruleset(self, e: t.RuleSet) -> Node:
        """ruleset: the rules chained by 'else', then the unknown/otherwise clause."""
        rules = [self.build(r) for r in e.rules]
        chain = rules[-1]
        for r in reversed(rules[:-1]):
            chain = self._pair("else", r, chain)
        other = None
        if e.unknown is not None or e.otherwise is not None:
            other = self._pair("other", self._clause(e.unknown), self._clause(e.otherwise))
        x = self._pair("ruleset", chain, other)
        x.evaluate = ops.ruleset
        return x

    def _clause(self, action: t.Expr | None) -> Node:
        """An unknown or otherwise clause: a rule whose condition is true (or nothing)."""
        if action is None:
            return _const(v.SEM_BOOLEAN, v.B_FALSE)
        return self._rule(t.Rule(t.Bool(True), action))

    def _pair(self, op: str, a1: Node, a2: Node | None) -> Node:
        arg = v.primary(a1, a2)
        x = Node(op, a1, a2, arg.hdom, arg.e_idom, arg.tdom, abs(arg.tdom), arg.sem)
        x.new_ring()
        return x

    def _rule(self, e: t.Rule) -> Node:
        cond = self.build(e.condition)
        if cond.nvals != 1:
            self.syntax_error("rule condition must have a single boolean value")
        act = self.build(e.action)
        x = Node("rule", cond, act, -1, -1, -1, 1, v.SEM_BOOLEAN)
        x.new_ring()
        x.evaluate = ops.rule
        return x

    def _actionpair(self, e: t.ActionPair) -> Node:
        a1, a2 = self.build(e.left), self.build(e.right)
        x = Node(e.op, a1, a2, -1, -1, -1, 1, v.SEM_BOOLEAN)
        x.new_ring()
        x.evaluate = ops.act_and if e.op == "&" else ops.act_or
        return x

    def _action(self, e: t.Action) -> Node:
        if e.kind == "stomp" and self.default.live:
            raise Unsupported("stomp actions (a JMS server)")
        args = Node("arg", None, None, -1, 1, -1, 1, v.SEM_CHAR)
        args.new_ring()
        args.extra = e.args
        args.options = e.syslog
        args.evaluate = ops.act_arg
        holdoff = None if e.holdoff is None else _const(v.SEM_NUMCONST, e.holdoff.value)
        x = Node(e.kind, args, holdoff, -1, -1, -1, 1, v.SEM_BOOLEAN)
        x.new_ring()
        x.extra = e.kind
        if self.default.live:
            from . import actions

            x.evaluate = actions.ACT[e.kind]
            x.extra = e.syslog if e.kind == "syslog" else e.kind
        else:
            x.evaluate = ops.act_fake  # (replaying an archive, actions are only reported)
        return x


def _stringy(x: Node) -> bool:
    if x.sem == v.SEM_CHAR:
        return True
    m = x.metrics
    return m is not None and m.desc is not None and m.desc.type == v.STRING_TYPE


def _string_values(x: Node) -> bool:
    """Does X give strings (a string constant, or a string metric's values themselves,
    not a count or truth made from them)?"""
    return x.sem == v.SEM_CHAR or (x.op in ("fetch", "delay") and _stringy(x))


def _same_instance(mine: str, theirs: str) -> bool:
    """eqinst: the whole name, or up to the first space of each."""
    if mine == theirs:
        return True
    return mine.split(" ", 1)[0] == theirs.split(" ", 1)[0] and (" " in mine or " " in theirs)


def _fold(x: Node) -> Node:
    """evalConst: an operator over constants is a constant."""
    if x.a1 is not None and x.a1.op == "nop" and (x.a2 is None or x.a2.op == "nop"):
        x.run()
        x.op = "nop"
        x.evaluate = None
        x.a1 = x.a2 = None
    return x
