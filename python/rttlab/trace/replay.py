"""Replay estimators over RTT samples and score them (the loop runs in Rust, one pass each).

pandas is imported only where a DataFrame is returned, so the CLI starts quickly."""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from rttlab import _core
from rttlab._proc import interruptible
from rttlab.trace.estimators import Spec, spec
from rttlab.units import seconds

if TYPE_CHECKING:
    from collections.abc import Mapping

    import numpy as np
    import pandas as pd

    from rttlab.trace.series import RttSeries

#: Metric columns, in the order reports show them (definitions: docs/metrics.md, the only place
#: they are defined).
METRICS = [
    "mae_s",
    "mae_after_s",
    "mae_ticks",
    "mape",
    "under_prediction_rate",
    "bad_timeout_rate",
    "wait_mean_s",
    "wait_p99_s",
    "rto_mean_s",
    "lost_wait_mean_s",
    "lost_wait_max_s",
]
#: Whole-number columns of the timer replay.
COUNTS = ["bad_timeouts", "expiries", "karn_withheld", "lost_segments"]

#: The tick `mae_ticks` is counted in when none is given: one jiffy of the Linux 2.6.28 kernel
#: (default HZ = 250) that Nunes et al. 2011's Table II measured "error in ticks" in.
DEFAULT_TICK_S = 0.004


def needed_samples(target: float) -> int:
    """Scored samples for a 95 % binomial interval of ±50 % around a rate ``target``:
    n = 1.96² (1 − p) / (p · 0.5²) (normal approximation). What ``tune`` warns below, and what
    ``evaluate`` needs before it marks a Pareto front."""
    import math

    return math.ceil(1.96**2 * (1 - target) / (target * 0.25))


def with_tick(specs: list[Spec], tick: float) -> list[Spec]:
    """Every tick-based estimator set to ``tick`` seconds unless its own parameter says otherwise:
    ``fixed-share.tick`` (the unit of its experts), ``linux.hz`` (= 1/tick, which must be a whole
    number of Hz) and the clock granularity G (``granularity``) of the others that have one
    (rfc6298, eifel, peak-hopper, quic, ca-rto)."""
    from rttlab.trace.estimators import catalog

    has_g = {e["name"] for e in catalog() if any(p["name"] == "granularity" for p in e["params"])}
    out = []
    for s in specs:
        if s.name == "fixed-share" and "tick" not in s.params:
            s = spec(s.name, **s.params, tick=f"{tick!r}")
        elif s.name in has_g and s.name != "fixed-share" and "granularity" not in s.params:
            s = spec(s.name, **s.params, granularity=f"{tick!r}")
        elif s.name == "linux" and "hz" not in s.params:
            hz = round(1.0 / tick)
            if hz < 1 or abs(hz * tick - 1.0) > 1e-9:
                raise ValueError(
                    f"tick {tick:g} s is not a whole number of Hz for linux.hz (1/tick = {1 / tick:g}); set linux.hz yourself"
                )
            s = spec(s.name, **s.params, hz=hz)
        out.append(s)
    return out


@dataclass
class Scores:
    """Plain result of a replay: one dict per estimator (``estimator``, ``samples``, ``predicted``
    and :data:`METRICS`, None where undefined), and per-sample traces when asked for."""

    rows: list[dict[str, Any]]
    #: The samples replayed: uint64 ns arrays, or one ``_core.SeriesData`` as both.
    times_ns: Any
    rtts_ns: Any
    #: label → dict of per-sample arrays (``prediction``, ``prediction_after``, ``rto``,
    #: ``wait``, ``expiries``; seconds, NaN where the estimator had no prediction).
    traces: dict[str, dict[str, np.ndarray]] | None
    #: With ``per_stream=True``: for each stream, one row per estimator (as ``rows``), scored
    #: alone (the same numbers as replaying that stream by itself).
    streams: list[list[dict[str, Any]]] | None = None

    @property
    def times_s(self) -> np.ndarray:
        """The samples' times (s)."""
        times = (
            self.times_ns.times_ns()
            if isinstance(self.times_ns, _core.SeriesData)
            else self.times_ns
        )
        return times / 1e9

    @property
    def rtts_s(self) -> np.ndarray:
        """The samples' RTTs (s)."""
        rtts = (
            self.rtts_ns.rtts_ns() if isinstance(self.rtts_ns, _core.SeriesData) else self.rtts_ns
        )
        return rtts / 1e9


