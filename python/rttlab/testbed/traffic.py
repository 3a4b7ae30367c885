"""The testbed's traffic generator: one bulk TCP transfer per flow between two namespaces, with
the kernel's own TCP. Run inside a namespace (``ip netns exec NS python -m rttlab.testbed.traffic
recv|send ...``); prints one JSON line with what the application saw. Standard library only, so
it starts in a few tens of milliseconds.

Times are ``CLOCK_MONOTONIC`` nanoseconds (``time.monotonic_ns``), which namespaces share with
the emulator: ``--origin`` is the emulator's time 0, and starts/stops are scenario times on it.
"""

from __future__ import annotations

import argparse
import json
import select
import socket
import struct
import sys
import time

CHUNK = 1 << 16


def _sleep_until(t_ns: int) -> None:
    while (left := t_ns - time.monotonic_ns()) > 0:
        time.sleep(min(left / 1e9, 0.05))


#: TCP_CC_INFO (include/uapi/linux/tcp.h): the congestion control's own state; BBR's is
#: struct tcp_bbr_info (u32 bbr_bw_lo, bbr_bw_hi in bytes/s, bbr_min_rtt µs, pacing and cwnd gains << 8).
TCP_CC_INFO = 26


def tcp_info(sock: socket.socket) -> dict[str, int]:
    """A few fields of Linux's struct tcp_info (include/uapi/linux/tcp.h): 8 bytes of u8 fields,
    then u32s from tcpi_rto; tcpi_total_retrans is the 24th u32; then (kernels ≥ 4.9) u64
    tcpi_pacing_rate at byte 104, u32 tcpi_min_rtt at 148, u64 tcpi_delivery_rate at 160. For BBR
    also its model (TCP_CC_INFO): BtlBw, RTprop and gains, which no tcp_info field holds."""
    raw = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 168)
    ca_state = raw[1]
    u = struct.unpack_from("24I", raw, 8)
    out = {
        "ca_state": ca_state,
        "rto_us": u[0],
        "snd_mss": u[2],
        "rtt_us": u[15],
        "rttvar_us": u[16],
        "snd_ssthresh": u[17],
        "snd_cwnd": u[18],
        "total_retrans": u[23],
    }
    if len(raw) >= 168:
        out["pacing_rate_Bps"] = struct.unpack_from("Q", raw, 104)[0]
        out["min_rtt_us"] = struct.unpack_from("I", raw, 148)[0]
        out["delivery_rate_Bps"] = struct.unpack_from("Q", raw, 160)[0]
    try:
        if sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(b"\0") == b"bbr":
            lo, hi, min_rtt, pacing_gain, cwnd_gain = struct.unpack(
                "5I", sock.getsockopt(socket.IPPROTO_TCP, TCP_CC_INFO, 20)
            )
            out |= {
                "bbr_bw_Bps": hi << 32 | lo,
                "bbr_min_rtt_us": min_rtt,
                "bbr_pacing_gain": pacing_gain,
                "bbr_cwnd_gain": cwnd_gain,
            }
    except (OSError, struct.error):
        pass
    return out


def _handshake(a: argparse.Namespace) -> None:
    """Say ready (imports done, socket made), then read the origin the orchestrator starts the
    emulator's clock at: process start-up (a few hundred ms on a loaded machine) never delays
    a flow's start."""
    print("ready", flush=True)
    a.origin = int(sys.stdin.readline())


def recv(a: argparse.Namespace) -> dict:
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((a.bind, a.port))
    srv.listen(1)
    _handshake(a)
    end = a.origin + a.end
    measure_from = a.origin + a.measure_from
    out = {
        "connected": False,
        "bytes": 0,
        "bytes_measured": 0,
        "first_byte_ns": None,
        "last_byte_ns": None,
    }
    srv.settimeout(max(0.001, (end - time.monotonic_ns()) / 1e9))
    try:
        conn, _ = srv.accept()
    except (TimeoutError, OSError):
        return out
    out["connected"] = True
    buf = bytearray(CHUNK)
    with conn:
        while (left := end - time.monotonic_ns()) > 0:
            conn.settimeout(left / 1e9)
            try:
                n = conn.recv_into(buf)
            except (TimeoutError, OSError):
                break
            if n == 0:
                break
            if a.quickack:
                # The scenario has no delayed ACKs: ask Linux to ACK at once (it re-enters
                # delayed-ACK mode by itself, so it is asked again after every read).
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)
            t = time.monotonic_ns()
            out["bytes"] += n
            if t >= measure_from:
                out["bytes_measured"] += n
            if out["first_byte_ns"] is None:
                out["first_byte_ns"] = t - a.origin
            out["last_byte_ns"] = t - a.origin
        # The run is over: drain without counting until the sender, stopping at the same time,
        # closes (so it never writes into a closed socket), for at most a second in all — a
        # per-read timeout never ends on a slow link where a segment still arrives every few
        # hundred ms (SpecTCP's 64 kb/s link drains a 30-packet queue for 4 s), and the report
        # must be out before the run collects it (run._collect: 3 s).
        drain_end = time.monotonic_ns() + 1_000_000_000
        try:
            while (left := drain_end - time.monotonic_ns()) > 0:
                conn.settimeout(left / 1e9)
                if not conn.recv_into(buf):
                    break
        except (TimeoutError, OSError):
            pass
    return out


