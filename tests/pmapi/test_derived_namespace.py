"""Derived metrics in the namespace, and where their errors land in a tool's output.

From a pmcd's namespace (a host context) PCP's libpcp adds the derived names after
pmcd's own, in registration order, binding each as the traversal reaches it:
one whose operands the source lacks, or that has a semantic error, is not listed
and its name is unknown (its error, if any, is reported then).  From a local
namespace (an archive's) the derived names are placed in the tree, unbound.  Our
pminfo and pmprobe are compared with PCP's against our own pmcd, with PCP's default
definitions and with the set purepcp ships.

PCP's tools write stdout through stdio (line-buffered on a terminal, 4 KB blocks in
a pipe or file) and diagnostics straight to stderr, so in merged output a semantic
error lands where the last full block ended; ours (purepcp.tools.stdio) does the same.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from purepcp.pmapi.derived.registry import SHIPPED_DIR, pcp_global_dir
from purepcp.tools.stdio import BlockStdout, c_stdout
from tests.support.client_servers import ours_serving
from tests.support.derived_archive import write_archive
from tests.support.our_pmcd import OurPMCD
from tests.support.reference_pmcd import require_reference

ROOT = Path(__file__).resolve().parents[2]

# -- stdout as C buffers it -------------------------------------------------------------------


def test_block_stdout_writes_whole_blocks_until_flushed(tmp_path):
    path = tmp_path / "out"
    with open(path, "wb") as f:
        out = BlockStdout(f.fileno(), 8, "utf-8", "strict")
        out.write("abc")
        assert path.read_bytes() == b""
        out.write("defghijklmnopqrst")  # 20 bytes pending: two blocks go
        assert path.read_bytes() == b"abcdefghijklmnop"
        out.write("é")  # (counted in bytes)
        out.flush()
    assert path.read_bytes() == "abcdefghijklmnopqrsté".encode()


def test_c_stdout_leaves_a_replaced_stdout_alone(capsys):
    with c_stdout() as out:
        assert out is sys.stdout
        print("captured")
    assert capsys.readouterr().out == "captured\n"


# -- running the tools --------------------------------------------------------------------------


def _env(derived: str | None, **extra: str) -> dict[str, str]:
    """The environment for both tools: PCP_DERIVED_CONFIG=DERIVED (None: unset)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), TZ="UTC", **extra)
    env.pop("PCP_DEBUG", None)
    env.pop("PCP_DERIVED_CONFIG", None)
    if derived is not None:
        env["PCP_DERIVED_CONFIG"] = derived
    return env


def _run(argv: list[str], env: dict[str, str], merged: bool = False) -> tuple:
    """(stdout, stderr, status), or with MERGED (stdout and stderr in one pipe, as
    `2>&1 |`) (output, status)."""
    done = subprocess.run(
        argv,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if merged else subprocess.PIPE,
        timeout=120,
        cwd=ROOT,
    )
    if merged:
        return done.stdout.decode(), done.returncode
    return done.stdout.decode(), done.stderr.decode(), done.returncode


def both(tool: str, args: list[str], env: dict[str, str], merged: bool = False):
    """(ours, PCP's) runs of TOOL with ARGS."""
    ours = _run([sys.executable, "-m", f"purepcp.tools.{tool}", *args], env, merged)
    return ours, _run([tool, *args], env, merged)


# -- a host context: our pmcd -------------------------------------------------------------------


@pytest.fixture(scope="module")
def pmcd(tmp_path_factory) -> Iterator[OurPMCD]:
    """Our pmcd with its pmcd, linux, simple and trivial agents."""
    require_reference("pminfo", "pmprobe")
    with ours_serving(tmp_path_factory.mktemp("ours")) as running:
        yield running


def _pcp_defaults() -> str:
    path = pcp_global_dir()
    if not path or not os.path.isdir(path):
        pytest.skip(f"PCP's default derived metrics are not installed ({path or 'no pcp.conf'})")
    return path


@pytest.mark.interop
def test_every_name_as_pcp_lists_it(pmcd):
    """pminfo with no names: pmcd's names, then the default derived metrics that bind
    (kernel.cpu.util.*, disk.dev.*, disk.dm.*; not proc.*, mssql.*: no operands)."""
    _pcp_defaults()
    ours, pcp = both("pminfo", ["-h", pmcd.host], _env(None))
    assert ours == pcp
    names = pcp[0].splitlines()
    bare = _run(["pminfo", "-h", pmcd.host], _env(""))[0].splitlines()  # (no derived ones)
    assert names[: len(bare)] == bare and len(names) > len(bare)
    assert "kernel.cpu.util.user" in names and "disk.dev.util" in names
    assert "disk.dm.await" in names  # (its operands: the linux agent's disk.dm.*)
    assert not [n for n in names if n.startswith(("proc.", "mssql."))]


