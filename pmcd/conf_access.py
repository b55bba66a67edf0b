"""pmcd.conf's `[access]` section, read as pmcd reads it (ParseAccessControls, ParseAccess,
ParseHosts/Users/Groups, ParseNames and ParseAccessSpec in src/pmcd/src/config.c).

`AccessStatements` reads `allow`/`disallow` statements with a `Scanner` in access
mode, keeps each as an `AccessRule` and hands its names to an `AccessBuilder`.  As in
pmcd, a bad statement is reported and reading goes on after its `;`, but the section
then fails; a section with no valid statement fails too; and a user or group statement
makes clients show credentials.
"""

from __future__ import annotations

import errno

from purepcp.pmapi.errors import pmErrStr

from .access import (
    PMCD_OP_ALL,
    PMCD_OP_FETCH,
    PMCD_OP_NONE,
    PMCD_OP_STORE,
    AccessRule,
    PmcdOp,
    RuleKind,
)
from .access_builder import AccessBuilder
from .conf_scanner import Scanner

__all__ = ["AccessStatements"]


class _Failed(Exception):
    """A statement was refused (its message already reported)."""


class AccessStatements:
    """The statements of one file's access section, as they are read."""

    def __init__(self, scanner: Scanner, builder: AccessBuilder) -> None:
        self.s = scanner
        self.builder = builder
        self.rules: list[AccessRule] = []

    def section(self, source: str) -> bool:
        """ParseAccessControls: the `[access]` line in its three spellings, then statements."""
        s = self.s
        s.doing_access = True
        if s.is_("[access]"):
            s.next(source)
        else:
            if s.is_("["):
                s.next(source)
                if not s.is_("access"):
                    s.complain(source, '"access" keyword expected')
                    return False
            elif not s.is_("[access"):
                s.complain(source, '"access" keyword expected')
                return False
            s.next(source)
            if s.cur != ord("]"):
                s.complain(source, "']' expected")
                return False
            s.next(source)
        return self.statements("pmcd")

    def statements(self, source: str) -> bool:
        """ParseAccess: statements to the end of the file."""
        s = self.s
        ok, count, creds = True, 0, False
        while s.cur and not s.error:
            if s.is_("allow"):
                allow = True
            elif s.is_("disallow"):
                allow = False
            else:
                s.complain(source, "allow or disallow statement expected")
                ok = False
                while s.cur and not s.error and s.cur != ord(";"):
                    s.next(source)
                if s.cur and not s.error and s.cur == ord(";"):
                    s.next(source)
                    continue
                return False
            s.next(source)
            kind: RuleKind = "host"
            if s.is_("user") or s.is_("users"):
                kind = "user"
                s.next(source)
            elif s.is_("group") or s.is_("groups"):
                kind = "group"
                s.next(source)
            elif s.is_("host") or s.is_("hosts"):
                s.next(source)
            result = self._statement(source, allow, kind)
            if result < 0:
                ok = False
            elif kind != "host":
                creds = True
            if result > 0:
                count += 1
            while s.cur and not s.error and s.cur != ord(";"):
                s.next(source)
            if not s.cur or s.error:
                return False
            s.next(source)
        if not ok:
            return False
        if count == 0:
            s.complain(source, "no valid statements in [access] section")
            return False
        if creds:
            self.builder.creds_required = True
        return True

    def _statement(self, source: str, allow: bool, kind: RuleKind) -> int:
        """ParseHosts / ParseUsers / ParseGroups: -1 bad, 0 nothing added, 1 added."""
        s = self.s
        try:
            names = self._names(source, kind)
            s.next(source)
            spec, deny, maxcons = self._ops(source, allow)
        except _Failed:
            return -1
        line = s.n_lines
        self.rules.append(AccessRule(allow, kind, tuple(names), spec, deny, maxcons, line, source))
        add = {
            "host": self.builder.add_host,
            "user": self.builder.add_user,
            "group": self.builder.add_group,
        }[kind]
        added = 0
        for name in names:
            status, notes = add(name, spec, deny, maxcons)
            for note in notes:
                s.note(note, line)
            if status >= 0:
                added = 1
                continue
            ignorable = kind == "host" and status in (-errno.EHOSTUNREACH, -errno.EHOSTDOWN)
            if ignorable:
                s.note("Warning: the following access control specification will be ignored")
            s.note(
                f"{source} config[line {s.n_lines}]: Warning: access control error for "
                f"{kind} '{name}': {pmErrStr(status)}"
            )
            if not ignorable:
                return -1
        return added

    def _names(self, source: str, kind: str) -> list[str]:
        """ParseNames: a comma-separated list ending at ':'."""
        s, names, another = self.s, [], True
        while s.cur and another and (s.tokenend - s.token > 1 or s.cur not in (ord(":"), ord(";"))):
            names.append(s.copy())
            s.next(source)
            if s.cur not in (ord(","), ord(":")):
                s.complain(source, f"',' or ':' expected after \"{names[-1]}\"")
                raise _Failed
            if s.cur == ord(","):
                s.next(source)
                another = True
            else:
                another = False
        if not names:
            s.complain(source, f"no {kind}s in allow/disallow statement")
            raise _Failed
        if another:
            s.complain(source, f"{kind} expected after ','")
            raise _Failed
        if s.cur != ord(":"):
            s.complain(source, f"':' expected after \"{names[-1]}\"")
            raise _Failed
        return names

    def _ops(self, source: str, allow: bool) -> tuple[PmcdOp, PmcdOp, int]:
        """ParseAccessSpec: the operations list, as (spec_ops, deny_ops, max connections)."""
        state = {"spec": 0, "deny": 0, "max": 0}
        self._ops_list(source, allow, state, recursion=False)
        return PmcdOp(state["spec"]), PmcdOp(state["deny"]), state["max"]

    def _ops_list(self, source: str, allow: bool, st: dict[str, int], recursion: bool) -> None:
        """The operations to the `;`, into ST; RECURSION for those after `all except`."""
        s = self.s
        have_ops = have_all = have_comma = False
        if s.cur == ord(";"):
            s.complain(source, "empty or incomplete permissions list")
            raise _Failed
        if not recursion:
            st["max"] = 0
        while s.cur and s.cur != ord(";"):
            op = 0
            if s.is_("fetch"):
                op = PMCD_OP_FETCH
            elif s.is_("store"):
                op = PMCD_OP_STORE
            elif s.is_("all"):
                if have_ops:
                    s.complain(source, 'can\'t have "all" mixed with specific permissions')
                    raise _Failed
                have_all = True
                if recursion:
                    s.complain(source, 'can\'t have "all" within an "all except"')
                    raise _Failed
                s.next(source)
                st["deny"] = PMCD_OP_NONE if allow else PMCD_OP_ALL
                if s.is_("except"):
                    s.next(source)
                    self._ops_list(source, not allow, st, recursion=True)
                st["spec"] = PMCD_OP_ALL
            elif s.is_("maximum") or s.is_("unlimited"):
                self._limit(source, allow, st, recursion, have_ops)
            else:
                s.complain(source, "bad access specifier")
                raise _Failed
            if op:
                if have_all:
                    s.complain(source, 'can\'t have "all" mixed with specific permissions')
                    raise _Failed
                have_ops = True
                st["spec"] |= op
                if allow:
                    st["deny"] &= ~op
                else:
                    st["deny"] |= op
                s.next(source)
            if s.cur not in (ord(","), ord(";")):
                s.complain(source, "',' or ';' expected in permission list")
                raise _Failed
            if s.cur == ord(","):
                have_comma = True
                s.next(source)
            else:
                have_comma = False
        if have_comma:
            s.complain(source, "misplaced (trailing) ',' in permission list")
            raise _Failed

    def _limit(
        self, source: str, allow: bool, st: dict[str, int], recursion: bool, have_ops: bool
    ) -> None:
        """`maximum N connections` into ST; `unlimited connections` never parses."""
        s = self.s
        unlimited = s.cur in (ord("u"), ord("U"))
        if st["max"]:
            s.complain(source, "connection limit already specified")
            raise _Failed
        if recursion and not have_ops:
            s.complain(source, 'connection limit may not immediately follow "all except"')
            raise _Failed
        if recursion == allow:  # a disallow statement, allowing for "all except"
            s.complain(source, "can't specify connection limit in a disallow statement")
            raise _Failed
        if unlimited:
            st["max"] = -1  # and no next token: "connections" is never seen
        else:
            s.next(source)
            if not s.is_number() or s.number() <= 0:
                s.complain(source, "maximum connection limit must be a positive number")
                raise _Failed
            st["max"] = s.number()
            s.next(source)
        if not s.is_("connections"):
            s.complain(source, '"connections" expected')
            raise _Failed
        s.next(source)
