"""rttlab's estimators inside ns-3's TCP: an ``ns3::RttEstimator`` subclass defined at run time
through the ns-3 wheel's cppyy bindings, calling rttlab's C ABI (``src/ffi.rs``, version 3).

    from rttlab import ns3_rtt
    ns = ns3_rtt.install("fixed-share", {"tick": "500ms"})   # returns the ``ns`` namespace
    ...build an ns-3 scenario; every TCP socket now estimates with rttlab's fixed-share...
    ns3_rtt.attach(app, flow)          # per BulkSendApplication: per-sample traces of its socket
    ns.Simulator.Run()
    traces = ns3_rtt.collect()          # DataFrames in rttlab's trace schema (docs/schema.md)

**The mapping.** ns-3 (``TcpSocketBase::EstimateRtt``) arms its timer with
RTO = max(MinRto, estimate + max(ClockGranularity, 4·variation)). :func:`install` sets MinRto 0
and ClockGranularity 1 ns, and the estimator reports variation = ⌊(RTO − ŷ)/4⌋ and estimate =
RTO − 4·variation (ŷ, the prediction, rounded up by < 4 ns so that the sum is exact), so ns-3's
timer is rttlab's RTO to the nanosecond. Where RTO ≤ ŷ the estimate is RTO − 1 ns and the
variation 0 (then ns-3's max(1 ns, 0) restores RTO). Before the first sample the estimator
reports rttlab's initial RTO the same way.

**What stays ns-3's.** Back-off (ns-3 doubles its RTO on expiry, capped at 60 s, and keeps it
until the next sample), Karn's rule and the choice of samples (with timestamps, ns-3's default,
every ACK that acknowledges new data gives a sample from TSecr, retransmitted segments
included; without them, segments sent once), and when the timer is (re)armed. rttlab's
estimator sees each sample with the socket's cwnd, ssthresh and max_cwnd in segments
(``rttlab_context``; Eifel's flight-based gains need them) and ``on_timeout`` when the socket
enters loss recovery after an expiry (CongState → CA_LOSS). ns-3's ``TcpSocketState::m_lastRtt``
(what congestion controls read as the last RTT) becomes the reported estimate, as with ns-3's own
estimator; NewReno does not read it.

**cwnd for the RTO (CA-RTO).** ns-3 has no hook where it arms its timer and ``GetEstimate`` is not
virtual, so the bridge keeps what ns-3 will read current instead: the socket's CongestionWindow
trace (a C++ callback) calls ``on_timer_armed`` with the new cwnd (CA-RTO draws p) and republishes
estimate/variation. On an ACK ns-3 runs EstimateRtt (the sample), the congestion control moves
cwnd (the draw), then NewAck computes the RTO from what was published and re-arms the timer: the
armed RTO is CA-RTO's for the cwnd of that instant. p is drawn per cwnd change rather than per
arm (the same in NewReno outside recovery, where every ACK of new data moves cwnd).
max_cwnd is cwnd when the socket enters CA_RECOVERY, CA_CWR, or CA_LOSS from any state but
CA_RECOVERY (the CongState trace fires before ns-3 reduces cwnd). Each attached flow's estimator
draws from rttlab's simulator's stream for that flow and the run's seed
(``rttlab_estimator_seed_stream``). docs/reproductions/nunes-manet.md has the details.

**Traces, recorded in C++ (no Python call per event).** Per RTT sample: time, flow, sample,
prediction before and after it, rttlab's RTO, the RTO ns-3 set (read from the socket after
``EstimateRtt``), the delay of the retransmission timer armed at that instant (0 if none was
armed then), cwnd and ssthresh (segments). Per retransmitted segment: time, flow, sequence
number. Per flow: data segments sent, segments retransmitted, timeouts, the time-weighted cwnd
integral. :func:`collect` copies the columns out as NumPy arrays in one go per column.

ns-3's import costs ≈ 30 s; the C++ is compiled once per process (≈ 10 s more). :func:`install`
may be called again with another estimator: only the configuration changes.
"""

from __future__ import annotations

import ctypes
from importlib import resources
from typing import Any

#: The C ABI version this bridge is written against (``rttlab_abi_version``).
ABI_VERSION = 3