def send(a: argparse.Namespace) -> dict:
    out: dict = {
        "connected": False,
        "bytes": 0,
        "error": None,
        "tcp_info": None,
        "connect_ns": None,
    }
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, a.cc.encode())
    except OSError as e:
        out["error"] = f"congestion control {a.cc!r}: {e.strerror}"
    _handshake(a)
    if out["error"]:
        return out
    _sleep_until(a.origin + a.start)
    end = a.origin + (a.stop if a.stop is not None else a.end)
    s.settimeout(max(0.001, (end - time.monotonic_ns()) / 1e9))
    try:
        s.connect((a.dst, a.port))
    except (TimeoutError, OSError) as e:
        out["error"] = f"connect to {a.dst}:{a.port}: {getattr(e, 'strerror', None) or e}"
        return out
    out["connected"] = True
    out["connect_ns"] = time.monotonic_ns() - a.origin
    out["local"] = list(s.getsockname())  # the flow's 4-tuple with --dst/--port (for BPF probes)
    data = bytes(CHUNK)
    left_bytes = a.bytes
    if a.writes:
        with s:
            _send_schedule(s, a, end, out, data)
            try:
                out["tcp_info"] = tcp_info(s)
            except OSError:
                pass
        return out
    with s:
        while (left := end - time.monotonic_ns()) > 0 and (left_bytes is None or left_bytes > 0):
            s.settimeout(left / 1e9)
            n = CHUNK if left_bytes is None else min(CHUNK, left_bytes)
            try:
                sent = s.send(data[:n])
            except (TimeoutError, BlockingIOError):
                continue
            except OSError as e:
                out["error"] = f"send: {e.strerror}"
                break
            out["bytes"] += sent
            if left_bytes is not None:
                left_bytes -= sent
        try:
            out["tcp_info"] = tcp_info(s)
        except OSError:
            pass
    return out


def _send_schedule(
    s: socket.socket, a: argparse.Namespace, end: int, out: dict, data: bytes
) -> None:
    """An on/off application: write each (time, bytes) of the schedule at its time, open loop —
    what the socket does not take waits in the application (``pending``), as the simulator's
    source hands bytes to its sender whatever the window (src/sim/app.rs)."""
    with open(a.writes) as fh:
        writes = json.load(fh)
    s.setblocking(False)
    pending, i = 0, 0
    out["offered"] = 0
    while (now := time.monotonic_ns()) < end:
        while i < len(writes) and a.origin + writes[i][0] <= now:
            pending += writes[i][1]
            out["offered"] += writes[i][1]
            i += 1
        if pending:
            try:
                n = s.send(data[: min(pending, CHUNK)])
                pending -= n
                out["bytes"] += n
                continue
            except BlockingIOError:
                pass
            except OSError as e:
                out["error"] = f"send: {e.strerror}"
                return
        due = a.origin + writes[i][0] if i < len(writes) else end
        select.select([], [s] if pending else [], [], max(0, min(due, end) - now) / 1e9)
    out["pending"] = pending


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m rttlab.testbed.traffic")
    sub = p.add_subparsers(dest="role", required=True)
    for role in ("recv", "send"):
        q = sub.add_parser(role)
        q.add_argument("--port", type=int, required=True)
        q.add_argument("--end", type=int, required=True, help="scenario time (ns) the run ends")
    r = sub.choices["recv"]
    r.add_argument("--bind", required=True)
    r.add_argument("--measure-from", type=int, default=0)
    r.add_argument("--quickack", action="store_true")
    s = sub.choices["send"]
    s.add_argument("--dst", required=True)
    s.add_argument("--cc", default="reno")
    s.add_argument("--start", type=int, default=0)
    s.add_argument("--stop", type=int, default=None)
    s.add_argument("--bytes", type=int, default=None)
    s.add_argument(
        "--writes",
        default=None,
        help="JSON file of [time ns, bytes] writes (an on/off application)",
    )
    a = p.parse_args(argv)
    out = recv(a) if a.role == "recv" else send(a)
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    sys.exit(main())
