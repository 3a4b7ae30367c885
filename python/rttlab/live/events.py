"""The events of ``bpf/rtt_events.bpf.c`` as Python values (the C struct's layout is mirrored
here: keep both in step). Meanings of every field: docs/live.md."""

from __future__ import annotations

import ipaddress
import socket
import struct
from dataclasses import dataclass

#: enum of include/uapi/linux/bpf.h (BPF_SOCK_OPS_*_CB) for the callbacks the program reports.
ACTIVE_ESTABLISHED, PASSIVE_ESTABLISHED, RTO, RETRANS, STATE, RTT = 4, 5, 8, 9, 10, 12
#: rttlab's own: one RTT sample per ACK that gave one (the tcp_probe program, RTTLAB_ACK_SAMPLE).
ACK_SAMPLE = 100
OP_NAMES = {
    ACTIVE_ESTABLISHED: "established",
    PASSIVE_ESTABLISHED: "established",
    RTO: "rto",
    RETRANS: "retrans",
    STATE: "state",
    RTT: "rtt_cb",
    ACK_SAMPLE: "sample",
}
#: include/net/tcp_states.h
TCP_STATES = [
    "?",
    "ESTABLISHED",
    "SYN_SENT",
    "SYN_RECV",
    "FIN_WAIT1",
    "FIN_WAIT2",
    "TIME_WAIT",
    "CLOSE",
    "CLOSE_WAIT",
    "LAST_ACK",
    "LISTEN",
    "CLOSING",
    "NEW_SYN_RECV",
    "BOUND_INACTIVE",
]
TCP_CLOSE = 7

_LAYOUT = struct.Struct("<QQII4I4III3I16I")
#: sizeof(struct rttlab_event): the packed fields, padded to 8 bytes.
SIZE = (_LAYOUT.size + 7) // 8 * 8


@dataclass(frozen=True)
class Event:
    ts_ns: int  # CLOCK_MONOTONIC
    cookie: int  # the socket's cookie: the connection's key
    op: int
    local: str  # "addr:port"
    remote: str
    args: tuple[int, int, int]
    srtt_us8: int  # tp->srtt_us (SRTT << 3, µs)
    mdev_us4: int  # tp->mdev_us (<< 2)
    rttvar_us4: int  # tp->rttvar_us (<< 2)
    rto_jiffies: int
    rtt_min_us: int
    snd_una: int
    snd_nxt: int
    snd_cwnd: int
    packets_out: int
    retrans_out: int
    total_retrans: int
    state: int
    backoff: int
    retransmits: int
    timestamps: (
        bool | None
    )  # tp->rx_opt.tstamp_ok; None where the kernel's tcp_sock was not readable

    @property
    def name(self) -> str:
        return OP_NAMES.get(self.op, str(self.op))

    @property
    def srtt_s(self) -> float:
        return self.srtt_us8 / 8e6


def _addr(family: int, words: tuple[int, ...], port: int) -> str:
    if family == socket.AF_INET6:
        a = ipaddress.IPv6Address(struct.pack("<4I", *words))
        if a.ipv4_mapped:
            return f"{a.ipv4_mapped}:{port}"
        return f"[{a}]:{port}"
    return f"{ipaddress.IPv4Address(struct.pack('<I', words[0]))}:{port}"


def parse(data: bytes) -> Event:
    if len(data) < _LAYOUT.size:
        raise ValueError(
            f"a {len(data)}-byte event is shorter than struct rttlab_event ({_LAYOUT.size})"
        )
    v = _LAYOUT.unpack_from(data)
    ts, cookie, op, family = v[0:4]
    lip, rip = v[4:8], v[8:12]
    lport, rport = v[12], v[13]
    args = v[14:17]
    (
        srtt,
        mdev,
        rttvar,
        rto,
        rtt_min,
        una,
        nxt,
        cwnd,
        pout,
        rout,
        tret,
        state,
        backoff,
        retransmits,
        flags,
        _pad,
    ) = v[17:33]
    return Event(
        ts_ns=ts,
        cookie=cookie,
        op=op,
        local=_addr(family, lip, lport),
        remote=_addr(family, rip, rport),
        args=args,
        srtt_us8=srtt,
        mdev_us4=mdev,
        rttvar_us4=rttvar,
        rto_jiffies=rto,
        rtt_min_us=rtt_min,
        snd_una=una,
        snd_nxt=nxt,
        snd_cwnd=cwnd,
        packets_out=pout,
        retrans_out=rout,
        total_retrans=tret,
        state=state,
        backoff=backoff,
        retransmits=retransmits,
        timestamps=bool(flags & 1) if flags & 2 else None,
    )


def pack(e: Event, family: int = socket.AF_INET) -> bytes:
    """The bytes the kernel would send for ``e`` (IPv4 only): for tests of the userspace side."""

    def ip4(s: str) -> tuple[int, int]:
        host, port = s.rsplit(":", 1)
        return struct.unpack("<I", ipaddress.IPv4Address(host).packed)[0], int(port)

    (la, lp), (ra, rp) = ip4(e.local), ip4(e.remote)
    flags = 2 | (1 if e.timestamps else 0) if e.timestamps is not None else 0
    body = _LAYOUT.pack(
        e.ts_ns,
        e.cookie,
        e.op,
        family,
        la,
        0,
        0,
        0,
        ra,
        0,
        0,
        0,
        lp,
        rp,
        *e.args,
        e.srtt_us8,
        e.mdev_us4,
        e.rttvar_us4,
        e.rto_jiffies,
        e.rtt_min_us,
        e.snd_una,
        e.snd_nxt,
        e.snd_cwnd,
        e.packets_out,
        e.retrans_out,
        e.total_retrans,
        e.state,
        e.backoff,
        e.retransmits,
        flags,
        0,
    )
    return body + bytes(SIZE - len(body))
