"""Installing and removing agents, as PCP's Install and Remove scripts do (seed 004, 2.8).

`install` adds the agent's line to pmcd.conf, merges its namespace (its domain
symbol replaced by the number) into $PMNS_DEFAULT, checks its help text loads,
signals pmcd (SIGHUP) and checks that the metrics appeared, in PCP's words:
"Check simple metrics have appeared ... 5 metrics and 9 values".  `remove`
reverses each step.  Nothing is copied: an agent's code, namespace and help stay
where pip put them.  Both are idempotent, refuse a domain another agent holds,
and leave the previous configuration in place on failure (each file is replaced
whole; if the metrics never appear, both files are put back and pmcd told again).

Agents are named as pip-installed packages declare them (the entry-point group
``purepcp.agents``: ``NAME = "module:Class"``), or directly as ``module[:Class]`` or
``/path/file.py[:Class]``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Literal, TextIO

from purepcp.pmapi.errors import PMError
from purepcp.pmapi.helptext import load_help
from purepcp.pmapi.ids import PM_ID_NULL, is_dynamic_root, pmID_cluster, pmID_domain
from purepcp.pmapi.paths import Paths
from purepcp.pmapi.pmns import PMNS
from purepcp.pmda.agent import Agent, combined_pmns
from purepcp.pmda.inproc import AgentLoadError, agent_class

from .config import parse_config
from .files import default_namespace, namespace_root, pmcd_conf_path, running_pid

#: The entry-point group through which pip-installed agent packages announce themselves.
ENTRY_POINT_GROUP = "purepcp.agents"
#: The highest domain an agent may have (511 is the derived metrics' own).
MAX_DOMAIN = 510

Mode = Literal["inproc", "pipe", "socket"]


class InstallError(Exception):
    """Why an install or remove cannot go on: one line for the user."""


@dataclass(frozen=True)
class AgentRef:
    """An agent to install: its class and how pmcd.conf names its code."""

    cls: type[Agent]
    module: str  # the module (or /path/file.py) that defines the class
    class_name: str

    @property
    def name(self) -> str:
        return self.cls.name

    @property
    def spec(self) -> str:
        return f"{self.module}:{self.class_name}"


def available_agents() -> dict[str, str]:
    """NAME -> "module:Class" for every agent an installed package declares."""
    return {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}


def find_agent(what: str) -> AgentRef:
    """The agent WHAT names: a declared agent's name, module[:Class] or file.py[:Class]."""
    declared = available_agents()
    spec = declared.get(what, what)
    if what not in declared and ":" not in what and "/" not in what and "." not in what:
        known = ", ".join(sorted(declared)) or "none"
        raise InstallError(f"no agent named {what!r} is installed (installed agents: {known})")
    try:
        cls = agent_class(spec)
    except AgentLoadError as exc:
        raise InstallError(str(exc)) from None
    if not cls.name:
        raise InstallError(f"{spec}: the agent class {cls.__name__} has no name")
    where = spec.partition(":")[0]
    module = str(Path(where).resolve()) if where.endswith(".py") else cls.__module__
    return AgentRef(cls, module, cls.__name__)


def conf_line(agent: AgentRef, domain: int, mode: Mode, layout: Paths) -> str:
    """The agent's pmcd.conf line: in pmcd's process, or a daemon on a pipe or a socket."""
    if mode == "inproc":
        return f"{agent.name}\t{domain}\tdso\t{agent.class_name}\t{agent.module}"
    log = layout.log_dir / "pmcd" / f"{agent.name}.log"
    command = f"{sys.executable} -m purepcp.pmda.run {agent.spec} -d {domain} -l {log}"
    if mode == "pipe":
        return f"{agent.name}\t{domain}\tpipe\tbinary\t{command}"
    socket_path = layout.run_dir / f"pmda{agent.name}.socket"
    return f"{agent.name}\t{domain}\tsocket\tunix {socket_path}\t{command} -u {socket_path}"


# -- pmcd.conf as text ------------------------------------------------------------------


def _agent_lines(text: str) -> list[tuple[int, list[str]]]:
    """(index, words) of each agent line of pmcd.conf TEXT, before any [access] section."""
    found = []
    for index, line in enumerate(text.splitlines()):
        words = line.split("#", 1)[0].split()
        if words and words[0].lower().startswith("[access"):
            break
        if words:
            found.append((index, words))
    return found


def conf_agents(text: str) -> dict[str, int]:
    """NAME -> domain for each agent line of pmcd.conf TEXT."""
    return {w[0]: int(w[1]) for _, w in _agent_lines(text) if len(w) > 1 and w[1].isdigit()}


