"""The engines a sweep runs on register themselves (entry point ``rttlab.simulators``): the sweep
layer finds them by name and keys their runs as stores written before the registry expect."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import rttlab
from rttlab.experiments import simulators
from rttlab.experiments.sweep import Sweep, SweepError
from rttlab.papers.nunes_experts.manet import ManetScenario

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "examples" / "scenarios" / "dumbbell-n1-droptail.toml"


def test_every_shipped_engine_is_registered_under_its_own_name():
    assert simulators.names() == ["ns2", "ns3", "ns3-manet", "rttlab", "testbed"]
    for name, engine in simulators.registry().items():
        assert engine.name == name


def test_rttlab_keys_a_run_by_the_scenario_alone_and_other_engines_add_their_name():
    s = rttlab.Scenario.load(SCENARIO)
    assert simulators.get("rttlab").run_hash(s) == s.hash
    assert (
        simulators.get("ns3").run_hash(s)
        == hashlib.sha256(f"{s.hash}:ns3".encode()).hexdigest()[:40]
    )


def test_an_engine_with_scenarios_of_its_own_reads_them_itself():
    assert simulators.get("ns3-manet").scenario is ManetScenario
    assert not simulators.get("ns3").own_scenarios


def test_an_unknown_engine_is_a_sweep_error_naming_the_key_and_the_known_engines():
    with pytest.raises(
        SweepError,
        match=r"sweep\.simulator: expected one of ns2, ns3, ns3-manet, rttlab, testbed, got 'omnet'",
    ):
        Sweep.from_dict({"sweep": {"scenario": str(SCENARIO), "simulator": "omnet"}})
    with pytest.raises(
        SweepError,
        match=r"simulator: expected one of ns2, ns3, ns3-manet, rttlab, testbed, got 'omnet'",
    ):
        Sweep.from_dict(
            {"sweep": {"scenario": str(SCENARIO)}, "grid": {"simulator": ["rttlab", "omnet"]}}
        )


def test_an_engine_with_scenarios_of_its_own_cannot_be_swept_beside_rttlab():
    with pytest.raises(
        SweepError, match="'ns3-manet' has scenarios of its own: set it in \\[sweep\\]"
    ):
        Sweep.from_dict(
            {"sweep": {"scenario": str(SCENARIO)}, "grid": {"simulator": ["rttlab", "ns3-manet"]}}
        )
