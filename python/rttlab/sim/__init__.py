"""Closed-loop simulation: a scenario (:mod:`.scenario`) run by the deterministic Rust simulator
(:mod:`.run`), whose per-flow, per-channel and trace tables come back as Arrow.

``simulate``, ``Result``, ``Scenario`` and the other names this package had as one module
(``TRACES``, ``schema``, ...) are importable from here; they load on first use, so
``import rttlab.sim.scenario`` costs no pandas.
"""

from __future__ import annotations

TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any

    from rttlab.sim.run import Interrupted, Result, simulate
    from rttlab.sim.scenario import Scenario

#: The names ``rttlab.sim`` had as a module, each from where it is defined now.
_LAZY = {
    **dict.fromkeys(
        (
            "simulate",
            "Result",
            "Interrupted",
            "components",
            "schema",
            "conform",
            "TRACES",
            "PER_PACKET_TRACES",
        ),
        "rttlab.sim.run",
    ),
    "SCHEMA": "rttlab.sim.versions",
    "Scenario": "rttlab.sim.scenario",
}

__all__ = [
    "Interrupted",
    "PER_PACKET_TRACES",
    "Result",
    "SCHEMA",
    "Scenario",
    "TRACES",
    "components",
    "conform",
    "schema",
    "simulate",
]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value
