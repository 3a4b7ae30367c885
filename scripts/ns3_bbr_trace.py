#!/usr/bin/env python3
"""The first BBR flow of a dumbbell, side by side in rttlab and ns-3 (docs/ns3-comparison.md,
"BBR, ten flows: the drops traced"): per window of simulated time, flow 0's mean cwnd, the
bottleneck's drops, and on the ns-3 side flow 0's pacing rate, inflight and RTprop; then when
each flow of ns-3 entered ProbeRTT (TcpBbr's CwndGain trace falling to 1).

    python scripts/ns3_bbr_trace.py [--flows 10] [--window 2] [--set k=v ...]

ns-3's values come from its trace sources (TcpSocketBase CongestionWindow, PacingRate,
BytesInFlight; TcpBbr MinRtt, CwndGain; the bottleneck queue disc's Drop), hooked through
cppyy. rttlab's from its window and drop traces. Importing ns-3 takes 10-30 s.
"""

from __future__ import annotations

import argparse

import numpy as np
import rttlab
from rttlab.peers.ns3 import dumbbell as d3
from rttlab.peers.ns3 import import_ns

TRACER = r"""
#include <vector>
namespace rttlab_bbr_trace {
using namespace ns3;
std::vector<double> t_cwnd, v_cwnd, t_rate, v_rate, t_inf, v_inf, t_rtt, v_rtt, t_drop, g_t, g_node, g_v;
double now() { return Simulator::Now().GetSeconds(); }
void Cwnd(uint32_t, uint32_t n) { t_cwnd.push_back(now()); v_cwnd.push_back(n); }
void Rate(DataRate, DataRate n) { t_rate.push_back(now()); v_rate.push_back(n.GetBitRate()); }
void Inflight(uint32_t, uint32_t n) { t_inf.push_back(now()); v_inf.push_back(n); }
void MinRtt(Time, Time n) { t_rtt.push_back(now()); v_rtt.push_back(n.GetSeconds()); }
void Drop(Ptr<const QueueDiscItem>) { t_drop.push_back(now()); }
void Gain(std::string ctx, double, double n) { g_t.push_back(now()); g_node.push_back(std::stoi(ctx.substr(10))); g_v.push_back(n); }
void Connect(uint32_t node) {
  std::string s = "/NodeList/" + std::to_string(node) + "/$ns3::TcpL4Protocol/SocketList/0/";
  Config::ConnectWithoutContext(s + "CongestionWindow", MakeCallback(&Cwnd));
  Config::ConnectWithoutContext(s + "PacingRate", MakeCallback(&Rate));
  Config::ConnectWithoutContext(s + "BytesInFlight", MakeCallback(&Inflight));
  Config::ConnectWithoutContext(s + "CongestionOps/$ns3::TcpBbr/MinRtt", MakeCallback(&MinRtt));
}
void ConnectAll() {
  Config::Connect("/NodeList/*/$ns3::TcpL4Protocol/SocketList/0/CongestionOps/$ns3::TcpBbr/CwndGain", MakeCallback(&Gain));
}
void Install(double at, uint32_t node, double all) {
  Simulator::Schedule(Seconds(at), &Connect, node);  // a socket exists once its app started
  Simulator::Schedule(Seconds(all), &ConnectAll);
  Config::ConnectWithoutContext("/NodeList/0/$ns3::TrafficControlLayer/RootQueueDiscList/1/Drop", MakeCallback(&Drop));
}
}
"""


def step_mean(t: list[float], v: list[float], a: float, b: float) -> float:
    """Time-weighted mean over [a, b) of the step function that takes v[i] at t[i]."""
    t_, v_ = np.asarray(t), np.asarray(v)
    grid = np.linspace(a, b, 401)[:-1]
    i = np.searchsorted(t_, grid, side="right") - 1
    return float(v_[i[i >= 0]].mean()) if (i >= 0).any() else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", default="examples/scenarios/dumbbell-n10-droptail.toml")
    ap.add_argument("--flows", type=int, default=10)
    ap.add_argument("--window", type=float, default=2.0, help="seconds per row")
    ap.add_argument("--set", action="append", default=[], dest="overrides")
    args = ap.parse_args()
    s = (
        rttlab.Scenario.load(args.scenario)
        .with_([f"flows.0.count={args.flows}", "tcp.cc=bbr", "tcp.sack=true", *args.overrides])
        .with_(d3.COMPARABLE)
    )
    doc = s.resolved()
    start = d3._seconds(doc["flows"][0]["start"])
    last = start + (args.flows - 1) * d3._seconds(doc["flows"][0]["start_step"])
    duration = d3._seconds(doc["simulation"]["duration"])
    mss = d3._bytes(doc["tcp"]["mss"])

    ours = rttlab.simulate(s, traces=["window", "drops"])
    w = ours.tables["window"].to_pandas()
    w = w[w.flow == 0]
    dr = ours.tables["drops"].to_pandas()
    bottleneck = int(ours.channels.set_index("name").loc[ours.bottleneck].channel)
    dr = dr[dr.channel == bottleneck]

    ns = import_ns()
    import cppyy  # noqa: PLC0415 - with ns-3, only when run

    cppyy.cppdef(TRACER)
    g = cppyy.gbl.rttlab_bbr_trace
    run = ns.Simulator.Run

    def traced_run() -> None:
        g.Install(
            start + 0.001, 2, last + 0.001
        )  # nodes: 0 left router, 1 right router, 2.. senders
        run()

    ns.Simulator.Run = traced_run
    try:
        theirs = d3.simulate(s)
    finally:
        ns.Simulator.Run = run
    td = np.asarray(list(g.t_drop))
    print(
        f"drops: rttlab {len(dr)}, ns-3 {int(theirs.channels.drops_overflow.iloc[0])}; flow 0, mean per {args.window:g} s window (segments, Mb/s, ms)"
    )
    print(
        f"{'t s':>5} | {'cwnd':>6} {'drops':>6} | {'cwnd':>6} {'inflight':>8} {'pacing':>7} {'RTprop':>7} {'drops':>6}   (rttlab | ns-3)"
    )
    for a in np.arange(0.0, duration, args.window):
        b = a + args.window
        x = w[(w.time >= a) & (w.time < b)]
        cw = step_mean(list(x.time), list(x.cwnd), a, b) / mss if len(x) else float("nan")
        nd = int(((dr.time >= a) & (dr.time < b)).sum())
        print(
            f"{a:5.0f} | {cw:6.1f} {nd:6d} | {step_mean(list(g.t_cwnd), list(g.v_cwnd), a, b) / mss:6.1f} {step_mean(list(g.t_inf), list(g.v_inf), a, b) / mss:8.1f}"
            f" {step_mean(list(g.t_rate), list(g.v_rate), a, b) / 1e6:7.2f} {step_mean(list(g.t_rtt), list(g.v_rtt), a, b) * 1e3:7.1f} {int(((td >= a) & (td < b)).sum()):6d}"
        )
    entries: dict[int, list[float]] = {}
    for t, node, v in zip(g.g_t, g.g_node, g.g_v):
        if v == 1.0:  # TcpBbr's ProbeRTT is its only cwnd gain of 1
            entries.setdefault(int(node) - 2, []).append(round(float(t), 3))
    print("ns-3 ProbeRTT entries (s) by flow:", {k: entries[k] for k in sorted(entries)})


if __name__ == "__main__":
    main()
