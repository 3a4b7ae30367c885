"""The testbed: a scenario file in real time — real Linux TCP between network namespaces,
through the scenario's own links, queues, error models and router agents running in rttlab's
real-time emulator (the simulator's component code on real packets). Beside the simulator, not
inside it; see docs/testbed.md.

    from rttlab.testbed import run
    tr = run("examples/scenarios/dumbbell-n1-droptail.toml", ["simulation.duration=5s"], out_dir="tb")
    tr.result.flows       # the simulator's flows table: goodput_bps, retransmissions, rtt_mean, ...
    tr.emulator["fidelity"]   # how late the emulator delivered packets, its CPU time

Needs root, network namespaces and /dev/net/tun (:func:`netns.check_machine` says which is missing).
"""

from __future__ import annotations

from rttlab.testbed.netns import Unavailable, check_machine, unavailable
from rttlab.testbed.run import TestbedError, TestbedResult, run

__all__ = ["TestbedError", "TestbedResult", "Unavailable", "check_machine", "run", "unavailable"]
