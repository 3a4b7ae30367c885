"""ns-2.35 (Debian's ``ns2``, binary ``ns``) as a peer engine: an rttlab scenario becomes an ns-2 Tcl
script, ``ns`` runs it in a temporary directory, and its report becomes rttlab's own ``flows`` and
``channels`` tables (:func:`rttlab.sim.run.conform`: the same schema as rttlab's engine).

    from rttlab import Scenario
    from rttlab.peers.ns2 import engine as ns2
    theirs = ns2.simulate(Scenario.load("examples/scenarios/dumbbell-n10-red.toml"))

The mapping reads the *resolved* scenario (every default filled in by rttlab's core), and sets
every ns-2 default that differs from rttlab's explicitly (window_ 20, packetSize_ 1000,
tcpTick_ 0.01, minrto_ 0.2, windowInit_ 2, syn_, RED's byte mode, wait_, gentle_, automatic
q_weight_ and thresholds, ...): docs/ns2-comparison.md has the table of every key. The script is
data (written here) followed by ``topology.tcl`` (the code that reads it).

What ns-2 expresses is mapped: dumbbells and graphs (fewest-hop static routes); DropTail and
RED (ECN, gentle_, q_weight_, wait_ off as rttlab); the uniform (per-packet) and bit-error models
on the bottleneck; Reno, NewReno, SACK (``Agent/TCP/Sack1`` with ``Agent/TCPSink/Sack1``) and
Vegas; delayed ACKs (``TCPSink/DelAck``); FTP bulk and exponential on/off sources, fixed or
uniform random starts; per-group windows and initial ssthresh; the RTO knobs ns-2 exposes
(minrto_, maxrto_, tcpTick_, rtxcur_init_, windowInit_, rttvar_exp_, ts_resetRTO_). Anything else
raises :class:`Ns2Unsupported` with one line naming the key and the engine, including any key
of the resolved scenario this mapping does not read.

Traces: the bottleneck's ``queue`` trace when asked for (``traces=["queue"]``). What ns-2 does
not report here stays null, never a made-up zero: RED's ECN marks, per-flow RTT statistics,
the other links. ``events`` is 0 (ns-2 has no event counter a script can read).
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rttlab.experiments.simulators import Simulator
from rttlab.sim.scenario import Scenario

#: The program run; Debian's ns2 package installs it as /usr/bin/ns.
NS = "ns"
ENGINE = "ns-2"


class Ns2Unsupported(Exception):
    """The scenario asks for something ns-2.35 (or this mapping) cannot express."""


def _no(key: str, what: str) -> Ns2Unsupported:
    return Ns2Unsupported(f"{key}: {what} — not expressible in {ENGINE}")


def available() -> str | None:
    """The path of ``ns``, or None where it is not installed."""
    return shutil.which(NS)


def version() -> str:
    """``ns-2 2.35``: what ns-2's own ``ns-version`` (tcl/lib/ns-lib.tcl) says, read from stdin."""
    exe = available()
    if exe is None:
        return "ns-2 (not installed)"
    out = subprocess.run(
        [exe], input="puts [ns-version]; exit 0\n", capture_output=True, text=True, timeout=30
    )
    return f"ns-2 {out.stdout.strip()}"


def _seconds(text: Any) -> float:
    from rttlab import _core

    ns = _core.parse_duration(str(text))
    if ns is None:
        raise Ns2Unsupported(f"cannot read {text!r} as a duration")
    return ns / 1e9


def _bytes(text: Any) -> int:
    return int(str(text).removesuffix("B"))


def _bandwidth(text: str) -> float:
    for unit, scale in (("Gbps", 1e9), ("Mbps", 1e6), ("kbps", 1e3), ("bps", 1.0)):
        if text.endswith(unit):
            return float(text.removesuffix(unit)) * scale
    raise Ns2Unsupported(f"cannot read bandwidth {text!r}")


def _packets(key: str, limit: str) -> int:
    if not str(limit).endswith("p"):
        raise _no(key, f"a byte limit ({limit})")
    return int(str(limit).removesuffix("p"))


#: (cc, recovery) → (sender class, sink class). Reno and NewReno share AIMD in rttlab; what
#: differs is recovery, which picks ns-2's agent (tcp-reno.cc, tcp-newreno.cc, tcp-sack1.cc).
_AGENTS = {
    "reno": "Agent/TCP/Reno",
    "newreno": "Agent/TCP/Newreno",
    "sack": "Agent/TCP/Sack1",
}

