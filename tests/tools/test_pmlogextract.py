"""pmlogextract: ours writes the archive PCP 6.0.3's writes, byte for byte, and says the same.

Unit tests cover the configuration grammar, libpcp's hash-table orders, PCP's binary
search for an instance domain, the instance picking (with PCP's quirk) and the command
line.  Interop tests run PCP's pmlogextract and ours on the same inputs (PCP's QA
archives, and archives our writer makes), and compare stdout, stderr, exit status and
every file of the output archive (all but the logger PID in the labels); PCP's
pmlogcheck must pass ours.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from array import array
from pathlib import Path

import pytest

from purepcp.pmapi.archive import ArchiveWriter
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.ids import PM_INDOM_NULL, pmID_build, pmInDom_build
from purepcp.pmapi.types import PMSem, PMType, ValFmt
from purepcp.pmapi.values import Result, Timestamp, ValueSet
from purepcp.tools.pmlogextract.config import ConfigError, Spec, specs
from purepcp.tools.pmlogextract.metadata import Entry, InDomHistory
from purepcp.tools.pmlogextract.options import parse_options
from purepcp.tools.pmlogextract.select import Choice, Selection, pick
from tests.support.qa_archives import QA_DIRS, qa

ROOT = Path(__file__).resolve().parents[2]


def _qa(name: str) -> str:
    """PCP's QA archive NAME, compressed ones too."""
    for top in QA_DIRS:
        if (top / "archives" / f"{name}.meta.xz").exists():
            return str(top / "archives" / name)
    return qa(name)


# -- the configuration file ------------------------------------------------------------------


def test_config_metrics_instances_and_lines():
    text = (
        "# a comment\n"
        "kernel.all.load [ \"1 minute\", 15 'x y' ]\n"
        "disk.dev.read, sample.bin [100 200]\n"
        "sample.seconds\n"
        "\n"
    )
    found = list(specs(text))
    assert found == [
        Spec("kernel.all.load", ("1 minute", 15, "x y"), 2),
        Spec("disk.dev.read", (), 3),  # (acted on once the token after it is read)
        Spec("sample.bin", (100, 200), 3),
        Spec("sample.seconds", (), 6),  # (the end of the file: every line counted)
    ]


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("a [ ]\n", 1, "syntax error"),
        ("a,\n", 2, "syntax error"),
        ("a\n[ 1 ]\n]", 3, "syntax error"),
        ("a\nb $\n", 2, "Unexpected character '$'"),
        ('a [ "" ]', 1, "Unexpected character '\"'"),
    ],
)
def test_config_errors(text, line, message):
    with pytest.raises(ConfigError) as caught:
        list(specs(text))
    assert (caught.value.line, caught.value.message) == (line, message)


# -- libpcp's orders --------------------------------------------------------------------------


def _history(*secs: int) -> InDomHistory:
    from purepcp.pmapi.archive.format import InDomRecord

    h = InDomHistory()
    for s in secs:
        h.add(InDomRecord(Timestamp(s, 0), 1, (0,), ("a",)), None, 2)
    return h


def test_closest_instance_domain_is_pcps_binary_search():
    h = _history(10, 20, 30)
    stamp = lambda e: e.record.stamp.sec  # noqa: E731
    assert stamp(h.closest(Timestamp(25, 0))) == 20
    assert stamp(h.closest(Timestamp(30, 0))) == 30
    assert stamp(h.closest(Timestamp(99, 0))) == 30
    assert h.closest(Timestamp(5, 0)) is None
    only = _history(50)
    assert stamp(only.closest(Timestamp(1, 0))) == 50  # (the only record, whatever its time)
    placeholder = InDomHistory([Entry(None)])
    assert placeholder.closest(Timestamp(1, 0)).record is None


# -- picking instances ------------------------------------------------------------------------


def _vs(pmid: int, insts: list[int]) -> ValueSet:
    return ValueSet(pmid, len(insts), ValFmt.PM_VAL_INSITU, 0, array("I", insts), array("I", insts))


