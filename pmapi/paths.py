"""Where everything lives: the one place that decides every path, with PCP's variable names.

Each variable (PCP_VAR_DIR, PCP_PMCDCONF_PATH, PMCD_PORT, ...) comes from, in order:

1. the environment, as in PCP (a variable already set wins over pcp.conf);
2. the layout file, pcp.conf's format (``NAME=value`` lines, ``#`` comments; a value
   may use ``$NAME`` or ``${NAME}`` for another variable): ``$PUREPCP_CONF`` if set
   (it must exist: a file named there and missing is an error, from every command),
   else the chosen layout's own file, ``/etc/purepcp/pcp.conf`` (system) or
   ``$XDG_CONFIG_HOME/purepcp/pcp.conf`` (per-user), when it exists;
3. the defaults: a system layout (``/etc/purepcp``, ``/var/lib/purepcp``,
   ``/var/log/purepcp``, ``/run/purepcp``) or a per-user one (the XDG directories).

The layout is ``PUREPCP_LAYOUT`` (``system`` or ``user``) from the environment, else from
the file ``$PUREPCP_CONF`` names (a service running as user pcp takes the system layout
that way), else root's is the system layout and anyone else's the per-user one, so
pmcd runs without root.  The layout file always follows the layout: a default file that
names the other layout is an error, not a switch of every later command's directories.

The layout file is named by ``PUREPCP_CONF``, not PCP's ``PCP_CONF``: PCP's own tools
read ``$PCP_CONF`` too, and one shell may run both.  The system directories are
purepcp's own, so an installed PCP keeps its files; setting PCP's names (``PCP_RUN_DIR=
/run/pcp``, ...) in the layout file puts ours in PCP's places instead.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["LayoutError", "Paths", "check_layout_file", "layout_file", "paths", "read_layout"]

#: Each variable's default, by layout; "$NAME" refers to another variable.
SYSTEM_DEFAULTS: Mapping[str, str] = {
    "PCP_SYSCONF_DIR": "/etc/purepcp",
    "PCP_VAR_DIR": "/var/lib/purepcp",
    "PCP_LOG_DIR": "/var/log/purepcp",
    "PCP_RUN_DIR": "/run/purepcp",
    "PCP_SYSTEMDUNIT_DIR": "/etc/systemd/system",
}
_SHARED_DEFAULTS: Mapping[str, str] = {
    "PCP_PMCDCONF_PATH": "$PCP_SYSCONF_DIR/pmcd/pmcd.conf",
    "PCP_PMLOGGERCONF_PATH": "$PCP_SYSCONF_DIR/pmlogger/config.default",
    "PCP_PMDAS_DIR": "$PCP_VAR_DIR/pmdas",
    "PCP_TMP_DIR": "$PCP_VAR_DIR/tmp",
    "PMNS_DEFAULT": "$PCP_VAR_DIR/pmns/root",
    "PCP_ARCHIVE_DIR": "$PCP_LOG_DIR/pmlogger",
    "PMCD_PORT": "44321",
    "PMCD_SOCKET": "$PCP_RUN_DIR/pmcd.socket",
    "PCP_CULLAFTER": "14",
    "PCP_COMPRESSAFTER": "1",
}
#: Every variable this module decides.
NAMES = (*SYSTEM_DEFAULTS, *_SHARED_DEFAULTS)

_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)\Z")
_REFERENCE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


class LayoutError(ValueError):
    """A layout file that cannot be read: the message names file and line."""


def _user_defaults(environ: Mapping[str, str]) -> dict[str, str]:
    """The per-user layout: XDG's config, data, state and runtime directories."""
    home = environ.get("HOME") or os.path.expanduser("~")

    def xdg(name: str, fallback: str) -> str:
        value = environ.get(name, "")
        return value if os.path.isabs(value) else os.path.join(home, fallback)

    runtime = environ.get("XDG_RUNTIME_DIR", "")
    run = (
        os.path.join(runtime, "purepcp")
        if os.path.isabs(runtime)
        else os.path.join("/tmp", f"purepcp-{os.getuid()}")
    )
    return {
        "PCP_SYSCONF_DIR": os.path.join(xdg("XDG_CONFIG_HOME", ".config"), "purepcp"),
        "PCP_VAR_DIR": os.path.join(xdg("XDG_DATA_HOME", ".local/share"), "purepcp"),
        "PCP_LOG_DIR": os.path.join(xdg("XDG_STATE_HOME", ".local/state"), "purepcp", "log"),
        "PCP_RUN_DIR": run,
        "PCP_SYSTEMDUNIT_DIR": os.path.join(xdg("XDG_CONFIG_HOME", ".config"), "systemd", "user"),
    }


