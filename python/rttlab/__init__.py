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
"""

from rttlab._core import InputError, ParameterError, ScenarioError
from rttlab import estimators
from rttlab.replay import replay
from rttlab.evaluate import evaluate
from rttlab.series import read_series, sample_path
from rttlab.capture import read_capture, read_captures
from rttlab.sim import simulate
from rttlab.scenario import Scenario

__version__ = "0.1.0"
__all__ = ["InputError", "ParameterError", "Scenario", "ScenarioError", "estimators", "evaluate", "read_capture", "read_captures", "read_series", "replay", "sample_path", "simulate", "__version__"]
