"""Terminal tables never lose data: a column that does not fit is left out whole (and named
under the table), never wrapped or cut; a pipe gets every column; --csv holds everything; every
number carries the unit its range calls for."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys

import pytest
from rttlab import units

RTTLAB = [sys.executable, "-m", "rttlab.cli.main"]
WIDTHS = [80, 100, 120, 200]


def run(*args: object, columns: int | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    if columns is not None:
        env["COLUMNS"] = str(columns)
    out = subprocess.run(
        [*RTTLAB, *map(str, args)], capture_output=True, text=True, env=env, timeout=300
    )
    assert out.returncode == 0, out.stderr
    return out


def body(stdout: str) -> list[str]:
    """The table's rows (lines between its box edges)."""
    return [line for line in stdout.splitlines() if line.startswith("│")]


@pytest.mark.parametrize("columns", [*WIDTHS, None], ids=[*map(str, WIDTHS), "piped"])
def test_flows_prints_every_address_whole_at_any_width_and_piped(shared, columns):
    capture = shared / "captures" / "ndpi_reddit-ipv6-2023.pcap"
    flows = json.loads(run("flows", capture, "--json").stdout)["flows"]
    out = run("flows", capture, columns=columns).stdout
    rows = body(out)
    assert len(rows) == len(flows)
    for row, flow in zip(rows, flows):
        assert flow["src"] in row and flow["dst"] in row, row
    assert "…" not in out


def test_a_narrow_terminal_leaves_out_whole_columns_and_names_them(shared):
    capture = shared / "captures" / "ndpi_bot-vlan.pcap"
    out = run("flows", capture, columns=80).stdout
    assert all(len(line) <= 80 for line in out.splitlines() if line.strip()), out
    assert "40.77.167.36:64768" in out and "89.31.72.220:80" in out
    assert "not shown at 80 columns:" in " ".join(out.split())
    assert "--csv" in out


def test_a_pipe_gets_every_column_and_one_connection_is_singular(shared):
    out = run("flows", shared / "captures" / "ndpi_bot-vlan.pcap").stdout
    assert "1 TCP connection," in out and "connections" not in out.splitlines()[0]
    for header in ("bytes fwd/rev", "handshake", "vantage", "min/max RTT", "hops", "samples"):
        assert header in out
    assert "not shown" not in out
    assert "107 ms" in out and "407 kB" in out  # handshake RTT and bytes in their units


def test_flows_csv_has_one_row_per_connection_with_every_column(shared):
    capture = shared / "captures" / "ndpi_reddit-ipv6-2023.pcap"
    flows = json.loads(run("flows", capture, "--json").stdout)["flows"]
    rows = list(csv.DictReader(io.StringIO(run("flows", capture, "--csv").stdout)))
    assert [r["src"] for r in rows] == [f["src"] for f in flows]
    assert {"path_rtt", "bytes_fwd", "hops_rev", "vantage"} <= set(rows[0])


@pytest.mark.parametrize("columns", [80, 120])
def test_evaluate_keeps_the_metric_it_sorts_by_and_prints_it_whole(columns):
    out = run("evaluate", "--sample", "--sort", "wait_p99_s", columns=columns).stdout
    header = next(line for line in out.splitlines() if line.startswith("┃"))
    assert "W p99" in header and "MAE" in header and "bad TO %" in header
    assert "…" not in out
    assert all(len(line) <= columns for line in out.splitlines() if line.startswith(("┃", "│")))


def test_evaluate_csv_is_every_estimators_scores_in_base_units():
    data = json.loads(run("evaluate", "--sample", "-e", "rfc6298,linux", "--json").stdout)
    rows = list(
        csv.DictReader(
            io.StringIO(run("evaluate", "--sample", "-e", "rfc6298,linux", "--csv").stdout)
        )
    )
    assert [r["estimator"] for r in rows] == [r["estimator"] for r in data["rows"]]
    assert float(rows[0]["mae_s"]) == pytest.approx(data["rows"][0]["mae_s"])


@pytest.mark.parametrize("command", [["estimators"], ["components", "queue"]])
def test_catalogue_listings_have_csv_one_row_per_parameter(command):
    rows = list(csv.DictReader(io.StringIO(run(*command, "--csv").stdout)))
    doc = json.loads(run(*command, "--json").stdout)
    entries = doc.get("estimators") or doc["components"]
    assert len(rows) == sum(max(1, len(e["params"])) for e in entries)
    assert {"name", "parameter", "default", "range", "meaning"} <= set(rows[0])


