"""The mmv agent (purepcp.agents.mmv): MMV files in a directory, exported as pmdammv does.

Component tests drive the agent in-process (AgentHarness) over files built by
purepcp.pmapi.mmv or written through pcp.mmv; interop tests run PCP's dbpmda with
the same commands against PCP's pmdammv and against ours, over files written by
PCP's Python binding and by ours, and compare the whole transcripts.
"""

from __future__ import annotations

import functools
import os
import re
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from purepcp.agents.mmv import MMV
from purepcp.pmapi import mmv
from purepcp.pmapi.errors import PM_ERR_NAME, PM_ERR_PERMISSION, PM_ERR_PMID, PM_ERR_TEXT, PMError
from purepcp.pmapi.ids import PM_INDOM_NULL, pmID_build, pmInDom_build
from purepcp.pmapi.pdu.records import FetchPDU
from purepcp.pmda.testing import AgentHarness

SYSTEM_PYTHON = "/usr/bin/python3"
DBPMDA = "/usr/bin/dbpmda"
PMDAMMV = "/var/lib/pcp/pmdas/mmv/pmdammv"


def _description(**kw) -> mmv.Description:
    indoms = (
        mmv.Indom(1, (mmv.Instance(0, "zero"), mmv.Instance(1, "hero")), "ind", "indom help"),
        mmv.Indom(2, (mmv.Instance(5, "bird"),)),
    )
    metrics = (
        mmv.Metric("counter", 1, mmv.MMV_TYPE_U32, mmv.MMV_SEM_COUNTER, 0x00100001, 0, "c", "cc"),
        mmv.Metric("per.inst", 2, mmv.MMV_TYPE_I64, mmv.MMV_SEM_INSTANT, 0, 1),
        mmv.Metric("text", 3, mmv.MMV_TYPE_STRING, mmv.MMV_SEM_INSTANT, 0, 2),
        mmv.Metric("time", 4, mmv.MMV_TYPE_ELAPSED, 0, 0, mmv.MMV_INDOM_NULL),
        mmv.Metric("real", 5, mmv.MMV_TYPE_DOUBLE, mmv.MMV_SEM_DISCRETE),
    )
    return mmv.Description(**{"metrics": metrics, "indoms": indoms, "cluster": 7, **kw})


def _write(directory: Path, name: str, desc: mmv.Description | None = None, **kw) -> mmv.Layout:
    layout = mmv.build(
        desc or _description(), gen=kw.pop("gen", 77), process=kw.pop("pid", 1), **kw
    )
    path = directory / name
    path.unlink(missing_ok=True)
    path.write_bytes(layout.data)
    return layout


def _poke(directory: Path, name: str, offset: int, fmt: str, value) -> None:
    with open(directory / name, "r+b") as fh:
        fh.seek(offset)
        fh.write(struct.pack(fmt, value))


@pytest.fixture
def statsdir(tmp_path):
    where = tmp_path / "mmv"
    where.mkdir()
    return where


@pytest.fixture
def agent(statsdir):
    agent = MMV(statsdir=statsdir)
    with AgentHarness(agent) as harness:
        yield harness


def _fresh(h: AgentHarness) -> AgentHarness:
    h.agent.reload_maybe()  # (as any request does first)
    return h


def test_exports_a_files_metrics(statsdir, agent):
    layout = _write(statsdir, "app")
    _poke(statsdir, "app", layout.values["counter", None], "=I", 41)
    _poke(statsdir, "app", layout.values["per.inst", "hero"], "=q", -5)
    _poke(statsdir, "app", layout.values["real", None], "=d", 2.5)
    h = _fresh(agent)
    assert h.names() == [
        "mmv.app.real",
        "mmv.app.time",
        "mmv.app.text",
        "mmv.app.per.inst",
        "mmv.app.counter",
        "mmv.control.files",
        "mmv.control.debug",
        "mmv.control.reload",
    ]
    counter = h.desc("mmv.app.counter")
    assert (counter.pmid, counter.type, counter.sem, counter.indom) == (
        pmID_build(70, 7, 1),
        1,
        1,
        PM_INDOM_NULL,
    )
    assert counter.units.text() == "count"
    assert h.desc("mmv.app.per.inst").indom == pmInDom_build(70, 7 << 11 | 1)
    elapsed = h.desc("mmv.app.time")
    assert (elapsed.type, elapsed.sem, elapsed.units.text()) == (2, 1, "microsec")
    assert h.fetch("mmv.app.counter") == 41
    assert h.fetch("mmv.app.per.inst") == {"zero": 0, "hero": -5}
    assert h.fetch("mmv.app.text") == {"bird": ""}
    assert h.fetch("mmv.app.real") == 2.5
    assert h.fetch("mmv.control.files") == 1
    assert (h.oneline("mmv.app.counter"), h.help("mmv.app.counter")) == ("c", "cc")
    with pytest.raises(PMError) as caught:
        h.oneline("mmv.app.real")
    assert caught.value.code == PM_ERR_TEXT
    assert h.oneline("mmv.control.reload") == "Control maps reloading"


def test_values_are_read_live(statsdir, agent, monkeypatch):
    from pcp import mmv as pcpmmv
    from pcp import pmapi

    monkeypatch.setenv("PCP_TMP_DIR", str(statsdir.parent))
    values = pcpmmv.MemoryMappedValues("live", cluster=9)
    values.add_metrics([pcpmmv.mmv_metric("hits", 1, pcpmmv.MMV_TYPE_U64, 0, pmapi.pmUnits())])
    values.start()
    try:
        hits = values.lookup_mapping("hits", None)
        h = _fresh(agent)
        assert h.fetch("mmv.live.hits") == 0
        values.add(hits, 10)
        assert h.fetch("mmv.live.hits") == 10
        assert h.desc("mmv.live.hits").sem == 1  # (semantics 0 is exported as a counter)
    finally:
        values.stop()


def test_files_coming_and_going(statsdir, agent):
    h = _fresh(agent)
    assert h.fetch("mmv.control.files") == 0
    _write(statsdir, "one")
    os.utime(statsdir, ns=(1, 1))  # (the directory's time changes, whatever the clock)
    reply = h.agent.handle(FetchPDU(0, (pmID_build(70, 0, 2),)))
    assert reply.result.timestamp.sec == 16  # PMCD_NAMES_CHANGE
    assert "mmv.one.counter" in h.names()
    (statsdir / "one").unlink()
    os.utime(statsdir, ns=(2, 2))
    _fresh(h)
    assert "mmv.one.counter" not in h.names()
    with pytest.raises(PMError) as caught:
        h.pmid("mmv.one.counter")
    assert caught.value.code == PM_ERR_NAME


def test_a_rewritten_file_is_loaded_again(statsdir, agent):
    _write(statsdir, "app")
    h = _fresh(agent)
    assert h.desc("mmv.app.counter").pmid == pmID_build(70, 7, 1)
    _write(statsdir, "app", _description(cluster=8), gen=78)
    os.utime(statsdir, ns=(5, 5))
    _poke(statsdir, "app", 8, "=Q", 78)  # (even were the directory unchanged, g1 is)
    assert _fresh(h).desc("mmv.app.counter").pmid == pmID_build(70, 8, 1)


def test_a_file_being_written_asks_for_a_reload(statsdir, agent):
    _write(statsdir, "app")
    _poke(statsdir, "app", mmv.G2_OFFSET, "=Q", 0)
    h = _fresh(agent)
    assert (h.fetch("mmv.control.files"), h.fetch("mmv.control.reload")) == (0, 1)
    _poke(statsdir, "app", mmv.G2_OFFSET, "=Q", 77)
    assert h.fetch("mmv.control.files") == 1
    assert h.fetch("mmv.control.reload") == 0


