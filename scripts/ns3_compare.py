#!/usr/bin/env python3
"""Run a dumbbell scenario in rttlab's simulator and in ns-3 (PyPI wheel `ns3`) and compare.

    python scripts/ns3_compare.py examples/scenarios/dumbbell-n10-droptail.toml [--set k=v ...]

The mapping to ns-3 lives in the package (`rttlab.peers.ns3.dumbbell`, documented there and in
docs/ns3-comparison.md) and reads the resolved scenario, so both simulators see the same defaults.
Both runs get `rttlab.peers.ns3.dumbbell.COMPARABLE` (timestamps on, 54-byte headers). `--set simulation.seed=K`
seeds rttlab with K and runs ns-3 as run K (seed 1). Many runs: `rttlab sweep` with
`simulator = ["rttlab", "ns3"]` in its grid, or `rttlab reproduce ns3-dumbbell`.
Importing ns-3 takes 10-30 s.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import rttlab
from rttlab.peers.ns3 import dumbbell as ns3


def jain(xs: list[float]) -> float:
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs)) if any(xs) else math.nan


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenario", type=Path)
    ap.add_argument("--set", action="append", default=[], dest="overrides")
    ap.add_argument("--json", action="store_true", help="print the comparison as one JSON object")
    ap.add_argument(
        "--pcap",
        metavar="PREFIX",
        help="write ns-3's packets at the first sender's access link as PREFIX-N-1.pcap (PPP; `rttlab flows` reads it)",
    )
    args = ap.parse_args()
    scenario = rttlab.Scenario.load(args.scenario).with_(args.overrides).with_(ns3.COMPARABLE)
    t0 = time.process_time()
    ours = rttlab.simulate(scenario)
    our_cpu = time.process_time() - t0
    from ns import ns  # noqa: F401, PLC0415 - the slow import, outside the timed run

    t0 = time.process_time()
    theirs = ns3.simulate(scenario, pcap=args.pcap)
    their_cpu = time.process_time() - t0
    b = ours.channels.set_index("name").loc[ours.bottleneck]
    tb = theirs.channels.set_index("name").loc[theirs.bottleneck]
    rows = [
        (
            "aggregate goodput Mb/s",
            ours.aggregate_goodput_bps / 1e6,
            theirs.aggregate_goodput_bps / 1e6,
        ),
        ("Jain index", ours.jain_index, jain(list(theirs.flows.goodput_bps))),
        (
            "min flow goodput Mb/s",
            ours.flows.goodput_bps.min() / 1e6,
            theirs.flows.goodput_bps.min() / 1e6,
        ),
        (
            "max flow goodput Mb/s",
            ours.flows.goodput_bps.max() / 1e6,
            theirs.flows.goodput_bps.max() / 1e6,
        ),
        ("bottleneck drops", b.drops_overflow + b.drops_aqm, tb.drops_overflow),
        ("bottleneck ECN marks", b.marks, tb.marks),
        ("CPU s (run only)", our_cpu, their_cpu),
    ]
    if args.json:
        keys = ["goodput_bps", "jain", "min_flow_bps", "max_flow_bps", "drops", "marks", "cpu_s"]

        def pick(i: int) -> dict[str, float]:
            return {
                k: float(row[i]) * (1e6 if k.endswith("bps") else 1) for k, row in zip(keys, rows)
            }

        doc_out = {
            "scenario": str(args.scenario),
            "overrides": args.overrides,
            "seed": scenario.seed,
            "rttlab": pick(1),
            "ns3": pick(2),
        }
        doc_out["ns3"]["events"] = theirs.events
        print(json.dumps(doc_out))
        return
    print(f"{args.scenario}  {' '.join(args.overrides)}")
    print(f"{'':26}{'rttlab':>12}{'ns-3':>12}")
    for name, a, c in rows:
        print(f"{name:26}{a:12.4g}{c:12.4g}")


if __name__ == "__main__":
    sys.exit(main())
