"""rttlab's own sender on the wire (`[[flows]] stack = "rttlab"`): the simulator's Sender doing a
real handshake with a Linux receiver through the testbed's emulator. Root with namespaces and TUN
(CI's machine); skipped elsewhere with the reason. The segment codec and the handshake machine
are unit-tested in Rust (src/testbed/{segment,handshake,stack}.rs), without root."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from rttlab._core import ScenarioError
from rttlab.testbed import unavailable

ROOT = Path(__file__).resolve().parent.parent
REASON = unavailable()
needs_machine = pytest.mark.skipif(REASON is not None, reason=f"testbed unavailable here: {REASON}")
#: The sender settings every scenario here shares (Reno with SACK and timestamps, RFC 6298's timer).
TCP = """[tcp]
cc = "reno"
sack = true
timestamps = true
rto = { estimator = "rfc6298" }
"""


def scenario(
    tmp_path: Path,
    flows: str,
    bottleneck: str = 'bandwidth = "10Mbps", delay = "20ms", queue = { kind = "droptail", limit = "100p" }',
    duration: str = "5s",
) -> Path:
    p = tmp_path / "s.toml"
    p.write_text(
        f"""
[simulation]
duration = "{duration}"
warmup = "1s"
[topology]
kind = "dumbbell"
bottleneck = {{ {bottleneck} }}
access = {{ bandwidth = "100Mbps", delay = "0ms", queue = {{ kind = "droptail", limit = "1000p" }} }}
{TCP}{flows}
"""
    )
    return p


def our_namespaces(pid: int | None = None) -> list[str]:
    """This process's testbed namespaces (or those of `pid`): other testbeds may run beside it."""
    import os

    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [
        line.split()[0] for line in out.splitlines() if line.startswith(f"rtb{pid or os.getpid()}-")
    ]


def test_a_stack_other_than_kernel_or_rttlab_is_refused_naming_the_key(tmp_path: Path) -> None:
    from rttlab import _core

    text = scenario(tmp_path, '[[flows]]\ncount = 1\nstack = "bsd"').read_text()
    with pytest.raises(ScenarioError, match=r"flows\[0\]\.stack: 'bsd' is not kernel or rttlab"):
        _core.Testbed(text)


def test_the_simulator_names_its_flows_stack_rttlab_and_ignores_the_key(tmp_path: Path) -> None:
    from rttlab.sim.run import simulate

    r = simulate(scenario(tmp_path, '[[flows]]\ncount = 1\nstack = "rttlab"', duration="2s"))
    assert list(r.flows["stack"]) == ["rttlab"]
    plain = simulate(scenario(tmp_path, "[[flows]]\ncount = 1", duration="2s"))
    assert r.event_hash == plain.event_hash


