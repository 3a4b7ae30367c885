"""Replay estimators over RTT samples and score them (the loop runs in Rust, one pass each)."""

from __future__ import annotations

import os
from collections.abc import Iterable

import numpy as np
import pandas as pd

from rttlab import _core
from rttlab.estimators import Spec, spec
from rttlab.series import to_nanos

#: Metric columns, in the order reports show them (definitions: docs/metrics.md).
METRICS = [
    "mae_s",
    "mae_ticks",
    "mape",
    "under_prediction_rate",
    "premature_timeout_rate",
    "wait_mean_s",
    "wait_p99_s",
    "rto_mean_s",
]


def as_specs(estimators: Iterable[Spec | str] | Spec | str) -> list[Spec]:
    if isinstance(estimators, (Spec, str)):
        estimators = [estimators]
    return [e if isinstance(e, Spec) else spec(e) for e in estimators]


def replay(
    samples: pd.DataFrame | np.ndarray,
    estimators: Iterable[Spec | str] | Spec | str,
    *,
    tick: float = 0.01,
    trace: bool = False,
    threads: int | None = None,
) -> pd.DataFrame | tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """Score each estimator on the samples.

    ``samples``: DataFrame with ``rtt`` (and ``time``) in seconds, or a 1-D array of RTTs (s).
    ``tick``: seconds per tick for ``mae_ticks``. Returns one row per estimator with the columns
    ``estimator``, ``samples``, ``predicted`` and :data:`METRICS` (NaN where undefined). With
    ``trace=True`` also a dict label → DataFrame(time, rtt, prediction, rto) per sample."""
    specs = as_specs(estimators)
    if not specs:
        raise ValueError("no estimators given")
    if not tick > 0:
        raise ValueError("tick must be positive")
    times_ns, rtts_ns = to_nanos(samples)
    labels = [s.label for s in specs]
    if len(set(labels)) != len(labels):
        raise ValueError("the same estimator with the same parameters is listed twice")
    rows = _core.replay(
        times_ns,
        rtts_ns,
        [(s.name, list(s.params.items())) for s in specs],
        int(round(tick * 1e9)),
        trace,
        threads or min(len(specs), os.cpu_count() or 1),
    )
    table = pd.DataFrame(
        [{"estimator": label, **{k: r[k] for k in ("samples", "predicted", *METRICS)}} for label, r in zip(labels, rows)]
    )
    table[METRICS] = table[METRICS].astype("float64")
    if not trace:
        return table
    time_s, rtt_s = times_ns / 1e9, rtts_ns / 1e9
    traces = {
        label: pd.DataFrame({"time": time_s, "rtt": rtt_s, "prediction": r["prediction_s"], "rto": r["rto_s"]})
        for label, r in zip(labels, rows)
    }
    return table, traces
