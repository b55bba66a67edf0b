"""pmlc's commands (actions.c): the logger connection, the logged host's pmcd, and
what each command prints, in PCP's words."""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from purepcp.pmapi.errors import PM_ERR_GENERIC, PM_ERR_IPC, PM_ERR_TIMEOUT, PMError, pmErrStr
from purepcp.pmapi.pdu import logcontrol as lc

from .client import ALL_PIDS, NO_PID, NO_PORT, PRIMARY_PID, LoggerLink, connect_logger, find_ports

if TYPE_CHECKING:
    from .lexer import Output
    from .metrics import MetricList

EPIPE = -32
TZ_LOCAL, TZ_LOGGER, TZ_OTHER = 0, 1, 2
MENU = """pmlc commands

  show loggers [@<host>]             display <pid>s of running pmloggers
  connect _logger_id [@<host>]       connect to designated pmlogger
  status                             information about connected pmlogger
  query metric-list                  show logging state of metrics
  new volume                         start a new log volume
  disconnect                         disconnect from pmlogger

  log { mandatory | advisory } on <interval> _metric-list
  log { mandatory | advisory } off _metric-list
  log mandatory maybe _metric-list

  timezone local|logger|'<timezone>' change reporting timezone
  help                               print this help message
  sleep <n>                          pause for <n> milliseconds
  quit                               exit from pmlc

  _logger_id   is  primary | <pid> | port <n>
  _metric-list is  _metric-spec | { _metric-spec ... }
  _metric-spec is  <metric-name> | <metric-name> [ <instance> ... ]
"""
HEADING = "Warning: unable to change logging state for:"


@dataclass
class Zone:
    """The status command's reporting zone: local, the logger's, or a named one."""

    kind: int = TZ_LOCAL
    tz: str | None = None
    changed: bool = False