@pytest.mark.interop
def test_without_pcp_the_shipped_set_lists_the_same(pmcd):
    """Ours with PCP not to be found (PCP_CONF names no file) reads the set purepcp ships,
    and lists what PCP's pminfo lists with PCP's files."""
    _pcp_defaults()
    pcp = _run(["pminfo", "-h", pmcd.host], _env(None))
    env = _env(None, PCP_CONF="/nonexistent/pcp.conf")
    ours = _run([sys.executable, "-m", "purepcp.tools.pminfo", "-h", pmcd.host], env)
    assert ours == pcp
    shipped = _run(["pminfo", "-h", pmcd.host], _env(SHIPPED_DIR))  # PCP's with ours
    assert shipped == pcp


@pytest.mark.interop
@pytest.mark.parametrize(
    "args",
    [
        ["kernel", "disk"],
        ["-d", "kernel.cpu.util", "disk.dev"],
        ["-f", "kernel.cpu.util.user", "disk.dev.util"],
        ["-f", "disk.dm.await", "kernel.cpu.util.sys", "proc.hog.mem", "disk.dev.d_await"],
        ["-t", "disk.dev.r_await", "disk.md"],
    ],
    ids=["subtrees", "desc", "fetch", "missing-operands", "oneline"],
)
def test_subtrees_and_missing_operands_as_pcp(pmcd, args):
    """A derived metric whose operands pmcd lacks is an unknown name (exit 1)."""
    _pcp_defaults()
    ours, pcp = both("pminfo", ["-h", pmcd.host, *args], _env(None))
    assert ours == pcp
    if "proc.hog.mem" in args:
        assert pcp[2] == 1 and "Error: proc.hog.mem: Unknown metric name" in pcp[1]


@pytest.mark.interop
def test_pmprobe_lists_as_pcp(pmcd):
    _pcp_defaults()
    ours, pcp = both("pmprobe", ["-h", pmcd.host], _env(None))
    assert [ln.split()[0] for ln in ours[0].splitlines()] == [
        ln.split()[0] for ln in pcp[0].splitlines()
    ]
    assert ours[1:] == pcp[1:]
    args = ["-h", pmcd.host, "disk.dev", "kernel.cpu", "disk.dm", "proc.hog.mem"]
    ours, pcp = both("pmprobe", args, _env(None))
    assert ours == pcp
    assert "proc.hog.mem -12357 Unknown metric name" in pcp[0]
    assert re.search(r"^disk\.dm\.util \d+$", pcp[0], re.M)  # derived, its operands there


SEMANTIC = """\
hb.a = kernel.all.cpu.user * kernel.all.cpu.sys
hb.b = no.such.metric + 1
hb.c = hinv.ncpu + 1
hb.d = kernel.all.load + disk.dev.read
"""


@pytest.mark.interop
@pytest.mark.parametrize(
    "args",
    [["hb"], ["-d", "hb"], ["-f", "hb.c", "hb.a", "hb.b"], ["-d"]],
    ids=["list", "desc", "fetch", "everything"],
)
def test_semantic_errors_in_a_hosts_traversal(pmcd, tmp_path, args):
    """Reported as the traversal binds them, then left out: apart and merged."""
    conf = tmp_path / "hb.conf"
    conf.write_text(SEMANTIC)
    env = _env(str(conf))
    ours, pcp = both("pminfo", ["-h", pmcd.host, *args], env)
    assert ours == pcp
    assert "Semantic error: derived metric hb.a" in pcp[1]
    ours, pcp = both("pminfo", ["-h", pmcd.host, *args], env, merged=True)
    assert ours == pcp


# -- an archive: errors in merged output ---------------------------------------------------------

#: Semantic errors early in the archive's namespace (sc.* comes first), in the middle and
#: at the end.
ERRORS = """\
sc.bad = sc.bytectr * sc.cntctr
network.interface.bad = network.interface.in.bytes * sample.milliseconds
ty.bad = ty.u32 + c.u64b
zz.bad = sc.byte + sc.msec
zz.ok = ty.u32 + 1
zz.worse = ind.i32 + oth.v
"""


@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> tuple[str, str]:
    require_reference("pminfo")
    tmp = tmp_path_factory.mktemp("merged")
    (tmp / "errors.conf").write_text(ERRORS)
    return write_archive(str(tmp / "arch")), str(tmp / "errors.conf")


@pytest.mark.interop
@pytest.mark.parametrize(
    "args", [["-d"], ["-d", "-f"], ["-d", "zz", "ty", "network"], ["-m", "-t", "-d"]]
)
def test_errors_land_where_pcps_do_in_merged_output(archive, args):
    """`pminfo -a ARCH -d ... 2>&1`: every error line at the same byte as PCP's, over
    more than one 4 KB block of output; and the streams apart the same too."""
    arch, conf = archive
    argv = ["-c", conf, "-a", arch, *args]
    ours, pcp = both("pminfo", argv, _env(""), merged=True)
    assert ours == pcp
    assert pcp[0].count("Semantic error") == 4 + ("zz" not in args)
    if "zz" not in args:  # (PCP's first error before any output, the rest mid-line)
        assert pcp[0].startswith("Semantic error: derived metric sc.bad")
        assert len(pcp[0]) > 4096 and re.search(r"[^\n]Semantic error", pcp[0])
    ours, pcp = both("pminfo", argv, _env(""))
    assert ours == pcp
