"""Testing an agent in-process, by metric name: `AgentHarness`.

An agent's tests want to say "fetch demo.count" and "store 0 in demo.count",
not build PDUs and decode value sets.  AgentHarness does that plumbing: each
method sends the agent the request pmcd would send (FETCH, DESC_REQ, TEXT_REQ,
INSTANCE_REQ, RESULT for a store) through `Agent.handle`, so the agent's
whole request path runs, and turns the reply into plain Python values.  An
error reply becomes `PMError` with PCP's code, as a client would see it.

    with AgentHarness.load("pcp_pmda_demo") as demo:
        assert demo.fetch("demo.count") == 1
        demo.store("demo.count", 0)
        assert demo.desc("demo.count").units.text() == "count"
        assert demo.oneline("demo.count").startswith("Number of")

An agent with `wants_credentials` can be asked as a given client:
`demo.as_client(uid=1000, gid=1000, pid=4242)` sends the ATTR PDUs pmcd would
forward for such a client, and later requests come from its context.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import TracebackType
from typing import Any, TypeVar

from purepcp.pmapi.desc import Desc
from purepcp.pmapi.errors import PM_ERR_INST, PM_ERR_NOTCONN, PMError
from purepcp.pmapi.ids import PM_IN_NULL, PM_INDOM_NULL
from purepcp.pmapi.pdu.constants import PM_TEXT_HELP, PM_TEXT_ONELINE, PM_TEXT_PMID, Attr
from purepcp.pmapi.pdu.records import (
    AttrPDU,
    DescPDU,
    DescReqPDU,
    ErrorPDU,
    FetchPDU,
    InstancePDU,
    InstanceReqPDU,
    ResultPDU,
    TextPDU,
    TextReqPDU,
)
from purepcp.pmapi.values import Result, Timestamp, ValueSet

from .agent import Agent
from .inproc import load_agent

_Reply = TypeVar("_Reply")


class AgentHarness:
    """Drives one agent as pmcd would, with metric names in and Python values out.

    Metrics without an instance domain give and take a single value; metrics
    with one give and take a mapping {instance name: value}.
    """

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.context = 0  # the pmcd context requests come from

    def as_client(
        self,
        uid: int | None = None,
        gid: int | None = None,
        pid: int | None = None,
        container: str | None = None,
        context: int = 1,
    ) -> AgentHarness:
        """Ask from now on as a new client in CONTEXT with these credentials, forwarded as
        pmcd forwards them (ATTR PDUs; none given: a client that brought none, as on TCP)."""
        self.agent.handle(ErrorPDU(PM_ERR_NOTCONN, None, context))  # whoever was there left
        given = (
            (Attr.PCP_ATTR_USERID, uid),
            (Attr.PCP_ATTR_GROUPID, gid),
            (Attr.PCP_ATTR_PROCESSID, pid),
            (Attr.PCP_ATTR_CONTAINER, container),
        )
        for attr, value in given:
            if value is not None:
                self.agent.handle(AttrPDU(attr, f"{value}".encode() + b"\0", context))
        self.context = context
        return self

    @classmethod
    def load(cls, spec: str, domain: int | None = None) -> AgentHarness:
        """A harness around the agent SPEC names ("module[:Class]" or "file.py[:Class]"),
        loaded and started as pmcd loads an in-process agent (pmda.inproc.load_agent)."""
        return cls(load_agent(spec, domain))

    def close(self) -> None:
        """Stop the agent's background refreshes, if it has any."""
        self.agent.stop()

    def __enter__(self) -> AgentHarness:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- names ---------------------------------------------------------------------

    def names(self) -> list[str]:
        """Every metric name in the agent's namespace, in namespace order."""
        return self.agent.pmns.traverse()

    def pmid(self, name: str) -> int:
        """The PMID of metric NAME in the agent's domain; PMError(PM_ERR_NAME) if unknown."""
        return self.agent.pmns.lookup(name)

    # -- requests -----------------------------------------------------------------

    def desc(self, name: str) -> Desc:
        """The descriptor of metric NAME (type, sem, units, indom), as pminfo -d shows it."""
        return self._ask(DescReqPDU(self.pmid(name)), DescPDU).desc

    def fetch(self, name: str) -> Any:
        """NAME's value now: one value (None if it has none), or {instance name: value}."""
        return self.fetch_many(name)[0]

    def fetch_many(self, *names: str) -> list[Any]:
        """The values of NAMES from one fetch request, as `fetch` gives each."""
        descs = [self.desc(name) for name in names]
        reply = self._ask(FetchPDU(0, tuple(desc.pmid for desc in descs)), ResultPDU)
        values = []
        for name, desc, vset in zip(names, descs, reply.result.vsets, strict=True):
            if vset.numval < 0:
                raise PMError(vset.numval, name)
            atoms = vset.atoms(desc.type)
            if desc.indom == PM_INDOM_NULL:
                values.append(atoms[0] if vset.numval else None)
            else:
                known = self._instances(desc.indom)
                pairs = zip(vset.insts, atoms, strict=True)
                values.append({known.get(inst, inst): atom for inst, atom in pairs})
        return values

    def store(self, name: str, value: Any) -> None:
        """Store VALUE in NAME as pmstore would: one value, or {instance name or id: value}
        for a metric with an instance domain.  PMError with the agent's code if refused."""
        desc = self.desc(name)
        if desc.indom == PM_INDOM_NULL:
            pairs = [(PM_IN_NULL, value)]
        else:
            if not isinstance(value, Mapping):
                raise TypeError(f"{name} has instances: store a mapping {{instance: value}}")
            ids = {iname: inst for inst, iname in self._instances(desc.indom).items()}
            pairs = [(self._inst_id(ids, key, name), atom) for key, atom in value.items()]
        vset = ValueSet.of_atoms(desc.pmid, desc.type, pairs)
        self._ask(ResultPDU(Result(Timestamp(0, 0), (vset,))), ErrorPDU)

    def oneline(self, name: str) -> str:
        """NAME's one-line help text; PMError(PM_ERR_TEXT) if it has none."""
        return self._text(name, PM_TEXT_ONELINE)

    def help(self, name: str) -> str:
        """NAME's full help text; PMError(PM_ERR_TEXT) if it has none."""
        return self._text(name, PM_TEXT_HELP)

    def instances(self, name: str) -> dict[int, str]:
        """{inst: name} of metric NAME's instance domain ({} for a metric without one)."""
        indom = self.desc(name).indom
        return {} if indom == PM_INDOM_NULL else self._instances(indom)

    # -- plumbing -----------------------------------------------------------------

    def _ask(self, request: Any, expected: type[_Reply]) -> _Reply:
        """The agent's reply to REQUEST, of type EXPECTED; an error reply raised as PMError."""
        reply = self.agent.handle(dataclasses.replace(request, sender=self.context))
        if isinstance(reply, ErrorPDU) and reply.code < 0:
            raise PMError(reply.code)
        if not isinstance(reply, expected):
            raise TypeError(f"{type(request).__name__} answered with {reply!r}")
        return reply

    def _text(self, name: str, kind: int) -> str:
        return self._ask(TextReqPDU(self.pmid(name), PM_TEXT_PMID | kind), TextPDU).text

    def _instances(self, indom: int) -> dict[int, str]:
        reply = self._ask(InstanceReqPDU(indom, PM_IN_NULL), InstancePDU)
        return dict(zip(reply.insts, reply.names, strict=True))

    @staticmethod
    def _inst_id(ids: Mapping[str, int], key: int | str, name: str) -> int:
        if isinstance(key, int):
            return key
        if key not in ids:
            raise PMError(PM_ERR_INST, f"{name}: no instance {key!r}")
        return ids[key]


__all__ = ["AgentHarness"]
