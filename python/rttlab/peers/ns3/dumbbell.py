"""ns-3 (PyPI wheel ``ns3``, the ``ns3`` extra) as a peer: run a resolved rttlab dumbbell scenario in
ns-3 and return the result in rttlab's schema (:class:`rttlab.sim.Result`).

    from rttlab import Scenario, ns3
    s = Scenario.load("examples/scenarios/dumbbell-n10-red.toml").with_(ns3.COMPARABLE)
    theirs = ns3.simulate(s)          # Result: flows (goodput), channels (bottleneck drops, marks)
    ours = rttlab.simulate(s)

The mapping reads the *resolved* scenario (``Scenario.resolved()``: every default filled in by the
core), so ns-3 gets rttlab's defaults — e.g. the 100-packet queue of an access link that names none —
not defaults of its own. ns-3 is configured to match rttlab's model as far as it goes: NewReno
with classic (RFC 6582) recovery, SACK as in the scenario, no Limited Transmit, delayed ACKs as in
the scenario, the bottleneck queue as a queue disc (FIFO, or RED with the scenario's thresholds,
``Wait`` off, ``Gentle`` as given, ``LinkBandwidth`` the link's rate) in front of a 1-packet device
queue, access links with device queues of the scenario's limit. :data:`COMPARABLE` holds the
overrides that make rttlab match what ns-3 always does (timestamps on, 54-byte headers: IP 20 +
TCP 32 + PPP 2). Only dumbbells of bulk flows without error models or scheduled losses map; any
other scenario raises :class:`Ns3Unsupported` naming the key.

Seeding: the scenario's seed is ns-3's run number with its seed fixed at 1 — only runs (substreams)
of one seed are guaranteed independent (ns-3 manual, "Seeding and independent replications").
ns-3 gives a random variable created without a stream number (RED's drop draws) the next stream
from a process-wide counter; every run rewinds that counter first, so it draws exactly what it
would in a fresh process, whatever ran before it (tests/test_ns3_peer.py). A Dask worker can
therefore run many ns-3 runs after paying the ≈ 30 s import once.

What ns-3 does not report here is NaN in the result (per-flow retransmissions, timeouts; the
bottleneck's utilisation), never a made-up zero. Bottleneck drops are the queue disc's total
(``drops_overflow``; ``drops_aqm`` is null: ns-3's drop reasons are not split out).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from rttlab.experiments.simulators import Simulator
from rttlab.sim.scenario import Scenario
from rttlab.units import seconds

#: Overrides that make rttlab's model match ns-3's fixed behaviour (see the module doc).
COMPARABLE: dict[str, Any] = {"tcp.timestamps": True, "tcp.header": "54B"}


class Ns3Unsupported(Exception):
    """The scenario uses something the mapping does not carry to ns-3."""


def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as v

    try:
        return f"ns3 {v('ns3')}"
    except PackageNotFoundError:
        return "ns3 (unknown version)"


def _seconds(text: str) -> float:
    try:
        return seconds(str(text), "duration")
    except ValueError as e:
        raise Ns3Unsupported(str(e)) from None


def _bytes(text: str) -> int:
    return int(str(text).removesuffix("B"))


#: rttlab's congestion controls that ns-3 has, with the parameters that map to its attributes
#: (attribute, kind: "uint" | "double" | "bool").
_SOCKETS: dict[str, tuple[str, dict[str, tuple[str, str]]]] = {
    "newreno": ("ns3::TcpNewReno", {}),
    "vegas": (
        "ns3::TcpVegas",
        {"alpha": ("Alpha", "uint"), "beta": ("Beta", "uint"), "gamma": ("Gamma", "uint")},
    ),
    "veno": ("ns3::TcpVeno", {"beta": ("Beta", "uint")}),
    # ns-3's TcpCubic follows Linux's tcp_cubic.c; its HyStart is Linux's (ACK train + delay).
    "cubic": (
        "ns3::TcpCubic",
        {
            "beta": ("Beta", "double"),
            "c": ("C", "double"),
            "fast_convergence": ("FastConvergence", "bool"),
            "tcp_friendliness": ("TcpFriendliness", "bool"),
            "hystart": ("HyStart", "bool"),
        },
    ),
    "bbr": ("ns3::TcpBbr", {}),
}

#: Values every run sets, so one run's attributes never leak into the next in the same process
#: (Config::SetDefault is global): rttlab's defaults (src/sim/tcp/cc/cubic.rs PARAMS).
_ALWAYS: dict[str, dict[str, str]] = {
    "cubic": {
        "beta": "0.7001953125",
        "c": "0.400390625",
        "fast_convergence": "true",
        "tcp_friendliness": "true",
        "hystart": "linux",
    },
}


def _value(name: str, param: str, kind: str, text: Any) -> int | float | bool:
    text = str(text).lower()
    if kind == "uint":
        return int(text)
    if kind == "double":
        return float(text)
    if param == "hystart":
        if text == "hystart++":
            raise Ns3Unsupported(
                f'tcp.cc.hystart: ns-3\'s TcpCubic has Linux\'s HyStart only ("linux" or "off"), not {text!r}'
            )
        return text == "linux"
    return text == "true"


def _congestion_control(cc: str | dict[str, Any]) -> tuple[str, dict[str, int | float | bool]]:
    """ns-3's socket type and attribute values for ``tcp.cc`` (a name or a ``{name, ...}`` table)."""
    name, given = (
        (cc, {})
        if isinstance(cc, str)
        else (cc["name"], {k: v for k, v in cc.items() if k != "name"})
    )
    if name not in _SOCKETS:
        raise Ns3Unsupported(f"tcp.cc: {name!r} is not mapped to ns-3 ({', '.join(_SOCKETS)})")
    socket, attributes = _SOCKETS[name]
    # ns-3's TcpVegas always normalises diff as Brakmo & Peterson (diff = "paper"); rttlab's
    # choice of normalisation is compared against it as it stands (docs/ns3-comparison.md, Vegas).
    if name == "vegas":
        given.pop("diff", None)
    # The canonical form writes every declared parameter; one at rttlab's default that ns-3 has
    # no attribute for (BBR's send_quantum = 0) was not asked for, and ns-3 does without it.
    given = {k: v for k, v in given.items() if k in attributes or not _at_default(name, k, v)}
    unknown = set(given) - set(attributes)
    if unknown:
        raise Ns3Unsupported(f"tcp.cc.{sorted(unknown)[0]}: not mapped to ns-3's {socket}")
    given = {**_ALWAYS.get(name, {}), **given}
    return socket, {
        attributes[k][0]: _value(name, k, attributes[k][1], v) for k, v in given.items()
    }


def _at_default(scheme: str, param: str, value: Any) -> bool:
    """Whether ``value`` of ``tcp.cc`` parameter ``param`` is the default ``scheme`` declares."""
    from rttlab import _core

    spec = next(
        (
            p
            for c in _core.catalogue()
            if c["family"] == "cc" and c["name"] == scheme
            for p in c["params"]
            if p["name"] == param
        ),
        None,
    )
    if spec is None:
        return False
    if spec["kind"] == "duration":
        return _core.parse_duration(str(value)) == _core.parse_duration(spec["default"])
    try:
        return float(value) == float(spec["default"])
    except (TypeError, ValueError):
        return str(value).lower() == spec["default"].lower()


def check(doc: dict[str, Any]) -> None:
    """Raise :class:`Ns3Unsupported` for what the mapping cannot express (``doc`` resolved)."""
    topo, tcp = doc["topology"], doc["tcp"]
    if doc["simulation"]["warmup"] != "0ns":
        raise Ns3Unsupported(
            "simulation.warmup: ns-3 goodput is measured from each flow's start; warm-up is not mapped"
        )
    if sum(int(g["count"]) for g in doc["flows"]) > 250:
        raise Ns3Unsupported("flows: at most 250 flows map to ns-3 (one /24 per access link)")
    if topo["kind"] != "dumbbell":
        raise Ns3Unsupported("topology.kind: only dumbbells map to ns-3")
    if topo.get("receiver_access"):
        raise Ns3Unsupported("topology.receiver_access: not mapped to ns-3")
    for link in ("bottleneck", "access"):
        if topo[link].get("error", {}).get("kind") not in (None, "none"):
            raise Ns3Unsupported(f"topology.{link}.error: error models are not mapped to ns-3")
        if topo[link].get("losses"):
            raise Ns3Unsupported(f"topology.{link}.losses: scheduled losses are not mapped to ns-3")
        if topo[link].get("agent"):
            raise Ns3Unsupported(
                f"topology.{link}.agent: link agents (Snoop) are not mapped to ns-3"
            )
        for key in ("random_spikes", "arq"):
            if topo[link].get(key):
                raise Ns3Unsupported(
                    f"topology.{link}.{key}: a link's delay variation is not mapped to ns-3"
                )
    if topo["access"]["queue"]["kind"] != "droptail":
        raise Ns3Unsupported("topology.access.queue.kind: access links map as droptail only")
    if topo["bottleneck"]["queue"]["kind"] not in ("droptail", "red"):
        raise Ns3Unsupported(
            f"topology.bottleneck.queue.kind: {topo['bottleneck']['queue']['kind']!r} is not mapped to ns-3"
        )
    _congestion_control(tcp["cc"])
    if tcp.get("receiver_ecn") is False:
        raise Ns3Unsupported("tcp.receiver_ecn: a receiver refusing ECN is not mapped to ns-3")
    for i, g in enumerate(doc["flows"]):
        if g.get("app") and g["app"].get("kind", "bulk") != "bulk":
            raise Ns3Unsupported(f"flows.{i}.app: only bulk flows map to ns-3")
        if g.get("bytes") not in (None, "inf"):
            raise Ns3Unsupported(f"flows.{i}.bytes: only unlimited bulk flows map to ns-3")
        if str(g.get("start", "0s")).startswith("uniform") or g.get("start_jitter", "0ns") != "0ns":
            raise Ns3Unsupported(f"flows.{i}.start: random starts are not mapped to ns-3")
        if g.get("tcp"):
            raise Ns3Unsupported(f"flows.{i}.tcp: per-group TCP settings are not mapped to ns-3")
        if g.get("stop"):
            raise Ns3Unsupported(f"flows.{i}.stop: flows that stop are not mapped to ns-3")


