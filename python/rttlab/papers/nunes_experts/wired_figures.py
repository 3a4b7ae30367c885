"""The figure and tables of docs/reproductions/nunes-wired.md (Nunes et al. 2011, Table II and
§IV-C) from the stored runs of `rttlab reproduce nunes-wired` and its part nunes-wired-trace:

    rttlab reproduce nunes-wired --figures docs/reproductions

Reads the store only. Writes nunes-wired-tables.md (ours, mean and 95 % Student-t half-width over
the seeds, beside Table II's means; the ratios to Jacobson against Table II's) and
nunes-wired.png: (a) the prediction error by both definitions, in 4 ms ticks; (b) the ratios to
Jacobson against Table II's; (c) 200 RTT samples of one S2 transfer (seed 1, the part's runs) with
the predictions Jacobson and Experts made before each (Nunes et al. 2011's Fig. 9 shows the same
for a Linux transfer).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from rttlab.experiments.store import Store  # noqa: E402

TABLE_II = {  # Nunes et al. 2011, Table II: Eifel, Jacobson, Experts
    "S1-wired": {
        "error": (11.21, 8.19, 5.10),
        "cwnd": (61.55, 69.82, 74.87),
        "rextmits": (26.40, 31.12, 13.02),
    },
    "S2-lossy": {
        "error": (114.52, 74.11, 67.64),
        "cwnd": (55.38, 66.71, 74.89),
        "rextmits": (314.20, 367.70, 250.80),
    },
    "S3-lossy-both": {
        "error": (298.24, 199.23, 131.65),
        "cwnd": (18.91, 31.08, 38.11),
        "rextmits": (204.62, 363.21, 159.61),
    },
}
ESTIMATORS = [("linux", "Jacobson"), ("fixed-share", "Experts"), ("eifel", "Eifel")]
SCENARIOS = ["S1-wired", "S2-lossy", "S3-lossy-both", "bursty"]


def draw(rep: Any, store: Store, dst: Path) -> list[Path]:
    """Write nunes-wired-tables.md and nunes-wired.png into ``dst``; returns them. ``rep``:
    nunes-wired (its part nunes-wired-trace holds the traced transfer)."""
    primary = next(x for x in rep.readings if x.primary)
    runs, flows = primary.stored(store)
    doc = {
        "rows": primary.compare(runs, flows, store.series),
        "reports": primary.reports(runs, flows, store.series),
    }
    (part,) = (p for p in rep.parts if p.name == "nunes-wired-trace")
    md = dst / "nunes-wired-tables.md"
    md.write_text(tables(doc))
    png = dst / "nunes-wired.png"
    figure(doc, trace(part, store), png)
    return [md, png]


def cell(r: dict[str, Any]) -> str:
    h = (r["ci_high"] - r["ci_low"]) / 2
    return f"{r['ours']:.3g} ± {h:.2g}"


def tables(doc: dict[str, Any]) -> str:
    """The page's two Markdown tables: ours (mean ± 95 % half-width) beside Table II's means, and
    the ratios to Jacobson against Table II's."""
    md: list[str] = []
    reports = {
        rpt["metric"]: {
            (r["params"]["simulation.name"], r["params"]["estimator"]): r for r in rpt["rows"]
        }
        for rpt in doc["reports"]
    }
    published = {
        "flows.pred_error_before": "error",
        "flows.pred_error_after": "error",
        "flows.mean_cwnd": "cwnd",
        "flows.retransmissions": "rextmits",
    }
    md.append(
        "| scenario | estimator | error before (ticks) | error after (ticks) | Table II error | mean cwnd | Table II cwnd | retransmissions | Table II rextmits | spurious retx | timeouts |"
    )
    md.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in SCENARIOS:
        for est, label in ESTIMATORS:
            k = (name, est)
            pub = TABLE_II.get(name)
            col = {"eifel": 0, "linux": 1, "fixed-share": 2}[est]
            p = {m: (f"{pub[c][col]:g}" if pub else "—") for m, c in published.items()}
            md.append(
                f"| {name} | {label} | {cell(reports['flows.pred_error_before'][k])} | {cell(reports['flows.pred_error_after'][k])} | {p['flows.pred_error_before']} "
                f"| {cell(reports['flows.mean_cwnd'][k])} | {p['flows.mean_cwnd']} | {cell(reports['flows.retransmissions'][k])} | {p['flows.retransmissions']} "
                f"| {cell(reports['flows.retx_spurious'][k])} | {cell(reports['flows.timeouts'][k])} |"
            )
    md.append("")
    md.append("| ratio to Jacobson | scenario | ours | 95 % CI | Table II | direction |")
    md.append("|---|---|---:|---:|---:|---|")
    for r in doc["rows"]:
        metric = r["metric"].removesuffix(" ratio").removeprefix("flows.")
        est = dict(ESTIMATORS)[r["params"]["estimator"]]
        md.append(
            f"| {metric}, {est} | {r['params']['simulation.name']} | {r['ours']:.3f} | {r['ci_low']:.3f} … {r['ci_high']:.3f} | {r['published']:.3f} | {r['direction']} |"
        )
    return "\n".join(md) + "\n"


