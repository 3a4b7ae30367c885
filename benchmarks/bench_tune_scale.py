"""`rttlab tune` on a day of traffic: the command a user runs, end to end in fresh processes, with
``--search halving`` against the exhaustive search in the same session (BENCHMARKS.md).

    python benchmarks/bench_tune_scale.py day [--samples 1000000] [--out DIR]
    python benchmarks/bench_tune_scale.py compare TRACES… [--budget 300]

``day`` writes two series of ``--samples`` RTTs each (the four long ../shared/rtt-series traces
laid end to end and repeated, each RTT times a seeded log-normal factor e^N(0, 0.05), so every
run reads the same bytes), then times ``rttlab tune DAY1 DAY2 --validate --json`` (every
estimator, the default budget and folds): wall time, CPU, peak RSS of the process, and the answer.

``compare`` runs ``rttlab tune TRACES --validate --json`` with ``--search exhaustive`` and then
with ``--search halving`` and checks what the issue asks: the same recommendation, or one whose
held-out bad-timeout rate and W (the ``--validate`` bootstrap, leave one trace out) lie inside the
exhaustive answer's 95 % intervals.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

SHARED = Path(__file__).resolve().parents[1] / ".." / "shared" / "rtt-series"
LONG = ("004", "005", "006", "010")


def make_day(out: Path, samples: int, seed: int = 7) -> list[Path]:
    """Two series of ``samples`` RTTs (ms, one per line) from the shared long traces."""
    src = [np.loadtxt(SHARED / f"tyrell_roundtrip{n}.csv", comments="#", ndmin=1) for n in LONG]
    rng = np.random.default_rng(seed)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for k, pair in enumerate(((0, 1), (2, 3))):
        parts, n = [], 0
        while n < samples:
            for j in pair:
                parts.append(src[j] * np.exp(rng.normal(0.0, 0.05, len(src[j]))))
                n += len(src[j])
        path = out / f"day{k + 1}.csv"
        np.savetxt(path, np.concatenate(parts)[:samples], fmt="%.3f")
        paths.append(path)
    return paths


def run(args: list[str]) -> tuple[dict, float, float, float]:
    """``rttlab ARGS`` in a fresh process: (its JSON, wall s, CPU s, peak RSS MiB)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    exe = shutil.which("rttlab") or sys.exit("rttlab is not on PATH: make install first")
    done = subprocess.run([exe, *args], capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"rttlab {' '.join(args)} failed: {done.stderr.strip()[-400:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    # ru_maxrss of RUSAGE_CHILDREN is the largest child so far: each call is measured alone
    # only if it is the largest yet, so the table gives it as "at most".
    return json.loads(done.stdout), wall, cpu, after.ru_maxrss / 1024


def answer(doc: dict) -> str:
    r = doc["recommendation"]
    h = r["held_out"]
    return (
        f"{r['headline']}\n    cross-validation: held out {h['bad_timeout_rate']:.3%} "
        f"[{h['bad_timeout_rate_ci'][0]:.3%}, {h['bad_timeout_rate_ci'][1]:.3%}], W {h['wait_mean_s']:.4f} s, "
        f"{h['cells_held']} of {h['cells']} blocks"
    )


def held(doc: dict) -> dict:
    return doc["validation"]["held_out"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    day = sub.add_parser("day", help="time tune on two generated series")
    day.add_argument("--samples", type=int, default=1_000_000)
    day.add_argument("--out", type=Path, default=Path("/tmp/rttlab-day"))
    cmp_ = sub.add_parser("compare", help="exhaustive vs halving on the same inputs")
    cmp_.add_argument("traces", nargs="+")
    cmp_.add_argument("--budget", type=int, default=300)
    args = ap.parse_args()
    print(f"{os.cpu_count()} cores; load {os.getloadavg()[0]:.1f} at start", flush=True)
    if args.what == "day":
        paths = make_day(args.out, args.samples)
        doc, wall, cpu, rss = run(["tune", *map(str, paths), "--validate", "--json"])
        print(
            f"rttlab tune {' '.join(p.name for p in paths)} --validate ({doc['samples']:,} scored samples, "
            f"{len(doc['methods'])} estimators): wall {wall:.1f} s, CPU {cpu:.1f} s, peak RSS {rss:,.0f} MiB; "
            f"load {os.getloadavg()[0]:.1f} at end"
        )
        print("  " + answer(doc))
        return
    common = ["tune", *args.traces, "--validate", "--json", "--budget", str(args.budget)]
    docs = {}
    for how in ("exhaustive", "halving"):
        doc, wall, cpu, rss = run([*common, "--search", how])
        docs[how] = doc
        v = held(doc)
        print(
            f"--search {how}: wall {wall:.1f} s, CPU {cpu:.1f} s, peak RSS ≤ {rss:,.0f} MiB; load {os.getloadavg()[0]:.1f}\n"
            f"  {answer(doc)}\n"
            f"    --validate: held out {v['bad_timeout_rate']:.3%} [{v['bad_timeout_rate_ci'][0]:.3%}, {v['bad_timeout_rate_ci'][1]:.3%}], "
            f"W {v['wait_mean_s']:.4f} s [{v['wait_mean_s_ci'][0]:.4f}, {v['wait_mean_s_ci'][1]:.4f}]",
            flush=True,
        )
    ex, ha = docs["exhaustive"], docs["halving"]
    same = ex["recommendation"]["setting"] == ha["recommendation"]["setting"]
    e, h = held(ex), held(ha)
    inside = (
        e["bad_timeout_rate_ci"][0] <= h["bad_timeout_rate"] <= e["bad_timeout_rate_ci"][1]
        or h["bad_timeout_rate"] <= e["bad_timeout_rate"]
    ) and (
        e["wait_mean_s_ci"][0] <= h["wait_mean_s"] <= e["wait_mean_s_ci"][1]
        or h["wait_mean_s"] <= e["wait_mean_s"]
    )
    print(
        "same recommendation"
        if same
        else f"different recommendation; halving's held-out rate and W {'are' if inside else 'are NOT'} within (or better than) the exhaustive answer's intervals"
    )


if __name__ == "__main__":
    main()
