"""The table of docs/tuning.md: `rttlab tune` (time-ordered cross-validation) on every RTT series
and capture of the shared real data, one row per input, then all series and all captures pooled.

    python scripts/tune_real_data.py [../shared] [--target 0.01] [--budget 300] [--folds 5]
                                     [--confidence 0.95] [--stack any] [--kinds series,captures]
                                     [--only A.csv,B.pcap] [--no-pooled] [--shared-folds]

Each input is cut into --folds contiguous blocks by time (fewer when it has fewer than 20 scored
samples per block, at least 2; the row says how many). Every input is a row: inputs too small to
cut are listed with the reason. The last line gives the fraction of inputs whose recommendation
kept the target in every held-out block."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from rttlab import InputError
from rttlab.trace.tune import TuneError, load_trace, tune
from rttlab.trace.tune_search import MIN_SAMPLES


def pct(x: float | None) -> str:
    return "—" if x is None else f"{x * 100:.2f}"


def ms(x: float | None) -> str:
    return "—" if x is None else f"{x * 1e3:,.0f}"


def row(label: str, result, folds: int, seconds: float) -> tuple[str, bool]:
    cv, rec = result.cv, result.recommendation
    h = rec["held_out"]
    lo, hi = h["bad_timeout_rate_ci"]
    kept = bool(h["holds_all"])
    held = (
        f"{pct(h['bad_timeout_rate'])} [{pct(lo)}, {pct(hi)}]; worst block {pct(h['worst_bad_timeout_rate'])}; "
        f"held in {h['cells_held']} of {h['cells']} blocks — {'kept' if kept else '**not kept**'}"
    )
    procedure = sum(f.get("holds", False) for f in cv["fold_table"])
    b, f = cv["best_default"], cv.get("best_floor")

    def versus(other) -> str:
        if other is None:
            return "—"
        tag = "" if other["holds_all"] else " (fails a block)"
        ratio = h["wait_mean_s"] / other["wait_mean_s"] if other["wait_mean_s"] else float("nan")
        return f"{ms(h['wait_mean_s'])} vs {ms(other['wait_mean_s'])}{tag}: {ratio:.2f}×"

    cal = "; ".join(f"{n}: {c['cells_held']}/{c['cells']}" for n, c in cv["calibration"].items())
    line = (
        f"| {label} | {result.samples:,} | {folds} | {cv['headline']} | {held} | {procedure} of {len(cv['fold_table'])} | "
        f"{versus(b)} ({b['estimator']}) | {versus(f)} | {cal or '—'} | {seconds:.0f} s |"
    )
    return line, kept


def folds_for(traces, wanted: int) -> int:
    return max(2, min(wanted, min(t.scored for t in traces) // MIN_SAMPLES))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("shared", nargs="?", default="../shared")
    ap.add_argument("--target", type=float, default=0.01)
    ap.add_argument("--budget", type=int, default=300)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--confidence", type=float, default=None)
    ap.add_argument("--stack", default="any")
    ap.add_argument(
        "--kinds", default="series,captures", help="which inputs: series, captures or both"
    )
    ap.add_argument("--only", default=None, help="comma-separated file names: only these inputs")
    ap.add_argument("--no-pooled", action="store_true", help="skip the pooled rows")
    ap.add_argument("--shared-folds", action="store_true", help="rttlab tune --shared-folds")
    args = ap.parse_args()
    kinds = set(args.kinds.split(","))
    only = set(args.only.split(",")) if args.only else None
    root = Path(args.shared)
    series = sorted((root / "rtt-series").glob("*.csv"))
    captures = sorted((root / "captures").glob("*.pcap*"))
    how = f", at {args.confidence:.0%} confidence" if args.confidence else ""
    print(
        f"target bad-timeout rate {pct(args.target)} %{how}, --stack {args.stack}, up to {args.folds} folds, budget {args.budget} points per estimator, seed 0\n"
    )
    print(
        "| input | scored samples | folds | the answer (first line of `rttlab tune`) | recommendation on the held-out blocks: bad % [95 % CI]; worst block; blocks held | each fold's tuned point held on its own unseen block | W ms vs best default | W ms vs one-knob Linux rto_min tuned the same way | conformal / quantile-experts calibration held (blocks) | time |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    usable: dict[str, list] = {"series": [], "captures": []}
    kept_n = total = 0
    for kind, paths in (("series", series), ("captures", captures)):
        if kind not in kinds:
            continue
        for path in paths:
            if only is not None and path.name not in only:
                continue
            start = time.perf_counter()
            try:
                trace = load_trace(path)
                folds = folds_for([trace], args.folds)
                while True:
                    try:
                        result = tune(
                            [trace],
                            target=args.target,
                            budget=args.budget,
                            confidence=args.confidence,
                            folds=folds,
                            stack=args.stack,
                            shared_folds=args.shared_folds,
                        )
                        break
                    except TuneError as e:
                        # A block by time short of 20 samples (connections are uneven): fewer.
                        if not str(e).startswith(f"--folds {folds}:") or folds == 2:
                            raise
                        folds -= 1
            except (InputError, TuneError) as e:
                print(
                    f"| {path.name} | — | — | skipped: {str(e).replace(str(path) + ': ', '')} | | | | | | |",
                    flush=True,
                )
                continue
            usable[kind].append(trace)
            line, kept = row(path.name, result, folds, time.perf_counter() - start)
            kept_n += kept
            total += 1
            print(line, flush=True)
    for kind, traces in usable.items():
        if len(traces) < 2 or args.no_pooled:
            continue
        start = time.perf_counter()
        folds = folds_for(traces, args.folds)
        try:
            result = tune(
                traces,
                target=args.target,
                budget=args.budget,
                confidence=args.confidence,
                folds=folds,
                stack=args.stack,
                shared_folds=args.shared_folds,
            )
        except TuneError as e:
            print(f"| all {len(traces)} {kind} | — | — | skipped: {e} | | | | | | |", flush=True)
            continue
        line, _ = row(
            f"all {len(traces)} {kind} pooled", result, folds, time.perf_counter() - start
        )
        print(line, flush=True)
    print(
        f"\nheld-out target kept on {kept_n} of {total} inputs ({kept_n / max(total, 1):.0%}; single inputs, pooled rows not counted)"
    )


if __name__ == "__main__":
    main()
