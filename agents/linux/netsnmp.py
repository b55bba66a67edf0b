"""network.ip/icmp/icmpmsg/tcp/udp/udplite/mptcp: the IPv4 SNMP and netstat counters.

PCP's linux agent reads two files of header/value line pairs: /proc/net/snmp
(cluster 14: sections Ip, Icmp, IcmpMsg, Tcp, Udp, UdpLite) and /proc/net/netstat
(cluster 53: IpExt, TcpExt, MPTcpExt).  Each section below is one table whose rows
are (metric name suffix, item, the kernel's column name, (semantics, units)); all
metrics are 64-bit unsigned.  Facts come from PCP 6.0.3's src/pmdas/linux
(proc_net_snmp.c, proc_net_netstat.c, the metric table and fetch callback of
pmda.c, root_linux).  How values are computed, as pmdalinux does:

- a pair of lines is a header line then a value line; the value line's leading
  tag ("Ip:", "TcpExt:", ...) picks the section, and each value is paired with the
  header column at the same position (columns past the first 64 of a /proc/net/snmp
  header, or 256 of a /proc/net/netstat one, are ignored); a column named twice
  keeps its last value, and a section given twice merges;
- a value is read as C's strtoull does: "-1" (Tcp MaxConn on Linux) becomes
  2**64 - 1, junk becomes 0;
- 2**64 - 1 means "no value": a column the kernel does not give (say the TcpExt
  columns removed from recent kernels) and a value of -1 have no value, except
  network.tcp.maxconn, which always has one, 2**64 - 1 when the kernel says -1
  or gives none (even with no /proc/net/snmp at all);
- network.icmpmsg.intype and outtype have the fixed instance domain 60.23 of 256
  instances "Type0" ... "Type255" (inst = ICMP type); an instance has a value only
  when the IcmpMsg section has an InType<n> / OutType<n> column for it.

The parsers are sans-IO (`parse_snmp`, `parse_netstat`, `snmp_values`,
`netstat_values`); the `NetSnmp` mixin reads each file once per fetch.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from purepcp.pmapi.cnumbers import scan_int, strtoul_value
from purepcp.pmapi.types import PMSem
from purepcp.pmapi.units import Units
from purepcp.pmda import InDom, refresh

from .base import LinuxBase
from .records import COUNT, COUNTER, INSTANT, MBYTE, MSEC, NONE, U64, MetricInfo

#: pmdalinux's cluster numbers (CLUSTER_NET_SNMP, CLUSTER_NET_NETSTAT).
SNMP_CLUSTER = 14
NETSTAT_CLUSTER = 53
#: pmdalinux's ICMPMSG_INDOM serial, and its number of instances (ICMP types 0..255).
ICMPMSG_INDOM = 23
ICMPMSG_TYPES = 256
#: How many header columns pmdalinux looks at (SNMP_MAX_COLUMNS, NETSTAT_MAX_COLUMNS).
SNMP_MAX_COLUMNS = 64
NETSTAT_MAX_COLUMNS = 256

#: pmdalinux's "no value" mark (-1 as a uint64).
MISSING = (1 << 64) - 1
#: The one metric pmdalinux gives a value even when it holds the "no value" mark.
ALWAYS = "network.tcp.maxconn"

Kind = tuple[PMSem, Units]
Row = tuple[str, int, str, Kind]

# The kinds of row: (semantics, units).
_EVENTS: Kind = (COUNTER, COUNT)  # events since boot (and, as in PCP, Forwarding, DefaultTTL)
_LEVEL: Kind = (INSTANT, NONE)  # a setting or current level
_MSECS: Kind = (INSTANT, MSEC)  # a time setting in milliseconds
#: TCPMemoryPressuresChrono is milliseconds, but pmdalinux's descriptor puts the time
#: scale in the space slot (PMDA_PMUNITS(1,0,0,PM_TIME_MSEC,0,0)), which reads as Mbyte.
_CHRONO: Kind = (COUNTER, MBYTE)

#: /proc/net/snmp "Ip:" -> network.ip.SUFFIX
IP: tuple[Row, ...] = (
    ("forwarding", 0, "Forwarding", _EVENTS),
    ("defaultttl", 1, "DefaultTTL", _EVENTS),
    ("inreceives", 2, "InReceives", _EVENTS),
    ("inhdrerrors", 3, "InHdrErrors", _EVENTS),
    ("inaddrerrors", 4, "InAddrErrors", _EVENTS),
    ("forwdatagrams", 5, "ForwDatagrams", _EVENTS),
    ("inunknownprotos", 6, "InUnknownProtos", _EVENTS),
    ("indiscards", 7, "InDiscards", _EVENTS),
    ("indelivers", 8, "InDelivers", _EVENTS),
    ("outrequests", 9, "OutRequests", _EVENTS),
    ("outdiscards", 10, "OutDiscards", _EVENTS),
    ("outnoroutes", 11, "OutNoRoutes", _EVENTS),
    ("reasmtimeout", 12, "ReasmTimeout", _EVENTS),
    ("reasmreqds", 13, "ReasmReqds", _EVENTS),
    ("reasmoks", 14, "ReasmOKs", _EVENTS),
    ("reasmfails", 15, "ReasmFails", _EVENTS),
    ("fragoks", 16, "FragOKs", _EVENTS),
    ("fragfails", 17, "FragFails", _EVENTS),
    ("fragcreates", 18, "FragCreates", _EVENTS),
)

#: /proc/net/snmp "Icmp:" -> network.icmp.SUFFIX
ICMP: tuple[Row, ...] = (
    ("inmsgs", 20, "InMsgs", _EVENTS),
    ("inerrors", 21, "InErrors", _EVENTS),
    ("indestunreachs", 22, "InDestUnreachs", _EVENTS),
    ("intimeexcds", 23, "InTimeExcds", _EVENTS),
    ("inparmprobs", 24, "InParmProbs", _EVENTS),
    ("insrcquenchs", 25, "InSrcQuenchs", _EVENTS),
    ("inredirects", 26, "InRedirects", _EVENTS),
    ("inechos", 27, "InEchos", _EVENTS),
    ("inechoreps", 28, "InEchoReps", _EVENTS),
    ("intimestamps", 29, "InTimestamps", _EVENTS),
    ("intimestampreps", 30, "InTimestampReps", _EVENTS),
    ("inaddrmasks", 31, "InAddrMasks", _EVENTS),
    ("inaddrmaskreps", 32, "InAddrMaskReps", _EVENTS),
    ("outmsgs", 33, "OutMsgs", _EVENTS),
    ("outerrors", 34, "OutErrors", _EVENTS),
    ("outdestunreachs", 35, "OutDestUnreachs", _EVENTS),
    ("outtimeexcds", 36, "OutTimeExcds", _EVENTS),
    ("outparmprobs", 37, "OutParmProbs", _EVENTS),
    ("outsrcquenchs", 38, "OutSrcQuenchs", _EVENTS),
    ("outredirects", 39, "OutRedirects", _EVENTS),
    ("outechos", 40, "OutEchos", _EVENTS),
    ("outechoreps", 41, "OutEchoReps", _EVENTS),
    ("outtimestamps", 42, "OutTimestamps", _EVENTS),
    ("outtimestampreps", 43, "OutTimestampReps", _EVENTS),
    ("outaddrmasks", 44, "OutAddrMasks", _EVENTS),
    ("outaddrmaskreps", 45, "OutAddrMaskReps", _EVENTS),
    ("incsumerrors", 46, "InCsumErrors", _EVENTS),
)

#: /proc/net/snmp "IcmpMsg:" -> network.icmpmsg.SUFFIX, one instance per ICMP type: the
#: kernel's columns are the name below followed by the type number (InType3, OutType8).
ICMPMSG: tuple[Row, ...] = (
    ("intype", 88, "InType", _EVENTS),
    ("outtype", 89, "OutType", _EVENTS),
)

#: /proc/net/snmp "Tcp:" -> network.tcp.SUFFIX
TCP: tuple[Row, ...] = (
    ("rtoalgorithm", 50, "RtoAlgorithm", _LEVEL),
    ("rtomin", 51, "RtoMin", _MSECS),
    ("rtomax", 52, "RtoMax", _MSECS),
    ("maxconn", 53, "MaxConn", _LEVEL),
    ("activeopens", 54, "ActiveOpens", _EVENTS),
    ("passiveopens", 55, "PassiveOpens", _EVENTS),
    ("attemptfails", 56, "AttemptFails", _EVENTS),
    ("estabresets", 57, "EstabResets", _EVENTS),
    ("currestab", 58, "CurrEstab", _LEVEL),
    ("insegs", 59, "InSegs", _EVENTS),
    ("outsegs", 60, "OutSegs", _EVENTS),
    ("retranssegs", 61, "RetransSegs", _EVENTS),
    ("inerrs", 62, "InErrs", _EVENTS),
    ("outrsts", 63, "OutRsts", _EVENTS),
    ("incsumerrors", 64, "InCsumErrors", _EVENTS),
)

#: /proc/net/snmp "Udp:" -> network.udp.SUFFIX
UDP: tuple[Row, ...] = (
    ("indatagrams", 70, "InDatagrams", _EVENTS),
    ("noports", 71, "NoPorts", _EVENTS),
    ("inerrors", 72, "InErrors", _EVENTS),
    ("outdatagrams", 74, "OutDatagrams", _EVENTS),
    ("recvbuferrors", 75, "RcvbufErrors", _EVENTS),
    ("sndbuferrors", 76, "SndbufErrors", _EVENTS),
    ("incsumerrors", 83, "InCsumErrors", _EVENTS),
    ("ignoredmulti", 90, "IgnoredMulti", _EVENTS),
    ("memerrors", 91, "MemErrors", _EVENTS),
)

#: /proc/net/snmp "UdpLite:" -> network.udplite.SUFFIX
UDPLITE: tuple[Row, ...] = (
    ("indatagrams", 77, "InDatagrams", _EVENTS),
    ("noports", 78, "NoPorts", _EVENTS),
    ("inerrors", 79, "InErrors", _EVENTS),
    ("outdatagrams", 80, "OutDatagrams", _EVENTS),
    ("recvbuferrors", 81, "RcvbufErrors", _EVENTS),
    ("sndbuferrors", 82, "SndbufErrors", _EVENTS),
    ("incsumerrors", 84, "InCsumErrors", _EVENTS),
    ("ignoredmulti", 92, "IgnoredMulti", _EVENTS),
    ("memerrors", 93, "MemErrors", _EVENTS),
)

#: /proc/net/netstat "IpExt:" -> network.ip.SUFFIX
IPEXT: tuple[Row, ...] = (
    ("innoroutes", 0, "InNoRoutes", _EVENTS),
    ("intruncatedpkts", 1, "InTruncatedPkts", _EVENTS),
    ("inmcastpkts", 2, "InMcastPkts", _EVENTS),
    ("outmcastpkts", 3, "OutMcastPkts", _EVENTS),
    ("inbcastpkts", 4, "InBcastPkts", _EVENTS),
    ("outbcastpkts", 5, "OutBcastPkts", _EVENTS),
    ("inoctets", 6, "InOctets", _EVENTS),
    ("outoctets", 7, "OutOctets", _EVENTS),
    ("inmcastoctets", 8, "InMcastOctets", _EVENTS),
    ("outmcastoctets", 9, "OutMcastOctets", _EVENTS),
    ("inbcastoctets", 10, "InBcastOctets", _EVENTS),
    ("outbcastoctets", 11, "OutBcastOctets", _EVENTS),
    ("csumerrors", 12, "InCsumErrors", _EVENTS),
    ("noectpkts", 13, "InNoECTPkts", _EVENTS),
    ("ect1pkts", 14, "InECT1Pkts", _EVENTS),
    ("ect0pkts", 15, "InECT0Pkts", _EVENTS),
    ("cepkts", 16, "InCEPkts", _EVENTS),
    ("reasmoverlaps", 168, "ReasmOverlaps", _EVENTS),
)

#: /proc/net/netstat "TcpExt:" -> network.tcp.SUFFIX (some columns left recent kernels:
#: their metrics have no value there)
TCPEXT: tuple[Row, ...] = (
    ("syncookiessent", 17, "SyncookiesSent", _EVENTS),
    ("syncookiesrecv", 18, "SyncookiesRecv", _EVENTS),
    ("syncookiesfailed", 19, "SyncookiesFailed", _EVENTS),
    ("embryonicrsts", 20, "EmbryonicRsts", _EVENTS),
    ("prunecalled", 21, "PruneCalled", _EVENTS),
    ("rcvpruned", 22, "RcvPruned", _EVENTS),
    ("ofopruned", 23, "OfoPruned", _EVENTS),
    ("outofwindowicmps", 24, "OutOfWindowIcmps", _EVENTS),
    ("lockdroppedicmps", 25, "LockDroppedIcmps", _EVENTS),
    ("arpfilter", 26, "ArpFilter", _EVENTS),
    ("timewaited", 27, "TW", _EVENTS),
    ("timewaitrecycled", 28, "TWRecycled", _EVENTS),
    ("timewaitkilled", 29, "TWKilled", _EVENTS),
    ("pawspassiverejected", 30, "PAWSPassive", _EVENTS),
    ("pawsactiverejected", 31, "PAWSActive", _EVENTS),
    ("pawsestabrejected", 32, "PAWSEstab", _EVENTS),
    ("delayedacks", 33, "DelayedACKs", _EVENTS),
    ("delayedacklocked", 34, "DelayedACKLocked", _EVENTS),
    ("delayedacklost", 35, "DelayedACKLost", _EVENTS),
    ("listenoverflows", 36, "ListenOverflows", _EVENTS),
    ("listendrops", 37, "ListenDrops", _EVENTS),
    ("prequeued", 38, "TCPPrequeued", _EVENTS),
    ("directcopyfrombacklog", 39, "TCPDirectCopyFromBacklog", _EVENTS),
    ("directcopyfromprequeue", 40, "TCPDirectCopyFromPrequeue", _EVENTS),
    ("prequeueddropped", 41, "TCPPrequeueDropped", _EVENTS),
    ("hphits", 42, "TCPHPHits", _EVENTS),
    ("hphitstouser", 43, "TCPHPHitsToUser", _EVENTS),
    ("pureacks", 44, "TCPPureAcks", _EVENTS),
    ("hpacks", 45, "TCPHPAcks", _EVENTS),
    ("renorecovery", 46, "TCPRenoRecovery", _EVENTS),
    ("sackrecovery", 47, "TCPSackRecovery", _EVENTS),
    ("sackreneging", 48, "TCPSACKReneging", _EVENTS),
    ("fackreorder", 49, "TCPFACKReorder", _EVENTS),
    ("sackreorder", 50, "TCPSACKReorder", _EVENTS),
    ("renoreorder", 51, "TCPRenoReorder", _EVENTS),
    ("tsreorder", 52, "TCPTSReorder", _EVENTS),
    ("fullundo", 53, "TCPFullUndo", _EVENTS),
    ("partialundo", 54, "TCPPartialUndo", _EVENTS),
    ("dsackundo", 55, "TCPDSACKUndo", _EVENTS),
    ("lossundo", 56, "TCPLossUndo", _EVENTS),
    ("lostretransmit", 57, "TCPLostRetransmit", _EVENTS),
    ("renofailures", 58, "TCPRenoFailures", _EVENTS),
    ("sackfailures", 59, "TCPSackFailures", _EVENTS),
    ("lossfailures", 60, "TCPLossFailures", _EVENTS),
    ("fastretrans", 61, "TCPFastRetrans", _EVENTS),
    ("forwardretrans", 62, "TCPForwardRetrans", _EVENTS),
    ("slowstartretrans", 63, "TCPSlowStartRetrans", _EVENTS),
    ("timeouts", 64, "TCPTimeouts", _EVENTS),
    ("lossprobes", 65, "TCPLossProbes", _EVENTS),
    ("lossproberecovery", 66, "TCPLossProbeRecovery", _EVENTS),
    ("renorecoveryfail", 67, "TCPRenoRecoveryFail", _EVENTS),
    ("sackrecoveryfail", 68, "TCPSackRecoveryFail", _EVENTS),
    ("schedulerfail", 69, "TCPSchedulerFailed", _EVENTS),
    ("rcvcollapsed", 70, "TCPRcvCollapsed", _EVENTS),
    ("dsackoldsent", 71, "TCPDSACKOldSent", _EVENTS),
    ("dsackofosent", 72, "TCPDSACKOfoSent", _EVENTS),
    ("dsackrecv", 73, "TCPDSACKRecv", _EVENTS),
    ("dsackoforecv", 74, "TCPDSACKOfoRecv", _EVENTS),
    ("abortondata", 75, "TCPAbortOnData", _EVENTS),
    ("abortonclose", 76, "TCPAbortOnClose", _EVENTS),
    ("abortonmemory", 77, "TCPAbortOnMemory", _EVENTS),
    ("abortontimeout", 78, "TCPAbortOnTimeout", _EVENTS),
    ("abortonlinger", 79, "TCPAbortOnLinger", _EVENTS),
    ("abortfailed", 80, "TCPAbortFailed", _EVENTS),
    ("memorypressures", 81, "TCPMemoryPressures", _EVENTS),
    ("sackdiscard", 82, "TCPSACKDiscard", _EVENTS),
    ("dsackignoredold", 83, "TCPDSACKIgnoredOld", _EVENTS),
    ("dsackignorednoundo", 84, "TCPDSACKIgnoredNoUndo", _EVENTS),
    ("spuriousrtos", 85, "TCPSpuriousRTOs", _EVENTS),
    ("md5notfound", 86, "TCPMD5NotFound", _EVENTS),
    ("md5unexpected", 87, "TCPMD5Unexpected", _EVENTS),
    ("sackshifted", 88, "TCPSackShifted", _EVENTS),
    ("sackmerged", 89, "TCPSackMerged", _EVENTS),
    ("sackshiftfallback", 90, "TCPSackShiftFallback", _EVENTS),
    ("backlogdrop", 91, "TCPBacklogDrop", _EVENTS),
    ("minttldrop", 92, "TCPMinTTLDrop", _EVENTS),
    ("deferacceptdrop", 93, "TCPDeferAcceptDrop", _EVENTS),
    ("iprpfilter", 94, "IPReversePathFilter", _EVENTS),
    ("timewaitoverflow", 95, "TCPTimeWaitOverflow", _EVENTS),
    ("reqqfulldocookies", 96, "TCPReqQFullDoCookies", _EVENTS),
    ("reqqfulldrop", 97, "TCPReqQFullDrop", _EVENTS),
    ("retransfail", 98, "TCPRetransFail", _EVENTS),
    ("rcvcoalesce", 99, "TCPRcvCoalesce", _EVENTS),
    ("ofoqueue", 100, "TCPOFOQueue", _EVENTS),
    ("ofodrop", 101, "TCPOFODrop", _EVENTS),
    ("ofomerge", 102, "TCPOFOMerge", _EVENTS),
    ("challengeack", 103, "TCPChallengeACK", _EVENTS),
    ("synchallenge", 104, "TCPSYNChallenge", _EVENTS),
    ("fastopenactive", 105, "TCPFastOpenActive", _EVENTS),
    ("fastopenactivefail", 106, "TCPFastOpenActiveFail", _EVENTS),
    ("fastopenpassive", 107, "TCPFastOpenPassive", _EVENTS),
    ("fastopenpassivefail", 108, "TCPFastOpenPassiveFail", _EVENTS),
    ("fastopenlistenoverflow", 109, "TCPFastOpenListenOverflow", _EVENTS),
    ("fastopencookiereqd", 110, "TCPFastOpenCookieReqd", _EVENTS),
    ("spuriousrtxhostqueues", 111, "TCPSpuriousRtxHostQueues", _EVENTS),
    ("busypollrxpackets", 112, "BusyPollRxPackets", _EVENTS),
    ("autocorking", 113, "TCPAutoCorking", _EVENTS),
    ("fromzerowindowadv", 114, "TCPFromZeroWindowAdv", _EVENTS),
    ("tozerowindowadv", 115, "TCPToZeroWindowAdv", _EVENTS),
    ("wantzerowindowadv", 116, "TCPWantZeroWindowAdv", _EVENTS),
    ("synretrans", 117, "TCPSynRetrans", _EVENTS),
    ("origdatasent", 118, "TCPOrigDataSent", _EVENTS),
    ("tcpbacklogcoalesce", 132, "TCPBacklogCoalesce", _EVENTS),
    ("tcpmemorypressureschrono", 133, "TCPMemoryPressuresChrono", _CHRONO),
    ("tcpmd5failure", 134, "TCPMD5Failure", _EVENTS),
    ("pfmemallocdrop", 135, "PFMemallocDrop", _EVENTS),
    ("tcpfastopenactivefail", 136, "TCPFastOpenActiveFail", _EVENTS),
    ("tcpfastopenblackhole", 137, "TCPFastOpenBlackhole", _EVENTS),
    ("tcphystarttraindetect", 141, "TCPHystartTrainDetect", _EVENTS),
    ("tcphystarttraincwnd", 142, "TCPHystartTrainCwnd", _EVENTS),
    ("tcphystartdelaydetect", 143, "TCPHystartDelayDetect", _EVENTS),
    ("tcphystartdelaycwnd", 144, "TCPHystartDelayCwnd", _EVENTS),
    ("tcpackskippedsynrecv", 145, "TCPACKSkippedSynRecv", _EVENTS),
    ("tcpackskippedpaws", 146, "TCPACKSkippedPAWS", _EVENTS),
    ("tcpackskippedseq", 147, "TCPACKSkippedSeq", _EVENTS),
    ("tcpackskippedfinwait2", 148, "TCPACKSkippedFinWait2", _EVENTS),
    ("tcpackskippedtimewait", 149, "TCPACKSkippedTimeWait", _EVENTS),
    ("tcpackskippedchallenge", 150, "TCPACKSkippedChallenge", _EVENTS),
    ("tcpwinprobe", 151, "TCPWinProbe", _EVENTS),
    ("tcpkeepalive", 152, "TCPKeepAlive", _EVENTS),
    ("tcpmtupfail", 153, "TCPMTUPFail", _EVENTS),
    ("tcpmtupsuccess", 154, "TCPMTUPSuccess", _EVENTS),
    ("tcpdelivered", 155, "TCPDelivered", _EVENTS),
    ("tcpdeliveredce", 156, "TCPDeliveredCE", _EVENTS),
    ("tcpackcompressed", 157, "TCPAckCompressed", _EVENTS),
    ("tcpzerowindowdrop", 158, "TCPZeroWindowDrop", _EVENTS),
    ("tcprcvqdrop", 159, "TCPRcvQDrop", _EVENTS),
    ("tcpwqueuetoobig", 160, "TCPWqueueTooBig", _EVENTS),
    ("tcpfastopenpassivealtkey", 161, "TCPFastOpenPassiveAltKey", _EVENTS),
    ("tcptimeoutrehash", 162, "TcpTimeoutRehash", _EVENTS),
    ("tcpduplicatedatarehash", 163, "TcpDuplicateDataRehash", _EVENTS),
    ("tcpdsackrecvsegs", 164, "TCPDSACKRecvSegs", _EVENTS),
    ("tcpdsackignoreddubious", 165, "TCPDSACKIgnoredDubious", _EVENTS),
    ("tcpmigratereqsuccess", 166, "TCPMigrateReqSuccess", _EVENTS),
    ("tcpmigratereqfailure", 167, "TCPMigrateReqFailure", _EVENTS),
    ("tcploss", 189, "TCPLoss", _EVENTS),
)

#: /proc/net/netstat "MPTcpExt:" -> network.mptcp.SUFFIX (only with CONFIG_MPTCP)
MPTCPEXT: tuple[Row, ...] = (
    ("mpcapablesynrx", 119, "MPCapableSYNRX", _EVENTS),
    ("mpcapableackrx", 120, "MPCapableACKRX", _EVENTS),
    ("mpcapablefallbackack", 121, "MPCapableFallbackACK", _EVENTS),
    ("mpcapablefallbacksynack", 122, "MPCapableFallbackSYNACK", _EVENTS),
    ("mptcpretrans", 123, "MPTCPRetrans", _EVENTS),
    ("mpjoinnotokenfound", 124, "MPJoinNoTokenFound", _EVENTS),
    ("mpjoinsynrx", 125, "MPJoinSynRx", _EVENTS),
    ("mpjoinsynackrx", 126, "MPJoinSynAckRx", _EVENTS),
    ("mpjoinsynackhmacfailure", 127, "MPJoinSynAckHMacFailure", _EVENTS),
    ("mpjoinackrx", 128, "MPJoinAckRx", _EVENTS),
    ("mpjoinackhmacfailure", 129, "MPJoinAckHMacFailure", _EVENTS),
    ("dssnotmatching", 130, "DSSNotMatching", _EVENTS),
    ("infinitemaprx", 131, "InfiniteMapRx", _EVENTS),
    ("mpcapablesyntx", 138, "MPCapableSYNTX", _EVENTS),
    ("mpcapablesynackrx", 139, "MPCapableSYNACKRX", _EVENTS),
    ("mpfallbacktokeninit", 140, "MPFallbackTokenInit", _EVENTS),
    ("dssnomatchtcp", 169, "DSSNoMatchTCP", _EVENTS),
    ("datacsumerr", 170, "DataCsumErr", _EVENTS),
    ("ofoqueuetail", 171, "OFOQueueTail", _EVENTS),
    ("ofoqueue", 172, "OFOQueue", _EVENTS),
    ("ofomerge", 173, "OFOMerge", _EVENTS),
    ("nodssinwindow", 174, "NoDSSInWindow", _EVENTS),
    ("duplicatedata", 175, "DuplicateData", _EVENTS),
    ("addaddr", 176, "AddAddr", _EVENTS),
    ("echoadd", 177, "EchoAdd", _EVENTS),
    ("portadd", 178, "PortAdd", _EVENTS),
    ("mpjoinportsynrx", 179, "MPJoinPortSynRx", _EVENTS),
    ("mpjoinportsynackrx", 180, "MPJoinPortSynAckRx", _EVENTS),
    ("mpjoinportackrx", 181, "MPJoinPortAckRx", _EVENTS),
    ("mismatchportsynrx", 182, "MismatchPortSynRx", _EVENTS),
    ("mismatchportackrx", 183, "MismatchPortAckRx", _EVENTS),
    ("rmaddr", 184, "RmAddr", _EVENTS),
    ("rmsubflow", 185, "RmSubflow", _EVENTS),
    ("mppriotx", 186, "MPPrioTx", _EVENTS),
    ("mppriorx", 187, "MPPrioRx", _EVENTS),
    ("rcvpruned", 188, "RcvPruned", _EVENTS),
    ("mpfailtx", 190, "MPFailTx", _EVENTS),
    ("mpfailrx", 191, "MPFailRx", _EVENTS),
    ("subflowstale", 192, "SubflowStale", _EVENTS),
    ("subflowrecover", 193, "SubflowRecover", _EVENTS),
    ("addaddrdrop", 194, "AddAddrDrop", _EVENTS),
    ("rmaddrdrop", 195, "RmAddrDrop", _EVENTS),
    ("mpfastclosetx", 196, "MPFastcloseTx", _EVENTS),
    ("mpfastcloserx", 197, "MPFastcloseRx", _EVENTS),
    ("mprsttx", 198, "MPRstTx", _EVENTS),
    ("mprstrx", 199, "MPRstRx", _EVENTS),
    ("infinitemaptx", 200, "InfiniteMapTx", _EVENTS),
    ("sndwndshared", 201, "SndWndShared", _EVENTS),
    ("rcvwndshared", 202, "RcvWndShared", _EVENTS),
    ("rcvwndconflictupdate", 203, "RcvWndConflictUpdate", _EVENTS),
    ("rcvwndconflict", 204, "RcvWndConflict", _EVENTS),
)


@dataclass(frozen=True, slots=True)
class Section:
    """One section of a file: its line tag, the names its metrics start with, its rows."""

    tag: bytes
    prefix: str
    rows: tuple[Row, ...]


#: /proc/net/snmp's sections with named columns (IcmpMsg's numbered ones are apart).
SNMP_SECTIONS: tuple[Section, ...] = (
    Section(b"Ip:", "network.ip.", IP),
    Section(b"Icmp:", "network.icmp.", ICMP),
    Section(b"Tcp:", "network.tcp.", TCP),
    Section(b"Udp:", "network.udp.", UDP),
    Section(b"UdpLite:", "network.udplite.", UDPLITE),
)
ICMPMSG_SECTION = Section(b"IcmpMsg:", "network.icmpmsg.", ICMPMSG)
#: /proc/net/netstat's sections.
NETSTAT_SECTIONS: tuple[Section, ...] = (
    Section(b"IpExt:", "network.ip.", IPEXT),
    Section(b"TcpExt:", "network.tcp.", TCPEXT),
    Section(b"MPTcpExt:", "network.mptcp.", MPTCPEXT),
)


def _metrics(cluster: int, path: str, sections: Iterable[Section]) -> Iterator[MetricInfo]:
    """The MetricInfo records of SECTIONS of the file at PATH, in pmdalinux's CLUSTER."""
    for section in sections:
        tag = section.tag.decode()
        indom = ICMPMSG_INDOM if section is ICMPMSG_SECTION else None
        for suffix, item, column, (sem, units) in section.rows:
            yield MetricInfo(
                section.prefix + suffix,
                cluster,
                item,
                U64,
                indom,
                sem,
                units,
                source=f"{path} {tag} {column}" + ("<type>" if indom is not None else ""),
            )


