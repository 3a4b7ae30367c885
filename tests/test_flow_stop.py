"""`[[flows]] stop`: flow groups whose application stops (Psaras, Tsaoussidis & Mamatas 2005's Fig. 15), from the TOML to the
flows table, and the one-line errors for bad values."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
import rttlab

ROOT = Path(__file__).resolve().parent.parent
N10 = ROOT / "examples" / "scenarios" / "dumbbell-n10-red.toml"
RTTLAB = [sys.executable, "-m", "rttlab.cli.main"]

TWO_GROUPS = """
[simulation]
duration = "20s"
[topology.bottleneck]
bandwidth = "10Mbps"
delay = "20ms"
[topology.access]
bandwidth = "100Mbps"
delay = "1ms"
[[flows]]
count = 2
start = "uniform(0s, 1s)"
{stop}
[[flows]]
count = 1
"""


def scenario(tmp_path: Path, stop: str) -> Path:
    path = tmp_path / "stop.toml"
    path.write_text(TWO_GROUPS.format(stop=stop))
    return path


def test_a_stop_in_the_toml_reaches_the_flows_table_and_the_canonical_form(tmp_path):
    s = rttlab.Scenario.load(scenario(tmp_path, 'stop = "5s"'))
    assert s.resolved()["flows"][0]["stop"] == "5s"
    assert "stop" not in s.resolved()["flows"][1]
    flows = rttlab.simulate(s).flows
    assert list(flows["stop"][:2]) == [5.0, 5.0] and math.isnan(flows["stop"][2])
    # A stopped flow completes once what it sent has arrived: shortly after its stop.
    assert ((flows["completed"][:2] >= 5.0) & (flows["completed"][:2] < 6.0)).all()
    assert math.isnan(flows["completed"][2])
    # Its goodput is over its active time, start to completion.
    active = flows["completed"][0] - flows["start"][0]
    assert flows["goodput_bps"][0] == pytest.approx(flows["bytes_delivered"][0] * 8 / active)


def test_without_a_stop_the_scenario_and_its_hash_are_as_before(tmp_path):
    s = rttlab.Scenario.load(scenario(tmp_path, ""))
    assert all("stop" not in g for g in s.resolved()["flows"])
    # The same scenario spelled with a stop past nothing is a different run; one without is not.
    assert s.hash != s.with_({"flows.0.stop": "10s"}).hash
    assert s.hash == rttlab.Scenario.load(scenario(tmp_path, "")).hash


@pytest.mark.parametrize(
    ("stop", "expected"),
    [
        ('stop = "-1s"', "flows[0].stop: expected a duration such as"),
        (
            'stop = "1s"',
            "flows[0].stop: 1s must be later than the group's last possible start (1s)",
        ),
        (
            'stop = "500ms"',
            "flows[0].stop: 500ms must be later than the group's last possible start (1s)",
        ),
        ('stop = "soon"', "flows[0].stop: expected a duration such as"),
    ],
)
def test_a_negative_or_early_stop_is_a_one_line_error_naming_the_field(tmp_path, stop, expected):
    path = scenario(tmp_path, stop)
    with pytest.raises(rttlab.ScenarioError, match=r"flows\[0\]\.stop"):
        rttlab.simulate(rttlab.Scenario.load(path))
    out = subprocess.run(
        [*RTTLAB, "simulate", str(path)], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 2
    assert expected in out.stderr, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr
