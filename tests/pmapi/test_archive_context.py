"""Archive contexts: the PMAPI over an archive, and pminfo/pmprobe/pmval -U beside PCP's."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from purepcp.pmapi.archive import Archive, ArchiveWriter
from purepcp.pmapi.archive.context import PM_MODE_BACK, PM_MODE_FORW, ArchiveContext
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.errors import PMError
from purepcp.pmapi.labels import LabelSet
from purepcp.pmapi.types import PMSem, PMType
from purepcp.pmapi.values import Result, Timestamp, ValueSet
from tests.support.reference_pmcd import require_reference

T0 = Timestamp(1_700_000_000, 0)
COUNT = 0x0F000800
COLOUR = 0x0F000801
INDOM = 0x0F000002


def _at(sec: float) -> Timestamp:
    return Timestamp(T0.sec + int(sec), int(sec % 1 * 1e9))


@pytest.fixture
def archive(tmp_path) -> str:
    """Six records a second apart; a mark before the fifth; red/green then green/blue."""
    base = str(tmp_path / "a")
    from purepcp.pmapi.archive import LabelRecord

    with ArchiveWriter(base, hostname="box", timezone="UTC", start=T0) as w:
        w.put_desc(Desc(COUNT, PMType.PM_TYPE_U64, sem=PMSem.PM_SEM_COUNTER), ["s.count"])
        w.put_desc(Desc(COLOUR, PMType.PM_TYPE_32, INDOM, PMSem.PM_SEM_INSTANT), ["s.colour"])
        w.put_text(5, COUNT, "a counter")
        w.put_text(6, COUNT, "")  # empty help: the one-line text stands in
        w.put_labels(LabelRecord(_at(1), 1, 0xFFFFFFFF, (LabelSet.from_dict({"site": "x"}),)))
        for i in range(6):
            insts = [0, 1] if i < 3 else [1, 2]
            w.put_indom(_at(i), INDOM, insts, [["red", "green", "blue"][n] for n in insts])
            if i == 4:
                w.put_mark(_at(3.5))
            w.put_result(
                Result(
                    _at(i),
                    (
                        ValueSet.of_atoms(COUNT, PMType.PM_TYPE_U64, [(0xFFFFFFFF, 10 * i)]),
                        ValueSet.of_atoms(COLOUR, PMType.PM_TYPE_32, [(n, i + n) for n in insts]),
                    )
                    if i != 2
                    else (ValueSet.of_atoms(COUNT, PMType.PM_TYPE_U64, [(0xFFFFFFFF, 20)]),),
                )
            )
    return base


def test_metadata_comes_from_the_archive(archive):
    with ArchiveContext(archive) as ctx:
        assert ctx.kind == "archive" and ctx.hostname == "box"
        # newest first, as libpcp; then the derived metrics PCP always has
        assert ctx.traverse("") == ["s.colour", "s.count", "event.flags", "event.missed"]
        assert ctx.lookup_name("s.count") == COUNT
        assert ctx.lookup_desc(COLOUR).indom == INDOM
        assert ctx.text(COUNT) == "a counter" and ctx.text(COUNT, help=True) == "a counter"
        with pytest.raises(PMError, match="not defined in the PCP archive"):
            ctx.lookup_desc(0x0F000999)
        # at the start, the first instance domain; the union over the archive, newest first
        assert ctx.instances(INDOM) == [(0, "red"), (1, "green")]
        assert ctx.instances_archive(INDOM) == [(1, "green"), (2, "blue"), (0, "red")]
        assert ctx.instance_id_archive(INDOM, "blue") == 2
        assert ctx.labels(0, 1) == ()  # the label record starts a second in
        ctx.set_mode(PM_MODE_FORW, _at(4))
        assert ctx.instances(INDOM) == [(1, "green"), (2, "blue")]
        assert ctx.labels(0, 1)[0].to_dict() == {"site": "x"}


def test_a_namespace_given_answers_whole_as_libpcp(archive):
    """QA 403: -n's namespace answers for an archive as it is (it was cut to the archive's
    metrics): a name with no metric in the archive is found, its descriptor is not."""
    from purepcp.pmapi.pmns import PMNS

    pmns = PMNS()
    pmns.add("s.count", COUNT)
    pmns.add("hinv.nrouter", 0x0F000999)
    with ArchiveContext(archive, pmns) as ctx:
        assert ctx.lookup_name("hinv.nrouter") == 0x0F000999
        with pytest.raises(PMError, match="Metric not defined in the PCP archive log"):
            ctx.lookup_desc(0x0F000999)


def test_uninterpolated_fetches_walk_the_records(archive):
    with ArchiveContext(archive) as ctx:
        assert ctx.fetch([COUNT]).timestamp == T0  # PM_MODE_FORW from the start, as libpcp opens
        ctx.set_mode(PM_MODE_FORW, T0)
        seen = []
        while True:
            try:
                got = ctx.fetch([COLOUR])
            except PMError as exc:
                assert exc.message == "End of PCP archive log"
                break
            seen.append((got.timestamp.sec - T0.sec, got.values(COLOUR)))
        # the record without s.colour is skipped, and so is the mark
        assert seen == [(0, {0: 0, 1: 1}), (1, {0: 1, 1: 2}), (3, {1: 4, 2: 5}), (4, {1: 5, 2: 6}),
                        (5, {1: 6, 2: 7})]  # fmt: skip
        ctx.set_mode(PM_MODE_BACK, _at(4.5))
        assert ctx.fetch([COUNT]).timestamp == _at(4)
        assert ctx.fetch([COUNT]).timestamp == _at(3)
        ctx.profile.delete(INDOM)
        ctx.profile.add(INDOM, [2])
        ctx.set_mode(PM_MODE_FORW, _at(3))
        assert ctx.fetch([COLOUR]).values(COLOUR) == {2: 5}


def test_fetch_archive_returns_marks_too(archive):
    with ArchiveContext(archive) as ctx:
        ctx.set_mode(PM_MODE_FORW, T0)
        stamps = []
        while True:
            try:
                r = ctx.fetch_archive()
            except PMError:
                break
            stamps.append((float(r.timestamp) - T0.sec, len(r.vsets)))
    assert stamps == [(0, 2), (1, 2), (2, 1), (3, 2), (3.5, 0), (4, 2), (5, 2)]


def test_a_replay_of_real_metrics_loads_neither_derived_metrics_nor_the_pdu_layer(archive):
    """pmval -a of a real metric: no derived definitions parsed (they cost a short replay
    0.15 s) and no PDU codec or connection modules imported (archive contexts use none)."""
    script = (
        "import sys\n"
        "from purepcp.tools import pmval\n"
        "status = pmval.main(['-a', sys.argv[1], '-t', '1', 's.colour'])\n"
        "from purepcp.pmapi.derived import registry\n"
        "loaded = [m for m in ('purepcp.pmapi.requests', 'purepcp.pmapi.connection',\n"
        "                      'purepcp.pmapi.pdu.codec')\n"
        "          if m in sys.modules]\n"
        "print(status, registry._default is None, loaded, file=sys.stderr)\n"
    )
    config = Path(archive).parent / "derived.conf"
    config.write_text("s.double = 2 * s.count\n")
    env = dict(os.environ, PCP_DERIVED_CONFIG=str(config), TZ="UTC")
    done = subprocess.run(
        [sys.executable, "-c", script, archive], capture_output=True, text=True, env=env
    )
    assert done.stderr.splitlines()[-1] == "0 True []", done.stderr
    assert "red" in done.stdout


def test_missing_archive_is_enoent(tmp_path):
    with pytest.raises(PMError, match="No such file or directory"):
        ArchiveContext(str(tmp_path / "none"))


def test_a_volume_that_is_not_there_is_not_the_archive(archive):
    """QA 958: "a.10" opened archive "a" (its volume 10 is not there); libpcp cuts a name
    to the base only when it is a file, so it is ENOENT.  A volume there opens it."""
    with pytest.raises(PMError, match="No such file or directory"):
        ArchiveContext(archive + ".10")
    with ArchiveContext(archive + ".0") as ctx:
        assert ctx.hostname == "box"


# -- beside PCP's tools ------------------------------------------------------------------------

CONFIG = """log mandatory on every 200 msec {
    kernel.all.load hinv.ncpu kernel.all.cpu.user kernel.percpu.cpu.user mem.util.free
    kernel.uname.release network.interface.in.bytes
}
"""


@pytest.fixture(scope="module")
def reference_archive(tmp_path_factory) -> str:
    require_reference("pmlogger", "pminfo", "pmval", "pmprobe")
    # every metric of CONFIG must be in the archive, so no comparison is of two errors
    tmp = tmp_path_factory.mktemp("ref")
    (tmp / "cfg").write_text(CONFIG)
    base = str(tmp / "ref")
    subprocess.run(
        ["pmlogger", "-o", "-c", "cfg", "-s", "6", "-l", "log", base],
        cwd=tmp,
        check=True,
        timeout=60,
        capture_output=True,
    )
    with Archive(base) as archive:
        assert len(archive.descs) == 7 + 5  # CONFIG's, and pmlogger's own pmcd.* metrics
    return base


def _env() -> dict[str, str]:
    return dict(os.environ, PCP_DERIVED_CONFIG="", TZ="UTC")


def _both(tool: str, *argv: str) -> tuple[tuple, tuple]:
    theirs = subprocess.run([tool, *argv], capture_output=True, text=True, env=_env(), timeout=60)
    ours = subprocess.run(
        [sys.executable, "-m", f"purepcp.tools.{tool}", *argv],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=60,
    )
    return (
        (theirs.returncode, theirs.stdout, theirs.stderr),
        (ours.returncode, ours.stdout, ours.stderr),
    )


def _without_anonymous(text: str) -> str:
    """PCP's pminfo also lists its anonymous derived metrics (event.*): ours has none yet."""
    blocks = text.split("\n\n")
    kept = [b for b in blocks if not b.lstrip("\n").startswith("event.")]
    return "\n".join(
        line
        for line in "\n\n".join(kept).splitlines(keepends=False)
        if not line.startswith("event.")
    )