#: This family's metrics, as pmdalinux declares them.
METRICS: tuple[MetricInfo, ...] = (
    *_metrics(SNMP_CLUSTER, "/proc/net/snmp", (*SNMP_SECTIONS, ICMPMSG_SECTION)),
    *_metrics(NETSTAT_CLUSTER, "/proc/net/netstat", NETSTAT_SECTIONS),
)

#: What each singular metric reads: {metric name: (section tag, column)}.
SNMP_SOURCES: dict[str, tuple[bytes, bytes]] = {
    s.prefix + row[0]: (s.tag, row[2].encode()) for s in SNMP_SECTIONS for row in s.rows
}
NETSTAT_SOURCES: dict[str, tuple[bytes, bytes]] = {
    s.prefix + row[0]: (s.tag, row[2].encode()) for s in NETSTAT_SECTIONS for row in s.rows
}
#: The same, as (metric name, section tag, column) rows, by file.
_ROWS: dict[str, tuple[tuple[str, bytes, bytes], ...]] = {
    file: tuple((name, tag, column) for name, (tag, column) in sources.items())
    for file, sources in (("snmp", SNMP_SOURCES), ("netstat", NETSTAT_SOURCES))
}
#: The names each refresh serves.
SNMP_NAMES: frozenset[str] = frozenset(m.name for m in METRICS if m.cluster == SNMP_CLUSTER)
NETSTAT_NAMES: frozenset[str] = frozenset(NETSTAT_SOURCES)
#: The IcmpMsg metrics: {metric name: its index in `ICMPMSG` and in `Snmp.icmpmsg`}.
ICMPMSG_SOURCES: dict[str, int] = {
    ICMPMSG_SECTION.prefix + row[0]: n for n, row in enumerate(ICMPMSG)
}
#: The IcmpMsg column prefixes, in `ICMPMSG` order.
_ICMPMSG_PREFIXES: tuple[bytes, ...] = tuple(row[2].encode() for row in ICMPMSG)