def trace(part: Any, store: Store) -> dict[str, Any]:
    """The traced S2 transfer of each estimator (the part's runs): its RTT trace, flow 0 (the
    measured transfer) only — time, sample, prediction."""
    runs = store.query(
        "SELECT f.hash, f.estimator FROM flows f JOIN sweep_runs s USING (hash) JOIN runs r USING (hash) WHERE s.sweep = ? AND f.flow = 0 AND r.status = 'ok' AND r.hash IN (SELECT unnest(?))",
        [part.sweep_name, part.planned(store)],
    )
    out = {}
    for h, est in runs.itertuples(index=False):
        rtt = store.series(h, "rtt")
        out[est] = rtt[rtt["flow"] == 0].reset_index(drop=True)
    return out


def figure(doc: dict[str, Any], tr: dict[str, Any], path: Path) -> None:
    """(a) the prediction errors, (b) their ratios to Jacobson's beside Table II's, (c) one
    transfer's samples and predictions (``tr``: the RTT trace per estimator)."""
    reports = {
        rpt["metric"]: {
            (r["params"]["simulation.name"], r["params"]["estimator"]): r for r in rpt["rows"]
        }
        for rpt in doc["reports"]
    }
    fig, axes = plt.subplots(3, 1, figsize=(7.5, 9.5), constrained_layout=True)
    ax = axes[0]
    width = 0.13
    for j, (metric, hatch) in enumerate(
        (("flows.pred_error_before", ""), ("flows.pred_error_after", "//"))
    ):
        for i, (est, label) in enumerate(ESTIMATORS):
            xs = [s + (i - 1) * 2 * width + (j - 0.5) * width for s in range(len(SCENARIOS))]
            rs = [reports[metric][(name, est)] for name in SCENARIOS]
            ax.bar(
                xs,
                [r["ours"] for r in rs],
                width,
                yerr=[
                    [r["ours"] - r["ci_low"] for r in rs],
                    [r["ci_high"] - r["ours"] for r in rs],
                ],
                color=f"C{i}",
                hatch=hatch,
                edgecolor="k",
                lw=0.4,
                capsize=2,
                label=f"{label}, {'before' if j == 0 else 'after'}",
            )
    ax.set_xticks(range(len(SCENARIOS)), SCENARIOS)
    ax.set_ylabel("mean |prediction − sample| (4 ms ticks)")
    seeds = max((r["n"] for r in doc["rows"]), default=0)
    ax.set_title(
        f"(a) prediction error, before and after the sample is absorbed ({seeds} seeds, 95 % CI)",
        fontsize=9,
    )
    ax.legend(fontsize=7, ncol=3)
    ax = axes[1]
    rows = [r for r in doc["rows"] if "pred_error" in r["metric"]]
    labels = []
    for k, r in enumerate(rows):
        before = "before" in r["metric"]
        est = r["params"]["estimator"]
        ax.errorbar(
            [k],
            [r["ours"]],
            yerr=[[r["ours"] - r["ci_low"]], [r["ci_high"] - r["ours"]]],
            fmt="o" if before else "^",
            color="C1" if est == "fixed-share" else "C2",
            capsize=2,
        )
        ax.plot([k], [r["published"]], "s", mfc="none", color="k")
        labels.append(
            f"{r['params']['simulation.name'].split('-')[0]} {dict(ESTIMATORS)[est]} {'bef.' if before else 'aft.'}"
        )
    ax.axhline(1, color="grey", lw=0.6)
    ax.set_yscale("log")
    ax.set_xticks(range(len(rows)), labels, rotation=45, ha="right", fontsize=7)
    ax.set_ylabel("error / Jacobson's (per seed)")
    ax.set_title(
        "(b) error ratio to Jacobson: ours (● before, ▲ after; 95 % CI) and Table II's (□)",
        fontsize=9,
    )
    ax = axes[2]
    start = 400
    j = tr["linux"].iloc[start : start + 200]
    f = tr["fixed-share"].iloc[start : start + 200]
    ax.plot(range(len(j)), j["sample"] * 1e3, ".", ms=3, color="k", label="RTT sample")
    ax.plot(
        range(len(j)),
        j["prediction"] * 1e3,
        "-",
        color="C0",
        lw=1,
        label="Jacobson (SRTT) before the sample",
    )
    ax.plot(
        range(len(f)),
        f["prediction"] * 1e3,
        "-",
        color="C1",
        lw=1,
        label="Experts (Fixed-Share) before the sample",
    )
    ax.set_xlabel(f"sample number (from the {start}th of one S2-lossy transfer, seed 1)")
    ax.set_ylabel("ms")
    ax.set_title("(c) predictions against the samples (cf. Nunes et al. 2011's Fig. 9)", fontsize=9)
    ax.legend(fontsize=7)
    fig.savefig(path, dpi=64)
    plt.close(fig)
