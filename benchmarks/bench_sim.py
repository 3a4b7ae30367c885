"""Simulator CPU time against ns-3 3.44 (PyPI wheel) on the same dumbbells, in the same run.

    python benchmarks/bench_sim.py [--quick] [--plot benchmarks/sim_cost.png]

rttlab: `examples/sim_bench.rs` (release build), CPU time of the event loop, best of 5 runs.
ns-3: `scripts/ns3_compare.py --json`, CPU time of `Simulator::Run()` in the wheel's compiled
libraries (set-up and the 10–30 s import excluded), one run, a fresh process per scenario.
Prints Markdown for BENCHMARKS.md; the plot shows CPU time against flows and bottleneck rate.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "examples" / "scenarios" / "dumbbell-n10-droptail.toml"
BENCH = ROOT / "target" / "release" / "examples" / "sim_bench"
# ns3_compare runs both simulators with these; the benchmark uses the same for rttlab.
MATCHED = ["tcp.timestamps=true", "tcp.header=54B"]


def ours(overrides: list[str], repeats: int = 5) -> tuple[float, int]:
    args = [str(BENCH), str(SCENARIO), str(repeats)]
    for o in [*MATCHED, *overrides]:
        args += ["--set", o]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    events = int(re.search(r"(\d+) events", out).group(1))
    cpu_ms = float(re.search(r"CPU time per run:\s+min ([\d.]+) ms", out).group(1))
    return cpu_ms / 1e3, events


def ns3(overrides: list[str]) -> tuple[float, int]:
    args = [sys.executable, str(ROOT / "scripts" / "ns3_compare.py"), str(SCENARIO), "--json"]
    for o in overrides:
        args += ["--set", o]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    r = json.loads(out.strip().splitlines()[-1])["ns3"]
    return r["cpu_s"], r["events"]


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true", help="fewer ns-3 points")
    ap.add_argument("--plot", type=Path, default=None)
    args = ap.parse_args()
    subprocess.run(
        ["cargo", "build", "--release", "--quiet", "--example", "sim_bench"], cwd=ROOT, check=True
    )

    flows = [1, 2, 5, 10, 20, 50, 100, 200, 500]
    rates = ["1Mbps", "10Mbps", "100Mbps", "1000Mbps"]
    ns3_flows = [1, 10, 50] if args.quick else [1, 10, 50, 100]
    ns3_rates = ["1Mbps", "10Mbps"] if args.quick else ["1Mbps", "10Mbps", "100Mbps"]

    print(
        "| scenario (60 s simulated) | rttlab CPU | rttlab events/s | ns-3 CPU | ns-3 events/s | CPU ratio |"
    )
    print("|---|---:|---:|---:|---:|---:|")

    def point(label: str, overrides: list[str], with_ns3: bool) -> list[float | None]:
        c, e = ours(overrides)
        row = f"| {label} | {c * 1e3:.1f} ms | {e / c / 1e6:.1f} M |"
        c3 = None
        if with_ns3:
            c3, e3 = ns3(overrides)
            row += f" {c3:.2f} s | {e3 / c3 / 1e6:.2f} M | {c3 / c:.0f}× |"
        else:
            row += " — | — | — |"
        print(row, flush=True)
        return [c, c3]

    by_flows = {
        n: point(f"{n} flows, 10 Mb/s", [f"flows.0.count={n}"], n in ns3_flows) for n in flows
    }
    by_rate = {
        r: point(f"10 flows, {r}", [f"topology.bottleneck.bandwidth={r}"], r in ns3_rates)
        for r in rates
    }

    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4), constrained_layout=True)
        for ax, data, xs, label in (
            (a, by_flows, flows, "flows (10 Mb/s bottleneck)"),
            (b, by_rate, list(range(len(rates))), "bottleneck rate (10 flows)"),
        ):
            keys = list(data)
            ax.loglog(
                xs if ax is a else [1, 10, 100, 1000],
                [data[k][0] for k in keys],
                "o-",
                label="rttlab",
            )
            pts = [
                (x, data[k][1])
                for x, k in zip(xs if ax is a else [1, 10, 100, 1000], keys)
                if data[k][1]
            ]
            ax.loglog([p[0] for p in pts], [p[1] for p in pts], "s--", label="ns-3 3.44 (wheel)")
            ax.set_xlabel(label if ax is a else "bottleneck rate, Mb/s (10 flows)")
            ax.set_ylabel("CPU seconds for 60 s simulated")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend()
        fig.savefig(args.plot, dpi=110)
        print(f"\nplot: {args.plot}")


if __name__ == "__main__":
    main()