def conf_names_for_spec(text: str, spec: str) -> list[str]:
    """The agents of pmcd.conf TEXT installed from SPEC (module[:Class] or file.py[:Class]),
    as `conf_line` writes them: a dso line's class and module, a daemon's
    `purepcp.pmda.run` spec."""
    where, _, class_name = spec.partition(":")
    if where.endswith(".py") or Path(where).is_file():
        where = str(Path(where).resolve())
    found = []
    for _, words in _agent_lines(text):
        if len(words) >= 5 and words[2] == "dso":
            module, cls = words[4], words[3]
        elif "purepcp.pmda.run" in words[:-1]:
            module, _, cls = words[words.index("purepcp.pmda.run") + 1].partition(":")
        else:
            continue
        if module == where and class_name in ("", cls):
            found.append(words[0])
    return list(dict.fromkeys(found))


def conf_with(text: str, name: str, line: str | None) -> str:
    """TEXT with NAME's line replaced by LINE (appended after the agents if new; removed
    when LINE is None); every other line kept as it was."""
    lines = text.splitlines()
    mine = [i for i, words in _agent_lines(text) if words[0] == name]
    agents = _agent_lines(text)
    if mine:
        at = mine[0]
        for i in reversed(mine):
            del lines[i]
    else:
        at = agents[-1][0] + 1 if agents else len(lines)
    if line is not None:
        lines.insert(at, line)
    return "\n".join(lines) + "\n"


# -- the namespace ----------------------------------------------------------------------


def agent_namespace(agent: AgentRef, domain: int) -> PMNS:
    """The agent's own pmns file, its domain symbol replaced by DOMAIN."""
    path = agent.cls.source_file("pmns")
    if not path.is_file():
        raise InstallError(_no_namespace(agent))
    try:
        return combined_pmns([path], {agent.name.upper(): domain})
    except OSError as exc:
        raise InstallError(f"{path}: cannot read the agent's namespace: {exc.strerror}") from None
    except PMError as exc:
        raise InstallError(f"{path}: the agent's namespace does not load: {exc}") from None


def _no_namespace(agent: AgentRef) -> str:
    """What to do about an agent with no namespace file, in the user's terms: the file to
    write is `pmns` beside the module defining the agent (not where purepcp keeps its
    own agents' files, which is where Agent.source_file looks last)."""
    module = sys.modules.get(agent.cls.__module__)
    where = getattr(module, "__file__", None)
    target = Path(where).with_name("pmns") if where else "a file named pmns beside its module"
    return (
        f"agent {agent.name} has no namespace file: write its metric names and PMIDs to "
        f"{target} (PCP's pmns format, domain {agent.name.upper()})"
    )


def namespace_without(pmns: PMNS, domain: int) -> tuple[PMNS, list[str]]:
    """A copy of PMNS without the names of DOMAIN, and the top-level names that held them."""
    copy = PMNS.from_string(pmns.dumps())
    gone = [name for name, pmid in copy.items() if _domain_of(pmid) == domain]
    tops = list(dict.fromkeys(name.split(".")[0] for name in gone))
    for name in gone:
        if name in copy:
            copy.remove(name)
    return copy, tops


def _domain_of(pmid: int) -> int:
    """The agent domain a PMID belongs to (a dynamic subtree root's is its cluster)."""
    return pmID_cluster(pmid) if is_dynamic_root(pmid) else pmID_domain(pmid)


def namespace_with(pmns: PMNS, agent: PMNS) -> PMNS:
    """PMNS with AGENT's names merged in; InstallError if a name belongs to another agent."""
    merged = PMNS.from_string(pmns.dumps())
    conflicts = merged.merge(agent)
    if conflicts:
        raise InstallError(
            f"{conflicts[0]}: the name is already in the namespace with another PMID"
            + (f" (and {len(conflicts) - 1} more)" if len(conflicts) > 1 else "")
        )
    return merged


# -- files ------------------------------------------------------------------------------


def write_atomically(path: Path, text: str) -> None:
    """Replace PATH with TEXT in one step: a crash leaves the old file or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.pmda-new")
    with open(temporary, "w") as out:
        out.write(text)
        out.flush()
        os.fsync(out.fileno())
    os.replace(temporary, path)


@dataclass
class Snapshot:
    """A file's contents before a change (None: it did not exist), to put back on failure."""

    path: Path
    text: str | None

    @classmethod
    def of(cls, path: Path) -> Snapshot:
        return cls(path, path.read_text() if path.exists() else None)

    def restore(self) -> None:
        if self.text is None:
            self.path.unlink(missing_ok=True)
        else:
            write_atomically(self.path, self.text)


# -- the two procedures -----------------------------------------------------------------


