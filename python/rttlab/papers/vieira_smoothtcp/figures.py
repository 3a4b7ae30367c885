"""The figures of docs/reproductions/smoothtcp.md, from the runs of `rttlab reproduce smoothtcp`:

    rttlab reproduce smoothtcp --figures docs/reproductions

Reads the store (runs, flows and the window/rtt/queue/drops/arrival/quench Parquet traces it
kept); runs nothing except the analytic slow-start curve of the paper's coefficients (Fig. 1).
Channel 0 is the dumbbell's bottleneck in the data direction (the router queue of §V).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from rttlab.experiments.store import Store  # noqa: E402

MSS = 536
ERRORS = (81.13, 254.14, 427.19)


def save(fig, path: Path, dpi: int) -> None:
    """PNG with a 64-colour palette: a third of the size of matplotlib's RGBA, the same to the eye."""
    import io

    from PIL import Image

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    plt.close(fig)
    Image.open(buf).convert("RGB").quantize(colors=64).save(path, optimize=True)


def curve(a, a_a=40.0, b_a=0.003038, t=1.0):
    """W(a) = sqrt(2F(a) + T) - sqrt(T) + 1, F(a) = A a - (A/B) ln cosh(B a) (M_a = 0)."""
    f = a_a * a - a_a / b_a * np.log(np.cosh(b_a * a))
    return np.sqrt(2 * f + t) - math.sqrt(t) + 1


