"""Nunes et al. 2011's MANET simulations (Nunes et al., ICCCN 2011, §IV) in ns-3, with rttlab's estimators
inside ns-3's TCP (:mod:`rttlab.peers.ns3.rtt`): 802.11b ad hoc, AODV, random waypoint, FTP bulk flows.

A MANET scenario is a TOML table of its own (ns-3 runs it; rttlab's core has no wireless model),
with every default written here and in docs/reproductions/nunes-manet.md::

    [simulation]
    duration = "1500s"      # the paper: 25 minutes (scenario III: 90 minutes)
    seed = 1                # ns-3's run number (seed fixed at 1) and the traffic draws
    name = "I"

    [network]
    nodes = 20
    area = [1500.0, 1000.0] # metres
    mobility = "random-waypoint"   # or "static": uniformly placed, never moving (scenario II)
    speed = [1.0, 50.0]     # m/s, uniform per leg
    pause = "0s"
    range = 375.0           # metres: a unit-disk radio
    data_rate = "DsssRate2Mbps"

    [traffic]
    kind = "ftp"            # random starts and sizes; "bursty": scenario III
    flows = 3               # the paper's "concurrent flow counts"
    packets = [1000, 100000]  # per flow, uniform integer ("ftp")
    packet = 512            # bytes of payload per segment
    period = "200s"         # "bursty": every node starts a flow of burst_packets every period
    burst_packets = 1000

    [tcp]
    rto = { estimator = "rfc6298", min_rto = "1s", granularity = "500ms" }   # any rttlab estimator
    sample_clock = "500ms"  # samples measured in BSD slow-timer ticks of this length; "0s": exact
    sack = false            # optional (absent: false, BSD TCP-Lite); true: RFC 6675 in ns-3

    [metrics]
    tick = "500ms"          # the unit of the prediction error (QualNet's BSD slow timer)

    [estimators]            # optional labelled specs; tcp.estimator = "jacobson" picks one
    jacobson = { estimator = "rfc6298", min_rto = "1s", granularity = "500ms" }

Choices where the paper is silent (each also in docs/reproductions/nunes-manet.md):

- **PHY/MAC** (``network.range``, ``network.data_rate``): 802.11b ad hoc (``AdhocWifiMac``),
  constant rate 2 Mb/s DSSS for data (``DsssRate2Mbps``, the classic MANET set-up of ns-2 and
  QualNet studies) and 1 Mb/s for control frames; a unit-disk radio (ns-3's
  ``RangePropagationLossModel``): full power within 375 m, nothing beyond. QualNet's defaults are
  not public; at ns-2's classic 250 m the static 20-node network in 1500 m × 1000 m is mostly
  partitioned (measured: 6 of 7 flows of a 120 s run never connected) and at ns-3's
  ``manet-routing-compare`` settings (Friis, 7.5 dBm, 11 Mb/s) none did, while the paper's static
  scenario delivers traffic; 375 m connects most pairs.
- **Queues**: no traffic-control queue disc (removed after addressing, as a QualNet node has one
  IP output queue); the only queue is the Wi-Fi MAC queue with ns-3's defaults (500 packets,
  500 ms maximum sojourn). Queue length = that queue's bytes, sampled every 100 ms on every node,
  averaged over nodes and time.
- **Flows** ("evenly distributed among nodes"): flow *i*'s source is node *i* mod N, its
  destination uniform among the other nodes; start uniform in [0, duration − 60 s) (so that no
  flow starts in the last minute); size uniform in [1000, 100000] packets. "Concurrent flow count"
  is read as the number of flows of the run. Drawn with NumPy's PCG64 seeded by (seed, 14),
  independent of ns-3's streams.
- **Bursty** (scenario III): node *k* starts a ``burst_packets`` flow at k·period/N + j·period,
  j = 0, 1, … (staggered by node, so the 20 nodes do not all start at the same instant), to a
  destination drawn per flow.
- **TCP** (BSD TCP-Lite-like, which QualNet's TCP derives from): NewReno with classic recovery
  (RFC 6582, not ns-3's default PRR), SACK off, no Limited Transmit, no ECN, 512-byte segments,
  delayed ACKs (2 segments, 200 ms), initial window 1 segment, send/receive buffers 128 KiB
  (window scaling on), timestamps on (ns-3's default: a sample from every new ACK; BSD timed one
  segment per window — fewer samples).
- **Samples** (``tcp.sample_clock``): QualNet's TCP is BSD TCP-Lite-derived, which measures an
  RTT by counting 500 ms slow-timer ticks (``t_rtt`` = 1 at the send, +1 per tick); the paper's
  RTT_min = 1 tick and its errors "in ticks" fit that. By default every sample reaches every
  estimator so: (1 + ticks crossed between send and ACK) · 500 ms, ticks at multiples of 500 ms
  of simulated time. ``"0s"`` feeds ns-3's exact samples instead (then a 500 ms-tick Fixed-Share
  can never predict below its smallest expert, 1 tick, on ~100 ms MANET RTTs).
- **Estimators**: Jacobson = rttlab's ``rfc6298`` with the paper's eq. (3) floor of 2 ticks
  (min_rto 1 s) and G = 1 tick (500 ms); Fixed-Share = ``fixed-share`` with tick 500 ms (128 ticks
  = 64 s = BSD's maximum RTO at QualNet's 500 ms slow timer, docs/algorithms.md §6.2), N 100, η 2,
  α 0.08, RTO by the paper's eq. (3) around the prediction in nunes-manet.toml (its primary
  reading; ``rto = "rfc6298"``), by Linux's rules in its ``linux-rule`` reading; Eifel = ``eifel`` with its
  flight-based gain from ns-3's cwnd (``one-over-flight``: timestamps give a sample per ACK).
- **Metrics** (per run): ``error_before_ticks`` / ``error_after_ticks`` — mean |prediction −
  sample| in ticks over every sample of every flow, the prediction made before the sample and the
  one after it; ``retx_pct`` — 100 · retransmitted / transmitted data segments; ``packets_delivered``
  — payload bytes received by all sinks / packet size; ``mean_cwnd`` — mean over flows of each
  flow's time-weighted cwnd (segments, from its start to its last sample; cwnd above the
  receiver's 128 KiB window counts as that window: ns-3 keeps growing cwnd while the receiver's
  window limits the flight, BSD caps it); ``mean_queue_bytes``.
"""

