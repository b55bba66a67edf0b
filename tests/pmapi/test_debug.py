"""-D fetch: news of pmcd's state that a fetch brings is told in libpcp's words (QA 326)."""

from __future__ import annotations

import pytest

from purepcp.pmapi import debug
from purepcp.pmapi.host import HostSource
from purepcp.pmapi.pdu.records import DescReqPDU, ErrorPDU, HighResFetchPDU


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


@pytest.fixture
def fetch_debug(monkeypatch):
    monkeypatch.setattr(debug, "enabled", set())
    debug.set_options("fetch")


def test_a_fetch_with_news_tells_it(capsys, fetch_debug):
    answer = ErrorPDU(-12357)
    source = _source(ErrorPDU(0b111), answer)
    assert source.exchange(HighResFetchPDU(1, (1,))) is answer
    assert capsys.readouterr().err == "PMCD state changes: agent(s) added restarted dropped\n"
    assert source.changes == 0b111


def test_labels_and_names_news_and_other_requests(capsys, fetch_debug):
    source = _source(ErrorPDU(0b11000), ErrorPDU(0))
    source.exchange(HighResFetchPDU(1, (1,)))
    assert capsys.readouterr().err == "PMCD state changes: label change, names change\n"
    source = _source(ErrorPDU(0b1), ErrorPDU(0))
    source.exchange(DescReqPDU(1))  # (libpcp tells only with a fetch)
    assert capsys.readouterr().err == ""


def test_without_dash_d_fetch_nothing_is_told(capsys, monkeypatch):
    monkeypatch.setattr(debug, "enabled", set())
    debug.set_options("pdu,appl0")
    _source(ErrorPDU(0b1), ErrorPDU(0)).exchange(HighResFetchPDU(1, (1,)))
    assert capsys.readouterr().err == ""
