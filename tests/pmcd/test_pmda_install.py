"""pmda install / remove against a running pmcd in a private layout (seed 004, 2.8).

Each test gets its own layout (PUREPCP_CONF naming a pcp.conf whose directories are
in the test's tmp_path, PMCD_PORT=0) and runs our pmcd with no -c or -n, so pmcd,
the pmda command and the checks all find pmcd.conf, the namespace root and the pid
file where a user's installation keeps them.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from purepcp.pmapi.pmns import PMNS
from purepcp.pmcd.files import PACKAGED_CONF
from purepcp.pmcd.install import (
    available_agents,
    conf_agents,
    conf_names_for_spec,
    conf_with,
    namespace_with,
    namespace_without,
)
from tests.support.our_pmcd import ROOT, _stop, _wait_for_port, start_daemon, wait_reloaded
from tests.support.waiting import Notifications

LAYOUT_DIRS = {"PCP_SYSCONF_DIR": "etc", "PCP_VAR_DIR": "var", "PCP_LOG_DIR": "log",
               "PCP_RUN_DIR": "run"}  # fmt: skip


@dataclass
class Layout:
    """A private installation: its directories, environment and (once started) pmcd."""

    root: Path
    env: dict[str, str]
    pmcd: subprocess.Popen | None = None
    notifications: Notifications = field(default_factory=Notifications)

    @property
    def conf(self) -> Path:
        return self.root / "etc" / "pmcd" / "pmcd.conf"

    @property
    def pmns_root(self) -> Path:
        return self.root / "var" / "pmns" / "root"

    @property
    def socket(self) -> str:
        return str(self.root / "run" / "pmcd.socket")

    def pmda(self, *argv: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "purepcp.pmcd.pmda_tool", *argv],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    def pminfo(self, *argv: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "purepcp.tools.pminfo", "-h", f"unix:{self.socket}", *argv],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    def names(self) -> list[str]:
        """Every name the running pmcd serves."""
        done = self.pminfo()
        assert done.returncode == 0, done.stderr
        return done.stdout.split()

    def start(self) -> None:
        stderr = self.root / "pmcd.stderr"
        argv = [sys.executable, "-m", "purepcp.pmcd.main", "-f", "-i", "127.0.0.1"]
        self.pmcd = start_daemon(argv, self.env, stderr, notifications=self.notifications)
        log = self.root / "log" / "pmcd" / "pmcd.log"
        _wait_for_port(self.pmcd, stderr, self.notifications, log)

    def reload(self) -> None:
        """SIGHUP pmcd and wait until its reload has ended."""
        assert self.pmcd is not None
        self.notifications.drain()  # (reloads `pmda install` caused)
        self.pmcd.send_signal(signal.SIGHUP)
        log = self.root / "log" / "pmcd" / "pmcd.log"
        wait_reloaded(self.pmcd, self.notifications, lambda: log.read_text(errors="replace"))

    def files(self) -> dict[str, bytes]:
        """Every file of the configuration (etc/ and var/), for before-and-after comparisons."""
        return {
            str(p.relative_to(self.root)): p.read_bytes()
            for top in ("etc", "var")
            for p in sorted((self.root / top).rglob("*"))
            if p.is_file()
        }


def make_layout(tmp_path: Path) -> Layout:
    conf = tmp_path / "pcp.conf"
    conf.write_text(
        "".join(f"{name}={tmp_path / sub}\n" for name, sub in LAYOUT_DIRS.items()) + "PMCD_PORT=0\n"
    )
    env = dict(os.environ, PUREPCP_CONF=str(conf), PYTHONPATH=str(ROOT), PCP_DERIVED_CONFIG="")
    for name in (*LAYOUT_DIRS, "PMCD_PORT", "PMCD_SOCKET", "PCP_PMCDCONF_PATH", "PMNS_DEFAULT"):
        env.pop(name, None)
    (tmp_path / "etc" / "pmcd").mkdir(parents=True)
    (tmp_path / "var").mkdir()
    return Layout(tmp_path, env)


@pytest.fixture
def layout(tmp_path) -> Iterator[Layout]:
    """A layout whose pmcd.conf is the packaged one without trivial, with pmcd running."""
    made = make_layout(tmp_path)
    made.conf.write_text(conf_with(PACKAGED_CONF.read_text(), "trivial", None))
    made.start()
    try:
        yield made
    finally:
        if made.pmcd is not None:
            _stop(made.pmcd)


def test_install_then_remove_puts_everything_back(layout):
    conf_before, names_before = layout.conf.read_text(), layout.names()
    assert not layout.pmns_root.exists() and "trivial.time" not in names_before

    done = layout.pmda("install", "trivial")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "Updating the Performance Metrics Name Space (PMNS) ...",
        "Terminate PMDA if already installed ...",
        "Updating the PMCD control file, and notifying PMCD ...",
        "Check trivial metrics have appeared ... 1 metrics and 1 values",
    ]
    assert conf_agents(layout.conf.read_text())["trivial"] == 250
    module = available_agents()["trivial"].partition(":")[0]  # (as the package declares it)
    assert f"trivial\t250\tdso\tTrivial\t{module}" in layout.conf.read_text()
    assert PMNS.from_file(str(layout.pmns_root)).lookup("trivial.time") == (250 << 22) | 1
    assert "trivial.time" in layout.names()
    assert re.search(r"value \d+", layout.pminfo("-f", "trivial.time").stdout)

    done = layout.pmda("remove", "trivial")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "Culling the Performance Metrics Name Space ...",
        "trivial ... done",
        "Updating the PMCD control file, and notifying PMCD ...",
        "Check trivial metrics have gone away ... OK",
    ]
    assert layout.conf.read_text() == conf_before
    assert layout.names() == names_before
    served = [n for n in names_before if n not in ("event.flags", "event.missed")]  # derived
    assert PMNS.from_file(str(layout.pmns_root)).traverse("") == served


def test_every_shipped_agent_is_listed_and_proc_installs(tmp_path):
    """Before: proc had no purepcp.agents entry point, so `pmda install proc` said
    "unknown agent" and `pmda list` left it out."""
    made = make_layout(tmp_path)
    made.conf.write_text(conf_with(PACKAGED_CONF.read_text(), "proc", None))
    listed = made.pmda("list").stdout
    for name in ("trivial", "simple", "linux", "proc"):
        assert re.search(rf"^  {name} +purepcp\.agents\.{name}:\w+", listed, re.M), listed
    made.start()
    try:
        assert "proc.nprocs" not in made.names()
        done = made.pmda("install", "proc")
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("Updating the Performance Metrics Name Space (PMNS) ...")
        assert conf_agents(made.conf.read_text())["proc"] == 3
        assert re.search(r"value \d+", made.pminfo("-f", "proc.nprocs").stdout)
    finally:
        _stop(made.pmcd)


def test_install_and_remove_are_idempotent(layout):
    assert layout.pmda("install", "trivial").returncode == 0
    once = layout.files()
    again = layout.pmda("install", "trivial")
    assert again.returncode == 0 and again.stdout.endswith("1 metrics and 1 values\n")
    assert layout.files() == once

    assert layout.pmda("remove", "trivial").returncode == 0
    removed = layout.files()
    again = layout.pmda("remove", "trivial")
    assert again.returncode == 0
    assert "trivial ... not found in Name Space, this is OK" in again.stdout
    assert layout.files() == removed


def test_a_taken_domain_is_refused_and_nothing_changes(layout):
    before = layout.files()
    done = layout.pmda("install", "trivial", "--domain", "253")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == (
        f"pmda: domain 253 is already taken by the simple agent in {layout.conf}; "
        "choose another with --domain\n"
    )
    assert layout.files() == before
    assert "trivial.time" not in layout.names()


@pytest.mark.parametrize(
    ("option", "kind"), [("--daemon", "pipe"), ("--socket", "socket"), ("--inproc", "dso")]
)
def test_each_way_of_running_an_agent(layout, option, kind):
    done = layout.pmda("install", "trivial", option, "--domain", "251")
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("Check trivial metrics have appeared ... 1 metrics and 1 values\n")
    line = next(x for x in layout.conf.read_text().splitlines() if x.startswith("trivial"))
    assert line.split()[1:3] == ["251", kind]
    assert "trivial.time" in layout.names()
    assert layout.pmda("remove", "trivial").returncode == 0
    assert "trivial.time" not in layout.names()


def test_an_agent_that_cannot_start_is_rolled_back(layout, tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text(
        "from purepcp.pmda import U32, Agent, metric\n\n"
        "class Broken(Agent):\n"
        "    name, domain = 'trivial', 250\n\n"
        "    def start(self):\n"
        "        raise RuntimeError('cannot start today')\n\n"
        "    @metric('trivial.time', U32)\n"
        "    def now(self):\n"
        "        return 1\n"
    )
    before = layout.files()
    done = layout.pmda("install", f"{broken}:Broken", "--wait", "2")
    assert done.returncode == 1
    assert "Check trivial metrics have appeared ... 1 warnings, 1 metrics and 0 values" in (
        done.stdout
    )
    assert "the previous configuration is restored" in done.stderr
    assert layout.files() == before


def test_an_unwritable_configuration_leaves_the_old_one(tmp_path):
    made = make_layout(tmp_path)
    shutil.rmtree(tmp_path / "etc" / "pmcd")
    (tmp_path / "etc" / "pmcd").write_text("a file where a directory should be\n")
    done = made.pmda("install", "trivial", "--domain", "249", "--no-check")
    assert done.returncode == 1 and done.stderr.startswith("pmda: cannot write ")
    assert not made.pmns_root.exists()  # written first, then put back as it was (absent)


def test_without_a_running_pmcd_the_files_change_and_it_says_so(tmp_path):
    made = make_layout(tmp_path)
    done = made.pmda("remove", "simple")
    assert done.returncode == 0, done.stderr
    assert "pmcd is not running: the change takes effect when it starts" in done.stdout
    assert "simple" not in conf_agents(made.conf.read_text())
    pmns = PMNS.from_file(str(made.pmns_root))
    assert "simple.numfetch" not in pmns and "trivial.time" in pmns
    made.start()
    try:
        names = made.names()
        assert "trivial.time" in names and not any(n.startswith("simple.") for n in names)
    finally:
        _stop(made.pmcd)


def test_inproc_with_a_daemons_transport_is_refused(tmp_path):
    done = make_layout(tmp_path).pmda("install", "trivial", "--inproc", "--socket")
    assert (done.returncode, done.stderr) == (
        1,
        "pmda: --pipe and --socket are for --daemon, not --inproc\n",
    )


def test_a_pmcd_conf_with_an_error_is_left_alone(tmp_path):
    made = make_layout(tmp_path)
    made.conf.write_text("garbage here\n" + PACKAGED_CONF.read_text())
    before = made.files()
    for argv in (("install", "trivial", "--domain", "249"), ("remove", "simple")):
        done = made.pmda(*argv)
        assert (done.returncode, done.stdout) == (1, "")
        assert done.stderr == (
            f"pmda: {made.conf}:1: pmcd config[line 1]: Error: expected domain number for "
            '"garbage" agent; correct pmcd.conf first, nothing was changed\n'
        )
    assert made.files() == before


def test_unknown_agents_are_named_in_one_line(tmp_path):
    made = make_layout(tmp_path)
    done = made.pmda("install", "nosuch")
    assert done.returncode == 1
    assert done.stderr == (
        "pmda: no agent named 'nosuch' is installed "
        "(installed agents: linux, mmv, proc, simple, trivial)\n"
    )


@pytest.mark.parametrize("spec", ["pkg/mine.py", "mine:Mine"])
def test_an_agent_without_a_namespace_file_is_told_which_file_to_write(tmp_path, spec):
    """It used to be told of a file among purepcp's own agents' data, in site-packages
    (where Agent.source_file looks last), with Python's errno text: now the file to write
    beside the agent's module, in one line, and nothing changes."""
    made = make_layout(tmp_path)
    made.conf.write_text(PACKAGED_CONF.read_text())
    (_write_mine(tmp_path / "pkg").parent / "pmns").unlink()
    before = made.files()
    done = subprocess.run(
        [sys.executable, "-m", "purepcp.pmcd.pmda_tool", "install", spec, "--no-check"],
        env={**made.env, "PYTHONPATH": f"{tmp_path / 'pkg'}{os.pathsep}{ROOT}"},
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"pmda: agent mine has no namespace file: write its metric names and PMIDs to "
        f"{tmp_path / 'pkg' / 'pmns'} (PCP's pmns format, domain MINE)\n"
    )
    assert made.files() == before