@dataclass(frozen=True, eq=False)
class Replay:
    """The result of :func:`rttlab.replay`.

    ``rows``: one dict per estimator, in the order given — ``estimator`` (its label),
    ``samples``, ``predicted``, :data:`METRICS` (None where undefined) and :data:`COUNTS`, as
    plain Python numbers. ``scores`` is the same as a DataFrame (NaN where undefined) and
    ``traces``, with ``trace=True``, one DataFrame per estimator label of ``time``, ``rtt``,
    ``prediction``, ``prediction_after``, ``rto``, ``wait``, ``expiries`` per sample (s; NaN
    where the estimator had no prediction), None otherwise. Both are made on first use: reading
    ``rows`` never imports pandas.

    For code written when ``replay`` returned a DataFrame or a tuple: ``result["mae_s"]`` is
    ``result.scores["mae_s"]``, and ``scores, traces = result`` unpacks."""

    rows: list[dict[str, Any]]
    #: Per-sample arrays behind ``traces`` (label → column → array), None without ``trace=True``.
    trace_columns: dict[str, dict[str, np.ndarray]] | None = field(default=None, repr=False)
    #: The samples' times and RTTs (s), for ``traces``.
    times_s: np.ndarray | None = field(default=None, repr=False)
    rtts_s: np.ndarray | None = field(default=None, repr=False)

    @cached_property
    def scores(self) -> pd.DataFrame:
        """One row per estimator: ``estimator``, ``samples``, ``predicted``, :data:`METRICS`
        (float, NaN where undefined), :data:`COUNTS`."""
        import pandas as pd

        table = pd.DataFrame(
            self.rows, columns=["estimator", "samples", "predicted", *METRICS, *COUNTS]
        )
        table[METRICS] = table[METRICS].astype("float64")
        return table

    @cached_property
    def traces(self) -> dict[str, pd.DataFrame] | None:
        """Estimator label → DataFrame of per-sample ``time``, ``rtt``, ``prediction``,
        ``prediction_after``, ``rto``, ``wait``, ``expiries``; None without ``trace=True``."""
        if self.trace_columns is None:
            return None
        import pandas as pd

        return {
            label: pd.DataFrame({"time": self.times_s, "rtt": self.rtts_s, **columns})
            for label, columns in self.trace_columns.items()
        }

    def row(self, estimator: str) -> dict[str, Any]:
        """The row of one estimator, by its label."""
        for r in self.rows:
            if r["estimator"] == estimator:
                return r
        raise KeyError(
            f"no estimator {estimator!r} in this replay (it has {', '.join(r['estimator'] for r in self.rows)})"
        )

    def __getitem__(self, column: str) -> Any:
        return self.scores[column]

    def __iter__(self):
        """``scores, traces = rttlab.replay(...)``, as when replay returned a tuple."""
        return iter((self.scores, self.traces))


def as_specs(estimators: Iterable[Spec | str] | Spec | str) -> list[Spec]:
    if isinstance(estimators, (Spec, str)):
        estimators = [estimators]
    return [e if isinstance(e, Spec) else spec(e) for e in estimators]


