"""``rttlab simulate``: run a scenario in the closed-loop simulator and summarise it."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from rttlab.cli.common import console, fail, print_json
from rttlab.sim import SCHEMA, simulate as run_scenario


def simulate(
    scenario: Path = typer.Argument(..., help="Scenario file (TOML), e.g. examples/scenarios/dumbbell-n10-droptail.toml.", show_default=False),
    set_: list[str] = typer.Option([], "--set", "-s", help="Override KEY.PATH=VALUE before parsing, repeatable, e.g. topology.bottleneck.bandwidth=20Mbps."),
    seed: int = typer.Option(None, "--seed", help="Random seed (overrides simulation.seed).", min=0),
    as_json: bool = typer.Option(False, "--json", help=f"Print JSON (schema {SCHEMA}) instead of a table."),
    out: Path = typer.Option(None, "--out", help="Write summary.json, flows/channels and every trace as Parquet into DIR."),
    plot: Path = typer.Option(None, "--plot", help="Draw cwnd, RTT/RTO and the bottleneck queue over time to FILE (.png, .svg or .pdf)."),
) -> None:
    """Simulate TCP flows over a dumbbell or graph with the scenario's estimator, queues and error models.

    Prints per-flow goodput, retransmissions (timeout / fast, spurious) and timeouts, the
    bottleneck's utilisation, drops and marks, and Jain's fairness index."""
    if not scenario.is_file():
        fail(f"{scenario}: no such scenario file")
    if plot is not None and plot.suffix.lower() not in (".png", ".svg", ".pdf"):
        fail(f"--plot: '{plot}' must end in .png, .svg or .pdf")
    busy = not as_json
    status = console.status(f"simulating {scenario.name}") if busy else None
    if status:
        status.start()
    try:
        result = run_scenario(scenario, set=set_, seed=seed)
    finally:
        if status:
            status.stop()
    if out is not None:
        result.write(out)
    if plot is not None:
        result.plot(plot)
    if as_json:
        doc = result.summary()
        doc["scenario"] = str(scenario)
        print_json(doc)
        return
    table = Table(
        title=f"{result.name or scenario.name} — {result.duration:g} s simulated, seed {result.seed}, {result.events:,} events",
        title_justify="left",
    )
    for header in ("flow", "goodput Mb/s", "retx", "timeout", "fast", "spurious", "timeouts", "ECN cuts"):
        table.add_column(header, justify="right")
    for row in result.flows.itertuples():
        table.add_row(
            str(row.flow),
            f"{row.goodput_bps / 1e6:.3f}",
            str(row.retransmissions),
            str(row.retx_timeout),
            str(row.retx_fast),
            str(row.retx_spurious),
            str(row.timeouts),
            str(row.ecn_reductions),
        )
    console.print(table)
    s = result.summary()
    b = s["bottleneck"]
    jain = "—" if s["jain_index"] is None else f"{s['jain_index']:.4f}"
    console.print(
        f"aggregate goodput {s['aggregate_goodput_bps'] / 1e6:.3f} Mb/s, Jain index {jain}; "
        f"bottleneck {b['name']}: utilisation {b['utilisation']:.1%}, drops {b['drops_overflow']} overflow / "
        f"{b['drops_aqm']} AQM / {b['drops_corruption']} corruption, {b['marks']} ECN marks"
    )
    if out is not None:
        console.print(f"traces written to {out}/")
    if plot is not None:
        console.print(f"plot written to {plot}")


def register(app: typer.Typer) -> None:
    app.command("simulate")(simulate)
