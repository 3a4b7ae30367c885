"""rttlab.peers.ns2: an rttlab scenario as an ns-2.35 script, run by Debian's ``ns`` (make test-deps)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
import rttlab
from rttlab.experiments.stats import t_interval
from rttlab.peers.ns2 import engine as ns2

ROOT = Path(__file__).resolve().parent.parent
N1_RED = ROOT / "examples" / "scenarios" / "dumbbell-n1-red.toml"
N10_RED = ROOT / "examples" / "scenarios" / "dumbbell-n10-red.toml"
RTTLAB = [sys.executable, "-c", "from rttlab.cli.main import main; main()"]

needs_ns = pytest.mark.skipif(
    shutil.which("ns") is None and not os.environ.get("CI"),
    reason="ns-2's `ns` is not on PATH (Debian package ns2; make test-deps installs it)",
)


def test_the_script_of_a_small_scenario_is_pinned():
    """The data part of the script (the template, topology.tcl, follows it verbatim): every ns-2
    default that differs from rttlab's is set from the scenario (docs/ns2-comparison.md)."""
    s = rttlab.Scenario.load(N1_RED).with_(
        {
            "simulation.duration": "5s",
            "simulation.seed": 3,
            "tcp.delayed_ack": "200ms",
            "topology.bottleneck.error.kind": "bernoulli",
            "topology.bottleneck.error.per": 0.01,
        }
    )
    text = ns2.script(s)
    data, template = text.split("\n\n", 1)
    assert template == (ROOT / "python/rttlab/peers/ns2/topology.tcl").read_text()
    assert data.splitlines()[1:] == [
        "set cfg(duration) 5.0",
        "set cfg(seed) 3",
        "set cfg(nodes) 4",
        "set cfg(bn_from) 0",
        "set cfg(bn_to) 1",
        "set cfg(bn_bw) 10000000.0",
        "set cfg(mss) 1448",
        "set cfg(data_size) 1500",
        "set cfg(err_dirs) {0 1}",
        "set cfg(err_unit) pkt",
        "set cfg(err_rate) 0.01",
        "set cfg(tcp) Agent/TCP/Newreno",
        "set cfg(sink) Agent/TCPSink/DelAck",
        "set cfg(qsample) 0.0",
        # The dumbbell as a graph: bottleneck 0 -> 1, sender 2 -> router 0, router 1 -> receiver 3.
        "set links {{0 1 10000000.0 0.02 RED 100 {bytes_ false queue_in_bytes_ false thresh_ 25.0"
        " maxthresh_ 75.0 q_weight_ 0.002 linterm_ 10.0 gentle_ false wait_ false setbit_ false"
        " use_mark_p_ true mark_p_ 1.0 mean_pktsize_ 1500}}"
        " {2 0 100000000.0 0.001 DropTail 1000 {}} {1 3 100000000.0 0.001 DropTail 1000 {}}}",
        "set flows {{0 0.1 {bulk inf} 2 3 {46345 0}}}",
        "set tcpvars {packetSize_ 1448 tcpip_base_hdr_size_ 52 window_ 46345 windowInit_ 10"
        " singledup_ 0 maxburst_ 0 syn_ false ecn_ 0 timestamps_ false ts_resetRTO_ false tcpTick_ 0.001"
        " minrto_ 1.0 maxrto_ 60.0 rtxcur_init_ 1.0 rttvar_exp_ 2}",
        "set classvars {exit_recovery_fix_ 1}",
        "set sinkvars {packetSize_ 52 interval_ 0.2}",
    ]


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        ({"topology.bottleneck.queue": {"kind": "codel"}}, "topology.bottleneck.queue.kind"),
        ({"tcp.cc": "bbr", "tcp.sack": True}, "tcp.cc"),
        ({"tcp.cc": "cubic"}, "tcp.cc"),
        ({"topology.bottleneck.agent": {"kind": "snoop"}}, "topology.bottleneck.agent"),
        (
            {
                "topology.bottleneck.error": {
                    "kind": "gilbert-elliott",
                    "p_gb": 0.01,
                    "p_bg": 0.5,
                }
            },
            "topology.bottleneck.error.kind",
        ),
        ({"topology.bottleneck.queue.limit": "150000B"}, "topology.bottleneck.queue.limit"),
        ({"tcp.rto.estimator": "eifel"}, "tcp.rto.estimator"),
        ({"tcp.rto.max_backoff": 6}, "tcp.rto.max_backoff"),
        ({"flows.0.start_jitter": "5ms"}, "flows.0.start_jitter"),
        ({"flows.0.stop": "3s"}, "flows.0.stop"),
        ({"simulation.warmup": "1s"}, "simulation.warmup"),
    ],
)
def test_what_ns2_cannot_express_is_refused_in_one_line_naming_the_key_and_the_engine(
    overrides, key
):
    doc = rttlab.Scenario.load(N1_RED).with_(overrides).resolved()
    with pytest.raises(ns2.Ns2Unsupported) as e:
        ns2.check(doc)
    message = str(e.value)
    assert message.startswith(key + ":"), message
    assert "ns-2" in message and "\n" not in message