from __future__ import annotations

import copy
import hashlib
import json
import time
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property
from importlib import resources
from typing import Any

from rttlab import __version__, _core
from rttlab.experiments.simulators import Simulator
from rttlab.peers.ns3 import dumbbell
from rttlab.sim.scenario import parse_assignment, set_path, toml_error
from rttlab.units import seconds

#: Bump when the meaning of a MANET scenario or its results changes (part of the run's hash).
MANET_SCHEMA = 1
#: Send and receive buffers (bytes); the receiver's window, and the cap of the mean cwnd.
BUFFER = 131072

DEFAULTS: dict[str, Any] = {
    "simulation": {"duration": "1500s", "seed": 1},
    "network": {
        "nodes": 20,
        "area": [1500.0, 1000.0],
        "mobility": "random-waypoint",
        "speed": [1.0, 50.0],
        "pause": "0s",
        "range": 375.0,
        "data_rate": "DsssRate2Mbps",
    },
    "traffic": {
        "kind": "ftp",
        "flows": 3,
        "packets": [1000, 100000],
        "packet": 512,
        "period": "200s",
        "burst_packets": 1000,
    },
    "tcp": {
        "rto": {"estimator": "rfc6298", "min_rto": "1s", "granularity": "500ms"},
        "sample_clock": "500ms",
    },
    "metrics": {"tick": "500ms"},
}
_KNOWN = {
    "simulation": {"duration", "seed", "name"},
    "network": {"nodes", "area", "mobility", "speed", "pause", "range", "data_rate"},
    "traffic": {"kind", "flows", "packets", "packet", "period", "burst_packets"},
    "tcp": {"rto", "sample_clock", "estimator", "sack"},
    "estimators": None,  # any labels
    "metrics": {"tick"},
}