# -- parsing, as C's strtok/strtoull/sscanf see the text --------------------------------

_SPACE = b" \t\n\v\f\r"
#: The blanks other than the space and the newline, as one-byte strings.
_OTHER_BLANKS = (b"\t", b"\v", b"\f", b"\r")
#: A parsed value: an int, or plain decimal digits (below 2**64) still to convert with int.
Number = int | bytes
#: A parsed section: its columns and their values, in the file's order.
Table = tuple[list[bytes], list[Number]]


def _words(line: bytes) -> list[bytes]:
    """LINE's words, split at spaces only (as strtok(" \\n") splits a line read by fgets)."""
    return [word for word in line.split(b" ") if word]


def _line_pairs(data: bytes) -> Iterator[tuple[bytes, list[bytes], list[bytes]]]:
    """(value line, header's columns, values) of each pair of lines of DATA: a header line
    then its value line; a lone last line is dropped.  The first word of each line, the
    section's tag, is left out of the columns and of the values."""
    lines = data.split(b"\n")
    if lines and not lines[-1]:
        lines.pop()
    # with no blank but the space, bytes.split (faster) splits as strtok(" \n") does
    words = bytes.split if not any(c in data for c in _OTHER_BLANKS) else _words
    for header, line in zip(lines[0::2], lines[1::2], strict=False):
        yield line, words(header)[1:], words(line)[1:]