def test_json_and_csv_together_are_refused():
    out = subprocess.run([*RTTLAB, "estimators", "--json", "--csv"], capture_output=True, text=True)
    assert out.returncode == 2 and "--json and --csv" in out.stderr


def test_numbers_take_the_unit_their_range_calls_for():
    assert units.duration(0.0372) == "37.2 ms"
    assert units.duration(1.5) == "1.5 s"
    assert units.duration(257e-6) == "257 µs"
    assert units.duration(7200) == "2 h"
    assert units.rate(18_925_600) == "18.9 Mb/s"
    assert units.rate(390_197.9) == "390 kb/s"
    assert units.rate(2.5e9) == "2.5 Gb/s"
    assert units.size(406_780) == "407 kB"
    assert units.count(1, "TCP connection") == "1 TCP connection"
    assert units.count(2_783, "RTT sample") == "2,783 RTT samples"


def test_no_limit_sentinels_read_as_infinity_and_numbers_never_as_exponents():
    assert units.number(4611686018427387903) == "∞"
    assert units.number(0x7FFFFFFF) == "∞"
    assert units.number(18925600.0) == "18,925,600"
    assert units.number(0.0006329) == "0.0006329"
    assert "e" not in units.number(1.89256e7 + 0.5)


def test_a_column_separates_thousands_the_same_way_for_whole_and_fractional_numbers():
    # Issue 42: "16,123" printed next to "45614" in one column.
    assert [units.number(x) for x in (16123, 45614.3, 999.96, 999.94, 12.3456)] == [
        "16,123",
        "45,614",
        "1,000",
        "999.9",
        "12.35",
    ]


def test_results_cells_take_their_columns_unit():
    from rttlab.cli.results import fmt, unit_of

    assert fmt(18925600.0, unit_of("goodput_bps")) == "18.9 Mb/s"
    assert fmt(0.0123, unit_of("mae_s")) == "12.3 ms"
    assert fmt(4611686018427387903) == "∞"


class _Reproduction:
    """What `rttlab reproduce` prints a comparison of: title, level, tolerance, metric."""

    doc = {"published": {"kind": "values", "values": []}}
    meta = {
        "title": "Goodput of 10 flows over a 20 Mb/s dumbbell [Fig. 5]",
        "source": "A paper, 2009, Table II",
    }
    level = 0.95
    tolerance = 0.1
    metric = "goodput_bps"
    metrics = ["goodput_bps"]


@pytest.mark.parametrize("columns", [80, 120])
def test_reproduce_prints_each_point_label_and_number_whole_with_its_unit(
    columns, monkeypatch, capsys
):
    import rttlab.cli.common as common
    from rich.console import Console
    from rttlab.cli import reproduce

    monkeypatch.setenv("COLUMNS", str(columns))
    monkeypatch.setattr(
        common, "console", Console(width=columns, force_terminal=False), raising=False
    )
    point = "topology.bottleneck.bandwidth=20Mbps, tcp.rto.estimator=linux"
    rows = [
        {
            "point": point,
            "ours": 18_925_600.0,
            "ci_low": 18_500_000.0,
            "ci_high": 19_300_000.0,
            "n": 10,
            "published": 19_000_000.0,
            "diff": -0.004,
            "matched": True,
            "source": "Fig. 5 (read off the plot), the third bar from the left",
            "metric": "goodput_bps",
        }
    ]
    reproduce.show(_Reproduction(), rows)
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("│")]
    # The point's settings wrap between settings, never inside one; numbers stay on its first line.
    assert "topology.bottleneck.bandwidth=20Mbps," in rows[
        0
    ] and "tcp.rto.estimator=linux" in " ".join(rows)
    assert "18.9 Mb/s" in rows[0] and "19 Mb/s" in rows[0]
    assert all(len(line) <= columns for line in out.splitlines() if line.startswith(("│", "┃")))
    assert "[Fig. 5]" in out  # a title's brackets are text
    assert "e+07" not in out


