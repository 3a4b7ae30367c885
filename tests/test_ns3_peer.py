"""rttlab.peers.ns3.dumbbell: the mapping of a resolved scenario to ns-3 (the `ns3` extra)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import rttlab
from rttlab.peers.ns3 import dumbbell as ns3

ROOT = Path(__file__).resolve().parent.parent
N1 = ROOT / "examples" / "scenarios" / "dumbbell-n1-red.toml"


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        (
            {"topology.bottleneck.error.kind": "bernoulli", "topology.bottleneck.error.per": 0.01},
            "topology.bottleneck.error",
        ),
        ({"topology.access.losses": ["1s"]}, "topology.access.losses"),
        ({"tcp.cc": "reno"}, "tcp.cc"),
        ({"flows.0.bytes": "1MB"}, "flows.0.bytes"),
        ({"flows.0.start_jitter": "5ms"}, "flows.0.start"),
        ({"simulation.warmup": "1s"}, "simulation.warmup"),
        ({"tcp.receiver_ecn": False}, "tcp.receiver_ecn"),
        ({"topology.bottleneck.agent": {"kind": "snoop"}}, "topology.bottleneck.agent"),
        ({"flows.0.stop": "30s"}, "flows.0.stop"),
    ],
)
def test_what_the_mapping_cannot_carry_is_refused_naming_the_key(overrides, key):
    doc = rttlab.Scenario.load(N1).with_(overrides).resolved()
    with pytest.raises(ns3.Ns3Unsupported, match=key):
        ns3.check(doc)


def test_cubic_maps_every_parameter_to_tcp_cubic_and_bbr_to_tcp_bbr():
    socket, attrs = ns3._congestion_control("cubic")
    assert socket == "ns3::TcpCubic"
    assert attrs == {
        "Beta": 0.7001953125,
        "C": 0.400390625,
        "FastConvergence": True,
        "TcpFriendliness": True,
        "HyStart": True,
    }
    assert ns3._congestion_control({"name": "cubic", "hystart": "off", "beta": 0.8})[
        1
    ] | {} == attrs | {"HyStart": False, "Beta": 0.8}
    assert ns3._congestion_control("bbr") == ("ns3::TcpBbr", {})
    with pytest.raises(ns3.Ns3Unsupported, match="tcp.cc.hystart"):
        ns3._congestion_control({"name": "cubic", "hystart": "hystart++"})


def test_a_scenario_without_an_access_queue_gets_rttlabs_default_not_ns3s():
    """The old script gave ns-3 a 1000-packet access queue where rttlab uses 100: the mapping now
    reads the resolved scenario, whose access queue is the core's default."""
    text = N1.read_text().replace('queue = { kind = "droptail", limit = "1000p" }', "")
    assert (
        rttlab.Scenario.from_toml(text).resolved()["topology"]["access"]["queue"]["limit"] == "100p"
    )


@pytest.mark.skipif(
    importlib.util.find_spec("ns") is None and not os.environ.get("CI"),
    reason="the ns3 wheel is not installed; CI installs it",
)
def test_ns3_runs_in_one_process_do_not_depend_on_what_ran_before():
    """RED draws random numbers; its streams are assigned explicitly, so a Dask worker may run
    many ns-3 runs in one process: the same run before and after another gives the same result."""
    code = f"""
import json, rttlab
from rttlab.peers.ns3 import dumbbell as ns3
def run(name):
    s = rttlab.Scenario.load({str(ROOT / "examples" / "scenarios")!r} + '/' + name + '.toml').with_(["simulation.duration=20s", "tcp.sack=true"]).with_(ns3.COMPARABLE)
    r = ns3.simulate(s)
    return [r.aggregate_goodput_bps, r.events, int(r.channels.drops_overflow[0])]
print(json.dumps([run("dumbbell-n1-red"), run("dumbbell-n10-red"), run("dumbbell-n1-red")]))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    first, other, again = json.loads(out.stdout.strip().splitlines()[-1])
    assert first == again
    assert first != other


def test_real_stacks_get_the_delayed_ack_timer_as_the_core_reads_it_whichever_way_off_is_written():
    from rttlab import _core

    s = rttlab.Scenario.load(N1)
    for spelling, ns in [
        ("off", None),
        ("none", None),
        ("false", None),
        ("200ms", 200_000_000),
        ("0.04s", 40_000_000),
    ]:
        assert (
            _core.flow_tcp(s.with_({"tcp.delayed_ack": spelling}).canonical_toml)[0][
                "delayed_ack_ns"
            ]
            == ns
        ), spelling


@pytest.mark.skipif(
    importlib.util.find_spec("ns") is None and not os.environ.get("CI"),
    reason="the ns3 wheel is not installed; CI installs it",
)
def test_ns3_runs_a_scenario_whose_delayed_ack_is_none_as_one_whose_is_off():
    """ns-3 read the spelling itself and knew only "off": "none" and "false" failed as durations."""
    s = (
        rttlab.Scenario.load(N1)
        .with_(["simulation.duration=5s", "tcp.sack=true"])
        .with_(ns3.COMPARABLE)
    )
    off, none = (ns3.simulate(s.with_({"tcp.delayed_ack": d})) for d in ("off", "none"))
    assert (none.aggregate_goodput_bps, none.events) == (off.aggregate_goodput_bps, off.events)
    delayed = ns3.simulate(s.with_({"tcp.delayed_ack": "200ms"}))
    assert delayed.events != off.events, "a delayed-ACK timer changes the run"