def _named(
    columns: list[bytes], values: list[bytes], limit: int, tag: bytes, into: dict[bytes, Table]
) -> None:
    """Store a section's values as the Table of TAG in INTO: the first LIMIT columns paired
    with the values in place (a section given twice merges, the later values winning).

    Plain digits below 2**64 are kept as they are (`int` of them is the value, made when
    asked for), anything else as the number strtoull makes of it.
    """
    n = min(len(columns), len(values), limit)
    if n < len(columns):
        columns = columns[:n]
    if n < len(values):
        values = values[:n]
    kept: list[Number] = values  # type: ignore[assignment]
    if not (b"".join(values).isdigit() and max(map(len, values)) < 20):
        kept = [strtoul_value(value) for value in values]  # (a "-1", say: Tcp's MaxConn)
    earlier = into.get(tag)
    if earlier is not None:
        merged = dict(zip(*earlier, strict=True))
        merged.update(zip(columns, kept, strict=True))
        columns, kept = list(merged), list(merged.values())
    into[tag] = (columns, kept)


def _numbered(columns: list[bytes], values: list[bytes], into: list[dict[int, int]]) -> None:
    """Store IcmpMsg's values by direction (`ICMPMSG` order) and ICMP type, in INTO.

    pmdalinux matches each column with sscanf("InType%u"), then "OutType%u": the number
    may have a sign and leading white space, is cut to 32 bits, and must be below 256.
    """
    for column, value in zip(columns, values, strict=False):
        for n, prefix in enumerate(_ICMPMSG_PREFIXES):
            if not column.startswith(prefix):
                continue
            digits = column[len(prefix) :]
            number = int(digits) if digits.isdigit() and len(digits) < 10 else None
            if number is None:
                number = scan_int(digits, 32, False)  # %u: strtoul, then 32 bits
            if number is None or number >= ICMPMSG_TYPES:
                continue
            into[n][number] = strtoul_value(value)
            break


