"""purepcp.pmapi.paths: every path from the environment, then the layout file, then the defaults."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from purepcp.pmapi.paths import (
    LayoutError,
    check_layout_file,
    layout_file,
    paths,
    read_layout,
)


def test_system_defaults_are_purepcps_own_directories(tmp_path):
    layout = paths({"PUREPCP_CONF": str(tmp_path / "none.conf")}, system=True, missing_ok=True)
    assert layout.system and layout.file == str(tmp_path / "none.conf")
    assert layout.pmcdconf_path == Path("/etc/purepcp/pmcd/pmcd.conf")
    assert layout.pmns_default == Path("/var/lib/purepcp/pmns/root")
    assert layout.pmdas_dir == Path("/var/lib/purepcp/pmdas")
    assert layout.archive_dir == Path("/var/log/purepcp/pmlogger")
    assert layout.run_dir == Path("/run/purepcp")
    assert layout.pmcd_socket == "/run/purepcp/pmcd.socket"
    assert layout.pmcd_port == 44321
    assert layout.is_default("PCP_VAR_DIR")


def test_user_defaults_follow_xdg():
    env = {
        "HOME": "/home/u",
        "XDG_CONFIG_HOME": "/home/u/cfg",
        "XDG_RUNTIME_DIR": "/run/user/1000",
    }
    layout = paths(env, system=False)
    assert layout.file == "/home/u/cfg/purepcp/pcp.conf"
    assert layout.sysconf_dir == Path("/home/u/cfg/purepcp")
    assert layout.var_dir == Path("/home/u/.local/share/purepcp")
    assert layout.log_dir == Path("/home/u/.local/state/purepcp/log")
    assert layout.run_dir == Path("/run/user/1000/purepcp")
    assert layout.systemdunit_dir == Path("/home/u/cfg/systemd/user")


def test_user_run_dir_without_xdg_runtime_is_private_to_the_uid():
    layout = paths({"HOME": "/home/u", "XDG_RUNTIME_DIR": "relative/ignored"}, system=False)
    assert layout.run_dir.name.startswith("purepcp-") and layout.run_dir.parent == Path("/tmp")


def test_the_file_overrides_defaults_and_derived_names_follow(tmp_path):
    conf = tmp_path / "pcp.conf"
    conf.write_text(
        "# a comment\n\nPCP_VAR_DIR=/srv/pcp\nexport PCP_LOG_DIR='/srv/log'\n"
        "PCP_ARCHIVE_DIR=${PCP_LOG_DIR}/archives\nPMCD_PORT=44322,44323\n"
    )
    layout = paths({"PUREPCP_CONF": str(conf)}, system=True)
    assert layout.pmns_default == Path("/srv/pcp/pmns/root")  # derived from the file's value
    assert layout.archive_dir == Path("/srv/log/archives")
    assert layout.pmcd_port == 44322
    assert not layout.is_default("PCP_VAR_DIR") and layout.is_default("PMNS_DEFAULT")


def test_the_environment_wins_over_the_file(tmp_path):
    conf = tmp_path / "pcp.conf"
    conf.write_text("PCP_RUN_DIR=/from/file\nPCP_VAR_DIR=/from/file/var\n")
    env = {"PUREPCP_CONF": str(conf), "PCP_RUN_DIR": "/from/env"}
    layout = paths(env, system=True)
    assert layout.run_dir == Path("/from/env")
    assert layout.pmcd_socket == "/from/env/pmcd.socket"
    assert layout.var_dir == Path("/from/file/var")


def test_layout_round_trips_through_its_own_file(tmp_path):
    conf = tmp_path / "pcp.conf"
    first = paths({"HOME": "/home/x"}, system=False)
    conf.write_text(first.as_config())
    again = paths({"PUREPCP_CONF": str(conf), "HOME": "/home/x"}, system=False)
    assert again.values == first.values and again.chosen == frozenset()
    assert "#PCP_VAR_DIR=/home/x/.local/share/purepcp\n" in conf.read_text()
    chosen = paths({"PUREPCP_CONF": str(conf), "PCP_RUN_DIR": "/r"}, system=True)
    conf.write_text(chosen.as_config())
    assert "\nPCP_RUN_DIR=/r\n" in conf.read_text()
    assert paths({"PUREPCP_CONF": str(conf)}, system=True).run_dir == Path("/r")


def test_bad_lines_name_file_and_line(tmp_path):
    conf = tmp_path / "pcp.conf"
    conf.write_text("PCP_VAR_DIR=/x\nthis is not a setting\n")
    with pytest.raises(LayoutError, match=rf"^{conf}:2: expected NAME=value"):
        read_layout(str(conf))


def test_circular_references_are_refused(tmp_path):
    conf = tmp_path / "pcp.conf"
    conf.write_text("PCP_VAR_DIR=$PCP_TMP_DIR/x\nPCP_TMP_DIR=$PCP_VAR_DIR/tmp\n")
    with pytest.raises(LayoutError, match="refers to itself"):
        paths({"PUREPCP_CONF": str(conf)}, system=True)


def test_missing_file_is_no_error_and_the_default_file_depends_on_the_user():
    assert read_layout("/nonexistent/pcp.conf") == {}
    assert layout_file({}, system=True) == "/etc/purepcp/pcp.conf"
    assert layout_file({"HOME": "/home/u"}, system=False) == "/home/u/.config/purepcp/pcp.conf"


def test_the_layout_file_can_pick_the_system_defaults_for_any_user(tmp_path):
    conf = tmp_path / "pcp.conf"
    conf.write_text(paths({"PUREPCP_CONF": str(conf)}, system=True, missing_ok=True).as_config())
    assert "\nPUREPCP_LAYOUT=system\n" in conf.read_text()
    layout = paths({"PUREPCP_CONF": str(conf), "HOME": "/var/lib/pcp"})  # a service's user
    assert layout.system and layout.run_dir == Path("/run/purepcp")
    assert layout.is_default("PCP_PMCDCONF_PATH")
    user = paths({"PUREPCP_CONF": str(conf), "PUREPCP_LAYOUT": "user", "HOME": "/home/u"})
    assert not user.system and user.var_dir == Path("/home/u/.local/share/purepcp")
    conf.write_text("PUREPCP_LAYOUT=both\n")
    with pytest.raises(LayoutError, match="PUREPCP_LAYOUT=both: must be system or user"):
        paths({"PUREPCP_CONF": str(conf)})


@pytest.mark.parametrize(
    ("tool", "prog", "argv"),
    [
        ("purepcp.tools.pminfo", "pminfo", ["kernel.all.load"]),
        ("purepcp.tools.pmval", "pmval", ["kernel.all.load"]),
        ("purepcp.pmda.cli.dbpmda", "dbpmda", []),
        ("purepcp.pmcd.pmda_tool", "pmda", ["list"]),
        ("purepcp.pmcd.main", "pmcd", ["-f"]),
    ],
)
def test_a_bad_layout_file_is_one_line_from_every_tool(tmp_path, tool, prog, argv):
    conf = tmp_path / "pcp.conf"
    conf.write_text("PCP_VAR_DIR=/x\ngarbage line\n")
    done = subprocess.run(
        [sys.executable, "-m", tool, *argv],
        env={**os.environ, "PUREPCP_CONF": str(conf)},
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert (done.returncode, done.stderr) == (
        1,
        f"{prog}: {conf}:2: expected NAME=value, not 'garbage line'\n",
    )


def test_a_missing_named_layout_file_is_an_error(tmp_path):
    """$PUREPCP_CONF naming no file used to be taken as an empty file: every command ran
    on the defaults and said nothing.  It is refused, as PCP refuses such a $PCP_CONF;
    `pmcd --install-units` (missing_ok) may still write it."""
    missing = tmp_path / "typo.conf"
    with pytest.raises(LayoutError) as refused:
        paths({"PUREPCP_CONF": str(missing)}, system=True)
    assert str(refused.value) == _NO_LAYOUT.format(missing)
    with pytest.raises(LayoutError):
        check_layout_file({"PUREPCP_CONF": str(missing)})
    check_layout_file({})  # (none named: the default file may be missing)
    assert paths({"PUREPCP_CONF": str(missing)}, system=True, missing_ok=True).is_default(
        "PCP_VAR_DIR"
    )


#: The one line every command gives for a $PUREPCP_CONF that names no file.
_NO_LAYOUT = (
    "{}: no such layout file (PUREPCP_CONF names it): create it "
    "(`pmcd --install-units` writes one), or correct or unset PUREPCP_CONF"
)


@pytest.mark.parametrize(
    ("tool", "prog", "argv"),
    [
        ("purepcp.tools.pminfo", "pminfo", ["kernel.all.load"]),
        ("purepcp.tools.pminfo", "pminfo", ["-a", "ARCHIVE"]),  # (no layout needed: still)
        ("purepcp.tools.pmval", "pmval", ["-a", "ARCHIVE", "sample.seconds"]),
        ("purepcp.pmda.cli.dbpmda", "dbpmda", []),
        ("purepcp.pmcd.pmda_tool", "pmda", ["list"]),
        ("purepcp.pmcd.main", "pmcd", ["-f"]),
        ("purepcp.pmlogger.main", "pmlogger", ["-C", "arch"]),
        ("purepcp.pmlogger.daily", "pmlogger_daily", ["-N"]),
        ("purepcp.tools.pmdumplog", "pmdumplog", ["-a", "ARCHIVE"]),
        ("purepcp.tools.pmseries", "pmseries", ["kernel.all.load"]),
    ],
)
def test_a_missing_named_layout_file_is_one_line_from_every_tool(tmp_path, tool, prog, argv):
    """Each of these exited 0 (or went on to other work) on the defaults, silently."""
    missing = tmp_path / "typo.conf"
    argv = [str(tmp_path / "arch") if a == "ARCHIVE" else a for a in argv]
    done = subprocess.run(
        [sys.executable, "-m", tool, *argv],
        env={**os.environ, "PUREPCP_CONF": str(missing)},
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        cwd=tmp_path,
    )
    assert (done.returncode, done.stdout, done.stderr) == (
        1,
        "",
        f"{prog}: {_NO_LAYOUT.format(missing)}\n",
    )
    assert not missing.exists()


def test_version_needs_no_layout_file_and_install_units_writes_it(tmp_path):
    """-V answers whatever the layout (as PCP's tools do); pmcd --install-units writes
    the file $PUREPCP_CONF names when it does not exist yet."""
    missing = tmp_path / "new.conf"
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    env.update(PUREPCP_CONF=str(missing), PUREPCP_LAYOUT="user", HOME=str(tmp_path))
    version = subprocess.run(
        [sys.executable, "-m", "purepcp.tools.pminfo", "-V"],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert version.returncode == 0 and version.stderr.startswith("pminfo version ")
    units = subprocess.run(
        [sys.executable, "-m", "purepcp.pmcd.main", "--install-units", str(tmp_path / "units")],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert units.returncode == 0, units.stderr
    assert f"Wrote {missing}\n" in units.stdout and missing.exists()


def test_the_layout_file_follows_the_layout_chosen_in_the_environment(monkeypatch, tmp_path):
    from purepcp import pmapi

    system_file = tmp_path / "etc" / "pcp.conf"
    monkeypatch.setattr(pmapi.paths, "SYSTEM_LAYOUT_FILE", str(system_file))
    home = {"HOME": "/home/u"}
    for euid in (0, 1000):
        monkeypatch.setattr(pmapi.paths.os, "geteuid", lambda euid=euid: euid)
        user = paths({**home, "PUREPCP_LAYOUT": "user"})
        assert (user.system, user.file) == (False, "/home/u/.config/purepcp/pcp.conf")
        system = paths({**home, "PUREPCP_LAYOUT": "system"})
        assert (system.system, system.file) == (True, str(system_file))
        assert layout_file({**home, "PUREPCP_LAYOUT": "user"}) == user.file
        with pytest.raises(LayoutError, match="environment: PUREPCP_LAYOUT=root: must be system"):
            paths({**home, "PUREPCP_LAYOUT": "root"})


def test_a_default_layout_file_naming_the_other_layout_is_an_error(monkeypatch, tmp_path):
    """/etc/purepcp/pcp.conf saying PUREPCP_LAYOUT=user (as an older --install-units wrote it)
    would send every root command to root's per-user directories: refused, by file and line."""
    from purepcp import pmapi

    system_file = tmp_path / "etc" / "pcp.conf"
    system_file.parent.mkdir()
    system_file.write_text("# layout\nPCP_VAR_DIR=/v\nPUREPCP_LAYOUT=user\n")
    monkeypatch.setattr(pmapi.paths, "SYSTEM_LAYOUT_FILE", str(system_file))
    monkeypatch.setattr(pmapi.paths.os, "geteuid", lambda: 0)
    with pytest.raises(LayoutError) as refused:
        paths({"HOME": "/root"})
    assert str(refused.value) == (
        f"{system_file}:3: PUREPCP_LAYOUT=user in the system layout's file: remove the line, "
        "or set PUREPCP_LAYOUT=user (or PUREPCP_CONF) in the environment instead"
    )
    assert paths({"HOME": "/root", "PUREPCP_CONF": str(system_file)}).system is False  # named
    system_file.write_text("PUREPCP_LAYOUT=system\n")  # agreeing with its place: fine
    assert paths({"HOME": "/root"}).system

    user_file = tmp_path / "home" / ".config" / "purepcp" / "pcp.conf"
    user_file.parent.mkdir(parents=True)
    user_file.write_text("PUREPCP_LAYOUT=system\n")
    monkeypatch.setattr(pmapi.paths.os, "geteuid", lambda: 1000)
    with pytest.raises(LayoutError, match=r":1: PUREPCP_LAYOUT=system in the user layout's file"):
        paths({"HOME": str(tmp_path / "home")})
