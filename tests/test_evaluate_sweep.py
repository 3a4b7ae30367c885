"""Evaluate jobs as sweeps: estimators × parameters × trace files on Dask, scores in the DuckDB
store, `rttlab results summary` over them."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import pytest
import rttlab
from rttlab.estimators import Spec
from rttlab.experiments.stats import t_interval
from rttlab.experiments.sweep import Sweep, SweepError

RTTLAB = [sys.executable, "-c", "from rttlab.cli.main import main; main()"]


def series_files(directory: Path, n: int = 3, samples: int = 400) -> list[Path]:
    """n small RTT series (ms, one per line): 50 ms base, gamma jitter, a few spikes; seeded."""
    rng = np.random.default_rng(7)
    paths = []
    for i in range(n):
        rtt = 50 + 5 * i + rng.gamma(2.0, 2.0, samples)
        rtt[rng.random(samples) < 0.02] += 300
        p = directory / f"series{i}.csv"
        p.write_text("\n".join(f"{x:.3f}" for x in rtt) + "\n")
        paths.append(p)
    return paths


def job(directory: Path, body: str) -> Path:
    p = directory / "job.toml"
    p.write_text(body)
    return p


BODY = """
[sweep]
name = "est"
level = 0.9
[evaluate]
inputs = ["data/*.csv"]
estimators = ["rfc6298", "linux", "last"]
[grid]
"linux.rto_min" = ["5ms", "200ms"]
"""


def run_cli(*args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*RTTLAB, *map(str, args)], capture_output=True, text=True, timeout=timeout
    )


def test_an_evaluate_job_expands_to_one_run_per_file_estimator_and_point(tmp_path):
    (tmp_path / "data").mkdir()
    files = series_files(tmp_path / "data")
    s = Sweep.load(job(tmp_path, BODY))
    # rfc6298 and last ignore linux.rto_min: 1 point each; linux: 2 points; × 3 files.
    assert len(s.runs) == (1 + 1 + 2) * 3
    assert {r.simulator for r in s.runs} == {"replay"}
    linux = [r for r in s.runs if r.params["estimator"] == "linux"]
    assert {r.params["linux.rto_min"] for r in linux} == {"5ms", "200ms"}
    assert all("linux.rto_min" not in r.params for r in s.runs if r.params["estimator"] != "linux")
    assert {Path(r.job["input"]) for r in s.runs} == {f.resolve() for f in files}
    assert s.keys[0] == "estimator" and s.level == 0.9


def test_a_run_key_follows_the_file_content_not_its_name(tmp_path):
    (tmp_path / "data").mkdir()
    files = series_files(tmp_path / "data", n=1)
    body = '[evaluate]\ninputs = ["data/series0.csv"]\nestimators = ["rfc6298"]\n'
    before = Sweep.load(job(tmp_path, body)).runs[0].hash
    files[0].rename(tmp_path / "data" / "moved.csv")
    moved = Sweep.load(job(tmp_path, body.replace("series0", "moved"))).runs[0].hash
    assert moved == before
    (tmp_path / "data" / "moved.csv").write_text("10\n20\n30\n")
    assert Sweep.load(job(tmp_path, body.replace("series0", "moved"))).runs[0].hash != before


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        (
            '[evaluate]\ninputs = ["nowhere/*.csv"]',
            "evaluate.inputs: nowhere/*.csv: matches no file",
        ),
        ('[evaluate]\ninputs = ["data/*.csv"]\nestimators = ["rfc9999"]', "evaluate.estimators"),
        ('[evaluate]\ninputs = ["data/*.csv"]\nspeed = 3', "evaluate.speed: unknown key"),
        ('[evaluate]\ninputs = ["data/*.csv"]\n[grid]\n"linux.nope" = [1]', "grid.linux.nope"),
        ('[evaluate]\ninputs = ["data/*.csv"]\n[grid]\n"rfc6298.alpha" = [7]', "rfc6298"),
        (
            '[evaluate]\ninputs = ["data/*.csv"]\nmin_rto = "1s"\n[set]\n"linux.rto_min" = "5ms"',
            "both set the floor of linux",
        ),
        ('[sweep]\nreplications = 3\n[evaluate]\ninputs = ["data/*.csv"]', "sweep.replications"),
        ('[evaluate]\ninputs = ["data/*.csv"]\ntick = "soon"', "evaluate.tick"),
    ],
)
def test_bad_evaluate_jobs_name_the_key(tmp_path, body, needle):
    (tmp_path / "data").mkdir()
    series_files(tmp_path / "data", n=1)
    with pytest.raises(SweepError) as e:
        Sweep.load(job(tmp_path, body))
    assert needle in str(e.value) and str(tmp_path / "job.toml") in str(e.value)


def test_an_evaluate_sweep_stores_the_scores_rttlab_evaluate_gives_and_summarises_them(tmp_path):
    (tmp_path / "data").mkdir()
    files = series_files(tmp_path / "data")
    spec = job(tmp_path, BODY)
    db = tmp_path / "r.duckdb"
    done = run_cli("sweep", spec, "--workers", "2", "--store", db)
    assert done.returncode == 0, done.stderr
    assert "12 ok, 0 failed" in done.stdout
    with duckdb.connect(str(db), read_only=True) as c:
        assert c.execute("SELECT count(*), count(DISTINCT hash) FROM scores").fetchone() == (12, 12)
        rows = c.execute(
            'SELECT s.input, s.estimator, r."linux.rto_min", s.mae_s, s.bad_timeout_rate, s.wait_mean_s, s.samples, r.simulator, r.status '
            "FROM runs r JOIN scores s USING (hash)"
        ).fetchall()
    # Every stored score is what rttlab.evaluate computes for that file and estimator.
    for path, est, rto_min, mae, bad, wait, samples, simulator, status in rows:
        params = {"rto_min": rto_min} if rto_min else {}
        want = rttlab.evaluate(path, [Spec(est, params)], by=None).rows[0]
        assert (simulator, status) == ("replay", "ok")
        assert (mae, bad, wait, samples) == (
            want["mae_s"],
            want["bad_timeout_rate"],
            want["wait_mean_s"],
            want["samples"],
        )

    summary = run_cli(
        "results", "summary", "--store", db, "--level", "0.9", "--interval", "t", "--json"
    )
    assert summary.returncode == 0, summary.stderr
    doc = json.loads(summary.stdout)
    assert doc["by"] == ["estimator", "linux.rto_min"] and doc["interval"] == "student-t"
    assert {r["metric"] for r in doc["rows"]} == {"mae_s", "bad_timeout_rate", "wait_mean_s"}
    linux5 = next(
        r
        for r in doc["rows"]
        if r["estimator"] == "linux"
        and r["linux.rto_min"] == "5ms"
        and r["metric"] == "wait_mean_s"
    )
    direct = [
        rttlab.evaluate(f, [Spec("linux", {"rto_min": "5ms"})], by=None).rows[0]["wait_mean_s"]
        for f in files
    ]
    want = t_interval(direct, 0.9)
    assert linux5["n"] == 3  # the files are the replications
    assert math.isclose(linux5["mean"], want["mean"], rel_tol=1e-12)
    assert math.isclose(linux5["ci_high"], want["ci_high"], rel_tol=1e-12)

    again = run_cli("sweep", spec, "--workers", "1", "--store", db)
    assert again.returncode == 0 and "12 already in" in again.stdout, again.stdout + again.stderr


def test_a_file_that_cannot_be_read_is_a_failed_run_not_a_failed_sweep(tmp_path):
    from distributed import Client
    from rttlab.experiments.store import Store
    from rttlab.experiments.sweep import execute

    (tmp_path / "data").mkdir()
    series_files(tmp_path / "data", n=2)
    s = Sweep.load(job(tmp_path, '[evaluate]\ninputs = ["data/*.csv"]\nestimators = ["rfc6298"]\n'))
    (tmp_path / "data" / "series1.csv").write_text("12\nnot a number\n")  # broken after loading
    with (
        Client(
            processes=False, n_workers=1, threads_per_worker=1, dashboard_address=":0"
        ) as client,
        Store(tmp_path / "r.duckdb") as store,
    ):
        out = execute(s, store, client)
        assert (out.ok, out.failed) == (1, 1)
        ((kind, error),) = store.db.execute(
            "SELECT error_kind, error FROM runs WHERE status = 'error'"
        ).fetchall()
    assert kind == "InputError" and "series1.csv:2: field 'rtt'" in error


def test_the_shared_rtt_series_sweep_scores_every_file(tmp_path, shared):
    files = sorted((shared / "rtt-series").glob("*.csv"))
    if not files:
        pytest.skip(f"no RTT series in {shared / 'rtt-series'}")
    spec = job(
        tmp_path,
        f'[sweep]\nname = "tyrell"\n[evaluate]\ninputs = ["{shared}/rtt-series/*.csv"]\nestimators = ["rfc6298", "fixed-share"]\n',
    )
    db = tmp_path / "r.duckdb"
    done = run_cli("sweep", spec, "--workers", "2", "--store", db)
    assert done.returncode == 0, done.stderr
    with duckdb.connect(str(db), read_only=True) as c:
        got = dict(c.execute("SELECT input || ' ' || estimator, samples FROM scores").fetchall())
    assert len(got) == 2 * len(files)
    for f in files:
        n = len(rttlab.read_series(f))
        assert (
            got[f"{f.resolve()} rfc6298"] == got[f"{f.resolve()} fixed-share"] == n - 1
        )  # all but the first sample


def test_evaluate_jobs_store_rows_in_the_schema_rttlab_evaluate_writes():
    import importlib

    from rttlab.experiments import evaluate_job

    # rttlab.evaluate is the function; its module holds the schema name.
    assert evaluate_job.SCHEMA == importlib.import_module("rttlab.trace.evaluate").SCHEMA
