"""The figures and tables of docs/reproductions/spectcp.md (SpecTCP, Bai, Lilja & Atiquzzaman 2009:
§6.1 Table 3 and §6.2 Figs 4-7, 9-10) from the stored runs of `rttlab reproduce spectcp-figures`
and its parts (spectcp-snoop, spectcp-fairness, spectcp-cwnd, spectcp-table3):

    rttlab reproduce spectcp-figures --figures docs/reproductions

Reads the store only (runs, flows, channels and the window trace of spectcp-cwnd); writes
spectcp-lossy-link.svg, spectcp-fairness.svg, spectcp-cwnd.svg and spectcp-tables.md (the page's
Markdown tables: mean and 95 % Student-t CI over the stored seeds).

The goodput ratios the paper states are checked by `rttlab reproduce spectcp` (and again by
spectcp-figures); these add what a ratio cannot show. Definitions (the paper gives none beyond its
prose):
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
The bottleneck is the lossy link's data direction: channel 0 of the dumbbell ("bottleneck>").
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from rttlab.experiments.stats import t_interval  # noqa: E402
from rttlab.experiments.store import Store  # noqa: E402
from rttlab.palette import colour  # noqa: E402

BER = "topology.bottleneck.error.ber"
SCHEMES = {
    "spectcp": "SpecTCP",
    "reno": "Reno+ECN",
    "westwood+": "Westwood+ (ECN)",
    "snoop": "Snoop (Reno+ECN)",
    "vegas": "Vegas (ECN)",
}
SNOOP_COLS = [
    "snoop_local_dupack",
    "snoop_local_timeout",
    "snoop_local_dropped",
    "snoop_dupacks_suppressed",
    "snoop_dupacks_stray",
    "snoop_acks_regenerated",
]


def ci(xs: list[float]) -> tuple[float, float]:
    t = t_interval(xs, 0.95)
    return t["mean"], t["half_width"]


def fmt(m: float, h: float, digits: int = 3) -> str:
    return f"{m:.{digits}g} ± {h:.2g}" if not math.isnan(h) else f"{m:.{digits}g}"


def per_run(store: Store, rep: Any) -> Any:
    """One row per successful run of ``rep``'s sweep (the runs its spec plans): its BER (and cc), flow 0's goodput and bytes sent,
    and the bottleneck's (channel 0's) drop and Snoop counters."""
    snoop = ", ".join(f"c.{c}" for c in SNOOP_COLS)
    return store.query(
        f'SELECT r.hash, r.seed, r."{BER}" AS ber, f.cc, f.goodput_bps, f.bytes_sent, c.drops_overflow, c.drops_aqm, c.drops_corruption, {snoop} '
        "FROM runs r JOIN sweep_runs s USING (hash) JOIN flows f ON f.hash = r.hash AND f.flow = 0 "
        "JOIN channels c ON c.hash = r.hash AND c.channel = 0 WHERE s.sweep = ? AND r.status = 'ok' AND r.hash IN (SELECT unnest(?)) ORDER BY r.seed",
        [rep.sweep_name, rep.planned(store)],
    )


def draw(rep: Any, store: Store, dst: Path) -> list[Path]:
    """Write the figures and spectcp-tables.md into ``dst``; returns the files written. ``rep``:
    spectcp-figures (its parts name the other sweeps, at the same scale)."""
    parts = {p.name: p for p in rep.parts}
    md: list[str] = []
    written = [
        *lossy_link(rep, parts["spectcp-snoop"], store, dst, md),
        *fairness(parts["spectcp-fairness"], store, dst, md),
        cwnd(parts["spectcp-cwnd"], store, dst),
    ]
    table3(parts["spectcp-table3"], store, md)
    n = store.query(
        "SELECT count(*) AS n FROM sweep_runs WHERE sweep IN (SELECT unnest(?)) AND hash IN (SELECT unnest(?))",
        [
            [rep.sweep_name, *(p.sweep_name for p in rep.parts)],
            [h for x in (rep, *rep.parts) for h in x.planned(store)],
        ],
    )["n"].iloc[0]
    md.append(
        f"\n({n} stored runs: `rttlab reproduce {rep.name}{' --quick' if rep.quick else ''}` and its parts)"
    )
    tables = dst / "spectcp-tables.md"
    tables.write_text("\n".join(md).lstrip("\n") + "\n")
    return [*written, tables]


def lossy_link(rep: Any, snoop: Any, store: Store, out: Path, md: list[str]) -> list[Path]:
    runs = per_run(store, rep)
    sn = per_run(store, snoop)
    sn["cc"] = "snoop"
    runs = pd.concat([runs, sn], ignore_index=True)
    bers = sorted(runs["ber"].unique())
    schemes = {cc: name for cc, name in SCHEMES.items() if cc in set(runs["cc"])}
    rows = {}
    for (cc, ber), g in runs.groupby(["cc", "ber"]):
        queue = g["drops_overflow"] + g["drops_aqm"]
        lost = queue + g["drops_corruption"]
        sent = g["bytes_sent"] / 1000  # 1000-byte segments
        mis = [q / lo for q, lo in zip(queue, lost) if lo]
        rows[cc, ber] = {
            "goodput": ci(list(g["goodput_bps"])),
            "mis": ci(mis),
            "closs": ci(list(queue / sent)),
            "ngood": ci(list(g["goodput_bps"] / sent)),
        }

    md.append(
        "\n#### Goodput (bit/s), Fig. 5\n\n| BER | "
        + " | ".join(schemes.values())
        + " | SpecTCP / Reno+ECN |\n|---|"
        + "---|" * (len(schemes) + 1)
    )
    for ber in bers:
        ratio = rows["spectcp", ber]["goodput"][0] / rows["reno", ber]["goodput"][0]
        md.append(
            f"| {ber:g} | "
            + " | ".join(fmt(*rows[cc, ber]["goodput"]) for cc in schemes)
            + f" | {ratio:.2f} |"
        )
    md.append(
        "\n#### Misprediction rate of the conditional Bernoulli predictor (p = 1), Fig. 6; congestion-loss rate, Fig. 9; normalised goodput, Fig. 10\n"
    )
    md.append(
        "| BER | SpecTCP misprediction | "
        + " | ".join(f"{v} cong. loss rate" for v in schemes.values())
        + " | "
        + " | ".join(f"{v} norm. goodput" for v in schemes.values())
        + " |"
    )
    md.append("|---|" + "---|" * (1 + 2 * len(schemes)))
    for ber in bers:
        md.append(
            f"| {ber:g} | {fmt(*rows['spectcp', ber]['mis'])} | "
            + " | ".join(fmt(*rows[cc, ber]["closs"]) for cc in schemes)
            + " | "
            + " | ".join(fmt(*rows[cc, ber]["ngood"]) for cc in schemes)
            + " |"
        )

    md.append(
        "\n#### What Snoop did per run (its counters on the lossy link's data direction; mean ± 95 % CI)\n"
    )
    md.append(
        "| BER | local retx on dup. ACK | local retx on timer | local retx dropped by the queue | dup. ACKs suppressed | dup. ACKs passed as a duplicate's | ACKs regenerated | packets corrupted on the link (data direction) |\n|---|---|---|---|---|---|---|---|"
    )
    for ber, g in sn.groupby("ber"):
        md.append(
            f"| {ber:g} | "
            + " | ".join(
                fmt(*ci([float(x) for x in g[c]])) for c in [*SNOOP_COLS, "drops_corruption"]
            )
            + " |"
        )

    fig, axes = plt.subplots(2, 2, figsize=(10, 7), constrained_layout=True)
    panels = [
        ("goodput", "Fig. 5: goodput", "goodput (kb/s)", 1e-3),
        ("mis", "Fig. 6: SpecTCP misprediction", "queue drops / all losses of the flow", 1.0),
        ("closs", "Fig. 9: congestion losses", "queue drops / data packets sent", 1.0),
        ("ngood", "Fig. 10: normalised goodput", "goodput per packet sent (b/s per packet)", 1.0),
    ]
    for ax, (key, title, ylabel, scale) in zip(axes.flat, panels):
        for cc, name in schemes.items():
            if key == "mis" and cc != "spectcp":
                continue
            m = [rows[cc, b][key][0] * scale for b in bers]
            h = [
                0 if math.isnan(rows[cc, b][key][1]) else rows[cc, b][key][1] * scale for b in bers
            ]
            ax.errorbar(bers, m, yerr=h, marker="o", capsize=3, label=name, color=colour(cc))
        ax.set_xscale("log")
        ax.set_xlabel("bit error rate (BER)")
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=7)
    path = out / "spectcp-lossy-link.svg"
    fig.savefig(path)
    plt.close(fig)
    return [path]


def fairness(rep: Any, store: Store, out: Path, md: list[str]) -> list[Path]:
    """Fig. 7: one SpecTCP (flow 0) and one Reno+ECN flow (flow 1) on the same link."""
    f = store.query(
        f'SELECT r.hash, r.seed, r."{BER}" AS ber, f.flow, f.goodput_bps FROM runs r JOIN sweep_runs s USING (hash) JOIN flows f ON f.hash = r.hash '
        "WHERE s.sweep = ? AND r.status = 'ok' AND r.hash IN (SELECT unnest(?)) ORDER BY r.seed, f.flow",
        [rep.sweep_name, rep.planned(store)],
    )
    md.append(
        "\n#### Fairness, Fig. 7: Jain's index of one SpecTCP and one Reno+ECN flow (goodputs in bit/s)\n\n| BER | Jain index | SpecTCP | Reno+ECN |\n|---|---|---|---|"
    )
    bers, fair = [], []
    for ber, g in f.groupby("ber"):
        j, a, b = [], [], []
        for _, run in g.groupby("hash", sort=False):
            x = run.sort_values("flow")["goodput_bps"].to_numpy()
            j.append(x.sum() ** 2 / (2 * (x**2).sum()) if x.any() else math.nan)
            a.append(x[0])
            b.append(x[1])
        bers.append(ber)
        fair.append(ci(j))
        md.append(f"| {ber:g} | {fmt(*ci(j))} | {fmt(*ci(a))} | {fmt(*ci(b))} |")
    fig, ax = plt.subplots(figsize=(5, 3.2), constrained_layout=True)
    ax.errorbar(
        bers,
        [x[0] for x in fair],
        yerr=[0 if math.isnan(x[1]) else x[1] for x in fair],
        marker="o",
        capsize=3,
        color=colour("spectcp"),
    )
    ax.set_xscale("log")
    ax.set_xlabel("bit error rate (BER)")
    ax.set_ylabel("Jain's fairness index")
    ax.set_title("SpecTCP vs Reno+ECN sharing the link (Fig. 7)", fontsize=9)
    path = out / "spectcp-fairness.svg"
    fig.savefig(path)
    plt.close(fig)
    return [path]


def cwnd(rep: Any, store: Store, out: Path) -> Path:
    """Fig. 4: cwnd evolution; three packets corrupted around 57 s, no bit errors otherwise."""
    runs = dict(
        store.query(
            "SELECT r.\"tcp.cc\" AS cc, r.hash FROM runs r JOIN sweep_runs s USING (hash) WHERE s.sweep = ? AND r.status = 'ok' AND r.hash IN (SELECT unnest(?))",
            [rep.sweep_name, rep.planned(store)],
        ).itertuples(index=False)
    )
    fig, axes = plt.subplots(2, 1, figsize=(8, 5), sharex=True, constrained_layout=True)
    for ax, cc in zip(axes, ["reno", "spectcp"]):
        w = store.series(runs[cc], "window")
        ax.step(w["time"], w["cwnd"] / 1000, where="post", color=colour(cc))
        ax.axvline(57, color="0.3", lw=0.8, ls="--")
        ax.set_ylabel("cwnd (1000-byte segments)")
        ax.set_title(
            f"{SCHEMES[cc]}: three packets corrupted at 57 s (dashed);\nreductions elsewhere are ECN-Echo",
            fontsize=9,
        )
    axes[-1].set_xlabel("time (s)")
    path = out / "spectcp-cwnd.svg"
    fig.savefig(path)
    plt.close(fig)
    return path


def table3(rep: Any, store: Store, md: list[str]) -> None:
    """§6.1 Table 3 (spectcp-table3's runs, compared as `rttlab reproduce spectcp-table3` does),
    as the page's Markdown tables: Q(t)_max under every reading, the rest under the primary."""
    by_reading: dict[str, dict[tuple[str, str], dict[str, Any]]] = {}
    for x in rep.readings:
        runs, flows = x.stored(store)
        rows = x.compare(runs, flows, store.series) if len(runs) else []
        by_reading[x.reading] = {(r["metric"], r["params"]["simulation.name"]): r for r in rows}
    primary = next(x.reading for x in rep.readings if x.primary)
    sim = by_reading[primary]
    analytic_q, analytic_qbar = ([r["ours"] for r in m["rows"]] for m in rep.models())

    def ours(r: dict[str, Any] | None) -> str:
        if r is None:
            return "—"
        return f"{r['ours']:.3g} ± {(r['ci_high'] - r['ci_low']) / 2:.2g}" + (
            "" if r.get("matched", True) else " (not matched)"
        )

    heads = " | ".join(
        f"ours simulated, {name}{' (primary)' if name == primary else ''}" for name in by_reading
    )
    md.append(
        f"\n#### Table 3, maximum buffer Q(t)_max (packets), {sim['drops', 'base']['n']} seeds, under each reading\n\n| case | SSthresh | r | published analytic / sim | ours eq. (3) | {heads} |\n|---|---|---|---|---|{'---|' * len(by_reading)}"
    )
    for i, (name, ssth, r_ms, pub) in enumerate(
        [
            ("base", "15/15", 59, "19 / 18"),
            ("ssthresh-15-20", "15/20", 59, "24 / 23"),
            ("r-99ms", "15/15", 99, "12 / 13"),
        ]
    ):
        md.append(
            f"| {i + 1} | {ssth} | {r_ms} ms | {pub} | {analytic_q[i]:.2f} | "
            + " | ".join(ours(rows.get(("trace.queue_peak", name))) for rows in by_reading.values())
            + " |"
        )
    md.append(
        "\n#### Table 3, maximum average queue Q̄_max (packets), SSthresh 15/15, r = 59 ms\n\n| case | ω | min_th | max_th | max_p | published analytic / sim | ours eq. (8), default p, W | ours simulated |\n|---|---|---|---|---|---|---|---|"
    )
    for i, (name, mn, mx, mp, pub) in enumerate(
        [
            ("base", 5, 15, 0.1, "7 / 8"),
            ("max_p-0.2", 5, 15, 0.2, "7 / 7"),
            ("min_th-7-max_th-21", 7, 21, 0.1, "10 / 10"),
        ]
    ):
        md.append(
            f"| {i + 1} | 0.002 | {mn} | {mx} | {mp} | {pub} | {analytic_qbar[i]:.2f} | {ours(sim['trace.red_average_max', name])} |"
        )
    md.append(
        "\n#### Table 3, drops at the RED gateway (SSthresh 15/15, r = 59 ms, min_th 5, max_p 0.1)\n\n| case | max_th | published | ours: mean drops per run | matched |\n|---|---|---|---|---|"
    )
    for i, (name, mx, pub) in enumerate(
        [("base", 15, "no"), ("max_th-8", 8, "no"), ("max_th-7", 7, "yes")]
    ):
        r = sim["drops", name]
        md.append(
            f"| {i + 1} | {mx} | {pub} | {r['ours']:.3g} ± {(r['ci_high'] - r['ci_low']) / 2:.2g} | {'yes' if r['matched'] else 'no'} |"
        )
