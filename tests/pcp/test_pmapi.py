"""pcp.pmapi and cpmapi on purepcp: the same script on PCP's bindings and on ours prints
the same, over PCP's QA archives and against a pmcd; the structures have libpcp's
layout; cpmapi's numbers are PCP's."""

from __future__ import annotations

import ctypes
import re
import subprocess
import sys

import pytest

from tests.support.pcp_bindings import SYSTEM_PYTHON, require_pcp_bindings, run_both
from tests.support.qa_archives import qa

#: an address or a C string's pointer differs from run to run
_ADDRESSES = re.compile(r"0x[0-9a-f]+|c_char_p\(\d+\)")

ARCHIVE_SCRIPT = """
import sys
from pcp import pmapi
import cpmapi as c

def attempt(label, call):
    try:
        print(label, call())
    except pmapi.pmErr as e:
        print(label, "pmErr", e.code, str(e), e.message())

ctx = pmapi.pmContext(c.PM_CONTEXT_ARCHIVE, sys.argv[1])
pmids = ctx.pmLookupName(["sample.colour", "sample.seconds", "sample.bin"])
print(list(pmids))
descs = ctx.pmLookupDescs(pmids)
print([(d.contents.type, d.contents.indom, str(d.contents.units), d.sem, int(d.contents.units))
       for d in descs])
attempt("indom", lambda: ctx.pmGetInDom(descs[0]))
attempt("indom-archive", lambda: ctx.pmGetInDomArchive(descs[0]))
attempt("unknown", lambda: ctx.pmLookupName(["no.such"]))
attempt("unknowns", lambda: ctx.pmLookupName(["no.such", "sample.bin", "no.other"]))
attempt("relaxed", lambda: list(ctx.pmLookupName(["no.such", "sample.bin"], relaxed=1)))
attempt("text", lambda: ctx.pmLookupText(pmids[0]))
attempt("indom-text", lambda: ctx.pmLookupInDomText(descs[0]))
for k in range(4):
    res = ctx.pmFetch(pmids).contents
    print("fetch", res.numpmid, res.timestamp.tv_sec, res.timestamp.tv_usec,
          [res.get_numval(i) for i in range(res.numpmid)])
    for i in range(res.numpmid):
        for j in range(res.get_numval(i)):
            vtype = descs[i].contents.type
            value = res.get_vlist(i, j)
            print("  ", res.get_pmid(i), res.get_inst(i, j),
                  ctx.pmExtractValue(res.get_valfmt(i), value, vtype, c.PM_TYPE_DOUBLE).d,
                  ctx.pmExtractValue(res.get_valfmt(i), value, vtype, c.PM_TYPE_U64).ull,
                  ctx.pmExtractValue(res.get_valfmt(i), value, vtype, c.PM_TYPE_STRING).cp
                  if vtype == c.PM_TYPE_STRING else "")
    attempt("indom", lambda: ctx.pmGetInDom(descs[0]))
    attempt("name-in-dom", lambda: ctx.pmNameInDom(descs[0], 1))
    attempt("lookup-in-dom", lambda: ctx.pmLookupInDom(descs[0], "blue"))
    attempt("no-inst", lambda: ctx.pmNameInDom(descs[0], 77))
label = ctx.pmGetArchiveLabel()
print(label.get_hostname(), label.get_timezone(), label.start.tv_sec, label.start.tv_usec,
      label.pid_t, label.magic)
print(float(ctx.pmGetArchiveEnd()), ctx.pmGetContextHostName())
print(ctx.pmIDStr(pmids[0]), ctx.pmInDomStr(descs[0]), ctx.pmTypeStr(3), ctx.pmSemStr(1))
print(ctx.pmGetChildren("sample")[:5], ctx.pmGetChildrenStatus("sample")[1][:5])
names = []
ctx.pmTraversePMNS("sample", names.append)
print(len(names), names[:3], ctx.pmNameAll(pmids[0]), ctx.pmNameID(pmids[1]))
units, mult = ctx.pmParseUnitsStr("Kbyte / sec")
print(str(units), mult, int(units))
print(pmapi.timeval.fromInterval("1.5 min"), float(pmapi.timespec.fromInterval("20msec")))
attempt("interval", lambda: pmapi.timeval.fromInterval("junk"))
ctx.pmNewContextZone()
when = ctx.pmLocaltime(label.start.tv_sec)
print(when.tm_hour, when.tm_min, when.tm_wday, when.tm_yday, when.tm_isdst, when.tm_gmtoff,
      when.tm_zone, str(when), repr(ctx.pmCtime(label.start.tv_sec)))
atom = pmapi.pmAtomValue()
atom.d = 2048
msec = pmapi.pmUnits(0, 1, 0, 0, c.PM_TIME_MSEC, 0)
print(ctx.pmConvScale(c.PM_TYPE_DOUBLE, atom, descs, 1, msec).d,
      ctx.pmAtomStr(atom, c.PM_TYPE_DOUBLE), ctx.pmUnitsStr(descs[1].contents.units),
      ctx.pmGetPMNSLocation())
ctx.pmSetMode(c.PM_MODE_INTERP, label.start, 2000)
for k in range(3):
    res = ctx.pmFetch(pmids).contents
    print("interp", res.timestamp.tv_sec, res.timestamp.tv_usec, res.get_numval(1))
print(str(pmapi.pmErr(c.PM_ERR_NAME, "x", 3)), pmapi.pmErr(-2).message())
print([ctx.pmNumberStr(v) for v in (0, 0.004, 1.5, 999.995, 123456789, -99.995, 1e16)])
"""


