"""`rttlab tune`: the search, the fronts, the recommendation and held-out validation, on small
series made here and one real series from ../shared."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest
from rttlab.trace.estimators import spec
from rttlab.trace.evaluate import evaluate
from rttlab.trace.tune import (
    Trace,
    TuneError,
    fmt_value,
    load_trace,
    pareto_mask,
    round_value,
    space,
    split_time,
    tune,
)
from rttlab.trace.tune_validate import bootstrap, units, verdict

RTTLAB = [sys.executable, "-m", "rttlab.cli.main"]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*RTTLAB, *map(str, args)], capture_output=True, text=True, timeout=120)


def spiky(n: int = 600, seed: int = 1) -> str:
    """100 ms ± jitter with a spike of 2–4× every ~25 samples: a floor decides the bad timeouts."""
    rng = np.random.default_rng(seed)
    rtt = 100 + rng.normal(0, 5, n).clip(-15, 15)
    spikes = rng.random(n) < 0.04
    rtt[spikes] *= rng.uniform(2, 4, spikes.sum())
    return "\n".join(f"{x:.3f}" for x in rtt)


def test_the_pareto_front_keeps_only_undominated_points_and_exact_ties():
    bad = np.array([0.0, 0.01, 0.01, 0.02, 0.02, 0.05, np.nan])
    wait = np.array([1.0, 0.5, 0.6, 0.5, 0.4, 0.4, 0.1])
    assert pareto_mask(bad, wait).tolist() == [True, True, False, False, True, False, False]
    assert pareto_mask(np.array([0.1, 0.1]), np.array([0.2, 0.2])).tolist() == [True, True]


def test_values_are_rounded_to_what_a_user_writes_and_read_back_exactly():
    assert round_value("duration", 0.183456) == 0.183
    assert fmt_value("duration", 0.183) == "183ms"
    assert fmt_value("duration", 1.5) == "1.5s"
    assert fmt_value("duration", 0.000123) == "123us"
    assert fmt_value("float", 4.81) == "4.81"
    assert round_value("int", 24.6) == 25.0 and fmt_value("int", 25.0) == "25"
    from rttlab import _core

    for x in (0.183, 1.5, 0.000123, 0.0519):
        assert _core.parse_duration(fmt_value("duration", x)) == round(x * 1e9)


def test_a_one_parameter_grid_recommends_the_smallest_wait_meeting_the_target(write):
    path = write("s.csv", spiky())
    result = tune([path], ["constant"], target=0.02, budget=60)
    rec = result.fit
    t = result.table
    assert result.methods == {"constant": "grid"}
    assert rec is not None and rec["bad_timeout_rate"] <= 0.02
    feasible = t[t["bad_timeout_rate"] <= 0.02]
    assert rec["wait_mean_s"] == feasible["wait_mean_s"].min()
    # A lower bad-timeout target costs wait: the front is a trade-off.
    strict = tune([path], ["constant"], target=0.005, budget=60).fit
    assert strict["wait_mean_s"] > rec["wait_mean_s"]


def test_the_recommendation_reproduces_its_numbers_through_evaluate(write):
    path = write("s.csv", spiky())
    # Both the fit on all data and the cross-validated recommendation reproduce.
    result = tune([path], ["rfc6298", "linux"], target=0.02, budget=40)
    for rec in (result.fit, result.recommendation):
        _reproduces(path, rec)


def _reproduces(path, rec) -> None:
    assert rec is not None
    assert rec["setting"].startswith(rec["estimator"] + " ")
    again = evaluate(
        path, [spec(rec["estimator"], **rec["params"])], min_rto=rec["timer_floor_s"] or None
    )
    row = again.rows[0]
    assert row["bad_timeouts"] == rec["bad_timeouts"]
    assert row["wait_mean_s"] == pytest.approx(rec["wait_mean_s"], rel=1e-12)


def test_three_parameters_go_to_differential_evolution_and_the_same_seed_gives_the_same_table(
    write,
):
    path = write("s.csv", spiky(300))
    a = tune([path], ["rfc6298"], target=0.02, budget=90, seed=3)
    b = tune([path], ["rfc6298"], target=0.02, budget=90, seed=3)
    assert a.methods == {"rfc6298": "differential-evolution"}
    cols = ["setting", "bad_timeout_rate", "wait_mean_s"]
    assert a.table[cols].equals(b.table[cols])
    assert a.recommendation == b.recommendation and a.fit == b.fit
    # Every point replayed is kept (the history draws the front), the defaults too.
    assert len(a.table) > 45 and a.table["default"].sum() == 1


def test_fixed_and_ranged_parameters_shape_the_search_space():
    assert [d.key for d in space("rfc6298", {"k": "4"})] == ["min_rto", "granularity"]
    (floor,) = space("linux", None, {"rto_min": "50ms:300ms"})
    assert (floor.lo, floor.hi) == (0.05, 0.3)
    # The timer's floor can be searched for any estimator, on top of its own parameters.
    assert [d.key for d in space("linux", None, {"timer_min_rto": "10ms:100ms"})] == [
        "rto_min",
        "timer_min_rto",
    ]
    with pytest.raises(TuneError, match=r"--range linux.nope: linux has no parameter 'nope'"):
        space("linux", None, {"nope": "1:2"})
    with pytest.raises(TuneError, match=r"--param rfc6298.min_rto and --range rfc6298.min_rto"):
        space("rfc6298", {"min_rto": "200ms"}, {"min_rto": "1ms:1s"})
    with pytest.raises(TuneError, match=r"constant has no tunable parameter left"):
        space("constant", {"rto": "1s"})
    with pytest.raises(TuneError, match=r"outside the accepted range 0s\.\.60s"):
        space("rfc6298", None, {"min_rto": "1ms:100s"})


def test_splitting_by_time_cuts_every_stream_and_keeps_every_sample(write):
    trace = load_trace(write("s.csv", spiky(200)))
    first, second = split_time(trace)
    assert len(first.rtts_ns) + len(second.rtts_ns) == len(trace.rtts_ns)
    assert first.times_ns.max() < second.times_ns.min()


def test_validation_units_add_up_to_the_pooled_replay(write):
    trace = load_trace(write("s.csv", spiky(400)))
    n, bad, wsum, kind = units(trace, "rfc6298", {"min_rto": "150ms"}, 0.0)
    row = evaluate(trace.name, [spec("rfc6298", min_rto="150ms")]).rows[0]
    assert kind == "segment" and len(n) > 10
    assert n.sum() == row["samples"] and bad.sum() == row["bad_timeouts"]
    assert wsum.sum() / n.sum() == pytest.approx(row["wait_mean_s"], rel=1e-9)
    ci_bad, ci_w = bootstrap(n, bad, wsum, seed=0)
    assert ci_bad[0] <= bad.sum() / n.sum() <= ci_bad[1]
    assert ci_w[0] <= row["wait_mean_s"] <= ci_w[1]


def test_a_recommendation_is_judged_against_the_target_by_its_interval():
    assert verdict(0.008, [0.004, 0.012], 0.01) == "holds"
    assert verdict(0.015, [0.008, 0.02], 0.01) == "holds within its interval"
    assert verdict(0.03, [0.02, 0.04], 0.01) == "does not hold"
    assert (
        verdict(0.0, [0.0, 0.03], 0.01, samples=100)
        == "holds (too few samples to tell: 100 of ≈1,522)"
    )


def test_no_bad_timeout_at_all_gives_the_rule_of_three_as_upper_end():
    ci_bad, _ = bootstrap(np.full(10, 30.0), np.zeros(10), np.full(10, 3.0), seed=0)
    assert ci_bad == [0.0, 0.01]


def test_validation_by_trace_holds_out_each_trace_once(write):
    paths = [write(f"s{i}.csv", spiky(300, seed=i)) for i in range(3)]
    v = tune(paths, ["linux", "constant"], target=0.02, budget=30, validate=True).validation
    assert v["method"] == "leave one trace out (3 folds)"
    assert sorted(f["held_out"] for f in v["folds"]) == sorted(map(str, paths))
    held = v["held_out"]
    assert held["samples"] == sum(f["samples"] for f in v["folds"] if f["recommendation"])
    assert (
        held["bad_timeout_rate_ci"][0] <= held["bad_timeout_rate"] <= held["bad_timeout_rate_ci"][1]
    )
    assert v["verdict"].startswith(("holds", "does not hold"))
    assert set(v["defaults_held_out"]) == {"linux", "constant"}


def test_small_inputs_warn_with_the_samples_a_target_needs(write):
    result = tune([write("s.csv", spiky(120))], ["linux"], target=0.01, budget=10, validate=True)
    assert any("≈1,522 samples" in w for w in result.warnings)
    assert any("held-out samples" in w for w in result.warnings)


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["-e", "constant", "-p", "constant.rto=1s"],
            "--estimators: constant has no tunable parameter left",
        ),
        (["-t", "60%"], "--target-bad-timeouts: 0.6 is outside (0, 50%)"),
        (["-t", "often"], "--target-bad-timeouts: cannot read 'often'"),
        (
            ["-e", "rfc6298", "-p", "rfc6298.min_rto=200ms", "-r", "rfc6298.min_rto=1ms:1s"],
            "--param rfc6298.min_rto and --range rfc6298.min_rto both given",
        ),
        (["-e", "nope"], "--estimators: unknown estimator 'nope'"),
        (
            ["-e", "linux", "-r", "linux.rto_min=1s"],
            "--range 'linux.rto_min=1s': expected ESTIMATOR.KEY=LOW:HIGH",
        ),
        (["--columns", "rtt"], "--columns 'rtt': 'rtt' is not ROLE=COLUMN"),
        (
            ["--columns", "rtt=lat"],
            "s.csv:1: columns are chosen by name (--columns), but the file has no header",
        ),
        (["--unit", "min"], "--unit: 'min' is not one of s, ms, us, ns"),
    ],
)
def test_bad_arguments_are_one_line_errors_naming_the_argument(write, args, message):
    path = write("s.csv", spiky(100))
    out = run("tune", path, *args)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], out.stderr


def test_a_trace_with_too_few_samples_is_named(write):
    short = write("short.csv", "100\n101\n99\n")
    out = run("tune", short, "-e", "linux")
    assert (
        out.returncode == 2 and "short.csv: 2 scored samples; tune needs at least 20" in out.stderr
    )


def test_tune_reads_named_columns_and_warns_of_milliseconds_read_as_seconds(write):
    rows = "".join(f"{0.1 * i:.1f},{line}" for i, line in enumerate(spiky(300).splitlines(True)))
    path = write("named.csv", "when,lat\n" + rows)
    out = run(
        "tune",
        path,
        "--columns",
        "time=when,rtt=lat",
        "-e",
        "rfc6298",
        "--budget",
        "4",
        "--folds",
        "2",
    )
    assert out.returncode == 0, out.stderr
    assert "named.csv: median RTT" in out.stderr and "say so: --unit ms" in out.stderr


def test_the_cli_writes_json_the_table_and_the_figure(write, tmp_path):
    path = write("s.csv", spiky(300))
    table, figure = tmp_path / "points.csv", tmp_path / "front.png"
    out = run(
        "tune",
        path,
        "-e",
        "linux,constant",
        "--budget",
        "30",
        "--json",
        "--out",
        table,
        "--plot",
        figure,
    )
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["schema"] == "rttlab.tune/1"
    assert set(doc["fronts"]) == {"linux", "constant"}
    assert doc["fit_on_all_data"]["bad_timeout_rate"] <= 0.01
    assert doc["recommendation"]["held_out"]["holds_all"] == doc["cross_validation"]["holds"]
    assert doc["recommendation"]["command"].startswith(f"rttlab evaluate {path} -e ")
    import pandas as pd

    points = pd.read_csv(table)
    assert len(points) == doc["points"] and {
        "estimator",
        "setting",
        "bad_timeout_rate",
        "wait_mean_s",
        "mae_s",
        "joint_front",
    } <= set(points.columns)
    assert figure.stat().st_size > 10_000
    # Beside it, each fold's held-out point against the target.
    assert (tmp_path / "front-folds.png").stat().st_size > 10_000


def test_a_real_series_gets_a_recommendation_meeting_its_target(shared):
    path = shared / "rtt-series" / "tyrell_roundtrip028.csv"
    result = tune([path], ["linux", "quic"], target=0.01, budget=60)
    rec = result.fit
    assert rec is not None and rec["bad_timeout_rate"] <= 0.01
    # The tuned point is at least as good as each estimator's defaults that meet the target.
    defaults = result.table[result.table["default"] & (result.table["bad_timeout_rate"] <= 0.01)]
    assert all(rec["wait_mean_s"] <= w for w in defaults["wait_mean_s"])
    assert not math.isnan(rec["mae_s"])


def test_a_capture_is_tuned_on_its_path_rtt_connections(shared):
    path = shared / "captures" / "zeek-tcprs_rto001.pcap"
    trace = load_trace(path)
    assert trace.kind == "capture" and trace.scored >= 20
    result = tune([trace], ["linux"], target=0.05, budget=20)
    row = evaluate(path, [spec("linux", rto_min="200ms")]).rows[0]
    assert result.samples == row["samples"]
    assert isinstance(trace, Trace)


def test_a_confidence_level_asks_for_a_margin_below_the_target(write):
    path = write("s.csv", spiky(2000))
    plain = tune([path], ["linux"], target=0.02, budget=40).fit
    sure = tune([path], ["linux"], target=0.02, budget=40, confidence=0.95).fit
    assert sure["bad_timeout_rate"] < 0.02 and sure["bad_timeout_rate"] <= plain["bad_timeout_rate"]
    assert sure["wait_mean_s"] >= plain["wait_mean_s"]
    from rttlab.trace.tune_search import upper_bound

    assert (
        upper_bound(np.array([sure["bad_timeouts"]]), np.array([sure["samples"]]), 0.95)[0] <= 0.02
    )
    assert upper_bound(np.array([0]), np.array([100]), 0.95)[0] == pytest.approx(
        1 - 0.05 ** (1 / 100)
    )


def test_a_timer_floor_point_reproduces_through_evaluate_min_rto(write):
    path = write("s.csv", spiky())
    result = tune([path], ["last"], target=0.05, budget=40)
    rec = result.fit
    assert rec["timer_floor_s"] > 0 and "--min-rto" in rec["command"]
    row = evaluate(path, [spec("last", **rec["params"])], min_rto=rec["timer_floor_s"]).rows[0]
    assert (row["bad_timeouts"], row["wait_mean_s"]) == (
        rec["bad_timeouts"],
        pytest.approx(rec["wait_mean_s"], rel=1e-12),
    )


def test_the_conformal_rto_keeps_the_bad_timeout_rate_near_its_target_in_the_timer_replay(write):
    path = write("s.csv", spiky(5000, seed=4))
    rows = evaluate(path, [spec("conformal", target="0.05"), spec("conformal", target="0.01")]).rows
    by = {r["estimator"]: r for r in rows}
    # A bad timeout needs a miss, and the misses track the target: at most the target, plus the
    # tracker's finite-sample slack (ln 1000 + η)/(η·T) ≈ 0.03 at T = 5000.
    assert 0.02 <= by["conformal(target=0.05)"]["bad_timeout_rate"] <= 0.05 + 0.03
    assert by["conformal(target=0.01)"]["bad_timeout_rate"] <= 0.01 + 0.03
    assert by["conformal(target=0.01)"]["wait_mean_s"] > by["conformal(target=0.05)"]["wait_mean_s"]


def test_a_duckdb_file_keeps_every_run_and_a_rerun_replaces_its_own_rows(write, tmp_path):
    import duckdb

    path = write("s.csv", spiky(200))
    db = tmp_path / "tune.duckdb"
    a = tune([path], ["constant"], target=0.02, budget=20)
    a.write(db)
    a.write(db)
    tune([path], ["constant"], target=0.05, budget=20).write(db)
    con = duckdb.connect(str(db))
    counts = con.execute(
        "SELECT target, count(*) FROM tune_points GROUP BY target ORDER BY target"
    ).fetchall()
    assert counts == [(0.02, len(a.table)), (0.05, len(a.table))]
    best = con.execute(
        "SELECT setting FROM tune_points WHERE target = 0.02 AND bad_timeout_rate <= 0.02 ORDER BY wait_mean_s LIMIT 1"
    ).fetchone()[0]
    assert best == a.fit["setting"]


def test_the_quantile_experts_trade_bad_timeouts_for_wait_by_their_target(write):
    path = write("s.csv", spiky(3000, seed=5))
    rows = {
        r["estimator"]: r
        for r in evaluate(
            path, [spec("quantile-experts", target="0.2"), spec("quantile-experts", target="0.01")]
        ).rows
    }
    low, high = rows["quantile-experts(target=0.01)"], rows["quantile-experts(target=0.2)"]
    assert (
        low["bad_timeout_rate"] < high["bad_timeout_rate"]
        and low["wait_mean_s"] > high["wait_mean_s"]
    )
    assert low["mae_s"] is None  # it predicts no RTT, only a timeout
