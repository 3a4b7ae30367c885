"""The search behind ``rttlab tune`` (:mod:`rttlab.trace.tune`): inputs as streams, each
estimator's search space, batched replays, Pareto fronts and the recommendation.

Every point of the search is replayed by the Rust core exactly as :func:`rttlab.evaluate` replays
(same streams, Karn/timestamps per connection, really lost segments of a capture) and scored with
the same Allman & Paxson metrics (docs/metrics.md): bad-timeout rate, mean wait W on a loss, and the
forecast error. Many parameter points of one estimator go to the core in one call (one spec each),
so Python never loops over samples. What tune does and how to read it: docs/tuning.md.

Search (per estimator, :data:`TUNABLE` lists which parameters and in what range; the registry's
own bounds clip every range):

- one or two parameters: a full grid (log-spaced where the range spans decades);
- three or more: SciPy's differential evolution (``scipy.optimize.differential_evolution``),
  vectorised so each generation is one batch of replays, started from a Sobol sample of the
  space, with a fixed seed. The score surface is piecewise constant (bad timeouts are counts) and
  has no gradient, which rules out the quasi-Newton and trust-region methods; DE is
  derivative-free, handles bounds natively, ships with SciPy (already a dependency) and batches
  well. Every point it evaluates is kept, so its history also draws the front.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rttlab.trace.estimators import NAMES, Spec, catalog, spec
from rttlab.trace.replay import needed_samples as needed_samples  # tune's modules import it here
from rttlab.trace.replay import score

if TYPE_CHECKING:
    import pandas as pd

SCHEMA = "rttlab.tune/1"

#: Fewest scored samples a trace (or a held-out part) must have to be tuned on at all.
MIN_SAMPLES = 20

#: The pseudo-parameter of the timer's floor, for estimators without a floor parameter of their
#: own: every RTO in force is raised to it (`rttlab evaluate --min-rto`).
TIMER_FLOOR = "timer_min_rto"

#: What is searched by default: estimator → {parameter: (low, high, log-spaced?)} in the
#: parameter's unit (seconds for durations). The floor comes first: Allman & Paxson found it
#: decides most of an RTO's behaviour. Left out on purpose: initial and maximum RTOs (they act
#: only before the first sample and after back-offs), ticks and the number of experts
#: (Fixed-Share's resolution, not its trade-off), regression coefficients (fitted, not tuned),
#: CA-RTO's cwnd-driven extension (closed-loop only; in a replay it is its RFC 6298 base).
TUNABLE: dict[str, dict[str, tuple[float, float, bool]]] = {
    "rfc6298": {
        "min_rto": (0.001, 3.0, True),
        "k": (0.5, 16.0, True),
        "granularity": (0.001, 0.5, True),
    },
    "linux": {"rto_min": (0.001, 3.0, True)},
    # Both of FreeBSD's sysctls: RTO = max(rexmit_min, SRTT + 4·RTTVAR) + rexmit_slop, so the slop
    # lengthens every RTO and the floor only the short ones. Each from 1 ms (the sysctl refuses
    # less than one tick); the slop up to 1 s (5× its 200 ms default; a higher floor for all RTOs
    # is rexmit_min's to give, up to 3 s).
    "freebsd": {"rexmit_min": (0.001, 3.0, True), "rexmit_slop": (0.001, 1.0, True)},
    "eifel": {TIMER_FLOOR: (0.001, 3.0, True), "granularity": (0.001, 0.5, True)},
    "peak-hopper": {
        TIMER_FLOOR: (0.001, 3.0, True),
        "f": (2.0, 1000.0, True),
        "b_max": (0.05, 4.0, True),
    },
    "quic": {
        TIMER_FLOOR: (0.001, 3.0, True),
        "max_ack_delay": (0.001, 0.5, True),
        "granularity": (0.001, 0.5, True),
    },
    "fixed-share": {
        "min_rto": (0.001, 3.0, True),
        "eta": (0.1, 20.0, True),
        "alpha": (0.001, 0.5, True),
    },
    "ca-rto": {"min_rto": (0.001, 3.0, True), "granularity": (0.001, 0.5, True)},
    "regression": {
        "min_rto": (0.001, 3.0, True),
        "k": (0.5, 16.0, True),
        "under_penalty": (0.0005, 0.2, True),
    },
    # Its own target is a knob, not the user's target: the timer's expiries are not all bad
    # timeouts (the timer restarts at each ACK), so the best α for a bad-timeout target differs.
    "conformal": {
        "min_rto": (0.001, 3.0, True),
        "target": (0.001, 0.2, True),
        "eta": (0.005, 0.5, True),
    },
    "quantile-experts": {
        "min_rto": (0.001, 3.0, True),
        "target": (0.001, 0.2, True),
        "eta": (0.5, 200.0, True),
        "alpha": (0.0001, 0.2, True),
    },
    "last": {TIMER_FLOOR: (0.001, 3.0, True), "multiplier": (1.0, 8.0, True)},
    "constant": {"rto": (0.001, 10.0, True)},
}

#: Estimators tuned when none are named: CA-RTO is left out (in a replay it is RFC 6298).
DEFAULT_ESTIMATORS = [n for n in NAMES if n != "ca-rto"]

#: Columns of the full table besides the parameters (docs/metrics.md defines the metrics).
METRIC_COLUMNS = [
    "samples",
    "bad_timeouts",
    "bad_timeout_rate",
    "wait_mean_s",
    "wait_p99_s",
    "mae_s",
    "mape",
    "lost_segments",
    "lost_wait_mean_s",
]


class TuneError(ValueError):
    """A bad argument to :func:`tune`; the message names it (the CLI prints it as one line)."""


# --------------------------------------------------------------------------- inputs


@dataclass
class Trace:
    """The samples of one input as independent streams (a series: one; a capture: one per
    connection with a path-RTT series), with what the timer replay needs per stream."""

    name: str
    kind: str
    times_ns: np.ndarray
    rtts_ns: np.ndarray
    starts: list[int]
    timestamps: list[bool]
    #: Really lost segments: (stream index, ns when their sender's timer started).
    losses: list[tuple[int, int]] = field(default_factory=list)
    #: What the reader doubted without refusing (an implausible median RTT for the unit read).
    warnings: list[str] = field(default_factory=list)

    @property
    def scored(self) -> int:
        """Scored samples: all but the first of each stream (docs/metrics.md)."""
        return len(self.rtts_ns) - len(self.starts)

    @property
    def ends(self) -> list[int]:
        return [*self.starts[1:], len(self.rtts_ns)]


def load_trace(path: str | Path, unit: str | None = None, columns: Any = None) -> Trace:
    """A series or capture as :func:`rttlab.evaluate` reads it: a capture's path-RTT samples per
    connection, timestamps per connection (Karn does not bite when both sides negotiated them),
    and the segments it shows were really lost. ``unit`` and ``columns``: of a series, as
    :func:`rttlab.read_series` takes them."""
    from rttlab.trace.capture import is_capture

    path = Path(path)
    if not is_capture(path):
        from rttlab.trace.series import read_series_quietly

        series = read_series_quietly(path, unit, columns)
        return Trace(
            str(path),
            "series",
            series.time_ns,
            series.rtt_ns,
            [0],
            [False],
            warnings=list(series.warnings),
        )
    from rttlab import InputError
    from rttlab.trace.capture import path_samples, read_capture
    from rttlab.trace.evaluate import lost_segments

    if unit is not None:
        raise TuneError("--unit applies to RTT series; a capture's times are its own")
    if columns is not None:
        raise TuneError("--columns applies to RTT series; a capture's columns are its own")
    samples, connections, retransmissions = read_capture(path, retransmissions=True)
    series = path_samples(samples, connections)
    if series.empty:
        raise InputError(
            f"{path}: no connection has a path-RTT series to replay (see `rttlab flows {path}`)"
        )
    conn = series["conn"].to_numpy()
    starts = np.flatnonzero(np.r_[True, conn[1:] != conn[:-1]])
    times_ns = np.rint(series["time"].to_numpy() * 1e9).astype(np.uint64)
    rtts_ns = np.maximum(np.rint(series["rtt"].to_numpy() * 1e9), 1).astype(np.uint64)
    both = dict(
        zip(
            connections["conn"].tolist(),
            (connections["ts_fwd"].to_numpy() & connections["ts_rev"].to_numpy()).tolist(),
        )
    )
    timestamps = [bool(both[int(c)]) for c in conn[starts].tolist()]
    lost = lost_segments(retransmissions, connections)
    stream_of = {int(conn[a]): k for k, a in enumerate(starts)}
    losses = sorted(
        (stream_of[c], int(np.rint(t * 1e9)))
        for c, t in zip(lost["conn"].tolist(), lost["timer_start"].to_numpy())
        if c in stream_of
    )
    return Trace(str(path), "capture", times_ns, rtts_ns, starts.tolist(), timestamps, losses)


def combine(traces: list[Trace]) -> Trace:
    """Several traces as one set of independent streams (scores pool every scored sample)."""
    if len(traces) == 1:
        return traces[0]
    starts, timestamps, losses = [], [], []
    offset, streams = 0, 0
    for t in traces:
        starts += [offset + s for s in t.starts]
        timestamps += t.timestamps
        losses += [(streams + k, ns) for k, ns in t.losses]
        offset += len(t.rtts_ns)
        streams += len(t.starts)
    return Trace(
        " + ".join(t.name for t in traces),
        "combined",
        np.concatenate([t.times_ns for t in traces]),
        np.concatenate([t.rtts_ns for t in traces]),
        starts,
        timestamps,
        losses,
    )


def _between(trace: Trace, lo: float | None, hi: float | None, label: str) -> Trace | None:
    """The samples of ``trace`` that arrived in [lo, hi) (None: unbounded), every stream cut
    there a stream of its own (a fresh estimator and timer); None when no stream keeps 2."""
    times, rtts, starts, ts, losses = [], [], [], [], []
    n = 0
    for k, (a, b) in enumerate(zip(trace.starts, trace.ends)):
        t = trace.times_ns[a:b]
        keep = np.ones(len(t), bool)
        if lo is not None:
            keep &= t >= lo
        if hi is not None:
            keep &= t < hi
        if keep.sum() < 2:
            continue
        starts.append(n)
        ts.append(trace.timestamps[k])
        times.append(t[keep])
        rtts.append(trace.rtts_ns[a:b][keep])
        losses += [
            (len(starts) - 1, ns)
            for s, ns in trace.losses
            if s == k and (lo is None or ns >= lo) and (hi is None or ns < hi)
        ]
        n += int(keep.sum())
    if not starts:
        return None
    return Trace(label, trace.kind, np.concatenate(times), np.concatenate(rtts), starts, ts, losses)


def split_blocks(trace: Trace, k: int) -> list[Trace]:
    """``k`` contiguous blocks of ``trace`` by time: block i holds the samples that arrived
    between the (i/k)-th and ((i+1)/k)-th quantiles of the arrival times, each stream cut at the
    block's edges (time-ordered cross-validation; docs/tuning.md)."""
    if trace.scored < k * MIN_SAMPLES:
        raise TuneError(
            f"--folds {k}: {trace.name} has {trace.scored:,} scored samples; {k} folds need at least {k * MIN_SAMPLES:,} ({MIN_SAMPLES} per fold)"
        )
    cuts = np.quantile(trace.times_ns.astype(np.float64), np.arange(1, k) / k)
    edges = [None, *cuts.tolist(), None]
    blocks = []
    for i in range(k):
        b = _between(trace, edges[i], edges[i + 1], f"{trace.name} [block {i + 1}/{k}]")
        if b is None or b.scored < MIN_SAMPLES:
            raise TuneError(
                f"--folds {k}: block {i + 1} of {trace.name} has {0 if b is None else b.scored} scored samples (at least {MIN_SAMPLES}); give fewer folds"
            )
        blocks.append(b)
    return blocks