_state: dict[str, Any] = {}


def _library() -> ctypes.CDLL:
    """rttlab's extension module: the C ABI is exported from it (``nm -D _core*.so``), so a plain
    ``pip install rttlab`` carries the bridge, no separate cdylib."""
    from rttlab import _core

    lib = ctypes.CDLL(_core.__file__)
    version = lib.rttlab_abi_version()
    if version < ABI_VERSION:
        raise RuntimeError(
            f"rttlab's C ABI is version {version}; the ns-3 bridge needs {ABI_VERSION}"
        )
    return lib


def _compile() -> Any:
    if "ns" in _state:
        return _state["ns"]
    from rttlab.peers.ns3 import import_ns

    ns = import_ns()  # ≈ 30 s, once per process

    import cppyy

    cppyy.cppdef(resources.files(__package__).joinpath("rtt_estimator.cc").read_text())
    lib = _library()
    addr = lambda f: ctypes.cast(f, ctypes.c_void_p).value  # noqa: E731
    cppyy.gbl.rttlab_bridge.SetAbi(
        addr(lib.rttlab_estimator_new),
        addr(lib.rttlab_estimator_on_sample_ctx),
        addr(lib.rttlab_estimator_on_timer_armed_ctx),
        addr(lib.rttlab_estimator_seed_stream),
        addr(lib.rttlab_estimator_rto),
        addr(lib.rttlab_estimator_prediction),
        addr(lib.rttlab_estimator_on_timeout),
        addr(lib.rttlab_estimator_free),
        addr(lib.rttlab_last_error),
    )
    cppyy.gbl.rttlab_bridge.RttlabEstimator.GetTypeId()  # registers the TypeId with ns-3
    _state.update(ns=ns, cppyy=cppyy, lib=lib)
    return ns


def params_text(params: dict[str, Any] | None) -> str:
    return ",".join(f"{k}={v}" for k, v in (params or {}).items())


def probe(estimator: str, params: dict[str, Any] | None = None) -> None:
    """Raise ``ValueError`` with rttlab's one-line message if the C ABI cannot make ``estimator``."""
    lib = _library()
    lib.rttlab_estimator_new.restype = ctypes.c_void_p
    lib.rttlab_last_error.restype = ctypes.c_char_p
    e = lib.rttlab_estimator_new(estimator.encode(), params_text(params).encode())
    if not e:
        raise ValueError(f"estimator {estimator!r}: {lib.rttlab_last_error().decode()}")
    lib.rttlab_estimator_free(ctypes.c_void_p(e))


