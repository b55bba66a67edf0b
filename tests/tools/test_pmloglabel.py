"""pmloglabel: ours checks, repairs and prints labels as PCP 6.0.3's pmloglabel does.

Unit tests load, check and write labels of archives our writer makes.  Interop tests
break each file's label in each way QA test 327 does (length, magic, PID, volume,
host, timezone, trailer), run PCP's pmloglabel and ours to check (-Dlog) and to repair,
and compare what each prints, its exit status and the files it leaves; the repaired
archives must pass PCP's pmlogcheck.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from purepcp.pmapi.archive import ArchiveWriter
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.ids import pmID_build
from purepcp.pmapi.types import PMType
from purepcp.pmapi.values import Result, Timestamp, ValueSet
from purepcp.tools.pmloglabel import main
from purepcp.tools.pmloglabel.labels import Label, check_label, encode_label, load_label
from tests.support.qa_archives import QA_DIRS

T0 = Timestamp(1_700_000_000, 250_000_000)
METRIC = pmID_build(245, 0, 1)


def write_ours(base: str, version: int) -> None:
    """A small archive of our writer's, in two volumes."""
    with ArchiveWriter(
        base, hostname="box", timezone="UTC", start=T0, version=version, pid=42
    ) as w:
        w.put_desc(Desc(METRIC, PMType.PM_TYPE_U32), ["demo.n"])
        w.put_index(T0)
        for i in range(4):
            stamp = Timestamp(T0.sec + i, T0.nsec)
            if i == 2:
                w.new_volume(stamp)
            w.put_result(Result(stamp, (ValueSet.of_single(METRIC, PMType.PM_TYPE_U32, i),)))
        w.put_index(Timestamp(T0.sec + 3, T0.nsec))


def run_ours(*argv: str) -> tuple[str, str, int]:
    """Our pmloglabel in this process: stdout, stderr, exit status."""
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        status = main(list(argv))
    finally:
        sys.stdout, sys.stderr = saved
    return out.getvalue(), err.getvalue(), status


def run_pcp(*argv: str) -> tuple[str, str, int]:
    p = subprocess.run(["pmloglabel", *argv], capture_output=True, text=True, errors="replace")
    return p.stdout, p.stderr, p.returncode


# -- unit tests -------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [2, 3])
def test_label_round_trip(tmp_path: Path, version: int) -> None:
    base = str(tmp_path / "a")
    write_ours(base, version)
    data = Path(base + ".0").read_bytes()
    lp = Label()
    assert check_label(data, lp, 0, 3, False) == version
    assert (lp.pid, lp.hostname, lp.timezone, lp.sec, lp.nsec) == (
        42,
        "box",
        "UTC",
        T0.sec,
        T0.nsec,
    )
    written = encode_label(lp)
    assert written is not None and data.startswith(written)


def test_label_refusals(tmp_path: Path) -> None:
    base = str(tmp_path / "a")
    write_ours(base, 2)
    data = bytearray(Path(base + ".0").read_bytes())
    lp = Label()
    assert check_label(bytes(data), lp, 1, 3, False) == -12372  # the wrong volume
    assert load_label(b"", lp, False) == -12354  # empty
    data[0:4] = b"\0\0\0\x0c"
    assert load_label(bytes(data), lp, False) == -12372  # a bad length
    assert check_label(bytes(data[:132]), Label(), 0, 3, False) == -12372
    good = Path(base + ".0").read_bytes()[:132]
    assert check_label(good, Label(), 0, 3, False) == -12354  # a label and nothing more


def test_usage() -> None:
    _, err, status = run_ours()
    assert status == 1 and err.startswith("pmloglabel: insufficient arguments\nUsage: pmloglabel")
    _, err, status = run_ours("-V", "5", "x")
    assert status == 1 and err.startswith("pmloglabel: unknown version number (5)\nUsage:")


def test_repair_then_reads(tmp_path: Path) -> None:
    base = str(tmp_path / "a")
    write_ours(base, 2)
    with open(base + ".1", "r+b") as f:
        f.seek(8)
        f.write(b"\0\0\0\x63")  # PID 99 in volume 1
    out, err, status = run_ours(base)
    assert status == 2 and err == "Mismatched PID (99/42) between data volume 1 and data volume 0\n"
    assert run_ours("-s", "-h", "other", base)[2] == 0
    out, err, status = run_ours("-L", base)
    assert status == 0 and err == ""
    assert "Performance metrics from host other\n" in out and "PID for pmlogger: 42\n" in out


