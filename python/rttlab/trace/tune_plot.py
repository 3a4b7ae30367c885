"""The figure of ``rttlab tune --plot``: every estimator's Pareto front, log W against the
bad-timeout rate, defaults as hollow markers, the target and the recommendation marked.
It reads a :class:`rttlab.trace.tune.Tuning`; it never replays anything."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rttlab.trace.tune import Tuning


def estimator_colour(name: str) -> str:
    """The colour an estimator is drawn in: its fixed colour in every rttlab figure."""
    from rttlab.palette import colour

    return colour(name)


def plot_tuning(result: Tuning, path: str | Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = fronts_figure(
        result.table,
        list(result.methods),
        result.settings.target,
        result.recommendation,
        f"tuned on {len(result.inputs)} trace{'s' if len(result.inputs) != 1 else ''}, {result.samples:,} scored samples: Pareto fronts",
    )
    fig.savefig(path)
    plt.close(fig)


def fronts_figure(
    t: Any, estimators: list[str], target: float | None, rec: dict[str, Any] | None, title: str
) -> Any:
    """The figure itself (a matplotlib Figure), from a tuning's full table (columns estimator,
    default, bad_timeout_rate, wait_mean_s, estimator_front) — a :class:`Tuning`'s, or one read
    back from a results store by ``rttlab report``. ``target``: None when unknown (no line)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5.5), dpi=120)
    for name in estimators:
        mine = t[(t["estimator"] == name) & ~t["default"]]
        colour = estimator_colour(name)
        ax.scatter(
            mine["bad_timeout_rate"] * 100,
            mine["wait_mean_s"] * 1e3,
            s=4,
            color=colour,
            alpha=0.15,
            linewidths=0,
        )
        front = mine[mine["estimator_front"]].sort_values(["bad_timeout_rate", "wait_mean_s"])
        ax.plot(
            front["bad_timeout_rate"] * 100,
            front["wait_mean_s"] * 1e3,
            "-o",
            ms=3,
            lw=1.2,
            color=colour,
            label=name,
            drawstyle="steps-post",
        )
        default = t[(t["estimator"] == name) & t["default"]]
        ax.scatter(
            default["bad_timeout_rate"] * 100,
            default["wait_mean_s"] * 1e3,
            s=60,
            facecolors="none",
            edgecolors=colour,
            linewidths=1.5,
            zorder=3,
        )
    if target is not None:
        ax.axvline(target * 100, color="black", ls="--", lw=0.8)
        ax.text(
            target * 100,
            1.0,
            f" target {target:.2%}",
            transform=ax.get_xaxis_transform(),
            va="top",
            ha="left",
            fontsize=8,
        )
    if rec is not None:
        ax.scatter(
            [rec["bad_timeout_rate"] * 100],
            [rec["wait_mean_s"] * 1e3],
            marker="*",
            s=260,
            color=estimator_colour(rec["estimator"]),
            edgecolors="black",
            linewidths=0.8,
            zorder=4,
            label="recommendation",
        )
        ax.annotate(
            rec["setting"],
            (rec["bad_timeout_rate"] * 100, rec["wait_mean_s"] * 1e3),
            xytext=(8, 10),
            textcoords="offset points",
            fontsize=7,
        )
    ax.scatter([], [], s=60, facecolors="none", edgecolors="black", label="defaults (hollow)")
    ax.set_yscale("log")
    # The trade-off lives at low bad-timeout rates: show up to a few times the target.
    if target is not None:
        hi = max(target * 5, (rec["bad_timeout_rate"] * 2) if rec else 0.0)
        ax.set_xlim(-hi * 100 * 0.03, hi * 100)
        shown = t[(t["bad_timeout_rate"] <= hi) & (t["estimator_front"] | t["default"])][
            "wait_mean_s"
        ].dropna()
        if len(shown):
            ax.set_ylim(shown.min() * 1e3 / 1.3, shown.max() * 1e3 * 1.3)
    ax.set_xlabel("bad-timeout rate (%)")
    ax.set_ylabel("mean wait W after a loss (ms), log scale")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    return fig
