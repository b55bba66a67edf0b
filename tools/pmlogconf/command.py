"""pmlogconf's run: a pmcd to probe, the group files, then one of four things: report
one group file's default state (-s), report the groups' states (-g), create a new
pmlogger configuration, or update an existing one (asking about each group unless -c
or q says not to), showing the differences and keeping them if asked to.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .groups import AVAILABLE, EXCLUDE, INCLUDE, PROG, Group
from .options import USAGE, Options, read_options

#: our own group files, for the metrics our agents serve (used when PCP's are not installed)
OUR_GROUPS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "groupfiles")

HELP = """\
Valid responses are:
m         report the names of the metrics in this group
n         do not log this group
q         quit; no change for this or any of the following groups
y         log this group
/pattern  no change for this group and search for a group containing pattern
          in the description or the metrics associated with the group
"""
BAD_ANSWER = 'Error: you must answer "m", "n", "q", "y", "?" or "/pattern" ... try again\n'
BAD_INTERVAL = ('Error: logging interval must be of the form "once" or "default" or '
                '"<integer> <scale>",where <scale> is one of "sec", "secs", "min","mins", '
                "etc ... try again\n")  # fmt: skip
BAD_YN = 'Error: you must answer "y" or "n" ... try again\n'


def main(argv: Sequence[str] | None = None) -> int:
    """pmlogconf(1) on ARGV (else sys.argv): its exit status."""
    from purepcp.pmapi.options import Tool

    return Tool(PROG, "[options] configfile", []).main(_run_buffered, argv)


def _run_buffered(argv: list[str]) -> int:
    from purepcp.tools.stdio import c_stdout

    with c_stdout():
        return run(argv)


def run(argv: list[str]) -> int:
    o = read_options(argv)
    for message in o.getopt_errors:
        sys.stderr.write(message)
    if o.errors or (len(o.operands) != 1 and o.setupfile is None):
        sys.stderr.write("".join(o.messages) + ("" if o.version else USAGE))
        return 1
    if o.version:
        sys.stderr.write("".join(o.messages))
        return 0
    ctx = _connect(o)
    if o.setupfile is not None:
        return _setup_report(o, ctx)
    groupdir = _groupdir(o)
    return Session(o, ctx, groupdir, o.operands[0]).run()


def _connect(o: Options) -> Any:
    """The pmcd probed: -h's, else the local one (derived metrics play no part)."""
    from purepcp.pmapi.context import Context
    from purepcp.pmapi.errors import PMError, pmErrStr

    os.environ.pop("PCP_DERIVED_CONFIG", None)
    host = o.hosts[0] if o.hosts else "local:"
    try:
        ctx = Context.host(host)
        ctx.source.ensure()
    except PMError as exc:
        sys.stdout.flush()
        sys.stderr.write(f'{PROG}: Cannot connect to pmcd on host "{host}": {pmErrStr(exc.code)}\n')
        raise SystemExit(1) from None
    return ctx


def _groupdir(o: Options) -> str:
    """Where the group files are: -d's, else PCP's ($PCP_VAR_DIR/config/pmlogconf), else
    ours when PCP's are not there."""
    import errno

    from purepcp.pmapi.errors import pmErrStr

    path = o.groupdir
    if not path:
        path = _default_groupdir()
    import stat

    try:
        code = 0 if stat.S_ISDIR(os.stat(path).st_mode) else -errno.ENOTDIR
    except OSError as exc:
        code = -(exc.errno or errno.ENOENT)
    if code:
        sys.stdout.flush()
        sys.stderr.write(f'{PROG}: Cannot open pmlogconf groups path "{path}": {pmErrStr(code)}\n')
        raise SystemExit(1)
    return path


def _default_groupdir() -> str:
    var_dir = os.environ.get("PCP_VAR_DIR")
    if not var_dir:
        from purepcp.pmapi.paths import LayoutError, paths

        try:
            var_dir = paths()["PCP_VAR_DIR"]
        except LayoutError:
            var_dir = ""
    pcps = os.path.join(var_dir, "config", "pmlogconf") if var_dir else ""
    if pcps and os.path.isdir(pcps):
        return pcps
    system = "/var/lib/pcp/config/pmlogconf"
    return system if os.path.isdir(system) else OUR_GROUPS


# -- -s: one group file's default state -----------------------------------------------------


