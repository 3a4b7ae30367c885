#!/usr/bin/env python3
"""Seed corpora for `cargo fuzz` from the development captures (../../shared/captures).

capture: the first 16 KiB of every capture (headers, interface blocks, first packets) — small
seeds fuzz faster and reach every format path. frame: single frames cut from the classic-pcap
captures, prefixed with the link-type selector byte the `frame` target expects.

    python3 fuzz/make_corpus.py        # writes fuzz/corpus/{capture,frame}/ (git-ignored)
    cargo +nightly fuzz run capture fuzz/corpus/capture -- -max_total_time=300
"""

from __future__ import annotations

import hashlib
import struct
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CAPTURES = HERE.parent.parent / "shared" / "captures"
LINKS = [0, 1, 12, 14, 101, 108, 113, 228, 229, 276]
SEED_BYTES = 16 << 10
FRAMES_PER_FILE = 40


def put(dir: Path, data: bytes) -> None:
    dir.mkdir(parents=True, exist_ok=True)
    (dir / hashlib.sha1(data).hexdigest()).write_bytes(data)


def frames(data: bytes):
    magic = data[:4]
    endian = {b"\xd4\xc3\xb2\xa1": "<", b"\x4d\x3c\xb2\xa1": "<", b"\xa1\xb2\xc3\xd4": ">", b"\xa1\xb2\x3c\x4d": ">"}.get(magic)
    if endian is None:
        return
    (link,) = struct.unpack(endian + "I", data[20:24])
    off = 24
    while off + 16 <= len(data):
        caplen = struct.unpack(endian + "I", data[off + 8 : off + 12])[0]
        yield link, data[off + 16 : off + 16 + caplen]
        off += 16 + caplen


def main() -> int:
    if not CAPTURES.is_dir():
        print(f"{CAPTURES} is missing", file=sys.stderr)
        return 2
    n = 0
    for path in sorted(CAPTURES.glob("*.pcap*")):
        data = path.read_bytes()
        put(HERE / "corpus" / "capture", data[:SEED_BYTES])
        n += 1
        for i, (link, frame) in enumerate(frames(data)):
            if i >= FRAMES_PER_FILE:
                break
            if link in LINKS:
                put(HERE / "corpus" / "frame", bytes([LINKS.index(link)]) + frame)
                n += 1
    print(f"wrote {n} seeds under {HERE / 'corpus'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
