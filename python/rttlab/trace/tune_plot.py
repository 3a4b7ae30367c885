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


def folds_path(path: str | Path) -> Path:
    """Where ``--plot FILE`` draws the folds: beside FILE, ``STEM-folds.SUFFIX``."""
    path = Path(path)
    return path.with_name(f"{path.stem}-folds{path.suffix}")


def plot_folds(result: Tuning, path: str | Path) -> None:
    """Each fold's held-out point against the target: per held-out block (x), the bad-timeout
    rate with its 95 % Clopper–Pearson interval of the point tuned on the other blocks (circles:
    filled when it holds, crossed when it does not) and of the recommendation (stars), the
    target dashed. Nothing is pooled: every block is its own point."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cv, rec = result.cv, result.recommendation
    cells = cv["fold_table"]
    index = {name: k + 1 for k, name in enumerate(result.inputs)}
    several = len(result.inputs) > 1
    labels = [f"{f['fold']}" + (f"\n#{index[f['held_out']]}" if several else "") for f in cells]
    x = list(range(len(cells)))
    fig, ax = plt.subplots(figsize=(max(6.0, 0.5 * len(cells) + 3), 4.5), dpi=120)
    for i, f in enumerate(cells):
        rate = f.get("bad_timeout_rate")
        if rate is None:
            continue
        lo, hi = f["bad_timeout_rate_ci"]
        ax.errorbar(
            [i - 0.12],
            [rate * 100],
            yerr=[[max(0.0, rate - lo) * 100], [max(0.0, hi - rate) * 100]],
            fmt="o" if f["holds"] else "x",
            color="#1f77b4" if f["holds"] else "#d62728",
            mfc="#1f77b4" if f["holds"] else "none",
            capsize=3,
            label=None,
        )
    chosen = rec.get("held_out") and next(
        (c for c in cv["candidates"] if c["setting"] == rec["setting"]), None
    )
    if chosen is not None:
        for i, c in enumerate(chosen["by_cell"]):
            lo, hi = c["bad_timeout_rate_ci"]
            rate = c["bad_timeout_rate"] or 0.0
            ax.errorbar(
                [i + 0.12],
                [rate * 100],
                yerr=[[max(0.0, rate - lo) * 100], [max(0.0, hi - rate) * 100]],
                fmt="*",
                ms=10,
                color="#2ca02c" if c["holds"] else "#d62728",
                capsize=3,
            )
    target = result.settings.target
    ax.axhline(target * 100, color="black", ls="--", lw=0.8)
    ax.text(0.0, target * 100, f" target {target:.2%}", va="bottom", fontsize=8)
    ax.set_xticks(x, labels, fontsize=7)
    ax.set_xlabel(
        "held-out block (fold)"
        + (
            "; input " + ", ".join(f"#{k} {Path(name).name}" for name, k in index.items())
            if several
            else ""
        ),
        fontsize=7 if several else 10,
        wrap=True,
    )
    ax.set_ylabel("bad-timeout rate on the held-out block (%)")
    from matplotlib.lines import Line2D

    ax.legend(
        handles=[
            Line2D(
                [], [], marker="o", ls="", color="#1f77b4", label="tuned on the other blocks: holds"
            ),
            Line2D([], [], marker="x", ls="", color="#d62728", label="does not hold"),
            Line2D(
                [],
                [],
                marker="*",
                ls="",
                ms=10,
                color="#2ca02c",
                label=f"the answer: {rec['setting']}"[:70],
            ),
        ],
        fontsize=7,
        loc="upper right",
    )
    import textwrap

    ax.set_title(
        textwrap.fill(
            f"{cv['folds']} folds, 95 % Clopper–Pearson intervals. {cv['headline']}", 120
        ),
        fontsize=7,
    )
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


#: The front figure's W axis spans at most this many times the smallest W shown.
ZOOM = 2.5


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
    if result.cv is not None:
        plot_folds(result, folds_path(path))


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
    clipped = ""
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
            # The choice is made within a few times the smallest W: above, the fronts only
            # climb towards 0 % bad timeouts, and showing them squeezes every estimator into
            # one band (issue 42). What is cut off is said in the axis label.
            low = shown.min() * 1e3
            top = min(shown.max() * 1e3 * 1.3, low * ZOOM)
            ax.set_ylim(low / 1.1, top)
            if shown.max() * 1e3 > top:
                clipped = f", cut at {ZOOM:g}× the smallest W"
    ax.set_xlabel("bad-timeout rate (%)")
    ax.set_ylabel(f"mean wait W after a loss (ms), log scale{clipped}")
    from rttlab.trace.plot import plain_log_ticks

    plain_log_ticks(ax.yaxis)
    lo, hi = ax.get_ylim()
    if hi / lo < 10:  # less than a decade: every minor tick (700, 800, …, 2000) gets its number
        from matplotlib.ticker import FuncFormatter, LogLocator

        from rttlab.trace.labels import sig

        ax.yaxis.set_minor_locator(LogLocator(subs=(1.2, 1.5, 2, 3, 4, 5, 6, 7, 8, 9)))
        ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: sig(v, 2)))
        ax.tick_params(axis="y", which="minor", labelsize=7)
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    return fig
