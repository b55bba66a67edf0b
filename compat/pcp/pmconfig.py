"""PCP's ``pcp.pmconfig``: the configuration and metric machinery that pmrep, pcp-dstat
and the pcp2* exporters are written on, over purepcp's ``pcp.pmapi``.

A tool (the *util*) owns the state: its options as attributes (``util.keys`` names the
ones a ``.conf`` file may set), ``util.opts`` (a pmOptions), ``util.context``,
``util.pmfg`` (a fetchgroup) and ``util.metrics``, an ordered mapping from a metric name
to a list laid out as PCP's tools index it::

    [label, instances, unit, type, width, precision, limit, formula]

which ``validate_metrics`` turns into the resolved form the tools read::

    [label, instances, (unit label, pmUnits, mult), raw, width, fetchgroup item,
     precision, limit]

``pmConfig`` reads the configuration files and metricsets, checks the metrics against
the namespace, picks instances, units and types, adds them to the fetchgroup, fetches,
paces the samples and filters and ranks the values.
"""

from __future__ import annotations

import configparser
import contextlib
import csv
import math
import os
import re
import signal
import sys
import time
from collections import OrderedDict
from collections.abc import Callable
from copy import deepcopy
from typing import Any, ClassVar, NoReturn

import cpmapi as c_api
from pcp import pmapi

# Common defaults shared with the tools (PCP's module-level names)
TRUNC = "xxx"
VERSION = 1
CURR_INSTS = False

_TRUE_WORDS = frozenset({"true", "True", "y", "yes", "Yes"})
_FALSE_WORDS = frozenset({"false", "False", "n", "no", "No"})

# The metric types a tool can report; anything else is PM_ERR_TYPE.
_REPORTABLE_TYPES = frozenset(
    {
        c_api.PM_TYPE_32,
        c_api.PM_TYPE_U32,
        c_api.PM_TYPE_64,
        c_api.PM_TYPE_U64,
        c_api.PM_TYPE_FLOAT,
        c_api.PM_TYPE_DOUBLE,
        c_api.PM_TYPE_STRING,
    }
)

# Unit dimension (count, space, time) -> the util's forced and default scale options.
_SCALE_OPTIONS = (
    ((1, 0, 0), "count_scale_force", "count_scale"),
    ((0, 1, 0), "space_scale_force", "space_scale"),
    ((0, 0, 1), "time_scale_force", "time_scale"),
)

# Long unit words shortened in labels of rates ("Kbyte / sec" -> "Kbyte/s"), in order.
_LABEL_ABBREVIATIONS = (
    ("nanosec", "ns"),
    ("microsec", "us"),
    ("millisec", "ms"),
    ("sec", "s"),
    ("hour", "h"),
    (" / ", "/"),
)

# Options whose values must be integers (attribute, must be non-negative).
_INTEGER_OPTIONS = (
    ("rank", False),
    ("limit_filter", False),
    ("limit_filter_force", False),
    ("width", True),
    ("width_force", True),
    ("precision", True),
    ("precision_force", True),
    ("repeat_header", True),
)

# Metric list slots, as the tools index them. The precision read from a spec (slot 5)
# moves to slot 6 when slot 5 takes the fetchgroup item; the limit is read from slot 7,
# as PCP's pmconfig reads it (so a spec's own seventh field, in slot 6, is not used).
_LABEL, _INSTS, _UNIT, _TYPE, _WIDTH, _PRECISION = range(6)
_FGITEM, _PREC_RESOLVED, _LIMIT = 5, 6, 7


def _fail(message: str) -> NoReturn:
    """Write MESSAGE to stderr and exit 1, as the tools do on configuration errors."""
    sys.stderr.write(message)
    sys.exit(1)


def _util_flag(util: Any, name: str) -> bool:
    """True when the util has option NAME set to something true."""
    return bool(getattr(util, name, None))


def _readable(path: str) -> bool:
    """True for a readable file or directory."""
    return os.access(path, os.R_OK) and (os.path.isfile(path) or os.path.isdir(path))


def _unreadable_reason(path: str) -> str:
    """Why PATH cannot serve as a configuration."""
    if not os.path.exists(path):
        return "No such file or directory"
    if not os.access(path, os.R_OK):
        return "Permission denied"
    return "Not a regular file"


def _new_parser() -> configparser.ConfigParser:
    """A case-preserving parser, as PCP's tools read their .conf files."""
    parser = configparser.ConfigParser()
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    return parser


def _parse_error_exit(conf: str, error: configparser.Error) -> NoReturn:
    """Report a .conf syntax error as PCP's tools do, and exit 1."""
    lineno = getattr(error, "lineno", None)
    if lineno is None:
        errors = getattr(error, "errors", None)
        lineno = errors[0][0] if errors else "?"
    _fail(f"Failed to read configuration file '{conf}', line {lineno}:\n{error.message}\n")


def _unquote(value: str) -> str:
    """VALUE without one pair of surrounding double quotes."""
    if value.startswith('"') and value.endswith('"'):
        return value[1:-1]
    return value


def _abbreviated_label(label: str) -> str:
    """A rate's unit label in the short form the tools print (libpcp's units.c)."""
    if " / " not in label:
        return label
    for long, short in _LABEL_ABBREVIATIONS:
        label = label.replace(long, short)
    return label


def _dimension(units: Any) -> tuple[int, int, int]:
    """(dimCount, dimSpace, dimTime) of a pmUnits."""
    return (units.dimCount, units.dimSpace, units.dimTime)


def _is_simple_name(pattern: str) -> bool:
    """True for a pattern made of letters, digits, '.', '_' and '-' only (a process
    name or an instance name, rather than a regular expression)."""
    return pattern.replace(".", "").replace("_", "").replace("-", "").isalnum()


def _is_process_instance(name: str) -> bool:
    """True for a proc-style instance name: "PID command ..."."""
    return " " in name and name.split()[0].isdigit()


