"""The verdicts of pmieconf's default rules, live: PCP's pmie and ours, side by side.

Our pmcd (pmcd and linux agents) is watched by four pmies started together, each every
second: PCP's pmie and ours, each on the rules PCP's pmieconf makes from PCP's templates
and on those our pmieconf makes from ours, every rule enabled by default left enabled; a
fifth, PCP's pmie on PCP's rules, watches a pmcd of PCP's (the whole stack's oracle).
The test then forces conditions on the host, one after the other: quiet (nothing),
a CPU burner, two spinning processes a processor (cpu.util, then cpu.load_average,
fire), and a file system filling up (filesys.filling fires, naming its device in its
action); every rule's shell action, with no holdoff, appends its expansions to a file.
Each pmie's evaluations are stamped as they arrive; what is compared is what each said
once a condition was steady (the evaluation straddling its start is left out), never raw
bytes, since the two pmies fetch at slightly different moments.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.our_pmcd import OurPMCD, our_pmcd
from tests.support.pmie_verdicts import (
    BusyMeter,
    Mounted,
    Verdicts,
    Watch,
    can_mount,
    cpu_burner,
    filling_filesystem,
    fullest_filesystem,
    growing_file,
    watching,
)
from tests.support.reference_pmcd import RunningPMCD, reference_pmcd
from tests.support.waiting import DEADLINE, wait_until

# (serial: the burner and the quiet stretch are the whole machine's; with -n, no other test
# runs meanwhile, to be slowed by the one or to trouble the other)
pytestmark = [pytest.mark.interop, pytest.mark.slow, pytest.mark.serial]

PY = sys.executable
PCP_PMIE = "/usr/bin/pmie"
PCP_PMIECONF = "/usr/bin/pmieconf"
PCP_TEMPLATES = "/var/lib/pcp/config/pmieconf"
LINUX_DSO = "/var/lib/pcp/pmdas/linux/pmda_linux.so"
PMCD_DSO = "/var/lib/pcp/pmdas/pmcd/pmda_pmcd.so"
PCP_AGENTS = [f"pmcd\t2\tdso\tpmcd_init\t{PMCD_DSO}", f"linux\t60\tdso\tlinux_init\t{LINUX_DSO}"]
OUR_TEMPLATES = str(Path(__file__).resolve().parents[2] / "tools" / "pmieconf" / "rules")

FORCED = ("cpu.util", "cpu.load_average", "filesys.filling")
UTIL = 80  # (percent busy: a burner on every processor is near 100)
LEAD = 2.2  # seconds from a condition's start to its first steady evaluation
STEADY = 4  # evaluations each pmie makes once the forced rule fired, before moving on
ACTIONS = "@ACTIONS@"  # (the file a rule file's shell action appends to, one per run)
#: filesys.filling's summary, which begins its action's lines, in each template set.
FILLING_SUMMARY = {"pcp": "File system is filling up ", "ours": "File system filling "}

#: The parameter names of each template set, where they differ.
LOAD_KNOBS = {"pcp": ("per_cpu_load", "min_load"), "ours": ("per_cpu", "minimum")}
FILLING_KNOBS = {"pcp": [("lead_time", "1 hour")], "ours": []}


def pmieconf(templates: str) -> list[str]:
    if templates == "pcp":
        return [PCP_PMIECONF, "-r", PCP_TEMPLATES]
    return [PY, "-m", "purepcp.tools.pmieconf", "-r", OUR_TEMPLATES]


def edits(templates: str, min_load: float, filling: int) -> list[list[str]]:
    """pmieconf commands: every rule each second, thresholds the test can reach, and,
    for syslog, a shell action appending each rule's summary and expansions (%v, %i, %h)
    to a file, each time the rule is true (no holdoff)."""
    per_cpu, minimum = LOAD_KNOBS[templates]
    found = [
        ["modify", "all", "delta", "1 sec"],
        ["modify", "global", "syslog_action", "no"],
        ["modify", "cpu.util", "threshold", str(UTIL)],
        ["modify", "cpu.load_average", per_cpu, "0.1"],
        ["modify", "cpu.load_average", minimum, f"{min_load:.2f}"],
        ["modify", "filesys.filling", "threshold", str(filling)],
        ["modify", "global", "user_action", "yes"],
        ["modify", "global", "holdoff", "0"],
        ["modify", "global", "user_command", f">> {ACTIONS} echo $rule$^ $action_expand$"],
    ]
    found += [["modify", "filesys.filling", *knob] for knob in FILLING_KNOBS[templates]]
    return found


def make_rules(templates: str, path: Path, min_load: float, filling: int) -> str:
    """The rule file pmieconf (PCP's, or ours) writes from its own templates."""
    for argv in [["-F"], *edits(templates, min_load, filling)]:
        done = subprocess.run(
            [*pmieconf(templates), "-f", str(path), *argv],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert (done.returncode, done.stderr) == (0, ""), f"pmieconf {argv}: {done.stderr}"
    return path.read_text()


def pmie(who: str) -> list[str]:
    return [PCP_PMIE] if who == "pcp" else [PY, "-m", "purepcp.tools.pmie"]


def run_name(who: str, rules: str) -> str:
    return f"pmie={who},rules={rules}"


#: Each run on our pmcd: (whose pmie, whose rules).
RUNS = [("pcp", "pcp"), ("ours", "pcp"), ("pcp", "ours"), ("ours", "ours")]
#: PCP's pmie on PCP's rules, watching a pmcd of PCP's (its pmcd and linux agents).
ORACLE = "pmie=pcp,rules=pcp,pmcd=pcp"
NAMES = [*(run_name(*run) for run in RUNS), ORACLE]


def templates_of(name: str) -> str:
    """Whose templates made the rules of run NAME."""
    return name.split(",rules=")[1].split(",")[0]


def reference_of(name: str) -> str:
    """The run of PCP's pmie on the rules of run NAME, on our pmcd."""
    return run_name("pcp", templates_of(name))


@dataclass(frozen=True)
class Phase:
    """A condition held from START to END: its steady evaluations are those arriving
    from START + LEAD on (their fetch, and the one before it, inside the condition)."""

    start: float
    end: float

    def steady(self, watch: Watch) -> list[Verdicts]:
        return watch.after(self.start + LEAD, self.end)


@dataclass(frozen=True)
class Scenario:
    watches: dict[str, Watch]
    quiet: Phase
    burning: Phase
    filling: Phase | None  # (None: no file system could be mounted, `unmountable` says why)
    device: str
    loaded: frozenset[str]  # (the runs whose cpu.load_average fired with the burner on)
    busy: float  # (the busiest second of the quiet stretch, percent)
    unmountable: str = ""
    actions: dict[str, str] = dataclasses.field(default_factory=dict)  # (what each run's wrote)
    pmcd: OurPMCD | None = None  # (still running while the tests look)
    oracle: RunningPMCD | None = None  # (PCP's, likewise)
    rules: dict[str, str] = dataclasses.field(default_factory=dict)  # (templates: file)


def _load1() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def _all(watches: dict[str, Watch], what: str, condition, within: float = DEADLINE) -> None:
    for watch in watches.values():
        watch.wait(what, condition, within)


def _those(watches: dict[str, Watch], what: str, condition, within: float) -> frozenset[str]:
    """The pmies of WATCHES for which CONDITION comes true within WITHIN seconds (counted
    from now for all of them)."""
    deadline = time.monotonic() + within
    found = set()
    for name, watch in watches.items():
        try:
            watch.wait(what, condition, max(deadline - time.monotonic(), 0.0))
        except RuntimeError:
            continue
        found.add(name)
    return frozenset(found)


def _count_after(t: float, n: int):
    return lambda evaluations: sum(e.at > t for e in evaluations) >= n


def _fired(rule: str, after: float):
    return lambda evaluations: any(e.at > after and rule in e.true() for e in evaluations)


def _thresholds() -> tuple[float, int]:
    """The 1-minute load and percent full to set the rules at: a little above this host's
    now (the burner gets the load there in seconds; the test's file system is filled past
    the other), so that only the forced conditions reach them."""
    fullest = fullest_filesystem()
    filling = max(80, math.ceil(fullest) + 5)
    if filling > 90:
        pytest.skip(f"a file system of this host is {fullest:.0f}% full: no room to fill ours")
    return _load1() + 0.3, filling


@pytest.fixture(scope="module")
def scenario(tmp_path_factory) -> Iterator[Scenario]:
    for tool in (PCP_PMIE, PCP_PMIECONF, LINUX_DSO, PMCD_DSO):
        if not os.path.exists(tool):
            pytest.skip(f"reference PCP 6 is not installed: no {tool} (Debian package pcp)")
    tmp = tmp_path_factory.mktemp("pmie-verdicts")
    (tmp / "pmcd").mkdir()
    min_load, filling = _thresholds()
    texts = {t: make_rules(t, tmp / f"{t}.template", min_load, filling) for t in ("pcp", "ours")}
    runs, actions = {}, {}
    conf = "pmcd 2 dso PmcdAgent purepcp.pmcd.pmcd_agent\nlinux 60 dso Linux purepcp.agents.linux\n"
    with our_pmcd(conf, tmp / "pmcd") as pmcd, reference_pmcd(PCP_AGENTS) as oracle:
        for name in NAMES:
            who, templates = (part.split("=")[1] for part in name.split(",")[:2])
            server = oracle if name == ORACLE else pmcd
            actions[name] = tmp / f"actions-{len(actions)}"
            path = tmp / f"rules-{len(actions)}"
            path.write_text(texts[templates].replace(ACTIONS, str(actions[name])))
            runs[name] = ([*pmie(who), "-h", server.host, "-c", str(path)], server.env)
        unmountable = can_mount()
        mounting = contextlib.nullcontext() if unmountable else filling_filesystem()
        with mounting as fs, watching(runs) as watches:
            found = _force(watches, fs, filling, unmountable)
        wrote = {name: path.read_text() if path.exists() else "" for name, path in actions.items()}
        yield dataclasses.replace(found, actions=wrote, pmcd=pmcd, oracle=oracle, rules=texts)


def _force(
    watches: dict[str, Watch], fs: Mounted | None, filling: int, unmountable: str | None
) -> Scenario:
    """Quiet, then a burner, then a file system FS filling up past FILLING percent (when
    there is one: else UNMOUNTABLE says why), each held until every pmie has said what
    it says of it."""
    _all(watches, "two evaluations", _count_after(0.0, 2))
    with BusyMeter() as meter:
        start = time.monotonic()
        _all(watches, "quiet evaluations", _count_after(start + LEAD, STEADY))
        quiet = Phase(start, time.monotonic())
    busy = meter.busiest(quiet.start, quiet.end)
    with cpu_burner(per_cpu=2):
        start = time.monotonic()
        _all(watches, "cpu.util true", _fired("cpu.util", start))
        loaded = _those(watches, "cpu.load_average true", _fired("cpu.load_average", start), 90)
        now = max(time.monotonic(), start + LEAD)
        _all(watches, "evaluations with the burner on", _count_after(now, STEADY))
        burning = Phase(start, time.monotonic())
    if fs is None:
        return Scenario(watches, quiet, burning, None, "", loaded, busy, unmountable or "")
    with growing_file(fs, filling + 4) as writer:
        wait_until(f"{fs.mount} {filling + 2}% full", lambda: fs.fullness() > filling + 2, writer)
        start = time.monotonic()
        _all(watches, "filesys.filling true", _fired("filesys.filling", start))
        now = max(time.monotonic(), start + LEAD)
        _all(watches, "evaluations while filling", _count_after(now, STEADY))
        full = Phase(start, time.monotonic())
    return Scenario(watches, quiet, burning, full, fs.device, loaded, busy)


# -- the verdicts -----------------------------------------------------------------------------

PAIRS = [
    (run_name("pcp", "pcp"), run_name("ours", "pcp")),
    (run_name("pcp", "ours"), run_name("ours", "ours")),
    (ORACLE, run_name("ours", "pcp")),
]
PAIR_IDS = ["pcp-rules", "our-rules", "pcp-pmcd"]


def settled(evaluations: list[Verdicts]) -> dict[str, set[str]]:
    """Each rule's values over EVALUATIONS."""
    found: dict[str, set[str]] = {}
    for e in evaluations:
        for rule, value in e.values.items():
            found.setdefault(rule, set()).add(value)
    return found


def disagreements(ref: list[Verdicts], mine: list[Verdicts]) -> list[str]:
    """The rules whose values differ: one pmie gives a rule the other does not, a rule
    always unknown to one is never unknown to the other, or the two hold one value each,
    not the same.  A rule that changes during the stretch (on noise in the host, or
    becoming known as its samples fill, one evaluation apart) is not compared otherwise."""
    theirs, ours = settled(ref), settled(mine)
    found = []
    for rule in sorted(set(theirs) | set(ours)):
        a, b = theirs.get(rule, set()), ours.get(rule, set())
        unknown = {"unknown"}
        if (
            not a
            or not b
            or (a == unknown and not b & unknown)
            or (b == unknown and not a & unknown)
            or (len(a) == len(b) == 1 and a != b)
        ):
            found.append(f"{rule}: {sorted(a)} against {sorted(b)}")
    return found


def _phase(scenario: Scenario, name: str) -> Phase:
    found = getattr(scenario, name)
    if found is None:
        pytest.skip(f"no file system filled: {scenario.unmountable}")
    return found


@pytest.mark.parametrize(("ref", "mine"), PAIRS, ids=PAIR_IDS)
@pytest.mark.parametrize("phase", ["quiet", "burning", "filling"])
def test_every_default_rule_gives_pcps_verdict(scenario, phase, ref, mine):
    """Rule by rule, over the steady stretch of each condition, our pmie says what PCP's
    says on the same rules: the same rules, unknown where PCP's are, true or false
    where PCP's are (rules PCP's pmie sees change during the stretch aside)."""
    window = _phase(scenario, phase)
    theirs = window.steady(scenario.watches[ref])
    ours = window.steady(scenario.watches[mine])
    assert len(theirs) >= 2 and len(ours) >= 2
    assert disagreements(theirs, ours) == []


@pytest.mark.parametrize("rule", FORCED)
@pytest.mark.parametrize("name", NAMES)
def test_quiet_host_raises_no_cpu_or_filesys_verdict(scenario, name, rule):
    """Nothing forced, nothing raised; unless the host was busy of itself (PCP's pmie
    said so too, or, for the processors, some second of the stretch was busy)."""
    reference = scenario.quiet.steady(scenario.watches[reference_of(name)])
    if any(rule in e.true() for e in reference):
        pytest.skip(f"the machine was busy while quiet: PCP's pmie said {rule} true")
    if rule == "cpu.util" and scenario.busy > UTIL - 20:
        pytest.skip(f"the machine was busy while quiet: {scenario.busy:.0f}% in one second")
    steady = scenario.quiet.steady(scenario.watches[name])
    assert [i for i, e in enumerate(steady) if rule in e.true()] == []


@pytest.mark.parametrize("name", NAMES)
def test_the_burner_raises_cpu_util_at_every_evaluation(scenario, name):
    steady = scenario.burning.steady(scenario.watches[name])
    assert steady
    assert [e for e in steady if "cpu.util" not in e.true()] == []


def _first_true(watch: Watch, rule: str, after: float) -> float:
    return next(e.at for e in watch.after(after) if rule in e.true())


@pytest.mark.parametrize(("ref", "mine"), PAIRS, ids=PAIR_IDS)
def test_the_load_average_rule_fires_when_pcps_does(scenario, ref, mine):
    """The 1-minute load crosses the threshold: both pmies see it within one evaluation
    of each other (they fetch up to a second apart), and, while PCP's says true from
    then on, so does ours."""
    if ref not in scenario.loaded:
        pytest.skip(
            "PCP's pmie never saw the machine's 1-minute load cross the threshold "
            "in time (other work moved it): no verdict of PCP's to compare"
        )
    assert mine in scenario.loaded
    start = scenario.burning.start
    theirs = _first_true(scenario.watches[ref], "cpu.load_average", start)
    ours = _first_true(scenario.watches[mine], "cpu.load_average", start)
    assert abs(theirs - ours) <= 2.0
    end = scenario.burning.end
    if all("cpu.load_average" in e.true() for e in scenario.watches[ref].after(theirs, end)):
        later = scenario.watches[mine].after(ours, end)
        assert [e.at for e in later if "cpu.load_average" not in e.true()] == []


@pytest.mark.parametrize("name", NAMES)
def test_the_filling_file_system_raises_filesys_filling(scenario, name):
    steady = _phase(scenario, "filling").steady(scenario.watches[name])
    assert steady
    assert [e for e in steady if "filesys.filling" not in e.true()] == []


INSTANCE = re.compile(r"\[([^\]]*)\]@(\S+)")


def filling_lines(scenario: Scenario, name: str) -> list[str]:
    """The lines run NAME's filesys.filling action wrote."""
    summary = FILLING_SUMMARY[templates_of(name)]
    return [line for line in scenario.actions[name].splitlines() if line.startswith(summary)]


def named(lines: list[str]) -> set[tuple[str, str]]:
    """The (instance, host) pairs of action LINES (each expansion's %i and %h)."""
    return {m.groups() for line in lines for m in INSTANCE.finditer(line)}


@pytest.mark.parametrize("name", NAMES)
def test_the_filling_action_names_the_mount(scenario, name):
    """%i in the rule's action is the file system's device, as PCP's linux agent names
    it, and only that (the host's other file systems are not filling); %h is the host
    PCP's pmie names."""
    _phase(scenario, "filling")
    found = named(filling_lines(scenario, name))
    assert {device for device, _ in found} == {scenario.device}
    assert found == named(filling_lines(scenario, reference_of(name)))


def summaries(rules: str) -> dict[str, str]:
    """Each rule's summary, as its shell action echoes it first, from a rule file."""
    found = {}
    for rule, body in re.findall(r"^([\w.]+) = \n(.*?);\n", rules, re.M | re.S):
        echo = re.search(r'shell 0 ">> \S+ echo ([^"]*)"', body)
        if echo:
            found[rule] = echo.group(1)
    return found


@pytest.mark.parametrize("name", NAMES)
def test_every_action_ran_each_time_its_rule_was_true(scenario, name):
    """No holdoff: each rule's shell action ran each time the rule was true (give or
    take the last, as pmie stopped)."""
    rules = summaries(scenario.rules[templates_of(name)])
    assert "cpu.util" in rules
    lines = scenario.actions[name].splitlines()
    wrong = {}
    for rule, summary in rules.items():
        ran = sum(line.startswith(summary + " ") for line in lines)
        true = sum(rule in e.true() for e in scenario.watches[name].evaluations)
        if abs(ran - true) > 1:
            wrong[rule] = (ran, true)
    assert wrong == {}


#: An action's expansion of %v (a number, or ? when unknown), then the rest up to %h.
EXPANSION = re.compile(r" (\?|-?[\d.]+(?:e[-+]\d+)?)\S*?(?:\[[^\]]*\])?@\S+")


def pmie_number(text: str) -> bool:
    """Whether TEXT is a number as pmie prints %v: an integral value as an integer, else
    with 2 decimals from 0.5 up, 1 from 5 up, none from 50 up, %g below 0.5 (the range
    ends loose by the rounding)."""
    if text == "?" or re.fullmatch(r"-?\d+", text):
        return True
    v = abs(float(text))
    if v < 0.5 and text == f"{float(text):g}":
        return True
    if re.fullmatch(r"-?\d+\.\d\d", text):
        return 0.5 <= v <= 5.0
    if re.fullmatch(r"-?\d+\.\d", text):
        return 4.95 <= v <= 50.0
    return False


@pytest.mark.parametrize("name", NAMES)
def test_action_values_are_printed_as_pcps_pmie_prints_them(scenario, name):
    """Every rule's action, each time it ran: %v as pmie formats a value."""
    values = [
        m.group(1) for line in scenario.actions[name].splitlines() for m in EXPANSION.finditer(line)
    ]
    assert values, "no action ran"
    assert [v for v in values if not pmie_number(v)] == []


def test_no_reference_pmcd_port_is_used(scenario):
    assert all(":44321" not in " ".join(w.proc.args) for w in scenario.watches.values())


def test_every_pmie_evaluated_all_its_rules(scenario):
    """No evaluation lost a rule, and no pmie complained of more than the metrics the
    host does not have (pmie names each missing one)."""
    for name, watch in scenario.watches.items():
        names = {frozenset(e.values) for e in watch.evaluations}
        assert len(names) == 1, name
    for ref, mine in PAIRS:
        theirs, ours = scenario.watches[ref].messages, scenario.watches[mine].messages
        assert _without_times(ours) == _without_times(theirs)


METRIC = re.compile(r"\b[a-z][a-z0-9_]*(?:\.[A-Za-z0-9_]+)+\b")


def rule_metrics(text: str) -> set[str]:
    """The metric names a pmie rule file names: dotted names outside comments and
    strings, less the rules' own names (those being defined, `name =`)."""
    code = re.sub(r'//[^\n]*|"[^"]*"|\'[^\']*\'', " ", text)
    defined = set(re.findall(r"^([\w.]+) =", code, re.M))
    return set(METRIC.findall(code)) - defined


VALUE = re.compile(r' +(?:inst \[\d+ or "(.*)"\] )?value ')


def served(pminfo: subprocess.CompletedProcess) -> dict[str, str]:
    """What pminfo -f said of each metric: "values" and the instances they are for, or
    its one line of no values or error."""
    found: dict[str, str] = {}
    instances: dict[str, list[str]] = {}
    name = None
    for line in pminfo.stdout.splitlines():
        if line and not line.startswith(" "):
            name = line
        elif name is not None and line.strip():
            value = VALUE.match(line)
            if value:
                instances.setdefault(name, []).append(value.group(1) or "")
            else:
                found[name] = line.strip()
    for line in pminfo.stderr.splitlines():
        unknown = re.match(r"(?:pminfo: |Error: )([\w.]+): (.*)$", line)
        if unknown:
            found[unknown.group(1)] = unknown.group(2)
    found.update({n: "values " + " ".join(sorted(i)) for n, i in instances.items()})
    return found


def test_our_pmcd_serves_the_rules_metrics_as_pcps_linux_agent(scenario):
    """Each metric the enabled rules use has values from our pmcd, for the same
    instances, where PCP's linux agent (in a pmcd of PCP's) has them, and says the same
    where neither has."""
    assert scenario.pmcd is not None and scenario.oracle is not None
    names = sorted(set().union(*map(rule_metrics, scenario.rules.values())))
    assert "kernel.all.cpu.user" in names and "filesys.used" in names
    theirs = served(scenario.oracle.run("/usr/bin/pminfo", "-f", *names))
    ours = served(scenario.pmcd.run("/usr/bin/pminfo", "-f", *names))
    assert set(theirs) == set(ours) == set(names)
    assert {n: ours[n] for n in names if ours[n] != theirs[n]} == {}


def _without_times(lines: list[str]) -> list[str]:
    return [
        re.sub(r"^\[.*?\] pmie\(\d+\)", "[T] pmie(P)", re.sub(r"127\.0\.0\.1:\d+", "HOST", line))
        for line in lines
        if "evaluator exiting" not in line
    ]


# -- the comparisons themselves ---------------------------------------------------------------


def _verdicts(*rows: str) -> list[Verdicts]:
    """Evaluations one a second, each written "rule=value rule=value"."""
    return [
        Verdicts(float(i), dict(pair.split("=") for pair in row.split()))
        for i, row in enumerate(rows)
    ]


@pytest.mark.parametrize(
    ("ref", "mine", "found"),
    [
        (["a=true b=false"] * 2, ["a=true b=false"] * 2, []),
        (["a=true", "a=false"], ["a=false", "a=false"], []),  # (a flips in PCP's: noise)
        (["a=true"] * 2, ["a=false"] * 2, ["a: ['true'] against ['false']"]),
        (["a=unknown"] * 2, ["a=false"] * 2, ["a: ['unknown'] against ['false']"]),
        (["a=unknown", "a=false"], ["a=false"] * 2, []),  # (known one evaluation sooner)
        (["a=unknown"] * 2, ["a=true", "a=false"], ["a: ['unknown'] against ['false', 'true']"]),
        (["a=true b=true"], ["a=true"], ["b: ['true'] against []"]),
    ],
)
def test_disagreements(ref, mine, found):
    assert disagreements(_verdicts(*ref), _verdicts(*mine)) == found


def test_a_phase_leaves_out_the_evaluations_straddling_its_start():
    e = _verdicts(*["a=true"] * 10)

    class Fake:
        def after(self, start, end):
            return [v for v in e if start <= v.at <= end]

    assert [v.at for v in Phase(2.0, 6.0).steady(Fake())] == [5.0, 6.0]  # type: ignore[arg-type]


def test_watch_collects_evaluations_and_messages():
    text = "a: true\\nb: unknown\\nnoise: here\\n\\nc: x\\na: false\\n"
    code = f"import sys; print('{text}', file=sys.stderr)"
    watch = Watch.start("t", [PY, "-c", code], dict(os.environ))
    try:
        watch.wait("two evaluations", lambda e: len(e) == 2, within=60)
    finally:
        watch.stop()
    assert [e.values for e in watch.evaluations] == [{"a": "true", "b": "unknown"}, {"a": "false"}]
    assert watch.messages == ["noise: here", "c: x"]
    assert watch.evaluations[0].true() == {"a"}


def test_rule_metrics_are_the_names_used_not_defined():
    text = (
        "// 1 cpu.util\ndelta = 1 sec;\ncpu.util = \nsome_host (\n"
        "    100 * kernel.all.cpu.user  / hinv.ncpu > 90 // kernel.not.this\n"
        ') -> shell 0 "echo x.y.z" " %v@%h";\n'
        "x = kernel.all.load #'1 minute' > 4;\n"
    )
    assert rule_metrics(text) == {"kernel.all.cpu.user", "hinv.ncpu", "kernel.all.load"}


def test_served_reads_pminfo_values_instances_and_errors():
    out = subprocess.CompletedProcess(
        [],
        0,
        '\nhinv.ncpu\n    value 2\n\nfilesys.used\n    inst [1 or "/dev/b"] value 5\n'
        '    inst [0 or "/dev/a"] value 7\n\nkernel.x\n    No value(s) available!\n',
        "Error: mssql.y: Unknown metric name\n",
    )
    assert served(out) == {
        "hinv.ncpu": "values ",
        "filesys.used": "values /dev/a /dev/b",
        "kernel.x": "No value(s) available!",
        "mssql.y": "Unknown metric name",
    }


def test_busy_meter_takes_the_busiest_second():
    meter = BusyMeter()
    meter.samples = [(0.0, 0, 0), (0.5, 10, 100), (1.0, 20, 200), (1.5, 110, 300), (2.0, 200, 400)]
    assert meter.busiest(0.0, 2.0) == 90.0  # (from 1.0 to 2.0: 180 of 200)
    assert meter.busiest(0.0, 1.0) == 10.0


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("?", True), ("42", True), ("0.123457", True), ("1e-05", True), ("2.35", True),
        ("12.3", True), ("5.00", True), ("50.0", True), ("12.35", False), ("2.3", False),
        ("0.5000", False), ("0.25", True), ("60.5", False),
    ],
)  # fmt: skip
def test_pmie_number(text, ok):
    assert pmie_number(text) is ok


def test_summaries_are_what_each_rules_shell_action_echoes_first():
    rules = (
        "delta = 1 sec;\ncpu.util = \nsome_host (\n  x > 1\n)"
        ' -> shell 0 ">> /tmp/a echo High util" " %v%util@%h";\n\n'
        "quiet.rule = \nhinv.ncpu > 0;\n"
    )
    assert summaries(rules) == {"cpu.util": "High util"}