# -- interop ------------------------------------------------------------------------------------

needs_pcp = pytest.mark.skipif(
    shutil.which("pmloglabel") is None, reason="PCP's pmloglabel is not installed"
)

#: QA 327's breakages: (what, byte offset, bytes written, the repair's options)
BREAKAGES = [
    ("length", 0, b"12\n", ["-s"]),
    ("magic", 4, b"42", ["-V", "2"]),
    ("pid", 8, b"01", ["-p", "12345"]),
    ("volume", 20, b"05", ["-s"]),
    ("host", 24, b"HNAME", ["-h", "gonzo.com"]),
    ("timezone", 88, b"BADTZ", ["-Z", "GMT"]),
    ("trailer", 128, b"21\n", ["-s"]),
]


def _sources(tmp: Path) -> dict[str, str]:
    found = {}
    (tmp / "ours").mkdir(parents=True)
    write_ours(str(tmp / "ours" / "a"), 2)
    found["ours"] = str(tmp / "ours" / "a")
    for top in QA_DIRS:
        if (top / "archives" / "ok-mv-foo.meta").exists():
            (tmp / "qa").mkdir()
            for f in (top / "archives").glob("ok-mv-foo.*"):
                shutil.copy(f, tmp / "qa")
            found["qa"] = str(tmp / "qa" / "ok-mv-foo")
            break
    return found


def _files(base: str) -> dict[str, bytes]:
    folder = Path(base).parent
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.mark.interop
@needs_pcp
@pytest.mark.parametrize("suffix", ["0", "1", "meta", "index"])
def test_break_and_repair_as_pcp(tmp_path: Path, suffix: str) -> None:
    for name, src in _sources(tmp_path / "src").items():
        sides = {}
        for side, run in (("pcp", run_pcp), ("ours", run_ours)):
            folder = tmp_path / f"{name}-{suffix}-{side}"
            shutil.copytree(Path(src).parent, folder)
            base = str(folder / Path(src).name)
            seen = []
            for _, offset, data, repair in BREAKAGES:
                with open(f"{base}.{suffix}", "r+b") as f:
                    f.seek(offset)
                    f.write(data)
                seen.append(run("-Dlog", base))
                seen.append(run(*repair, "-v", "-L", base))
                seen.append(_files(base))
            sides[side] = (seen, base)
        pcp, ours = sides["pcp"][0], sides["ours"][0]
        for i, (a, b) in enumerate(zip(pcp, ours, strict=True)):
            if isinstance(a, tuple):  # (the archive's directory differs: compare without it)
                a = tuple(
                    x.replace(sides["pcp"][1], "BASE") if isinstance(x, str) else x for x in a
                )
                b = tuple(
                    x.replace(sides["ours"][1], "BASE") if isinstance(x, str) else x for x in b
                )
                a = tuple(_no_trace(x) if isinstance(x, str) else x for x in a)
                b = tuple(_no_trace(x) if isinstance(x, str) else x for x in b)
            assert a == b, (name, suffix, BREAKAGES[i // 3][0], i % 3)
        # what ours leaves passes PCP's pmlogcheck
        check = subprocess.run(["pmlogcheck", sides["ours"][1]], capture_output=True, text=True)
        assert check.returncode == 0, check.stderr


def _no_trace(text: str) -> str:
    """-Dlog's output without the lines QA 327 filters out (libpcp's own trace)."""
    keep = []
    for line in text.splitlines(keepends=True):
        if line.startswith(("__pmLogOpen:", "__pmLogChangeVol:", "__pmFopen(")):
            continue
        if line.startswith("__pmLogChkLabel:") and " [magic=" in line:
            continue
        keep.append(line)
    return "".join(keep)


@pytest.mark.interop
@needs_pcp
@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("opts", [["-l"], ["-L"], ["-v"], ["-L", "-V", "3"], ["-s", "-V", "2"]])
def test_label_as_pcp(tmp_path: Path, version: int, opts: list[str]) -> None:
    results = []
    for side, run in (("pcp", run_pcp), ("ours", run_ours)):
        (tmp_path / side).mkdir()
        base = str(tmp_path / side / "a")
        write_ours(base, version)
        got = run(*opts, base)
        results.append((tuple(x.replace(base, "BASE") if isinstance(x, str) else x for x in got),
                        _files(base)))  # fmt: skip
    assert results[0] == results[1]