#: The system layout's file (a module constant so that tests can move it).
SYSTEM_LAYOUT_FILE = os.path.join(SYSTEM_DEFAULTS["PCP_SYSCONF_DIR"], "pcp.conf")


def _kind(value: str | None, where: str) -> bool | None:
    """PUREPCP_LAYOUT's VALUE as "system layout?" (None when unset); WHERE names its source."""
    if value in (None, ""):
        return None
    if value not in ("system", "user"):
        raise LayoutError(f"{where}: PUREPCP_LAYOUT={value}: must be system or user")
    return value == "system"


def layout_file(environ: Mapping[str, str] | None = None, *, system: bool | None = None) -> str:
    """The layout file's path: $PUREPCP_CONF, else the default file of the layout chosen
    (SYSTEM, else $PUREPCP_LAYOUT, else root's system layout and anyone else's own)."""
    environ = os.environ if environ is None else environ
    if environ.get("PUREPCP_CONF"):
        return environ["PUREPCP_CONF"]
    if system is None:
        system = _kind(environ.get("PUREPCP_LAYOUT"), "environment")
    if system is None:
        system = os.geteuid() == 0
    if system:
        return SYSTEM_LAYOUT_FILE
    return os.path.join(_user_defaults(environ)["PCP_SYSCONF_DIR"], "pcp.conf")


def pcp_conf() -> dict[str, str]:
    """PCP's own pcp.conf ($PCP_CONF, else $PCP_DIR/etc/pcp.conf), which pcp.env and
    pmGetConfig read: its settings, {} where there is none or it cannot be read."""
    default = os.path.join(os.environ.get("PCP_DIR", "/"), "etc", "pcp.conf")
    try:
        return read_layout(os.environ.get("PCP_CONF") or default)
    except LayoutError:
        return {}


def read_layout(path: str) -> dict[str, str]:
    """The NAME=value settings of the layout file PATH ({} if it does not exist)."""
    try:
        text = Path(path).read_text()
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise LayoutError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    settings: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = _LINE.match(line.removeprefix("export ").strip())
        if m is None:
            raise LayoutError(f"{path}:{number}: expected NAME=value, not {line!r}")
        value = m.group(2).strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        settings[m.group(1)] = value
    return settings


@dataclass(frozen=True)
class Paths:
    """Every variable's value, and where the layout came from."""

    values: Mapping[str, str]
    file: str  # the layout file consulted (it may not exist)
    system: bool  # the system layout's defaults (root), else the per-user one
    chosen: frozenset[str] = frozenset()  # the names set in the environment or the file

    def is_default(self, name: str) -> bool:
        """Whether NAME's value is the layout's default (nobody chose it)."""
        return name not in self.chosen

    def __getitem__(self, name: str) -> str:
        return self.values[name]

    @property
    def sysconf_dir(self) -> Path:
        return Path(self.values["PCP_SYSCONF_DIR"])

    @property
    def pmcdconf_path(self) -> Path:
        return Path(self.values["PCP_PMCDCONF_PATH"])

    @property
    def pmloggerconf_path(self) -> Path:
        return Path(self.values["PCP_PMLOGGERCONF_PATH"])

    @property
    def var_dir(self) -> Path:
        return Path(self.values["PCP_VAR_DIR"])

    @property
    def pmdas_dir(self) -> Path:
        return Path(self.values["PCP_PMDAS_DIR"])

    @property
    def tmp_dir(self) -> Path:
        return Path(self.values["PCP_TMP_DIR"])

    @property
    def pmns_default(self) -> Path:
        return Path(self.values["PMNS_DEFAULT"])

    @property
    def log_dir(self) -> Path:
        return Path(self.values["PCP_LOG_DIR"])

    @property
    def archive_dir(self) -> Path:
        return Path(self.values["PCP_ARCHIVE_DIR"])

    @property
    def run_dir(self) -> Path:
        return Path(self.values["PCP_RUN_DIR"])

    @property
    def systemdunit_dir(self) -> Path:
        return Path(self.values["PCP_SYSTEMDUNIT_DIR"])

    @property
    def pmcd_socket(self) -> str:
        return self.values["PMCD_SOCKET"]

    @property
    def pmcd_port(self) -> int:
        """The first of PMCD_PORT's comma-separated ports (44321 when it names none)."""
        first = self.values["PMCD_PORT"].split(",")[0].strip()
        return int(first) if first.isdigit() else 44321

    def as_config(self) -> str:
        """This layout as a layout file's text: the values chosen as settings, the
        defaults as comments (so a missing pmcd.conf stays "not chosen": pmcd then runs
        the packaged one)."""
        lines = [
            "# purepcp's layout: NAME=value; the environment wins over this file.",
            "# PUREPCP_LAYOUT picks the defaults (system: /etc, /var/lib, /var/log, /run;",
            "# user: the XDG directories) whoever runs the command.",
            f"PUREPCP_LAYOUT={'system' if self.system else 'user'}",
            "# Commented lines show the defaults; uncomment one to change it.",
        ]
        for name in NAMES:
            lines.append(f"{'' if name in self.chosen else '#'}{name}={self.values[name]}")
        return "\n".join(lines) + "\n"