def test_a_results_summary_shows_each_metric_in_its_own_unit(monkeypatch, capsys):
    import pandas as pd
    import rttlab.cli.common as common
    from rich.console import Console
    from rttlab.cli.results import show

    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.setattr(common, "console", Console(width=120, force_terminal=False), raising=False)
    frame = pd.DataFrame(
        [
            {
                "topology.bottleneck.bandwidth": "20Mbps",
                "metric": "goodput_bps",
                "n": 5,
                "mean": 1.89256e7,
                "std": 2.1e5,
                "half_width": 2.6e5,
                "ci_low": 1.8665e7,
                "ci_high": 1.9186e7,
                "level": 0.95,
            },
            {
                "topology.bottleneck.bandwidth": "20Mbps",
                "metric": "mae_s",
                "n": 5,
                "mean": 0.0123,
                "std": 0.0004,
                "half_width": 0.0005,
                "ci_low": 0.0118,
                "ci_high": 0.0128,
                "level": 0.95,
            },
        ]
    )
    show(frame, title="2 points")
    out = capsys.readouterr().out
    assert "18.9 Mb/s" in out and "12.3 ms" in out
    assert "e+07" not in out


@pytest.mark.parametrize("columns", [80, 120])
def test_tune_prints_every_setting_and_number_whole_with_its_unit(tmp_path, columns):
    import numpy as np

    rng = np.random.default_rng(3)
    rtt = 100 + rng.normal(0, 5, 400).clip(-15, 15)
    rtt[rng.random(400) < 0.04] *= 3
    series = tmp_path / "s.csv"
    series.write_text("\n".join(f"{x:.3f}" for x in rtt))
    out = run(
        "tune",
        series,
        "-e",
        "rfc6298,quic",
        "--budget",
        "40",
        "-t",
        "2%",
        "--json",
        columns=columns,
    ).stdout
    settings = [p["setting"] for f in json.loads(out)["fronts"].values() for p in f]
    text = run(
        "tune", series, "-e", "rfc6298,quic", "--budget", "40", "-t", "2%", columns=columns
    ).stdout
    assert "…" not in text
    assert all(
        len(line) <= columns for line in text.splitlines() if line.startswith(("┃", "│", "┏", "└"))
    )
    # The answer and its folds come first; the fronts table is the research view below them.
    assert text.startswith(("recommend ", "keep the default "))
    text = text.split("research view", 1)[1]
    words = " ".join(
        " ".join(line.split("│")[2].split()) for line in body(text)
    )  # the setting column, its lines joined
    shown = [s for s in settings if " ".join(s.split()[1:]) in words]
    assert len(shown) >= 4, words  # settings read whole: their words in order, none cut
    assert all(
        w.endswith(("ms", "µs", " s"))
        for line in body(text)
        for w in [line.split("│")[4].strip()]
        if w and w != "—"
    )  # W with its unit


#: Every command that prints tables, on inputs of its own (a capture from ../shared where needed).
TABLE_COMMANDS = {
    "estimators": ["estimators"],
    "components": ["components"],
    "evaluate": ["evaluate", "--sample"],
    "simulate": [
        "simulate",
        "examples/scenarios/dumbbell-n10-droptail.toml",
        "--set",
        "simulation.duration=1s",
    ],
    "tune": ["tune", "python/rttlab/data/sample_rtt.csv", "-e", "linux,quic", "--budget", "8"],
    "red-dimension": [
        "red-dimension",
        "--ssthresh",
        "20",
        "--bandwidth",
        "10Mbps",
        "--rtt",
        "100ms",
    ],
}


@pytest.mark.parametrize("columns", [60, 80, 120, 200])
@pytest.mark.parametrize("command", list(TABLE_COMMANDS))
def test_every_commands_tables_fit_the_terminal_and_cut_nothing(command, columns):
    """The README's promise (issue 42): a column with no room is left out whole and named under
    the table, never wrapped into the border or cut with an ellipsis, at any width."""
    from pathlib import Path

    from rich.cells import cell_len

    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "COLUMNS": str(columns)}
    out = subprocess.run(
        [*RTTLAB, *TABLE_COMMANDS[command]],
        capture_output=True,
        text=True,
        env=env,
        cwd=root,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    rows = [line for line in out.stdout.splitlines() if line[:1] in "┏┃┡│├└╭╰"]
    assert rows, f"{command}: no table printed"
    wide = [line for line in rows if cell_len(line) > columns]
    assert not wide, f"{command} at {columns}: {wide[0]!r}"
    import re

    # Rich ends a cut cell with "…" against its border ("b0…b4" in a description is text).
    cut = [line for line in rows if re.search(r"…\s*[│┃]", line)]
    assert not cut, f"{command} at {columns}: a cell was cut: {cut[0]!r}"
