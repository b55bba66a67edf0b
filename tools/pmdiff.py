"""pmdiff: the metrics whose averages differ most between two archives (or two time
windows of one), as PCP 6's pmdiff script reports them.

    pmdiff [-dz] [-p precision] [-q threshold] [-S start] [-T finish] [-B start2]
           [-E finish2] [-x regex] [-X file] [-Z tz] [--skip-missing] [--skip-excluded]
           archive1 [archive2]

Each archive is summarised by pmlogsummary -N (found on $PATH, as the script runs it),
one average per metric and instance; metrics matching an exclusion pattern (always
pmcd.pmlogger.port) are dropped, and the two summaries are matched by name.  A pair is
reported when one average is zero and the other not, or when their ratio reaches the
threshold either way; rows go out grouped (new, above 100, by ratio, below 0.001, gone)
and ordered as the script's sort(1) orders them.  The script's awk, sed, sort and join
stages are small functions here, with their semantics (awk's number-or-string fields,
POSIX byte order, sort's blank-led fields) kept where they decide the output.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from purepcp.pmapi.options import Opt, Tool, pcp_getopt

PROG = "pmdiff"
TOOL = Tool(
    PROG,
    "[options] archive1 [archive2]",
    [
        (
            "Options",
            [
                Opt("d", "keep", None, "debug, keep intermediate files"),
                Opt("p", "precision", "N", "number of digits to display after the decimal point"),
                Opt("q", "threshold", "N", "change interesting threshold to be > N or < 1/N [N=2]"),
                Opt(
                    None, "skip-missing", None, "do not report metrics missing between the archives"
                ),
                Opt(
                    None, "skip-excluded", None, "do not report the list of metrics being excluded"
                ),
                Opt("S", "start", "TIME", "start of the time window"),
                Opt("T", "finish", "TIME", "end of the time window"),
                Opt("B", "begin", "TIME", "start time for second archive (optional)"),
                Opt("E", "end", "TIME", "end time for second archive (optional)"),
                Opt("x", None, "REGEX", "egrep(1) pattern of metric(s) to be excluded"),
                Opt("X", None, "FILE", "file containing egrep(1) patterns to exclude"),
                Opt("Z", "timezone", "TZ", "set reporting timezone"),
                Opt(
                    "z", "hostzone", None, "set reporting timezone to local time of metrics source"
                ),
                Opt("V", "version", None, "display version number and exit"),
                Opt("?", "help", None, "show this usage message and exit"),
            ],
        )
    ],
)
_OPTS = [o for _, group in TOOL.sections for o in group]
SHORTS = "".join(o.short + (":" if o.arg else "") for o in _OPTS if o.short)
#: long options only (pmgetopt hands these to the script under their own name)
LONGS = [(o.long, o.short or o.long, o.arg is not None) for o in _OPTS if o.long]

#: What is always excluded (a pattern line of the script's exclude file).
ALWAYS_EXCLUDED = "^pmcd.pmlogger.port \n"
#: _fix's sed: the average after the name (and any units after it) becomes "|average".
_AVERAGE = re.compile(r' +([0-9][0-9.]*)([^"]*)$')
_DROPPED = (
    re.compile(r"^\*.* - insufficient archive data.$"),
    re.compile(r"^Note: timezone set to local timezone of host"),
    re.compile(r"^[ \t]*$"),
)


@dataclass
class Settings:
    """The command line, as the script's option loop leaves its variables."""

    keep: bool = False
    precision: str = "3"
    threshold: str = "2"
    start: tuple[str, str] = ("", "")  # -S, -B
    finish: tuple[str, str] = ("", "")  # -T, -E
    summary_opts: list[str] = field(default_factory=list)  # -p, -z, -Z for pmlogsummary
    exclude: str = ALWAYS_EXCLUDED
    skip_missing: bool = False
    skip_excluded: bool = False
    archives: list[str] = field(default_factory=list)
    version: bool = False
    bad: bool = False  # a usage error or --help