def test_the_engine_is_registered_for_sweeps():
    from rttlab.experiments import simulators

    assert simulators.get("ns2") is ns2.SIMULATOR


@needs_ns
def test_a_short_ns2_run_agrees_with_rttlab_within_the_interval():
    """Ten NewReno flows through RED (random drops: the seeds differ), 10 s, five seeds each: the
    mean aggregate goodput of the two engines differs by less than the two intervals together,
    and the bottleneck's drops are split by cause as in rttlab."""
    base = rttlab.Scenario.load(N10_RED).with_({"simulation.duration": "10s"})
    ours, theirs = [], []
    for seed in range(1, 6):
        s = base.with_({"simulation.seed": seed})
        ours.append(rttlab.simulate(s).aggregate_goodput_bps)
        r = ns2.simulate(s)
        theirs.append(r.aggregate_goodput_bps)
        ch = r.tables["channels"].to_pylist()[0]
        assert ch["drops_aqm"] > 0 and ch["drops_corruption"] == 0
        assert ch["arrivals"] >= ch["departures"] + ch["drops_overflow"] + ch["drops_aqm"]
    assert len(set(theirs)) > 1, "RED draws from the seed's substream: seeds differ"
    a, b = t_interval(ours), t_interval(theirs)
    assert abs(a["mean"] - b["mean"]) <= a["half_width"] + b["half_width"], (a, b)


@needs_ns
def test_a_graph_runs_with_its_first_monitored_link_as_the_bottleneck():
    """The parking lot (three 10 Mb/s hops, one flow across all, one per hop): each one-hop flow
    takes most of its hop in both engines, and the reported channel is rttlab's `links[0]>`."""
    s = rttlab.Scenario.load(ROOT / "examples" / "scenarios" / "parking-lot.toml").with_(
        {"simulation.duration": "10s"}
    )
    theirs, ours = ns2.simulate(s), rttlab.simulate(s)
    assert theirs.bottleneck == ours.bottleneck == "links[0]>"
    assert theirs.tables["channels"].column("name").to_pylist() == ["links[0]>"]
    short = theirs.tables["flows"].column("goodput_bps").to_pylist()[1:]
    assert all(g > 7e6 for g in short), short
    assert abs(theirs.aggregate_goodput_bps / ours.aggregate_goodput_bps - 1) < 0.05


@needs_ns
def test_random_starts_are_drawn_by_ns2_from_the_seed_and_reported():
    s = rttlab.Scenario.load(N10_RED).with_(
        {
            "simulation.duration": "3s",
            "flows.0.start": "uniform(0s, 2s)",
            "flows.0.start_step": "0s",
        }
    )
    one, two = (
        ns2.simulate(s.with_({"simulation.seed": k})).tables["flows"].column("start").to_pylist()
        for k in (1, 2)
    )
    assert all(0 <= t < 2 for t in one + two)
    assert len(set(one)) == 10 and one != two


@needs_ns
def test_byte_counts_past_ns2s_32_bit_counters_are_kept():
    """ns-2's byte counters are C ints (wrapping at 2^31 bytes, 172 s at 100 Mb/s); one flow at
    about 85 Mb/s for 250 s delivers 2.6 GB, which the totals must still show."""
    s = rttlab.Scenario.load(N1_RED).with_(
        {
            "simulation.duration": "250s",
            "topology.bottleneck.bandwidth": "100Mbps",
            "topology.bottleneck.queue": {"kind": "droptail", "limit": "100p"},
            "topology.access.bandwidth": "1Gbps",
        }
    )
    r = ns2.simulate(s)
    assert r.tables["channels"].column("bytes_sent")[0].as_py() > 2**31
    assert r.tables["flows"].column("bytes_delivered")[0].as_py() > 2**31
    assert 80e6 < r.aggregate_goodput_bps < 100e6


