"""Our proc agent against PCP 6.0.3's pmdaproc, each the pipe agent of a PCP pmcd: the same
names, descriptors, help presence, instances, labels, values and refusals.

Values are compared for processes the test starts itself (sleeping, so nothing about
them moves), one as root and one as nobody, read through each pmcd's unix socket as
root and as nobody, and over TCP (no credentials).  The few metrics where we
deliberately differ from pmdaproc 6.0.3 are listed in DIFFERENT, each with why
(docs/proc-agent-notes.md has the longer story).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack

import pytest

from tests.support.reference_pmcd import RunningPMCD, reference_pmcd, require_reference
from tests.support.waiting import DEADLINE, wait_until

PMDAPROC = "/var/lib/pcp/pmdas/proc/pmdaproc"
THEIRS = f"proc\t3\tpipe\tbinary\t{PMDAPROC} -d 3"
OURS = f"proc\t3\tpipe\tbinary\t{sys.executable} -m purepcp.agents.proc -d 3"

#: Metrics whose values we deliberately give differently from pmdaproc 6.0.3.
DIFFERENT = {
    # pmdaproc 6.0.3 answers the real uid for proc.id.gid (a slip in its fetch code),
    # and so the uid's name for gid_nm; we answer the real gid
    "proc.id.gid": "pmdaproc answers the uid",
    "proc.id.gid_nm": "pmdaproc answers the uid's name",
    # pmdaproc 6.0.3 reads /proc/PID/stat's fields after processor one place late (it
    # reads a second "priority" there): its priority is the rt_priority field, its
    # rt_priority the policy, its policy the block I/O delay, ..., its cguest_time the
    # start_data address; we read each field from its own place
    **{f"proc.psinfo.{leaf}": "pmdaproc reads the next field of stat" for leaf in (
        "priority", "rt_priority", "policy", "policy_s", "delayacct_blkio_time",
        "guest_time", "cguest_time")},
    # pmdaproc 6.0.3 answers an index into its own string table for the Ngid line
    "proc.psinfo.ngid": "pmdaproc answers a string-table index",
    # pmdaproc 6.0.3 does not refresh its process list for this cluster alone, so a
    # fetch of proc.smaps.* gives nothing (or the last refresh's values); we read it
    **{f"proc.smaps.{leaf}": "pmdaproc gives no values" for leaf in ("rss", "pss", "pss_anon",
        "pss_file", "pss_shmem", "shared_clean", "shared_dirty", "private_clean",
        "private_dirty", "referenced", "anonymous", "lazyfree", "anonhugepages",
        "shmempmdmapped", "filepmdmapped", "shared_hugetlb", "private_hugetlb", "swap",
        "swappss", "locked")},
}  # fmt: skip
#: Metrics whose values move between two reads of a sleeping process, or describe the
#: whole machine at a moment (compared for presence only).
MOVING = {
    "proc.nprocs",
    "proc.runq.runnable",
    "proc.runq.sleeping",
    "proc.runq.blocked",
    "proc.runq.swapped",
    "proc.runq.defunct",
    "proc.runq.unknown",
    "proc.runq.stopped",
    "proc.runq.kernel",
    "proc.psinfo.processor",  # the CPU it last ran on
    "proc.psinfo.wchan_s",  # hrtimer_nanosleep or do_nanosleep, as the kernel finds it
    "proc.schedstat.run_delay",
    "proc.schedstat.cpu_time",
    "proc.schedstat.pcount",
    "proc.psinfo.vctxsw",
    "proc.psinfo.nvctxsw",
}


@pytest.fixture(scope="module")
def pmcds() -> Iterator[dict[str, RunningPMCD]]:
    """{"ours": PCP's pmcd with our agent, "theirs": PCP's pmcd with pmdaproc}."""
    require_reference("pminfo")
    if not os.path.exists(PMDAPROC):
        pytest.skip(f"reference PCP 6 is not installed: no {PMDAPROC}")
    with ExitStack() as stack:  # (PCP's whole namespace: pminfo proc asks only for proc)
        both = {
            "ours": stack.enter_context(reference_pmcd([OURS])),
            "theirs": stack.enter_context(reference_pmcd([THEIRS])),
        }
        for pmcd in both.values():  # let nobody reach the unix socket
            os.chmod(pmcd.tmp, 0o755)
            os.chmod(os.path.join(pmcd.tmp, "run"), 0o755)
        yield both


@pytest.fixture(scope="module")
def sleepers() -> Iterator[dict[str, int]]:
    """Two sleeping processes of the test's own: {"root": pid, "nobody": pid}."""
    path = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
    if shutil.which("runuser", path=path["PATH"]) is None:
        pytest.skip("no runuser here (util-linux) to start a process as nobody")
    started: list[subprocess.Popen] = []
    pids: dict[str, int] = {}
    try:
        started.append(subprocess.Popen(["sleep", "3600.5"], env={"PROC_TEST": "root", **path}))
        pids["root"] = started[-1].pid
        started.append(
            subprocess.Popen(
                ["runuser", "-u", "nobody", "--", "sleep", "3600.25"],
                env={"PROC_TEST": "nobody", **path},
            )
        )
        deadline = time.monotonic() + DEADLINE  # (or until runuser gives up)
        while "nobody" not in pids and started[-1].poll() is None:
            assert time.monotonic() < deadline, "runuser never started its sleep"
            for child in _children(started[-1].pid):  # runuser's sleep
                pids["nobody"] = child
            time.sleep(0.05)
        if "nobody" not in pids:
            pytest.skip("runuser could not start a process as nobody here")
        wait_until("both asleep in nanosleep", lambda: all(map(_asleep, pids.values())))
        yield pids
    finally:
        if "nobody" in pids:  # (killing runuser leaves its child running)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pids["nobody"], signal.SIGKILL)
        for proc in started:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def long_cmdline() -> Iterator[int]:
    """A shell whose command line is a 5 KB script with blank lines past pmdaproc's 4 KB
    cut (CI's own runner looks like this): its psargs must be cut where pmdaproc's is."""
    script = "#" + "x" * 5000 + "\n\n\nsleep 3600.75; :"
    shell = subprocess.Popen(["sh", "-c", script])
    try:
        # (the kernel shows the new command line a moment after the exec Popen waited for)
        wait_until("the shell to show its command line", lambda: _cmdline(shell.pid), shell)
        yield shell.pid
    finally:
        for child in _children(shell.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGKILL)
        shell.kill()
        shell.wait()


