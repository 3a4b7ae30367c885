"""``rttlab.evaluate``: score estimators on an RTT series or a capture in one call.

The result object holds everything ``rttlab evaluate`` prints (the CLI only renders it): pooled
rows, per-connection rows for a capture, each estimator's RTO floor, the Pareto front of
bad-timeout rate against wait, and notes on what a replay cannot show. Every metric is defined
in docs/metrics.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rttlab.trace.estimators import NAMES, Spec, spec
from rttlab.trace.replay import (
    COUNTS,
    DEFAULT_TICK_S,
    METRICS,
    Scores,
    as_specs,
    defaults,
    fmt_s,
    needed_samples,
    range_warnings,
    relabel,
    score,
    with_tick,
)
from rttlab.units import seconds as seconds_of

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from rttlab.trace.series import RttSeries

SCHEMA = "rttlab.evaluate/3"

#: The bad-timeout rate the Pareto mark must resolve: tune's default target (1 %).
PARETO_RATE = 0.01
#: Scored samples a table's rows need before the Pareto front is marked: enough to know a
#: bad-timeout rate of :data:`PARETO_RATE` to ±50 % (95 % binomial interval,
#: :func:`rttlab.trace.replay.needed_samples`: 1,522). Below it every row would be ranked by W
#: alone, bad timeouts too rare to tell apart.
PARETO_MIN_SAMPLES = needed_samples(PARETO_RATE)

#: Where each estimator keeps its RTO floor: (parameter, how it binds). "absolute": RTO ≥ value;
#: "above-srtt": RTO ≥ SRTT (or the prediction) + value, Linux's rto_min inside rttvar.
#: Estimators absent here have no floor parameter (their RTO can go as low as the RTT allows).
#: FreeBSD's rexmit_min floors TCP_REXMTVAL before TCPT_RANGESET adds rexmit_slop, so its RTO is
#: at least rexmit_min + rexmit_slop (230 ms by default): absolute, the slop added in floor_of.
FLOOR_PARAMS: dict[str, tuple[str, str]] = {
    "rfc6298": ("min_rto", "absolute"),
    "ca-rto": ("min_rto", "absolute"),
    "regression": ("min_rto", "absolute"),
    "conformal": ("min_rto", "absolute"),
    "quantile-experts": ("min_rto", "absolute"),
    "linux": ("rto_min", "above-srtt"),
    "freebsd": ("rexmit_min", "absolute"),  # + rexmit_slop, see floor_of
    "fixed-share": ("min_rto", "above-srtt"),  # "absolute" with rto=rfc6298, see floor_of
}
#: What bounds the RTO of the estimators without a floor parameter (docs/estimators.md).
NO_FLOOR = {
    "eifel": "none (R + 2G)",
    "peak-hopper": "none",
    "quic": "none (G)",
    "last": "none",
    "constant": "its rto",
}


@dataclass(frozen=True, eq=False)
class Evaluation:
    """The result of :func:`evaluate`. ``rows``: one dict per estimator, pooled over every stream
    (``estimator``, ``floor``, ``floor_s``, ``pareto``, ``samples``, ``predicted``, the metrics of
    docs/metrics.md), sorted as asked; ``pareto`` is true on the Pareto front of bad-timeout rate
    vs W, marked only from :data:`PARETO_MIN_SAMPLES` scored samples; ``connections``: for a
    capture (or a frame with ``conn``) evaluated ``by="conn"``, one dict per connection (``conn,
    src, dst, vantage, method, samples, retransmissions, rows``), largest first; ``notes``:
    identical rows, closed-loop-only estimators, how losses were modelled; ``warnings``: inputs
    the estimators cannot represent (Fixed-Share's range, clock steps), an implausible median RTT
    for the unit read, too few samples for the Pareto mark; ``inputs``: with several inputs, each
    one's own :class:`Evaluation` (the rows above pool them all). ``rows``, ``connections`` and
    ``inputs`` are what ``--json`` prints.

    As DataFrames, made on first use: ``scores`` (the pooled rows, NaN where undefined) and
    ``per_connection`` (one row per connection and estimator)."""

    input: str
    input_kind: str
    samples_read: int
    settings: dict[str, Any]
    specs: list[Spec]
    rows: list[dict[str, Any]]
    connections: list[dict[str, Any]] | None = None
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: Per-sample traces (``trace=True``): the whole series, or a capture's largest connection.
    trace: Scores | None = None
    trace_title: str = ""
    #: With several inputs (``input_kind`` "inputs"): each input evaluated alone, in order given.
    inputs: list[Evaluation] | None = None

    @property
    def pareto(self) -> list[str]:
        """The estimators on the Pareto front of bad-timeout rate vs mean wait (pooled rows)."""
        return [r["estimator"] for r in self.rows if r["pareto"]]

    @cached_property
    def scores(self) -> pd.DataFrame:
        """The pooled rows as a DataFrame, one row per estimator (NaN where a metric is undefined)."""
        import pandas as pd

        table = pd.DataFrame(self.rows)
        table[METRICS] = table[METRICS].astype("float64")
        return table

    @cached_property
    def per_connection(self) -> pd.DataFrame:
        """One row per connection and estimator: the connection's ``conn`` (and, for a capture,
        ``src``, ``dst``, ``vantage``, ``method``), then its row for that estimator as in
        ``scores``; empty without per-connection results."""
        import pandas as pd

        info = ("conn", "src", "dst", "vantage", "method")
        records = [
            {**{k: c[k] for k in info if k in c}, **row}
            for c in self.connections or []
            for row in c["rows"]
        ]
        table = pd.DataFrame(records)
        if len(table):
            table[METRICS] = table[METRICS].astype("float64")
        return table

    def table(self) -> pd.DataFrame:
        """Deprecated: :attr:`scores` (the same DataFrame, as an attribute)."""
        import warnings

        warnings.warn(
            "Evaluation.table() is Evaluation.scores now", DeprecationWarning, stacklevel=2
        )
        return self.scores

    def to_json(self) -> dict[str, Any]:
        """The ``rttlab.evaluate/3`` object (docs/schema.md)."""
        doc: dict[str, Any] = {"schema": SCHEMA, **self._json()}
        doc["params"] = {s.name: s.params for s in self.specs if s.params}
        return doc

    def _json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "input": self.input,
            "input_kind": self.input_kind,
            "samples_read": self.samples_read,
            "tick_s": self.settings["tick_s"],
            "settings": self.settings,
            "rows": self.rows,
            "pareto": self.pareto,
            "pareto_min_samples": PARETO_MIN_SAMPLES,
            "notes": self.notes,
            "warnings": self.warnings,
        }
        if self.connections is not None:
            doc["connections"] = self.connections
        if self.inputs is not None:
            doc["inputs"] = [
                {
                    k: v
                    for k, v in e._json().items()
                    if k not in ("settings", "tick_s", "pareto_min_samples")
                }
                for e in self.inputs
            ]
        return doc

    def plot(self, path: str | Path) -> list[Path]:
        """Two figures (needs ``trace=True``): at ``path``, one panel per estimator with the RTT
        samples and the RTO in force over time; beside it (``NAME-front.EXT``), bad-timeout rate
        against mean wait W with the Pareto front. Returns both paths. With several inputs: the
        first figure once per input (``NAME-INPUT.EXT``, INPUT the input's file name without its
        suffix, numbered when two share one), then the pooled front."""
        from rttlab.trace.plot import plot_front, plot_replay

        path = Path(path)
        front = path.with_name(f"{path.stem}-front{path.suffix}")
        if self.inputs is not None:
            if any(e.trace is None for e in self.inputs):
                raise ValueError("plot needs an evaluation made with trace=True")
            stems = [Path(e.input).stem for e in self.inputs]
            drawn = []
            for k, (e, stem) in enumerate(zip(self.inputs, stems)):
                name = stem if stems.count(stem) == 1 else f"{k + 1}-{stem}"
                drawn.append(path.with_name(f"{path.stem}-{name}{path.suffix}"))
                plot_replay(e.trace, drawn[-1], title=e.trace_title)
            plot_front(self.rows, front, title=f"{len(self.inputs)} inputs, pooled")
            return [*drawn, front]
        if self.trace is None:
            raise ValueError("plot needs an evaluation made with trace=True")
        plot_replay(self.trace, path, title=self.trace_title)
        plot_front(
            self.rows,
            front,
            title=f"{Path(self.input).name}: pooled over every stream"
            if self.input_kind == "capture"
            else Path(self.input).name,
        )
        return [path, front]


def evaluate(
    source: str | Path | RttSeries | pd.DataFrame | Mapping[str, Any] | np.ndarray,
    estimators: Iterable[Spec | str] | Spec | str | None = None,
    *,
    by: str | None = "conn",
    tick: float | str | None = None,
    min_rto: float | str | None = None,
    timer_granularity: float | str = 0.0,
    timestamps: bool | None = None,
    unit: str | None = None,
    columns: str | Mapping[str, str] | None = None,
    sort: str = "mae_s",
    trace: bool = False,
    threads: int | None = None,
    trace_conn: int | None = None,
) -> Evaluation:
    """Replay estimators over ``source`` and score them (docs/metrics.md).

    ``source``: an RTT series file, a pcap/pcapng capture (told apart by content), a list of
    such files (scored pooled, and each alone in ``inputs``: see below), what
    :func:`rttlab.read_series` returned, a DataFrame of samples (``rtt`` and optionally ``time``
    in seconds, and ``conn`` to give one stream per connection — e.g.
    :func:`rttlab.capture.path_samples`) or a mapping of such columns, or a 1-D array of RTTs in
    seconds. Returns an :class:`Evaluation`.
    A capture is scored on each connection's path-RTT series (docs/capture.md), and W also on
    the segments it shows were really lost (``lost_*`` metrics, docs/metrics.md).

    ``estimators``: specs or names (default: every registered estimator). ``by="conn"``: also
    score each connection alone; ``None``: pooled rows only. Durations (``tick``, ``min_rto``,
    ``timer_granularity``) are numbers of seconds or text such as ``"200ms"`` (rttlab.units). ``tick``: the unit of
    ``mae_ticks`` and the tick of every tick-based estimator (``fixed-share.tick``, ``linux.hz``)
    that does not set its own (default: 4 ms for ``mae_ticks``, estimators keep their defaults).
    ``min_rto``: equalise floors — sets every estimator's own floor parameter to it and
    raises every RTO in force to at least it. ``timer_granularity``: the sender's timer
    fires on this heartbeat. ``timestamps``: samples of timed-out segments still reach the
    estimator (RFC 7323), else Karn's rule withholds them; None (default): for a capture, per
    connection, whether it negotiated timestamps; otherwise False. ``unit``: of a series file's
    RTTs; ``columns``: a series file's columns chosen by name (``"time=COL,rtt=COL"`` or a
    mapping, as :func:`rttlab.read_series` takes it). ``sort``: the metric rows are sorted by
    (undefined last). ``trace_conn``: with ``trace`` on a capture, the connection traced (its
    id in ``rttlab flows``) instead of the one with the most samples.

    Several files: every stream of every file (a series, each connection of a capture) is
    replayed from a fresh estimator and timer and the rows pool every scored sample (a long
    input weighs more), as a capture's rows pool its connections; ``inputs`` holds each file's
    own :class:`Evaluation`, and ``warnings`` theirs, each naming its file.

    A warning says when the median RTT is implausible for a network path in the unit read (e.g.
    milliseconds read as seconds), naming the likely unit; the values are scored as read."""
    if by not in ("conn", None):
        raise ValueError(f"by must be 'conn' or None, got {by!r}")
    if sort not in (*METRICS, *COUNTS):
        raise ValueError(f"sort must be one of {', '.join((*METRICS, *COUNTS))}, got {sort!r}")
    given = as_specs(NAMES if estimators is None else estimators)
    if not given:
        raise ValueError("no estimators given")
    specs = given
    # Durations as everywhere else (rttlab.units): "200ms", "1h" or a number of seconds.
    timer_granularity = seconds_of(timer_granularity, "timer_granularity")
    if tick is not None:
        tick = seconds_of(tick, "tick")
        if not tick > 0:
            raise ValueError(f"tick: must be a positive duration, got {tick!r}")
        specs = with_tick(specs, tick)
    if min_rto is not None:
        min_rto = seconds_of(min_rto, "min_rto")
        specs = with_floor(specs, min_rto)
    settings = {
        "tick_s": tick if tick is not None else DEFAULT_TICK_S,
        "min_rto_s": min_rto,
        "timer_granularity_s": timer_granularity,
        "timestamps": "auto" if timestamps is None else timestamps,
    }
    # Rows keep the names the caller gave; `params` in the JSON records what actually ran.
    labels = {s.label: g.label for s, g in zip(specs, given)}
    options = dict(
        labels=labels,
        tick=settings["tick_s"],
        threads=threads,
        min_rto=min_rto,
        timer_granularity=timer_granularity,
        timestamps=bool(timestamps),
    )

    if _several(source):
        paths = [Path(p) for p in source]  # type: ignore[union-attr]
        if len(paths) > 1:
            return _evaluate_inputs(paths, specs, by, sort, trace, settings, options, unit, columns)
        source = paths[0]
    if isinstance(source, (str, Path)):
        return _evaluate_file(
            Path(source), specs, by, sort, trace, settings, options, unit, columns, trace_conn
        )
    if unit is not None or columns is not None:
        raise ValueError(
            f"{'unit' if unit is not None else 'columns'} applies to series files; DataFrames and arrays are in seconds"
        )
    from rttlab.trace.series import RttSeries, samples_unit_warning, to_nanos

    if isinstance(source, RttSeries):  # read_series's result: its columns as read
        title = (
            f"{Path(source.path).name if source.path else 'series'}: samples, predictions and RTOs"
        )
        return _evaluate_streams(
            source.path or "<RttSeries>",
            "series",
            source.data,
            source.data,
            None,
            specs,
            sort,
            trace,
            settings,
            options,
            title=title,
            warnings=list(source.warnings),
        )

    import numpy as np

    if hasattr(source, "columns") and "conn" in source:
        frame = source.sort_values(
            ["conn", "time"] if "time" in source else ["conn"], kind="stable"
        )
        times_ns, rtts_ns = to_nanos_by_conn(frame)
        conn = frame["conn"].to_numpy()
        starts = np.flatnonzero(np.r_[True, conn[1:] != conn[:-1]])
        doubt = samples_unit_warning(rtts_ns, "samples")
        result = _evaluate_streams(
            "<DataFrame>",
            "samples",
            times_ns,
            rtts_ns,
            starts.tolist(),
            specs,
            sort,
            trace,
            settings,
            options,
            title="samples, predictions and RTOs",
            warnings=[doubt] if doubt else [],
        )
        if by == "conn":
            connections = []
            for a, b in zip(starts, np.r_[starts[1:], len(conn)]):
                rows = (
                    _score(times_ns[a:b], rtts_ns[a:b], specs, **options).rows if b - a >= 2 else []
                )
                connections.append(
                    {
                        "conn": conn[a].item(),
                        "samples": int(b - a),
                        "rows": _decorate(rows, specs, min_rto, sort, labels),
                    }
                )
            connections.sort(key=lambda e: -e["samples"])
            result = replace(result, connections=connections)
        return result
    times_ns, rtts_ns = to_nanos(source)
    kind = (
        "<DataFrame>"
        if hasattr(source, "columns")
        else "<mapping>"
        if isinstance(source, Mapping)
        else "<array>"
    )
    doubt = samples_unit_warning(rtts_ns, "samples")
    return _evaluate_streams(
        kind,
        "samples",
        times_ns,
        rtts_ns,
        None,
        specs,
        sort,
        trace,
        settings,
        options,
        title="samples, predictions and RTOs",
        warnings=[doubt] if doubt else [],
    )


def _several(source: object) -> bool:
    """A list or tuple of paths (not of numbers: an array of RTTs)."""
    import os

    return (
        isinstance(source, (list, tuple))
        and len(source) > 0
        and all(isinstance(x, (str, os.PathLike)) for x in source)
    )


def _evaluate_file(
    path: Path, specs, by, sort, trace, settings, options, unit, columns, trace_conn=None
) -> Evaluation:
    """One series or capture file (told apart by content)."""
    return _read_and_evaluate(
        path, specs, by, sort, trace, settings, options, unit, columns, trace_conn
    )[0]


def _read_and_evaluate(
    path: Path, specs, by, sort, trace, settings, options, unit, columns, trace_conn=None
) -> tuple[Evaluation, _Streams]:
    """:func:`_evaluate_file`, and the streams it replayed (for pooling several inputs)."""
    from rttlab.trace.capture import is_capture  # the Rust reader's own magic check

    if is_capture(path):
        for given, what in ((unit, "unit"), (columns, "columns")):
            if given is not None:
                raise ValueError(
                    f"{what} applies to RTT series; a capture's {'times' if what == 'unit' else 'columns'} are its own"
                )
        return _capture(path, specs, by, sort, trace, settings, options, trace_conn)
    from rttlab import _core
    from rttlab.trace.series import column_names, unit_warning

    # Read and replayed in Rust (no NumPy import): the series is handed over as it is.
    data = _core.read_series_data(str(path), unit, *column_names(columns))
    doubt = unit_warning(str(path), data)
    result = _evaluate_streams(
        str(path),
        "series",
        data,
        data,
        None,
        specs,
        sort,
        trace,
        settings,
        options,
        title=f"{path.name}: samples, predictions and RTOs",
        warnings=[doubt] if doubt else [],
    )
    return result, _Streams(data, [0], [bool(options["timestamps"])], [])


@dataclass
class _Streams:
    """What one input's replay ran on: a SeriesData, or (times_ns, rtts_ns) arrays; where its
    streams start, each stream's timestamps flag, its lost segments (stream, timer start ns)."""

    columns: Any
    starts: list[int]
    timestamps: list[bool]
    losses: list[tuple[int, int]]

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        from rttlab import _core

        if isinstance(self.columns, _core.SeriesData):
            return self.columns.times_ns(), self.columns.rtts_ns()
        return self.columns


