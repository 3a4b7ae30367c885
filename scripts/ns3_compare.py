#!/usr/bin/env python3
"""Run a dumbbell scenario in rttlab's simulator and in ns-3 (PyPI wheel `ns3`) and compare.

    python scripts/ns3_compare.py examples/scenarios/dumbbell-n10-droptail.toml [--set k=v ...]

ns-3 is configured to match rttlab's model as far as it goes: NewReno with classic (RFC 6582)
recovery, no SACK, no Limited Transmit, delayed ACKs as in the scenario, timestamps on in both
(ns-3's default; rttlab then samples every ACK), 54-byte headers in rttlab (IP 20 + TCP 32 + PPP 2,
what ns-3 puts on its point-to-point wire), the bottleneck queue as a queue disc (FIFO or RED with
the scenario's thresholds, `Wait` off, `Gentle` as given) in front of a 1-packet device queue, access
links with 1000-packet device queues. Only dumbbells without error models are supported.
`--set simulation.seed=K` seeds rttlab with K and runs ns-3 as run K (seed 1); run each ns-3
replication in a fresh process, as ns-3's random streams depend on what ran before in a process.
Importing ns-3 takes 10-30 s.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import tomllib
from pathlib import Path

import rttlab


def set_path(doc: dict, assignment: str) -> None:
    key, _, raw = assignment.partition("=")
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    *parents, last = key.split(".")
    node = doc
    for p in parents:
        node = node[int(p)] if isinstance(node, list) else node.setdefault(p, {})
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value


def seconds(text: str | float | int) -> float:
    """A scenario duration in seconds, read by rttlab's own parser (`20ms`, `1s`, bare seconds)."""
    ns = rttlab._core.parse_duration(str(text))
    if ns is None:
        raise SystemExit(f"ns3_compare: cannot read {text!r} as a duration")
    return ns / 1e9


