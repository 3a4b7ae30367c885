"""CA-RTO's other readings (docs/reproductions/ca-rto.md): at 70 flows on the 1 Mb/s/50-packet and
10 Mb/s/100-packet settings of `rttlab reproduce ca-rto`, each reading's paired difference from Reno
over seeds 1-5, 500 s. Prints a line per reading; writes nothing.

    python scripts/ca_rto_readings.py
"""
import time
import rttlab
from rttlab.experiments.reproduce import Reproduction
from rttlab.experiments.stats import t_interval
rep = Reproduction.load("ca-rto")
base = rttlab.Scenario(rep.doc["scenario"])
points = {"1M-50p": {"topology.bottleneck.bandwidth": "1Mbps", "topology.bottleneck.queue": {"kind": "droptail", "limit": "50p"}},
          "10M-100p": {"topology.bottleneck.bandwidth": "10Mbps", "topology.bottleneck.queue": {"kind": "droptail", "limit": "100p"}}}
readings = {"default": {}, "scale=1s": {"scale": "1s"}, "scale=10ms": {"scale": "10ms"}, "max_cwnd=running-max": {"max_cwnd": "running-max"},
            "draw=sample": {"draw": "sample"}, "backoff=after": {"backoff": "after"}}
seeds = [1, 2, 3, 4, 5]
t0 = time.time()
out = []
for name, over in points.items():
    s = base.with_({**over, "flows.0.count": 70})
    ref = {}
    for seed in seeds:
        r = rttlab.simulate(s.with_({"simulation.seed": seed, "tcp.rto.policy": "none"}))
        ref[seed] = (r.jain_index, int(r.flows.retransmissions.sum()), r.aggregate_goodput_bps)
    for label, params in readings.items():
        d = {"jain": [], "retx": [], "goodput": []}
        for seed in seeds:
            r = rttlab.simulate(s.with_({"simulation.seed": seed, "tcp.rto.policy": {"name": "ca-rto", **params}}))
            j, x, g = ref[seed]
            d["jain"].append(r.jain_index - j); d["retx"].append(int(r.flows.retransmissions.sum()) - x); d["goodput"].append(r.aggregate_goodput_bps - g)
        row = {"point": name, "reading": label, **{k: (t_interval(v, 0.95)["mean"], t_interval(v, 0.95)["half_width"]) for k, v in d.items()}}
        out.append(row)
        print(f'{name:9s} {label:22s} ΔJain {row["jain"][0]:+.3f} ±{row["jain"][1]:.3f}  Δretx {row["retx"][0]:+8.0f} ±{row["retx"][1]:6.0f}  Δgoodput {row["goodput"][0]/1e3:+8.1f} ±{row["goodput"][1]/1e3:.1f} kb/s', flush=True)

print(f"wall {time.time()-t0:.0f} s")
