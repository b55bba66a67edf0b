"""agents/linux/cnumbers.py: C's strtoull rules, which pmdalinux's values carry."""

from __future__ import annotations

import pytest

from purepcp.agents.linux.cnumbers import U64, strtoul


@pytest.mark.parametrize(
    ("text", "base", "value"),
    [
        (b"42", 10, 42),
        (b"  \t+42xyz", 10, 42),
        (b"-1", 10, U64),
        (b"-2", 10, U64 - 1),
        (b"99999999999999999999999", 10, U64),
        (b"-99999999999999999999999", 10, U64),
        (b"", 10, None),
        (b"  -", 10, None),
        (b"abc", 10, None),
        (b"0x1F", 0, 31),
        (b"0x1F", 16, 31),
        (b"1f", 16, 31),
        (b"017", 0, 15),
        (b"0", 0, 0),
        (b"0x", 0, 0),  # "0" read as octal, the "x" left over
        (b"19", 0, 19),
    ],
)
def test_strtoul_reads_as_c_does(text: bytes, base: int, value: int | None) -> None:
    assert strtoul(text, base) == value
