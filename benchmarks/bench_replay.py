"""Replay throughput of the Rust core against plain-Python/NumPy references, in the same run.

    python benchmarks/bench_replay.py [--samples 1000000] [--repeat 5]

Prints a Markdown table for BENCHMARKS.md: samples/s of one estimator pass on one core (metrics
included), the peer's samples/s on the same series (a prefix of it for the slow NumPy peer), and
their ratio. Best of --repeat runs, wall clock, nothing else running in the process.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from reference import fixed_share as ref_fixed_share  # noqa: E402
from reference import rfc6298 as ref_rfc6298  # noqa: E402
from rttlab import _core  # noqa: E402


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--samples", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument(
        "--peer-samples",
        type=int,
        default=20_000,
        help="prefix length for the slow NumPy Fixed-Share peer",
    )
    args = ap.parse_args()

    rng = np.random.default_rng(7)
    rtt_s = (
        0.05
        + rng.gamma(2.0, 0.01, args.samples)
        + np.where(rng.random(args.samples) < 0.01, 0.3, 0.0)
    )
    rtts = np.rint(rtt_s * 1e9).astype(np.uint64)
    times = np.cumsum(rtts).astype(np.uint64)

    def core(name: str) -> float:
        return best(
            lambda: _core.replay(times, rtts, [(name, [])], 10_000_000, False, 1), args.repeat
        )

    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    print(
        f"machine: {cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {args.samples:,} samples, best of {args.repeat}"
    )
    print()
    print("| estimator | rttlab (M samples/s) | peer | peer (M samples/s) | ratio |")
    print("|---|---:|---|---:|---:|")

    t_ref = best(lambda: ref_rfc6298(rtt_s), 1)
    ref_rate = args.samples / t_ref
    for name in ("rfc6298", "linux", "quic", "eifel", "ca-rto", "peak-hopper", "last"):
        rate = args.samples / core(name)
        peer = "plain-Python RFC 6298 loop" if name == "rfc6298" else "(same RFC 6298 loop)"
        print(
            f"| {name} | {rate / 1e6:.1f} | {peer} | {ref_rate / 1e6:.3f} | {rate / ref_rate:,.0f}× |"
        )

    n_peer = min(args.peer_samples, args.samples)
    t_fs_ref = best(lambda: ref_fixed_share(rtt_s[:n_peer], tick=0.004), 1)
    fs_rate = args.samples / core("fixed-share")
    fs_ref_rate = n_peer / t_fs_ref
    print(
        f"| fixed-share (N=100) | {fs_rate / 1e6:.2f} | NumPy-vectorised trial, first {n_peer:,} samples | {fs_ref_rate / 1e6:.4f} | {fs_rate / fs_ref_rate:,.0f}× |"
    )
    rate = args.samples / core("regression")
    print(f"| regression (window 25) | {rate / 1e6:.1f} | — | — | — |")


if __name__ == "__main__":
    main()