def test_pick_instances_in_configured_order():
    result = Result(Timestamp(1, 0), (_vs(1, [1, 2, 3]), _vs(2, [5, 6])))
    sel = Selection({1: Choice(1, 9, (3, 1, 7)), 2: Choice(2, 9, None)})
    out = pick(result, sel, [])
    assert out is not None
    assert [list(v.insts) for v in out.vsets] == [[3, 1], [5, 6]]
    assert pick(result, Selection({8: Choice(8, 9, None)}), []) is None
    assert [v.pmid for v in pick(result, None, [1]).vsets] == [2]


def test_pick_keeps_pcps_stale_value_count_test():
    # PCP decides whether to pick from a set by the last set it looked at: here the
    # result's last set has no values, so the first picked set keeps all its instances
    result = Result(Timestamp(1, 0), (_vs(1, [1, 2, 3]), _vs(2, [])))
    sel = Selection({1: Choice(1, 9, (2,)), 2: Choice(2, 9, None)})
    out = pick(result, sel, [])
    assert [list(v.insts) for v in out.vsets] == [[1, 2, 3], []]


# -- the command line -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "messages"),
    [
        (["a"], ["pmlogextract: Error: insufficient arguments\n"]),
        (["-s", "x", "a", "b"], ["pmlogextract: -s requires numeric argument\n"]),
        (["-V", "4", "a", "b"], ["pmlogextract: -V value must be 2 or 3\n"]),
        (["-v", "-1", "a", "b"], ["pmlogextract: -v requires numeric argument\n"]),
        (["-z", "-Z", "UTC", "a", "b"], ["pmlogextract: at most one of -Z and/or -z allowed\n"]),
        (["-q", "a", "b"], ["pmlogextract: invalid option -- 'q'\n"]),
    ],
)
def test_option_errors(argv, messages):
    o = parse_options(argv)
    assert o.errors and o.messages == messages


def test_usage_and_status(tmp_path):
    done = _ours([], tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith(
        "pmlogextract: Error: insufficient arguments\n"
        "Usage: pmlogextract [options] input-archive output-archive\n\nOptions:\n"
        "  -c FILE, --config=FILE\n"
    )


# -- archives of our own ------------------------------------------------------------------------

T0 = 1_700_000_000
LOAD = pmID_build(245, 0, 1)
BYTES = pmID_build(245, 0, 2)
INDOM = pmInDom_build(245, 1)


def _write(base: str, start: int, count: int, version: int = 2, names=("a", "b")) -> None:
    """COUNT samples a second apart from START: a double and a counter over an indom
    whose members change half way."""
    with ArchiveWriter(
        base, hostname="box", timezone="UTC", start=Timestamp(start, 0), version=version, pid=9
    ) as w:
        w.put_desc(Desc(LOAD, PMType.PM_TYPE_DOUBLE, PM_INDOM_NULL, PMSem.PM_SEM_INSTANT),
                   ["demo.load"])  # fmt: skip
        w.put_desc(Desc(BYTES, PMType.PM_TYPE_U64, INDOM, PMSem.PM_SEM_COUNTER), ["demo.bytes"])
        w.put_text(4 | 1, LOAD, "the load")
        for i in range(count):
            stamp = Timestamp(start + i, 500_000_000)
            insts = [0, 1] if i < count // 2 else [0, 1, 2]
            if w.put_indom(stamp, INDOM, insts, [f"{names[0]}{k}" for k in insts]):
                w.put_index(stamp)
            w.put_result(
                Result(
                    stamp,
                    (
                        ValueSet.of_atoms(LOAD, PMType.PM_TYPE_DOUBLE, [(0xFFFFFFFF, i / 4)]),
                        ValueSet.of_atoms(
                            BYTES, PMType.PM_TYPE_U64, [(k, i * 10 + k) for k in insts]
                        ),
                    ),
                )
            )


def _ours(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, TZ="UTC", PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "purepcp.tools.pmlogextract", *argv],
        capture_output=True, text=True, env=env, cwd=cwd,
    )  # fmt: skip


