"""-D fetch: each fetch's outcome told on stderr in libpcp's words (QA 326, 1227): the
news of pmcd's state it brought and the result's dump."""

from __future__ import annotations

import re
import subprocess

import pytest

from purepcp.pmapi import debug
from purepcp.pmapi.host import HostSource
from purepcp.pmapi.pdu.records import DescReqPDU, ErrorPDU, HighResFetchPDU
from tests.support.client_servers import ours_serving
from tests.support.reference_pmcd import require_reference


class _Replies:
    """A connection whose replies are given: each send is answered by the next ones."""

    def __init__(self, *replies) -> None:
        self.replies = list(replies)

    def send(self, pdu) -> None:
        pass

    def receive(self):
        return self.replies.pop(0)


def _source(*replies) -> HostSource:
    source = HostSource.__new__(HostSource)
    source.connection = _Replies(*replies)
    source.changes = 0
    return source


def test_a_fetchs_news_is_kept_for_its_trace():
    answer = ErrorPDU(-12357)
    source = _source(ErrorPDU(0b111), answer)
    assert source.exchange(HighResFetchPDU(1, (1,))) is answer
    assert (source.fetch_news, source.changes) == (0b111, 0b111)
    source = _source(ErrorPDU(0b1), ErrorPDU(0))
    source.exchange(DescReqPDU(1))  # (libpcp tells only with a fetch)
    assert not hasattr(source, "fetch_news") and source.changes == 1


def test_state_changes_in_libpcps_words():
    assert debug.state_changes(0b111) == "PMCD state changes: agent(s) added restarted dropped\n"
    assert debug.state_changes(0b11010) == (
        "PMCD state changes: agent(s) restarted, label change, names change\n"
    )


def _masked(text: str) -> str:
    text = re.sub(r"from 0x[0-9a-f]+ timestamp: [0-9.]+ [0-9:.]+", "from ADDR timestamp: T", text)
    return re.sub(r"value \d+", "value N", text)


@pytest.mark.interop
def test_a_fetch_is_dumped_as_pcps_pminfo_dumps_it(tmp_path, monkeypatch, capsys):
    """Our context's -D fetch trace of a fetch against our pmcd equals PCP's pminfo's."""
    from purepcp.pmapi.context import Context

    require_reference("pminfo")
    monkeypatch.setattr(debug, "enabled", set())
    names = ["hinv.ncpu", "simple.color", "simple.numfetch"]
    with ours_serving(tmp_path) as pmcd:
        debug.set_options("fetch")
        with Context.host(pmcd.host) as ctx:
            ctx.fetch(ctx.lookup_names(names))  # (pminfo -f fetches them in one)
        mine = capsys.readouterr().err
        theirs = subprocess.run(
            ["pminfo", "-h", pmcd.host, "-Dfetch", "-f", *names],
            capture_output=True, text=True, timeout=60,
        ).stderr  # fmt: skip
    assert mine.count("pmFetch returns ...\n") == 1
    assert '    inst [0 or "red"] value' in mine
    assert _masked(mine) == _masked(theirs)


def test_a_failed_fetch_says_why(tmp_path, monkeypatch, capsys):
    from purepcp.pmapi.context import Context
    from purepcp.pmapi.errors import PMError

    monkeypatch.setattr(debug, "enabled", set())
    with ours_serving(tmp_path) as pmcd:
        debug.set_options("fetch")
        with Context.host(pmcd.host) as ctx, pytest.raises(PMError):
            ctx.fetch([])
    assert capsys.readouterr().err.startswith("pmFetch returns ...\nError: ")
