"""pmrep.conf(5): where the files are, their [options], and the metric specs of the
report (the command line's, the [global] section's and the :metricsets named).

A metric spec is pmrep's ``name,label,instances,unit,type,width,precision,limit``, given
compactly on one line or verbosely as ``key = metric`` with ``key.label``, ``key.unit``,
``key.formula`` ... lines; a formula makes the metric a derived one.
"""

from __future__ import annotations

import configparser
import csv
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .settings import KEYS, Settings

#: the fields of a metric spec after its name, in order
SPEC_FIELDS = ("label", "instances", "unit", "type", "width", "precision", "limit", "formula")

#: where pmrep looks, first readable wins (then the set this project ships)
SEARCH = (
    "./pmrep.conf",
    "$HOME/.pmrep.conf",
    "$HOME/.pcp/pmrep.conf",
    "$PCP_SYSCONF_DIR/pmrep/pmrep.conf",
    "$PCP_SYSCONF_DIR/pmrep",
)
SHIPPED = Path(__file__).with_name("conf")


class ConfigError(Exception):
    """A configuration problem, in the words and lines PCP's pmrep writes it (file and
    line where known); STDOUT is what pmrep prints on stdout after it (or "")."""

    def __init__(self, message: str, stdout: str = "") -> None:
        super().__init__(message)
        self.stdout = stdout


@dataclass
class Spec:
    """One metric of the report as configured (strings as given; None or "" if unset)."""

    name: str
    label: str | None = None
    instances: list[str] = field(default_factory=list)
    unit: str | None = None
    type: str | None = None
    width: str | None = None
    precision: str | None = None
    limit: str | None = None

    def copy(self, name: str | None = None) -> Spec:
        return Spec(name or self.name, self.label, list(self.instances), self.unit, self.type,
                    self.width, self.precision, self.limit)  # fmt: skip


def sysconf_dir() -> str:
    """$PCP_SYSCONF_DIR: the environment's, else PCP's /etc/pcp."""
    return os.environ.get("PCP_SYSCONF_DIR", "/etc/pcp")


def default_path() -> str | None:
    """The first readable file or directory of SEARCH, else the shipped directory."""
    home = os.path.expanduser("~")
    for candidate in SEARCH:
        path = candidate.replace("$HOME", home).replace("$PCP_SYSCONF_DIR", sysconf_dir())
        if os.access(path, os.R_OK) and (os.path.isfile(path) or os.path.isdir(path)):
            return path
    return str(SHIPPED) if SHIPPED.is_dir() else None


def check_path(path: str) -> None:
    """-c PATH must name a readable file or directory."""
    if os.access(path, os.R_OK) and (os.path.isfile(path) or os.path.isdir(path)):
        return
    if not os.path.exists(path):
        why = "No such file or directory"
    elif not os.access(path, os.R_OK):
        why = "Permission denied"
    else:
        why = "Not a regular file"
    raise ConfigError(f"Failed to read configuration from '{path}':\n{why}.")


def conf_files(path: str | None) -> list[str]:
    """PATH itself, or the readable *.conf files of the directory PATH, sorted."""
    if not path:
        return []
    if os.path.isfile(path):
        return [path]
    found = []
    for name in sorted(os.listdir(path)):
        full = os.path.join(path, name)
        if full.endswith(".conf") and os.access(full, os.R_OK) and os.path.isfile(full):
            found.append(full)
    return found


def _parser() -> configparser.ConfigParser:
    parser = configparser.ConfigParser()
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    return parser


@dataclass
class Loaded:
    """Every section of every file, the last file's wins (with the file it came from)."""

    sections: dict[str, dict[str, str]] = field(default_factory=dict)
    source: dict[str, str] = field(default_factory=dict)
    globals: list[tuple[str, str, str]] = field(default_factory=list)  # (file, key, value)


def load(files: Sequence[str]) -> Loaded:
    """Read FILES in order (configparser's rules, % interpolation included)."""
    loaded = Loaded()
    for path in files:
        parser = _parser()
        try:
            with open(path, encoding="utf-8", errors="surrogateescape") as f:
                parser.read_file(f, path)
            for section in parser.sections():
                items = dict(parser.items(section))
                if section == "global":
                    loaded.globals += [(path, k, v) for k, v in items.items()]
                loaded.sections[section] = items
                loaded.source[section] = path
        except configparser.Error as exc:
            raise ConfigError(parse_error(path, exc)) from None
        except OSError as exc:
            raise ConfigError(
                f"Failed to read configuration file '{path}':\n{exc.strerror}."
            ) from None
    return loaded


def parse_error(path: str, exc: configparser.Error) -> str:
    """A file configparser cannot read, as pmrep says it: the file and line, then
    configparser's own message on the lines after."""
    lineno = getattr(exc, "lineno", None)
    if lineno is None:
        errors = getattr(exc, "errors", None) or [("?",)]
        lineno = errors[0][0]
    message = getattr(exc, "message", str(exc))
    return f"Failed to read configuration file '{path}', line {lineno}:\n{message}"


