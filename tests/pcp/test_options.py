"""pmGetOptions for PCP's Python API: cpmapi's option functions and pcp's pmOptions.

Unit tests drive cpmapi.options in this process; the interop tests run one driver script
under PCP's own bindings (/usr/bin/python3) and under ours, over a table of command
lines, and compare stdout (the values read back, as JSON), stderr and the exit status.
Besides made-up option sets, the option set-ups of PCP's own tools (pcp-uptime, pcp-free,
pcp-iostat, pcp-dstat, pmrep) are read out of the installed scripts and replayed.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import cpmapi.options as c
from pcp.pmoptions import pmOptions

SYSTEM_PYTHON = "/usr/bin/python3"
NO_PCP = "PCP's Python bindings are not installed (Debian package python3-pcp)"

# --- unit tests ---------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    """No PCP_* variables from the environment; options, callbacks, messages and the
    program's name reset (and purepcp's put back after)."""
    import purepcp.pmapi

    monkeypatch.setattr(purepcp.pmapi, "_progname", purepcp.pmapi._progname)
    monkeypatch.setattr(c, "_progname", ["pcp"])
    for name in list(os.environ):
        if name.startswith("PCP_") or name == "POSIXLY_CORRECT":
            monkeypatch.delenv(name)
    c.pmResetAllOptions()
    c._option_callback.clear()
    c._override_callback.clear()
    c._pending.clear()
    yield
    c.pmResetAllOptions()
    c._option_callback.clear()
    c._override_callback.clear()
    c._pending.clear()


def general(short="a:h:t:s:S:T:O:A:Z:zLV?x:", flags=0) -> pmOptions:
    opts = pmOptions(short, "[options] names", flags)
    opts.pmSetLongOptionHeader("General options")
    for name in ("Archive", "Host", "Interval", "Samples", "Start", "Finish", "Origin"):
        getattr(opts, f"pmSetLongOption{name}")()
    for name in ("Align", "TimeZone", "HostZone", "LocalPMDA", "Version", "Help"):
        getattr(opts, f"pmSetLongOption{name}")()
    opts.pmSetLongOption("extra", 1, "x", "N", "an option of the script's own")
    opts.pmSetLongOption("plain", 0, None, "", "a long-only option of its own")
    return opts


def test_standard_options_are_read_back():
    general()
    argv = ["prog", "-h", "there", "-t", "1.5", "-s", "3", "-Z", "UTC", "op1", "op2"]
    assert c.pmGetOptionsFromList(argv) == 0
    assert c.pmGetOptionHosts() == ["there"]
    assert c.pmGetOptionContext() == 1
    assert (c.pmGetOptionInterval_sec(), c.pmGetOptionInterval_usec()) == (1, 500000)
    assert c.pmGetOptionInterval_nsec() == 500_000_000
    assert c.pmGetOptionSamples() == 3
    assert c.pmGetOptionTimezone() == "UTC"
    assert c.pmGetOperands() == ["op1", "op2"]
    assert c.pmGetOptionFlags() & c.DONE


def test_nothing_given_is_none():
    general()
    assert c.pmGetOptionsFromList(["prog"]) == 0
    assert c.pmGetOptionHosts() is None
    assert c.pmGetOptionArchives() is None
    assert c.pmGetOptionContext() is None
    assert c.pmGetOptionInterval_sec() is None
    assert c.pmGetOptionSamples() is None
    assert c.pmGetOperands() is None


def test_operands_before_parsing_is_a_runtime_error():
    general()
    with pytest.raises(RuntimeError, match="pmGetOptions is not yet done"):
        c.pmGetOperands()


def test_mixed_ordering_permutes_and_posix_stops_at_the_first_operand():
    general()
    c.pmGetOptionsFromList(["prog", "a", "-h", "x", "b", "--", "-c"])
    assert c.pmGetOperands() == ["a", "b", "-c"]
    assert c.pmGetOptionHosts() == ["x"]
    general(flags=c.POSIX)
    c.pmGetOptionsFromList(["prog", "a", "-h", "x", "b"])
    assert c.pmGetOperands() == ["a", "-h", "x", "b"]
    assert c.pmGetOptionHosts() is None


def test_callbacks_see_own_options_and_overridden_letters():
    opts = general()
    seen, asked = [], []
    opts.pmSetOptionCallback(lambda opt, arg, index: seen.append((opt, arg, index)))
    opts.pmSetOverrideCallback(lambda opt: asked.append(opt) or int(opt == "s"))
    assert c.pmGetOptionsFromList(["prog", "-x", "1", "--plain", "-s", "5", "-h", "h"]) == 0
    assert seen == [("x", "1", 0), ("plain", None, 15), ("s", "5", 15)]
    assert asked == ["x", "s", "h"]  # (a long-only option is not asked about)
    assert c.pmGetOptionSamples() is None
    assert c.pmGetOptionHosts() == ["h"]


def test_errors_are_counted_and_held_until_the_usage_message(capsys):
    general()
    assert c.pmGetOptionsFromList(["prog", "-q", "-t", "soon", "--arch"]) == 3
    assert capsys.readouterr().err == ""  # (pmprintf holds them)
    assert c.pmGetOptionFlags() & c.USAGE_ERR
    c.pmUsageMessage()
    err = capsys.readouterr().err
    assert err.startswith(
        "prog: invalid option -- 'q'\n"
        "prog: -t argument not in pmParseHighResInterval(3) format:\n"
        "soon\n^ -- unexpected value\n\n"
        "prog: option '--archive' requires an argument\n"
        "Usage: prog [options] names\n\nGeneral options:\n"
    )
    assert "  -a FILE, --archive=FILE\n                        metrics source" in err
    assert "  -h HOST, --host=HOST  metrics source is PMCD on host\n" in err
    assert "  --plain               a long-only option of its own\n" in err


def test_ambiguous_prefix_lists_the_choices():
    opts = pmOptions("h:H:z", None)
    for name in ("Host", "HostsFile", "HostList", "HostZone"):
        getattr(opts, f"pmSetLongOption{name}")()
    assert c.pmGetOptionsFromList(["p", "--hos=x"]) == 1
    assert c._pending == [
        "p: option '--hos=x' is ambiguous; possibilities: '--host' '--hostzone'"
        " '--host-list' '--hostsfile'\n"
    ]


def test_host_and_archive_conflict_and_multi_mixed():
    general()
    assert c.pmGetOptionsFromList(["p", "-a", "x", "-h", "y"]) == 1
    assert c._pending == ["p: only one host or archive allowed\n"]
    general(flags=c.MULTI | c.MIXED)
    assert c.pmGetOptionsFromList(["p", "-a", "x", "-h", "y", "-a", "z", "-a", "x"]) == 0
    assert c.pmGetOptionArchives() == ["x", "z"]
    assert c.pmGetOptionHosts() == ["y"]


def test_archives_join_into_one_name_without_multi():
    opts = general()
    opts.pmSetLongOptionArchiveList()
    assert c.pmGetOptionsFromList(["p", "-a", "x", "--archive-list", "y,x", "-a", "x"]) == 0
    assert c.pmGetOptionArchives() == ["x,y,x"]


def test_time_window_needs_an_archive():
    general()
    assert c.pmGetOptionsFromList(["p", "-S", "@10:00"]) == 1
    assert c._pending == ["p: time window options are supported for archives only\n"]


def test_origin_alone_names_this_hosts_archives():
    general()
    assert c.pmGetOptionsFromList(["p", "-O", "-1h"]) == 0
    assert c.pmGetOptionContext() == 2
    (archive,) = c.pmGetOptionArchives()
    assert archive.endswith("/pmlogger/" + os.uname().nodename)


def test_environment_sets_options(monkeypatch):
    monkeypatch.setenv("PCP_HOST", "far")
    monkeypatch.setenv("PCP_SAMPLES", "7")
    monkeypatch.setenv("PCP_INTERVAL", "2min")
    general()
    assert c.pmGetOptionsFromList(["p"]) == 0
    assert c.pmGetOptionHosts() == ["far"]
    assert c.pmGetOptionSamples() == 7
    assert c.pmGetOptionInterval_sec() == 120


def test_version_is_appversion_and_the_usage_exits(tmp_path):
    general()
    assert c.pmGetOptionsFromList(["p", "-V"]) == -12350
    assert c.pmGetOptionFlags() & c.EXIT
    assert c._pending == ["p version 6.0.3\n"]


def test_script_setters():
    opts = general()
    opts.pmSetOptionSamples("12")
    opts.pmSetOptionInterval("250msec")
    assert opts.pmGetOptionSamples() == 12
    assert (opts.pmGetOptionInterval().tv_sec, opts.pmGetOptionInterval().tv_usec) == (0, 250000)
    opts.pmSetOptionSamples("12x")
    opts.pmSetOptionInterval("forever")
    assert opts.pmGetOptionErrors() == 2
    assert c._pending[0] == "p: sample count must be a positive numeric argument\n".replace(
        "p:", f"{c._prog()}:"
    )
    opts.pmSetOptionErrors()
    assert opts.pmGetOptionErrors() == 3


def test_pmoptions_time_values():
    opts = general()
    assert c.pmGetOptionsFromList(["p", "-t", "2.25", "-A", "1min", "-a", "arch"]) == 0
    interval = opts.pmGetOptionInterval()
    assert (interval.tv_sec, interval.tv_usec) == (2, 250000)
    spec = opts.pmGetOptionHighResInterval()
    assert (spec.tv_sec, spec.tv_nsec) == (2, 250_000_000)
    assert opts.pmGetOptionAlignment().tv_sec == 60
    assert opts.pmGetOptionStart() is None
    assert opts.pmGetOptionHostZone() is False
    assert opts.mode == 1 and opts.delta == 1


def test_callbacks_must_be_callable():
    with pytest.raises(TypeError, match="pmSetOptionCallback parameter not callable"):
        c.pmSetOptionCallback(3)
    with pytest.raises(TypeError, match="pmSetOverrideCallback parameter not callable"):
        c.pmSetOverrideCallback(None)
    with pytest.raises(TypeError, match="pmGetOptionsFromList uses a list"):
        c.pmGetOptionsFromList(("p",))


def test_messages_before_parsing_are_from_pcp(capsys):
    pmOptions("a:").pmSetOptionSamples("x")
    c.pmUsageMessage()
    assert capsys.readouterr().err == (
        "pcp: sample count must be a positive numeric argument\nUsage: pcp [options]\n"
    )


def test_a_failing_callback_is_reported_and_parsing_goes_on(capsys):
    opts = general()

    def broken(opt, optarg, index):
        raise ValueError(f"cannot take {opt}")

    opts.pmSetOptionCallback(broken)
    opts.pmSetOverrideCallback(lambda opt: 1 / 0 if opt == "t" else 0)
    assert c.pmGetOptionsFromList(["p", "-x", "1", "-t", "5", "-h", "h"]) == 0
    err = capsys.readouterr().err
    assert "ValueError: cannot take x" in err and "ValueError: cannot take t" in err
    assert "ZeroDivisionError" in err
    assert c.pmGetOptionInterval_sec() is None  # (a failed override claims the option)
    assert c.pmGetOptionHosts() == ["h"]


def test_messages_go_where_pcp_stderr_says(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PCP_STDERR", str(tmp_path / "log"))
    general()
    c.pmGetOptionsFromList(["p", "-q"])
    c.pmflush()
    assert (tmp_path / "log").read_text() == "p: invalid option -- 'q'\n"
    assert capsys.readouterr().err == ""


def test_bad_arguments_are_pcps_type_errors():
    with pytest.raises(TypeError, match=r"pmSetLongOption\(\) argument 4 must be str, not None"):
        c.pmSetLongOption("x", 1, "x", None, "m")
    with pytest.raises(TypeError, match=r"pmSetShortOptions\(\) argument 1 must be str, not bytes"):
        c.pmSetShortOptions(b"x")
    with pytest.raises(TypeError, match="'float' object cannot be interpreted as an integer"):
        c.pmSetOptionFlags(1.5)
    with pytest.raises(TypeError, match=r"pmSetOptionSamples\(\) argument 1 must be str, not int"):
        c.pmSetOptionSamples(5)


def test_context_options_of_an_unknown_handle():
    pmOptions("a:S:")
    assert c.pmGetOptionsFromList(["p", "-a", "/nonexistent", "-S", "+1"]) == 0
    assert c.pmSetContextOptions(12345, 1, 1) == -12345
    assert c._pending == [
        "p: Cannot get archive /nonexistent label record: Attempt to use an illegal context\n"
    ]
    pmOptions("h:")
    assert c.pmGetOptionsFromList(["p", "-h", "x"]) == 0
    assert c.pmSetContextOptions(12345, 1, 1) == 0  # (a live window needs no context)


def test_pmunits_int_and_reals():
    assert c.pmUnits_int(1, 0, 0, 0, 0, 0) == 0x10000000
    assert c.pmUnits_int(0, 0, 0, 0, 0, 1) == 0x100
    assert c.pmUnits_int(15, 15, 15, 15, 15, 15) == -256
    assert c.pmtimevalToReal(1, 500000) == 1.5
    assert c.pmtimespecToReal(3, 5) == 3.000000005


class _FakeArchive:
    """Just enough of an archive context for pmSetContextOptions."""

    kind = "archive"

    def __init__(self, archive):
        self.archive = archive
        self.modes = []

    def set_mode(self, mode, origin, delta_ns):
        self.modes.append((mode, origin, delta_ns))


def test_set_context_options_windows_an_archive(tmp_path):
    from cpmapi import contexts
    from purepcp.pmapi.archive.context import ArchiveContext
    from tests.support.replay_archives import T0

    base = _archive(tmp_path)
    ctx = _FakeArchive(ArchiveContext(base).archive)
    handle = contexts.register(ctx)
    try:
        general()
        argv = ["p", "-a", base, "-S", "+20", "-T", "+60", "-O", "+30", "-t", "5", "-Z", "UTC"]
        assert c.pmGetOptionsFromList(argv) == 0
        assert c.pmSetContextOptions(handle, 1, 1) == 0
        assert c.pmGetOptionStart_sec() == T0 + 20
        assert c.pmGetOptionFinish_sec() == T0 + 80  # (-T and -O count from -S)
        assert c.pmGetOptionOrigin_sec() == T0 + 50
        ((mode, origin, delta),) = ctx.modes
        assert (mode, origin.sec, delta) == (1, T0 + 50, 5_000_000_000)
        assert c.state().zone.utcoffset(None).total_seconds() == 0
        general()
        assert c.pmGetOptionsFromList(["p", "-a", base, "-S", "bogus"]) == 0
        assert c.pmSetContextOptions(handle, 1, 1) == -12345
        assert c._pending[0].startswith("p: invalid time window.\nbogus\n")
        assert c.pmGetOptionFlags() & c.RUNTIME_ERR
    finally:
        contexts.forget(handle)


# --- interop: PCP's bindings and ours, the same driver -----------------------------------

DRIVER = r"""
import json, os, sys
spec = json.loads(os.environ["OPTS_SPEC"])
from pcp import pmapi
import cpmapi as c
if not hasattr(c, "pmGetOptionsFromList"):  # (until cpmapi exports them)
    import cpmapi.options as c
