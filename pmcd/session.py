"""One client's connection to pmcd: the greeting, then request after request.

pmcd speaks first (an ERROR PDU whose datum announces protocol version 2 and
pmcd's features), the client answers with CREDS, and from then on each request
gets one reply, except PROFILE, CREDS, ATTR and ERROR, which get none.  Names
are answered from pmcd's namespace; everything about a metric, an instance
domain or a value goes to the agent of its domain, and a fetch or store is split
across agents, which are asked at the same time.  A malformed PDU ends this
connection only.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import math
import os
from collections.abc import Callable, Container, Mapping, Sequence
from typing import Any

import trio

from purepcp.pmapi.desc import Desc
from purepcp.pmapi.errors import (
    PM_ERR_INDOM,
    PM_ERR_IPC,
    PM_ERR_NAME,
    PM_ERR_NOAGENT,
    PM_ERR_NONLEAF,
    PM_ERR_NOPROFILE,
    PM_ERR_PERMISSION,
    PM_ERR_PMID,
    PM_ERR_TIMEOUT,
    PM_ERR_TOOBIG,
    PMError,
)
from purepcp.pmapi.ids import PM_ID_NULL, is_dynamic_root, pmID_cluster, pmID_domain, pmInDom_domain
from purepcp.pmapi.labels import (
    PM_LABEL_CLUSTER,
    PM_LABEL_CONTEXT,
    PM_LABEL_DOMAIN,
    PM_LABEL_INSTANCES,
    PM_LABEL_ITEM,
)
from purepcp.pmapi.pdu.codec import PDUError, decode, encode
from purepcp.pmapi.pdu.constants import CLIENT_PDU_CEILING, PM_TEXT_PMID, Attr, PDUFlag
from purepcp.pmapi.pdu.framer import PDUFramer
from purepcp.pmapi.pdu.records import (
    AttrPDU,
    CredsPDU,
    DescIdsPDU,
    DescPDU,
    DescReqPDU,
    DescsPDU,
    ErrorPDU,
    FetchPDU,
    HighResFetchPDU,
    HighResResultPDU,
    InstancePDU,
    InstanceReqPDU,
    LabelPDU,
    LabelReqPDU,
    PDUInfo,
    PMNSChildPDU,
    PMNSIdsPDU,
    PMNSNamesPDU,
    PMNSTraversePDU,
    ProfilePDU,
    ResultPDU,
    TextPDU,
    TextReqPDU,
)
from purepcp.pmapi.pdu.result_layout import ColumnValueSets
from purepcp.pmapi.pmns import PMNS
from purepcp.pmapi.values import Result, Timestamp, ValueSet

from .access import PmcdOp
from .channels import Channel, InProcessChannel, Profile
from .metadata import MetadataCache

#: What this pmcd announces in its greeting: descriptors, high-resolution results,
#: labels, containers (PCP's pmcd also offers AUTH, SASL, which we do not speak).
FEATURES = (
    PDUFlag.PDU_FLAG_DESCS
    | PDUFlag.PDU_FLAG_HIGHRES
    | PDUFlag.PDU_FLAG_LABELS
    | PDUFlag.PDU_FLAG_CONTAINER
)
#: Most bytes read from a client at once.
RECEIVE_SIZE = 1 << 16
#: Seconds a client may take over the rest of a PDU when pmcd's -t is 0 (libpcp's
#: default request timeout, which PCP's pmcd falls back on too).
PARTIAL_PDU_FALLBACK = 10.0
#: At most this many contexts' profiles, and this many bytes of them, per client:
#: the oldest goes first (a client has one context per connection in practice).
MAX_PROFILES, PROFILE_BYTES = 256, 256 * 1024

log = logging.getLogger("pmcd")


class Session:
    """A connected client: its slot number, profiles by context, and the loop serving it."""

    def __init__(
        self,
        slot: int,
        stream: trio.abc.Stream,
        pmns: Callable[[], PMNS],
        channels: Mapping[int, Channel],
        timeout: Callable[[], float],
        context_labels: Callable[[tuple[int, int] | None, str | None], tuple],
        domains: Callable[[], Container[int]] | None = None,
        mark_changes: Callable[[int], None] | None = None,
        count: Callable[[str, int], None] = lambda direction, pdutype: None,
        denied: PmcdOp = PmcdOp.PMCD_OP_NONE,
        peer_creds: tuple[int, int, int | None] | None = None,
        on_attribute: Callable[[int, int, bytes], None] | None = None,
        pdu_limit: int = CLIENT_PDU_CEILING,
    ) -> None:
        self.slot = slot
        self.stream = stream
        self.pmns = pmns
        self.channels = channels
        self.timeout = timeout
        self.context_labels = context_labels
        self.domains = domains or (lambda: self.channels)  # the configured agents' domains
        #: tells every client of state changes an agent reported (PMCD_LABEL_CHANGE, ...)
        self.mark_changes = mark_changes or self.note_changes
        #: pmcd state changes (PMCDState bits) this client has not been told of yet
        self.changes = 0
        self.count = count
        self.denied = denied  # what [access] forbids this client
        #: each context's profile as it goes to an agent (from this client's slot), oldest
        #: first
        self.profiles: dict[int, Profile] = {}
        self._profile_bytes = 0
        #: connection attributes (PCP_ATTR_*: value with its NUL), in the order they came
        self.attributes: dict[int, bytes] = {}
        #: bumped whenever the attributes change; channels note which version they hold
        self.attr_version = 0
        self._creds_seen = False  # attributes go to agents only after the client's CREDS
        self._peer_creds = peer_creds  # (uid, gid, pid) of a unix-socket peer
        self._on_attribute = on_attribute or (lambda slot, attr, value: None)
        self.framer = PDUFramer(pdu_limit)
        self._frame = b""  # the request being answered, if any
        #: the client's trio socket, read and written directly (None: a stream of
        #: another kind, used through its own methods)
        self._socket = getattr(stream, "socket", None)

    async def send(self, pdu: Any) -> None:
        """Send PDU; raises trio.BrokenResourceError when the client has gone, or
        trio.TooSlowError when it takes none of it in pmcd's timeout.

        What the socket takes at once is written straight to it (an answer almost
        always fits): trio's send_all would yield to the scheduler once more for
        each answer, a whole pass of its run loop per request."""
        self.count("out", pdu.TYPE)
        data: bytes | memoryview = encode(pdu)
        sock = self._socket
        if sock is not None:
            try:
                sent = os.write(sock.fileno(), data)
            except BlockingIOError:
                sent = 0
            except OSError as exc:  # (gone, or closed here: fileno() is then -1)
                raise trio.BrokenResourceError(str(exc)) from None
            if sent == len(data):
                return
            data = memoryview(data)[sent:]
        with trio.move_on_after(self._patience()) as scope:
            await self.stream.send_all(data)
        if scope.cancelled_caught:
            raise trio.TooSlowError

    async def _receive(self) -> bytes:
        """What the client has sent, waiting for it; b"" when it has closed.  From a
        socket, read as soon as it is readable, without trio's extra scheduler pass
        after each read (one request, one wait)."""
        sock = self._socket
        if sock is None:
            return await self.stream.receive_some(RECEIVE_SIZE)
        waited = False
        while True:
            try:
                data = os.read(sock.fileno(), RECEIVE_SIZE)
            except BlockingIOError:
                waited = True
                await trio.lowlevel.wait_readable(sock)
                continue
            except OSError as exc:
                raise trio.BrokenResourceError(str(exc)) from None
            if not waited:  # (a client whose requests are always there must not keep
                await trio.lowlevel.checkpoint()  # the others from their turn)
            return data

    def _patience(self) -> float:
        """How long a client may take over a PDU, either way: pmcd's -t, as in PCP."""
        timeout = self.timeout()
        return timeout if timeout > 0 else PARTIAL_PDU_FALLBACK

    def held_buffers(self) -> list[int]:
        """The sizes of the PDU buffers held for this client (pmcd.buf.alloc)."""
        return [size for size in (self.framer.buffered, len(self._frame)) if size]

    def attr_pdus(self) -> tuple[AttrPDU, ...]:
        """The client's attributes as PCP's pmcd forwards them to an agent: one ATTR PDU
        each from the client's slot, newest first (the walk of libpcp's hash table)."""
        if not self._creds_seen:
            return ()
        return tuple(AttrPDU(a, v, self.slot) for a, v in reversed(self.attributes.items()))

    def set_attribute(self, attr: int, value: bytes) -> None:
        """Set connection attribute ATTR to VALUE (given without its NUL)."""
        value = value.split(b"\0", 1)[0] + b"\0"
        if self.attributes.get(attr) != value:
            self.attributes.pop(attr, None)
            self.attributes[attr] = value
            self.attr_version += 1
        self._on_attribute(self.slot, attr, value)

    async def serve(self) -> None:
        """Greet the client and answer it until it goes, sends something malformed, or
        holds a partial PDU (or leaves an answer unread) longer than pmcd's timeout."""
        try:
            await self.send(ErrorPDU(0, PDUInfo(2, 1, FEATURES).pack()))
        except (trio.TooSlowError, trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            return  # gone (or never reading) before it was even greeted
        framer = self.framer
        deadline = math.inf  # by when the partial PDU buffered must be complete
        while True:
            with trio.move_on_at(deadline) as scope:
                try:
                    data = await self._receive()
                except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                    return
            if scope.cancelled_caught:
                log.info(
                    "client %d: the rest of a PDU did not come in %gs (%d bytes held); closing",
                    self.slot,
                    self._patience(),
                    framer.buffered,
                )
                return
            if not data:
                return
            framer.feed(data)
            answered = False
            while True:
                try:
                    frame = framer.next_frame()
                    if frame is None:
                        break
                    request = decode(frame)
                except PDUError as exc:
                    log.info("client %d: bad PDU: %s; closing its connection", self.slot, exc)
                    await self._refuse(exc.code)
                    return
                answered = True
                self.count("in", request.TYPE)
                self._frame = frame
                try:
                    reply = await self.answer(request)
                finally:
                    self._frame = b""
                if reply is None:
                    continue
                if framer.buffered:  # more requests already here: let the other clients
                    await trio.lowlevel.checkpoint()  # have a turn between (one each)
                try:
                    if self.changes and isinstance(reply, ResultPDU | HighResResultPDU):
                        # as pmcd: news of agents or labels rides before a fetch's answer,
                        # in an ERROR PDU with a positive code, which libpcp's pmFetch returns
                        changes, self.changes = self.changes, 0
                        await self.send(ErrorPDU(changes))
                    await self.send(reply)
                except trio.TooSlowError:
                    log.info(
                        "client %d: took none of an answer in %gs; closing",
                        self.slot,
                        self._patience(),
                    )
                    return
                except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                    return  # the client went without waiting for its answer
            if not framer.buffered:
                deadline = math.inf
            elif answered or deadline == math.inf:  # a new PDU has begun
                deadline = trio.current_time() + self._patience()

    def _refused(self, request: Any) -> bool:
        """Whether [access] forbids this client REQUEST (a store, or any other request)."""
        op = PmcdOp.PMCD_OP_STORE if isinstance(request, ResultPDU) else PmcdOp.PMCD_OP_FETCH
        return bool(self.denied & op) and type(request) not in _ALWAYS_ALLOWED

    def note_changes(self, changes: int) -> None:
        """Remember pmcd state CHANGES to tell this client with its next fetch's answer."""
        self.changes |= changes

    async def _refuse(self, code: int) -> None:
        """Tell a misbehaving client why it is being dropped, if it still listens."""
        with contextlib.suppress(
            trio.BrokenResourceError, trio.ClosedResourceError, trio.TooSlowError, OSError
        ):
            await self.send(ErrorPDU(code if code in (PM_ERR_IPC, PM_ERR_TOOBIG) else PM_ERR_IPC))

    async def answer(self, request: Any) -> Any:
        """The reply to one request (None for those that get none)."""
        handler = _HANDLERS.get(type(request))
        if handler is None:
            return ErrorPDU(PM_ERR_IPC)
        if self.denied and self._refused(request):
            return ErrorPDU(PM_ERR_PERMISSION)
        try:
            return await handler(self, request)
        except PMError as exc:
            return ErrorPDU(exc.code)

    # -- requests answered without an agent ----------------------------------------------

    async def _profile(self, pdu: ProfilePDU) -> None:
        """Keep the context's profile as it came (a fraction of a decoded one's memory);
        encoded, when it came as a record (pmcd.local's contexts)."""
        wire = self._frame or encode(ProfilePDU(pdu.ctxid, pdu.state, pdu.profiles))
        wire = wire[:8] + self.slot.to_bytes(4, "big") + wire[12:]  # from the client's slot
        old = self.profiles.pop(pdu.ctxid, None)
        self._profile_bytes += len(wire) - (len(old[0]) if old is not None else 0)
        self.profiles[pdu.ctxid] = (wire, wire[16:])
        # the oldest go first, never the one just set (however big -L let it be)
        while len(self.profiles) > 1 and (
            len(self.profiles) > MAX_PROFILES or self._profile_bytes > PROFILE_BYTES
        ):
            oldest = next(iter(self.profiles))
            self._profile_bytes -= len(self.profiles.pop(oldest)[0])

    async def _creds(self, pdu: CredsPDU) -> None:
        """The client's handshake: from now on its attributes go to the agents that ask
        (on the unix socket, the peer's uid, gid and pid, as PCP's pmcd takes them)."""
        if not self._creds_seen and self._peer_creds is not None:
            uid, gid, pid = self._peer_creds
            self.set_attribute(Attr.PCP_ATTR_USERID, str(uid).encode())
            self.set_attribute(Attr.PCP_ATTR_GROUPID, str(gid).encode())
            if pid:
                self.set_attribute(Attr.PCP_ATTR_PROCESSID, str(pid).encode())
        self._creds_seen = True
        self.attr_version += 1
        return None

    async def _attr(self, pdu: AttrPDU) -> Any:
        """A client names its container (pminfo --container); nothing else is taken from
        it (a uid from a client's ATTR would be its word alone), as in PCP's pmcd."""
        if pdu.attr != Attr.PCP_ATTR_CONTAINER:
            return ErrorPDU(PM_ERR_IPC)
        self.set_attribute(pdu.attr, pdu.value)
        return None

    async def _error(self, pdu: ErrorPDU) -> None:
        return None

    async def _pmns_names(self, pdu: PMNSNamesPDU) -> Any:
        pmns = self.pmns()
        pmids = []
        status = 0
        for name in pdu.names:
            try:
                pmid = pmns.lookup(name)
            except PMError as exc:
                if len(pdu.names) == 1:
                    raise PMError(exc.code if exc.code == PM_ERR_NONLEAF else PM_ERR_NAME) from None
                pmid = PM_ID_NULL
            if is_dynamic_root(pmid):  # a name the agent owning the subtree must look up
                try:
                    reply = await self._ask(
                        pmID_cluster(pmid), PMNSNamesPDU((name,), None, self.slot), PMNSIdsPDU
                    )
                    pmid = reply.pmids[0] if reply.pmids else PM_ID_NULL
                    code = reply.status
                except PMError as exc:
                    pmid, code = PM_ID_NULL, exc.code
                # as pmcd: a serious error, or any error for a single name, is the answer
                if code < 0 and not status and (code not in _LOOKUP_MISSES or len(pdu.names) == 1):
                    status = code
            pmids.append(pmid)
        if status < 0:
            raise PMError(status)
        return PMNSIdsPDU(sum(pmid != PM_ID_NULL for pmid in pmids), tuple(pmids))

    async def _pmns_ids(self, pdu: PMNSIdsPDU) -> Any:
        if not pdu.pmids:
            raise PMError(PM_ERR_PMID)
        pmid = pdu.pmids[0]
        try:
            return PMNSNamesPDU(tuple(self.pmns().names(pmid)))
        except PMError:
            pass  # not in pmcd's namespace: perhaps in an agent's dynamic subtree
        reply = await self._ask(pmID_domain(pmid), PMNSIdsPDU(0, (pmid,), self.slot), PMNSNamesPDU)
        return PMNSNamesPDU(reply.names)

    def _dynamic_domain(self, name: str) -> int | None:
        """The domain of the agent whose dynamic subtree NAME is in (or roots), if any."""
        try:
            pmid = self.pmns().lookup(name)
        except PMError:
            return None
        return pmID_cluster(pmid) if is_dynamic_root(pmid) else None

    async def _pmns_child(self, pdu: PMNSChildPDU) -> Any:
        domain = self._dynamic_domain(pdu.name)
        if domain is not None:
            ask = PMNSChildPDU(pdu.name, pdu.subtype, self.slot)
            reply = await self._ask(domain, ask, PMNSNamesPDU)
            return PMNSNamesPDU(reply.names, reply.statuses if pdu.subtype else None)
        children = self.pmns().children(pdu.name)
        names = tuple(name for name, _ in children)
        statuses = tuple(status for _, status in children) if pdu.subtype else None
        return PMNSNamesPDU(names, statuses)

    async def _pmns_traverse(self, pdu: PMNSTraversePDU) -> Any:
        try:
            names = self.pmns().traverse(pdu.name)
            failure = None
        except PMError as exc:  # perhaps a name below a dynamic subtree's root
            names, failure = [pdu.name], exc
        found: list[str] = []
        for name in names:  # each dynamic root becomes the names its agent has below it
            domain = self._dynamic_domain(name)
            if domain is None:
                if failure is None:
                    found.append(name)
                continue
            try:
                ask = PMNSTraversePDU(name, 0, self.slot)
                found.extend((await self._ask(domain, ask, PMNSNamesPDU)).names)
            except PMError:
                if failure is None:
                    found.append(name)  # as pmcd: the root stays, its agent could not say
        if not found:
            raise failure or PMError(PM_ERR_NAME)
        return PMNSNamesPDU(tuple(found))

    def _label_facts(self) -> tuple[tuple[int, int] | None, str | None]:
        """What the context labels say of this client, as PCP's pmcd adds it: its (uid,
        gid) when it has both attributes (a unix-socket client), and its container."""

        def text(attr: int) -> str | None:
            value = self.attributes.get(attr)
            return None if value is None else value.rstrip(b"\0").decode(errors="replace")

        uid, gid = text(Attr.PCP_ATTR_USERID), text(Attr.PCP_ATTR_GROUPID)
        creds = (int(uid), int(gid)) if uid and gid and uid.isdigit() and gid.isdigit() else None
        return creds, text(Attr.PCP_ATTR_CONTAINER) or None

    # -- requests for one agent ----------------------------------------------------------

    def _channel(self, domain: int, unknown: int = PM_ERR_NOAGENT) -> Channel:
        """DOMAIN's agent; PMError UNKNOWN if none is configured, NOAGENT if it is down."""
        channel = self.channels.get(domain)
        if channel is None or not channel.alive:
            raise PMError(PM_ERR_NOAGENT if domain in self.domains() else unknown)
        return channel

    async def _ask(self, domain: int, pdu: Any, expect: type, unknown: int = PM_ERR_NOAGENT) -> Any:
        """Send PDU to DOMAIN's agent; its reply if of type EXPECT, its error raised if ERROR.

        UNKNOWN is the error when no agent is configured for DOMAIN (pmcd's varies
        with the request: PM_ERR_PMID for a descriptor, PM_ERR_INDOM for instances).
        """
        reply = await self._channel(domain, unknown).request(pdu, self.timeout(), self)
        if isinstance(reply, ErrorPDU):
            raise PMError(reply.code if reply.code < 0 else PM_ERR_IPC)
        if not isinstance(reply, expect):
            raise PMError(PM_ERR_IPC)
        return reply

    def _metadata(self, domain: int) -> MetadataCache | None:
        """DOMAIN's metadata cache, if this client may be answered from it (one that
        names a container may get answers for that container alone)."""
        if Attr.PCP_ATTR_CONTAINER in self.attributes:
            return None
        channel = self.channels.get(domain)
        if channel is None or not channel.alive or channel.not_ready:
            return None  # (a busy agent's requests are refused, not answered from memory)
        return channel.metadata if channel.metadata.trusted else None

    async def _asked_once(
        self, domain: int, table: str, key: Any, ask: Any, kind: type, unknown: int
    ) -> Any:
        """The agent's reply to ASK (of type KIND), from DOMAIN's metadata cache TABLE
        under KEY when it is there, else asked for and kept there."""
        cache = self._metadata(domain) if table else None
        kept = getattr(cache, table) if cache is not None else None
        if kept is not None and (known := kept.get(key)) is not None:
            return known
        reply = await self._ask(domain, ask, kind, unknown)
        if cache is None:
            self._answered(domain)
            return reply
        return cache.keep(kept, key, reply)

    def _answered(self, domain: int) -> None:
        """DOMAIN's agent answered a request: what it says may be kept again (a store
        had made it unsure, see pmcd.metadata)."""
        channel = self.channels.get(domain)
        if channel is not None:
            channel.metadata.trusted = True

    async def _desc(self, pdu: DescReqPDU) -> Any:
        ask = DescReqPDU(pdu.pmid, self.slot)
        return await self._asked_once(
            pmID_domain(pdu.pmid), "descs", pdu.pmid, ask, DescPDU, PM_ERR_PMID
        )

    async def _descs(self, pdu: DescIdsPDU) -> Any:
        descs = []
        status = 0
        for pmid in pdu.pmids:
            try:
                reply = await self._desc(DescReqPDU(pmid))
                descs.append(reply.desc)
            except PMError as exc:
                status = exc.code
                descs.append(Desc(PM_ID_NULL, 0, 0, 0))  # PCP zeroes a failed descriptor
        if len(pdu.pmids) == 1 and status < 0:
            raise PMError(status)
        return DescsPDU(tuple(descs))

    async def _instance(self, pdu: InstanceReqPDU) -> Any:
        ask = _resend(pdu, self.slot)
        return await self._ask(pmInDom_domain(pdu.indom), ask, InstancePDU, PM_ERR_INDOM)

    async def _text(self, pdu: TextReqPDU) -> Any:
        domain = pmID_domain(pdu.ident) if pdu.type & PM_TEXT_PMID else pmInDom_domain(pdu.ident)
        ask = _resend(pdu, self.slot)
        return await self._asked_once(
            domain, "texts", (pdu.ident, pdu.type), ask, TextPDU, PM_ERR_PMID
        )

    async def _label(self, pdu: LabelReqPDU) -> Any:
        level = pdu.type & 0x3F
        if level == PM_LABEL_CONTEXT:
            return LabelPDU(pdu.ident, pdu.type, self.context_labels(*self._label_facts()))
        if level == PM_LABEL_DOMAIN:
            domain, unknown = pdu.ident, PM_ERR_NOAGENT
        elif level in (PM_LABEL_CLUSTER, PM_LABEL_ITEM):
            domain, unknown = pmID_domain(pdu.ident), PM_ERR_PMID
        else:
            domain, unknown = pmInDom_domain(pdu.ident), PM_ERR_INDOM
        # instance labels follow the instances and the client's profile: never kept
        table = "" if level == PM_LABEL_INSTANCES else "labels"
        ask = _resend(pdu, self.slot)
        reply = await self._asked_once(domain, table, (pdu.ident, pdu.type), ask, LabelPDU, unknown)
        return LabelPDU(pdu.ident, pdu.type, reply.sets)

    # -- fetch and store, across agents ----------------------------------------------------

    async def _fetch(self, pdu: FetchPDU | HighResFetchPDU) -> Any:
        profile = self.profiles.get(pdu.ctxid)
        if profile is None:
            raise PMError(PM_ERR_NOPROFILE)
        pmids = pdu.pmids
        domain = pmID_domain(pmids[0])
        if all(pmID_domain(pmid) == domain for pmid in pmids):  # one agent: no tasks to start
            vsets = await self._fetch_from(domain, pdu.ctxid, profile, pmids)
        else:
            by_domain: dict[int, list[int]] = {}
            for pmid in pmids:
                by_domain.setdefault(pmID_domain(pmid), []).append(pmid)
            answers: dict[int, ValueSet] = {}

            async def fetch_from(domain: int, some: list[int]) -> None:
                got = await self._fetch_from(domain, pdu.ctxid, profile, some)
                answers.update({vs.pmid: vs for vs in got})

            # agents answering on the event loop (pmcd's own) need no task; nor does the
            # last agent left to ask: tasks only for agents to be asked at the same time
            waiting = []
            for domain, some in by_domain.items():
                channel = self.channels.get(domain)
                if isinstance(channel, InProcessChannel) and channel.inline:
                    await fetch_from(domain, some)
                else:
                    waiting.append((domain, some))
            if len(waiting) == 1:
                await fetch_from(*waiting[0])
            elif waiting:
                async with trio.open_nursery() as nursery:
                    for domain, some in waiting:
                        nursery.start_soon(fetch_from, domain, some)
            vsets = tuple(answers[pmid] for pmid in pmids)
        result = Result(Timestamp.now(), vsets)  # type: ignore[arg-type]
        if isinstance(pdu, HighResFetchPDU):
            return HighResResultPDU(result)
        return ResultPDU(result)

    async def _fetch_from(
        self, domain: int, ctxid: int, profile: Profile, pmids: Sequence[int]
    ) -> Sequence[ValueSet]:
        """DOMAIN's value sets for PMIDS, in that order; its error in each if it fails.

        An agent's answer in the order asked goes on as it came: a decoded PDU
        is relayed, not rebuilt.
        """
        try:
            vsets = await self._fetch_domain(domain, ctxid, profile, pmids)
        except PMError as exc:
            # as PCP's pmcd: an agent that timed out is gone, and its values say so
            code = PM_ERR_NOAGENT if exc.code == PM_ERR_TIMEOUT else exc.code
            return tuple(ValueSet.of_error(pmid, code) for pmid in pmids)
        if _pmids_of(vsets) == tuple(pmids):
            return vsets
        by_pmid = {vs.pmid: vs for vs in vsets}
        return tuple(by_pmid.get(pmid) or ValueSet.of_error(pmid, PM_ERR_IPC) for pmid in pmids)

    async def _fetch_domain(
        self, domain: int, ctxid: int, profile: Profile, pmids: Sequence[int]
    ) -> Sequence[ValueSet]:
        channel = self._channel(domain)
        request = FetchPDU(ctxid, tuple(pmids), self.slot)
        reply = await channel.request(request, self.timeout(), self, profile)
        if isinstance(reply, ErrorPDU):
            raise PMError(reply.code if reply.code < 0 else PM_ERR_IPC)
        if not isinstance(reply, ResultPDU) or len(reply.result.vsets) != len(pmids):
            raise PMError(PM_ERR_IPC)
        channel.metadata.trusted = True
        changes = reply.result.timestamp.sec & 0xFF  # pmdaExtSetFlags' news rides here
        if changes:
            channel.metadata.changed(changes)
            self.mark_changes(changes)
        return reply.result.vsets

    async def _store(self, pdu: ResultPDU) -> Any:
        by_domain: dict[int, list[ValueSet]] = {}
        for vs in pdu.result.vsets:
            by_domain.setdefault(pmID_domain(vs.pmid), []).append(vs)
        status = 0
        for domain, vsets in by_domain.items():
            try:
                store = ResultPDU(Result(pdu.result.timestamp, tuple(vsets)), self.slot)
                channel = self._channel(domain)
                channel.metadata.trusted = False  # (the store may change its answers)
                reply = await channel.request(store, self.timeout(), self)
            except PMError as exc:
                status = status or exc.code
                continue
            if not isinstance(reply, ErrorPDU):
                status = status or PM_ERR_IPC
            elif reply.code < 0:
                status = status or reply.code
        return ErrorPDU(status)


def _pmids_of(vsets: Sequence[ValueSet]) -> tuple[int, ...]:
    """The PMIDs of VSETS, in order (read from a decoded PDU's layout without unpacking)."""
    if type(vsets) is ColumnValueSets:
        return vsets.layout.pmids
    return tuple(vs.pmid for vs in vsets)


def _resend(pdu: Any, slot: int) -> Any:
    """PDU as pmcd forwards it: the same request, from the client's slot."""
    return dataclasses.replace(pdu, sender=slot)


#: Lookup failures that leave one name unresolved without failing a many-name lookup.
_LOOKUP_MISSES = (PM_ERR_NAME, PM_ERR_NOAGENT, PM_ERR_NONLEAF)

#: Requests that [access] never refuses: they ask nothing of the agents.
_ALWAYS_ALLOWED = (CredsPDU, AttrPDU, ErrorPDU)

_HANDLERS: dict[type, Callable[[Session, Any], Any]] = {
    ProfilePDU: Session._profile,
    CredsPDU: Session._creds,
    AttrPDU: Session._attr,
    ErrorPDU: Session._error,
    PMNSNamesPDU: Session._pmns_names,
    PMNSIdsPDU: Session._pmns_ids,
    PMNSChildPDU: Session._pmns_child,
    PMNSTraversePDU: Session._pmns_traverse,
    DescReqPDU: Session._desc,
    DescIdsPDU: Session._descs,
    InstanceReqPDU: Session._instance,
    TextReqPDU: Session._text,
    LabelReqPDU: Session._label,
    FetchPDU: Session._fetch,
    HighResFetchPDU: Session._fetch,
    ResultPDU: Session._store,
}

__all__ = ["FEATURES", "Session"]