def parse(argv: Sequence[str]) -> Settings:
    """The settings ARGV gives, in the order the script applies them."""
    s = Settings()
    start, finish = ["", ""], ["", ""]
    for item in pcp_getopt(argv, SHORTS, LONGS):
        if isinstance(item, str):
            s.archives.append(item)
            continue
        key, value = item[0], str(item[1])
        if key in ("!", "?"):
            s.bad = True
        elif key == "d":
            s.keep = True
        elif key == "p":
            s.precision = value
            s.summary_opts += ["-p", *value.split()]
        elif key == "q":
            s.threshold = value
        elif key in "SB":
            start["SB".index(key)] = value
        elif key in "TE":
            finish["TE".index(key)] = value
        elif key == "x":
            s.exclude += value + "\n"
        elif key == "X":
            s.exclude += _cat(value)
        elif key == "z":
            s.summary_opts.append("-z")
        elif key == "Z":
            s.summary_opts += ["-Z", *value.split()]
        elif key == "skip-missing":
            s.skip_missing = True
        elif key == "skip-excluded":
            s.skip_excluded = True
        elif key == "V":
            s.version = True
            break  # (the script exits as it meets -V)
    s.start, s.finish = (start[0], start[1]), (finish[0], finish[1])
    if not s.version and not 1 <= len(s.archives) <= 2:
        s.bad = True
    return s


def _cat(path: str) -> str:
    """cat(1) of PATH: its text, or "" and cat's complaint on stderr."""
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "surrogateescape")
    except OSError as exc:
        sys.stderr.write(f"cat: {path}: {exc.strerror}\n")
        return ""


# -- awk's view of a field --------------------------------------------------------------

_STRNUM = re.compile(r"[ \t\n]*[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?[ \t\n]*\Z")
_PREFIX = re.compile(r"[ \t\n]*([-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)")


def awk_number(text: str) -> float:
    """The number awk reads from TEXT (its leading numeric part, else 0)."""
    m = _PREFIX.match(text)
    return float(m.group(1)) if m else 0.0


def _awk_const(x: float) -> str:
    """A number constant as awk turns it into a string (CONVFMT "%.6g", integers whole)."""
    return str(int(x)) if x == int(x) else f"{x:.6g}"


def awk_greater(text: str, x: float) -> bool:
    """awk's FIELD > X: numeric when the field looks like a number, else as strings."""
    if _STRNUM.match(text):
        return float(text) > x
    return text.encode("utf-8", "surrogateescape") > _awk_const(x).encode()


def awk_equal(a: str, b: str) -> bool:
    """awk's $3 == $2 for two fields."""
    if _STRNUM.match(a) and _STRNUM.match(b):
        return float(a) == float(b)
    return a == b


def _divide(a: float, b: float) -> float:
    if b == 0:
        raise ZeroDivisionError
    return a / b


# -- the pipeline's stages ---------------------------------------------------------------


def fix(summary: str, exclude: Sequence[re.Pattern[str]]) -> list[str]:
    """_fix: pmlogsummary's lines as "name|average", chatter and exclusions dropped,
    sorted on the name in byte order."""
    lines = []
    for line in summary.splitlines():
        line = _AVERAGE.sub(r"|\1", line, count=1)
        if any(p.search(line) for p in _DROPPED):
            continue
        if any(p.search(line) for p in exclude):
            continue
        lines.append(line)
    return sorted(lines, key=lambda ln: (_bytes(ln.split("|", 1)[0]), _bytes(ln)))


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


#: POSIX bracket classes (grep -E knows them, Python's re does not), as ranges.
_CLASSES = {
    "[:alpha:]": "a-zA-Z", "[:digit:]": "0-9", "[:alnum:]": "a-zA-Z0-9", "[:upper:]": "A-Z",
    "[:lower:]": "a-z", "[:space:]": " \\t\\n\\r\\f\\v", "[:blank:]": " \\t",
    "[:xdigit:]": "0-9A-Fa-f", "[:punct:]": "!-/:-@\\[-`{-~",
}  # fmt: skip


def exclusions(text: str) -> list[re.Pattern[str]]:
    """grep -E -f's patterns, one a line (one grep cannot read matches nothing here)."""
    patterns = []
    for line in text.split("\n")[:-1] if text.endswith("\n") else text.split("\n"):
        for name, members in _CLASSES.items():
            line = line.replace(name, members)
        try:
            patterns.append(re.compile(line))
        except re.error:
            continue
    return patterns


def join(left: Sequence[str], right: Sequence[str]) -> tuple[list[str], list[str], list[str]]:
    """join -t'|' on the first field of two sorted lists: (paired lines "key|a|b",
    lines only in LEFT, lines only in RIGHT)."""
    paired, only_left, only_right = [], [], []
    i = j = 0
    key = _join_key
    while i < len(left) or j < len(right):
        if j >= len(right) or (i < len(left) and key(left[i]) < key(right[j])):
            only_left.append(left[i])
            i += 1
        elif i >= len(left) or key(left[i]) > key(right[j]):
            only_right.append(right[j])
            j += 1
        else:
            k = key(left[i])
            i2, j2 = i, j
            while i2 < len(left) and key(left[i2]) == k:
                i2 += 1
            while j2 < len(right) and key(right[j2]) == k:
                j2 += 1
            for a in left[i:i2]:
                for b in right[j:j2]:
                    rest_a = a.split("|", 1)[1:] or [""]
                    rest_b = b.split("|", 1)[1:]
                    paired.append("|".join([a.split("|", 1)[0], *rest_a[:1], *rest_b]))
            i, j = i2, j2
    return paired, only_left, only_right


