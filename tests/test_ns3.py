"""rttlab's simulator against ns-3 on the RED + ECN dumbbell (docs/ns3-comparison.md).

Opt-in (`RTTLAB_NS3=1`): importing the ns-3 wheel alone takes 10-30 s."""

from __future__ import annotations

import importlib.util
import os
import sys
import tomllib
from pathlib import Path

import pytest

import rttlab

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [
    pytest.mark.skipif(os.environ.get("RTTLAB_NS3") != "1", reason="set RTTLAB_NS3=1 to compare with ns-3 (slow)"),
    pytest.mark.skipif(importlib.util.find_spec("ns") is None, reason="the ns3 wheel is not installed"),
]


def test_red_ecn_dumbbell_agrees_with_ns3_on_goodput_drops_and_marks():
    sys.path.insert(0, str(ROOT / "scripts"))
    from ns3_compare import run_ns3, set_path

    scenario = ROOT / "examples" / "scenarios" / "dumbbell-n10-red-ecn.toml"
    overrides = ["simulation.duration=30s", "tcp.timestamps=true", "tcp.header=54B"]
    doc = tomllib.loads(scenario.read_text())
    for o in overrides:
        set_path(doc, o)
    ours = rttlab.simulate(scenario, set=overrides)
    theirs = run_ns3(doc)
    b = ours.channels.set_index("name").loc[ours.bottleneck]
    assert ours.aggregate_goodput_bps == pytest.approx(sum(theirs["goodput"]), rel=0.05)
    assert b.marks == pytest.approx(theirs["marks"], rel=0.25)
    assert b.marks > 10 * (b.drops_aqm + 1)
