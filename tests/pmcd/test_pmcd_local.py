"""Local contexts (PM_CONTEXT_LOCAL, the tools' -L) with C agent libraries, and the host
process that serves such a library to a client (purepcp.pmda.dsohost, pmda.hosted).

libpcp's local context dlopens the DSO agents of pmcd.conf (and -K's) into the client
and names metrics from the default namespace; ours serves a C library from a host
process the client drives, so `pminfo -L -K add,60,.../pmda_linux.so,linux_init`
(QA 1814, 1828) answers as PCP's does, and a library that cannot be loaded is
__pmConnectLocal's one warning, never a traceback.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from purepcp.pmcd.local import LocalSpecError, apply_changes
from purepcp.pmda.dsohost import LIBPCP_PMDA, libpcp_pmda

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_LIBRARY = Path("/var/lib/pcp/pmdas/sample/pmda_sample.so")


def require_sample_library() -> None:
    """Skip unless PCP's libpcp_pmda and its sample agent library are installed."""
    if libpcp_pmda() is None:
        pytest.skip(f"PCP's {LIBPCP_PMDA} is not installed")
    if not SAMPLE_LIBRARY.exists():
        pytest.skip("PCP's sample agent library is not installed")


def pminfo_local(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Our pminfo -L with a pmcd.conf naming no agent and a default namespace holding the
    sample library's names (as sampledso, domain 30): what -K adds is all there is."""
    conf = tmp / "pmcd.conf"
    conf.write_text("# no agents\n")
    root = tmp / "root"
    sample = (SAMPLE_LIBRARY.parent / "pmns").read_text()
    root.write_text("#define SAMPLE 30\nroot {\n    sample\n}\n" + sample)
    env = dict(
        os.environ,
        PYTHONPATH=str(ROOT),
        PCP_DERIVED_CONFIG="",
        PCP_PMCDCONF_PATH=str(conf),
        PMNS_DEFAULT=str(_preprocessed(root)),
        PCP_PMDAS_DIR=str(SAMPLE_LIBRARY.parent.parent),
    )
    return subprocess.run(
        [sys.executable, "-m", "purepcp.tools.pminfo", "-L", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp,
    )


def _preprocessed(root: Path) -> Path:
    """ROOT through pmcpp, as an installed namespace is (libpcp reads it as it is)."""
    from purepcp.pmapi.pmns import PMNS

    out = root.with_suffix(".out")
    out.write_text(PMNS.from_file(str(root)).dumps())
    return out


@pytest.mark.interop
def test_a_c_library_added_with_dash_k_answers(tmp_path):
    require_sample_library()
    add = f"add,30,{SAMPLE_LIBRARY},sample_init"
    done = pminfo_local(tmp_path, "-K", "clear", "-K", add, "-f", "sample.long.one", "sample.bin")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("\nsample.long.one\n    value 1\n")
    assert 'inst [900 or "bin-900"] value 900' in done.stdout


@pytest.mark.interop
def test_a_library_that_cannot_be_loaded_is_libpcps_one_warning(tmp_path):
    """The context goes on without the domain: its metrics have no agent."""
    require_sample_library()
    cases = {
        f"add,30,{tmp_path}/none.so,x_init": (
            f'__pmConnectLocal: Warning: cannot find DSO at "{tmp_path}/none.so.so" or '
            f'"{tmp_path}/none.so"\n'
        ),
        f"add,30,{SAMPLE_LIBRARY},no_such_init": (
            '__pmConnectLocal: Warning: couldn\'t find init function "no_such_init" in DSO '
            f'"{SAMPLE_LIBRARY}"\n'
        ),
        "add,30,/etc/passwd,x_init": (
            '__pmConnectLocal: Warning: error attaching DSO "/etc/passwd"\n'
            "/etc/passwd: invalid ELF header\n\n"
        ),
    }
    for add, warning in cases.items():
        done = pminfo_local(tmp_path, "-K", "clear", "-K", add, "-f", "sample.long.one")
        assert done.stderr == warning, add
        assert done.stdout == "sample.long.one: pmLookupDesc: No PMCD agent for domain of request\n"


def test_dash_k_tells_python_agents_from_c_libraries():
    """add,DOMAIN,MODULE[,CLASS] is ours; add,DOMAIN,PATH,INIT is PCP's, INIT required."""
    agents = apply_changes([], ["add,253,purepcp.agents.simple", "add,30,/x/pmda_s.so,s_init"])
    assert [(a.domain, a.spec, a.entry) for a in agents] == [
        (253, "purepcp.agents.simple", None),
        (30, "/x/pmda_s.so", "s_init"),
    ]
    with pytest.raises(LocalSpecError, match="missing init-routine"):
        apply_changes([], ["add,30,/x/pmda_s.so"])


@pytest.mark.interop
def test_the_host_reports_how_loading_went(tmp_path):
    """--report FD: one line for the client to word (dbpmda, a local context)."""
    require_sample_library()

    def report(path: str, entry: str) -> str:
        read, write = os.pipe()
        argv = [sys.executable, "-m", "purepcp.pmda.dsohost", "--report", str(write)]
        host = subprocess.Popen(
            [*argv, path, entry, "30", "sampledso"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            pass_fds=(write,),
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
        )
        os.close(write)
        with os.fdopen(read) as got:
            line = got.read()
        host.stdin.close()  # (a loaded library's pmdaMain sees the end of its pipe)
        host.stdout.close()
        host.wait(timeout=60)
        return line

    assert report(str(SAMPLE_LIBRARY), "sample_init") == "ok\t7\n"
    assert report(str(SAMPLE_LIBRARY), "nosuch") == "entry\n"
    assert report("/etc/passwd", "x") == "attach\t/etc/passwd: invalid ELF header\n"


@pytest.mark.interop
def test_a_local_context_lists_a_dynamic_subtree_by_its_agents_children(tmp_path):
    """QA 256: a local context traverses by asking each non-leaf for its children, as
    libpcp's TraversePMNS_local does, so sample.secret's names come in its children's
    order (foo's whole subtree, then bar), with or without -n."""
    require_sample_library()
    add = f"add,30,{SAMPLE_LIBRARY},sample_init"
    expected = [
        "sample.secret.foo.bar.max.redirect",
        "sample.secret.foo.bar.three",
        "sample.secret.foo.bar.four",
        "sample.secret.foo.bar.grunt.five",
        "sample.secret.foo.bar.grunt.snort.six",
        "sample.secret.foo.bar.grunt.snort.huff.puff.seven",
        "sample.secret.foo.one",
        "sample.secret.foo.two",
        "sample.secret.bar",
    ]
    done = pminfo_local(tmp_path, "-K", "clear", "-K", add, "sample.secret")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == expected
    # (-n: the loaded namespace has the subtree's root as a leaf; the agent fills it in)
    root = _preprocessed(tmp_path / "root")
    done = pminfo_local(tmp_path, "-K", "clear", "-K", add, "-n", str(root), "sample.secret")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == expected
