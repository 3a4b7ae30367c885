"""Reading an RTT series file and replaying one estimator, in-process: rttlab (parse in Rust,
replay in Rust) against a plain Python loop doing the same (read lines, float(), RFC 6298 §2
update per sample), in the same run. Prints the table for BENCHMARKS.md.

    python benchmarks/bench_series.py [--lines 1260000] [--repeat 5]

The series is written to a temporary file (one RTT in ms per line, the ../shared/rtt-series
format), seeded, so every run reads the same bytes.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def plain_python(path: str) -> float:
    """Read the file and run RFC 6298 (§2, α = 1/8, β = 1/4, K = 4, 1 s floor) sample by sample;
    returns the mean RTO (so the work cannot be skipped)."""
    srtt = rttvar = None
    rto, total, n = 1.0, 0.0, 0
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            r = float(line) / 1e3
            total += rto
            n += 1
            if srtt is None:
                srtt, rttvar = r, r / 2
            else:
                rttvar = 0.75 * rttvar + 0.25 * abs(srtt - r)
                srtt = 0.875 * srtt + 0.125 * r
            rto = min(max(srtt + max(0.001, 4 * rttvar), 1.0), 60.0)
    return total / n


def rttlab_inprocess(path: str) -> float:
    from rttlab.trace.replay import score
    from rttlab.trace.series import read_series_ns

    times, rtts = read_series_ns(path)
    return score(times, rtts, ["rfc6298"], threads=1).rows[0]["rto_mean_s"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=1_260_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    rng = np.random.default_rng(15)
    rtts_ms = 50 + rng.gamma(2.0, 3.0, args.lines) + (rng.random(args.lines) < 0.01) * 200
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "series.csv")
        Path(path).write_text("".join(f"{x:.3f}\n" for x in rtts_ms))
        rttlab_inprocess(path)  # warm: imports and page cache
        ours = best(lambda: rttlab_inprocess(path), args.repeat)
        peer = best(lambda: plain_python(path), args.repeat)
        a, b = rttlab_inprocess(path), plain_python(path)
        assert abs(a - b) < 1e-6 * b, (a, b)  # same work, same answer
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {sys.version.split()[0]}, {args.lines:,} lines, best of {args.repeat}, load average {os.getloadavg()[0]:.1f}")
    print("| what | time | samples/s |")
    print("|---|---:|---:|")
    print(f"| rttlab: read_series_ns + score(rfc6298) | {ours * 1e3:.0f} ms | {args.lines / ours / 1e6:.1f} M |")
    print(f"| plain Python loop (read, float(), RFC 6298) | {peer * 1e3:.0f} ms | {args.lines / peer / 1e6:.2f} M |")
    print(f"| ratio | {peer / ours:.1f}× | |")


if __name__ == "__main__":
    main()