def _setup_report(o: Options, ctx: Any) -> int:
    from .groups import prepare, probe, read_setup_file, settle
    from .probe import probe_groups

    path = str(o.setupfile)
    try:
        group = read_setup_file(path)
    except OSError as exc:
        sys.stdout.flush()
        sys.stderr.write(f'{PROG}: Cannot open pmlogconf configuration "{path}": '
                         f"{os.strerror(exc.errno or 0)}\n")  # fmt: skip
        return 1
    if group is None:  # (not a group file: PCP's then judges an empty group)
        sys.stderr.write(f'{PROG}: Warning: /(null) neither "probe" nor "force" control '
                         'lines ... use "force available"\n')  # fmt: skip
        return 0
    if not prepare(group, ""):
        return 1
    answers = probe_groups(ctx, [group])
    probe(group, answers, "")
    settle(group, answers, "")
    report_group(o, group, "", setup=True)
    return 0


def report_group(o: Options, group: Group, groupdir: str, setup: bool = False) -> None:
    """A group's state as -g, -s and -v report it ("#+ dir/tag:y:delta:")."""
    if not group.valid:
        return
    final = o.finaltag if o.finaltag is not None or setup else "all"
    if final is not None and not setup:
        if final != "all" and final != group.tag:
            return
        state = group.saved_state or group.probe_state
        delta = group.saved_delta or group.delta_text
    else:
        state, delta = group.probe_state, group.delta_text
    out = sys.stdout
    if o.verbose:
        out.write(f"{groupdir}/{group.tag}:\n")
        if group.force:
            out.write(f"{group.force} -> ")
        else:
            out.write(f"{group.probe} -> probe={'success' if group.success else 'failure'} ")
        word = {EXCLUDE: "exclude", INCLUDE: "include"}.get(state, "available")
        out.write(f"action={word}\n")
    if state == EXCLUDE:
        out.write(f"#+ {groupdir}/{group.tag}:x::\n")
    elif state == INCLUDE:
        out.write(f"#+ {groupdir}/{group.tag}:y:{delta}:\n")
    else:
        out.write(f"#+ {groupdir}/{group.tag}:n:{delta}:\n")


# -- creating and updating a configuration -------------------------------------------------


