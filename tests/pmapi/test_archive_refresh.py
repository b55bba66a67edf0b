"""Archive.refresh_volumes and refresh_meta: an open archive takes in what its logger
has written since, a metadata record still being written waiting for the next read."""

from __future__ import annotations

from purepcp.pmapi.archive import ArchiveWriter
from purepcp.pmapi.archive.format import DescRecord, encode_desc
from purepcp.pmapi.archive.reader import Archive
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.ids import PM_IN_NULL, PM_INDOM_NULL, pmID_build
from purepcp.pmapi.types import PMSem, PMType
from purepcp.pmapi.units import Units
from purepcp.pmapi.values import Result, Timestamp, ValueSet

T0 = 1_700_000_000
ONE, TWO, THREE = (pmID_build(245, 0, i) for i in (1, 2, 3))


def _desc(pmid: int) -> Desc:
    return Desc(pmid, PMType.PM_TYPE_U32, PM_INDOM_NULL, PMSem.PM_SEM_INSTANT, Units())


def _result(n: int, *pmids: int) -> Result:
    sets = tuple(ValueSet.of_atoms(p, PMType.PM_TYPE_U32, [(PM_IN_NULL, n)]) for p in pmids)
    return Result(Timestamp(T0 + n, 0), sets)


def test_refresh_takes_in_new_metadata_and_records(tmp_path):
    base = str(tmp_path / "a")
    with ArchiveWriter(base, hostname="h", timezone="UTC", start=Timestamp(T0)) as w:
        w.put_desc(_desc(ONE), ["m.one"])
        w.put_index(Timestamp(T0))
        w.put_result(_result(0, ONE))
        w.sync()
        archive = Archive(base)
        assert [r.stamp.sec for r in archive.records()] == [T0]
        w.put_desc(_desc(TWO), ["m.two"])
        w.put_result(_result(1, ONE, TWO))
        w.sync()
        assert TWO not in archive.descs  # (nothing read until asked)
        archive.refresh_volumes()
        archive.refresh_meta()
        assert archive.names[TWO] == ("m.two",)
        assert [r.stamp.sec for r in archive.records()] == [T0, T0 + 1]
        # half a descriptor record at the end of the .meta: a record being written
        whole = encode_desc(DescRecord(_desc(THREE), ("m.three",)))
        with open(base + ".meta", "ab") as meta:
            meta.write(whole[:10])
        archive.refresh_volumes()
        archive.refresh_meta()
        assert THREE not in archive.descs and not archive.problems
        with open(base + ".meta", "ab") as meta:
            meta.write(whole[10:])
        archive.refresh_volumes()
        archive.refresh_meta()
        assert archive.names[THREE] == ("m.three",)
        archive.close()