def _normal(text: str) -> str:
    return _ADDRESSES.sub("ADDR", text)


@pytest.mark.interop
@pytest.mark.parametrize("archive", ["ok-foo", "ok-mv-foo"])
def test_an_archive_script_as_on_pcps_bindings(tmp_path, archive):
    """Lookups, descriptors, instances, text, fetches and extracted values, the label and
    end, zones and times, conversions, interpolation, errors: as PCP's binding gives them."""
    require_pcp_bindings()
    pcp, ours = run_both(ARCHIVE_SCRIPT, [qa(archive)], tmp_path)
    assert pcp[2] == 0, pcp[1]
    assert _normal(ours[0]) == _normal(pcp[0])
    assert ours[1:] == pcp[1:]


HOST_SCRIPT = """
import sys
from pcp import pmapi
import cpmapi as c

ctx = pmapi.pmContext(c.PM_CONTEXT_HOST, sys.argv[1])
names = ["hinv.ncpu", "hinv.physmem", "kernel.all.load", "kernel.all.nusers", "pmcd.version",
         "kernel.uname.sysname"]
pmids = ctx.pmLookupName(names)
descs = ctx.pmLookupDescs(pmids)
print([(d.contents.type, d.contents.sem, d.contents.indom, str(d.contents.units)) for d in descs])
res = ctx.pmFetch(pmids).contents
for i in range(res.numpmid):
    vtype = descs[i].contents.type
    values = [(res.get_inst(i, j),
               ctx.pmExtractValue(res.get_valfmt(i), res.get_vlist(i, j), vtype, vtype).dref(vtype))
              for j in range(res.get_numval(i))]
    print(names[i], res.get_valfmt(i), values if names[i] != "kernel.all.load" else len(values))
print(ctx.pmGetInDom(descs[2]), ctx.pmNameInDom(descs[2], 5))
print(ctx.pmLookupInDom(descs[2], "15 minute"))
print(ctx.pmLookupText(pmids[0]), ctx.pmLookupText(pmids[0], c.PM_TEXT_HELP)[:40])
print(ctx.pmLookupInDomText(descs[2]), ctx.pmGetChildren("hinv")[:4], ctx.pmGetPMNSLocation())
print(ctx.pmGetContextHostName())  # (pmcd.hostname, not the unix socket's "localhost")
try:
    ctx.pmLookupName("no.such.metric")
except pmapi.pmErr as e:
    print("error", e.code)
"""


@pytest.mark.interop
def test_a_host_script_on_our_pmcd_as_on_pcps_bindings(tmp_path):
    """The same calls against our pmcd (its own and the linux agent), through its unix
    socket, by PCP's binding and ours."""
    require_pcp_bindings()
    from tests.support.our_pmcd import our_pmcd

    conf = "pmcd 2 dso PmcdAgent purepcp.pmcd.pmcd_agent\nlinux 60 dso Linux purepcp.agents.linux\n"
    (tmp_path / "pmcd").mkdir()
    with our_pmcd(conf, tmp_path / "pmcd") as pmcd:
        pcp, ours = run_both(HOST_SCRIPT, [f"unix:{pmcd.unix}"], tmp_path)
    assert pcp[2] == 0, pcp[1]
    assert ours == pcp