def _evaluate_inputs(
    paths: list[Path], specs, by, sort, trace, settings, options, unit, columns
) -> Evaluation:
    """Several files: each evaluated alone (``inputs``), and every stream of every one replayed
    together for the pooled rows (one pass; each stream from a fresh estimator and timer)."""
    import numpy as np

    parts = [
        _read_and_evaluate(p, specs, by, sort, trace, settings, options, unit, columns)
        for p in paths
    ]
    times, rtts, starts, ts, losses = [], [], [], [], []
    offset = 0
    for _, streams in parts:
        t, r = streams.arrays()
        losses += [(len(starts) + k, ns) for k, ns in streams.losses]
        starts += [offset + a for a in streams.starts]
        ts += streams.timestamps
        times.append(np.asarray(t, dtype=np.uint64))
        rtts.append(np.asarray(r, dtype=np.uint64))
        offset += len(r)
    times_ns, rtts_ns = np.concatenate(times), np.concatenate(rtts)
    pooled = _score(
        times_ns,
        rtts_ns,
        specs,
        starts=starts,
        losses=sorted(losses),
        **{**options, "timestamps": ts},
    )
    rows = _decorate(pooled.rows, specs, settings["min_rto_s"], sort, options["labels"])
    notes = _notes(rows, specs, options["labels"])
    kinds = {e.input_kind for e, _ in parts}
    each = "each series and each capture connection" if "capture" in kinds else "each input"
    notes.append(
        f"inputs: the rows pool every scored sample of the {len(parts)} inputs (a long input weighs more), "
        f"{each} replayed from a fresh estimator and timer; each input alone: --json, --csv"
    )
    if "capture" in kinds:
        notes.append(
            "losses: W on the segments the captures show were really lost is lost_wait_mean_s; wait_mean_s is the wait "
            "the timer in force would have imposed had any scored segment been lost (docs/metrics.md)"
        )
    else:
        notes.append(
            "losses: an RTT series says nothing of losses, so W is the wait the timer in force would have imposed had each segment been lost (docs/metrics.md)"
        )
    warnings = []
    for e, _ in parts:
        own = pareto_warning(e.rows)
        warnings += [
            w if w.startswith(f"{e.input}:") else f"{e.input}: {w}" for w in e.warnings if w != own
        ]
    mark = pareto_warning(rows)
    return Evaluation(
        " + ".join(e.input for e, _ in parts),
        "inputs",
        sum(e.samples_read for e, _ in parts),
        settings,
        specs,
        rows,
        None,
        notes,
        warnings + ([mark] if mark else []),
        None,
        "",
        [e for e, _ in parts],
    )