def _cmdline(pid: int) -> bytes:
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        return f.read()


def _asleep(pid: int) -> bool:
    """Whether process PID runs `sleep` (its exec done) and is asleep, in nanosleep where
    the kernel says where (its wchan)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        with open(f"/proc/{pid}/wchan") as f:
            wchan = f.read()
    except OSError:
        return False
    state = stat.rsplit(b")", 1)[1].split()[0]
    where_known = wchan not in ("", "0")
    return b"(sleep)" in stat and state == b"S" and ("nanosleep" in wchan or not where_known)


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry))
    return found


def _socket(pmcd: RunningPMCD) -> str:
    return "unix:" + os.path.join(pmcd.tmp, "run", "pmcd.socket")


def _pminfo(pmcd: RunningPMCD, *args: str, host: str | None = None, user: str | None = None):
    argv = ["pminfo", "-h", host or _socket(pmcd), *args]
    if user is not None:
        argv = [
            shutil.which("runuser", path="/usr/sbin:/sbin") or "runuser",
            "-u",
            user,
            "--",
            *argv,
        ]
    return subprocess.run(argv, env=pmcd.env, capture_output=True, text=True, timeout=120)


_METRIC_LINE = re.compile(r"(?:hot)?proc\.[\w.]+")
_VALUE_LINE = re.compile(r'    inst \[\d+ or "(.*)"\] value (.*)')
#: an instance pminfo could not name: its process ended between the fetch and the name
#: lookup (other tests' processes come and go); nothing to compare
_UNNAMED_LINE = re.compile(r"    inst \[\d+\] value .*")


def _values(text: str) -> dict[str, dict[str, str] | str]:
    """`pminfo -f` output as {metric: {instance name: value} or the message it printed}.

    A string value may run over several lines (a command line with newlines, blank
    lines too): only a metric name after a blank line starts a metric, and a value's
    continuation lines are left out (the values compared are one-line ones)."""
    out: dict[str, dict[str, str] | str] = {}
    values: dict[str, str] = {}
    blank = True
    for line in text.splitlines():
        if blank and _METRIC_LINE.fullmatch(line):
            values = {}
            out[line] = values
        elif found := _VALUE_LINE.fullmatch(line):
            values[found.group(1)] = found.group(2)
        elif _UNNAMED_LINE.fullmatch(line):
            pass
        elif line.startswith("    value "):
            values[""] = line[10:]
        elif line and not values and out:
            out[next(reversed(out))] = line.strip()  # "Error: ...", "No value(s) available!"
        blank = not line
    return out


def _instance(pid: int) -> str:
    """Our instance name prefix for PID (the full name adds the command's first word)."""
    return f"{pid:06d} "


def _of(values: dict[str, str], pid: int) -> str | None:
    for name, value in values.items():
        if name.startswith(_instance(pid)):
            return value
    return None


@pytest.mark.interop
def test_the_same_names_and_descriptors(pmcds) -> None:
    ours = _pminfo(pmcds["ours"], "-m", "-d", "proc", "hotproc").stdout
    theirs = _pminfo(pmcds["theirs"], "-m", "-d", "proc", "hotproc").stdout
    assert ours.count("PMID:") == 153 + 159
    assert sorted(ours.split("\n\n")) == sorted(theirs.split("\n\n"))


@pytest.mark.interop
def test_help_for_every_metric_in_our_own_words(pmcds) -> None:
    ours = _pminfo(pmcds["ours"], "-t", "proc").stdout.splitlines()
    theirs = set(_pminfo(pmcds["theirs"], "-t", "proc").stdout.splitlines())
    helped = [line for line in ours if line.startswith("proc.") and " [" in line]
    assert len(helped) == 153
    assert not theirs & set(helped), "a one-line help text equal to pmdaproc's"


@pytest.mark.interop
def test_cgroup_and_acct_the_same_names_descriptors_and_controllers(pmcds) -> None:
    """cgroup.* and acct.*: pmdaproc's names and descriptors, help in our own words for
    each, and this machine's controllers and cgroup filesystems as pmdaproc lists them."""
    ours = _pminfo(pmcds["ours"], "-m", "-d", "cgroup", "acct").stdout
    theirs = _pminfo(pmcds["theirs"], "-m", "-d", "cgroup", "acct").stdout
    assert ours.count("PMID:") == 204 + 29
    assert sorted(ours.split("\n\n")) == sorted(theirs.split("\n\n"))
    helped = _pminfo(pmcds["ours"], "-t", "cgroup", "acct").stdout.splitlines()
    assert len([line for line in helped if " [" in line]) == 204 + 29
    assert not set(helped) & set(
        _pminfo(pmcds["theirs"], "-t", "cgroup", "acct").stdout.splitlines()
    )
    wanted = ("cgroup.subsys", "cgroup.mounts", "acct.control")
    values = {side: _pminfo(pmcd, "-f", *wanted).stdout for side, pmcd in pmcds.items()}
    assert values["ours"] == values["theirs"]


@pytest.mark.interop
def test_the_same_instances_and_labels(pmcds, sleepers) -> None:
    for who, pid in sleepers.items():
        seen = {}
        for side, pmcd in pmcds.items():
            probe = subprocess.run(
                ["pmprobe", "-h", _socket(pmcd), "-I", "proc.psinfo.pid"],
                env=pmcd.env,
                capture_output=True,
                text=True,
            ).stdout
            names = re.findall(r'"([^"]*)"', probe)
            seen[side] = [n for n in names if n.startswith(_instance(pid))]
            labels = _pminfo(pmcd, "-l", "proc.psinfo.pid").stdout
            assert re.search(f'"pid":{pid}[,}}]', labels), f"{side}: no pid label for {who}"
        assert seen["ours"] == seen["theirs"] == [f"{pid:06d} sleep"], who
    assert _instance(1) == "000001 "


@pytest.mark.interop
def test_the_same_values_for_processes_of_root_and_nobody(pmcds, sleepers, long_cmdline) -> None:
    got = {side: _values(_pminfo(pmcd, "-f", "proc").stdout) for side, pmcd in pmcds.items()}
    compared = 0
    for name, theirs in got["theirs"].items():
        ours = got["ours"].get(name)
        if name in DIFFERENT:
            continue
        if _vanished(theirs) or _vanished(ours):
            continue  # (a process ended between pminfo's fetch and its instance lookup)
        if isinstance(theirs, str) or isinstance(ours, str):
            assert ours == theirs, name
            continue
        assert isinstance(ours, dict), name
        if "" in theirs:  # a metric without instances
            assert "" in ours, name
            if name not in MOVING:
                assert ours[""] == theirs[""], name
            continue
        for who, pid in sleepers.items():
            mine, pcp = _of(ours, pid), _of(theirs, pid)
            assert (mine is None) == (pcp is None), f"{name} of {who}'s process: {mine} vs {pcp}"
            if name not in MOVING:
                assert mine == pcp, f"{name} of {who}'s process"
            compared += 1
    assert compared > 200
    psargs = {side: _of(got[side]["proc.psinfo.psargs"], long_cmdline) for side in got}
    assert psargs["ours"] == psargs["theirs"]
    assert psargs["ours"] is not None and psargs["ours"].startswith('"sh -c #xxx')


def _vanished(shown: object) -> bool:
    """Whether pminfo said, instead of values, that an instance it fetched had gone by
    the time it asked for its name (pmNameIndom's error): a process that ended then."""
    return isinstance(shown, str) and shown.startswith("pmNameIndom: ")


@pytest.mark.interop
def test_nobody_sees_what_the_kernel_lets_nobody_read(pmcds, sleepers) -> None:
    """As nobody (unix socket): every process listed, and /proc/PID/io, fd and environ
    of root's processes refused by the kernel as pmdaproc's reads are."""
    wanted = ("proc.psinfo.psargs", "proc.io.read_bytes", "proc.fd.count", "proc.psinfo.environ")
    got = {
        side: _values(_pminfo(pmcd, "-f", *wanted, user="nobody").stdout)
        for side, pmcd in pmcds.items()
    }
    for side, values in got.items():
        psargs, io, fds, environ = (values[name] for name in wanted)
        assert _of(psargs, sleepers["root"]) == '"sleep 3600.5"', side
        assert _of(psargs, sleepers["nobody"]) == '"sleep 3600.25"', side
        assert _of(io, sleepers["root"]) is None and _of(io, sleepers["nobody"]) is not None, side
        assert _of(fds, sleepers["root"]) is None and _of(fds, sleepers["nobody"]) == "3", side
        assert _of(environ, sleepers["root"]) == '""', side
        assert "PROC_TEST=nobody" in (_of(environ, sleepers["nobody"]) or ""), side


@pytest.mark.interop
def test_over_tcp_the_same_refusals(pmcds) -> None:
    out = {}
    for side, pmcd in pmcds.items():
        text = _pminfo(pmcd, "-f", "proc", host=pmcd.host).stdout
        out[side] = re.sub(r"value -?\d+", "value N", text)
    assert out["ours"].count("No permission to perform requested operation") == 141
    assert out["ours"] == out["theirs"]
    for side, pmcd in pmcds.items():
        probe = subprocess.run(
            ["pmprobe", "-h", pmcd.host, "-I", "proc.psinfo.pid"],
            env=pmcd.env,
            capture_output=True,
            text=True,
        )
        assert "No permission" in probe.stdout + probe.stderr, side


def _store(pmcd: RunningPMCD, name: str, value: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["pmstore", "-h", _socket(pmcd), name, value],
        env=pmcd.env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.interop
def test_hotproc_selects_the_same_processes(pmcds, sleepers) -> None:
    """The same predicate stored in both: the same echo, the same refusal of a bad one,
    and (after a pass of each timer) the test's sleeping processes hot in both."""
    config = 'fname == "sleep" && psargs ~ /3600\\.[25]/'
    for side, pmcd in pmcds.items():
        assert _store(pmcd, "hotproc.control.refresh", "1").returncode == 0, side
        assert _store(pmcd, "hotproc.control.config", config).returncode == 0, side
        bad = _store(pmcd, "hotproc.control.config", "uid >")
        assert "Bad input to pmstore" in bad.stdout + bad.stderr, side
    hot = {}
    for side, pmcd in pmcds.items():
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:  # until a timer pass has run
            found = _values(_pminfo(pmcd, "-f", "hotproc.psinfo.pid").stdout)
            names = found.get("hotproc.psinfo.pid")
            if isinstance(names, dict) and names:
                break
            time.sleep(0.2)
        hot[side] = _values(
            _pminfo(pmcd, "-f", "hotproc.psinfo.psargs", "hotproc.control.config").stdout
        )
        _store(pmcd, "hotproc.control.config", "")
    assert hot["ours"]["hotproc.control.config"] == hot["theirs"]["hotproc.control.config"]
    for side, values in hot.items():
        psargs = values["hotproc.psinfo.psargs"]
        assert isinstance(psargs, dict), f"{side}: {psargs}"
        assert sorted(psargs.values()) == ['"sleep 3600.25"', '"sleep 3600.5"'], side
