"""`rttlab results summary`: groups by every varied parameter unless told otherwise and says what it
pooled; over an evaluate sweep's input files it never gives an MAE interval below zero and pairs
each estimator with a named baseline file by file; bits per second print with their unit."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import rttlab
from rttlab.estimators import Spec
from rttlab.experiments.stats import bootstrap_interval, t_interval

RTTLAB = [sys.executable, "-c", "from rttlab.cli.main import main; main()"]
ROOT = Path(__file__).resolve().parent.parent


def cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([*RTTLAB, *map(str, args)], capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> tuple[Path, list[Path]]:
    """An evaluate sweep over three series whose MAE differs a lot between files (so a Student-t
    interval over the files reaches below zero), and a two-parameter simulation sweep."""
    out = tmp_path_factory.mktemp("summary")
    (out / "data").mkdir()
    rng = np.random.default_rng(3)
    files = []
    for i, jitter in enumerate((0.2, 0.3, 40.0)):
        rtt = 60 + rng.gamma(1.0, jitter, 300)
        p = out / "data" / f"s{i}.csv"
        p.write_text("\n".join(f"{x:.3f}" for x in rtt) + "\n")
        files.append(p)
    (out / "est.toml").write_text(
        '[sweep]\nname = "est"\n[evaluate]\ninputs = ["data/*.csv"]\nestimators = ["rfc6298", "last"]\n'
    )
    (out / "sim.toml").write_text(
        f"""
