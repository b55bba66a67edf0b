"""`pmda new NAME --domain N`: write a new agent package, ready to test and install.

The package is a setuptools project holding the agent (one metric, NAME.count,
to start from), its namespace and help files, a `python -m` entry for running
it as a daemon, tests driving it through pmda.testing, a namespace for dbpmda
and a README.  Its `purepcp.agents` entry point is how `pmda install NAME` finds
it once pip has installed it.  The files are filled in from the templates in
pmda/templates/agent (string.Template, `${name}` and friends).
"""

from __future__ import annotations

import importlib.metadata
import re
import shutil
from importlib.resources import files
from pathlib import Path
from string import Template

#: The agents shipped with purepcp, with their default domains: a new agent may take neither.
SHIPPED_AGENTS = {"pmcd": 2, "proc": 3, "linux": 60, "mmv": 70, "trivial": 250, "simple": 253}

#: A PMNS name component: a letter, then letters, digits and underscores.
_PMNS_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")

#: Domains an agent may use: 0 is none, 511 is PCP's DYNAMIC_PMID.
MIN_DOMAIN, MAX_DOMAIN = 1, 510

#: (template, file written) pairs; the file's path is a template of the same values.
FILES = (
    ("pyproject.toml.tmpl", "pyproject.toml"),
    ("README.md.tmpl", "README.md"),
    ("agent.py.tmpl", "${package}/__init__.py"),
    ("main.py.tmpl", "${package}/__main__.py"),
    ("pmns.tmpl", "${package}/pmns"),
    ("help.tmpl", "${package}/help"),
    ("test_agent.py.tmpl", "tests/test_${name}.py"),
    ("dbpmda.pmns.tmpl", "dbpmda.pmns"),
    ("gitignore.tmpl", ".gitignore"),
)


class NewAgentError(Exception):
    """The agent cannot be created as asked: a one-line message for the user."""


def create_agent(name: str, domain: int, dest: Path) -> list[Path]:
    """Write a new agent package for NAME (default domain DOMAIN) into the new directory DEST;
    return the files written.

    DEST must not exist: nothing is ever overwritten.  If writing fails part way,
    DEST (made here, so holding only what was written here) is removed again.
    """
    check_name(name)
    check_domain(domain)
    values = template_values(name, domain)
    dest = Path(dest)
    try:
        dest.mkdir(parents=True)
    except FileExistsError:
        raise NewAgentError(f"{dest} already exists; choose a new directory") from None
    except OSError as exc:
        raise NewAgentError(f"cannot create {dest}: {exc.strerror or exc}") from None
    written: list[Path] = []
    try:
        for template, target in FILES:
            path = dest / Template(target).substitute(values)
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("x", encoding="utf-8", newline="\n") as out:
                out.write(render(template, values))
            written.append(path)
    except OSError as exc:
        shutil.rmtree(dest, ignore_errors=True)
        raise NewAgentError(f"cannot write {exc.filename or dest}: {exc.strerror or exc}") from None
    return written


def check_name(name: str) -> None:
    """NewAgentError unless NAME can name a new agent (its PMNS subtree, package, entry point)."""
    if not _PMNS_NAME.fullmatch(name):
        raise NewAgentError(
            f"bad agent name {name!r}: it names the agent's metrics, so it must be a letter"
            " followed by letters, digits or underscores"
        )
    if name in SHIPPED_AGENTS:
        raise NewAgentError(f"{name} is the name of an agent shipped with purepcp; choose another")
    if name == "root":
        raise NewAgentError("root is the namespace's own root and cannot name an agent")
    if name == name.upper():
        raise NewAgentError(
            f"bad agent name {name!r}: it needs a lowercase letter, since {name.upper()}"
            " (the name in capitals) stands for the domain in its namespace file"
        )


def check_domain(domain: int) -> None:
    """NewAgentError unless DOMAIN can be a new agent's default domain."""
    if isinstance(domain, bool) or not isinstance(domain, int):
        raise NewAgentError(f"bad domain {domain!r}: a domain is a whole number")
    if not MIN_DOMAIN <= domain <= MAX_DOMAIN:
        raise NewAgentError(
            f"bad domain {domain}: a domain is from {MIN_DOMAIN} to {MAX_DOMAIN}"
            " (PCP's stdpmid file lists those taken)"
        )
    for agent, taken in SHIPPED_AGENTS.items():
        if domain == taken:
            raise NewAgentError(f"domain {domain} is the {agent} agent's; choose another")


def template_values(name: str, domain: int) -> dict[str, str]:
    """What the templates' ${...} stand for, for agent NAME of default domain DOMAIN."""
    return {
        "name": name,
        "symbol": name.upper(),
        "domain": str(domain),
        "package": f"pcp_pmda_{name}",
        "project": f"purepcp-agent-{name.replace('_', '-')}",
        "class_name": class_name(name),
        "requirement": purepcp_requirement(),
    }


def purepcp_requirement() -> str:
    """The generated project's requirement on this purepcp: a compatible release ("purepcp~=0.1").

    Bounded, because PyPI's "purepcp" is another project (a Pgpool-II library, only a
    1.0.0rc1), which pip would otherwise fetch wherever our purepcp is not installed.
    """
    try:
        version = importlib.metadata.version("purepcp")
    except importlib.metadata.PackageNotFoundError:
        return "purepcp"
    release = re.match(r"(\d+)(?:\.(\d+))?", version)
    if release is None:
        return "purepcp"
    return f"purepcp~={release.group(1)}.{release.group(2) or 0}"


def class_name(name: str) -> str:
    """The agent's class: NAME in CamelCase plus "Agent" ("my_app" -> "MyAppAgent"),
    which cannot clash with the names the agent module imports."""
    return "".join(part[:1].upper() + part[1:] for part in name.split("_")) + "Agent"


def render(template: str, values: dict[str, str]) -> str:
    """The text of TEMPLATE (a file of pmda/templates/agent) with VALUES filled in."""
    text = (files("purepcp.pmda") / "templates" / "agent" / template).read_text(encoding="utf-8")
    return Template(text).substitute(values)


__all__ = ["NewAgentError", "create_agent"]
