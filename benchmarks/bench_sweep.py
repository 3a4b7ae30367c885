#!/usr/bin/env python3
"""Sweep throughput on Dask: N runs of dumbbell-n10-droptail (60 s simulated, one seed per run)
with 1 and 2 local worker processes, into a fresh DuckDB store each time.

    python benchmarks/bench_sweep.py [--runs 200] [--repeat 3] [--big 1000] [--big-repeat 3]

The 1- and 2-worker sweeps alternate `--repeat` times in one session (the machine's load drifts;
alternating keeps the two comparable). Per sweep it prints: the load average, cluster start-up,
the time to load the sweep (expand and hash every run), sweep wall time (submission to last
result stored), the runs' own wall time on the workers (Σ), the overhead per run (1 worker:
sweep wall − Σ run wall, i.e. scheduling, transfer and storing that did not overlap a run), and
CPU time per run: the run itself (its worker thread), the worker processes (the run plus Dask's
per-task work), and the client process (the LocalCluster's scheduler runs in it, and it writes
the store). CPU figures depend far less on the machine's other load than wall times do; from
them, `model` gives the speed-up two workers would reach on two otherwise idle cores,
2 · worker CPU / (worker CPU + client CPU) per run (capped at 2). Figures for BENCHMARKS.md.

`--ceiling` first measures what two cores give without Dask or a store: the same N runs
(`rttlab.experiments.sweep.run_one`, the task's own work) in one plain process, then split over two
processes started together (N/2 each) — the best speed-up any sweep runner can reach here.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from rttlab.experiments.store import Store
from rttlab.experiments.sweep import Sweep, execute, start_client

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "examples" / "scenarios" / "dumbbell-n10-droptail.toml"


def one(runs: int, workers: int) -> dict:
    load_before = os.getloadavg()[0]
    t0 = time.perf_counter()
    sweep = Sweep.from_dict(
        {
            "sweep": {
                "name": f"bench-{runs}-{workers}",
                "scenario": str(SCENARIO),
                "replications": runs,
            }
        }
    )
    load_s = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        client, cluster = start_client(workers=workers)
        client.wait_for_workers(workers)
        started = time.perf_counter() - t0
        # Warm every worker (import rttlab and pandas) so the sweep measures runs, not imports.
        client.run(lambda: __import__("rttlab.experiments.sweep") is not None)
        with Store(Path(tmp) / "r.duckdb") as store:
            w0 = client.run(time.process_time)
            c0 = time.process_time()
            out = execute(sweep, store, client)
            client_cpu = time.process_time() - c0
            w1 = client.run(time.process_time)
            assert out.ok == runs, out.errors[:3]
            cpu = store.query("SELECT sum(cpu_s) AS s FROM runs")["s"].iloc[0]
        client.close()
        cluster.close()
    return {
        "runs": runs,
        "workers": workers,
        "load": (load_before + os.getloadavg()[0]) / 2,
        "sweep_load_s": load_s,
        "startup_s": started,
        "wall_s": out.wall_s,
        "task_wall_s": out.task_wall_s,
        "store_s": out.store_s,
        "store_cpu_s": out.store_cpu_s,
        "commits": out.commits,
        "client_cpu_s": client_cpu,
        "worker_cpu_s": sum(w1[k] - w0[k] for k in w0),
        "run_cpu_s": cpu,
    }


def _plain(tasks: list, barrier, queue) -> None:
    """A plain process: run its share of the runs in-process once every process is ready."""
    from rttlab.experiments.sweep import run_one

    run_one(tasks[0])  # warm: imports, first allocation
    barrier.wait()
    t0, c0 = time.perf_counter(), time.process_time()
    for t in tasks:
        out = run_one(t)
        assert out["status"] == "ok", out
    queue.put((t0, time.perf_counter(), time.process_time() - c0))


def ceiling(runs: int) -> tuple[float, float]:
    """Wall time of ``runs`` runs in one plain process and split over two (no Dask, no store);
    the clock runs from when every process is ready to when the last one ends."""
    import multiprocessing as mp

    from rttlab.experiments.sweep import task_of

    sweep = Sweep.from_dict(
        {"sweep": {"name": "ceiling", "scenario": str(SCENARIO), "replications": runs}}
    )
    tasks = [task_of(sweep, r) for r in sweep.runs]
    ctx = mp.get_context("spawn")
    walls = []
    for procs in (1, 2):
        barrier, queue = ctx.Barrier(procs), ctx.Queue()
        ps = [
            ctx.Process(target=_plain, args=(tasks[i::procs], barrier, queue)) for i in range(procs)
        ]
        load_before = os.getloadavg()[0]
        for p in ps:
            p.start()
        got = [queue.get() for _ in ps]
        for p in ps:
            p.join()
        wall = max(g[1] for g in got) - min(g[0] for g in got)
        cpu = sum(g[2] for g in got)
        walls.append(wall)
        print(
            f"ceiling: {runs} runs in {procs} plain process(es), load {(load_before + os.getloadavg()[0]) / 2:.1f}: "
            f"{wall:.2f} s wall, CPU per run {cpu / runs * 1e3:.1f} ms",
            flush=True,
        )
    print(f"ceiling: speed-up of 2 plain processes vs 1: {walls[0] / walls[1]:.2f}x", flush=True)
    return walls[0], walls[1]


def show(r: dict) -> None:
    n = r["runs"]
    per = r["wall_s"] / n
    overhead = (r["wall_s"] - r["task_wall_s"]) / n * 1e3 if r["workers"] == 1 else float("nan")
    worker, client = r["worker_cpu_s"] / n, r["client_cpu_s"] / n
    print(
        f"{n:5d} runs, {r['workers']} worker(s), load {r['load']:.1f}: start-up {r['startup_s']:.1f} s, load sweep {r['sweep_load_s']:.2f} s, "
        f"sweep {r['wall_s']:.2f} s ({n / r['wall_s']:.1f} runs/s, {per * 1e3:.1f} ms/run), Σ run wall {r['task_wall_s']:.2f} s, "
        f"store {r['store_s'] / n * 1e3:.1f} ms/run ({r['store_cpu_s'] / n * 1e3:.1f} ms CPU, {n / max(r['commits'], 1):.1f} runs per commit), overhead/run (1 worker) {overhead:.1f} ms; CPU per run: the run "
        f"{r['run_cpu_s'] / n * 1e3:.1f} ms, worker processes {worker * 1e3:.1f} ms, client {client * 1e3:.1f} ms "
        f"(model: {min(2.0, 2 * worker / (worker + client)):.2f}x on 2 idle cores)",
        flush=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--big", type=int, default=1000)
    ap.add_argument("--big-repeat", type=int, default=3)
    ap.add_argument(
        "--ceiling",
        action="store_true",
        help="First measure N runs in 1 vs 2 plain processes (no Dask, no store).",
    )
    args = ap.parse_args()
    if args.ceiling:
        ceiling(args.runs)
    ratios = []
    for i in range(args.repeat):
        a = one(args.runs, 1)
        show(a)
        b = one(args.runs, 2)
        show(b)
        ratios.append(a["wall_s"] / b["wall_s"])
        print(
            f"round {i + 1}: speed-up 2 workers vs 1 ({args.runs} runs): {ratios[-1]:.2f}x",
            flush=True,
        )
    if ratios:
        print(
            f"speed-up over {len(ratios)} rounds: median {statistics.median(ratios):.2f}x, min {min(ratios):.2f}x, max {max(ratios):.2f}x",
            flush=True,
        )
    for _ in range(args.big_repeat if args.big else 0):
        c = one(args.big, 2)
        show(c)
        total = c["sweep_load_s"] + c["startup_s"] + c["wall_s"]
        print(
            f"{args.big}-run sweep on 2 workers: {c['wall_s']:.1f} s sweep, {total:.1f} s with loading the sweep and cluster start-up",
            flush=True,
        )


if __name__ == "__main__":
    main()
