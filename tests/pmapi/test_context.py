"""pmapi contexts: host (TCP and unix socket), local, trio; profiles; reconnecting."""

from __future__ import annotations

import errno
from collections.abc import Iterator

import pytest
import trio

from purepcp.pmapi.connection import parse_host
from purepcp.pmapi.context import AsyncContext, Context
from purepcp.pmapi.errors import PM_ERR_INST, PM_ERR_NAME, PM_ERR_PROFILESPEC, PMError
from purepcp.pmapi.ids import PM_ID_NULL, PM_INDOM_NULL
from purepcp.pmapi.labels import PM_LABEL_CONTEXT, PM_LABEL_INSTANCES
from purepcp.pmapi.pdu.constants import PM_PROFILE_EXCLUDE, PM_PROFILE_INCLUDE
from purepcp.pmapi.profile import Profile
from purepcp.pmapi.types import PMSem, PMType
from purepcp.pmapi.values import Result, Timestamp, ValueSet
from tests.support.client_servers import ours_serving, reference_serving
from tests.support.our_pmcd import OurPMCD, our_pmcd
from tests.support.reference_pmcd import free_port, require_reference


@pytest.fixture(scope="module")
def ours(tmp_path_factory) -> Iterator[OurPMCD]:
    with ours_serving(tmp_path_factory.mktemp("ctx")) as running:
        yield running


def check_simple(ctx: Context, ours: bool = True) -> None:
    """What a simple agent answers (ours, or PCP's Python one), asked every way there is."""
    color, numfetch, missing = ctx.lookup_names(["simple.color", "simple.numfetch", "no.such"])
    assert missing == PM_ID_NULL
    assert ctx.name_all(color) == ["simple.color"]
    assert ("time", False) in ctx.children("simple") and ("color", True) in ctx.children("simple")
    assert "simple.time.user" in ctx.traverse("simple")
    desc = ctx.lookup_desc(color)
    assert (desc.type, desc.sem) == (PMType.PM_TYPE_32, PMSem.PM_SEM_INSTANT)
    assert ctx.instances(desc.indom) == [(0, "red"), (1, "green"), (2, "blue")]
    assert ctx.instance_id(desc.indom, "blue") == 2
    assert ctx.instance_name(desc.indom, 1) == "green"
    with pytest.raises(PMError) as failure:
        ctx.instance_id(desc.indom, "purple")
    assert failure.value.code == PM_ERR_INST
    if ours:  # PCP's Python simple agent has empty help texts
        assert ctx.text(color) == "Metrics which increment with each fetch"
        assert "red" in ctx.text(color, help=True)
    assert ctx.labels(0, PM_LABEL_CONTEXT)[0].to_dict()["hostname"]
    assert len(ctx.labels(desc.indom, PM_LABEL_INSTANCES)) == 3
    first = ctx.fetch([color, numfetch])
    assert set(first.values(color)) == {0, 1, 2}
    later = ctx.fetch([color])
    assert later.values(color)[1] == (first.values(color)[1] + 1) % 256
    assert later.seconds >= first.seconds
    with pytest.raises(PMError) as failure:
        ctx.lookup_name("no.such")
    assert failure.value.code == PM_ERR_NAME


def test_host_context_over_tcp_and_unix_socket(ours):
    for spec in (ours.host, f"unix:{ours.unix}"):
        with Context.host(spec) as ctx:
            assert ctx.kind == "host" and ctx.hostname in ("127.0.0.1", "localhost")
            check_simple(ctx)


def test_local_context_needs_no_daemon():
    with Context.local() as ctx:
        assert ctx.kind == "local"
        check_simple(ctx)
    with Context.local(["del,253"]) as ctx, pytest.raises(PMError):
        ctx.lookup_name("simple.color")


def test_a_fetch_describes_the_metrics_it_can_when_one_cannot_be():
    """QA 345: a fetch that cannot describe one PMID (no agent for its domain in a local
    context) still describes, and so types, the others' values, as libpcp does."""
    from purepcp.pmapi.ids import pmID_build

    with Context.local() as ctx:
        color = ctx.lookup_name("simple.color")
        nowhere = pmID_build(333, 0, 1)
        fetched = ctx.fetch([nowhere, color])
        assert fetched.descs[nowhere] is None
        assert fetched.descs[color] is not None
        assert set(fetched.values(color)) == {0, 1, 2}


def test_profile_limits_what_fetch_returns(ours):
    with Context.host(ours.host) as ctx:
        color = ctx.lookup_name("simple.color")
        indom = ctx.lookup_desc(color).indom
        ctx.profile.delete(indom)
        ctx.profile.add(indom, [2])
        assert list(ctx.fetch([color]).values(color)) == [2]
        ctx.profile.add(indom)
        assert list(ctx.fetch([color]).values(color)) == [0, 1, 2]


def test_store_sets_values(ours):
    with Context.host(ours.host) as ctx:
        color = ctx.lookup_name("simple.color")
        ctx.store(
            Result(Timestamp(0, 0), (ValueSet.of_atoms(color, PMType.PM_TYPE_32, [(1, 42)]),))
        )
        assert ctx.fetch([color]).values(color)[1] == 43  # each fetch adds one
        bad = ValueSet.of_atoms(color, PMType.PM_TYPE_32, [(1, 4242)])
        with pytest.raises(PMError):
            ctx.store(Result(Timestamp(0, 0), (bad,)))


