"""Sweeps on a real Dask cluster into a real DuckDB file: a scheduler and two worker processes on
loopback, one SIGKILLed mid-sweep; Ctrl-C and resume; failures stored, not fatal."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
import rttlab
from rttlab.experiments.sweep import Sweep, SweepError

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "examples" / "scenarios"
RTTLAB = [sys.executable, "-c", "from rttlab.cli.main import main; main()"]


def sweep_file(tmp_path: Path, body: str, name: str = "sweep.toml") -> Path:
    p = tmp_path / name
    p.write_text(body)
    return p


def slow_sweep(tmp_path: Path, runs: int) -> Path:
    """`runs` runs of a 50-flow dumbbell, each a few tenths of a second of CPU: long enough that a
    worker is busy when it is killed or the client interrupted."""
    return sweep_file(
        tmp_path,
        f"""
[sweep]
name = "slow"
scenario = "{SCENARIOS / "dumbbell-n50-droptail.toml"}"
replications = {runs}
[set]
"simulation.duration" = "60s"
"flows.0.start_jitter" = "50ms"
""",
    )


@pytest.fixture
def cluster(tmp_path: Path):
    """`dask scheduler` + two `dask worker` processes (one thread each, no nanny, so SIGKILL really
    ends the worker) on 127.0.0.1. Yields (scheduler file, [worker processes])."""
    sched_file = tmp_path / "scheduler.json"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    procs = []
    log = open(tmp_path / "dask.log", "w")  # noqa: SIM115 - closed at teardown
    procs.append(
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "distributed.cli.dask_scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--no-dashboard",
                "--scheduler-file",
                str(sched_file),
            ],
            stdout=log,
            stderr=log,
            env=env,
        )
    )
    deadline = time.monotonic() + 60
    while not sched_file.exists():
        assert time.monotonic() < deadline, "dask scheduler did not start"
        time.sleep(0.1)
    workers = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "distributed.cli.dask_worker",
                "--scheduler-file",
                str(sched_file),
                "--nthreads",
                "1",
                "--no-nanny",
                "--no-dashboard",
                "--host",
                "127.0.0.1",
                "--name",
                f"w{i}",
            ],
            stdout=log,
            stderr=log,
            env=env,
        )
        for i in range(2)
    ]
    procs += workers
    from distributed import Client

    with Client(scheduler_file=str(sched_file), timeout=60) as c:
        c.wait_for_workers(2, timeout=120)
    try:
        yield sched_file, workers
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        log.close()


def stored(db: Path) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as c:
        return c.execute("SELECT hash, status, worker FROM runs ORDER BY hash").fetchall()


def wait_for_lines(
    proc: subprocess.Popen, prefix: str, count: int, timeout: float = 300
) -> list[str]:
    lines = []
    deadline = time.monotonic() + timeout
    while sum(line.startswith(prefix) for line in lines) < count:
        assert time.monotonic() < deadline, f"no {count} '{prefix}' lines in time: {lines}"
        line = proc.stdout.readline()
        assert line, (
            f"sweep ended early (status {proc.wait()}): {lines} {proc.stderr.read()[-3000:]}"
        )
        lines.append(line)
    return lines


def test_a_sweep_survives_a_worker_killed_mid_run_and_stores_every_run_exactly_once(
    tmp_path, cluster
):
    sched_file, workers = cluster
    spec = slow_sweep(tmp_path, 16)
    db = tmp_path / "r.duckdb"
    proc = subprocess.Popen(
        [*RTTLAB, "sweep", str(spec), "--scheduler", str(sched_file), "--store", str(db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for_lines(proc, "run ", 3)
    workers[0].send_signal(signal.SIGKILL)  # mid-sweep: the other 13 runs are queued or running
    workers[0].wait()
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    rows = stored(db)
    expected = {r.hash for r in Sweep.load(spec).runs}
    assert len(rows) == 16 and {h for h, _, _ in rows} == expected
    assert all(status == "ok" for _, status, _ in rows), rows
    with duckdb.connect(str(db), read_only=True) as c:
        # Each run's 50 flows once: no partial or doubled result from the retried task.
        per_run = c.execute("SELECT hash, count(*) FROM flows GROUP BY hash").fetchall()
        assert sorted(n for _, n in per_run) == [50] * 16
        assert c.execute("SELECT count(*) FROM sweep_runs WHERE sweep = 'slow'").fetchone()[0] == 16
    # Every run was done by one of the two workers, and the survivor finished the sweep.
    pids = {w.rsplit(":", 1)[1] for _, _, w in rows}
    assert pids <= {str(workers[0].pid), str(workers[1].pid)}
    assert str(workers[1].pid) in pids


def test_ctrl_c_stops_cleanly_and_a_rerun_resumes_without_repeating_a_run(tmp_path):
    # 24 runs: the interrupt must land before the last one even when this reader lags behind a
    # busy machine's sweep (with 12, all were once stored before the signal was handled).
    runs = 24
    spec = slow_sweep(tmp_path, runs)
    db = tmp_path / "r.duckdb"
    # SIGINT's default disposition in the child: a shell starts background jobs with it ignored,
    # and Python then installs no KeyboardInterrupt handler (the test would measure the launcher).
    proc = subprocess.Popen(
        [*RTTLAB, "sweep", str(spec), "--workers", "1", "--store", str(db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    wait_for_lines(proc, "run ", 2)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, (out, err)
    assert "interrupted" in err and "Traceback" not in err, err
    first = stored(db)
    assert 2 <= len(first) < runs
    again = subprocess.run(
        [*RTTLAB, "sweep", str(spec), "--workers", "1", "--store", str(db)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert again.returncode == 0, again.stderr
    assert f"{len(first)} already in" in again.stdout
    assert sum(line.startswith("run ") for line in again.stdout.splitlines()) == runs - len(first)
    rows = stored(db)
    assert len(rows) == runs == len({h for h, _, _ in rows})
    assert set(first) <= set(rows)  # what was stored before the interrupt is untouched


def test_failing_runs_are_stored_with_their_error_the_sweep_goes_on_and_exits_1_with_a_count(
    tmp_path, cluster
):
    sched_file, _ = cluster
    spec = sweep_file(
        tmp_path,
        f"""
