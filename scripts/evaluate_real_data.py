"""Bad-timeout rate and wait W per estimator on the shared real data, with each estimator's own
floor and with floors equalised (the numbers quoted in docs/metrics.md's worked example).

    python scripts/evaluate_real_data.py [../shared] [--min-rto 0.2]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import rttlab

NAMES = ["rfc6298", "linux", "quic", "eifel", "peak-hopper", "fixed-share", "ca-rto"]


def line(label: str, result) -> str:
    cells = []
    for r in sorted(result.rows, key=lambda r: NAMES.index(r["estimator"].split("(")[0])):
        name = r["estimator"].split("(")[0]
        mark = "◆" if r["pareto"] else ""
        if r["bad_timeout_rate"] is None:
            cells.append(f"{name} —")
        else:
            cells.append(
                f"{name} {r['bad_timeout_rate'] * 100:.2f}% / {r['wait_mean_s'] * 1e3:,.0f}{mark}"
            )
    return f"| {label} | " + " | ".join(cells) + " |"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("shared", nargs="?", default="../shared")
    ap.add_argument("--min-rto", type=float, default=0.2)
    args = ap.parse_args()
    root = Path(args.shared)
    inputs = sorted((root / "rtt-series").glob("*.csv")) + sorted(
        (root / "captures").glob("*.pcap*")
    )
    print("| input | " + " | ".join(f"{n} bad% / W ms" for n in NAMES) + " |")
    print("|---|" + "---|" * len(NAMES))
    for path in inputs:
        try:
            own = rttlab.evaluate(path, NAMES, by=None)
        except rttlab.InputError as e:
            print(f"| {path.name} | skipped: {str(e).split(':', 1)[1].strip()[:60]} |")
            continue
        equal = rttlab.evaluate(path, NAMES, by=None, min_rto=args.min_rto)
        scored = own.rows[0]["samples"]
        print(line(f"{path.name} ({scored:,} scored)", own))
        print(line(f"  with --min-rto {args.min_rto * 1e3:g}ms", equal))


if __name__ == "__main__":
    main()