class Session:
    """One pmlc run's state: the logger (if connected), its pmcd, the zone."""

    def __init__(self, out: Output, error: object, pmns: object = None) -> None:
        self.out = out
        self.error = error  # yyerror, for "Not connected ..."
        self.pmns = pmns
        self.link: LoggerLink | None = None
        self.lasthost: str | None = None
        self.ctx = None  # the logged host's pmcd
        self.srchost: str | None = None
        self.zone = Zone()
        self.zone_name = "local"
        self.zone_now: object = None  # what times are shown in (None: local)

    # -- connections ----------------------------------------------------------------------

    def connect(self, host: str, pid: int, port: int) -> tuple[int, int, int]:
        """ConnectLogger: 0 or an error code; and the PID and port found."""
        self.lasthost = None
        self.disconnect()
        if self.ctx is not None:
            with contextlib.suppress(PMError):
                self.ctx.close()
            self.ctx = None
        self.srchost = None
        try:
            self.link, pid, port = connect_logger(host, pid, port)
        except PMError as exc:
            self.link = None
            return exc.code, pid, port
        self.lasthost = host
        return 0, pid, port

    def disconnect(self) -> None:
        if self.link is not None:
            self.link.close()
            self.link = None

    def connected(self) -> bool:
        if self.link is None:
            self.error("Not connected to any pmlogger instance")  # type: ignore[operator]
            return False
        return True

    def still_connected(self, code: int) -> bool:
        if code in (PM_ERR_IPC, EPIPE):
            self.out.stderr("Lost connection to the pmlogger instance\n")
            self.disconnect()
            return False
        if code == PM_ERR_TIMEOUT:
            self.out.stderr("Timeout, closed connection to the pmlogger instance\n")
            self.disconnect()
            return False
        return True

    def _fail(self, lead: str, code: int) -> None:
        self.out.stderr(lead)
        if self.still_connected(code):
            self.out.stderr(f"{pmErrStr(code)}\n")

    def _status(self, sending: str) -> lc.LogStatus | None:
        """The logger's status (LOG_REQUEST_STATUS), or None, told why."""
        assert self.link is not None
        try:
            self.link.send(lc.encode_request(lc.LOG_REQUEST_STATUS))
        except PMError as exc:
            self._fail(f"Error sending {sending}request to pmlogger: ", exc.code)
            return None
        try:
            frame = self.link.receive()
        except PMError as exc:
            self._fail("Error receiving response from pmlogger: ", exc.code)
            return None
        if frame is None:
            self._fail("Error receiving response from pmlogger: ", PM_ERR_IPC)
            return None
        kind = lc.pdu_type(frame)
        if kind == 0x7000:
            from .client import error_code

            self._fail("Error: ", error_code(frame))
            return None
        if kind not in (lc.PDU_LOG_STATUS, lc.PDU_LOG_STATUS_V2):
            self.out.stderr(
                f"Error PDU response from pmlogger {_pdu_name(kind)} not LOG_STATUS "
                "or LOG_STATUS_V2 as expected\n"
            )
            return None
        try:
            return lc.decode_status(frame)
        except PMError as exc:
            self._fail("Error decoding response from pmlogger: ", exc.code)
            return None

    def connect_pmcd(self) -> int:
        """ConnectPMCD: the logged host's pmcd (< 0: none)."""
        if self.ctx is not None:
            return 0
        status = self._status("")
        if status is None:
            return -1 if self.link is None else 0
        fqdn = status.fqdn or ""
        self.srchost = self.lasthost if _is_local(fqdn) else fqdn
        from purepcp.pmapi.context import Context

        try:
            self.ctx = Context.host(self.srchost or "local:", self.pmns)
        except PMError as exc:
            self.out.stderr(f"Error trying to connect to PMCD on {self.srchost}: {exc.message}\n")
            return exc.code
        return 0

    # -- commands ---------------------------------------------------------------------------

    def show(self, host: str) -> None:
        """show loggers: the loggers running on HOST, the primary first."""
        try:
            ports = find_ports(host, ALL_PIDS)
        except PMError as exc:
            if exc.detail and "Cannot connect" in exc.detail:
                self.out.stderr(f"Error trying to connect to PMCD on {host}: {exc.message}\n")
                return
            self._fail(f"Error finding pmloggers on {host}: ", exc.code)
            return
        if not ports:
            self.out.stdout(f"No pmloggers running on {host}\n")
            return
        pport = next((p.port for p in ports if p.pid == PRIMARY_PID), -1)
        primary = next((k for k, p in enumerate(ports) if p.port == pport), -1)
        text = f"The following pmloggers are running on {host}:\n    "
        if primary != -1:
            text += f"primary ({ports[primary].pid})"
        for k, p in enumerate(ports):
            if k != primary and p.pid != PRIMARY_PID:
                text += f" {p.pid}"
        self.out.stdout(text + "\n")

    def query(self, metrics: MetricList) -> None:
        if not self.connected():
            return
        result = self._control(metrics, lc.PM_LOG_ENQUIRE, 0, 0)
        if result is None:
            return
        text = []
        for m, vs in zip(metrics.metrics, result.vsets, strict=False):
            if m.pmid != vs.pmid:
                self.out.stdout("".join(text))
                self.out.stderr(f"GAK! {m.name} not found in returned result\n")
                return
            text.append(f"{m.name}\n")
            pairs = _pairs(vs)
            if vs.numval < 0:
                text.append(f"    {pmErrStr(vs.numval)}\n")
            elif m.indom == -1:
                text.append(f"    {_state(pairs[0][1] if pairs else 0)}\n")
            elif m.has_insts:
                for inst in m.insts:
                    value = next((v for i, v in pairs if i == inst), None)
                    if value is None:
                        text.append(f"                  [{inst}] (not found)\n")
                        continue
                    text.append(f'    {_state(value)} [{inst} or "{metrics.inst_name(m, inst)}"]\n')
            elif vs.numval <= 0:
                text.append("    (no instances)\n")
            else:
                for inst, value in pairs:
                    text.append(f'    {_state(value)} [{inst} or "{metrics.inst_name(m, inst)}"]\n')
            text.append("\n")
        self.out.stdout("".join(text))

    def _control(self, metrics: MetricList, control: int, state: int, delta: int):
        """__pmControlLog: the logger's answer (a Result), or None, told why."""
        from purepcp.pmapi.pdu.result import decode_result

        assert self.link is not None
        request = lc.LogControl(control, state, delta, metrics.request())
        if not request.metrics:
            code = -12366  # PM_ERR_TOOSMALL
        else:
            try:
                self.link.send(lc.encode_control(request))
                frame = self.link.receive()
                if frame is None:
                    code = PM_ERR_IPC
                elif lc.pdu_type(frame) == 0x7001:
                    return decode_result(frame, False)
                elif lc.pdu_type(frame) == 0x7000:
                    from .client import error_code

                    code = error_code(frame)
                else:
                    code = PM_ERR_IPC
            except PMError as exc:
                code = exc.code
        if control != lc.PM_LOG_ENQUIRE and code == PM_ERR_GENERIC:
            self.out.stderr("Error: NULL result from __pmControlLog\n")
            return None
        self._fail("Error receiving response from pmlogger: ", code)
        return None

    def log(self, metrics: MetricList, control: int, state: int, delta: int) -> None:
        """log mandatory/advisory ...: the change asked for; what did not take, told."""
        if not self.connected():
            return
        result = self._control(metrics, control, state, delta)
        if result is None:
            return
        if state != lc.PM_LOG_MAYBE:
            want = (lc.PMLC_MAND if control == lc.PM_LOG_MANDATORY else 0) | (
                lc.PMLC_ON if state == lc.PM_LOG_ON else 0
            )
            mask = lc.PMLC_MAND | lc.PMLC_ON
        else:
            want, mask = 0, lc.PMLC_MAND
        want_delta = delta if want & lc.PMLC_ON else 0
        first = True
        text: list[str] = []

        def heading() -> None:
            nonlocal first
            if first:
                first = False
                text.append(HEADING + "\n")

        def wrong(value: int) -> bool:
            return value & mask != want or lc.state_delta(value) != want_delta

        for m, vs in zip(metrics.metrics, result.vsets, strict=False):
            if m.pmid != vs.pmid:
                self.out.stdout("".join(text))
                self.out.stderr(f"GAK! {m.name} not found in returned result\n")
                return
            pairs = _pairs(vs)
            if vs.numval < 0:
                heading()
                text.append(f"{m.name}:{pmErrStr(vs.numval)}\n")
                continue
            if m.indom == -1:
                if wrong(pairs[0][1] if pairs else 0):
                    heading()
                    text.append(f"{m.name}\n\n")
                continue
            said = False
            if m.has_insts:
                for inst in m.insts:
                    name = metrics.inst_name(m, inst)
                    value = next((v for i, v in pairs if i == inst), None)
                    if value is None:
                        heading()
                        if not said:
                            said = True
                            text.append(f"{m.name}\n")
                        text.append(f'    [{inst} or "{name}"] instance not found\n')
                        continue
                    if wrong(value):
                        heading()
                        if not said:
                            said = True
                            text.append(f"{m.name} instance(s):\n")
                        text.append(f'    [{inst} or "{name}"]\n')
            else:
                for inst, value in pairs:
                    if wrong(value):
                        heading()
                        if not said:
                            said = True
                            text.append(f"{m.name} instance(s):\n")
                        text.append(f'    [{inst} or "{metrics.inst_name(m, inst)}"]\n')
            if said:
                text.append("\n")
        self.out.stdout("".join(text))

    def status(self, pid: int, primary: bool) -> None:
        if not self.connected():
            return
        status = self._status("status ")
        if status is None:
            return
        from purepcp.pmapi.timewindow.stamps import format_stamp, pm_ctime

        if self.zone.changed:
            if self.zone.kind == TZ_LOCAL:
                self.zone_now, self.zone_name = None, "local"
            elif self.zone.kind == TZ_LOGGER:
                self.zone_now, self.zone_name = status.pmlogger_timezone, "pmlogger"
            else:
                self.zone_now, self.zone_name = self.zone.tz, self.zone.tz or ""
        tz = self.zone_now
        who = "[primary]" if primary else f"[{pid}]"
        host = status.hostname or ""
        lines = [f"pmlogger {who} on host {self.lasthost} is logging metrics from host {host}\n"]
        lines.append(f"PMCD host        {host if _is_local(status.fqdn or '') else status.fqdn}\n")
        if status.state == lc.PM_LOG_STATE_NEW:
            lines.append("logging hasn't started yet\n")
            self.out.stdout("".join(lines))
            return
        for label, stamp, tail in (
            ("log started     ", status.start, f" (times in {self.zone_name} time)"),
            ("last log entry  ", status.last, ""),
            ("current time    ", status.now, ""),
        ):
            ctime = pm_ctime(stamp, tz)  # type: ignore[arg-type]
            clock = format_stamp(stamp, tz, digits=9)  # type: ignore[arg-type]
            lines.append(f"{label} {ctime[:10]} {clock} {ctime[20:]}{tail}\n")
        lines.append(f"log volume       {status.vol}\n")
        lines.append(f"log size         {status.size}\n")
        self.out.stdout("".join(lines))

    def _simple(self, kind: int, what: str) -> int | None:
        """A LOG_REQUEST answered by an ERROR PDU: its code, or None, told why."""
        if not self.connected():
            return None
        assert self.link is not None
        try:
            self.link.send(lc.encode_request(kind))
        except PMError as exc:
            self._fail(f"Error sending {what} request to pmlogger: ", exc.code)
            return None
        try:
            frame = self.link.receive()
            code = PM_ERR_IPC if frame is None or lc.pdu_type(frame) != 0x7000 else None
        except PMError as exc:
            code = exc.code
            frame = None
        if code is not None or frame is None:
            self._fail("Error receiving response from pmlogger: ", code or PM_ERR_IPC)
            return None
        from .client import error_code

        code = error_code(frame)
        if code < 0:
            self._fail("Error: ", code)
            return None
        return code

    def new_volume(self) -> None:
        vol = self._simple(lc.LOG_REQUEST_NEWVOLUME, "newvolume")
        if vol is not None:
            self.out.stderr(f"New log volume {vol}\n")

    def sync(self) -> None:
        self._simple(lc.LOG_REQUEST_SYNC, "sync")

    def qa(self, case: int) -> None:
        self._simple(100 + case, "qa")

    def sleep(self, msec: int) -> None:
        time.sleep(msec / 1000)