def run_ns3(doc: dict, pcap: str | None = None) -> dict:
    from ns import ns  # noqa: PLC0415 - slow import, only when asked

    # The scenario's seed is ns-3's run number, its seed fixed at 1: only runs (substreams) of one
    # seed are guaranteed not to overlap (ns-3 manual, "Seeding and independent replications").
    # Both default to 1, so scenarios without a seed compare as before.
    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(int(doc["simulation"].get("seed", 1)))
    topo, tcp, flows = doc["topology"], doc.get("tcp", {}), doc["flows"]
    if topo.get("kind", "dumbbell") != "dumbbell":
        raise SystemExit("ns3_compare: only dumbbell scenarios")
    for link in ("bottleneck", "access"):
        if topo[link].get("error") or topo[link].get("losses"):
            raise SystemExit(f"ns3_compare: topology.{link}: error models are not mapped to ns-3")
    duration = seconds(doc["simulation"]["duration"])
    mss = int(str(tcp.get("mss", "1448")).rstrip("B"))
    cc = tcp.get("cc", "newreno")
    cc_name = cc.get("name") if isinstance(cc, dict) else cc
    socket = {"newreno": "ns3::TcpNewReno", "vegas": "ns3::TcpVegas", "veno": "ns3::TcpVeno"}.get(cc_name)
    if socket is None:
        raise SystemExit(f"ns3_compare: tcp.cc '{cc_name}' is not mapped to ns-3 (newreno, vegas, veno)")
    for key, value in (cc.items() if isinstance(cc, dict) else []):
        if key != "name":  # same parameter names in ns-3's TcpVegas/TcpVeno (Alpha, Beta, Gamma)
            ns.Config.SetDefault(f"{socket}::{key.capitalize()}", ns.UintegerValue(int(value)))
    ns.Config.SetDefault("ns3::TcpL4Protocol::SocketType", ns.StringValue(socket))
    ns.Config.SetDefault("ns3::TcpL4Protocol::RecoveryType", ns.TypeIdValue(ns.TypeId.LookupByName("ns3::TcpClassicRecovery")))
    ns.Config.SetDefault("ns3::TcpSocketBase::Sack", ns.BooleanValue(bool(tcp.get("sack", False))))
    ns.Config.SetDefault("ns3::TcpSocketBase::LimitedTransmit", ns.BooleanValue(False))
    ns.Config.SetDefault("ns3::TcpSocketBase::UseEcn", ns.StringValue("On" if tcp.get("ecn") else "Off"))
    ns.Config.SetDefault("ns3::TcpSocket::SegmentSize", ns.UintegerValue(mss))
    ns.Config.SetDefault("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(int(tcp.get("init_cwnd", 10))))
    delack = str(tcp.get("delayed_ack", "off"))
    ns.Config.SetDefault("ns3::TcpSocket::DelAckCount", ns.UintegerValue(1 if delack == "off" else 2))
    if delack != "off":
        ns.Config.SetDefault("ns3::TcpSocket::DelAckTimeout", ns.TimeValue(ns.Seconds(seconds(delack))))
    ns.Config.SetDefault("ns3::TcpSocket::SndBufSize", ns.UintegerValue(1 << 26))
    ns.Config.SetDefault("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(1 << 26))

    n = sum(int(g.get("count", 1)) for g in flows)
    left, right, senders, receivers = (ns.NodeContainer() for _ in range(4))
    left.Create(1), right.Create(1), senders.Create(n), receivers.Create(n)
    stack = ns.InternetStackHelper()
    for c in (left, right, senders, receivers):
        stack.Install(c)

    def rate(link: dict) -> str:
        return str(link["bandwidth"]).replace(" ", "")  # ns-3 reads "10Mbps", not "10 Mbps"

    def p2p(link: dict, device_queue: str) -> "ns.PointToPointHelper":
        h = ns.PointToPointHelper()
        h.SetDeviceAttribute("DataRate", ns.StringValue(rate(link)))
        h.SetChannelAttribute("Delay", ns.StringValue(str(link["delay"])))
        h.SetQueue("ns3::DropTailQueue", "MaxSize", ns.QueueSizeValue(ns.QueueSize(device_queue)))
        return h

    b = topo["bottleneck"]
    q = b.get("queue", {})
    limit = str(q.get("limit", "100p"))
    tc = ns.TrafficControlHelper()
    if q.get("kind", "droptail") == "droptail":
        tc.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", ns.QueueSizeValue(ns.QueueSize(limit)))
    elif q["kind"] == "red":
        tc.SetRootQueueDisc("ns3::RedQueueDisc", "MaxSize", ns.QueueSizeValue(ns.QueueSize(limit)))
        ns.Config.SetDefault("ns3::RedQueueDisc::MinTh", ns.DoubleValue(float(q.get("min_th", 5))))
        ns.Config.SetDefault("ns3::RedQueueDisc::MaxTh", ns.DoubleValue(float(q.get("max_th", 15))))
        ns.Config.SetDefault("ns3::RedQueueDisc::QW", ns.DoubleValue(float(q.get("w_q", 0.002))))
        ns.Config.SetDefault("ns3::RedQueueDisc::LInterm", ns.DoubleValue(1.0 / float(q.get("max_p", 0.1))))
        ns.Config.SetDefault("ns3::RedQueueDisc::Gentle", ns.BooleanValue(bool(q.get("gentle", False))))
        ns.Config.SetDefault("ns3::RedQueueDisc::Wait", ns.BooleanValue(False))
        ns.Config.SetDefault("ns3::RedQueueDisc::UseEcn", ns.BooleanValue(bool(q.get("ecn", False))))
        ns.Config.SetDefault("ns3::RedQueueDisc::MeanPktSize", ns.UintegerValue(1500))
        # The idle-time correction counts the packets the link could have sent while idle at
        # LinkBandwidth (default 1.5 Mb/s, not the link's own rate); rttlab uses the real link.
        ns.Config.SetDefault("ns3::RedQueueDisc::LinkBandwidth", ns.DataRateValue(ns.DataRate(rate(b))))
        ns.Config.SetDefault("ns3::RedQueueDisc::LinkDelay", ns.TimeValue(ns.Seconds(seconds(b["delay"]))))
    else:
        raise SystemExit(f"ns3_compare: queue kind {q['kind']!r} is not mapped to ns-3")
    bottleneck = p2p(b, "1p").Install(left.Get(0), right.Get(0))
    qdiscs = tc.Install(bottleneck)  # before addresses, so ns-3 installs no default queue disc
    addr = ns.Ipv4AddressHelper()
    addr.SetBase(ns.Ipv4Address("10.0.0.0"), ns.Ipv4Mask("255.255.255.0"))
    addr.Assign(bottleneck)
    access = p2p(topo["access"], str(topo["access"].get("queue", {}).get("limit", "1000p")))
    plain = ns.TrafficControlHelper()
    sinks, starts, rx = [], [], []
    for i in range(n):
        d = access.Install(senders.Get(i), left.Get(0))
        if pcap and i == 0:
            access.EnablePcap(pcap, d.Get(0), True)  # writes PREFIX-<node>-<device>.pcap
        addr.SetBase(ns.Ipv4Address(f"10.1.{i}.0"), ns.Ipv4Mask("255.255.255.0"))
        addr.Assign(d)
        plain.Uninstall(d)
        d = access.Install(right.Get(0), receivers.Get(i))
        addr.SetBase(ns.Ipv4Address(f"10.2.{i}.0"), ns.Ipv4Mask("255.255.255.0"))
        rx.append(addr.Assign(d))
        plain.Uninstall(d)
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    i = 0
    for g in flows:
        for k in range(int(g.get("count", 1))):
            start = seconds(g.get("start", 0)) + k * seconds(g.get("start_step", 0))
            bulk = ns.BulkSendHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(rx[i].GetAddress(1), 5000).ConvertTo())
            bulk.SetAttribute("MaxBytes", ns.UintegerValue(0))
            bulk.SetAttribute("SendSize", ns.UintegerValue(mss))
            apps = bulk.Install(senders.Get(i))
            apps.Start(ns.Seconds(start))
            sink = ns.PacketSinkHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), 5000).ConvertTo())
            sinks.append(sink.Install(receivers.Get(i)).Get(0))
            starts.append(start)
            i += 1
    ns.Simulator.Stop(ns.Seconds(duration))
    t0 = time.process_time()
    ns.Simulator.Run()
    cpu = time.process_time() - t0
    goodput = [ns.DynamicCast[ns.PacketSink](s).GetTotalRx() * 8 / (duration - st) for s, st in zip(sinks, starts)]
    stats = qdiscs.Get(0).GetStats()
    out = {
        "goodput": goodput,
        "drops": int(stats.nTotalDroppedPackets),
        "marks": int(stats.nTotalMarkedPackets),
        "cpu_s": cpu,
        "events": int(ns.Simulator.GetEventCount()),
    }
    ns.Simulator.Destroy()
    return out