@dataclass(frozen=True, slots=True)
class Snmp:
    """/proc/net/snmp, parsed: {section tag: Table} for the named sections, and IcmpMsg's
    values as [{ICMP type: value}] in `ICMPMSG` order (in, out)."""

    sections: dict[bytes, Table]
    icmpmsg: list[dict[int, int]]


def parse_snmp(data: bytes) -> Snmp:
    """The sections of /proc/net/snmp's DATA that pmdalinux reads (others are ignored)."""
    sections: dict[bytes, Table] = {}
    icmpmsg: list[dict[int, int]] = [{} for _ in ICMPMSG]
    for line, columns, values in _line_pairs(data):
        if line.startswith(ICMPMSG_SECTION.tag):
            _numbered(columns[:SNMP_MAX_COLUMNS], values, icmpmsg)
            continue
        for section in SNMP_SECTIONS:
            if line.startswith(section.tag):
                _named(columns, values, SNMP_MAX_COLUMNS, section.tag, sections)
                break
    return Snmp(sections, icmpmsg)


def parse_netstat(data: bytes) -> dict[bytes, Table]:
    """{section tag: Table} for the sections of /proc/net/netstat's DATA that pmdalinux
    reads (others are ignored)."""
    sections: dict[bytes, Table] = {}
    for line, columns, values in _line_pairs(data):
        for section in NETSTAT_SECTIONS:
            if line.startswith(section.tag):
                _named(columns, values, NETSTAT_MAX_COLUMNS, section.tag, sections)
                break
    return sections


