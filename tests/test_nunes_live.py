"""`rttlab reproduce nunes-live --quick`: Nunes et al. 2011's Table II with rttlab's sender on the
wire (`stack = "rttlab"`) against Linux receivers over real-time testbed paths, beside the same
scenarios in the simulator and beside nunes-wired's stored answer. The real-time part needs root,
namespaces and TUN (skipped elsewhere with the reason); the declaration and the "beside" lookup
are checked without them."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import duckdb
import pandas as pd
import pytest
from rttlab.experiments.reproduce import Reproduction
from rttlab.testbed import unavailable

RTTLAB = [sys.executable, "-c", "from rttlab.cli.main import main; main()"]
REASON = unavailable()
needs_machine = pytest.mark.skipif(REASON is not None, reason=f"testbed unavailable here: {REASON}")
PATHS = ["S1-wired-live", "S2-wifi-sender", "S3-wifi-both"]
ESTIMATORS = ["linux", "fixed-share", "eifel"]


def test_every_published_ratio_is_one_of_nunes_wired_s_so_both_answers_stand_beside_each_other() -> (
    None
):
    live, wired = Reproduction.load("nunes-live"), Reproduction.load("nunes-wired")
    theirs = {(v.get("metric"), v["source"]): v["value"] for v in wired.doc["published"]["values"]}
    values = live.doc["published"]["values"]
    assert len(values) == 24
    for v in values:
        # Table II's own ratio, the same number nunes-wired compares against.
        assert theirs[(v["metric"], v["source"])] == pytest.approx(v["value"], rel=1e-5)
        assert v["numerator"]["simulator"] == v["denominator"]["simulator"] == "testbed"
        assert v["numerator"]["simulation.name"] == v["denominator"]["simulation.name"] in PATHS
        assert v["denominator"]["estimator"] == "linux"


def test_the_readings_are_declared_as_nunes_wired_paths_declares_them_with_the_primary_first() -> (
    None
):
    live, paths = Reproduction.load("nunes-live"), Reproduction.load("nunes-wired-paths")
    mine = {x.reading: x.reading_spec for x in live.readings}
    theirs = {x.reading: x.reading_spec for x in paths.readings}
    assert list(mine) == ["kernel-defaults", "frto-off", "clamp-top"]
    assert [x.reading for x in live.readings if x.primary] == ["kernel-defaults"]
    # The two F-RTO readings are nunes-wired-paths' own: the same words, the same settings.
    for name in ("kernel-defaults", "frto-off"):
        assert mine[name]["says"] == theirs[name]["says"]
        assert mine[name].get("set") == theirs[name].get("set")
    # clamp-top is the primary's runs with Fixed-Share fed min(y, x_N), nothing else changed.
    clamp, base = mine["clamp-top"], live.doc["grid"]["flows.0.tcp.rto"]
    assert clamp["set"] == mine["kernel-defaults"]["set"]
    assert clamp["grid"]["flows.0.tcp.rto"] == [
        {**e, "clamp": "top"} if e["estimator"] == "fixed-share" else e for e in base
    ]


def test_the_quick_sweeps_run_the_primary_on_the_testbed_and_in_the_simulator_and_the_others_simulated() -> (
    None
):
    rep = Reproduction.load("nunes-live", quick=True)
    assert (
        rep.parts == []
    )  # nunes-wired and nunes-wired-paths are only read from the store under --quick
    assert [p.name for p in Reproduction.load("nunes-live").parts] == [
        "nunes-wired",
        "nunes-wired-paths",
    ]
    engines = {x.reading: sorted({r.simulator for r in x.sweep().runs}) for x in rep.readings}
    assert engines == {
        "kernel-defaults": ["rttlab", "testbed"],
        "frto-off": ["rttlab"],
        "clamp-top": ["rttlab"],
    }
    sizes = {x.reading: len(x.sweep().runs) for x in rep.readings}
    assert sizes == {
        "kernel-defaults": len(PATHS) * len(ESTIMATORS) * 2,
        "frto-off": len(PATHS) * len(ESTIMATORS),
        "clamp-top": len(PATHS) * len(ESTIMATORS),
    }
    # At full size every reading runs on both engines; frto-off is the file's own runs (the
    # ones made before the readings were declared), the primary and clamp-top add F-RTO.
    full = {x.reading: x.sweep() for x in Reproduction.load("nunes-live").readings}
    assert all(
        sorted({r.simulator for r in s.runs}) == ["rttlab", "testbed"] for s in full.values()
    )
    assert {
        (r.scenario.get("tcp.spurious_detection"), r.scenario.get("tcp.spurious_response"))
        for r in full["kernel-defaults"].runs
    } == {("frto-sack", "rate-halving")}
    assert {r.scenario.get("tcp.spurious_detection") for r in full["frto-off"].runs} == {None}
    # clamp-top shares Jacobson's and Eifel's runs with the primary: only Fixed-Share's are its own.
    own = {r.hash for r in full["clamp-top"].runs} - {r.hash for r in full["kernel-defaults"].runs}
    assert len(own) == len(full["clamp-top"].runs) // 3


class FakeStore:
    """What attach_beside reads: a store holding nunes-wired's stored comparison, or none."""

    def __init__(self, rows: list[dict] | None) -> None:
        self.rows = rows

    def tables(self) -> set[str]:
        return {"comparisons"} if self.rows is not None else set()

    def query(self, sql: str, params: list) -> pd.DataFrame:
        return pd.DataFrame([r for r in self.rows or [] if r["reproduction"] == params[0]])