def test_a_missing_chosen_namespace_root_is_named_with_what_to_do(tmp_path):
    """PMNS_DEFAULT chosen and missing: the file, the variable, and the way out."""
    made = make_layout(tmp_path)
    made.conf.write_text(PACKAGED_CONF.read_text())
    env = {**made.env, "PMNS_DEFAULT": str(tmp_path / "nowhere" / "root")}
    done = subprocess.run(
        [sys.executable, "-m", "purepcp.pmcd.pmda_tool", "install", "trivial", "--no-check"],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"pmda: no namespace file {tmp_path / 'nowhere' / 'root'} (PMNS_DEFAULT names it): "
        "create it, or unset PMNS_DEFAULT to have pmcd's namespace made from its agents' "
        "own files\n"
    )


def _write_mine(directory: Path) -> Path:
    """An agent package of one file (its namespace beside it), as a user would write one."""
    directory.mkdir()
    (directory / "pmns").write_text("mine {\n    count\tMINE:0:0\n}\n")
    code = directory / "mine.py"
    code.write_text(
        "from purepcp.pmda import U32, Agent, metric\n\n"
        "class Mine(Agent):\n"
        "    name, domain = 'mine', 300\n\n"
        "    @metric('mine.count', U32)\n"
        "    def count(self):\n"
        "        return 7\n"
    )
    return code