@functools.lru_cache(maxsize=8)
def _plan(
    file: str, names: frozenset[str]
) -> tuple[tuple[bytes, tuple[str, ...], tuple[bytes, ...]], ...]:
    """What to look up for NAMES among FILE's `_ROWS`: (section tag, names, their columns)
    per section, worked out once for each set of names asked for."""
    by_tag: dict[bytes, list[tuple[str, bytes]]] = {}
    for name, tag, column in _ROWS[file]:
        if name in names:
            by_tag.setdefault(tag, []).append((name, column))
    return tuple(
        (tag, tuple(n for n, _ in rows), tuple(c for _, c in rows)) for tag, rows in by_tag.items()
    )


#: The last way found to pick the asked columns of a section, by (file, tag): (the Table's
#: columns, the names asked, the names found, a getter of their values from the Table's).
_picks: dict[tuple[str, bytes], tuple[list[bytes], tuple[str, ...], tuple[str, ...], Any]] = {}


def _listed(places: list[int]) -> Any:
    """A getter of the values at PLACES, as a list (itemgetter wants two places or more)."""
    return lambda values: [values[n] for n in places]


def _pick(
    file: str, tag: bytes, names: tuple[str, ...], columns: tuple[bytes, ...], table: Table
) -> tuple[tuple[str, ...], Any]:
    """(the NAMES whose COLUMNS the TABLE has, a getter of their values in that order),
    worked out again only when the section's columns or the names asked change."""
    known = _picks.get((file, tag))
    if known is not None and known[1] is names and known[0] == table[0]:
        return known[2], known[3]
    place = {column: n for n, column in enumerate(table[0])}  # a repeated column: its last
    found = [
        (name, place[column])
        for name, column in zip(names, columns, strict=True)
        if column in place
    ]
    places = [n for _, n in found]
    getter: Any = _listed(places) if len(places) < 2 else operator.itemgetter(*places)
    _picks[file, tag] = (table[0], names, tuple(name for name, _ in found), getter)
    return _picks[file, tag][2], getter


