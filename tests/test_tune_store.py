"""`rttlab tune --store`: a tuning run as a sweep — every point a stored run, a rerun replaying
nothing, an interrupted one only what is missing, Dask for many points, `results summary` on it."""

from __future__ import annotations

import json
import subprocess
import sys

import duckdb
import numpy as np
import pandas as pd
import pytest
from rttlab.experiments.store import Store
from rttlab.experiments.tune_job import StoredReplay, write_tuning
from rttlab.trace.tune import tune

RTTLAB = [sys.executable, "-m", "rttlab.cli.main"]
COLS = [
    "estimator",
    "setting",
    "default",
    "timer_floor_s",
    "samples",
    "bad_timeouts",
    "bad_timeout_rate",
    "wait_mean_s",
    "wait_p99_s",
    "mae_s",
    "mape",
    "lost_segments",
    "lost_wait_mean_s",
    "estimator_front",
    "joint_front",
]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*RTTLAB, *map(str, args)], capture_output=True, text=True, timeout=300)


def spiky(n: int = 500, seed: int = 1) -> str:
    rng = np.random.default_rng(seed)
    rtt = 100 + rng.normal(0, 5, n).clip(-15, 15)
    spikes = rng.random(n) < 0.04
    rtt[spikes] *= rng.uniform(2, 4, spikes.sum())
    return "\n".join(f"{x:.3f}" for x in rtt)


@pytest.fixture
def traces(write):
    return [write("a.csv", spiky(seed=1)), write("b.csv", spiky(seed=2))]


def same(a, b) -> None:
    pd.testing.assert_frame_equal(
        a.table[COLS].reset_index(drop=True), b.table[COLS].reset_index(drop=True)
    )
    assert a.recommendation == b.recommendation and a.fit == b.fit


def test_a_stored_tuning_equals_the_in_process_one_and_a_rerun_replays_nothing(traces, tmp_path):
    plain = tune(traces, ["rfc6298", "linux"], target=0.02, budget=40)
    with Store(tmp_path / "t.duckdb") as store, StoredReplay(store, "t", dask="never") as replay:
        first = tune(traces, ["rfc6298", "linux"], target=0.02, budget=40, replay=replay)
        n = len(first.table)
        # The cross-validation's fold searches are stored too (sweep t.validation).
        total = replay.replayed
        assert total > n and replay.found == 0
        again = tune(traces, ["rfc6298", "linux"], target=0.02, budget=40, replay=replay)
        assert (replay.replayed, replay.found) == (total, total)  # nothing new the second time
        stored = store.query(
            "SELECT count(*) AS n, count(DISTINCT hash) AS h, bool_and(status = 'ok') AS ok FROM runs JOIN sweep_runs USING (hash) WHERE sweep_runs.sweep = 't'"
        ).iloc[0]
        assert (stored["n"], stored["h"], stored["ok"]) == (n, n, True)
    same(plain, first)
    same(plain, again)


def test_an_interrupted_tuning_replays_only_the_points_it_had_not_stored(traces, tmp_path):
    with Store(tmp_path / "t.duckdb") as store:
        with StoredReplay(store, "t", dask="never") as replay:
            full = tune(traces, ["constant"], target=0.02, budget=30, replay=replay)
            total = replay.replayed  # the fold searches of the cross-validation included
        # Lose a third of the points, as a run stopped part-way would never have stored them.
        lost = [h for (h,) in store.db.execute("SELECT hash FROM runs ORDER BY hash").fetchall()][
            ::3
        ]
        store.db.execute(f"DELETE FROM scores WHERE hash IN ({', '.join('?' for _ in lost)})", lost)
        store.db.execute(f"DELETE FROM runs WHERE hash IN ({', '.join('?' for _ in lost)})", lost)
        with StoredReplay(store, "t", dask="never") as replay:
            resumed = tune(traces, ["constant"], target=0.02, budget=30, replay=replay)
            assert replay.replayed == len(lost) and replay.found == total - len(lost)
    same(full, resumed)


def test_many_points_go_to_dask_and_come_back_the_same(traces, tmp_path):
    plain = tune(traces, ["linux", "constant"], target=0.02, budget=25)
    with (
        Store(tmp_path / "t.duckdb") as store,
        StoredReplay(store, "t", dask="always", workers=1) as replay,
    ):
        on_dask = tune(traces, ["linux", "constant"], target=0.02, budget=25, replay=replay)
        assert replay.used_dask and replay.tasks >= 2  # one search per estimator, a batch each
        worker = store.query("SELECT DISTINCT worker FROM runs")["worker"].tolist()
    import os

    assert all(
        not w.endswith(f":{os.getpid()}") for w in worker
    )  # replayed in the workers' processes
    same(plain, on_dask)


