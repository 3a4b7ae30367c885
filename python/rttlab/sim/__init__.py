"""Closed-loop simulation: a scenario (:mod:`.scenario`) run by the deterministic Rust simulator
(:mod:`.run`), whose per-flow, per-channel and trace tables come back as Arrow.

``simulate``, ``Result`` and ``Scenario`` are importable from here; they load on first use, so
``import rttlab.sim.scenario`` costs no pandas.
"""

from __future__ import annotations

TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any

    from rttlab.sim.run import Result, simulate
    from rttlab.sim.scenario import Scenario

_LAZY = {"simulate": "rttlab.sim.run", "Result": "rttlab.sim.run", "components": "rttlab.sim.run", "Scenario": "rttlab.sim.scenario"}

__all__ = ["Result", "Scenario", "components", "simulate"]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value