def _theirs(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, TZ="UTC")
    return subprocess.run(["pmlogextract", *argv], capture_output=True, text=True, env=env, cwd=cwd)


def _files(base: Path) -> dict[str, bytes]:
    """Every file of the archive BASE, each label's PID blanked."""
    found = {}
    for path in sorted(base.parent.glob(base.name + ".*")):
        data = bytearray(path.read_bytes())
        data[8:12] = b"\0\0\0\0"
        found[path.name[len(base.name) :]] = bytes(data)
    return found


def compare(argv: list[str], tmp_path: Path, check: bool = True) -> subprocess.CompletedProcess:
    """Run both with ARGV (its last word the output's name, made under each side's own
    folder); the same stdout, stderr, status and archive files, else the test fails."""
    if shutil.which("pmlogextract") is None:
        pytest.skip("PCP's pmlogextract is not installed (Debian package pcp)")
    runs = {}
    for side, run in (("theirs", _theirs), ("ours", _ours)):
        where = tmp_path / side
        where.mkdir(exist_ok=True)
        runs[side] = run(argv, where)
    a, b = runs["theirs"], runs["ours"]
    assert (b.returncode, b.stdout, b.stderr) == (a.returncode, a.stdout, a.stderr)
    out = argv[-1]
    theirs, ours = _files(tmp_path / "theirs" / out), _files(tmp_path / "ours" / out)
    assert sorted(ours) == sorted(theirs)
    for suffix in theirs:
        assert ours[suffix] == theirs[suffix], f"{out}{suffix} differs"
    if check and a.returncode == 0:
        done = subprocess.run(
            ["pmlogcheck", str(tmp_path / "ours" / out)], capture_output=True, text=True
        )
        assert done.returncode == 0, done.stdout + done.stderr
    return b


ARCHIVES = ("one", "two", "overlap", "three3", "renamed")


@pytest.fixture(scope="module")
def ours_archives(tmp_path_factory) -> Path:
    where = tmp_path_factory.mktemp("inputs")
    _write(str(where / "one"), T0, 40)
    _write(str(where / "two"), T0 + 100, 30)
    _write(str(where / "overlap"), T0 + 20, 30)
    _write(str(where / "three3"), T0 + 200, 20, version=3)
    _write(str(where / "renamed"), T0 + 300, 10, names=("z", "y"))
    return where


@pytest.mark.interop
@pytest.mark.parametrize(
    "args",
    [
        ["one", "two"],
        ["one", "overlap", "two"],
        ["two", "one"],
        ["-s", "25", "one", "two"],
        ["-v", "15", "one", "two"],
        ["-V", "3", "one", "two"],
        ["one", "three3"],
        ["-m", "one", "two"],
        ["-S", "@Tue Nov 14 22:13:30 2023", "-T", "@Tue Nov 14 22:13:50 2023", "one", "two"],
        ["one", "renamed"],
        ["-f", "one", "two"],
        # -S and -T within the first input's start and end alone, as PCP's (QA 178)
        ["-T", "100", "one", "overlap"],
        ["-S", "10", "overlap", "one"],
    ],
)
def test_ours_inputs_like_pcp(ours_archives, tmp_path, args):
    inputs = [str(ours_archives / a) if a in ARCHIVES else a for a in args]
    compare([*inputs, "out"], tmp_path)


@pytest.mark.interop
def test_config_against_pcp(ours_archives, tmp_path):
    config = tmp_path / "config"
    config.write_text("demo.bytes [ 'a1' 2 7 ]\ndemo.load\nno.such.metric\n")
    compare(["-c", str(config), str(ours_archives / "one"), str(ours_archives / "two"), "out"],
            tmp_path)  # fmt: skip


