"""`rttlab reproduce spectcp --quick` (pinned): SpecTCP vs Reno+ECN goodput ratios on the paper's
64 kb/s lossy link, computed per seed from the stored runs (the "ratio" kind of reproduce.py), and
its part spectcp-table3: Table 3's analytic columns ([[model]]) and simulated ones (trace metrics
of the stored runs)."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys

import duckdb
import pytest

RTTLAB = [sys.executable, "-c", "from rttlab.cli.main import main; main()"]


@pytest.fixture(scope="module")
def spectcp(tmp_path_factory):
    out = tmp_path_factory.mktemp("spectcp")
    r = subprocess.run(
        [*RTTLAB, "reproduce", "spectcp", "--quick", "--workers", "2", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    assert (
        "not matched" in r.stdout
    )  # we do not reproduce the paper's 5x (docs/reproductions/spectcp.md)
    (out / "stdout.txt").write_text(r.stdout)
    return out


def test_each_ratio_is_the_mean_of_per_seed_ratios_of_the_stored_runs(spectcp):
    with duckdb.connect(str(spectcp / "results.duckdb"), read_only=True) as c:
        runs = c.execute(
            "SELECT \"tcp.cc\", \"topology.bottleneck.error.ber\", seed, goodput_bps FROM runs JOIN sweep_runs USING (hash) WHERE sweep_runs.sweep = 'spectcp-quick' AND status = 'ok'"
        ).fetchall()
    assert len(runs) == 12
    g = {(cc, ber, seed): x for cc, ber, seed, x in runs}
    rows = [
        r for r in json.loads((spectcp / "comparison.json").read_text())["rows"] if r["primary"]
    ]
    assert [r["published"] for r in rows] == [5.0, 0.23, 0.88]
    expected = [
        statistics.fmean(g["spectcp", 5e-5, s] / g["reno", 5e-5, s] for s in (1, 2, 3)),
        statistics.fmean(g["reno", 5e-5, s] / g["reno", 1e-5, s] for s in (1, 2, 3)),
        statistics.fmean(g["spectcp", 5e-5, s] / g["spectcp", 1e-5, s] for s in (1, 2, 3)),
    ]
    for r, e in zip(rows, expected):
        assert r["n"] == 3 and r["ours"] == pytest.approx(e)
        assert r["ci_low"] < r["ours"] < r["ci_high"]


def test_the_quick_ratios_are_pinned(spectcp):
    # Pinned (3 seeds × 300 s): Reno+ECN's fall from BER 1e-5 to 5e-5 matches the paper's -77 %,
    # but SpecTCP falls as far and gains only ~1.1x over Reno+ECN at 5e-5, not the paper's ~5x.
    # A simulator or SpecTCP change that moves these is a finding: update docs/reproductions/spectcp.md.
    rows = json.loads((spectcp / "comparison.json").read_text())["rows"]
    assert [(r["reading"], r["primary"]) for r in rows] == [("paper-dimensioned", True)] * 3 + [
        ("ns2-red-defaults", False)
    ] * 3 + [("no-backoff-on-corruption", False)] * 3 + [("goodput-with-duplicates", False)] * 3
    assert rows[0]["ours"] == pytest.approx(1.137, abs=0.02) and not rows[0]["matched"]
    assert rows[1]["ours"] == pytest.approx(0.211, abs=0.02) and rows[1]["matched"]
    assert rows[2]["ours"] == pytest.approx(0.232, abs=0.02) and not rows[2]["matched"]
    # ns-2's RED defaults of the paper's time (automatic w_q 0.006064, gentle, 50-packet buffer)
    # move SpecTCP's gain a little (1.44x: fewer overflow drops in the larger buffer), nowhere near
    # 5x; Reno+ECN never fills either buffer (no drop, no mark), so its runs are the same.
    assert rows[3]["ours"] == pytest.approx(1.44, abs=0.02) and not rows[3]["matched"]
    assert rows[4]["ours"] == pytest.approx(0.211, abs=0.02) and rows[4]["matched"]
    assert rows[5]["ours"] == pytest.approx(0.273, abs=0.02) and not rows[5]["matched"]
    # No timer back-off on timeouts SpecTCP judges corruption (§4.2 "does not respond"): SpecTCP
    # gains most here (1.74x), still not 5x; Reno+ECN's runs are the primary's (same numbers).
    assert rows[6]["ours"] == pytest.approx(1.739, abs=0.02) and not rows[6]["matched"]
    assert rows[7]["ours"] == rows[1]["ours"] and rows[7]["matched"]
    assert rows[8]["ours"] == pytest.approx(0.387, abs=0.02) and not rows[8]["matched"]
    # Goodput counting uncorrupted duplicates (bytes_received of the primary's runs): 1.84x.
    assert rows[9]["ours"] == pytest.approx(1.840, abs=0.02) and not rows[9]["matched"]
    assert rows[10]["ours"] == pytest.approx(0.196, abs=0.02) and rows[10]["matched"]
    assert rows[11]["ours"] == pytest.approx(0.308, abs=0.02) and not rows[11]["matched"]


def test_the_new_readings_run_only_what_they_change(spectcp):
    doc = json.loads((spectcp / "comparison.json").read_text())
    sweeps = {d["name"]: d["sweep"] for d in doc["readings"]}
    assert sweeps["goodput-with-duplicates"] == sweeps["paper-dimensioned"] == "spectcp-quick", (
        "a metric reading reads the primary's runs"
    )
    assert sweeps["no-backoff-on-corruption"] == "spectcp-quick@no-backoff-on-corruption"
    with duckdb.connect(str(spectcp / "results.duckdb"), read_only=True) as c:
        own = c.execute(
            """SELECT "tcp.cc" FROM runs WHERE sweep = 'spectcp-quick@no-backoff-on-corruption'"""
        ).fetchall()
    # Its Reno+ECN arm is the primary's runs (same hashes, stored once); only SpecTCP runs anew.
    assert own and all("timeout_backoff" in cc for (cc,) in own)
    # Goodput with duplicates is never below goodput: it counts the same bytes and the duplicates.
    with duckdb.connect(str(spectcp / "results.duckdb"), read_only=True) as c:
        assert (
            c.execute(
                "SELECT count(*) FROM flows WHERE bytes_received < bytes_delivered"
            ).fetchone()[0]
            == 0
        )


def test_table_3s_analytic_columns_are_computed_beside_the_published_ones(spectcp):
    from rttlab.experiments.reproduce import Reproduction
    from rttlab.papers.bai_spectcp.red_dimension import dimension

    (part,) = json.loads((spectcp / "comparison.json").read_text())["parts"]
    assert part["reproduction"] == "spectcp-table3-quick"
    models = part["models"]
    assert models == json.loads(
        json.dumps(Reproduction.load("spectcp-table3", quick=True).models())
    )
    q, qbar = models
    assert [r["published"] for r in q["rows"]] == [19, 24, 12] and [
        r["published"] for r in qbar["rows"]
    ] == [7, 7, 10]
    # The reproduction's formulas are eqs. (3) and (8) as rttlab.papers.bai_spectcp.red_dimension computes them.
    for r, ssth, rtt in zip(q["rows"], [(15, 15), (15, 20), (15, 15)], [0.059, 0.059, 0.099]):
        d = {
            x.name: x.value
            for x in dimension(
                ssthresh=ssth,
                rtt=[rtt],
                bandwidth_bps=1.5e6,
                packet_bytes=1040,
                min_th=5,
                omega=0.002,
                max_p=0.1,
            )
        }
        assert r["ours"] == pytest.approx(d["Q(t)_max"]) and r["matched"]
    for r, (mn, mp) in zip(qbar["rows"], [(5, 0.1), (5, 0.2), (7, 0.1)]):
        d = {
            x.name: x.value
            for x in dimension(
                ssthresh=(15, 15),
                rtt=[0.059],
                bandwidth_bps=1.5e6,
                packet_bytes=1040,
                min_th=mn,
                omega=0.002,
                max_p=mp,
            )
        }
        assert r["ours"] == pytest.approx(d["Qbar_max"]) and r["matched"]


def test_table_3s_simulated_columns_come_from_the_stored_traces_of_the_part_sweep(spectcp):
    import pandas as pd

    (part,) = json.loads((spectcp / "comparison.json").read_text())["parts"]
    rows = {(r["reading"], r["metric"], r["params"]["simulation.name"]): r for r in part["rows"]}
    with duckdb.connect(str(spectcp / "results.duckdb"), read_only=True) as c:
        runs = c.execute(
            "SELECT hash, \"simulation.name\", drops FROM runs JOIN sweep_runs USING (hash) WHERE sweep_runs.sweep = 'spectcp-table3-quick' AND status = 'ok'"
        ).fetchall()
    assert len(runs) == 7 * 3

    def trace(h, name):
        return pd.read_parquet(spectcp / "results.duckdb.series" / h / f"{name}.parquet")

    per_case: dict[str, list[tuple[float, float, float, int]]] = {}
    for h, case, drops in runs:
        q, w, rtt = trace(h, "queue"), trace(h, "window"), trace(h, "rtt")
        q = q[q["channel"] == 0]  # the bottleneck's data direction
        # Eq. (3)'s moment: the later flow's first cwnd >= ssthresh, plus the smallest RTT sample.
        moment = (
            max(g.loc[g["cwnd"] >= g["ssthresh"], "time"].min() for _, g in w.groupby("flow"))
            + rtt["sample"].min()
        )
        per_case.setdefault(case, []).append(
            (
                q["packets"].max(),
                q.loc[q["time"] <= moment, "packets"].max(),
                q["average"].max(),
                drops,
            )
        )
    # The two readings of the same runs: Q(t)_max over the whole run (primary) and until eq. (3)'s moment.
    for reading, peak in (("whole-run", 0), ("until-eq3-moment", 1)):
        for metric, i in (("trace.queue_peak", peak), ("trace.red_average_max", 2), ("drops", 3)):
            for case, values in per_case.items():
                r = rows.get((reading, metric, case))
                if r is not None:
                    assert r["n"] == 3 and r["ours"] == pytest.approx(
                        statistics.fmean(float(x[i]) for x in values)
                    )


def test_table_3s_readings_are_declared_with_the_papers_words_and_one_primary(spectcp):
    (part,) = json.loads((spectcp / "comparison.json").read_text())["parts"]
    readings = {d["name"]: d for d in part["readings"]}
    assert list(readings) == ["whole-run", "until-eq3-moment", "rwnd-ssthresh", "ns2-window"]
    assert [d["name"] for d in readings.values() if d["primary"]] == ["whole-run"]
    assert "the buffer size required" in readings["whole-run"]["says"]
    # A reading that changes the runs has its own sweep in the store; one that reads them another way shares it.
    assert (
        readings["until-eq3-moment"]["sweep"]
        == readings["whole-run"]["sweep"]
        == "spectcp-table3-quick"
    )
    assert readings["rwnd-ssthresh"]["sweep"] == "spectcp-table3-quick@rwnd-ssthresh"
    with duckdb.connect(str(spectcp / "results.duckdb"), read_only=True) as c:
        counts = dict(c.execute("SELECT sweep, count(*) FROM sweep_runs GROUP BY sweep").fetchall())
        stored = {
            r[0] for r in c.execute("SELECT DISTINCT reproduction FROM comparisons").fetchall()
        }
    assert (
        counts["spectcp-table3-quick@rwnd-ssthresh"]
        == counts["spectcp-table3-quick@ns2-window"]
        == 7 * 3
    )
    assert {
        "spectcp-table3-quick@whole-run",
        "spectcp-table3-quick@until-eq3-moment",
        "spectcp-table3-quick@rwnd-ssthresh",
        "spectcp-table3-quick@ns2-window",
    } <= stored


def test_table_3s_quick_simulated_columns_are_pinned_under_every_reading(spectcp):
    # Pinned (3 seeds × 30 s). Primary (whole run): the queue peaks ~10 packets above the paper's
    # simulated Q(t)_max — congestion avoidance keeps growing it until RED's slow average marks —
    # so eq. (3) is not "the buffer size required" in our runs: not reproduced. Only until eq. (3)'s
    # moment, or with each receiver window capped at SSthresh (§6.2's convention), is the peak
    # within one packet; the SSthresh cap also brings RED's average within one packet in every
    # case, but then max_th 7 never drops (the paper: it does). ns-2's default window_ of 20 does
    # not bring the peak down enough. A change that moves these is a finding: update
    # docs/reproductions/spectcp.md.
    (part,) = json.loads((spectcp / "comparison.json").read_text())["parts"]
    got = [
        (
            r["reading"],
            r["metric"],
            r["params"]["simulation.name"],
            r["published"],
            round(r["ours"], 2),
            r["matched"],
        )
        for r in part["rows"]
    ]
    red = {
        "base": (8, pytest.approx(8.97, abs=0.05), True),
        "max_p-0.2": (7, pytest.approx(7.86, abs=0.05), True),
        "min_th-7-max_th-21": (10, pytest.approx(11.66, abs=0.05), False),
    }
    no_cap = [
        ("drops", "base", 0, 0.0, True),
        ("drops", "max_th-8", 0, 0.0, True),
        ("drops", "max_th-7", 1, pytest.approx(13.33, abs=0.05), True),
    ]

    def rows(reading, peaks, red, drops):
        return (
            [(reading, "trace.queue_peak", c, pub, q, ok) for c, pub, q, ok in peaks]
            + [(reading, "trace.red_average_max", c, *v) for c, v in red.items()]
            + [(reading, *d) for d in drops]
        )

    assert got == [
        *rows(
            "whole-run",
            [
                ("base", 18, 29.0, False),
                ("ssthresh-15-20", 23, 31.0, False),
                ("r-99ms", 13, 25.0, False),
            ],
            red,
            no_cap,
        ),
        *rows(
            "until-eq3-moment",
            [
                ("base", 18, 19.0, True),
                ("ssthresh-15-20", 23, 24.0, True),
                ("r-99ms", 13, 14.0, True),
            ],
            red,
            no_cap,
        ),
        *rows(
            "rwnd-ssthresh",
            [
                ("base", 18, 19.0, True),
                ("ssthresh-15-20", 23, 24.0, True),
                ("r-99ms", 13, 14.0, True),
            ],
            {
                "base": (8, pytest.approx(7.34, abs=0.05), True),
                "max_p-0.2": (7, pytest.approx(6.90, abs=0.05), True),
                "min_th-7-max_th-21": (10, pytest.approx(9.16, abs=0.05), True),
            },
            [
                ("drops", "base", 0, 0.0, True),
                ("drops", "max_th-8", 0, 0.0, True),
                ("drops", "max_th-7", 1, 0.0, False),
            ],
        ),
        *rows(
            "ns2-window",
            [
                ("base", 18, 29.0, False),
                ("ssthresh-15-20", 23, 28.0, False),
                ("r-99ms", 13, 21.0, False),
            ],
            {
                "base": (8, pytest.approx(8.91, abs=0.05), True),
                "max_p-0.2": (7, pytest.approx(7.86, abs=0.05), True),
                "min_th-7-max_th-21": (10, pytest.approx(11.13, abs=0.05), False),
            },
            no_cap,
        ),
    ]
    out = (spectcp / "stdout.txt").read_text()
    assert "SpecTCP Table 3" in out and "eq. (3)" in out and "eq. (8)" in out
    assert "★ whole-run" in out and "rwnd-ssthresh: 8 of 9 matched" in out


# ---- spectcp-figures: the page's figures from stored runs -------------------------------------

FIGURES = [
    "spectcp-lossy-link.svg",
    "spectcp-fairness.svg",
    "spectcp-cwnd.svg",
    "spectcp-tables.md",
]


@pytest.fixture(scope="module")
def spectcp_figures(tmp_path_factory):
    out = tmp_path_factory.mktemp("spectcp-figures")
    r = subprocess.run(
        [
            *RTTLAB,
            "reproduce",
            "spectcp-figures",
            "--quick",
            "--workers",
            "2",
            "--out",
            str(out / "store"),
            "--figures",
            str(out / "fig"),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    return out, json.loads(r.stdout)


def stored_runs(store) -> list:
    with duckdb.connect(str(store / "results.duckdb"), read_only=True) as c:
        return c.execute("SELECT hash, wall_s, finished_at FROM runs ORDER BY hash").fetchall()


def test_spectcp_figures_are_drawn_from_the_stored_runs_without_rerunning_any(
    spectcp_figures, tmp_path
):
    out, first = spectcp_figures
    assert first["figures"] == [str(out / "fig" / f) for f in FIGURES]
    for f in FIGURES[:-1]:
        text = (out / "fig" / f).read_text()
        assert (
            text.startswith("<?xml")
            and "<svg" in text
            and text.rstrip().endswith("</svg>")
            and len(text) > 20_000
        )
    tables = (out / "fig" / "spectcp-tables.md").read_text()
    for title in (
        "Goodput (bit/s), Fig. 5",
        "Fig. 6",
        "What Snoop did",
        "Fairness, Fig. 7",
        "Table 3, maximum buffer",
        "Table 3, drops",
    ):
        assert title in tables
    before = stored_runs(out / "store")
    # every sweep of the reproduction and its parts: 4 ccs × 7 BERs × 3 seeds, Snoop and the
    # fairness pair 7 × 3 each, the two window traces, Table 3's 7 cases × 3 (and × 3 again for
    # each of its two readings with runs of their own: rwnd = SSthresh, ns-2's window_)
    assert len(before) == 84 + 21 + 21 + 2 + 21 + 2 * 21
    r = subprocess.run(
        [
            *RTTLAB,
            "reproduce",
            "spectcp-figures",
            "--quick",
            "--workers",
            "1",
            "--out",
            str(out / "store"),
            "--figures",
            str(tmp_path / "again"),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    assert stored_runs(out / "store") == before  # every run came from the store
    assert (tmp_path / "again" / "spectcp-tables.md").read_text() == tables


def test_spectcp_figures_snoop_is_the_scripts_scenario_and_the_lossy_runs_are_spectcps():
    """Snoop = lossy-link.toml with Reno at the ends and the agent on the gateway (what
    scripts/spectcp_figures.py ran); the full scale's SpecTCP and Reno runs are `reproduce
    spectcp`'s own (same keys), so one store serves both."""
    from pathlib import Path

    import rttlab
    from rttlab.experiments.reproduce import Reproduction

    lossy = rttlab.Scenario.load(
        Path(__file__).resolve().parents[1] / "examples" / "spectcp" / "lossy-link.toml"
    )
    for run in Reproduction.load("spectcp-snoop").sweep().runs:
        ber = run.params["topology.bottleneck.error.ber"]
        script = lossy.with_(
            {
                "tcp.cc": "reno",
                "topology.bottleneck.error.ber": ber,
                "simulation.duration": "600s",
                "topology.bottleneck.agent": {"kind": "snoop"},
            }
        ).with_seed(run.scenario.get("simulation.seed", 1))
        assert run.hash == script.hash
    spectcp = {r.hash for r in Reproduction.load("spectcp").sweep().runs}
    figures = {r.hash for r in Reproduction.load("spectcp-figures").sweep().runs}
    assert len(spectcp) == 140 and spectcp < figures and len(figures) == 280