def score(
    times_ns: np.ndarray,
    rtts_ns: np.ndarray,
    estimators: Iterable[Spec | str] | Spec | str,
    *,
    tick: float = DEFAULT_TICK_S,
    trace: bool = False,
    threads: int | None = None,
    starts: list[int] | None = None,
    min_rto: float | None = None,
    timer_granularity: float = 0.0,
    timestamps: bool | list[bool] = False,
    losses: list[tuple[int, int]] | None = None,
    per_stream: bool = False,
) -> Scores:
    """Replay on uint64 nanosecond columns; what :func:`replay` and :func:`rttlab.evaluate` build on.

    ``starts``: indices where independent streams (e.g. connections) begin; each starts from a
    fresh estimator and timer, its first sample is not scored, and the scores pool every stream.
    ``tick`` is only the unit of ``mae_ticks`` here (see :func:`with_tick`). ``min_rto``: every
    RTO in force is at least this (s). ``timer_granularity``: the sender's timer fires on this
    heartbeat (s, 0 = exactly). ``timestamps``: Karn's rule does not withhold the samples of
    timed-out segments (docs/metrics.md); a list gives one flag per stream. ``losses``: segments
    the input shows were really lost, as (stream index, ns when their sender's timer started),
    each scored with the W the stream's timer would have imposed (``lost_*`` metrics).
    ``per_stream``: also score each stream alone, in the same pass (``Scores.streams``)."""
    specs = as_specs(estimators)
    if not specs:
        raise ValueError("no estimators given")
    if not tick > 0:
        raise ValueError("tick must be positive")
    if min_rto is not None and not min_rto >= 0:
        raise ValueError("min_rto must be a duration ≥ 0")
    if not timer_granularity >= 0:
        raise ValueError("timer_granularity must be a duration ≥ 0")
    labels = [s.label for s in specs]
    if len(set(labels)) != len(labels):
        raise ValueError("the same estimator with the same parameters is listed twice")
    raw = interruptible(
        _core.replay,
        times_ns,
        None if isinstance(times_ns, _core.SeriesData) else rtts_ns,
        [(s.name, list(s.params.items())) for s in specs],
        int(round(tick * 1e9)),
        trace,
        threads or min(len(specs), os.cpu_count() or 1),
        list(starts) if starts is not None else None,
        int(round(timer_granularity * 1e9)),
        int(round((min_rto or 0.0) * 1e9)),
        timestamps if isinstance(timestamps, bool) else False,
        None if isinstance(timestamps, bool) else [bool(t) for t in timestamps],
        [(int(k), int(t)) for k, t in losses] if losses else None,
        per_stream,
    )
    keys = ("samples", "predicted", *METRICS, *COUNTS)
    rows = [{"estimator": label, **{k: r[k] for k in keys}} for label, r in zip(labels, raw)]
    streams = None
    if per_stream:
        streams = [
            [
                {"estimator": label, **{k: r["streams"][i][k] for k in keys}}
                for label, r in zip(labels, raw)
            ]
            for i in range(len(raw[0]["streams"]))
        ]
    traces = None
    if trace:
        traces = {
            label: {
                "prediction": r["prediction_s"],
                "prediction_after": r["prediction_after_s"],
                "rto": r["rto_s"],
                "wait": r["wait_s"],
                "expiries": r["expiries_each"],
            }
            for label, r in zip(labels, raw)
        }
    return Scores(rows, times_ns, rtts_ns, traces, streams)


def defaults(name: str) -> dict[str, str]:
    from rttlab.trace.estimators import catalog

    entry = next(e for e in catalog() if e["name"] == name)
    return {p["name"]: p["default"] for p in entry["params"]}


def fmt_s(s: float) -> str:
    return f"{s:g} s" if s >= 1 else f"{s * 1e3:g} ms"


def range_warnings(
    rtts_ns: np.ndarray, specs: list[Spec], labels: dict[str, str] | None = None
) -> list[str]:
    """Fixed-Share cannot predict above its top expert x_N = RTT_min + RTT_max ticks."""
    labels = labels or {}
    out = []
    for s in specs:
        if s.name != "fixed-share":
            continue
        p = {**defaults(s.name), **s.params}
        tick = seconds(p["tick"], "fixed-share.tick")
        top = (float(p["rtt_min"]) + float(p["rtt_max"])) * tick
        if isinstance(rtts_ns, _core.SeriesData):
            above = rtts_ns.count_above(top * 1e9)
        else:
            import numpy as np

            above = int(np.count_nonzero(rtts_ns > top * 1e9))
        if above and p["clamp"] == "off":
            out.append(
                f"{labels.get(s.label, s.label)}: {above:,} of {len(rtts_ns):,} samples ({above / len(rtts_ns):.1%}) exceed its top expert "
                f"({fmt_s(top)} = {float(p['rtt_min']) + float(p['rtt_max']):g} ticks of {fmt_s(tick)}); above it every expert pays the same loss "
                "and the prediction collapses toward the mean expert — set fixed-share.clamp=top or a longer fixed-share.tick"
            )
    return out