def test_process_flag(statsdir, agent):
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, check=True
    )
    _write(
        statsdir, "gone", _description(flags=mmv.MMV_FLAG_PROCESS, cluster=3), pid=int(dead.stdout)
    )
    _write(statsdir, "here", _description(flags=mmv.MMV_FLAG_PROCESS, cluster=4), pid=os.getpid())
    h = _fresh(agent)
    assert h.fetch("mmv.control.files") == 1
    assert "mmv.here.counter" in h.names()
    assert not any(n.startswith("mmv.gone.") for n in h.names())


def test_naming_and_clusters(statsdir, agent):
    _write(statsdir, "a", _description(cluster=0))
    _write(statsdir, "b", _description(cluster=0, flags=mmv.MMV_FLAG_NOPREFIX))
    _write(statsdir, "bad-name", _description(cluster=5))
    odd = (
        mmv.Metric("ok", 1, mmv.MMV_TYPE_U32),
        mmv.Metric("dup", 1, mmv.MMV_TYPE_U32),  # (item 1 again: left out)
        mmv.Metric("9lives", 2, mmv.MMV_TYPE_U32),
        mmv.Metric("huge", 1024, mmv.MMV_TYPE_U32),
        mmv.Metric("none", 3, mmv.MMV_TYPE_NOSUPPORT),
    )
    _write(statsdir, "odd", mmv.Description(odd, cluster=6))
    h = _fresh(agent)
    names = h.names()
    assert h.desc("mmv.a.counter").pmid == pmID_build(70, 1, 1)
    assert h.desc("mmv.counter").pmid == pmID_build(70, 2, 1)  # NOPREFIX, the next free cluster
    assert not any(n.startswith("mmv.bad-name") for n in names)
    assert [n for n in names if n.startswith("mmv.odd.")] == [
        "mmv.odd.none",  # (newest first, as pmdaTreeInsert adds them)
        "mmv.odd.9lives",  # (pmdammv checks the whole name: a digit may start a part)
        "mmv.odd.ok",
    ]
    with pytest.raises(PMError):
        h.fetch("mmv.odd.none")


def test_stores(statsdir, agent):
    _write(statsdir, "app")
    h = _fresh(agent)
    h.store("mmv.control.debug", 5)
    assert h.fetch("mmv.control.debug") == 5
    for name in ("mmv.control.files", "mmv.app.counter"):
        with pytest.raises(PMError) as caught:
            h.store(name, 1)
        assert caught.value.code == PM_ERR_PERMISSION
    h.store("mmv.control.reload", 1)
    assert h.fetch("mmv.control.reload") == 0  # (the request rescanned first)


def test_sentinel_values(statsdir, agent):
    layout = _write(statsdir, "s", _description(flags=mmv.MMV_FLAG_SENTINEL))
    _poke(statsdir, "s", layout.values["counter", None], "=q", -1)
    h = _fresh(agent)
    assert h.fetch("mmv.s.counter") is None
    assert h.fetch("mmv.s.text") == {}
    assert h.fetch("mmv.s.real") == 0.0


def test_unknown_pmid(statsdir, agent):
    h = _fresh(agent)
    reply = h.agent.handle(FetchPDU(0, (pmID_build(70, 7, 1),)))
    assert reply.result.vsets[0].numval == PM_ERR_PMID


def test_labels(statsdir, agent):
    from purepcp.pmapi.labels import PM_LABEL_INSTANCES, PM_LABEL_ITEM
    from purepcp.pmapi.pdu.records import LabelReqPDU

    labels = (
        mmv.Label(PM_LABEL_ITEM, 1, -1, '{"kind":"counter"}'),
        mmv.Label(PM_LABEL_INSTANCES, 1, 1, '{"hero":true}'),
    )
    _write(statsdir, "l", _description(labels=labels))
    h = _fresh(agent)
    pmid = h.pmid("mmv.l.counter")
    reply = h.agent.handle(LabelReqPDU(pmid, PM_LABEL_ITEM))
    assert [ls.json for ls in reply.sets] == [b'{"kind":"counter"}']
    indom = h.desc("mmv.l.per.inst").indom
    reply = h.agent.handle(LabelReqPDU(indom, PM_LABEL_INSTANCES))
    assert [(ls.inst, ls.json) for ls in reply.sets] == [(0, b""), (1, b'{"hero":true}')]