def simulate(
    scenario: Any,
    pcap: str | None = None,
    ack_trace: Sequence[int] = (),
    cc_type: str | None = None,
):  # -> rttlab.sim.Result
    """Run ``scenario`` (a :class:`rttlab.Scenario` or canonical TOML text) in ns-3. ``ack_trace=[i, ...]``
    records those flows' sender state at every ACK they receive (:mod:`.ack_trace`) as the Arrow table
    ``result.tables["ack_trace"]``. ``cc_type`` replaces the congestion control's ns-3 TypeId (its
    parameters kept), for the Linux-like variants of :mod:`.ack_trace` (docs/ns3-comparison.md)."""
    import numpy as np
    import pyarrow as pa

    from rttlab import _core
    from rttlab.sim.run import Result, conform  # pandas: only when a run is made

    s = scenario if isinstance(scenario, Scenario) else Scenario.from_toml(scenario)
    doc = s.resolved()
    check(doc)
    if cc_type is not None:
        from rttlab.peers.ns3.ack_trace import VARIANTS

        socket = _congestion_control(doc["tcp"]["cc"])[0]
        if VARIANTS.get(cc_type) != socket:
            raise Ns3Unsupported(
                f"cc_type: {cc_type!r} is no variant of {socket} (variants: {', '.join(f'{k} of {v}' for k, v in VARIANTS.items())})"
            )
    raw = _run(doc, pcap, ack_trace, cc_type, _core.flow_tcp(s.canonical_toml)[0])
    duration = _seconds(doc["simulation"]["duration"])
    goodput = np.asarray(raw["goodput"], dtype=float)
    n = len(goodput)
    # rttlab's result schema; what ns-3 does not report here stays null (conform).
    flows = conform(
        "flows",
        {
            "flow": np.arange(n, dtype=np.uint32),
            "goodput_bps": goodput,
            "bytes_delivered": np.asarray(raw["bytes"], dtype=np.uint64),
            "start": np.asarray(raw["starts"], dtype=float),
        },
    )
    b = doc["topology"]["bottleneck"]
    channels = conform(
        "channels",
        {
            "channel": [0],
            "name": ["bottleneck"],
            "bandwidth_bps": [_core_bandwidth(b["bandwidth"])],
            "drops_overflow": [raw["drops"]],
            "drops_corruption": [0],
            "marks": [raw["marks"]],
        },
    )
    jain = float(goodput.sum() ** 2 / (n * (goodput**2).sum())) if n and goodput.any() else None
    return Result(
        name=doc["simulation"].get("name"),
        seed=int(doc["simulation"]["seed"]),
        duration=duration,
        events=int(raw["events"]),
        event_hash="",
        # Every flow's bytes over the common window [0, duration] (ns-3 runs have no warm-up):
        # the link's goodput, as the simulator's (docs/schema.md), not the sum of the flows' rates.
        aggregate_goodput_bps=float(sum(raw["bytes"]) * 8 / duration) if duration > 0 else 0.0,
        jain_index=jain,
        tables={
            "flows": flows,
            "channels": channels,
            **(
                {"ack_trace": pa.Table.from_pandas(raw["ack_trace"], preserve_index=False)}
                if "ack_trace" in raw
                else {}
            ),
        },
        bottleneck="bottleneck",
    )