def relabel(scores: Scores, labels: dict[str, str]) -> Scores:
    """Rows and traces named as the caller wrote the estimators (``--tick`` and ``--min-rto`` add
    parameters to the specs that ran; the JSON's ``params`` records those)."""
    for row in [*scores.rows, *(r for rows in scores.streams or [] for r in rows)]:
        row["estimator"] = labels.get(row["estimator"], row["estimator"])
    if scores.traces is not None:
        scores.traces = {labels.get(k, k): v for k, v in scores.traces.items()}
    return scores


def replay(
    samples: RttSeries | pd.DataFrame | Mapping[str, Any] | np.ndarray,
    estimators: Iterable[Spec | str] | Spec | str,
    *,
    tick: float | str | None = None,
    trace: bool = False,
    threads: int | None = None,
    min_rto: float | str | None = None,
    timer_granularity: float | str = 0.0,
    timestamps: bool = False,
) -> Replay:
    """Score each estimator on one stream of samples (:func:`rttlab.evaluate` adds per-connection
    results, floors, the Pareto front and notes).

    ``samples``: DataFrame (or a mapping of column name → values, such as
    ``{"time": [...], "rtt": [...]}``) with ``rtt`` (and ``time``) in seconds, or a 1-D array of
    RTTs (s). Durations are numbers of seconds or text such as ``"200ms"`` (rttlab.units).
    ``tick``: the unit of ``mae_ticks`` and, when given, the tick of every tick-based
    estimator (``fixed-share.tick``, ``linux.hz``) that does not set its own; default: 4 ms for
    ``mae_ticks``, estimators keep their defaults. ``min_rto``, ``timer_granularity``,
    ``timestamps``: the timer replay's settings (docs/metrics.md). Returns a :class:`Replay`:
    one row per estimator (``rows``, or ``scores`` as a DataFrame) and, with ``trace=True``,
    per-sample ``traces``. Warns when the median RTT is implausible in seconds (e.g. RTTs in
    milliseconds), saying what to divide by; the values are scored as given."""
    from rttlab.trace.series import RttSeries, check_replay_args, to_nanos

    check_replay_args(samples, estimators)
    from rttlab.units import seconds as seconds_of

    # Durations as everywhere else: "200ms", "1h" or a number of seconds.
    tick = None if tick is None else seconds_of(tick, "tick")
    min_rto = None if min_rto is None else seconds_of(min_rto, "min_rto")
    timer_granularity = seconds_of(timer_granularity, "timer_granularity")

    # A series read by read_series stays in Rust: no NumPy import on this path.
    times_ns, rtts_ns = (
        (samples.data, samples.data) if isinstance(samples, RttSeries) else to_nanos(samples)
    )
    given = as_specs(estimators)
    specs = with_tick(given, tick) if tick is not None else given
    result = relabel(
        score(
            times_ns,
            rtts_ns,
            specs,
            tick=tick or DEFAULT_TICK_S,
            trace=trace,
            threads=threads,
            min_rto=min_rto,
            timer_granularity=timer_granularity,
            timestamps=timestamps,
        ),
        {s.label: g.label for s, g in zip(specs, given)},
    )
    doubts = []
    if not isinstance(samples, RttSeries):  # read_series warned already
        from rttlab.trace.series import samples_unit_warning

        doubts = [samples_unit_warning(rtts_ns, "rttlab.replay")]
    labels = {s.label: g.label for s, g in zip(specs, given)}
    for warning in [*filter(None, doubts), *range_warnings(rtts_ns, specs, labels)]:
        warnings.warn(warning, stacklevel=2)
    if result.traces is None:
        return Replay(result.rows)
    return Replay(result.rows, result.traces, result.times_s, result.rtts_s)
