"""The PDU codec: real PCP 6 captures round-trip byte for byte; records round-trip;
the fast RESULT path agrees with the construct declaration; malformed PDUs fail cleanly."""

from __future__ import annotations

import json
import struct
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings

from purepcp.pmapi.errors import PM_ERR_IPC, PM_ERR_TOOBIG
from purepcp.pmapi.pdu import layouts as L
from purepcp.pmapi.pdu.codec import PDUError, decode, encode
from purepcp.pmapi.pdu.constants import PDUType
from purepcp.pmapi.pdu.framer import PDUFramer, split_stream
from purepcp.pmapi.pdu.records import (
    ErrorPDU,
    FetchPDU,
    HighResResultPDU,
    PDUInfo,
    ResultPDU,
    TextPDU,
)
from purepcp.pmapi.pdu.result import decode_result, encode_result
from purepcp.pmapi.types import PMType, ValFmt
from purepcp.pmapi.values import Result, Timestamp, ValueSet, block_payload, string_value
from tests.support.examples import examples
from tests.support.strategies import pdus, results

FIXTURES = Path(__file__).parents[1] / "fixtures" / "pdus"
STREAMS = sorted(FIXTURES.glob("*.bin"))
MANIFEST = json.loads((FIXTURES / "manifest.json").read_text())


def _type_name(frame: bytes) -> str:
    return PDUType(int.from_bytes(frame[4:8], "big")).label


# -- real PCP 6 traffic ---------------------------------------------------------------


def test_fixtures_are_present():
    assert len(STREAMS) >= 40, "captured PDU streams are missing from tests/fixtures/pdus"


@pytest.mark.parametrize("stream", STREAMS, ids=lambda p: p.stem)
def test_captured_pdus_round_trip_byte_for_byte(stream):
    frames = split_stream(stream.read_bytes())
    assert frames
    for i, frame in enumerate(frames):
        pdu = decode(frame)
        assert encode(pdu) == frame, f"{stream.name} PDU #{i} ({_type_name(frame)})"


def test_captures_cover_every_pdu_type():
    seen = {_type_name(f) for s in STREAMS for f in split_stream(s.read_bytes())}
    wanted = {t.label for t in PDUType} - {"CONTROL_REQ"}
    assert wanted <= seen, f"no capture of {sorted(wanted - seen)}"


def test_captures_split_as_the_capture_tool_counted():
    counts = {}
    for conversation in MANIFEST["conversations"]:
        for name, info in conversation["files"].items():
            counts[name] = info["by_type"]
    for stream in STREAMS:
        got = Counter(_type_name(f) for f in split_stream(stream.read_bytes()))
        assert dict(got) == counts[stream.name], stream.name


def test_connection_greeting_from_pmcd():
    greeting = split_stream((FIXTURES / "client_pminfo_pmcd.replies.bin").read_bytes())[0]
    pdu = decode(greeting)
    assert isinstance(pdu, ErrorPDU) and pdu.code == 0
    info = PDUInfo.unpack(pdu.datum)
    assert (info.version, info.licensed) == (2, 1)
    assert PDUInfo(*info).pack() == pdu.datum


# -- every record round-trips ----------------------------------------------------------


@settings(max_examples=examples(600))
@given(pdus)
def test_record_round_trip(pdu):
    data = encode(pdu)
    assert struct.unpack(">i", data[:4])[0] == len(data)
    back = decode(data)
    assert back == pdu
    assert encode(back) == data


def test_names_and_texts_pad_with_tilde_like_libpcp():
    data = encode(TextPDU(1, "abcde"))
    assert data[-3:] == b"~~~" and len(data) % 4 == 0


def test_extended_error_codes_use_pcp1_numbering():
    data = encode(ErrorPDU(-12357, datum=7))
    assert struct.unpack(">ii", data[12:]) == (-1012, 7)
    assert decode(data) == ErrorPDU(-12357, 7)
    with pytest.raises(PDUError, match="cannot be sent"):
        encode(ErrorPDU(-5000, datum=0))