def install(
    estimator: str,
    params: dict[str, Any] | None = None,
    cwnd_cap_bytes: float | None = None,
    sample_tick_s: float = 0.0,
    seed: int = 1,
    log_calls: bool = False,
) -> Any:
    """Make every TCP socket created from now on estimate with rttlab's ``estimator`` (registry
    name, ``params`` as in a scenario); clears the traces. ``cwnd_cap_bytes``: cwnd above it counts
    as it in the per-flow mean cwnd (the receiver's window). ``sample_tick_s`` > 0: every sample
    reaches the estimator as BSD's slow timer measures it (``t_rtt``: 1 + the ticks between send
    and ACK, times the tick); the trace's ``sample`` is that, ``exact`` ns-3's own. ``seed``: the
    run's seed; with a flow's index it seeds that flow's estimator's random stream (CA-RTO's draws)
    as rttlab's simulator does. ``log_calls``: keep every call into the attached flows' estimators
    (:func:`collect`'s ``calls``; for checks, it grows with every cwnd change). Returns ns-3's ``ns`` namespace.
    Raises ``ValueError`` with rttlab's message for an unknown estimator or parameter."""
    probe(estimator, params)  # before ns-3's 30 s import
    ns = _compile()
    bridge = _state["cppyy"].gbl.rttlab_bridge
    text = params_text(params)
    bridge.g_name = estimator
    bridge.g_params = text
    bridge.Clear()
    bridge.g_cwnd_cap = float(cwnd_cap_bytes) if cwnd_cap_bytes else 1e300
    bridge.g_tick_ns = round(sample_tick_s * 1e9)
    bridge.g_seed = int(seed)
    bridge.g_log_calls = bool(log_calls)
    ns.Config.SetDefault(
        "ns3::TcpL4Protocol::RttEstimatorType",
        ns.TypeIdValue(ns.TypeId.LookupByName("ns3::RttlabEstimator")),
    )
    ns.Config.SetDefault("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.Seconds(0)))
    ns.Config.SetDefault("ns3::TcpSocketBase::ClockGranularity", ns.TimeValue(ns.NanoSeconds(1)))
    return ns


def attach(app: Any, flow: int, start_s: float) -> None:
    """Trace the socket of ``app`` (a BulkSendApplication starting at ``start_s``) as ``flow``."""
    _state["cppyy"].gbl.rttlab_bridge.Attach(app, flow, float(start_s))


def _column(vec: Any, dtype: str):  # -> numpy.ndarray (a copy)
    import numpy as np

    n = int(vec.size())
    if n == 0:
        return np.zeros(0, dtype=dtype)
    ctype = {"int64": ctypes.c_int64, "uint64": ctypes.c_uint64, "float64": ctypes.c_double}[dtype]
    addr = int(_state["cppyy"].gbl.rttlab_bridge.Data(vec))
    return np.ctypeslib.as_array((ctype * n).from_address(addr)).astype(dtype, copy=True)


def check() -> None:
    """Raise ``RuntimeError`` if the bridge failed during the run (an estimator that could not be
    made, a flow without a socket)."""
    bridge = _state["cppyy"].gbl.rttlab_bridge
    if bridge.g_failed:
        raise RuntimeError(f"ns-3 bridge: {bridge.g_error}")


def collect(segment_bytes: int) -> dict[str, Any]:
    """The run's traces as DataFrames in rttlab's trace schema (times and RTTs in seconds):
    ``rtt`` (time, flow, sample, prediction, prediction_after, rto — rttlab's right after the
    sample, rto_end — rttlab's once the sample's ACK has been processed (cwnd moved), ns3_rto —
    the socket's then, armed, cwnd, ssthresh) and ``retransmissions`` (time, flow, seq); plus
    ``flows``: per-flow counters (segments_sent, retransmissions, timeouts, samples, mean_cwnd in
    segments, NaN without samples). With ``install(log_calls=True)``: ``calls`` (time, flow, kind —
    sample / cwnd / timeout, sample, cwnd, ssthresh, max_cwnd, rto after the call) and the
    ``rtt`` column ``calls``, the number of calls logged when the sample's ACK was done."""
    import numpy as np
    import pandas as pd

    check()
    b = _state["cppyy"].gbl.rttlab_bridge
    s = b.g_s
    ns_to_s = lambda v: _column(v, "uint64") / 1e9  # noqa: E731
    before = _column(s.before, "uint64")
    rtt = pd.DataFrame(
        {
            "time": ns_to_s(s.t),
            "flow": _column(s.flow, "int64").astype("uint32"),
            "sample": ns_to_s(s.rtt),
            "exact": ns_to_s(s.exact),
            # rttlab's trace: null before the estimator has a prediction (0 through the ABI).
            "prediction": np.where(before > 0, before / 1e9, np.nan),
            "prediction_after": ns_to_s(s.after),
            "rto": ns_to_s(s.rto),
            "rto_end": ns_to_s(s.rto_end),
            "ns3_rto": ns_to_s(s.ns3_rto),
            "armed": ns_to_s(s.armed),
            "cwnd": _column(s.cwnd, "float64"),
            "ssthresh": _column(s.ssthresh, "float64"),
        }
    )
    retx = pd.DataFrame(
        {
            "time": _column(b.g_rx_t, "uint64") / 1e9,
            "flow": _column(b.g_rx_flow, "int64").astype("uint32"),
            "seq": _column(b.g_rx_seq, "uint64"),
        }
    )
    n = int(b.g_flows.size())
    flows = pd.DataFrame(
        {
            "flow": np.arange(n, dtype=np.uint32),
            "segments_sent": [int(b.g_flows[i].sent) for i in range(n)],
            "retransmissions": [int(b.g_flows[i].retx) for i in range(n)],
            "timeouts": [int(b.g_flows[i].timeouts) for i in range(n)],
            "samples": [int(b.g_flows[i].samples) for i in range(n)],
            "mean_cwnd": [
                (c / segment_bytes if (c := float(b.MeanCwnd(i))) >= 0 else np.nan)
                for i in range(n)
            ],
        }
    )
    out = {"rtt": rtt, "retransmissions": retx, "flows": flows}
    if not b.g_log_calls:
        return out
    # The calls logged up to the end of each sample's ACK (an index into `calls`).
    rtt["calls"] = _column(s.calls, "int64")
    c = b.g_c
    out["calls"] = pd.DataFrame(
        {
            "time": ns_to_s(c.t),
            "flow": _column(c.flow, "int64").astype("uint32"),
            "kind": pd.Categorical.from_codes(
                _column(c.kind, "int64"), ["sample", "cwnd", "timeout"]
            ),
            "sample": ns_to_s(c.rtt),
            "cwnd": _column(c.cwnd, "float64"),
            "ssthresh": _column(c.ssthresh, "float64"),
            "max_cwnd": _column(c.max_cwnd, "float64"),
            "rto": ns_to_s(c.rto),
        }
    )
    return out


def wired(
    estimator: str,
    params: dict[str, Any] | None = None,
    duration_s: float = 20.0,
    seed: int = 1,
    sample_tick_s: float = 0.0,
    log_calls: bool = False,
) -> dict[str, Any]:
    """A small wired check scenario: one bulk flow of 512-byte segments over 10 Mb/s 10 ms then
    1 Mb/s 30 ms with a 20-packet DropTail queue (losses, timeouts, a varying RTT), ns-3's
    default TCP (NewReno, SACK, timestamps), ``estimator`` inside it. Returns :func:`collect`'s
    traces. tests/test_ns3_bridge.py checks ns-3's RTO against rttlab's replay of the samples."""
    ns = install(estimator, params, sample_tick_s=sample_tick_s, seed=seed, log_calls=log_calls)
    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(int(seed))
    ns.RngSeedManager.ResetNextStreamIndex()
    ns.Config.SetDefault("ns3::TcpSocket::SegmentSize", ns.UintegerValue(512))
    nodes = ns.NodeContainer()
    nodes.Create(3)
    ns.InternetStackHelper().Install(nodes)
    p2p = ns.PointToPointHelper()
    p2p.SetDeviceAttribute("DataRate", ns.StringValue("10Mbps"))
    p2p.SetChannelAttribute("Delay", ns.StringValue("10ms"))
    first = p2p.Install(nodes.Get(0), nodes.Get(1))
    p2p.SetDeviceAttribute("DataRate", ns.StringValue("1Mbps"))
    p2p.SetChannelAttribute("Delay", ns.StringValue("30ms"))
    p2p.SetQueue("ns3::DropTailQueue", "MaxSize", ns.QueueSizeValue(ns.QueueSize("20p")))
    second = p2p.Install(nodes.Get(1), nodes.Get(2))
    addr = ns.Ipv4AddressHelper()
    addr.SetBase(ns.Ipv4Address("10.0.0.0"), ns.Ipv4Mask("255.255.255.0"))
    addr.Assign(first)
    addr.SetBase(ns.Ipv4Address("10.0.1.0"), ns.Ipv4Mask("255.255.255.0"))
    far = addr.Assign(second)
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    bulk = ns.BulkSendHelper(
        "ns3::TcpSocketFactory", ns.InetSocketAddress(far.GetAddress(1), 5000).ConvertTo()
    )
    bulk.SetAttribute("MaxBytes", ns.UintegerValue(0))
    apps = bulk.Install(nodes.Get(0))
    apps.Start(ns.Seconds(0.1))
    attach(apps.Get(0), 0, 0.1)
    sink = ns.PacketSinkHelper(
        "ns3::TcpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), 5000).ConvertTo()
    )
    sink.Install(nodes.Get(2))
    ns.Simulator.Stop(ns.Seconds(duration_s))
    ns.Simulator.Run()
    try:
        return collect(512)
    finally:
        ns.Simulator.Destroy()