@pytest.mark.parametrize("option", ["--inproc", "--daemon", "--socket"])
def test_remove_by_the_spec_it_was_installed_with(layout, tmp_path, option):
    """`pmda remove path/mine.py:Mine` (or path/mine.py) removes what `pmda install` of
    the same spec added, from a relative path too (it used to say OK and remove nothing)."""
    before = layout.files()
    code = _write_mine(tmp_path / "pkg")
    for spec in (f"{code}:Mine", "pkg/mine.py"):
        installed = layout.pmda("install", f"{code}:Mine", option)
        assert installed.returncode == 0, installed.stdout + installed.stderr
        assert "mine.count" in layout.names()
        done = subprocess.run(
            [sys.executable, "-m", "purepcp.pmcd.pmda_tool", "remove", spec],
            env=layout.env, capture_output=True, text=True, timeout=120, cwd=tmp_path,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stdout.splitlines()[1:] == [
            "mine ... done",
            "Updating the PMCD control file, and notifying PMCD ...",
            "Check mine metrics have gone away ... OK",
        ]
        assert "mine" not in conf_agents(layout.conf.read_text())
        assert "mine.count" not in layout.names()
    files = layout.files()
    assert {k: v for k, v in files.items() if k != "var/pmns/root"} == before
    assert "mine" not in PMNS.from_file(str(layout.pmns_root)).traverse("")


@pytest.mark.parametrize("what", ["nosuch", "purepcp.agents.nosuch", "/nowhere/mine.py:Mine"])
def test_removing_an_unknown_agent_is_an_error_and_changes_nothing(tmp_path, what):
    made = make_layout(tmp_path)
    made.conf.write_text(PACKAGED_CONF.read_text())
    before = made.files()
    done = made.pmda("remove", what)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"pmda: no agent {what!r} in {made.conf} "
        "(agents there: pmcd, trivial, simple, linux, proc)\n"
    )
    assert made.files() == before


