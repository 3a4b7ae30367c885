"""rttlab's simulator against ns-3 3.44 (the PyPI wheel, extra `rttlab[ns3]`) on the example
dumbbells, 60 s each, every ns-3 run in a fresh process (ns-3's random streams depend on what ran
before in the same process). Criteria: aggregate goodput within 3 %, Jain index within
0.03, drop counts of the same magnitude (here: within a factor of 2). All nine scenarios with SACK
at both ends; without SACK the four where ns-3's non-SACK recovery does not collapse.
docs/ns3-comparison.md has every number and explains each difference.

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


def compare(name: str, *overrides: str) -> dict:
    scenario = ROOT / "examples" / "scenarios" / f"{name}.toml"
    sets = [a for o in overrides for a in ("--set", o)]
    out = subprocess.run(
        [sys.executable, ROOT / "scripts" / "ns3_compare.py", scenario, *sets, "--json"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def assert_agree(r: dict, check_marks: bool) -> None:
    ours, theirs = r["rttlab"], r["ns3"]
    assert ours["goodput_bps"] == pytest.approx(theirs["goodput_bps"], rel=0.03)
    assert abs(ours["jain"] - theirs["jain"]) <= 0.03
    assert 0.5 <= (ours["drops"] + 1) / (theirs["drops"] + 1) <= 2.0, (
        ours["drops"],
        theirs["drops"],
    )
    if check_marks:
        assert 0.5 <= (ours["marks"] + 1) / (theirs["marks"] + 1) <= 2.0, (
            ours["marks"],
            theirs["marks"],
        )


SCENARIOS = [f"dumbbell-n{n}-{q}" for n in (1, 10, 50) for q in ("droptail", "red", "red-ecn")]
# ECN marks differ by more than 2x here (rttlab 176, ns-3 48), nearly all during the recovery
# from the initial slow-start overshoot; goodput, drops and ECN reductions agree
# (docs/ns3-comparison.md).
MARKS_DIFFER = {"dumbbell-n1-red-ecn"}


@pytest.mark.parametrize("name", SCENARIOS)
def test_with_sack_goodput_fairness_and_drops_agree_with_ns3(name):
    """Both with SACK (ns-3's default; rttlab `tcp.sack = true`, RFC 6675 recovery)."""
    assert_agree(
        compare(name, "tcp.sack=true"), check_marks="ecn" in name and name not in MARKS_DIFFER
    )


# Without SACK, where ns-3's non-SACK NewReno path does not collapse. The others (single flow on
# any queue, 10 flows on RED, Jain with 50 flows on DropTail) are measured and explained in
# docs/ns3-comparison.md: ns-3's non-SACK recovery, not rttlab's, is what diverges there.
AGREEING_WITHOUT_SACK = [
    "dumbbell-n10-droptail",
    "dumbbell-n10-red-ecn",
    "dumbbell-n50-red",
    "dumbbell-n50-red-ecn",
]


@pytest.mark.parametrize("name", AGREEING_WITHOUT_SACK)
def test_without_sack_goodput_fairness_and_drops_agree_with_ns3(name):
    assert_agree(compare(name), check_marks="ecn" in name)