@dataclass
class Installer:
    """Install and remove agents in LAYOUT, saying what it does on OUT."""

    layout: Paths
    out: TextIO = sys.stdout
    check: bool = True  # check the metrics appeared (or went away) in the running pmcd
    wait: float = 10.0  # seconds to wait for them
    probe: Callable[[str, list[str]], tuple[int, int, int]] | None = None

    # the files: pmcd.conf as pmcd reads it, and the namespace it serves

    def _conf(self) -> tuple[Path, str]:

        source = pmcd_conf_path(self.layout)
        try:
            return self.layout.pmcdconf_path, source.read_text()
        except OSError as exc:
            raise InstallError(f"cannot read {source}: {exc.strerror}") from None

    def _namespace(self, conf_text: str) -> PMNS:

        config = parse_config(conf_text, path=str(self.layout.pmcdconf_path))
        root = namespace_root(self.layout)
        if root is not None and not root.exists():  # (chosen, so no fallback: files.py)
            raise InstallError(
                f"no namespace file {root} (PMNS_DEFAULT names it): create it, or unset "
                "PMNS_DEFAULT to have pmcd's namespace made from its agents' own files"
            )
        try:
            return default_namespace(config, self.layout)
        except (PMError, OSError) as exc:
            raise InstallError(f"cannot load the namespace: {exc}") from None

    def install(self, agent: AgentRef, domain: int | None = None, mode: Mode = "inproc") -> int:
        domain = agent.cls.domain if domain is None else domain
        if not 1 <= domain <= MAX_DOMAIN:
            raise InstallError(f"domain {domain}: must be between 1 and {MAX_DOMAIN}")
        conf_path, conf_text = self._conf()
        for other, held in conf_agents(conf_text).items():
            if held == domain and other != agent.name:
                raise InstallError(
                    f"domain {domain} is already taken by the {other} agent in {conf_path}; "
                    "choose another with --domain"
                )
        own = agent_namespace(agent, domain)
        self._check_help(agent, own, domain)
        old_domain = conf_agents(conf_text).get(agent.name)
        base = self._namespace(conf_text)
        if old_domain is not None:
            base, _ = namespace_without(base, old_domain)
        pmns = namespace_with(namespace_without(base, domain)[0], own)
        new_conf = conf_with(conf_text, agent.name, conf_line(agent, domain, mode, self.layout))
        self._check_conf(new_conf)
        print("Updating the Performance Metrics Name Space (PMNS) ...", file=self.out)
        print("Terminate PMDA if already installed ...", file=self.out)
        print("Updating the PMCD control file, and notifying PMCD ...", file=self.out)
        saved = self._replace(conf_path, new_conf, pmns)
        tops = list(dict.fromkeys(name.split(".")[0] for name, _ in own.items()))
        if not self._notify():
            return 0
        if not self.check:
            return 0
        metrics, values, warnings = self._probe(tops, expect=True)
        print(
            f"Check {agent.name} metrics have appeared ... "
            + (f"{warnings} warnings, " if warnings else "")
            + f"{metrics} metrics and {values} values",
            file=self.out,
        )
        if metrics == warnings:  # nothing there, or nothing but errors: the agent is not up
            for snapshot in saved:
                snapshot.restore()
            self._notify(quiet=True)
            raise InstallError(
                f"the {agent.name} agent's metrics did not appear in pmcd (see "
                f"{self.layout.log_dir / 'pmcd'}): the previous configuration is restored"
            )
        return 0

    def remove(self, what: str) -> int:
        conf_path, conf_text = self._conf()
        name = self._installed_name(what, conf_text, conf_path)
        domain = conf_agents(conf_text).get(name)
        new_conf = conf_with(conf_text, name, None)
        self._check_conf(new_conf)
        base = self._namespace(conf_text)
        print("Culling the Performance Metrics Name Space ...", file=self.out)
        if domain is None:
            pmns, tops = base, []
        else:
            pmns, tops = namespace_without(base, domain)
        found = "done" if tops else "not found in Name Space, this is OK"
        print(f"{name} ... {found}", file=self.out)
        print("Updating the PMCD control file, and notifying PMCD ...", file=self.out)
        if domain is not None or self.layout.pmns_default.exists():
            self._replace(conf_path, new_conf, pmns)
        if not self._notify() or not self.check:
            return 0
        gone = not tops or self._probe(tops, expect=False)[0] == 0
        print(
            f"Check {name} metrics have gone away ... "
            + ("OK" if gone else "Arrgh, something has gone wrong!"),
            file=self.out,
        )
        return 0 if gone else 1

    def _installed_name(self, what: str, conf_text: str, conf_path: Path) -> str:
        """The pmcd.conf name of the agent WHAT names for removal: its name there, or the
        spec it was installed from.  An agent pmda knows of but pmcd.conf lacks keeps its
        name (removing it again is harmless, as PCP's Remove is); anything else is an error."""
        installed = conf_agents(conf_text)
        if what in installed:
            return what
        by_spec = conf_names_for_spec(conf_text, what)
        if len(by_spec) > 1:
            raise InstallError(
                f"{what} was installed as several agents in {conf_path} "
                f"({', '.join(by_spec)}): remove each by its name"
            )
        if by_spec:
            return by_spec[0]
        if what in available_agents():
            return what
        if any(c in what for c in ":/."):
            with contextlib.suppress(InstallError):
                return find_agent(what).name
        there = ", ".join(installed) or "none"
        raise InstallError(f"no agent {what!r} in {conf_path} (agents there: {there})")

    # the steps

    def _check_help(self, agent: AgentRef, pmns: PMNS, domain: int) -> None:
        """The agent's help text must load: pmcd serves it from the agent's own file."""
        path = agent.cls.source_file("help")
        if not path.exists():
            return
        try:
            load_help(str(path), pmns, {agent.name.upper(): domain})
        except (PMError, OSError, ValueError) as exc:
            raise InstallError(f"{path}: the agent's help text does not load: {exc}") from None

    def _check_conf(self, text: str) -> None:
        """The new pmcd.conf must be one pmcd reads without an error (pmcd itself passes
        over some bad lines; we write no file that has one)."""

        path = self.layout.pmcdconf_path
        config = parse_config(text, path=str(path))
        errors = [m for m in config.messages if "Error" in m.text]
        if errors or not config.ok:
            first = f"{path}:{errors[0].line}: {errors[0]}" if errors else "pmcd would refuse it"
            raise InstallError(f"{first}; correct pmcd.conf first, nothing was changed")

    def _replace(self, conf_path: Path, conf_text: str, pmns: PMNS) -> list[Snapshot]:
        """Write the namespace, then pmcd.conf; if either fails, both are as they were."""
        saved = [Snapshot.of(self.layout.pmns_default), Snapshot.of(conf_path)]
        try:
            write_atomically(self.layout.pmns_default, pmns.dumps())
            write_atomically(conf_path, conf_text)
        except OSError as exc:
            for snapshot in saved:
                with contextlib.suppress(OSError):
                    snapshot.restore()
            raise InstallError(f"cannot write {exc.filename}: {exc.strerror}") from None
        return saved

    def _notify(self, quiet: bool = False) -> bool:
        """SIGHUP the layout's pmcd; False (and a note) when it is not running."""

        pid = running_pid(self.layout)
        if pid is None:
            if not quiet:
                print("pmcd is not running: the change takes effect when it starts", file=self.out)
            return False
        try:
            os.kill(pid, signal.SIGHUP)
        except OSError as exc:
            raise InstallError(f"cannot signal pmcd (pid {pid}): {exc.strerror}") from None
        return True

    def _probe(self, tops: list[str], *, expect: bool) -> tuple[int, int, int]:
        """(metrics, values, warnings) under TOPS, as pmprobe -i counts them, once pmcd
        shows the change (metrics there if EXPECT, else gone) or the wait is over."""
        probe = self.probe or probe_pmcd
        deadline = time.monotonic() + self.wait
        while True:
            result = probe(self.layout.pmcd_socket, tops)
            settled = (result[0] > 0 and result[2] == 0) if expect else result[0] == 0
            if settled or time.monotonic() >= deadline:
                return result
            time.sleep(0.2)


def probe_pmcd(socket_path: str, tops: list[str]) -> tuple[int, int, int]:
    """Count the metrics below TOPS in the pmcd at SOCKET_PATH (falling back to its TCP
    port), their values and the metrics that gave an error instead, as pmprobe -i."""
    from purepcp.pmapi.context import Context

    try:
        context = Context.host(f"local:{socket_path}")
    except (PMError, OSError):
        return 0, 0, 0
    try:
        names: list[str] = []
        for top in tops:
            try:
                names += context.traverse(top)
            except PMError:
                continue
        if not names:
            return 0, 0, 0
        pmids = context.lookup_names(names)
        fetched = context.fetch([p for p in pmids if p != PM_ID_NULL])
        values = warnings = 0
        for pmid in pmids:
            if pmid == PM_ID_NULL or fetched.error(pmid) < 0:
                warnings += 1
            else:
                values += len(fetched.values(pmid))
        return len(names), values, warnings
    except (PMError, OSError):
        return 0, 0, 0
    finally:
        context.close()
