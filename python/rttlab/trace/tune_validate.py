"""Held-out validation of ``rttlab tune`` (``--validate``): is the recommendation still good on
traffic it was not chosen on?

- Several traces: leave one trace out. Each trace in turn is held out, the whole search runs on
  the others, and that fold's recommendation is replayed on the held-out trace.
- One trace: split by time (:func:`rttlab.trace.tune.split_time`): tuned on the first half, scored
  on the second.

The held-out bad-timeout rate and W pool every fold; the verdict does not: one failing fold makes
it "does not hold in N of M folds". Their 95 % intervals are a percentile
bootstrap over units resampled with replacement: connections when the held-out data has at least
:data:`MIN_UNITS` of them, else contiguous segments of the stream (a block bootstrap: RTTs are
autocorrelated, so single samples are not independent). Definitions: docs/tuning.md.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rttlab.trace.estimators import spec
from rttlab.trace.replay import score
from rttlab.trace.tune_search import (
    MIN_SAMPLES,
    Replay,
    Settings,
    Trace,
    TuneError,
    combine,
    needed_samples,
    split_time,
    tune_trace,
)

#: Fewest connections to bootstrap over; below it, segments of the streams are resampled.
MIN_UNITS = 10
#: Segments a stream set is cut into when resampled by segment (at least 10 samples each).
SEGMENTS = 40
#: Bootstrap replicates.
REPLICATES = 2000


def units(
    trace: Trace, name: str, params: dict[str, str], floor: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    """Replay one setting on ``trace`` sample by sample → per unit (scored samples, bad
    timeouts, sum of W) and what a unit is. A sample is a bad timeout when its timer expired at
    least once before its ACK (docs/metrics.md), so the sums add up to the pooled metrics."""
    s = spec(name, **params)
    result = score(
        trace.times_ns,
        trace.rtts_ns,
        [s],
        starts=trace.starts,
        timestamps=trace.timestamps,
        losses=trace.losses or None,
        min_rto=floor or None,
        trace=True,
    )
    tr = result.traces[s.label]
    bad = np.asarray(tr["expiries"]) > 0
    wait = np.asarray(tr["wait"], dtype=np.float64)
    pieces: list[tuple[int, int]] = []
    by_stream = len(trace.starts) >= MIN_UNITS
    for a, b in zip(trace.starts, trace.ends):
        a += 1  # the first sample of a stream is not scored
        if b <= a:
            continue
        if by_stream:
            pieces.append((a, b))
        else:
            length = max(10, math.ceil(trace.scored / SEGMENTS))
            pieces += [(x, min(x + length, b)) for x in range(a, b, length)]
    n = np.array([b - a for a, b in pieces], dtype=np.float64)
    nbad = np.array([bad[a:b].sum() for a, b in pieces], dtype=np.float64)
    wsum = np.array([wait[a:b].sum() for a, b in pieces], dtype=np.float64)
    return n, nbad, wsum, "connection" if by_stream else "segment"


def bootstrap(
    n: np.ndarray, bad: np.ndarray, wsum: np.ndarray, seed: int
) -> tuple[list[float], list[float]]:
    """95 % percentile intervals of the pooled bad-timeout rate and mean W. With no bad timeout
    at all every replicate is 0, so the rate's upper end is the rule of three instead (3/n: the
    one-sided 95 % bound for zero events in n trials)."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(n), size=(REPLICATES, len(n)))
    total = n[idx].sum(axis=1)
    rate = bad[idx].sum(axis=1) / total
    w = wsum[idx].sum(axis=1) / total
    ci_rate = [float(x) for x in np.percentile(rate, [2.5, 97.5])]
    if bad.sum() == 0:
        ci_rate[1] = 3.0 / float(n.sum())
    return ci_rate, [float(x) for x in np.percentile(w, [2.5, 97.5])]


def verdict(rate: float, interval: list[float], target: float, samples: int | None = None) -> str:
    """How a held-out rate reads against the target. Below :func:`needed_samples` held-out
    samples the data cannot tell a rate from the target, and the verdict says so."""
    if rate <= target:
        text = "holds"
    elif interval[0] <= target:
        text = "holds within its interval"
    else:
        return "does not hold"
    need = needed_samples(target)
    if samples is not None and samples < need:
        text += f" (too few samples to tell: {samples:,} of ≈{need:,})"
    return text


