"""LALR(1) parse tables as bison builds them, for a grammar given rule by rule.

The derived-metric parser (parse.py) must fail where PCP's bison parser fails, so its
tables must be bison's: LALR(1) lookaheads, shift/reduce conflicts settled by
precedence (every level left-associative, as PCP's %left declarations) and otherwise by
shifting, reduce/reduce conflicts by the earlier rule, and default reductions only
where bison makes them (never in a state that shifts the error token).  Rule 0 is the
start rule; a symbol is a nonterminal when some rule has it on its left.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["Rule", "Tables", "build_tables"]

A = TypeVar("A")

#: A stand-in lookahead: "whatever follows the item that expanded this one".
_PARENT = "$parent"
#: A stand-in lookahead that marks propagation (the dragon book's #).
_PROPAGATE = "#"

_Item = tuple[int, int]  # (rule, dot position)


@dataclass(frozen=True)
class Rule(Generic[A]):
    """One rule: LHS derives the symbols RHS; ACTION is the parser's business; PREC is the
    rule's precedence (None: it has none)."""

    lhs: str
    rhs: tuple[str, ...]
    action: A
    prec: int | None


@dataclass(frozen=True)
class Tables(Generic[A]):
    """The automaton: per state, the terminals' actions, the default reduction, the gotos."""

    rules: list[Rule[A]]
    actions: list[dict[str, int]]  # per state: terminal -> shift (>= 0) or ~rule
    defaults: list[int | None]  # per state: default reduction
    gotos: list[dict[str, int]]
    conflicts: tuple[int, int]  # (shift/reduce, reduce/reduce) left to defaults


def build_tables(rules: Sequence[Rule[A]], precedence: Mapping[str, int]) -> Tables[A]:
    """RULES' LALR(1) automaton, with bison's conflict resolution and default reductions;
    PRECEDENCE gives the terminals' precedence levels (higher binds tighter)."""
    grammar = _Grammar(list(rules))
    kernels, transitions = grammar.lr0_states()
    lookahead = grammar.lalr_lookaheads(kernels, transitions)
    actions, defaults, gotos = [], [], []
    sr = rr = 0
    for s, kernel in enumerate(kernels):
        items = grammar.closure1({item: lookahead[(s, item)] for item in kernel})
        row, default, conflicts = grammar.state_actions(items, transitions[s], precedence)
        gotos.append({t: n for t, n in transitions[s].items() if t in grammar.nonterminals})
        actions.append(row)
        defaults.append(default)
        sr, rr = sr + conflicts[0], rr + conflicts[1]
    return Tables(list(rules), actions, defaults, gotos, (sr, rr))