def _join_key(line: str) -> bytes:
    return _bytes(line.split("|", 1)[0])


@dataclass(frozen=True)
class Columns:
    """doval's layout for one precision."""

    precision: int

    def value(self, text: str) -> str:
        """One average, right-aligned in its column, with as many decimals as fit."""
        p, v = self.precision, awk_number(text)
        extra = p - 3
        if awk_greater(text, 99999999):
            return _f(v, 15 + extra, 0) + " "
        if awk_greater(text, 999):
            return _f(v, 11, 0) + " " * (2 + p)
        if awk_greater(text, 99):
            return _f(v, 13 + extra, 1 + extra) + "   "
        if awk_greater(text, 9):
            return _f(v, 14 + extra, 2 + extra) + "  "
        return _f(v, 15 + extra, p) + " "


def _f(v: float, width: int, decimals: int) -> str:
    """C's %*.*f (awk's printf), inf and nan included."""
    if math.isinf(v) or math.isnan(v):
        word = ("-" if v < 0 else "") + ("inf" if math.isinf(v) else "nan")
        return word.rjust(width)
    return f"{v:{width}.{max(decimals, 0)}f}"


def compare(pairs: Iterable[str], threshold: float, columns: Columns) -> list[str]:
    """The awk stage: a row for each pair that is new, gone or past the threshold."""
    rows = []
    for line in pairs:
        f = line.split("|")
        name, a, b = f[0], (f[1] if len(f) > 1 else ""), (f[2] if len(f) > 2 else "")
        va, vb = awk_number(a), awk_number(b)
        if vb == 0 or va == 0:
            if awk_equal(b, a):
                continue
            mark = "|-|" if vb == 0 else "|+|"
            rows.append(f"{columns.value(a)}{columns.value(b)}   {mark}   {name}")
            continue
        if not (va / vb >= threshold or vb / va >= threshold):
            continue
        r = vb / va
        if r < 0.001:
            ratio = " 0.001-"
        elif r < 0.01:
            ratio = f"{r:6.3f} "
        elif r > 100:
            ratio = " 100+  "
        else:
            ratio = f"{r:5.2f}  "
        rows.append(f"{columns.value(a)}{columns.value(b)} {ratio} {name}")
    return rows


def _sort_fields(line: str) -> list[str]:
    """sort(1)'s fields without -t: each begins with the blanks before it."""
    return re.findall(r"[ \t]*[^ \t]+|[ \t]+$", line)


_SORT_NUMBER = re.compile(r"[ \t]*(-?[0-9]*(?:\.[0-9]*)?)")


def _sort_numeric(text: str) -> float:
    m = _SORT_NUMBER.match(text)
    digits = m.group(1) if m else ""
    try:
        return float(digits) if digits.strip("-.") else 0.0
    except ValueError:
        return 0.0


def order(rows: Sequence[str]) -> list[str]:
    """sort -k 3,3nr -k 4 (POSIX), then the sed that names the extreme ratios, then the
    five groups in their report order."""

    def key(line: str):
        fields = _sort_fields(line)
        third = fields[2] if len(fields) > 2 else ""
        rest = "".join(fields[3:])
        return (-_sort_numeric(third), _bytes(rest), _bytes(line))

    done = [
        row.replace("100+", ">100", 1).replace(" 0.001-", "<0.001 ", 1)
        for row in sorted(rows, key=key)
    ]
    groups: list[list[str]] = [[], [], [], [], []]
    for row in done:
        words = row.split()
        third = words[2] if len(words) > 2 else ""
        if third == "|+|":
            groups[0].append(row)
        elif third == ">100":
            groups[1].append(row)
        elif third[:1].isdigit():
            groups[2].append(row)
        elif third == "<0.001":
            groups[3].append(row)
        elif third == "|-|":
            groups[4].append(row)
    return [row for group in groups for row in group]


# -- the command ------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """pmdiff(1) on ARGV (else sys.argv): its exit status."""
    return TOOL.main(_run, argv)


def _run(argv: list[str]) -> int:
    s = parse(argv)
    if s.version:
        from purepcp.pmapi import version_line

        sys.stdout.write(version_line(PROG) + "\n")
        return 0
    if s.bad:
        sys.stderr.write(TOOL.usage())
        return 1
    out = sys.stdout
    report(s, out)
    return 0