@pytest.mark.interop
@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["-m"],
        ["-dtT", "kernel", "hinv", "mem", "network"],
        ["-f", "kernel.all.load", "kernel.uname.release", "network.interface.in.bytes"],
        ["-fd", "-O", "+0.5", "kernel.percpu.cpu.user"],
        ["-l", "kernel.all.load", "network.interface.in.bytes"],
        ["-I", "-t", "60.3"],
        ["nosuch.metric"],
    ],
)
def test_pminfo_on_an_archive(reference_archive, argv):
    theirs, ours = _both("pminfo", "-a", reference_archive, *argv)
    assert ours[0] == theirs[0] and ours[2] == theirs[2]
    assert _without_anonymous(ours[1]) == _without_anonymous(theirs[1])


@pytest.mark.interop
@pytest.mark.parametrize(
    "argv",
    [
        ["kernel", "hinv", "mem"],
        ["-v", "kernel.all.load", "kernel.uname.release"],
        ["-i", "network.interface.in.bytes"],
        ["-I", "-f", "kernel.percpu.cpu.user"],
        ["-O", "+0.7", "-v", "kernel.all.cpu.user"],
    ],
)
def test_pmprobe_on_an_archive(reference_archive, argv):
    theirs, ours = _both("pmprobe", "-a", reference_archive, *argv)
    assert ours == theirs