def _singular(
    file: str,
    sections: dict[bytes, Table],
    wanted: Iterable[str],
) -> dict[str, int]:
    """The values of the WANTED singular metrics of FILE ("snmp" or "netstat") from its
    parsed SECTIONS: none for a column that is missing or holds the "no value" mark (but
    for `ALWAYS`, which always has one)."""
    if not isinstance(wanted, frozenset):
        wanted = frozenset(wanted)
    found: dict[str, int] = {}
    for tag, names, columns in _plan(file, wanted):
        table = sections.get(tag)
        if table is not None:
            present, getter = _pick(file, tag, names, columns, table)
            found.update(zip(present, map(int, getter(table[1])), strict=True))
    if MISSING in found.values():
        found = {name: v for name, v in found.items() if v != MISSING or name == ALWAYS}
    if ALWAYS in wanted and ALWAYS not in found:
        found[ALWAYS] = MISSING
    return found


def snmp_values(snmp: Snmp | None, wanted: Iterable[str]) -> dict[str, Any]:
    """Cluster 14's values for the WANTED names (others are skipped) from parsed
    /proc/net/snmp (None if unreadable): {name: value}, or {name: {ICMP type: value}}."""
    names = SNMP_NAMES.intersection(wanted)
    sections = {} if snmp is None else snmp.sections
    found: dict[str, Any] = _singular("snmp", sections, names - ICMPMSG_SOURCES.keys())
    if snmp is not None:
        for name in names & ICMPMSG_SOURCES.keys():
            by_type = snmp.icmpmsg[ICMPMSG_SOURCES[name]]
            found[name] = {t: v for t, v in sorted(by_type.items()) if v != MISSING}
    return found