@dataclass
class Session:
    """One configuration file created or updated from the group files."""

    o: Options
    ctx: Any
    groupdir: str
    config: str
    groups: list[Group] = field(default_factory=list)
    answers: Any = None
    prompt: bool = True
    rewrite: bool = False
    existing: bool = False
    header: str | None = None
    trailer: str | None = None
    tmpconfig: str = ""

    def run(self) -> int:
        o = self.o
        self.prompt = o.prompt
        size = self._open_config()
        self.existing = size > 0
        if not self.existing:
            self.prompt = False
        try:
            if self.existing:
                self._update()
            else:
                self._create()
        finally:
            if self.tmpconfig and os.path.exists(self.tmpconfig):
                os.unlink(self.tmpconfig)
        return 0

    def _open_config(self) -> int:
        """The configuration's size (a missing one is created, empty)."""
        path = self.config
        try:
            try:
                with open(path, "r" if self.o.finaltag is not None else "r+"):
                    pass
            except FileNotFoundError:
                with open(path, "w+"):
                    pass
            return os.stat(path).st_size
        except OSError as exc:
            sys.stdout.flush()
            sys.stderr.write(f'{PROG}: Cannot open pmlogger configuration "{path}": '
                             f"{os.strerror(exc.errno or 0)}\n")  # fmt: skip
            raise SystemExit(1) from None

    def _load_groups(self) -> None:
        """parse_groups, fetch_groups, setup_groups: the group files read, probed, their
        rules understood."""
        from .groups import prepare, read_groups
        from .probe import probe_groups

        self.groups = read_groups(self.groupdir)
        self.answers = probe_groups(self.ctx, self.groups)
        for group in self.groups:
            prepare(group, self.groupdir)

    def _settle(self, group: Group) -> int:
        from .groups import settle

        return settle(group, self.answers, self.groupdir)

    def _create(self) -> None:
        from .config import DEFAULT_TRAILER, group_text, header_text

        o = self.o
        out = sys.stdout
        out.write(f'Creating config file "{self.config}" using default settings ...\n')
        self._load_groups()
        if o.finaltag is not None:
            for group in self.groups:
                report_group(o, group, self.groupdir)
            return
        parts = [header_text(self.groupdir, o.autocreate)]
        from purepcp.pmapi.ids import PM_ID_NULL

        for group in self.groups:
            self._settle(group)
            if (not self.prompt and not o.autocreate and group.probe_state != EXCLUDE
                    and (group.pmid != PM_ID_NULL or group.metric is None)):  # fmt: skip
                out.write(".")
            parts.append(group_text(group) + "#----\n")
            if o.verbose:
                report_group(o, group, self.groupdir)
        parts.append(DEFAULT_TRAILER)
        self._write_temp("".join(parts), None)
        os.rename(self.tmpconfig, self.config)
        out.write("\n")

    def _write_temp(self, text: str, like: os.stat_result | None) -> None:
        """create_tempfile: CONFIG.new, written with TEXT (owned and moded LIKE the
        configuration it replaces)."""
        self.tmpconfig = f"{self.config}.new"
        try:
            if os.path.lexists(self.tmpconfig):
                os.unlink(self.tmpconfig)
            old = os.umask(0o022)
            try:
                fd = os.open(self.tmpconfig, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o664)
            finally:
                os.umask(old)
        except OSError as exc:
            sys.stdout.flush()
            sys.stderr.write(f"{PROG}: cannot create file {self.tmpconfig}: "
                             f"{os.strerror(exc.errno or 0)}\n")  # fmt: skip
            raise SystemExit(1) from None
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as f:
            if like is not None:
                try:
                    os.fchown(f.fileno(), like.st_uid, like.st_gid)
                except OSError as exc:
                    sys.stderr.write(
                        f"{PROG}: Warning: chown() failed: {os.strerror(exc.errno or 0)}\n"
                    )
                try:
                    os.fchmod(f.fileno(), like.st_mode & 0o7777)
                except OSError as exc:
                    sys.stderr.write(
                        f"{PROG}: Warning: chmod() failed: {os.strerror(exc.errno or 0)}\n"
                    )
            f.write(text)

    def _update(self) -> None:
        from .config import read_existing

        o = self.o
        self._load_groups()
        with open(self.config, "rb") as f:
            original = f.read().decode("utf-8", "surrogateescape")
        stat = os.stat(self.config)
        self._write_temp(original, stat)
        known = {g.tag: g for g in self.groups}
        found = read_existing(original, self.config, self.groupdir,
                              lambda g: self._finish(g, known), sys.stderr.write)  # fmt: skip
        self.header, self.trailer = found.header, found.trailer
        if o.finaltag is not None:
            for group in self.groups:
                report_group(o, group, self.groupdir)
            return
        self._ask_about_groups()
        if o.reprobe or self.rewrite or any(g.pmlogconf and not g.pmlogger for g in self.groups):
            self._rewrite()
        if o.verbose:
            for group in self.groups:
                report_group(o, group, self.groupdir)
        self._show_differences()

    def _finish(self, group: Group, known: dict[str, Group]) -> None:
        """group_finish: a group of the existing configuration merged into its group
        file's (or kept, or with -c dropped, when it has none)."""
        found = known.get(group.tag)
        if found is not None:
            found.valid = True
            found.logging = group.logging
            found.saved_state = group.saved_state
            found.saved_delta = group.saved_delta
            return
        if self.o.autocreate:
            sys.stderr.write(f"{PROG}: Warning: cannot find group file ({group.tag}): "
                             "deleting obsolete group\n")  # fmt: skip
            return
        sys.stderr.write(f"{PROG}: Warning: cannot find group file ({group.tag}): "
                         "no change is possible\n")  # fmt: skip
        group.valid = True
        self.groups.append(group)
        self.groups.sort(key=lambda g: g.tag.encode("utf-8", "surrogateescape"))
        known[group.tag] = group

    def _rewrite(self) -> None:
        from .config import DEFAULT_TRAILER, group_text, header_text

        parts = [self.header if self.header is not None
                 else header_text(self.groupdir, self.o.autocreate)]  # fmt: skip
        for group in self.groups:
            if group.valid:
                self._settle(group)
                parts.append(group_text(group) + "#----\n")
        parts.append(self.trailer if self.trailer is not None else DEFAULT_TRAILER)
        with open(self.tmpconfig, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write("".join(parts))

    # -- the questions ---------------------------------------------------------------------

    def _ask_about_groups(self) -> None:
        """update_pmlogger_tempfile's dialogue: each group in turn, searches restarting it."""
        while True:
            pattern = self._ask_each()
            if pattern is None:
                return
            out = sys.stdout
            out.write(" not found.\n")
            while True:
                out.write("Continue searching from start of the file? [y] ")
                answer = _read_line()
                answer = "y" if answer is None else answer
                if answer[:1] in ("y", "n"):
                    break
                out.write(BAD_YN)
            if answer[:1] == "n":
                self.prompt = True
            else:
                out.write(f'Searching for "{pattern}"\n')

    def _ask_each(self) -> str | None:
        """update_groups: a search pattern not found from the group asked about, or None."""
        out = sys.stdout
        o = self.o
        i = 0
        while i < len(self.groups):
            group = self.groups[i]
            i += 1
            if not group.valid or group.saved_state == EXCLUDE:
                continue
            if not self.prompt:
                if not o.autocreate:
                    out.write(".")
                continue
            if group.force:
                continue
            state = "y" if group.saved_state == INCLUDE else "n"
            out.write("\n")
            from .text import fold

            for k, line in enumerate(fold(group.ident or "", 64, 75)):
                out.write(f"Group: {line}\n" if k == 0 else f"       {line}\n")
            out.write(f"Log this group? [{state}] ")
            line = _read_line()
            answer = state if line is None else line.lstrip(" \t\v\f\r").rstrip("\n")
            if not answer:
                answer = state
            choice = answer[0]
            if choice == "?":
                out.write(HELP)
            elif choice == "m":
                out.write(f"Metrics in this group ({group.tag}):\n")
                out.write("".join(f"    {m}\n" for m in group.metrics))
                i -= 1
                continue
            elif choice == "q":
                self.prompt = False
                continue
            elif choice in "ny":
                wanted = INCLUDE if choice == "y" else AVAILABLE
                if group.saved_state != wanted:
                    self.rewrite = True
                group.saved_state = wanted
            elif choice == "/":
                pattern = answer[1:].split("\n")[0]
                out.write(f'Searching for "{pattern}"\n')
                at = _search(self.groups, i - 1, pattern)
                if at is not None:
                    i = at
                    continue
                return pattern
            else:
                out.write(BAD_ANSWER)
                i -= 1
                continue
            if self.prompt and group.saved_state == INCLUDE:
                self._ask_interval(group)
        return None

    def _ask_interval(self, group: Group) -> None:
        out = sys.stdout
        if self.o.quick:
            out.write(f"Logging interval: {group.delta_text}\n")
            return
        from purepcp.pmapi.timewindow import TimeParseError, parse_interval

        while True:
            out.write(f"Logging interval? [{group.delta_text}] ")
            line = _read_line()
            if line is None:
                break
            answer = line.lstrip(" \t\v\f\r").rstrip("\n") or "default"
            if answer in ("once", "default"):
                group.delta = answer
                break
            try:
                parse_interval(answer)
            except TimeParseError:
                out.write(BAD_INTERVAL)
                continue
            group.delta = answer
            break
        self.rewrite = True

    def _show_differences(self) -> None:
        """diff_tempfile: the differences the update makes (diff -c), kept if wanted."""
        import subprocess

        out = sys.stdout
        done = subprocess.run(["diff", "-c", self.config, self.tmpconfig], capture_output=True)
        text = done.stdout.decode("utf-8", "surrogateescape")
        if not text:
            out.write("\nNo changes\n")
            return
        out.write("\nDifferences ...\n")
        out.write(text)
        while True:
            if not self.o.autocreate:
                out.write("Keep changes? [y] ")
            line = None if self.o.autocreate else _read_line()
            answer = "y" if line is None or line[:1] in ("\n", "") else line[:1]
            if answer in ("y", "n"):
                break
            out.write(BAD_YN)
        if answer == "y":
            os.rename(self.tmpconfig, self.config)


def _search(groups: list[Group], start: int, pattern: str) -> int | None:
    """group_pattern: the first group from START whose description or metrics hold PATTERN."""
    for i in range(start, len(groups)):
        group = groups[i]
        if pattern in (group.ident or "") or any(pattern in m for m in group.metrics):
            return i
    return None


def _read_line(reader: Callable[[], str] | None = None) -> str | None:
    """A line from stdin (None at its end), as fgets reads one."""
    line = (reader or sys.stdin.readline)()
    return line if line else None
