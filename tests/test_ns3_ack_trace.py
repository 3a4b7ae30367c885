"""ns-3 3.44's TcpVegas and TcpVeno depart from Linux where docs/ns3-comparison.md ("Vegas and Veno
traced") says they do, read from ns-3's own state at every ACK (rttlab.peers.ns3.ack_trace): the
RTT they get is TcpSocketBase's smoothed RTT, seeded by the handshake; TcpVeno zeroes its sample
count after every ACK, so its Vegas-style rule never runs. The Linux-like variants undo exactly
that. One subprocess, four 2-second runs of the 1-flow dumbbell (ns-3's import ≈ 30 s)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("ns") is None and not os.environ.get("CI"),
    reason="the ns3 wheel is not installed (pip install -e '.[ns3]'); CI installs it",
)

SCRIPT = r"""
import json, sys
import rttlab
from rttlab.peers.ns3 import dumbbell as ns3
out = {}
for cc, variant in (("vegas", None), ("vegas", "ns3::TcpVegasLinuxRtt"), ("veno", None), ("veno", "ns3::TcpVenoLinux")):
    s = rttlab.Scenario.load(sys.argv[1]).with_([f"tcp.cc={cc}", "simulation.duration=2s", "tcp.sack=true"]).with_(ns3.COMPARABLE)
    t = ns3.simulate(s, ack_trace=[0], cc_type=variant).tables["ack_trace"].to_pandas()
    out[f"{cc} {variant}"] = {k: t[k].tolist() for k in ("last_rtt", "srtt", "base_rtt", "cnt_rtt")} | {"state": t.state.astype(str).tolist()}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def traces() -> dict:
    scenario = ROOT / "examples" / "scenarios" / "dumbbell-n1-droptail.toml"
    r = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(scenario)], capture_output=True, text=True, timeout=900
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_ns3_vegas_base_rtt_is_the_smoothed_rtt_seeded_by_the_handshake(traces):
    # Row k is the state before ACK k: row 0 the SYN-ACK, row 1 the first data ACK, row 2 after it.
    t = traces["vegas None"]
    syn, first = t["last_rtt"][1], t["last_rtt"][2]
    assert first > syn, "the first data segment queues behind the initial window; the SYN did not"
    # RFC 6298 with the SYN's sample as the first: SRTT = 7/8·SYN + 1/8·first, and that is BaseRTT.
    assert t["base_rtt"][2] == t["srtt"][2] == pytest.approx(0.875 * syn + 0.125 * first, abs=1)


def test_ns3_vegas_given_the_acks_own_sample_takes_it_as_base_rtt_as_linux_does(traces):
    t = traces["vegas ns3::TcpVegasLinuxRtt"]
    assert t["base_rtt"][2] == t["last_rtt"][2] == min(x for x in t["last_rtt"][2:] if x > 0)


def test_ns3_veno_never_has_three_samples_when_it_grows_the_window_and_linuxs_count_does(traces):
    # In the open state PktsAcked adds one sample before IncreaseWindow, which needs three.
    def most_at_increase(t: dict) -> int:
        return max(c + 1 for c, s in zip(t["cnt_rtt"], t["state"]) if s == "open")

    assert most_at_increase(traces["veno None"]) == 1
    assert most_at_increase(traces["veno ns3::TcpVenoLinux"]) > 100


def test_a_variant_of_another_congestion_control_is_refused_before_ns3_is_loaded():
    import rttlab
    from rttlab.peers.ns3 import dumbbell as ns3

    s = rttlab.Scenario.load(ROOT / "examples" / "scenarios" / "dumbbell-n1-droptail.toml").with_(
        ["tcp.cc=vegas"]
    )
    with pytest.raises(
        ns3.Ns3Unsupported,
        match=r"^cc_type: 'ns3::TcpVenoLinux' is no variant of ns3::TcpVegas \(variants: ",
    ):
        ns3.simulate(s, cc_type="ns3::TcpVenoLinux")