def test_a_context_reconnects_after_pmcd_restarts(tmp_path):
    """pmcd goes away: the next call fails, the one after that reconnects (pmReconnectContext)."""
    conf = "simple 253 dso Simple purepcp.agents.simple\n"
    with our_pmcd(conf, tmp_path) as first:  # (a port of its choosing: no race for one)
        port = first.host.rsplit(":", 1)[1]
        ctx = Context.host(first.host)
        numfetch = ctx.lookup_name("simple.numfetch")
        ctx.profile.delete(PM_INDOM_NULL)  # a profile the new pmcd must be told again
        ctx.profile.add(PM_INDOM_NULL)
        assert ctx.fetch([numfetch]).values(numfetch)
    with pytest.raises(PMError):
        ctx.fetch([numfetch])  # pmcd is gone
    with pytest.raises(PMError) as failure:
        ctx.fetch([numfetch])  # still gone: the reconnection fails as a connection does
    assert failure.value.code == -errno.ECONNREFUSED
    with our_pmcd(conf, tmp_path, "-p", port):
        assert ctx.fetch([numfetch]).values(numfetch) == {PM_ID_NULL: 1}
    ctx.close()


def test_connection_errors_name_the_host():
    port = free_port()
    with pytest.raises(PMError) as failure:
        Context.host(f"localhost:{port}")
    assert failure.value.code == -errno.ECONNREFUSED
    assert failure.value.detail == f'Cannot connect to PMCD on host "localhost:{port}"'
    with pytest.raises(PMError) as failure:
        Context.host("unix:/nonexistent/pmcd.socket")
    assert failure.value.code == -errno.ENOENT


def test_host_specifications():
    assert parse_host("example.com").port == 44321
    assert (parse_host("h:4000").host, parse_host("h:4000").port) == ("h", 4000)
    assert parse_host("[::1]:5000").host == "::1"
    assert parse_host("unix:/x/y.sock").path == "/x/y.sock"
    assert parse_host("local:").local
    for bad in ("h:port", ":12"):
        with pytest.raises(PMError):
            parse_host(bad)


def test_async_context_answers_as_the_sync_one(ours):
    async def main() -> None:
        async with await AsyncContext.host(ours.host) as ctx:
            color = await ctx.lookup_name("simple.color")
            desc = await ctx.lookup_desc(color)
            assert await ctx.instances(desc.indom) == [(0, "red"), (1, "green"), (2, "blue")]
            assert set((await ctx.fetch([color])).values(color)) == {0, 1, 2}
            assert "green" in await ctx.text(color, help=True)
        local = await AsyncContext.local()
        async with local:
            numfetch = await local.lookup_name("simple.numfetch")
            assert (await local.fetch([numfetch])).values(numfetch) == {PM_ID_NULL: 1}

    trio.run(main)


def test_profile_rules_follow_pmaddprofile():
    profile = Profile()
    assert profile.wants(7, 1)
    profile.delete(9, [1])  # as libpcp: a new entry starts as "none but", so none
    assert not profile.wants(9, 1) and not profile.wants(9, 2)
    profile.add(7)
    profile.delete(7, [1])  # all but 1
    assert not profile.wants(7, 1) and profile.wants(7, 2)
    profile.add(7, [1])
    assert profile.wants(7, 1)
    profile.delete(8)  # none of 8 ...
    profile.add(8, [3])  # ... but 3
    assert profile.wants(8, 3) and not profile.wants(8, 4)
    pdu = profile.pdu(0, 0)
    assert pdu.state == PM_PROFILE_INCLUDE
    assert [(p.indom, p.state, p.insts) for p in pdu.profiles] == [
        (9, PM_PROFILE_EXCLUDE, ()),
        (7, PM_PROFILE_INCLUDE, ()),
        (8, PM_PROFILE_EXCLUDE, (3,)),
    ]
    profile.delete(PM_INDOM_NULL)
    assert not profile.wants(7, 1) and profile.pdu(0, 0).profiles == ()
    with pytest.raises(PMError) as failure:
        profile.add(PM_INDOM_NULL, [1])
    assert failure.value.code == PM_ERR_PROFILESPEC


@pytest.mark.interop
def test_host_context_on_the_reference_pmcd(tmp_path):
    require_reference("pminfo")
    with reference_serving(tmp_path) as theirs, Context.host(theirs.host) as ctx:
        ncpu = ctx.lookup_name("hinv.ncpu")
        assert ctx.lookup_desc(ncpu).type == PMType.PM_TYPE_U32
        assert ctx.fetch([ncpu]).values(ncpu)[PM_ID_NULL] >= 1
        load = ctx.lookup_name("kernel.all.load")
        indom = ctx.lookup_desc(load).indom
        assert [name for _, name in ctx.instances(indom)] == ["1 minute", "5 minute", "15 minute"]
        ctx.profile.delete(indom)
        ctx.profile.add(indom, [5])
        assert list(ctx.fetch([load]).values(load)) == [5]
        assert "load average" in ctx.text(load)
        check_simple(ctx, ours=False)


@pytest.mark.parametrize("code", [-errno.EPIPE, -errno.EBADF])
def test_a_fetch_over_a_lost_connection_is_an_ipc_failure(monkeypatch, code):
    """pmFetch maps a broken or closed connection to PM_ERR_IPC (__pmMapErrno), which
    is what pmie and pmval report when pmcd goes away (QA 356, 1296)."""
    from purepcp.pmapi.errors import PM_ERR_IPC

    with Context.local() as ctx:
        color = ctx.lookup_name("simple.color")

        def lost(op):
            op.close()
            raise PMError(code)

        monkeypatch.setattr(ctx, "_run", lost)
        with pytest.raises(PMError) as caught:
            ctx.fetch([color])
        assert caught.value.code == PM_ERR_IPC
