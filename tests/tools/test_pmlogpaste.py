"""pmlogpaste: a string kept as a one-record archive, as PCP's pmlogpaste writes it."""

from __future__ import annotations

import re
import signal
import subprocess
import sys

import pytest

from purepcp.tools import pmlogpaste
from tests.support.our_pmcd import ROOT
from tests.support.reference_pmcd import require_reference


def test_label_tokens_split_as_strtok_splits_them():
    assert pmlogpaste.label_token("a:b") == ("a", "b")
    assert pmlogpaste.label_token("a:b:c") == ("a", "b")
    assert pmlogpaste.label_token("::a::b") == ("a", "b")
    assert pmlogpaste.label_token("key") == ("key", None)
    assert pmlogpaste.label_token(":") == (None, None)
    assert pmlogpaste.label_token("") == (None, None)


def test_label_values_are_quoted_unless_json_words():
    assert pmlogpaste.label_json("a", "b") == '{"a":"b"}'
    assert pmlogpaste.label_json("a", "1") == '{"a":"1"}'
    assert pmlogpaste.label_json("a", "true") == '{"a":true}'
    assert pmlogpaste.label_json("a", "NULL") == '{"a":NULL}'  # (then refused by the parser)


def test_metric_names_follow_the_pmns_rules():
    for good in ("paste.value", "a", "a.b_c.D9", "x9.y_"):
        assert pmlogpaste.valid_metric_name(good), good
    for bad in ("", "9a", "a..b", "a.", ".a", "a.9b", "a.b-c", "a b", "é"):
        assert not pmlogpaste.valid_metric_name(bad), bad


def test_later_labels_replace_earlier_and_sort():
    lset = pmlogpaste.context_labels(["b:x", "a:y", "b:z"])
    assert lset.json == b'{"a":"y","b":"z"}'
    assert all(label.flags == 1 for label in lset.labels)  # PM_LABEL_CONTEXT
    assert pmlogpaste.context_labels([]) is None


@pytest.mark.parametrize(
    ("token", "message"),
    [
        ("key", "error adding label key:(null): Label value is empty"),
        (":", "invalid label token :: No error"),
        ("1a:b", "error adding label 1a:b: Error adding label"),
        ("a:TRUE", "error adding label a:TRUE: Error adding label"),
        ('a:{"x":1}', 'error adding label a:{"x": Error adding label'),
    ],
)
def test_bad_labels_are_one_line(token, message):
    with pytest.raises(pmlogpaste.PasteError) as err:
        pmlogpaste.context_labels([token])
    assert str(err.value) == message


