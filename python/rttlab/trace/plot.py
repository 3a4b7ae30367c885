"""Figures from replay results. Plots read results; they re-run nothing.

- :func:`replay_figure`: small multiples, one panel per estimator (shared axes), the RTT samples
  in grey beneath and the estimator's RTO in force above, in the estimator's fixed colour
  (:mod:`rttlab.palette`); lines break across idle gaps instead of bridging them.
- :func:`front_figure`: bad-timeout rate against mean wait W (log scale), one point per estimator,
  the Pareto front joined.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rttlab.palette import SAMPLE_GREY, colour
from rttlab.trace.labels import axis_label, sig

if TYPE_CHECKING:
    from rttlab.trace.replay import Scores

#: RFC 6298 §2.4's 1 s floor, drawn as a reference line in every panel.
ONE_SECOND = 1.0


def plain_log_ticks(axis: Any) -> None:
    """Tick labels of a log axis as plain numbers (0.2, 0.5, 1, 2), not 2×10⁻¹."""
    from matplotlib.ticker import FuncFormatter

    axis.set_major_formatter(FuncFormatter(lambda v, _: sig(v, 2)))
    axis.set_minor_formatter(
        FuncFormatter(lambda v, _: sig(v, 1) if sig(v, 1).lstrip("-0.")[:1] in ("2", "5") else "")
    )


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def gap_threshold(times_s: np.ndarray) -> float:
    """The silence after which two samples are not joined by a line: 10 × the median interval
    between samples, and at least 1 s (a sender idle that long has no RTT to show; our choice —
    no source defines "idle" for a figure)."""
    if len(times_s) < 2:
        return ONE_SECOND
    dt = np.diff(times_s)
    dt = dt[dt > 0]
    return max(ONE_SECOND, 10.0 * float(np.median(dt))) if len(dt) else ONE_SECOND


def drawn_indices(
    times_s: np.ndarray, max_points: int, gap: float
) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the samples to draw (every k-th, thinned to about ``max_points``, plus both ends
    of every gap) and, for each drawn index but the last, whether a gap follows it."""
    n = len(times_s)
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool)
    breaks = np.flatnonzero(np.diff(times_s) > gap)
    step = max(1, n // max_points)
    idx = np.unique(np.concatenate([np.arange(0, n, step), breaks, breaks + 1, [n - 1]]))
    gap_after = np.isin(idx[:-1], breaks) & (idx[1:] == idx[:-1] + 1)
    return idx, gap_after


def broken(x: np.ndarray, y: np.ndarray, gap_after: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``x``, ``y`` with a NaN inserted after every point a gap follows (matplotlib breaks a line
    at NaN)."""
    at = np.flatnonzero(gap_after) + 1
    return np.insert(x.astype(float), at, np.nan), np.insert(y.astype(float), at, np.nan)


#: Above this many samples a panel draws each pixel column's range (an envelope) instead of
#: the samples themselves: 20,000 dots over 1,400 columns is a solid blob (issue 42).
ENVELOPE_ABOVE = 20_000
#: Columns of the envelope: about the panel's width in pixels at 150 dpi.
ENVELOPE_COLUMNS = 1_400


def time_unit(span_s: float) -> tuple[str, float]:
    """The unit a time axis of ``span_s`` seconds reads best in, and seconds per unit: s up to
    2 min, min up to 2 h, h up to 2 days, then days."""
    for limit, name, scale in ((120, "s", 1.0), (7200, "min", 60.0), (172_800, "h", 3600.0)):
        if span_s <= limit:
            return name, scale
    return "days", 86_400.0


def envelope(
    times_s: np.ndarray, values: np.ndarray, columns: int, lo: float, hi: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(left edge of each column, min, max) of ``values`` over ``columns`` equal slices of
    [lo, hi]; a column with no sample is NaN, so the band breaks over a silence."""
    edges = np.linspace(lo, hi, columns + 1)
    col = np.clip(np.searchsorted(edges, times_s, side="right") - 1, 0, columns - 1)
    mins = np.full(columns, np.inf)
    maxs = np.full(columns, -np.inf)
    np.minimum.at(mins, col, values)
    np.maximum.at(maxs, col, values)
    empty = ~np.isfinite(mins)
    mins[empty] = np.nan
    maxs[empty] = np.nan
    return edges[:-1], mins, maxs


def replay_figure(scores: Scores, title: str = "", max_points: int = 20_000) -> Any:
    """The small multiples as a matplotlib Figure (``scores`` from a replay with ``trace=True``)."""
    if scores.traces is None:
        raise ValueError("plot_replay needs scores made with trace=True")
    plt = _pyplot()
    names = list(scores.traces)
    n = len(names)
    cols = 1 if n <= 3 else 2
    rows = -(-n // cols)
    fig, axes = plt.subplots(
        rows,
        cols,
        sharex=True,
        sharey=True,
        squeeze=False,
        figsize=(6.0 * cols if cols > 1 else 10.0, 1.9 * rows + 1.0),
        layout="constrained",
    )
    times = np.asarray(scores.times_s, dtype=float)
    gap = gap_threshold(times)
    unit, per = time_unit(float(times[-1] - times[0]) if len(times) else 0.0)
    banded = len(times) > min(max_points, ENVELOPE_ABOVE)
    lo, hi = (float(times[0]), float(times[-1])) if len(times) else (0.0, 1.0)
    if banded:
        cols_x, smin, smax = envelope(
            times, np.asarray(scores.rtts_s, dtype=float) * 1e3, ENVELOPE_COLUMNS, lo, hi
        )
    else:
        idx, gap_after = drawn_indices(times, max_points, gap)
        t = times[idx]
        samples_ms = np.asarray(scores.rtts_s, dtype=float)[idx] * 1e3
    for k, ax in enumerate(axes.flat):
        if k >= n:
            ax.set_visible(False)
            continue
        name = names[k]
        rto_all = np.asarray(scores.traces[name]["rto"], dtype=float) * 1e3
        if banded:
            # Each pixel column's range of samples and of the RTO in force: what the eye could
            # see of 10⁶ points, drawn in a bounded number of shapes.
            x = cols_x / per
            ax.fill_between(x, smin, smax, step="post", color=SAMPLE_GREY, lw=0, zorder=1)
            _, rmin, rmax = envelope(times, rto_all, ENVELOPE_COLUMNS, lo, hi)
            ax.fill_between(
                x, rmin, rmax, step="post", color=colour(name), alpha=0.85, lw=0.4, zorder=3
            )
        else:
            ax.plot(
                t / per,
                samples_ms,
                ".",
                color=SAMPLE_GREY,
                markersize=2.0,
                zorder=1,
                rasterized=len(t) > 5000,
            )
            x, y = broken(t / per, rto_all[idx], gap_after)
            # The RTO in force holds from one sample to the next: a step, not a slope.
            ax.plot(x, y, color=colour(name), lw=1.1, drawstyle="steps-post", zorder=3)
        ax.ticklabel_format(axis="x", style="plain", useOffset=False)
        ax.axhline(ONE_SECOND * 1e3, color="0.25", lw=0.7, ls="--", zorder=2)
        ax.set_yscale("log")
        plain_log_ticks(ax.yaxis)
        ax.set_title(name, color=colour(name), fontsize=9, loc="left", fontweight="bold")
        ax.grid(True, which="major", color="0.92", lw=0.6)
        if k // cols == rows - 1 or k + cols >= n:
            ax.set_xlabel(f"time ({unit})")
            ax.xaxis.set_tick_params(labelbottom=True)
        if k % cols == 0:
            ax.set_ylabel("RTT / RTO (ms)")
    note = (
        f"grey: RTT samples' range and colour: the RTO's range in each of {ENVELOPE_COLUMNS:,} time slices ({len(times):,} samples); "
        "dashed: 1 s (RFC 6298 floor); bands break over slices without a sample"
        if banded
        else f"grey dots: RTT samples; line: RTO in force; dashed: 1 s (RFC 6298 floor); lines break over silences > {sig(gap)} s"
    )
    fig.suptitle((title + "\n" if title else "") + note, fontsize=8 if title else 7.5)
    return fig


def plot_replay(
    scores: Scores, path: str | Path, title: str = "", max_points: int = 20_000
) -> None:
    """Write :func:`replay_figure` to ``path`` (.png, .svg or .pdf). Long traces are thinned to
    about ``max_points`` samples per panel for drawing (both ends of every gap kept)."""
    plt = _pyplot()
    fig = replay_figure(scores, title, max_points)
    fig.savefig(path, dpi=150)
    plt.close(fig)


def pareto(points: list[tuple[str, float, float]]) -> list[str]:
    """Names no other point beats on both coordinates (lower is better), in order of the first."""
    front = [
        (b, w, name)
        for name, b, w in points
        if not any(b2 <= b and w2 <= w and (b2 < b or w2 < w) for _, b2, w2 in points)
    ]
    return [name for _, _, name in sorted(front)]


def front_figure(rows: list[dict[str, Any]], title: str = "", ax: Any = None) -> Any:
    """Bad-timeout rate against mean wait W (log scale), one point per row (``estimator`` —
    any label —, ``bad_timeout_rate``, ``wait_mean_s``), in the estimator's colour and named
    beside it; the Pareto front (lower on both is better) joined by a line. Rows lacking either
    value are left out. Returns the Figure (drawn into ``ax`` when given)."""
    plt = _pyplot()
    if ax is None:
        fig, ax = plt.subplots(figsize=(6.4, 4.4), layout="constrained")
    else:
        fig = ax.figure
    pts = [
        (str(r["estimator"]), float(r["bad_timeout_rate"]), float(r["wait_mean_s"]))
        for r in rows
        if r.get("bad_timeout_rate") is not None
        and r.get("wait_mean_s") is not None
        and np.isfinite(r["bad_timeout_rate"])
        and np.isfinite(r["wait_mean_s"])
        and r["wait_mean_s"] > 0
    ]
    on_front = pareto(pts)
    by_name = {name: (b, w) for name, b, w in pts}
    if len(on_front) > 1:
        line = sorted(by_name[n] for n in on_front)
        ax.plot([w for _, w in line], [b * 100 for b, _ in line], color="0.35", lw=0.9, zorder=1)
    # Estimators that score the same (e.g. three at the 1 s floor) share one point and one label.
    same: dict[tuple[float, float], list[str]] = {}
    for name, b, w in pts:
        same.setdefault((b, w), []).append(name)
    for k, ((b, w), names) in enumerate(sorted(same.items(), key=lambda item: item[0][1])):
        front = names[0] in on_front
        ax.scatter(
            [w],
            [b * 100],
            s=46 if front else 26,
            color=colour(names[0]),
            marker="D" if front else "o",
            edgecolor="black" if front else "none",
            lw=0.6,
            zorder=3,
        )
        # Neighbours along W alternate above and below their point, so close labels do not overlap.
        ax.annotate(
            " = ".join(names),
            (w, b * 100),
            xytext=(5, 4 if k % 2 == 0 else -10),
            textcoords="offset points",
            fontsize=7,
            color=colour(names[0]),
        )
    ax.set_xscale("log")
    plain_log_ticks(ax.xaxis)
    ax.set_xlabel(axis_label("wait_mean_s") + ", log scale")
    ax.set_ylabel(axis_label("bad_timeout_rate"))
    ax.grid(True, which="both", color="0.92", lw=0.6)
    ax.set_title(
        (title + "\n" if title else "") + "◆ on the Pareto front: no other point is lower on both",
        fontsize=8,
    )
    return fig


def plot_front(rows: list[dict[str, Any]], path: str | Path, title: str = "") -> None:
    """Write :func:`front_figure` to ``path``."""
    plt = _pyplot()
    fig = front_figure(rows, title)
    fig.savefig(path, dpi=150)
    plt.close(fig)
