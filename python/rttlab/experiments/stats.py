"""Summaries of replicated runs: mean, sample standard deviation and a Student-t confidence interval;
a percentile bootstrap interval (bounded by the values: for non-negative metrics over few inputs);
and paired differences from a baseline point (per seed or per input file).

For n runs of one parameter point with mean x̄ and sample standard deviation s (n − 1 in the
denominator), the two-sided interval at level L is x̄ ± t_{(1+L)/2, n−1} · s/√n — the usual
interval for the mean of independent replications with unknown variance (e.g. Jain, *The Art of
Computer Systems Performance Analysis*, 1991, §13.2). The source papers report 90 % intervals
over 24 runs (Nunes et al. 2011); the default here is 95 %. With one run the interval is undefined (NaN),
not zero.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any


def t_interval(values: Sequence[float], level: float = 0.95) -> dict[str, float]:
    """n, mean, std, and the interval's half width, low and high ends (NaN where undefined)."""
    from scipy import stats

    xs = [
        float(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))
    ]
    n = len(xs)
    if n == 0:
        return {
            "n": 0,
            "mean": math.nan,
            "std": math.nan,
            "half_width": math.nan,
            "ci_low": math.nan,
            "ci_high": math.nan,
        }
    mean = math.fsum(xs) / n
    if n == 1:
        return {
            "n": 1,
            "mean": mean,
            "std": math.nan,
            "half_width": math.nan,
            "ci_low": math.nan,
            "ci_high": math.nan,
        }
    std = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1))
    half = float(stats.t.ppf((1 + level) / 2, n - 1)) * std / math.sqrt(n)
    return {
        "n": n,
        "mean": mean,
        "std": std,
        "half_width": half,
        "ci_low": mean - half,
        "ci_high": mean + half,
    }


#: Metrics that cannot leave a range: Jain's index (1/n ≤ J ≤ 1, Jain, Chiu & Hawe 1984), a
#: link's utilisation and every rate. Their intervals stay inside it (:func:`bounded_interval`).
BOUNDS: dict[str, tuple[float, float]] = {
    "jain_index": (0.0, 1.0),
    "utilisation": (0.0, 1.0),
    "bad_timeout_rate": (0.0, 1.0),
    "under_prediction_rate": (0.0, 1.0),
}


def bounds_of(metric: str) -> tuple[float, float] | None:
    """A metric's range (:data:`BOUNDS`; a ``flows.`` or ``trace.`` metric by its column)."""
    return BOUNDS.get(metric.rsplit(".", 1)[-1])


def bounded_interval(
    values: Sequence[float], lo: float, hi: float, level: float = 0.95
) -> dict[str, float]:
    """:func:`t_interval` for a metric in [lo, hi], kept inside it (a t interval of three Jain
    indices near 1 reaches past 1). With every value strictly inside, the Student-t interval of
    the logit of (x − lo)/(hi − lo), mapped back: asymmetric, as the range makes the spread
    (``half_width`` NaN). With a value on a bound the logit is infinite, so the t interval is
    cut at the bound instead (``half_width`` NaN too). The mean is the values' own."""
    t = t_interval(values, level)
    if t["n"] < 2:
        return t
    xs = [
        float(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))
    ]
    span = hi - lo
    if all(lo < x < hi for x in xs):
        from scipy import stats

        n = len(xs)
        logits = [math.log((x - lo) / (hi - x)) for x in xs]
        m = math.fsum(logits) / n
        sd = math.sqrt(math.fsum((v - m) ** 2 for v in logits) / (n - 1))
        half = float(stats.t.ppf((1 + level) / 2, n - 1)) * sd / math.sqrt(n)
        low, high = (lo + span / (1 + math.exp(-v)) for v in (m - half, m + half))
        # The back-mapped interval is around the logit's mean; it must still hold the mean.
        low, high = min(low, t["mean"]), max(high, t["mean"])
    else:
        low, high = max(lo, t["ci_low"]), min(hi, t["ci_high"])
    return {**t, "half_width": math.nan, "ci_low": low, "ci_high": high}


def interval(values: Sequence[float], metric: str, level: float = 0.95) -> dict[str, float]:
    """The Student-t interval, kept inside the metric's range when it has one."""
    b = bounds_of(metric)
    return bounded_interval(values, *b, level) if b else t_interval(values, level)


def summarise(
    frame: Any, by: Sequence[str], metrics: Sequence[str], level: float = 0.95, bounded: bool = True
):
    """One row per distinct value of ``by`` (columns of ``frame``) and metric: the ``by`` values,
    ``metric``, ``n``, ``mean``, ``std``, ``half_width``, ``ci_low``, ``ci_high``, ``level``.
    A metric with a range (:data:`BOUNDS`) gets :func:`bounded_interval`; ``bounded=False`` for
    values that are not the metric itself (paired differences of it may be negative)."""
    import pandas as pd

    rows = []
    groups = frame.groupby(list(by), dropna=False, sort=True) if by else [((), frame)]
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        for m in metrics:
            rows.append(
                {
                    **dict(zip(by, key)),
                    "metric": m,
                    **(
                        interval(g[m].tolist(), m, level)
                        if bounded
                        else t_interval(g[m].tolist(), level)
                    ),
                    "level": level,
                }
            )
    return pd.DataFrame(
        rows,
        columns=[*by, "metric", "n", "mean", "std", "half_width", "ci_low", "ci_high", "level"],
    )