@needs_ns
def test_the_queue_trace_and_per_group_ssthresh_give_table_3s_peak_as_rttlab_does():
    """SpecTCP Table 3's base case (two Reno+ECN flows, initial ssthresh 15 set per group, RED):
    ns-2's queue trace, sampled every 1 ms like rttlab's, peaks within two packets of rttlab's.
    The initial ssthresh is `ssthresh_` at time 0, not `max_ssthresh_` (which also turns on
    limited slow start in ns-2.35 and made this peak 63)."""
    from rttlab.experiments.reproduce import Reproduction

    run = Reproduction.load("spectcp-table3-ns2", quick=True).sweep().runs[0]
    theirs = ns2.simulate(run.scenario, traces=["queue"]).tables["queue"]
    ours = rttlab.simulate(run.scenario, traces=["queue"]).tables["queue"].to_pandas()
    ours = ours[ours.channel == ours.channel.min()]
    assert theirs.num_rows == 30000  # 30 s every 1 ms
    peak = max(theirs.column("packets").to_pylist())
    assert abs(peak - int(ours.packets.max())) <= 2, (peak, ours.packets.max())
    assert 5 < max(theirs.column("average").to_pylist()) < 15
    with pytest.raises(ns2.Ns2Unsupported, match="^traces: 'window'"):
        ns2.simulate(run.scenario, traces=["window"])


@needs_ns
def test_the_same_seed_gives_the_same_ns2_run():
    s = rttlab.Scenario.load(N10_RED).with_({"simulation.duration": "3s", "simulation.seed": 2})
    one, two = ns2.simulate(s), ns2.simulate(s)
    assert one.tables["flows"].equals(two.tables["flows"])
    assert one.tables["channels"].equals(two.tables["channels"])


@needs_ns
def test_a_bit_error_rate_on_the_bottleneck_is_counted_as_corruption():
    s = rttlab.Scenario.load(N1_RED).with_(
        {
            "simulation.duration": "5s",
            "topology.bottleneck.queue": {"kind": "droptail", "limit": "100p"},
            "topology.bottleneck.error": {"kind": "ber", "ber": 1e-5},
        }
    )
    r = ns2.simulate(s)
    ch = r.tables["channels"].to_pylist()[0]
    # 1 − (1 − 1e-5)^(8·1500) ≈ 11 % of the data packets that crossed the link.
    assert 0.08 < ch["drops_corruption"] / ch["departures"] < 0.14, ch


@needs_ns
def test_ns2_dumbbell_quick_stores_ns2_runs_as_runs_of_their_own(tmp_path):
    """`rttlab reproduce ns2-dumbbell --quick`: four dumbbells (1 and 10 flows, DropTail and RED),
    20 s, seed 1, in both engines; each ns-2 run is a run of its own in the store, with ns-2's
    version, and the comparison has a row per point with ns-2's value as the peer's."""
    r = subprocess.run(
        [*RTTLAB, "reproduce", "ns2-dumbbell", "--quick", "--workers", "1", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert r.returncode in (0, 1), r.stderr[-3000:]
    rows = json.loads((tmp_path / "comparison.json").read_text())["rows"]
    assert {
        (row["params"]["flows.0.count"], row["params"]["simulation.name"], row["metric"])
        for row in rows
    } == {
        (n, q, m)
        for n in (1, 10)
        for q in ("droptail", "red")
        for m in ("goodput_bps", "jain_index")
    }
    for row in rows:
        assert row["source"] == "ns2 (1 run)", row
    with duckdb.connect(str(tmp_path / "results.duckdb"), read_only=True) as c:
        sims = dict(
            c.execute(
                "SELECT simulator, count(*) FROM runs WHERE status = 'ok' GROUP BY ALL"
            ).fetchall()
        )
        version = c.execute(
            "SELECT DISTINCT simulator_version FROM runs WHERE simulator = 'ns2'"
        ).fetchall()
    assert sims == {"rttlab": 4, "ns2": 4}
    assert version == [("ns-2 2.35",)]