def _is_local(host: str) -> bool:
    return host in ("localhost", "local:", "unix:")


def _pairs(vs) -> list[tuple[int, int]]:
    """A value set's (instance, state word) pairs, the instances signed."""
    out = []
    for inst, value in zip(vs.insts, vs.values, strict=False):
        out.append((inst - (1 << 32) if inst >= 1 << 31 else inst, int(value)))
    return out


def _state(value: int) -> str:
    """PrintState: "mand on  nl      10 sec " and the like."""
    text = "mand " if value & lc.PMLC_MAND else "adv  "
    on = bool(value & lc.PMLC_ON)
    text += "on  " if on else "off "
    if value & lc.PMLC_INLOG:
        text += "   " if value & lc.PMLC_AVAIL else "na "
    else:
        text += "nl "
    if not on:
        return text + "            "
    delta = lc.state_delta(value)
    if delta == 0:
        return text + "        once"
    units = ("msec", "sec ", "min ", "hour")
    factors = (1000, 60, 60, 24)
    t = _f32(delta)  # (C's float, each step rounded to it)
    k = 0
    while k < len(factors):
        if t < factors[k]:
            break
        t = _f32(t / factors[k])
        k += 1
    if k >= len(factors):
        k = len(factors) - 1
    frac = int(_f32(_f32(t - int(t)) * 1000))
    digits = 3 if frac % 10 else 2 if frac % 100 else 1 if frac % 1000 else 0
    return text + f"{t:{7 - digits}.{digits}f} {units[k]}"


def _f32(x: float) -> float:
    import struct

    return struct.unpack("f", struct.pack("f", x))[0]


def _pdu_name(kind: int) -> str:
    names = {0x7000: "ERROR", 0x7001: "RESULT", lc.PDU_LOG_CONTROL: "LOG_CONTROL"}
    return names.get(kind, f"TYPE-{kind}?")


__all__ = ["MENU", "NO_PID", "NO_PORT", "Session"]
