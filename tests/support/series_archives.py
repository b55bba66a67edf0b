"""An archive for the series tests: every case pmseries --load meets, in five records."""

from __future__ import annotations

from array import array

from purepcp.pmapi.archive import ArchiveWriter
from purepcp.pmapi.archive.format import LabelRecord
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.errors import PM_ERR_APPVERSION
from purepcp.pmapi.ids import PM_IN_NULL, PM_INDOM_NULL, pmID_build, pmInDom_build
from purepcp.pmapi.labels import PM_LABEL_COMPOUND, PM_LABEL_CONTEXT, PM_LABEL_DOMAIN, LabelSet
from purepcp.pmapi.types import PMSem, PMType, ValFmt
from purepcp.pmapi.units import Units
from purepcp.pmapi.values import Result, Timestamp, ValueSet

#: The archive's start (seconds since the epoch).
T0 = 1_700_000_000
U32 = PMType.PM_TYPE_U32


def write_mixed(base: str) -> None:
    """Records that meet every case the loader has: a counter without instances, an
    instance metric whose instances come and go (PCP keeps writing gone ones), strings
    needing escapes, doubles, error value sets (first and later), two records in one
    millisecond, a context label record with the compound bit and a domain label set."""
    ctr, inst, text, dbl, err = (pmID_build(245, 0, i) for i in range(5))
    indom = pmInDom_build(245, 1)
    with ArchiveWriter(base, hostname="testhost", timezone="UTC", start=Timestamp(T0, 0)) as w:
        w.put_desc(Desc(ctr, PMType.PM_TYPE_U64, PM_INDOM_NULL, PMSem.PM_SEM_COUNTER,
                        Units(dimTime=1, scaleTime=2)), ["test.ctr"])  # fmt: skip
        w.put_desc(
            Desc(inst, U32, indom, PMSem.PM_SEM_INSTANT, Units()), ["test.inst", "alias.inst"]
        )
        w.put_desc(Desc(text, PMType.PM_TYPE_STRING, PM_INDOM_NULL, PMSem.PM_SEM_DISCRETE,
                        Units()), ["test.str"])  # fmt: skip
        rate = Units(dimSpace=1, dimTime=-1, scaleSpace=1, scaleTime=3)
        w.put_desc(Desc(dbl, PMType.PM_TYPE_DOUBLE, PM_INDOM_NULL, PMSem.PM_SEM_INSTANT, rate),
                   ["test.dbl"])  # fmt: skip
        w.put_desc(Desc(err, U32, indom, PMSem.PM_SEM_INSTANT, Units()), ["test.err"])
        start = Timestamp(T0, 0)
        context = LabelSet.from_json('{"hostname":"testhost","site":{"rack":7}}', PM_LABEL_COMPOUND)
        w.put_labels(LabelRecord(start, PM_LABEL_CONTEXT, 0xFFFFFFFF, (context,)))
        w.put_labels(
            LabelRecord(start, PM_LABEL_DOMAIN, 245, (LabelSet.from_json('{"agent":"t"}'),))
        )
        w.put_indom(start, indom, [0, 1, 2, 3], ["a", "b", "c", "d"])
        rows = [
            (0, {0: 1, 1: 2, 2: 3}, "plain", True),
            (10_000_000, {0: 11, 1: 12}, 'he said "hi"\\ \u00e9', False),
            (10_000_300, {0: 13}, "same millisecond", False),
            (20_000_000, {0: 21, 1: 22, 2: 23, 3: 24}, "", False),
            (30_000_000, {3: 34, 1: 32}, "last", True),
        ]
        w.put_index(start)
        for i, (usec, values, string, failing) in enumerate(rows):
            stamp = Timestamp(T0 + usec // 1_000_000, (usec % 1_000_000) * 1000 + 250_000_000)
            pairs = sorted(values.items())
            vsets = [
                ValueSet.of_atoms(ctr, PMType.PM_TYPE_U64, [(PM_IN_NULL, 1000 * i)]),
                ValueSet.of_atoms(inst, U32, pairs),
                ValueSet.of_atoms(text, PMType.PM_TYPE_STRING, [(PM_IN_NULL, string)]),
                ValueSet.of_atoms(dbl, PMType.PM_TYPE_DOUBLE, [(PM_IN_NULL, 1.5 * i)]),
            ]
            if failing:
                vsets.append(
                    ValueSet(err, PM_ERR_APPVERSION, ValFmt.PM_VAL_INSITU, 0, array("I"), ())
                )
            else:
                vsets.append(ValueSet.of_atoms(err, U32, pairs[:1]))
            w.put_result(Result(stamp, tuple(vsets)))