def netstat_values(
    sections: dict[bytes, dict[bytes, Number]] | None, wanted: Iterable[str]
) -> dict[str, int]:
    """Cluster 53's values for the WANTED names (others are skipped) from parsed
    /proc/net/netstat (None if unreadable)."""
    return _singular("netstat", sections or {}, NETSTAT_NAMES.intersection(wanted))


class NetSnmp(LinuxBase):
    """The IPv4 SNMP and netstat counters: the ICMP-type instance domain and two refreshes."""

    #: ICMPMSG_INDOM: one instance per ICMP type, "Type0" ... "Type255", always all there.
    netsnmp_icmpmsg_indom = InDom(ICMPMSG_INDOM, {n: f"Type{n}" for n in range(ICMPMSG_TYPES)})

    @refresh(SNMP_CLUSTER)
    def _netsnmp_refresh_snmp(self) -> dict[str, Any]:
        """The asked-for metrics of /proc/net/snmp, read once for this fetch."""
        return snmp_values(self._read_once("/proc/net/snmp", parse_snmp), self._wanted)

    @refresh(NETSTAT_CLUSTER)
    def _netsnmp_refresh_netstat(self) -> dict[str, Any]:
        """The asked-for metrics of /proc/net/netstat, read once for this fetch."""
        return netstat_values(self._read_once("/proc/net/netstat", parse_netstat), self._wanted)
