"""pcp.pmda, PCP's Python agent API on purepcp's agent framework: units of its rules,
and PCP's own Python agents run unchanged under PCP's dbpmda by PCP's binding and by
ours, their transcripts compared."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import cpmapi as c
from pcp import pmda
from pcp.pmda_agent import fetch_status, tree_order
from pcp.pmda_cache import InstanceCache
from tests.support.pcp_agents import (
    CALLBACKS_AGENT,
    CALLBACKS_REQUESTS,
    DEMO_AGENT,
    DEMO_REQUESTS,
)
from tests.support.pcp_bindings import SYSTEM_PYTHON, require_pcp_bindings

LOG = logging.getLogger("test_pmda")
DBPMDA = "/usr/bin/dbpmda"
PMDAS = Path("/var/lib/pcp/pmdas")


# -- the fetch callback's [value, status] -------------------------------------------------


@pytest.mark.parametrize(
    ("type_", "answer", "expected"),
    [
        (c.PM_TYPE_U32, [7, 1], (1, 7)),
        (c.PM_TYPE_U32, [-1, 1], (1, 0xFFFFFFFF)),  # "I": masked, as cpmda parses it
        (c.PM_TYPE_32, [c.PM_ERR_INST, 0], (c.PM_ERR_INST, None)),
        (c.PM_TYPE_32, [2**40, 1], (-22, None)),  # out of range for "i" both ways: -EINVAL
        (c.PM_TYPE_DOUBLE, [3, 1], (1, 3.0)),
        (c.PM_TYPE_STRING, ["up", 1], (1, "up")),
        (c.PM_TYPE_STRING, [5, 1], (c.PM_ERR_TYPE, None)),
        (c.PM_TYPE_U64, None, (0, None)),
        (c.PM_TYPE_U64, (1, 1), (0, None)),  # a tuple means no values, as in cpmda
        (c.PM_TYPE_U64, [0, 0], (0, None)),
        (c.PM_TYPE_U32, ["x", "y"], (-22, None)),  # -EINVAL
        (c.PM_TYPE_AGGREGATE, [b"x", 1], (-95, None)),  # -ENOTSUP
    ],
)
def test_fetch_status(type_, answer, expected):
    assert fetch_status(type_, answer, LOG) == expected


def test_cache_numbers_names_in_order_and_keeps_them():
    cache = InstanceCache(0)
    assert [cache.add(n) for n in ("sec", "min", "hour")] == [0, 1, 2]
    cache.mark(False)
    assert cache.add("hour") == 2 and cache.add("day") == 3
    assert [e.name for e in cache.active()] == ["hour", "day"]
    assert cache.lookup(0) is None


def test_helpers_match_cpmda():
    assert pmda.PMDA.uptime(59) == "00:00:59"
    assert pmda.PMDA.uptime(86400 + 3661) == "1day 01:01:01"
    assert pmda.PMDA.uptime(3 * 86400) == "3days 00:00:00"
    assert pmda.PMDA.units(1, 0, 0, 0, 0, 0) == 268435456
    assert pmda.PMDA.units(0, 1, 0, 0, 3, 0) == 16789504
    assert pmda.PMDA.indom_build(253, 1) == 0x3F400001
    assert pmda.PMDA.pmid_build(253, 2, 4) == (253 << 22) | (2 << 10) | 4


def test_pmns_and_domain_for_install_scripts(tmp_path):
    """An Install script's PCP_PYTHON_PMNS and PCP_PYTHON_DOMAIN runs print, not serve."""
    script = tmp_path / "pmdademo.python"
    script.write_text(DEMO_AGENT)
    env = {**os.environ, "PCP_PYTHON_DOMAIN": "1"}
    done = subprocess.run([sys.executable, str(script)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=60, check=True)  # fmt: skip
    assert done.stdout == "#define DEMO 300\n"
    env = {**os.environ, "PCP_PYTHON_PMNS": "root"}
    done = subprocess.run([sys.executable, str(script)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=60, check=True)  # fmt: skip
    lines = done.stdout.splitlines()
    assert lines[0] == "root {" and lines[-1] == "}"
    assert sorted(lines[1:-1]) == ["\tdemo\t300:*:*", "\tother\t300:*:*"]
    assert not list(tmp_path.glob("*.log"))  # no log opened for an Install run


# -- PCP's agents under PCP's dbpmda, by PCP's binding and by ours --------------------------

_VOLATILE = [
    (re.compile(r"dump from 0x[0-9a-f]+"), "dump from ADDR"),
    (re.compile(r"^open pipe \S+", re.M), "open pipe PYTHON"),
    (re.compile(r"^Start \S+ PMDA: \S+", re.M), "Start PYTHON PMDA: PYTHON"),
]


def dbpmda_transcript(python: str, agent: list[str], pmns: str, requests: str, where: Path,
                      masks=(), extra_env=None) -> str:  # fmt: skip
    """dbpmda's transcript of REQUESTS to AGENT (run by PYTHON as a pipe agent)."""
    (where / "agent.pmns").write_text(pmns)
    env = {**os.environ, "PCP_TMP_DIR": str(where), "PCP_LOG_DIR": str(where)}
    env.update(extra_env or {})
    script = f"open pipe {python} {' '.join(agent)}\n{requests}"
    done = subprocess.run([DBPMDA, "-n", "agent.pmns", "-e"], input=script, cwd=where,
                          env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
    text = done.stdout + done.stderr
    for pattern, replacement in (*_VOLATILE, *masks):
        text = pattern.sub(replacement, text)
    return text


def both_transcripts(agent, pmns, requests, tmp_path, masks=(), env=None):
    """The transcripts (PCP's binding's, ours) of REQUESTS to AGENT; ENV is added to
    our interpreter's environment."""
    require_pcp_bindings()
    if not os.access(DBPMDA, os.X_OK):
        pytest.skip("PCP's dbpmda is not installed (Debian package pcp)")
    out = []
    for which, python in (("pcp", SYSTEM_PYTHON), ("ours", sys.executable)):
        where = tmp_path / which
        where.mkdir()
        extra = env if python == sys.executable else None
        out.append(dbpmda_transcript(python, agent, pmns, requests, where, masks, extra))
    return out


SIMPLE_REQUESTS = """\
children simple
traverse simple
desc simple.numfetch
desc simple.color
desc simple.now
desc simple.time.user
fetch simple.numfetch simple.color simple.time.user
instance 253.0
instance 253.1
instance 253.0 1
instance 253.0 green
instance 253.0 purple
instance 253.7
text simple.color
text indom 253.0
store simple.numfetch "42"
fetch simple.numfetch
store simple.color "-3"
store simple.time.user "1"
fetch simple.color
label domain
label indom 253.0
label indom 253.1
label cluster simple.color
label item simple.color
label instances 253.1
label instances 253.0
desc 253.9.9
fetch 253.9.9
"""


@pytest.mark.interop
def test_simple_under_dbpmda(tmp_path):
    """pmdasimple.python, unchanged: namespace, descriptors, values, instances, help,
    stores and labels as PCP's binding answers them."""
    agent = str(PMDAS / "simple" / "pmdasimple.python")
    if not os.path.exists(agent):
        pytest.skip("PCP's simple agent is not installed (Debian package pcp)")
    masks = [
        (
            re.compile(r"^(\s+value) [0-9.e+-]+$", re.M),
            r"\1 SECONDS",
        ),  # simple.time.* (only doubles)
        (re.compile(r"253\.1\.2: \S+ ->"), "253.1.2: SECONDS ->"),
    ]
    pcp, ours = both_transcripts(
        [agent, "-d", "253"], "root {\n\tsimple\t253:*:*\n}\n", SIMPLE_REQUESTS, tmp_path, masks
    )
    assert "Labels:" in pcp and "Error" not in pcp.split("desc 253.9.9")[0].replace("Error PDU", "")
    assert ours == pcp


@pytest.mark.interop
def test_trivial_under_dbpmda(tmp_path):
    agent = str(PMDAS / "trivial" / "pmdatrivial.python")
    if not os.path.exists(agent):
        pytest.skip("PCP's trivial agent is not installed (Debian package pcp)")
    masks = [(re.compile(r"value \d+( \S+ 0x[0-9a-f]+)?"), "value NOW")]
    requests = "traverse trivial\ndesc trivial.time\nfetch trivial.time\ntext trivial.time\n"
    pcp, ours = both_transcripts(
        [agent], "root {\n\ttrivial\t250:*:*\n}\n", requests, tmp_path, masks
    )
    assert "value NOW" in pcp
    assert ours == pcp


@pytest.mark.interop
def test_agent_of_our_own_under_dbpmda(tmp_path):
    """A small agent exercising tables, help text from add_metric/add_indom, failing
    callbacks, no store callback and default domain labels, both ways."""
    script = tmp_path / "pmdademo.python"
    script.write_text(DEMO_AGENT)
    pmns = "root {\n\tdemo\t300:*:*\n\tother\t300:*:*\n}\n"
    pcp, ours = both_transcripts([str(script)], pmns, DEMO_REQUESTS, tmp_path)
    assert '"thing 0"' in pcp
    assert ours == pcp


@pytest.mark.interop
def test_simple_under_our_pmcd():
    """pmdasimple.python as a pipe agent of our pmcd, run by PCP's binding and by ours:
    PCP's pminfo -dfmtT answers the same (values that move with time masked)."""
    require_pcp_bindings()
    agent = PMDAS / "simple" / "pmdasimple.python"
    if not agent.exists() or not os.access("/usr/bin/pminfo", os.X_OK):
        pytest.skip("PCP's simple agent and pminfo are not installed (Debian package pcp)")
    answers = []
    # pmcd runs its agents as PCP's user: a directory it can read, not pytest's (0700)
    with tempfile.TemporaryDirectory(prefix="pcp-pmda-") as shared:
        os.chmod(shared, 0o755)
        for which, python in (("pcp", SYSTEM_PYTHON), ("ours", sys.executable)):
            answers.append(_pminfo_of_simple(Path(shared) / which, python, agent))
    assert "simple.color" in answers[0][1]
    assert answers[1] == answers[0]


def _pminfo_of_simple(where: Path, python: str, agent: Path) -> tuple[int, str, str]:
    """pminfo -dfmtT simple against our pmcd running AGENT by PYTHON, in WHERE."""
    from tests.support.our_pmcd import our_pmcd

    (where / "simple").mkdir(parents=True)  # its PCP_PMDAS_DIR: simple.conf, no help
    (where / "simple" / "simple.conf").write_text("sec,min,hour\n")
    (where / "root").write_text("root {\n\tsimple\t253:*:*\n}\n")
    for path in (where, where / "simple"):
        path.chmod(0o755)
    # (our pmcd's PYTHONPATH would give PCP's interpreter our pcp package)
    conf = f"simple\t253\tpipe\tbinary\t/usr/bin/env -u PYTHONPATH {python} {agent} -d 253\n"
    with our_pmcd(conf, where, "-n", str(where / "root")) as pmcd:
        done = pmcd.run("/usr/bin/pminfo", "-dfmtT", "simple")
    text = re.sub(r"(Units: sec\n.*\n    value) \S+", r"\1 SECONDS", done.stdout)  # simple.time.*
    text = re.sub(r'(inst \[\d+ or "(sec|min|hour)"\] value) \d+', r"\1 NOW", text)
    return done.returncode, text, done.stderr


def test_dynamic_root_name_is_an_inner_node():
    """A name given a dynamic root's PMID (511.DOMAIN.0, as openmetrics names its root)
    holds the names under it, as pmdaTreeInsert makes it; it used to be a leaf that
    replaced them all."""
    root = (511 << 22) | (144 << 10)
    names = {root: "om", 144 << 22 | 1: "om.control.calls", 144 << 22 | 1025: "om.demo.x"}
    assert tree_order(names) == [
        ("om.demo.x", 144 << 22 | 1025),
        ("om.control.calls", 144 << 22 | 1),
    ]


#: An agent that adds a metric in its refresh_metrics hook (as openmetrics does): the
#: namespace requests must run the hook first, as cpmda's pmns_* do.
LATE_AGENT = """\
import cpmapi as c
from pcp.pmapi import pmUnits
from pcp.pmda import PMDA, pmdaMetric


class Late(PMDA):
    def __init__(self):
        super().__init__("late", 303)
        self.grown = False
        self.set_refresh_metrics(self.grow)
        self.set_fetch_callback(lambda cluster, item, inst: [item + 40, 1])

    def grow(self):
        if not self.grown:
            self.grown = True
            metric = pmdaMetric(self.pmid(1, 2), c.PM_TYPE_U32, c.PM_INDOM_NULL,
                                c.PM_SEM_INSTANT, pmUnits())
            self.add_metric("late.grown", metric, "added late")


Late().run()
"""


@pytest.mark.interop
def test_names_after_the_refresh_metrics_hook(tmp_path):
    script = tmp_path / "pmdalate.python"
    script.write_text(LATE_AGENT)
    pmns = "root {\n\tlate\t303:*:*\n}\n"
    requests = "traverse late\ndesc late.grown\nfetch late.grown\ntext late.grown\n"
    pcp, ours = both_transcripts([str(script)], pmns, requests, tmp_path)
    assert "   late.grown" in pcp and "value 42" in pcp
    assert ours == pcp


@pytest.mark.interop
def test_callbacks_and_caches_under_dbpmda(tmp_path):
    """Every callback an agent may set, a cache instance domain re-made mid-run, stores
    refused and accepted, labels and notes at each level, both ways."""
    script = tmp_path / "pmdademo2.python"
    script.write_text(CALLBACKS_AGENT)
    masks = [
        (re.compile(r"^\[[^]]+\] pmdademo2\(\d+\)", re.M), "[DATE] pmdademo2(PID)"),
        (re.compile(r"^(Log (for \S+ on \S+ started|finished)) .*$", re.M), r"\1 DATE"),
    ]
    pmns = "root {\n\tdemo2\t301:*:*\n}\n"
    pcp, ours = both_transcripts([str(script)], pmns, CALLBACKS_REQUESTS, tmp_path, masks)
    assert 'name="gamma"' in pcp and "i1 a0,1 r0 r1" in pcp
    assert ours == pcp


#: PCP's agents that start here (their modules installed) whether or not the service they
#: report on runs, and the domain each gives itself.
PCP_AGENTS = {
    "zswap": 125,
    "unbound": 132,
    "elasticsearch": 108,
    "nfsclient": 62,
    "haproxy": 145,
    "gluster": 118,
}


@pytest.mark.interop
@pytest.mark.parametrize("name", sorted(PCP_AGENTS))
def test_pcp_agent_under_dbpmda(tmp_path, name):
    """One of PCP's agents, unchanged: every metric's name, descriptor, values (or the
    error for the missing service) and help, as PCP's binding gives them.  An agent that
    imports PCP's C module cpmda (zswap, elasticsearch) gets ours through pcp.cmodules."""
    agent = PMDAS / name / f"pmda{name}.python"
    if not agent.exists():
        pytest.skip(f"PCP's {name} agent is not installed (Debian package pcp)")
    domain = PCP_AGENTS[name]
    pmns = f"root {{\n\t{name}\t{domain}:*:*\n}}\n"
    names = _agent_names(agent, name, pmns, tmp_path)
    requests = f"traverse {name}\n" + "".join(f"desc {n}\nfetch {n}\ntext {n}\n" for n in names)
    pcp, ours = both_transcripts([str(agent)], pmns, requests, tmp_path)
    assert f"Metric: {name}" in pcp
    assert ours == pcp


def _agent_names(agent: Path, name: str, pmns: str, tmp_path: Path) -> list[str]:
    """The metric names PCP's binding gives AGENT."""
    where = tmp_path / "names"
    where.mkdir()
    text = dbpmda_transcript(SYSTEM_PYTHON, [str(agent)], pmns, f"traverse {name}\n", where)
    return re.findall(rf"^   ({re.escape(name)}\.\S+)$", text, re.M)
