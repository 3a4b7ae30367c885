"""The estimator specifications, by their public name: ``from rttlab.estimators import Rfc6298``.

They are defined in :mod:`rttlab.trace.estimators` (one class per estimator the Rust registry
holds); this module is the name users import them by.
"""

from rttlab.trace.estimators import *  # noqa: F403 - exactly trace.estimators' public names
from rttlab.trace.estimators import __all__  # noqa: F401