# -- interop: PCP's pmdammv and ours under PCP's dbpmda --------------------------------

COMMANDS = """\
children mmv
children mmv.pytest
desc mmv.pytest.counter
desc mmv.pytest.indom
desc mmv.pytest.interval
desc mmv.pytest.dbl
fetch mmv.pytest.counter mmv.pytest.indom mmv.pytest.string mmv.pytest.strings mmv.pytest.dbl
fetch mmv.pytest.big mmv.pytest.interval mmv.control.files mmv.control.reload
text mmv.pytest.counter
text mmv.pytest.string
text mmv.pytest.strings
text mmv.control.files
instance 70.86017
store mmv.control.reload "1"
fetch mmv.control.reload
store mmv.pytest.counter "5"
store mmv.control.files "5"
store mmv.control.debug "3"
fetch mmv.control.debug
label domain
"""

WRITER = r"""
import sys
from pcp import mmv, pmapi

W = [mmv.mmv_instance(0, "bird"), mmv.mmv_instance(1, "tree"), mmv.mmv_instance(7, "eggs")]
indoms = [mmv.mmv_indom(serial=1, shorttext="Heroes", helptext="long"), mmv.mmv_indom(serial=2)]
indoms[0].set_instances(W[:2])
indoms[1].set_instances(W)
metrics = [
    mmv.mmv_metric("counter", 1, 1, 1, pmapi.pmUnits(), 0, "Example", "Yep"),
    mmv.mmv_metric("indom", 3, 0, 4, pmapi.pmUnits(), indom=1),
    mmv.mmv_metric("interval", 4, 9, 1, pmapi.pmUnits(), indom=2),
    mmv.mmv_metric("string", 5, 6, 3, pmapi.pmUnits(), shorttext=None),
    mmv.mmv_metric("strings", 6, 6, 3, pmapi.pmUnits(), indom=1, shorttext="s", helptext="t"),
    mmv.mmv_metric("dbl", 7, 5, 3, pmapi.pmUnits()),
    mmv.mmv_metric("big", 8, 3, 3, pmapi.pmUnits()),
]
metrics[5].semantics = 3
metrics[5].dimension = pmapi.pmUnits(1, 0, 0, 2, 0, 0)
values = mmv.MemoryMappedValues("pytest")
values.add_indoms(indoms)
values.add_metrics(metrics)
values.start()
c = values.lookup_mapping("counter", None)
values.set(c, 41); values.inc(c); values.add(c, 3)
values.lookup_set("indom", "tree", -7); values.lookup_inc("indom", "bird")
values.lookup_set_string("string", None, "hello")
values.set_string(values.lookup_mapping("strings", "bird"), "z")
values.lookup_set("dbl", None, 2.5)
values.lookup_set("big", None, 2.0 ** 40)
values.lookup_set("interval", "eggs", 1000)
"""


@functools.cache
def _missing() -> str | None:
    for tool in (SYSTEM_PYTHON, DBPMDA, PMDAMMV):
        if not os.access(tool, os.X_OK):
            return f"{tool} is not installed (Debian packages pcp and python3-pcp)"
    probe = subprocess.run(
        [SYSTEM_PYTHON, "-c", "import pcp.mmv"], cwd="/", capture_output=True, check=False
    )
    if probe.returncode:
        return "PCP's Python bindings are not installed (Debian package python3-pcp)"
    return None


