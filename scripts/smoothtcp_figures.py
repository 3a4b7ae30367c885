"""Figures for docs/reproductions/smoothtcp.md from a full `rttlab reproduce smoothtcp --out DIR`.

    rttlab reproduce smoothtcp --out reproduce-smoothtcp
    python scripts/smoothtcp_figures.py reproduce-smoothtcp docs/reproductions

Reads the store (runs, flows and the window/rtt/queue/drops Parquet traces it kept); runs nothing
except the analytic slow-start curve of the paper's coefficients (Fig. 1).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from rttlab.store import Store  # noqa: E402

MSS = 536
ERRORS = (81.13, 254.14, 427.19)


def curve(a, a_a=40.0, b_a=0.003038, t=1.0):
    """W(a) = sqrt(2F(a) + T) - sqrt(T) + 1, F(a) = A a - (A/B) ln cosh(B a) (M_a = 0)."""
    f = a_a * a - a_a / b_a * np.log(np.cosh(b_a * a))
    return np.sqrt(2 * f + t) - math.sqrt(t) + 1


def main(src: Path, dst: Path) -> None:
    store = Store(src / "results.duckdb", read_only=True)
    runs = dict(store.db.execute("SELECT name, hash FROM runs WHERE status = 'ok'").fetchall())

    def trace(name, kind):
        return store.series(runs[name], kind)

    # Fig. 1: the slow start — the paper's curve and its limit, and flow 0's simulated window.
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.6), constrained_layout=True)
    a = np.linspace(0, 2000, 400)
    a1.plot(a, curve(a), label="W(a), A_a 40, B_a 0.003038, T 1")
    a1.axhline(math.sqrt(2 * 40 / 0.003038 * math.log(2) + 1), ls="--", c="grey", label="W_c ≈ 135.1 (eq. 9)")
    for w in (60, 30, 15):  # re-fits at these windows: new limit w, restart at w/2
        a_new = 40.0 * (w * w - 1) / 2 / (40 / 0.003038 * math.log(2))
        grid = np.linspace(0, 2000, 400)
        a1.plot(grid, curve(grid, a_a=a_new), lw=0.8, label=f"re-fit at w = {w}: A_a = {a_new:.3g}")
    a1.set(xlabel="acknowledgements a", ylabel="window (packets)", title="eqs 8–10: slow-start curves (Fig. 1)")
    a1.legend(fontsize=7)
    w = trace("smooth-k0.005", "window")
    for f in (0, 1):
        s = w[(w["flow"] == f) & (w["time"] < 60)]
        a2.step(s["time"], s["cwnd"] / MSS, where="post", label=f"cwnd{f + 1}")
    a2.set(xlabel="time (s)", ylabel="cwnd (packets)", title="SmoothTCP κ 0.005: the first 60 s (rwnd caps sending at 20)")
    a2.legend(fontsize=8)
    fig.savefig(dst / "smoothtcp-slowstart.png", dpi=80)

    # Figs 3/6 and 9/11: cwnd and RTT, Standard vs SmoothTCP, without and with errors.
    fig, axes = plt.subplots(2, 2, figsize=(11, 6), sharex=True, constrained_layout=True)
    for col, suffix in enumerate(("", "+errors")):
        for row, name in enumerate(("standard", "smooth-k0.005")):
            ax = axes[row][col]
            w, r = trace(name + suffix, "window"), trace(name + suffix, "rtt")
            for f in (0, 1):
                s = w[w["flow"] == f]
                ax.step(s["time"], s["cwnd"] / MSS, where="post", lw=0.7, label=f"cwnd{f + 1}")
            ax2 = ax.twinx()
            for f in (0, 1):
                s = r[r["flow"] == f]
                ax2.plot(s["time"], s["sample"], ".", ms=0.8, c="k" if f == 0 else "grey")
            ax2.set_ylim(0, 3.5)
            ax2.set_ylabel("RTT (s), dots")
            if suffix:
                for t in ERRORS:
                    ax.axvline(t, c="r", lw=0.6, ls=":")
            ax.set_ylim(0, 22)
            ax.set(ylabel="cwnd (packets)", title=f"{name}{suffix}")
            ax.legend(fontsize=7, loc="upper right")
    for ax in axes[1]:
        ax.set_xlabel("time (s)")
    fig.savefig(dst / "smoothtcp-cwnd-rtt.png", dpi=80)

    # Figs 4/7 and 5/8: router queue and cumulative drops.
    fig, (q1, q2) = plt.subplots(1, 2, figsize=(11, 3.6), constrained_layout=True)
    for name in ("standard", "smooth-k0.005"):
        q = trace(name, "queue")
        q = q[q["channel"] == 0]
        q1.plot(q["time"], q["packets"], lw=0.5, label=name)
        d = trace(name, "drops")
        d = d[d["cause"] == "overflow"]
        q2.step(np.r_[0, d["time"], 600], np.r_[0, np.arange(1, len(d) + 1), len(d)], where="post", label=f"{name} (pdrops1)")
    q1.axhline(7, c="r", ls=":", lw=0.8, label="τ = 7")
    q1.set(xlabel="time (s)", ylabel="queue (packets, size1)", title="router queue, sampled every 100 ms")
    q2.set(xlabel="time (s)", ylabel="packets dropped (cumulative)", title="router drops")
    q1.legend(fontsize=7)
    q2.legend(fontsize=7)
    fig.savefig(dst / "smoothtcp-queue-drops.png", dpi=80)

    # Appendix A / §VII: κ against RTT variation and fairness.
    flows = store.query("SELECT r.name, f.flow, f.rtt_std, f.rtt_max - f.rtt_min AS rtt_range_s FROM flows f JOIN runs r USING (hash)")
    jain = dict(store.db.execute("SELECT name, jain_index FROM runs").fetchall())
    kappas = [0.001 * i for i in range(1, 11)]
    fig, (k1, k2) = plt.subplots(1, 2, figsize=(11, 3.6), constrained_layout=True)
    for suffix, style in (("", "o-"), ("+errors", "s--")):
        names = [f"smooth-k{k:.3f}{suffix}" for k in kappas]
        std = [flows[flows["name"] == n]["rtt_std"].mean() for n in names]
        k1.plot(kappas, std, style, label=f"SmoothTCP{suffix or ' (no errors)'}")
        ref = flows[flows["name"] == f"standard{suffix}"]["rtt_std"].mean()
        k1.axhline(ref, ls=":" if suffix else "-.", c="grey", label=f"Standard{suffix or ' (no errors)'}")
        k2.plot(kappas, [jain[n] for n in names], style, label=f"SmoothTCP{suffix or ' (no errors)'}")
        k2.axhline(jain[f"standard{suffix}"], ls=":" if suffix else "-.", c="grey", label=f"Standard{suffix or ' (no errors)'}")
    k1.set(xlabel="κ", ylabel="RTT std (s), mean of the two connections", title="RTT variation after 100 s")
    k2.set(xlabel="κ", ylabel="Jain's index (goodput after 100 s)", title="fairness")
    k1.legend(fontsize=7)
    k2.legend(fontsize=7)
    fig.savefig(dst / "smoothtcp-kappa.png", dpi=80)
    store.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
