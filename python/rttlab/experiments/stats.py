"""Summaries of replicated runs: mean, sample standard deviation and a Student-t confidence interval.

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

    xs = [float(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    n = len(xs)
    if n == 0:
        return {"n": 0, "mean": math.nan, "std": math.nan, "half_width": math.nan, "ci_low": math.nan, "ci_high": math.nan}
    mean = math.fsum(xs) / n
    if n == 1:
        return {"n": 1, "mean": mean, "std": math.nan, "half_width": math.nan, "ci_low": math.nan, "ci_high": math.nan}
    std = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1))
    half = float(stats.t.ppf((1 + level) / 2, n - 1)) * std / math.sqrt(n)
    return {"n": n, "mean": mean, "std": std, "half_width": half, "ci_low": mean - half, "ci_high": mean + half}


def summarise(frame: Any, by: Sequence[str], metrics: Sequence[str], level: float = 0.95):
    """One row per distinct value of ``by`` (columns of ``frame``) and metric: the ``by`` values,
    ``metric``, ``n``, ``mean``, ``std``, ``half_width``, ``ci_low``, ``ci_high``, ``level``."""
    import pandas as pd

    rows = []
    groups = frame.groupby(list(by), dropna=False, sort=True) if by else [((), frame)]
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        for m in metrics:
            rows.append({**dict(zip(by, key)), "metric": m, **t_interval(g[m].tolist(), level), "level": level})
    return pd.DataFrame(rows, columns=[*by, "metric", "n", "mean", "std", "half_width", "ci_low", "ci_high", "level"])
