"""Replay estimators over RTT samples and score them (the loop runs in Rust, one pass each).

pandas is imported only where a DataFrame is returned, so the CLI starts quickly."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from rttlab import _core
from rttlab.estimators import Spec, spec

if TYPE_CHECKING:
    import pandas as pd

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


@dataclass
class Scores:
    """Plain result of a replay: one dict per estimator (``estimator``, ``samples``, ``predicted``
    and :data:`METRICS`, None where undefined), and per-sample traces when asked for."""

    rows: list[dict[str, Any]]
    times_s: np.ndarray
    rtts_s: np.ndarray
    #: label → (prediction_s, rto_s) arrays, NaN where the estimator had no prediction.
    traces: dict[str, tuple[np.ndarray, np.ndarray]] | None


def as_specs(estimators: Iterable[Spec | str] | Spec | str) -> list[Spec]:
    if isinstance(estimators, (Spec, str)):
        estimators = [estimators]
    return [e if isinstance(e, Spec) else spec(e) for e in estimators]


def score(
    times_ns: np.ndarray,
    rtts_ns: np.ndarray,
    estimators: Iterable[Spec | str] | Spec | str,
    *,
    tick: float = 0.01,
    trace: bool = False,
    threads: int | None = None,
    starts: list[int] | None = None,
) -> Scores:
    """Replay on uint64 nanosecond columns; what :func:`replay` and the CLI build on.

    ``starts``: indices where independent streams (e.g. connections) begin; each starts from a
    fresh estimator, its first sample is not scored, and the scores pool every stream."""
    specs = as_specs(estimators)
    if not specs:
        raise ValueError("no estimators given")
    if not tick > 0:
        raise ValueError("tick must be positive")
    labels = [s.label for s in specs]
    if len(set(labels)) != len(labels):
        raise ValueError("the same estimator with the same parameters is listed twice")
    raw = _core.replay(
        times_ns,
        rtts_ns,
        [(s.name, list(s.params.items())) for s in specs],
        int(round(tick * 1e9)),
        trace,
        threads or min(len(specs), os.cpu_count() or 1),
        list(starts) if starts is not None else None,
    )
    rows = [{"estimator": label, **{k: r[k] for k in ("samples", "predicted", *METRICS)}} for label, r in zip(labels, raw)]
    traces = {label: (r["prediction_s"], r["rto_s"]) for label, r in zip(labels, raw)} if trace else None
    return Scores(rows, times_ns / 1e9, rtts_ns / 1e9, traces)


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
    from rttlab.series import check_replay_args, to_nanos

    check_replay_args(samples, estimators)
    import pandas as pd

    times_ns, rtts_ns = to_nanos(samples)
    result = score(times_ns, rtts_ns, estimators, tick=tick, trace=trace, threads=threads)
    table = pd.DataFrame(result.rows)
    table[METRICS] = table[METRICS].astype("float64")
    if result.traces is None:
        return table
    traces = {
        label: pd.DataFrame({"time": result.times_s, "rtt": result.rtts_s, "prediction": pred, "rto": rto})
        for label, (pred, rto) in result.traces.items()
    }
    return table, traces
