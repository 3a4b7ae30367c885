"""Where `rttlab tune`'s time goes, per phase: the search on all data (what `rttlab tune` did
before cross-validation chose the recommendation), the folds' searches, and scoring the
candidates on every held-out block. Same run, same process, so the ratio of the phases is
measured in one session (BENCHMARKS.md). ``--compare``: the default folds (a search each) against
``--shared-folds`` in one process after a warm-up, with both answers.

    python benchmarks/bench_tune_cv.py TRACES… [--budget 300] [--folds 5] [-e a,b,…]
                                       [--shared-folds | --compare]
"""

from __future__ import annotations

import argparse
import os
import resource
import time

from rttlab.trace.tune import load_trace, tune


def once(traces, names, args, shared: bool):
    marks: list[tuple[str, float]] = []
    start, cpu = time.perf_counter(), time.process_time()

    def progress(text: str, done: int, planned: int) -> None:
        marks.append((text, time.perf_counter() - start))

    result = tune(
        traces,
        names,
        budget=args.budget,
        folds=args.folds,
        progress=progress,
        shared_folds=shared,
    )
    return result, marks, time.perf_counter() - start, time.process_time() - cpu


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--budget", type=int, default=300)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("-e", "--estimators", default=None)
    ap.add_argument("--shared-folds", action="store_true")
    ap.add_argument("--compare", action="store_true")
    args = ap.parse_args()
    names = args.estimators.split(",") if args.estimators else None
    traces = [load_trace(p) for p in args.traces]
    if args.compare:
        tune(traces[:1], ["linux"], budget=16)  # warm-up: imports, the registry
        rows = []
        for shared in (False, True):
            result, _, wall, cpu = once(traces, names, args, shared)
            h = result.recommendation["held_out"]
            rows.append((wall, cpu))
            print(
                f"{'--shared-folds' if shared else 'a search per fold'}: wall {wall:.1f} s, CPU {cpu:.1f} s, load {os.getloadavg()[0]:.1f}\n"
                f"  {result.cv['headline']}\n"
                f"  held out {h['bad_timeout_rate']:.4%} {[round(x, 5) for x in h['bad_timeout_rate_ci']]}, W {h['wait_mean_s']:.4f} s, {h['cells_held']} of {h['cells']} blocks; "
                f"fold-tuned points held on {sum(f.get('holds', False) for f in result.cv['fold_table'])} of {len(result.cv['fold_table'])}",
                flush=True,
            )
        print(f"ratio: wall {rows[0][0] / rows[1][0]:.1f}×, CPU {rows[0][1] / rows[1][1]:.1f}×")
        return
    result, marks, total, _ = once(traces, names, args, args.shared_folds)
    # The search on all data ends at the first fold's first mark; scoring starts at its mark.
    fold_start = next(t for text, t in marks if text.startswith("fold "))
    scoring = next(t for text, t in marks if text.startswith("scoring "))
    load = os.getloadavg()[0]
    print(
        f"{len(result.inputs)} inputs, {result.samples:,} scored samples, {len(result.methods)} estimators, budget {args.budget}, {args.folds} folds{', shared folds' if args.shared_folds else ''}; load {load:.1f} on {os.cpu_count()} cores"
    )
    print(f"  search on all data (the fronts, the in-sample fit): {fold_start:8.1f} s")
    print(f"  the folds' searches:                                {scoring - fold_start:8.1f} s")
    print(f"  scoring the candidates on every held-out block:     {total - scoring:8.1f} s")
    print(
        f"  total {total:.1f} s: {total / fold_start:.1f}× the search on all data alone; peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MiB"
    )
    print(f"  answer: {result.cv['headline']}")


if __name__ == "__main__":
    main()
