"""rttlab — which RTT estimator, RTO and loss response should my stack use, and what does each cost?

Public API::

    import rttlab
    samples = rttlab.read_series("rtts.csv")            # DataFrame: time, rtt (seconds)
    scores = rttlab.replay(samples, [rttlab.estimators.Rfc6298(), rttlab.estimators.FixedShare(eta=2)])
    scores, traces = rttlab.replay(samples, ["linux"], trace=True)

Every estimator and parameter is listed by ``rttlab estimators`` and ``rttlab.estimators.catalog()``.
"""

from rttlab._core import InputError, ParameterError
from rttlab import estimators
from rttlab.replay import replay
from rttlab.series import read_series, sample_path

__version__ = "0.1.0"
__all__ = ["InputError", "ParameterError", "estimators", "read_series", "replay", "sample_path", "__version__"]
