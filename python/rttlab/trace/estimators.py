"""Estimator specifications: ``rttlab.estimators.Rfc6298(min_rto="200ms")`` and friends.

A spec is a name plus parameters, validated by the Rust core when it is made; the estimator itself
is built fresh in Rust for every replay (so one spec can be replayed many times). Parameter values
are written as on the command line: durations as ``"200ms"``/``"1s"`` or numbers of seconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rttlab import _core


@dataclass(frozen=True)
class Spec:
    """An estimator by registry name with its parameter overrides."""

    name: str
    params: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _core.check_estimator(self.name, list(self.params.items()))

    @property
    def label(self) -> str:
        """The name, with parameters if any: ``fixed-share(eta=1.5)``."""
        if not self.params:
            return self.name
        return f"{self.name}(" + ",".join(f"{k}={v}" for k, v in self.params.items()) + ")"


def _text(value: Any) -> str:
    if isinstance(value, bool):
        raise TypeError("parameters are numbers, durations or words, not booleans")
    return str(value)


def spec(name: str, **params: Any) -> Spec:
    """A spec by registry name: ``spec("linux", rto_min="5ms")``."""
    return Spec(name, {k: _text(v) for k, v in params.items()})


#: What a parameter shows in the listings (the catalogue also gives its unit).
_PARAM_KEYS = ("name", "kind", "default", "range", "doc")


def catalog() -> list[dict[str, Any]]:
    """Every estimator with its summary, source and parameters (name, kind, default, range, doc):
    the ``estimator`` family of ``_core.catalogue()``."""
    return [
        {
            "name": e["name"],
            "summary": e["summary"],
            "source": e["source"],
            "params": [{k: p[k] for k in _PARAM_KEYS} for p in e["params"]],
        }
        for e in _core.catalogue()
        if e["family"] == "estimator"
    ]


def _class_name(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("-"))


def _define(name: str) -> type:
    def __init__(self: Spec, **params: Any) -> None:
        Spec.__init__(self, name, {k: _text(v) for k, v in params.items()})

    doc = next(e["summary"] for e in catalog() if e["name"] == name)
    return type(
        _class_name(name),
        (Spec,),
        {"__init__": __init__, "__doc__": f"{doc} (registry name '{name}')."},
    )


# One class per registered estimator: Rfc6298, Linux, Freebsd, Eifel, PeakHopper, Quic, FixedShare,
# CaRto, Regression, Conformal, QuantileExperts, Last, Constant. The registry in Rust is the single
# source of truth.
for _entry in catalog():
    globals()[_class_name(_entry["name"])] = _define(_entry["name"])

NAMES: list[str] = [e["name"] for e in catalog()]


def fit_regression(features: Any, targets: Any, **params: Any) -> Spec:
    """Fit the regression estimator's coefficients by least squares and return its spec.

    ``features``: n × 4 (hops, min_rtt_ms, max_rtt_ms, ttl) — an array or a DataFrame with those
    columns; ``targets``: the RTT to predict, in ms (the project used hping's average RTT).
    Extra ``params`` (hops, ttl, window, k, ...) are passed to the spec."""
    import numpy as np

    if hasattr(features, "columns"):
        features = features[["hops", "min_rtt", "max_rtt", "ttl"]]
    x = np.asarray(features, dtype=np.float64)
    y = np.asarray(targets, dtype=np.float64).ravel()
    if x.ndim != 2:
        raise ValueError(
            "features must be a 2-D table with 4 columns (hops, min_rtt, max_rtt, ttl)"
        )
    b = _core.fit_regression(np.ascontiguousarray(x), np.ascontiguousarray(y))
    return spec("regression", **{f"b{i}": repr(v) for i, v in enumerate(b)}, **params)


__all__ = ["Spec", "spec", "catalog", "fit_regression", "NAMES"] + [_class_name(n) for n in NAMES]