[sweep]
name = "sim"
scenario = "{ROOT / "examples" / "scenarios" / "dumbbell-n1-droptail.toml"}"
replications = 2
[set]
"simulation.duration" = "1s"
[grid]
"topology.bottleneck.bandwidth" = ["20Mbps", "5Mbps"]
"tcp.cc" = ["newreno", "vegas"]
"""
    )
    db = out / "results.duckdb"
    for name in ("est", "sim"):
        r = cli("sweep", out / f"{name}.toml", "--workers", "1", "--store", db)
        assert r.returncode == 0, r.stderr
    return db, sorted(files)


@pytest.fixture(scope="module")
def printed(store) -> dict[str, str]:
    """What each summary printed (each command run once for every test that reads it)."""
    db, _ = store
    args = {
        "sim": ("--sweep", "sim"),
        "sim --by tcp.cc": ("--sweep", "sim", "--by", "tcp.cc"),
        "est": ("--sweep", "est"),
    }
    out = {}
    for name, a in args.items():
        for fmt in ("text", "json"):
            r = cli("results", "summary", "--store", db, *a, *(["--json"] if fmt == "json" else []))
            assert r.returncode == 0, r.stderr
            out[f"{name} {fmt}"] = r.stdout
    return out


def test_it_groups_by_every_varied_parameter_and_says_so(printed):
    doc = json.loads(printed["sim json"])
    assert doc["by"] == ["topology.bottleneck.bandwidth", "tcp.cc"] and doc["pooled"] == []
    assert len(doc["rows"]) == 4 and {row["n"] for row in doc["rows"]} == {2}
    text = printed["sim text"]
    assert "grouped by: topology.bottleneck.bandwidth, tcp.cc (every varied parameter)" in text
    assert "pooled over: nothing" in text


def test_grouping_by_one_parameter_names_the_ones_it_pooled(printed):
    doc = json.loads(printed["sim --by tcp.cc json"])
    assert doc["pooled"] == ["topology.bottleneck.bandwidth"] and {
        row["n"] for row in doc["rows"]
    } == {4}
    text = printed["sim --by tcp.cc text"]
    assert "pooled over: topology.bottleneck.bandwidth" in text


def test_bits_per_second_print_with_their_unit_and_points_in_numeric_order(printed):
    text = printed["sim text"]
    assert "Mb/s" in text and "e+0" not in text
    assert text.index("5Mbps") < text.index("20Mbps")


def test_the_cross_trace_mae_interval_never_goes_below_zero_and_says_how_it_was_made(
    store, printed
):
    _, files = store
    maes = [rttlab.evaluate(f, [Spec("last")], by=None).rows[0]["mae_s"] for f in files]
    assert t_interval(maes)["ci_low"] < 0  # the data this guards against
    doc = json.loads(printed["est json"])
    assert doc["interval"] == "bootstrap-percentile" and doc["replications"] == "input file"
    row = next(r for r in doc["rows"] if r["estimator"] == "last" and r["metric"] == "mae_s")
    # (JSON carries 15 significant digits, hence the 1e-15 s of slack.)
    assert (
        row["ci_low"] >= min(maes) - 1e-15
        and min(maes) >= 0
        and row["ci_high"] <= max(maes) + 1e-15
    )
    assert row["ci_low"] == pytest.approx(bootstrap_interval(maes)["ci_low"], rel=1e-12)
    assert "percentile bootstrap of the mean over the input files" in printed["est text"]


def test_each_estimator_is_paired_file_by_file_with_the_named_baseline(store, printed):
    _, files = store
    doc = json.loads(printed["est json"])
    assert doc["paired"]["baseline"] == {"estimator": "rfc6298"} and doc["paired"]["pair_on"] == [
        "input file"
    ]
    row = next(
        r for r in doc["paired"]["rows"] if r["estimator"] == "last" and r["metric"] == "mae_s"
    )
    diffs = [
        rttlab.evaluate(f, [Spec("last")], by=None).rows[0]["mae_s"]
        - rttlab.evaluate(f, [Spec("rfc6298")], by=None).rows[0]["mae_s"]
        for f in files
    ]
    want = t_interval(diffs)
    assert (
        row["n"] == 3
        and row["mean"] == pytest.approx(want["mean"], rel=1e-12)
        and row["ci_low"] == pytest.approx(want["ci_low"], rel=1e-12)
    )
    assert "paired: each point minus estimator=rfc6298, per input file" in printed["est text"]


def test_a_baseline_no_run_has_is_one_line_naming_it(store):
    db, _ = store
    r = cli("results", "summary", "--store", db, "--sweep", "sim", "--baseline", "tcp.cc=cubic")
    assert (
        r.returncode == 2
        and r.stderr.strip() == "rttlab: error: --baseline tcp.cc=cubic: no run has tcp.cc=cubic"
    )


def test_a_bootstrap_interval_stays_within_the_values():
    xs = [0.001, 0.002, 0.5]
    b = bootstrap_interval(xs, 0.95)
    assert min(xs) <= b["ci_low"] <= b["ci_high"] <= max(xs)
    assert bootstrap_interval(xs) == b  # seeded: the same numbers every time


def test_without_a_sweep_named_it_summarises_the_latest_and_lists_the_others(store):
    db, _ = store
    r = cli("results", "summary", "--store", db, "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    # The fixture stored "est" and then "sim": sim finished last.
    assert doc["sweep"] == "sim" and doc["other_sweeps"] == ["est"]
    assert {row["metric"] for row in doc["rows"]} == {"goodput_bps"}
    assert r.stderr.strip() == (
        f"sweep sim: the latest of 2 in {db}; the others: est (--sweep NAME for one, --sweep all for every run)"
    )


def test_sweep_all_pools_every_run_as_before(store):
    db, _ = store
    every = json.loads(cli("results", "summary", "--store", db, "--sweep", "all", "--json").stdout)
    assert every["sweep"] is None and every["other_sweeps"] == []
    assert "simulator" in every["by"]  # replays and simulations side by side


@pytest.mark.parametrize("width", [60, 80, 120])
def test_summary_and_query_fit_the_terminal_and_name_what_they_leave_out(store, width):
    import os

    db, _ = store
    env = {**os.environ, "COLUMNS": str(width)}
    for args in (
        ("results", "summary", "--store", db, "--sweep", "sim"),
        ("results", "query", "SELECT * FROM runs LIMIT 3", "--store", db),
    ):
        r = subprocess.run(
            [*RTTLAB, *map(str, args)], capture_output=True, text=True, env=env, timeout=600
        )
        assert r.returncode == 0, r.stderr
        table = [line for line in r.stdout.splitlines() if line[:1] in "┏┃┡│└"]
        assert table and max(len(line) for line in table) <= width, args
        if args[1] == "query":  # every column of runs cannot fit: named, not cut
            assert "not shown at" in r.stdout and "--csv shows every column" in r.stdout


def test_a_jain_index_interval_never_leaves_zero_to_one():
    from rttlab.experiments.stats import interval

    # Three seeds near 1: the Student-t interval reaches 1.38 (issue 39 saw 0.52–1.18).
    assert t_interval([0.6, 0.95, 0.99])["ci_high"] > 1
    for xs in ([0.6, 0.95, 0.99], [1.0, 1.0, 0.9], [1.0, 1.0, 1.0], [0.52, 0.85, 0.9]):
        r = interval(xs, "jain_index")
        assert 0.0 <= r["ci_low"] <= r["mean"] <= r["ci_high"] <= 1.0, (xs, r)
    # Unbounded metrics keep the Student-t interval.
    assert interval([9e6, 9.1e6], "goodput_bps") == t_interval([9e6, 9.1e6])
