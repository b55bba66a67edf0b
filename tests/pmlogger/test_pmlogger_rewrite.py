"""pmlogger_rewrite: pmlogrewrite run in place over archives, as PCP's wrapper runs it."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys

import pytest

from purepcp.pmlogger import rewrite
from tests.support.qa_archives import qa
from tests.support.reference_pmcd import require_reference

PCP_WRAPPER = "/usr/lib/pcp/bin/pmlogger_rewrite"


def test_options_pass_to_pmlogrewrite_in_order():
    s = rewrite.parse(["-c", "someconfig", "-swdv", "-N", "-VV", "20011002"])
    assert s.rewrite_args == ["-iq", "-c", "someconfig", "-s", "-w", "-d", "-v"]
    assert (s.showme, s.verbose, s.operands) == (True, 2, ["20011002"])
    assert rewrite.shown_args(s.rewrite_args) == '-iq -c "someconfig" -s -w -d -v'
    assert rewrite.parse([]).bad
    assert rewrite.parse(["-y", "x"]).bad
    assert rewrite.parse(["--help"]).bad
    assert rewrite.parse(["--config=f", "--desperate", "a"]).rewrite_args == [
        "-iq", "-c", "f", "-d",
    ]  # fmt: skip


def test_usage_is_status_4(capsys):
    assert rewrite.main([]) == 4
    assert capsys.readouterr().err == (
        "Usage: pmlogger_rewrite [options] archive ...\n\n"
        "Options:\n"
        "  -c FILE, --config=FILE\n"
        "                        [pmlogrewrite] config file/dir\n"
        "  -d, --desperate       [pmlogrewrite] desperate, save output archive even after error\n"
        "  -N, --showme          perform a dry run, showing what would be done\n"
        "  -s, --scale           [pmlogrewrite] do scale conversion\n"
        "  -V, --verbose         increase diagnostic verbosity\n"
        "  -v                    [pmlogrewrite] increased diagnostic verbosity\n"
        "  -w, --warnings        [pmlogrewrite] emit warnings\n"
        "  -?, --help            show this usage message and exit\n"
    )


def test_names_reduce_to_base_names(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert rewrite.strip_compression("a.meta.xz") == "a.meta"
    assert rewrite.strip_compression("a.0.gz") == "a.0"
    assert rewrite.strip_compression("a.biz") == "a.b"  # (sed's '.' matches any character)
    assert rewrite.base_name("a.index") == "a"
    assert rewrite.base_name("a.meta.bz2") == "a"
    assert rewrite.base_name("dir/a.12") == "dir/a"
    assert rewrite.base_name("a") is None
    (tmp_path / "a.meta.xz").write_bytes(b"")
    assert rewrite.base_name("a") == "a"


def test_only_an_archive_label_makes_an_archive(tmp_path):
    import gzip

    good = tmp_path / "g.meta"
    good.write_bytes(b"\0\0\0\x84P\x05&\x02" + bytes(124))
    assert rewrite.is_archive(str(good))
    packed = tmp_path / "g2.meta.gz"
    packed.write_bytes(gzip.compress(good.read_bytes()))
    assert rewrite.is_archive(str(packed))
    (tmp_path / "v3.meta").write_bytes(b"\0\0\x03(P\x05&\x03")
    assert rewrite.is_archive(str(tmp_path / "v3.meta"))
    (tmp_path / "bad.meta").write_bytes(b"\0\0\0\x85P\x05&\x02")
    assert not rewrite.is_archive(str(tmp_path / "bad.meta"))
    assert not rewrite.is_archive(str(tmp_path / "none.meta"))


def test_comm_finds_the_changed_files():
    before = ["a.0 1 10", "a.index 2 20", "a.meta.xz 3 30"]
    after = ["a.0 1 10", "a.index 9 20", "a.meta 4 40"]
    assert rewrite.comm_new(before, after) == ["a.index 9 20", "a.meta 4 40"]


def test_showme_reports_and_dedups(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for suffix in (".0", ".index", ".meta"):
        (tmp_path / f"x{suffix}").write_bytes(b"")
    assert rewrite.main(["-N", "-VV", "x.index", "x.meta", "x.0", "nothing"]) == 0
    assert capsys.readouterr().out == (
        "suffix stripping: arg: x.index -> x\n"
        "suffix stripping: arg: x.meta -> x\n"
        "x: duplicate, already in archives list\n"
        "suffix stripping: arg: x.0 -> x\n"
        "x: duplicate, already in archives list\n"
        "Warning: nothing: not a PCP archive name\n"
        "+ check x not active and OK\n"
        "+ pmlogrewrite -iq x\n"
    )


# -- against PCP's wrapper ---------------------------------------------------------------

#: QA 675, 676 and 678's steps, run by both wrappers on farms of their own ($R is the
#: wrapper; each step's output and status, then what the archives hold afterwards)
SCRIPT = r"""
cd onevol
echo "--- 1"; $R -c someconfig -N -VV no-such-archive; echo rc=$?
echo "--- 2"; $R -c someconfig -swdv -N -VV 20011002; echo rc=$?
echo "--- 3"; $R -N -VV 20011002.index 20011002.meta 20011002.0; echo rc=$?
echo "--- 4"; $R -N -VV ../onevol ../multivol | sort -r
mkdir foo; echo "--- 4b"; $R -N -VV foo | sort -r
base=0
for suff in xz lzma bz2 bz gz Z z
do
    touch foo/$base.meta.$suff foo/$base.0.$suff foo/$base.$base.$suff foo/$base.index.$suff
    base=`expr $base + 1`
