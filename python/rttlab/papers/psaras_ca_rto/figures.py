"""The figure of docs/reproductions/ca-rto.md from the runs of `rttlab reproduce ca-rto`: Jain's
index, retransmissions and goodput against the number of flows, Reno and CA-RTO side by side
(mean and 95 % Student-t interval over the seeds), one column per setting — the layout of the
paper's Figs 8–18. Reads the store only.

    rttlab reproduce ca-rto --figures docs/reproductions
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from rttlab.experiments.stats import interval
from rttlab.experiments.store import Store
from rttlab.palette import colour
from rttlab.trace.labels import axis_label, quantity

SETTINGS = ["1M-50p", "10M-100p", "100M-50p", "1M-150p-per10"]
METRICS = [
    ("jain_index", axis_label("jain_index")),
    ("retransmissions", "retransmitted packets"),
    ("goodput_bps", axis_label("goodput_bps")),
]
#: The settings in words (bottleneck rate, buffer, packet error rate).
SETTING_TITLES = {
    "1M-50p": "1 Mb/s, 50-packet buffer",
    "10M-100p": "10 Mb/s, 100-packet buffer",
    "100M-50p": "100 Mb/s, 50-packet buffer",
    "1M-150p-per10": "1 Mb/s, 150 packets, 10 % errors",
}


def draw(rep: Any, store: Store, dst: Path) -> list[Path]:
    """Write ``ca-rto.png`` into ``dst`` (the full scale's four settings); returns it."""
    out = dst / "ca-rto.png"
    runs = store.db.execute(
        'SELECT "simulation.name" AS name, "flows.0.count" AS n, "tcp.rto.policy" AS policy, jain_index, retransmissions, goodput_bps FROM runs WHERE status = \'ok\''
    ).fetchdf()
    fig, axes = plt.subplots(
        len(METRICS), len(SETTINGS), figsize=(14, 8), constrained_layout=True, squeeze=False
    )
    for col, setting in enumerate(SETTINGS):
        for row, (metric, label) in enumerate(METRICS):
            ax = axes[row, col]
            for policy, name, marker in (("none", "Reno", "s"), ("ca-rto", "Reno + CA-RTO", "o")):
                g = runs[(runs.name == setting) & (runs.policy == policy)]
                xs = sorted(g.n.unique())
                # Jain's index stays within [0, 1]: its interval is asymmetric near 1.
                stats = [interval(g[g.n == x][metric].tolist(), metric, 0.95) for x in xs]
                scale = quantity(metric).scale
                ax.errorbar(
                    xs,
                    [s["mean"] * scale for s in stats],
                    yerr=[
                        [(s["mean"] - s["ci_low"]) * scale for s in stats],
                        [(s["ci_high"] - s["mean"]) * scale for s in stats],
                    ],
                    marker=marker,
                    mfc="none",
                    capsize=2,
                    lw=0.8,
                    label=name,
                    color=colour(policy if policy != "none" else "reno"),
                )
            if row == 0:
                ax.set_title(SETTING_TITLES.get(setting, setting), fontsize=9)
            if col == 0:
                ax.set_ylabel(label, fontsize=8)
            if row == len(METRICS) - 1:
                ax.set_xlabel("number of flows", fontsize=8)
            ax.tick_params(labelsize=7)
    axes[0, 0].legend(fontsize=7)
    fig.suptitle(
        "rttlab reproduce ca-rto (Psaras, Tsaoussidis & Mamatas 2005 §VI):\nmean and 95 % CI over 10 seeds, 500 s each",
        fontsize=9,
    )
    fig.savefig(out, dpi=90)
    plt.close(fig)
    return [out]
