"""pmlogconf: its text rules, group files and probe rules, the states groups end in and
the configuration written; then whole runs beside PCP 6's own pmlogconf against PCP's
pmcd and ours (interop): the same messages, exit status and configuration, created,
updated through the questions, and reported (-g, -s, -v).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from purepcp.pmapi.ids import PM_ID_NULL
from purepcp.tools.pmlogconf import config, groups, text
from purepcp.tools.pmlogconf.command import OUR_GROUPS
from purepcp.tools.pmlogconf.options import USAGE, read_options
from tests.support.reference_pmcd import require_reference

PY = sys.executable
PCP_GROUPS = "/var/lib/pcp/config/pmlogconf"


# -- text rules ---------------------------------------------------------------------------


def test_descriptions_fold_past_the_goal_to_a_blank():
    words = "Kernel run queue, load averages, context switches and interrupts and more"
    assert text.fold(words, 20, 30) == [
        "Kernel run queue, load",
        "averages, context switches",
        "and interrupts and more",
    ]
    assert text.fold("x" * 80, 65, 75) == ["x" * 75, "x" * 5]
    assert text.fold("  lead", 65, 75) == ["lead"]


def test_append_glues_as_pmlogconf_does():
    assert text.append(None, "one\n", " ") == "one"
    assert text.append("one", "two", " ") == "one two"
    assert text.append("one", "two\n", " ") == "one two\n"
    assert text.append(None, "a\n", "\n") == "a\n"
    assert text.append("a\n", "b\n", "\n") == "a\nb\n"
    assert text.append("a\n", "b", "\n") == "a\n\nb"


# -- group files and rules ----------------------------------------------------------------


def _group(body: str, tag: str = "qa/g") -> groups.Group:
    group = groups.parse_group_file("#pmlogconf-setup 2.0\n" + body, tag)
    assert group is not None
    return group


def test_a_group_file_read():
    g = _group("ident  first part\nident second\n# comment\nprobe\tx.y values ? include : "
               "exclude\n\tx.y   \n   x.z\ndelta 1 min\n")  # fmt: skip
    assert (g.ident, g.metric, g.probe, g.delta) == (
        "first part second", "x.y", "x.y values ? include : exclude", "1 min")  # fmt: skip
    assert g.metrics == ["x.y   ", "x.z"]
    assert g.valid
    assert groups.parse_group_file("#pmlogconf-setup 1.0\n", "t") is not None  # (PCP's test)
    assert groups.parse_group_file("#pmlogconf-setup 3.1\n", "t") is None
    assert groups.parse_group_file("# not a group\n", "t") is None


@pytest.mark.parametrize(
    ("probe", "condition", "value", "true", "false"),
    [
        ("m", "exists", None, groups.AVAILABLE, groups.EXCLUDE),
        ("m values", "values", None, groups.AVAILABLE, groups.EXCLUDE),
        ("m > 10 ? include : available", ">", "10", groups.INCLUDE, groups.AVAILABLE),
        ("m ~ ^a ? available : exclude", "~", "^a", groups.AVAILABLE, groups.EXCLUDE),
        ("m ? include : exclude", "exists", None, groups.INCLUDE, groups.EXCLUDE),
    ],
)
def test_probe_rules(probe, condition, value, true, false):
    g = _group(f"probe {probe}\n")
    assert groups.prepare(g, "dir")
    assert (g.condition, g.value, g.true_state, g.false_state) == (condition, value, true, false)


@pytest.mark.parametrize(
    ("probe", "message"),
    [
        ("m bozo ? x : y", 'condition operator "bozo ? x : y" not recognized'),
        ("m == ? include : exclude", 'expected "?" after condition, found "include : exclude"'),
        ("m ==", "missing condition operand after == operator"),
        ("m exists ? include : foo", 'condition false state "foo" not recognized'),
        ("m exists ? include exclude", 'missing ":" in state rule at "exclude"'),
        ("m exists ? include :", "missing false state"),
        ("m exists ? include : exclude more", 'extra state rule components: "more"'),
        ("m exists include", 'expected "?" after condition, found "include"'),
    ],
)  # fmt: skip
def test_bad_probe_rules(probe, message, capsys):
    g = _group(f"probe {probe}\n")
    assert not groups.prepare(g, "dir")
    assert not g.valid
    assert capsys.readouterr().err == f"pmlogconf: Error: dir/qa/g {message}\n"


class _Answers:
    def __init__(self, values, type_):
        self._values, self._type = values, type_

    def values(self, pmid):
        return self._values

    def type_of(self, pmid):
        return self._type


@pytest.mark.parametrize(
    ("probe", "values", "type_", "state"),
    [
        ("m > 10 ? include : available", [5, 11], 3, groups.INCLUDE),
        ("m > 10 ? include : available", [5], 3, groups.AVAILABLE),
        ("m != 10 ? include : exclude", [10], 3, groups.EXCLUDE),
        ('m == "abc" ? include : exclude', ["abc"], 6, groups.INCLUDE),
        ("m ~ ^1.*0$ ? include : exclude", [10], 3, groups.INCLUDE),
        ("m values", [], 3, groups.EXCLUDE),
        ("m values", [1], 3, groups.AVAILABLE),
    ],
)
def test_states_from_probes(probe, values, type_, state):
    g = _group(f"probe {probe}\n")
    g.pmid = 1
    assert groups.prepare(g, "dir")
    assert groups.settle(g, _Answers(values, type_), "dir") == state


def test_saved_states_and_force():
    g = _group("probe m ? include : available\n")
    groups.prepare(g, "d")
    g.pmid, g.saved_state = PM_ID_NULL, groups.INCLUDE
    assert groups.settle(g, _Answers(None, None), "d") == groups.AVAILABLE
    g.pmid = 1
    assert groups.settle(g, _Answers([], 3), "d") == groups.INCLUDE
    forced = _group("force exclude\n")
    groups.prepare(forced, "d")
    assert groups.settle(forced, _Answers(None, None), "d") == groups.EXCLUDE


# -- the configuration --------------------------------------------------------------------


def test_group_sections():
    g = groups.Group("cpu/x", ident="CPU things", metrics=["a.b", "c"], delta="5 sec")
    g.probe_state = groups.INCLUDE
    assert config.group_text(g) == (
        "#+ cpu/x:y:5 sec:\n## CPU things\nlog advisory on 5 sec {\n\ta.b\n\tc\n}\n"
    )
    g.probe_state = groups.AVAILABLE
    assert config.group_text(g) == "#+ cpu/x:n:5 sec:\n## CPU things\n"
    g.probe_state = groups.EXCLUDE
    assert config.group_text(g) == "#+ cpu/x:x::\n"


def test_an_existing_configuration_read_back():
    body = (
        "#pmlogconf 2.0\n#\n#+ groupdir /g\n#\n#+ a:y:10 sec:\n## one\nlog mandatory on 10 sec {\n"
        "\tm.a\n}\n#----\n#+ b:x::\n#----\n#+ c:q:\n#----\n"
        "# DO NOT UPDATE THE FILE ABOVE THIS LINE\nmine\n"
    )
    seen, warnings = [], []
    found = config.read_existing(body, "f", "/other", seen.append, warnings.append)
    assert found.header == "#pmlogconf 2.0\n#\n#+ groupdir /g\n#\n"
    assert found.trailer == "# DO NOT UPDATE THE FILE ABOVE THIS LINE\nmine\n"
    assert [(g.tag, g.saved_state, g.saved_delta, g.logging) for g in seen] == [
        ("a", groups.INCLUDE, "10 sec", groups.MANDATORY),
        ("b", groups.EXCLUDE, None, 0),
    ]
    assert warnings == [
        "pmlogconf: Warning: using base directory for group files from command line (/other) "
        "which is different from that in f (/g)\n",
        "pmlogconf: missing state for c at line 13 of f\n",
    ]


def test_option_combinations_refused():
    assert read_options(["-c", "-g", "x", "y"]).messages == [
        "Option -c cannot be used with -g,--group or -s,--setup\n"
    ]
    o = read_options(["-d", "x", "-s", "y", "-g", "z"])
    assert o.errors == 2


def test_our_group_files_are_version_2_and_parse():
    found = groups.read_groups(OUR_GROUPS)
    assert len(found) >= 10
    for group in found:
        assert groups.prepare(group, OUR_GROUPS), group.tag
        assert group.metrics and group.ident


# -- whole runs beside PCP's pmlogconf ----------------------------------------------------


def ours_cmd() -> list[str]:
    return [PY, "-m", "purepcp.tools.pmlogconf"]


def test_usage(tmp_path):
    done = subprocess.run([*ours_cmd(), "a", "b"], capture_output=True, text=True, cwd=tmp_path)
    assert (done.returncode, done.stderr) == (1, USAGE)


@pytest.fixture(scope="module", params=["reference", "ours"])
def pmcd(request, tmp_path_factory):
    from tests.support.tool_pmcds import running_pmcd

    require_reference("pmlogconf")
    tmp = tmp_path_factory.mktemp(f"pmlogconf-{request.param}")
    with running_pmcd(request.param, tmp) as (_, host, env):
        yield host, dict(env, PCP_VAR_DIR="/var/lib/pcp")


def _both(pmcd, tmp_path: Path, args: list[str], answers: str = "", seed: str | None = None):
    """Run PCP's pmlogconf and ours with ARGS (the configuration last, as CONF), ANSWERS
    on stdin, from the same starting configuration SEED: (outputs, configurations)."""
    host, env = pmcd
    runs = {}
    for who, cmd in (("pcp", ["pmlogconf"]), ("ours", ours_cmd())):
        where = tmp_path / who
        where.mkdir(exist_ok=True)
        conf = where / "conf"
        if seed is not None:
            conf.write_text(seed)
        argv = [*cmd, "-h", host, *[str(conf) if a == "CONF" else a for a in args]]
        done = subprocess.run(argv, input=answers, capture_output=True, text=True, env=env,
                              cwd=where, timeout=120)  # fmt: skip
        out = re.sub(r"(\*\*\*|---) (\S+)\t.*", r"\1 \2", done.stdout.replace(str(where), "W"))
        written = conf.read_text() if conf.exists() else None
        runs[who] = ((done.returncode, out, done.stderr.replace(str(where), "W")), written)
    return runs["pcp"], runs["ours"]


@pytest.mark.interop
@pytest.mark.parametrize("groupdir", [PCP_GROUPS, OUR_GROUPS])
def test_created_configuration_is_pcps(pmcd, tmp_path, groupdir):
    if not os.path.isdir(groupdir):
        pytest.skip(f"no group files in {groupdir}: PCP's (Debian package pcp) not installed")
    pcps, mine = _both(pmcd, tmp_path, ["-d", groupdir, "CONF"])
    assert mine == pcps


@pytest.mark.interop
@pytest.mark.parametrize(
    ("args", "answers"),
    [
        (["-v", "CONF"], "q\ny\n"),
        (["CONF"], "y\n5 sec\nn\n?\nm\n/disk\nq\ny\n"),
        (["-q", "CONF"], "n\nn\ny\n"),
        (["CONF"], "/zzzz\nn\nq\nn\n"),
        (["-r", "-c", "CONF"], ""),
        (["-g", "all", "CONF"], ""),
        (["-g", "kernel/load", "-v", "CONF"], ""),
    ],
)
def test_updates_and_reports_are_pcps(pmcd, tmp_path, args, answers):
    seed = tmp_path / "seed"
    seed.mkdir()
    env = pmcd[1]
    done = subprocess.run(["pmlogconf", "-h", pmcd[0], "-d", OUR_GROUPS, str(seed / "conf")],
                          capture_output=True, text=True, env=env, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    start = (seed / "conf").read_text().replace("kernel/identity:y:", "kernel/identity:n:")
    if "-c" in args or "-g" in args:  # (a group no file has: PCP's own crashes on some runs)
        start = start.replace("#+ proc/counts:", "#+ gone/away:y:default:\n#----\n#+ proc/counts:")
    pcps, mine = _both(pmcd, tmp_path, ["-d", OUR_GROUPS, *args], answers, seed=start)
    assert mine == pcps


@pytest.mark.interop
def test_setup_report_is_pcps(pmcd, tmp_path):
    group = tmp_path / "grp"
    bodies = (
        "probe pmcd.numagents > 0 ? include : exclude\n",
        "probe no.such.metric\n",
        "force available\n",
        "probe pmcd.version ~ ^[0-9] ? include : available\n",
    )
    for body in bodies:
        group.write_text(f"#pmlogconf-setup 2.0\nident\tqa\n{body}\tpmcd.numagents\n")
        pcps, mine = _both(pmcd, tmp_path, ["-v", "-s", str(group)])
        assert mine == pcps