def _error(message: str) -> _core.ScenarioError:
    return _core.ScenarioError(message)


def _seconds(text: Any, where: str) -> float:
    try:
        return seconds(str(text), where)
    except ValueError as e:
        raise _error(str(e)) from None


class ManetScenario:
    """A MANET scenario (the module doc): the interface of :class:`rttlab.Scenario` that sweeps use."""

    def __init__(self, doc: Mapping[str, Any], source: str | None = None) -> None:
        self.doc = copy.deepcopy(dict(doc))
        self.source = source

    @classmethod
    def from_toml(cls, text: str, source: str | None = None) -> ManetScenario:
        try:
            return cls(tomllib.loads(text), source)
        except tomllib.TOMLDecodeError as e:
            raise _error(f"{source or 'scenario'}: not valid TOML: {toml_error(text, e)}") from None

    def with_(self, overrides: Mapping[str, Any] | Iterable[str] = (), /) -> ManetScenario:
        doc = copy.deepcopy(self.doc)
        items = (
            list(overrides.items())
            if isinstance(overrides, Mapping)
            else [parse_assignment(o) for o in overrides]
        )
        for path, value in items:
            set_path(doc, path, value)
        return ManetScenario(doc, self.source)

    def with_seed(self, seed: int) -> ManetScenario:
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise _error(f"seed must be a non-negative integer, got {seed!r}")
        return self.with_({"simulation.seed": seed})

    def resolved(self) -> dict[str, Any]:
        """Every default filled in, checked: an unknown key or a bad value raises
        :class:`rttlab.ScenarioError` naming it."""
        where = f"{self.source}: " if self.source else ""
        out = copy.deepcopy(DEFAULTS)
        for table, values in self.doc.items():
            if table not in _KNOWN:
                raise _error(f"{where}{table}: unknown table (expected {', '.join(_KNOWN)})")
            if not isinstance(values, dict):
                raise _error(f"{where}{table}: expected a table")
            if table == "estimators":
                continue
            for k, v in values.items():
                if k not in _KNOWN[table]:
                    raise _error(
                        f"{where}{table}.{k}: unknown key (expected one of {', '.join(sorted(_KNOWN[table]))})"
                    )
                out[table][k] = copy.deepcopy(v)
        sim, net, traffic, tcp = out["simulation"], out["network"], out["traffic"], out["tcp"]
        for key in (
            "simulation.duration",
            "network.pause",
            "traffic.period",
            "metrics.tick",
            "tcp.sample_clock",
        ):
            t, k = key.split(".")
            _seconds(out[t][k], f"{where}{key}")
        if _seconds(sim["duration"], "") <= 0:
            raise _error(f"{where}simulation.duration: must be positive")

        def positive_int(key: str, value: Any, low: int = 1) -> None:
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise _error(f"{where}{key}: expected an integer ≥ {low}, got {value!r}")

        positive_int("simulation.seed", sim["seed"], 0)
        positive_int("network.nodes", net["nodes"], 2)
        positive_int("traffic.flows", traffic["flows"], 1)
        positive_int("traffic.packet", traffic["packet"], 1)
        positive_int("traffic.burst_packets", traffic["burst_packets"], 1)
        for key, pair, ordered in (
            ("network.area", net["area"], False),
            ("network.speed", net["speed"], True),
            ("traffic.packets", traffic["packets"], True),
        ):
            if not (
                isinstance(pair, list)
                and len(pair) == 2
                and all(
                    isinstance(x, (int, float)) and not isinstance(x, bool) and x >= 0 for x in pair
                )
            ):
                raise _error(f"{where}{key}: expected two non-negative numbers, got {pair!r}")
            if ordered and pair[0] > pair[1]:
                raise _error(f"{where}{key}: expected [low, high] with low ≤ high, got {pair!r}")
        if min(net["area"]) <= 0:
            raise _error(f"{where}network.area: expected [width, height] in metres, both positive")
        net["area"] = [float(x) for x in net["area"]]
        net["speed"] = [float(x) for x in net["speed"]]
        if (
            isinstance(net["range"], bool)
            or not isinstance(net["range"], (int, float))
            or net["range"] <= 0
        ):
            raise _error(
                f"{where}network.range: expected a positive radio range in metres, got {net['range']!r}"
            )
        net["range"] = float(net["range"])
        if net["data_rate"] not in (
            "DsssRate1Mbps",
            "DsssRate2Mbps",
            "DsssRate5_5Mbps",
            "DsssRate11Mbps",
        ):
            raise _error(
                f"{where}network.data_rate: expected an 802.11b DSSS mode (DsssRate1Mbps, DsssRate2Mbps, DsssRate5_5Mbps, DsssRate11Mbps), got {net['data_rate']!r}"
            )
        if net["mobility"] not in ("random-waypoint", "static"):
            raise _error(
                f"{where}network.mobility: expected 'random-waypoint' or 'static', got {net['mobility']!r}"
            )
        if net["mobility"] == "random-waypoint" and net["speed"][1] <= 0:
            raise _error(f"{where}network.speed: random waypoint needs a positive top speed")
        if traffic["kind"] not in ("ftp", "bursty"):
            raise _error(
                f"{where}traffic.kind: expected 'ftp' or 'bursty', got {traffic['kind']!r}"
            )
        # Keys that do not apply are dropped, so that two points meaning the same run are one.
        for k in (
            ("flows", "packets") if traffic["kind"] == "bursty" else ("period", "burst_packets")
        ):
            traffic.pop(k)
        if net["mobility"] == "static":
            net.pop("speed"), net.pop("pause")
        # `tcp.estimator` picks a labelled spec from [estimators] (a sweep varies the label); the
        # canonical form keeps the label and the chosen spec only.
        labels = self.doc.get("estimators", {})
        given_rto = "rto" in self.doc.get("tcp", {})
        if "estimator" in tcp and (
            labels or not given_rto
        ):  # the canonical form: label beside its spec
            if tcp["estimator"] not in labels:
                raise _error(
                    f"{where}tcp.estimator: {tcp['estimator']!r} is not in [estimators] ({', '.join(labels) or 'none'})"
                )
            tcp["rto"] = copy.deepcopy(labels[tcp["estimator"]])
        out.pop("estimators", None)
        if not isinstance(tcp.get("sack", False), bool):
            raise _error(f"{where}tcp.sack: expected true or false, got {tcp['sack']!r}")
        if tcp.get("sack") is False:
            tcp.pop("sack")  # false is the default (absent): one run, one hash
        rto = tcp["rto"]
        if not isinstance(rto, dict) or not isinstance(rto.get("estimator"), str):
            raise _error(f"{where}tcp.rto: expected a table with an estimator name")
        tcp.setdefault("estimator", rto["estimator"])
        params = {k: v for k, v in rto.items() if k != "estimator"}
        try:
            _core.check_estimator(rto["estimator"], [(k, str(v)) for k, v in params.items()])
        except Exception as e:  # noqa: BLE001 - rttlab's ParameterError: one line naming the key
            raise _error(f"{where}tcp.rto: {e}") from None
        return out

    @cached_property
    def canonical_toml(self) -> str:
        import tomli_w

        return tomli_w.dumps(self.resolved())

    @property
    def seed(self) -> int:
        return int(self.resolved()["simulation"]["seed"])

    @property
    def name(self) -> str | None:
        return self.doc.get("simulation", {}).get("name")

    @cached_property
    def hash(self) -> str:
        key = {"manet": self.resolved(), "rttlab": __version__, "manet_schema": MANET_SCHEMA}
        text = json.dumps(key, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode()).hexdigest()[:40]

    def get(self, path: str, default: Any = None) -> Any:
        node: Any = self.doc
        for key in path.split("."):
            if isinstance(node, dict) and key in node:
                node = node[key]
            else:
                return default
        return node