pmOptions = getattr(pmapi, "pmOptions", None)
if pmOptions is None:
    from pcp.pmoptions import pmOptions
o = pmOptions(*spec.get("init", []))
for call in spec["calls"]:
    getattr(o, call[0])(*call[1:])
seen, asked = [], []
def callback(opt, optarg, index):
    seen.append([opt, optarg, index])
    if opt in spec.get("samples_from", []):
        o.pmSetOptionSamples(optarg)
    if opt in spec.get("interval_from", []):
        o.pmSetOptionInterval(optarg)
    if opt in spec.get("bad", []):
        o.pmSetOptionErrors()
def override(opt):
    asked.append(opt)
    return 1 if opt in spec.get("override", "") else 0
o.pmSetOptionCallback(callback)
if "override" in spec:
    o.pmSetOverrideCallback(override)
ret = c.pmGetOptionsFromList(sys.argv)
def tv(v):
    if v is None:
        return None
    return [v.tv_sec, getattr(v, "tv_usec", None), getattr(v, "tv_nsec", None)]
out = {
    "ret": ret, "errors": o.pmGetOptionErrors(), "flags": o.pmGetOptionFlags(),
    "context": o.pmGetOptionContext(), "hosts": o.pmGetOptionHosts(),
    "archives": o.pmGetOptionArchives(), "interval": tv(o.pmGetOptionInterval()),
    "hrinterval": tv(o.pmGetOptionHighResInterval()),
    "samples": o.pmGetOptionSamples(), "timezone": o.pmGetOptionTimezone(),
    "hostzone": o.pmGetOptionHostZone(), "align": o.pmGetOptionAlignOptarg(),
    "finish": o.pmGetOptionFinishOptarg(), "start": tv(o.pmGetOptionStart()),
    "local": o.pmGetOptionLocalPMDA(), "container": o.pmGetOptionContainer(),
    "callbacks": seen, "asked": asked,
}
try:
    out["operands"] = o.pmGetOperands()