# -- PCP's QA archives ---------------------------------------------------------------------------


@pytest.mark.interop
@pytest.mark.parametrize(
    "args",
    [
        ["-z", "{arch_a}", "{arch_b}"],
        ["{mirage-1}", "{mirage-2}"],
        ["-S", "5min", "-T", "5min", "{mirage}"],
        ["{19970807.09.54}", "{19970807.09.59}"],
        ["-z", "-T", "@22:30", "{rattle}"],
        ["-Z", "UTC", "-S", "@ Nov 27 15:52:30", "-T", "@ Nov 27 15:54:30", "{node_archive}"],
        ["{20190628.04.03}", "{20190628.06.31}"],
        ["-x", "{20190628.04.03}", "{20190628.06.31}"],
        ["-z", "{ok-truncbin}"],
        ["-s", "3", "-v", "2", "{mirage}"],
        ["-V", "3", "{arch_a}"],
        ["{value-test}"],  # (records past the 100,000-byte index step)
        ["{omnibus_v2}", "{omnibus_v3}"],  # (v2 and v3 in: v3 out)
        ["{omnibus_v3}", "{omnibus_v3}"],  # (one archive named twice: one .meta read)
    ],
)
def test_qa_archives_like_pcp(tmp_path, args):
    argv = [_qa(a[1:-1]) if a.startswith("{") else a for a in args]
    compare([*argv, "out"], tmp_path)


@pytest.mark.interop
def test_qa_config_with_instances(tmp_path):
    config = tmp_path / "config"
    config.write_text('sample.bin [100 "bin-300" 999]\nsample.colour\nsample.drift\n')
    compare(["-c", str(config), qa("mirage"), "out"], tmp_path)


@pytest.mark.interop
@pytest.mark.parametrize(
    "argv",
    [
        ["/no/such/archive", "out"],
        ["{mirage}", "{mirage}"],  # (the output exists)
        ["-S", "@2000", "{mirage}", "out"],
        ["-S", "bogus", "{mirage}", "out"],
        ["-c", "/no/such/config", "{mirage}", "out"],
    ],
)
def test_errors_like_pcp(tmp_path, argv):
    args = [qa(a[1:-1]) if a.startswith("{") else a for a in argv]
    compare(args, tmp_path)


# -- pmlogger_daily merges a day's archives with pmlogextract -------------------------------------


def test_pmlogger_daily_merges_an_earlier_days_archives(tmp_path, monkeypatch):
    from purepcp.pmlogger import daily

    archive_dir, run_dir, log_dir = tmp_path / "archive", tmp_path / "run", tmp_path / "log"
    host = archive_dir / "host"
    host.mkdir(parents=True)
    run_dir.mkdir()
    (log_dir / "pmlogger").mkdir(parents=True)
    control = tmp_path / "control"
    control.write_text(f"$version=1.1\nsomehost n n {host} -r\n")
    for name, value in (("PCP_ARCHIVE_DIR", archive_dir), ("PCP_RUN_DIR", run_dir),
                        ("PCP_LOG_DIR", log_dir), ("PCP_TMP_DIR", tmp_path / "tmp")):  # fmt: skip
        monkeypatch.setenv(name, str(value))
    monkeypatch.setenv("PCP_CULLAFTER", "never")
    monkeypatch.setenv("PCP_COMPRESSAFTER", "never")
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}:{os.environ['PATH']}")
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    _write(str(host / "20231114.22.13"), T0, 20)
    _write(str(host / "20231114.22.14"), T0 + 60, 20)
    _write(str(host / "20231114.22.15"), T0 + 120, 20)
    today = time.strftime("%Y%m%d") + ".00.10"
    _write(str(host / today), T0 + 900, 5)  # (today's: left alone)
    # (no pmlogger runs for the line: a warning, not an error, with the service off)
    monkeypatch.setattr(daily, "_pmlogger_enabled", lambda: False)
    log = tmp_path / "daily.log"
    status = daily.main(["-c", str(control), "-l", str(log), "-r", "-x", "never"])
    assert status == 0, log.read_text()
    names = sorted(p.name for p in host.iterdir() if p.name != "lock")
    assert names == [
        "20231114.0", "20231114.index", "20231114.meta",
        f"{today}.0", f"{today}.index", f"{today}.meta",
    ], log.read_text()  # fmt: skip
    from purepcp.pmapi.archive import Archive

    with Archive(str(host / "20231114")) as merged:
        records = list(merged.records())
    assert len(records) == 60 + 2  # (with a <mark> where each input ended)


