"""The testbed as an engine of sweeps: ``simulator = "testbed"`` in a sweep runs each point in
real time with Linux's TCP (:func:`rttlab.testbed.run.run`) and stores it as any simulated run —
the same tables, keyed by the scenario's hash and the engine's name.

Real-time runs must not share the machine: run such a sweep on a Dask cluster of one worker
with one thread (the emulator's fidelity, docs/testbed.md, assumes it has a core).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rttlab.experiments.simulators import Simulator


def _run(scenario_toml: str, traces: Sequence[str]) -> Any:
    from rttlab.sim.scenario import Scenario
    from rttlab.testbed.run import run

    tr = run(Scenario.from_toml(scenario_toml))
    r = tr.result
    keep = set(traces)
    # Result is frozen; its tables dict is trimmed in place.
    for k in [k for k in r.tables if k not in ("flows", "channels") and k not in keep]:
        del r.tables[k]
    f = tr.emulator.get("fidelity") or {}
    if f.get("lateness_p99_ns") is not None:
        # Stored with the run (a column of `runs`): how far the emulator kept to the scenario.
        r.metrics["emulator_lateness_p99_s"] = f["lateness_p99_ns"] / 1e9
    return r


def _version() -> str:
    import platform

    from rttlab import __version__

    return f"{__version__} testbed, Linux {platform.release()}"


#: The testbed (:mod:`rttlab.testbed`) as a sweep engine.
SIMULATOR = Simulator("testbed", run=_run, version=_version)