except RuntimeError as e:
    out["operands"] = "RuntimeError: %s" % e
if spec.get("window") and ret == 0:
    typed = o.pmGetOptionContext()
    source = (o.pmGetOptionArchives() or o.pmGetOptionHosts() or [None])[0]
    ctx = pmapi.pmContext(typed, source)
    out["set"] = c.pmSetContextOptions(ctx.ctx, o.mode, o.delta)
    out["window"] = [tv(o.pmGetOptionStart()), tv(o.pmGetOptionFinish()),
                     tv(o.pmGetOptionOrigin())]
    if typed != 2:  # (a live window starts now)
        out["window"] = [w is not None for w in out["window"][::2]] + out["window"][1:2]
print(json.dumps(out, sort_keys=True))
sys.stdout.flush()
if ret != 0 or out.get("set"):
    c.pmUsageMessage()
    sys.exit(1)
"""


def _pcp_available() -> bool:
    if not Path(SYSTEM_PYTHON).exists():
        return False
    probe = subprocess.run(
        [SYSTEM_PYTHON, "-c", "from pcp import pmapi; import cpmapi"],
        capture_output=True,
        cwd="/",
        timeout=60,
    )
    return probe.returncode == 0


_HAVE_PCP = _pcp_available()
interop = [pytest.mark.interop, pytest.mark.skipif(not _HAVE_PCP, reason=NO_PCP)]


def _std_calls(*names: str) -> list[list]:
    return [[f"pmSetLongOption{name}"] for name in names]


#: made-up option sets: what the table's command lines run against
SPECS: dict[str, dict] = {
    "general": {
        "init": ["a:h:H:t:s:S:T:O:A:Z:zLK:D:V?x:c:", "[options] args"],
        "calls": [
            ["pmSetLongOptionHeader", "General options"],
            *_std_calls("Archive", "Host", "HostsFile", "Interval", "Samples", "Start"),
            *_std_calls("Finish", "Origin", "Align", "TimeZone", "HostZone", "LocalPMDA"),
            *_std_calls("SpecLocal", "Debug", "ArchiveList", "ArchiveFolio", "HostList"),
            *_std_calls("Container", "Version", "Help"),
            ["pmSetLongOptionHeader", "Own options"],
            ["pmSetLongOption", "xtra", 1, "x", "XX", "an extra thing"],
            ["pmSetLongOption", "count", 1, "c", "N", "count of things"],
            ["pmSetLongOption", "a-rather-long-option-name", 0, "", "", "wraps"],
            ["pmSetLongOption", "quiet", 0, "", "", "say less"],
            ["pmSetLongOption", "hidden", 0, "", "", ""],
            ["pmSetLongOptionText", "Some closing words."],
        ],
        "samples_from": ["c"],
        "interval_from": ["xtra"],
    },
    "bare": {"init": ["x:y"], "calls": []},
}
SPECS["posix"] = {**SPECS["general"], "init": [*SPECS["general"]["init"], 64]}
SPECS["plus"] = {**SPECS["general"], "init": ["+" + SPECS["general"]["init"][0]]}
SPECS["colon"] = {**SPECS["general"], "init": [":" + SPECS["general"]["init"][0]]}
SPECS["quiet"] = {**SPECS["general"], "init": [*SPECS["general"]["init"], 1 << 13]}
SPECS["multi"] = {**SPECS["general"], "init": [*SPECS["general"]["init"], 4 | 128]}
SPECS["longonly"] = {**SPECS["general"], "init": [*SPECS["general"]["init"], 1 << 9]}
SPECS["override"] = {**SPECS["general"], "override": "ht?"}
SPECS["inorder"] = {**SPECS["general"], "init": ["-" + SPECS["general"]["init"][0]]}
SPECS["optional"] = {
    "init": ["o::h:q"],
    "calls": [["pmSetLongOption", "opt", 2, "o", "X", "an optional argument"]],
}
SPECS["envonly"] = {**SPECS["general"], "init": [*SPECS["general"]["init"], 1 << 8]}
SPECS["noflush"] = {**SPECS["general"], "init": [*SPECS["general"]["init"], 1 << 12]}
SPECS["presets"] = {
    "init": ["h:a:T:"],
    "calls": [
        ["pmSetOptionSamples", "bad"],
        ["pmSetOptionSamples", "4"],
        ["pmSetOptionInterval", "2 min"],
        ["pmSetOptionInterval", "whenever"],
        ["pmSetOptionHost", "h1"],
        ["pmSetOptionArchive", "a1"],
        ["pmSetOptionHostList", "h2,h3"],
        ["pmSetOptionContainer", "box"],
        ["pmSetOptionSpecLocal", "nonsense"],
        ["pmSetOptionLocalPMDA"],
        ["pmSetOptionContext", 1],
        ["pmSetOptionLocalPMDA"],
        *_std_calls("Host", "Archive", "Finish"),
    ],
}
SPECS["noflags"] = {"init": ["a:h:t:V?"], "calls": _std_calls("Archive", "Host", "Version")}

CASES: list[tuple[str, list[str], dict[str, str]]] = [
    ("general", [], {}),
    ("general", ["-h", "there", "-t", "2", "-s", "5", "one", "two"], {}),
    ("general", ["one", "-h", "there", "two", "--", "-t", "three"], {}),
    ("general", ["-x", "1.5", "--count=3", "--quiet", "--hidden", "-c", "4"], {}),
    ("general", ["-x", "nonsense"], {}),
    ("general", ["-c", "-3"], {}),
    ("general", ["-q"], {}),
    ("general", ["-t"], {}),
    ("general", ["-t", "2x"], {}),
    ("general", ["-t", ""], {}),
    ("general", ["-s", "many"], {}),
    ("general", ["-s", ""], {}),
    ("general", ["--host"], {}),
    ("general", ["--nope"], {}),
    ("general", ["--quiet=yes"], {}),
    ("general", ["--hos=x"], {}),
    ("general", ["--ho", "x"], {}),
    ("general", ["--arch", "a"], {}),
    ("general", ["--archive=a", "--host", "b"], {}),
    ("general", ["-a", "x", "-h", "y"], {}),
    ("general", ["-h", "x", "-h", "y"], {}),
    ("general", ["--host-list", "a,b"], {}),
    ("general", ["--archive-list", "a,b,a", "-a", "b", "-a", "c"], {}),
    ("general", ["-a", "x", "-S", "@10:00", "-T", "+1h", "-A", "1m", "-O", "-0"], {}),
    ("general", ["-h", "x", "-S", "-1h"], {}),
    ("general", ["-S", "yesterday", "-A", "1h"], {}),
    ("general", ["-z", "-Z", "UTC"], {}),
    ("general", ["-Z", "UTC", "-z"], {}),
    ("general", ["-z"], {}),
    ("general", ["-h", "x", "-z"], {}),
    ("general", ["-L", "-K", "add,60,/dso,init", "-K", "clear"], {}),
    ("general", ["-K", "bogus"], {}),
    ("general", ["-K", "add,999,x,y"], {}),
    ("general", ["-K", "del,,path"], {}),
    ("general", ["-K", "add,99,/x.so,x_init", "-K", "del,99", "-K", "del,,/x.so,i"], {}),
    ("general", ["-K", "add,99,/x.so,x_init", "-K", "clear", "-K", "del,99"], {}),
    ("general", ["-D", "pdu,fetch"], {}),
    ("general", ["-D", "nonsense"], {}),
    ("general", ["--container=box"], {}),
    ("general", ["-?"], {}),
    ("general", ["--help"], {}),
    ("general", ["-V"], {}),
    ("general", ["--version", "-q"], {}),
    ("general", ["-H", "/nonexistent/hosts"], {}),
    ("general", ["--archive-folio", "/nonexistent/folio"], {}),
    ("general", ["-hx", "-t1sec", "-"], {}),
    ("general", ["-H", "onehost"], {}),
    ("general", ["-H", "hosts"], {}),
    ("multi", ["-H", "hosts", "-h", "zeta"], {}),
    ("general", ["--archive-folio", "folio"], {}),
    ("multi", ["--archive-folio", "folio"], {}),
    ("general", ["--archive-folio", "badmagic"], {}),
    ("general", ["--archive-folio", "badversion"], {}),
    ("general", ["--archive-folio", "nohost"], {}),
    ("general", ["--archive-folio", "nopath"], {}),
    ("general", ["--archive-folio", "empty"], {}),
    ("general", ["-h", "x", "--archive-folio", "folio"], {}),
    ("general", [], {"PCP_FOLIO": "folio"}),
    ("general", [], {"PCP_HOST": "far", "PCP_SAMPLES": "9", "PCP_TIMEZONE": "UTC"}),
    ("general", ["-h", "near"], {"PCP_HOST": "far"}),
    ("general", ["-h", "near"], {"PCP_ARCHIVE": "old"}),
    ("general", [], {"PCP_INTERVAL": "bad", "PCP_SAMPLES": "x"}),
    ("general", [], {"PCP_HOSTZONE": "1", "PCP_ARCHIVE": "a", "PCP_START_TIME": "+1"}),
    ("general", [], {"PCP_HOST_LIST": "a,b,c"}),
    ("general", [], {"PCP_LOCALPMDA": "1", "PCP_SPECLOCAL": "clear"}),
    ("general", ["a", "-h", "x", "b"], {"POSIXLY_CORRECT": "1"}),
    ("posix", ["a", "-h", "x", "b"], {}),
    ("posix", ["-h", "x", "--", "a", "-t"], {}),
    ("plus", ["-t", "1", "a", "-h", "x"], {}),
    ("colon", ["-q", "-t"], {}),
    ("quiet", ["-q", "--nope", "-t"], {}),
    ("multi", ["-h", "a", "-h", "b", "-a", "x", "-a", "y", "-a", "x"], {}),
    ("multi", ["--host-list", "a,,b", "--archive-list", "x,y"], {}),
    ("longonly", ["-host", "x", "-quiet", "-t", "3", "-hos", "y"], {}),
    ("override", ["-h", "x", "-t", "3", "-s", "2", "-?"], {}),
    ("bare", ["-x", "1", "-y", "z"], {}),
    ("bare", ["-V"], {}),
    ("noflags", ["-t", "1", "op"], {}),
    ("presets", [], {}),
    ("envonly", ["-h", "x", "op"], {"PCP_HOST": "far", "PCP_INTERVAL": "3"}),
    ("noflush", ["-?"], {}),
    ("noflush", ["-V"], {}),
    ("presets", ["-h", "h4", "-T", "+3"], {}),
    ("inorder", ["a", "-h", "x", "b", "--", "c"], {}),
    ("optional", ["-o", "-ovalue", "--opt", "--opt=v", "-qo", "x"], {}),
    ("optional", ["--op", "-h"], {}),
    ("general", ["--=x"], {}),
    ("general", ["---x"], {}),
    ("general", ["-x1", "-c2", "-xc"], {}),
    ("general", ["-s", "2", "-T", "+1"], {}),
]


def _run(python: str, spec: dict, argv: list[str], env: dict[str, str], where: Path):
    script = where / "driver.py"
    script.write_text(DRIVER)
    clean = {
        k: v for k, v in os.environ.items() if not k.startswith("PCP_") and k != "POSIXLY_CORRECT"
    }
    clean.update(env, OPTS_SPEC=json.dumps(spec))
    done = subprocess.run(
        [python, script.name, *argv],  # (relative: argv[0] is the same for both)
        capture_output=True,
        text=True,
        cwd=where,
        env=clean,
        timeout=120,
    )
    return done.stdout, done.stderr, done.returncode


#: files the command lines name, written beside the driver (relative names, the same for both)
FILES = {
    "hosts": "# the hosts\n  alpha   # first\n\nbeta\n\t#gamma\ndelta  epsilon\n",
    "onehost": "only\n",
    "folio": "PCPFolio\nVersion: 1\n# made by hand\nArchive: hostA  arch/one\n"
    "Archive: hostB /abs/two\nOther: line\n",
    "badmagic": "PCPFolder\nVersion: 1\n",
    "badversion": "PCPFolio\nVersion: 2\n",
    "nohost": "PCPFolio\nVersion: 1\nArchive:\n",
    "nopath": "PCPFolio\nVersion: 1\nArchive: h\n",
    "empty": "",
}


def _compare(spec: dict, argv: list[str], env: dict[str, str], tmp_path: Path) -> None:
    for side in ("pcp", "ours"):
        (tmp_path / side).mkdir()
        for name, text in FILES.items():
            (tmp_path / side / name).write_text(text)
    theirs = _run(SYSTEM_PYTHON, spec, argv, env, tmp_path / "pcp")
    ours = _run(sys.executable, spec, argv, env, tmp_path / "ours")
    assert ours == theirs


@pytest.mark.parametrize(
    ("spec", "argv", "env"),
    CASES,
    ids=[f"{s}:{' '.join(a) or '-'}:{' '.join(e)}" for s, a, e in CASES],
)
@pytest.mark.interop
@pytest.mark.skipif(not _HAVE_PCP, reason=NO_PCP)
def test_command_lines_as_pcp_reads_them(spec, argv, env, tmp_path):
    _compare(SPECS[spec], argv, env, tmp_path)


# --- PCP's own tools' option set-ups, read out of the installed scripts -----------------

_SETUP_CALLS = ("pmSetShortOptions", "pmSetShortUsage", "pmSetOptionFlags")


def _literal(node: ast.AST):
    return ast.literal_eval(node)


def _overridden_letters(tree: ast.AST) -> str:
    """The letters a tool's override callback claims ("opt in (...)", "opt == 'x'")."""
    letters = ""
    for func in ast.walk(tree):
        if isinstance(func, ast.FunctionDef) and "override" in func.name:
            for node in ast.walk(func):
                if isinstance(node, ast.Compare) and isinstance(node.ops[0], (ast.In, ast.Eq)):
                    letters += "".join(_literal(node.comparators[0]))
    return letters