def test_conf_names_for_spec_reads_each_kind_of_line(tmp_path):
    code = _write_mine(tmp_path / "pkg")
    text = (
        f"mine\t300\tdso\tMine\t{code}\n"
        f"other\t301\tpipe\tbinary\t/py -m purepcp.pmda.run {code}:Other -d 301 -l /x.log\n"
        "simple\t253\tdso\tSimple\tmypkg.simple\n"
        "linux\t60\tpipe\tbinary\t/var/lib/pcp/pmdas/linux/pmdalinux -d 60\n"
    )
    assert conf_names_for_spec(text, f"{code}:Mine") == ["mine"]
    assert conf_names_for_spec(text, str(code)) == ["mine", "other"]
    assert conf_names_for_spec(text, f"{code}:Other") == ["other"]
    assert conf_names_for_spec(text, "mypkg.simple") == ["simple"]
    assert conf_names_for_spec(text, "mypkg.simple:Trivial") == []
    assert conf_names_for_spec(text, "/var/lib/pcp/pmdas/linux/pmdalinux") == []


def test_pmcd_reload_after_sighup_follows_the_layouts_files(layout):
    """pmcd reads the layout's pmcd.conf again on SIGHUP: an agent taken out of the file
    goes, and comes back when the file has it again."""
    text = layout.conf.read_text()
    layout.conf.write_text(conf_with(text, "simple", None))
    layout.reload()
    assert "simple.numfetch" not in layout.names()
    layout.conf.write_text(text)
    layout.reload()
    assert "simple.numfetch" in layout.names()