def _core_bandwidth(text: str) -> int:
    for unit, scale in (("Gbps", 10**9), ("Mbps", 10**6), ("kbps", 10**3), ("bps", 1)):
        if text.endswith(unit):
            return int(text.removesuffix(unit)) * scale
    raise Ns3Unsupported(f"cannot read bandwidth {text!r}")


def _run(
    doc: dict[str, Any],
    pcap: str | None,
    ack_trace: Sequence[int],
    cc_type: str | None,
    typed_tcp: dict[str, Any],
) -> dict[str, Any]:
    """One ns-3 run of the resolved scenario ``doc``; ``typed_tcp`` is its flows' TCP settings as
    the core reads them (``_core.flow_tcp``: the delayed-ACK timer whichever way it was written)."""
    from rttlab.peers.ns3 import import_ns

    ns = import_ns()  # slow import (≈ 30 s), only when a run needs it

    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(int(doc["simulation"]["seed"]))
    # Random variables created without a stream number take the next one from a process-wide
    # counter: rewind it, so a run draws what it would draw in a fresh process, whatever ran before.
    ns.RngSeedManager.ResetNextStreamIndex()
    topo, tcp, flows = doc["topology"], doc["tcp"], doc["flows"]
    duration = _seconds(doc["simulation"]["duration"])
    mss = _bytes(tcp["mss"])
    socket, params = _congestion_control(tcp["cc"])
    # The parameters are attributes of the mapped TypeId; a variant (cc_type) inherits them, and
    # ns-3 refuses (NS_FATAL) a default set under the variant's own name.
    owner = socket
    if cc_type is not None:
        from rttlab.peers.ns3 import ack_trace as variants

        variants.register_variants()
        params = {k: v for k, v in params.items() if k in {"Alpha", "Beta", "Gamma"}}
        socket = cc_type
    ns.Config.SetDefault("ns3::TcpL4Protocol::SocketType", ns.StringValue(socket))
    # ns-3's own estimator and timer defaults, in case an rttlab.peers.ns3.rtt run in this process
    # (a Dask worker runs any kind of run) installed rttlab's.
    ns.Config.SetDefault(
        "ns3::TcpL4Protocol::RttEstimatorType",
        ns.TypeIdValue(ns.TypeId.LookupByName("ns3::RttMeanDeviation")),
    )
    ns.Config.SetDefault("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.Seconds(1)))
    ns.Config.SetDefault("ns3::TcpSocketBase::ClockGranularity", ns.TimeValue(ns.MilliSeconds(1)))
    for attribute, value in params.items():
        wrap = (
            ns.BooleanValue
            if isinstance(value, bool)
            else ns.DoubleValue
            if isinstance(value, float)
            else ns.UintegerValue
        )
        ns.Config.SetDefault(f"{owner}::{attribute}", wrap(value))
    # BBR paces (ns-3's TcpBbr asks for it too); nothing else does, as in rttlab.
    ns.Config.SetDefault(
        "ns3::TcpSocketState::EnablePacing", ns.BooleanValue(socket == "ns3::TcpBbr")
    )
    ns.Config.SetDefault(
        "ns3::TcpL4Protocol::RecoveryType",
        ns.TypeIdValue(ns.TypeId.LookupByName("ns3::TcpClassicRecovery")),
    )
    ns.Config.SetDefault("ns3::TcpSocketBase::Sack", ns.BooleanValue(bool(tcp["sack"])))
    ns.Config.SetDefault("ns3::TcpSocketBase::LimitedTransmit", ns.BooleanValue(False))
    ns.Config.SetDefault(
        "ns3::TcpSocketBase::UseEcn", ns.StringValue("On" if tcp["ecn"] else "Off")
    )
    ns.Config.SetDefault("ns3::TcpSocket::SegmentSize", ns.UintegerValue(mss))
    ns.Config.SetDefault("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(int(tcp["init_cwnd"])))
    delack_ns = typed_tcp["delayed_ack_ns"]  # None: "off", "none" or "false"
    ns.Config.SetDefault(
        "ns3::TcpSocket::DelAckCount",
        ns.UintegerValue(1 if delack_ns is None else int(tcp["delayed_ack_segments"])),
    )
    if delack_ns is not None:
        ns.Config.SetDefault(
            "ns3::TcpSocket::DelAckTimeout", ns.TimeValue(ns.Seconds(delack_ns / 1e9))
        )
    ns.Config.SetDefault("ns3::TcpSocket::SndBufSize", ns.UintegerValue(1 << 26))
    ns.Config.SetDefault("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(1 << 26))

    if ack_trace:
        from rttlab.peers.ns3 import ack_trace as tracer

        tracer.clear()
    n = sum(int(g["count"]) for g in flows)
    left, right, senders, receivers = (ns.NodeContainer() for _ in range(4))
    left.Create(1), right.Create(1), senders.Create(n), receivers.Create(n)
    stack = ns.InternetStackHelper()
    for c in (left, right, senders, receivers):
        stack.Install(c)

    def p2p(link: dict, device_queue: str) -> Any:
        h = ns.PointToPointHelper()
        h.SetDeviceAttribute("DataRate", ns.StringValue(link["bandwidth"]))  # canonical: "10Mbps"
        h.SetChannelAttribute("Delay", ns.StringValue(link["delay"]))  # canonical: "20ms", "0ns"
        h.SetQueue("ns3::DropTailQueue", "MaxSize", ns.QueueSizeValue(ns.QueueSize(device_queue)))
        return h

    b = topo["bottleneck"]
    q = b["queue"]
    limit = q["limit"]  # canonical "100p" / "150000B": ns-3's QueueSize reads both spellings
    tc = ns.TrafficControlHelper()
    if q["kind"] == "droptail":
        tc.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", ns.QueueSizeValue(ns.QueueSize(limit)))
    else:
        # rttlab's RED defaults (docs/algorithms.md §9.7, ns-2's) where the scenario names none.
        tc.SetRootQueueDisc("ns3::RedQueueDisc", "MaxSize", ns.QueueSizeValue(ns.QueueSize(limit)))
        ns.Config.SetDefault("ns3::RedQueueDisc::MinTh", ns.DoubleValue(float(q.get("min_th", 5))))
        ns.Config.SetDefault("ns3::RedQueueDisc::MaxTh", ns.DoubleValue(float(q.get("max_th", 15))))
        ns.Config.SetDefault("ns3::RedQueueDisc::QW", ns.DoubleValue(float(q.get("w_q", 0.002))))
        ns.Config.SetDefault(
            "ns3::RedQueueDisc::LInterm", ns.DoubleValue(1.0 / float(q.get("max_p", 0.1)))
        )
        ns.Config.SetDefault(
            "ns3::RedQueueDisc::Gentle", ns.BooleanValue(bool(q.get("gentle", False)))
        )
        ns.Config.SetDefault("ns3::RedQueueDisc::Wait", ns.BooleanValue(False))
        ns.Config.SetDefault(
            "ns3::RedQueueDisc::UseEcn", ns.BooleanValue(bool(q.get("ecn", False)))
        )
        ns.Config.SetDefault(
            "ns3::RedQueueDisc::MeanPktSize",
            ns.UintegerValue(_bytes(q.get("mean_packet", "1500B"))),
        )
        # The idle-time correction counts the packets the link could have sent while idle at
        # LinkBandwidth (default 1.5 Mb/s, not the link's own rate); rttlab uses the real link.
        ns.Config.SetDefault(
            "ns3::RedQueueDisc::LinkBandwidth", ns.DataRateValue(ns.DataRate(b["bandwidth"]))
        )
        ns.Config.SetDefault(
            "ns3::RedQueueDisc::LinkDelay", ns.TimeValue(ns.Seconds(_seconds(b["delay"])))
        )
    bottleneck = p2p(b, "1p").Install(left.Get(0), right.Get(0))
    qdiscs = tc.Install(bottleneck)  # before addresses, so ns-3 installs no default queue disc
    addr = ns.Ipv4AddressHelper()
    addr.SetBase(ns.Ipv4Address("10.0.0.0"), ns.Ipv4Mask("255.255.255.0"))
    addr.Assign(bottleneck)
    access = p2p(topo["access"], topo["access"]["queue"]["limit"])
    plain = ns.TrafficControlHelper()
    rx = []
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
    sinks, starts = [], []
    i = 0
    for g in flows:
        for k in range(int(g["count"])):
            start = _seconds(g["start"]) + k * _seconds(g["start_step"])
            bulk = ns.BulkSendHelper(
                "ns3::TcpSocketFactory", ns.InetSocketAddress(rx[i].GetAddress(1), 5000).ConvertTo()
            )
            bulk.SetAttribute("MaxBytes", ns.UintegerValue(0))
            bulk.SetAttribute("SendSize", ns.UintegerValue(mss))
            apps = bulk.Install(senders.Get(i))
            apps.Start(ns.Seconds(start))
            if i in ack_trace:
                tracer.attach(apps.Get(0), i, start)
            sink = ns.PacketSinkHelper(
                "ns3::TcpSocketFactory",
                ns.InetSocketAddress(ns.Ipv4Address.GetAny(), 5000).ConvertTo(),
            )
            sinks.append(sink.Install(receivers.Get(i)).Get(0))
            starts.append(start)
            i += 1
    ns.Simulator.Stop(ns.Seconds(duration))
    t0 = time.process_time()
    ns.Simulator.Run()
    cpu = time.process_time() - t0
    rx_bytes = [int(ns.DynamicCast[ns.PacketSink](s).GetTotalRx()) for s in sinks]
    stats = qdiscs.Get(0).GetStats()
    out = {
        "goodput": [x * 8 / (duration - st) for x, st in zip(rx_bytes, starts)],
        "bytes": rx_bytes,
        "starts": starts,
        "drops": int(stats.nTotalDroppedPackets),
        "marks": int(stats.nTotalMarkedPackets),
        "cpu_s": cpu,
        "events": int(ns.Simulator.GetEventCount()),
    }
    if ack_trace:
        out["ack_trace"] = tracer.collect()
    ns.Simulator.Destroy()
    return out


def _sweep_run(scenario_toml: str, traces: Sequence[str]) -> Any:
    """A sweep's run: ns-3 records none of rttlab's traces, so ``traces`` asks for nothing here."""
    return simulate(scenario_toml)


#: ns-3 as an engine of sweeps (``simulator = "ns3"``): rttlab's scenarios, mapped by :func:`check`.
def missing() -> str | None:
    """Why the ns-3 engine cannot run here (None: it can): the ``ns3`` extra not installed."""
    from importlib.util import find_spec

    if find_spec("ns") is None:
        return "the ns-3 wheel is not installed: pip install 'rttlab[ns3]'"
    return None


SIMULATOR = Simulator("ns3", run=_sweep_run, version=version, missing=missing)
