"""`rttlab reproduce mathis --quick` (pinned) and `rttlab results` over the store it writes."""

from __future__ import annotations

import json
import math
import statistics
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from rttlab.experiments.reproduce import Reproduction, available
from rttlab.experiments.stats import t_interval

RTTLAB = [sys.executable, "-c", "from rttlab.cli.main import main; main()"]


@pytest.fixture(scope="module")
def mathis(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("mathis")
    r = subprocess.run(
        [*RTTLAB, "reproduce", "mathis", "--quick", "--workers", "2", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert r.returncode == 0, r.stderr
    assert "every point matched within 15% on goodput_bps" in r.stdout
    return out


def test_the_shipped_reproductions_are_listed():
    assert {"mathis", "ns3-dumbbell", "ns3-internet-cc"} <= set(available())


def test_reproduce_help_names_every_shipped_reproduction():
    import os

    r = subprocess.run(
        [*RTTLAB, "reproduce", "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "2000"},
    )
    assert r.returncode == 0, r.stderr
    line = next(line for line in r.stdout.splitlines() if "ships:" in line)
    assert all(f" {name} ({Reproduction.load(name).paper})" in line for name in available()), line


def test_every_shipped_reproduction_names_what_it_checks_by_author_and_year_or_as_a_peer():
    import re

    for name in available():
        paper = Reproduction.load(name).paper
        assert re.fullmatch(r"[A-Z][^()]+ (19|20)\d\d", paper) or paper.endswith("as a peer"), (
            name,
            paper,
        )


def test_mathis_quick_is_pinned(mathis):
    doc = json.loads((mathis / "comparison.json").read_text())
    rows = {r["params"]["topology.bottleneck.error.per"]: r for r in doc["rows"]}
    assert sorted(rows) == [0.001, 0.01]
    # MSS/RTT · sqrt(3/2)/sqrt(p) with MSS 1448 B and RTT 100 ms, computed here independently.
    for p, r in rows.items():
        assert r["published"] == pytest.approx(1448 * 8 / 0.1 * math.sqrt(1.5) / math.sqrt(p))
        assert r["n"] == 3 and r["matched"]
    # Pinned (3 seeds × 200 s): a little below the model at 10⁻³, further below at 10⁻² where
    # timeouts (absent from the model) set in. A simulator change that moves these is a finding.
    assert rows[0.001]["diff"] == pytest.approx(-0.058, abs=0.03)
    assert rows[0.01]["diff"] == pytest.approx(-0.129, abs=0.03)


def test_the_comparison_is_computed_from_the_stored_runs(mathis):
    with duckdb.connect(str(mathis / "results.duckdb"), read_only=True) as c:
        stored = c.execute(
            "SELECT \"topology.bottleneck.error.per\", goodput_bps FROM runs WHERE status = 'ok'"
        ).fetchall()
        table = c.execute(
            "SELECT point, ours, ci_low, ci_high, published, matched FROM comparisons WHERE reproduction = 'mathis-quick'"
        ).fetchall()
    assert len(stored) == 6 and len(table) == 2
    doc = json.loads((mathis / "comparison.json").read_text())
    for r in doc["rows"]:
        xs = [g for p, g in stored if p == r["params"]["topology.bottleneck.error.per"]]
        assert r["ours"] == pytest.approx(statistics.fmean(xs))
        assert (r["point"], r["ours"], r["ci_low"], r["ci_high"], r["published"], r["matched"]) in [
            tuple(t) for t in table
        ]
    assert (mathis / "figure.svg").read_text().startswith("<svg")


def test_a_second_run_resumes_from_the_store(mathis):
    r = subprocess.run(
        [*RTTLAB, "reproduce", "mathis", "--quick", "--workers", "1", "--out", str(mathis)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert "6 already in" in r.stdout and "0 to run" in r.stdout


def test_results_summary_gives_student_t_intervals_of_the_stored_runs(mathis):
    db = mathis / "results.duckdb"
    r = subprocess.run(
        [
            *RTTLAB,
            "results",
            "summary",
            "--store",
            str(db),
            "--metric",
            "goodput_bps",
            "--level",
            "0.9",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["schema"] == "rttlab.summary/1" and doc["by"] == ["topology.bottleneck.error.per"]
    rows = doc["rows"]
    with duckdb.connect(str(db), read_only=True) as c:
        stored = c.execute(
            'SELECT "topology.bottleneck.error.per", goodput_bps FROM runs'
        ).fetchall()
    assert len(rows) == 2
    for row in rows:
        xs = [g for p, g in stored if p == row["topology.bottleneck.error.per"]]
        mean, sd = statistics.fmean(xs), statistics.stdev(xs)
        # t_{0.95, 2} = 2.919986 (two-sided 90 %, two degrees of freedom; any t table).
        assert row["mean"] == pytest.approx(mean)
        assert row["std"] == pytest.approx(sd)
        assert row["ci_high"] - row["mean"] == pytest.approx(2.919986 * sd / math.sqrt(3), rel=1e-6)
        assert row["n"] == 3 and row["level"] == 0.9


def test_results_query_runs_sql_and_reports_bad_sql_in_one_line(mathis):
    db = mathis / "results.duckdb"
    r = subprocess.run(
        [
            *RTTLAB,
            "results",
            "query",
            "SELECT count(*) AS n, count(DISTINCT hash) AS h FROM runs",
            "--store",
            str(db),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert json.loads(r.stdout) == {"schema": "rttlab.results/1", "rows": [{"n": 6, "h": 6}]}
    bad = subprocess.run(
        [*RTTLAB, "results", "query", "SELEC nonsense", "--store", str(db)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "query:" in bad.stderr
    missing = subprocess.run(
        [*RTTLAB, "results", "summary", "--store", str(db), "--by", "nope"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert missing.returncode == 2 and "--by nope: no such column" in missing.stderr


def test_a_single_run_has_no_interval_rather_than_a_zero_one():
    one = t_interval([3.0], 0.95)
    assert one["n"] == 1 and math.isnan(one["half_width"])
    # t_{0.975, 4} = 2.776445 (two-sided 95 %, four degrees of freedom).
    five = t_interval([1.0, 2.0, 3.0, 4.0, 5.0], 0.95)
    assert five["half_width"] == pytest.approx(
        2.776445 * statistics.stdev([1, 2, 3, 4, 5]) / math.sqrt(5), rel=1e-6
    )


def test_quick_replaces_the_grid_and_keeps_the_rest():
    full, quick = (
        Reproduction.load("mathis").sweep(),
        Reproduction.load("mathis", quick=True).sweep(),
    )
    assert len(full.runs) == 5 * 10 and len(quick.runs) == 2 * 3
    assert quick.name == "mathis-quick" and full.name == "mathis"
    assert {
        r.scenario.resolved()["topology"]["bottleneck"]["error"]["kind"] for r in quick.runs
    } == {"bernoulli"}


ns3_missing = pytest.mark.skipif(
    __import__("importlib.util").util.find_spec("ns") is None
    and not __import__("os").environ.get("CI"),
    reason="the ns3 wheel is not installed (pip install -e '.[ns3]'); CI installs it",
)


@ns3_missing
def test_ns3_dumbbell_quick_is_pinned(tmp_path):
    """Four dumbbells (1 and 10 flows, DropTail and RED), 60 s, seed 1, in both simulators on a
    two-worker local cluster (one ns-3 import per worker)."""
    r = subprocess.run(
        [*RTTLAB, "reproduce", "ns3-dumbbell", "--quick", "--workers", "2", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    rows = {r["point"]: r for r in json.loads((tmp_path / "comparison.json").read_text())["rows"]}
    assert len(rows) == 4
    for point, row in rows.items():
        assert row["matched"], (point, row["diff"])
        assert row["source"] == "ns3 (1 run)"
    # Pinned: the same numbers `scripts/ns3_compare.py X --set tcp.sack=true` gives for these
    # scenarios (docs/ns3-comparison.md); RED single flow is the largest gap.
    assert rows["flows.0.count=1, simulation.name=red"]["diff"] == pytest.approx(-0.025, abs=0.01)
    assert rows["flows.0.count=10, simulation.name=droptail"]["diff"] == pytest.approx(
        0.001, abs=0.005
    )
    with duckdb.connect(str(tmp_path / "results.duckdb"), read_only=True) as c:
        sims = dict(
            c.execute(
                "SELECT simulator, count(*) FROM runs WHERE status = 'ok' GROUP BY ALL"
            ).fetchall()
        )
        version = c.execute(
            "SELECT DISTINCT simulator_version FROM runs WHERE simulator = 'ns3'"
        ).fetchall()
    assert sims == {"rttlab": 4, "ns3": 4}
    assert version[0][0].startswith("ns3 3.44")


def test_a_trace_report_counts_or_aggregates_each_runs_stored_trace():
    import pandas as pd
    from rttlab.experiments.reproduce import ReproductionError

    rep = Reproduction.load("smoothtcp", quick=True)  # keeps the drops and queue traces
    runs = pd.DataFrame(
        {
            "hash": ["a", "b", "c"],
            "status": ["ok", "ok", "error"],
            "simulation.name": ["x", "x", "y"],
        }
    )
    drops = {
        "a": pd.DataFrame(
            {"time": [1.0, 70.0, 80.0], "cause": ["overflow", "overflow", "scheduled"]}
        ),
        "b": pd.DataFrame({"time": [90.0], "cause": ["overflow"]}),
    }
    queue = {
        "a": pd.DataFrame({"channel": [0, 0, 1], "packets": [2, 8, 40]}),
        "b": pd.DataFrame({"channel": [0, 0], "packets": [10, 12]}),
    }
    series = lambda h, name: {"drops": drops, "queue": queue}[name][h]  # noqa: E731
    rep.doc = {
        **rep.doc,
        "report": [
            {
                "metric": "trace.drops",
                "where": "time >= 60 and cause == 'overflow'",
                "by": ["simulation.name"],
            },
            {
                "metric": "trace.queue",
                "where": "channel == 0",
                "agg": "mean",
                "column": "packets",
                "by": ["simulation.name"],
            },
            {
                "metric": "trace.queue",
                "where": "channel == 0",
                "agg": "mean",
                "expr": "packets >= 7",
                "by": ["simulation.name"],
            },
            {
                "metric": "trace.arrival",
                "by": ["simulation.name"],
            },  # not kept by the quick sweep: left out
        ],
    }
    out = rep.reports(runs, None, series)
    assert len(out) == 3
    (count,), (mean,), (share,) = (r["rows"] for r in out)
    assert (count["point"], count["n"], count["ours"]) == (
        "simulation.name=x",
        2,
        1.0,
    )  # one per run
    assert mean["ours"] == pytest.approx((5 + 11) / 2)
    assert share["ours"] == pytest.approx((0.5 + 1.0) / 2)
    rep.doc["report"] = [{"metric": "trace.queue", "agg": "median", "column": "packets", "by": []}]
    with pytest.raises(
        ReproductionError,
        match="agg must be count, mean, sum, min, max, first, last, std or mean_abs_diff, not 'median'",
    ):
        rep.reports(runs, None, series)


def test_a_named_trace_metric_may_use_another_per_run_value_and_aggregate_per_group_first():
    import pandas as pd
    from rttlab.experiments.reproduce import ReproductionError

    rep = Reproduction.load("spectcp-table3", quick=True)  # keeps the queue, window and rtt traces
    runs = pd.DataFrame(
        {"hash": ["a", "b"], "status": ["ok", "ok"], "simulation.name": ["x", "x"], "drops": [0, 4]}
    )
    window = {
        "a": pd.DataFrame(
            {
                "time": [0.1, 0.2, 0.3, 0.4],
                "flow": [0, 1, 0, 1],
                "cwnd": [1, 1, 5, 2],
                "ssthresh": [4, 2, 4, 2],
            }
        ),
        "b": pd.DataFrame({"time": [0.1, 0.5], "flow": [0, 1], "cwnd": [9, 9], "ssthresh": [4, 4]}),
    }
    queue = {
        "a": pd.DataFrame({"time": [0.1, 0.35, 0.45], "channel": [0, 0, 0], "packets": [3, 7, 20]}),
        "b": pd.DataFrame({"time": [0.2, 0.6], "channel": [0, 0], "packets": [1, 2]}),
    }
    series = lambda h, name: {"window": window, "queue": queue}[name][h]  # noqa: E731
    rep.doc = {
        **rep.doc,
        "trace": {
            # the later flow's first cwnd >= ssthresh: a at 0.4 (flow 1), b at 0.5
            "reached": {
                "trace": "window",
                "where": "cwnd >= ssthresh",
                "column": "time",
                "agg": "min",
                "per": "flow",
                "then": "max",
            },
            "queue_then": {
                "trace": "queue",
                "where": "time <= @reached",
                "column": "packets",
                "agg": "last",
            },
            "loop": {"trace": "queue", "where": "time <= @loop", "agg": "count"},
            "nowhere": {"trace": "queue", "where": "time <= @missing", "agg": "count"},
        },
    }
    ok, cols = rep.frames(
        runs,
        None,
        ["trace.reached", "trace.queue_then", "drops"],
        ["simulation.name"],
        series=series,
    )
    assert cols == ["trace.reached", "trace.queue_then", "drops"]
    assert ok["trace.reached"].tolist() == [0.4, 0.5]
    assert ok["trace.queue_then"].tolist() == [7.0, 1.0]  # the last sample at or before that moment
    assert ok["drops"].tolist() == [0, 4]  # run columns and trace metrics side by side
    with pytest.raises(ReproductionError, match="@loop depends on itself"):
        rep.frames(runs, None, ["trace.loop"], [], series=series)
    with pytest.raises(ReproductionError, match="@missing, which is no \\[trace.missing\\] table"):
        rep.frames(runs, None, ["trace.nowhere"], [], series=series)
    with pytest.raises(
        ReproductionError, match="needs the 'drops' trace, which \\[sweep\\] traces does not keep"
    ):
        rep.frames(runs, None, ["trace.drops"], [], series=series)


# ---- readings: the ways a paper can be read ----------------------------


def _with_readings(readings):
    rep = Reproduction.load("spectcp-table3", quick=True)
    rep.doc = {**rep.doc, "reading": readings}
    return rep


def test_a_reproduction_without_readings_is_its_own_single_reading():
    rep = Reproduction.load("mathis", quick=True)
    (only,) = rep.readings
    assert (
        only is rep
        and only.reading is None
        and only.primary
        and only.comparison_name == "mathis-quick"
    )


def test_a_reading_that_reads_the_same_runs_shares_the_sweep_and_one_that_changes_them_gets_its_own():
    primary, other, own = _with_readings(
        [
            {"name": "a", "primary": True, "says": "§1: 'x'"},
            {
                "name": "b",
                "says": "§2: 'y'",
                "trace": {"queue_peak": {"trace": "queue", "column": "packets", "agg": "min"}},
            },
            {"name": "c", "says": "§3: 'z'", "set": {"tcp.rwnd": "20000B"}},
        ]
    ).readings
    assert (primary.sweep_name, other.sweep_name, own.sweep_name) == (
        "spectcp-table3-quick",
        "spectcp-table3-quick",
        "spectcp-table3-quick@c",
    )
    assert (primary.comparison_name, other.comparison_name, own.comparison_name) == (
        "spectcp-table3-quick@a",
        "spectcp-table3-quick@b",
        "spectcp-table3-quick@c",
    )
    assert (
        other.trace_spec("trace.queue_peak")["agg"] == "min"
        and primary.trace_spec("trace.queue_peak")["agg"] == "max"
    )
    assert {r.scenario.get("tcp.rwnd") for r in own.sweep().runs} == {"20000B"}
    assert [r.hash for r in primary.sweep().runs] == [
        r.hash for r in Reproduction.load("spectcp-table3", quick=True).sweep().runs
    ]


def test_a_readings_quick_overlay_replaces_its_own_under_quick_and_a_metric_reading_shares_the_runs():
    primary, own = _with_readings(
        [
            {"name": "a", "primary": True, "says": "§1: 'x'"},
            {
                "name": "b",
                "says": "§2: 'y'",
                "set": {"tcp.rwnd": "20000B"},
                "quick": {"set": {"tcp.rwnd": "25000B"}},
            },
        ]
    ).readings
    assert {r.scenario.get("tcp.rwnd") for r in own.sweep().runs} == {"25000B"}, (
        "--quick: the reading's quick overlay"
    )
    assert own.own_runs and not primary.own_runs
    readings = {r.reading: r for r in Reproduction.load("spectcp", quick=True).readings}
    measured, paper = readings["goodput-with-duplicates"], readings["paper-dimensioned"]
    assert not measured.own_runs and measured.sweep_name == paper.sweep_name
    assert measured.metric == "flows.bytes_received" and paper.metric == "goodput_bps"


@pytest.mark.parametrize(
    ("readings", "message"),
    [
        (
            [{"name": "a", "says": "x"}],
            "exactly one \\[\\[reading\\]\\] must be primary = true \\(found 0\\)",
        ),
        (
            [
                {"name": "a", "says": "x", "primary": True},
                {"name": "b", "says": "y", "primary": True},
            ],
            "found 2",
        ),
        ([{"name": "a", "primary": True}], "reading a: says: quote what the paper says"),
        (
            [{"name": "a", "says": "x", "primary": True, "colour": 1}],
            "reading 1: unknown key 'colour'",
        ),
        ([{"name": "a b", "says": "x", "primary": True}], "reading 1: name must be a word"),
        (
            [{"name": "a", "says": "x", "primary": True}, {"name": "a", "says": "y"}],
            "reading names must differ",
        ),
        (
            [{"name": "a", "says": "x", "primary": True, "trace": {"nope": {}}}],
            "trace.nope: the file has no \\[trace.nope\\] to replace",
        ),
        (
            [
                {"name": "a", "says": "x", "primary": True},
                {"name": "b", "says": "y", "quick": {"sweep": {}}},
            ],
            "reading b: quick: expected a table of set, zip and grid",
        ),
        (
            [
                {"name": "a", "says": "x", "primary": True},
                {"name": "b", "says": "y", "metric": "drops"},
            ],
            "reading b: metric: expected a metric name, in a file with one metric",
        ),
    ],
)
def test_a_malformed_reading_is_an_error_naming_the_reading_and_the_key(readings, message):
    from rttlab.experiments.reproduce import ReproductionError

    with pytest.raises(ReproductionError, match=f"^reproduction spectcp-table3: .*{message}"):
        _ = _with_readings(readings).readings


def test_a_trace_metric_may_measure_variation_as_a_std_or_as_the_mean_successive_difference():
    import pandas as pd
    from rttlab.experiments.reproduce import _aggregate

    drift = pd.Series([1.0, 2.0, 3.0, 4.0, 5.0])  # a steady drift: large std, constant steps
    assert _aggregate(drift, "std") == pytest.approx(1.5811, abs=1e-4)
    assert _aggregate(drift, "mean_abs_diff") == 1.0
    assert _aggregate(pd.Series([0.1, 0.3, 0.1]), "mean_abs_diff") == pytest.approx(0.2)
    assert math.isnan(_aggregate(pd.Series([0.1]), "std")) and math.isnan(
        _aggregate(pd.Series([0.1]), "mean_abs_diff")
    )


def test_a_reproduction_whose_runs_fail_exits_1_with_the_count(tmp_path):
    """Every run fails on the workers (a sitecustomize on their path makes the simulator raise):
    the command says how many and exits 1, never 0 with "0 ok, N failed"."""
    import os

    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import rttlab._core as core\n"
        "def broken(*args, **kwargs):\n"
        "    raise RuntimeError('simulator broken on purpose')\n"
        "core.simulate = broken\n"
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])]),
    }
    out = tmp_path / "out"
    r = subprocess.run(
        [*RTTLAB, "reproduce", "mathis", "--quick", "--workers", "1", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
    )
    assert r.returncode == 1, (r.returncode, r.stderr[-2000:])
    assert "Traceback" not in r.stderr
    total = len(Reproduction.load("mathis", quick=True).sweep().runs)
    assert (
        f"rttlab: {total} of {total} runs of " in r.stderr
        and "failed; they are stored with their error" in r.stderr
    ), r.stderr[-2000:]


@ns3_missing
def test_ns3_internet_cc_quick_matches_ns3s_cubic_and_bbr(tmp_path):
    """Ten CUBIC and ten BBR flows on the DropTail dumbbell, 60 s, seed 1, in both simulators."""
    r = subprocess.run(
        [
            *RTTLAB,
            "reproduce",
            "ns3-internet-cc",
            "--quick",
            "--workers",
            "2",
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    rows = {r["point"]: r for r in json.loads((tmp_path / "comparison.json").read_text())["rows"]}
    assert set(rows) == {"flows.0.count=10, tcp.cc=cubic", "flows.0.count=10, tcp.cc=bbr"}
    assert all(row["matched"] for row in rows.values()), rows
    # Pinned: scripts/ns3_compare.py gives the same (docs/ns3-comparison.md, "CUBIC and BBR").
    assert rows["flows.0.count=10, tcp.cc=cubic"]["diff"] == pytest.approx(0.0006, abs=0.005)
    assert rows["flows.0.count=10, tcp.cc=bbr"]["diff"] == pytest.approx(-0.007, abs=0.005)
