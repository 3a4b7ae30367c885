"""Figures and tables of docs/reproductions/spectcp.md: SpecTCP (Bai, Lilja & Atiquzzaman 2009) §6.1 Table 3 and §6.2
Figs 4-7, 9-10 on rttlab's simulator. Prints Markdown tables (mean and 95 % Student-t CI over
seeds) and writes SVG figures into --out. Table 3 is `rttlab reproduce spectcp-table3`'s (run
here, 10 seeds, or its --quick 3 with --seeds < 10), formatted as the page's tables.

    python scripts/spectcp_figures.py [--seeds 10] [--duration 600] [--out docs/reproductions]

The goodput ratios the paper states are checked by `rttlab reproduce spectcp`; this script adds
what a ratio cannot show. Definitions (the paper gives none beyond its prose):
- misprediction rate (Fig. 6): with p = 1 every loss is predicted corruption, so it is the share
  of the flow's lost data packets that a queue dropped (overflow or RED) among all its lost data
  packets on the bottleneck — per lost packet, from the simulator's ground truth;
- congestion-loss rate (Fig. 9): queue drops / data packets sent; normalised goodput (Fig. 10):
  goodput (bit/s) / data packets sent, the paper's own definition (packets the sender sent; with
  Snoop, queue drops include the agent's local retransmissions the gateway's queue dropped);
- Snoop: Reno+ECN endpoints with `topology.bottleneck.agent = { kind = "snoop" }` (defaults), and
  what it did (its counters in the channels table);
- Vegas (ECN): not in the paper's figures, shown beside them as a comparator;
- fairness (Fig. 7): Jain's index of one SpecTCP and one Reno+ECN flow sharing the link.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import rttlab
from rttlab.experiments.stats import t_interval

ROOT = Path(__file__).resolve().parents[1]
LOSSY = ROOT / "examples" / "spectcp" / "lossy-link.toml"
BERS = [1e-7, 1e-6, 1e-5, 2e-5, 5e-5, 1e-4, 1.2e-4]


def ci(xs):
    t = t_interval(xs, 0.95)
    return t["mean"], t["half_width"]


def fmt(m, h, digits=3):
    return f"{m:.{digits}g} ± {h:.2g}" if not math.isnan(h) else f"{m:.{digits}g}"


def lossy(cc: str, ber: float, seed: int, duration: float, traces="none", extra=None):
    sc = rttlab.Scenario.load(LOSSY).with_({"tcp.cc": cc, "topology.bottleneck.error.ber": ber, "simulation.duration": f"{duration}s", **(extra or {})}).with_seed(seed)
    return rttlab.simulate(sc, traces=traces)


def bottleneck(r):
    return r.channels.set_index("name").loc[r.bottleneck]


def lossy_link(args, out: Path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    seeds = range(1, args.seeds + 1)
    schemes = {"spectcp": "SpecTCP", "reno": "Reno+ECN", "westwood+": "Westwood+ (ECN)", "snoop": "Snoop (Reno+ECN)", "vegas": "Vegas (ECN)"}
    # Snoop is Reno+ECN at the ends with the Snoop agent on the lossy link's gateway. Vegas is not
    # in the paper's Figs 9-10 (a comparator): shown beside them.
    setups = {"spectcp": ("spectcp", {}), "reno": ("reno", {}), "westwood+": ("westwood+", {}), "snoop": ("reno", {"topology.bottleneck.agent": {"kind": "snoop"}}), "vegas": ("vegas", {})}
    rows = {}
    # What Snoop did (the agent's counters on the lossy link's data direction), per run.
    snoop_cols = ["snoop_local_dupack", "snoop_local_timeout", "snoop_local_dropped", "snoop_dupacks_suppressed", "snoop_dupacks_stray", "snoop_acks_regenerated"]
    snooped = {}
    for cc in schemes:
        for ber in BERS:
            g, mis, closs, ngood = [], [], [], []
            for s in seeds:
                r = lossy(setups[cc][0], ber, s, args.duration, extra=setups[cc][1])
                b = bottleneck(r)
                if cc == "snoop":
                    snooped.setdefault(ber, []).append([float(b[c]) for c in snoop_cols] + [float(b["drops_corruption"])])
                f = r.flows.iloc[0]
                queue = b["drops_overflow"] + b["drops_aqm"]
                lost = queue + b["drops_corruption"]
                sent = f["bytes_sent"] / 1000  # 1000-byte segments
                g.append(f["goodput_bps"])
                mis.append(queue / lost if lost else math.nan)
                closs.append(queue / sent)
                ngood.append(f["goodput_bps"] / sent)
            rows[cc, ber] = {"goodput": ci(g), "mis": ci([m for m in mis if not math.isnan(m)]), "closs": ci(closs), "ngood": ci(ngood)}
    print("\n#### Goodput (bit/s), Fig. 5\n\n| BER | " + " | ".join(schemes.values()) + " | SpecTCP / Reno+ECN |\n|---|" + "---|" * (len(schemes) + 1))
    for ber in BERS:
        ratio = rows["spectcp", ber]["goodput"][0] / rows["reno", ber]["goodput"][0]
        print(f"| {ber:g} | " + " | ".join(fmt(*rows[cc, ber]["goodput"]) for cc in schemes) + f" | {ratio:.2f} |")
    print("\n#### Misprediction rate of the conditional Bernoulli predictor (p = 1), Fig. 6; congestion-loss rate, Fig. 9; normalised goodput, Fig. 10\n")
    print("| BER | SpecTCP misprediction | " + " | ".join(f"{v} cong. loss rate" for v in schemes.values()) + " | " + " | ".join(f"{v} norm. goodput" for v in schemes.values()) + " |")
    print("|---|" + "---|" * (1 + 2 * len(schemes)))
    for ber in BERS:
        print(f"| {ber:g} | {fmt(*rows['spectcp', ber]['mis'])} | " + " | ".join(fmt(*rows[cc, ber]["closs"]) for cc in schemes) + " | " + " | ".join(fmt(*rows[cc, ber]["ngood"]) for cc in schemes) + " |")

    print("\n#### What Snoop did per run (its counters on the lossy link's data direction; mean ± 95 % CI)\n")
    print("| BER | local retx on dup. ACK | local retx on timer | local retx dropped by the queue | dup. ACKs suppressed | dup. ACKs passed as a duplicate's | ACKs regenerated | packets corrupted on the link (data direction) |\n|---|---|---|---|---|---|---|---|")
    for ber in BERS:
        print(f"| {ber:g} | " + " | ".join(fmt(*ci([x[i] for x in snooped[ber]])) for i in range(len(snoop_cols) + 1)) + " |")

    fig, axes = plt.subplots(2, 2, figsize=(10, 7), constrained_layout=True)
    for ax, key, label in zip(axes.flat, ["goodput", "mis", "closs", "ngood"], ["goodput (bit/s), Fig. 5", "SpecTCP misprediction rate, Fig. 6", "congestion-loss rate, Fig. 9", "goodput / packets sent, Fig. 10"]):
        for cc, name in schemes.items():
            if key == "mis" and cc != "spectcp":
                continue
            m = [rows[cc, b][key][0] for b in BERS]
            h = [0 if math.isnan(rows[cc, b][key][1]) else rows[cc, b][key][1] for b in BERS]
            ax.errorbar(BERS, m, yerr=h, marker="o", capsize=3, label=name)
        ax.set_xscale("log")
        ax.set_xlabel("BER")
        ax.set_title(label, fontsize=9)
        ax.legend(fontsize=7)
    fig.savefig(out / "spectcp-lossy-link.svg")
    plt.close(fig)

    # Fig. 7: one SpecTCP and one Reno+ECN flow on the same link.
    print("\n#### Fairness, Fig. 7: Jain's index of one SpecTCP and one Reno+ECN flow (goodputs in bit/s)\n\n| BER | Jain index | SpecTCP | Reno+ECN |\n|---|---|---|---|")
    fair = []
    for ber in BERS:
        j, a, b = [], [], []
        for s in seeds:
            sc = rttlab.Scenario.load(LOSSY).with_(
                {
                    "topology.bottleneck.error.ber": ber,
                    "simulation.duration": f"{args.duration}s",
                    "flows": [{"count": 1, "start": "0s", "bytes": "inf", "tcp": {"cc": "spectcp"}}, {"count": 1, "start": "0s", "bytes": "inf", "tcp": {"cc": "reno"}}],
                }
            ).with_seed(s)
            r = rttlab.simulate(sc, traces="none")
            x = r.flows["goodput_bps"].to_numpy()
            j.append(x.sum() ** 2 / (2 * (x**2).sum()) if x.any() else math.nan)
            a.append(x[0])
            b.append(x[1])
        fair.append(ci(j))
        print(f"| {ber:g} | {fmt(*ci(j))} | {fmt(*ci(a))} | {fmt(*ci(b))} |")
    fig, ax = plt.subplots(figsize=(5, 3.2), constrained_layout=True)
    ax.errorbar(BERS, [f[0] for f in fair], yerr=[0 if math.isnan(f[1]) else f[1] for f in fair], marker="o", capsize=3)
    ax.set_xscale("log")
    ax.set_xlabel("BER")
    ax.set_ylabel("Jain index")
    ax.set_title("SpecTCP vs Reno+ECN sharing the link (Fig. 7)", fontsize=9)
    fig.savefig(out / "spectcp-fairness.svg")
    plt.close(fig)

    # Fig. 4: cwnd evolution; three packets corrupted around 57 s, no bit errors otherwise.
    fig, axes = plt.subplots(2, 1, figsize=(8, 5), sharex=True, constrained_layout=True)
    for ax, cc in zip(axes, ["reno", "spectcp"]):
        r = lossy(cc, 0.0, 1, 80, traces="window", extra={"topology.bottleneck.error": {"kind": "none"}, "topology.bottleneck.losses": ["57s", "57.13s", "57.26s"]})
        w = r.traces["window"]
        ax.step(w["time"], w["cwnd"] / 1000, where="post")
        ax.axvline(57, color="red", lw=0.8, ls="--")
        ax.set_ylabel("cwnd (segments)")
        ax.set_title(f"{schemes[cc]}: three packets corrupted at 57 s (dashed); reductions elsewhere are ECN-Echo", fontsize=9)
    axes[-1].set_xlabel("time (s)")
    fig.savefig(out / "spectcp-cwnd.svg")
    plt.close(fig)


def table3(args):
    """§6.1 Table 3: run by `rttlab reproduce spectcp-table3` (rttlab/papers/bai_spectcp/spectcp-table3.toml,
    also a part of `rttlab reproduce spectcp`); printed here as this page's Markdown tables."""
    import json
    import subprocess
    import sys
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-c", "from rttlab.cli.main import main; main()", "reproduce", "spectcp-table3", "--json", "--out", tmp]
        res = json.loads(subprocess.run([*cmd, *(["--quick"] if args.seeds < 10 else [])], capture_output=True, text=True, check=True).stdout)
    sim = {(r["metric"], r["params"]["simulation.name"]): r for r in res["rows"]}
    peak = {r["params"]["simulation.name"]: r for r in res["reports"][0]["rows"]}
    analytic_q, analytic_qbar = ([r["ours"] for r in m["rows"]] for m in res["models"])

    def ours(r):
        return f"{r['ours']:.3g} ± {(r['ci_high'] - r['ci_low']) / 2:.2g}" + ("" if r.get("matched", True) else " (not matched)")

    print(f"\n#### Table 3, maximum buffer Q(t)_max (packets), {sim['drops', 'base']['n']} seeds\n\n| case | SSthresh | r | published analytic / sim | ours eq. (3) | ours simulated, when SSthresh is reached | ours simulated, 30 s |\n|---|---|---|---|---|---|---|")
    for i, (name, ssth, r_ms, pub) in enumerate([("base", "15/15", 59, "19 / 18"), ("ssthresh-15-20", "15/20", 59, "24 / 23"), ("r-99ms", "15/15", 99, "12 / 13")]):
        print(f"| {i + 1} | {ssth} | {r_ms} ms | {pub} | {analytic_q[i]:.2f} | {ours(sim['trace.queue_at_ssthresh', name])} | {ours(peak[name])} |")
    print("\n#### Table 3, maximum average queue Q̄_max (packets), SSthresh 15/15, r = 59 ms\n\n| case | ω | min_th | max_th | max_p | published analytic / sim | ours eq. (8), default p, W | ours simulated |\n|---|---|---|---|---|---|---|---|")
    for i, (name, mn, mx, mp, pub) in enumerate([("base", 5, 15, 0.1, "7 / 8"), ("max_p-0.2", 5, 15, 0.2, "7 / 7"), ("min_th-7-max_th-21", 7, 21, 0.1, "10 / 10")]):
        print(f"| {i + 1} | 0.002 | {mn} | {mx} | {mp} | {pub} | {analytic_qbar[i]:.2f} | {ours(sim['trace.red_average_max', name])} |")
    print("\n#### Table 3, drops at the RED gateway (SSthresh 15/15, r = 59 ms, min_th 5, max_p 0.1)\n\n| case | max_th | published | ours: mean drops per run | matched |\n|---|---|---|---|---|")
    for i, (name, mx, pub) in enumerate([("base", 15, "no"), ("max_th-8", 8, "no"), ("max_th-7", 7, "yes")]):
        r = sim["drops", name]
        print(f"| {i + 1} | {mx} | {pub} | {r['ours']:.3g} ± {(r['ci_high'] - r['ci_low']) / 2:.2g} | {'yes' if r['matched'] else 'no'} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--duration", type=float, default=600.0)
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "reproductions")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    table3(args)
    lossy_link(args, args.out)
    print(f"\n(run time {time.perf_counter() - t0:.0f} s, {args.seeds} seeds, {args.duration:g} s per lossy-link run)")


if __name__ == "__main__":
    main()