def _written_by(python: str, tmp: Path) -> Path:
    """A directory holding the WRITER's file, written by PYTHON's pcp.mmv."""
    (tmp / "mmv").mkdir(parents=True)
    script = tmp.parent / "writer.py"
    script.write_text(WRITER)
    env = {**os.environ, "PCP_TMP_DIR": str(tmp)}
    subprocess.run(
        [python, str(script)], cwd=tmp.parent, env=env, check=True, timeout=60, capture_output=True
    )
    return tmp


def _dbpmda(agent_command: str, tmpdir: Path) -> list[str]:
    """dbpmda's transcript of COMMANDS against the agent, less what always differs."""
    script = f"open pipe {agent_command} -d 70\n{COMMANDS}"
    env = {**os.environ, "PCP_TMP_DIR": str(tmpdir)}
    done = subprocess.run(
        [DBPMDA, "-e"],
        input=script,
        cwd=tmpdir,  # (where pmdammv leaves its mmv.log)
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    lines = (done.stdout + done.stderr).splitlines()
    lines = [re.sub(r"dump from 0x[0-9a-f]+", "dump from ADDR", line) for line in lines]
    return [line for line in lines if not line.startswith(("open pipe", "Start "))]


@pytest.mark.interop
@pytest.mark.parametrize("writer", ["pcp", "purepcp"])
def test_same_answers_as_pmdammv(writer):
    reason = _missing()
    if reason:
        pytest.skip(reason)
    python = SYSTEM_PYTHON if writer == "pcp" else sys.executable
    # pmdammv runs as user pcp: its directory must be one that user can read
    with tempfile.TemporaryDirectory(prefix="mmv-interop-") as shared:
        os.chmod(shared, 0o755)
        tmpdir = _written_by(python, Path(shared) / "tmp")
        theirs = _dbpmda(PMDAMMV, tmpdir)
        ours = _dbpmda(f"{sys.executable} -m purepcp.agents.mmv", tmpdir)
    assert "70.42.1: 45 -> 5" in "\n".join(theirs)  # (the transcript has the answers)
    assert ours == theirs


@pytest.mark.interop
def test_under_pmcd_as_pmdammv_under_pcps_pmcd(monkeypatch):
    """PCP's pminfo against our pmcd running our agent, and against PCP's pmcd running
    pmdammv, over the same file: the same names, descriptors, help and values."""
    from tests.support.our_pmcd import our_pmcd
    from tests.support.pcp_tools import tool_env
    from tests.support.reference_pmcd import reference_pmcd, require_reference

    reason = _missing()
    if reason:
        pytest.skip(reason)
    require_reference("pminfo")
    with tempfile.TemporaryDirectory(prefix="mmv-pmcd-") as shared:
        os.chmod(shared, 0o755)
        tmpdir = _written_by(sys.executable, Path(shared) / "tmp")
        monkeypatch.setenv("PCP_TMP_DIR", str(tmpdir))
        root = Path(shared) / "root"
        root.write_text("root {\n    mmv\t70:*:*\n}\n")
        ours_dir = Path(shared) / "ours"
        ours_dir.mkdir()
        ours_conf = f"mmv\t70\tpipe\tbinary\t{sys.executable} -m purepcp.agents.mmv -d 70\n"
        theirs_conf = [f"mmv\t70\tpipe\tbinary\t{PMDAMMV} -d 70"]
        with (
            our_pmcd(ours_conf, ours_dir, "-n", str(root)) as mine,
            reference_pmcd(theirs_conf, str(root)) as theirs,
        ):
            answers = []
            for host, env in ((mine.host, mine.env), (theirs.host, theirs.env)):
                done = subprocess.run(
                    ["pminfo", "-h", host, "-dfmtT", "mmv"],
                    env=tool_env(env),
                    capture_output=True,
                    text=True,
                    timeout=60,
                    check=False,
                )
                answers.append((done.returncode, done.stdout, done.stderr))
    assert "mmv.pytest.counter" in answers[1][1]
    assert answers[0] == answers[1]