def tool_spec(path: str) -> dict | None:
    """The pmOptions set-up calls a PCP tool makes (literal arguments only), in order,
    and the standard letters its override callback takes for itself."""
    try:
        tree = ast.parse(Path(path).read_text())
    except (OSError, SyntaxError, ValueError):  # (not there, or not Python)
        return None
    init: list = []
    calls = []
    override = _overridden_letters(tree)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        name = node.func.attr
        try:
            args = [_literal(a) for a in node.args[1 if name == "__init__" else 0 :]]
        except ValueError:
            continue
        if name.startswith("pmSetLongOption") or name in _SETUP_CALLS:
            calls.append((node.lineno, [name, *args]))
        elif name == "pmOptions" or (
            name == "__init__" and getattr(node.func.value, "attr", "") == "pmOptions"
        ):
            init = args
    if not calls:
        return None
    spec = {"init": init, "calls": [call for _, call in sorted(calls, key=lambda c: c[0])]}
    if override:
        spec["override"] = override
    return spec


TOOLS = {
    "uptime": "/usr/lib/pcp/bin/pcp-uptime",
    "free": "/usr/lib/pcp/bin/pcp-free",
    "iostat": "/usr/lib/pcp/bin/pcp-iostat",
    "dstat": "/usr/lib/pcp/bin/pcp-dstat",
    "pmrep": "/usr/bin/pmrep",
}
TOOL_CASES = [
    ("uptime", []),
    ("uptime", ["-?"]),
    ("uptime", ["-V"]),
    ("uptime", ["-h", "x"]),
    ("free", ["-m", "-s", "2", "-c", "3"]),
    ("free", ["--gigabytes", "--seconds=1", "--total", "--lohi"]),
    ("free", ["--help"]),
    ("free", ["-x"]),
    ("iostat", ["-a", "arch", "-t", "2", "-s", "3", "-x", "dm,t", "-Z", "UTC"]),
    ("iostat", ["--aggregate", "sum", "-R", "sd.*", "-u"]),
    ("iostat", ["-?"]),
    ("dstat", ["-cdn", "-t", "--nocolor", "1", "5"]),
    ("dstat", ["-a", "--output", "f.csv", "2"]),
    ("dstat", ["--help"]),
    ("dstat", ["--bogus"]),
    ("pmrep", ["-a", "arch", "-t", "1m", "-o", "csv", "mem.util", "kernel.all.load"]),
    ("pmrep", ["-h", "host", "-s", "2", "-p", "-g", "-H", ":vmstat"]),
    ("pmrep", ["--archive-folio", "/nonexistent", "--daemonize"]),
    ("pmrep", ["-?"]),
    ("pmrep", ["-K", "clear", "-L", "--container", "c1", "-n", "x"]),
]


#: every PCP Python tool installed, run through its option set-up with common lines
EVERY_TOOL = sorted(
    str(p)
    for p in [
        *Path("/usr/lib/pcp/bin").glob("pcp-*"),
        Path("/usr/bin/pmrep"),
        Path("/usr/bin/pcp2csv"),
    ]
    if p.is_file() and p.stat().st_size
)
COMMON_LINES = [["-?"], ["--version"], ["-t", "2", "-s", "3", "op"], ["-Z", "UTC", "--bogus"]]


@pytest.mark.parametrize("path", EVERY_TOOL, ids=[Path(p).name for p in EVERY_TOOL])
@pytest.mark.interop
@pytest.mark.skipif(not _HAVE_PCP, reason=NO_PCP)
def test_every_pcp_tool_reads_common_lines_as_pcp_does(path, tmp_path):
    spec = tool_spec(path)
    if spec is None:
        pytest.skip(f"{Path(path).name} sets up no pmOptions: nothing to compare")
    for n, argv in enumerate(COMMON_LINES):
        (tmp_path / str(n)).mkdir()
        _compare(spec, argv, {}, tmp_path / str(n))


def test_tool_specs_are_read_out():
    spec = tool_spec(TOOLS["free"])
    if spec is None:
        pytest.skip("pcp-free is not installed (Debian package pcp)")
    assert spec["override"] == "gst"
    assert spec["calls"][0] == ["pmSetShortOptions", "bc:gklmrots:Vw?"]


