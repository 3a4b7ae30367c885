#!/usr/bin/env python3
"""Sweep throughput on Dask: N runs of dumbbell-n10-droptail (60 s simulated, one seed per run)
with 1 and 2 local worker processes, into a fresh DuckDB store each time.

    python benchmarks/bench_sweep.py [--runs 200] [--big 1000]

Prints, per configuration: cluster start-up, sweep wall time (submission to last result stored),
runs per second, the runs' own wall time on the workers (Σ), the client's store-write time per
run, and the overhead per run (1 worker: sweep wall − Σ run wall, i.e. scheduling, transfer and
storing that did not overlap a run), and CPU time per run of the run itself (worker thread) and of
the client process (the LocalCluster's scheduler runs in it, and it writes the store) — CPU
figures do not depend on what else the machine runs. Figures for BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from rttlab.store import Store
from rttlab.sweep import Sweep, execute, start_client

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "examples" / "scenarios" / "dumbbell-n10-droptail.toml"


def one(runs: int, workers: int) -> dict:
    sweep = Sweep.from_dict({"sweep": {"name": f"bench-{runs}-{workers}", "scenario": str(SCENARIO), "replications": runs}})
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        client, cluster = start_client(workers=workers)
        client.wait_for_workers(workers)
        started = time.perf_counter() - t0
        # Warm every worker (import rttlab and pandas) so the sweep measures runs, not imports.
        client.run(lambda: __import__("rttlab.sweep"))
        with Store(Path(tmp) / "r.duckdb") as store:
            c0 = time.process_time()
            out = execute(sweep, store, client)
            client_cpu = time.process_time() - c0
            assert out.ok == runs, out.errors[:3]
            cpu = store.query("SELECT sum(cpu_s) AS s FROM runs")["s"].iloc[0]
        client.close()
        cluster.close()
    return {"runs": runs, "workers": workers, "startup_s": started, "wall_s": out.wall_s, "task_wall_s": out.task_wall_s, "store_s": out.store_s, "client_cpu_s": client_cpu, "run_cpu_s": cpu}


def show(r: dict) -> None:
    per = r["wall_s"] / r["runs"]
    print(
        f"{r['runs']:5d} runs, {r['workers']} worker(s): start-up {r['startup_s']:.1f} s, sweep {r['wall_s']:.2f} s "
        f"({r['runs'] / r['wall_s']:.1f} runs/s, {per * 1e3:.1f} ms/run), Σ run wall {r['task_wall_s']:.2f} s, "
        f"store {r['store_s'] / r['runs'] * 1e3:.1f} ms/run, overhead/run (1 worker) "
        f"{(r['wall_s'] - r['task_wall_s']) / r['runs'] * 1e3 if r['workers'] == 1 else float('nan'):.1f} ms; "
        f"CPU per run: the run {r['run_cpu_s'] / r['runs'] * 1e3:.1f} ms, the client (scheduler + store, same process) {r['client_cpu_s'] / r['runs'] * 1e3:.1f} ms",
        flush=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--big", type=int, default=1000)
    args = ap.parse_args()
    a = one(args.runs, 1)
    show(a)
    b = one(args.runs, 2)
    show(b)
    print(f"speed-up 2 workers vs 1 ({args.runs} runs): {a['wall_s'] / b['wall_s']:.2f}x", flush=True)
    if args.big:
        c = one(args.big, 2)
        show(c)
        print(f"{args.big}-run sweep on 2 workers: {c['wall_s']:.1f} s sweep, {c['wall_s'] + c['startup_s']:.1f} s with cluster start-up")


if __name__ == "__main__":
    main()
