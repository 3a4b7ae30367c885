"""`rttlab reproduce smoothtcp --quick` (pinned): Vieira & Bauer 2006 §§V–VI and Appendix A."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from rttlab.experiments.reproduce import Reproduction
from rttlab.sim.run import simulate

RTTLAB = [sys.executable, "-c", "from rttlab.cli.main import main; main()"]
PUBLISHED = {("standard", 0): 988384, ("standard", 1): 1192600, ("smooth-k0.005", 0): 1046272, ("smooth-k0.005", 1): 1230656}


@pytest.fixture(scope="module")
def quick(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("smoothtcp")
    r = subprocess.run([*RTTLAB, "reproduce", "smoothtcp", "--quick", "--workers", "1", "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "RTT standard deviation per connection" in r.stdout
    return out


def reports(out: Path) -> dict[str, dict[str, float]]:
    doc = json.loads((out / "comparison.json").read_text())
    return {rep["metric"]: {r["point"]: r["ours"] for r in rep["rows"]} for rep in doc["reports"]}


def report(out: Path, title: str) -> dict[str, float]:
    """The report whose title starts with ``title``, by point (``simulation.name=...`` dropped)."""
    doc = json.loads((out / "comparison.json").read_text())
    (rep,) = [rep for rep in doc["reports"] if rep["title"].startswith(title)]
    return {r["point"].removeprefix("simulation.name="): r["ours"] for r in rep["rows"]}


def test_the_published_byte_counts_are_compared_per_connection_and_pinned(quick):
    doc = json.loads((quick / "comparison.json").read_text())
    rows = {(r["params"]["simulation.name"], r["params"]["flow"]): r for r in doc["rows"]}
    assert set(rows) == set(PUBLISHED), "only the four published points are compared"
    for key, value in PUBLISHED.items():
        assert rows[key]["published"] == value
    # Pinned (docs/reproductions/smoothtcp.md explains the split): the connection that starts
    # first takes more, the opposite of the paper's; a change here is a finding.
    ours = {k: r["ours"] for k, r in rows.items()}
    assert ours[("standard", 0)] == pytest.approx(1284256, rel=0.02)
    assert ours[("standard", 1)] == pytest.approx(886008, rel=0.02)
    assert ours[("smooth-k0.005", 0)] == pytest.approx(1697512, rel=0.02)
    assert ours[("smooth-k0.005", 1)] == pytest.approx(459352, rel=0.05)


def test_both_connections_together_send_what_the_paper_reports(quick):
    total = reports(quick)["flows.bytes_sent"]
    # Published totals: Standard 988,384 + 1,192,600; SmoothTCP 1,046,272 + 1,230,656.
    assert total["simulation.name=standard"] == pytest.approx(2180984, rel=0.02)
    assert total["simulation.name=smooth-k0.005"] == pytest.approx(2276928, rel=0.07)
    assert total["simulation.name=smooth-k0.005"] < 2276928, "the link cannot carry SmoothTCP's published total without drops ours lacks"


def test_smoothtcp_drops_only_in_slow_start_and_keeps_the_rtt_steadier(quick):
    rep = reports(quick)
    drops, std = rep["drops"], rep["flows.rtt_std"]
    assert 0 < drops["simulation.name=smooth-k0.005"] < drops["simulation.name=standard"]
    with duckdb.connect(str(quick / "results.duckdb"), read_only=True) as c:
        runs = dict(c.execute("SELECT name, hash FROM runs").fetchall())
    series = quick / "results.duckdb.series"
    for name in ("smooth-k0.005", "smooth-k0.005+errors"):
        d = pd.read_parquet(series / runs[name] / "drops.parquet")
        overflow = d[d["cause"] == "overflow"]
        assert len(overflow) > 0 and overflow["time"].max() < 60, f"{name}: overflow drops after slow start"
    for suffix in ("", "+errors"):
        for flow in (0, 1):
            assert std[f"simulation.name=smooth-k0.005{suffix}, flow={flow}"] < 0.6 * std[f"simulation.name=standard{suffix}, flow={flow}"]


def test_each_connection_loses_exactly_its_three_scheduled_packets(quick):
    with duckdb.connect(str(quick / "results.duckdb"), read_only=True) as c:
        rows = c.execute(
            "SELECT r.name, ch.name, ch.drops_scheduled FROM channels ch JOIN runs r USING (hash) WHERE ch.name LIKE 'access-r%>'"
        ).fetchall()
    for run, channel, scheduled in rows:
        assert scheduled == (3 if run.endswith("+errors") else 0), (run, channel)


def test_a_larger_fairness_factor_shares_more_fairly_but_barely_moves_the_rtt_variation(quick):
    rep = reports(quick)
    jain, std = rep["jain_index"], rep["flows.rtt_std"]
    k = {x: f"simulation.name=smooth-k{x}+errors" for x in ("0.001", "0.005", "0.010")}
    assert jain[k["0.001"]] < jain[k["0.005"]] < jain[k["0.010"]]
    # §VII's "larger κ, larger RTT variation" is NOT reproduced with the errors (pinned; the doc
    # says why): the mean of the two connections' RTT std stays within ±10 % from κ 0.001 to 0.010.
    mean_std = {x: (std[f"{k[x]}, flow=0"] + std[f"{k[x]}, flow=1"]) / 2 for x in k}
    assert mean_std["0.001"] == pytest.approx(0.0816, rel=0.03)
    assert mean_std["0.005"] == pytest.approx(0.0896, rel=0.03)
    assert mean_std["0.010"] == pytest.approx(0.0801, rel=0.03)
    assert max(mean_std.values()) < 1.15 * min(mean_std.values())


def test_the_papers_router_claims_are_quantified_beside_them(quick):
    """§V-B 2–3: SmoothTCP drops only in slow start, keeps a smaller queue, and (the paper says)
    gets almost as many quenches as Standard TCP — ours gets about a third (the doc says why)."""
    late = report(quick, "router drops after 60 s")
    assert late["standard"] == 53 and late["standard+errors"] == 50
    assert all(late[n] == 0 for n in late if n.startswith("smooth")), late
    queue = report(quick, "mean router queue")
    assert queue["standard"] == pytest.approx(14.25, rel=0.02)
    assert queue["smooth-k0.005"] == pytest.approx(7.18, rel=0.02) and queue["smooth-k0.005"] < 0.6 * queue["standard"]
    above = report(quick, "share of the time the router queue holds")
    assert above["standard"] > 0.95 > 0.4 > above["smooth-k0.005"]
    quench = report(quick, "source quenches that reached the senders")
    assert quench["standard"] == 3999 and quench["smooth-k0.005"] == 1408
    assert "share of arriving data packets" not in json.loads((quick / "comparison.json").read_text())["reports"].__repr__(), "the arrival trace is not kept by --quick"


def test_standard_tcps_rtt_is_mostly_between_1_4_and_3_seconds(quick):
    with duckdb.connect(str(quick / "results.duckdb"), read_only=True) as c:
        rows = c.execute("SELECT f.flow, f.rtt_mean, f.rtt_min, f.rtt_max FROM flows f JOIN runs r USING (hash) WHERE r.name = 'standard'").fetchall()
    for flow, mean, low, high in rows:
        assert 1.4 < mean < 3.0 and high <= 3.05 and low > 0.8, (flow, mean, low, high)


def test_per_flow_rtt_statistics_match_the_samples_after_the_warmup():
    rep = Reproduction.load("smoothtcp", quick=True)
    scenario = rep.sweep().runs[1].scenario  # SmoothTCP, κ 0.005
    r = simulate(scenario.canonical_toml)
    rtt = r.traces["rtt"]
    for flow in (0, 1):
        x = rtt[(rtt["flow"] == flow) & (rtt["time"] >= 100.0)]["sample"].to_numpy()
        f = r.flows.set_index("flow").loc[flow]
        assert f["rtt_std"] == pytest.approx(np.std(x), rel=1e-6)
        assert (f["rtt_min"], f["rtt_max"]) == pytest.approx((x.min(), x.max()), rel=1e-9)
        assert f["quench_received"] == f["quench_reductions"] > 100
