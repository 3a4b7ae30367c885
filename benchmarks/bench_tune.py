"""`rttlab tune`'s batched replay against its peer, a plain NumPy loop, on the same grid in the
same run: RFC 6298 over a grid of min_rto × k on ten series, scored by the timer replay of
docs/metrics.md (bad-timeout rate and W). The NumPy peer is vectorised across grid points and
loops over samples in Python (a recursive filter and a timer cannot be vectorised over time);
before timing, its counts are checked against the core's, so both compute the same thing.

    python benchmarks/bench_tune.py [--grid 17] [--repeat 3] [../shared]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from rttlab.trace.tune_search import Dim, Settings, Trace, load_trace, replay_points


def numpy_peer(
    trace: Trace,
    min_rto: np.ndarray,
    k: np.ndarray,
    granularity: float = 1e-3,
    max_rto: float = 60.0,
) -> tuple[np.ndarray, np.ndarray]:
    """RFC 6298 with the Allman & Paxson timer (back-off, Karn, no timestamps), one array slot
    per grid point: (bad timeouts, sum of W in s) pooled over the trace's streams. Times and
    RTOs are integer nanoseconds, as in the core (a deadline equal to the ACK's time is an
    expiry, so float seconds would miscount the ties)."""
    n = len(k)
    bad = np.zeros(n, dtype=np.int64)
    wsum = np.zeros(n, dtype=np.int64)
    g = granularity * 1e9
    floor_ns = np.rint(min_rto * 1e9).astype(np.int64)
    cap = int(max_rto * 1e9)

    def base(srtt: np.ndarray, var: np.ndarray, kk: np.ndarray, fl: np.ndarray) -> np.ndarray:
        raw = np.floor(srtt + np.maximum(g, kk * var) + 0.5).astype(np.int64)  # round_ns
        return np.minimum(np.maximum(raw, fl), cap)

    for a, b in zip(trace.starts, trace.ends):
        t = trace.times_ns[a:b].astype(np.int64)
        y = trace.rtts_ns[a:b].astype(np.int64)
        srtt = np.full(n, float(y[0]))
        var = np.full(n, y[0] / 2.0)
        rto = base(srtt, var, k, floor_ns)
        doublings = np.zeros(n, dtype=np.int64)
        for i in range(1, len(y)):
            armed = max(t[i - 1], t[i] - y[i])
            in_force = np.minimum(rto << doublings, cap)
            wsum += in_force
            fire = armed + in_force
            late = fire <= t[i]
            bad += late
            ok = ~late  # Karn: a timed-out segment's sample is withheld
            # Back off until the timer no longer fires before the ACK (one episode, many expiries).
            while late.any():
                doublings[late] += 1
                fire[late] += np.minimum(rto[late] << doublings[late], cap)
                late &= fire <= t[i]
            r = float(y[i])
            var[ok] = 0.75 * var[ok] + 0.25 * np.abs(srtt[ok] - r)
            srtt[ok] = 0.875 * srtt[ok] + 0.125 * r
            rto[ok] = base(srtt[ok], var[ok], k[ok], floor_ns[ok])
            doublings[ok] = 0
    return bad.astype(np.float64), wsum / 1e9


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("shared", nargs="?", default="../shared")
    ap.add_argument("--grid", type=int, default=17, help="points per axis (grid² points)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    paths = sorted((Path(args.shared) / "rtt-series").glob("*.csv"))
    # Ten series of about a thousand samples: the four short shared series, and six thousand-sample
    # stretches of the long one.
    traces = [load_trace(p) for p in paths]
    long = max(traces, key=lambda t: len(t.rtts_ns))
    series = [t for t in traces if t is not long]
    for j in range(10 - len(series)):
        a = 1 + j * 1000
        series.append(
            Trace(
                f"{long.name}[{a}:{a + 1000}]",
                "series",
                long.times_ns[a : a + 1000],
                long.rtts_ns[a : a + 1000],
                [0],
                [False],
            )
        )
    dims = [Dim("min_rto", "duration", 0.001, 3.0, True), Dim("k", "float", 0.5, 16.0, True)]
    axes = [d.values(args.grid) for d in dims]
    mesh = np.meshgrid(*axes, indexing="ij")
    points = [
        {"min_rto": float(m), "k": float(kk)} for m, kk in zip(mesh[0].ravel(), mesh[1].ravel())
    ]
    min_rto, k = mesh[0].ravel(), mesh[1].ravel()
    samples = sum(t.scored for t in series)
    # Same numbers first.
    for t in series:
        rows = replay_points(t, "rfc6298", points, dims, {})
        bad, wsum = numpy_peer(t, min_rto, k)
        assert np.array_equal(bad, [r["bad_timeouts"] for r in rows]), t.name
        assert np.allclose(wsum / t.scored, [r["wait_mean_s"] for r in rows], rtol=1e-9), t.name
    best = {}
    for name, run in (
        (
            "rttlab (Rust core, batched)",
            lambda: [
                replay_points(t, "rfc6298", points, dims, {}, Settings().threads) for t in series
            ],
        ),
        (
            "NumPy loop over samples, vectorised over the grid",
            lambda: [numpy_peer(t, min_rto, k) for t in series],
        ),
    ):
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            run()
            times.append(time.perf_counter() - start)
        best[name] = min(times)
    print(
        f"rfc6298, grid {len(points)} points (min_rto × k), 10 series, {samples:,} scored samples; best of {args.repeat}"
    )
    print("| replay | seconds | points·samples per second | ratio |")
    print("|---|---|---|---|")
    ours = best["rttlab (Rust core, batched)"]
    for name, s in best.items():
        print(f"| {name} | {s:.3f} | {len(points) * samples / s:,.0f} | {s / ours:.1f}× |")


if __name__ == "__main__":
    main()
