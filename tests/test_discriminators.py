"""Receiver-side loss discriminators from Python (rttlab.discriminators): on a simulated run's
per-packet `receive` trace and on a capture (classification only)."""

from __future__ import annotations

from pathlib import Path

import pytest

import rttlab
from rttlab.discriminators import NAMES, classify, classify_capture

LOSSY = Path(__file__).resolve().parents[1] / "examples" / "spectcp" / "lossy-link.toml"


def test_a_simulated_runs_gaps_get_one_verdict_per_discriminator():
    r = rttlab.simulate(LOSSY, set=["simulation.duration=120s", "topology.bottleneck.error.ber=1e-5"], traces="all,receive")
    arrivals = r.traces["receive"]
    assert len(arrivals) > 100 and "receive" not in rttlab.simulate(LOSSY, set=["simulation.duration=5s"]).traces
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
