"""rttlab.Scenario: typed overrides, the canonical resolved form from the core, the content hash."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
import rttlab
from rttlab.sim.versions import SCENARIO_SCHEMA

ROOT = Path(__file__).resolve().parent.parent
N10 = ROOT / "examples" / "scenarios" / "dumbbell-n10-droptail.toml"
N1 = ROOT / "examples" / "scenarios" / "dumbbell-n1-droptail.toml"


def test_a_string_override_stays_a_string_even_when_it_looks_like_a_number():
    s = rttlab.Scenario.load(N1).with_({"simulation.name": "123", "simulation.duration": "1s"})
    assert s.resolved()["simulation"]["name"] == "123"
    assert rttlab.simulate(s).name == "123"
    # The same through simulate's mapping form (which used to send "simulation.name=123" as text).
    assert (
        rttlab.simulate(N1, set={"simulation.name": "123", "simulation.duration": "1s"}).name
        == "123"
    )


def test_overrides_of_every_toml_type_reach_the_core():
    s = rttlab.Scenario.load(N1).with_(
        {
            "flows.0.count": 3,
            "tcp.ecn": True,
            "topology.bottleneck.error.kind": "bernoulli",
            "topology.bottleneck.error.per": 0.01,
            "topology.bottleneck.losses": ["1s", "2s"],
        }
    )
    r = s.resolved()
    assert r["flows"][0]["count"] == 3
    assert r["tcp"]["ecn"] is True
    assert r["topology"]["bottleneck"]["error"]["per"] == 0.01
    assert r["topology"]["bottleneck"]["losses"] == ["1s", "2s"]


def test_the_resolved_form_fills_every_default_the_core_applies():
    r = rttlab.Scenario.load(N10).resolved()
    assert r["simulation"]["warmup"] == "0ns"
    assert r["simulation"]["queue_sample_interval"] == "10ms"
    assert r["tcp"]["header"] == "52B"
    assert r["tcp"]["delayed_ack_segments"] == 2
    assert r["topology"]["access"]["queue"]["limit"] == "1000p"


def test_spelling_a_value_differently_gives_the_same_hash():
    a = rttlab.Scenario.load(N10)
    b = a.with_(
        {
            "topology.bottleneck.bandwidth": "10 Mb/s",
            "topology.bottleneck.delay": "0.02s",
            "tcp.mss": 1448,
        }
    )
    assert a.to_toml() != b.to_toml()
    assert a.canonical_toml == b.canonical_toml
    assert a.hash == b.hash


def test_the_hash_changes_with_the_seed_and_any_parameter_and_is_stable_across_processes():
    a = rttlab.Scenario.load(N10)
    assert a.with_seed(2).hash != a.hash
    assert a.with_({"flows.0.count": 9}).hash != a.hash
    import subprocess
    import sys

    other = subprocess.run(
        [sys.executable, "-c", f"import rttlab; print(rttlab.Scenario.load({str(N10)!r}).hash)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert other.stdout.strip() == a.hash
    assert len(a.hash) == 40 and SCENARIO_SCHEMA >= 1


def test_the_canonical_form_is_a_fixed_point_and_runs_bit_identically():
    a = rttlab.Scenario.load(N1).with_({"simulation.duration": "2s"})
    b = rttlab.Scenario.from_toml(a.to_toml(resolved=True))
    assert b.canonical_toml == a.canonical_toml
    assert rttlab.simulate(a).event_hash == rttlab.simulate(b).event_hash


def test_to_toml_round_trips_the_document_with_its_overrides():
    s = rttlab.Scenario.load(N1).with_(
        ["flows.0.count=4", "topology.bottleneck.bandwidth=20Mbps"], simulation__seed=7
    )
    doc = tomllib.loads(s.to_toml())
    assert doc["flows"][0]["count"] == 4
    assert doc["topology"]["bottleneck"]["bandwidth"] == "20Mbps"
    assert doc["simulation"]["seed"] == 7 == s.seed


def test_bad_overrides_and_bad_values_name_the_key():
    s = rttlab.Scenario.load(N1)
    with pytest.raises(rttlab.ScenarioError, match="flows.5: index 5 out of range"):
        s.with_({"flows.5.count": 1})
    with pytest.raises(rttlab.ScenarioError, match="use a number"):
        s.with_({"flows.x.count": 1})
    with pytest.raises(
        rttlab.ScenarioError,
        match=r"dumbbell-n1-droptail.toml: topology.bottleneck.bandwidth: .*fast",
    ):
        _ = s.with_({"topology.bottleneck.bandwidth": "fast"}).hash
    with pytest.raises(rttlab.ScenarioError, match="seed must be a non-negative integer"):
        s.with_seed(-1)


def test_a_key_given_twice_is_named_with_its_file_line_and_table(tmp_path):
    import subprocess
    import sys

    text = (
        (ROOT / "examples" / "scenarios" / "dumbbell-n1-droptail.toml")
        .read_text()
        .replace("seed = 1\n", "seed = 1\nseed = 2\n", 1)
    )
    path = tmp_path / "twice.toml"
    path.write_text(text)
    line = text.splitlines().index("seed = 2") + 1
    with pytest.raises(
        rttlab.ScenarioError,
        match=rf"^{path}: not valid TOML: line {line}, column \d+: duplicate key `seed` in \[simulation\]$",
    ):
        rttlab.Scenario.load(path)
    # The CLI reads it in the Rust core: the same file, line, key and table, on one line.
    out = subprocess.run(
        [sys.executable, "-m", "rttlab.cli.main", "simulate", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert (
        out.stderr.strip()
        == f"rttlab: error: {path}: scenario is not valid TOML: line {line}, column 1: duplicate key `seed` in [simulation]"
    ), out.stderr
