"""The pmrep.conf(5) metricsets purepcp ships (tools/report/conf), beside PCP's.

pmrep reads $PCP_SYSCONF_DIR/pmrep/*.conf when PCP's files are installed and the
shipped set otherwise, so a metricset such as ``:vmstat`` must print the same
columns either way: the same metric lines in the same order (metric or key, label,
instances, unit, type, width, precision, limit, formula) and the same report
options.  The comparisons read PCP's files from /etc/pcp/pmrep and are skipped when
they are not installed.  Formulas are compared as parsed expressions, so their
layout in the file does not matter.
"""

from __future__ import annotations

import configparser
from pathlib import Path

import pytest

from purepcp.pmapi.derived.parse import parse
from purepcp.pmapi.derived.unparse import unparse

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "tools" / "report" / "conf"
PCP_DIR = Path("/etc/pcp/pmrep")
NO_PCP = "PCP's pmrep.conf files are not installed (Debian package pcp)"

#: the files shipped, and the metricsets each must hold
FILES = {
    "00-defaults.conf": ("options",),
    "vmstat.conf": ("vmstat", "vmstat-w", "vmstat-a"),
    "sar.conf": ("sar", "sar-u", "sar-r", "sar-b", "sar-B", "sar-q", "sar-n-DEV", "sar-d-dev"),
    "iostat.conf": ("iostat-dktx",),
    "proc.conf": ("proc-info", "proc-cpu", "proc-mem", "proc-io", "proc-essential"),
}
REQUIRED = [name for names in FILES.values() for name in names if name != "options"]

#: our sections that repeat one of PCP's under another name
ALIASES = {"sar-u": "sar"}

#: pmrep's option keys; any other key of a metricset belongs to a metric line
OPTION_KEYS = frozenset((
    "source", "output", "derived", "header", "globals", "samples", "interval", "type",
    "precision", "daemonize", "timestamp", "unitinfo", "colxrow", "separate_header",
    "fixed_header", "delay", "width", "delimiter", "extcsv", "width_force", "extheader",
    "repeat_header", "timefmt", "interpol", "dynamic_header", "overall_rank",
    "overall_rank_alt", "sort_metric", "count_scale", "space_scale", "time_scale",
    "version", "count_scale_force", "space_scale_force", "time_scale_force", "type_prefer",
    "precision_force", "limit_filter", "limit_filter_force", "live_filter", "rank",
    "invert_filter", "predicate", "names_change", "speclocal", "instances",
    "ignore_incompat", "ignore_unknown", "omit_flat", "instinfo", "include_labels",
    "include_texts",
))  # fmt: skip

#: the options that shape a report's text, compared with PCP's
COMPARED_OPTIONS = (
    "header", "unitinfo", "globals", "timestamp", "width", "precision", "delimiter",
    "repeat_header", "colxrow", "type",
)  # fmt: skip

#: a compact line's fields after the metric, in order; "formula" only verbosely
COMPACT_FIELDS = ("label", "instances", "unit", "type", "width", "precision", "limit")
SPEC_FIELDS = (*COMPACT_FIELDS, "formula")


def _parser() -> configparser.ConfigParser:
    parser = configparser.ConfigParser()
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    return parser


def read_sections(files: list[Path]) -> dict[str, dict[str, str]]:
    """Every section of FILES (values interpolated, so %% is %), later files winning."""
    sections: dict[str, dict[str, str]] = {}
    for path in files:
        parser = _parser()
        with open(path, encoding="utf-8") as f:
            parser.read_file(f, str(path))
        for section in parser.sections():
            sections[section] = dict(parser.items(section))
    return sections


def metric_lines(items: dict[str, str]) -> dict[str, dict[str, str]]:
    """The metric lines of a section by key, in order, each as its metric and fields.

    A line is compact (``metric = label,instances,...``) when its value has a comma
    or its key's second dotted part is not a spec field (pmrep's own rule); else
    ``key = metric`` declares a verbose metric and ``key.field = value`` sets a field.
    """
    lines: dict[str, dict[str, str]] = {}
    for key, value in items.items():
        if key in OPTION_KEYS:
            continue
        second = key.split(".")[1] if "." in key else None
        compact = "," in value or (second is not None and second not in SPEC_FIELDS)
        if compact and second == "formula":
            compact = False
        if compact:
            fields = (value.split(",") + [""] * len(COMPACT_FIELDS))[: len(COMPACT_FIELDS)]
            lines[key] = {"metric": key, **dict(zip(COMPACT_FIELDS, fields, strict=True))}
        elif second is None or second not in SPEC_FIELDS:
            lines[key] = {"metric": value}
        else:
            base, attr = key.rsplit(".", 1)
            assert base in lines, f"{key}: {base} is not declared before it"
            lines[base][attr] = value
    return lines