def split_time(trace: Trace, fraction: float = 0.5) -> tuple[Trace, Trace]:
    """(before, after) the time by which ``fraction`` of the samples had arrived: every stream
    is cut there, each part of it a stream of its own (a fresh estimator and timer)."""
    cut = float(np.quantile(trace.times_ns.astype(np.float64), fraction))
    parts: list[Trace] = []
    for lo, hi, which, share in (
        (None, cut, "first", fraction),
        (cut, None, "second", 1 - fraction),
    ):
        part = _between(trace, lo, hi, f"{trace.name} ({which} {share:.0%} by time)")
        if part is None:
            raise TuneError(
                f"{trace.name}: too few samples to split by time (each part needs a stream of 2 samples or more)"
            )
        parts.append(part)
    return parts[0], parts[1]


# --------------------------------------------------------------------------- search space


@dataclass(frozen=True)
class Dim:
    """One searched parameter: ``key`` is the estimator's parameter (or :data:`TIMER_FLOOR`)."""

    key: str
    kind: str  # duration | float | int
    lo: float
    hi: float
    log: bool
    #: A clock the value lives on (seconds; 0: none): every value is rounded up to whole steps,
    #: e.g. Linux's rto_min to whole jiffies (see :func:`on_clock`).
    step: float = 0.0

    def values(self, n: int) -> np.ndarray:
        grid = np.geomspace(self.lo, self.hi, n) if self.log else np.linspace(self.lo, self.hi, n)
        return np.unique([on_clock(round_value(self.kind, v), self.step) for v in grid])


