"""The expression's series id, descriptor and text (series_redis_hash_expression): the
SHA-1 of its canonical text, given to every result series once their units are found
to agree (scales converted where they differ), and `pcp:desc:series:<id>` and
`pcp:expr:series:<id>` written."""

from __future__ import annotations

from purepcp.pmapi.convert import pmConvScale
from purepcp.pmapi.errors import PM_ERR_CONV, PMError
from purepcp.pmapi.types import pmTypeStr
from purepcp.pmapi.units import Units, pmUnitsStr

from .. import schema
from ..ids import NULL_ID, expr_id
from ..read import SeriesReader
from .valuesets import Node, Run, Series
from .valuetext import DBL, atom_text, same_dims, scan, units_of

__all__ = ["hash_expression"]


class _Larger:
    """The larger units series_compatibility_convert converts to: a variable of
    series_redis_hash_expression that starts uninitialised and is only ever given
    scales, so its dimensions are unknown (DIMS None) until a failed conversion zeroes
    it - which the first conversion then always is, so values keep their size."""

    def __init__(self) -> None:
        self.dims: tuple[int, int, int] | None = None
        self.scales = (0, 0, 0)

    def units(self, fallback: Units) -> Units:
        dims = self.dims or (fallback.dimSpace, fallback.dimTime, fallback.dimCount)
        return Units(*dims, *self.scales)

    def convert(self, s: Series, units: Units) -> None:
        """One side's values to these units as doubles (%e), its type and units set."""
        for value in s.each_value():
            number = scan(DBL, value.data) or 0.0
            try:
                if self.dims is None:
                    raise PMError(PM_ERR_CONV)
                number = pmConvScale(DBL, number, units, self.units(units))
            except PMError:
                self.dims, self.scales = (0, 0, 0), (0, 0, 0)
            value.data = atom_text(DBL, number) or ""
        s.desc.type = pmTypeStr(DBL)
        # (with no values converted the dimensions are still unknown: the side's own)
        s.desc.units = pmUnitsStr(self.units(units))


def hash_expression(reader: SeriesReader, root: Node, run: Run) -> str | None:
    """series_redis_hash_expression: the expression's id given to every result series
    (after checking their units agree, converting scales where they differ), and its
    descriptor and text stored; None when nothing matched."""
    values = root.values
    if not values:
        return None
    text = run.canonical(root, 0)
    sid = expr_id(text).hex()
    for s in values:
        s.compatible = True
    larger = _Larger()
    for i, s in enumerate(values):
        if not s.compatible:
            run.fail(
                f"Descriptors for metric '{s.metric_name or '(null)'}' between different "
                "sources are incompatible.\n"
            )
            break
        units0 = Units() if s.desc.units.startswith("none") else units_of(s.desc.units)
        if units0 is None:
            s.compatible = False
            run.fail(f"Invalid units string: {s.desc.units}\n")
            break
        for j, t in enumerate(values):
            if not t.compatible or i == j:
                continue
            units1 = Units() if t.desc.units.startswith("none") else units_of(t.desc.units)
            if units1 is None:
                t.compatible = False
                run.fail(f"Invalid units string: {t.desc.units}\n")
                break
            if not same_dims(units0, units1):
                t.compatible = False
                run.fail(
                    "Incompatible units between operand metrics or expressions\n"
                    f"'{s.metric_name or '(null)'}' ({s.desc.units})\n"
                    f"vs'{t.metric_name or '(null)'}' ({t.desc.units})\n"
                )
                break
            scales0 = (units0.scaleSpace, units0.scaleTime, units0.scaleCount)
            scales1 = (units1.scaleSpace, units1.scaleTime, units1.scaleCount)
            larger.scales = tuple(max(a, b) for a, b in zip(scales0, scales1, strict=True))
            if larger.scales != scales0:
                larger.convert(s, units0)
            if larger.scales != scales1:
                larger.convert(t, units1)
        if run.failed:
            break
        s.sid = sid
    if run.failed or not values[0].compatible:
        return sid
    desc = values[0].desc
    reader.client.hset(
        schema.desc_key(bytes.fromhex(sid)),
        mapping={
            "indom": desc.indom, "pmid": desc.pmid, "semantics": desc.semantics,
            "source": NULL_ID, "type": desc.type, "units": desc.units,
        },
    )  # fmt: skip
    reader.client.hset(schema.expr_key(bytes.fromhex(sid)), mapping={"query": text})
    return sid