def test_the_testbeds_flows_table_takes_rttlab_senders_columns_as_the_simulator_declares_them(
    tmp_path: Path,
) -> None:
    """Without root: the testbed's table-making (`run._result`) fed the emulator's own readings
    before a run (zeros), no pcaps, and for the rttlab flow the simulator's row cut to the
    columns the core's `stack_flows` declares the sender's own — what a run hands it."""
    import pyarrow as pa
    import pyarrow.compute as pc
    from rttlab import _core
    from rttlab.sim.run import simulate
    from rttlab.sim.scenario import Scenario
    from rttlab.testbed.run import _core_duration, _result

    path = scenario(
        tmp_path, '[[flows]]\ncount = 1\n[[flows]]\ncount = 1\nstack = "rttlab"', duration="3s"
    )
    s = Scenario.load(path)
    tb = _core.Testbed(s.canonical_toml)
    declared = pa.table(tb.stack_flows())
    assert declared.num_rows == 0, "no senders before a run: the columns alone"
    # The columns the testbed took from rttlab's sender when run.py listed them itself.
    before = {
        "retransmissions",
        "retx_fast",
        "retx_timeout",
        "timeouts",
        "ecn_reductions",
        "recovery",
        "estimator",
        "rto_policy",
        "fast_recoveries",
    }
    before |= {
        "quench_reductions",
        "quench_received",
        "timeouts_undone",
        "pred_error_before",
        "pred_error_after",
        "mean_cwnd",
        "final_ssthresh",
        "final_cwnd",
    }
    before |= {"rtt_samples", "rtt_mean", "rtt_std", "rtt_min", "rtt_max"}
    assert declared.column_names[0] == "flow" and set(declared.column_names[1:]) >= before, (
        declared.column_names
    )

    sim = simulate(path).tables["flows"]
    own = sim.filter(pc.equal(sim["flow"], 1)).select(declared.column_names)
    assert own.schema.equals(declared.schema), "the simulator's types"
    receiver = {"connected": True, "bytes": 1000, "bytes_measured": 1000, "last_byte_ns": None}
    apps = [
        {"receiver": receiver, "sender": {}},
        {"receiver": receiver, "sender": {"stack": "rttlab", "connected": True}},
    ]
    duration = _core_duration(s.resolved()["simulation"]["duration"])
    r = _result(
        s.resolved(),
        tb.plans,
        tb.endpoints,
        ["reno", "reno"],
        apps,
        tb.stats(),
        None,
        duration,
        10**9,
        [None, None],
        tb.stacks,
        {},
        own,
    )
    got = r.tables["flows"]
    assert got.schema.equals(sim.schema), "names, order and types of the simulator's flows table"
    kernel, rttlab = got.to_pylist()
    want = own.to_pylist()[0]
    assert {c: rttlab[c] for c in declared.column_names} == want, (
        "every column the sender knows, as the simulator computed it"
    )
    assert (rttlab["stack"], rttlab["cc"], kernel["stack"], kernel["cc"]) == (
        "rttlab",
        "reno",
        "kernel",
        "linux-reno",
    )
    # A kernel flow's: what the wire shows (0 here, before any traffic), null what it cannot know.
    assert (kernel["retransmissions"], kernel["ecn_reductions"], kernel["rtt_samples"]) == (0, 0, 0)
    assert all(
        kernel[c] is None
        for c in (
            "recovery",
            "estimator",
            "fast_recoveries",
            "pred_error_before",
            "mean_cwnd",
            "final_ssthresh",
            "rtt_mean",
            "final_cwnd",
        )
    ), kernel


def test_each_flows_kernel_settings_come_typed_from_the_core_with_its_groups_tcp_merged_over_the_top_level(
    tmp_path: Path,
) -> None:
    from rttlab import _core

    flows = '[[flows]]\ncount = 1\n[[flows]]\ncount = 2\ntcp = { mss = "1000B", delayed_ack = "none", ecn = true }\n[[flows]]\ncount = 1\ntcp = { delayed_ack = "0.04s", receiver_ecn = false }'
    got = _core.Testbed(scenario(tmp_path, flows).read_text()).flow_tcp
    base = {
        "mss": 1448,
        "init_cwnd": 10,
        "sack": True,
        "timestamps": True,
        "ecn": False,
        "receiver_ecn": True,
        "delayed_ack_ns": None,
        "rtt_sampling": "timed",  # the simulator's default; the testbed's RTT rule reads it
    }
    assert got == [
        base,
        base | {"mss": 1000, "ecn": True},
        base | {"mss": 1000, "ecn": True},
        base | {"delayed_ack_ns": 40_000_000, "receiver_ecn": False},
    ]


@needs_machine
def test_one_rttlab_reno_flow_fills_a_10_mbps_20_ms_link_against_the_linux_receiver(
    tmp_path: Path,
) -> None:
    from rttlab.testbed import run

    tr = run(scenario(tmp_path, '[[flows]]\ncount = 1\nstack = "rttlab"'))
    f = tr.result.flows.iloc[0]
    b = tr.result.channels.set_index("name").loc["bottleneck>"]
    sender = tr.apps[0]["sender"]
    assert sender["connected"] and sender["error"] is None, sender
    assert (sender["sack"], sender["timestamps"], sender["mss"]) == (True, True, 1448)
    assert sender["undecodable"] == 0
    assert (f.stack, f.cc) == ("rttlab", "reno")
    # ≥ 85 % of the payload rate (1448 of every 1500 bytes on the wire) reaches the application.
    assert f.goodput_bps >= 0.85 * 10e6 * 1448 / 1500, f.goodput_bps
    assert b.utilisation >= 0.85
    # The sender's own RTT samples: the 41.2 ms path plus at most the 100-packet queue, Linux's
    # delayed-ACK timer (TCP_DELACK_MIN 40 ms: a delayed ACK echoes the TSval of the segment that
    # waited) and the emulator's lateness; its counters and the wire agree on what was resent.
    assert f.rtt_samples > 500
    assert 0.0405 <= f.rtt_min and f.rtt_max <= 0.0412 + 0.1212 + 0.040 + 0.03, (
        f.rtt_min,
        f.rtt_max,
    )
    assert f.retransmissions == tr.emulator["flows"][0]["retransmissions"]
    rtt = tr.result.tables["rtt"].to_pandas()
    assert rtt["prediction"].notna().sum() > 500, (
        "the estimator's predictions are traced as in simulation"
    )
    assert tr.emulator["mismatched"] == 0
    assert not our_namespaces()