def on_clock(x: float, step: float) -> float:
    """``x`` rounded up to whole ``step`` (no-op for step 0): Linux keeps ``icsk_rto_min`` in
    jiffies, ``usecs_to_jiffies(sysctl_tcp_rto_min_us)`` in ``tcp_init_sock()`` (net/ipv4/tcp.c),
    and usecs_to_jiffies rounds up (include/linux/jiffies.h). FreeBSD keeps ``tcp_rexmit_min``
    and ``tcp_rexmit_slop`` in ticks, ``sysctl_msec_to_ticks()`` truncating (sys/kern/kern_sysctl.c):
    a value already on the clock is kept exactly either way."""
    if step <= 0:
        return x
    return float(round(math.ceil(x / step - 1e-9) * step, 9))


def _registry(name: str) -> dict[str, dict[str, Any]]:
    entry = next((e for e in catalog() if e["name"] == name), None)
    if entry is None:
        raise TuneError(f"--estimators: unknown estimator '{name}' (known: {', '.join(NAMES)})")
    return {p["name"]: p for p in entry["params"]}


def registry_bounds(p: dict[str, Any]) -> tuple[float, float]:
    """A parameter's declared range (``0s..60s``, ``0..100``; the registry, src/params.rs)."""
    lo, hi = p["range"].split("..")
    unit = "s" if p["kind"] == "duration" else ""
    return float(lo.removesuffix(unit)), float(hi.removesuffix(unit).replace("inf", "Infinity"))


