"""Figures from replay traces (Nunes et al. 2011 Fig. 9 style). Plots read results; they re-run nothing."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from rttlab.trace.replay import Scores


def plot_replay(scores: Scores, path: str | Path, title: str = "", max_points: int = 20_000) -> None:
    """Two panels over time: samples with each estimator's prediction, and samples with each RTO
    (``scores`` from :func:`rttlab.replay.score` with ``trace=True``). Long traces are thinned to
    ``max_points`` evenly spaced samples for drawing."""
    if scores.traces is None:
        raise ValueError("plot_replay needs scores made with trace=True")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(11, 7), constrained_layout=True)
    step = max(1, len(scores.rtts_s) // max_points)
    time = scores.times_s[::step]
    for ax in (top, bottom):
        ax.plot(time, scores.rtts_s[::step] * 1e3, ".", color="0.55", markersize=2.5, label="sample", zorder=1)
    for label, columns in scores.traces.items():
        prediction, rto = columns["prediction"], columns["rto"]
        if not np.all(np.isnan(prediction)):
            top.plot(time, prediction[::step] * 1e3, lw=1.0, label=label)
        bottom.plot(time, rto[::step] * 1e3, lw=1.0, label=label)
    top.set_ylabel("RTT prediction (ms)")
    bottom.set_ylabel("RTO in force (ms)")
    bottom.set_yscale("log")
    bottom.set_xlabel("time (s)")
    top.legend(fontsize=7, ncol=3, loc="upper right")
    bottom.legend(fontsize=7, ncol=3, loc="upper right")
    if title:
        top.set_title(title)
    fig.savefig(path)
    plt.close(fig)
