#!/usr/bin/env python3
"""Run scripts/ns3_compare.py over seeds and/or `--set` variations and summarise the spread.

    python scripts/ns3_sweep.py examples/scenarios/dumbbell-n1-red.toml --seeds 1-10
    python scripts/ns3_sweep.py examples/scenarios/dumbbell-n50-droptail.toml \\
        --vary flows.0.start_step=10ms --vary "flows.0.start=101ms flows.0.start_step=9.9ms"

Every run (each seed x each variation) is a fresh `ns3_compare.py --json` subprocess, one at a
time: ns-3's random streams depend on what ran before in the same process, and ns-3 is single-
threaded anyway. Prints one row per run as it finishes, then mean, sample std, min and max of the
aggregate goodput and the Jain index for rttlab and ns-3, and the differences of the means.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

COMPARE = Path(__file__).resolve().parent / "ns3_compare.py"


def seed_list(text: str) -> list[int]:
    """`1-10`, `1,3,5` or a mix (`1-3,7`)."""
    out = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out += range(int(lo), int(hi or lo) + 1)
    return out


def run(scenario: Path, overrides: list[str]) -> dict:
    cmd = [sys.executable, str(COMPARE), str(scenario), "--json"]
    for o in overrides:
        cmd += ["--set", o]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    if p.returncode != 0:
        raise SystemExit(f"ns3_sweep: {' '.join(cmd)} failed:\n{p.stderr[-2000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def summary(xs: list[float]) -> dict:
    return {"mean": statistics.fmean(xs), "std": statistics.stdev(xs) if len(xs) > 1 else 0.0,
            "min": min(xs), "max": max(xs)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenario", type=Path)
    ap.add_argument("--seeds", type=seed_list, default=[None], help="e.g. 1-10 or 1,2,5 (default: the scenario's)")
    ap.add_argument("--vary", action="append", default=[], metavar="'K=V [K=V ...]'",
                    help="one variation (space-separated --set assignments); repeat for several")
    ap.add_argument("--set", action="append", default=[], dest="common", metavar="K=V", help="applied to every run")
    ap.add_argument("--json", type=Path, metavar="FILE", help="also write the runs and the summary to FILE")
    args = ap.parse_args()

    runs = []
    print(f"{'seed':>4}  {'variation':28}{'rttlab Mb/s':>12}{'ns-3 Mb/s':>11}{'diff':>8}"
          f"{'rttlab Jain':>12}{'ns-3 Jain':>10}{'drops r/n':>13}", flush=True)
    for variation in args.vary or [""]:
        for seed in args.seeds:
            overrides = [*args.common, *variation.split(), *([f"simulation.seed={seed}"] if seed else [])]
            r = run(args.scenario, overrides)
            r["variation"] = variation
            runs.append(r)
            a, b = r["rttlab"], r["ns3"]
            print(f"{r['seed']:>4}  {variation:28}{a['goodput_bps'] / 1e6:12.3f}{b['goodput_bps'] / 1e6:11.3f}"
                  f"{a['goodput_bps'] / b['goodput_bps'] - 1:+8.1%}{a['jain']:12.4f}{b['jain']:10.4f}"
                  f"{'%d/%d' % (a['drops'], b['drops']):>13}", flush=True)

    stats = {sim: {k: summary([r[sim][k] for r in runs]) for k in ("goodput_bps", "jain")} for sim in ("rttlab", "ns3")}
    stats["goodput_mean_diff"] = stats["rttlab"]["goodput_bps"]["mean"] / stats["ns3"]["goodput_bps"]["mean"] - 1
    stats["jain_mean_diff"] = stats["rttlab"]["jain"]["mean"] - stats["ns3"]["jain"]["mean"]
    print(f"\n{f'{len(runs)} runs':20}" + "".join(f"{m:>9}" for m in ("mean", "std", "min", "max")))
    for sim in ("rttlab", "ns3"):
        for k, scale, label in (("goodput_bps", 1e-6, "goodput Mb/s"), ("jain", 1, "Jain")):
            s = stats[sim][k]
            print(f"{sim:7}{label:13}" + "".join(f"{s[m] * scale:9.4f}" for m in ("mean", "std", "min", "max")))
    print(f"mean goodput difference (rttlab / ns-3 - 1): {stats['goodput_mean_diff']:+.2%}")
    print(f"mean Jain difference (rttlab - ns-3): {stats['jain_mean_diff']:+.4f}")
    if args.json:
        args.json.write_text(json.dumps({"scenario": str(args.scenario), "runs": runs, "summary": stats}, indent=1))


if __name__ == "__main__":
    sys.exit(main())