@pytest.mark.parametrize(
    ("tool", "argv"), TOOL_CASES, ids=[f"{t}:{' '.join(a) or '-'}" for t, a in TOOL_CASES]
)
@pytest.mark.interop
@pytest.mark.skipif(not _HAVE_PCP, reason=NO_PCP)
def test_pcp_tools_option_setups(tool, argv, tmp_path):
    path = TOOLS[tool]
    spec = tool_spec(path)
    if spec is None:
        pytest.skip(f"{path} is not installed (Debian package pcp)")
    _compare(spec, argv, {}, tmp_path)


def _archive(path: Path) -> str:
    """A level logged every 10 s from 10 to 90 s after its label (an index, as PCP needs)."""
    from purepcp.pmapi.archive import ArchiveWriter
    from purepcp.pmapi.desc import Desc
    from purepcp.pmapi.types import PMSem, PMType
    from purepcp.pmapi.values import Result, ValueSet
    from tests.support.replay_archives import at

    base = str(path / "level")
    u32 = PMType.PM_TYPE_U32
    with ArchiveWriter(base, hostname="box", timezone="UTC", start=at(0)) as w:
        w.put_desc(Desc(0x0F000001, u32, sem=PMSem.PM_SEM_INSTANT), ["ex.level"])
        w.put_index(at(0))
        for t in range(10, 100, 10):
            w.put_result(Result(at(t), (ValueSet.of_atoms(0x0F000001, u32, [(0xFFFFFFFF, t)]),)))
    return base