#: rttlab defaults that a scenario must keep for the mapping to hold (ns-2 has no knob for them).
_FIXED_TCP = {
    "recovery_timeout": "keep",
    "spurious_response": "linux",
    "source_quench": "react",
    "receiver_ecn": True,
}


#: The keys the mapping reads; any other key a resolved scenario carries is refused by name, so
#: nothing a scenario asks for is dropped in silence.
_TCP_KEYS = {
    "recovery", "mss", "header", "init_cwnd", "init_ssthresh", "rwnd", "delayed_ack",
    "delayed_ack_segments", "timestamps", "ecn", "receiver_ecn", "sack", "recovery_timeout",
    "rtt_sampling", "spurious_response", "spurious_detection", "source_quench", "sample_clock",
    "cc", "rto", "stack",
}  # fmt: skip
_RTO_KEYS = {
    "estimator", "bsd_tick", "granularity", "initial_rto", "k", "max_backoff", "max_rto",
    "min_rto", "policy",
}  # fmt: skip
_LINK_KEYS = {
    "bandwidth", "delay", "error_direction", "losses", "queue", "error", "a", "b", "monitor",
    "delay_spikes", "random_spikes", "arq", "outages", "agent",
}  # fmt: skip
_FLOW_KEYS = {
    "count", "start", "start_step", "start_jitter", "bytes", "stack", "app", "src", "dst", "tcp",
    "stop",
}  # fmt: skip


def _unknown(key: str, table: dict[str, Any], known: set[str]) -> None:
    extra = sorted(set(table) - known)
    if extra:
        raise _no(f"{key}.{extra[0]}", "a key this mapping does not carry")


def check(doc: dict[str, Any]) -> None:
    """Raise :class:`Ns2Unsupported` for what the mapping cannot express (``doc`` resolved)."""
    _tcl_data(doc)


