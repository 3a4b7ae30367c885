"""Where `rttlab tune`'s time goes, per phase: the search on all data (what `rttlab tune` did
before cross-validation chose the recommendation), the folds' searches, and scoring the
candidates on every held-out block. Same run, same process, so the ratio of the phases is
measured in one session (BENCHMARKS.md).

    python benchmarks/bench_tune_cv.py TRACES… [--budget 300] [--folds 5] [-e a,b,…]
"""

from __future__ import annotations

import argparse
import os
import resource
import time

from rttlab.trace.tune import tune


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--budget", type=int, default=300)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("-e", "--estimators", default=None)
    args = ap.parse_args()
    marks: list[tuple[str, float, int]] = []
    start = time.perf_counter()

    def progress(text: str, done: int, planned: int) -> None:
        marks.append((text, time.perf_counter() - start, done))

    names = args.estimators.split(",") if args.estimators else None
    result = tune(args.traces, names, budget=args.budget, folds=args.folds, progress=progress)
    total = time.perf_counter() - start
    # The search on all data ends at the first fold's first mark; scoring starts at its mark.
    fold_start = next(t for text, t, _ in marks if text.startswith("fold "))
    scoring = next(t for text, t, _ in marks if text.startswith("scoring "))
    load = os.getloadavg()[0]
    print(
        f"{len(result.inputs)} inputs, {result.samples:,} scored samples, {len(result.methods)} estimators, budget {args.budget}, {args.folds} folds; load {load:.1f} on {os.cpu_count()} cores"
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