def bootstrap_interval(
    values: Sequence[float], level: float = 0.95, resamples: int = 10_000, seed: int = 0
) -> dict[str, float]:
    """n, mean, std and a percentile bootstrap interval of the mean (Efron & Tibshirani, *An
    Introduction to the Bootstrap*, 1993, §13.3): the (1 − L)/2 and (1 + L)/2 quantiles of the
    means of ``resamples`` resamples drawn with replacement (seeded: the same numbers every run).
    Its ends are means of the values themselves, so it never leaves their range — never below 0
    for a non-negative metric such as an MAE, where a Student-t interval over a few skewed values
    can be. With few values it is too narrow (it cannot see beyond them): for comparing two
    points use :func:`paired`. NaN where undefined (fewer than two values)."""
    import numpy as np

    xs = np.array(
        [float(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    )
    t = t_interval(xs.tolist(), level)
    if len(xs) < 2:
        return t
    means = (
        np.random.default_rng(seed).choice(xs, size=(resamples, len(xs)), replace=True).mean(axis=1)
    )
    lo, hi = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    return {**t, "half_width": math.nan, "ci_low": float(lo), "ci_high": float(hi)}


def summarise_bootstrap(frame: Any, by: Sequence[str], metrics: Sequence[str], level: float = 0.95):
    """:func:`summarise` with :func:`bootstrap_interval` in place of the Student-t interval."""
    import pandas as pd

    rows = []
    groups = frame.groupby(list(by), dropna=False, sort=True) if by else [((), frame)]
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        for m in metrics:
            rows.append(
                {
                    **dict(zip(by, key)),
                    "metric": m,
                    **bootstrap_interval(g[m].tolist(), level),
                    "level": level,
                }
            )
    return pd.DataFrame(
        rows,
        columns=[*by, "metric", "n", "mean", "std", "half_width", "ci_low", "ci_high", "level"],
    )


def _matches(value: Any, wanted: Any) -> bool:
    """A stored value equals a baseline's (given as text on the command line, or typed)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return wanted is None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return math.isclose(float(value), float(wanted), rel_tol=1e-9)
        except (TypeError, ValueError):
            return False
    return str(value) == str(wanted)


def paired(
    frame: Any,
    by: Sequence[str],
    metrics: Sequence[str],
    baseline: dict[str, Any],
    pair_on: Sequence[str],
    level: float = 0.95,
):
    """Paired differences from a baseline point: for each point of ``by`` other than the
    baseline, the runs of the point and of its reference — the baseline's values for the keys
    ``baseline`` names, the point's own for the other ``by`` keys the baseline's runs have (an
    estimator's own parameter, NULL on another estimator's runs, is not matched) — joined on
    ``pair_on`` (the seed, or an evaluate run's input file, plus whatever is pooled), and the
    Student-t interval of the per-pair difference point − reference (the paired t interval, e.g.
    Jain 1991 §13.4.1). Differences cancel what the pair shares (the trace, the random streams),
    so they show what the point changes where per-point intervals overlap. One row per point and
    metric: the ``by`` values, ``metric``, ``baseline`` (text), ``n`` (pairs), ``mean``, ``std``,
    ``half_width``, ``ci_low``, ``ci_high``, ``level``."""
    import pandas as pd

    by, pair_on = list(by), list(pair_on)
    base_mask = (
        frame.apply(lambda r: all(_matches(r[k], v) for k, v in baseline.items()), axis=1)
        if len(frame)
        else pd.Series([], dtype=bool)
    )
    base = frame[base_mask]
    label = ", ".join(f"{k}={v}" for k, v in baseline.items())
    rows = []
    if not len(base):
        return pd.DataFrame(
            rows,
            columns=[
                *by,
                "metric",
                "baseline",
                "n",
                "mean",
                "std",
                "half_width",
                "ci_low",
                "ci_high",
                "level",
            ],
        )
    matched_keys = [k for k in by if k not in baseline and base[k].notna().any()]
    for key, g in frame[~base_mask].groupby(by, dropna=False, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        point = dict(zip(by, key))
        ref = base
        for k in matched_keys:
            # A boolean mask even when ref is empty (an empty apply() is no mask: pandas reads it as columns).
            ref = ref[
                ref[k]
                .map(
                    lambda v, want=point[k]: (
                        _matches(v, want)
                        if not (isinstance(want, float) and math.isnan(want))
                        else v is None or (isinstance(v, float) and math.isnan(v))
                    )
                )
                .astype(bool)
            ]
            if not len(ref):
                break
        if not len(ref):
            continue
        joined = g[[*pair_on, *metrics]].merge(
            ref[[*pair_on, *metrics]], on=pair_on, suffixes=("", "_ref")
        )
        for m in metrics:
            diffs = (joined[m] - joined[f"{m}_ref"]).tolist()
            rows.append(
                {
                    **point,
                    "metric": m,
                    "baseline": label,
                    **t_interval(diffs, level),
                    "level": level,
                }
            )
    return pd.DataFrame(
        rows,
        columns=[
            *by,
            "metric",
            "baseline",
            "n",
            "mean",
            "std",
            "half_width",
            "ci_low",
            "ci_high",
            "level",
        ],
    )