def test_structures_have_libpcps_layout():
    from pcp import pmapi

    assert ctypes.sizeof(pmapi.pmUnits) == 4 and ctypes.sizeof(pmapi.pmValue) == 16
    assert ctypes.sizeof(pmapi.pmValueSet) == 32 and ctypes.sizeof(pmapi.pmDesc) == 20
    assert ctypes.sizeof(pmapi.timeval) == 16 and ctypes.sizeof(pmapi.pmResult) == 32
    units = pmapi.pmUnits(1, -1, 0, 1, 3, 0)  # Kbyte / sec
    assert int(units) == 0x1F013000 and str(units) == "Kbyte / sec"
    # (the word in memory is the one PCP packs: dimSpace in the top bits)
    assert ctypes.c_uint32.from_buffer_copy(units).value == 0x1F013000


def test_cpmapi_numbers_are_pcps():
    require_pcp_bindings()
    script = "import cpmapi, json; print(json.dumps({n: getattr(cpmapi, n) for n in dir(cpmapi)" \
        " if isinstance(getattr(cpmapi, n), int)}))"  # fmt: skip
    done = subprocess.run([SYSTEM_PYTHON, "-c", script], cwd="/", capture_output=True, text=True,
                          check=True, timeout=60)  # fmt: skip
    import json

    import cpmapi

    theirs = json.loads(done.stdout)
    ours = {n: getattr(cpmapi, n) for n in theirs if hasattr(cpmapi, n)}
    assert ours == theirs
    assert all(type(getattr(cpmapi, n)) is int for n in theirs)


def test_pmErr_says_its_symbol_and_message():
    from pcp import pmapi

    err = pmapi.pmErr(-12357, "x")
    assert str(err) == "PM_ERR_NAME Unknown metric name x" and err.errno() == -12357
    assert str(pmapi.pmErr(-2)) == "No such file or directory"


def test_import_pcp_pmapi_is_light():
    """`from pcp import pmapi` is every script's first line: NumPy and the archive and
    PDU code are not imported until a context needs them."""
    code = ("import sys; from pcp import pmapi; import cpmapi; "
            "print(sorted(m for m in ('numpy', 'purepcp.pmapi.archive.context', "
            "'purepcp.pmapi.pdu.result') if m in sys.modules))")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=60)  # fmt: skip
    assert done.stdout.strip() == "[]"


def test_units_words_are_libpcps():
    """pmParseUnitsStr knows "millisec" and "ms" but not "msec" (nor usec, nsec), as libpcp.
    Before: "msec" was read as milliseconds."""
    import cpmapi as c
    from pcp import pmapi

    units, mult = pmapi.pmContext.pmParseUnitsStr("millisec / ms")
    assert str(units) == "" and mult == 1.0
    for word in ("msec", "usec", "nsec"):
        with pytest.raises(pmapi.pmErr) as err:
            pmapi.pmContext.pmParseUnitsStr(word)
        assert err.value.code == c.PM_ERR_CONV


#: units strings libpcp's pmParseUnitsStr reads (numbers, exponents, keywords in any case,
#: scales folded into the multiplier) and refuses (each error's own message)
UNITS_CASES = [
    "2 Kbyte", "Kbyte / 2 sec", "1.5 count", "10 20 byte", "0x10 byte", "-2.5 sec", ".5",
    "0 byte", "0 / 0", "1e999 byte", "1e-999 byte", "-inf byte", "Kbyte/Mbyte", "s/s",
    "millisec / sec", "count x 10^6 / hour", "MiB / min", "KB^2/MB", "space-3 / space-1",
    "Kilobytes / microseconds", "count^2 / count", "count x 10^3 / count x 10^2",
    "byte^15 / byte^8", "byte / sec^8", "hr^-1", "sec^-1", "kbytes^2", "byte^1", "COUNT",
    "  Kbyte  ", "Kbyte/", "/sec", "", "time-7", "sec^0 sec",
    "parsecs", "0.5 x 10^3 count", "kbyte/sec/sec", "byte^9", "x", "b", "msec", "none",
    "sec sec", "byte^x", "Bytes^2^3",
]  # fmt: skip

UNITS_SCRIPT = """\
import json, sys
from pcp import pmapi
for text in json.loads(sys.argv[1]):
    try:
        u, m = pmapi.pmContext.pmParseUnitsStr(text)
        print(repr(text), (u.dimSpace, u.dimTime, u.dimCount, u.scaleSpace, u.scaleTime,
                           u.scaleCount), repr(m))
    except pmapi.pmErr as error:
        print(repr(text), "error", error.args[0], error)
"""


