"""One pmlogrewrite run after its command line: input, rules, checks, output."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import sys
import tempfile

from purepcp.pmapi.errors import PM_ERR_LOGFILE, PM_ERR_NODATA, PMError, pmErrStr

from .errors import SemanticError, SpecError, Where
from .options import PROG, Options
from .specs import Rules

PM_LOG_FEATURES = 1 << 31  # the label feature bits libpcp knows (PM_LOG_FEATURE_QA)
_ARCHIVE_FILE = re.compile(r"\.(?:meta|index|\d+)(?:\.(?:xz|lzma|bz2|gz|zst))?$")


def _say(text: str) -> None:
    sys.stdout.flush()
    sys.stderr.write(text)


def run(o: Options) -> int:
    from purepcp.pmapi.archive.reader import Archive

    in_name = o.operands[-1] if o.inplace else o.operands[0]
    try:
        archive = Archive(in_name)
    except PMError as exc:
        if exc.code == PM_ERR_NODATA:
            _say(f'{PROG}: Warning: empty archive "{in_name}" will be skipped\n')
            return 0
        code = exc.code
        if code == PM_ERR_LOGFILE and not _any_file(in_name):
            code = -errno.ENOENT  # (libpcp's answer for a name that is no archive at all)
        _say(f'{PROG}: Error: cannot open archive "{in_name}": {pmErrStr(code)}\n')
        return 1
    if archive.version == 3 and archive.label.features & ~PM_LOG_FEATURES:
        _say(
            f'{PROG}: Warning: archive "{in_name}": unsupported feature bits,'
            " other errors may follow ...\n"
        )
    from .source import Source

    source = Source(archive)
    in_version = archive.version
    version = o.version or in_version
    if version == 2 and in_version == 3:
        _say(f"{PROG}: Error: cannot create a v2 archive from v3 ({in_name})\n")
        return 1
    out_name = o.operands[-1]
    bak = ""
    if o.inplace and not o.check:
        folder = os.path.dirname(in_name) or "."
        out_name, bak = _temp_name(folder), _temp_name(folder)
    rules = Rules()
    where = Where()
    try:
        _read_rules(o, source, rules, where, version)
    except (SpecError, SemanticError) as exc:
        _say(exc.report())
        return 1
    if o.verbose:
        from .checks import report

        sys.stdout.write(report(rules, source))
        sys.stdout.flush()
    if o.check:
        return 0
    if o.quick:
        from .checks import any_change

        if not any_change(rules):
            if "appl3" in o.debug or "all" in o.debug:
                _say("Done, no rewriting required\n")
            return 0
    return _rewrite(o, source, rules, in_name, out_name, bak, version)


def _temp_name(folder: str) -> str:
    """A fresh name in FOLDER (made, then removed, as PCP's mkstemp dance)."""
    fd, path = tempfile.mkstemp(prefix="", dir=folder)
    os.close(fd)
    os.unlink(path)
    return path


def _read_rules(o: Options, source, rules: Rules, where: Where, version: int) -> None:
    from .checks import check_indoms, check_output, link_entries, link_labels
    from .parser import Parser

    parser = Parser(source, rules, where, wflag=o.warnings, sflag=o.scale, out_version=version)
    for path in o.configs:
        try:
            with open(path, encoding="utf-8", errors="surrogateescape") as f:
                text = f.read()
        except OSError as exc:
            _say(f'{PROG}: Cannot open config file "{path}": {exc.strerror}\n')
            raise SystemExit(1) from None
        if o.verbose > 1:
            _say(f"Start configfile: {path}\n")
        parser.parse_file(path, text)
    link_entries(rules, source, where)
    link_labels(rules, source, where)
    check_indoms(rules, source, where)
    check_output(rules, source, where, o.warnings)


def _rewrite(o: Options, source, rules: Rules, in_name: str, out_name: str, bak: str,
             version: int) -> int:  # fmt: skip
    from .rewrite import RewriteError, Rewriter
    from .values import ConversionError

    rewriter = Rewriter(source, rules, out_name, version)
    try:
        rewriter.run()
    except PMError as exc:
        if rewriter.writer is None:
            _say(f"{PROG}: Error: __pmLogCreate({out_name},v{version}): {pmErrStr(exc.code)}\n")
            return 1
        _say(f"{PROG}: Error: {exc}\n")
        return _abandon(o, rewriter, in_name, out_name, bak)
    except (RewriteError, ConversionError) as exc:
        _say(f"{PROG}: {exc}\n")
        if isinstance(exc, ConversionError) and exc.result is not None:
            from .values import dump_result

            _say(dump_result(exc.result, exc.failed, source))
        return _abandon(o, rewriter, in_name, out_name, bak)
    writer = rewriter.writer
    assert writer is not None
    if o.inplace:
        writer.sync()
    writer.close()
    source.archive.close()
    if o.inplace:
        if not _rename(in_name, bak) or not _rename(out_name, in_name):
            return _abandon(o, rewriter, in_name, out_name, bak)
        _remove(bak)
    return 0


def _abandon(o: Options, rewriter, in_name: str, out_name: str, bak: str) -> int:
    if rewriter.writer is not None:
        with contextlib.suppress(Exception):
            rewriter.writer.close()
    if o.desperate:
        _say(f'Archive "{out_name}" creation truncated.\n')
        return 1
    if not o.inplace:
        _say(f'Archive "{out_name}" not created.\n')
    _remove(out_name)
    if o.inplace and bak:
        _rename(bak, in_name)
    return 1


def _files(base: str) -> list[str]:
    folder = os.path.dirname(base) or "."
    stem = os.path.basename(base)
    try:
        entries = os.listdir(folder)
    except OSError:
        return []
    return [e[len(stem):] for e in entries
            if e.startswith(stem) and _ARCHIVE_FILE.fullmatch(e[len(stem):])]  # fmt: skip


def _rename(old: str, new: str) -> bool:
    """Every file of archive OLD renamed to NEW's base; all or nothing."""
    done: list[str] = []
    for suffix in _files(old):
        if os.path.exists(new + suffix):
            _say(f"__pmLogRename: destination file {new + suffix} already exists\n")
            break
        try:
            os.rename(old + suffix, new + suffix)
        except OSError as exc:
            _say(f"__pmLogRename: rename {old + suffix} -> {new + suffix} failed: {exc.strerror}\n")
            break
        done.append(suffix)
    else:
        return True
    for suffix in reversed(done):
        with contextlib.suppress(OSError):
            os.rename(new + suffix, old + suffix)
    return False


def _remove(base: str) -> None:
    for suffix in _files(base):
        with contextlib.suppress(OSError):
            os.unlink(base + suffix)


def _any_file(name: str) -> bool:
    base = _ARCHIVE_FILE.sub("", name)
    return os.path.exists(name) or bool(_files(base))