def draw(rep: Any, store: Store, dst: Path) -> list[Path]:
    """Write the figures into ``dst``; returns the files written. ``rep``: the reproduction
    (its full scale keeps the window, rtt, queue, drops, arrival and quench traces read here)."""
    # The primary reading's runs (the store also holds each other reading's, under the same names).
    runs = dict(
        store.db.execute(
            "SELECT r.name, r.hash FROM runs r JOIN sweep_runs s USING (hash) WHERE s.sweep = ? AND r.status = 'ok' AND r.hash IN (SELECT unnest(?))",
            [rep.sweep_name, rep.planned(store)],
        ).fetchall()
    )

    def trace(name, kind):
        return store.series(runs[name], kind)

    # Fig. 1: the slow start — the paper's curve and its limit, and flow 0's simulated window.
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.6), constrained_layout=True)
    a = np.linspace(0, 2000, 400)
    a1.plot(a, curve(a), label="W(a), A_a 40, B_a 0.003038, T 1")
    a1.axhline(
        math.sqrt(2 * 40 / 0.003038 * math.log(2) + 1),
        ls="--",
        c="grey",
        label="W_c ≈ 135.1 (eq. 9)",
    )
    for w in (60, 30, 15):  # re-fits at these windows: new limit w, restart at w/2
        a_new = 40.0 * (w * w - 1) / 2 / (40 / 0.003038 * math.log(2))
        grid = np.linspace(0, 2000, 400)
        a1.plot(grid, curve(grid, a_a=a_new), lw=0.8, label=f"re-fit at w = {w}: A_a = {a_new:.3g}")
    a1.set(
        xlabel="acknowledgements a",
        ylabel="window (packets)",
        title="eqs 8–10: slow-start curves (Fig. 1)",
    )
    a1.legend(fontsize=7)
    w = trace("smooth-k0.005", "window")
    for f in (0, 1):
        s = w[(w["flow"] == f) & (w["time"] < 60)]
        a2.step(s["time"], s["cwnd"] / MSS, where="post", label=f"cwnd{f + 1}")
    a2.set(
        xlabel="time (s)",
        ylabel="cwnd (packets)",
        title="SmoothTCP κ 0.005: the first 60 s (rwnd caps sending at 20)",
    )
    a2.legend(fontsize=8)
    save(fig, dst / "smoothtcp-slowstart.png", 80)

    # Figs 3/6 and 9/11: cwnd and RTT, Standard vs SmoothTCP, without and with errors.
    fig, axes = plt.subplots(2, 2, figsize=(11, 6), sharex=True, constrained_layout=True)

    def cwnd_rtt(ax, name, ms):
        """Figs 3/6/9/11/13/15: each connection's cwnd (steps) and RTT samples (dots, right axis)."""
        w, r = trace(name, "window"), trace(name, "rtt")
        for f in (0, 1):
            s = w[w["flow"] == f]
            ax.step(s["time"], s["cwnd"] / MSS, where="post", lw=0.7, label=f"cwnd{f + 1}")
        ax2 = ax.twinx()
        for f in (0, 1):
            s = r[r["flow"] == f]
            ax2.plot(s["time"], s["sample"], ".", ms=ms, c="k" if f == 0 else "grey")
        ax2.set(ylim=(0, 3.5), ylabel="RTT (s), dots")

    for col, suffix in enumerate(("", "+errors")):
        for row, name in enumerate(("standard", "smooth-k0.005")):
            ax = axes[row][col]
            cwnd_rtt(ax, name + suffix, ms=0.8)
            if suffix:
                for t in ERRORS:
                    ax.axvline(t, c="r", lw=0.6, ls=":")
            ax.set_ylim(0, 22)
            ax.set(ylabel="cwnd (packets)", title=f"{name}{suffix}")
            ax.legend(fontsize=7, loc="upper right")
    for ax in axes[1]:
        ax.set_xlabel("time (s)")
    save(fig, dst / "smoothtcp-cwnd-rtt.png", 80)

    def queue_quench(ax, name, title):
        """Figs 4/7/10/12/14/16: the router queue (size1) and each connection's quench count."""
        q = trace(name, "queue")
        q = q[q["channel"] == 0]
        ax.plot(q["time"], q["packets"], lw=0.4, c="tab:blue", label="size1 (every 100 ms)")
        ax.axhline(7, c="r", ls=":", lw=0.8, label="τ = 7")
        ax.set(ylim=(0, 20), ylabel="queue (packets)", title=title)
        ax2 = ax.twinx()
        s = trace(name, "quench")
        for f, c in ((0, "k"), (1, "grey")):
            t = s[(s["channel"] == 0) & (s["flow"] == f)]["time"].to_numpy()
            ax2.plot(
                np.r_[0, t, 600],
                np.r_[0, np.arange(1, len(t) + 1), len(t)],
                c=c,
                lw=1.2,
                label=f"nicmpsq{f + 1} ({len(t)})",
            )
        ax2.set(ylim=(0, 2300), ylabel="quenches sent (cumulative)")
        ax2.legend(fontsize=7, loc="upper left")
        ax.legend(fontsize=7, loc="upper right")
        if "+errors" in name:
            for t in ERRORS:
                ax.axvline(t, c="r", lw=0.6, ls="--")

    # Figs 4, 7, 10 and 12: router queue and quench counts, Standard vs SmoothTCP, without and
    # with the spurious errors.
    fig, axes = plt.subplots(2, 2, figsize=(11, 6), sharex=True, constrained_layout=True)
    for col, suffix in enumerate(("", "+errors")):
        for row, (name, fig_no) in enumerate((("standard", (4, 10)), ("smooth-k0.005", (7, 12)))):
            queue_quench(
                axes[row][col], name + suffix, f"{name}{suffix} (paper's Fig. {fig_no[col]})"
            )
    for ax in axes[1]:
        ax.set_xlabel("time (s)")
    save(fig, dst / "smoothtcp-queue-quench.png", 70)

    # Figs 5 and 8: cumulative router drops (pdrops1) and the packet arrival rate (parvlr1).
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.4), sharey=True, constrained_layout=True)
    for ax, (name, fig_no) in zip(axes, (("standard", 5), ("smooth-k0.005", 8))):
        a = trace(name, "arrival")
        a = a[(a["channel"] == 0) & (a["kind"] == "data")]
        rate, edges = np.histogram(a["time"], bins=np.arange(0, 601, 1.0))
        late = rate[60:]
        print(
            f"{name}: data arrivals per second after 60 s: mean {late.mean():.2f}, std {late.std():.2f}, max {late.max()}"
        )
        ax.plot(
            edges[:-1],
            rate,
            lw=0.5,
            c="tab:blue",
            label="parvlr1 (data packets arriving per 1-s bin)",
        )
        ax.set(
            xlabel="time (s)",
            ylabel="arrivals per second",
            ylim=(0, 70),
            title=f"{name} (paper's Fig. {fig_no})",
        )
        ax2 = ax.twinx()
        d = a[a["dropped"]]["time"].to_numpy()
        ax2.step(
            np.r_[0, d, 600],
            np.r_[0, np.arange(1, len(d) + 1), len(d)],
            where="post",
            c="tab:red",
            label=f"pdrops1 ({len(d)}; {int((d >= 60).sum())} after 60 s)",
        )
        ax2.set(ylim=(0, 80), ylabel="packets dropped (cumulative)")
        ax.legend(fontsize=7, loc="upper left")
        ax2.legend(fontsize=7, loc="upper right")
    save(fig, dst / "smoothtcp-drops-arrivals.png", 70)

    # Appendix A, Figs 13–16: SmoothTCP with the errors, κ 0.005 against κ 0.010.
    fig, axes = plt.subplots(2, 2, figsize=(11, 6), sharex=True, constrained_layout=True)
    for col, (kappa, figs) in enumerate((("0.005", (13, 14)), ("0.010", (15, 16)))):
        name = f"smooth-k{kappa}+errors"
        ax = axes[0][col]
        cwnd_rtt(ax, name, ms=0.6)
        ax.set(
            ylim=(0, 22),
            ylabel="cwnd (packets)",
            title=f"SmoothTCP κ {kappa} + errors (paper's Fig. {figs[0]})",
        )
        ax.legend(fontsize=7, loc="upper right")
        for t in ERRORS:
            ax.axvline(t, c="r", lw=0.6, ls=":")
        queue_quench(
            axes[1][col], name, f"κ {kappa} + errors: queue and quenches (paper's Fig. {figs[1]})"
        )
    for ax in axes[1]:
        ax.set_xlabel("time (s)")
    save(fig, dst / "smoothtcp-appendix-a.png", 70)

    # Appendix A / §VII: κ against RTT variation and fairness.
    flows = store.query(
        "SELECT r.name, f.flow, f.rtt_std, f.rtt_max - f.rtt_min AS rtt_range_s FROM flows f JOIN runs r USING (hash)"
    )
    jain = dict(store.db.execute("SELECT name, jain_index FROM runs").fetchall())
    kappas = [0.001 * i for i in range(1, 11)]
    fig, (k1, k2) = plt.subplots(1, 2, figsize=(11, 3.6), constrained_layout=True)
    for suffix, style in (("", "o-"), ("+errors", "s--")):
        names = [f"smooth-k{k:.3f}{suffix}" for k in kappas]
        std = [flows[flows["name"] == n]["rtt_std"].mean() for n in names]
        k1.plot(kappas, std, style, label=f"SmoothTCP{suffix or ' (no errors)'}")
        ref = flows[flows["name"] == f"standard{suffix}"]["rtt_std"].mean()
        k1.axhline(
            ref, ls=":" if suffix else "-.", c="grey", label=f"Standard{suffix or ' (no errors)'}"
        )
        k2.plot(
            kappas, [jain[n] for n in names], style, label=f"SmoothTCP{suffix or ' (no errors)'}"
        )
        k2.axhline(
            jain[f"standard{suffix}"],
            ls=":" if suffix else "-.",
            c="grey",
            label=f"Standard{suffix or ' (no errors)'}",
        )
    k1.set(
        xlabel="κ",
        ylabel="RTT std (s), mean of the two connections",
        title="RTT variation after 100 s",
    )
    k2.set(xlabel="κ", ylabel="Jain's index (goodput after 100 s)", title="fairness")
    k1.legend(fontsize=7)
    k2.legend(fontsize=7)
    save(fig, dst / "smoothtcp-kappa.png", 80)
    return [
        dst / f"smoothtcp-{n}.png"
        for n in ("slowstart", "cwnd-rtt", "queue-quench", "drops-arrivals", "appendix-a", "kappa")
    ]