def _tcp_classes(tcp: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    cc = tcp["cc"] if isinstance(tcp["cc"], dict) else {"name": tcp["cc"]}
    name = cc["name"]
    recovery = tcp["recovery"]
    if name in ("reno", "newreno"):
        extra = {k for k in cc if k != "name"}
        if extra:
            raise _no(f"tcp.cc.{sorted(extra)[0]}", "a parameter of ns-2's Reno agents")
        if recovery not in _AGENTS:
            raise _no("tcp.recovery", f"recovery {recovery!r}")
        if recovery == "sack" and not tcp["sack"]:
            raise _no("tcp.recovery", "sack recovery without tcp.sack")
        agent = _AGENTS["sack" if tcp["sack"] else recovery]
        if tcp["sack"] and recovery != "sack":
            # ns-2's Sack1 always runs its own SACK recovery (tcp-sack1.cc).
            raise _no("tcp.recovery", f"{recovery!r} recovery with SACK (ns-2's Sack1 has its own)")
        sink = "Agent/TCPSink/Sack1" if tcp["sack"] else "Agent/TCPSink"
        # NewReno's exit (tcp-newreno.cc recv): exit_recovery_fix_ 1 sets cwnd to
        # min(ssthresh, FlightSize + 1 packet), RFC 6582 §3.2 step 3 option 1 as rttlab does;
        # ns-2's default 0 deflates to ssthresh whatever is in flight. ns-2's own defaults keep
        # the rest of RFC 6582 as rttlab has it: partial_window_deflation_ 1, and
        # newreno_changes1_ 1 restarts the timer on the first partial ACK only ("Impatient").
        extra_vars = {"exit_recovery_fix_": 1} if agent == _AGENTS["newreno"] else {}
        return agent, sink, extra_vars
    if name == "vegas":
        if tcp["sack"]:
            raise _no("tcp.sack", "SACK with Vegas (ns-2's Agent/TCP/Vegas has none)")
        # tcp-vegas.cc: v_alpha_, v_beta_, v_gamma_ (packets). ns-2 normalises as the paper does;
        # rttlab's `diff` choice is compared against it as it stands (docs/ns2-comparison.md).
        params = {
            "v_alpha_": int(cc.get("alpha", 2)),
            "v_beta_": int(cc.get("beta", 4)),
            "v_gamma_": int(cc.get("gamma", 1)),
        }
        extra = {k for k in cc if k not in ("name", "alpha", "beta", "gamma", "diff")}
        if extra:
            raise _no(f"tcp.cc.{sorted(extra)[0]}", "a parameter of ns-2's Agent/TCP/Vegas")
        return "Agent/TCP/Vegas", "Agent/TCPSink", params
    raise _no("tcp.cc", f"{name!r} (ns-2.35 has reno, newreno, vegas here)")


def _windows(key: str, tcp: dict[str, Any], mss: int) -> list[Any]:
    """Per-agent ``{window_ W ssthresh S}``: the receiver window in packets and the initial
    ssthresh (0: ns-2's own, ``window_``). ns-2 sets ``ssthresh_ = window_`` when ``$ns run``
    resets every agent (tcp.cc reset, via ``Node reset``), so the template sets an initial
    ssthresh at time 0, after that reset and before any source starts. Not ``max_ssthresh_``:
    in ns-2.35 it also makes the window grow by limited slow start (RFC 3742) above it until the
    first congestion event (tcp.cc opencwnd), which rttlab's initial ssthresh does not."""
    window = max(1, _bytes(tcp["rwnd"]) // mss)
    ssthresh = 0
    if "init_ssthresh" in tcp:
        ssthresh = _bytes(tcp["init_ssthresh"]) // mss
        if ssthresh < 1:
            raise _no(f"{key}.init_ssthresh", "below one segment")
    return [window, ssthresh]


def _link_checks(key: str, link: dict[str, Any], bottleneck: bool) -> None:
    """Refuse what a link asks for that ns-2 (or this mapping) cannot carry."""
    _unknown(key, link, _LINK_KEYS)
    for k in ("losses", "delay_spikes", "outages"):
        if link.get(k):
            raise _no(f"{key}.{k}", "scheduled link events")
    for k in ("random_spikes", "arq"):
        if link.get(k):
            raise _no(f"{key}.{k}", "a link's delay variation")
    if link.get("agent"):
        raise _no(
            f"{key}.agent",
            f"link agent {link['agent'].get('kind', link['agent'])!r} (Snoop is not mapped)",
        )
    if not bottleneck and link.get("error", {}).get("kind", "none") != "none":
        raise _no(f"{key}.error", "an error model off the bottleneck (only its drops are counted)")


def _red(key: str, q: dict[str, Any]) -> list[Any]:
    """ns-2 RED variables for rttlab's RED queue ``q``."""
    if q.get("byte_mode_max") not in (None, "off", "0B"):
        raise _no(f"{key}.byte_mode_max", "RED byte mode as rttlab reads it")
    # Every RED variable whose ns-2.35 default differs from rttlab's (ns-default.tcl): packet
    # mode (bytes_/queue_in_bytes_ default true), explicit thresholds and weight (thresh_ 0 /
    # q_weight_ -1 are "automatic"), linterm_ = 1/max_p, gentle_ (default true), wait_ (default
    # true; rttlab has no inter-drop wait). use_mark_p_ true with mark_p_ 1 marks (setbit_)
    # instead of every early drop with p_b < 1, and drops at p_b = 1 (above max_th, or 2·max_th
    # when gentle): rttlab's "forced drops ignore ECN" (src/sim/queue/red.rs).
    pairs: list[tuple[str, Any]] = [
        ("bytes_", "false"),
        ("queue_in_bytes_", "false"),
        ("thresh_", float(q["min_th"])),
        ("maxthresh_", float(q["max_th"])),
        ("q_weight_", float(q["w_q"])),
        ("linterm_", 1.0 / float(q["max_p"])),
        ("gentle_", "true" if q["gentle"] else "false"),
        ("wait_", "false"),
        ("setbit_", "true" if q["ecn"] else "false"),
        ("use_mark_p_", "true"),
        ("mark_p_", 1.0),
        ("mean_pktsize_", _bytes(q["mean_packet"])),
    ]
    return [x for kv in pairs for x in kv]


def _link(key: str, a: int, b: int, link: dict[str, Any], bottleneck: bool) -> list[Any]:
    """``{a b bandwidth delay queue limit redvars}`` for the template (forward a → b)."""
    _link_checks(key, link, bottleneck)
    q = link["queue"]
    limit = _packets(f"{key}.queue.limit", q["limit"])
    if q["kind"] == "droptail":
        return [a, b, _bandwidth(link["bandwidth"]), _seconds(link["delay"]), "DropTail", limit, []]
    if q["kind"] == "red":
        red = _red(f"{key}.queue", q)
        return [a, b, _bandwidth(link["bandwidth"]), _seconds(link["delay"]), "RED", limit, red]
    raise _no(f"{key}.queue.kind", f"{q['kind']!r}")


def _topology(doc: dict[str, Any]) -> tuple[int, list[list[Any]], int, list[tuple[int, int]]]:
    """Nodes, links, the index of the bottleneck link and each flow's (src, dst) nodes. A dumbbell
    is written as the graph it is: routers 0 and 1, then sender i at 2 + 2i, receiver at 3 + 2i;
    link 0 the bottleneck, then each flow's access links (sender → router 0, router 1 →
    receiver: their forward directions carry the data, as in rttlab)."""
    topo = doc["topology"]
    n = sum(int(g["count"]) for g in doc["flows"])
    if topo["kind"] == "dumbbell":
        racc = topo.get("receiver_access") or topo["access"]
        rkey = "topology.receiver_access" if topo.get("receiver_access") else "topology.access"
        links = [_link("topology.bottleneck", 0, 1, topo["bottleneck"], True)]
        ends = []
        for i in range(n):
            s, d = 2 + 2 * i, 3 + 2 * i
            links.append(_link("topology.access", s, 0, topo["access"], False))
            links.append(_link(rkey, 1, d, racc, False))
            ends.append((s, d))
        return 2 + 2 * n, links, 0, ends
    if topo["kind"] != "graph":
        raise _no("topology.kind", f"{topo['kind']!r}")
    # ns-2's static routing (route-logic.cc) takes fewest hops as rttlab does; where two paths
    # tie, each engine breaks the tie its own way, so a graph with equal-length paths may route
    # differently.
    links = []
    for i, link in enumerate(topo["links"]):
        links.append(_link(f"topology.links.{i}", int(link["a"]), int(link["b"]), link, False))
    monitored = [i for i, link in enumerate(topo["links"]) if link.get("monitor")]
    bn = monitored[0] if monitored else 0
    first = topo["links"][bn]
    links[bn] = _link(f"topology.links.{bn}", int(first["a"]), int(first["b"]), first, True)
    ends = []
    for g in doc["flows"]:
        ends += [(int(g["src"]), int(g["dst"]))] * int(g["count"])
    return int(topo["nodes"]), links, bn, ends


def _tcl_data(doc: dict[str, Any]) -> dict[str, Any]:
    """The run's data for ``topology.tcl``: ``cfg`` (scalars) and the lists, from the resolved
    scenario; raises :class:`Ns2Unsupported` naming the first key ns-2 cannot express."""
    sim, topo, tcp = doc["simulation"], doc["topology"], doc["tcp"]
    if sim["warmup"] != "0ns":
        raise _no("simulation.warmup", "a warm-up (goodput is measured from each flow's start)")
    nodes, links, bn, ends = _topology(doc)
    b = topo["bottleneck"] if topo["kind"] == "dumbbell" else topo["links"][bn]
    bkey = "topology.bottleneck" if topo["kind"] == "dumbbell" else f"topology.links.{bn}"
    a, z = links[bn][0], links[bn][1]
    cfg: dict[str, Any] = {
        "duration": _seconds(sim["duration"]),
        "seed": int(sim["seed"]),
        "nodes": nodes,
        "bn_from": a,
        "bn_to": z,
        "bn_bw": links[bn][2],
    }
    err = b.get("error", {"kind": "none"})
    mss, header = _bytes(tcp["mss"]), _bytes(tcp["header"])
    cfg["mss"] = mss
    cfg["data_size"] = mss + header
    directions = {"forward": [a, z], "reverse": [z, a], "both": [a, z, z, a]}
    if err["kind"] == "none":
        cfg["err_dirs"], cfg["err_unit"], cfg["err_rate"] = [], "pkt", 0.0
    elif err["kind"] == "bernoulli":
        cfg["err_dirs"] = directions[b["error_direction"]]
        cfg["err_unit"], cfg["err_rate"] = "pkt", float(err["per"])
    elif err["kind"] == "ber":
        cfg["err_dirs"] = directions[b["error_direction"]]
        # ns-2's `unit bit` draws per size class (errmodel.cc CorruptBit: datapktsize_ is
        # compared with the size in bytes but used as a count of bits), so bit errors map to
        # `unit byte` (CorruptByte: 1 − (1 − rate)^bytes per packet) with the per-byte rate
        # 1 − (1 − ber)^8: rttlab's 1 − (1 − ber)^(8·bytes) for every packet size.
        cfg["err_unit"], cfg["err_rate"] = "byte", 1.0 - (1.0 - float(err["ber"])) ** 8
    else:
        raise _no(f"{bkey}.error.kind", f"{err['kind']!r}")

    _unknown("tcp", tcp, _TCP_KEYS)
    if tcp["rto"]["estimator"] != "rfc6298":  # before its keys: another estimator has its own
        raise _no(
            "tcp.rto.estimator", f"{tcp['rto']['estimator']!r} (ns-2 has Jacobson's, rfc6298)"
        )
    _unknown("tcp.rto", tcp["rto"], _RTO_KEYS)
    for i, g in enumerate(doc["flows"]):
        _unknown(f"flows.{i}", g, _FLOW_KEYS)
    agent, sink, classvars = _tcp_classes(tcp)
    for key, value in _FIXED_TCP.items():
        if tcp.get(key, value) != value:
            raise _no(f"tcp.{key}", f"{tcp[key]!r}")
    if tcp.get("spurious_detection", "off") != "off":
        raise _no("tcp.spurious_detection", f"{tcp['spurious_detection']!r}")
    if tcp.get("rtt_sampling", "timed") != "timed" and not tcp["timestamps"]:
        raise _no("tcp.rtt_sampling", f"{tcp['rtt_sampling']!r}")
    if tcp.get("sample_clock", "0s") not in ("0s", "0ns"):
        raise _no("tcp.sample_clock", "a clocked RTT sample")
    rto = tcp["rto"]
    if rto["estimator"] != "rfc6298":
        raise _no("tcp.rto.estimator", f"{rto['estimator']!r} (ns-2 has Jacobson's, rfc6298)")
    policy = rto.get("policy", {"name": "none"})
    if (policy["name"] if isinstance(policy, dict) else policy) != "none":
        raise _no("tcp.rto.policy", f"{policy!r}")
    if _seconds(rto.get("bsd_tick", "0ns")) != 0:
        raise _no("tcp.rto.bsd_tick", "a BSD tick")
    k = float(rto["k"])
    if k <= 0 or not math.log2(k).is_integer():
        raise _no("tcp.rto.k", f"{k} (ns-2's rttvar_exp_ makes K a power of two)")
    # rttlab's max_backoff counts doublings; its 64 never binds, so max_rto caps the backed-off
    # RTO. ns-2.35 (rfc2988_ true) doubles while the RTO is below maxrto_ (tcp.cc rtt_backoff):
    # the same. A cap that binds (ns-2's older ×64, 6 doublings) has no ns-2.35 knob.
    if int(rto["max_backoff"]) != 64:
        raise _no(
            "tcp.rto.max_backoff",
            f"{rto['max_backoff']} doublings (ns-2.35 doubles until maxrto_, tcp.cc rtt_backoff)",
        )
    delack = str(tcp["delayed_ack"]).lower()
    if delack not in ("off", "none", "false") and int(tcp["delayed_ack_segments"]) != 2:
        raise _no("tcp.delayed_ack_segments", "other than 2 (TCPSink/DelAck ACKs every second)")
    sinkvars: list[tuple[str, Any]] = [("packetSize_", header)]
    if delack not in ("off", "none", "false"):
        sink += "/DelAck"
        sinkvars.append(("interval_", _seconds(delack)))
    if tcp["ecn"] and not tcp.get("receiver_ecn", True):
        raise _no("tcp.receiver_ecn", "a receiver refusing ECN")
    window = max(1, _bytes(tcp["rwnd"]) // mss)
    tcpvars: list[tuple[str, Any]] = [
        # Sizes: packetSize_ is the payload; the wire adds tcpip_base_hdr_size_ (tcp.cc headersize).
        ("packetSize_", mss),
        ("tcpip_base_hdr_size_", header),
        # ns-2's window_ is the receiver's window in packets (default 20); set per agent too
        # (_windows), with the initial ssthresh.
        ("window_", window),
        ("windowInit_", int(tcp["init_cwnd"])),
        # singledup_ 1 (ns-2's default) is Limited Transmit (RFC 3042: tcp.cc send_one, a new
        # segment on each of the first two dupACKs); rttlab has none, so it is off.
        ("singledup_", 0),
        # maxburst_ 0: no burst limit (ns-2's default; rttlab has none).
        ("maxburst_", 0),
        # rttlab opens no connection: data from the start (syn_ true would send a SYN first).
        ("syn_", "false"),
        ("ecn_", 1 if tcp["ecn"] else 0),
        ("timestamps_", "true" if tcp["timestamps"] else "false"),
        # rttlab ends the RTO back-off on every valid sample (src/rtt/timer.rs on_valid_sample,
        # RFC 6298 §5.7), with timestamps on every ACK; ns-2 does so on a timestamp sample only
        # with ts_resetRTO_ true (tcp.cc newack), else when an ACK passes its timed segment.
        ("ts_resetRTO_", "true" if tcp["timestamps"] else "false"),
        # RTO (tcp.cc rtt_update / rtt_timeout): srtt + 2^rttvar_exp_·rttvar on a tcpTick_ clock.
        ("tcpTick_", _seconds(rto["granularity"])),
        ("minrto_", _seconds(rto["min_rto"])),
        ("maxrto_", _seconds(rto["max_rto"])),
        ("rtxcur_init_", _seconds(rto["initial_rto"])),
        ("rttvar_exp_", int(math.log2(k))),
    ]
    flows = []
    for i, g in enumerate(doc["flows"]):
        # A group's `tcp` is resolved whole (merged over [tcp]); only its windows may differ.
        own = g.get("tcp") or {}
        extra = sorted(
            k for k in own if k not in ("init_ssthresh", "rwnd") and own[k] != tcp.get(k)
        )
        if extra:
            raise _no(f"flows.{i}.tcp.{extra[0]}", "a per-group TCP setting other than the windows")
        agentvars = _windows(f"flows.{i}.tcp", {**tcp, **own}, mss)
        if g.get("stop"):
            raise _no(f"flows.{i}.stop", "flows that stop")
        if g.get("start_jitter", "0ns") != "0ns":
            raise _no(f"flows.{i}.start_jitter", "a start jitter")
        uniform = re.fullmatch(r"uniform\(\s*([^,]+?)\s*,\s*([^)]+?)\s*\)", str(g["start"]))
        if uniform and _seconds(g.get("start_step", "0ns")) != 0:
            raise _no(f"flows.{i}.start_step", "a step after a random start")
        app = g.get("app") or {"kind": "bulk"}
        if app["kind"] == "bulk":
            spec: list[Any] = [
                "bulk",
                "inf" if g.get("bytes") in (None, "inf") else _bytes(g["bytes"]),
            ]
        elif app["kind"] == "onoff":
            if (
                app.get("dist", "exponential") != "exponential"
                or "rate" not in app
                or app.get("burst")
            ):
                raise _no(f"flows.{i}.app", "on/off other than exponential periods at a rate")
            if g.get("bytes") not in (None, "inf"):
                raise _no(f"flows.{i}.bytes", "a byte limit on an on/off source")
            spec = ["onoff", _seconds(app["on"]), _seconds(app["off"]), _bandwidth(app["rate"])]
        else:
            raise _no(f"flows.{i}.app", f"{app['kind']!r}")
        for k_ in range(int(g["count"])):
            src, dst = ends[len(flows)]
            # A random start is drawn by ns-2 from its own generator (RandomVariable/Uniform):
            # the same distribution as rttlab's, not the same draws.
            start: Any = (
                ["uniform", _seconds(uniform[1]), _seconds(uniform[2])]
                if uniform
                else _seconds(g["start"]) + k_ * _seconds(g["start_step"])
            )
            flows.append([i, start, spec, src, dst, agentvars])
    cfg["tcp"], cfg["sink"] = agent, sink
    return {
        "cfg": cfg,
        "bn": bn,
        "links": links,
        "flows": flows,
        "tcpvars": tcpvars,
        "classvars": list(classvars.items()),
        "sinkvars": sinkvars,
    }


def _tcl(value: Any) -> str:
    """A Tcl word for a number, a name or a (nested) list."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "{" + " ".join(_tcl(v) for v in value) + "}"
    if isinstance(value, float):
        return repr(value)
    text = str(value)
    if not text or any(c in text for c in ' \t\n{}[]$"\\;'):
        raise ValueError(f"not a plain Tcl word: {text!r}")
    return text


def script(scenario: Any, qsample: float = 0.0) -> str:
    """The whole ns-2 script of ``scenario`` (a :class:`rttlab.Scenario` or its TOML text);
    ``qsample`` > 0 samples the bottleneck's queue that often (seconds) into ``queue.txt``."""
    s = scenario if isinstance(scenario, Scenario) else Scenario.from_toml(scenario)
    data = _tcl_data(s.resolved())
    data["cfg"]["qsample"] = qsample
    lines = [f"# rttlab scenario {s.hash} in ns-2.35 (rttlab.peers.ns2)"]
    lines += [f"set cfg({k}) {_tcl(v)}" for k, v in data["cfg"].items()]
    for name in ("links", "flows", "tcpvars", "classvars", "sinkvars"):
        flat = data[name] if name in ("links", "flows") else [x for kv in data[name] for x in kv]
        lines.append(f"set {name} {_tcl(flat)}")
    template = (Path(__file__).parent / "topology.tcl").read_text()
    return "\n".join(lines) + "\n\n" + template


def _parse(out: str, n: int) -> dict[str, Any]:
    flows: dict[int, list[float]] = {}
    bottleneck = None
    for line in out.splitlines():
        word = line.split()
        if word[:1] == ["flow"]:
            flows[int(word[1])] = [float(x) for x in word[2:]]
        elif word[:1] == ["bottleneck"]:
            bottleneck = [int(float(x)) for x in word[1:]]
    if len(flows) != n or bottleneck is None:
        raise RuntimeError(f"ns-2 reported {len(flows)} of {n} flows and no bottleneck line")
    return {"flows": [flows[i] for i in range(n)], "bottleneck": bottleneck}


def simulate(
    scenario: Any, keep: str | Path | None = None, traces: Sequence[str] = ()
):  # -> rttlab.sim.Result
    """Run ``scenario`` in ns-2; ``keep`` writes the script there too (for a reader to rerun).
    ``traces`` may ask for ``"queue"``: the bottleneck's queue sampled every
    ``simulation.queue_sample_interval`` (rttlab's ``queue`` trace schema); ns-2 records no other
    of rttlab's traces here."""
    import numpy as np

    from rttlab.sim.run import Result, conform

    s = scenario if isinstance(scenario, Scenario) else Scenario.from_toml(scenario)
    doc = s.resolved()
    data = _tcl_data(doc)
    unknown = sorted(set(traces) - {"queue"})
    if unknown:
        raise _no("traces", f"{unknown[0]!r} (ns-2 records the queue trace only)")
    qsample = _seconds(doc["simulation"]["queue_sample_interval"]) if "queue" in traces else 0.0
    text = script(s, qsample)
    exe = available()
    if exe is None:
        raise Ns2Unsupported(
            "simulator: ns-2's `ns` is not on PATH (Debian: apt-get install ns2; make test-deps)"
        )
    if keep is not None:
        Path(keep).write_text(text)
    with tempfile.TemporaryDirectory(prefix="rttlab-ns2-") as tmp:
        path = Path(tmp) / "run.tcl"
        path.write_text(text)
        out = subprocess.run([exe, str(path)], cwd=tmp, capture_output=True, text=True)
        queue = (
            np.loadtxt(Path(tmp) / "queue.txt", ndmin=2)
            if qsample > 0 and out.returncode == 0
            else None
        )
    if out.returncode != 0:
        # Tcl's error line comes first, its stack trace after it.
        first = (out.stderr.strip().splitlines() or ["(no message)"])[0]
        raise RuntimeError(f"ns-2 (ns) exited {out.returncode}: {first}")
    n = len(data["flows"])
    raw = _parse(out.stdout, n)
    cfg = data["cfg"]
    duration = cfg["duration"]
    mss, wire = cfg["mss"], cfg["data_size"]
    # Each flow's start as ns-2 ran it (a random one is drawn there), from the report.
    starts = np.array([f[7] for f in raw["flows"]], dtype=float)
    # TCPSink's bytes_ counts the wire size of every packet delivered in order (tcp-sink.cc
    # recv: bytes_ += numToDeliver): whole data packets, so packets × MSS is the payload.
    sink_bytes = np.array([f[0] for f in raw["flows"]])
    delivered = (np.round(sink_bytes / wire) * mss).astype(np.uint64)
    active = np.maximum(duration - starts, 0.0)
    goodput = np.where(active > 0, delivered * 8.0 / np.where(active > 0, active, 1.0), 0.0)
    cc = doc["tcp"]["cc"]
    flows = conform(
        "flows",
        {
            "flow": np.arange(n, dtype=np.uint32),
            "group": np.array([f[0] for f in data["flows"]], dtype=np.uint32),
            "start": starts,
            "bytes_delivered": delivered,
            "goodput_bps": goodput,
            # ndatabytes_: payload bytes sent, retransmissions included (tcp.cc output()).
            "bytes_sent": np.array([f[1] for f in raw["flows"]], dtype=np.uint64),
            # nrexmitpack_: packets retransmitted, fast or by timeout (tcp.cc output()).
            "retransmissions": np.array([f[2] for f in raw["flows"]], dtype=np.uint64),
            # nrexmit_: retransmission-timer expiries (tcp.cc timeout()).
            "timeouts": np.array([f[3] for f in raw["flows"]], dtype=np.uint64),
            # necnresponses_: window reductions on ECN echoes (tcp.cc ecn()).
            "ecn_reductions": np.array([f[4] for f in raw["flows"]], dtype=np.uint64),
            "final_cwnd": np.array([int(f[5]) * mss for f in raw["flows"]], dtype=np.uint64),
            "cc": [cc if isinstance(cc, str) else cc["name"]] * n,
            "recovery": [cfg["tcp"].rsplit("/", 1)[-1].lower()] * n,
            "estimator": [doc["tcp"]["rto"]["estimator"]] * n,
        },
    )
    arrivals, departures, bytes_out, overflow, aqm, corruption = raw["bottleneck"]
    bw = cfg["bn_bw"]
    topo = doc["topology"]
    name = "bottleneck>" if topo["kind"] == "dumbbell" else f"links[{data['bn']}]>"
    channels = conform(
        "channels",
        {
            "channel": [0],
            # rttlab's name of the bottleneck's data direction (channels table).
            "name": [name],
            "bandwidth_bps": [int(bw)],
            "arrivals": [arrivals],
            "departures": [departures],
            "bytes_sent": [bytes_out],
            "utilisation": [bytes_out * 8.0 / (bw * duration)],
            "drops_overflow": [overflow],
            "drops_aqm": [aqm],
            "drops_corruption": [corruption],
            "drops_scheduled": [0],
        },
    )
    jain = float(goodput.sum() ** 2 / (n * (goodput**2).sum())) if n and goodput.any() else None
    return Result(
        name=doc["simulation"].get("name"),
        seed=int(doc["simulation"]["seed"]),
        duration=duration,
        events=0,
        event_hash="",
        # Bytes over the common window, as rttlab's engines count it (docs/schema.md); the
        # mapping refuses a warm-up, so the window is the whole run.
        aggregate_goodput_bps=float(delivered.sum()) * 8.0 / duration,
        jain_index=jain,
        tables={
            "flows": flows,
            "channels": channels,
            **(
                {
                    "queue": conform(
                        "queue",
                        {
                            "time": queue[:, 0],
                            "channel": np.zeros(len(queue), dtype=np.uint32),
                            "packets": queue[:, 1].astype(np.uint32),
                            "bytes": queue[:, 2].astype(np.uint64),
                            "average": queue[:, 3],
                        },
                    )
                }
                if queue is not None
                else {}
            ),
        },
        bottleneck=name,
    )


def _sweep_run(scenario_toml: str, traces: Any) -> Any:
    """A sweep's run: of rttlab's traces ns-2 records the queue trace (:func:`simulate`)."""
    return simulate(scenario_toml, traces=traces)


#: ns-2 as an engine of sweeps (``simulator = "ns2"``).
def missing() -> str | None:
    """Why the ns-2 engine cannot run here (None: it can)."""
    if available() is None:
        return (
            f"'{NS}' (ns-2 2.35) is not on PATH: apt-get install ns2 (make test-deps installs it)"
        )
    return None


SIMULATOR = Simulator("ns2", run=_sweep_run, version=version, missing=missing)