def apply_options(loaded: Loaded, settings: Settings, metricsets: Sequence[str]) -> None:
    """[options] and then each named metricset's keys set SETTINGS (before the command line)."""
    for section in ("options", *metricsets):
        items = loaded.sections.get(section)
        if items is None:
            continue
        where = loaded.source[section]
        for key, value in items.items():
            if key in KEYS:
                if not value:
                    raise ConfigError(
                        f"Failed to read configuration file '{where}':\n"
                        f"No value set for option {key} in [{section}]."
                    )
                settings.set_from_file(key, value)
            elif section == "options":
                raise ConfigError(
                    f"Failed to read configuration file '{where}':\n"
                    f"Unknown option {key} in [{section}]."
                )


# ---------------------------------------------------------------- metric specs


def parse_instances(text: str) -> list[str]:
    """A comma-separated instance list, each may be quoted (csv rules)."""
    found = []
    for inst in next(csv.reader([text]), []):
        if inst[:1] in ('"', "'"):
            inst = inst[1:]
        if inst[-1:] in ('"', "'"):
            inst = inst[:-1]
        found.append(inst)
    return found


def _split_instances(spec: str) -> tuple[str, list[str]]:
    """SPEC without its instances field's quoted list, and the instances it named."""
    if spec.count(",") < 2:
        return spec + ",,", []
    insts: list[str] = []
    third = spec.split(",")[2]
    quoted = len(third) > 2 and third[0] in "'\""
    if '"' in spec or "'" in spec:
        rest = spec.partition(",")[2].partition(",")[2]
        if rest:
            q = rest[0]
            rest = rest[: rest.rfind(q) + 1]
            insts = parse_instances(rest[1:-1] if quoted else rest)
            spec = spec.replace(rest, "")
    elif third:
        insts = [third]
    if spec.count(",") < 2:
        spec += ",,"
    return spec, insts


def compact_spec(text: str) -> Spec:
    """NAME,label,instances,unit,type,width,precision,limit (trailing fields optional)."""
    body, insts = _split_instances(text)
    parts = body.split(",")
    fields = (parts[1:2] + [None] + parts[3:8] + [None] * 8)[:7]  # type: ignore[operator]
    label, _, unit, type_, width, precision, limit = fields
    return Spec(parts[0], label, insts, unit, type_, width, precision, limit)


class _Section:
    """The metric lines of one section, in order, keyed as the file keys them."""

    def __init__(self, where: str, section: str) -> None:
        self.where, self.section = where, section
        self.specs: dict[str, Spec] = {}
        self.formulas: list[str] = []

    def add(self, key: str, value: str) -> None:
        second = key.split(".")[1] if "." in key else None
        compact = "," in value or (second is not None and second not in SPEC_FIELDS)
        if compact and second == "formula":
            compact = False
        if compact:
            spec = compact_spec(f"{key},{value}")
            self.specs[key] = spec
            return
        if second is None or second not in SPEC_FIELDS:
            self.specs[key] = Spec(value)
            return
        base, attr = key.rsplit(".", 1)
        spec = self.specs.get(base)
        if spec is None:
            raise ConfigError(
                f"Failed to read configuration file '{self.where}':\nUndeclared metric key {base}."
            )
        value = value[1:-1] if len(value) >= 2 and value[0] == value[-1] == '"' else value
        if attr == "formula":
            self.formulas.append(f"{spec.name}={value}")
        elif attr == "instances":
            spec.instances = [value]
        else:
            setattr(spec, attr, value)


@dataclass
class Wanted:
    """The report's metrics (by name, in order) and the derived definitions they need."""

    specs: dict[str, Spec]
    derived: list[str]


def wanted_metrics(operands: Sequence[str], loaded: Loaded, settings: Settings) -> Wanted:
    """The metrics OPERANDS ask for: [global]'s first (unless -G), then each operand's,
    a :metricset standing for its section's metric lines."""
    specs: dict[str, Spec] = {}
    formulas: list[str] = []
    if settings.globals:
        for where, key, value in loaded.globals:
            if key in KEYS:
                raise ConfigError(
                    f"Failed to read configuration file '{where}':\n"
                    "Section [global] contains options."
                )
            if not value:
                raise ConfigError(
                    f"Failed to read configuration file '{where}':\n"
                    f"No value set for {key} in [global]."
                )
        section = _Section("", "global")
        for where, key, value in loaded.globals:
            section.where = where
            section.add(key, value)
        specs.update({s.name: s for s in section.specs.values()})
        formulas += section.formulas
    for operand in operands:
        if operand.startswith(":"):
            name = operand[1:]
            items = loaded.sections.get(name)
            if items is None:
                raise ConfigError(f"Metricset definition ':{name}' not found.")
            section = _Section(loaded.source[name], name)
            for key, value in items.items():
                if not value:
                    raise ConfigError(
                        f"Failed to read configuration file '{section.where}':\n"
                        f"No value set for {key} in [{name}]."
                    )
                if key not in KEYS:
                    section.add(key, value)
            for spec in section.specs.values():
                specs[spec.name] = spec  # (a repeat keeps the first place)
            formulas += section.formulas
        else:
            spec = compact_spec(operand)
            specs[spec.name] = spec  # (a repeat keeps the first place)
    if not specs:
        raise ConfigError("No metrics specified.")
    return Wanted(specs, formulas)
