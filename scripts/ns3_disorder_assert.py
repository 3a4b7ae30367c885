"""Reproduce ns-3 3.44's abort `NS_ASSERT(m_tcb->m_congState != CA_DISORDER)`
(tcp-socket-base.cc:3532) in Nunes et al. 2011's scenario III without SACK, and show what led to it.

    python scripts/ns3_disorder_assert.py                      # rttlab's Jacobson in the socket
    python scripts/ns3_disorder_assert.py --own-estimator      # ns-3's RttMeanDeviation instead
    python scripts/ns3_disorder_assert.py --own-estimator --seed 2   # aborts at 455.34 s (no rttlab in the socket)

Runs one scenario III run (default: [20, 30] m/s, seed 1, 600 s, tcp.sack = false) as
`rttlab.papers.nunes_experts.manet` builds it. Every flow's socket is traced through C++ trace sinks (received
segments with their ACK number and window, sent segments, CongState, cwnd, bytes in flight, RTO)
into a ring buffer of its last 60 events; a `std::terminate` handler prints the ring buffer of the
socket that aborted (lines `DIAG`) to stderr before the process dies. The analysis is in
docs/reproductions/nunes-manet.md, "Known problems". Exit status: 0 if the run completed, the
abort's (134) otherwise."""

from __future__ import annotations

import argparse

_CPP = r"""
#include <deque>
#include <exception>
#include <iostream>
#include <sstream>
namespace disorder_diag {
using namespace ns3;
struct Ev { double t; std::string what; };
inline std::map<int64_t, std::deque<Ev>> g_ev;
inline void Push(int64_t f, const std::string& s) {
    auto& d = g_ev[f];
    d.push_back({Simulator::Now().GetSeconds(), s});
    if (d.size() > 60) d.pop_front();
}
// The socket that aborted is the one whose last event is the latest.
inline void OnTerminate() {
    int64_t flow = -1; double last = -1;
    for (auto& [f, d] : g_ev) if (!d.empty() && d.back().t >= last) { last = d.back().t; flow = f; }
    std::cerr << "DIAG flow " << flow << "\n";
    for (auto& e : g_ev[flow]) std::cerr << "DIAG " << e.t << " " << e.what << "\n";
    std::cerr.flush();
    std::abort();
}
inline void Rx(int64_t f, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>) {
    std::ostringstream o; o << "RX ack=" << h.GetAckNumber() << " win=" << h.GetWindowSize() << " len=" << p->GetSize(); Push(f, o.str());
}
inline void Tx(int64_t f, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>) {
    std::ostringstream o; o << "TX seq=" << h.GetSequenceNumber() << " len=" << p->GetSize(); Push(f, o.str());
}
inline void State(int64_t f, TcpSocketState::TcpCongState_t a, TcpSocketState::TcpCongState_t b) {
    Push(f, std::string("STATE ") + TcpSocketState::TcpCongStateName[a] + "->" + TcpSocketState::TcpCongStateName[b]);
}
inline void Cwnd(int64_t f, uint32_t a, uint32_t b) { Push(f, "CWND " + std::to_string(a) + "->" + std::to_string(b)); }
inline void Flight(int64_t f, uint32_t a, uint32_t b) { Push(f, "INFLIGHT " + std::to_string(a) + "->" + std::to_string(b)); }
inline void Rto(int64_t f, Time a, Time b) { Push(f, "RTO " + std::to_string(a.GetSeconds()) + "->" + std::to_string(b.GetSeconds())); }
inline void Connect(Ptr<Application> app, int64_t f) {
    Ptr<TcpSocketBase> s = DynamicCast<TcpSocketBase>(DynamicCast<BulkSendApplication>(app)->GetSocket());
    s->TraceConnectWithoutContext("Rx", MakeBoundCallback(&Rx, f));
    s->TraceConnectWithoutContext("Tx", MakeBoundCallback(&Tx, f));
    s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&State, f));
    s->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&Cwnd, f));
    s->TraceConnectWithoutContext("BytesInFlight", MakeBoundCallback(&Flight, f));
    s->TraceConnectWithoutContext("RTO", MakeBoundCallback(&Rto, f));
}
// After the application's start event (which creates the socket) at `start`.
inline void AtStart(Ptr<Application> app, int64_t f) { Simulator::ScheduleNow(&Connect, app, f); }
inline void Attach(Ptr<Application> app, int64_t f, double start) {
    std::set_terminate(&OnTerminate);
    Simulator::Schedule(Seconds(start), &AtStart, app, f);
}
}
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--speed", type=float, nargs=2, default=[20.0, 30.0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--duration", default="600s")
    ap.add_argument(
        "--own-estimator",
        action="store_true",
        help="ns-3's RttMeanDeviation (MinRto 1 s, G 1 ms), no rttlab estimator in the socket",
    )
    a = ap.parse_args()

    from rttlab.experiments.reproduce import Reproduction
    from rttlab.papers.nunes_experts import manet
    from rttlab.peers.ns3 import rtt as ns3_rtt

    install = ns3_rtt.install

    def install_and_diagnose(*args, **kwargs):
        ns = install(*args, **kwargs)
        import cppyy

        if not hasattr(cppyy.gbl, "disorder_diag"):
            cppyy.cppdef(_CPP)
        if a.own_estimator:
            ns.Config.SetDefault(
                "ns3::TcpL4Protocol::RttEstimatorType",
                ns.TypeIdValue(ns.TypeId.LookupByName("ns3::RttMeanDeviation")),
            )
            ns.Config.SetDefault("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.Seconds(1)))
            ns.Config.SetDefault(
                "ns3::TcpSocketBase::ClockGranularity", ns.TimeValue(ns.MilliSeconds(1))
            )
        return ns

    attach = ns3_rtt.attach

    def attach_and_diagnose(app, flow, start):
        attach(app, flow, start)
        import cppyy

        cppyy.gbl.disorder_diag.Attach(app, flow, float(start))

    ns3_rtt.install, ns3_rtt.attach = install_and_diagnose, attach_and_diagnose
    base = Reproduction.load("nunes-manet").doc["scenario"]
    s = manet.ManetScenario(base).with_(
        {
            "simulation.duration": a.duration,
            "simulation.seed": a.seed,
            "tcp.estimator": "jacobson",
            "traffic.kind": "bursty",
            "network.speed": list(a.speed),
            "tcp.sack": False,
        }
    )
    r = manet.simulate(s)
    print(
        f"completed: {r.duration} s simulated, ns-3 CPU {r.metrics['cpu_ns3_s']:.1f} s", flush=True
    )


if __name__ == "__main__":
    main()
