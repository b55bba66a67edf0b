"""pcp.pmapi's pmGetConfig on purepcp: the daemons' directories from our layout, PCP's
tools' configuration from PCP's pcp.conf where PCP is installed, the rest PCP's, and
PCP_VERSION the release the API follows."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.layout import layout_text

PCP_CONF = """\
PCP_SYSCONF_DIR=/pcp/etc
PCP_PMDAS_DIR=/pcp/pmdas
PCP_BIN_DIR=/pcp/bin
PCP_USER=pcpuser
PCP_AWK_PROG="/usr/bin/gawk --posix"
"""


@pytest.fixture
def setting(tmp_path, monkeypatch):
    """A function: NAME's pmGetConfig answer, our layout under TMP_PATH (its
    PCP_SYSCONF_DIR chosen or not) and PCP's pcp.conf PCP_CONF above (or none)."""
    from pcp import pmapi

    for name in ("PCP_SYSCONF_DIR", "PCP_PMDAS_DIR", "PCP_BIN_DIR", "PCP_USER", "PCP_GROUP",
                 "PCP_VERSION", "PCP_AWK_PROG", "PCP_DIR"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)

    def answer(name: str, *, sysconf_chosen: bool = False, pcp: bool = True) -> str | None:
        unchosen = () if sysconf_chosen else ("PCP_SYSCONF_DIR",)
        (tmp_path / "layout.conf").write_text(layout_text(tmp_path, unchosen=unchosen))
        monkeypatch.setenv("PUREPCP_CONF", str(tmp_path / "layout.conf"))
        (tmp_path / "pcp.conf").write_text(PCP_CONF)
        monkeypatch.setenv("PCP_CONF", str(tmp_path / ("pcp.conf" if pcp else "none.conf")))
        return pmapi.pmContext.pmGetConfig(name)

    return answer


def test_the_environment_wins(setting, monkeypatch):
    monkeypatch.setenv("PCP_SYSCONF_DIR", "/mine")
    assert setting("PCP_SYSCONF_DIR") == "/mine"


def test_the_daemons_directories_are_our_layouts(setting, tmp_path):
    """Where our pmcd looks for agents, not where PCP's does."""
    assert setting("PCP_PMDAS_DIR") == str(tmp_path / "var" / "pmdas")


def test_pcps_tools_find_their_configuration_where_pcp_installed_it(setting, tmp_path):
    """pcp-dstat's plugins and pmrep's metricsets are PCP's files: PCP_SYSCONF_DIR is
    PCP's where PCP is installed and the layout has not chosen one."""
    assert setting("PCP_SYSCONF_DIR") == "/pcp/etc"
    assert setting("PCP_SYSCONF_DIR", sysconf_chosen=True) == str(tmp_path / "etc")
    default = setting("PCP_SYSCONF_DIR", pcp=False)
    assert default is not None and default.endswith("purepcp")


def test_the_rest_are_pcps(setting):
    assert setting("PCP_BIN_DIR") == "/pcp/bin"
    assert setting("PCP_AWK_PROG") == "/usr/bin/gawk --posix"
    assert setting("PCP_BIN_DIR", pcp=False) is None
    assert setting("NO_SUCH_SETTING") is None


def test_pcp_user_without_pcp_is_pcp(setting):
    """Agents call set_user(pmGetConfig('PCP_USER')); without PCP it was None."""
    assert setting("PCP_USER") == "pcpuser"
    assert setting("PCP_USER", pcp=False) == "pcp"


def test_pcp_version_is_the_release_followed(setting):
    """pcp-dstat prints 'pcp-dstat ' + pmGetConfig('PCP_VERSION'); it was None."""
    from purepcp.pmapi import PCP_COMPAT_VERSION

    assert setting("PCP_VERSION") == setting("PCP_VERSION", pcp=False) == PCP_COMPAT_VERSION


@pytest.mark.interop
def test_pcp_dstat_finds_its_plugins(tmp_path, monkeypatch):
    """PCP's pcp-dstat on our API, a user's layout (PCP_SYSCONF_DIR unchosen): it finds
    its plugins in PCP's /etc/pcp/dstat (it said "No configs found" before)."""
    import os
    import subprocess
    import sys

    from tests.support.qa_archives import qa

    dstat = Path("/usr/lib/pcp/bin/pcp-dstat")
    if not dstat.exists() or not Path("/etc/pcp/dstat/cpu").exists():
        pytest.skip("PCP's pcp-dstat and its plugins are not installed (Debian package pcp)")
    (tmp_path / "layout.conf").write_text(layout_text(tmp_path, unchosen=("PCP_SYSCONF_DIR",)))
    env = {**os.environ, "PUREPCP_CONF": str(tmp_path / "layout.conf")}
    env.update(PCP_ARCHIVE=qa("pcp-dstat"))
    env.pop("PCP_SYSCONF_DIR", None)
    done = subprocess.run([sys.executable, str(dstat), "-c", "1", "2"], env=env, cwd="/",
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:2] == ["----total-usage----", "usr sys idl wai stl"]


def test_a_layout_file_it_cannot_read_is_one_line_and_the_end(tmp_path):
    """As libpcp ends a process whose pcp.conf it cannot read: one line naming the file
    and line, exit status 1, no traceback (before: LayoutError's traceback)."""
    import os
    import subprocess
    import sys

    bad = tmp_path / "layout.conf"
    bad.write_text("PCP_VAR_DIR=/x\nthis is not a setting\n")
    script = "from pcp import pmapi; print(pmapi.pmContext.pmGetConfig('PCP_PMDAS_DIR'))"
    env = {**os.environ, "PUREPCP_CONF": str(bad)}
    env.pop("PCP_PMDAS_DIR", None)
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == (f"-c: {bad}:2: expected NAME=value, not 'this is not a setting'\n"), (
        done.stderr
    )
