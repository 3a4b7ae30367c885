"""rttlab — which RTT estimator, RTO and loss response should my stack use, and what does each cost?

Public API::

    import rttlab
    series = rttlab.read_series("rtts.csv")             # RttSeries: .time, .rtt (s), .frame
    capture = rttlab.read_capture("trace.pcap")         # Capture: .samples, .connections, .retransmissions
    samples, flows = capture                            # (it unpacks as the tuple it once was)
    r = rttlab.replay(series, [rttlab.estimators.Rfc6298(), rttlab.estimators.FixedShare(eta=2)])
    r.rows, r.scores                                    # Replay: rows (dicts), scores (DataFrame)
    rttlab.replay(series, ["linux"], trace=True).traces # label → DataFrame per sample
    e = rttlab.evaluate("trace.pcap", ["rfc6298", "linux"])  # Evaluation: what `rttlab evaluate` prints
    e.scores, e.per_connection                          # DataFrames; e.rows, e.connections as in --json
    sim = rttlab.simulate("examples/scenarios/dumbbell-n10-droptail.toml")  # rttlab.sim.Result
    sim.flows, sim.channels, sim.traces["rtt"]          # DataFrames; sim.tables as Arrow
    s = rttlab.Scenario.load("examples/scenarios/dumbbell-n10-droptail.toml").with_({"flows.0.count": 5})
    s.hash, s.to_toml(resolved=True)                     # content hash, canonical form

Every result is a frozen dataclass whose tables are pandas DataFrames named by what a row is
(``samples``, ``connections``, ``flows``, ``scores``), made on first use from the columns the
Rust core returned, and whose records for JSON are plain dicts (``rows``). Every estimator and
parameter is listed by ``rttlab estimators`` and ``rttlab.estimators.catalog()``.


Names are loaded on first use (PEP 562 module ``__getattr__``): ``import rttlab`` stays cheap, and
NumPy/pandas load only when a function that needs them is first used.
"""

from __future__ import annotations

# typing's import costs ≈ 3 ms of every command's start; checkers treat this name as typing's.
TYPE_CHECKING = False

from rttlab._core import InputError, ParameterError, ScenarioError  # noqa: E402

__version__ = "0.1.0"

#: Public name → (module, attribute; None for the module itself).
_LAZY: dict[str, tuple[str, str | None]] = {
    "estimators": ("rttlab.estimators", None),
    "capture": ("rttlab.trace.capture", None),
    "replay": ("rttlab.trace.replay", "replay"),
    "read_series": ("rttlab.trace.series", "read_series"),
    "sample_path": ("rttlab.trace.series", "sample_path"),
    "read_capture": ("rttlab.trace.capture", "read_capture"),
    "read_captures": ("rttlab.trace.capture", "read_captures"),
    "simulate": ("rttlab.sim.run", "simulate"),
    "evaluate": ("rttlab.trace.evaluate", "evaluate"),
    "Scenario": ("rttlab.sim.scenario", "Scenario"),
    # The result types, for annotations and isinstance.
    "RttSeries": ("rttlab.trace.series", "RttSeries"),
    "Capture": ("rttlab.trace.capture", "Capture"),
    "Replay": ("rttlab.trace.replay", "Replay"),
    "Evaluation": ("rttlab.trace.evaluate", "Evaluation"),
    "SimulationResult": ("rttlab.sim.run", "Result"),
}

__all__ = [
    "Capture",
    "Evaluation",
    "InputError",
    "ParameterError",
    "Replay",
    "RttSeries",
    "Scenario",
    "ScenarioError",
    "SimulationResult",
    "estimators",
    "evaluate",
    "read_capture",
    "read_captures",
    "read_series",
    "replay",
    "sample_path",
    "simulate",
    "__version__",
]

if TYPE_CHECKING:
    from typing import Any

    from rttlab import estimators
    from rttlab.sim.run import Result as SimulationResult
    from rttlab.sim.run import simulate
    from rttlab.sim.scenario import Scenario
    from rttlab.trace import capture as capture
    from rttlab.trace.capture import Capture, read_capture, read_captures
    from rttlab.trace.evaluate import Evaluation, evaluate
    from rttlab.trace.replay import Replay, replay
    from rttlab.trace.series import RttSeries, read_series, sample_path


def __getattr__(name: str) -> Any:
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'rttlab' has no attribute {name!r}") from None
    import importlib

    value = (
        importlib.import_module(module)
        if attr is None
        else getattr(importlib.import_module(module), attr)
    )
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