# -- the fast RESULT path against the construct declaration ----------------------------


def reference_decode(frame: bytes, highres: bool):
    """RESULT decoded with the construct layouts alone: (pmid, numval, valfmt, insts, values)."""
    preamble = L.HighResResultPreamble if highres else L.ResultPreamble
    pre = preamble.parse(frame[12:])
    off = 12 + preamble.sizeof()
    sets = []
    for _ in range(pre.numpmid):
        vs = L.WireValueSet.parse(frame[off:])
        off += 8 + (4 + 8 * vs.numval if vs.numval > 0 else 0)
        values = []
        for v in vs.vlist:
            if vs.valfmt == ValFmt.PM_VAL_INSITU:
                values.append(v.value & 0xFFFFFFFF)
            else:
                block = L.ValueBlock.parse(frame[4 * v.value :])
                values.append((block.vtype, bytes(block.vbuf)))
        sets.append((vs.pmid, vs.numval, vs.valfmt or 0, [v.inst for v in vs.vlist], values))
    return sets


def fast_as_reference(result: Result):
    out = []
    for vs in result.vsets:
        if vs.numval <= 0:
            out.append((vs.pmid, vs.numval, 0, [], []))
        elif vs.valfmt == ValFmt.PM_VAL_INSITU:
            out.append((vs.pmid, vs.numval, 0, list(vs.insts), list(vs.values)))
        else:
            values = [(vs.vtype, block_payload(vs.vtype, v)) for v in vs.values]
            out.append((vs.pmid, vs.numval, vs.valfmt, list(vs.insts), values))
    return out


