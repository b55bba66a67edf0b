"""The derived metrics of one context: names, descriptors, help text and values.

A context asks this layer first for any name, PMID or fetch: derived metrics are
in the namespace beside the real ones (a real metric wins a clash of names), their
descriptors come from binding (bind.py), and a fetch that includes them fetches
their operands instead and evaluates the expressions on the answer.  The layer
looks up every name once when made (the context's first call that needs it); a
derived metric is bound when first described or fetched, or when a traversal of a
pmcd's namespace reaches it, and a semantic error is written to stderr then, once per
context, as libpcp writes it.  A metric that does not bind leaves the namespace: a
pmcd's traversal never lists it, and no walk lists it once it has been bound.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from ..desc import Desc
from ..errors import PM_ERR_BADDERIVE, PM_ERR_TEXT, PMError
from ..ids import PM_ID_NULL, PM_INDOM_NULL
from ..types import PMSem
from ..units import Units
from ..values import Result, ValueSet
from . import ast
from .bound import Bound

if TYPE_CHECKING:
    from .bind import Binder
    from .registry import Definition, Registry


@dataclass(frozen=True)
class RealCalls:
    """The context's own (underived) calls the layer needs."""

    lookup_names: Callable[[Sequence[str]], list[int]]
    lookup_descs: Callable[[Sequence[int]], list[Desc | None]]
    instance_name: Callable[[int, int, int], str]  # (indom, inst, stamp ns)
    instance_id: Callable[[int, str, int], int]  # (indom, name, stamp ns)


