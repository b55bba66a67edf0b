"""systemd units for this installation: `pmcd --install-units [DIR]`.

The templates (systemd/, installed as pmcd/systemd/) name the installed commands by
absolute path (the virtualenv's own, when there is one) and pass the layout to every
command through
PUREPCP_CONF, so a unit's command run by hand with the unit's environment does what
the service does.  Root gets system units (user pcp, sandboxed, writing to
/var/lib, /var/log and /run); anyone else gets user units (systemctl --user).
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path
from string import Template

from purepcp.pmapi.paths import Paths
from purepcp.pmapi.shipped import shipped_dir

TEMPLATES = shipped_dir(__file__, "systemd")
#: The documents the units name (Documentation=): installed beside the templates (setup.py).
DOCS = shipped_dir(__file__, "docs")
#: The units written, in the order they are reported.
UNITS = (
    "pmcd.service",
    "pmlogger.service",
    "pmlogger_daily.service",
    "pmlogger_daily.timer",
    "pmproxy.service",
    "pmie.service",
    "pmie_check.service",
    "pmie_check.timer",
    "pmie_daily.service",
    "pmie_daily.timer",
)
#: The default logging configuration shipped with pmlogger.
PACKAGED_PMLOGGER_CONF = Path(__file__).resolve().parents[1] / "pmlogger" / "config.default"
#: The account system units run as (Debian's pcp package creates the same one).
SERVICE_USER = "pcp"

#: Sandboxing for system units: agents still read /proc and /sys (read-only views).
_HARDENING = """\
NoNewPrivileges=yes
ProtectSystem=strict
ProtectHome={home}
PrivateTmp=yes
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectControlGroups=yes
ProtectClock=yes
ProtectHostname=yes
RestrictSUIDSGID=yes
RestrictRealtime=yes
LockPersonality=yes"""


def command_path(name: str) -> str:
    """The installed command NAME beside this Python (a venv's bin/), else on $PATH."""
    beside = Path(sys.executable).parent / name
    if beside.exists():
        return str(beside)
    found = shutil.which(name)
    if found is None:
        raise FileNotFoundError(f"the command {name} is not installed beside {sys.executable}")
    return found


def _managed(path: Path, base: str) -> str | None:
    """PATH relative to BASE (/run, /var/lib, /var/log) for a *Directory= setting, or None."""
    try:
        relative = path.relative_to(base)
    except ValueError:
        return None
    return str(relative) if relative.parts else None


def _account(layout: Paths) -> str:
    """User, group and the directories systemd makes for them (system units only)."""
    lines = [f"User={SERVICE_USER}", f"Group={SERVICE_USER}"]
    run = _managed(layout.run_dir, "/run")
    if run:
        lines += [f"RuntimeDirectory={run}", "RuntimeDirectoryPreserve=yes"]
    state = _managed(layout.var_dir, "/var/lib")
    if state:
        lines.append(f"StateDirectory={state}")
    logs = _managed(layout.log_dir, "/var/log")
    if logs:
        lines.append(f"LogsDirectory={logs} {logs}/pmcd {logs}/pmlogger {logs}/pmproxy")
    return "\n".join(lines)


def _hardening(layout: Paths, prefix: Path) -> str:
    """The sandbox; /home read-only rather than hidden when the installation lives there."""
    under_home = any(
        prefix == Path(top) or Path(top) in prefix.parents
        for top in ("/home", "/root", "/run/user")
    )
    text = _HARDENING.format(home="read-only" if under_home else "yes")
    writable = [layout.var_dir, layout.log_dir, layout.run_dir, layout.archive_dir]
    return text + "\nReadWritePaths=" + " ".join(f"-{p}" for p in dict.fromkeys(writable))


def pmlogger_conf(layout: Paths) -> Path:
    """pmlogger's configuration: the layout's if it exists, else the one shipped."""
    path = layout.pmloggerconf_path
    return path if path.exists() else PACKAGED_PMLOGGER_CONF


def render_units(layout: Paths) -> dict[str, str]:
    """Each unit's text for this installation and LAYOUT."""
    prefix = Path(sys.prefix)
    values = {
        "prefix": str(prefix),
        "docs": str(DOCS),
        "layout_file": layout.file,
        "pmcd": command_path("pmcd"),
        "pmlogger": command_path("pmlogger"),
        "pmlogger_daily": command_path("pmlogger_daily"),
        "pmproxy": command_path("pmproxy"),
        "pmie_check": command_path("pmie_check"),
        "pmie_daily": command_path("pmie_daily"),
        "kill": shutil.which("kill") or "/bin/kill",
        "pmlogger_conf": str(pmlogger_conf(layout)),
        "log_dir": str(layout.log_dir),
        "archive_dir": str(layout.archive_dir),
        "var_dir": str(layout.var_dir),
        "account": _account(layout) if layout.system else "",
        "hardening": _hardening(layout, prefix) if layout.system else "NoNewPrivileges=yes",
        "wanted_by": "multi-user.target" if layout.system else "default.target",
    }
    units = {}
    for name in UNITS:
        units[name] = Template((TEMPLATES / name).read_text()).substitute(values)
    return units


def install_units(layout: Paths, directory: str | None = None) -> int:
    """Write the units (and the layout file, pmlogger's configuration and, for system
    units, the service account) for this installation; print what was done and what next."""
    target = Path(directory) if directory else layout.systemdunit_dir
    try:
        written = _write_support_files(layout)
        target.mkdir(parents=True, exist_ok=True)
        for name, text in render_units(layout).items():
            _write_atomically(target / name, text)
            written.append(target / name)
    except OSError as exc:  # (a command not installed is a FileNotFoundError with no file)
        where = exc.filename
        reason = exc.strerror or str(exc)
        print(f"pmcd: cannot install the units: {where + ': ' if where else ''}{reason}",
              file=sys.stderr)  # fmt: skip
        return 1
    for path in written:
        print(f"Wrote {path}")
    scope = "" if layout.system else " --user"
    print(
        f"Next: systemctl{scope} daemon-reload && "
        f"systemctl{scope} enable --now pmcd pmlogger pmlogger_daily.timer"
        f" (and pmproxy, for Grafana and Prometheus)"
    )
    return 0


def _write_support_files(layout: Paths) -> list[Path]:
    """The files the units refer to, each written only if it is not there yet."""
    written = []
    layout_file = Path(layout.file)
    if not layout_file.exists():
        layout_file.parent.mkdir(parents=True, exist_ok=True)
        _write_atomically(layout_file, layout.as_config())
        written.append(layout_file)
    conf = layout.pmloggerconf_path
    if not conf.exists():
        conf.parent.mkdir(parents=True, exist_ok=True)
        _write_atomically(conf, PACKAGED_PMLOGGER_CONF.read_text())
        written.append(conf)
    if layout.system:
        sysusers = layout.sysconf_dir / "sysusers.conf"
        text = Template((TEMPLATES / "sysusers.conf").read_text()).substitute(
            var_dir=layout.var_dir
        )
        _write_atomically(sysusers, text)
        written.append(sysusers)
        _create_account(sysusers)
    return written


def _create_account(sysusers: Path) -> None:
    """Create the service account with systemd-sysusers, when it is missing and we may."""
    try:
        pwd.getpwnam(SERVICE_USER)
        return
    except KeyError:
        pass
    tool = shutil.which("systemd-sysusers")
    if tool is None or os.geteuid() != 0:
        print(f"Note: create the user {SERVICE_USER} (systemd-sysusers {sysusers}) before starting")
        return
    subprocess.run([tool, str(sysusers)], check=False)


def _write_atomically(path: Path, text: str) -> None:
    """Replace PATH with TEXT all at once (a crash leaves the old file or the new one)."""
    temporary = path.with_name(f".{path.name}.new")
    temporary.write_text(text)
    temporary.chmod(0o644)
    os.replace(temporary, path)