def reference_encode(result: Result, highres: bool, sender: int) -> bytes:
    """RESULT encoded with the construct layouts alone, laid out as libpcp lays it out."""
    preamble_size = 32 if highres else 24
    cursor = preamble_size + sum(12 + 8 * vs.numval if vs.numval > 0 else 8 for vs in result.vsets)
    sets, blocks = [], []
    for vs in result.vsets:
        vlist = []
        if vs.numval > 0:
            for i, inst in enumerate(vs.insts):
                if vs.valfmt == ValFmt.PM_VAL_INSITU:
                    value = struct.unpack(">i", struct.pack(">I", vs.values[i]))[0]
                else:
                    payload = block_payload(vs.vtype, vs.values[i])
                    block = L.ValueBlock.build(
                        dict(header=vs.vtype << 24 | (4 + len(payload)), vbuf=payload)
                    )
                    value, cursor = cursor // 4, cursor + len(block)
                    blocks.append(block)
                vlist.append(dict(inst=inst, value=value))
        sets.append(
            L.WireValueSet.build(
                dict(
                    pmid=vs.pmid,
                    numval=vs.numval,
                    valfmt=vs.valfmt if vs.numval > 0 else None,
                    vlist=vlist,
                )
            )
        )
    ts = result.timestamp
    if highres:
        pdutype = PDUType.PDU_HIGHRES_RESULT
        pre = L.HighResResultPreamble.build(dict(numpmid=len(sets), sec=ts.sec, nsec=ts.nsec))
    else:
        pdutype = PDUType.PDU_RESULT
        pre = L.ResultPreamble.build(dict(sec=ts.sec, usec=ts.nsec // 1000, numpmid=len(sets)))
    body = pre + b"".join(sets) + b"".join(blocks)
    return L.Header.build({"len": 12 + len(body), "type": pdutype, "from": sender}) + body


@pytest.mark.parametrize("stream", STREAMS, ids=lambda p: p.stem)
def test_fast_result_decode_matches_construct(stream):
    for frame in split_stream(stream.read_bytes()):
        pdutype = int.from_bytes(frame[4:8], "big")
        if pdutype in (PDUType.PDU_RESULT, PDUType.PDU_HIGHRES_RESULT):
            highres = pdutype == PDUType.PDU_HIGHRES_RESULT
            assert fast_as_reference(decode_result(frame, highres)) == reference_decode(
                frame, highres
            )


@settings(max_examples=examples(400))
@given(results())
def test_fast_result_encode_matches_construct(result):
    for highres in (False, True):
        if not highres:
            result = result._replace(
                timestamp=Timestamp(result.timestamp.sec, result.timestamp.nsec // 1000 * 1000)
            )
        pdutype = PDUType.PDU_HIGHRES_RESULT if highres else PDUType.PDU_RESULT
        data = encode_result(result, highres, 99, pdutype)
        assert data == reference_encode(result, highres, 99)
        assert decode_result(data, highres) == result


# -- values: the insitu/pointer rule and padding ----------------------------------------


def test_insitu_and_pointer_rules():
    r = Result(
        Timestamp(1, 0),
        (
            ValueSet.of_atoms(1, PMType.PM_TYPE_32, [(0, -5)]),
            ValueSet.of_atoms(2, PMType.PM_TYPE_U32, [(0, 4000000000)]),
            ValueSet.of_atoms(3, PMType.PM_TYPE_64, [(0, -1)]),
            ValueSet.of_atoms(4, PMType.PM_TYPE_FLOAT, [(0, 1.5)]),
            ValueSet.of_atoms(5, PMType.PM_TYPE_DOUBLE, [(0, 2.25)]),
            ValueSet.of_atoms(6, PMType.PM_TYPE_STRING, [(0, "abc")]),
            ValueSet.of_atoms(7, PMType.PM_TYPE_AGGREGATE, [(0, b"\x01\x02")]),
            ValueSet.of_atoms(8, PMType.PM_TYPE_EVENT, [(0, b"\x00" * 8)]),
        ),
    )
    formats = [vs.valfmt for vs in r.vsets]
    assert formats == [0, 0, 1, 1, 1, 1, 1, 2]  # 32-bit insitu; event blocks static (SPTR)
    data = encode(ResultPDU(r))
    # string "abc": vlen 4 + 4 (with NUL), no padding; aggregate: vlen 6, 2 bytes of '~'
    assert b"\x06\x00\x00\x08abc\x00" in data
    assert b"\x07\x00\x00\x06\x01\x02~~" in data
    back = decode(data).result
    assert back == r
    assert back.vsets[0].atoms(PMType.PM_TYPE_32)[0] == -5
    assert back.vsets[1].atoms(PMType.PM_TYPE_U32)[0] == 4000000000


def test_string_payload_with_bytes_after_the_nul_is_kept_raw():
    # pmval stores strings in a zero-filled block longer than the text: keep every byte
    payload = b"whoami\x00\x00\x00\x00\x00\x00"
    r = Result(Timestamp(0, 0), (ValueSet(9, 1, 1, PMType.PM_TYPE_STRING, _I([0]), (payload,)),))
    data = encode(ResultPDU(r))
    assert decode(data).result.vsets[0].values == (payload,)
    assert string_value(payload) == "whoami" == string_value("whoami")


def _I(values):
    from array import array

    return array("I", values)


# -- malformed input fails cleanly ------------------------------------------------------


def _result_frame():
    r = Result(
        Timestamp(5, 0),
        (
            ValueSet.of_atoms(1, PMType.PM_TYPE_U64, [(0, 7), (1, 8)]),
            ValueSet.of_atoms(2, PMType.PM_TYPE_STRING, [(0, "x")]),
        ),
    )
    return bytearray(encode(HighResResultPDU(r)))


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda b: b.__setitem__(slice(12, 16), struct.pack(">i", 1 << 30)), "numpmid"),
        (lambda b: b.__setitem__(slice(32 + 8, 44), struct.pack(">i", 9)), "valfmt"),
        (lambda b: b.__setitem__(slice(48, 52), struct.pack(">i", 10_000)), "outside"),
        (
            lambda b: (
                b.extend(b"\0\0\0\0") or b.__setitem__(slice(0, 4), struct.pack(">i", len(b)))
            ),
            "cover",
        ),
    ],
)
def test_malformed_results_raise_pdu_error(mutate, message):
    frame = _result_frame()
    mutate(frame)
    with pytest.raises(PDUError, match=message) as info:
        decode(bytes(frame))
    assert info.value.code == PM_ERR_IPC
    text = str(info.value)
    assert text.startswith("IPC protocol failure: HIGHRES_RESULT: ")
    assert text.count("IPC protocol failure") == 1 and "\n" not in text