def jain(xs: list[float]) -> float:
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs)) if any(xs) else math.nan


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenario", type=Path)
    ap.add_argument("--set", action="append", default=[], dest="overrides")
    ap.add_argument("--json", action="store_true", help="print the comparison as one JSON object")
    ap.add_argument("--pcap", metavar="PREFIX", help="write ns-3's packets at the first sender's access link as PREFIX-N-1.pcap (PPP; `rttlab flows` reads it)")
    args = ap.parse_args()
    doc = tomllib.loads(args.scenario.read_text())
    overrides = [*args.overrides, "tcp.timestamps=true", "tcp.header=54B"]
    for o in overrides:
        set_path(doc, o)
    t0 = time.process_time()
    ours = rttlab.simulate(args.scenario, set=overrides)
    our_cpu = time.process_time() - t0
    theirs = run_ns3(doc, args.pcap)
    b = ours.channels.set_index("name").loc[ours.bottleneck]
    rows = [
        ("aggregate goodput Mb/s", ours.aggregate_goodput_bps / 1e6, sum(theirs["goodput"]) / 1e6),
        ("Jain index", ours.jain_index, jain(theirs["goodput"])),
        ("min flow goodput Mb/s", ours.flows.goodput_bps.min() / 1e6, min(theirs["goodput"]) / 1e6),
        ("max flow goodput Mb/s", ours.flows.goodput_bps.max() / 1e6, max(theirs["goodput"]) / 1e6),
        ("bottleneck drops", b.drops_overflow + b.drops_aqm, theirs["drops"]),
        ("bottleneck ECN marks", b.marks, theirs["marks"]),
        ("CPU s (run only)", our_cpu, theirs["cpu_s"]),
    ]
    if args.json:
        keys = ["goodput_bps", "jain", "min_flow_bps", "max_flow_bps", "drops", "marks", "cpu_s"]
        pick = lambda i: {k: float(row[i]) * (1e6 if k.endswith("bps") else 1) for k, row in zip(keys, rows)}  # noqa: E731
        doc_out = {"scenario": str(args.scenario), "overrides": args.overrides,
                   "seed": doc["simulation"].get("seed", 1), "rttlab": pick(1), "ns3": pick(2)}
        doc_out["ns3"]["events"] = theirs["events"]
        print(json.dumps(doc_out))
        return
    print(f"{args.scenario}  {' '.join(args.overrides)}")
    print(f"{'':26}{'rttlab':>12}{'ns-3':>12}")
    for name, a, c in rows:
        print(f"{name:26}{a:12.4g}{c:12.4g}")


if __name__ == "__main__":
    sys.exit(main())
