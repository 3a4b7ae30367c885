"""The testbed as an engine of sweeps: ``simulator = "testbed"`` in a sweep runs each point in
real time with Linux's TCP (:func:`rttlab.testbed.run.run`) and stores it as any simulated run —
the same tables, keyed by the scenario's hash and the engine's name.

``testbed:OPTIONS`` is the testbed with kernel features changed in every namespace, a run of its
own in the store (the engine's name is part of the key): OPTIONS is a comma-separated list of
``net.*=VALUE`` sysctls (``testbed:net.ipv4.tcp_recovery=0,net.ipv4.tcp_early_retrans=0``) and
``gso=off`` (each TUN's ``gso_max_segs`` 1: the sender builds one-segment packets instead of
TSO/GSO super-packets). ``cc=NAME`` runs every flow with the kernel's NAME whatever the scenario
says. This is how ``rttlab reproduce testbed-dumbbell`` switches a Linux feature off.

Real-time runs must not share the machine: every testbed run takes the machine-wide lock
(:mod:`rttlab.testbed.lock`), so a local cluster's workers run them one at a time (the simulator's
runs go on beside them), and so do two sweeps, or a sweep and `rttlab testbed`, on one machine.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

from rttlab.experiments.simulators import Simulator


def parse_options(options: str) -> dict[str, Any]:
    """``net.ipv4.tcp_sack=0,gso=off,cc=cubic`` → {"sysctls": {...}, "gso": False, "cc": "cubic"};
    :class:`ValueError` naming the item it cannot read."""
    out: dict[str, Any] = {"sysctls": {}, "gso": True, "cc": None}
    for item in filter(None, (x.strip() for x in options.split(","))):
        key, eq, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not eq or not value:
            raise ValueError(f"option {item!r} is not KEY=VALUE")
        if key.startswith("net."):
            out["sysctls"][key] = value
        elif key == "gso" and value in ("on", "off"):
            out["gso"] = value == "on"
        elif key == "cc" and value.isidentifier():
            out["cc"] = value
        else:
            raise ValueError(
                f"option {item!r}: expected net.*=VALUE (a sysctl in every namespace), gso=on|off or cc=NAME"
            )
    return out


def _run(scenario_toml: str, traces: Sequence[str], options: str = "") -> Any:
    from rttlab.sim.scenario import Scenario
    from rttlab.testbed.run import run

    opts = parse_options(options)
    # run() takes the machine-wide lock; a worker waits there silently (the sweep's bar moves on).
    tr = run(
        Scenario.from_toml(scenario_toml),
        cc=opts["cc"],
        sysctls=opts["sysctls"],
        gso=opts["gso"],
        wait=None,
    )
    r = tr.result
    keep = set(traces)
    # Result is frozen; its tables dict is trimmed in place.
    for k in [k for k in r.tables if k not in ("flows", "channels") and k not in keep]:
        del r.tables[k]
    f = tr.emulator.get("fidelity") or {}
    if f.get("lateness_p99_ns") is not None:
        # Stored with the run (a column of `runs`): how far the emulator kept to the scenario.
        r.metrics["emulator_lateness_p99_s"] = f["lateness_p99_ns"] / 1e9
    # The machine's load when the run ended (1-minute average): timing fidelity depends on it.
    r.metrics["load_average"] = _load()
    return r


def _load() -> float:
    import os

    return os.getloadavg()[0]


def _version() -> str:
    import platform

    from rttlab import __version__

    return f"{__version__} testbed, Linux {platform.release()}"


def _variant(options: str) -> Simulator:
    parse_options(options)  # ValueError now, at the sweep's check, rather than in a worker
    return Simulator(f"testbed:{options}", run=partial(_run, options=options), version=_version)


#: The testbed (:mod:`rttlab.testbed`) as a sweep engine.
SIMULATOR = Simulator("testbed", run=_run, version=_version, variant=_variant)