def test_file_and_operands_together_is_a_usage_error(capsys, tmp_path):
    assert pmlogpaste.main(["-f", "x", "-o", str(tmp_path / "a"), "word"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(
        "pmlogpaste: -f/--file cannot be used with command line input\n"
        "Usage: pmlogpaste [options] archive\n"
    )
    assert not list(tmp_path.iterdir())


def test_help_is_the_usage_on_stderr(capsys):
    assert pmlogpaste.main(["--help"]) == 1
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err == pmlogpaste.TOOL.usage()
    assert "  -o OUT, --outfile=OUT set outfile\n" in out.err


def test_an_existing_archive_is_not_overwritten(capsys, tmp_path):
    base = str(tmp_path / "p")
    assert pmlogpaste.main(["-o", base, "one"]) == 0
    before = (tmp_path / "p.0").read_bytes()
    assert pmlogpaste.main(["-o", base, "two"]) == 1
    assert capsys.readouterr().err == (
        f'__pmLogNewFile: "{base}.index" already exists, not over-written\n'
        "pmlogpaste: error writing archive: File exists\n"
    )
    assert (tmp_path / "p.0").read_bytes() == before


def test_the_archive_reads_back(tmp_path):
    from purepcp.pmapi.archive.reader import Archive

    base = str(tmp_path / "p")
    assert pmlogpaste.main(["-o", base, "-h", "somehost", "-t", "UTC", "a", "b"]) == 0
    archive = Archive(base)
    try:
        assert archive.label.hostname == "somehost"
        assert archive.label.timezone == "UTC"
        records = list(archive.records())
    finally:
        archive.close()
    assert len(records) == 1
    (vset,) = records[0].result.vsets
    assert vset.pmid == pmlogpaste.PASTE_PMID
    assert vset.values[0] == "a b"


# -- against PCP's pmlogpaste --------------------------------------------------------------

#: (arguments, standard input): NAME in the arguments becomes each side's archive
CASES = [
    (["-o", "NAME"], b"123"),
    (["-o", "NAME"], b""),
    (["-o", "NAME"], b"a\0b"),
    (["-o", "NAME"], b"two\nlines\n\xff\n"),
    (["-o", "NAME", "-f", "INPUT"], b""),
    (["-o", "NAME", "-f", "-"], b"from stdin"),
    (["-o", "NAME", "-m", "paste.metric", "a", "cmd", "line", "value"], b""),
    (["-o", "NAME", "-l", "key1:val1", "-l", "key2:val2", "x"], b""),
    (["-o", "NAME", "-l", "b:c", "-l", "a:d", "-l", "b:true", "x"], b""),
    (["-o", "NAME", "-h", "myhost", "-t", "EST+5", "--metric=a.b_c"], b"v"),
    (["--outfile=NAME", "--label=k:1", "--hostname", "h"], b"v"),
    (["-o", "NAME", "-l", "key"], b"v"),
    (["-o", "NAME", "-l", "a:b:c", "-l", "z:false"], b"v"),
    (["-o", "NAME", "-l", ":"], b"v"),
    (["-o", "NAME", "-l", "_x:y"], b"v"),
    (["-o", "NAME", "-l", "a:Null"], b"v"),
    (["-o", "NAME", "-m", "a..b"], b"v"),
    (["-o", "NAME", "-m", "9abc"], b"v"),
    (["-o", "NAME", "-f", "INPUT", "word"], b""),
    (["-o", "NAME", "-Z", "-y"], b""),
    (["-?"], b""),
    (["--help"], b""),
    (["--h", "x"], b""),
    (["-o", "/nonexistent/dir/NAME"], b"v"),
    (["-o", "NAME", "-f", "/nonexistent/file"], b""),
]
_TIMES = re.compile(rb"\d\d:\d\d:\d\d\.\d{6}|\w{3} \w{3} [ \d]\d \S+ \d{4}")
_PID = re.compile(rb"PID for pmlogger: \d+")


def _paste(command: list[str], args: list[str], stdin: bytes, folder) -> tuple:
    """Run one side in FOLDER: its (status, stdout, stderr) with the folder's name
    taken out, and the dump of the archive it wrote (b"" if none)."""
    folder.mkdir()
    (folder / "INPUT").write_bytes(b"file\ncontents")
    argv = [a.replace("NAME", "arch").replace("INPUT", str(folder / "INPUT")) for a in args]
    run = subprocess.run(
        [*command, *argv], input=stdin, capture_output=True, timeout=60, cwd=folder
    )
    dump = b""
    if (folder / "arch.meta").exists():
        dumped = subprocess.run(
            ["pmdumplog", "-a", "arch"], capture_output=True, timeout=60, cwd=folder
        )
        check = subprocess.run(["pmlogcheck", "arch"], capture_output=True, cwd=folder)
        dump = _PID.sub(b"PID", _TIMES.sub(b"TIME", dumped.stdout + dumped.stderr))
        dump += b"pmlogcheck status %d\n" % check.returncode
    text = str(folder).encode()
    return run.returncode, run.stdout.replace(text, b"DIR"), run.stderr.replace(text, b"DIR"), dump


@pytest.fixture(scope="module")
def both_sides(tmp_path_factory):
    """Every case run by PCP's pmlogpaste and by ours."""
    require_reference("pmlogpaste", "pmdumplog", "pmlogcheck")
    top = tmp_path_factory.mktemp("paste")
    ours = [sys.executable, "-m", "purepcp.tools.pmlogpaste"]
    found = {}
    for n, (args, stdin) in enumerate(CASES):
        found[n] = (
            _paste(["pmlogpaste"], args, stdin, top / f"pcp{n}"),
            _paste(ours, args, stdin, top / f"ours{n}"),
        )
    return found


@pytest.mark.interop
@pytest.mark.parametrize("n", range(len(CASES)), ids=[" ".join(a) for a, _ in CASES])
def test_as_pcps_pmlogpaste(both_sides, n):
    theirs, ours = both_sides[n]
    if theirs[0] == -signal.SIGSEGV:  # (an unreadable -f file: PCP's crashes, ours says why)
        assert ours[0] == 1 and ours[2].startswith(b"pmlogpaste: cannot read ")
        return
    assert ours == theirs


@pytest.mark.interop
def test_same_bytes_as_pcps_but_pid_and_time(tmp_path):
    """With host and zone given, the files differ only in the PID and the timestamps."""
    require_reference("pmlogpaste")
    args = ["-h", "h", "-t", "UTC", "-l", "k:v", "-m", "m.n", "some", "text"]
    subprocess.run(["pmlogpaste", "-o", str(tmp_path / "pcp"), *args], check=True)
    assert pmlogpaste.main(["-o", str(tmp_path / "ours"), *args]) == 0
    for suffix in (".0", ".index", ".meta"):
        theirs = (tmp_path / f"pcp{suffix}").read_bytes()
        mine = (tmp_path / f"ours{suffix}").read_bytes()
        assert len(mine) == len(theirs)
        differ = [i for i in range(len(mine)) if mine[i] != theirs[i]]
        # the label's PID and start time (bytes 8..20), a record's or an entry's time
        assert all(_in_time_or_pid(suffix, i, mine) for i in differ), (suffix, differ)


def _in_time_or_pid(suffix: str, at: int, data: bytes) -> bool:
    labels = [4 + 4 + k for k in range(12)]  # magic, then pid, sec, usec
    if suffix == ".index":
        entries = [132 + 20 * e + k for e in range(2) for k in range(8)]
        return at in labels or at in entries
    if suffix == ".0":
        return at in labels or 132 + 4 <= at < 132 + 12
    # .meta: the label, and the label record's time (after the descriptor's record)
    record = 132 + int.from_bytes(data[132:136], "big")
    return at in labels or record + 8 <= at < record + 16


def test_unreadable_file_is_a_one_line_error(tmp_path):
    """PCP's pmlogpaste dereferences the missing text (SIGSEGV); ours says which file it
    could not read and why, and writes nothing."""
    run = subprocess.run(
        [sys.executable, "-m", "purepcp.tools.pmlogpaste", "-f", str(tmp_path / "none"),
         "-o", str(tmp_path / "a")],
        capture_output=True, cwd=ROOT, timeout=60,
    )  # fmt: skip
    assert run.returncode == 1
    assert (
        run.stderr
        == f"pmlogpaste: cannot read {tmp_path / 'none'}: No such file or directory\n".encode()
    )
    assert not list(tmp_path.iterdir())