# -- the copy path ---------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [2, 3])
def test_writer_labels_packed_as_construct_encodes_them(version):
    from purepcp.pmapi.archive.format import LogLabel, encode_label
    from purepcp.pmapi.archive.writer import label_bytes

    for label in (
        LogLabel(version, 4242, Timestamp(1_700_000_000, 123_456_789), -1, "h" * 300, "UTC", ":X"),
        LogLabel(version, -5, Timestamp(-3, 5), 7, "", "", "", 9),
    ):
        assert label_bytes(label) == encode_label(label)


def test_padding_after_a_block_becomes_pcps():
    from purepcp.tools.pmlogextract.inputs import tilde_padding

    string = ValueSet.of_atoms(pmID_build(1, 0, 1), PMType.PM_TYPE_STRING, [(0, "ab")])
    from purepcp.pmapi.archive import encode_record

    record = bytearray(encode_record(Result(Timestamp(1, 0), (string,)), 2))
    assert record.count(b"ab\0~") == 1
    zeroed = bytes(record).replace(b"ab\0~", b"ab\0\0")
    assert tilde_padding(memoryview(zeroed), False) == bytes(record)
    view = memoryview(bytes(record))
    assert tilde_padding(view, False) is view  # (nothing to change: no copy)


@pytest.mark.parametrize("version", [2, 3])
def test_uniform_volumes_frame_as_record_by_record(tmp_path, version):
    from purepcp.pmapi.archive.reader import Archive
    from purepcp.tools.pmlogextract import inputs

    base = str(tmp_path / "u")
    with ArchiveWriter(base, hostname="h", timezone="UTC", start=Timestamp(T0, 0),
                       version=version) as w:  # fmt: skip
        w.put_desc(Desc(LOAD, PMType.PM_TYPE_DOUBLE, PM_INDOM_NULL, PMSem.PM_SEM_INSTANT), ["l"])
        for i in range(50):
            vs = ValueSet.of_atoms(LOAD, PMType.PM_TYPE_DOUBLE, [(0xFFFFFFFF, i / 7)])
            w.put_result(Result(Timestamp(T0 + i, 1000 * i), (vs,)))
    fast = inputs.Input("u", Archive(base))
    fast.frame()
    slow = inputs.Input("u", Archive(base))
    saved = inputs._uniform
    inputs._uniform = lambda *_: None  # type: ignore[assignment]
    try:
        slow.frame()
    finally:
        inputs._uniform = saved
    for column in ("times", "numpmid", "offsets", "lengths", "vol_of"):
        assert list(getattr(fast, column)) == list(getattr(slow, column)), column
    assert fast.times[3] == (T0 + 3) * 1_000_000_000 + 3000


@pytest.mark.interop
def test_damaged_archives_like_pcp(tmp_path):
    """Every archive of PCP's qa/badarchives: the same messages, status and output."""
    found = [top / "badarchives" for top in QA_DIRS if (top / "badarchives").is_dir()]
    if not found:
        pytest.skip("PCP's QA archives are not here (Debian's pcp-testsuite package)")
    names = sorted({p.name.split(".meta")[0] for p in found[0].glob("*.meta*")})
    for k, name in enumerate(names):
        where = tmp_path / str(k)
        where.mkdir()
        compare([str(found[0] / name), "out"], where, check=False)
