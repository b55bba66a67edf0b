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


def pminfo_local(
    tmp: Path, *args: str, namespace: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Our pminfo -L with a pmcd.conf naming no agent and a default namespace holding the
    sample library's names (as sampledso, domain 30), or NAMESPACE's: what -K adds is all
    there is."""
    conf = tmp / "pmcd.conf"
    conf.write_text("# no agents\n")
    root = tmp / "root"
    if namespace is None:
        sample = (SAMPLE_LIBRARY.parent / "pmns").read_text()
        namespace = "#define SAMPLE 30\nroot {\n    sample\n}\n" + sample
    root.write_text(namespace)
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


RECORDER = """
from purepcp.pmda.agent import Agent


class Recorder(Agent):
    name = "recorder"
    wants_credentials = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.seen = []

    def handle(self, pdu):
        self.seen.append(pdu)
        return super().handle(pdu)


class Deaf(Recorder):
    wants_credentials = False
"""


def test_a_local_context_gives_its_agents_its_credentials_as_libpcp(tmp_path, monkeypatch):
    """QA 735, 889, 974, 852: libpcp's __pmConnectLocal gives an agent that asks for them
    (PDU_FLAG_AUTH) the context's attributes as soon as it is loaded (build_dsoattrs):
    the container PCP_CONTAINER names, this process's uid, gid and pid, from context 0,
    newest first; pmdaproc refuses every fetch from a context without them.  An agent
    that does not ask gets none, then or later; none comes twice."""
    from purepcp.pmapi.pdu.constants import Attr
    from purepcp.pmapi.pdu.records import AttrPDU, DescReqPDU
    from purepcp.pmcd.local import LocalSource

    (tmp_path / "recorder.py").write_text(RECORDER)
    (tmp_path / "pmns").write_text("recorder {\n    one\tRECORDER:0:1\n}\n")
    conf = tmp_path / "pmcd.conf"
    conf.write_text("# no agents\n")
    monkeypatch.setenv("PCP_CONTAINER", "box")
    agent = f"{tmp_path}/recorder.py"
    changes = ["clear", f"add,200,{agent},Recorder", f"add,201,{agent},Deaf"]
    source = LocalSource.start(changes, str(conf))
    try:
        recorder, deaf = (source.channels[d].agent for d in (200, 201))
        assert recorder.seen == [
            AttrPDU(Attr.PCP_ATTR_PROCESSID, f"{os.getpid()}\0".encode(), 0),
            AttrPDU(Attr.PCP_ATTR_GROUPID, f"{os.getgid()}\0".encode(), 0),
            AttrPDU(Attr.PCP_ATTR_USERID, f"{os.getuid()}\0".encode(), 0),
            AttrPDU(Attr.PCP_ATTR_CONTAINER, b"box\0", 0),
        ]
        client = recorder.clients.client(0)
        assert (client.uid, client.gid, client.pid) == (os.getuid(), os.getgid(), os.getpid())
        for domain in (200, 201):
            source.exchange(DescReqPDU(domain << 22 | 1))
        assert [type(pdu) for pdu in recorder.seen[4:]] == [DescReqPDU]
        assert [type(pdu) for pdu in deaf.seen] == [DescReqPDU]
    finally:
        source.close()


@pytest.mark.interop
def test_pcps_proc_library_answers_a_local_context(tmp_path):
    """QA 889: pmdaproc answers a local context's fetch (it refused every one, "No
    permission to perform requested operation", when it was not told who asks)."""
    library = SAMPLE_LIBRARY.parent.parent / "proc" / "pmda_proc.so"
    require_sample_library()
    if not library.exists():
        pytest.skip("PCP's proc agent library is not installed")
    add = f"add,3,{library},proc_init"
    namespace = (library.parent / "root_proc").read_text()
    done = pminfo_local(
        tmp_path, "-K", "clear", "-K", add, "-f", "proc.psinfo.pid", namespace=namespace
    )
    assert done.returncode == 0, done.stderr
    assert "No permission" not in done.stdout
    assert f"] value {os.getpid()}\n" in done.stdout