def test_validation_folds_are_stored_in_a_sweep_of_their_own(traces, tmp_path):
    with Store(tmp_path / "t.duckdb") as store, StoredReplay(store, "t", dask="never") as replay:
        result = tune(traces, ["constant"], target=0.05, budget=20, validate=True, replay=replay)
        assert result.validation is not None
        assert set(store.sweeps()) == {"t", "t.validation"}
        write_tuning(store, "t", result)
        row = store.query("SELECT * FROM tunings").iloc[0]
        rec = store.query(
            "SELECT r.estimator, sc.wait_mean_s, sc.bad_timeout_rate FROM runs r JOIN scores sc USING (hash) WHERE hash = ?",
            [row["recommendation_hash"]],
        ).iloc[0]
    # The sweep's stored point is the fit on all data; the cross-validated recommendation is in the doc.
    assert row["target"] == 0.05 and row["recommendation"] == result.fit["setting"]
    assert (rec["estimator"], rec["wait_mean_s"]) == ("constant", result.fit["wait_mean_s"])
    doc = json.loads(row["doc"])
    assert doc["recommendation"]["setting"] == result.recommendation["setting"]
    assert doc["cross_validation"]["folds"] == 5
    assert json.loads(row["doc"])["validation"]["method"].startswith("leave one trace out")


def test_the_cli_stores_a_sweep_that_results_summary_reads(traces, tmp_path):
    db = tmp_path / "t.duckdb"
    args = [
        "tune",
        *traces,
        "-e",
        "linux,constant",
        "--budget",
        "20",
        "-t",
        "2%",
        "--store",
        db,
        "--name",
        "mine",
    ]
    first = run(*args)
    assert first.returncode == 0, first.stderr
    assert "stored as sweep mine" in first.stdout and ", 0 found stored" in first.stdout
    second = run(*args)
    assert second.returncode == 0 and "0 points replayed" in second.stdout, second.stdout
    summary = run(
        "results",
        "summary",
        "--store",
        db,
        "--sweep",
        "mine",
        "--by",
        "estimator",
        "--by",
        "default",
        "-m",
        "bad_timeout_rate",
        "--json",
    )
    assert summary.returncode == 0, summary.stderr
    rows = {(r["estimator"], r["default"]): r for r in json.loads(summary.stdout)["rows"]}
    with duckdb.connect(str(db), read_only=True) as c:
        for est, default, n, mean in c.execute(
            "SELECT runs.estimator, \"default\", count(*), avg(sc.bad_timeout_rate) FROM runs JOIN scores sc USING (hash) JOIN sweep_runs s USING (hash) WHERE s.sweep = 'mine' GROUP BY 1, 2"
        ).fetchall():
            assert rows[(est, default)]["n"] == n and rows[(est, default)]["mean"] == pytest.approx(
                mean, rel=1e-12
            )


@pytest.mark.parametrize(
    "args, message",
    [
        (["--name", "x"], "--name: only with --store"),
        (["--workers", "2"], "--workers: only with --store"),
        (["--store", "x.parquet"], "--store: 'x.parquet' must end in .duckdb"),
    ],
)
def test_store_options_are_checked_in_one_line(traces, args, message):
    out = run("tune", traces[0], "-e", "constant", *args)
    lines = out.stderr.strip().splitlines()
    assert (
        out.returncode == 2 and len(lines) == 1 and lines[0].startswith(f"rttlab: error: {message}")
    ), out.stderr


def test_the_report_of_a_tuning_stopped_before_its_end_draws_its_points_and_says_it_did_not_finish(
    traces, tmp_path
):
    from rttlab.experiments.report import render

    with Store(tmp_path / "t.duckdb") as store, StoredReplay(store, "cut", dask="never") as replay:
        tune(
            traces, ["constant"], target=0.02, budget=20, replay=replay
        )  # its tunings row never written
    with Store(tmp_path / "t.duckdb", read_only=True) as store:
        text = render(store)
    assert (
        "Tuning <code>cut</code>" in text
        and "did not finish" in text
        and text.count("<figure") == 1
    )