done
echo "--- 4c"; $R -N -VV foo | sort -r
rm -rf foo; cd ..
echo "--- 5"; $R -V badvol 2>&1 | sort -r
echo "--- 6"; $R -VV -c ../rules1 onevol/20011002 onevol/20011003; echo rc=$?
for a in onevol/20011002 onevol/20011003; do pminfo -a $a -d disk.dev.bytes; done
echo "--- 7"; $R -VV -c ../rules2 onevol/20011002 onevol/20011003; echo rc=$?
for a in onevol/20011002 onevol/20011003; do pminfo -a $a -md pmcd.pmlogger.port; done
echo "--- 8"; xz multivol/20011002.[0-9]
$R -VV -c ../rules2 multivol/*.meta; echo rc=$?
ls multivol
echo "--- 9"; xz onevol/*.meta onevol/*.0 multivol/*.meta
$R -VV -c ../rules1 onevol/*.meta* multivol/*.meta*; echo rc=$?
ls multivol onevol
gzip onevol/20011003.index
echo "--- 10"; $R -VV -c ../rules3 onevol; echo rc=$?
ls onevol
for a in onevol/20011002 onevol/20011003 multivol/20011002; do
    pminfo -a $a -m pmcd.pmlogger.port; pmlogcheck $a; done
echo "--- 11"; $R; echo rc=$?; $R -y x; echo rc=$?; $R --help; echo rc=$?
"""
RULES = {
    "rules1": "metric disk.dev.bytes {\n    type -> U64\n}\n",
    "rules2": "metric pmcd.pmlogger.port {\n    pmid -> 2.4095.1023\n}\n",
    "rules3": "metric pmcd.pmlogger.port {\n    pmid -> 2.4095.1022\n}\n",
}
FARM = {
    "onevol/20011002": "snort-disks",
    "onevol/20011003": "moomba.client",
    "multivol/20011002": "ok-mv-bar",
    "badvol/badlen-10": "badlen-10",
}


def _farm(top: str) -> None:
    for name, text in RULES.items():
        with open(os.path.join(top, name), "w") as f:
            f.write(text)
    farm = os.path.join(top, "farm")
    for target, source in FARM.items():
        src = qa(source)
        os.makedirs(os.path.dirname(os.path.join(farm, target)), exist_ok=True)
        folder = os.path.dirname(src)
        for entry in os.listdir(folder):
            if entry.startswith(os.path.basename(src) + "."):
                rest = entry[len(os.path.basename(src)) :]
                shutil.copy(os.path.join(folder, entry), os.path.join(farm, target + rest))


def _unused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def both_sides(tmp_path_factory):
    """The script's output with PCP's wrapper and with ours (PCP's helpers under both;
    no pmcd is reachable, so no archive counts as being logged)."""
    require_reference("pmdumplog", "pminfo", "pmlogcheck", "pmprobe")
    for path in (PCP_WRAPPER, os.path.join(os.path.dirname(PCP_WRAPPER), "pmlogrewrite")):
        if not os.access(path, os.X_OK):
            pytest.skip(f"reference PCP 6 is not installed: no {path}")
    for tool in ("xz", "gzip", "bash"):
        if shutil.which(tool) is None:
            pytest.skip(f"no {tool} on $PATH (Debian packages xz-utils, gzip, bash)")
    top = tmp_path_factory.mktemp("rewrite")
    env = dict(os.environ, PMCD_PORT=str(_unused_port()), PMCD_SOCKET=str(top / "no.socket"))
    ours = f"{sys.executable} -m purepcp.pmlogger.rewrite"
    outputs = []
    for side, wrapper in (("pcp", PCP_WRAPPER), ("ours", ours)):
        folder = top / side
        folder.mkdir()
        _farm(str(folder))
        run = subprocess.run(
            ["bash", "-c", SCRIPT],
            env=dict(env, R=wrapper), cwd=folder / "farm", capture_output=True, timeout=600,
        )  # fmt: skip
        outputs.append((run.returncode, run.stdout, run.stderr))
    return outputs


@pytest.mark.interop
def test_as_pcps_wrapper(both_sides):
    theirs, ours = both_sides
    assert ours[1].decode(errors="replace") == theirs[1].decode(errors="replace")
    assert ours == theirs


@pytest.mark.interop
def test_the_script_covers_the_rewrites(both_sides):
    """(The comparison means something: files were changed and recompressed.)"""
    out = both_sides[1][1].decode()
    assert "changed and recompressed: multivol/20011002.0.xz" in out
    assert "changed: onevol/20011002.meta" in out
    assert "Botch: cannot get pmlogger PID from label record for badvol/badlen-10" in out
