"""The reference libpcp as an oracle: batches of requests (pmConvScale, pmExtractValue,
__pmStringValue, pmAtomStr, pmPrintValue) sent as JSON to one /usr/bin/python3 process,
which calls libpcp through PCP's Python bindings and ctypes; floats travel as their IEEE
bit patterns so that every comparison is exact.  And PCP's tools run with -L against
PCP's sample agent loaded in-process."""

from __future__ import annotations

import functools
import json
import os
import shutil
import struct
import subprocess
from typing import Any

import pytest
from hypothesis import HealthCheck

from purepcp.pmapi.types import PMType

SYSTEM_PYTHON = "/usr/bin/python3"
SKIP_REASON = "reference PCP 6 is not installed: no python3-pcp (Debian package pcp)"
I32, U32, I64, U64 = PMType.PM_TYPE_32, PMType.PM_TYPE_U32, PMType.PM_TYPE_64, PMType.PM_TYPE_U64
FLT, DBL, STR = PMType.PM_TYPE_FLOAT, PMType.PM_TYPE_DOUBLE, PMType.PM_TYPE_STRING
AGG = PMType.PM_TYPE_AGGREGATE
#: the health checks the oracle's big batches would fail
SLOW_AND_BIG = [HealthCheck.too_slow, HealthCheck.large_base_example, HealthCheck.data_too_large]

# Runs under the system interpreter: a JSON list of requests on stdin, answers on stdout.
REFERENCE = r"""
import ctypes, ctypes.util, json, struct, sys
from ctypes import POINTER, byref, c_char_p, c_int, c_size_t, c_void_p
from pcp.pmapi import LIBPCP, pmAtomValue, pmUnits, pmValue, pmValueBlock

PCP = ctypes.CDLL("libpcp.so.3", use_errno=True)
PCP.__pmStringValue.restype = c_int
PCP.__pmStringValue.argtypes = [c_char_p, POINTER(pmAtomValue), c_int]
LIBC = ctypes.CDLL(ctypes.util.find_library("c"))
LIBC.open_memstream.restype = c_void_p
LIBC.open_memstream.argtypes = [POINTER(c_void_p), POINTER(c_size_t)]
LIBC.fclose.argtypes = [c_void_p]
LIBC.free.argtypes = [c_void_p]
keep = []

def set_atom(a, t, v):
    if t == 0: a.l = v
    elif t == 1: a.ul = v
    elif t == 2: a.ll = v
    elif t == 3: a.ull = v
    elif t == 4: a.ul = v          # float bits
    elif t == 5: a.ull = v         # double bits
    elif t == 6: a.cp = None if v is None else bytes.fromhex(v)
    elif v is not None:            # a block: [vtype, payload hex]
        a.vp = ctypes.addressof(block(v[0], bytes.fromhex(v[1])))

def get_atom(a, t):
    if t == 0: return a.l
    if t == 1: return a.ul
    if t == 2: return a.ll
    if t == 3: return a.ull
    if t == 4: return struct.unpack("<I", struct.pack("<f", a.f))[0]
    if t == 5: return a.ull
    if t == 6: return ctypes.string_at(a.cp).hex()
    if t == 7:
        vlen = ctypes.c_uint32.from_address(a.vp).value & 0xFFFFFF
        return ctypes.string_at(a.vp + 4, vlen - 4).hex()
    return None

def block(vtype, payload):
    header = struct.pack("<I", vtype << 24 | (len(payload) + 4))
    buf = ctypes.create_string_buffer(header + payload + b"\0" * 8)
    keep.append(buf)
    return buf

def value(spec):
    v = pmValue()
    v.inst = 0
    if spec[0] == "lval":
        v.value.lval = spec[1]
    else:
        v.value.pval = ctypes.cast(block(spec[1], bytes.fromhex(spec[2])), POINTER(pmValueBlock))
    return v

def units(word):
    return pmUnits.from_buffer_copy(struct.pack("<I", word))

def printed(call):
    buf, size = c_void_p(), c_size_t()
    fp = LIBC.open_memstream(byref(buf), byref(size))
    call(fp)
    LIBC.fclose(fp)
    text = ctypes.string_at(buf, size.value).hex()
    LIBC.free(buf)
    return text

def run(req):
    op = req["op"]
    if op == "conv":
        a, o = pmAtomValue(), pmAtomValue()
        set_atom(a, req["type"], req["value"])
        iunit, ounit = units(req["iunit"]), units(req["ounit"])
        sts = LIBPCP.pmConvScale(req["type"], byref(a), byref(iunit), byref(o), byref(ounit))
        return [sts, get_atom(o, req["type"]) if sts == 0 else None]
    if op == "extract":
        o = pmAtomValue()
        v = value(req["value"])
        sts = LIBPCP.pmExtractValue(req["valfmt"], byref(v), req["itype"], byref(o), req["otype"])
        return [sts, get_atom(o, req["otype"]) if sts == 0 else None]
    if op == "strval":
        o = pmAtomValue()
        o.ull = 0
        ctypes.set_errno(0)
        sts = PCP.__pmStringValue(bytes.fromhex(req["text"]), byref(o), req["type"])
        return [sts, get_atom(o, req["type"]) if sts == 0 else None]
    if op == "atomstr":
        a = pmAtomValue()
        set_atom(a, req["type"], req["value"])
        buf = ctypes.create_string_buffer(80)
        return LIBPCP.pmAtomStr_r(byref(a), req["type"], buf, 80).hex()
    if op == "print":
        v = value(req["value"])
        args = (req["valfmt"], req["type"], byref(v), req["minwidth"])
        return printed(lambda fp: LIBPCP.pmPrintValue(fp, *args))
    raise ValueError(op)

print(json.dumps([run(r) for r in json.load(sys.stdin)]))
"""