def _own(file: str) -> bool:
    """Whether FILE, a default layout file, is the system layout's."""
    return file == SYSTEM_LAYOUT_FILE


def _refuse_other_layout(file: str, system: bool) -> None:
    """A default layout file that picks the other layout: every command run without
    PUREPCP_CONF would take that layout's directories while reading this layout's file
    (an older `pmcd --install-units` under PUREPCP_LAYOUT=user as root wrote such a file)."""
    number = next(
        (n for n, line in enumerate(Path(file).read_text().splitlines(), 1)
         if line.strip().removeprefix("export ").strip().startswith("PUREPCP_LAYOUT")),
        0,
    )  # fmt: skip
    kind, own = ("system", "user") if system else ("user", "system")
    raise LayoutError(
        f"{file}:{number}: PUREPCP_LAYOUT={kind} in the {own} layout's file: remove the line, "
        f"or set PUREPCP_LAYOUT={kind} (or PUREPCP_CONF) in the environment instead"
    )


def check_layout_file(environ: Mapping[str, str] | None = None) -> None:
    """LayoutError if $PUREPCP_CONF names a file that does not exist (or cannot be read, or
    has a line that is no setting), as every PCP command refuses a $PCP_CONF it cannot open.

    A default layout file may be missing (nothing has to exist at first); one named in the
    environment is a choice, and a mistyped name must not leave a command quietly running
    on the defaults."""
    environ = os.environ if environ is None else environ
    named = environ.get("PUREPCP_CONF")
    if named:
        _require(named)
        read_layout(named)


def _require(named: str) -> None:
    """LayoutError unless NAMED, the file $PUREPCP_CONF names, exists."""
    if not os.path.exists(named):
        raise LayoutError(
            f"{named}: no such layout file (PUREPCP_CONF names it): create it "
            "(`pmcd --install-units` writes one), or correct or unset PUREPCP_CONF"
        )


def paths(
    environ: Mapping[str, str] | None = None,
    *,
    system: bool | None = None,
    missing_ok: bool = False,
) -> Paths:
    """Resolve every variable from ENVIRON (default os.environ), the layout file and defaults.

    Raises LayoutError when the layout file cannot be read or refers in circles, or when
    $PUREPCP_CONF names a file that does not exist (check_layout_file), unless MISSING_OK
    (for `pmcd --install-units`, which writes it).
    """
    environ = os.environ if environ is None else environ
    if system is None:
        system = _kind(environ.get("PUREPCP_LAYOUT"), "environment")
    file = layout_file(environ, system=system)
    if environ.get("PUREPCP_CONF") and not missing_ok:
        _require(file)
    settings = read_layout(file)
    if system is None:
        system = _kind(settings.get("PUREPCP_LAYOUT"), file)
        if system is not None and not environ.get("PUREPCP_CONF") and system != _own(file):
            _refuse_other_layout(file, system)
    if system is None:
        system = os.geteuid() == 0
    defaults = {**(SYSTEM_DEFAULTS if system else _user_defaults(environ)), **_SHARED_DEFAULTS}
    resolved: dict[str, str] = {}
    chosen: set[str] = set()

    def value(name: str, seen: tuple[str, ...]) -> str:
        if name in resolved:
            return resolved[name]
        if name in seen:
            raise LayoutError(f"{file}: {' -> '.join((*seen, name))}: refers to itself")
        if environ.get(name):
            raw, origin = environ[name], "environment"
        elif name in settings:
            raw, origin = settings[name], "file"
        elif name in defaults:
            raw, origin = defaults[name], "default"
        else:
            return ""
        if origin != "default":
            chosen.add(name)
        if origin == "environment":
            result = raw  # as the shell gave it: no second expansion
        else:
            result = _REFERENCE.sub(lambda m: value(m.group(1) or m.group(2), (*seen, name)), raw)
        resolved[name] = os.path.expanduser(result) if origin == "file" else result
        return resolved[name]

    for name in NAMES:
        value(name, ())
    return Paths(resolved, file, system, frozenset(chosen))