def to_nanos_by_conn(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """As :func:`rttlab.series.to_nanos`, but time only has to rise within each connection."""
    import numpy as np

    from rttlab.trace.series import to_nanos

    if "time" not in frame:
        return to_nanos(frame)
    rtt = frame["rtt"].to_numpy(dtype=np.float64)
    time = frame["time"].to_numpy(dtype=np.float64)
    # Validate the RTTs (and their index) with the shared rule, times per connection here.
    to_nanos(rtt)
    conn = frame["conn"].to_numpy()
    same = conn[1:] == conn[:-1]
    if not np.all(np.isfinite(time)) or np.any(time < 0) or np.any(np.diff(time)[same] < 0):
        raise ValueError(
            "time must be finite, non-negative and non-decreasing within each connection"
        )
    return np.rint(time * 1e9).astype(np.uint64), np.maximum(np.rint(rtt * 1e9), 1).astype(
        np.uint64
    )


def with_floor(specs: list[Spec], min_rto: float) -> list[Spec]:
    """Every estimator's own floor parameter set to ``min_rto`` (the replay raises every RTO in
    force to it as well, for those without one). A floor also given as a parameter is a conflict."""
    out = []
    for s in specs:
        key = FLOOR_PARAMS.get(s.name, (None, ""))[0]
        if key is not None:
            if key in s.params:
                raise ValueError(
                    f"min_rto and {s.name}.{key} both set the floor of {s.name}: give one"
                )
            s = spec(s.name, **s.params, **{key: f"{min_rto!r}"})
        out.append(s)
    return out


def floor_of(s: Spec, min_rto: float | None) -> tuple[str, float | None]:
    """(how the floor reads, its value in seconds when it is absolute) for one estimator."""
    params = {**defaults(s.name), **s.params}
    found = FLOOR_PARAMS.get(s.name)
    if found is None:
        text, value = NO_FLOOR.get(s.name, "none"), None
    else:
        key, how = found
        if s.name == "fixed-share" and params.get("rto") == "rfc6298":
            how = "absolute"
        value = seconds_of(params[key], f"{s.name}.{key}")
        if s.name == "freebsd":
            value += seconds_of(params["rexmit_slop"], "freebsd.rexmit_slop")
        if how == "absolute":
            text = fmt_s(value)
        else:
            text = ("ŷ" if s.name == "fixed-share" else "SRTT") + f" + {fmt_s(value)}"
            value = None
    if min_rto is not None and min_rto > 0:
        text = f"{text}, ≥ {fmt_s(min_rto)}" if value is None else fmt_s(max(value, min_rto))
        value = max(value or 0.0, min_rto)
    return text, value


def pareto_front(rows: list[dict[str, Any]]) -> set[str]:
    """Rows that no other row beats on both bad-timeout rate and mean wait (lower is better,
    equal on one and lower on the other beats). Rows without both values are not ranked."""
    pts = [
        (r["estimator"], r["bad_timeout_rate"], r["wait_mean_s"])
        for r in rows
        if r["bad_timeout_rate"] is not None and r["wait_mean_s"] is not None
    ]
    front = set()
    for name, b, w in pts:
        if not any((b2 <= b and w2 <= w) and (b2 < b or w2 < w) for _, b2, w2 in pts):
            front.add(name)
    return front


def _decorate(
    rows: list[dict[str, Any]],
    specs: list[Spec],
    min_rto: float | None,
    sort: str,
    labels: dict[str, str],
    floors: dict | None = None,
) -> list[dict[str, Any]]:
    floors = floors or {labels.get(s.label, s.label): floor_of(s, min_rto) for s in specs}
    # Marked only where bad-timeout rates can be told apart (pareto_warning says why not).
    enough = bool(rows) and min(r["samples"] for r in rows) >= PARETO_MIN_SAMPLES
    front = pareto_front(rows) if enough else set()
    out = []
    for r in rows:
        text, value = floors[r["estimator"]]
        out.append(
            {
                "estimator": r["estimator"],
                "floor": text,
                "floor_s": value,
                "pareto": r["estimator"] in front,
                **{k: v for k, v in r.items() if k != "estimator"},
            }
        )
    return sorted(out, key=lambda r: (r[sort] is None, r[sort] if r[sort] is not None else 0.0))


def _notes(rows: list[dict[str, Any]], specs: list[Spec], labels: dict[str, str]) -> list[str]:
    notes = []
    keys = ("samples", "predicted", *METRICS, *COUNTS)
    groups: dict[tuple, list[str]] = {}
    for r in rows:
        groups.setdefault(tuple(r[k] for k in keys), []).append(r["estimator"])
    for names in groups.values():
        if len(names) > 1 and rows and rows[0]["samples"] > 0:
            notes.append(
                f"{' and '.join(names)}: identical on every metric (the same predictions and RTOs on these samples)"
            )
    for s in specs:
        label = labels.get(s.label, s.label)
        if s.name == "ca-rto":
            notes.append(
                f"{label}: closed-loop only — its random extension needs the sender's cwnd, which a replay of RTT samples has not; here it is its RFC 6298 base (use `rttlab simulate` to see it)"
            )
        if s.name == "eifel" and s.params.get("gain", "fixed") != "fixed":
            notes.append(
                f"{label}: the flight-based gain needs the sender's cwnd; a replay falls back to the fixed γ = 1/3"
            )
    return notes


def _score(times_ns, rtts_ns, specs, *, labels, **options) -> Scores:
    return relabel(score(times_ns, rtts_ns, specs, **options), labels)


def pareto_warning(rows: list[dict[str, Any]]) -> str | None:
    """Why ``rows`` carry no Pareto mark: fewer scored samples than :data:`PARETO_MIN_SAMPLES`
    (None when they have enough, or fewer than two rows: nothing to rank)."""
    n = min((r["samples"] for r in rows), default=None)
    if n is None or n >= PARETO_MIN_SAMPLES or len(rows) < 2:
        return None
    from rttlab.units import count

    return (
        f"{count(n, 'scored sample')}: too few to rank estimators by bad timeouts; a {PARETO_RATE:.0%} bad-timeout rate "
        f"is known to ±50 % only from ≈{PARETO_MIN_SAMPLES:,} samples (95 % binomial interval), so no row is marked ◆"
    )


def _evaluate_streams(
    name,
    kind,
    times_ns,
    rtts_ns,
    starts,
    specs,
    sort,
    trace,
    settings,
    options,
    title,
    warnings: list[str] | None = None,
) -> Evaluation:
    result = _score(times_ns, rtts_ns, specs, starts=starts, trace=trace, **options)
    rows = _decorate(result.rows, specs, settings["min_rto_s"], sort, options["labels"])
    notes = _notes(rows, specs, options["labels"])
    notes.append(
        "losses: an RTT series says nothing of losses, so W is the wait the timer in force would have imposed had each segment been lost (docs/metrics.md)"
    )
    mark = pareto_warning(rows)
    return Evaluation(
        name,
        kind,
        len(rtts_ns),
        settings,
        specs,
        rows,
        None,
        notes,
        [*(warnings or []), *range_warnings(rtts_ns, specs, options["labels"])]
        + ([mark] if mark else []),
        result if trace else None,
        title,
    )


def lost_segments(retransmissions: pd.DataFrame, connections: pd.DataFrame) -> pd.DataFrame:
    """The retransmissions W is scored on (docs/metrics.md): first resends (``attempt`` 1) whose
    earlier transmission the capture shows was really lost (``needed``), of each connection's
    main data direction (more payload bytes; ties: ``fwd``), with a known timer start."""
    import numpy as np

    info = connections.set_index("conn")
    data_dir = np.where(info["bytes_rev"].to_numpy() > info["bytes_fwd"].to_numpy(), "rev", "fwd")
    main = dict(zip(info.index.to_numpy().tolist(), data_dir.tolist()))
    r = retransmissions
    keep = (
        r["needed"].to_numpy()
        & (r["attempt"].to_numpy() == 1)
        & r["timer_start"].notna().to_numpy()
    )
    keep &= r["direction"].astype(str).to_numpy() == np.array(
        [main[c] for c in r["conn"].tolist()], dtype=object
    )
    return r[keep]


#: A capture time that goes back by more than this from the previous sample of the same series
#: (in capture order) is a clock step (an NTP step, a resumed VM, merged files), not reordering.
#: Smaller disorder — packets of a multi-queue capture a few µs out of order — is sorted by time.
CLOCK_STEP_S = 1.0


def clock_segments(series: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """A capture's path-RTT samples with a ``segment`` column, sorted by connection, segment and
    time, and a warning per backwards clock step. Taken in capture order (``frame``), a sample
    more than :data:`CLOCK_STEP_S` earlier than the one before it in its connection starts a new
    segment: the interval across a step is unknown, so each segment is replayed from a fresh
    estimator and timer (its first sample warms up, as a connection's does) and the scores pool
    every segment (docs/capture.md, "Clock steps")."""
    import numpy as np

    s = series.sort_values(["conn", "frame"], kind="stable")
    conn = s["conn"].to_numpy()
    t = s["time"].to_numpy()
    step = np.r_[False, (conn[1:] == conn[:-1]) & (np.diff(t) < -CLOCK_STEP_S)]
    warnings = []
    for i in np.flatnonzero(step).tolist():
        warnings.append(
            f"connection {int(conn[i])}: the capture clock steps back {t[i - 1] - t[i]:.6g} s at frame {int(s['frame'].iat[i])} "
            "(its path-RTT series is replayed in segments, each from a fresh estimator and timer)"
        )
    s = (
        s.assign(segment=np.cumsum(step))
        .sort_values(["conn", "segment", "time"], kind="stable")
        .reset_index(drop=True)
    )
    return s, warnings


def _losses_in_segments(
    lost: pd.DataFrame, series: pd.DataFrame, starts: np.ndarray
) -> tuple[pd.DataFrame, dict[int, int]]:
    """Each lost segment with the index of the stream it belongs to (``stream``): its
    connection's segment whose first sample precedes its resend in the capture. Losses of
    connections without a series are dropped; those whose timer started after their resend (a
    clock step between the two) are dropped and counted per connection."""
    import numpy as np

    first_frame = series["frame"].to_numpy()[starts]
    stream_conn = series["conn"].to_numpy()[starts]
    straddling: dict[int, int] = {}
    keep, streams = [], []
    for i, (c, frame, armed, resent) in enumerate(
        zip(
            lost["conn"].tolist(),
            lost["frame"].tolist(),
            lost["timer_start"].tolist(),
            lost["resent"].tolist(),
        )
    ):
        mine = np.flatnonzero(stream_conn == c)
        if not len(mine):
            continue
        if armed > resent:
            straddling[c] = straddling.get(c, 0) + 1
            continue
        before = mine[first_frame[mine] <= frame]
        keep.append(i)
        streams.append(int(before[-1]) if len(before) else int(mine[0]))
    out = lost.iloc[keep].assign(stream=np.array(streams, dtype=np.int64))
    return out, straddling


def _score_segments(
    times_ns, rtts_ns, specs, starts, ends, ks, losses, options, stream_ts, trace=False
) -> Scores:
    """The streams ``ks`` (consecutive: one connection's segments) scored together."""
    a, b = int(starts[ks[0]]), int(ends[ks[-1]])
    sub_starts = [int(starts[k]) - a for k in ks]
    own = [(k - ks[0], t) for k, t in losses if ks[0] <= k <= ks[-1]]
    ts = [stream_ts[k] for k in ks] if isinstance(stream_ts, list) else stream_ts
    return _score(
        times_ns[a:b],
        rtts_ns[a:b],
        specs,
        starts=sub_starts,
        losses=own,
        trace=trace,
        **{**options, "timestamps": ts},
    )


def _capture(
    path: Path, specs, by, sort, trace, settings, options, trace_conn: int | None = None
) -> tuple[Evaluation, _Streams]:
    """A capture evaluated, and the streams it replayed (one per connection, or per segment of
    a connection whose clock stepped back)."""
    import numpy as np

    from rttlab.trace.capture import path_samples, read_capture

    samples, connections, retransmissions = read_capture(path, retransmissions=True)
    warnings = list(samples.attrs.get("warnings", []))
    series = path_samples(samples, connections)
    from rttlab import InputError

    if series.empty:
        raise InputError(
            f"{path}: no connection has a path-RTT series to replay (see `rttlab flows {path}` for each connection's vantage point and method)"
        )
    series, steps = clock_segments(series)
    conn = series["conn"].to_numpy()
    segment = series["segment"].to_numpy()
    # One stream per connection, or per segment of a connection whose clock stepped back.
    starts = np.flatnonzero(np.r_[True, (conn[1:] != conn[:-1]) | (segment[1:] != segment[:-1])])
    ends = np.r_[starts[1:], len(conn)]
    # Really lost segments (the lost_* metrics), less those whose timer started on the other
    # side of a clock step (their wait is unknown).
    every_lost = lost_segments(retransmissions, connections)
    lost, straddling = _losses_in_segments(every_lost, series, starts)
    for c, n in straddling.items():
        warnings.append(
            f"connection {c}: {n} lost segment{'s' if n != 1 else ''} resent across a backwards clock step not scored (the wait is unknown)"
        )
    warnings += steps
    # Capture times are from the first packet and negative after a step back: ns from the
    # earliest time any stream or loss holds (the replay needs only differences).
    origin = min(
        float(series["time"].min()), float(lost["timer_start"].min()) if len(lost) else np.inf
    )
    times_ns = np.rint((series["time"].to_numpy() - origin) * 1e9).astype(np.uint64)
    rtts_ns = np.maximum(np.rint(series["rtt"].to_numpy() * 1e9), 1).astype(np.uint64)
    losses = sorted(
        zip(
            lost["stream"].tolist(),
            np.rint((lost["timer_start"].to_numpy() - origin) * 1e9).astype(np.int64).tolist(),
        )
    )
    if settings["timestamps"] == "auto":
        # A sender whose connection negotiated timestamps takes its RTT from the echo even for a
        # retransmitted segment (RFC 7323 §4; Linux tcp_ack_update_rtt), so Karn does not bite.
        both = dict(
            zip(
                connections["conn"].tolist(),
                (connections["ts_fwd"].to_numpy() & connections["ts_rev"].to_numpy()).tolist(),
            )
        )
        uses_ts = [bool(both[int(c)]) for c in conn[starts].tolist()]
        options = {**options, "timestamps": uses_ts}
    pooled = _score(
        times_ns,
        rtts_ns,
        specs,
        starts=starts.tolist(),
        losses=losses,
        per_stream=by == "conn" or trace,
        **options,
    )
    floors = {
        options["labels"].get(s.label, s.label): floor_of(s, settings["min_rto_s"]) for s in specs
    }
    rows = _decorate(pooled.rows, specs, settings["min_rto_s"], sort, options["labels"], floors)
    notes = _notes(rows, specs, options["labels"])
    unscored = int(len(every_lost) - len(losses) - sum(straddling.values()))
    notes.append(
        f"losses: W on the {len(losses):,} segment{'' if len(losses) == 1 else 's'} the capture shows were really lost (first resends with no sign the original arrived: "
        "no ACK or SACK before the resend, no D-SACK, no TS echo of the original) is lost_wait_mean_s; wait_mean_s is the wait the timer "
        "in force would have imposed had any scored segment been lost (docs/metrics.md)"
        + (
            f"; {unscored:,} more lost segments belong to connections without a path-RTT series and are not scored"
            if unscored
            else ""
        )
    )

    per_conn = None
    trace_scores, title = None, ""
    if by == "conn" or trace:
        per_conn = []
        stream_ts = options["timestamps"]
        # Per-connection facts as plain lists (no per-row DataFrame lookups: captures hold
        # hundreds of thousands of connections).
        col = {
            k: dict(zip(connections["conn"].tolist(), connections[k].tolist()))
            for k in (
                "src",
                "dst",
                "vantage",
                "path_rtt_method",
                "bytes_fwd",
                "bytes_rev",
                "retransmissions_fwd",
                "retransmissions_rev",
            )
        }
        rtx_dir = retransmissions["direction"].astype(str).to_numpy()
        rtx_conn = retransmissions["conn"].to_numpy()
        main_dir = {
            c: ("rev" if col["bytes_rev"][c] > col["bytes_fwd"][c] else "fwd") for c in col["src"]
        }
        in_main = (
            rtx_dir == np.array([main_dir[c] for c in rtx_conn.tolist()], dtype=object)
            if len(rtx_conn)
            else np.zeros(0, bool)
        )
        unneeded = (
            in_main & retransmissions["evidence"].isin(["acked", "dsack", "ts-original"]).to_numpy()
        )
        spurious = dict(zip(*np.unique(rtx_conn[unneeded], return_counts=True)))
        lost_count = lost.groupby("conn").size().to_dict()
        actual = (lost["resent"] - lost["timer_start"]).groupby(lost["conn"]).mean().to_dict()
        # The streams of each connection: one, or one per segment of a stepped clock.
        conn_streams: dict[int, list[int]] = {}
        for k, a in enumerate(starts.tolist()):
            conn_streams.setdefault(int(conn[a]), []).append(k)
        for c, ks in conn_streams.items():
            k, a, b = ks[0], int(starts[ks[0]]), int(ends[ks[-1]])
            if len(ks) == 1:
                conn_rows = pooled.streams[k] if b - a >= 2 else []
            else:  # its segments pooled, as the capture's rows pool every stream
                conn_rows = _score_segments(
                    times_ns, rtts_ns, specs, starts, ends, ks, losses, options, stream_ts
                ).rows
            direction = main_dir[c]
            entry = {
                "conn": c,
                "src": col["src"][c],
                "dst": col["dst"][c],
                "vantage": col["vantage"][c],
                "method": str(col["path_rtt_method"][c]),
                "samples": int(b - a),
                # The main data direction (more payload bytes): whose retransmissions count.
                "data_direction": direction,
                "retransmissions": int(col[f"retransmissions_{direction}"][c]),
                "lost": int(lost_count.get(c, 0)),
                "spurious": int(spurious.get(c, 0)),
                # What the real sender waited on those losses: resend − timer start.
                "actual_lost_wait_mean_s": float(actual[c]) if c in actual else None,
                "timestamps": stream_ts[k] if isinstance(stream_ts, list) else stream_ts,
                # Each stream scored alone in the pooled pass (fresh estimator and timer).
                "rows": _decorate(
                    conn_rows, specs, settings["min_rto_s"], sort, options["labels"], floors
                ),
            }
            if len(ks) > 1:
                entry["clock_segments"] = len(ks)
            per_conn.append(entry)
        per_conn.sort(key=lambda e: -e["samples"])
        if trace:
            top = per_conn[0]
            if trace_conn is not None:
                top = next((e for e in per_conn if e["conn"] == trace_conn), None)
                if top is None:
                    have = ", ".join(str(e["conn"]) for e in per_conn[:12])
                    raise InputError(
                        f"{path}: --flow {trace_conn}: no connection with a path-RTT series has that id (these do: {have}{', …' if len(per_conn) > 12 else ''})"
                    )
            ks = conn_streams[top["conn"]]
            trace_scores = _score_segments(
                times_ns, rtts_ns, specs, starts, ends, ks, [], options, stream_ts, trace=True
            )
            title = f"{path.name}, connection {top['conn']} ({top['method']}): samples, predictions and RTOs"
        if by is None:
            per_conn = None
    mark = pareto_warning(rows)
    stream_ts = options["timestamps"]
    streams = _Streams(
        (times_ns, rtts_ns),
        starts.tolist(),
        list(stream_ts) if isinstance(stream_ts, list) else [bool(stream_ts)] * len(starts),
        losses,
    )
    return Evaluation(
        str(path),
        "capture",
        len(series),
        settings,
        specs,
        rows,
        per_conn,
        notes,
        warnings + range_warnings(rtts_ns, specs, options["labels"]) + ([mark] if mark else []),
        trace_scores,
        title,
    ), streams