@needs_machine
def test_a_mixed_run_names_each_flows_stack_over_one_bottleneck(tmp_path: Path) -> None:
    from rttlab.testbed import run

    tr = run(
        scenario(
            tmp_path, '[[flows]]\ncount = 1\n[[flows]]\ncount = 1\nstack = "rttlab"', duration="4s"
        )
    )
    fl = tr.result.flows
    assert list(fl["stack"]) == ["kernel", "rttlab"]
    assert list(fl["cc"]) == ["linux-reno", "reno"]
    assert (fl["goodput_bps"] > 1e6).all(), list(fl["goodput_bps"])
    assert fl["goodput_bps"].sum() >= 0.85 * 10e6 * 1448 / 1500
    assert tr.apps[1]["sender"]["connected"]


@needs_machine
def test_a_receiver_that_never_answers_gets_a_one_line_error_and_no_half_open_state(
    tmp_path: Path,
) -> None:
    import json
    import os
    import sys

    # A link that loses every packet: the SYNs never reach the receiver. Through the CLI.
    lossy = 'bandwidth = "10Mbps", delay = "20ms", error = { kind = "bernoulli", per = 1.0 }'
    path = scenario(
        tmp_path, '[[flows]]\ncount = 1\nstack = "rttlab"', bottleneck=lossy, duration="8s"
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "python"), os.environ.get("PYTHONPATH", "")]),
    }
    p = subprocess.Popen(
        [sys.executable, "-m", "rttlab.cli.main", "testbed", str(path), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    doc = json.loads(out)
    s = doc["apps"][0]["sender"]
    assert not s["connected"]
    assert s["error"] == "no answer to 3 SYN(s) in 7.0 s; gave up and sent RST", s
    assert (s["syns"], s["resets_sent"]) == (3, 1)
    assert doc["testbed"]["aggregate_goodput_bps"] == 0
    assert not our_namespaces(p.pid)


def graph(tmp_path: Path, flows: str, duration: str = "4s") -> Path:
    """Hosts 0 and 2 behind router 1: 100 Mb/s access, a 20 Mb/s, 10 ms bottleneck 1 → 2."""
    p = tmp_path / "g.toml"
    p.write_text(
        f"""
[simulation]
duration = "{duration}"
warmup = "0s"
[topology]
kind = "graph"
nodes = 3
[[topology.links]]
a = 0
b = 1
bandwidth = "100Mbps"
delay = "1ms"
queue = {{ kind = "droptail", limit = "1000p" }}
[[topology.links]]
a = 1
b = 2
bandwidth = "20Mbps"
delay = "10ms"
queue = {{ kind = "droptail", limit = "100p" }}
{TCP}{flows}
"""
    )
    return p


@needs_machine
def test_several_rttlab_flows_and_a_kernel_flow_send_from_one_host_each_with_its_own_sender_and_score(
    tmp_path: Path,
) -> None:
    from rttlab.testbed import run

    flows = """
[[flows]]
count = 2
src = 0
dst = 2
bytes = "300kB"
stack = "rttlab"
[[flows]]
count = 1
src = 0
dst = 2
bytes = "300kB"
stack = "rttlab"
tcp = { cc = "cubic", rto = { estimator = "linux" } }
[[flows]]
count = 1
src = 0
dst = 2
bytes = "300kB"
"""
    tr = run(graph(tmp_path, flows), out_dir=tmp_path / "out")
    fl = tr.result.flows
    assert list(fl["stack"]) == ["rttlab", "rttlab", "rttlab", "kernel"]
    assert list(fl["cc"]) == ["reno", "reno", "cubic", "linux-reno"]
    assert list(fl["estimator"][:3]) == ["rfc6298", "rfc6298", "linux"], list(fl["estimator"])
    for f in range(3):
        s = tr.apps[f]["sender"]
        # Each its own handshake (its own source port on the shared host) and its own sender.
        assert s["connected"] and s["error"] is None and s["resets_received"] == 0, (f, s)
        assert tr.metadata["flows"][f]["sport"] == 40000 + f
        # Each scored as in simulation: its own samples, prediction error and mean window.
        assert (
            fl["rtt_samples"][f] > 20
            and fl["pred_error_before"][f] is not None
            and fl["mean_cwnd"][f] > 0
        ), fl.iloc[f]
    # Every transfer, the kernel's too, completed against the Linux receiver.
    assert list(fl["bytes_delivered"]) == [300_000] * 4, list(fl["bytes_delivered"])
    assert fl["completed"].notna().all(), list(fl["completed"])
    # The host's namespace (it sends a kernel flow) keeps its kernel off rttlab's source ports.
    ns = tr.metadata["namespaces"][tr.metadata["flows"][3]["sender_ns"]]
    assert ns["net.ipv4.ip_local_reserved_ports"] == "40000,40001,40002"
    rtt = tr.result.tables["rtt"].to_pandas()
    assert set(rtt.loc[rtt["prediction"].notna(), "flow"]) == {0, 1, 2}, (
        "each rttlab flow's estimator traced its own samples"
    )
    assert tr.emulator["mismatched"] == 0
    assert not our_namespaces()


@needs_machine
def test_a_host_that_receives_a_kernel_flow_also_sends_an_rttlab_flow(tmp_path: Path) -> None:
    from rttlab.testbed import run

    # Node 2 receives Linux's flow 0 and sends rttlab's flow 1 back to node 0, which sends flow 0
    # and receives flow 1: both hosts have namespaces and share their ports with rttlab's sender.
    flows = """
[[flows]]
count = 1
src = 0
dst = 2
bytes = "300kB"
[[flows]]
count = 1
src = 2
dst = 0
bytes = "300kB"
stack = "rttlab"
"""
    tr = run(graph(tmp_path, flows, duration="3s"))
    fl = tr.result.flows
    assert list(fl["stack"]) == ["kernel", "rttlab"]
    assert tr.apps[1]["sender"]["connected"] and tr.apps[1]["sender"]["error"] is None
    assert list(fl["bytes_delivered"]) == [300_000, 300_000], list(fl["bytes_delivered"])
    assert fl["completed"].notna().all()
    assert not our_namespaces()


@needs_machine
def test_one_senders_failed_handshake_is_its_own_error_and_the_hosts_other_rttlab_flow_completes(
    tmp_path: Path,
) -> None:
    from rttlab.testbed import run

    # Node 0 sends flow 0 to node 2 and flow 1 to node 3, whose link loses every packet.
    p = graph(
        tmp_path,
        '[[flows]]\ncount = 1\nsrc = 0\ndst = 2\nbytes = "300kB"\nstack = "rttlab"\n[[flows]]\ncount = 1\nsrc = 0\ndst = 3\nbytes = "300kB"\nstack = "rttlab"',
        duration="3s",
    )
    text = p.read_text().replace("nodes = 3", "nodes = 4")
    text = text.replace(
        "[tcp]",
        '[[topology.links]]\na = 1\nb = 3\nbandwidth = "20Mbps"\ndelay = "10ms"\nerror = { kind = "bernoulli", per = 1.0 }\n[tcp]',
    )
    p.write_text(text)
    tr = run(p)
    ok, lost = tr.apps[0]["sender"], tr.apps[1]["sender"]
    assert (
        ok["connected"] and ok["error"] is None and tr.result.flows["bytes_delivered"][0] == 300_000
    )
    assert not lost["connected"]
    assert lost["error"].startswith("no answer to 2 SYN(s)") and lost["error"].endswith(
        "before the run ended; sent RST"
    ), lost["error"]
    assert lost["resets_sent"] == 1 and ok["resets_received"] == 0
    assert tr.metadata["flow_errors"] == {1: lost["error"]}
    assert not our_namespaces()