@pytest.mark.interop
def test_units_strings_read_as_libpcp_reads_them(tmp_path):
    """Every case gives PCP's units and multiplier, or PCP's error and message.  Before:
    no leading numbers, lenient keywords ("b", "none"), and messages of our own."""
    import json

    require_pcp_bindings()
    pcp, ours = run_both(UNITS_SCRIPT, [json.dumps(UNITS_CASES)], tmp_path)
    assert pcp[2] == 0, pcp[1]
    assert "(1, 0, 0, 1, 0, 0) 0.5" in pcp[0]  # ("2 Kbyte")
    assert ours == pcp


def test_units_numbers_and_errors():
    """The rules the interop case checks against libpcp, where PCP is not installed."""
    from purepcp.pmapi.units_parse import parse_units

    assert parse_units("2 Kbyte / 4 sec") == (parse_units("Kbyte/sec")[0], 2.0)
    assert parse_units("Kbyte / Mbyte")[1] == 1024.0  # (as libpcp gives it)
    for text, message in (("b", "unrecognized or duplicate base unit"),
                          ("sec sec", "unrecognized or duplicate base unit"),
                          ("1e999", "invalid floating point literal"),
                          ("byte^7 / byte^-1", "space dimension out of bounds")):  # fmt: skip
        with pytest.raises(ValueError, match=f"^{message}$"):
            parse_units(text)


def test_a_value_set_outlives_the_result_it_came_from():
    """A value set or value taken from a fetch's result keeps the result's memory: the
    values read after the result itself is gone are the same."""
    import gc

    import cpmapi as c
    from pcp import pmapi

    ctx = pmapi.pmContext(c.PM_CONTEXT_ARCHIVE, qa("ok-foo"))
    pmids = ctx.pmLookupName(["sample.seconds", "sample.colour"])
    for _ in range(2):
        result = ctx.pmFetch(pmids)
    vset = result.contents.get_vset(1)
    value, valfmt = result.contents.get_vlist(0, 0), result.contents.get_valfmt(0)
    want = (
        vset.contents.numval,
        ctx.pmExtractValue(valfmt, value, c.PM_TYPE_U32, c.PM_TYPE_U64).ull,
    )
    del result
    gc.collect()
    junk = [bytearray(4096) for _ in range(2000)]  # (reuse any memory freed)
    got = (
        vset.contents.numval,
        ctx.pmExtractValue(valfmt, value, c.PM_TYPE_U32, c.PM_TYPE_U64).ull,
    )
    assert got == want and want[0] == 3 and want[1] > 0 and junk


LABELS_SCRIPT = """
import sys
from pcp import pmapi
import cpmapi as c

ctx = pmapi.pmContext(c.PM_CONTEXT_ARCHIVE, sys.argv[1])
for name in sys.argv[2:]:
    pmid = ctx.pmLookupName(name)[0]
    indom = ctx.pmLookupDesc(pmid).contents.indom
    print(name, ctx.pmLookupLabels(pmid), ctx.pmGetInstancesLabels(indom),
          ctx.pmGetItemLabels(pmid), ctx.pmGetClusterLabels(pmid), ctx.pmGetInDomLabels(indom),
          ctx.pmGetDomainLabels(ctx.pmID_domain(pmid)))
print(ctx.pmGetContextLabels())
"""


@pytest.mark.interop
@pytest.mark.parametrize(
    ("archive", "names"),
    [("20041125", ["disk.dev.read", "kernel.all.load"]), ("ok-foo", ["sample.colour"])],
)
def test_labels_by_level_as_on_pcps_bindings(tmp_path, archive, names):
    """Labels by level, an archive without context labels answering its host's name.
    Before: pmLookupLabels merged every level into one dict, and had no hostname."""
    require_pcp_bindings()
    pcp, ours = run_both(LABELS_SCRIPT, [qa(archive), *names], tmp_path)
    assert pcp[2] == 0, pcp[1]
    assert ours == pcp


