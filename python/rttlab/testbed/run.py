"""One testbed run: namespaces per host, the scenario's network in the real-time emulator
(``rttlab._core.Testbed``), real Linux TCP flows between the namespaces, and the result in the
simulator's schema (:class:`rttlab.sim.run.Result`), so what reads a simulated run reads this.

What each column means here, where it differs from the simulator, is in docs/testbed.md: goodput
and bytes delivered are what the receiving application read; bytes sent, retransmissions and
CE marks are what the emulator saw on the wire at the sender's side; drops and marks are the
channels' own counters; RTT statistics come from the sender-side pcap through rttlab's capture
analysis. The traces ``drops``, ``marks``, ``queue`` and the per-packet ``arrival`` come from
the emulator's channels in the simulator's schemas. Columns the testbed cannot know (the simulator's oracle: spurious retransmissions,
detector scores, cwnd over time) stay null.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rttlab import _core
from rttlab.sim.scenario import Scenario
from rttlab.testbed import netns
from rttlab.testbed.lock import machine_lock, say
from rttlab.trace.capture import read_capture

#: The scenario's congestion controls Linux has under another name (net/ipv4/tcp_*.c); Linux's
#: "reno" is NewReno with SACK/RACK recovery, whatever the scenario's recovery says.
KERNEL_CC = {
    "reno": "reno",
    "newreno": "reno",
    "westwood+": "westwood",
    "vegas": "vegas",
    "veno": "veno",
    "cubic": "cubic",
    "bbr": "bbr",
}

#: What the emulator holds on this machine (docs/testbed.md, "Fidelity": ≤ 0.3 % rate error up
#: to 400 Mb/s; at 800 Mb/s one kernel flow no longer fills the link, so nothing is known):
#: faster links are refused rather than emulated unchecked.
MAX_RATE_BPS = 400_000_000
#: A run whose p99 lateness exceeds this fraction of the bottleneck's round-trip propagation
#: delay says so (``metadata["warnings"]``, printed by the CLI): its RTTs carry the emulator's delay.
LATENESS_WARN_FRACTION = 0.05
#: The lateness no scenario is held to below: ~5× the emulator's median lateness on this
#: machine (15–21 µs, docs/testbed.md "Fidelity"). With no propagation delay and a bottleneck
#: whose packet time is shorter, this is the reference (a choice: no source fixes it).
LATENESS_FLOOR_NS = 100_000
#: How often control returns to Python (Ctrl-C, progress) while the emulator runs.
SLICE_NS = 100_000_000


class TestbedError(Exception):
    """A scenario the testbed cannot run (a rate beyond what it holds, a congestion control the
    kernel lacks): one line naming the key and the reason."""


@dataclass
class TestbedResult:
    """A testbed run: ``result`` in the simulator's schema, and what only a testbed has."""

    result: Any  # rttlab.sim.run.Result
    #: Per flow: what the sending and receiving applications reported (JSON from traffic.py).
    apps: list[dict[str, Any]]
    #: The emulator's counters (per channel, per flow on the wire, its own lateness and CPU).
    emulator: dict[str, Any]
    #: Host-side pcaps by role, e.g. {"flow0-sender": path, "flow0-receiver": path}.
    pcaps: dict[str, str] = field(default_factory=dict)
    #: Kernel settings per namespace, device MTUs, offloads: what the run was made with.
    metadata: dict[str, Any] = field(default_factory=dict)


def _cwnd_bytes(info: dict | None) -> int | None:
    """A kernel flow's final congestion window in bytes, as the flows table declares it."""
    if not info or info.get("snd_cwnd") is None:
        return None
    return info["snd_cwnd"] * info["snd_mss"]


def _available_cc(ns: str) -> set[str]:
    r = subprocess.run(
        ["ip", "netns", "exec", ns, "cat", "/proc/sys/net/ipv4/tcp_available_congestion_control"],
        capture_output=True,
        text=True,
    )
    return set(r.stdout.split())


def _kernel_cc(name: str, flow: int, override: dict[int, str] | str | None) -> str:
    if isinstance(override, str):
        return override
    if isinstance(override, dict) and flow in override:
        return override[flow]
    try:
        return KERNEL_CC[name]
    except KeyError:
        raise TestbedError(
            f"flows: congestion control '{name}' has no Linux counterpart (kernel ones: {', '.join(sorted(set(KERNEL_CC.values())))}); pass --cc to choose a kernel one"
        ) from None


def _preexec() -> None:
    # The generators die with the orchestrator, however it ends (SIGKILL included): Linux's
    # parent-death signal survives the exec of `ip` and of python (neither is set-uid).
    import ctypes

    ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _spawn(ns: str, args: Sequence[str]) -> subprocess.Popen[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in [str(Path(__file__).resolve().parents[2]), env.get("PYTHONPATH", "")] if p
    )
    cmd = ["ip", "netns", "exec", ns, sys.executable, "-m", "rttlab.testbed.traffic", *args]
    return subprocess.Popen(
        cmd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=_preexec,
    )