@pytest.mark.parametrize(
    ("frame", "message"),
    [
        (b"\0\0\0\x0c\0\0\x70\x03\0\0\0\0", "shorter than a fetch"),
        (struct.pack(">iiiii8xi", 32, 0x7003, 0, 0, 0, 0)[:32], "not positive"),
        (struct.pack(">iiii", 16, 0x7000, 0, 0) + b"x", "header says 16"),
        (struct.pack(">iii", 12, 0x7999, 0), "unknown PDU type"),
        (struct.pack(">iiiii", 20, 0x7005, 0, 1, 2), "not 32"),
        (struct.pack(">iiiiii", 24, 0x700E, 0, 0, 0, 5), "name count 5 does not fit"),
    ],
)
def test_malformed_pdus_raise_pdu_error(frame, message):
    with pytest.raises(PDUError, match=message):
        decode(frame)


def test_fetch_counts_must_fit():
    frame = struct.pack(">iiii8xi", 32, PDUType.PDU_FETCH, 0, 0, 1 << 29) + b"\0\0\0\0"
    with pytest.raises(PDUError, match="does not match numpmid"):
        decode(frame)
    assert decode(encode(FetchPDU(3, (1, 2)))) == FetchPDU(3, (1, 2))


# -- the framer -------------------------------------------------------------------------


@pytest.mark.parametrize("stream", STREAMS[:6], ids=lambda p: p.stem)
def test_framer_handles_any_chunking(stream):
    data = stream.read_bytes()
    whole = split_stream(data)
    for size in (1, 3, 7, 4096):
        framer = PDUFramer()
        got = []
        for i in range(0, len(data), size):
            framer.feed(data[i : i + size])
            got.extend(framer.frames())
        framer.close()
        assert got == whole


def test_framer_size_rules():
    framer = PDUFramer(ceiling=64 * 1024)
    framer.feed(struct.pack(">iii", 64 * 1024 + 1, 0x7003, 0))
    with pytest.raises(PDUError) as info:
        framer.next_frame()
    assert info.value.code == PM_ERR_TOOBIG
    with pytest.raises(PDUError):  # the stream stays failed
        framer.next_frame()

    framer = PDUFramer()
    framer.feed(struct.pack(">i", 11))
    with pytest.raises(PDUError, match="shorter than its header") as info:
        framer.next_frame()
    assert info.value.code == PM_ERR_IPC

    framer = PDUFramer()
    framer.feed(struct.pack(">ii", 16, -1))
    with pytest.raises(PDUError, match="negative"):
        framer.next_frame()

    framer = PDUFramer()
    framer.feed(struct.pack(">iii", 16, 0x7000, 0))
    assert framer.next_frame() is None and framer.buffered == 12
    with pytest.raises(PDUError, match="stream ended inside a PDU"):
        framer.close()


def test_framer_lets_a_big_pdus_buffer_go_once_it_is_taken():
    """pmcd's framer for an agent held a 250 MB answer's bytes until the agent's next
    reply arrived: RSS stayed up after one gigantic PDU."""
    framer = PDUFramer()
    big = struct.pack(">iii", 12 + 8 * 1024 * 1024, 0x7001, 0) + bytes(8 * 1024 * 1024)
    framer.feed(big)
    assert framer.next_frame() == big
    assert framer.buffered == 0 and len(framer._buf) == 0  # the buffer itself is gone


