"""MMV files: the format (purepcp.pmapi.mmv) and PCP's writer API (pcp.mmv).

Unit tests build and read files of each version and check libpcp_mmv's and
pmdammv's refusals; the pcp.mmv tests write through the API and read the file
back.  Interop: the same script run on PCP's binding (/usr/bin/python3) and on ours
writes the same bytes but for the generation numbers and the pid, and the same
values.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import stat
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from purepcp.pmapi import mmv

SYSTEM_PYTHON = "/usr/bin/python3"

# -- the format -----------------------------------------------------------------------


def _desc(**kw) -> mmv.Description:
    indoms = (
        mmv.Indom(1, (mmv.Instance(0, "zero"), mmv.Instance(1, "hero")), "short", "long"),
        mmv.Indom(2, (mmv.Instance(5, "bird"),)),
    )
    metrics = (
        mmv.Metric("counter", 1, mmv.MMV_TYPE_U32, mmv.MMV_SEM_COUNTER, 0x00100001, 0, "c", "cc"),
        mmv.Metric("indom", 2, mmv.MMV_TYPE_I64, mmv.MMV_SEM_INSTANT, 0, 1),
        mmv.Metric("text", 3, mmv.MMV_TYPE_STRING, mmv.MMV_SEM_INSTANT, 0, 2),
        mmv.Metric("time", 4, mmv.MMV_TYPE_ELAPSED, 0, 0, mmv.MMV_INDOM_NULL),
    )
    return mmv.Description(**{"metrics": metrics, "indoms": indoms, "cluster": 7, **kw})


def _names(f: mmv.MMVFile) -> list[str]:
    return [m.name for m in f.metrics]


@pytest.mark.parametrize("version", [1, 2])
def test_round_trip(version):
    layout = mmv.build(_desc(), gen=123, process=99, version=version)
    f = mmv.read(layout.data)
    assert f.header == mmv.DiskHeader(b"MMV\0", version, 123, 123, 5, 0, 99, 7)
    assert _names(f) == ["counter", "indom", "text", "time"]
    assert [(i.record.serial, i.instances) for i in f.indoms] == [
        (1, ((0, "zero"), (1, "hero"))),
        (2, ((5, "bird"),)),
    ]
    counter = f.metrics[0].record
    assert (counter.item, counter.type, counter.semantics, counter.dimension) == (
        1,
        1,
        1,
        0x00100001,
    )
    assert mmv.c_string(layout.data, counter.shorttext) == "c"
    assert mmv.c_string(layout.data, counter.helptext) == "cc"
    assert [v.internal for v in f.values] == [None, 0, 1, 5, None]
    assert layout.values["indom", "hero"] == f.values[2].offset
    assert layout.types[layout.values["text", "bird"]] == mmv.MMV_TYPE_STRING


def test_sizes_are_the_c_layouts():
    sizes = (mmv.HEADER, mmv.TOC, mmv.INDOM, mmv.INSTANCE1, mmv.INSTANCE2, mmv.METRIC1, mmv.METRIC2)
    assert [s.size for s in sizes] == [40, 16, 32, 80, 24, 104, 48]
    assert (mmv.VALUE.size, mmv.STRING.size, mmv.LABEL.size) == (32, 256, 256)


def test_long_names_need_version_2_and_labels_version_3():
    long = "x" * 70
    desc = mmv.Description((mmv.Metric(long, 1, mmv.MMV_TYPE_U32),))
    assert mmv.check(desc) == 2
    assert _names(mmv.read(mmv.build(desc, gen=1, process=1).data)) == [long]
    v1 = mmv.read(mmv.build(desc, gen=1, process=1, version=1).data)
    assert _names(v1) == [long[:63]]  # (a version 1 name is a 64-byte field)
    labelled = _desc(labels=(mmv.Label(4, 7, -1, '{"a":1}'),))
    f = mmv.read(mmv.build(labelled, gen=1, process=1).data)
    assert f.header.version == 3
    assert f.labels == (mmv.Label(4, 7, -1, '{"a":1}'),)


@pytest.mark.parametrize(
    ("desc", "code"),
    [
        (mmv.Description((), (mmv.Indom(0),)), errno.ESRCH),
        (mmv.Description((mmv.Metric("m", 1, mmv.MMV_TYPE_U32, indom=9),)), errno.ESRCH),
        (mmv.Description((mmv.Metric("", 1, mmv.MMV_TYPE_U32),)), errno.EINVAL),
        (mmv.Description((mmv.Metric("m", 1, 7 + 3),)), errno.EINVAL),
        (mmv.Description((mmv.Metric("m" * 256, 1, 0),)), errno.E2BIG),
        (mmv.Description((), (mmv.Indom(3, shorttext="s" * 256),)), errno.E2BIG),
        (mmv.Description((), (mmv.Indom(3, (mmv.Instance(0, ""),)),)), errno.EINVAL),
    ],
)
def test_refused_descriptions(desc, code):
    with pytest.raises(mmv.MMVError) as caught:
        mmv.build(desc, gen=1, process=1)
    assert caught.value.code == code


def _patched(data: bytes, offset: int, fmt: str, value) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


def test_refused_files():
    good = mmv.build(_desc(), gen=5, process=1).data
    cases = [
        (good[:39], errno.EINVAL),
        (b"MMX\0" + good[4:], errno.EINVAL),
        (_patched(good, 4, "=i", 4), errno.ENOSYS),
        (_patched(good, mmv.G2_OFFSET, "=Q", 0), errno.EAGAIN),
        (_patched(_patched(good, 8, "=Q", 0), 16, "=Q", 0), errno.EAGAIN),
        (_patched(good, 24, "=i", 1), errno.EINVAL),
        (_patched(good, 24, "=i", 1000), errno.EINVAL),
    ]
    for data, code in cases:
        with pytest.raises(mmv.MMVError) as caught:
            mmv.read(data)
        assert caught.value.code == code


def test_a_section_past_the_end_is_left_out():
    data = mmv.build(_desc(), gen=5, process=1).data
    f = mmv.read(data)
    toc_of_metrics = 40 + 2 * 16  # (after the indoms' and the instances' entries)
    bad = _patched(data, toc_of_metrics + 8, "=Q", len(data))
    assert mmv.read(bad).metrics == ()
    assert mmv.read(bad).indoms == f.indoms


def test_read_value():
    layout = mmv.build(_desc(), gen=5, process=1)
    data = bytearray(layout.data)
    offset = layout.values["counter", None]
    struct.pack_into("=I", data, offset, 41)
    assert mmv.read_value(bytes(data), offset, mmv.MMV_TYPE_U32) == (41, 0)


# -- pcp.mmv --------------------------------------------------------------------------


@pytest.fixture
def tmpdir_env(tmp_path, monkeypatch):
    (tmp_path / "mmv").mkdir()
    monkeypatch.setenv("PCP_TMP_DIR", str(tmp_path))
    return tmp_path


def _metrics(pcpmmv, pmapi):
    return [
        pcpmmv.mmv_metric(
            "counter", 1, pcpmmv.MMV_TYPE_U64, pcpmmv.MMV_SEM_COUNTER, pmapi.pmUnits()
        ),
        pcpmmv.mmv_metric("level", 2, pcpmmv.MMV_TYPE_I32, 0, pmapi.pmUnits(), 3, "lvl", "x"),
        pcpmmv.mmv_metric("label", 3, pcpmmv.MMV_TYPE_STRING, 0, pmapi.pmUnits()),
        pcpmmv.mmv_metric("time", 4, pcpmmv.MMV_TYPE_ELAPSED, 0, pmapi.pmUnits()),
        pcpmmv.mmv_metric("ratio", 5, pcpmmv.MMV_TYPE_DOUBLE, 0, pmapi.pmUnits()),
    ]


def _values(path: Path) -> dict:
    data = path.read_bytes()
    f = mmv.read(data)
    by_offset = {m.offset: m for m in f.metrics}
    out = {}
    for v in f.values:
        metric = by_offset[v.metric].record
        atom, extra = mmv.read_value(data, v.offset, metric.type)
        if metric.type == mmv.MMV_TYPE_STRING:
            atom = mmv.c_string(data, extra)
        out[by_offset[v.metric].name, v.internal] = atom
    return out


def _started(tmpdir_env, flags=0):
    from pcp import mmv as pcpmmv
    from pcp import pmapi

    indom = pcpmmv.mmv_indom(3, "levels", "ignored")
    indom.set_instances([pcpmmv.mmv_instance(0, "low"), pcpmmv.mmv_instance(1, "high")])
    values = pcpmmv.MemoryMappedValues("app", flags=flags)
    values.add_indoms([indom])
    values.add_metrics(_metrics(pcpmmv, pmapi))
    values.start()
    return values


def test_writer_api(tmpdir_env):
    values = _started(tmpdir_env)
    assert values.started() == 1
    path = tmpdir_env / "mmv" / "app"
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    counter = values.lookup_mapping("counter", None)
    values.set(counter, 41)
    values.inc(counter)
    values.add(counter, 2.9)  # (as C: the double cast to the metric's type)
    values.lookup_set("level", "high", -3)
    values.lookup_inc("level", "low")
    values.lookup_add_fallback("level", b"nosuch", b"low", 5)
    values.lookup_set_string("label", None, "hello")
    values.lookup_set("ratio", None, 0.5)
    values.lookup_add("ratio", None, 0.25)
    assert counter.contents.ull == 44
    assert not values.lookup_mapping("level", None)  # (which instance?)
    assert not values.lookup_mapping("nosuch", None)
    got = _values(path)
    assert got["counter", None] == 44
    assert (got["level", 0], got["level", 1]) == (6, -3)
    assert got["label", None] == "hello"
    assert got["ratio", None] == 0.75
    header = mmv.read_header(path.read_bytes())
    assert (header.cluster, header.process, header.flags) == (42, os.getpid(), 0)
    values.stop()
    assert values.started() == 0
    values.inc(counter)  # (stopped: nothing happens)
    assert path.exists()


def test_intervals(tmpdir_env):
    values = _started(tmpdir_env)
    timer = values.lookup_interval_start("time", None)
    assert _values(tmpdir_env / "mmv" / "app")["time", None] == 0
    values.interval_end(timer)
    spent = _values(tmpdir_env / "mmv" / "app")["time", None]
    assert 0 <= spent < 60_000_000
    values.stop()


def test_process_flag_removes_the_file(tmpdir_env):
    from pcp import mmv as pcpmmv

    values = _started(tmpdir_env, flags=pcpmmv.MMV_FLAG_PROCESS)
    assert mmv.read_header((tmpdir_env / "mmv" / "app").read_bytes()).flags == 2
    values.stop()
    assert not (tmpdir_env / "mmv" / "app").exists()


def test_refused_description_leaves_it_unstarted(tmpdir_env):
    from pcp import mmv as pcpmmv
    from pcp import pmapi

    values = pcpmmv.MemoryMappedValues("bad")
    values.add_metrics(
        [pcpmmv.mmv_metric("m", 1, pcpmmv.MMV_TYPE_U32, 0, pmapi.pmUnits(), indom=9)]
    )
    values.start()
    assert values.started() == 0
    assert not (tmpdir_env / "mmv" / "bad").exists()
    assert not values.lookup_mapping("m", None)


def test_bad_arguments_raise_what_ctypes_raises(tmpdir_env):
    values = _started(tmpdir_env)
    counter = values.lookup_mapping("counter", None)
    with pytest.raises(ctypes.ArgumentError):
        values.set(counter, "12")
    with pytest.raises(ctypes.ArgumentError):
        values.lookup_inc_fallback("level", "x", "low")  # (PCP passes FALL unencoded)
    with pytest.raises(ValueError):
        __import__("pcp.mmv").mmv.mmv_instance(0, "n" * 65)
    values.stop()


def test_quirks_of_pcp_binding_kept():
    from pcp import mmv as pcpmmv
    from pcp import pmapi

    m = pcpmmv.mmv_metric(
        "m", 1, 1, pcpmmv.MMV_SEM_INSTANT, pmapi.pmUnits(1, 0, 0, 0, 0, 0), 0, "a", "b"
    )
    assert (m.semantics, bytes(m.dimension), m.helptext) == (0, bytes(4), b"a")
    assert pcpmmv.mmv_indom(4, "s", "h").helptext == b"s"


# -- interop --------------------------------------------------------------------------

SCRIPT = r"""
import sys
from pcp import mmv, pmapi
import cpmapi

