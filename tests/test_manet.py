"""Nunes et al. 2011's MANET scenarios (rttlab.papers.nunes_experts.manet): the scenario table, the flows it draws, the
claims comparison of `rttlab reproduce nunes-manet`, and (with the ns3 wheel) the CI-sized
reproduction end to end on a two-worker Dask cluster."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from rttlab import ScenarioError
from rttlab.experiments.reproduce import Reproduction
from rttlab.experiments.sweep import Sweep
from rttlab.papers.nunes_experts.manet import ManetScenario, flows_of

RTTLAB = [sys.executable, "-m", "rttlab.cli.main"]


def test_defaults_are_the_papers_scenario_one():
    doc = ManetScenario({}).resolved()
    assert doc["network"]["nodes"] == 20 and doc["network"]["area"] == [1500.0, 1000.0]
    assert doc["network"]["speed"] == [1.0, 50.0] and doc["network"]["pause"] == "0s"
    assert doc["simulation"]["duration"] == "1500s" and doc["traffic"]["packet"] == 512
    assert doc["tcp"]["estimator"] == "rfc6298" and doc["tcp"]["sample_clock"] == "500ms"


@pytest.mark.parametrize(
    "doc, message",
    [
        ({"network": {"nodez": 3}}, "network.nodez: unknown key"),
        ({"network": {"mobility": "walk"}}, "network.mobility: expected"),
        ({"network": {"speed": [50, 1]}}, "network.speed: expected [low, high]"),
        ({"traffic": {"flows": 0}}, "traffic.flows: expected an integer"),
        ({"simulation": {"duration": "soon"}}, "simulation.duration: cannot read"),
        ({"tcp": {"rto": {"estimator": "bbr"}}}, "tcp.rto: unknown estimator 'bbr'"),
        ({"tcp": {"estimator": "jacobson"}}, "tcp.estimator: 'jacobson' is not in [estimators]"),
        ({"mobility": {}}, "mobility: unknown table"),
    ],
)
def test_a_bad_scenario_is_refused_naming_the_key(doc, message):
    with pytest.raises(ScenarioError, match=message.replace("[", r"\[").replace("]", r"\]")):
        ManetScenario(doc).resolved()


def test_keys_that_do_not_apply_do_not_make_a_different_run():
    bursty = ManetScenario({"traffic": {"kind": "bursty"}})
    assert bursty.with_({"traffic.flows": 130}).hash == bursty.hash
    static = ManetScenario({"network": {"mobility": "static"}})
    assert static.with_({"network.speed": [1.0, 10.0]}).hash == static.hash
    assert ManetScenario({}).with_({"traffic.flows": 7}).hash != ManetScenario({}).hash
    assert ManetScenario({}).with_({"tcp.sack": False}).hash == ManetScenario({}).hash
    assert ManetScenario({}).with_({"tcp.sack": True}).hash != ManetScenario({}).hash


def test_a_label_picks_its_estimator_and_only_that_one_enters_the_run():
    s = ManetScenario(
        {
            "estimators": {
                "a": {"estimator": "eifel"},
                "b": {"estimator": "fixed-share", "tick": "500ms"},
            },
            "tcp": {"estimator": "b"},
        }
    )
    doc = s.resolved()
    assert (
        doc["tcp"]["rto"] == {"estimator": "fixed-share", "tick": "500ms"}
        and "estimators" not in doc
    )


def test_flows_are_spread_over_the_nodes_and_drawn_from_the_seed():
    doc = ManetScenario({"traffic": {"flows": 45}}).resolved()
    flows = flows_of(doc)
    assert [f["src"] for f in flows] == [i % 20 for i in range(45)]
    assert all(f["dst"] != f["src"] and 0 <= f["dst"] < 20 for f in flows)
    assert all(1000 <= f["packets"] <= 100000 and 0 <= f["start"] < 1440 for f in flows)
    assert flows == flows_of(doc)
    assert flows != flows_of(
        ManetScenario({"traffic": {"flows": 45}, "simulation": {"seed": 2}}).resolved()
    )


def test_bursty_traffic_starts_a_flow_per_node_every_period():
    doc = ManetScenario(
        {"traffic": {"kind": "bursty"}, "simulation": {"duration": "600s"}}
    ).resolved()
    flows = flows_of(doc)
    assert len(flows) == 3 * 20 and {f["packets"] for f in flows} == {1000}
    node0 = [f["start"] for f in flows if f["src"] == 0]
    assert node0 == [0.0, 200.0, 400.0]


def runs_frame(values: dict[tuple[str, int], list[float]]) -> pd.DataFrame:
    rows = []
    for (est, flows), xs in values.items():
        for x in xs:
            rows.append(
                {
                    "status": "ok",
                    "simulation.name": "I",
                    "tcp.estimator": est,
                    "traffic.flows": flows,
                    "retx_pct": x,
                    "mean_cwnd": x,
                }
            )
    return pd.DataFrame(rows)


def claims_of(rep: Reproduction, ids: set[str], runs: pd.DataFrame) -> dict[str, dict]:
    rep.doc = {
        **rep.doc,
        "published": {
            "kind": "claims",
            "claims": [c for c in rep.doc["published"]["claims"] if c["id"] in ids],
        },
    }
    return {r["point"]: r for r in rep.compare(runs)}


def test_a_claim_is_judged_on_the_ratio_of_the_two_groups_means():
    runs = runs_frame(
        {
            ("fixed-share", 3): [6.0, 8.0],
            ("jacobson", 3): [10.0, 10.0],
            ("fixed-share", 17): [9.0],
            ("jacobson", 17): [10.0],
        }
    )
    rows = claims_of(Reproduction.load("nunes-manet"), {"fig2-retx"}, runs)
    assert rows["fig2-retx: traffic.flows=3"]["ours"] == pytest.approx(0.7)
    assert (
        rows["fig2-retx: traffic.flows=3"]["matched"]
        and not rows["fig2-retx: traffic.flows=17"]["matched"]
    )
    verdict = rows["claim: fig2-retx"]
    assert (
        verdict["matched"] and verdict["ours"] == pytest.approx(0.7) and verdict["n"] == 2
    )  # "as much as": any point


def test_a_growing_gap_claim_needs_the_gap_to_grow():
    rep = Reproduction.load("nunes-manet")
    shrinking = runs_frame(
        {
            ("fixed-share", 3): [20.0],
            ("jacobson", 3): [10.0],
            ("fixed-share", 130): [11.0],
            ("jacobson", 130): [10.0],
        }
    )
    assert not claims_of(rep, {"fig4-cwnd"}, shrinking)["claim: fig4-cwnd"]["matched"]
    growing = runs_frame(
        {
            ("fixed-share", 3): [11.0],
            ("jacobson", 3): [10.0],
            ("fixed-share", 130): [20.0],
            ("jacobson", 130): [10.0],
        }
    )
    assert claims_of(Reproduction.load("nunes-manet"), {"fig4-cwnd"}, growing)["claim: fig4-cwnd"][
        "matched"
    ]
    one_load = runs_frame({("fixed-share", 3): [20.0], ("jacobson", 3): [10.0]})
    assert not claims_of(Reproduction.load("nunes-manet"), {"fig4-cwnd"}, one_load)[
        "claim: fig4-cwnd"
    ]["matched"]


def test_a_claim_without_runs_is_not_called_held():
    rows = claims_of(
        Reproduction.load("nunes-manet"),
        {"fig2-retx"},
        runs_frame({}).reindex(
            columns=["status", "simulation.name", "tcp.estimator", "traffic.flows", "retx_pct"]
        ),
    )
    assert (
        not rows["claim: fig2-retx"]["matched"]
        and rows["claim: fig2-retx"]["n"] == 0
        and math.isnan(rows["claim: fig2-retx"]["ours"])
    )


def test_the_scales_are_the_papers_a_medium_one_and_a_quick_one():
    full = Reproduction.load("nunes-manet").sweep()
    # (7 loads × 3 estimators × scenarios I, II, I-10 + 3 estimators × the 3 bursty speeds) × 24 seeds
    assert len(full.runs) == (7 * 3 * 3 + 3 * 3) * 24
    # (3 loads × 3 estimators × scenarios I, II, I-10 + 3 estimators × the 3 bursty speeds) × 2 seeds
    assert (
        len(Reproduction.load("nunes-manet", scale="medium").sweep().runs)
        == (3 * 3 * 3 + 3 * 3) * 2
    )
    assert len(Reproduction.load("nunes-manet", quick=True).sweep().runs) == 3
    # small: --quick's three runs with seeds 1–3 (seed 1's are --quick's, the same hashes)
    small = {r.hash for r in Reproduction.load("nunes-manet", scale="small").sweep().runs}
    assert (
        len(small) == 9
        and {r.hash for r in Reproduction.load("nunes-manet", quick=True).sweep().runs} <= small
    )
    with pytest.raises(Exception, match="no scale 'huge'"):
        Reproduction.load("nunes-manet", scale="huge")


def test_adding_scenario_three_to_the_medium_scale_left_every_other_medium_run_the_same():
    """The medium scale's I, II and I-10 runs as they were defined before scenario III joined it
    (zip of three, duration in [set]): the same scenarios, so a store holding them resumes."""
    rep = Reproduction.load("nunes-manet", scale="medium")
    medium = rep.doc["scale"]["medium"]
    before = {k: dict(rep.doc[k]) for k in ("sweep", "scenario")}
    before["sweep"].update(medium["sweep"])
    before["grid"] = dict(medium["grid"])
    before["zip"] = {
        k: v[:3]
        for k, v in medium["zip"].items()
        if k in ("simulation.name", "network.mobility", "network.nodes")
    }
    before["set"] = {"simulation.duration": "300s"}
    assert medium["zip"]["simulation.name"][:3] == ["I", "II", "I-10"]
    old = {r.hash for r in Sweep.from_dict(before).runs}
    new = rep.sweep().runs
    assert len(old) == 54 and old <= {r.hash for r in new}
    bursty = [r for r in new if r.hash not in old]
    assert len(bursty) == 18 and all(
        r.scenario.resolved()["traffic"]["kind"] == "bursty" for r in bursty
    )


@pytest.mark.skipif(
    importlib.util.find_spec("ns") is None and not os.environ.get("CI"),
    reason="the ns3 wheel is not installed (pip install -e '.[ns3]'); CI installs it",
)
def test_nunes_manet_quick_is_pinned_whatever_directory_it_starts_from(tmp_path):
    """Scenario I, 3 flows, 60 s, seed 1, the three estimators inside ns-3's TCP on two Dask
    workers (one ns-3 import each); the numbers are bit-identical from run to run.

    Started from a directory holding another Python environment's ns-3 libraries (as /tmp with
    venvs does): the wheel searches for its libraries from the current directory down and, once
    it found two builds of a module, failed every run ("There are multiple build profiles for
    module 'applications'") — and the command still exited 0."""
    import tempfile

    # Not under pytest's tmp_path: the wheel ignores every library whose path contains "test".
    with tempfile.TemporaryDirectory(prefix="rttlab-venvs-") as start:
        other = Path(start) / "venv" / "lib" / "python3.11" / "site-packages" / "ns3" / "lib64"
        other.mkdir(parents=True)
        (other / "libns3.44-applications.so").write_bytes(b"")
        out = tmp_path / "out"
        r = subprocess.run(
            [*RTTLAB, "reproduce", "nunes-manet", "--quick", "--workers", "2", "--out", str(out)],
            capture_output=True,
            text=True,
            timeout=1200,
            cwd=start,
        )
    assert r.returncode == 0, r.stderr[-3000:]
    tmp_path = out
    rows = {r["point"]: r for r in json.loads((tmp_path / "comparison.json").read_text())["rows"]}
    assert "fig2-retx: traffic.flows=3" in rows and "claim: fig8-bursty-delivered" in rows
    with duckdb.connect(str(tmp_path / "results.duckdb"), read_only=True) as c:
        got = {
            (sweep, est): (delivered, retx, samples)
            for sweep, est, delivered, retx, samples in c.execute(
                "SELECT s.sweep, r.\"tcp.estimator\", packets_delivered, retx_pct, samples FROM runs r JOIN sweep_runs s USING (hash) WHERE status = 'ok' ORDER BY 1, 2"
            ).fetchall()
        }
        versions = c.execute("SELECT DISTINCT simulator, simulator_version FROM runs").fetchall()
    assert versions == [("ns3-manet", versions[0][1])] and versions[0][1].startswith("ns3 3.44")
    # Three readings: ★ eq3's three runs; linux-rule and bsd-jacobson each change one arm.
    assert set(got) == set(PINNED) | {
        ("nunes-manet-quick@linux-rule", "jacobson"),
        ("nunes-manet-quick@linux-rule", "eifel"),
        ("nunes-manet-quick@bsd-jacobson", "fixed-share"),
        ("nunes-manet-quick@bsd-jacobson", "eifel"),
    }
    # Pinned (docs/reproductions/nunes-manet.md): packets delivered, % retransmitted, samples.
    for key, pinned in PINNED.items():
        assert got[key] == pytest.approx(pinned, rel=1e-12), key
    # Every run keeps its samples for offline re-scoring (rttlab.papers.nunes_experts.manet.rescore).
    assert len(list((tmp_path / "results.duckdb.series").glob("*/rtt.parquet"))) == 5


PINNED = {
    ("nunes-manet-quick", "eifel"): (7177.0, 11.582917629881981, 3647.0),
    ("nunes-manet-quick", "jacobson"): (8265.0, 12.538161911780188, 4207.0),
    ("nunes-manet-quick", "fixed-share"): (9726.0, 2.651703247591618, 4632.0),  # ★ eq3
    ("nunes-manet-quick@linux-rule", "fixed-share"): (8944.0, 2.6039978390059426, 4197.0),
    ("nunes-manet-quick@bsd-jacobson", "jacobson"): (10001.0, 2.278456466938142, 4744.0),
}


def test_ns3_is_imported_from_an_empty_directory_and_the_start_directory_restored(
    tmp_path, monkeypatch
):
    """The ns-3 wheel searches for its libraries from the current directory down; rttlab imports
    it from a private empty directory (rttlab.peers.ns3.import_ns). A stand-in ``ns`` package
    records where it was imported from."""
    fake = tmp_path / "site" / "ns"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(
        "import os\nseen = (os.getcwd(), os.listdir('.'))\nns = 'bindings'\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    for name in ("ns", "ns3.ns"):
        # setitem first: its undo removes the stand-in this import leaves in sys.modules (a later
        # test importing the real bindings in this process must not find it).
        monkeypatch.setitem(sys.modules, name, None)
        monkeypatch.delitem(sys.modules, name)
    start = tmp_path / "start"
    (start / "venv").mkdir(parents=True)
    monkeypatch.chdir(start)
    from rttlab.peers.ns3 import import_ns

    assert import_ns() == "bindings"
    where, listing = sys.modules["ns"].seen
    assert listing == [] and "rttlab-ns3-import-" in where and not Path(where).exists()
    assert Path.cwd() == start


def test_the_canonical_form_is_the_same_run_when_a_worker_reads_it_back():
    for run in Reproduction.load("nunes-manet", quick=True).sweep().runs:
        again = ManetScenario.from_toml(run.scenario.canonical_toml)
        assert again.hash == run.scenario.hash and again.resolved() == run.scenario.resolved()


def _resolved_rto(rep, estimator):
    run = next(r for r in rep.sweep().runs if r.params["tcp.estimator"] == estimator)
    return run.scenario.resolved()["tcp"]["rto"]


def test_the_primary_reading_gives_both_arms_the_papers_eq_3_and_the_others_are_declared_beside_it():
    readings = {r.reading: r for r in Reproduction.load("nunes-manet", quick=True).readings}
    assert list(readings) == ["eq3", "linux-rule", "bsd-jacobson"] and readings["eq3"].primary
    assert "EstimatedRTT" in readings["eq3"].reading_spec["says"]
    jacobson, experts = (
        _resolved_rto(readings["eq3"], "jacobson"),
        _resolved_rto(readings["eq3"], "fixed-share"),
    )
    for key in ("min_rto", "granularity"):
        assert experts[key] == jacobson[key]
    assert experts["rto"] == "rfc6298" and experts["max_rto"] == "60s"
    # linux-rule: the runs made before the readings were declared (Fixed-Share under rttlab's default Linux rule).
    assert "rto" not in _resolved_rto(readings["linux-rule"], "fixed-share")
    assert _resolved_rto(readings["bsd-jacobson"], "jacobson")["bsd_tick"] == "500ms"
    # Readings share the runs they do not change (run once): Jacobson's and Eifel's eq3 runs.
    hashes = {
        name: {r.params["tcp.estimator"]: r.hash for r in rep.sweep().runs}
        for name, rep in readings.items()
    }
    assert hashes["linux-rule"]["jacobson"] == hashes["eq3"]["jacobson"]
    assert hashes["bsd-jacobson"]["fixed-share"] == hashes["eq3"]["fixed-share"]
    assert hashes["bsd-jacobson"]["jacobson"] != hashes["eq3"]["jacobson"]


def test_offline_rescoring_replays_each_flow_alone_over_the_samples_it_saw():
    from rttlab.papers.nunes_experts.manet import rescore

    # Two flows, 500 ms ticks, samples in seconds; flow 1's first sample gets no prediction.
    rtt = pd.DataFrame(
        {
            "time": [1.0, 2.0, 1.5, 3.0, 2.5],
            "flow": [0, 0, 1, 0, 1],
            "sample": [0.5, 0.5, 1.0, 1.0, 0.5],
        }
    )
    # RFC 6298: flow 0 predicts 0.5 then 0.5 (errors 0, 1 tick); flow 1 predicts 1.0 (1 tick).
    assert rescore(rtt, "rfc6298", {}, 0.5) == pytest.approx(2 / 3)
    # BSD (tcp_xmit_timer): flow 0: t_srtt 8 → predicts 2 ticks (error 1), then t_srtt 7 →
    # 1.875 ticks against 2 (0.125); flow 1: t_srtt 16 → 3 ticks against 1 (2).
    assert rescore(rtt, "rfc6298", {"bsd_tick": "500ms"}, 0.5) == pytest.approx((1 + 0.125 + 2) / 3)


def test_the_seed_count_a_claim_needs_grows_with_the_variance_over_the_squared_difference():
    from rttlab.papers.nunes_experts.manet import seeds_needed

    # (1.645 + 0.842)² · 2 = 12.4 → 13 seeds per arm for a difference of one standard deviation.
    assert seeds_needed(1.0, 1.0, 1.0) == 13
    assert seeds_needed(2.0, 2.0, 1.0) == 50  # ceil(49.46)
    assert seeds_needed(1.0, 1.0, 0.0) == math.inf