@settings(max_examples=examples(200), deadline=None)
@given(results())
def test_batched_and_set_by_set_encodings_are_the_same_bytes(result: Result) -> None:
    """Packing runs of fixed-size blocks together changes no byte of the record."""
    from purepcp.pmapi.pdu.result import RESULT_PREAMBLE, encode_value_sets

    try:
        batched = encode_value_sets(result.vsets, RESULT_PREAMBLE)
    except Exception as exc:  # compared with the other way's failure below
        batched = type(exc)
    try:
        one_by_one = encode_value_sets(result.vsets, RESULT_PREAMBLE, batched=False)
    except Exception as exc:
        one_by_one = type(exc)
    if isinstance(batched, tuple) and isinstance(one_by_one, tuple):
        assert b"".join(batched[0]) == b"".join(one_by_one[0]) and batched[1] == one_by_one[1]
    else:
        assert batched == one_by_one


def test_an_unencodable_value_is_named_by_its_own_pmid() -> None:
    """A bad value in the middle of a run of U64 blocks: the error names its set."""
    from array import array

    from purepcp.pmapi.ids import PM_IN_NULL
    from purepcp.pmapi.pdu.result import RESULT_PREAMBLE, encode_value_sets

    good = [ValueSet.of_single(0x1000 + i, PMType.PM_TYPE_U64, i) for i in range(3)]
    bad = ValueSet(0x2222, 1, int(ValFmt.PM_VAL_DPTR), int(PMType.PM_TYPE_U64),
                   array("I", (PM_IN_NULL,)), (2**64,))  # fmt: skip
    with pytest.raises(Exception) as caught:
        encode_value_sets((*good[:2], bad, good[2]), RESULT_PREAMBLE)
    assert getattr(caught.value, "code", None) == PM_ERR_IPC
    assert "0x2222" in str(caught.value)


def test_the_struct_coded_metadata_pdus_are_the_layouts_byte_for_byte():
    """DESC_REQ, DESC, TEXT_REQ and LABEL_REQ are read and written with struct (the hot
    metadata paths); the construct layouts in layouts.py remain the definition."""
    import random

    from purepcp.pmapi.desc import Desc
    from purepcp.pmapi.pdu import layouts as L
    from purepcp.pmapi.pdu.constants import HEADER_SIZE
    from purepcp.pmapi.pdu.records import DescPDU, DescReqPDU, LabelReqPDU, TextReqPDU
    from purepcp.pmapi.units import Units

    rng = random.Random(7)

    def word() -> int:
        return rng.choice((0, 1, 0xFFFFFFFF, 0x7FFFFFFF, rng.getrandbits(32)))

    def signed() -> int:
        return rng.choice((0, -1, -(1 << 31), (1 << 31) - 1, rng.getrandbits(31)))

    def head(pdu, body: bytes) -> bytes:
        return L.Header.build({"len": HEADER_SIZE + len(body), "type": pdu.TYPE, "from": 9}) + body

    for _ in range(500):
        req = DescReqPDU(word(), 9)
        assert encode(req) == head(req, L.DescReq.build(dict(pmid=req.pmid)))
        assert decode(encode(req)) == req
        units = Units.unpack(word())
        desc = DescPDU(Desc(word(), signed(), word(), signed(), units), 9)
        body = dict(pmid=desc.desc.pmid, type=desc.desc.type, indom=desc.desc.indom,
                    sem=desc.desc.sem, units=units.pack())  # fmt: skip
        assert encode(desc) == head(desc, L.DescBody.build(body))
        assert decode(encode(desc)) == desc
        for kind, layout in ((TextReqPDU, L.TextReq), (LabelReqPDU, L.LabelReq)):
            pdu = kind(word(), signed(), 9)
            assert encode(pdu) == head(pdu, layout.build(dict(ident=pdu.ident, type=pdu.type)))
            assert decode(encode(pdu)) == pdu