# -- the text and namespace edits, without a pmcd ----------------------------------------


def test_conf_with_keeps_comments_and_access_section():
    text = "# agents\nsimple\t253\tdso\tSimple\tagents.simple\n\n[access]\nallow * : all;\n"
    added = conf_with(text, "trivial", "trivial\t250\tdso\tTrivial\tagents.trivial")
    assert added.splitlines()[2] == "trivial\t250\tdso\tTrivial\tagents.trivial"
    assert added.endswith("[access]\nallow * : all;\n")
    assert conf_with(added, "trivial", None) == text
    assert conf_agents(added) == {"simple": 253, "trivial": 250}


def test_namespace_edits_remove_a_domain_and_refuse_clashes():
    pmns = PMNS.from_string("root {\n a\n b 2:0:1\n}\na {\n x 9:0:1\n y 9:0:2\n}\n")
    without, tops = namespace_without(pmns, 9)
    assert tops == ["a"] and without.traverse("") == ["b"]
    other = PMNS.from_string("root {\n b 7:0:1\n}\n")
    with pytest.raises(Exception, match="b: the name is already in the namespace"):
        namespace_with(without, other)


# -- under PCP's own pmcd ----------------------------------------------------------------


@pytest.mark.interop
def test_install_and_remove_under_pcps_pmcd(tmp_path):
    """pmda install writes PCP's pmcd.conf and namespace root for PCP's pmcd, finds it by
    its unix socket (it writes no pid file in the foreground) and checks through it."""
    from tests.support.reference_pmcd import reference_pmcd, require_reference

    require_reference("pminfo")
    root = tmp_path / "root"
    root.write_text("root {\n    pmcd\n}\npmcd {\n    version\t2:0:1\n}\n")
    conf = ["pmcd\t2\tdso\tpmcd_init\t/var/lib/pcp/pmdas/pmcd/pmda_pmcd.so"]
    with reference_pmcd(conf, str(root)) as ref:
        env = dict(
            os.environ,
            PYTHONPATH=str(ROOT),
            PCP_PMCDCONF_PATH=f"{ref.tmp}/pmcd.conf",
            PMNS_DEFAULT=str(root),
            PCP_RUN_DIR=f"{ref.tmp}/run",
            PCP_LOG_DIR=str(tmp_path / "log"),
        )

        def pmda(*argv: str) -> subprocess.CompletedProcess:
            return subprocess.run(
                [sys.executable, "-m", "purepcp.pmcd.pmda_tool", *argv],
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )

        for argv, appeared in (
            (("simple", "--daemon"), "5 metrics and 9 values"),
            (("trivial", "--socket"), "1 metrics and 1 values"),
        ):
            done = pmda("install", *argv)
            assert done.returncode == 0, done.stdout + done.stderr
            assert done.stdout.endswith(f"Check {argv[0]} metrics have appeared ... {appeared}\n")
        shown = ref.run("pminfo", "-f", "simple.color", "trivial.time").stdout
        assert 'inst [1 or "green"] value' in shown and "trivial.time" in shown
        for name in ("simple", "trivial"):
            done = pmda("remove", name)
            assert done.returncode == 0 and done.stdout.endswith("have gone away ... OK\n")
        assert Path(f"{ref.tmp}/pmcd.conf").read_text() == conf[0] + "\n"
        assert ref.run("pminfo").stdout.split() == ["pmcd.version", "event.flags", "event.missed"]


# -- from pmda new to a running agent ---------------------------------------------------


