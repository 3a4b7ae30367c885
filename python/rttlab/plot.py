"""Figures from replay traces (seed 000 Fig. 9 style). Plots read results; they re-run nothing."""

from __future__ import annotations

from pathlib import Path

import pandas as pd


def plot_replay(traces: dict[str, pd.DataFrame], path: str | Path, title: str = "", max_points: int = 20_000) -> None:
    """Two panels over time: samples with each estimator's prediction, and samples with each RTO.
    Long traces are thinned to ``max_points`` evenly spaced samples for drawing."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(11, 7), constrained_layout=True)
    first = next(iter(traces.values()))
    step = max(1, len(first) // max_points)
    for ax in (top, bottom):
        ax.plot(first["time"][::step], first["rtt"][::step] * 1e3, ".", color="0.55", markersize=2.5, label="sample", zorder=1)
    for label, trace in traces.items():
        t = trace.iloc[::step]
        if t["prediction"].notna().any():
            top.plot(t["time"], t["prediction"] * 1e3, lw=1.0, label=label)
        bottom.plot(t["time"], t["rto"] * 1e3, lw=1.0, label=label)
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