class _Grammar:
    """The rules and what is derived from them once: nullable symbols, FIRST sets, and
    what expanding each nonterminal adds to a closure."""

    def __init__(self, rules: list[Rule]) -> None:
        self.rules = rules
        self.by_lhs: dict[str, list[int]] = {}
        for r, rule in enumerate(rules):
            self.by_lhs.setdefault(rule.lhs, []).append(r)
        self.nonterminals = frozenset(self.by_lhs)
        self.nullable, self.first = self._first_sets()
        self.expansions = {n: self._expansion(n) for n in self.by_lhs}

    def _first_sets(self) -> tuple[set[str], dict[str, set[str]]]:
        """The nullable nonterminals, and the terminals each nonterminal can start with."""
        nullable: set[str] = set()
        first: dict[str, set[str]] = {n: set() for n in self.nonterminals}
        changed = True
        while changed:
            changed = False
            for rule in self.rules:
                out = first[rule.lhs]
                before = len(out)
                for s in rule.rhs:
                    if s not in self.nonterminals:
                        out.add(s)
                        break
                    out |= first[s]
                    if s not in nullable:
                        break
                else:
                    if rule.lhs not in nullable:
                        nullable.add(rule.lhs)
                        changed = True
                changed |= len(out) != before
        return nullable, first

    def first_of(self, symbols: tuple[str, ...]) -> tuple[set[str], bool]:
        """The terminals SYMBOLS can start with, and whether they can derive nothing."""
        out: set[str] = set()
        for s in symbols:
            if s not in self.nonterminals:
                out.add(s)
                return out, False
            out |= self.first[s]
            if s not in self.nullable:
                return out, False
        return out, True

    def _closure0(self, kernel: frozenset[_Item]) -> list[_Item]:
        """KERNEL's LR(0) closure, in the order items are found."""
        items, seen = list(kernel), set(kernel)
        for r, d in items:
            rhs = self.rules[r].rhs
            if d < len(rhs) and rhs[d] in self.nonterminals:
                for r2 in self.by_lhs[rhs[d]]:
                    if (r2, 0) not in seen:
                        seen.add((r2, 0))
                        items.append((r2, 0))
        return items

    def lr0_states(self) -> tuple[list[frozenset[_Item]], list[dict[str, int]]]:
        """The LR(0) states, identified by their kernels, and each one's transitions."""
        kernels: list[frozenset[_Item]] = [frozenset({(0, 0)})]
        index = {kernels[0]: 0}
        transitions: list[dict[str, int]] = []
        for kernel in kernels:  # grows as new states are found
            moves: dict[str, set[_Item]] = {}
            for r, d in self._closure0(kernel):
                rhs = self.rules[r].rhs
                if d < len(rhs):
                    moves.setdefault(rhs[d], set()).add((r, d + 1))
            row = {}
            for sym, items in moves.items():
                k = frozenset(items)
                if k not in index:
                    index[k] = len(kernels)
                    kernels.append(k)
                row[sym] = index[k]
            transitions.append(row)
        return kernels, transitions

    def _expansion(self, nonterminal: str) -> list[tuple[int, frozenset[str], bool]]:
        """What expanding NONTERMINAL adds: per item (rule, 0) of its closure, the
        lookaheads it generates itself and whether the expanding item's flow through."""
        items = {(r, 0): {_PARENT} for r in self.by_lhs[nonterminal]}
        work = list(items)
        while work:
            r, d = work.pop()
            rhs = self.rules[r].rhs
            if not rhs or rhs[0] not in self.nonterminals:
                continue
            la, through = self.first_of(rhs[1:])
            if through:
                la = la | items[(r, d)]
            for r2 in self.by_lhs[rhs[0]]:
                have = items.setdefault((r2, 0), set())
                if not la <= have:
                    have |= la
                    work.append((r2, 0))
        return [(r, frozenset(las - {_PARENT}), _PARENT in las) for (r, _), las in items.items()]

    def closure1(self, seed: dict[_Item, set[str]]) -> dict[_Item, set[str]]:
        """The LR(1) closure of SEED (items and their lookaheads)."""
        items = {k: set(v) for k, v in seed.items()}
        for (r, d), las in seed.items():
            rhs = self.rules[r].rhs
            if d >= len(rhs) or rhs[d] not in self.nonterminals:
                continue
            flow, through = self.first_of(rhs[d + 1 :])
            if through:
                flow = flow | las
            for r2, own, inherits in self.expansions[rhs[d]]:
                have = items.setdefault((r2, 0), set())
                have |= own
                if inherits:
                    have |= flow
        return items

    def lalr_lookaheads(
        self, kernels: list[frozenset[_Item]], transitions: list[dict[str, int]]
    ) -> dict[tuple[int, _Item], set[str]]:
        """Each kernel item's LALR(1) lookaheads, per state: generated spontaneously and
        propagated (the dragon book's way)."""
        lookahead = {(s, item): set() for s, k in enumerate(kernels) for item in k}
        propagate: dict[tuple[int, _Item], list[tuple[int, _Item]]] = {}
        for s, kernel in enumerate(kernels):
            for item in kernel:
                for (r, d), las in self.closure1({item: {_PROPAGATE}}).items():
                    rhs = self.rules[r].rhs
                    if d >= len(rhs):
                        continue
                    target = (transitions[s][rhs[d]], (r, d + 1))
                    for a in las:
                        if a == _PROPAGATE:
                            propagate.setdefault((s, item), []).append(target)
                        else:
                            lookahead[target].add(a)
        changed = True
        while changed:
            changed = False
            for source, targets in propagate.items():
                for target in targets:
                    if not lookahead[source] <= lookahead[target]:
                        lookahead[target] |= lookahead[source]
                        changed = True
        return lookahead

    def state_actions(
        self, items: dict[_Item, set[str]], moves: dict[str, int], precedence: Mapping[str, int]
    ) -> tuple[dict[str, int], int | None, tuple[int, int]]:
        """One state's row (terminal -> shift or ~rule), its default reduction, and the
        (shift/reduce, reduce/reduce) conflicts settled without precedence; ITEMS is the
        state's LR(1) closure, MOVES its transitions."""
        rules = self.rules
        reductions = sorted((r, las) for (r, d), las in items.items() if d == len(rules[r].rhs))
        shifts = {t: n for t, n in moves.items() if t not in self.nonterminals}
        row: dict[str, int] = dict(shifts)
        counts: dict[int, int] = {}
        sr = rr = 0
        for r, las in reductions:
            counts[r] = 0
            for t in sorted(las):
                if t in shifts and row.get(t, -1) >= 0:
                    rule_prec, tok_prec = rules[r].prec, precedence.get(t)
                    if rule_prec is None or tok_prec is None:
                        sr += 1  # bison shifts
                        continue
                    if rule_prec < tok_prec:
                        continue  # shift
                    del row[t]  # reduce (higher rule precedence, or left associative)
                elif t in row:
                    rr += 1  # the earlier rule keeps the token
                    continue
                row[t] = ~r
                counts[r] += 1
        default = None
        if len(reductions) == 1 and not shifts:
            default = reductions[0][0]  # a consistent state: no lookahead needed
        elif reductions and "error" not in shifts:
            best = max(counts.values())
            if best > 0:
                default = next(r for r, _ in reductions if counts[r] == best)
        if default is not None:
            row = {t: a for t, a in row.items() if a != ~default}
        return row, default, (sr, rr)