def validate_tuning(
    traces: list[Trace],
    names: list[str],
    settings: Settings,
    fixed: dict,
    ranges: dict,
    replay: Replay | None = None,
    racer: Any = None,
) -> dict[str, Any]:
    """Tune on part of the input, score on the rest; see the module's docstring. ``replay``: how
    each fold's search replays its points (:data:`rttlab.trace.tune_search.Replay`). ``racer``
    (``--search halving``, :class:`rttlab.trace.tune_race.Racer`): each part picks among its
    races' finalists by the sums over its cells instead of searching again; the defaults'
    held-out numbers are the held-out blocks' sums; with one trace the split is at a block edge."""
    if racer is not None:
        return _validate_raced(traces, names, settings, fixed, ranges, racer)
    if len(traces) >= 2:
        method = f"leave one trace out ({len(traces)} folds)"
        folds = [
            (combine([t for j, t in enumerate(traces) if j != i]), traces[i])
            for i in range(len(traces))
        ]
    else:
        method = "split by time: tuned on the first half, scored on the second"
        folds = [split_time(traces[0])]
    picks = []
    for train, test in folds:
        for part, what in ((train, "tuning part"), (test, "held-out part")):
            if part.scored < MIN_SAMPLES:
                raise TuneError(
                    f"--validate: the {what} {part.name} has {part.scored} scored samples; validation needs at least {MIN_SAMPLES} on each side"
                )
        picks.append(tune_trace(train, names, settings, fixed, ranges, replay)[2])

    def held_defaults(k: int, test: Trace) -> list[dict[str, Any]]:
        specs = [spec(e, **fixed.get(e, {})) for e in names]
        return score(
            test.times_ns,
            test.rtts_ns,
            specs,
            starts=test.starts,
            timestamps=test.timestamps,
            losses=test.losses or None,
        ).rows

    return _summarise(
        method, [(train.name, test) for train, test in folds], picks, held_defaults, names, settings
    )


