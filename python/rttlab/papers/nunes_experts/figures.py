"""The MANET figures of docs/reproductions/nunes-manet.md (the paper's Figs 1–7 for our runs),
from the runs of `rttlab reproduce nunes-manet`:

    rttlab reproduce nunes-manet --scale medium --figures docs/reproductions
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from rttlab.experiments.stats import summarise  # noqa: E402
from rttlab.experiments.store import Store  # noqa: E402
from rttlab.palette import colour  # noqa: E402


def draw(rep: Any, store: Store, dst: Path) -> list[Path]:
    """One SVG per scenario and metric, with the reproduction's confidence level."""
    return [Path(f) for f in figures(rep.stored(store)[0], dst, rep.level)]


#: The per-run quantities of the paper's figures, with their axis labels.
FIGURE_METRICS = {
    "error_before_ticks": "mean |forecast − sample| (ticks)",
    "retx_pct": "% of data segments retransmitted",
    "packets_delivered": "packets delivered",
    "mean_cwnd": "mean cwnd (segments)",
    "mean_queue_bytes": "mean MAC queue length (bytes)",
}


def figures(runs: Any, out_dir: Any, level: float = 0.90) -> list[str]:
    """One SVG per scenario and metric (the paper's Figs 1–7 for our runs): mean and ``level``
    Student-t interval against the flow count, one line per estimator. ``runs``: the store's
    ``runs`` rows of a nunes-manet sweep. Returns the files written."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ok = runs[runs["status"] == "ok"]
    written = []
    for name, g in ok.groupby("simulation.name"):
        if g["traffic.flows"].nunique() < 1:
            continue
        for metric, label in FIGURE_METRICS.items():
            table = summarise(g, ["tcp.estimator", "traffic.flows"], [metric], level)
            fig, ax = plt.subplots(figsize=(5, 3.4), constrained_layout=True)
            for est, t in table.groupby("tcp.estimator"):
                # Asymmetric where the metric is bounded (its interval stays inside the range).
                below = (t["mean"] - t["ci_low"]).fillna(0.0)
                above = (t["ci_high"] - t["mean"]).fillna(0.0)
                ax.errorbar(
                    t["traffic.flows"],
                    t["mean"],
                    yerr=[below, above],
                    marker="o",
                    capsize=3,
                    label=str(est),
                    color=colour(str(est)),
                )
            ax.set_xlabel("number of flows")
            ax.set_ylabel(label, fontsize=8)
            ax.set_title(f"scenario {name}: mean and {level:.0%} CI over the seeds", fontsize=9)
            ax.legend(fontsize=8)
            path = out / f"{name}-{metric}.svg"
            fig.savefig(path, format="svg")
            plt.close(fig)
            written.append(str(path))
    return written