[sweep]
name = "mixed"
scenario = "{SCENARIOS / "dumbbell-n1-droptail.toml"}"
seeds = [1, 2]
traces = ["queue"]
[set]
"simulation.duration" = "2s"
"topology.bottleneck.error.kind" = "bernoulli"
[grid]
"topology.bottleneck.error.per" = [0, 0.01, 2]
""",
    )
    db = tmp_path / "r.duckdb"
    run = subprocess.run(
        [*RTTLAB, "sweep", str(spec), "--scheduler", str(sched_file), "--store", str(db)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 1, run.stderr
    assert "4 ok, 2 failed" in run.stdout
    assert (
        "rttlab: 2 of 6 runs of mixed failed; they are stored with their error" in run.stderr
        and "--retry-failed" in run.stderr
    )
    assert "Traceback" not in run.stderr
    # Resumed, the failures are still there (skipped, not run again): still a failure.
    again = subprocess.run(
        [*RTTLAB, "sweep", str(spec), "--scheduler", str(sched_file), "--store", str(db)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert again.returncode == 1 and "2 of 6 runs of mixed failed" in again.stderr, again.stderr
    # --retry-failed runs them again even when nothing else is left to run (they fail again).
    retry = subprocess.run(
        [
            *RTTLAB,
            "sweep",
            str(spec),
            "--scheduler",
            str(sched_file),
            "--store",
            str(db),
            "--retry-failed",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert (
        retry.returncode == 1
        and "2 to run" in retry.stdout
        and "0 ok, 2 failed, 4 skipped" in retry.stdout
    ), retry.stdout
    with duckdb.connect(str(db), read_only=True) as c:
        errors = c.execute(
            "SELECT \"topology.bottleneck.error.per\", error_kind, error FROM runs WHERE status = 'error'"
        ).fetchall()
        assert len(errors) == 2
        for per, kind, message in errors:
            assert (
                per == 2.0
                and kind == "ScenarioError"
                and "topology.bottleneck.error.per" in message
            )
        # Parameters keep their type: an integer 0 beside floats makes a DOUBLE column.
        assert (
            c.execute(
                "SELECT data_type FROM information_schema.columns WHERE column_name = 'topology.bottleneck.error.per'"
            ).fetchone()[0]
            == "DOUBLE"
        )
        ok = c.execute(
            "SELECT hash, goodput_bps, event_hash, seed FROM runs WHERE status = 'ok' AND \"topology.bottleneck.error.per\" = 0.01"
        ).fetchall()
    # The stored numbers are the simulator's own for that scenario and seed.
    base = rttlab.Scenario.load(SCENARIOS / "dumbbell-n1-droptail.toml")
    for h, goodput, event_hash, seed in ok:
        s = base.with_(
            {
                "simulation.duration": "2s",
                "topology.bottleneck.error.kind": "bernoulli",
                "topology.bottleneck.error.per": 0.01,
            }
        ).with_seed(seed)
        assert s.hash == h
        r = rttlab.simulate(s)
        assert (r.aggregate_goodput_bps, r.event_hash) == (goodput, event_hash)
        assert (db.parent / "r.duckdb.series" / h / "queue.parquet").is_file()


def test_sweep_files_expand_grid_times_zip_times_seeds():
    s = Sweep.from_dict(
        {
            "sweep": {
                "name": "g",
                "scenario": str(SCENARIOS / "dumbbell-n1-droptail.toml"),
                "replications": 3,
            },
            "grid": {"topology.bottleneck.bandwidth": ["5Mbps", "10Mbps"]},
            "zip": {"topology.bottleneck.delay": ["10ms", "40ms"], "flows.0.count": [1, 2]},
        }
    )
    assert len(s.runs) == 2 * 2 * 3 == len({r.hash for r in s.runs})
    assert {(r.params["topology.bottleneck.delay"], r.params["flows.0.count"]) for r in s.runs} == {
        ("10ms", 1),
        ("40ms", 2),
    }
    assert s.keys == ["topology.bottleneck.bandwidth", "topology.bottleneck.delay", "flows.0.count"]


@pytest.mark.parametrize(
    ("doc", "needle"),
    [
        ({"sweep": {"name": "x"}}, "sweep.scenario: missing"),
        ({"sweep": {"scenario": "nope.toml"}}, "cannot read scenario"),
        (
            {"sweep": {"scenario": str(SCENARIOS / "dumbbell-n1-droptail.toml"), "seeds": [1, -2]}},
            "sweep.seeds",
        ),
        (
            {
                "sweep": {"scenario": str(SCENARIOS / "dumbbell-n1-droptail.toml")},
                "zip": {"a.b": [1], "c.d": [1, 2]},
            },
            "different lengths",
        ),
        (
            {"sweep": {"scenario": str(SCENARIOS / "dumbbell-n1-droptail.toml"), "speed": 1}},
            "sweep.speed: unknown key",
        ),
        (
            {
                "sweep": {"scenario": str(SCENARIOS / "dumbbell-n1-droptail.toml")},
                "grid": {"topology.bottleneck.bandwidth": ["fast"]},
            },
            "topology.bottleneck.bandwidth",
        ),
    ],
)
def test_bad_sweep_files_name_the_key(doc, needle):
    with pytest.raises((SweepError, rttlab.ScenarioError), match=needle):
        Sweep.from_dict(doc, source="s.toml")


def test_the_cli_reports_a_bad_sweep_file_in_one_line(tmp_path):
    spec = sweep_file(tmp_path, '[sweep]\nscenario = "missing.toml"\n')
    r = subprocess.run(
        [*RTTLAB, "sweep", str(spec), "--store", str(tmp_path / "r.duckdb")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "missing.toml" in r.stderr


def test_the_cli_loads_no_experiment_dependency_until_a_command_needs_it():
    """`rttlab --help` must stay fast: dask, distributed, duckdb, scipy and matplotlib are imported
    inside the experiment commands, never when the CLI is built."""
    code = "import sys, rttlab.cli.main; print(sorted(m for m in ('dask', 'distributed', 'duckdb', 'scipy', 'matplotlib') if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "[]"


def _dies(task):
    raise RuntimeError("the worker-side task failed outside run_one")


def test_a_task_that_fails_outside_the_run_is_stored_as_a_failed_run_not_a_crash(
    tmp_path, monkeypatch
):
    # A run that keeps killing its worker ends as KilledWorker, an errored *future* rather than an
    # error result of run_one. The nunes-manet medium sweep once died on that (it tried to store
    # distributed's (type, exception, traceback) triple as a result). Make every task error the
    # same way, through a real in-process Dask cluster and a real DuckDB store.
    from distributed import Client, LocalCluster
    from rttlab.experiments import sweep as sweep_module
    from rttlab.experiments.store import Store

    monkeypatch.setattr(sweep_module, "run_one", _dies)
    s = Sweep.from_dict(
        {
            "sweep": {
                "name": "dies",
                "scenario": str(SCENARIOS / "dumbbell-n1-droptail.toml"),
                "seeds": [1, 2],
            }
        }
    )
    with (
        LocalCluster(
            n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
        ) as lc,
        Client(lc) as client,
    ):
        outcome = sweep_module.execute(s, Store(tmp_path / "r.duckdb"), client)
    assert (outcome.ok, outcome.failed) == (0, 2)
    with duckdb.connect(str(tmp_path / "r.duckdb"), read_only=True) as c:
        rows = c.execute("SELECT hash, status, error_kind, error FROM runs").fetchall()
    assert {h for h, *_ in rows} == {r.hash for r in s.runs}
    assert all(
        st == "error" and kind == "RuntimeError" and "outside run_one" in msg
        for _, st, kind, msg in rows
    )


def test_an_engine_missing_on_this_machine_is_refused_before_any_run(tmp_path, monkeypatch):
    import dataclasses

    from rttlab.experiments import simulators
    from rttlab.experiments import sweep as sweep_module
    from rttlab.experiments.store import Store

    real = simulators.get

    def without_rttlab(name: str):
        engine = real(name)
        if name == "rttlab":
            return dataclasses.replace(engine, missing=lambda: "pretend it is not installed")
        return engine

    monkeypatch.setattr(simulators, "get", without_rttlab)
    s = Sweep.from_dict(
        {
            "sweep": {
                "name": "absent",
                "scenario": str(SCENARIOS / "dumbbell-n1-droptail.toml"),
                "seeds": [1, 2, 3],
            }
        }
    )
    store = Store(tmp_path / "r.duckdb")
    with pytest.raises(SweepError) as e:
        sweep_module.execute(s, store, client=None)
    assert str(e.value) == "simulator rttlab: pretend it is not installed (3 runs need it)"
    assert store.query("SELECT count(*) AS n FROM runs")["n"].tolist() == [0]
    store.close()


def test_the_peer_engines_installed_here_say_nothing_is_missing():
    from rttlab.experiments import simulators

    for name in ("ns2", "ns3", "ns3-manet"):
        assert simulators.get(name).missing() is None, name