def oracle_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["TZ"] = "UTC"
    return env


@functools.cache
def available() -> bool:
    if shutil.which(SYSTEM_PYTHON) is None:
        return False
    probe = subprocess.run(
        [SYSTEM_PYTHON, "-c", "from pcp import pmapi; import cpmapi"],
        capture_output=True,
        env=oracle_env(),
        timeout=60,
    )
    return probe.returncode == 0


def reference(requests: list[dict[str, Any]]) -> list[Any]:
    """Answer REQUESTS with the reference libpcp; skip the test when it is not installed."""
    if not available():
        pytest.skip(SKIP_REASON)
    done = subprocess.run(
        [SYSTEM_PYTHON, "-c", REFERENCE],
        input=json.dumps(requests),
        capture_output=True,
        text=True,
        env=oracle_env(),
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def to_bits(x: Any, type_: int) -> Any:
    """An atom as the oracle exchanges it: floats as IEEE bits, the rest unchanged."""
    if type_ == FLT:
        return struct.unpack("<I", struct.pack("<f", x))[0]
    if type_ == DBL:
        return struct.unpack("<Q", struct.pack("<d", x))[0]
    if type_ == STR:
        return x.encode("utf-8", "surrogateescape").hex()
    if type_ == AGG:
        return bytes(x).hex()
    return x


def host_block(vtype: int, atom: Any) -> str:
    """The payload of a block of VTYPE as libpcp holds it in memory (little-endian)."""
    codes = {I32: "i", U32: "I", I64: "q", U64: "Q", FLT: "f", DBL: "d"}
    if vtype in codes:
        return struct.pack("<" + codes[vtype], atom).hex()
    if vtype == STR:
        return atom.encode().hex() + "00"
    return bytes(atom).hex()


SAMPLE_DIR = "/var/lib/pcp/pmdas/sample"


def sample_tool(tmp_path, *argv: str) -> subprocess.CompletedProcess[str]:
    """Run a PCP tool with -L against the reference sample agent loaded in-process."""
    if not available() or not os.path.exists(f"{SAMPLE_DIR}/pmda_sample.so"):
        pytest.skip(SKIP_REASON)
    if shutil.which(argv[0]) is None:
        pytest.skip(f"reference PCP 6 is not installed: no {argv[0]} (Debian package pcp)")
    conf = tmp_path / "pmcd.conf"
    conf.write_text(f"sample\t29\tdso\tsample_init\t{SAMPLE_DIR}/pmda_sample.so\n")
    env = oracle_env() | {"PCP_PMCDCONF_PATH": str(conf)}
    return subprocess.run(
        [argv[0], "-L", "-n", f"{SAMPLE_DIR}/root", *argv[1:]],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