@pytest.mark.interop
@pytest.mark.parametrize(
    "argv",
    [
        ["kernel.all.load"],
        ["hinv.ncpu"],
        ["-i", "1 minute,15 minute", "kernel.all.load"],
        ["kernel.all.cpu.user"],  # a counter: rates between records
        ["-r", "kernel.percpu.cpu.user"],
        ["network.interface.in.bytes"],
        ["kernel.uname.release"],
        ["-S", "+0.3", "-T", "+0.7", "mem.util.free"],
        ["-Z", "UTC-10", "-f", "3", "kernel.all.load"],
        ["-z", "hinv.ncpu"],
        ["-s", "2", "kernel.all.load"],
        ["no.such.metric"],
    ],
)
def test_pmval_uninterpolated(reference_archive, argv):
    theirs, ours = _both("pmval", "-U", reference_archive, *argv)
    assert ours == theirs


@pytest.mark.interop
def test_a_truncated_archive_replays_up_to_the_damage(reference_archive, tmp_path):
    for suffix in (".meta", ".0"):
        data = Path(reference_archive + suffix).read_bytes()
        Path(tmp_path / ("cut" + suffix)).write_bytes(data[:-7] if suffix == ".0" else data)
    theirs, ours = _both("pmval", "-U", str(tmp_path / "cut"), "kernel.all.load")
    assert ours[:2] == theirs[:2]
    assert _pcp_words(ours[2]) == theirs[2]  # (ours also says where: file and offset)
    assert theirs[0] == 1 and "Corrupted record" in theirs[2] and "1 minute" in theirs[1]


def _pcp_words(stderr: str) -> str:
    """STDERR without what ours adds to PCP's messages about damage (": FILE: offset ...")."""
    return re.sub(r"(Corrupted record in a PCP archive log): .*", r"\1", stderr)