def _last_json(text: str) -> dict[str, Any] | None:
    for line in reversed(text.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    return None


def run(
    scenario: Scenario | str | Path,
    overrides: Sequence[str] = (),
    out_dir: str | Path | None = None,
    cc: dict[int, str] | str | None = None,
    progress: Callable[[float, float], None] | None = None,
    max_rate_bps: int = MAX_RATE_BPS,
    sysctls: dict[str, str] | None = None,
    gso: bool = True,
    prepare: Callable[[dict[str, Any]], None] | None = None,
    rtt_method: str = "meter",
    wait: Callable[[str], None] | None = say,
) -> TestbedResult:
    """Run ``scenario`` on the testbed (root), holding the machine-wide lock
    (:mod:`rttlab.testbed.lock`: one real-time run per machine; ``wait`` is told who holds it when
    another run does, and this one starts when that one ends). The rest as :func:`_run`."""
    with machine_lock(wait):
        return _run(
            scenario,
            overrides,
            out_dir,
            cc,
            progress,
            max_rate_bps,
            sysctls,
            gso,
            prepare,
            rtt_method,
        )


def _run(
    scenario: Scenario | str | Path,
    overrides: Sequence[str] = (),
    out_dir: str | Path | None = None,
    cc: dict[int, str] | str | None = None,
    progress: Callable[[float, float], None] | None = None,
    max_rate_bps: int = MAX_RATE_BPS,
    sysctls: dict[str, str] | None = None,
    gso: bool = True,
    prepare: Callable[[dict[str, Any]], None] | None = None,
    rtt_method: str = "meter",
) -> TestbedResult:
    """Run ``scenario`` on the testbed (root). ``cc`` chooses the kernel's congestion control
    (one name for every flow, or per flow number) instead of the scenario's; ``out_dir`` keeps
    the host-side pcaps; ``max_rate_bps`` is the fastest link accepted (the fidelity script
    raises it to measure beyond); ``sysctls`` are set in every namespace after the scenario's
    own (``net.ipv4.tcp_recovery=0`` turns RACK off, ``net.ipv4.tcp_early_retrans=0`` tail-loss
    probes: what tells a Linux feature's part in a difference); ``gso=False`` sets each TUN's
    ``gso_max_segs`` to 1, so the sending kernel builds one-segment packets instead of TSO/GSO
    super-packets (tcp_tso_autosize caps a packet at the device's gso_max_segs). ``prepare`` is
    called with the run's metadata (``flows``: each flow's namespaces and addresses, ``stacks``,
    ``namespaces``) once every namespace is set up and before any traffic generator starts, so
    what it sets (``rttlab live --rto-min``: a sysctl or a route in the senders' namespaces)
    holds for every socket of the run; an exception it raises ends the run, cleaned up.
    ``rtt_method`` chooses the pcap's RTT samples the tables hold (:data:`RTT_METHODS`: by default
    the simulated sender's rule, one per ACK at most). Raises :class:`netns.Unavailable` or
    :class:`TestbedError`."""
    import pyarrow as pa

    if rtt_method not in RTT_METHODS:
        raise TestbedError(f"rtt_method: '{rtt_method}' is not one of {', '.join(RTT_METHODS)}")
    s = scenario if isinstance(scenario, Scenario) else Scenario.load(scenario)
    if overrides:
        s = s.with_(list(overrides))
    text = s.canonical_toml  # ScenarioError naming the key for a bad scenario
    doc = s.resolved()
    tb = _core.Testbed(text)
    for name, _a, _b, bps, _d in tb.links:
        if bps > max_rate_bps:
            raise TestbedError(
                f"{name.rstrip('<>')}: {bps / 1e6:g} Mb/s is beyond what the emulator holds on this machine ({max_rate_bps / 1e6:g} Mb/s with ≤ 1 % rate error, docs/testbed.md)"
            )
    netns.check_machine()
    netns.remove_stale()

    plans = tb.plans
    endpoints = tb.endpoints
    hosts = tb.hosts
    duration = _core_duration(doc["simulation"]["duration"])
    warmup = _core_duration(doc["simulation"]["warmup"])
    tcps = tb.flow_tcp  # each flow's [tcp] as the core read it (typed, a group's merged)
    # Which TCP sends each flow: Linux's in the sender's namespace, or rttlab's own sender at the
    # emulator's port of that host (docs/testbed.md, "rttlab's sender"). A host has a namespace
    # if its kernel sends or receives a flow; one that only sends rttlab flows has none. A host
    # with both shares its port by source port: rttlab's senders send from RTTLAB_SPORT_BASE + f,
    # which its namespace reserves from the kernel's ephemeral ports.
    stacks = tb.stacks
    kernel_cc = [
        _kernel_cc(p[4], f, cc) if stacks[f] == "kernel" else p[4] for f, p in enumerate(plans)
    ]
    namespaced = {dst for _, dst in endpoints} | {
        src for f, (src, _) in enumerate(endpoints) if stacks[f] == "kernel"
    }
    rttlab_hosts = set(hosts) - namespaced  # no namespace: rttlab's senders alone
    reserved: dict[int, list[int]] = {}
    for f, (src, _) in enumerate(endpoints):
        if stacks[f] == "rttlab" and src in namespaced:
            reserved.setdefault(src, []).append(netns.RTTLAB_SPORT_BASE + f)
    # Each host's settings come from the flows it runs; one host, one setting.
    host_tcp: dict[int, dict[str, Any]] = {}
    # ECN per host (net.ipv4.tcp_ecn): 1 requests it on connections the host opens (and accepts
    # it on others), 2 only accepts, 0 neither. A host that sends with tcp.ecn asks for 1; one
    # that receives with receiver_ecn = false for 0; these two cannot share a namespace.
    request: dict[int, bool] = {}
    refuse: dict[int, bool] = {}
    for f, (src, dst) in enumerate(endpoints):
        t = tcps[f]
        if stacks[f] == "kernel":  # rttlab's sender asks for ECN in its own SYN
            request[src] = request.get(src, False) or t["ecn"]
        refuse[dst] = refuse.get(dst, False) or not t["receiver_ecn"]
        for node in (src, dst) if stacks[f] == "kernel" else (dst,):
            want = {k: t[k] for k in ("timestamps", "sack", "mss", "init_cwnd")}
            if host_tcp.setdefault(node, want) != want:
                raise TestbedError(
                    f"flows: node {node} runs flows with different TCP settings ({host_tcp[node]} vs {want}); the kernel sets them per namespace"
                )
    for node in host_tcp:
        if request.get(node) and refuse.get(node):
            raise TestbedError(
                f"flows: node {node} sends with tcp.ecn = true and receives with receiver_ecn = false; the kernel sets ECN per namespace"
            )
        host_tcp[node]["ecn"] = 1 if request.get(node) else 0 if refuse.get(node) else 2

    # Pcaps are always written (RTT statistics come from them); without out_dir they go to a
    # temporary folder removed once the result is made.
    scratch = None if out_dir else tempfile.TemporaryDirectory(prefix="rttlab-testbed-")
    out = Path(out_dir) if out_dir else Path(scratch.name)  # type: ignore[union-attr]
    out.mkdir(parents=True, exist_ok=True)
    # A pcap per host, named after its role where it has one (every dumbbell host), else its node
    # (a graph node sending one flow and receiving another, or sending two).
    roles: dict[int, list[str]] = {}
    for f, (src, dst) in enumerate(endpoints):
        roles.setdefault(src, []).append(f"flow{f}-sender")
        roles.setdefault(dst, []).append(f"flow{f}-receiver")
    role = {h: r[0] if len(r) == 1 else f"node{h}" for h, r in roles.items()}
    pcaps = {role[h]: str(out / f"{role[h]}.pcap") for h in hosts}
    sender_pcap = [pcaps[role[src]] for src, _ in endpoints]

    spaces = netns.Namespaces()
    procs: list[subprocess.Popen[str]] = []
    meta: dict[str, Any] = {
        "flows": [
            {
                "sender_ns": spaces.ns(src),
                "receiver_ns": spaces.ns(dst),
                "src": netns.node_addr(src),
                "dst": netns.node_addr(dst),
                "dport": netns.PORT_BASE + f,
            }
            | ({"sport": netns.RTTLAB_SPORT_BASE + f} if stacks[f] == "rttlab" else {})
            for f, (src, dst) in enumerate(endpoints)
        ],
        "namespaces": {},
        "kernel_cc": kernel_cc,
        "offloads": "TUN without IFF_VNET_HDR: no GSO/TSO/GRO reaches the emulator; every packet is MTU-sized at most",
    }
    try:
        for h in hosts:
            if h not in rttlab_hosts:
                spaces.create(h)
        tb.open(
            ["" if h in rttlab_hosts else spaces.tun(p) for p, h in enumerate(hosts)],
            [pcaps[role[h]] for h in hosts],
        )
        for port, h in enumerate(hosts):
            if h in rttlab_hosts:
                continue
            t = host_tcp[h]
            # The wire carries the scenario's MSS: MTU = MSS + IP (20) + TCP (20) + timestamps (12).
            mtu = t["mss"] + 40 + (12 if t["timestamps"] else 0)
            spaces.attach(port, h, mtu, t["init_cwnd"], gso_max_segs=None if gso else 1)
            settings = {
                "net.ipv4.tcp_ecn": str(t["ecn"]),
                "net.ipv4.tcp_sack": str(int(t["sack"])),
                "net.ipv4.tcp_timestamps": str(int(t["timestamps"])),
                "net.ipv4.tcp_no_metrics_save": "1",
                "net.ipv4.conf.all.rp_filter": "0",
                **(
                    {"net.ipv4.ip_local_reserved_ports": ",".join(map(str, reserved[h]))}
                    if h in reserved
                    else {}
                ),
                **(sysctls or {}),
            }
            netns.sysctl(spaces.ns(h), settings)
            meta["namespaces"][spaces.ns(h)] = {
                "node": h,
                "mtu": mtu,
                "initcwnd": t["init_cwnd"],
                "gso_max_segs": "default" if gso else 1,
                **settings,
            }
        avail = _available_cc(spaces.ns(next(h for h in hosts if h not in rttlab_hosts)))
        for f, name in enumerate(kernel_cc):
            if stacks[f] == "kernel" and name not in avail:
                raise TestbedError(
                    f"flows: the kernel has no '{name}' congestion control (available: {', '.join(sorted(avail))})"
                )
        if prepare is not None:
            meta["stacks"] = stacks
            prepare(meta)

        rprocs, sprocs = [], []
        offered: dict[int, int] = {}  # an on/off flow's bytes written after the warm-up
        for f, (src, dst) in enumerate(endpoints):
            start, stop, nbytes = plans[f][0], plans[f][1], plans[f][2]
            rargs = [
                "recv",
                "--bind",
                netns.node_addr(dst),
                "--port",
                str(netns.PORT_BASE + f),
                "--end",
                str(duration),
                "--measure-from",
                str(max(start, warmup)),
            ]
            if tcps[f]["delayed_ack_ns"] is None:
                rargs.append("--quickack")
            rprocs.append(_spawn(spaces.ns(dst), rargs))
            if stacks[f] == "rttlab":
                sprocs.append(None)  # rttlab's sender runs inside the emulator
                continue
            sargs = [
                "send",
                "--dst",
                netns.node_addr(dst),
                "--port",
                str(netns.PORT_BASE + f),
                "--end",
                str(duration),
                "--start",
                str(start),
                "--cc",
                kernel_cc[f],
            ]
            if stop is not None:
                sargs += ["--stop", str(stop)]
            if nbytes is not None:
                sargs += ["--bytes", str(nbytes)]
            writes = tb.app_writes(f)
            if writes:
                # An on/off application: the simulator's own schedule of writes (same draws).
                sched = out / f"flow{f}-app.json"
                sched.write_text(json.dumps(writes))
                sargs += ["--writes", str(sched)]
                meta["flows"][f]["app_writes"] = len(writes)
                measured_from = max(start, warmup)
                offered[f] = sum(b for t, b in writes if t >= measured_from)
            sprocs.append(_spawn(spaces.ns(src), sargs))
        procs += rprocs + [p for p in sprocs if p is not None]
        for p in procs:
            line = p.stdout.readline() if p.stdout else ""
            if line.strip() != "ready":
                raise OSError(
                    errno.EIO,
                    f"a traffic generator did not start: {(p.stderr.read() if p.stderr else '').strip()[-300:]}",
                )
        # Scenario time 0 is now: the generators schedule their starts and stops on it.
        origin = tb.restart_clock()
        for p in procs:
            assert p.stdin is not None
            p.stdin.write(f"{origin}\n")
            p.stdin.flush()
        at_warmup = None
        now = 0
        while now < duration:
            target = min(now + SLICE_NS, duration)
            if at_warmup is None and warmup > 0 and target >= warmup:
                target = warmup
            now = tb.run_until(target)
            if at_warmup is None and warmup > 0 and now >= warmup:
                at_warmup = tb.stats()
            if progress:
                progress(now / 1e9, duration / 1e9)
        # Let the applications report (they stop at the end by themselves), keeping the network
        # running meanwhile so their last packets (FIN, final ACKs) are carried.
        apps = []
        for f in range(len(endpoints)):
            apps.append(
                {
                    "receiver": _collect(rprocs[f], tb),
                    "sender": _collect(sprocs[f], tb) if sprocs[f] is not None else None,
                }
            )
            if f in offered and apps[f]["sender"] is not None:
                apps[f]["sender"]["offered_measured"] = offered[f]
        stats = tb.stats()
        stack_stats = tb.stack_stats()
        for f, st in stack_stats.items():
            apps[f]["sender"] = {"stack": "rttlab", **st}
        sender_flows = pa.table(tb.stack_flows())
        traces = {name: pa.table(t) for name, t in tb.traces().items()}
        stack_traces = {name: pa.table(t) for name, t in tb.stack_traces().items()}
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        for p in procs:
            try:
                p.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
        spaces.remove()
        del tb
    result = _result(
        doc,
        plans,
        endpoints,
        kernel_cc,
        apps,
        stats,
        at_warmup,
        duration,
        warmup,
        sender_pcap,
        stacks,
        stack_traces,
        sender_flows,
        tcps,
        rtt_method,
    )
    result.tables.update(traces)
    # rttlab's senders' window trace (what the wire hides) and their retransmissions as they
    # traced them, beside the kernel flows' retransmissions read from the pcaps.
    if "window" in stack_traces and stack_traces["window"].num_rows:
        result.tables["window"] = stack_traces["window"]
    if "retransmissions" in stack_traces and stack_traces["retransmissions"].num_rows:
        wire_retx = result.tables["retransmissions"]
        result.tables["retransmissions"] = pa.concat_tables(
            [wire_retx, stack_traces["retransmissions"].cast(wire_retx.schema)]
        ).sort_by([("time", "ascending")])
    meta["stacks"] = stacks
    meta["flow_errors"] = {
        f: a["sender"]["error"]
        for f, a in enumerate(apps)
        if a["sender"] and a["sender"].get("error")
    }
    meta["fidelity"] = fid = stats.get("fidelity") or {}
    b = next((c for c in stats["channels"] if c["name"] == result.bottleneck), None)
    meta["warnings"] = lateness_warnings(
        fid,
        b,
        max((t["mss"] + 40 + (12 if t["timestamps"] else 0) for t in tcps), default=1500),
    )
    if scratch is not None:
        scratch.cleanup()
        pcaps = {}
    return TestbedResult(result=result, apps=apps, emulator=stats, pcaps=pcaps, metadata=meta)


def lateness_warnings(
    fidelity: dict[str, Any], bottleneck: dict[str, Any] | None, packet_bytes: int
) -> list[str]:
    """The warnings a run's timing earns, each only when its own condition holds (issue 43).

    The emulator's p99 lateness (how long after the emulated network's due time 1 % of packets
    were handed over) is compared with the largest of three things the scenario has: 5 % of the
    bottleneck's round-trip propagation delay (the RTTs then carry a visible share of the
    emulator's delay), the serialisation time of one full-size packet (``packet_bytes``, IP
    length) at the bottleneck (below it the emulator's error is smaller than the link's own
    packet spacing: the queue moves by less than a packet), and :data:`LATENESS_FLOOR_NS`,
    which is what a scenario without propagation delay on a fast link is held to. The warning
    names the reference that set the limit and gives the advice that fits it."""
    p99 = fidelity.get("lateness_p99_ns")
    if p99 is None or bottleneck is None:
        return []
    rtprop = 2 * bottleneck["delay_ns"]
    rate = bottleneck["bandwidth_bps"]
    limits = [
        (
            LATENESS_WARN_FRACTION * rtprop,
            f"{LATENESS_WARN_FRACTION:.0%} of the bottleneck's round-trip propagation delay "
            f"({rtprop / 1e6:g} ms): its RTTs carry the emulator's delay; run it on a quieter machine",
        ),
        (
            packet_bytes * 8 / rate * 1e9 if rate else 0.0,
            f"one {packet_bytes}-byte packet's transmission time at the bottleneck "
            f"({packet_bytes * 8 / rate * 1e6 if rate else 0:.0f} µs at {rate / 1e6:g} Mb/s): "
            "the emulator's timing is coarser than the link's packet spacing, so queueing at "
            "packet scale is blurred; run it on a quieter machine or with a slower bottleneck",
        ),
        (
            LATENESS_FLOOR_NS,
            f"the {LATENESS_FLOOR_NS / 1e3:.0f} µs floor held when neither the propagation delay "
            f"({rtprop / 1e6:g} ms round trip) nor a packet's transmission time is longer: the "
            "machine's scheduling shows in every timing; run it on a quieter machine",
        ),
    ]
    limit, reason = max(limits, key=lambda x: x[0])
    if p99 <= limit:
        return []
    return [
        f"the emulator delivered 1 % of packets more than {p99 / 1e6:.2f} ms late, over {reason}"
    ]


def _collect(p: subprocess.Popen[str], tb: Any) -> dict[str, Any]:
    deadline = time.monotonic() + 3.0
    while p.poll() is None and time.monotonic() < deadline:
        tb.run_until(tb.now() + 20_000_000)
    if p.poll() is None:
        p.kill()
    out, err = p.communicate()
    got = _last_json(out or "")
    if got is None:
        return {"error": (err or "no report").strip().splitlines()[-1:] or ["no report"]}
    return got


_UNITS = {
    "ns": 1,
    "us": 10**3,
    "µs": 10**3,
    "ms": 10**6,
    "s": 10**9,
    "min": 60 * 10**9,
    "h": 3600 * 10**9,
}


def _core_duration(text: str) -> int:
    """A duration of the canonical form (``"100ms"``, ``"0ns"``: exact, one unit) in ns."""
    for unit in sorted(_UNITS, key=len, reverse=True):
        if text.endswith(unit):
            return round(float(text[: -len(unit)]) * _UNITS[unit])
    raise TestbedError(f"cannot read duration {text!r}")


#: Linux's floor of the RTO (TCP_RTO_MIN, include/net/tcp.h): a resend this long after its
#: timer started, without three duplicate ACKs, is taken for a timeout.
LINUX_RTO_MIN_S = 0.2


def _first_data_seq(pcap: str, receiver: str) -> int | None:
    """The sequence number of the first data byte (the SYN's + 1) of the connection to
    ``receiver`` (address:port) in a raw-IP pcap as the emulator writes it, or None. Read from
    the start of the file: the SYN is among its first frames."""
    import struct

    addr, port = receiver.rsplit(":", 1)
    dst, dport = bytes(int(x) for x in addr.split(".")), int(port)
    with open(pcap, "rb") as fh:
        fh.read(24)
        while len(head := fh.read(16)) == 16:
            p = fh.read(struct.unpack_from("<I", head, 8)[0])
            if len(p) < 40 or p[9] != 6 or p[16:20] != dst:
                continue
            t = (p[0] & 15) * 4
            if struct.unpack_from(">H", p, t + 2)[0] == dport and p[t + 13] & 0x02:  # SYN
                return (struct.unpack_from(">I", p, t + 4)[0] + 1) & 0xFFFF_FFFF
    return None


def _retransmission_causes(
    pcap: str | None, receiver: str, epoch0: float = 0.0, flow: int = 0
) -> dict[str, Any] | None:
    """The flow's retransmissions in the sender-side pcap, classified from the wire by the capture
    layer (docs/capture.md): fast when ≥ 3 duplicate ACKs preceded the resend (RFC 5681 §3.2),
    timeout when fewer did and it came ≥ 200 ms after the timer started (Linux's RTO floor) —
    an inference: RACK, early retransmit and tail-loss probes resend on fewer duplicate ACKs
    and sooner, and fall in neither. Spurious: the capture's evidence says an earlier copy had
    arrived (DSACK, timestamps). Under ``"trace"``: every retransmission as the simulator's
    ``retransmissions`` trace has it (time since the emulator's start, seq from the first data
    byte, cause ``fast``/``timeout`` as above, null where the wire does not tell: a partial
    ACK's, RACK's or a tail-loss probe's resend)."""
    import numpy as np

    if not pcap or not Path(pcap).exists():
        return None
    capture = read_capture(pcap, retransmissions=True)
    conns = capture.connections.loc[capture.connections["dst"] == receiver, "conn"]
    x = capture.retransmissions
    keep = ((x["direction"] == "fwd") & x["conn"].isin(conns)).to_numpy()
    dup = x["dupacks"].to_numpy()[keep]
    waited = (x["resent"] - x["timer_start"]).to_numpy()[keep]
    needed = x["needed"].to_numpy()[keep]
    timeout = (dup < 3) & (waited >= LINUX_RTO_MIN_S)
    starts = x["timer_start"].to_numpy()[keep][timeout]
    first = _first_data_seq(pcap, receiver)
    seq = x["seq_start"].to_numpy(dtype=np.int64)[keep]
    cause = np.where(dup >= 3, "fast", np.where(timeout, "timeout", None))
    trace = {
        "time": x["resent"].to_numpy()[keep] + capture.read["start_ns"] / 1e9 - epoch0,
        "flow": np.full(int(keep.sum()), flow, dtype=np.uint32),
        # Offsets from the first data byte (mod 2^32: a sequence number wraps), as the simulator's.
        "seq": (seq - first) % (1 << 32) if first is not None else np.full(len(seq), None),
        "tx": np.minimum(x["attempt"].to_numpy()[keep], 255).astype(np.uint8),
        "spurious": ~needed,
        "cause": list(cause),
    }
    return {
        "trace": trace,
        "retx_fast": int((dup >= 3).sum()),
        "retx_timeout": int(timeout.sum()),
        "timeouts": int(len(np.unique(starts))),
        "retx_spurious": int((~needed).sum()),
        "retx_necessary": int(needed.sum()),
    }


#: Which of the sender-side pcap's RTT samples the testbed's tables (``rtt`` trace,
#: ``rtt_samples`` and the RTT statistics) hold: ``meter`` (default) the rule the simulated
#: sender's meter samples by (:func:`_meter_rule`); ``seq``/``ts`` one method of the capture
#: analysis (docs/capture.md), as ``rttlab samples --method`` selects; ``all`` every sample of
#: every method (a ``seq`` and a ``ts`` sample for one ACK both count).
RTT_METHODS = ("meter", "seq", "ts", "all")


def _meter_rule(
    time: Any, rtt: Any, method: Any, frame: Any, timestamps: bool, sampling: str
) -> Any:
    """Indices of the capture's data-direction samples the simulated sender's meter would take
    (``take_sample`` in src/sim/tcp/sender.rs), so the testbed's counts compare with the
    simulator's. Only samples completed by an ACK that advances the left edge count: the
    capture is read without SACK-timed samples (those come from duplicate ACKs), and a new
    TSval is echoed only by an ACK of in-order data (RFC 7323 §4.3; Linux
    ``tcp_replace_ts_recent``). Then at most one per ACK (the completing ``frame``):

    - timestamps on: RFC 7323 §4.1 (RTTM), one sample per such ACK, the echo's (``ts``) where
      the capture pairs one, else that ACK's ``seq`` sample (Linux's TSval ticks in ms, so
      segments sent within one ms share it and the capture pairs each TSval once — a choice:
      the ACK still yields a sample in the simulator);
    - without timestamps, ``every-ack``: that ACK's ``seq`` sample (the newest segment it
      covers, never one overlapped by a retransmission: Karn, RFC 6298 §3);
    - without timestamps, ``timed`` (the simulator's default): one segment timed at a time
      (RFC 6298 §2, BSD's t_rtt): after a sample, the next is of the first segment sent at or
      after that ACK which has one (a segment without an exact-ending ACK — covered by a
      delayed ACK with the next — or overlapped by a retransmission is passed over for the next
      one, where the simulator times it or restarts timing after recovery)."""
    import numpy as np

    n = len(time)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    prefer = "ts" if timestamps else "seq"
    method = np.asarray(method).astype(str)
    usable = np.isin(method, ("seq", "ts")) if timestamps else method == "seq"
    idx = np.flatnonzero(usable)
    # One per completing frame: the preferred method first, then the earliest.
    order = np.lexsort((method[idx] != prefer, np.asarray(frame)[idx]))
    idx = idx[order]
    _, first = np.unique(np.asarray(frame)[idx], return_index=True)
    idx = np.sort(idx[first])
    if timestamps or sampling == "every-ack":
        return idx
    sent = np.asarray(time)[idx] - np.asarray(rtt)[idx]
    by_sent = idx[np.argsort(sent, kind="stable")]
    chosen, free_at = [], -np.inf
    for i in by_sent:
        if time[i] - rtt[i] >= free_at:
            chosen.append(i)
            free_at = time[i]
    return np.sort(np.asarray(chosen, dtype=np.int64))


def _rtt_samples(
    pcap: str | None,
    epoch0: float,
    receiver: str,
    rtt_method: str = "meter",
    timestamps: bool = False,
    sampling: str = "timed",
) -> tuple[Any, Any]:
    """RTT samples of the sender-side pcap (rttlab's capture analysis): the data direction's
    samples of the connections to ``receiver`` (address:port, one flow), chosen by
    ``rtt_method`` (:data:`RTT_METHODS`), as (time since the emulator's start, s; RTT, s)."""
    import numpy as np

    if not pcap or not Path(pcap).exists():
        return np.zeros(0), np.zeros(0)
    # The meter's rule takes no SACK-timed sample (a duplicate ACK advances nothing).
    capture = read_capture(pcap, sack_samples=rtt_method != "meter")
    cols = capture.samples
    # Times are seconds from the capture's first frame; the flow's data runs `fwd` (the
    # sender opened the connection), whose samples are data-to-ACK round trips.
    t = cols["time"].to_numpy(dtype=float) + capture.read["start_ns"] / 1e9 - epoch0
    rtt = cols["rtt"].to_numpy(dtype=float)
    method = cols["method"].astype(str).to_numpy()
    conns = capture.connections.loc[capture.connections["dst"] == receiver, "conn"]
    keep = ((cols["direction"] == "fwd") & cols["conn"].isin(conns)).to_numpy()
    if rtt_method in ("seq", "ts"):
        keep = keep & (method == rtt_method)
    t, rtt, method = t[keep], rtt[keep], method[keep]
    if rtt_method == "meter":
        frame = cols["frame"].to_numpy()[keep]
        pick = _meter_rule(t, rtt, method, frame, timestamps, sampling)
        t, rtt = t[pick], rtt[pick]
    return t, rtt


def _result(
    doc,
    plans,
    endpoints,
    kernel_cc,
    apps,
    stats,
    at_warmup,
    duration,
    warmup,
    sender_pcap,
    stacks=None,
    stack_traces=None,
    sender_flows=None,
    tcps=None,
    rtt_method="meter",
):
    import numpy as np
    import pyarrow as pa

    from rttlab.sim.run import Result, conform

    n = len(endpoints)
    goodput, delivered, starts, completed = [], [], [], []
    measured_bytes: list[int] = []
    wire = stats["flows"]
    wire0 = at_warmup["flows"] if at_warmup else [None] * n
    epoch0 = stats.get("epoch_origin_ns", 0) / 1e9
    rtt_n, rtt_stats, rtt_t, rtt_v, causes = [], [], [], [], []
    for f in range(n):
        start = plans[f][0]
        rec = apps[f]["receiver"]
        measure_from = max(start, warmup)
        span = (duration - measure_from) / 1e9
        b = rec.get("bytes_measured", 0) if rec.get("connected") else 0
        measured_bytes.append(b)
        goodput.append(b * 8 / span if span > 0 else 0.0)
        delivered.append(rec.get("bytes", 0))
        starts.append(start / 1e9)
        done = plans[f][2] is not None and rec.get("bytes", 0) >= plans[f][2]
        completed.append(
            rec["last_byte_ns"] / 1e9 if done and rec.get("last_byte_ns") is not None else None
        )
        receiver = f"{netns.node_addr(endpoints[f][1])}:{netns.PORT_BASE + f}"
        causes.append(_retransmission_causes(sender_pcap[f], receiver, epoch0, f))
        t, rtt = _rtt_samples(
            sender_pcap[f],
            epoch0,
            receiver,
            rtt_method,
            tcps[f]["timestamps"] if tcps else False,
            tcps[f].get("rtt_sampling", "timed") if tcps else "timed",
        )
        rtt_t.append(t)
        rtt_v.append(rtt)
        after = rtt[t >= warmup / 1e9]
        # Every sample the rule took in the run, as the simulator's `rtt_samples` (the sender's
        # count, src/sim/tcp/sender.rs); the statistics below are after the warm-up, as its are.
        rtt_n.append(len(rtt))
        rtt_stats.append(
            [float(after.mean()), float(after.std()), float(after.min()), float(after.max())]
            if len(after)
            else None
        )

    def wire_delta(key: str) -> list[int]:
        return [wire[f][key] - (wire0[f][key] if wire0[f] else 0) for f in range(n)]

    stacks = stacks or ["kernel"] * n
    sent_bytes = wire_delta("bytes_sent")
    tput = [sent_bytes[f] * 8 / ((duration - max(plans[f][0], warmup)) / 1e9) for f in range(n)]
    # What the testbed measures itself: on the wire, at the receiving application, in the
    # sender-side pcap (a kernel flow's retransmission causes, RTT samples) and in the kernel's
    # tcp_info; the columns it cannot know stay null.
    columns: dict[str, Any] = {
        "flow": np.arange(n, dtype=np.uint32),
        "group": [p[3] for p in plans],
        "src": [e[0] for e in endpoints],
        "dst": [e[1] for e in endpoints],
        "start": starts,
        "completed": completed,
        "bytes_delivered": delivered,
        "bytes_received": [w["bytes_received"] for w in wire],
        "bytes_sent": [w["bytes_sent"] for w in wire],
        "goodput_bps": goodput,
        "throughput_bps": tput,
        # An on/off application's load after the warm-up (its schedule; null for bulk), as the simulator's.
        "offered_bps": [
            a["sender"]["offered_measured"] * 8 / ((duration - max(plans[f][0], warmup)) / 1e9)
            if "offered_measured" in (a["sender"] or {})
            else None
            for f, a in enumerate(apps)
        ],
        "retransmissions": [w["retransmissions"] for w in wire],
        **{
            k: [c[k] if c else None for c in causes]
            for k in ("retx_fast", "retx_timeout", "timeouts", "retx_spurious", "retx_necessary")
        },
        # Each CWR the sender set answers one ECN-Echo (RFC 3168 §6.1.2): one reduction.
        "ecn_reductions": [w["cwr_sent"] for w in wire],
        "rtt_samples": rtt_n,
        "rtt_mean": [s[0] if s else None for s in rtt_stats],
        "rtt_std": [s[1] if s else None for s in rtt_stats],
        "rtt_min": [s[2] if s else None for s in rtt_stats],
        "rtt_max": [s[3] if s else None for s in rtt_stats],
        # tcpi_snd_cwnd counts segments; the column is bytes (src/sim/tables.rs), so × tcpi_snd_mss.
        "final_cwnd": [_cwnd_bytes((a["sender"] or {}).get("tcp_info")) for a in apps],
        "stack": stacks,
        "cc": [f"linux-{c}" if stacks[f] == "kernel" else c for f, c in enumerate(kernel_cc)],
    }
    # rttlab's senders report, for their flows, every column the flows table declares the
    # sender's own (`from_sender` in src/sim/tables.rs: its counters — timeouts counted, not
    # inferred —, its running measurements, what it ran), built as the simulator builds them;
    # each replaces the testbed's reading. A column added there reaches this table unlisted.
    if sender_flows is not None:
        rows = sender_flows.column("flow").to_pylist()
        for name in sender_flows.column_names:
            if name != "flow":
                values = columns.setdefault(name, [None] * n)
                for f, v in zip(rows, sender_flows.column(name).to_pylist()):
                    values[f] = v
    flows = conform("flows", columns)
    ch = stats["channels"]
    ch0 = at_warmup["channels"] if at_warmup else None
    measured = (duration - warmup) / 1e9

    def cdelta(i: int, key: str) -> int:
        return ch[i][key] - (ch0[i][key] if ch0 else 0)

    channels = conform(
        "channels",
        {
            "channel": list(range(len(ch))),
            "name": [c["name"] for c in ch],
            "from_node": [c["from"] for c in ch],
            "to_node": [c["to"] for c in ch],
            "bandwidth_bps": [c["bandwidth_bps"] for c in ch],
            "arrivals": [c["arrivals"] for c in ch],
            "departures": [c["departures"] for c in ch],
            "bytes_sent": [c["bytes_sent"] for c in ch],
            "utilisation": [
                min(1.0, cdelta(i, "busy_ns") / 1e9 / measured) for i in range(len(ch))
            ],
            "drops_overflow": [c["drops_overflow"] for c in ch],
            "drops_aqm": [c["drops_aqm"] for c in ch],
            "drops_corruption": [c["drops_corruption"] for c in ch],
            "drops_scheduled": [c["drops_scheduled"] for c in ch],
            "marks": [c["marks"] for c in ch],
            "quench": [c["quench"] for c in ch],
        },
    )
    # The `retransmissions` trace from the sender-side pcaps (what the wire shows; cause null
    # where it does not say which mechanism resent).
    traced = [
        c["trace"] for f, c in enumerate(causes) if c and stacks[f] == "kernel"
    ]  # rttlab flows: their sender's own trace
    retx_trace = conform(
        "retransmissions",
        {
            k: np.concatenate([t[k] for t in traced]) if traced else []
            for k in ("time", "flow", "seq", "tx", "spurious")
        }
        | {"cause": [c for t in traced for c in t["cause"]]},
    )
    # The `rtt` trace from the pcaps: every sample, no estimator (prediction and rto null); an
    # rttlab flow's from its sender instead (the samples its estimator took, with its prediction
    # and RTO), as the simulator traces them.
    rttlab_flows = [f for f in range(n) if stacks[f] == "rttlab"]
    for f in rttlab_flows:
        rtt_t[f] = rtt_t[f][:0]
        rtt_v[f] = rtt_v[f][:0]
    rtt_trace = conform(
        "rtt",
        {
            "time": np.concatenate(rtt_t) if n else [],
            "flow": np.concatenate(
                [np.full(len(t), f, dtype=np.uint32) for f, t in enumerate(rtt_t)]
            )
            if n
            else [],
            "sample": np.concatenate(rtt_v) if n else [],
        },
    )
    if rttlab_flows and stack_traces and "rtt" in stack_traces:
        rtt_trace = pa.concat_tables(
            [rtt_trace, stack_traces["rtt"].cast(rtt_trace.schema)]
        ).sort_by([("time", "ascending")])
    g = np.asarray(goodput)
    jain = float(g.sum() ** 2 / (n * (g**2).sum())) if n and g.any() else None
    # The aggregate: every flow's bytes read after the warm-up over the common window
    # [warmup, end], as the simulator's (src/sim/mod.rs, docs/schema.md), never the sum of the
    # flows' goodputs, each over its own interval (with staggered starts that sum exceeds the link).
    window = (duration - warmup) / 1e9
    aggregate = sum(measured_bytes) * 8 / window if window > 0 else 0.0
    bottleneck = "bottleneck>" if any(c["name"] == "bottleneck>" for c in ch) else ch[0]["name"]
    return Result(
        name=doc["simulation"].get("name"),
        seed=int(doc["simulation"]["seed"]),
        duration=duration / 1e9,
        events=int(stats["received"] + stats["delivered"]),
        event_hash="",
        aggregate_goodput_bps=float(aggregate),
        jain_index=jain,
        tables={
            "flows": flows,
            "channels": channels,
            "rtt": rtt_trace,
            "retransmissions": retx_trace,
        },
        bottleneck=bottleneck,
    )