def _construct_body(pdu) -> bytes | None:
    """PDU's body built with the construct layouts alone (the definition), for the PDUs the
    codec writes with struct; None for the others."""
    from purepcp.pmapi.pdu.records import (
        AttrPDU,
        CredsPDU,
        DescsPDU,
        ErrorPDU,
        InstancePDU,
        InstanceReqPDU,
        PMNSChildPDU,
        PMNSTraversePDU,
        ProfilePDU,
        TextPDU,
    )

    def named(text: str) -> dict:
        raw = text.encode("utf-8", "surrogateescape")
        return dict(namelen=len(raw), name=raw)

    if isinstance(pdu, ErrorPDU) and pdu.datum is not None:
        from purepcp.pmapi.pdu.constants import PM_ERR_BASE1, PM_ERR_BASE2

        code = pdu.code  # (the connection reply carries a PCP 1.x code)
        code += PM_ERR_BASE2 - PM_ERR_BASE1 if code <= -PM_ERR_BASE2 else 0
        return L.XtendError.build(dict(code=code, datum=pdu.datum))
    if isinstance(pdu, ProfilePDU):
        return L.Profile.build(
            dict(
                ctxid=pdu.ctxid, g_state=pdu.state, numprof=len(pdu.profiles), pad=0,
                profiles=[dict(indom=p.indom, state=p.state, numinst=len(p.insts), pad=0)
                          for p in pdu.profiles],
                instances=[i for p in pdu.profiles for i in p.insts],
            )
        )  # fmt: skip
    if isinstance(pdu, DescsPDU):
        descs = [dict(pmid=d.pmid, type=d.type, indom=d.indom, sem=d.sem, units=d.units.pack())
                 for d in pdu.descs]  # fmt: skip
        return L.Descs.build(dict(numdescs=len(descs), descs=descs))
    if isinstance(pdu, InstanceReqPDU):
        return L.InstanceReq.build(
            dict(indom=pdu.indom, unused=bytes(8), inst=pdu.inst, **named(pdu.name or ""))
        )
    if isinstance(pdu, InstancePDU):
        entries = [dict(inst=i, **named(n)) for i, n in zip(pdu.insts, pdu.names, strict=True)]
        return L.Instance.build(dict(indom=pdu.indom, numinst=len(entries), instances=entries))
    if isinstance(pdu, TextPDU):
        raw = named(pdu.text)["name"]
        return L.Text.build(dict(ident=pdu.ident, buflen=len(raw), buffer=raw))
    if isinstance(pdu, CredsPDU):
        return L.Creds.build(dict(numcreds=len(pdu.creds), creds=[c.pack() for c in pdu.creds]))
    if isinstance(pdu, PMNSChildPDU | PMNSTraversePDU):
        return L.NameReq.build(dict(subtype=pdu.subtype, **named(pdu.name)))
    if isinstance(pdu, AttrPDU):
        return L.Attr.build(dict(attr=pdu.attr, value=pdu.value))
    return None


@given(pdus)
def test_the_struct_coded_pdus_are_the_construct_layouts_byte_for_byte(pdu):
    """Every PDU but LABEL (and RESULT, held to its layouts above) is written and read
    with struct, so that a client never imports construct; the layouts stay the
    definition, and each such PDU's bytes are what its layout builds."""
    body = _construct_body(pdu)
    if body is None:
        return
    frame = encode(pdu)
    assert frame[12:] == body
    assert decode(frame) == pdu


def test_a_client_conversation_does_not_import_construct():
    """Greeting, credentials, names, descriptors, instances, help text, profile and fetch:
    none loads construct (it costs a command 30 ms of start-up); a label list does."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from purepcp.pmapi.pdu.codec import decode, encode\n"
        "from purepcp.pmapi.pdu.framer import split_stream\n"
        "from purepcp.pmapi.pdu.constants import PDUType\n"
        "for path in sys.argv[1:]:\n"
        "    for frame in split_stream(Path(path).read_bytes()):\n"
        "        if int.from_bytes(frame[4:8], 'big') != PDUType.PDU_LABEL:\n"
        "            encode(decode(frame))\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'construct'))\n"
    )
    streams = [str(s) for s in STREAMS]
    done = subprocess.run([sys.executable, "-c", code, *streams], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
