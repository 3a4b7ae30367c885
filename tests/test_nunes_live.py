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


def test_every_published_ratio_is_one_of_nunes_wired_s_so_both_answers_stand_beside_each_other() -> None:
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


def test_the_quick_sweep_runs_each_path_and_estimator_on_the_testbed_and_in_the_simulator() -> None:
    rep = Reproduction.load("nunes-live", quick=True)
    assert rep.parts == []  # nunes-wired is only read from the store under --quick
    assert [p.name for p in Reproduction.load("nunes-live").parts] == ["nunes-wired"]
    runs = rep.sweep().runs
    assert len(runs) == len(PATHS) * len(ESTIMATORS) * 2
    assert sorted({r.simulator for r in runs}) == ["rttlab", "testbed"]


class FakeStore:
    """What attach_beside reads: a store holding nunes-wired's stored comparison, or none."""

    def __init__(self, rows: list[dict] | None) -> None:
        self.rows = rows

    def tables(self) -> set[str]:
        return {"comparisons"} if self.rows is not None else set()

    def query(self, sql: str, params: list) -> pd.DataFrame:
        return pd.DataFrame([r for r in self.rows or [] if r["reproduction"] == params[0]])


def test_nunes_wired_s_stored_answer_is_set_beside_the_row_with_the_same_published_value() -> None:
    rep = Reproduction.load("nunes-live")
    row = {"metric": "flows.pred_error_before ratio", "source": "Table II S2 error: Experts 67.64 / Jacobson 74.11", "published": 0.912697}
    other = {"metric": "flows.mean_cwnd ratio", "source": "Table II S2 cwnd: Experts 74.89 / Jacobson 66.71", "published": 1.12262}
    stored = [
        {"reproduction": "nunes-wired", "metric": row["metric"], "source": row["source"], "ours": 1.169, "ci_low": 1.155, "ci_high": 1.183, "n": 10},
        {"reproduction": "nunes-wired", "metric": other["metric"], "source": other["source"], "ours": 0.999, "ci_low": 0.98, "ci_high": 1.02, "n": 10},
    ]
    rows = [dict(row), dict(other)]
    note = rep.attach_beside(rows, FakeStore(stored))
    assert "nunes-wired" in note and "read from this store" in note
    assert rows[0]["beside"] == {"reproduction": "nunes-wired", "ours": 1.169, "ci_low": 1.155, "ci_high": 1.183, "n": 10, "direction": "opposite"}
    assert rows[1]["beside"]["direction"] == "undecided"
    # Nothing stored: said so, and no row pretends to have an answer beside it.
    rows = [dict(row)]
    note = rep.attach_beside(rows, FakeStore(None))
    assert note.startswith("beside: nunes-wired is not in this store") and "beside" not in rows[0]


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("nunes-live")
    r = subprocess.run([*RTTLAB, "reproduce", "nunes-live", "--quick", "--workers", "2", "--out", str(out), "--json"], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    with duckdb.connect(str(out / "results.duckdb"), read_only=True) as c:
        flows = c.execute(
            'SELECT r."simulation.name" AS scenario, r.simulator, f.* FROM flows f JOIN runs r USING (hash) JOIN sweep_runs s USING (hash) WHERE r.status = \'ok\' AND s.sweep = ?',
            [Reproduction.load("nunes-live", quick=True).sweep_name],
        ).df()
    return json.loads(r.stdout), flows


@needs_machine
def test_rttlabs_sender_completes_every_transfer_on_the_wire_with_each_estimator_taking_samples(quick) -> None:
    _, flows = quick
    measured = flows[flows["group"] == 0]
    assert len(measured) == len(PATHS) * len(ESTIMATORS) * 2
    live = measured[measured["simulator"] == "testbed"]
    assert sorted(zip(live["scenario"], live["estimator"])) == sorted((p, e) for p in PATHS for e in ESTIMATORS)
    assert (live["stack"] == "rttlab").all()
    # The Linux receiver's application read every byte of each transfer.
    assert live["completed"].notna().all(), live[["scenario", "estimator", "bytes_delivered"]]
    # Each estimator predicted and was scored on the wire's samples; the window was measured.
    assert (live["rtt_samples"] > 50).all()
    assert live["pred_error_before"].gt(0).all() and live["pred_error_after"].gt(0).all()
    assert live["mean_cwnd"].gt(1).all()
    # The cross traffic is Linux's own TCP.
    cross = flows[(flows["group"] == 1) & (flows["simulator"] == "testbed")]
    assert len(cross) and (cross["stack"] == "kernel").all() and cross["cc"].str.startswith("linux-").all()


@needs_machine
def test_each_row_sets_the_live_ratio_beside_table_ii_and_beside_the_simulated_one(quick) -> None:
    doc, flows = quick
    rows = doc["rows"]
    assert len(rows) == 24
    measured = flows[flows["group"] == 0].set_index(["scenario", "estimator", "simulator"])
    for r in rows:
        num = r["params"]
        column = r["metric"].removesuffix(" ratio").removeprefix("flows.")
        # One seed: ours is exactly the testbed's ratio, and "simulated" the simulator's.
        for engine, got in (("testbed", r["ours"]), ("rttlab", r["simulated"]["ours"])):
            a = measured.loc[(num["simulation.name"], num["estimator"], engine), column]
            b = measured.loc[(num["simulation.name"], "linux", engine), column]
            # No retransmissions with Jacobson (a quiet run): no ratio, null in the JSON.
            assert got == pytest.approx(a / b) if b else got is None
        assert r["simulated"]["engine"] == "rttlab"
        assert r["direction"] in ("same", "opposite", "undecided") if r["ours"] is not None else r["direction"] == "—"
        assert not math.isnan(r["published"])
    # nunes-wired was not run under --quick and this fresh store does not hold it: said so.
    assert "beside" not in rows[0]


def test_the_point_script_prints_the_s2_scenario_the_window_trace_ran_on() -> None:
    import os
    import tomllib
    from pathlib import Path

    from rttlab.sim.scenario import Scenario

    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root / "python"), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, root / "scripts" / "nunes_live_point.py", "S2-wifi-sender", "eifel"], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    doc = Scenario.from_toml(out.stdout).resolved()  # a valid scenario
    assert doc["simulation"]["name"] == "S2-wifi-sender" and doc["simulation"]["duration"] == "12s"
    assert (doc["flows"][0]["stack"], doc["flows"][0]["bytes"]) == ("rttlab", "2000000B")
    assert doc["flows"][0]["tcp"]["rto"]["estimator"] == "eifel"
    assert tomllib.loads(out.stdout)["topology"]["links"][0]["arq"] == {"per": 0.2}
    bad = subprocess.run([sys.executable, root / "scripts" / "nunes_live_point.py", "S9", "linux"], capture_output=True, text=True, env=env)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "S2-wifi-sender" in bad.stderr
