"""Fetching from a linux agent in tests: values by name, and an instance domain's instances."""

from __future__ import annotations

from typing import Any

from purepcp.agents.linux import Linux
from purepcp.agents.linux.catalog import BY_NAME
from purepcp.pmapi.ids import PM_IN_NULL, pmInDom_build
from purepcp.pmapi.pdu.records import InstanceReqPDU


def fetch(agent: Linux, *names: str) -> dict[str, dict[int, Any] | int]:
    """{name: {inst: value}} for each of NAMES (PM_IN_NULL for singular), or its error code."""
    result = agent.fetch([agent.pmns.lookup(name) for name in names])
    values: dict[str, dict[int, Any] | int] = {}
    for name, vs in zip(names, result.vsets, strict=True):
        if vs.numval < 0:
            values[name] = vs.numval
        else:
            values[name] = dict(zip(vs.insts, vs.atoms(BY_NAME[name].type), strict=True))
    return values


def instances(agent: Linux, serial: int) -> dict[int, str]:
    """The instances of indom 60.SERIAL, as an INSTANCE_REQ answers."""
    reply = agent.handle(InstanceReqPDU(pmInDom_build(60, serial), PM_IN_NULL))
    return dict(zip(reply.insts, reply.names, strict=True))
