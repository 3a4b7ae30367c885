"""Receiver-side loss discriminators from Python (rttlab.trace.discriminators): on a simulated run's
per-packet `receive` trace and on a capture (classification only)."""

from __future__ import annotations

from pathlib import Path

import pytest
import rttlab
from rttlab.trace.discriminators import NAMES, classify, classify_capture

LOSSY = Path(__file__).resolve().parents[1] / "examples" / "spectcp" / "lossy-link.toml"


def test_a_simulated_runs_gaps_get_one_verdict_per_discriminator():
    r = rttlab.simulate(
        LOSSY,
        set=["simulation.duration=120s", "topology.bottleneck.error.ber=1e-5"],
        traces="all,receive",
    )
    arrivals = r.traces["receive"]
    assert (
        len(arrivals) > 100
        and "receive" not in rttlab.simulate(LOSSY, set=["simulation.duration=5s"]).traces
    )
    gaps = classify(arrivals)
    assert len(gaps) > 0 and (gaps["missing"] > 0).all() and (gaps["seq"] > gaps["from"]).all()
    for name in NAMES:
        assert set(gaps[name]) <= {"congestion", "corruption"}
    # Every gap is a jump above the highest byte seen before it, in arrival order.
    high, jumps = 0, 0
    for seq, length in zip(arrivals["seq"], arrivals["len"]):
        jumps += seq > high
        high = max(high, seq + length)
    assert len(gaps) == jumps


def test_a_capture_is_classified_per_direction(shared):
    path = shared / "captures" / "ndpi_exe_download-2020.pcap"
    if not path.exists():
        pytest.skip(f"{path} is missing")
    gaps = classify_capture(path)
    assert list(gaps.columns[:4]) == ["src", "dst", "ts_hz", "time"]
    assert set(NAMES) <= set(gaps.columns)


def test_an_unreadable_capture_names_the_file(tmp_path):
    bad = tmp_path / "x.pcap"
    bad.write_bytes(b"not a capture")
    with pytest.raises(rttlab.InputError, match="x.pcap"):
        classify_capture(bad)


def test_score_rates_every_discriminator_on_a_simulated_runs_ground_truth():
    from rttlab.trace.discriminators import score

    sc = rttlab.Scenario.load(LOSSY).with_(
        {"simulation.duration": "300s", "topology.bottleneck.error.ber": 1e-5}
    )
    s = score(sc, seed=2)
    assert set(s["side"]) == {"sender", "receiver"} and set(s["flow"]) == {0}
    assert set(s.loc[s["side"] == "receiver", "discriminator"]) == set(NAMES)
    assert {"bernoulli", "vegas", "ntg", "ndg", "veno", "two-bit"} <= set(
        s.loc[s["side"] == "sender", "discriminator"]
    )
    # Ground truth, independently: every data drop of the flow that a later resend of the same
    # segment answered is one sender-side loss, congestion if a queue dropped it.
    r = rttlab.simulate(sc, seed=2, traces="drops,retransmissions")
    drops, retx = r.traces["drops"], r.traces["retransmissions"]
    drops = drops[(drops["flow"] == 0) & (drops["kind"] == "data")]
    answered = [
        bool(((retx["seq"] == d.seq) & (retx["time"] >= d.time)).any()) for d in drops.itertuples()
    ]
    truth = drops[answered]
    sender = s[s["side"] == "sender"]
    assert (
        sender["congestion_as_congestion"] + sender["congestion_as_corruption"]
        == int(truth["congestion"].sum())
    ).all()
    assert (
        sender["corruption_as_corruption"] + sender["corruption_as_congestion"]
        == int((~truth["congestion"]).sum())
    ).all()
    assert truth["congestion"].any() and (~truth["congestion"]).any()
    # The conditional Bernoulli predictor with p = 1 calls every loss corruption.
    b = sender[sender["discriminator"] == "bernoulli"].iloc[0]
    assert b["congestion_missed"] == 1.0 and b["corruption_missed"] == 0.0
    assert b["misprediction"] == pytest.approx(truth["congestion"].mean())


def test_score_names_the_file_it_cannot_read(tmp_path):
    from rttlab.trace.discriminators import score

    with pytest.raises(rttlab.ScenarioError, match="cannot read scenario .*missing.toml"):
        score(tmp_path / "missing.toml")