def flows_of(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The flows of a resolved scenario: source, destination, start (s), packets (module doc)."""
    import numpy as np

    sim, net, traffic = doc["simulation"], doc["network"], doc["traffic"]
    rng = np.random.Generator(np.random.PCG64([int(sim["seed"]), 14]))
    n = int(net["nodes"])
    duration = _seconds(sim["duration"], "simulation.duration")
    out = []

    def destination(src: int) -> int:
        d = int(rng.integers(0, n - 1))
        return d + (d >= src)

    if traffic["kind"] == "ftp":
        lo, hi = (int(x) for x in traffic["packets"])
        latest = max(duration - 60.0, duration / 2)
        for i in range(int(traffic["flows"])):
            src = i % n
            out.append(
                {
                    "src": src,
                    "dst": destination(src),
                    "start": float(rng.uniform(0.0, latest)),
                    "packets": int(rng.integers(lo, hi + 1)),
                }
            )
    else:
        period = _seconds(traffic["period"], "traffic.period")
        for j in range(int(duration // period) + 1):
            for k in range(n):
                start = j * period + k * period / n
                if start < duration:
                    out.append(
                        {
                            "src": k,
                            "dst": destination(k),
                            "start": start,
                            "packets": int(traffic["burst_packets"]),
                        }
                    )
        out.sort(key=lambda f: f["start"])
    return out


def simulate(scenario: Any):  # -> rttlab.sim.Result
    """Run a MANET scenario (a :class:`ManetScenario` or its TOML text) in ns-3."""
    import numpy as np
    import pandas as pd

    from rttlab.peers.ns3 import rtt as ns3_rtt
    from rttlab.sim.run import Result

    s = scenario if isinstance(scenario, ManetScenario) else ManetScenario.from_toml(scenario)
    doc = s.resolved()
    sim, net, traffic, tcp = doc["simulation"], doc["network"], doc["traffic"], doc["tcp"]
    duration = _seconds(sim["duration"], "simulation.duration")
    packet = int(traffic["packet"])
    flows = flows_of(doc)
    rto = dict(tcp["rto"])
    name = rto.pop("estimator")
    ns = ns3_rtt.install(
        name,
        rto,
        cwnd_cap_bytes=BUFFER,
        sample_tick_s=_seconds(tcp["sample_clock"], "tcp.sample_clock"),
        seed=int(sim["seed"]),
    )
    import cppyy

    if not hasattr(cppyy.gbl, "rttlab_manet"):
        cppyy.cppdef(resources.files(__package__).joinpath("mac_queue_monitor.cc").read_text())
    manet = cppyy.gbl.rttlab_manet

    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(int(sim["seed"]))
    ns.RngSeedManager.ResetNextStreamIndex()
    ns.Config.SetDefault("ns3::TcpL4Protocol::SocketType", ns.StringValue("ns3::TcpNewReno"))
    ns.Config.SetDefault("ns3::TcpSocketBase::Sack", ns.BooleanValue(bool(tcp.get("sack", False))))
    # Everything else set explicitly: a worker may have run another kind of ns-3 run before.
    ns.Config.SetDefault(
        "ns3::TcpL4Protocol::RecoveryType",
        ns.TypeIdValue(ns.TypeId.LookupByName("ns3::TcpClassicRecovery")),
    )
    ns.Config.SetDefault("ns3::TcpSocketBase::LimitedTransmit", ns.BooleanValue(False))
    ns.Config.SetDefault("ns3::TcpSocketBase::UseEcn", ns.StringValue("Off"))
    ns.Config.SetDefault("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(True))
    ns.Config.SetDefault("ns3::TcpSocketBase::WindowScaling", ns.BooleanValue(True))
    ns.Config.SetDefault("ns3::TcpSocket::DelAckCount", ns.UintegerValue(2))
    ns.Config.SetDefault("ns3::TcpSocket::DelAckTimeout", ns.TimeValue(ns.MilliSeconds(200)))
    ns.Config.SetDefault("ns3::TcpSocket::SegmentSize", ns.UintegerValue(packet))
    ns.Config.SetDefault("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(1))
    ns.Config.SetDefault("ns3::TcpSocket::SndBufSize", ns.UintegerValue(BUFFER))
    ns.Config.SetDefault("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(BUFFER))

    n = int(net["nodes"])
    nodes = ns.NodeContainer()
    nodes.Create(n)
    wifi = ns.WifiHelper()
    wifi.SetStandard(ns.WIFI_STANDARD_80211b)
    wifi.SetRemoteStationManager(
        "ns3::ConstantRateWifiManager",
        "DataMode",
        ns.StringValue(net["data_rate"]),
        "ControlMode",
        ns.StringValue("DsssRate1Mbps"),
    )
    channel = ns.YansWifiChannelHelper()
    channel.SetPropagationDelay("ns3::ConstantSpeedPropagationDelayModel")
    # A unit disk: full power within `range`, nothing beyond (ns-2's classic 250 m radio range).
    channel.AddPropagationLoss(
        "ns3::RangePropagationLossModel", "MaxRange", ns.DoubleValue(float(net["range"]))
    )
    phy = ns.YansWifiPhyHelper()
    phy.SetChannel(channel.Create())
    mac = ns.WifiMacHelper()
    mac.SetType("ns3::AdhocWifiMac")
    devices = wifi.Install(phy, mac, nodes)

    width, height = net["area"]
    mobility = ns.MobilityHelper()
    alloc = ns.CreateObject[ns.RandomRectanglePositionAllocator]()
    alloc.SetAttribute("X", ns.StringValue(f"ns3::UniformRandomVariable[Min=0.0|Max={width}]"))
    alloc.SetAttribute("Y", ns.StringValue(f"ns3::UniformRandomVariable[Min=0.0|Max={height}]"))
    streams = 0
    streams += alloc.AssignStreams(streams)
    mobility.SetPositionAllocator(alloc)
    if net["mobility"] == "random-waypoint":
        lo, hi = net["speed"]
        pause = _seconds(net["pause"], "network.pause")
        mobility.SetMobilityModel(
            "ns3::RandomWaypointMobilityModel",
            "Speed",
            ns.StringValue(f"ns3::UniformRandomVariable[Min={lo}|Max={hi}]"),
            "Pause",
            ns.StringValue(f"ns3::ConstantRandomVariable[Constant={pause}]"),
            "PositionAllocator",
            ns.PointerValue(alloc),
        )
    else:
        mobility.SetMobilityModel("ns3::ConstantPositionMobilityModel")
    mobility.Install(nodes)
    streams += mobility.AssignStreams(nodes, streams)
    streams += wifi.AssignStreams(devices, streams)

    aodv = ns.AodvHelper()
    stack = ns.InternetStackHelper()
    stack.SetRoutingHelper(aodv)
    stack.Install(nodes)
    streams += aodv.AssignStreams(nodes, streams)
    addr = ns.Ipv4AddressHelper()
    addr.SetBase(ns.Ipv4Address("10.1.0.0"), ns.Ipv4Mask("255.255.0.0"))
    ifaces = addr.Assign(devices)
    ns.TrafficControlHelper().Uninstall(devices)
    manet.Watch(devices, 0.1)

    sinks = []
    ports = {}
    for i, f in enumerate(flows):
        port = 5000 + i
        ports[i] = port
        bulk = ns.BulkSendHelper(
            "ns3::TcpSocketFactory",
            ns.InetSocketAddress(ifaces.GetAddress(f["dst"]), port).ConvertTo(),
        )
        bulk.SetAttribute("MaxBytes", ns.UintegerValue(f["packets"] * packet))
        bulk.SetAttribute("SendSize", ns.UintegerValue(packet))
        apps = bulk.Install(nodes.Get(f["src"]))
        apps.Start(ns.Seconds(f["start"]))
        ns3_rtt.attach(apps.Get(0), i, f["start"])
        sink = ns.PacketSinkHelper(
            "ns3::TcpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo()
        )
        sinks.append(sink.Install(nodes.Get(f["dst"])).Get(0))

    ns.Simulator.Stop(ns.Seconds(duration))
    t0 = time.process_time()
    ns.Simulator.Run()
    cpu = time.process_time() - t0
    try:
        rx = np.array(
            [int(ns.DynamicCast[ns.PacketSink](k).GetTotalRx()) for k in sinks], dtype=np.uint64
        )
        traces = ns3_rtt.collect(packet)
        queue_bytes = float(manet.MeanBytes())
        events = int(ns.Simulator.GetEventCount())
    finally:
        ns.Simulator.Destroy()

    per_flow = traces.pop("flows")
    starts = np.array([f["start"] for f in flows])
    goodput = rx * 8.0 / np.maximum(duration - starts, 1e-9)
    nan = np.full(len(flows), np.nan)
    table = pd.DataFrame(
        {
            "flow": np.arange(len(flows), dtype=np.uint32),
            "goodput_bps": goodput,
            "throughput_bps": nan,
            "offered_bps": nan,
            "bytes_delivered": rx,
            "retransmissions": per_flow["retransmissions"].to_numpy(dtype=float),
            "retx_timeout": nan,
            "retx_fast": nan,
            "retx_spurious": nan,
            "retx_necessary": nan,
            "timeouts": per_flow["timeouts"].to_numpy(dtype=float),
            "fast_recoveries": nan,
            "ecn_reductions": nan,
            "start": starts,
            "transfer_complete": rx >= np.array([f["packets"] * packet for f in flows]),
            "src": np.array([f["src"] for f in flows], dtype=np.uint32),
            "dst": np.array([f["dst"] for f in flows], dtype=np.uint32),
            "packets": np.array([f["packets"] for f in flows], dtype=np.uint64),
            "segments_sent": per_flow["segments_sent"].to_numpy(),
            "samples": per_flow["samples"].to_numpy(),
            "mean_cwnd": per_flow["mean_cwnd"].to_numpy(),
        }
    )
    channels = pd.DataFrame(
        {
            "channel": [0],
            "name": ["wifi"],
            "bandwidth_bps": [11_000_000],
            "utilisation": [np.nan],
            "drops_overflow": [np.nan],
            "drops_aqm": [np.nan],
            "drops_corruption": [np.nan],
            "marks": [np.nan],
        }
    )
    metrics = run_metrics(
        traces["rtt"], table, packet, _seconds(doc["metrics"]["tick"], "metrics.tick"), queue_bytes
    )
    metrics["cpu_ns3_s"] = cpu
    n_flows = len(flows)
    jain = (
        float(goodput.sum() ** 2 / (n_flows * (goodput**2).sum()))
        if n_flows and goodput.any()
        else None
    )
    return Result(
        name=sim.get("name"),
        seed=int(sim["seed"]),
        duration=duration,
        events=events,
        event_hash="",
        # Every flow's bytes over the common window [0, duration]: the network's goodput, as
        # the simulator's (docs/schema.md), not the sum of the flows' rates.
        aggregate_goodput_bps=float(rx.sum() * 8.0 / duration) if duration > 0 else 0.0,
        jain_index=jain,
        tables=_tables(table, channels, traces),
        bottleneck="wifi",
        metrics=metrics,
    )


def _tables(flows: Any, channels: Any, traces: dict[str, Any]) -> dict[str, Any]:
    """Arrow tables in rttlab's result schemas (rttlab.sim.schema): what ns-3 does not report is
    null; the MANET-only flow columns (packets, segments_sent, samples, transfer_complete) and the
    bridge's extra trace columns follow the schema's columns."""
    import pyarrow as pa

    from rttlab.sim.run import conform, schema

    def with_extras(name: str, frame: Any) -> Any:
        known = set(schema(name).names)
        table = conform(name, {k: frame[k].to_numpy() for k in frame.columns if k in known})
        for k in frame.columns:
            if k not in known:
                table = table.append_column(k, pa.array(frame[k].to_numpy(), from_pandas=True))
        return table

    out = {"flows": with_extras("flows", flows), "channels": with_extras("channels", channels)}
    for name, frame in traces.items():
        out[name] = pa.Table.from_pandas(frame, preserve_index=False)
    return out


def run_metrics(
    rtt: Any, flows: Any, packet: int, tick_s: float, queue_bytes: float
) -> dict[str, float]:
    """The per-run quantities of the paper's Figs 1–8 (definitions in the module doc)."""
    import numpy as np

    has = rtt["prediction"].notna()
    before = (
        float((rtt["prediction"][has] - rtt["sample"][has]).abs().mean() / tick_s)
        if has.any()
        else float("nan")
    )
    after = (
        float((rtt["prediction_after"] - rtt["sample"]).abs().mean() / tick_s)
        if len(rtt)
        else float("nan")
    )
    sent = float(flows["segments_sent"].sum())
    return {
        "error_before_ticks": before,
        "error_after_ticks": after,
        "retx_pct": 100.0 * float(flows["retransmissions"].sum()) / sent if sent else float("nan"),
        "packets_delivered": float(flows["bytes_delivered"].sum()) / packet,
        "mean_cwnd": float(np.nanmean(flows["mean_cwnd"]))
        if flows["mean_cwnd"].notna().any()
        else float("nan"),
        "mean_queue_bytes": queue_bytes,
        "samples": float(len(rtt)),
    }


def rescore(rtt: Any, estimator: str, params: Mapping[str, Any], tick_s: float) -> float:
    """Offline: replay ``estimator`` (rttlab's, with ``params``) over a stored run's ``rtt`` trace
    — each flow's samples in time order, one stream per flow, exactly the samples that run's
    estimator saw — and return its mean |prediction − sample| in ticks, the prediction made before
    each sample (``error_before_ticks``'s definition). No ns-3 run: a stored trace read with
    another estimator (e.g. Jacobson as BSD's ``tcp_xmit_timer``, ``rfc6298`` with ``bsd_tick``,
    whose prediction is its SRTT of rtt − 1 tick plus that tick: the error against the sample its
    SRTT uses)."""
    import numpy as np

    from rttlab import _core

    frame = rtt.sort_values(["flow", "time"], kind="stable")
    if frame.empty:
        return float("nan")
    flows = frame["flow"].to_numpy()
    starts = [0, *np.flatnonzero(flows[1:] != flows[:-1]) + 1]
    times = np.round(frame["time"].to_numpy() * 1e9).astype("uint64")
    samples = np.round(frame["sample"].to_numpy() * 1e9).astype("uint64")
    spec = [(estimator, [(k, str(v)) for k, v in params.items()])]
    out = _core.replay(
        times, samples, spec, int(round(tick_s * 1e9)), True, 1, [int(x) for x in starts]
    )[0]
    pred = np.asarray(out["prediction_s"], dtype=float)
    has = ~np.isnan(pred)
    return (
        float(np.abs(pred[has] - samples[has] / 1e9).mean() / tick_s) if has.any() else float("nan")
    )


def seeds_needed(
    sd_ours: float, sd_versus: float, delta: float, level: float = 0.90, power: float = 0.80
) -> float:
    """Seeds per arm for a two-sided test at ``level`` (the reproduction's 90 %) to find a
    difference of means ``delta`` with probability ``power``, from the arms' standard deviations
    over seeds (normal approximation, unpaired: n = (z_(1+level)/2 + z_power)² (σ₁² + σ₂²) / δ²).
    A claim whose runs have fewer seeds than this is undecided, whatever its means say."""
    from math import ceil, inf

    from scipy.stats import norm

    if delta == 0:
        return inf
    z = norm.ppf((1 + level) / 2) + norm.ppf(power)
    return max(2, ceil(z * z * (sd_ours**2 + sd_versus**2) / delta**2))


def _sweep_run(scenario_toml: str, traces: Sequence[str]) -> Any:
    """A sweep's run: the MANET runs keep the traces they always record, whatever ``traces`` asks."""
    return simulate(scenario_toml)


#: The MANET runs as an engine of sweeps (``simulator = "ns3-manet"``), with scenarios of their own.
SIMULATOR = Simulator(
    "ns3-manet",
    run=_sweep_run,
    version=dumbbell.version,
    scenario=ManetScenario,
    missing=dumbbell.missing,
)