def _window(start: str, finish: str) -> str:
    return f"{start or 'start'}-{finish or 'end'}"


def _precision(text: str) -> int:
    try:
        p = int(text)
    except ValueError:
        return 3
    return 3 if p < 3 or p > 15 else p


def _threshold(text: str) -> float:
    return awk_number(text)


def report(s: Settings, out) -> None:
    """The script's report, from the settings, to OUT."""
    arch1 = s.archives[0]
    arch2 = s.archives[1] if len(s.archives) == 2 else arch1
    precision = _precision(s.precision)
    colwidth = 12 + precision
    keep_dir = _keep_dir() if s.keep else None
    out.write(f"Directory: {_pwd()}\n")
    if not s.skip_excluded:
        out.write("Excluded metrics:\n" + _indent(s.exclude))
    out.write("\n")
    patterns = exclusions(s.exclude)
    starts = (s.start[0], s.start[1] or s.start[0])
    finishes = (s.finish[0], s.finish[1] or s.finish[0])
    sides = []
    for n, arch in enumerate((arch1, arch2)):
        opts = list(s.summary_opts)
        if starts[n]:
            opts += ["-S", *starts[n].split()]
        if finishes[n]:
            opts += ["-T", *finishes[n].split()]
        text, err = summarise(opts, arch)
        lines = fix(text, patterns)
        _keep(keep_dir, str(n + 1), lines)
        if err:
            out.write(f"Warnings from pmlogsummary ... {arch}\n{err}\n")
        sides.append(lines)
    window1 = _window(s.start[0], s.finish[0])
    window2 = _window(s.start[1], s.finish[1])
    paired, only1, only2 = join(sides[0], sides[1])
    if not s.skip_missing:
        for missing, arch, window in ((only2, arch1, window1), (only1, arch2, window2)):
            if missing:
                out.write(f"Missing from {arch} {window} (not compared) ...\n")
                out.writelines(f"    {line.split('|', 1)[0]}\n" for line in missing)
                out.write("\n")
    thres = _threshold(s.threshold)
    inverse = 1 / thres if thres else math.inf
    out.write(f"Ratio Threshold: >= {_f(thres, 0, 2)} or <= {_f(inverse, 0, 3)}\n")
    a1, a2 = os.path.basename(arch1.rstrip("/")), os.path.basename(arch2.rstrip("/"))
    out.write(f"{a1:>{colwidth}} {a2:>{colwidth}}   Ratio  Metric-Instance\n")
    out.write(f"{window1:>{colwidth}} {window2:>{colwidth}}\n")
    rows = compare(paired, thres, Columns(precision))
    ordered = order(rows)
    _keep(keep_dir, "out", ordered)
    out.writelines(row + "\n" for row in ordered)


def _indent(text: str) -> str:
    """sed 's/^/    /' over TEXT (a last line without its newline stays so)."""
    if not text:
        return ""
    lines = text.split("\n")
    tail = lines.pop() if not text.endswith("\n") else None
    body = "".join(f"    {ln}\n" for ln in lines[: len(lines) - (0 if tail is not None else 1)])
    return body + (f"    {tail}" if tail is not None else "")


def summarise(opts: Sequence[str], archive: str) -> tuple[str, str]:
    """pmlogsummary -N OPTS ARCHIVE, as the script runs it: (stdout, stderr)."""
    env = dict(os.environ, LC_ALL="POSIX")
    args = ["pmlogsummary", "-N", *opts, *archive.split()]
    try:
        done = subprocess.run(args, capture_output=True, env=env, check=False)
    except OSError as exc:
        return "", f"{PROG}: pmlogsummary: {exc.strerror}\n"
    return (
        done.stdout.decode("utf-8", "surrogateescape"),
        done.stderr.decode("utf-8", "surrogateescape"),
    )


def _pwd() -> str:
    """The shell's pwd: $PWD when it names the current directory, else the real path."""
    here = os.getcwd()
    pwd = os.environ.get("PWD")
    if pwd and os.path.isabs(pwd):
        try:
            if os.path.samefile(pwd, here):
                return pwd
        except OSError:
            pass
    return here


def _keep_dir() -> str | None:
    """-d: the intermediate files go to ./tmp (made if need be), and stay."""
    path = os.path.join(_pwd(), "tmp")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:
        return None
    return path


def _keep(folder: str | None, name: str, lines: Sequence[str]) -> None:
    if folder is None:
        return
    with open(os.path.join(folder, name), "w", errors="surrogateescape") as f:
        f.writelines(line + "\n" for line in lines)


if __name__ == "__main__":
    sys.exit(main())
