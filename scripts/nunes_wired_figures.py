"""Figure and tables of docs/reproductions/nunes-wired.md, from the store `rttlab reproduce
nunes-wired` wrote (its comparison.json) plus one traced transfer per estimator:

    rttlab reproduce nunes-wired --out reproduce-nunes-wired
    python scripts/nunes_wired_figures.py reproduce-nunes-wired [--out docs/reproductions]

Prints Markdown tables (ours, 95 % Student-t CI, beside Table II's means) and writes
nunes-wired.png: (a) the prediction error by both definitions, in 4 ms ticks; (b) the ratios to
Jacobson against Table II's; (c) 200 RTT samples of one S2 transfer with the predictions
Jacobson and Experts made before each (Nunes et al. 2011's Fig. 9 shows the same for a Linux transfer).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import rttlab
from rttlab.experiments.reproduce import Reproduction

TABLE_II = {  # Nunes et al. 2011, Table II: Eifel, Jacobson, Experts
    "S1-wired": {"error": (11.21, 8.19, 5.10), "cwnd": (61.55, 69.82, 74.87), "rextmits": (26.40, 31.12, 13.02)},
    "S2-lossy": {"error": (114.52, 74.11, 67.64), "cwnd": (55.38, 66.71, 74.89), "rextmits": (314.20, 367.70, 250.80)},
    "S3-lossy-both": {"error": (298.24, 199.23, 131.65), "cwnd": (18.91, 31.08, 38.11), "rextmits": (204.62, 363.21, 159.61)},
}
ESTIMATORS = [("linux", "Jacobson"), ("fixed-share", "Experts"), ("eifel", "Eifel")]
SCENARIOS = ["S1-wired", "S2-lossy", "S3-lossy-both", "bursty"]


def cell(r: dict) -> str:
    h = (r["ci_high"] - r["ci_low"]) / 2
    return f"{r['ours']:.3g} ± {h:.2g}"


def tables(doc: dict) -> None:
    reports = {rpt["metric"]: {(r["params"]["simulation.name"], r["params"]["estimator"]): r for r in rpt["rows"]} for rpt in doc["reports"]}
    published = {"flows.pred_error_before": "error", "flows.pred_error_after": "error", "flows.mean_cwnd": "cwnd", "flows.retransmissions": "rextmits"}
    print("| scenario | estimator | error before (ticks) | error after (ticks) | Table II error | mean cwnd | Table II cwnd | retransmissions | Table II rextmits | spurious retx | timeouts |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in SCENARIOS:
        for est, label in ESTIMATORS:
            k = (name, est)
            pub = TABLE_II.get(name)
            col = {"eifel": 0, "linux": 1, "fixed-share": 2}[est]
            p = {m: (f"{pub[c][col]:g}" if pub else "—") for m, c in published.items()}
            print(
                f"| {name} | {label} | {cell(reports['flows.pred_error_before'][k])} | {cell(reports['flows.pred_error_after'][k])} | {p['flows.pred_error_before']} "
                f"| {cell(reports['flows.mean_cwnd'][k])} | {p['flows.mean_cwnd']} | {cell(reports['flows.retransmissions'][k])} | {p['flows.retransmissions']} "
                f"| {cell(reports['flows.retx_spurious'][k])} | {cell(reports['flows.timeouts'][k])} |"
            )
    print()
    print("| ratio to Jacobson | scenario | ours | 95 % CI | Table II | direction |")
    print("|---|---|---:|---:|---:|---|")
    for r in doc["rows"]:
        metric = r["metric"].removesuffix(" ratio").removeprefix("flows.")
        est = dict(ESTIMATORS)[r["params"]["estimator"]]
        print(f"| {metric}, {est} | {r['params']['simulation.name']} | {r['ours']:.3f} | {r['ci_low']:.3f} … {r['ci_high']:.3f} | {r['published']:.3f} | {r['direction']} |")


def trace() -> dict:
    """One S2 transfer (seed 1) per estimator, with its RTT trace: time, sample, prediction."""
    rep = Reproduction.load("nunes-wired")
    out = {}
    for run in rep.sweep().runs:
        est = run.params["flows.0.tcp.rto"]["estimator"]
        if run.params["simulation.name"] != "S2-lossy" or run.scenario.seed != 1 or est == "eifel":
            continue
        rtt = rttlab.simulate(run.scenario, traces=["rtt"]).traces["rtt"]
        out[est] = rtt[rtt["flow"] == 0].reset_index(drop=True)
    return out


def figure(doc: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    reports = {rpt["metric"]: {(r["params"]["simulation.name"], r["params"]["estimator"]): r for r in rpt["rows"]} for rpt in doc["reports"]}
    fig, axes = plt.subplots(3, 1, figsize=(7.5, 9.5), constrained_layout=True)
    ax = axes[0]
    width = 0.13
    for j, (metric, hatch) in enumerate((("flows.pred_error_before", ""), ("flows.pred_error_after", "//"))):
        for i, (est, label) in enumerate(ESTIMATORS):
            xs = [s + (i - 1) * 2 * width + (j - 0.5) * width for s in range(len(SCENARIOS))]
            rs = [reports[metric][(name, est)] for name in SCENARIOS]
            ax.bar(xs, [r["ours"] for r in rs], width, yerr=[[r["ours"] - r["ci_low"] for r in rs], [r["ci_high"] - r["ours"] for r in rs]],
                   color=f"C{i}", hatch=hatch, edgecolor="k", lw=0.4, capsize=2, label=f"{label}, {'before' if j == 0 else 'after'}")
    ax.set_xticks(range(len(SCENARIOS)), SCENARIOS)
    ax.set_ylabel("mean |prediction − sample| (4 ms ticks)")
    ax.set_title("(a) prediction error, before and after the sample is absorbed (10 seeds, 95 % CI)", fontsize=9)
    ax.legend(fontsize=7, ncol=3)
    ax = axes[1]
    rows = [r for r in doc["rows"] if "pred_error" in r["metric"]]
    labels = []
    for k, r in enumerate(rows):
        before = "before" in r["metric"]
        est = r["params"]["estimator"]
        ax.errorbar([k], [r["ours"]], yerr=[[r["ours"] - r["ci_low"]], [r["ci_high"] - r["ours"]]], fmt="o" if before else "^", color="C1" if est == "fixed-share" else "C2", capsize=2)
        ax.plot([k], [r["published"]], "s", mfc="none", color="k")
        labels.append(f"{r['params']['simulation.name'].split('-')[0]} {dict(ESTIMATORS)[est]} {'bef.' if before else 'aft.'}")
    ax.axhline(1, color="grey", lw=0.6)
    ax.set_yscale("log")
    ax.set_xticks(range(len(rows)), labels, rotation=45, ha="right", fontsize=7)
    ax.set_ylabel("error / Jacobson's (per seed)")
    ax.set_title("(b) error ratio to Jacobson: ours (● before, ▲ after; 95 % CI) and Table II's (□)", fontsize=9)
    ax = axes[2]
    tr = trace()
    start = 400
    j = tr["linux"].iloc[start : start + 200]
    f = tr["fixed-share"].iloc[start : start + 200]
    ax.plot(range(len(j)), j["sample"] * 1e3, ".", ms=3, color="k", label="RTT sample")
    ax.plot(range(len(j)), j["prediction"] * 1e3, "-", color="C0", lw=1, label="Jacobson (SRTT) before the sample")
    ax.plot(range(len(f)), f["prediction"] * 1e3, "-", color="C1", lw=1, label="Experts (Fixed-Share) before the sample")
    ax.set_xlabel(f"sample number (from the {start}th of one S2-lossy transfer, seed 1)")
    ax.set_ylabel("ms")
    ax.set_title("(c) predictions against the samples (cf. Nunes et al. 2011's Fig. 9)", fontsize=9)
    ax.legend(fontsize=7)
    fig.savefig(path, dpi=64)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("store_dir", type=Path, help="the --out directory of `rttlab reproduce nunes-wired`")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "docs" / "reproductions")
    a = ap.parse_args()
    doc = json.loads((a.store_dir / "comparison.json").read_text())
    tables(doc)
    figure(doc, a.out / "nunes-wired.png")
    print(f"written: {a.out / 'nunes-wired.png'}")


if __name__ == "__main__":
    main()