W = [mmv.mmv_instance(0, "bird"), mmv.mmv_instance(1, "tree"), mmv.mmv_instance(7, "eggs")]
indoms = [mmv.mmv_indom(serial=1, shorttext="We can be heroes", helptext="long")]
indoms.append(mmv.mmv_indom(serial=2))
indoms[0].set_instances(W[:2])
indoms[1].set_instances(W)
metrics = [
    mmv.mmv_metric("counter", 1, 1, 1, pmapi.pmUnits(0, 0, 1, 0, 0, cpmapi.PM_COUNT_ONE), 0,
                   "Example", "Yep"),
    mmv.mmv_metric("indom", 3, 0, 4, pmapi.pmUnits(), indom=1),
    mmv.mmv_metric("interval", 4, 9, 1, pmapi.pmUnits(), indom=2),
    mmv.mmv_metric("string", 5, 6, 3, pmapi.pmUnits(), shorttext=None),
    mmv.mmv_metric("strings", 6, 6, 3, pmapi.pmUnits(), indom=1, shorttext="s", helptext="t"),
    mmv.mmv_metric("dbl", 7, 5, 3, pmapi.pmUnits()),
    mmv.mmv_metric("big", 8, 3, 3, pmapi.pmUnits()),
    mmv.mmv_metric("name_of_exactly_sixty_four_characters_for_the_inline_name_fieldx"[:64], 9, 2, 3,
                   pmapi.pmUnits()),
]
metrics[5].semantics = 3
metrics[5].dimension = pmapi.pmUnits(1, 0, 0, 2, 0, 0)
values = mmv.MemoryMappedValues(sys.argv[1], flags=int(sys.argv[2]), cluster=int(sys.argv[3]))
values.add_indoms(indoms)
values.add_metrics(metrics)
values.start()
c = values.lookup_mapping("counter", None)
values.set(c, 41); values.inc(c); values.add(c, 3)
values.lookup_set("indom", "tree", -7); values.lookup_inc("indom", "bird")
values.lookup_set_string("string", None, "hello")
values.set_string(values.lookup_mapping("strings", "bird"), "z")
values.lookup_set("dbl", None, 2.5); values.lookup_add("dbl", None, 0.25)
values.lookup_set("big", None, 2.0 ** 40)
values.lookup_set("interval", "eggs", 1000)
values.lookup_add_fallback("indom", b"nosuch", b"tree", 2)
found = [bool(values.lookup_mapping(name, None)) for name in ("nosuch", "indom")]
print(values.started(), *found)
"""


@functools.cache
def _reference_reason() -> str | None:
    if not os.access(SYSTEM_PYTHON, os.X_OK):
        return f"{SYSTEM_PYTHON} is missing (Debian package python3-pcp)"
    probe = subprocess.run(
        [SYSTEM_PYTHON, "-c", "import pcp.pmapi, pcp.mmv"],
        cwd="/",
        capture_output=True,
        check=False,
    )
    return (
        None
        if probe.returncode == 0
        else "PCP's Python bindings are not installed (Debian package python3-pcp)"
    )


def write_both(
    tmp_path: Path, name: str = "pytest", flags: int = 0, cluster: int = 42
) -> tuple[Path, Path]:
    """The SCRIPT's file as PCP's binding writes it, and as ours does."""
    reason = _reference_reason()
    if reason:
        pytest.skip(reason)
    paths = []
    for side, python in (("reference", SYSTEM_PYTHON), ("purepcp", sys.executable)):
        root = tmp_path / side
        (root / "mmv").mkdir(parents=True)
        script = tmp_path / "script.py"
        script.write_text(SCRIPT)
        env = {**os.environ, "PCP_TMP_DIR": str(root)}
        done = subprocess.run(
            [python, str(script), name, str(flags), str(cluster)],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.split() == ["1", "False", "False"]
        paths.append(root / "mmv" / name)
    return paths[0], paths[1]


def _without_generation_and_pid(data: bytes) -> bytes:
    out = bytearray(data)
    out[8:24] = bytes(16)  # g1, g2
    out[32:36] = bytes(4)  # process
    return bytes(out)


@pytest.mark.interop
@pytest.mark.parametrize(
    ("flags", "cluster"), [(0, 42), (mmv.MMV_FLAG_NOPREFIX | mmv.MMV_FLAG_SENTINEL, 0)]
)
def test_same_bytes_as_pcp_writer(tmp_path, flags, cluster):
    theirs, ours = write_both(tmp_path, flags=flags, cluster=cluster)
    a, b = theirs.read_bytes(), ours.read_bytes()
    assert len(a) == len(b)
    assert _without_generation_and_pid(a) == _without_generation_and_pid(b)
    assert stat.S_IMODE(theirs.stat().st_mode) == stat.S_IMODE(ours.stat().st_mode)


@pytest.mark.interop
def test_same_values_as_pcp_writer(tmp_path):
    theirs, ours = write_both(tmp_path)
    assert _values(theirs) == _values(ours)
    assert _values(ours)["counter", None] == 45