def test_the_stored_simulated_answers_are_set_beside_the_row_with_the_same_published_value_and_reading() -> (
    None
):
    rep = Reproduction.load("nunes-live")
    row = {
        "metric": "flows.pred_error_before ratio",
        "source": "Table II S2 error: Experts 67.64 / Jacobson 74.11",
        "published": 0.912697,
        "reading": "kernel-defaults",
    }
    other = {
        "metric": "flows.mean_cwnd ratio",
        "source": "Table II S2 cwnd: Experts 74.89 / Jacobson 66.71",
        "published": 1.12262,
        "reading": "kernel-defaults",
    }
    stored = [
        {
            "reproduction": "nunes-wired",
            "metric": row["metric"],
            "source": row["source"],
            "ours": 1.169,
            "ci_low": 1.155,
            "ci_high": 1.183,
            "n": 10,
        },
        {
            "reproduction": "nunes-wired",
            "metric": other["metric"],
            "source": other["source"],
            "ours": 0.999,
            "ci_low": 0.98,
            "ci_high": 1.02,
            "n": 10,
        },
        # nunes-wired-paths under its readings: ours of a reading reads the same reading's.
        {
            "reproduction": "nunes-wired-paths@kernel-defaults",
            "metric": row["metric"],
            "source": row["source"],
            "ours": 0.5,
            "ci_low": 0.4,
            "ci_high": 0.6,
            "n": 10,
        },
        {
            "reproduction": "nunes-wired-paths@frto-off",
            "metric": row["metric"],
            "source": row["source"],
            "ours": 2.0,
            "ci_low": 1.5,
            "ci_high": 2.5,
            "n": 10,
        },
    ]
    rows = [dict(row), dict(other), {**row, "reading": "frto-off"}, {**row, "reading": "clamp-top"}]
    note = rep.attach_beside(rows, FakeStore(stored))
    assert (
        "nunes-wired-paths@kernel-defaults" in note
        and "nunes-wired's" in note
        and "read from this store" in note
    )
    assert "clamp-top (not a reading of nunes-wired-paths)" in note
    paths, wired = rows[0]["beside"]
    assert paths == {
        "name": "nunes-wired-paths",
        "reproduction": "nunes-wired-paths@kernel-defaults",
        "ours": 0.5,
        "ci_low": 0.4,
        "ci_high": 0.6,
        "n": 10,
        "direction": "same",
    }
    assert wired == {
        "name": "nunes-wired",
        "reproduction": "nunes-wired",
        "ours": 1.169,
        "ci_low": 1.155,
        "ci_high": 1.183,
        "n": 10,
        "direction": "opposite",
    }
    assert [b["reproduction"] for b in rows[1]["beside"]] == [
        "nunes-wired"
    ]  # no such row of nunes-wired-paths stored
    assert rows[1]["beside"][0]["direction"] == "undecided"
    assert [(b["reproduction"], b["direction"]) for b in rows[2]["beside"]] == [
        ("nunes-wired-paths@frto-off", "opposite"),
        ("nunes-wired", "opposite"),
    ]
    # clamp-top is no reading of nunes-wired-paths: only nunes-wired's (reading-free) answer.
    assert [b["reproduction"] for b in rows[3]["beside"]] == ["nunes-wired"]
    # Nothing stored: said so, and no row pretends to have an answer beside it.
    rows = [dict(row)]
    note = rep.attach_beside(rows, FakeStore(None))
    assert (
        "beside: nunes-wired-paths is not in this store" in note
        and "beside: nunes-wired is not in this store" in note
        and "beside" not in rows[0]
    )


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("nunes-live")
    r = subprocess.run(
        [
            *RTTLAB,
            "reproduce",
            "nunes-live",
            "--quick",
            "--workers",
            "2",
            "--out",
            str(out),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    sweeps = {x.reading: x.sweep_name for x in Reproduction.load("nunes-live", quick=True).readings}
    with duckdb.connect(str(out / "results.duckdb"), read_only=True) as c:
        flows = c.execute(
            "SELECT s.sweep, r.\"simulation.name\" AS scenario, r.simulator, f.* FROM flows f JOIN runs r USING (hash) JOIN sweep_runs s USING (hash) WHERE r.status = 'ok' AND s.sweep IN (SELECT unnest(?))",
            [list(sweeps.values())],
        ).df()
    flows["reading"] = flows["sweep"].map({v: k for k, v in sweeps.items()})
    return json.loads(r.stdout), flows


@needs_machine
def test_rttlabs_sender_completes_every_transfer_on_the_wire_with_each_estimator_taking_samples(
    quick,
) -> None:
    _, flows = quick
    flows = flows[flows["reading"] == "kernel-defaults"]
    measured = flows[flows["group"] == 0]
    assert len(measured) == len(PATHS) * len(ESTIMATORS) * 2
    live = measured[measured["simulator"] == "testbed"]
    assert sorted(zip(live["scenario"], live["estimator"])) == sorted(
        (p, e) for p in PATHS for e in ESTIMATORS
    )
    assert (live["stack"] == "rttlab").all()
    # The Linux receiver's application read every byte of each transfer.
    assert live["completed"].notna().all(), live[["scenario", "estimator", "bytes_delivered"]]
    # Each estimator predicted and was scored on the wire's samples; the window was measured.
    assert (live["rtt_samples"] > 50).all()
    assert live["pred_error_before"].gt(0).all() and live["pred_error_after"].gt(0).all()
    assert live["mean_cwnd"].gt(1).all()
    # F-RTO undoes only timeouts it found spurious: never more than the timeouts taken.
    assert (live["timeouts_undone"] <= live["timeouts"]).all()
    # The cross traffic is Linux's own TCP.
    cross = flows[(flows["group"] == 1) & (flows["simulator"] == "testbed")]
    assert (
        len(cross)
        and (cross["stack"] == "kernel").all()
        and cross["cc"].str.startswith("linux-").all()
    )


@needs_machine
def test_each_row_sets_the_live_ratio_beside_table_ii_and_beside_the_simulated_one_under_every_reading(
    quick,
) -> None:
    doc, flows = quick
    rows = doc["rows"]
    assert [d["name"] for d in doc["readings"]] == ["kernel-defaults", "frto-off", "clamp-top"]
    assert len(rows) == 24 * 3
    measured = flows[flows["group"] == 0].set_index(
        ["reading", "scenario", "estimator", "simulator"]
    )
    for r in rows:
        num = r["params"]
        column = r["metric"].removesuffix(" ratio").removeprefix("flows.")
        # One seed: ours is exactly the testbed's ratio, and "simulated" the simulator's; under
        # --quick only the primary reading runs on the testbed (the others: no testbed ratio).
        engines = (
            (("testbed", r["ours"]), ("rttlab", r["simulated"]["ours"]))
            if r["primary"]
            else (("rttlab", r["simulated"]["ours"]),)
        )
        for engine, got in engines:
            a = measured.loc[
                (r["reading"], num["simulation.name"], num["estimator"], engine), column
            ]
            b = measured.loc[(r["reading"], num["simulation.name"], "linux", engine), column]
            # No retransmissions with Jacobson (a quiet run): no ratio, null in the JSON.
            assert got == pytest.approx(a / b) if b else got is None
        if not r["primary"]:
            assert r["n"] == 0 and r["ours"] is None and r["direction"] == "—" and not r["matched"]
        assert r["simulated"]["engine"] == "rttlab"
        assert (
            r["direction"] in ("same", "opposite", "undecided")
            if r["ours"] is not None
            else r["direction"] == "—"
        )
        assert not math.isnan(r["published"])
    # Neither simulated answer was run under --quick and this fresh store holds neither: said so.
    assert not any("beside" in r for r in rows)
    assert (
        "nunes-wired-paths is not in this store" in doc["beside"]
        and "nunes-wired is not in this store" in doc["beside"]
    )


#: A path whose stalls (0.6–1 s every 1.5 s on average) outlast the RTO: spurious timeouts.
STALLS = """
[simulation]
duration = "8s"
seed = 3
[topology]
kind = "graph"
nodes = 2
[[topology.links]]
a = 0
b = 1
bandwidth = "10Mbps"
delay = "20ms"
queue = { kind = "droptail", limit = "100p" }
random_spikes = { every = "1500ms", min = "600ms", max = "1s" }
[tcp]
cc = "newreno"
sack = true
timestamps = true
spurious_detection = "frto-sack"
spurious_response = "rate-halving"
rto = { estimator = "linux", hz = 250, rto_min = "200ms", initial_rto = "1s" }
[[flows]]
count = 1
src = 0
dst = 1
start = "500ms"
bytes = "inf"
stack = "rttlab"
"""


@needs_machine
def test_rttlabs_sender_on_the_wire_runs_f_rto_on_the_linux_receivers_acks(tmp_path) -> None:
    """The primary reading's F-RTO acts on real ACKs: the wire sender is the simulator's, its
    detector included, so timeouts a stall made spurious are found and answered (timeouts_undone)."""
    (tmp_path / "stalls.toml").write_text(STALLS)
    r = subprocess.run(
        [
            *RTTLAB,
            "testbed",
            str(tmp_path / "stalls.toml"),
            "--out",
            str(tmp_path / "out"),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    flow = pd.read_parquet(tmp_path / "out" / "flows.parquet").iloc[0]
    assert flow["stack"] == "rttlab" and flow["timeouts"] >= 1
    assert 1 <= flow["timeouts_undone"] <= flow["timeouts"]


def test_the_point_script_prints_the_s2_scenario_the_window_trace_ran_on() -> None:
    import os
    import tomllib
    from pathlib import Path

    from rttlab.sim.scenario import Scenario

    root = Path(__file__).resolve().parent.parent
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(root / "python"), os.environ.get("PYTHONPATH", "")]),
    }
    out = subprocess.run(
        [sys.executable, root / "scripts" / "nunes_live_point.py", "S2-wifi-sender", "eifel"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    doc = Scenario.from_toml(out.stdout).resolved()  # a valid scenario
    assert doc["simulation"]["name"] == "S2-wifi-sender" and doc["simulation"]["duration"] == "12s"
    assert (doc["flows"][0]["stack"], doc["flows"][0]["bytes"]) == ("rttlab", "2000000B")
    assert doc["flows"][0]["tcp"]["rto"]["estimator"] == "eifel"
    assert tomllib.loads(out.stdout)["topology"]["links"][0]["arq"] == {"per": 0.2}
    bad = subprocess.run(
        [sys.executable, root / "scripts" / "nunes_live_point.py", "S9", "linux"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "S2-wifi-sender" in bad.stderr