class pmConfig:
    """Configuration reader and metric validator for one tool (PCP's pmConfig)."""

    class pmfg_items_to_indom:
        """Per-instance fetchgroup items, callable like an extend_indom item."""

        def __init__(self, items: list[tuple[int, str, Any]]) -> None:
            self._items = items

        def __call__(self) -> list[tuple[int, str, Any]]:
            return self._items

    def __init__(self, util: Any) -> None:
        self.arghelp = ("-?", "--help", "-V", "--version")
        self.metricspec = (
            "label",
            "instances",
            "unit",
            "type",
            "width",
            "precision",
            "limit",
            "formula",
        )
        self.util = util
        self.pmids: list[int] = []
        self.descs: list[Any] = []
        self.insts: list[Any] = []
        self.texts: list[list[Any]] = []
        self.labels: list[list[Any]] = []
        self.res_labels: OrderedDict[str, list[Any]] = OrderedDict()
        self._round = 0
        self._init_ts: float | None = None
        self._pred_indom: list[int] = []
        self._re_cache: dict[str, list[re.Pattern[str]]] = {}
        self._tmp: Any = []
        self._conf_metrics: OrderedDict[str, Any] = OrderedDict()
        self._prev_insts: Any = []

    # -- signals and configuration files ------------------------------------------------

    def set_signal_handler(self) -> None:
        """Finalize the tool and exit 0 on SIGHUP and SIGTERM."""

        def handler(_signum: int, _frame: Any) -> None:
            self.util.finalize()
            sys.exit(0)

        for name in ("SIGHUP", "SIGTERM"):
            signum = getattr(signal, name, None)
            if signum is not None:
                # (not the main thread, or not supported here: no handler)
                with contextlib.suppress(OSError, ValueError):
                    signal.signal(signum, handler)

    def set_config_file(self, default_config: list[str]) -> str | None:
        """Deprecated name of set_config_path."""
        return self.set_config_path(default_config)

    def set_config_path(self, default_config: list[str]) -> str | None:
        """The configuration to read: the first readable of DEFAULT_CONFIG ($HOME and
        $PCP_SYSCONF_DIR expanded), unless -c/--config on the command line names one
        (which must be readable: IOError otherwise); None when help or version is asked."""
        home = os.path.expanduser("~")
        sysconf = pmapi.pmContext.pmGetConfig("PCP_SYSCONF_DIR") or ""
        config = None
        for candidate in default_config:
            path = candidate.replace("$HOME", home).replace("$PCP_SYSCONF_DIR", sysconf)
            if _readable(path):
                config = path
                break
        args = iter(sys.argv[1:])
        for arg in args:
            if arg in self.arghelp:
                return None
            if arg in ("-c", "--config"):
                named = next(args, None)
                if named is None:  # (a dangling -c: the default stands)
                    break
                config = named
            elif arg.startswith("-c"):
                config = arg.replace("-c", "", 1)
            else:
                continue
            if not _readable(config):
                raise OSError(
                    f"Failed to read configuration from '{config}':\n{_unreadable_reason(config)}."
                )
        return config

    def _get_conf_files(self) -> list[str]:
        """The .conf files of the util's configuration (a file, or a directory's
        readable *.conf files in name order)."""
        config = self.util.config
        if not config:
            return []
        if os.path.isfile(config):
            return [config]
        files = []
        for name in sorted(os.listdir(config)):
            path = os.path.join(config, name)
            if path.endswith(".conf") and os.access(path, os.R_OK) and os.path.isfile(path):
                files.append(path)
        return files

    def set_attr(self, name: str, value: Any) -> None:
        """Set the util's option NAME from its configuration file text VALUE."""
        value = str(value)
        if name == "colxrow":  # (pmrep's; kept as text, quotes dropped)
            self.util.colxrow = _unquote(value)
            return
        if value in _TRUE_WORDS:
            value = 1
        elif value in _FALSE_WORDS:
            value = 0
        setter = self._ATTR_SETTERS.get(name)
        if setter is not None:
            setter(self, value)
            return
        try:
            setattr(self.util, name, int(value))
        except ValueError:
            setattr(self.util, name, _unquote(value))

    def _set_speclocal(self, value: Any) -> None:
        self.util.speclocal = value

    def _set_derived(self, value: Any) -> None:
        text = str(value)
        self.util.derived = text if ";" in text else text.replace(",", ";")

    def _set_samples(self, value: Any) -> None:
        self.util.opts.pmSetOptionSamples(str(value))
        self.util.samples = self.util.opts.pmGetOptionSamples()

    def _set_interval(self, value: Any) -> None:
        self.util.opts.pmSetOptionInterval(str(value))
        self.util.interval = self.util.opts.pmGetOptionInterval()

    def _set_type(self, value: Any) -> None:
        self.util.type = 1 if value == "raw" else 0

    def _set_type_prefer(self, value: Any) -> None:
        self.util.type_prefer = 1 if value == "raw" else 0

    def _set_instances(self, value: Any) -> None:
        self.util.instances = str(value).split(",")

    _ATTR_SETTERS: ClassVar[dict[str, Callable[[pmConfig, Any], None]]] = {
        "speclocal": _set_speclocal,
        "derived": _set_derived,
        "samples": _set_samples,
        "interval": _set_interval,
        "type": _set_type,
        "type_prefer": _set_type_prefer,
        "instances": _set_instances,
    }

    def read_section_options(self, config: configparser.ConfigParser, section: str) -> None:
        """Set the util's options from SECTION (ValueError on an empty value, or on an
        unknown option in [options])."""
        if not config.has_section(section):
            return
        for opt in config.options(section):
            if opt in self.util.keys:
                value = config.get(section, opt)
                if not value:
                    raise ValueError(f"No value set for option {opt} in [{section}]")
                self.set_attr(opt, value)
            elif section == "options":
                raise ValueError(f"Unknown option {opt} in [{section}]")

    def read_options(self) -> None:
        """Set the util's options from its .conf files: [options], then the sections
        of the metricsets named on the command line (":name")."""
        config = _new_parser()
        for conf in self._get_conf_files():
            try:
                config.read(conf)
                self.read_section_options(config, "options")
                for arg in sys.argv[1:]:
                    if arg.startswith(":") and arg[1:] in config.sections():
                        self.read_section_options(config, arg[1:])
            except configparser.Error as error:
                _parse_error_exit(conf, error)
            except ValueError as error:
                _fail(f"Failed to read configuration file '{conf}':\n{error}.\n")

    def read_cmd_line(self) -> list[str] | None:
        """Parse sys.argv with the options set up in pmOptions; the operands."""
        c_api.pmSetOptionFlags(c_api.PM_OPTFLAG_DONE)
        if c_api.pmGetOptionsFromList(sys.argv):
            raise pmapi.pmUsageErr()
        return c_api.pmGetOperands()

    # -- metric specifications ----------------------------------------------------------

    def parse_instances(self, instances: str) -> list[str]:
        """A comma-separated instance list (CSV quoting), each one's quotes dropped."""
        fields = next(csv.reader([instances]))
        parsed = []
        for inst in fields:
            if inst[:1] in ("'", '"'):
                inst = inst[1:]
            if inst[-1:] in ("'", '"'):
                inst = inst[:-1]
            parsed.append(inst)
        return parsed

    def parse_metric_spec_instances(self, spec: str) -> tuple[str, list[str]]:
        """Split the instances (third field, perhaps quoted and holding commas) out of a
        metric spec "metric,label,instances,unit,...": (spec without them, instances)."""
        if spec.count(",") < 2:
            return spec + ",,", []
        field = spec.split(",")[2]
        # A .conf file keeps the outer quotes of the field, a command line does not.
        outer_quoted = len(field) > 2 and field[0] in ("'", '"')
        insts: list[str] = []
        if "'" in spec or '"' in spec:
            rest = spec.partition(",")[2].partition(",")[2]
            quote = rest[0]
            inststr = rest[: rest.rfind(quote) + 1]
            insts = self.parse_instances(inststr[1:-1] if outer_quoted else inststr)
            spec = spec.replace(inststr, "")
        elif field:
            insts = [field]
        if spec.count(",") < 2:
            spec += ",,"
        return spec, insts

    def parse_new_verbose_metric(self, metrics: dict[str, list[Any]], key: str, value: str) -> None:
        """Start the verbose (multi-line) definition KEY of metric VALUE."""
        metrics[key] = [value, None, []] + [None] * (len(self.metricspec) - 3)

    def parse_verbose_metric_info(
        self, metrics: dict[str, list[Any]], key: str, spec: str, value: str
    ) -> None:
        """Add "KEY.SPEC = VALUE" to a verbose definition (a formula becomes a derived
        metric of the util)."""
        value = _unquote(value)
        if spec == "formula":
            definition = f";{metrics[key][0]}={value}"
            self.util.derived = (
                definition if self.util.derived is None else self.util.derived + definition
            )
            return
        slot = self.metricspec.index(spec) + 1
        metrics[key][slot] = [value] if spec == "instances" else value

    def _second_component(self, key: str) -> str | None:
        """The part of KEY after its first dot, up to the next (None without a dot)."""
        parts = key.split(".")
        return parts[1] if len(parts) > 1 else None

    def parse_metric_info(self, metrics: dict[str, list[Any]], key: str, value: str) -> None:
        """Parse one "KEY = VALUE" line of a metricset: a compact definition (metric
        KEY, VALUE "label,instances,unit,...") or a verbose one (KEY = metric, then
        KEY.label = ..., KEY.unit = ...)."""
        qualifier = self._second_component(key)
        verbose_key = qualifier is not None and qualifier in self.metricspec
        compact = "," in value or (qualifier is not None and not verbose_key)
        if compact and qualifier == "formula":  # (formulas may hold commas)
            compact = False
        if compact:
            spec, insts = self.parse_metric_spec_instances(key + "," + value)
            fields: list[Any] = spec.split(",")
            fields[2] = insts
            metrics[key] = fields
        elif not verbose_key:
            self.parse_new_verbose_metric(metrics, key, value)
        else:
            base, spec = key.rsplit(".")  # (ValueError for "a.label.b", as in PCP)
            if base not in metrics:
                raise ValueError(f"Undeclared metric key {base}")
            self.parse_verbose_metric_info(metrics, base, spec, value)

    def _command_line_metrics(self, operands: list[str]) -> OrderedDict[str, Any]:
        """The metrics and metricsets (":name" -> None) of the command line."""
        items: OrderedDict[str, Any] = OrderedDict()
        for operand in operands:
            if operand.startswith(":"):
                items[operand[1:]] = None
            else:
                spec, insts = self.parse_metric_spec_instances(operand)
                fields: list[Any] = spec.split(",")
                fields[2] = insts
                items[fields[0]] = fields[1:]
        return items

    def _metricset(
        self, parser: configparser.ConfigParser, section: str, conf: str
    ) -> OrderedDict[str, list[Any]]:
        """The metrics of metricset SECTION by metric name, its option keys skipped
        (exit 1 on an empty value or a bad definition)."""
        parsed: OrderedDict[str, list[Any]] = OrderedDict()
        for key in parser.options(section):
            value = parser.get(section, key)
            if not value:
                _fail(
                    f"Failed to read configuration file '{conf}':\n"
                    f"No value set for {key} in [{section}].\n"
                )
            if self._is_option_key(key):
                continue
            try:
                self.parse_metric_info(parsed, key, value)
            except ValueError as error:
                _fail(f"Failed to read configuration file '{conf}':\n{error}.\n")
        return OrderedDict((fields[0], fields[1:]) for fields in parsed.values())

    def _global_metrics(self, parser: configparser.ConfigParser, conf: str) -> dict[str, Any]:
        """The [global] metrics of one .conf file, which may set no options (exit 1 on
        an option, an empty value or a bad definition)."""
        if not parser.has_section("global"):
            return {}
        parsed: OrderedDict[str, list[Any]] = OrderedDict()
        for key in parser.options("global"):
            value = parser.get("global", key)
            if key in self.util.keys:
                _fail(
                    f"Failed to read configuration file '{conf}':\n"
                    "Section [global] contains options.\n"
                )
            if not value:
                _fail(
                    f"Failed to read configuration file '{conf}':\n"
                    f"No value set for {key} in [global].\n"
                )
            try:
                self.parse_metric_info(parsed, key, value)
            except ValueError:
                # PCP 6.0.3 misformats this one message, so what its tools show for a
                # bad [global] definition is the TypeError that raises; the same here.
                sys.stderr.write("Failed to read configuration file ")
                raise TypeError("not all arguments converted during string formatting") from None
        return OrderedDict((fields[0], fields[1:]) for fields in parsed.values())

    def _is_option_key(self, key: str) -> bool:
        """True for a metricset key that is one of the util's options."""
        return key in self.util.keys or key in getattr(self.util, "keys_ignore", ())

    def prepare_metrics(self) -> None:
        """Build util.metrics from the command line's metrics and metricsets, the
        metricsets read from the .conf files (later files override earlier ones) and,
        with util.globals, their [global] sections."""
        operands = self.util.opts.pmGetOperands()
        if not operands:
            sys.stderr.write("No metrics specified.\n")
            raise pmapi.pmUsageErr()
        wanted = self._command_line_metrics(operands)
        globals_: OrderedDict[str, Any] = OrderedDict()
        all_sets = _new_parser()
        sources: dict[str, str] = {}
        config = _new_parser()
        for conf in self._get_conf_files():
            try:
                config.read(conf)
            except configparser.Error as error:
                _parse_error_exit(conf, error)
            if self.util.globals == 1:
                globals_.update(self._global_metrics(config, conf))
            for section in config.sections():
                if all_sets.has_section(section):
                    all_sets.remove_section(section)
                all_sets.add_section(section)
                sources[section] = conf
                for key, value in config.items(section):
                    all_sets.set(section, key, value.replace("%", "%%"))
                if section not in ("options", "global"):
                    config.remove_section(section)

        from_sets: OrderedDict[str, Any] = OrderedDict()
        for name, fields in wanted.items():
            if fields is None and all_sets.has_section(name):
                from_sets.update(self._metricset(all_sets, name, sources[name]))
                wanted[name] = from_sets
        for name, fields in wanted.items():
            if fields is None:
                _fail(f"Metricset definition ':{name}' not found.\n")

        if self.util.globals == 1:
            self.util.metrics.update(globals_)
        for name, fields in wanted.items():
            if isinstance(fields, list):
                self.util.metrics[name] = fields
            else:
                for metric in fields:
                    self.util.metrics[metric] = from_sets[metric]
        if not self.util.metrics:
            _fail("No metrics specified.\n")
        self._conf_metrics = deepcopy(self.util.metrics)

    # -- texts and labels ---------------------------------------------------------------

    def provide_texts(self) -> bool:
        """True when the util wants help texts."""
        return _util_flag(self.util, "include_texts")

    def provide_labels(self) -> bool:
        """True when the util wants labels."""
        return _util_flag(self.util, "include_labels")

    def _dict_to_flat_list(self, d: dict[str, Any]) -> list[tuple[str, Any]]:
        """The (name, value) leaves of a nested label dict."""
        leaves: list[tuple[str, Any]] = []
        for key, value in d.items():
            if isinstance(value, dict):
                leaves.extend(self._dict_to_flat_list(value))
            else:
                leaves.append((key, value))
        return leaves

    def merge_labels(self, d1: dict[str, Any], d2: dict[str, Any]) -> dict[str, Any]:
        """D1's labels overridden by D2's."""
        return {**d1, **d2}

    def get_labels_str(
        self, metric: str, inst: int | None = None, curr: bool = True, combine: bool = True
    ) -> str:
        """The labels of METRIC (and instance INST) as "{'name':'value',...}", from the
        current results (CURR) or the initial instances."""
        if curr:
            metric_labels, inst_table = self.res_labels[metric]
        else:
            metric_labels, inst_table = self.labels[list(self.util.metrics).index(metric)]
        if inst in (None, c_api.PM_IN_NULL):
            labels = metric_labels
        else:
            if not curr:
                inst_table = {inst: inst_table[inst]} if inst_table else {}
            own = inst_table.get(inst, {})
            if not combine:
                if not own:
                    return "{}"
                labels = own
            else:
                labels = self.merge_labels(metric_labels, own)
        pairs = ",".join(f"'{k}':'{v}'" for k, v in self._dict_to_flat_list(labels))
        return "{" + pairs + "}"

    def get_inst_labels(self, indom: int, curr: bool = True, insts: Any = ()) -> Any:
        """The labels of INDOM's instances: a dict by instance (CURR), or a list in the
        order of INSTS."""
        if indom == c_api.PM_INDOM_NULL:
            return {} if curr else []
        table = self.util.context.pmGetInstancesLabels(indom)
        if curr:
            return table
        return [table.get(i, {}) for i in insts]

    # -- filtering switches -------------------------------------------------------------

    def do_live_filtering(self) -> bool:
        """True when instances are filtered at each sample rather than up front."""
        return _util_flag(self.util, "live_filter")

    def do_invert_filtering(self) -> bool:
        """True when the instance filter is applied after ranking."""
        return _util_flag(self.util, "invert_filter")

    def ignore_unknown_metrics(self) -> bool:
        """True when unknown metrics are skipped rather than fatal."""
        return _util_flag(self.util, "ignore_unknown")

    def names_change_action(self) -> int:
        """What to do when pmcd's namespace changes: 0 ignore, 1 abort, 2 update."""
        return getattr(self.util, "names_change", 0)

    # -- metric discovery -----------------------------------------------------------------

    def get_metric_indom(self, desc: Any) -> tuple[Any, Any]:
        """The instances of DESC's domain (every one an archive holds, in archive mode)."""
        if self.util.context.type == c_api.PM_CONTEXT_ARCHIVE:
            return self.util.context.pmGetInDomArchive(desc)
        return self.util.context.pmGetInDom(desc)

    def get_proc_basename(self, proc: str) -> str:
        """The command name of a process argument ("(kthread)", "-bash", "/bin/sh:")."""
        if proc.startswith("("):
            return proc[1:-1]
        if proc.startswith("-"):
            proc = proc[1:]
        if proc.endswith(":"):
            proc = proc[:-1]
        return os.path.basename(proc)

    def _matching_instances(self, pattern: str, codes: list[int], names: list[str]) -> list[int]:
        """Indexes of the instances PATTERN selects: the first whose name starts with
        the instance number PATTERN, and the processes named PATTERN; else those whose
        whole name the regular expression PATTERN matches. Exits 1, naming the kind of
        pattern being tried, when PATTERN cannot be used."""
        stage = ""
        try:
            hits: list[int] = []
            if pattern.isdigit():
                stage = "Invalid instance"
                if names[0].split()[0].isdigit():
                    hits += self._numbered(int(pattern), names)
            if _is_simple_name(pattern):
                stage = "Invalid process"
                if _is_process_instance(names[0]):
                    hits += self._processes(pattern, names)
            if hits:
                return hits
            stage = "Invalid regex"
            regex = re.compile(r"\A" + pattern + r"\Z")
            return [i for i, name in enumerate(names) if regex.match(name)]
        except Exception as error:
            _fail(f"{stage} '{pattern}': {error}.\n")

    @staticmethod
    def _numbered(number: int, names: list[str]) -> list[int]:
        """The index of the first instance whose name starts with NUMBER."""
        for i, name in enumerate(names):
            head = name.split()[0]
            if head.isdigit() and int(head) == number:
                return [i]
        return []

    def _processes(self, command: str, names: list[str]) -> list[int]:
        """Indexes of the proc instances ("PID args") running COMMAND."""
        return [
            i for i, name in enumerate(names) if command == self.get_proc_basename(name.split()[1])
        ]

    def _select_instances(self, inst: tuple[list[int], list[str]], wanted: list[str]) -> Any:
        """INST narrowed to the instances WANTED selects (None when none match)."""
        codes: list[int] = []
        names: list[str] = []
        for pattern in wanted:
            for i in self._matching_instances(pattern, *inst):
                codes.append(inst[0][i])
                names.append(inst[1][i])
        return (codes, names) if codes else None

    def _texts_of(self, pmid: int, desc: Any) -> list[Any]:
        """[one-line help, full help, indom one-line, indom full] of a metric (None
        where there is no text)."""
        texts: list[Any] = [None, None, None, None]
        context = self.util.context
        try:
            texts[0] = context.pmLookupText(pmid, c_api.PM_TEXT_ONELINE)
            texts[1] = context.pmLookupText(pmid, c_api.PM_TEXT_HELP)
            if desc.contents.indom != c_api.PM_INDOM_NULL:
                texts[2] = context.pmLookupInDomText(desc, c_api.PM_TEXT_ONELINE)
                texts[3] = context.pmLookupInDomText(desc, c_api.PM_TEXT_HELP)
        except pmapi.pmErr as error:
            if error.args[0] != c_api.PM_ERR_TEXT:
                raise
        return texts

    def _labels_of(self, pmid: int, desc: Any, codes: list[int]) -> tuple[Any, Any, Any]:
        """(metric labels, labels of CODES in order, labels by instance); empty when
        labels are not wanted or cannot be had."""
        if not self.provide_labels():
            return {}, [], {}
        try:
            metric_labels = self.util.context.pmLookupLabels(pmid)
            listed = self.get_inst_labels(desc.contents.indom, False, codes)
            current = self.get_inst_labels(desc.contents.indom)
        except Exception:  # (labels are a decoration: a metric without them still reports)
            return {}, [], {}
        return metric_labels, listed, current

    def check_metric(self, metric: str) -> None:
        """Validate one leaf METRIC and record its pmid, descriptor, instances (narrowed
        to the metric's or the util's instance specs), texts and labels; a pmTraversePMNS
        callback. An incompatible or unknown metric is fatal unless
        util.ignore_incompat."""
        try:
            self._check_metric(metric)
        except pmapi.pmErr as error:
            if _util_flag(self.util, "ignore_incompat"):
                return
            _fail(f"Invalid metric {metric} ({error}).\n")

    def _check_metric(self, metric: str) -> None:
        context = self.util.context
        pmid = context.pmLookupName(metric)[0]
        if pmid in self.pmids:
            return
        desc = context.pmLookupDescs(pmid)[0]
        inst: Any = ([c_api.PM_IN_NULL], [None])
        if desc.contents.indom != c_api.PM_INDOM_NULL:
            found = self.get_metric_indom(desc)
            if found[0]:
                inst = found
        if desc.contents.type not in _REPORTABLE_TYPES:
            raise pmapi.pmErr(c_api.PM_ERR_TYPE)
        wanted = self._tmp or self.util.instances
        if _util_flag(self.util, "omit_flat") and not inst[1][0]:
            return
        if wanted and inst[1][0] and not self.do_live_filtering():
            inst = self._select_instances(inst, wanted)
            if inst is None:
                return
        self.pmids.append(pmid)
        self.descs.append(desc)
        self.insts.append(inst)
        if self.provide_texts():
            self.texts.append(self._texts_of(pmid, desc))
        metric_labels, listed, current = self._labels_of(pmid, desc, inst[0])
        self.labels.append([metric_labels, listed])
        self.res_labels[metric] = [metric_labels, current]

    def format_metric_label(self, label: str) -> str:
        """A unit label in the tools' short form ("Kbyte / sec" -> "Kbyte/s")."""
        return _abbreviated_label(label)

    def integer_roundup(self, value: float, upper: int) -> int:
        """VALUE rounded up to a multiple of UPPER."""
        return math.ceil(value / float(upper)) * upper

    def validate_common_options(self) -> None:
        """Check the util's integer options (exit 1 naming the first bad one)."""
        for attr, non_negative in _INTEGER_OPTIONS:
            value = getattr(self.util, attr, None)
            if not value or (attr == "repeat_header" and value == "auto"):
                continue
            err = "Non-negative integer expected" if non_negative else "Integer expected"
            try:
                setattr(self.util, attr, int(value))  # (kept converted, even when negative)
                if non_negative and getattr(self.util, attr) < 0:
                    raise ValueError(err)
            except ValueError:
                _fail(f"Error while reading option {attr}: {err}.\n")

    # -- validation -----------------------------------------------------------------------

    def _register_derived(self) -> None:
        """Load the util's derived metrics: files (paths starting "/" or ".") and
        "name=expression" definitions not already in the namespace."""
        for derived in filter(None, self.util.derived.split(";")):
            if derived.startswith(("/", ".")):
                try:
                    self.util.context.pmLoadDerivedConfig(derived)
                except pmapi.pmErr as error:
                    _fail(
                        "Failed to load derived metric definitions from file "
                        f"'{derived}':\n{error}.\n"
                    )
                continue
            err = self._register_one_derived(derived)
            if err:
                _fail(f"Failed to register derived metric:\n{err}.\n")

    def _register_one_derived(self, derived: str) -> str:
        """Register DERIVED ("name=expression"); the error text, or ""."""
        if "=" not in derived:
            return "Invalid syntax (expected metric=expression)"
        name, expr = derived.split("=", 1)
        try:
            self.util.context.pmLookupName(name.strip())
            return ""
        except pmapi.pmErr as error:
            if error.args[0] != c_api.PM_ERR_NAME:
                return error.message()
        except Exception:
            return "Unidentified error"
        try:
            self.util.context.pmRegisterDerived(name.strip(), expr.strip())
        except pmapi.pmErr as error:
            return error.message()
        except Exception:
            return "Unidentified error"
        return ""

    def _expand_non_leaf(self) -> None:
        """Replace each non-leaf name of util.metrics by its leaves (in namespace order,
        each leaf taking the spec of its subtree), keeping the metric order; an unknown
        name stays (for check_metric to reject) unless unknown metrics are ignored."""
        specs = self.util.metrics
        self.util.metrics = OrderedDict()
        for name in list(specs):

            def add_leaf(leaf: str, base: str = name) -> None:
                if leaf == base or leaf not in self.util.metrics:
                    self.util.metrics[leaf] = deepcopy(specs[base])

            self._tmp = name
            try:
                self.util.context.pmTraversePMNS(name, add_leaf)
            except pmapi.pmErr as error:
                if error.args[0] != c_api.PM_ERR_NAME:
                    raise
                if not self._ignorable_unknown(name):
                    self.util.metrics[name] = deepcopy(specs[name])

    def _ignorable_unknown(self, name: str) -> bool:
        """True when NAME is unknown and unknown configured metrics are ignored."""
        try:
            self.util.context.pmLookupName(name)
        except pmapi.pmErr as error:
            if error.args[0] != c_api.PM_ERR_NAME:
                raise
            return self.ignore_unknown_metrics() and name in self._conf_metrics
        return False

    def _check_all(self) -> None:
        """Run check_metric over every leaf of util.metrics, keeping the names that
        gave at least one compatible metric."""
        specs = self.util.metrics
        self.util.metrics = OrderedDict()
        for name, spec in specs.items():
            before = len(self.pmids)
            self._tmp = spec[1]
            try:
                self.util.context.pmTraversePMNS(name, self.check_metric)
            except pmapi.pmErr as error:
                _fail(f"Invalid metric {name} ({error}).\n")
            if len(self.pmids) > before:
                self.util.metrics[name] = spec

    def validate_metrics(self, curr_insts: bool = CURR_INSTS, max_insts: int = 0) -> None:
        """Resolve util.metrics against the namespace and complete every metric's list
        (label, instances, unit, rawness, width, precision, limit), adding each to the
        util's fetchgroup: per instance when CURR_INSTS, else the whole domain (up to
        MAX_INSTS values, or a size guessed from the instances)."""
        if not hasattr(self.util, "leaf_only"):
            self.util.metrics = deepcopy(self._conf_metrics)
        predicate = getattr(self.util, "predicate", None)
        if predicate:
            for name in predicate.split(","):
                self.util.metrics.setdefault(name, ["", []])
        if self.util.derived:
            self._register_derived()
        if not getattr(self.util, "leaf_only", False):
            self._expand_non_leaf()
        self._check_all()

        if not self.insts and not self.ignore_unknown_metrics():
            sys.stderr.write("No matching instances found.\n")
            if self.util.instances:
                print("\nRequested global instances:")
                print(self.util.instances)
            sys.exit(1)

        incompatible: OrderedDict[str, int] = OrderedDict()
        for i, metric in enumerate(self.util.metrics):
            try:
                self._finalize_metric(i, metric, curr_insts, max_insts)
            except SystemExit:
                raise
            except Exception:
                if not _util_flag(self.util, "ignore_incompat"):
                    raise
                incompatible[metric] = i
        for metric, i in reversed(incompatible.items()):
            self._forget_metric(metric, i)

        if not self.util.metrics:
            if self.ignore_unknown_metrics():
                _fail("Not one known metric found.\n")
            _fail("No compatible metrics found.\n")
        if predicate:
            self.validate_predicate()

    def _forget_metric(self, metric: str, i: int) -> None:
        """Drop every trace of the I-th metric."""
        del self.pmids[i]
        del self.descs[i]
        del self.insts[i]
        if self.provide_texts():
            del self.texts[i]
        if self.provide_labels():
            del self.labels[i]
        del self.util.metrics[metric]

    def _finalize_metric(self, i: int, metric: str, curr_insts: bool, max_insts: int) -> None:
        """Complete the I-th metric's list and add it to the fetchgroup."""
        spec = self.util.metrics[metric]
        # (every slot filled: instances with a list, the others with None)
        spec.extend([[] if slot == _INSTS else None for slot in range(len(spec), 8)])
        desc = self.descs[i].contents
        flat = self.insts[i][0][0] == c_api.PM_IN_NULL
        if not spec[_LABEL]:
            spec[_LABEL] = self._default_label(metric)
        if not spec[_INSTS] and self.util.instances and not flat:
            spec[_INSTS] = self.util.instances
        if flat:
            spec[_INSTS] = []
        if not max_insts:
            max_insts = self.integer_roundup(len(self.insts[i][0]), 1000)
        spec[_TYPE] = self._rawness(spec[_TYPE])
        unit_text = self._unit_text(spec[_UNIT], desc.units)
        spec[_UNIT], units = self._unit_triple(unit_text, spec[_TYPE], desc)
        mtype = self._fetch_type(units, spec[_TYPE], desc)
        spec[_WIDTH] = self._width(metric, spec[_LABEL], spec[_WIDTH])
        spec[_PREC_RESOLVED] = self._precision(metric, spec[_PRECISION])
        spec[_FGITEM] = None
        spec[_LIMIT] = self._limit(metric, spec[_LIMIT], desc.type)
        spec[_FGITEM] = self._fetchgroup_item(i, metric, spec, mtype, curr_insts, max_insts)
        if self.do_live_filtering():
            self._cache_filters(metric, spec[_INSTS])

    @staticmethod
    def _default_label(metric: str) -> str:
        """mem.util.free -> m.u.free (a one-part name keeps itself)."""
        parts = metric.split(".")
        initials = "".join(p[0] + "." for p in parts)
        return initials[:-2] + parts[-1]

    def _rawness(self, kind: Any) -> int:
        """1 when values are reported raw rather than as rates."""
        if hasattr(self.util, "type_prefer") and not kind:
            raw = self.util.type_prefer
        else:
            raw = 1 if kind == "raw" else 0
        if getattr(self.util, "type", None) == 1 or getattr(self.util, "output", None) == "archive":
            raw = 1
        return raw

    def _unit_text(self, wanted: Any, units: Any) -> str:
        """The unit to report in: the util's forced scale for the metric's dimension,
        else the metric's own spec, else the util's default scale, else native."""
        for dimension, forced, default in _SCALE_OPTIONS:
            if _dimension(units) != dimension:
                continue
            if _util_flag(self.util, forced):
                wanted = getattr(self.util, forced)
            elif not wanted and _util_flag(self.util, default):
                wanted = getattr(self.util, default)
        if not wanted or getattr(self.util, "output", None) == "archive":
            wanted = str(units)
        return wanted

    def _unit_triple(self, text: str, raw: int, desc: Any) -> tuple[tuple[str, Any, float], Any]:
        """(label, pmUnits, multiplier) for unit TEXT, " / s" added to rate labels."""
        try:
            units, mult = self.util.context.pmParseUnitsStr(text)
        except pmapi.pmErr as error:
            _fail(f"{error}: {text}.\n")
        label = text
        if (
            raw == 0
            and desc.type != c_api.PM_TYPE_STRING
            and desc.sem == c_api.PM_SEM_COUNTER
            and "/" not in label
        ):
            label += " / s"
        return (self.format_metric_label(label), units, mult), units

    @staticmethod
    def _fetch_type(units: Any, raw: int, desc: Any) -> int:
        """The type to fetch in: native when unscaled, double for rescaled values and
        rates, strings as strings."""
        if desc.type == c_api.PM_TYPE_STRING:
            return desc.type
        if raw == 0 and desc.sem == c_api.PM_SEM_COUNTER:
            return c_api.PM_TYPE_DOUBLE
        if str(units) == str(desc.units):
            return desc.type
        return c_api.PM_TYPE_DOUBLE

    def _width(self, metric: str, label: str, width: Any) -> int:
        """The column width: the metric's, else the util's, else the label's; at least
        len(TRUNC)."""
        if width:
            try:
                width = int(width)
                if width < 0:
                    raise ValueError(width)
            except (TypeError, ValueError):
                _fail(f"Non-negative integer expected: {metric}\n")
        else:
            width = getattr(self.util, "width", 0)
        forced = getattr(self.util, "width_force", None)
        if forced is not None:
            width = forced
        if not width:
            width = len(label)
        return max(width, len(TRUNC))

    def _precision(self, metric: str, precision: Any) -> int:
        """The number of decimals: the metric's, else the util's, else 3."""
        if precision:
            try:
                precision = int(precision)
            except (TypeError, ValueError):
                _fail(f"Non-negative integer expected: {metric}\n")
        else:
            precision = getattr(self.util, "precision", 3)
        forced = getattr(self.util, "precision_force", None)
        return forced if forced is not None else precision

    def _limit(self, metric: str, limit: Any, mtype: int) -> Any:
        """The value limit filter (none for strings)."""
        if limit:
            try:
                limit = int(limit)
            except (TypeError, ValueError):
                _fail(f"Integer expected: {metric}\n")
        elif hasattr(self.util, "limit_filter"):
            limit = self.util.limit_filter
        if _util_flag(self.util, "limit_filter_force"):
            limit = self.util.limit_filter_force
        return None if mtype == c_api.PM_TYPE_STRING else limit

    def _fetchgroup_item(
        self, i: int, metric: str, spec: list[Any], mtype: int, curr_insts: bool, max_insts: int
    ) -> Any:
        """The fetchgroup item of the I-th metric: one per current instance (those gone
        already dropped), or the whole domain."""
        scale = spec[_UNIT][0]
        max_insts = max(1, max_insts)
        if not (curr_insts and spec[_INSTS]):
            return self.util.pmfg.extend_indom(metric, mtype, scale, max_insts)
        codes, names = self.insts[i]
        items = []
        vanished = []
        for j, name in enumerate(names):
            try:
                item = self.util.pmfg.extend_item(metric, mtype, scale, name)
            except pmapi.pmErr as error:
                if error.args[0] == c_api.PM_ERR_CONV:
                    raise
                vanished.append(j)
                continue
            items.append((codes[j], name, item))
        if items:
            for j in reversed(vanished):
                del codes[j]
                del names[j]
                if self.provide_labels():
                    del self.labels[i][1][j]
        return self.pmfg_items_to_indom(items)

    def _cache_filters(self, metric: str, patterns: list[str]) -> None:
        """Compile METRIC's instance patterns for live filtering."""
        self._re_cache[metric] = []
        for pattern in patterns:
            try:
                self._re_cache[metric].append(re.compile(r"\A" + pattern + r"\Z"))
            except re.error as error:
                _fail(f"Invalid regex '{pattern}': {error}.\n")

    def validate_predicate(self) -> None:
        """Check the util's predicate metrics: reported, with instances, numeric."""
        names = list(self.util.metrics)
        for predicate in self.util.predicate.split(","):
            if predicate not in self.util.metrics:
                _fail(f"Predicate metric {predicate} filtered out.\n")
            i = names.index(predicate)
            self._pred_indom.append(self.descs[i].contents.indom)
            if self.insts[i][0][0] == c_api.PM_IN_NULL:
                _fail("Predicate metric must have instances.\n")
            if self.descs[i].contents.type == c_api.PM_TYPE_STRING:
                _fail("Predicate metric values must be numeric.\n")

    # -- options and sampling -------------------------------------------------------------

    def finalize_options(self) -> None:
        """Settle util.samples and util.interval: a finish time (-T) sets the run time,
        from which the interval follows the sample count or the count the interval."""
        opts = self.util.opts
        if opts.pmGetOptionFinishOptarg():
            origin = opts.pmGetOptionOrigin()
            origin = 0 if origin is None else float(origin)
            self.util.runtime = float(opts.pmGetOptionFinish()) - origin
            if opts.pmGetOptionSamples():
                self.util.samples = max(2, opts.pmGetOptionSamples())
                opts.pmSetOptionInterval(str(float(self.util.runtime) / (self.util.samples - 1)))
                self.util.interval = opts.pmGetOptionInterval()
            else:
                self.util.interval = opts.pmGetOptionInterval() or pmapi.timeval(0)
                with contextlib.suppress(ZeroDivisionError, ValueError, OverflowError):
                    self.util.samples = int(self.util.runtime / float(self.util.interval) + 1)
        else:
            self.util.samples = opts.pmGetOptionSamples()
            self.util.interval = opts.pmGetOptionInterval()
        if float(self.util.interval) <= 0:
            _fail("Interval must be greater than zero.\n")

    def clear_metrics(self) -> None:
        """Forget every metric (and the fetchgroup's items)."""
        self.util.metrics = OrderedDict()
        self.pmids = []
        self.descs = []
        self.insts = []
        self.texts = []
        self.labels = []
        self.res_labels = OrderedDict()
        self.util.pmfg.clear()
        self.util.pmfg_ts = None

    def update_metrics(self, curr_insts: bool = CURR_INSTS, max_insts: int = 0) -> None:
        """Rebuild the metricset and fetchgroup from the configuration."""
        self.clear_metrics()
        self.util.pmfg_ts = self.util.pmfg.extend_timestamp()
        self.validate_metrics(curr_insts, max_insts)

    def fetch(self) -> int:
        """Fetch a sample: 0 done, 1 the namespace changed (update the metrics), -1 end
        of archive, -2 past the finish time (uninterpolated), -3 namespace changed
        (abort)."""
        try:
            state = self.util.pmfg.fetch()
        except pmapi.pmErr as error:
            if error.args[0] == c_api.PM_ERR_EOL:
                return -1
            if error.args[0] == c_api.PM_ERR_TOOSMALL:
                raise pmapi.pmErr(
                    c_api.PM_ERR_TOOSMALL, "\nNo metrics or instances to report present."
                ) from None
            raise
        if not self.util.interpol:
            sample = float(self.util.pmfg_ts().strftime("%s"))
            if sample > float(self.util.opts.pmGetOptionFinish()):
                return -2
        if state & c_api.PMCD_NAMES_CHANGE:
            action = self.names_change_action()
            if action == 1:
                return -3
            if action == 2:
                return 1
        return 0

    def pause(self) -> None:
        """Sleep until the next sample is due (counted from the first sample's time,
        so the pace does not drift)."""
        self._round += 1
        if not self._init_ts:
            self._init_ts = float(self.util.pmfg_ts().strftime("%s.%f"))
        delay = self._init_ts + float(self.util.interval) * self._round - time.time()
        if delay > 0:
            time.sleep(delay)

    # -- results --------------------------------------------------------------------------

    def filter_instance(self, metric: str, name: str) -> bool:
        """True when instance NAME passes METRIC's live filter."""
        if not self._re_cache[metric]:
            return True
        if _is_process_instance(name):
            command = self.get_proc_basename(name.split()[1])
            for pattern in self.util.metrics[metric][_INSTS]:
                if _is_simple_name(pattern) and pattern == command:
                    return True
        return any(regex.match(name) for regex in self._re_cache[metric])

    def rank(self, instances: list[tuple[int, str, Any]]) -> list[tuple[int, str, Any]]:
        """The util.rank highest (positive) or lowest (negative) values."""
        if not self.util.rank:
            return instances
        ordered = sorted(instances, key=lambda value: value[2], reverse=self.util.rank > 0)
        return ordered[: abs(self.util.rank)]

    def get_sorted_results(self, valid_only: bool = False) -> OrderedDict[str, list[Any]]:
        """Deprecated name of get_ranked_results."""
        return self.get_ranked_results(valid_only)

    def _within_limit(self, value: Any, limit: Any) -> bool:
        """True when VALUE passes the limit filter (positive: at least, negative: at
        most its size)."""
        if limit > 0:
            return not value < limit
        if limit < 0:
            return not value > abs(limit)
        return True

    def _metric_values(self, metric: str, predicates: Any, early_filter: bool) -> list[Any]:
        """(instance, name, value) of METRIC in the latest sample, filtered."""
        spec = self.util.metrics[metric]
        values: list[Any] = []
        try:
            for inst, name, getter in spec[_FGITEM]():
                if inst != c_api.PM_IN_NULL and not name:
                    continue  # (an instance gone since the previous sample)
                if (
                    early_filter
                    and inst != c_api.PM_IN_NULL
                    and not self.filter_instance(metric, name)
                ):
                    continue
                try:
                    value = getter()
                    if (
                        spec[_LIMIT]
                        and metric not in predicates
                        and not self._within_limit(value, spec[_LIMIT])
                    ):
                        continue
                except Exception:  # (no value this sample: leave it out)
                    continue
                values.append((inst, name, value))
        except Exception:  # (the whole metric missing this sample)
            pass
        return values

    def _refresh_result_labels(self, results: OrderedDict[str, list[Any]]) -> None:
        """Re-read instance labels when the reported instances changed."""
        current = [(m, tuple(v[0] for v in values)) for m, values in results.items() if values]
        if current == self._prev_insts:
            return
        previous = self.res_labels
        self.res_labels = OrderedDict()
        self._prev_insts = current
        names = list(self.util.metrics)
        for metric, values in results.items():
            i = names.index(metric)
            inst_labels = None
            if metric in previous:
                metric_labels = previous[metric][0]
                known = previous[metric][1].keys()
                if all(v[0] in known for v in values):
                    inst_labels = previous[metric][1]
            else:
                metric_labels = self.util.context.pmLookupLabels(self.pmids[i])
            if inst_labels is None:
                inst_labels = self.get_inst_labels(self.descs[i].contents.indom)
            self.res_labels[metric] = [metric_labels, inst_labels]

    def _apply_predicates(
        self, results: OrderedDict[str, list[Any]], predicates: list[str]
    ) -> None:
        """Rank the predicate metrics and keep, of metrics over a predicate's instance
        domain, only the instances the predicates kept."""
        kept: dict[int, list[int]] = {}
        for n, predicate in enumerate(predicates):
            results[predicate] = self.rank(results[predicate])
            chosen = kept.setdefault(self._pred_indom[n], [])
            chosen.extend(v[0] for v in results[predicate] if v[0] not in chosen)
        names = list(self.util.metrics)
        for metric in results:
            spec = self.util.metrics[metric]
            if metric in predicates:
                # (a predicate's own limit applies after ranking, so that other metrics
                # keep the instances it ranked)
                if spec[_LIMIT]:
                    results[metric] = [
                        v for v in results[metric] if self._within_limit(v[2], spec[_LIMIT])
                    ]
                continue
            indom = self.descs[names.index(metric)].contents.indom
            if indom in self._pred_indom:
                results[metric] = [v for v in results[metric] if v[0] in kept[indom]]
            else:
                results[metric] = self.rank(results[metric])

    def get_ranked_results(self, valid_only: bool = False) -> OrderedDict[str, list[Any]]:
        """The latest sample by metric: [(instance, name, value), ...] filtered by
        instance and limit, ranked, and narrowed by the predicates; metrics without
        values left out when VALID_ONLY."""
        predicate = getattr(self.util, "predicate", None)
        predicates = predicate.split(",") if predicate else []
        early_filter = self.do_live_filtering() and not self.do_invert_filtering()
        results: OrderedDict[str, list[Any]] = OrderedDict()
        for metric in self.util.metrics:
            values = self._metric_values(metric, predicates, early_filter)
            if values or not valid_only:
                results[metric] = values
        if self.provide_labels():
            self._refresh_result_labels(results)
        if not results:
            return results
        if predicates:
            self._apply_predicates(results, predicates)
        elif getattr(self.util, "rank", None):
            for metric in results:
                results[metric] = self.rank(results[metric])
        if self.do_live_filtering() and self.do_invert_filtering():
            for metric in results:
                results[metric] = [v for v in results[metric] if self.filter_instance(metric, v[1])]
        return results