DESCS_SCRIPT = """
import sys
from pcp import pmapi
import cpmapi as c

ctx = pmapi.pmContext(c.PM_CONTEXT_ARCHIVE, sys.argv[1])
good = ctx.pmLookupName("sample.colour")[0]
descs = ctx.pmLookupDescs([good, 0x0F0F0F0F, good])
print([(d.contents.pmid, d.contents.type, d.contents.indom) for d in descs])
print([(d.contents.pmid, d.contents.type) for d in ctx.pmLookupDescs(0x0F0F0F0F)])
ctx.pmRegisterDerived("my.bad", "sample.colour + sample.seconds")
try:
    ctx.pmLookupDescs(ctx.pmLookupName("my.bad"))
except pmapi.pmErr as exc:
    print("bad derived", exc.code)
"""


@pytest.mark.interop
def test_descriptors_that_cannot_be_had_as_on_pcps_bindings(tmp_path):
    """pmLookupDescs answers a descriptor of PMID PM_ID_NULL for one it cannot have, and
    raises only for a lone derived metric that failed to bind.  Before: PM_ERR_PMID was
    raised for any."""
    require_pcp_bindings()
    pcp, ours = run_both(DESCS_SCRIPT, [qa("ok-foo")], tmp_path)
    assert pcp[2] == 0, pcp[1]
    assert ours == pcp


CALLS_SCRIPT = """
import sys
from pcp import pmapi
import cpmapi as c

ctx = pmapi.pmContext(c.PM_CONTEXT_ARCHIVE, sys.argv[1])
names = []
print(c.pmnsTraverse("sample.colour", names.append), names)
names = []
print(c.pmnsTraverse("sample", names.append), names[:4], c.pmnsTraverse("no.such", print))
ctx.pmNewZone("UTC")
print(c.pmMktime(5, 4, 3, 2, 0, 120, 0, 0, 0, 0, "UTC"))
ctx.pmNewZone("EST5")
print(c.pmMktime(5, 4, 3, 31, 13, 120, 0, 0, 0, 0, "EST"))
try:
    c.pmnsTraverse("sample", 3)
except TypeError as exc:
    print("TypeError", exc)
"""


@pytest.mark.interop
def test_cpmapi_calls_as_on_pcps_bindings(tmp_path):
    """pmnsTraverse on the current context, pmMktime in the zone in use (a month past
    December carried into the next year)."""
    require_pcp_bindings()
    pcp, ours = run_both(CALLS_SCRIPT, [qa("ok-foo")], tmp_path)
    assert pcp[2] == 0, pcp[1]
    assert ours == pcp


def _walk(result_ptr) -> list:
    """Everything a script can read of a pmResult: per value set its pmid, numval and
    valfmt, per value its instance and its value as a double (or the block's header)."""
    import ctypes

    import cpmapi as c
    from pcp.structures import _extracted

    r = result_ptr.contents
    stamp = r.timestamp
    seen: list = [(stamp.tv_sec, getattr(stamp, "tv_usec", getattr(stamp, "tv_nsec", None)))]
    seen.append(r.numpmid)
    for i in range(r.numpmid):
        vset = r.get_vset(i)
        seen.append((vset.pmid, vset.numval, vset.valfmt))
        for j in range(max(vset.numval, 0)):
            value = r.get_vlist(i, j)
            if vset.valfmt == c.PM_VAL_INSITU:
                seen.append((value.inst, value.value.lval))
            else:
                header = ctypes.c_uint32.from_address(value.value._address).value
                number = _extracted(vset.valfmt, value, header >> 24, c.PM_TYPE_DOUBLE)
                seen.append((value.inst, header, number))
    return seen