def parse_quantity(kind: str, text: str, what: str) -> float:
    if kind == "duration":
        from rttlab import _core

        ns = _core.parse_duration(text.strip())
        if ns is None:
            raise TuneError(f"{what}: cannot read '{text}' as a duration such as 10ms or 1s")
        return ns / 1e9
    try:
        return float(text)
    except ValueError:
        raise TuneError(f"{what}: cannot read '{text}' as a number") from None


def space(
    name: str, fixed: dict[str, str] | None = None, ranges: dict[str, str] | None = None
) -> list[Dim]:
    """The searched parameters of one estimator: :data:`TUNABLE` clipped to the registry's
    bounds, less those ``fixed`` by ``-p``, with ``ranges`` (``key → "lo:hi"``) overriding."""
    fixed, ranges = fixed or {}, ranges or {}
    declared = _registry(name)
    for key in ranges:
        if key in fixed:
            raise TuneError(
                f"--param {name}.{key} and --range {name}.{key} both given: fix the parameter or search it, not both"
            )
        if key != TIMER_FLOOR and key not in TUNABLE.get(name, {}) and key not in declared:
            raise TuneError(
                f"--range {name}.{key}: {name} has no parameter '{key}' (known: {', '.join(declared)})"
            )
    dims = []
    searched = dict(TUNABLE.get(name, {}))
    for key, text in ranges.items():
        if text == "off":  # not searched: held at its default (e.g. --stack quic's timer floor)
            searched.pop(key, None)
            continue
        kind = "duration" if key == TIMER_FLOOR else declared[key]["kind"]
        if kind not in ("duration", "float", "int"):
            raise TuneError(
                f"--range {name}.{key}: a {kind} parameter cannot be searched over a range; fix it with --param"
            )
        lo_text, sep, hi_text = text.partition(":")
        if not sep:
            raise TuneError(
                f"--range {name}.{key}={text}: expected LOW:HIGH, e.g. {name}.{key}=10ms:1s"
            )
        lo, hi = (
            parse_quantity(kind, lo_text, f"--range {name}.{key}"),
            parse_quantity(kind, hi_text, f"--range {name}.{key}"),
        )
        if not lo < hi:
            raise TuneError(f"--range {name}.{key}={text}: LOW must be below HIGH")
        searched[key] = (lo, hi, lo > 0 and hi / lo >= 10)
    for key, (lo, hi, log) in searched.items():
        if key in fixed or ranges.get(key) == "off":
            continue
        if key == TIMER_FLOOR:
            dims.append(Dim(key, "duration", lo, hi, log))
            continue
        p = declared[key]
        rlo, rhi = registry_bounds(p)
        if key in ranges and (lo < rlo or hi > rhi):
            raise TuneError(
                f"--range {name}.{key}={ranges[key]}: outside the accepted range {p['range']}"
            )
        # Linux or FreeBSD with its tick rate given (-p linux.hz=…, --stack linux|freebsd): the
        # sysctls on the kernel's clock, whole jiffies or ticks (on_clock), at least one.
        on_ticks = {"linux": ("rto_min",), "freebsd": ("rexmit_min", "rexmit_slop")}
        step = 1.0 / float(fixed["hz"]) if key in on_ticks.get(name, ()) and "hz" in fixed else 0.0
        dims.append(Dim(key, p["kind"], max(lo, rlo, step), min(hi, rhi), log, step))
    if not dims:
        raise TuneError(
            f"--estimators: {name} has no tunable parameter left (fixed by --param: {', '.join(sorted(fixed)) or 'none'}); drop it or give it a --range"
        )
    return dims


