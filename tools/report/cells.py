"""Values to text for a whole block at once, with pmrep's rules, in NumPy and a few
%-templates: a row's line is one ``template % row`` in C, its template chosen by which
form each of its cells takes (most rows share a handful of templates).

stdout cells are right-aligned in their column's width: integers as %d, or "xxx" when
wider; floating point values with as many of the precision's decimals as fit, as an
integer when only the integer part fits, "xxx" when not even that; "N/A" when there is
no value.  CSV cells are %.<precision>f and %d, empty when there is no value.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .model import Kind

NO_VAL = "N/A"
TRUNC = "xxx"
#: cell forms: text (the row's text for that cell), an integer, a float with N decimals
TEXT, INT, FIXED = 0, 1, 2
_POWERS = 10.0 ** np.arange(0, 309)


@dataclass(frozen=True)
class CellSpec:
    """How one column's cells print."""

    kind: Kind
    width: int  # 0: no width (CSV)
    precision: int
    const: str | None = None  # every cell is this text (colxrow's "~")


def _digits(whole: np.ndarray) -> np.ndarray:
    """Decimal digits of non-negative integral floats (0 has one)."""
    return np.maximum(np.searchsorted(_POWERS, whole, side="right"), 1)


def _specials(v: np.ndarray) -> np.ndarray:
    """inf, -inf and NaN as pmrep prints them."""
    out = np.full(v.shape, "NaN", dtype=object)
    out[v == np.inf] = "inf"
    out[v == -np.inf] = "-inf"
    return out


class Renderer:
    """Formats blocks of rows for columns described by SPECS, joined by DELIMITER."""

    def __init__(self, specs: Sequence[CellSpec], delimiter: str, csv: bool = False,
                 missing: Sequence[str] = ()) -> None:  # fmt: skip
        self.specs = list(specs)
        self.missing = list(missing)  # the text of no value, per column in turn (cycled)
        self.delimiter = delimiter
        self.csv = csv
        self._templates: dict[bytes, str] = {}
        self._joint = delimiter.replace("%", "%%")

    def _piece(self, col: int, form: int) -> str:
        spec = self.specs[col]
        w = spec.width if not self.csv else 0
        if form == TEXT:
            return f"%{w}s" if w else "%s"
        if form == INT:
            return f"%{w}d" if w else "%d"
        return f"%{w}.{form - FIXED}f" if w else f"%.{form - FIXED}f"

    def _template(self, key: bytes, forms: np.ndarray) -> str:
        found = self._templates.get(key)
        if found is None:
            pieces = [self._piece(c, int(f)) for c, f in enumerate(forms.tolist())]
            found = self._templates[key] = self._joint.join(pieces)
        return found

    def cell_text(self, text: np.ndarray, width: int) -> np.ndarray:
        """Text cells: pmrep's {:>w.w} truncates them to the width."""
        if not width or self.csv:
            return text
        return np.array([t[:width] for t in text.tolist()], dtype=object)

    def clean(self, text: str) -> str:
        """A string value without the delimiter (unless it is blank) and newlines."""
        d = self.delimiter
        if d and not d.isspace():
            text = text.replace(d, "_" if d != "_" else " ")
        if self.csv:
            return '"' + text.replace("\n", " ").replace('"', " ") + '"'
        return text.replace("\n", "\\n")

    def forms(self, values, has, strings) -> tuple[np.ndarray, dict[int, tuple]]:
        """Per cell its form, and per column the (rows, texts) of its text cells."""
        rows, cols = values.shape
        forms = np.zeros((rows, cols), dtype=np.int8)
        texts: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        for c, spec in enumerate(self.specs):
            missing = "" if self.csv else NO_VAL
            if self.missing:
                missing = self.missing[c % len(self.missing)]
            v, h = values[:, c], has[:, c]
            cell = np.full(rows, missing, dtype=object)
            is_text = ~h
            if spec.const is not None:
                cell[:] = spec.const
                is_text = np.ones(rows, bool)
            elif spec.kind is Kind.STRING:
                column = strings.get(c)
                if column is not None:
                    for r in np.nonzero(h)[0].tolist():
                        cell[r] = self.clean(str(column[r]))
                is_text = np.ones(rows, bool)
            elif spec.kind is Kind.INT:
                forms[:, c] = INT
                if spec.width and not self.csv:
                    wide = h & (_digits(np.abs(v)) + (v < 0) > spec.width)
                    cell[wide] = TRUNC
                    is_text |= wide
            else:
                odd = h & ~np.isfinite(v)
                if odd.any():
                    special = _specials(v[odd])
                    if spec.width and not self.csv:
                        special[[len(s) > spec.width for s in special]] = TRUNC
                    cell[odd] = special
                    is_text |= odd
                if self.csv or not spec.width:
                    forms[:, c] = FIXED + spec.precision
                else:
                    forms[:, c] = self._fit(v, h & ~odd, spec, cell, is_text)
            forms[is_text, c] = TEXT
            if is_text.any():
                where = np.nonzero(is_text)[0]
                texts[c] = (where, self.cell_text(cell[where], spec.width))
        return forms, texts

    def _fit(self, v, live, spec: CellSpec, cell, is_text) -> np.ndarray:
        """pmrep's choice for a float in a width: fewer decimals until it fits, the
        integer part alone when only that fits (s + 2 > width), "xxx" when not even that."""
        w, p = spec.width, spec.precision
        a = np.abs(np.where(live, v, 0.0))
        whole = np.trunc(a)
        nd = _digits(whole)
        s = nd + (v <= -1.0)  # len(str(int(v)))
        wide = live & (s > w)
        cell[wide] = TRUNC
        is_text |= wide
        as_int = live & ~wide & (s + 2 > w)
        neg = np.signbit(v).astype(np.int64)
        room = w - nd - neg - 1
        c = np.clip(room, 0, p)
        form = (FIXED + c).astype(np.int8)
        form[as_int] = INT
        # rounding up to the next power of ten adds a digit: check those exactly
        risky = live & ~wide & ~as_int & (c == room) & (c > 0)
        risky &= a >= _POWERS[np.minimum(nd, 308)] - 0.5 * 10.0 ** (-c.astype(np.float64))
        for r in np.nonzero(risky)[0].tolist():
            x, k = float(v[r]), int(c[r])
            while k > 0 and len(f"{x:{w}.{k}f}") > w:
                k -= 1
            form[r] = FIXED + k
        return form

    def lines(self, values, has, strings) -> list[str]:
        """Each row's cells, joined by the delimiter."""
        rows = values.shape[0]
        if not self.specs:
            return [""] * rows
        forms, texts = self.forms(values, has, strings)
        grid = values.tolist()
        for c, (where, text) in texts.items():
            for r, t in zip(where.tolist(), text.tolist(), strict=True):
                grid[r][c] = t
        out = []
        template = self._template
        last_key, last = b"", ""
        for r in range(rows):
            key = forms[r].tobytes()
            if key != last_key:
                last_key, last = key, template(key, forms[r])
            out.append(last % tuple(grid[r]))
        return out