class DerivedMetrics:
    """Every registered derived metric, bound in one context."""

    def __init__(self, registry: Registry, real: RealCalls, err: TextIO | None = None) -> None:
        self.real = real
        self.definitions: list[Definition] = list(registry)
        self.by_name = {d.name: d for d in self.definitions}
        self.by_pmid = {d.pmid: d for d in self.definitions}
        self.err = err
        self._bound: dict[int, Bound | None] = {}  # bound so far (None: it cannot be)
        self._messages: dict[int, str] = {}  # semantic errors not yet reported
        self._reasons: dict[int, str] = {}  # their last parts (SemanticError.reason)
        names = {n for d in self.definitions if d.tree is not None for n in _names(d.tree)}
        names.update(d.name for d in self.definitions)  # (to find the ones real metrics hide)
        self._real = self._real_pmids(sorted(names))
        # (a derived metric named as a real one is hidden by it, as in libpcp)
        self.hidden = {d.pmid for d in self.definitions if d.name in self._real}
        self._real_descs: dict[int, Desc | None] | None = None
        self._binder: Binder | None = None

    # -- binding (each metric when first needed, as libpcp's errors come then) --------------

    def bound(self, pmid: int) -> Bound | None:
        """Derived PMID bound in this context; None if it cannot be (its error, if any,
        waits in report())."""
        if pmid in self._bound:
            return self._bound[pmid]
        d = self.by_pmid.get(pmid)
        result = None
        if d is not None and pmid not in self.hidden:
            if d.tree is None:  # anonymous: a type, never any values
                desc = Desc(d.pmid, d.anon_type, PM_INDOM_NULL, PMSem.PM_SEM_DISCRETE, Units())
                result = Bound(desc, None, ())
            else:
                result = self._bind(d)
        self._bound[pmid] = result
        return result

    def _bind(self, d: Definition) -> Bound | None:
        from .bind import Binder, SemanticError, Unbindable  # (NumPy comes with them)

        if self._binder is None:
            self._binder = Binder(self._lookup, self._derived_tree, self._defined)
        try:
            return self._binder.bind(d.name, d.pmid, d.tree)
        except SemanticError as exc:
            self._messages[d.pmid] = str(exc)
            self._reasons[d.pmid] = exc.reason
        except Unbindable:
            pass  # (libpcp reports missing operands only when debugging)
        return None

    def _lookup(self, name: str) -> tuple[int, Desc]:
        """A real operand's PMID and descriptor (every operand described at once)."""
        from .bind import Unbindable

        if self._real_descs is None:
            self._real_descs = self._describe(sorted(set(self._real.values())))
        pmid = self._real.get(name)
        desc = self._real_descs.get(pmid) if pmid is not None else None
        if desc is None:
            raise Unbindable(name)
        return pmid, desc  # type: ignore[return-value]

    def _describe(self, pmids: list[int]) -> dict[int, Desc | None]:
        """The descriptors of PMIDS, all at once; where that fails (one PMID's agent is
        not there, say: a local context has only some), one by one, as libpcp describes
        each operand, so that one missing operand leaves only its own metrics unbound."""
        try:
            return dict(zip(pmids, self.real.lookup_descs(pmids), strict=True)) if pmids else {}
        except PMError:
            pass
        out: dict[int, Desc | None] = {}
        for pmid in pmids:
            try:
                out[pmid] = self.real.lookup_descs([pmid])[0]
            except PMError:
                out[pmid] = None
        return out

    def _derived_tree(self, name: str) -> ast.Node | None:
        d = self.by_name.get(name)
        return d.tree if d is not None and d.pmid not in self.hidden else None

    def _defined(self, name: str) -> bool:
        return name in self._real or name in self.by_name

    def _real_pmids(self, names: list[str]) -> dict[str, int]:
        """The real metrics among NAMES, with their PMIDs."""
        if not names:
            return {}
        try:
            pmids = self.real.lookup_names(names)
        except PMError:  # (one name, unknown)
            return {}
        return {n: p for n, p in zip(names, pmids, strict=True) if p != PM_ID_NULL}

    # -- names ---------------------------------------------------------------------------

    def pmid(self, name: str) -> int | None:
        """The PMID of derived metric NAME (None if there is none)."""
        d = self.by_name.get(name)
        return d.pmid if d is not None and d.pmid not in self.hidden else None

    def name(self, pmid: int) -> str | None:
        d = self.by_pmid.get(pmid)
        return d.name if d is not None else None

    def is_derived(self, pmid: int) -> bool:
        return pmid in self.by_pmid and pmid not in self.hidden

    def _below(self, prefix: str) -> list[Definition]:
        """The definitions named at or below PREFIX ("" for all), in registration order,
        less those a real name hides and those already found not to bind (libpcp leaves
        those out of the namespace once bound)."""
        return [
            d
            for d in self.definitions
            if d.pmid not in self.hidden
            and self._bound.get(d.pmid, True) is not None
            and (not prefix or d.name == prefix or d.name.startswith(prefix + "."))
        ]

    def leaves(self, prefix: str) -> list[str]:
        """The derived names at or below PREFIX ("" for all), in registration order,
        bound or not (a local namespace's walk binds nothing, as libpcp's)."""
        return [d.name for d in self._below(prefix)]

    def bound_leaves(self, prefix: str) -> list[str]:
        """The derived names at or below PREFIX that bind in this context, each bound now
        and its semantic error reported now, as libpcp's __dmtraverse does when it adds
        derived names to a pmcd's traversal: one whose operands the source lacks, or
        that is in error, is not in the namespace."""
        names = []
        for d in self._below(prefix):
            if self.bound(d.pmid) is not None:
                names.append(d.name)
            else:
                self.report(d.pmid)
        return names

    def children(self, prefix: str) -> list[tuple[str, bool]]:
        """(child, is_leaf) for the derived names below PREFIX, each child once."""
        out: dict[str, bool] = {}
        depth = len(prefix.split(".")) if prefix else 0
        for name in self.leaves(prefix):
            parts = name.split(".")
            if len(parts) <= depth:
                continue
            child = parts[depth]
            out[child] = out.get(child, False) or len(parts) == depth + 1
        return list(out.items())

    # -- metadata ------------------------------------------------------------------------

    def desc(self, pmid: int) -> Desc:
        bound = self.bound(pmid)
        if bound is None:
            self.report(pmid)
            raise PMError(PM_ERR_BADDERIVE)
        return bound.desc

    def semantic_error(self, pmid: int) -> str | None:
        """Why PMID did not bind (SemanticError.reason), taken instead of reported; None
        if it bound or only lacks operands here."""
        if self.bound(pmid) is not None:
            return None
        return self._reasons.pop(pmid, None) if self._messages.pop(pmid, None) else None

    def report(self, pmid: int) -> None:
        """Write PMID's semantic error to stderr, the first time it is used."""
        message = self._messages.pop(pmid, None)
        if message is not None:
            # (stdout is not flushed first: libpcp's pmflush() writes to stderr alone)
            err = self.err if self.err is not None else sys.stderr
            err.write(message + "\n")
            err.flush()

    def text(self, pmid: int, help: bool, direct: bool) -> str:
        """pmLookupText for a derived metric: its (oneline) or (helptext) attribute; help
        text falls back to the one-line text, then to the definition itself, unless DIRECT
        (PM_TEXT_DIRECT: the attribute or nothing, so pmlogger logs what libpcp logs)."""
        d = self.by_pmid[pmid]
        text = d.oneline if not help else (d.helptext or (None if direct else d.oneline))
        if text is None and help and not direct and d.tree is not None:
            # (libpcp has no text then; ours shows what the metric is)
            text = f"Derived metric {d.name} = {d.text.strip()}"
        if text is None:
            raise PMError(PM_ERR_TEXT)
        return text

    # -- values --------------------------------------------------------------------------

    def operands(self, pmids: Iterable[int]) -> list[int]:
        """The real PMIDs to fetch for PMIDS: the real ones and every derived one's operands."""
        out: dict[int, None] = {}
        for pmid in pmids:
            if self.is_derived(pmid):
                bound = self.bound(pmid)
                if bound is not None:
                    out.update(dict.fromkeys(bound.operands))
                else:
                    self.report(pmid)
            else:
                out[pmid] = None
        return list(out)

    def evaluate(self, pmids: Sequence[int], frames: dict[int, Any], stamps: Any) -> dict[int, Any]:
        """Each derived PMID's frame, from the operands' FRAMES fetched at STAMPS (ns)."""
        from .evaluate import Env
        from .frame import empty

        env = Env(frames, stamps, self.real.instance_name, self.real.instance_id)
        out = {}
        for pmid in dict.fromkeys(pmids):
            bound = self.bound(pmid) if self.is_derived(pmid) else None
            if bound is not None:
                plan = bound.plan
                out[pmid] = plan.evaluate(env) if plan else empty(bound.desc.type, env.rows)
        return out

    def fetch_result(self, pmids: Sequence[int], result: Result, descs: dict[int, Desc | None]):
        """The pmResult for PMIDS from RESULT (a fetch of ``operands(pmids)``), and the
        descriptors of its metrics."""
        import numpy as np

        from .frame import from_value_set

        got = {vs.pmid: vs for vs in result.vsets}
        frames = {}
        for pmid, vs in got.items():
            desc = descs.get(pmid)
            if desc is not None:
                frames[pmid] = from_value_set(vs, desc.type)
        stamp = np.array([result.timestamp.ns], dtype=np.int64)
        derived = self.evaluate(pmids, frames, stamp)
        vsets = []
        out_descs: dict[int, Desc | None] = {}
        for pmid in pmids:
            if pmid in derived:
                desc = self.bound(pmid).desc  # type: ignore[union-attr]
                vsets.append(derived[pmid].value_set(pmid, desc.type))
                out_descs[pmid] = desc
            elif self.is_derived(pmid):  # (it did not bind: no values, as libpcp gives)
                vsets.append(ValueSet.of_atoms(pmid, 0, []))
                out_descs[pmid] = None
            else:
                vsets.append(got[pmid])
                out_descs[pmid] = descs.get(pmid)
        return Result(result.timestamp, tuple(vsets)), out_descs

    def reset(self) -> None:
        """Forget the previous fetch (delta() and rate() start again)."""
        for bound in self._bound.values():
            if bound is not None and bound.plan is not None:
                bound.plan.reset()


def _names(node: ast.Node) -> Iterable[str]:
    """Every metric name in NODE's expression."""
    if isinstance(node, ast.Name):
        yield node.name
        return
    for value in vars(node).values():
        if isinstance(value, ast.Node):
            yield from _names(value)
