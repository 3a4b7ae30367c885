"""rttlab — which RTT estimator, RTO and loss response should my stack use, and what does each cost?

Public API::

    import rttlab
    samples = rttlab.read_series("rtts.csv")            # DataFrame: time, rtt (seconds)
    samples, flows = rttlab.read_capture("trace.pcap")  # RTT samples and connections from a capture
    scores = rttlab.replay(samples, [rttlab.estimators.Rfc6298(), rttlab.estimators.FixedShare(eta=2)])
    scores, traces = rttlab.replay(samples, ["linux"], trace=True)
    result = rttlab.evaluate("trace.pcap", ["rfc6298", "linux"], by="conn")  # what `rttlab evaluate` prints
    result = rttlab.simulate("examples/scenarios/dumbbell-n10-droptail.toml")  # closed loop
    s = rttlab.Scenario.load("examples/scenarios/dumbbell-n10-droptail.toml").with_({"flows.0.count": 5})
    s.hash, s.to_toml(resolved=True)                     # content hash, canonical form

Every estimator and parameter is listed by ``rttlab estimators`` and ``rttlab.estimators.catalog()``.


Names are loaded on first use (PEP 562 module ``__getattr__``): ``import rttlab`` stays cheap, and
NumPy/pandas load only when a function that needs them is first used.
"""

from __future__ import annotations

import sys
import types

# typing's import costs ≈ 3 ms of every command's start; checkers treat this name as typing's.
TYPE_CHECKING = False

from rttlab._core import InputError, ParameterError, ScenarioError

__version__ = "0.1.0"

#: Public name → (module, attribute; None for the module itself).
_LAZY: dict[str, tuple[str, str | None]] = {
    "estimators": ("rttlab.estimators", None),
    "capture": ("rttlab.capture", None),
    "replay": ("rttlab.replay", "replay"),
    "read_series": ("rttlab.series", "read_series"),
    "sample_path": ("rttlab.series", "sample_path"),
    "read_capture": ("rttlab.capture", "read_capture"),
    "read_captures": ("rttlab.capture", "read_captures"),
    "simulate": ("rttlab.sim", "simulate"),
    "evaluate": ("rttlab.evaluate", "evaluate"),
    "Scenario": ("rttlab.scenario", "Scenario"),
}

__all__ = ["InputError", "ParameterError", "Scenario", "ScenarioError", "estimators", "evaluate", "read_capture", "read_captures", "read_series", "replay", "sample_path", "simulate", "__version__"]

if TYPE_CHECKING:
    from typing import Any

    from rttlab import capture, estimators
    from rttlab.capture import read_capture, read_captures
    from rttlab.evaluate import evaluate
    from rttlab.replay import replay
    from rttlab.scenario import Scenario
    from rttlab.series import read_series, sample_path
    from rttlab.sim import simulate


def __getattr__(name: str) -> Any:
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'rttlab' has no attribute {name!r}") from None
    import importlib

    value = importlib.import_module(module) if attr is None else getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


class _Package(types.ModuleType):
    """Importing the submodule ``rttlab.replay`` (or ``rttlab.evaluate``) would bind that name to
    the module, hiding the function of the same name (the eager imports this replaced rebound it).
    Keep the function: the module stays reachable through ``sys.modules``/``from ... import``."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in ("replay", "evaluate") and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