def test_pmda_new_then_pip_install_then_pmda_install(tmp_path):
    """The whole path a third-party agent takes: generated, pip-installed (found through
    the purepcp.agents entry point), installed into pmcd, fetched, stored, removed."""
    pytest.importorskip("wheel", reason="pip needs the wheel package to build offline")
    made = make_layout(tmp_path)
    new = made.pmda("new", "demo", "--domain", "400", "--dir", str(tmp_path / "pmda-demo"))
    assert new.returncode == 0, new.stderr
    assert new.stdout.splitlines()[-1] == (
        f"Next: cd {tmp_path / 'pmda-demo'} && pip install . && pmda install demo"
    )
    site = tmp_path / "site"
    pip = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps",
         "--no-index", "--target", str(site), str(tmp_path / "pmda-demo")],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert pip.returncode == 0, pip.stdout + pip.stderr
    made.env["PYTHONPATH"] = f"{ROOT}{os.pathsep}{site}"
    made.start()
    try:
        listed = made.pmda("list")
        assert "demo             pcp_pmda_demo:DemoAgent" in listed.stdout
        done = made.pmda("install", "demo")
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stdout.endswith("Check demo metrics have appeared ... 1 metrics and 1 values\n")
        assert "demo\t400\tdso\tDemoAgent\tpcp_pmda_demo" in made.conf.read_text()
        store = subprocess.run(
            [sys.executable, "-m", "purepcp.tools.pmstore", "-h", f"unix:{made.socket}",
             "demo.count", "0"],
            env=made.env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert store.returncode == 0 and "new value=0" in store.stdout, store.stderr
        assert "value 1" in made.pminfo("-f", "demo.count").stdout
        assert made.pminfo("-t", "demo.count").stdout.strip() == (
            "demo.count [Number of fetch requests the demo agent has answered]"
        )
        local = subprocess.run(  # a local context loads it from pmcd.conf too
            [sys.executable, "-m", "purepcp.tools.pminfo", "-L", "-f", "demo.count"],
            env=made.env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert "value 1" in local.stdout, local.stderr
        made.pmns_root.unlink()  # pmcd.conf alone: pmcd finds the package's own pmns file
        _stop(made.pmcd)
        made.start()
        assert "demo.count" in made.names() and "simple.numfetch" in made.names()
        done = made.pmda("remove", "demo")
        assert done.returncode == 0 and done.stdout.endswith("have gone away ... OK\n")
    finally:
        _stop(made.pmcd)


MMV_WRITER = """
from pcp import mmv, pmapi
import cmmv  # (after pcp, as PCP's scripts import it)
import cpmapi as c

values = mmv.MemoryMappedValues("demo")
values.add_metric(mmv.mmv_metric("hits", 1, cmmv.MMV_TYPE_U32, cmmv.MMV_SEM_COUNTER,
                                 pmapi.pmUnits(0, 0, 1, 0, 0, c.PM_COUNT_ONE), 0, "hits"))
values.start()
values.set(values.lookup_mapping("hits", None), 42)
print(values.started())
"""


def test_mmv_installs_and_serves_what_pcp_mmv_publishes(tmp_path):
    """`pmda install mmv` (before: "unknown agent"): its namespace is the dynamic root
    mmv 70:*:*, it makes $PCP_TMP_DIR/mmv as PCP's packaging does (1777), and a file a
    script publishes there through pcp.mmv is served; remove puts everything back."""
    layout = make_layout(tmp_path)
    layout.env.pop("PCP_TMP_DIR", None)  # (the layout's own: var/tmp)
    layout.conf.write_text(PACKAGED_CONF.read_text())
    conf_before = layout.conf.read_text()
    layout.start()
    try:
        done = layout.pmda("install", "mmv")
        assert done.returncode == 0, done.stderr
        assert done.stdout.endswith("Check mmv metrics have appeared ... 3 metrics and 3 values\n")
        assert "mmv\t70:*:*" in layout.pmns_root.read_text()
        folder = tmp_path / "var" / "tmp" / "mmv"
        assert folder.stat().st_mode & 0o7777 == 0o1777
        wrote = subprocess.run([sys.executable, "-c", MMV_WRITER], env=layout.env,
                               capture_output=True, text=True, timeout=60)  # fmt: skip
        assert wrote.stdout.strip() == "1", wrote.stderr
        assert (folder / "demo").exists()
        assert "value 42" in layout.pminfo("-f", "mmv.demo.hits").stdout
        assert layout.pmda("remove", "mmv").returncode == 0
        assert layout.conf.read_text() == conf_before
        assert not [name for name in layout.names() if name.startswith("mmv")]
    finally:
        _stop(layout.pmcd)
