"""ns-3's CPU per simulated second on Nunes et al. 2011's MANET scenario I (rttlab.papers.nunes_experts.manet), for BENCHMARKS.md.

    python scripts/ns3_manet_cost.py --flows 3 130 --duration 300s [--estimator jacobson] [--seed 1] [--bursty]

One process: ns-3 is imported once (not counted); each line is one run's CPU time inside
ns3::Simulator::Run (process time), its events and the rate, as JSON."""

from __future__ import annotations

import argparse
import json
import time

from rttlab.experiments.reproduce import Reproduction
from rttlab.papers.nunes_experts.manet import ManetScenario


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flows", type=int, nargs="+", default=[3, 130])
    ap.add_argument("--duration", default="300s")
    ap.add_argument(
        "--estimator", default="jacobson", help="a label of nunes-manet's [scenario.estimators]"
    )
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--bursty", action="store_true", help="scenario III's traffic (flows ignored: one run)"
    )
    ap.add_argument("--sack", action="store_true", help="tcp.sack = true")
    a = ap.parse_args()
    base = Reproduction.load("nunes-manet").doc["scenario"]
    from rttlab.papers.nunes_experts import manet

    for flows in [0] if a.bursty else a.flows:
        s = ManetScenario(base).with_(
            {
                "simulation.duration": a.duration,
                "simulation.seed": a.seed,
                "tcp.estimator": a.estimator,
            }
        )
        s = (
            s.with_({"traffic.kind": "bursty", "network.speed": [20.0, 30.0]})
            if a.bursty
            else s.with_({"traffic.flows": flows})
        )
        if a.sack:
            s = s.with_({"tcp.sack": True})
        wall = time.perf_counter()
        r = manet.simulate(s)
        wall = time.perf_counter() - wall
        cpu = r.metrics["cpu_ns3_s"]
        print(
            json.dumps(
                {
                    "flows": flows,
                    "duration_s": r.duration,
                    "estimator": a.estimator,
                    "sack": a.sack,
                    "cpu_s": round(cpu, 2),
                    "cpu_per_sim_s": round(cpu / r.duration, 4),
                    "events": r.events,
                    "wall_s": round(wall, 1),
                    "samples": int(r.metrics["samples"]),
                    "packets_delivered": r.metrics["packets_delivered"],
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    main()
