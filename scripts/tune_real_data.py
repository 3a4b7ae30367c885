"""The table of docs/tuning.md: `rttlab tune --validate` on every RTT series and capture of the
shared real data, one row per input (tuned on the first half by time, scored on the second),
then trace-wise cross-validation over all series and over all captures (leave one out).

    python scripts/tune_real_data.py [../shared] [--target 0.01] [--budget 300] [--confidence 0.95]

Every input is a row: inputs too small to split are listed with the reason."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from rttlab import InputError
from rttlab.trace.tune import TuneError, load_trace, tune


def pct(x: float) -> str:
    return f"{x * 100:.2f}"


def on_front(result, names: tuple[str, ...] = ("conformal", "quantile-experts")) -> str:
    """How many points of the joint front (distinct scores) are each new estimator's."""
    front = result.front().drop_duplicates(["bad_timeout_rate", "wait_mean_s"])
    return (
        " / ".join(str(int((front["estimator"] == n).sum())) for n in names) + f" of {len(front)}"
    )


def row(label: str, result, seconds: float) -> str:
    rec = result.recommendation
    v = result.validation
    rec_text = (
        f"`{rec['setting']}` ({pct(rec['bad_timeout_rate'])} % / {rec['wait_mean_s'] * 1e3:,.0f} ms)"
        if rec
        else "none meets the target"
    )
    h = v.get("held_out") if v else None
    if not h:
        return f"| {label} | {result.samples:,} | {rec_text} | — | {v['verdict'] if v else '—'} | — | — | {on_front(result)} | {seconds:.0f} s |"
    lo, hi = h["bad_timeout_rate_ci"]
    held = f"{pct(h['bad_timeout_rate'])} [{pct(lo)}, {pct(hi)}]"
    b = v.get("best_default")
    if b and b.get("wait_ratio"):
        versus = f"{h['wait_mean_s'] * 1e3:,.0f} vs {b['estimator']} {b['wait_mean_s'] * 1e3:,.0f} ({b['wait_ratio']:.2f}×)"
    elif b:
        versus = f"{h['wait_mean_s'] * 1e3:,.0f}; no default reaches {pct(h['bad_timeout_rate'])} % (lowest: {b['estimator']} {pct(b['bad_timeout_rate'])} %)"
    else:
        versus = f"{h['wait_mean_s'] * 1e3:,.0f}"
    folds = "; ".join(f"`{f['recommendation']}`" for f in v["folds"] if f.get("recommendation"))
    return f"| {label} | {result.samples:,} | {rec_text} | {folds} | {held} — {v['verdict']} | {h['samples']:,} in {h['units']} {h['unit']}s | {versus} | {on_front(result)} | {seconds:.0f} s |"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("shared", nargs="?", default="../shared")
    ap.add_argument("--target", type=float, default=0.01)
    ap.add_argument("--budget", type=int, default=300)
    ap.add_argument("--confidence", type=float, default=None)
    args = ap.parse_args()
    root = Path(args.shared)
    series = sorted((root / "rtt-series").glob("*.csv"))
    captures = sorted((root / "captures").glob("*.pcap*"))
    how = f", recommended at {args.confidence:.0%} confidence" if args.confidence else ""
    print(
        f"target bad-timeout rate {pct(args.target)} %{how}, budget {args.budget} points per estimator, seed 0\n"
    )
    print(
        "| input | scored samples | recommendation on all of it (bad % / W) | tuned on the held-in part | held-out bad % [95 % CI] — verdict | held out | held-out W ms vs best default at that bad rate | joint-front points of conformal / quantile-experts | time |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    usable = {"series": [], "captures": []}
    for kind, paths in (("series", series), ("captures", captures)):
        for path in paths:
            start = time.perf_counter()
            try:
                trace = load_trace(path)
                result = tune(
                    [trace],
                    target=args.target,
                    budget=args.budget,
                    validate=True,
                    confidence=args.confidence,
                )
            except (InputError, TuneError) as e:
                print(
                    f"| {path.name} | — | skipped: {str(e).replace(str(path) + ': ', '')} | | | | | | |",
                    flush=True,
                )
                continue
            usable[kind].append(trace)
            print(row(path.name, result, time.perf_counter() - start), flush=True)
    for kind, traces in usable.items():
        if len(traces) < 2:
            continue
        start = time.perf_counter()
        result = tune(
            traces,
            target=args.target,
            budget=args.budget,
            validate=True,
            confidence=args.confidence,
        )
        print(
            row(f"all {len(traces)} {kind}, leave one out", result, time.perf_counter() - start),
            flush=True,
        )


if __name__ == "__main__":
    main()