@pytest.mark.parametrize("highres", [False, True])
def test_a_result_laid_out_from_its_plan_reads_as_the_general_way(highres):
    """A fetch's result decoded in columns is laid out from its layout's plan (made once,
    without making value sets); a script reads the same from it as from the general
    layout: counts, PMIDs, instances, block headers and every value."""
    from pcp.structures import _PLANS, _c_result
    from purepcp.pmapi.pdu.codec import decode, encode
    from purepcp.pmapi.pdu.records import HighResResultPDU, ResultPDU
    from purepcp.pmapi.pdu.result_layout import LAYOUTS
    from purepcp.pmapi.types import PMType
    from purepcp.pmapi.values import Result, Timestamp, ValueSet

    vsets = (
        ValueSet.of_atoms(1, PMType.PM_TYPE_U32, [(0, 7), (5, 4_000_000_000)]),
        ValueSet.of_atoms(2, PMType.PM_TYPE_32, [(1, -3)]),
        ValueSet.of_atoms(3, PMType.PM_TYPE_U64, [(0, 2**63 + 5), (1, 9)]),
        ValueSet.of_atoms(4, PMType.PM_TYPE_64, [(2, -(2**40))]),
        ValueSet.of_atoms(5, PMType.PM_TYPE_DOUBLE, [(0, 0.25), (9, -1.5e300)]),
        ValueSet.of_atoms(6, PMType.PM_TYPE_FLOAT, [(3, 1.5), (4, -2.0)]),
        ValueSet.of_error(7, -12357),
        ValueSet.of_atoms(8, PMType.PM_TYPE_U32, []),
    )
    result = Result(Timestamp(1_700_000_000, 123_456_789), vsets)
    frame = encode(HighResResultPDU(result) if highres else ResultPDU(result))
    LAYOUTS.clear()
    for _ in range(3):  # (a layout is learned when it recurs)
        decoded = decode(frame).result
    assert hasattr(decoded.vsets, "layout")  # (decoded in columns)
    _PLANS.clear()
    planned = _c_result(decoded, highres)
    assert _PLANS  # (made from the plan)
    general = _c_result(Result(decoded.timestamp, tuple(decoded.vsets)), highres)
    assert _walk(planned) == _walk(general)
    again = _c_result(decode(frame).result, highres)  # (the plan kept, a fresh buffer)
    assert _walk(again) == _walk(general)
    assert ctypes.addressof(again.contents) != ctypes.addressof(planned.contents)


HELPERS_SCRIPT = """
import sys
from pcp import pmapi
import cpmapi as c

P = pmapi.pmContext
for labels in (['{"a":1,"b":2}', '{"b":3,"c":"x"}'], '{"z":1,"a":{"q":2}}', ['{}'], [],
               ['{bad'], ['{"x":[1,2]}']):
    try:
        print(repr(P.pmMergeLabels(labels)))
    except pmapi.pmErr as e:
        print("pmMergeLabels", e.args[0])
for text in ("1.5min", "2 hours 3 sec", "0.000000002"):
    when, rest = P.pmParseHighResInterval(text)
    print(when.tv_sec, when.tv_nsec, repr(rest))

class Labels:
    jsonlen, json = 7, b'{"a":1}'

ctx = pmapi.pmContext(c.PM_CONTEXT_ARCHIVE, sys.argv[1])
print(ctx.pmlabelset_to_dict(Labels()), ctx.pmlabelset_to_dict(None), P.pmFreeLabelSets([], 0))
pmids = ctx.pmLookupName(["sample.bin", "sample.colour"])
result = ctx.pmFetch(pmids)
P.pmSortInstances(result)
r = result.contents
print([[r.get_inst(i, j) for j in range(r.get_numval(i))] for i in range(r.numpmid)])
"""


@pytest.mark.interop
def test_libpcps_helpers_as_on_pcps_bindings(tmp_path):
    """pmMergeLabels, pmParseHighResInterval, pmlabelset_to_dict, pmFreeLabelSets and
    pmSortInstances (before: missing on ours)."""
    require_pcp_bindings()
    pcp, ours = run_both(HELPERS_SCRIPT, [qa("ok-foo")], tmp_path)
    assert pcp[2] == 0, pcp[1]
    assert ours == pcp


def test_sort_instances_and_print_value(tmp_path):
    """pmSortInstances puts a value set in instance order in place; pmPrintValue writes a
    value as libpcp prints it (PCP's binding hands ctypes a Python file and fails)."""
    import ctypes
    import io

    import cpmapi as c
    from pcp import pmapi
    from pcp.structures import pmValue

    ctx = pmapi.pmContext(c.PM_CONTEXT_ARCHIVE, qa("ok-foo"))
    pmids = ctx.pmLookupName(["sample.bin"])
    desc = ctx.pmLookupDescs(pmids)[0]
    r = ctx.pmFetch(pmids).contents
    count = r.get_numval(0)
    values = [pmValue.from_buffer_copy(r.get_vlist(0, j)) for j in range(count)]
    for j, value in enumerate(reversed(values)):  # (the set reversed by hand)
        ctypes.memmove(ctypes.addressof(r.get_vlist(0, j)), ctypes.addressof(value), 16)
    assert [r.get_inst(0, j) for j in range(count)][:2] == [900, 800]
    pmapi.pmContext.pmSortInstances(r)
    assert [r.get_inst(0, j) for j in range(count)] == list(range(100, 1000, 100))
    out = io.StringIO()
    pmapi.pmContext.pmPrintValue(out, r, desc, 0, 1, 8)
    assert out.getvalue() == "     200"