def _validate_raced(traces, names, settings, fixed, ranges, racer) -> dict[str, Any]:
    from rttlab.trace.tune_race import metrics

    folds = racer.folds
    if len(traces) >= 2:
        method = f"leave one trace out ({len(traces)} folds)"
        parts = [
            (
                " + ".join(t.name for j, t in enumerate(traces) if j != x),
                traces[x],
                [c for c in range(len(racer.cells)) if c // folds == x],
            )
            for x in range(len(traces))
        ]
    else:
        half = folds // 2
        method = f"split by time at a block edge: tuned on the first {half} of {folds} blocks, scored on the other {folds - half}"
        test = combine(racer.blocks[0][half:])
        parts = [(f"{traces[0].name} (blocks 1–{half})", test, list(range(half, folds)))]
    picks = [racer.recommend(("validate", x), names, fixed, ranges) for x in range(len(parts))]

    def held_defaults(k: int, test: Trace) -> list[dict[str, Any]]:
        cells = parts[k][2]
        return [
            metrics(racer.race(e, fixed.get(e, {}), ranges.get(e, {})).default[cells].sum(axis=0))
            for e in names
        ]

    return _summarise(
        method, [(name, test) for name, test, _ in parts], picks, held_defaults, names, settings
    )


def _summarise(method, folds, picks, held_defaults, names, settings) -> dict[str, Any]:
    """Each part's pick replayed on its held-out data, pooled, with intervals (module docstring).
    ``folds``: (what it was tuned on, held-out trace); ``picks``: each part's recommendation;
    ``held_defaults(k, test)``: every estimator's default scored on part k's held-out data."""
    out_folds = []
    n_all, bad_all, w_all = [], [], []
    kinds = set()
    defaults: dict[str, list[float]] = {}  # estimator → [samples, bad timeouts, sum of W]
    for k, ((train_name, test), rec) in enumerate(zip(folds, picks)):
        fold: dict[str, Any] = {
            "tuned_on": train_name,
            "held_out": test.name,
            "samples": test.scored,
        }
        if rec is None:
            fold.update(
                recommendation=None,
                verdict="no recommendation: no point met the target on the tuning part",
            )
            out_folds.append(fold)
            continue
        n, nbad, wsum, kind = units(test, rec["estimator"], rec["params"], rec["timer_floor_s"])
        kinds.add(kind)
        rate, wait = nbad.sum() / n.sum(), wsum.sum() / n.sum()
        ci_bad, ci_w = bootstrap(n, nbad, wsum, settings.seed)
        fold.update(
            recommendation=rec["setting"],
            tuned_bad_timeout_rate=rec["bad_timeout_rate"],
            tuned_wait_mean_s=rec["wait_mean_s"],
            bad_timeout_rate=float(rate),
            bad_timeout_rate_ci=ci_bad,
            wait_mean_s=float(wait),
            wait_mean_s_ci=ci_w,
            verdict=verdict(rate, ci_bad, settings.target, test.scored),
        )
        out_folds.append(fold)
        n_all.append(n)
        bad_all.append(nbad)
        w_all.append(wsum)
        for e, r in zip(names, held_defaults(k, test)):
            acc = defaults.setdefault(e, [0.0, 0.0, 0.0])
            acc[0] += r["samples"]
            acc[1] += r["bad_timeouts"]
            acc[2] += (r["wait_mean_s"] or 0.0) * r["samples"]
    result: dict[str, Any] = {
        "method": method,
        "target_bad_timeout_rate": settings.target,
        "folds": out_folds,
        "warnings": [],
    }
    if not n_all:
        result["held_out"] = None
        result["verdict"] = "no recommendation on any fold"
        return result
    n, nbad, wsum = np.concatenate(n_all), np.concatenate(bad_all), np.concatenate(w_all)
    rate, wait = float(nbad.sum() / n.sum()), float(wsum.sum() / n.sum())
    ci_bad, ci_w = bootstrap(n, nbad, wsum, settings.seed)
    unit = (
        "connection"
        if kinds == {"connection"}
        else "segment"
        if kinds == {"segment"}
        else "connection or segment"
    )
    result["held_out"] = {
        "samples": int(n.sum()),
        "units": len(n),
        "unit": unit,
        "bad_timeout_rate": rate,
        "bad_timeout_rate_ci": ci_bad,
        "wait_mean_s": wait,
        "wait_mean_s_ci": ci_w,
    }
    result["verdict"] = verdict(rate, ci_bad, settings.target, int(n.sum()))
    # A failing fold is never pooled away: a long trace that holds would hide a short one that
    # does not (issue 38).
    failing = [f for f in out_folds if not f["verdict"].startswith("holds")]
    if failing:
        result["verdict"] = (
            f"does not hold in {len(failing)} of {len(out_folds)} folds (pooled: {result['verdict']})"
        )
    pooled = {
        e: {"bad_timeout_rate": v[1] / v[0], "wait_mean_s": v[2] / v[0]}
        for e, v in defaults.items()
        if v[0] > 0
    }
    result["defaults_held_out"] = pooled
    # The best default at the same bad-timeout rate: the smallest held-out W among defaults whose
    # held-out bad-timeout rate is no higher than the recommendation's.
    matched = [
        (v["wait_mean_s"], e) for e, v in pooled.items() if v["bad_timeout_rate"] <= rate + 1e-12
    ]
    if matched:
        w, e = min(matched)
        result["best_default"] = {
            "estimator": e,
            **pooled[e],
            "wait_ratio": wait / w if w > 0 else None,
        }
    else:
        e = min(pooled, key=lambda k: (pooled[k]["bad_timeout_rate"], pooled[k]["wait_mean_s"]))
        result["best_default"] = {
            "estimator": e,
            **pooled[e],
            "wait_ratio": None,
            "note": "no default reaches the recommendation's held-out bad-timeout rate; this is the default with the lowest",
        }
    need = needed_samples(settings.target)
    if n.sum() < need:
        result["warnings"].append(
            f"--validate: {int(n.sum()):,} held-out samples; a {settings.target:.2%} bad-timeout rate is known to ±50 % only from ≈{need:,} (95 % binomial interval), so the interval is wide"
        )
    if len(n) < MIN_UNITS:
        result["warnings"].append(
            f"--validate: only {len(n)} {unit}s to resample; the bootstrap interval is rough below {MIN_UNITS}"
        )
    return result