def label_pairs(items: dict[str, str]) -> set[tuple[str, str | None]]:
    """(metric or key, label) of each metric line."""
    return {(key, spec.get("label")) for key, spec in metric_lines(items).items()}


def normalised(spec: dict[str, str]) -> dict[str, str]:
    """SPEC with empty fields dropped and its formula in canonical form."""
    out = {k: v.strip() for k, v in spec.items() if v.strip()}
    if "formula" in out:
        out["formula"] = unparse(parse(out["formula"]))
    return out


@pytest.fixture(scope="module")
def ours() -> dict[str, dict[str, str]]:
    return read_sections(sorted(SHIPPED.glob("*.conf")))


@pytest.fixture(scope="module")
def pcps() -> dict[str, dict[str, str]]:
    if not PCP_DIR.is_dir():
        pytest.skip(NO_PCP)
    return read_sections(sorted(PCP_DIR.glob("*.conf")))


def pcp_section(pcps: dict[str, dict[str, str]], name: str) -> dict[str, str]:
    theirs = pcps.get(ALIASES.get(name, name))
    if theirs is None:
        pytest.fail(f"PCP's files in {PCP_DIR} have no [{ALIASES.get(name, name)}]")
    return theirs


# ------------------------------------------------------------------ our files alone


def test_shipped_files() -> None:
    assert sorted(p.name for p in SHIPPED.glob("*.conf")) == sorted(FILES)


@pytest.mark.parametrize("name", sorted(FILES))
def test_file_parses_with_its_sections(name: str) -> None:
    parser = _parser()
    with open(SHIPPED / name, encoding="utf-8") as f:
        parser.read_file(f, name)
    assert set(FILES[name]) <= set(parser.sections())
    for section in parser.sections():
        for key, value in parser.items(section):  # interpolates: a lone % fails here
            assert value.strip() or key.endswith(".label"), f"[{section}] {key} has no value"


def test_defaults_set_nothing(ours: dict[str, dict[str, str]]) -> None:
    assert ours["options"] == {}


@pytest.mark.parametrize("name", REQUIRED)
def test_section_lines(ours: dict[str, dict[str, str]], name: str) -> None:
    """Every key is a pmrep option or part of a metric line; formulas parse."""
    items = ours[name]
    lines = metric_lines(items)
    assert lines, f"[{name}] has no metrics"
    declared = set(lines)
    for key in items:
        if key in OPTION_KEYS:
            continue
        base = key.rsplit(".", 1)[0] if key.rsplit(".", 1)[-1] in SPEC_FIELDS else key
        assert key in declared or base in declared, f"[{name}] {key}"
    for spec in lines.values():
        if "formula" in spec:
            parse(spec["formula"])


def test_alias_matches() -> None:
    sections = read_sections([SHIPPED / "sar.conf"])
    assert sections["sar-u"] == sections["sar"]


# ------------------------------------------------------------------ beside PCP's


@pytest.mark.parametrize("name", REQUIRED)
def test_labels_match_pcp(
    ours: dict[str, dict[str, str]], pcps: dict[str, dict[str, str]], name: str
) -> None:
    assert label_pairs(ours[name]) == label_pairs(pcp_section(pcps, name))


@pytest.mark.parametrize("name", REQUIRED)
def test_options_match_pcp(
    ours: dict[str, dict[str, str]], pcps: dict[str, dict[str, str]], name: str
) -> None:
    theirs = pcp_section(pcps, name)
    for key in COMPARED_OPTIONS:
        assert ours[name].get(key) == theirs.get(key), f"[{name}] {key}"
    # and every other option (instinfo ...) alike too
    assert {k: v for k, v in ours[name].items() if k in OPTION_KEYS} == {
        k: v for k, v in theirs.items() if k in OPTION_KEYS
    }


@pytest.mark.parametrize("name", REQUIRED)
def test_specs_match_pcp(
    ours: dict[str, dict[str, str]], pcps: dict[str, dict[str, str]], name: str
) -> None:
    """Same columns in the same order, each with the same metric, fields and formula."""
    mine = metric_lines(ours[name])
    theirs = metric_lines(pcp_section(pcps, name))
    assert list(mine) == list(theirs)
    for key in mine:
        assert normalised(mine[key]) == normalised(theirs[key]), f"[{name}] {key}"
