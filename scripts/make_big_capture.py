#!/usr/bin/env python3
"""Build a large benchmark capture from the development captures in ../shared/captures.

Every classic-pcap Ethernet capture is replicated; each replica gets its own IP addresses (two
address bytes rewritten per replica, so replicas are distinct connections) and a small time
offset, and `--concurrent` replicas at a time are merged in time order, so the result has many
live connections at once, like a real link. Checksums are not fixed (no analyser here checks
them). Output is a microsecond pcap, Ethernet link type.

    python3 scripts/make_big_capture.py [--size-gb 1.0] [--out /tmp/rttlab-big.pcap]

Only the standard library is used. The output belongs in /tmp, never in the repository.
"""

from __future__ import annotations

import argparse
import heapq
import os
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = ROOT.parent / "shared" / "captures"


def read_pcap(path: Path):
    """(ts_us, frame, original length, (src addr offset, dst addr offset, addr len)) per TCP/IP
    frame. The original length is kept: header-only captures (snaplen 54) need it, or readers
    that trust it (tshark) see every segment as empty."""
    data = path.read_bytes()
    magic = data[:4]
    if magic == b"\xd4\xc3\xb2\xa1":
        endian, nanos = "<", False
    elif magic == b"\xa1\xb2\xc3\xd4":
        endian, nanos = ">", False
    elif magic == b"\x4d\x3c\xb2\xa1":
        endian, nanos = "<", True
    elif magic == b"\xa1\xb2\x3c\x4d":
        endian, nanos = ">", True
    else:
        return None
    (linktype,) = struct.unpack(endian + "I", data[20:24])
    if linktype != 1:
        return None
    out = []
    off = 24
    rec = struct.Struct(endian + "IIII")
    while off + 16 <= len(data):
        sec, frac, caplen, orig = rec.unpack_from(data, off)
        frame = data[off + 16 : off + 16 + caplen]
        off += 16 + caplen
        if len(frame) < caplen:
            break
        ts = sec * 1_000_000 + (frac // 1000 if nanos else frac)
        # Ethernet, optional VLAN tags.
        p = 12
        et = int.from_bytes(frame[p : p + 2], "big")
        while et in (0x8100, 0x88A8) and p + 6 <= len(frame):
            p += 4
            et = int.from_bytes(frame[p : p + 2], "big")
        ip = p + 2
        if et == 0x0800 and len(frame) >= ip + 20:
            out.append((ts, frame, orig, (ip + 12, ip + 16, 4)))
        elif et == 0x86DD and len(frame) >= ip + 40:
            out.append((ts, frame, orig, (ip + 8, ip + 24, 16)))
    return out


def shifted(src, offset, tag):
    # A function, not a generator expression in the loop: those bind offset/tag late.
    for ts, fr, orig, ao in src:
        yield ts + offset, fr, orig, ao, tag


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-gb", type=float, default=1.0)
    ap.add_argument("--out", default="/tmp/rttlab-big.pcap")
    ap.add_argument("--concurrent", type=int, default=64, help="replicas merged in time at once")
    args = ap.parse_args()
    if not CAPTURES.is_dir():
        print(f"{CAPTURES} is missing", file=sys.stderr)
        return 2
    sources = []
    for path in sorted(CAPTURES.glob("*.pcap")):
        pkts = read_pcap(path)
        if pkts:
            t0 = pkts[0][0]
            sources.append([(ts - t0, fr, orig, ao) for ts, fr, orig, ao in pkts])
    if not sources:
        print("no Ethernet pcap captures found", file=sys.stderr)
        return 2
    target = int(args.size_gb * (1 << 30))
    rec = struct.Struct("<IIII")
    written = 0
    packets = 0
    replica = 0
    base_us = 1_700_000_000 * 1_000_000
    with open(args.out, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, 1))
        while written < target:
            streams = []
            batch_end = base_us
            for k in range(args.concurrent):
                src = sources[(replica + k) % len(sources)]
                r = replica + k
                # Distinct addresses per replica: bytes 1-2 of each address carry the replica id.
                tag = bytes(((r >> 8) & 0xFF, r & 0xFF))
                offset = base_us + k * 7_919  # spread starts by ~8 ms
                streams.append(shifted(src, offset, tag))
                batch_end = max(batch_end, offset + src[-1][0])
            for ts, fr, orig, (sa, da, _n), tag in heapq.merge(*streams, key=lambda x: x[0]):
                fr = bytearray(fr)
                if len(fr) >= da + 3:
                    fr[sa + 1 : sa + 3] = tag
                    fr[da + 1 : da + 3] = tag
                f.write(rec.pack(ts // 1_000_000, ts % 1_000_000, len(fr), orig))
                f.write(fr)
                written += 16 + len(fr)
                packets += 1
            replica += args.concurrent
            base_us = batch_end + 1_000_000
    print(
        f"\nwrote {args.out}: {os.path.getsize(args.out)} bytes, {packets} packets", file=sys.stderr
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