WINDOW_CASES = [
    ["-S", "+20", "-T", "+60", "-O", "+30"],
    ["-S", "+20", "-A", "15"],
    ["-T", "-15", "-t", "3"],
    ["-S", "bogus"],
    ["-S", "+200"],
    ["-O", "@00:00:35", "-Z", "UTC"],
    ["-S", "+85", "-A", "1h"],
    ["-S", "+15", "-O", "+20", "-A", "7"],
    ["-A", "0"],
    ["-T", "@yesterday"],
    ["-S", "-30", "-T", "-10"],
    ["-z"],
    ["-Z", "EST5EDT", "-S", "@Nov 14 22:14:00 2023"],
    ["STDOUT_TZ", "-z"],
    ["STDOUT_TZ", "-Z", "UTC"],
    ["NO_BOUNDARIES", "-t", "2"],
    ["LOCAL", "-L"],
    ["LOCAL", "-L", "-Z", "UTC", "-t", "1"],
]


@pytest.mark.parametrize("window", WINDOW_CASES, ids=[" ".join(w) for w in WINDOW_CASES])
@pytest.mark.interop
@pytest.mark.skipif(not _HAVE_PCP, reason=NO_PCP)
def test_time_window_on_an_archive(window, tmp_path):
    base = _archive(tmp_path)
    flags = 1024 | 2048 if window[0] == "STDOUT_TZ" else 1 << 12 if window[0][0] == "N" else 0
    init = [*SPECS["general"]["init"], flags]
    spec = {**SPECS["general"], "init": init, "window": True}
    window = window[1:] if window[0].isupper() else window
    source = [] if window[:1] == ["-L"] else ["-a", base]
    _compare(spec, [*source, *window], {"TZ": "UTC"}, tmp_path)
