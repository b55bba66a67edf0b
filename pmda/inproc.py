"""Loading an agent into the calling process: PCP's DSO case, for Python agents.

pmcd (a `dso` line in pmcd.conf) and dbpmda (`open dso`) name an agent by module
or file, optionally with the class: `purepcp.agents.simple`, `purepcp.agents.simple:Simple`,
`/path/to/myagent.py:Mine`.  `load_agent` imports it and returns a ready
instance; the caller then hands it request records through `Agent.handle`, with
no PDU bytes in between.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import inspect
import logging
import sys
from pathlib import Path
from types import ModuleType

from .agent import Agent


class AgentLoadError(Exception):
    """SPEC names no loadable agent: a one-line reason, for the user."""


def agent_class(spec: str) -> type[Agent]:
    """The Agent subclass SPEC ("module[:Class]" or "file.py[:Class]") names."""
    where, _, class_name = spec.partition(":")
    if not where:
        raise AgentLoadError(f"{spec!r}: no module or file named")
    module = _import(where)
    if class_name:
        found = getattr(module, class_name, None)
        if not (inspect.isclass(found) and issubclass(found, Agent)):
            raise AgentLoadError(f"{spec}: {module.__name__} has no agent class {class_name}")
        return found
    candidates = [
        value
        for value in vars(module).values()
        if inspect.isclass(value)
        and issubclass(value, Agent)
        and value is not Agent
        and value.__module__ == module.__name__
    ]
    if len(candidates) != 1:
        what = "no agent class" if not candidates else "several agent classes"
        raise AgentLoadError(f"{spec}: {module.__name__} defines {what}; name one as {spec}:Class")
    return candidates[0]


def load_agent(spec: str, domain: int | None = None, log: logging.Logger | None = None) -> Agent:
    """An instance of the agent SPEC names, in DOMAIN (default: the class's), started."""
    cls = agent_class(spec)
    try:
        agent = cls(domain, log=log)
    except (Exception, SystemExit) as exc:  # its own start-up failed: report it on one line
        raise AgentLoadError(f"{spec}: cannot start {cls.name or cls.__name__}: {exc}") from exc
    try:
        agent.start()
    except (Exception, SystemExit) as exc:  # its start failed: the host must not go with it
        with contextlib.suppress(Exception, SystemExit):
            agent.stop()
        raise AgentLoadError(f"{spec}: cannot start {cls.name or cls.__name__}: {exc}") from exc
    return agent


def _import(where: str) -> ModuleType:
    path = Path(where)
    if where.endswith(".py") or path.is_file():
        if not path.is_file():
            raise AgentLoadError(f"{where}: no such file")
        name = f"_pmda_inproc_{path.stem}_{abs(hash(str(path.resolve())))}"
        loader = importlib.util.spec_from_file_location(name, path)
        if loader is None or loader.loader is None:
            raise AgentLoadError(f"{where}: not a Python file")
        module = importlib.util.module_from_spec(loader)
        sys.modules[name] = module
        try:
            loader.loader.exec_module(module)
        except (Exception, SystemExit) as exc:
            del sys.modules[name]
            raise AgentLoadError(f"{where}: {type(exc).__name__}: {exc}") from exc
        return module
    try:
        return importlib.import_module(where)
    except ImportError as exc:
        raise AgentLoadError(f"{where}: cannot import: {exc}{_renamed(where)}") from exc
    except (Exception, SystemExit) as exc:
        raise AgentLoadError(f"{where}: {type(exc).__name__}: {exc}") from exc


#: the import names of releases before everything moved under purepcp (pmcd.conf lines
#: written then still name them)
_OLD_NAMES = {"purepcp_agents": "purepcp.agents", "pmda": "purepcp.pmda", "pmcd": "purepcp.pmcd"}


def _renamed(where: str) -> str:
    """A hint for a module name of an older release: what it is called now."""
    top, dot, rest = where.partition(".")
    if top in _OLD_NAMES and importlib.util.find_spec(top) is None:
        return f" (now {_OLD_NAMES[top]}{dot}{rest}: rewrite that line of pmcd.conf)"
    return ""