def round_value(kind: str, x: float) -> float:
    """Three significant digits (whole numbers for ints): the values a user would write, and
    exactly the values replayed, so the recommendation reproduces its numbers."""
    if kind == "int":
        return float(round(x))
    if x == 0:
        return 0.0
    return float(f"{x:.3g}")


def fmt_value(kind: str, x: float) -> str:
    """A parameter value as the command line writes it: ``180ms``, ``1.5s``, ``250us``, ``4``."""
    if kind == "int":
        return str(int(x))
    if kind != "duration":
        return f"{x:g}"
    if x == 0:
        return "0"
    if x >= 1:
        return f"{x:g}s"
    if x >= 1e-3:
        return f"{float(f'{x * 1e3:.6g}'):g}ms"
    return f"{float(f'{x * 1e6:.6g}'):g}us"


# --------------------------------------------------------------------------- replaying points


@dataclass
class Settings:
    target: float = 0.01
    budget: int = 300
    seed: int = 0
    threads: int | None = None
    #: Recommend only points meeting the target at this one-sided confidence (see :func:`recommend`).
    confidence: float | None = None


def _spec_of(
    name: str, point: dict[str, float], dims: dict[str, Dim], fixed: dict[str, str]
) -> tuple[Spec, float]:
    params = dict(fixed)
    for key, v in point.items():
        if key != TIMER_FLOOR:
            params[key] = fmt_value(dims[key].kind, v)
    return spec(name, **params), point.get(TIMER_FLOOR, 0.0)


def replay_specs(
    trace: Trace,
    made: list[tuple[Spec, float]],
    threads: int | None = None,
    per_stream: bool = False,
) -> list[tuple[dict[str, Any], list[dict[str, Any]] | None]]:
    """Each (spec, timer floor) replayed on ``trace``: its row (docs/metrics.md) and, with
    ``per_stream``, each stream's own row, in order. Specs with the same floor go to the core
    together (one replay call, one spec each)."""
    groups: dict[float, list[int]] = {}
    for i, (_, floor) in enumerate(made):
        groups.setdefault(floor, []).append(i)
    out: list[Any] = [None] * len(made)

    def run(floor: float, idx: list[int], threads: int | None) -> None:
        result = score(
            trace.times_ns,
            trace.rtts_ns,
            [made[i][0] for i in idx],
            starts=trace.starts,
            timestamps=trace.timestamps,
            losses=trace.losses or None,
            min_rto=floor or None,
            threads=threads,
            per_stream=per_stream,
        )
        for j, (i, r) in enumerate(zip(idx, result.rows)):
            out[i] = (r, [s[j] for s in result.streams] if per_stream else None)

    cores = threads or os.cpu_count() or 1
    from concurrent.futures import ThreadPoolExecutor

    # The core releases the GIL, so the replays run in worker threads while this thread waits
    # where Ctrl-C reaches it at once (a KeyboardInterrupt does not wait for a long core call;
    # the CLI then exits without joining the workers). Many small groups (a searched timer
    # floor: one spec each) replay side by side, one thread each.
    side_by_side = len(groups) > 1 and cores > 1
    pool = ThreadPoolExecutor(cores if side_by_side else 1)
    try:
        futures = [
            pool.submit(run, floor, idx, 1 if side_by_side else threads)
            for floor, idx in groups.items()
        ]
        for f in futures:
            f.result()
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    return out


