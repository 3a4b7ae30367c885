"""Reading an RTT series file and replaying RFC 6298 where the user stands — the public API in a
fresh interpreter (``rttlab.read_series`` + ``rttlab.replay``) and the command
``rttlab evaluate SERIES -e rfc6298`` — against a plain Python loop doing the same (read lines,
float(), RFC 6298 §2 update per sample), also in a fresh interpreter, in the same run; and the
internal calls in-process (no start-up, no imports). Prints the table for BENCHMARKS.md.

    python benchmarks/bench_series.py [--lines 1260000] [--repeat 5]

The series is written to a temporary file (one RTT in ms per line, the ../shared/rtt-series
format), seeded, so every run reads the same bytes. Each fresh-process figure is the best of
``--repeat`` runs, wall clock, the loop and ours interleaved so that a change in the machine's
load hits both. ``hyperfine -N`` on the same commands gives the same ratios (BENCHMARKS.md).
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

LOOP = """
import sys
srtt = rttvar = None
rto, total, n = 1.0, 0.0, 0
with open(sys.argv[1]) as f:
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
print(repr(total / n))
"""
"""The plain Python loop: RFC 6298 §2 (α = 1/8, β = 1/4, K = 4, 1 s floor, 60 s ceiling) sample
by sample; prints the mean RTO in force (so the work cannot be skipped)."""

API = """
import sys, rttlab
result = rttlab.replay(rttlab.read_series(sys.argv[1]), ["rfc6298"], threads=1)
print(repr(result.rows[0]["rto_mean_s"]))
"""
"""The public API as a user's script calls it."""


def best_of(commands: dict[str, list[str]], repeat: int) -> tuple[dict[str, float], dict[str, str]]:
    """Best wall time of each command over ``repeat`` interleaved rounds, and its last output."""
    times: dict[str, list[float]] = {k: [] for k in commands}
    outputs: dict[str, str] = {}
    for _ in range(repeat):
        for name, argv in commands.items():
            t0 = time.perf_counter()
            out = subprocess.run(argv, capture_output=True, text=True, check=True)
            times[name].append(time.perf_counter() - t0)
            outputs[name] = out.stdout
    return {k: min(v) for k, v in times.items()}, outputs


def inprocess(path: str, repeat: int) -> float:
    from rttlab.trace.replay import score
    from rttlab.trace.series import read_series_ns

    def once() -> None:
        times, rtts = read_series_ns(path)
        score(times, rtts, ["rfc6298"], threads=1)

    once()
    t = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        once()
        t.append(time.perf_counter() - t0)
    return min(t)


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
        py = sys.executable
        commands = {
            "loop": [py, "-c", LOOP, path],
            "api": [py, "-c", API, path],
            "cli": [py, "-m", "rttlab.cli.main", "evaluate", path, "-e", "rfc6298"],
            "start": [py, "-c", "pass"],
        }
        subprocess.run(commands["api"], capture_output=True, check=True)  # page cache, .pyc files
        fresh, outputs = best_of(commands, args.repeat)
        inside = inprocess(path, args.repeat)
        loop_inside = min(
            _timed(lambda: exec(compile(LOOP, "loop", "exec"), {"__name__": "loop"}), path)
            for _ in range(min(args.repeat, 3))
        )
    a, b = float(outputs["api"]), float(outputs["loop"])
    assert abs(a - b) < 1e-6 * b, (a, b)  # same work, same answer
    print(
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {sys.version.split()[0]}, {args.lines:,} lines, best of {args.repeat}, load average {os.getloadavg()[0]:.1f}"
    )
    print("| what | time | vs the loop |")
    print("|---|---:|---:|")
    print(
        f"| plain Python loop, fresh interpreter (read, float(), RFC 6298) | {fresh['loop'] * 1e3:.0f} ms | 1 |"
    )
    print(
        f"| `rttlab.read_series` + `rttlab.replay(..., ['rfc6298'])`, fresh interpreter | {fresh['api'] * 1e3:.0f} ms | **{fresh['loop'] / fresh['api']:.1f}×** |"
    )
    print(
        f"| `rttlab evaluate SERIES -e rfc6298` (the table) | {fresh['cli'] * 1e3:.0f} ms | **{fresh['loop'] / fresh['cli']:.1f}×** |"
    )
    print(
        f"| in-process: `read_series_ns` + `score(rfc6298)` vs the loop in-process ({loop_inside * 1e3:.0f} ms) | {inside * 1e3:.0f} ms | {loop_inside / inside:.1f}× |"
    )
    print(f"| the interpreter's own start (`python -c pass`) | {fresh['start'] * 1e3:.0f} ms | |")


def _timed(run, path: str) -> float:
    argv = sys.argv
    sys.argv = ["loop", path]
    try:
        out = sys.stdout
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - the loop prints its answer
        t0 = time.perf_counter()
        run()
        return time.perf_counter() - t0
    finally:
        sys.stdout.close()
        sys.stdout = out
        sys.argv = argv


if __name__ == "__main__":
    main()