def replay_points(
    trace: Trace,
    name: str,
    points: list[dict[str, float]],
    dims: list[Dim],
    fixed: dict[str, str],
    threads: int | None = None,
) -> list[dict[str, Any]]:
    """One row per point (parameters as given, the metrics of docs/metrics.md), in order."""
    by_key = {d.key: d for d in dims}
    made = [_spec_of(name, p, by_key, fixed) for p in points]
    return [{k: r[k] for k in METRIC_COLUMNS} for r, _ in replay_specs(trace, made, threads)]


@dataclass
class Searched:
    """Every point one estimator was replayed at, with its metrics."""

    estimator: str
    dims: list[Dim]
    fixed: dict[str, str]
    method: str
    points: list[dict[str, float]]
    rows: list[dict[str, Any]]


#: How the points of a search are replayed: ``replay(trace, name, points, dims, fixed, threads)``
#: → one row of :data:`METRIC_COLUMNS` per point, in order (a point ``{}`` with no ``dims``: the
#: estimator at its defaults). :func:`replay_points` replays them here; a tuning run stored as a
#: sweep (:mod:`rttlab.experiments.tune_job`) looks them up in its store first and replays only
#: the missing ones, on Dask when they are many.
Replay = Callable[
    [Trace, str, list[dict[str, float]], list[Dim], dict[str, str], "int | None"],
    list[dict[str, Any]],
]


def search(
    trace: Trace,
    name: str,
    settings: Settings,
    fixed: dict[str, str] | None = None,
    ranges: dict[str, str] | None = None,
    replay: Replay | None = None,
) -> Searched:
    """Grid (1–2 parameters) or differential evolution (3+) over one estimator's space."""
    replay = replay or replay_points
    fixed = dict(fixed or {})
    dims = space(name, fixed, ranges)
    seen: dict[tuple, dict[str, Any]] = {}
    order: list[tuple] = []

    def run(points: list[dict[str, float]]) -> list[dict[str, Any]]:
        keys = [tuple(p[d.key] for d in dims) for p in points]
        new = list(dict.fromkeys(k for k in keys if k not in seen))
        if new:
            for k, row in zip(
                new,
                replay(
                    trace,
                    name,
                    [dict(zip((d.key for d in dims), k)) for k in new],
                    dims,
                    fixed,
                    settings.threads,
                ),
            ):
                seen[k] = row
                order.append(k)
        return [seen[k] for k in keys]

    if len(dims) <= 2:
        method = "grid"
        n = settings.budget if len(dims) == 1 else max(2, int(math.sqrt(settings.budget)))
        axes = [d.values(n) for d in dims]
        mesh = np.meshgrid(*axes, indexing="ij")
        run([{d.key: float(m.flat[i]) for d, m in zip(dims, mesh)} for i in range(mesh[0].size)])
    else:
        method = "differential-evolution"
        _evolve(dims, run, settings)
    points = [dict(zip((d.key for d in dims), k)) for k in order]
    return Searched(name, dims, fixed, method, points, [seen[k] for k in order])


def _evolve(dims: list[Dim], run, settings: Settings) -> None:
    """SciPy's differential evolution on min log W + penalty·(bad − target)⁺/target: feasible
    points compete on W alone, infeasible ones lose by how far they miss the target. Searched
    in log space where the range spans decades; every candidate rounded as :func:`round_value`."""
    from scipy.optimize import differential_evolution

    def to_point(x: np.ndarray) -> dict[str, float]:
        return {d.key: round_value(d.kind, 10**v if d.log else v) for d, v in zip(dims, x)}

    def objective(xs: np.ndarray) -> np.ndarray:
        rows = run([to_point(xs[:, j]) for j in range(xs.shape[1])])
        out = []
        for r in rows:
            bad, w = r["bad_timeout_rate"], r["wait_mean_s"]
            if bad is None or w is None:
                out.append(1e9)
                continue
            out.append(
                math.log10(max(w, 1e-9)) + 100.0 * max(0.0, bad - settings.target) / settings.target
            )
        return np.array(out)

    bounds = [(math.log10(d.lo), math.log10(d.hi)) if d.log else (d.lo, d.hi) for d in dims]
    popsize = 15  # SciPy's default: a population of 15 × (number of parameters)
    generations = max(1, settings.budget // (popsize * len(dims)) - 1)
    differential_evolution(
        objective,
        bounds,
        popsize=popsize,
        maxiter=generations,
        init="sobol",
        seed=settings.seed,
        polish=False,
        vectorized=True,
        updating="deferred",
        tol=0.0,
    )


# --------------------------------------------------------------------------- fronts, recommendation


def pareto_mask(bad: np.ndarray, wait: np.ndarray) -> np.ndarray:
    """Points no other point beats on both bad-timeout rate and W (lower is better; equal on
    one and lower on the other beats). NaN points are never on the front."""
    ok = ~(np.isnan(bad) | np.isnan(wait))
    order = np.lexsort((wait, bad))
    front = np.zeros(len(bad), bool)
    best_w = math.inf
    last_bad = None
    for i in order:
        if not ok[i]:
            continue
        # Sorted by bad then W: a point is on the front when its W is below every W seen at a
        # strictly lower bad rate, and it is the lowest W at its own bad rate.
        if wait[i] < best_w:
            front[i] = True
            best_w = wait[i]
            last_bad = bad[i]
        elif bad[i] == last_bad and wait[i] == best_w:
            front[i] = True  # an exact tie with a front point
    return front


def sentence(estimator: str, params: dict[str, str], floor: float) -> str:
    """``rfc6298 min_rto=180ms k=4 granularity=1ms``: the parameters a config takes."""
    words = [estimator, *(f"{k}={v}" for k, v in params.items())]
    if floor:
        words.append(f"with the timer floor at {fmt_value('duration', floor)} (--min-rto)")
    return " ".join(words)


def command(traces: list[str], estimator: str, params: dict[str, str], floor: float) -> str:
    """The ``rttlab evaluate`` call that reproduces one point's numbers on one trace (``TRACE``
    for several: evaluate takes one input, and tune pools them)."""
    words = [
        "rttlab",
        "evaluate",
        traces[0] if len(traces) == 1 else "TRACE",
        "-e",
        estimator,
        *(f"-p {estimator}.{k}={v}" for k, v in params.items()),
    ]
    if floor:
        words += ["--min-rto", fmt_value("duration", floor)]
    return " ".join(words)


def _table(searched: list[Searched], defaults: list[dict[str, Any]]) -> pd.DataFrame:
    import pandas as pd

    records = []
    for s in searched:
        kinds = {d.key: d.kind for d in s.dims}
        for p, r in zip(s.points, s.rows):
            params = {
                **s.fixed,
                **{k: fmt_value(kinds[k], v) for k, v in p.items() if k != TIMER_FLOOR},
            }
            floor = p.get(TIMER_FLOOR, 0.0)
            records.append(
                {
                    "estimator": s.estimator,
                    "setting": sentence(s.estimator, params, floor),
                    "default": False,
                    "params": params,
                    "timer_floor_s": floor,
                    **{f"param.{k}": v for k, v in p.items()},
                    **r,
                }
            )
    records += defaults
    t = pd.DataFrame(records)
    for c in ("bad_timeout_rate", "wait_mean_s", "wait_p99_s", "mae_s", "mape", "lost_wait_mean_s"):
        t[c] = t[c].astype("float64")
    bad, wait = t["bad_timeout_rate"].to_numpy(), t["wait_mean_s"].to_numpy()
    t["joint_front"] = pareto_mask(bad, wait)
    t["estimator_front"] = False
    for idx in t.groupby("estimator").groups.values():
        sub = t.loc[idx]
        t.loc[idx, "estimator_front"] = pareto_mask(
            sub["bad_timeout_rate"].to_numpy(), sub["wait_mean_s"].to_numpy()
        )
    return t


def upper_bound(bad: np.ndarray, n: np.ndarray, confidence: float) -> np.ndarray:
    """One-sided Clopper–Pearson upper bound of a rate from ``bad`` events in ``n`` trials:
    the Beta(k + 1, n − k) quantile at ``confidence`` (1 when k = n)."""
    from scipy.stats import beta

    bad, n = np.asarray(bad, dtype=np.float64), np.asarray(n, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(bad >= n, 1.0, beta.ppf(confidence, bad + 1, np.maximum(n - bad, 1e-300)))


def recommend(
    table: pd.DataFrame, target: float, confidence: float | None = None
) -> dict[str, Any] | None:
    """Among the points whose bad-timeout rate meets ``target``, the one with the smallest W
    (ties: lower bad rate, then lower forecast error). None when no point meets it. With
    ``confidence`` (e.g. 0.95), a point must meet the target at the one-sided Clopper–Pearson
    upper bound of its rate, not just at the rate itself: a margin that shrinks as the
    tuning data grows, against picking a point that meets the target only by luck."""
    if confidence is None:
        ok = table[table["bad_timeout_rate"] <= target + 1e-12]
    else:
        ok = table[
            upper_bound(table["bad_timeouts"].to_numpy(), table["samples"].to_numpy(), confidence)
            <= target + 1e-12
        ]
    if ok.empty:
        return None
    best = (
        ok.assign(_mae=ok["mae_s"].fillna(math.inf))
        .sort_values(["wait_mean_s", "bad_timeout_rate", "_mae"], kind="stable")
        .iloc[0]
    )
    return {
        "estimator": best["estimator"],
        "params": dict(best["params"]),
        "timer_floor_s": float(best["timer_floor_s"]),
        "setting": best["setting"],
        **{
            k: (
                None
                if isinstance(best[k], float) and math.isnan(best[k])
                else best[k].item()
                if hasattr(best[k], "item")
                else best[k]
            )
            for k in METRIC_COLUMNS
        },
    }


def _defaults(
    trace: Trace,
    names: list[str],
    fixed: dict[str, dict[str, str]],
    threads: int | None,
    replay: Replay | None = None,
) -> list[dict[str, Any]]:
    """Each estimator at its defaults (less what ``-p`` fixes): the point ``{}`` of no dimension."""
    replay = replay or replay_points
    specs = [spec(n, **fixed.get(n, {})) for n in names]
    rows = [replay(trace, n, [{}], [], dict(fixed.get(n, {})), threads)[0] for n in names]
    out = []
    for n, s, r in zip(names, specs, rows):
        out.append(
            {
                "estimator": n,
                "setting": sentence(n, dict(s.params), 0.0) + " (defaults)",
                "default": True,
                "params": dict(s.params),
                "timer_floor_s": 0.0,
                **{k: r[k] for k in METRIC_COLUMNS},
            }
        )
    return out


def check_target(target: float) -> None:
    if not (0 < target < 0.5):
        raise TuneError(
            f"--target-bad-timeouts: {target:g} is outside (0, 50%): give a rate such as 1% or 0.01"
        )


def tune_trace(
    trace: Trace,
    names: list[str],
    settings: Settings,
    fixed: dict[str, dict[str, str]] | None = None,
    ranges: dict[str, dict[str, str]] | None = None,
    replay: Replay | None = None,
    tick: Callable[[str], None] | None = None,
) -> tuple[pd.DataFrame, dict[str, str], dict[str, Any] | None]:
    """Search every estimator on one (combined) trace: (table, methods, recommendation).
    ``tick``: called with the estimator's name after each estimator's search (progress)."""
    fixed, ranges = fixed or {}, ranges or {}
    searched = []
    for n in names:
        searched.append(search(trace, n, settings, fixed.get(n), ranges.get(n), replay))
        if tick:
            tick(n)
    table = _table(searched, _defaults(trace, names, fixed, settings.threads, replay))
    return (
        table,
        {s.estimator: s.method for s in searched},
        recommend(table, settings.target, settings.confidence),
    )
